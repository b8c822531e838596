#!/usr/bin/python3
"""cfl_torch.py: Clustered Federated Learning in PyTorch, checked by
`pflref check`.

Sattler, Müller, Samek, "Clustered Federated Learning: Model-Agnostic
Distributed Multitask Optimization Under Privacy Constraints", IEEE TNNLS
2021 (arXiv 1910.01991), Algorithm 5 (the weight-update form) with the
bipartition of Algorithm 1 (docs/algorithms/cfl.md):

  every client i, from its own model θ_i:
      Δθ_i = SGD_n(θ_i; its batches, η) − θ_i
  every cluster c (in the order of its smallest client):
      Δθ_c = mean_{i∈c} Δθ_i (cfl.cluster_weights = samples: |D_i|/|D_c|)
      if ‖Δθ_c‖ < ε₁ and max_{i∈c} ‖Δθ_i‖ > ε₂ (and |c| ≥ 2, |c| ≥
      cfl.min_cluster_size, t ≥ cfl.warmup):
          α_{i,j} = ⟨Δθ_i, Δθ_j⟩ / (‖Δθ_i‖ ‖Δθ_j‖) (0 for a zero update,
          1 on the diagonal)
          c₁, c₂ = Algorithm 1 (merge the clusters of the pairs in the
          order of decreasing α, stable row-major, until two are left;
          cfl.bipartition = complete_linkage: the notebook's complete
          linkage on −α)
          split when γ_max < √((1 − α_max^cross) / 2)
  θ_i ← θ_i + Δθ_{c(i)} over the new clusters.

Each client's model is an nn.Module of its own (a deep copy of w⁰); its
local training is a copy of it stepped by torch_common.ClientOptimizers
(slot 0: plain torch.optim.SGD(lr=η) by default; every opt.*, lr.*
setting); θ is the state_dict flattened (torch_bn.state_flat: a
batchnorm layer's running statistics travel with the parameters, in
train() mode every step moves them, as torch does).  The similarities,
norms and splits are torch tensor operations on the updates.  Records:
docs/validate.md, "cfl".

PFLREF_TORCH_CONTROL=cfl-parent-update (a negative control,
test_torch_candidates.py): a cluster that splits hands its children the
parent's Δθ_c instead of their own mean.

usage: cfl_torch.py VECTOR.json -o RESULT.json
"""
import torch

import torch_common
from torch_bn import bn_problem, load_state, split_test, state_flat
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, take_optimizer)


def local_update(prob, rec, t, i, theta_i, batches):
    """Δθ_i: client i trains a copy of θ_i on its batches (η_t)."""
    model = clone(theta_i)
    model.train()
    opt = prob.optimizers.get(0, i, model, prob.cfg["eta"] * lr_factor(
        prob.cfg, t, trained=t), split_test(prob))
    rec.record("client_begin", "theta", state_flat(model), round=t,
               client=i, step=0)
    for s, z in enumerate(batches, start=1):
        opt.zero_grad()
        prob.clients[i].loss(model, z).backward()
        opt.step()
        rec.step(t, i, s, "theta", state_flat(model))
    prob.optimizers.keep(0, i, opt)
    return state_flat(model) - state_flat(theta_i)


def cosines(U):
    """The members' pairwise cosine similarities (rows of U the updates);
    a zero update is similar to nothing (0), each update to itself (1)."""
    norms = torch.linalg.vector_norm(U, dim=1)
    V = U / torch.where(norms > 0, norms, torch.ones_like(norms))[:, None]
    S = V @ V.T
    zero = norms == 0
    S[zero, :] = 0.0
    S[:, zero] = 0.0
    S.fill_diagonal_(1.0)
    return S.clamp(-1.0, 1.0)


def bipartition_optimal(S):
    """Algorithm 1: the pairs by decreasing similarity (a stable sort in
    row-major order), each merging the clusters of its two members, until
    two clusters are left."""
    m = S.shape[0]
    order = torch.argsort(-S.reshape(-1), stable=True).tolist()
    C = [{a} for a in range(m)]
    for s in order:
        a, b = divmod(s, m)
        touched = [c for c in C if a in c or b in c]
        C = [c for c in C if a not in c and b not in c] + [set().union(
            *touched)]
        if len(C) == 2:
            break
    return C


def bipartition_complete(S):
    """Complete linkage on −S: merge the two clusters whose least similar
    pair is the most similar (the first such pair, clusters in the order
    of their smallest member) until two are left."""
    C = [[a] for a in range(S.shape[0])]
    while len(C) > 2:
        best, pair = None, None
        for x in range(len(C)):
            for y in range(x + 1, len(C)):
                link = S[C[x]][:, C[y]].min().item()
                if best is None or link > best:
                    best, pair = link, (x, y)
        x, y = pair
        merged = sorted(C[x] + C[y])
        C = sorted([c for k, c in enumerate(C) if k not in pair] + [merged],
                   key=min)
    return [set(c) for c in C]


def run(vector_raw):
    """CFL on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "cfl")
    prob.optimizers = ClientOptimizers(ocfg)
    cfg = prob.cfg
    eps1, eps2, gmax = cfg["eps1"], cfg["eps2"], cfg["gamma_max"]
    min_size = int(cfg.get("cfl.min_cluster_size", 0))
    warmup = int(cfg.get("cfl.warmup", 0))
    method = cfg.get("cfl.bipartition", "optimal")
    scheme = cfg.get("cfl.cluster_weights", "uniform")
    if method not in ("optimal", "complete_linkage"):
        raise Unsupported("cfl.bipartition %r" % method)
    if scheme not in ("uniform", "samples"):
        raise Unsupported("cfl.cluster_weights %r" % scheme)
    N = len(prob.clients)
    rec = Recorder(prob.id)
    models = [clone(prob.global_model) for _ in range(N)]     # θ_i = w⁰
    clusters = [list(range(N))]

    def mean_update(c, delta):
        if scheme == "samples":
            total = sum(prob.n[i] for i in c)
            return sum((prob.n[i] / total) * delta[i] for i in c)
        return sum(delta[i] for i in c) / len(c)

    for t, rnd in enumerate(prob.rounds):
        work = plan(rnd)
        if sorted(work) != list(range(N)):
            raise Unsupported("cfl trains every client every round")
        delta = {}
        for i in range(N):
            delta[i] = local_update(prob, rec, t, i, models[i], work[i])
            rec.client_end(t, i, "dtheta", delta[i])
        new, parent = [], {}
        for c in clusters:
            d_c = mean_update(c, delta)
            norm_c = torch.linalg.vector_norm(d_c)
            max_i = max(torch.linalg.vector_norm(delta[i]) for i in c)
            rec.record("note", "norm_dtheta_c", [norm_c.item()], round=t,
                       client=c[0])
            rec.record("note", "max_norm_dtheta", [max_i.item()], round=t,
                       client=c[0])
            if not (norm_c < eps1 and max_i > eps2) or len(c) < 2 \
                    or (min_size and len(c) < min_size) or t < warmup:
                new.append(c)
                continue
            S = cosines(torch.stack([delta[i] for i in c]))
            for a, i in enumerate(c):
                rec.record("note", "similarity", S[a], round=t, client=i)
            parts = (bipartition_optimal(S) if method == "optimal"
                     else bipartition_complete(S))
            p1, p2 = sorted((sorted(p) for p in parts), key=min)
            cross = S[p1][:, p2].max()
            c1, c2 = [c[a] for a in p1], [c[a] for a in p2]   # back to ids
            split = bool(gmax < torch.sqrt((1.0 - cross) / 2.0))
            for name, value in (("c1", c1), ("c2", c2),
                                ("alpha_cross", [cross.item()]),
                                ("split", [1.0 if split else 0.0])):
                rec.record("note", name, [float(v) for v in value],
                           round=t, client=c[0])
            if split:
                new += [c1, c2]
                if "cfl-parent-update" in torch_common.CONTROLS:
                    parent[tuple(c1)] = parent[tuple(c2)] = d_c
            else:
                new.append(c)
        clusters = sorted(new, key=min)
        label = {i: k for k, c in enumerate(clusters) for i in c}
        rec.record("note", "partition", [float(label[i]) for i in range(N)],
                   round=t)
        for c in clusters:
            d_c = parent.get(tuple(c))
            if d_c is None:
                d_c = mean_update(c, delta)
            rec.record("note", "dtheta_c", d_c, round=t, client=c[0])
            for i in c:                        # θ_i ← θ_i + Δθ_c
                load_state(models[i], state_flat(models[i]) + d_c)
        for i in range(N):
            rec.client_end(t, i, "v", state_flat(models[i]))
    for i in range(N):
        rec.final("v", state_flat(models[i]), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
