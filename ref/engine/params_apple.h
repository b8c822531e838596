/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_apple.h: APPLE's rows of the registry of
 * hyperparameters and switches (ref/engine/params.c includes it once and
 * places APPLE_PARAMS at the end of its table).  APPLE: Luo and Wu, IJCAI
 * 2022, arXiv 2110.08394v3, Alg. 1; ref/algorithms/apple.c.  Value names
 * in the order of the enums of include/pflref/hyper_personal.h, the
 * paper's reading first. */
#ifndef PFLREF_PARAMS_APPLE_H
#define PFLREF_PARAMS_APPLE_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const apple_scheduler_values[] = {"cosine",
                                                     "exponential", NULL};
static const char *const apple_prox_values[] = {"half", "full", NULL};
static const char *const apple_p_init_values[] = {"samples", "uniform",
                                                  NULL};
static const char *const apple_order_values[] = {"joint", "core_first",
                                                 NULL};
static const char *const apple_p_grad_values[] = {"inner", "block_mean",
                                                  NULL};
static const char *const apple_core_lr_values[] = {"eta", "n_eta", NULL};
static const char *const apple_lambda_round_values[] = {"current",
                                                        "previous", NULL};
static const char *const apple_upload_values[] = {"core", "mixture", NULL};
static const char *const apple_peers_values[] = {"snapshot", "sequential",
                                                 NULL};
static const char *const apple_stale_values[] = {"last_download", "initial",
                                                 NULL};

/* The rows, comma-terminated: η, η_p (required, > 0), μ (required, ≥ 0),
 * L (required, ≥ 1), then the switches. */
#define APPLE_PARAMS \
    {"eta", "apple", "apple", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η", \
     "APPLE's step size of the core model w_i (Alg. 1 l. 9)"}, \
    {"eta_p", "apple", "apple", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, eta_p), NAN, 0.0, 1, NULL, "η_p", \
     "APPLE's step size of the directed relationship vector p_i (Alg. 1 " \
     "l. 10)"}, \
    {"apple.mu", "apple", "apple", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, apple.mu), NAN, 0.0, 0, NULL, "μ", \
     "APPLE's weight of the proximal term λ(r) (μ/2)‖p_i − p_0‖² (0: " \
     "none)"}, \
    {"apple.L", "apple", "apple", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, apple.L), NAN, 1.0, 0, NULL, "L", \
     "APPLE's loss scheduler: λ(r) decays over the rounds r < L and is 0 " \
     "from round L on"}, \
    {"apple.scheduler", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.scheduler), 0.0, 0.0, 0, \
     apple_scheduler_values, "", \
     "λ(r) for r < L: (cos(rπ/L) + 1)/2 | 0.001^{r/L} (the authors' " \
     "default, utils/losses.py get_reg_coef)"}, \
    {"apple.prox", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.prox), 0.0, 0.0, 0, apple_prox_values, \
     "", "the proximal term λ(r) (μ/2)‖p_i − p_0‖² | λ(r) μ ‖p_i − p_0‖² " \
     "(the authors' utils/losses.py reg_loss)"}, \
    {"apple.p_init", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.p_init), 0.0, 0.0, 0, \
     apple_p_init_values, "", \
     "p_i's start: p_0 = (n_j / Σ n_k)_j | (1/N)_j (PFLlib " \
     "clientapple.py:22)"}, \
    {"apple.order", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.order), 0.0, 0.0, 0, apple_order_values, \
     "", "w_i and p_i step from one point | w_i first, then p_ii's " \
     "gradient with the new w_i (PFLlib clientapple.py:55-66)"}, \
    {"apple.p_grad", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.p_grad), 0.0, 0.0, 0, \
     apple_p_grad_values, "", \
     "∂ℓ/∂p_ij = ⟨w_j, ∇ℓ(w_p)⟩ | the mean over the blocks of each " \
     "block's mean of w_j ⊙ ∇ℓ(w_p) (PFLlib clientapple.py:58-64)"}, \
    {"apple.core_lr", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.core_lr), 0.0, 0.0, 0, \
     apple_core_lr_values, "", \
     "the core's step size: η | N η (PFLlib clientapple.py:18)"}, \
    {"apple.lambda_round", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.lambda_round), 0.0, 0.0, 0, \
     apple_lambda_round_values, "", \
     "round r's scheduler value: λ(r) | λ(r − 1), and 1 in round 0 " \
     "(PFLlib clientapple.py:15, :68-71)"}, \
    {"apple.upload", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.upload), 0.0, 0.0, 0, apple_upload_values, \
     "", "the core carried to the next round: the stepped w_i | the last " \
     "step's mixture w_p^(i), also the model evaluated (PFLlib " \
     "clientapple.py:77)"}, \
    {"apple.peers", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.peers), 0.0, 0.0, 0, apple_peers_values, \
     "", "the downloads: the cores at the round's start | the stepped " \
     "cores of the participants that trained before, in ascending id " \
     "(PFLlib serverapple.py:46-47, :84; clientapple.py:55-56, :74-75)"}, \
    {"apple.M", "apple", "", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, apple.M), NAN, 0.0, 0, NULL, "M", \
     "APPLE's limited-bandwidth downloads: the other clients' cores a " \
     "participant downloads in a round whose schedule lists them (the " \
     "round's peers, M ids each, the authors' get_download_which drawn as " \
     "data; ljaiverson/pFL-APPLE utils/apple.py:18-76, utils/utils.py:40 " \
     "--limit_downloaded_models); unset: every core every round"}, \
    {"apple.stale", "apple", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, apple.stale), 0.0, 0.0, 0, apple_stale_values, \
     "", "a core a participant did not download this round: its copy from " \
     "its last download of that core (ljaiverson/pFL-APPLE " \
     "utils/apple.py:34-37 skips it, the client's ClientNet keeps it) | " \
     "the initial core w⁰"},

#endif
