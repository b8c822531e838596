# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref: the Python binding of pflref, the double-precision reference
implementation of personalized federated learning algorithms and the test
oracle other implementations are validated against.

The oracle is the C library (libpflref.so), called in-process through
ctypes; nothing here recomputes what it computes (docs/python.md).

    import pflref
    for vector in pflref.vectors(algorithm="fedavg"):
        rec = pflref.Recorder(vector)
        ...                                   # the candidate records into rec
        report = pflref.check(vector, rec)
        print(report)                         # PASS / FAIL, first divergence

    result = pflref.run("my_spec.json")       # the reference on any spec

    rec.save("cand.json", arrays="files")     # arrays in cand.arrays/*.npy
    doc = pflref.load_result("cand.json")     # every array a NumPy array

pytest: `pytest -p pflref.pytest_plugin` (fixtures pflref_vector,
pflref_check).
"""
import sys as _sys

from ._errors import DivergenceError, Error, InvalidInput
from ._vectors import Spec, Vector, vectors
from ._recorder import Recorder
from ._check import Report, Result, check, run, verify
from ._lib import library_path
from ._freeze import freeze
from ._diagnose import Diagnosis, diagnose
from ._arrays import load_result, save_result
from ._capture import Capture
from . import _torch as torch      # pflref.torch: imports torch lazily; no
_sys.modules[__name__ + ".torch"] = torch   # file named torch.py (shadow)

__all__ = ["vectors", "Vector", "Spec", "Recorder", "check", "Report",
           "run", "Result", "verify", "freeze", "diagnose", "Diagnosis", "Error", "InvalidInput",
           "DivergenceError", "library_path", "load_result", "save_result",
           "__version__", "Capture", "torch"]


def _version():
    """The version, from the one place it lives (include/pflref/version.h),
    as the loaded library reports it (pflref_version())."""
    import ctypes
    from . import _lib
    fn = _lib.library().pflref_version
    fn.argtypes, fn.restype = [], ctypes.c_char_p
    return fn().decode("ascii")


def __getattr__(name):
    # __version__ is read from the library when first asked for, so that
    # `import pflref` works before the library is found.
    if name == "__version__":
        return _version()
    raise AttributeError("module 'pflref' has no attribute %r" % name)
