#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The architecture's rules, checked on the source tree (docs/architecture.md).

Run from the repository root (or give it with --root).  It fails (exit 1),
naming the file, the line and the rule, when

  * a file of ref/<floor>/ includes a header of a higher floor (the floors,
    lowest first: core, models, sampling, engine, algorithms, io, oracle),
    or a public header includes one of a higher floor;
  * a public header (include/) includes anything but public headers, so no
    private header of ref/ is reachable from include/;
  * a public header that declares functions has no extern "C" block;
  * a library is included below the floor that may use it: jansson only in
    io and above, GSL and OpenBLAS from models up; public headers name none;
  * cli/ includes a private header of ref/ (it sees only include/);
  * a project header or source includes itself through a cycle;
  * a file of ref/ lies outside a floor's folder, or two files of ref/ share
    a base name (one static library holds them);
  * a source file of ref/, cli/ or include/ is longer than 800 lines, or a
    function in one is longer than 80 lines, counted from the line of its
    opening brace to the line of its closing brace (data tables are
    initialisers, not functions, and are not counted);
  * an algorithm (a .c file of ref/algorithms/) is more than a tenth
    annotation: lines inside
    an ACSL block (/*@ ... */) or on an ACSL line (//@) over all its lines
    (an algorithm is read beside the paper; predicates, shapes and lemmas
    live in proof headers, proofs/README.md);
  * a proof header (proofs/acsl/*.h) holds anything the compiler reads
    (it holds ACSL comments, and frame macros only under #ifdef
    __FRAMAC__), or is included from outside ref/.
Quoted and angle-bracket includes are both checked: an angle-bracket name
that is a file of include/ or ref/ is a project header like a quoted one.
Exit status: 0 clean, 1 a rule broken, 2 usage.
"""
import argparse
import os
import re
import sys

FLOORS = ["core", "models", "sampling", "engine", "algorithms", "io", "oracle"]
# The floor of each public header: a file may include a public header of its
# own floor or one below, like a private one.
PUBLIC = {
    "pflref/version.h": "core", "pflref/status.h": "core",
    "pflref/trace.h": "core", "pflref/metrics.h": "core",
    "pflref/dtoa.h": "core",
    "pflref/model.h": "models", "pflref/problem.h": "models",
    "pflref/sampler.h": "sampling", "pflref/schedule.h": "sampling",
    "pflref/hyper.h": "engine", "pflref/hyper_baselines.h": "engine",
    "pflref/hyper_personal.h": "engine",
    "pflref/algorithm.h": "engine",
    "pflref/io.h": "io", "pflref/golden.h": "oracle",
    "pflref.h": "oracle",
}
# Libraries a floor may include (beyond the C library), by the start of the
# header's name: GSL and OpenBLAS from models up, jansson only where JSON is
# read and written.  Public headers include none of them.
LIBRARY_FLOOR = {"gsl/": "models", "cblas.h": "models", "openblas": "models",
                 "jansson.h": "io"}
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
# The largest share of annotation lines in an algorithm (ref/algorithms/*.c).
MAX_ANNOTATION_SHARE = 0.10
# The folder of the proof headers: ACSL only, included by the file of ref/
# whose proofs read them.
PROOF_HEADERS = "proofs/acsl"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
ORDER = " < ".join(FLOORS)


def rank(floor):
    return FLOORS.index(floor)


def library_floor(name):
    for prefix, floor in LIBRARY_FLOOR.items():
        if name.startswith(prefix):
            return floor
    return None


def includes(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1) == '"', m.group(2)


def resolve(name, quoted, from_path, root):
    """The project file an include names (the compiler's search: the
    including file's folder for a quoted name, then -Iinclude -Iref), or
    None (a system or library header)."""
    bases = [os.path.dirname(from_path)] if quoted else []
    bases += [os.path.join(root, "include"), os.path.join(root, "ref")]
    for base in bases:
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return p
    return None


def classify(path, root):
    """('public', name, floor), ('private', name, floor), ('cli', name,
    None) or ('other', name, None) for a project file."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == "include":
        name = "/".join(parts[1:])
        return "public", name, PUBLIC.get(name)
    if parts[0] == "ref" and len(parts) == 3 and parts[1] in FLOORS:
        return "private", rel, parts[1]
    if parts[0] == "cli":
        return "cli", rel, None
    if rel.startswith(PROOF_HEADERS + "/") and rel.endswith(".h"):
        return "proof", rel, None
    return "other", rel, None


def check_include(rel, n, quoted, name, path, root, floor, kind, errors):
    """One include of the file `rel`, of `kind` ref, public or cli."""
    shown = f'"{name}"' if quoted else f"<{name}>"
    target = resolve(name, quoted, path, root)
    if target is None:
        lib = library_floor(name)
        if lib is None:
            if quoted and kind != "cli":
                errors.append(f"{rel}:{n}: {shown} is neither a public "
                              "header nor a header of a floor")
            return
        if kind == "public":
            errors.append(f"{rel}:{n}: a public header includes {shown}, a "
                          "library header (public headers name no library)")
        elif kind == "ref" and rank(floor) < rank(lib):
            errors.append(f"{rel}:{n}: includes {shown}, which only the "
                          f"{lib} floor and above may use ({ORDER})")
        return
    tkind, tname, tfloor = classify(target, root)
    if tkind == "proof":
        if kind != "ref":
            errors.append(f"{rel}:{n}: includes the proof header {shown} "
                          "(only a file of ref/ includes one)")
        return
    if kind == "cli":
        if tkind == "private" or tkind == "other":
            errors.append(f"{rel}:{n}: includes the private header {shown} "
                          "(cli/ sees only include/)")
        return
    if kind == "public" and tkind != "public":
        errors.append(f"{rel}:{n}: a public header includes {shown}, which "
                      "is not public (public headers include only "
                      "include/; no private header may be reachable)")
        return
    if tkind not in ("public", "private") or tfloor is None:
        errors.append(f"{rel}:{n}: {shown} is neither a public header nor "
                      "a header of a floor")
        return
    if rank(tfloor) > rank(floor):
        errors.append(f"{rel}:{n}: the {floor} floor includes {shown} of "
                      f"the higher {tfloor} floor (the floors, lowest "
                      f"first: {ORDER})")


def check_file(path, floor, kind, root, errors):
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    for n, quoted, name in includes(path):
        check_include(rel, n, quoted, name, path, root, floor, kind, errors)


def source_files(d):
    """Every .c and .h below d, sorted, as paths."""
    out = []
    for dirpath, dirs, names in os.walk(d):
        dirs.sort()
        out += [os.path.join(dirpath, f) for f in sorted(names)
                if f.endswith((".c", ".h"))]
    return out


def check_floors(root, errors):
    ref = os.path.join(root, "ref")
    for path in source_files(ref):
        kind, rel, floor = classify(path, root)
        if kind != "private":
            errors.append(f"{rel}: not in a floor's folder (ref/<floor>/, "
                          f"the floors: {', '.join(FLOORS)})")
            continue
        check_file(path, floor, "ref", root, errors)
    for path in source_files(os.path.join(root, "include")):
        _, name, floor = classify(path, root)
        if floor is None:
            errors.append(f"include/{name}: a public header without a "
                          "floor (add it to PUBLIC in tests/lint/floors.py)")
            continue
        check_file(path, floor, "public", root, errors)
        check_extern_c(path, root, errors)
    for path in source_files(os.path.join(root, "cli")):
        check_file(path, None, "cli", root, errors)


def strip_code(text):
    """text with comments, string and character literals blanked out
    (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_extern_c(path, root, errors):
    """A public header that declares a function wraps it in extern "C"."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    code = strip_code(text)
    declares = re.search(r"\b[A-Za-z_]\w*\s*\([^;{}]*\)\s*;", code)
    if declares and 'extern "C"' not in text:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        errors.append(f"{rel}: declares functions without an extern \"C\" "
                      "block (#ifdef __cplusplus), so C++ cannot link them")


def check_cycles(root, errors):
    files = []
    for top in ("ref", "include", "cli"):
        files += source_files(os.path.join(root, top))
    graph = {}
    for f in files:
        graph[f] = [r for _, quoted, name in includes(f)
                    for r in [resolve(name, quoted, f, root)] if r is not None]
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cyc = stack[stack.index(nxt):] + [nxt]
                errors.append("include cycle: " + " -> ".join(
                    os.path.relpath(c, root) for c in cyc))
            elif state.get(nxt) is None:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for f in files:
        if state.get(f) is None:
            visit(f, [])


def check_names(root, errors):
    seen = {}
    for path in source_files(os.path.join(root, "ref")):
        f = os.path.basename(path)
        if not f.endswith(".c"):
            continue
        rel = os.path.relpath(path, root)
        base = f[:-2]
        if base in seen:
            errors.append(f"ref: {seen[base]} and {rel} share a base name "
                          "(one archive holds both)")
        seen[base] = rel


def functions(lines):
    """(first line, length, signature) of each function definition: a
    brace at file level whose preceding code ends with ')' (a parameter
    list), up to its matching closing brace.  Comments, strings and
    preprocessor lines (with their continuations) are ignored; an
    initialiser ('= {') or a struct body is not a function, and an
    extern "C" block is transparent."""
    code = strip_code("\n".join(lines)).split("\n")
    stack, start, sig, last, directive = [], None, "?", "", False
    for i, line in enumerate(code):
        if directive or line.lstrip().startswith("#"):
            directive = line.rstrip().endswith("\\")
            continue
        for c in line:
            if c == "{":
                outside = all(b == "extern" for b in stack)
                if outside and last == ")":
                    start, sig = i, signature(lines, code, i)
                    stack.append("function")
                else:
                    stack.append("extern" if outside and last == '"'
                                 else "block")
            elif c == "}" and stack:
                if stack.pop() == "function" and start is not None:
                    yield start + 1, i - start + 1, sig
                    start = None
            if not c.isspace():
                last = c


def signature(lines, code, i):
    """The line that names the function whose body opens on line i."""
    j = i
    while j >= 0 and not re.search(r"[A-Za-z_]\w*\s*\(", code[j]):
        j -= 1
    return lines[j].strip() if j >= 0 else "?"


def check_sizes(root, errors):
    for top in ("ref", "cli", "include"):
        for path in source_files(os.path.join(root, top)):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            if len(lines) > MAX_FILE_LINES:
                errors.append(f"{rel}: {len(lines)} lines (at most "
                              f"{MAX_FILE_LINES})")
            for first, n, sig in functions(lines):
                if n > MAX_FUNCTION_LINES:
                    errors.append(f"{rel}:{first}: a function of {n} "
                                  f"lines (at most {MAX_FUNCTION_LINES}):"
                                  f" {sig[:60]}")


def annotation_lines(text):
    """The numbers (from 0) of the lines of C text that hold ACSL: a line
    inside an ACSL block (/*@ ... */, its first and last lines included)
    or holding an ACSL line comment (//@).  Strings, character literals
    and other comments are skipped, so a "/*@" in them is no annotation."""
    marked, line, i, n = set(), 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            span = text.count("\n", i, j)
            if text.startswith("/*@", i):
                marked.update(range(line, line + span + 1))
            line += span
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if text.startswith("//@", i):
                marked.add(line)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, n)
        else:
            i += 1
    return marked


def check_annotations(root, errors):
    """Each algorithm (.c of ref/algorithms/) is at most
    MAX_ANNOTATION_SHARE annotation; each proof header holds only
    comments."""
    for path in source_files(os.path.join(root, "ref", "algorithms")):
        if not path.endswith(".c"):
            continue
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        total = len(text.splitlines())
        ann = len(annotation_lines(text))
        if total > 0 and ann > MAX_ANNOTATION_SHARE * total:
            errors.append(f"{rel}: {ann} of its {total} lines are "
                          f"annotation ({ann / total:.0%}, at most "
                          f"{MAX_ANNOTATION_SHARE:.0%}): move predicates, "
                          f"shapes and lemmas to a proof header "
                          f"({PROOF_HEADERS}/)")
    for path in source_files(os.path.join(root, PROOF_HEADERS)):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8") as fh:
            bad = proof_header_code(strip_code(fh.read()).split("\n"))
        if bad:
            errors.append(f"{rel}:{bad}: a proof header holds code or a "
                          "directive the compiler reads (ACSL comments "
                          "only, and frame macros inside #ifdef "
                          "__FRAMAC__)")


def proof_header_code(code):
    """The first line (from 1) of a proof header's code (comments and
    strings blanked) that the compiler would read, or 0: outside comments
    a proof header holds only blank lines and one kind of section, the
    frames that only Frama-C defines (#ifdef __FRAMAC__, then #define
    lines, continuations included, then #endif)."""
    inside, cont = False, False
    for k, line in enumerate(code, 1):
        s = line.strip()
        if cont:
            cont = s.endswith("\\")
            continue
        if not s:
            continue
        if not inside and re.fullmatch(r"#\s*ifdef\s+__FRAMAC__", s):
            inside = True
        elif inside and re.fullmatch(r"#\s*endif", s):
            inside = False
        elif inside and re.match(r"#\s*define\s", s):
            cont = s.endswith("\\")
        else:
            return k
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "ref")):
        print(f"floors: {root} has no ref/ folder", file=sys.stderr)
        return 2
    errors = []
    check_floors(root, errors)
    check_cycles(root, errors)
    check_names(root, errors)
    check_sizes(root, errors)
    check_annotations(root, errors)
    for e in errors:
        print("floors: " + e, file=sys.stderr)
    if errors:
        print(f"floors: {len(errors)} rule(s) broken", file=sys.stderr)
        return 1
    print("floors: every include runs downward; no cycle; sizes and "
          "annotation shares within limits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
