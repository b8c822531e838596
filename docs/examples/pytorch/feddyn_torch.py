#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""feddyn_torch.py: FedDyn in PyTorch, checked by `pflref check`.

Acar, Zhao, Matas, Mattina, Whatmough, Saligrama, "Federated Learning Based
on Dynamic Regularization", ICLR 2021 (arXiv 2111.04263v2), Algorithm 1
(lines numbered as in docs/algorithms/feddyn.md), written the way PFLlib's
clientdyn.py writes its loss, as autograd sees it:

  l. 5   θ_k ← torch.optim.SGD(lr=η) (opt.*) from a deep copy of θ^{t−1}, one step
         per scheduled batch b on
             L_k(θ; b) − ⟨θ, G_k⟩ + (α/2)‖θ − θ^{t−1}‖²
         (feddyn.prox = norm_half: (α/2)‖θ − θ^{t−1}‖, PFLlib's torch.norm)
  l. 6   G_k ← G_k − α (θ_k − θ^{t−1})        (G_k = ∇L_k(θ_k), starts at 0)
  l. 10  h ← h − (α/m) Σ_{k∈P_t} (θ_k − θ^{t−1})   (h_sum = literal:
         (Σ θ_k) − θ^{t−1})
  l. 11  θ^t ← mean_{k∈P_t} θ_k − h/α

Records: round_begin "w", client_begin / step / client_end "theta_k", note
"grad_L" (client k), note "h", server "w" (docs/algorithms/feddyn.md).
Presets: pfllib (feddyn.prox = norm_half, lr.count = trainings); official
(feddyn.alpha_k = size_scaled and torch.optim.SGD's weight_decay = 1e-3:
the optimizer steps on l. 5's whole gradient, the linear and proximal
terms included).  lr.* scales η per round (each device's own trainings
under lr.count = trainings); opt.* is a torch_common.ClientOptimizer
(docs/optimizers.md), its state kept as opt.state says.

Batch normalisation (docs/algorithms/feddyn.md, "Batch normalisation",
bn.aggregate): a layer list's batchnorm1d / 2d is torch.nn.BatchNorm1d /
2d (torch_bn.py), the device's model in train() mode, so each step's
forward moves its running_mean, running_var (bn.running = frozen:
momentum 0; bn.running_var = biased: torch_bn's hook).  θ, G_k, h and
every record are in the state_dict's layout; G_k and h range over
parameters() (0 on the buffers), as do ⟨θ, G_k⟩ and the proximal term.
bn.aggregate = average: the device starts from the whole state of θ^{t−1}
and l. 11 averages the buffers with the rest; parameters_only (the preset
pfllib; clientdyn.py set_parameters, serverdyn.py aggregate_parameters):
each device keeps its model, whose parameters() alone are set from
θ^{t−1}, and θ^t's buffers are the round's first uploader's (first_upload,
else the lowest id).

usage: feddyn_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      parameter_mask, put_buffers, set_parameters,
                      split_test, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          frozen, lr_factor, main, plan,
                          take_optimizer)


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


def device_update(prob, rec, t, k, server, G_k, alpha_k, batches, mask,
                  model=None, trained=0):
    """Lines 5-6 for device k: returns θ_k and the new G_k (the state_dict
    layout; mask: its parameter entries).  model: device k's own module
    under bn.aggregate = parameters_only, else None (a copy of θ^{t−1});
    trained: the rounds k trained in before (lr.count = trainings)."""
    cfg = prob.cfg
    if model is None:
        model = clone(server)                            # from θ^{t−1}
    else:                                                # parameters only
        set_parameters(model, server)
    model.train()
    ref, start = frozen(server), state_flat(server)
    opt = prob.optimizers.get(0, k, model, cfg["eta"] * lr_factor(
        cfg, t, trained=trained), split_test(prob))
    rec.record("client_begin", "theta_k", state_flat(model), round=t,
               client=k, step=0)
    data = prob.clients[k]
    for s, b in enumerate(batches, start=1):             # l. 5
        opt.zero_grad()
        theta = torch.cat([p.reshape(-1) for p in model.parameters()])
        loss = data.loss(model, b) - torch.dot(theta, G_k[mask]) \
            + prox(cfg, model, ref, alpha_k)
        loss.backward()
        opt.step()
        rec.step(t, k, s, "theta_k", state_flat(model))
    prob.optimizers.keep(0, k, opt)
    rec.client_end(t, k, "theta_k", state_flat(model))
    theta_k = state_flat(model)
    return theta_k, G_k - alpha_k * (theta_k - start) * mask   # l. 6


def run(vector_raw):
    """FedDyn on a golden vector; returns its pflref-result/1 dict."""
    raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(raw, "feddyn")
    prob.optimizers = ClientOptimizers(ocfg)
    trained = [0] * len(prob.clients)
    cfg = prob.cfg
    for key, paper in (("feddyn.alpha_k", "uniform"),
                       ("feddyn.h_sum", "differences")):
        cfg.setdefault(key, paper)
    cfg.setdefault("feddyn.prox", "squared")
    alpha, m = cfg["feddyn.alpha"], len(prob.clients)
    n_all = sum(prob.n)
    rec, server = Recorder(prob.id), prob.global_model
    P = state_flat(server).numel()
    mask = parameter_mask(server)
    agg = cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    # parameters_only: each device's own model (w⁰'s buffers at first)
    own = ([clone(server) for _ in prob.clients]
           if prob.bn and agg == "parameters_only" else None)
    G = [torch.zeros(P) for _ in prob.clients]
    h = torch.zeros(P)
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(server))
        prev = state_flat(server)
        uploads = []
        for k, batches in plan(rnd).items():
            alpha_k = alpha
            if cfg["feddyn.alpha_k"] == "size_scaled":   # the authors' code
                alpha_k = alpha / (prob.n[k] / n_all * m)
            elif cfg["feddyn.alpha_k"] != "uniform":
                raise Unsupported("feddyn.alpha_k %r" % cfg["feddyn.alpha_k"])
            theta_k, G[k] = device_update(prob, rec, t, k, server, G[k],
                                          alpha_k, batches, mask,
                                          own[k] if own else None,
                                          trained[k])
            trained[k] += 1
            rec.record("note", "grad_L", G[k], round=t, client=k)
            uploads.append(theta_k)
        X = torch.stack(uploads)
        if cfg["feddyn.h_sum"] == "literal":
            S = X.sum(dim=0) - prev
        else:
            S = (X - prev).sum(dim=0)
        h = h - alpha * S * mask / m                     # l. 10
        rec.record("note", "h", h, round=t)
        load_state(server, X.mean(dim=0) - h / alpha)    # l. 11
        if own and uploads:      # deepcopy(uploaded_models[0])'s buffers
            first = first_uploader(rnd, plan(rnd))
            put_buffers(server, copy_buffers(own[first]))
        rec.server(t, state_flat(server))
    rec.final("w", state_flat(server))
    return rec.result()


if __name__ == "__main__":
    main(run)
