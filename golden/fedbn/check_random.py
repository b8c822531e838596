#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/fedbn/check_random.py: the fresh independent generator against
pflref on random FedBN problems (issue 21's "agrees to <= 1e-13").

    PFLREF_CLI=build/rel/pflref /usr/bin/python3 golden/fedbn/check_random.py [N] [SEED]

Draws N random problems (Python's random, seeded with SEED; default 12,
2021): an mlp with bn (relu or identity, b1 or not, cross-entropy with 2-3
classes or a squared loss), 2-3 clients of 3-6 samples with their own input
offsets, two rounds of 1-3 minibatches of at least two samples (the second
round without one client), random ε in [1e-3, 0.1], ρ in [0.05, 0.5],
η in [0.05, 0.3] and every switch drawn; runs each spec through `pflref run`
and golden/pflref_exact_fedbn.py (60-digit decimals), and compares the final
w and v and every trajectory record: |x − r| <= 1e-13 (1 + |r|).  Prints one
line per problem; exit 0 when all agree, 1 otherwise.  A problem whose relu
decision falls within 1e-9 of its kink is drawn again.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_fedbn as fb   # noqa: E402
import pflref_golden as pg        # noqa: E402

TOL = 1e-13


def draw(rng):
    d, h = rng.randint(1, 3), rng.randint(1, 4)
    ce = rng.random() < 0.5
    k = rng.randint(2, 3) if ce else 1
    model = {"kind": "mlp", "d": d, "h": h, "k": k,
             "loss": "cross_entropy" if ce else rng.choice(["squared", "half_squared"]),
             "activation": rng.choice(["relu", "identity"]),
             "hidden_bias": rng.random() < 0.5, "bn": True,
             "bn_eps": rng.uniform(1e-3, 0.1), "bn_momentum": rng.uniform(0.05, 0.5)}
    N = rng.randint(2, 3)
    clients = []
    for i in range(N):
        n = rng.randint(3, 6)
        off = [rng.uniform(-2, 2) for _ in range(d)]
        X = [[off[c] + rng.uniform(-1, 1) for c in range(d)] for _ in range(n)]
        y = [float(rng.randrange(k)) if ce else rng.uniform(-2, 2) for _ in range(n)]
        clients.append({"X": X, "y": y})
    P = fb.Model(model).P
    M = fb.Model(model)
    w = [rng.uniform(-1, 1) for _ in range(P)]
    for q in range(h):
        w[M.at["gamma"] + q] += 1.5
        w[M.at["r_v"] + q] = rng.uniform(0.5, 2)
    rounds = []
    for t in range(2):
        who = list(range(N)) if t == 0 else sorted(rng.sample(range(N), N - 1))
        batches = []
        for i in who:
            n = len(clients[i]["y"])
            batches.append([rng.sample(range(n), rng.randint(2, n))
                            for _ in range(rng.randint(1, 3))])
        rounds.append({"clients": who, "batches": batches})
    algorithm = {"name": "fedbn", "hyperparameters": {"eta": rng.uniform(0.05, 0.3)},
                 "switches": {"fedbn.weights": rng.choice(["uniform", "samples"]),
                              "fedbn.bn": rng.choice(["local", "shared"]),
                              "fedbn.running_var": rng.choice(["unbiased", "biased"])}}
    return pg.given_spec("random FedBN problem", None, model, clients,
                         {"kind": "given", "w": w}, algorithm, rounds)


def worst(spec, result):
    fb.STATS["min_u"] = None
    trace, w, v, _ = fb.replay(spec)
    low = fb.STATS["min_u"]
    if low is not None and low < 1e-9:
        return None
    return pg.worst_error(pg.expected(trace, w=w, v=v), result)


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 12
    seed = int(argv[2]) if len(argv) > 2 else 2021
    cli = os.environ.get("PFLREF_CLI", "build/rel/pflref")
    rng = random.Random(seed)
    bad, done = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        while done < n:
            spec = draw(rng)
            path, out = os.path.join(tmp, "s.json"), os.path.join(tmp, "r.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            rc = subprocess.run([cli, "run", path, "-o", out]).returncode
            if rc != 0:
                print("FAIL problem %d: pflref run exited %d" % (done, rc))
                bad += 1
                done += 1
                continue
            with open(out) as f:
                e = worst(spec, json.load(f))
            if e is None:
                continue                     # a relu decision at its kink
            ok = e <= TOL
            bad += not ok
            print("%s problem %d: max |x - r|/(1 + |r|) = %.3g" % ("ok  " if ok else "FAIL", done, e))
            done += 1
    print("check_random: %d of %d random FedBN problems agree to %g" % (n - bad, n, TOL))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
