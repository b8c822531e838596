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
Records as docs/validate.md §4 fedpac lists them.  The mlp vectors (the
presets official, official_run and pfllib too).
Client optimizers (opt.*): the two torch.optim.SGD objects above take
opt.momentum, opt.dampening, opt.nesterov and opt.weight_decay, built anew
in every client update as the authors' (JianXu95/FedPAC methods/fedpac.py
:194-195, :220-221); other opt.* settings (Adam, clipping, a decay scope,
a lifetime other than reset) are not taken here (Unsupported).

usage: fedpac_torch.py VECTOR.json -o RESULT.json
"""
import copy
import itertools

import torch

from torch_common import (OPT_DEFAULTS, Problem, Recorder, Unsupported,
                          flat, load_flat, main, plan)

# the opt.* settings this example takes (the rest must stay at defaults)
OPT_TAKEN = ("opt.momentum", "opt.dampening", "opt.nesterov",
             "opt.weight_decay")

PRESETS = {
    "official": {"fedpac.distance": "mse",
                 "fedpac.alpha_small": "renormalised",
                 "fedpac.missing": "own_start"},
    "pfllib": {"fedpac.distance": "mse", "fedpac.alpha_small": "raw",
               "fedpac.centroid_weights": "uniform"},
    "official_run": {"fedpac.distance": "mse",
                     "fedpac.alpha_small": "renormalised",
                     "fedpac.missing": "own_start",
                     "opt.momentum": 0.5, "opt.weight_decay": 0.0005},
}


def sgd(params, lr, ocfg):
    """One of the client update's two torch.optim.SGD objects."""
    return torch.optim.SGD(params, lr=lr, momentum=ocfg["opt.momentum"],
                           dampening=ocfg["opt.dampening"],
                           nesterov=ocfg["opt.nesterov"] == "on",
                           weight_decay=ocfg["opt.weight_decay"])


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


def client_update(prob, rec, t, i, body, head, batches, cbar, own, ocfg):
    cfg, data = prob.cfg, prob.clients[i]
    net = torch.nn.Sequential(*copy.deepcopy(list(body)), copy.deepcopy(head))
    K, d = head.out_features, head.in_features
    y_all = data.y.long()
    n_k, mu, s2 = class_means(net[:-1], data.X, y_all, K)
    p = n_k / len(y_all)
    V = float((p * s2 - p ** 2 * (mu ** 2).sum(1)).sum()) / len(y_all)
    h = (p[:, None] * mu).reshape(-1)
    rec.record("client_begin", "v", net, round=t, client=i, step=0)
    rec.record("note", "V", [V], round=t, client=i)
    rec.record("note", "h", h, round=t, client=i)
    own_c = mu.clone() if own else None
    opt_head = sgd(net[-1].parameters(), cfg["fedpac.eta_phi"], ocfg)
    opt_body = sgd(net[:-1].parameters(), cfg["eta"], ocfg)
    scale = 1.0 / d if cfg.get("fedpac.distance") == "mse" else 1.0
    for s, b in enumerate(batches, start=1):
        idx = torch.tensor(b, dtype=torch.long)
        x, y = data.X[idx], y_all[idx]
        rep = net[:-1](x)
        loss = torch.nn.functional.cross_entropy(net[-1](rep), y)
        opt = opt_head if s <= cfg["fedpac.tau_phi"] else opt_body
        if opt is opt_body:
            align = rep.new_zeros(())
            for r, k in enumerate(y.tolist()):
                c = cbar.get(k, own_c[k] if own_c is not None else None)
                if c is not None:
                    align = align + ((rep[r] - c) ** 2).sum() * scale
            loss = loss + cfg["fedpac.lambda"] * align / len(b)
        opt.zero_grad()
        loss.backward()
        opt.step()
        rec.step(t, i, s, "v", net)
    rec.client_end(t, i, "v", net)
    n_k, mu, _ = class_means(net[:-1], data.X, y_all, K)
    rec.record("note", "C", mu, round=t, client=i)
    rec.record("note", "n_C", n_k, round=t, client=i)
    return net, (V, h), (n_k, mu)


def run(vector_raw):
    """FedPAC on a golden vector; returns its pflref-result/1 dict."""
    raw = copy.deepcopy(vector_raw)
    alg = raw.get("spec", {}).get("algorithm", {})
    if alg.get("preset") in PRESETS:        # its switches, spelled out
        alg["switches"] = dict(PRESETS[alg.pop("preset")],
                               **alg.get("switches", {}))
    ocfg = dict(OPT_DEFAULTS)               # the opt.* keys, taken out
    for part in ("hyperparameters", "switches"):
        for k in [k for k in alg.get(part, {}) if k.startswith("opt.")]:
            ocfg[k] = alg[part].pop(k)
    other = [k for k in OPT_DEFAULTS
             if k not in OPT_TAKEN and ocfg[k] != OPT_DEFAULTS[k]]
    if other:
        raise Unsupported("client optimizer %s (this example's SGD takes "
                          "%s)" % (", ".join(other), ", ".join(OPT_TAKEN)))
    prob = Problem(raw, "fedpac")
    if prob.model["kind"] != "mlp":
        raise Unsupported("a %s model (this example builds the mlp)"
                          % prob.model["kind"])
    cfg = prob.cfg
    if cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule %r" % cfg["lr.schedule"])
    small = cfg.get("fedpac.alpha_small", "exact")
    eps = cfg.get("fedpac.alpha_eps", 1e-3)
    rec, model = Recorder(prob.id), prob.global_model
    heads = [copy.deepcopy(model[-1]) for _ in prob.clients]
    cbar, N = {}, len(prob.clients)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        ids = sorted(rnd["clients"])
        m_t = sum(prob.n[i] for i in ids)
        own = cfg.get("fedpac.missing") == "own_start" and t > 0
        nets, stats, cents, theta = {}, {}, {}, None
        for i, batches in plan(rnd).items():
            nets[i], stats[i], cents[i] = client_update(
                prob, rec, t, i, model[:-1], heads[i], batches, cbar, own,
                ocfg)
            th = flat(nets[i][:-1]) * (prob.n[i] / m_t)
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
            load_flat(heads[i], phi)
        load_flat(model[:-1], theta)
        rec.server(t, model)
    rec.final("w", model)
    for i in range(N):
        rec.final("v", flat(model[:-1]).tolist() + flat(heads[i]).tolist(),
                  client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
