#!/usr/bin/python3
"""ifca_torch.py: IFCA in PyTorch, checked by `pflref check`.

Ghosh, Chung, Yin, Ramchandran, "An Efficient Framework for Clustered
Federated Learning", NeurIPS 2020, Algorithm 1 (docs/algorithms/ifca.md):
k cluster models θ_0..θ_{k−1}, each an nn.Module;

  l. 4   every participant i (ascending id) scores each cluster model on
         its whole training set, F_i(θ_j), and picks ĵ = argmin_j (ties to
         the lowest j);
  l. 6   Option I (ifca.mode = gradient, the default): g_i = ∇F_i(θ_ĵ; its
         one scheduled batch), by autograd;
  l. 7   Option II (ifca.mode = model): θ̃_i = τ local steps from a copy of
         θ_ĵ (torch_common.ClientOptimizers, slot 0: plain
         torch.optim.SGD(lr=γ) by default; every opt.*, lr.* setting);
  l. 8   Option I server: θ_j ← θ_j − (γ/|M_t|) Σ_{i: ĵ=j} g_i;
  l. 9   Option II server: θ_j ← mean of the θ̃_i that chose j (kept when
         none did);
then every client, participant or not, reports θ_ĵ with ĵ its pick at the
new models (record partition).

The initial models are init.cluster_models when the spec gives them, else
θ_j = w⁰ + j δ (ifca.init_shift); drawn spreads (ifca.init_sd, GSL's
mt19937) are refused: replay the result's theta0 as init.cluster_models.

The estimate (ifca.estimate_mode): train (the default; the authors' code
never calls eval()) scores a model in a training-mode forward under
torch.no_grad(), on a deep copy so that torch's batchnorm does not move
the cluster model's running statistics (pflref's loss pass leaves them;
docs/algorithms/ifca.md, "The estimate's mode"), a dropout layer taking
the next mask of the client's estimate queue (the schedule's
init_partition_dropout, then per round estimate_dropout and
partition_dropout); eval scores it in model.eval() (batchnorm on θ_j's
running statistics, dropout off).  θ is the state_dict flattened
(torch_bn.state_flat).  Records: docs/validate.md, "ifca".

PFLREF_TORCH_CONTROL=ifca-cluster-divisor (a negative control,
test_torch_candidates.py): Option I divides by the cluster's size |S_j|
instead of |M_t|; ifca-estimate-in-place: the training-mode estimate
scores the cluster model itself, so each scoring moves its batchnorm
running statistics.

usage: ifca_torch.py VECTOR.json -o RESULT.json
"""
import torch

import torch_common
from torch_bn import bn_problem, load_state, split_test, state_flat
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, plan, take_optimizer)


def estimate_queues(prob):
    """Each client's dropout masks for its training-mode scorings, in the
    order it scores (None when the model has no dropout layer)."""
    layers = prob.model.get("layers", [])
    if not any(L["type"] == "dropout" for L in layers):
        return None
    sched = prob.spec["schedule"]
    first = sched.get("init_partition_dropout")
    if first is None:
        raise Unsupported("ifca.estimate_mode = train with dropout and no "
                          "estimate masks")
    queues = [list(q) for q in first]
    for rnd in sched["rounds"]:
        for i, masks in zip(rnd["clients"], rnd.get("estimate_dropout", [])):
            queues[i] += masks
        for i, masks in enumerate(rnd.get("partition_dropout", [])):
            queues[i] += masks
    return queues


class Scorer:
    """F_i(θ_j) on client i's whole training set (l. 4)."""

    def __init__(self, prob):
        self.prob = prob
        self.in_eval = prob.cfg.get("ifca.estimate_mode", "train") == "eval"
        if prob.cfg.get("ifca.estimate_mode", "train") not in ("train",
                                                               "eval"):
            raise Unsupported("ifca.estimate_mode %r"
                              % prob.cfg["ifca.estimate_mode"])
        self.queues = None if self.in_eval else estimate_queues(prob)

    def loss(self, i, model):
        net = clone(model)          # its running statistics left as they are
        if "ifca-estimate-in-place" in torch_common.CONTROLS:
            net = model             # torch's training forward moves them
        net.eval() if self.in_eval else net.train()
        data = self.prob.clients[i]
        if self.queues is None:
            with torch.no_grad():
                return data.loss(net, list(range(data.n))).item()
        # this scoring's masks, the local steps' queue set aside
        kept = data.passes, data.taken
        data.passes, data.taken = [self.queues[i].pop(0)], 0
        try:
            with torch.no_grad():
                return data.loss(net, list(range(data.n))).item()
        finally:
            data.passes, data.taken = kept

    def pick(self, i, models):
        """(the k losses, ĵ = the lowest index of the smallest)."""
        losses = [self.loss(i, m) for m in models]
        return losses, min(range(len(losses)), key=lambda j: (losses[j], j))


def initial_models(prob, k):
    """θ_j^(0): init.cluster_models, or w⁰ + j δ on every entry."""
    init = prob.spec.get("init", {})
    hp = prob.cfg
    given = init.get("cluster_models")
    models = [clone(prob.global_model) for _ in range(k)]
    if given is not None:
        for m, w in zip(models, given):
            load_state(m, torch.tensor(w))
        return models
    if hp.get("ifca.init_sd", 0.0) != 0.0:
        raise Unsupported("drawn initial cluster models (ifca.init_sd; "
                          "replay the result's theta0 as "
                          "init.cluster_models)")
    w0 = state_flat(prob.global_model)
    for j, m in enumerate(models):
        load_state(m, w0 + j * hp.get("ifca.init_shift", 0.0))
    return models


def thetas(models):
    """The record theta: the k models' w, cluster 0 first."""
    return torch.cat([state_flat(m) for m in models])


def run(vector_raw):
    """IFCA on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "ifca")
    prob.optimizers = ClientOptimizers(ocfg)
    cfg = prob.cfg
    mode = cfg.get("ifca.mode", "gradient")
    if mode not in ("gradient", "model"):
        raise Unsupported("ifca.mode %r" % mode)
    if mode == "gradient" and prob.bn:
        raise Unsupported("ifca.mode = gradient with batch normalisation")
    gamma, k = cfg["gamma"], int(cfg["ifca.k"])
    N = len(prob.clients)
    rec = Recorder(prob.id)
    models = initial_models(prob, k)
    scorer = Scorer(prob)
    trained = [0] * N
    part = [scorer.pick(i, models)[1] for i in range(N)]     # before round 0
    for t, rnd in enumerate(prob.rounds):
        if t == 0:
            rec.record("note", "theta0", thetas(models), round=0)
        rec.record("round_begin", "theta", thetas(models), round=t)
        work = plan(rnd)
        sums, count = [None] * k, [0] * k
        for i, batches in work.items():                      # M_t
            losses, j = scorer.pick(i, models)
            rec.record("note", "loss", losses, round=t, client=i)
            rec.record("note", "j_hat", [float(j)], round=t, client=i)
            if mode == "model":                              # l. 7
                net = clone(models[j])
                net.train()
                opt = prob.optimizers.get(0, i, net, gamma * lr_factor(
                    cfg, t, trained=trained[i]), split_test(prob))
                rec.record("client_begin", "theta_local", state_flat(net),
                           round=t, client=i, step=0)
                for s, z in enumerate(batches, start=1):
                    opt.zero_grad()
                    prob.clients[i].loss(net, z).backward()
                    opt.step()
                    rec.step(t, i, s, "theta_local", state_flat(net))
                prob.optimizers.keep(0, i, opt)
                x = state_flat(net)
                rec.client_end(t, i, "theta_local", x)
            else:                                            # l. 6
                net = clone(models[j])
                net.zero_grad()
                prob.clients[i].loss(net, batches[0]).backward()
                x = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
                rec.client_end(t, i, "g", x)
            trained[i] += 1
            sums[j] = x if sums[j] is None else sums[j] + x   # Σ s_ij x_i
            count[j] += 1
        for j in range(k):
            if sums[j] is None:              # no machine chose j: kept
                continue
            if mode == "gradient":                           # l. 8
                div = len(work)
                if "ifca-cluster-divisor" in torch_common.CONTROLS:
                    div = count[j]
                load_state(models[j],
                           state_flat(models[j]) - (gamma / div) * sums[j])
            else:                                            # l. 9
                load_state(models[j], sums[j] / count[j])
        rec.server(t, thetas(models), name="theta")
        part = [scorer.pick(i, models)[1] for i in range(N)]
        rec.record("note", "partition", [float(j) for j in part], round=t)
    for i in range(N):
        rec.final("v", state_flat(models[part[i]]), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
