/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/body.h: the sizes of the buffers that hold a model's
 * body features, for the algorithms that act on them (MOON's
 * representation, FedProto's embedding). */
#ifndef PFLREF_ALGORITHMS_BODY_H
#define PFLREF_ALGORITHMS_BODY_H

#include <stddef.h>
#include "pflref/model.h"
#include "pflref/problem.h"

/* h, the length of the body's output: the mlp's hidden units, or the
 * input of a layer list's last (dense) layer; 0 for another model. */
static inline size_t pflref_body_size(const pflref_model *m)
{
    if (m->kind == PFLREF_MODEL_MLP)
        return m->h;
    return m->kind == PFLREF_MODEL_LAYERS && m->nlayers > 0
               ? m->layers[m->nlayers - 1].in_size
               : 0;
}

/* The largest training set (at least 1): the bound of a batch, and so of
 * the per-sample feature buffers. */
static inline size_t pflref_largest_train(const pflref_problem *pr)
{
    size_t n = 1;
    for (size_t i = 0; i < pr->N; i++)
        if (pr->clients[i].train.n > n)
            n = pr->clients[i].train.n;
    return n;
}

#endif
