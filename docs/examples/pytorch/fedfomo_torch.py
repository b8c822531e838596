#!/usr/bin/python3
"""fedfomo_torch.py: FedFomo in PyTorch, checked by `pflref check`.

Zhang, Sapra, Fidler, Yeung, Alvarez, "Personalized Federated Learning
with First Order Model Optimization", ICLR 2021 (arXiv 2012.08565v3),
Algorithm 1 (lines as in docs/algorithms/fedfomo.md).  Every client keeps
θ_i (its last upload) and φ_i (where its last local training started),
both w⁰, as state_dict copies; the affinity matrix P starts at
fedfomo.P_init.  Round t, each participant i in the round's order:

  l. 1  the downloads: the round's peers[j] (or chosen at run time from
        P's row i with the round's peer_draws: ε-greedy, ε_t = ε₀ − δ t,
        or topM), every model as it stood at the round's start;
  l. 2  the candidates: the downloads, then the own upload
        (fedfomo.self = included); the anchor a = φ_i (pre_train) or θ_i
        (post_train);
  l. 3  r_n = (L_i(a) − L_i(θ_n)) / (‖θ_n − a‖ + fedfomo.distance_eps),
        0 when θ_n equals a (up to fedfomo.equal_rtol per entry);
  l. 4  w = max(r, 0), normalised (all 0 when nothing improves);
  l. 5  φ_i = a + Σ_n w_n (θ_n − a), n ascending (no_positive =
        keep_current: θ_i when nothing improves);
  l. 6  θ_i = local training from φ_i: torch_common.ClientOptimizers,
        slot 0 (plain torch.optim.SGD(lr=η) by default; every opt.*,
        lr.* setting);
  l. 8  P_i += w (P_update = signed_abs_sum: r / max(|Σ r|, 1e-9);
        raw: r).

L_i is the mean loss on the client's validation split (X_val, y_val) when
every client has one, else on its training set; fedfomo.val_loss =
batch_mean the mean of the batch means of fedfomo.val_batch samples.
fedfomo.val_mode: train (the default, PFLlib's copies never put in
eval()): a training-mode forward under torch.no_grad() on a copy of the
model (batchnorm on the validation rows' statistics, its running
statistics thrown away with the copy; a dropout layer takes the
participant's next mask: L_i(a), then each download scored, then the own
upload, then the local steps); eval: model.eval() (running statistics,
dropout off, no mask).  bn.aggregate = parameters_only (the preset
pfllib): the distance and the mixture over parameters() only, φ_i keeping
client i's own running statistics (those of θ_i).  The presets official
(NVlabs) and pfllib (TsingZ0/PFLlib) are spelled out below the spec's own
settings.  Records: docs/validate.md, "fedfomo".

PFLREF_TORCH_CONTROL=fedfomo-affinity-ratio (a negative control,
test_torch_candidates.py): P's row takes the ratios r instead of the
weights w.

usage: fedfomo_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch

import torch_common
from torch_bn import (bn_problem, load_state, parameter_mask, split_test,
                      state_entries, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          lr_factor, main, take_optimizer)

# docs/algorithms/fedfomo.md, "Presets" (pflref list --presets)
PRESETS = {
    "official": {"fedfomo.distance": "l1", "fedfomo.self": "included",
                 "fedfomo.P_update": "signed_abs_sum",
                 "fedfomo.P_init": "own_0.1", "fedfomo.M_counts": "total",
                 "fedfomo.epsilon0": 0.3, "fedfomo.delta": 0.05,
                 "fedfomo.val_mode": "eval"},
    "pfllib": {"fedfomo.distance": "l2", "fedfomo.distance_eps": 1e-5,
               "fedfomo.selection": "topM", "fedfomo.P_update": "raw",
               "fedfomo.P_init": "identity", "fedfomo.anchor": "pre_train",
               "fedfomo.no_positive": "keep_current",
               "fedfomo.self": "ranked", "fedfomo.val_loss": "batch_mean",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
}
DEFAULTS = {"fedfomo.distance": "l2", "fedfomo.distance_eps": 0.0,
            "fedfomo.self": "included", "fedfomo.equal_rtol": 2.0 ** -50,
            "fedfomo.anchor": "pre_train", "fedfomo.no_positive": "anchor",
            "fedfomo.P_update": "weights", "fedfomo.P_init": "zeros",
            "fedfomo.selection": "eps_greedy", "fedfomo.M_counts": "others",
            "fedfomo.epsilon0": 0.3, "fedfomo.delta": 0.05,
            "fedfomo.val_loss": "sample_mean", "fedfomo.val_batch": 0,
            "fedfomo.val_mode": "train", "bn.aggregate": "average"}


def spell_preset(vector_raw):
    """A copy of the vector with the defaults and its preset written out
    below the spec's own hyperparameters and switches."""
    vec = copy.deepcopy(vector_raw)
    alg = vec.get("spec", {}).get("algorithm", {})
    preset = alg.pop("preset", "paper")
    if preset != "paper" and preset not in PRESETS:
        raise Unsupported("preset %r of fedfomo" % preset)
    alg["hyperparameters"] = dict(DEFAULTS, **PRESETS.get(preset, {}),
                                  **alg.get("hyperparameters", {}))
    return vec


class Validation:
    """L_i(θ) for client i (l. 3): a copy of the model with θ loaded, its
    loss on the validation split in training or evaluation mode."""

    def __init__(self, prob):
        self.prob, cfg = prob, prob.cfg
        raws = prob.spec["problem"]["clients"]
        self.val = all("X_val" in c for c in raws)
        self.sets = [(torch.tensor(c["X_val"],
                                   dtype=torch.get_default_dtype()),
                      torch.tensor(c["y_val"]))
                     if self.val else None for c in raws]
        self.in_eval = cfg["fedfomo.val_mode"] == "eval"
        if cfg["fedfomo.val_mode"] not in ("train", "eval"):
            raise Unsupported("fedfomo.val_mode %r" % cfg["fedfomo.val_mode"])
        self.B = int(cfg["fedfomo.val_batch"])
        if cfg["fedfomo.val_loss"] not in ("sample_mean", "batch_mean"):
            raise Unsupported("fedfomo.val_loss %r" % cfg["fedfomo.val_loss"])
        self.batch_mean = cfg["fedfomo.val_loss"] == "batch_mean"

    def __call__(self, i, w):
        net = clone(self.prob.global_model)
        load_state(net, w)
        net.eval() if self.in_eval else net.train()
        data = self.prob.clients[i]
        if self.sets[i] is None:         # the training set (quadratic: f_i)
            with torch.no_grad():
                return data.loss(net, list(range(data.n)))
        kept = data.X, data.y, data.n
        data.X, data.y = self.sets[i]
        data.n = len(data.y)
        try:
            with torch.no_grad():
                n, B = data.n, self.B
                if not (self.batch_mean and 0 < B < n):
                    return data.loss(net, list(range(n)))
                if self.prob.bn or data.passes:
                    raise Unsupported("fedfomo.val_loss = batch_mean with "
                                      "batch normalisation or dropout")
                means = [data.loss(net, list(range(lo, min(lo + B, n))))
                         for lo in range(0, n, B)]
                return sum(means) / len(means)
        finally:
            data.X, data.y, data.n = kept


def choose(row, order, u, slots, eps, top_m):
    """The run-time downloads from P's row: slot s takes the next of the
    draw's order when u_s < ε (exploration), else the next of the order's
    ids by descending P (ties to the lower id), skipping those taken."""
    order = list(order)
    greedy = sorted(order, key=lambda n: (-row[n].item(), n))
    at = {True: 0, False: 0}
    picked = []
    for s in range(min(slots, len(order))):
        explore = (not top_m) and u[s] < eps
        lst = order if explore else greedy
        while lst[at[explore]] in picked:
            at[explore] += 1
        picked.append(lst[at[explore]])
        at[explore] += 1
    return picked


def distance(cfg, entries, diff):
    """‖θ_n − a‖ as fedfomo.distance reads it (diff already masked)."""
    kind = cfg["fedfomo.distance"]
    if kind == "l2":
        return torch.sqrt((diff * diff).sum())
    if kind == "l1":
        return diff.abs().sum()
    if kind == "l2_squared":
        return (diff * diff).sum()
    if kind == "l2_per_tensor_sum":      # Σ over the tensors of ‖·‖₂
        total, at = 0.0, 0
        for v in entries:
            part = diff[at:at + v.numel()]
            total = total + torch.sqrt((part * part).sum())
            at += v.numel()
        return total
    raise Unsupported("fedfomo.distance %r" % kind)


def run(vector_raw):
    """FedFomo on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw))
    prob = bn_problem(raw, "fedfomo")
    prob.optimizers = ClientOptimizers(ocfg)
    cfg = prob.cfg
    N = len(prob.clients)
    rec = Recorder(prob.id)
    L = Validation(prob)
    net0 = prob.global_model
    w0 = state_flat(net0)
    if cfg["bn.aggregate"] not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % cfg["bn.aggregate"])
    keep_own = prob.bn and cfg["bn.aggregate"] == "parameters_only"
    measured = parameter_mask(net0) if keep_own else \
        torch.ones(w0.numel(), dtype=torch.bool)
    entries = state_entries(net0)
    with_self = cfg["fedfomo.self"] == "included"
    ranked = cfg["fedfomo.self"] == "ranked"
    if cfg["fedfomo.self"] not in ("included", "excluded", "ranked"):
        raise Unsupported("fedfomo.self %r" % cfg["fedfomo.self"])
    tau = cfg["fedfomo.equal_rtol"]
    post_train = cfg["fedfomo.anchor"] == "post_train"
    keep_current = cfg["fedfomo.no_positive"] == "keep_current"
    top_m = cfg["fedfomo.selection"] == "topM"
    m_total = cfg["fedfomo.M_counts"] == "total"
    theta = [w0.clone() for _ in range(N)]        # θ_i: the last upload
    phi = [w0.clone() for _ in range(N)]          # φ_i: the last start
    P = torch.zeros(N, N)
    if cfg["fedfomo.P_init"] == "own_0.1":       # (torch.eye has no bf16)
        P.fill_diagonal_(0.1)
    elif cfg["fedfomo.P_init"] == "identity":
        P.fill_diagonal_(1.0)
    elif cfg["fedfomo.P_init"] != "zeros":
        raise Unsupported("fedfomo.P_init %r" % cfg["fedfomo.P_init"])
    trained = [0] * N
    for t, rnd in enumerate(prob.rounds):
        snap = [x.clone() for x in theta]          # the uploads at round start
        peers = rnd.get("peers")
        if peers is None and "peer_draws" in rnd:  # l. 1 at run time
            eps_t = cfg["fedfomo.epsilon0"] - cfg["fedfomo.delta"] * t
            peers = []
            for j, i in enumerate(rnd["clients"]):
                draw = rnd["peer_draws"][j]
                slots = len(draw["u"])
                if m_total and with_self:
                    slots = max(slots - 1, 0)
                order = list(draw["order"]) + ([i] if ranked else [])
                peers.append(choose(P[i], order, draw["u"], slots, eps_t,
                                    top_m))
        for j, i in enumerate(rnd["clients"]):
            a = theta[i] if post_train else phi[i]            # l. 2
            L_a = L(i, a)
            r = torch.zeros(N)
            offered = list(peers[j]) if peers else []
            for n in offered + ([i] if with_self else []):    # l. 3
                diff = torch.where(measured, snap[n] - a,
                                   torch.zeros_like(a))
                dist = distance(cfg, entries, diff)
                bound = torch.where(measured, tau * torch.maximum(
                    snap[n].abs(), a.abs()), torch.zeros_like(a))
                same = bool((diff.abs() <= bound).all())
                if dist > 0 and not same:
                    r[n] = (L_a - L(i, snap[n])) / (
                        dist + cfg["fedfomo.distance_eps"])
            w = torch.clamp(r, min=0.0)                       # l. 4
            if w.sum() > 0:
                w = w / w.sum()
            rec.record("note", "weights", w, round=t, client=i)
            if keep_current and not w.sum() > 0:
                new = snap[i].clone()
            else:                                             # l. 5
                acc = torch.zeros_like(a)
                for n in range(N):
                    if w[n] != 0:
                        acc = acc + w[n] * (snap[n] - a)
                new = a + acc
                if keep_own:              # client i's own r_μ, r_v
                    new = torch.where(measured, new, snap[i])
            phi[i] = new
            rec.record("note", "phi", phi[i], round=t, client=i)
            if "fedfomo-affinity-ratio" in torch_common.CONTROLS or \
                    cfg["fedfomo.P_update"] == "raw":         # l. 8
                P[i] += r
            elif cfg["fedfomo.P_update"] == "signed_abs_sum":
                P[i] += r / max(abs(r.sum().item()), 1e-9)
            elif cfg["fedfomo.P_update"] == "weights":
                P[i] += w
            else:
                raise Unsupported("fedfomo.P_update %r"
                                  % cfg["fedfomo.P_update"])
            rec.record("note", "P", P[i], round=t, client=i)
            net = clone(net0)                                 # l. 6
            load_state(net, phi[i])
            net.train()
            opt = prob.optimizers.get(0, i, net, cfg["eta"] * lr_factor(
                cfg, t, trained=trained[i]), split_test(prob))
            trained[i] += 1
            rec.record("client_begin", "theta", state_flat(net), round=t,
                       client=i, step=0)
            for s, z in enumerate(rnd["batches"][j], start=1):
                opt.zero_grad()
                prob.clients[i].loss(net, z).backward()
                opt.step()
                rec.step(t, i, s, "theta", state_flat(net))
            prob.optimizers.keep(0, i, opt)
            theta[i] = state_flat(net)
            rec.client_end(t, i, "theta", theta[i])
    for i in range(N):
        rec.final("v", theta[i], client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
