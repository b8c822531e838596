#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedRoD golden vectors (Chen and Chao, ICLR 2022, arXiv 2107.00778,
Alg. 1 with a linear personal head and the balanced softmax), computed by
golden/pflref_exact_fedrod.py in 60-digit decimal arithmetic,
independently of the C reference.

Three clients of distinct sizes (n = 3, 4, 5) and three classes, label
skew: client 0 holds classes {0, 1} (no sample of class 2: its balanced
softmax gives class 2 probability 0), client 1 all three with distinct
counts, client 2 {1, 2}.  Rounds S_0 = {1}, S_1 = {0, 2}, S_2 = {0, 1}:
client 0 first trains in round 1 (φ_P⁰ matters), client 2 skips round 2
and client 1 round 1 (their φ_P stay stale, then carry on); the batches
differ in size; η ≠ 1 and distinct across vectors.

Vectors (file = id without "fedrod/", '/' → '-'):
  fedrod/mlp/paper       mlp 2-3-3 (identity body), the paper's reading
                         (features after the generic step, φ_P⁰ = 0)
  fedrod/mlp/before      fedrod.features = before
  fedrod/mlp/generic     fedrod.phi_p0 = generic
  fedrod/layers/paper    a layer list (dense 2→4, ReLU, dense 4→3), the
                         paper's reading
  fedrod/layers/pfllib   the pfllib preset
  fedrod/mlp/drawn       the paper's reading, batches on samples 0-2 only,
                         rounds 1 and 2's clients drawn as 2, 0 and 1, 0
  fedrod/mlp/counts-pfllib  the pfllib preset with init.class_counts (the
                         counts of PFLlib's first pass with drop_last)
  fedrod/layers/bn-paper a layer list with batch normalisation (dense
                         2→4, batchnorm1d, ReLU, dense 4→3), the paper's
                         reading: two training passes per batch (l. 7's at
                         x, l. 8's at the new x), each moving r_μ, r_v
  fedrod/layers/bn-pfllib   the same under the pfllib preset: one pass per
                         batch (rep and out_g reused by l. 8), and
                         bn.running_var = biased, bn.aggregate = average
                         (the buffers averaged with w, given explicitly
                         since the preset sets parameters_only)
  fedrod/layers/bn-pfllib-keep  the pfllib preset on the same model with
                         its bn.aggregate = parameters_only: each client
                         keeps its own r_μ, r_v, w's are the first
                         participant's (serverbase.py:138-150)
  fedrod/layers/pfllib-lr-trainings  the pfllib preset with PFLlib's -ld:
                         lr.schedule = exponential, γ = 3/4, lr.count =
                         trainings (the preset's); both step sizes decay

    /usr/bin/python3 golden/fedrod/make_fedrod.py [OUTDIR]
"""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px           # noqa: E402
import pflref_exact_fedrod as pr     # noqa: E402
import pflref_golden as pg           # noqa: E402

SOURCE = ("Chen and Chao, ICLR 2022, arXiv 2107.00778, Alg. 1 (linear "
          "personal head, balanced softmax); TsingZ0/PFLlib d832e76f6a23 "
          "system/flcore/clients/clientrod.py, servers/serverrod.py")
GENERATOR = ("golden/fedrod/make_fedrod.py (60-digit decimals, "
             "pflref_exact_fedrod.py)")
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs: three rounds of at most three local "
             "steps per client, each a balanced-softmax gradient of a model "
             "with P ≤ 27 and a personal-head gradient (h ≤ 4, k = 3), exp "
             "and log of magnitudes below 10; a few hundred roundings of "
             "1.1e-16, amplified by at most the products of η-scaled "
             "Jacobians below 10, stay far inside 1e-13 + 1e-12 |r|; every "
             "flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}

CLIENTS = [
    {"X": [[0.8, -0.35], [-0.6, 0.9], [0.45, 0.7]], "y": [1.0, 0.0, 1.0]},
    {"X": [[-0.3, -0.85], [0.95, 0.15], [-0.7, 0.4], [0.25, -0.55]],
     "y": [0.0, 2.0, 0.0, 1.0]},
    {"X": [[0.65, 0.55], [-0.9, -0.2], [0.35, -0.75], [-0.15, 0.6],
           [0.7, 0.05]],
     "y": [2.0, 1.0, 2.0, 2.0, 1.0]},
]
ROUNDS = [
    {"clients": [1], "batches": [[[2, 1, 0], [3, 1]]]},
    {"clients": [0, 2], "batches": [[[0, 2], [1, 0, 2]],
                                    [[4, 0, 3], [1, 2], [3]]]},
    {"clients": [0, 1], "batches": [[[1, 2]], [[0, 3], [2, 1, 0]]]},
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

COMMON = ["fedrod-balanced-risk", "fedrod-absent-class",
          "fedrod-personal-output", "stale-personal-state",
          "aggregation-weights", "local-step-count"]


def make(name, title, description, model, w0, algorithm, flags,
         rounds=ROUNDS, counts=None, only=None):
    vid = f"fedrod/{name}"
    init = {"kind": "given", "w": w0}
    if counts is not None:
        init["class_counts"] = counts
    spec = pg.given_spec(title, description, model, CLIENTS, init, algorithm,
                         rounds)
    mutants = {f: pr.MUTANTS[f] for f in flags}
    mutants.update(only or {})   # a flag whose other bugs do not apply here

    def run(bugs=frozenset()):
        return pr.replay(spec, frozenset(bugs))

    result = run()
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return (name.replace("/", "-") + ".json",
            pg.vector(vid, title, prov, flags, spec, TOL, exp))


def alg(eta, preset=None, **switches):
    a = {"name": "fedrod"}
    if preset:
        a["preset"] = preset
    a["hyperparameters"] = {"eta": eta}
    if switches:
        a["switches"] = {f"fedrod.{k}": v for k, v in switches.items()}
    return a


def paper():
    return make(
        "mlp/paper",
        "FedRoD, mlp 2-3-3 (identity body), three clients with label skew, "
        "three rounds, the paper's reading",
        "η = 0.35; the generic step on the balanced softmax, the personal "
        "head's step at the features after it; φ_P⁰ = 0.",
        MLP, W_MLP, alg(0.35),
        COMMON + ["fedrod-features", "fedrod-phi-p0"])


def before():
    return make(
        "mlp/before",
        "FedRoD with fedrod.features = before (PFLlib's rep and out_g, "
        "taken before the generic step)",
        "η = 0.45; the rest as fedrod/mlp/paper.",
        MLP, W_MLP, alg(0.45, features="before"),
        COMMON + ["fedrod-features-before", "fedrod-phi-p0"])


def generic():
    return make(
        "mlp/generic",
        "FedRoD with fedrod.phi_p0 = generic (φ_P⁰ = w⁰'s head)",
        "η = 0.3; the rest as fedrod/mlp/paper.",
        MLP, W_MLP, alg(0.3, phi_p0="generic"),
        COMMON + ["fedrod-features", "fedrod-phi-p0-generic"])


def layers_paper():
    return make(
        "layers/paper",
        "FedRoD on a layer list (dense 2→4, ReLU, dense 4→3), the paper's "
        "reading",
        "η = 0.4; the rest as fedrod/mlp/paper.",
        LAYERS, W_LAYERS, alg(0.4),
        COMMON + ["fedrod-features", "fedrod-phi-p0"])


def pfllib():
    return make(
        "layers/pfllib",
        "FedRoD on a layer list, the pfllib preset",
        "η = 0.25; preset pfllib (clientrod.py: features before the "
        "generic step, φ_P⁰ = w⁰'s head).",
        LAYERS, W_LAYERS, alg(0.25, preset="pfllib"),
        COMMON + ["fedrod-features-before", "fedrod-phi-p0-generic"])


# the sampler's order of each round's clients (information only:
# batches[j] stays clients[j]'s); the batches use samples 0-2 only, which
# every client has, so a candidate that pairs them with the drawn order
# runs (and differs) instead of failing
DRAWN = [[1], [2, 0], [1, 0]]
ROUNDS_DRAWN = [
    {"clients": [1], "batches": [[[2, 1, 0], [0, 1]]]},
    {"clients": [0, 2], "batches": [[[0, 2], [1, 0, 2]], [[2, 0], [1]]]},
    {"clients": [0, 1], "batches": [[[1, 2]], [[0, 2], [2, 1, 0]]]},
]


def drawn():
    return make(
        "mlp/drawn",
        "FedRoD, the paper's reading, rounds 1 and 2's clients drawn in "
        "another order than listed",
        "η = 0.55; each round carries its drawn order (docs/formats.md), "
        "which must not be paired with the batch lists.",
        MLP, W_MLP, alg(0.55),
        COMMON + ["fedrod-features", "fedrod-phi-p0", "schedule-drawn-order"],
        rounds=px.with_drawn(ROUNDS_DRAWN, DRAWN))


# N_{i,c} as PFLlib's first pass with drop_last (B = 2) could count them:
# client 0 (y = 1, 0, 1) loses one sample of class 1, client 1 (4 samples)
# none, client 2 (y = 2, 1, 2, 2, 1) one of class 2; each differs from the
# data's counts (1, 2, 0), (2, 1, 1), (0, 2, 3) but for client 1
COUNTS = [[1, 1, 0], [2, 1, 1], [0, 2, 2]]


def counts_pfllib():
    return make(
        "mlp/counts-pfllib",
        "FedRoD with the balanced softmax's class counts given "
        "(init.class_counts), the pfllib preset",
        "η = 0.45; preset pfllib; init.class_counts = (1, 1, 0), (2, 1, 1), "
        "(0, 2, 2): N_{i,c} as PFLlib's clientrod.py:22-26 counts them over "
        "one shuffled pass of batches of 2 with drop_last (clients 0 and 2 "
        "lose one sample each), not the training data's (1, 2, 0), (2, 1, "
        "1), (0, 2, 3).",
        MLP, W_MLP, alg(0.45, preset="pfllib"),
        ["fedrod-class-counts", "fedrod-balanced-risk",
         "fedrod-features-before", "fedrod-phi-p0-generic",
         "aggregation-weights"],
        counts=COUNTS)


LAYERS_BN = {"kind": "layers", "input": [2], "loss": "cross_entropy",
             "layers": [{"type": "dense", "name": "fc1", "out": 4},
                        {"type": "batchnorm1d", "name": "bn1",
                         "eps": 0.03125, "momentum": 0.2},
                        {"type": "relu"},
                        {"type": "dense", "name": "out", "out": 3}]}
# fc1 (4 × 2, 4), bn1 γ (4), β (4), r_μ (4), r_v (4), out (3 × 4, 3)
W_LAYERS_BN = (W_LAYERS[:12]
               + [1.25, 0.75, 1.1, 0.9,
                  0.15, -0.1, 0.3, 0.05,
                  0.1, -0.2, 0.05, 0.3,
                  0.8, 1.3, 0.6, 1.1]
               + W_LAYERS[12:])
# every batch of at least two samples (a training-mode batch-norm pass of
# one sample has no unbiased variance: torch refuses it)
ROUNDS_BN = [
    {"clients": [1], "batches": [[[2, 1, 0], [3, 1]]]},
    {"clients": [0, 2], "batches": [[[0, 2], [1, 0, 2]],
                                    [[4, 0, 3], [1, 2]]]},
    {"clients": [0, 1], "batches": [[[1, 2]], [[0, 3], [2, 1, 0]]]},
]
BN_FLAGS = ["fedrod-bn-passes", "bn-running-frozen", "bn-running-update"]


def bn_paper():
    return make(
        "layers/bn-paper",
        "FedRoD on a layer list with batch normalisation (dense 2→4, "
        "batchnorm1d, ReLU, dense 4→3), the paper's reading",
        "η = 0.3; bn1: ε = 1/32, ρ = 0.2, w⁰'s r_μ, r_v away from 0 and 1; "
        "every forward of a local step is a training pass (batch "
        "statistics; PFLlib's model.train(), clientrod.py:35): l. 7's pass "
        "at x moves x's r_μ, r_v (unbiased r_v), then x steps; l. 8 takes "
        "f and z_G of a second training pass at the new x, which moves "
        "them again.  The server averages the whole vector (buffers "
        "included).",
        LAYERS_BN, W_LAYERS_BN, alg(0.3),
        COMMON + ["fedrod-features", "fedrod-phi-p0"] + BN_FLAGS,
        rounds=ROUNDS_BN)


def bn_pfllib():
    a = alg(0.35, preset="pfllib")
    a["switches"] = {"bn.running_var": "biased", "bn.aggregate": "average"}
    return make(
        "layers/bn-pfllib",
        "FedRoD on a layer list with batch normalisation, the pfllib "
        "preset, biased running variance",
        "η = 0.35; preset pfllib: one training pass per batch (rep = "
        "model.base(x), out_g at clientrod.py:48-49, reused detached by the "
        "personal head at :55-56), which moves r_μ, r_v once; "
        "bn.running_var = biased (ρ s²_B into r_v); bn.aggregate = "
        "average (the server averages r_μ, r_v with the rest of w, not "
        "the preset's parameters_only).  The rest as "
        "fedrod/layers/bn-paper.",
        LAYERS_BN, W_LAYERS_BN, a,
        COMMON + ["fedrod-features-before", "fedrod-phi-p0-generic",
                  "fedrod-bn-passes", "bn-running-frozen",
                  "bn-running-update"],
        rounds=ROUNDS_BN,
        only={"fedrod-bn-passes": ["bn-eval-personal"]})


KEEP_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 serverrod.py:26, :44 "
               "(send_models, aggregate_parameters of serverbase.py), "
               "clientbase.py:67-69 (set_parameters: parameters() only), "
               "serverbase.py:138-150 (deepcopy of uploaded_models[0])")


def bn_pfllib_keep():
    name = "layers/bn-pfllib-keep"
    out = make(
        name,
        "FedRoD on a layer list with batch normalisation, the pfllib "
        "preset (bn.aggregate = parameters_only: each client keeps its own "
        "running statistics)",
        "η = 0.4; preset pfllib, which sets bn.aggregate = parameters_only: "
        "client i's (θ_i, φ_G,i) starts from w's parameters with the "
        "running_mean and running_var its own model last left (w⁰'s before "
        "it first trains: clients 0 and 2 in round 1), one training pass "
        "per batch moving them (features before, as fedrod/layers/"
        "bn-pfllib); the server averages parameters() only and w takes the "
        "first participant's r_μ, r_v (client 0's in rounds 1 and 2).  "
        "Client 1 sits out round 1, so it starts round 2 from its round-0 "
        "statistics.  The rest as fedrod/layers/bn-paper.",
        LAYERS_BN, W_LAYERS_BN, alg(0.4, preset="pfllib"),
        COMMON + ["fedrod-features-before", "fedrod-phi-p0-generic",
                  "fedrod-bn-passes", "bn-running-frozen",
                  "bn-running-update", "bn-own-buffers",
                  "bn-global-buffers"],
        rounds=ROUNDS_BN,
        only={"fedrod-bn-passes": ["bn-eval-personal"]})
    spec = out[1]["spec"]
    avg = json.loads(json.dumps(spec))
    avg["algorithm"]["switches"] = {"bn.aggregate": "average"}
    assert pr.replay(avg)[1] != pr.replay(spec)[1], name
    out[1]["provenance"]["source"] += KEEP_SOURCE
    return out


LR_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 clientrod.py:64-65 (both "
             "ExponentialLR objects, self.optimizer's and opt_head's, "
             "stepped after the client's train())")


def pfllib_lr():
    a = alg(0.25, preset="pfllib")
    a["hyperparameters"]["lr.gamma"] = 0.75
    a["switches"] = {"lr.schedule": "exponential"}
    name = "layers/pfllib-lr-trainings"
    out = make(
        name,
        "FedRoD on a layer list, the pfllib preset with PFLlib's -ld "
        "learning-rate decay (γ = 3/4, each client's two schedulers stepped "
        "after its own train())",
        "η = 0.25 as fedrod/layers/pfllib, with lr.schedule = exponential, "
        "lr.gamma = 0.75 and the preset's lr.count = trainings: the generic "
        "model's and φ_P's steps are both 0.25 · (3/4)^k, k the rounds "
        "client i trained in before (round 1: clients 0 and 2, k = 0; "
        "round 2: clients 0 and 1, k = 1), not the round t.",
        LAYERS, W_LAYERS, a,
        COMMON + ["fedrod-features-before", "fedrod-phi-p0-generic",
                  "lr-schedule", "lr-count"])
    spec = out[1]["spec"]
    rounds = json.loads(json.dumps(spec))
    rounds["algorithm"]["switches"]["lr.count"] = "rounds"
    assert pr.replay(rounds)[1] != pr.replay(spec)[1], name
    out[1]["provenance"]["source"] += LR_SOURCE
    return out


def main():
    pg.write_all(sys.argv, HERE, (paper, before, generic, layers_paper,
                                  pfllib, drawn, counts_pfllib, bn_paper,
                                  bn_pfllib, bn_pfllib_keep, pfllib_lr))


if __name__ == "__main__":
    main()
