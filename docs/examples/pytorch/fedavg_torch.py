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

usage: fedavg_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (Problem, Recorder, Unsupported, clone, flat,
                          load_flat, lr_factor, main, plan)


def client_update(prob, rec, t, k, global_model, batches, trained):
    """ClientUpdate(k, w_t): SGD from a copy of the global model; trained:
    the rounds k trained in before (lr.count = trainings)."""
    model = clone(global_model)                          # w ← w_t
    opt = torch.optim.SGD(model.parameters(),                 # η_t
                          lr=prob.cfg["eta"] * lr_factor(prob.cfg, t,
                                                         trained=trained))
    rec.record("client_begin", "w_local", model, round=t, client=k, step=0)
    for s, b in enumerate(batches, start=1):             # for each batch b
        opt.zero_grad()
        prob.clients[k].loss(model, b).backward()
        opt.step()                                       # w ← w − η∇ℓ(w; b)
        rec.step(t, k, s, "w_local", model)
    rec.client_end(t, k, "w_local", model)
    return flat(model)


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
    prob = Problem(vector_raw, "fedavg")
    rec = Recorder(prob.id)
    model = prob.global_model
    trained = [0] * len(prob.clients)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        local = {}
        for k, batches in plan(rnd).items():
            local[k] = client_update(prob, rec, t, k, model, batches,
                                     trained[k])
            trained[k] += 1
        load_flat(model, aggregate(prob, flat(model), local))
        rec.server(t, model)
    rec.final("w", model)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
