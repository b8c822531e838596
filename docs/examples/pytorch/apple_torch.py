#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""apple_torch.py: APPLE in PyTorch, checked by `pflref check`.

Luo, Wu, "Adapt to Adaptation: Learning Personalization for Cross-Silo
Federated Learning", IJCAI 2022 (arXiv 2110.08394v3), Algorithm 1, every
other core downloaded each round (lines numbered as in
docs/algorithms/apple.md):

  l. 1   every core starts at w0; p_i = p_0 = (n_j / n)_j
  l. 4   client i downloads the cores as the round starts
  l. 6-10  per scheduled batch, one torch.optim.SGD step (param groups:
         its own core at lr η, p_i at lr η_p) on
         ℓ_i(Σ_j p_ij w_j; b) + λ(r)(μ/2)‖p_i − p_0‖², the downloaded
         cores constants; autograd gives ∂/∂w_i = p_ii ∇ℓ and
         ∂/∂p_ij = ⟨w_j, ∇ℓ⟩ + λ(r) μ (p_ij − p_0j)
  λ(r) = (cos(rπ/L) + 1)/2 for r < L, else 0

The switches apple.scheduler, apple.prox, apple.p_init, apple.core_lr,
apple.lambda_round, apple.upload (mixture: the core carried on is the
mixture the last step started from, PFLlib's clientapple.py:77) and
apple.peers (sequential: a later participant downloads the stepped cores
of the earlier ones, serverapple.py:46-47, :84) are followed, and so the
preset pfllib_run.  lr.*: η (N η) and η_p both scaled by round t's factor
(train_APPLE.py:51-52).  apple.order = core_first and apple.p_grad
= block_mean are PFLlib's hand-written updates (clientapple.py:52-66),
written as there: loss.backward() on the mixture, the own core stepped by
η' p_ii g (g the mixture's .grad), then each p_ij by η_p times
⟨w_j, g⟩ or (block_mean) the mean over parameters() of
torch.mean(g ⊙ w_j), with the stepped core under core_first, plus the
prox term's λ μ (p_ij − p_0j) (twice that under apple.prox = full); so
the preset pfllib runs (not with opt.*, which pflref refuses there: Z11).
Records: docs/algorithms/apple.md, "What a run reports".

Batch normalisation (docs/algorithms/apple.md, "Batch normalisation:
bn.aggregate"): a layer list's batchnorm1d / 2d is torch.nn.BatchNorm1d /
2d (torch_bn.py).  Each client keeps its own module (PFLlib's
self.model), in train() mode, whose parameters are set to the step's
mixture Σ_j p_ij w_j (torch.nn.utils.stateless) and whose running
statistics are its own: each step's forward moves them (bn.running =
frozen: momentum 0; bn.running_var = biased: torch_bn's hook).  The cores
and records are in the state_dict's layout; the cores step on
parameters() only (their buffers stay w⁰'s), the note w_p carries the
client's own buffers.  Only bn.aggregate = parameters_only (the presets
pfllib, pfllib_run) runs with batch normalisation; average, which would
mix the cores' statistics, is refused as pflref refuses it (G6).

The client optimizer (opt.*; docs/algorithms/apple.md, "The client
optimizer"): one torch_common.ClientOptimizer over (w_i, p_i), as the
authors' script builds one torch.optim.SGD (momentum 0.9 there) over the
core and ps: the core's blocks (its parameters() one tensor each, cut from
the flat core) in the groups of η (or N η), p_i as the tensor ps in the
groups of η_p.  It follows every opt.* setting: torch.optim.SGD (momentum,
dampening, Nesterov), ClassicalSGD (opt.momentum_form = classical: v ← μ v
− η d, each group its own η), Adam, AdamW; coupled or decoupled weight
decay (θ ← θ (1 − η λ) in each group at its own η); opt.decay_scope =
weights, the no-decay group of the core's biases (and batchnorm γ, β),
ps decayed with the weights; clip_grad_norm_ over both groups' gradients
(the core's and p_i's, one norm) before the step; opt.state = reset builds
it for every client update, client and server restore it from a kept
state_dict (ClientOptimizers, slot 0).  A decay scope on a split (shared,
personal) is refused as pflref refuses it (Z12).  Negative control
apple-clip-core (torch_common.CONTROLS): clip_grad_norm_ over the core's
blocks alone, p_i's gradient left out of the norm and unclipped.

usage: apple_torch.py VECTOR.json -o RESULT.json
"""
import math

import torch
from torch.nn.utils import stateless

import torch_common

from torch_bn import bn_problem, parameter_mask, state_flat
from torch_common import (OPT_DEFAULTS, ClientOptimizers, Recorder,
                          Unsupported, clone, lr_factor, main,
                          take_optimizer)

DEFAULTS = {"apple.scheduler": "cosine", "apple.prox": "half",
            "apple.p_init": "samples", "apple.order": "joint",
            "apple.p_grad": "inner", "apple.core_lr": "eta",
            "apple.lambda_round": "current", "apple.upload": "core",
            "apple.peers": "snapshot"}
# PFLlib's APPLE.train() as shipped (docs/algorithms/apple.md, preset
# pfllib_run): the preset pfllib plus clientapple.py:77 (the next round's
# core is the mixture the last step started from) and serverapple.py:46-47,
# :84 (the clients train in turn on the cores' objects, stepped in place)
PFLLIB_RUN = {"apple.p_init": "uniform", "apple.order": "core_first",
              "apple.p_grad": "block_mean", "apple.core_lr": "n_eta",
              "apple.lambda_round": "previous", "apple.upload": "mixture",
              "apple.peers": "sequential", "bn.aggregate": "parameters_only"}


def scheduler(cfg, t):
    """λ of round t."""
    r = t
    if cfg["apple.lambda_round"] == "previous":
        if t == 0:
            return 1.0
        r = t - 1
    L = int(cfg["apple.L"])
    if r >= L:
        return 0.0
    if cfg["apple.scheduler"] == "exponential":
        return 0.001 ** (r / L)
    return (math.cos(math.pi * r / L) + 1.0) / 2.0


def unflat(module, w):
    """The module's parameters as a name → tensor dict cut from flat w
    (views that keep w's autograd history)."""
    out, o = {}, 0
    for name, p in module.named_parameters():
        out[name] = w[o:o + p.numel()].view_as(p)
        o += p.numel()
    return out


def p_data_grad(cfg, module, core, g):
    """The data part of ∂ℒ/∂p_ij for the core's parameters `core` and the
    mixture's gradient g (both over parameters(), flat): ⟨core, g⟩, or
    (apple.p_grad = block_mean, clientapple.py:58-64) the mean over the
    parameter tensors of torch.mean(g ⊙ core)."""
    if cfg["apple.p_grad"] == "inner":
        return torch.dot(core, g)
    means = [torch.mean(gb * cb) for gb, cb in
             zip(unflat(module, g).values(), unflat(module, core).values())]
    return sum(means) / len(means)


def hand_step(cfg, module, i, w_i, p, held, p0, lam, eta_w, eta_p,
              grad_loss):
    """PFLlib's step (clientapple.py:52-66) on the parameter vectors:
    returns (the new core, the new p_i, the mixture w_p the step started
    from); grad_loss(w_p) gives the batch loss's gradient at w_p."""
    N = len(held)
    w_p = sum(p[j] * (w_i if j == i else held[j]) for j in range(N))
    g = grad_loss(w_p)
    kappa = 2.0 if cfg["apple.prox"] == "full" else 1.0
    core_first = cfg["apple.order"] == "core_first"
    new_core = w_i - eta_w * (p[i] * g)                # :55-56
    grads = torch.stack([
        p_data_grad(cfg, module, new_core if (j == i and core_first)
                    else (w_i if j == i else held[j]), g)
        + kappa * lam * cfg["apple.mu"] * (p[j] - p0[j])
        for j in range(N)])
    return new_core, p - eta_p * grads, w_p            # :66


def optimizer_vector(net, core, p_i):
    """The tensors the client optimizer steps, in a module that names
    them: a copy of the client's module whose parameters() are the core's
    blocks (cut from the flat core, each its own leaf, as torch holds the
    core's tensors) plus one more parameter, ps = p_i.  Its names give
    opt.decay_scope = weights its no-decay group (the core's biases,
    batchnorm γ, β), and ps the groups of η_p."""
    holder = clone(net)
    with torch.no_grad():
        for q, v in zip(holder.parameters(), unflat(holder, core).values()):
            q.copy_(v)
    holder.register_parameter("ps", torch.nn.Parameter(p_i.clone()))
    blocks = [q for name, q in holder.named_parameters() if name != "ps"]
    return holder, blocks, holder.ps


def client_update(prob, rec, t, i, held, p_i, p0, lam, batches, net=None,
                  mask=None):
    """Lines 6-10 for client i: returns (its core, p_i, the mixture w_p the
    last step started from, None without steps).  held: the cores as the
    client holds them (flat, the state_dict layout); net: the client's
    module (its running statistics); mask: the parameter entries of a
    flat model.  lr.*: η and η_p times round t's factor (the authors'
    lr_net * decay ** r and lr_coef * decay ** r, train_APPLE.py:51-52);
    η_p's alone under lr.scope = eta_p."""
    cfg = prob.cfg
    N = len(held)
    core_state = held[i]
    held = [h[mask] for h in held]                     # parameters()
    net.train()
    c_t = lr_factor(cfg, t)
    eta_w = cfg["eta"] * (N if cfg["apple.core_lr"] == "n_eta" else 1) * c_t
    eta_p = cfg["eta_p"] * lr_factor(cfg, t, "eta_p")   # (lr.scope)
    last = None

    def as_state(w):          # the core with its (never stepped) buffers
        out = core_state.clone()
        out[mask] = w.detach()
        return out

    if cfg["apple.order"] != "joint" or cfg["apple.p_grad"] != "inner":
        w_i, p = held[i].clone(), p_i.clone()
        rec.record("client_begin", "w_i", as_state(w_i), round=t, client=i,
                   step=0)
        for s, b in enumerate(batches, start=1):
            def grad_loss(w_p, b=b):
                w_p = w_p.detach().requires_grad_(True)
                prob.clients[i].loss_of(net, w_p, b).backward()
                return w_p.grad
            w_i, p, last = hand_step(cfg, net, i, w_i, p, held, p0, lam,
                                     eta_w, eta_p, grad_loss)
            rec.step(t, i, s, "w_i", as_state(w_i))
            rec.step(t, i, s, "p_i", p)
        return (as_state(w_i), p.detach().clone(),
                None if last is None else as_state(last))
    holder, blocks, p = optimizer_vector(net, held[i], p_i)

    def core():               # the flat core, autograd into its blocks
        return torch.cat([q.reshape(-1) for q in blocks])

    coef = lam * cfg["apple.mu"] * (1.0 if cfg["apple.prox"] == "full"
                                    else 0.5)
    # the core's groups at eta_w, ps's at eta_p; opt.state's lifetime
    opt = prob.optimizers.get(0, i, holder, eta_w,
                              lambda name: name == "ps", eta_p)
    rec.record("client_begin", "w_i", as_state(core()), round=t, client=i,
               step=0)
    for s, b in enumerate(batches, start=1):
        opt.zero_grad()
        w_i = core()
        w_p = sum(p[j] * (w_i if j == i else held[j]) for j in range(N))
        last = w_p.detach().clone()
        loss = prob.clients[i].loss_of(net, w_p, b)
        loss = loss + coef * ((p - p0) ** 2).sum()
        loss.backward()
        ocfg = prob.optimizers.ocfg
        if "apple-clip-core" in torch_common.CONTROLS and \
                ocfg["opt.clip"] == "norm":         # a negative control
            torch.nn.utils.clip_grad_norm_(blocks, ocfg["opt.clip_norm"])
            opt.ocfg = dict(ocfg, **{"opt.clip": "off"})   # step() skips it
        opt.step()
        rec.step(t, i, s, "w_i", as_state(core()))
        rec.step(t, i, s, "p_i", p)
    prob.optimizers.keep(0, i, opt)
    return (as_state(core()), p.detach().clone(),
            None if last is None else as_state(last))


def run(vector_raw):
    """APPLE on a golden vector; returns its pflref-result/1 dict."""
    vector_raw, ocfg = take_optimizer(vector_raw)
    if ocfg["opt.decay_scope"] in ("shared", "personal"):
        raise Unsupported("opt.decay_scope %r: APPLE has no split (pflref "
                          "refuses it: Z12)" % ocfg["opt.decay_scope"])
    alg = vector_raw["spec"]["algorithm"]
    if alg.get("preset") == "pfllib_run":      # its switches, spelled out
        alg.pop("preset")
        alg["switches"] = dict(PFLLIB_RUN, **alg.get("switches", {}))
    plain = all(ocfg.get(k) == v for k, v in OPT_DEFAULTS.items())
    prob = bn_problem(vector_raw, "apple")
    prob.optimizers = ClientOptimizers(ocfg)
    cfg = prob.cfg
    for k, v in DEFAULTS.items():
        cfg.setdefault(k, v)
    if not plain and (cfg["apple.order"] != "joint"
                             or cfg["apple.p_grad"] != "inner"):
        raise Unsupported("opt.* with PFLlib's hand-written updates "
                          "(apple.order, apple.p_grad; pflref: Z11)")
    if prob.bn and cfg.get("bn.aggregate", "average") != "parameters_only":
        raise Unsupported("bn.aggregate %r with batch normalisation (pflref "
                          "refuses it: G6)" % cfg.get("bn.aggregate",
                                                     "average"))
    if cfg["apple.upload"] not in ("core", "mixture") or \
            cfg["apple.peers"] not in ("snapshot", "sequential"):
        raise Unsupported("apple.upload %r, apple.peers %r"
                          % (cfg["apple.upload"], cfg["apple.peers"]))
    model = prob.global_model
    for c in prob.clients:
        c.loss_of = (lambda module, w, b, c=c: _loss(c, module, w, b))
    rec = Recorder(prob.id)
    w0 = state_flat(model)
    mask = parameter_mask(model)
    N = len(prob.clients)
    nets = [clone(model) for _ in prob.clients]     # each client's model
    n = torch.tensor([float(c.n) for c in prob.clients], dtype=torch.float64)
    p0 = n / n.sum()
    start = (torch.full((N,), 1.0 / N, dtype=torch.float64)
             if cfg["apple.p_init"] == "uniform" else p0.clone())
    cores = [w0.clone() for _ in prob.clients]
    ps = [start.clone() for _ in prob.clients]
    # limited downloads (apple.M): each client's ClientNet keeps a copy of
    # every core; a round's peers[j] are the cores clients[j] downloads
    # (ljaiverson/pFL-APPLE utils/apple.py:34-37 skips the others)
    limited = cfg.get("apple.M") is not None
    stale = cfg.get("apple.stale", "last_download")
    if stale not in ("last_download", "initial"):
        raise Unsupported("apple.stale %r" % stale)
    mine = [[w0.clone() for _ in prob.clients] for _ in prob.clients]
    for t, rnd in enumerate(prob.rounds):
        server = [w.clone() for w in cores]
        lam = scheduler(cfg, t)
        lists = dict(zip(rnd["clients"], rnd["peers"])) \
            if "peers" in rnd else None
        for i, batches in sorted(zip(rnd["clients"], rnd["batches"])):
            held = [server[j] if j != i else cores[i] for j in range(N)]
            if limited:
                for j in range(N):
                    if j != i and (lists is None or j in lists[i]):
                        mine[i][j] = server[j].clone()
                    elif j != i and stale == "initial":
                        mine[i][j] = w0.clone()
                held = [mine[i][j] if j != i else cores[i]
                        for j in range(N)]
            rec.record("note", "lambda", [lam], round=t, client=i)
            cores[i], ps[i], last = client_update(
                prob, rec, t, i, held, ps[i], p0, lam, batches, nets[i],
                mask)
            if cfg["apple.peers"] == "sequential":  # later ones see it
                server[i] = cores[i].clone()        # stepped, in place
            mixture = cfg["apple.upload"] == "mixture" and last is not None
            if mixture:                  # self.model_c = deepcopy(model)
                cores[i] = last
            rec.client_end(t, i, "w_i", cores[i])
            rec.record("note", "p_i", ps[i], round=t, client=i)
            held[i] = cores[i]
            w_p = last if mixture else sum(ps[i][j] * held[j]
                                           for j in range(N))
            w_p = torch.where(mask, w_p, state_flat(nets[i]))  # own r_μ, r_v
            rec.record("note", "w_p", w_p, round=t, client=i)
    for i, w in enumerate(cores):
        rec.final("v", w, client=i)
    return rec.result()


def _loss(client, module, w, b):
    """client's batch loss of the module with its parameters taken from
    the flat w (autograd flows into w)."""
    with stateless._reparametrize_module(module, unflat(module, w)):
        return client.loss(module, b)


if __name__ == "__main__":
    main(run)
