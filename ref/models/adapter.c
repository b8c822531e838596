/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/adapter.c: low-rank adapters W = W₀ + s B A on a model's weight
 * blocks (layout, merge, gradient); see adapter.h for the reference and the
 * layout.
 *
 * Shapes: W_ℓ k × d at w + block offset (row-major; the linear model's w is
 * a d-vector, read as 1 × d); A r × d; B k × r; only ranks < ρ are used.
 * Sums over the rank run in index order; the products are small loops (r
 * is a handful), each with its formula beside it.
 */
#include <string.h>
#include "models/adapter.h"

pflref_status pflref_lora_layout_init(pflref_lora_layout *L,
                                      const pflref_model *m, size_t r,
                                      int which, pflref_error *err)
{
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "low-rank adapters need a layer (linear, "
                                "softmax or mlp), not the quadratic model");
    if (m->kind == PFLREF_MODEL_LAYERS)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "low-rank adapters on a layer list are not "
                                "implemented yet (linear, softmax or mlp)");
    if (r == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "lora.r",
                                "the rank r must be at least 1");
    memset(L, 0, sizeof *L);
    L->r = r;
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        const char *n = B->name;
        const int weight = strcmp(n, "w") == 0 || strcmp(n, "W") == 0 ||
                           strcmp(n, "W1") == 0 || strcmp(n, "W2") == 0;
        if (!weight || (which == 1 && !B->is_head) ||
            (which == 2 && !B->is_input))
            continue;
        pflref_lora_target *t = &L->targets[L->ntargets++];
        t->block = (int)b;
        /* the linear model's w is a d-vector: one output row */
        t->k = m->kind == PFLREF_MODEL_LINEAR ? 1 : B->rows;
        t->d = m->kind == PFLREF_MODEL_LINEAR ? B->size : B->cols;
        if (r > t->k || r > t->d)
            return pflref_error_set(err, PFLREF_EINVAL, "lora.r",
                                    "rank r = %zu exceeds min(k, d) = %zu of "
                                    "block %s (%zu × %zu)", r,
                                    t->k < t->d ? t->k : t->d, n, t->k, t->d);
        t->off_A = L->Q;
        t->off_B = L->Q + r * t->d;
        L->Q += r * (t->d + t->k);
    }
    return PFLREF_OK;
}

void pflref_lora_merge(const pflref_lora_layout *L, const pflref_model *m,
                       const double *w0, const double *q, size_t rank,
                       double s, double *theta)
{
    const size_t r = L->r;
    memcpy(theta, w0, m->P * sizeof *theta);
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        const double *A = q + t->off_A, *B = q + t->off_B;
        double *W = theta + m->blocks[t->block].offset;
        /* W_{ij} := W₀_{ij} + s Σ_ρ B_{iρ} A_{ρj}   (req: lora.eq3) */
        for (size_t i = 0; i < t->k; i++)
            for (size_t j = 0; j < t->d; j++) {
                double sum = 0.0;
                for (size_t p = 0; p < rank; p++)
                    sum += B[i * r + p] * A[p * t->d + j];
                W[i * t->d + j] += s * sum;
            }
    }
}

void pflref_lora_grad(const pflref_lora_layout *L, const pflref_model *m,
                      const double *q, size_t rank, double s,
                      const double *g, double *gq)
{
    const size_t r = L->r;
    memset(gq, 0, L->Q * sizeof *gq);
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        const double *A = q + t->off_A, *B = q + t->off_B;
        const double *G = g + m->blocks[t->block].offset;
        double *gA = gq + t->off_A, *gB = gq + t->off_B;
        /* ∂L/∂A_{ρj} = s Σ_i B_{iρ} G_{ij}   (s Bᵀ G; req: lora.grad) */
        for (size_t p = 0; p < rank; p++)
            for (size_t j = 0; j < t->d; j++) {
                double sum = 0.0;
                for (size_t i = 0; i < t->k; i++)
                    sum += B[i * r + p] * G[i * t->d + j];
                gA[p * t->d + j] = s * sum;
            }
        /* ∂L/∂B_{iρ} = s Σ_j G_{ij} A_{ρj}   (s G Aᵀ; req: lora.grad) */
        for (size_t i = 0; i < t->k; i++)
            for (size_t p = 0; p < rank; p++) {
                double sum = 0.0;
                for (size_t j = 0; j < t->d; j++)
                    sum += G[i * t->d + j] * A[p * t->d + j];
                gB[i * r + p] = s * sum;
            }
    }
}

void pflref_lora_truncate(const pflref_lora_layout *L, double *q,
                          size_t rank)
{
    const size_t r = L->r;
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        for (size_t p = rank; p < r; p++) {
            memset(q + t->off_A + p * t->d, 0, t->d * sizeof *q);
            for (size_t i = 0; i < t->k; i++)
                q[t->off_B + i * r + p] = 0.0;
        }
    }
}
