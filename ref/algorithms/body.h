/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/body.h: for the algorithms that act on a model's body
 * features (MOON's representation, FedProto's embedding, FedPAC's
 * features and centroids, FedRoD's features under two heads): the check
 * that the model has a body, and the sizes of the buffers that hold its
 * features. */
#ifndef PFLREF_ALGORITHMS_BODY_H
#define PFLREF_ALGORITHMS_BODY_H

#include <stddef.h>
#include "pflref/model.h"
#include "pflref/problem.h"
#include "pflref/status.h"

/* An algorithm's words for refusing a model without a usable body, each
 * a whole message: no body (no_body, the model's kind name, no_body_end),
 * no dense last layer after another (no_head), batch normalisation in the
 * body (bn, whose features would depend on the whole batch), and, for an
 * algorithm whose quantities are per class, a model that is not a
 * classifier (not_classifier; NULL: any loss). */
typedef struct {
    const char *no_body, *no_body_end, *no_head, *bn, *not_classifier;
} pflref_body_words;

/* The model has a body and a dense last layer: an mlp, or a layer list
 * whose last layer is dense after at least one layer; and no batch
 * normalisation; a classifier when w->not_classifier is set.  PFLREF_OK,
 * or PFLREF_EINVAL naming model.kind, model.layers, model.bn or
 * model.loss with the algorithm's words w. */
static inline pflref_status pflref_body_check(const pflref_model *m,
                                              const pflref_body_words *w,
                                              pflref_error *err)
{
    if (m->kind != PFLREF_MODEL_MLP && m->kind != PFLREF_MODEL_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind", "%s%s%s",
                                w->no_body, pflref_model_kind_name(m->kind),
                                w->no_body_end);
    if (m->kind == PFLREF_MODEL_LAYERS &&
        (m->nlayers < 2 ||
         m->layers[m->nlayers - 1].kind != PFLREF_LAYER_DENSE))
        return pflref_error_set(err, PFLREF_EINVAL, "model.layers", "%s",
                                w->no_head);
    if (m->bn)
        return pflref_error_set(
            err, PFLREF_EINVAL,
            m->kind == PFLREF_MODEL_MLP ? "model.bn" : "model.layers", "%s",
            w->bn);
    if (w->not_classifier != NULL && !pflref_model_is_classifier(m))
        return pflref_error_set(err, PFLREF_EINVAL, "model.loss", "%s",
                                w->not_classifier);
    return PFLREF_OK;
}

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
