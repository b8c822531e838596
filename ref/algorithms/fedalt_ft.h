/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedalt_ft.h: FedAlt's and FedSim's fine-tuning switches
 * pfl.finetune_start and pfl.finetune_lr (ref/algorithms/fedalt_ft.c), read
 * through functions because their members of pflref_hyper are outside what
 * the proofs of fedalt.c see (include/pflref/hyper.h, proofs/README.md).
 * Their contracts are assumptions of those proofs.
 */
#ifndef PFLREF_FEDALT_FT_H
#define PFLREF_FEDALT_FT_H

#include <stddef.h>
#include "engine/engine.h"

/* 1 when pfl.finetune_start = last_local: each device fine-tunes from its
 * own last model, 0 (global) from (u^(T), v_i^(T)).  h [in] */
/*@ assigns \nothing; */
int pflref_pfl_ft_last_local(const pflref_hyper *h);

/* Device i's fine-tuning step: η_ft (pfl.finetune_lr = constant), or
 * η_ft c with c the decay client i's scheduler reached after the rounds
 * (decayed: pflref_client_lr_factor, lr.count's count).  s [in] */
/*@ assigns \nothing; */
double pflref_pfl_ft_eta(const pflref_state *s, size_t i);

#endif
