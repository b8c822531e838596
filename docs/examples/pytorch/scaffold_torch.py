#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""scaffold_torch.py: SCAFFOLD in PyTorch, checked by `pflref check`.

Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, "SCAFFOLD: Stochastic
Controlled Averaging for Federated Learning", ICML 2020 (arXiv
1910.06378v4), Algorithm 1 (lines numbered as in docs/algorithms/scaffold.md),
written the way PFLlib's SCAFFOLDOptimizer steps: autograd's gradient of the
batch loss, then c − c_i added to each parameter's .grad before
torch.optim.SGD's step.

  l. 7    y_i ← x (a deep copy of the server model)
  l. 8-10 K_i steps, one per scheduled batch b:
          y_i ← y_i − η_l (∇f_i(y_i; b) − c_i + c)
  l. 12   c_i⁺ ← c_i − c + (x − y_i)/(K_i η_l)      (option II)
          c_i⁺ ← ∇f_i(x) on the whole training set  (option I)
  l. 16   Δx, Δc ← the means over S of y_i − x and c_i⁺ − c_i
  l. 17   x ← x + η_g Δx;  c ← c + (|S|/N) Δc

c_i starts at the vector's init.c_i (else 0), c at init.c (else the mean
of the c_i); a client never sampled keeps its c_i.  lr.*
scales η_l per round (per client training with lr.count = trainings, the
pfllib preset); scaffold.c_lr = initial divides by the undecayed η.
Records: client_begin / step / client_end "y", client_end "c_i" (c_i⁺),
server "w" (x) and server "c" (docs/algorithms/scaffold.md).

usage: scaffold_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (Problem, Recorder, Unsupported, clone, flat,
                          load_flat, lr_factor, main, plan)


def gradient(client, model, batch):
    """∇f_i(model; batch) as one flat float64 vector."""
    model.zero_grad()
    client.loss(model, batch).backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def add_to_grad(model, v):
    """p.grad += v's slice of p, parameter by parameter."""
    off = 0
    for p in model.parameters():
        p.grad += v[off:off + p.numel()].reshape(p.shape)
        off += p.numel()


def client_update(prob, rec, t, i, server, c, c_i, batches, trained):
    """Lines 7-14 for client i: returns (y_i, c_i⁺), both flat."""
    cfg, client = prob.cfg, prob.clients[i]
    eta_l = cfg["eta"] * lr_factor(cfg, t, trained=trained)
    x = flat(server)
    model = clone(server)                                   # l. 7
    opt = torch.optim.SGD(model.parameters(), lr=eta_l)
    rec.record("client_begin", "y", model, round=t, client=i, step=0)
    for s, b in enumerate(batches, start=1):                # l. 8-10
        opt.zero_grad()
        client.loss(model, b).backward()
        add_to_grad(model, c - c_i)                         # − c_i + c
        opt.step()
        rec.step(t, i, s, "y", model)
    rec.client_end(t, i, "y", model)
    y = flat(model)
    if cfg["scaffold.option"] == "I":                       # l. 12 (i)
        c_plus = gradient(client, clone(server), list(range(client.n)))
    elif cfg["scaffold.option"] == "II":                    # l. 12 (ii)
        eta_c = cfg["eta"] if cfg["scaffold.c_lr"] == "initial" else eta_l
        c_plus = c_i - c + (x - y) / (len(batches) * eta_c)
    else:
        raise Unsupported("scaffold.option %r" % cfg["scaffold.option"])
    rec.client_end(t, i, "c_i", c_plus)
    return y, c_plus


def run(vector_raw):
    """SCAFFOLD on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "scaffold")
    cfg = prob.cfg
    cfg.setdefault("scaffold.eta_g", 1.0)
    cfg.setdefault("scaffold.option", "II")
    cfg.setdefault("scaffold.c_lr", "round")
    if cfg["scaffold.c_lr"] not in ("round", "initial"):
        raise Unsupported("scaffold.c_lr %r" % cfg["scaffold.c_lr"])
    rec, server = Recorder(prob.id), prob.global_model
    N, P = len(prob.clients), flat(server).numel()
    init = vector_raw["spec"].get("init", {})
    c_i = [torch.tensor(row) if "c_i" in init
           else torch.zeros(P)
           for row in init.get("c_i", [None] * N)]
    c = (torch.tensor(init["c"]) if "c" in init
         else torch.stack(c_i).mean(dim=0))
    trained = [0] * N
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, server)
        x = flat(server)
        S = plan(rnd)
        dx = torch.zeros(P)
        dc = torch.zeros(P)
        for i, batches in S.items():                        # ascending i
            y, c_plus = client_update(prob, rec, t, i, server, c, c_i[i],
                                      batches, trained[i])
            trained[i] += 1
            dx = dx + (y - x) / len(S)                      # l. 13, 16
            dc = dc + (c_plus - c_i[i]) / len(S)
            c_i[i] = c_plus                                 # l. 14
        load_flat(server, x + cfg["scaffold.eta_g"] * dx)   # l. 17
        rec.server(t, server)
        c = c + len(S) / N * dc
        rec.server(t, c, name="c")
    rec.final("w", server)
    return rec.result()


if __name__ == "__main__":
    main(run)
