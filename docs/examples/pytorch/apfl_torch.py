#!/usr/bin/python3
"""apfl_torch.py: APFL in PyTorch, checked by `pflref check`.

Deng, Kamani, Mahdavi, "Adaptive Personalized Federated Learning", arXiv
2003.13461, Algorithm 1, as docs/algorithms/apfl.md reads it.  The server
sends w to the round's clients U; client i trains a copy w_i of it and its
own local model v_i (an nn.Module kept across rounds, v_i⁰ = w⁰) with its
mixing weight α_i; per scheduled batch, with the values before the step on
every right-hand side:

  w step   loss(w_i).backward(); optimizer.step()     w_i ← w_i − η ∇f_i(w_i)
  mixture  v̄ = α v_i + (1 − α) w_i, evaluated by functional_call
           (torch.nn.utils.stateless; torch.func's in torch 2) of v_i's
           module on the mixed parameters (apfl.mix = parameter),
           or ŷ(x) = α v_i(x) + (1 − α) w_i(x) (output, FedTorch); w_i the
           copy before its step, or after it (apfl.mix_uses_w = new); α a
           tensor with requires_grad, so one backward of the mixture loss
           gives v's gradient α ∇f_i(v̄) and ∂/∂α together
  v step   optimizer_per.step() on that gradient   v_i ← v_i − η α ∇f_i(v̄)
  α step   (apfl.alpha = adaptive) α ← clip(α − η_α ∂f_i(v̄)/∂α, 0, 1);
           apfl.alpha_rule = fedtorch: once a round, at the first batch,
           α ← clip(α − η (Σ (v_i − w_i)(α g_v + (1 − α) g_w) + 0.02 α), 0, 1)
           at the new iterates, α g_v and (1 − α) g_w the mixture loss's
           gradients in v_i and in w_i

then w = the mean of the w_i over U (apfl.weights = uniform) or their
n_i-weighted mean (samples).  apfl.variant = pfllib (PFLlib's
clientapfl.py, the preset pfllib): per batch the w step, then v's step on
v's own loss (optimizer_per), then α ← clip(α − η_α ((v − w)·(α g_v +
(1 − α) g_w) + 0.02 α), 0, 1) at the new v, w with the two loss gradients
just taken, read from .grad after both steps (clip_grad_norm_ scales .grad
in place, so α sees the clipped gradients); after the last batch
v_i ← (1 − α) w_i + α v_i.

The two optimizers are torch_common.ClientOptimizers' slots 0 (w_i's,
PFLlib's optimizer) and 1 (v_i's, optimizer_per): plain torch.optim.SGD
by default, every opt.* value, their states kept as opt.state says.  Step
sizes η c and η_α c, c the lr.* factor of the client's train()
(lr_factor); apfl.alpha_lr = constant keeps η_α.  Batch normalisation
(pfllib variant; torch_bn.py): each model's own training pass moves its own
running statistics; bn.aggregate = parameters_only: w_i starts with the
buffers client i's copy last left, the end mixture keeps v_i's, the server
the first uploader's.  Records: docs/validate.md, "apfl".

Negative control (test_torch_candidates.py, through
torch_common.CONTROLS): apfl-alpha-no-clip leaves α unprojected;
apfl-pfllib-no-overwrite leaves out PFLlib's end mixture of v_i.

usage: apfl_torch.py VECTOR.json -o RESULT.json
"""
import torch
from torch import nn
from torch.nn.utils.stateless import functional_call

import torch_common
from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, set_parameters, split_test, state_flat)
from torch_common import (ClientOptimizers, MaskedDropout, Recorder,
                          Unsupported, clone, lr_factor, main, plan,
                          spell_preset, take_optimizer)

DEFAULTS = {"apfl.alpha": "fixed", "apfl.mix": "parameter",
            "apfl.mix_uses_w": "old", "apfl.alpha_rule": "paper",
            "apfl.variant": "paper", "apfl.weights": "uniform",
            "apfl.alpha_lr": "decayed", "bn.aggregate": "average"}
# docs/algorithms/apfl.md: FedTorch's training choices, PFLlib's client
PRESETS = {"fedtorch": {"apfl.mix": "output", "apfl.mix_uses_w": "new",
                        "apfl.alpha_rule": "fedtorch"},
           "pfllib": {"apfl.variant": "pfllib", "apfl.weights": "samples",
                      "apfl.alpha": "adaptive", "lr.count": "trainings",
                      "apfl.alpha_lr": "constant",
                      "bn.aggregate": "parameters_only"}}
FEDTORCH_DECAY = 0.02          # FedTorch's and PFLlib's + 0.02 α


class ParameterMix(nn.Module):
    """The model at v̄ = a v + (1 − a) w: v's module called on the mixed
    parameters (its own dropout layers take the pass's masks); `w` the
    other model's parameters as tensors (with or without grad)."""

    def __init__(self, v, w_params, a):
        super().__init__()
        self.v, self.a = v, a
        self.names = [n for n, _ in v.named_parameters()]
        self.w_params = w_params

    def mixed(self):
        return {n: self.a * p + (1 - self.a) * q for n, p, q in
                zip(self.names, self.v.parameters(), self.w_params)}

    @property
    def w(self):                  # the quadratic model's loss reads .w
        return self.mixed()["w"]

    def forward(self, x):
        return functional_call(self.v, self.mixed(), (x,))


class OutputMix(nn.Module):
    """ŷ(x) = a v(x) + (1 − a) w(x) (FedTorch's mixing of outputs)."""

    def __init__(self, v, w, a):
        super().__init__()
        self.v, self.w_net, self.a = v, w, a

    def forward(self, x):
        return self.a * self.v(x) + (1 - self.a) * self.w_net(x)


def clip01(x):
    if "apfl-alpha-no-clip" in torch_common.CONTROLS:   # a control
        return x
    return min(max(x, 0.0), 1.0)


def dot(us, vs):
    return float(sum((u * v).sum() for u, v in zip(us, vs)))


def run(vector_raw):
    """APFL on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "apfl", PRESETS))
    prob = bn_problem(raw, "apfl")
    cfg = dict(DEFAULTS)
    cfg.update(prob.cfg)
    for key, ok in (("apfl.alpha", ("fixed", "adaptive")),
                    ("apfl.mix", ("parameter", "output")),
                    ("apfl.mix_uses_w", ("old", "new")),
                    ("apfl.alpha_rule", ("paper", "fedtorch")),
                    ("apfl.variant", ("paper", "pfllib")),
                    ("apfl.weights", ("uniform", "samples")),
                    ("apfl.alpha_lr", ("decayed", "constant")),
                    ("bn.aggregate", ("average", "parameters_only"))):
        if cfg[key] not in ok:
            raise Unsupported("%s %r" % (key, cfg[key]))
    unknown = sorted(k for k in cfg if k.startswith("apfl.")
                     and k not in DEFAULTS)
    if unknown:                  # a switch this example does not know
        raise Unsupported(", ".join(unknown))
    pfllib = cfg["apfl.variant"] == "pfllib"
    adaptive = cfg["apfl.alpha"] == "adaptive"
    fedtorch = cfg["apfl.alpha_rule"] == "fedtorch"
    output = cfg["apfl.mix"] == "output" and prob.model["kind"] != "quadratic"
    model = prob.global_model
    if prob.bn and not pfllib:
        raise Unsupported("batch normalisation in the mixture (apfl.variant "
                          "= paper)")
    if output and any(isinstance(m, MaskedDropout) for m in model.modules()):
        raise Unsupported("dropout with apfl.mix = output")
    eta0 = cfg["eta"]
    eta_alpha0 = cfg.get("eta_alpha", eta0)
    optimizers = ClientOptimizers(ocfg)
    scope = split_test(prob)
    rec = Recorder(prob.id)
    v = [clone(model) for _ in prob.clients]               # v_i⁰ = w⁰
    alpha = [float(cfg["alpha"])] * len(prob.clients)
    trained = [0] * len(prob.clients)
    keep = prob.bn and cfg["bn.aggregate"] == "parameters_only"
    mine = [clone(model) for _ in prob.clients] if keep else None

    def paper_step(k, s, b, w_k, v_k, opt_w, opt_v, eta, eta_alpha):
        data = prob.clients[k]
        a = alpha[k]
        w_old = clone(w_k)
        opt_w.zero_grad()
        data.loss(w_k, b).backward()                       # w step
        opt_w.step()
        w_mix = w_k if cfg["apfl.mix_uses_w"] == "new" else w_old
        a_t = torch.tensor(a, requires_grad=True)
        opt_v.zero_grad()
        w_mix.zero_grad(set_to_none=True)
        if output:
            mix = OutputMix(v_k, w_mix, a_t)
        else:
            mix = ParameterMix(v_k, list(w_mix.parameters()), a_t)
        data.loss(mix, b).backward()                       # at v̄
        g_w = [torch.zeros_like(p) if p.grad is None else p.grad.clone()
               for p in w_mix.parameters()]                # (1 − α) g_w
        g_v = [p.grad.clone() for p in v_k.parameters()]   # α g_v
        w_k.zero_grad(set_to_none=True)
        opt_v.step()                                       # v step
        rec.step(prob_round[0], k, s, "w_local", state_flat(w_k))
        rec.step(prob_round[0], k, s, "v", state_flat(v_k))
        if not adaptive:
            return
        if not fedtorch:
            a_new = a - eta_alpha * float(a_t.grad)
        elif s == 1:
            diff = [pv.detach() - pw.detach() for pv, pw in
                    zip(v_k.parameters(), w_k.parameters())]
            push = dot(diff, [a * gv + (1 - a) * gw
                              for gv, gw in zip(g_v, g_w)])
            a_new = a - eta * (push + FEDTORCH_DECAY * a)
        else:
            a_new = a
        alpha[k] = clip01(a_new)
        rec.record("note", "alpha", [alpha[k]], round=prob_round[0],
                   client=k, step=s)

    def pfllib_step(k, s, b, w_k, v_k, opt_w, opt_v, eta, eta_alpha):
        data = prob.clients[k]
        a = alpha[k]
        opt_w.zero_grad()
        data.loss(w_k, b).backward()                       # optimizer
        opt_w.step()
        opt_v.zero_grad()
        data.loss(v_k, b).backward()                       # optimizer_per
        opt_v.step()
        # alpha_update() reads .grad after both steps, as PFLlib's
        # clientapfl.py does: the loss gradients as clip_grad_norm_ left
        # them (it scales .grad in place; decay and momentum do not touch it)
        g_w = [p.grad.clone() for p in w_k.parameters()]
        g_v = [p.grad.clone() for p in v_k.parameters()]
        rec.step(prob_round[0], k, s, "w_local", state_flat(w_k))
        rec.step(prob_round[0], k, s, "v", state_flat(v_k))
        if not adaptive:
            return
        diff = [pv.detach() - pw.detach() for pv, pw in
                zip(v_k.parameters(), w_k.parameters())]
        push = dot(diff, [a * gv + (1 - a) * gw for gv, gw in zip(g_v, g_w)])
        alpha[k] = clip01(a - eta_alpha * (push + FEDTORCH_DECAY * a))
        rec.record("note", "alpha", [alpha[k]], round=prob_round[0],
                   client=k, step=s)

    prob_round = [0]
    for t, rnd in enumerate(prob.rounds):
        prob_round[0] = t
        rec.round_begin(t, state_flat(model))
        local = {}
        for k, batches in plan(rnd).items():
            c = lr_factor(cfg, t, trained=trained[k])      # lr.*
            trained[k] += 1
            eta = eta0 * c
            eta_alpha = (eta_alpha0 if cfg["apfl.alpha_lr"] == "constant"
                         else eta_alpha0 * c)
            if keep:                                       # set_parameters
                w_k = mine[k]
                set_parameters(w_k, model)
            else:
                w_k = clone(model)
            v_k = v[k]
            w_k.train()
            v_k.train()
            rec.record("client_begin", "w_local", state_flat(w_k), round=t,
                       client=k, step=0)
            rec.record("client_begin", "v", state_flat(v_k), round=t,
                       client=k, step=0)
            opt_w = optimizers.get(0, k, w_k, eta, scope)
            opt_v = optimizers.get(1, k, v_k, eta, scope)
            step = pfllib_step if pfllib else paper_step
            for s, b in enumerate(batches, start=1):
                step(k, s, b, w_k, v_k, opt_w, opt_v, eta, eta_alpha)
            optimizers.keep(0, k, opt_w)
            optimizers.keep(1, k, opt_v)
            a = alpha[k]
            if pfllib and "apfl-pfllib-no-overwrite" not in \
                    torch_common.CONTROLS:     # v ← (1 − α) w + α v
                if keep:
                    with torch.no_grad():
                        for pv, pw in zip(v_k.parameters(),
                                          w_k.parameters()):
                            pv.copy_((1 - a) * pw + a * pv)
                else:
                    load_state(v_k, (1 - a) * state_flat(w_k)
                               + a * state_flat(v_k))
            rec.client_end(t, k, "w_local", state_flat(w_k))
            rec.client_end(t, k, "v", state_flat(v_k))
            if not pfllib:
                rec.record("note", "v_bar", a * state_flat(v_k)
                           + (1 - a) * state_flat(w_k), round=t, client=k)
            local[k] = w_k
        U = sorted(local)
        if U:
            if cfg["apfl.weights"] == "samples":
                total = sum(prob.n[k] for k in U)
                coef = {k: prob.n[k] / total for k in U}
            else:
                coef = {k: 1.0 / len(U) for k in U}
            load_state(model, sum(coef[k] * state_flat(local[k])
                                  for k in U))
            if keep:                       # the first received model's
                put_buffers(model, copy_buffers(local[first_uploader(rnd,
                                                                     U)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    for k, v_k in enumerate(v):
        rec.final("v", state_flat(v_k), client=k)
    rec.final("alpha", alpha)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
