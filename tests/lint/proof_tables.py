#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""proofs/README.md's tables against the sources (issue 36).

Run from the repository root (or give it with --root).  It reads

  * the WP jobs of proofs/run.sh (JOBS: name | file | kind | functions):
    every function a job of a kind other than `lemmas` proves;
  * every ACSL function contract in ref/, include/ and proofs/acsl/: an
    ACSL block (/*@ ... */ or //@ lines) holding requires, ensures,
    assigns, ... and followed by a function's declaration or definition;
  * every file-scope ghost declaration, axiomatic block, admit or check
    clause and `assumes`-only contract marker (none today but the ghosts);

and fails (exit 1), naming what is missing or stale, unless

  (a) the table under "### (a)" (the functions with functional contracts)
      and the one under "### (a')" (shape and safety only) name, together,
      every (file, function) that a WP job proves, each once, and nothing
      else; a function called functional has an `ensures` clause;
  (d) the table under "### (d)" (the trusted list) names every contract
      on a function that no WP job proves, keyed by the file holding the
      contract (a restated contract in another file is another row), every
      file-scope ghost, axiomatic and admit, and the functions of the
      `calls` jobs (whose assigns clauses those jobs use but do not prove:
      `-wp-prop` there leaves out @assigns); and nothing else;
  (c) section "### (c)" (the floating-point bounds, up to "### (d)") names
      every Gappa script of proofs/gappa/kernels/ and proofs/gappa/vectors/
      (`proofs/gappa/DIR/NAME.g`; `DIR/P_2.g` … `P_8.g` names the range
      P_2..P_8), and no script that is not there.

A table row names its file in the first cell (an empty cell: the row
above's file) and its functions, in backquotes, in the second.

    python3 tests/lint/proof_tables.py [--root DIR] [--list]

--list prints what it extracted (the jobs' functions and the trusted
contracts) instead of checking.  Its self-test is
tests/lint/test_proof_tables.py (make check-lint).
Exit status: 0 the tables agree with the sources, 1 otherwise, 2 usage.
"""
import argparse
import os
import re
import sys

SOURCE_DIRS = ["ref", "include", os.path.join("proofs", "acsl")]
README = os.path.join("proofs", "README.md")
RUN_SH = os.path.join("proofs", "run.sh")

ACSL = re.compile(r"/\*@(.*?)\*/|((?:[ \t]*//@[^\n]*\n)+)", re.S)
CONTRACT = re.compile(r"\b(requires|ensures|assigns|behavior|terminates|"
                      r"exits|allocates|frees|assumes)\b")
NOT_A_CONTRACT = re.compile(r"^\s*(loop|assert|check|admit|ghost|predicate|"
                            r"logic|lemma|axiomatic|inductive|type|global|"
                            r"invariant)\b")
KEYWORDS = {"for", "while", "if", "do", "switch", "return", "sizeof"}
FUNCTIONAL = "functional"
SHAPE = "shape/safety"


def jobs(root):
    """[(name, file, kind, [functions])] of run.sh's JOBS."""
    text = open(os.path.join(root, RUN_SH), encoding="utf-8").read()
    m = re.search(r"^JOBS='(.*?)'$", text, re.S | re.M)
    if not m:
        raise SystemExit("proof_tables: no JOBS='...' in proofs/run.sh")
    out = []
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        name, file, kind, fns = (f.strip() for f in line.split("|"))
        out.append((name, file, kind, [f.strip() for f in fns.split(",")]))
    return out


def proved(root):
    """{(file, function): set of job kinds} for the non-lemma jobs."""
    out = {}
    for _, file, kind, fns in jobs(root):
        if kind == "lemmas":
            continue
        for f in fns:
            out.setdefault((file, f), set()).add(kind)
    return out


def source_files(root):
    for d in SOURCE_DIRS:
        for dp, _, fs in os.walk(os.path.join(root, d)):
            for f in sorted(fs):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dp, f), root)


def contracts(root):
    """[(file, line, function, has_ensures, has_assigns)]: every function
    contract."""
    out = []
    for rel in source_files(root):
        src = open(os.path.join(root, rel), encoding="utf-8").read()
        for m in ACSL.finditer(src):
            body = m.group(1) if m.group(1) is not None else m.group(2)
            body = body.replace("//@", " ")
            if not CONTRACT.search(body) or NOT_A_CONTRACT.match(body):
                continue
            rest = src[m.end():m.end() + 800]
            # plain comments (a requirement tag among them) may stand between the two
            rest = re.sub(r"^(\s*/\*(?!@).*?\*/)*\s*", "", rest, flags=re.S)
            if rest.startswith(("/*@", "//@")):
                continue
            head = re.split(r"[;{]", rest, 1)[0]
            name = re.search(r"(\w+)\s*\(", head)
            if not name or name.group(1) in KEYWORDS:
                continue
            line = src.count("\n", 0, m.start()) + 1
            out.append((rel, line, name.group(1),
                        re.search(r"\bensures\b", body) is not None,
                        re.search(r"\bassigns\b", body) is not None))
    return out


def other_trust(root):
    """[(file, line, name)]: file-scope ghosts, axiomatics, admits."""
    out = []
    for rel in source_files(root):
        src = open(os.path.join(root, rel), encoding="utf-8").read()
        for m in re.finditer(r"^/\*@\s*ghost\s+[^;]*?(\w+)\s*(?:\[[^\]]*\]\s*)*;",
                             src, re.M):
            out.append((rel, src.count("\n", 0, m.start()) + 1, m.group(1)))
        for m in re.finditer(r"\baxiomatic\s+(\w+)", src):
            out.append((rel, src.count("\n", 0, m.start()) + 1, m.group(1)))
        for m in re.finditer(r"(/\*@|//@)\s*(admit|check)\b", src):
            out.append((rel, src.count("\n", 0, m.start()) + 1,
                        m.group(2) + "@" + str(src.count("\n", 0,
                                                         m.start()) + 1)))
    return out


def trusted(root):
    """{(file, name): why it is listed} of what the proofs trust."""
    prov = proved(root)
    by_name = {f for (_, f) in prov}
    out = {}
    assigns = set()
    for rel, line, fn, _, has_assigns in contracts(root):
        if has_assigns:
            assigns.add((rel, fn))
            assigns.add(fn)
        if (rel, fn) in prov:
            continue
        # a contract on a header's declaration binds the definition that
        # a job proves in its .c file
        if rel.endswith(".h") and fn in by_name:
            continue
        out[(rel, fn)] = f"{rel}:{line}: the contract of {fn}, not proved"
    for rel, line, name in other_trust(root):
        out[(rel, name)] = f"{rel}:{line}: {name}"
    for (file, fn), kinds in prov.items():
        stated = (file, fn) in assigns or (
            fn in assigns and not any(k[1] == fn and k[0].endswith(".c")
                                      and k[0] != file for k in
                                      assigns if isinstance(k, tuple)))
        if stated and kinds & {"calls", "calls_in_reals"} and not kinds & {
                "rte", "rte_real", "calls_real"}:
            out[(file, fn)] = (f"{file}: {fn}'s assigns clause (its `calls` "
                               "job does not prove @assigns)")
    return out


def table(readme, heading):
    """{(file, function): row cells} of the table after the heading that
    starts with HEADING, up to the next heading; None if there is none."""
    lines = readme.splitlines()
    start = None
    for i, ln in enumerate(lines):
        if ln.startswith("#") and ln.lstrip("#").strip().startswith(heading):
            start = i + 1
            break
    if start is None:
        return None
    rows = {}
    dup = []
    file = ""
    for ln in lines[start:]:
        if ln.startswith("#"):
            break
        if not ln.startswith("|") or re.match(r"^\|[\s|:-]*\|\s*$", ln):
            continue
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if cells[0] in ("file", "where"):
            continue
        first = re.findall(r"`([^`]+)`", cells[0])
        if first:
            file = first[0]
        for fn in re.findall(r"`([A-Za-z_]\w*)`", cells[1] if len(cells) > 1
                             else ""):
            if (file, fn) in rows:
                dup.append((file, fn))
            rows[(file, fn)] = cells
    return rows, dup


GAPPA_DIRS = [os.path.join("proofs", "gappa", "kernels"),
              os.path.join("proofs", "gappa", "vectors")]


def gappa_scripts(root):
    """{proofs/gappa/DIR/NAME.g} on disk."""
    out = set()
    for d in GAPPA_DIRS:
        full = os.path.join(root, d)
        if os.path.isdir(full):
            out |= {d.replace(os.sep, "/") + "/" + f
                    for f in os.listdir(full) if f.endswith(".g")}
    return out


def section(readme, start, end):
    """The text from the heading starting with START to the one starting
    with END (### level), or None."""
    m = re.search(r"^###\s*" + re.escape(start) + r".*?(?=^###\s*"
                  + re.escape(end) + r")", readme, re.S | re.M)
    return m.group(0) if m else None


def listed_scripts(text):
    """The scripts section (c) names: `proofs/gappa/DIR/NAME.g`, and
    `DIR/P_A.g` … `P_B.g` for P_A..P_B."""
    out = set()
    pat = re.compile(r"`(proofs/gappa/[\w/]+?/)([\w.-]+?)\.g`"
                     r"(?:\s*…\s*`(\w+?)\.g`)?")
    for m in pat.finditer(text):
        d, first, last = m.group(1), m.group(2), m.group(3)
        out.add(d + first + ".g")
        if last:
            a = re.fullmatch(r"(.*?)(\d+)", first)
            b = re.fullmatch(r"(.*?)(\d+)", last)
            if a and b and a.group(1) == b.group(1):
                for k in range(int(a.group(2)), int(b.group(2)) + 1):
                    out.add(d + a.group(1) + str(k) + ".g")
            else:
                out.add(d + last + ".g")
    return out


def check(root):
    errors = []
    try:
        readme = open(os.path.join(root, README), encoding="utf-8").read()
    except OSError as e:
        return [f"{README}: {e}"]
    prov = proved(root)
    ensures = {}
    for rel, _, fn, ens, _ in contracts(root):
        ensures.setdefault(fn, False)
        ensures[fn] = ensures[fn] or ens

    got = {}
    for heading in ("(a)", "(a')"):
        t = table(readme, heading)
        if t is None:
            errors.append(f"{README}: no table under a heading '{heading}'")
            continue
        rows, dup = t
        for k in dup:
            errors.append(f"{README}: table {heading} names {k[1]} of "
                          f"{k[0]} twice")
        for k, cells in rows.items():
            if k in got:
                errors.append(f"{README}: {k[1]} of {k[0]} is in both "
                              "tables (a) and (a')")
            got[k] = (heading, cells)
    for k in sorted(prov):
        if k not in got:
            errors.append(f"{README}: tables (a)/(a') miss {k[1]} of {k[0]}, "
                          "which a WP job of proofs/run.sh proves")
    for k, (heading, cells) in sorted(got.items()):
        if k not in prov:
            errors.append(f"{README}: table {heading} names {k[1]} of {k[0]}, "
                          "which no WP job of proofs/run.sh proves")
            continue
        want = FUNCTIONAL if heading == "(a)" else SHAPE
        if len(cells) < 3 or cells[2] != want:
            errors.append(f"{README}: table {heading}, {k[1]}: the third "
                          f"cell must be '{want}'")
        if heading == "(a)" and not ensures.get(k[1]):
            errors.append(f"{README}: table (a) calls {k[1]} functional, "
                          "but its contract has no ensures clause")

    sec = section(readme, "(c)", "(d)")
    if sec is None:
        errors.append(f"{README}: no section '### (c)' before '### (d)'")
    else:
        have, named = gappa_scripts(root), listed_scripts(sec)
        for g in sorted(have - named):
            errors.append(f"{README}: table (c) does not name the Gappa "
                          f"script {g}")
        for g in sorted(named - have):
            errors.append(f"{README}: table (c) names {g}, which is not "
                          "there")

    t = table(readme, "(d)")
    if t is None:
        errors.append(f"{README}: no table under a heading '(d)'")
    else:
        rows, dup = t
        for k in dup:
            errors.append(f"{README}: table (d) names {k[1]} of {k[0]} twice")
        want = trusted(root)
        for k in sorted(want):
            if k not in rows:
                errors.append(f"{README}: the trusted list (d) misses "
                              f"{want[k]}")
        for k in sorted(rows):
            if k not in want:
                errors.append(f"{README}: the trusted list (d) names {k[1]} "
                              f"of {k[0]}, which is no trusted contract "
                              "there (proved, or gone)")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for k, kinds in sorted(proved(a.root).items()):
            print("proved", k[0], k[1], ",".join(sorted(kinds)))
        for k, why in sorted(trusted(a.root).items()):
            print("trusted", k[0], k[1], "--", why)
        return 0
    errors = check(a.root)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"proof_tables: {len(errors)} disagreement(s) between "
              f"{README} and the sources", file=sys.stderr)
        return 1
    n = len(proved(a.root))
    print(f"proof_tables: tables (a), (a'), (c) and (d) agree with the "
          f"sources ({n} proved functions, {len(gappa_scripts(a.root))} "
          f"Gappa scripts, {len(trusted(a.root))} trusted entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
