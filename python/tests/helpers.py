# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the tests: the golden vectors read with plain json (not the
package), and the shipped NumPy candidates run through a Recorder."""
import functools
import glob
import json
import os
import sys

import numpy as np

from conftest import EXAMPLES, GOLDEN

if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)
import pfl_numpy  # noqa: E402  (docs/examples/pfl_numpy.py)


@functools.lru_cache(maxsize=None)
def golden_files():
    """Every golden vector under golden/, found with glob and json (read
    once; the callers do not modify the documents)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(GOLDEN, "**", "*.json"),
                                 recursive=True)):
        with open(path) as f:
            doc = json.load(f)
        if isinstance(doc, dict) and doc.get("format") == "pflref-golden/1":
            out[doc["id"]] = (path, doc)
    return out


def expected_keys(doc):
    """The keys a vector expects, from its JSON: (event, phase, round,
    client, step, name)."""
    keys = []
    for r in doc["expected"].get("trajectory", []):
        keys.append((r["event"], r["phase"], r.get("round", -1),
                     r.get("client", -1), r.get("step", -1), r["name"]))
    fin = doc["expected"].get("final", {})
    if "w" in fin:
        keys.append(("final", "final", -1, -1, -1, "w"))
    for name in ("v", "alpha"):
        for i in range(len(fin.get(name, []))):
            keys.append(("final", "final", -1, i, -1, name))
    return keys


def key_of(r):
    return (r["event"], r["phase"], r.get("round", -1), r.get("client", -1),
            r.get("step", -1), r["name"])


def numpy_candidate(vector, rec, bug=None):
    """Run docs/examples/pfl_numpy.py's algorithm for the vector, logging
    every record into the Recorder rec and its final state with
    rec.final.  Raises pfl_numpy.Unsupported when the example cannot."""
    spec = vector.raw["spec"]
    algo = spec["algorithm"]["name"]
    if algo not in pfl_numpy.ALGORITHMS:
        raise pfl_numpy.Unsupported(algo)
    clients = pfl_numpy.load_clients(spec, vector.folder)
    w0 = np.array(vector.spec.init)             # the package's w⁰

    def log(event, phase, name, value, round=None, client=None, step=None):
        rec.record(event, name, value, round=round, client=client, step=step,
                   phase=phase)
    old = pfl_numpy.BUG
    pfl_numpy.BUG = bug
    try:
        final = pfl_numpy.ALGORITHMS[algo](spec, clients, w0, log)
    finally:
        pfl_numpy.BUG = old
    if "w" in final:
        rec.final("w", final["w"])
    if "v" in final:
        rec.final("v", np.asarray(final["v"]))
    if "alpha" in final:
        rec.final("alpha", np.asarray(final["alpha"]))
    return rec
