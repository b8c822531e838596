#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Derive a golden vector's tolerance from a proved rounding bound: for a
vector frozen by `pflref freeze` (or any vector) whose run the replays of
proofs/gappa/make_vectors.py cover (proofs/README.md, table (c), "A
frozen vector's tolerance, proved").

The spec is replayed as make_vectors.py replays the shipped vectors: every
operation in the C's order, rounded and exact, as Gappa definitions.
Gappa then proves, for every expected number e_k, a bound B_k on the
distance between the reference's fp64 value and the exact value x_k (the
same formula in real arithmetic on the spec's doubles: the paper's
number), and the replay's guards show that the rounded run takes the
exact run's branches.  The vector's own numbers are then checked against
the theorem: |e_k − x_k| <= B_k for every k (exactly, on rationals), so
the replay is this vector's run.  The tolerance derived is

    atol = 2 max_k B_k (rounded up to two significant digits), rtol = 0,

which admits every candidate whose numbers lie as close to the exact
values as the reference's are proved to lie: |c_k − e_k| <= |c_k − x_k|
+ |x_k − e_k| <= 2 B_k.  A quantity (w, theta, v, ...) whose own bounds
are smaller gets its own atol, twice its largest bound, under
tolerance.per_quantity (at most 16, the tightest first).  A tolerance so derived is a theorem about the
reference, not a guess; `freeze`'s default (atol = rtol = 1e-10) stays
for the runs the replays do not cover.

    python3 proofs/gappa/derive_tolerance.py VECTOR [-o OUT]

Without -o it prints the bound, the tolerance and the `pflref freeze`
options that write it; with -o it writes VECTOR with that tolerance (and
its content hashes recomputed) to OUT.  Gappa's recorded answers are read
and written as by make_vectors.py when GAPPA_CACHE_READ and
GAPPA_CACHE_WRITE name folders; without them Gappa runs (seconds on a few
steps of a small model, longer as the run grows).

Exit status: 0 derived; 1 not derived: a number of the vector lies
outside its proved bound (the vector is not the replayed run), or the
derived atol is above the fp64 ceiling (1e-10); 2 usage, an unreadable
or ill-formed vector, a vector whose arrays are in files, or no Gappa;
4 no proved bound applies: the replays do not cover the run (a model,
layer or switch they do not model), or a branch of the run is too close
to call within the bounds.  Nothing is written unless the status is 0.
"""
import argparse
import json
import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "golden"))
import gappa_common as gc  # noqa: E402
import make_vectors as mv  # noqa: E402
import pflref_golden as pg  # noqa: E402


# A vector holds at most this many per-quantity tolerances
# (PFLREF_MAX_QUANTITY_TOLS, ref/io/vector.h; docs/formats.md)
MAX_QUANTITIES = 16


class NotDerived(Exception):
    """A reason, and the exit status it carries."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def load(path):
    """The vector at PATH, checked for what the replay reads."""
    try:
        with open(path, encoding="utf-8") as f:
            v = json.load(f)
    except OSError as e:
        raise NotDerived(2, f"{e.strerror}")
    except (ValueError, UnicodeDecodeError) as e:
        raise NotDerived(2, f"not JSON: {e}")
    if not isinstance(v, dict) or v.get("format") != pg.GOLDEN_FORMAT:
        raise NotDerived(2, f"format: not a {pg.GOLDEN_FORMAT} vector")
    for part in pg.FILES_PARTS:
        if part in v:
            raise NotDerived(2, f"{part}: the vector keeps its arrays in "
                             "files; freeze the spec with --arrays inline")
    for part in ("spec", "expected", "tolerance"):
        if not isinstance(v.get(part), dict):
            raise NotDerived(2, f"{part}: missing or not an object")
    exp = v["expected"]
    if not isinstance(exp.get("trajectory"), list) \
            or not isinstance(exp.get("final"), dict):
        raise NotDerived(2, "expected: needs a trajectory list and a final "
                         "object")
    return v


def replay_goals(v, name):
    """The replay's goals of V, each goal's exact value (a Fraction) and
    its quantity's name, the final w's numbers among them; NotDerived(4)
    when the replays do not cover the run."""
    try:
        t, recs, goals, exact = mv.replayed_goals(
            v, name, rounds_to_expected=False)
        traj = v["expected"]["trajectory"]
        # each goal's quantity: its record's name; the final v's, "v"
        names = [traj[i]["name"] if i < len(traj) else "v"
                 for i, _, _, _ in goals]
        final = v["expected"]["final"].get("w")
        if final is not None:
            last = mv.last_w(recs)
            if len(last) != len(final):
                raise SystemExit(f"{name}: final w: length")
            for j, ((r, x, ex), want) in enumerate(zip(last, final)):
                goals.append((f"final w[{j}]", r, x, want))
                exact.append(ex)
                names.append("w")
    except SystemExit as e:
        raise NotDerived(4, f"no proved bound applies: {e}")
    except Exception as e:      # the replays' own limits, unnamed
        raise NotDerived(4, "no proved bound applies: the replays do not "
                         f"cover this run ({type(e).__name__}: {e})")
    if not goals:
        raise NotDerived(4, "no proved bound applies: the vector expects no "
                         "number the replay computes")
    return t, goals, exact, names


def two_digits_up(q):
    """The least double with two significant decimal digits that is >= the
    rational Q > 0."""
    x = float(f"{float(q):.1e}")
    while Fraction(x) < q:
        m, e = f"{x:.1e}".split("e")
        x = float(f"{float(m) + 0.1:.1f}e{e}")
    return x


def derive(v, name):
    """(tolerance object, report lines) of vector V."""
    t, goals, exact, names = replay_goals(v, name)
    try:
        _, pairs, _, _, _, bounds = mv.proved_bounds(name, t, goals)
    except SystemExit as e:
        msg = str(e)
        if "gappa --version" in msg:
            raise NotDerived(2, "gappa is not installed (./deps.sh proofs "
                             "installs it)")
        raise NotDerived(4, "no proved bound applies: " + msg)
    except FileNotFoundError:
        raise NotDerived(2, "gappa is not installed (./deps.sh proofs "
                         "installs it)")
    most = {}                           # each quantity's largest bound
    for (i, r, x, want), ex, q in zip(goals, exact, names):
        b = bounds[pairs.index((r, x))]
        gap = abs(Fraction(want) - ex)
        if gap > b:
            where = i if isinstance(i, str) else f"record {i}"
            raise NotDerived(1, f"{where}: the vector's number {want!r} "
                             f"is {float(gap):.3g} from the exact value "
                             f"{float(ex)!r}, beyond its proved bound "
                             f"{float(b):.3g}: the vector is not the run "
                             "replayed (edited, or computed another way)")
        most[q] = max(most.get(q, Fraction(0)), b)
    bmax = max(most.values())
    atol = two_digits_up(2 * bmax)
    if atol > pg.TOLERANCE_CEILING:
        raise NotDerived(1, f"the proved bound {float(bmax):.3g} gives atol "
                         f"{atol:.2g}, above the fp64 ceiling "
                         f"{pg.TOLERANCE_CEILING:g}: the bound does not "
                         "show this run within the ceiling")
    ver = gc.gappa_version()

    def basis(n, b, what):
        return (f"proved (proofs/gappa/derive_tolerance.py, {ver}): at "
                f"each of the {n} expected numbers{what} Gappa proves the "
                f"fp64 reference within {float(b):.3g} ({gc.in_u(b)} u) of "
                "the exact value on the spec's inputs, and the number lies "
                "within that bound; atol = 2 x the bound admits every "
                "candidate whose numbers are as close to the exact values "
                "as the reference's are proved to be")

    tol = {"atol": atol, "rtol": 0.0, "basis": basis(len(goals), bmax, "")}
    # a quantity whose bound is smaller gets its own, tighter atol (at
    # most MAX_QUANTITIES of them, the smallest first)
    own = sorted((b, q) for q, b in most.items()
                 if two_digits_up(2 * b) < atol)[:MAX_QUANTITIES]
    if own:
        tol["per_quantity"] = {
            q: {"atol": two_digits_up(2 * b), "rtol": 0.0,
                "basis": basis(names.count(q), b, f" of {q}")}
            for b, q in sorted(own, key=lambda e: e[1])}
    n = len(goals)
    report = [f"{name}: {n} numbers, proved bound {float(bmax):.3g} "
              f"({gc.in_u(bmax)} u) at most",
              f"{name}: derived tolerance atol {atol!r}, rtol 0 "
              f"(the vector states atol {v['tolerance'].get('atol')!r}, "
              f"rtol {v['tolerance'].get('rtol')!r})"]
    report += [f"{name}: quantity {q}: atol {e['atol']!r}, rtol 0"
               for q, e in tol.get("per_quantity", {}).items()]
    report.append(f"{name}: pflref freeze SPEC -o VECTOR --atol {atol!r} "
                  f"--rtol 0 --basis '{tol['basis']}'"
                  + (" (the vector-wide tolerance; -o writes the "
                     "quantities' own too)" if own else ""))
    return tol, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vector")
    ap.add_argument("-o", dest="out", metavar="OUT",
                    help="write the vector with the derived tolerance")
    a = ap.parse_args()
    if a.out and os.path.abspath(a.out) == os.path.abspath(a.vector):
        print(f"derive_tolerance: {a.out}: the output is the input",
              file=sys.stderr)
        return 2
    try:
        v = load(a.vector)
        tol, report = derive(v, a.vector)
    except NotDerived as e:
        print(f"derive_tolerance: {a.vector}: {e}", file=sys.stderr)
        return e.status
    for line in report:
        print(line)
    if a.out:
        out = pg.with_hash(dict(v, tolerance=tol))
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.out)
        print(f"derive_tolerance: wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
