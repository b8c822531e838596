#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedRecon's opt.decay_scope = weights (issue 33 §3): one small golden
vector that runs it free of the coincidence audit's shared rules
(golden/coincidences.py SHARED_RULES).

FedRecon's client optimizer steps g alone, the split's shared blocks (the
update of Alg. 1 l. 11; l's reconstruction is plain SGD).  On the linear
model of golden/fedrecon g is the weight block w alone, so weights decays
every block the optimizer moves (all's run).  This vector takes the
regression mlp z = W2 (W1 x + b1) + b2 (identity activation, the
one the NumPy candidate's mlp takes) with the split personal = W2,
b2: g = (W1, b1), and weights decays W1 and leaves the bias b1
undecayed, so the scope excludes a block the optimizer moves.

The spec is run, as written, through pflref_exact_fedrecon.py (audit.py's
replay), whose update steps go through golden/pflref_exact_optim.py, in
exact fractions (seven local steps in a row reach denominators of about
34,000 bits, some hundredths of a second a run).  The generator asserts what makes the vector able to fail:
each flagged bug moves a value far outside the tolerance (check_mutants),
every other opt.state lifetime gives another run, the scope changes the
run (against all and against no decay: make_shared_pfl.scope_matters),
the optimizer changes the run, and the audit finds no shared coincidence for the
values covered (covered_free).

Vector (id optim/fedrecon/momentum-weights-client; file
fedrecon-momentum-weights-client.json):
  two clients (n = 4, 3), both in two rounds, one reconstruction step and
  two update steps per client and round, one evaluation step each;
  momentum 0.71875 with coupled decay 0.15625 on W1 only (b1 in the
  no-decay group), the optimizer kept per client (opt.state = client).

    /usr/bin/python3 golden/optim/make_shared_recon.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import make_shared_pfl as msp             # noqa: E402
import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402

GENERATOR = ("golden/optim/make_shared_recon.py with golden/pflref_exact_"
             "fedrecon.py and golden/pflref_exact_optim.py (exact fractions)")
SOURCE = ("torch.optim.SGD documented update rule (momentum, coupled "
          "weight_decay) over two parameter groups (weights; biases with "
          "weight_decay = 0); docs/optimizers.md (opt.decay_scope, the slots "
          "and the state lifetimes); FedRecon (Singhal et al., NeurIPS 2021, "
          "Alg. 1) and TFF's reconstruction training process as in "
          "golden/fedrecon")
replay = msp.replay

MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "activation": "identity",
         "bias": True, "loss": "half_squared"}
CLIENTS = [
    {"X": [[0.815, -0.435], [-0.365, 1.145], [1.235, 0.285], [0.525, 0.645]],
     "y": [1.385, -0.715, 0.945, 0.605]},
    {"X": [[-0.915, -0.275], [0.455, 0.935], [1.065, -0.585]],
     "y": [-1.045, 0.395, 1.155]},
]
SPLIT = {"personal": ["W2", "b2"]}
# W1 (2 x 2, row-major), b1, W2, b2
W0 = [0.65, -0.35, 0.45, 0.55, 0.15, 0.25, 0.75, -0.45, 0.05]
SUPPORT = [[0, 2], [1]]
HYPER = {"fedrecon.eta_r": 0.215, "fedrecon.eta_u": 0.135,
         "fedrecon.eta_s": 0.85, "opt.momentum": 0.71875,
         "opt.weight_decay": 0.15625}
SWITCHES = {"opt.decay_scope": "weights", "opt.state": "client"}
# (clients, reconstruction lists (from D_{i,s}), update lists (from D_{i,q}))
ROUNDS = [
    {"clients": [0, 1], "personal": [[[0]], [[1]]],
     "batches": [[[1, 3], [3]], [[0, 2], [2]]]},
    {"clients": [0, 1], "personal": [[[2, 0]], [[1]]],
     "batches": [[[3], [1]], [[2], [0, 2]]]},
]
POST = [[[0, 2]], [[1]]]

TOL = {"atol": 1e-13, "rtol": 1e-12,
       "basis": "fp64 reference in fixed order against exact rationals of the "
                "binary inputs: 3 local steps per "
                "client and round, two rounds and one evaluation step, terms "
                "below 10 in magnitude, momentum 0.71875, so the accumulated "
                "error stays below 1e-14; every flagged bug moves "
                "some value by more than 1e3 times the tolerance."}

TEXT = ("FedRecon (Singhal et al., NeurIPS 2021, Alg. 1) on the regression "
        "mlp z = W2 (W1 x + b1) + b2 (identity activation, d = 2, h = 2, half-squared loss), "
        "split personal = W2, b2: the global g = (W1, b1), the local l = (W2, "
        "b2) reconstructed from l0 each round.  Two clients (n = 4, 3), "
        "supports {0, 2} and {1} (the queries their complements), both "
        "clients in rounds 0 and 1, one reconstruction step (eta_r = 0.215, "
        "plain SGD) and two update steps of g (eta_u = 0.135) per client "
        "and round, eta_s = 0.85, one evaluation step per client.  The "
        "update steps go through the client optimizer (TFF's "
        "client_optimizer_fn): opt.momentum = 0.71875 (torch's form), "
        "opt.weight_decay = 0.15625 coupled with opt.decay_scope = weights "
        "(W1 decays, the bias b1 does not: torch's two parameter groups), "
        "opt.state = client (a client's momentum buffers carried into its "
        "next round).")


def spec():
    algorithm = {"name": "fedrecon", "hyperparameters": dict(HYPER),
                 "switches": dict(SWITCHES)}
    init = {"kind": "given", "w": W0, "support": SUPPORT}
    return pg.given_spec("", None, MODEL, CLIENTS, init, algorithm,
                         copy.deepcopy(ROUNDS), split=SPLIT, post=POST)


def optimizer_acts(s, exp, tol):
    """The optimizer changes the run: plain SGD (no opt.*) is another."""
    alt = copy.deepcopy(s)
    for k in list(alt["algorithm"]["hyperparameters"]):
        if k.startswith("opt."):
            alt["algorithm"]["hyperparameters"].pop(k)
    alt["algorithm"]["switches"] = {}
    assert pg.detects(exp, replay(alt), tol) is not None


def momentum_weights_client():
    s = dict(spec(), name="FedRecon on an mlp, the update of g = (W1, b1) on "
             "torch.optim.SGD(momentum = 0.71875, weight_decay = 0.15625 on "
             "W1 only) kept per client", description=TEXT)
    vid = "optim/fedrecon/momentum-weights-client"
    exp = replay(s)
    flags = ["weight-decay-scope", "optimizer-state-lifetime",
             "optimizer-phase", "fedrecon-split-blocks"]
    mutants = {"weight-decay-scope": ["decay-scope-all"],
               "optimizer-state-lifetime": po.other_lifetimes(s["algorithm"]),
               "optimizer-phase": ["recon-optimizer"],
               "fedrecon-split-blocks": ["recon-moves-g", "update-moves-l",
                                         "no-recon"]}
    pg.check_mutants(vid, exp, TOL, flags, mutants,
                     lambda bugs: replay(s, bugs))
    for check in (msp.covered_free([("opt.decay_scope", "weights"),
                                    ("opt.state", "client")]),
                  msp.scope_matters, msp.lifetimes_differ, optimizer_acts):
        check(s, exp, TOL)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return ("fedrecon-momentum-weights-client.json",
            pg.vector(vid, s["name"], prov, flags, s, TOL, exp))


MAKERS = (momentum_weights_client,)

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
