"""pfl_numpy_pfedhn.py: pFedHN with a linear hypernetwork for the NumPy
candidate (pfl_numpy.py loads it), written from Shamsian, Navon, Fetaya,
Chechik (ICML 2021, arXiv 2103.04628v1, Algorithm 1) as the spec notes
(notes-lora-pfedhn.md §4, §4.1) give it, not from pflref's C code.

The server keeps the hypernetwork φ = (W_h, b_h) and one embedding v_i per
client, all given in the spec's init.hypernetwork; a client's model is
θ_i = W_h v_i + b_h (b_h absent with pfedhn.hn_bias = off).  Each round
names one client i: it trains θ̃_i from θ_i over its batches (η), returns
Δθ_i = θ̃_i − θ_i, and the server steps down the surrogate
½‖θ̃_i − h(v_i; φ)‖² at the round-start (W_h, v_i):
    W_h += α Δθ_i v_iᵀ,  b_h += α Δθ_i,  v_i += α_v W_hᵀ Δθ_i
(α_v = pfedhn.alpha_v, or α when unset).  Every client's final model is
h(v_j; φ).

The authors' code (AvivSham/pFedHN, notes §4.3; preset official) as
torch runs it: pfedhn.inner_opt = sgd_momentum_wd, a new SGD(momentum,
weight_decay) every round; pfedhn.outer_opt = sgd_momentum_wd, one
SGD(momentum, weight_decay) over W_h, b_h and the whole embedding table
(the embeddings at lr α_v), kept across rounds; pfedhn.clip = norm,
clip_grad_norm_ of the local gradient and of the hypernetwork's.

A client optimizer (opt.*, pfl_numpy_optim) takes lines 6-8's steps in
place of θ̃ ← θ̃ − η ∇L_i: one optimizer over θ̃'s blocks (a new one each
round under opt.state = reset, client i's own, kept between the rounds
that sample it, under client, one carried across every round under
server), at η; the server's step is unchanged.  It cannot be combined with
pfedhn.inner_opt or pfedhn.clip (both would set the local steps' rule).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "pfedhn"
BUGS = ("pfedhn-ascent", "pfedhn-embed-new-w", "pfedhn-embed-alpha",
        "pfedhn-bias-frozen", "pfedhn-all-embeddings", "pfedhn-eval-trained",
        "pfedhn-embed-frozen")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


OFFICIAL = {"pfedhn.outer_opt": "sgd_momentum_wd",
            "pfedhn.inner_opt": "sgd_momentum_wd", "pfedhn.clip": "norm"}


class _Softmax:
    """The softmax target: z = W x (+ b), loss −log softmax(z)_y, the batch
    mean; θ = (W (k × d, row-major), b (k)).  Every entry trains, the bias
    too (the hypernetwork generates all of θ)."""

    def __init__(self, model, client):
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=int)
        self.d, self.k = model["d"], model["k"]
        self.bias = model.get("bias", False)

    def grad(self, theta, batch):
        k, d = self.k, self.d
        X, y = self.X[batch], self.y[batch]
        Z = X @ theta[:k * d].reshape(k, d).T
        if self.bias:
            Z = Z + theta[k * d:]
        E = np.exp(Z - Z.max(axis=1, keepdims=True))
        E = E / E.sum(axis=1, keepdims=True)
        E[np.arange(len(batch)), y] -= 1.0          # softmax(z) − onehot(y)
        g = (E.T @ X).ravel()
        if self.bias:
            g = np.append(g, E.sum(axis=0))
        return g / len(batch)


def _clip(g, c):
    """torch.nn.utils.clip_grad_norm_: g · min(1, c / (‖g‖ + 1e-6))."""
    coef = c / (np.sqrt(np.sum(g * g)) + 1e-6)
    return g * coef if coef < 1.0 else g


def _torch_sgd(p, g, buf, lr, momentum, wd):
    """One torch.optim.SGD step; returns (p, buf)."""
    d = g + wd * p
    buf = d if buf is None else momentum * buf + d
    return p - lr * buf, buf


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"]["hyperparameters"]
    sw = spec["algorithm"].get("switches", {})
    hn = spec["init"].get("hypernetwork")
    if hn is None:
        raise base.Unsupported("pfedhn without init.hypernetwork")
    if spec["model"]["kind"] == "softmax":
        # the base candidate's softmax (the lora extension's) freezes the
        # bias; pFedHN generates and trains every entry
        clients = [_Softmax(spec["model"], c)
                   for c in spec["problem"]["clients"]]
    eta, alpha = hp["eta"], hp["alpha"]
    alpha_v = hp.get("pfedhn.alpha_v", alpha)
    if bug == "pfedhn-embed-alpha":
        alpha_v = alpha
    bias = sw.get("pfedhn.hn_bias", "on") == "on"
    if spec["algorithm"].get("preset", "paper") == "official":
        sw = dict(OFFICIAL, **sw)
    inner = sw.get("pfedhn.inner_opt", "sgd") == "sgd_momentum_wd"
    outer = sw.get("pfedhn.outer_opt", "sgd") == "sgd_momentum_wd"
    clip = sw.get("pfedhn.clip", "off") == "norm"
    c = hp.get("pfedhn.clip_norm", 50.0)
    opts = base.pfl_numpy_optim.for_run(spec)     # opt.*: None for plain SGD
    if opts is not None and (inner or clip):
        raise base.Unsupported("opt.* together with pfedhn.inner_opt or "
                               "pfedhn.clip")
    B_W = B_b = B_V = None
    W = np.array(hn["W"], dtype=float)                  # P x e
    b = np.array(hn["b"], dtype=float) if bias else np.zeros(W.shape[0])
    V = np.array(hn["v"], dtype=float)                  # N x e
    trained = {}
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        if len(rnd["clients"]) != 1:
            raise base.Unsupported("pfedhn samples one client per round")
        i = rnd["clients"][0]
        theta = W @ V[i] + b
        log("client_begin", "train", "theta", theta, round=t, client=i, step=0)
        if inner or clip:
            tilde, buf = theta.copy(), None
            for s, batch in enumerate(rnd["batches"][0], start=1):
                g = clients[i].grad(tilde, batch)
                if clip:
                    g = _clip(g, c)
                if inner:
                    tilde, buf = _torch_sgd(tilde, g, buf, eta,
                                            hp.get("pfedhn.inner_momentum", 0.9),
                                            hp.get("pfedhn.inner_wd", 5e-5))
                else:
                    tilde = tilde - eta * g
                log("step", "train", "theta", tilde, round=t, client=i, step=s)
        else:
            tilde = base.local_sgd(
                theta.copy(), clients[i], rnd["batches"][0], eta,
                lambda s, v, i=i, t=t: log("step", "train", "theta", v,
                                           round=t, client=i, step=s),
                opt=opts and opts.begin(0, i))
        log("client_end", "train", "theta", tilde, round=t, client=i)
        trained[i] = tilde
        delta = tilde - theta
        log("note", "train", "delta_theta", delta, round=t, client=i)
        if bug == "pfedhn-ascent":
            delta = -delta
        if outer or clip:
            # the dense gradient of (W_h, b_h, the embedding table)
            GW = -np.outer(delta, V[i])
            Gb = -delta if bias else np.zeros(0)
            GV = np.zeros_like(V)
            GV[i] = -(W.T @ delta)
            if clip:
                flat = _clip(np.concatenate([GW.ravel(), Gb, GV.ravel()]), c)
                GW = flat[:W.size].reshape(W.shape)
                Gb = flat[W.size:W.size + Gb.size]
                GV = flat[W.size + Gb.size:].reshape(V.shape)
            if outer:
                mu = hp.get("pfedhn.outer_momentum", 0.9)
                wd = hp.get("pfedhn.outer_wd", 1e-3)
                W, B_W = _torch_sgd(W, GW, B_W, alpha, mu, wd)
                if bias:
                    b, B_b = _torch_sgd(b, Gb, B_b, alpha, mu, wd)
                V, B_V = _torch_sgd(V, GV, B_V, alpha_v, mu, wd)
            else:
                W = W - alpha * GW
                if bias:
                    b = b - alpha * Gb
                V = V - alpha_v * GV
            log("note", "train", "W_h", W.reshape(-1), round=t, client=i)
            if bias:
                log("note", "train", "b_h", b, round=t, client=i)
            log("note", "train", "embedding", V[i], round=t, client=i)
            continue
        g_v = W.T @ delta                               # at the old W_h
        v_old = V[i].copy()
        W = W + alpha * np.outer(delta, v_old)
        if bias and bug != "pfedhn-bias-frozen":
            b = b + alpha * delta
        if bug == "pfedhn-embed-new-w":
            g_v = W.T @ delta
        step = alpha_v * g_v
        if bug == "pfedhn-embed-frozen":
            step = 0.0 * step
        if bug == "pfedhn-all-embeddings":
            V = V + step
        else:
            V[i] = v_old + step
        log("note", "train", "W_h", W.reshape(-1), round=t, client=i)
        if bias:
            log("note", "train", "b_h", b, round=t, client=i)
        log("note", "train", "embedding", V[i], round=t, client=i)
    v = [W @ V[j] + b for j in range(V.shape[0])]
    if bug == "pfedhn-eval-trained":
        v = [trained.get(j, v[j]) for j in range(len(v))]
    return {"v": v}
# SPDX-License-Identifier: GPL-3.0-or-later
