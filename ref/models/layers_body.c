/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/layers_body.c: the body / head split API of pflref/model.h
 * for the layer-list model (kind "layers"): the body's features Φ (the
 * input of the last, dense, layer), the head's forward and backward on
 * them, and the body's gradient from a signal on Φ, in evaluation mode or
 * in a training pass (batch normalisation on the batch's statistics).
 * The kernels are layers_ops.c's (pflref_layers_forward_to,
 * pflref_layers_backward_range); the symbols are its header's. */
#include <string.h>
#include "models/models.h"

void pflref_layers_features(const pflref_model *m, const double *w,
                            size_t nb, pflref_model_workspace *ws,
                            double *A, double *Phi)
{
    const size_t L = m->nlayers, h = m->layers[L - 1].in_size;
    pflref_layers_forward_to(m, w, nb, ws, L - 1);
    ws->body_forward++;
    ws->body_cached = 1;
    ws->body_cached_nb = nb;
    memcpy(Phi, ws->act[L - 2], nb * h * sizeof *Phi);
    memcpy(A, Phi, nb * h * sizeof *A);
}

void pflref_layers_head_forward(const pflref_model *m, const double *w,
                                size_t nb, const double *Phi,
                                pflref_model_workspace *ws)
{
    const pflref_layer *L = &m->layers[m->nlayers - 1];
    pflref_dense_forward(Phi, nb, L->in_size, pflref_layers_blk(m, L, w, 0),
                         L->bias ? pflref_layers_blk(m, L, w, 1) : NULL,
                         L->out, ws->Z);
}

void pflref_layers_head_backward(const pflref_model *m, size_t nb,
                                 const double *Phi, const double *E,
                                 double *g)
{
    const pflref_layer *L = &m->layers[m->nlayers - 1];
    pflref_dense_backward(E, nb, L->out, Phi, L->in_size, 1.0 / (double)nb,
                          pflref_layers_blk_out(m, L, g, 0),
                          L->bias ? pflref_layers_blk_out(m, L, g, 1) : NULL);
}

void pflref_layers_body_grad(const pflref_model *m, const double *w,
                             size_t nb, const double *E,
                             pflref_model_workspace *ws, double *g)
{
    const size_t L = m->nlayers;
    const pflref_layer *H = &m->layers[L - 1];
    /* the body's intermediate outputs are not in A: those the features
     * call left in the workspace serve, as A serves the mlp (the same
     * batch and body parameters, the caller's promise); after any other
     * pass through the workspace, the body forward again */
    if (!(ws->body_cached && ws->body_cached_nb == nb && ws->w_fwd == w)) {
        pflref_layers_forward_to(m, w, nb, ws, L - 1);
        ws->body_forward++;
    }
    /* dΦ := E W_head, then back through the body */
    pflref_gemm(CblasNoTrans, CblasNoTrans, 1.0, E, nb, H->out,
                pflref_layers_blk(m, H, w, 0), H->out, H->in_size, 0.0,
                ws->sig[0], nb, H->in_size);
    pflref_layers_backward_range(m, w, nb, ws->sig[0], ws->sig[0], ws, g,
                                 L - 2, 0);
}

void pflref_layers_body_grad_features(const pflref_model *m, const double *w,
                                      size_t nb, const double *dPhi,
                                      pflref_model_workspace *ws, double *g)
{
    const size_t L = m->nlayers, h = m->layers[L - 1].in_size;
    /* the body's outputs of the last features call, as body_grad */
    if (!(ws->body_cached && ws->body_cached_nb == nb && ws->w_fwd == w)) {
        pflref_layers_forward_to(m, w, nb, ws, L - 1);
        ws->body_forward++;
    }
    /* the signal dΦ itself, then back through the body */
    memcpy(ws->sig[0], dPhi, nb * h * sizeof *dPhi);
    pflref_layers_backward_range(m, w, nb, ws->sig[0], ws->sig[0], ws, g,
                                 L - 2, 0);
}

void pflref_layers_features_mode(const pflref_model *m, const double *w,
                                 size_t nb, pflref_model_workspace *ws,
                                 int train, double *Phi)
{
    const size_t L = m->nlayers, h = m->layers[L - 1].in_size;
    ws->bn_train = train;   /* BN on the batch's statistics, or running */
    pflref_layers_forward_to(m, w, nb, ws, L - 1);
    ws->bn_train = 0;
    ws->body_forward++;
    memcpy(Phi, ws->act[L - 2], nb * h * sizeof *Phi);
}

void pflref_layers_body_grad_train(const pflref_model *m, const double *w,
                                   size_t nb, const double *dPhi,
                                   pflref_model_workspace *ws, double *g)
{
    const size_t L = m->nlayers, h = m->layers[L - 1].in_size;
    /* the body's training pass at w again (the batch's statistics, whose
     * x̂ and s²_B the batchnorm backward reads) */
    ws->bn_train = 1;
    pflref_layers_forward_to(m, w, nb, ws, L - 1);
    ws->bn_train = 0;
    ws->body_forward++;
    memcpy(ws->sig[0], dPhi, nb * h * sizeof *dPhi);
    pflref_layers_backward_range(m, w, nb, ws->sig[0], ws->sig[0], ws, g,
                                 L - 2, 0);
}
