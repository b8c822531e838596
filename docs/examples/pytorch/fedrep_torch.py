#!/usr/bin/python3
"""fedrep_torch.py: FedRep (FedAlt) in PyTorch, checked by `pflref check`.

Collins, Hassani, Mokhtari, Shakkottai, "Exploiting Shared Representations
for Personalized Federated Learning", ICML 2021: the head is personal, the
body (the representation) shared; each round a device first trains its head
with the body fixed, then the body with its new head.  pflref runs it as
FedAlt (Pillutla et al., "Federated Learning with Partial Model
Personalization", ICML 2022, Algorithm 4) with the preset fedrep, so this
candidate runs every `fedalt` vector (lines as in docs/algorithms/
fedalt-fedsim.md):

  l. 5-10   the first τ_v scheduled batches: an optimizer at lr=γ_v (plain
            torch.optim.SGD by default) moving the personal parameters v
            only (u fixed at u^(t))
  l. 11-15  the remaining batches: one at lr=γ_u moving the shared
            parameters u only (v fixed at v_i^(t+1))
  l. 16     u^(t+1) = Σ_{i∈S} α_i u_i^(t+1) / Σ_{i∈S} α_i

The split (spec `split.personal`, or the preset's `head`) names pflref
blocks or the groups input/head (torch_common.BLOCKS maps them to torch
parameter names; a layer list's blocks, layer names and groups,
torch_common.layer_blocks).  Switches: pfl.state (stateful: v_i persists; stateless:
v starts at v⁰ at every visit), pfl.weights (α_i = N_i/N, 1/n, or the
device's batches this round), pfl.finetune (the post phase moves v, or the
whole model, with η_ft), and FedBABU's PFLlib reading of the post phase
(docs/algorithms/fedalt-fedsim.md; serverbabu.py, clientbabu.py):
pfl.finetune_start = last_local fine-tunes the model the device holds after
the last round (its own trained model when it trained in round T − 1,
else the (u^(T−1), v_i) it was sent at that round's start) instead of
(u^(T), v_i); pfl.finetune_lr = decayed steps with η_ft times the lr.*
factor the device's scheduler reached (γ^k, k its trainings, under
lr.count = trainings; γ^T under rounds) instead of η_ft.  Every record is
the full model (u, v) in the state_dict's layout.

The client optimizer (opt.*, docs/optimizers.md): PFLlib's clientrep.py
holds two, optimizer (slot 0, the u steps) and optimizer_per (slot 1, the
v steps and the final fine-tuning), each a torch_common.ClientOptimizer
over the whole model whose step drops the gradients of the blocks it
leaves fixed (a frozen block keeps its buffers and step count, as torch
skips a parameter without a gradient, and stays out of clip_grad_norm_);
opt.decay_scope = shared / personal reads the split; opt.state keeps each
slot's state (reset, client, server).

Batch normalisation in the shared blocks (docs/algorithms/
fedalt-fedsim.md, bn.aggregate; a split that makes a batchnorm layer
personal is not taken here): the batchnorm layers are
torch.nn.BatchNorm1d / 2d (torch_bn.py) in train() mode, so every step's
forward moves the device's r_μ, r_v (the personal steps' too: torch moves
a module's buffers whatever is frozen), and the fine-tuning's.
bn.aggregate = average: r_μ, r_v travel with u and are averaged with the
same α_i; parameters_only (PFLlib's set_parameters): the device keeps the
statistics its model last left, and the server's are the first
uploader's.
Records: docs/validate.md, "fedalt".

usage: fedrep_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, personal_bn,
                      put_buffers, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          is_personal, lr_factor, main, plan, take_optimizer)


def split(prob, model):
    """(personal parameters v, shared parameters u) of a module; a
    batchnorm layer's γ, β are shared unless the split names them."""
    names = prob.cfg["split"]
    v, u = [], []
    for name, p in model.named_parameters():
        if prob.bn and isinstance(model[int(name.split(".")[0])],
                                  (torch.nn.BatchNorm1d,
                                   torch.nn.BatchNorm2d)):
            mine = personal_bn(prob, name)
        else:
            mine = is_personal(prob.model, name, names)
        (v if mine else u).append(p)
    return v, u


def personal_test(prob, model):
    """The split's test on a torch parameter name (opt.decay_scope)."""
    mine = {id(p) for p in split(prob, model)[0]}
    named = dict(model.named_parameters())
    return lambda name: id(named[name]) in mine


def sent(prob, global_model, v_i):
    """A copy of the global model (u, v⁰) with v_i written in (None: v⁰)."""
    model = clone(global_model)
    if v_i is not None:
        with torch.no_grad():
            for p, v in zip(split(prob, model)[0], v_i):
                p.copy_(v)
    return model


def server_weights(prob, local_batches):
    """α_i / Σ_S α_j over the round's devices S (l. 16)."""
    scheme, n = prob.cfg["pfl.weights"], prob.n
    if scheme == "samples":
        alpha = {i: n[i] / sum(n) for i in local_batches}
    elif scheme == "uniform":
        alpha = {i: 1.0 / len(n) for i in local_batches}
    elif scheme == "batches":
        alpha = {i: float(len(b)) for i, b in local_batches.items()}
    else:
        raise Unsupported("pfl.weights %r" % scheme)
    total = sum(alpha.values())
    return {i: a / total for i, a in alpha.items()}


def local_alt(prob, rec, t, i, model, batches, trained):
    """LocalAlt (l. 5-15): τ_v head steps, then body steps, in place;
    γ_u, γ_v decayed by lr.* (trained: the rounds i trained in before)."""
    tau_v = int(prob.cfg["tau_v"])
    if tau_v > len(batches):
        raise Unsupported("tau_v = %d, but client %d has %d batches in "
                          "round %d" % (tau_v, i, len(batches), t))
    v, u = split(prob, model)
    c = lr_factor(prob.cfg, t, trained=trained)
    # PFLlib's clientrep.py: optimizer_per (slot 1, v) and optimizer
    # (slot 0, u), each over the whole model; the blocks a step leaves
    # fixed have their gradients dropped (freeze), as torch skips them
    mine = personal_test(prob, model)
    head_opt = prob.optimizers.get(1, i, model, prob.cfg["gamma_v"] * c,
                                   mine)
    body_opt = prob.optimizers.get(0, i, model, prob.cfg["gamma_u"] * c,
                                   mine)
    rec.record("client_begin", "w_local", state_flat(model), round=t,
               client=i, step=0)
    for s, z in enumerate(batches, start=1):
        opt, moving = (head_opt, v) if s <= tau_v else (body_opt, u)
        model.zero_grad()
        prob.clients[i].loss(model, z).backward()
        opt.freeze(moving)
        opt.step()
        rec.step(t, i, s, "w_local", state_flat(model))
    prob.optimizers.keep(1, i, head_opt)
    prob.optimizers.keep(0, i, body_opt)
    rec.client_end(t, i, "w_local", state_flat(model))


def finetune(prob, rec, models, held, trained):
    """The optional post phase: every device fine-tunes v (personal) or
    (u, v) (full) on its post batches, from models[i] = (u^(T), v_i) or,
    under pfl.finetune_start = last_local, from held[i], the model it holds
    after the last round; with η_ft, or under pfl.finetune_lr = decayed
    η_ft times its scheduler's factor after its `trained[i]` trainings.
    models[i] becomes the fine-tuned model."""
    cfg = prob.cfg
    scope = cfg["pfl.finetune"]
    if scope not in ("personal", "full"):
        raise Unsupported("pfl.finetune %r" % scope)
    start = cfg.get("pfl.finetune_start", "global")
    decayed = cfg.get("pfl.finetune_lr", "constant")
    if start not in ("global", "last_local") \
            or decayed not in ("constant", "decayed"):
        raise Unsupported("pfl.finetune_start %r, pfl.finetune_lr %r"
                          % (start, decayed))
    for i, batches in enumerate(prob.post):
        if start == "last_local" and held is not None:
            models[i] = held[i]
        model = models[i]
        eta_ft = cfg["eta_ft"]
        if decayed == "decayed":     # clientbabu.py: its own -ld optimizer
            eta_ft *= lr_factor(cfg, len(prob.rounds), trained=trained[i])
        params = split(prob, model)[0] if scope == "personal" \
            else list(model.parameters())
        # the personal optimizer (slot 1) steps the fine-tuning too
        opt = prob.optimizers.get(1, i, model, eta_ft,
                                  personal_test(prob, model))
        rec.record("client_begin", "v", state_flat(model), client=i, step=0,
                   phase="finetune")
        for s, z in enumerate(batches, start=1):
            model.zero_grad()
            prob.clients[i].loss(model, z).backward()
            opt.freeze(params)
            opt.step()
            rec.step(None, i, s, "v", state_flat(model), phase="finetune")
        prob.optimizers.keep(1, i, opt)
        rec.record("client_end", "v", state_flat(model), client=i,
                   phase="finetune")


def run(vector_raw):
    """FedAlt / FedRep on a golden vector; returns its result dict."""
    return run_partial(vector_raw, "fedalt", local_alt)


def run_partial(vector_raw, algorithm, local):
    """The rounds of partial personalisation around `local`, device i's
    update (local_alt here; fedsim_torch.py's LocalSim)."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, algorithm)
    prob.optimizers = ClientOptimizers(ocfg)
    trained = [0] * len(prob.clients)                    # lr.count
    rec, global_model = Recorder(prob.id), prob.global_model  # (u, v⁰)
    stateful = prob.cfg["pfl.state"] == "stateful"
    if prob.cfg["pfl.state"] not in ("stateful", "stateless"):
        raise Unsupported("pfl.state %r" % prob.cfg["pfl.state"])
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    keep_own = prob.bn and agg == "parameters_only"
    if keep_own and not stateful:
        raise Unsupported("bn.aggregate = parameters_only with pfl.state = "
                          "stateless")
    if prob.bn and any(personal_bn(prob, name)
                       for name, _ in global_model.named_parameters()):
        raise Unsupported("a split with batch normalisation in the "
                          "personal blocks")
    v_state = [[p.detach().clone() for p in split(prob, global_model)[0]]
               for _ in prob.clients]                    # v_i, from v⁰
    own = [copy_buffers(global_model) for _ in prob.clients]   # w⁰'s

    def send(i):         # set_parameters: u (with r_μ, r_v unless own), v_i
        model = sent(prob, global_model, v_state[i] if stateful else None)
        if keep_own:
            put_buffers(model, own[i])
        return model

    held = None         # each device's model after the round (last_local)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(global_model))
        rnd_plan, u_new = plan(rnd), {}
        held = [send(i) for i in range(len(prob.clients))]   # send_models
        for i, batches in rnd_plan.items():
            model = held[i]              # (u^(t), v_i^(t)), or (u^(t), v⁰)
            local(prob, rec, t, i, model, batches, trained[i])
            trained[i] += 1
            if stateful:
                v_state[i] = [p.detach().clone()
                              for p in split(prob, model)[0]]
                rec.client_end(t, i, "v", state_flat(model))
            u_new[i] = [p.detach().clone() for p in split(prob, model)[1]]
            own[i] = copy_buffers(model)
        c = server_weights(prob, rnd_plan)
        with torch.no_grad():                            # l. 16
            for j, u in enumerate(split(prob, global_model)[1]):
                acc = torch.zeros_like(u)
                for i in sorted(u_new):
                    acc = acc + c[i] * u_new[i][j]
                u.copy_(acc)
        if prob.bn and u_new and keep_own:               # uploaded_models[0]
            put_buffers(global_model, own[first_uploader(rnd, u_new)])
        elif prob.bn and u_new:          # r_μ, r_v travel with u, averaged
            put_buffers(global_model, [
                sum(c[i] * own[i][j] for i in sorted(u_new))
                for j in range(len(own[0]))])
        rec.server(t, state_flat(global_model))
    models = [send(i) for i in range(len(prob.clients))]     # (u^(T), v_i)
    if prob.post is not None:
        finetune(prob, rec, models, held, trained)
    rec.final("w", state_flat(global_model))
    for i, model in enumerate(models):
        rec.final("v", state_flat(model), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
