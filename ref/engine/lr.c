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
 * round a copy of the hyperparameters with the scaled step sizes, so no
 * algorithm knows about the decay.
 *
 * Deviations from PFLlib, which counts per client:
 *   a) PFLlib steps a client's scheduler when that client trains, so under
 *      partial participation a client's step is η γ^(rounds it trained);
 *      pflref decays with the round t (equal when every client trains in
 *      every round);
 *   b) Per-FedAvg's server calls train() twice per round, so PFLlib's
 *      second call already has the step η γ^(2t+1); not expressed;
 *   c) pFedMe's PFLlib scheduler wraps pFedMeOptimizer (η_p) only:
 *      lr.scope = eta_p.
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
};

/* c_t of the schedule: γ^t, γ^⌊t/step_rounds⌋ or 1. */
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

void pflref_round_hyper(const pflref_hyper *base, size_t t, pflref_hyper *out)
{
    *out = *base;
    if (base->lr.schedule == PFLREF_LR_CONSTANT)
        return;
    const double c = lr_factor(&base->lr, t);
    if (base->lr.scope == PFLREF_LR_SCOPE_ETA_P) {
        out->eta_p = base->eta_p * c;            /* η_p ← η_p c_t */
        return;
    }
    for (size_t j = 0; j < sizeof STEP_SIZES / sizeof STEP_SIZES[0]; j++) {
        double *x = (double *)(void *)((char *)out + STEP_SIZES[j]);
        if (!isnan(*x))                          /* unset stays unset */
            *x *= c;                             /* step ← step c_t */
    }
}
