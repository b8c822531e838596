"""pfl_numpy_fedrecon.py: Federated Reconstruction for the NumPy candidate
(pfl_numpy.py loads it), written from Singhal et al. (NeurIPS 2021, arXiv
2102.03448v6, Algorithm 1 and §3) and docs/algorithms/fedrecon.md, not from
pflref's C code.

g = the split's global entries, l = its local ("personal") entries.  Each
round, every participant starts from (g, l⁰) (fedrecon.local_init = last:
its own last l), takes its `personal` batches as reconstruction steps on l
with η_r, then its `batches` as update steps on g with η_u, and sends
Δ_i = g_i − g.  The server: g ← g + η_s Σ w_i Δ_i / Σ w_i with w_i =
|D_{i,q}| (samples; the support init.support's complement, or all of D_i
under fedrecon.query = whole), 1 (uniform) or the update examples
(examples).  With a post phase, every client reconstructs l on it from
the final g before it is reported.

A client optimizer (opt.*, pfl_numpy_optim) drives the update steps on g
only: TFF's client update builds a client optimizer for the training after
the reconstruction and a separate reconstruction optimizer, SGD by
default; so the reconstruction steps on l (in training and before the
evaluation) stay plain SGD with η_r.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedrecon"
BUGS = ("fedrecon-eta-swap", "fedrecon-server-no-eta",
        "fedrecon-weights-total-n", "fedrecon-init-ignored",
        "fedrecon-eval-no-recon", "fedrecon-update-moves-local",
        "fedrecon-recon-optimizer")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _weight(spec, sw, clients, i, batches, bug):
    """w_i before normalisation."""
    scheme = sw.get("fedrecon.weights", "samples")
    if scheme == "uniform":
        return 1.0
    if scheme == "examples":
        return float(sum(len(b) for b in batches))
    n = clients[i].n
    if sw.get("fedrecon.query") == "whole" or bug == "fedrecon-weights-total-n":
        return float(n)
    return float(n - len(spec["init"]["support"][i]))


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"]["hyperparameters"]
    sw = spec["algorithm"].get("switches", {})
    eta_r = hp["fedrecon.eta_r"]
    eta_u = hp["fedrecon.eta_u"]
    if bug == "fedrecon-eta-swap":
        eta_r = hp["fedrecon.eta_u"]
        eta_u = hp["fedrecon.eta_r"]
    eta_s = 1.0 if bug == "fedrecon-server-no-eta" else hp["fedrecon.eta_s"]
    last = sw.get("fedrecon.local_init") == "last"
    if bug == "fedrecon-init-ignored":
        last = not last
    local = base.personal_mask(spec)
    move_g = None if bug == "fedrecon-update-moves-local" else ~local
    opts = base.pfl_numpy_optim.for_run(spec)     # None: plain SGD
    w = w0.copy()
    v = [w0.copy() for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        sent = []
        for i, rb, ub in zip(rnd["clients"], rnd["personal"], rnd["batches"]):
            x = np.where(local, v[i] if last else w0, w)
            log("client_begin", "train", "w_local", x, round=t, client=i, step=0)
            opt = opts.begin(0, i) if opts is not None else None
            x = base.local_sgd(x, clients[i], rb, eta_r,
                               lambda s, y, i=i: log("step", "train", "w_recon", y,
                                                     round=t, client=i, step=s),
                               mask=local,
                               opt=opt if bug == "fedrecon-recon-optimizer" else None)
            x = base.local_sgd(x, clients[i], ub, eta_u,
                               lambda s, y, i=i: log("step", "train", "w_local", y,
                                                     round=t, client=i, step=s),
                               mask=move_g, opt=opt)
            log("client_end", "train", "w_local", x, round=t, client=i)
            log("client_end", "train", "v", x, round=t, client=i)
            v[i] = x
            sent.append((_weight(spec, sw, clients, i, ub, bug), x - w))
        total = sum(a for a, _ in sent)
        delta = sum(a / total * d for a, d in sent)
        w = np.where(local, w, w + eta_s * delta)
        log("server", "train", "w", w, round=t)
        v = [np.where(local, vi, w) for vi in v]
    post = spec["schedule"].get("post")
    if post is not None and bug != "fedrecon-eval-no-recon":
        for i, steps in enumerate(post):
            x = np.where(local, v[i] if last else w0, w)
            log("client_begin", "finetune", "v", x, client=i, step=0)
            x = base.local_sgd(x, clients[i], steps, hp["fedrecon.eta_r"],
                               lambda s, y, i=i: log("step", "finetune", "v", y,
                                                     client=i, step=s),
                               mask=local)
            log("client_end", "finetune", "v", x, client=i)
            v[i] = x
    return {"w": w, "v": v}
# SPDX-License-Identifier: GPL-3.0-or-later
