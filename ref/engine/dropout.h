/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/dropout.h: the run's feed of dropout masks (docs/models.md,
 * "Dropout"): the masks of schedule.rounds[t].dropout handed to the
 * training passes of each participant, in the order it makes them, and
 * after the rounds those of schedule.post_dropout to each client's passes
 * in the phase after training. */
#ifndef PFLREF_ENGINE_DROPOUT_H
#define PFLREF_ENGINE_DROPOUT_H

#include "engine/engine.h"

typedef struct {
    const pflref_problem *problem;
    int active;                    /* a round or the post phase is fed   */
    long round;                    /* the round, −1 (the post phase) or
                                      −2 (before round 0: the algorithm's
                                      init)                              */
    size_t m;                      /* the participants fed               */
    const size_t *clients;         /* m ids, or NULL: participant j is
                                      client j (the post phase)          */
    const pflref_dropout_masks *d; /* their masks, or NULL (none given)  */
    size_t *used;                  /* m: the passes each participant took */
    /* IFCA's estimate passes (kind PFLREF_DROPOUT_PASS_ESTIMATE): in a
     * round the participants' round-start lists (m) and every client's
     * partition lists (N); before round 0 the init partition lists (N) */
    const pflref_dropout_masks *est, *part;
    size_t *est_used, *part_used;  /* m and N: the passes taken          */
    pflref_error err;              /* the first failure of a pass        */
} pflref_dropout_feed;

/* Set the feed as s->ws's dropout source, for a model with dropout layers
 * (else nothing). */
void pflref_dropout_feed_start(pflref_dropout_feed *f, pflref_state *s);

/* Before round 0 (the algorithm's init): IFCA's estimate passes take
 * schedule->init_partition_dropout; no other training pass has masks. */
pflref_status pflref_dropout_feed_init(pflref_dropout_feed *f,
                                       const pflref_schedule *schedule,
                                       pflref_error *err);

/* The algorithm's init (IFCA's estimates of the reported assignment at
 * θ_j^(0)), its training passes fed from schedule->init_partition_dropout:
 * feed_start, feed_init, init(s), feed_end and feed_stop in one. */
pflref_status pflref_dropout_run_init(pflref_state *s,
                                      const pflref_schedule *schedule,
                                      pflref_status (*init)(pflref_state *,
                                                            pflref_error *),
                                      pflref_error *err);

/* Round t with plan. */
pflref_status pflref_dropout_feed_round(pflref_dropout_feed *f,
                                        const pflref_round_plan *plan,
                                        long t, pflref_error *err);

/* The phase after the rounds: client i's passes take schedule->
 * post_dropout's list i (none given: the first pass fails). */
pflref_status pflref_dropout_feed_post(pflref_dropout_feed *f,
                                       const pflref_schedule *schedule,
                                       pflref_error *err);

/* After the round or the post phase (its status st): the failure of a
 * pass replaces err's message (it names the round or the phase, the
 * client, the pass and the layer); on success each participant must have
 * taken every pass it was given. */
pflref_status pflref_dropout_feed_end(pflref_dropout_feed *f,
                                      pflref_status st, pflref_error *err);

/* Remove the source and free the feed's buffers. */
void pflref_dropout_feed_stop(pflref_dropout_feed *f, pflref_state *s);

#endif
