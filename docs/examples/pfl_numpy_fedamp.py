# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_fedamp.py: FedAMP for the NumPy candidate (pfl_numpy.py loads
it), written from Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, "Personalized
Cross-Silo Federated Learning on Non-IID Data" (AAAI 2021, arXiv
2007.03797v5, Algorithm 1), not from pflref's C code.

Each client i keeps a personal model w_i (all start at w⁰).  In round k
the server builds, from the models as they stand when the round starts,
a message for every participant i:
    xi_ij = alpha_k * exp(-||w_i - w_j||^2 / sigma) / sigma   (j != i)
    xi_ii = 1 - sum_{j != i} xi_ij
    u_i   = sum_j xi_ij w_j
and the client minimises F_i(w) + lambda/(2 alpha_k) ||w - u_i||^2 with its
scheduled minibatch steps, starting from u_i:
    w <- w - eta (grad F_i(w; b) + (lambda/alpha_k)(w - u_i)).
Switches (PFLlib's readings; preset pfllib sets all three):
  fedamp.peers = previous  the j are only last round's participants
  fedamp.start = own       the steps start from the client's own w_i
  fedamp.prox = detached   the proximal term adds no gradient
Learning-rate decay (lr.*, PFLlib's -ld): client i's eta in round t is
eta * gamma^t, or gamma^(the rounds i trained in before) with lr.count =
trainings, which preset pfllib sets (each PFLlib client steps its own
ExponentialLR at the end of its train()); alpha_k, lambda, sigma stay.
A layer list with batch normalisation runs under bn.aggregate =
parameters_only (preset pfllib sets it): PFLlib's server measures and mixes
parameters() only (serveramp.py:84-96) and the client's own model keeps its
running statistics (clientamp.py:57-59 writes u_i into client_u), so
||w_i - w_j||^2 leaves them out, u_i carries client i's own, the proximal
term does not pull them, and every step's training pass moves them.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedamp"
BUGS = ("fedamp-no-sigma", "fedamp-norm-not-squared", "fedamp-self-one",
        "fedamp-prox-half", "fedamp-prox-lambda", "fedamp-prox-to-own",
        "fedamp-start-own", "fedamp-live-models", "fedamp-all-peers",
        "fedamp-prox-kept", "fedamp-lr-per-round")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    base = _base()
    alg = spec["algorithm"]
    cfg = {"fedamp.peers": "all", "fedamp.start": "message",
           "fedamp.prox": "squared", "lr.schedule": "constant",
           "lr.count": "rounds", "bn.aggregate": "average"}
    presets = {"pfllib": {"fedamp.peers": "previous", "fedamp.start": "own",
                          "fedamp.prox": "detached",
                          "lr.count": "trainings",
                          "bn.aggregate": "parameters_only"}}
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise base.Unsupported("preset %r for fedamp" % preset)
        cfg.update(presets[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    return cfg


def _message(i, models, peers, alpha, sigma, bug, keep=None):
    """(the attention row xi_i over all clients, the message u_i); keep:
    the running statistics' entries, which only parameters() leave out of
    the distance and which u_i takes from client i's own model."""
    xi = np.zeros(len(models))
    for j in peers:
        if j == i:
            continue
        diff = models[i] - models[j]
        if keep is not None:
            diff = np.where(keep, 0.0, diff)
        dist = float(diff @ diff)
        if bug == "fedamp-norm-not-squared":
            dist = np.sqrt(dist)
        att = np.exp(-dist / sigma)
        xi[j] = alpha * (att if bug == "fedamp-no-sigma" else att / sigma)
    xi[i] = 1.0 if bug == "fedamp-self-one" else 1.0 - xi.sum()
    u = np.zeros_like(models[i])
    for j in range(len(models)):
        u = u + xi[j] * models[j]
    if keep is not None:
        u = np.where(keep, models[i], u)
    return xi, u


def run(spec, clients, w0, log, bug):
    cfg = _config(spec)
    eta = cfg["eta"]
    alpha, lam, sigma = (cfg["fedamp.alpha_k"], cfg["fedamp.lambda"],
                         cfg["fedamp.sigma"])
    weight = lam / alpha
    if bug == "fedamp-prox-half":
        weight = lam / (2 * alpha)
    if bug == "fedamp-prox-lambda":
        weight = lam
    if cfg["fedamp.prox"] == "detached" and bug != "fedamp-prox-kept":
        weight = 0.0
    if bug == "fedamp-lr-per-round":
        cfg["lr.count"] = "rounds"
    base = _base()
    keep = base.kept_buffers(cfg, clients)
    models = [np.array(w0, dtype=float) for _ in clients]
    trainings = [0] * len(clients)
    last = []
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        start_models = [m.copy() for m in models]
        if cfg["fedamp.peers"] == "previous" and bug != "fedamp-all-peers":
            peers = last
        else:
            peers = range(len(clients))
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        for i in sorted(plan):
            seen = models if bug == "fedamp-live-models" else start_models
            xi, u = _message(i, seen, peers, alpha, sigma, bug, keep)
            log("note", "train", "xi", xi, round=t, client=i)
            log("note", "train", "u", u, round=t, client=i)
            own = cfg["fedamp.start"] == "own" or bug == "fedamp-start-own"
            x = (start_models[i] if own else u).copy()
            pull = start_models[i] if bug == "fedamp-prox-to-own" else u
            log("client_begin", "train", "w_i", x, round=t, client=i, step=0)
            lr = eta * _base().lr_factor(cfg, t, trainings[i])
            trainings[i] += 1
            for s, batch in enumerate(plan[i], start=1):
                d = clients[i].grad(x, batch) + weight * base.parameters_only(
                    clients[i], x - pull)
                x = base.track(clients[i], x - lr * d)
                log("step", "train", "w_i", x, round=t, client=i, step=s)
            log("client_end", "train", "w_i", x, round=t, client=i)
            models[i] = x
        last = sorted(plan)
    return {"v": np.array(models)}
