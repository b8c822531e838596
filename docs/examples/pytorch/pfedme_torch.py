#!/usr/bin/python3
"""pfedme_torch.py: pFedMe in PyTorch, checked by `pflref check`.

Dinh, Tran, Nguyen, "Personalized Federated Learning with Moreau
Envelopes", NeurIPS 2020 (arXiv 2006.08848v3), Algorithm 1, lines counted
from "input" = 1 as in docs/algorithms/pfedme.md:

  l. 5   w_{i,0} = w_t
  l. 7   θ ≈ argmin_θ h_i(θ) = f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖²  (eq. (7)):
         K steps of torch.optim.SGD(lr=η_p) on h_i, from θ = w_{i,r}
         (pfedme.theta_start = reset) or the last θ (warm)
  l. 8   w_{i,r+1} = w_{i,r} − ηλ (w_{i,r} − θ)
  l. 10  w_{t+1} = (1 − β) w_t + β Σ_{i∈S^t} c_i w_{i,R},  c_i = 1/S
         (paper) or n_i / Σ_{S^t} n_j (pfedme.weights = samples)

The official code's μ (pfedme.mu) adds (μ/2)‖θ‖² to h_i.  Who trains
(pfedme.train: all N, or only S^t) and the personalised model reported
(pfedme.personal_eval: the last θ, w_{i,R}, or the global w_{t+1}) are
switches; the presets official and pfllib bundle them.  One scheduled batch
is one local round r.  Records: docs/validate.md, "pfedme".

The client optimizer (opt.*, docs/algorithms/pfedme.md): the torch
optimizer that steps θ on h_i in place of plain SGD (the object that
PFLlib's and the authors' pFedMeOptimizer is), lr = η_p: torch.optim.SGD
(momentum, dampening, nesterov, weight_decay) or Adam / AdamW, living as
opt.state says: built in each client update (reset), one per client kept
across rounds (client), or one for all clients (server).  Line 8 stays the
hand-written update of the parameter list w_{i,r}.  Refused: clipping,
opt.decay_scope other than all, the classical momentum form, a decoupled
decay with sgd or adam, and layer lists (batch normalisation).

usage: pfedme_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

from torch_common import (OPT_DEFAULTS, Problem, Recorder, Unsupported,
                          clone, flat, frozen, load_flat, lr_factor, main,
                          plan, squared_distance, weights)


def split_optimizer(vector_raw):
    """(the vector without its opt.* keys, the opt.* settings over their
    defaults, or None for plain SGD); refuses what this example lacks."""
    raw = copy.deepcopy(vector_raw)
    alg = raw["spec"]["algorithm"]
    ocfg = dict(OPT_DEFAULTS)
    for part in ("hyperparameters", "switches"):
        group = alg.get(part, {})
        ocfg.update({k: v for k, v in group.items() if k.startswith("opt.")})
        alg[part] = {k: v for k, v in group.items() if not k.startswith("opt.")}
    if ocfg == OPT_DEFAULTS:
        return raw, None
    if ocfg["opt.clip"] != "off" or ocfg["opt.decay_scope"] != "all":
        raise Unsupported("opt.clip / opt.decay_scope other than off / all")
    if ocfg["opt.momentum_form"] != "pytorch":
        raise Unsupported("opt.momentum_form %r" % ocfg["opt.momentum_form"])
    if ocfg["opt.method"] != "adamw" and \
            ocfg["opt.weight_decay_form"] != "coupled":
        raise Unsupported("a decoupled weight decay with %s"
                          % ocfg["opt.method"])
    return raw, ocfg


def make_optimizer(ocfg, params):
    """The torch optimizer the opt.* settings name (lr set per update)."""
    if ocfg["opt.method"] == "sgd":
        return torch.optim.SGD(params, lr=1.0, momentum=ocfg["opt.momentum"],
                               dampening=ocfg["opt.dampening"],
                               nesterov=ocfg["opt.nesterov"] == "on",
                               weight_decay=ocfg["opt.weight_decay"])
    cls = torch.optim.Adam if ocfg["opt.method"] == "adam" else \
        torch.optim.AdamW
    return cls(params, lr=1.0, betas=(ocfg["opt.beta1"], ocfg["opt.beta2"]),
               eps=ocfg["opt.eps"], weight_decay=ocfg["opt.weight_decay"])


class InnerSolvers:
    """θ's module and its optimizer for each client update: a new pair
    (plain SGD, or opt.state = reset), the client's own (client) or one for
    all (server), the module reloaded in place so the optimizer's state,
    keyed by its parameter objects, carries on."""

    def __init__(self, ocfg):
        self.ocfg, self.kept = ocfg, {}

    def get(self, i, theta_start, lr):
        life = "reset" if self.ocfg is None else self.ocfg["opt.state"]
        key = i if life == "client" else None
        if life == "reset" or key not in self.kept:
            personal = clone(theta_start)
            opt = (torch.optim.SGD(personal.parameters(), lr=lr)
                   if self.ocfg is None
                   else make_optimizer(self.ocfg, personal.parameters()))
            if life != "reset":
                self.kept[key] = (personal, opt)
        else:
            personal, opt = self.kept[key]
            load_flat(personal, flat(theta_start))
        for group in opt.param_groups:
            group["lr"] = lr
        return personal, opt


def client_update(prob, rec, t, i, global_model, batches, theta_start,
                  solvers):
    """Lines 5-8 for client i; returns (w_{i,R}, the last θ) as modules.
    θ starts at theta_start: w_t, or w⁰ under pfedme.eval_reset = initial
    the first time the client trains (PFLlib's evaluation defect)."""
    cfg = prob.cfg
    lam, K, mu = cfg["lambda"], int(cfg["K"]), cfg["pfedme.mu"]
    eta = cfg["eta"] * lr_factor(cfg, t)                  # η_t, η_p,t
    local_model = clone(global_model)                    # l. 5: w_{i,0} = w_t
    personal, opt = solvers.get(                         # θ's start, and
        i, theta_start,                                  # its optimizer
        cfg["eta_p"] * lr_factor(cfg, t, "eta_p"))
    rec.record("client_begin", "w_local", local_model, round=t, client=i,
               step=0)
    for r, D in enumerate(batches):                      # l. 6: local round r
        if cfg["pfedme.theta_start"] == "reset":         # θ ← w_{i,r}
            load_flat(personal, flat(local_model))
        w_ir = frozen(local_model)
        for k in range(1, K + 1):                        # l. 7: K inner steps
            opt.zero_grad()
            h = prob.clients[i].loss(personal, D) \
                + lam / 2 * squared_distance(personal, w_ir)
            if mu != 0.0:
                h = h + mu / 2 * sum((p ** 2).sum()
                                     for p in personal.parameters())
            h.backward()
            opt.step()      # θ ← θ − η_p (∇f(θ; D) + λ(θ − w_{i,r}) + μθ)
            rec.step(t, i, r * K + k, "theta", personal)
        with torch.no_grad():                            # l. 8
            for w, th in zip(local_model.parameters(), personal.parameters()):
                w -= eta * lam * (w - th)
        rec.step(t, i, r + 1, "w_local", local_model)
    rec.client_end(t, i, "w_local", local_model)
    rec.client_end(t, i, "theta", personal)
    return local_model, personal


def run(vector_raw):
    """pFedMe on a golden vector; returns its pflref-result/1 dict."""
    vector_raw, ocfg = split_optimizer(vector_raw)
    prob = Problem(vector_raw, "pfedme")
    solvers = InnerSolvers(ocfg)
    cfg, rec, model = prob.cfg, Recorder(prob.id), prob.global_model
    report = cfg["pfedme.personal_eval"]
    v = [flat(model) for _ in prob.clients]              # reported models
    initial = clone(model)                               # w⁰
    untrained = set(range(len(prob.clients))) \
        if cfg["pfedme.eval_reset"] == "initial" else set()
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        w_R = {}
        for i, batches in plan(rnd).items():             # all N, or S^t
            start = initial if i in untrained else model
            untrained.discard(i)
            local_model, personal = client_update(prob, rec, t, i, model,
                                                  batches, start, solvers)
            w_R[i] = flat(local_model)
            if report in ("theta", "local_w"):
                v[i] = flat(personal if report == "theta" else local_model)
        S_t = sorted(rnd.get("selected", rnd["clients"]))  # l. 9
        c = weights(cfg["pfedme.weights"], S_t, prob.n)
        avg = torch.zeros_like(flat(model))
        for i in S_t:
            avg = avg + c[i] * w_R[i]
        beta = cfg["beta"]                               # l. 10
        load_flat(model, (1.0 - beta) * flat(model) + beta * avg)
        rec.server(t, model)
        if report == "global":
            v = [flat(model) for _ in prob.clients]
    rec.final("w", model)
    for i, v_i in enumerate(v):
        rec.final("v", v_i, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
