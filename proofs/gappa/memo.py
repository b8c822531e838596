#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Gappa on one script, or its recorded answer: prints what Gappa prints
and exits with Gappa's exit status, as `gappa SCRIPT` would.

proofs/gappa/check_one.sh calls it in place of gappa.  Where
proofs/run.sh names answer folders in the environment (GAPPA_CACHE_READ,
GAPPA_CACHE_WRITE; proofs/README.md, "The prover cache"), Gappa's
recorded answer to the identical script, from the identical Gappa, stands
in for a run, and a run's answer is recorded; without them Gappa runs.

    python3 proofs/gappa/memo.py SCRIPT.g

Exit status: Gappa's; 2 when the script cannot be read.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gappa_common as gc  # noqa: E402


def main():
    if len(sys.argv) != 2:
        print("usage: memo.py SCRIPT.g", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"memo: {sys.argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    rc, out = gc.run(text)
    sys.stdout.write(out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
