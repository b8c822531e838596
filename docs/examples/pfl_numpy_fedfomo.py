"""pfl_numpy_fedfomo.py: FedFomo for the NumPy candidate (pfl_numpy.py loads
it), written from Zhang, Sapra, Fidler, Yeung, Alvarez (ICLR 2021,
arXiv 2012.08565v3, Algorithm 1) as the spec notes
(notes-fedbn-fedfomo.md §2.3) give it, not from pflref's C code.

Every client keeps θ_i (its last upload) and φ_i (where its last local
training started), both from w0; the affinity matrix P starts at 0.  In a
round each participant i (ascending) scores its candidates, the round's
peers[j] plus its own upload (fedfomo.self = included), all as they stood
at the round's start, against the anchor φ_i:
r_n = (L_i(φ_i) − L_i(θ_n)) / ‖θ_n − φ_i‖ (0 when the distance is 0),
w = max(r, 0) normalised (all 0 if nothing improves),
φ_i ← φ_i + Σ w_n (θ_n − φ_i), P_i += w, then local SGD from φ_i.
L_i is the mean loss on X_val, y_val when every client has them, else on
the training set.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedfomo"
BUGS = ("fedfomo-no-clip", "fedfomo-no-normalise", "fedfomo-squared-distance",
        "fedfomo-anchor-current", "fedfomo-train-loss",
        "fedfomo-live-uploads", "fedfomo-affinity-ratio")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _loss(spec, raw, theta, bug):
    model = spec["model"]
    if model["kind"] == "quadratic":
        a, c = np.asarray(raw["a"], float), np.asarray(raw["c"], float)
        return 0.5 * np.sum(a * (theta - c) ** 2)
    if model["kind"] != "linear":
        raise _base().Unsupported("fedfomo losses for %s" % model["kind"])
    every_val = all("X_val" in c for c in spec["problem"]["clients"])
    key = "_val" if every_val and bug != "fedfomo-train-loss" else ""
    X = np.asarray(raw["X" + key], float)
    y = np.asarray(raw["y" + key], float)
    d = model["d"]
    r = X @ theta[:d] + (theta[d] if model.get("bias", False) else 0.0) - y
    return np.mean(r * r if model["loss"] == "squared" else 0.5 * r * r)


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"]["hyperparameters"]
    sw = spec["algorithm"].get("switches", {})
    raw = spec["problem"].get("clients")
    if raw is None or any(isinstance(c.get("X"), str) for c in raw):
        raise base.Unsupported("fedfomo needs inline clients")
    eta, N = hp["eta"], len(raw)
    l1 = sw.get("fedfomo.distance", "l2") == "l1"
    with_self = sw.get("fedfomo.self", "included") == "included"
    theta = [w0.copy() for _ in raw]
    phi = [w0.copy() for _ in raw]
    P = np.zeros((N, N))
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        snap = [x.copy() for x in theta]
        peers = rnd.get("peers")                # absent: M = 0 for all
        for j, i in enumerate(rnd["clients"]):
            up = theta if bug == "fedfomo-live-uploads" else snap
            a = theta[i] if bug == "fedfomo-anchor-current" else phi[i]
            L_a = _loss(spec, raw[i], a, bug)
            r = np.zeros(N)
            offered = list(peers[j]) if peers else []
            for n in offered + ([i] if with_self else []):
                diff = up[n] - a
                dist = np.sum(np.abs(diff)) if l1 else np.sqrt(np.sum(diff * diff))
                if bug == "fedfomo-squared-distance":
                    dist = np.sum(diff * diff)
                if dist > 0:
                    r[n] = (L_a - _loss(spec, raw[i], up[n], bug)) / dist
            w = r.copy() if bug == "fedfomo-no-clip" else np.maximum(r, 0.0)
            if w.sum() > 0 and bug != "fedfomo-no-normalise":
                w = w / w.sum()
            log("note", "train", "weights", w, round=t, client=i)
            new = a + sum(w[n] * (up[n] - a) for n in range(N) if w[n] != 0)
            phi[i] = np.array(new, dtype=float)
            log("note", "train", "phi", phi[i], round=t, client=i)
            P[i] += r if bug == "fedfomo-affinity-ratio" else w
            log("note", "train", "P", P[i], round=t, client=i)
            log("client_begin", "train", "theta", phi[i], round=t, client=i,
                step=0)
            theta[i] = base.local_sgd(
                phi[i].copy(), clients[i], rnd["batches"][j], eta,
                lambda s, v, i=i, t=t: log("step", "train", "theta", v,
                                           round=t, client=i, step=s))
            log("client_end", "train", "theta", theta[i], round=t, client=i)
    return {"v": theta}
# SPDX-License-Identifier: GPL-3.0-or-later
