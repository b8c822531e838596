#!/usr/bin/python3
"""crosscheck_models.py: the PyTorch candidates on the models no golden vector
of their algorithms uses (softmax regression, the ReLU mlp), against the
reference's own run.

No golden vector of fedavg, pfedme, ditto or fedalt has a softmax or a ReLU
mlp model, so these cases compare the candidates with `pflref run` on small
specs with random data (numpy, fixed seed) and a generated schedule: the
reference's result gives w⁰ and the schedule it drew, the candidate replays
them, and every trajectory record and final value must agree within
|x − r| ≤ ATOL + RTOL·|r|.  This is the trust level of a vector frozen from
the reference (docs/validate.md, "Trust"): it pins the example's layout,
loss scaling and records to the C reference, not to an independent
derivation.

usage: crosscheck_models.py [--pflref PATH]      exit 0 all agree, 1 not
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import ditto_torch
import fedavg_torch
import fedrep_torch
import pfedme_torch

ATOL, RTOL = 1e-12, 1e-10    # a few hundred roundings of values below 10

SOFTMAX = {"kind": "softmax", "d": 3, "k": 3, "bias": True}
MLP_CE = {"kind": "mlp", "d": 3, "h": 4, "k": 3}            # ReLU, b1, b2
MLP_SQ = {"kind": "mlp", "d": 3, "h": 4, "k": 1, "loss": "squared",
          "hidden_bias": False}
GEN = {"kind": "generate", "rounds": 2, "clients_per_round": 2,
       "batches": "reshuffle", "batch_seed": 4,
       "local": {"epochs": 1, "batch_size": 2}}
CASES = [    # (name, candidate, model, algorithm, extra spec fields)
    ("fedavg-softmax", fedavg_torch.run, SOFTMAX,
     {"name": "fedavg", "hyperparameters": {"eta": 0.3}}, {}),
    ("fedavg-mlp-squared", fedavg_torch.run, MLP_SQ,
     {"name": "fedavg", "hyperparameters": {"eta": 0.05},
      "switches": {"fedavg.weights": "uniform"}}, {}),
    ("pfedme-mlp-official", pfedme_torch.run, MLP_CE,
     {"name": "pfedme", "preset": "official",
      "hyperparameters": {"eta": 0.2, "lambda": 2.0, "eta_p": 0.1, "K": 3,
                          "beta": 1.5}}, {}),
    ("ditto-softmax-moving", ditto_torch.run, SOFTMAX,
     {"name": "ditto", "hyperparameters": {"eta": 0.25, "lambda": 0.7},
      "switches": {"ditto.prox_ref": "moving"}}, {}),
    ("fedrep-mlp-post", fedrep_torch.run, MLP_CE,
     {"name": "fedalt", "preset": "fedrep",
      "hyperparameters": {"gamma_u": 0.2, "gamma_v": 0.3, "tau_v": 1,
                          "eta_ft": 0.15}},
     {"post": {"steps": 2, "batch_size": 2}}),
]


def problem(model, rng):
    """Three clients of random data (n = 4, 3, 5): labels for a classifier,
    real targets for the squared loss."""
    clients = []
    for n in (4, 3, 5):
        X = rng.normal(size=(n, model["d"])).round(3)
        if model.get("loss", "cross_entropy") == "cross_entropy":
            y = rng.integers(0, model["k"], size=n).astype(float)
        else:
            y = rng.normal(size=n).round(3)
        clients.append({"X": X.tolist(), "y": y.tolist()})
    return {"clients": clients}


def key(rec):
    return tuple(rec.get(k) for k in ("event", "phase", "round", "client",
                                      "step", "name"))


def compare(ref, cand):
    """Max abs error over every reference record and final value; raises
    AssertionError naming the first record that differs or is missing."""
    got = {key(r): r["value"] for r in cand["trajectory"]}
    pairs = [(key(r), r["value"]) for r in ref["trajectory"]]
    for name, value in ref["final"].items():
        rows = value if isinstance(value[0], list) else [value]
        pairs += [(("final", name, i), row) for i, row in enumerate(rows)]
        crows = cand["final"][name]
        crows = crows if isinstance(crows[0], list) else [crows]
        got.update({("final", name, i): row for i, row in enumerate(crows)})
    worst = 0.0
    for k, r in pairs:
        assert k in got, "%s: not produced by the candidate" % (k,)
        x, r = np.asarray(got[k]), np.asarray(r)
        assert x.shape == r.shape, "%s: %d numbers, expected %d" % (
            k, x.size, r.size)
        err = np.abs(x - r)
        assert np.all(err <= ATOL + RTOL * np.abs(r)), \
            "%s: expected %s, got %s" % (k, r.tolist(), x.tolist())
        worst = max(worst, float(err.max(initial=0.0)))
    return len(pairs), worst


def run_case(cli, tmp, name, candidate, model, algorithm, extra, rng):
    spec = {"format": "pflref-spec/1", "name": name, "model": model,
            "problem": problem(model, rng),
            "init": {"kind": "gaussian", "seed": 3, "sd": 0.5},
            "algorithm": algorithm, "schedule": dict(GEN, **extra),
            "output": {"trajectory": "step"}}
    if algorithm["name"] == "fedalt":
        spec["schedule"]["local"] = {"steps": 3, "batch_size": 2}
    path, out = os.path.join(tmp, name + ".json"), os.path.join(tmp, "ref.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    subprocess.run([cli, "run", path, "-o", out], check=True)
    with open(out) as f:
        ref = json.load(f)
    replay = dict(spec, init={"kind": "given", "w": ref["w0"]},
                  schedule=ref["schedule"])
    cand = candidate({"format": "pflref-golden/1", "id": name,
                      "spec": replay})
    return compare(ref, cand)


def main(argv):
    cli = argv[argv.index("--pflref") + 1] if "--pflref" in argv \
        else "build/rel/pflref"
    rng = np.random.default_rng(20260)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, candidate, model, algorithm, extra in CASES:
            try:
                n, err = run_case(cli, tmp, name, candidate, model,
                                  algorithm, extra, rng)
                print("agree %s: %d records, max abs err %.3g" % (name, n, err))
            except AssertionError as e:
                print("DIFFER %s: %s" % (name, e))
                bad += 1
    print("crosscheck: %d of %d cases agree with pflref run"
          % (len(CASES) - bad, len(CASES)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
# SPDX-License-Identifier: GPL-3.0-or-later
