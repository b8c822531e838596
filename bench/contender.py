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

The CNN (model kind "layers", preset "fedavgcnn": PFLlib's FedAvgCNN,
docs/models.md) has its own contenders, written as their users write
them: NumPy with im2col by stride tricks (sliding_window_view) and one
matrix product per layer and pass over the whole batch, backprop by hand;
PyTorch with a torch.nn module and torch.optim.SGD (PFLlib's client loop:
zero_grad, cross_entropy, backward, step; Ditto's personal step adds
lambda (v - w^t) to the gradients before its optimizer's step, as
PFLlib's PerturbedGradientDescent does).  The client optimizer opt.*
(SGD momentum, coupled weight decay; docs/optimizers.md) is torch.optim.SGD's
documented rule, with a new optimizer for every client update (pflref's
opt.state = reset).
"""
import json
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


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
# FedAvgCNN (PFLlib; pflref's "fedavgcnn" preset) by hand in NumPy
# ---------------------------------------------------------------------------

def cnn_shapes(model):
    """[(name, shape)] of FedAvgCNN's state_dict for input [C, H, W] and k
    classes: conv1 = Conv2d(C, 32, 5), ReLU, MaxPool2d(2); conv2 =
    Conv2d(32, 64, 5), ReLU, MaxPool2d(2); flatten; fc1 = Linear(dim, 512),
    ReLU; fc = Linear(512, k)."""
    C, H, W = model["input"]
    k = model["k"]
    h2, w2 = ((H - 4) // 2 - 4) // 2, ((W - 4) // 2 - 4) // 2
    dim = 64 * h2 * w2
    return [("conv1.0.weight", (32, C, 5, 5)), ("conv1.0.bias", (32,)),
            ("conv2.0.weight", (64, 32, 5, 5)), ("conv2.0.bias", (64,)),
            ("fc1.0.weight", (512, dim)), ("fc1.0.bias", (512,)),
            ("fc.weight", (k, 512)), ("fc.bias", (k,))]


def _im2col(x, kk):
    """x (nb, H, W, C), NHWC -> (nb·H'·W', C·kk·kk), columns in PyTorch's
    weight order (c, i, j), rows in (n, y, x) order; stride 1, no
    padding."""
    nb, H, W, C = x.shape
    win = sliding_window_view(x, (kk, kk), axis=(1, 2))  # nb,H',W',C,kk,kk
    return win.reshape(nb * (H - kk + 1) * (W - kk + 1), C * kk * kk)


def _pool(a, nb, H, W, C):
    """2 × 2 max pooling, stride 2, of a (nb·H·W, C) in NHWC order:
    (nb, H/2, W/2, C) and the argmax within each window (row by row, the
    first of equal entries, as PyTorch's kernel)."""
    win = a.reshape(nb, H // 2, 2, W // 2, 2, C).transpose(0, 1, 3, 5, 2, 4)
    win = win.reshape(nb, H // 2, W // 2, C, 4)
    arg = np.argmax(win, axis=-1)
    return np.take_along_axis(win, arg[..., None], axis=-1)[..., 0], arg


def _unpool(d, arg, nb, H, W, C):
    """The pool's backward: d (nb, H/2, W/2, C) to its argmaxes, as an
    (nb·H·W, C) array in NHWC order."""
    out = np.zeros((nb, H // 2, W // 2, C, 4))
    np.put_along_axis(out, arg[..., None], d[..., None], axis=-1)
    out = out.reshape(nb, H // 2, W // 2, C, 2, 2).transpose(0, 1, 4, 2, 5, 3)
    return out.reshape(nb * H * W, C)


class NumpyCNNBackend(NumpyBackend):
    """FedAvgCNN on a flat float64 parameter vector (state_dict order), the
    batch in NHWC inside; one matmul per layer and pass for the whole
    batch; gradient of the batch-mean cross-entropy by hand."""

    def __init__(self, model):
        self.shapes = cnn_shapes(model)
        self.C, self.H, self.W = model["input"]
        self.k = model["k"]
        self.offsets, o = [], 0
        for _, shp in self.shapes:
            self.offsets.append(o)
            o += int(np.prod(shp))
        self.P = o

    def _blocks(self, w):
        """conv weights as (O, C·25) matrices, the rest as their shapes."""
        out = []
        for (name, shp), o in zip(self.shapes, self.offsets):
            size = int(np.prod(shp))
            b = w[o:o + size]
            out.append(b.reshape(shp[0], -1) if len(shp) > 1 else b)
        return out

    def _forward(self, w, X):
        W1, b1, W2, b2, Wf1, bf1, Wf, bf = self._blocks(w)
        nb, C, H, W = len(X), self.C, self.H, self.W
        H1, W1_ = H - 4, W - 4
        H2, W2_ = H1 // 2 - 4, W1_ // 2 - 4
        x = X.reshape(nb, C, H, W).transpose(0, 2, 3, 1)      # NHWC
        col1 = _im2col(x, 5)                       # nb·H1·W1 × C·25
        A1 = col1 @ W1.T + b1                      # conv1
        P1, arg1 = _pool(np.maximum(A1, 0.0), nb, H1, W1_, 32)
        col2 = _im2col(P1, 5)                      # nb·H2·W2 × 800
        A2 = col2 @ W2.T + b2                      # conv2
        P2, arg2 = _pool(np.maximum(A2, 0.0), nb, H2, W2_, 64)
        F = P2.transpose(0, 3, 1, 2).reshape(nb, -1)  # torch.flatten (NCHW)
        A3 = F @ Wf1.T + bf1                       # fc1
        H3 = np.maximum(A3, 0.0)
        Z = H3 @ Wf.T + bf                         # fc
        return Z, (col1, A1, arg1, col2, A2, arg2, F, A3, H3)

    def grad(self, w, X, y):
        nb = len(y)
        H1, W1_ = self.H - 4, self.W - 4
        H2, W2_ = H1 // 2 - 4, W1_ // 2 - 4
        _, _, W2, _, Wf1, _, Wf, _ = self._blocks(w)
        Z, (col1, A1, arg1, col2, A2, arg2, F, A3, H3) = self._forward(w, X)
        E, _ = self._signal(Z, y)
        g = np.empty(self.P)
        gW1, gb1, gW2, gb2, gWf1, gbf1, gWf, gbf = self._blocks(g)
        gWf[:] = (E.T @ H3) / nb
        gbf[:] = E.sum(axis=0) / nb
        D3 = E @ Wf
        D3[A3 <= 0.0] = 0.0                        # relu' (0 at 0)
        gWf1[:] = (D3.T @ F) / nb
        gbf1[:] = D3.sum(axis=0) / nb
        dP2 = (D3 @ Wf1).reshape(nb, 64, H2 // 2, W2_ // 2).transpose(
            0, 2, 3, 1)
        D2 = _unpool(dP2, arg2, nb, H2, W2_, 64)
        D2[A2 <= 0.0] = 0.0
        gW2[:] = (D2.T @ col2) / nb
        gb2[:] = D2.sum(axis=0) / nb
        dcol = (D2 @ W2).reshape(nb, H2, W2_, 32, 5, 5)
        dP1 = np.zeros((nb, H1 // 2, W1_ // 2, 32))
        for i in range(5):                         # col2im
            for j in range(5):
                dP1[:, i:i + H2, j:j + W2_, :] += dcol[:, :, :, :, i, j]
        D1 = _unpool(dP1, arg1, nb, H1, W1_, 32)
        D1[A1 <= 0.0] = 0.0
        gW1[:] = (D1.T @ col1) / nb
        gb1[:] = D1.sum(axis=0) / nb
        return g

    def loss(self, w, X, y):
        return self._signal(self._forward(w, X)[0], y)[1] / len(y)


class SGD:
    """torch.optim.SGD's documented step on a flat vector (dampening 0, no
    Nesterov): d = g + λθ (weight decay); b = d at the first step, else
    b = μ b + d; θ ← θ − η b.  μ = λ = 0 is plain SGD, θ ← θ − η g.  A new
    one per client update (opt.state = reset)."""

    def __init__(self, hyper):
        self.eta = hyper["eta"]
        self.mu = hyper.get("opt.momentum", 0.0)
        self.wd = hyper.get("opt.weight_decay", 0.0)
        self.b = None

    def step(self, theta, d):
        if self.wd:
            d = d + self.wd * theta
        if self.mu:
            if self.b is None:
                self.b = d.copy()
            else:
                self.b *= self.mu
                self.b += d
            d = self.b
        theta -= self.eta * d


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
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        for i in S:                      # McMahan et al. Alg. 1
            X, y = data[i]
            wk = be.copy(w)
            opt = SGD(work["hyper"])     # θ ← θ − η ∇f with the defaults
            for b in batches(len(y), work["B"], work["epochs"]):
                opt.step(wk, be.grad(wk, X[b], y[b]))
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
    lam = work["hyper"]["lambda"]
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        for i in S:
            X, y = data[i]
            wk, vk = be.copy(w), v[i]
            gopt, popt = SGD(work["hyper"]), SGD(work["hyper"])
            for b in batches(len(y), work["B"], work["epochs"]):
                # personal step v ← v − η (∇F(v) + λ(v − w^t)), then the
                # global step, on the same batch
                popt.step(vk, be.grad(vk, X[b], y[b]) + lam * (vk - w))
                gopt.step(wk, be.grad(wk, X[b], y[b]))
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


# ---------------------------------------------------------------------------
# FedAvgCNN in PyTorch: a torch.nn module and torch.optim.SGD
# ---------------------------------------------------------------------------

def torch_cnn(model):
    """PFLlib's FedAvgCNN (system/flcore/trainmodel/models.py) as torch.nn
    writes it, in float64."""
    import torch
    nn = torch.nn
    C, k = model["input"][0], model["k"]
    dim = int(np.prod(cnn_shapes(model)[4][1][1:]))

    class FedAvgCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Sequential(nn.Conv2d(C, 32, 5), nn.ReLU(),
                                       nn.MaxPool2d(kernel_size=(2, 2)))
            self.conv2 = nn.Sequential(nn.Conv2d(32, 64, 5), nn.ReLU(),
                                       nn.MaxPool2d(kernel_size=(2, 2)))
            self.fc1 = nn.Sequential(nn.Linear(dim, 512), nn.ReLU())
            self.fc = nn.Linear(512, k)

        def forward(self, x):
            out = self.conv2(self.conv1(x))
            return self.fc(self.fc1(torch.flatten(out, 1)))

    return FedAvgCNN().double()


class TorchCNNBackend:
    """Data as NCHW float64 tensors; parameters as flat vectors between
    client updates (w, v_i), loaded into the module for each update."""

    def __init__(self, model):
        import torch
        torch.set_num_threads(1)
        self.torch = torch
        self.shape = tuple(model["input"])
        self.net = torch_cnn(model)
        self.net2 = torch_cnn(model)      # Ditto's personal model

    def asarray(self, a):
        a = np.ascontiguousarray(a, np.float64)
        if a.ndim == 2:                   # a client's X: n × C·H·W
            a = a.reshape((len(a),) + self.shape)
        return self.torch.from_numpy(a)

    def copy(self, w):
        return w.clone()

    def numpy(self, w):
        return w.detach().numpy()

    def labels(self, y):
        return self.torch.from_numpy(np.ascontiguousarray(y, np.int64))

    def load(self, net, w):
        """The module's parameters := w's entries (copied: torch's
        vector_to_parameters would make them views of w)."""
        o = 0
        with self.torch.no_grad():
            for p in net.parameters():
                p.copy_(w[o:o + p.numel()].view_as(p))
                o += p.numel()

    def vector(self, net):
        return self.torch.nn.utils.parameters_to_vector(
            net.parameters()).detach().clone()

    def optimizer(self, net, hyper):
        return self.torch.optim.SGD(
            net.parameters(), lr=hyper["eta"],
            momentum=hyper.get("opt.momentum", 0.0),
            weight_decay=hyper.get("opt.weight_decay", 0.0))

    def loss(self, w, X, y):
        self.load(self.net, w)
        with self.torch.no_grad():
            return float(self.torch.nn.functional.cross_entropy(
                self.net(X), y))


def torch_cnn_fedavg(be, work, data, w):
    F = be.torch.nn.functional
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        for i in S:                      # PFLlib clientavg.py's train()
            X, y = data[i]
            be.load(be.net, w)
            opt = be.optimizer(be.net, work["hyper"])
            for b in batches(len(y), work["B"], work["epochs"]):
                opt.zero_grad()
                F.cross_entropy(be.net(X[b]), y[b]).backward()
                opt.step()
            c = len(y) / n_sum
            wk = be.vector(be.net)
            acc = c * wk if acc is None else acc + c * wk
        w = acc
    return w, None


def torch_cnn_ditto(be, work, data, w, v):
    F = be.torch.nn.functional
    lam = work["hyper"]["lambda"]
    for t in range(work["T"]):
        S = clients_of_round(work, t)
        n_sum = float(sum(len(data[i][1]) for i in S))
        acc = None
        be.load(be.net, w)                # w^t, block by block
        ref = [p.detach().clone() for p in be.net.parameters()]
        for i in S:
            X, y = data[i]
            be.load(be.net, w)
            be.load(be.net2, v[i])
            gopt = be.optimizer(be.net, work["hyper"])
            popt = be.optimizer(be.net2, work["hyper"])
            for b in batches(len(y), work["B"], work["epochs"]):
                # personal: v ← v − η (∇F(v) + λ (v − w^t))
                popt.zero_grad()
                F.cross_entropy(be.net2(X[b]), y[b]).backward()
                with be.torch.no_grad():
                    for p, r in zip(be.net2.parameters(), ref):
                        p.grad.add_(p - r, alpha=lam)
                popt.step()
                # global: w_k ← w_k − η ∇F(w_k)
                gopt.zero_grad()
                F.cross_entropy(be.net(X[b]), y[b]).backward()
                gopt.step()
            v[i] = be.vector(be.net2)
            c = len(y) / n_sum
            wk = be.vector(be.net)
            acc = c * wk if acc is None else acc + c * wk
        w = acc
    return w, v


ALGORITHMS = {"fedavg": fedavg, "pfedme": pfedme, "ditto": ditto,
              "pflego": pflego}
TORCH_CNN = {"fedavg": torch_cnn_fedavg, "ditto": torch_cnn_ditto}
PERSONAL = {"pfedme", "ditto", "pflego"}
EVALUATED = {"fedavg": ("w",), "pfedme": ("w", "v"), "ditto": ("w", "v"),
             "pflego": ("v",)}


def main():
    backend, work_path = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    with open(work_path) as f:
        work = json.load(f)
    cnn = work["model"]["kind"] == "layers"    # preset fedavgcnn
    be = ({"numpy": NumpyCNNBackend, "torch": TorchCNNBackend} if cnn else
          {"numpy": NumpyBackend, "torch": TorchBackend})[backend](
              work["model"])
    algorithms = TORCH_CNN if cnn and backend == "torch" else ALGORITHMS
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
        w, v = algorithms[alg](be, work, data, w, v)
    else:
        w, v = algorithms[alg](be, work, data, w)
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
