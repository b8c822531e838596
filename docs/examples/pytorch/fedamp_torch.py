#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedamp_torch.py: FedAMP in PyTorch, checked by `pflref check`.

Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, "Personalized Cross-Silo Federated
Learning on Non-IID Data", AAAI 2021 (arXiv 2007.03797v5), Algorithm 1 with
A(x) = 1 − e^{−x/σ} (lines numbered as in docs/algorithms/fedamp.md):

  l. 3   for each participant i, from the models as the round starts:
         ξ_ij = α_k e^{−‖w_i − w_j‖²/σ}/σ (j ≠ i), ξ_ii = 1 − Σ_{j≠i} ξ_ij,
         u_i = Σ_j ξ_ij w_j
  l. 5   w_i: torch.optim.SGD(lr=η c) on F_i(w) + (λ/(2α_k))‖w − u_i‖²
         from u_i, one step per scheduled batch; c = γ^t under lr.schedule
         = exponential, γ^(the rounds i trained in before) with lr.count =
         trainings (PFLlib's -ld: each client's ExponentialLR steps after
         its own train(); preset pfllib)

fedamp.peers = previous, fedamp.start = own, fedamp.prox = detached
(preset pfllib) as PFLlib's clientamp.py / serveramp.py run them: the term
is built from p.data, so autograd sees no gradient in it.  Records:
docs/algorithms/fedamp.md, "What a run reports".

Batch normalisation (docs/algorithms/fedamp.md, "Batch normalisation:
bn.aggregate"): a layer list's batchnorm1d / 2d is torch.nn.BatchNorm1d /
2d (torch_bn.py), the client's model in train() mode, so each step's
forward moves its running_mean, running_var (bn.running = frozen:
momentum 0; bn.running_var = biased: torch_bn's hook).  The models, u_i
and every record are the state_dict's values flattened.  Only
bn.aggregate = parameters_only runs (PFLlib's serveramp.py and
clientamp.py move parameters() only): ‖w_i − w_j‖² and the mixture of
l. 3 range over parameters(), u_i's buffers are client i's own, the
proximal term pulls parameters() only.  average (the running statistics
inside the distances and messages) is refused, as pflref refuses it.

usage: fedamp_torch.py VECTOR.json -o RESULT.json
"""
import math

import torch

from torch_bn import bn_problem, load_state, parameter_mask, state_flat
from torch_common import (Recorder, Unsupported, clone, flat, lr_factor, main,
                          plan, squared_distance)


def message(cfg, i, models, peers, mask):
    """Line 3: (ξ_i as a tensor over all clients, u_i flat), over the
    parameter entries `mask` of the flat models; u_i's other entries (the
    running statistics) are client i's own."""
    alpha, sigma = cfg["fedamp.alpha_k"], cfg["fedamp.sigma"]
    xi = torch.zeros(len(models))
    for j in peers:
        if j != i:
            d = float(((models[i][mask] - models[j][mask]) ** 2).sum())
            xi[j] = alpha * math.exp(-d / sigma) / sigma
    xi[i] = 1.0 - xi.sum()
    u = sum(xi[j] * models[j] for j in range(len(models)))
    return xi, torch.where(mask, u, models[i])


def client_update(prob, rec, t, i, start, u, batches, trained):
    """Line 5 for client i: returns w_i (flat)."""
    cfg = prob.cfg
    model = clone(prob.global_model)
    load_state(model, start.clone())       # no alias of the snapshot or u_i
    model.train()
    ref = clone(prob.global_model)
    load_state(ref, u.clone())
    u_params = [p.detach() for p in ref.parameters()]
    detached = cfg.get("fedamp.prox", "squared") == "detached"
    opt = torch.optim.SGD(model.parameters(),
                          lr=cfg["eta"] * lr_factor(cfg, t, trained=trained))
    rec.record("client_begin", "w_i", state_flat(model), round=t, client=i,
               step=0)
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        loss = prob.clients[i].loss(model, b)
        weight = cfg["fedamp.lambda"] / cfg["fedamp.alpha_k"]
        if detached:     # PFLlib: 0.5 λ/α ‖w − u‖ on p.data, no gradient
            gm = torch.cat([p.data.view(-1) for p in model.parameters()])
            loss = loss + 0.5 * weight * torch.norm(gm - flat(ref), p=2)
        else:
            loss = loss + weight / 2 * squared_distance(model, u_params)
        loss.backward()
        opt.step()
        rec.step(t, i, s, "w_i", state_flat(model))
    rec.client_end(t, i, "w_i", state_flat(model))
    return state_flat(model)


def run(vector_raw):
    """FedAMP on a golden vector; returns its pflref-result/1 dict."""
    prob = bn_problem(vector_raw, "fedamp")
    cfg = prob.cfg
    if prob.bn and cfg.get("bn.aggregate", "average") != "parameters_only":
        raise Unsupported("bn.aggregate %r with batch normalisation (pflref "
                          "refuses it: M7)" % cfg.get("bn.aggregate",
                                                      "average"))
    rec = Recorder(prob.id)
    w0 = state_flat(prob.global_model)
    mask = parameter_mask(prob.global_model)
    models = [w0.clone() for _ in prob.clients]
    last = []
    trained = [0] * len(models)       # each client's train() calls so far
    for t, rnd in enumerate(prob.rounds):
        snapshot = [w.clone() for w in models]
        peers = (last if cfg.get("fedamp.peers", "all") == "previous"
                 else range(len(models)))
        work = plan(rnd)
        for i in sorted(work):
            xi, u = message(cfg, i, snapshot, peers, mask)
            rec.record("note", "xi", xi, round=t, client=i)
            rec.record("note", "u", u, round=t, client=i)
            own = cfg.get("fedamp.start", "message") == "own"
            models[i] = client_update(prob, rec, t, i,
                                      snapshot[i] if own else u, u, work[i],
                                      trained[i])
            trained[i] += 1
        last = sorted(work)
    for i, w in enumerate(models):
        rec.final("v", w, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
