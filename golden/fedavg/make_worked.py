#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Regenerate the FedAvg worked-example golden vectors with exact fractions.

Source: the worked example of shared/spec notes-fedavg-pfedme-ditto-perfedavg-apfl.md
section 1(g) (McMahan et al., AISTATS 2017, Algorithm 1).  Per-sample loss
l(w; y) = 1/2 (w - y)^2, i.e. the linear model with one feature x = 1, no bias,
loss half_squared; eta = 1/2; batches taken in listed order; w_0 = 0.
Client data: y = (1, 3), (-2), (0, 4, 8).  S_1 = {0, 2}, S_2 = {1, 2} (0-based).

Every number is computed here in exact rational arithmetic, independently of
pflref, and written as the correctly rounded double (float(Fraction)).

    /usr/bin/python3 golden/fedavg/make_worked.py [OUTDIR]

writes the vectors into OUTDIR (default: this folder).
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_golden as pg   # noqa: E402
DATA = [[F(1), F(3)], [F(-2)], [F(0), F(4), F(8)]]
ETA = F(1, 2)
TOL = {
    "atol": 1e-15,
    "rtol": 1e-14,
    "basis": "fp64 reference against exact rationals: each value is a few "
             "correctly rounded operations (at most 8 local steps and one "
             "weighted sum), so its error is below 64 ulp = 1.4e-14 relative; "
             "atol covers exact zeros.",
}


# req: fedavg.alg1.l11, fedavg.alg1.l12
def batches(n, B, E):
    """Split 0..n-1 once in index order into batches of B (None = full
    batch), ragged last batch kept, repeated for E epochs."""
    if B is None:
        one = [list(range(n))]
    else:
        one = [list(range(i, min(i + B, n))) for i in range(0, n, B)]
    return [b for _ in range(E) for b in one]


def client_update(w, ys, steps, t, k, traj):
    """ClientUpdate: w <- w - eta * mean_{j in b}(w - y_j) per batch b."""
    traj.append(rec("client_begin", t, k, 0, "w_local", w))
    # req: fedavg.alg1.l13, fedavg.alg1.l14
    for s, b in enumerate(steps, start=1):
        w = w - ETA * sum(w - ys[j] for j in b) / len(b)
        traj.append(rec("step", t, k, s, "w_local", w))
    traj.append(rec("client_end", t, k, None, "w_local", w))
    return w


def rec(event, t, k, s, name, value):
    r = {"event": event, "phase": "train", "round": t}
    if k is not None:
        r["client"] = k
    if s is not None:
        r["step"] = s
    r["name"] = name
    r["value"] = [float(value)]
    return r


def run(weighting, rounds, B, E):
    """rounds: list of client sets.  Returns (w_final, trajectory, schedule)."""
    # req: fedavg.alg1.l1, fedavg.alg1.l2
    w = F(0)
    traj, sched = [], []
    n_all = sum(len(d) for d in DATA)
    # req: fedavg.alg1.l3
    for t, sel in enumerate(rounds):
        traj.append(rec("round_begin", t, None, None, "w", w))
        plan = [batches(len(DATA[k]), B, E) for k in sel]
        sched.append({"clients": sel, "drawn": sel, "batches": plan})
        # req: fedavg.alg1.l6, fedavg.alg1.l7, fedavg.alg1.l10, fedavg.alg1.l15
        local = {k: client_update(w, DATA[k], plan[j], t, k, traj)
                 for j, k in enumerate(sel)}
        if weighting == "samples":      # n_k / m_t, m_t = sum over S_t
            # req: fedavg.alg1.l8
            m_t = sum(len(DATA[k]) for k in sel)
            # req: fedavg.alg1.l9
            w = sum(len(DATA[k]) * local[k] for k in sel) / m_t
        elif weighting == "uniform":    # 1/m
            w = sum(local.values()) / len(sel)
        else:                           # all_keep_old: n_k/n, unsampled keep w_t
            w = sum(len(DATA[k]) * local.get(k, w) for k in range(len(DATA))) / n_all
        traj.append(rec("server", t, None, None, "w", w))
    return w, traj, sched


def vector(vid, title, flags, weighting, rounds, B, E, expect_w):
    w, traj, sched = run(weighting, rounds, B, E)
    assert w == expect_w, (vid, w, expect_w)   # the notes' printed value
    spec = pg.given_spec(
        name=title,
        description=None,
        model={"kind": "linear", "d": 1, "loss": "half_squared",
               "bias": False},
        clients=[{"X": [[1.0]] * len(d), "y": [float(y) for y in d]}
                 for d in DATA],
        init={"kind": "zeros"},
        algorithm={"name": "fedavg", "hyperparameters": {"eta": float(ETA)},
                   "switches": {"fedavg.weights": weighting}},
        rounds=sched)
    prov = pg.provenance(
        "independent",
        f"{pg.NOTES} §1(g); McMahan et al., AISTATS 2017, Alg. 1",
        "golden/fedavg/make_worked.py (exact fractions)",
        {"w": w})
    return pg.vector(vid, title, prov, flags, spec, TOL,
                     {"final": {"w": [float(w)]}, "trajectory": traj})


# McMahan et al., Alg. 1 l. 4-5 on a generated schedule: the fraction C of
# the K clients, m = max(floor(C K), 1) clients per round, each round's S_t
# drawn by numpy's RandomState(client_seed + t).choice(K, m, replace=False)
# (the spec's sampler numpy_legacy, docs/sampling.md), ascending.  The draws
# are numpy's own, never pflref's; the rest is the exact run above.
GEN_C = F(2, 3)
GEN_SEED = 8
GEN_ROUNDS = 3


def generated_rounds(K, C, seed, T):
    """(m, [S_t ascending], [S_t in draw order]) of Alg. 1 l. 4-5."""
    import numpy as np
    # req: fedavg.alg1.l4
    m = max((C * K).numerator // (C * K).denominator, 1)
    # req: fedavg.alg1.l5
    drawn = [[int(x) for x in np.random.RandomState(seed + t).choice(K, m, replace=False)]
             for t in range(T)]
    return m, [sorted(d) for d in drawn], drawn


def generated_vector():
    K = len(DATA)
    m, rounds, drawn = generated_rounds(K, GEN_C, GEN_SEED, GEN_ROUNDS)
    assert m == 2 and drawn == [[2, 1], [1, 0], [0, 2]], (m, drawn)
    w, traj, _ = run("samples", rounds, 1, 1)
    vid = "fedavg/worked/notes-1g/generated-m"
    title = ("FedAvg on a generated schedule: C = 2/3 of K = 3 clients, "
             "m = max(floor(C K), 1) = 2, S_t drawn (numpy_legacy, seed 8)")
    spec = pg.given_spec(
        name=title,
        description="Alg. 1 l. 4: m = 2 is written as clients_per_round; "
                    "S_0 = {1, 2}, S_1 = {0, 1}, S_2 = {0, 2} come from the "
                    "sampler (drawn 2, 1; 1, 0; 0, 2).",
        model={"kind": "linear", "d": 1, "loss": "half_squared",
               "bias": False},
        clients=[{"X": [[1.0]] * len(d), "y": [float(y) for y in d]}
                 for d in DATA],
        init={"kind": "zeros"},
        algorithm={"name": "fedavg", "hyperparameters": {"eta": float(ETA)},
                   "switches": {"fedavg.weights": "samples"}},
        rounds=[])
    spec["schedule"] = {"kind": "generate", "rounds": GEN_ROUNDS,
                        "clients_per_round": m, "sampler": "numpy_legacy",
                        "client_seed": GEN_SEED,
                        "local": {"epochs": 1, "batch_size": 1}}
    prov = pg.provenance(
        "independent",
        f"{pg.NOTES} §1(g) data; McMahan et al., AISTATS 2017, Alg. 1 l. 4-5 "
        "(m = max(C K, 1)), S_t by numpy.random.RandomState(seed + t)"
        ".choice(K, m, replace=False)",
        "golden/fedavg/make_worked.py generated_vector (exact fractions; "
        "numpy's draws)",
        {"w": w})
    return pg.vector(vid, title, prov, ["aggregation-weights", "unsampled-client"],
                     spec, TOL, {"final": {"w": [float(w)]}, "trajectory": traj})


def main():
    out = pg.out_dir(sys.argv, HERE)
    two = [[0, 2], [1, 2]]
    vectors = [
        vector("fedavg/worked/notes-1g/samples",
               "FedAvg worked example, weights n_k/m_t (final paper), two rounds",
               ["aggregation-weights", "local-step-count"],
               "samples", two, 1, 1, F(1379, 320)),
        vector("fedavg/worked/notes-1g/uniform",
               "FedAvg worked example, weights 1/m, two rounds",
               ["aggregation-weights"], "uniform", two, 1, 1, F(391, 128)),
        vector("fedavg/worked/notes-1g/all-keep-old",
               "FedAvg worked example, weights n_k/n with unsampled clients keeping w_t",
               ["aggregation-weights"], "all_keep_old", two, 1, 1, F(2195, 576)),
        vector("fedavg/worked/notes-1g/ragged-batch",
               "FedAvg ClientUpdate with B = 2 on n = 3: batches {0,1}, {2}; ragged batch kept",
               ["ragged-batch"], "samples", [[2]], 2, 1, F(9, 2)),
        vector("fedavg/worked/notes-1g/full-batch-two-epochs",
               "FedAvg ClientUpdate with B = inf, E = 2 on client 1",
               ["local-step-count"], "samples", [[0]], None, 2, F(3, 2)),
    ]
    # The notes' round-1 values: 3.7 (samples), 3.375 (uniform), 37/12 (all_keep_old).
    for v, w1 in zip(vectors[:3], [F(37, 10), F(27, 8), F(37, 12)]):
        server = [r for r in v["expected"]["trajectory"] if r["event"] == "server"]
        assert server[0]["value"] == [float(w1)], (v["id"], server[0])
    vectors.append(generated_vector())
    for v in vectors:
        name = v["id"].split("/")[-1] + ".json"
        pg.write_vector(os.path.join(out, "worked-" + name), v)


if __name__ == "__main__":
    main()
