#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/detection/first_caught.py: does some golden vector catch one bug?

usage: first_caught.py --bug NAME [--pflref PFLREF] GOLDEN_DIR OUTDIR

Runs the NumPy candidate (docs/examples/pfl_numpy.py) with the catalogued
bug NAME switched on, vector by vector, and checks each result with
`pflref check VECTOR RESULT` as soon as it is written, stopping at the
first vector that tells the bug apart.  The vectors of the bug's own
algorithm (its "algorithm" in tests/detection/bugs*.json) come first, the
rest of GOLDEN_DIR after them, each group in sorted order.

The verdict is the one `pflref check GOLDEN_DIR` gives on the results of
every vector (exit 1 when at least one mismatches), at the cost of the
vectors up to the first that tells; tests/detection/run.sh runs it for
each bug of the catalogue.

Prints one line: the first divergence of the vector that caught the bug
("VECTOR_ID: quantity ...").  Exits
  0  caught: a vector mismatches (`pflref check` exit 1);
  1  missed: every vector the candidate runs passes;
  3  the candidate raised on a vector (other than Unsupported): the
     bug is not caught by the check, the candidate failed;
  4  a result is malformed (`pflref check` exit 2: NaN, a missing record);
  2  bad usage or an unknown bug.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "docs", "examples"))


def catalogue():
    """Every bug of bugs.json and bugs-*.json: name -> algorithm."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, "bugs.json")] + \
        sorted(glob.glob(os.path.join(here, "bugs-*.json")))
    out = {}
    for f in files:
        with open(f) as fh:
            for b in json.load(fh):
                out[b["name"]] = b["algorithm"]
    return out


def vectors(golden, algorithm):
    """The golden vectors under golden: those of algorithm first, then the
    others; each group in the sorted order of pfl_numpy.py --all."""
    own, rest = [], []
    for root, dirs, files in sorted(os.walk(golden)):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                try:
                    doc = json.load(f)
                except ValueError:
                    continue
            if not isinstance(doc, dict) or doc.get("format") != "pflref-golden/1":
                continue
            name_of = doc.get("spec", {}).get("algorithm", {}).get("name")
            (own if name_of == algorithm else rest).append(path)
    return own + rest


def divergence(report):
    """The report's first divergence as "ID: quantity ...", else its first
    line."""
    for line in report.splitlines():
        if line.startswith("FAIL ") and "first divergence: " in line:
            vid = line[5:].split(":", 1)[0]
            return vid + ": " + line.split("first divergence: ", 1)[1]
    lines = [l for l in report.splitlines() if l.strip()]
    return lines[0] if lines else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bug", required=True)
    ap.add_argument("--pflref", default=os.path.join(ROOT, "build", "rel", "pflref"))
    ap.add_argument("golden")
    ap.add_argument("out")
    args = ap.parse_args()
    bugs = catalogue()
    if args.bug not in bugs:
        print("first_caught.py: %s is not in the catalogue" % args.bug, file=sys.stderr)
        return 2
    import numpy as np
    np.seterr(all="ignore")
    import pfl_numpy
    if args.bug not in pfl_numpy.BUGS:
        print("first_caught.py: pfl_numpy.py does not know the bug %s" % args.bug,
              file=sys.stderr)
        return 2
    pfl_numpy.BUG = args.bug
    os.makedirs(args.out, exist_ok=True)
    for path in vectors(args.golden, bugs[args.bug]):
        try:
            result = pfl_numpy.run_file(path)
        except pfl_numpy.Unsupported:
            continue
        except Exception as e:          # noqa: the bug may raise anything
            print("%s: the candidate raised %s: %s"
                  % (path, type(e).__name__, str(e).splitlines()[0][:120] if str(e) else ""))
            return 3
        out = os.path.join(args.out, result["id"].replace("/", "__") + ".json")
        pfl_numpy.write_json(result, out)
        p = subprocess.run([args.pflref, "check", path, out], capture_output=True,
                           text=True)
        if p.returncode == 1:
            print(divergence(p.stdout))
            return 0
        if p.returncode != 0:
            print("%s: pflref check exited %d: %s"
                  % (path, p.returncode, divergence(p.stdout + p.stderr)))
            return 4
    print("every vector the candidate runs passes")
    return 1


if __name__ == "__main__":
    sys.exit(main())
