/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/hyper_personal.h: the hyperparameters and variant switches of
 * the personalised methods PFLlib users bring (FedAMP, FedProto, ...),
 * members of pflref_hyper (pflref/hyper.h, which includes this header).
 * Value 0 of every switch is the paper's reading.
 */
#ifndef PFLREF_HYPER_PERSONAL_H
#define PFLREF_HYPER_PERSONAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FedFomo: the mode of the validation-loss passes, member val_mode of
 * pflref_fedfomo_hyper (pflref/hyper.h); hidden from Frama-C as that
 * member is: no proved file reads it. */
#ifndef __FRAMAC__
typedef enum {
    PFLREF_FEDFOMO_VAL_MODE_TRAIN = 0, /* L_i's passes in training mode
                                          (PFLlib clientfomo.py:139-151)  */
    PFLREF_FEDFOMO_VAL_MODE_EVAL = 1   /* eval(): BN on r_μ, r_v, no
                                          dropout mask (NVlabs
                                          federation.py:163-166)          */
} pflref_fedfomo_val_mode;
#endif

/* IFCA: the mode of the cluster estimate's passes F_i(θ_j), member
 * ifca_estimate_mode of pflref_hyper (pflref/hyper.h; hidden from Frama-C
 * there: ifca.c's proved functions do not read it, only
 * ref/algorithms/ifca_estimate.c does). */
#ifndef __FRAMAC__
typedef enum {
    PFLREF_IFCA_ESTIMATE_TRAIN = 0, /* training-mode loss passes: BN on the
                                       set's statistics, a dropout mask
                                       per pass (jichan3751/ifca never
                                       calls eval(): train_cluster_mnist.py
                                       :384-392)                          */
    PFLREF_IFCA_ESTIMATE_EVAL = 1   /* eval() and no_grad: BN on r_μ, r_v,
                                       dropout the identity, no mask
                                       (Gerid/FedDCA clientifca.py:56-61) */
} pflref_ifca_estimate_mode;
#endif

/* FedAlt and FedSim (ref/algorithms/fedalt.c, fedalt_ft.c): where and with
 * what step a device's final fine-tuning starts, for FedBABU as
 * TsingZ0/PFLlib d832e76f6a23 runs it (serverbabu.py, train, calls every
 * client's fine_tune() after the last round without sending the final
 * model; clientbabu.py, fine_tune, steps its own optimizer). */
typedef enum {
    PFLREF_PFL_FT_START_GLOBAL = 0,    /* from (u^(T), v_i^(T))             */
    PFLREF_PFL_FT_START_LAST_LOCAL = 1 /* from the device's own last model:
                                          trained in round T−1, or
                                          (u^(T−1), v_i) received there    */
} pflref_pfl_finetune_start;
typedef enum {
    PFLREF_PFL_FT_LR_CONSTANT = 0,     /* η_ft                              */
    PFLREF_PFL_FT_LR_DECAYED = 1       /* η_ft c, c the decay its client's
                                          scheduler reached (lr.*)         */
} pflref_pfl_finetune_lr;
typedef struct {
    int start;                 /* pflref_pfl_finetune_start                */
    int lr;                    /* pflref_pfl_finetune_lr                   */
} pflref_pfl_ft_hyper;

/* FedAMP (Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, AAAI 2021, arXiv
 * 2007.03797v5, Alg. 1; ref/algorithms/fedamp.c): α_k (a constant, as in
 * the paper's experiments), λ, σ of A(x) = 1 − e^{−x/σ}, and the switches
 * (value 0 = the paper; the others TsingZ0/PFLlib d832e76f6a23,
 * system/flcore/clients/clientamp.py, servers/serveramp.py). */
typedef enum {
    PFLREF_FEDAMP_PEERS_ALL = 0,      /* u_i^k over every client's latest
                                         w_j (the paper: all clients take
                                         part in every round)             */
    PFLREF_FEDAMP_PEERS_PREVIOUS = 1  /* only the previous round's
                                         participants' w_j (PFLlib
                                         serveramp.py send_models iterates
                                         self.uploaded_models)            */
} pflref_fedamp_peers;
typedef enum {
    PFLREF_FEDAMP_START_MESSAGE = 0,  /* the local solve starts at u_i^k  */
    PFLREF_FEDAMP_START_OWN = 1       /* at w_i^{k−1} (PFLlib clientamp.py
                                         train() steps self.model, which
                                         set_parameters leaves alone)     */
} pflref_fedamp_start;
typedef enum {
    PFLREF_FEDAMP_PROX_SQUARED = 0,   /* (λ/(2α_k))‖w − u_i^k‖², gradient
                                         (λ/α_k)(w − u_i^k)               */
    PFLREF_FEDAMP_PROX_DETACHED = 1   /* no gradient: PFLlib clientamp.py
                                         train() builds the term from
                                         p.data (detached), so the steps
                                         are plain SGD                    */
} pflref_fedamp_prox;
typedef struct {
    double alpha_k;            /* α_k > 0: the message-passing step      */
    double lambda;             /* λ ≥ 0: the attention term's weight     */
    double sigma;              /* σ > 0: A(x) = 1 − e^{−x/σ}             */
    int peers;                 /* pflref_fedamp_peers                    */
    int start;                 /* pflref_fedamp_start                    */
    int prox;                  /* pflref_fedamp_prox                     */
} pflref_fedamp_hyper;

/* FedProto (Tan et al., AAAI 2022, arXiv 2105.00243, Alg. 1): the weight
 * λ of the prototype distance and three switches (ref/algorithms/
 * fedproto.c, docs/algorithms/fedproto.md).  Value 0 is the paper's. */
typedef enum {
    PFLREF_FEDPROTO_DISTANCE_SQUARED_L2 = 0, /* R(f, C) = ‖f − C‖² (Eq. 6)  */
    PFLREF_FEDPROTO_DISTANCE_MSE = 1         /* R(f, C) = ‖f − C‖²/h, torch
                                                nn.MSELoss (yuetan031/
                                                FedProto lib/update.py
                                                update_weights_het; PFLlib
                                                clientproto.py train)       */
} pflref_fedproto_distance;
typedef enum {
    PFLREF_FEDPROTO_PROTOS_TRAINED = 0, /* C_i^(j) from the trained model
                                           over D_{i,j} (Eq. 4)            */
    PFLREF_FEDPROTO_PROTOS_DURING_TRAINING = 1 /* the mean of every f(x)
                                           of the local steps' batches, at
                                           the iterate before each step
                                           (update.py update_weights_het
                                           with utils.py agg_func; PFLlib
                                           clientproto.py train)           */
} pflref_fedproto_protos;
typedef enum {
    PFLREF_FEDPROTO_WEIGHTS_CLASS_COUNTS = 0, /* C̄^(j) = Σ (|D_{i,j}|/N_j)
                                                 C_i^(j) (Eq. 5)            */
    PFLREF_FEDPROTO_WEIGHTS_UNIFORM = 1       /* the plain mean over N_j
                                                 (utils.py
                                                 proto_aggregation; PFLlib
                                                 serverproto.py)            */
} pflref_fedproto_weights;
typedef struct {
    double lambda;             /* λ ≥ 0: the weight of R                   */
    int distance;              /* pflref_fedproto_distance                 */
    int client_protos;         /* pflref_fedproto_protos                   */
    int weights;               /* pflref_fedproto_weights                  */
} pflref_fedproto_hyper;

/* FedRoD (Chen and Chao, ICLR 2022, arXiv 2107.00778, Alg. 1, the linear
 * personalised head): two switches (ref/algorithms/fedrod.c,
 * docs/algorithms/fedrod.md).  Value 0 is pflref's reading of the paper. */
typedef enum {
    PFLREF_FEDROD_FEATURES_AFTER = 0,  /* the personal step's features and
                                          z_G at the iterate after the
                                          generic step (the box's lines in
                                          order)                           */
    PFLREF_FEDROD_FEATURES_BEFORE = 1  /* at the iterate before it (PFLlib
                                          clientrod.py train(): rep, out_g
                                          computed before optimizer.step(),
                                          then detached)                   */
} pflref_fedrod_features;
typedef enum {
    PFLREF_FEDROD_PHI_P0_ZERO = 0,     /* φ_P⁰ = 0: the personalised
                                          output starts as z_G             */
    PFLREF_FEDROD_PHI_P0_GENERIC = 1   /* φ_P⁰ = φ_G⁰, w⁰'s head (PFLlib
                                          clientrod.py __init__:
                                          copy.deepcopy(self.model.head))  */
} pflref_fedrod_phi_p0;
typedef struct {
    int features;              /* pflref_fedrod_features                  */
    int phi_p0;                /* pflref_fedrod_phi_p0                    */
    const double *counts;      /* N×k: N_{i,c} as given (the spec's
                                  init.class_counts, client 0 first), or
                                  NULL: counted over client i's training
                                  data (the paper)                        */
} pflref_fedrod_hyper;
/* APPLE (Luo, Wu, IJCAI 2022, arXiv 2110.08394v3, Alg. 1;
 * ref/algorithms/apple.c, docs/algorithms/apple.md): the weight μ of the
 * proximal term on p_i, the scheduler's length L (rounds), and the
 * switches (value 0 = the paper; the others the authors' code,
 * ljaiverson/pFL-APPLE 8078196731b5, and TsingZ0/PFLlib d832e76f6a23,
 * system/flcore/clients/clientapple.py). */
typedef enum {
    PFLREF_APPLE_SCHEDULER_COSINE = 0,     /* λ(r) = (cos(rπ/L) + 1)/2 for
                                              r < L, 0 after              */
    PFLREF_APPLE_SCHEDULER_EXPONENTIAL = 1 /* λ(r) = ε^{r/L}, ε = 0.001,
                                              for r < L, 0 after (the
                                              authors' default:
                                              utils/losses.py:18-21,
                                              utils/utils.py:37)          */
} pflref_apple_scheduler;
typedef enum {
    PFLREF_APPLE_PROX_HALF = 0,  /* λ(r) (μ/2)‖p_i − p_0‖², gradient
                                    λ(r) μ (p_i − p_0)                    */
    PFLREF_APPLE_PROX_FULL = 1   /* λ(r) μ ‖p_i − p_0‖², gradient
                                    2 λ(r) μ (p_i − p_0) (the authors'
                                    utils/losses.py:4-6 reg_loss)         */
} pflref_apple_prox;
typedef enum {
    PFLREF_APPLE_P_INIT_SAMPLES = 0, /* p_i⁰ = p_0 = (n_j / Σ_k n_k)_j    */
    PFLREF_APPLE_P_INIT_UNIFORM = 1  /* p_i⁰ = (1/N)_j (PFLlib
                                        clientapple.py:22); p_0 stays
                                        the sample shares (serverapple.py
                                        :26-32)                           */
} pflref_apple_p_init;
typedef enum {
    PFLREF_APPLE_ORDER_JOINT = 0,     /* w_i and p_i step from the same
                                         point (one backward pass, one
                                         optimizer step)                  */
    PFLREF_APPLE_ORDER_CORE_FIRST = 1 /* w_i steps first; ∂/∂p_ii then
                                         reads the new w_i (PFLlib
                                         clientapple.py:55-66)            */
} pflref_apple_order;
typedef enum {
    PFLREF_APPLE_P_GRAD_INNER = 0,     /* ∂ℓ/∂p_ij = ⟨w_j, ∇ℓ(w_p)⟩       */
    PFLREF_APPLE_P_GRAD_BLOCK_MEAN = 1 /* the mean over the parameter
                                          blocks of each block's mean of
                                          w_j ⊙ ∇ℓ(w_p) (PFLlib
                                          clientapple.py:58-64)           */
} pflref_apple_p_grad;
typedef enum {
    PFLREF_APPLE_CORE_LR_ETA = 0,     /* the core's step size η           */
    PFLREF_APPLE_CORE_LR_N_ETA = 1    /* N η (PFLlib clientapple.py:18)   */
} pflref_apple_core_lr;
typedef enum {
    PFLREF_APPLE_LAMBDA_ROUND_CURRENT = 0,  /* round r uses λ(r)          */
    PFLREF_APPLE_LAMBDA_ROUND_PREVIOUS = 1  /* round r uses λ(r − 1), round
                                               0 uses 1 (PFLlib
                                               clientapple.py:15, :68-71:
                                               λ is set after the round's
                                               training)                  */
} pflref_apple_lambda_round;
typedef enum {
    PFLREF_APPLE_UPLOAD_CORE = 0,    /* l. 11 uploads the stepped core w_i */
    PFLREF_APPLE_UPLOAD_MIXTURE = 1  /* the core carried to the next round
                                        is the last step's mixture w_p^(i)
                                        (PFLlib clientapple.py:77, model_c
                                        = copy of self.model), which is
                                        also the model evaluated          */
} pflref_apple_upload;
typedef enum {
    PFLREF_APPLE_PEERS_SNAPSHOT = 0,   /* every download is the core at the
                                          round's start                    */
    PFLREF_APPLE_PEERS_SEQUENTIAL = 1  /* the participants train in
                                          ascending id and a later one
                                          downloads the stepped cores of
                                          the earlier ones (PFLlib
                                          serverapple.py:46-47, :84;
                                          clientapple.py:55-56, :74-75)   */
} pflref_apple_peers;
typedef enum {
    PFLREF_APPLE_STALE_LAST_DOWNLOAD = 0, /* a core not downloaded this round
                                             is the client's copy from its
                                             last download of it
                                             (ljaiverson/pFL-APPLE
                                             utils/apple.py:34-37: the
                                             client's ClientNet keeps it) */
    PFLREF_APPLE_STALE_INITIAL = 1        /* it is the initial core w⁰     */
} pflref_apple_stale;
typedef struct {
    double mu;                 /* μ ≥ 0: the proximal term's weight      */
    size_t L;                  /* L ≥ 1: the scheduler's rounds          */
    int scheduler;             /* pflref_apple_scheduler                 */
    int prox;                  /* pflref_apple_prox                      */
    int p_init;                /* pflref_apple_p_init                    */
    int order;                 /* pflref_apple_order                     */
    int p_grad;                /* pflref_apple_p_grad                    */
    int core_lr;               /* pflref_apple_core_lr                   */
    int lambda_round;          /* pflref_apple_lambda_round              */
    int upload;                /* pflref_apple_upload                    */
    int peers;                 /* pflref_apple_peers                     */
    size_t M;                  /* the cores a participant downloads in a
                                  round whose schedule lists them (the
                                  round's "peers"), or PFLREF_INT_UNSET:
                                  every core, every round              */
    int stale;                 /* pflref_apple_stale                     */
} pflref_apple_hyper;
/* FedALA (Zhang, Hua, Wang, Song, Xue, Ma, Guan, AAAI 2023, arXiv
 * 2212.01197v4, Alg. 1 and the ALA module; ref/algorithms/fedala.c): the
 * weight learning rate η, the sampled percentage s, the range p, the
 * start phase's stopping rule (the std of the last k recorded losses below
 * the threshold, at most max_epochs passes) and the switches (value 0 =
 * the paper; the others TsingZ0/FedALA a7a9b21 system/utils/ALA.py, which
 * PFLlib's system/utils/ALA.py repeats). */
typedef enum {
    PFLREF_FEDALA_SKIP_FIRST_ROUND = 0, /* ALA from the second round on
                                           (Θ_i = Θ = Θ⁰ in the first)     */
    PFLREF_FEDALA_SKIP_SUM_FIRST = 1    /* ALA returns at once when the sum
                                           of the entries of the first
                                           block of Θ − Θ_i is 0 (ALA.py
                                           :82, a sum, not a norm)          */
} pflref_fedala_skip;
typedef enum {
    PFLREF_FEDALA_P_LAYERS = 0,  /* p counts layers from the output        */
    PFLREF_FEDALA_P_TENSORS = 1  /* p counts parameter tensors (weight and
                                    bias apart; 0 = all), ALA.py:86,95
                                    params[-layer_idx:]                    */
} pflref_fedala_p_unit;
typedef enum {
    PFLREF_FEDALA_ALA_PARTICIPANTS = 0, /* ALA on the round's participants
                                           (Alg. 1 l. 4-8)                  */
    PFLREF_FEDALA_ALA_ALL = 1           /* ALA on every client, before the
                                           round's training: a client
                                           outside the round takes Θ̂_i as
                                           its Θ_i (PFLlib serverala.py
                                           :73-74, TsingZ0/FedALA
                                           serverALA.py:93-94)              */
} pflref_fedala_ala_clients;
typedef enum {
    PFLREF_FEDALA_START_ROUND2 = 0, /* the start stage in the round t = 2
                                       (Alg. 1 l. 8: a client of I²), one
                                       pass in every later round (l. 12) */
    PFLREF_FEDALA_START_OWN = 1     /* the start stage in a client's first
                                       ALA, whatever the round (ALA.py:52,
                                       :155: each client's own start_phase
                                       flag)                              */
} pflref_fedala_start;
typedef enum {
    PFLREF_FEDALA_ALA_MODE_TRAIN = 0,  /* ALA's passes in training mode
                                          (batch normalisation on each
                                          batch's statistics)             */
    PFLREF_FEDALA_ALA_MODE_PFLLIB = 1  /* in the mode PFLlib leaves the
                                          model in (eval_gap = 1): from
                                          the second round on, evaluation
                                          mode for a client that did not
                                          train in the previous round
                                          (clientbase.py:84, :126 eval()
                                          in evaluate() after send_models;
                                          clientala.py:23 train()),
                                          training mode otherwise        */
} pflref_fedala_ala_mode;
typedef struct {
    double eta;                /* η > 0: W_i's learning rate             */
    double s;                  /* s in (0, 100]: the percentage of D_i   */
    size_t p;                  /* p: the range of ALA (top layers)       */
    double threshold;          /* > 0: the start phase stops when the
                                  std of the last k losses is below it   */
    size_t k;                  /* k ≥ 1: the losses in that window       */
    size_t max_epochs;         /* ≥ 1: the start phase's cap on passes   */
    int skip;                  /* pflref_fedala_skip                     */
    int p_unit;                /* pflref_fedala_p_unit                   */
    int ala_clients;           /* pflref_fedala_ala_clients              */
    int start;                 /* pflref_fedala_start                    */
    int ala_mode;              /* pflref_fedala_ala_mode                 */
    size_t eval_gap;           /* ≥ 1: PFLlib's -eg under ala_mode =
                                  pfllib (the rounds 0, g, 2g, …
                                  evaluate every client)                 */
} pflref_fedala_hyper;

/* FedPAC (Xu, Tong, Huang, ICLR 2023, arXiv 2306.11867, Alg. 1;
 * ref/algorithms/fedpac.c): the weight λ of the feature alignment, the
 * classifier's step size η_φ and its steps τ_φ (the first τ_φ batches of a
 * participation; the body takes the rest with η), and the switches (value
 * 0 = pflref's reading of the paper). */
typedef enum {
    PFLREF_FEDPAC_DISTANCE_SQUARED_L2 = 0, /* R = ‖f_θ(x) − c_y‖²          */
    PFLREF_FEDPAC_DISTANCE_MSE = 1         /* R = ‖f_θ(x) − c_y‖²/d, torch's
                                              nn.MSELoss (JianXu95/FedPAC
                                              methods/fedpac.py:34, :242;
                                              PFLlib clientpac.py:78)        */
} pflref_fedpac_distance;
typedef enum {
    PFLREF_FEDPAC_ALPHA_EXACT = 0,        /* α_i the QP's minimiser         */
    PFLREF_FEDPAC_ALPHA_RENORMALISED = 1, /* every α_ij ≤ ε set to 0, then
                                             α_i divided by its sum
                                             (JianXu95/FedPAC tools.py:140,
                                             :84-90)                        */
    PFLREF_FEDPAC_ALPHA_RAW = 2           /* every α_ij ≤ ε set to 0, the
                                             rest as they are (PFLlib
                                             serverpac.py:242, :171-173)    */
} pflref_fedpac_alpha_small;
typedef enum {
    PFLREF_FEDPAC_MISSING_NONE = 0,      /* a class without a centroid adds
                                            no alignment term               */
    PFLREF_FEDPAC_MISSING_OWN_START = 1  /* from round 1 on, its samples
                                            align to the client's own
                                            centroid at θ^(t) (JianXu95/
                                            FedPAC methods/fedpac.py:177,
                                            :233-241)                       */
} pflref_fedpac_missing;
typedef enum {
    PFLREF_FEDPAC_CENTROIDS_CLASS_COUNTS = 0, /* c_k weighted by n_{i,k}    */
    PFLREF_FEDPAC_CENTROIDS_UNIFORM = 1       /* the plain mean (PFLlib
                                                 serverpac.py:178-193)      */
} pflref_fedpac_centroid_weights;
typedef struct {
    double lambda;             /* λ ≥ 0: the feature alignment's weight  */
    double eta_phi;            /* η_φ > 0: the classifier's step size    */
    size_t tau_phi;            /* τ_φ ≥ 1: the classifier's steps        */
    double alpha_eps;          /* ε > 0: the threshold of alpha_small    */
    int distance;              /* pflref_fedpac_distance                 */
    int alpha_small;           /* pflref_fedpac_alpha_small              */
    int missing;               /* pflref_fedpac_missing                  */
    int centroid_weights;      /* pflref_fedpac_centroid_weights         */
} pflref_fedpac_hyper;

/* Per-FedAvg (ref/algorithms/perfedavg.c): what the client optimizer
 * steps (perfedavg.opt_steps), a member of pflref_perfedavg_hyper. */
typedef enum {
    PFLREF_PERFEDAVG_OPT_META = 0, /* the client optimizer (opt.*) steps the
                                      meta step alone; w̃ = w − α g stays
                                      the plain step of F's definition     */
    PFLREF_PERFEDAVG_OPT_BOTH = 1  /* one optimizer object and state steps
                                      the α step and the β step (PFLlib
                                      clientperavg.py:51 and :72)          */
} pflref_perfedavg_opt_steps;

#ifdef __cplusplus
}
#endif
#endif
