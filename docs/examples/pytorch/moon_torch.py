#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""moon_torch.py: MOON in PyTorch, checked by `pflref check`.

Li, He, Song, "Model-Contrastive Federated Learning", CVPR 2021 (arXiv
2103.16257v1), Algorithm 1 (lines numbered as in docs/algorithms/moon.md):

  l. 10     w_i ← a deep copy of w^t; its client optimizer (below)
  l. 13–18  per scheduled batch, one forward of the local net:
            z = net[:-1](x), out = net[-1](z);
            ℓ = ℓ_sup(out, y) + μ mean(−log(e^{cos(z, z_glob)/τ} /
                (e^{cos(z, z_glob)/τ} + e^{cos(z, z_prev)/τ})))
            with z_glob, z_prev from w^t and the party's previous local
            model (w⁰ before its first training), under no_grad
  l. 19     loss.backward(); optimizer.step()
  l. 7      w^{t+1} ← Σ_{i∈S_t} (n_i / Σ n_j) w_i

R_w is the network before its output layer (the nn.Sequential without its
last nn.Linear), as PFLlib's model.base; the cosine is torch's
F.cosine_similarity (its 1e-8 clamp never binds on the vectors).  The mlp
and layer lists whose last layer is dense (no dropout: MOON takes no
masks).  Records: round_begin / client_begin / step / client_end
"w_local", server "w", final w and v (each party's previous local model).

Batch normalisation (docs/algorithms/moon.md, "Batch normalisation"): a
layer list's batchnorm layers are torch.nn.BatchNorm1d / 2d (torch_bn.py)
and the local net is in train() mode, so l. 13–14's one forward normalises
with the batch's statistics, ℓ's gradient goes back through them, and torch
moves the net's running_mean, running_var once per step.  moon.passes =
eval (the authors' global_model.eval(), previous_net.eval()): z_glob and
z_prev from eval() forwards on each model's running statistics; train
(PFLlib's, preset pfllib): from train() forwards of the party's copy of
w^t and of its old model, on the batch's statistics (their buffers move in
copies nobody reads again).  Every record and the server's average are the
state_dict's values in order (running statistics included), so
bn.aggregate = average averages them with w; parameters_only (preset
pfllib: set_parameters copies parameters() only) starts the party's net
from w^t's parameters and its own running statistics (its previous local
model's), and the new global takes the first uploader's.

The client optimizer (opt.*, lr.*): torch_common.ClientOptimizer
(docs/optimizers.md) over the local net's parameters(): torch.optim.SGD,
ClassicalSGD, Adam or AdamW, the decay scope (a split's shared / personal
blocks, or weights only), gradient-norm clipping and where its state lives
(opt.state: reset, a new one for every local training as the authors'
QinbinLi/MOON main.py:267-269; client; server), at η times the round's
lr_factor (lr.count = trainings: the party's own trainings before).  The
preset official is that torch.optim.SGD(lr=η, momentum=0.9,
weight_decay=1e-5).

usage: moon_torch.py VECTOR.json -o RESULT.json
"""
import torch
import torch.nn.functional as F

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, require_dense_head, split_test,
                      state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, spell_preset, take_optimizer,
                          weights)

# docs/algorithms/moon.md, "Switches, presets and the client optimizer"
PRESETS = {"official": {"opt.momentum": 0.9, "opt.weight_decay": 1e-5},
           "pfllib": {"lr.count": "trainings", "moon.passes": "train",
                      "bn.aggregate": "parameters_only"}}


def sup_loss(loss_name, out, y):
    """ℓ_sup, the batch mean of the model's loss (docs/models.md)."""
    if loss_name == "cross_entropy":
        return F.cross_entropy(out, y.long())
    r = out.squeeze(1) - y
    return (r ** 2).mean() if loss_name == "squared" else 0.5 * (r ** 2).mean()


def contrastive(rep, rep_glob, rep_prev, tau):
    """The batch mean of ℓ_con (Alg. 1 l. 17)."""
    pos = torch.exp(F.cosine_similarity(rep, rep_glob, dim=1) / tau)
    neg = torch.exp(F.cosine_similarity(rep, rep_prev, dim=1) / tau)
    return torch.mean(-torch.log(pos / (pos + neg)))


def local_training(prob, rec, t, k, global_model, prev, batches, trained):
    """PartyLocalTraining(k, w^t): returns party k's trained model;
    trained: the party's trainings before (lr.count = trainings)."""
    cfg = prob.cfg
    mu, tau = cfg["moon.mu"], cfg["moon.tau"]
    train_refs = cfg.get("moon.passes", "eval") == "train"
    net = clone(global_model)                            # l. 10
    if cfg.get("bn.aggregate", "average") == "parameters_only":
        put_buffers(net, copy_buffers(prev))             # its own r_μ, r_v
    net.train()
    if train_refs:      # PFLlib: the party's copies, left in train()
        glob, old = clone(global_model).train(), prev.train()
    else:               # the authors' global_model.eval(), previous_net.eval()
        glob, old = global_model.eval(), prev.eval()
    opt = prob.optimizers.get(0, k, net,
                              cfg["eta"] * lr_factor(cfg, t, trained=trained),
                              split_test(prob))
    rec.record("client_begin", "w_local", state_flat(net), round=t,
               client=k, step=0)
    data = prob.clients[k]
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], data.y[idx]
        opt.zero_grad()
        rep = net[:-1](x)                                # l. 14: z
        loss = sup_loss(data.loss_name, net[-1](rep), y)  # l. 13: ℓ_sup
        if mu != 0.0:
            with torch.no_grad():
                rep_glob = glob[:-1](x)                  # l. 15
                rep_prev = old[:-1](x)                   # l. 16
            loss = loss + mu * contrastive(rep, rep_glob, rep_prev, tau)
        loss.backward()                                  # l. 18–19
        opt.step()
        rec.step(t, k, s, "w_local", state_flat(net))
    prob.optimizers.keep(0, k, opt)
    rec.client_end(t, k, "w_local", state_flat(net))
    return net


def run(vector_raw):
    """MOON on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "moon", PRESETS))
    prob = bn_problem(raw, "moon")
    prob.optimizers = ClientOptimizers(ocfg)
    require_dense_head(prob)
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    rec, model = Recorder(prob.id), prob.global_model
    prev = [clone(model) for _ in prob.clients]          # w_i^{−1} = w⁰
    trained = [0] * len(prob.clients)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        local = {}
        for k, batches in plan(rnd).items():
            prev[k] = local_training(prob, rec, t, k, model, prev[k],
                                     batches, trained[k])
            trained[k] += 1
            local[k] = state_flat(prev[k])
        c = weights("samples", sorted(local), prob.n)
        w = torch.zeros_like(state_flat(model))
        for k in sorted(local):                          # l. 7
            w = w + c[k] * local[k]
        load_state(model, w)
        if prob.bn and agg == "parameters_only":         # uploaded_models[0]
            put_buffers(model, copy_buffers(prev[first_uploader(rnd, local)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    for k, v_k in enumerate(prev):
        rec.final("v", state_flat(v_k), client=k)
    return rec.result()


if __name__ == "__main__":
    main(run)
