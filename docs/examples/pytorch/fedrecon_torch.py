#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedrecon_torch.py: Federated Reconstruction in PyTorch, checked by
`pflref check`.

Singhal, Sidahmed, Garrett, Wu, Rush, Prakash, "Federated Reconstruction:
Partially Local Federated Learning", NeurIPS 2021 (arXiv 2102.03448v6),
Algorithm 1 and §3, as docs/algorithms/fedrecon.md gives it:

  l. 8      l_i ← l⁰ (the init's local entries), or its kept l_i
            (fedrecon.local_init = last)
  l. 9      the round's `personal` batches: torch.optim.SGD(lr=η_r) over
            the local parameters l only (g frozen)
  l. 10-11  its `batches`: torch.optim.SGD(lr=η_u) over the global g only
  l. 12     Δ_i = g_i − g, weight n_i = |D_{i,q}| (samples), 1 (uniform)
            or the examples of the update batches (examples)
  l. 5-6    g ← g + η_s Σ w_i Δ_i / Σ w_i
  §3        with a post phase, each client reconstructs l on it from the
            final g before it is reported

The split (spec `split.personal`) names the local blocks; the rest is
global.  Every record is the full parameter vector (g, l).

The client optimizer (opt.*, docs/algorithms/fedrecon.md): TFF builds a
client optimizer for the update of g and a separate reconstruction
optimizer (SGD) for l, so opt.* becomes the torch optimizer over g in
l. 10-11 (a torch_common.ClientOptimizer: torch.optim.SGD, Adam, AdamW,
clipping and the decay forms and scopes of docs/optimizers.md, l's
gradients dropped), built for every client update (opt.state = reset),
or restored from the client's own state_dict (client) or from the last
client's (server); l's steps stay torch.optim.SGD(lr=η_r).

usage: fedrecon_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (ClientOptimizers, Problem, Recorder, Unsupported,
                          clone, flat, is_personal, main, take_optimizer)


def split(prob, model):
    """(local parameters l, global parameters g) of a module."""
    local, glob = [], []
    for name, p in model.named_parameters():
        (local if is_personal(prob.model, name, prob.cfg["split"])
         else glob).append(p)
    return local, glob


def sgd(prob, rec, t, i, model, params, lr, batches, name, phase="train",
        opt=None):
    """One SGD step per batch on `params` only (or opt's step, the other
    parameters' gradients dropped), each recorded."""
    if opt is None:
        opt = torch.optim.SGD(params, lr=lr)
    for s, z in enumerate(batches, start=1):
        model.zero_grad()
        prob.clients[i].loss(model, z).backward()
        if hasattr(opt, "freeze"):
            opt.freeze(params)
        opt.step()
        rec.step(t, i, s, name, model, phase=phase)


def weight(prob, i, update):
    """w_i before normalisation (fedrecon.weights, fedrecon.query)."""
    scheme = prob.cfg.get("fedrecon.weights", "samples")
    if scheme == "uniform":
        return 1.0
    if scheme == "examples":
        return float(sum(len(b) for b in update))
    if prob.cfg.get("fedrecon.query", "complement") == "whole":
        return float(prob.n[i])
    return float(prob.n[i] - len(prob.spec["init"]["support"][i]))


def start(prob, global_model, kept, i):
    """(g, l⁰), or (g, l_i) with l_i kept (local_init = last)."""
    model = clone(global_model)
    if prob.cfg.get("fedrecon.local_init", "given") == "last":
        with torch.no_grad():
            for p, l_i in zip(split(prob, model)[0], kept[i]):
                p.copy_(l_i)
    return model


def run(vector_raw):
    """FedRecon on a golden vector; returns its result dict."""
    vector_raw, ocfg = take_optimizer(vector_raw)
    prob = Problem(vector_raw, "fedrecon")
    optimizers = ClientOptimizers(ocfg)
    if prob.cfg.get("fedrecon.local_init", "given") not in ("given", "last"):
        raise Unsupported("fedrecon.local_init %r" % prob.cfg["fedrecon.local_init"])
    eta_r, eta_u = prob.cfg["fedrecon.eta_r"], prob.cfg["fedrecon.eta_u"]
    rec, global_model = Recorder(prob.id), prob.global_model   # (g, l⁰)
    l0 = [p.detach().clone() for p in split(prob, global_model)[0]]
    kept = [list(l0) for _ in prob.clients]
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, global_model)
        sent = {}
        for i, recon, update in zip(rnd["clients"], rnd["personal"],
                                    rnd["batches"]):
            model = start(prob, global_model, kept, i)
            rec.record("client_begin", "w_local", model, round=t, client=i,
                       step=0)
            local, glob = split(prob, model)
            sgd(prob, rec, t, i, model, local, eta_r, recon, "w_recon")
            mine = {id(p) for p in local}
            named = dict(model.named_parameters())
            opt = optimizers.get(                         # client_optimizer_fn()
                0, i, model, eta_u, lambda name: id(named[name]) in mine)
            sgd(prob, rec, t, i, model, glob, eta_u, update, "w_local",
                opt=opt)
            optimizers.keep(0, i, opt)
            rec.client_end(t, i, "w_local", model)
            rec.client_end(t, i, "v", model)
            kept[i] = [p.detach().clone() for p in local]
            delta = [p.detach() - g for p, g in
                     zip(glob, split(prob, global_model)[1])]
            sent[i] = (weight(prob, i, update), delta)
        total = sum(w for w, _ in sent.values())
        with torch.no_grad():                                  # l. 5-6
            for j, g in enumerate(split(prob, global_model)[1]):
                acc = torch.zeros_like(g)
                for i in sorted(sent):
                    acc = acc + sent[i][0] / total * sent[i][1][j]
                g.copy_(g + prob.cfg["fedrecon.eta_s"] * acc)
        rec.server(t, global_model)
    models = [start(prob, global_model, kept, i)
              for i in range(len(prob.clients))]
    if prob.post is None:                                      # eval = kept
        with torch.no_grad():
            for model, l_i in zip(models, kept):
                for p, q in zip(split(prob, model)[0], l_i):
                    p.copy_(q)
    for i, batches in enumerate(prob.post or []):             # §3
        rec.record("client_begin", "v", models[i], client=i, step=0,
                   phase="finetune")
        sgd(prob, rec, None, i, models[i], split(prob, models[i])[0], eta_r,
            batches, "v", phase="finetune")
        rec.record("client_end", "v", models[i], client=i, phase="finetune")
    rec.final("w", global_model)
    for i, model in enumerate(models):
        rec.final("v", flat(model), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
