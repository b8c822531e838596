#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/seed000/export_seed000.py: export the data of seed 000, Code 14.7.1.

Replays the data generation of Code 14.7.1 (seed 000, "Personalization
Versus Global and Local, Measured") with numpy default_rng(7), in the
seed's own draw order:

    common = 2.0 * standard_normal(d)                      d = 12
    train  = [make(k, 14)  for k in range(6)]   make: X (n x d), then n noises
    test   = [make(k, 400) for k in range(6)]
    y      = X @ (common + offset_k) + 1.0 * noise,  offset_k[k % d] = +-1.5

and writes golden/seed000/problem.json (format "pflref-problem/1"), every
number printed with Python's repr (the shortest string that reads back to
the same double).

It then re-runs the seed's whole computation (FedAvg 400 rounds x 5 local
steps, then 200 fine-tuning steps per client, and 200 purely local steps
from zero, lr = 0.03, squared loss) on the exported arrays, prints the
table, and asserts that it equals Output 14.7.1 as printed in the seed, to
its three decimals.  The printed table is the independent truth: a match
shows the exported data is the seed's data.

Run with Debian's /usr/bin/python3 (python3-numpy 1.24.2 reproduces
default_rng(7) exactly):

    /usr/bin/python3 golden/seed000/export_seed000.py

Exit status 0 when the table matches and problem.json was written.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "problem.json")

# Code 14.7.1's constants.
SEED = 7
K, D = 6, 12
N_PER, N_TEST = 14, 400
LR, NOISE = 0.03, 1.0
COMMON_SD, TILT = 2.0, 1.5

# Output 14.7.1 as printed in the seed: (global, local, personalized).
EXPECTED_ROWS = [
    (3.763, 4.314, 1.913),
    (3.154, 3.699, 3.505),
    (3.014, 4.031, 1.622),
    (2.463, 2.026, 2.447),
    (2.546, 5.203, 2.402),
    (4.186, 7.982, 3.112),
]
EXPECTED_MEAN = (3.188, 4.543, 2.500)
EXPECTED_WORST = (4.186, 7.982, 3.505)


def generate():
    """The seed's data generation, draw for draw."""
    rng = np.random.default_rng(SEED)
    common = COMMON_SD * rng.standard_normal(D)
    client_w = []
    for k in range(K):
        offset = np.zeros(D)
        offset[k % D] = TILT * (1 if k % 2 == 0 else -1)
        client_w.append(common + offset)

    def make(k, n):
        X = rng.standard_normal((n, D))
        return X, X @ client_w[k] + NOISE * rng.standard_normal(n)

    train = [make(k, N_PER) for k in range(K)]
    test = [make(k, N_TEST) for k in range(K)]
    return train, test


def run_experiment(train, test):
    """The seed's FedAvg / fine-tune / local computation, unchanged."""
    def grad(w, X, y):
        return (2.0 / len(y)) * (X.T @ (X @ w - y))

    def mse(w, X, y):
        return float((X @ w - y) @ (X @ w - y) / len(y))

    w_global = np.zeros(D)
    for _ in range(400):
        updated = []
        for k in range(K):
            wk = w_global.copy()
            for _ in range(5):
                wk -= LR * grad(wk, *train[k])
            updated.append(wk)
        w_global = np.mean(updated, axis=0)
    global_test = [mse(w_global, *test[k]) for k in range(K)]

    pers_test = []
    for k in range(K):
        wk = w_global.copy()
        for _ in range(200):
            wk -= LR * grad(wk, *train[k])
        pers_test.append(mse(wk, *test[k]))

    local_test = []
    for k in range(K):
        wk = np.zeros(D)
        for _ in range(200):
            wk -= LR * grad(wk, *train[k])
        local_test.append(mse(wk, *test[k]))
    return global_test, local_test, pers_test


def number(x):
    """Shortest round-trip decimal of a double."""
    return repr(float(x))


def matrix(X, indent):
    rows = ["[" + ", ".join(number(v) for v in row) + "]" for row in X]
    sep = ",\n" + " " * indent
    return "[" + sep.join(rows) + "]"


def vector(y):
    return "[" + ", ".join(number(v) for v in y) + "]"


def write_problem(train, test, path):
    head = {
        "format": "pflref-problem/1",
        "description": "Seed 000, Code 14.7.1: 6 clients, common backbone "
                       "N(0, 2^2 I_12) plus a +-1.5 tilt at feature k mod 12, "
                       "14 train and 400 test samples each, label noise "
                       "N(0, 1); numpy default_rng(7)",
        "provenance": {
            "kind": "independent",
            "generator": "golden/seed000/export_seed000.py",
            "source": "seed 000, Code 14.7.1, numpy default_rng(7)",
            "numpy": np.__version__,
        },
    }
    parts = ["{"]
    for key, value in head.items():
        parts.append(" " + json.dumps(key) + ": " + json.dumps(value) + ",")
    parts.append(' "clients": [')
    for k in range(K):
        (X, y), (Xt, yt) = train[k], test[k]
        parts.append('  {"X": ' + matrix(X, 9) + ",")
        parts.append('   "y": ' + vector(y) + ",")
        parts.append('   "X_test": ' + matrix(Xt, 14) + ",")
        parts.append('   "y_test": ' + vector(yt) + "}"
                     + ("," if k < K - 1 else ""))
    parts.append(" ]")
    parts.append("}")
    text = "\n".join(parts) + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return text


def check_round_trip(text, train, test):
    """The file reads back to exactly the generated doubles."""
    doc = json.loads(text)
    assert doc["format"] == "pflref-problem/1"
    assert len(doc["clients"]) == K
    for k, c in enumerate(doc["clients"]):
        for key, arr in (("X", train[k][0]), ("y", train[k][1]),
                         ("X_test", test[k][0]), ("y_test", test[k][1])):
            back = np.array(c[key], dtype=np.float64)
            assert back.shape == arr.shape, (k, key, back.shape)
            assert np.array_equal(back, arr), (k, key)


def main():
    train, test = generate()
    g, l, p = run_experiment(train, test)

    print("client |  global  |  local   | personalized")
    for k in range(K):
        print(f"   {k}   | {g[k]:8.3f} | {l[k]:8.3f} | {p[k]:11.3f}")
    print(f"  mean | {np.mean(g):8.3f} | {np.mean(l):8.3f} | "
          f"{np.mean(p):11.3f}")
    print(f"  worst| {np.max(g):8.3f} | {np.max(l):8.3f} | "
          f"{np.max(p):11.3f}")

    def same(x, printed):
        return f"{x:.3f}" == f"{printed:.3f}"

    bad = []
    for k in range(K):
        for name, got, want in zip(("global", "local", "personalized"),
                                   (g[k], l[k], p[k]), EXPECTED_ROWS[k]):
            if not same(got, want):
                bad.append(f"client {k} {name}: {got:.6f} != {want:.3f}")
    for name, col, want_mean, want_worst in zip(
            ("global", "local", "personalized"), (g, l, p),
            EXPECTED_MEAN, EXPECTED_WORST):
        if not same(np.mean(col), want_mean):
            bad.append(f"mean {name}: {np.mean(col):.6f} != {want_mean:.3f}")
        if not same(np.max(col), want_worst):
            bad.append(f"worst {name}: {np.max(col):.6f} != "
                       f"{want_worst:.3f}")
    if bad:
        print("export_seed000: the table differs from Output 14.7.1:",
              file=sys.stderr)
        for line in bad:
            print("  " + line, file=sys.stderr)
        return 1

    text = write_problem(train, test, OUT)
    check_round_trip(text, train, test)
    print(f"Output 14.7.1 reproduced; wrote {os.path.relpath(OUT)} "
          f"(numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
