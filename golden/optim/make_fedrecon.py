#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedRecon with a client optimizer (opt.*): golden vectors in exact rational
arithmetic (pflref_exact_fedrecon.py with golden/pflref_exact_optim.py;
Adam's square roots at 60 decimal digits).

The reading (ref/algorithms/fedrecon.c, docs/algorithms/fedrecon.md): TFF's
client update builds two optimizers per client update
(google-research/federated reconstruction/training_process.py:415-416):
client_optimizer_fn's steps g after the reconstruction (Alg. 1 l. 11;
training_process.py:358) and reconstruction_optimizer_fn's steps l (l. 9;
training_process.py:334), both SGD by default (:538-541).  opt.* is the
first: the k_u update steps on g go through it, the reconstruction of l (in
training and in the evaluation) stays plain SGD with eta_r.

The problem, supports, schedule and evaluation batches are those of
golden/fedrecon/make_worked.py (three clients, n = 5, 3, 6; three rounds
S = {0, 1}, {1, 2}, {0, 2}).

Vectors (ids optim/fedrecon/<name>; files golden/optim/fedrecon-<name>.json):
  momentum-decay   torch.optim.SGD(momentum = 0.6875, dampening = 0.25,
                   weight_decay = 0.21875), a new optimizer per client
                   update (TFF's)
  adam-client      torch.optim.Adam(betas = (0.8125, 0.96875), eps = 2^-7),
                   one optimizer per client kept across its rounds

    /usr/bin/python3 golden/optim/make_fedrecon.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(GOLDEN, "fedrecon"))

import make_worked as mw                  # noqa: E402
import pflref_exact_fedrecon as xr        # noqa: E402
import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402

SOURCE = ("Singhal, Sidahmed, Garrett, Wu, Rush, Prakash, NeurIPS 2021, arXiv "
          "2102.03448v6, Alg. 1; google-research/federated reconstruction/"
          "training_process.py:334, :358, :415-416, :538-541 (the update's "
          "client_optimizer_fn on g, the reconstruction_optimizer_fn SGD on "
          "l); torch.optim.SGD and torch.optim.Adam documented update rules; "
          "docs/optimizers.md")
GENERATOR = ("golden/optim/make_fedrecon.py with pflref_exact_fedrecon.py and "
             "golden/pflref_exact_optim.py (exact fractions; decimal square "
             "roots at 60 digits)")


def tolerance(adam):
    return {
        "atol": 1e-13, "rtol": 1e-12,
        "basis": "fp64 reference in fixed order against exact rationals of "
                 "the binary inputs" + (", Adam's square roots and the values "
                 "after them at 60 decimal digits (error < 1e-58)" if adam
                 else "") + ": at most 5 local steps per client and round "
                 "(at most 3 through the optimizer), three rounds and two "
                 "evaluation steps, terms below 10 in magnitude, momentum "
                 "0.6875 and Adam's normalised steps bounded, so the "
                 "accumulated error stays below 1e-14; every flagged bug "
                 "moves some value by more than 1e3 times the tolerance."}


def run(spec, bugs=frozenset()):
    w, v, trace = xr.run(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def make(name, title, description, opt_hyper, opt_switches, adam, flags,
         mutants):
    vid = "optim/fedrecon/%s" % name
    hyper = dict(mw.HYPER, **opt_hyper)
    algorithm = {"name": "fedrecon", "hyperparameters": hyper,
                 "switches": dict(opt_switches)}
    init = {"kind": "given", "w": mw.W0, "support": mw.SUPPORT}
    spec = pg.given_spec(title, description, mw.MODEL, mw.CLIENTS, init,
                         algorithm, mw.rounds_json(mw.ROUNDS), split=mw.SPLIT,
                         post=mw.POST)
    tol = tolerance(adam)
    exp = run(spec)
    mutants = dict(mutants)
    mutants["optimizer-state-lifetime"] = po.other_lifetimes(
        spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: run(spec, bugs))
    # the optimizer acts: plain SGD on the same spec gives other numbers
    plain = copy.deepcopy(spec)
    plain["algorithm"]["hyperparameters"] = dict(mw.HYPER)
    plain["algorithm"]["switches"] = {}
    assert pg.detects(exp, run(plain), tol) is not None
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "fedrecon-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                                tol, exp)


COMMON = mw.DESCRIPTION + (
    "Supports {0, 2}, {1, 2}, {0, 3}; weights n_i = 3, 1, 4; the evaluation "
    "reconstructs l from l⁰ on each client's post batches (plain SGD, "
    "η_r).  The k_u update steps on g go through the client optimizer "
    "(TFF's client_optimizer_fn, training_process.py:358); the "
    "reconstruction of l stays plain SGD (reconstruction_optimizer_fn, SGD "
    "by default, training_process.py:540-541).  ")


def momentum_decay():
    return make(
        "momentum-decay",
        "FedRecon, the update of g on torch.optim.SGD(momentum = 0.6875, "
        "dampening = 0.25, weight_decay = 0.21875), a new optimizer per "
        "client update",
        COMMON + "opt.momentum = 0.6875, opt.dampening = 0.25 (b ← d at the "
        "first step, then b ← μ b + (1 − τ) d), opt.weight_decay = 0.21875 "
        "(coupled, d ← d + λ g), opt.state = reset (TFF builds "
        "client_optimizer_fn() in every client update, "
        "training_process.py:415).",
        {"opt.momentum": 0.6875, "opt.dampening": 0.25,
         "opt.weight_decay": 0.21875}, {}, False,
        ["optimizer-phase", "optimizer-state-lifetime", "weight-decay-form",
         "momentum-form", "fedrecon-split-blocks", "fedrecon-step-sizes"],
        {"optimizer-phase": ["recon-optimizer"],
         "weight-decay-form": ["decay-form-swap"],
         "momentum-form": ["dampening-first"],
         "fedrecon-split-blocks": ["recon-moves-g", "update-moves-l"],
         "fedrecon-step-sizes": ["eta-swap"]})


def adam_client():
    return make(
        "adam-client",
        "FedRecon, the update of g on torch.optim.Adam(betas = (0.8125, "
        "0.96875), eps = 2^-7), one optimizer per client kept across rounds",
        COMMON + "opt.method = adam, opt.beta1 = 0.8125, opt.beta2 = "
        "0.96875, opt.eps = 0.0078125, opt.state = client: a client's "
        "moments and step count carry into its next round's update steps "
        "(client 0 in rounds 0 and 2, client 1 in rounds 0 and 1, client 2 "
        "in rounds 1 and 2).",
        {"opt.beta1": 0.8125, "opt.beta2": 0.96875, "opt.eps": 0.0078125},
        {"opt.method": "adam", "opt.state": "client"}, True,
        ["optimizer-phase", "optimizer-state-lifetime",
         "adam-bias-correction", "fedrecon-split-blocks"],
        {"optimizer-phase": ["recon-optimizer"],
         "adam-bias-correction": ["adam-no-bias-correction",
                                  "adam-eps-inside"],
         "fedrecon-split-blocks": ["recon-moves-g", "update-moves-l"]})


MAKERS = [momentum_decay, adam_client]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
