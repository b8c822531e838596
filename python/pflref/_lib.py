# SPDX-License-Identifier: GPL-3.0-or-later
"""The C library, bound in-process with ctypes (docs/python.md, "Finding
the library").

Every entry point used here takes text and returns text (JSON), so no C
struct is mirrored beyond the two small public ones below: pflref_error
(include/pflref/status.h) and pflref_check_options (include/pflref/golden.h).
The library is the oracle; this module only moves bytes across.
"""
import ctypes
import ctypes.util
import json
import os
import threading

from ._errors import Error, STATUS_NAMES, error_for

_HERE = os.path.dirname(os.path.abspath(__file__))

# Status codes of include/pflref/status.h.
OK, EINVAL, ENOMEM, EIO, EDIVERGE, EINTERNAL = range(6)


class _CError(ctypes.Structure):
    """pflref_error (include/pflref/status.h)."""
    _fields_ = [("status", ctypes.c_int),
                ("where", ctypes.c_char * 256),       # PFLREF_WHERE_MAX
                ("message", ctypes.c_char * 512),     # PFLREF_MESSAGE_MAX
                ("round", ctypes.c_long),
                ("client", ctypes.c_long),
                ("step", ctypes.c_long)]


class _CCheckOptions(ctypes.Structure):
    """pflref_check_options (include/pflref/golden.h)."""
    _fields_ = [("precision", ctypes.c_int),   # pflref_precision
                ("resync", ctypes.c_int),
                ("partial", ctypes.c_int),
                ("same_id", ctypes.c_int),
                ("mca_runs", ctypes.c_size_t),  # Monte Carlo (0: defaults)
                ("mca_c", ctypes.c_double),
                ("mca_seed", ctypes.c_uint64)]


PRECISIONS = {"fp64": 0, "fp32": 1, "bf16": 2, "tf32": 3}


def checkout_root():
    """The repository this package sits in (python/pflref/ of a checkout),
    or None when it is installed elsewhere."""
    root = os.path.dirname(os.path.dirname(_HERE))
    if os.path.isdir(os.path.join(root, "golden")) and \
            os.path.isfile(os.path.join(root, "include", "pflref", "golden.h")):
        return root
    return None


def origin_checkout():
    """The checkout a pip-built package was built from (pflref/_origin.py,
    written by python/setup.py), when it is still a checkout; else None."""
    try:
        from . import _origin
    except ImportError:
        return None
    root = _origin.CHECKOUT
    if os.path.isdir(os.path.join(root, "golden")) and \
            os.path.isfile(os.path.join(root, "include", "pflref", "golden.h")):
        return root
    return None


def install_prefix():
    """PREFIX when the package is installed in
    PREFIX/lib/python3/dist-packages (or a site-packages below PREFIX/lib),
    else None."""
    parent = os.path.dirname(_HERE)
    if os.path.basename(parent) not in ("dist-packages", "site-packages"):
        return None
    lib = os.path.dirname(os.path.dirname(parent))     # PREFIX/lib
    if os.path.basename(lib) not in ("lib", "lib64"):
        return None
    return os.path.dirname(lib)


def candidates():
    """Where the library is looked for, in order (docs/python.md)."""
    places = []
    if os.environ.get("PFLREF_LIB"):
        places.append(("$PFLREF_LIB", os.environ["PFLREF_LIB"]))
        return places
    prefix = install_prefix()
    if prefix is not None:
        for lib in ("lib", "lib64"):
            places.append(("the install prefix",
                           os.path.join(prefix, lib, "libpflref.so.0")))
    root = checkout_root()
    if root is not None:
        places.append(("the checkout",
                       os.path.join(root, "build", "rel", "libpflref.so")))
    origin = origin_checkout()
    if origin is not None:
        places.append(("the checkout it was built from",
                       os.path.join(origin, "build", "rel", "libpflref.so")))
    found = ctypes.util.find_library("pflref")
    if found:
        places.append(("the system (ctypes.util.find_library)", found))
    return places


def _declare(lib):
    text_out = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_CError)]
    for name in ("pflref_spec_describe", "pflref_golden_required",
                 "pflref_golden_verify_json"):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = text_out, ctypes.c_int
    fn = lib.pflref_golden_check_json_at
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.POINTER(_CCheckOptions),
                   ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_CError)]
    fn.restype = ctypes.c_int
    fn = lib.pflref_spec_run_text
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(_CError)]
    fn.restype = ctypes.c_int
    lib.pflref_text_free.argtypes = [ctypes.c_void_p]
    lib.pflref_text_free.restype = None
    lib.pflref_blas_pin_threads.argtypes = []
    lib.pflref_blas_pin_threads.restype = None


_lib = None
_lib_path = None
_lock = threading.Lock()


def library():
    """The loaded library (loaded once, OpenBLAS pinned to one thread as
    the reference requires).  Raises Error naming every place tried."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for where, path in candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append("%s: %s (no such file)" % (where, path))
                continue
            try:
                lib = ctypes.CDLL(path)
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append("%s: %s (%s)" % (where, path, e))
                continue
            lib.pflref_blas_pin_threads()
            _lib, _lib_path = lib, path
            return lib
        raise Error(EIO, "PFLREF_LIB",
                    "cannot find libpflref: set PFLREF_LIB to the shared "
                    "library, or build it (make build/rel/libpflref.so) or "
                    "install it (make install); tried: "
                    + ("; ".join(tried) or "nothing"))


def library_path():
    library()
    return _lib_path


def _take(ptr):
    """The NUL-terminated text at ptr, decoded, then freed by the library."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        library().pflref_text_free(ptr)


def _raise(status, err):
    raise error_for(status, err.where.decode("utf-8", "replace"),
                    err.message.decode("utf-8", "replace"),
                    err.round, err.client, err.step)


def _encode(text):
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


def _dir(base_dir):
    return None if base_dir is None else os.fsencode(base_dir)


def write_file(path, text):
    """Write text (str or bytes) to path through the library's one writer
    (pflref_write_file_bytes, ref/io/write.c): path is a regular file or
    absent, a symbolic link is followed and kept, the content is renamed
    over the target only when complete.  Raises Error (kind "io") naming
    the path for a FIFO, a device, a folder, a dangling link, a read-only
    file or a missing folder, which are left as they were."""
    raw = _encode(text)
    fn = library().pflref_write_file_bytes
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                   ctypes.POINTER(_CError)]
    fn.restype = ctypes.c_int
    err = _CError()
    status = fn(os.fsencode(path), raw, len(raw), ctypes.byref(err))
    if status != OK:
        _raise(status, err)


def text_call(name, text, base_dir):
    """Call one of the text → JSON entry points; the parsed JSON."""
    raw = _encode(text)
    out, err = ctypes.c_void_p(), _CError()
    status = getattr(library(), name)(raw, len(raw), _dir(base_dir),
                                      ctypes.byref(out), ctypes.byref(err))
    if status != OK:
        _raise(status, err)
    return json.loads(_take(out))


def run_text(text, base_dir):
    """pflref_spec_run_text: the result text of the spec or vector."""
    raw = _encode(text)
    out, err = ctypes.c_void_p(), _CError()
    status = library().pflref_spec_run_text(raw, len(raw), _dir(base_dir),
                                            None, ctypes.byref(out),
                                            ctypes.byref(err))
    if status != OK:
        _raise(status, err)
    return _take(out)


def check_text(expected, base_dir, candidate, precision, resync, partial,
               candidate_dir=None):
    """pflref_golden_check_json_at: the report as a dict.  candidate_dir:
    the folder the candidate's file references are relative to (None: the
    current folder)."""
    if precision not in PRECISIONS:
        raise ValueError("precision: %r is not one of %s"
                         % (precision, ", ".join(PRECISIONS)))
    exp, cand = _encode(expected), _encode(candidate)
    opt = _CCheckOptions(precision=PRECISIONS[precision], resync=int(resync),
                         partial=int(partial), same_id=1)
    out, err = ctypes.c_void_p(), _CError()
    status = library().pflref_golden_check_json_at(
        exp, len(exp), _dir(base_dir), cand, len(cand), _dir(candidate_dir),
        ctypes.byref(opt), ctypes.byref(out), ctypes.byref(err))
    if status != OK:
        _raise(status, err)
    return json.loads(_take(out))


__all__ = ["library", "library_path", "checkout_root", "install_prefix",
           "STATUS_NAMES"]
