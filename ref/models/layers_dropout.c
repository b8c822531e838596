/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/layers_dropout.c: the masks of a layer list's dropout layers
 * (docs/models.md, "Dropout"): the workspace's source of masks and the
 * taking of one pass's masks at the start of a training pass.  The layer's
 * kernels (Y = X ⊙ M · s and its backward and R-operator) are in
 * layers_ops.c. */
#include "models/models.h"

void pflref_model_workspace_dropout(pflref_model_workspace *ws,
                                    pflref_dropout_source src, void *ctx)
{
    if (ws == NULL)
        return;
    ws->drop_src = src;
    ws->drop_ctx = src != NULL ? ctx : NULL;
}

int pflref_model_workspace_dropout_kind(pflref_model_workspace *ws, int kind)
{
    if (ws == NULL)
        return PFLREF_DROPOUT_PASS_TRAIN;
    const int was = ws->drop_kind;
    ws->drop_kind = kind;
    return was;
}

pflref_status pflref_layers_dropout_take(const pflref_model *m,
                                         const pflref_data *D, size_t nb,
                                         pflref_model_workspace *ws)
{
    if (pflref_model_dropout_layers(m) == 0)
        return PFLREF_OK;
    if (ws->drop_src == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "ws",
                                "a training pass through a dropout layer "
                                "needs its masks (none given)");
    const unsigned char *pass = NULL;
    pflref_status st = ws->drop_src(ws->drop_ctx, m, D, nb, ws->drop_kind,
                                      &pass);
    if (st != PFLREF_OK)
        return st;
    if (pass == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "ws",
                                "the dropout source gave no masks");
    /* the pass's masks, one per dropout layer in layer order */
    size_t off = 0;
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT) {
            ws->drop[i] = pass + off;
            off += nb * m->layers[i].in_size;
        }
    return PFLREF_OK;
}
