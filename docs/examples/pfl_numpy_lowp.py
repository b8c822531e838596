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

bfloat16 (8 significant bits, float32's exponent range) has no NumPy type:
the arrays are float32 arrays of a subclass whose every ufunc result
(+, −, ×, /, exp, log, matmul, ...) and every array function's result is
rounded to the nearest bfloat16, ties to even, by clearing the low 16 bits
of the float32 after adding the rounding bias — the rounding a bfloat16
kernel applies to its outputs (the products inside a matmul are exact in
float32 and the result rounded once, as on hardware with float32
accumulation).
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


def _wrap(res):
    if isinstance(res, tuple):
        return tuple(_wrap(r) for r in res)
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
    sys.argv = [os.path.join(HERE, "pfl_numpy.py")] + argv
    pfl_numpy.main()


if __name__ == "__main__":
    main()
