#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/contender.py: the NumPy and PyTorch contenders of make bench.

  /usr/bin/python3 bench/contender.py numpy|torch WORK.json

WORK.json (written by bench/run.py) names the data (.npz of N clients), the
model, the algorithm with its hyperparameters, the schedule settings and
w0; the contender loads the data, trains, evaluates every reported model
on every client's training data (as pflref does), saves the final
parameters (OUT_w.npy, and OUT_v.npy for personal models) and prints one
JSON line of timings: load, train, eval, total (seconds).

Both contenders make pflref's choices: clients of round t are numpy's
RandomState(client_seed + t).choice(N, m, replace=False) (pflref's
numpy_legacy sampler), trained and summed in ascending id; minibatches cut
each client's samples in index order into batches of B (split_once), the
same every epoch.  Every formula is the one the pflref algorithm file
cites (ref/algorithms/fedavg.c, pfedme.c, ditto.c, pflego.c).

NumPy: hand-written gradients (one matrix product per layer and pass).
PyTorch: torch.float64 on the CPU, one thread, gradients by autograd.
"""
import json
import sys
import time

import numpy as np


# ---------------------------------------------------------------------------
# Backends: gradients of the batch-mean cross-entropy of softmax / the mlp
# ---------------------------------------------------------------------------

class NumpyBackend:
    """Hand-written gradients on flat float64 parameter vectors."""

    def __init__(self, model):
        self.kind, self.d, self.k = model["kind"], model["d"], model["k"]
        self.h = model.get("h", 0)
        d, k, h = self.d, self.k, self.h
        if self.kind == "softmax":          # W (k×d), b (k)
            self.P = k * d + k
        else:                               # W1 (h×d), b1, W2 (k×h), b2
            self.P = h * d + h + k * h + k
            self.o_b1, self.o_W2 = h * d, h * d + h
            self.o_b2 = self.o_W2 + k * h

    def asarray(self, a):
        return np.asarray(a, dtype=np.float64)

    def copy(self, w):
        return w.copy()

    def numpy(self, w):
        return w

    def labels(self, y):
        return y

    def _views(self, w):
        d, k, h = self.d, self.k, self.h
        if self.kind == "softmax":
            return w[:k * d].reshape(k, d), w[k * d:]
        return (w[:h * d].reshape(h, d), w[self.o_b1:self.o_W2],
                w[self.o_W2:self.o_b2].reshape(k, h), w[self.o_b2:])

    @staticmethod
    def _signal(Z, y):
        """E = softmax(Z) − onehot(y) and the summed loss."""
        Z = Z - Z.max(axis=1, keepdims=True)
        e = np.exp(Z)
        s = e.sum(axis=1, keepdims=True)
        nb = len(y)
        loss = float(np.sum(np.log(s[:, 0]) - Z[np.arange(nb), y]))
        E = e / s
        E[np.arange(nb), y] -= 1.0
        return E, loss

    def grad(self, w, X, y):
        nb = len(y)
        g = np.empty(self.P)
        if self.kind == "softmax":
            W, b = self._views(w)
            E, _ = self._signal(X @ W.T + b, y)
            gW, gb = self._views(g)
            np.matmul(E.T, X, out=gW)
            gW *= 1.0 / nb
            gb[:] = E.sum(axis=0) / nb
            return g
        W1, b1, W2, b2 = self._views(w)
        A = X @ W1.T + b1
        H = np.maximum(A, 0.0)
        E, _ = self._signal(H @ W2.T + b2, y)
        gW1, gb1, gW2, gb2 = self._views(g)
        gW2[:] = (E.T @ H) / nb
        gb2[:] = E.sum(axis=0) / nb
        T = E @ W2
        T[A <= 0.0] = 0.0
        gW1[:] = (T.T @ X) / nb
        gb1[:] = T.sum(axis=0) / nb
        return g

    def loss(self, w, X, y):
        if self.kind == "softmax":
            W, b = self._views(w)
            Z = X @ W.T + b
        else:
            W1, b1, W2, b2 = self._views(w)
            Z = np.maximum(X @ W1.T + b1, 0.0) @ W2.T + b2
        return self._signal(Z, y)[1] / len(y)

    # PFLEGO's split of the mlp: body (W1, b1), head (W2, b2)
    def head_slice(self):
        return slice(self.o_W2, self.P)

    def features(self, w, X):
        W1, b1, _, _ = self._views(w)
        A = X @ W1.T + b1
        return A, np.maximum(A, 0.0)

    def head_grad(self, w, Phi, y, g):
        """g's head entries := ∇_head; returns E (nb × k, not / nb)."""
        nb = len(y)
        _, _, W2, b2 = self._views(w)
        E, _ = self._signal(Phi @ W2.T + b2, y)
        _, _, gW2, gb2 = self._views(g)
        gW2[:] = (E.T @ Phi) / nb
        gb2[:] = E.sum(axis=0) / nb
        return E

    def body_grad(self, w, A, E, X, g):
        nb = len(E)
        _, _, W2, _ = self._views(w)
        gW1, gb1, _, _ = self._views(g)
        T = E @ W2
        T[A <= 0.0] = 0.0
        gW1[:] = (T.T @ X) / nb
        gb1[:] = T.sum(axis=0) / nb


class TorchBackend:
    """PyTorch, float64 on the CPU, one thread, gradients by autograd."""

    def __init__(self, model):
        import torch
        torch.set_num_threads(1)
        self.torch = torch
        self.np = NumpyBackend(model)       # sizes and offsets
        self.kind, self.P = self.np.kind, self.np.P

    def asarray(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a, np.float64))

    def copy(self, w):
        return w.clone()

    def numpy(self, w):
        return w.detach().numpy()

    def labels(self, y):
        return self.torch.from_numpy(np.ascontiguousarray(y, np.int64))

    def _logits(self, w, X):
        F = self.torch.nn.functional
        d, k, h = self.np.d, self.np.k, self.np.h
        if self.kind == "softmax":
            return F.linear(X, w[:k * d].view(k, d), w[k * d:])
        o = self.np
        H = self.torch.relu(F.linear(X, w[:h * d].view(h, d),
                                     w[o.o_b1:o.o_W2]))
        return F.linear(H, w[o.o_W2:o.o_b2].view(k, h), w[o.o_b2:])

    def grad(self, w, X, y):
        w = w.detach().requires_grad_(True)
        loss = self.torch.nn.functional.cross_entropy(self._logits(w, X), y)
        (g,) = self.torch.autograd.grad(loss, w)
        return g

    def loss(self, w, X, y):
        with self.torch.no_grad():
            return float(self.torch.nn.functional.cross_entropy(
                self._logits(w, X), y))

    def head_slice(self):
        return slice(self.np.o_W2, self.P)

    def features(self, w, X):
        """A, Φ (detached); the body's graph is kept for body_grad."""
        o = self.np
        d, h = o.d, o.h
        self._body = w[:o.o_W2].detach().requires_grad_(True)
        A = self.torch.nn.functional.linear(
            X, self._body[:h * d].view(h, d), self._body[h * d:])
        self._Phi = self.torch.relu(A)
        return A.detach(), self._Phi.detach()

    def head_grad(self, w, Phi, y, g):
        o = self.np
        k, h = o.k, o.h
        head = w[o.o_W2:].detach().requires_grad_(True)
        Z = self.torch.nn.functional.linear(Phi, head[:k * h].view(k, h),
                                            head[k * h:])
        Z.retain_grad()
        loss = self.torch.nn.functional.cross_entropy(Z, y)
        loss.backward()
        g[o.o_W2:] = head.grad
        return Z.grad * len(y)              # per-sample ∂ℓ/∂z

    def body_grad(self, w, A, E, X, g):
        """Backpropagate (1/nb) E W2 through the cached body graph."""
        o = self.np
        k, h = o.k, o.h
        T = (E @ w[o.o_W2:o.o_b2].view(k, h)) / len(E)
        (gb,) = self.torch.autograd.grad(self._Phi, self._body,
                                         grad_outputs=T)
        g[:o.o_W2] = gb


# ---------------------------------------------------------------------------
# The algorithms (the loops of ref/algorithms/*.c)
# ---------------------------------------------------------------------------

def clients_of_round(work, t):
    N, m = work["N"], work["m"]
    if m == N:
        return list(range(N))
    rs = np.random.RandomState(work["client_seed"] + t)
    return sorted(int(i) for i in rs.choice(N, m, replace=False))


def batches(n, B, epochs):
    """split_once: index order cut into batches of B, every epoch."""
    B = n if B == 0 or B > n else B
    cuts = [slice(a, min(a + B, n)) for a in range(0, n, B)]
    return cuts * epochs


def fedavg(be, work, data, w):
    eta = work["hyper"]["eta"]
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        for i in S:                      # McMahan et al. Alg. 1
            X, y = data[i]
            wk = be.copy(w)
            for b in batches(len(y), work["B"], work["epochs"]):
                wk -= eta * be.grad(wk, X[b], y[b])
            c = len(y) / n_sum           # n_k / Σ_{S_t} n_j
            acc = c * wk if acc is None else acc + c * wk
        w = acc
    return w, None


def pfedme(be, work, data, w, v):
    h = work["hyper"]
    eta, lam, eta_p, K, beta = h["eta"], h["lambda"], h["eta_p"], h["K"], \
        h.get("beta", 1.0)
    for t in range(work["T"]):
        S = clients_of_round(work, t)    # pfedme.train = sampled
        acc = None
        for i in S:
            X, y = data[i]
            wl = be.copy(w)              # w_{i,0} ← w_t
            for b in batches(len(y), work["B"], work["epochs"]):
                theta = be.copy(wl)      # theta_start = reset
                for _ in range(K):       # θ ← θ − η_p (∇f + λ(θ − w_{i,r}))
                    theta -= eta_p * (be.grad(theta, X[b], y[b])
                                      + lam * (theta - wl))
                wl -= eta * lam * (wl - theta)   # l. 8
            v[i] = theta
            acc = wl if acc is None else acc + wl
        w = (1.0 - beta) * w + beta * (acc / len(S))   # l. 10, uniform
    return w, v


def ditto(be, work, data, w, v):
    h = work["hyper"]
    eta, lam = h["eta"], h["lambda"]
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        for i in S:
            X, y = data[i]
            wk, vk = be.copy(w), v[i]
            for b in batches(len(y), work["B"], work["epochs"]):
                # personal step, then the global step, on the same batch
                vk -= eta * (be.grad(vk, X[b], y[b]) + lam * (vk - w))
                wk -= eta * be.grad(wk, X[b], y[b])
            v[i] = vk
            c = len(y) / n_sum
            acc = c * wk if acc is None else acc + c * wk
        w = acc
    return w, v


def pflego(be, work, data, w, v):
    h = work["hyper"]
    rho, beta, tau = h["rho"], h["pflego.beta"], work["tau"]
    N, head = work["N"], be.head_slice()
    n_all = float(sum(len(data[i][1]) for i in range(N)))
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        scale = N / len(S)                       # I/r
        ghat = None
        for i in S:
            X, y = data[i]
            x = be.copy(v[i])
            x[:head.start] = w[:head.start]      # (θ_t, W_i)
            A, Phi = be.features(x, X)           # step 3
            g = be.copy(x)
            for _ in range(tau - 1):             # step 4
                be.head_grad(x, Phi, y, g)
                x[head] -= beta * g[head]
            E = be.head_grad(x, Phi, y, g)       # step 5
            be.body_grad(x, A, E, X, g)
            x[head] -= rho * scale * g[head]     # step 6 (seed)
            v[i] = x
            a = len(y) / n_all                   # α_i = N_i / N
            ghat = a * g if ghat is None else ghat + a * g
        ghat = scale * ghat
        w[:head.start] -= rho * ghat[:head.start]    # step 8 (sgd)
        for i in range(N):
            v[i][:head.start] = w[:head.start]
    return w, v


ALGORITHMS = {"fedavg": fedavg, "pfedme": pfedme, "ditto": ditto,
              "pflego": pflego}
PERSONAL = {"pfedme", "ditto", "pflego"}
EVALUATED = {"fedavg": ("w",), "pfedme": ("w", "v"), "ditto": ("w", "v"),
             "pflego": ("v",)}


def main():
    backend, work_path = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    with open(work_path) as f:
        work = json.load(f)
    be = (NumpyBackend if backend == "numpy" else TorchBackend)(work["model"])
    # load: the .npz into memory, as a NumPy user does
    with np.load(work["npz"]) as z:
        Xall, yall = z["X"], z["y"]
    data = [(be.asarray(Xall[i]), be.labels(yall[i]))
            for i in range(work["N"])]
    w = be.asarray(np.load(work["w0"]))
    t1 = time.perf_counter()
    c1 = time.process_time()
    alg = work["algorithm"]
    if alg in PERSONAL:
        v = [be.copy(w) for _ in range(work["N"])]
        w, v = ALGORITHMS[alg](be, work, data, w, v)
    else:
        w, v = ALGORITHMS[alg](be, work, data, w)
    t2 = time.perf_counter()
    c2 = time.process_time()
    losses = []
    for what in EVALUATED[alg]:
        for i in range(work["N"]):
            X, y = data[i]
            losses.append(be.loss(w if what == "w" else v[i], X, y))
    t3 = time.perf_counter()
    np.save(work["out"] + "_w.npy", be.numpy(w))
    if v is not None:
        np.save(work["out"] + "_v.npy", np.stack([be.numpy(x) for x in v]))
    t4 = time.perf_counter()
    print(json.dumps({"load": t1 - t0, "train": t2 - t1,
                      "train_cpu": c2 - c1, "eval": t3 - t2,
                      "save": t4 - t3, "total": t4 - t0,
                      "mean_loss": float(np.mean(losses))}))


if __name__ == "__main__":
    main()
