#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_lowp.py: the NumPy candidate (pfl_numpy.py) computing in
float32 or in emulated bfloat16, to be judged with
`pflref check --candidate-precision fp32|bf16` (docs/validate.md,
"Candidate precision").

usage: pfl_numpy_lowp.py --dtype float32|bfloat16 [pfl_numpy.py's arguments]
       (or PFL_NUMPY_DTYPE=float32|bfloat16 in the environment)

No line of the candidate changes: every float array NumPy creates for it
(np.array, np.asarray, np.zeros, np.ones, np.eye, np.full, np.load, their
*_like forms, ...) is made float32, so the arithmetic that follows runs in
float32 (NumPy keeps float32 with Python scalars and float32 operands; its
matrix products call sgemm).  That is what a float32 port of the code
computes, loop for loop.

bfloat16 (8 significant bits, float32's exponent range) has no NumPy type.
The emulation computes as bfloat16 code does on hardware (PyTorch's CPU
bfloat16 kernels, GPU tensor cores): values are STORED in bfloat16, and
each KERNEL computes in float32 and rounds its outputs once to bfloat16
(round to nearest, ties to even: the low 16 bits of the float32 cleared
after adding the rounding bias).  Products of two bfloat16 numbers are
exact in float32 (8 + 8 significant bits); a matmul, a convolution, a
sum or a mean accumulates them in float32 and rounds only its result.
What counts as one kernel:

- one NumPy operation outside the layer-list model: every ufunc result
  (+, −, ×, /, exp, log, ...) and every array function's result (matmul,
  einsum, sum, mean, ...) is rounded once (a mean is one kernel, not a
  rounded sum then a rounded quotient); this is eager PyTorch, where each
  operation of a chain is its own kernel;
- in the layer-list model (pfl_numpy_layers.Layers), one layer's forward
  pass (a convolution or dense layer with its bias, as torch's conv2d
  and addmm add the bias in the float32 accumulator; a batchnorm with
  its batch statistics, as torch's fused batch_norm), one layer's
  backward pass (its parameter gradients and the signal handed down),
  the loss and its gradient signal, one layer's tangent (the
  Hessian-vector product), and the running-statistics update.  Inside
  such a kernel NumPy's results stay float32; on leaving it, its return
  values and the arrays it wrote into (the gradient vector, the cache's
  outputs) are rounded to bfloat16 in place.

The former emulation rounded after every NumPy operation, also inside a
layer: a convolution's output was rounded, then rounded again after its
bias; a mean rounded its sum.  That is no bfloat16 kernel's arithmetic
and gave a false positive under `--candidate-precision bf16`
(layers/ditto/cnn-two-rounds, docs/validate.md).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ("float32", "bfloat16")
_asarray, _where, _isfinite = np.asarray, np.where, np.isfinite


def round_bf16(a):
    """float32 array (or scalar) → the nearest bfloat16 values (float32),
    ties to even; NaN and ±Inf pass unchanged."""
    x = _asarray(a, dtype=np.float32)
    bits = x.view(np.uint32)
    with np.errstate(over="ignore"):   # wraps only for NaN, kept below
        lsb = (bits >> np.uint32(16)) & np.uint32(1)
        rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    return _where(_isfinite(x), out, x)


class BF16(np.ndarray):
    """A float32 array whose results are rounded to bfloat16."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kw):
        args = [x.view(np.ndarray) if isinstance(x, BF16) else x
                for x in inputs]
        if out is not None:
            kw["out"] = tuple(o.view(np.ndarray) if isinstance(o, BF16)
                              else o for o in out)
        res = getattr(ufunc, method)(*args, **kw)
        if out is not None:
            for o in out:
                if isinstance(o, np.ndarray) and o.dtype.kind == "f":
                    o.view(np.ndarray)[...] = round_bf16(o.view(np.ndarray))
        return _wrap(res)

    def __array_function__(self, func, types, args, kwargs):
        def plain(x):
            if isinstance(x, BF16):
                return x.view(np.ndarray)
            if isinstance(x, (list, tuple)):
                return type(x)(plain(y) for y in x)
            return x
        res = func(*plain(args), **{k: plain(v) for k, v in kwargs.items()})
        return _wrap(res)

    def mean(self, *args, **kw):
        """One kernel: the float32 mean rounded once (ndarray.mean would
        round the sum, then the quotient)."""
        return _wrap(self.view(np.ndarray).mean(*args, **kw))


_DEPTH = [0]     # > 0 while a kernel runs: results stay float32


def _round_in_place(x):
    """Rounds a kernel's output to bfloat16: arrays in place (so every
    reference to them, a cache entry, sees the stored value), tuples and
    lists entry by entry; a read-only array is replaced by a rounded
    copy."""
    if isinstance(x, (tuple, list)):
        return type(x)(_round_in_place(y) for y in x)
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        plain = x.view(np.ndarray)
        if plain.flags.writeable:
            plain[...] = round_bf16(plain)
            return x
        return round_bf16(plain).view(BF16)
    if isinstance(x, np.floating):
        return np.float32(round_bf16(np.float32(x)))
    return x


def kernel(fn):
    """fn as one bfloat16 kernel: float32 inside, its return values and
    the float arrays among its arguments (the arrays it writes into)
    rounded once to bfloat16 when the outermost kernel returns."""
    def run(*args, **kw):
        _DEPTH[0] += 1
        try:
            res = fn(*args, **kw)
        finally:
            _DEPTH[0] -= 1
        if _DEPTH[0] == 0:
            for a in list(args) + list(kw.values()):
                if isinstance(a, np.ndarray):
                    _round_in_place(a)
            res = _round_in_place(res)
        return res
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    run.is_kernel = True
    return run


# pfl_numpy_layers.Layers' methods that are one kernel each in bfloat16 code
KERNELS = ("layer_forward", "signal", "terms", "backward", "tangent",
           "backward_tangent", "track")


def _wrap(res):
    if isinstance(res, tuple):
        return tuple(_wrap(r) for r in res)
    if _DEPTH[0] > 0:                  # inside a kernel: float32, unrounded
        if isinstance(res, np.ndarray) and res.dtype.kind == "f":
            return res.astype(np.float32, copy=False).view(BF16)
        return res
    if isinstance(res, np.ndarray) and res.dtype.kind == "f":
        return round_bf16(res.astype(np.float32, copy=False)).view(BF16)
    if isinstance(res, np.floating):
        return np.float32(round_bf16(np.float32(res)))
    return res


def _lower(make):
    """make(...) with its float results in the chosen type."""
    def made(*args, **kw):
        res = make(*args, **kw)
        if isinstance(res, np.ndarray) and res.dtype.kind == "f":
            res = res.astype(np.float32, copy=False)
            if MODE == "bfloat16":
                res = round_bf16(res).view(BF16)
        return res
    made.__name__ = getattr(make, "__name__", "made")
    return made


MODE = None
CREATORS = ("array", "asarray", "asanyarray", "zeros", "ones", "empty",
            "full", "eye", "identity", "zeros_like", "ones_like",
            "empty_like", "full_like", "load", "linspace", "arange",
            "frombuffer", "fromiter", "copy")


def install(mode):
    """Make NumPy's array creation produce float32 (or bfloat16) arrays."""
    global MODE
    if mode not in DTYPES:
        sys.exit("pfl_numpy_lowp.py: --dtype is float32 or bfloat16, not %r"
                 % mode)
    MODE = mode
    for name in CREATORS:
        setattr(np, name, _lower(getattr(np, name)))
    # np.float32 scalars are not JSON numbers; the candidate writes
    # float(x) everywhere, this is a safety net
    default = json.JSONEncoder.default

    def encode(self, o):
        if isinstance(o, np.generic):
            return o.item()
        return default(self, o)
    json.JSONEncoder.default = encode


def kernels():
    """In bfloat16, make the layer-list model's KERNELS one kernel each
    (after install; pfl_numpy_layers on sys.path)."""
    if MODE != "bfloat16":
        return
    import pfl_numpy_layers
    for name in KERNELS:
        method = getattr(pfl_numpy_layers.Layers, name)
        if not getattr(method, "is_kernel", False):
            setattr(pfl_numpy_layers.Layers, name, kernel(method))


def main():
    argv = sys.argv[1:]
    mode = os.environ.get("PFL_NUMPY_DTYPE", "")
    if "--dtype" in argv:
        k = argv.index("--dtype")
        if k + 1 >= len(argv):
            sys.exit("pfl_numpy_lowp.py: --dtype needs float32 or bfloat16")
        mode = argv[k + 1]
        del argv[k:k + 2]
    install(mode or "float32")
    sys.path.insert(0, HERE)
    import pfl_numpy
    kernels()
    sys.argv = [os.path.join(HERE, "pfl_numpy.py")] + argv
    pfl_numpy.main()


if __name__ == "__main__":
    main()
