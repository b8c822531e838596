#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedDyn golden vectors (Acar et al., ICLR 2021, arXiv 2111.04263v2,
Alg. 1), computed in exact rational arithmetic by
golden/pflref_exact_feddyn.py.

Three devices (m = 3) with n = 3, 4, 6 samples of a linear model; three
rounds of two participants, P_0 = {0, 1}, P_1 = {1, 2}, P_2 = {0, 2}: each
device sits out one round and comes back with its stale grad L_k, and
|P_t| = 2 differs from m = 3 and from 1, so the divisor of l. 10 and the
two readings of its sum differ.  Each participation takes two minibatches
(batches of 2 in index order, the device's next two, cyclically).

  linear-paper      d = 2 with a bias, squared loss, eta = 0.1, alpha = 0.35
  linear-h-literal  feddyn.h_sum = literal (the printed parenthesis of l. 10),
                    eta = 0.12, alpha = 0.45; round 1 drawn as 2, 1 (not the
                    ascending clients), device 2 on {2, 3} then {0, 1}
  linear-official   preset official: alpha_k = alpha / (n_k m / sum n_j)
                    and weight decay 0.001 (the client optimizer's path),
                    eta = 0.09, alpha = 0.3
  d1-pfllib         preset pfllib: the proximal term (alpha/2)|theta -
                    theta^{t-1}| (not squared), d = 1 without a bias, loss
                    half_squared, so |theta - theta^{t-1}| is rational and
                    the run exact; eta = 0.15, alpha = 0.55
  d1-pfllib-decay   preset pfllib with lr.schedule = exponential (gamma =
                    0.75): lr.count = trainings, each device's step size
                    decays with its own trainings; eta = 0.2, alpha = 0.65

Inputs are the exact values of their doubles; expected values are
float(Fraction).  For each flag the generator runs the bugs of its class
(pflref_exact_feddyn.MUTANTS) and asserts that each moves an expected number
far outside the tolerance.

    /usr/bin/python3 golden/feddyn/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px          # noqa: E402
import pflref_exact_feddyn as pd   # noqa: E402
import pflref_golden as pg         # noqa: E402

SOURCE = ("Acar, Zhao, Matas, Mattina, Whatmough, Saligrama, ICLR 2021, "
          "arXiv 2111.04263v2, Alg. 1 (ll. 5, 6, 9, 10, 11; l. 10's sum over "
          "the differences, the paper's key property h^t = (1/m) sum_k grad "
          "L_k(theta_k^t))")
GENERATOR = "golden/feddyn/make_worked.py (exact fractions, pflref_exact_feddyn.py)"
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: three rounds of two participants, each two local "
             "steps that contract (eta (batch curvature + alpha_k) < 2, "
             "asserted by the generator) and add fewer than 20 roundings of "
             "terms below 10, then the state updates and one mean, so the "
             "error stays far below 1e-12; every flagged bug moves some value "
             "by more than 1e3 times the tolerance.",
}
TOL_NORM = dict(TOL, basis=(
    "fp64 reference in fixed order against exact rationals of the binary "
    "inputs: d = 1, so the norm term (alpha/2)(theta - theta^{t-1})/|theta - "
    "theta^{t-1}| is (alpha/2) sign(theta - theta^{t-1}) up to 3 roundings; "
    "the generator asserts |theta - theta^{t-1}| > 1e-3 wherever it is not "
    "exactly 0 (exactly 0 only at a round's first step, where theta is a "
    "copy of theta^{t-1}), so the sign cannot flip under rounding; two "
    "contracting steps per participation, fewer than 20 roundings of terms "
    "below 10, so the error stays far below 1e-12; every flagged bug moves "
    "some value by more than 1e3 times the tolerance."))

MODEL2 = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS2 = [
    {"X": [[0.634, -0.218], [-1.147, 0.853], [0.472, 1.316]],
     "y": [0.785, -1.262, 0.394]},
    {"X": [[1.083, -0.641], [-0.327, 0.974], [0.216, -1.138], [-0.759, -0.285]],
     "y": [1.167, -0.538, 0.621, -0.947]},
    {"X": [[-0.512, 0.368], [0.927, 0.143], [-1.026, -0.791], [0.288, 1.154],
           [0.743, -0.466], [-0.195, 0.612]],
     "y": [-0.716, 0.853, -1.209, 0.477, 0.912, -0.334]},
]
INIT2 = {"kind": "given", "w": [0.15, -0.25, 0.05]}
MODEL1 = {"kind": "linear", "d": 1, "loss": "half_squared", "bias": False}
CLIENTS1 = [
    {"X": [[1.25], [-0.75], [0.5]], "y": [2.125, -1.375, 0.875]},
    {"X": [[0.875], [1.5], [-1.25], [0.625]], "y": [-0.625, -1.75, 1.375, -0.5]},
    {"X": [[-1.125], [0.625], [1.375], [-0.5], [0.75], [1.0]],
     "y": [0.375, 1.875, 2.25, -1.25, 1.125, 1.625]},
]
INIT1 = {"kind": "given", "w": [0.25]}
PARTICIPANTS = [[0, 1], [1, 2], [0, 2]]
B, STEPS = 2, 2


def rounds_for(clients):
    """Each participant's next STEPS batches of B in index order, cut once
    and handed out cyclically by a per-device position kept across rounds."""
    cut = [px.split_batches(len(c["y"]), B, 1) for c in clients]
    pos = [0] * len(clients)
    out = []
    for sel in PARTICIPANTS:
        batches = []
        for k in sel:
            mine = []
            for _ in range(STEPS):
                mine.append(list(cut[k][pos[k] % len(cut[k])]))
                pos[k] += 1
            batches.append(mine)
        out.append({"clients": list(sel), "batches": batches})
    return out


def with_drawn_round1(rounds):
    """Round 1 ({1, 2}) drawn in the order 2, 1 (information only:
    batches[j] stays clients[j]'s), device 2 taking its batches [2, 3] then
    [0, 1], so a candidate that pairs the lists with the drawn order gets
    other numbers, in range (device 1 has 4 samples)."""
    r = rounds[1]
    assert r["clients"] == [1, 2]
    r2 = {"clients": [1, 2], "drawn": [2, 1],
          "batches": [r["batches"][0], [[2, 3], [0, 1]]]}
    assert r2["batches"][0] != r2["batches"][1]
    return rounds[:1] + [r2] + rounds[2:]


def make(name, title, description, model, clients, init, algorithm, flags,
         tol=TOL, check=None, drawn=False):
    vid = f"feddyn/worked/{name}"
    rounds = rounds_for(clients)
    if drawn:
        rounds = with_drawn_round1(rounds)
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds)

    def run(bugs=frozenset()):
        return pd.replay(spec, frozenset(bugs))

    result = run()
    eff = pd.effective(algorithm)["hyperparameters"]
    pr = px.Problem(model, clients)
    n = [pr.n(k) for k in range(len(clients))]
    top = max(pg.exact(eff["feddyn.alpha"]) * max(1, Fraction(sum(n), len(n) * min(n))),
              pg.exact(eff["feddyn.alpha"]))
    for r in rounds:
        for k, steps in zip(r["clients"], r["batches"]):
            px.assert_contractive(pr, k, steps, pg.exact(eff["eta"]), top)
    if check is not None:
        check(spec, result)
    exp = pg.checked_expected(vid, tol, flags,
                              {f: pd.MUTANTS[f] for f in flags}, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


def records(trace, event, name):
    return [r for r in trace.records if r["event"] == event and r["name"] == name]


def check_stale(spec, result):
    """grad L_k of a device that sits out is carried unchanged, and is
    not 0 when the device comes back; h^t is (1/m) sum_k grad L_k."""
    trace = result[0]
    grads = records(trace, "note", "grad_L")
    last = {}
    for r in grads:
        last[(r["round"], r["client"])] = r["value"]
    assert last[(0, 0)] != [0] * len(last[(0, 0)])
    hs = records(trace, "note", "h")
    m = len(spec["problem"]["clients"])
    state = {}
    for t, h in enumerate(hs):
        for k in range(m):
            if (t, k) in last:
                state[k] = last[(t, k)]
        P = len(h["value"])
        mean = [sum(state.get(k, [0] * P)[p] for k in range(m)) / m for p in range(P)]
        if spec["algorithm"].get("switches", {}).get("feddyn.h_sum") != "literal":
            assert mean == h["value"], (t, mean, h["value"])
        else:
            assert mean != h["value"], t


def linear_paper():
    algorithm = {"name": "feddyn",
                 "hyperparameters": {"eta": 0.1, "feddyn.alpha": 0.35}}
    return make(
        "linear-paper",
        "FedDyn as the box writes it: stale grad L_k, h over m, the corrected mean",
        "Three devices (n = 3, 4, 6), y-hat = x·w + b, squared loss, theta⁰ = "
        "(0.15, −0.25, 0.05), eta = 0.1, alpha = 0.35; P_0 = {0, 1}, P_1 = "
        "{1, 2}, P_2 = {0, 2}, two batches of 2 per participation (each "
        "device's next two, cyclically).  Device 0 sits out round 1 and "
        "device 1 round 2: their grad L_k carry over; h^t = (1/3) sum_k grad "
        "L_k(theta_k^t) (asserted by the generator).",
        MODEL2, CLIENTS2, INIT2, algorithm,
        ["feddyn-linear-term", "feddyn-gradient-state", "feddyn-server-state",
         "feddyn-h-sum", "feddyn-correction", "prox-sign", "aggregation-weights",
         "stale-global", "local-step-count", "batch-mean"],
        check=check_stale)


def linear_h_literal():
    algorithm = {"name": "feddyn",
                 "hyperparameters": {"eta": 0.12, "feddyn.alpha": 0.45},
                 "switches": {"feddyn.h_sum": "literal"}}
    return make(
        "linear-h-literal",
        "FedDyn with l. 10's parenthesis as printed: (sum theta_k) − theta^{t−1}",
        "The data and schedule of feddyn/worked/linear-paper, eta = 0.12, alpha "
        "= 0.45, feddyn.h_sum = literal: h^t = h^{t−1} − alpha (1/m) "
        "(sum_{k in P_t} theta_k^t − theta^{t−1}), theta^{t−1} subtracted once "
        "for the two participants (FedLab's reading); h^t then differs from "
        "(1/m) sum_k grad L_k (asserted).  Round 1 records its participants "
        "drawn as 2, 1 (information only: batches[j] belongs to clients[j]) "
        "and device 2 takes its batches {2, 3} then {0, 1}.",
        MODEL2, CLIENTS2, INIT2, algorithm,
        ["feddyn-h-sum", "feddyn-server-state", "feddyn-correction",
         "feddyn-gradient-state", "schedule-drawn-order"],
        check=check_stale, drawn=True)


def linear_official():
    algorithm = {"name": "feddyn", "preset": "official",
                 "hyperparameters": {"eta": 0.09, "feddyn.alpha": 0.3}}
    return make(
        "linear-official",
        "FedDyn, preset official: alpha_k = alpha / (n_k m / sum n_j), weight decay 0.001",
        "The data and schedule of feddyn/worked/linear-paper, eta = 0.09, alpha "
        "= 0.3, preset official (alpemreacar/FedDyn): device k's local "
        "objective and grad L_k update take alpha_k = alpha · 13/(3 n_k) "
        "(n = 3, 4, 6: alpha_k = 1.444…, 1.083…, 0.722… alpha) while the "
        "server's h keeps alpha; the local steps add weight decay 0.001 "
        "(opt.weight_decay, coupled: d + 0.001 theta).",
        MODEL2, CLIENTS2, INIT2, algorithm,
        ["feddyn-alpha-k", "feddyn-linear-term", "feddyn-gradient-state",
         "feddyn-correction"])


def check_norm(spec, result):
    """|theta − theta^{t−1}| at every step after a round's first is far
    from 0 (the sign of the norm term cannot flip under rounding)."""
    trace = result[0]
    start = {}
    for r in trace.records:
        if r["event"] == "client_begin":
            start[(r["round"], r["client"])] = r["value"][0]
        if r["event"] == "step" and r["step"] < STEPS:
            gap = abs(r["value"][0] - start[(r["round"], r["client"])])
            assert gap > Fraction(1, 1000), (r, gap)


def d1_pfllib():
    algorithm = {"name": "feddyn", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.15, "feddyn.alpha": 0.55}}
    return make(
        "d1-pfllib",
        "FedDyn, preset pfllib: the proximal term (alpha/2)‖theta − theta^{t−1}‖, not squared",
        "Three devices (n = 3, 4, 6), y-hat = x·w, loss ½(y-hat − y)², theta⁰ "
        "= 0.25, eta = 0.15, alpha = 0.55, preset pfllib (TsingZ0/PFLlib "
        "clientdyn.py:45): the local gradient's pull is (alpha/2)(theta − "
        "theta^{t−1})/|theta − theta^{t−1}|, 0 at a round's first step where "
        "theta = theta^{t−1}; grad L_k and h as the box (alpha).  In one "
        "dimension the norm is |·|, rational, so the run is exact.",
        MODEL1, CLIENTS1, INIT1, algorithm,
        ["feddyn-prox", "feddyn-linear-term", "feddyn-gradient-state"],
        tol=TOL_NORM, check=check_norm)


def d1_pfllib_decay():
    algorithm = {"name": "feddyn", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.2, "feddyn.alpha": 0.65, "lr.gamma": 0.75},
                 "switches": {"lr.schedule": "exponential"}}
    return make(
        "d1-pfllib-decay",
        "FedDyn, preset pfllib with PFLlib's -ld: each device's own step-size decay",
        "The data and schedule of feddyn/worked/d1-pfllib, eta = 0.2, alpha = "
        "0.65, lr.schedule = exponential with gamma = 0.75, preset pfllib "
        "(lr.count = trainings, TsingZ0/PFLlib clientdyn.py:58-59: a device's "
        "ExponentialLR steps after its own train()): device 0 trains in "
        "rounds 0 and 2 with eta and 0.75 eta, device 1 in rounds 0 and 1 "
        "with eta and 0.75 eta, device 2 in rounds 1 and 2 with eta and 0.75 "
        "eta (a per-round count would give 0.5625 eta in round 2).",
        MODEL1, CLIENTS1, INIT1, algorithm,
        ["lr-count", "lr-schedule", "feddyn-prox"],
        tol=TOL_NORM, check=check_norm)


MAKERS = [linear_paper, linear_h_literal, linear_official, d1_pfllib,
          d1_pfllib_decay]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
