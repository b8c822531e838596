#!/usr/bin/env python3
"""The architecture's rules, checked on the source tree (docs/architecture.md).

Run from the repository root (or give it with --root).  It fails (exit 1),
naming the file, the line and the rule, when

  * a file of ref/<floor>/ includes a header of a higher floor (the floors,
    lowest first: core, models, sampling, engine, algorithms, io, oracle),
    or a public header includes one of a higher floor;
  * jansson is included outside ref/io/, ref/oracle/ (which is above io)
    and the public headers never name it;
  * cli/ includes a private header of ref/ (it sees only include/);
  * a project header or source includes itself through a cycle;
  * two files of ref/ share a base name (one static library holds them);
  * a source file of ref/, cli/ or include/ is longer than 800 lines, or a
    function in one is longer than 80 lines (data tables are initialisers,
    not functions, and are not counted).
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
    "pflref/model.h": "models", "pflref/problem.h": "models",
    "pflref/sampler.h": "sampling", "pflref/schedule.h": "sampling",
    "pflref/hyper.h": "engine", "pflref/algorithm.h": "engine",
    "pflref/io.h": "io", "pflref/golden.h": "oracle",
    "pflref.h": "oracle",
}
# Libraries a floor may include (beyond the C library): GSL and OpenBLAS
# from models up, jansson only where JSON is read and written.
LIBRARY_FLOOR = {"jansson.h": "io"}
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def rank(floor):
    return FLOORS.index(floor)


def includes(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1) == '"', m.group(2)


def floor_of_header(name, from_dir):
    """The floor of an included project header, or None (a library)."""
    if name in PUBLIC:
        return PUBLIC[name]
    if name.startswith("pflref/"):
        return None                       # unknown public header: reported
    head = name.split("/")[0]
    if head in FLOORS:
        return head
    local = os.path.normpath(os.path.join(from_dir, name))
    parts = local.split(os.sep)
    if len(parts) >= 3 and parts[-3] == "ref" and parts[-2] in FLOORS:
        return parts[-2]
    return None


def resolve(name, from_path, root):
    """The file a project include names, or None."""
    for base in (os.path.dirname(from_path), os.path.join(root, "include"),
                 os.path.join(root, "ref")):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return p
    return None


def check_floors(root, errors):
    ref = os.path.join(root, "ref")
    for floor in sorted(os.listdir(ref)):
        d = os.path.join(ref, floor)
        if not os.path.isdir(d):
            continue
        if floor not in FLOORS:
            errors.append(f"ref/{floor}/: not a floor ({', '.join(FLOORS)})")
            continue
        for fn in sorted(os.listdir(d)):
            if fn.endswith((".c", ".h")):
                check_file(os.path.join(d, fn), floor, root, errors)
    inc = os.path.join(root, "include")
    for dirpath, _, files in os.walk(inc):
        for fn in sorted(files):
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, inc)
            if rel not in PUBLIC:
                errors.append(f"include/{rel}: a public header without a "
                              "floor (add it to PUBLIC in this script)")
                continue
            check_file(path, PUBLIC[rel], root, errors, public=True)
    cli = os.path.join(root, "cli")
    for fn in sorted(os.listdir(cli)):
        path = os.path.join(cli, fn)
        for n, quoted, name in includes(path):
            if quoted and resolve(name, path, root) is not None and \
                    not os.path.isfile(os.path.join(cli, name)) and \
                    name not in PUBLIC:
                errors.append(f"cli/{fn}:{n}: includes the private header "
                              f"\"{name}\" (cli/ sees only include/)")


def check_file(path, floor, root, errors, public=False):
    rel = os.path.relpath(path, root)
    for n, quoted, name in includes(path):
        if not quoted:
            lib = LIBRARY_FLOOR.get(name)
            if lib is not None and (public or rank(floor) < rank(lib)):
                errors.append(f"{rel}:{n}: includes <{name}>, which only "
                              f"the {lib} floor and above may use")
            continue
        if public:
            target = PUBLIC.get("pflref/" + name, PUBLIC.get(name))
            if target is None:
                errors.append(f"{rel}:{n}: a public header includes "
                              f"\"{name}\", which is not public")
                continue
        else:
            target = floor_of_header(name, os.path.dirname(path))
            if target is None:
                errors.append(f"{rel}:{n}: \"{name}\" is neither a public "
                              "header nor a header of a floor")
                continue
        if rank(target) > rank(floor):
            errors.append(f"{rel}:{n}: the {floor} floor includes \"{name}\""
                          f" of the higher {target} floor (the floors, "
                          f"lowest first: {' < '.join(FLOORS)})")


def check_cycles(root, errors):
    files = []
    for top in ("ref", "include", "cli"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, f) for f in sorted(names)
                      if f.endswith((".c", ".h"))]
    graph = {}
    for f in files:
        graph[f] = [r for _, quoted, name in includes(f) if quoted
                    for r in [resolve(name, f, root)] if r is not None]
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
    for dirpath, _, names in os.walk(os.path.join(root, "ref")):
        for f in sorted(names):
            if f.endswith(".c"):
                base = f[:-2]
                if base in seen:
                    errors.append(f"ref: {seen[base]} and "
                                  f"{os.path.relpath(os.path.join(dirpath, f), root)}"
                                  " share a base name (one archive holds both)")
                seen[base] = os.path.relpath(os.path.join(dirpath, f), root)


def functions(lines):
    """(first line, length, signature) of each function definition: a body
    opened by '{' at column 0, closed by '}' at column 0."""
    start = None
    for i, line in enumerate(lines):
        if start is None and line.startswith("{"):
            j = i - 1
            while j >= 0 and not re.match(r"[A-Za-z_]", lines[j]):
                j -= 1
            start, sig = i, lines[j].strip() if j >= 0 else "?"
        elif start is not None and line.startswith("}"):
            yield start + 1, i - start + 1, sig
            start = None


def check_sizes(root, errors):
    for top in ("ref", "cli", "include"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for f in sorted(names):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as fh:
                    lines = fh.read().split("\n")
                if len(lines) - 1 > MAX_FILE_LINES:
                    errors.append(f"{rel}: {len(lines) - 1} lines (at most "
                                  f"{MAX_FILE_LINES})")
                for first, n, sig in functions(lines):
                    if n > MAX_FUNCTION_LINES:
                        errors.append(f"{rel}:{first}: a function of {n} "
                                      f"lines (at most {MAX_FUNCTION_LINES}):"
                                      f" {sig[:60]}")


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
    for e in errors:
        print("floors: " + e, file=sys.stderr)
    if errors:
        print(f"floors: {len(errors)} rule(s) broken", file=sys.stderr)
        return 1
    print("floors: every include runs downward; no cycle; sizes within "
          "limits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
