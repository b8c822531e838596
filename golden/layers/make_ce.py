#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAvg golden vector on a CNN with average pooling, tanh and sigmoid
under cross-entropy ("kind": "layers"), in 60-digit decimal arithmetic
(exp and log are not rational): golden/pflref_exact.py's FedAvg (McMahan
et al., AISTATS 2017, Alg. 1) on golden/pflref_exact_layers.py, whose
decimal gradients enter the exact algorithm as their exact values.

  layers/fedavg/avgpool-tanh-sigmoid-ce
      input 1×4×4; conv2d 1→2, kernel 3, padding 1 (2×4×4), tanh,
      avgpool2d kernel 2 (2×2×2), flatten (8), dense "fc1" 8→4, sigmoid,
      dense "fc2" 4→3; cross-entropy over 3 classes; three clients of 3, 4
      and 2 samples, minibatches, two rounds; fedavg.weights = samples.

    /usr/bin/python3 golden/layers/make_ce.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc         # noqa: E402
import pflref_golden as pg         # noqa: E402

GENERATOR = "golden/layers/make_ce.py (exact fractions, pflref_exact_layers.py)"


def avgpool_tanh_sigmoid_ce():
    model = {"kind": "layers", "input": [1, 4, 4], "loss": "cross_entropy",
             "layers": [
                 {"type": "conv2d", "name": "conv", "out_channels": 2, "kernel": 3,
                  "padding": 1},
                 {"type": "tanh"},
                 {"type": "avgpool2d", "kernel": 2},
                 {"type": "flatten"},
                 {"type": "dense", "name": "fc1", "out": 4},
                 {"type": "sigmoid"},
                 {"type": "dense", "name": "fc2", "out": 3}]}
    labels = ([0.0, 2.0, 1.0], [1.0, 0.0, 2.0, 1.0], [2.0, 0.0])
    clients = [{"X": lc.rows(700 + i, len(y), 16), "y": list(y)}
               for i, y in enumerate(labels)]
    w0 = lc.init_for(model, 17, scale=0.75)
    plans = [
        [(0, [[0, 2], [1]]), (1, [[3, 1], [0, 2]]), (2, [[1, 0]])],
        [(0, [[1, 0, 2]]), (1, [[2, 0], [3]]), (2, [[0], [1]])],
    ]
    flags = ["conv-kernel-orientation", "conv-padding", "pool-gradient",
             "activation-derivative", "dense-weight-layout", "state-dict-order",
             "batch-mean", "aggregation-weights", "stale-global", "initial-point"]
    mutants = dict(lc.COMMON_MUTANTS)
    del mutants["loss-scale"]
    mutants.update({
        "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
        "conv-padding": ["conv-pad-end", "conv-pad-replicate"],
        "pool-gradient": ["avgpool-grad-sum"],
        "activation-derivative": ["tanh-deriv-preact", "sigmoid-deriv-preact"],
        "dense-weight-layout": ["dense-w-transpose"],
        "state-dict-order": ["bias-before-weight"],
    })
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/avgpool-tanh-sigmoid-ce",
        "fedavg-avgpool-tanh-sigmoid-ce.json",
        "FedAvg, CNN with tanh, average pooling and a sigmoid hidden layer, "
        "cross-entropy over 3 classes, two rounds",
        "Input 1x4x4; conv (2 channels, kernel 3, padding 1) -> 2x4x4, tanh, "
        "avgpool2d kernel 2 -> 2x2x2, flatten, fc1 8 -> 4, sigmoid, fc2 4 -> 3; "
        "cross-entropy; eta = 0.375; three clients (n = 3, 4, 2); weights "
        "n_k / m_t.",
        model, clients, w0, 0.375, plans, flags, mutants, 1e-13, 1e-12)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [avgpool_tanh_sigmoid_ce])
