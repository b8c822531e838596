# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors and specs as Python objects (docs/python.md, "Vectors"
and "Spec").

A Spec is what the C library read, not a second reading of the JSON: its
arrays come from pflref_spec_describe (ref/oracle/describe.c), so a problem
file, a generated problem or schedule, a random w⁰ and a preset's
hyperparameters arrive exactly as the reference uses them.
"""
import fnmatch
import json
import os

import numpy as np

from . import _lib

GOLDEN_FORMAT = "pflref-golden/1"
DATA_KEYS = ("X", "y", "X_test", "y_test", "X_val", "y_val", "a", "c")


def default_root():
    """The repository's golden/ in a checkout, else the installed
    PREFIX/share/pflref/golden, else the golden/ of the checkout a pip-built
    package came from."""
    root = _lib.checkout_root()
    if root is not None:
        return os.path.join(root, "golden")
    prefix = _lib.install_prefix()
    if prefix is not None and os.path.isdir(os.path.join(prefix, "share", "pflref",
                                                         "golden")):
        return os.path.join(prefix, "share", "pflref", "golden")
    origin = _lib.origin_checkout()
    if origin is not None:
        return os.path.join(origin, "golden")
    if prefix is not None:
        return os.path.join(prefix, "share", "pflref", "golden")
    raise FileNotFoundError("root: no golden vectors beside the package "
                            "(not in a checkout nor under an install "
                            "prefix); pass root=")


class Spec:
    """A spec as the reference reads it.

    .model     dict: kind, loss, d, k, h, activation, bias, hidden_bias, P
               (the fields the model has)
    .layout    dict: block name -> (offset, length) into the flat parameter
               vector, in the documented (PyTorch state_dict) order
    .blocks    the blocks in full: name, offset, rows, cols, personal
    .clients   list of dicts of float64 arrays (X, y, X_test, y_test, X_val,
               y_val as present; a, c for the quadratic model) and "n"
    .init      float64 w⁰, flat (the start the reference uses, whatever
               the spec's init kind)
    .hyper     dict: every hyperparameter the algorithm reads, with the
               preset and defaults applied (None: unset optional)
    .switches  dict: every switch the algorithm reads, resolved likewise
    .schedule  list of rounds {clients, drawn, batches[, selected]}, index
               lists as Python lists (the given form, generated or not)
    .post      per client its post-phase batches, or None
    .cluster_models  IFCA's initial cluster models θ_j⁰ (k x P), or None
    .algorithm, .preset, .name
    .raw       the spec's JSON as a dict; .description the library's
    """

    def __init__(self, raw, description):
        self.raw = raw
        self.description = description
        d = description
        self.name = d.get("name")
        self.algorithm = d["algorithm"]["name"]
        self.preset = d["algorithm"].get("preset")
        self.hyper = dict(d["algorithm"]["hyperparameters"])
        self.switches = dict(d["algorithm"]["switches"])
        self.model = {k: v for k, v in d["model"].items() if k != "blocks"}
        self.blocks = [dict(b) for b in d["model"]["blocks"]]
        self.layout = {b["name"]: (b["offset"], b["rows"] * b["cols"])
                       for b in self.blocks}
        self.clients = [_client_arrays(c) for c in d["clients"]]
        self.init = np.asarray(d["w0"], dtype=np.float64)
        self.schedule = d["schedule"]["rounds"]
        self.post = d["schedule"].get("post")
        cm = d.get("init", {}).get("cluster_models")
        self.cluster_models = None if cm is None else \
            np.asarray(cm, dtype=np.float64)

    @classmethod
    def load(cls, spec, base_dir=None):
        """The Spec of a pflref-spec/1 spec or a golden vector: a dict, JSON
        text, a path or a Vector (base_dir resolves a relative problem
        file; default the file's folder)."""
        from ._check import _spec_text
        text, folder = _spec_text(spec)
        raw = json.loads(text)
        if raw.get("format") == GOLDEN_FORMAT:
            raw = raw["spec"]
        return cls(raw, describe(text, folder if base_dir is None
                                 else base_dir))

    def __repr__(self):
        return "<pflref.Spec %s %s, %d clients, %d rounds>" % (
            self.algorithm, self.model.get("kind"), len(self.clients),
            len(self.schedule))


def _client_arrays(c):
    out = {}
    for key in DATA_KEYS:
        if key in c:
            out[key] = np.asarray(c[key], dtype=np.float64)
    if "X" in out:
        out["n"] = out["X"].shape[0]
    elif "n" in c:
        out["n"] = int(c["n"])
    return out


def describe(text, base_dir):
    """The library's description of a spec or vector text (a dict)."""
    return _lib.text_call("pflref_spec_describe", text, base_dir)


class Vector:
    """A golden vector (format pflref-golden/1).

    .id, .path, .algorithm, .tolerance (dict), .flags (list), .title,
    .provenance, .raw (the parsed JSON), .text (the file's text),
    .spec (a Spec, read by the library on first use).
    """

    def __init__(self, path, text=None, raw=None):
        self.path = os.path.abspath(os.fspath(path))
        if text is None:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        self.text = text
        self.raw = json.loads(text) if raw is None else raw
        if not isinstance(self.raw, dict) or \
                self.raw.get("format") != GOLDEN_FORMAT:
            raise ValueError("%s: format: not a golden vector (%s)"
                             % (self.path, GOLDEN_FORMAT))
        self.id = self.raw["id"]
        self.title = self.raw.get("title")
        self.algorithm = self.raw["spec"]["algorithm"]["name"]
        self.tolerance = self.raw.get("tolerance", {})
        self.flags = list(self.raw.get("flags", []))
        self.provenance = self.raw.get("provenance")
        self._spec = None

    @property
    def folder(self):
        return os.path.dirname(self.path)

    @property
    def spec(self):
        if self._spec is None:
            self._spec = Spec(self.raw["spec"],
                              describe(self.text, self.folder))
        return self._spec

    def __repr__(self):
        return "<pflref.Vector %s>" % self.id


def as_vector(vector):
    """A Vector from a Vector or a path."""
    return vector if isinstance(vector, Vector) else Vector(vector)


def _matches(pattern, vector, rel):
    """A pattern selects a vector when it matches its id or its path
    (relative to the root, or absolute) as a glob, is a prefix of the id
    ending at a "/", or names one of its flags (as pflref check's
    --include)."""
    if pattern.endswith("/") and vector.id.startswith(pattern):
        return True
    return (fnmatch.fnmatchcase(vector.id, pattern)
            or fnmatch.fnmatchcase(rel, pattern)
            or fnmatch.fnmatchcase(vector.path, pattern)
            or pattern in vector.flags)


def _as_list(x):
    if x is None:
        return []
    return [x] if isinstance(x, str) else list(x)


def vectors(root=None, algorithm=None, include=(), exclude=()):
    """Iterate the golden vectors under root (a folder, searched
    recursively in sorted order, or one vector file), selected by
    algorithm (a name or a list of names), include (any pattern selects;
    none given: all) and exclude (any pattern removes).  Files that are not
    golden vectors (problem files, specs, flags.json) are passed over; a
    .json file that is not JSON raises ValueError naming it."""
    root = os.path.abspath(os.fspath(default_root() if root is None else root))
    if not os.path.exists(root):
        raise FileNotFoundError("root: %s does not exist" % root)
    algorithms = set(_as_list(algorithm))
    include, exclude = _as_list(include), _as_list(exclude)
    for path in _walk(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            raw = json.loads(text)
        except ValueError as e:
            raise ValueError("%s: not valid JSON (%s)" % (path, e)) from None
        if not isinstance(raw, dict) or raw.get("format") != GOLDEN_FORMAT:
            continue
        v = Vector(path, text, raw)
        rel = os.path.relpath(path, root if os.path.isdir(root)
                              else os.path.dirname(root))
        if algorithms and v.algorithm not in algorithms:
            continue
        if include and not any(_matches(p, v, rel) for p in include):
            continue
        if any(_matches(p, v, rel) for p in exclude):
            continue
        yield v


def _walk(root):
    if os.path.isfile(root):
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".json"):
                yield os.path.join(folder, name)
