# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_layers.py: the layer-list model ("kind": "layers")
in exact arithmetic, written from the layer definitions (PyTorch's
nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d, nn.Flatten, nn.Linear, nn.ReLU,
nn.Tanh, nn.Sigmoid, nn.BatchNorm1d/2d; Ioffe & Szegedy, "Batch
Normalization", ICML 2015, arXiv 1502.03167v3, Alg. 1 and §3) and
shared/spec, independently of ref/models/layers*.c: plain loops over
indices, no BLAS, no im2col.

Arithmetic (the "domain" of a model):
  - Fraction (exact) when every layer is rational: dense, conv2d, pools,
    flatten, relu, with the squared losses;
  - Decimal at 60 digits when the model has tanh, sigmoid, batch
    normalisation (a square root) or cross-entropy (exp, log);
  - float on request (float64 in this file's own order: the tolerance
    arguments compare it with the exact run).
Every input double is converted exactly (Fraction(x), Decimal(x)).

Conventions (the spec's, docs/models.md "layers"):
  - a sample is its input flattened in NCHW order, c·H·W + h·W + w;
    flatten keeps that order;
  - the parameter vector is PyTorch's state_dict flattened row-major: per
    parametrised layer in list order NAME.weight then NAME.bias; conv
    weight out × in × k × k, dense weight out × in; batchnorm NAME.weight
    (γ), NAME.bias (β), NAME.running_mean, NAME.running_var (buffers:
    gradient 0); a layer's default name is its index in the list;
  - conv2d is PyTorch's cross-correlation,
        z[o,i,j] = b_o + Σ_{c,u,v} W[o,c,u,v] x[c, i·s + u − p, j·s + v − p]
    (x = 0 outside the image: zero padding p), H_out = ⌊(H + 2p − k)/s⌋ + 1;
  - maxpool2d: the window's maximum; its gradient goes to the first
    maximum in the window's row-major order (PyTorch's CPU kernel keeps
    the first: `val > max`); the vectors avoid ties anyway;
    avgpool2d: the window's mean; stride defaults to the kernel;
  - relu'(0) = 0; tanh' = 1 − tanh²; sigmoid' = σ(1 − σ);
  - batchnorm (training mode, used by the loss and gradient): per feature
    (1d) or per channel over batch × H × W (2d), m values,
        μ = (1/m) Σ a,  s² = (1/m) Σ (a − μ)²  (biased),
        x̂ = (a − μ)/√(s² + ε),  y = γ x̂ + β;
    evaluation mode uses the running statistics; the running statistics
    move only in update_running (FedBN's replay, and running_exact, which
    pflref_exact.local_sgd calls after every gradient pass under
    bn.running = update), PyTorch's rule
        r_μ ← (1 − ρ) r_μ + ρ μ,  r_v ← (1 − ρ) r_v + ρ (m/(m − 1)) s²;
    the backward is Ioffe & Szegedy's §3 chain (∂ℓ/∂x̂, ∂ℓ/∂σ², ∂ℓ/∂μ),
    not the compact form the C uses;
  - losses: cross_entropy ℓ = logsumexp(z) − z_y; squared (ŷ − y)²;
    half_squared ½(ŷ − y)² (ŷ = z_0, the last layer has one output);
    F = the batch mean of ℓ, and grad() is ∇F.

Bugs (realistic implementation mistakes, each a mutant of a flag; the
model-independent ones of pflref_exact.py — loss-x2, batch-sum — act here
too):
  conv-flip            true convolution: the kernel rotated by 180°
  conv-kernel-transpose  W[o,c,v,u] read for W[o,c,u,v]
  conv-weight-io       the weight read as in × out × k × k
  conv-pad-end         the padding put after the image (the window's origin
                       at i·s instead of i·s − p; same output shape)
  conv-pad-replicate   the border replicated instead of zeros
  dense-w-transpose    a dense weight read as in × out (column-major)
  pool-grad-first      maxpool's gradient to the window's first element
  pool-grad-all        maxpool's gradient to every element of the window
  avgpool-grad-sum     avgpool's backward not divided by k²
  flatten-nhwc         flatten emits channels-last order (h, w, c)
  input-nhwc           the data rows read as channels-last (h, w, c)
  tanh-deriv-preact    tanh' computed as 1 − a² from the pre-activation
  sigmoid-deriv-preact sigmoid' computed as a(1 − a) from the pre-activation
  bias-before-weight   a layer's bias placed before its weight in the vector
  buffers-last         the running statistics after every parameter (the
                       order of parameters() followed by buffers())
  unbiased-norm-var    training BN normalises with the m − 1 variance
  eps-outside-root     √(s²) + ε
  no-stat-backward     BN backward with μ, s² treated as constants
  running-in-training  BN in training mode normalises with r_μ, r_v
  bn2d-per-position    batchnorm2d statistics per (c, h, w) over the batch
                       (BatchNorm1d on the flattened tensor)
  momentum-flipped     r ← ρ r + (1 − ρ) stat (update_running)
  running-var-flipped  the other of s² and m/(m − 1) s² into r_v
  running-var-count-nb batchnorm2d's unbiased factor with m = n_b instead of
                       n_b·H·W
  running-frozen       the running statistics never moved in the local steps
                       under bn.running = update (pflref_exact.Problem)
  running-moved        they move under bn.running = frozen

Standard library only; run with /usr/bin/python3.
"""
import math
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 60

NO_BUGS = frozenset()
RATIONAL = ("dense", "conv2d", "maxpool2d", "avgpool2d", "flatten", "relu")
TYPES = RATIONAL + ("tanh", "sigmoid", "batchnorm1d", "batchnorm2d")
PARAMETRISED = ("dense", "conv2d", "batchnorm1d", "batchnorm2d")
LAYOUT_BUGS = frozenset({"bias-before-weight", "buffers-last"})

# flag -> the bugs of its class that this model implements (audit.py and the
# generators take their mutants from here)
MUTANTS = {
    "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
    "conv-weight-layout": ["conv-weight-io"],
    "conv-padding": ["conv-pad-end", "conv-pad-replicate"],
    "dense-weight-layout": ["dense-w-transpose"],
    "pool-gradient": ["pool-grad-first", "pool-grad-all", "avgpool-grad-sum"],
    "flatten-order": ["flatten-nhwc", "input-nhwc"],
    "activation-derivative": ["tanh-deriv-preact", "sigmoid-deriv-preact"],
    "state-dict-order": ["bias-before-weight", "buffers-last"],
    "bn-batch-variance": ["unbiased-norm-var"],
    "bn-eps-placement": ["eps-outside-root"],
    "bn-backward": ["no-stat-backward"],
    "bn-eval-mode": ["running-in-training"],
    "bn2d-statistics": ["bn2d-per-position"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped",
                          "running-var-count-nb"],
    # the running statistics in the local solver (pflref_exact.local_sgd,
    # Problem.move_running; FedBN's replay for running-frozen)
    "bn-running-frozen": ["running-frozen"],
    "bn-running-moved": ["running-moved"],
}

# The smallest |pre-activation| a relu decided on and the smallest gap
# between a max-pool window's largest and second largest value, since the
# last reset_stats(): the generators keep both away from 0 (no kink, no tie).
STATS = {}


def reset_stats():
    STATS.clear()
    STATS.update({"relu": None, "pool_gap": None})


reset_stats()


def _low(key, x):
    x = abs(x)
    if STATS[key] is None or x < STATS[key]:
        STATS[key] = x


# ------------------------------------------------------------ dual numbers

class Dual:
    """a + b ε with ε² = 0, a and b in a model's domain: running the
    gradient on θ + ε v gives ∇F(θ) + ε ∇²F(θ) v, the Hessian-vector
    product as the exact directional derivative of the gradient (forward
    mode over the reverse pass; hvp_exact).  Comparisons (relu, max-pool)
    read the real part a, so the decisions are those at θ, and relu'' = 0
    away from the kinks, as the R-operator has it."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    @staticmethod
    def _parts(y):
        return (y.a, y.b) if isinstance(y, Dual) else (y, 0)

    def __add__(self, y):
        a, b = Dual._parts(y)
        return Dual(self.a + a, self.b + b)

    __radd__ = __add__

    def __sub__(self, y):
        a, b = Dual._parts(y)
        return Dual(self.a - a, self.b - b)

    def __rsub__(self, y):
        a, b = Dual._parts(y)
        return Dual(a - self.a, b - self.b)

    def __neg__(self):
        return Dual(-self.a, -self.b)

    def __mul__(self, y):
        a, b = Dual._parts(y)
        return Dual(self.a * a, self.a * b + self.b * a)

    __rmul__ = __mul__

    def __truediv__(self, y):
        a, b = Dual._parts(y)
        return Dual(self.a / a, (self.b * a - self.a * b) / (a * a))

    def __rtruediv__(self, y):
        a, b = Dual._parts(y)
        return Dual(a / self.a, (b * self.a - a * self.b) / (self.a * self.a))

    def __pow__(self, n):
        assert n == 2, n
        return self * self

    def __abs__(self):
        return abs(self.a)

    def __gt__(self, y):
        return self.a > Dual._parts(y)[0]

    def __lt__(self, y):
        return self.a < Dual._parts(y)[0]

    def __ge__(self, y):
        return self.a >= Dual._parts(y)[0]

    def __le__(self, y):
        return self.a <= Dual._parts(y)[0]

    def __eq__(self, y):
        return self.a == Dual._parts(y)[0]

    __hash__ = None


# ------------------------------------------------------------ number domains

class Domain:
    """The arithmetic of a run: conversion of an input and the functions
    beyond + − × ÷."""

    def __init__(self, kind):
        self.kind = kind

    def num(self, x):
        if self.kind == "fraction":
            if type(x) is Fraction:     # immutable: x itself is its value
                return x
            return Fraction(x) if not isinstance(x, float) else Fraction(float(x))
        if self.kind == "decimal":
            if isinstance(x, Fraction):
                return Decimal(x.numerator) / Decimal(x.denominator)
            return Decimal(float(x)) if isinstance(x, float) else Decimal(x)
        return float(x)

    def exp(self, x):
        if isinstance(x, Dual):        # e^{a + bε} = e^a + b e^a ε
            e = self.exp(x.a)
            return Dual(e, x.b * e)
        if self.kind == "decimal":
            return x.exp()
        if self.kind == "float":
            return math.exp(x)
        raise ValueError("exp is not rational: this model needs the decimal domain")

    def ln(self, x):
        if isinstance(x, Dual):
            return Dual(self.ln(x.a), x.b / x.a)
        if self.kind == "decimal":
            return x.ln()
        if self.kind == "float":
            return math.log(x)
        raise ValueError("log is not rational: this model needs the decimal domain")

    def sqrt(self, x):
        if isinstance(x, Dual):
            r = self.sqrt(x.a)
            return Dual(r, x.b / (2 * r))
        if self.kind == "decimal":
            return x.sqrt()
        if self.kind == "float":
            return math.sqrt(x)
        raise ValueError("sqrt is not rational: this model needs the decimal domain")

    def tanh(self, x):
        if isinstance(x, Dual):        # tanh' = 1 − tanh²
            t = self.tanh(x.a)
            return Dual(t, x.b * (1 - t * t))
        if self.kind == "float":
            return math.tanh(x)
        e = self.exp(2 * x)         # tanh a = (e^{2a} − 1)/(e^{2a} + 1)
        return (e - 1) / (e + 1)

    def sigmoid(self, x):
        if isinstance(x, Dual):        # σ' = σ(1 − σ)
            t = self.sigmoid(x.a)
            return Dual(t, x.b * t * (1 - t))
        if self.kind == "float":
            return 1.0 / (1.0 + math.exp(-x))
        return 1 / (1 + self.exp(-x))


# ------------------------------------------------------------ the model

class Layer:
    def __init__(self, i, spec, in_shape):
        self.index = i
        self.type = spec["type"]
        assert self.type in TYPES, f"model.layers[{i}].type {self.type!r}"
        self.name = spec.get("name", str(i))
        self.in_shape = tuple(in_shape)
        t = self.type
        if t == "dense":
            assert len(in_shape) == 1, (i, in_shape)
            self.out = spec["out"]
            self.bias = spec.get("bias", True)
            self.out_shape = (self.out,)
        elif t == "conv2d":
            C, H, W = in_shape
            self.O, self.k = spec["out_channels"], spec["kernel"]
            self.s, self.p = spec.get("stride", 1), spec.get("padding", 0)
            self.bias = spec.get("bias", True)
            Ho = (H + 2 * self.p - self.k) // self.s + 1
            Wo = (W + 2 * self.p - self.k) // self.s + 1
            assert Ho >= 1 and Wo >= 1, (i, in_shape)
            self.out_shape = (self.O, Ho, Wo)
        elif t in ("maxpool2d", "avgpool2d"):
            C, H, W = in_shape
            self.k = spec["kernel"]
            self.s = spec.get("stride", self.k)
            assert (H - self.k) % self.s == 0 and (W - self.k) % self.s == 0, (i, in_shape)
            self.out_shape = (C, (H - self.k) // self.s + 1, (W - self.k) // self.s + 1)
        elif t == "flatten":
            n = 1
            for x in in_shape:
                n *= x
            self.out_shape = (n,)
        elif t in ("batchnorm1d", "batchnorm2d"):
            assert len(in_shape) == (1 if t == "batchnorm1d" else 3), (i, in_shape)
            self.eps = spec.get("eps", 1e-5)
            self.rho = spec.get("momentum", 0.1)
            self.out_shape = self.in_shape
        else:
            self.out_shape = self.in_shape

    def roles(self):
        """The layer's blocks in state_dict order: (role, size)."""
        if self.type == "dense":
            r = [("weight", self.out * self.in_shape[0])]
            return r + ([("bias", self.out)] if self.bias else [])
        if self.type == "conv2d":
            r = [("weight", self.O * self.in_shape[0] * self.k * self.k)]
            return r + ([("bias", self.O)] if self.bias else [])
        if self.type.startswith("batchnorm"):
            c = self.in_shape[0]
            return [("weight", c), ("bias", c), ("running_mean", c), ("running_var", c)]
        return []


def size(shape):
    n = 1
    for x in shape:
        n *= x
    return n


class Model:
    """A spec's "layers" model: the layers with their shapes, the blocks
    (name, layer index, role, offset, size, is_input, is_head, is_bn,
    is_buffer) in state_dict order, P, the loss and the domain."""

    def __init__(self, model, domain=None):
        assert model["kind"] == "layers", model["kind"]
        self.input = tuple(model["input"])
        self.loss = model.get("loss", "cross_entropy")
        self.layers = []
        shape = self.input
        for i, spec in enumerate(model["layers"]):
            L = Layer(i, spec, shape)
            self.layers.append(L)
            shape = L.out_shape
        assert len(shape) == 1, shape
        self.k = shape[0]
        if self.loss != "cross_entropy":
            assert self.k == 1, "a squared loss needs one output"
        self.d = size(self.input)
        rational = (all(L.type in RATIONAL for L in self.layers)
                    and self.loss in ("squared", "half_squared"))
        self.D = Domain(domain or ("fraction" if rational else "decimal"))
        par = [L for L in self.layers if L.type in PARAMETRISED]
        self.blocks = []
        for L in par:
            for role, n in L.roles():
                self.blocks.append({
                    "name": f"{L.name}.{role}", "layer": L.index, "role": role,
                    "size": n, "is_input": L is par[0], "is_head": L is par[-1],
                    "is_bn": L.type.startswith("batchnorm"),
                    "is_buffer": role.startswith("running_")})
        self.P = sum(b["size"] for b in self.blocks)
        self._layouts = {}
        self._taps = {}

    # ---------------------------------------------------------- layout

    def layout(self, bugs=NO_BUGS):
        """{(layer index, role): offset} in the parameter vector; the layout
        bugs reorder the blocks."""
        key = frozenset(bugs) & LAYOUT_BUGS
        if key not in self._layouts:
            order = list(self.blocks)
            if "bias-before-weight" in key:
                out = []
                for b in order:
                    if b["role"] == "bias" and out and out[-1]["layer"] == b["layer"] \
                            and out[-1]["role"] == "weight":
                        out.insert(len(out) - 1, b)
                    else:
                        out.append(b)
                order = out
            if "buffers-last" in key:
                order = ([b for b in order if not b["is_buffer"]]
                         + [b for b in order if b["is_buffer"]])
            at, off = {}, 0
            for b in order:
                at[(b["layer"], b["role"])] = off
                off += b["size"]
            self._layouts[key] = at
        return self._layouts[key]

    def block_offsets(self):
        """[(block, offset)] in the true layout."""
        at = self.layout()
        return [(b, at[(b["layer"], b["role"])]) for b in self.blocks]

    def bn_entries(self):
        """The indices of every batchnorm block's entries (the "bn" group)."""
        return {o + q for b, o in self.block_offsets() if b["is_bn"]
                for q in range(b["size"])}

    # ---------------------------------------------------------- index maps

    def _conv_taps(self, L, bugs):
        """For each output index (o·Ho·Wo + i·Wo + j): the list of
        (input index, weight offset within the block) it sums, and o."""
        key = (L.index, frozenset(bugs) & {"conv-flip", "conv-kernel-transpose",
                                           "conv-weight-io", "conv-pad-end",
                                           "conv-pad-replicate"})
        if key in self._taps:
            return self._taps[key]
        C, H, W = L.in_shape
        O, Ho, Wo = L.out_shape
        k, s, p = L.k, L.s, L.p
        pad = 0 if "conv-pad-end" in bugs else p
        taps = []
        for o in range(O):
            for i in range(Ho):
                for j in range(Wo):
                    row = []
                    for c in range(C):
                        for u in range(k):
                            for v in range(k):
                                h, w = i * s + u - pad, j * s + v - pad
                                if "conv-pad-replicate" in bugs:
                                    h, w = min(max(h, 0), H - 1), min(max(w, 0), W - 1)
                                if not (0 <= h < H and 0 <= w < W):
                                    continue      # zero padding
                                uu, vv = u, v
                                if "conv-flip" in bugs:
                                    uu, vv = k - 1 - u, k - 1 - v
                                if "conv-kernel-transpose" in bugs:
                                    uu, vv = vv, uu
                                if "conv-weight-io" in bugs:
                                    widx = ((c * O + o) * k + uu) * k + vv
                                else:
                                    widx = ((o * C + c) * k + uu) * k + vv
                                row.append((c * H * W + h * W + w, widx))
                    taps.append((o, row))
        self._taps[key] = taps
        return taps

    def _windows(self, L):
        """For each pooling output (c·Ho·Wo + i·Wo + j): its window's input
        indices in row-major order."""
        key = ("pool", L.index)
        if key not in self._taps:
            C, H, W = L.in_shape
            _, Ho, Wo = L.out_shape
            self._taps[key] = [
                [c * H * W + (i * L.s + u) * W + (j * L.s + v)
                 for u in range(L.k) for v in range(L.k)]
                for c in range(C) for i in range(Ho) for j in range(Wo)]
        return self._taps[key]

    @staticmethod
    def _nhwc(shape):
        """perm with nhwc[q] = the NCHW index of the q-th value in
        channels-last order."""
        C, H, W = shape
        return [c * H * W + h * W + w for h in range(H) for w in range(W)
                for c in range(C)]

    def _bn_groups(self, L, bugs):
        """The statistics' groups of one sample's values: per channel (2d:
        the channel's H·W positions) or per feature (1d)."""
        if L.type == "batchnorm1d" or "bn2d-per-position" in bugs:
            return [(q, [q]) for q in range(size(L.in_shape))]
        C, H, W = L.in_shape
        return [(c, list(range(c * H * W, (c + 1) * H * W))) for c in range(C)]

    # ---------------------------------------------------------- forward

    def forward(self, theta, X, train=True, bugs=NO_BUGS):
        """Forward pass of the batch X (a list of flat NCHW samples, in the
        domain) at theta (in the domain).  Returns (Z, caches): Z the
        outputs, caches[l] what layer l's backward needs."""
        at = self.layout(bugs)
        D = self.D
        A = [list(x) for x in X]
        if "input-nhwc" in bugs and len(self.input) == 3:
            perm = self._nhwc(self.input)       # row[q] holds NCHW index perm[q]
            A = [[x[perm.index(q)] for q in range(len(x))] for x in A]
        caches = []
        for L in self.layers:
            t, cache = L.type, {"in": A}
            if t == "dense":
                off = at[(L.index, "weight")]
                n_in, n_out = L.in_shape[0], L.out
                if "dense-w-transpose" in bugs:
                    widx = [[off + i * n_out + o for i in range(n_in)] for o in range(n_out)]
                else:
                    widx = [[off + o * n_in + i for i in range(n_in)] for o in range(n_out)]
                bo = at[(L.index, "bias")] if L.bias else None
                cache["widx"], cache["bo"] = widx, bo
                out = []
                for a in A:
                    z = []
                    for o in range(n_out):
                        acc = theta[bo + o] if bo is not None else D.num(0)
                        for i in range(n_in):
                            acc += theta[widx[o][i]] * a[i]
                        z.append(acc)
                    out.append(z)
            elif t == "conv2d":
                off = at[(L.index, "weight")]
                bo = at[(L.index, "bias")] if L.bias else None
                taps = self._conv_taps(L, bugs)
                cache["taps"], cache["off"], cache["bo"] = taps, off, bo
                out = []
                for a in A:
                    z = []
                    for o, row in taps:
                        acc = theta[bo + o] if bo is not None else D.num(0)
                        for ii, wi in row:
                            acc += theta[off + wi] * a[ii]
                        z.append(acc)
                    out.append(z)
            elif t == "maxpool2d":
                wins = self._windows(L)
                out, arg = [], []
                for a in A:
                    z, g = [], []
                    for win in wins:
                        best = win[0]
                        for ii in win[1:]:
                            if a[ii] > a[best]:         # the first maximum stays
                                best = ii
                        # a tie of zeros (all of the window cut by a relu)
                        # sends a gradient the relu stops whichever way
                        rest = [a[ii] for ii in win if ii != best]
                        if rest and a[best] != 0:
                            _low("pool_gap", a[best] - max(rest))
                        z.append(a[best])
                        g.append(best)
                    out.append(z)
                    arg.append(g)
                cache["wins"], cache["arg"] = wins, arg
            elif t == "avgpool2d":
                wins = self._windows(L)
                kk = L.k * L.k
                out = [[sum((a[ii] for ii in win), D.num(0)) / kk for win in wins]
                       for a in A]
                cache["wins"] = wins
            elif t == "flatten":
                if "flatten-nhwc" in bugs and len(L.in_shape) == 3:
                    perm = self._nhwc(L.in_shape)
                    out = [[a[q] for q in perm] for a in A]
                else:
                    out = [list(a) for a in A]
            elif t == "relu":
                for a in A:
                    for x in a:
                        _low("relu", x)
                out = [[x if x > 0 else D.num(0) for x in a] for a in A]
            elif t == "tanh":
                out = [[D.tanh(x) for x in a] for a in A]
            elif t == "sigmoid":
                out = [[D.sigmoid(x) for x in a] for a in A]
            else:
                out = self._bn_forward(L, theta, A, train, at, bugs, cache)
            cache["out"] = out
            caches.append(cache)
            A = out
        return A, caches

    def _bn_forward(self, L, theta, A, train, at, bugs, cache):
        """y = γ (a − μ)/√(s² + ε) + β per group (Ioffe & Szegedy, Alg. 1)."""
        D = self.D
        eps = D.num(L.eps)
        g0, b0 = at[(L.index, "weight")], at[(L.index, "bias")]
        m0, v0 = at[(L.index, "running_mean")], at[(L.index, "running_var")]
        out = [[None] * len(a) for a in A]
        stats = []
        for c, idx in self._bn_groups(L, bugs):
            cc = c if L.type == "batchnorm1d" or "bn2d-per-position" not in bugs \
                else c // (L.in_shape[1] * L.in_shape[2])
            vals = [a[q] for a in A for q in idx]
            m = len(vals)
            if train and "running-in-training" not in bugs:
                mu = sum(vals, D.num(0)) / m
                var = sum(((x - mu) ** 2 for x in vals), D.num(0)) / (
                    m - 1 if "unbiased-norm-var" in bugs else m)
                batch = True
            else:
                mu, var, batch = theta[m0 + cc], theta[v0 + cc], False
            s = D.sqrt(var) + eps if "eps-outside-root" in bugs else D.sqrt(var + eps)
            gam, bet = theta[g0 + cc], theta[b0 + cc]
            for j, a in enumerate(A):
                for q in idx:
                    out[j][q] = gam * (a[q] - mu) / s + bet
            stats.append({"c": cc, "idx": idx, "mu": mu, "var": var, "s": s,
                          "m": m, "batch": batch})
        cache["stats"] = stats
        cache["at"] = (g0, b0, m0, v0)
        return out

    # ---------------------------------------------------------- loss

    def _signal(self, z, y, bugs):
        """(ℓ, ∂ℓ/∂z) of one sample."""
        D = self.D
        if self.loss == "cross_entropy":
            top = max(z)
            e = [D.exp(zi - top) for zi in z]
            tot = sum(e, D.num(0))
            cls = int(y)
            loss = D.ln(tot) + top - z[cls]
            return loss, [e[o] / tot - (1 if o == cls else 0) for o in range(self.k)]
        s = 2 if self.loss == "squared" else 1
        if "loss-x2" in bugs:
            s = 3 - s
        r = z[0] - y
        return (r * r if self.loss == "squared" else r * r / 2), [s * r]

    def batch_loss(self, theta, X, Y, train=True):
        """F = the batch mean of ℓ (theta, X, Y in the domain)."""
        Z, _ = self.forward(theta, X, train)
        return sum((self._signal(z, y, NO_BUGS)[0] for z, y in zip(Z, Y)),
                   self.D.num(0)) / len(X)

    # ---------------------------------------------------------- backward

    def grad(self, theta, X, Y, bugs=NO_BUGS, train=True):
        """(∇F, caches) of the batch-mean loss F on the batch (X, Y) at theta,
        all in the domain; the running statistics' entries are 0.  train =
        False: the evaluation-mode pass (batch normalisation on theta's
        running statistics, held fixed: _bn_backward's non-batch branch)."""
        D = self.D
        n = len(X)
        Z, caches = self.forward(theta, X, train, bugs)
        scale = 1 if "batch-sum" in bugs else n
        G = [[e / scale for e in self._signal(z, y, bugs)[1]] for z, y in zip(Z, Y)]
        g = [D.num(0)] * self.P
        for L, cache in zip(reversed(self.layers), reversed(caches)):
            G = self._backward(L, cache, theta, G, g, bugs)
        return g, caches

    def _backward(self, L, cache, theta, G, g, bugs):
        """∂F/∂(layer input) from ∂F/∂(layer output) G (per sample), adding
        the layer's parameter gradients into g."""
        D, A, t = self.D, cache["in"], L.type
        zero = D.num(0)
        if t == "dense":
            widx, bo = cache["widx"], cache["bo"]
            out = []
            for a, gz in zip(A, G):
                ga = [zero] * len(a)
                for o, go in enumerate(gz):
                    if bo is not None:
                        g[bo + o] += go                       # ∂z_o/∂b_o = 1
                    for i in range(len(a)):
                        g[widx[o][i]] += go * a[i]            # ∂z_o/∂W_oi = a_i
                        ga[i] += go * theta[widx[o][i]]       # ∂z_o/∂a_i = W_oi
                out.append(ga)
            return out
        if t == "conv2d":
            taps, off, bo = cache["taps"], cache["off"], cache["bo"]
            out = []
            for a, gz in zip(A, G):
                ga = [zero] * len(a)
                for (o, row), go in zip(taps, gz):
                    if bo is not None:
                        g[bo + o] += go
                    for ii, wi in row:
                        g[off + wi] += go * a[ii]
                        ga[ii] += go * theta[off + wi]
                out.append(ga)
            return out
        if t == "maxpool2d":
            out = []
            for a, gz, arg in zip(A, G, cache["arg"]):
                ga = [zero] * len(a)
                for win, best, go in zip(cache["wins"], arg, gz):
                    if "pool-grad-all" in bugs:
                        for ii in win:
                            ga[ii] += go
                    else:
                        ga[win[0] if "pool-grad-first" in bugs else best] += go
                out.append(ga)
            return out
        if t == "avgpool2d":
            kk = 1 if "avgpool-grad-sum" in bugs else L.k * L.k
            out = []
            for a, gz in zip(A, G):
                ga = [zero] * len(a)
                for win, go in zip(cache["wins"], gz):
                    for ii in win:
                        ga[ii] += go / kk
                out.append(ga)
            return out
        if t == "flatten":
            if "flatten-nhwc" in bugs and len(L.in_shape) == 3:
                perm = self._nhwc(L.in_shape)
                out = []
                for gz in G:
                    ga = [zero] * len(gz)
                    for q, src in enumerate(perm):
                        ga[src] = gz[q]
                    out.append(ga)
                return out
            return [list(gz) for gz in G]
        if t == "relu":
            return [[go if x > 0 else zero for x, go in zip(a, gz)]   # relu'(0) = 0
                    for a, gz in zip(A, G)]
        if t == "tanh":
            if "tanh-deriv-preact" in bugs:
                return [[go * (1 - x * x) for x, go in zip(a, gz)] for a, gz in zip(A, G)]
            return [[go * (1 - y * y) for y, go in zip(yo, gz)]
                    for yo, gz in zip(cache["out"], G)]
        if t == "sigmoid":
            if "sigmoid-deriv-preact" in bugs:
                return [[go * x * (1 - x) for x, go in zip(a, gz)] for a, gz in zip(A, G)]
            return [[go * y * (1 - y) for y, go in zip(yo, gz)]
                    for yo, gz in zip(cache["out"], G)]
        return self._bn_backward(L, cache, theta, G, g, bugs)

    def _bn_backward(self, L, cache, theta, G, g, bugs):
        """Ioffe & Szegedy §3, per group of m values a_i with y_i = γ x̂_i + β:
            ∂ℓ/∂x̂_i = ∂ℓ/∂y_i · γ
            ∂ℓ/∂σ²  = Σ_i ∂ℓ/∂x̂_i (a_i − μ) · (−½)(σ² + ε)^{−3/2}
            ∂ℓ/∂μ   = Σ_i ∂ℓ/∂x̂_i (−1/√(σ² + ε)) + ∂ℓ/∂σ² · Σ_i −2(a_i − μ)/m
            ∂ℓ/∂a_i = ∂ℓ/∂x̂_i /√(σ² + ε) + ∂ℓ/∂σ² · 2(a_i − μ)/m + ∂ℓ/∂μ /m
            ∂ℓ/∂γ   = Σ_i ∂ℓ/∂y_i x̂_i,   ∂ℓ/∂β = Σ_i ∂ℓ/∂y_i
        (the factor (σ² + ε)^{−3/2}/2 is −∂(1/s)/∂σ² with s = √(σ² + ε); the
        mutants eps-outside-root and unbiased-norm-var change s(σ²) and the
        divisor of σ² accordingly)."""
        D, A = self.D, cache["in"]
        zero = D.num(0)
        g0, b0, _, _ = cache["at"]
        out = [[zero] * len(a) for a in A]
        for st in cache["stats"]:
            c, idx, mu, var, s, m = (st["c"], st["idx"], st["mu"], st["var"],
                                     st["s"], st["m"])
            gam = theta[g0 + c]
            cells = [(j, q) for j in range(len(A)) for q in idx]
            dy = {(j, q): G[j][q] for j, q in cells}
            xh = {(j, q): (A[j][q] - mu) / s for j, q in cells}
            g[g0 + c] += sum((dy[e] * xh[e] for e in cells), zero)
            g[b0 + c] += sum((dy[e] for e in cells), zero)
            dxh = {e: dy[e] * gam for e in cells}
            if not st["batch"] or "no-stat-backward" in bugs:
                for j, q in cells:
                    out[j][q] = dxh[(j, q)] / s
                continue
            div = m - 1 if "unbiased-norm-var" in bugs else m
            # ds/dσ²: 1/(2 s) with s = √(σ² + ε); 1/(2 √σ²) with s = √σ² + ε
            ds = (1 / (2 * D.sqrt(var)) if "eps-outside-root" in bugs
                  else 1 / (2 * s))
            dvar = sum((dxh[(j, q)] * (A[j][q] - mu) for j, q in cells), zero) \
                * (-1 / (s * s)) * ds
            dmu = (sum((dxh[e] for e in cells), zero) * (-1 / s)
                   + dvar * sum((-2 * (A[j][q] - mu) for j, q in cells), zero) / div)
            for j, q in cells:
                out[j][q] = (dxh[(j, q)] / s + dvar * 2 * (A[j][q] - mu) / div
                             + dmu / m)
        return out

    # ---------------------------------------------------------- running stats

    def update_running(self, theta, caches, unbiased=True, bugs=NO_BUGS):
        """PyTorch's rule after a training forward (caches from grad):
        r_μ ← (1 − ρ) r_μ + ρ μ_B, r_v ← (1 − ρ) r_v + ρ (m/(m − 1)) s²_B
        (unbiased) or ρ s²_B; theta is changed in place."""
        D = self.D
        n_b = len(caches[0]["in"])
        for L, cache in zip(self.layers, caches):
            if not L.type.startswith("batchnorm"):
                continue
            rho = D.num(L.rho)
            _, _, m0, v0 = cache["at"]
            done = set()
            for st in cache["stats"]:
                c = st["c"]
                if c in done:       # bn2d-per-position: the channel's first group
                    continue
                done.add(c)
                m = st["m"]
                if "running-var-count-nb" in bugs and L.type == "batchnorm2d":
                    m = n_b
                if unbiased != ("running-var-flipped" in bugs):
                    vq = st["var"] * m / (m - 1)
                else:
                    vq = st["var"]
                keep, take = ((rho, 1 - rho) if "momentum-flipped" in bugs
                              else (1 - rho, rho))
                theta[m0 + c] = keep * theta[m0 + c] + take * st["mu"]
                theta[v0 + c] = keep * theta[v0 + c] + take * vq


# ------------------------------------------------------------ the problem view

class ClientData:
    """One client's data in a model's domain: X (n rows), y."""

    def __init__(self, M, client):
        self.X = [[M.D.num(float(x)) for x in row] for row in client["X"]]
        self.y = [M.D.num(float(v)) for v in client["y"]]
        self.n = len(self.X)


def to_exact(x):
    """The exact rational value of a domain number."""
    return x if isinstance(x, Fraction) else Fraction(x)


def running_exact(M, data, theta, batch, unbiased=True, bugs=NO_BUGS):
    """theta (exact rationals) with every batchnorm layer's running
    statistics moved by the training forward pass on the batch
    (update_running, PyTorch's rule), as exact rationals: the domain's
    result converted exactly; the other entries are theta's own."""
    th = [M.D.num(x) for x in theta]
    _, caches = M.forward(th, [data.X[j] for j in batch], True, bugs)
    M.update_running(th, caches, unbiased, bugs)
    at = M.layout(bugs)                   # the (possibly bugged) layout's
    moved = {at[(b["layer"], b["role"])] + q for b in M.blocks
             if b["is_buffer"] for q in range(b["size"])}
    return [to_exact(th[p]) if p in moved else theta[p]
            for p in range(len(theta))]


def grad_exact(M, data, theta, batch, bugs=NO_BUGS, train=True):
    """∇F on the batch (a list of sample indices) at theta (exact rationals),
    as exact rationals: the domain's result converted exactly (a decimal
    model's gradient is its 60-digit value); train = False: in evaluation
    mode (Model.grad)."""
    th = [M.D.num(x) for x in theta]
    g, _ = M.grad(th, [data.X[j] for j in batch], [data.y[j] for j in batch],
                  bugs, train)
    return [to_exact(x) for x in g]


def _dual_part(x, part):
    if isinstance(x, Dual):
        return to_exact(x.a if part == 0 else x.b)
    return to_exact(x) if part == 0 else Fraction(0)


def hvp_exact(M, data, theta, v, batch, bugs=NO_BUGS):
    """∇²F(θ; batch) v (exact rationals from the domain's result): the
    gradient run on the dual numbers θ + ε v (Dual), its ε part.  Exact in
    the fraction domain for any layer list away from its kinks; the
    decimal domain's tanh, sigmoid and exp enter with their 60-digit
    derivatives."""
    D = M.D
    th = [Dual(D.num(a), D.num(b)) for a, b in zip(theta, v)]
    g, _ = M.grad(th, [data.X[j] for j in batch], [data.y[j] for j in batch], bugs)
    return [_dual_part(x, 1) for x in g]


def outputs_exact(M, data, theta, batch, bugs=NO_BUGS):
    """z(θ; x_j) (the one output of a squared-loss model) for j in batch,
    exact rationals from the domain's result."""
    th = [M.D.num(x) for x in theta]
    Z, _ = M.forward(th, [data.X[j] for j in batch], True, bugs)
    return [to_exact(z[0]) for z in Z]


def output_vjp_exact(M, data, theta, batch, E, bugs=NO_BUGS):
    """Σ_j E_j ∂z(θ; x_j)/∂θ over j in batch (E exact, one per sample):
    the backward pass seeded with E instead of the loss's signal."""
    D = M.D
    th = [D.num(x) for x in theta]
    Z, caches = M.forward(th, [data.X[j] for j in batch], True, bugs)
    G = [[D.num(e)] for e in E]
    g = [D.num(0)] * M.P
    for L, cache in zip(reversed(M.layers), reversed(caches)):
        G = M._backward(L, cache, th, G, g, bugs)
    return [to_exact(x) for x in g]


def loss_exact(M, X, Y, theta, bugs=NO_BUGS):
    """(mean ℓ, mean (ŷ − y)²) over the rows X, y (plain numbers; the
    squared losses only, where ŷ = z_0), exact rationals from the domain's
    result.  loss-x2: the loss's constant factor wrong, as in the gradient
    (the ½ of half_squared dropped, or one put on squared)."""
    assert M.loss in ("squared", "half_squared"), M.loss
    D = M.D
    th = [D.num(x) for x in theta]
    Xd = [[D.num(float(x)) for x in row] for row in X]
    Z, _ = M.forward(th, Xd, True, bugs)
    sq = Fraction(0)
    for z, y in zip(Z, Y):
        r = to_exact(z[0]) - Fraction(float(y))
        sq += r * r
    sq /= len(X)
    half = (M.loss == "half_squared") != ("loss-x2" in bugs)
    return (sq / 2 if half else sq), sq


# every bug this model implements (the replays pass these to the model)
ALL_BUGS = frozenset(b for bs in MUTANTS.values() for b in bs)
