/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/adapter.h: low-rank adapters on a model's weight blocks (private
 * to ref/).  Floor: models.
 *
 * LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models",
 * ICLR 2022, arXiv 2106.09685v2, eq. (3) and §4.1): a weight block
 * W ∈ R^{k×d} (k outputs, d inputs) of the base model becomes
 *
 *   W = W₀ + s B A,   A ∈ R^{r×d},  B ∈ R^{k×r},  s = α/r        (req: lora.eq3)
 *
 * W₀ (and every other entry of the base vector) is frozen; the adapter
 * vector q holds, for each targeted block ℓ in the model's block order,
 *
 *   lora_A (r × d_ℓ, row-major), then lora_B (k_ℓ × r, row-major)
 *
 * — the layout of loralib's state_dict ("<layer>.lora_A" is (r,
 * in_features), "<layer>.lora_B" is (out_features, r), microsoft/LoRA @
 * c4593f0 loralib/layers.py:110-111), so a PyTorch adapter's tensors
 * flatten and concatenate to q (docs/models.md).  Targets: linear "w"
 * (1 × d, k = 1), softmax "W" (k × d), mlp "W1" (h × d) and "W2" (k × h);
 * on a layer list every dense weight "NAME.weight" (out × in) and every
 * conv2d weight, read as the matrix O × (C·κ·κ) its block already is
 * (PEFT's convolution adapter, huggingface/peft src/peft/tuners/lora/
 * layer.py, class _ConvNd behind Conv2d, update_layer: lora_A =
 * Conv2d(C, r, κ, stride, padding) whose weight r × C × κ × κ flattens to
 * A, lora_B = Conv2d(r, O, 1 × 1) whose weight O × r × 1 × 1 is B; the
 * convolution is linear in its weight, so the adapted layer is the conv
 * with W₀ + s B A reshaped to O × C × κ × κ).
 *
 * Ranks: the layout is sized for the rank r; an adapter of a smaller rank
 * ρ < r (HetLoRA's client ranks) lives in the same layout with rows ρ..r−1
 * of every A and columns ρ..r−1 of every B equal to 0 (zero-padding):
 * every function below takes the rank ρ it works on and never reads or
 * writes the entries beyond it.
 *
 * Gradients (G = ∂L/∂W at W = W₀ + s B A, the base model's gradient):
 *   ∂L/∂A = s Bᵀ G   (r × d)          ∂L/∂B = s G Aᵀ   (k × r)
 */
#ifndef PFLREF_MODELS_ADAPTER_H
#define PFLREF_MODELS_ADAPTER_H

#include <stddef.h>
#include "pflref/model.h"

/* One adapted block: the base block `block` (W, k × d) and the offsets of
 * its lora_A and lora_B in q. */
typedef struct {
    int block;        /* index into the model's blocks                     */
    size_t k, d;      /* W is k × d                                        */
    size_t off_A;     /* lora_A: r × d at q + off_A                        */
    size_t off_B;     /* lora_B: k × r at q + off_B                        */
} pflref_lora_target;

typedef struct {
    size_t r;                                   /* the layout's rank       */
    size_t ntargets;
    pflref_lora_target targets[PFLREF_MAX_BLOCKS];
    size_t Q;                                   /* adapter length          */
} pflref_lora_layout;

/* The layout of rank r on m's weight blocks: every weight matrix (which
 * = 0), the output layer's (1: w, W, W2; a layer list's last parametrised
 * layer) or the input layer's (2: w, W, W1; its first parametrised
 * layer).  Returns PFLREF_EINVAL where
 * "model.kind" (the quadratic model has no layer), "lora.targets" (the
 * head or input layer of a layer list is a batchnorm, without a weight
 * matrix) or "lora.r" (r = 0, or r > min(k, d) of a target, named in the
 * message). */
pflref_status pflref_lora_layout_init(pflref_lora_layout *L,
                                      const pflref_model *m, size_t r,
                                      int which, pflref_error *err);

/* The same with the targets named (init.lora_targets; nnames = 0: as
 * pflref_lora_layout_init): each name is a weight block ("fc1.0.weight",
 * "W1") or a dense or conv2d layer's name meaning its weight ("fc1.0");
 * the targets follow the model's block order whatever the names' order.
 * With names, which must be 0.  Returns PFLREF_EINVAL as above, and where
 * "init.lora_targets" (names together with which ≠ 0) or
 * "init.lora_targets[j]" (an unknown name, a block that is not a weight
 * matrix — a bias, batch normalisation's γ, β or statistics —, a layer
 * without a weight, or a target named twice). */
pflref_status pflref_lora_layout_named(pflref_lora_layout *L,
                                       const pflref_model *m, size_t r,
                                       int which, const char *const *names,
                                       size_t nnames, pflref_error *err);

/* The adapter's blocks as a model for the client optimizer
 * (ref/engine/optim.c steps per block): am := 2·ntargets blocks over q,
 * "<target>.lora_A" (r × d) then "<target>.lora_B" (k × r) per target
 * (the target's name without ".weight": loralib's and PEFT's parameter
 * names), P = Q.  Only nblocks, blocks and P of am are meaningful. */
void pflref_lora_blocks(const pflref_lora_layout *L, const pflref_model *m,
                        pflref_model *am);

/* θ := w₀, then W_ℓ += s Σ_{ρ' < ρ} B_ℓ[:, ρ'] A_ℓ[ρ', :] on every target
 * (the merged model, req: lora.eq3).  w0, theta [P]; q [Q]. */
void pflref_lora_merge(const pflref_lora_layout *L, const pflref_model *m,
                       const double *w0, const double *q, size_t rank,
                       double s, double *theta);

/* gq := the gradient in q of L(W₀ + s B A) from the base gradient g (P
 * entries, G_ℓ in block ℓ): ∂A = s Bᵀ G, ∂B = s G Aᵀ on ranks < rank, 0
 * beyond (req: lora.grad).  gq [Q]. */
void pflref_lora_grad(const pflref_lora_layout *L, const pflref_model *m,
                      const double *q, size_t rank, double s,
                      const double *g, double *gq);

/* Rows ρ ≥ rank of every A and columns ρ ≥ rank of every B := 0. */
void pflref_lora_truncate(const pflref_lora_layout *L, double *q,
                          size_t rank);

#endif
