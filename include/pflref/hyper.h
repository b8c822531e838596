/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/hyper.h: hyperparameters, variant switches, their registry and the
 * presets.  Value 0 of every switch is the paper's reading.  Each algorithm
 * keeps its own hyperparameters in its own struct inside pflref_hyper, named
 * as its paper names them; the registry (pflref_params) maps spec keys to
 * fields. */
#ifndef PFLREF_HYPER_H
#define PFLREF_HYPER_H

#include <stddef.h>
#include "status.h"
#include "model.h"

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
typedef enum {
    PFLREF_PFEDME_EVAL_RESET_NONE = 0,    /* evaluation has no side effect */
    PFLREF_PFEDME_EVAL_RESET_INITIAL = 1  /* defect (PFLlib, evaluation in
                                             every round): a client's first
                                             training starts θ at w⁰      */
} pflref_pfedme_eval_reset;

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
typedef enum {
    PFLREF_DITTO_BATCHES_SHARED = 0,  /* the personal steps take the global
                                         pass's scheduled batches (paper)  */
    PFLREF_DITTO_BATCHES_SEPARATE = 1 /* their own list, the plan's
                                         personal (PFLlib's ptrain(): -pls
                                         epochs of its own loader)         */
} pflref_ditto_batches;

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
typedef enum {
    PFLREF_PERFEDAVG_CALLS_ONE = 0, /* a round's τ steps are one pass (paper) */
    PFLREF_PERFEDAVG_CALLS_TWO = 1  /* two train() calls of τ/2 steps each
                                       (PFLlib's serverperavg.py calls train()
                                       twice), each with its own decay step */
} pflref_perfedavg_calls;
typedef enum {
    PFLREF_PERFEDAVG_EVAL_LR_INITIAL = 0, /* the personalisation step takes
                                             the undecayed α (the paper has
                                             no decay)                       */
    PFLREF_PERFEDAVG_EVAL_LR_DECAYED = 1  /* it takes client i's α after all
                                             its scheduler steps so far
                                             (PFLlib clientperavg.py
                                             train_one_step calls
                                             self.optimizer.step(), whose
                                             param-group lr ExponentialLR
                                             decays)                         */
} pflref_perfedavg_eval_lr;

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
typedef enum {
    PFLREF_APFL_VARIANT_PAPER = 0,  /* v steps through the mixture v̄       */
    PFLREF_APFL_VARIANT_PFLLIB = 1  /* TsingZ0/PFLlib clientapfl.py train():
                                       v on its own loss, α with +0.02 α at
                                       every step, v ← (1 − α) w_i + α v at
                                       the round's end                      */
} pflref_apfl_variant;
typedef enum {
    PFLREF_APFL_WEIGHTS_UNIFORM = 0, /* w ← (1/|U|) Σ_U w_i (the paper)     */
    PFLREF_APFL_WEIGHTS_SAMPLES = 1  /* Σ_U n_i w_i / Σ_U n_j (PFLlib's
                                        serverbase.py receive_models)       */
} pflref_apfl_weights;
typedef enum {
    PFLREF_APFL_ALPHA_LR_DECAYED = 0, /* η_α decays with η under lr.schedule
                                         (the paper has no decay: one rule
                                         for every step size)               */
    PFLREF_APFL_ALPHA_LR_CONSTANT = 1 /* η_α (unset: η) never decays (PFLlib
                                         clientapfl.py alpha_update reads
                                         self.learning_rate, which no
                                         scheduler touches)                 */
} pflref_apfl_alpha_lr;

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

/* FedFomo (Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, Alg. 1)
 * switches; shared/spec notes-fedbn-fedfomo.md §2.8. */
typedef enum {
    PFLREF_FEDFOMO_DISTANCE_L2 = 0, /* ‖θ_n − θ_i‖₂ (the paper)            */
    PFLREF_FEDFOMO_DISTANCE_L1 = 1, /* ‖θ_n − θ_i‖₁ (NVlabs/FedFomo's
                                       default, federated/args.py)        */
    PFLREF_FEDFOMO_DISTANCE_L2_SQUARED = 2, /* ‖θ_n − θ_i‖₂² (what the code
                                       calls l2, federated/utils.py)      */
    PFLREF_FEDFOMO_DISTANCE_L2_PER_TENSOR = 3 /* Σ over the model's blocks
                                       of ‖·‖₂ (the code's l2_root)       */
} pflref_fedfomo_distance;
typedef enum {
    PFLREF_FEDFOMO_SELECTION_EPS_GREEDY = 0, /* ε-greedy over P (the paper,
                                       NVlabs client.py:328-360)          */
    PFLREF_FEDFOMO_SELECTION_TOPM = 1  /* the M largest P_{i,n} (PFLlib
                                       serverfomo.py send_models, topk)   */
} pflref_fedfomo_selection;
typedef enum {
    PFLREF_FEDFOMO_P_UPDATE_WEIGHTS = 0, /* P_{i,n} += w_n (the paper)    */
    PFLREF_FEDFOMO_P_UPDATE_SIGNED = 1,  /* += r_n / max(|Σ_m r_m|, 1e-9)
                                       (NVlabs federation.py:396-418)     */
    PFLREF_FEDFOMO_P_UPDATE_RAW = 2      /* += r_n (PFLlib receive_models) */
} pflref_fedfomo_p_update;
typedef enum {
    PFLREF_FEDFOMO_P_INIT_ZEROS = 0,   /* P = 0                             */
    PFLREF_FEDFOMO_P_INIT_OWN = 1,     /* P_{i,i} = 1/10 (NVlabs
                                       client.py:285-288, args.py:168)    */
    PFLREF_FEDFOMO_P_INIT_IDENTITY = 2 /* P = I (PFLlib serverfomo.py)     */
} pflref_fedfomo_p_init;
typedef enum {
    PFLREF_FEDFOMO_NO_POSITIVE_ANCHOR = 0, /* all w_n = 0: φ_i^t = a      */
    PFLREF_FEDFOMO_NO_POSITIVE_KEEP = 1    /* φ_i^t = θ_i^{t−1}, the current
                                       model (PFLlib clientfomo.py)       */
} pflref_fedfomo_no_positive;
typedef enum {
    PFLREF_FEDFOMO_ANCHOR_PRE_TRAIN = 0,  /* a = φ_i^{t−1} (both codes:
                                       PFLlib's old_model is cloned after
                                       aggregation, before training)      */
    PFLREF_FEDFOMO_ANCHOR_POST_TRAIN = 1  /* a = θ_i^{t−1}, the model the
                                       last training ended with           */
} pflref_fedfomo_anchor;
typedef enum {
    PFLREF_FEDFOMO_M_OTHERS = 0,  /* M other clients, own upload extra
                                     (NVlabs client.py:347)             */
    PFLREF_FEDFOMO_M_TOTAL = 1    /* M counts the own upload: M − 1 others
                                     when it is a candidate (README's
                                     "5 models" ↔ 4 downloads)          */
} pflref_fedfomo_m_counts;
typedef enum {
    PFLREF_FEDFOMO_VAL_SAMPLE_MEAN = 0, /* L_i: the mean over the samples  */
    PFLREF_FEDFOMO_VAL_BATCH_MEAN = 1   /* the mean of the batch means of
                                       batches of fedfomo.val_batch in
                                       index order, the last ragged
                                       (NVlabs federated/train.py:258)    */
} pflref_fedfomo_val_loss;
typedef enum {
    PFLREF_FEDFOMO_SELF_INCLUDED = 0, /* the client's own last upload is a
                                         candidate (NVlabs code,
                                         client.py: clients = [self])     */
    PFLREF_FEDFOMO_SELF_EXCLUDED = 1, /* only the M downloaded models      */
    PFLREF_FEDFOMO_SELF_RANKED = 2    /* the own upload is a candidate only
                                         when the M downloads rank it: the
                                         top-M of the whole row P_{i,·},
                                         own entry included (PFLlib
                                         serverfomo.py send_models, topk
                                         of self.P[client.id])            */
} pflref_fedfomo_self;
/* Learning-rate decay across rounds, for every algorithm with a step size
 * (ref/engine/lr.c, the one place that gives a round its step sizes). */
typedef enum {
    PFLREF_LR_CONSTANT = 0,    /* the papers' constant step sizes          */
    PFLREF_LR_EXPONENTIAL = 1, /* round t: × γ^t (PFLlib -ld/-ldg: each
                                  client's ExponentialLR stepped once at the
                                  end of its train(), clientbase.py)       */
    PFLREF_LR_STEP = 2         /* round t: × γ^⌊t / lr.step_rounds⌋
                                  (torch StepLR's shape)                   */
} pflref_lr_schedule;
typedef enum {
    PFLREF_LR_SCOPE_ALL = 0,   /* every step size of the round             */
    PFLREF_LR_SCOPE_ETA_P = 1, /* only pFedMe's η_p (PFLlib: its
                                  scheduler wraps pFedMeOptimizer only)    */
    PFLREF_LR_SCOPE_NO_BETA = 2 /* every step size but Per-FedAvg's β
                                  (PFLlib clientperavg.py: the β step is
                                  optimizer.step(beta=self.beta), a float
                                  set once in __init__)                    */
} pflref_lr_scope;
typedef enum {
    PFLREF_LR_COUNT_ROUNDS = 0,   /* the exponent counts the rounds t        */
    PFLREF_LR_COUNT_TRAININGS = 1 /* it counts the client's own train()
                                     calls before this one (PFLlib: each
                                     client's scheduler steps when that
                                     client trains)                         */
} pflref_lr_count;

/* The client optimizer of every algorithm whose clients take local steps
 * through the shared solver (ref/engine/optim.c, docs/optimizers.md).  The
 * default (sgd, μ = 0, λ = 0, clipping off) is the papers' plain SGD step
 * θ ← θ − η d. */
typedef enum {
    PFLREF_OPT_SGD = 0,        /* SGD, with momentum and weight decay as
                                  torch.optim.SGD                          */
    PFLREF_OPT_ADAM = 1,       /* torch.optim.Adam (Kingma & Ba 2015)      */
    PFLREF_OPT_ADAMW = 2       /* torch.optim.AdamW: Adam with decoupled
                                  weight decay (Loshchilov & Hutter 2019)  */
} pflref_opt_method;
typedef enum {
    PFLREF_OPT_MOMENTUM_PYTORCH = 0,   /* b ← μ b + (1 − τ) d (first: b = d);
                                          θ ← θ − η b  (torch.optim.SGD)   */
    PFLREF_OPT_MOMENTUM_CLASSICAL = 1  /* v ← μ v − η d;  θ ← θ + v
                                          (Polyak; Sutskever et al. 2013)  */
} pflref_opt_momentum_form;
typedef enum {
    PFLREF_OPT_NESTEROV_OFF = 0,
    PFLREF_OPT_NESTEROV_ON = 1         /* d ← d + μ b (torch's nesterov)    */
} pflref_opt_nesterov;
typedef enum {
    PFLREF_OPT_DECAY_COUPLED = 0,      /* d ← d + λθ (torch SGD, Adam)      */
    PFLREF_OPT_DECAY_DECOUPLED = 1     /* θ ← θ(1 − ηλ) before the step
                                          (torch AdamW's form)             */
} pflref_opt_decay_form;
typedef enum {
    PFLREF_OPT_SCOPE_ALL = 0,          /* every moving parameter block      */
    PFLREF_OPT_SCOPE_WEIGHTS = 1,      /* not biases, not batch-norm blocks */
    PFLREF_OPT_SCOPE_SHARED = 2,       /* the split's shared blocks (u)     */
    PFLREF_OPT_SCOPE_PERSONAL = 3      /* the split's personal blocks (v)   */
} pflref_opt_decay_scope;
typedef enum {
    PFLREF_OPT_CLIP_OFF = 0,
    PFLREF_OPT_CLIP_NORM = 1           /* torch.nn.utils.clip_grad_norm_    */
} pflref_opt_clip;
typedef enum {
    PFLREF_OPT_STATE_RESET = 0,        /* a new optimizer per client update */
    PFLREF_OPT_STATE_CLIENT = 1,       /* one per client, kept across rounds
                                          (PFLlib clientbase.py __init__)  */
    PFLREF_OPT_STATE_SERVER = 2        /* one for every client, carried from
                                          client to client (a simulation
                                          defect)                          */
} pflref_opt_state;

#define PFLREF_INT_UNSET ((size_t)-1) /* an integer hyperparameter unset */

/* Each algorithm's own hyperparameters and switches, under its paper's
 * names (the spec keys "<algorithm>.<name>" or the paper's symbol). */
typedef struct {
    int weights;               /* pflref_fedavg_weights                    */
} pflref_fedavg_hyper;

typedef struct {
    int scope;                 /* pflref_finetune_scope                    */
} pflref_finetune_hyper;

typedef struct {
    double mu;                 /* μ: the official code's extra μθ          */
    int theta_start;           /* pflref_pfedme_theta_start                */
    int weights;               /* pflref_pfedme_weights                    */
    int train;                 /* pflref_pfedme_train                      */
    int personal_eval;         /* pflref_pfedme_personal_eval              */
    int eval_reset;            /* pflref_pfedme_eval_reset (a defect)      */
} pflref_pfedme_hyper;

typedef struct {
    int order;                 /* pflref_ditto_order                       */
    int prox;                  /* pflref_ditto_prox                        */
    int prox_ref;              /* pflref_ditto_prox_ref                    */
    int weights;               /* pflref_ditto_weights                     */
    int batches;               /* pflref_ditto_batches                     */
} pflref_ditto_hyper;

/* FedAlt, FedSim and PFLEGO: partial personalisation. */
typedef struct {
    int state;                 /* pflref_pfl_state                         */
    int weights;               /* pflref_pfl_weights                       */
    int finetune;              /* pflref_pfl_finetune                      */
} pflref_pfl_hyper;

typedef struct {
    double beta;               /* β: the cheap head step size              */
    int head_step;             /* pflref_pflego_head_step                  */
    int theta_weights;         /* pflref_pflego_theta_weights              */
    int server;                /* pflref_pflego_server                     */
} pflref_pflego_hyper;

typedef struct {
    double alpha;              /* α: the inner (personal) step             */
    double beta;               /* β: the outer (meta) step                 */
    double delta;              /* δ: the HF finite-difference radius       */
    int variant;               /* pflref_perfedavg_variant                 */
    int weights;               /* pflref_perfedavg_weights                 */
    int eval;                  /* pflref_perfedavg_eval                    */
    int calls;                 /* pflref_perfedavg_calls                   */
    int eval_lr;               /* pflref_perfedavg_eval_lr                 */
    int opt_steps;             /* pflref_perfedavg_opt_steps               */
} pflref_perfedavg_hyper;

typedef struct {
    double alpha;              /* α_i: the (initial) mixing weight         */
    double eta_alpha;          /* η_α: the α step (NaN: η)                 */
    int alpha_mode;            /* pflref_apfl_alpha                        */
    int mix;                   /* pflref_apfl_mix                          */
    int mix_uses_w;            /* pflref_apfl_mix_uses_w                   */
    int alpha_rule;            /* pflref_apfl_alpha_rule                   */
    int variant;               /* pflref_apfl_variant                      */
    int weights;               /* pflref_apfl_weights                      */
    int alpha_lr;              /* pflref_apfl_alpha_lr                     */
} pflref_apfl_hyper;

typedef struct {
    double alpha;              /* α: the fixed interpolation weight        */
    size_t grid;               /* G: the grid α_j = j/G, j = 0..G          */
    int alpha_mode;            /* pflref_interp_alpha                      */
    int select;                /* pflref_interp_select                     */
} pflref_interp_hyper;

typedef struct {
    double eps1;               /* ε₁: the bound on ‖Δθ_c‖                  */
    double eps2;               /* ε₂: the bound on max_i ‖Δθ_i‖            */
    double gamma_max;          /* γ_max ∈ [0, 1): the separation bound     */
    size_t min_cluster_size;   /* guard: split only |c| ≥ this (0 off)     */
    size_t warmup;             /* guard: split only in rounds t ≥ this     */
    int bipartition;           /* pflref_cfl_bipartition                   */
    int cluster_weights;       /* pflref_cfl_weights                       */
} pflref_cfl_hyper;

typedef struct {
    double gamma;              /* γ: the step size                         */
    size_t k;                  /* k: the number of cluster models          */
    double init_shift;         /* δ: θ_j⁰ = w⁰ + j δ 𝟙 + σ ξ_j             */
    double init_sd;            /* σ: the spread of the drawn ξ_j           */
    size_t init_seed;          /* the seed of the ξ_j draws                */
    int mode;                  /* pflref_ifca_mode                         */
    const double *theta0;      /* k×P given initial models θ_j⁰ (cluster 0
                                  first; the spec's init.cluster_models,
                                  borrowed), or NULL: w⁰ + j δ 𝟙 + σ ξ_j   */
} pflref_ifca_hyper;

typedef struct {
    int distance;              /* pflref_fedfomo_distance                  */
    int self;                  /* pflref_fedfomo_self                      */
    double epsilon0;           /* ε₀: ε_t = ε₀ − δ t (run-time selection)  */
    double delta;              /* δ                                        */
    double distance_eps;       /* added to every distance (PFLlib 1e-5)    */
    int selection;             /* pflref_fedfomo_selection                 */
    int p_update;              /* pflref_fedfomo_p_update                  */
    int p_init;                /* pflref_fedfomo_p_init                    */
    int no_positive;           /* pflref_fedfomo_no_positive               */
    int anchor;                /* pflref_fedfomo_anchor                    */
    int m_counts;              /* pflref_fedfomo_m_counts                  */
    int val_loss;              /* pflref_fedfomo_val_loss                  */
    size_t val_batch;          /* the validation batch size (0: one batch) */
    double equal_rtol;         /* τ: θ_n counts as the anchor a when every
                                  |θ_n,p − a_p| ≤ τ max(|θ_n,p|, |a_p|)
                                  (l. 3's distance-0 rule up to the
                                  rounding of l. 5; 2⁻⁵⁰, 0 = exact)      */
#ifndef __FRAMAC__   /* no proved file reads it (as pflref_hyper's) */
    int val_mode;              /* pflref_fedfomo_val_mode                  */
#endif
} pflref_fedfomo_hyper;

/* FedBN (Li et al., ICLR 2021, arXiv 2102.07623v2) switches. */
typedef enum {
    PFLREF_FEDBN_WEIGHTS_UNIFORM = 0, /* 1/m (the box; fed_digits.py:247)   */
    PFLREF_FEDBN_WEIGHTS_SAMPLES = 1  /* n_k / Σ_{S_t} n_j (PFLlib)         */
} pflref_fedbn_weights;
typedef enum {
    PFLREF_FEDBN_BN_LOCAL = 0,        /* γ, β, r_μ, r_v never leave the client */
    PFLREF_FEDBN_BN_SHARED = 1        /* averaged too: the FedAvg baseline   */
} pflref_fedbn_bn;
typedef enum {
    PFLREF_FEDBN_RUNNING_VAR_UNBIASED = 0, /* nb/(nb − 1) s²_B (PyTorch)     */
    PFLREF_FEDBN_RUNNING_VAR_BIASED = 1    /* s²_B                           */
} pflref_fedbn_running_var;
typedef struct {
    int weights;               /* pflref_fedbn_weights                     */
    int bn;                    /* pflref_fedbn_bn                          */
    int running_var;           /* pflref_fedbn_running_var                 */
} pflref_fedbn_hyper;

/* pFedHN (Shamsian, Navon, Fetaya, Chechik, ICML 2021, arXiv
 * 2103.04628v1, Alg. 1) switch and initial state; shared/spec
 * notes-lora-pfedhn.md §4. */
typedef enum {
    PFLREF_PFEDHN_BIAS_ON = 0,  /* θ_i = W_h v_i + b_h (notes §4.1)         */
    PFLREF_PFEDHN_BIAS_OFF = 1  /* θ_i = W_h v_i (the paper's linear
                                   analysis form)                          */
} pflref_pfedhn_bias;
typedef enum {
    PFLREF_PFEDHN_OPT_SGD = 0,  /* plain SGD (the box)                      */
    PFLREF_PFEDHN_OPT_SGD_MOMENTUM_WD = 1 /* torch SGD with momentum and
                                   weight decay (AvivSham/pFedHN @ 1bc0549,
                                   experiments/pfedhn/trainer.py)          */
} pflref_pfedhn_opt;
typedef enum {
    PFLREF_PFEDHN_CLIP_OFF = 0, /* no clipping (the box)                    */
    PFLREF_PFEDHN_CLIP_NORM = 1 /* clip_grad_norm_ at pfedhn.clip_norm
                                   (trainer.py:160, 180)                   */
} pflref_pfedhn_clip;
typedef struct {
    double alpha;              /* α: the hypernetwork's step size          */
    double alpha_v;            /* α_v: the embeddings' step (NaN: α, the
                                  box's one α)                             */
    int bias;                  /* pflref_pfedhn_bias                       */
    int outer_opt;             /* pflref_pfedhn_opt: the φ, v step (H1)     */
    int inner_opt;             /* pflref_pfedhn_opt: the local steps (H3)  */
    int clip;                  /* pflref_pfedhn_clip (H4)                  */
    double outer_momentum;     /* μ of outer_opt = sgd_momentum_wd         */
    double outer_wd;           /* its weight decay (every HN entry)        */
    double inner_momentum;     /* μ of inner_opt = sgd_momentum_wd         */
    double inner_wd;           /* its weight decay                         */
    double clip_norm;          /* the norm bound of clip = norm            */
    size_t e;                  /* embedding dimension (init.hypernetwork's
                                  columns), 0: no hypernetwork given       */
    const double *W0;          /* P×e: W_h⁰ (borrowed from the spec)       */
    const double *b0;          /* P: b_h⁰, or NULL (bias off)              */
    const double *v0;          /* N×e: the embeddings v_i⁰, row i = v_i    */
} pflref_pfedhn_hyper;
/* Low-rank adapters (algorithm lora): W = W₀ + s B A on the targeted
 * weight blocks (ref/models/adapter.h, ref/algorithms/lora.c). */
typedef enum {
    PFLREF_LORA_PERSONAL = 0, /* adapters personal over a frozen W₀ (the
                                 FedLoRA line: nothing is aggregated)      */
    PFLREF_LORA_FFA = 1,      /* FFA-LoRA (arXiv 2403.12313): A frozen,
                                 B trained and averaged                    */
    PFLREF_LORA_FEDAVG = 2,   /* naive FedAvg-LoRA: A and B trained and
                                 averaged separately (FFA-LoRA's baseline) */
    PFLREF_LORA_HETLORA = 3   /* HetLoRA (arXiv 2401.06432): ranks r_k,
                                 truncation, zero-padding, self-pruning    */
} pflref_lora_method;
typedef enum {
    PFLREF_LORA_TARGETS_ALL = 0,  /* every weight matrix (w, W, W1, W2)    */
    PFLREF_LORA_TARGETS_HEAD = 1, /* the output layer's only (w, W, W2)    */
    PFLREF_LORA_TARGETS_INPUT = 2 /* the input layer's only (w, W, W1)     */
} pflref_lora_targets;
typedef enum {
    PFLREF_LORA_WEIGHTS_SAMPLES = 0, /* n_k / Σ_{S_t} n_j (FedAvg)         */
    PFLREF_LORA_WEIGHTS_UNIFORM = 1  /* 1 / m                              */
} pflref_lora_weights;
typedef enum {
    PFLREF_HETLORA_WEIGHTS_SPARSITY = 0, /* ‖S_k‖_F / Σ_j ‖S_j‖_F, S = B A */
    PFLREF_HETLORA_WEIGHTS_UNIFORM = 1,  /* 1 / m (zero-padding baseline)  */
    PFLREF_HETLORA_WEIGHTS_SAMPLES = 2   /* n_k / Σ_{S_t} n_j              */
} pflref_hetlora_weights;
typedef enum {
    PFLREF_HETLORA_SCALING_NONE = 0,   /* W₀ + B A (the paper's form)      */
    PFLREF_HETLORA_SCALING_ALPHA = 1   /* W₀ + (α/r_max) B A (loralib)     */
} pflref_hetlora_scaling;
typedef struct {
    size_t r;                  /* r: the rank (HetLoRA: r_max)             */
    double alpha;              /* α: the scale s = α/r                     */
    int method;                /* pflref_lora_method                       */
    int targets;               /* pflref_lora_targets                      */
    int weights;               /* pflref_lora_weights (ffa, fedavg)        */
    double lambda;             /* λ: HetLoRA's self-pruning weight         */
    double gamma;              /* γ: HetLoRA's rank decay, in (0, 1)       */
    size_t r_min;              /* r_min: HetLoRA's smallest rank           */
    int het_weights;           /* pflref_hetlora_weights                   */
    int scaling;               /* pflref_hetlora_scaling                   */
    const double *q0;          /* the initial adapter (init.lora, borrowed;
                                  layout in ref/models/adapter.h), or NULL    */
    size_t nq0;                /* its length                               */
    const double *ranks;       /* N client ranks r_k (init.lora_ranks,
                                  borrowed), or NULL: every r_k = r        */
    size_t nranks;             /* its length                               */
    const char *const *target_names; /* the targets by name (init.
                                  lora_targets, borrowed: weight blocks or
                                  dense/conv2d layer names), or NULL:
                                  lora.targets chooses them                */
    size_t ntarget_names;      /* their count                              */
} pflref_lora_hyper;
/* Batch normalisation's running statistics r_μ, r_v in training (bn.*;
 * docs/formats.md "bn.*"): every algorithm's local steps on a model with
 * batch normalisation (mlp with bn, a layer list with a batchnorm layer). */
typedef enum {
    PFLREF_BN_RUNNING_UPDATE = 0,  /* PyTorch's train(): each training-mode
                                      gradient pass of a local step moves
                                      the iterate's r_μ, r_v              */
    PFLREF_BN_RUNNING_FROZEN = 1   /* they stay as they are; the forward
                                      still on the batch statistics (torch:
                                      momentum = 0)                        */
} pflref_bn_running;
typedef enum {
    PFLREF_BN_RUNNING_VAR_UNBIASED = 0, /* M/(M − 1) s²_B (PyTorch)         */
    PFLREF_BN_RUNNING_VAR_BIASED = 1    /* s²_B                              */
} pflref_bn_running_var;
typedef struct {
    int running;               /* pflref_bn_running                        */
    int running_var;           /* pflref_bn_running_var                    */
} pflref_bn_hyper;

typedef struct {
    double gamma;              /* γ: the decay factor per round (or step)  */
    size_t step_rounds;        /* rounds per step of the step schedule     */
    int schedule;              /* pflref_lr_schedule                       */
    int scope;                 /* pflref_lr_scope                          */
    int count;                 /* pflref_lr_count                          */
} pflref_lr_hyper;

typedef struct {
    int method;                /* pflref_opt_method                        */
    double momentum;           /* μ ≥ 0 (SGD)                              */
    double dampening;          /* τ ≥ 0 (SGD, pytorch form)                */
    double weight_decay;       /* λ ≥ 0                                    */
    double beta1;              /* β₁ ∈ [0, 1) (Adam)                       */
    double beta2;              /* β₂ ∈ [0, 1) (Adam)                       */
    double eps;                /* ε > 0 (Adam)                             */
    double clip_norm;          /* c > 0 (clip = norm; NaN: not set)        */
    int momentum_form;         /* pflref_opt_momentum_form                 */
    int nesterov;              /* pflref_opt_nesterov                      */
    int decay_form;            /* pflref_opt_decay_form                    */
    int decay_scope;           /* pflref_opt_decay_scope                   */
    int clip;                  /* pflref_opt_clip                          */
    int state;                 /* pflref_opt_state                         */
} pflref_opt_hyper;

#include "hyper_baselines.h"
#include "hyper_personal.h"

/* All hyperparameters and switches.  The top-level fields are shared by
 * several algorithms under one symbol; the rest sit in each algorithm's
 * own struct.  Fields an algorithm does not use are ignored by it.
 * pflref_hyper_defaults fills the paper defaults; required fields start as
 * NaN (integers: PFLREF_INT_UNSET). */
typedef struct {
    double eta;        /* η: client step size                          */
    double eta_ft;     /* η_ft: fine-tuning step size                  */
    double mu_ft;      /* μ_ft: fine-tuning proximal weight toward w   */
    double lambda;     /* λ: proximal weight (pFedMe, prox, Ditto)     */
    double eta_p;      /* η_p: pFedMe's inner ("personal") step size   */
    size_t K;          /* K: pFedMe's inner steps                      */
    double beta;       /* β: pFedMe's server mixing                    */
    double gamma_u;    /* γ_u: FedAlt/FedSim step size of u            */
    double gamma_v;    /* γ_v: FedAlt/FedSim step size of v            */
    size_t tau_v;      /* τ_v: FedAlt's v steps (the first τ_v batches) */
    double rho;        /* ρ: PFLEGO's server step size                 */
    pflref_split split;        /* shared (u) / personal (v_i) blocks   */
    pflref_fedavg_hyper fedavg;
    pflref_finetune_hyper finetune;
    pflref_pfedme_hyper pfedme;
    pflref_ditto_hyper ditto;
    pflref_pfl_hyper pfl;
    pflref_pflego_hyper pflego;
    pflref_perfedavg_hyper perfedavg;
    pflref_apfl_hyper apfl;
    pflref_interp_hyper interp;
    pflref_cfl_hyper cfl;
    pflref_ifca_hyper ifca;
    pflref_fedfomo_hyper fedfomo;
    pflref_fedbn_hyper fedbn;
    pflref_pfedhn_hyper pfedhn;
    pflref_lora_hyper lora;    /* low-rank adapters (lora)               */
    pflref_lr_hyper lr;        /* learning-rate decay across rounds      */
    pflref_opt_hyper opt;      /* the client optimizer (opt.*)           */
    pflref_bn_hyper bn;        /* BN running statistics (bn.*)           */
    /* The algorithms from here on have no proved code (proofs/README.md,
     * "What the proofs trust"): their members are hidden from Frama-C,
     * whose goals hold pflref_hyper's definition, so that adding an
     * algorithm here leaves every proved goal, and the prover cache,
     * as it was.  A proved file that used one would not parse under
     * Frama-C.  A new algorithm adds its member before the #endif. */
#ifndef __FRAMAC__
    pflref_feddyn_hyper feddyn; /* FedDyn (feddyn.*)                      */
    pflref_scaffold_hyper scaffold; /* SCAFFOLD (scaffold.*)         */
    pflref_moon_hyper moon;    /* MOON (moon.*)                          */
    pflref_fedprox_hyper fedprox; /* FedProx (fedprox.*)              */
    pflref_fedrecon_hyper fedrecon; /* FedRecon (fedrecon.*)             */
    pflref_fedamp_hyper fedamp; /* FedAMP (fedamp.*)                      */
    pflref_fedproto_hyper fedproto; /* FedProto (fedproto.*)             */
    pflref_fedrod_hyper fedrod; /* FedRoD (fedrod.*)                      */
    pflref_apple_hyper apple;  /* APPLE (apple.*)                        */
    pflref_fedala_hyper fedala; /* FedALA (fedala.*)                      */
    pflref_pfl_ft_hyper pfl_ft; /* pfl.finetune_start, pfl.finetune_lr */
    pflref_fedpac_hyper fedpac; /* FedPAC (fedpac.*)                      */
    int bn_aggregate;          /* pflref_bn_aggregate (bn.aggregate)     */
    int ifca_estimate_mode;    /* pflref_ifca_estimate_mode              */
#endif
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

/* ---- what diagnose reads from the registry (ref/engine/params_links.c;
 * docs/cli.md, "diagnose") ---- */
/* The code a switch value reproduces, as an algorithm page names it. */
typedef struct {
    const char *algorithm;    /* "" for every algorithm                    */
    const char *name;         /* the switch's spec key                     */
    const char *value;
    const char *source;
} pflref_value_source;
const pflref_value_source *pflref_value_sources(size_t *count);
/* The source of value `value` of switch `name` for algorithm alg: "the
 * paper" for the paper's value, the table's entry, else the source of a
 * preset of alg that sets it; NULL when the registry names no code. */
const char *pflref_param_value_source(const char *alg, const char *name,
                                      const char *value);
/* A parameter whose change needs another's to change anything: when
 * `name` leaves its paper value, `needs` is tried with each of `values`
 * (space-separated) too. */
typedef struct {
    const char *name;
    const char *needs;
    const char *values;
    const char *why;
} pflref_param_link;
const pflref_param_link *pflref_param_links(size_t *count);

#ifdef __cplusplus
}
#endif
#endif
