#!/usr/bin/python3
"""fedavgcnn_torch.py: FedAvg on PFLlib's FedAvgCNN with torch.optim, checked
by `pflref check`.

McMahan et al., "Communication-Efficient Learning of Deep Networks from
Decentralized Data", AISTATS 2017, Algorithm 1, written the way PyTorch
federated code writes it:

  model      FedAvgCNN exactly as TsingZ0/PFLlib defines it
             (system/flcore/trainmodel/models.py), float64;
  client     a Client object holding its own copy of the model;
             set_parameters() copies the global weights into it in place
             (PFLlib clientbase.set_parameters); train() steps
             torch.optim.SGD(model.parameters(), lr, momentum, weight_decay)
             (or Adam, AdamW) once per scheduled batch, on
             nn.CrossEntropyLoss (the batch mean);
  server     w_{t+1} = Σ_{k∈S_t} (n_k / m_t) w^k_{t+1}, over the clients'
             state_dict() tensors, in ascending client id.

The optimizer's lifetime (docs/optimizers.md, "Where the state lives") is
where the code creates it:

  "train"    torch.optim.SGD(...) built in train(): a fresh momentum buffer
             for every client update (the spec's opt.state = reset);
  "init"     built once in Client.__init__ and kept, as PFLlib's clientbase
             does (self.optimizer): the buffer outlives the round
             (opt.state = client);
  "shared"   one optimizer object for every client, carried from client to
             client (opt.state = server, a simulation defect).

run(vector, lifetime=None) takes the lifetime the vector's opt.state names;
a test passes another lifetime to play the code that disagrees with the
spec (test_fedavgcnn_torch.py).  PFLREF_TORCH_BUG=momentum-kept sets
"init" from the command line.  The optimizer settings come from the
vector's opt.* keys: opt.method sgd (momentum, dampening, nesterov,
coupled weight decay on every block), adam or adamw; anything else
(opt.clip, opt.decay_scope other than all, the classical momentum form,
decoupled decay with SGD, a decaying lr) is refused as unsupported.

The model is the spec's `"preset": "fedavgcnn"` (FedAvgCNN(C, k, dim),
dim = 1024 for [1, 28, 28], 1600 for [3, 32, 32]) or a layer list of the
same structure (conv1.0, conv1.2, conv2.0, conv2.2, fc1.0, fc: the layer
names of the preset), which gives FedAvgCNN at any input the two
convolutions and pools fit, dim = 64 · H″ · W″.  Records: w (round_begin,
server), w_local (client_begin, step, client_end), final w; every value is
the flattened state_dict (docs/models.md, "layers", Layout).

usage: fedavgcnn_torch.py VECTOR.json -o RESULT.json
"""
import copy
import os
import sys

import numpy as np
import torch
from torch import nn

from torch_common import (OPT_DEFAULTS, Recorder, Unsupported, main, plan,
                          weights)

torch.set_default_dtype(torch.float64)

KEPT_BUG = os.environ.get("PFLREF_TORCH_BUG") == "momentum-kept"

# the layer names of pflref's fedavgcnn preset, parametrised layers only
FEDAVGCNN_LAYERS = [
    ("conv2d", "conv1.0", 32, 5), ("relu", None), ("maxpool2d", None, 2),
    ("conv2d", "conv2.0", 64, 5), ("relu", None), ("maxpool2d", None, 2),
    ("flatten", None), ("dense", "fc1.0", 512), ("relu", None),
    ("dense", "fc", None)]


class FedAvgCNN(nn.Module):
    """PFLlib's FedAvgCNN (system/flcore/trainmodel/models.py), as written
    there."""

    def __init__(self, in_features=1, num_classes=10, dim=1024):
        super().__init__()
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_features, 32, kernel_size=5, padding=0, stride=1,
                      bias=True),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=(2, 2)))
        self.conv2 = nn.Sequential(
            nn.Conv2d(32, 64, kernel_size=5, padding=0, stride=1, bias=True),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=(2, 2)))
        self.fc1 = nn.Sequential(nn.Linear(dim, 512), nn.ReLU(inplace=True))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        out = self.conv1(x)
        out = self.conv2(out)
        out = torch.flatten(out, 1)
        out = self.fc1(out)
        out = self.fc(out)
        return out


def layer_list_matches(layers):
    """True when a spec's layer list is FedAvgCNN's structure with its
    names (any k); the dense layers' widths are checked by the caller."""
    if len(layers) != len(FEDAVGCNN_LAYERS):
        return False
    for got, want in zip(layers, FEDAVGCNN_LAYERS):
        if got.get("type") != want[0]:
            return False
        if want[1] is not None and got.get("name") != want[1]:
            return False
        if want[0] == "conv2d" and (
                got.get("out_channels") != want[2] or got.get("kernel") != 5
                or got.get("stride", 1) != 1 or got.get("padding", 0) != 0
                or got.get("bias", True) is not True):
            return False
        if want[0] == "maxpool2d" and (got.get("kernel") != 2
                                       or got.get("stride", 2) != 2):
            return False
        if want[0] == "dense" and got.get("bias", True) is not True:
            return False
    return layers[7].get("out") == 512


def build_model(model):
    """FedAvgCNN for the spec's model: the preset, or the same structure as
    a layer list; returns (module, input shape [C, H, W])."""
    if model.get("kind") != "layers" or len(model.get("input", [])) != 3:
        raise Unsupported("model %r (FedAvgCNN: a layers model on an image)"
                          % model.get("kind"))
    if model.get("loss", "cross_entropy") != "cross_entropy":
        raise Unsupported("loss %r (FedAvgCNN trains on cross_entropy)"
                          % model.get("loss"))
    C, H, W = model["input"]
    if "preset" in model:
        if model["preset"] != "fedavgcnn":
            raise Unsupported("preset %r" % model["preset"])
        k = model["k"]
    elif layer_list_matches(model["layers"]):
        k = model["layers"][-1]["out"]
    else:
        raise Unsupported("a layer list that is not FedAvgCNN's")
    h, w = ((H - 4) // 2 - 4) // 2, ((W - 4) // 2 - 4) // 2
    return FedAvgCNN(C, k, 64 * h * w), (C, H, W)


def state_vector(module):
    """The flat vector: state_dict() values in order, each row-major (a
    detached copy)."""
    return torch.cat([v.detach().reshape(-1).clone()
                      for v in module.state_dict().values()])


def load_state_vector(module, w):
    """Write the flat vector w into the module's state_dict, in place (the
    parameter objects, and so an optimizer's state keyed by them, stay)."""
    w, at = torch.as_tensor(w, dtype=torch.float64), 0
    with torch.no_grad():
        for v in module.state_dict().values():
            v.copy_(w[at:at + v.numel()].reshape(v.shape))
            at += v.numel()
    if at != w.numel():
        raise Unsupported("w has %d numbers, the model %d" % (w.numel(), at))


LIFETIMES = {"reset": "train", "client": "init", "server": "shared"}


def optimizer_settings(spec):
    """The vector's opt.* keys over their defaults; refuses what this
    example does not implement."""
    alg = spec["algorithm"]
    if alg.get("preset", "paper") != "paper":
        raise Unsupported("preset %r of fedavg" % alg["preset"])
    given = dict(alg.get("hyperparameters", {}), **alg.get("switches", {}))
    cfg = dict(OPT_DEFAULTS, **{k: v for k, v in given.items()
                                if k.startswith("opt.")})
    unknown = set(cfg) - set(OPT_DEFAULTS)
    if unknown:
        raise Unsupported("opt.* keys this example does not implement: %s"
                          % ", ".join(sorted(unknown)))
    if given.get("lr.schedule", "constant") != "constant":
        raise Unsupported("lr.schedule %r" % given["lr.schedule"])
    if given.get("fedavg.weights", "samples") != "samples":
        raise Unsupported("fedavg.weights %r" % given["fedavg.weights"])
    if cfg["opt.clip"] != "off" or cfg["opt.decay_scope"] != "all":
        raise Unsupported("opt.clip / opt.decay_scope other than off / all")
    if cfg["opt.momentum_form"] != "pytorch":
        raise Unsupported("opt.momentum_form %r" % cfg["opt.momentum_form"])
    if cfg["opt.method"] == "sgd" and cfg["opt.weight_decay_form"] != "coupled":
        raise Unsupported("decoupled weight decay with SGD")
    if cfg["opt.method"] == "adam" and cfg["opt.weight_decay_form"] != "coupled":
        raise Unsupported("decoupled weight decay with adam (use adamw)")
    cfg["eta"] = given["eta"]
    return cfg


def make_optimizer(cfg, params):
    """torch.optim.SGD(params, lr, momentum, weight_decay), or Adam, AdamW,
    as the vector's opt.* keys say."""
    if cfg["opt.method"] == "sgd":
        return torch.optim.SGD(params, lr=cfg["eta"],
                               momentum=cfg["opt.momentum"],
                               dampening=cfg["opt.dampening"],
                               nesterov=cfg["opt.nesterov"] == "on",
                               weight_decay=cfg["opt.weight_decay"])
    betas = (cfg["opt.beta1"], cfg["opt.beta2"])
    if cfg["opt.method"] == "adam":
        return torch.optim.Adam(params, lr=cfg["eta"], betas=betas,
                                eps=cfg["opt.eps"],
                                weight_decay=cfg["opt.weight_decay"])
    if cfg["opt.method"] == "adamw":
        return torch.optim.AdamW(params, lr=cfg["eta"], betas=betas,
                                 eps=cfg["opt.eps"],
                                 weight_decay=cfg["opt.weight_decay"])
    raise Unsupported("opt.method %r" % cfg["opt.method"])


class Client:
    """Client k: its data, its own model, and (lifetime "init") its own
    optimizer, PFLlib clientbase-style."""

    def __init__(self, k, model, data, shape, cfg, lifetime, shared=None):
        self.id, self.cfg, self.lifetime = k, cfg, lifetime
        self.X = torch.tensor(data["X"]).reshape((-1,) + shape)
        self.y = torch.tensor(data["y"]).long()
        self.n = len(data["y"])
        self.model = copy.deepcopy(model)
        self.loss = nn.CrossEntropyLoss()
        if lifetime == "init":           # clientbase.__init__: kept
            self.optimizer = make_optimizer(cfg, self.model.parameters())
        elif lifetime == "shared":       # one object for every client
            self.model, self.optimizer = shared
        else:
            self.optimizer = None

    def set_parameters(self, global_model):
        """w ← w_t, in place."""
        load_state_vector(self.model, state_vector(global_model))

    def train(self, rec, t, batches):
        """ClientUpdate(k, w_t): one optimizer step per scheduled batch."""
        optimizer = self.optimizer
        if self.lifetime == "train":     # a fresh optimizer every update
            optimizer = make_optimizer(self.cfg, self.model.parameters())
        self.model.train()
        rec.record("client_begin", "w_local", state_vector(self.model),
                   round=t, client=self.id, step=0)
        for s, b in enumerate(batches, start=1):
            idx = torch.tensor(b, dtype=torch.long)
            optimizer.zero_grad()
            self.loss(self.model(self.X[idx]), self.y[idx]).backward()
            optimizer.step()
            rec.step(t, self.id, s, "w_local", state_vector(self.model))
        rec.client_end(t, self.id, "w_local", state_vector(self.model))
        return state_vector(self.model)


ARRAYS_ABOVE = 4096     # P above which the records are NumPy arrays


def run(vector_raw, lifetime=None, base_dir="."):
    """FedAvg with torch.optim on FedAvgCNN; returns the pflref-result/1
    dict (its values NumPy arrays when P > ARRAYS_ABOVE: write it with
    torch_common.write_result).  lifetime: "train", "init" or "shared"
    (module docstring); None takes the vector's opt.state.  base_dir: the
    vector's folder, where a file reference of its init.w points from
    (`pflref freeze --arrays files`)."""
    spec = vector_raw.get("spec", {})
    if vector_raw.get("format") != "pflref-golden/1":
        raise Unsupported("not a golden vector (format %r)"
                          % vector_raw.get("format"))
    if spec["algorithm"]["name"] != "fedavg":
        raise Unsupported("algorithm %r, not fedavg"
                          % spec["algorithm"]["name"])
    if spec["schedule"]["kind"] != "given" or "clients" not in spec["problem"]:
        raise Unsupported("a generated schedule or a problem file")
    cfg = optimizer_settings(spec)
    if lifetime is None:
        lifetime = "init" if KEPT_BUG else LIFETIMES[cfg["opt.state"]]
    global_model, shape = build_model(spec["model"])
    init = spec.get("init", {"kind": "zeros"})
    if init["kind"] != "given":
        raise Unsupported("init %r (give w0)" % init["kind"])
    w0 = init["w"]
    if isinstance(w0, str):      # a .npy file beside the vector
        if ".npz:" in w0:
            raise Unsupported("init.w in an .npz archive")
        w0 = np.load(os.path.join(base_dir, w0))
    load_state_vector(global_model, w0)
    shared = None
    if lifetime == "shared":
        worker = copy.deepcopy(global_model)
        shared = (worker, make_optimizer(cfg, worker.parameters()))
    clients = [Client(k, global_model, c, shape, cfg, lifetime, shared)
               for k, c in enumerate(spec["problem"]["clients"])]
    n = [c.n for c in clients]
    P = state_vector(global_model).numel()
    rec = Recorder(vector_raw["id"], arrays=P > ARRAYS_ABOVE)
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        rec.round_begin(t, state_vector(global_model))
        local = {}
        for k, batches in plan(rnd).items():
            clients[k].set_parameters(global_model)
            local[k] = clients[k].train(rec, t, batches)
        coef = weights("samples", sorted(local), n)       # n_k / m_t
        w = torch.zeros_like(state_vector(global_model))
        for k in sorted(local):
            w = w + coef[k] * local[k]
        load_state_vector(global_model, w)
        rec.server(t, state_vector(global_model))
    rec.final("w", state_vector(global_model))
    return rec.result()


if __name__ == "__main__":
    main(lambda raw: run(raw, base_dir=os.path.dirname(
        os.path.abspath(sys.argv[1]))))
# SPDX-License-Identifier: GPL-3.0-or-later
