#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""APFL golden vectors (Deng, Kamani, Mahdavi 2020, arXiv 2003.13461,
Alg. 1; shared/spec notes §6), in exact rational arithmetic
(golden/pflref_exact_apfl.py).

The notes' worked example §6(g): f_1 = ½(x − 4)², f_2 = ½(x + 2)²
(quadratic, deterministic), α₀ = 1/2, η = 1/2, τ = 2 (two batches a round),
both clients, w⁰ = v⁰ = 0, η_α = 1/10 for the adaptive run:

  notes-6g-fixed     fixed α, paper order, two rounds: client 1's v 0 → 1
                     → 1.625, w_1 = 3; w¹ = 0.75; mixtures with the local
                     w_i (2.3125, −1.15625), with the new global (1.1875,
                     −0.03125); round 2: w_i = (3.1875, −1.3125), w² =
                     0.9375, v = (2.740234375, −1.563476562)
  notes-6g-adaptive  the paper's α rule: α¹ = (0.25, 0.4375), mixture with
                     the local w_i (2.65625, −1.19921875); α² =
                     (0.4478363186, 0.8172119328)
  notes-6g-fedtorch  FedTorch's order (the mixture with the new w_i) and
                     its alpha_update: round 1 v = (0.75, −0.4783642822),
                     α = (0 [clipped], 0.260625), w¹ = 0.75; a second round
                     continues from there

Vectors where the switches show (the notes print no numbers for them; the
exact run is the truth, and the generator asserts the switch matters):

  mlp-output-adaptive      ŷ = W2 (W1 x + b1) + b2 (mlp, identity
                           activation, squared loss: nonlinear in its
                           parameters), apfl.mix = output, adaptive paper
                           rule; three clients of 3, 4 and 2 samples,
                           U⁰ = {0, 1}, U¹ = {1, 2}, minibatches of 2
  mlp-parameter-adaptive   the same run with apfl.mix = parameter (the
                           paper): every record differs from the output run
  mlp-fedtorch             the whole FedTorch configuration on the mlp:
                           output mixing, the new w_i, FedTorch's α rule
  linear-minibatch-adaptive  linear model with bias, squared loss, three
                           clients (n = 5, 3, 4), partial participation,
                           ragged minibatches of 2, given w⁰, adaptive paper
                           rule with an η_α large enough that the projection
                           to [0, 1] binds (asserted)
  linear-mix-new           a linear model, fixed α = 0.3, apfl.mix_uses_w =
                           new and apfl.mix = output; the generator asserts
                           that output mixing equals parameter mixing here
                           exactly (the model is linear in its parameters)

Every generator asserts the notes' numbers (exactly where they are dyadic,
else to the printed digits), and for every flag that each listed bug moves
an expected number by more than 1e3 times the tolerance.

    /usr/bin/python3 golden/apfl/make_worked.py [OUTDIR]
"""
import math
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_apfl as pa   # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = pg.NOTES
PAPER = "Deng, Kamani, Mahdavi 2020, arXiv 2003.13461, Alg. 1"
GENERATOR = "golden/apfl/make_worked.py (exact fractions, pflref_exact_apfl.py)"
TOL_QUAD = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two rounds of two steps on one-dimensional "
             "quadratics (every step a contraction, η a ≤ 1/2), each step a "
             "few roundings of terms below 10 in magnitude (none at all for "
             "the dyadic fixed-α run); the α steps (η_α = the double 0.1, "
             "FedTorch's 0.02) add a few more; the error stays below 1e-14 "
             "and every flagged bug moves some value by more than 1e3 times "
             "the tolerance.",
}
TOL_DATA = {
    "atol": 1e-12,
    "rtol": 1e-11,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two rounds of at most three minibatch steps "
             "per client, each a few BLAS products and sums of fewer than "
             "20 terms below 10 in magnitude, with η small enough that the "
             "runs stay bounded (every value below 10, asserted), and α "
             "updates whose unprojected values stay at least 1e-6 away from "
             "the bounds 0 and 1 (asserted), so rounding cannot flip a "
             "projection; the accumulated error stays below 1e-13, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}

QUAD = {"kind": "quadratic", "d": 1}
QUAD_CLIENTS = [{"a": [1.0], "c": [4.0]}, {"a": [1.0], "c": [-2.0]}]
BOTH = [[0, 1], [0, 1]]

MLP = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "loss": "squared",
       "activation": "identity", "bias": True, "hidden_bias": True}
MLP_CLIENTS = [
    {"X": [[0.5, -1.25], [1.5, 0.25], [-0.75, 0.875]], "y": [1.125, 2.25, -0.5]},
    {"X": [[1.0, 0.5], [-0.5, 1.5], [0.25, -0.75], [1.25, 1.0]],
     "y": [0.75, -1.0, 0.5, 1.5]},
    {"X": [[-1.0, 0.375], [0.625, -0.5]], "y": [-0.25, 0.875]},
]
# W1 (2×2), b1 (2), W2 (1×2), b2 (1)
MLP_INIT = {"kind": "given",
            "w": [0.375, -0.25, 0.125, 0.5, 0.0625, -0.125, 0.625, -0.375, 0.25]}

LIN = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
LIN_CLIENTS = [
    {"X": [[1.0, 0.5], [0.25, -1.5], [-0.75, 1.0], [1.5, 0.25], [0.5, -0.5]],
     "y": [2.385, -0.716, 1.25, 2.0, 0.5]},
    {"X": [[-1.0, 0.75], [0.5, 1.25], [1.25, -0.25]], "y": [-1.5, 0.875, 1.75]},
    {"X": [[0.625, 0.5], [-0.5, -1.0], [1.0, 1.0], [0.25, 0.75]],
     "y": [0.5, -1.25, 1.125, 0.25]},
]
LIN_INIT = {"kind": "given", "w": [0.25, -0.5, 0.125]}


def batches_of(n, B, first, count):
    """count batches of B from the per-client stream 0..n−1 cut once in
    index order (ragged last batch kept), starting at batch `first`."""
    cut = [list(range(i, min(i + B, n))) for i in range(0, n, B)]
    return [cut[(first + q) % len(cut)] for q in range(count)]


def close(x, y, digits=10):
    """x (exact) agrees with the notes' value y, printed to `digits`
    significant digits (half a unit of the last printed digit, with a
    little room for the tie the notes round)."""
    if y == 0:
        return x == 0
    e = math.floor(math.log10(abs(y)))
    return abs(float(x) - y) <= 0.51 * 10 ** (e - digits + 1)


def records(trace, event, name, rnd=None, client=None):
    return [r["value"] for r in trace.records if r["event"] == event
            and r["name"] == name and (rnd is None or r.get("round") == rnd)
            and (client is None or r.get("client") == client)]


def run(spec, bugs=frozenset(), unclipped=None):
    return pa.replay(spec, frozenset(bugs), unclipped)


def make(name, title, description, model, clients, init, algorithm, rounds,
         flags, mutants, check, tol, source):
    vid = f"apfl/worked/{name}"
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)
    unclipped = []
    result = run(spec, unclipped=unclipped)
    check(spec, *result)
    # rounding-safety of the projection: no α update lands near 0 or 1
    for x in unclipped:
        assert x == 0 or x == 1 or (abs(x) > F(1, 10**6) and abs(x - 1) > F(1, 10**6)), \
            (vid, float(x))
    trace = result[0]
    for r in trace.records:
        assert all(abs(x) < 10 for x in r["value"]), (vid, r)
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs=frozenset(): run(spec, bugs),
                              lambda tr, w, v, a: (tr, w, v, a))
    prov = pg.provenance("independent", source, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


def quad_rounds(k_rounds):
    return [{"clients": [0, 1], "batches": [[[0], [0]], [[0], [0]]]}
            for _ in range(k_rounds)]


# ---------------------------------------------------------------- notes §6(g)

def notes_fixed():
    algorithm = {"name": "apfl", "hyperparameters": {"eta": 0.5, "alpha": 0.5},
                 "switches": {}}

    def check(spec, trace, w, v, alpha):
        v0 = records(trace, "step", "v", 0, 0)
        assert v0 == [[F(1)], [F(13, 8)]], v0
        assert records(trace, "step", "w_local", 0, 0) == [[F(2)], [F(3)]]
        assert records(trace, "client_end", "w_local", 0) == [[F(3)], [F(-3, 2)]]
        assert records(trace, "client_end", "v", 0) == [[F(13, 8)], [F(-13, 16)]]
        assert records(trace, "server", "w") == [[F(3, 4)], [F(15, 16)]]
        # mixtures with the local w_i (the note) and with the new global
        assert records(trace, "note", "v_bar", 0) == [[F(37, 16)], [F(-37, 32)]]
        wg = records(trace, "server", "w", 0)[0][0]
        mixes = [F(1, 2) * vi[0] + F(1, 2) * wg
                 for vi in records(trace, "client_end", "v", 0)]
        assert mixes == [F(19, 16), F(-1, 32)], mixes      # 1.1875, −0.03125
        assert records(trace, "client_end", "w_local", 1) == [[F(51, 16)], [F(-21, 16)]]
        assert w == [F(15, 16)] and v[0] == [F(2806, 1024)], (w, v)
        assert close(v[1][0], -1.563476562) and v[1][0] == F(-1601, 1024)
        assert alpha == [F(1, 2)] * 2

    flags = ["apfl-v-scale", "apfl-mix-uses-w", "stale-personal-state",
             "stale-global", "local-step-count", "loss-scale"]
    mutants = {"apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["steps-plus-one", "steps-minus-one"],
               "loss-scale": ["loss-x2"]}
    return make("notes-6g-fixed",
                "APFL notes §6(g), fixed α = 1/2: w² = 0.9375, v = (2.740234375, "
                "−1.563476562)",
                "f_1 = ½(x − 4)², f_2 = ½(x + 2)², α = 1/2, η = 1/2, τ = 2, both "
                "clients, two rounds, paper order.",
                QUAD, QUAD_CLIENTS, {"kind": "zeros"}, algorithm, quad_rounds(2),
                flags, mutants, check, TOL_QUAD,
                f"{NOTES} §6(g) (fixed alpha); {PAPER}")


def notes_adaptive():
    algorithm = {"name": "apfl",
                 "hyperparameters": {"eta": 0.5, "alpha": 0.5, "eta_alpha": 0.1},
                 "switches": {"apfl.alpha": "adaptive"}}

    def check(spec, trace, w, v, alpha):
        a0 = records(trace, "note", "alpha", 0, 0)
        # step 1 leaves α unchanged (v = w at the start)
        assert a0[0] == [F(1, 2)], a0
        assert close(a0[1][0], 0.25)
        a1 = records(trace, "note", "alpha", 0, 1)
        assert a1[0] == [F(1, 2)] and close(a1[1][0], 0.4375)
        assert records(trace, "client_end", "v", 0) == [[F(13, 8)], [F(-13, 16)]]
        assert records(trace, "server", "w", 0) == [[F(3, 4)]]
        vb = records(trace, "note", "v_bar", 0)
        assert close(vb[0][0], 2.65625) and close(vb[1][0], -1.19921875), vb
        assert close(alpha[0], 0.4478363186) and close(alpha[1], 0.8172119328), alpha

    flags = ["apfl-alpha-update", "apfl-v-scale", "apfl-mix-uses-w",
             "stale-personal-state"]
    mutants = {"apfl-alpha-update": ["alpha-new-iterates", "alpha-sign",
                                     "alpha-rule-flip"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "stale-personal-state": ["reset-personal", "alpha-reset"]}
    return make("notes-6g-adaptive",
                "APFL notes §6(g), adaptive α (paper rule): α² = (0.4478363186, "
                "0.8172119328)",
                "The notes' example with apfl.alpha = adaptive and η_α = 0.1: "
                "α¹ = (0.25, 0.4375), α² = (0.4478363186, 0.8172119328).",
                QUAD, QUAD_CLIENTS, {"kind": "zeros"}, algorithm, quad_rounds(2),
                flags, mutants, check, TOL_QUAD,
                f"{NOTES} §6(g) (adaptive alpha, paper order); {PAPER}")


def notes_fedtorch():
    algorithm = {"name": "apfl",
                 "hyperparameters": {"eta": 0.5, "alpha": 0.5},
                 "switches": {"apfl.alpha": "adaptive",
                              "apfl.mix_uses_w": "new",
                              "apfl.alpha_rule": "fedtorch"}}

    def check(spec, trace, w, v, alpha):
        v1 = records(trace, "client_end", "v", 0)
        assert v1[0] == [F(3, 4)] and close(v1[1][0], -0.4783642822), v1
        a = [records(trace, "note", "alpha", 0, i)[-1][0] for i in (0, 1)]
        assert a[0] == 0 and close(a[1], 0.260625), a
        assert records(trace, "server", "w", 0) == [[F(3, 4)]]
        # FedTorch's rule moves α at the first step only
        for i in (0, 1):
            al = records(trace, "note", "alpha", None, i)
            assert al[0] == al[1] and al[2] == al[3], al
        # α_1 was clipped: the unprojected value is −0.4425
        raw = []
        run(spec, unclipped=raw)
        assert close(raw[0], -0.4425), raw

    flags = ["apfl-alpha-update", "apfl-mix-uses-w", "apfl-v-scale"]
    mutants = {"apfl-alpha-update": ["alpha-no-projection", "alpha-rule-flip",
                                     "alpha-sign"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "apfl-v-scale": ["v-no-alpha"]}
    return make("notes-6g-fedtorch",
                "APFL notes §6(g), FedTorch order and alpha rule: v¹ = (0.75, "
                "−0.4783642822), α¹ = (0, 0.260625)",
                "The notes' example with apfl.mix_uses_w = new and apfl.alpha_rule "
                "= fedtorch (α moves at the first step of each round, clipped to "
                "[0, 1]; step η), two rounds.",
                QUAD, QUAD_CLIENTS, {"kind": "zeros"}, algorithm, quad_rounds(2),
                flags, mutants, check, TOL_QUAD,
                f"{NOTES} §6(g) (FedTorch order with its alpha rule) and §6(f) "
                "item 3; MLOPTPSU/FedTorch ab8068dbc968 alpha_update")


# ---------------------------------------------------------------- the mlp

def mlp_rounds():
    """U⁰ = {0, 1}, U¹ = {1, 2}; batches of 2 from per-client streams that
    persist across rounds, two batches per round (client 1: three)."""
    return [{"clients": [0, 1], "batches": [batches_of(3, 2, 0, 2),
                                            batches_of(4, 2, 0, 3)]},
            {"clients": [1, 2], "batches": [batches_of(4, 2, 3, 2),
                                            batches_of(2, 2, 0, 2)]}]


def mlp_algorithm(mix, extra=None):
    sw = {"apfl.alpha": "adaptive", "apfl.mix": mix}
    sw.update(extra or {})
    hp = {"eta": 0.125, "alpha": 0.375}
    if sw.get("apfl.alpha_rule") != "fedtorch":
        hp["eta_alpha"] = 0.25
    return {"name": "apfl", "hyperparameters": hp, "switches": sw}


def differs(a, b):
    """Every step record of two runs differs (after the first client's first
    v step, which is equal when v = w_i)."""
    return [x["value"] for x in a.records] != [x["value"] for x in b.records]


def mlp_output():
    algorithm = mlp_algorithm("output")

    def check(spec, trace, w, v, alpha):
        other = dict(spec, algorithm=mlp_algorithm("parameter"))
        t2, w2, v2, a2 = run(other)
        assert differs(trace, t2) and v != v2 and alpha != a2

    flags = ["apfl-mix", "apfl-alpha-update", "apfl-v-scale", "apfl-mix-uses-w",
             "aggregation-weights", "batch-mean", "stale-personal-state"]
    mutants = {"apfl-mix": ["mix-flip"],
               "apfl-alpha-update": ["alpha-new-iterates", "alpha-sign",
                                     "alpha-rule-flip"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "aggregation-weights": ["samples-weights"],
               "batch-mean": ["batch-sum"],
               "stale-personal-state": ["reset-personal", "alpha-reset"]}
    return make("mlp-output-adaptive",
                "APFL on an mlp (identity activation, squared loss) with output "
                "mixing and the paper's α rule",
                "ŷ = W2 (W1 x + b1) + b2; the loss of α v(x) + (1 − α) w_i(x); "
                "v's gradient α Jᵥᵀ ∂ℓ/∂ŷ, ∂/∂α the batch mean of "
                "(v(x) − w_i(x)) ∂ℓ/∂ŷ; three clients, U⁰ = {0, 1}, U¹ = {1, 2}, "
                "minibatches of 2.",
                MLP, MLP_CLIENTS, MLP_INIT, algorithm, mlp_rounds(),
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(c), §6(f) item 1 (FedTorch's output mixing); {PAPER}")


def mlp_parameter():
    algorithm = mlp_algorithm("parameter")

    def check(spec, trace, w, v, alpha):
        other = dict(spec, algorithm=mlp_algorithm("output"))
        t2, _, v2, _ = run(other)
        assert differs(trace, t2) and v != v2

    flags = ["apfl-mix", "apfl-alpha-update", "apfl-v-scale", "apfl-mix-uses-w",
             "aggregation-weights"]
    mutants = {"apfl-mix": ["mix-flip"],
               "apfl-alpha-update": ["alpha-new-iterates", "alpha-sign",
                                     "alpha-rule-flip"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "aggregation-weights": ["samples-weights"]}
    return make("mlp-parameter-adaptive",
                "APFL on an mlp (identity activation, squared loss) with "
                "parameter mixing (the paper) and the paper's α rule",
                "The run of apfl/worked/mlp-output-adaptive with apfl.mix = "
                "parameter: v̄ = α v + (1 − α) w_i is one model.",
                MLP, MLP_CLIENTS, MLP_INIT, algorithm, mlp_rounds(),
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(c); {PAPER}")


def mlp_fedtorch():
    extra = {"apfl.mix_uses_w": "new", "apfl.alpha_rule": "fedtorch"}
    algorithm = mlp_algorithm("output", extra)

    def check(spec, trace, w, v, alpha):
        for i in (0, 1, 2):
            al = records(trace, "note", "alpha", None, i)
            assert al, i
        # the rule moved α at some first step
        assert any(a != F(3, 8) for a in alpha), alpha

    flags = ["apfl-mix", "apfl-mix-uses-w", "apfl-alpha-update", "apfl-v-scale"]
    mutants = {"apfl-mix": ["mix-flip"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "apfl-alpha-update": ["alpha-rule-flip", "alpha-sign"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"]}
    return make("mlp-fedtorch",
                "APFL on an mlp with FedTorch's choices: output mixing, the new "
                "w_i in the mixture, its alpha_update",
                "apfl.mix = output, apfl.mix_uses_w = new, apfl.alpha = adaptive, "
                "apfl.alpha_rule = fedtorch (α moves at the first step of a round "
                "with step η); the data and schedule of apfl/worked/"
                "mlp-output-adaptive.",
                MLP, MLP_CLIENTS, MLP_INIT, algorithm, mlp_rounds(),
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(f) items 1-3; MLOPTPSU/FedTorch ab8068dbc968 "
                "(train_and_validate_federated_apfl, inference_personal, "
                "alpha_update); {PAPER}")


# ---------------------------------------------------------------- linear

def lin_rounds():
    """U⁰ = {0, 2}, U¹ = {0, 1}: client 1 sits out round 0, client 2 round
    1; batches of 2 (ragged last kept) from persistent streams."""
    return [{"clients": [0, 2], "batches": [batches_of(5, 2, 0, 3),
                                            batches_of(4, 2, 0, 2)]},
            {"clients": [0, 1], "batches": [batches_of(5, 2, 3, 3),
                                            batches_of(3, 2, 0, 2)]}]


def linear_adaptive():
    algorithm = {"name": "apfl",
                 "hyperparameters": {"eta": 0.1, "alpha": 0.75, "eta_alpha": 4.0},
                 "switches": {"apfl.alpha": "adaptive"}}

    def check(spec, trace, w, v, alpha):
        raw = []
        run(spec, unclipped=raw)
        assert any(x < 0 or x > 1 for x in raw), [float(x) for x in raw]
        # client 1 sat out round 0: its v and α are untouched until round 1
        assert records(trace, "client_begin", "v", 1, 1) == [pg.exact_vec(LIN_INIT["w"])]

    flags = ["apfl-alpha-update", "apfl-v-scale", "apfl-mix-uses-w",
             "aggregation-weights", "unsampled-client", "stale-personal-state",
             "stale-global", "batch-mean", "loss-scale", "initial-point",
             "local-step-count"]
    mutants = {"apfl-alpha-update": ["alpha-no-projection", "alpha-new-iterates",
                                     "alpha-sign"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "aggregation-weights": ["samples-weights"],
               "unsampled-client": ["train-all"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "alpha-reset"],
               "stale-global": ["restart-w0"],
               "batch-mean": ["batch-sum"],
               "loss-scale": ["loss-x2"],
               "initial-point": ["init-zeros"],
               "local-step-count": ["steps-plus-one", "steps-minus-one"]}
    return make("linear-minibatch-adaptive",
                "APFL on a linear model with minibatches, partial participation "
                "and a binding projection of α",
                "ŷ = x·w + b, squared loss, three clients (n = 5, 3, 4), "
                "U⁰ = {0, 2}, U¹ = {0, 1}, ragged minibatches of 2, w⁰ given, "
                "α = 0.75, η = 0.1, η_α = 4 (the projection to [0, 1] binds).",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, lin_rounds(),
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(c); {PAPER}")


def linear_mix_new():
    sw = {"apfl.mix": "output", "apfl.mix_uses_w": "new"}
    algorithm = {"name": "apfl", "hyperparameters": {"eta": 0.1, "alpha": 0.3},
                 "switches": sw}

    def check(spec, trace, w, v, alpha):
        other = dict(spec, algorithm=dict(algorithm, switches=dict(
            sw, **{"apfl.mix": "parameter"})))
        t2, w2, v2, _ = run(other)
        # linear in the parameters: output mixing = parameter mixing exactly
        assert t2.records == trace.records and w2 == w and v2 == v

    flags = ["apfl-mix-uses-w", "apfl-v-scale", "aggregation-weights"]
    mutants = {"apfl-mix-uses-w": ["mix-w-flip"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "aggregation-weights": ["samples-weights"]}
    return make("linear-mix-new",
                "APFL on a linear model, fixed α = 0.3, output mixing with the new "
                "w_i (equal to parameter mixing on this model)",
                "apfl.mix = output, apfl.mix_uses_w = new; the data and schedule "
                "of apfl/worked/linear-minibatch-adaptive.",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, lin_rounds(),
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(f) items 1-2; {PAPER}")


def linear_default_drawn():
    """The paper's adaptive rule with η_α unset (η_α = η, the paper's box),
    α₀ ≠ η, and rounds whose drawn order differs from the ascending
    clients (batches[j] is clients[j]'s).  Every batch list uses indices
    0-2 only, valid on every client, so pairing by the drawn order changes
    numbers instead of failing."""
    algorithm = {"name": "apfl", "hyperparameters": {"eta": 0.15, "alpha": 0.7},
                 "switches": {"apfl.alpha": "adaptive"}}
    rounds = [{"clients": [0, 2], "drawn": [2, 0],
               "batches": [[[0, 1], [2], [1, 2]], [[1, 2], [0, 2]]]},
              {"clients": [0, 1, 2], "drawn": [1, 2, 0],
               "batches": [[[2, 0], [1]], [[0], [1, 2], [0, 2]], [[0, 1], [2, 1]]]}]

    def check(spec, trace, w, v, alpha):
        # η_α unset reads η: the run equals the one with η_α = η written out
        hp = dict(algorithm["hyperparameters"], eta_alpha=0.15)
        same = run(dict(spec, algorithm=dict(algorithm, hyperparameters=hp)))
        assert same[0].records == trace.records and same[3] == alpha
        # and differs from η_α = α₀ (the default read from the wrong key)
        hp = dict(algorithm["hyperparameters"], eta_alpha=0.7)
        other = run(dict(spec, algorithm=dict(algorithm, hyperparameters=hp)))
        assert other[3] != alpha
        for r in rounds:
            assert r["drawn"] != r["clients"] and sorted(r["drawn"]) == r["clients"]
            assert max(max(b) for bs in r["batches"] for b in bs) < 3

    flags = ["apfl-alpha-update", "apfl-v-scale", "apfl-mix-uses-w",
             "aggregation-weights", "unsampled-client", "stale-personal-state",
             "stale-global", "schedule-drawn-order"]
    mutants = {"apfl-alpha-update": ["alpha-new-iterates", "alpha-sign",
                                     "alpha-rule-flip"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "aggregation-weights": ["samples-weights"],
               "unsampled-client": ["train-all"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "alpha-reset"],
               "stale-global": ["restart-w0"],
               "schedule-drawn-order": ["drawn-batches"]}
    return make("linear-default-eta-alpha-drawn",
                "APFL, adaptive α by the paper's rule with η_α unset (= η), "
                "drawn order unlike the clients",
                "ŷ = x·w + b, squared loss, three clients (n = 5, 3, 4), w⁰ given, "
                "α = 0.7, η = 0.15, eta_alpha not given (η_α = η); U⁰ = {0, 2} "
                "drawn 2, 0; U¹ = {0, 1, 2} drawn 1, 2, 0; batches[j] belongs to "
                "clients[j] (ascending), not to drawn[j].",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, rounds,
                flags, mutants, check, TOL_DATA,
                f"{NOTES} §6(c); {PAPER} (the α step with η_t); "
                "docs/algorithms/apfl.md (eta_alpha unset: η); docs/formats.md "
                "(schedule: drawn is information only)")


def linear_pfllib():
    """The pfllib preset (apfl.variant = pfllib, apfl.weights = samples,
    apfl.alpha = adaptive) on the linear data: partial participation and
    unequal n_i, so the n_i weights show; two rounds, so the overwritten v_i
    is what round 1 starts from.  η_α = 0.35 is given (PFLlib steps α with
    η; pflref takes η_α when it is set) so that no two step sizes are
    equal."""
    algorithm = {"name": "apfl", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.1, "alpha": 0.6,
                                     "eta_alpha": 0.35}}

    def check(spec, trace, w, v, alpha):
        # round 0's client 0 ends with v_0 = (1 - α) w_0 + α v_0 (the last
        # step's own-loss v), which round 1 starts from
        steps_v = records(trace, "step", "v", 0, 0)
        w_end = records(trace, "client_end", "w_local", 0, 0)[0]
        a = records(trace, "note", "alpha", 0, 0)[-1][0]
        mixed = [(1 - a) * q + a * p for p, q in zip(steps_v[-1], w_end)]
        assert records(trace, "client_end", "v", 0, 0) == [mixed]
        assert records(trace, "client_begin", "v", 1, 0) == [mixed]
        # no v_bar note; the global is the n_i-weighted FedAvg mean
        assert not records(trace, "note", "v_bar")
        ends = {i: records(trace, "client_end", "w_local", 0, i)[0] for i in (0, 2)}
        want = [(5 * p + 4 * q) / 9 for p, q in zip(ends[0], ends[2])]
        assert records(trace, "server", "w", 0) == [want]
        # α moves at every step, not only the first
        al = records(trace, "note", "alpha", 0, 0)
        assert len(set(x[0] for x in al)) == len(al), al

    flags = ["apfl-pfllib", "aggregation-weights", "stale-personal-state",
             "unsampled-client", "stale-global", "local-step-count"]
    mutants = {"apfl-pfllib": ["pfllib-mixture-v", "pfllib-no-decay",
                               "pfllib-no-overwrite", "pfllib-overwrite-swap",
                               "pfllib-alpha-old-iterates"],
               "aggregation-weights": ["uniform-weights"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "alpha-reset"],
               "unsampled-client": ["train-all"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["steps-plus-one", "steps-minus-one"]}
    return make("linear-pfllib",
                "APFL as PFLlib runs it (preset pfllib): own-loss v, α with "
                "+0.02 α at every step, v overwritten by the mixture, n_i weights",
                "ŷ = x·w + b, squared loss, three clients (n = 5, 3, 4), "
                "U⁰ = {0, 2}, U¹ = {0, 1}, ragged minibatches of 2, w⁰ given, "
                "α = 0.6, η = 0.1, η_α = 0.35, preset pfllib.",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, lin_rounds(),
                flags, mutants, check, TOL_DATA,
                "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientapfl.py "
                "(train(), alpha_update) and servers/serverbase.py "
                "(receive_models: n_i / sum_U n_j), as shared/spec/"
                "notes-pfllib-as-run.md §2.3 writes them down; " + PAPER)


def linear_pfllib_decay():
    """The pfllib preset with PFLlib's -ld (lr.schedule = exponential,
    lr.gamma = 0.75, unlike α = 0.6): each client's schedulers step at the end of its own
    train() (lr.count = trainings), so client 0 trains round 1 with η γ and
    client 1, first sampled in round 1, with η; the α step keeps η_α = 0.35
    undecayed (apfl.alpha_lr = constant: clientapfl.py alpha_update reads
    self.learning_rate, which no scheduler touches), while w and v step
    with the decayed η."""
    algorithm = {"name": "apfl", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.1, "alpha": 0.6,
                                     "eta_alpha": 0.35, "lr.gamma": 0.75},
                 "switches": {"lr.schedule": "exponential"}}

    def check(spec, trace, w, v, alpha):
        # round 1, client 0 (its second train()): w's first step is
        # w − η γ ∇f(w; ξ) from the global w¹
        sw = pa.settings(spec["algorithm"])[3]
        assert sw["apfl.alpha_lr"] == "constant"
        assert sw["lr.count"] == "trainings"
        pr = pa.px.Problem(spec["model"], spec["problem"]["clients"])
        w1 = records(trace, "server", "w", 0)[0]
        batch = spec["schedule"]["rounds"][1]["batches"][0][0]
        g = pr.grad(0, w1, batch)
        step = [p - pa.exact(0.1) * pa.exact(0.75) * q for p, q in zip(w1, g)]
        assert records(trace, "step", "w_local", 1, 0)[0] == step
        # client 1's first train() (round 1) takes the undecayed η
        w1b = records(trace, "client_begin", "w_local", 1, 1)[0]
        batch1 = spec["schedule"]["rounds"][1]["batches"][1][0]
        g1 = pr.grad(1, w1b, batch1)
        assert records(trace, "step", "w_local", 1, 1)[0] == \
            [p - pa.exact(0.1) * q for p, q in zip(w1b, g1)]
        # the α step is undecayed: flipping apfl.alpha_lr moves α
        _, _, _, a_flip = run(spec, {"alpha-lr-flip"})
        assert a_flip[0] != alpha[0]

    flags = ["lr-schedule", "lr-count", "apfl-pfllib", "aggregation-weights",
             "stale-personal-state", "stale-global"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted", "alpha-lr-flip"],
               "lr-count": ["lr-per-round"],
               "apfl-pfllib": ["pfllib-mixture-v", "pfllib-no-decay",
                               "pfllib-no-overwrite", "pfllib-overwrite-swap",
                               "pfllib-alpha-old-iterates"],
               "aggregation-weights": ["uniform-weights"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "alpha-reset"],
               "stale-global": ["restart-w0"]}
    return make("linear-pfllib-decay",
                "APFL as PFLlib runs it with -ld: w and v decay per client "
                "training, the α step keeps its undecayed rate",
                "The data, model, initial point and schedule of "
                "apfl/worked/linear-pfllib (U⁰ = {0, 2}, U¹ = {0, 1}); α = "
                "0.6, η = 0.1, η_α = 0.35, preset pfllib (apfl.alpha_lr = "
                "constant, lr.count = trainings) with lr.schedule = "
                "exponential, lr.gamma = 0.75: client i's w and v steps take "
                "0.1 · 0.75^(the rounds i trained before), its α step 0.35.",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, lin_rounds(),
                flags, mutants, check, TOL_DATA,
                "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientapfl.py "
                "(train(): both schedulers stepped at its end under -ld; "
                "alpha_update: self.alpha - self.learning_rate * grad_alpha, "
                "the undecayed rate) and clientbase.py (ExponentialLR, "
                "-ldg), as shared/spec/notes-pfllib-as-run.md §2.2-§2.3 "
                "write them down; ref/engine/lr.c; " + PAPER)


def linear_adaptive_decay():
    """The paper's APFL (adaptive α, the paper's α rule) under a decay
    schedule with the default switches: lr.count = rounds and
    apfl.alpha_lr = decayed, so round t steps w, v with η γ^t and α with
    η_α γ^t (the paper has no decay; pflref decays every step size alike).
    U⁰ = {0, 2}, U¹ = {0, 1}."""
    algorithm = {"name": "apfl",
                 "hyperparameters": {"eta": 0.1, "alpha": 0.6,
                                     "eta_alpha": 0.35, "lr.gamma": 0.75},
                 "switches": {"apfl.alpha": "adaptive",
                              "lr.schedule": "exponential"}}

    def check(spec, trace, w, v, alpha):
        sw = pa.settings(spec["algorithm"])[3]
        assert sw["apfl.alpha_lr"] == "decayed" and sw["lr.count"] == "rounds"
        # η_α decays: keeping it constant moves α
        _, _, _, a_flip = run(spec, {"alpha-lr-flip"})
        assert a_flip[0] != alpha[0]

    flags = ["lr-schedule", "apfl-alpha-update", "apfl-v-scale",
             "stale-personal-state", "stale-global"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted", "alpha-lr-flip"],
               "apfl-alpha-update": ["alpha-new-iterates", "alpha-sign"],
               "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
               "stale-personal-state": ["reset-personal", "personal-from-global",
                                        "alpha-reset"],
               "stale-global": ["restart-w0"]}
    return make("linear-adaptive-decay",
                "APFL (the paper's steps, adaptive α) with an exponential "
                "decay: η and η_α decay together",
                "The data, model, initial point and schedule of "
                "apfl/worked/linear-pfllib (U⁰ = {0, 2}, U¹ = {0, 1}); α = "
                "0.6, η = 0.1, η_α = 0.35, apfl.alpha = adaptive, the paper's "
                "other switches (apfl.alpha_lr = decayed, lr.count = rounds) "
                "with lr.schedule = exponential, lr.gamma = 0.75: round t steps "
                "w and v with 0.1 · 0.75^t and α with 0.35 · 0.75^t.",
                LIN, LIN_CLIENTS, LIN_INIT, algorithm, lin_rounds(),
                flags, mutants, check, TOL_DATA,
                "ref/engine/lr.c (lr.schedule, apfl.alpha_lr = decayed: one "
                "rule for every step size, the paper having no decay); " + PAPER)


MAKERS = [notes_fixed, notes_adaptive, notes_fedtorch, mlp_output,
          mlp_parameter, mlp_fedtorch, linear_adaptive, linear_mix_new,
          linear_default_drawn, linear_pfllib, linear_pfllib_decay,
          linear_adaptive_decay]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
