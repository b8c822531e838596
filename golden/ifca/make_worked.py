#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""IFCA golden vectors (Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020,
Alg. 1), from the one-round worked example of shared/spec
notes-cfl-ifca-sampling-metrics.md §2.3 and two partial-participation runs,
computed in exact rational arithmetic by golden/pflref_exact_ifca.py.

The notes' F_i(θ) = (θ − c_i)² is the quadratic model with a = 2
(f = ½ a (θ − c)²); the initial models θ = (0.5, 2.5) are
θ_j = w⁰ + j δ with w⁰ = 0.5, δ = ifca.init_shift = 2.

  notes-2.3-gradient  c = (0.8, 1.2, 2.9, 3.1), γ = 0.1, Option I:
                      losses [[0.09, 2.89], [0.49, 1.69], [5.76, 0.16],
                      [6.76, 0.36]], estimates (1, 1, 2, 2), θ = (0.55, 2.55)
                      (dividing by the cluster size would give 0.60, 2.60)
  notes-2.3-model     Option II, τ = 2: local models 0.608, 0.752, 2.644,
                      2.716, θ = (0.68, 2.68)
  partial-gradient    k = 3, five clients, two rounds of three participants,
                      a tie of losses (client 0: 1 = 1), Option I over |M_t|
  partial-model       the same data in Option II: cluster 2 is chosen by no
                      participant in round 0 and keeps its model
  given-models-linear a linear model on two opposite concepts y = ±(x₁ − x₂)
                      (clients 0, 2: +; 1, 3: −), Option II with two local
                      steps on minibatches of two, from the given initial
                      models θ⁰ = (0.5, −0.5), (−0.25, 0.75)
                      (init.cluster_models, which no w⁰ + j δ gives)
  spread-gradient     Option I, k = 3, γ = 0.135, partial participation, no
                      tie (every estimate's loss gap above 0.01)
  bias-half-drawn     a linear model with a bias and loss half_squared, two
                      concepts y = ±(x₁ − x₂) + b, Option I from given
                      models, rounds whose drawn order differs from the
                      ascending clients (batches[j] is clients[j]'s)
  zero-loss-tie       a machine whose inputs use only a feature both given
                      cluster models leave at 0, labels 0: its losses are 0
                      and 0 in any arithmetic, the tie to the lowest index
                      (shows in a float32 check too)

    /usr/bin/python3 golden/ifca/make_worked.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_ifca as pi   # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = "shared/spec notes-cfl-ifca-sampling-metrics.md"
GENERATOR = "golden/ifca/make_worked.py (exact fractions, pflref_exact_ifca.py)"
TOL = {
    "atol": 1e-14,
    "rtol": 1e-13,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most two rounds of at most two local steps on "
             "values below 10, each a few roundings; every loss comparison that "
             "decides an estimate is either an exact tie of representable values "
             "(computed exactly in fp64) or separated by more than 0.01, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}
MODEL = {"kind": "quadratic", "d": 1}
# The quadratic machines' sizes n_i, distinct (issue 33 §3): IFCA's means
# are unweighted in both options, so n_i changes no number here, but a
# candidate that weighs a cluster's gradients or models by n_i is told
# apart only when the sizes differ.
SIZES = [3, 5, 2, 7, 4]


def make(name, title, description, cs, hp, mode, rounds, flags, check, source,
         only=None, data=None):
    """only: {flag: bugs} for the flags whose bugs do not all apply here
    (the audit asks for one bug per flag; the generator checks these).
    data = (model, clients, init) replaces the quadratic clients c_i from
    w⁰ = 0.5."""
    vid = f"ifca/worked/{name}"
    algorithm = {"name": "ifca", "hyperparameters": hp}
    if mode != "gradient":
        algorithm["switches"] = {"ifca.mode": mode}
    model, clients, init = data or (MODEL, [{"a": [2.0], "c": [c], "n": n}
                                            for c, n in zip(cs, SIZES)],
                                    {"kind": "given", "w": [0.5]})
    spec = pg.given_spec(title, description, model, clients, init, algorithm, rounds)

    def run(bugs=frozenset()):
        return pi.replay(spec, frozenset(bugs))

    result = run()
    check(result[0], result[2])
    mutants = {f: (only or {}).get(f, pi.MUTANTS[f]) for f in flags}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, TOL, exp)


def records(trace, event, name, rnd=0):
    return [r["value"] for r in trace.records
            if r["event"] == event and r["name"] == name and r.get("round") == rnd]


def close(x, y, digits=12):
    return abs(float(x) - y) <= 0.6 * 10 ** -digits


NOTES_C = [0.8, 1.2, 2.9, 3.1]
HP = {"gamma": 0.1, "ifca.k": 2, "ifca.init_shift": 2.0}


def notes_common(trace):
    losses = records(trace, "note", "loss")
    want = [[0.09, 2.89], [0.49, 1.69], [5.76, 0.16], [6.76, 0.36]]
    assert all(close(x, y) for row, wr in zip(losses, want) for x, y in zip(row, wr)), losses
    assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 0, 1, 1]


def notes_gradient():
    def check(trace, v):
        notes_common(trace)
        theta = records(trace, "server", "theta")[0]
        assert close(theta[0], 0.55) and close(theta[1], 2.55), theta
        # the cluster-size divisor of the notes' remark
        alt = pi.replay(spec_for_check["spec"], frozenset({"ifca-divide-cluster-size"}))
        at = records(alt[0], "server", "theta")[0]
        assert close(at[0], 0.60) and close(at[1], 2.60), at
    rounds = [{"clients": [0, 1, 2, 3], "batches": [[[0]] for _ in range(4)]}]
    spec_for_check["spec"] = pg.given_spec(
        "", None, MODEL, [{"a": [2.0], "c": [c]} for c in NOTES_C],
        {"kind": "given", "w": [0.5]}, {"name": "ifca", "hyperparameters": HP}, rounds)
    return make("notes-2.3-gradient", "IFCA worked example, Option I: θ = (0.55, 2.55)",
                "Notes §2.3: k = 2, F_i(θ) = (θ − c_i)², c = (0.8, 1.2, 2.9, 3.1), "
                "θ⁰ = (0.5, 2.5), γ = 0.1, one round of all four machines.",
                NOTES_C, HP, "gradient", rounds, ["ifca-divisor", "ifca-update"], check,
                f"{NOTES} §2.3",
                # every machine takes part: N = |M_t|, only |S_j| differs
                only={"ifca-divisor": ["ifca-divide-cluster-size"]})


spec_for_check = {}


def notes_model():
    def check(trace, v):
        notes_common(trace)
        ends = [r[0] for r in records(trace, "client_end", "theta_local")]
        assert all(close(x, y) for x, y in zip(ends, [0.608, 0.752, 2.644, 2.716])), ends
        theta = records(trace, "server", "theta")[0]
        assert close(theta[0], 0.68) and close(theta[1], 2.68), theta
    rounds = [{"clients": [0, 1, 2, 3], "batches": [[[0], [0]] for _ in range(4)]}]
    return make("notes-2.3-model", "IFCA worked example, Option II (τ = 2): θ = (0.68, 2.68)",
                "Notes §2.3 with model averaging: two local steps θ̃ ← θ̃ − γ ∇F_i(θ̃).",
                NOTES_C, HP, "model", rounds, ["ifca-update"], check, f"{NOTES} §2.3")


PARTIAL_C = [1.5, 0.25, 3.5, 2.75, 5.0]
PARTIAL_HP = {"gamma": 0.1, "ifca.k": 3, "ifca.init_shift": 2.0}


def partial(mode):
    steps = [[0]]
    rounds = [{"clients": [0, 1, 3], "batches": [list(steps) for _ in range(3)]},
              {"clients": [1, 2, 4], "batches": [list(steps) for _ in range(3)]}]

    def check(trace, v):
        # client 0 (c = 1.5) at θ⁰ = (0.5, 2.5, 4.5): losses (1, 1, 9), a tie
        assert records(trace, "note", "loss")[0] == [1, 1, 9]
        assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 0, 1]
        theta = records(trace, "server", "theta")[0]
        if mode == "gradient":
            # θ_0 = 0.5 − (0.1/3)(−2 + 0.5), θ_1 = 2.5 − (0.1/3)(−0.5), θ_2 kept
            want = [0.55, 2.5 + 1 / 60, 4.5]
        else:
            # θ_0 = mean(0.5 − 0.2(0.5 − 1.5), 0.5 − 0.2(0.5 − 0.25)) = 0.575,
            # θ_1 = 2.5 − 0.2(2.5 − 2.75) = 2.55, θ_2 kept
            want = [0.575, 2.55, 4.5]
        assert all(close(x, y) for x, y in zip(theta, want)), theta
    flags = (["ifca-divisor", "ifca-tie-break", "ifca-estimate"] if mode == "gradient"
             else ["ifca-empty-cluster", "ifca-tie-break", "ifca-estimate"])
    what = "Option I" if mode == "gradient" else "Option II, an unchosen cluster kept"
    return make(f"partial-{mode}", f"IFCA, k = 3, partial participation, a tie: {what}",
                "Five machines with c = (1.5, 0.25, 3.5, 2.75, 5.0), θ⁰ = (0.5, 2.5, 4.5), "
                "γ = 0.1, M_0 = {0, 1, 3}, M_1 = {1, 2, 4}; machine 0's losses tie (1 = 1) "
                "and go to the lowest index.",
                PARTIAL_C, PARTIAL_HP, mode, rounds, flags, check,
                f"{NOTES} §2.2 (divisor |M_t|, ties, empty clusters); hand-checked "
                "round 0 (comments in the generator)")


# The CFL linear vector's data (golden/cfl/make_worked.py): y = s (x₁ − x₂),
# s = +1 on clients 0, 2 and −1 on clients 1, 3.
LINEAR_X = [[[1, 0], [0, 1], [1, 1], [2, -1]],
            [[1, 0.5], [0, 1], [-1, 1], [1, -1]],
            [[0.5, 1], [1, -0.5], [2, 0], [0, -1]],
            [[1, 1], [2, 0], [0, -2], [1, 0.5]]]
GIVEN = [[0.5, -0.5], [-0.25, 0.75]]


def given_models():
    def check(trace, v):
        assert records(trace, "note", "theta0")[0] == [0.5, -0.5, -0.25, 0.75]
        # F_0 at θ_0 = ½ (1, −1): residuals θ·x − y = −y/2 with
        # y = (1, −1, 0, 3), so the mean squared loss is (1 + 1 + 0 + 9)/16
        assert records(trace, "note", "loss")[0][0] == pi.Fraction(11, 16)
        # the concepts are found: clients 0, 2 pick θ_0, clients 1, 3 θ_1
        assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 1, 0, 1]
        assert records(trace, "note", "partition", 1)[0] == [0, 1, 0, 1]
        assert v[0] == v[2] and v[1] == v[3]
        assert v[0][0] > 0 > v[0][1] and v[1][0] < 0 < v[1][1]
    clients = [{"X": xs, "y": [(1 if i % 2 == 0 else -1) * (x[0] - x[1]) for x in xs]}
               for i, xs in enumerate(LINEAR_X)]
    model = {"kind": "linear", "d": 2, "loss": "squared"}
    init = {"kind": "zeros", "cluster_models": GIVEN}
    rounds = [{"clients": [0, 1, 2, 3], "batches": [[[0, 1], [2, 3]] for _ in range(4)]}
              for _ in range(2)]
    return make("given-models-linear",
                "IFCA from given initial cluster models, linear model, minibatches",
                "k = 2 cluster models given (init.cluster_models): θ⁰ = (0.5, −0.5), "
                "(−0.25, 0.75); four clients with y = ±(x₁ − x₂), squared loss; "
                "Option II, γ = 0.1, two local steps on minibatches {0,1}, {2,3}, "
                "two rounds of all four clients.",
                None, {"gamma": 0.1, "ifca.k": 2}, "model", rounds,
                ["ifca-init", "ifca-update"], check,
                f"{NOTES} §2.1 (Alg. 1 from given θ_j⁰); hand-checked: the round-0 "
                "estimate of client 0 (comments in the generator)",
                data=(model, clients, init))


def spread_gradient():
    """Option I with partial participation and no tie (golden/coincidences.py):
    γ = 0.135, every estimate decided by a loss gap above 0.01."""
    cs = [1.35, 0.2, 3.6, 2.85, 5.15]
    rounds = [{"clients": [0, 1, 3], "batches": [[[0]], [[0]], [[0]]]},
              {"clients": [1, 2, 4], "batches": [[[0]], [[0]], [[0]]]}]

    def check(trace, v):
        for t in (0, 1):
            for losses in records(trace, "note", "loss", t):
                lo = sorted(losses)
                assert lo[1] - lo[0] > pi.Fraction(1, 100), losses
        assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 0, 1]
        assert [r[0] for r in records(trace, "note", "j_hat", 1)] == [0, 2, 2]
        # round 0: θ_0 = 0.5 − (0.135/3)(2(0.5 − 1.35) + 2(0.5 − 0.2)),
        # θ_1 = 2.5 − (0.135/3)·2(2.5 − 2.85), θ_2 kept (no pick)
        g = pi.Fraction(0.135)
        want = [pi.Fraction(1, 2) - g / 3 * (2 * (pi.Fraction(1, 2) - pi.Fraction(1.35))
                                            + 2 * (pi.Fraction(1, 2) - pi.Fraction(0.2))),
                pi.Fraction(5, 2) - g / 3 * 2 * (pi.Fraction(5, 2) - pi.Fraction(2.85)),
                pi.Fraction(9, 2)]
        assert records(trace, "server", "theta")[0] == want
    return make("spread-gradient", "IFCA, Option I, k = 3, partial participation, "
                "γ = 0.135, no tie",
                "Five machines with c = (1.35, 0.2, 3.6, 2.85, 5.15) (quadratic, "
                "a = 2), θ⁰ = (0.5, 2.5, 4.5) (w⁰ = 0.5, shift 2), γ = 0.135, "
                "M_0 = {0, 1, 3}, M_1 = {1, 2, 4}; one gradient per participant, "
                "θ_j ← θ_j − (γ/|M_t|) Σ g_i; every estimate is separated from "
                "the runner-up by more than 0.01.",
                cs, {"gamma": 0.135, "ifca.k": 3, "ifca.init_shift": 2.0}, "gradient",
                rounds, ["ifca-divisor", "ifca-estimate", "ifca-update"], check,
                f"{NOTES} §2.1-2.2 (Option I, divisor |M_t|); hand-checked round 0 "
                "(comments in the generator)")


# Two concepts with a bias: y = (x₁ − x₂) + ½ (clients 0, 2) and
# y = −(x₁ − x₂) − ¼ (clients 1, 3); sizes 4, 3, 5, 4.
BIAS_X = [[[1, 0], [0, 1], [1.5, 0.5], [2, -1]],
          [[1, 0.5], [0, 1], [-1, 1.5]],
          [[0.5, 1], [1, -0.5], [2, 0], [0, -1], [1.5, 1]],
          [[1, 1], [2, 0.5], [0, -2], [1, 0.5]]]
BIAS_GIVEN = [[0.5, -0.5, 0.25], [-0.25, 0.75, -0.375]]


def bias_half_drawn():
    """Linear with a bias, loss half_squared (F_i = mean ½ r²), Option I,
    drawn orders that differ from the ascending clients."""
    def check(trace, v):
        # F_0 at θ_0 = (½, −½, ¼): r = ½x₁ − ½x₂ + ¼ − y = −½(x₁ − x₂) − ¼
        # = (−¾, ¼, −¾, −7/4), so F_0 = ½ (9 + 1 + 9 + 49)/16 / 4 = 17/32
        assert records(trace, "note", "loss")[0][0] == pi.Fraction(17, 32)
        assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 1, 1]
        for t in (0, 1):
            for losses in records(trace, "note", "loss", t):
                lo = sorted(losses)
                assert lo[1] - lo[0] > pi.Fraction(1, 100), losses
        assert records(trace, "note", "partition", 1)[0] == [0, 1, 0, 1]
    clients = [{"X": xs, "y": [(x[0] - x[1] + 0.5) if i % 2 == 0
                               else -(x[0] - x[1]) - 0.25 for x in xs]}
               for i, xs in enumerate(BIAS_X)]
    model = {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"}
    init = {"kind": "zeros", "cluster_models": BIAS_GIVEN}
    rounds = [{"clients": [0, 1, 3], "drawn": [3, 0, 1],
               "batches": [[[0, 2]], [[1, 2]], [[0, 1]]]},
              {"clients": [0, 1, 2, 3], "drawn": [2, 0, 3, 1],
               "batches": [[[1, 3]], [[0, 2]], [[0, 1, 2]], [[1, 2]]]}]
    return make("bias-half-drawn",
                "IFCA, linear with a bias, loss half_squared, drawn order ≠ clients",
                "k = 2 given cluster models θ⁰ = (0.5, −0.5, 0.25), (−0.25, 0.75, "
                "−0.375) (w, b); four clients (n = 4, 3, 5, 4) on y = (x₁ − x₂) + 0.5 "
                "(0, 2) and y = −(x₁ − x₂) − 0.25 (1, 3), loss ½(ŷ − y)²; Option I, "
                "γ = 0.35; M_0 = {0, 1, 3} drawn 3, 0, 1; M_1 = every client drawn "
                "2, 0, 3, 1; each participant's one batch is the list at its "
                "position in clients (ascending), not in drawn.",
                None, {"gamma": 0.35, "ifca.k": 2}, "gradient", rounds,
                ["ifca-divisor", "ifca-init", "schedule-drawn-order",
                 "loss-scale"], check,
                f"{NOTES} §2.1-2.2 (Option I, divisor |M_t|); docs/formats.md "
                "(schedule: drawn is information only); hand-checked: client 0's "
                "round-0 loss at θ_0 (comments in the generator)",
                data=(model, clients, init))


# A tie that rounding cannot break.  Machine 4's inputs use only the third
# feature, which both given cluster models leave at 0, and its labels are 0:
# every prediction x·θ_j is 0·θ_j1 + 0·θ_j2 + x₃·0 = 0 exactly, so
# F_4(θ_0) = F_4(θ_1) = 0 exactly in any arithmetic, and in every Monte
# Carlo run of check --candidate-precision, whose random rounding is
# relative (x(1 + uξ)) and leaves a 0 at 0 (docs/validate.md, "Candidate
# precision").  The tie goes to θ_0, and machine 4's local model (its
# gradient is 0) joins cluster 0's average.  Machines 0-3 are
# given-models-linear's concepts with a third feature that the labels do
# not use, so their steps move the third coordinates apart and the round's
# partition (every machine estimated again on the new models) is decided
# by a gap above 0.01 for machine 4 too; so is each of their estimates.
ZERO_TIE_X3 = [[2, 0, 1.5, 0], [0, -2, 0, 1.5], [1.5, 0, 2, 0], [0, 1.5, 0, -2]]
ZERO_TIE_T = [[0, 0, 2], [0, 0, -3]]
ZERO_TIE_GIVEN = [[0.5, -0.5, 0.0], [-0.25, 0.75, 0.0]]


def zero_loss_tie():
    def check(trace, v):
        losses = records(trace, "note", "loss")
        assert losses[4] == [0, 0], losses
        for row in losses[:4]:
            lo = sorted(row)
            assert lo[1] - lo[0] > pi.Fraction(1, 100), row
        assert [r[0] for r in records(trace, "note", "j_hat")] == [0, 1, 0, 1, 0]
        # machine 4 on the round's new models: F_4(θ_j) = mean (x₃ θ_j3)²
        theta = records(trace, "server", "theta")[0]
        after = [sum((x[2] * theta[3 * j + 2]) ** 2 for x in ZERO_TIE_T) / 2
                 for j in range(2)]
        assert abs(after[0] - after[1]) > pi.Fraction(1, 100), after
        part = records(trace, "note", "partition")[0]
        assert part[4] == (0 if after[0] < after[1] else 1) and part[:4] == [0, 1, 0, 1]
    clients = [{"X": [x + [x3] for x, x3 in zip(xs, ZERO_TIE_X3[i])],
                "y": [(1 if i % 2 == 0 else -1) * (x[0] - x[1]) for x in xs]}
               for i, xs in enumerate(LINEAR_X)]
    clients.append({"X": ZERO_TIE_T, "y": [0] * len(ZERO_TIE_T)})
    model = {"kind": "linear", "d": 3, "loss": "squared"}
    init = {"kind": "zeros", "cluster_models": ZERO_TIE_GIVEN}
    rounds = [{"clients": [0, 1, 2, 3, 4],
               "batches": [[[0, 1], [2, 3]] for _ in range(4)] + [[[0, 1], [0, 1]]]}]
    return make("zero-loss-tie",
                "IFCA, a machine with loss 0 under both cluster models: the tie goes "
                "to the lowest index in any arithmetic",
                "k = 2 given cluster models θ⁰ = (0.5, −0.5, 0), (−0.25, 0.75, 0); "
                "machines 0-3 on y = ±(x₁ − x₂) with a third feature the labels do "
                "not use, machine 4 with inputs (0, 0, 2), (0, 0, −3) and labels 0, "
                "so F_4(θ_0) = F_4(θ_1) = 0 exactly (a tie that rounding cannot "
                "break) and ĵ = 0; squared loss, Option II, γ = 0.1, two local "
                "steps, one round of all five; every other estimate, and machine "
                "4's on the new models, decided by a gap above 0.01.",
                None, {"gamma": 0.1, "ifca.k": 2}, "model", rounds,
                ["ifca-tie-break", "ifca-update"], check,
                f"{NOTES} §2.1-2.2 (Alg. 1, ties to the lowest index); hand-checked: "
                "machine 4's losses are 0 (comments in the generator)",
                data=(model, clients, init))

MAKERS = [notes_gradient, notes_model, lambda: partial("gradient"),
          lambda: partial("model"), given_models, spread_gradient, bias_half_drawn,
          zero_loss_tie]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
