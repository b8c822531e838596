#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""apple_torch.py: APPLE in PyTorch, checked by `pflref check`.

Luo, Wu, "Adapt to Adaptation: Learning Personalization for Cross-Silo
Federated Learning", IJCAI 2022 (arXiv 2110.08394v3), Algorithm 1, every
other core downloaded each round (lines numbered as in
docs/algorithms/apple.md):

  l. 1   every core starts at w0; p_i = p_0 = (n_j / n)_j
  l. 4   client i downloads the cores as the round starts
  l. 6-10  per scheduled batch, one torch.optim.SGD step (param groups:
         its own core at lr η, p_i at lr η_p) on
         ℓ_i(Σ_j p_ij w_j; b) + λ(r)(μ/2)‖p_i − p_0‖², the downloaded
         cores constants; autograd gives ∂/∂w_i = p_ii ∇ℓ and
         ∂/∂p_ij = ⟨w_j, ∇ℓ⟩ + λ(r) μ (p_ij − p_0j)
  λ(r) = (cos(rπ/L) + 1)/2 for r < L, else 0

The switches apple.scheduler, apple.prox, apple.p_init, apple.core_lr and
apple.lambda_round are followed; apple.order = core_first and apple.p_grad
= block_mean (PFLlib's hand-written updates) are not (Unsupported).
Records: docs/algorithms/apple.md, "What a run reports".

The client optimizer (opt.*): the same torch optimizer, its two parameter
groups at lr η (or N η) and η_p, with the vector's settings (SGD momentum,
dampening, nesterov, weight decay; Adam, AdamW), as the authors' script
builds it (momentum 0.9 there); opt.state = reset builds it for every
client update, client and server restore it from a kept state_dict.
Clipping, a decay scope other than all and the classical momentum form
are not followed (Unsupported).

usage: apple_torch.py VECTOR.json -o RESULT.json
"""
import copy
import math

import torch
from torch.nn.utils import stateless

from torch_common import (OPT_DEFAULTS, Problem, Recorder, Unsupported, flat,
                          main)


def opt_settings(vector_raw):
    """(the vector without its opt.* keys, the opt.* settings over their
    defaults)."""
    vec = copy.deepcopy(vector_raw)
    alg = vec["spec"]["algorithm"]
    cfg = dict(OPT_DEFAULTS)
    for part in ("hyperparameters", "switches"):
        for k in [k for k in alg.get(part, {}) if k.startswith("opt.")]:
            cfg[k] = alg[part].pop(k)
    if cfg["opt.clip"] != "off" or cfg["opt.decay_scope"] != "all" or \
            cfg["opt.momentum_form"] != "pytorch" or \
            (cfg["opt.method"] != "adamw" and
             cfg["opt.weight_decay_form"] != "coupled"):
        raise Unsupported("opt.clip, opt.decay_scope, opt.momentum_form or "
                          "opt.weight_decay_form away from the defaults")
    return vec, cfg


def make_optimizer(ocfg, groups):
    """The torch optimizer the opt.* settings name, over the groups."""
    if ocfg["opt.method"] == "sgd":
        return torch.optim.SGD(groups, lr=groups[0]["lr"],
                               momentum=ocfg["opt.momentum"],
                               dampening=ocfg["opt.dampening"],
                               nesterov=ocfg["opt.nesterov"] == "on",
                               weight_decay=ocfg["opt.weight_decay"])
    kind = torch.optim.Adam if ocfg["opt.method"] == "adam" else torch.optim.AdamW
    return kind(groups, lr=groups[0]["lr"],
                betas=(ocfg["opt.beta1"], ocfg["opt.beta2"]),
                eps=ocfg["opt.eps"], weight_decay=ocfg["opt.weight_decay"])

DEFAULTS = {"apple.scheduler": "cosine", "apple.prox": "half",
            "apple.p_init": "samples", "apple.order": "joint",
            "apple.p_grad": "inner", "apple.core_lr": "eta",
            "apple.lambda_round": "current"}


def scheduler(cfg, t):
    """λ of round t."""
    r = t
    if cfg["apple.lambda_round"] == "previous":
        if t == 0:
            return 1.0
        r = t - 1
    L = int(cfg["apple.L"])
    if r >= L:
        return 0.0
    if cfg["apple.scheduler"] == "exponential":
        return 0.001 ** (r / L)
    return (math.cos(math.pi * r / L) + 1.0) / 2.0


def unflat(module, w):
    """The module's parameters as a name → tensor dict cut from flat w
    (views that keep w's autograd history)."""
    out, o = {}, 0
    for name, p in module.named_parameters():
        out[name] = w[o:o + p.numel()].view_as(p)
        o += p.numel()
    return out


def client_update(prob, rec, t, i, held, p_i, p0, lam, batches, ocfg=None,
                  saved=None):
    """Lines 6-10 for client i: returns (its core, p_i)."""
    cfg = prob.cfg
    N = len(held)
    w_i = held[i].clone().requires_grad_(True)
    p = p_i.clone().requires_grad_(True)
    eta_w = cfg["eta"] * (N if cfg["apple.core_lr"] == "n_eta" else 1)
    coef = lam * cfg["apple.mu"] * (1.0 if cfg["apple.prox"] == "full"
                                    else 0.5)
    groups = [{"params": [w_i], "lr": eta_w},
              {"params": [p], "lr": cfg["eta_p"]}]
    opt = (torch.optim.SGD(groups) if ocfg is None
           else make_optimizer(ocfg, groups))
    life = ocfg["opt.state"] if ocfg is not None else "reset"
    key = i if life == "client" else None
    if life != "reset" and key in saved:
        opt.load_state_dict(saved[key])
    rec.record("client_begin", "w_i", w_i, round=t, client=i, step=0)
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        w_p = sum(p[j] * (w_i if j == i else held[j]) for j in range(N))
        loss = prob.clients[i].loss_of(prob.global_model, w_p, b)
        loss = loss + coef * ((p - p0) ** 2).sum()
        loss.backward()
        opt.step()
        rec.step(t, i, s, "w_i", w_i)
        rec.step(t, i, s, "p_i", p)
    if life != "reset":
        saved[key] = copy.deepcopy(opt.state_dict())
    return w_i.detach().clone(), p.detach().clone()


def run(vector_raw):
    """APPLE on a golden vector; returns its pflref-result/1 dict."""
    vector_raw, ocfg = opt_settings(vector_raw)
    if all(ocfg[k] == v for k, v in OPT_DEFAULTS.items()):
        ocfg = None                    # the paper's plain steps
    saved = {}
    prob = Problem(vector_raw, "apple")
    cfg = prob.cfg
    for k, v in DEFAULTS.items():
        cfg.setdefault(k, v)
    if cfg["apple.order"] != "joint" or cfg["apple.p_grad"] != "inner":
        raise Unsupported("PFLlib's hand-written updates (apple.order, "
                          "apple.p_grad)")
    if cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule %r in the apple example"
                          % cfg["lr.schedule"])
    model = prob.global_model
    for c in prob.clients:
        c.loss_of = (lambda module, w, b, c=c: _loss(c, module, w, b))
    rec = Recorder(prob.id)
    w0 = flat(model)
    N = len(prob.clients)
    n = torch.tensor([float(c.n) for c in prob.clients], dtype=torch.float64)
    p0 = n / n.sum()
    start = (torch.full((N,), 1.0 / N, dtype=torch.float64)
             if cfg["apple.p_init"] == "uniform" else p0.clone())
    cores = [w0.clone() for _ in prob.clients]
    ps = [start.clone() for _ in prob.clients]
    # limited downloads (apple.M): each client's ClientNet keeps a copy of
    # every core; a round's peers[j] are the cores clients[j] downloads
    # (ljaiverson/pFL-APPLE utils/apple.py:34-37 skips the others)
    limited = cfg.get("apple.M") is not None
    stale = cfg.get("apple.stale", "last_download")
    if stale not in ("last_download", "initial"):
        raise Unsupported("apple.stale %r" % stale)
    mine = [[w0.clone() for _ in prob.clients] for _ in prob.clients]
    for t, rnd in enumerate(prob.rounds):
        server = [w.clone() for w in cores]
        lam = scheduler(cfg, t)
        lists = dict(zip(rnd["clients"], rnd["peers"])) \
            if "peers" in rnd else None
        for i, batches in sorted(zip(rnd["clients"], rnd["batches"])):
            held = [server[j] if j != i else cores[i] for j in range(N)]
            if limited:
                for j in range(N):
                    if j != i and (lists is None or j in lists[i]):
                        mine[i][j] = server[j].clone()
                    elif j != i and stale == "initial":
                        mine[i][j] = w0.clone()
                held = [mine[i][j] if j != i else cores[i]
                        for j in range(N)]
            rec.record("note", "lambda", [lam], round=t, client=i)
            cores[i], ps[i] = client_update(prob, rec, t, i, held, ps[i],
                                            p0, lam, batches, ocfg, saved)
            rec.client_end(t, i, "w_i", cores[i])
            rec.record("note", "p_i", ps[i], round=t, client=i)
            held[i] = cores[i]
            w_p = sum(ps[i][j] * held[j] for j in range(N))
            rec.record("note", "w_p", w_p, round=t, client=i)
    for i, w in enumerate(cores):
        rec.final("v", w, client=i)
    return rec.result()


def _loss(client, module, w, b):
    """client's batch loss of the module with its parameters taken from
    the flat w (autograd flows into w)."""
    with stateless._reparametrize_module(module, unflat(module, w)):
        return client.loss(module, b)


if __name__ == "__main__":
    main(run)
