#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/layers/check_torch.py: cross-check golden/pflref_exact_layers.py
against torch float64 on random small layer lists (a check of the
generator, never the source of a golden value).

For each case: a random layer list (dense, conv2d with stride and padding,
maxpool2d, avgpool2d, flatten, relu, tanh, sigmoid, batchnorm1d/2d; squared,
half_squared or cross-entropy loss), random parameters laid out in the
state_dict order, a random batch; the generator's loss and gradient (its own
domain: exact fractions or 60-digit decimals) against torch's in training
mode, the evaluation-mode outputs, and the running statistics after one
training forward (PyTorch's momentum rule, unbiased variance).  Passes when
every value agrees to 1e-12 relative (|x − r| ≤ 1e-12 (1 + |r|)); torch's
float64 errors on these sizes are about 1e-15.  Also checks that
the flattened torch state_dict is the generator's parameter vector (the
order and the shapes) and PyTorch's max-pool tie rule (the first maximum).

    /usr/bin/python3 golden/layers/check_torch.py [N_CASES] [SEED]

Exit 0 when every case agrees, 1 on a disagreement; skipped (exit 0 with a
message) when torch cannot be imported.
"""
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_layers as pl   # noqa: E402

try:
    import torch
    from torch import nn
except ImportError:                # pragma: no cover
    print("check_torch: torch not importable, skipped")
    sys.exit(0)

torch.set_default_dtype(torch.float64)


def torch_model(spec):
    """nn.Sequential from the spec, with the spec's layer names."""
    M = pl.Model(spec, "float")
    mods = []
    for L in M.layers:
        t = L.type
        if t == "dense":
            mod = nn.Linear(L.in_shape[0], L.out, bias=L.bias)
        elif t == "conv2d":
            mod = nn.Conv2d(L.in_shape[0], L.O, L.k, stride=L.s, padding=L.p, bias=L.bias)
        elif t == "maxpool2d":
            mod = nn.MaxPool2d(L.k, L.s)
        elif t == "avgpool2d":
            mod = nn.AvgPool2d(L.k, L.s)
        elif t == "flatten":
            mod = nn.Flatten()
        elif t == "relu":
            mod = nn.ReLU()
        elif t == "tanh":
            mod = nn.Tanh()
        elif t == "sigmoid":
            mod = nn.Sigmoid()
        elif t == "batchnorm1d":
            mod = nn.BatchNorm1d(L.in_shape[0], eps=L.eps, momentum=L.rho)
        else:
            mod = nn.BatchNorm2d(L.in_shape[0], eps=L.eps, momentum=L.rho)
        mods.append((L.name, mod))
    seq = nn.Sequential()
    for name, mod in mods:
        seq.add_module(name, mod)
    return M, seq


def load(seq, theta):
    """Copy theta into the state_dict in its order; assert the order and
    the sizes are the generator's."""
    sd = seq.state_dict()
    keys = [k for k in sd if not k.endswith("num_batches_tracked")]
    off = 0
    new = {}
    for k in keys:
        n = sd[k].numel()
        new[k] = torch.tensor(theta[off:off + n]).reshape(sd[k].shape)
        off += n
    assert off == len(theta), (off, len(theta))
    for k in sd:
        if k.endswith("num_batches_tracked"):
            new[k] = sd[k]
    seq.load_state_dict(new)
    return keys


def random_spec(rng):
    """A random layer list that chains."""
    if rng.random() < 0.6:
        C, H = rng.choice([1, 2]), rng.choice([4, 5, 6])
        shape = [C, H, H]
        layers = []
        k = rng.choice([2, 3])
        s = rng.choice([1, 2])
        p = rng.choice([0, 1])
        while (H + 2 * p - k) // s + 1 < 2:
            p += 1
        layers.append({"type": "conv2d", "name": "conv1", "out_channels": rng.choice([2, 3]),
                       "kernel": k, "stride": s, "padding": p,
                       "bias": rng.random() < 0.8})
        Ho = (H + 2 * p - k) // s + 1
        if rng.random() < 0.5:
            layers.append({"type": "batchnorm2d", "name": "bn1",
                           "eps": rng.choice([1e-5, 0.01, 0.1]),
                           "momentum": rng.choice([0.1, 0.3])})
        layers.append({"type": rng.choice(["relu", "tanh", "sigmoid"])})
        if Ho >= 2:
            pk = 2
            ps = rng.choice([1, 2]) if (Ho - 2) % 2 == 0 else 1
            layers.append({"type": rng.choice(["maxpool2d", "avgpool2d"]),
                           "kernel": pk, "stride": ps})
        layers.append({"type": "flatten"})
    else:
        shape = [rng.choice([2, 3, 4])]
        layers = [{"type": "dense", "name": "fc0", "out": rng.choice([3, 4])}]
        if rng.random() < 0.5:
            layers.append({"type": "batchnorm1d", "name": "bn0", "eps": 0.01,
                           "momentum": 0.2})
        layers.append({"type": rng.choice(["relu", "tanh", "sigmoid"])})
    loss = rng.choice(["cross_entropy", "squared", "half_squared"])
    if rng.random() < 0.5:
        layers.append({"type": "dense", "name": "hid", "out": 3})
        layers.append({"type": rng.choice(["relu", "tanh", "sigmoid"])})
    layers.append({"type": "dense", "out": 3 if loss == "cross_entropy" else 1,
                   "bias": rng.random() < 0.8})
    return {"kind": "layers", "input": shape, "loss": loss, "layers": layers}


def check_case(rng, verbose=False):
    spec = random_spec(rng)
    M, seq = torch_model(spec)
    Mx = pl.Model(spec)                       # the generator's own domain
    theta = []
    for b in M.blocks:
        for _ in range(b["size"]):
            if b["role"] == "running_var":
                theta.append(rng.uniform(0.5, 2.0))
            else:
                theta.append(round(rng.uniform(-1, 1), 3))
    n = rng.choice([2, 3, 4])
    X = [[round(rng.uniform(-2, 2), 2) for _ in range(M.d)] for _ in range(n)]
    if spec["loss"] == "cross_entropy":
        Y = [float(rng.randrange(3)) for _ in range(n)]
    else:
        Y = [round(rng.uniform(-1, 1), 2) for _ in range(n)]
    load(seq, theta)
    seq.train()
    xt = torch.tensor(X).reshape([n] + list(M.input))
    out = seq(xt)
    if spec["loss"] == "cross_entropy":
        lt = nn.functional.cross_entropy(out, torch.tensor([int(y) for y in Y]))
    else:
        r = out[:, 0] - torch.tensor(Y)
        lt = (r * r).mean() * (1 if spec["loss"] == "squared" else 0.5)
    seq.zero_grad()
    lt.backward()
    tgrad = []
    for k, v in seq.state_dict(keep_vars=True).items():
        if k.endswith("num_batches_tracked"):
            continue
        if isinstance(v, nn.Parameter):
            tgrad += v.grad.reshape(-1).tolist()
        else:
            tgrad += [0.0] * v.numel()
    trun = [v for k, v in seq.state_dict().items() if "running" in k]
    # the generator
    th = [Mx.D.num(x) for x in theta]
    Xd = [[Mx.D.num(x) for x in row] for row in X]
    Yd = [Mx.D.num(y) for y in Y]
    g, caches = Mx.grad(th, Xd, Yd)
    F = Mx.batch_loss(th, Xd, Yd)
    bad = []

    def cmp(what, a, b):
        for i, (x, r) in enumerate(zip(a, b)):
            if abs(float(x) - float(r)) > 1e-12 * (1 + abs(float(r))):
                bad.append(f"{what}[{i}]: generator {float(r)!r} torch {float(x)!r}")
    cmp("loss", [lt.item()], [F])
    cmp("grad", tgrad, g)
    assert len(tgrad) == len(g) == Mx.P
    # running statistics after the training forward
    th2 = list(th)
    Mx.update_running(th2, caches)
    gen_run = []
    for b, o in Mx.block_offsets():
        if b["is_buffer"]:
            gen_run += th2[o:o + b["size"]]
    cmp("running", [x for t in trun for x in t.reshape(-1).tolist()], gen_run)
    # evaluation mode at the updated running statistics
    seq.eval()
    with torch.no_grad():
        ev = seq(xt).reshape(-1).tolist()
    Z, _ = Mx.forward(th2, Xd, train=False)
    cmp("eval", ev, [z for row in Z for z in row])
    if verbose or bad:
        print(spec, "P =", Mx.P, "domain", Mx.D.kind, "ok" if not bad else bad[:3])
    return not bad


def check_ties():
    """PyTorch's max pool sends a tied window's gradient to its first
    maximum (row-major); the generator does the same."""
    x = torch.tensor([[[[0., 2., 2.], [1., 2., 0.], [0., 0., 0.]]]], requires_grad=True)
    nn.functional.max_pool2d(x, 2, 1).sum().backward()
    want = [0., 2., 0., 0., 2., 0., 0., 0., 0.]
    assert x.grad.reshape(-1).tolist() == want, x.grad
    spec = {"kind": "layers", "input": [1, 3, 3], "loss": "half_squared",
            "layers": [{"type": "maxpool2d", "kernel": 2, "stride": 1},
                       {"type": "flatten"}, {"type": "dense", "out": 1, "bias": False}]}
    M = pl.Model(spec)
    from fractions import Fraction as F
    X = [[F(v) for v in [0, 2, 2, 1, 2, 0, 0, 0, 0]]]
    _, caches = M.forward([F(1)] * 4, X)
    G = [[F(1)] * 4]
    gin = M._backward(M.layers[0], caches[0], [F(1)] * 4, G, [F(0)] * 4, pl.NO_BUGS)
    assert [int(v) for v in gin[0]] == [int(v) for v in want], gin


def main():
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 20261128
    rng = random.Random(seed)
    check_ties()
    ok = sum(check_case(rng) for _ in range(N))
    print(f"check_torch: {ok} of {N} random layer lists agree with torch float64 "
          "to 1e-12; max-pool ties to the first maximum as torch")
    return 0 if ok == N else 1


if __name__ == "__main__":
    sys.exit(main())
