/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_bn.h: the registry row of bn.aggregate, what the
 * server of FedAvg, of Ditto (whose global objective FedAvg solves) and of
 * FedAlt/FedSim (on the shared blocks), of FedProx, SCAFFOLD, pFedMe, APFL,
 * FedDyn, FedAMP (its messages u_i), APPLE (its mixtures w_p^(i)),
 * FedFomo (l. 3's distance and l. 5's φ_i; ref/algorithms/fedfomo.c),
 * FedPAC (θ; ref/algorithms/fedpac.c's fedpac_round) and FedALA (ALA over
 * parameters(), ref/algorithms/fedala.c) does with batch normalisation's
 * running statistics
 * (ref/engine/params.c includes it once and places BN_AGGREGATE_PARAMS
 * after bn.running_var; ref/algorithms/fedavg_keep.c, ditto.c's
 * ditto_round_keep, fedalt.c's pfl_round_keep, fedrod.c's fedrod_round,
 * perfedavg.c's perfedavg_round_keep and perfedavg_finish_keep,
 * ref/engine/bn_own.c; ref/algorithms/feddyn.c's reading e); docs/models.md
 * "Running statistics in training"; each algorithm's PFLlib lines in
 * ref/engine/params_links.c).  Value names in the order of
 * pflref_bn_aggregate (include/pflref/hyper_baselines.h), the paper's
 * reading first. */
#ifndef PFLREF_PARAMS_BN_H
#define PFLREF_PARAMS_BN_H

#include <stddef.h>
#include "pflref/hyper.h"

static const char *const bn_aggregate_values[] = {"average",
                                                  "parameters_only", NULL};
static const char *const scaffold_bn_global_values[] = {"first_upload",
                                                        "previous", NULL};

#define BN_AGGREGATE_PARAMS \
    {"bn.aggregate", "fedavg ditto fedalt fedsim fedprox scaffold pfedme apfl fedrod perfedavg feddyn fedamp apple fedfomo fedpac fedala moon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, bn_aggregate), 0.0, 0.0, 0, bn_aggregate_values, \
     "", \
     "the buffers r_μ, r_v at the server: averaged with the rest of w (a " \
     "torch state_dict average) | only parameters() averaged: each client " \
     "keeps its own r_μ, r_v across rounds, the global's are the first " \
     "uploaded client's (PFLlib serverbase.py:138-150, clientbase.py:67-69; " \
     "Ditto: of the global copy w_k, v_k's are its own either way; " \
     "FedAlt/FedSim: of the shared blocks; pFedMe: w's, the θ model's " \
     "being each client's, serverpFedMe.py:88-91 mixing parameters() " \
     "only; APFL, apfl.variant = pfllib only: w_i's, v_i's own; " \
     "SCAFFOLD: c, c_i stay at their start on r_μ, r_v, " \
     "clientscaffold.py:18-20, 62-64; FedRoD: (θ_i, φ_G,i)'s, " \
     "serverrod.py:26, :44; Per-FedAvg: w^i's, θ_i starting from them, " \
     "serverperavg.py:26, :46, clientperavg.py:83-99; FedPAC: θ's, each " \
     "v_i keeping its own, clientpac.py:105-107; FedALA: Θ_i's own " \
     "through ALA, which weighs parameters() only, Θ's the first " \
     "participant's, serverALA.py:111-123; MOON: w_i^t's, " \
     "w_i^{t-1} keeping the client's own, clientmoon.py:62-66; FedFomo: " \
     "l. 3's ‖θ_n − φ_i‖ over parameters(), l. 5's φ_i^t mixing " \
     "parameters() only and keeping θ_i^{t-1}'s own, clientfomo.py:" \
     "106-109, :153-165)"},

/* SCAFFOLD's server under bn.aggregate = parameters_only (ref/algorithms/
 * scaffold.c): which r_μ, r_v the new x takes. */
#define SCAFFOLD_BN_PARAMS \
    {"scaffold.bn_global", "scaffold", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, scaffold.bn_global), 0.0, 0.0, 0, \
     scaffold_bn_global_values, "", \
     "under bn.aggregate = parameters_only, x's r_μ, r_v after l. 17: the " \
     "first uploader's (FedAvg's serverbase.py:138-150) | the previous " \
     "x's, so w⁰'s for ever (PFLlib serverscaffold.py:124-129: a deepcopy " \
     "of the previous global plus the parameters()' Δy_i)"},

#endif
