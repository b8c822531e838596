# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_golden.py: what every golden-vector generator shares.

  canonical(obj)       the canonical JSON text of a parsed JSON value
  content_hash(obj)    "sha256:" + SHA-256 hex of canonical(obj)
  vector_hashes(vector)
                       the vector's "hash" object: the digest of the whole
                       vector (every member but "hash") and one per part
                       (spec, expected, tolerance, flags, provenance)
  write_vector(path, vector)
                       fill "hash" (right after "id") and write the vector as
                       indent=1 JSON with a trailing newline
  exact(x)             the exact rational value of a double
  Trace, expected(), detects(), check_mutants()
                       exact-arithmetic trajectories, their conversion to
                       expected values, and the check that a vector's
                       expected numbers move under each bug it is flagged for
  checked_expected(vid, tol, flags, mutants, result, run, final)
                       expected() of a generator's run, after check_mutants
  given_spec(...), vector(...)
                       the envelope of a vector: the spec of a run on a given
                       schedule, and the golden vector around it
  write_all(argv, here, makers)
                       a generator's main(): write each vector into OUTDIR

The generators (golden/*/make_*.py) keep their own algorithm: the exact
arithmetic, the problem, the schedule and the checks against the paper or
the notes; what they take from here is only the envelope around it.

golden/README.md defines the canonical form; the C side (ref/io/canonical.c)
implements the same definition independently, and `pflref verify`,
`pflref check` and golden/lint.py all refuse a vector whose "hash" differs
from vector_hashes(vector), naming the part that changed.

Standard library only; run with /usr/bin/python3.
"""
import hashlib
import fractions
import json
import math
import os
from fractions import Fraction


# ---------------------------------------------------------------- gcd
#
# Every Fraction operation normalises with math.gcd, and the exact runs'
# numbers are mostly dyadic (binary inputs, step sizes and weights):
# denominators 2^k, or 2^k times a small odd factor (a batch of 3, a
# dropout scale 4/3), of thousands of bits, over numerators as long.
# CPython's gcd of two such numbers is quadratic in their length; with
# the factors of 2 taken out first (a shift), what remains has one small
# side and costs one division.  The gcd is the same number, so every
# Fraction and every vector is the same, only sooner.


_SHORT = 1 << 192      # an operand below this: math.gcd is fast already


def _gcd(a, b):
    """math.gcd(a, b) of two ints: 2^min(za, zb) · gcd(a/2^za, b/2^zb),
    za and zb their trailing zero bits."""
    if -_SHORT < a < _SHORT or -_SHORT < b < _SHORT:
        return math.gcd(a, b)
    za = (a & -a).bit_length() - 1
    zb = (b & -b).bit_length() - 1
    return math.gcd(a >> za, b >> zb) << (za if za < zb else zb)


class _FractionsMath:
    """The math module as fractions.py sees it (it calls math.gcd in every
    operation), with gcd through _gcd."""

    gcd = staticmethod(_gcd)

    def __getattr__(self, name):
        return getattr(math, name)


if fractions.math is math:
    fractions.math = _FractionsMath()

GOLDEN_FORMAT = "pflref-golden/1"
SPEC_FORMAT = "pflref-spec/1"
GOLDEN_DIR = os.path.dirname(os.path.abspath(__file__))
# "reference": pflref's own output on a user's problem (`pflref freeze`);
# never a shipped vector's (golden/lint.py refuses it under golden/).
PROVENANCE_KINDS = ("hand", "closed_form", "enumeration", "independent", "self",
                    "reference")
# The spec notes most vectors cite as their source (shared/spec).
NOTES = "shared/spec notes-fedavg-pfedme-ditto-perfedavg-apfl.md"

# ---------------------------------------------------------------- canonical


def _real(x):
    """A real as C's "%.17g", ".0" appended when the text has neither '.'
    nor 'e', then '+' and leading zeros of the exponent removed."""
    if not math.isfinite(x):
        raise ValueError(f"{x!r} is not a JSON number")
    s = format(x, ".17g")
    if "." not in s and "e" not in s:
        s += ".0"
    if "e" in s:
        mant, exp = s.split("e")
        sign = "-" if exp.startswith("-") else ""
        digits = exp.lstrip("+-").lstrip("0") or "0"
        s = mant + "e" + sign + digits
    return s


def _string(s):
    # ensure_ascii=True: '"' and '\\' escaped, \b \f \n \r \t by name, every
    # other character outside ' '..'~' as \u00xx / \uxxxx (lower-case hex),
    # beyond U+FFFF as a surrogate pair.
    s.encode("utf-8")      # refuses lone surrogates: not valid Unicode
    return json.dumps(s, ensure_ascii=True)


def _emit(v, out):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(str(int(v)))
    elif isinstance(v, float):
        out.append(_real(v))
    elif isinstance(v, str):
        out.append(_string(v))
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _emit(x, out)
        out.append("]")
    elif isinstance(v, dict):
        for k in v:
            if not isinstance(k, str):
                raise TypeError(f"object key {k!r} is not a string")
        out.append("{")
        for i, k in enumerate(sorted(v, key=lambda k: k.encode("utf-8"))):
            if i:
                out.append(",")
            out.append(_string(k))
            out.append(":")
            _emit(v[k], out)
        out.append("}")
    else:
        raise TypeError(f"{type(v).__name__} is not a JSON value")


def canonical(obj):
    """The canonical JSON text of a parsed JSON value (golden/README.md)."""
    out = []
    _emit(obj, out)
    return "".join(out)


def content_hash(obj):
    """"sha256:" followed by the lower-case hex SHA-256 of canonical(obj)."""
    return "sha256:" + hashlib.sha256(canonical(obj).encode("ascii")).hexdigest()


# The parts of a vector with a digest of their own in "hash", in the order
# written (golden/README.md, "Content hash"); "vector" covers every member
# but "hash" itself (format, id and title included).
HASH_PARTS = ("spec", "expected", "tolerance", "flags", "provenance")
# The parts of a vector in files (`pflref freeze --arrays files`,
# docs/formats.md, "Golden vectors in files"), digested when the vector has
# them: the manifest of its .npy files (so the hash covers their bytes) and
# the reference to its trajectory's values.  The shipped vectors have none.
FILES_PARTS = ("trajectory_values", "array_files")


def vector_hashes(vector):
    """The "hash" object of a vector: {"vector": content_hash of the vector
    without its "hash" member, then content_hash of each of HASH_PARTS, then
    of each of FILES_PARTS the vector has}."""
    body = {k: v for k, v in vector.items() if k != "hash"}
    out = {"vector": content_hash(body)}
    for part in HASH_PARTS:
        if part not in vector:
            raise ValueError(f"a vector needs {part!r}")
        out[part] = content_hash(vector[part])
    for part in FILES_PARTS:
        if part in vector:
            out[part] = content_hash(vector[part])
    return out


def with_hash(vector):
    """The vector with "hash" = vector_hashes(vector) placed right after
    "id"."""
    out = {}
    for k, v in vector.items():
        if k == "hash":
            continue
        out[k] = v
        if k == "id":
            out["hash"] = vector_hashes(vector)
    if "hash" not in out:
        raise ValueError("a vector needs an id")
    return out


def write_vector(path, vector):
    """Fill "hash" and write the vector: indent=1, ASCII, trailing newline."""
    v = with_hash(vector)
    assert v["format"] == GOLDEN_FORMAT and v["spec"]["format"] == SPEC_FORMAT
    assert v["provenance"]["kind"] in PROVENANCE_KINDS
    assert v["tolerance"]["basis"].strip()
    problems = tolerance_problems(v["tolerance"])
    assert not problems, f"{v['id']}: " + "; ".join(problems)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(v, f, indent=1)
        f.write("\n")
    print("wrote", v["id"])


# The widest fp64 tolerance a vector may hold without an argument
# (golden/README.md, "Tolerance"): ten times the widest tolerance of any
# vector when the ceiling was set (1e-11, the Hessian-free mlp run), a
# thousand times the reference's largest observed error (1.1e-13).  It must
# equal PFLREF_TOLERANCE_CEILING in ref/io/vector.h.
TOLERANCE_CEILING = 1e-10
# An argument for a wider tolerance ("tolerance.above_ceiling") must be at
# least this long and say something the basis does not.
ABOVE_CEILING_MIN_WORDS = 12


def tolerance_problems(tol):
    """What is wrong with a tolerance object: atol or rtol (of the whole
    vector or of a quantity) above TOLERANCE_CEILING without a non-trivial
    "above_ceiling" argument; an argument where none is needed; rtol >= 1."""
    problems = []
    entries = [("tolerance", tol)] + [
        (f"tolerance.per_quantity.{name}", q)
        for name, q in sorted(tol.get("per_quantity", {}).items())]
    wide = False
    for where, t in entries:
        for key in ("atol", "rtol"):
            x = t.get(key)
            if isinstance(x, (int, float)) and x > TOLERANCE_CEILING:
                wide = True
                if "above_ceiling" not in tol:
                    problems.append(f"{where}.{key} = {x!r} is above the fp64 ceiling "
                                    f"{TOLERANCE_CEILING!r} and tolerance.above_ceiling "
                                    "does not argue for it")
        r = t.get("rtol")
        if isinstance(r, (int, float)) and r >= 1:
            problems.append(f"{where}.rtol = {r!r}: a relative tolerance of 1 or more "
                            "accepts any value of the right sign")
    arg = tol.get("above_ceiling")
    if arg is not None:
        words = arg.split() if isinstance(arg, str) else []
        if not wide:
            problems.append("tolerance.above_ceiling argues for a tolerance that is not "
                            "above the ceiling: remove it")
        elif len(words) < ABOVE_CEILING_MIN_WORDS:
            problems.append(f"tolerance.above_ceiling has {len(words)} words: the argument "
                            f"needs at least {ABOVE_CEILING_MIN_WORDS}")
        elif arg.strip() == str(tol.get("basis", "")).strip():
            problems.append("tolerance.above_ceiling repeats the basis: say why the "
                            "reference cannot do better")
        elif not any(ch.isdigit() for ch in arg):
            problems.append("tolerance.above_ceiling names no number (an error bound, a "
                            "step size, a count of roundings)")
    return problems


def out_dir(argv, here):
    """OUTDIR from the command line, else the generator's own folder."""
    return argv[1] if len(argv) > 1 else here


def write_all(argv, here, makers):
    """A generator's main(): each make() in makers returns (file name,
    vector), written with write_vector into OUTDIR (out_dir(argv, here))."""
    out = out_dir(argv, here)
    for make in makers:
        fname, v = make()
        write_vector(os.path.join(out, fname), v)


# ---------------------------------------------------------------- envelope
#
# The key order below is the order of the written files (write_vector keeps
# insertion order), so it must not change: `make golden` would report every
# vector as differing.


def given_spec(name, description, model, clients, init, algorithm, rounds,
               split=None, post=None):
    """The spec ("pflref-spec/1") of a run on a given schedule, with the
    step-level trajectory as output.

    name         the spec's "name" (most generators pass the vector's title)
    description  free text, or None for none
    model, init, algorithm
                 the spec's objects, as written
    clients      the problem's clients (the "problem" object holds only them)
    rounds       the schedule's rounds, already in JSON form (e.g.
                 px.schedule_json or px.schedule_rounds of the run's plan)
    split        the parameter split ({"personal": [...]}), or None
    post         the schedule's post-training phase (fine-tuning), or None
    """
    spec = {"format": SPEC_FORMAT, "name": name}
    if description is not None:
        spec["description"] = description
    spec["model"] = model
    spec["problem"] = {"clients": clients}
    if split is not None:
        spec["split"] = split
    spec["init"] = init
    spec["algorithm"] = algorithm
    spec["schedule"] = {"kind": "given", "rounds": rounds}
    if post is not None:
        spec["schedule"]["post"] = post
    spec["output"] = {"trajectory": "step"}
    return spec


def vector(vid, title, prov, flags, spec, tol, exp):
    """The golden vector ("pflref-golden/1") around a spec: prov from
    provenance(), tol the tolerance {atol, rtol, basis}, exp the expected
    object (expected() or checked_expected()).  write_vector adds "hash"."""
    return {
        "format": GOLDEN_FORMAT,
        "id": vid,
        "title": title,
        "provenance": prov,
        "flags": flags,
        "spec": spec,
        "tolerance": tol,
        "expected": exp,
    }


# ---------------------------------------------------------------- exact values


def exact(x):
    """The exact value of the double x (so 2.385 means the double nearest
    2.385, exactly as the reference reads it from the spec)."""
    return Fraction(float(x))


def exact_vec(xs):
    return [exact(x) for x in xs]


def rational(q):
    """An exact value as the schema's rational string."""
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def provenance(kind, source, generator, exact_values=None):
    """The provenance object; "exact" only with the short rationals of
    exact_values (see small_exact)."""
    assert kind in PROVENANCE_KINDS
    p = {"kind": kind, "source": source, "generator": generator}
    short = small_exact(exact_values or {})
    if short:
        p["exact"] = short
    return p


def small_exact(named, limit=80):
    """{name: rational or [rationals]} for the values whose text is short;
    values of binary-input runs have denominators of hundreds of digits and
    are left out (the generator recomputes them)."""
    out = {}
    for k, v in named.items():
        text = [rational(q) for q in v] if isinstance(v, list) else rational(v)
        if max(len(t) for t in (text if isinstance(text, list) else [text])) <= limit:
            out[k] = text
    return out


# ---------------------------------------------------------------- trajectories


class Trace:
    """Records in the order and with the keys the reference emits (ref/
    core/trace.c): event, phase, round, client, step, name, value (exact)."""

    def __init__(self):
        self.records = []

    def emit(self, event, phase, rnd, client, step, name, value):
        r = {"event": event, "phase": phase}
        if rnd is not None:
            r["round"] = rnd
        if client is not None:
            r["client"] = client
        if step is not None:
            r["step"] = step
        r["name"] = name
        r["value"] = list(value)
        self.records.append(r)
        if _watch is not None:
            _watch.see(self, r)


def floats(xs):
    return [float(x) for x in xs]


def expected(trace, w=None, v=None, alpha=None):
    """The "expected" object: final {w, v, alpha} and the trajectory, each
    exact value written as its correctly rounded double."""
    final = {}
    if w is not None:
        final["w"] = floats(w)
    if v is not None:
        final["v"] = [floats(vi) for vi in v]
    if alpha is not None:
        final["alpha"] = floats(alpha)
    traj = [dict(r, value=floats(r["value"])) for r in trace.records]
    return {"final": final, "trajectory": traj}


def _table(exp):
    t = {}
    for r in exp["trajectory"]:
        key = (r["event"], r["phase"], r.get("round"), r.get("client"),
               r.get("step"), r["name"])
        t[key] = r["value"]
    fin = exp.get("final", {})
    if "w" in fin:
        t[("final", "final", None, None, None, "w")] = fin["w"]
    for i, vi in enumerate(fin.get("v", [])):
        t[("final", "final", None, i, None, "v")] = vi
    for i, ai in enumerate(fin.get("alpha", [])):
        t[("final", "final", None, i, None, "alpha")] = [ai]
    return t


def worst_error(exp, result, same_records=False):
    """The largest |x − r| / (1 + |r|) of a result's records (x) against
    the expected ones (r), for the random-problem checks: inf when an
    expected record is missing or of another length, or (same_records)
    when the result has records the expected trajectory lacks."""
    a = _table(exp)
    b = _table({"final": result["final"], "trajectory": result["trajectory"]})
    if same_records and set(a) != set(b):
        return float("inf")
    err = 0.0
    for key, ref in a.items():
        x = b.get(key)
        if x is None or len(x) != len(ref):
            return float("inf")
        for r, xv in zip(ref, x):
            err = max(err, abs(xv - r) / (1.0 + abs(r)))
    return err


def detects(exp, bug_exp, tol, margin=1000.0):
    """Does a run with the bug fail the vector by a wide margin?  Returns a
    description of the first difference, or None.  A record the buggy run
    lacks or adds counts (the checker reports missing records); a number
    counts when |x − r| > margin · (atol + rtol·|r|)."""
    a, b = _table(exp), _table(bug_exp)
    for key, ref in a.items():
        got = b.get(key)
        if got is None or len(got) != len(ref):
            return f"record {key} missing or of another length"
        for j, (r, x) in enumerate(zip(ref, got)):
            if not math.isfinite(x) or abs(x - r) > margin * (tol["atol"] + tol["rtol"] * abs(r)):
                return f"{key}[{j}]: {r!r} -> {x!r}"
    extra = set(b) - set(a)
    if extra:
        return f"extra record {sorted(extra, key=str)[0]}"
    return None


class _Diverged(BaseException):
    """Raised inside a mutant run by its watch (a BaseException, so no
    `except Exception` of a generator swallows it)."""


class MutantRuns:
    """detects(exp, run(), tol, margin) for many mutant runs of one vector,
    each stopped at its first record that already decides the verdict.

    The run's trace is compared with exp record by record as Trace.emit
    writes it: a record exp lacks, or one of another length or with a
    number beyond margin · (atol + rtol·|r|), fails the vector whatever
    the run writes later (the checker, ref/oracle/golden.c, holds every
    record written under an expected key to it, duplicates too, and reports
    an extra record), so the run stops there and diff() returns that
    record's description.  A run with no such record runs to its end and
    diff() returns detects() of what it returned (its final values and
    missing records).  The stop needs the written trace to be the one the
    run returns: it is armed only when exp's records have distinct keys
    and the first run, watched without stopping, wrote into one Trace
    alone; a later run that writes into a second Trace is disarmed from
    then on (and judged by detects() at its end)."""

    def __init__(self, exp, tol, margin=1000.0):
        self.exp, self.tol, self.margin = exp, tol, margin
        self.table = {}
        for r in exp["trajectory"]:
            self.table[(r["event"], r["phase"], r.get("round"), r.get("client"),
                        r.get("step"), r["name"])] = r["value"]
        self.armed = None if len(self.table) == len(exp["trajectory"]) else False
        self.stop, self.traces = False, []

    def see(self, trace, r):
        if not self.traces or trace is not self.traces[-1]:
            if trace in self.traces:
                return
            self.traces.append(trace)
        if not self.stop or len(self.traces) > 1:
            return
        key = (r["event"], r["phase"], r.get("round"), r.get("client"),
               r.get("step"), r["name"])
        ref = self.table.get(key)
        if ref is None:
            raise _Diverged(f"extra record {key}")
        got = r["value"]
        if len(got) != len(ref):
            raise _Diverged(f"record {key} missing or of another length")
        tol, m = self.tol, self.margin
        for j, (q, x) in enumerate(zip(ref, got)):
            x = float(x)    # an OverflowError: the run diverges, as in expected()
            if not math.isfinite(x) or abs(x - q) > m * (tol["atol"] + tol["rtol"] * abs(q)):
                raise _Diverged(f"{key}[{j}]: {q!r} -> {x!r}")

    def diff(self, run):
        """detects(exp, run(), tol, margin); run() returns an expected
        object; OverflowError and ZeroDivisionError propagate."""
        global _watch
        self.stop, self.traces = self.armed is True, []
        _watch, outer = self, _watch
        try:
            got = run()
        except _Diverged as e:
            return str(e)
        finally:
            _watch = outer
        if self.armed is None:
            self.armed = len(self.traces) == 1
        return detects(self.exp, got, self.tol, self.margin)


_watch = None       # the MutantRuns whose run is under way, or None


def check_mutants(vid, exp, tol, flags, mutants, run):
    """Every flag of the vector names at least one mutant, and each mutant
    (a bug of that class, run through the same exact code) changes an
    expected quantity by far more than the tolerance (MutantRuns: each
    mutant run stops at the first record that fails the vector).
    mutants: {flag: [bug, ...]}; run(bugs) -> expected object."""
    for f in flags:
        assert mutants.get(f), f"{vid}: flag {f} has no mutant demonstrating it"
    runs = MutantRuns(exp, tol)
    for f, bugs in mutants.items():
        assert f in flags, f"{vid}: mutant class {f} not among the flags"
        for bug in bugs:
            try:
                diff = runs.diff(lambda: run({bug}))
            except (OverflowError, ZeroDivisionError):
                diff = "the buggy run diverges"
            assert diff is not None, f"{vid}: bug {bug} ({f}) leaves every expected number in tolerance"


def checked_expected(vid, tol, flags, mutants, result, run, final):
    """The "expected" object of a generator's correct run, once
    check_mutants has shown that each flagged bug moves it beyond tol.

    result  what run() returned for the correct run
    run     run(bugs): the generator's own exact computation with those bugs
    final   final(*result) -> (trace, w, v) or (trace, w, v, alpha): picks
            the trace, the final global and personal models and the mixing
            weights out of a run's result (None when the algorithm has none)
    """
    def expected_of(res):
        return expected(*final(*res))

    exp = expected_of(result)
    check_mutants(vid, exp, tol, flags, mutants,
                  lambda bugs: expected_of(run(bugs)))
    return exp


# ---------------------------------------------------------------- self-test


def _self_test():
    """MutantRuns against detects() on a toy run of five records: the
    verdicts agree, a run that fails the vector stops at its first failing
    record, a run that passes is judged at its end (a MutantRuns that
    always or never stopped would fail here), and a run that writes into a
    second Trace is never stopped on the strength of either; and _gcd
    against math.gcd.  Exit 0 when every case holds."""
    tol = {"atol": 1e-12, "rtol": 1e-12}
    seen = []

    def run(bugs=(), aux=False):
        # x_s = x_{s-1}/2 + 1, five steps from 1; "late" moves the last
        # record only, "first" every record, "final" only the final w
        if aux:                       # a throwaway trace of other numbers
            Trace().emit("step", "train", 0, 0, 1, "w", [Fraction(7)])
        trace, x = Trace(), Fraction(1)
        for s in range(1, 6):
            x = x / 2 + 1 + (Fraction(1, 3) if "first" in bugs or
                             ("late" in bugs and s == 5) else 0)
            seen.append(s)
            trace.emit("step", "train", 0, 0, s, "w", [x])
        return expected(trace, w=[x + (1 if "final" in bugs else 0)])

    exp = run()
    problems = []
    for aux in (False, True):
        runs = MutantRuns(exp, tol)
        for bugs, stops_at in ((("first",), 1), ((), None), (("late",), 5),
                               (("final",), None), (("first",), 1)):
            del seen[:]
            # the first run is only watched; with aux no run is ever stopped
            stops = stops_at if runs.armed else None
            got = runs.diff(lambda: run(bugs, aux))
            want = detects(exp, run(bugs, aux), tol)
            if (got is None) != (want is None):
                problems.append(f"aux={aux} bugs={bugs}: {got!r} but detects() {want!r}")
            ran = len(seen) - 5       # the second run (detects') wrote five
            if ran != (stops or 5):
                problems.append(f"aux={aux} bugs={bugs}: ran {ran} steps, "
                                f"expected {stops or 5}")
        if runs.armed != (not aux):
            problems.append(f"aux={aux}: armed = {runs.armed}")
    # _gcd is math.gcd: signs, zeros, powers of 2, odd and mixed factors
    import random
    rng = random.Random(5)
    pairs = [(0, 0), (0, 12), (-12, 0), (-12, 18), (1 << 300, 3 << 200),
             (7, 1 << 64), (-(5 << 90), 15 << 3)]
    pairs += [(rng.getrandbits(rng.choice((8, 700))) << rng.randrange(900),
               (3 ** rng.randrange(6) * rng.getrandbits(rng.choice((2, 500))))
               << rng.randrange(900)) for _ in range(300)]
    for a, b in pairs:
        for x, y in ((a, b), (b, -a)):
            if _gcd(x, y) != math.gcd(x, y):
                problems.append(f"_gcd({x}, {y}) = {_gcd(x, y)}, not {math.gcd(x, y)}")
    if Fraction(6, -4) != Fraction(-3, 2) or str(Fraction(-3 << 80, 9 << 82)) != "-1/12":
        problems.append("Fraction normalises wrongly through _gcd")
    for p in problems:
        print(f"pflref_golden self-test: {p}")
    print(f"pflref_golden self-test: {'ok' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--self-test"]:
        print("usage: golden/pflref_golden.py --self-test", file=sys.stderr)
        sys.exit(2)
    sys.exit(_self_test())
