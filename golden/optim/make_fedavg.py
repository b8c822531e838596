#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Client-optimizer golden vectors: FedAvg on a linear model whose clients
step with torch's optimizers (opt.*, ref/engine/optim.c), replayed by
golden/pflref_exact_optim.py (exact fractions; 60-digit decimal square
roots for Adam and clipping).

Every vector: three clients (n = 3, 2, 4), linear model with bias, squared
loss, w0 = (0.25, -0.5, 0.125), B = 2, E = 1, three rounds with partial
participation S = {0, 1}, {1, 2}, {0, 2}, so that a client's optimizer
state under opt.state = client (kept since its last training), server
(carried from the previous client) and reset (new) differ.

Vectors (ids optim/fedavg/<name>; file fedavg-<name>.json):
  momentum-pytorch     mu = 0.85, tau = 0.3, state client, lr decay 0.6^t
  momentum-classical   mu = 0.85, classical form, state client, lr decay
  nesterov-reset       mu = 0.7, nesterov, state reset
  decay-coupled-weights  lam = 0.2, coupled, decay_scope = weights, mu = 0.55
  decay-decoupled      lam = 0.25, decoupled, mu = 0.5, state reset
  adam-server          Adam (0.8, 0.95, eps 0.003), state server
  adamw                AdamW (0.7, 0.9, eps 0.001), lam = 0.1, state client
  clip                 clip_norm between the steps' gradient norms, mu = 0.6,
                       lam = 0.15 coupled
  decay-no-momentum    lam = 0.3 coupled, decay_scope = weights, mu = 0 with
                       opt.dampening = 0.4 (torch keeps no buffer without
                       momentum: the dampening is read nowhere)

    /usr/bin/python3 golden/optim/make_fedavg.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px            # noqa: E402
import pflref_exact_optim as po      # noqa: E402
import pflref_golden as pg           # noqa: E402

GENERATOR = ("golden/optim/make_fedavg.py with golden/pflref_exact_optim.py "
             "(exact fractions; decimal square roots at 60 digits)")
SOURCE = ("McMahan et al., AISTATS 2017, Alg. 1; torch.optim.SGD, "
          "torch.optim.Adam, torch.optim.AdamW documented update rules "
          "(torch/optim/sgd.py, adam.py, adamw.py), "
          "torch.nn.utils.clip_grad_norm_; Sutskever et al., ICML 2013 "
          "(classical momentum); Loshchilov & Hutter, ICLR 2019 (decoupled "
          "weight decay); docs/optimizers.md")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs (square roots and the values after them at 60 "
             "decimal digits, error < 1e-58): at most 6 local steps per "
             "client update and 3 rounds, each step a few roundings of "
             "terms below 10 in magnitude; momentum (mu <= 0.85) and Adam's "
             "normalised steps (|step| <= eta/(1 - b1) times a bounded "
             "ratio) keep the accumulated error below 1e-13; every flagged "
             "bug moves some value by more than 1e3 times the tolerance.",
}
MODEL = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS = [
    {"X": [[2.385, -0.716], [0.412, 1.937], [-1.254, 0.583]],
     "y": [1.62, -0.347, 2.91]},
    {"X": [[1.118, -2.046], [-0.329, 0.874]], "y": [-1.73, 0.456]},
    {"X": [[0.761, 1.305], [-1.892, -0.238], [2.047, 0.619], [0.153, -1.461]],
     "y": [0.982, -2.214, 3.105, -0.667]},
]
INIT = {"kind": "given", "w": [0.25, -0.5, 0.125]}
ROUNDS = [[0, 1], [1, 2], [0, 2]]
LIFETIMES = ("reset", "client", "server")


def run_opt(algorithm, bugs=px.NO_BUGS):
    pr = px.Problem(MODEL, CLIENTS)
    w0 = px.initial(INIT, pr.P, bugs)
    c = po.config(algorithm)
    eta = pg.exact(algorithm["hyperparameters"]["eta"])
    plans = [[(k, px.split_batches(pr.n(k), 2, 1, bugs)) for k in sel]
             for sel in ROUNDS]
    trace = pg.Trace()

    def eta_of(t, k):
        return eta * px.round_factor(algorithm, t, bugs)

    w = po.fedavg_run(pr, w0, plans, eta_of, c, trace, bugs)
    return pr, w, trace, plans


def optim_vector(name, title, description, hyper, switches, flags, mutants):
    vid = "optim/fedavg/" + name
    algorithm = {"name": "fedavg",
                 "hyperparameters": dict({"eta": hyper.pop("eta")}, **hyper),
                 "switches": switches}
    life = po.config(algorithm)["opt.state"]
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = [
            "state-" + x for x in LIFETIMES if x != life]

    def run(bugs=px.NO_BUGS):
        return run_opt(algorithm, bugs)

    result = run()
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda pr, w, trace, plans: (trace, w, None))
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         px.schedule_json(result[3]))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "fedavg-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                               TOL, exp)


COMMON = ("Three clients (n = 3, 2, 4), linear model with bias, squared "
          "loss, w0 = (0.25, -0.5, 0.125); B = 2, E = 1; S = {0, 1}, "
          "{1, 2}, {0, 2}; server weights n_k / sum_{S_t} n_j. ")
LR = {"lr.gamma": 0.6}


def momentum_pytorch():
    return optim_vector(
        "momentum-pytorch",
        "FedAvg, clients on torch.optim.SGD(momentum = 0.85, dampening = "
        "0.3), one optimizer per client kept across rounds, lr decay 0.6^t",
        COMMON + "opt.momentum = 0.85, opt.dampening = 0.3 (b <- d at a "
        "block's first step, then b <- mu b + (1 - tau) d; theta <- theta - "
        "eta b), opt.state = client, eta = 0.04 * 0.6^t (lr.schedule "
        "exponential).",
        dict({"eta": 0.04, "opt.momentum": 0.85, "opt.dampening": 0.3}, **LR),
        {"opt.state": "client", "lr.schedule": "exponential"},
        ["momentum-form", "optimizer-state-lifetime"],
        {"momentum-form": ["momentum-form-swap", "dampening-first"]})


def momentum_classical():
    return optim_vector(
        "momentum-classical",
        "FedAvg, clients on classical momentum v <- 0.85 v - eta d, one "
        "optimizer per client kept across rounds, lr decay 0.6^t",
        COMMON + "opt.momentum = 0.85, opt.momentum_form = classical (v <- "
        "mu v - eta d; theta <- theta + v: eta inside the velocity, unlike "
        "torch's form once eta decays), opt.state = client, eta = 0.04 * "
        "0.6^t.",
        dict({"eta": 0.04, "opt.momentum": 0.85}, **LR),
        {"opt.state": "client", "opt.momentum_form": "classical",
         "lr.schedule": "exponential"},
        ["momentum-form", "optimizer-state-lifetime"],
        {"momentum-form": ["momentum-form-swap"]})


def nesterov_reset():
    return optim_vector(
        "nesterov-reset",
        "FedAvg, clients on torch.optim.SGD(momentum = 0.7, nesterov = "
        "True), a new optimizer in every client update",
        COMMON + "opt.momentum = 0.7, opt.nesterov = on (d <- d + mu b), "
        "opt.state = reset, eta = 0.05.",
        {"eta": 0.05, "opt.momentum": 0.7},
        {"opt.nesterov": "on"},
        ["nesterov-momentum", "optimizer-state-lifetime"],
        {"nesterov-momentum": ["nesterov-ignored"]})


def decay_coupled_weights():
    return optim_vector(
        "decay-coupled-weights",
        "FedAvg, clients on torch.optim.SGD(momentum = 0.55, weight_decay "
        "= 0.2) on the weights only (bias in the no-decay group)",
        COMMON + "opt.weight_decay = 0.2, coupled (d <- d + lam theta), "
        "opt.decay_scope = weights (w decays, b does not), opt.momentum = "
        "0.55 (without momentum the coupled and decoupled forms are the "
        "same step), eta = 0.06.",
        {"eta": 0.06, "opt.weight_decay": 0.2, "opt.momentum": 0.55},
        {"opt.decay_scope": "weights"},
        ["weight-decay-form", "weight-decay-scope"],
        {"weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all"]})


def decay_decoupled():
    return optim_vector(
        "decay-decoupled",
        "FedAvg, clients on SGD with momentum 0.5 and decoupled weight "
        "decay 0.25 (theta <- theta (1 - eta lam) before the step)",
        COMMON + "opt.momentum = 0.5, opt.weight_decay = 0.25, "
        "opt.weight_decay_form = decoupled, eta = 0.05, opt.state = reset.",
        {"eta": 0.05, "opt.momentum": 0.5, "opt.weight_decay": 0.25},
        {"opt.weight_decay_form": "decoupled"},
        ["weight-decay-form"],
        {"weight-decay-form": ["decay-form-swap"]})


def adam_server():
    return optim_vector(
        "adam-server",
        "FedAvg, clients on torch.optim.Adam(betas = (0.8, 0.95), eps = "
        "0.003), one optimizer object carried from client to client",
        COMMON + "opt.method = adam, opt.beta1 = 0.8, opt.beta2 = 0.95, "
        "opt.eps = 0.003, eta = 0.05, opt.state = server (the step count t "
        "and the moments continue across clients and rounds).",
        {"eta": 0.05, "opt.beta1": 0.8, "opt.beta2": 0.95, "opt.eps": 0.003},
        {"opt.method": "adam", "opt.state": "server"},
        ["adam-bias-correction", "optimizer-state-lifetime"],
        {"adam-bias-correction": ["adam-no-bias-correction",
                                  "adam-eps-inside"]})


def adamw():
    return optim_vector(
        "adamw",
        "FedAvg, clients on torch.optim.AdamW(betas = (0.7, 0.9), eps = "
        "0.001, weight_decay = 0.1), one per client kept across rounds",
        COMMON + "opt.method = adamw, opt.beta1 = 0.7, opt.beta2 = 0.9, "
        "opt.eps = 0.001, opt.weight_decay = 0.1 (theta <- theta (1 - eta "
        "lam) before the Adam step), eta = 0.04, opt.state = client.",
        {"eta": 0.04, "opt.beta1": 0.7, "opt.beta2": 0.9, "opt.eps": 0.001,
         "opt.weight_decay": 0.1},
        {"opt.method": "adamw", "opt.state": "client"},
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime"],
        {"weight-decay-form": ["decay-form-swap"],
         "adam-bias-correction": ["adam-no-bias-correction"]})


def clip():
    return optim_vector(
        "clip",
        "FedAvg, clients clip their gradient norm at 2.5 "
        "(clip_grad_norm_ before an SGD step with momentum 0.6 and weight "
        "decay 0.15), active on some steps only",
        COMMON + "opt.clip = norm, opt.clip_norm = 2.5: d <- d * 2.5 / "
        "(||d|| + 1e-6) when that is < 1, the norm over w and b together, "
        "on the loss gradient before the weight decay; opt.momentum = 0.6, "
        "opt.weight_decay = 0.15 (coupled), eta = 0.05.",
        {"eta": 0.05, "opt.clip_norm": 2.5, "opt.momentum": 0.6,
         "opt.weight_decay": 0.15},
        {"opt.clip": "norm"},
        ["clip-scope"],
        {"clip-scope": ["clip-after-decay", "clip-per-block"]})


def decay_no_momentum():
    """Weight decay without momentum: torch.optim.SGD(momentum = 0,
    dampening = 0.4, weight_decay = 0.3) keeps no momentum buffer, so the
    dampening changes nothing.  The vector is also shown to move when a
    buffer is kept at mu = 0 (every step after a block's first dampened)
    and when the decay is dropped (an optimizer taken as plain SGD because
    mu = 0), besides its flag's bug."""
    name, vec = optim_vector(
        "decay-no-momentum",
        "FedAvg, clients on torch.optim.SGD(momentum = 0, dampening = 0.4, "
        "weight_decay = 0.3) on the weights only: decay without momentum, "
        "the dampening unread",
        COMMON + "opt.weight_decay = 0.3, coupled (d <- d + lam theta), "
        "opt.decay_scope = weights (w decays, b does not), opt.momentum = 0 "
        "with opt.dampening = 0.4: torch.optim.SGD keeps no buffer without "
        "momentum, so theta <- theta - eta (d + lam theta) and the dampening "
        "is read nowhere; eta = 0.07, opt.state = reset.",
        {"eta": 0.07, "opt.weight_decay": 0.3, "opt.dampening": 0.4},
        {"opt.decay_scope": "weights"},
        ["weight-decay-scope"],
        {"weight-decay-scope": ["decay-scope-all"]})
    exp, tol = vec["expected"], vec["tolerance"]

    def run_with(hyper, bugs=px.NO_BUGS):
        alg = {"name": "fedavg",
               "hyperparameters": dict({"eta": 0.07}, **hyper),
               "switches": {"opt.decay_scope": "weights"}}
        pr, w, trace, _ = run_opt(alg, bugs)
        return pg.expected(trace, w=w)

    # a buffer kept at mu = 0 dampens every step after a block's first
    assert pg.detects(exp, run_with({"opt.weight_decay": 0.3,
                                     "opt.dampening": 0.4},
                                    frozenset({"buffer-without-momentum"})),
                      tol), "buffer-without-momentum"
    # the decay is live: plain SGD (no decay) gives other numbers
    assert pg.detects(exp, run_with({}), tol), "weight decay dropped"
    return name, vec


MAKERS = (momentum_pytorch, momentum_classical, nesterov_reset,
          decay_coupled_weights, decay_decoupled, adam_server, adamw, clip,
          decay_no_momentum)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
