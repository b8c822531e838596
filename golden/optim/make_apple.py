#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""APPLE with a client optimizer (opt.*): golden vectors computed by
golden/pflref_exact_apple.py with golden/pflref_exact_optim.py (exact
fractions carried at 60 significant digits, as make_apple.py's; Adam's
square roots at 60 digits).

The reading (ref/algorithms/apple.c, docs/algorithms/apple.md): the
authors step the client's core w_i and p_i with one torch.optim.SGD built
for every client update, with two parameter groups, the core (lr eta) and
p_i (lr eta_p), momentum 0.9 (ljaiverson/pFL-APPLE train_APPLE.py:46-52,
the step at :62).  opt.* is that optimizer: it takes d = (p_ii g, dL/dp_i)
at the step's start point (apple.order = joint), over the core's blocks w,
b and the block ps of p_i.

The problem and schedule are make_apple.py's (four clients, n = 4, 3, 5,
2; EVERY: every client in three rounds; PARTIAL: four rounds with skips).

Vectors (ids optim/apple/<name>; files golden/optim/apple-<name>.json):
  momentum-decay   torch.optim.SGD(momentum = 0.9, weight_decay = 0.1875),
                   a new optimizer per client update (the authors'), every
                   client every round, L = 3
  adam-client      torch.optim.Adam(betas = (0.8125, 0.96875), eps =
                   2^-7), one optimizer per client kept across rounds,
                   clients that skip rounds, L = 2

    /usr/bin/python3 golden/optim/make_apple.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(GOLDEN, "apple"))

import make_apple as ma                  # noqa: E402
import pflref_exact_apple as xa          # noqa: E402
import pflref_exact_optim as po          # noqa: E402
import pflref_golden as pg               # noqa: E402

SOURCE = (ma.PAPER + "; ljaiverson/pFL-APPLE 8078196731b5 "
          "train_APPLE.py:46-52, :62 (one torch.optim.SGD per client "
          "update over the core and ps, two parameter groups); "
          "torch.optim.SGD and torch.optim.Adam documented update rules; "
          "docs/optimizers.md")
GENERATOR = ("golden/optim/make_apple.py with pflref_exact_apple.py and "
             "golden/pflref_exact_optim.py (exact fractions carried at 60 "
             "digits; decimal square roots at 60 digits)")


def tolerance(adam):
    tol = dict(ma.TOL)
    tol["basis"] = (ma.TOL["basis"] + " The optimizer's step adds a "
                    "momentum buffer (mu = 0.9) or Adam's normalised step "
                    "(bounded by eta / (1 - beta1^t) times the ratio of the "
                    "moments)" + (", whose square roots are taken at 60 "
                                  "digits" if adam else "") +
                    ": a few roundings more per step, far below the "
                    "tolerance.")
    return tol


def run(spec, bugs=frozenset()):
    trace, _, v, _ = xa.replay(spec, frozenset(bugs))
    return pg.expected(trace, v=v)


def make(name, title, description, hyper, opt_hyper, opt_switches, rounds,
         flags, mutants, adam=False):
    vid = "optim/apple/%s" % name
    algorithm = {"name": "apple", "hyperparameters": dict(hyper, **opt_hyper),
                 "switches": dict(opt_switches)}
    spec = pg.given_spec(title, description, ma.MODEL, ma.CLIENTS, ma.INIT,
                         algorithm, ma.rounds_json(rounds))
    tol = tolerance(adam)
    exp = run(spec)
    mutants = dict(mutants)
    mutants["optimizer-state-lifetime"] = po.other_lifetimes(
        spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: run(spec, bugs))
    plain = copy.deepcopy(spec)                 # the optimizer acts
    plain["algorithm"]["hyperparameters"] = dict(hyper)
    plain["algorithm"]["switches"] = {}
    assert pg.detects(exp, run(plain), tol) is not None
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "apple-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                             tol, exp)


def momentum_decay():
    return make(
        "momentum-decay",
        "APPLE, the core and p_i on the authors' torch.optim.SGD(momentum = "
        "0.9) with weight decay 0.1875, two parameter groups, a new "
        "optimizer per client update",
        "The clients and w⁰ of apple/worked/paper-partial; every client in "
        "three rounds; η = 0.09 (the core's group), η_p = 0.13 (p_i's "
        "group), μ = 0.45, L = 3 (λ = 1, 3/4, 1/4).  opt.momentum = 0.9, "
        "opt.weight_decay = 0.1875 (coupled, on the core and on p_i, torch's "
        "group default), opt.state = reset: each client update builds one "
        "torch.optim.SGD over the core (w, b) and ps, each tensor with its "
        "own buffer (ljaiverson/pFL-APPLE train_APPLE.py:46-52).",
        ma.hyper(0.09, 0.13, 0.45, 3),
        {"opt.momentum": 0.9, "opt.weight_decay": 0.1875}, {}, ma.EVERY,
        ["apple-optimizer-groups", "optimizer-state-lifetime",
         "weight-decay-form", "apple-core-step", "apple-p-grad", "apple-prox"],
        {"apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"],
         "weight-decay-form": ["decay-form-swap"],
         "apple-core-step": ["core-no-pii"],
         "apple-p-grad": ["p-grad-flip"],
         "apple-prox": ["prox-flip", "prox-no-lambda"]})


def adam_client():
    return make(
        "adam-client",
        "APPLE, the core and p_i on torch.optim.Adam(betas = (0.8125, "
        "0.96875), eps = 2^-7), two parameter groups, one optimizer per "
        "client kept across its rounds",
        "The clients and w⁰ of apple/worked/paper-partial and its rounds "
        "with skips ({0, 2, 3}, {0, 1, 2}, {1, 3}, {0, 2, 3}); η = 0.11, "
        "η_p = 0.07, μ = 0.35, L = 2.  opt.method = adam, opt.beta1 = "
        "0.8125, opt.beta2 = 0.96875, opt.eps = 0.0078125, opt.state = "
        "client: a client's moments and step counts (per tensor: w, b, ps) "
        "carry into its next round.",
        ma.hyper(0.11, 0.07, 0.35, 2),
        {"opt.beta1": 0.8125, "opt.beta2": 0.96875, "opt.eps": 0.0078125},
        {"opt.method": "adam", "opt.state": "client"}, ma.PARTIAL,
        ["apple-optimizer-groups", "optimizer-state-lifetime",
         "adam-bias-correction", "apple-downloads"],
        {"apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"],
         "adam-bias-correction": ["adam-no-bias-correction",
                                  "adam-eps-inside"],
         "apple-downloads": ["live-downloads"]},
        adam=True)


MAKERS = [momentum_decay, adam_client]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
