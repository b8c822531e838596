#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""feddyn_torch.py: FedDyn in PyTorch, checked by `pflref check`.

Acar, Zhao, Matas, Mattina, Whatmough, Saligrama, "Federated Learning Based
on Dynamic Regularization", ICLR 2021 (arXiv 2111.04263v2), Algorithm 1
(lines numbered as in docs/algorithms/feddyn.md), written the way PFLlib's
clientdyn.py writes its loss, as autograd sees it:

  l. 5   θ_k ← torch.optim.SGD(lr=η) from a deep copy of θ^{t−1}, one step
         per scheduled batch b on
             L_k(θ; b) − ⟨θ, G_k⟩ + (α/2)‖θ − θ^{t−1}‖²
         (feddyn.prox = norm_half: (α/2)‖θ − θ^{t−1}‖, PFLlib's torch.norm)
  l. 6   G_k ← G_k − α (θ_k − θ^{t−1})        (G_k = ∇L_k(θ_k), starts at 0)
  l. 10  h ← h − (α/m) Σ_{k∈P_t} (θ_k − θ^{t−1})   (h_sum = literal:
         (Σ θ_k) − θ^{t−1})
  l. 11  θ^t ← mean_{k∈P_t} θ_k − h/α

Records: round_begin "w", client_begin / step / client_end "theta_k", note
"grad_L" (client k), note "h", server "w" (docs/algorithms/feddyn.md).
Presets: pfllib (feddyn.prox = norm_half); official sets a weight decay,
which these candidates refuse (torch_common.settings).

usage: feddyn_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (Problem, Recorder, Unsupported, clone,
                          constant_steps, flat, frozen, load_flat, main, plan)


def prox(cfg, model, ref, alpha):
    """(α/2)‖θ − ref‖², or (α/2)‖θ − ref‖ (norm_half; gradient 0 at
    θ = ref, as torch.norm's)."""
    diff = torch.cat([(p - r).reshape(-1)
                      for p, r in zip(model.parameters(), ref)])
    if cfg["feddyn.prox"] == "squared":
        return alpha / 2 * (diff ** 2).sum()
    if cfg["feddyn.prox"] != "norm_half":
        raise Unsupported("feddyn.prox %r" % cfg["feddyn.prox"])
    norm = torch.linalg.vector_norm(diff)
    return alpha / 2 * norm if norm.item() > 0 else 0.0 * norm


def device_update(prob, rec, t, k, server, G_k, alpha_k, batches):
    """Lines 5-6 for device k: returns θ_k and the new G_k."""
    cfg = prob.cfg
    model = clone(server)                                # from θ^{t−1}
    ref, start = frozen(server), flat(server)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["eta"])
    rec.record("client_begin", "theta_k", model, round=t, client=k, step=0)
    data = prob.clients[k]
    for s, b in enumerate(batches, start=1):             # l. 5
        opt.zero_grad()
        theta = torch.cat([p.reshape(-1) for p in model.parameters()])
        loss = data.loss(model, b) - torch.dot(theta, G_k) \
            + prox(cfg, model, ref, alpha_k)
        loss.backward()
        opt.step()
        rec.step(t, k, s, "theta_k", model)
    rec.client_end(t, k, "theta_k", model)
    theta_k = flat(model)
    return theta_k, G_k - alpha_k * (theta_k - start)    # l. 6


def run(vector_raw):
    """FedDyn on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "feddyn")
    cfg = prob.cfg
    for key, paper in (("feddyn.alpha_k", "uniform"),
                       ("feddyn.h_sum", "differences")):
        cfg.setdefault(key, paper)
    cfg.setdefault("feddyn.prox", "squared")
    constant_steps(cfg, "feddyn")
    alpha, m = cfg["feddyn.alpha"], len(prob.clients)
    n_all = sum(prob.n)
    rec, server = Recorder(prob.id), prob.global_model
    P = flat(server).numel()
    G = [torch.zeros(P) for _ in prob.clients]
    h = torch.zeros(P)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, server)
        prev = flat(server)
        uploads = []
        for k, batches in plan(rnd).items():
            alpha_k = alpha
            if cfg["feddyn.alpha_k"] == "size_scaled":   # the authors' code
                alpha_k = alpha / (prob.n[k] / n_all * m)
            elif cfg["feddyn.alpha_k"] != "uniform":
                raise Unsupported("feddyn.alpha_k %r" % cfg["feddyn.alpha_k"])
            theta_k, G[k] = device_update(prob, rec, t, k, server, G[k],
                                          alpha_k, batches)
            rec.record("note", "grad_L", G[k], round=t, client=k)
            uploads.append(theta_k)
        X = torch.stack(uploads)
        if cfg["feddyn.h_sum"] == "literal":
            S = X.sum(dim=0) - prev
        else:
            S = (X - prev).sum(dim=0)
        h = h - alpha * S / m                            # l. 10
        rec.record("note", "h", h, round=t)
        load_flat(server, X.mean(dim=0) - h / alpha)     # l. 11
        rec.server(t, server)
    rec.final("w", server)
    return rec.result()


if __name__ == "__main__":
    main(run)
