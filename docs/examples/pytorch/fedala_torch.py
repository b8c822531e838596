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
          (opt.*: torch_common.ClientOptimizers, the client optimizer)
  l. 18   Θ ← Σ n_i Θ_i / Σ n_j over the participants
  l. 19   the result's v_i: client i's latest Θ̂_i (its model right after
          its last ALA, before that round's training; w⁰ if it never ran
          ALA), the model the authors' and PFLlib's servers evaluate
          (evaluate() follows send_models)

fedala.skip = sum_first and fedala.p_unit = tensors (presets official,
pfllib) as ALA.py:82, :86, :95; fedala.start = own (the three presets):
the repeated passes in a client's first ALA, ALA.py:52, :155.
fedala.ala_clients = all (preset
pfllib_run) as PFLlib's serverala.py:73-74: before a round trains, every
client (ascending id) runs ALA and keeps Θ̂ as its local model, a client
outside the round included; its sample is then among the round's personal
lists after the participants' (ascending id).  lr.count = trainings
(presets pfllib, pfllib_run): client i's α decays with its own updates,
PFLlib's per-client ExponentialLR; η does not decay.  Records:
docs/algorithms/fedala.md, "What a run reports".

Each client holds its own model (an nn.Module), as clientALA does; ALA
reads and writes parameters() only (parameters_to_vector: Θ, Θ_i, Θ̂, W
over the parameter entries).  Batch normalisation (docs/algorithms/
fedala.md, "Batch normalisation"; bn.aggregate = parameters_only, the
presets'): the batchnorm layers are torch.nn.BatchNorm1d / 2d
(torch_bn.py) and every model stays in train() mode, except under
fedala.ala_mode = pfllib (presets pfllib, pfllib_run), where the models
take the modes PFLlib's calls give them: evaluate() after send_models
calls model.eval() on every client (clientbase.py:84, :126), train()
calls model.train() (clientala.py:23), and ALA's deepcopy keeps the mode,
so a client that sat out the previous round runs its passes in eval().
Θ̂_i takes Θ_i's
running statistics (the client's model with Θ̂'s parameters written in);
ALA's passes run on model_t = a deepcopy of the client's model, whose
buffers torch moves and which is then dropped; l. 9's steps move the
client model's; the server's model takes the first uploader's.  Every
record of a model is its state_dict's values in order (W_i's NOTE holds 1
on the running statistics).

usage: fedala_torch.py VECTOR.json -o RESULT.json
"""
import numpy as np
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader,
                      put_buffers, state_flat)
from torch_common import ClientOptimizers, Recorder, Unsupported, clone, \
    flat, is_personal, load_flat, lr_factor, main, plan, take_optimizer


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


def ala(prob, i, theta, net_i, W, mask, passes, first):
    """Lines 5-8 on client i's model net_i: (Θ̂, the passes made); W is
    updated in place."""
    cfg = prob.cfg
    theta_i = flat(net_i)
    diff = theta - theta_i
    hat = torch.where(mask, theta_i + diff * W, theta)
    model_t = clone(net_i)                              # ALA.py:91
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


def with_params(net, w):
    """A copy of the net with the parameter vector w written in (its
    running statistics kept)."""
    out = clone(net)
    load_flat(out, w)
    return out


def weights_record(net, W):
    """W_i in the state_dict layout: W on the parameters, 1 on the
    running statistics."""
    out = with_params(net, W)
    put_buffers(out, [torch.ones_like(b) for b in copy_buffers(out)])
    return state_flat(out)


def skips(prob, t, theta, theta_i):
    if t == 0:
        return True
    if prob.cfg.get("fedala.skip", "first_round") != "sum_first":
        return False
    first = next(prob.global_model.parameters()).numel()
    return float(torch.sum(theta[:first] - theta_i[:first])) == 0.0


def run(vector_raw):
    """FedALA on a golden vector; returns its pflref-result/1 dict."""
    # opt.*: clientala.py's self.optimizer, the local training's (l. 16);
    # ALA's W_i steps stay Eq. (5)'s own (ALA.py steps W by hand)
    vector_raw, ocfg = take_optimizer(vector_raw)
    optimizers = ClientOptimizers(ocfg)
    prob = bn_problem(vector_raw, "fedala")
    cfg = prob.cfg
    split = cfg.get("split") or []

    def personal(name):
        """The split's test; a batch-norm layer's weight, bias by its
        layer's name (torch_common.layer_blocks lists dense and conv2d)."""
        m = prob.model
        if m["kind"] == "layers":
            off = 1 if len(m["input"]) == 3 else 0
            idx, role = name.split(".", 1)
            L = m["layers"][int(idx) - off]
            if L["type"].startswith("batchnorm"):
                lname = str(L.get("name", int(idx) - off))
                return lname in split or "%s.%s" % (lname, role) in split
        return is_personal(m, name, split)
    if prob.bn and cfg.get("bn.aggregate", "average") != "parameters_only":
        raise Unsupported("batch normalisation under bn.aggregate %r"
                          % cfg.get("bn.aggregate", "average"))
    if prob.model["kind"] == "layers" and any(
            L["type"] == "dropout" for L in prob.model["layers"]):
        raise Unsupported("dropout (this example gives no masks)")
    rec = Recorder(prob.id)
    glob = prob.global_model
    theta = flat(glob)
    mask = ala_range(glob, cfg)
    nets = [clone(glob) for _ in prob.clients]      # each client's model
    latest = [state_flat(n) for n in nets]           # l. 19: its last Θ̂_i
    Ws = [torch.ones_like(theta) for _ in prob.clients]
    trained = [0 for _ in prob.clients]
    started = set()
    evaluated = cfg.get("fedala.ala_mode", "train") == "pfllib"
    gap = int(cfg.get("fedala.eval_gap", 1))        # PFLlib's -eg
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(glob))
        every = cfg.get("fedala.ala_clients", "participants") == "all"
        rest = [i for i in range(len(nets)) if i not in rnd["clients"]]
        owners = list(rnd["clients"]) + (rest if every else [])
        samples = dict(zip(owners, rnd.get("personal", [None] * len(owners))))
        uploads = {}

        def adapt(i):
            hat, made = flat(nets[i]), 0
            if not skips(prob, t, theta, flat(nets[i])):
                own = cfg.get("fedala.start", "round2") == "own"
                hat, made = ala(prob, i, theta, nets[i], Ws[i], mask,
                                samples[i],
                                i not in started if own else t == 1)
                started.add(i)
            rec.record("note", "ala_epochs", [made], round=t, client=i)
            rec.record("note", "W_i", weights_record(nets[i], Ws[i]),
                       round=t, client=i)
            out = with_params(nets[i], hat)         # Θ̂_i, Θ_i's buffers
            latest[i] = state_flat(out)
            return out

        hats = {}
        if every:                     # serverala.py:73-74, send_models
            for i in range(len(nets)):
                hats[i] = adapt(i)
                if i in rest:
                    nets[i] = hats[i]
                    rec.record("note", "theta_hat", state_flat(nets[i]),
                               round=t, client=i)
            if evaluated and t % gap == 0:   # serverala.py:28-31, evaluate()
                for model in hats.values():
                    model.eval()
        for i, batches in plan(rnd).items():
            model = hats[i] if every else adapt(i)
            model.train()
            alpha = cfg["eta"] * lr_factor(cfg, t, trained=trained[i])
            trained[i] += 1
            opt = optimizers.get(0, i, model, alpha,
                                 personal if split else None)
            rec.record("client_begin", "theta_i", state_flat(model), round=t,
                       client=i, step=0)
            for s, b in enumerate(batches, start=1):
                opt.zero_grad()
                prob.clients[i].loss(model, b).backward()
                opt.step()
                rec.step(t, i, s, "theta_i", state_flat(model))
            optimizers.keep(0, i, opt)
            rec.client_end(t, i, "theta_i", state_flat(model))
            nets[i] = model
            uploads[i] = flat(model)
        if evaluated and not every and t % gap == 0:
            # ALA ran on the participants only, each just before its
            # train(): this round's evaluate() (after send_models, in the
            # rounds t % eval_gap == 0) left every other client's model in
            # eval()
            for i in rest:
                nets[i].eval()
        m_t = sum(prob.n[i] for i in uploads)
        new = torch.zeros_like(theta)
        for i in sorted(uploads):
            new = new + (prob.n[i] / m_t) * uploads[i]
        theta = new
        load_flat(glob, theta)
        if uploads:                   # a deepcopy of uploaded_models[0]
            put_buffers(glob, copy_buffers(nets[first_uploader(rnd,
                                                               uploads)]))
        rec.server(t, state_flat(glob))
    rec.final("w", state_flat(glob))
    for i, hat in enumerate(latest):
        rec.final("v", hat, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
