# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.torch: capture an unmodified PyTorch training run (docs/python.md,
"Capturing a PyTorch run").

    import pflref.torch
    cap = pflref.torch.Capture("fedavg", pflref.torch.layout(model,
                               nn.MSELoss()), hyperparameters={"eta": lr})
    cap.clients(client_datasets)               # exported once to .npy
    @cap.round                                 # one call = one round
    def run_round(...): ...
    @cap.client                                # one call = one client's work
    def train_client(...):
        ... the user's DataLoader loop, unchanged ...
        cap.record("w_local", model)           # one line per quantity
    cap.record("w", global_model)              # in the round, after averaging
    print(cap.check("capture-out"))            # PASS / FAIL, diagnosis

While a round is open the DataLoader's iterators are observed (their
_next_index, the one place every sampler's indices pass through, and
__next__, which hands a batch over in the same order): each batch the
loop consumes from a loader over a client's dataset (the dataset given to
clients(), or a torch.utils.data.Subset of it, at any depth, as
random_split makes) is one local step of that client, its indices mapped
back through the Subsets to the client's sample indices.  Loaders over
other datasets (a test set) are not recorded.  Any sampler works
(RandomSampler, SequentialSampler, SubsetRandomSampler, a BatchSampler
with drop_last, a ragged last batch), with num_workers = 0 or more (the
iterator hands batches over in index order).

torch is imported only when a function here needs it: `import pflref`
and the NumPy capture (pflref.Capture) never import it.

The layout (layout()) maps the module's state_dict, in order, to
pflref's parameter vector (docs/models.md, "Parameter layout"):
nn.Linear alone is the linear (one output, squared loss) or the softmax
model (cross_entropy); nn.Sequential (nested too) is a layer list whose
layers are named by their state_dict prefix ("0", "fc1.0").  The
library's blocks for that model are compared with the state_dict entry
by entry (names, shapes, order); the first that does not map is named.
"""
import collections

import numpy as np

from ._capture import Capture as _Capture, invalid, model_blocks

LOSSES = {"MSELoss": "squared", "CrossEntropyLoss": "cross_entropy"}
LOSS_NAMES = ("squared", "half_squared", "cross_entropy")
SKIPPED_BUFFERS = ("num_batches_tracked",)


class LayoutError(ValueError):
    """A module that does not map to a pflref model: .parameter names the
    first state_dict entry (or module) that does not."""

    def __init__(self, parameter, message):
        self.parameter = parameter
        super().__init__("layout: %s: %s" % (parameter, message))


def _loss_name(loss):
    if isinstance(loss, str):
        if loss not in LOSS_NAMES:
            raise ValueError("loss: %r is not one of %s"
                             % (loss, ", ".join(LOSS_NAMES)))
        return loss
    kind = type(loss).__name__
    if kind not in LOSSES:
        raise ValueError("loss: %s is not a loss pflref knows (nn.MSELoss, "
                         "nn.CrossEntropyLoss, or a name: %s)"
                         % (kind, ", ".join(LOSS_NAMES)))
    if getattr(loss, "reduction", "mean") != "mean":
        raise ValueError("loss: %s(reduction=%r): pflref's loss is the mean "
                         "over the batch" % (kind, loss.reduction))
    return LOSSES[kind]


def _leaf_layer(name, mod, nn):
    """The pflref layer object of one torch module, or a LayoutError."""
    def refuse(why):
        params = [name + "." + p for p, _ in mod.named_parameters()]
        raise LayoutError(params[0] if params else name,
                          "%s: %s" % (type(mod).__name__, why))
    if isinstance(mod, nn.Linear):
        return {"type": "dense", "name": name, "out": mod.out_features,
                "bias": mod.bias is not None}
    if isinstance(mod, nn.Conv2d):
        k, s, p = mod.kernel_size, mod.stride, mod.padding
        if isinstance(p, str) or k[0] != k[1] or s[0] != s[1] or \
                p[0] != p[1] or mod.dilation != (1, 1) or mod.groups != 1 \
                or mod.padding_mode != "zeros":
            refuse("pflref's conv2d is square, zero-padded, dilation 1, "
                   "groups 1")
        return {"type": "conv2d", "name": name, "out_channels":
                mod.out_channels, "kernel": k[0], "stride": s[0],
                "padding": p[0], "bias": mod.bias is not None}
    if isinstance(mod, (nn.MaxPool2d, nn.AvgPool2d)):
        k = mod.kernel_size if isinstance(mod.kernel_size, int) \
            else mod.kernel_size[0]
        s = mod.stride if isinstance(mod.stride, int) else mod.stride[0]
        if mod.padding not in (0, (0, 0)):
            refuse("pflref's pooling has no padding")
        return {"type": "maxpool2d" if isinstance(mod, nn.MaxPool2d)
                else "avgpool2d", "name": name, "kernel": k, "stride": s}
    if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
        if not mod.affine or not mod.track_running_stats or \
                mod.momentum is None:
            refuse("pflref's batch norm is affine with running statistics "
                   "and a momentum")
        return {"type": "batchnorm1d" if isinstance(mod, nn.BatchNorm1d)
                else "batchnorm2d", "name": name, "eps": mod.eps,
                "momentum": mod.momentum}
    for cls, kind in ((nn.Flatten, "flatten"), (nn.ReLU, "relu"),
                      (nn.Tanh, "tanh"), (nn.Sigmoid, "sigmoid")):
        if isinstance(mod, cls):
            return {"type": kind, "name": name}
    if isinstance(mod, nn.Dropout):
        refuse("pflref has no dropout (its masks would have to be data)")
    refuse("not a layer pflref has (docs/models.md, \"layers\")")


def _layers(prefix, seq, nn):
    out = []
    for key, mod in seq.named_children():
        name = key if not prefix else prefix + "." + key
        if isinstance(mod, nn.Sequential):
            out += _layers(name, mod, nn)
        elif not isinstance(mod, nn.Identity):
            out.append(_leaf_layer(name, mod, nn))
    return out


def _model_spec(module, loss, input, nn):
    if isinstance(module, nn.Linear):
        d, k = module.in_features, module.out_features
        bias = module.bias is not None
        if loss == "cross_entropy":
            return {"kind": "softmax", "d": d, "k": k, "bias": bias}
        if k != 1:
            raise LayoutError("weight", "nn.Linear(%d, %d) with a %s loss: "
                              "pflref's linear model has one output"
                              % (d, k, loss))
        return {"kind": "linear", "d": d, "loss": loss, "bias": bias}
    if not isinstance(module, nn.Sequential):
        params = [p for p, _ in module.named_parameters()]
        raise LayoutError(params[0] if params else type(module).__name__,
                          "%s is not an nn.Sequential or an nn.Linear: its "
                          "forward() is code pflref cannot read; write the "
                          "model as an nn.Sequential" % type(module).__name__)
    layers = _layers("", module, nn)
    if input is None:
        first = next((m for m in module.modules()
                      if isinstance(m, (nn.Linear, nn.Conv2d,
                                        nn.Flatten))), None)
        if not isinstance(first, nn.Linear):
            raise LayoutError(layers[0]["name"] if layers else "model",
                              "the input shape is not the first layer's: "
                              "give layout(model, loss, input=(C, H, W))")
        input = (first.in_features,)
    return {"kind": "layers", "input": [int(x) for x in input],
            "loss": loss, "layers": layers}


class Layout:
    """A torch module's parameter layout in pflref's terms.

    .module       the module (w⁰ is read from it when the first round opens)
    .model_spec   the pflref model object
    .names        the state_dict keys that make the vector, in order
    .shapes       their shapes
    .P            the parameter count
    flat(x)       a module, a state_dict or a tensor as pflref's flat
                  float64 vector (num_batches_tracked left out)
    """

    def __init__(self, module, model_spec, names, shapes, P):
        self.module, self.model_spec = module, model_spec
        self.names, self.shapes, self.P = names, shapes, P

    def flat(self, value, where="value"):
        import torch
        if isinstance(value, torch.nn.Module):
            value = value.state_dict()
        if isinstance(value, dict):
            entries = [(k, v) for k, v in value.items()
                       if k.rsplit(".", 1)[-1] not in SKIPPED_BUFFERS]
            for j, (k, v) in enumerate(entries):
                if j >= len(self.names) or k != self.names[j]:
                    raise ValueError("%s: state_dict entry %d is %r, the "
                                     "layout's is %r" % (
                                         where, j, k, self.names[j]
                                         if j < len(self.names) else None))
                if tuple(v.shape) != self.shapes[j]:
                    raise ValueError("%s: parameter %s has shape %s, the "
                                     "layout's is %s" % (
                                         where, k, tuple(v.shape),
                                         self.shapes[j]))
            if len(entries) != len(self.names):
                raise ValueError("%s: %d state_dict entries, the layout has "
                                 "%d" % (where, len(entries), len(self.names)))
            parts = [v.detach().cpu().double().reshape(-1) for _, v in entries]
            return torch.cat(parts).numpy().copy()
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().double().reshape(-1).numpy().copy()
        return np.asarray(value, dtype=np.float64).reshape(-1)

    def __repr__(self):
        return "<pflref.torch.Layout %s, P = %d>" % (self.model_spec["kind"],
                                                     self.P)


def layout(model, loss, input=None):
    """Declare once how the nn.Module model maps to pflref's parameter
    vector, and check it: the library's blocks for the derived model are
    compared with model.state_dict() entry by entry (name, shape, order).
    loss: nn.MSELoss() / nn.CrossEntropyLoss() (reduction "mean") or a
    name ("squared", "half_squared" for ½ MSE, "cross_entropy").  input:
    one sample's shape when the first layer is not an nn.Linear.  Raises
    LayoutError naming the first parameter that does not map."""
    import torch
    nn = torch.nn
    loss = _loss_name(loss)
    spec = _model_spec(model, loss, input, nn)
    try:
        blocks, P = model_blocks(spec)
    except ValueError as e:
        where = getattr(e, "where", "")
        raise LayoutError(where or "model", "pflref refuses the model: %s"
                          % e) from None
    entries = [(k, tuple(v.shape)) for k, v in model.state_dict().items()
               if k.rsplit(".", 1)[-1] not in SKIPPED_BUFFERS]
    named = spec["kind"] == "layers"
    for j, (k, shape) in enumerate(entries):
        if j >= len(blocks):
            raise LayoutError(k, "pflref's layout has no block left for it "
                              "(%d blocks)" % len(blocks))
        b = blocks[j]
        size = int(np.prod(shape)) if shape else 1
        if (named and b["name"] != k) or size != b["rows"] * b["cols"] or \
                (named and len(shape) > 1 and shape[0] != b["rows"]):
            raise LayoutError(k, "shape %s does not map to pflref's block "
                              "%d, %s (%d × %d)" % (list(shape), j, b["name"],
                                                    b["rows"], b["cols"]))
    if len(entries) < len(blocks):
        raise LayoutError(blocks[len(entries)]["name"],
                          "pflref's block has no state_dict entry")
    return Layout(model, spec, [k for k, _ in entries],
                  [s for _, s in entries], P)


def dataset_arrays(ds):
    """(X, y) of a map-style torch Dataset of (x, y) pairs: every sample,
    in index order, x flattened (row-major, NCHW for an image)."""
    import torch
    from torch.utils.data import TensorDataset
    if isinstance(ds, TensorDataset) and len(ds.tensors) == 2:
        X, y = ds.tensors
    else:
        items = [ds[j] for j in range(len(ds))]
        X = torch.stack([torch.as_tensor(x) for x, _ in items])
        y = torch.stack([torch.as_tensor(t) for _, t in items])
    X = X.detach().cpu().reshape(len(X), -1)
    y = y.detach().cpu().reshape(len(y), -1)
    if y.shape[1] != 1:
        raise ValueError("a target of %d numbers per sample: pflref's models "
                         "have one target (a class or a number)" % y.shape[1])
    X = X.double().numpy() if X.is_floating_point() else X.numpy()
    return X, y.reshape(-1).numpy()


class Capture(_Capture):
    """pflref.Capture observing a PyTorch run (module doc): clients() takes
    torch Datasets, batches are observed from the DataLoaders, record()
    and final() take modules, state_dicts or tensors, and w⁰ is the
    layout's module as it stands when the first round opens."""

    def __init__(self, algorithm, layout, hyperparameters=None,
                 switches=None, preset=None, name=None):
        if not isinstance(layout, Layout):
            raise TypeError("layout: a pflref.torch.layout(model, loss), not "
                            "%s" % type(layout).__name__)
        super().__init__(algorithm, layout, hyperparameters, switches,
                         preset, name)
        self._datasets = []
        self._saved = None

    def clients(self, datasets):
        """Each client's training Dataset, client 0 first (a Subset from
        random_split is a dataset too); written once as .npy arrays."""
        datasets = list(datasets)
        super().clients(dataset_arrays(ds) for ds in datasets)
        self._datasets = datasets

    def _default_init(self):
        self.w0 = self._value(self.layout.module, "init w", None, None, "w")

    def flat(self, value, t=None, i=None, what="value"):
        try:
            return self.layout.flat(value, what)
        except ValueError as e:
            raise invalid(_where_text(t, i, what), str(e), round=t,
                          client=i) from None

    # ---- observing the loaders ------------------------------------------

    def _round_enter(self):
        super()._round_enter()
        self._patch()

    def _round_leave(self, failed=False):
        self._unpatch()
        super()._round_leave(failed)

    def _patch(self):
        from torch.utils.data import dataloader
        base = dataloader._BaseDataLoaderIter
        multi = dataloader._MultiProcessingDataLoaderIter
        saved = (base._next_index, base.__next__, multi._reset)
        self._saved = saved
        cap = self

        def _next_index(it):
            if "_pflref_pending" not in it.__dict__ and \
                    getattr(it, "_send_idx", 0) > 0:
                it._pflref_unobserved = True    # workers prefetched before
            idx = saved[0](it)
            it.__dict__.setdefault("_pflref_pending",
                                   collections.deque()).append(idx)
            return idx

        def __next__(it):
            data = saved[1](it)
            pending = it.__dict__.get("_pflref_pending")
            if it.__dict__.get("_pflref_unobserved") or (
                    not pending and getattr(it, "_num_workers", 0) > 0):
                cap._seen(it._dataset, None)    # indices not all observed
            elif pending:
                cap._seen(it._dataset, pending.popleft())
            return data

        def _reset(it, *args, **kwargs):
            # persistent workers: a new epoch's indices start afresh
            it.__dict__.pop("_pflref_pending", None)
            it.__dict__.pop("_pflref_unobserved", None)
            return saved[2](it, *args, **kwargs)
        base._next_index, base.__next__ = _next_index, __next__
        multi._reset = _reset

    def _unpatch(self):
        if self._saved is not None:
            from torch.utils.data import dataloader
            base = dataloader._BaseDataLoaderIter
            base._next_index, base.__next__ = self._saved[:2]
            dataloader._MultiProcessingDataLoaderIter._reset = self._saved[2]
            self._saved = None

    def _seen(self, dataset, idx):
        """A batch handed to the loop: to its client, if it is one's."""
        from torch.utils.data import Subset
        t = len(self.rounds) - 1
        if idx is not None and not isinstance(idx, (list, tuple)):
            idx = [idx]                    # batch_size=None: one sample
        while True:
            for i, ds in enumerate(self._datasets):
                if ds is not dataset:
                    continue
                if idx is None:
                    raise invalid(_where_text(t, i, None), "a DataLoader "
                                  "iterator with workers was created before "
                                  "the round opened: the indices it "
                                  "prefetched were not observed (create it "
                                  "inside the round)", round=t, client=i)
                return self.batch(idx, client=i)
            if not isinstance(dataset, Subset):
                return None                # not a client's data: ignored
            if idx is None:
                dataset = dataset.dataset
                continue
            try:
                idx = [int(dataset.indices[j]) for j in idx]
            except IndexError:
                raise invalid(_where_text(t, None, None), "a batch index "
                              "out of range of a Subset of %d samples"
                              % len(dataset.indices), round=t) from None
            dataset = dataset.dataset


def _where_text(t, i, what):
    from ._capture import _where
    return _where(t, i, record=what)
