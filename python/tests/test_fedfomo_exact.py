# SPDX-License-Identifier: GPL-3.0-or-later
"""FedFomo: the C reference (through pflref.run) against the independent
exact-fraction replay golden/pflref_exact_fedfomo.py on random problems:
random dyadic data with validation splits, random participants, minibatches
and peer lists, both values of each switch.  They agree to 1e-13."""
import sys

import numpy as np
import pytest

import pflref
from conftest import GOLDEN

sys.path.insert(0, GOLDEN)
import pflref_exact_fedfomo as exact_fomo  # noqa: E402

TOL = 1e-13


def dyadic(rng, shape, scale=16):
    return (rng.integers(-2 * scale, 2 * scale + 1, size=shape) / scale).tolist()


def random_spec(seed):
    rng = np.random.default_rng(seed)
    N, d = int(rng.integers(3, 5)), 2
    clients = []
    for _ in range(N):
        n, nv = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        clients.append({"X": dyadic(rng, (n, d)), "y": dyadic(rng, n),
                        "X_val": dyadic(rng, (nv, d)), "y_val": dyadic(rng, nv)})
    rounds = []
    for _ in range(3):
        m = int(rng.integers(2, N + 1))
        ids = sorted(rng.choice(N, size=m, replace=False).tolist())
        batches, peers = [], []
        for i in ids:
            n = len(clients[i]["y"])
            steps = int(rng.integers(1, 3))
            batches.append([sorted(rng.choice(n, size=int(rng.integers(1, n + 1)),
                                              replace=False).tolist())
                            for _ in range(steps)])
            others = [k for k in range(N) if k != i]
            M = int(rng.integers(0, len(others) + 1))
            peers.append(rng.permutation(others)[:M].tolist())
        rounds.append({"clients": ids, "batches": batches, "peers": peers})
    switches = {"fedfomo.distance": ["l2", "l1"][seed % 2],
                "fedfomo.self": ["included", "excluded"][(seed // 2) % 2]}
    return {
        "format": "pflref-spec/1", "name": f"fedfomo random {seed}",
        "model": {"kind": "linear", "d": d, "bias": True,
                  "loss": ["half_squared", "squared"][(seed // 4) % 2]},
        "problem": {"clients": clients},
        "init": {"kind": "given", "w": dyadic(rng, d + 1)},
        "algorithm": {"name": "fedfomo", "hyperparameters": {"eta": 0.125},
                      "switches": switches},
        "schedule": {"kind": "given", "rounds": rounds},
        "output": {"trajectory": "round"},
    }


@pytest.mark.parametrize("seed", range(8))
def test_c_reference_agrees_with_the_exact_replay(seed):
    spec = random_spec(seed)
    got = pflref.run(spec).final["v"]
    _, _, v, _ = exact_fomo.replay(spec)
    want = np.array([[float(x) for x in vi] for vi in v])
    assert got.shape == want.shape
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    assert err.max() <= TOL, (seed, err.max())
    # the run did something: some client moved away from w0
    assert np.abs(want - np.asarray(spec["init"]["w"])).max() > 1e-3
