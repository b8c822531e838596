#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""SCAFFOLD golden vectors (Karimireddy et al., ICML 2020, arXiv
1910.06378v4, Alg. 1), computed in exact rational arithmetic by
golden/pflref_exact_scaffold.py.

  quadratic-ii        three quadratic clients (a, c distinct), option II,
                      η_l = 0.15, η_g = 1.25, two rounds of two of three
                      clients (client 2 first in round 1, client 0 twice),
                      K = 2, 3, 1; hand check: with plain SGD option II's
                      c_i⁺ is the mean of the raw gradients along the
                      local path, (1/K) Σ_k ∇f_i(y_{k−1})
  linear-ii           a linear model with a bias (squared loss), four
                      clients of 3, 4, 5, 2 samples, three rounds of
                      S = {0, 2}, {1, 2, 3}, {0, 1}: clients 1 and 3 start
                      in round 1 with stale c_i = 0, client 2 sampled
                      twice, K_i from 1 to 3, minibatches; η_l = 0.1,
                      η_g = 0.75; round 1 drawn in the order 2, 1, 3
  linear-i            the same run under option I (c_i⁺ = ∇f_i(x) over the
                      whole training set)
  linear-ii-decay     option II under lr.schedule = exponential (γ = 0.8):
                      the steps and c_i⁺ use the round's η_l
  linear-pfllib       preset pfllib (lr.count = trainings, c_lr = initial)
                      under the same decay, η_g = 1.5
  linear-ii-momentum  option II with opt.momentum = 0.6 (torch SGD): the
                      optimizer steps on g − c_i + c; η_l = 0.1 · 0.9^t
  linear-ii-controls  option II from given control variates (init.c and
                      init.c_i, Alg. 1 l. 1-2): c⁰ not the mean of the c_i⁰,
                      clients 1 and 3 enter round 1 with their given c_i⁰
  linear-ii-controls-mean
                      init.c_i alone: c⁰ = (1/N) Σ c_i⁰ (Sec. 4's rule)

    /usr/bin/python3 golden/scaffold/make_worked.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_scaffold as ps   # noqa: E402
import pflref_golden as pg           # noqa: E402
from fractions import Fraction       # noqa: E402

PAPER = ("Karimireddy et al., ICML 2020, arXiv 1910.06378v4, Alg. 1 "
         "(l. 10, 12, 16, 17)")
PFLLIB = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
          "clientscaffold.py:48,55-56,73, servers/serverscaffold.py:126-131, "
          "optimizers/fedoptimizer.py:30")
GENERATOR = ("golden/scaffold/make_worked.py (exact fractions, "
             "pflref_exact_scaffold.py)")
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most three rounds of at most three local "
             "steps on values below 10; option II divides y_i − x by K η_l "
             "(at least 0.1), which scales its rounding by at most 10, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}

QUAD = {"kind": "quadratic", "d": 2}
QUAD_CLIENTS = [{"a": [2.5, 0.8], "c": [1.5, -0.75]},
                {"a": [1.25, 3.0], "c": [-0.5, 2.25]},
                {"a": [0.6, 1.75], "c": [3.5, 0.4]}]

LIN = {"kind": "linear", "d": 2, "bias": True, "loss": "squared"}
LIN_X = [[[1.0, 0.5], [0.0, 1.0], [-0.5, 1.5]],
         [[1.0, -1.0], [0.5, 0.5], [2.0, 0.0], [-1.0, 0.25]],
         [[0.5, 1.0], [1.5, -0.5], [0.0, -1.0], [1.0, 1.0], [-0.5, 0.0]],
         [[1.25, 0.75], [-1.0, 0.5]]]
LIN_Y = [[1.0, -0.5, 0.75], [2.0, 0.25, 1.5, -1.25],
         [-1.0, 0.5, 1.25, 0.0, 2.5], [0.5, -2.0]]
LIN_CLIENTS = [{"X": X, "y": y} for X, y in zip(LIN_X, LIN_Y)]
LIN_ROUNDS = [
    {"clients": [0, 2], "batches": [[[0, 1], [2]],
                                    [[0, 1, 2], [3, 4], [1, 3]]]},
    {"clients": [1, 2, 3], "batches": [[[0, 2], [1, 3]], [[1, 3]],
                                       [[0, 1], [1], [0]]]},
    {"clients": [0, 1], "batches": [[[1, 2], [0], [0, 2]],
                                    [[3], [0, 1, 2]]]},
]
INIT = {"kind": "given", "w": [0.25, -0.5, 0.125]}

BASE_FLAGS = ["scaffold-correction", "scaffold-option", "scaffold-local-steps",
              "scaffold-global-step", "scaffold-server-control",
              "scaffold-stale-control", "scaffold-aggregation"]


def make(name, title, description, model, clients, init, algorithm, rounds,
         flags, source, check=None):
    vid = f"scaffold/worked/{name}"
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)

    def run(bugs=frozenset()):
        return ps.replay(spec, frozenset(bugs))

    result = run()
    if check is not None:
        check(spec, result[0])
    mutants = {f: ps.MUTANTS[f] for f in flags}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, TOL, exp)


def check_mean_gradient(spec, trace):
    """Option II with plain SGD and a constant η: c_i⁺ = c_i − c + (x −
    y_K)/(K η) and x − y_K = η Σ_k (g_k − c_i + c), so c_i⁺ = (1/K) Σ_k
    ∇f_i(y_{k−1}), the mean raw gradient along the path (a second
    derivation, from the recorded iterates)."""
    import pflref_exact as px
    pr = px.Problem(spec["model"], spec["problem"]["clients"])
    recs = trace.records
    for t, r in enumerate(spec["schedule"]["rounds"]):
        for i, steps in zip(r["clients"], r["batches"]):
            path = [q["value"] for q in recs if q.get("round") == t
                    and q.get("client") == i and q["name"] == "y"
                    and q["event"] in ("client_begin", "step")]
            grads = [pr.grad(i, yk, b) for yk, b in zip(path, steps)]
            want = [sum(g[p] for g in grads) / len(steps) for p in range(pr.P)]
            got = [q["value"] for q in recs if q.get("round") == t
                   and q.get("client") == i and q["name"] == "c_i"][0]
            assert got == want, (t, i, got, want)


def quadratic_ii():
    rounds = [{"clients": [0, 1], "batches": [[[0], [0]], [[0], [0], [0]]]},
              {"clients": [0, 2], "batches": [[[0], [0], [0]], [[0]]]}]
    alg = {"name": "scaffold",
           "hyperparameters": {"eta": 0.15, "scaffold.eta_g": 1.25}}
    return make("quadratic-ii", "SCAFFOLD, option II, quadratic clients",
                "Three clients f_i(θ) = ½ Σ_j a_ij (θ_j − c_ij)², a = (2.5, 0.8), "
                "(1.25, 3), (0.6, 1.75), c = (1.5, −0.75), (−0.5, 2.25), (3.5, 0.4); "
                "x⁰ = (0.5, −0.25); η_l = 0.15, η_g = 1.25; S = {0, 1} with K = 2, 3, "
                "then {0, 2} with K = 3, 1 (client 2 joins with c_2 = 0).",
                QUAD, QUAD_CLIENTS, {"kind": "given", "w": [0.5, -0.25]}, alg,
                rounds, ["scaffold-correction", "scaffold-local-steps",
                         "scaffold-global-step", "scaffold-server-control",
                         "scaffold-stale-control", "scaffold-client-control"],
                f"{PAPER}; hand check: option II's c_i⁺ is the mean raw gradient "
                "along the local path (check_mean_gradient)",
                check=check_mean_gradient)


# LIN_ROUNDS with the order in which the sampler drew each round's clients
# (information only: batches[j] stays clients[j]'s)
DRAWN_ROUNDS = [LIN_ROUNDS[0], dict(LIN_ROUNDS[1], drawn=[2, 1, 3]),
                LIN_ROUNDS[2]]


def linear(name, title, extra, hp, sw, flags, source, preset=None, check=None,
           rounds=None, init=None):
    alg = {"name": "scaffold"}
    if preset is not None:
        alg["preset"] = preset
    alg["hyperparameters"] = hp
    if sw:
        alg["switches"] = sw
    desc = ("Linear model y = w·x + b, squared loss, four clients of 3, 4, 5, 2 "
            "samples; x⁰ = (0.25, −0.5, 0.125); S = {0, 2}, {1, 2, 3}, {0, 1} with "
            "K_i = (2, 3), (2, 1, 3), (3, 2) minibatch steps: clients 1 and 3 join "
            "in round 1 with c_i = 0, client 2 is sampled twice. " + extra)
    return make(name, title, desc, LIN, LIN_CLIENTS, init or INIT, alg,
                rounds or LIN_ROUNDS, flags, source, check)


def linear_ii():
    return linear("linear-ii", "SCAFFOLD, option II, linear with a bias, partial "
                  "participation", "η_l = 0.1, η_g = 0.75; round 1's drawn order "
                  "(2, 1, 3) differs from the ascending clients, whose batches[j] is "
                  "clients[j]'s.",
                  {"eta": 0.1, "scaffold.eta_g": 0.75}, None,
                  BASE_FLAGS + ["scaffold-client-control", "schedule-drawn-order"],
                  f"{PAPER}; docs/formats.md (schedule: drawn is information only)",
                  check=check_mean_gradient, rounds=DRAWN_ROUNDS)


def linear_i():
    return linear("linear-i", "SCAFFOLD, option I (the gradient at x over the "
                  "whole training set)", "η_l = 0.1, η_g = 0.75, option I.",
                  {"eta": 0.1, "scaffold.eta_g": 0.75}, {"scaffold.option": "I"},
                  ["scaffold-correction", "scaffold-option", "scaffold-global-step",
                   "scaffold-server-control", "scaffold-stale-control",
                   "scaffold-aggregation", "scaffold-full-pass"],
                  f"{PAPER}; §4 (option I: an additional pass over the local data)")


def linear_decay():
    return linear("linear-ii-decay", "SCAFFOLD, option II under an exponential "
                  "step decay (η_l of the round)",
                  "η_l = 0.1 · 0.8^t (lr.schedule = exponential), η_g = 0.75.",
                  {"eta": 0.1, "scaffold.eta_g": 0.75, "lr.gamma": 0.8},
                  {"lr.schedule": "exponential"},
                  ["scaffold-correction", "scaffold-local-steps",
                   "scaffold-server-control", "scaffold-c-lr", "lr-schedule"],
                  f"{PAPER}; ref/engine/lr.c (lr.schedule)")


def linear_pfllib():
    return linear("linear-pfllib", "SCAFFOLD, preset pfllib (per-client decay "
                  "count, option II with the undecayed η)",
                  "Preset pfllib: lr.count = trainings, scaffold.c_lr = initial; "
                  "η_l = 0.1 · 0.8^k (k the client's train() calls before), "
                  "η_g = 1.5.",
                  {"eta": 0.1, "scaffold.eta_g": 1.5, "lr.gamma": 0.8},
                  {"lr.schedule": "exponential"},
                  ["scaffold-correction", "scaffold-global-step", "scaffold-c-lr",
                   "lr-count", "lr-schedule", "scaffold-stale-control"],
                  f"{PFLLIB}; ref/engine/presets.c", preset="pfllib")


def linear_momentum():
    return linear("linear-ii-momentum", "SCAFFOLD, option II with the client "
                  "optimizer's momentum (opt.momentum = 0.6)",
                  "η_l = 0.1 · 0.9^t (lr.schedule = exponential), η_g = 0.75, "
                  "torch SGD momentum μ = 0.6 on d = g − c_i + c, a new optimizer "
                  "per client update.",
                  {"eta": 0.1, "scaffold.eta_g": 0.75, "opt.momentum": 0.6,
                   "lr.gamma": 0.9}, {"lr.schedule": "exponential"},
                  ["scaffold-correction", "scaffold-optimizer",
                   "scaffold-server-control", "scaffold-local-steps",
                   "lr-schedule"],
                  f"{PAPER}; {PFLLIB} (fedoptimizer.py:30 adds c − c_i to "
                  "p.grad); docs/optimizers.md")


# Initial control variates (Alg. 1 l. 1-2): distinct entries, none 1, and
# c⁰ away from the mean of the c_i⁰ (so either reading of c⁰ shows).
C0 = [0.375, -0.625, 0.1875]
CI0 = [[0.25, 0.5, -0.75], [-1.5, 0.0625, 0.625],
       [-0.5, 0.3125, 0.875], [0.125, -1.25, 0.4375]]
INIT_SOURCE = (f"{PAPER}; §4 (\"initialized to ensure that c = 1/N Σ c_i and "
               "can safely all be initialized to 0\")")


def linear_controls():
    return linear("linear-ii-controls", "SCAFFOLD, option II from given "
                  "control variates c⁰ and c_i⁰",
                  "η_l = 0.1, η_g = 0.75; init.c = (0.375, −0.625, 0.1875), "
                  "init.c_i = (0.25, 0.5, −0.75), (−1.5, 0.0625, 0.625), "
                  "(−0.5, 0.3125, 0.875), (0.125, −1.25, 0.4375): clients 1 and 3 "
                  "keep their given c_i⁰ until round 1.",
                  {"eta": 0.1, "scaffold.eta_g": 0.75}, None,
                  ["scaffold-initial-control", "scaffold-correction",
                   "scaffold-server-control", "scaffold-stale-control",
                   "scaffold-client-control"], INIT_SOURCE,
                  init=dict(INIT, c=C0, c_i=CI0))


def linear_controls_mean():
    return linear("linear-ii-controls-mean", "SCAFFOLD, option II from given "
                  "client control variates, c⁰ their mean",
                  "η_l = 0.1, η_g = 0.75; init.c_i as in linear-ii-controls and "
                  "no init.c: c⁰ = (1/N) Σ_i c_i⁰ = (−0.40625, −0.09375, 0.296875).",
                  {"eta": 0.1, "scaffold.eta_g": 0.75}, None,
                  ["scaffold-initial-control", "scaffold-initial-c-mean",
                   "scaffold-server-control", "scaffold-stale-control"],
                  INIT_SOURCE,
                  init=dict(INIT, c_i=CI0))


MAKERS = [quadratic_ii, linear_ii, linear_i, linear_decay, linear_pfllib,
          linear_momentum, linear_controls, linear_controls_mean]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
