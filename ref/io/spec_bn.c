/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_bn.c: bn.aggregate (ref/engine/params_bn.h) where it has
 * nothing to act on: per algorithm, the reason the "does not apply to"
 * refusal of ref/io/spec_hyper.c gives (docs/models.md, "PFLlib's
 * reading"; each algorithm's page says more).  An algorithm missing here
 * gets the registry's plain refusal. */
#include <string.h>
#include "io/spec_read.h"

static const struct {
    const char *name, *why;
} refusals[] = {
    /* ref/algorithms/fedproto.c check_model; PFLlib serverproto.py:44-46,
     * 63-81: prototypes travel, never a model */
    {"fedproto", "fedproto's clients exchange prototypes, never a model, so "
                 "every client keeps its own running statistics whatever "
                 "the switch would say"},
};

const char *pflref_spec_bn_refusal(const char *algorithm)
{
    for (size_t r = 0; r < sizeof refusals / sizeof refusals[0]; r++)
        if (strcmp(refusals[r].name, algorithm) == 0)
            return refusals[r].why;
    return NULL;
}
