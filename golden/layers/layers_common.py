# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/layers/layers_common.py: what the layer-list generators of this
folder share (not a generator: regenerate.sh runs make_*.py only).

  values(seed, n, ...)    distinct dyadic values (short exact fractions)
  init_for(model, seed)   an initial vector in the state_dict order, γ near 1
                          and running variances positive for batchnorm
  rows(seed, n, d)        n data rows of d dyadic values
  fedavg_run(...)         FedAvg (pflref_exact.fedavg_round) on the given
                          plan, any model domain, with bugs
  fp64_gap(...)           the largest |x − r|/(1 + |r|) between the exact
                          run and the same run with the model in float64
                          (this file's own order): the rounding a float64
                          implementation of these layers incurs, which the
                          tolerance must cover with a wide margin
  guard_kinks()           relu decisions and max-pool choices of the correct
                          run are at least 1e-6 from a kink or a tie
"""
import os
import random
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px          # noqa: E402
import pflref_exact_layers as pl   # noqa: E402
import pflref_golden as pg         # noqa: E402

PAPER_FEDAVG = "McMahan et al., AISTATS 2017, Alg. 1"
LAYERS_SOURCE = ("the layer definitions of docs/models.md (layers) and PyTorch's "
                 "nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d, nn.Flatten, nn.Linear, "
                 "nn.ReLU, nn.Tanh, nn.Sigmoid, nn.BatchNorm1d/2d; Ioffe & Szegedy, "
                 "ICML 2015, arXiv 1502.03167v3, Alg. 1 and §3")
KINK = Fraction(1, 10 ** 6)


def values(rng, n, lo, hi, den, avoid_zero=True):
    """n dyadic values k/den in [lo, hi], distinct while possible, never 0
    (avoid_zero) and never ±1."""
    out, seen = [], set()
    pool = [Fraction(k, den) for k in range(int(lo * den), int(hi * den) + 1)]
    pool = [q for q in pool if not (avoid_zero and q == 0) and abs(q) != 1]
    for _ in range(n):
        fresh = [q for q in pool if q not in seen] or pool
        q = rng.choice(fresh)
        seen.add(q)
        out.append(q)
    return [float(q) for q in out]


def init_for(model, seed, scale=0.75, den=512):
    """A given initial vector for the layers model: weights and biases
    distinct dyadic values in ±scale, γ in [3/4, 5/4], β small, running
    means small and running variances in [1/2, 2]."""
    rng = random.Random(seed)
    M = pl.Model(model, "float")
    w = []
    for b in M.blocks:
        n = b["size"]
        if b["is_bn"] and b["role"] == "weight":
            w += values(rng, n, 0.75, 1.25, den)
        elif b["role"] == "running_var":
            w += values(rng, n, 0.5, 2, 16)
        elif b["role"] == "running_mean":
            w += values(rng, n, -0.25, 0.25, den)
        else:
            w += values(rng, n, -scale, scale, den)
    assert len(w) == M.P
    return w


def rows(seed, n, d, lo=-2, hi=2, den=32):
    rng = random.Random(seed)
    return [values(rng, d, lo, hi, den) for _ in range(n)]


def fedavg_run(model, clients, w0_list, eta, weights, plans, bugs=frozenset(),
               domain=None, switches=None):
    """(trace, w) of FedAvg on the given plans [[(k, batches)]], exactly
    (the model's own domain, or `domain`); switches: the spec's, for
    bn.running and bn.running_var (the running statistics move after each
    gradient pass by default, PyTorch's train())."""
    bugs = frozenset(bugs)
    pr = px.Problem(model, clients).bn_switches(switches or {})
    if domain is not None:
        pr.layers = pl.Model(model, domain)
        for c, spec in zip(pr.clients, clients):
            c["data"] = pl.ClientData(pr.layers, spec)
    w0 = px.initial({"kind": "given", "w": w0_list}, pr.P, bugs)
    w, trace = list(w0), pg.Trace()
    for t, plan in enumerate(plans):
        w = px.fedavg_round(pr, w, w0, t, plan, pg.exact(eta), weights, trace, bugs)
    return trace, w


def gap(exp_a, exp_b):
    """max |x − r|/(1 + |r|) over the records of two expected objects."""
    a, b = pg._table(exp_a), pg._table(exp_b)
    worst = 0.0
    for key, ref in a.items():
        for r, x in zip(ref, b[key]):
            worst = max(worst, abs(x - r) / (1 + abs(r)))
    return worst


def guard_kinks():
    """The correct run decided every relu and every max-pool window away from
    a kink or a tie (reset with pl.reset_stats() before the run)."""
    for key in ("relu", "pool_gap"):
        low = pl.STATS[key]
        assert low is None or low > KINK, (key, low)


def tolerance(atol, rtol, what, fp64):
    """The tolerance object; the basis quotes the fp64 gap it measured."""
    assert fp64 * 100 < atol + rtol, (fp64, atol, rtol)
    return {
        "atol": atol,
        "rtol": rtol,
        "basis": (f"fp64 reference in fixed order against {what}: the same run "
                  f"with the layers in float64 (golden/pflref_exact_layers.py "
                  f"in its own order) differs from it by at most {fp64:.1e} "
                  f"relative to 1 + |r|, more than 100 times below the "
                  f"tolerance; relu and max-pool decisions are at least 1e-6 "
                  f"from a kink or a tie, so rounding cannot flip them; every "
                  f"flagged bug moves some value by more than 1e3 times the "
                  f"tolerance."),
    }


def model_mutants(flags):
    """{flag: bugs} from pflref_exact_layers.MUTANTS for the model's flags."""
    return {f: list(pl.MUTANTS[f]) for f in flags if f in pl.MUTANTS}


COMMON_MUTANTS = {
    "loss-scale": ["loss-x2"],
    "batch-mean": ["batch-sum"],
    "aggregation-weights": ["uniform-weights"],
    "stale-global": ["restart-w0"],
    "initial-point": ["init-zeros"],
}


def fedavg_vector(generator, vid, fname, title, description, model, clients, w0, eta,
                  plans, flags, mutants, atol, rtol, weights="samples", switches=None):
    """Run, guard, measure the fp64 gap, check the mutants, wrap; switches:
    further switches of the spec (bn.running, bn.running_var)."""
    switches = dict(switches or {})
    pl.reset_stats()
    trace, w = fedavg_run(model, clients, w0, eta, weights, plans, switches=switches)
    guard_kinks()
    buffers = {o + q for b, o in pl.Model(model).block_offsets() if b["is_buffer"]
               for q in range(b["size"])}
    still = [p for p in range(len(w0)) if w[p] == pg.exact(w0[p]) and p not in buffers]
    assert not still, f"{vid}: parameters that never move (a dead unit): {still}"
    exp0 = pg.expected(trace, w=w)
    f_trace, f_w = fedavg_run(model, clients, w0, eta, weights, plans,
                                 domain="float", switches=switches)
    fp64 = gap(exp0, pg.expected(f_trace, w=f_w))
    what = "exact rationals of the binary inputs"
    if pl.Model(model).D.kind == "decimal":
        what = "60-digit decimals of the binary inputs"
    tol = tolerance(atol, rtol, what, fp64)
    algorithm = {"name": "fedavg", "hyperparameters": {"eta": eta},
                 "switches": dict({"fedavg.weights": weights}, **switches)}
    spec = pg.given_spec(title, description, model, clients,
                         {"kind": "given", "w": w0}, algorithm,
                         [{"clients": [k for k, _ in plan],
                           "batches": [b for _, b in plan]} for plan in plans])
    exp = pg.checked_expected(
        vid, tol, flags, mutants, (trace, w),
        lambda bugs: fedavg_run(model, clients, w0, eta, weights, plans, bugs,
                                switches=switches),
        lambda trace, w: (trace, w, None))
    gen = generator if pl.Model(model).D.kind == "fraction" else \
        generator.replace("exact fractions", "60-digit decimal")
    prov = pg.provenance("independent", f"{PAPER_FEDAVG}; {LAYERS_SOURCE}",
                         gen)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)
