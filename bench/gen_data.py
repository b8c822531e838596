#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/gen_data.py: the benchmark's synthetic federations, generated once
into build/bench/data/ and reused (make bench never regenerates a file that
is already complete).

A pool is a folder of clients, client i's data depending only on (pool
seed, i), so the first N clients of a pool are the same whatever N: the
problems of 10, 100 and 1000 clients share their first clients.

  pool/clientNNNN_X.npy   n × d float64, u³ with u uniform in [0, 1) (mean
                          1/4, most near 0, pixel-like)
  pool/clientNNNN_y.npy   n int64 labels 0 … k−1
  pool/N<N>.npz           members X (N × n × d) and y (N × n): the NumPy and
                          PyTorch contenders' input (np.savez, uncompressed)
  pool/problem-npy-N<N>.json   pflref-problem/1 naming the .npy files
  pool/problem-json-N<N>.json  pflref-problem/1 with the data inline (only
                          when asked: the fallback for a pflref without the
                          .npy reader; large)

Pools (bench/run.py names them <shape>-n<n>, the seed 17 + 0 for the
MNIST shape, 17 + d otherwise): MNIST-shaped (d = 784 = 1 × 28 × 28, the
softmax, mlp and CNN rows), CIFAR-shaped (d = 3072 = 3 × 32 × 32, a row
the image flattened in NCHW order, channel by channel: the CNN rows; seed
17 + 3072), and d = 196, 3136 (scale-d).  All are drawn the same way.

Labels: a teacher shared by all clients plus a per-client tilt,
y = argmax(x W*ᵀ + c_i + noise), so every client is learnable and mildly
non-IID.  Deterministic: numpy default_rng(SeedSequence([seed, i])).
"""
import json
import os
import sys

import numpy as np


def client(seed, i, n, d, k):
    """Client i of the pool with the given seed: (X, y)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7919]))
    teacher = rng.standard_normal((k, d)) / np.sqrt(d / 3.0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
    X = rng.random((n, d)) ** 3         # sparse-ish, mean 1/4, like pixels
    tilt = 0.5 * rng.standard_normal(k)
    z = X @ teacher.T + tilt + 0.3 * rng.standard_normal((n, k))
    return X, np.argmax(z, axis=1).astype(np.int64)


def done_marker(folder, what):
    return os.path.join(folder, ".done-" + what)


def ensure_pool(folder, seed, N, n, d, k, want_json=False, log=print,
                npz=True):
    """Clients 0 … N−1 of the pool, their .npz of N (unless npz is false:
    a workload that runs pflref alone) and problem files; returns the
    .npz's path."""
    os.makedirs(folder, exist_ok=True)
    for i in range(N):
        xp = os.path.join(folder, "client%04d_X.npy" % i)
        yp = os.path.join(folder, "client%04d_y.npy" % i)
        if os.path.exists(done_marker(folder, "c%04d" % i)):
            continue
        X, y = client(seed, i, n, d, k)
        np.save(xp, X)
        np.save(yp, y)
        open(done_marker(folder, "c%04d" % i), "w").close()
    path = os.path.join(folder, "N%d.npz" % N)
    if npz and not os.path.exists(done_marker(folder, "npz%d" % N)):
        log("bench: writing %s" % path)
        X = np.empty((N, n, d))
        y = np.empty((N, n), dtype=np.int64)
        for i in range(N):
            X[i] = np.load(os.path.join(folder, "client%04d_X.npy" % i))
            y[i] = np.load(os.path.join(folder, "client%04d_y.npy" % i))
        np.savez(path, X=X, y=y)
        del X
        open(done_marker(folder, "npz%d" % N), "w").close()
    prob = os.path.join(folder, "problem-npy-N%d.json" % N)
    if not os.path.exists(prob):
        clients = [{"X": "client%04d_X.npy" % i, "y": "client%04d_y.npy" % i}
                   for i in range(N)]
        with open(prob, "w") as f:
            json.dump({"format": "pflref-problem/1",
                       "description": "bench pool %s, %d clients" % (
                           os.path.basename(folder), N),
                       "clients": clients}, f)
    if want_json:
        ensure_json_problem(folder, N)
    return path


def ensure_json_problem(folder, N):
    """The same clients with the data inline (repr of each double: exact)."""
    prob = os.path.join(folder, "problem-json-N%d.json" % N)
    if os.path.exists(done_marker(folder, "json%d" % N)):
        return prob
    with open(prob, "w") as f:
        f.write('{"format": "pflref-problem/1", "clients": [\n')
        for i in range(N):
            X = np.load(os.path.join(folder, "client%04d_X.npy" % i))
            y = np.load(os.path.join(folder, "client%04d_y.npy" % i))
            rows = ",".join("[" + ",".join(map(repr, r.tolist())) + "]"
                            for r in X)
            f.write('%s{"X": [%s], "y": [%s]}\n' % (
                "," if i else "", rows, ",".join(map(str, y.tolist()))))
        f.write("]}\n")
    open(done_marker(folder, "json%d" % N), "w").close()
    return prob


if __name__ == "__main__":
    folder, seed, N, n, d, k = sys.argv[1], *map(int, sys.argv[2:7])
    ensure_pool(folder, seed, N, n, d, k, want_json="--json" in sys.argv)
