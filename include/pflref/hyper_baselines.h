/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/hyper_baselines.h: the hyperparameters and variant switches of
 * the global-model baselines every pFL paper runs (FedProx, SCAFFOLD,
 * FedDyn, MOON, FedRecon), members of pflref_hyper (pflref/hyper.h, which
 * includes this header).  Value 0 of every switch is the paper's reading.
 */
#ifndef PFLREF_HYPER_BASELINES_H
#define PFLREF_HYPER_BASELINES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MOON (Li, He, Song, CVPR 2021, arXiv 2103.16257v1, Alg. 1): the
 * contrastive weight μ and the temperature τ (ref/algorithms/moon.c). */
typedef enum {
    /* z_glob, z_prev from evaluation passes of w^t, w_i^{t−1} (batch
     * normalisation on their running statistics: R_w(x) a function of x;
     * QinbinLi/MOON main.py:486 global_model.eval(), :540, :547 the
     * previous nets' eval()) */
    PFLREF_MOON_PASSES_EVAL = 0,
    /* training passes (the batch's statistics; PFLlib clientmoon.py:43-44
     * on models left in train() mode, :17, :53, serverbase.py:141) */
    PFLREF_MOON_PASSES_TRAIN
} pflref_moon_passes;

typedef struct {
    double mu;                 /* μ ≥ 0: the weight of ℓ_con               */
    double tau;                /* τ > 0: the temperature                   */
    pflref_moon_passes passes; /* moon.passes: z_glob's and z_prev's mode  */
} pflref_moon_hyper;

/* FedDyn (Acar et al., ICLR 2021, arXiv 2111.04263v2, Alg. 1) switches;
 * ref/algorithms/feddyn.c and docs/algorithms/feddyn.md. */
typedef enum {
    PFLREF_FEDDYN_ALPHA_K_UNIFORM = 0,     /* α on every device (the box)  */
    PFLREF_FEDDYN_ALPHA_K_SIZE_SCALED = 1  /* α_k = α / (n_k m / Σ_j n_j) in
                                              l. 5 and l. 6
                                              (alpemreacar/FedDyn
                                              utils_methods.py:296-297, 387) */
} pflref_feddyn_alpha_k;
typedef enum {
    PFLREF_FEDDYN_PROX_SQUARED = 0,    /* (α/2)‖θ − θ^{t−1}‖² (the box)    */
    PFLREF_FEDDYN_PROX_NORM_HALF = 1   /* (α/2)‖θ − θ^{t−1}‖₂ (PFLlib
                                          clientdyn.py:45)                 */
} pflref_feddyn_prox;
typedef enum {
    PFLREF_FEDDYN_H_SUM_DIFFERENCES = 0, /* l. 10: Σ_{k∈P_t}(θ_k^t − θ^{t−1}) */
    PFLREF_FEDDYN_H_SUM_LITERAL = 1      /* (Σ_{k∈P_t} θ_k^t) − θ^{t−1}, the
                                            printed parenthesis (FedLab's
                                            contrib/algorithm/feddyn.py)  */
} pflref_feddyn_h_sum;
typedef struct {
    double alpha;              /* α > 0: the dynamic regulariser's weight  */
    int alpha_k;               /* pflref_feddyn_alpha_k                    */
    int prox;                  /* pflref_feddyn_prox                       */
    int h_sum;                 /* pflref_feddyn_h_sum                      */
} pflref_feddyn_hyper;
/* SCAFFOLD (Karimireddy et al., ICML 2020, arXiv 1910.06378v4, Alg. 1)
 * switches (ref/algorithms/scaffold.c). */
typedef enum {
    PFLREF_SCAFFOLD_OPTION_II = 0, /* l. 12 (ii): c_i⁺ ← c_i − c +
                                      (x − y_i)/(K η_l) (PFLlib's only)    */
    PFLREF_SCAFFOLD_OPTION_I = 1   /* l. 12 (i): c_i⁺ ← g_i(x), the whole
                                      training set at x                    */
} pflref_scaffold_option;
typedef enum {
    PFLREF_SCAFFOLD_C_LR_ROUND = 0,  /* option II's η_l: the steps' own η  */
    PFLREF_SCAFFOLD_C_LR_INITIAL = 1 /* the undecayed η (TsingZ0/PFLlib
                                        clientscaffold.py:73)              */
} pflref_scaffold_c_lr;
/* x's r_μ, r_v under bn.aggregate = parameters_only (scaffold.bn_global) */
typedef enum {
    PFLREF_SCAFFOLD_BN_GLOBAL_FIRST = 0,   /* the first uploader's (FedAvg's
                                              serverbase.py:138-150)       */
    PFLREF_SCAFFOLD_BN_GLOBAL_PREVIOUS = 1 /* the previous x's, so w⁰'s
                                              (PFLlib serverscaffold.py:
                                              124-129)                     */
} pflref_scaffold_bn_global;

typedef struct {
    double eta_g;              /* η_g > 0: the global step size            */
    int option;                /* pflref_scaffold_option                   */
    int c_lr;                  /* pflref_scaffold_c_lr                     */
    int bn_global;             /* pflref_scaffold_bn_global                */
    const double *c0;          /* P: the initial c (l. 1; the spec's
                                  init.c, borrowed), or NULL: (1/N) Σ_i
                                  c_i⁰, 0 when c_i0 is NULL too           */
    const double *c_i0;        /* N×P: the initial c_i (l. 2; init.c_i,
                                  borrowed), or NULL: every c_i⁰ = 0      */
} pflref_scaffold_hyper;

/* FedProx (Li et al., MLSys 2020, Alg. 2): the proximal weight μ and who
 * is aggregated with which weight (fedprox.sampling). */
typedef enum {
    PFLREF_FEDPROX_SAMPLING_PAPER = 0,   /* Alg. 2: K draws with replacement,
                                            P(k) = n_k/n (the round's
                                            "draws"), w^{t+1} = (1/K) Σ over
                                            the draws: weight c_k/K          */
    PFLREF_FEDPROX_SAMPLING_UNIFORM_WEIGHTED = 1 /* the schedule's sample
                                            without replacement, weights
                                            n_k/Σ_{S_t} n_j (litian96/FedProx
                                            fedbase.py select_clients and
                                            aggregate; PFLlib serverbase.py) */
} pflref_fedprox_sampling;
typedef struct {
    double mu;                 /* μ ≥ 0: the proximal weight of h_k        */
    int sampling;              /* pflref_fedprox_sampling                  */
} pflref_fedprox_hyper;

/* FedRecon (Singhal et al., NeurIPS 2021, arXiv 2102.03448v6, Alg. 1)
 * switches; ref/algorithms/fedrecon.c, docs/algorithms/fedrecon.md. */
typedef enum {
    PFLREF_FEDRECON_INIT_GIVEN = 0, /* l_i ← l⁰ (the local entries of w⁰) at
                                       every visit: stateless clients (§3) */
    PFLREF_FEDRECON_INIT_LAST = 1   /* l_i ← the l_i client i reconstructed
                                       at its last visit (stateful)        */
} pflref_fedrecon_local_init;
typedef enum {
    PFLREF_FEDRECON_WEIGHTS_SAMPLES = 0,  /* n_i = |D_{i,q}| (Alg. 1)        */
    PFLREF_FEDRECON_WEIGHTS_UNIFORM = 1,  /* 1 (TFF ClientWeighting.UNIFORM) */
    PFLREF_FEDRECON_WEIGHTS_EXAMPLES = 2  /* the examples the update steps
                                             took, Σ_k |batch k| (TFF
                                             NUM_EXAMPLES: num_examples_sum
                                             of the post-reconstruction
                                             pass)                          */
} pflref_fedrecon_weights;
typedef enum {
    PFLREF_FEDRECON_QUERY_COMPLEMENT = 0, /* D_{i,q} = D_i ∖ D_{i,s}: the
                                             given support's complement
                                             (disjoint; TFF split_dataset =
                                             True)                         */
    PFLREF_FEDRECON_QUERY_WHOLE = 1       /* D_{i,s} = D_{i,q} = D_i (TFF's
                                             simple_dataset_split_fn)       */
} pflref_fedrecon_query;
typedef enum {
    PFLREF_FEDRECON_EVAL_RECONSTRUCT = 0, /* evaluation reconstructs l on
                                             D_{i,s} (schedule.post) from
                                             the final g (§3, Alg. 1's
                                             evaluation)                    */
    PFLREF_FEDRECON_EVAL_KEPT = 1         /* evaluates (g, l_i) as the last
                                             training visit left it         */
} pflref_fedrecon_eval;

typedef struct {
    double eta_r;              /* η_r: reconstruction step size on l       */
    double eta_u;              /* η_u: update step size on g               */
    double eta_s;              /* η_s: the server's step size              */
    int local_init;            /* pflref_fedrecon_local_init               */
    int weights;               /* pflref_fedrecon_weights                  */
    int query;                 /* pflref_fedrecon_query                    */
    int eval;                  /* pflref_fedrecon_eval                     */
    const size_t *support_off; /* N + 1 offsets into support_idx, or NULL
                                  (no support given): client i's D_{i,s}
                                  is support_idx[support_off[i] ..
                                  support_off[i+1] − 1] (the spec's
                                  init.support, borrowed)                  */
    const size_t *support_idx;
} pflref_fedrecon_hyper;

/* What FedAvg's server does with batch normalisation's buffers r_μ, r_v
 * (bn.aggregate, pflref_hyper's bn_aggregate; ref/algorithms/
 * fedavg_keep.c).  Apart from pflref_bn_hyper and hidden from Frama-C, as
 * pflref_hyper's members of unproved code are, so that the proved goals,
 * which hold pflref_hyper's definition, stay as they were. */
#ifndef __FRAMAC__
typedef enum {
    PFLREF_BN_AGGREGATE_AVERAGE = 0,   /* the whole w averaged, buffers too
                                          (a torch state_dict average)      */
    PFLREF_BN_AGGREGATE_PARAMETERS = 1 /* only parameters() averaged: each
                                          client keeps its own buffers, the
                                          global's are the first uploaded
                                          client's (PFLlib serverbase.py)   */
} pflref_bn_aggregate;
#endif

#ifdef __cplusplus
}
#endif
#endif
