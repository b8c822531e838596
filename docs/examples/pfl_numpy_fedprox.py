# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_fedprox.py: FedProx for the NumPy candidate (pfl_numpy.py
loads it), written from Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith,
"Federated Optimization in Heterogeneous Networks" (MLSys 2020, arXiv
1812.06127v5, Algorithm 2), not from pflref's C code.

Round t: S_t is the round's list of K draws ("draws", repetitions allowed;
device k drawn with probability n_k/n).  Every device in S_t starts from
w^t and runs its scheduled minibatches of
    w ← w − η (∇F_k(w; b) + μ (w − w^t))
(the gradient of h_k(w; w^t) = F_k(w) + μ/2 ‖w − w^t‖²; a straggler simply
has fewer batches).  The server averages over the draws:
    w^{t+1} = (1/K) Σ_{draws} w_k^{t+1},
a device drawn twice counting twice.  fedprox.sampling = uniform_weighted
(what the authors' code and PFLlib run; presets official and pfllib)
averages the round's clients with n_k / Σ n_j and ignores the draws.
The client optimizer (opt.*) steps on ∇F_k + μ(w − w^t); lr.* decays η
per round or per client (PFLlib).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedprox"
BUGS = ("fedprox-draws-counted-once", "fedprox-draws-by-size",
        "fedprox-prox-sign", "fedprox-prox-half", "fedprox-prox-to-w0",
        "fedprox-from-w0", "fedprox-straggler-dropped",
        "fedprox-uniform-mean", "fedprox-ignore-sampling",
        "fedprox-lr-per-round")

def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    base = _base()
    alg = spec["algorithm"]
    cfg = {"fedprox.sampling": "paper", "lr.schedule": "constant",
           "lr.count": "rounds", "lr.scope": "all", "bn.aggregate": "average"}
    # the authors' code and PFLlib: uniform without replacement, n_k weights;
    # PFLlib's -ld scheduler steps per client
    presets = {"official": {"fedprox.sampling": "uniform_weighted"},
               "pfllib": {"fedprox.sampling": "uniform_weighted",
                          "lr.count": "trainings",
                          # set_parameters / aggregate_parameters move
                          # parameters() only (clientprox.py, serverbase.py)
                          "bn.aggregate": "parameters_only"}}
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise base.Unsupported("preset %r for fedprox" % preset)
        cfg.update(presets[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    return cfg


def _weights(cfg, rnd, clients, bug):
    """{k: the weight of w_k in w^{t+1}}."""
    ids = list(rnd["clients"])
    paper = cfg["fedprox.sampling"] == "paper"
    if bug == "fedprox-ignore-sampling" and "draws" in rnd:
        paper = True
    if paper:
        draws = list(rnd["draws"])          # required under paper
        if bug == "fedprox-draws-counted-once":
            return {k: 1.0 / len(set(draws)) for k in ids}
        if bug == "fedprox-draws-by-size":
            total = sum(clients[k].n for k in set(draws))
            return {k: clients[k].n / total for k in ids}
        K = len(draws)
        return {k: draws.count(k) / K for k in ids}
    if bug == "fedprox-uniform-mean":
        return {k: 1.0 / len(ids) for k in ids}
    total = sum(clients[k].n for k in ids)
    return {k: clients[k].n / total for k in ids}


def run(spec, clients, w0, log, bug):
    base = _base()
    import pfl_numpy_optim
    cfg = _config(spec)
    eta, mu = cfg["eta"], cfg["fedprox.mu"]
    if bug == "fedprox-prox-half":
        mu = mu / 2
    if bug == "fedprox-prox-sign":
        mu = -mu
    if bug == "fedprox-lr-per-round":
        cfg = dict(cfg, **{"lr.count": "rounds"})
    opts = pfl_numpy_optim.for_run(spec)
    trained = [0] * len(clients)
    w = np.array(w0, dtype=float)
    # bn.aggregate = parameters_only (PFLlib): the running statistics stay
    # in each client's own model; the server keeps the first upload's
    keep = base.kept_buffers(cfg, clients)
    mine = [np.array(w0, dtype=float) for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        c = _weights(cfg, rnd, clients, bug)
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        longest = max(len(b) for b in rnd["batches"])
        w_next = np.zeros_like(w)
        dropped = []
        for k in sorted(plan):
            anchor = w0 if bug == "fedprox-prox-to-w0" else w
            x = np.array(w0 if bug == "fedprox-from-w0" else w, dtype=float)
            if keep is not None:
                x = np.where(keep, mine[k], x)
            log("client_begin", "train", "w_local", x, round=t, client=k,
                step=0)
            eta_k = eta * base.lr_factor(cfg, t, trained[k])
            trained[k] += 1
            opt = opts and opts.begin(0, k)
            for s, batch in enumerate(plan[k], start=1):
                # the proximal term over parameters() (PFLlib's
                # PerturbedGradientDescent): the buffers are not pulled
                d = clients[k].grad(x, batch) + mu * base.parameters_only(
                    clients[k], x - anchor)
                x = opt.step(x, d, eta_k) if opt is not None else x - eta_k * d
                x = base.track(clients[k], x)
                log("step", "train", "w_local", x, round=t, client=k, step=s)
            log("client_end", "train", "w_local", x, round=t, client=k)
            log("note", "train", "c", [c[k]], round=t, client=k)
            mine[k] = x.copy()
            if bug == "fedprox-straggler-dropped" and len(plan[k]) < longest:
                dropped.append(c[k])
                continue
            w_next = w_next + c[k] * x
        if bug == "fedprox-straggler-dropped":
            w_next = w_next / (1.0 - sum(dropped))
        w = w_next
        if keep is not None and plan:
            w = np.where(keep, mine[base.first_upload(rnd, plan)], w)
        log("server", "train", "w", w, round=t)
    return {"w": w}
