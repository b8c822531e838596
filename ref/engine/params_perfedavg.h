/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_perfedavg.h: Per-FedAvg's switches of how the code
 * people run takes its steps (perfedavg.calls, perfedavg.eval_lr,
 * perfedavg.opt_steps) in the registry of hyperparameters and switches
 * (ref/engine/params.c includes it once and places PERFEDAVG_RUN_PARAMS
 * after perfedavg.eval).  Value names in the order of the enums of
 * include/pflref/hyper.h, the paper's reading first. */
#ifndef PFLREF_PARAMS_PERFEDAVG_H
#define PFLREF_PARAMS_PERFEDAVG_H

#include <stddef.h>
#include "pflref/hyper.h"

static const char *const perfedavg_calls_values[] = {"one", "two", NULL};
static const char *const perfedavg_opt_steps_values[] = {"meta", "both",
                                                         NULL};
static const char *const perfedavg_eval_lr_values[] = {"initial", "decayed",
                                                       NULL};

/* The rows, comma-terminated. */
#define PERFEDAVG_RUN_PARAMS \
    {"perfedavg.calls", "perfedavg", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, perfedavg.calls), 0.0, 0.0, 0, \
     perfedavg_calls_values, "", \
     "a round's τ steps: one pass (paper) | two train() calls of τ/2 steps, " \
     "each a step of the learning-rate decay (PFLlib)"}, \
    {"perfedavg.eval_lr", "perfedavg", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, perfedavg.eval_lr), 0.0, 0.0, 0, \
     perfedavg_eval_lr_values, "", \
     "the personalisation's step sizes under lr.schedule: undecayed α, β " \
     "(paper: no decay) | client i's after all its decay steps (PFLlib " \
     "clientperavg.py train_one_step: optimizer.step() reads the decayed " \
     "lr)"}, \
    {"perfedavg.opt_steps", "perfedavg", "", PFLREF_PARAM_ENUM, \
     offsetof(pflref_hyper, perfedavg.opt_steps), 0.0, 0.0, 0, \
     perfedavg_opt_steps_values, "", \
     "what the client optimizer (opt.*) steps: the meta (β) step alone, " \
     "w̃ = w − α g staying the plain step of the objective F (paper) | the " \
     "α and the β step through one optimizer object and state (PFLlib " \
     "clientperavg.py:51 self.optimizer.step(), :72 " \
     "self.optimizer.step(beta=self.beta), one PerAvgOptimizer)"},

#endif
