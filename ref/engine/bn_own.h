/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/bn_own.h: the evaluation of client i's own model under
 * bn.aggregate = parameters_only (ref/engine/bn_own.c), which the driver's
 * "global" source means there (ref/engine/run.c). */
#ifndef PFLREF_ENGINE_BN_OWN_H
#define PFLREF_ENGINE_BN_OWN_H

#include <stddef.h>
#include "engine/engine.h"

/* Client i's "global" evaluation under bn.aggregate = parameters_only:
 * w's parameters with client i's own running statistics (s->bn_own, kept by
 * ref/algorithms/fedavg_keep.c), built in s->mix and evaluated on D. */
pflref_status pflref_bn_own_evaluate(const pflref_state *s, size_t i,
                                     const pflref_data *D, pflref_eval *out);

#endif
