# SPDX-License-Identifier: GPL-3.0-or-later
"""diagnose(): which known variant a failing candidate computes
(docs/python.md, docs/cli.md "diagnose", docs/variants.md).

The search runs in the C library (pflref_golden_diagnose_json,
ref/oracle/diagnose.c): the vector's spec is re-run under each preset of
its algorithm, each other value of each switch from every preset, probes
of its hyperparameters, linked pairs, a beam of two changes (three, last), and the
candidate is compared with each run as the expectation.  Nothing is recomputed here; the document is read back as
JSON (format pflref-diagnosis/1).
"""
import ctypes
import json
import os

from . import _lib
from ._check import _candidate
from ._vectors import as_vector


class Diagnosis:
    """The verdict of a diagnosis.

    .matched     bool: a variant matches the candidate completely
    .summary     the verdict in words, as `pflref diagnose` prints it
    .best        the best matches, best first, one per numeric outcome:
                 dicts kind ("spec", "preset", "switch", "probe", "pair", "triple",
                 "precision": a float32 or bfloat16 cast, param
                 "precision" alone, "precision KEY" with a change),
                 preset, change, param, value, source, complete, agreeing,
                 expected_records, compared (the records compared: under
                 partial only those the candidate wrote, which are all
                 `agreeing` counts), mismatches, min_lre, first_divergence
                 (None or a dict), value_source (the code the changed
                 switch value comes from, "" none), identical (the other
                 variants whose run is the same on this vector and what
                 tells them apart, "" none)
    .preset      the preset of the best match; .change its change ("" none)
    .value_source, .identical   the best match's
    .runs        variants run; .budget_exhausted whether the budget stopped
                 the search; .unchanged the changes whose run equals their
                 base's on this vector (run, not listed)
    .raw         the pflref-diagnosis/1 document
    str(diagnosis) is the summary.
    """

    def __init__(self, raw):
        self.raw = raw
        self.id = raw["id"]
        self.matched = bool(raw["matched"])
        self.summary = raw["summary"]
        self.best = raw["best"]
        top = self.best[0] if self.best else {}
        self.kind = top.get("kind")
        self.preset = top.get("preset")
        self.change = top.get("change", "")
        self.param = top.get("param", "")
        self.value = top.get("value", "")
        self.value_source = top.get("value_source", "")
        self.identical = top.get("identical", "")
        self.runs = raw["runs"]
        self.budget_exhausted = bool(raw["budget_exhausted"])
        self.unchanged = raw.get("unchanged", 0)

    def complete_matches(self):
        """Every complete match kept, best first."""
        return [m for m in self.best if m["complete"]]

    def __bool__(self):
        return self.matched

    def __str__(self):
        return self.summary

    def __repr__(self):
        return "<pflref.Diagnosis %s: %s>" % (self.id, self.summary)


def _declare(lib):
    fn = lib.pflref_golden_diagnose_json_at
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                   ctypes.POINTER(_lib._CCheckOptions), ctypes.c_size_t,
                   ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(_lib._CError)]
    fn.restype = ctypes.c_int
    return fn


def diagnose(vector, result, precision="fp64", partial=False, budget=0):
    """Which known variant of the vector's algorithm the candidate's result
    computes.  vector: a Vector or a path; result: a Recorder, a
    pflref-result/1 dict, JSON text or a path; budget: most runs (0: the
    library's default, 200).  Raises pflref.InvalidInput for a malformed
    vector or candidate (.where prefixed "expected:" or "candidate:")."""
    vector = as_vector(vector)
    if precision not in _lib.PRECISIONS:
        raise ValueError("precision: %r is not one of %s"
                         % (precision, ", ".join(_lib.PRECISIONS)))
    if not isinstance(budget, int) or budget < 0:
        raise ValueError("budget: %r is not a count of runs" % (budget,))
    text, path, _outcome = _candidate(result)
    exp, cand = _lib._encode(vector.text), _lib._encode(text)
    opt = _lib._CCheckOptions(precision=_lib.PRECISIONS[precision],
                              resync=0, partial=int(partial), same_id=1)
    out, err = ctypes.c_void_p(), _lib._CError()
    status = _declare(_lib.library())(
        exp, len(exp), _lib._dir(vector.folder), cand, len(cand),
        _lib._dir(os.path.dirname(path) if path else None),
        ctypes.byref(opt), budget, ctypes.byref(out), ctypes.byref(err))
    if status != _lib.OK:
        _lib._raise(status, err)
    return Diagnosis(json.loads(_lib._take(out)))
