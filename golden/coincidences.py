#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/coincidences.py: the coincidence audit of the golden vectors.

    /usr/bin/python3 golden/coincidences.py [-q] [GOLDEN_DIR]
    /usr/bin/python3 golden/coincidences.py --self-test

A vector in which two quantities that a wrong implementation might confuse
happen to be equal cannot catch the confusion: equal step sizes of two
different steps, equal client sizes where the average weights by size,
β = 1 or λ = 1 where a missing factor then vanishes, a single round where
state carries across rounds, a model whose Hessian is constant where the
Hessian matters, a decision exactly on a threshold.  For every vector this
script lists such coincidences, by the rules in RULES (per algorithm, some
only under a switch value, each with its reason), then says, per algorithm
and per value of each of its switches, whether at least one vector is free
of all of them.

Three further tables (issue 33 §3): in every vector of an aggregating
algorithm the clients one mean weighs have distinct sizes, whatever the
weighting mode, or the vector is listed in SIZES_HARMLESS with its argument
and the mode has a witness (WEIGHTING, sizes_audit); per algorithm, one
vector free of each schedule coincidence in ALG_RULES (drawn ↔ clients,
post ↔ batches, batches by position ↔ by id), or a SCHEDULE_GAPS entry; and
golden/boundaries.py's table of decisions at their thresholds.  And SWITCHES
and PRESETS against the registry (docs/variants.md): every switch value it
declares is audited, every preset read as it sets its switches
(registry_audit; --self-test plants each drift and fails unless caught).
The shared switches (opt.*, bn.*, lr.*) per algorithm: every (algorithm,
switch, value) the registry declares has a vector of that algorithm free of
SHARED_RULES' coincidences, or a SHARED_EXCEPTIONS entry (inherent, or not
yet covered with a witness: another algorithm's coincidence-free vector of
the value); shared_audit, planted in --self-test.

Exit 1 when an algorithm/switch value has no coincidence-free vector and is
not listed in EXCEPTIONS (with the reason the coincidence is inherent, or
"not yet covered"), one of the three tables or the registry check has a
problem; exit 2 on a usage error.  -q prints only the summary.
"""
import glob
import json
import os
import sys
from decimal import Decimal
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pflref_exact  # noqa: E402 (after the path is set)

# --------------------------------------------------------------------------
# What each algorithm reads: its switches (the paper's default first), the
# presets (pflref list), and the hyperparameters' defaults where a default
# can coincide with something.

SWITCHES = {
    "fedavg": {"fedavg.weights": ["samples", "uniform", "all_keep_old"],
               "lr.count": ["rounds", "trainings"]},
    "local": {"lr.count": ["rounds", "trainings"]},
    "finetune": {"fedavg.weights": ["samples", "uniform", "all_keep_old"],
                 "finetune.scope": ["full", "personal"]},
    "prox": {"pfedme.theta_start": ["reset", "warm"]},
    "pfedme": {"pfedme.theta_start": ["reset", "warm"],
               "pfedme.weights": ["uniform", "samples"],
               "pfedme.train": ["all", "sampled"],
               "pfedme.personal_eval": ["theta", "local_w", "global"],
               "pfedme.eval_reset": ["none", "initial"],
               "lr.count": ["rounds", "trainings"]},
    "ditto": {"ditto.order": ["interleaved_shared_batch", "personal_first"],
              "ditto.prox": ["squared", "norm"],
              "ditto.prox_ref": ["round_start", "moving"],
              "ditto.weights": ["samples", "uniform"],
              "ditto.batches": ["shared", "separate"],
              "lr.count": ["rounds", "trainings"]},
    "fedalt": {"pfl.state": ["stateful", "stateless"],
               "pfl.weights": ["samples", "uniform", "batches"],
               "pfl.finetune": ["personal", "full"],
               "pfl.finetune_start": ["global", "last_local"],
               "pfl.finetune_lr": ["constant", "decayed"],
               "lr.count": ["rounds", "trainings"]},
    "fedsim": {"pfl.state": ["stateful", "stateless"],
               "pfl.weights": ["samples", "uniform", "batches"],
               "pfl.finetune": ["personal", "full"],
               "pfl.finetune_start": ["global", "last_local"],
               "pfl.finetune_lr": ["constant", "decayed"],
               "lr.count": ["rounds", "trainings"]},
    "pflego": {"pflego.head_step": ["seed", "exact_alpha"],
               "pflego.theta_weights": ["global", "sampled_normalised"],
               "pflego.server": ["sgd", "adam"]},
    "perfedavg": {"perfedavg.variant": ["exact", "fo", "hf"],
                  "perfedavg.weights": ["uniform", "samples"],
                  "perfedavg.eval": ["one_alpha_step", "alpha_then_beta"],
                  "perfedavg.calls": ["one", "two"],
                  "perfedavg.eval_lr": ["initial", "decayed"],
                  "perfedavg.opt_steps": ["meta", "both"],
                  "lr.scope": ["all", "no_beta", "eta_p"],
                  "lr.count": ["rounds", "trainings"]},
    "apfl": {"apfl.alpha": ["fixed", "adaptive"],
             "apfl.mix": ["parameter", "output"],
             "apfl.mix_uses_w": ["old", "new"],
             "apfl.alpha_rule": ["paper", "fedtorch"],
             "apfl.variant": ["paper", "pfllib"],
             "apfl.weights": ["uniform", "samples"],
             "apfl.alpha_lr": ["decayed", "constant"],
             "lr.count": ["rounds", "trainings"]},
    "interp": {"fedavg.weights": ["samples", "uniform", "all_keep_old"],
               "interp.alpha": ["fixed", "per_client_grid"],
               "interp.select": ["validation", "test"]},
    "cfl": {"cfl.bipartition": ["optimal", "complete_linkage"],
            "cfl.cluster_weights": ["uniform", "samples"]},
    "ifca": {"ifca.mode": ["gradient", "model"],
             "ifca.estimate_mode": ["train", "eval"]},
    "fedfomo": {"fedfomo.distance": ["l2", "l1", "l2_squared", "l2_per_tensor_sum"],
                "fedfomo.self": ["included", "excluded", "ranked"],
                "fedfomo.selection": ["eps_greedy", "topM"],
                "fedfomo.P_update": ["weights", "signed_abs_sum", "raw"],
                "fedfomo.P_init": ["zeros", "own_0.1", "identity"],
                "fedfomo.no_positive": ["anchor", "keep_current"],
                "fedfomo.anchor": ["pre_train", "post_train"],
                "fedfomo.M_counts": ["others", "total"],
                "fedfomo.val_loss": ["sample_mean", "batch_mean"],
                "fedfomo.val_mode": ["train", "eval"],
                "lr.count": ["rounds", "trainings"]},
    "fedbn": {"fedbn.weights": ["uniform", "samples"],
              "fedbn.bn": ["local", "shared"],
              "fedbn.running_var": ["unbiased", "biased"]},
    "pfedhn": {"pfedhn.hn_bias": ["on", "off"],
               "pfedhn.outer_opt": ["sgd", "sgd_momentum_wd"],
               "pfedhn.inner_opt": ["sgd", "sgd_momentum_wd"],
               "pfedhn.clip": ["off", "norm"]},
    "lora": {"lora.method": ["personal", "ffa", "fedavg", "hetlora"],
             "lora.targets": ["all", "head", "input"],
             "lora.weights": ["samples", "uniform"],
             "hetlora.weights": ["sparsity", "uniform", "samples"],
             "hetlora.scaling": ["none", "alpha"]},
    "feddyn": {"feddyn.alpha_k": ["uniform", "size_scaled"],
               "feddyn.prox": ["squared", "norm_half"],
               "feddyn.h_sum": ["differences", "literal"]},
    "scaffold": {"scaffold.option": ["II", "I"],
                 "scaffold.c_lr": ["round", "initial"],
                 "scaffold.bn_global": ["first_upload", "previous"],
                 "lr.count": ["rounds", "trainings"]},
    "moon": {"moon.passes": ["eval", "train"]},
    "fedprox": {"fedprox.sampling": ["paper", "uniform_weighted"],
                "lr.count": ["rounds", "trainings"]},
    "fedrecon": {"fedrecon.local_init": ["given", "last"],
                 "fedrecon.weights": ["samples", "uniform", "examples"],
                 "fedrecon.query": ["complement", "whole"],
                 "fedrecon.eval": ["reconstruct", "kept"]},
    "fedamp": {"fedamp.peers": ["all", "previous"],
               "fedamp.start": ["message", "own"],
               "fedamp.prox": ["squared", "detached"]},
    "fedproto": {"fedproto.distance": ["squared_l2", "mse"],
                 "fedproto.client_protos": ["trained", "during_training"],
                 "fedproto.weights": ["class_counts", "uniform"]},
    "fedrod": {"fedrod.features": ["after", "before"],
               "fedrod.phi_p0": ["zero", "generic"]},
    "apple": {"apple.scheduler": ["cosine", "exponential"],
              "apple.prox": ["half", "full"],
              "apple.p_init": ["samples", "uniform"],
              "apple.order": ["joint", "core_first"],
              "apple.p_grad": ["inner", "block_mean"],
              "apple.core_lr": ["eta", "n_eta"],
              "apple.lambda_round": ["current", "previous"],
              "apple.upload": ["core", "mixture"],
              "apple.peers": ["snapshot", "sequential"],
              "apple.stale": ["last_download", "initial"]},
    "fedala": {"fedala.skip": ["first_round", "sum_first"],
               "fedala.p_unit": ["layers", "tensors"],
               "fedala.ala_clients": ["participants", "all"],
               "fedala.start": ["round2", "own"],
               "fedala.ala_mode": ["train", "pfllib"]},
    "fedpac": {"fedpac.distance": ["squared_l2", "mse"],
               "fedpac.alpha_small": ["exact", "renormalised", "raw"],
               "fedpac.missing": ["none", "own_start"],
               "fedpac.centroid_weights": ["class_counts", "uniform"]},
}

# The presets as the spec reader applies them: pFedMe's and Ditto's are the
# exact replay's (pflref_exact.PRESETS); the partial-personalisation ones
# are listed here.
PRESETS = {
    **pflref_exact.PRESETS,
    ("fedavg", "pfllib"): {"fedavg.weights": "samples", "lr.count": "trainings"},
    ("local", "pfllib"): {"lr.count": "trainings"},
    ("fedalt", "fedrep"): {"pfl.state": "stateful", "pfl.weights": "uniform",
                           "pfl.finetune": "personal"},
    ("fedsim", "fedper"): {"pfl.state": "stateful", "pfl.weights": "samples",
                           "pfl.finetune": "personal"},
    ("fedsim", "fedper_pfllib"): {"pfl.state": "stateful",
                                  "pfl.weights": "samples",
                                  "pfl.finetune": "personal",
                                  "lr.count": "trainings"},
    ("fedsim", "lg_fedavg_pfllib"): {"pfl.state": "stateful",
                                     "pfl.weights": "samples",
                                     "pfl.finetune": "personal",
                                     "lr.count": "trainings"},
    ("fedsim", "fedbabu_pfllib"): {"gamma_v": 0.0, "pfl.state": "stateful",
                                   "pfl.weights": "samples",
                                   "pfl.finetune": "full",
                                   "lr.count": "trainings",
                                   "pfl.finetune_start": "last_local",
                                   "pfl.finetune_lr": "decayed"},
    ("fedalt", "fedrep_pfllib"): {"pfl.state": "stateful",
                                  "pfl.weights": "samples",
                                  "pfl.finetune": "personal",
                                  "lr.count": "trainings"},
    ("fedsim", "lg_fedavg"): {"pfl.state": "stateful", "pfl.weights": "samples",
                              "pfl.finetune": "personal"},
    ("fedsim", "fedbabu"): {"gamma_v": 0.0, "pfl.state": "stateful",
                            "pfl.weights": "samples", "pfl.finetune": "full"},
    ("perfedavg", "pfedme_repo"): {"perfedavg.variant": "fo",
                                   "perfedavg.weights": "samples",
                                   "perfedavg.eval": "alpha_then_beta"},
    ("perfedavg", "pfllib"): {"perfedavg.variant": "fo",
                              "perfedavg.weights": "samples",
                              "perfedavg.eval": "one_alpha_step",
                              "perfedavg.calls": "two",
                              "lr.count": "trainings",
                              "lr.scope": "no_beta",
                              "perfedavg.eval_lr": "decayed",
                              "perfedavg.opt_steps": "both"},
    ("apfl", "fedtorch"): {"apfl.mix": "output", "apfl.mix_uses_w": "new",
                           "apfl.alpha_rule": "fedtorch"},
    ("pfedhn", "official"): {"pfedhn.outer_opt": "sgd_momentum_wd",
                             "pfedhn.inner_opt": "sgd_momentum_wd",
                             "pfedhn.clip": "norm"},
    ("apfl", "pfllib"): {"apfl.variant": "pfllib", "apfl.weights": "samples",
                         "apfl.alpha": "adaptive", "lr.count": "trainings",
                         "apfl.alpha_lr": "constant"},
    ("feddyn", "official"): {"feddyn.alpha_k": "size_scaled",
                             "opt.weight_decay": 0.001},
    ("feddyn", "pfllib"): {"feddyn.prox": "norm_half"},
    ("scaffold", "pfllib"): {"scaffold.option": "II",
                             "scaffold.c_lr": "initial",
                             "lr.count": "trainings",
                             "scaffold.bn_global": "previous"},
    ("moon", "official"): {"opt.momentum": 0.9, "opt.weight_decay": 0.00001},
    ("moon", "pfllib"): {"lr.count": "trainings", "moon.passes": "train"},
    ("fedprox", "official"): {"fedprox.sampling": "uniform_weighted"},
    ("fedprox", "pfllib"): {"fedprox.sampling": "uniform_weighted",
                            "lr.count": "trainings"},
    ("fedamp", "pfllib"): {"fedamp.peers": "previous", "fedamp.start": "own",
                           "fedamp.prox": "detached"},
    ("fedproto", "official"): {"fedproto.distance": "mse",
                               "fedproto.client_protos": "during_training",
                               "fedproto.weights": "uniform",
                               "opt.momentum": 0.5},
    ("fedproto", "pfllib"): {"fedproto.distance": "mse",
                             "fedproto.client_protos": "during_training",
                             "fedproto.weights": "uniform",
                             "lr.count": "trainings"},
    ("fedfomo", "official"): {"fedfomo.distance": "l1",
                              "fedfomo.self": "included",
                              "fedfomo.P_update": "signed_abs_sum",
                              "fedfomo.P_init": "own_0.1",
                              "fedfomo.M_counts": "total",
                              "fedfomo.epsilon0": 0.3, "fedfomo.delta": 0.05,
                              "fedfomo.val_mode": "eval"},
    ("fedfomo", "pfllib"): {"fedfomo.distance": "l2",
                            "fedfomo.self": "ranked",
                            "fedfomo.selection": "topM",
                            "fedfomo.P_update": "raw",
                            "fedfomo.P_init": "identity",
                            "fedfomo.anchor": "pre_train",
                            "fedfomo.no_positive": "keep_current",
                            "fedfomo.val_loss": "batch_mean",
                            "lr.count": "trainings",
                            "fedfomo.distance_eps": 1e-5},
    ("fedbn", "pfllib"): {"fedbn.weights": "samples", "lr.count": "trainings"},
    ("fedrod", "pfllib"): {"fedrod.features": "before",
                           "fedrod.phi_p0": "generic",
                           "lr.count": "trainings"},
    ("apple", "official"): {"apple.scheduler": "exponential",
                            "apple.prox": "full"},
    ("apple", "pfllib"): {"apple.p_init": "uniform",
                          "apple.order": "core_first",
                          "apple.p_grad": "block_mean",
                          "apple.core_lr": "n_eta",
                          "apple.lambda_round": "previous"},
    ("apple", "pfllib_run"): {"apple.p_init": "uniform",
                              "apple.order": "core_first",
                              "apple.p_grad": "block_mean",
                              "apple.core_lr": "n_eta",
                              "apple.lambda_round": "previous",
                              "apple.upload": "mixture",
                              "apple.peers": "sequential"},
    ("fedala", "official"): {"fedala.skip": "sum_first",
                             "fedala.p_unit": "tensors",
                             "fedala.start": "own"},
    ("fedala", "pfllib"): {"fedala.skip": "sum_first",
                           "fedala.p_unit": "tensors",
                           "fedala.start": "own",
                           "lr.count": "trainings",
                           "fedala.ala_mode": "pfllib"},
    ("fedala", "pfllib_run"): {"fedala.skip": "sum_first",
                               "fedala.p_unit": "tensors",
                               "fedala.start": "own",
                               "lr.count": "trainings",
                               "fedala.ala_clients": "all",
                               "fedala.ala_mode": "pfllib"},
    ("fedpac", "official"): {"fedpac.distance": "mse",
                             "fedpac.alpha_small": "renormalised",
                             "fedpac.missing": "own_start"},
    ("fedpac", "official_run"): {"fedpac.distance": "mse",
                                 "fedpac.alpha_small": "renormalised",
                                 "fedpac.missing": "own_start"},
    ("fedpac", "pfllib"): {"fedpac.distance": "mse",
                           "fedpac.alpha_small": "raw",
                           "fedpac.centroid_weights": "uniform"},
}

# The presets' shared switches (the registry's settings): PFLlib's server
# and set_parameters move parameters() only (serverbase.py:138-150,
# clientbase.py:67-69), so every preset that reproduces PFLlib's run sets
# bn.aggregate; three more count the decay per training.
for _k in [("apfl", "pfllib"), ("apple", "pfllib"), ("apple", "pfllib_run"),
           ("fedala", "official"), ("fedala", "pfllib"), ("fedala", "pfllib_run"),
           ("fedalt", "fedrep_pfllib"), ("fedamp", "pfllib"), ("fedavg", "pfllib"),
           ("feddyn", "pfllib"), ("fedfomo", "pfllib"), ("fedpac", "pfllib"),
           ("fedprox", "pfllib"), ("fedrod", "pfllib"), ("fedsim", "fedbabu_pfllib"),
           ("fedsim", "fedper_pfllib"), ("fedsim", "lg_fedavg_pfllib"),
           ("moon", "pfllib"), ("perfedavg", "pfllib"), ("scaffold", "pfllib")]:
    PRESETS[_k] = dict(PRESETS.get(_k, {}), **{"bn.aggregate": "parameters_only"})
for _k in [("fedamp", "pfllib"), ("feddyn", "pfllib"), ("fedpac", "pfllib")]:
    PRESETS[_k] = dict(PRESETS[_k], **{"lr.count": "trainings"})

# Hyperparameter defaults that take part in a coincidence when unset.
DEFAULTS = {
    "pfedme": {"beta": 1.0},
}


def effective(spec):
    """(algorithm, switches, hyperparameters) with the preset and defaults."""
    alg = spec["algorithm"]
    name = alg["name"]
    sw = {k: v[0] for k, v in SWITCHES[name].items()}
    for k, v in SHARED.items():
        sw.setdefault(k, v)
    hp = dict(DEFAULTS.get(name, {}))
    preset = alg.get("preset", "paper")
    for k, v in PRESETS.get((name, preset), {}).items():
        (sw if k in sw else hp)[k] = v
    sw.update(alg.get("switches") or {})
    hp.update(alg.get("hyperparameters") or {})
    if name == "apfl" and sw["apfl.alpha"] == "adaptive" \
            and sw["apfl.alpha_rule"] == "paper" and "eta_alpha" not in hp:
        hp["eta_alpha"] = hp["eta"]          # unset: η (the paper's)
    return name, sw, hp


# --------------------------------------------------------------------------
# Facts about a vector, used by the rules.

def rounds(spec):
    """The given schedule's rounds; a generated schedule's ("rounds" is its
    count T) are drawn at run time, so no rule reads them here."""
    given = spec["schedule"].get("kind", "given") == "given"
    return spec["schedule"].get("rounds", []) if given else []


def sizes(spec):
    out = []
    for c in spec["problem"]["clients"]:
        if "y" in c:
            out.append(len(c["y"]))
        elif "X" in c:
            out.append(len(c["X"]))
        else:
            out.append(c.get("n", 1))
    return out


def data_model(spec):
    return spec["model"]["kind"] != "quadratic"


# --------------------------------------------------------------------------
# The rules.  Each returns a list of short coincidence strings.

def r_equal_pairs(names):
    def rule(spec, sw, hp):
        got = [(k, hp[k]) for k in names if k in hp]
        out = []
        for a in range(len(got)):
            for b in range(a + 1, len(got)):
                if float(got[a][1]) == float(got[b][1]):
                    out.append("%s = %s = %g" % (got[a][0], got[b][0], got[a][1]))
        return out
    return rule


def r_value(names, values):
    def rule(spec, sw, hp):
        return ["%s = %g" % (k, hp[k]) for k in names
                if k in hp and float(hp[k]) in values]
    return rule


def r_equal_sizes(participants):
    """Equal n_i among the clients one server average weighs."""
    def rule(spec, sw, hp):
        n = sizes(spec)
        out = set()
        for t, r in enumerate(rounds(spec)):
            who = participants(spec, sw, r)
            seen = {}
            for i in who:
                if n[i] in seen:
                    out.add("n_%d = n_%d = %d (round %d)" % (seen[n[i]], i, n[i], t))
                else:
                    seen[n[i]] = i
        return sorted(out)[:2]
    return rule


def _fedrecon_weight(spec, sw, i, j, r):
    """Client i's FedRecon weight in round r (participant j)."""
    n = sizes(spec)[i]
    if sw.get("fedrecon.weights") == "examples":
        return sum(len(b) for b in r["batches"][j])
    if sw.get("fedrecon.query") == "whole":
        return n
    return n - len(spec["init"]["support"][i])


def r_fedrecon_weights(spec, sw, hp):
    """FedRecon: equal weights within a round, or weights proportional to
    another reading's (|D_i| for |D_{i,q}|, |D_{i,q}| for the examples)."""
    out = []
    for t, r in enumerate(rounds(spec)):
        c = r["clients"]
        w = [_fedrecon_weight(spec, sw, i, j, r) for j, i in enumerate(c)]
        other = [sizes(spec)[i] if sw.get("fedrecon.weights") != "examples"
                 else _fedrecon_weight(spec, dict(sw, **{"fedrecon.weights": "samples"}),
                                       i, j, r) for j, i in enumerate(c)]
        if len(set(w)) < len(w):
            out.append("equal weights in round %d" % t)
        elif len(c) > 1 and len({Fraction(a, b) for a, b in zip(w, other)}) == 1 \
                and other != w:
            out.append("weights proportional to another reading in round %d" % t)
    return out[:2]


def r_fedrecon_revisit(spec, sw, hp):
    """FedRecon under local_init = last: some client must train twice."""
    seen = set()
    for r in rounds(spec):
        if seen & set(r["clients"]):
            return []
        seen |= set(r["clients"])
    return ["no client trains in two rounds"]


def who_clients(spec, sw, r):
    return r["clients"]


def who_all(spec, sw, r):
    return range(len(spec["problem"]["clients"]))


def who_fedavg(spec, sw, r):
    return who_all(spec, sw, r) if sw.get("fedavg.weights") == "all_keep_old" \
        else r["clients"]


def who_selected(spec, sw, r):
    return r.get("selected", r["clients"])


def r_single_round(spec, sw, hp):
    R = len(rounds(spec))
    return ["%d round%s" % (R, "" if R == 1 else "s")] if R < 2 else []


def r_lr_count(spec, sw, hp):
    """lr.count = trainings counts each client's own train() calls: equal
    to the round when the step is constant or when every participant of
    every round trained in every round before."""
    if sw.get("lr.schedule", "constant") == "constant":
        return ["a constant step: nothing is counted"]
    trained = {}
    for t, r in enumerate(rounds(spec)):
        if any(trained.get(k, 0) != t for k in r["clients"]):
            return []
        for k in r["clients"]:
            trained[k] = trained.get(k, 0) + 1
    return ["every participant trained in every round before: its count is "
            "the round"]


def r_lr_constant(spec, sw, hp):
    if sw.get("lr.schedule", "constant") == "constant":
        return ["a constant step"]
    return []


def r_quadratic_unit(spec, sw, hp):
    if spec["model"]["kind"] != "quadratic":
        return []
    if all(float(a) == 1.0 for c in spec["problem"]["clients"] for a in c["a"]):
        return ["quadratic a = 1"]
    return []


def r_same_batch(spec, sw, hp):
    """Every local step of a client's round on the same batch (data models)."""
    if not data_model(spec):
        return []
    multi = False
    for r in rounds(spec):
        for steps in r["batches"]:
            if len(steps) < 2:
                continue
            multi = True
            if any(sorted(b) != sorted(steps[0]) for b in steps):
                return []
    return ["every step on the same batch"] if multi else []


def r_perfedavg_batches(spec, sw, hp):
    """D, D', D'' of one local step the same index list."""
    if not data_model(spec):
        return ["quadratic: D = D' = D''"]
    for r in rounds(spec):
        for steps in r["batches"]:
            for q in range(0, len(steps) - 2, 3):
                a, b, c = (sorted(x) for x in steps[q:q + 3])
                if a != b and b != c and (sw["perfedavg.variant"] == "fo" or a != c):
                    return []
    return ["D = D' (= D'') in every step"] if rounds(spec) else []


def r_constant_hessian(spec, sw, hp):
    m = spec["model"]
    if m["kind"] in ("quadratic", "linear"):
        return ["Hessian constant (%s)" % m["kind"]]
    return []


def r_pfedme_selected(spec, sw, hp):
    """train = all: S^t equal to the trainers in every round."""
    rs = rounds(spec)
    if rs and all(sorted(r.get("selected", r["clients"])) == sorted(r["clients"])
                  for r in rs):
        return ["S^t = trainers every round"]
    return []


def r_pfedme_counts(spec, sw, hp):
    """K inner steps vs R local rounds (batches of a client in a round)."""
    K = hp.get("K")
    counts = {len(s) for r in rounds(spec) for s in r["batches"]}
    if counts and counts == {K}:
        return ["K = local rounds = %d" % K]
    return []


def r_fedalt_counts(spec, sw, hp):
    """τ_v = τ_u for every client round."""
    tv = hp.get("tau_v", 0)
    counts = [len(s) for r in rounds(spec) for s in r["batches"]]
    if counts and all(c - tv == tv for c in counts):
        return ["tau_v = tau_u = %d" % tv]
    return []


def r_pfl_batches(spec, sw, hp):
    """pfl.weights = batches: equal batch counts among a round's clients."""
    out = []
    for t, r in enumerate(rounds(spec)):
        c = [len(s) for s in r["batches"]]
        if len(set(c)) < len(c):
            out.append("equal batch counts (round %d)" % t)
    return out[:1]


def r_cfl_thresholds(spec, sw, hp):
    import pflref_exact_cfl as xc
    trace = xc.replay(spec)[0] if not has_dropout(spec) else dropout_trace("cfl", spec)
    eps1, eps2 = xc.dec(Fraction(hp["eps1"])), xc.dec(Fraction(hp["eps2"]))
    g = xc.dec(Fraction(hp["gamma_max"]))
    margins = []
    for rec in trace.records:
        if rec["event"] != "note":
            continue
        if rec["name"] not in ("norm_dtheta_c", "max_norm_dtheta", "alpha_cross"):
            continue
        v = rec["value"][0]
        v = xc.dec(v) if isinstance(v, Fraction) else Decimal(v)
        if rec["name"] == "norm_dtheta_c":
            margins.append(("eps1", abs(v - eps1) / max(eps1, Decimal(1e-300))))
        elif rec["name"] == "max_norm_dtheta":
            margins.append(("eps2", abs(v - eps2) / max(eps2, Decimal(1e-300))))
        elif rec["name"] == "alpha_cross":
            lim = ((1 - v) / 2).sqrt()
            margins.append(("gamma_max", abs(lim - g) / max(g, Decimal(1e-300))))
    out = []
    for what, m in margins:
        if m == 0:
            out.append("on the %s threshold" % what)
        elif m < Decimal("1e-9"):
            out.append("%s margin %.1e" % (what, m))
    return sorted(set(out))


def r_ifca_ties(spec, sw, hp):
    """A client's estimate ĵ decided by a tie of two clusters' losses."""
    import pflref_exact_ifca as xi
    ties = []
    near = []
    orig = xi.estimate

    def spy(pr, i, thetas, bugs, *mode):      # mode: ifca.estimate_mode's
        losses, best = orig(pr, i, thetas, bugs, *mode)
        lo = losses[best]
        others = [f for j, f in enumerate(losses) if j != best]
        if others:
            gap = min(others) - lo
            if gap == 0:
                ties.append(i)
            elif gap / max(abs(lo), Fraction(1, 10 ** 30)) < Fraction(1, 10 ** 9):
                near.append(i)
        return losses, best
    xi.estimate = spy
    try:
        if has_dropout(spec):
            dropout_trace("ifca", spec)
        else:
            xi.replay(spec)
    finally:
        xi.estimate = orig
    out = []
    if ties:
        out.append("loss tie (client %s)" % ",".join(map(str, sorted(set(ties)))))
    if near:
        out.append("near tie (client %s)" % ",".join(map(str, sorted(set(near)))))
    return out


def has_dropout(spec):
    """The model has a dropout layer (its masks are schedule data)."""
    return any(L.get("type") == "dropout"
               for L in spec.get("model", {}).get("layers", []))


def dropout_trace(alg, spec):
    """The trace of the spec's exact replay (golden/audit.py's module for
    alg) with the schedule's dropout masks fed to the model
    (golden/layers/make_dropout.py's module_replay; FedFomo's validation
    losses as training passes, in 60-digit decimals as its vector)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers")
    if here not in sys.path:
        sys.path.insert(0, here)
    import make_dropout
    if alg == "fedfomo":
        return make_dropout.module_replay(alg, spec, frozenset(), "decimal",
                                          train_loss=True)[0]
    return make_dropout.module_replay(alg, spec, frozenset())[0]


def dropout_grid_gaps(spec):
    """grid_gaps of pflref_exact_interp, replayed with the schedule's
    dropout masks fed to the exact model (golden/layers/make_dropout.py's
    interp replay)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers")
    if here not in sys.path:
        sys.path.insert(0, here)
    import make_dropout
    trace = make_dropout.interp_replay(spec, frozenset())[0]
    out = {}
    for r in trace.records:
        if r["name"] == "select_loss":
            out.setdefault(r["client"], []).append(r["value"][0])
    return {i: sorted(v)[1] - sorted(v)[0] for i, v in out.items()}


def r_interp_ties(spec, sw, hp):
    """per_client_grid: a client's α decided by a tie (or within 1e-9)."""
    import pflref_exact_interp as xp
    out = []
    gaps = xp.grid_gaps(spec) if not has_dropout(spec) else dropout_grid_gaps(spec)
    for i, g in sorted(gaps.items()):
        if g == 0:
            out.append("grid tie (client %d)" % i)
        elif g < Fraction(1, 10 ** 9):
            out.append("grid near tie (client %d)" % i)
    return out


def r_ifca_shift(spec, sw, hp):
    if "cluster_models" in spec.get("init", {}):
        return []
    if hp.get("ifca.k", 1) > 1 and float(hp.get("ifca.init_shift", 0)) == 0 \
            and float(hp.get("ifca.init_sd", 0)) == 0:
        return ["identical initial cluster models"]
    return []


def r_fedbn_bn(spec, sw, hp):
    """The BN layer's ε and ρ (model.bn_eps, model.bn_momentum)."""
    m = spec["model"]
    eps, rho = float(m.get("bn_eps", 1e-5)), float(m.get("bn_momentum", 0.1))
    out = []
    if eps == 0.0:
        out.append("ε = 0 hides where ε sits (√(s² + ε) or √s² + ε)")
    if rho == 0.5:
        out.append("ρ = ½ hides a flipped momentum convention")
    if rho in (0.0, 1.0):
        out.append("ρ ∈ {0, 1}: the running statistics keep or drop one side")
    return out


ALWAYS = lambda sw: True                       # noqa: E731


def when(key, *values):
    return lambda sw: sw.get(key) in values


ONE = {1.0}
ZERO = {0.0}
HALF = {0.5}

def r_fedfomo_weights(spec, sw, hp):
    """FedFomo: no round where some client mixes two candidates with
    0 < w_n < 1 (no peers at all, or every weight 0 or 1) hides the
    clipping, the normalisation and the distance."""
    import pflref_exact_fedfomo as xf
    if not xf.supported(spec):
        return []
    trace = xf.replay(spec)[0] if not has_dropout(spec) else dropout_trace("fedfomo", spec)
    for r in trace.records:
        if r["name"] == "weights" and \
                sum(1 for x in r["value"] if 0 < x < 1) >= 2:
            return []
    return ["no client mixes two candidates with weights strictly in (0, 1)"]


def r_pfedhn_embeddings(spec, sw, hp):
    """pFedHN: a one-hot (or zero) initial embedding makes W_h's outer
    product touch one column only and hides a transposed Δθ_i v_iᵀ; no
    client sampled twice hides the embedding carried across rounds."""
    out = []
    V = spec["init"].get("hypernetwork", {}).get("v", [])
    if any(sum(1 for x in v if float(x) != 0.0) <= 1 for v in V):
        out.append("a one-hot or zero initial embedding")
    seen = [r["clients"][0] for r in rounds(spec) if len(r["clients"]) == 1]
    if len(set(seen)) == len(seen):
        out.append("no client sampled twice")
    return out


def r_lora(spec, sw, hp):
    """Low-rank adapters: s = α/r where it is read (r = 1 or α/r = 1 hide
    the scale), HetLoRA's rank machinery (λ = 0, all ranks equal)."""
    out = []
    het = sw.get("lora.method") == "hetlora"
    if not het or sw.get("hetlora.scaling") == "alpha":
        r, alpha = int(hp.get("lora.r", 1)), float(hp.get("lora.alpha", 1))
        if r == 1:
            out.append("r = 1 makes α/r = α")
        if alpha == r:
            out.append("α = r makes s = 1")
    if het:
        if float(hp.get("hetlora.lambda", 0)) == 0:
            out.append("λ = 0: no self-pruning")
        ranks = spec.get("init", {}).get("lora_ranks")
        if not ranks or len(set(ranks)) == 1:
            out.append("equal client ranks hide truncation and zero-padding")
    return out


def r_moon_stale(spec, sw, hp):
    """MOON's previous model w_i^{t−1}: no party skips a round between two
    trainings (the previous model is then also last round's), or none
    first trains after round 0 (w⁰ = w^0 there: a zero contrastive
    gradient)."""
    last, stale, late = {}, False, False
    for t, r in enumerate(rounds(spec)):
        for k in r["clients"]:
            stale |= k in last and last[k] < t - 1
            late |= k not in last and t > 0
            last[k] = t
    out = [] if stale else ["no party skips a round between two trainings"]
    return out + ([] if late else ["no party first trains after round 0"])


def r_fedproto_counts(spec, sw, hp):
    """FedProto's Eq. 5 weights |D_{i,j}|: hidden when, in every round,
    the clients holding a class hold it equally often (or one client holds
    it)."""
    clients = spec["problem"]["clients"]
    for r in rounds(spec):
        for j in {int(y) for i in r["clients"] for y in clients[i]["y"]}:
            counts = {sum(1 for y in clients[i]["y"] if int(y) == j)
                      for i in r["clients"]}
            counts.discard(0)
            if len(counts) > 1:
                return []
    return ["no class held unequally often by two clients of a round"]


def r_fedproto_missing(spec, sw, hp):
    """FedProto's rule for a class without a global prototype: hidden
    when no client trains after round 0 on a class the previous round's
    clients did not hold."""
    clients = spec["problem"]["clients"]
    held = None
    for r in rounds(spec):
        mine = {int(y) for i in r["clients"] for y in clients[i]["y"]}
        if held is not None and mine - held:
            return []
        held = mine
    return ["no class lacks a global prototype after round 0"]


def r_fedpac_collaboration(spec, sw, hp):
    """FedPAC's classifier weights: hidden when no round has two
    participants (α = (1) alone)."""
    if any(len(r["clients"]) >= 2 for r in rounds(spec)):
        return []
    return ["no round has two participants: every α_i is (1)"]


def r_lora_weights(spec, sw, hp):
    """ffa and fedavg read lora.weights, hetlora hetlora.weights."""
    het = sw.get("lora.method") == "hetlora"
    key = "hetlora.weights" if het else "lora.weights"
    if sw.get("lora.method") == "personal" or sw.get(key) != "samples":
        return []
    return r_equal_sizes(who_clients)(spec, sw, hp)


def r_feddyn_partial(spec, sw, hp):
    """FedDyn's states show only with partial participation: a round with
    1 < |P_t| < m (l. 10's divisor m and its two readings of the sum; with
    |P_t| = 1 they agree) and a device that sits out a round and then
    comes back (l. 9: its stale grad L_k)."""
    m = len(spec["problem"]["clients"])
    out = []
    if not any(1 < len(r["clients"]) < m for r in rounds(spec)):
        out.append("no round with 1 < |P_t| < m")
    seen, prev, back = set(), set(), False
    for r in rounds(spec):
        now = set(r["clients"])
        back = back or bool((now - prev) & seen)
        seen |= now
        prev = now
    if not back:
        out.append("no device comes back after sitting out a round")
    return out


def r_scaffold_state(spec, sw, hp):
    """SCAFFOLD: |S| = N in every round makes |S|/N = 1 and leaves no
    client with a stale c_i; no client sampled twice never reads a kept
    c_i."""
    N = len(spec["problem"]["clients"])
    rs = rounds(spec)
    out = []
    if all(len(r["clients"]) == N for r in rs):
        out.append("every client in every round")
    seen = [i for r in rs for i in r["clients"]]
    if len(set(seen)) == len(seen):
        out.append("no client sampled twice")
    return out


def r_scaffold_k(spec, sw, hp):
    """SCAFFOLD option II: every participation with the same K."""
    ks = {len(b) for r in rounds(spec) for b in r["batches"]}
    return ["every K_i = %d" % ks.pop()] if len(ks) == 1 else []


def r_fedprox_draws(spec, sw, hp):
    """FedProx's paper sampling: no round with a repeated draw makes every
    c_k/K equal 1/|S_t| (a multiplicity dropped is invisible)."""
    if any(len(set(r.get("draws", []))) < len(r.get("draws", []))
           for r in rounds(spec)):
        return []
    return ["no device drawn twice in a round"]


def r_fedamp_stale(spec, sw, hp):
    """FedAMP: no client skips a round before another's message is formed,
    so no stale w_j ever enters a u_i^k."""
    seen, n = set(), len(spec["problem"]["clients"])
    for r in rounds(spec):
        if seen and len(r["clients"]) < n:
            return []
        seen.update(r["clients"])
    return ["every client in every round: no stale w_j in a message"]


def r_fedrod_absent(spec, sw, hp):
    """FedRoD's balanced softmax: hidden when no trained client lacks a
    class (no N_{i,c} = 0), or when every client holds the classes equally
    often (log N_{i,c} the same for every c: the plain softmax)."""
    clients, k = spec["problem"]["clients"], 0
    for c in clients:
        k = max([k] + [int(y) + 1 for y in c["y"]])
    out, absent, skew = [], False, False
    for r in rounds(spec):
        for i in r["clients"]:
            n = [sum(1 for y in clients[i]["y"] if int(y) == c)
                 for c in range(k)]
            absent |= 0 in n
            skew |= len({u for u in n if u > 0}) > 1
    if not absent:
        out.append("no trained client lacks a class")
    if not skew:
        out.append("every trained client holds its classes equally often")
    return out
def r_apple_cutoff(spec, sw, hp):
    """APPLE: no round r >= L (the scheduler's cut-off to 0 never read),
    or (lambda_round = previous) none past it either."""
    L = int(hp.get("apple.L", 0))
    T = len(rounds(spec))
    last = T - 2 if sw.get("apple.lambda_round") == "previous" else T - 1
    return [] if last >= L else ["every round before L = %d: the cut-off "
                                 "to 0 is never read" % L]
def r_fedala_late_start(spec, sw, hp):
    """FedALA: every client's first ALA round is the second round, so a
    start phase per client and one in round 2 only are the same."""
    first, seen = {}, set()
    for t, r in enumerate(rounds(spec)):
        for i in r["clients"]:
            if t > 0 and i not in first:
                first[i] = t
    if first and all(t == 1 for t in first.values()):
        return ["every client's first ALA in the second round"]
    return []


def fedala_eval_passes(spec, sw, gap):
    """FedALA under fedala.ala_mode = pfllib: the (round, client) ALA
    passes in evaluation mode with PFLlib evaluating in the rounds 0, gap,
    2 gap, ...: the last evaluation later than the client's last training
    (pflref_exact_fedala.ala)."""
    rs = rounds(spec)
    every = sw.get("fedala.ala_clients") == "all"
    n = len(spec["problem"]["clients"])
    last, out = {}, set()
    for t, r in enumerate(rs):
        if t > 0:
            for i in (range(n) if every else r["clients"]):
                if gap * ((t - 1) // gap) > last.get(i, -1):
                    out.add((t, i))
        for i in r["clients"]:
            last[i] = t
    return out


def r_fedala_mode(spec, sw, hp):
    """FedALA: the mode of ALA's passes shows only with batch
    normalisation and a client running ALA (from the second round on)
    evaluated since its last training (with fedala.eval_gap = 1: that did
    not train in the previous round)."""
    m = spec["model"]
    if not (m.get("bn") or any(L.get("type", "").startswith("batchnorm")
                               for L in m.get("layers", []))):
        return ["no batch normalisation: one gradient in either mode"]
    if fedala_eval_passes(spec, sw, int(hp.get("fedala.eval_gap", 1))):
        return []
    return ["every client running ALA trained since the last evaluation"]


def r_fedala_eval_gap(spec, sw, hp):
    """FedALA: fedala.eval_gap = g > 1 shows only where some client's
    passes change mode against g = 1 (it trained in an evaluation round
    and skipped the next, non-evaluating, one)."""
    g = int(hp.get("fedala.eval_gap", 1))
    if g == 1 or fedala_eval_passes(spec, sw, g) != \
            fedala_eval_passes(spec, sw, 1):
        return []
    return ["fedala.eval_gap = %d: the same passes in evaluation mode as "
            "with an evaluation every round" % g]


def r_fedala_alone(spec, sw, hp):
    """FedALA under fedala.skip = sum_first: no client finds Θ = Θ_i (it
    trained alone in the previous round and takes part again), so the
    early return never fires."""
    rs = rounds(spec)
    for a, b in zip(rs, rs[1:]):
        if len(a["clients"]) == 1 and a["clients"][0] in b["clients"]:
            return []
    return ["no client alone in a round and back in the next"]


def r_real_pairs(spec, sw, hp):
    """Any two real-valued hyperparameters of the spec equal (step sizes,
    factors, the decay factor lr.gamma, the client optimizer's constants):
    a candidate reading one for the other is invisible.  Zero is left to
    the rules that say what a zero removes."""
    got = sorted((k, float(v)) for k, v in hp.items()
                 if isinstance(v, float) and v != 0.0)
    return ["%s = %s = %g" % (a, b, x) for i, (a, x) in enumerate(got)
            for b, y in got[i + 1:] if x == y][:2]


def r_schedule_fields(spec, sw, hp):
    """Schedule fields a bug could read for one another: the drawn order
    equal to the ascending clients in every round that gives it (clients ↔
    drawn), post-training batches equal to the last round's (post ↔
    batches)."""
    out = []
    given = [r for r in rounds(spec) if "drawn" in r and len(set(r["drawn"])) > 1]
    if given and all(list(r["drawn"]) == list(r["clients"]) for r in given):
        out.append("drawn = clients in every round that gives it")
    post = spec["schedule"].get("post")
    if post is not None and rounds(spec) and post == rounds(spec)[-1]["batches"]:
        out.append("post = the last round's batches")
    return out[:2]


def r_batch_positions(spec, sw, hp):
    """Data models: a round's batches[j] belong to its j-th client.  When
    every round's clients are 0..m−1 (or a round's batch lists are all
    alike and every id is below m, so batches[id] exists), reading batches
    by client id instead of by position is invisible."""
    if not data_model(spec):
        return []
    for r in rounds(spec):
        c = list(r["clients"])
        if c != list(range(len(c))) and (
                max(c) >= len(c) or     # batches[id] is out of range
                len({json.dumps(b, sort_keys=True) for b in r["batches"]}) > 1):
            return []
    return ["every round's clients are 0..m−1: batches by position = by id"] \
        if rounds(spec) else []


# algorithm -> [(condition on switches, rule, reason)]
RULES = {
    "fedavg": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (when("fedavg.weights", "samples", "all_keep_old"),
         r_equal_sizes(who_fedavg), "equal n_k make n_k/m_t equal to 1/m"),
        (ALWAYS, r_single_round, "one round hides a stale global model"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
    ],
    "local": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (ALWAYS, r_single_round, "one round hides personal state reset between rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "finetune": [
        (ALWAYS, r_equal_pairs(["eta", "eta_ft", "mu_ft"]),
         "η, η_ft, μ_ft equal: a swap of training and fine-tuning constants is invisible"),
        (ALWAYS, r_value(["eta", "eta_ft", "mu_ft"], ONE), "a factor 1 hides its omission"),
        (ALWAYS, r_value(["mu_ft"], ZERO), "μ_ft = 0 hides the proximal term's sign and reference"),
        (when("fedavg.weights", "samples", "all_keep_old"),
         r_equal_sizes(who_fedavg), "equal n_k make the weighted mean uniform"),
        (ALWAYS, r_single_round, "fewer than two rounds hide a stale global model"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "prox": [
        (ALWAYS, r_equal_pairs(["lambda", "eta_p", "pfedme.mu"]),
         "λ, η_p, μ equal: a swap is invisible"),
        (ALWAYS, r_value(["lambda", "eta_p", "K"], ONE), "λ = 1, η_p = 1 or K = 1 hide a dropped factor / the inner loop count"),
        (ALWAYS, r_value(["lambda"], ZERO), "λ = 0 removes the proximal term"),
        (when("pfedme.theta_start", "warm"), r_single_round,
         "warm start: one round hides the carried θ"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "pfedme": [
        (ALWAYS, r_equal_pairs(["eta", "eta_p", "lambda", "beta", "pfedme.mu"]),
         "two of η, η_p, λ, β, μ equal: a swap is invisible"),
        (ALWAYS, r_value(["eta", "eta_p", "lambda", "beta", "K"], ONE),
         "a factor 1 (β = 1 is w ← average) hides its omission"),
        (ALWAYS, r_value(["lambda"], ZERO), "λ = 0 removes the proximal coupling"),
        (when("pfedme.weights", "samples"), r_equal_sizes(who_selected),
         "equal n_i make the n_i-weighted mean uniform"),
        (when("pfedme.train", "all"), r_pfedme_selected,
         "S^t = trainers hides who trains versus who is averaged"),
        (ALWAYS, r_pfedme_counts, "K = R hides a swap of the inner and local step counts"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (ALWAYS, r_single_round, "one round hides stale global / personal state"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "ditto": [
        (ALWAYS, r_equal_pairs(["eta", "lambda"]), "η = λ: a swap is invisible"),
        (ALWAYS, r_value(["eta", "lambda"], ONE), "a factor 1 hides its omission"),
        (ALWAYS, r_value(["lambda"], ZERO), "λ = 0 removes the regulariser"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (when("ditto.weights", "samples"), r_equal_sizes(who_clients),
         "equal n_k make the weighted mean uniform"),
        (ALWAYS, r_single_round, "one round hides stale v_k / global state"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "fedalt": [
        (ALWAYS, r_equal_pairs(["gamma_u", "gamma_v", "eta_ft"]),
         "γ_u, γ_v, η_ft equal: using one for the other is invisible"),
        (ALWAYS, r_value(["gamma_u", "gamma_v", "eta_ft"], ONE), "a step size 1 hides its omission"),
        (ALWAYS, r_value(["gamma_u", "gamma_v"], ZERO), "a zero step freezes a block"),
        (ALWAYS, r_fedalt_counts, "τ_v = τ_u hides a swap of the two step counts"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (when("pfl.weights", "samples"), r_equal_sizes(who_clients),
         "equal N_i make the N_i-weighted mean uniform"),
        (when("pfl.weights", "batches"), r_pfl_batches,
         "equal batch counts make the batch-weighted mean uniform"),
        (ALWAYS, r_single_round, "one round hides v_i's state across rounds"),
    ],
    "fedsim": [
        (ALWAYS, r_equal_pairs(["gamma_u", "gamma_v", "eta_ft"]),
         "γ_u, γ_v, η_ft equal: using one for the other is invisible"),
        (ALWAYS, r_value(["gamma_u", "gamma_v", "eta_ft"], ONE), "a step size 1 hides its omission"),
        (ALWAYS, r_value(["gamma_u", "gamma_v"], ZERO), "a zero step freezes a block"),
        (when("pfl.weights", "samples"), r_equal_sizes(who_clients),
         "equal N_i make the N_i-weighted mean uniform"),
        (when("pfl.weights", "batches"), r_pfl_batches,
         "equal batch counts make the batch-weighted mean uniform"),
        (ALWAYS, r_single_round, "one round hides v_i's state across rounds"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
    ],
    "pflego": [
        (ALWAYS, r_equal_pairs(["rho", "pflego.beta"]), "ρ = β: the two head steps are confusable"),
        (ALWAYS, r_value(["rho", "pflego.beta"], ONE), "a step size 1 hides its omission"),
        (ALWAYS, r_value(["pflego.beta"], ZERO), "β = 0 removes the cheap head steps"),
        (ALWAYS, r_equal_sizes(who_all), "equal N_i make α_i = N_i/N uniform"),
        (ALWAYS, r_single_round, "one round hides the heads' state across rounds"),
    ],
    "perfedavg": [
        (ALWAYS, r_equal_pairs(["alpha", "beta", "delta"]), "α = β: inner and outer step confusable"),
        (ALWAYS, r_value(["alpha", "beta"], ONE), "a step size 1 hides its omission"),
        (ALWAYS, r_value(["alpha"], ZERO), "α = 0 removes the inner step (MAML = FedAvg)"),
        (when("perfedavg.weights", "samples"), r_equal_sizes(who_clients),
         "equal n_i make the weighted mean uniform"),
        (ALWAYS, r_perfedavg_batches, "D = D' (= D'') hides batch reuse"),
        (when("perfedavg.variant", "exact", "hf"), r_constant_hessian,
         "a constant Hessian hides where it is taken (w versus w̃)"),
        (ALWAYS, r_single_round, "one round hides a stale global model"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (when("perfedavg.calls", "two"), r_lr_constant,
         "a constant step makes the two train() calls one"),
        (when("lr.scope", "no_beta"), r_lr_constant,
         "a constant step hides a decayed β"),
        (when("perfedavg.eval_lr", "decayed"), r_lr_constant,
         "a constant step hides which α personalises"),
    ],
    "apfl": [
        (ALWAYS, r_equal_pairs(["eta", "alpha", "eta_alpha"]), "η, α, η_α equal: a swap is invisible"),
        (ALWAYS, r_value(["eta", "eta_alpha"], ONE), "a step size 1 hides its omission"),
        (ALWAYS, r_value(["alpha"], ZERO | ONE), "α ∈ {0, 1} reduces the mixture to one model"),
        (ALWAYS, r_value(["alpha"], HALF), "α = ½ hides α ↔ 1 − α"),
        (ALWAYS, r_single_round, "one round hides v_i, α_i state across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
        (when("apfl.weights", "samples"), r_equal_sizes(who_clients),
         "equal n_i make the weighted mean uniform"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (when("apfl.alpha_lr", "constant"), r_lr_constant,
         "a constant step makes η_α's decay invisible"),
    ],
    "interp": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (when("interp.alpha", "fixed"), r_value(["alpha"], ZERO | ONE),
         "α ∈ {0, 1} reduces the interpolation to one model"),
        (when("interp.alpha", "fixed"), r_value(["alpha"], HALF), "α = ½ hides α ↔ 1 − α"),
        (when("interp.alpha", "per_client_grid"), r_interp_ties,
         "a grid choice decided by a tie (or within 1e-9)"),
        (ALWAYS, r_single_round, "one round hides a stale global model"),
        (when("fedavg.weights", "samples", "all_keep_old"),
         r_equal_sizes(who_fedavg), "equal n_k make the weighted mean uniform"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "cfl": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size (Δθ = −η∇f)"),
        (ALWAYS, r_equal_pairs(["eps1", "eps2"]), "ε₁ = ε₂: the two norm thresholds confusable"),
        (when("cfl.cluster_weights", "samples"), r_equal_sizes(who_clients),
         "equal |D_i| make the weighted cluster update uniform"),
        (ALWAYS, r_cfl_thresholds, "a decision on (or within 1e-9 of) ε₁, ε₂ or γ_max"),
        (ALWAYS, r_single_round, "one round hides clusters carried across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "ifca": [
        (ALWAYS, r_value(["gamma"], ONE), "γ = 1 hides a dropped step size"),
        (ALWAYS, r_ifca_shift, "identical cluster models make every estimate a tie"),
        (ALWAYS, r_ifca_ties, "an argmin decided by a tie (or within 1e-9)"),
        (ALWAYS, r_single_round, "one round hides the cluster models across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedfomo": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (ALWAYS, r_single_round, "one round hides θ_i, φ_i and P across rounds "
         "(and round 0 has every distance 0)"),
        (ALWAYS, r_fedfomo_weights, "weights all 0 or 1 hide clipping and normalisation"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "fedbn": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (ALWAYS, r_fedbn_bn, "ε = 0 or ρ ∈ {0, ½, 1} hide BN bugs"),
        (when("fedbn.weights", "samples"), r_equal_sizes(who_clients),
         "equal n_k make the weighted mean uniform"),
        (ALWAYS, r_single_round, "one round hides the clients' BN state across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "pfedhn": [
        (ALWAYS, r_value(["eta", "alpha", "pfedhn.alpha_v"], ONE),
         "a step size 1 hides a dropped step size"),
        (ALWAYS, r_equal_pairs(["eta", "alpha", "pfedhn.alpha_v"]),
         "equal η, α, α_v: the client's, φ's and v_i's steps confusable"),
        (ALWAYS, r_pfedhn_embeddings, "one-hot embeddings or single visits hide "
         "the outer product and the embedding's state"),
        (ALWAYS, r_single_round, "one round hides φ and v_i across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "lora": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped step size"),
        (ALWAYS, r_lora, "r = 1, s = 1, λ = 0 or equal ranks hide adapter bugs"),
        (ALWAYS, r_lora_weights, "equal n_k make the weighted mean uniform"),
        (ALWAYS, r_single_round, "one round hides the adapters across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "feddyn": [
        (ALWAYS, r_value(["eta", "feddyn.alpha"], ONE), "a factor 1 hides its omission"),
        (ALWAYS, r_equal_pairs(["eta", "feddyn.alpha"]),
         "η = α: the step size and the regulariser's weight confusable"),
        (when("feddyn.alpha_k", "size_scaled"), r_equal_sizes(who_all),
         "equal n_k make α_k = α"),
        (ALWAYS, r_feddyn_partial, "full or single participation hides ∇L_k and h"),
        (ALWAYS, r_single_round, "one round hides ∇L_k and h across rounds"),
    ],
    "scaffold": [
        (ALWAYS, r_value(["eta", "scaffold.eta_g"], ONE),
         "η_l = 1 or η_g = 1 hides a dropped step size"),
        (ALWAYS, r_equal_pairs(["eta", "scaffold.eta_g"]),
         "η_l = η_g: the local and the global step confusable"),
        (ALWAYS, r_scaffold_state, "every client sampled every round, or none "
         "twice, hides c_i's state and the |S|/N factor"),
        (when("scaffold.option", "II"), r_scaffold_k,
         "equal K_i hide whose K divides x − y_i"),
        (when("scaffold.c_lr", "initial"), r_lr_constant,
         "a constant step hides which η_l divides"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (ALWAYS, r_single_round, "one round hides c and c_i across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
        (ALWAYS, r_quadratic_unit, "a = 1 hides a dropped curvature / loss factor"),
    ],
    "moon": [
        (ALWAYS, r_value(["eta", "moon.mu", "moon.tau"], ONE),
         "η, μ or τ = 1 hides a dropped factor"),
        (ALWAYS, r_value(["moon.mu"], ZERO), "μ = 0 hides the contrastive term"),
        (ALWAYS, r_equal_pairs(["eta", "moon.mu", "moon.tau"]),
         "equal η, μ, τ: a swap is invisible"),
        (ALWAYS, r_equal_sizes(who_clients), "equal n_i make the weighted mean uniform"),
        (ALWAYS, r_moon_stale, "every party training every round hides a stale or "
         "misinitialised previous model"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedprox": [
        (ALWAYS, r_equal_pairs(["eta", "fedprox.mu"]), "η = μ: a swap is invisible"),
        (ALWAYS, r_value(["eta", "fedprox.mu"], ONE), "a factor 1 hides its omission"),
        (ALWAYS, r_value(["fedprox.mu"], ZERO),
         "μ = 0 removes the proximal term (its sign, factor and reference)"),
        (when("fedprox.sampling", "paper"), r_fedprox_draws,
         "no repeated draw hides c_k/K versus 1/|S_t|"),
        (when("fedprox.sampling", "uniform_weighted"), r_equal_sizes(who_clients),
         "equal n_k make the weighted mean uniform"),
        (when("lr.count", "trainings"), r_lr_count,
         "clients' own training counts equal to the round hide the count"),
        (ALWAYS, r_single_round, "one round hides a stale global model"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedrecon": [
        (ALWAYS, r_equal_pairs(["fedrecon.eta_r", "fedrecon.eta_u", "fedrecon.eta_s"]),
         "two of η_r, η_u, η_s equal: using one for the other is invisible"),
        (ALWAYS, r_value(["fedrecon.eta_r", "fedrecon.eta_u", "fedrecon.eta_s"], ONE),
         "a step size 1 (η_s = 1: g ← g + Δ) hides its omission"),
        (when("fedrecon.weights", "samples"), r_fedrecon_weights,
         "equal n_i = |D_{i,q}| (or n_i ∝ |D_i|) hide the weights"),
        (when("fedrecon.weights", "examples"), r_fedrecon_weights,
         "equal update examples (or ∝ |D_{i,q}|) hide the weights"),
        (when("fedrecon.local_init", "last"), r_fedrecon_revisit,
         "no client trained twice: the kept l_i is never read"),
        (ALWAYS, r_single_round, "one round hides g and l_i across rounds"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedamp": [
        (ALWAYS, r_value(["eta", "fedamp.alpha_k", "fedamp.lambda", "fedamp.sigma"],
                         ONE), "a factor 1 hides its omission (σ = 1: A' = e^{−x})"),
        (ALWAYS, r_equal_pairs(["eta", "fedamp.alpha_k", "fedamp.lambda",
                                "fedamp.sigma"]),
         "two of η, α_k, λ, σ equal: a swap is invisible"),
        (when("fedamp.prox", "squared"), r_value(["fedamp.lambda"], ZERO),
         "λ = 0 removes the proximal term (its weight, sign and reference)"),
        (ALWAYS, r_fedamp_stale, "no skipped round hides the snapshot and stale peers"),
        (ALWAYS, r_single_round, "one round has every distance 0 (w_j = w⁰)"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "apple": [
        (ALWAYS, r_value(["eta", "eta_p", "apple.mu"], ONE),
         "a factor 1 hides its omission"),
        (ALWAYS, r_equal_pairs(["eta", "eta_p", "apple.mu"]),
         "two of η, η_p, μ equal: a swap is invisible"),
        (ALWAYS, r_value(["apple.mu"], ZERO),
         "μ = 0 removes the proximal term (its weight, sign and p_0)"),
        (ALWAYS, r_equal_sizes(lambda spec, sw, r: range(len(sizes(spec)))),
         "equal n_j make p_0 uniform"),
        (ALWAYS, r_apple_cutoff, "no round past L hides the scheduler's cut-off"),
        (ALWAYS, r_fedamp_stale, "no skipped round hides the round-start "
         "downloads and stale cores"),
        (ALWAYS, r_single_round, "one round has every download w⁰"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedproto": [
        (ALWAYS, r_value(["eta", "fedproto.lambda"], ONE),
         "η or λ = 1 hides a dropped factor"),
        (ALWAYS, r_value(["fedproto.lambda"], ZERO),
         "λ = 0 removes the prototype term"),
        (ALWAYS, r_equal_pairs(["eta", "fedproto.lambda"]),
         "η = λ: a swap is invisible"),
        (when("fedproto.weights", "class_counts"), r_fedproto_counts,
         "equal class counts make Eq. 5's weights uniform"),
        (ALWAYS, r_fedproto_missing, "every class always having a global "
         "prototype hides the rule for a missing one"),
        (ALWAYS, r_moon_stale, "every client training every round hides a "
         "stale or reset personal model"),
        (ALWAYS, r_single_round, "one round hides the global prototypes"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedrod": [
        (ALWAYS, r_value(["eta"], ONE), "η = 1 hides a dropped factor"),
        (ALWAYS, r_fedrod_absent, "no absent class, or equal class counts, hide "
         "the balanced softmax's log N"),
        (ALWAYS, r_equal_sizes(who_clients), "equal n_i make the weighted mean uniform"),
        (ALWAYS, r_moon_stale, "every client training every round hides a stale or "
         "reset personal head"),
        (ALWAYS, r_single_round, "one round hides the carried personal heads"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedala": [
        (ALWAYS, r_value(["eta", "fedala.eta", "fedala.threshold"], ONE),
         "α, η or the threshold = 1 hides a dropped factor"),
        (ALWAYS, r_equal_pairs(["eta", "fedala.eta"]),
         "α = η: the local and the weight learning rates swapped are invisible"),
        (ALWAYS, r_fedala_late_start,
         "every first ALA in round 2 hides a global start phase"),
        (when("fedala.skip", "sum_first"), r_fedala_alone,
         "no Θ = Θ_i hides the early return"),
        (when("fedala.ala_mode", "pfllib"), r_fedala_mode,
         "no evaluation-mode pass hides the mode of ALA's passes"),
        (when("fedala.ala_mode", "pfllib"), r_fedala_eval_gap,
         "an eval gap changing no pass's mode hides it"),
        (ALWAYS, r_single_round, "one round has no ALA (Θ_i = Θ = Θ⁰)"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
    "fedpac": [
        (ALWAYS, r_value(["eta", "fedpac.lambda", "fedpac.eta_phi"], ONE),
         "η, λ or η_φ = 1 hides a dropped factor"),
        (ALWAYS, r_fedproto_missing, "every class always having a global "
         "centroid hides the rule for a missing one"),
        (ALWAYS, r_equal_sizes(who_clients), "equal n_i make θ's weighted mean uniform"),
        (ALWAYS, r_moon_stale, "every client training every round hides a stale or "
         "reset classifier"),
        (ALWAYS, r_fedpac_collaboration, "one participant a round hides the "
         "classifier collaboration"),
        (ALWAYS, r_single_round, "one round hides the centroids' alignment"),
        (ALWAYS, r_same_batch, "the same batch every step hides a batch-index mix-up"),
    ],
}

# A rule every algorithm shares (issue 33 §3): every pair of real-valued
# hyperparameters distinct (per switch value, like the rules above).
for _name in RULES:
    RULES[_name].append(
        (ALWAYS, r_real_pairs, "two real hyperparameters equal: a swap is invisible"))

# Schedule fields a bug could read for one another.  How a candidate pairs
# a round's batches with its clients does not depend on a switch, so these
# ask for one vector per algorithm free of the coincidence (not one per
# switch value); an algorithm without one is listed in SCHEDULE_GAPS.
ALG_RULES = [
    (r_schedule_fields, "drawn ↔ clients, post ↔ batches"),
    (r_batch_positions, "batches by position ↔ by client id (data models)"),
]
# (algorithm, rule name) -> reason
SCHEDULE_GAPS = {
    ("cfl", "r_batch_positions"): "inherent: CFL trains every client in every "
    "round (Alg. 5), so a round's clients are always 0..N−1",
}


def schedule_audit(vectors):
    """(rows, problems): per algorithm and schedule rule, the vectors free
    of the coincidence; an algorithm with none (and vectors the rule
    applies to) not listed in SCHEDULE_GAPS is a problem."""
    free, seen = {}, {}
    for _, v in vectors:
        name, sw, hp = effective(v["spec"])
        for rule, _ in ALG_RULES:
            if rule is r_batch_positions and not data_model(v["spec"]):
                continue
            key = (name, rule.__name__)
            seen[key] = seen.get(key, 0) + 1
            if not rule(v["spec"], sw, hp):
                free[key] = free.get(key, 0) + 1
    rows, problems = [], []
    for key in sorted(seen):
        n = free.get(key, 0)
        if n:
            status = "ok"
        elif key in SCHEDULE_GAPS:
            status = "gap: " + SCHEDULE_GAPS[key]
        else:
            status = "MISSING"
            problems.append("%s %s: no vector free of it" % key)
        rows.append("  %-10s %-18s %2d free of %2d  %s" % (key + (n, seen[key], status)))
    for key in SCHEDULE_GAPS:
        if free.get(key):
            problems.append("SCHEDULE_GAPS entry no longer needed: %s %s" % key)
    return rows, problems

# (algorithm, switch, value) -> reason.  A value listed here is not
# required to have a coincidence-free vector.
EXCEPTIONS = {
    ("perfedavg", "lr.scope", "eta_p"): (
        "decays only pFedMe's eta_p (ref/engine/lr.c), which Per-FedAvg does not read: "
        "its run is the constant-rate run bit for bit (perfedavg/worked/"
        "linear-paper-decay-eval-decayed with lr.scope = eta_p against lr.schedule = "
        "constant: equal finals), which every vector without lr.* covers"),
}


# --------------------------------------------------------------------------
# The shared switches, per algorithm (issue 33 §3).  The client optimizer
# (opt.*), batch normalisation (bn.*) and the learning-rate schedule (lr.*)
# are one implementation each, but each algorithm wires them in its own way
# (its optimizer slots, which blocks move, which step sizes decay, whose
# buffers are averaged), so the argument "one implementation, audited by
# golden/optim/ and golden/layers/" is not enough: every (algorithm, shared
# switch, value) the registry declares must have a vector of that algorithm
# that runs the value and is free of the coincidences below (SHARED_RULES),
# or an entry in SHARED_EXCEPTIONS with its reason (shared_audit).

# switch -> the paper's reading (value 0 of the switch, docs/formats.md)
SHARED = {
    "opt.method": "sgd", "opt.momentum_form": "pytorch", "opt.nesterov": "off",
    "opt.weight_decay_form": "coupled", "opt.decay_scope": "all",
    "opt.clip": "off", "opt.state": "reset",
    "bn.running": "update", "bn.running_var": "unbiased", "bn.aggregate": "average",
    "lr.schedule": "constant", "lr.scope": "all", "lr.count": "rounds",
}
# the optimizer's constants when the spec leaves them unset (docs/formats.md)
OPT_DEFAULTS = {"opt.momentum": 0.0, "opt.dampening": 0.0, "opt.weight_decay": 0.0,
                "opt.beta1": 0.9, "opt.beta2": 0.999, "opt.eps": 1e-8}


def shared_key(key):
    return key.split(".", 1)[0] + "." in ("opt.", "bn.", "lr.")


def _opt(hp, k):
    return float(hp.get(k, OPT_DEFAULTS[k]))


def _adam(sw):
    return sw.get("opt.method") in ("adam", "adamw")


def _stateful(sw, hp):
    """The optimizer keeps a state (a momentum buffer, Adam's moments)."""
    return _adam(sw) or _opt(hp, "opt.momentum") > 0


def _n_rounds(spec):
    s = spec["schedule"]
    if s.get("kind", "given") == "given":
        return len(s.get("rounds", []))
    return int(s["rounds"]) if isinstance(s.get("rounds"), int) else 0


def _updates(spec):
    """The client updates in training order: (round, client, local steps)."""
    return [(t, k, len(b)) for t, r in enumerate(rounds(spec))
            for k, b in zip(r["clients"], r.get("batches", [[]] * len(r["clients"])))]


def _step_sizes(hp, alg):
    """The algorithm's own real constants (not opt.*, not lr.*), and those
    of them that are step sizes (η, η_p, γ_u, ... by name; α and β only
    Per-FedAvg's, APFL's α being a mixing weight)."""
    import re
    own = {k: float(v) for k, v in hp.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)
           and not shared_key(k) and not k.startswith("opt.") and float(v) != 0.0
           and not float(v).is_integer()}
    steps = {k: v for k, v in own.items()
             if re.search(r"(^|[._])(eta|gamma|rho)(_[a-z]+)?$", k)
             or (alg == "perfedavg" and k in ("alpha", "beta"))}
    return own, steps


def r_opt_constants(spec, sw, hp):
    """β (opt.momentum) = a step size η or 1 − η; τ = β; β₁ = β₂; λ
    (opt.weight_decay) = a step size or another constant of the algorithm
    (its own λ, μ, ...): a candidate reading one for the other is
    invisible."""
    own, steps = _step_sizes(hp, spec["algorithm"]["name"])
    mu, tau, lam = (_opt(hp, k) for k in ("opt.momentum", "opt.dampening",
                                          "opt.weight_decay"))
    out = []
    if mu > 0:
        for k, x in sorted(steps.items()):
            if mu == x:
                out.append("β = %s = %g" % (k, x))
            elif mu == 1 - x:
                out.append("β = 1 − %s = %g" % (k, mu))
        if tau > 0 and tau == mu:
            out.append("τ = β = %g" % mu)
    if _adam(sw) and _opt(hp, "opt.beta1") == _opt(hp, "opt.beta2"):
        out.append("β₁ = β₂ = %g" % _opt(hp, "opt.beta1"))
    if lam > 0:
        for k, x in sorted(own.items()):
            if lam == x:
                out.append("λ = %s = %g" % (k, x))
    return out[:3]


def r_no_momentum(spec, sw, hp):
    return ["β = 0: no momentum buffer"] if _opt(hp, "opt.momentum") == 0 \
        and not _adam(sw) else []


def r_no_decay(spec, sw, hp):
    return ["λ = 0: no weight decay"] if _opt(hp, "opt.weight_decay") == 0 else []


def r_decoupled_plain(spec, sw, hp):
    """With plain SGD the coupled and the decoupled decay are one step."""
    return [] if _stateful(sw, hp) else ["plain SGD: decoupled = coupled decay"]


def has_bias_or_bn(spec):
    """The model has a block opt.decay_scope = weights leaves undecayed."""
    m = spec["model"]
    if m["kind"] == "layers":
        return any((L.get("type") in ("dense", "conv2d") and L.get("bias", True))
                   or "batchnorm" in L.get("type", "") for L in m.get("layers", []))
    if m["kind"] == "mlp":
        return bool(m.get("bias", True)) or bool(m.get("bn"))
    return bool(m.get("bias", False))


# algorithms whose optimizer steps the split's shared blocks alone
# (docs/optimizers.md, the slots table): FedRecon's update of g (Alg. 1
# l. 11; l's reconstruction is plain SGD)
_STEPS_SHARED = ("fedrecon",)


def shared_bias(spec):
    """For a linear model or an mlp: a bias block outside the split's
    personal list (one the shared optimizer moves).  A layer list or a
    quadratic model: has_bias_or_bn (not narrowed)."""
    m = spec["model"]
    personal = set(spec.get("split", {}).get("personal", []))
    if m["kind"] == "linear":
        biases = ["b"] if m.get("bias", False) else []
    elif m["kind"] == "mlp":
        bias = m.get("bias", True)
        biases = (["b1"] if m.get("hidden_bias", bias) else []) + \
            (["b2"] if bias else [])
        if m.get("bn"):
            return has_bias_or_bn(spec)
    else:
        return has_bias_or_bn(spec)
    return any(b not in personal for b in biases)


def r_decay_weights(spec, sw, hp):
    if not has_bias_or_bn(spec):
        return ["no bias or batch-norm block: decay on the weights = on all"]
    if spec["algorithm"]["name"] in _STEPS_SHARED and not shared_bias(spec):
        return ["the optimizer steps the shared blocks alone and none is a "
                "bias: decay on the weights = on all"]
    return []


# algorithms whose opt.decay_scope = shared | personal is not the spec's
# split but the algorithm's own division of its optimizers or blocks
# (docs/optimizers.md: FedRoD's slots 0 and 1; FedAlt's and FedSim's u and v)
_OWN_SPLIT = {"fedrod", "fedalt", "fedsim"}


def r_decay_split(spec, sw, hp):
    """shared | personal read the spec's split: without one, shared decays
    every block (= all) and personal none (= λ 0)."""
    if spec["algorithm"]["name"] in _OWN_SPLIT:
        return []
    return [] if spec.get("split", {}).get("personal") else \
        ["no split: shared = all, personal decays nothing"]


def r_momentum_form(spec, sw, hp):
    """The two momentum forms agree while η is constant over the state's
    life (docs/optimizers.md)."""
    if sw.get("lr.schedule", "constant") == "constant" or \
            float(hp.get("lr.gamma", 1)) == 1:
        return ["η constant: the classical form = the pytorch form"]
    if sw.get("opt.state", "reset") == "reset":
        return ["a state living one client update sees one η: the classical "
                "form = the pytorch form"]
    return []


def r_adam_eps(spec, sw, hp):
    """Adam's ε beside √v̂ (the gradients' scale): ε ≥ 1/16 is of the
    order of the vectors' gradients, so the step is about m̂/ε and a wrong
    v̂ hardly shows (a static bound: the vectors' gradients are O(0.1-1))."""
    eps = _opt(hp, "opt.eps")
    return ["ε = %g of the gradients' order hides v̂" % eps] if eps >= 0.0625 else []


def r_adam_one_step(spec, sw, hp):
    """At an Adam state's first step m̂ = d and v̂ = d² whatever β₁, β₂:
    every state living one step hides them."""
    if sw.get("opt.state", "reset") != "reset":
        return [] if sum(n for _, _, n in _updates(spec)) >= 2 else \
            ["one local step in all: the bias correction hides β₁, β₂"]
    if any(n >= 2 for _, _, n in _updates(spec)):
        return []
    return ["every client update one step: the bias correction hides β₁, β₂"]


def r_clip_inactive(spec, sw, hp):
    """A clip threshold the gradient norm never reaches (the coefficient
    c/(‖d‖ + 10⁻⁶) never below 1): the clip is never read.  Read from the
    spec's exact replay (golden/audit.py) with pflref_exact_optim's
    CLIP_LOG."""
    import audit
    import pflref_exact_optim as po
    import pflref_exact_lora as pl
    if not audit.supported(spec):
        return []                       # no exact replay: see the vector's own check
    log = []
    po.CLIP_LOG = pl.CLIP_LOG = log
    try:
        audit.replay(spec)
    finally:
        po.CLIP_LOG = pl.CLIP_LOG = None
    if not log:
        return ["the clip is never evaluated"]
    if all(coef >= 1 for _, _, coef in log):
        return ["‖d‖ never reaches c = %g: the clip never acts" %
                float(hp.get("opt.clip_norm", 0))]
    if all(coef < 1 for _, _, coef in log):
        return ["every step clipped: min(1, ·) never reads 1"]
    return []


def r_state_client(spec, sw, hp):
    """opt.state = client: a stateful optimizer, and a client that trains
    in two rounds (else the kept state is never read)."""
    out = [] if _stateful(sw, hp) else ["plain SGD: no state to keep"]
    seen, again = set(), False
    for t, k, n in _updates(spec):
        again |= k in seen
        seen.add(k)
    return out + ([] if again else ["no client trains twice: the state is never carried"])


def r_state_server(spec, sw, hp):
    """opt.state = server: a stateful optimizer, and a client update that
    follows another client's (else the carried state is a kept one)."""
    out = [] if _stateful(sw, hp) else ["plain SGD: no state to carry"]
    ks = [k for _, k, n in _updates(spec) if n]
    if not any(a != b for a, b in zip(ks, ks[1:])):
        out.append("no update follows another client's: server state = client state")
    return out


def r_gamma_pairs(spec, sw, hp):
    """lr.gamma equal to another real constant of the spec (a step size,
    the optimizer's β): a candidate reading one for the other is
    invisible."""
    g = float(hp.get("lr.gamma", 1))
    if g == 1:
        return []
    return ["lr.gamma = %s = %g" % (k, g) for k, v in sorted(hp.items())
            if k != "lr.gamma" and isinstance(v, float) and float(v) == g][:2]


def r_gamma_one(spec, sw, hp):
    return ["lr.gamma = 1: the decay does nothing"] \
        if float(hp.get("lr.gamma", 1)) == 1 else []


def r_decay_fires(spec, sw, hp):
    """The decay must change η within the vector's rounds: two rounds at
    least (exponential), a step boundary before the last round (step), and
    step_rounds > 1 (else step = exponential)."""
    T = _n_rounds(spec)
    if sw.get("lr.schedule") == "step":
        s = int(hp.get("lr.step_rounds", 1))
        if s == 1:
            return ["lr.step_rounds = 1: step = exponential"]
        return [] if T > s else ["%d rounds, lr.step_rounds = %d: the decay never fires"
                                 % (T, s)]
    return [] if T >= 2 else ["%d round: γ^0 = 1, the decay never fires" % T]


def r_schedule_constant(spec, sw, hp):
    return ["lr.schedule = constant: nothing decays"] \
        if sw.get("lr.schedule", "constant") == "constant" else []


def has_bn(spec):
    m = spec["model"]
    return bool(m.get("bn")) or any("batchnorm" in L.get("type", "")
                                    for L in m.get("layers", []))


def bn_momenta(spec):
    m = spec["model"]
    if m.get("bn"):
        return [float(m.get("bn_momentum", 0.1))]
    return [float(L["momentum"]) if L.get("momentum") is not None else 0.1
            for L in m.get("layers", []) if "batchnorm" in L.get("type", "")]


def r_bn_used(spec, sw, hp):
    """A bn.* value needs batch normalisation whose running statistics
    move: ρ = 0 leaves them, ρ = 1 drops their past (one batch's), and
    bn.running = frozen stops them (except for bn.running itself)."""
    if not has_bn(spec):
        return ["no batch normalisation: the switch changes nothing"]
    out = ["BN momentum ρ = %g" % r for r in bn_momenta(spec) if r in (0.0, 1.0)]
    return out


def r_bn_moving(spec, sw, hp):
    return ["bn.running = frozen: no statistics move"] \
        if sw.get("bn.running") == "frozen" else []


def r_bn_aggregate(spec, sw, hp):
    """bn.aggregate = parameters_only: the clients' buffers must differ
    where they meet (a round with two participants: the average ≠ the first
    uploader's) and be read afterwards (a later round)."""
    rs = rounds(spec)
    multi = [t for t, r in enumerate(rs) if len(r["clients"]) >= 2]
    if not multi:
        return ["no round with two participants: every client's buffers are "
                "the global's"]
    if multi[0] == len(rs) - 1:
        return ["no round after the clients' buffers differ: the kept buffers "
                "are never read"]
    return []


# ((switch, values or None for every value), rule, reason): a vector runs
# (alg, switch, value) coincidence-free when no rule whose selector takes
# (switch, value) fires on it
SHARED_RULES = [
    (("opt.", None), r_opt_constants,
     "β = η or 1 − η, τ = β, β₁ = β₂, λ = η or λ of the algorithm: a swap is invisible"),
    (("opt.momentum_form", ("classical",)), r_no_momentum, "β = 0: no buffer"),
    (("opt.momentum_form", ("classical",)), r_momentum_form,
     "η constant over the state's life: the two forms agree"),
    (("opt.nesterov", ("on",)), r_no_momentum, "β = 0: no look-ahead"),
    (("opt.weight_decay_form", ("decoupled",)), r_no_decay, "λ = 0: no decay"),
    (("opt.weight_decay_form", ("decoupled",)), r_decoupled_plain,
     "plain SGD: decoupled = coupled"),
    (("opt.decay_scope", None), r_no_decay, "λ = 0: the scope selects nothing"),
    (("opt.decay_scope", ("weights",)), r_decay_weights,
     "no bias or BN block: weights = all"),
    (("opt.decay_scope", ("shared", "personal")), r_decay_split,
     "no split: shared = all, personal decays nothing"),
    (("opt.method", ("adam", "adamw")), r_adam_eps, "ε of the gradients' order hides v̂"),
    (("opt.method", ("adam", "adamw")), r_adam_one_step,
     "one step per state: the bias correction hides β₁, β₂"),
    (("opt.method", ("adamw",)), r_no_decay, "λ = 0: AdamW = Adam"),
    (("opt.clip", ("norm",)), r_clip_inactive,
     "a threshold never reached (or always): the clip is not read"),
    (("opt.state", ("client",)), r_state_client,
     "plain SGD or no client training twice: the kept state is not read"),
    (("opt.state", ("server",)), r_state_server,
     "plain SGD or no update after another client's: the carried state is not read"),
    (("lr.", None), r_gamma_pairs, "γ equal to another constant: a swap is invisible"),
    (("lr.schedule", None), r_gamma_one, "γ = 1: no decay"),
    (("lr.schedule", None), r_decay_fires, "the decay never fires within the rounds"),
    (("lr.scope", None), r_schedule_constant, "no decay: the scope reads nothing"),
    (("lr.scope", None), r_gamma_one, "γ = 1: no decay"),
    (("lr.count", ("trainings",)), r_lr_count,
     "clients' own training counts equal to the round hide the count"),
    (("lr.count", ("trainings",)), r_gamma_one, "γ = 1: no decay"),
    (("bn.", None), r_bn_used, "no BN, or ρ ∈ {0, 1}: the running statistics hide the switch"),
    (("bn.running_var", None), r_bn_moving, "frozen statistics never read the variance"),
    (("bn.aggregate", None), r_bn_aggregate,
     "equal buffers, or none read later, hide whose buffers are kept"),
]


def _selects(sel, key, val):
    k, vals = sel
    return (key.startswith(k) if k.endswith(".") else key == k) and \
        (vals is None or val in vals)


def shared_coincidences(spec, sw, hp, key, val):
    out = []
    for sel, rule, _ in SHARED_RULES:
        if _selects(sel, key, val):
            out += rule(spec, sw, hp)
    return out


_NYC = ("not yet covered: no vector of this algorithm runs it coincidence-free; "
        "the shared code is run coincidence-free by the witnesses' vectors")
# (switch, value) -> the algorithms declaring it that no vector covers yet
# (each such pair must have a witness: another algorithm with a
# coincidence-free vector of the value, shared_audit)
_NOT_YET = {
}
# A split the optimizer's blocks do not have: the run refuses the value at
# algorithm.switches.opt.decay_scope (exit 2; docs/optimizers.md, the slots
# table), so no vector can run it.
_NO_SPLIT = {
    "pfedme": "its inner solver steps θ, the whole model",
    "apple": "each client steps its core w_i and its p_i",
    "fedpac": "its two optimizers step the classifier and the feature "
              "extractor in turn",
    "lora": "its optimizer moves the adapter",
    "prox": "its inner solver steps θ, the whole model (ref/engine/"
            "prox_inner.c pflref_prox_opt_check, as pfedme's)",
}
# (algorithm, switch, value) -> reason
SHARED_EXCEPTIONS = {
    ("fedrecon", "opt.decay_scope", "shared"): (
        "inherent: FedRecon's optimizer steps g alone (docs/optimizers.md: the "
        "update of l. 11; l's reconstruction is plain SGD), and g is the "
        "split's shared blocks: shared decays every block it moves, the run "
        "is opt.decay_scope = all's bit for bit (every number of the "
        "reference's result; golden/optim/make_shared_pa.py asserts it of "
        "the exact replay)"),
    ("fedrecon", "opt.decay_scope", "personal"): (
        "inherent: FedRecon's optimizer steps g alone, the split's shared "
        "blocks: personal decays none of them, the run is opt.weight_decay "
        "= 0's bit for bit (every number of the reference's result; "
        "golden/optim/make_shared_pa.py asserts it of the exact replay)"),
}
# No lr.* for these (ref/engine/params.c LR_ALGORITHMS): η is constant over
# every optimizer state's life, where the classical momentum v ← μv − ηd is
# torch's b ← μb + d, θ ← θ − ηb with v = −ηb at every step (docs/
# optimizers.md); the exact replays give the same numbers
# (make_shared_pa.py asserts it), the reference's differ by rounding only
_CONSTANT_ETA = {
    "fedrecon": "its update step size η_u",
    "lora": "its step size η",
    "pfedhn": "its local step size η",
}
for _a, _eta in _CONSTANT_ETA.items():
    SHARED_EXCEPTIONS[(_a, "opt.momentum_form", "classical")] = (
        "inherent: %s takes no lr.* switch, so %s is constant over every "
        "optimizer state's life, where the classical form is the pytorch "
        "form in exact arithmetic (v = −η b at every step; the exact replay "
        "gives the same numbers, golden/optim/make_shared_pa.py asserts it): "
        "no vector can tell them apart" % (_a, _eta))
SHARED_EXCEPTIONS[("lora", "opt.decay_scope", "weights")] = (
    "inherent: lora's optimizer moves the adapter, and no adapter block is "
    "a bias (docs/optimizers.md): weights is all bit for bit")
for (_key, _val), _algs in _NOT_YET.items():
    for _a in _algs.split():
        assert (_a, _key, _val) not in SHARED_EXCEPTIONS, (_a, _key, _val)
        SHARED_EXCEPTIONS[(_a, _key, _val)] = _NYC
for _a, _why in _NO_SPLIT.items():
    for _val in ("shared", "personal"):
        SHARED_EXCEPTIONS[(_a, "opt.decay_scope", _val)] = (
            "inherent: refused by the run (exit 2 at algorithm.switches."
            "opt.decay_scope): %s, which has no split into shared and personal "
            "blocks" % _why)
# PFLEGO: its split is exactly the head (refused otherwise, split.personal),
# and its one optimizer steps the head blocks alone (ref/algorithms/pflego.c,
# a masked step); its model has no batch normalisation (refused, model.bn /
# model.layers).  Shown with `pflref run` on optim/pflego/adam-server's spec:
# decay_scope = shared gives the bits of opt.weight_decay = 0, personal those
# of all; bn.running = frozen and bn.running_var = biased those of the spec
# without them; an mlp with "bn": true exits 2 at model.bn, a layer list
# with a batchnorm1d at model.layers.
_PFLEGO_BN = ("inherent: refused by the run (exit 2 at model.bn for an mlp, "
              "model.layers for a layer list): pflego caches the body's "
              "features once per round and its body has no batch "
              "normalisation, so on every model it runs the value is never "
              "read (the run is the one without it, bit for bit)")
for (_key, _val), _why in {
        ("opt.decay_scope", "shared"): (
            "inherent: pflego's split is exactly the head and its optimizer "
            "steps the head blocks alone (every block it steps is personal): "
            "shared decays nothing, the run of opt.weight_decay = 0 bit for "
            "bit"),
        ("opt.decay_scope", "personal"): (
            "inherent: pflego's split is exactly the head and its optimizer "
            "steps the head blocks alone (every block it steps is personal): "
            "personal decays every block it steps, the run of all bit for "
            "bit"),
        ("bn.running", "frozen"): _PFLEGO_BN,
        ("bn.running_var", "biased"): _PFLEGO_BN}.items():
    assert ("pflego", _key, _val) not in SHARED_EXCEPTIONS, (_key, _val)
    SHARED_EXCEPTIONS[("pflego", _key, _val)] = _why
# lr.scope = eta_p scales η_p alone (ref/engine/lr.c scale_steps): an
# algorithm without η_p runs every step size constant, bit for bit the
# constant schedule (which its vectors without lr.* run)
_ETA_P_READERS = ("pfedme", "prox", "apple")
# lr.scope = no_beta scales every step size but Per-FedAvg's β: for every
# other algorithm it is lr.scope = all, bit for bit
_BETA_READERS = ("perfedavg",)


def shared_pairs(values):
    """The (algorithm, shared switch, value) the registry declares."""
    return sorted((alg, key, v) for (alg, key), vals in values.items()
                  if shared_key(key) for v in vals)


def shared_reason(alg, key, val):
    """The reason a declared (alg, key, val) needs no vector, or None."""
    if key == "lr.scope" and val == "eta_p" and alg not in _ETA_P_READERS:
        return ("inherent: lr.scope = eta_p scales η_p alone (ref/engine/lr.c "
                "scale_steps), which %s does not read: its run is the constant "
                "schedule's bit for bit" % alg)
    if key == "lr.scope" and val == "no_beta" and alg not in _BETA_READERS:
        return ("inherent: lr.scope = no_beta keeps only Per-FedAvg's β undecayed "
                "(ref/engine/lr.c scale_steps); for %s it is lr.scope = all bit "
                "for bit" % alg)
    return SHARED_EXCEPTIONS.get((alg, key, val))


def shared_audit(vectors, values, quiet=False):
    """(rows, problems, counts): per (algorithm, shared switch, value) the
    registry declares, the vectors of the algorithm that run the value and
    those free of SHARED_RULES' coincidences; a pair with none and no
    reason (shared_reason) is a problem, and so is an exception no longer
    needed or naming a pair the registry does not declare."""
    pairs = shared_pairs(values)
    free, seen = {}, {}
    for _, v in vectors:
        name, sw, hp = effective(v["spec"])
        for key, default in SHARED.items():
            val = sw.get(key, default)
            if val == default:
                continue
            seen.setdefault((name, key, val), []).append(v["id"])
            if not shared_coincidences(v["spec"], sw, hp, key, val):
                free.setdefault((name, key, val), []).append(v["id"])
    rows, problems = [], []
    counts = {"pairs": len(pairs), "covered": 0, "inherent": 0, "exceptions": 0}
    for p in pairs:
        n_free, n_all = len(free.get(p, [])), len(seen.get(p, []))
        reason = shared_reason(*p)
        if n_free:
            status = "ok"
            counts["covered"] += 1
            if p in SHARED_EXCEPTIONS:
                problems.append("shared: exception no longer needed: %s %s=%s" % p)
        elif reason:
            kind = "inherent" if reason.startswith("inherent") else "exceptions"
            counts[kind] += 1
            status = "exception: " + reason
            if kind == "exceptions":
                wit = sorted({a for (a, k, x), ids in free.items()
                              if (k, x) == p[1:] and a != p[0]})
                status += " (witnesses: %s)" % (" ".join(wit) or "NONE")
                if not wit:
                    problems.append("shared: %s %s=%s is not yet covered and no "
                                    "other algorithm has a coincidence-free "
                                    "vector of it" % p)
        else:
            status = "MISSING"
            problems.append("shared: %s %s=%s has no coincidence-free vector "
                            "(%d run it)" % (p + (n_all,)))
        if not quiet or status == "MISSING":
            rows.append("  %-40s %d free of %d  %s"
                        % ("%s %s=%s" % p, n_free, n_all, status))
    for p in sorted(set(SHARED_EXCEPTIONS) - set(pairs)):
        problems.append("shared: SHARED_EXCEPTIONS names a pair the registry does "
                        "not declare: %s %s=%s" % p)
    return rows, problems, counts


# --------------------------------------------------------------------------
# Every weighting of every mode: the averaged clients' sizes distinct in
# every vector (issue 33 §3).  A mode that weighs by n_i hides uniform
# weights, and one client's n read for another's, when two averaged clients
# share a size; a uniform mode (or an unweighted one: IFCA's and SCAFFOLD's
# means, FedDyn's 1/|P_t|) hides a candidate that weighs by n_i.  So the
# rule holds for every vector of an aggregating algorithm, not only for one
# per switch value.  A vector where it fails is listed in SIZES_HARMLESS
# with its argument; the argument the audit can check, that another vector
# of the same algorithm and weighting mode has distinct sizes (its
# witness), is checked, and a mode without such a vector fails.

def _lora_mode(sw):
    m = sw.get("lora.method")
    if m == "personal":
        return None                          # nothing is averaged
    return "%s/%s" % (m, sw.get("hetlora.weights" if m == "hetlora" else "lora.weights"))


def _sw(key):
    return lambda sw: sw.get(key)


# algorithm -> (the weighting mode of a vector, the clients one mean weighs)
WEIGHTING = {
    "fedavg": (_sw("fedavg.weights"), who_fedavg),
    "finetune": (_sw("fedavg.weights"), who_fedavg),
    "interp": (_sw("fedavg.weights"), who_fedavg),
    "pfedme": (_sw("pfedme.weights"), who_selected),
    "ditto": (_sw("ditto.weights"), who_clients),
    "fedalt": (_sw("pfl.weights"), who_clients),
    "fedsim": (_sw("pfl.weights"), who_clients),
    "pflego": (_sw("pflego.theta_weights"), who_all),
    "perfedavg": (_sw("perfedavg.weights"), who_clients),
    "apfl": (_sw("apfl.weights"), who_clients),
    "cfl": (_sw("cfl.cluster_weights"), who_clients),
    "ifca": (_sw("ifca.mode"), who_clients),
    "fedbn": (_sw("fedbn.weights"), who_clients),
    "lora": (_lora_mode, who_clients),
    "feddyn": (_sw("feddyn.alpha_k"), who_clients),
    "scaffold": (lambda sw: "-", who_clients),
    "moon": (lambda sw: "-", who_clients),
    "fedprox": (_sw("fedprox.sampling"), who_clients),
    "fedrecon": (_sw("fedrecon.weights"), who_clients),
}
# local, prox, fedfomo (weights from validation losses) and pfedhn (no
# server mean) average no clients by size.

_NOTES = ("reproduces a hand-worked example of the spec notes number for "
          "number (its clients' sizes are the notes'); the mode's weighting is "
          "decided by its witness")
_DATA = ("a data model whose clients hold equally many samples by design (the "
         "vector's subject is elsewhere); the mode's weighting is decided by its "
         "witness")
_SAMPLES_NOTES = ("the notes' example in a size-weighted mode: giving the "
                  "clients other sizes would change its published numbers; the "
                  "mode's weighting is decided by its witness")
# vector id -> the argument that its equal sizes are harmless
SIZES_HARMLESS = {
    "apfl/worked/notes-6g-adaptive": _NOTES,
    "apfl/worked/notes-6g-fedtorch": _NOTES,
    "apfl/worked/notes-6g-fixed": _NOTES,
    "cfl/worked/counterexample-complete-linkage": _NOTES,
    "cfl/worked/counterexample-optimal": _NOTES,
    "cfl/worked/linear-minibatch": _DATA,
    "cfl/worked/nested-split": _NOTES,
    "cfl/worked/seed003-gamma": _NOTES,
    "cfl/worked/seed003-samples": _SAMPLES_NOTES,
    "cfl/worked/seed003": _NOTES,
    "cfl/worked/thresholds-min-size": "quadratic clients of the default size; "
    "the uniform mode's sizes are decided by cfl/worked/boundary-* (distinct n)",
    "cfl/worked/thresholds-warmup-drawn": "quadratic clients of the default size; "
    "the uniform mode's sizes are decided by cfl/worked/boundary-* (distinct n)",
    "ditto/worked/notes-3g-both": _NOTES,
    "ditto/worked/notes-3g-lambda0": _NOTES,
    "ditto/worked/notes-3g-partial": _NOTES,
    "fedbn/worked/notes-a1": _NOTES,
    "finetune/worked/personal-bias-prox": _DATA,
    "ifca/worked/bias-half-drawn": _DATA,
    "ifca/worked/given-models-linear": _DATA,
    "ifca/worked/zero-loss-tie": _DATA,
    "interp/worked/grid-blank-validation": _DATA,
    "interp/worked/grid-validation-linear": _DATA,
    "layers/fedavg/cnn-inner-pad-squared": _DATA,
    "lora/worked/hand-hetlora-prune": _NOTES,
    "lora/worked/hand-hetlora": _NOTES,
    "lora/worked/hand-hetlora-lambda0": "the hand example's network with one "
    "sample per client; its subject is the λ > 0 test, and sparsity weights "
    "read no size; the mode's weighting is decided by its witness",
    "optim/cfl/adamw-client": _DATA,
    "optim/cfl/momentum-client": _DATA,
    "optim/cfl/nesterov-clip-server": _DATA,
    "optim/ifca/adamw-client": _DATA,
    "optim/ifca/momentum-client": _DATA,
    "optim/ifca/nesterov-clip-server": _DATA,
    "perfedavg/worked/notes-4g-exact-one-round": _NOTES,
    "perfedavg/worked/notes-4g-exact": _NOTES,
    "perfedavg/worked/notes-4g-fo": _NOTES,
    "perfedavg/worked/notes-4g-hf": _NOTES,
    "pfedme/worked/notes-2g-official-mu0-beta2": _NOTES,
    "pfedme/worked/notes-2g-official-mu0": _NOTES,
    "pfedme/worked/notes-2g-official": _NOTES,
    "pfedme/worked/notes-2g-paper-beta2": _NOTES,
    "pfedme/worked/notes-2g-paper": _NOTES,
    "pflego/worked/notes-b-code": _NOTES,
    "pflego/worked/notes-b-exact-alpha": _NOTES,
    "pflego/worked/notes-b-seed": _NOTES,
    "pflego/worked/spread-seed-global-drawn": "α_i = N_i/N reads every client's "
    "size; the equal pair N_1 = N_4 sits beside three distinct sizes, and the "
    "mode is decided by its witness",
    "scaffold/worked/quadratic-ii": "quadratic clients of the default size in "
    "SCAFFOLD's unweighted mean; the mode is decided by its witness",
}


def sizes_audit(vectors):
    """(rows, problems): per algorithm and weighting mode, the vectors with
    distinct sizes (the witnesses) and those listed harmless; a vector with
    equal sizes not listed, a listing no longer needed or naming no vector,
    and a mode without a witness are problems."""
    modes, problems, ids = {}, [], set()
    for _, v in vectors:
        name, sw, hp = effective(v["spec"])
        ids.add(v["id"])
        if name not in WEIGHTING:
            continue
        mode_of, who = WEIGHTING[name]
        mode = mode_of(sw)
        if mode is None:
            continue
        equal = r_equal_sizes(who)(v["spec"], sw, hp)
        wit, listed = modes.setdefault((name, mode), ([], []))
        if not equal:
            wit.append(v["id"])
            if v["id"] in SIZES_HARMLESS:
                problems.append("%s: listed in SIZES_HARMLESS but its sizes are "
                                "distinct" % v["id"])
        elif v["id"] in SIZES_HARMLESS:
            listed.append(v["id"])
        else:
            problems.append("%s: %s, not listed in SIZES_HARMLESS"
                            % (v["id"], "; ".join(equal)))
    for k in sorted(set(SIZES_HARMLESS) - ids):
        problems.append("SIZES_HARMLESS names no vector: %s" % k)
    rows = []
    for (name, mode), (wit, listed) in sorted(modes.items()):
        rows.append("  %-36s %2d with distinct sizes, %2d listed harmless%s"
                    % ("%s %s" % (name, mode), len(wit), len(listed),
                       "" if wit else "  NO WITNESS"))
        if not wit:
            problems.append("%s %s: no vector with distinct client sizes"
                            % (name, mode))
    return rows, problems


# --------------------------------------------------------------------------

def load(root):
    out = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                v = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(v, dict) and v.get("format") == "pflref-golden/1":
            out.append((os.path.relpath(path, root), v))
    return out


# --------------------------------------------------------------------------
# SWITCHES and PRESETS against the registry.  The audit is only as wide as
# SWITCHES: a switch value it does not list is never asked for a
# coincidence-free vector, and a preset read with stale settings puts its
# vectors under the wrong values.  So every switch value the registry
# declares for an algorithm (docs/variants.md, generated from it by `pflref
# list --variants --markdown` and kept equal to it by the Check suite
# diagnose's test_variants_doc_is_generated) must be in SWITCHES, and every
# preset's setting of a switch in SWITCHES must be PRESETS' value.  The
# shared solver switches are the exception below, with the reason.
VARIANTS_MD = os.path.join(os.path.dirname(HERE), "docs", "variants.md")
# The shared switches (opt.*, bn.*, lr.*) are not listed in SWITCHES: every
# value the registry declares for an algorithm is a pair of shared_audit,
# which asks it for a coincidence-free vector of that algorithm.


def registry_rows(text):
    """(switch values, preset settings) of the variants table: {(alg,
    key): {values}} and {(alg, preset): {key: value}}."""
    values, presets = {}, {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) < 5:
            continue
        alg, what, val = cells[0], cells[1], cells[2].strip("`")
        if what.startswith("switch `"):
            values.setdefault((alg, what[len("switch `"):-1]), set()).add(val)
        elif what == "preset":
            settings = cells[4].split("`")
            pairs = settings[1].split() if len(settings) > 1 else []
            presets[(alg, val)] = dict(p.split("=", 1) for p in pairs if "=" in p)
    return values, presets


def registry_audit(text):
    """The problems of SWITCHES and PRESETS against the variants table
    `text`: a value the registry declares that SWITCHES lacks, a preset
    setting PRESETS misreads or lacks."""
    values, presets = registry_rows(text)
    problems = []
    for (alg, key), vals in sorted(values.items()):
        listed = SWITCHES.get(alg, {}).get(key)
        if listed is None and shared_key(key):
            continue                    # every value: shared_audit's pairs
        if alg not in SWITCHES:
            problems.append("registry: algorithm %s is not in SWITCHES" % alg)
            continue
        for v in sorted(vals - set(listed or [])):
            problems.append("registry: %s %s=%s is not in SWITCHES: no coincidence-free "
                            "vector is asked of it" % (alg, key, v))
    for (alg, preset), settings in sorted(presets.items()):
        if alg not in SWITCHES or preset == "paper":
            continue
        ours = PRESETS.get((alg, preset), {})
        for key, v in sorted(settings.items()):
            if (key in SWITCHES[alg] or key in SHARED) and str(ours.get(key)) != v:
                problems.append("registry: preset %s/%s sets %s=%s, PRESETS says %s"
                                % (alg, preset, key, v, ours.get(key)))
        for key, v in sorted(ours.items()):
            if (key in SWITCHES[alg] or key in SHARED) and key not in settings:
                problems.append("registry: preset %s/%s does not set %s (PRESETS: %s)"
                                % (alg, preset, key, v))
    return problems


def coincidences(spec):
    name, sw, hp = effective(spec)
    out = []
    for cond, rule, _ in RULES[name]:
        if cond(sw):
            out += rule(spec, sw, hp)
    return name, sw, hp, out


def _planted(vectors, pair, change):
    """The vectors with every one of pair's algorithm (None: of every
    algorithm) that runs pair's shared value replaced by a copy
    change(spec) makes coincident."""
    import copy
    out = []
    for path, v in vectors:
        name, sw, _ = effective(v["spec"])
        if pair[0] in (None, name) and sw.get(pair[1]) == pair[2]:
            v = copy.deepcopy(v)
            change(v["spec"])
        out.append((path, v))
    return out


def _hyper(**kw):
    def change(spec):
        spec["algorithm"].setdefault("hyperparameters", {}).update(
            {k.replace("__", "."): x for k, x in kw.items()})
    return change


def _eta_momentum(spec):
    hp = spec["algorithm"]["hyperparameters"]
    hp["opt.momentum"] = hp["eta"]


def _bn_momentum_one(spec):
    for L in spec["model"].get("layers", []):
        if "batchnorm" in L.get("type", ""):
            L["momentum"] = 1.0


def _plain_sgd(spec):
    """SGD without momentum: Adam's and AdamW's vectors too (their state
    has no β to hide)."""
    spec["algorithm"].setdefault("hyperparameters", {})["opt.momentum"] = 0.0
    spec["algorithm"].setdefault("switches", {})["opt.method"] = "sgd"


def _no_split(spec):
    spec.pop("split", None)


def _personal_b1(spec):
    spec["split"]["personal"].append("b1")


# the pair the "every witness lost" plant declares not yet covered when
# _NOT_YET has none (shared_self_test)
_WITNESS_PLANT = ("fedrecon", "opt.decay_scope", "weights")


def shared_self_test(text):
    """Each plant of a shared value with only coincident vectors (and each
    stale or missing table entry) must be caught by shared_audit, and the
    real vectors must be clean.  Returns the number missed."""
    vectors = load(HERE)
    values = registry_rows(text)[0]
    row = "| fedavg | switch `opt.state` | `server` |"
    plants = [
        ("β = η", ("fedavg", "opt.nesterov", "on"), _eta_momentum),
        # pfedme's one opt.state = client vector runs SGD with momentum
        # (prox's other one runs AdamW, stateful without β)
        ("β = 0 (plain SGD)", ("prox", "opt.state", "client"), _plain_sgd),
        ("β₁ = β₂", ("fedrod", "opt.method", "adam"),
         _hyper(opt__beta1=0.875, opt__beta2=0.875)),
        ("λ = 0 under decoupled", ("fedalt", "opt.weight_decay_form", "decoupled"),
         _hyper(opt__weight_decay=0.0)),
        ("a clip never reached", ("local", "opt.clip", "norm"),
         _hyper(opt__clip_norm=4096.0)),
        ("γ = 1", ("fedavg", "lr.schedule", "exponential"), _hyper(lr__gamma=1.0)),
        ("a step decay never firing", ("fedavg", "lr.schedule", "step"),
         _hyper(lr__step_rounds=64)),
        ("BN momentum 1", ("fedavg", "bn.running", "frozen"), _bn_momentum_one),
        ("no split under shared", ("fedprox", "opt.decay_scope", "shared"), _no_split),
        # the witness rule of a not-yet-covered pair (_NOT_YET): none is
        # left, so the plant declares one (_WITNESS_PLANT, fedrecon's
        # opt.decay_scope = weights, the last to be covered) and λ = 0
        # makes every vector of the value coincident, its witnesses' too
        ("every witness lost", (None, "opt.decay_scope", "weights"),
         _hyper(opt__weight_decay=0.0)),
        # fedrecon's optimizer steps g alone: its bias b1 made personal
        ("no bias in g under weights", ("fedrecon", "opt.decay_scope", "weights"),
         _personal_b1),
    ]
    bad = 0
    for what, pair, change in plants:
        nyc = pair[0] is None and _WITNESS_PLANT not in SHARED_EXCEPTIONS
        if nyc:
            assert _WITNESS_PLANT[1:] == pair[1:], _WITNESS_PLANT
            SHARED_EXCEPTIONS[_WITNESS_PLANT] = _NYC
        try:
            _, problems, _ = shared_audit(_planted(vectors, pair, change),
                                          values, True)
        finally:
            if nyc:
                SHARED_EXCEPTIONS.pop(_WITNESS_PLANT)
        if pair[0] is None:         # the not-yet-covered pairs lose their witness
            want = "%s=%s is not yet covered and no other algorithm" % pair[1:]
        else:
            want = "%s %s=%s has no coincidence-free vector" % pair
        caught = any(want in p for p in problems)
        print("coincidences self-test: shared, %-26s %s"
              % (what, "caught" if caught else "MISSED"))
        bad += not caught
    more = [("a new shared value", text.replace(
        row, row.replace("`server`", "`novel`") + " x | x | x |\n" + row, 1),
        None, "fedavg opt.state=novel has no coincidence-free vector"),
        ("an exception not needed", text, ("fedavg", "opt.nesterov", "on"),
         "exception no longer needed: fedavg opt.nesterov=on")]
    for what, t, extra, want in more:
        if extra:
            SHARED_EXCEPTIONS[extra] = _NYC
        try:
            _, problems, _ = shared_audit(vectors, registry_rows(t)[0], True)
        finally:
            SHARED_EXCEPTIONS.pop(extra, None)
        caught = t != text or extra
        caught = caught and any(want in p for p in problems)
        print("coincidences self-test: shared, %-26s %s"
              % (what, "caught" if caught else "MISSED"))
        bad += not caught
    _, problems, _ = shared_audit(vectors, values, True)
    print("coincidences self-test: shared, %-26s %s" % (
        "the real vectors", "clean" if not problems else "%d problems" % len(problems)))
    return bad + bool(problems)


def self_test():
    """Each registry drift planted in a copy of docs/variants.md must be
    caught, and the real table must be clean; then shared_self_test."""
    text = open(VARIANTS_MD, encoding="utf-8").read()
    row = "| fedfomo | switch `fedfomo.anchor` | `post_train` |"
    preset = "fedfomo.anchor=pre_train"
    planted = [
        ("a new switch value", text.replace(row, row.replace("post_train", "mid_train")
                                            + " x | x | x |\n" + row, 1),
         "fedfomo fedfomo.anchor=mid_train is not in SWITCHES"),
        ("a new switch", text.replace(row, row.replace("fedfomo.anchor", "fedfomo.novel")
                                      + " x | x | x |\n" + row, 1),
         "fedfomo fedfomo.novel=post_train is not in SWITCHES"),
        ("a preset's setting changed", text.replace(preset, "fedfomo.anchor=post_train", 1),
         "preset fedfomo/pfllib sets fedfomo.anchor=post_train, PRESETS says pre_train"),
        ("a preset's setting dropped", text.replace(preset + " ", "", 1),
         "preset fedfomo/pfllib does not set fedfomo.anchor"),
    ]
    bad = 0
    for what, t, want in planted:
        if t == text:
            print("coincidences self-test: %-28s NOT PLANTED" % what)
            bad += 1
            continue
        caught = any(want in p for p in registry_audit(t))
        print("coincidences self-test: %-28s %s" % (what, "caught" if caught else "MISSED"))
        bad += not caught
    clean = registry_audit(text)
    print("coincidences self-test: %-28s %s" % ("the real table", "clean" if not clean else
                                                 "%d problems" % len(clean)))
    bad += shared_self_test(text)
    return 1 if bad or clean else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    quiet = "-q" in argv
    args = [a for a in argv if a != "-q"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: golden/coincidences.py [-q] [GOLDEN_DIR]\n"
              "       golden/coincidences.py --self-test", file=sys.stderr)
        return 2
    root = args[0] if args else HERE
    vectors = load(root)
    reg_problems = registry_audit(open(VARIANTS_MD, encoding="utf-8").read())
    for p in reg_problems:
        print("coincidences: " + p)
    free = {}          # (alg, switch, value) -> [ids]
    seen = {}
    rows = []
    for path, v in vectors:
        name, sw, hp, co = coincidences(v["spec"])
        rows.append((v["id"], co))
        for k, val in sw.items():
            seen.setdefault((name, k, val), []).append(v["id"])
            if not co:
                free.setdefault((name, k, val), []).append(v["id"])
        if not sw:
            seen.setdefault((name, "-", "-"), []).append(v["id"])
            if not co:
                free.setdefault((name, "-", "-"), []).append(v["id"])
    if not quiet:
        print("coincidences: vector x coincidences (none: coincidence-free)")
        w = max(len(i) for i, _ in rows)
        for i, co in rows:
            print("  %-*s  %s" % (w, i, "; ".join(co) if co else "none"))
    print("coincidences: per algorithm and switch value, the coincidence-free vectors")
    missing = []
    for name in SWITCHES:
        keys = [(name, k, val) for k, vals in SWITCHES[name].items() for val in vals] \
            or [(name, "-", "-")]
        for key in keys:
            n_free = len(free.get(key, []))
            n_all = len(seen.get(key, []))
            label = name if key[1] == "-" else "%s %s=%s" % key
            if n_free:
                status = "ok"
            elif key in EXCEPTIONS:
                status = "exception: " + EXCEPTIONS[key]
            else:
                status = "MISSING"
                missing.append(label)
            print("  %-48s %d free of %d  %s" % (label, n_free, n_all, status))
    sched_rows, sched_problems = schedule_audit(vectors)
    print("coincidences: schedule fields, one vector per algorithm free of each")
    if not quiet:
        for r in sched_rows:
            print(r)
    for p in sched_problems:
        print("coincidences: " + p)
    size_rows, size_problems = sizes_audit(vectors)
    size_problems = sched_problems + size_problems
    print("coincidences: every weighting of every mode, client sizes distinct "
          "in every vector")
    if not quiet:
        for r in size_rows:
            print(r)
    for p in size_problems:
        print("coincidences: " + p)
    values = registry_rows(open(VARIANTS_MD, encoding="utf-8").read())[0]
    sh_rows, sh_problems, n = shared_audit(vectors, values, quiet)
    print("coincidences: shared switches (opt.*, bn.*, lr.*), per algorithm and "
          "value the registry declares, the coincidence-free vectors")
    for r in sh_rows:
        print(r)
    for p in sh_problems:
        print("coincidences: " + p)
    print("coincidences: shared: %d (algorithm, switch, value) pairs: %d covered, "
          "%d inherent, %d not yet covered (each with a witness)"
          % (n["pairs"], n["covered"], n["inherent"], n["exceptions"]))
    import boundaries
    b_problems = boundaries.audit(vectors, quiet)
    unused = [k for k in EXCEPTIONS if free.get(k)]
    for k in unused:
        print("coincidences: exception no longer needed: %s %s=%s" % k)
    if missing or unused or size_problems or b_problems or reg_problems \
            or sh_problems:
        print("coincidences: %d algorithm/switch values without a coincidence-free vector: %s"
              % (len(missing), ", ".join(missing)))
        print("coincidences: %d size problems, %d boundary problems, %d registry "
              "problems, %d shared-switch problems"
              % (len(size_problems), len(b_problems), len(reg_problems),
                 len(sh_problems)))
        return 1
    print("coincidences: %d vectors, every algorithm/switch value has a coincidence-free "
          "vector or a listed exception, ok" % len(vectors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
