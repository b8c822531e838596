#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors for the layer-list model ("kind": "layers") under the
algorithm families that had none: local, finetune, Per-FedAvg, APFL,
interp, FedSim (LG-FedAvg, the input split), CFL, IFCA, FedFomo, PFLEGO
and pFedHN, and FedRep, Ditto and pFedMe beside their CNN vectors
(make_pfl.py), on the networks of families_common.py:

  layers/<family>/deep-...   DEEP (conv2d with stride 2 and padding 1,
                             relu, maxpool, avgpool, flatten, three dense
                             layers with tanh and sigmoid between),
                             60-digit decimals, every family;
  layers/local/cnn-...       the CNN (the same conv, relu, overlapping
                             maxpool, flatten, dense), exact fractions
                             (CNN_FAMILIES below says why only local).
  layers/perfedavg/deep2-... DEEP2 (a conv2d after a conv2d: the
                             Hessian-vector product's tangents of a conv
                             layer's input), 60-digit decimals, the exact
                             Per-FedAvg variant only.

PFLEGO's vector records the body passes, (1, 1) for every tau as the
paper caches the features.

Every expected number is the exact replay of the spec as written
(golden/audit.py's replay: pflref_exact.py, pflref_exact_pfl.py and the
family's pflref_exact_<family>.py on pflref_exact_layers.py); the flags
are those whose bugs move a number by more than 1e3 times the tolerance
(families_common.build).  Per family, what the vector exercises:

  local      two rounds, three clients (n = 3, 4, 2), v_i kept across
             rounds, client 2 first trains in round 1.
  finetune   two FedAvg rounds (client 1 unsampled in round 0), then
             every client fine-tunes the whole model with μ_ft > 0 toward
             the global w.
  perfedavg  Per-FedAvg, exact variant (the Hessian-vector product of the
             layer list: pflref_exact_layers.hvp_exact), D, D′, D″
             different in every step, then the one-step personalisation;
             the DEEP vector uses the hf variant (δ = 1/64).
  apfl       output mixing (the layer list's outputs and its
             Jacobian-transpose products), adaptive α, η_α ≠ η.
  interp     the per-client grid (G = 4) on validation splits.
  fedsim     LG-FedAvg (preset lg_fedavg: the group "input", the conv
             layer, personal; the dense layers shared), fine-tuning.
  cfl        four clients in two groups of opposite targets; ε₁, ε₂ and
             γ_max set from the run's own norms with wide margins, so the
             first round's cluster splits.
  ifca       k = 2 given cluster models, Option I (gradient).
  fedfomo    three rounds of given peer draws, validation splits.
  pflego     body (conv, hidden dense layers) and head (the last dense
             layer) on the SGD server.
  pfedhn     a linear hypernetwork onto the layer list's P parameters
             (e = 2 embedding entries), plain SGD inside and outside.

    /usr/bin/python3 golden/layers/make_families.py [OUTDIR]
"""
import math
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import audit                       # noqa: E402
import families_common as fc       # noqa: E402
import layers_common as lc         # noqa: E402
import pflref_exact_layers as pl   # noqa: E402
import pflref_golden as pg         # noqa: E402

GENERATOR = ("golden/layers/make_families.py ({}, the family's exact replay on "
             "pflref_exact_layers.py)")
SKIP = {"lr-count", "lr-schedule", "schedule-drawn-order", "feature-transpose",
        "bias-gradient", "bias-update", "regression-only", "reference-output"}
NETS = {"cnn": (fc.CNN, fc.CNN_TEXT, "CNN"), "deep": (fc.DEEP, fc.DEEP_TEXT, "DEEP"),
        "deep2": (fc.DEEP2, fc.DEEP2_TEXT, "DEEP2")}
SOURCES = {
    "fedalt": "Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022, Alg. 4 "
              "(FedAlt; FedRep preset); shared/spec notes-pflego-fedalt-fedsim-fedrep.md",
    "ditto": "Li, Hu, Beirami, Smith, ICML 2021, Alg. 1; shared/spec notes §3",
    "pfedme": "Dinh, Tran, Nguyen, NeurIPS 2020, Alg. 1; shared/spec notes §2",
    "local": "local-only training, shared/spec notes-fedavg-pfedme-ditto-perfedavg-apfl.md §5",
    "finetune": "FedAvg (McMahan et al., AISTATS 2017, Alg. 1) then fine-tuning, "
                "shared/spec notes §5.1",
    "perfedavg": "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1; shared/spec notes §4",
    "apfl": "Deng, Kamani, Mahdavi 2020, arXiv 2003.13461, Alg. 1; shared/spec notes §6",
    "interp": "Mansour, Mohri, Ro, Suresh 2020, §3 (interpolation); shared/spec notes §5.2",
    "fedsim": "Pillutla et al., ICML 2022, Alg. 5 (FedSim; LG-FedAvg preset, "
              "Liang et al. 2020); shared/spec notes-pflego-fedalt-fedsim-fedrep.md",
    "cfl": "Sattler, Müller, Samek, IEEE TNNLS 2020, Alg. 1; shared/spec "
           "notes-cfl-ifca-sampling-metrics.md §1",
    "ifca": "Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, Alg. 1; shared/spec "
            "notes-cfl-ifca-sampling-metrics.md §2",
    "fedfomo": "Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, Alg. 1; shared/spec "
               "notes-fedfomo.md",
    "pflego": "Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848, Alg. 1; "
              "shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2",
    "pfedhn": "Shamsian, Navon, Fetaya, Chechik, ICML 2021, arXiv 2103.04628v1, "
              "Alg. 1; shared/spec notes-lora-pfedhn.md §4",
}


def candidates(alg):
    """Every flag audit.py can earn for the algorithm, in a fixed order."""
    return [f for f in sorted(audit.MUTANTS)
            if f not in SKIP and not f.startswith("bn")
            and (audit.MUTANTS[f].get(alg) or audit.MUTANTS[f].get("*"))]


def vector(family, net, short, title, what, model_alg, rounds, post=None,
           split=None, init=None, clients=None, sizes=(3, 4, 2), seed=0,
           must=(), atol=1e-13, rtol=1e-12):
    model, text, key = NETS[net]
    cl = clients if clients is not None else fc.clients(model, sizes, 9000 + seed)
    if init is None:
        init = {"kind": "given", "w": lc.init_for(model, 300 + seed, scale=0.5)}
    vid = f"layers/{family}/{net}-{short}"
    spec = pg.given_spec(title, f"{text} {what}", model, cl, init, model_alg,
                         rounds, split=split, post=post)
    must = list(must) + [f for f in fc.MODEL_FLAGS[key] if f in must_model(net)]
    return fc.build(GENERATOR, SOURCES[family], vid, f"{family}-{net}-{short}.json",
                    title, spec, candidates(model_alg["name"]), must, atol, rtol)


def must_model(net):
    """The layer flags every vector of a network must earn (its kinds)."""
    if net == "cnn":
        return {"conv-kernel-orientation", "conv-padding", "pool-gradient"}
    if net == "deep2":
        return {"conv-kernel-orientation", "activation-derivative"}
    return {"conv-kernel-orientation", "pool-gradient", "activation-derivative",
            "dense-weight-layout"}


# ---------------------------------------------------------------- families

ROUNDS_3 = [
    {"clients": [0, 1], "batches": [[[0, 2], [1]], [[3, 1], [0, 2]]]},
    {"clients": [1, 2], "batches": [[[1, 2], [0], [3, 1]], [[1], [0, 1]]]},
]


def local(net):
    return vector("local", net, "two-rounds",
                  f"Local-only training on the {net.upper()} layer list, two rounds",
                  "Local: every participant trains its own v_i (kept across rounds) "
                  "with eta = 0.0859375; round 0 clients 0 and 1, round 1 clients "
                  "1 and 2.",
                  {"name": "local", "hyperparameters": {"eta": 0.0859375}},
                  ROUNDS_3, seed=1, must=["stale-personal-state"])


def finetune(net):
    rounds = [
        {"clients": [0, 2], "batches": [[[0, 2], [1]], [[1, 0]]]},
        {"clients": [0, 1, 2], "batches": [[[2, 1], [0]], [[3, 1], [0, 2]], [[0], [1]]]},
    ]
    post = [[[0, 1], [2]], [[1, 3], [0, 2]], [[1, 0], [0]]]
    return vector("finetune", net, "prox-full",
                  f"FedAvg then proximal fine-tuning on the {net.upper()} layer list",
                  "Two FedAvg rounds (eta = 0.0703125, weights n_k / m_t; client 1 "
                  "unsampled in round 0), then every client fine-tunes the whole "
                  "model: eta_ft = 0.1015625, mu_ft = 0.375 toward the global w.",
                  {"name": "finetune", "hyperparameters": {
                      "eta": 0.0703125, "eta_ft": 0.1015625, "mu_ft": 0.375}},
                  rounds, post=post, seed=2, must=["prox-sign", "stale-global"])


def perfedavg(net, variant=None):
    rounds = [
        {"clients": [0, 2], "batches": [[[0, 1], [2], [1, 2], [2, 0], [1], [0]],
                                        [[1, 0], [0], [1]]]},
        {"clients": [1, 2], "batches": [[[3, 0], [1, 2], [2], [0], [1, 3], [2, 0]],
                                        [[0], [1], [1, 0]]]},
    ]
    post = [[[2, 0]], [[1, 3]], [[0]]]
    hp = {"alpha": 0.0546875, "beta": 0.0859375}
    sw = {}
    what = ("Per-FedAvg, exact variant: w~ = w - alpha grad f(w; D), w <- w - "
            "beta (I - alpha hess f(w; D'')) grad f(w~; D'); alpha = 0.0546875, "
            "beta = 0.0859375; uniform mean; then theta_i = w - alpha grad f(w; D1).")
    variant = variant or ("exact" if net == "cnn" else "hf")
    if variant == "hf":
        hp["delta"] = 0.015625
        sw = {"perfedavg.variant": "hf"}
        what = what.replace("exact variant", "hf variant (delta = 1/64)").replace(
            "hess f(w; D'') ", "[grad f(w + delta q; D'') - grad f(w - delta q; D'')]"
            "/(2 delta)/q ")
    alg = {"name": "perfedavg", "hyperparameters": hp}
    if sw:
        alg["switches"] = sw
    return vector("perfedavg", net, variant,
                  f"Per-FedAvg ({variant}) on the "
                  f"{net.upper()} layer list, two rounds",
                  what, alg, rounds, post=post, seed=3,
                  must=["perfedavg-hessian-term", "perfedavg-batch-reuse"])


def apfl(net):
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 2], [1]], [[3, 1], [0, 2], [1]]]},
        {"clients": [1, 2], "batches": [[[2, 0], [1, 3]], [[1, 0], [0]]]},
    ]
    return vector("apfl", net, "output-adaptive",
                  f"APFL, output mixing with adaptive alpha, on the {net.upper()} "
                  "layer list",
                  "APFL: per batch w_i <- w_i - eta grad f(w_i), v_i <- v_i - eta "
                  "alpha_i grad_v of the loss of the mixed output alpha_i z(v_i) + "
                  "(1 - alpha_i) z(w_i), alpha_i adaptive; eta = 0.0859375, alpha_0 "
                  "= 0.375, eta_alpha = 0.3125; uniform mean.",
                  {"name": "apfl", "hyperparameters": {
                      "eta": 0.0859375, "alpha": 0.375, "eta_alpha": 0.3125},
                   "switches": {"apfl.alpha": "adaptive", "apfl.mix": "output"}},
                  rounds, seed=4, must=["apfl-mix", "apfl-v-scale"])


def interp(net):
    model = NETS[net][0]
    d = pl.size(model["input"])

    def extra(i, dd):
        rng = random.Random(9500 + i)
        nv, nt = (2, 1, 3)[i], (1, 2, 1)[i]
        return {"X_val": lc.rows(9600 + i, nv, dd),
                "y_val": lc.values(rng, nv, -1.5, 1.5, 16),
                "X_test": lc.rows(9650 + i, nt, dd),
                "y_test": lc.values(rng, nt, -1.5, 1.5, 16)}
    cl = fc.clients(model, (3, 4, 2), 9005, extra=extra)
    assert len(cl[0]["X"][0]) == d
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1]], [[3, 1], [0]], [[1, 0]]]},
        {"clients": [0, 1], "batches": [[[1], [2, 0]], [[2, 0], [1, 3]]]},
    ]
    post = [[[0, 1], [2]], [[2, 3], [0], [1]], [[1], [0]]]
    return vector("interp", net, "grid-validation",
                  f"Interpolation with the per-client grid on the {net.upper()} "
                  "layer list",
                  "Two FedAvg rounds (eta = 0.1171875, weights n_k / m_t), then "
                  "every client trains h_i from w0 on its post batches and picks "
                  "alpha in {0, 1/4, 1/2, 3/4, 1} by the loss of alpha h_i + (1 - "
                  "alpha) w on its validation split.",
                  {"name": "interp", "hyperparameters": {"eta": 0.1171875,
                                                         "interp.grid": 4},
                   "switches": {"interp.alpha": "per_client_grid",
                                "interp.select": "validation"}},
                  rounds, post=post, clients=cl, seed=5, must=["interp-selection"])


def fedsim(net):
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 2], [1]], [[3, 1], [0, 2], [1]]]},
        {"clients": [1, 2], "batches": [[[2, 0], [1, 3]], [[1, 0], [0]]]},
    ]
    post = [[[0, 1], [2]], [[3, 0]], [[1], [0]]]
    return vector("fedsim", net, "lg-fedavg-input",
                  f"LG-FedAvg (FedSim preset, the input layer personal) on the "
                  f"{net.upper()} layer list",
                  "FedSim with the preset lg_fedavg: the group input (conv.weight, "
                  "conv.bias) is personal, the dense layers shared; per batch one "
                  "simultaneous step, gamma_u = 0.0703125 on the shared blocks, "
                  "gamma_v = 0.1171875 on the personal ones; weights n_i; then "
                  "fine-tuning of the personal blocks with eta_ft = 0.0859375.",
                  {"name": "fedsim", "preset": "lg_fedavg", "hyperparameters": {
                      "gamma_u": 0.0703125, "gamma_v": 0.1171875,
                      "eta_ft": 0.0859375}},
                  rounds, post=post, seed=6,
                  must=["pfl-update-order", "stale-personal-state", "finetune-scope"])


def cfl(net):
    model = NETS[net][0]

    def y_of(i, rng, n):        # two groups of opposite targets
        sign = 1 if i in (0, 2) else -1
        return [sign * abs(v) for v in lc.values(rng, n, 0.5, 1.5, 16)]
    cl = fc.clients(model, (3, 4, 2, 5), 9007, y_of=y_of)
    rounds = [
        {"clients": [0, 1, 2, 3], "batches": [[[0, 2], [1]], [[3, 1], [0, 2]],
                                              [[1, 0]], [[4, 0], [2, 3]]]},
        {"clients": [0, 1, 2, 3], "batches": [[[1], [2, 0]], [[2, 0], [1]],
                                              [[0], [1]], [[1, 2], [3, 4]]]},
    ]
    alg = {"name": "cfl", "hyperparameters": {"eta": 0.0859375, "eps1": 100.0,
                                              "eps2": 0.0, "gamma_max": 1.0}}
    init = {"kind": "given", "w": lc.init_for(model, 307, scale=0.5)}
    # the thresholds from the run's own first-round norms: ‖mean Δθ‖ well
    # below ε₁, max ‖Δθ_i‖ well above ε₂ (the decisions far from them)
    probe = pg.given_spec("probe", None, model, cl, init, alg, rounds[:1])
    tr = audit.MODULES["cfl"].replay(probe)[0]
    notes = {r["name"]: float(r["value"][0]) for r in tr.records
             if r["event"] == "note" and r["round"] == 0 and len(r["value"]) == 1}
    mean_n, max_n = notes["norm_dtheta_c"], notes["max_norm_dtheta"]
    cross = notes["alpha_cross"]
    assert mean_n * 2 < max_n, (mean_n, max_n)
    eps1 = round(mean_n * 1.5 * 64) / 64
    eps2 = round(max_n * 0.75 * 64) / 64
    gmax = math.floor(0.8 * math.sqrt((1 - cross) / 2) * 64) / 64
    assert mean_n < eps1 * 0.9 and max_n > eps2 * 1.1 and eps1 != eps2, (mean_n, max_n)
    assert cross < (1 - 2 * gmax * gmax) - 0.05, (cross, gmax)
    alg["hyperparameters"].update({"eps1": eps1, "eps2": eps2, "gamma_max": gmax})
    return vector("cfl", net, "split",
                  f"CFL on the {net.upper()} layer list, a split in round 0",
                  f"CFL (Alg. 1): one gradient-step update per batch, eta = "
                  f"0.0859375; four clients, two groups of opposite targets; eps1 = "
                  f"{eps1}, eps2 = {eps2}, gamma_max = {gmax} (set from the run's "
                  f"norms {mean_n:.4f}, {max_n:.4f} and alpha_cross {cross:.4f}).",
                  alg, rounds, init=init, clients=cl, seed=7,
                  must=["cfl-similarity-normalisation"])


def ifca(net):
    model = NETS[net][0]
    cm = [lc.init_for(model, 308, scale=0.5), lc.init_for(model, 318, scale=0.5)]
    rounds = [
        {"clients": [0, 1, 3], "batches": [[[0, 2]], [[1, 3]], [[0, 1]]]},
        {"clients": [0, 1, 2, 3], "batches": [[[1, 2]], [[0, 2]], [[1, 0]], [[3, 0]]]},
    ]
    return vector("ifca", net, "gradient-given-models",
                  f"IFCA (Option I) on the {net.upper()} layer list, two given "
                  "cluster models",
                  "IFCA, k = 2 given cluster models, ifca.mode gradient: each "
                  "participant picks argmin_j F_i(theta_j) on its training set and "
                  "sends its gradient on its batch; theta_j <- theta_j - (gamma/|M_t|) "
                  "sum; gamma = 0.1796875.",
                  {"name": "ifca", "hyperparameters": {"gamma": 0.1796875, "ifca.k": 2}},
                  rounds, init={"kind": "zeros", "cluster_models": cm},
                  sizes=(3, 4, 2, 5), seed=8, must=["ifca-divisor"])


def fedfomo(net):
    model = NETS[net][0]

    def extra(i, dd):
        rng = random.Random(9700 + i)
        nv = (2, 3, 1, 2)[i]
        return {"X_val": lc.rows(9800 + i, nv, dd),
                "y_val": lc.values(rng, nv, -1.5, 1.5, 16)}
    cl = fc.clients(model, (3, 4, 2, 5), 9009, extra=extra)
    rounds = [
        {"clients": [0, 1, 2, 3], "batches": [[[0, 1], [2]], [[0, 2], [1, 3]], [[1], [0]],
                                              [[0, 1, 2], [3, 4]]],
         "peer_draws": [{"order": [2, 1, 3], "u": [0.0625, 0.75]},
                        {"order": [3, 0, 2], "u": [0.875, 0.1875]},
                        {"order": [1, 3, 0], "u": [0.625]},
                        {"order": [0, 2, 1], "u": [0.3125, 0.9375]}]},
        {"clients": [0, 2, 3], "batches": [[[2, 0], [1]], [[0, 1]], [[4, 1], [2, 0, 3]]],
         "peer_draws": [{"order": [3, 1, 2], "u": [0.6875, 0.125]},
                        {"order": [0, 3, 1], "u": [0.5625, 0.8125]},
                        {"order": [2, 1, 0], "u": [0.25, 0.6875]}]},
        {"clients": [0, 1, 2, 3], "batches": [[[1, 2]], [[3, 0], [2]], [[1], [0]], [[2, 3]]],
         "peer_draws": [{"order": [1, 3, 2], "u": [0.4375, 0.5625]},
                        {"order": [2, 0, 3], "u": [0.9375, 0.3125]},
                        {"order": [3, 0, 1], "u": [0.1875, 0.875]},
                        {"order": [1, 0, 2], "u": [0.75, 0.0625]}]},
    ]
    return vector("fedfomo", net, "draws",
                  f"FedFomo on the {net.upper()} layer list, three rounds of given "
                  "peer draws",
                  "FedFomo (Alg. 1): per round and client, weights w_n = max(0, "
                  "(L(phi_i) - L(theta_n))/||theta_n - phi_i||) normalised, on the "
                  "validation split; phi_i = phi_i + sum w_n (theta_n - phi_i); "
                  "local SGD with eta = 0.0859375; epsilon-greedy peer selection "
                  "from the given draws (epsilon0 = 0.5, delta = 0.125).",
                  {"name": "fedfomo", "hyperparameters": {
                      "eta": 0.0859375, "fedfomo.epsilon0": 0.5, "fedfomo.delta": 0.125}},
                  rounds, clients=cl, seed=9, must=["fedfomo-clip"])


def pflego(net):
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 1, 2]] * 3, [[0, 1, 2, 3]] * 3]},
        {"clients": [1, 2], "batches": [[[0, 1, 2, 3]] * 2, [[0, 1]] * 2]},
    ]
    return vector("pflego", net, "head-sgd",
                  f"PFLEGO on the {net.upper()} layer list: personal head, SGD server",
                  "PFLEGO: the head (the last dense layer) is personal, the body "
                  "(every other block) shared; per participant tau - 1 full-batch "
                  "head steps with beta = 0.1171875, then the joint gradient, the "
                  "head step rho (I/r) and the body update with rho = 0.0859375.",
                  {"name": "pflego", "hyperparameters": {"rho": 0.0859375,
                                                         "pflego.beta": 0.1171875}},
                  rounds, split={"personal": ["head"]}, seed=10,
                  must=["pflego-inverse-probability"])


def pfedhn(net):
    model = NETS[net][0]
    P = pl.Model(model, "float").P
    rng = random.Random(9900)
    hn = {"W": [lc.values(rng, 2, -0.5, 0.5, 64) for _ in range(P)],
          "b": lc.values(rng, P, -0.25, 0.25, 64),
          "v": [lc.values(rng, 2, -1.25, 1.25, 16) for _ in range(3)]}
    rounds = [
        {"clients": [2], "batches": [[[0, 1], [1]]]},
        {"clients": [0], "batches": [[[1, 2], [0]]]},
        {"clients": [2], "batches": [[[1, 0]]]},
        {"clients": [1], "batches": [[[2, 0], [3, 1]]]},
    ]
    return vector("pfedhn", net, "linear-hn",
                  f"pFedHN on the {net.upper()} layer list, a linear hypernetwork",
                  "pFedHN (Alg. 1): theta_i = W_h v_i + b_h (e = 2), K local SGD "
                  "steps with eta = 0.0859375, then W_h, b_h <- + alpha dtheta "
                  "v_i^T, + alpha dtheta and v_i <- + alpha_v W_h^T dtheta; alpha = "
                  "0.3125, alpha_v = 0.4375.",
                  {"name": "pfedhn", "hyperparameters": {
                      "eta": 0.0859375, "alpha": 0.3125, "pfedhn.alpha_v": 0.4375}},
                  rounds, init={"kind": "zeros", "hypernetwork": hn}, seed=11,
                  must=["pfedhn-sign"])


def perfedavg_exact(net):
    """The exact variant on DEEP: the Hessian-vector product of tanh,
    sigmoid, avgpool and the rest by pflref_exact_layers.hvp_exact."""
    return perfedavg(net, "exact")


def fedalt(net):
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1], [2, 1]], [[3, 1], [0, 2], [1, 3]],
                                           [[1, 0], [0]]]},
        {"clients": [0, 1], "batches": [[[1, 2], [0, 1]], [[2, 0], [3], [1, 2]]]},
    ]
    post = [[[0, 2], [1]], [[3, 1]], [[1, 0], [0]]]
    return vector("fedalt", net, "fedrep-head",
                  f"FedRep (FedAlt preset) on the {net.upper()} layer list, personal "
                  "head",
                  "FedAlt with the preset fedrep: the group head (the last dense "
                  "layer) personal; tau_v = 1 head step with gamma_v = 0.0859375, "
                  "then the body with gamma_u = 0.0546875 on the remaining batches; "
                  "uniform weights; fine-tuning of the head with eta_ft = 0.0703125.",
                  {"name": "fedalt", "preset": "fedrep", "hyperparameters": {
                      "gamma_u": 0.0546875, "gamma_v": 0.0859375, "eta_ft": 0.0703125,
                      "tau_v": 1}},
                  rounds, post=post, split={"personal": ["head"]}, seed=12,
                  must=["pfl-update-order", "stale-personal-state"])


def ditto(net):
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1]], [[3, 1], [0, 2]], [[1, 0]]]},
        {"clients": [0, 2], "batches": [[[1, 2], [0]], [[0], [1, 0]]]},
    ]
    return vector("ditto", net, "two-rounds",
                  f"Ditto on the {net.upper()} layer list, paper switches",
                  "Ditto: per batch a personal step v <- v - eta (grad f(v) + lambda "
                  "(v - w^t)) and a global step, eta = 0.0703125, lambda = 0.375; "
                  "weights n_k / m_t; client 1 unsampled in round 1.",
                  {"name": "ditto", "hyperparameters": {"eta": 0.0703125,
                                                        "lambda": 0.375}},
                  rounds, seed=13, must=["prox-sign", "ditto-moving-ref"])


def pfedme(net):
    rounds = [
        {"clients": [0, 1, 2], "selected": [0, 2],
         "batches": [[[0, 2]], [[3, 1], [0, 2]], [[1, 0]]]},
        {"clients": [0, 1, 2], "selected": [1, 2],
         "batches": [[[1, 2]], [[0, 2]], [[0]]]},
    ]
    return vector("pfedme", net, "two-rounds",
                  f"pFedMe on the {net.upper()} layer list, K = 2, beta = 0.875",
                  "pFedMe: every client trains; per batch theta <- w_{i,r}, K = 2 "
                  "steps theta <- theta - eta_p (grad f(theta) + lambda (theta - "
                  "w_{i,r})), w_{i,r+1} = w_{i,r} - eta lambda (w_{i,r} - theta); "
                  "w_{t+1} = (1 - beta) w_t + beta mean over S^t; eta = 0.0390625, "
                  "eta_p = 0.0546875, lambda = 0.625, beta = 0.875.",
                  {"name": "pfedme", "hyperparameters": {
                      "eta": 0.0390625, "eta_p": 0.0546875, "lambda": 0.625, "K": 2,
                      "beta": 0.875}},
                  rounds, seed=14, must=["theta-start", "prox-sign"])


FAMILIES = [fedalt, ditto, pfedme, local, finetune, perfedavg, perfedavg_exact, apfl, interp, fedsim, cfl, ifca, fedfomo,
            pflego, pfedhn]


# the exact-fraction CNN only where the sequential steps are few: the
# CNN's gradient is a polynomial of degree 3 in the parameters, so the
# length of an exact value triples with every step it goes through
CNN_FAMILIES = ("local",)


# DEEP2 (a conv2d after another parametrised layer) only where a
# Hessian-vector product runs: Per-FedAvg's exact variant
DEEP2_FAMILIES = ("perfedavg_exact",)


HELD = ()


def makers(only=None):
    return [lambda f=f, net=net: f(net) for f in FAMILIES
            if (f.__name__ in only if only else f.__name__ not in HELD)
            for net in NETS if net == "deep"
            or (net == "cnn" and f.__name__ in CNN_FAMILIES)
            or (net == "deep2" and f.__name__ in DEEP2_FAMILIES)]


if __name__ == "__main__":
    only = os.environ.get("LAYERS_FAMILIES")
    pg.write_all(sys.argv, HERE, makers(only.split(",") if only else None))
