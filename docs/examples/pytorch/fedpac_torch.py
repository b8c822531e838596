#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedpac_torch.py: FedPAC (linear classifier) in PyTorch, checked by
`pflref check`.

Xu, Tong, Huang, "Personalized Federated Learning with Feature Alignment
and Classifier Collaboration", ICLR 2023 (arXiv 2306.11867), Algorithm 1
(lines as in docs/algorithms/fedpac.md):

  l. 5    net = (the global body net[:-1], the client's head net[-1]);
          V_i, h_i from rep = net[:-1](X_i) under torch.no_grad()
  l. 6    the first τ_φ batches: torch.optim.SGD(net[-1], lr=η_φ) on
          cross_entropy(net(x), y)
  l. 7    the rest: torch.optim.SGD(net[:-1], lr=η) on cross_entropy +
          λ · mean over the batch of ‖rep − c_y‖² (÷ d under
          fedpac.distance = mse; no term without a centroid, or the
          client's own centroid at the start under fedpac.missing =
          own_start from round 1)
  l. 8    ĉ_{i,k}: class means of net[:-1](X_i) after training
  l. 11   θ = Σ (n_i / Σ n_j) θ_i; c_k the n_{i,k}-weighted (uniform: plain)
          mean of the ĉ_{i,k}
  l. 13   α_i: every support's closed form Q_SS⁻¹1 / 1ᵀQ_SS⁻¹1, the feasible
          one of least αᵀQα (fedpac.alpha_small: entries ≤ ε dropped, then
          renormalised or not)
  l. 14   φ_i = Σ_j α_ij φ_j (the heads after l. 6)
Records as docs/validate.md §4 fedpac lists them.  The mlp and the layer
lists ending in a dense layer (no dropout); the presets official,
official_run and pfllib (lr.count = trainings: η and η_φ decay with the
client's own updates, PFLlib's one ExponentialLR).
Each client holds its own model (body and classifier, an nn.Module) as
PFLlib's clientPAC does: a round writes the global body into it
(set_parameters), its classifier is its φ_i.
Client optimizers (opt.*, lr.*): two torch_common.ClientOptimizer slots
per client (docs/optimizers.md), as the reference's: slot 0 over the
classifier net[-1] at η_φ for l. 6, slot 1 over the feature extractor
net[:-1] at η for l. 7, each times the round's lr_factor; torch.optim.SGD,
ClassicalSGD, Adam or AdamW, weight decay on all blocks or weights only,
gradient-norm clipping of its own part's gradient.  opt.state = reset
builds both anew in every client update, as the authors' two
torch.optim.SGD (JianXu95/FedPAC methods/fedpac.py :194-195, :220-221);
client keeps them per client: with η_φ = η that is PFLlib's one
self.optimizer per client over the whole model (clientpac.py:33-36,
:53-56; torch keeps its state per parameter tensor and skips a frozen
tensor, whose gradient zero_grad(set_to_none=True) leaves None); server
carries each slot from client to client.  Each phase freezes the other
part (requires_grad False), so no gradient piles up on it.  A split's
decay scope (shared / personal) is refused: FedPAC has no split.

Batch normalisation (docs/algorithms/fedpac.md, "Batch normalisation"):
the batchnorm layers are torch.nn.BatchNorm1d / 2d (torch_bn.py); l. 5's
statistics and l. 8's centroids are eval() forwards under no_grad (on the
running statistics, moving nothing), the steps of l. 6 and l. 7 train()
forwards, each moving r_μ, r_v once (θ frozen in l. 6 or not).  Every
record of a model is its state_dict's values in order.  bn.aggregate =
average: r_μ, r_v are body entries, averaged with θ and written into every
client's model; parameters_only (preset pfllib): set_parameters writes
parameters() only, so each client's model keeps the statistics it last
left, and the server's takes the first uploader's.

usage: fedpac_torch.py VECTOR.json -o RESULT.json
"""
import itertools

import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, require_dense_head, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          flat, load_flat, lr_factor, main, plan, spell_preset,
                          take_optimizer)

PRESETS = {
    "official": {"fedpac.distance": "mse",
                 "fedpac.alpha_small": "renormalised",
                 "fedpac.missing": "own_start"},
    "pfllib": {"fedpac.distance": "mse", "fedpac.alpha_small": "raw",
               "fedpac.centroid_weights": "uniform",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
    "official_run": {"fedpac.distance": "mse",
                     "fedpac.alpha_small": "renormalised",
                     "fedpac.missing": "own_start",
                     "opt.momentum": 0.5, "opt.weight_decay": 0.0005},
}


def receive(net, model, own):
    """set_parameters: the global body into the client's model (its
    classifier stays); with own (bn.aggregate = parameters_only) the
    parameters only, the client's running statistics kept."""
    keep = copy_buffers(net)
    body = state_flat(model[:-1])
    load_state(net[:-1], body)
    if own:
        put_buffers(net, keep)


def class_means(body, X, y, K):
    """(counts K, means K × d, mean squared norms K) of body(X) by class."""
    with torch.no_grad():
        F = body(X)
    n = torch.bincount(y, minlength=K).to(torch.get_default_dtype())
    mu = torch.zeros(K, F.shape[1], dtype=torch.get_default_dtype())
    s2 = torch.zeros(K, dtype=torch.get_default_dtype())
    for k in range(K):
        if n[k] > 0:
            mu[k] = F[y == k].mean(0)
            s2[k] = (F[y == k] ** 2).sum(1).mean()
    return n, mu, s2


def simplex_qp(Q):
    """The QP in float64 whatever the model's dtype (the codes hand it to
    cvxpy as NumPy float64 arrays); α back in the model's dtype."""
    dtype = Q.dtype
    Q = Q.to(torch.float64)
    m = Q.shape[0]
    feasible = []
    for k in range(1, m + 1):
        for S in itertools.combinations(range(m), k):
            idx = torch.tensor(S)
            u = torch.linalg.solve(Q[idx][:, idx],
                                   torch.ones(k, dtype=torch.float64))
            a = torch.zeros(m, dtype=torch.float64)
            a[idx] = u / u.sum()
            if a.min() >= 0:
                feasible.append(a)
    return min(feasible, key=lambda a: float(a @ Q @ a)).to(dtype)


def client_update(prob, rec, t, i, net, batches, cbar, own, c):
    """Client i's round on its model net (the global body written in):
    returns ((V_i, h_i), (n_{i,k}, ĉ_{i,k})); net is trained in place."""
    cfg, data = prob.cfg, prob.clients[i]
    K, d = net[-1].out_features, net[-1].in_features
    y_all = data.y.long()
    net.eval()                                       # l. 5: evaluation
    n_k, mu, s2 = class_means(net[:-1], data.X, y_all, K)
    p = n_k / len(y_all)
    V = float((p * s2 - p ** 2 * (mu ** 2).sum(1)).sum()) / len(y_all)
    h = (p[:, None] * mu).reshape(-1)
    rec.record("client_begin", "v", state_flat(net), round=t, client=i,
               step=0)
    rec.record("note", "V", [V], round=t, client=i)
    rec.record("note", "h", h, round=t, client=i)
    own_c = mu.clone() if own else None
    # slot 0: the classifier's optimizer (l. 6), slot 1: the body's (l. 7)
    opt_head = prob.optimizers.get(0, i, net[-1], cfg["fedpac.eta_phi"] * c)
    opt_body = prob.optimizers.get(1, i, net[:-1], cfg["eta"] * c)
    scale = 1.0 / d if cfg.get("fedpac.distance") == "mse" else 1.0
    net.train()                                      # l. 6-7: training
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], y_all[idx]
        head_phase = s <= cfg["fedpac.tau_phi"]
        for q in net[:-1].parameters():
            q.requires_grad_(not head_phase)
        for q in net[-1].parameters():
            q.requires_grad_(head_phase)
        rep = net[:-1](x)
        loss = torch.nn.functional.cross_entropy(net[-1](rep), y)
        opt = opt_head if head_phase else opt_body
        if not head_phase:
            align = rep.new_zeros(())
            for r, k in enumerate(y.tolist()):
                cen = cbar.get(k, own_c[k] if own_c is not None else None)
                if cen is not None:
                    align = align + ((rep[r] - cen) ** 2).sum() * scale
            loss = loss + cfg["fedpac.lambda"] * align / len(b)
        opt.zero_grad()                   # set_to_none, torch ≥ 2.0's
        loss.backward()
        opt.step()
        rec.step(t, i, s, "v", state_flat(net))
    for q in net.parameters():
        q.requires_grad_(True)
    prob.optimizers.keep(0, i, opt_head)
    prob.optimizers.keep(1, i, opt_body)
    rec.client_end(t, i, "v", state_flat(net))
    net.eval()                                       # l. 8: evaluation
    n_k, mu, _ = class_means(net[:-1], data.X, y_all, K)
    rec.record("note", "C", mu, round=t, client=i)
    rec.record("note", "n_C", n_k, round=t, client=i)
    net.train()
    return (V, h), (n_k, mu)


def run(vector_raw):
    """FedPAC on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(spell_preset(vector_raw, "fedpac", PRESETS))
    prob = bn_problem(raw, "fedpac")
    prob.optimizers = ClientOptimizers(ocfg)
    require_dense_head(prob)
    cfg = prob.cfg
    agg = cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    own_bn = prob.bn and agg == "parameters_only"
    small = cfg.get("fedpac.alpha_small", "exact")
    eps = cfg.get("fedpac.alpha_eps", 1e-3)
    rec, model = Recorder(prob.id), prob.global_model
    nets = [clone(model) for _ in prob.clients]      # each client's model
    trained = [0 for _ in prob.clients]
    cbar, N = {}, len(prob.clients)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        ids = sorted(rnd["clients"])
        m_t = sum(prob.n[i] for i in ids)
        own = cfg.get("fedpac.missing") == "own_start" and t > 0
        stats, cents, theta = {}, {}, None
        for i, batches in plan(rnd).items():
            receive(nets[i], model, own_bn)
            c = lr_factor(cfg, t, trained=trained[i])
            trained[i] += 1
            stats[i], cents[i] = client_update(
                prob, rec, t, i, nets[i], batches, cbar, own, c)
            th = state_flat(nets[i][:-1]) * (prob.n[i] / m_t)
            theta = th if theta is None else theta + th
        num = den = cnt = 0
        for i in ids:
            n_k, mu = cents[i]
            wk = (n_k > 0).to(torch.get_default_dtype()) \
                if cfg.get("fedpac.centroid_weights") == "uniform" else n_k
            num, den = num + wk[:, None] * mu, den + wk
            cnt = cnt + (n_k > 0).to(torch.get_default_dtype())
        cbar = {k: num[k] / den[k] for k in range(len(cnt)) if cnt[k] > 0}
        rec.record("note", "C_bar",
                   torch.stack([cbar.get(k, torch.zeros(num.shape[1],
                                                        dtype=torch.get_default_dtype()))
                                for k in range(len(cnt))]), round=t)
        rec.record("note", "N_bar", cnt, round=t)
        H = torch.stack([stats[j][1] for j in ids])
        V = torch.tensor([stats[j][0] for j in ids], dtype=torch.get_default_dtype())
        Phi = torch.stack([flat(nets[j][-1]) for j in ids])
        phis = {}
        for a, i in enumerate(ids):
            D = H[a] - H
            al = simplex_qp(torch.diag(V) + D @ D.T)
            if small != "exact":
                al = torch.where(al > eps, al, torch.zeros_like(al))
                if small == "renormalised":
                    al = al / al.sum()
            full = torch.zeros(N, dtype=torch.get_default_dtype())
            full[ids] = al
            rec.record("note", "alpha_i", full, round=t, client=i)
            phi = al @ Phi
            rec.record("note", "phi", phi, round=t, client=i)
            phis[i] = phi
        for i in ids:                        # l. 14, after every α_i
            load_flat(nets[i][-1], phis[i])
        load_state(model[:-1], theta)
        if own_bn:                           # a deepcopy of uploaded_models[0]
            put_buffers(model, copy_buffers(nets[first_uploader(rnd, ids)]))
        rec.server(t, state_flat(model))
    rec.final("w", state_flat(model))
    for i in range(N):                       # v_i: w's body, φ_i
        receive(nets[i], model, own_bn)
        rec.final("v", state_flat(nets[i]), client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
