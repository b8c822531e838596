# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_apple.py: APPLE for the NumPy candidate (pfl_numpy.py loads
it), written from Luo and Wu, "Adapt to Adaptation: Learning
Personalization for Cross-Silo Federated Learning" (IJCAI 2022, arXiv
2110.08394v3, Algorithm 1), not from pflref's C code.

Client i owns a core model w_i (every core starts at w⁰) and a directed
relationship vector p_i, which starts at p_0 = (n_1, ..., n_N) / n.  In a
round, each participant downloads the other clients' cores as the server
holds them when the round starts, and takes its scheduled minibatch
steps on
    L(w_i, p_i) = loss_i(sum_j p_ij w_j; batch) + lam(r) mu/2 |p_i - p_0|^2
moving only its own core and p_i, both from the same point:
    g      = grad loss_i(w_p; batch),  w_p = sum_j p_ij w_j
    w_i   <- w_i - eta p_ii g
    p_ij  <- p_ij - eta_p (w_j . g + lam(r) mu (p_ij - p_0j))
with lam(r) = (1 + cos(pi r / L)) / 2 while r < L, and 0 afterwards.
Its personalised model is sum_j p_ij w_j over what it holds at the end.
Switches:
  apple.scheduler = exponential   lam(r) = 0.001 ** (r / L) while r < L
  apple.prox = full               the term is lam mu |p_i - p_0|^2
  apple.p_init = uniform          p_i starts at 1/N
  apple.order = core_first        w_i moves before p_i's gradient
  apple.p_grad = block_mean       p_ij's data term is the mean over the
                                  parameter blocks of mean(w_j * g)
  apple.core_lr = n_eta           the core moves with N eta
  apple.lambda_round = previous   round r uses lam(r - 1), round 0 uses 1
(preset official: exponential, full; preset pfllib: the last five).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "apple"
BUGS = ("apple-no-half-cos", "apple-no-cutoff", "apple-no-pii",
        "apple-prox-twice", "apple-p0-uniform", "apple-p-normalised",
        "apple-live-cores", "apple-train-others", "apple-wp-old-p",
        "apple-lambda-late")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    base = _base()
    alg = spec["algorithm"]
    cfg = {"apple.scheduler": "cosine", "apple.prox": "half",
           "apple.p_init": "samples", "apple.order": "joint",
           "apple.p_grad": "inner", "apple.core_lr": "eta",
           "apple.lambda_round": "current"}
    presets = {"official": {"apple.scheduler": "exponential",
                            "apple.prox": "full"},
               "pfllib": {"apple.p_init": "uniform",
                          "apple.order": "core_first",
                          "apple.p_grad": "block_mean",
                          "apple.core_lr": "n_eta",
                          "apple.lambda_round": "previous"}}
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise base.Unsupported("preset %r for apple" % preset)
        cfg.update(presets[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    return cfg


def _lam(cfg, t, bug):
    """The loss scheduler's value for round t."""
    r = t
    if cfg["apple.lambda_round"] == "previous":
        if t == 0:
            return 1.0
        r = t - 1
    if bug == "apple-lambda-late":
        r += 1
    L = int(cfg["apple.L"])
    if r >= L and bug != "apple-no-cutoff":
        return 0.0
    if cfg["apple.scheduler"] == "exponential":
        return 0.001 ** (r / L)
    c = np.cos(np.pi * r / L)
    return c + 1.0 if bug == "apple-no-half-cos" else (c + 1.0) / 2.0


def _blocks(client, P):
    """The parameter blocks as (start, stop): the linear model's w and b,
    or the whole vector."""
    d = getattr(client, "d", None)
    if d is None or not getattr(client, "bias", False):
        return [(0, P)]
    return [(0, d), (d, P)]


def _p_grad(cfg, client, held, g, p, p0, lam_mu, bug):
    twice = cfg["apple.prox"] == "full" or bug == "apple-prox-twice"
    out = np.empty(len(held))
    for j, w_j in enumerate(held):
        if cfg["apple.p_grad"] == "block_mean":
            parts = [np.mean(w_j[a:b] * g[a:b])
                     for a, b in _blocks(client, len(g))]
            data = float(np.mean(parts))
        else:
            data = float(w_j @ g)
        out[j] = data + (2.0 if twice else 1.0) * lam_mu * (p[j] - p0[j])
    return out


def _client(cfg, clients, i, held, p, p0, batches, lam, log, t, bug):
    """Client i's local steps; returns (held cores, p_i)."""
    N = len(held)
    eta, eta_p, mu = cfg["eta"], cfg["eta_p"], cfg["apple.mu"]
    eta_w = N * eta if cfg["apple.core_lr"] == "n_eta" else eta
    for s, batch in enumerate(batches, start=1):
        w_p = sum(p[j] * held[j] for j in range(N))
        g = clients[i].grad(w_p, batch)
        if cfg["apple.order"] == "joint":
            dp = _p_grad(cfg, clients[i], held, g, p, p0, lam * mu, bug)
        scale = 1.0 if bug == "apple-no-pii" else p[i]
        new = [w.copy() for w in held]
        new[i] = held[i] - eta_w * scale * g
        if bug == "apple-train-others":
            for j in range(N):
                if j != i:
                    new[j] = held[j] - eta * p[j] * g
        held = new
        if cfg["apple.order"] == "core_first":
            dp = _p_grad(cfg, clients[i], held, g, p, p0, lam * mu, bug)
        p = p - eta_p * dp
        if bug == "apple-p-normalised":
            p = p / p.sum()
        log("step", "train", "w_i", held[i], round=t, client=i, step=s)
        log("step", "train", "p_i", p, round=t, client=i, step=s)
    return held, p


def run(spec, clients, w0, log, bug):
    cfg = _config(spec)
    N = len(clients)
    sizes = np.array([float(c.n) for c in clients])
    p0 = sizes / sizes.sum()
    start = np.full(N, 1.0 / N) if cfg["apple.p_init"] == "uniform" else p0
    if bug == "apple-p0-uniform":
        p0 = np.full(N, 1.0 / N)
    cores = [np.array(w0, dtype=float) for _ in clients]
    ps = [start.copy() for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        server = [w.copy() for w in cores]
        lam = _lam(cfg, t, bug)
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        for i in sorted(plan):
            source = cores if bug == "apple-live-cores" else server
            held = [source[j].copy() if j != i else cores[i].copy()
                    for j in range(N)]
            log("note", "train", "lambda", np.array([lam]), round=t,
                client=i)
            log("client_begin", "train", "w_i", cores[i], round=t,
                client=i, step=0)
            p_old = ps[i].copy()
            held, ps[i] = _client(cfg, clients, i, held, ps[i], p0,
                                  plan[i], lam, log, t, bug)
            cores[i] = held[i]
            log("client_end", "train", "w_i", cores[i], round=t, client=i)
            log("note", "train", "p_i", ps[i], round=t, client=i)
            mixer = p_old if bug == "apple-wp-old-p" else ps[i]
            w_p = sum(mixer[j] * held[j] for j in range(N))
            log("note", "train", "w_p", w_p, round=t, client=i)
    return {"v": np.array(cores)}
