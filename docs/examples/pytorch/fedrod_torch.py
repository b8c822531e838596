#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedrod_torch.py: FedRoD (linear personal head) in PyTorch, checked by
`pflref check`.

Chen and Chao, "On Bridging Generic and Personalized Federated Learning
for Image Classification", ICLR 2022 (arXiv 2107.00778), Algorithm 1
(lines as in docs/algorithms/fedrod.md):

  l. 4    the client's generic model ← w_t (body net[:-1], head net[-1])
  l. 7    per scheduled batch: rep = net[:-1](x), out_g = net[-1](rep);
          loss = CE(out_g + log N_i, y), N_i the client's class counts
          (init.class_counts[i] when the spec gives them)
          (log 0 = −inf: an absent class has probability 0);
          loss.backward(); optimizer.step()  (torch.optim.SGD(lr=η))
  l. 8    out_p = head_p(rep'), loss = CE(out_g'.detach() + out_p, y),
          rep' and out_g' of the updated model (fedrod.features = before:
          rep.detach(), out_g.detach() of l. 7's forward pass);
          opt_head.step()  (torch.optim.SGD(head_p, lr=η))
  l. 12   w = Σ (n_i / Σ n_j) w_i over the round's clients
head_p is a torch.nn.Linear of net[-1]'s shape, zero at the start
(fedrod.phi_p0 = generic: a copy of w⁰'s head), kept by the client.
Records: round_begin / server "w"; client_begin / step / client_end
"w_local"; step "phi_P" after each l. 8; note "phi_P" per participant;
final w.  The mlp vectors and the layer lists (the preset pfllib too).

Batch normalisation (docs/algorithms/fedrod.md, "Batch normalisation"):
a layer list's batchnorm1d / batchnorm2d is a torch.nn.BatchNorm1d / 2d
(C, eps=ε, momentum=ρ; bn.running = frozen: momentum 0) and the client's
net stays in train() mode, so each forward of a local step is a training
pass whose batch statistics torch moves into running_mean, running_var:
l. 7's pass at x (rep, out_g above), and under fedrod.features = after
l. 8's second pass at the updated x (rep', out_g' under no_grad: no
graph, but the buffers still move); under before l. 8 reuses l. 7's, one
move per batch.  The buffers have no gradient, so neither optimizer steps
them.  Every record, the average of l. 12 and the start w⁰ are the
state_dict's values flattened in order (NAME.weight, NAME.bias, then a
batchnorm's running_mean, running_var; num_batches_tracked dropped:
docs/models.md, "Layout"), so the server averages r_μ, r_v with w.
bn.aggregate = parameters_only (preset pfllib; PFLlib's set_parameters
and aggregate_parameters move parameters() only): each client's net
starts from w's parameters with the buffers its own net last left (w⁰'s
at first), and the server's model takes the first client's buffers.
bn.running_var = biased (s²_B into r_v, not torch's M/(M − 1) s²_B): the
torch module moves them, then r_v takes back ρ (M/(M − 1) − 1) s²_B.

The client optimizer (opt.*): two torch optimizers per client, as
PFLlib's clientrod.py holds them (self.optimizer over the generic model,
opt_head over head_p, :16, :53, :59), each a torch_common.ClientOptimizer
(torch.optim.SGD, Adam, AdamW; docs/optimizers.md); opt.state = reset
builds both at every client update, client keeps each client's pair
(their state_dict carried into the next round's objects), server one pair
for all.  opt.decay_scope: all; shared (the generic model's), personal
(head_p's), weights (no decay on the biases and batchnorm blocks: a second
parameter group with weight_decay 0).  Both step sizes are η times the
lr.* factor (lr.count = trainings: the client's own trainings before,
PFLlib's two ExponentialLR stepped after its train(), clientrod.py:64-65).

usage: fedrod_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

from torch import nn

from torch_bn import (BN_TYPES, bn_buffers, build_net, load_state,
                      put_buffers, state_flat)
from torch_common import (ClientOptimizers, Problem, Recorder, Unsupported,
                          clone, lr_factor, main, plan, take_optimizer)

PFLLIB = {"fedrod.features": "before", "fedrod.phi_p0": "generic",
          "lr.count": "trainings", "bn.aggregate": "parameters_only"}


def head_values(head):
    """φ_P as pflref records it: W_P row-major, then b_P."""
    parts = [head.weight.detach().reshape(-1)]
    if head.bias is not None:
        parts.append(head.bias.detach())
    return torch.cat(parts)


def client_update(prob, rec, t, i, model, head, batches, before, trained,
                  own=None):
    """Client i's round: returns its trained generic model's parameters
    (own: each client's buffers under bn.aggregate = parameters_only;
    trained: the rounds i trained in before, lr.count = trainings)."""
    data = prob.clients[i]
    eta = prob.cfg["eta"] * lr_factor(prob.cfg, t, trained=trained)
    net = clone(model)
    if own is not None:     # set_parameters: parameters() only
        put_buffers(net, own[i])
    # clientrod.py's self.optimizer (slot 0, the generic model: the shared
    # blocks) and opt_head (slot 1, head_p: the personal ones)
    opt = prob.optimizers.get(0, i, net, eta, lambda name: False)
    opt_head = prob.optimizers.get(1, i, head, eta, lambda name: True)
    K = net[-1].out_features
    counts = torch.bincount(data.y.long(), minlength=K).to(torch.float64)
    given = prob.spec.get("init", {}).get("class_counts")
    if given is not None:     # PFLlib's first pass with drop_last, as given
        counts = torch.tensor(given[i], dtype=torch.float64)
    rec.record("client_begin", "w_local", state_flat(net), round=t, client=i,
               step=0)
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], data.y[idx].long()
        rep = net[:-1](x)
        out_g = net[-1](rep)
        loss_bsm = torch.nn.functional.cross_entropy(out_g + counts.log(), y)
        opt.zero_grad()
        loss_bsm.backward()
        opt.step()
        rec.step(t, i, s, "w_local", state_flat(net))
        if not before:
            with torch.no_grad():
                rep = net[:-1](x)
                out_g = net[-1](rep)
        out_p = head(rep.detach())
        loss = torch.nn.functional.cross_entropy(out_g.detach() + out_p, y)
        opt_head.zero_grad()
        loss.backward()
        opt_head.step()
        rec.step(t, i, s, "phi_P", head_values(head))
    prob.optimizers.keep(0, i, opt)
    prob.optimizers.keep(1, i, opt_head)
    rec.client_end(t, i, "w_local", state_flat(net))
    rec.record("note", "phi_P", head_values(head), round=t, client=i)
    if own is not None:
        own[i] = [b.detach().clone() for b in bn_buffers(net)]
    return state_flat(net)


def run(vector_raw):
    """FedRoD on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    alg = raw.get("spec", {}).get("algorithm", {})
    if alg.get("preset") == "pfllib":    # its switches, spelled out
        alg.pop("preset")
        alg["switches"] = dict(PFLLIB, **alg.get("switches", {}))
    model_spec = raw.get("spec", {}).get("model", {})
    layers = model_spec.get("layers", [])
    has_bn = model_spec.get("kind") == "layers" and any(
        L.get("type") in BN_TYPES for L in layers)
    if has_bn:     # Problem's build_layers takes no batchnorm: stand-ins
        raw["spec"]["model"] = dict(model_spec, layers=[
            {"type": "relu"} if L["type"] in BN_TYPES else L for L in layers])
    prob = Problem(raw, "fedrod")
    prob.model = model_spec
    if prob.model["kind"] not in ("mlp", "layers") or prob.model.get("bn") \
            or any(L["type"] == "dropout" for L in layers):
        raise Unsupported("a %s model (this example builds the mlp without "
                          "bn and the layer lists without dropout)"
                          % prob.model["kind"])
    if has_bn:     # w⁰ with its running statistics (docs/models.md)
        prob.global_model = build_net(model_spec, prob.cfg)
        init = raw["spec"].get("init", {"kind": "zeros"})
        if init["kind"] == "given":
            load_state(prob.global_model, init["w"])
        else:      # zeros (Problem refused the rest): γ = 1, β = 0,
            with torch.no_grad():    # r_μ = 0, r_v = 1 in the bn blocks
                for m in prob.global_model:
                    if isinstance(m, (nn.Linear, nn.Conv2d)):
                        for q in m.parameters():
                            q.zero_()
    prob.optimizers = ClientOptimizers(ocfg)
    trained = [0] * len(prob.clients)
    before = prob.cfg.get("fedrod.features", "after") == "before"
    generic = prob.cfg.get("fedrod.phi_p0", "zero") == "generic"
    rec, model = Recorder(prob.id), prob.global_model
    heads = []
    for _ in prob.clients:
        head = copy.deepcopy(model[-1])
        if not generic:
            with torch.no_grad():
                for p in head.parameters():
                    p.zero_()
        heads.append(head)
    agg = prob.cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    own = None      # each client's net's buffers: w⁰'s until it trains
    if has_bn and agg == "parameters_only":
        own = {i: [b.detach().clone() for b in bn_buffers(model)]
               for i in range(len(prob.clients))}
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        m_t = sum(prob.n[i] for i in rnd["clients"])
        w, first = None, None
        for i, batches in plan(rnd).items():
            w_i = client_update(prob, rec, t, i, model, heads[i], batches,
                                before, trained[i], own)
            trained[i] += 1
            c = prob.n[i] / m_t
            w = c * w_i if w is None else w + c * w_i
            first = i if first is None else first
        load_state(model, w)
        if own is not None and first is not None:   # uploaded_models[0]
            put_buffers(model, own[first])
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    return rec.result()


if __name__ == "__main__":
    main(run)
