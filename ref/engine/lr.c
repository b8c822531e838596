/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/lr.c: the step sizes of round t (learning-rate decay across
 * rounds), the one place that gives an algorithm its step sizes.
 *
 * The papers take constant step sizes (lr.schedule = constant, the
 * default).  Code bases decay them: PFLlib's -ld (TsingZ0/PFLlib
 * d832e76f6a23, system/flcore/clients/clientbase.py: an ExponentialLR of
 * gamma = -ldg on each client's optimizer, stepped once at the end of the
 * client's train(); shared/spec/notes-pfllib-as-run.md §2.2 and the list
 * at its end) gives round t the step η γ^t when the client trained in every
 * round before, which is lr.schedule = exponential; torch's StepLR shape is
 * lr.schedule = step.  The driver (ref/engine/run.c, run_rounds) hands each
 * round a copy of the hyperparameters with the scaled step sizes, and an
 * algorithm only marks where a client's train() starts
 * (pflref_client_lr), so none computes a decay itself.
 *
 * PFLlib counts per client and per train() call: a client's scheduler
 * steps when that client trains, so under partial participation its step
 * is η γ^(rounds it trained before), lr.count = trainings (the exponent
 * counts client i's own train() calls; pflref_client_lr, which every
 * algorithm a pfllib preset names calls at the start of a client's work);
 * lr.count = rounds, the default, counts the round t (equal when every
 * client trains in every round).  Per-FedAvg's server calls train() twice
 * per round (serverperavg.py), so its second call already has η γ^(2k+1):
 * perfedavg.calls = two splits a round's steps into the two calls, each
 * with its own count.  pFedMe's PFLlib scheduler wraps pFedMeOptimizer
 * (η_p) only: lr.scope = eta_p.  APFL's α step (TsingZ0/PFLlib
 * d832e76f6a23, system/flcore/clients/clientapfl.py, alpha_update:
 * `self.alpha = self.alpha - self.learning_rate * grad_alpha`, line 94 of
 * the text stored at 487a29e) reads self.learning_rate, a float no
 * scheduler touches, while w and v step with their optimizers' decayed lr:
 * apfl.alpha_lr = constant keeps η_α (unset: the undecayed η) out of the
 * decay; decayed, the default, scales it with the rest (the paper has no
 * decay, so one rule for every step size).  FedTorch's rule
 * (apfl.alpha_rule = fedtorch) reads η itself and is not affected.
 * Per-FedAvg's β (TsingZ0/PFLlib 487a29e,
 * system/flcore/clients/clientperavg.py: `self.beta = self.learning_rate`
 * once in __init__, a float, and the second step
 * `self.optimizer.step(beta=self.beta)`; PerAvgOptimizer in
 * flcore/optimizers/fedoptimizer.py steps by that β) never decays, while
 * the first step `self.optimizer.step()` reads the param group's lr, which
 * the ExponentialLR decays: lr.scope = no_beta scales every step size but
 * Per-FedAvg's β.  Its personalisation before evaluation (train_one_step,
 * perfedavg.eval = one_alpha_step) also calls `self.optimizer.step()`, so
 * its α is client i's lr after all its scheduler steps so far (calls ·
 * k_i, k_i the rounds it trained in, or the rounds t under lr.count =
 * rounds): perfedavg.eval_lr = decayed (ref/algorithms/perfedavg.c,
 * perfedavg_finish, takes it from pflref_client_lr); initial, the default,
 * keeps the undecayed α, β (the paper has no decay).
 *
 * Determinism: γ^k is the product of k factors γ taken from the left.
 */
#include <math.h>
#include <stddef.h>
#include "engine/engine.h"

/* The step sizes lr.scope = all scales (each a double of pflref_hyper). */
static const size_t STEP_SIZES[] = {
    offsetof(pflref_hyper, eta),             /* η                        */
    offsetof(pflref_hyper, eta_p),           /* η_p                      */
    offsetof(pflref_hyper, gamma_u),         /* γ_u                      */
    offsetof(pflref_hyper, gamma_v),         /* γ_v                      */
    offsetof(pflref_hyper, rho),             /* ρ                        */
    offsetof(pflref_hyper, pflego.beta),     /* PFLEGO's β               */
    offsetof(pflref_hyper, perfedavg.alpha), /* Per-FedAvg's α           */
    offsetof(pflref_hyper, perfedavg.beta),  /* Per-FedAvg's β           */
    offsetof(pflref_hyper, apfl.eta_alpha),  /* η_α (NaN: η, scaled)     */
    offsetof(pflref_hyper, ifca.gamma),      /* IFCA's γ                 */
    offsetof(pflref_hyper, fedpac.eta_phi),  /* FedPAC's η_φ (PFLlib
                                                clientpac.py:95-96: the one
                                                optimizer of both phases) */
};

/* c of the schedule after t scheduler steps: γ^t, γ^⌊t/step_rounds⌋ or
 * 1. */
static double lr_factor(const pflref_lr_hyper *lr, size_t t)
{
    size_t k = 0;
    if (lr->schedule == PFLREF_LR_EXPONENTIAL)
        k = t;
    else if (lr->schedule == PFLREF_LR_STEP && lr->step_rounds > 0)
        k = t / lr->step_rounds;
    double c = 1.0;
    for (size_t j = 0; j < k; j++)   /* γ · γ · … · γ (k factors) */
        c *= lr->gamma;
    return c;
}

/* out := base with its step sizes times c (lr.scope says which). */
static void scale_steps(const pflref_hyper *base, double c, pflref_hyper *out)
{
    if (base->lr.scope == PFLREF_LR_SCOPE_ETA_P) {
        out->eta_p = base->eta_p * c;            /* η_p ← η_p c_t */
        return;
    }
    for (size_t j = 0; j < sizeof STEP_SIZES / sizeof STEP_SIZES[0]; j++) {
        double *x = (double *)(void *)((char *)out + STEP_SIZES[j]);
        if (!isnan(*x))                          /* unset stays unset */
            *x *= c;                             /* step ← step c_t */
    }
    /* apfl.alpha_lr = constant: η_α ← η_α, or the undecayed η when unset
     * (PFLlib's alpha_update reads self.learning_rate) */
    /* lr.scope = no_beta: β ← β (PFLlib's step(beta=self.beta)) */
    if (base->lr.scope == PFLREF_LR_SCOPE_NO_BETA)
        out->perfedavg.beta = base->perfedavg.beta;
    if (base->apfl.alpha_lr == PFLREF_APFL_ALPHA_LR_CONSTANT)
        out->apfl.eta_alpha = isnan(base->apfl.eta_alpha) ? base->eta
                                                          : base->apfl.eta_alpha;
}

void pflref_round_hyper(const pflref_hyper *base, size_t t, pflref_hyper *out)
{
    *out = *base;
    if (base->lr.schedule == PFLREF_LR_CONSTANT)
        return;
    scale_steps(base, lr_factor(&base->lr, t), out);
}

double pflref_client_lr_factor(const pflref_state *s, size_t i, size_t call,
                               size_t calls)
{
    const pflref_hyper *base = s->hyper_base;
    /* k: the scheduler steps before this call (lr.count) */
    const size_t before = base->lr.count == PFLREF_LR_COUNT_TRAININGS
                              ? s->trained[i]   /* client i's own rounds */
                              : s->t;           /* the round t            */
    return lr_factor(&base->lr, calls * before + call);
}

void pflref_client_lr(pflref_state *s, size_t i, size_t call, size_t calls)
{
    const pflref_hyper *base = s->hyper_base;
    if (base->lr.schedule == PFLREF_LR_CONSTANT)
        return;
    s->hyper_round = *base;
    scale_steps(base, pflref_client_lr_factor(s, i, call, calls),
                &s->hyper_round);
}
