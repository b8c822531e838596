#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, arXiv 2002.07948,
Alg. 1) with a client optimizer (opt.*): golden vectors from
golden/pflref_exact_perfedavg.py's exact replay, whose steps go through
golden/pflref_exact_optim.py's optimizer (the torch.optim.SGD and
torch.optim.Adam update rules, written from their documentation) once the
spec sets an opt.* away from its default.  Exact fractions for SGD with
momentum and weight decay; Adam's square roots and the values after them at
60 decimal digits.

What the optimizer steps (docs/algorithms/perfedavg.md; perfedavg.opt_steps):
  meta (the paper's reading, the default): the meta step alone, on
       d = q − α ∇²f(w; D″) q (FO: d = q) with step size β; the inner step
       w̃ = w − α ∇f(w; D) stays the plain step that defines the MAML
       objective F(w) = f(w − α ∇f(w)) (eq. (3)).
  both (TsingZ0/PFLlib d832e76f6a23, system/flcore/clients/
       clientperavg.py:16 one PerAvgOptimizer, :51 self.optimizer.step()
       for the α step, :69-70 the parameters restored, :72
       self.optimizer.step(beta=self.beta)): the α step from w into w̃ is
       an optimizer step of size α and the β step another of size β, one
       state carried from the first to the second, so a momentum buffer or
       Adam's moments and step count move twice per local step.

Vectors (ids perfedavg/worked/<name>, files worked-<name>.json):
  linear-momentum-decay-client   exact variant, SGD momentum 0.75 with
                                 weight decay 1/16 (coupled), opt.state =
                                 client: each client's buffer carried
                                 across its rounds; opt_steps = meta
  linear-adam-both-hf            HF variant (δ = 1/4), Adam (β₁ = 0.8125,
                                 β₂ = 0.875, ε = 1/1024), opt_steps =
                                 both, opt.state = reset
  linear-pfllib-momentum-reset   preset pfllib (FO, n_i weights, two
                                 train() calls a round, opt_steps = both)
                                 with SGD momentum 0.625 and opt.state =
                                 reset: a new optimizer at each of the two
                                 calls, so the buffer restarts mid-round

Each vector asserts what makes it able to fail: every flagged bug moves a
value far outside the tolerance (pflref_golden.check_mutants), the other
state lifetimes and the other opt_steps give other numbers.

    /usr/bin/python3 golden/perfedavg/make_optim.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)

import pflref_exact_optim as po          # noqa: E402
import pflref_exact_perfedavg as pa      # noqa: E402
import pflref_golden as pg               # noqa: E402

GENERATOR = ("golden/perfedavg/make_optim.py with golden/pflref_exact_perfedavg.py "
             "and golden/pflref_exact_optim.py (exact fractions; decimal square "
             "roots at 60 digits)")
SOURCE = (f"{pg.NOTES} §4 (Per-FedAvg); Fallah, Mokhtari, Ozdaglar, NeurIPS "
          "2020, Alg. 1; torch.optim.SGD and torch.optim.Adam documented "
          "update rules; TsingZ0/PFLlib d832e76f6a23 "
          "system/flcore/clients/clientperavg.py:16, :51, :69-72 (one "
          "optimizer object stepping the α and the β step)")

LINEAR = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
# dyadic inputs: the exact runs keep short denominators, every value
# distinct
CLIENTS = [
    {"X": [[1.375, -0.625], [-0.4375, 1.3125], [0.8125, 0.3125],
           [0.5625, -1.0625], [-0.8125, 0.6875], [1.1875, 1.4375]],
     "y": [1.125, -0.8125, 0.9375, 0.3125, -0.4375, 1.0625]},
    {"X": [[-1.1875, 0.5], [0.3125, -1.4375], [1.0625, 0.75],
           [-0.5625, -0.25]],
     "y": [-1.25, 0.625, 1.4375, -0.5625]},
    {"X": [[0.6875, 1.1875], [-1.3125, -0.375], [0.25, -0.875],
           [1.5, 0.375], [-0.75, 1.0]],
     "y": [1.1875, -1.375, -0.3125, 1.625, 0.1875]},
]
INIT = {"kind": "given", "w": [0.125, -0.375, 0.1875]}
# three rounds, S = {0, 1}, {1, 2}, {0, 2}; clients take one or two local
# steps (three batches each), the batches changing from step to step
ROUNDS = [
    {"clients": [0, 1],
     "batches": [[[0, 1], [2, 5], [3, 0], [1, 3], [4, 2], [2, 1]],
                 [[0, 1], [2, 3], [1]]]},
    {"clients": [1, 2],
     "batches": [[[3, 2], [0], [1, 2]],
                 [[0, 1], [2, 3], [4], [3, 0], [1, 4], [2]]]},
    {"clients": [0, 2],
     "batches": [[[2, 0], [1], [3], [0, 3], [1, 2], [2]],
                 [[4, 2], [1, 3], [0]]]},
]
POST = [[[1, 2]], [[2, 0]], [[3, 4]]]
STEPS = ("3 rounds, at most 2 local steps per client update (each 2 "
         "gradients and a Hessian-vector product or its finite difference)")


def tolerance(exact=True):
    head = ("fp64 reference in fixed order against exact rationals of the "
            "binary inputs" if exact else
            "fp64 reference in fixed order against exact rationals of the "
            "binary inputs, Adam's square roots and the values after them at "
            "60 decimal digits (error < 1e-58)")
    return {"atol": 1e-12, "rtol": 1e-12,
            "basis": head + ": " + STEPS + "; each optimizer step a few "
            "roundings of terms below 10 in magnitude, momentum below 0.8 "
            "and Adam's normalised steps bounded, so the accumulated error "
            "stays below 1e-13; every flagged bug moves some value by more "
            "than 1e3 times the tolerance."}


def replay_expected(spec, bugs=frozenset()):
    trace, w, v, _ = pa.replay(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def differs(a, b, tol):
    return pg.detects(a, b, tol) is not None


def other_settings_differ(spec, exp, tol):
    """The other opt.state lifetimes and the other perfedavg.opt_steps are
    other runs, and so is plain SGD: the vector tells them apart."""
    sw = spec["algorithm"].setdefault("switches", {})
    for life in ("reset", "client", "server"):
        if life != po.config(spec["algorithm"])["opt.state"]:
            other = copy.deepcopy(spec)
            other["algorithm"]["switches"]["opt.state"] = life
            assert differs(exp, replay_expected(other), tol), life
    other = copy.deepcopy(spec)
    steps = pa.settings(spec["algorithm"])[1]["perfedavg.opt_steps"]
    other["algorithm"]["switches"]["perfedavg.opt_steps"] = (
        "both" if steps == "meta" else "meta")
    assert differs(exp, replay_expected(other), tol), "opt_steps"
    plain = copy.deepcopy(spec)
    plain["algorithm"]["hyperparameters"] = {
        k: v for k, v in spec["algorithm"]["hyperparameters"].items()
        if not k.startswith("opt.")}
    plain["algorithm"]["switches"] = {
        k: v for k, v in sw.items() if not k.startswith("opt.")}
    assert differs(exp, replay_expected(plain), tol), "plain"


# every participation two local steps (six batches): PFLlib's two train()
# calls a round take one step each
ROUNDS2 = [
    {"clients": [0, 1],
     "batches": [[[0, 1], [2, 5], [3, 0], [1, 3], [4, 2], [2, 1]],
                 [[3, 2], [0], [1, 2], [0, 1], [2, 3], [1]]]},
    {"clients": [0, 2],
     "batches": [[[2, 0], [1], [3], [0, 3], [1, 2], [2]],
                 [[0, 1], [2, 3], [4], [3, 0], [1, 4], [2]]]},
]


def make(name, title, description, algorithm, tol, flags, mutants,
         rounds=None):
    vid = "perfedavg/worked/" + name
    spec = pg.given_spec(title, None, LINEAR, CLIENTS, INIT, algorithm,
                         rounds or ROUNDS, post=POST)
    spec["description"] = description
    exp = replay_expected(spec)
    mutants = dict(mutants)
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = po.other_lifetimes(algorithm)
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay_expected(spec, bugs))
    other_settings_differ(copy.deepcopy(spec), exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "worked-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                              tol, exp)


def linear_momentum_decay_client():
    algorithm = {"name": "perfedavg",
                 "hyperparameters": {"alpha": 0.1875, "beta": 0.3125,
                                     "opt.momentum": 0.75,
                                     "opt.weight_decay": 0.0625},
                 "switches": {"opt.state": "client"}}
    return make(
        "linear-momentum-decay-client",
        "Per-FedAvg (exact) with torch.optim.SGD(momentum = 0.75, "
        "weight_decay = 1/16) on the meta step, one optimizer per client "
        "kept across rounds",
        "Per-FedAvg (Fallah et al. 2020, Alg. 1, exact Hessian-vector "
        "product, uniform server mean), linear model with bias, squared "
        "loss, three clients (n = 6, 4, 5), alpha = 3/16, beta = 5/16, "
        "three rounds (S = {0, 1}, {1, 2}, {0, 2}) of one or two local "
        "steps.  opt.momentum = 0.75, opt.weight_decay = 1/16 (coupled, every "
        "block), opt.state = client: the optimizer steps the meta step on "
        "d = q - alpha H q with step size beta (perfedavg.opt_steps = meta, "
        "the inner step w~ = w - alpha grad f(w; D) plain), each client's "
        "momentum buffer carried across its rounds; the personalisation "
        "theta_i = w - alpha grad f_i(w; D) is plain.",
        algorithm, tolerance(),
        ["optimizer-state-lifetime", "perfedavg-optimizer-steps",
         "weight-decay-form", "perfedavg-hessian-term"],
        {"perfedavg-optimizer-steps": ["opt-steps-flip"],
         "weight-decay-form": ["decay-form-swap"],
         "perfedavg-hessian-term": ["hessian-sign", "hessian-on-d1"]})


def linear_adam_both_hf():
    algorithm = {"name": "perfedavg",
                 "hyperparameters": {"alpha": 0.125, "beta": 0.0625,
                                     "delta": 0.25,
                                     "opt.beta1": 0.8125, "opt.beta2": 0.875,
                                     "opt.eps": 0.0009765625},
                 "switches": {"perfedavg.variant": "hf",
                              "opt.method": "adam",
                              "perfedavg.opt_steps": "both"}}
    return make(
        "linear-adam-both-hf",
        "Per-FedAvg (HF) with one torch.optim.Adam stepping both the alpha "
        "and the beta step (PFLlib's one optimizer object)",
        "Per-FedAvg (Fallah et al. 2020, Alg. 1, HF with delta = 1/4, "
        "uniform server mean), linear model with bias, squared loss, three "
        "clients (n = 6, 4, 5), alpha = 1/8, beta = 1/16, three rounds (S = "
        "{0, 1}, {1, 2}, {0, 2}) of one or two local steps.  opt.method = "
        "adam (beta1 = 0.8125, beta2 = 0.875, eps = 1/1024), opt.state = "
        "reset (a new optimizer per client update), perfedavg.opt_steps = "
        "both: w~ is Adam's step of size alpha from w on grad f(w; D), and "
        "the meta step Adam's step of size beta from w on q - alpha d, one "
        "state (moments and step count) through both (TsingZ0/PFLlib "
        "clientperavg.py:51 and :72); the personalisation is plain.",
        algorithm, tolerance(exact=False),
        ["optimizer-state-lifetime", "perfedavg-optimizer-steps",
         "adam-bias-correction", "perfedavg-no-restore"],
        {"perfedavg-optimizer-steps": ["opt-steps-flip", "opt-two-states"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "perfedavg-no-restore": ["no-restore"]})


def linear_pfllib_momentum_reset():
    algorithm = {"name": "perfedavg", "preset": "pfllib",
                 "hyperparameters": {"alpha": 0.15625, "beta": 0.21875,
                                     "opt.momentum": 0.625}}
    return make(
        "linear-pfllib-momentum-reset",
        "Per-FedAvg, preset pfllib, with torch.optim.SGD(momentum = 0.625) "
        "as its one client optimizer, new at each train() call",
        "Per-FedAvg under the preset pfllib (FO, n_i-weighted server, one "
        "alpha step personalisation, perfedavg.calls = two, "
        "perfedavg.opt_steps = both; constant step sizes), linear model "
        "with bias, squared loss, three clients (n = 6, 4, 5), alpha = "
        "5/32, beta = 7/32, two rounds (S = {0, 1}, {0, 2}) of two local "
        "steps each: PFLlib's two train() calls a round take one step each. "
        "opt.momentum = 0.625, opt.state = reset: the client's optimizer "
        "(its one object for the alpha and the beta step) is new at each "
        "train() call, so the buffer restarts between the round's two "
        "steps.",
        algorithm, tolerance(),
        ["optimizer-state-lifetime", "perfedavg-optimizer-steps",
         "aggregation-weights"],
        {"perfedavg-optimizer-steps": ["opt-steps-flip", "opt-two-states"],
         "aggregation-weights": ["weights-flip"]},
        rounds=ROUNDS2)


MAKERS = [linear_momentum_decay_client, linear_adam_both_hf,
          linear_pfllib_momentum_reset]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
