/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/registry.c: the registered algorithms, in the order
 * `pflref list` shows them.  A new algorithm is one file in this folder, its
 * descriptor declared in algorithms.h and listed here
 * (docs/architecture.md, "Adding an algorithm").
 */
#include <string.h>
#include "algorithms/algorithms.h"

static const pflref_algorithm *const registry[] = {
    &pflref_fedavg,
    &pflref_local_only,
    &pflref_finetune,
    &pflref_prox,
    &pflref_pfedme,
    &pflref_ditto,
    &pflref_fedalt,
    &pflref_fedsim,
    &pflref_pflego,
    &pflref_perfedavg,
    &pflref_apfl,
    &pflref_interp,
    &pflref_cfl,
    &pflref_ifca,
    &pflref_fedfomo,
    &pflref_fedbn,
    &pflref_pfedhn,
    &pflref_lora,
    &pflref_feddyn,
    &pflref_scaffold,
    &pflref_moon,
    &pflref_fedprox,
    &pflref_fedrecon,
    &pflref_fedamp,
    &pflref_fedproto,
    &pflref_fedrod,
    &pflref_apple,
    &pflref_fedala,
    &pflref_fedpac,
};

const pflref_algorithm *const *pflref_algorithms(size_t *count)
{
    *count = sizeof registry / sizeof registry[0];
    return registry;
}

const pflref_algorithm *pflref_algorithm_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}
