"""pfl_numpy_layers.py: the layer-list model ("kind": "layers") for the
NumPy candidate (pfl_numpy.py dispatches to it), written from
docs/models.md ("layers") and the PyTorch modules it names, not from
pflref's C code.

A sample is a vector [d] or an image [C, H, W]; a data row is the image
flattened in NCHW order, so X.reshape(n, C, H, W) is the batch.  The
layers, with α = 1/n_b and every gradient the batch mean:

  dense      Y = X Wᵀ + b                      (nn.Linear; W out × n)
  conv2d     Y[o] = Σ_c W[o, c] ⋆ pad(X[c]) + b[o], cross-correlation
             with zero padding p and stride s (nn.Conv2d; W O × C × κ × κ),
             by im2col: the κ × κ windows gathered with index arrays
  maxpool2d  the window's maximum; the gradient goes to its first maximum
             in row-major order (np.argmax, PyTorch's CPU kernel)
  avgpool2d  the window's mean
  flatten    the identity on the NCHW entries
  relu, tanh, sigmoid    elementwise; relu′(0) = 0
  dropout    nn.Dropout(p): in training Y = X · noise with noise = m/(1 − p)
             (m the pass's 0/1 mask, given as data in the schedule's
             rounds[t].dropout and, for the phase after training,
             post_dropout[i]: the next pass of this client's list at
             every training forward); the identity in evaluation
  batchnorm1d / 2d       per channel over the M = n_b·H·W entries: training
             mode x̂ = (a − μ)/√(s² + ε) with the batch mean μ and biased
             variance s²; evaluation mode with r_μ, r_v; u = γ x̂ + β
then the loss on the last layer's output z: cross_entropy
−log softmax(z)_y, squared (z − y)² or half_squared ½(z − y)², the mean
over the batch.

Parameters in state_dict order: per parametrised layer NAME.weight,
NAME.bias (when bias), and for batchnorm NAME.weight (γ), NAME.bias (β),
NAME.running_mean, NAME.running_var (buffers: their gradient is 0).  NAME
is the layer's name or its index.  A split names blocks, layers, or the
groups input (the first parametrised layer), head (the last) and bn.

Running statistics (switch bn.running, default update: PyTorch's train()
mode): every training-mode gradient pass of an algorithm moves the
buffers of the model it ran on, r_μ ← (1 − ρ) r_μ + ρ μ,
r_v ← (1 − ρ) r_v + ρ M/(M − 1) s² (torch.nn.BatchNorm*d: the unbiased
variance into r_v; bn.running_var = biased: ρ s²); bn.running = frozen
keeps them.  FedBN moves them itself, with its fedbn.running_var switch
(or bn.running_var).

Beside the gradient, for the algorithms that read more of the model:
the per-sample losses (training mode) and the evaluation-mode loss and
mse of a regression layer list (IFCA, FedFomo, interpolation), the
outputs and a backward pass from given output weights (APFL's output
mixing), the body's features and the head's gradient with the head the
last, dense layer (PFLEGO), and the exact Hessian-vector product,
forward over reverse (Per-FedAvg).
"""
import importlib
import sys

import numpy as np

PRESETS = ("fedavgcnn", "lenet5", "mlp")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


# ---- the layer list: presets, shapes, state_dict layout ------------------------

def expand_preset(model):
    """The layer list a preset stands for (docs/models.md, presets)."""
    k = model["k"]
    if model["preset"] == "fedavgcnn":          # PFLlib FedAvgCNN
        return [{"type": "conv2d", "name": "conv1.0", "out_channels": 32,
                 "kernel": 5}, {"type": "relu", "name": "conv1.1"},
                {"type": "maxpool2d", "name": "conv1.2", "kernel": 2},
                {"type": "conv2d", "name": "conv2.0", "out_channels": 64,
                 "kernel": 5}, {"type": "relu", "name": "conv2.1"},
                {"type": "maxpool2d", "name": "conv2.2", "kernel": 2},
                {"type": "flatten", "name": "flatten"},
                {"type": "dense", "name": "fc1.0", "out": 512},
                {"type": "relu", "name": "fc1.1"},
                {"type": "dense", "name": "fc", "out": k}]
    if model["preset"] == "lenet5":             # d2l §7.6
        return [{"type": "conv2d", "out_channels": 6, "kernel": 5,
                 "padding": 2}, {"type": "sigmoid"},
                {"type": "avgpool2d", "kernel": 2},
                {"type": "conv2d", "out_channels": 16, "kernel": 5},
                {"type": "sigmoid"}, {"type": "avgpool2d", "kernel": 2},
                {"type": "flatten"}, {"type": "dense", "out": 120},
                {"type": "sigmoid"}, {"type": "dense", "out": 84},
                {"type": "sigmoid"}, {"type": "dense", "out": k}]
    if model["preset"] == "mlp":
        act = model.get("activation", "relu")
        out = [{"type": "flatten"}] if len(model["input"]) == 3 else []
        for h in model["hidden"]:
            out += [{"type": "dense", "out": h}, {"type": act}]
        return out + [{"type": "dense", "out": k}]
    raise _base().Unsupported("layers preset %r" % model["preset"])


def out_shape(L, shape):
    """The shape a layer gives for one sample of the given shape: conv2d
    H′ = ⌊(H + 2p − κ)/s⌋ + 1, the pools H′ = (H − κ)/s + 1."""
    t = L["type"]
    if t == "dense":
        return (L["out"],)
    if t == "conv2d":
        C, H, W = shape
        k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
        return (L["out_channels"], (H + 2 * p - k) // s + 1,
                (W + 2 * p - k) // s + 1)
    if t in ("maxpool2d", "avgpool2d"):
        C, H, W = shape
        k = L["kernel"]
        s = L.get("stride", k)
        return (C, (H - k) // s + 1, (W - k) // s + 1)
    if t == "flatten":
        return (int(np.prod(shape)),)
    return shape


def layout(model):
    """The layer list with shapes and parameter offsets, and the blocks in
    state_dict order: (name, offset, size, groups), groups holding the
    layer's name and input / head / bn where they apply."""
    spec_layers = model.get("layers")
    if spec_layers is None:
        spec_layers = expand_preset(model)
    layers, shape, off = [], tuple(model["input"]), 0
    blocks = []
    for i, spec in enumerate(spec_layers):
        L = dict(spec)
        L["name"] = str(spec.get("name", i))
        L["in"], L["out_shape"] = shape, out_shape(spec, shape)
        t = L["type"]
        if t == "dense":
            roles = [("weight", L["out"] * shape[0])]
        elif t == "conv2d":
            k = L["kernel"]
            roles = [("weight", L["out_channels"] * shape[0] * k * k)]
        elif t in ("batchnorm1d", "batchnorm2d"):
            c = shape[0]
            roles = [("weight", c), ("bias", c), ("running_mean", c),
                     ("running_var", c)]
        else:
            roles = []
        if t in ("dense", "conv2d") and L.get("bias", True):
            roles.append(("bias", L["out_shape"][0]))
        L["at"] = {}
        for role, size in roles:
            L["at"][role] = (off, off + size)
            blocks.append([L["name"] + "." + role, off, size, [L["name"]]])
            off += size
        if t.startswith("batchnorm"):
            for b in blocks[-4:]:
                b[3].append("bn")
        layers.append(L)
        shape = L["out_shape"]
    owners = [b[3][0] for b in blocks if not b[0].endswith("running_mean")
              and not b[0].endswith("running_var")]
    if owners:
        for b in blocks:
            if b[3][0] == owners[0]:
                b[3].append("input")
            if b[3][0] == owners[-1]:
                b[3].append("head")
    blocks = [(n, o, s, tuple(g)) for n, o, s, g in blocks]
    return layers, off, blocks


def model_blocks(model):
    return layout(model)[2]


# ---- im2col ------------------------------------------------------------------

def window_index(size, k, s):
    """The rows (or columns) each output position's window reads:
    r[o, i] = s·o + i for o < (size − k)/s + 1, i < κ."""
    n_out = (size - k) // s + 1
    return s * np.arange(n_out)[:, None] + np.arange(k)[None, :]


def patches(X, k, s):
    """im2col: the κ × κ windows of X (n, C, H, W) at stride s, as
    P (n, C, H′, W′, κ, κ) with P[n, c, y, x, i, j] = X[n, c, sy + i, sx + j]."""
    r = window_index(X.shape[2], k, s)
    c = window_index(X.shape[3], k, s)
    return X[:, :, r[:, None, :, None], c[None, :, None, :]]


def unpatches(G, shape, k, s):
    """col2im, the adjoint of patches: every window entry's signal added
    back to the input entry it was read from."""
    r = window_index(shape[2], k, s)
    c = window_index(shape[3], k, s)
    dX = np.zeros(shape)
    np.add.at(dX, (slice(None), slice(None), r[:, None, :, None],
                   c[None, :, None, :]), G)
    return dX


def pad(A, p):
    """A (n, C, H, W) with p zeros on each side of its rows and columns."""
    n, C, H, W = A.shape
    Ap = np.zeros((n, C, H + 2 * p, W + 2 * p))
    Ap[:, :, p:p + H, p:p + W] = A
    return Ap


def crop(Ap, p, H, W):
    """The adjoint of pad: the H × W entries inside the padding."""
    return Ap[:, :, p:p + H, p:p + W]


# ---- the model ------------------------------------------------------------------

class Layers:
    """One client's data on a layer list.  grad(θ, batch) is the gradient
    of the batch-mean loss in training mode; it keeps the batch statistics
    of every batchnorm layer, which track(θ) folds into θ's running
    statistics (bn.running = update)."""

    def __init__(self, spec, client):
        model = spec["model"]
        self.layers, self.P, self.blocks = layout(model)
        self.input = tuple(model["input"])
        self.loss = model.get("loss", "cross_entropy")
        # ∂ℓ/∂z = s (z − y) for the squared losses; None: cross-entropy
        self.s = {"squared": 2.0, "half_squared": 1.0}.get(self.loss)
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=float)
        self.n = len(self.y)
        sw = spec["algorithm"].get("switches", {})
        self.running = sw.get("bn.running", "update")
        if self.running not in ("update", "frozen"):
            raise _base().Unsupported("bn.running %r" % self.running)
        # bn.running_var: M/(M − 1) s² into r_v (torch), or biased s²
        self.unbiased = sw.get("bn.running_var", "unbiased") != "biased"
        self.bn = np.zeros(self.P, dtype=bool)       # FedBN's local blocks
        for name, off, size, groups in self.blocks:
            if "bn" in groups:
                self.bn[off:off + size] = True
        # the buffers (running_mean, running_var): state_dict entries that
        # are not parameters() (bn.aggregate = parameters_only keeps them)
        self.buffers = np.zeros(self.P, dtype=bool)
        for name, off, size, groups in self.blocks:
            if name.endswith((".running_mean", ".running_var")):
                self.buffers[off:off + size] = True
        self.stats = []
        # dropout: this client's passes of masks, rounds in order (each
        # round's list in the order its algorithm makes its training passes)
        self.dropout = any(L["type"] == "dropout" for L in self.layers)
        self.passes, self.taken = [], 0
        rounds = spec.get("schedule", {}).get("rounds")
        if self.dropout and isinstance(rounds, list):
            # this client's id: the spec's client with these data rows
            ids = [i for i, c in enumerate(spec["problem"].get("clients", []))
                   if not isinstance(c.get("X"), str) and
                   np.array_equal(np.asarray(c["X"], dtype=float), self.X) and
                   np.array_equal(np.asarray(c["y"], dtype=float), self.y)]
            if not ids:
                raise _base().Unsupported("dropout with a client given by file")
            for r in rounds:
                if "dropout" in r and ids[0] in r["clients"]:
                    self.passes += r["dropout"][r["clients"].index(ids[0])]
            # then the phase after training's: schedule.post_dropout[i], one
            # list per client (the fine-tuning steps' passes)
            post = spec["schedule"].get("post_dropout")
            if isinstance(post, list) and ids[0] < len(post):
                self.passes += post[ids[0]]

    def part(self, theta, L, role, shape):
        lo, hi = L["at"][role]
        return theta[lo:hi].reshape(shape)

    def put(self, g, L, role, value):
        lo, hi = L["at"][role]
        g[lo:hi] = np.ravel(value)

    # -- forward ------------------------------------------------------------------
    def forward(self, theta, X, train=True):
        """The output z of the batch X (n_b × d rows) and each layer's
        cache for the backward pass; in training mode the batch statistics
        of the batchnorm layers go to self.stats."""
        A = X.reshape((len(X),) + self.input)
        caches = []
        self.stats = []
        self.masks = None
        if train and self.dropout and \
                _base().BUG != "dropout-off-in-training":   # the next pass's masks
            masks = self.passes[self.taken:self.taken + 1]
            if not masks:       # a run that makes more passes than given
                raise _base().Unsupported(
                    "dropout: no mask for training pass %d" % (self.taken + 1))
            self.masks = masks[0]
            self.taken += 1
        for L in self.layers:
            A, cache = self.layer_forward(theta, L, A, train)
            caches.append(cache)
        return A, caches

    def layer_forward(self, theta, L, A, train=True):
        """One layer's output Y for its input A, and its cache {X, Y, …}
        for the backward pass."""
        t = L["type"]
        cache = {"X": A}
        if t == "dense":
            W = self.part(theta, L, "weight", (L["out"], L["in"][0]))
            A = A @ W.T
            if "bias" in L["at"]:
                A = A + self.part(theta, L, "bias", (L["out"],))
        elif t == "conv2d":
            k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
            C, H, W_in = L["in"]
            O = L["out_channels"]
            Xp = pad(A, p)                               # zero padding
            P = patches(Xp, k, s)
            cache["P"], cache["Xp_shape"] = P, Xp.shape
            Wt = self.part(theta, L, "weight", (O, C, k, k))
            A = np.einsum("nchwij,ocij->nohw", P, Wt)   # cross-correlation
            if "bias" in L["at"]:
                A = A + self.part(theta, L, "bias", (O,))[None, :, None, None]
        elif t == "maxpool2d":
            k = L["kernel"]
            P = patches(A, k, L.get("stride", k))
            flat = P.reshape(P.shape[:4] + (k * k,))
            a = np.argmax(flat, axis=-1)                 # first maximum
            cache["a"] = a
            A = np.take_along_axis(flat, a[..., None], axis=-1)[..., 0]
        elif t == "avgpool2d":
            k = L["kernel"]
            A = patches(A, k, L.get("stride", k)).sum(axis=(4, 5)) / (k * k)
        elif t == "flatten":
            A = A.reshape(len(A), -1)
        elif t == "relu":
            A = np.maximum(A, 0.0)
        elif t == "tanh":
            A = np.tanh(A)
        elif t == "sigmoid":
            A = 1.0 / (1.0 + np.exp(-A))
        elif t in ("batchnorm1d", "batchnorm2d"):
            A = self.bn_forward(theta, L, A, train, cache)
        elif t == "dropout":
            if self.masks is not None:
                m = np.asarray(self.masks[L["name"]], dtype=float)
                if m.size != A.size:   # a pass on another batch than given
                    raise _base().Unsupported(
                        "dropout: the mask of layer %r has %d entries, the "
                        "pass %d" % (L["name"], m.size, A.size))
                noise = m.reshape(A.shape) / (1.0 - L.get("p", 0.5))
                if _base().BUG == "dropout-not-rescaled":
                    noise = m.reshape(A.shape)
                cache["noise"] = noise
                A = A * noise
        else:
            raise _base().Unsupported("layer type %r" % t)
        cache["Y"] = A
        return A, cache

    def bn_forward(self, theta, L, A, train, cache):
        """u = γ (a − μ)/√(s² + ε) + β per channel; training mode: μ, s² of
        the batch (biased), over the samples and, for 2-d, the pixels."""
        c = L["in"][0]
        axes = (0,) if L["type"] == "batchnorm1d" else (0, 2, 3)
        view = (1, c) if L["type"] == "batchnorm1d" else (1, c, 1, 1)
        eps = L.get("eps", 1e-5)
        if train:
            mu = A.mean(axis=axes)
            var = ((A - mu.reshape(view)) ** 2).mean(axis=axes)
            M = A.size // c
            self.stats.append((L, mu, var, M))
        else:                                        # evaluation mode
            mu = self.part(theta, L, "running_mean", (c,))
            var = self.part(theta, L, "running_var", (c,))
        s = np.sqrt(var + eps)
        xh = (A - mu.reshape(view)) / s.reshape(view)
        cache.update(xh=xh, s=s, axes=axes, view=view)
        gamma = self.part(theta, L, "weight", (c,)).reshape(view)
        beta = self.part(theta, L, "bias", (c,)).reshape(view)
        return gamma * xh + beta

    # -- the loss's signal -------------------------------------------------------------
    def signal(self, z, y):
        """E = ∂(batch-mean loss)/∂z."""
        nb = len(y)
        if self.loss == "cross_entropy":
            e = np.exp(z - z.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            p[np.arange(nb), y.astype(int)] -= 1.0        # softmax − one-hot
            return p / nb
        s = 2.0 if self.loss == "squared" else 1.0         # ∂ℓ/∂z = s (z − y)
        return s * (z - y[:, None]) / nb

    # -- backward ----------------------------------------------------------------------
    def grad(self, theta, batch):
        X, y = self.X[batch], self.y[batch]
        z, caches = self.forward(theta, X, train=True)
        G = self.signal(z, y)
        g = np.zeros(self.P)
        for L, cache in zip(reversed(self.layers), reversed(caches)):
            G = self.backward(theta, L, cache, G, g)
        return g

    def backward(self, theta, L, cache, G, g):
        """Writes the layer's parameter gradients into g from the signal G
        = ∂(mean loss)/∂Y; returns ∂(mean loss)/∂X."""
        t = L["type"]
        X, Y = cache["X"], cache["Y"]
        if t == "dense":
            W = self.part(theta, L, "weight", (L["out"], L["in"][0]))
            self.put(g, L, "weight", G.T @ X)                # g_W = dYᵀ X
            if "bias" in L["at"]:
                self.put(g, L, "bias", G.sum(axis=0))
            return G @ W                                     # dX = dY W
        if t == "conv2d":
            k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
            C, H, W_in = L["in"]
            O = L["out_channels"]
            Wt = self.part(theta, L, "weight", (O, C, k, k))
            self.put(g, L, "weight", np.einsum("nohw,nchwij->ocij", G,
                                                cache["P"]))
            if "bias" in L["at"]:
                self.put(g, L, "bias", G.sum(axis=(0, 2, 3)))
            dP = np.einsum("nohw,ocij->nchwij", G, Wt)       # Wᵀ dY
            dXp = unpatches(dP, cache["Xp_shape"], k, s)     # col2im
            return crop(dXp, p, H, W_in)
        if t == "maxpool2d":
            k = L["kernel"]
            hot = np.arange(k * k) == cache["a"][..., None]  # the argmax
            dP = (hot * G[..., None]).reshape(G.shape + (k, k))
            return unpatches(dP, X.shape, k, L.get("stride", k))
        if t == "avgpool2d":
            k = L["kernel"]
            dP = np.broadcast_to((G / (k * k))[..., None, None],
                                 G.shape + (k, k))
            return unpatches(dP, X.shape, k, L.get("stride", k))
        if t == "flatten":
            return G.reshape(X.shape)
        if t == "relu":
            return G * (Y > 0.0)                             # relu′(0) = 0
        if t == "tanh":
            return G * (1.0 - Y * Y)
        if t == "sigmoid":
            return G * Y * (1.0 - Y)
        if t == "dropout":
            return G * cache["noise"] if "noise" in cache else G
        return self.bn_backward(theta, L, cache, G, g)

    def bn_backward(self, theta, L, cache, G, g):
        """Training mode (Ioffe and Szegedy, Alg. 1's chain): g_γ = Σ G x̂,
        g_β = Σ G, δ = γ/(M s) (M G − Σ G − x̂ Σ G x̂) per channel."""
        xh, s, axes, view = cache["xh"], cache["s"], cache["axes"], cache["view"]
        c = L["in"][0]
        M = G.size // c
        gamma = self.part(theta, L, "weight", (c,))
        sum_G = G.sum(axis=axes)
        sum_Gx = (G * xh).sum(axis=axes)
        self.put(g, L, "weight", sum_Gx)
        self.put(g, L, "bias", sum_G)
        scale = (gamma / (M * s)).reshape(view)
        return scale * (M * G - sum_G.reshape(view) - xh * sum_Gx.reshape(view))

    # -- losses and evaluation ---------------------------------------------------------
    def terms(self, z, y):
        """The per-sample losses ℓ(z_j, y_j) = (s/2)(z − y)²: (z − y)² or
        ½(z − y)² (the algorithms that read a loss value run regression
        layer lists)."""
        if self.loss == "cross_entropy":
            raise _base().Unsupported("the loss value of a cross-entropy "
                                      "layer list (no golden vector reads one)")
        r = z[:, 0] - y
        return 0.5 * self.s * r * r

    def losses(self, theta, X, y):
        """The per-sample losses of θ on (X, y) in one training-mode pass
        (batch statistics over all of X, docs/models.md: loss, grad and
        hvp); the statistics of the last gradient pass are kept for
        track()."""
        kept = self.stats
        z, _ = self.forward(theta, np.asarray(X, dtype=float), train=True)
        self.stats = kept
        return self.terms(z, np.asarray(y, dtype=float))

    def evaluate(self, theta, X, y):
        """Evaluation mode (running statistics): (mean loss, mean squared
        error) of a regression layer list."""
        kept = self.stats
        y = np.asarray(y, dtype=float)
        z, _ = self.forward(theta, np.asarray(X, dtype=float), train=False)
        self.stats = kept
        loss = float(np.mean(self.terms(z, y)))
        return loss, float(np.mean((z[:, 0] - y) ** 2))

    def outputs_and_backward(self, theta, batch):
        """(z, back): the training-mode outputs of the batch (n_b × k) and
        back(E) = Σ_j E_j ∂z_j/∂θ for per-sample output weights E."""
        z, caches = self.forward(theta, self.X[batch], train=True)

        def back(E):
            g, G = np.zeros(self.P), E
            for L, cache in zip(reversed(self.layers), reversed(caches)):
                G = self.backward(theta, L, cache, G, g)
            return g
        return z, back

    # -- body and head (the last layer, a dense one) ------------------------------------
    def head_layer(self):
        L = self.layers[-1]
        if L["type"] != "dense":
            raise _base().Unsupported("a head that is not the last layer, "
                                      "a dense one")
        return L

    def body_forward(self, theta, batch):
        """The features Φ the head reads: the body's training-mode output
        for the batch (the layers before the last)."""
        self.head_layer()
        A, _ = self._body(theta, batch)
        return A

    def _body(self, theta, batch):
        """The body's forward pass: its output and the layers' caches."""
        A = self.X[batch].reshape((len(batch),) + self.input)
        caches = []
        self.stats = []
        for L in self.layers[:-1]:
            A, cache = self.layer_forward(theta, L, A)
            caches.append(cache)
        return A, caches

    def head_grad(self, theta, Phi, batch):
        """(E, g): E = ∂(mean loss)/∂z of z = Φ Wᵀ + b and g holding the
        head's ∇_W = Eᵀ Φ, ∇_b = Σ E (zero elsewhere)."""
        L = self.head_layer()
        W = self.part(theta, L, "weight", (L["out"], L["in"][0]))
        z = Phi @ W.T
        if "bias" in L["at"]:
            z = z + self.part(theta, L, "bias", (L["out"],))
        E = self.signal(z, self.y[batch])
        g = np.zeros(self.P)
        self.put(g, L, "weight", E.T @ Phi)
        if "bias" in L["at"]:
            self.put(g, L, "bias", E.sum(axis=0))
        return E, g

    def body_backward(self, theta, batch, E):
        """The body's gradient from the output signal E: one backward pass
        of G = E W through the layers before the head."""
        L = self.head_layer()
        W = self.part(theta, L, "weight", (L["out"], L["in"][0]))
        _, caches = self._body(theta, batch)
        G, g = E @ W, np.zeros(self.P)
        for L, cache in zip(reversed(self.layers[:-1]), reversed(caches)):
            G = self.backward(theta, L, cache, G, g)
        return g

    # -- the Hessian-vector product (forward over reverse) -------------------------------
    def hvp(self, theta, batch, v):
        """∇²f(θ; batch) v, exact: the derivative of the backward pass
        along θ + εv (Pearlmutter's R-operator).  A forward pass with
        tangents Ẏ of every layer's output, then the backward pass with
        the signal's tangent Ġ beside G; relu and max-pool are piecewise
        linear (their second derivative is 0 off the kinks); a batchnorm
        layer in training mode differentiates its batch statistics too
        (bn_tangent, bn_backward_tangent)."""
        X, y = self.X[batch], self.y[batch]
        z, caches = self.forward(theta, X, train=True)
        dA = np.zeros((len(batch),) + self.input)
        for L, cache in zip(self.layers, caches):
            cache["dX"] = dA
            dA = self.tangent(theta, v, L, cache, dA)
            cache["dY"] = dA
        if self.s is None:
            raise _base().Unsupported("the Hessian-vector product of a "
                                      "cross-entropy layer list")
        G = self.signal(z, y)
        dG = self.s * dA / len(y)           # Ġ = ∂²ℓ/∂z² ż / n_b = s ż / n_b
        out = np.zeros(self.P)
        for L, cache in zip(reversed(self.layers), reversed(caches)):
            G, dG = self.backward_tangent(theta, v, L, cache, G, dG, out)
        return out

    def tangent(self, theta, v, L, cache, dX):
        """Ẏ of one layer from Ẋ and the direction v of its parameters."""
        t, Y = L["type"], cache["Y"]
        if t == "dense":
            shape = (L["out"], L["in"][0])
            W, V = self.part(theta, L, "weight", shape), self.part(v, L, "weight", shape)
            dY = dX @ W.T + cache["X"] @ V.T               # Ẋ Wᵀ + X Vᵀ
            if "bias" in L["at"]:
                dY = dY + self.part(v, L, "bias", (L["out"],))
            return dY
        if t == "conv2d":
            k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
            C, H, W_in = L["in"]
            O = L["out_channels"]
            dP = patches(pad(dX, p), k, s)
            cache["dP"] = dP
            Wt = self.part(theta, L, "weight", (O, C, k, k))
            Vt = self.part(v, L, "weight", (O, C, k, k))
            dY = np.einsum("nchwij,ocij->nohw", dP, Wt) + \
                np.einsum("nchwij,ocij->nohw", cache["P"], Vt)
            if "bias" in L["at"]:
                dY = dY + self.part(v, L, "bias", (O,))[None, :, None, None]
            return dY
        if t == "maxpool2d":
            k = L["kernel"]
            flat = patches(dX, k, L.get("stride", k))
            flat = flat.reshape(flat.shape[:4] + (k * k,))
            return np.take_along_axis(flat, cache["a"][..., None], axis=-1)[..., 0]
        if t == "avgpool2d":
            k = L["kernel"]
            return patches(dX, k, L.get("stride", k)).sum(axis=(4, 5)) / (k * k)
        if t == "flatten":
            return dX.reshape(len(dX), -1)
        if t == "relu":
            return dX * (Y > 0.0)
        if t == "tanh":
            return dX * (1.0 - Y * Y)
        if t == "sigmoid":
            return dX * Y * (1.0 - Y)
        if t == "dropout":   # linear given the pass's mask: Ẏ = Ẋ · m/(1 − p)
            return dX * cache["noise"] if "noise" in cache else dX
        if t in ("batchnorm1d", "batchnorm2d"):
            return self.bn_tangent(theta, v, L, cache, dX)
        raise _base().Unsupported("the Hessian-vector product through %s" % t)

    def bn_tangent(self, theta, v, L, cache, dX):
        """Training mode's Ẏ (the batch statistics move with Ẋ), per
        channel over its M entries, with s = √(s² + ε) and x̂ = (a − μ)/s:
            ȧ − μ̇ = Ẋ − mean Ẋ,   (s²)˙ = 2 mean((a − μ)(ȧ − μ̇)),
            ṡ = (s²)˙/(2s) = mean(x̂ (ȧ − μ̇)),   x̂˙ = ((ȧ − μ̇) − x̂ ṡ)/s,
            Ẏ = v_γ x̂ + γ x̂˙ + v_β;
        the running statistics do not enter (their entries of v are
        ignored).  ṡ and x̂˙ stay in the cache for the backward tangent."""
        xh, s, axes, view = cache["xh"], cache["s"], cache["axes"], cache["view"]
        c = L["in"][0]
        centred = dX - dX.mean(axis=axes).reshape(view)
        ds = (xh * centred).mean(axis=axes)
        dxh = (centred - xh * ds.reshape(view)) / s.reshape(view)
        cache["ds"], cache["dxh"] = ds, dxh
        gamma = self.part(theta, L, "weight", (c,)).reshape(view)
        return (self.part(v, L, "weight", (c,)).reshape(view) * xh
                + gamma * dxh + self.part(v, L, "bias", (c,)).reshape(view))

    def backward_tangent(self, theta, v, L, cache, G, dG, out):
        """The backward step and its tangent: writes the derivative of the
        layer's parameter gradients into out; returns (∂/∂X, its tangent)."""
        t, X, Y = L["type"], cache["X"], cache["Y"]
        dX, dY = cache["dX"], cache["dY"]
        if t == "dense":
            shape = (L["out"], L["in"][0])
            W, V = self.part(theta, L, "weight", shape), self.part(v, L, "weight", shape)
            self.put(out, L, "weight", dG.T @ X + G.T @ dX)   # (Gᵀ X)˙
            if "bias" in L["at"]:
                self.put(out, L, "bias", dG.sum(axis=0))
            return G @ W, dG @ W + G @ V                     # (G W)˙
        if t == "conv2d":
            k, s, p = L["kernel"], L.get("stride", 1), L.get("padding", 0)
            C, H, W_in = L["in"]
            O = L["out_channels"]
            Wt = self.part(theta, L, "weight", (O, C, k, k))
            Vt = self.part(v, L, "weight", (O, C, k, k))
            self.put(out, L, "weight",
                     np.einsum("nohw,nchwij->ocij", dG, cache["P"]) +
                     np.einsum("nohw,nchwij->ocij", G, cache["dP"]))
            if "bias" in L["at"]:
                self.put(out, L, "bias", dG.sum(axis=(0, 2, 3)))
            back = []
            for P_ in (np.einsum("nohw,ocij->nchwij", G, Wt),
                       np.einsum("nohw,ocij->nchwij", dG, Wt) +
                       np.einsum("nohw,ocij->nchwij", G, Vt)):
                back.append(crop(unpatches(P_, cache["Xp_shape"], k, s),
                                 p, H, W_in))
            return back[0], back[1]
        if t == "tanh":
            return G * (1.0 - Y * Y), dG * (1.0 - Y * Y) - 2.0 * G * Y * dY
        if t == "sigmoid":
            return (G * Y * (1.0 - Y),
                    dG * Y * (1.0 - Y) + G * (1.0 - 2.0 * Y) * dY)
        if t in ("batchnorm1d", "batchnorm2d"):
            return self.bn_backward_tangent(theta, v, L, cache, G, dG, out)
        # relu, the pools, flatten: linear maps fixed by the forward pass
        scratch = np.zeros(self.P)
        return (self.backward(theta, L, cache, G, scratch),
                self.backward(theta, L, cache, dG, scratch))

    def bn_backward_tangent(self, theta, v, L, cache, G, dG, out):
        """bn_backward and its derivative along v: with m(·) the channel's
        mean over its M entries and C = G − m(G) − x̂ m(G x̂), so that
        ∂/∂X = (γ/s) C,
            (g_γ)˙ = Σ (Ġ x̂ + G x̂˙),   (g_β)˙ = Σ Ġ,
            Ċ = Ġ − m(Ġ) − x̂˙ m(G x̂) − x̂ m(Ġ x̂ + G x̂˙),
            (∂/∂X)˙ = (v_γ/s − γ ṡ/s²) C + (γ/s) Ċ;
        the running statistics' entries of out stay 0."""
        xh, s, axes, view = cache["xh"], cache["s"], cache["axes"], cache["view"]
        ds, dxh = cache["ds"], cache["dxh"]
        c = L["in"][0]
        gamma = self.part(theta, L, "weight", (c,))
        v_gamma = self.part(v, L, "weight", (c,))
        self.put(out, L, "weight", (dG * xh + G * dxh).sum(axis=axes))
        self.put(out, L, "bias", dG.sum(axis=axes))

        def m(A):
            return A.mean(axis=axes).reshape(view)
        mean_Gx = m(G * xh)
        C = G - m(G) - xh * mean_Gx                  # ∂/∂X = (γ/s) C
        dC = dG - m(dG) - dxh * mean_Gx - xh * m(dG * xh + G * dxh)
        dscale = (v_gamma / s - gamma * ds / (s * s)).reshape(view)
        back = self.bn_backward(theta, L, cache, G, np.zeros(self.P))
        return back, dscale * C + (gamma / s).reshape(view) * dC

    # -- the running statistics --------------------------------------------------------
    def track(self, theta, unbiased=None, force=False):
        """θ with its running statistics moved by the last training-mode
        pass (torch.nn.BatchNorm*d in train()): r_μ ← (1 − ρ) r_μ + ρ μ,
        r_v ← (1 − ρ) r_v + ρ M/(M − 1) s² (unbiased, bn.running_var's
        default) or ρ s² (biased; unbiased None: the switch's).  With
        bn.running = frozen, θ unchanged (unless force: FedBN's own
        update)."""
        if unbiased is None:
            unbiased = self.unbiased
        if not self.stats or (self.running == "frozen" and not force):
            return theta
        theta = theta.copy()
        for L, mu, var, M in self.stats:
            rho = L.get("momentum", 0.1)
            if unbiased:
                var = var * M / (M - 1)
            for role, stat in (("running_mean", mu), ("running_var", var)):
                lo, hi = L["at"][role]
                theta[lo:hi] = (1.0 - rho) * theta[lo:hi] + rho * stat
        return theta
# SPDX-License-Identifier: GPL-3.0-or-later
