"""torch_common.py: what the PyTorch candidates share.

The models of docs/models.md as torch.nn.Module objects, a client's data and
its batch loss, the run's settings (defaults, presets, the spec's own values),
the client optimizer of docs/optimizers.md as torch code builds it
(ClientOptimizers: torch.optim.SGD / Adam / AdamW, parameter groups,
clip_grad_norm_, the optimizer's lifetime), a generated schedule drawn as
numpy's RandomState draws it, and a small recorder that writes a
pflref-result/1 dict.  The recorder has the
method names of the pflref package's pflref.Recorder (round_begin, step,
client_end, server, final, record), so a candidate written against it moves
to the package by changing one import.

Everything runs in float64 by default: the reference is double precision,
and a float64 candidate is held to rounding differences.  PFLREF_TORCH_DTYPE
= float32 or bfloat16 makes torch's default dtype that type (the models, the
data and every tensor the candidates make without an explicit dtype): the
same candidates then stand for float32 or bfloat16 code, to be checked with
`pflref check --candidate-precision fp32` or `bf16` (docs/validate.md).
Written from docs/models.md, docs/formats.md and docs/algorithms/*.md, not
from pflref's C code.
"""
import copy
import json
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

DTYPES = {"float64": torch.float64, "float32": torch.float32,
          "bfloat16": torch.bfloat16}
DTYPE_NAME = os.environ.get("PFLREF_TORCH_DTYPE", "float64")
if DTYPE_NAME not in DTYPES:
    sys.exit("torch_common: PFLREF_TORCH_DTYPE is float64, float32 or bfloat16: "
             + DTYPE_NAME)
torch.set_default_dtype(DTYPES[DTYPE_NAME])


class Unsupported(Exception):
    """The vector needs something the example does not implement."""


# ---- models (docs/models.md, "Parameter layout") ----------------------------

class Quadratic(nn.Module):
    """The data-free model: one parameter w ∈ ℝᵈ; the client's a and c are
    its data (see Client.loss)."""

    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(d))


class SoftmaxRegression(nn.Module):
    """z = W x + b (k classes), loss −log softmax(z)_y: nn.Linear(d, k)
    stores W as k × d, then b, the blocks W, b of the flat vector."""

    def __init__(self, d, k, bias):
        super().__init__()
        self.linear = nn.Linear(d, k, bias=bias)

    def forward(self, x):
        return self.linear(x)


class MaskedDropout(nn.Dropout):
    """torch.nn.Dropout(p) whose training forward takes its mask as data:
    x * (m / (1 − p)), the product ATen's CPU dropout computes
    (aten/src/ATen/native/Dropout.cpp, _dropout_impl: noise.bernoulli_(1 −
    p); noise.div_(1 − p); input * noise) with the Bernoulli draw replaced
    by the schedule's mask m, which Client.loss sets (self.mask) before each
    training pass; in eval() the identity, nn.Dropout's own forward."""

    def __init__(self, p, name):
        super().__init__(p)
        self.pflref_name = name
        self.mask = None

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        if self.mask is None:
            raise RuntimeError("dropout %s: a training pass without its mask"
                               % self.pflref_name)
        noise = self.mask.to(x.dtype).reshape(x.shape).div(1.0 - self.p)
        self.mask = None                     # one mask, one pass
        return x * noise


LAYER_TYPES = ("dense", "conv2d", "maxpool2d", "avgpool2d", "flatten", "relu",
               "tanh", "sigmoid", "dropout")


def build_layers(model):
    """A layer list (docs/models.md, "layers") as an nn.Sequential, its
    parameters in list order (each layer's weight, then bias: the state_dict
    order); an image input is unflattened to N × C × H × W first.  Batch
    normalisation is not taken (its running statistics are buffers that
    parameters() does not hold)."""
    if "layers" not in model:
        raise Unsupported("a layer-list preset (fedavgcnn_torch.py takes "
                          "FedAvgCNN)")
    shape = tuple(model["input"])
    mods = [nn.Unflatten(1, shape)] if len(shape) == 3 else []
    for i, L in enumerate(model["layers"]):
        t = L["type"]
        if t not in LAYER_TYPES:
            raise Unsupported("layer type %r" % t)
        if t == "dense":
            mods.append(nn.Linear(shape[0], L["out"], bias=L.get("bias", True)))
            shape = (L["out"],)
        elif t == "conv2d":
            k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
            mods.append(nn.Conv2d(shape[0], L["out_channels"], k, stride=s,
                                  padding=p, bias=L.get("bias", True)))
            shape = (L["out_channels"], (shape[1] + 2 * p - k) // s + 1,
                     (shape[2] + 2 * p - k) // s + 1)
        elif t in ("maxpool2d", "avgpool2d"):
            k = L["kernel"]
            s = L.get("stride", k)
            pool = nn.MaxPool2d if t == "maxpool2d" else nn.AvgPool2d
            mods.append(pool(k, stride=s))
            shape = (shape[0], (shape[1] - k) // s + 1, (shape[2] - k) // s + 1)
        elif t == "flatten":
            mods.append(nn.Flatten())
            shape = (int(np.prod(shape)),)
        elif t == "dropout":
            mods.append(MaskedDropout(L.get("p", 0.5), str(L.get("name", i))))
        else:
            mods.append({"relu": nn.ReLU, "tanh": nn.Tanh,
                         "sigmoid": nn.Sigmoid}[t]())
    return nn.Sequential(*mods)


def build_model(model):
    """The nn.Module of a spec's model, parameters in the documented order
    (PyTorch state_dict order, each matrix row-major)."""
    kind = model["kind"]
    if kind == "layers":
        return build_layers(model)
    if kind == "quadratic":
        return Quadratic(model["d"])
    if kind == "linear":                         # ŷ = xᵀw + b: w, then b
        return nn.Linear(model["d"], 1, bias=model.get("bias", False))
    if kind == "softmax":
        return SoftmaxRegression(model["d"], model["k"],
                                 model.get("bias", False))
    if kind == "mlp":                            # W1, b1, W2, b2
        bias = model.get("bias", True)
        act = {"relu": nn.ReLU(), "identity": nn.Identity()}
        return nn.Sequential(
            nn.Linear(model["d"], model["h"],
                      bias=model.get("hidden_bias", bias)),
            act[model.get("activation", "relu")],
            nn.Linear(model["h"], model.get("k", 1), bias=bias))
    raise Unsupported("model kind %r" % kind)


# pflref's block names and groups for each torch parameter name
BLOCKS = {
    "quadratic": {"w": ("w", ("input", "head"))},
    "linear": {"weight": ("w", ("input", "head")),
               "bias": ("b", ("input", "head"))},
    "softmax": {"linear.weight": ("W", ("input", "head")),
                "linear.bias": ("b", ("input", "head"))},
    "mlp": {"0.weight": ("W1", ("input",)), "0.bias": ("b1", ("input",)),
            "2.weight": ("W2", ("head",)), "2.bias": ("b2", ("head",))},
}


def layer_blocks(model):
    """A layer list's torch parameter names (build_layers' nn.Sequential
    indices, after the Unflatten of an image input) → (block NAME.weight or
    NAME.bias, the layer's NAME, its groups): NAME is the layer's name or
    its index in the list; the first parametrised layer is the group input,
    the last the group head (docs/models.md, "Layout")."""
    off = 1 if len(model["input"]) == 3 else 0
    params = [(i, L) for i, L in enumerate(model["layers"])
              if L["type"] in ("dense", "conv2d")]
    out = {}
    for q, (i, L) in enumerate(params):
        name = str(L.get("name", i))
        groups = (("input",) if q == 0 else ()) + \
            (("head",) if q == len(params) - 1 else ())
        for role in ("weight", "bias"):
            out["%d.%s" % (i + off, role)] = ("%s.%s" % (name, role), name,
                                              groups)
    return out


def is_personal(model, param_name, names):
    """True when the split's list `names` (block names, a layer list's
    layer names, or the groups input, head) marks the torch parameter
    `param_name` personal."""
    if model["kind"] == "layers":
        block, layer, groups = layer_blocks(model)[param_name]
        return (block in names or layer in names
                or any(g in names for g in groups))
    if model["kind"] not in BLOCKS:
        raise Unsupported("a split of a %s model" % model["kind"])
    block, groups = BLOCKS[model["kind"]][param_name]
    return block in names or any(g in names for g in groups)


def flat(module):
    """The flat parameter vector w (a detached copy)."""
    return parameters_to_vector(module.parameters()).detach().clone()


def load_flat(module, w):
    """Write the flat vector w into the module's parameters."""
    with torch.no_grad():
        # an integer w (init.w [1, -1]) in the parameters' dtype
        vector_to_parameters(torch.as_tensor(
            w, dtype=torch.get_default_dtype()), module.parameters())


def clone(module):
    """An independent copy: copy.deepcopy, never an alias."""
    return copy.deepcopy(module)


def squared_distance(module, ref_params):
    """‖θ − w‖² over every parameter; ref_params are tensors (no grad)."""
    return sum(((p - r) ** 2).sum()
               for p, r in zip(module.parameters(), ref_params))


def frozen(module):
    """Detached copies of the module's parameters: a fixed reference."""
    return [p.detach().clone() for p in module.parameters()]


# ---- data and the batch loss (docs/models.md, "The batch loss") -------------

class Client:
    """Client i's training data and the mean loss F(w; B) on a batch B of
    sample indices (in the listed order, repeats allowed)."""

    def __init__(self, model, data):
        self.kind = model["kind"]
        self.loss_name = model.get(
            "loss", "cross_entropy" if self.kind in ("softmax", "mlp")
            else "quadratic")
        if self.kind == "quadratic":             # f(w) = ½ Σ a_j (w_j − c_j)²
            self.a = torch.tensor(data["a"])
            self.c = torch.tensor(data["c"])
            self.n = data.get("n", 1)
            return
        # integer features in the JSON (X = [[1, 0], ...]) as the model's
        # floats, not a LongTensor nn.Linear cannot multiply
        self.X = torch.tensor(data["X"], dtype=torch.get_default_dtype())
        self.y = torch.tensor(data["y"])
        self.n = len(data["y"])
        self.passes, self.taken = [], 0      # dropout masks (Problem sets)

    def loss(self, module, batch):
        if self.kind == "quadratic":             # data-free: batch ignored
            return 0.5 * (self.a * (module.w - self.c) ** 2).sum()
        drops = [m for m in module.modules() if isinstance(m, MaskedDropout)]
        if drops and module.training:            # this pass's masks
            if self.taken >= len(self.passes):
                raise Unsupported("a training pass without dropout masks")
            masks = self.passes[self.taken]
            self.taken += 1
            for m in drops:
                m.mask = torch.tensor(masks[m.pflref_name])
        idx = torch.tensor(batch, dtype=torch.long)
        out, y = module(self.X[idx]), self.y[idx]
        if self.loss_name == "cross_entropy":    # −log softmax(z)_y
            return nn.functional.cross_entropy(out, y.long())
        r = out.squeeze(1) - y                   # ŷ − y
        if self.loss_name == "squared":          # (ŷ − y)²
            return (r ** 2).mean()
        return 0.5 * (r ** 2).mean()             # half_squared: ½(ŷ − y)²


# ---- settings: the defaults, the preset, then the spec's own values ---------

DEFAULTS = {           # each switch's paper reading (docs/algorithms/*.md)
    "fedavg.weights": "samples",
    "beta": 1.0, "pfedme.mu": 0.0, "pfedme.theta_start": "reset",
    "pfedme.weights": "uniform", "pfedme.train": "all",
    "pfedme.personal_eval": "theta",
    "ditto.order": "interleaved_shared_batch", "ditto.prox": "squared",
    "ditto.prox_ref": "round_start", "ditto.weights": "samples",
    "ditto.batches": "shared",
    "pfl.state": "stateful", "pfl.weights": "samples",
    "pfl.finetune": "personal",
    "pfedme.eval_reset": "none",
    "lr.schedule": "constant", "lr.scope": "all", "lr.gamma": 1.0,
    "lr.step_rounds": 1, "lr.count": "rounds",
    "fedprox.sampling": "paper",
}
# the client optimizer's keys (docs/optimizers.md) at the papers' plain SGD
OPT_DEFAULTS = {"opt.method": "sgd", "opt.momentum": 0.0,
                "opt.dampening": 0.0, "opt.nesterov": "off",
                "opt.weight_decay": 0.0, "opt.weight_decay_form": "coupled",
                "opt.momentum_form": "pytorch", "opt.decay_scope": "all",
                "opt.clip": "off", "opt.beta1": 0.9, "opt.beta2": 0.999,
                "opt.eps": 1e-8, "opt.state": "reset"}
PRESETS = {            # docs/algorithms/pfedme.md, ditto.md, fedalt-fedsim.md
    ("pfedme", "official"): {
        "pfedme.theta_start": "warm", "pfedme.mu": 0.001,
        "pfedme.weights": "samples", "pfedme.personal_eval": "local_w"},
    ("pfedme", "pfllib"): {
        "pfedme.theta_start": "warm", "pfedme.mu": 0.001,
        "pfedme.weights": "samples", "pfedme.train": "sampled",
        "pfedme.personal_eval": "global", "lr.scope": "eta_p",
        "lr.count": "trainings", "bn.aggregate": "parameters_only"},
    # PFLlib's serverpFedMe.py train() as shipped: evaluate() before each
    # round copies the initial parameters into an untrained client's
    # personal model (docs/algorithms/pfedme.md)
    ("pfedme", "pfllib_run"): {
        "pfedme.theta_start": "warm", "pfedme.mu": 0.001,
        "pfedme.weights": "samples", "pfedme.train": "sampled",
        "pfedme.personal_eval": "global", "lr.scope": "eta_p",
        "lr.count": "trainings", "pfedme.eval_reset": "initial",
        "bn.aggregate": "parameters_only"},
    ("ditto", "official"): {"ditto.weights": "uniform"},
    # PFLlib: ptrain() on its own loader first (rounds[t].personal)
    ("ditto", "pfllib"): {"ditto.order": "personal_first",
                          "ditto.batches": "separate", "lr.count": "trainings",
                          "bn.aggregate": "parameters_only"},
    # PFLlib sends parameters() only: bn.aggregate (docs/models.md)
    ("fedavg", "pfllib"): {"fedavg.weights": "samples",
                           "lr.count": "trainings",
                           "bn.aggregate": "parameters_only"},
    ("fedalt", "fedrep"): {"pfl.weights": "uniform",
                           "pfl.finetune": "personal", "split": ["head"]},
    # PFLlib's FedRep: n_i weights, each client's -ld schedulers stepped
    # when it trains (notes-pfllib-as-run §2.2, §2.3)
    ("fedalt", "fedrep_pfllib"): {"pfl.weights": "samples",
                                  "pfl.finetune": "personal",
                                  "split": ["head"], "lr.count": "trainings"},
    # docs/algorithms/feddyn.md: alpemreacar/FedDyn's SGD weight decay;
    # PFLlib's clientdyn.py (each client's ExponentialLR, :58-59)
    ("feddyn", "official"): {"feddyn.alpha_k": "size_scaled",
                             "opt.weight_decay": 0.001},
    ("feddyn", "pfllib"): {"feddyn.prox": "norm_half",
                           "lr.count": "trainings",
                           "bn.aggregate": "parameters_only"},
    # docs/algorithms/fedprox.md: the authors' code and PFLlib
    ("fedprox", "official"): {"fedprox.sampling": "uniform_weighted"},
    ("fedprox", "pfllib"): {"fedprox.sampling": "uniform_weighted",
                            "lr.count": "trainings",
                            "bn.aggregate": "parameters_only"},
    # docs/algorithms/scaffold.md: PFLlib's option II with its undecayed η
    ("scaffold", "pfllib"): {"scaffold.option": "II",
                             "scaffold.c_lr": "initial",
                             "lr.count": "trainings",
                             "bn.aggregate": "parameters_only",
                             "scaffold.bn_global": "previous"},
    # docs/algorithms/fedamp.md: PFLlib's clientamp.py and serveramp.py
    ("fedamp", "pfllib"): {"fedamp.peers": "previous", "fedamp.start": "own",
                           "fedamp.prox": "detached", "lr.count": "trainings",
                           "bn.aggregate": "parameters_only"},
    # docs/algorithms/apple.md: the authors' code and PFLlib
    ("apple", "official"): {"apple.scheduler": "exponential",
                            "apple.prox": "full"},
    ("apple", "pfllib"): {"apple.p_init": "uniform",
                          "apple.order": "core_first",
                          "apple.p_grad": "block_mean",
                          "apple.core_lr": "n_eta",
                          "apple.lambda_round": "previous",
                          "bn.aggregate": "parameters_only"},
    # docs/algorithms/fedala.md: TsingZ0/FedALA's and PFLlib's ALA.py
    ("fedala", "official"): {"fedala.skip": "sum_first",
                             "fedala.p_unit": "tensors",
                             "fedala.start": "own",
                             "bn.aggregate": "parameters_only"},
    ("fedala", "pfllib"): {"fedala.skip": "sum_first",
                           "fedala.p_unit": "tensors",
                           "fedala.start": "own",
                           "lr.count": "trainings",
                           "fedala.ala_mode": "pfllib",
                           "bn.aggregate": "parameters_only"},
    # PFLlib's server: ALA on every client each round (serverala.py:73-74)
    ("fedala", "pfllib_run"): {"fedala.skip": "sum_first",
                               "fedala.p_unit": "tensors",
                               "fedala.start": "own",
                               "lr.count": "trainings",
                               "fedala.ala_clients": "all",
                               "fedala.ala_mode": "pfllib",
                               "bn.aggregate": "parameters_only"},
}


def settings(spec):
    """Every hyperparameter and switch of the run, and `split` (the
    personal blocks): defaults, then the preset's, then the spec's."""
    alg = spec["algorithm"]
    cfg = dict(DEFAULTS, split=[])
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if (alg["name"], preset) not in PRESETS:
            raise Unsupported("preset %r of %s" % (preset, alg["name"]))
        cfg.update(PRESETS[(alg["name"], preset)])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    opt = sorted(k for k in cfg if k.startswith("opt.")
                 and cfg[k] != OPT_DEFAULTS.get(k))
    if opt:     # these candidates step with plain torch.optim.SGD(lr)
        raise Unsupported("client optimizer %s (fedavgcnn_torch.py has "
                          "torch.optim's)" % ", ".join(opt))
    if "split" in spec:
        cfg["split"] = spec["split"].get("personal", [])
    return cfg


def spell_preset(vector_raw, algorithm, presets):
    """A copy of the vector with its preset, one of `presets` {name: its
    switches}, written out as switches below the spec's own (for a
    candidate whose presets torch_common.PRESETS does not hold, before
    take_optimizer takes the opt.* keys out)."""
    vec = copy.deepcopy(vector_raw)
    alg = vec.get("spec", {}).get("algorithm", {})
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise Unsupported("preset %r of %s" % (preset, algorithm))
        alg.pop("preset")
        alg["switches"] = dict(presets[preset], **alg.get("switches", {}))
    return vec


def lr_factor(cfg, t, which="eta", trained=None):
    """Round t's factor on a step size (lr.schedule, docs/formats.md):
    1 (constant, the papers), γ^t (exponential, PFLlib's -ld) or
    γ^⌊t / lr.step_rounds⌋ (step, torch's StepLR shape); with lr.scope =
    eta_p only η_p decays (pFedMe's, APPLE's).  lr.count = trainings counts the
    client's own rounds before (`trained`, PFLlib's per-client scheduler)
    instead of t."""
    if cfg["lr.scope"] == "eta_p" and which != "eta_p":
        return 1.0
    if "lr-not-stepped" in CONTROLS:      # a negative control
        return 1.0
    if cfg["lr.count"] == "trainings" and cfg["lr.schedule"] != "constant" \
            and "lr-count-rounds" not in CONTROLS:
        if trained is None:
            raise Unsupported("lr.count = trainings in this example")
        t = trained
    if cfg["lr.schedule"] == "exponential":
        return cfg["lr.gamma"] ** t
    if cfg["lr.schedule"] == "step":
        return cfg["lr.gamma"] ** (t // int(cfg["lr.step_rounds"]))
    if cfg["lr.schedule"] != "constant":
        raise Unsupported("lr.schedule %r" % cfg["lr.schedule"])
    return 1.0


def weights(scheme, S, n):
    """Aggregation weights over S: n_i / Σ_S n_j ("samples") or 1/|S|."""
    if scheme == "samples":
        m = sum(n[i] for i in S)
        return {i: n[i] / m for i in S}
    if scheme == "uniform":
        return {i: 1.0 / len(S) for i in S}
    raise Unsupported("aggregation weights %r" % scheme)


# ---- the client optimizer (docs/optimizers.md) -------------------------------

# Negative controls (test_torch_candidates.py): each name removes one
# setting's effect, so that a vector which needs it must fail:
# opt-state-reset (the optimizer recreated at every client update whatever
# opt.state says), opt-no-clip (clip_grad_norm_ not called),
# opt-torch-momentum (torch.optim.SGD's form for opt.momentum_form =
# classical), opt-no-nesterov (nesterov=False), opt-decay-all
# (opt.decay_scope read as all), opt-decay-coupled
# (SGD's decoupled decay taken as coupled), lr-not-stepped (the
# scheduler never stepped: every factor 1), lr-count-rounds (lr.count =
# trainings read as rounds), opt-one-slot (an algorithm's optimizers
# share one kept state), opt-no-momentum (torch.optim.SGD's momentum 0),
# opt-no-decay (weight decay 0), sched-seed-once (a generated schedule's
# clients from one RandomState(client_seed), not a fresh one per round);
# and the algorithms' own, read by their candidates: fedsim-sequential,
# fedsim-one-lr, cfl-parent-update, ifca-cluster-divisor,
# ifca-estimate-in-place, fedfomo-affinity-ratio, apple-clip-core (each
# candidate's docstring says what it breaks).
# Empty by default.
CONTROLS = set(filter(None, os.environ.get("PFLREF_TORCH_CONTROL",
                                           "").split(",")))


def take_optimizer(vector_raw):
    """(a copy of the vector with its opt.* keys taken out of
    algorithm.hyperparameters and .switches, the opt.* settings: the
    spec's over OPT_DEFAULTS), for a candidate that steps through
    ClientOptimizers; Problem's settings() then sees no opt.* key."""
    vec = copy.deepcopy(vector_raw)
    alg = vec.get("spec", {}).get("algorithm", {})
    ocfg = dict(OPT_DEFAULTS)
    preset = PRESETS.get((alg.get("name"), alg.get("preset", "paper")), {})
    if any(k.startswith("opt.") for k in preset):
        # a preset with optimizer keys (feddyn's official), spelled out
        # below the spec's own values: settings() reads it as before
        alg.pop("preset")
        alg["hyperparameters"] = dict(preset,
                                      **alg.get("hyperparameters", {}))
    for part in ("hyperparameters", "switches"):
        for k in [k for k in alg.get(part, {}) if k.startswith("opt.")]:
            ocfg[k] = alg[part].pop(k)
    if ocfg["opt.clip"] not in ("off", "norm") or \
            ocfg["opt.method"] not in ("sgd", "adam", "adamw") or \
            ocfg["opt.state"] not in ("reset", "client", "server") or \
            ocfg["opt.momentum_form"] not in ("pytorch", "classical"):
        raise Unsupported("client optimizer %s"
                          % ", ".join("%s = %s" % kv for kv in ocfg.items()))
    return vec, ocfg


class ClassicalSGD(torch.optim.Optimizer):
    """SGD with classical momentum (Polyak 1964; Sutskever et al., ICML
    2013, eq. (1)-(2)): v ← μ v − η d; θ ← θ + v, d the gradient (plus
    λθ, coupled decay).  torch.optim.SGD has the other form (b ← μ b + d;
    θ ← θ − η b); the two differ once η changes while the buffer lives, so
    a user who wants this one writes these few lines."""

    def __init__(self, params, lr, momentum, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:       # a frozen block keeps its buffer
                    continue
                d = p.grad
                if g["weight_decay"]:
                    d = d.add(p, alpha=g["weight_decay"])
                st = self.state[p]
                v = st.get("velocity")
                v = (-g["lr"] * d if v is None
                     else g["momentum"] * v - g["lr"] * d)
                st["velocity"] = v
                p.add_(v)


def is_bias_or_bn(net, name):
    """True for a bias (b, b1, b2, NAME.bias) or a batchnorm layer's γ, β:
    the blocks opt.decay_scope = weights leaves undecayed."""
    owner = name.rsplit(".", 1)[0] if "." in name else ""
    module = net.get_submodule(owner) if owner else net
    return name.endswith("bias") or isinstance(
        module, nn.modules.batchnorm._BatchNorm)


class ClientOptimizer:
    """One client optimizer over every parameter of `net`, used as torch
    code uses one: opt.zero_grad(); loss.backward(); opt.step().  A block
    that does not move in a step (FedAlt's u during the v steps) has its
    .grad set to None first (freeze()): torch skips it, its buffers and
    step count kept, and it stays out of the clip norm.
    step() is, in docs/optimizers.md's order:
      torch.nn.utils.clip_grad_norm_(the parameters with a gradient, c)
        under opt.clip = norm (c / (‖d‖ + 1e-6) when below 1, on the loss
        gradient, proximal terms included, before any decay);
      θ ← θ (1 − η λ_B) for SGD's opt.weight_decay_form = decoupled (torch
        has it only inside AdamW: param.mul_(1 - lr * weight_decay));
      the torch optimizer's step: torch.optim.SGD (momentum, dampening,
        nesterov, coupled weight_decay), ClassicalSGD, torch.optim.Adam or
        AdamW; λ_B per parameter group (opt.decay_scope: the no-decay
        group of common training code)."""

    def __init__(self, ocfg, net, lr, personal=None, lr_personal=None):
        self.ocfg = ocfg
        lam = 0.0 if "opt-no-decay" in CONTROLS else ocfg["opt.weight_decay"]
        scope = ocfg["opt.decay_scope"]
        if "opt-decay-all" in CONTROLS:
            scope = "all"
        on, off = [], []
        # lr_personal: the personal blocks (personal(name)) in groups of
        # their own at that step size (FedSim's one optimizer with two
        # parameter groups, docs/optimizers.md)
        on_v, off_v = [], []
        for name, p in net.named_parameters():
            if scope == "weights":
                decays = not is_bias_or_bn(net, name)
            elif scope in ("shared", "personal"):
                if personal is None:
                    raise Unsupported("opt.decay_scope = %s without a split"
                                      % scope)
                decays = personal(name) == (scope == "personal")
            elif scope == "all":
                decays = True
            else:
                raise Unsupported("opt.decay_scope %r" % scope)
            if lr_personal is not None and personal(name):
                (on_v if decays else off_v).append(p)
            else:
                (on if decays else off).append(p)
        groups = [{"params": ps, "weight_decay": w}
                  for ps, w in ((on, lam), (off, 0.0)) if ps]
        groups += [{"params": ps, "weight_decay": w, "lr": lr_personal,
                    "pflref_personal": True}
                   for ps, w in ((on_v, lam), (off_v, 0.0)) if ps]
        method = ocfg["opt.method"]
        self.decoupled = method == "sgd" and \
            ocfg["opt.weight_decay_form"] == "decoupled" and \
            "opt-decay-coupled" not in CONTROLS
        if method == "sgd" and ocfg["opt.weight_decay_form"] not in (
                "coupled", "decoupled"):
            raise Unsupported("opt.weight_decay_form %r"
                              % ocfg["opt.weight_decay_form"])
        if self.decoupled:       # by hand before the step, not in SGD's d
            for g in groups:
                g["decoupled"], g["weight_decay"] = g["weight_decay"], 0.0
        classical = ocfg["opt.momentum_form"] == "classical" and \
            "opt-torch-momentum" not in CONTROLS
        if method in ("adam", "adamw"):
            kind = torch.optim.Adam if method == "adam" else torch.optim.AdamW
            self.opt = kind(groups, lr=lr, eps=ocfg["opt.eps"],
                            betas=(ocfg["opt.beta1"], ocfg["opt.beta2"]))
        elif classical:
            self.opt = ClassicalSGD(groups, lr=lr,
                                    momentum=ocfg["opt.momentum"])
        else:
            self.opt = torch.optim.SGD(groups, lr=lr,
                                       momentum=0.0
                                       if "opt-no-momentum" in CONTROLS
                                       else ocfg["opt.momentum"],
                                       dampening=ocfg["opt.dampening"],
                                       nesterov=ocfg["opt.nesterov"] == "on"
                                       and "opt-no-nesterov" not in CONTROLS)

    def set_lr(self, lr, lr_personal=None):
        """This round's η (a scheduler's param_group['lr'] = ...); the
        personal groups' lr_personal when the optimizer has them."""
        for g in self.opt.param_groups:
            g["lr"] = lr_personal if g.get("pflref_personal") else lr

    def zero_grad(self):
        self.opt.zero_grad(set_to_none=True)

    def freeze(self, moving):
        """Drop the gradients of the parameters not in `moving`."""
        keep = {id(p) for p in moving}
        for g in self.opt.param_groups:
            for p in g["params"]:
                if id(p) not in keep:
                    p.grad = None

    def step(self):
        grads = [p for g in self.opt.param_groups for p in g["params"]
                 if p.grad is not None]
        if self.ocfg["opt.clip"] == "norm" and "opt-no-clip" not in CONTROLS:
            torch.nn.utils.clip_grad_norm_(grads, self.ocfg["opt.clip_norm"])
        if self.decoupled:
            with torch.no_grad():
                for g in self.opt.param_groups:
                    for p in g["params"]:
                        if p.grad is not None and g["decoupled"]:
                            p.mul_(1 - g["lr"] * g["decoupled"])
        self.opt.step()


class ClientOptimizers:
    """The clients' optimizers and where opt.state keeps their state
    (docs/optimizers.md, "Where the state lives"): reset, a new optimizer
    for every client update (built in train()); client, each client's
    kept across rounds (PFLlib's clientbase.py: self.optimizer built once
    in __init__); server, one carried from client to client in training
    order.  `slot` tells an algorithm's optimizers apart (Ditto's
    optimizer and poptimizer, FedAlt's body and personal one).  The
    candidates train a new copy of the model each round, so a kept state
    moves into the new object through state_dict() / load_state_dict()
    (as a checkpoint restores it); lr is set afterwards, the saved one
    being the last round's."""

    def __init__(self, ocfg):
        self.ocfg, self.saved = ocfg, {}

    def key(self, slot, i):
        life = self.ocfg["opt.state"]
        if life == "reset" or "opt-state-reset" in CONTROLS:
            return None
        if "opt-one-slot" in CONTROLS:     # a negative control
            slot = 0
        return (slot, i if life == "client" else "server")

    def get(self, slot, i, net, lr, personal=None, lr_personal=None):
        """Client i's optimizer `slot` over net's parameters at step size
        lr; personal(name): the split's test, for opt.decay_scope (and,
        with lr_personal, the personal blocks' groups at that step size)."""
        opt = ClientOptimizer(self.ocfg, net, lr, personal, lr_personal)
        key = self.key(slot, i)
        if key in self.saved:
            opt.opt.load_state_dict(self.saved[key])
            opt.set_lr(lr, lr_personal)
        return opt

    def keep(self, slot, i, opt):
        """The end of client i's update: keep the state its lifetime
        carries on."""
        key = self.key(slot, i)
        if key is not None:
            self.saved[key] = copy.deepcopy(opt.opt.state_dict())


# ---- the vector: model, clients, w0, schedule -------------------------------

class Problem:
    """What a candidate reads from a golden vector (the parsed JSON)."""

    def __init__(self, vector_raw, algorithm):
        if vector_raw.get("format") != "pflref-golden/1":
            raise Unsupported("not a golden vector (format %r)"
                              % vector_raw.get("format"))
        self.id = vector_raw["id"]
        self.spec = spec = vector_raw["spec"]
        if spec["algorithm"]["name"] != algorithm:
            raise Unsupported("algorithm %r, not %s"
                              % (spec["algorithm"]["name"], algorithm))
        if "clients" not in spec["problem"]:
            raise Unsupported("a problem file or generator (give the data)")
        if spec["schedule"]["kind"] != "given":
            spec = dict(spec, schedule=generated(
                spec, [len(c["y"]) if "y" in c else c.get("n", 1)
                       for c in spec["problem"]["clients"]]))
        self.model = spec["model"]
        self.cfg = settings(spec)
        self.clients = [Client(self.model, c)
                        for c in spec["problem"]["clients"]]
        # dropout: client i's masks, one pass per training forward, in the
        # order of the rounds and of the algorithm's passes
        for r in spec["schedule"]["rounds"]:
            for i, passes in zip(r["clients"], r.get("dropout", [])):
                self.clients[i].passes += passes
        # then the phase after training's: post_dropout[i] for client i
        for i, passes in enumerate(spec["schedule"].get("post_dropout", [])):
            self.clients[i].passes += passes
        self.n = [c.n for c in self.clients]
        self.rounds = spec["schedule"]["rounds"]
        self.post = spec["schedule"].get("post")
        self.global_model = build_model(self.model)
        init = spec.get("init", {"kind": "zeros"})
        if init["kind"] == "given":
            load_flat(self.global_model, init["w"])
        elif init["kind"] == "zeros":
            load_flat(self.global_model, torch.zeros(
                sum(p.numel() for p in self.global_model.parameters())))
        else:
            raise Unsupported("init %r (give w0 as data)" % init["kind"])


def generated(spec, n):
    """A generated schedule (docs/formats.md, "schedule") as a PyTorch
    user draws it: round t's clients by numpy's
    RandomState(client_seed + t).choice(N, m, replace=False) (the
    numpy_legacy sampler, bit for bit), trained in ascending id, each
    participant's batches those of DataLoader(shuffle=False,
    batch_size=B) over its samples (batches = split_once: index order,
    the ragged last batch kept), E epochs of them or `steps` taken
    cyclically.  The gsl sampler, reshuffle (GSL's permutations) and the
    algorithms' own draws (pFedMe's selected, FedProx's draws, post and
    personal work, peers) are refused: replay the result's schedule."""
    sched, alg = spec["schedule"], spec["algorithm"]
    N = len(n)
    m = sched.get("clients_per_round", N)
    if m < N and sched.get("sampler", "gsl") != "numpy_legacy":
        raise Unsupported("a generated schedule with the gsl sampler "
                          "(replay a given one)")
    if sched.get("batches", "split_once") != "split_once" or any(
            k in sched for k in ("post", "personal", "peers")) or \
            alg["name"] in ("pfedme", "fedprox", "fedfomo"):
        raise Unsupported("a generated schedule beyond numpy_legacy and "
                          "split_once batches (replay a given one)")
    work = sched["local"]
    rounds = []
    once = np.random.RandomState(sched.get("client_seed", 1))
    for t in range(sched["rounds"]):
        rs = (once if "sched-seed-once" in CONTROLS    # a negative control
              else np.random.RandomState(sched.get("client_seed", 1) + t))
        drawn = list(range(N)) if m == N else [
            int(k) for k in rs.choice(N, m, replace=False)]
        batches = []
        for k in sorted(drawn):
            B = work.get("batch_size", 0)
            B = n[k] if B == 0 or B > n[k] else B
            split = [list(range(a, min(a + B, n[k])))
                     for a in range(0, n[k], B)]
            count = (work["epochs"] * len(split) if "epochs" in work
                     else work["steps"])
            batches.append([split[q % len(split)] for q in range(count)])
        rounds.append({"clients": sorted(drawn), "drawn": drawn,
                       "batches": batches})
    return {"kind": "given", "rounds": rounds}


def plan(rnd):
    """A round's client → its list of batches, in ascending client id."""
    return dict(sorted(zip(rnd["clients"], rnd["batches"])))


# ---- the result -------------------------------------------------------------

def values(x, arrays=False):
    """A record's value as a list of Python floats (exact float64), or
    with arrays=True a NumPy float64 copy (write_result puts those in
    .npy files)."""
    if isinstance(x, nn.Module):
        x = flat(x)
    if isinstance(x, torch.Tensor):
        x = x.detach().to(torch.float64).reshape(-1)
        return x.numpy().copy() if arrays else x.tolist()
    return np.array(x, dtype=np.float64) if arrays else [float(v) for v in x]


class Recorder:
    """Trajectory records {event, phase, round, client, step, name, value}
    and the final state; round, client and step are left out when None.
    arrays=True keeps each value as a NumPy array, for a model whose
    P numbers a record would be slow as Python floats (write_result)."""

    def __init__(self, vector_id, arrays=False):
        self.id, self.trajectory, self.finals = vector_id, [], {}
        self.arrays = arrays

    def record(self, event, name, value, round=None, client=None,
               step=None, phase="train"):
        rec = {"event": event, "phase": phase}
        for key, v in (("round", round), ("client", client), ("step", step)):
            if v is not None:
                rec[key] = v
        rec.update(name=name, value=values(value, self.arrays))
        self.trajectory.append(rec)

    def round_begin(self, t, w):
        self.record("round_begin", "w", w, round=t)

    def step(self, t, i, s, name, value, phase="train"):
        self.record("step", name, value, round=t, client=i, step=s,
                    phase=phase)

    def client_end(self, t, i, name, value):
        self.record("client_end", name, value, round=t, client=i)

    def server(self, t, w, name="w"):
        self.record("server", name, w, round=t)

    def final(self, name, value, client=None):
        if client is None:
            self.finals[name] = values(value, self.arrays)
        else:
            self.finals.setdefault(name, {})[client] = values(value,
                                                             self.arrays)

    def result(self):
        final = {k: ([v[i] for i in sorted(v)] if isinstance(v, dict) else v)
                 for k, v in self.finals.items()}
        if self.arrays:     # v: an (N, P) array, as final.v.npy has it
            final = {k: np.stack(v) if isinstance(v, list) else v
                     for k, v in final.items()}
        return {"format": "pflref-result/1", "id": self.id, "final": final,
                "trajectory": self.trajectory,
                "meta": {"framework": "torch " + torch.__version__}}


# ---- the command line -------------------------------------------------------

def main(run, argv=None):
    """usage: PROG VECTOR.json -o RESULT.json.  Exit 0 with the result
    written (whole: a temporary file, then rename); exit 2, nothing
    written, on bad usage, a vector that cannot be read or is not JSON, or
    one the example does not implement (the message says which)."""
    argv = sys.argv[1:] if argv is None else argv
    prog = os.path.basename(sys.argv[0])

    def fail(message):
        print("%s: %s" % (prog, message), file=sys.stderr)
        sys.exit(2)

    if len(argv) != 3 or argv[1] != "-o":
        fail("usage: %s VECTOR.json -o RESULT.json" % prog)
    try:
        with open(argv[0]) as f:
            vector_raw = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: cannot read the vector: %s" % (argv[0], e))
    if not isinstance(vector_raw, dict):
        fail("%s: not a golden vector (a JSON object)" % argv[0])
    try:
        result = run(vector_raw)
    except Unsupported as e:
        fail("%s: unsupported: %s" % (argv[0], e))
    write_result(result, argv[2])


def write_result(result, path, inline_max=256):
    """Write a result; NumPy values (Recorder(arrays=True)) go to .npy
    files in STEM.arrays/ beside it (docs/formats.md, "Arrays in files"):
    a final array of more than inline_max numbers as final.NAME.npy, every
    trajectory value as a range {offset, count} of trajectory.npy."""
    traj = result.get("trajectory", [])
    if not any(isinstance(r["value"], np.ndarray) for r in traj) and not any(
            isinstance(v, np.ndarray) for v in result["final"].values()):
        write_json(result, path)
        return
    stem = os.path.basename(path)
    stem = stem[:-5] if stem.endswith(".json") else stem
    folder = os.path.join(os.path.dirname(path), stem + ".arrays")
    os.makedirs(folder, exist_ok=True)
    out = dict(result, final=dict(result["final"]))
    for name, v in result["final"].items():
        v = np.asarray(v, dtype="<f8")
        if v.size > inline_max:
            np.save(os.path.join(folder, "final.%s.npy" % name), v)
            out["final"][name] = "%s.arrays/final.%s.npy" % (stem, name)
        else:
            out["final"][name] = v.tolist()
    total = sum(np.size(r["value"]) for r in traj)
    values_file = np.lib.format.open_memmap(
        os.path.join(folder, "trajectory.npy"), mode="w+", dtype="<f8",
        shape=(total,))
    records, at = [], 0
    for r in traj:
        v = np.asarray(r["value"], dtype=np.float64).reshape(-1)
        values_file[at:at + v.size] = v
        records.append(dict(r, value={"offset": at, "count": int(v.size)}))
        at += v.size
    values_file.flush()
    del values_file
    out["trajectory"] = records
    out["trajectory_values"] = "%s.arrays/trajectory.npy" % stem
    write_json(out, path)


def write_json(obj, path):
    """Write atomically: a temporary file, then rename."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)      # repr floats: shortest round-trip
        f.write("\n")
    os.replace(tmp, path)
# SPDX-License-Identifier: GPL-3.0-or-later
