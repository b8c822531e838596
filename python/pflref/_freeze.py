# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.freeze: pin the reference's own output on a user's problem as a
golden vector (provenance "reference"), through the library's
pflref_freeze_text (include/pflref/io.h; `pflref freeze`, docs/cli.md).

Such a vector says "agrees with pflref on this problem", not "agrees with
the paper": docs/validate.md, "Trust levels"."""
import ctypes
import os

from . import _lib
from ._check import _spec_text
from ._vectors import Vector


class _CFreezeOptions(ctypes.Structure):
    """pflref_freeze_options (include/pflref/io.h)."""
    _fields_ = [("atol", ctypes.c_double), ("rtol", ctypes.c_double),
                ("basis", ctypes.c_char_p), ("id", ctypes.c_char_p),
                ("vector_dir", ctypes.c_char_p),
                ("trajectory", ctypes.c_char_p)]


def _opt(text):
    return None if text is None else text.encode("utf-8")


def freeze(spec, out=None, atol=0.0, rtol=0.0, basis=None, id=None,
           trajectory=None, base_dir=None):
    """Run the reference on spec (a dict, JSON text, a path or a Vector)
    and return the golden vector of its output as a pflref.Vector.

    out: write the vector there too, by the library's one writer (a
    regular file or absent, replaced whole; a FIFO, a folder, a dangling
    link or a read-only file raises pflref.Error, kind "io"); a relative
    problem file is then written relative to out's folder.  atol, rtol, basis: the
    tolerance and the argument for it (all three, or none: the documented
    fp64 default).  id: the vector's id (default reference/ALGORITHM/
    <hash>).  trajectory: "step" (default), "round" or "none".
    Raises pflref.InvalidInput naming the field, as `pflref freeze` does
    (exit 2)."""
    text, folder = _spec_text(spec)
    if base_dir is None:
        base_dir = folder
    vector_dir = None if out is None else \
        os.path.dirname(os.path.abspath(os.fspath(out)))
    opt = _CFreezeOptions(float(atol), float(rtol), _opt(basis), _opt(id),
                          None if vector_dir is None
                          else os.fsencode(vector_dir), _opt(trajectory))
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
