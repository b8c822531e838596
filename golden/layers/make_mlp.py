#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAvg golden vector on a deeper MLP ("kind": "layers", three dense
layers), exact rational arithmetic end to end (golden/pflref_exact.py's
FedAvg, McMahan et al., AISTATS 2017, Alg. 1, on golden/pflref_exact_layers.py).

  layers/fedavg/mlp3-half-squared
      input [3]; dense "0" 3→4, relu, dense "2" 4→3, relu, dense "out" 3→1
      without bias (the default names of unnamed layers are their indices
      in the list, "0" and "2"); ½(ŷ − y)²; three clients of 4, 3 and 5
      samples, minibatches, two rounds, client 2 unsampled in round 0;
      fedavg.weights = samples.

Every weight matrix is rectangular (a transposed read changes the values),
the entries are distinct dyadic rationals, and every relu decision is at
least 1e-3 from its kink.

    /usr/bin/python3 golden/layers/make_mlp.py [OUTDIR]
"""
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc         # noqa: E402
import pflref_golden as pg         # noqa: E402

GENERATOR = "golden/layers/make_mlp.py (exact fractions, pflref_exact_layers.py)"


def mlp3():
    model = {"kind": "layers", "input": [3], "loss": "half_squared",
             "layers": [
                 {"type": "dense", "out": 4},
                 {"type": "relu"},
                 {"type": "dense", "out": 3},
                 {"type": "relu"},
                 {"type": "dense", "name": "out", "out": 1, "bias": False}]}
    clients = []
    for i, n in enumerate((4, 3, 5)):
        clients.append({"X": lc.rows(500 + i, n, 3, den=16),
                        "y": lc.values(random.Random(600 + i), n, -1.5, 1.5, 16)})
    w0 = lc.init_for(model, 37, scale=0.75, den=64)
    plans = [
        [(0, [[0, 3], [2, 1]]), (1, [[2, 0], [1]])],
        [(0, [[3, 2, 1]]), (1, [[1, 2]]), (2, [[4, 0], [2, 3, 1]])],
    ]
    flags = ["dense-weight-layout", "state-dict-order", "loss-scale", "batch-mean",
             "aggregation-weights", "stale-global", "initial-point"]
    mutants = dict(lc.COMMON_MUTANTS)
    mutants.update({"dense-weight-layout": ["dense-w-transpose"],
                    "state-dict-order": ["bias-before-weight"]})
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/mlp3-half-squared", "fedavg-mlp3-half-squared.json",
        "FedAvg, three-layer MLP (3 -> 4 -> 3 -> 1, relu), half_squared loss, "
        "two rounds",
        "Layers dense 3 -> 4 (name '0'), relu, dense 4 -> 3 (name '2'), relu, "
        "dense 3 -> 1 without bias (name 'out'); loss (1/2)(y-hat - y)^2; "
        "eta = 0.15625; three clients (n = 4, 3, 5), client 2 unsampled in "
        "round 0; weights n_k / m_t.",
        model, clients, w0, 0.15625, plans, flags, mutants, 1e-13, 1e-12)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [mlp3])
