/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_fedpac.h: FedPAC's rows of the registry of
 * hyperparameters and switches (ref/engine/params.c includes it once and
 * places FEDPAC_PARAMS in its table).  FedPAC: Xu, Tong, Huang, ICLR 2023,
 * arXiv 2306.11867, Alg. 1; ref/algorithms/fedpac.c.  Value names in the
 * order of the enums of include/pflref/hyper_personal.h, the paper's
 * reading first. */
#ifndef PFLREF_PARAMS_FEDPAC_H
#define PFLREF_PARAMS_FEDPAC_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const fedpac_distance_values[] = {"squared_l2", "mse",
                                                     NULL};
static const char *const fedpac_alpha_small_values[] = {
    "exact", "renormalised", "raw", NULL};
static const char *const fedpac_missing_values[] = {"none", "own_start",
                                                    NULL};
static const char *const fedpac_centroid_weights_values[] = {
    "class_counts", "uniform", NULL};

/* The rows, comma-terminated: η, λ, η_φ, τ_φ (required), ε, the
 * switches. */
#define FEDPAC_PARAMS \
    {"eta", "fedpac", "fedpac", PFLREF_PARAM_REAL,                          \
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",                   \
     "FedPAC's step size of the feature extractor θ (Alg. 1 l. 7)"},        \
    {"fedpac.lambda", "fedpac", "fedpac", PFLREF_PARAM_REAL,                \
     offsetof(pflref_hyper, fedpac.lambda), NAN, 0.0, 0, NULL, "λ",         \
     "FedPAC's weight of the feature alignment ‖f_θ(x) − c_y‖² in the "     \
     "body's loss (Alg. 1 l. 7)"},                                          \
    {"fedpac.eta_phi", "fedpac", "fedpac", PFLREF_PARAM_REAL,               \
     offsetof(pflref_hyper, fedpac.eta_phi), NAN, 0.0, 1, NULL, "η_φ",      \
     "FedPAC's step size of the classifier φ_i (Alg. 1 l. 6)"},             \
    {"fedpac.tau_phi", "fedpac", "fedpac", PFLREF_PARAM_INT,                \
     offsetof(pflref_hyper, fedpac.tau_phi), NAN, 1.0, 0, NULL, "τ_φ",      \
     "FedPAC's classifier steps: the first τ_φ batches of a participation " \
     "train φ_i (E_φ epochs), the rest θ (E_θ epochs)"},                    \
    {"fedpac.distance", "fedpac", "", PFLREF_PARAM_ENUM,                    \
     offsetof(pflref_hyper, fedpac.distance), 0.0, 0.0, 0,                  \
     fedpac_distance_values, "",                                            \
     "the alignment term: ‖f_θ(x) − c_y‖² | ‖f_θ(x) − c_y‖²/d, torch "      \
     "nn.MSELoss (JianXu95/FedPAC methods/fedpac.py:34, :242; PFLlib "      \
     "clientpac.py:16, :78)"},                                             \
    {"fedpac.alpha_eps", "fedpac", "", PFLREF_PARAM_REAL,                   \
     offsetof(pflref_hyper, fedpac.alpha_eps), 1e-3, 0.0, 1, NULL, "ε",     \
     "FedPAC's threshold of small classifier weights under "                \
     "fedpac.alpha_small = renormalised or raw: α_ij ≤ ε is set to 0 "       \
     "(JianXu95/FedPAC tools.py:133 eps = 1e-3)"},                          \
    {"fedpac.alpha_small", "fedpac", "", PFLREF_PARAM_ENUM,                 \
     offsetof(pflref_hyper, fedpac.alpha_small), 0.0, 0.0, 0,               \
     fedpac_alpha_small_values, "",                                         \
     "α_i: the QP's minimiser | its entries ≤ ε set to 0 and the rest "     \
     "divided by their sum (JianXu95/FedPAC tools.py:140, :84-90) | set "   \
     "to 0, the rest as they are (PFLlib serverpac.py:242, :171-173)"},     \
    {"fedpac.missing", "fedpac", "", PFLREF_PARAM_ENUM,                     \
     offsetof(pflref_hyper, fedpac.missing), 0.0, 0.0, 0,                   \
     fedpac_missing_values, "",                                             \
     "a sample whose class has no global centroid: no alignment term | "    \
     "from round 1 on, aligned to the client's own centroid at θ^(t) "      \
     "(JianXu95/FedPAC methods/fedpac.py:177, :233-241)"},                  \
    {"fedpac.centroid_weights", "fedpac", "", PFLREF_PARAM_ENUM,            \
     offsetof(pflref_hyper, fedpac.centroid_weights), 0.0, 0.0, 0,          \
     fedpac_centroid_weights_values, "",                                    \
     "c_k: weighted by the class counts n_{i,k} | the plain mean over the " \
     "clients holding k (PFLlib serverpac.py:178-193 proto_aggregation)"},

#endif
