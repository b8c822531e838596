/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/dropout.h: the run's feed of dropout masks (docs/models.md,
 * "Dropout"): the masks of schedule.rounds[t].dropout handed to the
 * training passes of each participant, in the order it makes them. */
#ifndef PFLREF_ENGINE_DROPOUT_H
#define PFLREF_ENGINE_DROPOUT_H

#include "engine/engine.h"

typedef struct {
    const pflref_problem *problem;
    const pflref_round_plan *plan; /* the round running, or NULL (after
                                      the rounds: no masks)              */
    long round;
    size_t *used;                  /* plan->m: the passes each
                                      participant took                   */
    pflref_error err;              /* the first failure of a pass        */
} pflref_dropout_feed;

/* Set the feed as s->ws's dropout source, for a model with dropout layers
 * (else nothing). */
void pflref_dropout_feed_start(pflref_dropout_feed *f, pflref_state *s);

/* Round t with plan (NULL: the phase after the rounds, which has none). */
pflref_status pflref_dropout_feed_round(pflref_dropout_feed *f,
                                        const pflref_round_plan *plan,
                                        long t, pflref_error *err);

/* After the round (its status st): the failure of a pass replaces err's
 * message (it names the round, the client, the pass and the layer);
 * on success each participant must have taken every pass it was given. */
pflref_status pflref_dropout_feed_end(pflref_dropout_feed *f,
                                      pflref_status st, pflref_error *err);

/* Remove the source and free the feed's buffers. */
void pflref_dropout_feed_stop(pflref_dropout_feed *f, pflref_state *s);

#endif
