/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/apfl_check.c: APFL's check before round 0
 * (ref/algorithms/apfl.c, docs/algorithms/apfl.md): α ∈ [0, 1], η_α not
 * under the fedtorch rule, the pfllib variant's paper values of apfl.mix,
 * apfl.alpha_rule and apfl.mix_uses_w, batch normalisation's running
 * statistics (bn.running = update and bn.aggregate = parameters_only under
 * the paper's variant), and output mixing's model and batch sizes. */
#include <math.h>
#include "algorithms/algorithms.h"
#include "engine/bn_own.h"

static int pfllib(const pflref_hyper *h)
{
    return h->apfl.variant == PFLREF_APFL_VARIANT_PFLLIB;
}

static int output_mix(const pflref_hyper *h)
{
    return h->apfl.mix == PFLREF_APFL_MIX_OUTPUT;
}

/* apfl.mix = output: a batch of at most *ctx samples (the largest data
 * set), whose outputs apfl_work holds. */
static pflref_status batch_fits(const void *ctx, size_t client,
                                const size_t *idx, size_t nb,
                                pflref_error *err)
{
    (void)client;
    (void)idx;
    const size_t cap = *(const size_t *)ctx;
    if (nb <= cap)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, NULL,
                            "apfl.mix = output keeps one batch's outputs, at "
                            "most %zu samples (the largest data set); this "
                            "batch has %zu",
                            cap, nb);
}

pflref_status pflref_apfl_check(const pflref_problem *problem,
                                const pflref_hyper *hyper,
                                const pflref_schedule *schedule,
                                const unsigned char *mask, pflref_error *err)
{
    (void)mask;
    const pflref_apfl_hyper *hp = &hyper->apfl;
    const double alpha = hp->alpha, eta_alpha = hp->eta_alpha;
    if (alpha > 1.0)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.alpha",
                                "alpha = %g: the mixing weight α must lie in "
                                "[0, 1]", alpha);
    if (hp->alpha_mode == PFLREF_APFL_ALPHA_ADAPTIVE &&
        hp->alpha_rule == PFLREF_APFL_RULE_FEDTORCH && !isnan(eta_alpha))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.hyperparameters.eta_alpha",
                                "apfl.alpha_rule = fedtorch steps α with the "
                                "model's learning rate η (FedTorch's "
                                "alpha_update); eta_alpha is not used by it");
    if (pfllib(hyper) && (output_mix(hyper) ||
                          hp->alpha_rule != PFLREF_APFL_RULE_PAPER ||
                          hp->mix_uses_w != PFLREF_APFL_MIX_W_OLD))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.apfl.variant",
                                "apfl.variant = pfllib trains v on its own "
                                "loss and has its own α rule: apfl.mix, "
                                "apfl.alpha_rule and apfl.mix_uses_w must "
                                "keep their paper values");
    /* Batch normalisation's running statistics (docs/algorithms/apfl.md):
     * under parameter mixing v's step is a training pass of a third
     * model, v̄, whose batch statistics no module's buffers own; under
     * output mixing v and w_i have their own passes (FedTorch's
     * inference_personal), but pflref_model_outputs is an evaluation-mode
     * pass, which has no batch statistics to move them by. */
    if (!pfllib(hyper) && problem->model.bn &&
        hyper->bn.running == PFLREF_BN_RUNNING_UPDATE)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.bn.running",
            "bn.running = update: %s; give \"bn.running\": \"frozen\", or "
            "apfl.variant = pfllib (v and w_i each train on their own passes, "
            "the shared local solver moves both)",
            output_mix(hyper)
                ? "apfl.mix = output takes v's and w_i's outputs in "
                  "evaluation-mode passes here, which have no batch "
                  "statistics to move their buffers by"
                : "apfl.variant = paper steps v at the mixture v̄ = α_i v + "
                  "(1 − α_i) w_i (Alg. 1 l. 6), a third model whose training "
                  "pass has batch statistics that belong to the buffers of "
                  "neither v nor w_i");
    /* bn.aggregate = parameters_only is PFLlib's exchange, read for its
     * variant only (apfl_round_keep) */
    if (!pfllib(hyper) && pflref_bn_keeps_own_in(problem, hyper))
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.bn.aggregate",
            "bn.aggregate = parameters_only is PFLlib's exchange of APFL's "
            "w_i (clientapfl.py with serverbase.py), read under apfl.variant "
            "= pfllib only: give \"apfl.variant\": \"pfllib\" (or the "
            "preset pfllib), or bn.aggregate = average");
    if (!output_mix(hyper))
        return PFLREF_OK;
    if (problem->model.kind == PFLREF_MODEL_QUADRATIC)
        return pflref_error_set(err, PFLREF_EINVAL, "algorithm.switches."
                                "apfl.mix",
                                "apfl.mix = output mixes the two models' "
                                "outputs, and model quadratic has none; use "
                                "a data model (linear, softmax, mlp) or "
                                "apfl.mix = parameter");
    const size_t cap = pflref_problem_max_n(problem);
    return pflref_schedule_walk(schedule, NULL, batch_fits, &cap, err);
}
