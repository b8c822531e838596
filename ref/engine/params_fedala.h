/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_fedala.h: FedALA's rows of the registry of
 * hyperparameters and switches (ref/engine/params.c includes it once and
 * places FEDALA_PARAMS at the end of its table).  FedALA: Zhang et al.,
 * AAAI 2023, arXiv 2212.01197v4, Alg. 1; ref/algorithms/fedala.c.  Value
 * names in the order of the enums of include/pflref/hyper_personal.h, the
 * paper's reading first. */
#ifndef PFLREF_PARAMS_FEDALA_H
#define PFLREF_PARAMS_FEDALA_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const fedala_skip_values[] = {"first_round", "sum_first",
                                                 NULL};
static const char *const fedala_p_unit_values[] = {"layers", "tensors", NULL};
static const char *const fedala_ala_clients_values[] = {"participants", "all",
                                                        NULL};
static const char *const fedala_start_values[] = {"round2", "own", NULL};
static const char *const fedala_ala_mode_values[] = {"train", "pfllib",
                                                     NULL};

#define FEDALA_PARAMS \
    {"eta", "fedala", "fedala", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "α", \
     "FedALA's local learning rate (the paper's α: Alg. 1's local training " \
     "from Θ̂_i)"}, \
    {"fedala.eta", "fedala", "fedala", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedala.eta), NAN, 0.0, 1, NULL, "η", \
     "FedALA's weight learning rate: W_i ← clip_[0,1](W_i − η ∇_{W_i} " \
     "L(Θ̂_i; D_i^s)) (Eq. (5), Alg. 1 l. 10, l. 13)"}, \
    {"fedala.s", "fedala", "fedala", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedala.s), NAN, 0.0, 1, NULL, "s", \
     "FedALA's percentage of D_i the weights learn on: |D_i^s| = ⌊s n_i / " \
     "100⌋ (in (0, 100]; the sample is the round's personal lists)"}, \
    {"fedala.p", "fedala", "fedala", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, fedala.p), NAN, 0.0, 0, NULL, "p", \
     "FedALA's range: the top p layers (fedala.p_unit) take Θ_i + (Θ − " \
     "Θ_i) ⊙ W_i, the lower ones Θ"}, \
    {"fedala.threshold", "fedala", "", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedala.threshold), 0.1, 0.0, 1, NULL, "", \
     "FedALA's start phase stops when the std of the last k recorded " \
     "losses is below this (ALA.py:19,150: 0.1)"}, \
    {"fedala.k", "fedala", "", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, fedala.k), 10.0, 1.0, 0, NULL, "k", \
     "FedALA's window of recorded losses the start phase's std is taken " \
     "over, after more than k passes (ALA.py:20,150 num_pre_loss: 10)"}, \
    {"fedala.max_epochs", "fedala", "", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, fedala.max_epochs), 1000.0, 1.0, 0, NULL, "", \
     "FedALA's cap on the start phase's passes over D_i^s (the code has " \
     "none: a reference must end)"}, \
    {"fedala.skip", "fedala", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedala.skip), 0.0, 0.0, 0, fedala_skip_values, \
     "", "when ALA does nothing: in the first round (Θ_i = Θ = Θ⁰) | " \
     "whenever the first block's Σ(Θ − Θ_i) = 0 (ALA.py:82, a sum: the " \
     "lower layers keep Θ_i and the start phase waits)"}, \
    {"fedala.p_unit", "fedala", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedala.p_unit), 0.0, 0.0, 0, \
     fedala_p_unit_values, "", \
     "what p counts from the output: layers (weight and bias together) | " \
     "parameter tensors, 0 = all (ALA.py:86,95 params[-layer_idx:])"}, \
    {"fedala.ala_clients", "fedala", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedala.ala_clients), 0.0, 0.0, 0, \
     fedala_ala_clients_values, "", \
     "which clients run ALA each round: the participants (Alg. 1 l. 6-15) " \
     "| every client, before the round's training, a client outside the " \
     "round keeping Θ̂_i as its Θ_i (PFLlib serverala.py:73-74 " \
     "send_models; the round's personal lists then hold every client's " \
     "D_i^s, in id order)"}, \
    {"fedala.start", "fedala", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedala.start), 0.0, 0.0, 0, \
     fedala_start_values, "", \
     "when a client's W_i learns until convergence: in the round t = 2 " \
     "only, one pass in later rounds (Alg. 1 l. 8, l. 12) | in the " \
     "client's first ALA, whatever the round (TsingZ0/FedALA ALA.py:52, " \
     ":155: each client's own start_phase flag)"}, \
    {"fedala.ala_mode", "fedala", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedala.ala_mode), 0.0, 0.0, 0, \
     fedala_ala_mode_values, "", \
     "the mode ALA's weight-learning passes run in: training mode, batch " \
     "normalisation on each batch's statistics | the mode PFLlib leaves " \
     "the client's model in: evaluation mode, on Θ_i's own running " \
     "statistics, not moved, for a client evaluated since it last trained " \
     "(fedala.eval_gap = 1: that did not train in the previous round; " \
     "TsingZ0/PFLlib d832e76f6a23 servers/" \
     "serverala.py:26-31 evaluate() after send_models; clients/" \
     "clientbase.py:84, :126 model.eval(); clients/clientala.py:23 " \
     "model.train(); utils/ALA.py:91 deepcopy keeps the mode)"}, \
    {"fedala.eval_gap", "fedala", "", PFLREF_PARAM_INT, \
     offsetof(pflref_hyper, fedala.eval_gap), 1.0, 1.0, 0, NULL, "", \
     "under fedala.ala_mode = pfllib, PFLlib's -eg: the rounds 0, g, 2g, " \
     "... evaluate every client after send_models, so a client's passes " \
     "run in evaluation mode when an evaluation came after its last " \
     "training (TsingZ0/PFLlib d832e76f6a23 servers/serverala.py:28 i % " \
     "eval_gap == 0; main.py:420 default 1)"},

#endif
