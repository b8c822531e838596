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
(PFLlib's per-client count with preset pfllib).  Records: docs/validate.md,
"fedprox".

usage: fedprox_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (Problem, Recorder, Unsupported, clone, flat,
                          frozen, load_flat, lr_factor, main, plan,
                          squared_distance)


def device_update(prob, rec, t, k, global_model, batches, trained):
    """Line 5 for device k: returns w_k (flat)."""
    cfg = prob.cfg
    model = clone(global_model)                          # w ← w^t
    w_t = frozen(global_model)
    opt = torch.optim.SGD(model.parameters(),
                          lr=cfg["eta"] * lr_factor(cfg, t, trained=trained))
    rec.record("client_begin", "w_local", model, round=t, client=k, step=0)
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        h = prob.clients[k].loss(model, b) + \
            cfg["fedprox.mu"] / 2 * squared_distance(model, w_t)
        h.backward()
        opt.step()                  # w ← w − η (∇F_k(w; b) + μ (w − w^t))
        rec.step(t, k, s, "w_local", model)
    rec.client_end(t, k, "w_local", model)
    return flat(model)


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
    prob = Problem(vector_raw, "fedprox")
    rec, model = Recorder(prob.id), prob.global_model
    trained = [0] * len(prob.clients)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        c = round_weights(prob, rnd)
        local = {}
        for k, batches in plan(rnd).items():
            local[k] = device_update(prob, rec, t, k, model, batches,
                                     trained[k])
            trained[k] += 1
            rec.record("note", "c", torch.tensor([c[k]]),
                       round=t, client=k)
        w = torch.zeros_like(flat(model))
        for k in sorted(local):                          # l. 7
            w = w + c[k] * local[k]
        load_flat(model, w)
        rec.server(t, model)
    rec.final("w", model)
    return rec.result()


if __name__ == "__main__":
    main(run)
