#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/seed000/sweep_seed000.py: Exercise 14.7.2 of seed 000 in numpy.

Exercise 14.7.2 ("Tune the Interpolation Knob") extends Code 14.7.1 with
the interpolated model

    w(alpha) = alpha * w_local + (1 - alpha) * w_global

where w_local is the purely local fit and w_global the FedAvg model, and
asks, per client, for the test error over alpha in {0, 0.1, ..., 1}.

This script re-runs Code 14.7.1's computation itself, in numpy, on the
seed's own data (golden/seed000/problem.json): FedAvg for 400 rounds, every
client taking 5 full-batch gradient steps of size 0.03 on the squared loss
from the global model, the server taking np.mean; the purely local model of
every client, 200 full-batch steps of size 0.03 from zero.  It then sweeps
alpha_j = j / 10, j = 0..10 (the double nearest j/10, as pflref computes
it), and for every client records the test MSE and the test loss (equal for
the squared loss), the best alpha (lowest test MSE, ties to the smaller
alpha) and whether it lies strictly inside (0, 1).  Nothing here reads
pflref's output.

It also reports what the exercise asks to relate the best alpha to: the
client's tilt offset (|offset_k| = 1.5 at feature k for every client, by
construction) against the common backbone (re-drawn with numpy
default_rng(7): the first 12 normals of the stream, times 2; checked
against the data), the distance of the client's true weights from the
FedAvg model and from its local fit.

Writes golden/seed000/alpha-sweep.json (the curves and the table) and
prints the table.  Run with Debian's /usr/bin/python3:

    /usr/bin/python3 golden/seed000/sweep_seed000.py [--check]

--check recomputes everything and compares with the shipped
alpha-sweep.json instead of writing it (exit 1 on any difference).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = os.path.join(HERE, "problem.json")
OUT = os.path.join(HERE, "alpha-sweep.json")

# Code 14.7.1's constants.
K, D = 6, 12
LR = 0.03
ROUNDS, LOCAL_STEPS, LOCAL_ONLY_STEPS = 400, 5, 200
SEED, COMMON_SD, TILT = 7, 2.0, 1.5
# Exercise 14.7.2's grid {0, 0.1, ..., 1}.
G = 10


def load():
    with open(PROBLEM) as f:
        doc = json.load(f)
    train, test = [], []
    for c in doc["clients"]:
        train.append((np.array(c["X"], dtype=np.float64),
                      np.array(c["y"], dtype=np.float64)))
        test.append((np.array(c["X_test"], dtype=np.float64),
                     np.array(c["y_test"], dtype=np.float64)))
    return train, test


def grad(w, X, y):
    return (2.0 / len(y)) * (X.T @ (X @ w - y))


def mse(w, X, y):
    r = X @ w - y
    return float(r @ r / len(y))


def fedavg(train):
    w_global = np.zeros(D)
    for _ in range(ROUNDS):
        updated = []
        for k in range(K):
            wk = w_global.copy()
            for _ in range(LOCAL_STEPS):
                wk -= LR * grad(wk, *train[k])
            updated.append(wk)
        w_global = np.mean(updated, axis=0)
    return w_global


def local_fit(X, y):
    wk = np.zeros(D)
    for _ in range(LOCAL_ONLY_STEPS):
        wk -= LR * grad(wk, X, y)
    return wk


def backbone(train):
    """The seed's common backbone and client weights, re-drawn with
    default_rng(7) (the first draw of Code 14.7.1); the first training
    matrix drawn next must equal the file's, which shows the stream is the
    seed's."""
    rng = np.random.default_rng(SEED)
    common = COMMON_SD * rng.standard_normal(D)
    X0 = rng.standard_normal((len(train[0][1]), D))
    assert np.array_equal(X0, train[0][0]), "default_rng(7) is not the seed's stream"
    client_w = []
    for k in range(K):
        offset = np.zeros(D)
        offset[k % D] = TILT * (1 if k % 2 == 0 else -1)
        client_w.append(common + offset)
    return common, client_w


def sweep():
    train, test = load()
    w_global = fedavg(train)
    common, client_w = backbone(train)
    alphas = [j / G for j in range(G + 1)]          # (double)j / (double)G
    clients = []
    for k in range(K):
        h = local_fit(*train[k])
        curve = [mse(a * h + (1.0 - a) * w_global, *test[k]) for a in alphas]
        best = 0
        for j in range(1, G + 1):                   # ties keep the smaller alpha
            if curve[j] < curve[best]:
                best = j
        clients.append({
            "client": k,
            "test_mse": curve,
            "best_alpha": alphas[best],
            "best_index": best,
            "best_test_mse": curve[best],
            "interior": 0 < best < G,
            "tilt_feature": k % D,
            "tilt_offset": TILT * (1 if k % 2 == 0 else -1),
            "backbone_at_tilt": float(common[k % D]),
            "relative_tilt": float(TILT / abs(common[k % D])),
            "dist_true_to_global": float(np.linalg.norm(client_w[k] - w_global)),
            "dist_true_to_local": float(np.linalg.norm(client_w[k] - h)),
        })
    return {
        "format": "pflref-alpha-sweep/1",
        "description": "Seed 000 Exercise 14.7.2: per client, the test MSE of "
                       "w(alpha) = alpha w_local + (1 - alpha) w_global for "
                       "alpha = j/10, j = 0..10 (Code 14.7.1's FedAvg and "
                       "purely local models on golden/seed000/problem.json), "
                       "the best alpha (lowest test MSE, ties to the smaller "
                       "alpha) and whether it lies strictly inside (0, 1).",
        "generator": "golden/seed000/sweep_seed000.py (numpy, independent of pflref)",
        "numpy": np.__version__,
        "alpha": alphas,
        "clients": clients,
    }


def table(res):
    lines = ["client | " + " ".join(f"{a:5.1f}" for a in res["alpha"])
             + " | best alpha | interior"]
    for c in res["clients"]:
        lines.append(f"   {c['client']}   | "
                     + " ".join(f"{x:5.3f}" for x in c["test_mse"])
                     + f" | {c['best_alpha']:10.1f} | {'yes' if c['interior'] else 'no'}")
    lines.append("")
    lines.append("client | tilt (feature, offset) | backbone there | 1.5/|backbone| "
                 "| ||w_k - w_global|| | ||w_k - w_local|| | best alpha")
    for c in res["clients"]:
        lines.append(f"   {c['client']}   | ({c['tilt_feature']:2d}, {c['tilt_offset']:+.1f})"
                     f"            | {c['backbone_at_tilt']:+14.3f} | {c['relative_tilt']:14.3f} "
                     f"| {c['dist_true_to_global']:18.3f} | {c['dist_true_to_local']:17.3f} "
                     f"| {c['best_alpha']:.1f}")
    return "\n".join(lines)


def main():
    res = sweep()
    print(table(res))
    text = json.dumps(res, indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            shipped = json.load(f)
        same = json.loads(text) == {**shipped, "numpy": res["numpy"]}
        print("alpha-sweep.json:", "matches" if same else "DIFFERS")
        return 0 if same else 1
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, OUT)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
