#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pFedMe golden vectors with the client optimizer (opt.*) in the inner
solver and with batch normalisation's running statistics moved by θ's
training passes.

pFedMe (Dinh et al., NeurIPS 2020, arXiv 2006.08848v3, Alg. 1;
golden/pflref_exact.py pfedme_round, shared/spec notes §2(c)-(f)).  The
reading (docs/algorithms/pfedme.md, "Client optimizer and batch
normalisation"): in both codes the object that steps θ on h_i(θ; w_{i,r}) =
f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖² is an optimizer of the client's model
(pFedMeOptimizer: TsingZ0/PFLlib clientpFedMe.py:21, CharlieDinh/pFedMe
userpFedMe.py:26), built once per client, and the outer line 8 is a
hand-written update of the parameter list w_{i,r}.  So opt.* is that inner
optimizer, on d = ∇f_i(θ; D) + λ(θ − w_{i,r}) (+ μθ) at step size η_p, its
state's lifetime opt.state's (reset: new at each client update, carried
across its R inner solves; client: one per client across rounds); line 8
stays the paper's.  The model that runs the K training forwards per batch
is θ's, so θ's r_μ, r_v move after each of them; w_{i,r} is a list of
parameters only, and the model uploaded with w_{i,R} carries θ's buffers:
w_{i,r+1} takes θ's running statistics (line 8 steps the parameters).

Every expected value is the spec run, as written, through the exact
replay (pflref_exact.replay_personal with pflref_exact_optim.py's
optimizer): exact fractions for SGD with momentum and weight decay,
Adam's square roots and the batch-norm standard deviations at 60 decimal
digits.  For each flag the generator runs the bugs of that class and
asserts that each moves an expected number far outside the tolerance; the
three optimizer lifetimes are asserted to give three different runs.

Vectors (file = id without "pfedme/", '/' -> '-'):
  pfedme/optim/momentum-decay-client   linear model with bias, squared
      loss, three clients (all train, S^0 = {0, 2}, S^1 = {1, 2}), the
      inner solver torch.optim.SGD(momentum = 0.6875, dampening = 0.25,
      weight_decay = 0.15625), one optimizer per client kept across rounds (PFLlib builds
      the client's optimizer once, clientpFedMe.py:21)
  pfedme/optim/adam-reset              the same problem, preset official
      (θ warm, μ = 0.001, n-weighted), the inner solver torch.optim.Adam
      (β₁ = 0.75, β₂ = 0.875, ε = 2^-7), a new optimizer every client update
  pfedme/layers/bn1d-mlp-update        layer list dense -> batchnorm1d ->
      relu -> dense (golden/layers/make_bn.py's MLP, its clients and w⁰),
      squared loss, plain SGD, bn.running = update: θ's 2 training passes
      per batch move r_μ, r_v and w_{i,r+1} takes θ's

    /usr/bin/python3 golden/pfedme/make_optim.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, os.path.join(GOLDEN, "layers"))

import pflref_exact as px           # noqa: E402
import pflref_exact_optim as po     # noqa: E402
import pflref_golden as pg          # noqa: E402

GENERATOR = ("golden/pfedme/make_optim.py with golden/pflref_exact.py and "
             "golden/pflref_exact_optim.py (exact fractions; square roots "
             "at 60 decimal digits)")
SOURCE = ("Dinh et al., NeurIPS 2020, Alg. 1 ll. 7-8; the inner solver is "
          "the optimizer of the model that steps theta (TsingZ0/PFLlib "
          "d832e76f6a23 clientpFedMe.py:21-22, :50-56; CharlieDinh/pFedMe "
          "userpFedMe.py:26, :45-50), its buffers uploaded with w_{i,R} "
          "(clientpFedMe.py:18, :68; serverbase.py:133); torch.optim.SGD / "
          "Adam documented update rules; docs/optimizers.md")

# Ditto's and the other optimizer vectors' problem (golden/optim/
# make_algorithms.py): a linear model with bias, squared loss, dyadic data
LINEAR = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS = [
    {"X": [[1.375, -0.625], [-0.4375, 1.3125], [0.8125, 0.3125]],
     "y": [1.125, -0.8125, 0.9375]},
    {"X": [[-1.1875, 0.5], [0.3125, -1.4375], [1.0625, 0.75],
           [-0.5625, -0.25]],
     "y": [-1.25, 0.625, 1.4375, -0.5625]},
    {"X": [[0.6875, 1.1875], [-1.3125, -0.375], [0.25, -0.875],
           [1.5, 0.375], [-0.75, 1.0]],
     "y": [1.1875, -1.375, -0.3125, 1.625, 0.1875]},
]
INIT = {"kind": "given", "w": [0.125, -0.375, 0.1875]}
# pfedme.train = all: every client trains in every round (R = 2 local
# rounds, one batch each), S^t aggregated
ROUNDS = [
    {"clients": [0, 1, 2], "selected": [0, 2],
     "batches": [[[0, 1], [2]], [[0, 1], [2, 3]], [[4, 2], [1, 3]]]},
    {"clients": [0, 1, 2], "selected": [1, 2],
     "batches": [[[2, 0], [1]], [[3, 2], [0]], [[0, 1], [2, 3]]]},
]


def tolerance(steps, sqrt, atol=1e-12, rtol=1e-12):
    head = ("fp64 reference in fixed order against exact rationals of the "
            "binary inputs" if not sqrt else
            "fp64 reference in fixed order against exact rationals of the "
            "binary inputs, the square roots and the values after them at "
            "60 decimal digits (error < 1e-58)")
    return {"atol": atol, "rtol": rtol,
            "basis": head + ": " + steps + "; each inner step a few "
            "roundings of terms below 10 in magnitude, the inner iteration "
            "contractive (eta_p (curvature + lambda) < 1) and line 8 a convex "
            "combination (eta lambda < 1), so the accumulated error stays "
            "below 1e-13; every flagged bug moves some value by more than "
            "1e3 times the tolerance."}


def replay(spec, bugs=frozenset()):
    w, v, trace = px.replay_personal(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def lifetimes_differ(spec, exp, tol):
    """opt.state = reset, client and server: three different runs."""
    life = po.config(spec["algorithm"])["opt.state"]
    for other in ("reset", "client", "server"):
        if other == life:
            continue
        alt = copy.deepcopy(spec)
        alt["algorithm"].setdefault("switches", {})["opt.state"] = other
        assert pg.detects(exp, replay(alt), tol) is not None, other


def plain_differs(spec, exp, tol):
    """The optimizer matters: the same spec under plain SGD is another run."""
    alt = copy.deepcopy(spec)
    for group in ("hyperparameters", "switches"):
        alt["algorithm"][group] = {
            k: v for k, v in alt["algorithm"].get(group, {}).items()
            if not k.startswith("opt.")}
    assert pg.detects(exp, replay(alt), tol) is not None


def make(vid, fname, title, description, spec, tol, flags, mutants,
         checks=()):
    spec = dict(spec, name=title, description=description)
    exp = replay(spec)
    mutants = dict(mutants)
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = po.other_lifetimes(
            spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    for check in checks:
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def base_spec(model, clients, init, algorithm, rounds):
    return pg.given_spec("", None, model, clients, init, algorithm, rounds)


def momentum_decay_client():
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.1875, "lambda": 1.25,
                                     "eta_p": 0.0625, "K": 2, "beta": 0.875,
                                     "opt.momentum": 0.6875,
                                     "opt.dampening": 0.25,
                                     "opt.weight_decay": 0.15625},
                 "switches": {"opt.state": "client"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    return make(
        "pfedme/optim/momentum-decay-client", "optim-momentum-decay-client.json",
        "pFedMe, the inner solver on torch.optim.SGD(momentum = 0.6875, "
        "dampening = 0.25, weight_decay = 0.15625), one optimizer per client "
        "kept across rounds",
        "pFedMe (Dinh et al. 2020, Alg. 1, paper switches: theta reset to "
        "w_{i,r}, uniform 1/S, all clients train), linear model with bias, "
        "squared loss, three clients (n = 3, 4, 5), eta = 0.1875, lambda = "
        "1.25, eta_p = 0.0625, K = 2, R = 2, beta = 0.875; S^0 = {0, 2}, S^1 = "
        "{1, 2}.  The optimizer steps theta on d = grad f_i(theta; D) + "
        "lambda (theta - w_{i,r}) (coupled decay d <- d + 0.15625 theta, "
        "then b <- d at a block's first step, else 0.6875 b + 0.75 d; theta "
        "<- theta - eta_p b); opt.state = client: the buffer runs on through "
        "the R inner solves of an update and into the client's next round.  "
        "Line 8 is the paper's w_{i,r+1} = w_{i,r} - eta lambda (w_{i,r} - "
        "theta).",
        spec, tolerance("K = 2 inner steps, R = 2 local rounds, 2 rounds",
                        False),
        ["optimizer-state-lifetime", "momentum-form", "weight-decay-form",
         "theta-start", "prox-reference"],
        {"momentum-form": ["dampening-first"],
         "weight-decay-form": ["decay-form-swap"],
         "theta-start": ["theta-start-flip"],
         "prox-reference": ["pfedme-ref-wt"]},
        [lifetimes_differ, plain_differs])


def adam_reset():
    algorithm = {"name": "pfedme", "preset": "official",
                 "hyperparameters": {"eta": 0.15625, "lambda": 1.75,
                                     "eta_p": 0.046875, "K": 3, "beta": 1.125,
                                     "opt.beta1": 0.75, "opt.beta2": 0.875,
                                     "opt.eps": 0.0078125},
                 "switches": {"opt.method": "adam", "opt.state": "reset"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    return make(
        "pfedme/optim/adam-reset", "optim-adam-reset.json",
        "pFedMe (preset official), the inner solver on torch.optim.Adam("
        "betas = (0.75, 0.875), eps = 2^-7), a new optimizer every client "
        "update",
        "pFedMe, preset official (theta warm across local rounds, mu = 0.001 "
        "in the inner gradient, weights n_i / sum n_j over S^t, personalised "
        "model w_{i,R}), linear model with bias, squared loss, three clients "
        "(n = 3, 4, 5), eta = 0.15625, lambda = 1.75, eta_p = 0.046875, K = "
        "3, R = 2, beta = 1.125; S^0 = {0, 2}, S^1 = {1, 2}.  Adam steps "
        "theta on d = grad f_i(theta; D) + lambda (theta - w_{i,r}) + mu "
        "theta with bias corrections 1 - 0.75^t, 1 - 0.875^t, t counting the "
        "K R = 6 steps of the client update; opt.state = reset: each client "
        "update starts with m = v = 0, t = 0.",
        spec, tolerance("K = 3 inner steps, R = 2 local rounds, 2 rounds; "
                        "Adam's normalised step bounded by eta_p / (1 - "
                        "beta1)", True),
        ["optimizer-state-lifetime", "adam-bias-correction", "theta-start"],
        {"adam-bias-correction": ["adam-no-bias-correction",
                                  "adam-eps-inside"],
         "theta-start": ["theta-start-flip"]},
        [lifetimes_differ, plain_differs])


def bn1d_mlp_update():
    import make_bn as mb
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.15625, "lambda": 0.875,
                                     "eta_p": 0.09375, "K": 2,
                                     "beta": 0.8125}}
    rounds = [
        {"clients": [0, 1, 2], "selected": [0, 2],
         "batches": [[[0, 2], [3, 1]], [[2, 0, 1], [1, 2]], [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 1, 2], "selected": [1, 2],
         "batches": [[[1, 3, 0], [2, 1]], [[0, 1], [2, 0]], [[2, 4, 3], [1, 0]]]},
    ]
    spec = base_spec(mb.MLP, mb.MLP_CLIENTS,
                     {"kind": "given", "w": [float(x) for x in mb.MLP_W0]},
                     algorithm, rounds)

    def moved(spec, exp, tol):
        """bn.running = frozen is another run (the statistics matter)."""
        alt = copy.deepcopy(spec)
        alt["algorithm"]["switches"] = {"bn.running": "frozen"}
        assert pg.detects(exp, replay(alt), tol) is not None

    return make(
        "pfedme/layers/bn1d-mlp-update", "layers-bn1d-mlp-update.json",
        "pFedMe on an MLP with batchnorm1d: theta's training passes move "
        "the running statistics, w_{i,r+1} takes theta's",
        "pFedMe (Dinh et al. 2020, Alg. 1, paper switches) on the layer list "
        "fc1 3 -> 4 (no bias), bn1 = batchnorm1d (eps = 0.03, momentum 0.2), "
        "relu, fc2 4 -> 1, loss (y-hat - y)^2 (golden/layers/make_bn.py's "
        "problem and w0); eta = 0.15625, lambda = 0.875, eta_p = 0.09375, K "
        "= 2, R = 2, beta = 0.8125; all clients train, S^0 = {0, 2}, S^1 = "
        "{1, 2}.  bn.running = update: each of theta's K gradient passes on "
        "a batch moves theta's r_mu, r_v by PyTorch's rule (unbiased "
        "n_b/(n_b - 1) s^2), the buffers never step (zero gradient, no "
        "proximal pull); line 8 steps the parameters and w_{i,r+1} takes "
        "theta's r_mu, r_v (the uploaded model is the theta model); line 10 "
        "mixes them with beta like every entry of w.",
        spec, tolerance("K = 2 inner steps, R = 2 local rounds, 2 rounds",
                        True),
        ["bn-running-frozen", "bn-running-update", "pfedme-bn-statistics",
         "theta-start"],
        {"bn-running-frozen": ["running-frozen"],
         "bn-running-update": ["momentum-flipped", "running-var-flipped"],
         "pfedme-bn-statistics": ["bn-stats-of-w"],
         "theta-start": ["theta-start-flip"]},
        [moved])


MAKERS = (momentum_decay_client, adam_reset, bn1d_mlp_update)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
