#!/usr/bin/python3
"""fedavg_torch.py: FedAvg in PyTorch, checked by `pflref check`.

McMahan et al., "Communication-Efficient Learning of Deep Networks from
Decentralized Data", AISTATS 2017, Algorithm 1 (FederatedAveraging):

  Server: for each round t, for each client k ∈ S_t in parallel,
          w^k_{t+1} ← ClientUpdate(k, w_t);
          w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1},  m_t = Σ_{k∈S_t} n_k
  ClientUpdate(k, w): for each batch b: w ← w − η ∇ℓ(w; b)

ClientUpdate is torch.optim.SGD(lr=η) on a deep copy of the global model;
the batches are the vector's schedule, replayed in order (no DataLoader).
fedavg.weights (docs/algorithms/fedavg.md): samples (above), uniform (1/m)
or all_keep_old (Σ over all K clients of (n_k/n) w^k, an unsampled client
contributing w_t).  Records: docs/validate.md, "fedavg".

Batch normalisation (docs/models.md, "Running statistics in training";
docs/algorithms/fedavg.md, bn.aggregate): a layer list's batchnorm1d / 2d
is torch.nn.BatchNorm1d / 2d (torch_bn.py), the client's model in train()
mode, so each local step's forward moves running_mean, running_var
(bn.running = frozen: momentum 0; bn.running_var = biased: torch_bn's
hook).  w and every record are the state_dict's values flattened (the
buffers with the parameters).  bn.aggregate = average: the client starts
from the global state_dict and the server averages it whole;
parameters_only (the preset pfllib; PFLlib's clientbase.set_parameters and
serverbase.aggregate_parameters): each client keeps its own model, whose
parameters() alone are set from w_t, so its buffers are those it last left
(w⁰'s until it trains); the server averages parameters() and its buffers
are the round's first uploader's (first_upload, else the lowest id).

usage: fedavg_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, set_parameters, split_test, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, take_optimizer)


def client_update(prob, rec, t, k, model, batches, trained):
    """ClientUpdate(k, w_t) on `model`, the client's copy of w_t; trained:
    the rounds k trained in before (lr.count = trainings)."""
    model.train()
    # a split is read by opt.decay_scope = shared / personal only
    opt = prob.optimizers.get(0, k, model,                   # η_t
                              prob.cfg["eta"] * lr_factor(prob.cfg, t,
                                                          trained=trained),
                              split_test(prob))
    rec.record("client_begin", "w_local", state_flat(model), round=t,
               client=k, step=0)
    for s, b in enumerate(batches, start=1):             # for each batch b
        opt.zero_grad()
        prob.clients[k].loss(model, b).backward()
        opt.step()                                       # w ← w − η∇ℓ(w; b)
        rec.step(t, k, s, "w_local", state_flat(model))
    prob.optimizers.keep(0, k, opt)
    rec.client_end(t, k, "w_local", state_flat(model))
    return state_flat(model)


def aggregate(prob, w_t, local):
    """w_{t+1}, summed in ascending client id (local: k → w^k_{t+1})."""
    scheme, n = prob.cfg["fedavg.weights"], prob.n
    if scheme == "samples":                              # n_k / m_t
        m_t = sum(n[k] for k in local)
        coef = {k: n[k] / m_t for k in local}
    elif scheme == "uniform":                            # 1 / m
        coef = {k: 1.0 / len(local) for k in local}
    elif scheme == "all_keep_old":                       # n_k / n, all K
        coef = {k: n[k] / sum(n) for k in range(len(n))}
    else:
        raise Unsupported("fedavg.weights %r" % scheme)
    w = torch.zeros_like(w_t)
    for k in sorted(coef):
        w = w + coef[k] * local.get(k, w_t)
    return w


def run(vector_raw):
    """FedAvg on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "fedavg")
    prob.optimizers = ClientOptimizers(ocfg)
    rec = Recorder(prob.id)
    model = prob.global_model
    trained = [0] * len(prob.clients)
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    keep = prob.bn and agg == "parameters_only"
    # parameters_only: each client's own model (w⁰'s buffers at first)
    own = [clone(model) for _ in prob.clients] if keep else None
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        local = {}
        for k, batches in plan(rnd).items():
            if keep:
                net = own[k]
                set_parameters(net, model)
            else:
                net = clone(model)                       # w ← w_t
            local[k] = client_update(prob, rec, t, k, net, batches,
                                     trained[k])
            trained[k] += 1
        load_state(model, aggregate(prob, state_flat(model), local))
        if keep and local:       # deepcopy(uploaded_models[0])'s buffers
            put_buffers(model, copy_buffers(own[first_uploader(rnd, local)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
