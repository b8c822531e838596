/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_fedrod.h: FedRoD's rows of the registry of
 * hyperparameters and switches (ref/engine/params.c includes it once and
 * places FEDROD_PARAMS in its table).  FedRoD: Chen and Chao, ICLR 2022,
 * arXiv 2107.00778, Alg. 1; ref/algorithms/fedrod.c.  Value names in the
 * order of the enums of include/pflref/hyper_personal.h, the paper's
 * reading first. */
#ifndef PFLREF_PARAMS_FEDROD_H
#define PFLREF_PARAMS_FEDROD_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const fedrod_features_values[] = {"after", "before", NULL};
static const char *const fedrod_phi_p0_values[] = {"zero", "generic", NULL};

/* The rows, comma-terminated: η (required, > 0), then the switches. */
#define FEDROD_PARAMS \
    {"eta", "fedrod", "fedrod", PFLREF_PARAM_REAL,                          \
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",                   \
     "FedRoD's local step size: the generic model's step on the balanced "  \
     "risk and the personal head's on the empirical risk (Alg. 1)"},        \
    {"fedrod.features", "fedrod", "", PFLREF_PARAM_ENUM,                    \
     offsetof(pflref_hyper, fedrod.features), 0.0, 0.0, 0,                  \
     fedrod_features_values, "",                                            \
     "the personal head's step takes f_θ(x) and z_G after the generic "     \
     "step | before it (PFLlib clientrod.py:48-56: rep and out_g computed " \
     "before optimizer.step(), then detached)"},                            \
    {"fedrod.phi_p0", "fedrod", "", PFLREF_PARAM_ENUM,                      \
     offsetof(pflref_hyper, fedrod.phi_p0), 0.0, 0.0, 0,                    \
     fedrod_phi_p0_values, "",                                              \
     "φ_P⁰: 0 | w⁰'s generic head φ_G⁰ (PFLlib clientrod.py:15 "            \
     "copy.deepcopy(self.model.head))"},

#endif
