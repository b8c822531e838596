/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/batch.c: the model workspace, the checks every compute
 * function shares, and the gather of a batch into the workspace.
 *
 * A batch is the samples idx[0..nb−1] of D, in this order, or all n
 * samples in index order when idx is NULL (pflref/model.h).  Gathering
 * copies its rows into X_b (nb × d) and its targets into y_b (nb), so the
 * models read one contiguous batch whatever the indices.
 *
 * Deviation c) of model.c: labels are checked (integral, in [0, k)) while
 * the batch is gathered, so a bad label can never index outside a row,
 * even without a prior pflref_data_validate.
 *
 * Memory: one calloc holds every buffer of the workspace (Xb, yb, Z, RZ,
 * A, H, RH, T, bn; shapes in models.h); the compute functions never allocate.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/mca.h"
#include "core/args.h"
#include "models/models.h"

int pflref_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

int pflref_size_add(size_t *acc, size_t a)
{
    if (a > SIZE_MAX - *acc)
        return 0;
    *acc += a;
    return 1;
}

int pflref_label_is_class(const pflref_model *m, double y)
{
    return y >= 0.0 && y < (double)m->k && y == floor(y);
}

/* ------------------------------------------------------------------------
 * Workspace
 * ------------------------------------------------------------------------ */

/* The workspace `sized` (model and max_batch) with its buffers carved from
 * mem one after the other: Xb nb·d, yb nb, Z and RZ nb·k each, A, H, RH
 * and T nb·h each (nd, nk, nh: the products with nb = max_batch). */
static pflref_model_workspace carve(const pflref_model_workspace *sized,
                                    double *mem, size_t nd, size_t nk,
                                    size_t nh)
{
    double *Xb = mem, *yb = Xb + nd, *Z = yb + sized->max_batch;
    double *RZ = Z + nk, *A = RZ + nk, *H = A + nh, *RH = H + nh;
    double *T = RH + nh, *bn = T + nh;
    return (pflref_model_workspace){
        .kind = sized->kind, .d = sized->d, .k = sized->k, .h = sized->h,
        .max_batch = sized->max_batch,
        .Xb = Xb, .yb = yb, .Z = Z, .RZ = RZ,
        .A = A, .H = H, .RH = RH, .T = T, .bn = bn,
        .mem = mem,
    };
}

/* Workspace for batches of up to max_batch samples of m.
 *   m          [in] an initialised model
 *   max_batch  [in] ≥ 1 for data models (any value for quadratic)
 * Returns NULL when m is NULL or not initialised, max_batch is 0 for a
 * data model, a buffer size overflows, or memory is short.  The caller
 * owns the workspace (pflref_model_workspace_free). */
pflref_model_workspace *pflref_model_workspace_alloc(const pflref_model *m,
                                                     size_t max_batch)
{
    if (m == NULL || pflref_model_kind_name(m->kind) == NULL || m->d < 1)
        return NULL;
    pflref_model_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return NULL;
    *ws = (pflref_model_workspace){
        .kind = m->kind, .d = m->d, .k = m->k, .h = m->h,
        .max_batch = max_batch, .P = m->P,
    };
    if (m->kind == PFLREF_MODEL_QUADRATIC) /* data-free: no buffers */
        return ws;
    if (max_batch < 1 || m->k < 1) {
        free(ws);
        return NULL;
    }

    /* Sizes: Xb nb·d, yb nb, Z and RZ nb·k, A, H, RH and T nb·h each,
     * bn 4h; a layer list: no A, H, RH, T, bn, but its layer buffers
     * (pflref_layers_ws_layout: extra doubles, and ns argmax entries). */
    const int layers = m->kind == PFLREF_MODEL_LAYERS;
    const size_t h = layers ? 0 : m->h;
    size_t nd, nk, nh, total = 0, extra = 0, ns = 0;
    if ((layers && !pflref_layers_ws_layout(m, max_batch, NULL, NULL, NULL,
                                            &extra, &ns)) ||
        !pflref_size_mul(max_batch, m->d, &nd) ||
        !pflref_size_mul(max_batch, m->k, &nk) ||
        !pflref_size_mul(max_batch, h, &nh) ||
        !pflref_size_add(&total, nd) || !pflref_size_add(&total, max_batch) ||
        !pflref_size_add(&total, nk) || !pflref_size_add(&total, nk) ||
        !pflref_size_add(&total, nh) || !pflref_size_add(&total, nh) ||
        !pflref_size_add(&total, nh) || !pflref_size_add(&total, nh) ||
        h > SIZE_MAX / 4 || !pflref_size_add(&total, 4 * h) ||
        !pflref_size_add(&total, extra) ||
        total > SIZE_MAX / sizeof(double)) {
        free(ws);
        return NULL;
    }
    double *mem = calloc(total, sizeof(double));
    size_t *imem = layers ? calloc(ns > 0 ? ns : 1, sizeof(size_t)) : NULL;
    if (mem == NULL || (layers && imem == NULL)) {
        free(mem);
        free(imem);
        free(ws);
        return NULL;
    }
    *ws = carve(ws, mem, nd, nk, nh);
    ws->P = m->P;
    if (layers)  /* the layer buffers after the common ones */
        pflref_layers_ws_layout(m, max_batch, ws, mem + (total - extra),
                                imem, &extra, &ns);
    return ws;
}

void pflref_model_workspace_free(pflref_model_workspace *ws)
{
    if (ws == NULL)
        return;
    free(ws->mem);
    free(ws->imem);
    free(ws);
}

void pflref_model_workspace_passes(const pflref_model_workspace *ws,
                                   size_t *forward, size_t *backward)
{
    *forward = ws != NULL ? ws->body_forward : 0;
    *backward = ws != NULL ? ws->body_backward : 0;
}

/* ------------------------------------------------------------------------
 * Checks
 * ------------------------------------------------------------------------ */

static int ws_fits(const pflref_model *m, const pflref_model_workspace *ws)
{
    return ws->kind == m->kind && ws->d == m->d && ws->k == m->k &&
           ws->h == m->h && ws->P == m->P;
}

pflref_status pflref_batch_check_args(const pflref_model *m, const double *w,
                                      const pflref_data *D,
                                      const pflref_model_workspace *ws)
{
    pflref_status st;
    if ((st = pflref_arg_nonnull(NULL, "m", m)) ||
        (st = pflref_arg_nonnull(NULL, "w", w)) ||
        (st = pflref_arg_nonnull(NULL, "D", D)) ||
        (st = pflref_arg_nonnull(NULL, "ws", ws)))
        return st;
    if (!ws_fits(m, ws))
        return pflref_error_set(NULL, PFLREF_EINVAL, "ws",
                                "ws was sized for another model");
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        if (D->a == NULL || D->c == NULL)
            return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                    "quadratic data without a or c");
        return PFLREF_OK;
    }
    if (D->X == NULL || D->y == NULL)
        return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                "data without X or y");
    return PFLREF_OK;
}

pflref_status pflref_batch_check(const pflref_model *m, const double *w,
                                 const pflref_data *D, const size_t *idx,
                                 size_t nb, const pflref_model_workspace *ws,
                                 size_t *nb_out)
{
    *nb_out = 0;
    pflref_status st = pflref_batch_check_args(m, w, D, ws);
    if (st != PFLREF_OK || m->kind == PFLREF_MODEL_QUADRATIC)
        return st;
    if (idx == NULL) {
        if (nb != 0 && nb != D->n)
            return pflref_error_set(NULL, PFLREF_EINVAL, "nb",
                                    "idx is NULL (whole data set of n = %zu) "
                                    "but nb = %zu",
                                    D->n, nb);
        nb = D->n;
    }
    if (nb == 0)
        return pflref_error_set(NULL, PFLREF_EINVAL, "nb", "empty batch");
    if (nb > ws->max_batch)
        return pflref_error_set(NULL, PFLREF_EINVAL, "nb",
                                "nb = %zu exceeds the workspace's max_batch "
                                "= %zu",
                                nb, ws->max_batch);
    if (idx != NULL)
        for (size_t j = 0; j < nb; j++)
            if (idx[j] >= D->n)
                return pflref_error_set(NULL, PFLREF_EINVAL, "idx",
                                        "idx[%zu] = %zu is not below n = %zu",
                                        j, idx[j], D->n);
    *nb_out = nb;
    return PFLREF_OK;
}

/* ------------------------------------------------------------------------
 * Gather
 * ------------------------------------------------------------------------ */

void pflref_batch_gather_rows(const pflref_model *m, const pflref_data *D,
                              const size_t *idx, size_t first, size_t nb,
                              pflref_model_workspace *ws)
{
    const size_t d = m->d;
    for (size_t j = 0; j < nb; j++) {
        const size_t i = idx != NULL ? idx[j] : first + j;
        memcpy(ws->Xb + j * d, D->X + i * d, d * sizeof(double));
    }
    /* the candidate's copy of the data in its format (Monte Carlo
     * arithmetic, check --candidate-precision; off: no-op) */
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, ws->Xb, nb * d);
}

pflref_status pflref_batch_gather_labels(const pflref_model *m,
                                         const pflref_data *D,
                                         const size_t *idx, size_t first,
                                         size_t nb,
                                         pflref_model_workspace *ws)
{
    const int classifier = pflref_model_is_classifier(m);
    for (size_t j = 0; j < nb; j++) {
        const size_t i = idx != NULL ? idx[j] : first + j;
        const double y = D->y[i];
        if (classifier && !pflref_label_is_class(m, y))
            return pflref_error_set(NULL, PFLREF_EINVAL, "D",
                                    "label y[%zu] = %g is not an integer in "
                                    "[0, %zu)",
                                    i, y, m->k);
        ws->yb[j] = y;
    }
    if (!classifier)   /* a target, not a class: stored in the format too */
        pflref_mca_perturb(PFLREF_MCA_PRODUCT, ws->yb, nb);
    return PFLREF_OK;
}

pflref_status pflref_batch_gather(const pflref_model *m, const pflref_data *D,
                                  const size_t *idx, size_t first, size_t nb,
                                  pflref_model_workspace *ws)
{
    pflref_batch_gather_rows(m, D, idx, first, nb, ws);
    return pflref_batch_gather_labels(m, D, idx, first, nb, ws);
}
