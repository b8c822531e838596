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
switches; the presets official, pfllib and pfllib_run bundle them.  η and
η_p decay by lr.* (lr.scope = eta_p: η_p only; lr.count = trainings: the
client's own trainings before, PFLlib's per-client scheduler).  One scheduled batch
is one local round r.  Records: docs/validate.md, "pfedme".

The client optimizer (opt.*, docs/algorithms/pfedme.md): the torch
optimizer that steps θ on h_i in place of plain SGD (the object that
PFLlib's and the authors' pFedMeOptimizer is), lr = η_p: a
torch_common.ClientOptimizer (torch.optim.SGD, Adam, AdamW, clipping, the
decay forms and scopes of docs/optimizers.md), living as opt.state says:
built in each client update (reset), one per client kept across rounds
(client), or one for all clients (server).  Line 8 stays the
hand-written update of the parameter list w_{i,r}.  Refused:
opt.decay_scope = shared / personal (θ has no split; pflref: I1).

Batch normalisation (docs/algorithms/pfedme.md, "Client optimizer and
batch normalisation"): a layer list's batchnorm1d / 2d is
torch.nn.BatchNorm1d / 2d (torch_bn.py); θ's module is in train() mode,
so each of the K forwards of l. 7 moves θ's running_mean, running_var
(bn.running = frozen: momentum 0; bn.running_var = biased: torch_bn's
hook); the proximal pull and μθ range over parameters() only.  Line 8
steps the parameters, and w_{i,r+1} takes θ's buffers (the uploaded model
is θ's with w_{i,R}'s parameters).  Every record is the state_dict's
values flattened.  bn.aggregate = average: w_{i,0} and θ start from the
whole state of w_t and l. 10 mixes it whole; parameters_only (the preset
pfllib: PFLlib's set_parameters and beta_aggregate_parameters move
parameters() only): w_{i,0} and θ start from w_t's parameters with the
buffers client i last left (w⁰'s at first), w_{i,R}'s become the client's,
l. 10 mixes the parameters, w_{t+1}'s buffers are the round's first
uploader's (first_upload, else the lowest id of S^t), and
personal_eval = global reports w_{t+1}'s parameters with the client's own
buffers.

usage: pfedme_torch.py VECTOR.json -o RESULT.json
"""
import torch

from torch_bn import (bn_problem, copy_buffers, first_uploader, load_state,
                      put_buffers, state_flat)
from torch_common import (ClientOptimizers, Recorder, Unsupported, clone,
                          frozen, lr_factor, main, plan, squared_distance,
                          take_optimizer, weights)


class InnerSolvers:
    """θ's module and its optimizer for each client update: θ a copy of
    its start, the optimizer a torch_common.ClientOptimizer over it (slot
    0) whose state lives as opt.state says (a new one per update, the
    client's own, or one for all: ClientOptimizers)."""

    def __init__(self, ocfg):
        self.optimizers = ClientOptimizers(ocfg)

    def get(self, i, theta_start, lr, buffers=None):
        """buffers: the running statistics θ starts with instead of
        theta_start's (bn.aggregate = parameters_only)."""
        personal = clone(theta_start)
        if buffers is not None:
            put_buffers(personal, buffers)
        personal.train()
        return personal, self.optimizers.get(0, i, personal, lr)

    def keep(self, i, opt):
        self.optimizers.keep(0, i, opt)


def client_update(prob, rec, t, i, global_model, batches, theta_start,
                  solvers, own=None, trained=0):
    """Lines 5-8 for client i; returns (w_{i,R}, the last θ) as modules.
    θ starts at theta_start: w_t, or w⁰ under pfedme.eval_reset = initial
    the first time the client trains (PFLlib's evaluation defect).  own:
    the client's running statistics under bn.aggregate = parameters_only
    (w_{i,0} and θ start with them).  trained: the rounds i trained in
    before (lr.count = trainings: PFLlib's per-client scheduler)."""
    cfg = prob.cfg
    lam, K, mu = cfg["lambda"], int(cfg["K"]), cfg["pfedme.mu"]
    eta = cfg["eta"] * lr_factor(cfg, t, trained=trained)  # η_t, η_p,t
    local_model = clone(global_model)                    # l. 5: w_{i,0} = w_t
    if own is not None:                                  # parameters only
        put_buffers(local_model, own)
    personal, opt = solvers.get(                         # θ's start, and
        i, theta_start,                                  # its optimizer
        cfg["eta_p"] * lr_factor(cfg, t, "eta_p", trained), own)
    rec.record("client_begin", "w_local", state_flat(local_model), round=t,
               client=i, step=0)
    for r, D in enumerate(batches):                      # l. 6: local round r
        if cfg["pfedme.theta_start"] == "reset":         # θ ← w_{i,r}
            load_state(personal, state_flat(local_model))
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
            rec.step(t, i, r * K + k, "theta", state_flat(personal))
        with torch.no_grad():                            # l. 8
            for w, th in zip(local_model.parameters(), personal.parameters()):
                w -= eta * lam * (w - th)
        put_buffers(local_model, copy_buffers(personal))  # θ's statistics
        rec.step(t, i, r + 1, "w_local", state_flat(local_model))
    solvers.keep(i, opt)
    rec.client_end(t, i, "w_local", state_flat(local_model))
    rec.client_end(t, i, "theta", state_flat(personal))
    return local_model, personal


def run(vector_raw):
    """pFedMe on a golden vector; returns its pflref-result/1 dict."""
    vector_raw, ocfg = take_optimizer(vector_raw)
    prob = bn_problem(vector_raw, "pfedme")
    solvers = InnerSolvers(ocfg)
    cfg, rec, model = prob.cfg, Recorder(prob.id), prob.global_model
    report = cfg["pfedme.personal_eval"]
    v = [state_flat(model) for _ in prob.clients]        # reported models
    agg = cfg.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % agg)
    # parameters_only: each client's running statistics (w⁰'s at first)
    own = ([copy_buffers(model) for _ in prob.clients]
           if prob.bn and agg == "parameters_only" else None)
    initial = clone(model)                               # w⁰
    trained = [0] * len(prob.clients)                    # lr.count
    untrained = set(range(len(prob.clients))) \
        if cfg["pfedme.eval_reset"] == "initial" else set()
    for t, rnd in enumerate(prob.rounds):
        rec.round_begin(t, state_flat(model))
        w_R = {}
        for i, batches in plan(rnd).items():             # all N, or S^t
            start = initial if i in untrained else model
            untrained.discard(i)
            local_model, personal = client_update(
                prob, rec, t, i, model, batches, start, solvers,
                own[i] if own else None, trained[i])
            trained[i] += 1
            w_R[i] = state_flat(local_model)
            if own:                              # θ's, the client's model's
                own[i] = copy_buffers(local_model)
            if report in ("theta", "local_w"):
                v[i] = state_flat(personal if report == "theta"
                                  else local_model)
        S_t = sorted(rnd.get("selected", rnd["clients"]))  # l. 9
        c = weights(cfg["pfedme.weights"], S_t, prob.n)
        avg = torch.zeros_like(state_flat(model))
        for i in S_t:
            avg = avg + c[i] * w_R[i]
        beta = cfg["beta"]                               # l. 10
        w_next = (1.0 - beta) * state_flat(model) + beta * avg
        load_state(model, w_next)
        if own and S_t:          # deepcopy(uploaded_models[0])'s buffers
            put_buffers(model, own[first_uploader(rnd, S_t)])
        rec.server(t, state_flat(model))
        if report == "global":   # w_{t+1}, with each client's own buffers
            v = []
            for i in range(len(prob.clients)):
                shown = clone(model)
                if own:
                    put_buffers(shown, own[i])
                v.append(state_flat(shown))
    rec.final("w", state_flat(model))
    for i, v_i in enumerate(v):
        rec.final("v", v_i, client=i)
    return rec.result()


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
