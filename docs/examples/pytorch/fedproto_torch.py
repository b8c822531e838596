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
                loss.backward(); optimizer.step()  (torch.optim.SGD(lr=η))
  local l. 8    C_i^(j): class means of net[:-1](x) over D_i at the trained
                model (client_protos = during_training: of every batch's
                rep before its step)
  server l. 6   C̄^(j) = Σ |D_{i,j}| C_i^(j) / Σ |D_{i,j}| over the round's
                clients holding j (weights = uniform: the plain mean)

Each client keeps its own network (never averaged).  Records: client_begin
/ step / client_end "v", the notes C, n_C (per client) and C_bar, N_bar
(per round), final v.  The mlp vectors without a preset; the presets'
torch SGD with momentum is fedavgcnn_torch.py's business, not this
example's.

usage: fedproto_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import Problem, Recorder, Unsupported, clone, constant_steps, main


def prototype_term(rep, y, cbar, have, mse):
    """mean_b R(rep_b, C̄^(y_b)), 0 for a class without a prototype."""
    mask = have[y].to(rep.dtype)
    d = ((rep - cbar[y]) ** 2).sum(dim=1)
    if mse:
        d = d / rep.shape[1]
    return (mask * d).mean()


def local_update(prob, rec, t, i, net, batches, cbar, have, K):
    """LocalUpdate(i, C̄): the steps; returns (class sums, class counts)."""
    cfg, data = prob.cfg, prob.clients[i]
    lam = cfg["fedproto.lambda"]
    mse = cfg.get("fedproto.distance", "squared_l2") == "mse"
    during = cfg.get("fedproto.client_protos", "trained") == "during_training"
    opt = torch.optim.SGD(net.parameters(), lr=cfg["eta"])
    rec.record("client_begin", "v", net, round=t, client=i, step=0)
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
        rec.step(t, i, s, "v", net)
    rec.client_end(t, i, "v", net)
    if not during:
        with torch.no_grad():
            y = data.y.long()
            S.index_add_(0, y, net[:-1](data.X))
            n.index_add_(0, y, torch.ones(len(y)))
    return S, n


def run(vector_raw):
    """FedProto on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "fedproto")
    constant_steps(prob.cfg, "fedproto")
    if prob.model["kind"] != "mlp":
        raise Unsupported("a %s model (this example builds the mlp)"
                          % prob.model["kind"])
    uniform = prob.cfg.get("fedproto.weights", "class_counts") == "uniform"
    rec = Recorder(prob.id)
    nets = [clone(prob.global_model) for _ in prob.clients]
    K, h = prob.model["k"], prob.model["h"]
    cbar, have = torch.zeros(K, h), torch.zeros(K, dtype=torch.bool)
    for t, rnd in enumerate(prob.rounds):
        num, den, n_j = torch.zeros(K, h), torch.zeros(K), torch.zeros(K)
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            S, n = local_update(prob, rec, t, i, nets[i], batches, cbar,
                                have, K)
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
        rec.final("v", net, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
