/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_ifca.h: IFCA's switch ifca.estimate_mode in the
 * registry of hyperparameters and switches (ref/engine/params.c includes
 * it once and places IFCA_PARAMS after ifca.mode).  Read by
 * ref/algorithms/ifca_estimate.c; value names in the order of the enum
 * pflref_ifca_estimate_mode of include/pflref/hyper_personal.h, the
 * paper's reading first. */
#ifndef PFLREF_PARAMS_IFCA_H
#define PFLREF_PARAMS_IFCA_H

#include <stddef.h>
#include "pflref/hyper.h"

static const char *const ifca_estimate_mode_values[] = {"train", "eval",
                                                        NULL};

/* The rows, comma-terminated. */
#define IFCA_PARAMS \
    {"ifca.estimate_mode", "ifca", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, ifca_estimate_mode), 0.0, 0.0, 0, \
     ifca_estimate_mode_values, "", \
     "IFCA's estimate F_i(θ_j): training-mode loss passes, BN on the " \
     "set's statistics, a dropout mask each (jichan3751/ifca " \
     "train_cluster_mnist.py:384-392, no eval()) | evaluation mode, BN on " \
     "r_mu, r_v, no dropout (Gerid/FedDCA clientifca.py:56-61)"},

#endif
