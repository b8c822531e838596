#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedprox_torch.py: FedProx in PyTorch, checked by `pflref check`.

Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated Optimization in
Heterogeneous Networks", MLSys 2020 (arXiv 1812.06127v5), Algorithm 2
(lines numbered as in docs/algorithms/fedprox.md):

  l. 3   S_t: the round's K draws ("draws", repetitions allowed), device k
         drawn with probability n_k/n
  l. 5   w_k: torch.optim.SGD(lr=η) on h_k(w; w^t) = F_k(w) + (μ/2)‖w − w^t‖²
         from a deep copy of w^t, one step per scheduled batch (a
         straggler has fewer)
  l. 7   w^{t+1} = (1/K) Σ over the draws of w_k: weight (draws of k)/K

fedprox.sampling = uniform_weighted (presets official and pfllib): the
round's clients with n_k / Σ n_j, the draws not read.  lr.* as FedAvg's
(PFLlib's per-client count with preset pfllib).  opt.*: the step is a
torch_common.ClientOptimizer (docs/optimizers.md) on the gradient of h_k,
the proximal term included, its state kept as opt.state says.  Records:
docs/validate.md, "fedprox".

Batch normalisation (docs/algorithms/fedprox.md, bn.aggregate): a layer
list's batchnorm1d / 2d is torch.nn.BatchNorm1d / 2d (torch_bn.py), the
device's model in train() mode, so each step's forward moves its
running_mean, running_var (bn.running = frozen: momentum 0;
bn.running_var = biased: torch_bn's hook); the proximal term ranges over
parameters() only.  w and every record are the state_dict's values
flattened.  bn.aggregate = average: device k starts from the whole
state_dict of w^t and l. 7 averages it whole; parameters_only (the preset
pfllib; PFLlib's set_parameters and aggregate_parameters): each device
keeps its model, whose parameters() alone are set from w^t, so its
buffers are those it last left (w⁰'s at first), and w^{t+1} takes the
round's first uploader's buffers (first_upload, else the lowest id).

usage: fedprox_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, set_parameters, split_test,
                      state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          frozen, lr_factor, main, plan,
                          squared_distance, take_optimizer)


def device_update(prob, rec, t, k, global_model, batches, trained,
                  model=None):
    """Line 5 for device k on `model` (its own, parameters() set from w^t;
    None: a fresh copy of w^t): returns w_k (flat)."""
    cfg = prob.cfg
    if model is None:
        model = clone(global_model)                      # w ← w^t
    else:                                                # parameters only
        set_parameters(model, global_model)
    model.train()
    w_t = frozen(global_model)
    opt = prob.optimizers.get(0, k, model,
                              cfg["eta"] * lr_factor(cfg, t, trained=trained),
                              split_test(prob))
    rec.record("client_begin", "w_local", state_flat(model), round=t,
               client=k, step=0)
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        h = prob.clients[k].loss(model, b) + \
            cfg["fedprox.mu"] / 2 * squared_distance(model, w_t)
        h.backward()
        opt.step()                  # w ← w − η (∇F_k(w; b) + μ (w − w^t))
        rec.step(t, k, s, "w_local", state_flat(model))
    prob.optimizers.keep(0, k, opt)
    rec.client_end(t, k, "w_local", state_flat(model))
    return state_flat(model)


def round_weights(prob, rnd):
    """Line 7's weights: (draws of k)/K, or n_k / Σ_{S_t} n_j."""
    clients = sorted(rnd["clients"])
    if prob.cfg["fedprox.sampling"] == "paper":
        draws = rnd["draws"]
        return {k: draws.count(k) / len(draws) for k in clients}
    if prob.cfg["fedprox.sampling"] != "uniform_weighted":
        raise Unsupported("fedprox.sampling %r" % prob.cfg["fedprox.sampling"])
    m_t = sum(prob.n[k] for k in clients)
    return {k: prob.n[k] / m_t for k in clients}


def run(vector_raw):
    """FedProx on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "fedprox")
    prob.optimizers = ClientOptimizers(ocfg)
    rec, model = Recorder(prob.id), prob.global_model
    trained = [0] * len(prob.clients)
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    # parameters_only: each device's own model (w⁰'s buffers at first)
    own = ([clone(model) for _ in prob.clients]
           if prob.bn and agg == "parameters_only" else None)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        c = round_weights(prob, rnd)
        local = {}
        for k, batches in plan(rnd).items():
            local[k] = device_update(prob, rec, t, k, model, batches,
                                     trained[k], own[k] if own else None)
            trained[k] += 1
            rec.record("note", "c", torch.tensor([c[k]]),
                       round=t, client=k)
        w = torch.zeros_like(state_flat(model))
        for k in sorted(local):                          # l. 7
            w = w + c[k] * local[k]
        load_state(model, w)
        if own and local:        # deepcopy(uploaded_models[0])'s buffers
            put_buffers(model, copy_buffers(own[first_uploader(rnd, local)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    return rec.result()


if __name__ == "__main__":
    main(run)
