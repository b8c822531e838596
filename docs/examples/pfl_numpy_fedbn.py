"""pfl_numpy_fedbn.py: FedBN for the NumPy candidate (pfl_numpy.py loads
it), written from Li, Jiang, Zhang, Kamp, Dou (ICLR 2021, arXiv
2102.07623v2, Algorithm 1) and torch.nn.BatchNorm1d as the spec notes
(notes-fedbn-fedfomo.md §1) give them, not from pflref's C code.

The model is the mlp with batch normalisation after the hidden affine map
(docs/models.md): a = X W1ᵀ + b1, training mode â = (a − mean)/√(var + ε)
with the batch mean and biased variance, u = γ â + β, φ = relu(u) (or the
identity), z = φ W2ᵀ + b2; parameters in state_dict order W1, b1, bn_gamma,
bn_beta, bn_running_mean, bn_running_var, W2, b2.  The base candidate's Mlp
has no BN, so this module reads a BN model's clients and blocks itself (it
wraps pfl_numpy.load_clients and model_blocks for "bn": true).

Round t: every participant starts from the server's non-BN entries and its
own BN entries (fedbn.bn = shared: the server's whole model), runs SGD over
its batches (or the client optimizer opt.*, pfl_numpy_optim.py, over the
non-buffer entries), moving r_μ ← (1 − ρ) r_μ + ρ mean and r_v ← (1 − ρ) r_v +
ρ m/(m − 1) var (biased: ρ var) after each batch's forward pass (bn.running =
frozen: r_μ, r_v left as they are, the batch statistics still normalising); the server
averages the non-BN entries (1/m, or n_k/Σ n_j with fedbn.weights = samples)
and keeps its own BN entries; every client then holds the new non-BN entries
and its own BN.

On a layer list ("kind": "layers", pfl_numpy_layers.py) the BN entries
are every batchnorm layer's blocks (its bn group), and the layer list's
own training pass and running-statistics update (Layers.grad, .track) run
the same round.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedbn"
BUGS = ("fedbn-unbiased-batch-variance", "fedbn-eps-outside-sqrt",
        "fedbn-bn-averaged", "fedbn-running-stats-in-training",
        "fedbn-momentum-flipped", "fedbn-backward-stats-constant",
        "fedbn-running-var-biased", "fedbn-lr-per-round")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _bug():
    return _base().BUG


class BnMlp:
    """One client's data on the BN mlp; the layout of the parameters."""

    def __init__(self, model, client):
        self.d, self.h, self.k = model["d"], model["h"], model.get("k", 1)
        self.loss = model.get("loss", "cross_entropy")
        self.relu = model.get("activation", "relu") == "relu"
        self.eps = float(model.get("bn_eps", 1e-5))
        self.rho = float(model.get("bn_momentum", 0.1))
        bias = model.get("bias", True)
        hb = model.get("hidden_bias", bias)
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=float)
        self.n = len(self.y)
        d, h, k = self.d, self.h, self.k
        self.at, off = {}, 0
        for name, size, on in (("W1", h * d, True), ("b1", h, hb),
                               ("bn_gamma", h, True), ("bn_beta", h, True),
                               ("bn_running_mean", h, True),
                               ("bn_running_var", h, True),
                               ("W2", k * h, True), ("b2", k, bias)):
            if on:
                self.at[name] = (off, off + size)
                off += size
        self.P = off
        self.bn = np.zeros(off, dtype=bool)
        self.bn[self.at["bn_gamma"][0]:self.at["bn_running_var"][1]] = True

    def part(self, theta, name, shape):
        if name not in self.at:
            return np.zeros(shape)
        lo, hi = self.at[name]
        return theta[lo:hi].reshape(shape)

    def grad(self, theta, batch):
        """The batch-mean loss's gradient in training mode, and the batch
        mean and biased variance of a (for the running statistics)."""
        bug = _bug()
        X, m = self.X[batch], len(batch)
        W1 = self.part(theta, "W1", (self.h, self.d))
        gam = self.part(theta, "bn_gamma", (self.h,))
        A = X @ W1.T + self.part(theta, "b1", (self.h,))
        mean, var = A.mean(axis=0), A.var(axis=0)
        if bug == "fedbn-running-stats-in-training":
            mean = self.part(theta, "bn_running_mean", (self.h,))
            var = self.part(theta, "bn_running_var", (self.h,))
        if bug == "fedbn-unbiased-batch-variance" and m > 1:
            var = A.var(axis=0, ddof=1)
        s = (np.sqrt(var) + self.eps if bug == "fedbn-eps-outside-sqrt"
             else np.sqrt(var + self.eps))
        xh = (A - mean) / s
        U = gam * xh + self.part(theta, "bn_beta", (self.h,))
        Phi = np.maximum(U, 0.0) if self.relu else U
        W2 = self.part(theta, "W2", (self.k, self.h))
        Z = Phi @ W2.T + self.part(theta, "b2", (self.k,))
        if self.loss == "cross_entropy":
            # softmax(z) without the max shift: the vectors' logits are
            # small, and a shift would be invisible to them
            E = np.exp(Z)
            E /= E.sum(axis=1, keepdims=True)
            E[np.arange(m), self.y[batch].astype(int)] -= 1.0
        else:
            scale = 2.0 if self.loss == "squared" else 1.0
            E = scale * (Z - self.y[batch][:, None])
        E = E / m                                   # ∂(mean loss)/∂z
        G = E @ W2
        if self.relu:
            G = np.where(U > 0.0, G, 0.0)           # relu'(0) = 0
        g = np.zeros(self.P)
        self._put(g, "W2", E.T @ Phi)
        self._put(g, "b2", E.sum(axis=0))
        self._put(g, "bn_gamma", (G * xh).sum(axis=0))
        self._put(g, "bn_beta", G.sum(axis=0))
        if bug == "fedbn-backward-stats-constant":
            dA = G * gam / s
        else:   # ∂/∂a through the batch mean and variance
            dA = gam / s * (G - G.mean(axis=0) - xh * (G * xh).mean(axis=0))
        self._put(g, "W1", dA.T @ X)
        self._put(g, "b1", dA.sum(axis=0))
        return g, A.mean(axis=0), A.var(axis=0), m

    def _put(self, g, name, value):
        if name in self.at:
            lo, hi = self.at[name]
            g[lo:hi] = np.ravel(value)

    def running(self, theta, mean, var, m, biased):
        bug = _bug()
        if not biased and bug != "fedbn-running-var-biased":
            var = var * m / (m - 1)
        keep, take = 1.0 - self.rho, self.rho
        if bug == "fedbn-momentum-flipped":
            keep, take = take, keep
        for name, stat in (("bn_running_mean", mean), ("bn_running_var", var)):
            lo, hi = self.at[name]
            theta[lo:hi] = keep * theta[lo:hi] + take * stat


def _install():
    """Read a BN model's clients and blocks here: the base Mlp and
    model_blocks have no BN layer."""
    base = _base()
    if getattr(base, "_fedbn_installed", False):
        return
    load, blocks = base.load_clients, base.model_blocks

    def load_clients(spec, base_dir):
        if spec["model"].get("bn"):
            if "clients" not in spec["problem"]:
                raise base.Unsupported("fedbn needs inline clients")
            return [BnMlp(spec["model"], c) for c in spec["problem"]["clients"]]
        return load(spec, base_dir)

    def model_blocks(model):
        if not model.get("bn"):
            return blocks(model)
        at = BnMlp(model, {"X": [], "y": []}).at
        groups = {"W1": ("input",), "b1": ("input",), "W2": ("head",),
                  "b2": ("head",)}
        return [(name, lo, hi - lo, groups.get(name, ()))
                for name, (lo, hi) in at.items()]

    base.load_clients, base.model_blocks = load_clients, model_blocks
    base._fedbn_installed = True


def run(spec, clients, w0, log, bug):
    base = _base()
    layered = spec["model"]["kind"] == "layers"
    if not layered and not spec["model"].get("bn"):
        raise base.Unsupported("fedbn without bn")
    if layered and not clients[0].bn.any():
        raise base.Unsupported("fedbn on a layer list without batchnorm")
    hp = spec["algorithm"]["hyperparameters"]
    sw = dict(spec["algorithm"].get("switches", {}))
    preset = spec["algorithm"].get("preset", "paper")
    if preset == "pfllib":      # PFLlib's clientbn.py / serverbn.py, -ld
        sw = dict({"fedbn.weights": "samples", "lr.count": "trainings"}, **sw)
    elif preset != "paper":
        raise _base().Unsupported("fedbn preset %r" % preset)
    eta = hp["eta"]
    # the learning-rate decay: client k's η γ^(t, or its trainings before)
    decay = {"lr.schedule": sw.get("lr.schedule", "constant"),
             "lr.count": sw.get("lr.count", "rounds"),
             "lr.gamma": hp.get("lr.gamma"),
             "lr.step_rounds": hp.get("lr.step_rounds")}
    if bug == "fedbn-lr-per-round":
        decay["lr.count"] = "rounds"
    trained = [0] * len(clients)
    local = sw.get("fedbn.bn", "local") == "local"
    if bug == "fedbn-bn-averaged":
        local = False
    samples = sw.get("fedbn.weights", "uniform") == "samples"
    # fedbn.running_var and bn.running_var are one switch: either biased
    biased = "biased" in (sw.get("fedbn.running_var", "unbiased"),
                          sw.get("bn.running_var", "unbiased"))
    # bn.running = frozen: the batch statistics normalise, r_μ and r_v stay
    moving = sw.get("bn.running", "update") == "update"
    opts = base.pfl_numpy_optim.for_run(spec)     # opt.*: None for plain SGD
    bn = clients[0].bn
    w = np.array(w0, dtype=float)
    v = [w.copy() for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        S = rnd["clients"]
        m_t = sum(clients[k].n for k in S)
        acc = np.zeros_like(w)
        for k, batches in zip(S, rnd["batches"]):
            c = clients[k]
            theta = np.where(bn, v[k], w) if local else w.copy()
            log("client_begin", "train", "v", theta, round=t, client=k, step=0)
            opt = opts and opts.begin(0, k)
            eta_k = eta * base.lr_factor(decay, t, trained[k])
            trained[k] += 1
            for s, batch in enumerate(batches, start=1):
                if layered:     # the pass's statistics into r_μ, r_v
                    g = c.grad(theta, batch)
                    if moving:
                        theta = c.track(theta, unbiased=not biased, force=True)
                else:
                    g, mean, var, m = c.grad(theta, batch)
                    if moving:
                        c.running(theta, mean, var, m, biased)
                if opt is not None:     # torch's optimizer; buffers stay
                    theta = opt.step(theta, g, eta_k)
                else:
                    theta = theta - eta_k * g
                log("step", "train", "v", theta, round=t, client=k, step=s)
            log("client_end", "train", "v", theta, round=t, client=k)
            v[k] = np.where(bn, theta, v[k])
            acc += (c.n / m_t if samples else 1.0 / len(S)) * theta
        w = np.where(bn, w, acc) if local else acc
        log("server", "train", "w", w, round=t)
        v = [np.where(bn, vi, w) if local else w.copy() for vi in v]
    return {"w": w, "v": v}


_install()
# SPDX-License-Identifier: GPL-3.0-or-later
