"""pfl_numpy_fedpac.py: FedPAC for the NumPy candidate (pfl_numpy.py loads
it), written from Xu, Tong, Huang, "Personalized Federated Learning with
Feature Alignment and Classifier Collaboration" (ICLR 2023, arXiv
2306.11867, Algorithm 1 with a linear classifier) and
docs/algorithms/fedpac.md, not from pflref's C code.

The network (pfl_numpy_moon's Chain of dense and relu/identity layers) is
a feature extractor f(x) (every layer before the last) and a classifier
(the last dense layer).  Per round, each participant i, from (θ, φ_i):
    statistics at θ:  h_k = p_k μ_k,
                      V = (1/n) Σ_k [p_k mean_k ‖f‖² − p_k² ‖μ_k‖²]
    the first τ_φ batches move φ only (step η_φ, mean cross-entropy);
    the rest move θ only (step η) on mean [CE + λ ‖f − c_y‖²] (÷ d under
    fedpac.distance = mse), no term where class y has no centroid;
    local centroids: class means of f at the trained θ.
Server: θ ← Σ n_i θ_i / Σ n_i; c_k ← Σ n_ik ĉ_ik / Σ n_ik over the
holders of k (a fresh table each round); for each participant the weights
α minimising αᵀQα on the simplex, Q[j][l] = [j=l] V_j + Σ_k ⟨h_i − h_j,
h_i − h_l⟩, found here by trying every support S with the closed form
α_S ∝ Q_SS⁻¹ 1 and keeping the feasible KKT point of least objective; then
φ_i ← Σ_j α_ij φ_j (the classifiers after their own steps).
Switches: fedpac.distance (mse: ÷ d), fedpac.alpha_small (renormalised:
α ≤ ε dropped, then divided by the sum; raw: dropped only),
fedpac.missing (own_start: from round 1, a class without a centroid is
pulled toward the client's own class mean at the received θ),
fedpac.centroid_weights (uniform: the plain mean); presets official,
official_run and pfllib.
Client optimizers (opt.*, pfl_numpy_optim): the authors build two torch
SGD objects per client update, one for the classifier's steps (step η_φ)
and then one for the feature extractor's (step η); here slot 0 steps the
head's entries, slot 1 the body's, each living as opt.state says.
Learning-rate decay (lr.*, PFLlib's -ld): PFLlib's client steps both
phases with one optimizer whose ExponentialLR steps after each train()
(clientpac.py:95-96), so in client i's update of round t both η and η_φ
are multiplied by γ^t, or by γ^(the rounds i trained in before) under
lr.count = trainings (preset pfllib); lr.schedule = step: γ^⌊·/steps⌋.
Batch normalisation (a layer list with batchnorm layers, through
pfl_numpy_layers.Layers), torch's modes as PFLlib's clientpac.py uses
them: the statistics and the centroids read f(x) in evaluation mode (the
running statistics: collect_protos under model.eval()); every local step
is one training pass on its batch (model.train()): the batch's statistics
in the loss, in its gradient and in the features of the alignment term,
and the pass moves the running statistics (bn.running = update), the
classifier's steps included; the step itself never moves them.
bn.aggregate = parameters_only (preset pfllib; set_parameters copies
parameters() only): each client's model keeps the running statistics it
left (w0's at first), and w's are the first participant's.
"""
import copy
import importlib
import itertools
import sys

import numpy as np

ALGORITHM = "fedpac"
BUGS = ("fedpac-align-half", "fedpac-lambda-one", "fedpac-stats-after",
        "fedpac-protos-before", "fedpac-proto-uniform",
        "fedpac-missing-zero", "fedpac-keep-old", "fedpac-no-prior",
        "fedpac-var-no-n", "fedpac-alpha-uniform", "fedpac-alpha-self",
        "fedpac-heads-before", "fedpac-body-first",
        "fedpac-theta-uniform", "fedpac-phi-reset", "fedpac-distance-swap",
        "fedpac-no-threshold", "fedpac-renormalise-swap",
        "fedpac-own-round0", "fedpac-own-skip", "fedpac-centroid-swap",
        "fedpac-opt-head-plain", "fedpac-lr-phi-const",
        "fedpac-lr-per-round", "fedpac-bn-stats-train",
        "fedpac-eps-inclusive")

PRESETS = {
    "paper": {},
    "official": {"fedpac.distance": "mse",
                 "fedpac.alpha_small": "renormalised",
                 "fedpac.missing": "own_start"},
    "pfllib": {"fedpac.distance": "mse", "fedpac.alpha_small": "raw",
               "fedpac.centroid_weights": "uniform",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
    # the official preset plus the authors' SGD(momentum=0.5,
    # weight_decay=5e-4) of both phases
    "official_run": {"fedpac.distance": "mse",
                     "fedpac.alpha_small": "renormalised",
                     "fedpac.missing": "own_start",
                     "opt.momentum": 0.5, "opt.weight_decay": 0.0005},
}


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _simplex_qp(Q):
    """argmin αᵀQα, α ≥ 0, Σα = 1 (Q positive definite): on each face S
    of the simplex the minimiser of the affine problem is
    α_S = Q_SS⁻¹1 / 1ᵀQ_SS⁻¹1; every such point that is feasible is a
    point of the simplex, and the minimiser's own face gives it, so the
    feasible one of least objective is the answer.  A face whose Q_SS is
    singular (Q only semi-definite) is passed over."""
    m = len(Q)
    feasible = []
    for S in itertools.chain.from_iterable(
            itertools.combinations(range(m), k) for k, _ in enumerate(Q, 1)):
        try:
            u = np.linalg.solve(Q[np.ix_(S, S)], np.ones(len(S)))
        except np.linalg.LinAlgError:   # Q_SS singular: no unique point
            continue
        a = np.zeros(m)
        a[list(S)] = u / u.sum()
        if a.min() >= 0.0:
            feasible.append(a)
    return min(feasible, key=lambda a: a @ Q @ a)


def _class_stats(F, y, K):
    """(counts, means K × d, mean squared norms K)."""
    d = F.shape[1]
    n_k = np.bincount(y, minlength=K).astype(float)
    mu = np.zeros((K, d))
    s2 = np.zeros(K)
    for k in range(K):
        if n_k[k] > 0:
            mu[k] = F[y == k].mean(axis=0)
            s2[k] = (F[y == k] ** 2).sum(axis=1).mean()
    return n_k, mu, s2


def run(spec, clients, w0, log, bug):
    base = _base()
    moon = importlib.import_module("pfl_numpy_moon")
    alg = spec["algorithm"]
    if alg.get("preset", "paper") not in PRESETS:
        raise base.Unsupported("preset %r for fedpac" % alg["preset"])
    hp = dict(PRESETS[alg.get("preset", "paper")])
    hp.update(alg.get("hyperparameters", {}))
    hp.update(alg.get("switches", {}))
    if hp.get("lr.scope", "all") != "all":
        raise base.Unsupported("fedpac with lr.scope %r" % hp["lr.scope"])
    decay = {"lr.schedule": hp.get("lr.schedule", "constant"),
             "lr.count": hp.get("lr.count", "rounds"),
             "lr.gamma": hp.get("lr.gamma"),
             "lr.step_rounds": hp.get("lr.step_rounds")}
    if bug == "fedpac-lr-per-round":
        decay["lr.count"] = "rounds"
    trained = [0] * len(spec["problem"].get("clients") or [])
    raw = spec["problem"].get("clients")
    if raw is None:
        raise base.Unsupported("fedpac needs inline clients")
    model = spec["model"]
    bn = model["kind"] == "layers" and any(
        Ly["type"].startswith("batchnorm") for Ly in model["layers"])
    if bn:      # the layer list with its two modes
        layers = importlib.import_module("pfl_numpy_layers")
        lays = [layers.Layers(spec, c) for c in raw]
        if lays[0].loss != "cross_entropy":
            raise base.Unsupported("fedpac on a regression model")
        if lays[0].dropout:
            raise base.Unsupported("fedpac with dropout")
        Hd = lays[0].head_layer()
        d, K = Hd["in"][0], Hd["out"]
        head = np.zeros(lays[0].P, dtype=bool)
        for lo, hi in Hd["at"].values():
            head[lo:hi] = True
        net, L = None, len(lays[0].layers)
    else:
        net = moon.Chain(model)
        if not net.ce:
            raise base.Unsupported("fedpac on a regression model")
        _, (hw0, hw1), hb, d, K = net.layers[-1]
        L = len(net.layers)
        head = np.zeros(net_size(net), dtype=bool)
        head[hw0:hw1] = True
        if hb is not None:
            head[hb[0]:hb[1]] = True
    agg = hp.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise base.Unsupported("fedpac with bn.aggregate %r" % agg)
    # the running statistics each client keeps (parameters_only), else None
    mine = base.buffers_of(spec) if bn and agg == "parameters_only" else None
    eta0, eta_phi0 = hp["eta"], hp["fedpac.eta_phi"]
    lam = 1.0 if bug == "fedpac-lambda-one" else hp["fedpac.lambda"]
    tau = int(hp["fedpac.tau_phi"])
    mse = hp.get("fedpac.distance", "squared_l2") == "mse"
    if bug == "fedpac-distance-swap":
        mse = not mse
    coef = (1.0 if bug == "fedpac-align-half" else 2.0) / (d if mse else 1.0)
    small = hp.get("fedpac.alpha_small", "exact")
    if bug == "fedpac-no-threshold":
        small = "exact"
    if bug == "fedpac-renormalise-swap" and small != "exact":
        small = "raw" if small == "renormalised" else "renormalised"
    eps = hp.get("fedpac.alpha_eps", 1e-3)
    own_start = hp.get("fedpac.missing", "none") == "own_start"
    if bug == "fedpac-own-skip":
        own_start = False
    uniform_c = hp.get("fedpac.centroid_weights", "class_counts") == "uniform"
    if bug == "fedpac-centroid-swap":
        uniform_c = not uniform_c
    opt_spec = copy.deepcopy(spec)
    opt_spec["algorithm"]["hyperparameters"] = {
        k: u for k, u in hp.items() if k.startswith("opt.")}
    opt_spec["algorithm"]["switches"] = {}
    optim = importlib.import_module("pfl_numpy_optim")
    opts = None
    if not optim.plain(optim.options(opt_spec)):
        if optim.options(opt_spec)["opt.decay_scope"] not in ("all",
                                                              "weights"):
            raise base.Unsupported("fedpac has no shared/personal split")
        opts = optim.Optimizers(opt_spec)
    w0 = np.array(w0, dtype=float)
    data = [(np.asarray(c["X"], float), np.asarray(c["y"]).astype(int))
            for c in raw]
    N = len(data)
    theta = w0.copy()                       # θ in the body entries
    phis = [w0[head].copy() for _ in data]
    cbar = {}                               # class -> centroid
    kept = [w0.copy() for _ in data]        # each client's own buffers

    def feats(x, X, i):
        """f(x) of the client's samples: evaluation mode with BN."""
        if not bn:
            return net.forward(x, X, L - 1)[-1]
        train = bug == "fedpac-bn-stats-train"
        _, caches = lays[i].forward(x, X, train=train)
        return caches[-1]["X"].reshape(len(X), d)

    def stats(x, X, y, i):
        n_k, mu, s2 = _class_stats(feats(x, X, i), y, K)
        p = n_k / len(y)
        h = (mu if bug == "fedpac-no-prior" else p[:, None] * mu).ravel()
        V = float(np.sum(p * s2 - p ** 2 * (mu ** 2).sum(axis=1)))
        return (V if bug == "fedpac-var-no-n" else V / len(y)), h

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", theta, round=t)
        ids = list(rnd["clients"])
        n_S = float(sum(len(data[i][0]) for i in ids))
        acc = np.zeros_like(theta)
        got, start_phi, contrib = {}, {}, []
        for i, batches in zip(ids, rnd["batches"]):
            X, y = data[i]
            if bug == "fedpac-phi-reset":
                phis[i] = w0[head].copy()
            x = theta.copy()
            x[head] = phis[i]
            if mine is not None:
                x[mine] = kept[i][mine]
            start_phi[i] = phis[i].copy()
            log("client_begin", "train", "v", x, round=t, client=i, step=0)
            # both step sizes of this train() call, then i's scheduler step
            c = base.lr_factor(decay, t, trained[i])
            trained[i] += 1
            eta = eta0 * c
            eta_phi = eta_phi0 * (1.0 if bug == "fedpac-lr-phi-const" else c)
            # the classifier's optimizer and the feature extractor's
            opt_phi = opts.begin(0, i) if opts is not None else None
            opt_theta = opts.begin(1, i) if opts is not None else None
            if bug == "fedpac-opt-head-plain":
                opt_phi = None
            V, h = stats(x, X, y, i)
            own = None
            if own_start and (t > 0 or bug == "fedpac-own-round0"):
                own = _class_stats(feats(x, X, i), y, K)[1]
            log("note", "train", "V", [V], round=t, client=i)
            log("note", "train", "h", h, round=t, client=i)
            kinds = [q < tau for q, _ in enumerate(batches)]
            if bug == "fedpac-body-first":
                kinds = kinds[tau:] + kinds[:tau]
            for s, (batch, is_head) in enumerate(zip(batches, kinds), 1):
                Xb, yb = X[batch], y[batch]
                nb = len(batch)
                if bn:      # one training pass: loss, features, statistics
                    z, caches = lays[i].forward(x, Xb, train=True)
                    Ezb = lays[i].signal(z, yb.astype(float))
                    g, G = np.zeros_like(x), Ezb
                    G = lays[i].backward(x, lays[i].layers[-1], caches[-1],
                                         G, g)
                    acts = None
                else:
                    acts = net.forward(x, Xb)
                    g = np.zeros_like(x)
                    net.backward(x, acts, net.out_grad(acts[-1], yb), L, g,
                                 1.0 / nb)
                if bn and is_head:
                    x = lays[i].track(x)    # the pass's statistics
                if is_head and opt_phi is not None:
                    x = opt_phi.step(x, g, eta_phi, mask=head)
                elif is_head:
                    x = np.where(head, x - eta_phi * g, x)
                else:
                    Fb = (caches[-1]["X"].reshape(nb, d) if bn
                          else acts[L - 1])
                    G = np.zeros_like(Fb)
                    for r, k in enumerate(yb):
                        c = cbar.get(int(k))
                        if c is None and own is not None:
                            c = own[int(k)]
                        if c is None and bug == "fedpac-missing-zero":
                            c = np.zeros(d)
                        if c is not None:
                            G[r] = coef * (Fb[r] - c)
                    gR = np.zeros_like(x)
                    if bn:  # CE's and λ R's signals on f, then the body
                        G = (G * lam / nb + lays[i].backward(
                            x, lays[i].layers[-1], caches[-1], Ezb,
                            np.zeros_like(x))).reshape(caches[-1]["X"].shape)
                        for Ly, cache in zip(reversed(lays[i].layers[:-1]),
                                             reversed(caches[:-1])):
                            G = lays[i].backward(x, Ly, cache, G, g)
                        x = lays[i].track(x)
                        lam_used = 0.0      # g already holds λ ∇R
                    else:
                        net.backward(x, acts, G, L - 1, gR, 1.0 / nb)
                        lam_used = lam
                    if opt_theta is not None:
                        x = opt_theta.step(x, g + lam_used * gR, eta,
                                           mask=~head)
                    else:
                        x = np.where(head, x, x - eta * (g + lam_used * gR))
                log("step", "train", "v", x, round=t, client=i, step=s)
            if bug == "fedpac-stats-after":
                V, h = stats(x, X, y, i)
            got[i] = (V, h, x[head].copy())
            log("client_end", "train", "v", x, round=t, client=i)
            at = x.copy()
            if bug == "fedpac-protos-before":
                at[~head] = theta[~head]
            n_k, mu, _ = _class_stats(feats(at, X, i), y, K)
            log("note", "train", "C", mu.ravel(), round=t, client=i)
            log("note", "train", "n_C", n_k, round=t, client=i)
            contrib.append((n_k, mu))
            c = (1.0 / len(ids) if bug == "fedpac-theta-uniform"
                 else len(X) / n_S)
            acc += c * x
            if mine is not None:
                if i == base.first_upload(rnd, ids):   # w's buffers: the first uploader's
                    acc[mine] = x[mine]
                else:
                    acc[mine] -= c * x[mine]
                kept[i] = x.copy()
        num, den, holders = np.zeros((K, d)), np.zeros(K), np.zeros(K)
        for n_k, mu in contrib:
            flat_w = uniform_c != (bug == "fedpac-proto-uniform")
            wts = (n_k > 0).astype(float) if flat_w else n_k
            num += wts[:, None] * mu
            den += wts
            holders += n_k > 0
        new = {k: num[k] / den[k] for k in range(K) if holders[k] > 0}
        if bug == "fedpac-keep-old":
            new = {**cbar, **new}
            holders = np.array([max(holders[k], float(k in cbar))
                                for k in range(K)])
        cbar = new
        log("note", "train", "C_bar",
            np.concatenate([cbar.get(k, np.zeros(d)) for k in range(K)]),
            round=t)
        log("note", "train", "N_bar", holders, round=t)
        m = len(ids)
        Hs = np.array([got[j][1] for j in ids])
        Vs = np.array([got[j][0] for j in ids])
        src = start_phi if bug == "fedpac-heads-before" else \
            {j: got[j][2] for j in ids}
        Phi = np.array([src[j] for j in ids])
        new_phi = {}
        for a, i in enumerate(ids):
            if bug == "fedpac-alpha-uniform":
                al = np.full(m, 1.0 / m)
            elif bug == "fedpac-alpha-self":
                al = np.eye(m)[a]
            else:
                D = Hs[a] - Hs                      # rows h_i − h_j
                al = _simplex_qp(np.diag(Vs) + D @ D.T)
                if small != "exact":
                    keep = (al >= eps if bug == "fedpac-eps-inclusive"
                            else al > eps)
                    al = np.where(keep, al, 0.0)
                    if small == "renormalised":
                        al = al / al.sum()
            full = np.zeros(N)
            full[ids] = al
            log("note", "train", "alpha_i", full, round=t, client=i)
            new_phi[i] = al @ Phi
            log("note", "train", "phi", new_phi[i], round=t, client=i)
        phis = [new_phi.get(i, phis[i]) for i in range(N)]
        theta = np.where(head, w0, acc)
        log("server", "train", "w", theta, round=t)
    v = []
    for i in range(N):
        x = theta.copy()
        x[head] = phis[i]
        if mine is not None:
            x[mine] = kept[i][mine]
        v.append(x)
    return {"w": theta, "v": np.array(v)}


def net_size(net):
    """P: the end of the last layer's parameters."""
    last = net.layers[-1]
    return last[2][1] if last[2] is not None else last[1][1]
# SPDX-License-Identifier: GPL-3.0-or-later
