# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_scaffold.py: SCAFFOLD for the NumPy candidate (pfl_numpy.py
loads it), written from Karimireddy et al. (ICML 2020, arXiv 1910.06378v4,
Algorithm 1) and docs/algorithms/scaffold.md, not from pflref's C code.

Server state x (w) and c, client state c_i.  Start: x = w0; c_i the spec's
init.c_i (N rows of P) or zero; c the spec's init.c, or else the mean of the
c_i (the paper keeps c = (1/N) Σ c_i; zero when neither is given).
Each round, for every sampled client i in ascending order: y ← x, then one
step per scheduled batch y ← y − η_l (∇f_i(y; b) − c_i + c); then
c_i⁺ = ∇f_i(x) on all its samples (option I) or c_i − c + (x − y)/(K η_l)
(option II, K its number of batches); the server averages Δy = y − x and
Δc = c_i⁺ − c_i over S and sets x ← x + η_g mean Δy, c ← c + (|S|/N) mean Δc.
Records: "y" (client begin, steps, end), client_end "c_i", server "w" and
"c".  The pfllib preset: lr.count = trainings, and option II divides by the
undecayed η (scaffold.c_lr = initial).  With a client optimizer (opt.*) the
optimizer steps on the corrected gradient.

A layer list with batch normalisation: the correction never touches the
running statistics (buffers, not parameters; only the training pass moves
them).  bn.aggregate = parameters_only: PFLlib's set_parameters sends
parameters() only, so each client's model keeps its own running
statistics from round to round (the initial ones until it trains), and
client_c / global_c exist for parameters() only (c_i⁺ keeps c_i there);
the server's new statistics are the first uploader's, or with
scaffold.bn_global = previous (the pfllib preset) the old global's: the
server builds the new global from a copy of the old one
(serverscaffold.py), so its statistics are never replaced, the initial
ones throughout.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "scaffold"
BUGS = ("scaffold-correction-flipped", "scaffold-global-step-ignored",
        "scaffold-c-without-fraction", "scaffold-ci-forgotten",
        "scaffold-k-of-first-client", "scaffold-option-i-on-batch",
        "scaffold-dy-sample-weights", "scaffold-c-lr-decayed",
        "scaffold-correction-after-optimizer", "scaffold-init-dropped",
        "scaffold-c-start-zero")

PRESETS = {"pfllib": {"scaffold.option": "II", "scaffold.c_lr": "initial",
                      "lr.count": "trainings",
                      "bn.aggregate": "parameters_only",
                      "scaffold.bn_global": "previous"}}


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    """Defaults, then the preset, then the spec's own settings."""
    base = _base()
    alg = spec["algorithm"]
    cfg = dict(base.DEFAULTS)
    cfg.update({"scaffold.option": "II", "scaffold.c_lr": "round",
                "scaffold.eta_g": 1.0, "bn.aggregate": "average",
                "scaffold.bn_global": "first_upload"})
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in PRESETS:
            raise base.Unsupported("preset %r for scaffold" % preset)
        cfg.update(PRESETS[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    return cfg


def run(spec, clients, w0, log, bug):
    base = _base()
    import pfl_numpy_optim
    cfg = _config(spec)
    opts = pfl_numpy_optim.for_run(spec)
    N = len(clients)
    x = w0.copy()
    init = {} if bug == "scaffold-init-dropped" else spec.get("init", {})
    c_i = [np.zeros_like(x) for _ in range(N)]
    if "c_i" in init:
        c_i = [np.array(row, dtype=float) for row in init["c_i"]]
    if "c" in init:
        c = np.array(init["c"], dtype=float)
    elif bug == "scaffold-c-start-zero":
        c = np.zeros_like(x)
    else:
        c = sum(c_i) / N
    trained = [0] * N
    # the running statistics: never stepped; kept per client unless averaged
    buf = getattr(clients[0], "buffers", None)
    if buf is not None and not buf.any():
        buf = None
    agg = cfg["bn.aggregate"]
    if agg not in ("average", "parameters_only") or \
            cfg["scaffold.bn_global"] not in ("first_upload", "previous"):
        raise base.Unsupported("bn.aggregate %r, scaffold.bn_global %r"
                               % (agg, cfg["scaffold.bn_global"]))
    own = None
    if buf is not None and agg == "parameters_only":
        own = [x.copy() for _ in range(N)]   # each client's model
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", x, round=t)
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        S = sorted(plan)
        dy, dc = np.zeros_like(x), np.zeros_like(x)
        for i in S:
            eta = cfg["eta"] * base.lr_factor(cfg, t, trained[i])
            trained[i] += 1
            if bug == "scaffold-ci-forgotten":
                c_i[i] = np.zeros_like(x)
            corr = c_i[i] - c if bug == "scaffold-correction-flipped" else c - c_i[i]
            if buf is not None:
                corr = np.where(buf, 0.0, corr)
            y = x.copy()
            if own is not None:
                y = np.where(buf, own[i], y)
            log("client_begin", "train", "y", y, round=t, client=i, step=0)
            opt = None if opts is None else opts.begin(0, i)
            for s, batch in enumerate(plan[i], start=1):
                before = y
                g = clients[i].grad(y, batch)
                if opt is not None and bug == "scaffold-correction-after-optimizer":
                    y = opt.step(y, g, eta, None) - eta * corr
                elif opt is not None:
                    y = opt.step(y, g + corr, eta, None)
                else:
                    y = y - eta * (g + corr)
                if buf is not None:   # the pass's statistics, not a step
                    y = base.track(clients[i], np.where(buf, before, y))
                log("step", "train", "y", y, round=t, client=i, step=s)
            log("client_end", "train", "y", y, round=t, client=i)
            if cfg["scaffold.option"] == "I":
                every = list(range(clients[i].n))
                if bug == "scaffold-option-i-on-batch":
                    every = plan[i][0]
                new = clients[i].grad(x, every)
            else:
                K = len(plan[S[0]]) if bug == "scaffold-k-of-first-client" else len(plan[i])
                eta_c = cfg["eta"] if cfg["scaffold.c_lr"] == "initial" else eta
                if bug == "scaffold-c-lr-decayed":
                    eta_c = eta
                new = c_i[i] - c + (x - y) / (K * eta_c)
            if own is not None:
                new = np.where(buf, c_i[i], new)
                own[i] = y.copy()
            log("client_end", "train", "c_i", new, round=t, client=i)
            if bug == "scaffold-dy-sample-weights":
                wy = clients[i].n / sum(clients[j].n for j in S)
            else:
                wy = 1.0 / len(S)
            dy = dy + wy * (y - x)
            dc = dc + (new - c_i[i]) / len(S)
            c_i[i] = new
        eta_g = 1.0 if bug == "scaffold-global-step-ignored" else cfg["scaffold.eta_g"]
        x_new = x + eta_g * dy
        if own is not None and cfg["scaffold.bn_global"] == "first_upload":
            x_new = np.where(buf, own[_base().first_upload(rnd, S)], x_new)
        elif own is not None:
            x_new = np.where(buf, x, x_new)
        x = x_new
        log("server", "train", "w", x, round=t)
        frac = 1.0 if bug == "scaffold-c-without-fraction" else len(S) / N
        c = c + frac * dc
        log("server", "train", "c", c, round=t)
    return {"w": x}
