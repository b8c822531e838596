/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/algorithms.h: the registered algorithms and the pieces
 * one algorithm file lends another (private to ref/).  Floor: algorithms
 * (docs/architecture.md). */
#ifndef PFLREF_ALGORITHMS_ALGORITHMS_H
#define PFLREF_ALGORITHMS_ALGORITHMS_H

#include "engine/engine.h"
#include "engine/work.h"

/* The registered algorithms (one per file). */
extern const pflref_algorithm pflref_fedavg;
extern const pflref_algorithm pflref_local_only;
extern const pflref_algorithm pflref_finetune;
extern const pflref_algorithm pflref_prox;
extern const pflref_algorithm pflref_pfedme;
extern const pflref_algorithm pflref_ditto;
extern const pflref_algorithm pflref_fedalt;
extern const pflref_algorithm pflref_fedsim;
extern const pflref_algorithm pflref_pflego;
extern const pflref_algorithm pflref_perfedavg;
extern const pflref_algorithm pflref_apfl;
extern const pflref_algorithm pflref_interp;
extern const pflref_algorithm pflref_cfl;
extern const pflref_algorithm pflref_ifca;
extern const pflref_algorithm pflref_fedfomo;
extern const pflref_algorithm pflref_fedbn;
extern const pflref_algorithm pflref_pfedhn;
extern const pflref_algorithm pflref_lora;
extern const pflref_algorithm pflref_feddyn;
extern const pflref_algorithm pflref_scaffold;
extern const pflref_algorithm pflref_moon;
extern const pflref_algorithm pflref_fedprox;
extern const pflref_algorithm pflref_fedrecon;
extern const pflref_algorithm pflref_fedamp;
extern const pflref_algorithm pflref_fedproto;
extern const pflref_algorithm pflref_fedrod;
extern const pflref_algorithm pflref_apple;
extern const pflref_algorithm pflref_fedala;
extern const pflref_algorithm pflref_fedpac;

/* FedAvg's work buffers, P doubles each (zero-filled; none is carried
 * between rounds), held inside a workspace: FedAvg's own, or that of an
 * algorithm that trains its global model with FedAvg's rounds before a
 * personalisation phase (finetune, interp). */
typedef struct {
    double *w_t;      /* w_t, the round-start global model                  */
    double *w_local;  /* w^k, client k's iterate in ClientUpdate            */
    double *g;        /* ∇ℓ(w; b), the local gradient                       */
} pflref_fedavg_work;

/* Allocate the buffers of *work (P doubles each) through the list of the
 * workspace that holds it (ref/engine/work.h): a failure marks the list
 * failed, and that workspace's pflref_work_free frees them. */
void pflref_fedavg_work_alloc(pflref_fedavg_work *work, pflref_work *list,
                              size_t P);

/* The shape of a FedAvg workspace for the state s: its three buffers P
 * writable doubles each, apart from each other, from *work, from *s and
 * from the state's arrays.
 * predicate fedavg_work_shape: that shape. */
/*@ predicate fedavg_work_shape{L}(pflref_fedavg_work *work,
                                   pflref_state *s) =
      \valid_read(work) && \valid(work->w_t + (0 .. s->P - 1)) &&
      \valid(work->w_local + (0 .. s->P - 1)) &&
      \valid(work->g + (0 .. s->P - 1)) &&
      \separated(work->w_t + (0 .. s->P - 1),
                 work->w_local + (0 .. s->P - 1),
                 work->g + (0 .. s->P - 1), work, s,
                 s->w + (0 .. s->P - 1), s->w0 + (0 .. s->P - 1),
                 s->accum + (0 .. s->P - 1), s->mix + (0 .. s->P - 1),
                 s->mask + (0 .. s->P - 1), s->shared + (0 .. s->P - 1));
 */

/* FedAvg's round (ref/algorithms/fedavg.c) with the buffers of work.
 * Proved (proofs/README.md): from the state's shapes, the validated
 * plan and the workspace's shape, every block kernel it calls gets the
 * arrays its contract asks for. */
/*@ requires state_global(s) && state_model(s);
    requires round_plan(plan, s->N);
    requires fedavg_work_shape(work, s);
    requires \separated(err, s, s->problem, work, plan);
    assigns work->w_t[0 .. s->P - 1], work->w_local[0 .. s->P - 1],
            work->g[0 .. s->P - 1], s->accum[0 .. s->P - 1],
            s->w[0 .. s->P - 1], s->hyper_round, *err;
 */
pflref_status pflref_fedavg_round_with(pflref_state *s,
                                       const pflref_round_plan *plan,
                                       pflref_fedavg_work *work,
                                       const pflref_trace *trace,
                                       pflref_error *err);

/* FedAvg's round as bn.aggregate says (ref/algorithms/fedavg_keep.c):
 * pflref_fedavg_round_with, or, under parameters_only on a model with
 * batch normalisation, PFLlib's reading (each client keeps its own r_μ,
 * r_v; the global's are the first participant's).  The same arguments and
 * results as pflref_fedavg_round_with; PFLREF_ENOMEM when the clients'
 * own models (N×P doubles, s->bn_own) cannot be allocated. */
pflref_status pflref_fedavg_round_any(pflref_state *s,
                                      const pflref_round_plan *plan,
                                      pflref_fedavg_work *work,
                                      const pflref_trace *trace,
                                      pflref_error *err);

/* FedAvg's load_state (pflref_run_resync) under bn.aggregate =
 * parameters_only: each client's own r_μ, r_v from the buffers of its last
 * w_local record up to round t (ref/algorithms/fedavg_keep.c); nothing
 * otherwise. */
void pflref_fedavg_keep_load(pflref_state *s, pflref_state_loader load,
                             void *ctx, long t);

/* IFCA's F_i(θ) := *loss, the mean loss of θ on all of D (client i's
 * training set), in the mode ifca.estimate_mode says: a training-mode loss
 * pass (a dropout mask taken) or an evaluation (no mask)
 * (ref/algorithms/ifca_estimate.c).  pflref_model_loss's or
 * pflref_model_evaluate's status. */
pflref_status pflref_ifca_estimate_loss(const pflref_state *s,
                                        const double *theta,
                                        const pflref_data *D, double *loss);

/* FedPAC's check before round 0 (ref/algorithms/fedpac_check.c). */
pflref_status pflref_fedpac_check(const pflref_problem *problem,
                                  const pflref_hyper *hyper,
                                  const pflref_schedule *schedule,
                                  const unsigned char *mask,
                                  pflref_error *err);
/* APFL's check before round 0 (ref/algorithms/apfl_check.c). */
pflref_status pflref_apfl_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err);

#endif
