# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.Capture and pflref.torch: an unmodified training run recorded as
it happens (every sampler kind, random_split, ragged batches), the layout
of a torch module checked (a model that does not map named), the bad
inputs refused naming round, client and record with nothing written, and
the examples of docs/examples/capture/ passing, their one-line bugs
failing at the right first divergence."""
import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import optional
import pflref
from conftest import EXAMPLES, PYTHON

CAPTURE_EXAMPLES = os.path.join(EXAMPLES, "capture")


@pytest.fixture
def torch():
    return optional.require("torch")


def _run(code, cwd):
    env = dict(os.environ, PYTHONPATH=PYTHON, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


# ---- the NumPy capture: no torch ---------------------------------------------

def _grad(w, X, y):
    """∇ of the mean squared error of ŷ = x·w[:d] + w[d]."""
    Xb = np.hstack([X, np.ones((len(X), 1))])
    return 2.0 / len(y) * Xb.T @ (Xb @ w - y)


def numpy_fedavg(cap, data, rounds=((1, 2), (2, 0), (0, 1)), eta=0.1,
                 weights="samples", seed=5):
    """FedAvg in NumPy recording into cap: shuffled batches of 2."""
    rng = np.random.default_rng(seed)
    w = np.array([0.3, -0.2, 0.1])
    cap.init(w)
    n = [len(y) for _, y in data]
    for chosen in rounds:
        with cap.round():
            local = {}
            for i in chosen:
                with cap.client(i):
                    wi, perm = w.copy(), rng.permutation(n[i])
                    for s in range(0, n[i], 2):
                        b = perm[s:s + 2]
                        cap.batch(b)
                        wi = wi - eta * _grad(wi, data[i][0][b], data[i][1][b])
                    cap.record("w_local", wi)
                local[i] = wi
            m = sum(n[i] for i in local)
            c = {i: (n[i] / m if weights == "samples" else 1 / len(local))
                 for i in local}
            w = sum(c[i] * local[i] for i in sorted(local))
            cap.record("w", w)
    return w


def _data(sizes=(5, 3, 4)):
    rng = np.random.default_rng(1)
    return [(rng.normal(size=(k, 2)), rng.normal(size=k)) for k in sizes]


LINEAR = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}


def test_numpy_capture_passes_and_writes_the_documented_files(tmp_path):
    cap = pflref.Capture("fedavg", LINEAR, {"eta": 0.1})
    data = _data()
    cap.clients(data)
    numpy_fedavg(cap, data)
    verdict = cap.check(tmp_path / "out")
    assert verdict.passed, str(verdict)
    assert verdict.diagnosis is None
    names = sorted(os.listdir(tmp_path / "out"))
    assert names == ["candidate.json", "data", "report.txt", "spec.json",
                     "vector.json"]
    spec = json.loads((tmp_path / "out" / "spec.json").read_text())
    rounds = spec["schedule"]["rounds"]
    # clients ascending, the training order kept as "drawn"
    assert [r["clients"] for r in rounds] == [[1, 2], [0, 2], [0, 1]]
    assert [r["drawn"] for r in rounds] == [[1, 2], [2, 0], [0, 1]]
    # client 2 (4 samples) in round 1 is the second participant: 2 batches
    assert [len(b) for b in rounds[1]["batches"][1]] == [2, 2]
    assert sorted(sum(rounds[1]["batches"][1], [])) == [0, 1, 2, 3]
    X0 = np.load(tmp_path / "out" / "data" / "client000_X.npy")
    assert np.array_equal(X0, data[0][0])
    assert "PASS capture/fedavg" in (tmp_path / "out" / "report.txt").read_text()
    # the replay line names the files where they are, and passes
    cli = os.environ.get("PFLREF_CLI")
    if cli:
        argv = verdict.report.replay.split()
        assert argv[2] == str(tmp_path / "out" / "vector.json")
        assert subprocess.run([cli] + argv[1:]).returncode == 0


def test_numpy_capture_bug_fails_and_is_diagnosed(tmp_path):
    cap = pflref.Capture("fedavg", LINEAR, {"eta": 0.1})
    data = _data()
    cap.clients(data)
    numpy_fedavg(cap, data, weights="uniform")
    verdict = cap.check(tmp_path / "out")
    assert not verdict.passed
    assert verdict.first["event"] == "server" and verdict.first["round"] == 0
    assert "fedavg.weights = uniform" in str(verdict.diagnosis)
    assert "diagnose: matches" in (tmp_path / "out" / "report.txt").read_text()


def test_numpy_capture_never_imports_torch(tmp_path):
    code = """
import sys
sys.modules["torch"] = None           # any import of torch would fail
sys.path.insert(0, %r)
import numpy as np, pflref, test_capture
cap = pflref.Capture("fedavg", test_capture.LINEAR, {"eta": 0.1})
data = test_capture._data()
cap.clients(data)
test_capture.numpy_fedavg(cap, data)
v = cap.check("out")
print(v.passed)
""" % os.path.dirname(os.path.abspath(__file__))
    p = _run(code, tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "True"
    p = _run("import sys, pflref, pflref.torch; "
             "print('torch' in sys.modules)", tmp_path)
    assert p.stdout.strip() == "False", p.stderr


# ---- bad input: named, nothing written --------------------------------------

def _numpy_cap():
    cap = pflref.Capture("fedavg", LINEAR, {"eta": 0.1})
    cap.clients(_data())
    cap.init([0.0, 0.0, 0.0])
    return cap


def test_a_batch_index_out_of_range_names_round_client_and_batch():
    cap = _numpy_cap()
    with cap.round():
        with cap.client(0):
            cap.batch([0, 1])
        with pytest.raises(pflref.InvalidInput) as e:
            with cap.client(1):
                cap.batch([2, 3])         # client 1 has 3 samples
        cap.record("w", [0.0, 0.0, 0.0])
    assert e.value.where == "capture, round 0, client 1, batch 0"
    assert "sample index 3 out of range (client 1 has 3 samples)" in \
        str(e.value)
    assert (e.value.round, e.value.client) == (0, 1)


def test_indices_given_before_the_data_are_checked_before_writing(tmp_path):
    cap = pflref.Capture("fedavg", LINEAR, {"eta": 0.1})
    cap.init([0.0, 0.0, 0.0])
    with cap.round():
        with cap.client(1):
            cap.batch([0, 7])
            cap.record("w_local", [0.0, 0.0, 0.0])
        cap.record("w", [0.0, 0.0, 0.0])
    cap.clients(_data())
    with pytest.raises(pflref.InvalidInput, match="round 0, client 1, "
                       "batch 0: sample index 7 out of range"):
        cap.check(tmp_path / "out")
    assert os.listdir(tmp_path) == []            # nothing, not even a temp


def test_a_client_twice_in_one_round_is_refused():
    cap = _numpy_cap()
    with cap.round():
        with cap.client(2):
            cap.batch([0])
        with pytest.raises(pflref.InvalidInput,
                           match="round 0, client 2: client 2 trains twice "
                           "in one round"):
            with cap.client(2):
                cap.batch([1])


def test_a_value_of_the_wrong_size_or_not_finite_names_the_record():
    cap = _numpy_cap()
    with cap.round():
        with cap.client(0):
            cap.batch([0])
            with pytest.raises(pflref.InvalidInput,
                               match=r"round 0, client 0, record w_local: 4 "
                               r"numbers, expected 3"):
                cap.record("w_local", np.zeros(4))
            with pytest.raises(pflref.InvalidInput,
                               match=r"round 0, client 0, record w_local: "
                               r"entry 1 is nan"):
                cap.record("w_local", [0.0, np.nan, 0.0])
    with pytest.raises(pflref.InvalidInput, match=r"clients\[1\]\.X\[2, 0\]"):
        pflref.Capture("fedavg", LINEAR, {"eta": 0.1}).clients(
            [(np.zeros((2, 2)), np.zeros(2)),
             (np.array([[0, 0], [1, 1], [np.inf, 0]]), np.zeros(3))])


def test_a_refused_spec_leaves_the_previous_capture_as_it_was(tmp_path):
    out = tmp_path / "out"
    cap = pflref.Capture("fedavg", LINEAR, {"eta": 0.1})
    data = _data()
    cap.clients(data)
    numpy_fedavg(cap, data)
    assert cap.check(out).passed
    before = {p: (out / p).read_bytes() for p in ("spec.json", "vector.json",
                                                  "candidate.json")}
    bad = pflref.Capture("fedavg", LINEAR, {"eta": -0.1})
    bad.clients(data)
    numpy_fedavg(bad, data)
    with pytest.raises(pflref.InvalidInput) as e:
        bad.check(out)
    assert "eta" in e.value.where
    assert {p: (out / p).read_bytes() for p in before} == before
    assert sorted(os.listdir(tmp_path)) == ["out"]


# ---- torch: samplers ----------------------------------------------------------

def _torch_problem(torch, sizes=(7, 5, 6)):
    from torch.utils.data import TensorDataset
    g = torch.Generator().manual_seed(3)
    out = []
    for k, n in enumerate(sizes):
        X = torch.randn(n, 3, generator=g, dtype=torch.float64)
        y = X @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + k
        out.append(TensorDataset(X, y.unsqueeze(1)))
    return out


def _torch_fedavg(torch, cap, datasets, model, make_loader, rounds,
                  lr=0.05):
    """Plain FedAvg; make_loader(k, dataset, t) builds client k's loader."""
    loss_fn = torch.nn.MSELoss()

    @cap.client
    def train(global_model, k, t):
        local = copy.deepcopy(global_model)
        opt = torch.optim.SGD(local.parameters(), lr=lr)
        for x, y in make_loader(k, datasets[k], t):
            opt.zero_grad()
            loss_fn(local(x), y).backward()
            opt.step()
        cap.record("w_local", local)
        return local.state_dict(), len(datasets[k])

    @cap.round
    def run_round(global_model, chosen, t):
        states = [train(global_model, k, t) for k in chosen]
        total = sum(n for _, n in states)
        global_model.load_state_dict(
            {key: sum(sd[key] * (n / total) for sd, n in states)
             for key in states[0][0]})
        cap.record("w", global_model)

    for t, chosen in enumerate(rounds):
        run_round(model, chosen, t)


def _seeded(torch, k, t):
    return torch.Generator().manual_seed(100 * t + k + 1)


SAMPLERS = ["random", "sequential", "subset_random", "batch_sampler_drop_last",
            "ragged", "random_split", "batch_size_one_none", "workers"]


def _loader(torch, kind):
    """make_loader for each sampler kind, and the batches it yields,
    computed again without the capture (the samplers' own draws)."""
    from torch.utils.data import (BatchSampler, DataLoader, RandomSampler,
                                  SequentialSampler, SubsetRandomSampler,
                                  random_split)
    splits = {}

    def split(k, ds):
        if k not in splits:
            g = torch.Generator().manual_seed(40 + k)
            splits[k] = random_split(ds, [len(ds) - 2, 2], generator=g)[0]
        return splits[k]

    def make(k, ds, t):
        g = _seeded(torch, k, t)
        if kind == "random":
            return DataLoader(ds, batch_size=3, shuffle=True, generator=g)
        if kind == "workers":       # two processes, prefetching ahead
            return DataLoader(ds, batch_size=3, shuffle=True, generator=g,
                              num_workers=2)
        if kind == "sequential":
            return DataLoader(ds, batch_size=3, sampler=SequentialSampler(ds))
        if kind == "subset_random":
            return DataLoader(ds, batch_size=2, sampler=SubsetRandomSampler(
                [4, 0, 2, 3], generator=g))
        if kind == "batch_sampler_drop_last":
            return DataLoader(ds, batch_sampler=BatchSampler(
                RandomSampler(ds, generator=g), 2, drop_last=True))
        if kind == "ragged":
            return DataLoader(ds, batch_size=4)
        if kind == "random_split":
            return DataLoader(split(k, ds), batch_size=2, shuffle=True,
                              generator=g)
        return DataLoader(ds, batch_size=None, sampler=SubsetRandomSampler(
            [1, 3], generator=g))

    def expected(k, ds, t):
        g = _seeded(torch, k, t)
        n = len(ds)
        if kind in ("random", "random_split", "workers"):
            # a DataLoader given a generator first draws its workers' base
            # seed from it (_BaseDataLoaderIter.__init__), then shuffles
            torch.empty((), dtype=torch.int64).random_(generator=g)
        if kind in ("random", "workers"):
            return list(BatchSampler(RandomSampler(ds, generator=g), 3, False))
        if kind == "sequential":
            return [list(range(s, min(s + 3, n))) for s in range(0, n, 3)]
        if kind == "subset_random":
            return list(BatchSampler(SubsetRandomSampler([4, 0, 2, 3],
                                                         generator=g), 2,
                                     False))
        if kind == "batch_sampler_drop_last":
            return list(BatchSampler(RandomSampler(range(n), generator=g), 2,
                                     True))
        if kind == "ragged":
            return [list(range(s, min(s + 4, n))) for s in range(0, n, 4)]
        if kind == "random_split":
            sub = split(k, ds)
            return [[sub.indices[j] for j in b] for b in BatchSampler(
                RandomSampler(sub, generator=g), 2, False)]
        return [[j] for j in SubsetRandomSampler([1, 3], generator=g)]
    return make, expected


@pytest.mark.parametrize("kind", SAMPLERS)
def test_every_sampler_kind_is_recorded_as_the_loader_yields(torch, kind,
                                                             tmp_path):
    datasets = _torch_problem(torch)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(),
                                torch.nn.Linear(2, 1)).double()
    cap = pflref.torch.Capture("fedavg", pflref.torch.layout(
        model, torch.nn.MSELoss()), {"eta": 0.05})
    cap.clients(datasets)
    make, expected = _loader(torch, kind)
    rounds = [[2, 0], [1, 2]]
    _torch_fedavg(torch, cap, datasets, model, make, rounds)
    verdict = cap.check(tmp_path / "out")
    assert verdict.passed, str(verdict)
    spec = json.loads((tmp_path / "out" / "spec.json").read_text())
    for t, chosen in enumerate(rounds):
        r = spec["schedule"]["rounds"][t]
        assert r["drawn"] == chosen and r["clients"] == sorted(chosen)
        for j, k in enumerate(r["clients"]):
            want = [list(map(int, b)) for b in expected(k, datasets[k], t)]
            assert r["batches"][j] == want, (t, k)
    if kind == "ragged":            # 7 samples in 4s: a last batch of 3
        assert [len(b) for b in spec["schedule"]["rounds"][0]["batches"][0]] \
            == [4, 3]
    if kind == "batch_sampler_drop_last":        # 7 → 3 batches of 2
        assert [len(b) for b in spec["schedule"]["rounds"][0]["batches"][1]] \
            == [2, 2, 2]


def test_a_reshuffle_the_candidate_did_not_use_fails(torch, tmp_path):
    """The capture is what makes a shuffled run checkable: the same run
    checked against the sequential order it did not use fails."""
    datasets = _torch_problem(torch)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1)).double()
    cap = pflref.torch.Capture("fedavg", pflref.torch.layout(
        model, torch.nn.MSELoss()), {"eta": 0.05})
    cap.clients(datasets)
    make, _ = _loader(torch, "random")
    _torch_fedavg(torch, cap, datasets, model, make, [[0, 1]])
    for rnd in cap.rounds:
        for i in rnd["batches"]:
            flat = sorted(sum(rnd["batches"][i], []))
            rnd["batches"][i] = [flat[s:s + 3] for s in range(0, len(flat), 3)]
    verdict = cap.check(tmp_path / "out", diagnose=False)
    assert not verdict.passed
    assert verdict.first["event"] == "client_end"
    assert verdict.first["round"] == 0 and verdict.first["client"] == 0


def test_loaders_over_other_data_are_not_recorded(torch, tmp_path):
    from torch.utils.data import DataLoader, TensorDataset
    datasets = _torch_problem(torch)
    test_set = TensorDataset(torch.zeros(4, 3, dtype=torch.float64),
                             torch.zeros(4, 1, dtype=torch.float64))
    model = torch.nn.Sequential(torch.nn.Linear(3, 1)).double()
    cap = pflref.torch.Capture("fedavg", pflref.torch.layout(
        model, torch.nn.MSELoss()), {"eta": 0.05})
    cap.clients(datasets)

    def make(k, ds, t):
        for _ in DataLoader(test_set, batch_size=2):     # an evaluation
            pass
        return DataLoader(ds, batch_size=5)
    _torch_fedavg(torch, cap, datasets, model, make, [[1]])
    assert cap.rounds[0]["batches"] == {1: [[0, 1, 2, 3, 4]]}
    assert cap.check(tmp_path / "out").passed
    # outside a round nothing is observed, and the loader is torch's again
    from torch.utils.data import dataloader
    assert "pflref" not in repr(dataloader._BaseDataLoaderIter.__next__)


def test_torch_bad_inputs_name_round_client_and_record(torch, tmp_path):
    datasets = _torch_problem(torch)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1)).double()
    lay = pflref.torch.layout(model, torch.nn.MSELoss())
    from torch.utils.data import DataLoader

    def make(k, ds, t):
        return DataLoader(ds, batch_size=4)
    cap = pflref.torch.Capture("fedavg", lay, {"eta": 0.05})
    cap.clients(datasets)
    with pytest.raises(pflref.InvalidInput,
                       match="round 0, client 1: client 1 trains twice"):
        _torch_fedavg(torch, cap, datasets, model, make, [[1, 0, 1]])
    # the loaders are torch's own again after the failed round
    from torch.utils.data import dataloader
    assert "pflref" not in repr(dataloader._BaseDataLoaderIter.__next__)

    cap = pflref.torch.Capture("fedavg", lay, {"eta": 0.05})
    cap.clients(datasets)
    other = torch.nn.Sequential(torch.nn.Linear(4, 1)).double()
    with cap.round():
        with cap.client(0):
            with pytest.raises(pflref.InvalidInput) as e:
                cap.record("w_local", other)
    assert e.value.where == "capture, round 0, client 0, record w_local"
    assert "parameter 0.weight has shape (1, 4), the layout's is (1, 3)" in \
        str(e.value)

    cap = pflref.torch.Capture("fedavg", lay, {"eta": 0.05})
    cap.clients(datasets)
    broken = copy.deepcopy(model)
    with torch.no_grad():
        broken[0].bias.fill_(float("nan"))
    with cap.round():
        with cap.client(0):
            pass
        with pytest.raises(pflref.InvalidInput,
                           match=r"round 0, record w: entry 3 is nan"):
            cap.record("w", broken)
    assert not (tmp_path / "out").exists()


# ---- torch: layouts -------------------------------------------------------------

def test_layouts_of_the_usual_modules(torch):
    nn = torch.nn
    lay = pflref.torch.layout(nn.Sequential(nn.Linear(3, 4), nn.ReLU(),
                                            nn.Sequential(nn.Linear(4, 2))),
                              nn.CrossEntropyLoss())
    assert lay.model_spec["kind"] == "layers"
    assert [layer["name"] for layer in lay.model_spec["layers"]] == \
        ["0", "1", "2.0"]
    assert lay.names == ["0.weight", "0.bias", "2.0.weight", "2.0.bias"]
    assert lay.P == 12 + 4 + 8 + 2
    lin = pflref.torch.layout(nn.Linear(3, 1), "half_squared")
    assert lin.model_spec == {"kind": "linear", "d": 3, "loss": "half_squared",
                              "bias": True}
    soft = pflref.torch.layout(nn.Linear(3, 4, bias=False), "cross_entropy")
    assert soft.model_spec["kind"] == "softmax" and soft.P == 12
    cnn = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2),
                        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(2 * 2 * 2, 3))
    lay = pflref.torch.layout(cnn, nn.CrossEntropyLoss(), input=(1, 4, 4))
    assert lay.names[2:6] == ["1.weight", "1.bias", "1.running_mean",
                              "1.running_var"]        # num_batches_tracked out
    # the flat vector is the state_dict's, in order
    w = lay.flat(cnn)
    ref = torch.cat([v.reshape(-1).double() for k, v in cnn.state_dict().items()
                     if not k.endswith("num_batches_tracked")])
    assert np.array_equal(w, ref.numpy()) and w.size == lay.P


@pytest.mark.parametrize("case", ["dropout", "custom", "extra", "conv_input",
                                  "dilation", "multi_output_mse", "loss"])
def test_a_model_that_does_not_map_names_its_first_parameter(torch, case):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x):
            return self.fc(x) * 2

    extra = nn.Sequential(nn.Linear(3, 1))
    extra.register_parameter("scale", nn.Parameter(torch.ones(1)))
    models = {
        "dropout": (nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5),
                                  nn.Linear(4, 1)), "squared", "1",
                    "pflref has no dropout"),
        "custom": (Net(), "squared", "fc.weight", "not an nn.Sequential"),
        "extra": (extra, "squared", "scale", "does not map to pflref's block"),
        "conv_input": (nn.Sequential(nn.Conv2d(1, 2, 3)), "squared", "0",
                       "input=(C, H, W)"),
        "dilation": (nn.Sequential(nn.Conv2d(1, 2, 3, dilation=2)),
                     "squared", "0.weight", "dilation 1"),
        "multi_output_mse": (nn.Linear(3, 2), "squared", "weight",
                             "one output"),
    }
    if case == "loss":
        with pytest.raises(ValueError, match="reduction='sum'"):
            pflref.torch.layout(nn.Linear(3, 1), nn.MSELoss(reduction="sum"))
        return
    model, loss, param, words = models[case]
    with pytest.raises(pflref.torch.LayoutError) as e:
        pflref.torch.layout(model, loss)
    assert e.value.parameter == param
    assert str(e.value).startswith("layout: %s: " % param)
    assert words in str(e.value)


# ---- the examples --------------------------------------------------------------

def _example(name, tmp_path, edit=None):
    path = os.path.join(CAPTURE_EXAMPLES, name)
    code = open(path, encoding="utf-8").read()
    edits = [] if edit is None else \
        [edit] if isinstance(edit[0], str) else list(edit)
    for old, new in edits:
        assert code.count(old) == 1, old
        code = code.replace(old, new)
    script = tmp_path / name
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=PYTHON, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_examples_add_at_most_ten_lines(torch):
    for name, most in (("fedavg_plain.py", 8), ("ditto_plain.py", 10),
                       ("pfedme_plain.py", 10)):
        with open(os.path.join(CAPTURE_EXAMPLES, name)) as f:
            lines = [line for line in f if line.rstrip().endswith("# pflref")]
        assert len(lines) == most, name


@pytest.mark.parametrize("name,edit,first,diagnosis", [
    ("fedavg_plain.py", None, None, None),
    ("fedavg_plain.py",
     ("sum(sd[key] * (n / total) for", "sum(sd[key] / len(states) for"),
     "first divergence: w (server, round 0)", "fedavg.weights = uniform"),
    ("fedavg_plain.py",
     ("    local = copy.deepcopy(global_model)\n", "    local = global_model\n"),
     "first divergence: w_local (client_end, round 0, client 0)",
     "no known variant"),
    ("ditto_plain.py", None, None, None),
    ("ditto_plain.py",
     ("zip(v.parameters(), w_t)", "zip(v.parameters(), local.parameters())"),
     "first divergence: v (client_end, round 0, client 0)",
     "ditto.prox_ref = moving"),
    ("pfedme_plain.py", None, None, None),
    ("pfedme_plain.py",
     ("        theta.load_state_dict(local.state_dict())        # θ ← w_{i,r}\n",
      "        pass\n"),
     "first divergence: w_local (client_end, round 0, client 0)",
     "pfedme.theta_start = warm"),
])
def test_the_examples_pass_and_their_one_line_bugs_fail(torch, tmp_path, name,
                                                        edit, first,
                                                        diagnosis):
    p = _example(name, tmp_path, edit)
    if edit is None:
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.startswith("PASS capture/")
        return
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("FAIL capture/")
    assert first in p.stdout
    assert "diagnose: " in p.stdout and diagnosis in p.stdout


def test_a_personal_pass_on_its_own_loader(torch, tmp_path):
    """PFLlib's Ditto order (ptrain() then train(), each over its own
    shuffled loader): the personal pass's batches go to the schedule's
    `personal` lists, checked under ditto.batches = separate."""
    from torch.utils.data import DataLoader
    nn = torch.nn
    datasets = _torch_problem(torch, sizes=(5, 4, 6))
    model = nn.Sequential(nn.Linear(3, 1)).double()
    loss_fn = nn.MSELoss()
    personal = [copy.deepcopy(model) for _ in datasets]
    lr, lam = 0.05, 0.3
    cap = pflref.torch.Capture("ditto", pflref.torch.layout(model, loss_fn),
                               {"eta": lr, "lambda": lam},
                               switches={"ditto.batches": "separate",
                                         "ditto.order": "personal_first"})
    cap.clients(datasets)
    g = torch.Generator().manual_seed(9)

    @cap.personal
    def ptrain(w_t, v, ds):
        ref = [p.detach().clone() for p in w_t.parameters()]
        opt = torch.optim.SGD(v.parameters(), lr=lr)
        for x, y in DataLoader(ds, batch_size=2, shuffle=True, generator=g):
            opt.zero_grad()
            reg = sum(((p - r) ** 2).sum() for p, r in zip(v.parameters(), ref))
            (loss_fn(v(x), y) + lam / 2 * reg).backward()
            opt.step()
        cap.record("v", v)

    @cap.client
    def train(w_t, ds):
        local = copy.deepcopy(w_t)
        opt = torch.optim.SGD(local.parameters(), lr=lr)
        for x, y in DataLoader(ds, batch_size=3, shuffle=True, generator=g):
            opt.zero_grad()
            loss_fn(local(x), y).backward()
            opt.step()
        cap.record("w_local", local)
        return local.state_dict(), len(ds)

    for chosen in ([0, 2], [1, 0]):
        with cap.round():
            states = []
            for k in chosen:
                ptrain(model, personal[k], datasets[k])
                states.append(train(model, datasets[k]))
            total = sum(n for _, n in states)
            model.load_state_dict({key: sum(sd[key] * (n / total)
                                            for sd, n in states)
                                   for key in states[0][0]})
            cap.record("w", model)
    for k, v in enumerate(personal):
        cap.final("v", v, client=k)
    verdict = cap.check(tmp_path / "out")
    assert verdict.passed, str(verdict)
    spec = json.loads((tmp_path / "out" / "spec.json").read_text())
    r0 = spec["schedule"]["rounds"][0]
    assert [len(b) for b in r0["personal"][0]] == [2, 2, 1]     # 5 in 2s
    assert [len(b) for b in r0["batches"][0]] == [3, 2]         # 5 in 3s
    # the same run checked as if both passes shared the global batches
    cap.algorithm["switches"] = {"ditto.order": "personal_first"}
    for rnd in cap.rounds:
        rnd["personal"] = {}
    assert not cap.check(tmp_path / "shared", diagnose=False).passed


PFEDME_SUBSET = [
    ("    order = torch.randperm(N).tolist()\n",
     "    order = torch.randperm(N).tolist()\n"
     "    S = torch.randperm(N)[:2].tolist()\n"
     "    cap.select(S)\n"),
    ("BETA * sum(sd[key] for sd in local) / N",
     "BETA * sum(local[order.index(i)][key] for i in S) / len(S)")]


def test_pfedme_averaging_a_drawn_subset_is_recorded_as_selected(torch,
                                                                  tmp_path):
    """Every client trains, the server averages S^t (pfedme.train = all,
    the paper's): cap.select(S) records S^t, in the order drawn."""
    p = _example("pfedme_plain.py", tmp_path, PFEDME_SUBSET)
    assert p.returncode == 0, p.stdout + p.stderr
    spec = json.loads((tmp_path / "pfedme-capture" / "spec.json").read_text())
    for r in spec["schedule"]["rounds"]:
        assert r["clients"] == [0, 1, 2] and len(r["selected"]) == 2
        assert sorted(r["drawn"]) == r["selected"]
    # averaging all three while declaring two is caught at round 0's w
    p = _example("pfedme_plain.py", tmp_path, PFEDME_SUBSET[:1])
    assert p.returncode == 1
    assert "first divergence: w (server, round 0)" in p.stdout


def test_a_selected_client_that_did_not_train_is_refused(tmp_path):
    cap = _numpy_cap()
    with cap.round():
        with cap.client(0):
            cap.batch([0])
            cap.record("w_local", [0.0, 0.0, 0.0])
        cap.select([0, 2])
        cap.record("w", [0.0, 0.0, 0.0])
    with pytest.raises(pflref.InvalidInput, match="round 0, client 2, "
                       "selected: client 2 is selected but did not train"):
        cap.check(tmp_path / "out")
    assert os.listdir(tmp_path) == []


def test_a_worker_iterator_made_before_the_round_is_refused(torch):
    """Its first indices were prefetched unobserved: refused, not
    misattributed."""
    from torch.utils.data import DataLoader
    datasets = _torch_problem(torch)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1)).double()
    cap = pflref.torch.Capture("fedavg", pflref.torch.layout(
        model, torch.nn.MSELoss()), {"eta": 0.05})
    cap.clients(datasets)
    it = iter(DataLoader(datasets[1], batch_size=2, num_workers=1))
    with pytest.raises(pflref.InvalidInput,
                       match="round 0, client 1: a DataLoader iterator with "
                       "workers was created before the round opened"):
        with cap.round():
            with cap.client():
                next(it)
    del it
