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
    {"ditto", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: serverditto.py train() "
     "calls send_models and aggregate_parameters; clientbase.py:67-69 "
     "set_parameters copies parameters() into self.model only (the global "
     "copy's running statistics persist per client; self.model_per is never "
     "set); serverbase.py:138-150 (the global's buffers are the first "
     "uploader's) (docs/algorithms/ditto.md)"},
    {"feddyn", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: clientdyn.py:65-67 "
     "set_parameters copies parameters() only (a device's running "
     "statistics persist); serverdyn.py:85-93 aggregate_parameters "
     "deep-copies uploaded_models[0] and averages and corrects parameters() "
     "only (θ^t's buffers are the first uploader's); :95-107 and "
     "clientdyn.py:43-54 keep h and ∇L_k over parameters() "
     "(docs/algorithms/feddyn.md)"},
    {"fedamp", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: serveramp.py:84-85 "
     "measures ‖w_i − w_j‖² over parameters(), :94-96 mixes parameters() "
     "into u_i; clientamp.py:57-59 set_parameters writes them into client_u "
     "only, :40-42's norm is over parameters(): each client's model keeps "
     "its own running statistics (docs/algorithms/fedamp.md)"},
    {"apple", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: clientapple.py:93-100 "
     "aggregate_parameters mixes parameters() only into the client's model, "
     "whose running statistics stay its own and move with its training "
     "passes; no core's statistics are read; :61-64 p_grad zips "
     "parameters() (docs/algorithms/apple.md)"},
    {"fedfomo", "bn.aggregate", "parameters_only",
     "TsingZ0/PFLlib d832e76f6a23 system/flcore: clientfomo.py:106-109 "
     "weight_cal measures ‖θ_n − φ_i‖ over parameters() only; :157-165 "
     "aggregate_parameters zeroes and sums self.model.parameters() only, so "
     "φ_i keeps the client's own running statistics (θ_i^{t−1}'s); "
     "serverfomo.py:110 keeps a deepcopy of each whole upload "
     "(docs/algorithms/fedfomo.md)"},
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
    {"apple", "apple.stale", "initial",
     "the paper's limited-bandwidth setting (Luo and Wu, IJCAI 2022) does "
     "not say which copy a core not downloaded this round is; a client "
     "that keeps no copy of its own reads w⁰ there (the authors' code, "
     "ljaiverson/pFL-APPLE 8078196731b5 utils/apple.py:34-37, keeps the "
     "last download: the default) (docs/algorithms/apple.md)"},
    {"apple", "apple.peers", "sequential",
     "TsingZ0/PFLlib d832e76f6a23 serverapple.py:46-47, :84 (every client "
     "trains in turn; the list sent holds the clients' model_c objects), "
     "clientapple.py:55-56 (the own core stepped in place), :74-75 (its "
     "restore copies model_c onto itself)"},
    /* The client optimizer, the learning-rate schedule and batch
     * normalisation's running statistics: the same code for every
     * algorithm (docs/optimizers.md, docs/models.md) */
    {"", "opt.method", "adam",
     "torch.optim.Adam (_single_tensor_adam: bias-corrected step_size and "
     "denominator; docs/optimizers.md)"},
    {"", "opt.method", "adamw",
     "torch.optim.AdamW (decoupled decay param.mul_(1 - lr * "
     "weight_decay); Loshchilov & Hutter, ICLR 2019, Alg. 2)"},
    {"", "opt.momentum_form", "classical",
     "Polyak 1964; Sutskever, Martens, Dahl, Hinton, ICML 2013, eq. (1)-(2): "
     "v ← μ v − η d, θ ← θ + v (docs/optimizers.md)"},
    {"", "opt.nesterov", "on",
     "torch.optim.SGD(nesterov=True), its documented algorithm "
     "(docs/optimizers.md)"},
    {"", "opt.weight_decay_form", "decoupled",
     "torch.optim.AdamW's form applied to SGD: θ ← θ(1 − η "
     "λ) before the step (docs/optimizers.md)"},
    {"", "opt.decay_scope", "weights",
     "the no-decay parameter group of common training code: no weight "
     "decay on biases and batch-norm parameters (docs/optimizers.md)"},
    {"", "opt.decay_scope", "shared",
     "weight decay on the split's shared blocks only: one parameter group "
     "per split part (docs/optimizers.md)"},
    {"", "opt.decay_scope", "personal",
     "weight decay on the split's personal blocks only: one parameter "
     "group per split part (docs/optimizers.md)"},
    {"", "opt.clip", "norm",
     "torch.nn.utils.clip_grad_norm_ between backward() and step() "
     "(docs/optimizers.md)"},
    {"", "opt.state", "client",
     "TsingZ0/PFLlib clientbase.py: self.optimizer built once in __init__ "
     "and kept across rounds (docs/optimizers.md)"},
    {"", "opt.state", "server",
     "no published code: a simulation defect, one optimizer object reused "
     "for every client in training order (docs/optimizers.md)"},
    {"", "lr.schedule", "step",
     "torch.optim.lr_scheduler.StepLR(step_size = lr.step_rounds, gamma = "
     "lr.gamma) stepped once per round (docs/optimizers.md)"},
    {"", "lr.scope", "eta_p",
     "TsingZ0/PFLlib clientpfedme.py: the -ld scheduler wraps the "
     "pFedMeOptimizer, whose lr is the personal rate η_p "
     "(docs/algorithms/pfedme.md)"},
    {"", "lr.scope", "no_beta",
     "TsingZ0/PFLlib clientperavg.py: step(beta=self.beta), a float set "
     "once in __init__, so -ld never decays β (docs/algorithms/"
     "perfedavg.md)"},
    {"", "bn.running", "frozen",
     "torch.nn.BatchNorm1d/2d with momentum = 0: the forward normalises "
     "with the batch statistics and leaves the running ones (docs/"
     "models.md)"},
    {"", "bn.running_var", "biased",
     "the biased batch variance s²_B fed to the running variance "
     "(PyTorch feeds M/(M − 1) s²_B; docs/models.md)"},
    /* FedAvg's server weights (docs/algorithms/fedavg.md, Switches), for
     * every algorithm whose rounds are FedAvg's */
    {"", "fedavg.weights", "uniform",
     "1/m: the Per-FedAvg paper, pFedMe's Algorithm 1, Ditto's TensorFlow "
     "code and FedTorch (spec notes 1(f); docs/algorithms/fedavg.md)"},
    {"", "fedavg.weights", "all_keep_old",
     "the normaliser over all K clients of the early arXiv version, absent "
     "clients contributing the old model (omarfoq/FedEM issue #1; "
     "docs/algorithms/fedavg.md)"},
    {"finetune", "finetune.scope", "personal",
     "fine-tuning only the split's personal blocks, the shared ones fixed "
     "at w (docs/algorithms/finetune.md)"},
    {"prox", "pfedme.theta_start", "warm",
     "CharlieDinh/pFedMe and TsingZ0/PFLlib: the personal model θ is "
     "kept from the client's previous round (pFedMe's presets official and "
     "pfllib; docs/algorithms/prox.md)"},
    {"fedbn", "fedbn.bn", "shared",
     "the FedBN authors' FedAvg baseline, --mode fedavg (fed_digits.py:"
     "176-188): γ, β and the running statistics averaged"},
    {"fedbn", "fedbn.running_var", "biased",
     "the biased batch variance s²_B (the authors' code and PyTorch feed "
     "n_b/(n_b − 1) s²_B; notes 1.3, A5)"},
    /* FedAlt and FedSim (docs/algorithms/fedalt-fedsim.md, Switches) */
    {"", "pfl.state", "stateless",
     "the paper's App. C.4 (devices that keep no state); "
     "facebookresearch/FL_partial_personalization --stateless_clients"},
    {"", "pfl.weights", "uniform",
     "Alg. 1 line 8 of the main text; FedRep's (1/rn) Σ; the FedBABU and "
     "LG-FedAvg repositories' plain mean over the sampled devices"},
    {"", "pfl.weights", "batches",
     "facebookresearch/FL_partial_personalization: weights by "
     "len(client_loader) (notes P1)"},
    {"", "pfl.finetune", "full",
     "FedBABU: the whole model fine-tuned after training (notes B3)"},
    {"", "pfl.finetune_start", "last_local",
     "TsingZ0/PFLlib d832e76f6a23 serverbabu.py, train: fine_tune() on "
     "every client after the last round, no send_models before it"},
    {"", "pfl.finetune_lr", "decayed",
     "TsingZ0/PFLlib d832e76f6a23 clientbabu.py, fine_tune: the client's "
     "own optimizer, whose lr -ld decayed once per train()"},
    /* PFLEGO (docs/algorithms/pflego.md) */
    {"pflego", "pflego.head_step", "exact_alpha",
     "the gradient of eq. (4) with α_i kept: −ρ(I/r) α_i G_i "
     "(docs/algorithms/pflego.md; the seed's step is the I-times form)"},
    {"pflego", "pflego.theta_weights", "sampled_normalised",
     "the PFLEGO authors' code (l. 1454-1459): α_i replaced by N_i / "
     "Σ_{I_t} N_j (notes F2)"},
    {"pflego", "pflego.server", "adam",
     "the PFLEGO authors' code, --optimizer adam by default: JAX "
     "optimizers.adam (b1 = 0.9, b2 = 0.999, eps = 10⁻⁸; notes F3)"},
    {"perfedavg", "perfedavg.variant", "hf",
     "Fallah, Mokhtari, Ozdaglar 2020, the paper's second estimate: the "
     "Hessian-vector product by a central difference of radius δ"},
    /* Interpolation (docs/algorithms/interp.md) */
    {"interp", "interp.alpha", "per_client_grid",
     "Mansour et al.'s interpolation with α chosen per client on the "
     "grid j/G (docs/algorithms/interp.md)"},
    {"interp", "interp.select", "test",
     "the textbook's Exercise 14.7.2, which reads the best α off the "
     "test-error curve (docs/algorithms/interp.md)"},
    {"cfl", "cfl.bipartition", "complete_linkage",
     "the CFL authors' notebook: sklearn AgglomerativeClustering(affinity="
     "\"precomputed\", linkage=\"complete\").fit(-S) (docs/algorithms/"
     "cfl.md)"},
    {"cfl", "cfl.cluster_weights", "samples",
     "Algorithm 2's FL sub-routine, |D_i|/|D_c|; omarfoq/FedEM's port "
     "(docs/algorithms/cfl.md)"},
    {"ifca", "ifca.mode", "model",
     "Ghosh et al. 2020, Algorithm 2, Option II (model averaging; the "
     "authors' code's experiments)"},
    {"ifca", "ifca.estimate_mode", "eval",
     "Gerid/FedDCA @ 88c5187 system/flcore/clients/clientifca.py:56-61 "
     "(model.eval(), torch.no_grad(); argmin :82): F_i(θ_j) in "
     "evaluation mode (docs/algorithms/ifca.md)"},
    /* FedFomo (docs/algorithms/fedfomo.md) */
    {"fedfomo", "fedfomo.distance", "l2_squared",
     "NVlabs/FedFomo utils.py:143-176, the distance the code calls l2 "
     "(squared Euclidean)"},
    {"fedfomo", "fedfomo.distance", "l2_per_tensor_sum",
     "NVlabs/FedFomo utils.py:143-176, the code's l2_root: the sum over "
     "the model's tensors of their Euclidean norms"},
    {"fedfomo", "fedfomo.self", "excluded",
     "the M downloaded models only, the client's own upload not a "
     "candidate (docs/algorithms/fedfomo.md)"},
    {"fedfomo", "fedfomo.val_mode", "eval",
     "NVlabs/FedFomo @ fe04f66 federation.py:163-166 (eval() on "
     "the baseline and each comparison model) and federated/train.py:81: "
     "L_i in evaluation mode, BN on the running statistics, no dropout"},
    {"fedfomo", "fedfomo.anchor", "post_train",
     "an earlier reading of PFLlib's old_model (the former pfllib preset): "
     "θ_i where the last training ended (docs/algorithms/fedfomo.md)"},
    {"pfedhn", "pfedhn.hn_bias", "off",
     "pFedHN's linear analysis form θ_i = W_h v_i (notes 4.1; "
     "docs/algorithms/pfedhn.md)"},
    /* Low-rank adapters (docs/algorithms/lora.md) */
    {"lora", "lora.method", "ffa",
     "FFA-LoRA (Sun, Li, Li, Ding, ICLR 2024): A frozen at its start, B "
     "trained and averaged (docs/algorithms/lora.md)"},
    {"lora", "lora.method", "fedavg",
     "the naive FedAvg of A and B that FFA-LoRA's paper sets against "
     "(docs/algorithms/lora.md)"},
    {"lora", "lora.method", "hetlora",
     "HetLoRA (Cho et al., 2024): heterogeneous ranks, zero-padded "
     "sparsity-weighted aggregation (docs/algorithms/lora.md)"},
    {"lora", "lora.targets", "head",
     "adapters on the output layer only (docs/algorithms/lora.md)"},
    {"lora", "lora.targets", "input",
     "adapters on the input layer only (docs/algorithms/lora.md)"},
    {"lora", "lora.weights", "uniform",
     "1/m: the plain mean of the sampled clients' adapters "
     "(docs/algorithms/lora.md)"},
    {"lora", "hetlora.weights", "uniform",
     "HetLoRA's zero-padding baseline, a plain mean (docs/algorithms/"
     "lora.md)"},
    {"lora", "hetlora.weights", "samples",
     "n_k/Σ n_j in place of HetLoRA's sparsity weights "
     "(docs/algorithms/lora.md)"},
    {"lora", "hetlora.scaling", "alpha",
     "loralib's scaling α/r_max applied to B A (docs/algorithms/"
     "lora.md)"},
    {"feddyn", "feddyn.h_sum", "literal",
     "Algorithm 1 line 10 with its parenthesis as printed, (Σ θ_k^t) "
     "− θ^{t−1}; FedLab contrib/algorithm/feddyn.py"},
    {"scaffold", "scaffold.option", "I",
     "Karimireddy et al. 2020, Alg. 1 l. 12, option (i): ∇f_i(x), the gradient at x "
     "over the client's whole training set"},
    /* FedRecon (docs/algorithms/fedrecon.md) */
    {"fedrecon", "fedrecon.local_init", "last",
     "stateful clients, l_i kept from the last visit (as FedAlt's v_i), "
     "against the paper's 3 and TFF's fresh model_fn() per call"},
    {"fedrecon", "fedrecon.weights", "uniform",
     "TFF reconstruction training_process.py, client_weighting UNIFORM"},
    {"fedrecon", "fedrecon.weights", "examples",
     "TFF reconstruction training_process.py, client_weighting "
     "NUM_EXAMPLES (num_examples_sum of the post-reconstruction pass)"},
    {"fedrecon", "fedrecon.query", "whole",
     "TFF reconstruction_utils.py simple_dataset_split_fn / "
     "build_dataset_split_fn(split_dataset=False): support = query = D_i"},
    {"fedrecon", "fedrecon.eval", "kept",
     "evaluation of (g, l_i) as the last visit left it, without the "
     "paper's and TFF evaluation_computation.py's reconstruction"},
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
