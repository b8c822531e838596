/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/hyper_personal.h: the hyperparameters and variant switches of
 * the personalised methods PFLlib users bring (FedAMP, FedProto, ...),
 * members of pflref_hyper (pflref/hyper.h, which includes this header).
 * Value 0 of every switch is the paper's reading.
 */
#ifndef PFLREF_HYPER_PERSONAL_H
#define PFLREF_HYPER_PERSONAL_H

#ifdef __cplusplus
extern "C" {
#endif

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
} pflref_fedrod_hyper;

#ifdef __cplusplus
}
#endif
#endif
