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

A round with "peer_draws" [{order, u}] and no "peers" picks each client's
downloads from its row of P first (notes §2.5): G = the order's ids by
descending P, ties to the lower id; slot s takes the next of the order when
u_s < ε₀ − δ t, else the next of G, skipping ids taken already; topM takes
G's head.  The switches of notes §2.8: distance l1 / l2_squared,
distance_eps, anchor post_train, no_positive keep_current, P_update
signed_abs_sum / raw, P_init own_0.1 / identity, M_counts total,
distance l2_per_tensor_sum (‖Δw‖ + |Δb|) and val_loss batch_mean (the
mean of the batch means of fedfomo.val_batch samples).  fedfomo.self =
ranked is PFLlib's send_models: torch.topk over the whole row P[i], the
client's own entry too, so its own upload is a candidate only when it is
among the M largest (it then counts as one of the M).  The decay lr.*
scales η per client's own trainings under lr.count = trainings (PFLlib's
ExponentialLR of each client, stepped after its train()).  "θ_n = a" is
tested up to fedfomo.equal_rtol relative per coordinate (default 2^-50).
fedfomo.val_mode = eval scores the losses as model.eval() does (the NVlabs
code): batchnorm on the model's running statistics, dropout off, so no
mask is used up; the default train normalises with the validation rows'
own statistics and takes a mask per loss (PFLlib's copies, never put in
eval()).
The client optimizer (opt.*, pfl_numpy_optim) takes the local steps from
φ_i, one optimizer per client (slot 0) whose state lives as opt.state
says, at η of the client's train() (the decay above).
bn.aggregate = parameters_only (PFLlib, set by its preset) on a layer list
with batch normalisation: ‖θ_n − φ_i‖ over the parameters only (the
running statistics left out, clientfomo.py weight_cal), and φ_i's running
statistics are the client's own, those of θ_i^{t−1} (aggregate_parameters
sums parameters() only); every scored model keeps the statistics it has.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedfomo"
BUGS = ("fedfomo-no-clip", "fedfomo-no-normalise", "fedfomo-squared-distance",
        "fedfomo-anchor-current", "fedfomo-train-loss",
        "fedfomo-live-uploads", "fedfomo-affinity-ratio",
        "fedfomo-greedy-ascending", "fedfomo-eps-no-decay",
        "fedfomo-ranked-no-own", "fedfomo-lr-per-round", "fedfomo-equal-strict",
        "fedfomo-val-eval-mode", "fedfomo-bn-buffers-mixed",
        "fedfomo-equal-strict-params")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _loss(spec, raw, theta, bug, data=None):
    """L_i(θ); data: the client's model object (a layer list's losses come
    from its training-mode forward pass, Layers.losses)."""
    model = spec["model"]
    if model["kind"] == "quadratic":
        a, c = np.asarray(raw["a"], float), np.asarray(raw["c"], float)
        return 0.5 * np.sum(a * (theta - c) ** 2)
    if model["kind"] not in ("linear", "layers"):
        raise _base().Unsupported("fedfomo losses for %s" % model["kind"])
    every_val = all("X_val" in c for c in spec["problem"]["clients"])
    key = "_val" if every_val and bug != "fedfomo-train-loss" else ""
    X = np.asarray(raw["X" + key], float)
    y = np.asarray(raw["y" + key], float)
    hp, sw = settings(spec["algorithm"])
    B = hp.get("fedfomo.val_batch", 0)
    batch_mean = sw.get("fedfomo.val_loss") == "batch_mean" and 0 < B < len(y)
    # the copies in eval() (running statistics, no dropout) or not
    in_eval = (sw.get("fedfomo.val_mode", "train") == "eval"
               or bug == "fedfomo-val-eval-mode")
    if model["kind"] == "layers" and in_eval:
        kept = data.stats           # evaluation leaves the tracked stats
        z, _ = data.forward(theta, X, train=False)
        data.stats = kept
        terms = data.terms(z, y)
    elif model["kind"] == "layers":
        if batch_mean and data.bn.any():
            raise _base().Unsupported("fedfomo.val_loss = batch_mean on a "
                                      "layer list with batchnorm")
        terms = data.losses(theta, X, y)
    else:
        d = model["d"]
        r = X @ theta[:d] + (theta[d] if model.get("bias", False) else 0.0) - y
        terms = r * r if model["loss"] == "squared" else 0.5 * r * r
    if batch_mean:
        return np.mean([np.mean(terms[lo:lo + B])
                        for lo in range(0, len(terms), B)])
    return np.mean(terms)


# The presets (pflref list --presets): the NVlabs code's and PFLlib's
# values; the spec's own settings override them.
PRESETS = {
    "official": {"fedfomo.distance": "l1", "fedfomo.self": "included",
                 "fedfomo.P_update": "signed_abs_sum",
                 "fedfomo.P_init": "own_0.1", "fedfomo.M_counts": "total",
                 "fedfomo.epsilon0": 0.3, "fedfomo.delta": 0.05,
                 "fedfomo.val_mode": "eval"},
    "pfllib": {"fedfomo.distance": "l2", "fedfomo.distance_eps": 1e-5,
               "fedfomo.selection": "topM", "fedfomo.P_update": "raw",
               "fedfomo.P_init": "identity", "fedfomo.anchor": "pre_train",
               "fedfomo.no_positive": "keep_current",
               "fedfomo.self": "ranked", "fedfomo.val_loss": "batch_mean",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
}


def settings(alg):
    """(hyperparameters, switches): the preset's, then the spec's own."""
    preset = alg.get("preset", "paper")
    if preset != "paper" and preset not in PRESETS:
        raise _base().Unsupported("fedfomo preset %r" % preset)
    hp, sw = {}, {}
    for k, v in PRESETS.get(preset, {}).items():
        (sw if isinstance(v, str) else hp)[k] = v
    hp.update(alg.get("hyperparameters", {}))
    sw.update(alg.get("switches", {}))
    return hp, sw


def choose(row, order, u, slots, eps, top_m, bug):
    """The ε-greedy pick of the downloads from P's row."""
    order = list(order)
    key = (lambda n: (row[n], n)) if bug == "fedfomo-greedy-ascending" \
        else (lambda n: (-row[n], n))
    greedy = sorted(order, key=key)
    at = {True: 0, False: 0}
    picked = []
    for s in range(min(slots, len(order))):
        explore = (not top_m) and u[s] < eps
        lst = order if explore else greedy
        while lst[at[explore]] in picked:
            at[explore] += 1
        picked.append(lst[at[explore]])
        at[explore] += 1
    return picked


def run(spec, clients, w0, log, bug):
    base = _base()
    hp, sw = settings(spec["algorithm"])
    raw = spec["problem"].get("clients")
    if raw is None or any(isinstance(c.get("X"), str) for c in raw):
        raise base.Unsupported("fedfomo needs inline clients")
    eta, N = hp["eta"], len(raw)
    dist_kind = sw.get("fedfomo.distance", "l2")
    dist_eps = hp.get("fedfomo.distance_eps", 0.0)
    with_self = sw.get("fedfomo.self", "included") == "included"
    ranked = (sw.get("fedfomo.self") == "ranked"
              and bug != "fedfomo-ranked-no-own")
    tau = hp.get("fedfomo.equal_rtol", 2.0 ** -50)
    lr_cfg = base.lr_settings(hp, sw)             # lr.*
    if bug == "fedfomo-lr-per-round":
        lr_cfg["lr.count"] = "rounds"
    trained = [0] * len(raw)
    post_train = sw.get("fedfomo.anchor", "pre_train") == "post_train"
    keep_current = sw.get("fedfomo.no_positive", "anchor") == "keep_current"
    p_update = sw.get("fedfomo.P_update", "weights")
    p_init = sw.get("fedfomo.P_init", "zeros")
    top_m = sw.get("fedfomo.selection", "eps_greedy") == "topM"
    m_total = sw.get("fedfomo.M_counts", "others") == "total"
    eps0 = hp.get("fedfomo.epsilon0", 0.3)
    delta = hp.get("fedfomo.delta", 0.05)
    # bn.aggregate = parameters_only: the running statistics' entries
    keep = base.kept_buffers(
        {"bn.aggregate": sw.get("bn.aggregate", "average")}, clients)
    measured = np.ones(len(w0), dtype=bool) if keep is None else ~keep
    opts = base.pfl_numpy_optim.for_run(spec)    # opt.*: None for plain SGD
    theta = [w0.copy() for _ in raw]
    phi = [w0.copy() for _ in raw]
    P = np.zeros((N, N))
    if p_init != "zeros":
        P += np.eye(N) * (0.1 if p_init == "own_0.1" else 1.0)
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        snap = [x.copy() for x in theta]
        peers = rnd.get("peers")                # absent: M = 0 for all
        if peers is None and "peer_draws" in rnd:
            eps_t = eps0 if bug == "fedfomo-eps-no-decay" else eps0 - delta * t
            peers = []
            for j, i in enumerate(rnd["clients"]):
                dr = rnd["peer_draws"][j]
                slots = len(dr["u"])
                if m_total and with_self:
                    slots = max(slots - 1, 0)
                order = list(dr["order"]) + ([i] if ranked else [])
                peers.append(choose(P[i], order, dr["u"], slots, eps_t,
                                    top_m, bug))
        for j, i in enumerate(rnd["clients"]):
            up = theta if bug == "fedfomo-live-uploads" else snap
            a = theta[i] if (bug == "fedfomo-anchor-current") != post_train \
                else phi[i]
            L_a = _loss(spec, raw[i], a, bug, clients[i])
            r = np.zeros(N)
            offered = list(peers[j]) if peers else []
            for n in offered + ([i] if with_self else []):
                diff = np.where(measured, up[n] - a, 0.0)
                sq = np.sum(diff * diff)
                if dist_kind == "l2_per_tensor_sum":   # ‖Δw‖ (+ |Δb|)
                    d = spec["model"]["d"]
                    dist = np.sqrt(np.sum(diff[:d] ** 2)) + (
                        np.sqrt(np.sum(diff[d:] ** 2)) if len(diff) > d else 0.0)
                else:
                    dist = (np.sum(np.abs(diff)) if dist_kind == "l1" else
                            sq if dist_kind == "l2_squared" else np.sqrt(sq))
                if bug == "fedfomo-squared-distance":
                    dist = sq
                bound = np.where(
                    measured, tau * np.maximum(np.abs(up[n]), np.abs(a)), 0.0)
                same = np.all(np.abs(diff) < bound
                              if bug == "fedfomo-equal-strict"
                              else np.abs(diff) <= bound)
                if bug == "fedfomo-equal-strict-params" and keep is not None:
                    same = np.all(np.abs(diff[measured]) < bound[measured])
                if dist > 0 and not same:
                    r[n] = (L_a - _loss(spec, raw[i], up[n], bug, clients[i])) \
                        / (dist + dist_eps)
            w = r.copy() if bug == "fedfomo-no-clip" else np.maximum(r, 0.0)
            if w.sum() > 0 and bug != "fedfomo-no-normalise":
                w = w / w.sum()
            log("note", "train", "weights", w, round=t, client=i)
            if keep_current and not w.sum() > 0:
                new = snap[i]
            else:
                new = a + sum(w[n] * (up[n] - a) for n in range(N) if w[n] != 0)
                if keep is not None and bug != "fedfomo-bn-buffers-mixed":
                    new = np.where(keep, snap[i], new)   # i's own r_μ, r_v
            phi[i] = np.array(new, dtype=float)
            log("note", "train", "phi", phi[i], round=t, client=i)
            if bug == "fedfomo-affinity-ratio" or p_update == "raw":
                P[i] += r
            elif p_update == "signed_abs_sum":
                P[i] += r / max(abs(r.sum()), 1e-9)
            else:
                P[i] += w
            log("note", "train", "P", P[i], round=t, client=i)
            log("client_begin", "train", "theta", phi[i], round=t, client=i,
                step=0)
            eta_i = eta * base.lr_factor(lr_cfg, t, trained[i])
            trained[i] += 1
            theta[i] = base.local_sgd(
                phi[i].copy(), clients[i], rnd["batches"][j], eta_i,
                lambda s, v, i=i, t=t: log("step", "train", "theta", v,
                                           round=t, client=i, step=s),
                opt=opts and opts.begin(0, i))
            log("client_end", "train", "theta", theta[i], round=t, client=i)
    return {"v": theta}
# SPDX-License-Identifier: GPL-3.0-or-later
