#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""MOON golden vectors (Li, He, Song, CVPR 2021, arXiv 2103.16257v1,
Alg. 1 and Sec. 3), computed by golden/pflref_exact_moon.py in
60-digit decimal arithmetic, independently of the C reference.

Three parties of distinct sizes (n = 3, 4, 2) train in three rounds with
S_0 = {0, 1}, S_1 = {1, 2}, S_2 = {0, 1, 2}: party 0 skips round 1, so in
round 2 its previous model w_0^{t−1} is its round-0 model (stale, not the
round-1 global one), and party 2 first trains in round 1, where its
previous model is w⁰ although w¹ ≠ w⁰ (in round 0, w_i^{−1} = w⁰ = w^0
gives z_prev = z_glob and a zero contrastive gradient, which is also the
authors' code's round 0 without a previous model).  μ, τ and η are
distinct from each other and from 1; the batches differ in size.

Vectors (file = id without "moon/", '/' → '-'):
  moon/mlp/paper         mlp 2-3-2 (identity activation: a linear body, a
                         nonlinear ℓ_con), cross-entropy; the paper's reading
  moon/layers/official   a layer list with a projection head (dense, relu,
                         dense = R_w, then the output layer), the official
                         preset (torch SGD momentum 0.9, weight decay
                         1e-5)
  moon/mlp/mu0           μ = 0: MOON is FedAvg (the contrastive term off)
  moon/mlp/squared-drawn a regression mlp (squared loss), every round's
                         parties carrying a drawn order that differs from
                         the listed one
  moon/layers/bn-paper   batch normalisation in the body (dense, batchnorm1d,
                         tanh, dense = R_w, output layer): z_glob, z_prev
                         from evaluation passes, the server averaging the
                         running statistics with the rest (the defaults:
                         the authors' code)
  moon/layers/bn-pfllib  the same under the preset pfllib: z_glob, z_prev
                         from training passes, each party keeping its own
                         running statistics, w's the first participant's

    /usr/bin/python3 golden/moon/make_moon.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px        # noqa: E402
import pflref_exact_moon as pm   # noqa: E402
import pflref_golden as pg       # noqa: E402

SOURCE = ("Li, He, Song, CVPR 2021, arXiv 2103.16257v1, Alg. 1, Sec. 3; "
          "QinbinLi/MOON 8fcba3c main.py (train_net_fedcon, the round loop); "
          "TsingZ0/PFLlib d832e76f6a23 clientmoon.py")
GENERATOR = "golden/moon/make_moon.py (60-digit decimals, pflref_exact_moon.py)"
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs: three rounds of at most three local steps "
             "per party, each a gradient of a model with P ≤ 23 and the "
             "contrastive signal (three norms, two cosines, one exp per "
             "sample) on representations of norm ≥ 0.01 and magnitudes below "
             "10; the observed worst errors are 8e-16 absolute and 3.6e-14 "
             "relative (on a small entry), the bound leaves a factor "
             "of 100; every flagged bug moves some value by more than 1e3 "
             "times the tolerance.",
}

# the batch-normalisation vectors: the same bound, argued for their passes
TOL_BN = dict(TOL, basis=(
    "fp64 reference in fixed order against 60-digit decimal values of the "
    "binary inputs: three rounds of at most two local steps per party on a "
    "layer list with P = 35 and batch normalisation in the body (per step "
    "one training pass with its coupled backward, two further body passes, "
    "the running statistics' move; batches of 2 or 3 distinct samples), "
    "and the contrastive signal on representations of norm >= 0.01; the "
    "observed worst errors of the final state are 5.6e-16 absolute and "
    "2.4e-14 relative (on a small entry), within the bound by a factor of "
    "over 100 absolute; every flagged bug moves some value by more than "
    "1e3 times the tolerance."))

CLIENTS = [
    {"X": [[0.8, -0.35], [-0.6, 0.9], [0.45, 0.7]], "y": [1.0, 0.0, 1.0]},
    {"X": [[-0.3, -0.85], [0.95, 0.15], [-0.7, 0.4], [0.25, -0.55]],
     "y": [0.0, 1.0, 0.0, 1.0]},
    {"X": [[0.65, 0.55], [-0.9, -0.2]], "y": [1.0, 0.0]},
]
ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 2], [1]], [[3, 0], [1, 2]]]},
    {"clients": [1, 2], "batches": [[[2, 1, 0], [3]], [[1, 0], [0]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 0], [2, 1]], [[0, 3], [2]],
                                       [[0, 1]]]},
]
# the mlp's body is linear (identity activation: φ = W1 x + b1), which the
# NumPy candidate's mlp takes; the layer list's body has a ReLU
MLP = {"kind": "mlp", "d": 2, "h": 3, "k": 2, "loss": "cross_entropy",
       "activation": "identity"}
# W1 (3 × 2), b1 (3), W2 (2 × 3), b2 (2)
W_MLP = [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4,
         0.8, -0.45, 0.55, -0.6, 0.5, 0.3, 0.1, -0.15]
LAYERS = {"kind": "layers", "input": [2], "loss": "cross_entropy",
          "layers": [{"type": "dense", "name": "fc1", "out": 3},
                     {"type": "relu"},
                     {"type": "dense", "name": "proj", "out": 2},
                     {"type": "dense", "name": "out", "out": 2}]}
# fc1 (3 × 2, 3), proj (2 × 3, 2), out (2 × 2, 2)
W_LAYERS = [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4,
            0.6, -0.35, 0.45, 0.2, 0.5, -0.4, 0.15, -0.25,
            0.7, -0.3, 0.4, 0.65, 0.05, -0.1]

ALL_FLAGS = ["moon-contrastive-gradient", "moon-previous-model",
             "moon-first-previous", "moon-mu-tau", "moon-representation",
             "aggregation-weights", "local-step-count"]


def make(name, title, description, model, w0, algorithm, flags,
         clients=CLIENTS, rounds=ROUNDS, tol=TOL):
    vid = f"moon/{name}"
    init = {"kind": "given", "w": w0}
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)
    mutants = {f: pm.MUTANTS[f] for f in flags}

    def run(bugs=frozenset()):
        return pm.replay(spec, frozenset(bugs))

    result = run()
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return (name.replace("/", "-") + ".json",
            pg.vector(vid, title, prov, flags, spec, tol, exp))


def paper():
    return make(
        "mlp/paper",
        "MOON, mlp 2-3-2 (identity body, cross-entropy), three parties, three rounds, "
        "party 0 skipping round 1 (stale w_i^{t-1}), the paper's reading",
        "μ = 0.7, τ = 0.45, η = 0.3; w_i^{-1} = w⁰; "
        "S = {0, 1}, {1, 2}, {0, 1, 2}; weights n_i / Σ_{S_t} n_j.",
        MLP, W_MLP,
        {"name": "moon", "hyperparameters": {"eta": 0.3, "moon.mu": 0.7,
                                             "moon.tau": 0.45}},
        ALL_FLAGS)


def official():
    return make(
        "layers/official",
        "MOON, layer list with a projection head (R_w = the projection's "
        "output), the official preset: torch SGD momentum 0.9, weight decay "
        "1e-5",
        "dense(2→3), relu, dense(3→2) 'proj' (the representation), dense(2→2) "
        "'out'; μ = 1.3, τ = 0.6, η = 0.2; preset official (QinbinLi/MOON "
        "main.py: SGD momentum 0.9, --reg 1e-5).",
        LAYERS, W_LAYERS,
        {"name": "moon", "preset": "official",
         "hyperparameters": {"eta": 0.2, "moon.mu": 1.3, "moon.tau": 0.6}},
        ["moon-contrastive-gradient", "moon-previous-model",
         "moon-first-previous", "moon-mu-tau", "moon-representation",
         "aggregation-weights", "local-step-count"])


def mu0():
    return make(
        "mlp/mu0",
        "MOON with μ = 0: FedAvg (the contrastive term off)",
        "The moon/mlp/paper problem with μ = 0 and τ = 0.45: every step is "
        "w_i ← w_i − η ∇ℓ_sup.",
        MLP, W_MLP,
        {"name": "moon", "hyperparameters": {"eta": 0.3, "moon.mu": 0.0,
                                             "moon.tau": 0.45}},
        ["aggregation-weights", "local-step-count"])


# a regression mlp (k = 1, squared loss) on the same inputs
CLIENTS_REG = [
    {"X": c["X"], "y": y} for c, y in zip(
        CLIENTS, ([0.6, -0.4, 1.1], [-0.3, 0.8, 0.25, -0.9], [0.45, -0.7]))]
MLP_REG = {"kind": "mlp", "d": 2, "h": 3, "k": 1, "loss": "squared",
           "activation": "identity"}
# W1 (3 × 2), b1 (3), W2 (1 × 3), b2 (1)
W_REG = [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4, 0.8, -0.45, 0.55,
         0.1]
# the sampler's order of each round's parties (information only: batches[j]
# stays clients[j]'s); the batches use samples 0 and 1 only, so a candidate
# that pairs them with the drawn order runs (and differs) instead of failing
DRAWN = [[1, 0], [2, 1], [2, 0, 1]]
ROUNDS_REG = [
    {"clients": [0, 1], "batches": [[[0, 1], [1]], [[1], [0, 1]]]},
    {"clients": [1, 2], "batches": [[[1, 0], [0]], [[0], [1, 0]]]},
    {"clients": [0, 1, 2], "batches": [[[1], [0, 1]], [[0, 1], [1]],
                                       [[1, 0]]]},
]


def squared_drawn():
    return make(
        "mlp/squared-drawn",
        "MOON on a regression mlp (k = 1, squared loss), the rounds' parties "
        "drawn in another order than listed",
        "μ = 0.55, τ = 0.8, η = 0.15; ℓ_sup = mean (ŷ − y)²; each round "
        "carries its drawn order (docs/formats.md), which must not be paired "
        "with the batch lists.",
        MLP_REG, W_REG,
        {"name": "moon", "hyperparameters": {"eta": 0.15, "moon.mu": 0.55,
                                             "moon.tau": 0.8}},
        ["moon-contrastive-gradient", "moon-previous-model",
         "moon-first-previous", "aggregation-weights", "local-step-count",
         "schedule-drawn-order"],
        clients=CLIENTS_REG, rounds=px.with_drawn(ROUNDS_REG, DRAWN))


# fc1's third unit dead on relu's kink (issue 33 §3): its weights and bias
# 0, so its pre-activation is exactly 0 on every sample, and relu′(0) = 0
# keeps every gradient from it (it stays 0 in every model, local, global
# and previous); relu′(0) = 1 would move its row through proj's column
# (0.45, −0.4).
W_KINK = W_LAYERS[:4] + [0.0, 0.0] + W_LAYERS[6:8] + [0.0] + W_LAYERS[9:]


def relu_kink():
    return make(
        "layers/relu-kink",
        "MOON, layer list with a hidden unit exactly on relu's kink "
        "(pre-activation 0), the paper's plain SGD",
        "moon/layers/official's network and data with fc1's third row and "
        "bias 0: that unit's pre-activation is exactly 0 on every sample and "
        "in every step, where relu′(0) = 0 passes no gradient; μ = 1.3, τ = "
        "0.6, η = 0.2, plain SGD (the paper's).",
        LAYERS, W_KINK,
        {"name": "moon", "hyperparameters": {"eta": 0.2, "moon.mu": 1.3,
                                             "moon.tau": 0.6}},
        ["moon-contrastive-gradient", "moon-previous-model",
         "moon-first-previous", "moon-mu-tau", "moon-representation",
         "aggregation-weights", "local-step-count"])


# batch normalisation in the body: fc1 (3 × 2, 3), norm1 (γ, β, r_μ, r_v: 3
# each), tanh (no kink), proj (2 × 3, 2) = R_w, out (2 × 2, 2); w⁰'s running
# statistics distinct from 0 and 1 and from each other, so a pass on the
# wrong statistics, or a buffer taken from the wrong model, shows
LAYERS_BN = {"kind": "layers", "input": [2], "loss": "cross_entropy",
             "layers": [{"type": "dense", "name": "fc1", "out": 3},
                        {"type": "batchnorm1d", "name": "norm1"},
                        {"type": "tanh"},
                        {"type": "dense", "name": "proj", "out": 2},
                        {"type": "dense", "name": "out", "out": 2}]}
W_BN = ([0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4]     # fc1
        + [1.2, 0.8, 1.05, 0.1, -0.2, 0.15]                    # norm1 γ, β
        + [0.05, -0.1, 0.3, 0.9, 1.3, 0.7]                     # norm1 r_μ, r_v
        + [0.6, -0.35, 0.45, 0.2, 0.5, -0.4, 0.15, -0.25]      # proj
        + [0.7, -0.3, 0.4, 0.65, 0.05, -0.1])                  # out
# every batch of two or three distinct samples (a training pass of one
# sample has no unbiased running variance, and its batchnorm output would
# be β alone)
ROUNDS_BN = [
    {"clients": [0, 1], "batches": [[[0, 2], [1, 2, 0]],
                                    [[3, 0], [1, 2, 3]]]},
    {"clients": [1, 2], "batches": [[[2, 1, 0], [3, 1]], [[1, 0], [0, 1]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 0], [2, 1, 0]], [[0, 3, 2]],
                                       [[0, 1]]]},
]
BN_FLAGS = ["moon-contrastive-gradient", "moon-previous-model",
            "moon-first-previous", "moon-mu-tau", "moon-bn-passes",
            "bn-running-update", "aggregation-weights", "local-step-count"]


def bn_paper():
    return make(
        "layers/bn-paper",
        "MOON with batch normalisation in the body: z from w_i's training "
        "pass, z_glob and z_prev from evaluation passes (the running "
        "statistics), the running statistics averaged with w",
        "dense(2→3), batchnorm1d, tanh, dense(3→2) 'proj' (R_w), dense(2→2) "
        "'out'; μ = 1.3, τ = 0.6, η = 0.2, plain SGD; moon.passes = eval and "
        "bn.aggregate = average (the defaults, QinbinLi/MOON main.py:486, "
        "540, 547, 508-514); each step moves w_i's r_μ, r_v once (PyTorch's "
        "rule, unbiased r_v, ρ = 0.1).",
        LAYERS_BN, W_BN,
        {"name": "moon", "hyperparameters": {"eta": 0.2, "moon.mu": 1.3,
                                             "moon.tau": 0.6}},
        BN_FLAGS, rounds=ROUNDS_BN, tol=TOL_BN)


def bn_pfllib():
    return make(
        "layers/bn-pfllib",
        "MOON with batch normalisation in the body, the preset pfllib: "
        "z_glob and z_prev from training passes, each party keeping its own "
        "running statistics",
        "moon/layers/bn-paper's network, data and schedule under the preset "
        "pfllib (moon.passes = train: PFLlib clientmoon.py:43-44 on models "
        "in train() mode; bn.aggregate = parameters_only: set_parameters "
        "copies parameters() only, clientmoon.py:62-66, w's running "
        "statistics the first participant's, serverbase.py:141).",
        LAYERS_BN, W_BN,
        {"name": "moon", "preset": "pfllib",
         "hyperparameters": {"eta": 0.2, "moon.mu": 1.3, "moon.tau": 0.6}},
        BN_FLAGS + ["bn-own-buffers", "bn-global-buffers"], rounds=ROUNDS_BN,
        tol=TOL_BN)


def main():
    pg.write_all(sys.argv, HERE, (paper, official, mu0, squared_drawn,
                                  relu_kink, bn_paper, bn_pfllib))


if __name__ == "__main__":
    main()
