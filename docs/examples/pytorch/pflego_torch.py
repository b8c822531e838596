#!/usr/bin/python3
"""pflego_torch.py: PFLEGO in PyTorch, checked by `pflref check`.

Nikoloutsopoulos, Koutsopoulos, Titsias, "Personalized Federated Learning
with Exact Stochastic Gradient Descent", arXiv 2202.09848, one round as
docs/algorithms/pflego.md numbers its nine steps.  The model is split into
a shared body θ (every layer before the last nn.Linear) and a personal
head W_i (that last nn.Linear); the spec's split must be exactly the head.
Round t, I clients, r = |I_t| of them sampled; each i ∈ I_t in ascending id,
τ = its number of scheduled batches (each the full data in index order):

  step 3   Φ_i = body(X_i) at θ_t, once, under torch.no_grad() (the cache)
  step 4   τ − 1 cheap head steps on Φ_i: loss(head(Φ_i)).backward();
           opt.step(), the client's head optimizer at step size β
           (torch_common.ClientOptimizers slot 0 over the head alone:
           plain SGD by default, any opt.* value, its state kept as
           opt.state says)
  step 5   the joint gradient at (W̃_i, θ_t): one forward and one
           backward through the whole net, G_i on the head, g_i on the body
  step 6   W_i ← W̃_i − ρ (I/r) G_i (× α_i = N_i/N with pflego.head_step
           = exact_alpha), by hand: the last head step stays plain
  step 8   ĝ = (I/r) Σ a_i g_i (a_i = N_i/N, theta_weights = global; or
           N_i / Σ_{I_t} N_j, sampled_normalised), then the server's
           optimizer over the body: torch.optim.SGD(lr=ρ) (pflego.server =
           sgd) or torch.optim.Adam(lr=ρ, betas=(0.9, 0.999), eps=1e-8)
           (adam: JAX optimizers.adam, the authors' code), one step a round
  step 9   the unsampled clients keep W_i

lr.schedule multiplies ρ and β of round t alike (lr_factor).  Records
(docs/validate.md, "pflego"): round_begin w = (θ_t, the initial head),
client_begin / step w_local, note g (the joint gradient), client_end v,
note body_passes [1, 1], note g_hat, server w.  Final: w, v per client.

Negative control (test_torch_candidates.py; PFLREF_TORCH_CONTROL, read
through torch_common.CONTROLS): pflego-no-ip-factor drops the
inverse-probability factor I/r from the head step and from ĝ.

usage: pflego_torch.py VECTOR.json -o RESULT.json
"""
import torch
from torch import nn

import torch_common
from torch_common import (ClientOptimizers, Problem, Recorder, Unsupported,
                          flat, is_personal, load_flat, lr_factor, main,
                          plan, spell_preset, take_optimizer)

DEFAULTS = {"pflego.head_step": "seed", "pflego.theta_weights": "global",
            "pflego.server": "sgd"}


def batch_loss(client, out):
    """The client's mean loss on its outputs `out` for all its samples
    (in index order), as torch_common.Client.loss takes it."""
    y = client.y
    if client.loss_name == "cross_entropy":
        return nn.functional.cross_entropy(out, y.long())
    r = out.squeeze(1) - y
    if client.loss_name == "squared":
        return (r ** 2).mean()
    return 0.5 * (r ** 2).mean()


def run(vector_raw):
    """PFLEGO on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "pflego", {}))
    prob = Problem(raw, "pflego")
    cfg = dict(DEFAULTS, **prob.cfg)
    model = prob.model
    if model["kind"] not in ("mlp", "layers") or model.get("bn"):
        raise Unsupported("pflego on a %s model (the mlp and layer lists)"
                          % model["kind"])
    net = prob.global_model
    if not isinstance(net[-1], nn.Linear) or any(
            isinstance(m, torch_common.MaskedDropout) for m in net.modules()):
        raise Unsupported("pflego needs a layer list ending in dense, "
                          "without dropout")
    last = {id(p) for p in net[-1].parameters()}
    if not cfg["split"] or any(
            is_personal(model, name, cfg["split"]) != (id(p) in last)
            for name, p in net.named_parameters()):
        raise Unsupported("pflego with a split other than the head: %r"
                          % cfg["split"])
    for key, ok in (("pflego.server", ("sgd", "adam")),
                    ("pflego.head_step", ("seed", "exact_alpha")),
                    ("pflego.theta_weights", ("global",
                                              "sampled_normalised"))):
        if cfg[key] not in ok:
            raise Unsupported("%s %r" % (key, cfg[key]))
    unknown = sorted(k for k in cfg if k.startswith("pflego.")
                     and k not in DEFAULTS and k != "pflego.beta")
    if unknown:                  # a switch this example does not know
        raise Unsupported(", ".join(unknown))
    body, head = net[:-1], net[-1]
    I = len(prob.clients)
    n = prob.n
    alpha = [n_i / sum(n) for n_i in n]                   # α_i = N_i / N
    heads = [[p.detach().clone() for p in head.parameters()]
             for _ in prob.clients]                       # W_i⁰ from w⁰
    head0 = [p.detach().clone() for p in head.parameters()]
    body_params = list(body.parameters())
    rho0, beta0 = cfg["rho"], cfg["pflego.beta"]
    if cfg["pflego.server"] == "adam":
        server_opt = torch.optim.Adam(body_params, lr=rho0,
                                      betas=(0.9, 0.999), eps=1e-8)
    else:
        server_opt = torch.optim.SGD(body_params, lr=rho0)
    optimizers = ClientOptimizers(ocfg)
    rec = Recorder(prob.id)

    def put_head(values):
        with torch.no_grad():
            for p, v in zip(head.parameters(), values):
                p.copy_(v)

    for t, rnd in enumerate(prob.rounds):
        c_t = lr_factor(cfg, t)                            # ρ and β alike
        rho, beta = rho0 * c_t, beta0 * c_t
        work = plan(rnd)
        S_t = sorted(work)
        scale = I / len(S_t) if S_t else 1.0
        if "pflego-no-ip-factor" in torch_common.CONTROLS:
            scale = 1.0                                    # a control
        put_head(head0)
        rec.round_begin(t, flat(net))
        g_body = {}
        for i in S_t:
            data = prob.clients[i]
            full = list(range(data.n))
            if any(list(b) != full for b in work[i]):
                raise Unsupported("pflego needs full batches in index order")
            tau = len(work[i])
            put_head(heads[i])                             # x = (θ_t, W_i)
            rec.record("client_begin", "w_local", flat(net), round=t,
                       client=i, step=0)
            with torch.no_grad():                          # step 3
                Phi = body(data.X)
            opt = optimizers.get(0, i, head, beta,
                                 personal=lambda name: True)
            for s in range(1, tau):                        # step 4
                opt.zero_grad()
                batch_loss(data, head(Phi)).backward()
                opt.step()
                rec.step(t, i, s, "w_local", flat(net))
            optimizers.keep(0, i, opt)
            net.zero_grad(set_to_none=True)                # step 5
            batch_loss(data, net(data.X)).backward()
            g = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
            rec.record("note", "g", g, round=t, client=i, step=tau)
            step = rho * scale * (alpha[i] if cfg["pflego.head_step"]
                                  == "exact_alpha" else 1.0)
            with torch.no_grad():                          # step 6
                for p in head.parameters():
                    p.sub_(step * p.grad)
            rec.step(t, i, tau, "w_local", flat(net))
            heads[i] = [p.detach().clone() for p in head.parameters()]
            rec.client_end(t, i, "v", flat(net))
            rec.record("note", "body_passes", [1.0, 1.0], round=t, client=i)
            g_body[i] = [p.grad.detach().clone() for p in body_params]
            net.zero_grad(set_to_none=True)
        if cfg["pflego.theta_weights"] == "global":
            a = {i: alpha[i] for i in S_t}
        else:
            m = sum(n[i] for i in S_t)
            a = {i: n[i] / m for i in S_t}
        put_head(head0)
        g_hat = [scale * sum(a[i] * g_body[i][q] for i in S_t)
                 for q in range(len(body_params))] if S_t else \
            [torch.zeros_like(p) for p in body_params]
        for p, gh in zip(body_params, g_hat):
            p.grad = gh.clone()
        rec.record("note", "g_hat", torch.cat(
            [gh.reshape(-1) for gh in g_hat]
            + [torch.zeros_like(p).reshape(-1) for p in head.parameters()]),
            round=t)
        for grp in server_opt.param_groups:                # step 8
            grp["lr"] = rho
        server_opt.step()
        server_opt.zero_grad(set_to_none=True)
        rec.server(t, flat(net))
    put_head(head0)
    rec.final("w", flat(net))
    w_T = flat(net)
    for i in range(I):
        put_head(heads[i])
        rec.final("v", flat(net), client=i)
    load_flat(net, w_T)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
