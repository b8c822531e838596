/* pflref/algorithm.h: hyperparameters, variant switches, the algorithm
 * registry and the run driver.
 *
 * Every algorithm has GSL's INITIALIZE / ITERATE / TEST shape: `init` builds
 * the state from the problem, `round` advances it by exactly one
 * communication round, the driver loops, and `finish` runs any phase after
 * training (fine-tuning).  An algorithm file never reads or writes files,
 * never prints, and never allocates inside its step loop.
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

#ifdef __cplusplus
extern "C" {
#endif

/* Variant switches: value 0 is always the paper's reading. */
typedef enum {
    PFLREF_FEDAVG_WEIGHTS_SAMPLES = 0,      /* n_k / Σ_{S_t} n_j  (final paper) */
    PFLREF_FEDAVG_WEIGHTS_UNIFORM = 1,      /* 1 / m                            */
    PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD = 2  /* Σ_k (n_k/n), unsampled keep w_t  */
} pflref_fedavg_weights;

typedef enum {
    PFLREF_FINETUNE_FULL = 0,      /* every parameter moves                  */
    PFLREF_FINETUNE_PERSONAL = 1   /* only the split's personal blocks move  */
} pflref_finetune_scope;

/* pFedMe (Dinh et al. 2020, Alg. 1) switches; shared/spec notes §2(f). */
typedef enum {
    PFLREF_PFEDME_THETA_RESET = 0, /* θ starts at w_{i,r} every local round  */
    PFLREF_PFEDME_THETA_WARM = 1   /* θ continues from the last local round  */
} pflref_pfedme_theta_start;
typedef enum {
    PFLREF_PFEDME_WEIGHTS_UNIFORM = 0, /* (1/S) Σ_{i∈S^t} w_{i,R}            */
    PFLREF_PFEDME_WEIGHTS_SAMPLES = 1  /* Σ n_i w_{i,R} / Σ n_i (official)   */
} pflref_pfedme_weights;
typedef enum {
    PFLREF_PFEDME_TRAIN_ALL = 0,     /* all N clients train, S^t aggregated  */
    PFLREF_PFEDME_TRAIN_SAMPLED = 1  /* only S^t trains (PFLlib, FL-bench)   */
} pflref_pfedme_train;
typedef enum {
    PFLREF_PFEDME_EVAL_THETA = 0,    /* personalised model = the last θ      */
    PFLREF_PFEDME_EVAL_LOCAL_W = 1,  /* = w_{i,R} (the official code's alias) */
    PFLREF_PFEDME_EVAL_GLOBAL = 2    /* = the broadcast global (PFLlib)      */
} pflref_pfedme_personal_eval;

/* Ditto (Li et al. 2021, Alg. 1) switches; shared/spec notes §3(f). */
typedef enum {
    PFLREF_DITTO_INTERLEAVED = 0,    /* per batch: personal step, then global
                                        step, same batch (official TF code) */
    PFLREF_DITTO_PERSONAL_FIRST = 1  /* all personal steps, then the global
                                        pass (PFLlib)                       */
} pflref_ditto_order;
typedef enum {
    PFLREF_DITTO_PROX_SQUARED = 0,   /* (λ/2)‖v − w‖², gradient λ(v − w)    */
    PFLREF_DITTO_PROX_NORM = 1       /* λ‖v − w‖, gradient λ(v−w)/‖v−w‖     */
} pflref_ditto_prox;
typedef enum {
    PFLREF_DITTO_REF_ROUND_START = 0, /* the reference is w^t               */
    PFLREF_DITTO_REF_MOVING = 1       /* the global copy as it trains       */
} pflref_ditto_prox_ref;
typedef enum {
    PFLREF_DITTO_WEIGHTS_SAMPLES = 0, /* like FedAvg: n_k / Σ_{S_t} n_j     */
    PFLREF_DITTO_WEIGHTS_UNIFORM = 1  /* simple mean (official TF code)     */
} pflref_ditto_weights;

/* FedAlt / FedSim (Pillutla et al., ICML 2022, Alg. 4 and 5) switches;
 * shared/spec notes-pflego-fedalt-fedsim-fedrep.md §3. */
typedef enum {
    PFLREF_PFL_STATEFUL = 0,   /* v_i persists across rounds (Alg. 4, 5)   */
    PFLREF_PFL_STATELESS = 1   /* v_i ← v⁰ at every visit, then discarded
                                  (the paper's appendix C.4)               */
} pflref_pfl_state;
typedef enum {
    PFLREF_PFL_WEIGHTS_SAMPLES = 0, /* α_i = N_i/N: Σ_S α_i u_i / Σ_S α_i   */
    PFLREF_PFL_WEIGHTS_UNIFORM = 1, /* α_i = 1/n: (1/m) Σ_S u_i (Alg. 1 l.8) */
    PFLREF_PFL_WEIGHTS_BATCHES = 2  /* α_i ∝ the device's batches this round
                                       (the official code's len(loader))    */
} pflref_pfl_weights;
typedef enum {
    PFLREF_PFL_FINETUNE_PERSONAL = 0, /* final fine-tuning moves v only     */
    PFLREF_PFL_FINETUNE_FULL = 1      /* moves (u, v) jointly (FedBABU)     */
} pflref_pfl_finetune;

/* PFLEGO (Nikoloutsopoulos et al., arXiv 2202.09848) switches; shared/spec
 * notes-pflego-fedalt-fedsim-fedrep.md §2. */
typedef enum {
    PFLREF_PFLEGO_HEAD_SEED = 0,        /* W_i ← W̃_i − ρ (I/r) G_i           */
    PFLREF_PFLEGO_HEAD_EXACT_ALPHA = 1  /* W_i ← W̃_i − ρ (I/r) α_i G_i       */
} pflref_pflego_head_step;
typedef enum {
    PFLREF_PFLEGO_THETA_GLOBAL = 0,            /* α_i = N_i / N             */
    PFLREF_PFLEGO_THETA_SAMPLED_NORMALISED = 1 /* N_i / Σ_{I_t} N_j (code)  */
} pflref_pflego_theta_weights;
typedef enum {
    PFLREF_PFLEGO_SERVER_SGD = 0,  /* θ ← θ − ρ ĝ                           */
    PFLREF_PFLEGO_SERVER_ADAM = 1  /* Adam(ρ, 0.9, 0.999, 1e-8) on ĝ (code)  */
} pflref_pflego_server;

/* Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1) switches;
 * shared/spec notes §4(f). */
typedef enum {
    PFLREF_PERFEDAVG_EXACT = 0, /* w ← w − β (I − α H(w; D″)) ∇f(w̃; D′)    */
    PFLREF_PERFEDAVG_FO = 1,    /* w ← w − β ∇f(w̃; D′)                      */
    PFLREF_PERFEDAVG_HF = 2     /* H(w; D″)q by central differences, δ, at w */
} pflref_perfedavg_variant;
typedef enum {
    PFLREF_PERFEDAVG_WEIGHTS_UNIFORM = 0, /* (1/|A_k|) Σ w^i (paper)        */
    PFLREF_PERFEDAVG_WEIGHTS_SAMPLES = 1  /* n_i / Σ n_j (pFedMe repo)      */
} pflref_perfedavg_weights;
typedef enum {
    PFLREF_PERFEDAVG_EVAL_ONE_ALPHA = 0,      /* θ_i = w − α ∇f_i(w; D)      */
    PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA = 1 /* then θ_i − β ∇f_i(θ_i; D2)  */
} pflref_perfedavg_eval;

/* APFL (Deng, Kamani, Mahdavi 2020, Alg. 1) switches; shared/spec notes
 * §6(f). */
typedef enum {
    PFLREF_APFL_ALPHA_FIXED = 0,    /* α_i stays at its initial value       */
    PFLREF_APFL_ALPHA_ADAPTIVE = 1  /* α_i follows its gradient step        */
} pflref_apfl_alpha;
typedef enum {
    PFLREF_APFL_MIX_PARAMETER = 0,  /* v̄ = α v + (1 − α) w, one model       */
    PFLREF_APFL_MIX_OUTPUT = 1      /* ŷ = α v(x) + (1 − α) w(x) (FedTorch) */
} pflref_apfl_mix;
typedef enum {
    PFLREF_APFL_MIX_W_OLD = 0,      /* the mixture uses w_i before its step */
    PFLREF_APFL_MIX_W_NEW = 1       /* ... after its step (FedTorch)        */
} pflref_apfl_mix_uses_w;
typedef enum {
    PFLREF_APFL_RULE_PAPER = 0,     /* α ← Π(α − η_α ⟨v − w, ∇f(v̄)⟩)       */
    PFLREF_APFL_RULE_FEDTORCH = 1   /* FedTorch's alpha_update, first step  */
} pflref_apfl_alpha_rule;

/* Model interpolation (seed 000 §2 and Exercise 14.7.2; shared/spec notes
 * §5.2) switches. */
typedef enum {
    PFLREF_INTERP_FIXED = 0,        /* one α for every client               */
    PFLREF_INTERP_PER_CLIENT_GRID = 1 /* α_i = the grid point that scores
                                         best on client i's selection set   */
} pflref_interp_alpha;
typedef enum {
    PFLREF_INTERP_SELECT_VALIDATION = 0, /* select on the validation split */
    PFLREF_INTERP_SELECT_TEST = 1        /* on the test set (the exercise's
                                            reading: it reads the best α off
                                            the test curve)                 */
} pflref_interp_select;

/* Clustered FL (Sattler, Müller, Samek, IEEE TNNLS 2021, Alg. 1 and 5)
 * switches; shared/spec notes-cfl-ifca-sampling-metrics.md §1. */
typedef enum {
    PFLREF_CFL_BIPARTITION_OPTIMAL = 0,        /* Alg. 1: min over bipartitions
                                                  of max cross α (single
                                                  linkage cut at two)      */
    PFLREF_CFL_BIPARTITION_COMPLETE_LINKAGE = 1 /* complete linkage on −α
                                                  (the authors' notebook)  */
} pflref_cfl_bipartition;
typedef enum {
    PFLREF_CFL_WEIGHTS_UNIFORM = 0, /* Δθ_c = (1/|c|) Σ_{i∈c} Δθ_i (Alg. 5) */
    PFLREF_CFL_WEIGHTS_SAMPLES = 1  /* Σ_{i∈c} (|D_i|/|D_c|) Δθ_i (Alg. 2)  */
} pflref_cfl_weights;

/* IFCA (Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, Alg. 1) switch;
 * shared/spec notes-cfl-ifca-sampling-metrics.md §2. */
typedef enum {
    PFLREF_IFCA_GRADIENT = 0,  /* Option I: θ_j ← θ_j − (γ/|M_t|) Σ s_ij g_i */
    PFLREF_IFCA_MODEL = 1      /* Option II: θ_j ← mean of the local models  */
} pflref_ifca_mode;

/* The value of an integer hyperparameter that was not set. */
#define PFLREF_INT_UNSET ((size_t)-1)

/* All hyperparameters and switches of every algorithm.  Fields an algorithm
 * does not use are ignored by it.  pflref_hyper_defaults fills the paper
 * defaults; required fields start as NaN. */
typedef struct {
    double eta;        /* η: client step size                          */
    double eta_ft;     /* η_ft: fine-tuning step size                  */
    double mu_ft;      /* μ_ft: fine-tuning proximal weight toward w   */
    double lambda;     /* λ: proximal weight (pFedMe, Ditto)           */
    double eta_p;      /* η_p: pFedMe's inner ("personal") step size   */
    size_t K;          /* K: pFedMe's inner steps                      */
    double beta;       /* β: pFedMe's server mixing                    */
    double pfedme_mu;  /* μ: the official code's extra μθ (pfedme.mu)  */
    int fedavg_weights;    /* pflref_fedavg_weights                    */
    int finetune_scope;    /* pflref_finetune_scope                    */
    int pfedme_theta_start;    /* pflref_pfedme_theta_start            */
    int pfedme_weights;        /* pflref_pfedme_weights                */
    int pfedme_train;          /* pflref_pfedme_train                  */
    int pfedme_personal_eval;  /* pflref_pfedme_personal_eval          */
    int ditto_order;           /* pflref_ditto_order                   */
    int ditto_prox;            /* pflref_ditto_prox                    */
    int ditto_prox_ref;        /* pflref_ditto_prox_ref                */
    int ditto_weights;         /* pflref_ditto_weights                 */
    double gamma_u;    /* γ_u: FedAlt/FedSim step size of u            */
    double gamma_v;    /* γ_v: FedAlt/FedSim step size of v            */
    size_t tau_v;      /* τ_v: FedAlt's v steps (the first τ_v batches) */
    double rho;        /* ρ: PFLEGO's server step size                 */
    double pflego_beta;/* β: PFLEGO's cheap head step size             */
    int pfl_state;             /* pflref_pfl_state                     */
    int pfl_weights;           /* pflref_pfl_weights                   */
    int pfl_finetune;          /* pflref_pfl_finetune                  */
    int pflego_head_step;      /* pflref_pflego_head_step              */
    int pflego_theta_weights;  /* pflref_pflego_theta_weights          */
    int pflego_server;         /* pflref_pflego_server                 */
    double perfedavg_alpha;    /* α: Per-FedAvg's inner (personal) step  */
    double perfedavg_beta;     /* β: Per-FedAvg's outer (meta) step      */
    double perfedavg_delta;    /* δ: the HF finite-difference radius     */
    int perfedavg_variant;     /* pflref_perfedavg_variant             */
    int perfedavg_weights;     /* pflref_perfedavg_weights             */
    int perfedavg_eval;        /* pflref_perfedavg_eval                */
    double apfl_alpha;         /* α_i: APFL's (initial) mixing weight    */
    double apfl_eta_alpha;     /* η_α: APFL's α step (NaN: η)            */
    int apfl_alpha_mode;       /* pflref_apfl_alpha                    */
    int apfl_mix;              /* pflref_apfl_mix                      */
    int apfl_mix_uses_w;       /* pflref_apfl_mix_uses_w               */
    int apfl_alpha_rule;       /* pflref_apfl_alpha_rule               */
    double interp_alpha;       /* α: the fixed interpolation weight      */
    size_t interp_grid;        /* G: the grid α_j = j/G, j = 0..G        */
    int interp_alpha_mode;     /* pflref_interp_alpha                  */
    int interp_select;         /* pflref_interp_select                 */
    pflref_split split;    /* shared (u) / personal (v_i) blocks       */
    double cfl_eps1;           /* ε₁: CFL's bound on ‖Δθ_c‖              */
    double cfl_eps2;           /* ε₂: CFL's bound on max_i ‖Δθ_i‖        */
    double cfl_gamma_max;      /* γ_max ∈ [0, 1): CFL's separation bound  */
    size_t cfl_min_cluster_size; /* guard: split only |c| ≥ this (0 off) */
    size_t cfl_warmup;         /* guard: split only in rounds t ≥ this     */
    int cfl_bipartition;       /* pflref_cfl_bipartition               */
    int cfl_cluster_weights;   /* pflref_cfl_weights                   */
    double ifca_gamma;         /* γ: IFCA's step size                     */
    size_t ifca_k;             /* k: IFCA's number of cluster models      */
    double ifca_init_shift;    /* δ: θ_j⁰ = w⁰ + j δ 𝟙 + σ ξ_j            */
    double ifca_init_sd;       /* σ: the spread of the drawn ξ_j          */
    size_t ifca_init_seed;     /* the seed of the ξ_j draws               */
    int ifca_mode;             /* pflref_ifca_mode                     */
    const double *ifca_theta0; /* k×P given initial models θ_j⁰ (cluster 0
                                  first; the spec's init.cluster_models,
                                  borrowed), or NULL: w⁰ + j δ 𝟙 + σ ξ_j  */
} pflref_hyper;

/* The registry of hyperparameters and switches (for spec parsing and
 * `pflref list`). */
typedef enum {
    PFLREF_PARAM_REAL = 0,   /* double field                              */
    PFLREF_PARAM_ENUM = 1,   /* int field: index into values              */
    PFLREF_PARAM_INT = 2     /* size_t field: a count ≥ lo (PFLREF_INT_UNSET
                                = not set)                                */
} pflref_param_type;

typedef struct {
    const char *name;         /* spec key: "eta", "fedavg.weights"          */
    const char *algorithms;   /* space-separated names it applies to        */
    const char *required_by;  /* space-separated names that need it, or ""  */
    pflref_param_type type;
    size_t offset;            /* offsetof(pflref_hyper, field)              */
    double def;               /* REAL, INT: default (NaN = none); ENUM:
                                 unused                                     */
    double lo;                /* REAL, INT: lower bound                     */
    int lo_open;              /* REAL: 1 = lower bound excluded             */
    const char *const *values;/* ENUM: NULL-terminated; values[0] = paper   */
    const char *symbol;       /* the paper's symbol, e.g. "η"               */
    const char *doc;          /* one line                                   */
} pflref_param;

const pflref_param *pflref_params(size_t *count);
const pflref_param *pflref_param_find(const char *name);
/* The parameter `name` that applies to algorithm `alg` (one name may mean
 * different things to different algorithms: α, β), else the first
 * parameter called `name` (which then does not apply to alg), else NULL. */
const pflref_param *pflref_param_find_for(const char *name, const char *alg);
/* 1 when the space-separated list `names` contains `name`. */
int pflref_name_in_list(const char *names, const char *name);

void pflref_hyper_defaults(pflref_hyper *h);
/* Set a REAL parameter (finite, within bounds) or an ENUM switch (by value
 * name); `where` is the JSON path used in messages. */
pflref_status pflref_hyper_set_real(pflref_hyper *h, const pflref_param *p,
                                    double value, const char *where,
                                    pflref_error *err);
pflref_status pflref_hyper_set_enum(pflref_hyper *h, const pflref_param *p,
                                    const char *value, const char *where,
                                    pflref_error *err);
pflref_status pflref_hyper_set_int(pflref_hyper *h, const pflref_param *p,
                                   size_t value, const char *where,
                                   pflref_error *err);
double pflref_hyper_get_real(const pflref_hyper *h, const pflref_param *p);
size_t pflref_hyper_get_int(const pflref_hyper *h, const pflref_param *p);

/* Presets: named bundles of switch and hyperparameter settings that
 * reproduce a known code base ("official": the authors' released code,
 * "pfllib": TsingZ0/PFLlib).  "paper" (no settings) is every algorithm's
 * default.  Settings given explicitly in a spec override the preset's. */
typedef struct {
    const char *algorithm;
    const char *name;
    const char *settings;     /* "name=value" pairs, space-separated       */
    const char *split;        /* the personal blocks or group the preset
                                 implies ("head", "input"), or NULL        */
    const char *source;       /* where the settings were read              */
} pflref_preset;

const pflref_preset *pflref_presets(size_t *count);
/* The preset `name` of algorithm `alg`, or NULL ("paper" has none). */
const pflref_preset *pflref_preset_find(const char *alg, const char *name);
/* Apply preset `name` of algorithm `alg` to h ("paper": nothing).  Errors:
 * an unknown preset (PFLREF_EINVAL, where). */
pflref_status pflref_preset_apply(pflref_hyper *h, const char *alg,
                                  const char *name, const char *where,
                                  pflref_error *err);
const char *pflref_hyper_get_enum(const pflref_hyper *h, const pflref_param *p);

/* The run state shared by every algorithm. */
typedef struct {
    const pflref_problem *problem;
    const pflref_hyper *hyper;
    size_t P;                   /* parameters                               */
    size_t N;                   /* clients                                  */
    size_t t;                   /* rounds completed                         */
    double *w0;                 /* P: the initial parameters                */
    double *w;                  /* P: the global model, or NULL             */
    double *v;                  /* N×P: personal models v_i, or NULL        */
    double *alpha;              /* N: per-client mixing weights α_i, or NULL
                                   (algorithms with has_alpha)              */
    unsigned char *mask;        /* P: 1 = personal parameter (the split)    */
    unsigned char *shared;      /* P: 1 − mask (1 = shared parameter)       */
    double *scratch;            /* 8·P doubles for the algorithm            */
    double *work;               /* alg->work_doubles(problem) doubles, or
                                   NULL (PFLEGO's feature cache)            */
    double *accum;              /* P doubles: aggregation accumulator       */
    pflref_model_workspace *ws; /* batches up to the largest client         */
    size_t *cluster;            /* N: each client's cluster label, or NULL
                                   (algorithms with has_clusters)           */
    size_t *iwork;              /* 4·N integers of work, or NULL (likewise) */
    double *theta0;             /* n_theta0 doubles: the initial cluster
                                   models actually used (IFCA), or NULL     */
    size_t n_theta0;
} pflref_state;

typedef enum {
    PFLREF_SOURCE_GLOBAL = 0,   /* evaluate state.w on every client        */
    PFLREF_SOURCE_PERSONAL = 1, /* evaluate state.v_i on client i          */
    PFLREF_SOURCE_MIX = 2       /* evaluate v̄_i = α_i v_i + (1 − α_i) w on
                                   client i (parameters mixed, or outputs
                                   when the algorithm's output_mix says so) */
} pflref_model_source;

typedef struct {
    const char *label;          /* "global", "local", "personalized"        */
    pflref_model_source source;
} pflref_eval_model;

#define PFLREF_MAX_EVAL 3

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
                                   (state.cluster) and integer work         */
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
    /* Doubles of s->work the algorithm needs (NULL: none). */
    size_t (*work_doubles)(const pflref_problem *problem);
    /* Checks of the hyperparameters and the schedule beyond the generic
     * ones, before anything runs (NULL: none). */
    pflref_status (*check)(const pflref_problem *problem,
                           const pflref_hyper *hyper,
                           const pflref_schedule *schedule,
                           const unsigned char *mask, pflref_error *err);
    /* Set algorithm-specific initial state (w, v are already w0 copies). */
    pflref_status (*init)(pflref_state *s, pflref_error *err);
    /* One communication round t = s->t over the participants of plan. */
    pflref_status (*round)(pflref_state *s, const pflref_round_plan *plan,
                           const pflref_trace *trace, pflref_error *err);
    /* The phase after training, or NULL. */
    pflref_status (*finish)(pflref_state *s, const pflref_schedule *schedule,
                            const pflref_trace *trace, pflref_error *err);
} pflref_algorithm;

const pflref_algorithm *const *pflref_algorithms(size_t *count);
const pflref_algorithm *pflref_algorithm_find(const char *name);

/* What a run produces. */
typedef struct {
    const char *label;
    pflref_eval *train;         /* N: evaluation on each client's train set */
    pflref_eval *test;          /* N, or NULL when there is no test data    */
    pflref_summary train_loss;
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

/* Where a re-synchronised run takes its state from: load(ctx, what, t, i,
 * dst, P) copies into dst the candidate's global model after round t
 * (what = "w", i = −1) or client i's personal model as it stood after
 * round t (what = the algorithm's personal_name), and returns 1; it
 * returns 0 when the candidate has no such record (the reference's own
 * state is kept). */
typedef int (*pflref_state_loader)(void *ctx, const char *what, long round,
                                   long client, double *dst, size_t P);

/* Like pflref_run, but before every round t > 0 (and before the phase
 * after training) the state is replaced by the candidate's state after
 * round t − 1, so each round is recomputed from where the candidate stood.
 * Emits the same events as pflref_run; evaluates nothing. */
pflref_status pflref_run_resync(const pflref_problem *problem,
                                const pflref_algorithm *alg,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const double *w0, pflref_state_loader load,
                                void *load_ctx, const pflref_trace *trace,
                                pflref_error *err);

/* Shared pieces used by several algorithms (ref/local.c, ref/prox.c). */

/* Local minibatch SGD with an optional proximal term, the one local solver:
 *   for s = 1..batches->nsteps:
 *     θ ← θ − η (∇f(θ; D_s) + μ (θ − ref))     on the entries with mask = 1
 * (mask NULL: every entry; μ = 0 or ref NULL: no proximal term).  Emits a
 * STEP event named `name` after every step and fails with PFLREF_EDIVERGE
 * (round t, client i, step s) when θ stops being finite.
 *   theta  [in,out] P;  g [work] P */
typedef struct {
    const pflref_model *model;
    const pflref_data *data;
    const pflref_batches *batches;
    double eta;
    double mu;
    const double *ref;
    const unsigned char *mask;
    const char *phase;
    const char *name;
    const char *formula;
    long round;
    long client;
} pflref_local_sgd;

pflref_status pflref_local_sgd_run(const pflref_local_sgd *job, double *theta,
                                   double *g, pflref_model_workspace *ws,
                                   const pflref_trace *trace,
                                   pflref_error *err);

/* g := ∇f(θ; D_s), the gradient of the batch-mean loss on step s's batch
 * (0-based) of b; a failure names the round, client and step (s + 1). */
pflref_status pflref_batch_grad(const pflref_model *m, const double *theta,
                               const pflref_data *data,
                               const pflref_batches *b, size_t s,
                               pflref_model_workspace *ws, double *g,
                               long round, long client, pflref_error *err);

/* Step s (0-based, < batches->nsteps) of the local solver alone. */
pflref_status pflref_local_sgd_step(const pflref_local_sgd *job, size_t s,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err);

/* pFedMe's inner loop (Dinh et al. 2020, Alg. 1, the approximate solution
 * of eq. (7)), the primitive shared by pFedMe and the "prox" algorithm:
 *   for k = 1..K:
 *     θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ)
 * on one batch D (the K steps reuse it).  μ = 0 is the paper; the official
 * code adds μθ (pfedme.mu).  Emits a STEP event named "theta" after every
 * step, numbered step0 + k, and fails with PFLREF_EDIVERGE (round, client,
 * step) when θ stops being finite.
 *   theta [in,out] P: the start point, then θ_K;  g [work] P */
typedef struct {
    const pflref_model *model;
    const pflref_data *data;
    const size_t *idx;      /* the batch D: nb sample indices               */
    size_t nb;
    const double *w;        /* P: the reference w (pFedMe's w_{i,r})        */
    double lambda;          /* λ ≥ 0                                        */
    double eta_p;           /* η_p > 0                                      */
    double mu;              /* μ ≥ 0                                        */
    size_t K;               /* K ≥ 1                                        */
    const char *phase;
    const char *formula;
    long round;
    long client;
    long step0;             /* the first step is numbered step0 + 1         */
} pflref_prox_inner;

pflref_status pflref_prox_inner_run(const pflref_prox_inner *job,
                                    double *theta, double *g,
                                    pflref_model_workspace *ws,
                                    const pflref_trace *trace,
                                    pflref_error *err);

/* 1 when the model's batch loss is a quadratic function of the parameters
 * (quadratic; linear with squared or half_squared loss), so that the inner
 * problem has the exact solution pflref_prox_point computes. */
int pflref_prox_has_exact(const pflref_model *m);

/* The exact minimiser of the inner problem of job (K, η_p ignored):
 *   θ̂ = argmin_θ f(θ; D) + (λ/2)‖θ − w‖² + (μ/2)‖θ‖²
 * i.e. the solution of (H + (λ + μ) I)(θ − w) = −(∇f(w; D) + μ w), H the
 * (constant) Hessian of f, found by conjugate gradients with exact
 * Hessian-vector products.  In exact arithmetic CG ends after at most P
 * iterations; it stops when the residual is at most
 * PFLREF_PROX_CG_RTOL·‖r_0‖ or after 2P iterations.  Only for models with
 * pflref_prox_has_exact (PFLREF_EINVAL otherwise) and λ + μ > 0.
 *   theta_hat [out] P;  work [work] 3·P */
#define PFLREF_PROX_CG_RTOL 1e-15
pflref_status pflref_prox_point(const pflref_prox_inner *job,
                                double *theta_hat, double *work,
                                pflref_model_workspace *ws, pflref_error *err);

/* acc := acc + c·x over P entries: one term of a server aggregation.
 * Aggregations add their terms in ascending client id, so the sum has one
 * order and the result is bit-reproducible. */
void pflref_accumulate(double *acc, double c, const double *x, size_t P);

/* Partial personalisation (FedAlt, FedSim, PFLEGO) keeps full vectors:
 * x := (u, v), the entries with shared[p] = 1 from u, the others from v
 * (x may be v).  pflref_share_to_all sets the shared entries of every
 * client's s->v to those of s->w, so each v_i is (u, v_i). */
void pflref_compose(const unsigned char *shared, const double *u,
                    const double *v, double *x, size_t P);
void pflref_share_to_all(const pflref_state *s);

/* 1 when every entry of x[0..n−1] is finite. */
int pflref_all_finite(const double *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
