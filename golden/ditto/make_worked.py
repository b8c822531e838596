#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ditto worked-example golden vectors (shared/spec notes §3(g)), in exact
rational arithmetic.

Ditto (Li et al., ICML 2021, Alg. 1; notes §3(c)) with FedAvg as the global
solver: each selected device k sets w_k ← w^t and, on each scheduled batch b
(the TF code's order: the personal step, then the global step, on the same
batch), takes
    v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w^t))      (personal)
    w_k ← w_k − η ∇F_k(w_k; b)                       (global);
v_k persists across rounds (v⁰ = w⁰) and is untouched when k is not
selected; w^{t+1} = (1/|S_t|) Σ_{k∈S_t} w_k (the simple mean; here
ditto.weights = uniform).

The notes' example: f_1 = ½(x − 4)², f_2 = ½(x + 2)² (quadratic model,
deterministic gradients), λ = 1, η = 1/2, s = 2 batches per round, w⁰ = 0.
Vectors (file = id without "ditto/", '/' → '-'):
  ditto/worked/notes-3g-both      both selected in two rounds: w¹ = 0.75,
      v = (2, −1); w² = 0.9375, v = (2.375, −0.625)
  ditto/worked/notes-3g-partial   S_2 = {client 0}: w² = 3.1875,
      v = (2.375, −1) (v_2 untouched)
  ditto/worked/notes-3g-lambda0   λ = 0, one round: v = (3, −1.5), the local
      SGD iterates
Every input is dyadic, so the reference computes these exactly.  The
generator asserts each of the notes' numbers.

    /usr/bin/python3 golden/ditto/make_worked.py [OUTDIR]
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
SOURCE = (f"{NOTES} §3(g) and Appendix A; §3(a), §3(c); Li et al., ICML 2021, "
          "Alg. 1")
GENERATOR = "golden/ditto/make_worked.py (exact fractions)"
TOL = {
    "atol": 1e-15,
    "rtol": 1e-14,
    "basis": "fp64 reference against exact rationals: every input is dyadic "
             "and every value a dyadic rational with a small denominator "
             "(at most 2^6) on magnitudes below 8, so each correctly rounded "
             "operation is exact and the reference reproduces the rationals "
             "exactly; the bound leaves room for 64 ulp; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
S = 2


def notes_vector(name, title, description, lam, selected, flags, mutants,
                 check):
    vid = f"ditto/worked/notes-3g-{name}"
    model = {"kind": "quadratic", "d": 1}
    clients = [{"a": [1.0], "c": [4.0]}, {"a": [1.0], "c": [-2.0]}]
    init = {"kind": "zeros"}
    algorithm = {"name": "ditto",
                 "hyperparameters": {"eta": 0.5, "lambda": lam},
                 "switches": {"ditto.weights": "uniform"}}
    hp, sw = px.settings(algorithm)

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, v, trace, sched = list(w0), [list(w0) for _ in pr.clients], pg.Trace(), []
        for t, sel in enumerate(selected):
            plan = [(k, px.split_batches(pr.n(k), None, S, bugs)) for k in sel]
            sched.append(plan)
            w, v = px.ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs)
        return pr, w, v, trace, sched

    result = run()
    pr, w, v, trace, sched = result
    for plan in sched:
        for k, steps in plan:
            # personal: η(a + λ) < 2; global: η a < 2 (contractions)
            px.assert_contractive(pr, k, steps, hp["eta"], hp["lambda"])
    server = [r["value"][0] for r in trace.records if r["event"] == "server"]
    check(server, v, trace)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda pr, w, v, trace, sched: (trace, w, v))
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched))
    named = {f"w_{t + 1}": [x] for t, x in enumerate(server)}
    named.update({f"v_{i}": vi for i, vi in enumerate(v)})
    prov = pg.provenance("independent", SOURCE, GENERATOR, named)
    return f"worked-notes-3g-{name}.json", pg.vector(vid, title, prov, flags,
                                                     spec, TOL, exp)


def values(trace, name, t, k, event="step"):
    return [r["value"][0] for r in trace.records if r["event"] == event
            and r["name"] == name and r["round"] == t and r.get("client") == k]


def v_end(trace, t):
    return [values(trace, "v", t, k, "client_end") for k in (0, 1)]


def both():
    def check(server, v, trace):
        assert server == [F(3, 4), F(15, 16)], server
        assert values(trace, "w_local", 0, 0) == [2, 3]
        assert values(trace, "w_local", 0, 1) == [-1, F(-3, 2)]
        assert values(trace, "v", 0, 0) == [2, 2]
        assert values(trace, "v", 0, 1) == [-1, -1]
        assert values(trace, "w_local", 1, 0)[-1] == F(51, 16)     # 3.1875
        assert values(trace, "w_local", 1, 1)[-1] == F(-21, 16)    # −1.3125
        assert values(trace, "v", 1, 0) == [F(19, 8), F(19, 8)]
        assert values(trace, "v", 1, 1) == [F(-5, 8), F(-5, 8)]
        assert v == [[F(19, 8)], [F(-5, 8)]]

    flags = ["ditto-moving-ref", "prox-sign", "prox-form", "stale-personal-state",
             "stale-global", "local-step-count", "loss-scale"]
    mutants = {"ditto-moving-ref": ["ditto-ref-moving"],
               "prox-sign": ["prox-plus"],
               "prox-form": ["prox-form-flip"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
               "loss-scale": ["loss-x2"]}
    return notes_vector(
        "both",
        "Ditto worked example, both devices selected in two rounds: "
        "w¹ = 0.75, v = (2, −1); w² = 0.9375, v = (2.375, −0.625)",
        "f_1 = ½(x − 4)², f_2 = ½(x + 2)², λ = 1, η = 1/2, s = 2 (two "
        "batches per round, personal step then global step on each), "
        "w⁰ = v⁰ = 0, both selected in both rounds, simple mean "
        "(ditto.weights = uniform), reference w^t.",
        1.0, [[0, 1], [0, 1]], flags, mutants, check)


def partial():
    def check(server, v, trace):
        assert server == [F(3, 4), F(51, 16)], server               # 0.75, 3.1875
        assert v == [[F(19, 8)], [F(-1)]]

    flags = ["stale-personal-state", "unsampled-client", "ditto-moving-ref"]
    mutants = {"stale-personal-state": ["train-all", "reset-personal"],
               "unsampled-client": ["train-all"],
               "ditto-moving-ref": ["ditto-ref-moving"]}
    return notes_vector(
        "partial",
        "Ditto worked example, partial participation S_2 = {client 0}: "
        "w² = 3.1875, v = (2.375, −1), v_2 untouched",
        "The notes §3(g) problem; round 1: both devices, round 2: only client "
        "0 (the notes' S_2 = {1}, 1-based): w² is client 0's global copy, "
        "client 1 keeps v = −1 from round 1.",
        1.0, [[0, 1], [0]], flags, mutants, check)


def lambda0():
    def check(server, v, trace):
        assert server == [F(3, 4)], server
        assert v == [[F(3)], [F(-3, 2)]]                            # = the local SGD iterates
        assert v_end(trace, 0) == [values(trace, "w_local", 0, k, "client_end")
                                   for k in (0, 1)]

    flags = ["local-step-count", "loss-scale"]
    mutants = {"local-step-count": ["epochs-plus-one", "epochs-minus-one"],
               "loss-scale": ["loss-x2"]}
    return notes_vector(
        "lambda0",
        "Ditto worked example, λ = 0: after round 1 v = (3, −1.5), the local "
        "SGD iterates",
        "The notes §3(g) problem with λ = 0, one round: the personal models "
        "are independent local models and equal the global copies.",
        0.0, [[0, 1]], flags, mutants, check)


def main():
    pg.write_all(sys.argv, HERE, (both, partial, lambda0))


if __name__ == "__main__":
    main()
