"""pfl_numpy_ifca.py: IFCA for the NumPy candidate (pfl_numpy.py loads it),
written from Ghosh, Chung, Yin, Ramchandran (NeurIPS 2020, Algorithm 1) as
the spec notes (notes-cfl-ifca-sampling-metrics.md §2) give it, not from
pflref's C code.

Initial cluster models: init.cluster_models when given, else
θ_j = w0 + j·δ (ifca.init_shift).  Drawn spreads (ifca.init_sd > 0) are
replayed from a pflref result: its theta0, given as init.cluster_models.  Round t: each participant picks
ĵ = np.argmin of its full-data losses F_i(θ_j) (ties to the lowest j);
gradient mode sends ∇F_i(θ_ĵ; its one batch) and the server steps
θ_j −= γ/|M_t| Σ g_i; model mode runs γ-steps over its batches and the
server averages the local models per cluster (a cluster no one chose
keeps its model).  Every client reports θ_ĵ at the new models.

ifca.estimate_mode = eval scores F_i(θ_j) as model.eval() with
torch.no_grad() does: batchnorm on θ_j's running statistics, dropout off,
so the estimates use up no dropout mask and a client's masks are its
local steps' alone; the default train scores a layer list in a
training-mode forward pass (the authors' models never leave torch's
training mode), where a dropout layer draws a mask per forward: each
scoring of a cluster model takes the next mask of the client's own
estimate queue, kept apart from its local steps': the schedule's
init_partition_dropout[i] (every client scores the k models before
round 0), then per round estimate_dropout[j] when it takes part (its pick
at the round's start) and partition_dropout[i] (every client's pick at
the new models, which is also what it reports).

The client optimizer (opt.*, pfl_numpy_optim) takes LocalUpdate's steps
in model mode, one optimizer per client (slot 0, whichever cluster model
it starts from) whose state lives as opt.state says; gradient mode
(Option I) takes no local step, so opt.* there is refused.  lr.* scales γ
(LocalUpdate's step, or the server's in gradient mode) by round t's factor
(lr.count = rounds; lr.scope = eta_p: not at all, η_p being pFedMe's).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "ifca"
BUGS = ("ifca-divide-by-cluster-size", "ifca-ties-to-highest",
        "ifca-empty-cluster-reset", "ifca-report-round-pick",
        "ifca-ignore-given-models", "ifca-estimate-other-mode",
        "ifca-estimate-shared-mask")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _loss(spec, raw, theta, data=None, in_eval=False):
    """F_i(θ) on the client's training set; data: its model object (a
    layer list's loss is its training-mode forward pass, or with in_eval
    its evaluation-mode one)."""
    model = spec["model"]
    if model["kind"] == "quadratic":
        a, c = np.asarray(raw["a"], float), np.asarray(raw["c"], float)
        return 0.5 * np.sum(a * (theta - c) ** 2)
    if model["kind"] == "layers" and in_eval:
        return data.evaluate(theta, data.X, data.y)[0]
    if model["kind"] == "layers":
        return np.mean(data.losses(theta, data.X, data.y))
    if model["kind"] != "linear":
        raise _base().Unsupported("ifca losses for %s" % model["kind"])
    X, y = np.asarray(raw["X"], float), np.asarray(raw["y"], float)
    d = model["d"]
    r = X @ theta[:d] + (theta[d] if model.get("bias", False) else 0.0) - y
    return np.mean(r * r if model["loss"] == "squared" else 0.5 * r * r)


def _estimate_queues(spec, n):
    """Each client's masks for its training-mode scorings, in the order it
    scores: before round 0, then per round its pick (if it takes part) and
    the pick at the new models; None when the schedule gives none."""
    sched = spec["schedule"]
    first = sched.get("init_partition_dropout")
    if first is None:
        return None
    queues = [list(first[i]) for i in range(n)]
    for rnd in sched["rounds"]:
        for i, lst in zip(rnd["clients"], rnd.get("estimate_dropout", [])):
            queues[i] += lst
        for i, lst in enumerate(rnd.get("partition_dropout", [])):
            queues[i] += lst
    return queues


def _masked_loss(data, theta, mask):
    """The training-mode mean loss of θ on the client's whole set with the
    dropout masks `mask` (one pass), its local steps' queue left as is."""
    kept = data.passes, data.taken
    data.passes, data.taken = [mask], 0
    try:
        return np.mean(data.losses(theta, data.X, data.y))
    finally:
        data.passes, data.taken = kept


def run(spec, clients, w0, log, bug):
    base = _base()
    hp = spec["algorithm"]["hyperparameters"]
    switches = spec["algorithm"].get("switches", {})
    mode = switches.get("ifca.mode", "gradient")
    in_eval = (switches.get("ifca.estimate_mode", "train") == "eval") != \
        (bug == "ifca-estimate-other-mode")
    given = spec.get("init", {}).get("cluster_models")
    if given is None and hp.get("ifca.init_sd", 0) != 0:
        raise base.Unsupported("drawn initial cluster models (replay them "
                               "with init.cluster_models = the result's theta0)")
    raw = spec["problem"].get("clients")
    if raw is None:
        raise base.Unsupported("ifca needs inline clients")
    gamma, k = hp["gamma"], hp["ifca.k"]
    lr_cfg = base.lr_settings(hp, switches)       # lr.*
    opts = base.pfl_numpy_optim.for_run(spec)    # opt.*: None for plain SGD
    if opts is not None and mode != "model":
        raise base.Unsupported("opt.* with ifca.mode = %s (no local steps)"
                               % mode)
    if given is not None and bug != "ifca-ignore-given-models":
        theta = np.array(given, dtype=float).reshape(k, -1)
    else:
        theta = np.array([w0 + j * hp.get("ifca.init_shift", 0.0) for j in range(k)])

    queues = None
    if spec["model"]["kind"] == "layers" and not in_eval and \
            any(L["type"] == "dropout" for L in spec["model"]["layers"]):
        queues = _estimate_queues(spec, len(raw))
        if queues is None:
            raise base.Unsupported("ifca.estimate_mode = train with dropout "
                                   "and no estimate masks")
    used = [0] * len(raw)

    def scored(i, th, j):
        if queues is None:
            return _loss(spec, raw[i], th, clients[i], in_eval)
        q = used[i] + (0 if bug == "ifca-estimate-shared-mask" else j)
        return _masked_loss(clients[i], th, queues[i][q])

    def pick(i):
        losses = np.array([scored(i, th, j) for j, th in enumerate(theta)])
        used[i] += k
        if bug == "ifca-ties-to-highest":
            return losses, len(losses) - 1 - int(np.argmin(losses[::-1]))
        return losses, int(np.argmin(losses))

    picked = {}
    # every client's pick at the initial models (its report before any round)
    part = [pick(i)[1] for i in range(len(raw))]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        if t == 0:
            log("note", "train", "theta0", theta.ravel(), round=0)
        log("round_begin", "train", "theta", theta.ravel(), round=t)
        M = sorted(rnd["clients"])
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        out = {j: [] for j in range(k)}
        picked = {}
        gamma_t = gamma * base.lr_factor(lr_cfg, t)      # lr.*: round t's γ
        for i in M:
            losses, j = pick(i)
            picked[i] = j
            log("note", "train", "loss", losses, round=t, client=i)
            log("note", "train", "j_hat", [j], round=t, client=i)
            if mode == "model":
                log("client_begin", "train", "theta_local", theta[j], round=t,
                    client=i, step=0)
                x = base.local_sgd(theta[j].copy(), clients[i], plan[i], gamma_t,
                                   lambda s, v, i=i: log("step", "train", "theta_local",
                                                         v, round=t, client=i, step=s),
                                   opt=opts and opts.begin(0, i))
                log("client_end", "train", "theta_local", x, round=t, client=i)
            else:
                x = clients[i].grad(theta[j], plan[i][0])
                log("client_end", "train", "g", x, round=t, client=i)
            out[j].append(x)
        for j in range(k):
            if mode == "gradient":
                div = len(out[j]) if bug == "ifca-divide-by-cluster-size" else len(M)
                if out[j]:
                    theta[j] = theta[j] - gamma_t / max(div, 1) * np.sum(out[j], axis=0)
            elif out[j]:
                theta[j] = np.mean(out[j], axis=0)
            elif bug == "ifca-empty-cluster-reset":
                theta[j] = np.zeros_like(theta[j])
        log("server", "train", "theta", theta.ravel(), round=t)
        part = [pick(i)[1] for i in range(len(raw))]
        log("note", "train", "partition", part, round=t)
    v = []
    for i in range(len(raw)):
        j = picked.get(i, 0) if bug == "ifca-report-round-pick" else part[i]
        v.append(theta[j].copy())
    return {"v": v}
# SPDX-License-Identifier: GPL-3.0-or-later
