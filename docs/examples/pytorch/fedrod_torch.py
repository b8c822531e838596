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
opt_head over head_p, :16, :53, :59), each built from the settings
(torch.optim.SGD with momentum, dampening, nesterov, weight_decay;
Adam; AdamW); opt.state = reset builds both at every client update,
client keeps each client's pair (their state_dict carried into the next
round's objects), server one pair for all.  opt.decay_scope: all; shared
(the generic model's), personal (head_p's), weights (no decay on the
biases: a second parameter group with weight_decay 0).

usage: fedrod_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

from torch import nn

from torch_bn import (BN_TYPES, bn_buffers, build_net, load_state,
                      put_buffers, state_flat)
from torch_common import (OPT_DEFAULTS, Problem, Recorder, Unsupported,
                          clone, main, plan)

PFLLIB = {"fedrod.features": "before", "fedrod.phi_p0": "generic",
          "lr.count": "trainings", "bn.aggregate": "parameters_only"}


def head_values(head):
    """φ_P as pflref records it: W_P row-major, then b_P."""
    parts = [head.weight.detach().reshape(-1)]
    if head.bias is not None:
        parts.append(head.bias.detach())
    return torch.cat(parts)


def opt_settings(vector_raw):
    """(the vector without its opt.* keys, the opt.* settings, or None for
    the paper's plain SGD)."""
    vec = copy.deepcopy(vector_raw)
    alg = vec["spec"]["algorithm"]
    cfg = dict(OPT_DEFAULTS)
    for part in ("hyperparameters", "switches"):
        for k in [k for k in alg.get(part, {}) if k.startswith("opt.")]:
            cfg[k] = alg[part].pop(k)
    if all(cfg[k] == v for k, v in OPT_DEFAULTS.items()):
        return vec, None
    if cfg["opt.clip"] != "off" or cfg["opt.momentum_form"] != "pytorch" \
            or (cfg["opt.method"] == "sgd"
                and cfg["opt.weight_decay_form"] != "coupled"):
        raise Unsupported("opt.clip, opt.momentum_form or SGD's decoupled "
                          "decay in this example")
    return vec, cfg


def make_optimizer(ocfg, params, eta, decays):
    """The torch optimizer of the settings over params [(tensor, is_bias)]:
    weight decay on the tensors `decays` takes (all, or not the biases)."""
    lam = ocfg["opt.weight_decay"]
    on = [p for p, bias in params if decays(bias)]
    off = [p for p, bias in params if not decays(bias)]
    groups = [{"params": on, "weight_decay": lam}]
    if off:
        groups.append({"params": off, "weight_decay": 0.0})
    if ocfg["opt.method"] == "sgd":
        return torch.optim.SGD(groups, lr=eta, momentum=ocfg["opt.momentum"],
                               dampening=ocfg["opt.dampening"],
                               nesterov=ocfg["opt.nesterov"] == "on")
    kind = torch.optim.Adam if ocfg["opt.method"] == "adam" else torch.optim.AdamW
    return kind(groups, lr=eta, betas=(ocfg["opt.beta1"], ocfg["opt.beta2"]),
                eps=ocfg["opt.eps"])


def optimizers(ocfg, net, head, eta, i, saved):
    """Client i's two optimizers (generic, personal), their state carried
    from `saved` under opt.state = client / server."""
    if ocfg is None:
        return (torch.optim.SGD(net.parameters(), lr=eta),
                torch.optim.SGD(head.parameters(), lr=eta))
    scope = ocfg["opt.decay_scope"]

    def rule(role):
        if scope == "weights":
            return lambda bias: not bias
        take = scope == "all" or scope == role
        return lambda bias: take
    gen = make_optimizer(ocfg, [(p, n.endswith("bias"))
                                for n, p in net.named_parameters()],
                         eta, rule("shared"))
    per = make_optimizer(ocfg, [(p, n.endswith("bias"))
                                for n, p in head.named_parameters()],
                         eta, rule("personal"))
    key = {"client": i, "server": None}.get(ocfg["opt.state"], "reset")
    if key != "reset" and key in saved:
        gen.load_state_dict(saved[key][0])
        per.load_state_dict(saved[key][1])
    return gen, per


def client_update(prob, rec, t, i, model, head, batches, before, ocfg=None,
                  saved=None, own=None):
    """Client i's round: returns its trained generic model's parameters
    (own: each client's buffers under bn.aggregate = parameters_only)."""
    data, eta = prob.clients[i], prob.cfg["eta"]
    net = clone(model)
    if own is not None:     # set_parameters: parameters() only
        put_buffers(net, own[i])
    opt, opt_head = optimizers(ocfg, net, head, eta, i, saved)
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
    if ocfg is not None and ocfg["opt.state"] != "reset":
        key = i if ocfg["opt.state"] == "client" else None
        saved[key] = (copy.deepcopy(opt.state_dict()),
                      copy.deepcopy(opt_head.state_dict()))
    rec.client_end(t, i, "w_local", state_flat(net))
    rec.record("note", "phi_P", head_values(head), round=t, client=i)
    if own is not None:
        own[i] = [b.detach().clone() for b in bn_buffers(net)]
    return state_flat(net)


def run(vector_raw):
    """FedRoD on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = opt_settings(vector_raw)
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
    if prob.cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule %r" % prob.cfg["lr.schedule"])
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
    saved = {}
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
                                before, ocfg, saved, own)
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
