"""torch_bn.py: batch normalisation for the PyTorch candidates.

A layer list's batchnorm1d / batchnorm2d layer (docs/models.md, "layers",
"Batch normalisation") is a torch.nn.BatchNorm1d / 2d(C, eps=ε,
momentum=ρ): in train() mode a forward normalises with the batch's
statistics and moves running_mean, running_var (PyTorch's rule, the
unbiased M/(M − 1) s²_B into r_v); in eval() mode it normalises with them
and moves nothing.  bn.running = frozen is momentum 0; bn.running_var =
biased a forward hook that takes back torch's unbiasing.

pflref's w of such a model is the state_dict's values flattened in order
(NAME.weight, NAME.bias, then a batchnorm's running_mean, running_var;
num_batches_tracked dropped: docs/models.md, "Layout"), so the helpers
below read and write w that way (state_flat, load_state), and the running
statistics alone (bn_buffers, put_buffers) and PFLlib's set_parameters
(parameters() only) for PFLlib's reading, bn.aggregate = parameters_only,
where a client keeps its own; parameter_mask marks the entries of w that
are parameters(), where an algorithm's vectors over parameters()
(SCAFFOLD's controls, FedDyn's ∇L_k and h, FedAMP's distances) live.

bn_problem(vector_raw, algorithm) is torch_common.Problem for a vector
whose layer list may hold batchnorm layers: the clients, settings and
schedule as Problem reads them, the global model built here with its
torch.nn.BatchNorm modules and w⁰ loaded through load_state.
"""
import copy

import torch
from torch import nn

from torch_common import Problem, Unsupported, build_layers, is_personal

BN_TYPES = ("batchnorm1d", "batchnorm2d")


def has_bn(model):
    """True when the spec's model is a layer list with a batchnorm layer."""
    return model.get("kind") == "layers" and any(
        L.get("type") in BN_TYPES for L in model.get("layers", []))


def bn_buffers(net):
    """The running statistics of the net's batchnorm modules (no
    num_batches_tracked), in state_dict order."""
    return [b for n, b in net.named_buffers()
            if not n.endswith("num_batches_tracked")]


def copy_buffers(net):
    """Detached copies of bn_buffers(net)."""
    return [b.detach().clone() for b in bn_buffers(net)]


def put_buffers(net, values):
    """Write the running statistics `values` (bn_buffers' order)."""
    with torch.no_grad():
        for b, v in zip(bn_buffers(net), values):
            b.copy_(v)


def set_parameters(net, global_net):
    """PFLlib's clientbase.set_parameters (clientbase.py:67-69): copy
    global_net's parameters() into net, its buffers (the running
    statistics) left as net last had them: bn.aggregate =
    parameters_only's client start."""
    with torch.no_grad():
        for mine, theirs in zip(net.parameters(), global_net.parameters()):
            mine.copy_(theirs)


class BiasedRunningVar:
    """bn.running_var = biased on a torch BatchNorm module: after torch's
    training forward has moved r_v by ρ (M/(M − 1)) s²_B, take back
    ρ (M/(M − 1) − 1) s²_B = ρ (s²_unbiased − s²_B), leaving
    r_v = (1 − ρ) r_v + ρ s²_B (M the values a channel normalises)."""

    def __call__(self, module, inputs, output):
        if not module.training or not module.track_running_stats:
            return
        a = inputs[0].detach()
        dims = [0] + list(range(2, a.dim()))
        with torch.no_grad():
            gap = a.var(dim=dims, unbiased=True) - a.var(dim=dims,
                                                         unbiased=False)
            # a new buffer, not sub_: the training pass's graph holds
            # the old one (autograd's version check)
            module.running_var = module.running_var - module.momentum * gap


def build_net(model, cfg):
    """The layer list as an nn.Sequential with torch.nn.BatchNorm1d / 2d
    for its batchnorm layers: build_layers' model of the list with each
    batchnorm layer as a shape-keeping stand-in (relu; build_layers takes
    no batchnorm), the stand-ins then replaced by BatchNorm modules of the
    channel count reaching them.  The net is left in train() mode."""
    layers = model["layers"]
    stand_in = dict(model, layers=[{"type": "relu"} if L["type"] in BN_TYPES
                                   else L for L in layers])
    net = build_layers(stand_in)
    off = 1 if len(model["input"]) == 3 else 0
    d = 1
    for n in model["input"]:
        d *= n
    frozen = cfg.get("bn.running", "update") == "frozen"
    if cfg.get("bn.running", "update") not in ("update", "frozen"):
        raise Unsupported("bn.running %r" % cfg["bn.running"])
    biased = "biased" in (cfg.get("bn.running_var"),
                          cfg.get("fedbn.running_var"))
    net.eval()
    with torch.no_grad():
        shapes = [net[:i + off](torch.zeros(2, d)).shape
                  for i, L in enumerate(layers) if L["type"] in BN_TYPES]
    net.train()
    bns = [(i, L) for i, L in enumerate(layers) if L["type"] in BN_TYPES]
    for (i, L), shape in zip(bns, shapes):
        kind = nn.BatchNorm1d if L["type"] == "batchnorm1d" else nn.BatchNorm2d
        if (len(shape) == 2) != (kind is nn.BatchNorm1d):
            raise Unsupported("%s on a %d-d input" % (L["type"], len(shape)))
        bn = kind(shape[1], eps=L.get("eps", 1e-5),
                  momentum=0.0 if frozen else L.get("momentum", 0.1))
        if biased:
            bn.register_forward_hook(BiasedRunningVar())
        net[i + off] = bn
    return net


def state_entries(net):
    """The state_dict's tensors in pflref's layout (num_batches_tracked
    is not kept)."""
    return [v for k, v in net.state_dict().items()
            if not k.endswith("num_batches_tracked")]


def state_flat(net):
    """w as pflref lays it out: the state_dict's values, flattened and
    concatenated (a detached copy; the parameters alone without bn)."""
    return torch.cat([v.detach().reshape(-1).to(torch.get_default_dtype())
                      for v in state_entries(net)]).clone()


def parameter_mask(net):
    """True at the entries of state_flat(net) that are parameters() (False
    at the running statistics): where an algorithm's vectors over
    parameters() (a control variate, a gradient state) sit in w."""
    names = {n for n, _ in net.named_parameters()}
    return torch.cat([torch.full((v.numel(),), k in names, dtype=torch.bool)
                      for k, v in net.state_dict().items()
                      if not k.endswith("num_batches_tracked")])


def load_state(net, w):
    """Write the flat vector w into the net's parameters and buffers."""
    w = torch.as_tensor(w, dtype=torch.get_default_dtype())
    at = 0
    with torch.no_grad():
        for v in state_entries(net):
            v.copy_(w[at:at + v.numel()].reshape(v.shape))
            at += v.numel()
    if at != w.numel():
        raise Unsupported("w has %d entries, the model %d" % (w.numel(), at))


def bn_problem(vector_raw, algorithm):
    """Problem(vector_raw, algorithm) for a model that may hold batchnorm
    layers; prob.bn says whether it does.  With batchnorm, prob.model is
    the spec's own model and prob.global_model the net of build_net with
    w⁰ (init.w in the state_dict layout; zeros: every dense and conv
    parameter 0 and the batchnorm layers at torch's start, γ = 1, β = 0,
    r_μ = 0, r_v = 1)."""
    spec = vector_raw.get("spec", {}) if isinstance(vector_raw, dict) else {}
    model = spec.get("model", {}) if isinstance(spec, dict) else {}
    if not isinstance(model, dict) or not has_bn(model):
        prob = Problem(vector_raw, algorithm)
        prob.bn = False
        return prob
    raw = copy.deepcopy(vector_raw)
    raw["spec"]["model"] = dict(model, layers=[
        {"type": "relu"} if L["type"] in BN_TYPES else L
        for L in model["layers"]])
    prob = Problem(raw, algorithm)    # data, settings, schedule, stand-ins
    prob.model, prob.spec, prob.bn = model, vector_raw["spec"], True
    prob.global_model = net = build_net(model, prob.cfg)
    init = spec.get("init", {"kind": "zeros"})
    if init["kind"] == "given":
        load_state(net, init["w"])
    else:      # zeros (Problem refused the rest)
        with torch.no_grad():
            for m in net:
                if isinstance(m, (nn.Linear, nn.Conv2d)):
                    for q in m.parameters():
                        q.zero_()
    return prob


def require_dense_head(prob):
    """Refuse the models a representation-based example (MOON, FedProto,
    FedPAC: a body, then a dense head) does not build: anything but the
    mlp without its own bn flag, or a layer list that ends in a dense
    layer and holds no dropout."""
    kind = prob.model["kind"]
    layers = prob.model.get("layers", [])
    if kind not in ("mlp", "layers") or prob.model.get("bn") or (
            kind == "layers" and (
                layers[-1]["type"] != "dense"
                or any(L["type"] == "dropout" for L in layers))):
        raise Unsupported("a %s model (this example builds the mlp without "
                          "bn and layer lists ending in dense, no dropout)"
                          % kind)


def first_uploader(rnd, clients):
    """The client whose running statistics the global model takes under
    bn.aggregate = parameters_only (PFLlib's deepcopy of the first
    uploaded model): the round's first_upload when the schedule gives one,
    else the first of `clients` by ascending id (docs/sampling.md, "The
    first uploader")."""
    first = rnd.get("first_upload")
    if first is not None:
        return first
    return min(clients)


def personal_bn(prob, name, names=None):
    """True when the torch parameter `name` is a batchnorm layer's γ or β
    that the split `names` (default: the candidate's cfg["split"]) marks
    personal (its block, its layer's name, or the group bn)."""
    layers = prob.model.get("layers", [])
    off = 1 if len(prob.model.get("input", [])) == 3 else 0
    k = int(name.split(".")[0]) - off
    L = layers[k]
    if L["type"] not in BN_TYPES:
        return False
    layer = str(L.get("name", k))
    if names is None:
        names = prob.cfg["split"]
    return ("%s.%s" % (layer, name.rsplit(".", 1)[1]) in names
            or layer in names or "bn" in names)


def split_test(prob):
    """The spec's split as a test on torch parameter names, for
    opt.decay_scope = shared / personal (None when the spec has no split:
    ClientOptimizer then refuses those scopes); a batchnorm layer's γ, β are
    personal when the split names them (personal_bn)."""
    names = prob.spec.get("split", {}).get("personal")
    if not names:
        return None
    layers = prob.model.get("layers", [])
    off = 1 if len(prob.model.get("input", [])) == 3 else 0

    def mine(name):
        if layers and layers[int(name.split(".")[0]) - off]["type"] in BN_TYPES:
            return personal_bn(prob, name, names)
        return is_personal(prob.model, name, names)
    return mine
# SPDX-License-Identifier: GPL-3.0-or-later
