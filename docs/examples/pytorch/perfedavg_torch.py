#!/usr/bin/python3
"""perfedavg_torch.py: Per-FedAvg in PyTorch, checked by `pflref check`.

Fallah, Mokhtari, Ozdaglar, "Personalized Federated Learning with
Theoretical Guarantees: A Model-Agnostic Meta-Learning Approach", NeurIPS
2020 (arXiv 2002.07948), Algorithm 1 and its FO and HF variants, as
docs/algorithms/perfedavg.md reads them.  Round k, each user i of A_k in
ascending id trains one model (a copy of w_k); local step t takes the
three consecutive batches 3(t−1), 3(t−1)+1, 3(t−1)+2 of its list as D, D′,
D″, the way PFLlib's clientperavg.py steps one module:

    saved = the parameters (w)
    loss(D).backward();  w̃ = w − α ∇f(w; D)        (by hand; or the
                         optimizer's step at lr α, perfedavg.opt_steps = both)
    loss(D′).backward(); q = ∇f(w̃; D′)
    the parameters ← saved                          (the buffers stay moved)
    exact: Hq = torch.autograd.grad(∇f(w; D″)·q, w) (double backward)
    hf:    Hq ≈ [∇f(w + δq; D″) − ∇f(w − δq; D″)] / (2δ)
    fo:    no Hq
    p.grad = q − α Hq;  the client optimizer's step at lr β

The client optimizer is torch_common.ClientOptimizers' slot 0 (plain
torch.optim.SGD by default; every opt.* value; new at each train() call
under opt.state = reset, two a round with perfedavg.calls = two).  Then
w_{k+1} = the uniform (perfedavg.weights = uniform) or n_i-weighted
(samples) mean of the users' state_dicts.  After training, user i's
personalised model is θ_i = w − α ∇f(w; D) on its first post batch, then
θ_i − β ∇f(θ_i; D₂) under perfedavg.eval = alpha_then_beta (plain steps,
α and β undecayed, or as user i's scheduler left them with
perfedavg.eval_lr = decayed).

Step sizes: local step t takes α c and β c, c the lr.* factor of the
train() call (lr_factor; PFLlib's second call a round is one scheduler
step further); lr.scope = no_beta keeps β.  Batch normalisation
(torch_bn.py; an mlp with "bn" is the layer list dense, batchnorm1d,
activation, dense): the one module is in train() mode, so every forward
moves its running statistics (at w on D, at w̃ on D′, the D″ passes);
bn.aggregate = parameters_only (PFLlib): each user's model keeps its own
buffers between rounds and into the personalisation, the server takes the
first uploader's.  Records: docs/validate.md, "perfedavg".

Negative control (test_torch_candidates.py, through
torch_common.CONTROLS): perfedavg-no-restore takes the β step from w̃
(the saved parameters never put back).

usage: perfedavg_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

import torch_common
from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      parameter_mask, put_buffers, set_parameters,
                      split_test, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, spell_preset,
                          take_optimizer)

DEFAULTS = {"perfedavg.variant": "exact", "perfedavg.weights": "uniform",
            "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "one",
            "perfedavg.eval_lr": "initial", "perfedavg.opt_steps": "meta",
            "bn.aggregate": "average"}
# docs/algorithms/perfedavg.md: PFLlib's clientperavg.py / serverperavg.py
PRESETS = {"pfllib": {
    "perfedavg.variant": "fo", "perfedavg.weights": "samples",
    "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "two",
    "lr.count": "trainings", "lr.scope": "no_beta",
    "perfedavg.eval_lr": "decayed", "perfedavg.opt_steps": "both",
    "bn.aggregate": "parameters_only"}}


def mlp_bn_as_layers(vector_raw):
    """A copy of the vector whose mlp with "bn" (docs/models.md, "Batch
    normalisation": nn.BatchNorm1d(h) between the first nn.Linear and the
    activation) is written as the layer list of the same state_dict:
    dense h, batchnorm1d, the activation, dense k."""
    model = vector_raw.get("spec", {}).get("model", {})
    if model.get("kind") != "mlp" or not model.get("bn"):
        return vector_raw
    vec = copy.deepcopy(vector_raw)
    bias = model.get("bias", True)
    layers = [{"type": "dense", "out": model["h"],
               "bias": model.get("hidden_bias", bias)},
              {"type": "batchnorm1d", "eps": model.get("bn_eps", 1e-5),
               "momentum": model.get("bn_momentum", 0.1)}]
    act = model.get("activation", "relu")
    if act != "identity":
        layers.append({"type": act})
    layers.append({"type": "dense", "out": model.get("k", 1), "bias": bias})
    vec["spec"]["model"] = {"kind": "layers", "input": [model["d"]],
                            "layers": layers,
                            "loss": model.get("loss", "cross_entropy")}
    return vec


def factor(cfg, k, trained, call, calls):
    """The lr.* factor of user i's train() call `call` of round k (PFLlib
    calls train() `calls` times a round, its scheduler stepped after
    each)."""
    return lr_factor(cfg, calls * k + call, trained=calls * trained + call)


def grads(params):
    """The parameters' .grad, detached copies (0 where none)."""
    return [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()
            for p in params]


def put(params, values):
    with torch.no_grad():
        for p, v in zip(params, values):
            p.copy_(v)


def run(vector_raw):
    """Per-FedAvg on a golden vector; returns its pflref-result/1 dict."""
    raw = mlp_bn_as_layers(spell_preset(vector_raw, "perfedavg", PRESETS))
    raw, ocfg = take_optimizer(raw)
    prob = bn_problem(raw, "perfedavg")
    cfg = dict(DEFAULTS)
    cfg.update(prob.cfg)
    for key, ok in (("perfedavg.variant", ("exact", "fo", "hf")),
                    ("perfedavg.weights", ("uniform", "samples")),
                    ("perfedavg.eval", ("one_alpha_step", "alpha_then_beta")),
                    ("perfedavg.calls", ("one", "two")),
                    ("perfedavg.eval_lr", ("initial", "decayed")),
                    ("perfedavg.opt_steps", ("meta", "both")),
                    ("lr.scope", ("all", "no_beta")),
                    ("bn.aggregate", ("average", "parameters_only"))):
        if cfg[key] not in ok:
            raise Unsupported("%s %r" % (key, cfg[key]))
    unknown = sorted(k for k in cfg if k.startswith("perfedavg.")
                     and k not in DEFAULTS)
    if unknown:                  # a switch this example does not know
        raise Unsupported(", ".join(unknown))
    if prob.post is None:
        raise Unsupported("a schedule without its post batches")
    if cfg["perfedavg.variant"] == "exact" and \
            torch.get_default_dtype() == torch.bfloat16 and any(
                isinstance(m, torch.nn.Conv2d)
                for m in prob.global_model.modules()):
        # torch 1.13 on the CPU: conv2d's double backward in bfloat16
        # raises (a wrong channel count; without mkldnn,
        # slow_conv_transpose2d has no bfloat16 kernel)
        raise Unsupported("the exact Hessian-vector product through conv2d "
                          "in bfloat16 (torch's conv2d double backward "
                          "fails in bfloat16 on the CPU)")
    alpha0, beta0 = cfg["alpha"], cfg["beta"]
    keep_beta = cfg["lr.scope"] == "no_beta"
    variant = cfg["perfedavg.variant"]
    calls = 2 if cfg["perfedavg.calls"] == "two" else 1
    both = cfg["perfedavg.opt_steps"] == "both"
    optimizers = ClientOptimizers(ocfg)
    scope = split_test(prob)
    model = prob.global_model
    model.train()
    pmask = parameter_mask(model)
    rec = Recorder(prob.id)
    trained = [0] * len(prob.clients)
    keep = prob.bn and cfg["bn.aggregate"] == "parameters_only"
    own = [clone(model) for _ in prob.clients] if keep else None

    def in_layout(vectors):
        """Parameter-shaped tensors as a vector of w's layout (0 at the
        running statistics)."""
        out = torch.zeros(pmask.numel())
        out[pmask] = torch.cat([v.reshape(-1) for v in vectors])
        return out

    def local_update(k, i, net, batches):
        data = prob.clients[i]
        params = list(net.parameters())
        tau = len(batches) // 3
        opt = None
        for t in range(1, tau + 1):
            second = calls == 2 and t > tau // 2
            if t == 1 or (second and t == tau // 2 + 1):   # a train() call
                if opt is not None:
                    optimizers.keep(0, i, opt)
                opt = optimizers.get(0, i, net, beta0, scope)
            c = factor(cfg, k, trained[i], 1 if second else 0, calls)
            alpha = c * alpha0
            beta = beta0 if keep_beta else c * beta0
            D, D1, D2 = batches[3 * t - 3:3 * t]
            saved = [p.detach().clone() for p in params]
            opt.zero_grad()
            data.loss(net, D).backward()                  # at w on D
            if both:                                      # optimizer.step()
                opt.set_lr(alpha)
                opt.step()
            else:
                with torch.no_grad():
                    for p in params:
                        if p.grad is not None:
                            p.sub_(alpha * p.grad)
            rec.step(k, i, t, "w_tilde", state_flat(net))
            opt.zero_grad()
            data.loss(net, D1).backward()                 # at w̃ on D′
            q = grads(params)
            if "perfedavg-no-restore" not in torch_common.CONTROLS:
                put(params, saved)                        # back to w
            d = q
            if variant == "exact":                        # ∇²f(w; D″) q
                loss = data.loss(net, D2)
                g = torch.autograd.grad(loss, params, create_graph=True,
                                        allow_unused=True)
                dot = sum((gj * qj).sum() for gj, qj in zip(g, q)
                          if gj is not None)
                Hq = torch.autograd.grad(dot, params, allow_unused=True)
                Hq = [torch.zeros_like(p) if h is None else h.detach()
                      for p, h in zip(params, Hq)]
            elif variant == "hf":
                delta = cfg["delta"]
                w_now = [p.detach().clone() for p in params]
                ends = []
                for sign in (1.0, -1.0):                  # w ± δq on D″
                    put(params, [w + sign * delta * qj
                                 for w, qj in zip(w_now, q)])
                    opt.zero_grad()
                    data.loss(net, D2).backward()
                    ends.append(grads(params))
                put(params, w_now)
                Hq = [(a - b) / (2.0 * delta) for a, b in zip(*ends)]
            if variant != "fo":
                rec.record("note", "hvp", in_layout(Hq), round=k, client=i,
                           step=t)
                d = [qj - alpha * h for qj, h in zip(q, Hq)]
            opt.zero_grad()
            for p, dj in zip(params, d):
                p.grad = dj.clone()
            opt.set_lr(beta)                              # step(beta=β)
            opt.step()
            rec.step(k, i, t, "w_local", state_flat(net))
        if opt is not None:
            optimizers.keep(0, i, opt)
        return net

    for k, rnd in enumerate(prob.rounds):
        rec.round_begin(k, state_flat(model))
        local = {}
        for i, batches in plan(rnd).items():
            if keep:                       # PFLlib's set_parameters
                net = own[i]
                set_parameters(net, model)
            else:
                net = clone(model)
            net.train()
            rec.record("client_begin", "w_local", state_flat(net), round=k,
                       client=i, step=0)
            local[i] = local_update(k, i, net, batches)
            trained[i] += 1
            rec.client_end(k, i, "w_local", state_flat(local[i]))
        A_k = sorted(local)
        if A_k:
            if cfg["perfedavg.weights"] == "samples":
                total = sum(prob.n[i] for i in A_k)
                coef = {i: prob.n[i] / total for i in A_k}
            else:
                coef = {i: 1.0 / len(A_k) for i in A_k}
            w = sum(coef[i] * state_flat(local[i]) for i in A_k)
            load_state(model, w)
            if keep:                       # deepcopy(uploaded_models[0])
                put_buffers(model, copy_buffers(local[first_uploader(rnd,
                                                                     A_k)]))
        rec.server(k, state_flat(model))
    rec.final("w", state_flat(model))

    rounds = len(prob.rounds)
    for i, batches in enumerate(prob.post):           # the personalisation
        alpha, beta = alpha0, beta0
        if cfg["perfedavg.eval_lr"] == "decayed":
            c = factor(cfg, rounds, trained[i], 0, calls)
            alpha = c * alpha0
            beta = beta0 if keep_beta else c * beta0
        theta = clone(model)
        if keep:
            put_buffers(theta, copy_buffers(own[i]))
        theta.train()
        rec.record("client_begin", "theta", state_flat(theta), client=i,
                   step=0, phase="finetune")
        steps = [(alpha, batches[0])]
        if cfg["perfedavg.eval"] == "alpha_then_beta":
            steps.append((beta, batches[1] if len(batches) > 1
                          else batches[0]))
        for s, (lr, b) in enumerate(steps, start=1):
            sgd = torch.optim.SGD(theta.parameters(), lr=lr)
            sgd.zero_grad()
            prob.clients[i].loss(theta, b).backward()
            sgd.step()
            rec.step(None, i, s, "theta", state_flat(theta),
                     phase="finetune")
        rec.record("client_end", "theta", state_flat(theta), client=i,
                   phase="finetune")
        rec.final("v", state_flat(theta), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
