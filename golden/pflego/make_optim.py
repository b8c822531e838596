#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""PFLEGO (Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848; shared/
spec notes-pflego-fedalt-fedsim-fedrep.md §2) with a client head optimizer
(opt.*): the golden vector of golden/pflref_exact_pfl.py's exact replay,
whose cheap head steps go through golden/pflref_exact_optim.py's optimizer
(torch.optim.SGD's documented update rule) once the spec sets an opt.*
away from its default.

What the optimizer steps: step 4's τ − 1 cheap full-batch head steps on the
cached features (step size β, the head blocks W_i alone, so neither
momentum nor weight decay reaches θ); step 6's last head step stays the
plain ρ (I/r) G_i, the head half of the one SGD step on L that steps 6 and 8
make together (Proposition 1; the authors' code takes it with prog_grad,
notes §2.9 F3, F6).  The authors' JAX code takes the cheap steps plainly:
opt.* reproduces a torch reimplementation that builds the client's head
optimizer (torch.optim.SGD over the head's parameters), kept per client as
long as the head W_i (opt.state = client).

  sgd-momentum-decay-client  mlp d = 2, h = 2, k = 1, identity activation,
                             ½(ŷ − y)², head (W2, b2) personal; four
                             clients (n = 2, 3, 1, 4), I = 4, r = 2, τ = 3
                             (two cheap steps), β = 3/32, ρ = 5/64;
                             momentum 5/8, weight decay 1/8, opt.state =
                             client; I_0 = I_1 = {0, 1}

Exact fractions throughout.  The generator asserts that every flagged bug
moves a value far outside the tolerance and that the other lifetimes and
plain SGD give other numbers.

    /usr/bin/python3 golden/pflego/make_optim.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_optim as po   # noqa: E402
import pflref_exact_pfl as pp     # noqa: E402
import pflref_golden as pg        # noqa: E402

NOTES = "shared/spec notes-pflego-fedalt-fedsim-fedrep.md"
SOURCE = (f"{NOTES} §2.4 (steps 1–9), §2.9 (F3, F6); Nikoloutsopoulos, "
          "Koutsopoulos, Titsias, arXiv 2202.09848; torch.optim.SGD's "
          "documented update rule (momentum, coupled weight decay)")
GENERATOR = ("golden/pflego/make_optim.py (exact fractions, pflref_exact_pfl.py "
             "with pflref_exact_optim.py)")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two rounds of two cheap head steps (each a "
             "momentum step, a few roundings on magnitudes below 10, "
             "momentum 5/8 < 1) and one joint gradient per client, so the "
             "accumulated error stays below 1e-13; every flagged bug moves "
             "some value by more than 1e3 times the tolerance.",
}
STATE_BUGS = ["state-reset", "state-server"]

MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "loss": "half_squared",
         "activation": "identity", "hidden_bias": False, "bias": True}
CLIENTS = [
    {"X": [[1.0, 0.5], [-0.5, 1.5]], "y": [1.25, -0.75]},
    {"X": [[0.25, -1.0], [1.5, 0.75], [-1.25, 0.5]], "y": [0.5, 1.75, -1.5]},
    {"X": [[0.75, 1.25]], "y": [2.0]},
    {"X": [[-0.75, -0.25], [1.0, -1.5], [0.5, 1.0], [2.0, 0.25]],
     "y": [-1.0, 0.25, 1.5, 0.75]},
]
# W1 (2×2) the body θ; W2 (1×2), b2 the head
INIT = {"kind": "given", "w": [0.5, -0.25, 0.375, 0.625, 0.75, -0.5, 0.125]}
SPLIT = {"personal": ["head"]}
TAU = 3


def rounds():
    out = []
    for S in ([0, 1], [0, 1]):
        out.append({"clients": S,
                    "batches": [[list(range(len(CLIENTS[i]["y"])))] * TAU
                                for i in S]})
    return out


def expected(spec, bugs=frozenset()):
    w, v, trace = pp.replay(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def sgd_momentum_decay_client():
    vid = "pflego/worked/sgd-momentum-decay-client"
    title = ("PFLEGO with a client head optimizer: torch.optim.SGD(momentum = "
             "5/8, weight_decay = 1/8) on the cheap head steps, one per client")
    algorithm = {"name": "pflego",
                 "hyperparameters": {"rho": 0.078125, "pflego.beta": 0.09375,
                                     "opt.momentum": 0.625,
                                     "opt.weight_decay": 0.125},
                 "switches": {"opt.state": "client"}}
    description = (
        "mlp d = 2, h = 2, k = 1, identity activation, no hidden bias, half "
        "squared loss; the body W1 is theta, the head (W2, b2) is client i's "
        "W_i.  Four clients (n = 2, 3, 1, 4), I = 4, r = 2, tau = 3 (two "
        "cheap full-batch head steps at beta = 3/32 on the cached features, "
        "then the joint gradient and the last head step rho (I/r) G_i, rho "
        "= 5/64), SGD server, I_0 = I_1 = {0, 1}.  The "
        "cheap steps go through the client's head optimizer "
        "(opt.momentum = 5/8, opt.weight_decay = 1/8 coupled, on the head "
        "blocks alone), kept per client across rounds (opt.state = client): "
        "clients 0 and 1 resume their momentum buffers.")
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         rounds(), split=SPLIT)
    exp = expected(spec)
    flags = ["optimizer-state-lifetime", "weight-decay-form",
             "pflego-optimizer-blocks", "pflego-head-step",
             "pflego-inverse-probability"]
    mutants = {"optimizer-state-lifetime": STATE_BUGS,
               "weight-decay-form": ["decay-form-swap"],
               "pflego-optimizer-blocks": ["opt-body-moves"],
               "pflego-head-step": ["head-alpha-flip"],
               "pflego-inverse-probability": ["no-ip-factor"]}
    pg.check_mutants(vid, exp, TOL, flags, mutants,
                     lambda bugs: expected(spec, bugs))
    # plain SGD (the seed's cheap steps) is another run
    plain = copy.deepcopy(spec)
    plain["algorithm"]["hyperparameters"] = {
        "rho": 0.078125, "pflego.beta": 0.09375}
    plain["algorithm"].pop("switches")
    assert pg.detects(exp, expected(plain), TOL) is not None
    assert po.config(spec["algorithm"])["opt.state"] == "client"
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return ("worked-sgd-momentum-decay-client.json",
            pg.vector(vid, title, prov, flags, spec, TOL, exp))


MAKERS = [sgd_momentum_decay_client]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
