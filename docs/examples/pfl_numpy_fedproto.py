"""pfl_numpy_fedproto.py: FedProto for the NumPy candidate (pfl_numpy.py
loads it), written from Tan et al., "FedProto: Federated Prototype
Learning across Heterogeneous Clients" (AAAI 2022, arXiv 2105.00243,
Algorithm 1, Eqs. 4-6) and docs/algorithms/fedproto.md, not from pflref's
C code.

Each client keeps its own network v_i (w0 at the start); nothing but
class prototypes is shared.  The embedding f(x) is the input of the last
dense layer (the network is pfl_numpy_moon's Chain of dense and
relu/identity layers).  Per batch, by hand:
    L = mean_b CE(F(x_b), y_b) + λ mean_b R(f(x_b), C̄^(y_b)),
    R = ‖f − C‖² (fedproto.distance = mse: ‖f − C‖²/h), no R term for a
    class without a global prototype;
after the steps the client's prototypes are the class means of f over its
training set at the trained model (client_protos = during_training: of
every batch's f before its step); the server's C̄^(j) is the |D_{i,j}|-
weighted mean over the round's clients holding j (weights = uniform: the
plain mean) and replaces the old set.  The official preset's torch SGD
(momentum 0.5) is pfl_numpy_optim's, and so is every other opt.* (slot
0, LocalUpdate's optimizer; the running statistics are not among its
parameters).
Learning-rate decay (lr.*, PFLlib's -ld: the client's one optimizer, its
ExponentialLR stepped after each train(), clientproto.py:69-70): client
i's η in round t is η γ^t, or η γ^(the rounds i trained in before) under
lr.count = trainings (preset pfllib); λ does not decay.

Batch normalisation in a layer list's embedding (pfl_numpy_moon's Chain:
batchnorm1d, tanh): each step's forward is a training pass (the batch's
mean and biased variance), the gradient goes back through it, and the
client's running mean and variance then move (PyTorch's rule); the trained
model's prototypes come from an evaluation pass (the running statistics),
during_training's from the steps' training passes.
"""
import copy
import importlib
import sys

import numpy as np

ALGORITHM = "fedproto"
BUGS = ("fedproto-half-r", "fedproto-dim-swap", "fedproto-no-lambda",
        "fedproto-protos-start", "fedproto-protos-after-step",
        "fedproto-weights-swap", "fedproto-weights-size",
        "fedproto-missing-zero", "fedproto-keep-old", "fedproto-sequential",
        "fedproto-reset-model", "fedproto-lr-per-round")


def _preset(name):
    """The switches a preset sets (the authors' code, PFLlib)."""
    code = {"fedproto.distance": "mse",
            "fedproto.client_protos": "during_training",
            "fedproto.weights": "uniform"}
    if name == "official":
        return dict(code, **{"opt.momentum": 0.5})
    if name == "pfllib":
        return dict(code, **{"lr.count": "trainings"})
    return {}


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _grad(net, w, X, y, cbar, have, lam, mse, bug, keep):
    """(∇L on the batch, the batch's embeddings at w); keep receives the
    training pass's batchnorm values."""
    nb, L = len(X), len(net.layers)
    g = np.zeros_like(w)
    acts = net.forward(w, X, keep=keep)
    net.backward(w, acts, net.out_grad(acts[-1], y), L, g, 1.0 / nb, keep)
    F = acts[L - 1]
    cls = y.astype(int)
    use = have[cls] | (bug == "fedproto-missing-zero")
    target = np.where(have[cls][:, None], cbar[cls], 0.0)
    c = 1.0 if bug == "fedproto-half-r" else 2.0
    if mse != (bug == "fedproto-dim-swap"):
        c /= F.shape[1]
    dF = c * (F - target) * use[:, None]
    g_r = np.zeros_like(w)
    net.backward(w, acts, dF, L - 1, g_r, 1.0 / nb, keep)
    return g + (1.0 if bug == "fedproto-no-lambda" else lam) * g_r, F


def _aggregate(protos, counts, have_i, K, h, uniform, sizes, bug):
    """C̄ and |N_j| from the round's client prototypes (lists by client)."""
    num, den = np.zeros((K, h)), np.zeros(K)
    n_j = np.zeros(K)
    for C, cnt, hv, n_i in zip(protos, counts, have_i, sizes):
        a = np.ones(K) if uniform else (np.full(K, float(n_i))
                                        if bug == "fedproto-weights-size"
                                        else cnt)
        a = a * hv
        num += a[:, None] * C
        den += a
        n_j += hv
    ok = n_j > 0
    cbar = np.zeros((K, h))
    cbar[ok] = num[ok] / den[ok][:, None]
    return cbar, n_j


def run(spec, clients, w0, log, bug):
    base = _base()
    moon = importlib.import_module("pfl_numpy_moon")
    alg = spec["algorithm"]
    hp = _preset(alg.get("preset", "paper"))
    hp.update(alg.get("hyperparameters", {}))
    hp.update(alg.get("switches", {}))
    if hp.get("lr.scope", "all") != "all":
        raise base.Unsupported("fedproto with lr.scope %r" % hp["lr.scope"])
    decay = {"lr.schedule": hp.get("lr.schedule", "constant"),
             "lr.count": hp.get("lr.count", "rounds"),
             "lr.gamma": hp.get("lr.gamma"),
             "lr.step_rounds": hp.get("lr.step_rounds")}
    if bug == "fedproto-lr-per-round":
        decay["lr.count"] = "rounds"
    raw = spec["problem"].get("clients")
    if raw is None:
        raise base.Unsupported("fedproto needs inline clients")
    net = moon.Chain(spec["model"])
    if not net.ce:
        raise base.Unsupported("fedproto on a regression model")
    K, h = net.layers[-1][4], net.layers[-1][3]
    eta0, lam = hp["eta"], hp["fedproto.lambda"]
    mse = hp.get("fedproto.distance", "squared_l2") == "mse"
    during = hp.get("fedproto.client_protos", "trained") == "during_training"
    uniform = hp.get("fedproto.weights", "class_counts") == "uniform"
    if bug == "fedproto-weights-swap":
        uniform = not uniform
    opt_spec = copy.deepcopy(spec)
    opt_spec["algorithm"]["hyperparameters"] = {
        k: v for k, v in hp.items() if k.startswith("opt.")}
    optim = importlib.import_module("pfl_numpy_optim")
    opts = None if optim.plain(optim.options(opt_spec)) else optim.Optimizers(opt_spec)
    bn = len(net.buffers()) > 0     # the optimizer never steps them
    moving = hp.get("bn.running", "update") == "update"
    unbiased = hp.get("bn.running_var", "unbiased") == "unbiased"
    data = [(np.asarray(c["X"], float), np.asarray(c["y"], float)) for c in raw]
    v = [np.array(w0, dtype=float) for _ in raw]
    trained = [0] * len(raw)        # each client's train() calls so far
    cbar, have = np.zeros((K, h)), np.zeros(K, dtype=bool)
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        protos, counts, have_i, sizes = [], [], [], []
        cbar_t, have_t = cbar, have
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            X, y = data[i]
            x = np.array(w0, dtype=float) if bug == "fedproto-reset-model" else v[i]
            start = x.copy()
            log("client_begin", "train", "v", x, round=t, client=i, step=0)
            eta = eta0 * base.lr_factor(decay, t, trained[i])
            trained[i] += 1
            opt = opts.begin(0, i) if opts is not None else None
            S, n = np.zeros((K, h)), np.zeros(K)
            for s, batch in enumerate(batches, start=1):
                keep = {}
                g, F = _grad(net, x, X[batch], y[batch], cbar_t, have_t, lam,
                             mse, bug, keep)
                x = opt.step(x, g, eta) if opt is not None else x - eta * g
                if bn and moving:
                    net.move_running(x, keep, len(batch), unbiased)
                if during:
                    if bug == "fedproto-protos-after-step":
                        F = net.forward(x, X[batch])[len(net.layers) - 1]
                    np.add.at(S, y[batch].astype(int), F)
                    np.add.at(n, y[batch].astype(int), 1.0)
                log("step", "train", "v", x, round=t, client=i, step=s)
            v[i] = x
            log("client_end", "train", "v", x, round=t, client=i)
            if not during:
                at = start if bug == "fedproto-protos-start" else x
                F = net.forward(at, X, train=False)[len(net.layers) - 1]
                np.add.at(S, y.astype(int), F)
                np.add.at(n, y.astype(int), 1.0)
            hv = n > 0
            C = np.zeros((K, h))
            C[hv] = S[hv] / n[hv][:, None]
            log("note", "train", "C", C.ravel(), round=t, client=i)
            log("note", "train", "n_C", n, round=t, client=i)
            protos.append(C)
            counts.append(np.bincount(y.astype(int), minlength=K).astype(float))
            have_i.append(hv)
            sizes.append(len(X))
            if bug == "fedproto-sequential":
                cbar_t, n_j = _aggregate(protos, counts, have_i, K, h,
                                         uniform, sizes, bug)
                have_t = n_j > 0
        new, n_j = _aggregate(protos, counts, have_i, K, h, uniform, sizes,
                              bug)
        if bug == "fedproto-keep-old":
            keep = have & (n_j == 0)
            new[keep] = cbar[keep]
            n_j = np.where(keep, 1.0, n_j)
        cbar, have = new, n_j > 0
        log("note", "train", "C_bar", cbar.ravel(), round=t)
        log("note", "train", "N_bar", n_j, round=t)
    return {"v": v}
# SPDX-License-Identifier: GPL-3.0-or-later
