/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/bn_own.c: see ref/engine/bn_own.h. */
#include "engine/bn_own.h"
#include "core/vec.h"

/* Client i's "global" evaluation under bn.aggregate = parameters_only:
 * client i's own model, w's parameters with its own r_μ, r_v (PFLlib's
 * evaluate(): each client's test_metrics on its model, serverbase.py:
 * 194-203, clientbase.py:80-84), built in the driver's buffer s->mix. */
pflref_status pflref_bn_own_evaluate(const pflref_state *s, size_t i,
                                     const pflref_data *D, pflref_eval *out)
{
    const pflref_model *m = &s->problem->model;
    const size_t P = s->P;
    double *own = s->mix;
    const double *r = s->bn_own + i * P;
    pflref_copy(own, s->w, P);
    for (size_t b = 0; b < m->nblocks; b++)
        if (m->blocks[b].is_buffer)
            for (size_t q = 0; q < m->blocks[b].size; q++)
                own[m->blocks[b].offset + q] = r[m->blocks[b].offset + q];
    return pflref_model_evaluate(m, own, D, s->ws, out);
}
