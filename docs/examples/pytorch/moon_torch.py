#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""moon_torch.py: MOON in PyTorch, checked by `pflref check`.

Li, He, Song, "Model-Contrastive Federated Learning", CVPR 2021 (arXiv
2103.16257v1), Algorithm 1 (lines numbered as in docs/algorithms/moon.md):

  l. 10     w_i ← a deep copy of w^t; torch.optim.SGD(lr=η)
  l. 13–18  per scheduled batch: rep = net[:-1](x), out = net[-1](rep);
            ℓ = CE(out, y) + μ mean(−log(e^{cos(rep, rep_glob)/τ} /
                (e^{cos(rep, rep_glob)/τ} + e^{cos(rep, rep_prev)/τ})))
            with rep_glob, rep_prev from w^t and the party's previous local
            model (w⁰ before its first training), detached
  l. 19     loss.backward(); optimizer.step()
  l. 7      w^{t+1} ← Σ_{i∈S_t} (n_i / Σ n_j) w_i

R_w is the network before its output layer (the mlp's nn.Sequential
without its last nn.Linear), as PFLlib's model.base; the cosine is
torch's F.cosine_similarity (its 1e-8 clamp never binds on the vectors).
Records: round_begin / client_begin / step / client_end "w_local", server
"w", final w and v (each party's previous local model).

usage: moon_torch.py VECTOR.json -o RESULT.json
"""
import torch
import torch.nn.functional as F

from torch_common import (Problem, Recorder, Unsupported, clone,
                          constant_steps, flat, load_flat, main, plan,
                          weights)


def contrastive(rep, rep_glob, rep_prev, tau):
    """The batch mean of ℓ_con (Alg. 1 l. 17)."""
    pos = torch.exp(F.cosine_similarity(rep, rep_glob, dim=1) / tau)
    neg = torch.exp(F.cosine_similarity(rep, rep_prev, dim=1) / tau)
    return torch.mean(-torch.log(pos / (pos + neg)))


def local_training(prob, rec, t, k, global_model, prev, batches):
    """PartyLocalTraining(k, w^t): returns party k's trained model."""
    cfg = prob.cfg
    mu, tau = cfg["moon.mu"], cfg["moon.tau"]
    net = clone(global_model)                            # l. 10
    opt = torch.optim.SGD(net.parameters(), lr=cfg["eta"])
    rec.record("client_begin", "w_local", net, round=t, client=k, step=0)
    data = prob.clients[k]
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        loss = data.loss(net, b)                         # l. 13: ℓ_sup
        if mu != 0.0:
            x = data.X[torch.tensor(b, dtype=torch.long)]
            rep = net[:-1](x)                            # l. 14
            with torch.no_grad():
                rep_glob = global_model[:-1](x)          # l. 15
                rep_prev = prev[:-1](x)                  # l. 16
            loss = loss + mu * contrastive(rep, rep_glob, rep_prev, tau)
        loss.backward()                                  # l. 18–19
        opt.step()
        rec.step(t, k, s, "w_local", net)
    rec.client_end(t, k, "w_local", net)
    return net


def run(vector_raw):
    """MOON on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "moon")
    constant_steps(prob.cfg, "moon")
    if prob.model["kind"] != "mlp":
        raise Unsupported("a %s model (this example builds the mlp)"
                          % prob.model["kind"])
    rec, model = Recorder(prob.id), prob.global_model
    prev = [clone(model) for _ in prob.clients]          # w_i^{−1} = w⁰
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        local = {}
        for k, batches in plan(rnd).items():
            prev[k] = local_training(prob, rec, t, k, model, prev[k],
                                     batches)
            local[k] = flat(prev[k])
        c = weights("samples", sorted(local), prob.n)
        w = torch.zeros_like(flat(model))
        for k in sorted(local):                          # l. 7
            w = w + c[k] * local[k]
        load_flat(model, w)
        rec.server(t, model)
    rec.final("w", model)
    for k, v_k in enumerate(prev):
        rec.final("v", v_k, client=k)
    return rec.result()


if __name__ == "__main__":
    main(run)
