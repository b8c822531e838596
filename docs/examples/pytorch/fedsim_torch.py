#!/usr/bin/python3
"""fedsim_torch.py: FedSim (FedPer, LG-FedAvg, FedBABU) in PyTorch, checked
by `pflref check`.

Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, "Federated Learning with
Partial Model Personalization", ICML 2022, Algorithm 5 (LocalSim): the
split's personal blocks v_i stay on device i, the others (u) are shared;
each local step moves both from the same point,

  l. 9-10   (u, v) ← (u − γ_u ∇_u F_i(u, v; z), v − γ_v ∇_v F_i(u, v; z))
  l. 12     u^(t+1) = Σ_{i∈S} α_i u_i^(t+1) / Σ_{i∈S} α_i

which is one loss.backward() and one optimizer step with two parameter
groups, lr = γ_u on the shared parameters and γ_v on the personal ones
(docs/optimizers.md: FedSim's slot 0; plain torch.optim.SGD by default,
every opt.* through torch_common.ClientOptimizers).  The rounds, the
server average, pfl.state, pfl.weights, batch normalisation and the
optional fine-tuning (slot 1) are fedrep_torch.py's (run_partial,
finetune): the two algorithms differ only in the device's update.

The presets (docs/algorithms/fedalt-fedsim.md, "Presets") are spelled out
here as the spec's settings below its own: fedper (Arivazhagan et al.
2019: the head personal), lg_fedavg (Liang et al. 2020: the input layer
personal), fedbabu (Oh, Kim, Yun, ICLR 2022: the head never trains,
γ_v = 0, then the whole model is fine-tuned), and their _pfllib readings
(TsingZ0/PFLlib clientper.py, clientlg.py, clientbabu.py: lr.count =
trainings, bn.aggregate = parameters_only; FedBABU's fine-tuning from the
model the client holds with its decayed lr).  A spec's own split or
hyperparameter overrides the preset's.  Records: docs/validate.md,
"fedsim".

PFLREF_TORCH_CONTROL=fedsim-sequential (a negative control,
test_torch_candidates.py): v steps first and u's gradient is taken after
v moved (LocalAlt's order inside one batch), not at the same point;
fedsim-one-lr: one parameter group, every block at γ_u (FedBABU's head
then trains).

usage: fedsim_torch.py VECTOR.json -o RESULT.json
"""
import copy

import torch_common
from fedrep_torch import personal_test, run_partial
from torch_bn import state_flat
from torch_common import Unsupported, lr_factor, main

# docs/algorithms/fedalt-fedsim.md, "Presets": each preset's settings and
# the split it implies unless the spec gives one
PRESETS = {
    "fedper": {"pfl.weights": "samples", "pfl.finetune": "personal",
               "split": ["head"]},
    "lg_fedavg": {"pfl.weights": "samples", "pfl.finetune": "personal",
                  "split": ["input"]},
    "fedbabu": {"gamma_v": 0.0, "pfl.weights": "samples",
                "pfl.finetune": "full", "split": ["head"]},
    "fedper_pfllib": {"pfl.weights": "samples", "pfl.finetune": "personal",
                      "lr.count": "trainings",
                      "bn.aggregate": "parameters_only", "split": ["head"]},
    "lg_fedavg_pfllib": {"pfl.weights": "samples",
                         "pfl.finetune": "personal", "lr.count": "trainings",
                         "bn.aggregate": "parameters_only",
                         "split": ["input"]},
    "fedbabu_pfllib": {"gamma_v": 0.0, "pfl.weights": "samples",
                       "pfl.finetune": "full", "lr.count": "trainings",
                       "bn.aggregate": "parameters_only",
                       "pfl.finetune_start": "last_local",
                       "pfl.finetune_lr": "decayed", "split": ["head"]},
}


def spell_preset(vector_raw):
    """A copy of the vector with its preset written out below the spec's
    own values: the preset's settings as hyperparameters (the spec's
    hyperparameters and switches override them), its split as the spec's
    split unless the spec has one."""
    vec = copy.deepcopy(vector_raw)
    spec = vec.get("spec", {})
    alg = spec.get("algorithm", {})
    preset = alg.get("preset", "paper")
    if preset == "paper":
        return vec
    if preset not in PRESETS:
        raise Unsupported("preset %r of fedsim" % preset)
    alg.pop("preset")
    values = dict(PRESETS[preset])
    names = values.pop("split")
    spec.setdefault("split", {"personal": names})
    alg["hyperparameters"] = dict(values, **alg.get("hyperparameters", {}))
    return vec


def local_sim(prob, rec, t, i, model, batches, trained):
    """LocalSim (l. 6-11) on model = (u^(t), v_i), in place: one
    optimizer, its groups at γ_u (shared) and γ_v (personal), both
    decayed by lr.* (trained: the rounds i trained in before)."""
    c = lr_factor(prob.cfg, t, trained=trained)
    mine = personal_test(prob, model)
    gamma_v = prob.cfg["gamma_v"]
    if "fedsim-one-lr" in torch_common.CONTROLS:   # SGD(params(), lr=γ_u)
        gamma_v = prob.cfg["gamma_u"]
    opt = prob.optimizers.get(0, i, model, prob.cfg["gamma_u"] * c, mine,
                              lr_personal=gamma_v * c)
    rec.record("client_begin", "w_local", state_flat(model), round=t,
               client=i, step=0)
    for s, z in enumerate(batches, start=1):
        opt.zero_grad()
        prob.clients[i].loss(model, z).backward()
        if "fedsim-sequential" in torch_common.CONTROLS:   # v, then u
            named = dict(model.named_parameters())
            v = [p for n, p in named.items() if mine(n)]
            u = [p for n, p in named.items() if not mine(n)]
            opt.freeze(v)
            opt.step()
            opt.zero_grad()
            prob.clients[i].loss(model, z).backward()
            opt.freeze(u)
        opt.step()                          # l. 9-10, both at once
        rec.step(t, i, s, "w_local", state_flat(model))
    prob.optimizers.keep(0, i, opt)
    rec.client_end(t, i, "w_local", state_flat(model))


def run(vector_raw):
    """FedSim on a golden vector; returns its pflref-result/1 dict."""
    return run_partial(spell_preset(vector_raw), "fedsim", local_sim)


if __name__ == "__main__":
    main(run)
# SPDX-License-Identifier: GPL-3.0-or-later
