#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedproto_torch.py: FedProto in PyTorch, checked by `pflref check`.

Tan, Long, Liu, Zhou, Lu, Jiang, Zhang, "FedProto: Federated Prototype
Learning across Heterogeneous Clients", AAAI 2022 (arXiv 2105.00243),
Algorithm 1 (lines as in docs/algorithms/fedproto.md):

  server l. 1   the global prototype set starts empty
  local l. 2-5  per scheduled batch: rep = net[:-1](x), out = net[-1](rep);
                loss = CE(out, y) + λ mean_b R(rep_b, C̄^(y_b)), R = ‖·‖²
                (fedproto.distance = mse: torch's MSELoss per sample, ‖·‖²/h),
                no R term for a class without a global prototype;
                loss.backward(); optimizer.step()  (the client optimizer)
  local l. 8    C_i^(j): class means of net[:-1](x) over D_i at the trained
                model (client_protos = during_training: of every batch's
                rep before its step)
  server l. 6   C̄^(j) = Σ |D_{i,j}| C_i^(j) / Σ |D_{i,j}| over the round's
                clients holding j (weights = uniform: the plain mean)

Each client keeps its own network (never averaged).  Records: client_begin
/ step / client_end "v", the notes C, n_C (per client) and C_bar, N_bar
(per round), final v.  The mlp and the layer lists ending in a dense
layer (no dropout); the presets official (fedproto.distance = mse,
client_protos = during_training, weights = uniform and a new
torch.optim.SGD(lr=η, momentum=0.5) at each local update) and pfllib (the
same switches, plain SGD, lr.count = trainings: each client's η decays
with its own updates, PFLlib's per-client ExponentialLR).

The client optimizer (opt.*, lr.*; docs/optimizers.md, slot 0 of
fedproto): torch_common.ClientOptimizer over the client's net's
parameters(), as moon_torch.py builds it: torch.optim.SGD (momentum,
dampening, Nesterov, coupled or decoupled weight decay), ClassicalSGD,
Adam or AdamW; the decay scope (all, weights: no bias, no batchnorm γ, β;
shared / personal: the spec's split, which FedProto itself does not
read); clip_grad_norm_ over the parameters before the step; and where
its state lives (opt.state: reset, a new one at each local update as
yuetan031/FedProto lib/update.py builds it; client, kept per client;
server, carried from client to client in training order).  The
optimizer's lr is η times the round's lr_factor.

Batch normalisation (docs/algorithms/fedproto.md, "Batch
normalisation"): a layer list's batchnorm layers are torch.nn.BatchNorm1d
/ 2d (torch_bn.py) and each client's net is in train() mode for its
steps, so the one forward of a step (rep, out) normalises with the batch's
statistics, the loss's gradient goes back through them and torch moves
the net's running_mean, running_var once a step.  Eq. 4's prototypes of
the trained model (client_protos = trained) come from an eval() forward
over D_i, on the net's running statistics, which moves nothing.  "v" is
the state_dict's values in order (running statistics included).

usage: fedproto_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import bn_problem, require_dense_head, split_test, state_flat
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, spell_preset, take_optimizer)

# docs/algorithms/fedproto.md, "Switches and presets"
SAME = {"fedproto.distance": "mse", "fedproto.client_protos":
        "during_training", "fedproto.weights": "uniform"}
PRESETS = {"official": dict(SAME, **{"opt.momentum": 0.5}),
           "pfllib": dict(SAME, **{"lr.count": "trainings"})}


def prototype_term(rep, y, cbar, have, mse):
    """mean_b R(rep_b, C̄^(y_b)), 0 for a class without a prototype."""
    mask = have[y].to(rep.dtype)
    d = ((rep - cbar[y]) ** 2).sum(dim=1)
    if mse:
        d = d / rep.shape[1]
    return (mask * d).mean()


def local_update(prob, rec, t, i, net, batches, cbar, have, K, eta):
    """LocalUpdate(i, C̄): the steps; returns (class sums, class counts).
    The client's optimizer comes from prob.optimizers (slot 0) at lr
    eta and goes back there when the steps end (opt.state)."""
    cfg, data = prob.cfg, prob.clients[i]
    lam = cfg["fedproto.lambda"]
    mse = cfg.get("fedproto.distance", "squared_l2") == "mse"
    during = cfg.get("fedproto.client_protos", "trained") == "during_training"
    net.train()
    opt = prob.optimizers.get(0, i, net, eta, split_test(prob))
    rec.record("client_begin", "v", state_flat(net), round=t, client=i,
               step=0)
    h = net[-1].in_features
    S, n = torch.zeros(K, h), torch.zeros(K)
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], data.y[idx].long()
        opt.zero_grad()
        rep = net[:-1](x)
        out = net[-1](rep)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss = loss + lam * prototype_term(rep, y, cbar, have, mse)
        if during:
            S.index_add_(0, y, rep.detach())
            n.index_add_(0, y, torch.ones(len(b)))
        loss.backward()
        opt.step()
        rec.step(t, i, s, "v", state_flat(net))
    prob.optimizers.keep(0, i, opt)
    rec.client_end(t, i, "v", state_flat(net))
    if not during:      # l. 8: f_i(x) of the trained model, eval() passes
        net.eval()
        with torch.no_grad():
            y = data.y.long()
            S.index_add_(0, y, net[:-1](data.X))
            n.index_add_(0, y, torch.ones(len(y)))
        net.train()
    return S, n


def run(vector_raw):
    """FedProto on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "fedproto",
                                            PRESETS))
    prob = bn_problem(raw, "fedproto")
    prob.optimizers = ClientOptimizers(ocfg)
    require_dense_head(prob)
    if "bn.aggregate" in prob.cfg:
        raise Unsupported("bn.aggregate (no model travels in FedProto)")
    uniform = prob.cfg.get("fedproto.weights", "class_counts") == "uniform"
    rec = Recorder(prob.id)
    nets = [clone(prob.global_model) for _ in prob.clients]
    trained = [0 for _ in prob.clients]     # each client's updates so far
    K, h = nets[0][-1].out_features, nets[0][-1].in_features
    cbar, have = torch.zeros(K, h), torch.zeros(K, dtype=torch.bool)
    for t, rnd in enumerate(prob.rounds):
        num, den, n_j = torch.zeros(K, h), torch.zeros(K), torch.zeros(K)
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            eta = prob.cfg["eta"] * lr_factor(prob.cfg, t,
                                              trained=trained[i])
            trained[i] += 1
            S, n = local_update(prob, rec, t, i, nets[i], batches, cbar,
                                have, K, eta)
            hv = n > 0
            C = torch.zeros(K, h)
            C[hv] = S[hv] / n[hv].unsqueeze(1)
            rec.record("note", "C", C, round=t, client=i)
            rec.record("note", "n_C", n, round=t, client=i)
            counts = torch.bincount(prob.clients[i].y.long(),
                                    minlength=K).to(torch.float64)
            a = (torch.ones(K) if uniform else counts) * hv
            num += a.unsqueeze(1) * C
            den += a
            n_j += hv
        have = n_j > 0
        cbar = torch.zeros(K, h)
        cbar[have] = num[have] / den[have].unsqueeze(1)
        rec.record("note", "C_bar", cbar, round=t)
        rec.record("note", "N_bar", n_j, round=t)
    for i, net in enumerate(nets):
        rec.final("v", state_flat(net), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
