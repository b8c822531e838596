#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/lora/check_random.py: the fresh independent generator against
pflref on random low-rank adapter problems (issue 21's "agrees to
<= 1e-13").

    PFLREF_CLI=build/rel/pflref /usr/bin/python3 golden/lora/check_random.py [N] [SEED]

Draws N random problems (Python's random, seeded with SEED; default 12,
2024): a softmax model (2-3 classes, bias or not), a linear model (bias or
not) or a regression mlp (relu or identity, biases or not), 2-3 clients of 2-5 samples, three rounds of 1-3 minibatches
with partial participation, every method (personal, ffa, fedavg, hetlora)
and switch drawn, the rank as large as the targets allow, HetLoRA's client
ranks, lambda and gamma drawn; runs each spec through `pflref run` and
golden/pflref_exact_lora.py (exact fractions), and compares the final w and
v and every trajectory record: |x - r| <= 1e-13 (1 + |r|).  Prints one line
per problem; exit 0 when all agree, 1 otherwise.
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

import pflref_exact_lora as pl   # noqa: E402
import pflref_golden as pg       # noqa: E402

TOL = 1e-13


def draw(rng):
    d = rng.randint(2, 3)
    u = rng.random()
    if u < 0.2:
        k = rng.randint(2, 3)
        model = {"kind": "softmax", "d": d, "k": k, "bias": rng.random() < 0.5,
                 "loss": "cross_entropy"}
        targets = rng.choice(["all", "head", "input"])
        r = rng.randint(1, min(d, k))
    elif u < 0.45:
        model = {"kind": "linear", "d": d, "bias": rng.random() < 0.5,
                 "loss": rng.choice(["squared", "half_squared"])}
        targets = rng.choice(["all", "head", "input"])
        r = 1
    else:
        h = rng.randint(2, 3)
        bias = rng.random() < 0.5
        model = {"kind": "mlp", "d": d, "h": h, "k": 1,
                 "activation": rng.choice(["relu", "identity"]),
                 "bias": bias, "hidden_bias": rng.random() < 0.5,
                 "loss": rng.choice(["squared", "half_squared"])}
        targets = rng.choice(["all", "head", "input", "input"])
        r = rng.randint(1, min(d, h)) if targets == "input" else 1
    method = rng.choice(["personal", "ffa", "fedavg", "hetlora"])
    N = rng.randint(2, 3)
    clients = []
    for _ in range(N):
        n = rng.randint(2, 5)
        clients.append({"X": [[rng.uniform(-1, 1) for _ in range(d)] for _ in range(n)],
                        "y": ([float(rng.randrange(model["k"])) for _ in range(n)]
                              if model["kind"] == "softmax" else
                              [rng.uniform(-1, 1) for _ in range(n)])})
    P = (pl.Softmax if model["kind"] == "softmax" else pl.px.Problem)(model, clients).P
    L, Q = pl.layout(model, r, targets)
    init = {"kind": "given", "w": [rng.uniform(-1, 1) for _ in range(P)],
            "lora": [rng.uniform(-1, 1) for _ in range(Q)]}
    hp = {"eta": rng.uniform(0.05, 0.3), "lora.r": r,
          "lora.alpha": rng.uniform(0.5, 3)}
    sw = {"lora.method": method, "lora.targets": targets,
          "lora.weights": rng.choice(["samples", "uniform"])}
    if method == "hetlora":
        init["lora_ranks"] = [rng.randint(1, r) for _ in range(N)]
        hp["hetlora.lambda"] = rng.choice([0, rng.uniform(0.1, 2)])
        hp["hetlora.gamma"] = rng.uniform(0.3, 0.9)
        sw["hetlora.weights"] = rng.choice(["sparsity", "uniform", "samples"])
        sw["hetlora.scaling"] = rng.choice(["none", "alpha"])
    rounds = []
    for t in range(3):
        who = list(range(N)) if t == 0 else sorted(rng.sample(range(N), rng.randint(1, N)))
        batches = []
        for i in who:
            n = len(clients[i]["y"])
            batches.append([rng.sample(range(n), rng.randint(1, n))
                            for _ in range(rng.randint(1, 3))])
        rounds.append({"clients": who, "batches": batches})
    return pg.given_spec("random lora problem", None, model, clients, init,
                         {"name": "lora", "hyperparameters": hp, "switches": sw},
                         rounds)


def worst(spec, result):
    trace, w, v, _ = pl.replay(spec)
    return pg.worst_error(pg.expected(trace, w=w, v=v), result,
                          same_records=True)


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 12
    seed = int(argv[2]) if len(argv) > 2 else 2024
    cli = os.environ.get("PFLREF_CLI", "build/rel/pflref")
    rng = random.Random(seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for done in range(n):
            spec = draw(rng)
            path, out = os.path.join(tmp, "s.json"), os.path.join(tmp, "r.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            rc = subprocess.run([cli, "run", path, "-o", out]).returncode
            if rc != 0:
                print("FAIL problem %d: pflref run exited %d" % (done, rc))
                bad += 1
                continue
            with open(out) as f:
                e = worst(spec, json.load(f))
            ok = e <= TOL
            bad += not ok
            sw = spec["algorithm"]["switches"]
            print("%s problem %d (%s, %s): max |x - r|/(1 + |r|) = %.3g"
                  % ("ok  " if ok else "FAIL", done, spec["model"]["kind"],
                     sw["lora.method"], e))
    print("check_random: %d of %d random lora problems agree to %g" % (n - bad, n, TOL))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
