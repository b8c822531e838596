#!/usr/bin/python3
"""pfedme_torch.py: pFedMe in PyTorch, checked by `pflref check`.

Dinh, Tran, Nguyen, "Personalized Federated Learning with Moreau
Envelopes", NeurIPS 2020 (arXiv 2006.08848v3), Algorithm 1, lines counted
from "input" = 1 as in docs/algorithms/pfedme.md:

  l. 5   w_{i,0} = w_t
  l. 7   θ ≈ argmin_θ h_i(θ) = f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖²  (eq. (7)):
         K steps of torch.optim.SGD(lr=η_p) on h_i, from θ = w_{i,r}
         (pfedme.theta_start = reset) or the last θ (warm)
  l. 8   w_{i,r+1} = w_{i,r} − ηλ (w_{i,r} − θ)
  l. 10  w_{t+1} = (1 − β) w_t + β Σ_{i∈S^t} c_i w_{i,R},  c_i = 1/S
         (paper) or n_i / Σ_{S^t} n_j (pfedme.weights = samples)

The official code's μ (pfedme.mu) adds (μ/2)‖θ‖² to h_i.  Who trains
(pfedme.train: all N, or only S^t) and the personalised model reported
(pfedme.personal_eval: the last θ, w_{i,R}, or the global w_{t+1}) are
switches; the presets official and pfllib bundle them.  One scheduled batch
is one local round r.  Records: docs/validate.md, "pfedme".

usage: pfedme_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_common import (Problem, Recorder, clone, flat, frozen,
                          load_flat, lr_factor, main, plan, squared_distance,
                          weights)


def client_update(prob, rec, t, i, global_model, batches, theta_start):
    """Lines 5-8 for client i; returns (w_{i,R}, the last θ) as modules.
    θ starts at theta_start: w_t, or w⁰ under pfedme.eval_reset = initial
    the first time the client trains (PFLlib's evaluation defect)."""
    cfg = prob.cfg
    lam, K, mu = cfg["lambda"], int(cfg["K"]), cfg["pfedme.mu"]
    eta = cfg["eta"] * lr_factor(cfg, t)                  # η_t, η_p,t
    local_model = clone(global_model)                    # l. 5: w_{i,0} = w_t
    personal = clone(theta_start)                        # θ's start
    opt = torch.optim.SGD(personal.parameters(),
                          lr=cfg["eta_p"] * lr_factor(cfg, t, "eta_p"))
    rec.record("client_begin", "w_local", local_model, round=t, client=i,
               step=0)
    for r, D in enumerate(batches):                      # l. 6: local round r
        if cfg["pfedme.theta_start"] == "reset":         # θ ← w_{i,r}
            load_flat(personal, flat(local_model))
        w_ir = frozen(local_model)
        for k in range(1, K + 1):                        # l. 7: K inner steps
            opt.zero_grad()
            h = prob.clients[i].loss(personal, D) \
                + lam / 2 * squared_distance(personal, w_ir)
            if mu != 0.0:
                h = h + mu / 2 * sum((p ** 2).sum()
                                     for p in personal.parameters())
            h.backward()
            opt.step()      # θ ← θ − η_p (∇f(θ; D) + λ(θ − w_{i,r}) + μθ)
            rec.step(t, i, r * K + k, "theta", personal)
        with torch.no_grad():                            # l. 8
            for w, th in zip(local_model.parameters(), personal.parameters()):
                w -= eta * lam * (w - th)
        rec.step(t, i, r + 1, "w_local", local_model)
    rec.client_end(t, i, "w_local", local_model)
    rec.client_end(t, i, "theta", personal)
    return local_model, personal


def run(vector_raw):
    """pFedMe on a golden vector; returns its pflref-result/1 dict."""
    prob = Problem(vector_raw, "pfedme")
    cfg, rec, model = prob.cfg, Recorder(prob.id), prob.global_model
    report = cfg["pfedme.personal_eval"]
    v = [flat(model) for _ in prob.clients]              # reported models
    initial = clone(model)                               # w⁰
    untrained = set(range(len(prob.clients))) \
        if cfg["pfedme.eval_reset"] == "initial" else set()
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, model)
        w_R = {}
        for i, batches in plan(rnd).items():             # all N, or S^t
            start = initial if i in untrained else model
            untrained.discard(i)
            local_model, personal = client_update(prob, rec, t, i, model,
                                                  batches, start)
            w_R[i] = flat(local_model)
            if report in ("theta", "local_w"):
                v[i] = flat(personal if report == "theta" else local_model)
        S_t = sorted(rnd.get("selected", rnd["clients"]))  # l. 9
        c = weights(cfg["pfedme.weights"], S_t, prob.n)
        avg = torch.zeros_like(flat(model))
        for i in S_t:
            avg = avg + c[i] * w_R[i]
        beta = cfg["beta"]                               # l. 10
        load_flat(model, (1.0 - beta) * flat(model) + beta * avg)
        rec.server(t, model)
        if report == "global":
            v = [flat(model) for _ in prob.clients]
    rec.final("w", model)
    for i, v_i in enumerate(v):
        rec.final("v", v_i, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
