#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of proofs/gappa/derive_tolerance.py (a frozen vector's tolerance
derived from Gappa's proved bounds; proofs/README.md, table (c)).

It freezes shipped specs with the built CLI (PFLREF_CLI, else
build/rel/pflref) and derives their tolerances: on the linear model (its
BLAS products under the any-order allowance) and on fine-tuning's
quadratic model (a run whose final w is no server's); the vector written
must keep its spec and expected values, carry valid content hashes, state
the tolerance derived (rtol 0, atol twice the proved bound: far below the
default, and 0 where every operation is exact; a tighter atol of its own
for a quantity whose bounds are smaller) and reproduce under `pflref verify`.  And it requires the tool
to refuse, writing nothing: a frozen vector with one number moved off
the proved bound (exit 1), a run the replays do not cover (PFLEGO on a
CNN, exit 4), a vector in files form, a file that is not JSON or not a vector,
and an output that is its input (exit 2).  Needs Gappa: proofs/run.sh
runs it in its Gappa step, with the recorded answers of
proofs/gappa/cache (a miss runs Gappa, a few seconds here).

    python3 tests/lint/test_derive_tolerance.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "proofs", "gappa", "derive_tolerance.py")
sys.path.insert(0, os.path.join(ROOT, "golden"))
sys.path.insert(0, os.path.join(ROOT, "proofs", "gappa"))
import pflref_golden as pg  # noqa: E402
import derive_tolerance as dt  # noqa: E402

CLI = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel",
                                                     "pflref")


def freeze(tmp, vid, name, *extra):
    """The path of golden/VID.json's spec frozen by the CLI as NAME."""
    spec = os.path.join(tmp, name + ".spec.json")
    with open(os.path.join(ROOT, "golden", vid + ".json")) as f:
        json.dump(json.load(f)["spec"], open(spec, "w"))
    out = os.path.join(tmp, name + ".json")
    r = subprocess.run([CLI, "freeze", spec, "-o", out, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"freeze {vid}: exit {r.returncode}: "
                             f"{r.stderr}")
    return out


def derive(*args):
    r = subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    if not os.access(CLI, os.X_OK):
        print(f"test_derive_tolerance: {CLI} not found: build it first "
              "(make build/rel/pflref, or set PFLREF_CLI)")
        return 1
    fails = []

    def expect(ok, what):
        if not ok:
            fails.append(what)

    tmp = tempfile.mkdtemp()
    try:
        # derived: the linear model (a bound of some ulps), and
        # fine-tuning's quadratic model (each operation exact: atol 0)
        for vid, exact in (("fedavg/worked-uniform", False),
                           ("finetune/worked-mu0", True)):
            name = vid.replace("/", "_")
            src = freeze(tmp, vid, name)
            out = os.path.join(tmp, name + ".derived.json")
            rc, text = derive(src, "-o", out)
            expect(rc == 0, f"{vid}: exit {rc}, not 0: {text}")
            if rc != 0:
                continue
            a, b = json.load(open(src)), json.load(open(out))
            expect(a["spec"] == b["spec"] and a["expected"] == b["expected"],
                   f"{vid}: the spec or the expected values changed")
            expect(b["hash"] == pg.vector_hashes(b),
                   f"{vid}: the content hashes are not the vector's")
            tol = b["tolerance"]
            expect(tol["rtol"] == 0 and tol["basis"].startswith("proved")
                   and (tol["atol"] == 0 if exact
                        else 0 < tol["atol"] < 1e-12),
                   f"{vid}: tolerance {tol}")
            # atol is twice the bound the basis states, rounded up to two
            # digits
            stated = float(tol["basis"].split(" within ")[1].split()[0])
            expect(2 * stated * (1 - 1e-3) <= tol["atol"]
                   <= 2 * stated * 1.1 + 1e-300,
                   f"{vid}: atol {tol['atol']!r} is not twice the bound "
                   f"{stated!r} the basis states")
            # FedAvg's w (server and final) has smaller bounds than its
            # local steps: its own, tighter atol
            per = tol.get("per_quantity", {})
            expect(exact and not per or not exact and list(per) == ["w"]
                   and 0 < per["w"]["atol"] < tol["atol"]
                   and per["w"]["rtol"] == 0,
                   f"{vid}: per-quantity tolerances {per}")
            expect(f"--atol {tol['atol']!r} --rtol 0" in text,
                   f"{vid}: the freeze options are not printed: {text}")
            r = subprocess.run([CLI, "verify", out], capture_output=True,
                               text=True)
            expect(r.returncode == 0, f"{vid}: verify exit {r.returncode}: "
                   f"{r.stdout}{r.stderr}")
            # one number moved by 1e-9: outside its proved bound
            bad = json.load(open(src))
            bad["expected"]["trajectory"][-1]["value"][0] += 1e-9
            moved = os.path.join(tmp, name + ".moved.json")
            json.dump(bad, open(moved, "w"))
            gone = os.path.join(tmp, name + ".moved.out.json")
            rc, text = derive(moved, "-o", gone)
            expect(rc == 1 and "beyond its proved bound" in text
                   and not os.path.exists(gone),
                   f"{vid}: a moved number: exit {rc}: {text}")
        # PFLEGO on a CNN: no replay covers it
        cnn = freeze(tmp, "layers/pflego-deep-head-sgd", "cnn")
        gone = os.path.join(tmp, "cnn.out.json")
        rc, text = derive(cnn, "-o", gone)
        expect(rc == 4 and "no proved bound applies" in text
               and not os.path.exists(gone), f"cnn: exit {rc}: {text}")
        # the files form, not JSON, not a vector, the output its input
        files = freeze(tmp, "fedavg/worked-uniform", "files",
                       "--arrays", "files", "--inline-max", "0")
        rc, text = derive(files)
        expect(rc == 2 and "--arrays inline" in text,
               f"files form: exit {rc}: {text}")
        junk = os.path.join(tmp, "junk.json")
        open(junk, "w").write("{\"format\": ")
        rc, text = derive(junk)
        expect(rc == 2 and "not JSON" in text, f"not JSON: exit {rc}: {text}")
        open(junk, "w").write("{\"format\": \"pflref-spec/1\"}")
        rc, text = derive(junk)
        expect(rc == 2 and "format" in text, f"a spec: exit {rc}: {text}")
        src = os.path.join(tmp, "fedavg_worked-uniform.json")
        rc, text = derive(src, "-o", src)
        expect(rc == 2 and "the output is the input" in text,
               f"output = input: exit {rc}: {text}")
        # the rounding up: two significant digits, never below, the least
        for q in (Fraction(1, 3) * Fraction(10) ** -14, Fraction(89, 10 ** 16),
                  Fraction(2 ** -52), Fraction(999, 10 ** 12)):
            x = dt.two_digits_up(q)
            m = f"{x:.1e}".split("e")[0]
            lower = float(f"{float(m) - 0.1:.1f}e{f'{x:.1e}'.split('e')[1]}")
            expect(Fraction(x) >= q and float(f"{x:.1e}") == x
                   and (Fraction(lower) < q or m == "1.0"),
                   f"two_digits_up({float(q)!r}) = {x!r}")
    finally:
        shutil.rmtree(tmp)
    for f in fails:
        print(f"test_derive_tolerance: FAILED: {f}")
    if not fails:
        print("test_derive_tolerance: two frozen vectors derived and "
              "verified; a moved number, PFLEGO on a CNN, the "
              "files form, bad files and an output that is its input "
              "refused")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
