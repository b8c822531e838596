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
#include <stdio.h>
#include <string.h>
#include "models/adapter.h"

/* 1 when block b of m is a weight matrix an adapter may target: linear
 * "w", softmax "W", mlp "W1", "W2"; a layer list's dense or conv2d
 * weight (the first block of such a layer). */
static int is_weight(const pflref_model *m, size_t b)
{
    if (m->kind != PFLREF_MODEL_LAYERS) {
        const char *n = m->blocks[b].name;
        return strcmp(n, "w") == 0 || strcmp(n, "W") == 0 ||
               strcmp(n, "W1") == 0 || strcmp(n, "W2") == 0;
    }
    for (size_t i = 0; i < m->nlayers; i++) {
        const pflref_layer *Ly = &m->layers[i];
        if ((Ly->kind == PFLREF_LAYER_DENSE ||
             Ly->kind == PFLREF_LAYER_CONV2D) &&
            Ly->first_block == (int)b)
            return 1;
    }
    return 0;
}

/* The block names[j] targets: a block's name, or (a layer list) a layer's
 * name meaning its weight; *b := its index.  PFLREF_EINVAL where
 * "init.lora_targets[j]" when it is none of m's, or not a weight. */
static pflref_status resolve_name(const pflref_model *m, const char *name,
                                  size_t j, size_t *b, pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "init.lora_targets[%zu]", j);
    int q = pflref_model_block_index(m, name);
    if (q < 0 && m->kind == PFLREF_MODEL_LAYERS)
        for (size_t i = 0; i < m->nlayers; i++) {
            const pflref_layer *Ly = &m->layers[i];
            if (strcmp(Ly->name, name) != 0)
                continue;
            if (Ly->first_block < 0)
                return pflref_error_set(err, PFLREF_EINVAL, where,
                                        "layer \"%s\" (layers[%zu], %s) has "
                                        "no weight to adapt", name, i,
                                        pflref_layer_kind_name(Ly->kind));
            q = Ly->first_block;   /* a layer's name: its weight */
            break;
        }
    if (q < 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "\"%s\" is neither a block nor a layer of "
                                "the model (a target is a weight block, "
                                "such as \"%s\", or a dense or conv2d "
                                "layer's name)", name, m->blocks[0].name);
    if (!is_weight(m, (size_t)q))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "block %s is not a weight matrix (adapters "
                                "go on dense and conv2d weights%s)",
                                m->blocks[q].name,
                                m->kind == PFLREF_MODEL_LAYERS
                                    ? "; biases and batch normalisation "
                                      "stay frozen"
                                    : ": w, W, W1, W2");
    *b = (size_t)q;
    return PFLREF_OK;
}

pflref_status pflref_lora_layout_init(pflref_lora_layout *L,
                                      const pflref_model *m, size_t r,
                                      int which, pflref_error *err)
{
    return pflref_lora_layout_named(L, m, r, which, NULL, 0, err);
}

pflref_status pflref_lora_layout_named(pflref_lora_layout *L,
                                       const pflref_model *m, size_t r,
                                       int which, const char *const *names,
                                       size_t nnames, pflref_error *err)
{
    if (m->kind == PFLREF_MODEL_QUADRATIC)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "low-rank adapters need a layer (linear, "
                                "softmax, mlp or a layer list), not the "
                                "quadratic model");
    if (r == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "lora.r",
                                "the rank r must be at least 1");
    if (nnames > 0 && which != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "init.lora_targets",
                                "the targets are named here or chosen by "
                                "lora.targets = head | input, not both");
    /* The selected blocks: by name, or every weight of the group. */
    unsigned char chosen[PFLREF_MAX_BLOCKS] = {0};
    size_t named_by[PFLREF_MAX_BLOCKS] = {0};
    for (size_t j = 0; j < nnames; j++) {
        size_t b = 0;
        pflref_status st = resolve_name(m, names[j], j, &b, err);
        if (st != PFLREF_OK)
            return st;
        if (chosen[b]) {
            char where[PFLREF_WHERE_MAX];
            snprintf(where, sizeof where, "init.lora_targets[%zu]", j);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "\"%s\" targets %s, already named by "
                                    "init.lora_targets[%zu]", names[j],
                                    m->blocks[b].name, named_by[b]);
        }
        chosen[b] = 1;
        named_by[b] = j;
    }
    for (size_t b = 0; nnames == 0 && b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        chosen[b] = is_weight(m, b) && (which != 1 || B->is_head) &&
                    (which != 2 || B->is_input);
    }
    memset(L, 0, sizeof *L);
    L->r = r;
    for (size_t b = 0; b < m->nblocks; b++) {
        if (!chosen[b])
            continue;
        const pflref_block *B = &m->blocks[b];
        pflref_lora_target *t = &L->targets[L->ntargets++];
        t->block = (int)b;
        /* the linear model's w is a d-vector: one output row; a conv
         * weight is the O × (C·κ·κ) matrix of its block */
        t->k = m->kind == PFLREF_MODEL_LINEAR ? 1 : B->rows;
        t->d = m->kind == PFLREF_MODEL_LINEAR ? B->size : B->cols;
        if (r > t->k || r > t->d)
            return pflref_error_set(err, PFLREF_EINVAL, "lora.r",
                                    "rank r = %zu exceeds min(k, d) = %zu of "
                                    "block %s (%zu × %zu)", r,
                                    t->k < t->d ? t->k : t->d, B->name, t->k,
                                    t->d);
        t->off_A = L->Q;
        t->off_B = L->Q + r * t->d;
        L->Q += r * (t->d + t->k);
    }
    if (L->ntargets == 0)   /* a layer list whose head or input is a BN */
        return pflref_error_set(err, PFLREF_EINVAL, "lora.targets",
                                "lora.targets = %s: the model's %s layer "
                                "has no weight matrix (batch normalisation);"
                                " name the targets in init.lora_targets",
                                which == 1 ? "head" : "input",
                                which == 1 ? "last parametrised"
                                           : "first parametrised");
    if (2 * L->ntargets > PFLREF_MAX_BLOCKS)
        return pflref_error_set(err, PFLREF_EINVAL, "lora.targets",
                                "%zu targets: at most %d", L->ntargets,
                                PFLREF_MAX_BLOCKS / 2);
    return PFLREF_OK;
}

void pflref_lora_blocks(const pflref_lora_layout *L, const pflref_model *m,
                        pflref_model *am)
{
    memset(am, 0, sizeof *am);
    am->kind = m->kind;
    am->P = L->Q;
    for (size_t l = 0; l < L->ntargets; l++) {
        const pflref_lora_target *t = &L->targets[l];
        const char *n = m->blocks[t->block].name;
        size_t len = strlen(n);
        if (len > 7 && strcmp(n + len - 7, ".weight") == 0)
            len -= 7;   /* "fc1.0.weight" → "fc1.0" */
        pflref_block *A = &am->blocks[am->nblocks++];
        pflref_block *B = &am->blocks[am->nblocks++];
        *A = (pflref_block){.offset = t->off_A, .size = L->r * t->d,
                            .rows = L->r, .cols = t->d};
        *B = (pflref_block){.offset = t->off_B, .size = t->k * L->r,
                            .rows = t->k, .cols = L->r};
        snprintf(A->name, sizeof A->name, "%.*s.lora_A", (int)len, n);
        snprintf(B->name, sizeof B->name, "%.*s.lora_B", (int)len, n);
    }
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
