#!/usr/bin/python3
"""ditto_torch.py: Ditto in PyTorch, checked by `pflref check`.

Li, Hu, Beirami, Smith, "Ditto: Fair and Robust Federated Learning Through
Personalization", ICML 2021 (arXiv 2012.04221v3), Algorithm 1 with FedAvg
as the global solver (lines numbered as in docs/algorithms/ditto.md):

  l. 5   w_k ← UPDATE_GLOBAL(w^t): torch.optim.SGD(lr=η) on F_k from a deep
         copy of w^t, one step per scheduled batch b
  l. 7   v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w^t)): torch.optim.SGD(lr=η)
         on F_k(v_k; b) + (λ/2)‖v_k − w^t‖², on the same batch
  l. 9   w^{t+1} ← Σ_{k∈S_t} c_k w_k,  c_k = n_k/m_t (or 1/|S_t|)

v_k starts at w⁰ and persists across rounds (untouched when k ∉ S_t).
Switches (docs/algorithms/ditto.md): ditto.order (interleaved_shared_batch:
one personal then one global step per batch; personal_first), ditto.batches
(shared; separate: the personal steps on the round's "personal" lists,
PFLlib's ptrain() on its own loader), ditto.prox
(squared; norm: λ‖v − w‖), ditto.prox_ref (round_start: w^t; moving: the
global copy w_k as it stands), ditto.weights.  Records: docs/validate.md,
"ditto".

Step sizes and the client optimizer (docs/optimizers.md): both steps take
η times the lr.* factor of the round (lr.schedule exponential or step;
lr.count = trainings: the client's own trainings before, PFLlib's
per-client scheduler).  opt.* gives the two optimizers of PFLlib's
clientditto.py, optimizer (w_k) and poptimizer (v_k), each a
torch_common.ClientOptimizer (torch.optim.SGD / Adam / AdamW, decay-scope
parameter groups, clip_grad_norm_ on the gradient of l. 7's whole
objective, proximal term included), their states kept apart and kept as
opt.state says (reset, client, server).

Batch normalisation (docs/models.md, "Running statistics in training";
docs/algorithms/ditto.md, bn.aggregate): a layer list's batchnorm1d / 2d
is torch.nn.BatchNorm1d / 2d (torch_bn.py), every model in train() mode,
so each forward of l. 5 moves the global copy's running_mean,
running_var and each forward of l. 7 v_k's (bn.running = frozen:
momentum 0; bn.running_var = biased: torch_bn's hook); the proximal term
ranges over parameters() only.  w, v and every record are the
state_dict's values flattened.  bn.aggregate = average: w_k starts from
the whole state_dict of w^t and l. 9 averages it whole; parameters_only
(the preset pfllib; PFLlib's clientbase.set_parameters and
serverbase.aggregate_parameters): each client keeps its global copy, whose
parameters() alone are set from w^t, so its buffers are those it last left
(w⁰'s at first), and w^{t+1} takes the round's first uploader's buffers
(first_upload, else the lowest id).  v_k is never sent: its buffers are
its own under either value.

The deliberate bug: PFLREF_TORCH_BUG=ditto-alias gives each client the
PFLlib-style `self.model_per = self.model` instead of a deep copy, so the
personal model IS the client's global copy (see personal_model below).

usage: ditto_torch.py VECTOR.json -o RESULT.json
"""
import os

import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, set_parameters, split_test,
                      state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          frozen, lr_factor, main, plan, squared_distance,
                          take_optimizer, weights)

ALIAS_BUG = os.environ.get("PFLREF_TORCH_BUG") == "ditto-alias"


def personal_model(v_k, model):
    """The model the personal steps train: client k's own v_k."""
    if ALIAS_BUG:
        return model        # BUG (deliberate): self.model_per = self.model
    return v_k


def prox(cfg, v_k, ref):
    """The personal regulariser: (λ/2)‖v − ref‖², or λ‖v − ref‖ (norm),
    whose gradient λ(v − ref)/‖v − ref‖ is taken as 0 at v = ref."""
    lam = cfg["lambda"]
    if cfg["ditto.prox"] == "squared":
        return lam / 2 * squared_distance(v_k, ref)
    if cfg["ditto.prox"] != "norm":
        raise Unsupported("ditto.prox %r" % cfg["ditto.prox"])
    diff = torch.cat([(p - r).reshape(-1)
                      for p, r in zip(v_k.parameters(), ref)])
    norm = torch.linalg.vector_norm(diff)
    return lam * norm if norm.item() > 0 else 0.0 * norm


def device_update(prob, rec, t, k, global_model, v_k, batches, own,
                  model=None, trained=0):
    """Lines 5-8 for device k: trains `model` (the client's global copy,
    set from w^t; a fresh copy of w^t when None) and v_k in place;
    returns the global copy w_k.  Both step sizes are η times the lr.*
    factor (trained: the rounds k trained in before, lr.count =
    trainings)."""
    cfg = prob.cfg
    if model is None:
        model = clone(global_model)                      # w_k ← w^t
    else:                                                # parameters only
        set_parameters(model, global_model)
    v_k = personal_model(v_k, model)
    model.train()
    v_k.train()
    w_t = frozen(global_model)
    eta = cfg["eta"] * lr_factor(cfg, t, trained=trained)
    # PFLlib's clientditto.py: optimizer (w_k) and poptimizer (v_k), two
    # objects whose states opt.state keeps apart
    opt = prob.optimizers.get(0, k, model, eta, split_test(prob))
    opt_v = prob.optimizers.get(1, k, v_k, eta, split_test(prob))
    rec.record("client_begin", "w_local", state_flat(model), round=t,
               client=k, step=0)
    rec.record("client_begin", "v", state_flat(v_k), round=t, client=k,
               step=0)
    data = prob.clients[k]

    def personal_step(s, b):                             # l. 7
        ref = frozen(model) if cfg["ditto.prox_ref"] == "moving" else w_t
        opt_v.zero_grad()
        (data.loss(v_k, b) + prox(cfg, v_k, ref)).backward()
        opt_v.step()
        rec.step(t, k, s, "v", state_flat(v_k))

    def global_step(s, b):                               # l. 5 (FedAvg)
        opt.zero_grad()
        data.loss(model, b).backward()
        opt.step()
        rec.step(t, k, s, "w_local", state_flat(model))

    steps = list(enumerate(batches, start=1))
    if cfg["ditto.order"] == "personal_first":
        for s, b in enumerate(own, start=1):             # its own list, or
            personal_step(s, b)                          # the shared one
        for s, b in steps:
            global_step(s, b)
    elif cfg["ditto.order"] == "interleaved_shared_batch" and own is batches:
        for s, b in steps:
            personal_step(s, b)
            global_step(s, b)
    else:
        raise Unsupported("ditto.order %r" % cfg["ditto.order"])
    prob.optimizers.keep(0, k, opt)
    prob.optimizers.keep(1, k, opt_v)
    rec.client_end(t, k, "w_local", state_flat(model))
    rec.client_end(t, k, "v", state_flat(v_k))
    return v_k, model


def run(vector_raw):
    """Ditto on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "ditto")
    prob.optimizers = ClientOptimizers(ocfg)
    trained = [0] * len(prob.clients)
    rec, model = Recorder(prob.id), prob.global_model
    v = [clone(model) for _ in prob.clients]             # v_k⁰ = w⁰
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    # parameters_only: each client's own global copy (w⁰'s buffers at first)
    copies = ([clone(model) for _ in prob.clients]
              if prob.bn and agg == "parameters_only" else None)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        local = {}
        own = plan(rnd)                                  # ditto.batches
        if prob.cfg["ditto.batches"] == "separate":      # PFLlib's ptrain()
            if "personal" not in rnd:
                raise Unsupported("ditto.batches = separate without lists")
            own = dict(sorted(zip(rnd["clients"], rnd["personal"])))
        for k, batches in plan(rnd).items():
            v[k], local[k] = device_update(
                prob, rec, t, k, model, v[k], batches, own[k],
                copies[k] if copies else None, trained[k])
            trained[k] += 1
        c = weights(prob.cfg["ditto.weights"], sorted(local), prob.n)
        w = torch.zeros_like(state_flat(model))
        for k in sorted(local):                          # l. 9
            w = w + c[k] * state_flat(local[k])
        load_state(model, w)
        if copies and local:     # deepcopy(uploaded_models[0])'s buffers
            put_buffers(model, copy_buffers(local[first_uploader(rnd,
                                                                 local)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    for k, v_k in enumerate(v):
        rec.final("v", state_flat(v_k), client=k)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
