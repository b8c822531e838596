#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check a Gappa script whose goals are enclosures, `|e| in ?`, against
the bounds it states on its "# goal: |e| <= B" lines (proofs/README.md,
table (c); the scripts proofs/gappa/make_vectors.py marks "# check:
enclosure").

Gappa answers an `in ?` goal with an interval it has proved (it prints no
enclosure it has not proved), so |e| <= hi is a theorem, and hi <= B is
checked here exactly, on Gappa's dyadic numbers.  The check fails when
Gappa fails, when a stated goal has no answer, when an answer's upper end
exceeds its bound, or when the "# goal:" lines are not the proposition's
goals.

    python3 proofs/gappa/enclosure.py SCRIPT.g [--timeout S]

Exit status: 0 every stated bound holds, 1 otherwise, 2 usage or a
missing file.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gappa_common as gc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("script")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds Gappa may run (default: no limit)")
    a = ap.parse_args()
    try:
        text = open(a.script, encoding="utf-8").read()
    except OSError as e:
        print(f"enclosure: {a.script}: {e.strerror}", file=sys.stderr)
        return 2
    # Gappa reads the script without its comment lines (the "# goal:"
    # bounds among them), as make_vectors.py gave it to find them
    rc, out = gc.run_uncommented(text, timeout=a.timeout)
    if rc is None:
        print(f"enclosure: {a.script}: gappa ran longer than {a.timeout} s",
              file=sys.stderr)
        return 1
    if rc != 0:
        print(f"enclosure: {a.script}: gappa failed (exit {rc}):",
              file=sys.stderr)
        print("\n".join(out.splitlines()[-10:]), file=sys.stderr)
        return 1
    try:
        problems = gc.check_enclosures(text, out)
    except ValueError as e:
        problems = [str(e)]
    for p in problems:
        print(f"enclosure: {a.script}: {p}", file=sys.stderr)
    if not problems:
        print(f"enclosure: {a.script}: {len(gc.stated_goals(text))} "
              "stated bounds hold")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
