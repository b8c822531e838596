# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/layers/families_common.py: what the per-family layer-list
generators (make_family_*.py) share (not a generator: regenerate.sh runs
make_*.py only).

Two networks, one for each arithmetic, both with a squared loss so that
every family's exact replay (golden/audit.py's replay: pflref_exact.py for
local and finetune, pflref_exact_pfl.py for fedsim and pflego, the modules
pflref_exact_{perfedavg,apfl,interp,cfl,ifca,fedfomo,pfedhn}.py) can run
them:

  CNN    input 1×5×5; conv2d "conv" 1→2, kernel 3, stride 2, padding 1
         (2×3×3), relu, maxpool2d kernel 2 stride 1 (2×2×2, overlapping
         windows), flatten (8, NCHW), dense "fc" 8→1; every layer rational,
         so the run is exact fractions end to end.
  DEEP   input 1×7×7; conv2d "conv" 1→2, kernel 3, stride 2, padding 1
         (2×4×4), relu, maxpool2d kernel 2 stride 1 (2×3×3), avgpool2d
         kernel 2 stride 1 (2×2×2), flatten (8), dense "fc1" 8→3, tanh,
         dense "fc2" 3→2, sigmoid, dense "fc3" 2→1: every layer kind but
         batchnorm, a three-layer MLP head; 60-digit decimals (tanh,
         sigmoid).

build() runs a spec through golden/audit.py's replay (the spec as written),
guards the relu and max-pool decisions (at least 1e-6 from a kink or a
tie), measures the float64 gap of the same run with the layers in float64,
and keeps, of the candidate flags, those whose bugs (audit.py's MUTANTS for
the algorithm, the layer bugs of pflref_exact_layers.MUTANTS) move an
expected number by more than 1e3 times the tolerance; the flags in `must`
have to be earned.
"""
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import audit                       # noqa: E402
import layers_common as lc         # noqa: E402
import pflref_exact_layers as pl   # noqa: E402
import pflref_golden as pg         # noqa: E402

CNN = {"kind": "layers", "input": [1, 5, 5], "loss": "squared",
       "layers": [
           {"type": "conv2d", "name": "conv", "out_channels": 2, "kernel": 3,
            "stride": 2, "padding": 1},
           {"type": "relu"},
           {"type": "maxpool2d", "kernel": 2, "stride": 1},
           {"type": "flatten"},
           {"type": "dense", "name": "fc", "out": 1}]}
CNN_TEXT = ("Input 1x5x5; conv (2 channels, kernel 3, stride 2, padding 1) -> "
            "2x3x3, relu, maxpool2d kernel 2 stride 1 -> 2x2x2, flatten "
            "(NCHW), fc 8 -> 1; loss (y-hat - y)^2.")

DEEP = {"kind": "layers", "input": [1, 7, 7], "loss": "squared",
        "layers": [
            {"type": "conv2d", "name": "conv", "out_channels": 2, "kernel": 3,
             "stride": 2, "padding": 1},
            {"type": "relu"},
            {"type": "maxpool2d", "kernel": 2, "stride": 1},
            {"type": "avgpool2d", "kernel": 2, "stride": 1},
            {"type": "flatten"},
            {"type": "dense", "name": "fc1", "out": 3},
            {"type": "tanh"},
            {"type": "dense", "name": "fc2", "out": 2},
            {"type": "sigmoid"},
            {"type": "dense", "name": "fc3", "out": 1}]}
DEEP_TEXT = ("Input 1x7x7; conv (2 channels, kernel 3, stride 2, padding 1) -> "
             "2x4x4, relu, maxpool2d kernel 2 stride 1 -> 2x3x3, avgpool2d "
             "kernel 2 stride 1 -> 2x2x2, flatten (NCHW), fc1 8 -> 3, tanh, "
             "fc2 3 -> 2, sigmoid, fc3 2 -> 1; loss (y-hat - y)^2.")

# DEEP2: a convolution after another parametrised layer, so the
# Hessian-vector product's tangents of a conv2d's input patches and input
# gradient are not zero (a first conv2d's are: its input is data)
DEEP2 = {"kind": "layers", "input": [1, 5, 5], "loss": "squared",
         "layers": [
             {"type": "conv2d", "name": "conv1", "out_channels": 2, "kernel": 2},
             {"type": "tanh"},
             {"type": "conv2d", "name": "conv2", "out_channels": 2, "kernel": 2},
             {"type": "relu"},
             {"type": "flatten"},
             {"type": "dense", "name": "fc", "out": 1}]}
DEEP2_TEXT = ("Input 1x5x5; conv1 (2 channels, kernel 2) -> 2x4x4, tanh, conv2 "
              "(2 channels, kernel 2) -> 2x3x3, relu, flatten (NCHW), fc 18 -> 1; "
              "loss (y-hat - y)^2.")

# the layer flags a network can earn (pflref_exact_layers.MUTANTS)
MODEL_FLAGS = {
    "CNN": ["conv-kernel-orientation", "conv-weight-layout", "conv-padding",
            "pool-gradient", "flatten-order", "state-dict-order"],
    "DEEP2": ["conv-kernel-orientation", "conv-weight-layout", "flatten-order",
              "dense-weight-layout", "activation-derivative", "state-dict-order"],
    "DEEP": ["conv-kernel-orientation", "conv-padding", "pool-gradient",
             "flatten-order", "dense-weight-layout", "activation-derivative",
             "state-dict-order"],
}


def clients(model, sizes, seed, y_of=None, extra=None):
    """Clients of dyadic rows (k/32 in ±2) and targets (k/16 in ±1.5, or
    y_of(i, rng, n)); extra(i, d) adds further members (validation sets)."""
    d = pl.size(model["input"])
    out = []
    for i, n in enumerate(sizes):
        rng = random.Random(seed + 50 + i)
        y = y_of(i, rng, n) if y_of else lc.values(rng, n, -1.5, 1.5, 16)
        c = {"X": lc.rows(seed + i, n, d), "y": y}
        if extra:
            c.update(extra(i, d))
        out.append(c)
    return out


def with_domain(domain, f):
    """f() with every pflref_exact_layers.Model built in `domain` unless it
    names its own (the float64 run of the tolerance argument)."""
    saved = pl.Model.__init__.__defaults__
    pl.Model.__init__.__defaults__ = (domain,)
    try:
        return f()
    finally:
        pl.Model.__init__.__defaults__ = saved


def earned(spec, exp, tol, candidates):
    """{flag: [the first bug that moves an expected number by > 1e3 × tol]}
    over the candidate flags, with the bugs audit.py runs for the algorithm
    (tried in audit.py's order; one earns the flag, so the rest are not
    run; a bug of several flags' classes is run once)."""
    alg = spec["algorithm"]["name"]
    out = {}
    runs = pg.MutantRuns(exp, tol)      # detects(), each run stopped early
    moves = {}                          # bug -> does it move a number
    for flag in candidates:
        classes = audit.MUTANTS[flag]
        bugs = classes.get(alg, classes.get("*", []))
        caught = []
        for bug in bugs:
            if caught:
                break
            if bug not in moves:
                try:
                    moves[bug] = runs.diff(lambda: audit.replay(spec, {bug})) is not None
                except (OverflowError, ZeroDivisionError):
                    moves[bug] = True
                except ValueError:
                    moves[bug] = False  # a bug this exact replay cannot run (an irrational root)
            if moves[bug]:
                caught.append(bug)
        if caught:
            out[flag] = caught
    return out


def build(generator, source, vid, fname, title, spec, candidates, must,
          atol=1e-13, rtol=1e-12):
    """Run, guard, measure, earn the flags, wrap: (file name, vector)."""
    assert audit.supported(spec), vid
    pl.reset_stats()
    exp = audit.replay(spec)
    lc.guard_kinks()
    exp_f = with_domain("float", lambda: audit.replay(spec))
    fp64 = lc.gap(exp, exp_f)
    decimal = pl.Model(spec["model"]).D.kind == "decimal"
    what = ("60-digit decimals of the binary inputs" if decimal
            else "exact rationals of the binary inputs")
    tol = lc.tolerance(atol, rtol, what, fp64)
    mutants = earned(spec, exp, tol, candidates)
    missing = [f for f in must if f not in mutants]
    assert not missing, f"{vid}: flags not earned: {missing}"
    flags = [f for f in candidates if f in mutants]
    gen = generator.format("60-digit decimal" if decimal else "exact fractions")
    prov = pg.provenance("independent", f"{source}; {lc.LAYERS_SOURCE}", gen)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)
