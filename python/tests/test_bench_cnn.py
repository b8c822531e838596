# SPDX-License-Identifier: GPL-3.0-or-later
"""make bench's FedAvgCNN contenders (bench/contender.py) against pflref,
on a federation small enough for every test run: 3 clients of 4, 3 and 5
MNIST-shaped samples (the last client's batches uneven), 2 rounds of 2
sampled clients, batches of 2, 2 epochs.  FedAvg with torch.optim.SGD's
momentum 0.9 and weight decay 5e-4 (a new optimizer per client update,
pflref's opt.state = reset), and Ditto with plain SGD: the final w (and
every v_i) of the NumPy contender (im2col by stride tricks, backprop by
hand) and of the PyTorch one (torch.nn, torch.optim.SGD) against pflref's.

Tolerance: the three compute the same sums in different orders (pflref
one dgemm per sample and layer, NumPy one per batch and layer, PyTorch
its own kernels), so they differ by rounding only: a few units of 1e-16
per gradient entry, carried by a few steps of size 0.05.  1e-12 leaves
room for that and fails on any wrong formula (a missing weight decay is
5e-4 · 0.05 · |w| per step, 1e-6 relative after one step).  A CIFAR-shaped
NumPy gradient against torch's autograd checks the 3-channel im2col.
Skipped without torch."""
import importlib.util
import os

import numpy as np
import pytest

import pflref

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench")
_spec = importlib.util.spec_from_file_location(
    "bench_contender", os.path.join(BENCH, "contender.py"))
contender = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contender)

MODEL = {"kind": "layers", "input": [1, 28, 28], "preset": "fedavgcnn",
         "k": 10}
TOL = 1e-12


def federation(seed):
    """Three clients' (X, y): X u³ with u uniform (pixel-like), labels
    spread over the classes."""
    rng = np.random.default_rng(seed)
    return [(rng.random((n, 784)) ** 3, rng.integers(0, 10, n))
            for n in (4, 3, 5)]


def w0_torch_init(seed):
    """PyTorch's default init scale, U(−1/√fan_in, 1/√fan_in) per block."""
    rng = np.random.default_rng(seed)
    shapes = [shape for _, shape in contender.cnn_shapes(MODEL)]
    parts = []
    for weight, bias in zip(shapes[0::2], shapes[1::2]):
        fan_in = int(np.prod(weight[1:]))
        size = int(np.prod(weight)) + bias[0]
        parts.append(rng.uniform(-1, 1, size) / np.sqrt(fan_in))
    return np.concatenate(parts)


def pflref_final(alg, hyper, data, w0, work):
    spec = {
        "format": "pflref-spec/1", "model": MODEL,
        "problem": {"clients": [{"X": X.tolist(), "y": [int(c) for c in y]}
                                for X, y in data]},
        "init": {"kind": "given", "w": w0.tolist()},
        "algorithm": {"name": alg, "hyperparameters": hyper},
        "schedule": {"kind": "generate", "rounds": work["T"],
                     "clients_per_round": work["m"],
                     "sampler": "numpy_legacy",
                     "client_seed": work["client_seed"],
                     "batches": "split_once",
                     "local": {"epochs": work["epochs"],
                               "batch_size": work["B"]}},
        "output": {"trajectory": "none"}}
    r = pflref.run(spec)
    return (np.asarray(r.final["w"]),
            np.asarray(r.final["v"]) if "v" in r.final else None)


def contender_final(backend, alg, data, w0, work):
    be = (contender.NumpyCNNBackend if backend == "numpy"
          else contender.TorchCNNBackend)(MODEL)
    algorithms = contender.TORCH_CNN if backend == "torch" \
        else contender.ALGORITHMS
    d = [(be.asarray(X), be.labels(y)) for X, y in data]
    w = be.asarray(w0.copy())
    if alg == "ditto":
        v = [be.copy(w) for _ in data]
        w, v = algorithms[alg](be, work, d, w, v)
        return be.numpy(w), np.stack([be.numpy(x) for x in v])
    w, _ = algorithms[alg](be, work, d, w)
    return be.numpy(w), None


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("alg,hyper", [
    ("fedavg", {"eta": 0.05, "opt.momentum": 0.9, "opt.weight_decay": 5e-4}),
    ("ditto", {"eta": 0.05, "lambda": 0.375})])
def test_cnn_contenders_agree_with_pflref(alg, hyper):
    data = federation(11)
    w0 = w0_torch_init(12)
    work = {"N": 3, "T": 2, "m": 2, "epochs": 2, "B": 2, "client_seed": 4,
            "hyper": hyper, "model": MODEL, "algorithm": alg}
    w_ref, v_ref = pflref_final(alg, hyper, data, w0, work)
    assert rel(w_ref, w0) > 1e-4, "the run did not move w"
    for backend in ("numpy", "torch"):
        w, v = contender_final(backend, alg, data, w0, work)
        assert rel(w, w_ref) <= TOL, (backend, "w", rel(w, w_ref))
        if alg == "ditto":
            assert rel(v, v_ref) <= TOL, (backend, "v", rel(v, v_ref))


def test_numpy_cnn_gradient_cifar_shape():
    model = dict(MODEL, input=[3, 32, 32])
    be, tb = contender.NumpyCNNBackend(model), \
        contender.TorchCNNBackend(model)
    torch.manual_seed(3)
    net = contender.torch_cnn(model)
    w = torch.nn.utils.parameters_to_vector(net.parameters()).detach()
    rng = np.random.default_rng(5)
    X, y = rng.random((6, 3072)) ** 3, rng.integers(0, 10, 6)
    loss = torch.nn.functional.cross_entropy(net(tb.asarray(X)),
                                             tb.labels(y))
    loss.backward()
    g_t = torch.nn.utils.parameters_to_vector(
        [p.grad for p in net.parameters()]).numpy()
    g = be.grad(w.numpy().copy(), X, y)
    assert g.size == 878538
    assert rel(g, g_t) <= 1e-13
    assert abs(be.loss(w.numpy(), X, y) - loss.item()) <= 1e-14
