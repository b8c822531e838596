# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAvg on PFLlib's FedAvgCNN with torch.optim.SGD(momentum=0.9,
weight_decay=5e-4), checked by `pflref check` (fedavgcnn_torch.py).

    PFLREF_CLI=build/rel/pflref /usr/bin/python3 -m pytest -q \
        docs/examples/pytorch/test_fedavgcnn_torch.py

What this shows is the real-code path: a torch.nn model, torch.optim's
momentum buffers and weight decay, state_dict averaging, against pflref's
layer-list model and client optimizers on the same spec.  The reference is
pflref's own output (`pflref freeze` on a spec written here: random images,
torch's default initialisation as w⁰, a given schedule), since no golden
vector exists at these sizes; its trust is that of a frozen vector
(docs/validate.md, "Trust").  The independent truth for the layers and the
optimizer rules is golden/layers/ and golden/optim/ (exact fractions and
60-digit decimals, `make check-golden`).

The cases, 3 clients × 8 samples, 2 rounds of every client, batch 4:
  - the preset fedavgcnn on [1, 28, 28] (P = 582 026), opt.state = reset,
    frozen at round level (the client_end and server records: a step-level
    vector of this model is 17 million numbers): the candidate with its
    optimizer built in train() passes; the one that builds it once in
    Client.__init__ (PFLlib's clientbase) fails, first at client 0's
    client_end of round 1;
  - the same structure as a layer list on [1, 16, 16] (dim 64, P = 90 506),
    frozen at step level: under opt.state = reset the kept buffer fails at
    round 1, client 0, step 1 (the first step whose momentum differs: round
    0 starts both from b = d); under opt.state = client it passes and the
    per-update optimizer fails at that same step; torch.optim.Adam
    (opt.method = adam, reset) passes.
Skipped when torch is not importable.  About 15 s of CPU, most of it
`pflref freeze` and `pflref check` reading and writing the records
(P numbers each).
"""
import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fedavgcnn_torch                              # noqa: E402
from torch_common import write_result               # noqa: E402

CLI = os.path.abspath(os.environ.get("PFLREF_CLI", "build/rel/pflref"))
SGD = {"opt.momentum": 0.9, "opt.weight_decay": 5e-4}


def layer_list(k):
    """FedAvgCNN written out as a layer list, named as the preset names it."""
    return [
        {"type": "conv2d", "name": "conv1.0", "out_channels": 32, "kernel": 5},
        {"type": "relu", "name": "conv1.1"},
        {"type": "maxpool2d", "name": "conv1.2", "kernel": 2},
        {"type": "conv2d", "name": "conv2.0", "out_channels": 64, "kernel": 5},
        {"type": "relu", "name": "conv2.1"},
        {"type": "maxpool2d", "name": "conv2.2", "kernel": 2},
        {"type": "flatten", "name": "flatten"},
        {"type": "dense", "name": "fc1.0", "out": 512},
        {"type": "relu", "name": "fc1.1"},
        {"type": "dense", "name": "fc", "out": k}]


def make_spec(name, model, eta, hyper, switches, state, seed):
    """A FedAvg spec: w⁰ = torch's default initialisation of FedAvgCNN
    (torch.manual_seed(seed)), three clients of eight random images in
    [0, 1) with labels in 0..k−1, two rounds of every client, each client's
    eight samples in two batches of four, freshly permuted each round."""
    torch.manual_seed(seed)
    net, shape = fedavgcnn_torch.build_model(model)
    rng = np.random.default_rng(seed)
    k, d = net.fc.out_features, int(np.prod(shape))
    clients = [{"X": rng.random((8, d)).round(4).tolist(),
                "y": rng.integers(0, k, 8).astype(float).tolist()}
               for _ in range(3)]
    rounds = [{"clients": [0, 1, 2],
               "batches": [[p[:4].tolist(), p[4:].tolist()]
                           for p in (rng.permutation(8) for _ in range(3))]}
              for _ in range(2)]
    return {"format": "pflref-spec/1", "name": name, "model": model,
            "problem": {"clients": clients},
            "init": {"kind": "given",
                     "w": fedavgcnn_torch.state_vector(net).tolist()},
            "algorithm": {"name": "fedavg",
                          "hyperparameters": dict(hyper, eta=eta),
                          "switches": dict(switches, **{"opt.state": state})},
            "schedule": {"kind": "given", "rounds": rounds}}


def freeze(tmp, name, spec, trajectory):
    """pflref freeze: the vector, every array in a .npy file (w⁰ goes in as
    one too: P numbers are slow as JSON); returns (path, parsed vector)."""
    spec_path, vec = tmp / (name + ".spec.json"), tmp / (name + ".json")
    np.save(tmp / (name + ".w0.npy"), np.array(spec["init"]["w"]))
    spec = dict(spec, init={"kind": "given", "w": name + ".w0.npy"})
    spec_path.write_text(json.dumps(spec))
    subprocess.run([CLI, "freeze", str(spec_path), "-o", str(vec),
                    "--id", "torch/fedavgcnn/" + name, "--trajectory",
                    trajectory, "--arrays", "files", "--inline-max", "0"],
                   check=True, stdout=subprocess.DEVNULL)
    return vec, json.loads(vec.read_text())


def check(vector, lifetime):
    """Run the candidate with the optimizer's lifetime, then `pflref check
    --json`; returns (exit status, the vector's report entry)."""
    vec, raw = vector
    result = fedavgcnn_torch.run(raw, lifetime=lifetime,
                                 base_dir=str(vec.parent))
    cand = vec.with_name(vec.stem + "." + lifetime + ".result.json")
    write_result(result, str(cand))
    done = subprocess.run([CLI, "check", str(vec), str(cand), "--json"],
                          capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert report["summary"]["compared"] == 1, done.stdout[:2000]
    return done.returncode, report["vectors"][0]


def passes(rc, entry):
    assert (rc, entry["status"]) == (0, "pass"), \
        "expected a pass: %s" % json.dumps(entry)[:2000]
    # float64 throughout: only the order of the sums differs
    assert entry["max_abs_err"] < 1e-12, entry["max_abs_err"]


def first_divergence(rc, entry):
    assert (rc, entry["status"]) == (1, "mismatch"), \
        "expected a mismatch: %s" % json.dumps(entry)[:2000]
    d = entry["first_divergence"]
    return (d["event"], d.get("round"), d.get("client"), d.get("step"),
            d["name"])


@pytest.fixture(scope="module")
def vectors():
    """The frozen vectors, each made once, on first use (in a temporary
    folder removed at the end: the records are tens of megabytes)."""
    folder = tempfile.TemporaryDirectory(prefix="pflref-fedavgcnn-")
    tmp, made = pathlib.Path(folder.name), {}
    small = {"kind": "layers", "input": [1, 16, 16], "layers": layer_list(10)}
    preset = {"kind": "layers", "input": [1, 28, 28], "preset": "fedavgcnn",
              "k": 10}
    cases = {   # name: (model, eta, opt.* hyperparameters, opt.* switches,
                #        opt.state, trajectory level)
        "mnist-reset": (preset, 0.05, SGD, {}, "reset", "round"),
        "small-reset": (small, 0.05, SGD, {}, "reset", "step"),
        "small-client": (small, 0.05, SGD, {}, "client", "step"),
        "small-adam": (small, 0.002, {"opt.weight_decay": 5e-4},
                       {"opt.method": "adam"}, "reset", "step"),
    }

    def get(name):
        if name not in made:
            model, eta, hyper, switches, state, level = cases[name]
            spec = make_spec(name, model, eta, hyper, switches, state, 11)
            made[name] = freeze(tmp, name, spec, level)
        return made[name]
    yield get
    folder.cleanup()


def test_preset_mnist_reset_passes(vectors):
    """FedAvgCNN on [1, 28, 28], the optimizer built in train()."""
    passes(*check(vectors("mnist-reset"), "train"))


def test_preset_mnist_kept_momentum_fails(vectors):
    """PFLlib's clientbase optimizer (built in __init__) where the spec
    resets: round 0 agrees, client 0 of round 1 is the first to differ
    (the vector is round-level: its client_end)."""
    got = first_divergence(*check(vectors("mnist-reset"), "init"))
    assert got == ("client_end", 1, 0, None, "w_local"), got


def test_reset_passes(vectors):
    passes(*check(vectors("small-reset"), "train"))


def test_kept_momentum_fails_at_round1_first_step(vectors):
    got = first_divergence(*check(vectors("small-reset"), "init"))
    assert got == ("step", 1, 0, 1, "w_local"), got


def test_kept_momentum_passes_under_state_client(vectors):
    passes(*check(vectors("small-client"), "init"))


def test_fresh_optimizer_fails_under_state_client(vectors):
    got = first_divergence(*check(vectors("small-client"), "train"))
    assert got == ("step", 1, 0, 1, "w_local"), got


def test_adam_passes(vectors):
    passes(*check(vectors("small-adam"), "train"))
