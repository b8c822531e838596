/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_pfl_ft.h: FedAlt's and FedSim's fine-tuning switches
 * pfl.finetune_start and pfl.finetune_lr in the registry of hyperparameters
 * and switches (ref/engine/params.c includes it once and places
 * PFL_FT_PARAMS after pfl.finetune).  Read by ref/algorithms/fedalt_ft.c;
 * value names in the order of the enums of include/pflref/hyper_personal.h,
 * the paper's reading first. */
#ifndef PFLREF_PARAMS_PFL_FT_H
#define PFLREF_PARAMS_PFL_FT_H

#include <stddef.h>
#include "pflref/hyper.h"

static const char *const pfl_ft_start_values[] = {"global", "last_local",
                                                  NULL};
static const char *const pfl_ft_lr_values[] = {"constant", "decayed", NULL};

/* The rows, comma-terminated. */
#define PFL_FT_PARAMS \
    {"pfl.finetune_start", "fedalt fedsim", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, pfl_ft.start), 0.0, 0.0, 0, pfl_ft_start_values, \
     "", "fine-tuning starts from (u^(T), v_i) | the device's own last " \
     "model (trained in the last round, else received at its start)"}, \
    {"pfl.finetune_lr", "fedalt fedsim", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, pfl_ft.lr), 0.0, 0.0, 0, pfl_ft_lr_values, "", \
     "fine-tuning step: η_ft | η_ft times the decay its client's scheduler " \
     "reached (lr.*)"},

#endif
