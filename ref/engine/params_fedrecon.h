/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_fedrecon.h: FedRecon's rows of the registry of
 * hyperparameters and switches (ref/engine/params.c includes it once and
 * places FEDRECON_PARAMS at the end of its table).  FedRecon: Singhal et
 * al., NeurIPS 2021, arXiv 2102.03448v6, Alg. 1; ref/algorithms/
 * fedrecon.c.  Value names in the order of the enums of
 * include/pflref/hyper.h, the paper's reading first. */
#ifndef PFLREF_PARAMS_FEDRECON_H
#define PFLREF_PARAMS_FEDRECON_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const fedrecon_local_init_values[] = {"given", "last",
                                                         NULL};
static const char *const fedrecon_weights_values[] = {"samples", "uniform",
                                                      "examples", NULL};
static const char *const fedrecon_query_values[] = {"complement", "whole",
                                                    NULL};
static const char *const fedrecon_eval_values[] = {"reconstruct", "kept",
                                                   NULL};

/* The rows, comma-terminated: hyperparameters η_r, η_u, η_s (required,
 * > 0), then the switches. */
#define FEDRECON_PARAMS \
    {"fedrecon.eta_r", "fedrecon", "fedrecon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedrecon.eta_r), NAN, 0.0, 1, NULL, "η_r", \
     "reconstruction step size: k_r SGD steps on the local l over D_{i,s}"}, \
    {"fedrecon.eta_u", "fedrecon", "fedrecon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedrecon.eta_u), NAN, 0.0, 1, NULL, "η_u", \
     "update step size: k_u SGD steps on the global g over D_{i,q}"}, \
    {"fedrecon.eta_s", "fedrecon", "fedrecon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, fedrecon.eta_s), NAN, 0.0, 1, NULL, "η_s", \
     "server step size: g^{t+1} = g^t + η_s Δ^t"}, \
    {"fedrecon.local_init", "fedrecon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedrecon.local_init), 0.0, 0.0, 0, \
     fedrecon_local_init_values, "", \
     "where reconstruction starts: l⁰ (init.w's local entries) at every " \
     "visit, stateless (§3) | the l_i the client kept from its last visit"}, \
    {"fedrecon.weights", "fedrecon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedrecon.weights), 0.0, 0.0, 0, \
     fedrecon_weights_values, "", \
     "aggregation weights of Δ_i: n_i = |D_{i,q}| (Alg. 1) | uniform (TFF " \
     "ClientWeighting.UNIFORM) | the examples of the k_u update batches " \
     "(TFF NUM_EXAMPLES, training_process.py)"}, \
    {"fedrecon.query", "fedrecon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedrecon.query), 0.0, 0.0, 0, \
     fedrecon_query_values, "", \
     "the query set: D_i minus the support init.support (disjoint, TFF " \
     "split_dataset = True) | the whole D_i, support = D_i too (TFF " \
     "simple_dataset_split_fn)"}, \
    {"fedrecon.eval", "fedrecon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, fedrecon.eval), 0.0, 0.0, 0, \
     fedrecon_eval_values, "", \
     "evaluation: reconstruct l on D_{i,s} from the final g (schedule.post) " \
     "| evaluate (g, l_i) as the last visit kept it"},

#endif
