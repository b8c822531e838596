#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Validate pflref JSON documents against the JSON Schemas in this folder.

    docs/schema/validate.py [--all] PATH...     validate files and folders
    docs/schema/validate.py --self-test [--pflref BIN]

Each file is matched to its schema by its "format" field:

    pflref-spec/1     spec.schema.json       a run specification
    pflref-problem/1  problem.schema.json    a problem given as data
    pflref-result/1   result.schema.json     what `pflref run` writes, or a
                                             candidate's result for `pflref check`
    pflref-golden/1   golden.schema.json     a golden vector

Folders are searched recursively for *.json files (hidden names are skipped).
A file whose format is another pflref document (pflref-flags/1,
pflref-check-report/1, ...) is skipped and said so, and so is a JSON file in a
folder without any format; a file that is not valid JSON, or names an unknown
version of the four formats (pflref-golden/2), is invalid.

One line per file:

    ok    golden/fedavg/worked-uniform.json  pflref-golden/1
    FAIL  bad.json  pflref-spec/1  $.model.width: Additional properties are not allowed

The path is where the offending value is (a missing field is named by the
path it should have), written $.a.b[3] ($["fedavg.weights"] for a key that is
not an identifier).  When a document has several errors the shallowest is
shown, and "(+N more)"; --all lists every error on its own line.

JSON is read the way pflref's reader (jansson) reads it: duplicate keys,
NaN/Infinity, reals that overflow a double and integers beyond 64 bits are
errors, and an integer-valued field needs an integer literal (2.0 is refused).

Exit status: 0 every file valid; 1 a file is invalid; 2 usage (a path that
does not exist); 4 no file was validated; 5 the schemas could not be loaded.

--self-test checks the schemas themselves: that they are valid draft 2020-12
schemas, accept every shipped document under golden/, reject a set of planted
bad documents at the expected path, and, when the pflref program is built
(build/rel/pflref, or --pflref BIN), that fresh results validate, that the
recorded schedule replays the run bit for bit, and that pflref's own reader
agrees with the schemas on every planted spec.  It prints every check and
exits 1 on any surprise.

Needs Debian's python3-jsonschema (4.10), hence /usr/bin/python3.
"""

import argparse
import copy
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from jsonschema import Draft202012Validator, RefResolver, validators
    from jsonschema.exceptions import SchemaError, best_match
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("validate.py: the jsonschema module is missing; install "
                     "Debian's python3-jsonschema and run with /usr/bin/python3\n")
    sys.exit(5)

SCHEMA_DIR = Path(__file__).resolve().parent
REPO = SCHEMA_DIR.parents[1]

FORMATS = {
    "pflref-spec/1": "spec.schema.json",
    "pflref-problem/1": "problem.schema.json",
    "pflref-result/1": "result.schema.json",
    "pflref-golden/1": "golden.schema.json",
}

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_NOTHING, EXIT_INTERNAL = 0, 1, 2, 4, 5


# ---- reading JSON as jansson does ---------------------------------------

class JSONError(Exception):
    """A document that pflref's reader would refuse before any schema."""


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise JSONError('not valid JSON: duplicate key "%s"' % key)
        obj[key] = value
    return obj


def _finite_float(text):
    x = float(text)
    if not math.isfinite(x):
        raise JSONError("not valid JSON: the number %s does not fit a double" % text)
    return x


def _int64(text):
    x = int(text)
    if not -2 ** 63 <= x < 2 ** 63:
        raise JSONError("not valid JSON: the integer %s does not fit 64 bits" % text)
    return x


def _no_constant(name):
    raise JSONError("not valid JSON: %s is not a JSON value" % name)


def parse_json(text):
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_float=_finite_float, parse_int=_int64,
                          parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise JSONError("not valid JSON: line %d, column %d: %s"
                        % (e.lineno, e.colno, e.msg)) from None


def load_json(path):
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise JSONError("cannot read: %s" % e.strerror) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise JSONError("not valid JSON: the file is not UTF-8") from None
    return parse_json(text)


# ---- the schemas ----------------------------------------------------------

def _is_integer(checker, instance):
    # jansson's integers: an integer literal, never a real such as 2.0.
    return isinstance(instance, int) and not isinstance(instance, bool)


StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


class Schemas:
    """The four schemas, loaded once; $refs between them resolve by file name."""

    def __init__(self, folder=SCHEMA_DIR):
        self.store = {}
        self.schemas = {}
        for name in sorted(set(FORMATS.values())):
            path = folder / name
            schema = load_json(path)
            Draft202012Validator.check_schema(schema)
            self.store[path.as_uri()] = schema
            self.schemas[name] = (path.as_uri(), schema)
        self.validators = {}

    def validator(self, fmt):
        name = FORMATS[fmt]
        if name not in self.validators:
            uri, schema = self.schemas[name]
            resolver = RefResolver(base_uri=uri, referrer=schema, store=self.store)
            self.validators[name] = StrictValidator(schema, resolver=resolver)
        return self.validators[name]

    def errors(self, fmt, doc):
        """Every error as (path parts, message), shallowest first."""
        found = []
        for err in self.validator(fmt).iter_errors(doc):
            for item in describe(err):
                if item not in found:
                    found.append(item)
        found.sort(key=lambda e: (len(e[0]), format_path(e[0]), e[1]))
        return found


# ---- error messages with paths --------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def format_path(parts):
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        elif _IDENT.match(p):
            out += "." + p
        else:
            out += "[%s]" % json.dumps(p)
    return out


def _short(value, limit=60):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _json_type(value):
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a real number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


def _extra_keys(instance, schema):
    props = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return sorted(k for k in instance
                  if k not in props and not any(p.search(k) for p in patterns))


def describe(err):
    """Turn one jsonschema error into [(path parts, message)]."""
    path = list(err.absolute_path)
    v = err.validator
    inst = err.instance
    val = err.validator_value
    if "propertyNames" in err.absolute_schema_path:
        # A key outside a list of names.  The schemas describe a list that
        # depends on another field (the keys an algorithm takes) by saying
        # which list applies.
        note = err.schema.get("description") if isinstance(err.schema, dict) else None
        if note:
            return [(path + [inst], "%s does not apply here (%s)" % (_short(inst), note))]
        return [(path + [inst], "unknown field %s" % _short(inst))]
    if err.schema is False or v is None:
        return [(path, "not allowed here")]
    if v == "additionalProperties" and isinstance(inst, dict):
        return [(path + [k], "Additional properties are not allowed")
                for k in _extra_keys(inst, err.schema)]
    if v == "required" and isinstance(inst, dict):
        return [(path + [k], "required field is missing")
                for k in val if k not in inst]
    if v == "dependentRequired" and isinstance(inst, dict):
        return [(path + [dep], "required field is missing (%s is given)" % key)
                for key, deps in val.items() if key in inst
                for dep in deps if dep not in inst]
    if v == "type":
        want = val if isinstance(val, list) else [val]
        return [(path, "expected %s, found %s" % (" or ".join(want), _json_type(inst)))]
    if v == "enum":
        return [(path, "unknown value %s (known: %s)"
                 % (_short(inst), ", ".join(str(x) for x in val)))]
    if v == "const":
        return [(path, "expected %s, found %s" % (_short(val), _short(inst)))]
    if v in ("oneOf", "anyOf"):
        keys = [b["required"][0] for b in val
                if isinstance(b, dict) and list(b) == ["required"] and len(b["required"]) == 1]
        if len(keys) == len(val):
            given = [k for k in keys if isinstance(inst, dict) and k in inst]
            if v == "anyOf":
                return [(path, "give at least one of %s" % ", ".join(keys))]
            return [(path, "give exactly one of %s (%d given)" % (", ".join(keys), len(given)))]
        if err.context:
            return describe(best_match(err.context))
        return [(path, "matches none of the allowed forms")]
    if v == "minItems":
        return [(path, "the array has %d entries, at least %d needed" % (len(inst), val))]
    if v == "maxItems":
        return [(path, "the array has %d entries, at most %d allowed" % (len(inst), val))]
    if v == "uniqueItems":
        return [(path, "the entries must be distinct")]
    if v == "minProperties":
        return [(path, "at least %d field%s needed" % (val, "" if val == 1 else "s"))]
    if v == "maxProperties":
        return [(path, "at most %d fields allowed" % val)]
    if v == "minLength":
        return [(path, "must not be empty" if val == 1 else err.message)]
    if v == "pattern":
        return [(path, "%s does not match %s" % (_short(inst), val))]
    if v == "multipleOf" and val == 1:
        return [(path, "%s is not an integer" % _short(inst))]
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        rel = {"minimum": ">=", "exclusiveMinimum": ">",
               "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return [(path, "%s must be %s %s" % (_short(inst), rel, val))]
    message = err.message
    return [(path, message if len(message) <= 160 else message[:157] + "...")]


# ---- validating files -----------------------------------------------------

class Outcome:
    def __init__(self, status, fmt="", errors=(), note=""):
        self.status = status      # "ok", "FAIL" or "skip"
        self.fmt = fmt
        self.errors = list(errors)
        self.note = note


FAMILIES = {f.rsplit("/", 1)[0] for f in FORMATS}


def check_document(schemas, doc, explicit=True):
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        if isinstance(fmt, str) and fmt.rsplit("/", 1)[0] in FAMILIES:
            return Outcome("FAIL", errors=[(["format"], "unknown version %s (known: %s)"
                                            % (_short(fmt), known))])
        if isinstance(fmt, str) and fmt.startswith("pflref-"):
            # Other pflref documents (the flag registry, canonical-form test
            # cases, check reports) have no schema here.
            return Outcome("skip", note="%s has no schema here" % fmt)
        if not explicit:
            return Outcome("skip", note="no pflref format field")
        if not isinstance(doc, dict):
            return Outcome("FAIL", errors=[([], "expected an object, found %s" % _json_type(doc))])
        if fmt is None:
            return Outcome("FAIL", errors=[(["format"], "required field is missing (known formats: %s)" % known)])
        return Outcome("FAIL", errors=[(["format"], "unknown format %s (known: %s)" % (_short(fmt), known))])
    errors = schemas.errors(fmt, doc)
    return Outcome("FAIL" if errors else "ok", fmt, errors)


def check_file(schemas, path, explicit=True):
    try:
        doc = load_json(path)
    except JSONError as e:
        return Outcome("FAIL", errors=[([], str(e))])
    return check_document(schemas, doc, explicit)


def print_outcome(path, out, show_all):
    if out.status == "skip":
        print("skip  %s  (%s)" % (path, out.note))
        return
    if out.status == "ok":
        print("ok    %s  %s" % (path, out.fmt))
        return
    first_path, first_msg = out.errors[0]
    more = "" if show_all or len(out.errors) == 1 else "  (+%d more)" % (len(out.errors) - 1)
    head = "FAIL  %s" % path + ("  %s" % out.fmt if out.fmt else "")
    print("%s  %s: %s%s" % (head, format_path(first_path), first_msg, more))
    if show_all:
        for p, msg in out.errors[1:]:
            print("        %s: %s" % (format_path(p), msg))


def json_files(folder):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".json") and not name.startswith("."):
                yield os.path.join(dirpath, name)


def run_validate(paths, show_all):
    try:
        schemas = Schemas()
    except (JSONError, SchemaError) as e:
        sys.stderr.write("validate.py: cannot load the schemas: %s\n" % e)
        return EXIT_INTERNAL
    tally = {"ok": 0, "FAIL": 0, "skip": 0}
    missing = 0
    for arg in paths:
        if os.path.isdir(arg):
            todo = [(f, False) for f in json_files(arg)]
        elif os.path.exists(arg):
            todo = [(arg, True)]
        else:
            sys.stderr.write("validate.py: %s: no such file or folder\n" % arg)
            missing += 1
            continue
        for f, explicit in todo:
            out = check_file(schemas, f, explicit)
            tally[out.status] += 1
            print_outcome(f, out, show_all)
    print("validate: %d valid, %d invalid, %d skipped"
          % (tally["ok"], tally["FAIL"], tally["skip"]))
    if missing:
        return EXIT_USAGE
    if tally["FAIL"]:
        return EXIT_INVALID
    if tally["ok"] == 0:
        sys.stderr.write("validate.py: no file was validated\n")
        return EXIT_NOTHING
    return EXIT_OK


# ---- self-test --------------------------------------------------------------

# Small documents of every form.  Each good spec is also run by pflref when
# it is built; none takes more than a few milliseconds.

def _good_specs():
    quad = {
        "format": "pflref-spec/1",
        "name": "quadratic, given schedule without drawn",
        "model": {"kind": "quadratic", "d": 2},
        "problem": {"clients": [{"a": [1.0, 2.5], "c": [4.0, -1.0], "n": 3},
                                {"a": [0.5, 1.0], "c": [0.0, 2.0]}]},
        "init": {"kind": "given", "w": [0.75, 0.25]},
        "algorithm": {"name": "fedavg", "hyperparameters": {"eta": 0.5},
                      "switches": {"fedavg.weights": "uniform"}},
        "schedule": {"kind": "given", "rounds": [
            {"clients": [0, 1], "batches": [[[0], [0]], [[0]]]},
            {"clients": [1], "drawn": [1], "batches": [[]]}]},
        "output": {"trajectory": "step"},
    }
    linear = {
        "format": "pflref-spec/1",
        "description": "linear with bias and test data, every generate option",
        "model": {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True},
        "problem": {"clients": [
            {"X": [[1, 2], [3, 4], [0.5, -1]], "y": [1, 2, 0.25],
             "X_test": [[1, 1]], "y_test": [2]},
            {"X": [[0.5, 1]], "y": [3], "X_test": [[2, 0]], "y_test": [1]},
            {"X": [[1, 0], [0, 1]], "y": [-1, 1], "X_test": [[0, 0]], "y_test": [0]}]},
        "split": {"personal": ["b"]},
        "init": {"kind": "uniform", "seed": 3, "scale": 0.5},
        "algorithm": {"name": "fedavg", "preset": "paper",
                      "hyperparameters": {"eta": 0.05},
                      "switches": {"fedavg.weights": "all_keep_old"}},
        "schedule": {"kind": "generate", "rounds": 3, "clients_per_round": 2,
                     "sampler": "numpy_legacy", "client_seed": 11,
                     "batches": "reshuffle", "batch_seed": 5,
                     "local": {"epochs": 2, "batch_size": 2}},
        "output": {"trajectory": "round"},
    }
    tilt = {
        "format": "pflref-spec/1",
        "model": {"kind": "linear", "d": 3, "loss": "squared"},
        "problem": {"generator": {"kind": "tilt", "K": 3, "n_train": 5, "n_test": 4,
                                  "common_sd": 2.0, "tilt": 1.5, "noise_sd": 1.0,
                                  "seed": 11}},
        "init": {"kind": "gaussian", "seed": 2, "sd": 0.1},
        "algorithm": {"name": "local", "hyperparameters": {"eta": 0.03}},
        "schedule": {"kind": "generate", "rounds": 1, "local": {"steps": 20}},
        "output": {"trajectory": "none"},
    }
    mlp = {
        "format": "pflref-spec/1",
        "model": {"kind": "mlp", "d": 3, "k": 3, "h": 2},
        "problem": {"generator": {"kind": "dirichlet", "K": 3, "alpha": 0.5,
                                  "n_min": 2, "n_max": 5, "n_test": 2,
                                  "shift": 2.0, "seed": 5}},
        "split": {"personal": ["head"]},
        "init": {"kind": "gaussian", "seed": 3, "sd": 0.1},
        "algorithm": {"name": "finetune",
                      "hyperparameters": {"eta": 0.1, "eta_ft": 0.1, "mu_ft": 0.5},
                      "switches": {"finetune.scope": "personal"}},
        "schedule": {"kind": "generate", "rounds": 2, "clients_per_round": 2,
                     "sampler": "numpy_legacy", "client_seed": 9,
                     "batches": "reshuffle", "batch_seed": 4,
                     "local": {"epochs": 1, "batch_size": 2},
                     "post": {"steps": 3, "batch_size": 1}},
        "output": {"trajectory": "step"},
    }
    softmax = {
        "format": "pflref-spec/1",
        "name": "softmax fine-tuning only (no rounds)",
        "model": {"kind": "softmax", "d": 2, "k": 2, "bias": False,
                  "loss": "cross_entropy"},
        "problem": {"clients": [{"X": [[1, 0], [0, 1]], "y": [0, 1.0]},
                                {"X": [[1, 1]], "y": [1]}]},
        "algorithm": {"name": "finetune", "hyperparameters": {"eta": 0.1, "eta_ft": 0.2}},
        "schedule": {"kind": "given", "rounds": [],
                     "post": [[[0, 1], [1]], [[0]]]},
    }
    return [("quadratic inline, given schedule", quad),
            ("linear inline with test data, all generate options", linear),
            ("tilt generator, local", tilt),
            ("dirichlet generator, mlp, finetune", mlp),
            ("softmax inline, finetune with post only", softmax)] + _good_specs_pfl(linear, mlp) \
        + _good_specs_split(linear) + _good_specs_cluster(linear)


def _good_specs_cluster(linear):
    """CFL and IFCA on the linear problem: every client in every round (CFL
    needs it), IFCA with drawn initial cluster models (replayed from the
    result's theta0) and with given ones."""
    every = {"kind": "generate", "rounds": 3, "batches": "reshuffle", "batch_seed": 5,
             "local": {"epochs": 1, "batch_size": 2}}
    cfl = _set(linear, ["algorithm"], {
        "name": "cfl", "hyperparameters": {"eta": 0.05, "eps1": 10, "eps2": 0,
                                           "gamma_max": 0},
        "switches": {"cfl.bipartition": "complete_linkage",
                     "cfl.cluster_weights": "samples"}})
    cfl = _set(cfl, ["schedule"], every)
    cfl.pop("split")
    ifca = _set(cfl, ["algorithm"], {
        "name": "ifca", "hyperparameters": {"gamma": 0.05, "ifca.k": 2,
                                            "ifca.init_shift": 0.5, "ifca.init_sd": 0.25,
                                            "ifca.init_seed": 7},
        "switches": {"ifca.mode": "model"}})
    ifca_given = _set(ifca, ["algorithm", "hyperparameters"], {"gamma": 0.05, "ifca.k": 2})
    ifca_given = _set(ifca_given, ["init"], {"kind": "zeros",
                                             "cluster_models": [[0.5, -1.0, 0.0], [2.0, 1.0, 0.25]]})
    return [("cfl on the linear problem, notebook switches", cfl),
            ("ifca, drawn initial cluster models", ifca),
            ("ifca, given initial cluster models", ifca_given)]


def _good_specs_pfl(linear, mlp):
    """The personalised algorithms prox, pfedme and ditto, with each preset
    and a switch of every kind."""
    seed003 = {
        "format": "pflref-spec/1",
        "name": "seed 003's inner loop: 2.3, 2.48, exact prox 2.75",
        "model": {"kind": "quadratic", "d": 1},
        "problem": {"clients": [{"a": [1.0], "c": [5.0]}]},
        "init": {"kind": "given", "w": [2.0]},
        "algorithm": {"name": "prox", "preset": "paper",
                      "hyperparameters": {"lambda": 3, "eta_p": 0.1, "K": 2}},
        "schedule": {"kind": "generate", "rounds": 1, "local": {"steps": 1}},
        "output": {"trajectory": "step"},
    }
    prox_linear = _set(linear, ["algorithm"], {
        "name": "prox", "hyperparameters": {"lambda": 2.5, "eta_p": 0.05, "K": 3,
                                            "pfedme.mu": 0.001},
        "switches": {"pfedme.theta_start": "warm"}})
    prox_linear["name"] = "prox on a linear model: theta_hat by conjugate gradients"
    pfedme_quad = {
        "format": "pflref-spec/1",
        "name": "pFedMe, notes 2(g), S = 1 given as selected",
        "model": {"kind": "quadratic", "d": 1},
        "problem": {"clients": [{"a": [1.0], "c": [4.0]}, {"a": [1.0], "c": [-2.0]}]},
        "algorithm": {"name": "pfedme",
                      "hyperparameters": {"eta": 0.5, "lambda": 1, "eta_p": 0.25, "K": 2,
                                          "beta": 1.0, "pfedme.mu": 0},
                      "switches": {"pfedme.theta_start": "reset", "pfedme.weights": "uniform",
                                   "pfedme.train": "all", "pfedme.personal_eval": "theta"}},
        "schedule": {"kind": "given", "rounds": [
            {"clients": [0, 1], "selected": [0], "batches": [[[0], [0]], [[0], [0]]]},
            {"clients": [0, 1], "selected": [1], "drawn": [1],
             "batches": [[[0], [0]], [[0], [0]]]}]},
        "output": {"trajectory": "step"},
    }
    pfedme_official = _set(linear, ["algorithm"], {
        "name": "pfedme", "preset": "official",
        "hyperparameters": {"eta": 0.05, "lambda": 15, "eta_p": 0.01, "K": 2, "beta": 2.0,
                            "pfedme.mu": 0},
        "switches": {"pfedme.personal_eval": "theta"}})
    pfedme_official["name"] = "pFedMe, official preset with two settings overridden; all train, 2 of 3 sampled"
    pfedme_pfllib = _set(mlp, ["algorithm"], {
        "name": "pfedme", "preset": "pfllib",
        "hyperparameters": {"eta": 0.1, "lambda": 5, "eta_p": 0.05, "K": 2}})
    del pfedme_pfllib["schedule"]["post"]
    ditto_quad = {
        "format": "pflref-spec/1",
        "name": "Ditto, notes 3(g), partial participation",
        "model": {"kind": "quadratic", "d": 1},
        "problem": {"clients": [{"a": [1.0], "c": [4.0]}, {"a": [1.0], "c": [-2.0]}]},
        "algorithm": {"name": "ditto", "preset": "official",
                      "hyperparameters": {"eta": 0.5, "lambda": 1}},
        "schedule": {"kind": "given", "rounds": [
            {"clients": [0, 1], "batches": [[[0], [0]], [[0], [0]]]},
            {"clients": [0], "batches": [[[0], [0]]]}]},
        "output": {"trajectory": "step"},
    }
    ditto_pfllib = _set(linear, ["algorithm"], {
        "name": "ditto", "preset": "pfllib", "hyperparameters": {"eta": 0.05, "lambda": 0.5}})
    # the preset's personal pass draws its own batches (PFLlib's -pls)
    ditto_pfllib = _set(ditto_pfllib, ["schedule", "personal"],
                        {"epochs": 2, "batch_size": 1})
    ditto_switches = _set(mlp, ["algorithm"], {
        "name": "ditto", "hyperparameters": {"eta": 0.1, "lambda": 0.1},
        "switches": {"ditto.order": "interleaved_shared_batch", "ditto.prox": "norm",
                     "ditto.prox_ref": "moving", "ditto.weights": "uniform"}})
    del ditto_switches["schedule"]["post"]
    return [("prox: seed 003's worked example", seed003),
            ("prox: linear model, warm start, mu", prox_linear),
            ("pfedme: quadratic, given schedule with selected", pfedme_quad),
            ("pfedme: official preset overridden, linear, generated", pfedme_official),
            ("pfedme: pfllib preset, mlp, sampled clients train", pfedme_pfllib),
            ("ditto: official preset, quadratic, given schedule", ditto_quad),
            ("ditto: pfllib preset, linear, generated", ditto_pfllib),
            ("ditto: norm prox, moving reference, uniform weights, mlp", ditto_switches)]


def _good_specs_split(linear):
    """fedalt, fedsim and pflego (full parameter vectors, a shared u and a
    personal v_i), with each preset and every switch."""
    mlp = {
        "format": "pflref-spec/1",
        "model": {"kind": "mlp", "d": 2, "k": 2, "h": 2},
        "problem": {"clients": [
            {"X": [[1.0, 0.5], [0.0, 1.0], [-1.0, 2.0]], "y": [0, 1, 1],
             "X_test": [[0.5, 0.5]], "y_test": [1]},
            {"X": [[2.0, -1.0], [1.0, 1.0]], "y": [0, 0], "X_test": [[1.0, 0.0]], "y_test": [0]},
            {"X": [[0.25, 0.75]], "y": [1], "X_test": [[0.0, 0.0]], "y_test": [1]}]},
        "init": {"kind": "gaussian", "seed": 4, "sd": 0.2},
        "schedule": {"kind": "generate", "rounds": 2, "clients_per_round": 2,
                     "client_seed": 3, "local": {"steps": 3}},
        "output": {"trajectory": "step"},
    }
    fedalt_linear = _set(linear, ["algorithm"], {
        "name": "fedalt", "hyperparameters": {"gamma_u": 0.05, "gamma_v": 0.1, "tau_v": 1,
                                              "eta_ft": 0.05},
        "switches": {"pfl.state": "stateless", "pfl.weights": "batches",
                     "pfl.finetune": "full"}})
    fedalt_linear["schedule"]["post"] = {"steps": 2, "batch_size": 1}
    fedrep = _set(mlp, ["algorithm"], {
        "name": "fedalt", "preset": "fedrep",
        "hyperparameters": {"gamma_u": 0.1, "gamma_v": 0.1, "tau_v": 2}})
    fedsim_given = {
        "format": "pflref-spec/1",
        "name": "FedSim, given schedule with a post phase, uniform weights",
        "model": {"kind": "linear", "d": 1, "loss": "squared", "bias": True},
        "problem": {"clients": [{"X": [[1.0], [2.0]], "y": [1.0, 3.0]},
                                {"X": [[-1.0]], "y": [0.5]}]},
        "split": {"personal": ["b"]},
        "algorithm": {"name": "fedsim", "preset": "paper",
                      "hyperparameters": {"gamma_u": 0.1, "gamma_v": 0.2, "eta_ft": 0.1},
                      "switches": {"pfl.state": "stateful", "pfl.weights": "uniform",
                                   "pfl.finetune": "personal"}},
        "schedule": {"kind": "given", "rounds": [
            {"clients": [0, 1], "batches": [[[0, 1], [0]], [[0]]]}],
            "post": [[[1]], [[0], [0]]]},
        "output": {"trajectory": "step"},
    }
    fedper = _set(mlp, ["algorithm"], {
        "name": "fedsim", "preset": "fedper", "hyperparameters": {"gamma_u": 0.1, "gamma_v": 0.1}})
    lg_fedavg = _set(mlp, ["algorithm"], {
        "name": "fedsim", "preset": "lg_fedavg",
        "hyperparameters": {"gamma_u": 0.1, "gamma_v": 0.05}})
    fedbabu = _set(mlp, ["algorithm"], {
        "name": "fedsim", "preset": "fedbabu", "hyperparameters": {"gamma_u": 0.1, "eta_ft": 0.1}})
    fedbabu["schedule"]["post"] = {"epochs": 1, "batch_size": 2}
    pflego = _set(mlp, ["algorithm"], {
        "name": "pflego", "hyperparameters": {"rho": 0.05, "pflego.beta": 0.1}})
    pflego["split"] = {"personal": ["head"]}
    pflego_code = _set(pflego, ["algorithm", "switches"], {
        "pflego.head_step": "exact_alpha", "pflego.theta_weights": "sampled_normalised",
        "pflego.server": "adam"})
    pflego_code["algorithm"]["preset"] = "paper"
    return [("fedalt: linear, stateless, batch weights, full fine-tuning", fedalt_linear),
            ("fedalt: fedrep preset, mlp", fedrep),
            ("fedsim: linear, given schedule with a post phase", fedsim_given),
            ("fedsim: fedper preset, mlp", fedper),
            ("fedsim: lg_fedavg preset, mlp", lg_fedavg),
            ("fedsim: fedbabu preset without gamma_v, post phase", fedbabu),
            ("pflego: mlp, head personal, full batches", pflego),
            ("pflego: exact_alpha, sampled_normalised, adam", pflego_code)]


def _good_specs_mlp():
    """mlp specs with the newer model fields (activation, hidden_bias, a
    regression head), checked against the schema only."""
    base = {
        "format": "pflref-spec/1",
        "problem": {"clients": [{"X": [[1.0], [2.0]], "y": [2.0, 3.0]},
                                {"X": [[-0.5]], "y": [1.25]}]},
        "algorithm": {"name": "fedavg", "hyperparameters": {"eta": 0.1}},
        "schedule": {"kind": "generate", "rounds": 1, "local": {"steps": 1}},
    }
    product = _set(base, ["model"], {"kind": "mlp", "d": 1, "h": 1, "loss": "half_squared",
                                     "activation": "identity", "bias": False})
    k_one = _set(base, ["model"], {"kind": "mlp", "d": 1, "h": 2, "k": 1, "loss": "squared",
                                   "bias": False, "hidden_bias": True})
    linear_body = _set(base, ["model"], {"kind": "mlp", "d": 1, "k": 2, "h": 1,
                                         "activation": "identity", "hidden_bias": False})
    linear_body["problem"]["clients"] = [{"X": [[2.0], [-1.0]], "y": [1, 0]},
                                         {"X": [[0.5]], "y": [1]}]
    return [("mlp y = w*(theta*x): identity, no biases, half_squared, k omitted", product),
            ("mlp squared loss with k = 1 and only the hidden bias", k_one),
            ("mlp linear body, output bias only, cross-entropy", linear_body)]


def _bad_documents_mlp(spec):
    """Planted specs with the mlp's activation and hidden_bias (their paths
    are the same whether or not pflref's reader knows these fields)."""
    mlp = dict(_good_specs())["dirichlet generator, mlp, finetune"]
    return [
        ("spec: mlp activation outside the enum", _set(mlp, ["model", "activation"], "tanh"),
         "$.model.activation", "spec", True),
        ("spec: hidden_bias on a linear model", _set(spec, ["model", "hidden_bias"], True),
         "$.model.hidden_bias", "spec", True),
    ]


PROBLEM_FILE = {
    "format": "pflref-problem/1",
    "description": "two clients for the self-test",
    "provenance": {"kind": "hand", "source": "validate.py --self-test"},
    "clients": [{"X": [[1.0], [2.0]], "y": [1.0, 3.0]},
                {"X": [[1.0]], "y": [-2.0]}],
}

# `pflref run` on a two-client quadratic spec of the local algorithm (the
# base of the planted result documents; it needs no built pflref).
RESULT_EXAMPLE = r"""{"format":"pflref-result/1","name":"local, quadratic",
"algorithm":{"name":"local","title":"Local only (each client trains alone; no communication)",
"preset":"paper","hyperparameters":{"eta":0.5},"switches":{}},
"model":{"kind":"quadratic","loss":"quadratic","d":1,"bias":false,"P":1,
"blocks":[{"name":"w","offset":0,"rows":1,"cols":1,"personal":false}]},
"problem":{"source":"inline","N":2,"n_train":[1,2],"n_test":[0,0]},
"init":{"kind":"given"},"w0":[0.75],
"schedule":{"kind":"given","rounds":[{"clients":[0,1],"drawn":[0,1],"batches":[[[0]],[[0],[1]]]}]},
"final":{"v":[[2.375],[-1.0]]},
"metrics":{"local":{"per_client":{"train_loss":[1.3203125,0.0]},
"summary":{"train_loss":{"mean":0.66015625,"sd":0.66015625,"worst":1.3203125,"best":0.0,
"p10":0.13203125000000002,"p90":1.18828125,"worst_decile_mean":1.3203125,
"weighted_mean":0.44010416666666669}}}},
"trajectory":[{"event":"client_end","phase":"train","round":0,"client":0,"name":"v","value":[2.375]},
{"event":"client_end","phase":"train","round":0,"client":1,"name":"v","value":[-1.0]}],
"build":{"pflref":"0.1.0","compiler":"gcc 12.2.0","cflags":"-std=c11 -ffp-contract=off -O2 -g",
"blas":"OpenBLAS 0.3.21","blas_threads":1}}"""

# `pflref run` on seed 003's inner-loop spec (algorithm prox): the base of the
# planted results of the personalised algorithms.
PROX_RESULT_EXAMPLE = r"""{"format":"pflref-result/1","name":"seed 003 inner loop",
"algorithm":{"name":"prox","title":"pFedMe's inner loop on its own (Dinh et al., NeurIPS 2020, Alg. 1 l. 7; seed 003)",
"preset":"paper","hyperparameters":{"lambda":3.0,"eta_p":0.10000000000000001,"K":2,"pfedme.mu":0.0},
"switches":{"pfedme.theta_start":"reset"}},
"model":{"kind":"quadratic","loss":"quadratic","d":1,"bias":false,"P":1,
"blocks":[{"name":"w","offset":0,"rows":1,"cols":1,"personal":false}]},
"problem":{"source":"inline","N":1,"n_train":[1],"n_test":[0]},
"init":{"kind":"given"},"w0":[2.0],
"schedule_config":{"kind":"generate","rounds":1,"clients_per_round":1,"sampler":"gsl","client_seed":1,
"batches":"split_once","batch_seed":1,"local":{"steps":1,"batch_size":0}},
"schedule":{"kind":"given","rounds":[{"clients":[0],"drawn":[0],"batches":[[[0]]]}]},
"final":{"w":[2.0],"v":[[2.48]]},
"metrics":{"reference":{"per_client":{"train_loss":[4.5]},
"summary":{"train_loss":{"mean":4.5,"sd":0.0,"worst":4.5,"best":4.5,"p10":4.5,"p90":4.5,
"worst_decile_mean":4.5,"weighted_mean":4.5}}},
"personalized":{"per_client":{"train_loss":[3.1752000000000002]},
"summary":{"train_loss":{"mean":3.1752000000000002,"sd":0.0,"worst":3.1752000000000002,
"best":3.1752000000000002,"p10":3.1752000000000002,"p90":3.1752000000000002,
"worst_decile_mean":3.1752000000000002,"weighted_mean":3.1752000000000002}}}},
"trajectory":[{"event":"client_begin","phase":"train","round":0,"client":0,"step":0,"name":"theta","value":[2.0]},
{"event":"step","phase":"train","round":0,"client":0,"step":1,"name":"theta","value":[2.2999999999999998]},
{"event":"step","phase":"train","round":0,"client":0,"step":2,"name":"theta","value":[2.48]},
{"event":"note","phase":"train","round":0,"client":0,"step":2,"name":"theta_hat","value":[2.75]},
{"event":"client_end","phase":"train","round":0,"client":0,"name":"theta","value":[2.48]}],
"build":{"pflref":"0.1.0","compiler":"gcc 12.2.0","cflags":"-std=c11 -ffp-contract=off -O2 -g",
"blas":"OpenBLAS 0.3.21","blas_threads":1}}"""

FILE_SPEC = {
    "format": "pflref-spec/1",
    "model": {"kind": "linear", "d": 1, "loss": "squared"},
    "problem": {"file": "p.json"},
    "algorithm": {"name": "fedavg", "hyperparameters": {"eta": 0.1}},
    "schedule": {"kind": "generate", "rounds": 2, "local": {"epochs": 1, "batch_size": 1}},
}


def _set(doc, path, value):
    """Copy of doc with the value at path (a list of keys) set, or deleted
    when value is DELETE."""
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


DELETE = object()


def _pg():
    """golden/pflref_golden.py (the generators' module: vector_hashes)."""
    sys.path.insert(0, str(REPO / "golden"))
    sys.dont_write_bytecode = True
    import pflref_golden
    return pflref_golden


def _candidate(golden):
    """A candidate result made of a vector's own expected values."""
    cand = {"format": "pflref-result/1", "id": golden["id"]}
    cand.update(copy.deepcopy(golden["expected"]))
    return cand


def _in_files(golden):
    """golden in the files form (pflref freeze --arrays files), as the
    schema sees it: spec.init.w and expected.final.w as references listed
    in array_files, hashed (the files themselves are not there)."""
    doc = copy.deepcopy(golden)
    files = []
    for where, name in ((["spec", "init"], "spec.init.w"),
                        (["expected", "final"], "final.w")):
        obj = doc
        for k in where:
            obj = obj.setdefault(k, {})
        obj["w"] = "v.arrays/%s.npy" % name
        files.append({"path": obj["w"], "sha256": "0" * 64, "bytes": 152})
    doc["array_files"] = files
    return _pg().with_hash(doc)


def _bad_documents(spec, ft_spec, golden, result, problem):
    """(label, document or raw text, expected path, kind, does pflref's reader
    reject it too: True, False (the schema is stricter on purpose) or None
    (not a document pflref reads))."""
    quad = _good_specs()[0][1]
    # Planted changes are hashed again before pflref reads them (see the
    # self-test), so the reader meets the change, not a stale hash.
    unhashed = golden
    return [
        ("spec: unknown top-level field", _set(spec, ["extra"], 1),
         "$.extra", "spec", True),
        ("spec: unknown field deep inside", _set(spec, ["schedule", "local", "width"], 3),
         "$.schedule.local.width", "spec", True),
        ("spec: wrong type (real literal for an integer)", _set(spec, ["model", "d"], 12.0),
         "$.model.d", "spec", True),
        ("spec: wrong type (string for a number)",
         _set(spec, ["algorithm", "hyperparameters", "eta"], "0.03"),
         "$.algorithm.hyperparameters.eta", "spec", True),
        ("spec: bad enum (switch value)",
         _set(spec, ["algorithm", "switches"], {"fedavg.weights": "median"}),
         '$.algorithm.switches["fedavg.weights"]', "spec", True),
        ("spec: bad enum (trajectory level)", _set(spec, ["output", "trajectory"], "all"),
         "$.output.trajectory", "spec", True),
        ("spec: bad enum (sampler)", _set(spec, ["schedule", "sampler"], "torch"),
         "$.schedule.sampler", "spec", True),
        ("spec: unknown algorithm", _set(spec, ["algorithm", "name"], "fedunknown"),
         "$.algorithm.name", "spec", True),
        ("spec: hyperparameter of another algorithm",
         _set(spec, ["algorithm", "hyperparameters", "eta_ft"], 0.1),
         "$.algorithm.hyperparameters.eta_ft", "spec", True),
        ("spec: non-positive step size", _set(spec, ["algorithm", "hyperparameters", "eta"], 0),
         "$.algorithm.hyperparameters.eta", "spec", True),
        ("spec: two problem forms at once", _set(spec, ["problem", "file"], "p.json"),
         "$.problem", "spec", True),
        ("spec: linear model without loss", _set(spec, ["model", "loss"], DELETE),
         "$.model.loss", "spec", True),
        ("spec: classes on a linear model", _set(spec, ["model", "k"], 3),
         "$.model.k", "spec", True),
        ("spec: init kind zeros with a seed", _set(spec, ["init"], {"kind": "zeros", "seed": 3}),
         "$.init.seed", "spec", True),
        ("spec: fedavg with a post phase",
         _set(spec, ["schedule", "post"], {"steps": 1}), "$.schedule.post", "spec", True),
        ("spec: both epochs and steps",
         _set(spec, ["schedule", "local", "epochs"], 1), "$.schedule.local", "spec", True),
        ("spec: seed 0", _set(spec, ["schedule", "client_seed"], 0),
         "$.schedule.client_seed", "spec", True),
        ("spec: finetune without a post phase", _set(ft_spec, ["schedule", "post"], DELETE),
         "$.schedule.post", "spec", True),
        ("spec: quadratic model with a data client",
         _set(quad, ["problem", "clients", 0], {"X": [[1.0, 2.0]], "y": [1.0]}),
         "$.problem.clients[0].X", "spec", True),
        ("spec: empty minibatch in a given schedule",
         _set(quad, ["schedule", "rounds", 0, "batches", 0, 0], []),
         "$.schedule.rounds[0].batches[0][0]", "spec", True),
        ("spec: negative sample index",
         _set(quad, ["schedule", "rounds", 0, "batches", 0, 0], [-1]),
         "$.schedule.rounds[0].batches[0][0][0]", "spec", True),
        ("spec: tilt generator with a dirichlet field",
         _set(spec, ["problem"], {"generator": {"kind": "tilt", "alpha": 1}}),
         "$.problem.generator.alpha", "spec", True),
        ("problem file: unknown field in a client",
         _set(problem, ["clients", 0, "z"], 1), "$.clients[0].z", "problem", True),
        ("problem file: X_test without y_test",
         _set(problem, ["clients", 0, "X_test"], [[1.0]]), "$.clients[0].y_test", "problem", True),
        ("golden: unknown field deep inside",
         _set(golden, ["expected", "trajectory", 0, "weight"], 1.0),
         "$.expected.trajectory[0].weight", "golden", True),
        ("golden: unknown field in the embedded spec",
         _set(unhashed, ["spec", "model", "width"], 3), "$.spec.model.width", "golden", True),
        ("golden: wrong type (tolerance as a string)",
         _set(golden, ["tolerance", "atol"], "1e-15"), "$.tolerance.atol", "golden", True),
        ("golden: empty tolerance basis", _set(golden, ["tolerance", "basis"], ""),
         "$.tolerance.basis", "golden", True),
        ("golden: bad enum (provenance kind)", _set(golden, ["provenance", "kind"], "guess"),
         "$.provenance.kind", "golden", True),
        ("golden: no provenance", _set(golden, ["provenance"], DELETE),
         "$.provenance", "golden", True),
        ("golden: tolerance above the fp64 ceiling, not argued for",
         _set(golden, ["tolerance", "atol"], 1e-6), "$.tolerance.atol", "golden", True),
        ("golden: relative tolerance of 1",
         _set(golden, ["tolerance", "rtol"], 1.0), "$.tolerance.rtol", "golden", True),
        ("golden: a schedule generated by pflref's own sampler (randomness must "
         "be data; only numpy_legacy's draws are numpy's documented ones)",
         _set(unhashed, ["spec", "schedule"], {"kind": "generate", "rounds": 1,
                                             "local": {"steps": 1}}),
         "$.spec.schedule.sampler", "golden", False),
        ("result: unknown top-level field", _set(result, ["extra"], True),
         "$.extra", "result", None),
        ("result: unknown field deep inside",
         _set(result, ["metrics", "local", "summary", "train_loss", "median"], 1.0),
         "$.metrics.local.summary.train_loss.median", "result", None),
        ("result: bad enum (event)", _set(result, ["trajectory"], [
            {"event": "begin", "phase": "train", "round": 0, "name": "w", "value": [0.0]}]),
         "$.trajectory[0].event", "result", None),
        ("result: wrong type (blas_threads)", _set(result, ["build", "blas_threads"], "1"),
         "$.build.blas_threads", "result", None),
        ("result: reference result missing a field", _set(result, ["metrics"], DELETE),
         "$.metrics", "result", None),
        ("candidate: unknown top-level field", _set(_candidate(golden), ["extra"], 1),
         "$.extra", "candidate", True),
        ("candidate: nothing to compare",
         {"format": "pflref-result/1", "id": golden["id"]}, "$", "candidate", False),
        ("candidate: bad outcome class",
         _set(_candidate(golden), ["outcome"], {"class": "crashed"}),
         "$.outcome.class", "candidate", True),
        ("candidate: unknown event",
         _set(_candidate(golden), ["trajectory", 0, "event"], "begin"),
         "$.trajectory[0].event", "candidate", True),
        ("golden: malformed content hash", _set(golden, ["hash"], "sha1:abc"),
         "$.hash", "golden", True),
        # arrays in files (docs/formats.md, "Arrays in files", "Golden
        # vectors in files"): a vector's references need its manifest; a
        # candidate's ranges and manifest are checked
        ("golden: a file reference in its spec's init, without array_files",
         _set(golden, ["spec", "init", "w"], "w.npy"), "$.spec.init.w", "golden", True),
        ("golden: a range in its expectation, without array_files",
         _set(golden, ["expected", "trajectory", 0, "value"], {"offset": 0, "count": 1}),
         "$.expected.trajectory[0].value", "golden", True),
        ("golden: array_files without its digest in hash",
         _set(_in_files(golden), ["hash", "array_files"], DELETE),
         "$.hash.array_files", "golden", None),
        ("golden: trajectory_values without array_files",
         _set(golden, ["trajectory_values"], "v.arrays/trajectory.npy"),
         "$.array_files", "golden", None),
        ("candidate: a range of count 0",
         _set(_candidate(golden), ["trajectory", 0, "value"], {"offset": 0, "count": 0}),
         "$.trajectory[0].value", "candidate", True),
        ("candidate: a manifest entry without a SHA-256",
         _set(_candidate(golden), ["array_files"],
              [{"path": "x.npy", "sha256": "ABC", "bytes": 1}]),
         "$.array_files[0].sha256", "candidate", True),
    ] + _bad_documents_pfl(spec) + _bad_documents_mlp(spec) + _bad_documents_split(spec)


def _check_train_metrics(t, schemas, results):
    """The training set's metrics by model kind, on the first fresh result
    of a classifier (cross_entropy) and of a regression model (squared,
    half_squared): the result has train_accuracy (train_mse) for every
    model it reports; without it, or with the other kind's, a reference
    result is refused at that metric; a candidate (no "build") without it
    is accepted."""
    kinds = (("cross_entropy", "train_accuracy", "train_mse"),
             ("squared", "train_mse", "train_accuracy"),
             ("half_squared", "train_mse", "train_accuracy"))
    for loss, have, other in kinds:
        found = [(label, load_json(rpath)) for label, _spec, rpath in results
                 if load_json(rpath).get("model", {}).get("loss") == loss]
        if not found:
            continue
        label, res = found[0]
        label_m = next(iter(res["metrics"]))
        ok = all(have in m[part] for m in res["metrics"].values()
                 for part in ("per_client", "summary"))
        t.expect(ok, "fresh result of %s (%s) has %s for every model" % (label, loss, have))
        for part in ("per_client", "summary"):
            where = "$.metrics.%s.%s" % (label_m, part)
            out = check_document(schemas, _set(res, ["metrics", label_m, part, have], DELETE))
            paths = [format_path(p) for p, _ in out.errors]
            t.expect(out.status == "FAIL" and (where in paths or where + "." + have in paths),
                     "schema rejects result: %s without %s.%s" % (loss, part, have),
                     ", ".join(paths))
            bad = _set(res, ["metrics", label_m, part, other],
                       res["metrics"][label_m][part][have])
            out = check_document(schemas, bad)
            paths = [format_path(p) for p, _ in out.errors]
            t.expect(out.status == "FAIL" and where + "." + other in paths,
                     "schema rejects result: %s with %s.%s" % (loss, part, other),
                     ", ".join(paths))
        cand = _set(res, ["build"], DELETE)
        for m in cand["metrics"].values():
            for part in ("per_client", "summary"):
                m[part].pop(have, None)
        out = check_document(schemas, cand)
        t.expect(out.status == "ok", "schema accepts a candidate (%s) without %s" % (loss, have),
                 "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))


def _bad_documents_pfl(spec):
    """Planted documents of the personalised algorithms (prox, pfedme,
    ditto), in the form of _bad_documents."""
    goods = dict(_good_specs())
    seed003 = goods["prox: seed 003's worked example"]
    pq = goods["pfedme: quadratic, given schedule with selected"]
    dq = goods["ditto: official preset, quadratic, given schedule"]
    pf = _set(spec, ["algorithm"], {
        "name": "pfedme", "preset": "official",
        "hyperparameters": {"eta": 0.005, "lambda": 15, "eta_p": 0.1, "K": 5}})
    dt = _set(spec, ["algorithm"], {
        "name": "ditto", "preset": "pfllib", "hyperparameters": {"eta": 0.05, "lambda": 1}})
    hp = ["algorithm", "hyperparameters"]
    sw = ["algorithm", "switches"]
    prox_result = parse_json(PROX_RESULT_EXAMPLE)
    return [
        ("spec: prox with K = 0", _set(seed003, hp + ["K"], 0),
         "$.algorithm.hyperparameters.K", "spec", True),
        ("spec: pfedme with K a real literal", _set(pf, hp + ["K"], 5.0),
         "$.algorithm.hyperparameters.K", "spec", True),
        ("spec: pfedme with K a string", _set(pf, hp + ["K"], "5"),
         "$.algorithm.hyperparameters.K", "spec", True),
        ("spec: pfedme without K (required)", _set(pf, hp + ["K"], DELETE),
         "$.algorithm.hyperparameters.K", "spec", True),
        ("spec: ditto without lambda (required)", _set(dt, hp + ["lambda"], DELETE),
         "$.algorithm.hyperparameters.lambda", "spec", True),
        ("spec: pfedme with a negative lambda", _set(pf, hp + ["lambda"], -1),
         "$.algorithm.hyperparameters.lambda", "spec", True),
        ("spec: pfedme with eta_p = 0", _set(pf, hp + ["eta_p"], 0),
         "$.algorithm.hyperparameters.eta_p", "spec", True),
        ("spec: pfedme with beta = 0", _set(pf, hp + ["beta"], 0.0),
         "$.algorithm.hyperparameters.beta", "spec", True),
        ("spec: pfedme with a negative pfedme.mu", _set(pf, hp + ["pfedme.mu"], -0.001),
         '$.algorithm.hyperparameters["pfedme.mu"]', "spec", True),
        ("spec: pfedme.mu given as a switch", _set(pf, sw, {"pfedme.mu": "0.001"}),
         '$.algorithm.switches["pfedme.mu"]', "spec", True),
        ("spec: pfedme with an unknown preset", _set(pf, ["algorithm", "preset"], "fedml"),
         "$.algorithm.preset", "spec", True),
        ("spec: fedavg with the official preset (pfedme and ditto only)",
         _set(spec, ["algorithm", "preset"], "official"), "$.algorithm.preset", "spec", True),
        ("spec: prox with the pfllib preset", _set(seed003, ["algorithm", "preset"], "pfllib"),
         "$.algorithm.preset", "spec", True),
        ("spec: prox with eta (pfedme's local step)", _set(seed003, hp + ["eta"], 0.1),
         "$.algorithm.hyperparameters.eta", "spec", True),
        ("spec: prox with beta", _set(seed003, hp + ["beta"], 1.0),
         "$.algorithm.hyperparameters.beta", "spec", True),
        ("spec: ditto with pfedme's K", _set(dt, hp + ["K"], 2),
         "$.algorithm.hyperparameters.K", "spec", True),
        ("spec: ditto with a pfedme switch", _set(dt, sw, {"pfedme.train": "sampled"}),
         '$.algorithm.switches["pfedme.train"]', "spec", True),
        ("spec: pfedme with a ditto switch", _set(pf, sw, {"ditto.prox": "norm"}),
         '$.algorithm.switches["ditto.prox"]', "spec", True),
        ("spec: bad enum (ditto.prox)", _set(dt, sw, {"ditto.prox": "l1"}),
         '$.algorithm.switches["ditto.prox"]', "spec", True),
        ("spec: bad enum (pfedme.personal_eval)",
         _set(pf, sw, {"pfedme.personal_eval": "best"}),
         '$.algorithm.switches["pfedme.personal_eval"]', "spec", True),
        ("spec: empty selected set", _set(pq, ["schedule", "rounds", 0, "selected"], []),
         "$.schedule.rounds[0].selected", "spec", True),
        ("spec: selected with a negative id", _set(pq, ["schedule", "rounds", 0, "selected"], [-1]),
         "$.schedule.rounds[0].selected[0]", "spec", True),
        ("spec: ditto with a post phase",
         _set(dq, ["schedule", "post"], [[[0]], [[0]]]), "$.schedule.post", "spec", True),
        ("result: prox reporting global instead of reference",
         _set(prox_result, ["metrics", "global"], prox_result["metrics"]["reference"]),
         "$.metrics.global", "result", None),
        ("result: prox without its reference model",
         _set(prox_result, ["metrics", "reference"], DELETE), "$.metrics.reference", "result", None),
        ("result: prox without its personal models", _set(prox_result, ["final", "v"], DELETE),
         "$.final.v", "result", None),
        ("result: prox missing an applicable hyperparameter (pfedme.mu)",
         _set(prox_result, hp + ["pfedme.mu"], DELETE),
         '$.algorithm.hyperparameters["pfedme.mu"]', "result", None),
        ("result: prox with K a real number", _set(prox_result, hp + ["K"], 2.0),
         "$.algorithm.hyperparameters.K", "result", None),
        ("result: prox with a preset of pfedme",
         _set(prox_result, ["algorithm", "preset"], "official"), "$.algorithm.preset", "result", None),
        ("result: pfedme without beta and its switches",
         _set(prox_result, ["algorithm", "name"], "pfedme"),
         "$.algorithm.hyperparameters.beta", "result", None),
        ("result: ditto with pfedme's hyperparameters",
         _set(prox_result, ["algorithm", "name"], "ditto"),
         "$.algorithm.hyperparameters.eta_p", "result", None),
    ]


def _bad_documents_split(spec):
    """Planted documents of fedalt, fedsim and pflego, in the form of
    _bad_documents."""
    goods = dict(_good_specs())
    fa = goods["fedalt: linear, stateless, batch weights, full fine-tuning"]
    fs = goods["fedsim: linear, given schedule with a post phase"]
    pl = goods["pflego: mlp, head personal, full batches"]
    hp = ["algorithm", "hyperparameters"]
    sw = ["algorithm", "switches"]
    res = _split_result(parse_json(PROX_RESULT_EXAMPLE))
    return [
        ("spec: fedalt without tau_v (required)", _set(fa, hp + ["tau_v"], DELETE),
         "$.algorithm.hyperparameters.tau_v", "spec", True),
        ("spec: fedalt with tau_v a real literal", _set(fa, hp + ["tau_v"], 1.0),
         "$.algorithm.hyperparameters.tau_v", "spec", True),
        ("spec: fedalt with a negative tau_v", _set(fa, hp + ["tau_v"], -1),
         "$.algorithm.hyperparameters.tau_v", "spec", True),
        ("spec: fedalt without gamma_u (required)", _set(fa, hp + ["gamma_u"], DELETE),
         "$.algorithm.hyperparameters.gamma_u", "spec", True),
        ("spec: fedalt with a negative gamma_v", _set(fa, hp + ["gamma_v"], -0.1),
         "$.algorithm.hyperparameters.gamma_v", "spec", True),
        ("spec: fedalt with eta_ft = 0", _set(fa, hp + ["eta_ft"], 0),
         "$.algorithm.hyperparameters.eta_ft", "spec", True),
        ("spec: fedalt with finetune's mu_ft", _set(fa, hp + ["mu_ft"], 0.5),
         "$.algorithm.hyperparameters.mu_ft", "spec", True),
        ("spec: fedalt with a preset of fedsim", _set(fa, ["algorithm", "preset"], "fedper"),
         "$.algorithm.preset", "spec", True),
        ("spec: bad enum (pfl.weights)", _set(fa, sw + ["pfl.weights"], "median"),
         '$.algorithm.switches["pfl.weights"]', "spec", True),
        ("spec: fedsim with fedalt's tau_v", _set(fs, hp + ["tau_v"], 1),
         "$.algorithm.hyperparameters.tau_v", "spec", True),
        ("spec: fedsim without gamma_v (required without fedbabu)",
         _set(fs, hp + ["gamma_v"], DELETE), "$.algorithm.hyperparameters.gamma_v", "spec", True),
        ("spec: fedsim with the fedrep preset", _set(fs, ["algorithm", "preset"], "fedrep"),
         "$.algorithm.preset", "spec", True),
        ("spec: fedsim with a pflego switch", _set(fs, sw, {"pflego.server": "adam"}),
         '$.algorithm.switches["pflego.server"]', "spec", True),
        ("spec: pflego without rho (required)", _set(pl, hp + ["rho"], DELETE),
         "$.algorithm.hyperparameters.rho", "spec", True),
        ("spec: pflego with rho = 0", _set(pl, hp + ["rho"], 0),
         "$.algorithm.hyperparameters.rho", "spec", True),
        ("spec: pflego with a negative pflego.beta", _set(pl, hp + ["pflego.beta"], -0.1),
         '$.algorithm.hyperparameters["pflego.beta"]', "spec", True),
        ("spec: pflego.beta given as a switch", _set(pl, sw, {"pflego.beta": "0.1"}),
         '$.algorithm.switches["pflego.beta"]', "spec", True),
        ("spec: pflego with pfedme's beta", _set(pl, hp + ["beta"], 1.0),
         "$.algorithm.hyperparameters.beta", "spec", True),
        ("spec: pflego with a fedsim switch", _set(pl, sw, {"pfl.state": "stateless"}),
         '$.algorithm.switches["pfl.state"]', "spec", True),
        ("spec: bad enum (pflego.head_step)", _set(pl, sw, {"pflego.head_step": "exact"}),
         '$.algorithm.switches["pflego.head_step"]', "spec", True),
        ("spec: pflego with the fedbabu preset", _set(pl, ["algorithm", "preset"], "fedbabu"),
         "$.algorithm.preset", "spec", True),
        ("spec: pflego with a post phase",
         _set(pl, ["schedule", "post"], {"steps": 1}), "$.schedule.post", "spec", True),
        ("spec: fedavg with the fedrep preset", _set(spec, ["algorithm", "preset"], "fedrep"),
         "$.algorithm.preset", "spec", True),
        ("result: fedalt reporting global", _set(res, ["metrics", "global"],
                                                res["metrics"]["personalized"]),
         "$.metrics.global", "result", None),
        ("result: fedalt without its personal models", _set(res, ["final", "v"], DELETE),
         "$.final.v", "result", None),
        ("result: fedalt missing an applicable hyperparameter (eta_ft)",
         _set(res, ["algorithm", "hyperparameters", "eta_ft"], DELETE),
         "$.algorithm.hyperparameters.eta_ft", "result", None),
        ("result: fedalt missing a switch (pfl.finetune)",
         _set(res, ["algorithm", "switches", "pfl.finetune"], DELETE),
         '$.algorithm.switches["pfl.finetune"]', "result", None),
        ("result: fedsim with fedalt's tau_v", _set(res, ["algorithm", "name"], "fedsim"),
         "$.algorithm.hyperparameters.tau_v", "result", None),
        ("result: pflego without rho and its switches", _set(res, ["algorithm", "name"], "pflego"),
         "$.algorithm.hyperparameters.rho", "result", None),
        ("result: finetune with an unset eta_ft (null)",
         _set(res, ["algorithm"], {
             "name": "finetune", "title": "FedAvg, then local fine-tuning (FedAvg-FT)",
             "preset": "paper", "hyperparameters": {"eta": 0.5, "eta_ft": None, "mu_ft": 0.0},
             "switches": {"fedavg.weights": "samples", "finetune.scope": "full"}}),
         "$.algorithm.hyperparameters.eta_ft", "result", None),
    ]


def _split_result(prox_result):
    """PROX_RESULT_EXAMPLE dressed as a fedalt result without a post phase
    (eta_ft unset, written null), for the planted results."""
    res = _set(prox_result, ["algorithm"], {
        "name": "fedalt", "title": "FedAlt (Pillutla et al., ICML 2022, Alg. 4)",
        "preset": "paper",
        "hyperparameters": {"eta_ft": None, "gamma_u": 0.1, "gamma_v": 0.1, "tau_v": 1},
        "switches": {"pfl.state": "stateful", "pfl.weights": "samples",
                     "pfl.finetune": "personal"}})
    del res["metrics"]["reference"]
    return res


RAW_BAD = [
    ("JSON: NaN literal", '{"format": "pflref-spec/1", "x": NaN}'),
    ("JSON: duplicate key", '{"format": "pflref-spec/1", "format": "pflref-spec/1"}'),
    ("JSON: real overflowing a double", '{"format": "pflref-spec/1", "x": 1e400}'),
    ("JSON: syntax error", '{"format": "pflref-spec/1",'),
]


class SelfTest:
    def __init__(self, pflref):
        self.pflref = pflref
        self.checks = 0
        self.surprises = 0

    def ok(self, what):
        self.checks += 1
        print("ok    %s" % what)

    def surprise(self, what):
        self.checks += 1
        self.surprises += 1
        print("FAIL  %s" % what)

    def expect(self, cond, what, why=""):
        if cond:
            self.ok(what)
        else:
            self.surprise(what + (": " + why if why else ""))

    def run_pflref(self, args, cwd=None):
        return subprocess.run([str(self.pflref)] + args, cwd=cwd, capture_output=True,
                              text=True, timeout=120)


def _reader_path(path):
    """A validate.py path ($.a["b.c"][2]) as pflref's reader writes it (a.b.c[2])."""
    out = re.sub(r'\["([^"]*)"\]', r".\1", path)
    return out[2:] if out.startswith("$.") else out[1:]


def _reader_where(stderr, file):
    """The path pflref named in "pflref: FILE: WHERE: message"."""
    head = "pflref: %s: " % file
    for line in stderr.splitlines():
        if line.startswith(head):
            rest = line[len(head):]
            return rest.split(": ", 1)[0] if ": " in rest else ""
    return None


def _stem(path):
    """A temporary file name for a shipped file, unique across golden/'s
    folders (fedalt/ and fedsim/ both have worked-notes-a-stateful.json)."""
    rel = os.path.relpath(os.path.splitext(path)[0], REPO / "golden")
    return rel.replace(os.sep, "-")


def _write(path, doc):
    Path(path).write_text(json.dumps(doc, indent=1) if not isinstance(doc, str) else doc)


def self_test(pflref_arg):
    pflref = Path(pflref_arg) if pflref_arg else REPO / "build" / "rel" / "pflref"
    if not (pflref.is_file() and os.access(pflref, os.X_OK)):
        if pflref_arg:
            sys.stderr.write("validate.py: %s is not an executable\n" % pflref)
            return EXIT_USAGE
        pflref = None
    t = SelfTest(pflref)

    # 1. The schemas themselves.
    try:
        schemas = Schemas()
    except (JSONError, SchemaError) as e:
        print("FAIL  the schemas do not load: %s" % e)
        return EXIT_INTERNAL
    for name in sorted(set(FORMATS.values())):
        t.ok("%s is a valid draft 2020-12 schema" % name)

    # 2. Every shipped document validates.
    shipped = {}
    for f in json_files(REPO / "golden"):
        out = check_file(schemas, f, explicit=False)
        rel = os.path.relpath(f, REPO)
        if out.status == "skip":
            t.expect("has no schema here" in out.note, "shipped %s skipped: %s" % (rel, out.note))
            continue
        shipped.setdefault(out.fmt, []).append(f)
        t.expect(out.status == "ok", "shipped %s is a valid %s" % (rel, out.fmt),
                 "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
    for fmt in ("pflref-spec/1", "pflref-problem/1", "pflref-golden/1"):
        t.expect(len(shipped.get(fmt, [])) > 0, "golden/ ships at least one %s" % fmt)

    with tempfile.TemporaryDirectory(prefix="pflref-schema-") as tmp:
        tmp = Path(tmp)
        # 3. Good specs of every form: the schema accepts them, pflref runs
        #    them, and the results validate.
        goods = _good_specs()
        _write(tmp / "p.json", PROBLEM_FILE)
        goods.append(("problem file", FILE_SPEC))
        for label, spec in _good_specs_mlp():
            out = check_document(schemas, spec)
            t.expect(out.status == "ok", "schema accepts spec: %s" % label,
                     "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
        for label, spec, want in (
                ("mlp with half_squared and k = 2", _set(_good_specs_mlp()[0][1],
                                                         ["model", "k"], 2), "$.model.k"),
                ("mlp with cross_entropy and no k", _set(_good_specs_mlp()[2][1],
                                                        ["model", "k"], DELETE), "$.model.k"),
                ("regression mlp with the dirichlet generator",
                 _set(_good_specs_mlp()[0][1], ["problem"],
                      {"generator": {"kind": "dirichlet", "K": 2}}), "$.model.loss")):
            out = check_document(schemas, spec)
            paths = [format_path(p) for p, _ in out.errors]
            t.expect(out.status == "FAIL" and want in paths,
                     "schema rejects spec: %s -> %s" % (label, want), ", ".join(paths))
        problem_out = check_document(schemas, PROBLEM_FILE)
        t.expect(problem_out.status == "ok", "schema accepts a problem file with provenance")
        results = []
        for i, (label, spec) in enumerate(goods):
            out = check_document(schemas, spec)
            t.expect(out.status == "ok", "schema accepts spec: %s" % label,
                     "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
            if pflref is None:
                continue
            spath, rpath = tmp / ("good%d.json" % i), tmp / ("good%d.result.json" % i)
            _write(spath, spec)
            r = t.run_pflref(["run", str(spath), "-o", str(rpath)])
            t.expect(r.returncode == 0, "pflref runs spec: %s" % label, r.stderr.strip())
            if r.returncode == 0:
                results.append((label, spec, rpath))
        # Results of the shipped specs and of each golden vector's spec.
        if pflref is not None:
            for f in shipped.get("pflref-spec/1", []):
                rpath = tmp / ("shipped-%s.result.json" % _stem(f))
                r = t.run_pflref(["run", f, "-o", str(rpath)])
                t.expect(r.returncode == 0, "pflref runs shipped %s" % os.path.relpath(f, REPO),
                         r.stderr.strip())
                if r.returncode == 0:
                    results.append((os.path.relpath(f, REPO), load_json(f), rpath))
            for f in shipped.get("pflref-golden/1", []):
                g = load_json(f)
                spath = tmp / ("golden-%s.json" % _stem(f))
                rpath = tmp / ("golden-%s.result.json" % _stem(f))
                _write(spath, g["spec"])
                r = t.run_pflref(["run", str(spath), "-o", str(rpath)])
                t.expect(r.returncode == 0, "pflref runs the spec of %s" % g["id"],
                         r.stderr.strip())
                if r.returncode == 0:
                    results.append(("spec of " + g["id"], g["spec"], rpath))
        for label, spec, rpath in results:
            out = check_file(schemas, rpath)
            t.expect(out.status == "ok", "fresh result of %s is a valid pflref-result/1" % label,
                     "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
        _check_train_metrics(t, schemas, results)

        # 4. The recorded schedule is the replayable given form: substituted
        #    into the spec it gives the same result, bit for bit.
        for label, spec, rpath in results:
            if spec.get("schedule", {}).get("kind") != "generate" or "file" in spec.get("problem", {}):
                continue
            res = load_json(rpath)
            replay = _set(spec, ["schedule"], res["schedule"])
            if replay.get("init", {}).get("kind") in ("gaussian", "uniform"):
                replay["init"] = {"kind": "given", "w": res["w0"]}
            if "theta0" in res:
                # IFCA: the initial cluster models used, drawn ones included
                replay["init"] = dict(replay.get("init", {"kind": "zeros"}),
                                      cluster_models=res["theta0"])
                hp = replay["algorithm"]["hyperparameters"]
                for key in ("ifca.init_shift", "ifca.init_sd", "ifca.init_seed"):
                    hp.pop(key, None)
            out = check_document(schemas, replay)
            t.expect(out.status == "ok", "the result's schedule of %s is a valid given schedule" % label)
            spath, r2 = tmp / "replay.json", tmp / "replay.result.json"
            _write(spath, replay)
            r = t.run_pflref(["run", str(spath), "-o", str(r2)])
            same = r.returncode == 0 and load_json(r2)["final"] == res["final"]
            t.expect(same, "replaying the recorded schedule of %s gives the same final state" % label,
                     r.stderr.strip())

        # 5. Planted bad documents: rejected at the expected path, and, for
        #    the documents pflref reads, rejected by pflref's reader too.
        # The base: seed 000's FedAvg-then-fine-tune spec made small (two
        # inline clients, a few rounds), and its FedAvg part alone.
        ft_spec = load_json(REPO / "golden" / "seed000" / "fedavg-ft.json")
        ft_spec["problem"] = {"clients": [{"X": [[1.0] * 12, [0.5] * 12], "y": [1.0, 2.0]},
                                          {"X": [[-1.0] * 12], "y": [0.5]}]}
        ft_spec["schedule"].update({"rounds": 3, "clients_per_round": 2})
        base_spec = copy.deepcopy(ft_spec)
        base_spec["algorithm"] = {"name": "fedavg", "hyperparameters": {"eta": 0.03},
                                  "switches": {"fedavg.weights": "uniform"}}
        del base_spec["schedule"]["post"]
        golden_path = sorted(shipped.get("pflref-golden/1", []))[0]
        golden = load_json(golden_path)
        result = parse_json(RESULT_EXAMPLE)
        t.expect(check_document(schemas, result).status == "ok",
                 "schema accepts the small result kept in validate.py")
        out = check_document(schemas, _in_files(golden))
        t.expect(out.status == "ok", "schema accepts %s in the files form" % golden["id"],
                 "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
        if pflref is not None:
            # a vector pflref freeze writes in files: valid, and verified
            _write(tmp / "tofreeze.json", base_spec)
            vf = tmp / "frozen.json"
            r = t.run_pflref(["freeze", str(tmp / "tofreeze.json"), "-o", str(vf),
                              "--arrays", "files", "--inline-max", "0"])
            t.expect(r.returncode == 0 and (tmp / "frozen.arrays").is_dir(),
                     "pflref freeze --arrays files writes a vector and its arrays",
                     r.stderr.strip())
            if r.returncode == 0:
                out = check_file(schemas, vf)
                t.expect(out.status == "ok" and "array_files" in load_json(vf),
                         "  the schema accepts it",
                         "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
                r = t.run_pflref(["verify", str(vf)])
                t.expect(r.returncode == 0, "  pflref verify reproduces it", r.stderr.strip())
        split_result = _split_result(parse_json(PROX_RESULT_EXAMPLE))
        t.expect(check_document(schemas, split_result).status == "ok",
                 "schema accepts the small fedalt result kept in validate.py (eta_ft null)")
        for f in sorted(shipped.get("pflref-golden/1", [])):
            g = load_json(f)
            cand = _candidate(g)
            out = check_document(schemas, cand)
            t.expect(out.status == "ok", "schema accepts a candidate made of %s's expected values"
                     % g["id"], "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
            if pflref is not None:
                _write(tmp / "cand.json", cand)
                r = t.run_pflref(["check", f, str(tmp / "cand.json")])
                t.expect(r.returncode == 0, "  pflref check passes it", r.stdout.strip())
                rpath = tmp / "fromvector.json"
                r = t.run_pflref(["run", f, "-o", str(rpath)])
                if r.returncode == 0:
                    out = check_file(schemas, rpath)
                    t.expect(out.status == "ok" and load_json(rpath).get("id") == g["id"],
                             "  pflref run on the vector writes a valid result with its id",
                             "; ".join("%s: %s" % (format_path(p), m) for p, m in out.errors[:3]))
                else:
                    t.surprise("  pflref run on the vector: exit %d: %s"
                               % (r.returncode, r.stderr.strip()))
        for label, doc in (("FedAvg", base_spec), ("fine-tuning", ft_spec)):
            t.expect(check_document(schemas, doc).status == "ok",
                     "the %s base of the planted specs is valid" % label)
            if pflref is not None:
                _write(tmp / "base.json", doc)
                r = t.run_pflref(["run", str(tmp / "base.json"), "-o", str(tmp / "base.out.json")])
                t.expect(r.returncode == 0, "  pflref runs it", r.stderr.strip())
        for label, doc, want, kind, reader_rejects in _bad_documents(
                base_spec, ft_spec, golden, result, PROBLEM_FILE):
            out = check_document(schemas, doc)
            paths = [format_path(p) for p, _ in out.errors]
            if out.status != "FAIL":
                t.surprise("schema rejects %s: it was accepted" % label)
                continue
            first = "%s: %s" % (format_path(out.errors[0][0]), out.errors[0][1])
            t.expect(want in paths, "schema rejects %s -> %s" % (label, first),
                     "expected an error at %s, got %s" % (want, ", ".join(paths)))
            if pflref is None or reader_rejects is None:
                continue
            if kind == "golden":
                # A planted change is made as a generator would make it, with
                # the hash rewritten, so the reader meets the change itself
                # (a silent edit is refused as such: tests/test_tamper.c);
                # a malformed hash is planted as it is.
                if isinstance(doc, dict) and not isinstance(doc.get("hash", {}), str):
                    try:
                        doc = _pg().with_hash(doc)
                    except ValueError:
                        pass    # a part is missing: the reader names it
                _write(tmp / "badg.json", doc)
                r = t.run_pflref(["verify", str(tmp / "badg.json")])
                if reader_rejects:
                    where = _reader_where(r.stderr, str(tmp / "badg.json"))
                    t.expect(r.returncode == 2 and where == _reader_path(want),
                             "  pflref verify rejects it too, at %s" % where,
                             "exit %d: %s" % (r.returncode, r.stderr.strip()))
                else:
                    t.expect(r.returncode in (0, 1),
                             "  pflref verify reads it (the schema is stricter on purpose)",
                             "exit %d: %s" % (r.returncode, r.stderr.strip()))
                continue
            if kind == "candidate":
                _write(tmp / "badc.json", doc)
                r = t.run_pflref(["check", golden_path, str(tmp / "badc.json")])
                if reader_rejects:
                    t.expect(r.returncode == 2, "  pflref check rejects it too (exit 2): %s"
                             % (r.stderr.strip().splitlines() or [""])[0],
                             "exit %d: %s" % (r.returncode, r.stdout.strip()))
                else:
                    t.expect(r.returncode in (0, 1),
                             "  pflref check reads it (the schema is stricter on purpose)",
                             "exit %d: %s" % (r.returncode, r.stderr.strip()))
                continue
            prefix = ""
            if kind == "problem":
                _write(tmp / "badp.json", doc)
                doc = _set(FILE_SPEC, ["problem", "file"], "badp.json")
                prefix = "badp.json:"
            _write(tmp / "bad.json", doc)
            r = t.run_pflref(["run", str(tmp / "bad.json"), "-o", str(tmp / "bad.out.json")])
            where = _reader_where(r.stderr, str(tmp / "bad.json"))
            t.expect(r.returncode == 2 and where == prefix + _reader_path(want),
                     "  pflref run rejects it too, at %s" % where,
                     "exit %d: %s" % (r.returncode, r.stderr.strip()))
        for label, text in RAW_BAD:
            try:
                doc = parse_json(text)
            except JSONError as e:
                t.ok("reader rejects %s -> %s" % (label, e))
                continue
            t.surprise("reader rejects %s: it was accepted as %r" % (label, doc))
        # Integers are integer literals: 2.0 is a real.
        out = check_document(schemas, _set(base_spec, ["schedule", "rounds"], 1.0))
        t.expect(out.status == "FAIL" and out.errors[0][0] == ["schedule", "rounds"],
                 "schema refuses 1.0 where an integer is required")

    if pflref is None:
        print("note: %s is not built; the checks that run pflref were skipped"
              % (REPO / "build" / "rel" / "pflref"))
    print("self-test: %d checks, %d surprises" % (t.checks, t.surprises))
    return EXIT_INVALID if t.surprises else EXIT_OK


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="validate.py",
        description="Validate pflref JSON documents (spec, problem, result, golden) "
                    "against docs/schema/*.schema.json.",
        epilog="exit status: 0 all valid, 1 invalid file, 2 usage, 4 nothing validated, "
               "5 schemas not loadable")
    ap.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (recursive)")
    ap.add_argument("--all", action="store_true", help="list every error, not only the first")
    ap.add_argument("--self-test", action="store_true",
                    help="check that the schemas accept what pflref ships and writes, "
                         "and reject planted bad documents")
    ap.add_argument("--pflref", metavar="BIN",
                    help="the pflref program for --self-test (default build/rel/pflref)")
    args = ap.parse_args(argv)
    if args.self_test:
        if args.paths:
            ap.error("--self-test takes no paths")
        return self_test(args.pflref)
    if not args.paths:
        ap.error("give at least one file or folder")
    return run_validate(args.paths, args.all)


if __name__ == "__main__":
    sys.exit(main())
