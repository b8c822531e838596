#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ditto golden vectors on linear models with minibatches, in exact
rational arithmetic.

Ditto (Li et al., ICML 2021, Alg. 1; shared/spec notes §3(c), §3(f)) with
FedAvg as the global solver: each selected device k sets w_k ← w^t and
takes, per scheduled batch b, a personal step
    v_k ← v_k − η (∇F_k(v_k; b) + λ ∂R(v_k − ref))
and a global step w_k ← w_k − η ∇F_k(w_k; b): interleaved (personal then
global on each batch, the TF code) or every personal step first (PFLlib).
R = ½‖·‖² (gradient v − ref, the paper) or ‖·‖ (gradient
(v − ref)/‖v − ref‖, 0 at v = ref: the authors' PyTorch code, notes §3(f)
item 3); ref = w^t (round_start, the paper) or the global copy w_k as it
stands when the personal step runs (moving, the PyTorch code).  v_k
persists (v⁰ = w⁰); w^{t+1} = Σ_{S_t} (n_k / Σ_{S_t} n_j) w_k.

With ref = moving the two orders differ: interleaved, the personal step on
batch q sees w_k after q global steps; personal_first, every personal step
sees w_k = w^t.  Minibatches: each client's samples cut once in index
order into batches of B = 2 (ragged last kept), handed out cyclically by a
per-client iterator that persists across rounds; s = 2 per round.

Vectors (file = id without "ditto/", '/' → '-'):
  ditto/worked/linear-moving-interleaved    d = 2 with bias, squared loss,
      prox_ref = moving, interleaved
  ditto/worked/linear-moving-personal-first the same run, personal_first
  ditto/worked/norm-d1                      d = 1, ditto.prox = norm (the
      PyTorch code's regulariser) against w^t; in one dimension
      ‖v − ref‖ = |v − ref| is rational, so the run is exact
  ditto/worked/linear-official-uniform   preset official (the simple mean),
      η = 0.115, λ = 0.65, on the data of linear-moving-interleaved
  ditto/worked/linear-pfllib-drawn  preset pfllib (personal steps first,
      n_k-weighted), given minibatches, round 0 drawn as [2, 0]
  ditto/worked/linear-paper      the paper's reading (no preset, no switch:
      interleaved, squared, w^t reference, n_k-weighted), η = 0.135,
      λ = 0.45, on the data of linear-moving-interleaved: the worked
      example of the algorithm page

Inputs are the exact values of their doubles; expected values are
float(Fraction).  For each flag the generator runs the bugs of that class
(pflref_exact.py) and asserts that each moves an expected number far
outside the tolerance.

    /usr/bin/python3 golden/ditto/make_linear.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

NOTES = pg.NOTES
GENERATOR = "golden/ditto/make_linear.py (exact fractions)"
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: per device and round 2 personal and 2 global "
             "steps, each a contraction (η(trace of the batch Hessian + λ) < "
             "2, asserted by the generator) adding fewer than 20 roundings of "
             "terms below 10 in magnitude, then one weighted sum, over two "
             "rounds, so the error stays far below 1e-12; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
TOL_NORM = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: d = 1, so the norm prox's gradient λ(v − ref)/"
             "‖v − ref‖ is λ·sign(v − ref) up to 3 roundings (sqrt of the "
             "rounded square is |v − ref| exactly in binary64); the "
             "generator asserts |v − ref| > 1e-3 wherever it is not exactly 0 "
             "(exact 0 only where v and ref are the same stored number), so "
             "the sign cannot flip under rounding; 2 personal and 2 global "
             "steps per device and round, each η·(batch curvature) < 2, "
             "fewer than 20 roundings of terms below 10, so the error stays "
             "far below 1e-12; every flagged bug moves some value by more "
             "than 1e3 times the tolerance.",
}
B = 2
STEPS = 2


class Batches:
    """Each client's batches of B in index order, cut once, handed out
    cyclically; the position persists across rounds."""

    def __init__(self, pr, bugs):
        self.one = [px.split_batches(pr.n(i), B, 1) for i in range(len(pr.clients))]
        self.pos = [0] * len(pr.clients)
        self.s = STEPS + (1 if "epochs-plus-one" in bugs else 0) \
            - (1 if "epochs-minus-one" in bugs else 0)

    def take(self, i):
        out = []
        for _ in range(self.s):
            out.append(list(self.one[i][self.pos[i] % len(self.one[i])]))
            self.pos[i] += 1
        return out


def run_ditto(model, clients, init, algorithm, rounds, bugs=px.NO_BUGS):
    hp, sw = px.settings(algorithm)
    pr = px.Problem(model, clients)
    w0 = px.initial(init, pr.P, bugs)
    w, v, trace, sched = list(w0), [list(w0) for _ in pr.clients], pg.Trace(), []
    it = Batches(pr, bugs)
    for t, sel in enumerate(rounds):
        plan = [(k, it.take(k)) for k in sel]
        sched.append(plan)
        w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs)
    return pr, w, v, trace, sched


def linear_vector(vid, fname, title, description, flags, mutants, model,
                  clients, init, algorithm, rounds, tol, check=None):
    hp, _ = px.settings(algorithm)

    def run(bugs=px.NO_BUGS):
        return run_ditto(model, clients, init, algorithm, rounds, bugs)

    result = run()
    pr, w, v, trace, sched = result
    for plan in sched:
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, hp["eta"], hp["lambda"])
    if check is not None:
        check(pr, w, v, trace, sched)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda pr, w, v, trace, sched: (trace, w, v))
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched))
    prov = pg.provenance(
        "independent",
        f"{NOTES} §3(c) (one round), §3(a) (v persists), §3(f) items 1 and "
        "3 (order, moving reference, norm regulariser); Li et al., ICML "
        "2021, Alg. 1",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


MODEL2 = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS2 = [
    {"X": [[0.527, -0.843], [-1.214, 0.366], [0.908, 1.072], [-0.315, -0.694]],
     "y": [0.961, -1.387, 0.452, -0.218]},
    {"X": [[1.136, -0.257], [-0.642, 0.918], [0.183, -1.165]],
     "y": [1.244, -0.571, 0.339]},
    {"X": [[-0.476, 0.731], [0.852, 0.219], [-1.093, -0.884], [0.314, 1.247],
           [0.695, -0.402]],
     "y": [-0.823, 0.617, -1.158, 0.942, 0.276]},
]
INIT2 = {"kind": "given", "w": [0.2, -0.3, 0.1]}
ROUNDS2 = [[0, 1], [1, 2]]


def moving(order):
    return {"name": "ditto", "hyperparameters": {"eta": 0.1, "lambda": 0.5},
            "switches": {"ditto.order": order, "ditto.prox_ref": "moving"}}


def final_with(algorithm, switch, value):
    alg = dict(algorithm, switches=dict(algorithm["switches"], **{switch: value}))
    _, w, v, _, _ = run_ditto(MODEL2, CLIENTS2, INIT2, alg, ROUNDS2)
    return w, v


def moving_interleaved():
    algorithm = moving("interleaved_shared_batch")

    def check(pr, w, v, trace, sched):
        # the vector separates the readings: order, and reference
        assert final_with(algorithm, "ditto.order", "personal_first") != (w, v)
        assert final_with(algorithm, "ditto.prox_ref", "round_start") != (w, v)
        # v_0 sits out round 1 and keeps its round-0 value
        kept = [r["value"] for r in trace.records if r["event"] == "client_end"
                and r["name"] == "v" and r["round"] == 0 and r["client"] == 0]
        assert kept == [v[0]] and v[0] != px.initial(INIT2, pr.P)

    flags = ["ditto-moving-ref", "prox-sign", "stale-personal-state",
             "unsampled-client", "aggregation-weights", "batch-mean",
             "stale-global", "local-step-count"]
    mutants = {"ditto-moving-ref": ["ditto-ref-round-start", "ditto-order-flip"],
               "prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "unsampled-client": ["train-all"],
               "aggregation-weights": ["uniform-weights"],
               "batch-mean": ["batch-sum"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["epochs-plus-one", "epochs-minus-one"]}
    return linear_vector(
        "ditto/worked/linear-moving-interleaved", "worked-linear-moving-interleaved.json",
        "Ditto with ditto.prox_ref = moving, interleaved: the personal step "
        "on batch q pulls toward the global copy after q global steps",
        "Three clients (n = 4, 3, 5), ŷ = x·w + b, squared loss, w⁰ = v⁰ = "
        "(0.2, -0.3, 0.1), η = 0.1, λ = 0.5, weights n_k/Σ n_j, ditto.order = "
        "interleaved_shared_batch, ditto.prox_ref = moving.  S_0 = {0, 1}, "
        "S_1 = {1, 2}; each device takes the next s = 2 batches of B = 2 of "
        "its persistent iterator (client 1 in round 1 wraps: {0,1} {2} "
        "again); v_0 keeps its round-0 value, v_2 starts at w⁰ in round 1.",
        flags, mutants, MODEL2, CLIENTS2, INIT2, algorithm, ROUNDS2, TOL, check)


def moving_personal_first():
    algorithm = moving("personal_first")

    def check(pr, w, v, trace, sched):
        # personal_first with a moving reference is the round-start reading
        assert final_with(algorithm, "ditto.prox_ref", "round_start") == (w, v)
        assert final_with(algorithm, "ditto.order", "interleaved_shared_batch") != (w, v)

    flags = ["ditto-moving-ref", "prox-sign", "stale-personal-state"]
    mutants = {"ditto-moving-ref": ["ditto-order-flip"],
               "prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "train-all"]}
    return linear_vector(
        "ditto/worked/linear-moving-personal-first",
        "worked-linear-moving-personal-first.json",
        "Ditto with ditto.prox_ref = moving, personal_first: every personal "
        "step sees the global copy still at w^t",
        "The problem, schedule and hyperparameters of "
        "ditto/worked/linear-moving-interleaved with ditto.order = "
        "personal_first: both personal steps run before the global pass, so "
        "the moving reference is w^t throughout (the same numbers as "
        "prox_ref = round_start) and the result differs from the interleaved "
        "order.",
        flags, mutants, MODEL2, CLIENTS2, INIT2, algorithm, ROUNDS2, TOL, check)


def norm_d1():
    model = {"kind": "linear", "d": 1, "loss": "half_squared", "bias": False}
    clients = [
        {"X": [[1.25], [-0.75], [0.5]], "y": [2.125, -1.375, 1.5]},
        {"X": [[0.875], [1.5]], "y": [-0.625, -1.75]},
        {"X": [[-1.125], [0.625], [1.375], [-0.5]], "y": [0.375, 1.875, 2.25, -1.25]},
    ]
    init = {"kind": "given", "w": [0.25]}
    algorithm = {"name": "ditto", "hyperparameters": {"eta": 0.25, "lambda": 0.3},
                 "switches": {"ditto.prox": "norm"}}
    rounds = [[0, 1], [0, 2]]

    def check(pr, w, v, trace, sched):
        # |v − ref| at every personal step: exactly 0 (where v and ref are
        # copies of the same number: w⁰, at round 0's first step) or far from
        # 0, so no rounding can flip the sign.  (With prox_ref = moving, v
        # would equal w_k at every step of round 0 in exact arithmetic, a
        # tie that rounding in a candidate could break; w^t avoids it.)
        zero = 0
        for t, plan in enumerate(sched):
            for k, steps in plan:
                def seq(name):
                    return [r["value"][0] for r in trace.records
                            if r["round"] == t and r.get("client") == k
                            and r["name"] == name
                            and r["event"] in ("client_begin", "step")]
                vs, ref = seq("v"), seq("w_local")[0]       # ref = w^t
                for q in range(len(steps)):
                    diff = vs[q] - ref
                    assert diff == 0 or abs(diff) > F(1, 1000), (t, k, q, diff)
                    zero += diff == 0
        assert zero == 2, zero      # round 0, first step of clients 0 and 1
        alg = dict(algorithm, switches=dict(algorithm["switches"], **{"ditto.prox": "squared"}))
        assert run_ditto(model, clients, init, alg, rounds)[1:3] != (w, v)

    flags = ["prox-form", "prox-sign", "ditto-moving-ref", "aggregation-weights",
             "stale-personal-state"]
    mutants = {"prox-form": ["prox-form-flip"],
               "prox-sign": ["prox-plus"],
               "ditto-moving-ref": ["ditto-ref-moving"],
               "aggregation-weights": ["uniform-weights"],
               "stale-personal-state": ["reset-personal", "personal-from-global"]}
    return linear_vector(
        "ditto/worked/norm-d1", "worked-norm-d1.json",
        "Ditto with the authors' PyTorch regulariser λ‖v − w‖ (not squared), "
        "d = 1: gradient λ·sign(v − w^t)",
        "Three clients (n = 3, 2, 4), one feature, ŷ = x·w, half_squared "
        "loss, w⁰ = v⁰ = 0.25, η = 0.25, λ = 0.3, ditto.prox = norm "
        "(gradient λ(v − ref)/‖v − ref‖, 0 at v = ref), ref = w^t "
        "(round_start), interleaved, weights n_k/Σ n_j.  S_0 = {0, 1}, "
        "S_1 = {0, 2}, s = 2 batches of B = 2 from each device's persistent "
        "iterator.  In round 0 the first personal step has v = ref = w⁰ "
        "(regulariser gradient 0); everywhere else |v − w^t| > 1e-3.",
        flags, mutants, model, clients, init, algorithm, rounds, TOL_NORM, check)


def round_start_flags(weights_mutant):
    """The flags of a run against w^t on the clients of ROUNDS2, and each
    flag's mutants; weights_mutant is the weighting the vector's own is
    not (a uniform mean's vector is caught by n_k weights, and the other
    way round)."""
    flags = ["ditto-moving-ref", "prox-sign", "stale-personal-state",
             "unsampled-client", "aggregation-weights", "batch-mean",
             "stale-global", "local-step-count"]
    mutants = {"ditto-moving-ref": ["ditto-ref-moving"],
               "prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "unsampled-client": ["train-all"],
               "aggregation-weights": [weights_mutant],
               "batch-mean": ["batch-sum"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["epochs-plus-one", "epochs-minus-one"]}
    return flags, mutants


def official_uniform():
    """Preset official (interleaved, squared, round-start reference, the
    simple mean) with η ≠ λ, neither 1 (golden/coincidences.py)."""
    algorithm = {"name": "ditto", "preset": "official",
                 "hyperparameters": {"eta": 0.115, "lambda": 0.65}}

    def check(pr, w, v, trace, sched):
        alg = dict(algorithm, switches={"ditto.weights": "samples"})
        assert run_ditto(MODEL2, CLIENTS2, INIT2, alg, ROUNDS2)[1:3] != (w, v)
        alg = dict(algorithm, switches={"ditto.prox_ref": "moving"})
        assert run_ditto(MODEL2, CLIENTS2, INIT2, alg, ROUNDS2)[1:3] != (w, v)

    flags, mutants = round_start_flags("samples-weights")
    return linear_vector(
        "ditto/worked/linear-official-uniform", "worked-linear-official-uniform.json",
        "Ditto, preset official (the TensorFlow code: interleaved, w^t "
        "reference, simple mean of the global copies), η = 0.115, λ = 0.65",
        "The clients (n = 4, 3, 5), model, initial point, schedule and batch "
        "iterators of ditto/worked/linear-moving-interleaved; η = 0.115, "
        "λ = 0.65, preset official (ditto.order = interleaved_shared_batch, "
        "ditto.prox = squared, ditto.prox_ref = round_start, ditto.weights = "
        "uniform).  S_0 = {0, 1}, S_1 = {1, 2}.",
        flags, mutants, MODEL2, CLIENTS2, INIT2, algorithm, ROUNDS2, TOL, check)


def paper():
    """The paper's reading, every switch at its default (Li et al., ICML
    2021, Alg. 1: the personal step on each batch after the global one's
    batch, R = ½‖v − w^t‖², w^{t+1} weighted n_k / Σ_{S_t} n_j), with η ≠ λ,
    neither 1 (golden/coincidences.py); the algorithm page's worked example
    (tools/site/build.py takes the vector closest to the paper)."""
    algorithm = {"name": "ditto", "hyperparameters": {"eta": 0.135, "lambda": 0.45}}

    def check(pr, w, v, trace, sched):
        # each switch's other value moves the run, but the order (against
        # w^t the personal and global steps read nothing of each other)
        # (ditto.prox = norm is not exact in d = 3: norm-d1 decides it)
        for sw, val in (("ditto.weights", "uniform"), ("ditto.prox_ref", "moving")):
            alg = dict(algorithm, switches={sw: val})
            assert run_ditto(MODEL2, CLIENTS2, INIT2, alg, ROUNDS2)[1:3] != (w, v), sw
        alg = dict(algorithm, switches={"ditto.order": "personal_first"})
        assert run_ditto(MODEL2, CLIENTS2, INIT2, alg, ROUNDS2)[1:3] == (w, v)

    flags, mutants = round_start_flags("uniform-weights")
    return linear_vector(
        "ditto/worked/linear-paper", "worked-linear-paper.json",
        "Ditto as the paper reads (no preset, every switch at its default), "
        "η = 0.135, λ = 0.45",
        "The clients (n = 4, 3, 5), model, initial point, schedule and batch "
        "iterators of ditto/worked/linear-moving-interleaved; η = 0.135, "
        "λ = 0.45, the defaults: ditto.order = interleaved_shared_batch (per "
        "batch the personal step, then the global step), ditto.prox = squared "
        "(λ(v − ref)), ditto.prox_ref = round_start (ref = w^t), "
        "ditto.weights = samples (n_k / Σ_{S_t} n_j).  S_0 = {0, 1}, "
        "S_1 = {1, 2}; v_0 keeps its round-0 value through round 1.",
        flags, mutants, MODEL2, CLIENTS2, INIT2, algorithm, ROUNDS2, TOL, check)


def pfllib_drawn():
    """Preset pfllib (PFLlib: personal steps first, squared, w^t reference,
    n_k-weighted mean) with η ≠ λ, neither 1, and round 0 drawn as [2, 0]
    (golden/CHANGES.md, 2026-11-25, "drawn order").  The batches are given
    explicitly (not the persistent iterators above) so that every batch of
    the permuted round indexes the smaller client too."""
    vid = "ditto/worked/linear-pfllib-drawn"
    # ditto.batches = shared: both passes on the given batches (the preset's
    # own lists are linear-pfllib-separate's)
    algorithm = {"name": "ditto", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.095, "lambda": 0.45},
                 "switches": {"ditto.batches": "shared"}}
    hp, sw = px.settings(algorithm)
    assert sw["ditto.weights"] == "samples" and sw["ditto.order"] == "personal_first"
    rounds = px.with_drawn([
        {"clients": [0, 2], "batches": [[[0, 1], [3, 2]], [[3, 1], [0, 2]]]},
        {"clients": [1, 2], "batches": [[[0, 2], [1]], [[4, 0], [2, 3]]]},
    ], [[2, 0], [1, 2]])

    def run(bugs=px.NO_BUGS, rnds=rounds):
        pr = px.Problem(MODEL2, CLIENTS2)
        w0 = px.initial(INIT2, pr.P, bugs)
        w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
        for t, plan in enumerate(px.plans_of(rnds)):
            w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    for plan in px.plans_of(rounds):
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, hp["eta"], hp["lambda"])
    flags = ["prox-sign", "stale-personal-state", "unsampled-client",
             "aggregation-weights", "batch-mean", "stale-global", "loss-scale"]
    mutants = {"prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "unsampled-client": ["train-all"],
               "aggregation-weights": ["uniform-weights"],
               "batch-mean": ["batch-sum"],
               "stale-global": ["restart-w0"],
               "loss-scale": ["loss-x2"]}

    def final(pr, w, v, trace):
        return (trace, w, v)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    misread = pg.expected(*final(*run(rnds=px.misread_drawn(rounds))))
    assert pg.detects(exp, misread, TOL) is not None
    title = ("Ditto, preset pfllib (personal steps first, w^t reference, "
             "n_k-weighted mean), η = 0.095, λ = 0.45, a round drawn as [2, 0]")
    spec = pg.given_spec(
        title,
        "The clients (n = 4, 3, 5), model and initial point of "
        "ditto/worked/linear-moving-interleaved; η = 0.095, λ = 0.45, preset "
        "pfllib (ditto.order = personal_first, ditto.prox = squared, "
        "ditto.prox_ref = round_start, ditto.weights = samples) with "
        "ditto.batches = shared (both passes on the given batches).  S_0 = {0, 2} "
        "drawn by the sampler as [2, 0] (batches[j] still belongs to "
        "clients[j]), S_1 = {1, 2}; two given minibatches per device and "
        "round; v_2 carries over from round 0 into round 1.",
        MODEL2, CLIENTS2, INIT2, algorithm, rounds)
    prov = pg.provenance(
        "independent",
        f"{NOTES} §3(c), §3(a) (v persists), §3(f) (PFLlib: ptrain() first, "
        "n_k-weighted); Li et al., ICML 2021, Alg. 1; docs/formats.md "
        "(drawn: information only)",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return "worked-linear-pfllib-drawn.json", pg.vector(vid, title, prov, flags,
                                                         spec, TOL, exp)


# round 0 drawn as [2, 0]: personal[j], like batches[j], belongs to
# clients[j] (every personal batch of that round indexes client 0 too)
SEPARATE_ROUNDS = px.with_drawn([
    {"clients": [0, 2], "batches": [[[2, 0], [1, 3]], [[4, 1], [3, 0]]],
     "personal": [[[1, 3], [0, 2], [3]], [[0, 2], [3, 1], [1]]]},
    {"clients": [1, 2], "batches": [[[1, 0], [2]], [[2, 3], [0, 4]]],
     "personal": [[[2, 1], [0], [1, 2]], [[1, 4], [0, 3], [2]]]},
], [[2, 0], [1, 2]])


def pfllib_separate():
    """Preset pfllib as PFLlib runs it: ptrain() over its own loader for
    -pls epochs, then train() over another for -ls (ditto.batches =
    separate): each participant's personal steps take their own given
    list (three minibatches), the global steps the round's batches (two),
    so the passes differ in count and in batches.  η ≠ λ, neither 1."""
    vid = "ditto/worked/linear-pfllib-separate"
    algorithm = {"name": "ditto", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.085, "lambda": 0.55}}
    hp, sw = px.settings(algorithm)
    assert sw["ditto.batches"] == "separate" and sw["ditto.order"] == "personal_first"
    rounds = SEPARATE_ROUNDS

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(MODEL2, CLIENTS2)
        w0 = px.initial(INIT2, pr.P, bugs)
        w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
        for t, r in enumerate(rounds):
            plan = list(zip(r["clients"], r["batches"]))
            own = dict(zip(r["clients"], r["personal"]))
            w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs,
                                  own)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    for r in rounds:
        for k, steps, own in zip(r["clients"], r["batches"], r["personal"]):
            px.assert_contractive(pr, k, steps + own, hp["eta"], hp["lambda"])
            assert len(own) != len(steps)
    flags = ["ditto-personal-batches", "prox-sign", "stale-personal-state",
             "aggregation-weights", "stale-global"]
    mutants = {"ditto-personal-batches": ["personal-on-global-batches"],
               "prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "aggregation-weights": ["uniform-weights"],
               "stale-global": ["restart-w0"]}

    def final(pr, w, v, trace):
        return (trace, w, v)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    title = ("Ditto as PFLlib runs it (preset pfllib): the personal pass on "
             "its own batches (3 steps), the global pass on the round's (2)")
    spec = pg.given_spec(
        title,
        "The clients (n = 4, 3, 5), model and initial point of "
        "ditto/worked/linear-moving-interleaved; η = 0.085, λ = 0.55, preset "
        "pfllib (ditto.order = personal_first, ditto.prox = squared, "
        "ditto.prox_ref = round_start, ditto.weights = samples, "
        "ditto.batches = separate).  S_0 = {0, 2}, S_1 = {1, 2}; each "
        "participant first takes 3 personal steps v ← v − η (∇F_k(v; b) + "
        "λ(v − w^t)) on its rounds[t].personal list, then 2 global steps "
        "from w^t on its rounds[t].batches; server weights n_k / Σ n_j.",
        MODEL2, CLIENTS2, INIT2, algorithm, rounds)
    prov = pg.provenance(
        "independent",
        f"{NOTES} §3(c), §3(f); shared/spec/notes-pfllib-as-run.md §2.3 "
        "(Ditto: ptrain() over -pls epochs, then train() over -ls); "
        "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientditto.py; "
        "Li et al., ICML 2021, Alg. 1",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return "worked-linear-pfllib-separate.json", pg.vector(
        vid, title, prov, flags, spec, TOL, exp)


def pfllib_decay():
    """Preset pfllib with PFLlib's -ld (lr.schedule = exponential,
    lr.gamma = 0.7): clientditto.py's two optimizers (personal and global)
    each have an ExponentialLR stepped at the end of the client's train(),
    so both passes of client k take η γ^(the rounds k trained before)
    (lr.count = trainings, the preset's).  On SEPARATE_ROUNDS (S_0 = {0, 2},
    S_1 = {1, 2}): client 2 trains round 1 with η γ, client 1, first
    sampled in round 1, with η."""
    vid = "ditto/worked/linear-pfllib-decay"
    algorithm = {"name": "ditto", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.095, "lambda": 0.45,
                                     "lr.gamma": 0.7},
                 "switches": {"lr.schedule": "exponential"}}
    hp, sw = px.settings(algorithm)
    assert sw["lr.count"] == "trainings" and sw["ditto.batches"] == "separate"
    rounds = SEPARATE_ROUNDS

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(MODEL2, CLIENTS2)
        w0 = px.initial(INIT2, pr.P, bugs)
        w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
        lr_counts = {}
        for t, r in enumerate(rounds):
            plan = list(zip(r["clients"], r["batches"]))
            own = dict(zip(r["clients"], r["personal"]))
            w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs,
                                  own, lr_counts)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    for r in rounds:
        for k, steps, own in zip(r["clients"], r["batches"], r["personal"]):
            px.assert_contractive(pr, k, steps + own, hp["eta"], hp["lambda"])
    flags = ["lr-schedule", "lr-count", "ditto-personal-batches", "prox-sign",
             "stale-personal-state", "aggregation-weights", "stale-global"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted"],
               "lr-count": ["lr-per-round"],
               "ditto-personal-batches": ["personal-on-global-batches"],
               "prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "aggregation-weights": ["uniform-weights"],
               "stale-global": ["restart-w0"]}

    def final(pr, w, v, trace):
        return (trace, w, v)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    title = ("Ditto as PFLlib runs it with -ld: both passes decay with the "
             "client's own trainings")
    spec = pg.given_spec(
        title,
        "The clients (n = 4, 3, 5), model, initial point and schedule of "
        "ditto/worked/linear-pfllib-separate (personal lists of 3 "
        "minibatches, global lists of 2; S_0 = {0, 2}, S_1 = {1, 2}); η = "
        "0.095, λ = 0.45, preset pfllib (lr.count = trainings) with "
        "lr.schedule = exponential, lr.gamma = 0.7: client k's personal and "
        "global steps take 0.095 · 0.7^(the rounds k trained before).",
        MODEL2, CLIENTS2, INIT2, algorithm, rounds)
    prov = pg.provenance(
        "independent",
        f"{NOTES} §3(c), §3(f); shared/spec/notes-pfllib-as-run.md §2.2 "
        "(-ld: each client's ExponentialLR stepped at the end of its "
        "train()) and §2.3 (Ditto); TsingZ0/PFLlib d832e76f6a23 "
        "system/flcore/clients/clientditto.py, clientbase.py; "
        "ref/engine/lr.c; Li et al., ICML 2021, Alg. 1",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return "worked-linear-pfllib-decay.json", pg.vector(
        vid, title, prov, flags, spec, TOL, exp)


def official_unread_personal():
    """Preset official (the TF code: interleaved on the shared batches,
    simple mean) on the schedule of linear-pfllib-separate: its personal
    lists are not read under ditto.batches = shared, so one schedule serves
    both readings and tells them apart (the run equals the same schedule
    without the lists, asserted)."""
    vid = "ditto/worked/linear-official-unread-personal"
    algorithm = {"name": "ditto", "preset": "official",
                 "hyperparameters": {"eta": 0.085, "lambda": 0.55}}
    hp, sw = px.settings(algorithm)
    assert sw["ditto.batches"] == "shared" and sw["ditto.weights"] == "uniform"

    def run(bugs=px.NO_BUGS, with_lists=True):
        pr = px.Problem(MODEL2, CLIENTS2)
        w0 = px.initial(INIT2, pr.P, bugs)
        w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
        for t, r in enumerate(SEPARATE_ROUNDS):
            plan = list(zip(r["clients"], r["batches"]))
            own = dict(zip(r["clients"], r["personal"])) if with_lists else None
            w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs,
                                  own)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    assert (w, v) == run(with_lists=False)[1:3]
    for r in SEPARATE_ROUNDS:
        for k, steps in zip(r["clients"], r["batches"]):
            px.assert_contractive(pr, k, steps, hp["eta"], hp["lambda"])
    flags = ["prox-sign", "stale-personal-state", "aggregation-weights"]
    mutants = {"prox-sign": ["prox-plus"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "aggregation-weights": ["samples-weights"]}

    def final(pr, w, v, trace):
        return (trace, w, v)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    title = ("Ditto, preset official, on a schedule with personal batch "
             "lists it does not read (ditto.batches = shared)")
    spec = pg.given_spec(
        title,
        "The problem, η = 0.085, λ = 0.55 and schedule of "
        "ditto/worked/linear-pfllib-separate under preset official "
        "(interleaved: per batch a personal then a global step on the "
        "round's batches; ditto.batches = shared, so rounds[t].personal is "
        "not read; simple mean).",
        MODEL2, CLIENTS2, INIT2, algorithm, SEPARATE_ROUNDS)
    prov = pg.provenance(
        "independent",
        f"{NOTES} §3(c) (the TF code); Li et al., ICML 2021, Alg. 1; "
        "ref/algorithms/ditto.c (ditto.batches = shared reads no personal "
        "lists)",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return "worked-linear-official-unread-personal.json", pg.vector(
        vid, title, prov, flags, spec, TOL, exp)


def main():
    pg.write_all(sys.argv, HERE,
                 (moving_interleaved, moving_personal_first, norm_d1,
                  official_uniform, pfllib_drawn, pfllib_separate,
                  official_unread_personal, pfllib_decay, paper))


if __name__ == "__main__":
    main()
