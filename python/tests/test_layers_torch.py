# SPDX-License-Identifier: GPL-3.0-or-later
"""The layer-list model against torch in float64: PFLlib's FedAvgCNN (the
"fedavgcnn" preset) and a small network of every layer kind, on random
data.  pflref's loss comes from a run of zero rounds (the metrics'
train_loss at w0), its gradient from one full-batch FedAvg step with
eta = 1 (g = w0 - w1) under bn.running = frozen, and the running
statistics that torch's training pass moves from the same step under
bn.running = update (the default).  Skipped without torch."""
import numpy as np
import pytest

import pflref

torch = pytest.importorskip("torch")
nn = torch.nn


class FedAvgCNN(nn.Module):
    """PFLlib's FedAvgCNN (system/flcore/trainmodel/models.py), written out
    here so the test does not depend on PFLlib."""

    def __init__(self, in_features=1, num_classes=10, dim=1024):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_features, 32, 5), nn.ReLU(),
                                   nn.MaxPool2d(kernel_size=(2, 2)))
        self.conv2 = nn.Sequential(nn.Conv2d(32, 64, 5), nn.ReLU(),
                                   nn.MaxPool2d(kernel_size=(2, 2)))
        self.fc1 = nn.Sequential(nn.Linear(dim, 512), nn.ReLU())
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        out = self.conv2(self.conv1(x))
        return self.fc(self.fc1(torch.flatten(out, 1)))


def small_net():
    """Every layer kind but dropout; names are nn.Sequential's indices."""
    return nn.Sequential(
        nn.Conv2d(2, 3, 3, stride=1, padding=1), nn.BatchNorm2d(3),
        nn.Tanh(), nn.MaxPool2d(2), nn.Conv2d(3, 4, 2, stride=1, padding=0),
        nn.Sigmoid(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(4, 5),
        nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 3))


SMALL_LAYERS = [
    {"type": "conv2d", "out_channels": 3, "kernel": 3, "padding": 1},
    {"type": "batchnorm2d"}, {"type": "tanh"},
    {"type": "maxpool2d", "kernel": 2},
    {"type": "conv2d", "out_channels": 4, "kernel": 2},
    {"type": "sigmoid"}, {"type": "avgpool2d", "kernel": 2},
    {"type": "flatten"}, {"type": "dense", "out": 5},
    {"type": "batchnorm1d"}, {"type": "relu"}, {"type": "dense", "out": 3}]


def state_vector(net):
    """The state_dict's values (num_batches_tracked left out), row-major."""
    return np.concatenate([v.detach().reshape(-1).numpy()
                           for k, v in net.state_dict().items()
                           if not k.endswith("num_batches_tracked")])


def torch_loss_grad(net, X, y):
    """Mean cross-entropy and its gradient on the state_dict layout (the
    running statistics' entries 0), in training mode."""
    net.train()
    for p in net.parameters():
        p.grad = None
    loss = nn.functional.cross_entropy(net(X), y)
    loss.backward()
    parts = []
    params = dict(net.named_parameters())
    for k, v in net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        parts.append(params[k].grad.reshape(-1).numpy() if k in params
                     else np.zeros(v.numel()))
    return loss.item(), np.concatenate(parts)


def one_step_spec(model, X, y, w0, running):
    """FedAvg, eta = 1, one full-batch step on (X, y) from w0, with
    bn.running = running."""
    n = X.shape[0]
    return {
        "format": "pflref-spec/1", "model": model,
        "problem": {"clients": [{"X": X.reshape(n, -1).tolist(),
                                 "y": [int(c) for c in y]}]},
        "algorithm": {"name": "fedavg", "hyperparameters": {"eta": 1.0},
                      "switches": {"bn.running": running}},
        "init": {"kind": "given", "w": w0.tolist()},
        "schedule": {"kind": "given", "rounds": [
            {"clients": [0], "batches": [[list(range(n))]]}]}}


def pflref_loss_grad(model, X, y, w0):
    """pflref's loss at w0 (zero rounds: train_loss) and gradient (one step
    of FedAvg with eta = 1 on the whole batch, the running statistics
    frozen: w0 - w1)."""
    spec = one_step_spec(model, X, y, w0, "frozen")
    rounds = spec["schedule"]["rounds"]
    spec["schedule"]["rounds"] = []
    r0 = pflref.run(spec)
    loss = r0.raw["metrics"]["global"]["per_client"]["train_loss"][0]
    spec["schedule"]["rounds"] = rounds
    r1 = pflref.run(spec)
    return loss, w0 - np.asarray(r1.final["w"])


def close(a, b, rtol):
    """Norm-wise relative: max |a - b| <= rtol max |b| (w0 - w1 carries an
    absolute rounding of about u |w0| per entry, below 1e-12 max |g|
    here)."""
    return np.max(np.abs(a - b)) <= rtol * np.max(np.abs(b))


def run_case(net, model, shape, k, seed, inputs=False):
    torch.manual_seed(seed)
    net = net.double()
    with torch.no_grad():   # batchnorm: γ, β away from 1, 0
        for m in net.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    X = torch.rand((6,) + shape, dtype=torch.float64) * 2 - 1
    y = torch.arange(6) % k
    w0 = state_vector(net)
    loss_t, g_t = torch_loss_grad(net, X, y)
    loss_r, g_r = pflref_loss_grad(model, X.numpy(), y.numpy(), w0)
    if inputs:
        return loss_t, g_t, loss_r, g_r, w0, X, y
    return loss_t, g_t, loss_r, g_r


def test_fedavgcnn_matches_torch():
    model = {"kind": "layers", "input": [1, 28, 28], "preset": "fedavgcnn",
             "k": 10}
    loss_t, g_t, loss_r, g_r = run_case(FedAvgCNN(), model, (1, 28, 28), 10,
                                        5)
    assert g_t.size == 582026
    assert abs(loss_r - loss_t) <= 1e-12 * abs(loss_t)
    assert close(g_r, g_t, 1e-12)


def test_every_layer_kind_matches_torch():
    """The gradient in training mode (batch statistics); the running
    statistics FedAvg's step moves (bn.running = update) against those
    torch's training pass moved; the zero-round loss in evaluation mode,
    with the running statistics torch's training pass moved (torch's
    eval())."""
    model = {"kind": "layers", "input": [2, 6, 6], "layers": SMALL_LAYERS}
    net = small_net()
    _, g_t, _, g_r, w0, X0, y0 = run_case(net, model, (2, 6, 6), 3, 7,
                                          inputs=True)
    assert close(g_r, g_t, 1e-12)
    r = pflref.run(one_step_spec(model, X0.numpy(), y0.numpy(), w0, "update"))
    w1, w_torch = np.asarray(r.final["w"]), state_vector(net)
    at, buffers = 0, []
    for k, v in net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        if k.endswith("running_mean") or k.endswith("running_var"):
            buffers += range(at, at + v.numel())
        at += v.numel()
    assert len(buffers) == 16 and not np.allclose(w_torch[buffers], w0[buffers])
    assert close(w1[buffers], w_torch[buffers], 1e-12)
    net.eval()
    torch.manual_seed(7)
    X = torch.rand((6, 2, 6, 6), dtype=torch.float64) * 2 - 1
    y = torch.arange(6) % 3
    loss_eval = nn.functional.cross_entropy(net(X), y).item()
    loss_r, _ = pflref_loss_grad(model, X.numpy(), y.numpy(),
                                 state_vector(net))
    assert abs(loss_r - loss_eval) <= 1e-12 * abs(loss_eval)
