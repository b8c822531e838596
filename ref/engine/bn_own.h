/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/bn_own.h: the clients' own running statistics under
 * bn.aggregate = parameters_only (ref/engine/bn_own.c), kept by the rounds
 * of ref/algorithms/fedavg_keep.c and ref/algorithms/ditto.c, and the
 * evaluation of client i's own model, which the driver's "global" source
 * means there (ref/engine/run.c). */
#ifndef PFLREF_ENGINE_BN_OWN_H
#define PFLREF_ENGINE_BN_OWN_H

#include <stddef.h>
#include "engine/engine.h"

/* 1 when the round keeps each client's own r_μ, r_v: bn.aggregate =
 * parameters_only on a model with batch normalisation; 0 otherwise (the
 * round is then the algorithm's state_dict reading). */
int pflref_bn_keeps_own(const pflref_state *s);

/* The same from the problem and the hyperparameters (a check before the
 * run; the files Frama-C reads see neither field, ref/engine/engine.h). */
int pflref_bn_keeps_own_in(const pflref_problem *problem,
                           const pflref_hyper *hyper);

/* dst's buffer entries (the blocks with is_buffer: r_μ, r_v) := src's;
 * the other entries of dst are left alone. */
void pflref_bn_copy_buffers(const pflref_model *m, double *dst,
                            const double *src);

/* The entries of dst that are buffers and marked in mask (mask NULL: all
 * buffers) := src's: the running statistics of a split's shared blocks
 * (FedAlt/FedSim, ref/algorithms/fedalt.c). */
void pflref_bn_copy_buffers_in(const pflref_model *m,
                               const unsigned char *mask, double *dst,
                               const double *src);

/* FedAlt/FedSim's broadcast under bn.aggregate = parameters_only: every
 * device's model s->v + i·P takes w's shared entries (s->shared) that are
 * parameters, and keeps its own buffers there (PFLlib set_parameters
 * copies base.parameters() only). */
void pflref_bn_share_params(pflref_state *s);

/* The first uploader of the round (PFLlib's uploaded_models[0], whose
 * running statistics the new global takes under bn.aggregate =
 * parameters_only): the round's "first_upload" when the schedule gives
 * one, else `lowest`, the caller's default (the round's first uploader
 * by ascending id).  Every round that takes the global's r_μ, r_v from
 * one uploader calls it: the file Frama-C reads sees no such field of
 * the plan (pflref/schedule.h).  The spec reader has checked that a
 * given one is an uploader of the round (ref/io/spec_schedule.c). */
size_t pflref_bn_first_upload(const pflref_round_plan *plan, size_t lowest);

/* An algorithm that takes no uploader's running statistics has no first
 * uploader to choose: FedAMP, APPLE and FedFomo keep no global model (each
 * client's model takes its own statistics under bn.aggregate =
 * parameters_only), and SCAFFOLD under scaffold.bn_global = previous keeps
 * the previous global's.  A round of the given schedule with
 * "first_upload" is refused at schedule.rounds[t].first_upload with `who`
 * (the algorithm and what it does instead: "fedamp keeps no global model")
 * and `why` (where the statistics come from, and the library's lines). */
pflref_status pflref_bn_no_first_upload(const pflref_schedule *schedule,
                                        const char *who, const char *why,
                                        pflref_error *err);

/* The clients' own models s->bn_own (N×P), each w⁰ at the first call;
 * PFLREF_ENOMEM when they cannot be allocated.  Only their buffer entries
 * are read. */
pflref_status pflref_bn_own_alloc(pflref_state *s, pflref_error *err);

/* Client k's own model, row k of s->bn_own (after pflref_bn_own_alloc);
 * through this function so that the algorithm files Frama-C reads, which
 * do not see the field (ref/engine/engine.h), need not name it. */
double *pflref_bn_own_row(pflref_state *s, size_t k);

/* A load_state (pflref_run_resync) under bn.aggregate = parameters_only:
 * each client's own r_μ, r_v from the buffers of its last CLIENT_END
 * "w_local" record up to round t (the model it sends); a client that never
 * trained keeps w⁰'s.  Nothing when s->bn_own is NULL. */
void pflref_bn_own_load(pflref_state *s, pflref_state_loader load,
                        void *ctx, long t);

/* Client i's "personalized" mixture v̄_i = α_i v_i + (1 − α_i) w, formed
 * in mix (P) by the driver: under bn.aggregate = parameters_only (s->bn_own
 * allocated) its buffer entries (r_μ, r_v) := v_i's own; nothing
 * otherwise.  PFLlib's APFL evaluates model_per, whose running statistics
 * its own passes moved and whose end mixture touched parameters() only
 * (clientapfl.py:58-59, 80-96), never w's. */
void pflref_bn_own_mix_buffers(const pflref_state *s, size_t i, double *mix);

/* Client i's "global" evaluation under bn.aggregate = parameters_only:
 * w's parameters with client i's own running statistics (s->bn_own), built
 * in s->mix and evaluated on D. */
pflref_status pflref_bn_own_evaluate(const pflref_state *s, size_t i,
                                     const pflref_data *D, pflref_eval *out);

#endif
