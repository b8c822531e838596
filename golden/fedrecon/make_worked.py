#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedRecon golden vectors (Singhal et al., NeurIPS 2021, arXiv
2102.03448v6, Alg. 1), in exact rational arithmetic
(pflref_exact_fedrecon.py).

The run: ŷ = x·g + l_i (global weights g, local bias l_i: split.personal =
["b"]), ½(ŷ − y)², three clients with n = 5, 3, 6 samples, supports
D_{0,s} = {0, 2}, D_{1,s} = {1, 2}, D_{2,s} = {0, 3} (so |D_{i,q}| = 3, 1, 4),
three rounds S⁰ = {0, 1}, S¹ = {1, 2}, S² = {0, 2} (each client skips one
round), minibatch reconstruction and update lists of different lengths,
η_r = 0.215, η_u = 0.135, η_s = 0.85; the evaluation reconstructs l on
one or two support batches per client.

Vectors (file = id without the folder, '/' → '-'):
  paper                 given, samples, complement, reconstruct
  last-uniform          local_init = last, weights = uniform
  examples-kept         weights = examples, eval = kept
  whole-last            query = whole (D_{i,s} = D_{i,q} = D_i), last

    /usr/bin/python3 golden/fedrecon/make_worked.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px                 # noqa: E402
import pflref_exact_fedrecon as pr_       # noqa: E402
import pflref_golden as pg                # noqa: E402

PAPER = ("Singhal, Sidahmed, Garrett, Wu, Rush, Prakash, NeurIPS 2021, arXiv "
         "2102.03448v6, Alg. 1 (FedRecon) and §3 (evaluation with "
         "reconstruction); TensorFlow Federated learning/reconstruction/"
         "training_process.py and reconstruction_utils.py (client weighting, "
         "dataset split)")
GENERATOR = "golden/fedrecon/make_worked.py (exact fractions, pflref_exact_fedrecon.py)"
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 5 local steps per client and round, three "
             "rounds and two evaluation steps, each a contraction on these data "
             "(the step size times the trace of the batch Hessian below 2, "
             "asserted), each adding a few roundings of terms below 10 in "
             "magnitude; the accumulated error stays below 1e-14, and every "
             "flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}

MODEL = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
CLIENTS = [
    {"X": [[0.815, -0.435], [-0.365, 1.145], [1.235, 0.285], [0.525, 0.645],
           [-0.915, -0.275]],
     "y": [1.385, -0.715, 0.945, 0.605, -1.045]},
    {"X": [[-1.055, 0.625], [0.445, -0.955], [0.335, 0.185]],
     "y": [-1.265, 0.835, 0.115]},
    {"X": [[0.565, 0.915], [-0.785, -0.345], [1.125, -0.665], [-0.235, 1.315],
           [0.395, 0.455], [-0.615, 0.745]],
     "y": [0.455, -1.135, 1.715, -0.385, 0.215, -0.805]},
]
SPLIT = {"personal": ["b"]}
W0 = [0.35, -0.15, 0.25]
SUPPORT = [[0, 2], [1, 2], [0, 3]]
HYPER = {"fedrecon.eta_r": 0.215, "fedrecon.eta_u": 0.135, "fedrecon.eta_s": 0.85}

# (clients, reconstruction lists (from D_{i,s}), update lists (from D_{i,q}))
ROUNDS = [
    ([0, 1], [[[0], [2, 0]], [[1]]], [[[1, 3], [4], [3]], [[0]]]),
    ([1, 2], [[[1], [2, 1]], [[3, 0]]], [[[0]], [[1, 2], [4, 5], [2]]]),
    ([0, 2], [[[2]], [[0], [3]]], [[[3, 4], [1]], [[5, 1]]]),
]
POST = [[[0, 2]], [[1, 2]], [[3], [0]]]
# query = whole: both lists draw from all of D_i (and overlap)
ROUNDS_WHOLE = [
    ([0, 1], [[[0, 4], [2]], [[1, 2]]], [[[1, 3], [4, 0]], [[0, 2], [1]]]),
    ([1, 2], [[[0]], [[3, 5], [1]]], [[[2, 1]], [[1, 2], [4, 0], [5]]]),
    ([0, 2], [[[2, 3], [1]], [[0]]], [[[3], [0, 2]], [[5, 1, 2]]]),
]
POST_WHOLE = [[[0, 1]], [[2]], [[3, 4], [0]]]


def rounds_json(rounds, drawn=None):
    """The given rounds; drawn: {t: the round's clients in drawn order}."""
    out = []
    for t, (c, p, b) in enumerate(rounds):
        r = {"clients": c}
        if drawn and t in drawn:
            r["drawn"] = drawn[t]
        r.update(personal=p, batches=b)
        out.append(r)
    return out


def assert_contractive(rounds, post):
    pr = px.Problem(MODEL, CLIENTS)
    eta = max(pg.exact(HYPER[k]) for k in ("fedrecon.eta_r", "fedrecon.eta_u"))
    for clients, personal, batches in rounds:
        for j, i in enumerate(clients):
            px.assert_contractive(pr, i, personal[j] + batches[j], eta)
    for i, steps in enumerate(post):
        px.assert_contractive(pr, i, steps, eta)


def make(name, title, description, switches, flags, mutants, whole=False):
    vid = f"fedrecon/worked/{name}"
    rounds = ROUNDS_WHOLE if whole else ROUNDS
    kept = switches.get("fedrecon.eval") == "kept"
    post = None if kept else (POST_WHOLE if whole else POST)
    assert_contractive(rounds, post or [])
    init = {"kind": "given", "w": W0}
    if not whole:
        init["support"] = SUPPORT
    algorithm = {"name": "fedrecon", "hyperparameters": dict(HYPER),
                 "switches": dict(switches)}
    spec = pg.given_spec(title, description, MODEL, CLIENTS, init, algorithm,
                         rounds_json(rounds, {2: [2, 0]} if whole else None),
                         split=SPLIT, post=post)

    def run(bugs=px.NO_BUGS):
        w, v, trace = pr_.run(spec, frozenset(bugs))
        return trace, w, v

    exp = pg.checked_expected(vid, TOL, flags, mutants, run(), run,
                              lambda trace, w, v: (trace, w, v))
    prov = pg.provenance("independent", PAPER, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, TOL, exp)


DESCRIPTION = (
    "ŷ = x·g + l_i (global weights g, local bias l_i), ½(ŷ − y)², three "
    "clients (n = 5, 3, 6), w⁰ = (0.35, −0.15, 0.25) (g⁰ = (0.35, −0.15), "
    "l⁰ = 0.25), S⁰ = {0, 1}, S¹ = {1, 2}, S² = {0, 2}; each participant "
    "takes its round's personal lists as the k_r reconstruction steps on l "
    "(η_r = 0.215) and its batches as the k_u update steps on g "
    "(η_u = 0.135); the server takes g ← g + η_s Σ w_i Δ_i / Σ w_i "
    "(η_s = 0.85). ")


def paper():
    return make(
        "paper",
        "FedRecon, paper reading: l_i ← l⁰, n_i = |D_{i,q}|, disjoint "
        "support/query, evaluation with reconstruction",
        DESCRIPTION + "Supports {0, 2}, {1, 2}, {0, 3}; weights n_i = 3, 1, 4; "
        "the evaluation reconstructs l from l⁰ on each client's post batches.",
        {}, ["fedrecon-step-sizes", "fedrecon-server-step",
             "fedrecon-split-blocks", "aggregation-weights",
             "stale-personal-state", "fedrecon-eval"],
        {"fedrecon-step-sizes": ["eta-swap"],
         "fedrecon-server-step": ["server-no-eta", "server-average"],
         "fedrecon-split-blocks": ["recon-moves-g", "update-moves-l", "no-recon"],
         "aggregation-weights": ["weights-n-total", "weights-uniform"],
         "stale-personal-state": ["init-flip"],
         "fedrecon-eval": ["eval-kept"]})


def last_uniform():
    return make(
        "last-uniform",
        "FedRecon, fedrecon.local_init = last, fedrecon.weights = uniform",
        DESCRIPTION + "Each client starts reconstruction from the l_i it "
        "kept at its last visit; the server's weights are 1; the evaluation "
        "reconstructs from the kept l_i.",
        {"fedrecon.local_init": "last", "fedrecon.weights": "uniform"},
        ["aggregation-weights", "stale-personal-state", "fedrecon-eval",
         "fedrecon-step-sizes"],
        {"aggregation-weights": ["weights-samples"],
         "stale-personal-state": ["init-flip"],
         "fedrecon-eval": ["eval-kept"],
         "fedrecon-step-sizes": ["eta-swap"]})


def examples_kept():
    return make(
        "examples-kept",
        "FedRecon, fedrecon.weights = examples (TFF NUM_EXAMPLES), "
        "fedrecon.eval = kept",
        DESCRIPTION + "The server weighs Δ_i by the examples of the update "
        "batches (4, 1; 1, 5; 3, 2 per round); no evaluation phase: the "
        "reported v_i are (g, l_i) as the last visit kept them.",
        {"fedrecon.weights": "examples", "fedrecon.eval": "kept"},
        ["aggregation-weights", "fedrecon-server-step", "fedrecon-split-blocks"],
        {"aggregation-weights": ["weights-samples", "weights-uniform"],
         "fedrecon-server-step": ["server-no-eta"],
         "fedrecon-split-blocks": ["recon-moves-g", "no-recon"]},
    )


def whole_last():
    return make(
        "whole-last",
        "FedRecon, fedrecon.query = whole (TFF simple_dataset_split_fn), "
        "fedrecon.local_init = last",
        DESCRIPTION + "No support is given: reconstruction and update both "
        "draw from all of D_i (the lists overlap); n_i = |D_i| = 5, 3, 6; "
        "each client starts from its kept l_i; round 2's clients were drawn "
        "as [2, 0] (the lists follow the ascending clients).",
        {"fedrecon.query": "whole", "fedrecon.local_init": "last"},
        ["aggregation-weights", "fedrecon-split-blocks", "stale-personal-state"],
        {"aggregation-weights": ["weights-uniform"],
         "fedrecon-split-blocks": ["update-moves-l", "no-recon"],
         "stale-personal-state": ["init-flip"]},
        whole=True)


MAKERS = [paper, last_uniform, examples_kept, whole_last]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
