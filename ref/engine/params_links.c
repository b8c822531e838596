/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_links.c: what the registry (params.c, presets.c) says
 * about a switch value beyond its spelling, for `pflref diagnose`
 * (ref/oracle/diagnose.c; docs/cli.md, "diagnose"):
 *
 *   the source of a value   the code a non-paper switch value reproduces:
 *                           the table below where a page of docs/algorithms
 *                           names it, else the source of a preset of the
 *                           algorithm that sets exactly that value, else
 *                           NULL (values[0] is "the paper")
 *   links                   a parameter whose change needs another's to
 *                           change anything: lr.schedule without a decay
 *                           factor γ ≠ 1 is the constant schedule (PFLlib's
 *                           -ld comes with -ldg, 0.99 by default: main.py
 *                           l. 402-403), so a probe of the one alone proves
 *                           nothing; ditto.batches = separate is refused
 *                           without ditto.order = personal_first
 */
#include <stdio.h>
#include <string.h>
#include "pflref/algorithm.h"

/* Sources of switch values the presets do not set, as the algorithm
 * pages' tables name them (docs/algorithms/<alg>.md, "Switches"). */
static const pflref_value_source value_sources[] = {
    {"", "opt.state", "client",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientbase.py:47: "
     "each client's torch.optim.SGD is made once in __init__ and steps in "
     "every train() of that client, so its state (momentum buffers) "
     "persists across rounds (docs/optimizers.md)"},
    {"fedavg", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: clientbase.py:67-69 "
     "set_parameters copies model.parameters() only (a client's running "
     "statistics persist); serverbase.py:138-150 aggregate_parameters "
     "deep-copies uploaded_models[0] and averages parameters() only (the "
     "global's buffers are the first uploader's) (docs/models.md)"},
    {"ditto", "ditto.prox", "norm",
     "s-huu/Ditto, the authors' PyTorch code (StackOverflow experiments): "
     "λ‖v − w‖ (docs/algorithms/ditto.md)"},
    {"ditto", "ditto.prox_ref", "moving",
     "s-huu/Ditto (PyTorch): the personal step's reference is the device's "
     "global copy as it is being updated (docs/algorithms/ditto.md)"},
    {"ditto", "ditto.weights", "uniform",
     "litian96/ditto (TensorFlow): the simple mean of the global copies "
     "(docs/algorithms/ditto.md)"},
    {"ditto", "ditto.order", "personal_first",
     "TsingZ0/PFLlib clientditto.py: ptrain() runs before train() "
     "(docs/algorithms/ditto.md)"},
    {"ditto", "ditto.batches", "separate",
     "TsingZ0/PFLlib clientditto.py: ptrain() iterates its own loader for "
     "-pls epochs (docs/algorithms/ditto.md)"},
    {"", "lr.schedule", "exponential",
     "TsingZ0/PFLlib -ld (main.py l. 402): ExponentialLR(gamma = -ldg) "
     "stepped after each client's training (docs/algorithms/fedavg.md)"},
    {"", "lr.count", "trainings",
     "TsingZ0/PFLlib: each client's scheduler steps when it trains "
     "(docs/algorithms/fedavg.md, learning-rate decay)"},
    {"pfedme", "pfedme.train", "sampled",
     "TsingZ0/PFLlib and FL-bench: sample first, train only the sampled "
     "clients (PFLlib issue #170; docs/algorithms/pfedme.md)"},
    {"pfedme", "pfedme.weights", "samples",
     "CharlieDinh/pFedMe's server: weights by sample counts "
     "(docs/algorithms/pfedme.md)"},
    {"perfedavg", "perfedavg.variant", "fo",
     "the pFedMe repository and TsingZ0/PFLlib (issue #107: first order "
     "only; docs/algorithms/perfedavg.md)"},
    {"perfedavg", "perfedavg.weights", "samples",
     "the pFedMe repository's shared server class; TsingZ0/PFLlib "
     "(docs/algorithms/perfedavg.md)"},    /* APPLE (docs/algorithms/apple.md): each value's own lines */
    {"apple", "apple.scheduler", "exponential",
     "ljaiverson/pFL-APPLE 8078196731b5 utils/losses.py:18-21 get_reg_coef "
     "(0.001^{r/L}; the default of utils/utils.py:37)"},
    {"apple", "apple.prox", "full",
     "ljaiverson/pFL-APPLE 8078196731b5 utils/losses.py:4-6 reg_loss "
     "(coef ‖p − p0‖², no ½)"},
    {"apple", "apple.p_init", "uniform",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:22 (ps = 1/N)"},
    {"apple", "apple.order", "core_first",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:55-66 (the own core steps "
     "before p's gradient reads it)"},
    {"apple", "apple.p_grad", "block_mean",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:58-64 (mean of "
     "torch.mean(grad * param_c) over the parameter tensors)"},
    {"apple", "apple.core_lr", "n_eta",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:18 (learning_rate × "
     "num_clients)"},
    {"apple", "apple.lambda_round", "previous",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:15, :68-71 (λ = 1, then "
     "set after each round's training)"},
    {"apple", "apple.upload", "mixture",
     "TsingZ0/PFLlib d832e76f6a23 clientapple.py:77 (model_c = "
     "copy.deepcopy(self.model): the mixture of the last step's start)"},
    {"apple", "apple.peers", "sequential",
     "TsingZ0/PFLlib d832e76f6a23 serverapple.py:46-47, :84 (every client "
     "trains in turn; the list sent holds the clients' model_c objects), "
     "clientapple.py:55-56 (the own core stepped in place), :74-75 (its "
     "restore copies model_c onto itself)"},
};

static const pflref_param_link links[] = {
    {"lr.schedule", "lr.gamma", "0.99 0.5",
     "a schedule decays only with γ ≠ 1 (PFLlib -ld with -ldg, default "
     "0.99)"},
    {"lr.schedule", "lr.count", "trainings",
     "PFLlib's -ld counts each client's own trainings"},
    {"ditto.batches", "ditto.order", "personal_first",
     "separate personal lists need the personal pass first (PFLlib's "
     "ptrain() before train(); docs/algorithms/ditto.md)"},
    /* the client optimizer's switches that change nothing under plain SGD
     * (μ = λ = 0): tried with torch's usual μ = 0.9, λ = 5·10⁻⁴ (issue
     * 31's torch.optim.SGD(momentum=0.9, weight_decay=5e-4)) */
    {"opt.state", "opt.momentum", "0.9",
     "a kept optimizer state is a momentum buffer: plain SGD has none"},
    {"opt.nesterov", "opt.momentum", "0.9",
     "Nesterov's step needs a momentum μ > 0"},
    {"opt.momentum_form", "opt.momentum", "0.9",
     "the two momentum forms differ only with μ > 0"},
    {"opt.weight_decay_form", "opt.weight_decay", "0.0005",
     "the decay's form matters only with λ > 0"},
    {"opt.decay_scope", "opt.weight_decay", "0.0005",
     "the decay's blocks matter only with λ > 0"},
};

const pflref_value_source *pflref_value_sources(size_t *count)
{
    *count = sizeof value_sources / sizeof value_sources[0];
    return value_sources;
}

const pflref_param_link *pflref_param_links(size_t *count)
{
    *count = sizeof links / sizeof links[0];
    return links;
}

/* 1 when the preset's settings hold the token "name=value". */
static int preset_sets(const pflref_preset *pr, const char *name,
                       const char *value)
{
    char tok[160];
    snprintf(tok, sizeof tok, "%s=%s", name, value);
    const size_t n = strlen(tok);
    for (const char *p = pr->settings; (p = strstr(p, tok)) != NULL; p += n)
        if ((p == pr->settings || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

const char *pflref_param_value_source(const char *alg, const char *name,
                                      const char *value)
{
    const pflref_param *p = pflref_param_find_for(name, alg);
    if (p != NULL && p->type == PFLREF_PARAM_ENUM &&
        strcmp(p->values[0], value) == 0)
        return "the paper";
    size_t n;
    const pflref_value_source *vs = pflref_value_sources(&n);
    for (size_t i = 0; i < n; i++)
        if ((vs[i].algorithm[0] == '\0' ||
             strcmp(vs[i].algorithm, alg) == 0) &&
            strcmp(vs[i].name, name) == 0 && strcmp(vs[i].value, value) == 0)
            return vs[i].source;
    const pflref_preset *pr = pflref_presets(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(pr[i].algorithm, alg) == 0 && preset_sets(&pr[i], name,
                                                             value))
            return pr[i].source;
    return NULL;
}
