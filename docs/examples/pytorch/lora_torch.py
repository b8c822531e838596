#!/usr/bin/python3
"""lora_torch.py: federated low-rank adapters in PyTorch, checked by
`pflref check`: personal adapters, FFA-LoRA, naive FedAvg-LoRA, HetLoRA.

LoRA (Hu et al., ICLR 2022, arXiv 2106.09685v2, eq. (3), §4.1): a targeted
weight W₀ (k × d; a conv2d weight as O × (C κ κ), PEFT's reading) becomes
W₀ + s B A with A (r × d), B (k × r), s = α / r; W₀ and every bias stay
frozen (requires_grad False).  Here the adapter is a
torch.nn.utils.parametrize parametrization of the layer's weight (the
module LoRA below, holding the nn.Parameters lora_A and lora_B): the
layer's forward sees the merged weight, so autograd gives
∂L/∂A = s Bᵀ G and ∂L/∂B = s G Aᵀ at the step's start, G = ∂L/∂W.
The methods (docs/algorithms/lora.md, lines 1-4 of its box):
  personal  each client trains its own A_i, B_i; nothing is averaged;
  ffa       FFA-LoRA (Sun et al., ICLR 2024): A frozen and common, the
            round's clients start from the server's B and it averages B
            (lora.weights: n_k / Σ n_j or 1/m);
  fedavg    both trained, both averaged the same way;
  hetlora   HetLoRA (Cho et al., EMNLP 2024; spec notes §2): client k
            starts from the server's adapter cut to its rank r_k (the
            ranks beyond are zeros), adds λ ‖B_t‖_F ‖A_t‖_F of the tail
            ranks ⌊γ r_k⌋ … r_k − 1 to its loss when λ > 0 and ⌊γ r_k⌋ ≥
            r_min, keeps the cut rank when the squared tail product fell
            over its training, and the server averages the zero-padded
            adapters with p_k = ‖B_k A_k‖_F / Σ_j ‖B_j A_j‖_F
            (hetlora.weights; uniform when every product is 0); s = 1, or
            α / r_max with hetlora.scaling = alpha.
Each client keeps its own copy of the frozen base (its own module): a
batchnorm layer's running statistics move in its training forwards and
never leave it (only the adapters are exchanged); the server's model keeps
init.w's.  The local steps go through torch_common.ClientOptimizers over
the adapter parameters alone (opt.*: momentum, Nesterov, decay, Adam,
clipping, the state's lifetime); HetLoRA cuts the optimizer's buffers to
the client's rank with the adapter.  Records: docs/validate.md, "lora"
(q: per target, lora_A then lora_B flattened, in block order).

usage: lora_torch.py VECTOR.json -o RESULT.json
"""
import math

import torch
from torch import nn
from torch.nn.utils import parametrize

import torch_common
from torch_bn import bn_problem
from torch_common import (BLOCKS, ClientOptimizers, Recorder, Unsupported,
                          clone, layer_blocks, main, take_optimizer)


# Negative controls (test_torch_candidates.py sets torch_common.CONTROLS):
# lora-ffa-trains-a (FFA-LoRA's A trained and averaged like B),
# lora-scale-alpha (s = α, not α / r), hetlora-no-truncate (a client starts
# from the whole server adapter, not cut to its rank), hetlora-state-kept
# (the optimizer's buffers not cut with the adapter).
def bug(name):
    """True when the negative control NAME is on."""
    return name in torch_common.CONTROLS


class LoRA(nn.Module):
    """The parametrization W₀ ↦ W₀ + s B A (eq. (3)) of one layer's
    weight, with lora_A (r × d) and lora_B (k × r) as its parameters;
    a conv2d weight O × C × κ × κ is the matrix O × (C κ κ)."""

    def __init__(self, weight, r, s):
        super().__init__()
        k, d = weight.shape[0], weight[0].numel()
        self.lora_A = nn.Parameter(torch.zeros(r, d))
        self.lora_B = nn.Parameter(torch.zeros(k, r))
        self.scaling = s

    def forward(self, W0):
        return W0 + self.scaling * (self.lora_B @ self.lora_A).view(W0.shape)


def target_names(prob, net):
    """The torch parameter names of the adapted weights, in block order:
    lora.targets (all, head, input) or init.lora_targets by name (a
    block, or a layer's name meaning its weight)."""
    model = prob.model
    kind = model["kind"]
    if kind == "layers":
        blocks = {p: (blk, grp) for p, (blk, _, grp)
                  in layer_blocks(model).items() if p.endswith(".weight")}
    elif kind in ("linear", "softmax", "mlp"):
        blocks = {p: v for p, v in BLOCKS[kind].items()
                  if v[0] in ("w", "W", "W1", "W2")}
    else:
        raise Unsupported("lora on a %s model" % kind)
    named = prob.spec.get("init", {}).get("lora_targets")
    which = prob.cfg.get("lora.targets", "all")
    if named is not None:
        have = {blk for blk, _ in blocks.values()}
        named = {n if n in have else n + ".weight" for n in named}
    out = []
    for pname, _ in net.named_parameters():
        if pname not in blocks:
            continue
        block, groups = blocks[pname]
        if named is not None:
            if block not in named:
                continue
        elif which in ("head", "input") and which not in groups:
            continue
        elif which not in ("all", "head", "input"):
            raise Unsupported("lora.targets %r" % which)
        out.append(pname)
    return out


class ClientModel:
    """One client's copy of the model: the frozen base (its own
    batchnorm statistics) with LoRA parametrizations on the targets;
    `adapters` holds them (the parameters its optimizer steps), `layout`
    the base's state_dict entries in pflref's order (num_batches_tracked
    left out) for the merged w."""

    def __init__(self, base, targets, r, s):
        self.net = net = clone(base)
        self.layout = [k for k in net.state_dict()
                       if not k.endswith("num_batches_tracked")]
        for p in net.parameters():
            p.requires_grad_(False)                  # W₀, biases frozen
        mods = []
        for pname in targets:
            owner, attr = (pname.rsplit(".", 1) if "." in pname
                           else ("", pname))
            layer = net.get_submodule(owner) if owner else net
            lora = LoRA(getattr(layer, attr), r, s)
            parametrize.register_parametrization(layer, attr, lora)
            mods.append(lora)
        self.adapters = nn.ModuleList(mods)

    def merged(self):
        """w = the base's state with W₀ + s B A at the targets, flat."""
        parts = []
        with torch.no_grad():
            for key in self.layout:
                owner, attr = (key.rsplit(".", 1) if "." in key
                               else ("", key))
                mod = self.net.get_submodule(owner) if owner else self.net
                parts.append(getattr(mod, attr).detach().reshape(-1))
        return torch.cat(parts).clone()

    def q(self):
        """The adapter vector: per target lora_A, then lora_B, flattened."""
        return torch.cat([torch.cat([m.lora_A.detach().reshape(-1),
                                     m.lora_B.detach().reshape(-1)])
                          for m in self.adapters]).clone()

    def load_q(self, q):
        at = 0
        with torch.no_grad():
            for m in self.adapters:
                for p in (m.lora_A, m.lora_B):
                    p.copy_(q[at:at + p.numel()].reshape(p.shape))
                    at += p.numel()


def truncate(adapters, rank):
    """HetLoRA: the ranks ≥ rank cut off (zero padding)."""
    with torch.no_grad():
        for m in adapters:
            m.lora_A[rank:] = 0.0
            m.lora_B[:, rank:] = 0.0


def truncate_state(opt, adapters, rank):
    """HetLoRA: the optimizer's buffers of the ranks ≥ rank cut with the
    adapter (a carried momentum must not move the zero padding)."""
    if bug("hetlora-state-kept"):
        return
    with torch.no_grad():
        for m in adapters:
            for p, rows in ((m.lora_A, True), (m.lora_B, False)):
                for buf in opt.opt.state.get(p, {}).values():
                    if not torch.is_tensor(buf) or buf.shape != p.shape:
                        continue             # Adam's step count
                    if rows:
                        buf[rank:] = 0.0
                    else:
                        buf[:, rank:] = 0.0


def tail(adapters, cut, rank):
    """Per target ‖B_t‖_F ‖A_t‖_F over the tail ranks cut … rank − 1,
    with autograd: the regulariser's terms; the pruning test sums their
    squares."""
    return [torch.linalg.vector_norm(m.lora_B[:, cut:rank])
            * torch.linalg.vector_norm(m.lora_A[cut:rank]) for m in adapters]


def sparsity(adapters):
    """‖S_k‖_F, S_k = B_k A_k over the targets (squares summed)."""
    with torch.no_grad():
        return math.sqrt(sum(float(((m.lora_B @ m.lora_A) ** 2).sum())
                             for m in adapters))


def run(vector_raw):
    """The lora algorithm on a golden vector; its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "lora")
    cfg = prob.cfg
    if cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule under lora (η is constant)")
    if "bn.aggregate" in cfg:
        raise Unsupported("bn.aggregate under lora")
    if prob.model.get("bn"):
        raise Unsupported("the mlp's own bn flag under lora")
    method = cfg.get("lora.method", "personal")
    if method not in ("personal", "ffa", "fedavg", "hetlora"):
        raise Unsupported("lora.method %r" % method)
    r, alpha, eta = int(cfg["lora.r"]), cfg["lora.alpha"], cfg["eta"]
    if method == "hetlora" and cfg.get("hetlora.scaling", "none") == "none":
        s = 1.0                                  # HetLoRA writes W₀ + B A
    else:
        s = alpha / r                            # loralib's α / r (r_max)
    if bug("lora-scale-alpha"):
        s = alpha
    lam = cfg.get("hetlora.lambda", 0.0)
    gamma = cfg.get("hetlora.gamma", 0.5)
    r_min = int(cfg.get("hetlora.r_min", 1))
    init = prob.spec["init"]
    targets = target_names(prob, prob.global_model)
    N = len(prob.clients)
    server = ClientModel(prob.global_model, targets, r, s)
    q0 = torch.tensor(init["lora"])
    server.load_q(q0)
    clients = [ClientModel(prob.global_model, targets, r, s)
               for _ in range(N)]
    rank = [int(x) for x in init.get("lora_ranks", [r] * N)]
    for i, c in enumerate(clients):
        c.load_q(q0)
        truncate(c.adapters, rank[i])
    if method == "ffa" and not bug("lora-ffa-trains-a"):
        for c in clients:                        # FFA-LoRA: A fixed
            for m in c.adapters:
                m.lora_A.requires_grad_(False)
    optimizers = ClientOptimizers(ocfg)
    rec = Recorder(prob.id)
    for t, rnd in enumerate(prob.rounds):
        ids = rnd["clients"]
        for i, batches in zip(ids, rnd["batches"]):
            c = clients[i]
            # l. 1: the server's adapter (hetlora: cut to r_i)
            if method != "personal":
                c.load_q(server.q())
                if method == "hetlora" and not bug("hetlora-no-truncate"):
                    truncate(c.adapters, rank[i])
            rec.record("client_begin", "q", c.q(), round=t, client=i,
                       step=0)
            c.net.train()
            opt = optimizers.get(0, i, c.adapters, eta)
            if method == "hetlora":
                truncate_state(opt, c.adapters, rank[i])
            cut = math.floor(gamma * rank[i])
            reg = method == "hetlora" and lam > 0 and cut >= r_min
            if reg:
                with torch.no_grad():
                    before = sum(float(x) ** 2
                                 for x in tail(c.adapters, cut, rank[i]))
            # l. 2: the local steps on the adapter
            for step, b in enumerate(batches, start=1):
                opt.zero_grad()
                loss = prob.clients[i].loss(c.net, b)
                if reg:                          # + Σ λ ‖B_t‖ ‖A_t‖
                    loss = loss + lam * sum(tail(c.adapters, cut, rank[i]))
                loss.backward()
                opt.step()
                rec.step(t, i, step, "q", c.q())
            # l. 3: self-pruning when the tail product fell
            if reg:
                with torch.no_grad():
                    after = sum(float(x) ** 2
                                for x in tail(c.adapters, cut, rank[i]))
                if after < before:
                    rank[i] = cut
                    truncate(c.adapters, cut)
                    truncate_state(opt, c.adapters, cut)
            optimizers.keep(0, i, opt)
            if method == "hetlora":
                rec.record("note", "rank", [rank[i]], round=t, client=i)
            rec.client_end(t, i, "q", c.q())
        if method == "personal":
            continue
        # l. 4: the weights and the average
        if method == "hetlora":
            kind = cfg.get("hetlora.weights", "sparsity")
        else:
            kind = cfg.get("lora.weights", "samples")
        p = [0.0] * N
        for i in ids:
            if kind == "sparsity":
                p[i] = sparsity(clients[i].adapters)
            elif kind == "uniform":
                p[i] = 1.0
            elif kind == "samples":
                p[i] = float(prob.n[i])
            else:
                raise Unsupported("weights %r" % kind)
        Z = sum(p[i] for i in ids)
        for i in ids:
            p[i] = p[i] / Z if Z > 0 else 1.0 / len(ids)
        rec.record("note", "weights", p, round=t)
        new = sum(p[i] * clients[i].q() for i in ids)
        if method == "ffa" and not bug("lora-ffa-trains-a"):
            # B averaged, the common A kept (not averaged copies of it)
            keep = server.q()
            at = 0
            for m in server.adapters:
                a = m.lora_A.numel()
                new[at:at + a] = keep[at:at + a]
                at += a + m.lora_B.numel()
        server.load_q(new)
        rec.server(t, server.q(), name="q")
        rec.server(t, server.merged())
    rec.final("w", server.merged())
    for i, c in enumerate(clients):
        rec.final("v", c.merged(), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
