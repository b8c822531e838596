#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedBN golden vectors (Li, Jiang, Zhang, Kamp, Dou, ICLR 2021, arXiv
2102.07623v2, Alg. 1) on the mlp with batch normalisation, computed in
60-digit decimal arithmetic by golden/pflref_exact_fedbn.py (the BN backward
through its full Jacobian, independent of ref/models/mlp.c).

  notes-a1          example A1 of shared/spec notes-fedbn-fedfomo.md §1.6,
                    small enough to check by hand: K = 2, d = h = 2, one
                    output, ½(ŷ − y)², one full batch of 4, η = 1/10,
                    ρ = 1/10, ε = 0 (exact: s = 1 and s = 3); client 2's
                    inputs are client 1's under x ↦ 3x + 1 and get the same
                    x̂.  Checked against the notes' fractions: the server's
                    W1 = [[378/625, 1991/2500]; [2021/2500, −368/625]],
                    w2 = (124/125, −119/125), b2 = 21/40, client 1's
                    γ = (491/500, 243/250), r_v = (31/30, 31/30), client 2's
                    β = (−7/200, −11/200), r_μ = (61/100, 3/100).
  ce-two-rounds     three clients of 5, 4 and 6 samples, d = 2, h = 3, k = 2
                    classes (cross-entropy), ε = 1/64, ρ = 0.15, η = 0.35;
                    two rounds, the second without client 1 (it keeps its
                    BN), minibatches of 2 and 3 with one ragged batch.
  shared-baseline   the same problem with fedbn.bn = shared: the FedAvg
                    baseline, BN and running statistics averaged.
  samples-biased    half_squared regression, fedbn.weights = samples,
                    fedbn.running_var = biased, ε = 0.03, ρ = 0.35.
  momentum-client   the ce-two-rounds problem with the client optimizer
                    torch.optim.SGD(momentum 0.6, dampening 0.25) and
                    opt.state = client (golden/pflref_exact_optim.py's step
                    on the parameters; the running statistics never step).
  ld-partial        the ce-two-rounds problem with a third round of
                    clients 0 and 1, under the preset pfllib with PFLlib's
                    -ld (lr.schedule = exponential, γ = 0.8): client 1 sat
                    out round 1, so in round 2 it steps with η γ (its one
                    training before), not η γ² (lr.count = trainings).
  squared-drawn     squared regression (the factor 2), identity activation
                    without b1, three clients, rounds whose drawn order
                    differs from the ascending clients (batches[j] is
                    clients[j]'s), samples weights.

    /usr/bin/python3 golden/fedbn/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_fedbn as fb   # noqa: E402
import pflref_golden as pg        # noqa: E402

NOTES = "shared/spec notes-fedbn-fedfomo.md"
GENERATOR = "golden/fedbn/make_worked.py (60-digit decimal, pflref_exact_fedbn.py)"
TOL = {
    "atol": 1e-12,
    "rtol": 1e-11,
    "basis": "fp64 reference in fixed order against 60-digit decimals of the "
             "binary inputs: at most two rounds of at most three local steps "
             "on values below 10, each step a batch mean, variance and square "
             "root (a few tens of roundings, the variance's cancellation "
             "bounded by features whose spread is at least a tenth of their "
             "size); every relu decision is at least 1e-3 from its kink, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}
# ld-partial's: a third round, the same reasoning.
TOL3 = dict(TOL, basis=TOL["basis"].replace("at most two rounds",
                                            "at most three rounds"))



def make(name, title, description, model, clients, init, hp, switches, rounds,
         flags, check=None, extra_mutants=None, preset=None, kink=False,
         tol=TOL):
    """kink: the vector sits on relu's kink on purpose (some u = 0 exactly,
    none within 1e-3 of it otherwise); else every u is 1e-3 away."""
    vid = f"fedbn/worked/{name}"
    algorithm = {"name": "fedbn", "hyperparameters": hp}
    if preset is not None:
        algorithm["preset"] = preset
    if switches:
        algorithm["switches"] = switches
    switches = fb.switches(algorithm)    # the preset's spelt out
    spec = pg.given_spec(title, description, model, clients, init, algorithm, rounds)

    def run(bugs=frozenset()):
        return fb.replay(spec, frozenset(bugs))

    fb.STATS.update(min_u=None, on=0, near=0)
    result = run()
    low = fb.STATS["min_u"]
    if kink:
        assert fb.STATS["on"] > 0 and fb.STATS["near"] == 0, (vid, fb.STATS)
    else:
        assert low is None or low > Fraction(1, 1000), (vid, low)
    if check is not None:
        check(result[1], result[2])
    extra_mutants = extra_mutants or {}
    mutants = {f: extra_mutants.get(f) or fb.MUTANTS[f] for f in flags}
    if "aggregation-weights" in flags:
        mutants["aggregation-weights"] = [
            "weights=" + ("uniform" if switches.get("fedbn.weights") == "samples"
                          else "samples")]
    if switches.get("fedbn.bn") == "shared":
        mutants["fedbn-bn-averaged"] = ["bn-local-when-shared"]
    elif "fedbn-bn-averaged" in flags:
        mutants["fedbn-bn-averaged"] = ["bn-averaged"]
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", f"{NOTES} §1.3-1.6", GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


def near(x, q):
    return abs(Fraction(x) - q) < Fraction(1, 10 ** 50)


def notes_a1():
    model = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "loss": "half_squared",
             "bn": True, "bn_eps": 0.0, "bn_momentum": 0.1}
    clients = [
        {"X": [[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]], "y": [1.0, 0.0, 2.0, 1.0]},
        {"X": [[1.0, 1.0], [7.0, 1.0], [1.0, 7.0], [7.0, 7.0]], "y": [0.0, 1.0, -1.0, 2.0]},
    ]
    init = {"kind": "given", "w": [0.6, 0.8, 0.8, -0.6, 0.5, -0.5, 1.0, 1.0, 0.0, 0.0,
                                   0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.5]}
    rounds = [{"clients": [0, 1], "batches": [[[0, 1, 2, 3]], [[0, 1, 2, 3]]]}]

    def check(w, v):
        # the notes' fractions, on the exact value of each binary input:
        # the inputs 0.6, 0.8, 0.1 are not the notes' 3/5, 4/5, 1/10, so
        # the check is to 1e-15 (the doubles' own error) with W1 and the
        # head, and exact where only integers and 1/2 enter
        want_w = {0: Fraction(378, 625), 1: Fraction(1991, 2500),
                  2: Fraction(2021, 2500), 3: Fraction(-368, 625),
                  14: Fraction(124, 125), 15: Fraction(-119, 125), 16: Fraction(21, 40)}
        for p, q in want_w.items():
            assert abs(Fraction(w[p]) - q) < Fraction(1, 10 ** 15), (p, w[p], q)
        want_v = {(0, 6): Fraction(491, 500), (0, 7): Fraction(243, 250),
                  (0, 12): Fraction(31, 30), (1, 8): Fraction(-7, 200),
                  (1, 9): Fraction(-11, 200), (1, 10): Fraction(61, 100),
                  (1, 11): Fraction(3, 100)}
        for (i, p), q in want_v.items():
            assert abs(Fraction(v[i][p]) - q) < Fraction(1, 10 ** 15), (i, p, v[i][p], q)
    return make("notes-a1", "FedBN worked example A1 (notes §1.6), one round, ε = 0",
                "The notes' example A1: client 2's inputs are client 1's under "
                "x -> 3x + 1; batch normalisation removes the shift (the same "
                "x-hat on both clients). One full-batch SGD step each, W1, b1, "
                "w2, b2 averaged with 1/2, each client keeping its gamma, beta, "
                "running mean and variance.",
                model, clients, init, {"eta": 0.1}, {}, rounds,
                ["bn-batch-variance", "bn-backward", "fedbn-bn-averaged",
                 "bn-running-update"], check)


CE_MODEL = {"kind": "mlp", "d": 2, "h": 3, "k": 2, "loss": "cross_entropy",
            "bn": True, "bn_eps": 0.015625, "bn_momentum": 0.15}
CE_CLIENTS = [
    {"X": [[0.35, -1.2], [1.45, 0.3], [-0.8, 0.95], [2.1, -0.45], [0.6, 1.7]],
     "y": [0.0, 1.0, 0.0, 1.0, 1.0]},
    {"X": [[3.2, 1.1], [4.65, 2.3], [2.45, 0.4], [3.9, 2.95]],
     "y": [1.0, 0.0, 1.0, 0.0]},
    {"X": [[-1.3, -2.2], [0.25, -0.7], [-2.05, -1.15], [-0.35, -2.9],
           [-1.6, -0.2], [0.9, -1.85]],
     "y": [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]},
]
CE_INIT = {"kind": "given", "w": [0.55, -0.35, 0.25, 0.7, -0.6, 0.45,
                                  0.15, -0.1, 0.05,
                                  1.1, 0.85, 1.3, 0.12, -0.08, 0.2,
                                  0.3, -0.25, 0.1, 1.25, 0.8, 1.5,
                                  0.65, -0.4, 0.9, -0.75, 0.5, 0.35,
                                  0.1, -0.15]}
CE_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3, 4]],
                                       [[3, 0], [1, 2]],
                                       [[0, 1, 2], [3, 4, 5]]]},
    {"clients": [0, 2], "batches": [[[4, 1, 0], [2, 3]],
                                    [[5, 2], [0, 4, 1], [3, 1]]]},
]


def ce_two_rounds():
    return make("ce-two-rounds", "FedBN, cross-entropy, two rounds, partial participation",
                "Three clients of different sizes and input offsets; the second "
                "round leaves client 1 out, which keeps its BN parameters and "
                "running statistics; minibatches of 2 and 3.",
                CE_MODEL, CE_CLIENTS, CE_INIT, {"eta": 0.35}, {}, CE_ROUNDS,
                ["bn-batch-variance", "bn-eps-placement", "bn-backward",
                 "fedbn-bn-averaged", "bn-running-update"])


# req: fedbn.preset.pfllib
def ce_pfllib():
    """The ce-two-rounds problem (client sizes 5, 4, 6; client 1 out of
    round 1) by the preset pfllib alone: PFLlib's FedBN weighs the
    averaged non-BN layers by n_k / Σ_{S_t} n_j."""
    return make("ce-pfllib", "FedBN as PFLlib runs it, by the preset pfllib: "
                "n_k-weighted averaging, BN kept local",
                "The problem of ce-two-rounds under the preset pfllib "
                "(TsingZ0/PFLlib clientbn.py, serverbn.py): the non-BN "
                "layers averaged with weights n_k / Σ n_j over the round's "
                "participants, γ, β and the running statistics local.",
                CE_MODEL, CE_CLIENTS, CE_INIT, {"eta": 0.35}, {}, CE_ROUNDS,
                ["bn-batch-variance", "bn-backward", "fedbn-bn-averaged",
                 "bn-running-update", "aggregation-weights"], preset="pfllib")


# req: fedbn.preset.pfllib
def ld_partial():
    """PFLlib's -ld under partial participation (clientbn.py:39-40): each
    client's ExponentialLR steps after its own train(), so client 1, out
    of round 1, trains in round 2 with η γ while clients 0 and 2, in every
    round so far, have η γ²."""
    rounds = CE_ROUNDS + [
        {"clients": [0, 1], "batches": [[[2, 4], [0, 3]], [[1, 3], [0, 2]]]}]
    return make("ld-partial", "FedBN as PFLlib runs it with -ld: each client's "
                "step decays with its own trainings",
                "The problem of ce-two-rounds with a third round of clients 0 "
                "and 1, under the preset pfllib and lr.schedule = exponential, "
                "lr.gamma = 0.8: client 1 sat out round 1, so its step in "
                "round 2 is 0.35 * 0.8 (one training before), the others' "
                "0.35 * 0.8^2 (lr.count = trainings, TsingZ0/PFLlib "
                "clientbn.py:39-40).",
                CE_MODEL, CE_CLIENTS, CE_INIT, {"eta": 0.35, "lr.gamma": 0.8},
                {"lr.schedule": "exponential"}, rounds,
                ["bn-running-update", "aggregation-weights", "lr-schedule",
                 "lr-count"], preset="pfllib", tol=TOL3)


def shared_baseline():
    return make("shared-baseline", "FedBN with BN shared: the FedAvg baseline",
                "The problem of ce-two-rounds with fedbn.bn = shared: gamma, "
                "beta and the running statistics are averaged like every "
                "other block (the authors' --mode fedavg).",
                CE_MODEL, CE_CLIENTS, CE_INIT, {"eta": 0.35},
                {"fedbn.bn": "shared"}, CE_ROUNDS,
                ["bn-batch-variance", "bn-eps-placement", "bn-backward",
                 "fedbn-bn-averaged", "bn-running-update"])


def samples_biased():
    model = {"kind": "mlp", "d": 1, "h": 2, "k": 1, "loss": "half_squared",
             "bn": True, "bn_eps": 0.03, "bn_momentum": 0.35}
    clients = [
        {"X": [[0.4], [1.3], [-0.9]], "y": [0.75, -0.5, 1.2]},
        {"X": [[2.6], [3.45], [1.9], [4.2], [3.05]], "y": [1.6, -0.3, 0.45, 2.2, 0.9]},
    ]
    init = {"kind": "given", "w": [0.9, -0.55, 0.2, -0.3, 1.15, 0.8, -0.1, 0.25,
                                   0.05, 0.4, 0.95, 1.3, 0.7, -0.6, 0.15]}
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 1, 2]], [[0, 3], [1, 2, 4]]]},
        {"clients": [0, 1], "batches": [[[2, 0], [1, 2]], [[4, 2, 0]]]},
    ]
    return make("samples-biased", "FedBN, weights n_k/Σ n_j, biased running variance",
                "Regression on one input; client 1's inputs are shifted; "
                "fedbn.weights = samples (PFLlib) and fedbn.running_var = "
                "biased.",
                model, clients, init, {"eta": 0.2},
                {"fedbn.weights": "samples", "fedbn.running_var": "biased"}, rounds,
                ["bn-batch-variance", "bn-eps-placement", "bn-backward",
                 "fedbn-bn-averaged", "bn-running-update", "aggregation-weights"])


def relu_kink():
    """The problem of samples-biased with hidden unit 1 dead on relu's kink
    (issue 33 §3): its input weight 0 and bias b1 = 0.25 make its
    pre-normalisation activation 0.25 on every sample, so x̂ = 0 / √(0 + ε)
    = 0 and, with β = 0, u = γ · 0 + 0 = 0 exactly, in every step (no
    gradient reaches the unit, and the server's mean of equal values keeps
    them).  relu′(0) = 0 (docs/models.md) passes no gradient to β, γ, W1 or
    b1 of the unit; relu′(0) = 1 would move β by Σ_j G_j ≠ 0."""
    model = {"kind": "mlp", "d": 1, "h": 2, "k": 1, "loss": "half_squared",
             "bn": True, "bn_eps": 0.03, "bn_momentum": 0.35}
    clients = [
        {"X": [[0.4], [1.3], [-0.9]], "y": [0.75, -0.5, 1.2]},
        {"X": [[2.6], [3.45], [1.9], [4.2], [3.05]], "y": [1.6, -0.3, 0.45, 2.2, 0.9]},
    ]
    init = {"kind": "given", "w": [0.9, 0.0, 0.2, 0.25, 1.15, 0.8, -0.1, 0.0,
                                   0.05, 0.4, 0.95, 1.3, 0.7, -0.6, 0.15]}
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 1, 2]], [[0, 3], [1, 2, 4]]]},
        {"clients": [0, 1], "batches": [[[2, 0], [1, 2]], [[4, 2, 0]]]},
    ]
    return make("relu-kink", "FedBN, a hidden unit exactly on relu's kink (u = 0)",
                "samples-biased's problem with hidden unit 1's input weight 0, "
                "bias 0.25 and β = 0: after normalisation its u is exactly 0 on "
                "every sample and step, where relu′(0) = 0 passes no gradient.",
                model, clients, init, {"eta": 0.2},
                {"fedbn.weights": "samples", "fedbn.running_var": "biased"}, rounds,
                ["bn-batch-variance", "bn-backward", "fedbn-bn-averaged",
                 "bn-running-update", "aggregation-weights"], kink=True)


def squared_drawn():
    model = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "loss": "squared",
             "activation": "identity", "hidden_bias": False,
             "bn": True, "bn_eps": 0.045, "bn_momentum": 0.22}
    clients = [
        {"X": [[0.3, -0.7], [1.15, 0.4], [-0.55, 1.25], [0.85, -1.1]],
         "y": [0.6, -0.25, 1.35, 0.1]},
        {"X": [[2.2, 1.6], [3.1, 0.85], [1.75, 2.45]], "y": [-0.4, 0.95, 0.3]},
        {"X": [[-1.8, -0.35], [-0.9, -1.45], [-2.35, 0.6], [-1.2, -0.95],
               [-0.45, 0.15]], "y": [1.1, -0.6, 0.2, 0.75, -1.3]},
    ]
    init = {"kind": "given", "w": [0.45, -0.3, 0.2, 0.65,
                                   1.2, 0.8, 0.1, -0.15, 0.05, -0.1, 0.9, 1.4,
                                   0.55, -0.35, 0.25]}
    rounds = [
        {"clients": [0, 1, 2], "drawn": [2, 0, 1],
         "batches": [[[0, 2], [1, 2]], [[2, 0, 1]], [[2, 1], [0, 1, 2]]]},
        {"clients": [0, 2], "drawn": [2, 0],
         "batches": [[[1, 0]], [[2, 0], [1, 2]]]},
    ]
    return make("squared-drawn", "FedBN, squared loss, drawn order unlike the clients",
                "Squared loss (dL/dz = 2 r), identity activation without b1, "
                "three clients of 4, 3 and 5 samples, fedbn.weights = samples; "
                "each round's drawn order differs from its ascending clients, "
                "whose batch lists batches[j] are (every index below 3, so "
                "a misread pairing runs and is caught).",
                model, clients, init, {"eta": 0.08}, {"fedbn.weights": "samples"},
                rounds,
                ["bn-batch-variance", "bn-eps-placement", "bn-backward",
                 "fedbn-bn-averaged", "bn-running-update", "aggregation-weights",
                 "loss-scale", "schedule-drawn-order"])


def momentum_client():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 1], [2, 3, 4]], [[3, 0], [1, 2]],
                                           [[5, 1, 3], [0, 4]]]},
        {"clients": [0, 2], "batches": [[[4, 2, 0], [1, 3]], [[2, 4], [0, 3, 5]]]},
    ]
    return make("momentum-client",
                "FedBN, clients on torch.optim.SGD(momentum, dampening), one "
                "optimizer per client kept across rounds",
                "The problem of ce-two-rounds; each client steps with "
                "torch.optim.SGD(lr = 0.35, momentum = 0.6, dampening = 0.25): "
                "b <- d at a block's first step, then b <- 0.6 b + 0.75 d, "
                "theta <- theta - 0.35 b, on every parameter (W1, b1, gamma, "
                "beta, w2, b2), never on the running statistics, which move "
                "by PyTorch's rule after each gradient pass; opt.state = "
                "client: client k's momentum buffers carry from round 0 into "
                "round 1 (PFLlib builds each client's optimizer once).  Clients "
                "0 and 2 train in both rounds, client 1 only in the first.",
                CE_MODEL, CE_CLIENTS, CE_INIT,
                {"eta": 0.35, "opt.momentum": 0.6, "opt.dampening": 0.25},
                {"opt.state": "client"}, rounds,
                ["optimizer-state-lifetime", "momentum-form", "fedbn-bn-averaged",
                 "bn-running-update", "bn-backward"],
                extra_mutants={"optimizer-state-lifetime": ["state-reset",
                                                            "state-server"],
                               "momentum-form": ["dampening-first"]})


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [notes_a1, ce_two_rounds, shared_baseline,
                                  samples_biased, squared_drawn, momentum_client,
                                  ce_pfllib, relu_kink, ld_partial])
