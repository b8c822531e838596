#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A golden vector of "prox", pFedMe's inner loop on its own, with the
client optimizer (opt.*) as the inner solver, in exact rational arithmetic.

"prox" (Dinh et al., NeurIPS 2020, arXiv 2006.08848v3, eq. (7) and Alg. 1
l. 7; golden/pflref_exact.py prox_round): the reference w is the initial
point; each participant starts from θ = w (pfedme.theta_start = reset) and
runs K steps on each of its batches.  With opt.* the object that steps θ
is the optimizer (docs/algorithms/pfedme.md, "Client optimizer and batch
normalisation"; the authors' code and PFLlib step θ with an optimizer of
the client's model, pFedMeOptimizer, built once per client: CharlieDinh/
pFedMe userpFedMe.py:26, TsingZ0/PFLlib clientpFedMe.py:21), on
d = ∇f(θ; D) + λ(θ − w) at step size η_p, its state living as opt.state
says: `client` keeps it from one round's participation to the next while
θ itself restarts at w.

The expected values are the spec run through pflref_exact.replay_personal
with pflref_exact_optim.py's optimizer (exact fractions); the exact θ̂ of
each batch is a "note" as in the other prox vectors.  For each flag the
generator runs the bugs of that class and asserts that each moves an
expected number far outside the tolerance, and that the three lifetimes
are three different runs.

Vectors (the file is the id without "prox/", '/' -> '-'):
  prox/optim/nesterov-client   linear model with bias, squared loss, three
      clients over two rounds, torch.optim.SGD(momentum = 0.5625,
      nesterov = True), one optimizer per client kept across rounds

    /usr/bin/python3 golden/prox/make_optim.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)

import pflref_exact as px           # noqa: E402
import pflref_golden as pg          # noqa: E402

GENERATOR = ("golden/prox/make_optim.py with golden/pflref_exact.py and "
             "golden/pflref_exact_optim.py (exact fractions)")
SOURCE = ("Dinh et al., NeurIPS 2020, eq. (7), Alg. 1 l. 7; the inner solver "
          "is the optimizer of the model that steps theta (TsingZ0/PFLlib "
          "d832e76f6a23 clientpFedMe.py:21; CharlieDinh/pFedMe "
          "userpFedMe.py:26); torch.optim.SGD's documented update "
          "(nesterov); docs/optimizers.md")

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
ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 1], [2]], [[0, 1, 3], [2]]]},
    {"clients": [0, 1, 2], "batches": [[[2, 0]], [[3, 2], [1, 0]],
                                       [[4, 2, 0], [1, 3]]]},
]
TOL = {"atol": 1e-12, "rtol": 1e-12,
       "basis": "fp64 reference in fixed order against exact rationals of "
       "the binary inputs: K = 3 steps per batch, at most 2 batches per "
       "participation, 2 rounds; each step a few roundings of terms below 10 "
       "in magnitude, eta_p (curvature + lambda) < 1 and momentum 0.5625, so "
       "the accumulated error stays below 1e-13; every flagged bug moves "
       "some value by more than 1e3 times the tolerance."}
STATE_BUGS = ["state-reset", "state-server"]


def replay(spec, bugs=frozenset()):
    w, v, trace = px.replay_personal(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def nesterov_client():
    vid = "prox/optim/nesterov-client"
    title = ("prox, the inner solver on torch.optim.SGD(momentum = 0.5625, "
             "nesterov = True), one optimizer per client kept across rounds")
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 1.5, "eta_p": 0.078125,
                                     "K": 3, "opt.momentum": 0.5625},
                 "switches": {"opt.nesterov": "on", "opt.state": "client"}}
    spec = pg.given_spec(
        title,
        "pFedMe's inner loop alone (Dinh et al. 2020, eq. (7)), reference w "
        "= init.w, linear model with bias, squared loss, three clients (n = "
        "3, 4, 5); lambda = 1.5, eta_p = 0.078125, K = 3, theta reset to w "
        "at each participation.  The optimizer steps theta on d = grad "
        "f(theta; D) + lambda (theta - w): b <- d at a block's first step, "
        "else 0.5625 b + d; theta <- theta - eta_p (d + 0.5625 b) "
        "(nesterov); opt.state = client: clients 0 and 1 carry their buffer "
        "and step count from round 0 into round 1, client 2 starts fresh.",
        LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    exp = replay(spec)
    flags = ["optimizer-state-lifetime", "nesterov-momentum", "theta-start",
             "prox-sign"]
    mutants = {"optimizer-state-lifetime": STATE_BUGS,
               "nesterov-momentum": ["nesterov-ignored"],
               "theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"]}
    pg.check_mutants(vid, exp, TOL, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    # the optimizer matters: plain SGD is another run
    plain = copy.deepcopy(spec)
    plain["algorithm"]["hyperparameters"] = {
        k: v for k, v in algorithm["hyperparameters"].items()
        if not k.startswith("opt.")}
    plain["algorithm"]["switches"] = {}
    assert pg.detects(exp, replay(plain), TOL) is not None
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return ("optim-nesterov-client.json",
            pg.vector(vid, title, prov, flags, spec, TOL, exp))


MAKERS = (nesterov_client,)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
