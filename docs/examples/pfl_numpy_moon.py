"""pfl_numpy_moon.py: MOON for the NumPy candidate (pfl_numpy.py loads it),
written from Li, He, Song, "Model-Contrastive Federated Learning" (CVPR
2021, arXiv 2103.16257v1, Algorithm 1) and docs/algorithms/moon.md, not
from pflref's C code.

The network is a chain of dense and relu/identity layers (the mlp, or a
layer list of dense and relu layers); the representation R_w(x) is the
output of every layer before the last dense one.  Per batch, autograd by
hand:
    ℓ = mean_j CE(F_w(x_j), y_j) + μ mean_j −log softmax([s_a, s_b])[0],
    s_a = cos(z_j, z_glob_j)/τ, s_b = cos(z_j, z_prev_j)/τ,
z_glob from w^t and z_prev from the party's last local model (w0 before
it first trains), both held fixed.  The server averages the round's local
models with weights n_i / Σ n_j.  The official preset's torch SGD
(momentum 0.9, weight decay 1e-5, a new optimizer per local training) is
pfl_numpy_optim's, and so is every other opt.* (Adam, AdamW, the momentum
forms, the decay scopes over the spec's split, the clip, opt.state); the
batch-norm statistics are not among its blocks.  lr.schedule decays η by
round (lr.count = trainings: by the party's own trainings before).

Batch normalisation (a batchnorm1d layer in a layer list's body, with
tanh allowed beside relu): the step's forward of w_i is in training mode
(each feature normalised with the batch's mean and biased variance), the
gradient of ℓ_sup + μ ℓ_con goes back through that batch-coupled layer,
and afterwards w_i's running mean and variance move with momentum ρ
(PyTorch's rule; unbiased variance unless bn.running_var = biased, none
under bn.running = frozen).  z_glob and z_prev come from evaluation passes
(each model's running mean and variance; moon.passes = eval) or training
passes (moon.passes = train).  bn.aggregate = parameters_only: a party
starts from w^t with its own running statistics (its last local model's)
and the server's statistics are the first listed party's.
"""
import copy
import importlib
import sys

import numpy as np

ALGORITHM = "moon"
BUGS = ("moon-con-sign", "moon-no-tau-chain", "moon-cos-no-proj",
        "moon-con-sum", "moon-prev-global", "moon-prev-w0",
        "moon-prev-first-global", "moon-glob-from-local", "moon-rep-output",
        "moon-uniform-weights")
PRESETS = {"official": {"opt.momentum": 0.9, "opt.weight_decay": 0.00001},
           "pfllib": {"lr.count": "trainings", "moon.passes": "train",
               "bn.aggregate": "parameters_only"}}


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


class Chain:
    """Dense and elementwise layers in order; parameters in state_dict
    order (each dense layer's W (out × in), then its b)."""

    def __init__(self, model):
        base = _base()
        self.ce = model.get("loss", "cross_entropy") == "cross_entropy"
        self.sq = 2.0 if model.get("loss") == "squared" else 1.0
        self.layers, off = [], 0

        def dense(n_in, n_out, bias):
            nonlocal off
            W = (off, off + n_in * n_out)
            off += n_in * n_out
            b = (off, off + n_out) if bias else None
            off += n_out if bias else 0
            self.layers.append(("dense", W, b, n_in, n_out))

        if model["kind"] == "mlp":
            bias = model.get("bias", True)
            dense(model["d"], model["h"], model.get("hidden_bias", bias))
            self.layers.append((model.get("activation", "relu"),))
            dense(model["h"], model.get("k", 1), bias)
        elif model["kind"] == "layers" and len(model["input"]) == 1:
            n = model["input"][0]
            for L in model["layers"]:
                if L["type"] == "dense":
                    dense(n, L["out"], L.get("bias", True))
                    n = L["out"]
                elif L["type"] in ("relu", "identity", "tanh"):
                    self.layers.append((L["type"],))
                elif L["type"] == "batchnorm1d":
                    # γ, β, running mean, running variance (n each)
                    self.layers.append(("bn", off, n, L.get("eps", 1e-5),
                                        L.get("momentum", 0.1)))
                    off += 4 * n
                else:
                    raise base.Unsupported("moon with a %s layer" % L["type"])
        else:
            raise base.Unsupported("moon on a %s model" % model["kind"])
        if self.layers[-1][0] != "dense":
            raise base.Unsupported("moon without an output dense layer")

    def buffers(self):
        """Indices of the running statistics in w."""
        idx = []
        for L in self.layers:
            if L[0] == "bn":
                idx.extend(range(L[1] + 2 * L[2], L[1] + 4 * L[2]))
        return np.array(idx, dtype=int)

    def forward(self, w, X, upto=None, train=True, keep=None):
        """Inputs of every layer, then the output of layer upto − 1; a
        batchnorm layer normalises with the batch's statistics (train) or
        w's running ones; keep (a dict) receives each training-mode
        batchnorm layer's (x̂, 1/σ, μ_B, s²_B) by layer index."""
        acts = [X]
        for li, L in enumerate(self.layers[:upto]):
            a = acts[-1]
            if L[0] == "dense":
                _, (w0, w1), b, n_in, n_out = L
                out = a @ w[w0:w1].reshape(n_out, n_in).T
                if b is not None:
                    out = out + w[b[0]:b[1]]
                acts.append(out)
            elif L[0] == "relu":
                acts.append(np.maximum(a, 0.0))
            elif L[0] == "tanh":
                acts.append(np.tanh(a))
            elif L[0] == "bn":
                _, o, n, eps, _ = L
                gam, bet = w[o:o + n], w[o + n:o + 2 * n]
                if train:
                    mean, var = a.mean(axis=0), a.var(axis=0)
                else:
                    mean, var = w[o + 2 * n:o + 3 * n], w[o + 3 * n:o + 4 * n]
                inv = 1.0 / np.sqrt(var + eps)
                xh = (a - mean) * inv
                if keep is not None and train:
                    keep[li] = (xh, inv, mean, var)
                acts.append(gam * xh + bet)
            else:
                acts.append(a)
        return acts

    def backward(self, w, acts, G, upto, g, scale, keep=None):
        """g += scale · Σ_rows ∂(G · layer output upto − 1)/∂w (keep: the
        training pass's batchnorm values, from forward)."""
        for i in range(upto - 1, -1, -1):
            L, a = self.layers[i], acts[i]
            if L[0] == "dense":
                _, (w0, w1), b, n_in, n_out = L
                g[w0:w1] += scale * (G.T @ a).ravel()
                if b is not None:
                    g[b[0]:b[1]] += scale * G.sum(axis=0)
                G = G @ w[w0:w1].reshape(n_out, n_in)
            elif L[0] == "relu":
                G = G * (a > 0)
            elif L[0] == "tanh":
                G = G * (1.0 - acts[i + 1] ** 2)
            elif L[0] == "bn":
                _, o, n, _, _ = L
                xh, inv, _, _ = keep[i]
                g[o:o + n] += scale * (G * xh).sum(axis=0)
                g[o + n:o + 2 * n] += scale * G.sum(axis=0)
                # y = γ x̂ with x̂ the batch-normalised input: the input's
                # signal through the batch's mean and variance too
                d = G * w[o:o + n]
                G = inv * (d - d.mean(axis=0) - xh * (d * xh).mean(axis=0))

    def move_running(self, w, keep, nb, unbiased):
        """w's running statistics after the training pass (PyTorch)."""
        for i, L in enumerate(self.layers):
            if L[0] != "bn" or i not in keep:
                continue
            _, o, n, _, rho = L
            _, _, mean, var = keep[i]
            v = var * nb / (nb - 1) if unbiased else var
            w[o + 2 * n:o + 3 * n] = (1 - rho) * w[o + 2 * n:o + 3 * n] + rho * mean
            w[o + 3 * n:o + 4 * n] = (1 - rho) * w[o + 3 * n:o + 4 * n] + rho * v

    def out_grad(self, Z, y):
        """Per-row ∂ℓ/∂z: softmax − one-hot, or s (ŷ − y)."""
        if self.ce:
            e = np.exp(Z - Z.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            p[np.arange(len(y)), y.astype(int)] -= 1.0
            return p
        return self.sq * (Z - y[:, None])


def _cos_grad(z, a, bug):
    """Rows: ∇_z cos(z, a) = a/(|z||a|) − cos z/|z|²."""
    nz = np.linalg.norm(z, axis=1, keepdims=True)
    na = np.linalg.norm(a, axis=1, keepdims=True)
    cos = np.sum(z * a, axis=1, keepdims=True) / (nz * na)
    if bug == "moon-cos-no-proj":
        return a / (nz * na), cos
    return a / (nz * na) - cos * z / nz ** 2, cos


def _grad(net, w, w_glob, w_prev, X, y, mu, tau, bug, keep, train_ref):
    """∇ of ℓ_sup + μ ℓ_con on the batch (X, y); keep receives the training
    pass's batchnorm values."""
    nb, L = len(X), len(net.layers)
    g = np.zeros_like(w)
    acts = net.forward(w, X, keep=keep)
    net.backward(w, acts, net.out_grad(acts[-1], y), L, g, 1.0 / nb, keep)
    if mu == 0.0:
        return g
    rep = L if bug == "moon-rep-output" else L - 1
    z = acts[rep]
    z_glob = net.forward(w if bug == "moon-glob-from-local" else w_glob, X,
                         rep, train_ref)[-1]
    z_prev = net.forward(w_prev, X, rep, train_ref)[-1]
    ga, ca = _cos_grad(z, z_glob, bug)
    gb, cb = _cos_grad(z, z_prev, bug)
    # softmax over [ca, cb]/τ: ∂(−log p_a)/∂(cb/τ) = p_b
    p_b = 1.0 / (1.0 + np.exp((ca - cb) / tau))
    dz = (p_b if bug == "moon-no-tau-chain" else p_b / tau) * (gb - ga)
    g_con = np.zeros_like(w)
    net.backward(w, acts, dz, rep, g_con,
                 1.0 if bug == "moon-con-sum" else 1.0 / nb, keep)
    return g - mu * g_con if bug == "moon-con-sign" else g + mu * g_con


def run(spec, clients, w0, log, bug):
    base = _base()
    alg = spec["algorithm"]
    hp = dict(PRESETS.get(alg.get("preset", "paper"), {}))
    hp.update(alg.get("hyperparameters", {}))
    hp.update(alg.get("switches", {}))
    if any(k.startswith("lr.") and k not in (
            "lr.count", "lr.schedule", "lr.gamma", "lr.step_rounds")
           for k in hp):
        raise base.Unsupported("moon with lr.scope")
    lr = {"lr.schedule": hp.get("lr.schedule", "constant"),
          "lr.count": hp.get("lr.count", "rounds"),
          "lr.gamma": hp.get("lr.gamma", 1.0),
          "lr.step_rounds": hp.get("lr.step_rounds", 1)}
    raw = spec["problem"].get("clients")
    if raw is None:
        raise base.Unsupported("moon needs inline clients")
    net = Chain(spec["model"])
    eta, mu, tau = hp["eta"], hp["moon.mu"], hp["moon.tau"]
    buf = net.buffers()
    train_ref = hp.get("moon.passes", "eval") == "train"
    own = hp.get("bn.aggregate", "average") == "parameters_only" and len(buf)
    moving = hp.get("bn.running", "update") == "update"
    unbiased = hp.get("bn.running_var", "unbiased") == "unbiased"
    opt_spec = copy.deepcopy(spec)
    opt_spec["algorithm"]["hyperparameters"] = {
        k: v for k, v in hp.items() if k.startswith("opt.")}
    optim = importlib.import_module("pfl_numpy_optim")
    opts = None if optim.plain(optim.options(opt_spec)) else optim.Optimizers(opt_spec)
    data = [(np.asarray(c["X"], float), np.asarray(c["y"], float)) for c in raw]
    w = np.array(w0, dtype=float)
    prev = [w.copy() for _ in raw]
    trained = set()
    count = [0] * len(raw)          # each party's trainings so far
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        w_t, acc = w.copy(), np.zeros_like(w)
        n_t = sum(len(data[i][0]) for i in rnd["clients"])
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            w_prev = prev[i]
            if bug == "moon-prev-global" or (bug == "moon-prev-first-global"
                                             and i not in trained):
                w_prev = w_t
            if bug == "moon-prev-w0":
                w_prev = np.array(w0, dtype=float)
            trained.add(i)
            eta_i = eta * base.lr_factor(lr, t, count[i])
            count[i] += 1
            x = w_t.copy()
            if own:
                x[buf] = prev[i][buf]     # the party's own statistics
            log("client_begin", "train", "w_local", x, round=t, client=i, step=0)
            opt = opts.begin(0, i) if opts is not None else None
            X, y = data[i]
            for s, batch in enumerate(batches, start=1):
                keep = {}
                g = _grad(net, x, w_t, w_prev, X[batch], y[batch], mu, tau,
                          bug, keep, train_ref)
                x = opt.step(x, g, eta_i) if opt is not None else x - eta_i * g
                if moving:
                    net.move_running(x, keep, len(batch), unbiased)
                log("step", "train", "w_local", x, round=t, client=i, step=s)
            prev[i] = x
            log("client_end", "train", "w_local", x, round=t, client=i)
            c = (1.0 / len(rnd["clients"]) if bug == "moon-uniform-weights"
                 else len(X) / n_t)
            acc = acc + c * x
        if own and rnd["clients"]:
            acc[buf] = prev[base.first_upload(rnd, rnd["clients"])][buf]
        w = acc
        log("server", "train", "w", w, round=t)
    return {"w": w, "v": prev}
# SPDX-License-Identifier: GPL-3.0-or-later
