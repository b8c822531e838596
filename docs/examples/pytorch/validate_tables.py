#!/usr/bin/python3
"""validate_tables.py: docs/validate.md's record tables (section 4) against
the golden vectors.

For each algorithm of section 4, every event, record name and final key that
some vector of the algorithm expects must appear (in backticks) in its part
of the section, and every name in a table's `name` column must be expected
by some vector of the algorithm (or be listed in OPTIONAL with the reason no
vector expects it).  The tables are read from the text, the expectations
from every golden/**/*.json vector; neither from pflref's C.

usage: validate_tables.py [GOLDEN_DIR [VALIDATE_MD]]     exit 0 ok, 1 not
"""
import glob
import json
import os
import re
import sys

OPTIONAL = {   # documented names no shipped vector expects, and why
    ("interp", "test_accuracy"): "interp's vectors are regressions (test_mse)",
}


def expectations(root):
    """algorithm -> (events, names, final keys) its vectors expect."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.json"),
                                 recursive=True)):
        with open(path) as f:
            try:
                doc = json.load(f)
            except ValueError:
                continue
        if not isinstance(doc, dict) or doc.get("format") != "pflref-golden/1":
            continue
        events, names, finals = out.setdefault(
            doc["spec"]["algorithm"]["name"], (set(), set(), set()))
        for rec in doc["expected"]["trajectory"]:
            events.add(rec["event"])
            names.add(rec["name"])
        finals.update(doc["expected"]["final"])
    return out


def sections(text):
    """Section 4's parts: algorithm names -> their text."""
    body = text[text.index("## 4. "):text.index("## 5. ")]
    parts = {}
    for chunk in body.split("\n### ")[1:]:
        heading, _, rest = chunk.partition("\n")
        algs = heading.split(" (")[0].split(" and ")
        for a in algs:
            parts[a.strip()] = rest
    return parts


def name_column(part):
    """The backticked tokens of every table's `name` column."""
    names, col = set(), None
    for line in part.splitlines():
        if not line.startswith("|"):
            col = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if "name" in cells:
            col = cells.index("name")
        elif col is not None and not set(cells[0]) <= set("-"):
            names.update(re.findall(r"`([^`]+)`", cells[col]))
    return names


def main(argv):
    root = argv[0] if argv else "golden"
    md = argv[1] if len(argv) > 1 else "docs/validate.md"
    with open(md) as f:
        parts = sections(f.read())
    bad = []
    for alg, (events, names, finals) in sorted(expectations(root).items()):
        if alg not in parts:
            bad.append("%s: no part of section 4" % alg)
            continue
        part = parts[alg]
        if "fedavg's records" in part:
            part += parts["fedavg"]
        shown = set(re.findall(r"`([^`]+)`", part))
        for kind, tokens in (("event", events), ("name", names),
                             ("final key", finals)):
            bad += ["%s: %s `%s` expected by a vector, not in the table"
                    % (alg, kind, t) for t in sorted(tokens - shown)]
        for t in sorted(name_column(parts[alg]) - names):
            if (alg, t) not in OPTIONAL:
                bad.append("%s: name `%s` in the table, expected by no "
                           "vector" % (alg, t))
    for line in bad:
        print("validate_tables: " + line)
    print("validate_tables: %d algorithms' record tables %s"
          % (len(parts), "disagree with the vectors" if bad
             else "agree with every vector's expectations"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
# SPDX-License-Identifier: GPL-3.0-or-later
