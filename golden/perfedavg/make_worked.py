#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-FedAvg golden vectors from the worked example of shared/spec notes
§4(g), in exact rational arithmetic (golden/pflref_exact_perfedavg.py).

The example: f_1(w) = (2/2)(w − 1)² (a = 2, c = 1), f_2(w) = (1/2)(w + 1)²
(a = 1, c = −1) as the quadratic model (data-free, so D, D′, D″ do not
matter: every batch is [0]), α = 1/10, β = 1/2, τ = 2 (six batches per user
and round), w_0 = 0, both users every round, uniform mean, two rounds, then
every client personalises on its post batches.

Before writing, the generator asserts every number the notes print:

  * with α = 1/10 and β = 1/2 as exact fractions: exact (and hf with
    δ = 1/1000, equal to exact on a quadratic): client 1 0 → 0.64 → 0.8704,
    client 2 0 → −0.405 → −0.645975, w_1 = 8977/80000, the personalised
    θ(w_1) = (0.28977, 0.00099125), w_2 = 178364013/1280000000; every exact
    local step equals w − β ∇F_i(w) with the notes' closed form
    ∇F_i(w) = (1 − α a_i)² a_i (w − c_i); FO: 0 → 0.8 → 0.96 and
    0 → −0.45 → −0.6975, w_1 = 0.13125, round-2 locals (0.96525,
    −0.657796875), w_2 = 0.1537265625; the pFedMe repository's evaluation
    (α step, then β step) at w_0 = 0 gives (1.0, −0.55), the paper's one
    step (0.2, −0.1);
  * the vectors themselves hold the spec's doubles (0.1 is not 1/10), so
    their expected values are the exact results of those doubles, each
    asserted within 1e-15 of the fraction above.

    /usr/bin/python3 golden/perfedavg/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px                 # noqa: E402
import pflref_exact_perfedavg as pa       # noqa: E402
import pflref_golden as pg                # noqa: E402

SOURCE = (f"{pg.NOTES} §4(g) and Appendix A; §4(c) (one round), §4(e) "
          "(evaluation); Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1")
GENERATOR = "golden/perfedavg/make_worked.py (exact fractions, pflref_exact_perfedavg.py)"
TOL = {
    "atol": 1e-14,
    "rtol": 1e-14,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: every value is below 3 in magnitude and comes "
             "from at most 4 local steps (each a few products and sums, "
             "rounding error below 1e-16 each) and two two-term means; each "
             "step is a contraction (β·a_i(1 − α a_i)² < 1), so the error "
             "stays below 1e-15; every flagged bug moves some value by more "
             "than 1e3 times the tolerance.",
}
TOL_HF = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "as the exact variant's, plus the central difference: "
             "g(w ± δq) carry a rounding error of about 1e-16·|g| (|g| < 3) "
             "that the division by 2δ = 1/500 enlarges to about 1e-13 in d "
             "(the note hvp), and α·β = 1/20 times that in w; over 4 steps "
             "and two means the error stays below 1e-12; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}

MODEL = {"kind": "quadratic", "d": 1}
CLIENTS = [{"a": [2.0], "c": [1.0]}, {"a": [1.0], "c": [-1.0]}]
A, C = [F(2), F(1)], [F(1), F(-1)]
ALPHA, BETA, DELTA = F(1, 10), F(1, 2), F(1, 1000)


def rounds_of(T):
    return [[(i, [[0]] * 6) for i in (0, 1)] for _ in range(T)]


def post_of(n):
    return [[[0]] * n for _ in CLIENTS]


def records(trace, event, name, rnd=None, client=None, phase="train"):
    return [r["value"][0] for r in trace.records if r["event"] == event
            and r["name"] == name and r["phase"] == phase
            and (rnd is None or r.get("round") == rnd)
            and (client is None or r.get("client") == client)]


def exact_run(variant, T, n_post=1, ev="one_alpha_step"):
    """The notes' example with α, β, δ as exact fractions."""
    pr = px.Problem(MODEL, CLIENTS)
    hp = {"alpha": ALPHA, "beta": BETA, "delta": DELTA}
    sw = {"perfedavg.variant": variant, "perfedavg.weights": "uniform",
          "perfedavg.eval": ev}
    return pa.run(pr, [F(0)], rounds_of(T), post_of(n_post), hp, sw)


def assert_notes():
    """Every number the notes print for §4(g)."""
    trace, w, th = exact_run("exact", 2)
    assert records(trace, "step", "w_local", 0, 0) == [F(64, 100), F(8704, 10000)]
    assert records(trace, "step", "w_local", 0, 1) == [F(-405, 1000), F(-645975, 1000000)]
    server = records(trace, "server", "w")
    assert server == [F(8977, 80000), F(178364013, 1280000000)], server
    # θ(w_1) = w_1 − α ∇f_i(w_1): the first w̃ of round 2
    assert [records(trace, "step", "w_tilde", 1, i)[0] for i in (0, 1)] == \
        [F(28977, 100000), F(99125, 100000000)]
    _, _, th1 = exact_run("exact", 1)
    assert [x[0] for x in th1] == [F(28977, 100000), F(99125, 100000000)]
    # every exact step is w − β ∇F_i(w), ∇F_i(w) = (1 − α a_i)² a_i (w − c_i)
    for t in (0, 1):
        start = server[t - 1] if t else F(0)
        for i in (0, 1):
            wi = start
            for got in records(trace, "step", "w_local", t, i):
                wi = wi - BETA * (1 - ALPHA * A[i]) ** 2 * A[i] * (wi - C[i])
                assert got == wi, (t, i, got, wi)
    # HF equals exact on a quadratic, for δ = 1/1000
    trace_hf, w_hf, th_hf = exact_run("hf", 2)
    assert w_hf == w and th_hf == th
    assert [r["value"] for r in trace_hf.records] == [r["value"] for r in trace.records]
    # FO
    trace, w, _ = exact_run("fo", 2)
    assert records(trace, "step", "w_local", 0, 0) == [F(8, 10), F(96, 100)]
    assert records(trace, "step", "w_local", 0, 1) == [F(-45, 100), F(-6975, 10000)]
    assert records(trace, "server", "w") == [F(13125, 100000), F(1537265625, 10 ** 10)]
    assert [records(trace, "client_end", "w_local", 1, i)[0] for i in (0, 1)] == \
        [F(96525, 100000), F(-657796875, 10 ** 9)]
    # evaluation at w_0 = 0: (1.0, −0.55) with two steps, (0.2, −0.1) with one
    _, _, th = exact_run("fo", 0, 2, "alpha_then_beta")
    assert [x[0] for x in th] == [F(1), F(-55, 100)], th
    _, _, th = exact_run("fo", 0, 1)
    assert [x[0] for x in th] == [F(2, 10), F(-1, 10)], th
    return True


NOTES_OK = assert_notes()


def make(name, title, description, variant, T, n_post, ev, flags, mutants, tol,
         compare):
    """The vector of the spec (doubles); its exact run must lie within 1e-15
    of the fraction run `compare` of the same reading."""
    vid = f"perfedavg/worked/{name}"
    hyper = {"alpha": 0.1, "beta": 0.5}
    if variant == "hf":
        hyper["delta"] = 0.001
    switches = {}
    if variant != "exact":
        switches["perfedavg.variant"] = variant
    if ev != "one_alpha_step":
        switches["perfedavg.eval"] = ev
    algorithm = {"name": "perfedavg", "hyperparameters": hyper}
    if switches:
        algorithm["switches"] = switches
    rounds = [{"clients": [0, 1], "batches": [b for _, b in plan]}
              for plan in rounds_of(T)]
    spec = pg.given_spec(title, description, MODEL, CLIENTS,
                         {"kind": "given", "w": [0.0]}, algorithm, rounds,
                         post=post_of(n_post))
    result = pa.replay(spec)
    ref = compare
    for got, want in zip(result[0].records, ref[0].records):
        assert got["name"] == want["name"]
        for x, y in zip(got["value"], want["value"]):
            assert abs(x - y) <= F(1, 10 ** 15), (name, got, x, y)
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs=px.NO_BUGS: pa.replay(spec, frozenset(bugs)),
                              lambda trace, w, v, _a: (trace, w, v))
    exact_vals = {"notes_w_" + str(t + 1): [x] for t, x in
                  enumerate(records(ref[0], "server", "w"))}
    exact_vals.update({f"notes_theta_{i}": th for i, th in enumerate(ref[2])})
    prov = pg.provenance("independent", SOURCE, GENERATOR, exact_vals)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


DESC = ("f_1 = (2/2)(w − 1)², f_2 = (1/2)(w + 1)² (quadratic model, a = (2, 1), "
        "c = (1, −1)), α = 0.1, β = 0.5, τ = 2 (six batches [0] per user and "
        "round: D, D′, D″ twice), w_0 = 0, both users in every round, "
        "perfedavg.weights = uniform")


def notes_exact():
    return make(
        "notes-4g-exact",
        "Per-FedAvg worked example, exact: 0 → 0.64 → 0.8704 and 0 → −0.405 → "
        "−0.645975, w_1 = 8977/80000, w_2 = 178364013/1280000000",
        DESC + ", two rounds, then θ_i = w_2 − α ∇f_i(w_2) on one post batch "
        "(the round-2 first w̃ are θ(w_1) = (0.28977, 0.00099125)).",
        "exact", 2, 1, "one_alpha_step",
        ["perfedavg-hessian-term", "perfedavg-no-restore", "perfedavg-eval-steps",
         "stale-global", "local-step-count", "loss-scale"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign"],
         "perfedavg-no-restore": ["no-restore"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "stale-global": ["restart-w0", "eval-on-w0"],
         "local-step-count": ["steps-minus-one"],
         "loss-scale": ["loss-x2"]},
        TOL, exact_run("exact", 2))


def notes_exact_one_round():
    return make(
        "notes-4g-exact-one-round",
        "Per-FedAvg worked example, exact, one round: w_1 = 8977/80000, "
        "personalised θ = (0.28977, 0.00099125)",
        DESC + ", one round, then θ_i = w_1 − α ∇f_i(w_1) on one post batch.",
        "exact", 1, 1, "one_alpha_step",
        ["perfedavg-hessian-term", "perfedavg-eval-steps", "stale-global"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "stale-global": ["eval-on-w0"]},
        TOL, exact_run("exact", 1))


def notes_fo():
    return make(
        "notes-4g-fo",
        "Per-FedAvg worked example, FO: 0 → 0.8 → 0.96 and 0 → −0.45 → −0.6975, "
        "w_1 = 0.13125, w_2 = 0.1537265625",
        DESC + ", perfedavg.variant = fo, two rounds (round-2 locals 0.96525, "
        "−0.657796875), then one personalisation step.",
        "fo", 2, 1, "one_alpha_step",
        ["perfedavg-no-restore", "perfedavg-eval-steps", "stale-global",
         "local-step-count"],
        {"perfedavg-no-restore": ["no-restore"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "stale-global": ["restart-w0"],
         "local-step-count": ["steps-minus-one"]},
        TOL, exact_run("fo", 2))


def notes_hf():
    return make(
        "notes-4g-hf",
        "Per-FedAvg worked example, HF with δ = 0.001: equal to exact on a "
        "quadratic (w_1 = 8977/80000, w_2 = 178364013/1280000000)",
        DESC + ", perfedavg.variant = hf, δ = 0.001 (the finite difference of "
        "an affine gradient is exact, so the values are the exact variant's), "
        "two rounds, then one personalisation step.",
        "hf", 2, 1, "one_alpha_step",
        ["perfedavg-hessian-term", "perfedavg-no-restore"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign"],
         "perfedavg-no-restore": ["no-restore"]},
        TOL_HF, exact_run("exact", 2))


def notes_eval_two_steps():
    return make(
        "notes-4g-eval-alpha-then-beta",
        "Per-FedAvg worked example, the pFedMe repository's evaluation at "
        "w_0 = 0 (α step, then β step): θ = (1.0, −0.55), not the paper's "
        "(0.2, −0.1)",
        "f_1 = (2/2)(w − 1)², f_2 = (1/2)(w + 1)², α = 0.1, β = 0.5, no "
        "training round, perfedavg.eval = alpha_then_beta: θ_i = w_0 − "
        "α ∇f_i(w_0) on the first post batch, then θ_i − β ∇f_i(θ_i) on the "
        "second (on training batches here; the repository uses test batches).",
        "exact", 0, 2, "alpha_then_beta",
        ["perfedavg-eval-steps"],
        {"perfedavg-eval-steps": ["eval-steps-flip"]},
        TOL, exact_run("exact", 0, 2, "alpha_then_beta"))


MAKERS = [notes_exact, notes_exact_one_round, notes_fo, notes_hf,
          notes_eval_two_steps]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
