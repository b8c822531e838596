/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_moon.h: MOON's hyperparameters and switches in the
 * registry (ref/engine/params.c includes it once and places MOON_PARAMS
 * before FedProx's rows).  Read by ref/algorithms/moon.c; moon.passes'
 * value names in the order of its enum (include/pflref/hyper_baselines.h),
 * the paper's (the authors' code's) reading first. */
#ifndef PFLREF_PARAMS_MOON_H
#define PFLREF_PARAMS_MOON_H

#include <math.h>
#include <stddef.h>
#include "pflref/hyper.h"

static const char *const moon_passes_values[] = {"eval", "train", NULL};

/* The rows, comma-terminated. */
#define MOON_PARAMS \
    {"eta", "moon", "moon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η", \
     "MOON's local step size (Alg. 1 l. 21)"}, \
    {"moon.mu", "moon", "moon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, moon.mu), NAN, 0.0, 0, NULL, "μ", \
     "MOON's weight of the model-contrastive loss (eq. (3), Alg. 1 l. 20)"}, \
    {"moon.tau", "moon", "moon", PFLREF_PARAM_REAL, \
     offsetof(pflref_hyper, moon.tau), NAN, 0.0, 1, NULL, "τ", \
     "MOON's temperature (eq. (2), Alg. 1 l. 19)"}, \
    {"moon.passes", "moon", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, moon.passes), 0.0, 0.0, 0, moon_passes_values, \
     "", "with batch normalisation in the body, l. 15-16's z_glob, z_prev: " \
     "evaluation passes of w^t, w_i^{t-1} on their running statistics " \
     "(QinbinLi/MOON main.py:486, :540, :547 eval()) | training passes on " \
     "the batch's statistics (PFLlib clientmoon.py:43-44, models in " \
     "train() mode: :17, :53, serverbase.py:141)"},

#endif
