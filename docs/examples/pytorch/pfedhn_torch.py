#!/usr/bin/python3
"""pfedhn_torch.py: pFedHN with a linear hypernetwork in PyTorch, checked by
`pflref check`.

Shamsian, Navon, Fetaya, Chechik, "Personalized Federated Learning using
Hypernetworks", ICML 2021 (arXiv 2103.04628v1), Algorithm 1, with the
linear hypernetwork of the spec notes §4.1 (docs/algorithms/pfedhn.md):
the server holds an nn.Embedding(N, e) of the clients' v_i and an
nn.Linear(e, P) whose weight is W_h (P × e) and bias b_h
(pfedhn.hn_bias = off: no bias); each round's one client i
  l. 4    gets θ_i = h(v_i; φ) = W_h v_i + b_h, loaded into its model
          (the spec's model; P its state_dict entries in pflref's layout,
          a batchnorm layer's running statistics included);
  l. 5-8  trains θ̃_i from θ_i over its scheduled batches with an SGD of
          step size η (model.train(): a batchnorm layer's running
          statistics move in each forward);
  l. 9    returns Δθ_i = θ̃_i − θ_i;
  l. 10-11 the server steps down ½‖θ̃_i − h(v_i; φ)‖² as the authors'
          code does: θ_i.backward(θ_i − θ̃_i) (torch.autograd's
          grad_outputs), then one torch.optim.SGD step over W_h, b_h (lr α)
          and the embedding table (lr α_v = pfedhn.alpha_v, or α), all at
          the round-start values.
The authors' code (AvivSham/pFedHN @ 1bc0549, preset official):
pfedhn.outer_opt = sgd_momentum_wd, that server SGD with momentum
pfedhn.outer_momentum and weight decay pfedhn.outer_wd, built once (its
buffer kept across rounds; the dense embedding gradient, so every row
decays); pfedhn.inner_opt = sgd_momentum_wd, a new
SGD(momentum=pfedhn.inner_momentum, weight_decay=pfedhn.inner_wd) each
round; pfedhn.clip = norm, clip_grad_norm_(…, pfedhn.clip_norm) on the
local gradient and on the hypernetwork's.  With the paper's inner SGD the
local steps go through torch_common.ClientOptimizers instead (opt.*;
opt.decay_scope = shared / personal reads the spec's split).  Every
client's final model is h(v_j; φ).  Records: docs/validate.md, "pfedhn".

usage: pfedhn_torch.py VECTOR.json -o RESULT.json
"""
import torch
from torch import nn

import torch_common
from torch_bn import bn_problem, load_state, split_test, state_flat
from torch_common import (OPT_DEFAULTS, ClientOptimizers, Recorder,
                          Unsupported, main, spell_preset, take_optimizer)

# the preset official: AvivSham/pFedHN's trainer.py (notes §4.3 H1-H4)
PRESETS = {"official": {"pfedhn.outer_opt": "sgd_momentum_wd",
                        "pfedhn.inner_opt": "sgd_momentum_wd",
                        "pfedhn.clip": "norm"}}


# Negative controls (test_torch_candidates.py sets torch_common.CONTROLS):
# pfedhn-embed-frozen (the embeddings left out of the server's optimizer),
# pfedhn-embed-alpha (the embeddings stepped with α, not α_v),
# pfedhn-outer-reset (the server's momentum optimizer built anew every
# round).
def bug(name):
    """True when the negative control NAME is on."""
    return name in torch_common.CONTROLS


class HyperNetwork(nn.Module):
    """h(v_i; φ) = W_h v_i + b_h over a table of client embeddings."""

    def __init__(self, hn, bias):
        super().__init__()
        W = torch.tensor(hn["W"], dtype=torch.get_default_dtype())   # P × e
        V = torch.tensor(hn["v"], dtype=torch.get_default_dtype())   # N × e
        self.embeddings = nn.Embedding(V.shape[0], V.shape[1])
        self.hn = nn.Linear(W.shape[1], W.shape[0], bias=bias)
        with torch.no_grad():
            self.embeddings.weight.copy_(V)
            self.hn.weight.copy_(W)
            if bias:
                self.hn.bias.copy_(torch.tensor(hn["b"]))

    def forward(self, i):
        return self.hn(self.embeddings(torch.tensor([i])))[0]


def run(vector_raw):
    """pFedHN on a golden vector; its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "pfedhn", PRESETS))
    prob = bn_problem(raw, "pfedhn")
    cfg = prob.cfg
    if cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule under pfedhn (η is constant)")
    if "bn.aggregate" in cfg:
        raise Unsupported("bn.aggregate under pfedhn")
    hn = prob.spec.get("init", {}).get("hypernetwork")
    if hn is None:
        raise Unsupported("pfedhn without init.hypernetwork")
    bias = cfg.get("pfedhn.hn_bias", "on") == "on"
    eta, alpha = cfg["eta"], cfg["alpha"]
    alpha_v = cfg.get("pfedhn.alpha_v", alpha)
    inner = cfg.get("pfedhn.inner_opt", "sgd")
    outer = cfg.get("pfedhn.outer_opt", "sgd")
    clip = cfg.get("pfedhn.clip", "off")
    if inner not in ("sgd", "sgd_momentum_wd") or \
            outer not in ("sgd", "sgd_momentum_wd") or \
            clip not in ("off", "norm"):
        raise Unsupported("pfedhn.inner_opt %r, outer_opt %r, clip %r"
                          % (inner, outer, clip))
    code_local = inner == "sgd_momentum_wd" or clip == "norm"
    if code_local and ocfg != OPT_DEFAULTS:
        raise Unsupported("opt.* with pfedhn.inner_opt / pfedhn.clip")
    c = cfg.get("pfedhn.clip_norm", 50.0)
    hnet = HyperNetwork(hn, bias)
    net = prob.global_model                      # the target model

    def server_optimizer():
        momentum = outer == "sgd_momentum_wd"
        groups = [{"params": list(hnet.hn.parameters()), "lr": alpha}]
        if not bug("pfedhn-embed-frozen"):
            groups.append({"params": [hnet.embeddings.weight],
                           "lr": alpha if bug("pfedhn-embed-alpha")
                           else alpha_v})
        return torch.optim.SGD(
            groups, lr=alpha,
            momentum=cfg.get("pfedhn.outer_momentum", 0.9) if momentum
            else 0.0,
            weight_decay=cfg.get("pfedhn.outer_wd", 1e-3) if momentum
            else 0.0)

    server_opt = server_optimizer()
    optimizers = ClientOptimizers(ocfg)
    rec = Recorder(prob.id)
    for t, rnd in enumerate(prob.rounds):
        if len(rnd["clients"]) != 1:
            raise Unsupported("pfedhn samples one client per round")
        i, batches = rnd["clients"][0], rnd["batches"][0]
        theta = hnet(i)                                  # l. 4
        load_state(net, theta.detach())                  # l. 5: θ̃_i = θ_i
        rec.record("client_begin", "theta", state_flat(net), round=t,
                   client=i, step=0)
        net.train()
        if code_local:       # trainer.py:130-132, a new optimizer a round
            momentum = inner == "sgd_momentum_wd"
            opt = torch.optim.SGD(
                net.parameters(), lr=eta,
                momentum=cfg.get("pfedhn.inner_momentum", 0.9)
                if momentum else 0.0,
                weight_decay=cfg.get("pfedhn.inner_wd", 5e-5)
                if momentum else 0.0)
        else:
            opt = optimizers.get(0, i, net, eta, split_test(prob))
        for s, b in enumerate(batches, start=1):         # l. 6-8
            opt.zero_grad()
            prob.clients[i].loss(net, b).backward()
            if code_local and clip == "norm":
                torch.nn.utils.clip_grad_norm_(net.parameters(), c)
            opt.step()
            rec.step(t, i, s, "theta", state_flat(net))
        if not code_local:
            optimizers.keep(0, i, opt)
        tilde = state_flat(net)
        rec.client_end(t, i, "theta", tilde)
        rec.record("note", "delta_theta", tilde - theta.detach(), round=t,
                   client=i)                              # l. 9
        # l. 10-11: descent on ½‖θ̃_i − h(v_i; φ)‖² (trainer.py:169-181)
        if bug("pfedhn-outer-reset"):
            server_opt = server_optimizer()
        server_opt.zero_grad()
        theta.backward(theta.detach() - tilde)
        if clip == "norm":
            torch.nn.utils.clip_grad_norm_(hnet.parameters(), c)
        server_opt.step()
        rec.record("note", "W_h", hnet.hn.weight, round=t, client=i)
        if bias:
            rec.record("note", "b_h", hnet.hn.bias, round=t, client=i)
        rec.record("note", "embedding", hnet.embeddings.weight[i], round=t,
                   client=i)
    with torch.no_grad():
        for j in range(len(prob.clients)):
            rec.final("v", hnet(j), client=j)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
