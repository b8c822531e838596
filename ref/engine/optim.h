/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/optim.h: the client optimizers (ref/engine/optim.c), private
 * to ref/.  Floor: engine (docs/architecture.md, docs/optimizers.md).
 *
 * An optimizer is a step rule (the run's opt.* settings) and a state: the
 * buffers torch keeps in optimizer.state for each parameter (SGD's
 * momentum buffer b, Adam's moments m and v, and the step count t of each
 * parameter block).  The local solver (ref/engine/sgd.c) hands it the
 * gradient d of the client's loss, proximal term included, and it moves
 * the job's moving blocks.
 */
#ifndef PFLREF_ENGINE_OPTIM_H
#define PFLREF_ENGINE_OPTIM_H

#include <stddef.h>
#include "pflref/algorithm.h"

/* The epsilon torch.nn.utils.clip_grad_norm_ adds to the total norm in
 * its coefficient max_norm / (total_norm + 1e-6) (torch/nn/utils/
 * clip_grad.py); a constant of the code reproduced, not a tolerance. */
#define PFLREF_OPT_CLIP_EPS 1e-6

/* One optimizer's state.
 *   rule      the settings (the run's opt.*), borrowed
 *   personal  P: the split's mask (1 = personal block), borrowed: which
 *             blocks opt.decay_scope = shared | personal decays
 *   b         P: SGD's momentum buffer b (pytorch form) or velocity v
 *             (classical form); Adam's first moment m; NULL when the rule
 *             keeps none (μ = 0 SGD)
 *   v         P: Adam's second moment; NULL for SGD
 *   t         the steps each block has taken with this state (torch's
 *             per-parameter state['step'] and "momentum_buffer is None"):
 *             a block moves only when the job's mask marks it */
typedef struct {
    const pflref_opt_hyper *rule;
    const unsigned char *personal;
    double *b;
    double *v;
    size_t t[PFLREF_MAX_BLOCKS];
} pflref_optim_state;

/* The optimizer states of a run (allocated by the driver, ref/engine/
 * run.c, for an algorithm with opt_slots ≥ 1 and a rule that is not plain
 * SGD).  opt.state says how many sets it holds:
 *   reset   slots sets, zeroed at the start of every client update
 *   client  N·slots sets, set i·slots + k is client i's optimizer k
 *   server  slots sets, never zeroed: carried from client to client */
typedef struct {
    int lifetime;               /* pflref_opt_state                         */
    size_t slots;               /* optimizers per client (alg->opt_slots)   */
    size_t nsets;               /* slots or N·slots                         */
    size_t P;
    pflref_optim_state *sets;   /* nsets                                    */
    double *buf;                /* the sets' b and v                        */
    size_t bytes;               /* what it holds (the run's memory)         */
} pflref_optim;

/* 1 when rule is the papers' plain SGD step θ ← θ − η d (method sgd, μ = 0,
 * λ = 0, clipping off): the local solver then takes its own plain path,
 * bit for bit the arithmetic without an optimizer. */
int pflref_optim_is_plain(const pflref_opt_hyper *rule);

/* 1 when the rule keeps state from one step to the next (SGD with μ > 0,
 * Adam, AdamW), so that opt.state matters. */
int pflref_optim_has_state(const pflref_opt_hyper *rule);

/* The checks of opt.* for algorithm alg (the driver's, before anything
 * runs): an algorithm with opt_slots = 0 takes only the defaults (else
 * PFLREF_EINVAL naming the first key that differs, the algorithm and
 * alg->opt_refusal); otherwise β₁, β₂ < 1, clip_norm given exactly when
 * opt.clip = norm, nesterov only with SGD, μ > 0, τ = 0 and the pytorch
 * form, dampening not with the classical form, momentum, dampening and
 * the momentum form only with SGD.  `where` of a failure is the key's
 * path "algorithm.hyperparameters.opt.…" or "algorithm.switches.opt.…". */
pflref_status pflref_optim_check(const pflref_algorithm *alg,
                                 const pflref_hyper *h, pflref_error *err);

/* The bytes pflref_optim_alloc would hold. */
size_t pflref_optim_bytes(const pflref_opt_hyper *rule, size_t N, size_t P,
                          size_t slots);

/* The states of a run of N clients, P parameters, `slots` optimizers per
 * client, every buffer zero (t = 0: no step taken).  rule and personal are
 * borrowed for the run.  NULL when out of memory or slots = 0. */
pflref_optim *pflref_optim_alloc(const pflref_opt_hyper *rule,
                                 const unsigned char *personal, size_t N,
                                 size_t P, size_t slots);
void pflref_optim_free(pflref_optim *o);

/* Zero one state: a new optimizer (torch: optim.SGD(...) / optim.Adam(...)
 * constructed again). */
void pflref_optim_state_reset(pflref_optim_state *st, size_t P);

/* One optimizer step on the blocks of m marked in mask (NULL: every
 * block), buffers (r_μ, r_v) excepted:
 *   d      [in,out] P: the loss gradient (proximal term included) on the
 *          marked blocks; on return clipped (opt.clip = norm), as torch's
 *          p.grad is after clip_grad_norm_
 *   theta  [in,out] P: the parameters
 *   eta    η > 0: the step size of this step (the round's, lr.*)
 * The rule (docs/optimizers.md): clip; per block, λ_B = λ where
 * opt.decay_scope takes the block (else 0); then
 *   decoupled (adamw, or weight_decay_form = decoupled): θ ← θ(1 − ηλ_B)
 *   coupled:   d ← d + λ_B θ
 *   sgd:       μ = 0: θ ← θ − η d
 *              pytorch:   b ← d (first step) | μ b + (1 − τ) d;
 *                         d ← d + μ b (nesterov) | b;  θ ← θ − η d
 *              classical: v ← μ v − η d;  θ ← θ + v
 *   adam(w):   t ← t + 1;  m ← β₁ m + (1 − β₁) d;  v ← β₂ v + (1 − β₂) d²;
 *              θ ← θ − (η/(1 − β₁^t)) m / (√v/√(1 − β₂^t) + ε)
 * Returns 1 when every entry of θ it wrote is finite, else 0. */
int pflref_optim_step(pflref_optim_state *st, const pflref_model *m,
                      const unsigned char *mask, double eta, double *d,
                      double *theta);

/* The same step with two parameter groups (one torch optimizer, two
 * param_groups of their own lr): η_u on the split's shared blocks, η_v on
 * its personal blocks (st->personal); FedSim's joint step (γ_u, γ_v).
 * Clipping takes the norm over both groups' moving blocks. */
int pflref_optim_step_groups(pflref_optim_state *st, const pflref_model *m,
                             const unsigned char *mask, double eta_u,
                             double eta_v, double *d, double *theta);

#endif
