#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedPAC golden vectors (Xu, Tong, Huang, ICLR 2023, arXiv 2306.11867,
Alg. 1 with a linear classifier head), computed by
golden/pflref_exact_fedpac.py in 60-digit decimal arithmetic,
independently of the C reference.

Three clients of distinct sizes (n = 3, 4, 5) and three classes, label
skew: client 0 holds classes {0, 1} (no sample of class 2), client 1 all
three with distinct counts, client 2 {1, 2}; the clients' inputs on
distinct scales (×2, ×0.5, ×4), so that in round 2 of
fedpac/mlp/paper clients 0 and 2 put α = 0 on each other's head (the
QP's boundary) while their other weights are interior.  Rounds S_0 = {0, 1}, S_1 = {2} (alone:
α = (1); no holder of class 0, so round 2 has no centroid c_0),
S_2 = {0, 1, 2}: clients 0 and 1 skip round 1 (their φ stay stale),
client 2 first trains in round 1 (its φ is w⁰'s head); round 0 has no
centroid at all; the batches differ in size; η, η_φ, λ distinct and ≠ 1.

Vectors (file = id without "fedpac/", '/' → '-'):
  fedpac/mlp/paper       mlp 2-3-3 (identity body), the paper's reading, τ_φ = 1
  fedpac/mlp/mse         fedpac.distance = mse (‖·‖²/d, torch's MSELoss)
  fedpac/layers/paper    a layer list (dense 2→4, ReLU, dense 4→3), τ_φ = 2
  fedpac/mlp/official    preset official (fedpac.distance = mse,
                         alpha_small = renormalised, missing = own_start)
  fedpac/layers/pfllib   preset pfllib (fedpac.distance = mse,
                         alpha_small = raw, centroid_weights = uniform)
  fedpac/mlp/drawn       the paper's reading, rounds 0 and 2's clients drawn
                         in another order than listed (batches on samples
                         0-2 only)
  fedpac/layers/momentum-decay
                         the authors' two optimizers (SGD momentum 0.5,
                         weight decay 0.0625), new every client update
  fedpac/mlp/official-run
                         preset official_run (official + momentum 0.5,
                         weight decay 5e-4)
  fedpac/layers/momentum-client
                         one optimizer per client kept across rounds
                         (opt.state = client), η_φ = η (PFLlib's object)
  fedpac/layers/pfllib-lr-trainings
                         preset pfllib with PFLlib's -ld: lr.schedule =
                         exponential, γ = 3/4, lr.count = trainings (the
                         preset's); η and η_φ both decay (clientpac.py:95-96)
  fedpac/layers/bn-paper a layer list with batch normalisation (dense 2→4,
                         batchnorm1d, ReLU, dense 4→3): the statistics and
                         centroids in evaluation mode (r_μ, r_v), every
                         step a training pass that moves r_μ, r_v; the
                         buffers averaged with θ (bn.aggregate = average)
  fedpac/layers/bn-pfllib
                         the same under preset pfllib (bn.aggregate =
                         parameters_only: each client keeps its own r_μ,
                         r_v, w takes the first participant's)
  fedpac/mlp/boundary-alpha-eps
                         two clients (n = 2, 4) on an mlp 2-2-2 with an
                         identity body at w⁰: round 0's α_0 = (7/8, 1/8)
                         exactly, ε = 1/8 under alpha_small = renormalised
                         (the threshold's strictness decides the run)
  fedpac/mlp/boundary-alpha-one
                         the same data: rounds with one participant, whose
                         α = (1) is exact in every precision, against
                         ε = 1 under alpha_small = raw

    /usr/bin/python3 golden/fedpac/make_fedpac.py [OUTDIR]
    /usr/bin/python3 golden/fedpac/make_fedpac.py --eps [OUTDIR]
                        (fedpac/mlp/boundary-alpha-eps alone)
"""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px           # noqa: E402
import pflref_exact_fedpac as pp     # noqa: E402
import pflref_golden as pg           # noqa: E402

SOURCE = ("Xu, Tong, Huang, ICLR 2023, arXiv 2306.11867, Alg. 1 (linear "
          "classifier head; the box rebuilt from the method, "
          "docs/algorithms/fedpac.md); JianXu95/FedPAC 5770f4ff8f11 "
          "methods/fedpac.py, tools.py, running.py")
GENERATOR = ("golden/fedpac/make_fedpac.py (60-digit decimals, "
             "pflref_exact_fedpac.py)")
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs: three rounds of at most four local "
             "steps per client on a model with P ≤ 27 (cross-entropy "
             "gradients, exp of magnitudes below 10), class means of at "
             "most five features, and the classifier weights from a "
             "regular bordered system of at most four rows whose smallest "
             "pivot is far from 0; a few hundred roundings of 1.1e-16, "
             "amplified by at most 1e2, stay inside 1e-13 + 1e-12 |r|; "
             "every flagged bug moves some value by more than 1e3 times "
             "the tolerance.",
}


def scaled(rows, f):
    return [[u * f for u in r] for r in rows]


CLIENTS = [
    {"X": scaled([[0.8, -0.35], [-0.6, 0.9], [0.45, 0.7]], 2.0),
     "y": [1.0, 0.0, 1.0]},
    {"X": scaled([[-0.3, -0.85], [0.95, 0.15], [-0.7, 0.4], [0.25, -0.55]],
                 0.5),
     "y": [0.0, 2.0, 0.0, 1.0]},
    {"X": scaled([[0.65, 0.55], [-0.9, -0.2], [0.35, -0.75], [-0.15, 0.6],
                  [0.7, 0.05]], 4.0),
     "y": [2.0, 1.0, 2.0, 2.0, 1.0]},
]
ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 2], [1, 0, 2]],
                                    [[2, 1, 0], [3, 1]]]},
    {"clients": [2], "batches": [[[4, 0, 3], [1, 2], [3]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 2], [0, 1]],
                                       [[0, 3], [2, 1, 0], [1]],
                                       [[2, 4], [0, 1, 3]]]},
]
ROUNDS_LAYERS = [
    {"clients": [0, 1], "batches": [[[0, 2], [1], [1, 0, 2]],
                                    [[2, 1, 0], [3], [3, 1]]]},
    {"clients": [2], "batches": [[[4, 0, 3], [1, 2], [3]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 2], [0], [0, 1]],
                                       [[0, 3], [2, 1, 0], [1], [2]],
                                       [[2, 4], [1], [0, 1, 3]]]},
]
MLP = {"kind": "mlp", "d": 2, "h": 3, "k": 3, "loss": "cross_entropy",
       "activation": "identity"}
# W1 (3 × 2), b1 (3), W2 (3 × 3), b2 (3)
W_MLP = [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4,
         0.8, -0.45, 0.55, -0.6, 0.5, 0.3, 0.1, -0.15, 0.65,
         0.05, -0.2, 0.15]
LAYERS = {"kind": "layers", "input": [2], "loss": "cross_entropy",
          "layers": [{"type": "dense", "name": "fc1", "out": 4},
                     {"type": "relu"},
                     {"type": "dense", "name": "out", "out": 3}]}
# fc1 (4 × 2, 4), out (3 × 4, 3)
W_LAYERS = [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, -0.75,
            0.4, 0.25, 0.45, 0.2,
            0.6, -0.35, 0.45, 0.2, 0.5, -0.4, 0.15, -0.25, 0.7, -0.3, 0.4,
            0.65,
            0.05, -0.1, 0.12]

COMMON = ["fedpac-alignment", "fedpac-statistics", "fedpac-centroids",
          "fedpac-missing-centroid", "fedpac-combination", "fedpac-order",
          "aggregation-weights", "stale-personal-state", "local-step-count"]


def make(name, title, description, model, w0, algorithm, flags,
         rounds=ROUNDS, clients=CLIENTS, check=None):
    vid = f"fedpac/{name}"
    init = {"kind": "given", "w": w0}
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)
    if check is not None:
        check(spec)
    mutants = {f: pp.MUTANTS[f] for f in flags if f in pp.MUTANTS}

    def run(bugs=frozenset()):
        return pp.replay(spec, frozenset(bugs))

    result = run()
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return (name.replace("/", "-") + ".json",
            pg.vector(vid, title, prov, flags, spec, TOL, exp))


def alg(eta, lam, eta_phi, tau_phi, preset=None, eps=None, **switches):
    a = {"name": "fedpac"}
    if preset:
        a["preset"] = preset
    a["hyperparameters"] = {"eta": eta, "fedpac.lambda": lam,
                            "fedpac.eta_phi": eta_phi,
                            "fedpac.tau_phi": tau_phi}
    if eps is not None:
        a["hyperparameters"]["fedpac.alpha_eps"] = eps
    if switches:
        a["switches"] = {f"fedpac.{k}": v for k, v in switches.items()}
    return a


def paper():
    return make(
        "mlp/paper",
        "FedPAC, mlp 2-3-3 (identity body), three clients with label skew, "
        "three rounds, the paper's reading",
        "η = 0.35, λ = 0.6, η_φ = 0.45, τ_φ = 1; statistics at θ^(t), "
        "centroids at the trained θ_i, α_i by the exact QP.",
        MLP, W_MLP, alg(0.35, 0.6, 0.45, 1), COMMON)


def mse():
    return make(
        "mlp/mse",
        "FedPAC with fedpac.distance = mse (‖f − c‖²/d, torch's MSELoss)",
        "η = 0.3, λ = 0.75, η_φ = 0.55, τ_φ = 1; the rest as "
        "fedpac/mlp/paper.",
        MLP, W_MLP, alg(0.3, 0.75, 0.55, 1, distance="mse"),
        COMMON + ["fedpac-distance-mse"])


def layers_paper():
    return make(
        "layers/paper",
        "FedPAC on a layer list (dense 2→4, ReLU, dense 4→3), τ_φ = 2, the "
        "paper's reading",
        "η = 0.4, λ = 0.65, η_φ = 0.5, τ_φ = 2; the rest as "
        "fedpac/mlp/paper.",
        LAYERS, W_LAYERS, alg(0.4, 0.65, 0.5, 2), COMMON,
        rounds=ROUNDS_LAYERS)


PRESET_COMMON = [f for f in COMMON if f != "fedpac-alignment"]


def official():
    return make(
        "mlp/official",
        "FedPAC, the official preset (JianXu95/FedPAC: MSE alignment, small "
        "classifier weights dropped and renormalised, a missing centroid "
        "replaced by the client's own)",
        "η = 0.25, λ = 0.7, η_φ = 0.1 (the authors' classifier step), "
        "τ_φ = 1, ε = 0.035: the weights 0.031 (round 0) and 0.021 "
        "(round 2) are dropped, 0.041 kept; round 2 has no c_0, so clients "
        "0 and 1 align class 0 to their own centroids at θ^(2).",
        MLP, W_MLP, alg(0.25, 0.7, 0.1, 1, preset="official", eps=0.035),
        PRESET_COMMON + ["fedpac-distance-mse", "fedpac-alpha-small",
                         "fedpac-alpha-renormalised", "fedpac-missing-own"])


def pfllib():
    return make(
        "layers/pfllib",
        "FedPAC on a layer list, the pfllib preset (MSE alignment, small "
        "classifier weights dropped without renormalising, the plain mean "
        "of the centroids)",
        "η = 0.45, λ = 0.55, η_φ = 0.35, τ_φ = 2, ε = 0.05: the weights "
        "0.045, 0.035 and 0.030 are dropped, 0.055 kept.",
        LAYERS, W_LAYERS, alg(0.45, 0.55, 0.35, 2, preset="pfllib", eps=0.05),
        [f for f in PRESET_COMMON if f != "fedpac-missing-centroid"]
        + ["fedpac-distance-mse", "fedpac-alpha-small", "fedpac-alpha-raw",
           "fedpac-centroid-uniform"],
        rounds=ROUNDS_LAYERS)


# the sampler's order of each round's clients (information only:
# batches[j] stays clients[j]'s); the batches use samples 0-2 only, which
# every client has, so a candidate that pairs them with the drawn order
# runs (and differs) instead of failing
DRAWN = [[1, 0], [2], [2, 0, 1]]
ROUNDS_DRAWN = [
    {"clients": [0, 1], "batches": [[[0, 2], [1, 0, 2]],
                                    [[2, 1, 0], [0, 1]]]},
    {"clients": [2], "batches": [[[2, 0], [1, 2], [0]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 2], [0, 1]],
                                       [[0, 2], [2, 1, 0], [1]],
                                       [[2, 0], [0, 1, 2]]]},
]


def drawn():
    return make(
        "mlp/drawn",
        "FedPAC, the paper's reading, rounds 0 and 2's clients drawn in "
        "another order than listed",
        "η = 0.55, λ = 0.4, η_φ = 0.3, τ_φ = 1; each round carries its drawn "
        "order (docs/formats.md), which must not be paired with the batch "
        "lists.",
        MLP, W_MLP, alg(0.55, 0.4, 0.3, 1),
        COMMON + ["schedule-drawn-order"],
        rounds=px.with_drawn(ROUNDS_DRAWN, DRAWN))


STATE_BUGS = ["state-reset", "state-client", "state-server"]
OPT_TOL = dict(TOL)
OPT_TOL["basis"] = (TOL["basis"] + " The client optimizers add a momentum "
                    "buffer (μ ≤ 0.5) and a weight-decay term per entry: a "
                    "few roundings more per step, the buffers' sums "
                    "bounded by 1/(1 − μ) = 2 times a step's.")


def make_opt(name, title, description, model, w0, algorithm, flags, life,
             rounds):
    """A vector with the client optimizers: make()'s checks, plus the
    optimizer's own mutants (the state's other lifetimes, the decay's
    other form) and a check that the optimizers move the values."""
    vid = f"fedpac/{name}"
    init = {"kind": "given", "w": w0}
    spec = pg.given_spec(title, description, model, CLIENTS, init, algorithm,
                         rounds)
    mutants = {f: pp.MUTANTS[f] for f in flags if f in pp.MUTANTS}
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = [b for b in STATE_BUGS
                                               if b != "state-" + life]
    if "weight-decay-form" in flags:
        mutants["weight-decay-form"] = ["decay-form-swap"]

    def run(bugs=frozenset(), sp=spec):
        return pp.replay(sp, frozenset(bugs))

    result = run()
    exp = pg.checked_expected(vid, OPT_TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    plain = json.loads(json.dumps(spec))        # the optimizers act
    a = plain["algorithm"]
    if a.get("preset") == "official_run":
        a["preset"] = "official"
    a["hyperparameters"] = {k: u for k, u in a["hyperparameters"].items()
                            if not k.startswith("opt.")}
    a["switches"] = {k: u for k, u in a.get("switches", {}).items()
                     if not k.startswith("opt.")}
    tr, w, v, _ = run(sp=plain)
    assert pg.detects(exp, pg.expected(tr, w, v), OPT_TOL) is not None, vid
    prov = pg.provenance("independent", SOURCE + OPT_SOURCE, GENERATOR)
    return (name.replace("/", "-") + ".json",
            pg.vector(vid, title, prov, flags, spec, OPT_TOL, exp))


OPT_SOURCE = ("; methods/fedpac.py:189-195, :216-221 (the two "
              "torch.optim.SGD objects of a client update); TsingZ0/PFLlib "
              "d832e76f6a23 clientpac.py (one self.optimizer, "
              "clientbase.py:47); torch.optim.SGD's documented update "
              "rule; docs/optimizers.md")
OPT_FLAGS = ["fedpac-optimizers", "optimizer-state-lifetime",
             "weight-decay-form"]


def momentum_decay():
    a = alg(0.4, 0.65, 0.5, 2)
    a["hyperparameters"].update({"opt.momentum": 0.5,
                                 "opt.weight_decay": 0.0625})
    return make_opt(
        "layers/momentum-decay",
        "FedPAC on a layer list with the authors' two client optimizers: "
        "torch.optim.SGD(momentum = 0.5, weight_decay = 0.0625) for the "
        "classifier's τ_φ = 2 steps and a new one for the feature "
        "extractor's, built in every client update",
        "The problem and rounds of fedpac/layers/paper (η = 0.4, λ = 0.65, "
        "η_φ = 0.5, τ_φ = 2); opt.momentum = 0.5, opt.weight_decay = 0.0625 "
        "(coupled, every block, biases too), opt.state = reset: optimizer 0 "
        "steps the head's blocks (out.W, out.b) at η_φ in the first two "
        "batches, optimizer 1 the body's (fc1.W, fc1.b) at η in the rest, "
        "each tensor with its own momentum buffer (JianXu95/FedPAC "
        "methods/fedpac.py:194-195, :220-221).",
        LAYERS, W_LAYERS, a, COMMON + OPT_FLAGS, "reset", ROUNDS_LAYERS)


def official_run():
    return make_opt(
        "mlp/official-run",
        "FedPAC, the official_run preset: the official preset with the "
        "authors' client optimizers, SGD momentum 0.5 and weight decay 5e-4 "
        "(new for each phase of each client update)",
        "The problem, rounds and values of fedpac/mlp/official (η = 0.25, "
        "λ = 0.7, η_φ = 0.1, τ_φ = 1, ε = 0.035) under preset official_run "
        "= official + opt.momentum = 0.5, opt.weight_decay = 0.0005 "
        "(methods/fedpac.py:194-195, :220-221).",
        MLP, W_MLP, alg(0.25, 0.7, 0.1, 1, preset="official_run", eps=0.035),
        PRESET_COMMON + ["fedpac-distance-mse", "fedpac-alpha-small",
                         "fedpac-alpha-renormalised", "fedpac-missing-own"]
        + OPT_FLAGS, "reset", ROUNDS)


def momentum_client():
    a = alg(0.35, 0.6, 0.35, 2)
    a["hyperparameters"].update({"opt.momentum": 0.75,
                                 "opt.weight_decay": 0.125})
    a["switches"] = {"opt.state": "client"}
    return make_opt(
        "layers/momentum-client",
        "FedPAC on a layer list, one optimizer per client kept across its "
        "rounds (PFLlib's self.optimizer) with momentum 0.75 and weight "
        "decay 0.125, one step size for both phases",
        "The problem and rounds of fedpac/layers/paper; η = η_φ = 0.35 "
        "(PFLlib's one learning rate), λ = 0.6, τ_φ = 2; opt.momentum = "
        "0.75, opt.weight_decay = 0.125, opt.state = client: the head's and "
        "the body's buffers carry into the client's next round (clients 0 "
        "and 1 skip round 1, client 2 round 0), as torch keeps a "
        "parameter's state in the one object and skips the frozen phase's "
        "tensors (grad None).",
        LAYERS, W_LAYERS, a,
        COMMON + ["optimizer-state-lifetime", "weight-decay-form"],
        "client", ROUNDS_LAYERS)


LR_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 clientpac.py:95-96 (the "
             "client's ExponentialLR stepped after each train(), "
             "clientbase.py: one optimizer for both phases)")


def pfllib_lr():
    a = alg(0.45, 0.55, 0.35, 2, preset="pfllib", eps=0.05)
    a["hyperparameters"]["lr.gamma"] = 0.75
    a["switches"] = {"lr.schedule": "exponential"}
    flags = ([f for f in PRESET_COMMON if f != "fedpac-missing-centroid"]
             + ["fedpac-distance-mse", "fedpac-alpha-small",
                "fedpac-alpha-raw", "fedpac-centroid-uniform",
                "lr-schedule", "lr-count"])
    name = "layers/pfllib-lr-trainings"
    out = make(
        name,
        "FedPAC on a layer list, the pfllib preset with PFLlib's -ld "
        "learning-rate decay (γ = 3/4, each client's scheduler stepped "
        "after its own train())",
        "The problem, rounds and values of fedpac/layers/pfllib (η = 0.45, "
        "λ = 0.55, η_φ = 0.35, τ_φ = 2, ε = 0.05) with lr.schedule = "
        "exponential, lr.gamma = 0.75 and the preset's lr.count = "
        "trainings: client i's update scales both η and η_φ by (3/4)^k, k "
        "the rounds it trained in before (round 1: client 2, k = 0; round "
        "2: every client, k = 1), not the round t.",
        LAYERS, W_LAYERS, a, flags, rounds=ROUNDS_LAYERS)
    spec = out[1]["spec"]
    rounds = json.loads(json.dumps(spec))
    rounds["algorithm"]["switches"]["lr.count"] = "rounds"
    assert (pp.replay(rounds)[2] != pp.replay(spec)[2]), name
    prov = out[1]["provenance"]
    prov["source"] = prov["source"] + LR_SOURCE
    return out


# batch normalisation: every batch of two samples or more (a training
# pass of one sample has no unbiased variance, as torch refuses)
ROUNDS_BN = [
    {"clients": [0, 1], "batches": [[[0, 2], [1, 0, 2], [2, 1]],
                                    [[2, 1, 0], [3, 1], [0, 3]]]},
    {"clients": [2], "batches": [[[4, 0, 3], [1, 2], [3, 0]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 2], [0, 1]],
                                       [[0, 3], [2, 1, 0], [1, 2]],
                                       [[2, 4], [0, 1, 3]]]},
]
LAYERS_BN = {"kind": "layers", "input": [2], "loss": "cross_entropy",
             "layers": [{"type": "dense", "name": "fc1", "out": 4},
                        {"type": "batchnorm1d", "name": "bn1",
                         "eps": 0.03125, "momentum": 0.2},
                        {"type": "relu"},
                        {"type": "dense", "name": "out", "out": 3}]}
# fc1 (4 × 2, 4), bn1 (γ 4, β 4, r_μ 4, r_v 4), out (3 × 4, 3); r_μ, r_v
# away from any batch's statistics, so evaluation and training differ
W_LAYERS_BN = W_LAYERS[:12] + [
    1.1, 0.85, 1.25, 0.95,
    0.05, -0.15, 0.2, 0.1,
    0.3, -0.45, 0.15, -0.2,
    0.6, 1.35, 0.8, 2.1] + W_LAYERS[12:]
BN_FLAGS = ["fedpac-bn-modes", "bn-running-frozen"]


def bn_paper():
    return make(
        "layers/bn-paper",
        "FedPAC on a layer list with batch normalisation (dense 2→4, "
        "batchnorm1d, ReLU, dense 4→3), the paper's reading",
        "η = 0.4, λ = 0.65, η_φ = 0.5, τ_φ = 1; ε = 1/32, ρ = 0.2.  l. 5's "
        "statistics and l. 8's centroids in evaluation mode (r_μ, r_v: "
        "f_θ(x) a function of x alone); every step of ll. 6-7 a training "
        "pass (the batch's statistics, in the alignment term too) that "
        "moves r_μ, r_v (unbiased r_v), θ frozen or not; the server "
        "averages r_μ, r_v with θ (bn.aggregate = average).",
        LAYERS_BN, W_LAYERS_BN, alg(0.4, 0.65, 0.5, 1), COMMON + BN_FLAGS,
        rounds=ROUNDS_BN)


def bn_pfllib():
    return make(
        "layers/bn-pfllib",
        "FedPAC on the batch-norm layer list, the pfllib preset: each "
        "client keeps its own running statistics (bn.aggregate = "
        "parameters_only)",
        "η = 0.45, λ = 0.55, η_φ = 0.35, τ_φ = 1, ε = 0.05; the problem "
        "and rounds of fedpac/layers/bn-paper.  PFLlib's set_parameters "
        "copies parameters() only (clientpac.py:105-107): v_i keeps its "
        "r_μ, r_v (w⁰'s until it first trains), w's are the first "
        "participant's (serverbase.py:138-150).",
        LAYERS_BN, W_LAYERS_BN,
        alg(0.45, 0.55, 0.35, 1, preset="pfllib", eps=0.05),
        [f for f in PRESET_COMMON if f != "fedpac-missing-centroid"]
        + ["fedpac-distance-mse", "fedpac-centroid-uniform",
           "bn-own-buffers"] + BN_FLAGS,
        rounds=ROUNDS_BN)


# fedpac.alpha_eps on its boundary (issue 33 §3): two clients (n = 2, 4)
# on an mlp 2-2-2 whose body is the identity (W1 = I, b1 = 0), so round 0's
# statistics at w⁰ are the inputs' class statistics, dyadic and exact in
# fp64: V_0 = 25/64, V_1 = 45/64, ‖h_0 − h_1‖² = 65/32.  With m = 2 client
# 0's Q_0 is diagonal (its own row has no cross term), diag(V_0, V_1 +
# ‖h_0 − h_1‖²) = diag(25/64, 175/64), and its weights are (7/8, 1/8):
# α_01 = 1/8 = ε exactly.  The strict α > ε sets it to 0 (renormalised:
# client 0 keeps its own head); α ≥ ε would keep 1/8.  Client 1's α_10 =
# 45/200 = 9/40 is off the boundary.  Round 1 (both clients again) carries
# the difference through the trained heads.
CLIENTS_EPS = [
    {"X": [[-0.5, -0.75], [1.5, -0.25]], "y": [0.0, 1.0]},
    {"X": [[-2.0, 1.75], [0.5, 0.25], [-1.75, -0.75], [0.75, -1.75]],
     "y": [0.0, 0.0, 1.0, 1.0]},
]
MLP_EPS = {"kind": "mlp", "d": 2, "h": 2, "k": 2, "loss": "cross_entropy",
           "activation": "identity"}
# W1 = I (2 × 2), b1 = 0, W2 (2 × 2), b2 (2)
W_EPS = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.35, -0.6, 0.45, 0.2, 0.15, -0.1]
ROUNDS_EPS = [
    {"clients": [0, 1], "batches": [[[0, 1], [1]], [[2, 0, 3], [1, 2]]]},
    {"clients": [0, 1], "batches": [[[1, 0]], [[3, 1], [0, 2, 1]]]},
]


def check_alpha_eps(spec):
    """Round 0's weights before the threshold, by the exact replay with
    the threshold off (bug no-threshold): client 0's are (7/8, 1/8) exactly,
    the second ε; client 1's are off the boundary; and the fp64 statistics
    are exact (every input and w⁰ entry dyadic, every class count a power
    of 2 or its client's size)."""
    from decimal import Decimal
    trace = pp.replay(spec, frozenset({"no-threshold"}))[0]
    al = {(r["round"], r["client"]): r["value"] for r in trace.records
          if r["event"] == "note" and r["name"] == "alpha_i"}
    eps = Decimal(spec["algorithm"]["hyperparameters"]["fedpac.alpha_eps"])
    assert al[(0, 0)] == [Decimal(7) / 8, Decimal(1) / 8], al[(0, 0)]
    assert al[(0, 0)][1] == eps
    for key, row in al.items():
        # the other weights decide as fp64 does: at least 1e-6 from ε
        # (round 1's α_01 = 0.1239..., 1.1e-3 below it)
        assert key == (0, 0) or all(abs(u - eps) > Decimal("1e-6")
                                    for u in row), (key, row)
    vals = [u for c in spec["problem"]["clients"] for x in c["X"] for u in x]
    assert all((Decimal(u) * 64) % 1 == 0 for u in vals + spec["init"]["w"][:6])


def boundary_alpha_eps():
    return make(
        "mlp/boundary-alpha-eps",
        "FedPAC with a classifier weight exactly fedpac.alpha_eps: α_01 = "
        "1/8 = ε, set to 0 by the strict α > ε",
        "η = 0.3, λ = 0.55, η_φ = 0.4, τ_φ = 1; fedpac.alpha_small = "
        "renormalised, ε = 1/8; the body the identity at w⁰, so round 0's "
        "Q_0 = diag(25/64, 175/64) and α_0 = (7/8, 1/8) exactly.",
        MLP_EPS, W_EPS, alg(0.3, 0.55, 0.4, 1, eps=0.125,
                            alpha_small="renormalised"),
        [f for f in COMMON if f != "fedpac-missing-centroid"]
        + ["fedpac-alpha-small", "fedpac-alpha-renormalised",
           "fedpac-alpha-eps-boundary"],
        rounds=ROUNDS_EPS, clients=CLIENTS_EPS, check=check_alpha_eps)


# fedpac.alpha_eps on its boundary in numbers that rounding cannot move
# (issue 32): a round with one participant makes the QP's simplex a point,
# α_i = (1) exactly (the C's bordered system [V_i 1; 1 0] pivots on its
# 1 row while V_i < 1 and gives α = 1 with no rounding; a solver that forms
# Q_SS⁻¹1 / 1ᵀQ_SS⁻¹1 divides a number by itself), in every precision and
# under every perturbation of V_i.  ε = 1 is the one threshold that
# weight sits on: the strict α > ε sets it to 0, so under
# alpha_small = raw the participant's head φ_i = Σ_j α_ij φ_j becomes 0;
# α ≥ ε keeps it (φ_i its trained head).  Rounds S_0 = {1}, S_1 = {0} (each
# alone), S_2 = {0, 1}, whose interior weights (0.84, 0.16) and
# (0.29, 0.71) the threshold sets to 0 under either reading.  raw, not
# renormalised: with every weight 0 the renormalised reading divides 0 by 0.
ROUNDS_ONE = [
    {"clients": [1], "batches": [[[2, 0, 3], [1, 2]]]},
    {"clients": [0], "batches": [[[0, 1], [1]]]},
    {"clients": [0, 1], "batches": [[[1, 0]], [[3, 1], [0, 2, 1]]]},
]


def check_alpha_one(spec):
    """By the exact replay with the threshold off (bug no-threshold): each
    lone participant's weight is 1 exactly and its V_i < 7/8 (below 1 with
    a margin, so the C pivots on the row of ones and its α is 1 with no
    rounding); the weights of round 2, with two participants, are below
    7/8, at least 1/8 from ε."""
    from decimal import Decimal
    trace = pp.replay(spec, frozenset({"no-threshold"}))[0]
    notes = {(r["round"], r.get("client"), r["name"]): r["value"]
             for r in trace.records if r["event"] == "note"}
    eps = Decimal(spec["algorithm"]["hyperparameters"]["fedpac.alpha_eps"])
    assert eps == 1
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        for i in rnd["clients"]:
            al = [u for j, u in enumerate(notes[(t, i, "alpha_i")])
                  if j in rnd["clients"]]
            if len(rnd["clients"]) == 1:
                assert al == [1], (t, i, al)
                assert notes[(t, i, "V")][0] < Decimal("0.875"), (t, i)
            else:
                assert all(u < Decimal("0.875") for u in al), (t, i, al)


def boundary_alpha_one():
    return make(
        "mlp/boundary-alpha-one",
        "FedPAC with a lone participant's weight α = 1 = fedpac.alpha_eps: "
        "set to 0 by the strict α > ε",
        "The data, model and w⁰ of fedpac/mlp/boundary-alpha-eps; η = 0.3, "
        "λ = 0.55, η_φ = 0.4, τ_φ = 1; fedpac.alpha_small = raw, ε = 1. "
        "Rounds 0 and 1 have one participant each (client 1, then client "
        "0): the QP's only point is α = (1), exactly 1 in every precision, "
        "which the strict α > ε sets to 0, so that participant's head "
        "becomes 0 (α ≥ ε would keep its trained head). Round 2's two "
        "participants have interior weights, below ε under either reading.",
        MLP_EPS, W_EPS, alg(0.3, 0.55, 0.4, 1, eps=1.0, alpha_small="raw"),
        ["fedpac-alpha-small", "fedpac-alpha-eps-boundary"],
        rounds=ROUNDS_ONE, clients=CLIENTS_EPS, check=check_alpha_one)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--eps":
        out = sys.argv[2] if len(sys.argv) > 2 else HERE
        fname, v = boundary_alpha_eps()
        pg.write_vector(os.path.join(out, fname), v)
        return
    pg.write_all(sys.argv, HERE, (paper, mse, layers_paper, official,
                                  pfllib, drawn, momentum_decay,
                                  official_run, momentum_client,
                                  pfllib_lr, bn_paper, bn_pfllib,
                                  boundary_alpha_eps, boundary_alpha_one))


if __name__ == "__main__":
    main()
