# SPDX-License-Identifier: GPL-3.0-or-later
"""pFedHN: the C reference (through pflref.run) against the independent
exact-fraction replay golden/pflref_exact_pfedhn.py on random problems:
random dyadic data, a random client per round, minibatches, random linear
hypernetworks with and without b_h, α_v given or not, the linear, the
regression mlp and the softmax (cross-entropy) targets, and on some
problems the authors' momentum, weight decay and clipping.  They agree to 1e-13 on the personal models
h(v_j; φ) and on the final W_h, b_h and embeddings the result records."""
import sys

import numpy as np
import pytest

import pflref
from conftest import GOLDEN

sys.path.insert(0, GOLDEN)
import pflref_exact_pfedhn as exact_hn  # noqa: E402

TOL = 1e-13


def dyadic(rng, shape, scale=8):
    return (rng.integers(-2 * scale, 2 * scale + 1, size=shape) / scale).tolist()


def random_spec(seed):
    rng = np.random.default_rng(seed)
    N, d = int(rng.integers(2, 5)), 2
    mlp = seed % 4 == 3
    softmax = seed % 4 == 1
    k = 3
    if softmax:
        # cross-entropy on k = 3 classes (the replay's 60-digit softmax)
        model = {"kind": "softmax", "d": d, "k": k, "bias": bool(seed % 8 == 1),
                 "loss": "cross_entropy"}
        P = k * d + (k if seed % 8 == 1 else 0)
    elif mlp:
        model = {"kind": "mlp", "d": d, "h": 2, "k": 1, "activation": "relu",
                 "loss": "half_squared"}
        P = 2 * d + 2 + 2 + 1
    else:
        model = {"kind": "linear", "d": d, "bias": bool(seed % 2),
                 "loss": ["half_squared", "squared"][(seed // 2) % 2]}
        P = d + (1 if seed % 2 else 0)
    e = int(rng.integers(1, 4))
    clients = []
    for _ in range(N):
        n = int(rng.integers(2, 5))
        y = rng.integers(0, k, size=n).tolist() if softmax else dyadic(rng, n)
        clients.append({"X": dyadic(rng, (n, d)), "y": y})
    rounds = []
    for _ in range(2 if mlp else 4):
        i = int(rng.integers(0, N))
        n = len(clients[i]["y"])
        steps = int(rng.integers(1, 3))
        rounds.append({"clients": [i], "batches": [[
            sorted(rng.choice(n, size=int(rng.integers(1, n + 1)),
                              replace=False).tolist())
            for _ in range(steps)]]})
    bias = seed % 3 != 0
    hn = {"W": dyadic(rng, (P, e)), "v": dyadic(rng, (N, e))}
    if bias:
        hn["b"] = dyadic(rng, P)
    hp = {"eta": 0.125, "alpha": 0.25}
    if seed % 2 == 0:
        hp["pfedhn.alpha_v"] = 0.375
    # the authors' code's departures on some seeds (notes §4.3 H1-H4)
    switches = {"pfedhn.hn_bias": "on" if bias else "off"}
    if seed % 5 in (1, 4) and not mlp:
        switches.update({"pfedhn.outer_opt": "sgd_momentum_wd",
                         "pfedhn.inner_opt": "sgd_momentum_wd"})
        hp.update({"pfedhn.outer_momentum": 0.75, "pfedhn.outer_wd": 0.0625,
                   "pfedhn.inner_momentum": 0.5, "pfedhn.inner_wd": 0.125})
    if seed % 5 == 4 and not mlp:
        switches["pfedhn.clip"] = "norm"
        hp["pfedhn.clip_norm"] = 0.5
    return {
        "format": "pflref-spec/1", "name": f"pfedhn random {seed}",
        "model": model,
        "problem": {"clients": clients},
        "init": {"kind": "zeros", "hypernetwork": hn},
        "algorithm": {"name": "pfedhn", "hyperparameters": hp,
                      "switches": switches},
        "schedule": {"kind": "given", "rounds": rounds},
        "output": {"trajectory": "round"},
    }


def close(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    return err.max()


@pytest.mark.parametrize("seed", range(16))
def test_c_reference_agrees_with_the_exact_replay(seed):
    spec = random_spec(seed)
    res = pflref.run(spec)
    trace, _, v, _ = exact_hn.replay(spec)
    want = [[float(x) for x in vi] for vi in v]
    assert close(res.final["v"], want) <= TOL, seed
    # the final hypernetwork state: the last W_h, b_h and each embedding
    hn = res.raw["hypernetwork"]
    e = len(spec["init"]["hypernetwork"]["v"][0])
    W = [r["value"] for r in trace.records if r["name"] == "W_h"][-1]
    assert close(hn["W"], [[float(x) for x in W[p * e:(p + 1) * e]]
                           for p in range(len(W) // e)]) <= TOL, seed
    if "b" in spec["init"]["hypernetwork"]:
        b = [r["value"] for r in trace.records if r["name"] == "b_h"][-1]
        assert close(hn["b"], [float(x) for x in b]) <= TOL, seed
    else:
        assert "b" not in hn
    V = [[float(x) for x in row] for row in trace.state[2]]
    assert close(hn["v"], V) <= TOL, seed
    # the last round's embedding record is the sampled client's final row
    last = [r for r in trace.records if r["name"] == "embedding"][-1]
    assert close(hn["v"][last["client"]], [float(x) for x in last["value"]]) <= TOL
    # the run did something: W_h moved
    assert close(hn["W"], spec["init"]["hypernetwork"]["W"]) > 1e-3
