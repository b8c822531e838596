#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAvg golden vectors on small CNNs ("kind": "layers") under the squared
losses, in exact rational arithmetic end to end (golden/pflref_exact.py's
FedAvg, McMahan et al., AISTATS 2017, Alg. 1, on the layer list of
golden/pflref_exact_layers.py: every layer is rational).

  layers/fedavg/cnn-stride-pad-squared
      input 1×5×5; conv2d 1→2, kernel 3, stride 2, padding 1 (3×3 out: a
      wrong stride or padding formula changes the shape), relu, maxpool2d
      kernel 2 stride 1 (2×2×2, overlapping windows), flatten (8), dense
      8→1; (ŷ − y)²; three clients of 3, 2 and 4 samples, minibatches, two
      rounds, client 1 unsampled in round 1; fedavg.weights = samples.
  layers/fedavg/cnn-2ch-half-squared
      input 2×4×4 (two channels: the NCHW reading of the rows matters);
      conv2d 2→3, kernel 2 (3×3×3), relu, maxpool2d kernel 2 stride 1
      (3×2×2), flatten (12), dense "fc1" 12→2, relu, dense "fc2" 2→1;
      ½(ŷ − y)²; three clients, two rounds.
  layers/fedavg/cnn-inner-pad-squared
      input 1×4×4; conv2d "conv1" 1→2, kernel 2 (2×3×3), relu, conv2d
      "conv2" 2→2, kernel 2, padding 1 (2×4×4), relu, flatten (32), dense
      32→1; (ŷ − y)²; three clients, two rounds.  The padded convolution
      is the second layer, so the gradient reaching conv1 passes through
      the crop of conv2's padded input gradient to the unpadded 3×3 grid
      (a crop shifted or one row or column off moves conv1's weights);
      in the other vectors a padded conv2d is the first layer, whose input
      gradient is discarded.

Every data value and parameter is a dyadic rational (k/16, k/64), so the
exact fractions stay short enough to be fast; no two kernel entries are
equal, no kernel is symmetric under the flip or the transpose it is flagged
for (the mutant check proves each flagged bug moves a value), and every relu
and max-pool decision is at least 1e-3 from its kink or tie.

    /usr/bin/python3 golden/layers/make_cnn.py [OUTDIR]
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

GENERATOR = "golden/layers/make_cnn.py (exact fractions, pflref_exact_layers.py)"


def cnn_stride_pad():
    model = {"kind": "layers", "input": [1, 5, 5], "loss": "squared",
             "layers": [
                 {"type": "conv2d", "name": "conv1", "out_channels": 2, "kernel": 3,
                  "stride": 2, "padding": 1},
                 {"type": "relu"},
                 {"type": "maxpool2d", "kernel": 2, "stride": 1},
                 {"type": "flatten"},
                 {"type": "dense", "name": "fc", "out": 1}]}
    sizes = (3, 2, 4)
    clients = []
    for i, n in enumerate(sizes):
        X = lc.rows(100 + i, n, 25)
        clients.append({"X": X, "y": lc.values(random.Random(200 + i), n, -1.5, 1.5, 16)})
    w0 = lc.init_for(model, 7, scale=0.5)
    plans = [
        [(0, [[0, 2], [1]]), (1, [[1, 0]]), (2, [[3, 1], [0, 2]])],
        [(0, [[2, 1], [0]]), (2, [[2, 0, 3], [1]])],
    ]
    flags = ["conv-kernel-orientation", "conv-padding", "pool-gradient",
             "flatten-order", "state-dict-order", "loss-scale", "batch-mean",
             "aggregation-weights", "stale-global", "initial-point"]
    mutants = dict(lc.COMMON_MUTANTS)
    mutants.update({
        "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
        "conv-padding": ["conv-pad-end", "conv-pad-replicate"],
        "pool-gradient": ["pool-grad-first", "pool-grad-all"],
        "flatten-order": ["flatten-nhwc"],
        "state-dict-order": ["bias-before-weight"],
    })
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/cnn-stride-pad-squared", "fedavg-cnn-stride-pad-squared.json",
        "FedAvg, CNN with a stride-2 padded conv2d, relu, overlapping maxpool, "
        "dense; squared loss, two rounds",
        "Input 1x5x5; conv1 (2 channels, kernel 3, stride 2, padding 1) -> "
        "2x3x3, relu, maxpool2d kernel 2 stride 1 -> 2x2x2, flatten (NCHW), "
        "fc 8 -> 1; loss (y-hat - y)^2; eta = 0.0625; three clients (n = 3, 2, "
        "4), client 1 unsampled in round 1; weights n_k / m_t.",
        model, clients, w0, 0.0625, plans, flags, mutants, 1e-13, 1e-12)


def cnn_2ch():
    model = {"kind": "layers", "input": [2, 4, 4], "loss": "half_squared",
             "layers": [
                 {"type": "conv2d", "name": "conv", "out_channels": 3, "kernel": 2},
                 {"type": "relu"},
                 {"type": "maxpool2d", "kernel": 2, "stride": 1},
                 {"type": "flatten"},
                 {"type": "dense", "name": "fc1", "out": 2},
                 {"type": "relu"},
                 {"type": "dense", "name": "fc2", "out": 1}]}
    sizes = (2, 4, 3)
    clients = []
    for i, n in enumerate(sizes):
        clients.append({"X": lc.rows(300 + i, n, 32),
                        "y": lc.values(random.Random(400 + i), n, -1.5, 1.5, 16)})
    w0 = lc.init_for(model, 12, scale=0.5)
    plans = [
        [(0, [[1, 0]]), (1, [[2, 0], [3, 1]]), (2, [[0, 2], [1]])],
        [(0, [[0], [1]]), (1, [[1, 3, 0]]), (2, [[2, 1]])],
    ]
    flags = ["conv-kernel-orientation", "conv-weight-layout", "pool-gradient",
             "flatten-order", "dense-weight-layout", "state-dict-order",
             "loss-scale", "batch-mean", "aggregation-weights", "stale-global"]
    mutants = dict(lc.COMMON_MUTANTS)
    del mutants["initial-point"]
    mutants.update({
        "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
        "conv-weight-layout": ["conv-weight-io"],
        "pool-gradient": ["pool-grad-first", "pool-grad-all"],
        "flatten-order": ["flatten-nhwc", "input-nhwc"],
        "dense-weight-layout": ["dense-w-transpose"],
        "state-dict-order": ["bias-before-weight"],
    })
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/cnn-2ch-half-squared", "fedavg-cnn-2ch-half-squared.json",
        "FedAvg, two-channel CNN (conv2d 2 -> 3, maxpool, two dense layers), "
        "half_squared loss, two rounds",
        "Input 2x4x4 in NCHW order; conv (3 channels, kernel 2) -> 3x3x3, "
        "relu, maxpool2d kernel 2 stride 1 -> 3x2x2, flatten, fc1 12 -> 2, "
        "relu, fc2 2 -> 1; loss (1/2)(y-hat - y)^2; eta = 0.09375; three "
        "clients (n = 2, 4, 3); weights n_k / m_t.",
        model, clients, w0, 0.09375, plans, flags, mutants, 1e-13, 1e-12)


def cnn_inner_pad():
    model = {"kind": "layers", "input": [1, 4, 4], "loss": "squared",
             "layers": [
                 {"type": "conv2d", "name": "conv1", "out_channels": 2, "kernel": 2},
                 {"type": "relu"},
                 {"type": "conv2d", "name": "conv2", "out_channels": 2, "kernel": 2,
                  "padding": 1},
                 {"type": "relu"},
                 {"type": "flatten"},
                 {"type": "dense", "name": "fc", "out": 1}]}
    sizes = (3, 2, 3)
    clients = []
    for i, n in enumerate(sizes):
        clients.append({"X": lc.rows(500 + i, n, 16),
                        "y": lc.values(random.Random(600 + i), n, -1.5, 1.5, 16)})
    w0 = lc.init_for(model, 29, scale=0.5)
    plans = [
        [(0, [[2, 0], [1]]), (1, [[1, 0]]), (2, [[0, 2], [1]])],
        [(0, [[1], [0, 2]]), (2, [[2, 1, 0]])],
    ]
    flags = ["conv-kernel-orientation", "conv-padding", "conv-weight-layout",
             "flatten-order", "state-dict-order", "loss-scale", "batch-mean",
             "aggregation-weights", "stale-global", "initial-point"]
    mutants = dict(lc.COMMON_MUTANTS)
    mutants.update({
        "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
        "conv-padding": ["conv-pad-end", "conv-pad-replicate"],
        "conv-weight-layout": ["conv-weight-io"],
        "flatten-order": ["flatten-nhwc"],
        "state-dict-order": ["bias-before-weight"],
    })
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/cnn-inner-pad-squared", "fedavg-cnn-inner-pad-squared.json",
        "FedAvg, CNN whose second conv2d is padded (its input gradient "
        "cropped back to the first conv2d's output); squared loss, two rounds",
        "Input 1x4x4; conv1 (2 channels, kernel 2) -> 2x3x3, relu, conv2 (2 "
        "channels, kernel 2, padding 1) -> 2x4x4, relu, flatten (NCHW), fc "
        "32 -> 1; loss (y-hat - y)^2; eta = 0.03125; three clients (n = 3, 2, "
        "3), client 1 unsampled in round 1; weights n_k / m_t.  conv1's "
        "gradient is conv2's input gradient on the zero-padded 5x5 grid "
        "cropped to rows and columns 1..3.",
        model, clients, w0, 0.03125, plans, flags, mutants, 1e-13, 1e-12)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [cnn_stride_pad, cnn_2ch, cnn_inner_pad])
