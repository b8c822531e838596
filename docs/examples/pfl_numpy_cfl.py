"""pfl_numpy_cfl.py: Clustered Federated Learning for the NumPy candidate
(pfl_numpy.py loads it), written from Sattler, Müller, Samek (IEEE TNNLS
2021, arXiv 1910.01991; Algorithm 1 and the weight-update Algorithm 5) as
the spec notes (notes-cfl-ifca-sampling-metrics.md §1) give them, not from
pflref's C code.

Round t:  every client i: Δθ_i = SGD(θ_i; its batches, η) − θ_i.
          every cluster c (ordered by its smallest client):
            Δθ_c = mean_{i∈c} Δθ_i (or weighted |D_i|/|D_c|)
            if ‖Δθ_c‖ < ε₁ and max ‖Δθ_i‖ > ε₂ (and the optional guards):
              S = the cosine matrix of the members' updates (the seed's
              normed @ normed.T; 0 for a zero update, 1 on the diagonal)
              Algorithm 1: np.argsort(−S.ravel(), kind="stable"), merge the
              clusters of (s // m, s % m) until two are left
              (complete_linkage: the notebook's complete linkage on −S)
              split when γ_max < √((1 − α_max^cross)/2)
          clusters ordered by smallest client; θ_i += Δθ_{c(i)} with the
          new clusters.
The client optimizer (opt.*, pfl_numpy_optim) takes each client's local
steps, one optimizer per client (slot 0) whose state lives as opt.state
says; lr.* scales η by round t's factor (lr.count = rounds: CFL's clients
all train every round; lr.scope = eta_p decays pFedMe's η_p alone, so
not η).
Records as pflref's: theta steps, dtheta, the per-cluster notes with
client = the cluster's smallest client, similarity rows per client,
partition, dtheta_c, and v per client.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "cfl"
BUGS = ("cfl-dot-similarity", "cfl-complete-linkage", "cfl-no-gamma-test",
        "cfl-local-indices", "cfl-update-with-parent", "cfl-uniform-always",
        "cfl-argsort-reversed", "cfl-linkage-ties-last")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _cosines(U, bug):
    if bug == "cfl-dot-similarity":
        return U @ U.T
    norms = np.linalg.norm(U, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    V = U / safe[:, None]
    S = V @ V.T
    S[norms == 0, :] = 0.0
    S[:, norms == 0] = 0.0
    np.fill_diagonal(S, 1.0)
    return np.clip(S, -1.0, 1.0)


def _algorithm1(S, bug=None):
    m = len(S)
    if bug == "cfl-argsort-reversed":
        order = np.argsort(S.ravel(), kind="stable")[::-1]
    else:
        order = np.argsort(-S.ravel(), kind="stable")
    C = [{a} for a in range(m)]
    for s in order:
        i1, i2 = divmod(int(s), m)
        touched = [c for c in C if i1 in c or i2 in c]
        C = [c for c in C if not (i1 in c or i2 in c)] + [set().union(*touched)]
        if len(C) == 2:
            break
    return C


def _complete_linkage(S, bug=None):
    """The notebook's sklearn complete linkage on −S, without sklearn:
    repeatedly merge the two clusters whose least similar pair is the most
    similar (the first such pair in the order of the clusters' smallest
    members), until two are left."""
    C = [[a] for a in range(len(S))]
    while len(C) > 2:
        L = np.full((len(C), len(C)), -np.inf)
        for x in range(len(C)):
            for y in range(x + 1, len(C)):
                L[x, y] = S[np.ix_(C[x], C[y])].min()
        flat = L.ravel()
        if bug == "cfl-linkage-ties-last":
            pos = flat.size - 1 - int(np.argmax(flat[::-1]))
        else:
            pos = int(np.argmax(flat))
        x, y = divmod(pos, len(C))
        merged = sorted(C[x] + C[y])
        C = sorted([c for k, c in enumerate(C) if k not in (x, y)] + [merged], key=min)
    return [set(c) for c in C]


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"].get("hyperparameters", {})
    sw = spec["algorithm"].get("switches", {})
    eta, eps1, eps2, gmax = hp["eta"], hp["eps1"], hp["eps2"], hp["gamma_max"]
    min_size = hp.get("cfl.min_cluster_size", 0)
    warmup = hp.get("cfl.warmup", 0)
    method = sw.get("cfl.bipartition", "optimal")
    if bug == "cfl-complete-linkage":
        method = "complete_linkage"
    weights = sw.get("cfl.cluster_weights", "uniform")
    if bug == "cfl-uniform-always":
        weights = "uniform"
    lr_cfg = base.lr_settings(hp, sw)             # lr.*
    opts = base.pfl_numpy_optim.for_run(spec)    # opt.*: None for plain SGD
    N = len(clients)
    theta = [w0.copy() for _ in range(N)]
    clusters = [list(range(N))]

    def update(c, delta):
        if weights == "samples":
            n = np.array([clients[i].n for i in c], dtype=float)
            return sum((n[k] / n.sum()) * delta[i] for k, i in enumerate(c))
        return sum(delta[i] for i in c) / len(c)

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        if sorted(rnd["clients"]) != list(range(N)):
            raise base.Unsupported("cfl trains every client every round")
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        delta = {}
        eta_t = eta * base.lr_factor(lr_cfg, t)          # lr.*: round t's η
        for i in range(N):
            log("client_begin", "train", "theta", theta[i], round=t, client=i, step=0)
            local = base.local_sgd(theta[i].copy(), clients[i], plan[i], eta_t,
                                   lambda s, x, i=i: log("step", "train", "theta", x,
                                                         round=t, client=i, step=s),
                                   opt=opts and opts.begin(0, i))
            delta[i] = local - theta[i]
            log("client_end", "train", "dtheta", delta[i], round=t, client=i)
        new, parent_of = [], {}
        for c in clusters:
            d_c = update(c, delta)
            norm_c = np.linalg.norm(d_c)
            max_i = max(np.linalg.norm(delta[i]) for i in c)
            log("note", "train", "norm_dtheta_c", [norm_c], round=t, client=c[0])
            log("note", "train", "max_norm_dtheta", [max_i], round=t, client=c[0])
            if not (norm_c < eps1 and max_i > eps2) or len(c) < 2 \
                    or (min_size and len(c) < min_size) or t < warmup:
                new.append(c)
                continue
            S = _cosines(np.array([delta[i] for i in c]), bug)
            for a, i in enumerate(c):
                log("note", "train", "similarity", S[a], round=t, client=i)
            parts = _algorithm1(S, bug) if method == "optimal" else _complete_linkage(S, bug)
            p1, p2 = sorted((sorted(p) for p in parts), key=min)
            cross = max(S[a, b] for a in p1 for b in p2)
            if bug == "cfl-local-indices":
                c1, c2 = p1, p2
            else:
                c1, c2 = [c[a] for a in p1], [c[a] for a in p2]
            log("note", "train", "c1", c1, round=t, client=c[0])
            log("note", "train", "c2", c2, round=t, client=c[0])
            log("note", "train", "alpha_cross", [cross], round=t, client=c[0])
            split = gmax < np.sqrt((1.0 - cross) / 2.0) or bug == "cfl-no-gamma-test"
            log("note", "train", "split", [1.0 if split else 0.0], round=t, client=c[0])
            if split:
                new += [c1, c2]
                if bug == "cfl-update-with-parent":
                    parent_of[tuple(c1)] = parent_of[tuple(c2)] = d_c
            else:
                new.append(c)
        clusters = sorted(new, key=min)
        label = {}
        for k, c in enumerate(clusters):
            for i in c:
                label.setdefault(i, k)
        log("note", "train", "partition", [label.get(i, -1) for i in range(N)], round=t)
        for c in clusters:
            d_c = parent_of.get(tuple(c), None)
            if d_c is None:
                d_c = update(c, delta)
            log("note", "train", "dtheta_c", d_c, round=t, client=c[0])
            for i in c:
                theta[i] = theta[i] + d_c
        for i in range(N):
            log("client_end", "train", "v", theta[i], round=t, client=i)
    return {"v": theta}
# SPDX-License-Identifier: GPL-3.0-or-later
