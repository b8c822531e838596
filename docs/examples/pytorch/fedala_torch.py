#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedala_torch.py: FedALA in PyTorch, checked by `pflref check`.

Zhang, Hua, Wang, Song, Xue, Ma, Guan, "FedALA: Adaptive Local Aggregation
for Personalized Federated Learning", AAAI 2023 (arXiv 2212.01197v4),
Algorithm 1 and the ALA module, written as the authors' ALA.py computes
it (a temporary model whose parameters are Θ̂, its .grad times (Θ − Θ_i)
as the weights' gradient), with the lines of docs/algorithms/fedala.md:

  l. 7-15 per participant (not in the first round): Θ̂ = Θ_i + (Θ − Θ_i) ⊙ W
          on the top p layers (Θ below); per batch of D_i^s (the round's
          personal lists) W ← clamp(W − η ∇_Θ̂ L · (Θ − Θ_i), 0, 1) and Θ̂
          formed again; in round 1 (the box's t = 2, l. 8) ALA repeats the
          pass until more than k losses (each pass's last) have np.std of
          the last k below the threshold, at most max_epochs passes; in
          later rounds one pass (l. 12)
  l. 16   torch.optim.SGD(lr=α) from Θ̂, one step per scheduled batch
  l. 18   Θ ← Σ n_i Θ_i / Σ n_j over the participants

fedala.skip = sum_first and fedala.p_unit = tensors (presets official,
pfllib) as ALA.py:82, :86, :95; fedala.start = own (the three presets):
the repeated passes in a client's first ALA, ALA.py:52, :155.
fedala.ala_clients = all (preset
pfllib_run) as PFLlib's serverala.py:73-74: before a round trains, every
client (ascending id) runs ALA and keeps Θ̂ as its local model, a client
outside the round included; its sample is then among the round's personal
lists after the participants' (ascending id).  Records: docs/algorithms/fedala.md, "What
a run reports".

usage: fedala_torch.py VECTOR.json -o RESULT.json
"""
import numpy as np
import torch

from torch_common import Problem, Recorder, Unsupported, clone, flat, \
    load_flat, main, plan


def ala_range(model, cfg):
    """True on the entries of the top p layers (or parameter tensors)."""
    names = [n for n, _ in model.named_parameters()]
    sizes = [p.numel() for p in model.parameters()]
    layer = [n.rsplit(".", 1)[0] if "." in n else "" for n in names]
    p = int(cfg["fedala.p"])
    if cfg.get("fedala.p_unit", "layers") == "tensors":
        chosen = set(range(len(names))) if p == 0 else \
            set(range(len(names) - p, len(names)))
    else:
        order = list(dict.fromkeys(layer))          # layers from the input
        keep = set(order[len(order) - p:])
        chosen = {j for j, lay in enumerate(layer) if lay in keep}
    return torch.cat([torch.full((s,), j in chosen, dtype=torch.bool)
                      for j, s in enumerate(sizes)])


def ala(prob, i, theta, theta_i, W, mask, passes, first):
    """Lines 5-8: (Θ̂, the passes made); W is updated in place."""
    cfg = prob.cfg
    diff = theta - theta_i
    hat = torch.where(mask, theta_i + diff * W, theta)
    model_t = clone(prob.global_model)
    k = int(cfg.get("fedala.k", 10))
    losses = []
    while True:
        for b in passes:
            load_flat(model_t, hat)
            model_t.zero_grad()
            loss = prob.clients[i].loss(model_t, b)
            loss.backward()
            g = torch.cat([q.grad.reshape(-1) for q in model_t.parameters()])
            W[mask] = torch.clamp(W - cfg["fedala.eta"] * (g * diff),
                                  0.0, 1.0)[mask]
            hat = torch.where(mask, theta_i + diff * W, theta)
            last = loss.item()
        losses.append(last)
        if not first:
            break
        if len(losses) > k and np.std(losses[-k:]) < cfg.get(
                "fedala.threshold", 0.1):
            break
        if len(losses) >= int(cfg.get("fedala.max_epochs", 1000)):
            break
    return hat, len(losses)


def skips(prob, t, theta, theta_i):
    if t == 0:
        return True
    if prob.cfg.get("fedala.skip", "first_round") != "sum_first":
        return False
    first = next(prob.global_model.parameters()).numel()
    return float(torch.sum(theta[:first] - theta_i[:first])) == 0.0


def run(vector_raw):
    """FedALA on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "fedala")
    cfg = prob.cfg
    if cfg.get("lr.schedule", "constant") != "constant":
        raise Unsupported("a learning-rate schedule")
    rec = Recorder(prob.id)
    theta = flat(prob.global_model)
    mask = ala_range(prob.global_model, cfg)
    local = [theta.clone() for _ in prob.clients]
    Ws = [torch.ones_like(theta) for _ in prob.clients]
    started = set()
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, theta)
        every = cfg.get("fedala.ala_clients", "participants") == "all"
        rest = [i for i in range(len(local)) if i not in rnd["clients"]]
        owners = list(rnd["clients"]) + (rest if every else [])
        samples = dict(zip(owners, rnd.get("personal", [None] * len(owners))))
        uploads = {}

        def adapt(i):
            hat, made = local[i].clone(), 0
            if not skips(prob, t, theta, local[i]):
                own = cfg.get("fedala.start", "round2") == "own"
                hat, made = ala(prob, i, theta, local[i], Ws[i], mask,
                                samples[i],
                                i not in started if own else t == 1)
                started.add(i)
            rec.record("note", "ala_epochs", [made], round=t, client=i)
            rec.record("note", "W_i", Ws[i], round=t, client=i)
            return hat

        hats = {}
        if every:                     # serverala.py:73-74, send_models
            for i in range(len(local)):
                hats[i] = adapt(i)
                if i in rest:
                    local[i] = hats[i]
                    rec.record("note", "theta_hat", local[i], round=t,
                               client=i)
        for i, batches in plan(rnd).items():
            hat = hats[i] if every else adapt(i)
            model = clone(prob.global_model)
            load_flat(model, hat)
            opt = torch.optim.SGD(model.parameters(), lr=cfg["eta"])
            rec.record("client_begin", "theta_i", model, round=t, client=i,
                       step=0)
            for s, b in enumerate(batches, start=1):
                opt.zero_grad()
                prob.clients[i].loss(model, b).backward()
                opt.step()
                rec.step(t, i, s, "theta_i", model)
            rec.client_end(t, i, "theta_i", model)
            local[i] = uploads[i] = flat(model)
        m_t = sum(prob.n[i] for i in uploads)
        new = torch.zeros_like(theta)
        for i in sorted(uploads):
            new = new + (prob.n[i] / m_t) * uploads[i]
        theta = new
        rec.server(t, theta)
    rec.final("w", theta)
    for i, v in enumerate(local):
        rec.final("v", v, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
