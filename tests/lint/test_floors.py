#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Self-test of tests/lint/floors.py: it must catch each broken rule.

Copies ref/, include/, cli/ and tests/lint/ into a temporary folder and
runs floors.py there, first on the unmodified copy (it must exit 0), then
once per case on a fresh copy with one deliberate fault planted: a
wrong-way include from an algorithm, a model and a public header, an
include cycle between two private headers, cli/ including a private header,
a library below its floor, over-long functions and files, a file outside a
floor, a repeated base name, a public header without extern "C", an
algorithm more than a tenth annotation, code (or a macro the compiler
would read) in a proof header and a proof header included from cli/.  For each
fault floors.py must exit 1 with a new message that names the planted file
and the rule.  Three controls at the limits (a function of exactly 80 lines,
a file of exactly 800, an algorithm exactly a tenth annotation) must add no
message.

    python3 tests/lint/test_floors.py [-v]   (make lint and make check run it)

It prints a line per failed case and a summary line (-v: every case).

Exit status: 0 every case as expected, 1 otherwise.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COPIED = ["ref", "include", "cli", os.path.join("tests", "lint"),
          os.path.join("proofs", "acsl")]


def run_floors(root):
    """floors.py's exit status and its messages (without the count line)."""
    p = subprocess.run([sys.executable,
                        os.path.join(root, "tests", "lint", "floors.py"),
                        "--root", root], capture_output=True, text=True)
    lines = [ln for ln in p.stderr.splitlines()
             if not ln.endswith("rule(s) broken")]
    return p.returncode, lines


def files(root, folder, ext=".c"):
    d = os.path.join(root, folder)
    out = sorted(os.path.join(folder, f) for f in os.listdir(d)
                 if f.endswith(ext))
    if not out:
        raise RuntimeError(f"no {ext} file in {folder}/ to plant into")
    return out


def first(root, folder, ext=".c"):
    return files(root, folder, ext)[0]


def shortest(root, folder):
    def length(rel):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return len(f.read().splitlines())
    return min(files(root, folder), key=length)


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read().splitlines()


def write(root, rel, lines):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def add_include(root, rel, line):
    """Insert `line` after the last #include of rel (or at its top)."""
    lines = read(root, rel)
    at = max([i + 1 for i, ln in enumerate(lines)
              if ln.lstrip().startswith("#include")] or [0])
    write(root, rel, lines[:at] + [line] + lines[at:])
    return rel


def long_function(n, same_line_brace=False):
    """A function whose body runs n lines, opening to closing brace."""
    if same_line_brace:
        head = ["static int planted_long(int x) {"]
    else:
        head = ["static int planted_long(int x)", "{"]
    body = ["    x += 1;"] * (n - 3) + ["    return x;"]
    return [""] + head + body + ["}"]


def append_function(root, n, same_line_brace=False):
    rel = shortest(root, "ref/algorithms")
    write(root, rel, read(root, rel) + long_function(n, same_line_brace))
    return rel


def pad_to(root, n):
    rel = shortest(root, "ref/core")
    lines = read(root, rel)
    write(root, rel, lines + ["/* padding */"] * (n - len(lines)))
    return rel


def cycle(root):
    """Two private headers of one floor that include each other."""
    for floor in sorted(os.listdir(os.path.join(root, "ref"))):
        d = os.path.join(root, "ref", floor)
        heads = sorted(f for f in os.listdir(d) if f.endswith(".h"))
        if len(heads) >= 2:
            a, b = (f"ref/{floor}/{h}" for h in heads[:2])
            add_include(root, a, f'#include "{floor}/{heads[1]}"')
            add_include(root, b, f'#include "{floor}/{heads[0]}"')
            return a, b
    raise RuntimeError("no floor with two private headers")


def drop_extern_c(root):
    rel = "include/pflref/status.h"
    lines = read(root, rel)
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "#ifdef __cplusplus" and i + 2 < len(lines) \
                and lines[i + 2].strip() == "#endif":
            i += 3
            continue
        out.append(lines[i])
        i += 1
    write(root, rel, out)
    return rel


def stray(root):
    rel = "ref/stray.c"
    write(root, rel, ["/* a file outside every floor */", "int stray;"])
    return rel


def same_base(root):
    src = first(root, "ref/core")
    rel = "ref/io/" + os.path.basename(src)
    shutil.copy(os.path.join(root, src), os.path.join(root, rel))
    return rel


def alg(root):
    return first(root, "ref/algorithms")


def annotate_to(root, tenths_over):
    """The shortest algorithm with ACSL lines appended (one block) until
    they are exactly a tenth of its lines (tenths_over = 0), or one line
    more than that (1).  Blank lines pad the file first so that a tenth is
    a whole number."""
    sys.path.insert(0, os.path.join(root, "tests", "lint"))
    try:
        import floors
    finally:
        sys.path.pop(0)
    rel = shortest(root, "ref/algorithms")
    lines = read(root, rel)
    have = len(floors.annotation_lines("\n".join(lines) + "\n"))
    # after padding to n lines and adding k annotation lines, have + k is
    # exactly (n + k) / 10 when 9k = n - 10·have
    n = len(lines)
    while (n - 10 * have) % 9 != 0 or n - 10 * have < 18:
        n += 1
    k = (n - 10 * have) // 9 + tenths_over
    block = (["/*@ predicate planted_true = \\true;"] +
             ["    // a planted annotation line"] * (k - 2) + [" */"])
    write(root, rel, lines + [""] * (n - len(lines)) + block)
    return rel


def proof_header_with_code(root):
    rel = "proofs/acsl/planted.h"
    write(root, rel, ["/* a proof header */", "int planted_code;"])
    return rel


def proof_header_macro_for_gcc(root):
    """A frame macro defined outside #ifdef __FRAMAC__: the compiler would
    read it."""
    rel = "proofs/acsl/planted.h"
    write(root, rel, ["/* a proof header */",
                      "#define PLANTED_FRAME(x) (x)[0 .. 1]"])
    return rel


# (name, plant(root) -> planted file(s), the rule's words in the message)
CASES = [
    ("an algorithm includes an io header",
     lambda r: add_include(r, alg(r), '#include "io/json.h"'),
     'the algorithms floor includes "io/json.h" of the higher io floor'),
    ("an algorithm includes an io header with <>",
     lambda r: add_include(r, alg(r), "#include <io/json.h>"),
     "the algorithms floor includes <io/json.h> of the higher io floor"),
    ("a model includes the oracle's public header",
     lambda r: add_include(r, first(r, "ref/models"),
                           '#include "pflref/golden.h"'),
     'the models floor includes "pflref/golden.h" of the higher oracle '
     'floor'),
    ("a model includes an algorithm header by a relative path",
     lambda r: add_include(r, first(r, "ref/models"),
                           '#include "../algorithms/algorithms.h"'),
     "the models floor includes \"../algorithms/algorithms.h\" of the "
     "higher algorithms floor"),
    ("an include cycle between two private headers", cycle,
     "include cycle"),
    ("cli/ includes a private header",
     lambda r: add_include(r, first(r, "cli"), '#include "engine/engine.h"'),
     'includes the private header "engine/engine.h" (cli/ sees only '
     'include/)'),
    ("cli/ includes a private header with <>",
     lambda r: add_include(r, first(r, "cli"), "#include <core/vec.h>"),
     "includes the private header <core/vec.h>"),
    ("a public header includes a private header",
     lambda r: add_include(r, "include/pflref/algorithm.h",
                           '#include "engine/engine.h"'),
     'a public header includes "engine/engine.h", which is not public'),
    ("a public header includes jansson",
     lambda r: add_include(r, "include/pflref/io.h", "#include <jansson.h>"),
     "a public header includes <jansson.h>, a library header"),
    ("a public header without extern \"C\"", drop_extern_c,
     'without an extern "C" block'),
    ("a function of 81 lines", lambda r: append_function(r, 81),
     "a function of 81 lines (at most 80)"),
    ("a function of 81 lines, brace on the signature line",
     lambda r: append_function(r, 81, same_line_brace=True),
     "a function of 81 lines (at most 80)"),
    ("a file of 801 lines", lambda r: pad_to(r, 801),
     "801 lines (at most 800)"),
    ("jansson included in a model",
     lambda r: add_include(r, first(r, "ref/models"), "#include <jansson.h>"),
     "includes <jansson.h>, which only the io floor and above may use"),
    ("GSL included in core",
     lambda r: add_include(r, first(r, "ref/core"),
                           "#include <gsl/gsl_vector.h>"),
     "includes <gsl/gsl_vector.h>, which only the models floor and above "
     "may use"),
    ("a source file outside every floor", stray,
     "not in a floor's folder"),
    ("two files of ref/ with one base name", same_base,
     "share a base name"),
    ("an algorithm more than a tenth annotation",
     lambda r: annotate_to(r, 1), "lines are annotation"),
    ("a proof header that holds code", proof_header_with_code,
     "a proof header holds code"),
    ("a proof header that defines a macro for the compiler",
     proof_header_macro_for_gcc, "a proof header holds code"),
    ("cli/ includes a proof header",
     lambda r: add_include(r, first(r, "cli"),
                           '#include "../proofs/acsl/pfedme.h"'),
     'includes the proof header "../proofs/acsl/pfedme.h"'),
]
# Controls at the limits: no message may be added.
CONTROLS = [
    ("a function of exactly 80 lines", lambda r: append_function(r, 80),
     None),
    ("a file of exactly 800 lines", lambda r: pad_to(r, 800), None),
    ("an algorithm exactly a tenth annotation", lambda r: annotate_to(r, 0),
     None),
]


def copy_tree(dst):
    for part in COPIED:
        shutil.copytree(os.path.join(ROOT, part), os.path.join(dst, part),
                        ignore=shutil.ignore_patterns("__pycache__"))


def main(argv):
    verbose = "-v" in argv
    failures = 0
    with tempfile.TemporaryDirectory(prefix="pflref-lint-") as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(clean)
        base_rc, base = run_floors(clean)
        if base_rc != 0:
            failures += 1
            print(f"FAIL clean copy: floors.py exits {base_rc}, not 0, on "
                  f"the unmodified tree ({len(base)} message(s); "
                  "python3 tests/lint/floors.py lists them)")
        elif verbose:
            print("ok   clean copy: floors.py exits 0")
        for k, (name, plant, words) in enumerate(CASES + CONTROLS):
            root = os.path.join(tmp, f"case{k}")
            shutil.copytree(clean, root)
            planted = plant(root)
            planted = [planted] if isinstance(planted, str) else planted
            rc, lines = run_floors(root)
            new = [ln for ln in lines if ln not in base]
            if k >= len(CASES):
                ok = not new and rc == base_rc
                why = f"exit {rc}, added: {new}"
            else:
                hits = [ln for ln in new if words in ln and
                        all(p in ln for p in planted)]
                ok = rc == 1 and bool(hits)
                why = (f"exit {rc}; wanted a new message naming "
                       f"{', '.join(planted)} and \"{words}\"; new: {new}")
            if not ok or verbose:
                print(f"{'ok  ' if ok else 'FAIL'} {name}"
                      + ("" if ok else f": {why}"))
            failures += not ok
    total = 1 + len(CASES) + len(CONTROLS)
    print(f"lint self-test: {total - failures}/{total} cases as expected "
          f"(floors.py on the clean tree, {len(CASES)} planted faults, "
          f"{len(CONTROLS)} controls at the limits)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
