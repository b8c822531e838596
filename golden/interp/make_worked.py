#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Model-interpolation golden vectors (seed 000 §2 and Exercise 14.7.2;
shared/spec notes §5.2), in exact rational arithmetic
(golden/pflref_exact_interp.py).

1. Notes §5.2(g): h = 4, w = 1: α = 0 → 1, 1/4 → 1.75, 1/2 → 2.5, 1 → 4.
   Set up with the notes' quadratic clients f_1 = ½(x − 4)², f_2 = ½(x + 2)²
   with n = (1, 3), η = 1, w⁰ = 0, fedavg.weights = uniform: one FedAvg
   round of one step sends each client to its minimiser, so w¹ = (4 − 2)/2
   = 1; the purely local models (one post step of η = 1 from w⁰) are
   h_1 = 4, h_2 = −2.  One vector per α (interp.alpha = fixed); α = 0 and
   α = 1 return the global and the local model.
2. per_client_grid with a validation split, linear model (d = 1, no bias,
   half_squared loss), G = 4, two clients, one FedAvg round and two post
   steps of η = 1/2 from w⁰ = 1/2.  Client 0's validation target is put
   where its validation loss ties exactly between α = 1/4 and α = 1/2 (the
   vertex of the parabola at 3/8), so the smaller α wins; its training set
   would pick α = 1 and its test set α = 3/4.  Every number is dyadic, so
   fp64 is exact.
3. Coincidence-free runs (golden/coincidences.py): linear d = 1, three
   clients (n = 3, 2, 4), two FedAvg rounds, one vector per fedavg.weights
   value: fixed α = 0.35; the grid G = 5 on the test set; the grid on the
   validation split (selection targets placed so every choice has a gap).
4. grid-bias-beyond-one: a bias, the default fedavg.weights (samples) with
   n = 3, 2, 4 and a partial round drawn as [2, 0], G = 4 on a validation
   split; client 1's validation loss still falls at α = 1, so one grid
   point too many (α = 5/4) would be chosen.
5. grid-blank-validation: item 2's run with client 0's validation split one
   blank input (x = 0, y = 0): every α scores 0 exactly in any arithmetic,
   so the tie rule alone picks α = 0 (a float32 check sees it too).

Every generator asserts the numbers the notes print before writing.

    /usr/bin/python3 golden/interp/make_worked.py [OUTDIR]
"""
import json
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px         # noqa: E402
import pflref_exact_interp as pi   # noqa: E402
import pflref_golden as pg         # noqa: E402

GENERATOR = "golden/interp/make_worked.py (exact fractions, pflref_exact_interp.py)"
TOL = {"atol": 1e-15, "rtol": 1e-14,
       "basis": "fp64 reference against exact rationals: every input, step "
                "size and grid point here is dyadic and every intermediate "
                "value has a short dyadic expansion, so the reference is in "
                "fact exact; the bound only allows for a last-bit difference "
                "in a candidate's evaluation order"}


def run(spec, bugs=frozenset()):
    return pi.replay(spec, frozenset(bugs))


def make(vid, fname, title, source, spec, flags, check, tol=None):
    tol = tol or TOL
    result = run(spec)
    check(*result)
    mutants = {f: pi.MUTANTS[f] for f in flags}
    # only the bugs of each class that this vector can expose
    for f in flags:
        mutants[f] = [b for b in mutants[f]
                      if pg.detects(pg.expected(*result), pg.expected(*run(spec, {b})),
                                    tol) is not None]
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs=frozenset(): run(spec, bugs),
                              lambda trace, w, v, alpha: (trace, w, v, alpha))
    _, w, v, alpha = result
    prov = pg.provenance("independent", source, GENERATOR,
                         {"w": w, "alpha": alpha,
                          **{f"h_{i}": h for i, h in enumerate(v)}})
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def notes(r, name, client=None):
    return [x["value"] for x in r.records if x["event"] == "note"
            and x["name"] == name and (client is None or x.get("client") == client)]


# ---------------------------------------------------------------- notes §5.2(g)

QUAD = {"kind": "quadratic", "d": 1}
QUAD_CLIENTS = [{"a": [1.0], "c": [4.0], "n": 1}, {"a": [1.0], "c": [-2.0], "n": 3}]
NOTES_V_BAR = {F(0): F(1), F(1, 4): F(7, 4), F(1, 2): F(5, 2), F(1): F(4)}


def notes_52g(alpha, label):
    spec = pg.given_spec(
        f"interpolation, notes §5.2(g): h = 4, w = 1, alpha = {alpha}", None,
        QUAD, QUAD_CLIENTS, {"kind": "zeros"},
        {"name": "interp",
         "hyperparameters": {"eta": 1.0, "alpha": float(alpha)},
         "switches": {"fedavg.weights": "uniform", "interp.alpha": "fixed"}},
        [{"clients": [0, 1], "batches": [[[0]], [[0]]]}],
        post=[[[0]], [[0]]])

    def check(trace, w, v, al):
        assert w == [F(1)] and v[0] == [F(4)] and v[1] == [F(-2)], (w, v)
        assert al == [alpha, alpha]
        vbar = notes(trace, "v_bar")
        assert vbar[0] == [NOTES_V_BAR[alpha]], vbar     # the notes' numbers
        assert vbar[1] == [alpha * -2 + (1 - alpha) * 1]
        if alpha == 0:
            assert vbar[0] == w and vbar[1] == w          # the global model
        if alpha == 1:
            assert vbar == v                              # the local models

    # α = 1/2 is symmetric (the swap leaves it unchanged)
    flags = (["interp-alpha-direction"] if alpha != F(1, 2) else []) + \
        ["aggregation-weights"]
    return make(f"interp/worked/notes-5.2g/alpha-{label}",
                f"worked-notes-5.2g-alpha-{label}.json",
                f"Interpolation, notes §5.2(g): h = 4, w = 1, alpha = {alpha} "
                f"gives {NOTES_V_BAR[alpha]}",
                f"{pg.NOTES} §5.2(g); seed 000 §2", spec, flags, check)


# ---------------------------------------------------------------- grid + validation

LIN = {"kind": "linear", "d": 1, "loss": "half_squared", "bias": False}


def grid_spec(y_val0):
    clients = [
        {"X": [[1.0], [2.0]], "y": [4.0, 7.0],
         "X_test": [[1.0]], "y_test": [2.85546875],
         "X_val": [[1.0]], "y_val": [y_val0]},
        {"X": [[1.0], [-1.0]], "y": [-2.0, 1.0],
         "X_test": [[1.0]], "y_test": [0.125],
         "X_val": [[1.0]], "y_val": [-0.625]},
    ]
    return pg.given_spec(
        "interpolation, per-client grid G = 4 selected on a validation split",
        "Linear d = 1, half_squared; one FedAvg round (two full-batch steps "
        "of eta = 1/2 per client, n-weighted), then each client's purely "
        "local model (two full-batch steps from w0 = 1/2); alpha_j = j/4 "
        "scored on X_val/y_val.  Client 0's validation loss ties exactly "
        "between alpha = 1/4 and 1/2; the smaller wins.",
        LIN, clients, {"kind": "given", "w": [0.5]},
        {"name": "interp",
         "hyperparameters": {"eta": 0.5, "interp.grid": 4},
         "switches": {"interp.alpha": "per_client_grid",
                      "interp.select": "validation"}},
        [{"clients": [0, 1], "batches": [[[0, 1], [0, 1]], [[0, 1], [0, 1]]]}],
        post=[[[0, 1], [0, 1]], [[0, 1], [0, 1]]])


def grid_validation():
    # First run with a placeholder target to learn w and h_0, then put
    # client 0's validation target at the vertex α* = 3/8.
    _, w, v, _ = run(grid_spec(0.0))
    y0 = w[0] + F(3, 8) * (v[0][0] - w[0])
    assert float(y0) == y0, "the tie target must be a double"
    spec = grid_spec(float(y0))

    def check(trace, w2, v2, al):
        assert (w2, v2) == (w, v)
        losses = [x[0] for x in notes(trace, "select_loss", 0)]
        assert losses[1] == losses[2] == min(losses), losses   # the tie
        assert al[0] == F(1, 4), al
        gaps = pi.grid_gaps(spec)
        assert gaps[1] > F(1, 100), gaps                       # client 1: clear
        # the wrong selection sets would choose otherwise
        assert run(spec, {"select-train"})[3][0] == 1
        assert run(spec, {"select-flip"})[3][0] == F(3, 4)
        assert run(spec, {"ties-larger"})[3][0] == F(1, 2)

    flags = ["interp-selection", "interp-alpha-direction", "initial-point",
             "local-step-count", "loss-scale"]
    return make("interp/worked/grid-validation-linear",
                "worked-grid-validation-linear.json",
                "Interpolation, per-client grid G = 4 on a validation split "
                "(linear model; an exact tie goes to the smaller alpha)",
                "seed 000 Exercise 14.7.2 (per-client alpha sweep); shared/spec "
                "README.md, interpolation row (best alpha on a validation "
                f"split); {pg.NOTES} §5.2", spec, flags, check)


# ---------------------------------------------------------------- coincidence-free
# golden/coincidences.py: η ≠ 1, α ∉ {0, ½, 1}, client sizes 3, 2, 4, two
# FedAvg rounds on minibatches that differ from step to step, every grid
# selection decided by a gap above 1e-3.

TOL_SPREAD = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two FedAvg rounds of at most two steps and two "
             "local steps per client, each a contraction (η x² < 1 for every "
             "sample, asserted), fewer than 30 roundings of terms below 10 per "
             "value, then one interpolation; every grid selection is decided "
             "by a loss gap above 1e-3 (asserted), far above rounding, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance."}

SPREAD_TRAIN = [
    {"X": [[1.15], [-0.85], [0.65]], "y": [2.35, -1.45, 0.95]},
    {"X": [[-1.35], [0.55]], "y": [1.85, -0.45]},
    {"X": [[0.45], [1.25], [-0.95], [0.85]], "y": [0.15, 1.65, -0.35, 0.55]},
]
# Selection sets: one sample each, its target placed so that the best α of
# the selection loss is the given one (validation, test), far from the
# midpoints of the grid j/5.
SPREAD_X_SEL = [(0.75, -1.05), (0.95, -0.65), (1.55, -1.45)]
SPREAD_ALPHA = [(0.22, 0.61), (0.79, 0.18), (0.41, 0.83)]


def spread_clients(w, h):
    out = []
    for c, (xv, xt), (av, at), hi in zip(SPREAD_TRAIN, SPREAD_X_SEL, SPREAD_ALPHA, h):
        def target(x, a):
            return round(x * float(w[0] + F(a) * (hi[0] - w[0])), 3)
        out.append(dict(c, X_val=[[xv]], y_val=[target(xv, av)],
                        X_test=[[xt]], y_test=[target(xt, at)]))
    return out


SPREAD_ROUNDS = [
    {"clients": [0, 2], "batches": [[[0, 1], [2]], [[0, 1], [2, 3]]]},
    {"clients": [1, 2], "batches": [[[0], [1]], [[2, 0], [3, 1]]]},
]
SPREAD_POST = [[[0, 2], [1]], [[1], [0]], [[3, 1], [0, 2]]]


def spread(name, weights, mode, select, eta, extra):
    hp = {"eta": eta, **extra}
    sw = {"fedavg.weights": weights, "interp.alpha": mode}
    if mode == "per_client_grid":
        sw["interp.select"] = select
    what = (f"fixed alpha = {extra.get('alpha')}" if mode == "fixed" else
            f"per-client grid G = {extra.get('interp.grid')} scored on the "
            f"{select} set")
    def make_spec(clients):
        return pg.given_spec(
        f"interpolation, fedavg.weights = {weights}, {what}, two rounds",
        "Linear d = 1, half_squared, three clients (n = 3, 2, 4), w0 = 0.35; "
        f"two FedAvg rounds (S = {{0, 2}}, {{1, 2}}, minibatches, eta = {eta}, "
        f"weights {weights}), then each client's purely local model (two "
        f"minibatch steps from w0); {what}.",
        LIN, clients, {"kind": "given", "w": [0.35]},
        {"name": "interp", "hyperparameters": hp, "switches": sw},
        SPREAD_ROUNDS, post=SPREAD_POST)
    # a first run (placeholder selection sets) gives w and h_i, which the
    # selection sets do not change; then the targets are placed
    _, w0, h0, _ = run(make_spec(spread_clients([F(0)], [[F(0)]] * 3)))
    spec = make_spec(spread_clients(w0, h0))

    def check(trace, w, v, al):
        e = F(eta)
        for c in SPREAD_TRAIN:
            assert all(e * F(x[0]) ** 2 < 1 for x in c["X"])
        if mode == "per_client_grid":
            gaps = pi.grid_gaps(spec)
            assert all(g > F(1, 1000) for g in gaps.values()), {i: float(g) for i, g in gaps.items()}
            # α strictly inside (0, 1) for some client, and the clients differ
            assert len(set(al)) > 1, al

    flags = ["interp-alpha-direction", "initial-point", "local-step-count",
             "loss-scale", "aggregation-weights"]
    if mode == "per_client_grid":
        flags.insert(0, "interp-selection")
    return make(f"interp/worked/{name}", f"worked-{name}.json",
                f"Interpolation, fedavg.weights = {weights}, {what}: two FedAvg "
                f"rounds on a linear model, eta = {eta}",
                f"seed 000 §2 and Exercise 14.7.2; {pg.NOTES} §5.2 and §1(c)",
                spec, flags, check, TOL_SPREAD)


def spread_fixed_samples():
    return spread("spread-fixed-samples", "samples", "fixed", None, 0.385,
                  {"alpha": 0.35})


def spread_grid_test_uniform():
    return spread("spread-grid-test-uniform", "uniform", "per_client_grid", "test",
                  0.365, {"interp.grid": 5})


def spread_grid_validation_keep_old():
    return spread("spread-grid-validation-keep-old", "all_keep_old",
                  "per_client_grid", "validation", 0.415, {"interp.grid": 5})


# ---------------------------------------------------------------- grid with a bias
# golden/CHANGES.md, 2026-11-25, "drawn order": the default fedavg.weights
# (samples) with unequal n and a partial round drawn as [2, 0]; a bias in
# every selection loss; client 1's selection loss still falling at α = 1,
# so a grid run one point too far (α = (G + 1)/G) would pick that point.

LIN_BIAS = {"kind": "linear", "d": 1, "loss": "half_squared", "bias": True}
TOL_BIAS = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two FedAvg rounds of at most three minibatch "
             "steps per client and two local steps per client, each a "
             "contraction (η(x² + 1) < 2 for every sample, asserted), fewer "
             "than 40 roundings of terms below 10 per value, then one "
             "interpolation and one loss per grid point; every grid selection "
             "is decided by a loss gap above 1e-3 (asserted), far above "
             "rounding, and every flagged bug moves some value by more than "
             "1e3 times the tolerance."}
BIAS_ROUNDS = [
    {"clients": [0, 1, 2], "drawn": [0, 1, 2],
     "batches": [[[0, 1], [2]], [[0], [1]], [[0, 1], [2, 3]]]},
    {"clients": [0, 2], "drawn": [2, 0],
     "batches": [[[2, 0], [1]], [[1, 2], [0], [2, 1]]]},
]
BIAS_POST = [[[0, 2], [1]], [[1], [0]], [[3, 1], [0, 2]]]
# (validation x, test x), (best α of the validation loss, of the test loss)
BIAS_X_SEL = [(-1.35, -1.05), (0.95, -0.65), (1.55, -1.45)]
BIAS_ALPHA = [(0.41, 0.61), (1.3, 0.18), (0.7, 0.83)]
BIAS_G = 4


def grid_bias_spec(w, h):
    clients = []
    for c, (xv, xt), (av, at), hi in zip(SPREAD_TRAIN, BIAS_X_SEL, BIAS_ALPHA, h):
        def target(x, a):        # ŷ of v̄(a) = w + a (h − w) at x, rounded
            vb = [wp + F(a) * (hp - wp) for wp, hp in zip(w, hi)]
            return round(float(F(x) * vb[0] + vb[1]), 3)
        clients.append(dict(c, X_val=[[xv]], y_val=[target(xv, av)],
                            X_test=[[xt]], y_test=[target(xt, at)]))
    return pg.given_spec(
        "interpolation with a bias, per-client grid G = 4 on a validation "
        "split, default weights, a round drawn as [2, 0]",
        "Linear d = 1 with a bias, half_squared, three clients (n = 3, 2, 4), "
        "w0 = (0.35, -0.2), eta = 0.415; two FedAvg rounds on minibatches "
        "with fedavg.weights at its default (samples): S = {0, 1, 2}, then "
        "S = {0, 2} drawn by the sampler as [2, 0] (batches[j] still "
        "belongs to clients[j]); then each client's purely local model (two "
        "minibatch steps from w0); alpha_j = j/4, j = 0..4, scored on "
        "X_val/y_val.  Client 1's validation loss is lowest at alpha = 1 "
        "and still falling there.",
        LIN_BIAS, clients, {"kind": "given", "w": [0.35, -0.2]},
        {"name": "interp",
         "hyperparameters": {"eta": 0.415, "interp.grid": BIAS_G},
         "switches": {"interp.alpha": "per_client_grid",
                      "interp.select": "validation"}},
        BIAS_ROUNDS, post=BIAS_POST)


def grid_bias_beyond_one():
    # a first run (placeholder selection sets) gives w and h_i, which the
    # selection sets do not change; then the targets are placed
    _, w, h, _ = run(grid_bias_spec([F(0), F(0)], [[F(0), F(0)]] * 3))
    spec = grid_bias_spec(w, h)

    def check(trace, w2, v, al):
        assert (w2, v) == (w, h)
        for c in SPREAD_TRAIN:
            assert all(F(0.415) * (F(x[0]) ** 2 + 1) < 2 for x in c["X"])
        assert w[1] != 0 and all(hi[1] != 0 for hi in h)   # the bias counts
        gaps = pi.grid_gaps(spec)
        assert all(g > F(1, 1000) for g in gaps.values()), gaps
        assert al[1] == 1 and 0 < al[0] < 1 and 0 < al[2] < 1 and al[0] != al[2], al
        # one grid point too far, α = (G + 1)/G, would win for client 1
        c1 = spec["problem"]["clients"][1]
        sel = pi._data(c1, "X_val", "y_val")
        beyond = pi.evaluate(LIN_BIAS, pi.mix(F(BIAS_G + 1, BIAS_G), h[1], w,
                                              frozenset()), sel)[0]
        losses = [x[0] for x in notes(trace, "select_loss", 1)]
        assert beyond < min(losses) - F(1, 1000), (beyond, losses)
        # the drawn order read where clients belongs moves the result
        bad = dict(spec, schedule=dict(spec["schedule"],
                                       rounds=px.misread_drawn(BIAS_ROUNDS)))
        assert pg.detects(pg.expected(trace, w, v, al), pg.expected(*run(bad)),
                          TOL_BIAS) is not None
        # the default weighting is samples: uniform weights would differ
        assert run(spec, {"weights=uniform"})[1] != w

    flags = ["interp-selection", "interp-alpha-direction", "initial-point",
             "local-step-count", "loss-scale", "aggregation-weights"]
    return make("interp/worked/grid-bias-beyond-one",
                "worked-grid-bias-beyond-one.json",
                "Interpolation with a bias: per-client grid G = 4 on a "
                "validation split whose loss still falls at alpha = 1; default "
                "weights, unequal n, a partial round drawn as [2, 0]",
                f"seed 000 §2 and Exercise 14.7.2; {pg.NOTES} §5.2 and §1(c); "
                "docs/formats.md (drawn: information only)",
                spec, flags, check, TOL_BIAS)


# ---------------------------------------------------------------- a tie in any arithmetic
# Client 0's validation split is one blank input, x = 0 with target 0: every
# v̄(α_j) predicts 0·v̄ = 0 there, so every grid point scores loss 0 exactly,
# in fp64, in float32 and in every Monte Carlo run of check
# --candidate-precision (its random rounding is relative, x(1 + uξ), and
# leaves a 0 at 0; docs/validate.md, "Candidate precision").  The tie rule
# alone decides: α_0 = 0, the global model.  grid-validation-linear's tie
# (the vertex between two grid points) is exact in fp64 only; rounding
# moves the vertex, so it shows nothing in float32.


def grid_blank_spec():
    spec = grid_spec(0.0)
    spec = json.loads(json.dumps(spec))
    c0 = spec["problem"]["clients"][0]
    c0["X_val"], c0["y_val"] = [[0.0]], [0.0]
    # a test target no grid point fits exactly (grid_spec's is v̄(3/4)'s
    # prediction: a test loss of exactly 0 there, whose rounding spread is
    # its own magnitude, would make the vector chaotic in float32)
    c0["y_test"] = [4.5]
    spec["description"] = (
        "Linear d = 1, half_squared; one FedAvg round (two full-batch steps "
        "of eta = 1/2 per client, n-weighted), then each client's purely "
        "local model (two full-batch steps from w0 = 1/2); alpha_j = j/4 "
        "scored on X_val/y_val.  Client 0's validation split is one blank "
        "input (x = 0, y = 0), so every alpha_j scores 0 exactly and the "
        "smallest, alpha = 0 (the global model), wins.")
    spec["name"] = ("interpolation, per-client grid G = 4 on a validation "
                    "split, one of them blank")
    return spec


def grid_blank_validation():
    spec = grid_blank_spec()

    def check(trace, w, v, al):
        losses = [x[0] for x in notes(trace, "select_loss", 0)]
        assert losses == [0] * 5, losses                       # the tie
        assert al[0] == 0 and v[0] != w, (al, v, w)
        assert notes(trace, "v_bar", 0)[0] == w                # the global model
        gaps = pi.grid_gaps(spec)
        assert gaps[1] > F(1, 100), gaps                       # client 1: clear
        assert run(spec, {"ties-larger"})[3][0] == 1
        tests = [x[0] for x in notes(trace, "test_loss", 0)]
        assert min(tests) > F(1, 100), tests

    flags = ["interp-selection", "interp-alpha-direction", "initial-point",
             "local-step-count"]
    return make("interp/worked/grid-blank-validation",
                "worked-grid-blank-validation.json",
                "Interpolation, per-client grid G = 4 on a validation split "
                "that is one blank input: every alpha ties at loss 0 in any "
                "arithmetic, the smallest wins",
                "seed 000 Exercise 14.7.2 (per-client alpha sweep); shared/spec "
                "README.md, interpolation row (best alpha on a validation "
                f"split); {pg.NOTES} §5.2; docs/algorithms/interp.md (ties "
                "to the smaller alpha)", spec, flags, check)


MAKERS = [lambda: notes_52g(F(0), "0"), lambda: notes_52g(F(1, 4), "1-4"),
          lambda: notes_52g(F(1, 2), "1-2"), lambda: notes_52g(F(1), "1"),
          grid_validation, spread_fixed_samples, spread_grid_test_uniform,
          spread_grid_validation_keep_old, grid_bias_beyond_one,
          grid_blank_validation]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
