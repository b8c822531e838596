# SPDX-License-Identifier: GPL-3.0-or-later
"""check() and run(): the oracle's two verbs, in-process (docs/python.md,
"check" and "run").

check() hands the vector's text and the candidate's result to
pflref_golden_check_json and reads the report back as JSON; the human
report (str(report)) is written here from that JSON in the words of
`pflref check` (cli/report.c), so a test failure reads like the CLI's.
"""
import hashlib
import json
import math
import os
import shlex
import tempfile

import numpy as np

from . import _lib
from ._arrays import arrays_of
from ._recorder import Recorder, describe_key
from ._vectors import as_vector


def _shortest(x):
    """The shortest decimal that reads back as x (repr does this)."""
    return repr(float(x)) if x is not None else "null"


def _digits_text(lre, ulp=None, stats=None):
    text = ", no correct digits" if lre is None or lre <= 0 else \
        ", %s%.2f correct digits" % (">= " if stats is not None else "", lre)
    if stats is None:
        return text
    if stats.get("not_finite"):
        text += ", %d not finite" % stats["not_finite"]
    if stats.get("sign_differs"):
        n = stats["sign_differs"]
        text += ", sign differs in %d number%s" % (n, "" if n == 1 else "s")
    elif stats.get("max_orders_off"):
        text += ", off by up to 10^%d" % stats["max_orders_off"]
    elif ulp is not None:
        text += ", max %d ulp" % ulp
    return text


def _far(expected, got):
    if not expected or not got or not math.isfinite(expected) or \
            not math.isfinite(got):
        return ""
    if (expected < 0) != (got < 0):
        return " (sign differs)"
    k = math.log10(abs(got)) - math.log10(abs(expected))
    if abs(k) >= 1:
        return " (off by 10^%d)" % (-math.floor(-k) if k < 0 else math.floor(k))
    return ""


def divergence_text(d):
    """'w (server, round 0)[0]: expected 4.3, got 4.25' as `pflref check`
    writes a divergence."""
    where = [d["event"]] + ["%s %d" % (k, d[k]) for k in
                            ("round", "client", "step") if d.get(k) is not None]
    if d.get("record", 1) and d.get("record", 1) > 1:
        where.append("duplicate record: record %d of this quantity"
                     % d["record"])
    head = "%s (%s" % (d["name"], ", ".join(where))
    if d.get("missing"):
        if not d.get("got_length"):
            return head + "): not produced by the candidate"
        return head + "): the candidate's record has %d numbers, the vector " \
            "expects %d" % (d["got_length"], d["expected_length"])
    return head + ")[%d]: expected %s, got %s%s" % (
        d["index"], _shortest(d["expected"]), _shortest(d["got"]),
        _far(d["expected"], d["got"]))


class Report:
    """The verdict on one candidate result.

    .passed    bool
    .first     None, or the first divergence: dict event, phase, round,
               client, step, name, index, expected, got (None where they do
               not apply), missing (True: the candidate did not record it)
    .digits    dict quantity name -> fewest correct digits (log relative
               error, capped at 15.95; 0: none)
    .trajectory_digits
               dict quantity name -> its digits along the trajectory: a
               list of dicts position (of the record in the vector's
               expected trajectory, the final state last), round (None for
               the final state), digits (the fewest correct digits of the
               record, or over a stretch of `.digits_stretch` records on a
               long trajectory), mismatches (records out of tolerance)
    .digits_stretch
               expected records per point of .trajectory_digits (1: one
               point per record)
    .first_position
               None, or the first divergence's position in the expected
               trajectory (as in .trajectory_digits)
    .replay    the shell command that reproduces this check with the CLI
    .missing   the required records the candidate did not give (a Recorder
               checked without partial: named before any comparison)
    .partial_short
               None, or why too little was compared under partial (the
               report then fails though nothing differs)
    .raw       the library's report (format pflref-report/1), or None
    str(report) is the human report.
    """

    def __init__(self, vector, raw, replay, missing=(), outcome=None,
                 resync=False):
        self.vector = vector
        self.resync = resync
        self.id = vector.id
        self.raw = raw
        self._replay = replay
        self.missing = list(missing)
        self.outcome = outcome
        self.partial_short = None   # set by check: too little compared
        if raw is None:                    # records missing: nothing compared
            self.passed = False
            self.first = _first(self.missing[0], missing=True)
            self.digits = {}
            self.trajectory_digits = {}
            self.digits_stretch = 1
            self.first_position = None
            return
        self.passed = bool(raw["passed"])
        d = raw.get("first_divergence")
        self.first = None if d is None else _first(d, d.get("missing", False))
        self.digits = {q["name"]: q["min_lre"] for q in raw["by_quantity"]
                       if q["quantities"] > 0 and q["numbers"] > 0}
        self.trajectory_digits = {
            q["name"]: [{"position": p, "round": r, "digits": d,
                         "mismatches": m}
                        for p, r, d, m in zip(*(q["trajectory_digits"][k] for k in
                                                ("position", "round", "min_lre",
                                                 "mismatches")))]
            for q in raw["by_quantity"] if q["quantities"] > 0}
        self.digits_stretch = raw.get("digits_stretch", 1)
        self.first_position = None if d is None else d.get("position")

    @property
    def replay(self):
        return self._replay()

    def __bool__(self):
        return self.passed

    def __str__(self):
        if self.raw is None:
            return self._missing_text()
        r = self.raw
        if r["wrong_outcome"]:
            return "FAIL %s: the candidate reports outcome \"%s\", the " \
                "vector expects \"ok\"%s\n%s  replay: %s" % (
                    self.id, r["outcome"], self._outcome_where(),
                    self._flags_line(), self.replay)
        if self.partial_short is not None:
            return "FAIL %s: %s\n%s  replay: %s" % (
                self.id, self.partial_short, self._flags_line(), self.replay)
        mca = r.get("mca") or {}
        if not self.passed and mca.get("kinks") and not mca.get("chaotic") \
                and not r["mismatches"]:
            # out of the bound only at a discontinuity of the perturbed
            # runs (docs/validate.md, "Kinks and jumps"): never a pass
            return "INCONCLUSIVE %s: within the tolerance except at a kink " \
                "of the perturbed runs (reason: %s)\n  kink: %d quantities " \
                "at a discontinuity of the perturbed runs, first %s\n%s" \
                "  replay: %s" % (self.id, mca.get("kink_reason"),
                                  mca["kinks"],
                                  divergence_text(mca["first_kink"]),
                                  self._flags_line(), self.replay)
        if not self.passed and mca.get("chaotic") and not r["mismatches"]:
            # within the tolerance, but chaotic at the candidate precision
            # (docs/validate.md, "Candidate precision"): never a pass
            return "INCONCLUSIVE %s: within the tolerance, but chaotic at " \
                "this precision\n  chaotic: %d records whose spread under " \
                "random rounding reaches their own magnitude\n%s  replay: " \
                "%s" % (self.id, mca["chaotic"], self._flags_line(),
                        self.replay)
        if self.passed:
            return "PASS %s: %d quantities, %d numbers; max abs err %.3g, " \
                "max rel err %.3g%s%s" % (
                    self.id, r["quantities"], r["numbers"], r["max_abs_err"],
                    r["max_rel_err"], _digits_text(r["min_lre"], r["max_ulp"], r),
                    " (%d expected quantities not recorded, skipped under "
                    "partial)" % r["skipped"] if r["skipped"] else "")
        return self._fail_text()

    def _outcome_where(self):
        o = self.outcome or {}
        where = ["%s %d" % (k, o[k]) for k in ("round", "client", "step")
                 if k in o]
        msg = o.get("message", "")
        return " (%s%s)" % (", ".join(where) + ": " if where else "", msg) \
            if msg or where else ""

    def _fail_text(self):
        r = self.raw
        lines = ["FAIL %s: %d of %d quantities differ" % (
            self.id, r["mismatches"], r["quantities"])]
        if r["missing"]:
            lines[0] += " (%d not recorded by the candidate)" % r["missing"]
        if r["numbers"]:
            lines[0] += "; over the numbers compared: max abs err %.3g, max " \
                "rel err %.3g%s" % (r["max_abs_err"], r["max_rel_err"],
                                    _digits_text(r["min_lre"]))
        lines[0] += "; first divergence: " + divergence_text(
            r["first_divergence"])
        for q in r["by_quantity"]:
            if not q["quantities"]:
                continue
            line = "  %-10s %d of %d differ" % (q["name"], q["mismatches"],
                                                q["quantities"])
            if not q["numbers"]:
                lines.append(line + "; no number compared")
                continue
            lines.append(line + "; max abs err %.3g, max rel err %.3g%s" % (
                q["max_abs_err"], q["max_rel_err"],
                _digits_text(q["min_lre"], q["max_ulp"], q)))
        for d in r["divergences"][1:] if self.resync else ():
            lines.append("  also: " + divergence_text(d))
        if self._flags_line():
            lines.append(self._flags_line().rstrip("\n"))
        lines.append("  replay: " + self.replay)
        return "\n".join(lines)

    def _flags_line(self):
        """The vector's flags as `pflref check` shows them on a failure
        (cli/report.c), with its newline; "" when it has none."""
        flags = (getattr(self.vector, "raw", None) or {}).get("flags") or []
        if not flags:
            return ""
        return "  flags: %s (the bug classes and caveats of the vector; its " \
            "flags.json describes each)\n" % ", ".join(flags)

    def _missing_text(self):
        n = len(self.missing)
        lines = ["FAIL %s: the candidate did not record %d required "
                 "record%s (nothing compared); first missing: %s" % (
                     self.id, n, "" if n == 1 else "s",
                     describe_key(self.missing[0]))]
        by_name = {}
        for m in self.missing:
            by_name[m["name"]] = by_name.get(m["name"], 0) + 1
        lines.append("  missing: " + ", ".join(
            "%s (%d)" % kv for kv in by_name.items()))
        for m in self.missing[1:6]:
            lines.append("  also missing: " + describe_key(m))
        if n > 6:
            lines.append("  ... and %d more (report.missing)" % (n - 6))
        lines.append("  replay: " + self.replay)
        return "\n".join(lines)

    def __repr__(self):
        return "<pflref.Report %s %s>" % (self.id,
                                          "passed" if self.passed else "failed")


def _first(d, missing):
    return {"event": d["event"], "phase": d["phase"],
            "round": d.get("round"), "client": d.get("client"),
            "step": d.get("step"), "name": d["name"],
            "index": d.get("index"), "expected": d.get("expected"),
            "got": d.get("got"), "missing": bool(missing)}


# ---- check --------------------------------------------------------------------

def _candidate(result):
    """(text, path or None, outcome) of a Recorder, a dict, JSON text or a
    path."""
    if isinstance(result, Recorder):
        doc = result.result()
        return json.dumps(doc), None, doc.get("outcome")
    if isinstance(result, dict):
        return json.dumps(result, allow_nan=False), None, result.get("outcome")
    if isinstance(result, (bytes, bytearray)):
        result = bytes(result).decode("utf-8")
    if isinstance(result, str) and result.lstrip().startswith("{"):
        return result, None, None
    if isinstance(result, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(result))
        with open(path, encoding="utf-8") as f:
            return f.read(), path, None
    raise TypeError("result: a Recorder, a pflref-result/1 dict, JSON text "
                    "or a path, not %s" % type(result).__name__)


def cli_command():
    """How to call the CLI in a replay line: $PFLREF_CLI, the checkout's
    build/rel/pflref (the one the package sits in, or was built from),
    PREFIX/bin/pflref, else "pflref" on the PATH."""
    if os.environ.get("PFLREF_CLI"):
        return os.environ["PFLREF_CLI"]
    for root in (_lib.checkout_root(), _lib.origin_checkout()):
        if root is not None and os.path.exists(os.path.join(root, "build", "rel",
                                                            "pflref")):
            return os.path.join(root, "build", "rel", "pflref")
    prefix = _lib.install_prefix()
    if prefix is not None and os.path.exists(os.path.join(prefix, "bin",
                                                          "pflref")):
        return os.path.join(prefix, "bin", "pflref")
    return "pflref"


def replay_dir():
    """Where an in-memory candidate is saved for its replay command:
    $PFLREF_REPLAY_DIR, else <tmp>/pflref-replay-<uid> (one folder per
    user, so users of one machine do not overwrite each other's)."""
    return os.environ.get("PFLREF_REPLAY_DIR") or \
        os.path.join(tempfile.gettempdir(), "pflref-replay-%d" % os.getuid())


def _replayer(vector, text, path, precision, resync, partial,
              partial_min=None):
    """A function giving the replay command, saving an in-memory candidate
    (atomically) the first time it is asked for."""
    state = {"path": path}

    def replay():
        if state["path"] is None:
            folder = os.path.abspath(replay_dir())
            os.makedirs(folder, exist_ok=True)
            # the content's digest in the name: a later candidate for the
            # same vector never overwrites the file an earlier replay
            # line names
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            name = "%s.%s.candidate.json" % (vector.id.replace("/", "__"),
                                              digest)
            target = os.path.join(folder, name)
            _lib.write_file(target, text)    # the library's one writer
            state["path"] = target
        argv = [cli_command(), "check", vector.path, state["path"]]
        if resync:
            argv.append("--resync")
        if partial:
            argv.append("--partial")
        if partial and partial_min is not None:
            argv += ["--partial-min", str(partial_min)]
        if precision != "fp64":
            argv += ["--candidate-precision", precision]
        return " ".join(shlex.quote(a) for a in argv)
    return replay


def _partial_short(raw, partial_min):
    """Why too little was compared under partial (the CLI's rule,
    docs/cli.md): without partial_min every round of the expected
    trajectory needs a record compared; with it, at least that count
    (an int >= 1) or fraction (a float in (0, 1]) of the expected
    records.  None when enough was."""
    if partial_min is None:
        if raw.get("rounds_compared", 0) < raw.get("rounds_expected", 0):
            return ("partial compared records of %d of the %d rounds of the "
                    "expected trajectory; without partial_min every round "
                    "must be covered (a candidate that records less passes "
                    "only with an explicit partial_min)"
                    % (raw["rounds_compared"], raw["rounds_expected"]))
        return None
    need = partial_min if isinstance(partial_min, int) else \
        math.ceil(partial_min * raw["expected_records"])
    if raw["quantities"] < max(need, 1):
        return ("partial compared %d of %d expected records, fewer than the "
                "%d partial_min requires" % (raw["quantities"],
                                             raw["expected_records"], need))
    return None


def _check_partial_min(partial, partial_min):
    if partial_min is None:
        return
    if not partial:
        raise ValueError("partial_min: needs partial=True")
    if isinstance(partial_min, bool) or not (
            (isinstance(partial_min, int) and partial_min >= 1) or
            (isinstance(partial_min, float) and 0.0 < partial_min <= 1.0)):
        raise ValueError("partial_min: %r is not a count >= 1 or a fraction "
                         "in (0, 1]" % (partial_min,))


def check(vector, result, precision="fp64", resync=False, partial=False,
          partial_min=None):
    """Compare a candidate's result with a golden vector (a Vector or a
    path).  result: a Recorder, a pflref-result/1 dict, JSON text or a path.
    A Recorder's missing required records are reported before any
    comparison (unless partial).  Under partial, too little compared
    fails as `pflref check --partial` does: without partial_min the
    records compared must cover every round of the expected trajectory;
    partial_min (a count >= 1, or a fraction in (0, 1]) replaces that
    rule.  Raises pflref.InvalidInput for a malformed vector or candidate
    (.where names the field, prefixed "expected:" or "candidate:")."""
    _check_partial_min(partial, partial_min)
    vector = as_vector(vector)
    if isinstance(result, Recorder) and result.vector.id != vector.id:
        raise ValueError("result: the Recorder is for %s, not %s"
                         % (result.vector.id, vector.id))
    text, path, outcome = _candidate(result)
    replay = _replayer(vector, text, path, precision, resync, partial,
                       partial_min)
    if isinstance(result, Recorder) and not partial and outcome is None:
        missing = result.missing()
        if missing:
            return Report(vector, None, replay, missing=missing)
    # a candidate file's arrays in files are relative to its folder
    raw = _lib.check_text(vector.text, vector.folder, text, precision,
                          resync, partial,
                          os.path.dirname(path) if path else None)
    report = Report(vector, raw, replay, outcome=outcome, resync=resync)
    short = _partial_short(raw, partial_min) if partial else None
    if short is not None and report.passed:
        report.passed, report.partial_short = False, short
    return report


# ---- run ------------------------------------------------------------------------

class Result:
    """The reference's result of a spec.

    .final       dict name -> float64 array ("w": P; "v": N x P;
                 "alpha": N)
    .trajectory  list of records {event, phase, round?, client?, step?,
                 name, value (float64 array)}
    .metrics     the result's metrics dict
    .raw         the pflref-result/1 document as a dict; .text its text
    .doc         the document with every array a float64 NumPy array, as
                 pflref.load_result returns it (w0, theta0, hypernetwork,
                 final, trajectory values)
    """

    def __init__(self, text):
        self.text = text
        self.raw = json.loads(text)
        self.final = {k: np.asarray(v, dtype=np.float64)
                      for k, v in self.raw.get("final", {}).items()}
        self.trajectory = [dict(r, value=np.asarray(r["value"],
                                                    dtype=np.float64))
                           for r in self.raw.get("trajectory", [])]
        self.metrics = self.raw.get("metrics", {})
        self.id = self.raw.get("id")
        self._doc = None

    @property
    def doc(self):
        if self._doc is None:
            self._doc = arrays_of(json.loads(self.text))
        return self._doc

    def __repr__(self):
        return "<pflref.Result %s: %d records>" % (
            self.id or self.raw.get("name"), len(self.trajectory))


def _spec_text(spec):
    """(text, base_dir) of a spec given as a dict, JSON text, a path or a
    Vector."""
    from ._vectors import Vector
    if isinstance(spec, Vector):
        return spec.text, spec.folder
    if isinstance(spec, dict):
        return json.dumps(spec, allow_nan=False), None
    if isinstance(spec, (bytes, bytearray)):
        spec = bytes(spec).decode("utf-8")
    if isinstance(spec, str) and spec.lstrip().startswith("{"):
        return spec, None
    if isinstance(spec, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(spec))
        with open(path, encoding="utf-8") as f:
            return f.read(), os.path.dirname(path)
    raise TypeError("spec: a dict, JSON text, a path or a Vector, not %s"
                    % type(spec).__name__)


def run(spec, base_dir=None):
    """Run the reference on a spec (pflref-spec/1) or a golden vector's
    spec, in-process: a dict, JSON text, a path or a Vector.  base_dir
    resolves a relative problem file (default: the file's folder, else the
    current one).  Raises pflref.InvalidInput (.where names the field) or
    pflref.DivergenceError (.round, .client, .step)."""
    text, folder = _spec_text(spec)
    return Result(_lib.run_text(text, base_dir if base_dir is not None
                                else folder))


def verify(vector):
    """Re-run a vector's spec through the reference and compare it with
    the vector's expectation (`pflref verify`): the library's report as a
    dict (format pflref-report/1)."""
    vector = as_vector(vector)
    return _lib.text_call("pflref_golden_verify_json", vector.text,
                          vector.folder)
