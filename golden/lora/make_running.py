#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Low-rank adapters over a frozen base model with batch normalisation:
golden vectors computed by golden/pflref_exact_lora.py (exact fractions;
the base model's gradient and running statistics from
pflref_exact_layers.py in 60-digit decimals, converted exactly).

The reading (ref/algorithms/lora.c, docs/algorithms/lora.md): the base W0
is frozen, but torch moves a module's batchnorm buffers in every training
forward whatever requires_grad says; under bn.running = update each local
step moves the base's running statistics r_mu, r_v by its batch
(PyTorch's rule).  The base never leaves the client (only the adapter is
sent and averaged), so each client keeps its own statistics across rounds
(shown in v_i = W0 + s B_i A_i); the global w = W0 + s B A keeps init.w's.

The model is golden/layers/make_bn.py's MLP: input [3]; fc1 3 -> 4 without
bias; bn1 = batchnorm1d (eps = 0.03, momentum 0.2); relu; fc2 4 -> 1;
squared loss; its three clients (n = 4, 3, 5) and init.w.

  lora/bn/fedavg-bn1d           FedAvg-LoRA (rank 1 on fc1 and fc2),
      unbiased running variance; three rounds, clients skipping rounds
  lora/bn/personal-bn1d-biased  personal adapters, bn.running_var = biased

    /usr/bin/python3 golden/lora/make_running.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, os.path.join(GOLDEN, "layers"))
sys.path.insert(0, HERE)

import make_bn as mb                     # noqa: E402
import make_worked as mw                 # noqa: E402
import pflref_exact_lora as pl           # noqa: E402
import pflref_golden as pg               # noqa: E402

GENERATOR = ("golden/lora/make_running.py (exact fractions, pflref_exact_lora.py; "
             "the batchnorm forward in 60-digit decimals, "
             "pflref_exact_layers.py)")
SOURCE = (mw.NOTES + " §1-3; LoRA arXiv 2106.09685v2 eq. (3); the layer "
          "list and batch normalisation of docs/models.md (PyTorch's "
          "running-statistics rule in train()); the base model is never "
          "communicated (loralib lora_state_dict, PEFT "
          "get_peft_model_state_dict: the lora_ entries only)")
TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against exact rationals of the binary inputs, "
             "the batchnorm forward's square roots at 60 digits (error < "
             "1e-58): three rounds of at most two steps, each a batchnorm "
             "forward and backward over at most 3 samples and a rank-1 "
             "adapter product on values below 10, the running statistics a "
             "convex combination per step; the accumulated error stays "
             "below 1e-14, and every flagged bug moves some value by more "
             "than 1e3 times the tolerance",
}
ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [3, 1]], [[2, 0, 1]],
                                       [[4, 1], [0, 3, 2]]]},
    {"clients": [0, 2], "batches": [[[1, 3, 0], [2, 1]], [[2, 4, 3]]]},
    {"clients": [1, 2], "batches": [[[1, 2], [0, 2]], [[0, 4], [3, 1, 2]]]},
]


def make(name, title, description, method, hp, sw, flags_required):
    vid = "lora/bn/%s" % name
    r = hp["lora.r"]
    init = {"kind": "given", "w": mb.MLP_W0,
            "lora": mw.q_of(mb.MLP, r, "all", 11)}
    spec = pg.given_spec(title, None, mb.MLP, mb.MLP_CLIENTS, init,
                         mw.alg(method, hp, **sw), [dict(x) for x in ROUNDS])

    def run(bugs=frozenset()):
        return pl.replay(spec, frozenset(bugs))

    result = run()
    exp0 = pg.expected(result[0], result[1], result[2])
    flags = []
    for flag, bugs in sorted(pl.MUTANTS.items()):
        ok = True
        for bug in bugs:
            try:
                ok = ok and pg.detects(exp0, pg.expected(*run({bug})[:3]),
                                       TOL) is not None
            except (OverflowError, ZeroDivisionError):
                pass
        if ok:
            flags.append(flag)
    for f in flags_required:
        assert f in flags, (vid, f)
    # one base object for every client is caught in both vectors
    assert pg.detects(exp0, pg.expected(*run({"bn-shared-base"})[:3]),
                      TOL) is not None
    mutants = {f: pl.MUTANTS[f] for f in flags}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    spec["description"] = description
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "bn-%s.json" % name, pg.vector(vid, title, prov, flags, spec, TOL,
                                          exp)


def fedavg_bn1d():
    return make(
        "fedavg-bn1d",
        "FedAvg-LoRA over a frozen MLP with batchnorm1d: each client's base "
        "keeps its own running statistics",
        "golden/layers/make_bn.py's MLP (fc1 3 -> 4 without bias, "
        "batchnorm1d eps = 0.03, momentum 0.2, relu, fc2 4 -> 1, squared "
        "loss), three clients (n = 4, 3, 5); rank-1 adapters on fc1 and fc2 "
        "(alpha = 1.5), FedAvg-LoRA (n_k weights), eta = 0.0625; rounds "
        "{0, 1, 2}, {0, 2}, {1, 2}.  bn.running = update: every local step "
        "moves the base's r_mu, r_v by its batch (unbiased variance); they "
        "stay with the client (its v_i), carried to its next round, never "
        "averaged; w keeps init.w's.",
        "fedavg", {"eta": 0.0625, "lora.r": 1, "lora.alpha": 1.5}, {},
        ["lora-bn-owner", "bn-running-frozen", "bn-running-update"])


def personal_bn1d_biased():
    return make(
        "personal-bn1d-biased",
        "Personal adapters over a frozen MLP with batchnorm1d, biased "
        "running variance",
        "The model, clients and rounds of lora/bn/fedavg-bn1d; personal "
        "adapters (rank 1 on fc1 and fc2, alpha = 2), eta = 0.09375; "
        "bn.running_var = biased (s^2 into r_v).",
        "personal", {"eta": 0.09375, "lora.r": 1, "lora.alpha": 2},
        {"bn.running_var": "biased"},
        ["bn-running-frozen", "bn-running-update"])


MAKERS = [fedavg_bn1d, personal_bn1d_biased]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
