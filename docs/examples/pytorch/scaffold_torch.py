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
opt.*: the step is a torch_common.ClientOptimizer (docs/optimizers.md)
on the corrected gradient (weight decay and momentum act on d = g − c_i +
c, docs/algorithms/scaffold.md), its state kept as opt.state says.
Records: client_begin / step / client_end "y", client_end "c_i" (c_i⁺),
server "w" (x) and server "c" (docs/algorithms/scaffold.md).

Batch normalisation (docs/algorithms/scaffold.md, bn.aggregate): a layer
list's batchnorm1d / 2d is torch.nn.BatchNorm1d / 2d (torch_bn.py), y_i's
module in train() mode, so each step's forward moves its running_mean,
running_var (bn.running = frozen: momentum 0; bn.running_var = biased:
torch_bn's hook).  x, y_i, c, c_i and every record are in the
state_dict's layout (the buffers among the parameters); the correction
c − c_i goes to the parameters' .grad only.  bn.aggregate = average: the
buffers are entries like any other in l. 12, 16 and 17.  parameters_only
(PFLlib's set_parameters and its control variates over parameters()):
y_i starts from x's parameters with the buffers client i last left (w⁰'s
at first), c_i⁺ keeps c_i on the buffers, and after l. 17 x's buffers are
the round's first uploader's (scaffold.bn_global = first_upload;
first_upload, else the lowest id) or stay x's (previous, the preset
pfllib: serverscaffold.py adds Δy to parameters() only).  Option I with
batch normalisation is refused (no vector; its full-set gradient pass is
not written here).

usage: scaffold_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      parameter_mask, put_buffers, set_parameters,
                      split_test, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, take_optimizer)


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


def client_update(prob, rec, t, i, server, c, c_i, batches, trained,
                  mask, model=None):
    """Lines 7-14 for client i: returns (y_i, c_i⁺), both flat (the
    state_dict layout; mask: its parameter entries).  model: client i's
    own module under bn.aggregate = parameters_only (its parameters() set
    from x), else None (a copy of x)."""
    cfg, client = prob.cfg, prob.clients[i]
    eta_l = cfg["eta"] * lr_factor(cfg, t, trained=trained)
    x = state_flat(server)
    if model is None:
        model = clone(server)                               # l. 7
    else:                                                   # parameters only
        set_parameters(model, server)
    model.train()
    opt = prob.optimizers.get(0, i, model, eta_l, split_test(prob))
    rec.record("client_begin", "y", state_flat(model), round=t, client=i,
               step=0)
    for s, b in enumerate(batches, start=1):                # l. 8-10
        opt.zero_grad()
        client.loss(model, b).backward()
        add_to_grad(model, (c - c_i)[mask])                 # − c_i + c
        opt.step()
        rec.step(t, i, s, "y", state_flat(model))
    prob.optimizers.keep(0, i, opt)
    rec.client_end(t, i, "y", state_flat(model))
    y = state_flat(model)
    if cfg["scaffold.option"] == "I":                       # l. 12 (i)
        if prob.bn:
            raise Unsupported("scaffold.option I with batch normalisation")
        c_plus = gradient(client, clone(server), list(range(client.n)))
    elif cfg["scaffold.option"] == "II":                    # l. 12 (ii)
        eta_c = cfg["eta"] if cfg["scaffold.c_lr"] == "initial" else eta_l
        c_plus = c_i - c + (x - y) / (len(batches) * eta_c)
    else:
        raise Unsupported("scaffold.option %r" % cfg["scaffold.option"])
    if cfg.get("bn.aggregate", "average") == "parameters_only":
        c_plus = torch.where(mask, c_plus, c_i)      # lists over parameters()
    rec.client_end(t, i, "c_i", c_plus)
    return y, c_plus


def run(vector_raw):
    """SCAFFOLD on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "scaffold")
    prob.optimizers = ClientOptimizers(ocfg)
    cfg = prob.cfg
    cfg.setdefault("scaffold.eta_g", 1.0)
    cfg.setdefault("scaffold.option", "II")
    cfg.setdefault("scaffold.c_lr", "round")
    if cfg["scaffold.c_lr"] not in ("round", "initial"):
        raise Unsupported("scaffold.c_lr %r" % cfg["scaffold.c_lr"])
    agg = cfg.get("bn.aggregate", "average")
    bn_global = cfg.get("scaffold.bn_global", "first_upload")
    if agg not in ("average", "parameters_only") or bn_global not in (
            "first_upload", "previous"):
        raise Unsupported("bn.aggregate %r, scaffold.bn_global %r"
                          % (agg, bn_global))
    if prob.bn and agg == "average" and bn_global == "previous":
        raise Unsupported("scaffold.bn_global = previous needs "
                          "bn.aggregate = parameters_only (pflref: I12)")
    rec, server = Recorder(prob.id), prob.global_model
    N, P = len(prob.clients), state_flat(server).numel()
    mask = parameter_mask(server)
    # parameters_only: each client's own module (w⁰'s buffers at first)
    own = ([clone(server) for _ in range(N)]
           if prob.bn and agg == "parameters_only" else None)
    init = vector_raw["spec"].get("init", {})
    c_i = [torch.tensor(row) if "c_i" in init
           else torch.zeros(P)
           for row in init.get("c_i", [None] * N)]
    c = (torch.tensor(init["c"]) if "c" in init
         else torch.stack(c_i).mean(dim=0))
    trained = [0] * N
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(server))
        x = state_flat(server)
        x_buffers = copy_buffers(server)
        S = plan(rnd)
        dx = torch.zeros(P)
        dc = torch.zeros(P)
        for i, batches in S.items():                        # ascending i
            y, c_plus = client_update(prob, rec, t, i, server, c, c_i[i],
                                      batches, trained[i], mask,
                                      own[i] if own else None)
            trained[i] += 1
            dx = dx + (y - x) / len(S)                      # l. 13, 16
            dc = dc + (c_plus - c_i[i]) / len(S)
            c_i[i] = c_plus                                 # l. 14
        load_state(server, x + cfg["scaffold.eta_g"] * dx)  # l. 17
        if own and S:            # x's buffers: the first uploader's, or
            put_buffers(server,  # the previous x's (serverscaffold.py)
                        x_buffers if bn_global == "previous"
                        else copy_buffers(own[first_uploader(rnd, S)]))
        rec.server(t, state_flat(server))
        c = c + len(S) / N * dc
        rec.server(t, c, name="c")
    rec.final("w", state_flat(server))
    return rec.result()


if __name__ == "__main__":
    main(run)
