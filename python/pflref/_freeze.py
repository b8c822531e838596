# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.freeze: pin the reference's own output on a user's problem as a
golden vector (provenance "reference"), through the library's
pflref_freeze_text (include/pflref/io.h; `pflref freeze`, docs/cli.md).

Such a vector says "agrees with pflref on this problem", not "agrees with
the paper": docs/validate.md, "Trust levels"."""
import ctypes
import os

from . import _lib
from ._arrays import INLINE_MAX
from ._check import _spec_text
from ._vectors import Vector


class _CFreezeOptions(ctypes.Structure):
    """pflref_freeze_options (include/pflref/io.h)."""
    _fields_ = [("atol", ctypes.c_double), ("rtol", ctypes.c_double),
                ("basis", ctypes.c_char_p), ("id", ctypes.c_char_p),
                ("vector_dir", ctypes.c_char_p),
                ("trajectory", ctypes.c_char_p),
                ("arrays", ctypes.c_char_p),
                ("inline_max", ctypes.c_size_t)]


def _opt(text):
    return None if text is None else text.encode("utf-8")


def _freeze_write(raw, base_dir, opt, path):
    """pflref_freeze_write: the vector (and in the files form its .npy
    files, first) written to path by the library; its text."""
    lib = _lib.library()
    fn = lib.pflref_freeze_write
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.POINTER(_CFreezeOptions), ctypes.c_char_p,
                   ctypes.POINTER(ctypes.c_size_t),
                   ctypes.POINTER(_lib._CError)]
    fn.restype = ctypes.c_int
    vec_len, err = ctypes.c_size_t(), _lib._CError()
    status = fn(raw, len(raw), _lib._dir(base_dir), ctypes.byref(opt),
                os.fsencode(path), ctypes.byref(vec_len), ctypes.byref(err))
    if status != _lib.OK:
        _lib._raise(status, err)
    with open(path, encoding="utf-8") as f:
        return f.read()


def freeze(spec, out=None, atol=0.0, rtol=0.0, basis=None, id=None,
           trajectory=None, base_dir=None, arrays="inline",
           inline_max=INLINE_MAX):
    """Run the reference on spec (a dict, JSON text, a path or a Vector)
    and return the golden vector of its output as a pflref.Vector.

    out: write the vector there too, by the library's one writer (a
    regular file or absent, replaced whole; a FIFO, a folder, a dangling
    link or a read-only file raises pflref.Error, kind "io"); a relative
    problem file is then written relative to out's folder.  atol, rtol, basis: the
    tolerance and the argument for it (all three, or none: the documented
    fp64 default).  id: the vector's id (default reference/ALGORITHM/
    <hash>).  trajectory: "step" (default), "round" or "none".
    arrays: "inline" (default) or "files": each array of the spec's init
    and of the expectation with more than inline_max numbers (and the
    trajectory's values when they number more in all) goes to a .npy file
    of OUT_STEM.arrays/ beside out, which is then required; the vector
    lists them in "array_files" (docs/formats.md, "Golden vectors in
    files").  Raises pflref.InvalidInput naming the field, as `pflref
    freeze` does (exit 2)."""
    if arrays not in ("inline", "files"):
        raise ValueError("arrays: %r is not inline or files" % (arrays,))
    if isinstance(inline_max, bool) or not isinstance(inline_max, int) or \
            inline_max < 0:
        raise ValueError("inline_max: %r is not an integer >= 0"
                         % (inline_max,))
    if arrays == "files" and out is None:
        raise ValueError("arrays: the files form writes .npy files beside "
                         "the vector: give out=")
    text, folder = _spec_text(spec)
    if base_dir is None:
        base_dir = folder
    vector_dir = None if out is None else \
        os.path.dirname(os.path.abspath(os.fspath(out)))
    opt = _CFreezeOptions(float(atol), float(rtol), _opt(basis), _opt(id),
                          None if vector_dir is None
                          else os.fsencode(vector_dir), _opt(trajectory),
                          _opt(arrays), inline_max)
    if arrays == "files":
        path = os.path.abspath(os.fspath(out))
        vector_text = _freeze_write(_lib._encode(text), base_dir, opt, path)
        return Vector(path, text=vector_text)
    lib = _lib.library()
    fn = lib.pflref_freeze_text
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.POINTER(_CFreezeOptions),
                   ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_size_t),
                   ctypes.POINTER(_lib._CError)]
    fn.restype = ctypes.c_int
    raw = _lib._encode(text)
    vec, vec_len, err = ctypes.c_void_p(), ctypes.c_size_t(), _lib._CError()
    status = fn(raw, len(raw), _lib._dir(base_dir), ctypes.byref(opt),
                ctypes.byref(vec), ctypes.byref(vec_len), ctypes.byref(err))
    if status != _lib.OK:
        _lib._raise(status, err)
    vector_text = _lib._take(vec)
    if out is None:
        return Vector(os.path.join(base_dir or os.getcwd(), "<frozen>.json"),
                      text=vector_text)
    path = os.path.abspath(os.fspath(out))
    _lib.write_file(path, vector_text)    # the library's one writer
    return Vector(path, text=vector_text)
