/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/algorithm.h: the algorithm registry and the run driver.
 *
 * Every algorithm has GSL's INITIALIZE / ITERATE / TEST shape: `init` builds
 * the state from the problem, `round` advances it by exactly one
 * communication round, the driver loops, and `finish` runs any phase after
 * training (fine-tuning).  The state (pflref_state) is private to the
 * engine (ref/engine/engine.h); a C user runs an algorithm through
 * pflref_run and reads its pflref_run_result.
 */
#ifndef PFLREF_ALGORITHM_H
#define PFLREF_ALGORITHM_H

#include <stddef.h>
#include "status.h"
#include "model.h"
#include "problem.h"
#include "schedule.h"
#include "trace.h"
#include "metrics.h"
#include "hyper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The run state of one algorithm (private to the engine). */
typedef struct pflref_state pflref_state;

typedef enum {
    PFLREF_SOURCE_GLOBAL = 0,   /* evaluate state.w on every client        */
    PFLREF_SOURCE_PERSONAL = 1, /* evaluate state.v_i on client i          */
    PFLREF_SOURCE_MIX = 2,      /* evaluate v̄_i = α_i v_i + (1 − α_i) w on
                                   client i (parameters mixed, or outputs
                                   when the algorithm's output_mix says so) */
    PFLREF_SOURCE_OWN = 3       /* the algorithm's own predictor on client i
                                   (its evaluate_own: FedProto's nearest
                                   global prototype)                        */
} pflref_model_source;

typedef struct {
    const char *label;          /* "global", "local", "personalized"        */
    pflref_model_source source;
} pflref_eval_model;

#define PFLREF_MAX_EVAL 3

/* Where a re-synchronised run takes its state from: load(ctx, kind, what,
 * t, i, dst, n) copies into dst the n numbers of the candidate's `train`
 * record of event `kind` named `what` that holds the state after round t,
 * and returns 1; it returns 0 when the candidate has no such record (the
 * reference's own state is kept):
 *   kind = PFLREF_EV_SERVER: the record of round t itself (i = −1);
 *   any other kind, i ≥ 0: client i's latest such record up to round t
 *     (the latest round, then the largest step), as it stood after t;
 *   any other kind, i = −1: the latest such record up to round t of any
 *     client (a server quantity noted under the round's participant).
 * The driver loads w (SERVER "w"), every personal model (CLIENT_END of
 * the algorithm's personal_name) and α_i (NOTE "alpha"); an algorithm's
 * load_state loads the rest. */
typedef int (*pflref_state_loader)(void *ctx, pflref_event_kind kind,
                                   const char *what, long round, long client,
                                   double *dst, size_t n);

typedef struct {
    const char *name;           /* "fedavg"                                 */
    const char *title;          /* "FedAvg (McMahan et al., AISTATS 2017)"  */
    int has_global;             /* the state keeps w                        */
    int has_personal;           /* the state keeps v_i                      */
    int needs_post;             /* finish needs schedule->post              */
    int allows_post;            /* finish uses schedule->post when given    */
    const char *personal_name;  /* the trajectory name of v_i carried from
                                   round to round ("v"), or NULL            */
    int has_alpha;              /* the state keeps α_i (state.alpha), reported
                                   as the result's final.alpha              */
    int has_clusters;           /* the state keeps cluster labels
                                   (state.cluster)                          */
    /* 1 when PFLREF_SOURCE_MIX mixes the two models' outputs instead of
     * their parameters (NULL: parameters). */
    int (*output_mix)(const pflref_hyper *hyper);
    /* Whether every client trains each round while only the sampled ones
     * are aggregated (the schedule's train_all; rounds then have
     * selected ⊂ clients).  NULL: never; such an algorithm refuses rounds
     * whose selected set differs from their participants. */
    int (*train_all)(const pflref_hyper *hyper);
    size_t n_eval;
    pflref_eval_model eval[PFLREF_MAX_EVAL];
    /* Checks of the hyperparameters and the schedule beyond the generic
     * ones, before anything runs (NULL: none). */
    pflref_status (*check)(const pflref_problem *problem,
                           const pflref_hyper *hyper,
                           const pflref_schedule *schedule,
                           const unsigned char *mask, pflref_error *err);
    /* The algorithm's own extra state and work buffers: a struct of named
     * fields that the algorithm file defines (GSL's `state`), allocated
     * once after `check` and before `init`, zero-filled, and freed after
     * the run (state.extra); NULL: none.  work_alloc returns NULL when out
     * of memory. */
    void *(*work_alloc)(const pflref_problem *problem,
                        const pflref_hyper *hyper);
    void (*work_free)(void *work);
    /* Set algorithm-specific initial state (w, v are already w0 copies). */
    pflref_status (*init)(pflref_state *s, pflref_error *err);
    /* One communication round t = s->t over the participants of plan. */
    pflref_status (*round)(pflref_state *s, const pflref_round_plan *plan,
                           const pflref_trace *trace, pflref_error *err);
    /* The phase after training, or NULL. */
    pflref_status (*finish)(pflref_state *s, const pflref_schedule *schedule,
                            const pflref_trace *trace, pflref_error *err);
    /* The client optimizers (opt.*, ref/engine/optim.c): how many one
     * client holds (Ditto's global and personal solvers: 2), 0 when the
     * local steps are the algorithm's own solver; then opt_refusal says
     * why, for the refusal of a non-default optimizer. */
    size_t opt_slots;
    const char *opt_refusal;
    /* The length of the vector the client optimizer moves when it is the
     * algorithm's own rather than the model's parameters (lora's adapter
     * q: Q entries, and no split: opt.decay_scope = shared | personal do
     * not apply), called after `check`; NULL: the P parameters, the
     * split's personal blocks as personal. */
    size_t (*opt_length)(const pflref_problem *problem,
                         const pflref_hyper *hyper);
    /* Batch normalisation's running statistics (bn.running): NULL when
     * the local steps move them (the shared local solver, or the
     * algorithm's own solver wired to pflref_bn_running_move); otherwise
     * why not, for the refusal of a model with batch normalisation under
     * bn.running = update (ref/engine/run.c). */
    const char *bn_refusal;
    /* Re-synchronised checking (pflref_run_resync).  resync_gap: the
     * state beyond w, v_i, α_i that these hyperparameters carry between
     * rounds and a candidate's records do not (named for the refusal), or
     * NULL when load_state restores everything (resync_gap NULL: always).
     * load_state: after the driver's loads, replace the algorithm's own
     * state by the candidate's after round t (NULL: w, v_i, α_i are all). */
    const char *(*resync_gap)(const pflref_hyper *hyper);
    void (*load_state)(pflref_state *s, pflref_state_loader load, void *ctx,
                       long t);
    /* The evaluation of PFLREF_SOURCE_OWN: client i's predictor of the
     * final state on D (all samples, index order) into *out (loss, and
     * accuracy for a classifier; mse NaN unless regression), called by the
     * driver after the rounds while the work struct lives; NULL: the
     * algorithm has no such source. */
    pflref_status (*evaluate_own)(const pflref_state *s, size_t i,
                                  const pflref_data *D, pflref_eval *out);
} pflref_algorithm;

const pflref_algorithm *const *pflref_algorithms(size_t *count);
const pflref_algorithm *pflref_algorithm_find(const char *name);

/* What a run produces. */
typedef struct {
    const char *label;
    pflref_eval *train;         /* N: evaluation on each client's train set */
    pflref_eval *test;          /* N, or NULL when there is no test data    */
    pflref_summary train_loss;
    pflref_summary train_mse;   /* valid when regression                    */
    pflref_summary train_accuracy; /* valid when classifier                 */
    pflref_summary test_loss;   /* valid when test != NULL                  */
    pflref_summary test_mse;    /* valid when test != NULL and regression   */
    pflref_summary test_accuracy; /* valid when test != NULL and classifier */
} pflref_eval_result;

typedef struct {
    size_t P, N, T;
    double *w0;                 /* P                                        */
    double *w;                  /* P, or NULL                               */
    double *v;                  /* N×P, or NULL                             */
    double *alpha;              /* N, or NULL (has_alpha)                   */
    double *theta0;             /* n_theta0: IFCA's initial cluster models
                                   θ_j⁰ (k×P, cluster 0 first), or NULL     */
    size_t n_theta0;
    double *hn;                 /* n_hn: pFedHN's final hypernetwork state,
                                   W_h (P×e), b_h (P), then the embeddings
                                   v_i (N×e), or NULL                       */
    size_t n_hn;
    pflref_batches *chosen_peers; /* T: FedFomo's peer lists chosen at run
                                   time (round t's nsteps = m_t, or 0 where
                                   the schedule gave them or had no draws),
                                   or NULL                                 */
    size_t n_eval;
    pflref_eval_result eval[PFLREF_MAX_EVAL];
} pflref_run_result;

/* Run `alg` on `problem` for schedule->T rounds from w0 (P entries),
 * emitting events to trace (may be NULL), then evaluate every model the
 * algorithm reports.  *out is allocated here (free with
 * pflref_run_result_free).  Errors: PFLREF_EINVAL (schedule or hyper does
 * not fit), PFLREF_EDIVERGE (with round, client, step), PFLREF_ENOMEM. */
pflref_status pflref_run(const pflref_problem *problem,
                         const pflref_algorithm *alg, const pflref_hyper *hyper,
                         const pflref_schedule *schedule, const double *w0,
                         const pflref_trace *trace, pflref_run_result **out,
                         pflref_error *err);
void pflref_run_result_free(pflref_run_result *r);

/* Like pflref_run, but before every round t > 0 (and before the phase
 * after training) the state is replaced by the candidate's state after
 * round t − 1 (load_state, alg->load_state), so each round is recomputed
 * from where the candidate stood.  Emits the same events as pflref_run;
 * evaluates nothing.  An algorithm whose state these hyperparameters keep
 * outside the records (alg->resync_gap) is refused before anything runs:
 * PFLREF_EINVAL at "algorithm.name", the message naming that state. */
pflref_status pflref_run_resync(const pflref_problem *problem,
                                const pflref_algorithm *alg,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const double *w0, pflref_state_loader load,
                                void *load_ctx, const pflref_trace *trace,
                                pflref_error *err);

/* Whether pflref_run_resync would refuse these hyperparameters (the
 * state they keep outside the records: alg->resync_gap, or client
 * optimizer state kept beyond one client update): PFLREF_OK, or the
 * refusal pflref_run_resync returns (PFLREF_EINVAL, err naming the field
 * and the state).  Nothing is run. */
pflref_status pflref_resync_refusal(const pflref_algorithm *alg,
                                    const pflref_hyper *hyper,
                                    pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
