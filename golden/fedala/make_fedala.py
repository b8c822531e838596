#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedALA golden vectors (Zhang et al., AAAI 2023, arXiv 2212.01197v4,
Alg. 1 and the ALA module), computed by golden/pflref_exact_fedala.py:
rational steps, rounded to 60 significant digits after each.

Four clients of a regression mlp (d = 2, h = 2, identity activation, squared loss; n =
5, 4, 6, 3), w⁰ given, clients that skip rounds, each participant's
sample D_i^s (s = 60: 3, 2, 3, 1 samples) given as the round's personal
lists (one pass in batches).

  paper-partial  the paper's reading: p = 1 layer (W2, b2), a start phase
                 that runs past k + 1 passes, client 1 first in round 2
                 (one pass: Alg. 1 l. 8 puts the start stage in round 1,
                 t = 2), client 3's on one sample; W_i clipped at 0 and
                 at 1
  p-tensors      fedala.p_unit = tensors, p = 3 (b1, W2, b2: b1 weighed,
                 W1 overwritten by Θ), a start phase stopped by the cap
  sum-first      fedala.skip = sum_first: client 1 trains alone in round
                 2, so Θ = Θ_1 in round 3 and ALA returns at once (its
                 start phase waits); the paper's reading runs it
  official       preset official (sum_first, tensors), p = 0 (every
                 tensor), every client in every round (the authors' code
                 runs ALA on every client; the same run)
  partial-all    fedala.ala_clients = all with the paper's other
                 switches, the rounds of paper-partial: a client outside
                 the round runs ALA too (Θ_i ← Θ̂_i, W_i learned, start
                 phase spent), its D_i^s after the participants' lists
  pfllib-lr-trainings  preset pfllib with PFLlib's -ld: lr.schedule =
                 exponential, γ = 1/2, lr.count = trainings (α decays,
                 ALA's η does not)
  pfllib-run     preset pfllib_run (pfllib and ala_clients = all), the
                 same rounds
  layers/bn-pfllib  preset pfllib (bn.aggregate = parameters_only) on a
                 layer list with a batchnorm1d layer (dense 3, bn, relu,
                 dense 1; squared loss), s = 70 so every batch holds two
                 samples or more: ALA weighs parameters() only, Θ̂_i keeps
                 Θ_i's r_μ, r_v, the local steps move them, Θ takes the
                 first participant's
  layers/bn-pfllib-run  preset pfllib_run (ALA on every client) on the
                 same model and rounds, the outsiders' D_i^s added: a
                 client outside the round takes Θ̂_i's parameters and keeps
                 its own running statistics
  layers/bn-ala-mode  preset pfllib (fedala.ala_mode = pfllib) on the
                 same model: a client that did not train in the previous
                 round runs its passes in evaluation mode (three start
                 phases so), one client alone and back (sum_first)

  layers/bn-eval-gap  preset pfllib with fedala.eval_gap = 2 (PFLlib's
                 -eg 2) on bn-pfllib's inputs: the evaluations of rounds
                 0 and 2 only, so client 1, trained in round 0 and idle
                 in round 1, passes in training mode in round 2

Every vector's final v is each client's latest Θ̂_i (Alg. 1 l. 19: the
model after its last ALA, before that round's local training; w⁰ for a
client that never ran ALA), asserted to differ from the trained Θ_i^T
(flag fedala-reported-model on every vector).

    /usr/bin/python3 golden/fedala/make_fedala.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_fedala as xa     # noqa: E402
import pflref_golden as pg           # noqa: E402

PAPER = ("Zhang, Hua, Wang, Song, Xue, Ma, Guan, AAAI 2023, arXiv "
         "2212.01197v4, Alg. 1 (as the authors' slides print it, TsingZ0/FedALA "
         "044f761faf99 FedALAOral.pdf p. 47) and the ALA module (Θ̂_i = Θ_i + "
         "(Θ − Θ_i) ⊙ W_i on the top p layers, Eq. (4); W_i ← clip_[0,1](W_i "
         "− η ∇_{Θ̂_i} L ⊙ (Θ − Θ_i)), Eq. (5); the start stage until "
         "convergence in the round t = 2, l. 8-11, one pass later, l. "
         "12-14), the stopping rule of TsingZ0/FedALA a7a9b2134285 "
         "system/utils/ALA.py:142-153")
OFFICIAL = ("TsingZ0/FedALA a7a9b2134285 system/utils/ALA.py:82 (Σ of the "
            "first tensor's Θ − Θ_i == 0: return), :86, :95 (layer_idx "
            "counts parameters() from the output)")
PFLLIB_RUN = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/"
              "serverala.py:73-74 (send_models: local_initialization, "
              "ALA.py's adaptive_local_aggregation, on every client before "
              "the round's training)")
GENERATOR = ("golden/fedala/make_fedala.py (rational steps rounded to 60 "
             "digits; pflref_exact_fedala.py)")
TOL = {
    "atol": 1e-11,
    "rtol": 1e-11,
    "basis": "fp64 reference in fixed order against 60-digit values of the "
             "binary inputs: a 9-parameter mlp, at most 9 ALA passes of one "
             "to two batches and two local steps per round over four "
             "rounds, every step a small move (α = 0.05; η |∇L ⊙ (Θ − Θ_i)| "
             "below 0.2); the start phase's test var < "
             "threshold² is asserted at least 1 % away from equality, so "
             "fp64 errors stay below 1e-13; every flagged bug moves some "
             "value by more than 1e3 times the tolerance.",
}
MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "loss": "squared",
         "activation": "identity", "bias": True}
CLIENTS = [
    {"X": [[0.62, -0.41], [-0.35, 0.88], [0.91, 0.27], [-0.74, -0.52],
           [0.18, 0.69]],
     "y": [0.83, -0.47, 1.12, -0.95, 0.36]},
    {"X": [[0.44, 0.93], [-0.86, 0.15], [0.29, -0.77], [0.71, 0.38]],
     "y": [-0.62, 0.91, 0.48, -0.33]},
    {"X": [[-0.57, 0.46], [0.83, -0.64], [0.12, 0.95], [-0.39, -0.81],
           [0.66, 0.21], [-0.93, 0.34]],
     "y": [1.27, -0.38, 0.74, -1.06, 0.19, 0.88]},
    {"X": [[0.52, 0.77], [-0.68, -0.23], [0.97, -0.49]],
     "y": [0.58, -0.84, 1.31]},
]
INIT = {"kind": "given",
        "w": [0.45, -0.3, 0.25, 0.55, 0.1, -0.15, 0.6, -0.4, 0.05]}

# four rounds; client 3 first in round 1, client 1 first ALA'd in round 2;
# the personal lists of round 0 are unread (no ALA in the first round)
PARTIAL = [
    {"clients": [0, 1, 2], "drawn": [2, 0, 1],
     "batches": [[[0, 1], [2, 3]], [[1, 2], [3]], [[4, 5], [0, 2]]]},
    {"clients": [0, 2, 3], "drawn": [3, 0, 2],
     "batches": [[[3, 4], [0]], [[1, 3], [2, 5]], [[0, 2], [1]]],
     "personal": [[[1, 2], [3]], [[2, 3], [4]], [[2]]]},
    {"clients": [1, 2], "drawn": [2, 1],
     "batches": [[[0, 3], [1, 2]], [[5, 1], [3]]],
     "personal": [[[2, 3]], [[0, 1], [2]]]},
    {"clients": [0, 1, 3], "drawn": [1, 3, 0],
     "batches": [[[2, 4], [1, 3]], [[2], [0, 1]], [[1, 2], [0]]],
     "personal": [[[0, 1], [2]], [[1, 2]], [[0]]]},
]
# client 1 alone in round 2, again in round 3 (Θ = Θ_1 there)
ALONE = [
    {"clients": [0, 2, 3],
     "batches": [[[0, 1], [2]], [[1, 3], [0, 5]], [[2, 0], [1]]]},
    {"clients": [0, 1, 2],
     "batches": [[[4, 2], [3]], [[0, 1], [2, 3]], [[2, 4], [1]]],
     "personal": [[[2, 3], [4]], [[0, 1]], [[1, 2], [3]]]},
    {"clients": [1],
     "batches": [[[3, 2], [0]]],
     "personal": [[[1], [2]]]},
    {"clients": [1, 2, 3],
     "batches": [[[1, 0], [2]], [[5, 3], [1, 4]], [[0, 1], [2]]],
     "personal": [[[2, 3]], [[3, 4], [5]], [[1]]]},
]
# client 1 alone in round 0: in round 1 it finds Θ = Θ_1 before its first
# ALA (the paper's reading spends its start phase there, sum_first keeps it
# for round 2)
ALONE_FIRST = [
    {"clients": [1],
     "batches": [[[2, 0], [3]]]},
    {"clients": [1, 2],
     "batches": [[[1], [0, 3]], [[4, 1], [2, 5]]],
     "personal": [[[0, 1]], [[2, 3], [4]]]},
    {"clients": [0, 1, 3],
     "batches": [[[1, 3], [4]], [[3, 2], [0]], [[2, 0], [1]]],
     "personal": [[[3, 4], [0]], [[2], [3]], [[0]]]},
    {"clients": [1, 2, 3],
     "batches": [[[0, 2], [1]], [[3, 0], [5]], [[1], [0, 2]]],
     "personal": [[[1, 2]], [[4, 5], [0]], [[2]]]},
]
EVERY = [
    {"clients": [0, 1, 2, 3],
     "batches": [[[0, 2], [4]], [[3, 1], [0]], [[1, 5], [2, 4]], [[2], [0]]]},
    {"clients": [0, 1, 2, 3],
     "batches": [[[1, 3], [0]], [[2, 0], [3]], [[0, 3], [5]], [[1, 0], [2]]],
     "personal": [[[0, 1], [2]], [[2, 3]], [[3, 4], [5]], [[1]]]},
    {"clients": [0, 1, 2, 3],
     "batches": [[[4, 3], [2]], [[1], [2, 3]], [[4, 1], [0, 2]], [[2, 1]]],
     "personal": [[[1, 2], [3]], [[0, 1]], [[0, 1], [2]], [[2]]]},
]

# PARTIAL with every client's D_i^s from round 1 on (fedala.ala_clients =
# all): the participants' lists, then those of the clients outside the
# round in ascending id (client 1's 2 samples in round 1; client 0's 3 and
# client 3's 1 in round 2; client 2's 3 in round 3)
PARTIAL_ALL = [dict(PARTIAL[0])] + [
    dict(r, personal=r["personal"] + extra) for r, extra in zip(
        PARTIAL[1:], [[[[3, 0]]],
                      [[[4, 1], [0]], [[1]]],
                      [[[5, 3], [1]]]])]

ALL_MUTANTS = xa.MUTANTS


def subset(*flags):
    return list(flags), {f: ALL_MUTANTS[f] for f in flags}


def make(vid, fname, title, description, algorithm, rounds, flags, mutants,
         source, check=None, problem=None, boundary=False, tol=TOL):
    model, clients, init = problem or (MODEL, CLIENTS, INIT)
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)
    state = {}
    result = xa.replay(spec, state=state)
    if boundary:
        # one test sits exactly on var = threshold² (std < threshold fails)
        assert any(m == 1 for m in state["margins"]), state["margins"]
    else:
        # the start phase's test is never near equality
        assert all(abs(m - 1) > 0.01 for m in state["margins"]), \
            state["margins"]
    if check is not None:
        check(spec, result, state)
    # Alg. 1 l. 19: v is each client's latest Θ̂_i, and on every vector it
    # differs from the trained Θ_i^T by far more than the tolerance (the
    # flag fedala-reported-model, bug report-trained, on every vector)
    gap = max(abs(a - b) for hat, th in zip(result[2], state["trained"])
              for a, b in zip(hat, th))
    assert gap > 1e3 * tol["atol"], (vid, float(gap))
    flags = list(flags) + ["fedala-reported-model"]
    mutants = dict(mutants, **{"fedala-reported-model":
                               ALL_MUTANTS["fedala-reported-model"]})
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs: xa.replay(spec, bugs),
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def clipped_both_ways(state):
    W = [x for Wi in state["W"] for x in Wi]
    return any(x == 0 for x in W) and any(0 < x < 1 for x in W)


def final_with(spec, **switches):
    alg = dict(spec["algorithm"], switches=dict(
        spec["algorithm"].get("switches", {}), **switches))
    return xa.replay(dict(spec, algorithm=alg))[2]


def paper_partial():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 3.5,
                                     "fedala.s": 60, "fedala.p": 1,
                                     "fedala.k": 2, "fedala.threshold": 0.0063,
                                     "fedala.max_epochs": 9}}

    def check(spec, result, state):
        assert clipped_both_ways(state)
        assert max(state["epochs"]) > 3 and 9 not in state["epochs"]
        assert final_with(spec, **{"fedala.p_unit": "tensors"}) != result[2]
        assert final_with(spec, **{"fedala.start": "own"}) != result[2]

    flags, mutants = subset("fedala-clip", "fedala-w-gradient",
                            "fedala-theta-hat", "fedala-lower-layers",
                            "fedala-range", "fedala-start-phase",
                            "fedala-stop-rule", "fedala-w-state",
                            "aggregation-weights", "local-step-count",
                            "batch-mean")
    # the recorded loss of a pass: p-tensors tells it (its stop moves)
    mutants["fedala-stop-rule"] = ["stop-ddof1", "stop-window-all",
                                   "stop-at-k"]
    return make(
        "fedala/worked/paper-partial", "worked-paper-partial.json",
        "FedALA as Alg. 1 writes it, with clients that skip rounds",
        "Four clients (n = 5, 4, 6, 3) of a 2-2-1 linear-activation mlp, squared loss; "
        "α = 0.05 (eta), η = 3.5, s = 60 (|D_i^s| = 3, 2, 3, 1), p = 1 "
        "layer (W2, b2), k = 2, threshold 0.0063, at most 9 passes.  Rounds "
        "{0, 1, 2}, {0, 2, 3}, {1, 2}, {0, 1, 3}: no ALA in round 0; client "
        "0's start phase runs 4 passes, clients 2 and 3 stop at k + 1 = 3, "
        "client 1, first in round 2, makes one pass (Alg. 1 l. 8, l. 12: "
        "the start stage is the round t = 2 only); later rounds one pass.",
        algorithm, PARTIAL, flags, mutants, PAPER, check)


def p_tensors():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.04, "fedala.eta": 2.75,
                                     "fedala.s": 60, "fedala.p": 3,
                                     "fedala.k": 2, "fedala.threshold": 0.01,
                                     "fedala.max_epochs": 4},
                 "switches": {"fedala.p_unit": "tensors"}}

    def check(spec, result, state):
        assert 4 in state["epochs"]

    flags, mutants = subset("fedala-clip", "fedala-w-gradient",
                            "fedala-theta-hat", "fedala-lower-layers",
                            "fedala-range", "fedala-start-phase",
                            "fedala-w-state", "fedala-stop-rule")
    # the last batch's loss, not the pass's mean: client 0 stops at the
    # cap (4 passes), the mean would stop it after 3
    mutants["fedala-stop-rule"] = ["loss-mean"]
    return make(
        "fedala/worked/p-tensors", "worked-p-tensors.json",
        "FedALA with p counting parameter tensors (fedala.p_unit = tensors, "
        "p = 3): b1, W2 and b2 weighed, W1 overwritten by Θ",
        "The clients, w⁰ and rounds of fedala/worked/paper-partial; α = "
        "0.04, η = 2.75, s = 60, p = 3 tensors, k = 2, threshold 0.01, at "
        "most 4 passes (client 0's start phase ends at the cap).",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + OFFICIAL, check)


def sum_first():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.06, "fedala.eta": 3.25,
                                     "fedala.s": 60, "fedala.p": 1,
                                     "fedala.k": 2, "fedala.threshold": 0.015,
                                     "fedala.max_epochs": 7},
                 "switches": {"fedala.skip": "sum_first"}}

    def check(spec, result, state):
        rec = [r for r in result[0].records
               if r["name"] == "ala_epochs" and r["round"] == 3
               and r["client"] == 1]
        assert rec[0]["value"] == [0]

    flags, mutants = subset("fedala-skip", "fedala-start-phase",
                            "fedala-theta-hat", "fedala-lower-layers")
    return make(
        "fedala/worked/sum-first", "worked-sum-first.json",
        "FedALA with the authors' early return (fedala.skip = sum_first): "
        "a client that trained alone finds Θ = Θ_i",
        "The clients and w⁰ of fedala/worked/paper-partial; α = 0.06, η = "
        "3.25, s = 60, p = 1, k = 2, threshold 0.015, at most 7 passes.  "
        "Rounds {0, 2, 3}, {0, 1, 2}, {1}, {1, 2, 3}: client 1 trains "
        "alone in round 2, so in round 3 Σ(Θ − Θ_1) over W1 is 0 and ALA "
        "returns (the paper's reading runs ALA with Θ − Θ_1 = 0); client "
        "3, back in round 3, makes one pass (the start stage is round 1).",
        algorithm, ALONE, flags, mutants, PAPER + "; " + OFFICIAL, check)


def official():
    algorithm = {"name": "fedala", "preset": "official",
                 "hyperparameters": {"eta": 0.045, "fedala.eta": 2.25,
                                     "fedala.s": 60, "fedala.p": 0,
                                     "fedala.k": 2, "fedala.threshold": 0.02,
                                     "fedala.max_epochs": 6}}
    flags, mutants = subset("fedala-w-gradient", "fedala-theta-hat",
                            "fedala-range", "fedala-w-state",
                            "aggregation-weights")
    mutants["fedala-range"] = ["p-flip"]   # p = 0: every tensor, no bottom
    return make(
        "fedala/worked/official", "worked-official.json",
        "FedALA as the authors' code runs it (preset official), every "
        "client in every round",
        "The clients and w⁰ of fedala/worked/paper-partial; α = 0.045, η = "
        "2.25, s = 60, p = 0 (every tensor: layer_idx = 0), k = 2, "
        "threshold 0.02, at most 6 passes; all four clients in each of "
        "three rounds, so ALA on every client (serverALA.py:93-94) is the "
        "same run.",
        algorithm, EVERY, flags, mutants, PAPER + "; " + OFFICIAL)


LINEAR = ({"kind": "linear", "d": 2, "loss": "half_squared", "bias": True},
          CLIENTS, {"kind": "given", "w": [0.35, -0.25, 0.15]})


def paper_alone():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.07, "fedala.eta": 4.5,
                                     "fedala.s": 60, "fedala.p": 1,
                                     "fedala.k": 2, "fedala.threshold": 0.00005,
                                     "fedala.max_epochs": 8}}

    def check(spec, result, state):
        # the box's start stage is round 1 (t = 2): clients 0 and 3, first
        # in round 2, make one pass; a start phase per client differs
        assert final_with(spec, **{"fedala.start": "own"}) != result[2]
        # client 2's start stage (round 1) runs 7 passes, its std test
        # failing four times: the recorded losses' values decide its end
        assert state["epochs"][:2] == [3, 7], state["epochs"]

    # fedala.skip = sum_first gives the same run here (client 1's start
    # stage, with Θ − Θ_1 = 0, changes nothing): sum-first and
    # pfllib-alone carry that flag
    flags, mutants = subset("fedala-start-phase",
                            "fedala-w-gradient", "fedala-theta-hat",
                            "aggregation-weights")
    mutants["fedala-theta-hat"] = ["hat-swap"]
    return make(
        "fedala/worked/paper-alone", "worked-paper-alone.json",
        "FedALA as Alg. 1 writes it on a linear model, a client that "
        "trained alone coming back (Θ = Θ_i: ALA runs, its start phase "
        "is spent)",
        "The clients of fedala/worked/paper-partial, ŷ = x·w + b with the "
        "half-squared loss, w⁰ = (0.35, -0.25, 0.15); α = 0.07, η = 4.5, s "
        "= 60, p = 1 (the one layer), k = 2, threshold 0.00005, at most 8 "
        "passes.  Client 1 trains alone in round 0, so in round 1 (the "
        "box's t = 2, its start stage) it finds Θ = Θ_1: ALA runs with Θ − "
        "Θ_1 = 0 (W_1 unchanged, Θ̂_1 = Θ_1, the start stage spent), client "
        "2's runs 7 passes (the std test fails four times); "
        "clients 0 and 3, first in round 2, make one pass (Alg. 1 l. 12), "
        "where a start phase per client (fedala.start = own) would run "
        "theirs.",
        algorithm, ALONE_FIRST, flags, mutants, PAPER, check, problem=LINEAR)


def pfllib_alone():
    algorithm = {"name": "fedala", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.055, "fedala.eta": 3.75,
                                     "fedala.s": 60, "fedala.p": 2,
                                     "fedala.k": 2, "fedala.threshold": 0.013,
                                     "fedala.max_epochs": 7}}

    def check(spec, result, state):
        assert final_with(spec, **{"fedala.skip": "first_round"}) != result[2]

    flags, mutants = subset("fedala-skip", "fedala-range",
                            "fedala-w-gradient", "fedala-lower-layers")
    return make(
        "fedala/worked/pfllib-alone", "worked-pfllib-alone.json",
        "FedALA as PFLlib runs it (preset pfllib), a client that trained "
        "alone coming back",
        "The clients and w⁰ of fedala/worked/paper-partial; α = 0.055, η = "
        "3.75, s = 60, p = 2 tensors (W2, b2), k = 2, threshold 0.013, at "
        "most 7 passes; the rounds of fedala/worked/paper-alone (client 1 "
        "alone in round 0: ALA returns for it in round 1, its start phase "
        "is in round 2).  The learning "
        "rate is constant, so lr.count = trainings changes nothing.",
        algorithm, ALONE_FIRST, flags, mutants, PAPER + "; " + OFFICIAL,
        check)


# dyadic numbers throughout: the start phase's std test is exact in fp64
BOUNDARY = ({"kind": "linear", "d": 1, "loss": "squared"},
            [{"X": [[1.0]], "y": [0.75]},
             {"X": [[1.0], [1.0], [1.0]], "y": [0.25, 0.5, 0.25]}],
            {"kind": "given", "w": [0.125]})
# |l_2 − l_3|/2 of client 0's start phase below (exact, 44 bits)
BOUNDARY_THR = 11356627629375 / 2 ** 51


def stop_boundary():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.25, "fedala.eta": 0.5,
                                     "fedala.s": 100, "fedala.p": 1,
                                     "fedala.k": 2,
                                     "fedala.threshold": BOUNDARY_THR,
                                     "fedala.max_epochs": 6}}

    def check(spec, result, state):
        assert state["epochs"] == [4], state["epochs"]

    flags, mutants = subset("fedala-stop-rule", "fedala-w-gradient")
    mutants["fedala-stop-rule"] = ["stop-ddof1", "stop-le"]
    return make(
        "fedala/worked/stop-boundary", "worked-stop-boundary.json",
        "FedALA's start phase on its stopping boundary: the std of the last "
        "k losses equal to the threshold does not stop it",
        "ŷ = x w, squared loss, client 0 (x = 1, y = 0.75) and client 1 (x "
        "= 1, 1, 1; y = 0.25, 0.5, 0.25), w⁰ = 0.125, α = 0.25, η = 0.5, s "
        "= 100, p = 1, k = 2, threshold = |l_2 − l_3|/2 of client 0's start "
        "phase in round 1 (every number dyadic, so fp64 is exact): the std "
        "after pass 3 equals the threshold, std < threshold fails, and pass "
        "4 stops it (std ≤ threshold would stop after 3).",
        algorithm, [{"clients": [0, 1], "batches": [[[0]], [[0, 1, 2]]]},
                    {"clients": [0], "personal": [[[0]]],
                     "batches": [[[0]]]}],
        flags, mutants, PAPER, check, problem=BOUNDARY, boundary=True)


def all_partial():
    algorithm = {"name": "fedala",
                 "hyperparameters": {"eta": 0.045, "fedala.eta": 3.25,
                                     "fedala.s": 60, "fedala.p": 1,
                                     "fedala.k": 2, "fedala.threshold": 0.007,
                                     "fedala.max_epochs": 8},
                 "switches": {"fedala.ala_clients": "all"}}

    def check(spec, result, state):
        # the run differs from ALA on the participants only (their lists)
        alg = dict(spec["algorithm"], switches={})
        rounds = [dict(r, personal=r["personal"][:len(r["clients"])])
                  if "personal" in r else r
                  for r in spec["schedule"]["rounds"]]
        other = xa.replay(dict(spec, algorithm=alg,
                               schedule=dict(spec["schedule"],
                                             rounds=rounds)))
        assert other[2] != result[2]

    flags, mutants = subset("fedala-ala-clients", "fedala-w-gradient",
                            "fedala-theta-hat", "fedala-lower-layers",
                            "fedala-start-phase", "fedala-w-state",
                            "aggregation-weights")
    # every client starts in round 1 under all: start-flip is the same
    # run here, and so is outsider-no-start (the start stage is the round
    # t = 2 whatever a client did before; pfllib-run, under fedala.start =
    # own, tells it)
    mutants["fedala-start-phase"] = ["start-never", "start-every"]
    mutants["fedala-ala-clients"] = ["ala-clients-flip", "outsider-keeps"]
    return make(
        "fedala/worked/partial-all", "worked-partial-all.json",
        "FedALA with ALA on every client each round (fedala.ala_clients = "
        "all), clients that skip rounds",
        "The clients, w⁰ and rounds of fedala/worked/paper-partial; α = "
        "0.045, η = 3.25, s = 60, p = 1 layer, k = 2, threshold 0.007, at "
        "most 8 passes; fedala.ala_clients = all: from round 1 on every "
        "client runs ALA against Θ^{t−1} before the round trains, a client "
        "outside the round keeping Θ̂_i as its Θ_i (client 1 runs its "
        "start stage in round 1, the box's t = 2, without training); each round's personal "
        "lists hold the participants' D_i^s, then the others' in id order.",
        algorithm, PARTIAL_ALL, flags, mutants,
        PAPER + "; " + PFLLIB_RUN, check)


def pfllib_run():
    algorithm = {"name": "fedala", "preset": "pfllib_run",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 3.0,
                                     "fedala.s": 60, "fedala.p": 2,
                                     "fedala.k": 2, "fedala.threshold": 0.009,
                                     "fedala.max_epochs": 8}}
    flags, mutants = subset("fedala-ala-clients", "fedala-range",
                            "fedala-w-gradient", "fedala-start-phase")
    mutants["fedala-start-phase"] = ["start-never", "start-every"]
    return make(
        "fedala/worked/pfllib-run", "worked-pfllib-run.json",
        "FedALA as PFLlib's server runs it (preset pfllib_run): ALA on "
        "every client each round, clients that skip rounds",
        "The clients, w⁰ and rounds (with every client's D_i^s) of "
        "fedala/worked/partial-all; α = 0.05, η = 3, s = 60, p = 2 tensors "
        "(W2, b2), k = 2, threshold 0.009, at most 8 passes; preset "
        "pfllib_run (fedala.skip = sum_first, fedala.p_unit = tensors, "
        "lr.count = trainings, fedala.ala_clients = all).  The learning "
        "rate is constant, so lr.count = trainings changes nothing.",
        algorithm, PARTIAL_ALL, flags, mutants,
        PAPER + "; " + OFFICIAL + "; " + PFLLIB_RUN)


LR_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 clients/clientala.py:48-49 (the "
             "client's ExponentialLR stepped after its train()), :12, "
             ":17-18 and utils/ALA.py:104-105, :135 (ALA's eta a float, its "
             "optimizer lr = 0: no decay)")


def pfllib_lr():
    algorithm = {"name": "fedala", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.06, "fedala.eta": 3.25,
                                     "fedala.s": 60, "fedala.p": 2,
                                     "fedala.k": 2, "fedala.threshold": 0.011,
                                     "fedala.max_epochs": 7,
                                     "lr.gamma": 0.5},
                 "switches": {"lr.schedule": "exponential"}}

    def check(spec, result, state):
        assert final_with(spec, **{"lr.count": "rounds"}) != result[2]

    flags, mutants = subset("lr-schedule", "lr-count", "fedala-range",
                            "fedala-w-gradient", "fedala-lower-layers")
    return make(
        "fedala/worked/pfllib-lr-trainings", "worked-pfllib-lr-trainings.json",
        "FedALA as PFLlib runs it with -ld (preset pfllib, lr.schedule = "
        "exponential, γ = 1/2): each client's α decays with its own "
        "trainings, ALA's η does not",
        "The clients, w⁰ and rounds of fedala/worked/paper-partial; α = "
        "0.06, η = 3.25, s = 60, p = 2 tensors, k = 2, threshold 0.011, at "
        "most 7 passes; lr.schedule = exponential, lr.gamma = 0.5 and the "
        "preset's lr.count = trainings: client i's local steps use α/2^k, "
        "k the rounds it trained in before (client 3 in round 1: k = 0; "
        "client 1 in round 2: k = 1; client 0 in round 3: k = 2), not the "
        "round t; the W step keeps η (PFLlib's ALA reads a float no "
        "scheduler touches).",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + OFFICIAL
        + LR_SOURCE, check)


BN_MODEL = {"kind": "layers", "input": [2], "loss": "squared",
            "layers": [{"type": "dense", "name": "fc1", "out": 3},
                       {"type": "batchnorm1d", "name": "bn1",
                        "eps": 0.03125, "momentum": 0.25},
                       {"type": "relu"},
                       {"type": "dense", "name": "out", "out": 1}]}
# fc1.weight (3 x 2), fc1.bias, bn1.weight, bn1.bias, bn1.running_mean,
# bn1.running_var, out.weight (1 x 3), out.bias
BN_INIT = {"kind": "given",
           "w": [0.45, -0.3, 0.25, 0.55, -0.35, 0.2, 0.1, -0.15, 0.05,
                 1.1, 0.9, 1.2, 0.12, -0.08, 0.04,
                 0.07, -0.11, 0.03, 1.3, 0.8, 1.15,
                 0.6, -0.4, 0.5, 0.02]}
# s = 70: |D_i^s| = 3, 2, 4, 2; every batch two samples or more
BN_ROUNDS = [
    {"clients": [0, 1, 2],
     "batches": [[[0, 1], [2, 3]], [[1, 2], [0, 3]], [[4, 5], [0, 2]]]},
    {"clients": [0, 2, 3],
     "batches": [[[3, 4], [0, 2]], [[1, 3], [2, 5]], [[0, 2], [1, 2]]],
     "personal": [[[1, 2, 3]], [[2, 3], [4, 5]], [[0, 1]]]},
    {"clients": [1, 2],
     "batches": [[[0, 3], [1, 2]], [[5, 1], [3, 0]]],
     "personal": [[[2, 3]], [[0, 1], [2, 3]]]},
    {"clients": [0, 1, 3],
     "batches": [[[2, 4], [1, 3]], [[2, 0], [1, 3]], [[1, 2], [0, 1]]],
     "personal": [[[0, 1, 4]], [[1, 2]], [[0, 2]]]},
]
BN_SOURCE = ("; TsingZ0/FedALA a7a9b2134285 system/utils/ALA.py:78-79, "
             ":86-87, :91, :158-159 (parameters() only; model_t a deepcopy "
             "of the client's model, in the mode it was left in), "
             "serverALA.py:111-123 (parameters() averaged into a deepcopy "
             "of the first upload); TsingZ0/PFLlib d832e76f6a23 "
             "servers/serverbase.py:138-150, clients/clientbase.py:67-69; "
             "servers/serverala.py:26-31 (evaluate() after send_models), "
             "clients/clientbase.py:84, :126 (model.eval()), "
             "clients/clientala.py:23 (model.train()): fedala.ala_mode")


BN_TOL = {
    "atol": 1e-10,
    "rtol": 1e-10,
    "basis": "fp64 reference in fixed order against 60-digit values of the "
             "binary inputs: a 25-parameter layer list whose batch "
             "normalisation divides by sqrt(s² + ε) with ε = 1/32 (so by "
             "at most 1/sqrt(ε) ≈ 5.7, no amplification beyond that), one "
             "ALA pass of one or two batches and two local steps per "
             "client and round over four rounds, α = 0.05; no stopping "
             "test is decided (one pass at most); every flagged bug moves "
             "some value by more than 1e3 times the tolerance.",
}


def bn_pfllib():
    algorithm = {"name": "fedala", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 3.0,
                                     "fedala.s": 70, "fedala.p": 3,
                                     "fedala.k": 2, "fedala.threshold": 0.01,
                                     "fedala.max_epochs": 1}}

    def check(spec, result, state):
        # the buffers matter: averaging them changes the run
        assert final_with(spec, **{"bn.aggregate": "average"}) != result[2]
        # so does the mode of the passes (client 3 in round 1, client 1 in
        # round 2, clients 0 and 3 in round 3: not trained in the round
        # before)
        assert state["eval_passes"] == [(1, 3), (2, 1), (3, 0), (3, 3)], \
            state["eval_passes"]
        assert final_with(spec, **{"fedala.ala_mode": "train"}) != result[2]

    flags, mutants = subset("fedala-w-gradient", "fedala-range",
                            "fedala-lower-layers", "bn-own-buffers",
                            "bn-global-buffers", "fedala-bn-ala-passes",
                            "bn-running-frozen", "fedala-ala-mode")
    return make(
        "fedala/layers/bn-pfllib", "layers-bn-pfllib.json",
        "FedALA on a layer list with batch normalisation, as the authors' "
        "code and PFLlib run it (preset pfllib: bn.aggregate = "
        "parameters_only)",
        "Four clients (the inputs and targets of fedala/worked/"
        "paper-partial), a layer list dense(3), batchnorm1d (ε = 1/32, ρ = "
        "1/4), relu, dense(1), squared loss, w⁰ given with distinct running "
        "statistics; α = 0.05, η = 3, s = 70 (|D_i^s| = 3, 2, 4, 2), p = 3 "
        "parameter tensors (out.bias, out.weight, bn1.bias: bn1.weight and "
        "fc1 take Θ), k = 2, threshold 0.01, at most 1 pass, so the start "
        "phase is one pass like the later ones (the start phase and its "
        "stopping rule are the worked vectors' subject).  ALA weighs "
        "parameters() only; Θ̂_i keeps the running statistics Θ_i last "
        "left (w⁰'s before it first trains), the weight-learning passes "
        "move none that are kept and (fedala.ala_mode = pfllib) normalise "
        "with each batch's statistics for a client that trained in the "
        "previous round, with its own running statistics, held fixed "
        "(evaluation mode), for one that did not (client 3 in round 1, "
        "client 1 in round 2, clients 0 and 3 in round 3); the local steps move Θ_i's (bn.running = "
        "update), and Θ's are the first participant's.",
        algorithm, BN_ROUNDS, flags, mutants,
        PAPER + "; " + OFFICIAL + BN_SOURCE, check,
        problem=(BN_MODEL, CLIENTS, BN_INIT), tol=BN_TOL)


# BN_ROUNDS with the outsiders' D_i^s (fedala.ala_clients = all): client
# 1's 2 samples in round 1; client 0's 3 and client 3's 2 in round 2;
# client 2's 4 in round 3
BN_ROUNDS_ALL = [dict(BN_ROUNDS[0])] + [
    dict(r, personal=r["personal"] + extra) for r, extra in zip(
        BN_ROUNDS[1:], [[[[0, 3]]],
                        [[[2, 4, 0]], [[1, 2]]],
                        [[[0, 5], [3, 1]]]])]


def bn_pfllib_run():
    algorithm = {"name": "fedala", "preset": "pfllib_run",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 3.0,
                                     "fedala.s": 70, "fedala.p": 3,
                                     "fedala.k": 2, "fedala.threshold": 0.01,
                                     "fedala.max_epochs": 1}}

    def check(spec, result, state):
        assert final_with(spec, **{"bn.aggregate": "average"}) != result[2]
        # every client outside the previous round runs in evaluation mode
        assert state["eval_passes"] == [(1, 3), (2, 1), (3, 0), (3, 3)], \
            state["eval_passes"]
        assert final_with(spec, **{"fedala.ala_mode": "train"}) != result[2]

    flags, mutants = subset("fedala-ala-clients", "bn-own-buffers",
                            "bn-global-buffers", "fedala-bn-ala-passes",
                            "fedala-ala-mode")
    # one pass per ALA: whether an outsider spends its start phase shows
    # in fedala/worked/partial-all, not here
    mutants["fedala-ala-clients"] = ["ala-clients-flip", "outsider-keeps"]
    return make(
        "fedala/layers/bn-pfllib-run", "layers-bn-pfllib-run.json",
        "FedALA on a layer list with batch normalisation as PFLlib's "
        "server runs it (preset pfllib_run: ALA on every client, "
        "bn.aggregate = parameters_only)",
        "The clients, model, w⁰ and hyperparameters of "
        "fedala/layers/bn-pfllib, its rounds with every client's D_i^s "
        "(the participants' lists, then the others' in id order).  A "
        "client outside the round runs ALA too: its Θ_i takes Θ̂_i, whose "
        "running statistics are its own, so they do not move until it "
        "trains; a client that did not train in the previous round "
        "(fedala.ala_mode = pfllib: evaluated since) runs its pass in "
        "evaluation mode, on those statistics; Θ's are the first "
        "participant's.",
        algorithm, BN_ROUNDS_ALL, flags, mutants,
        PAPER + "; " + OFFICIAL + "; " + PFLLIB_RUN + BN_SOURCE, check,
        problem=(BN_MODEL, CLIENTS, BN_INIT), tol=BN_TOL)


# client 2 alone in round 1 and back in round 2 (Θ = Θ_2: ALA returns);
# client 3 first in round 2, clients 0 and 1 back in round 3, each after a
# round without training: their first ALA (the start phase, fedala.start =
# own) runs in evaluation mode; s = 70, every batch two samples or more
BN_MODE_ROUNDS = [
    {"clients": [0, 1, 2],
     "batches": [[[0, 1], [2, 3]], [[1, 2], [0, 3]], [[4, 5], [0, 2]]]},
    {"clients": [2],
     "batches": [[[1, 3], [2, 5]]],
     "personal": [[[2, 3], [4, 5]]]},
    {"clients": [2, 3],
     "batches": [[[5, 1], [3, 0]], [[0, 2], [1, 2]]],
     "personal": [[[0, 1], [2, 3]], [[0, 1]]]},
    {"clients": [0, 1, 3],
     "batches": [[[2, 4], [1, 3]], [[2, 0], [1, 3]], [[1, 2], [0, 1]]],
     "personal": [[[0, 1, 4]], [[1, 2]], [[0, 2]]]},
]


def bn_ala_mode():
    algorithm = {"name": "fedala", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 2.5,
                                     "fedala.s": 70, "fedala.p": 0,
                                     "fedala.k": 2, "fedala.threshold": 0.005,
                                     "fedala.max_epochs": 5}}

    def check(spec, result, state):
        # every stop test's var / threshold² below ¼: a sample std (ddof
        # = 1, twice the variance for k = 2) or a halved threshold stops
        # the same passes, so the stop-rule bugs stay the worked vectors'
        # to catch and diagnose (first_caught.py, test_diagnose.py)
        assert all(m < 0.25 for m in state["margins"]), state["margins"]
        # client 3 in round 2, clients 0 and 1 in round 3 pass in
        # evaluation mode, each its start phase (3 passes); client 2's
        # start phase (round 1) and client 3's one pass (round 3) in
        # training mode; client 2 returns at once in round 2
        assert state["eval_passes"] == [(2, 3), (3, 0), (3, 1)], \
            state["eval_passes"]
        assert state["epochs"] == [3, 3, 3, 3, 1], state["epochs"]
        # the two modes give different runs
        other = final_with(spec, **{"fedala.ala_mode": "train"})
        assert max(abs(a - b) for x, y in zip(other, result[2])
                   for a, b in zip(x, y)) > 1e3 * BN_TOL["atol"]

    # p = 0 weighs every tensor: no range to get wrong (bn-pfllib's)
    flags, mutants = subset("fedala-ala-mode", "fedala-w-gradient",
                            "fedala-skip", "bn-own-buffers",
                            "fedala-bn-ala-passes", "fedala-start-phase")
    mutants["fedala-bn-ala-passes"] = ["ala-moves-buffers"]
    return make(
        "fedala/layers/bn-ala-mode", "layers-bn-ala-mode.json",
        "FedALA's weight-learning passes in the mode PFLlib leaves the "
        "model in (preset pfllib: fedala.ala_mode = pfllib), with partial "
        "participation and batch normalisation",
        "The clients, model and w⁰ of fedala/layers/bn-pfllib under the "
        "preset pfllib: α = 0.05, η = 2.5, s = 70, p = 0 (every parameter "
        "tensor weighed: fc1's, bn1's γ and β, out's, so the gradient "
        "reaches fc1 through the batch normalisation), k = 2, threshold "
        "0.005, at most "
        "5 passes.  PFLlib's server evaluates every client after "
        "send_models (eval_gap = 1) and only train() switches a model back, "
        "so a client that did not train in the previous round runs its "
        "passes in evaluation mode: each batch normalises with Θ_i's own "
        "running statistics, held fixed, the W step's gradient through the "
        "affine normalisation only, the recorded losses evaluation-mode "
        "losses.  Client 2 trains alone in round 1 (its start phase, "
        "training mode) and finds Θ = Θ_2 in round 2 (ALA returns); client "
        "3, first in round 2, and clients 0 and 1, back in round 3, run "
        "their start phases (3 passes each) in evaluation mode; client 3 "
        "makes one training-mode pass in round 3.  Under fedala.ala_mode = "
        "train the run differs.",
        algorithm, BN_MODE_ROUNDS, flags, mutants,
        PAPER + "; " + OFFICIAL + BN_SOURCE, check,
        problem=(BN_MODEL, CLIENTS, BN_INIT), tol=BN_TOL)


EVAL_GAP_SOURCE = ("; TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/"
                   "serverala.py:26-34 (send_models, evaluate() only when "
                   "i % eval_gap == 0, then train()), main.py:420 (-eg)")


def bn_eval_gap():
    algorithm = {"name": "fedala", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.05, "fedala.eta": 3.0,
                                     "fedala.s": 70, "fedala.p": 3,
                                     "fedala.k": 2, "fedala.threshold": 0.01,
                                     "fedala.max_epochs": 1,
                                     "fedala.eval_gap": 2}}

    def check(spec, result, state):
        # evaluations in rounds 0 and 2 only: client 1, trained in round 0
        # (after its evaluation) and idle in round 1, passes in training
        # mode in round 2, where eval_gap = 1 has it in evaluation mode
        # (fedala/layers/bn-pfllib: (2, 1) among its passes)
        assert state["eval_passes"] == [(1, 3), (3, 0), (3, 3)], \
            state["eval_passes"]
        assert final_with(spec, **{"fedala.ala_mode": "train"}) != result[2]

    flags, mutants = subset("fedala-eval-gap", "fedala-ala-mode",
                            "bn-own-buffers", "fedala-bn-ala-passes")
    return make(
        "fedala/layers/bn-eval-gap", "layers-bn-eval-gap.json",
        "FedALA on a layer list with batch normalisation, preset pfllib, "
        "PFLlib evaluating every second round (fedala.eval_gap = 2, its "
        "-eg 2)",
        "The model, clients, w⁰, rounds and hyperparameters of "
        "fedala/layers/bn-pfllib, with fedala.eval_gap = 2: PFLlib's "
        "server evaluates every client (model.eval()) after send_models in "
        "rounds 0 and 2 only, so a client's passes run in evaluation mode "
        "when its last training came before the last evaluation: client 3 "
        "in round 1 (never trained), clients 0 and 3 in round 3 (last "
        "trained in round 1, evaluated in round 2); client 1 in round 2 "
        "passes in training mode (it trained in round 0 after that round's "
        "evaluation, and round 1 evaluated no one), where eval_gap = 1 "
        "runs it in evaluation mode.",
        algorithm, BN_ROUNDS, flags, mutants,
        PAPER + "; " + OFFICIAL + BN_SOURCE + EVAL_GAP_SOURCE, check,
        problem=(BN_MODEL, CLIENTS, BN_INIT), tol=BN_TOL)


def main():
    pg.write_all(sys.argv, HERE, (paper_partial, p_tensors, sum_first,
                                  official, paper_alone, pfllib_alone,
                                  stop_boundary, all_partial, pfllib_run,
                                  pfllib_lr, bn_pfllib, bn_pfllib_run,
                                  bn_ala_mode, bn_eval_gap))


if __name__ == "__main__":
    main()
