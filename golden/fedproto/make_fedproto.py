#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedProto golden vectors (Tan et al., AAAI 2022, arXiv 2105.00243,
Alg. 1 with Eqs. 4-6), computed by golden/pflref_exact_fedproto.py in
60-digit decimal arithmetic, independently of the C reference.

Three clients of distinct sizes (n = 3, 4, 2) and three classes, label
skew: client 0 holds classes {0, 1}, client 1 all three, client 2
{1, 2}; |D_{i,j}| differ between the clients that share a class, so the
weights of Eq. 5 matter.  Rounds S_0 = {1}, S_1 = {0}, S_2 = {0, 1, 2}:
in round 0 no global prototype exists (no R term); in round 1 the set
holds all three classes; client 0's round 1 gives none of class 2, so in
round 2 class 2 has no prototype (clients 1 and 2 hold it: a kept old
C̄^(2) or a zero prototype would pull them); client 1 skips round 1 (its
model is stale), client 2 first trains in round 2 from w⁰; round 2's three
clients train in parallel on the same C̄.  λ and η are distinct and ≠ 1;
the batches differ in size.

Vectors (file = id without "fedproto/", '/' → '-'):
  fedproto/mlp/paper        mlp 2-3-3 (identity embedding), the paper's
                            reading
  fedproto/mlp/mse          fedproto.distance = mse (R/h)
  fedproto/mlp/during       fedproto.client_protos = during_training
  fedproto/mlp/uniform      fedproto.weights = uniform
  fedproto/layers/official  a layer list, the official preset (mse,
                            during_training, uniform, SGD momentum 0.5)
  fedproto/layers/pfllib    the pfllib preset
  fedproto/mlp/drawn        the paper's reading, batches on samples 0 and 1
                            only, round 2's clients drawn as 2, 0, 1
  fedproto/layers/pfllib-lr-trainings
                            the pfllib preset with PFLlib's -ld: lr.schedule
                            = exponential, γ = 1/2, lr.count = trainings
                            (the preset's)

    /usr/bin/python3 golden/fedproto/make_fedproto.py [OUTDIR]
"""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px           # noqa: E402
import pflref_exact_fedproto as pp   # noqa: E402
import pflref_golden as pg           # noqa: E402

SOURCE = ("Tan, Long, Liu, Zhou, Lu, Jiang, Zhang, AAAI 2022, arXiv "
          "2105.00243, Alg. 1, Eqs. 4-6; yuetan031/FedProto 97e42e2741e1 "
          "lib/update.py update_weights_het, lib/utils.py agg_func and "
          "proto_aggregation; TsingZ0/PFLlib d832e76f6a23 clientproto.py, "
          "serverproto.py")
GENERATOR = ("golden/fedproto/make_fedproto.py (60-digit decimals, "
             "pflref_exact_fedproto.py)")
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs: three rounds of at most two local steps "
             "per client, each a gradient of a model with P ≤ 24 plus the "
             "prototype term's body gradient, then means of at most four "
             "embeddings; magnitudes below 10, so a few hundred roundings of "
             "1.1e-16 stay far inside 1e-13 + 1e-12 |r|; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}

CLIENTS = [
    {"X": [[0.8, -0.35], [-0.6, 0.9], [0.45, 0.7]], "y": [1.0, 0.0, 1.0]},
    {"X": [[-0.3, -0.85], [0.95, 0.15], [-0.7, 0.4], [0.25, -0.55]],
     "y": [0.0, 2.0, 0.0, 1.0]},
    {"X": [[0.65, 0.55], [-0.9, -0.2]], "y": [2.0, 1.0]},
]
ROUNDS = [
    {"clients": [1], "batches": [[[2, 1, 0], [3, 1]]]},
    {"clients": [0], "batches": [[[0, 2], [1, 0, 2]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 0], [2]], [[0, 3], [1, 2, 0]],
                                       [[0, 1], [1]]]},
]
# the mlp's embedding is linear (identity activation, which the NumPy
# candidate's mlp takes: a nonlinear loss on a linear embedding); the layer
# list's embedding has a ReLU
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

COMMON = ["fedproto-distance", "fedproto-missing-prototype",
          "fedproto-parallel-clients", "stale-personal-state",
          "local-step-count"]


def make(name, title, description, model, w0, algorithm, flags,
         rounds=ROUNDS, tol=TOL):
    vid = f"fedproto/{name}"
    init = {"kind": "given", "w": w0}
    spec = pg.given_spec(title, description, model, CLIENTS, init, algorithm,
                         rounds)
    mutants = {f: pp.MUTANTS[f] for f in flags}

    def run(bugs=frozenset()):
        return pp.replay(spec, frozenset(bugs))

    result = run()
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return (name.replace("/", "-") + ".json",
            pg.vector(vid, title, prov, flags, spec, tol, exp))


def alg(lam, eta, preset=None, **switches):
    a = {"name": "fedproto"}
    if preset:
        a["preset"] = preset
    a["hyperparameters"] = {"eta": eta, "fedproto.lambda": lam}
    if switches:
        a["switches"] = {f"fedproto.{k}": v for k, v in switches.items()}
    return a


def paper():
    return make(
        "mlp/paper",
        "FedProto, mlp 2-3-3 (identity embedding), three clients with label "
        "skew, three "
        "rounds, the paper's reading",
        "λ = 0.35, η = 0.3; R = ‖f − C̄‖²; C_i from the trained model "
        "(Eq. 4); C̄ weighted by |D_{i,j}| (Eq. 5).",
        MLP, W_MLP, alg(0.35, 0.3),
        COMMON + ["fedproto-client-protos", "fedproto-proto-weights"])


def mse():
    return make(
        "mlp/mse",
        "FedProto with fedproto.distance = mse (R = ‖f − C̄‖²/h, torch "
        "MSELoss)",
        "λ = 0.8, η = 0.25; the rest as fedproto/mlp/paper.",
        MLP, W_MLP, alg(0.8, 0.25, distance="mse"),
        COMMON + ["fedproto-client-protos", "fedproto-proto-weights"])


def during():
    return make(
        "mlp/during",
        "FedProto with fedproto.client_protos = during_training (the "
        "features of the local steps' batches, before each step)",
        "λ = 0.45, η = 0.2; the rest as fedproto/mlp/paper.",
        MLP, W_MLP, alg(0.45, 0.2, client_protos="during_training"),
        COMMON + ["fedproto-client-protos-during", "fedproto-proto-weights"])


def uniform():
    return make(
        "mlp/uniform",
        "FedProto with fedproto.weights = uniform (C̄^(j) the plain mean "
        "over N_j)",
        "λ = 0.6, η = 0.35; the rest as fedproto/mlp/paper.",
        MLP, W_MLP, alg(0.6, 0.35, weights="uniform"),
        COMMON + ["fedproto-client-protos", "fedproto-proto-weights-uniform"])


def official():
    return make(
        "layers/official",
        "FedProto on a layer list (dense 2→4, ReLU, dense 4→3), the "
        "official preset",
        "λ = 1.5, η = 0.15; preset official (yuetan031/FedProto: MSELoss, "
        "features kept during training, plain means, SGD momentum 0.5).",
        LAYERS, W_LAYERS, alg(1.5, 0.15, preset="official"),
        COMMON + ["fedproto-client-protos-during",
                  "fedproto-proto-weights-uniform"])


def pfllib():
    return make(
        "layers/pfllib",
        "FedProto on a layer list, the pfllib preset",
        "λ = 0.9, η = 0.4; preset pfllib (clientproto.py / serverproto.py: "
        "MSELoss, features kept during training, plain means).",
        LAYERS, W_LAYERS, alg(0.9, 0.4, preset="pfllib"),
        COMMON + ["fedproto-client-protos-during",
                  "fedproto-proto-weights-uniform"])


# the sampler's order of each round's clients (information only:
# batches[j] stays clients[j]'s); the batches use samples 0 and 1 only, so a
# candidate that pairs them with the drawn order runs (and differs) instead
# of failing
DRAWN = [[1], [0], [2, 0, 1]]
ROUNDS_DRAWN = [
    {"clients": [1], "batches": [[[1, 0], [0]]]},
    {"clients": [0], "batches": [[[0, 1], [1]]]},
    {"clients": [0, 1, 2], "batches": [[[1], [0, 1]], [[0, 1], [1]],
                                       [[1, 0]]]},
]


def drawn():
    return make(
        "mlp/drawn",
        "FedProto, the paper's reading, round 2's clients drawn in another "
        "order than listed",
        "λ = 0.55, η = 0.25; each round carries its drawn order "
        "(docs/formats.md), which must not be paired with the batch lists.",
        MLP, W_MLP, alg(0.55, 0.25),
        COMMON + ["fedproto-client-protos", "fedproto-proto-weights",
                  "schedule-drawn-order"],
        rounds=px.with_drawn(ROUNDS_DRAWN, DRAWN))


LR_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 clientproto.py:69-70 (the "
             "client's ExponentialLR stepped after its train(); its one "
             "optimizer takes every step)")


def pfllib_lr():
    a = alg(0.9, 0.4, preset="pfllib")
    a["hyperparameters"]["lr.gamma"] = 0.5
    a["switches"] = {"lr.schedule": "exponential"}
    name = "layers/pfllib-lr-trainings"
    out = make(
        name,
        "FedProto on a layer list, the pfllib preset with PFLlib's -ld "
        "learning-rate decay (γ = 1/2, each client's scheduler stepped "
        "after its own train())",
        "λ = 0.9, η = 0.4 as fedproto/layers/pfllib, with lr.schedule = "
        "exponential, lr.gamma = 0.5 and the preset's lr.count = "
        "trainings: client i's η is 0.4 · (1/2)^k, k the rounds it trained "
        "in before (round 1: client 0, k = 0; round 2: clients 0, 1 with "
        "k = 1, client 2 with k = 0), not the round t; λ does not decay.",
        LAYERS, W_LAYERS, a,
        COMMON + ["fedproto-client-protos-during",
                  "fedproto-proto-weights-uniform", "lr-schedule",
                  "lr-count"])
    spec = out[1]["spec"]
    rounds = json.loads(json.dumps(spec))
    rounds["algorithm"]["switches"]["lr.count"] = "rounds"
    assert pp.replay(rounds)[2] != pp.replay(spec)[2], name
    out[1]["provenance"]["source"] += LR_SOURCE
    return out


# batch normalisation in the embedding: fc1 (4 × 2, no bias: a bias before
# a training-mode batchnorm has a gradient of exactly 0, which float64
# computes as a cancellation of its batch's terms), norm1 (γ, β, r_μ, r_v:
# 4 each; w⁰'s running statistics away from 0 and 1), tanh, out (3 × 4,
# 3); batches of 2 or 3 distinct samples, whose fc1 outputs are well
# apart in every channel (a two-sample batch with close values divides by
# a small σ_B: a large, ill-conditioned gradient)
LAYERS_BN = {"kind": "layers", "input": [2], "loss": "cross_entropy",
             "layers": [{"type": "dense", "name": "fc1", "out": 4,
                         "bias": False},
                        {"type": "batchnorm1d", "name": "norm1"},
                        {"type": "tanh"},
                        {"type": "dense", "name": "out", "out": 3}]}
W_BN = (W_LAYERS[:8] + [1.1, 0.85, 1.25, 0.95, 0.1, -0.15, 0.2, -0.05,
                         0.05, -0.1, 0.3, -0.2, 0.9, 1.3, 0.7, 1.15]
        + W_LAYERS[12:])
ROUNDS_BN = [
    {"clients": [1], "batches": [[[2, 1, 0], [3, 1]]]},
    {"clients": [0], "batches": [[[0, 2], [1, 0, 2]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 0], [2, 0]], [[2, 3], [1, 2, 0]],
                                       [[0, 1], [1, 0]]]},
]
TOL_BN = dict(TOL, basis=(
    "fp64 reference in fixed order against 60-digit decimal values of the "
    "binary inputs: three rounds of two local steps per client on a layer "
    "list with P = 39 and batch normalisation in the embedding (per step one "
    "training pass with its coupled backward and the running statistics' "
    "move; batches of 2 or 3 distinct samples), then means of at most "
    "three embeddings from evaluation passes; the observed worst errors are "
    "1.8e-15 absolute and 2.9e-14 relative (on a small entry), far inside "
    "1e-13 + 1e-12 |r|; every "
    "flagged bug moves some value by more than 1e3 times the tolerance."))


def bn_paper():
    return make(
        "layers/bn-paper",
        "FedProto with batch normalisation in the embedding: each step one "
        "training pass, Eq. 4's prototypes from evaluation passes of the "
        "trained model",
        "dense(2→4, no bias), batchnorm1d, tanh, dense(4→3); λ = 0.8, η = 0.25, plain "
        "SGD, the paper's switches; each step moves v_i's r_μ, r_v once "
        "(unbiased r_v, ρ = 0.1).",
        LAYERS_BN, W_BN, alg(0.8, 0.25),
        ["fedproto-distance", "fedproto-missing-prototype",
         "stale-personal-state", "local-step-count", "fedproto-client-protos",
         "fedproto-bn-passes", "bn-running-update"],
        rounds=ROUNDS_BN, tol=TOL_BN)


def main():
    pg.write_all(sys.argv, HERE, (paper, mse, during, uniform, official,
                                  pfllib, drawn, pfllib_lr, bn_paper))


if __name__ == "__main__":
    main()
