#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/lint.py: consistency checks over every golden vector.

    /usr/bin/python3 golden/lint.py [GOLDEN_DIR]
    /usr/bin/python3 golden/lint.py --write-flags-header

Loads every *.json under GOLDEN_DIR (default: this folder) whose "format" is
pflref-golden/1, and the flags registry GOLDEN_DIR/flags.json
(pflref-flags/1), and fails (exit 1, one line per problem, naming the file)
on:
  - a flag no registry entry describes (or an entry without a description or
    a reference);
  - a duplicate id;
  - two vectors with the same spec hash but different expectations;
  - a missing "hash", or one that is not pflref_golden.vector_hashes(vector)
    (naming each part whose digest differs);
  - (for the repository's own golden/) a vector in files ("array_files" or
    "trajectory_values", `pflref freeze --arrays files`): a shipped vector
    is small and stays inline JSON; elsewhere, a file of its "array_files"
    whose size or SHA-256 is not the one listed;
  - a provenance kind outside hand, closed_form, enumeration, independent,
    self, reference;
  - a "self" vector without the flag regression-only, a "reference" one
    (written by `pflref freeze`) without the flag reference-output, and a
    "reference" one in pflref's own golden/ at all;
  - an empty tolerance basis;
  - a tolerance above the fp64 ceiling without a non-trivial argument in
    "tolerance.above_ceiling", or such an argument where none is needed
    (pflref_golden.tolerance_problems);
  - (for the repository's own golden/) ref/io/flags_builtin.h, the registry
    compiled into pflref, out of step with flags.json: --write-flags-header
    rewrites it.
Otherwise prints "golden lint: N vectors, M flags, ok" (M = registered
flags) and exits 0.  Exit 2 when the registry itself cannot be read.
"""
import hashlib
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pflref_golden as pg   # noqa: E402

FLAGS_FORMAT = "pflref-flags/1"
HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS_HEADER = os.path.join(HERE, "..", "ref", "io", "flags_builtin.h")


def flags_header(registry):
    """The text of ref/io/flags_builtin.h: the registered flag names, the
    registry pflref uses where no flags.json is found (ref/io/vector.c)."""
    lines = [
        "/* SPDX-License-Identifier: GPL-3.0-or-later */",
        "/* ref/io/flags_builtin.h: the flags registered in golden/flags.json,",
        " * compiled into pflref: the registry of a vector with no flags.json in",
        " * its folder or above it (ref/io/vector.c; golden/README.md, \"Flags\").",
        " * Written by `golden/lint.py --write-flags-header`; golden/lint.py fails",
        " * when it is out of step with golden/flags.json.  Do not edit. */",
        "#ifndef PFLREF_IO_FLAGS_BUILTIN_H",
        "#define PFLREF_IO_FLAGS_BUILTIN_H",
        "static const char *const PFLREF_FLAGS_BUILTIN[] = {",
    ]
    lines += [f'    "{name}",' for name in sorted(registry)]
    lines += ["    NULL", "};", "#endif", ""]
    return "\n".join(lines)


def load_registry(root, problems):
    path = os.path.join(root, "flags.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"golden lint: {path}: cannot read the flags registry: {e}", file=sys.stderr)
        sys.exit(2)
    if doc.get("format") != FLAGS_FORMAT or not isinstance(doc.get("flags"), dict):
        print(f"golden lint: {path}: not a {FLAGS_FORMAT} document with a \"flags\" object",
              file=sys.stderr)
        sys.exit(2)
    for name, entry in doc["flags"].items():
        if not isinstance(entry, dict) or not str(entry.get("description", "")).strip() \
                or not str(entry.get("reference", "")).strip():
            problems.append(f"{path}: flag {name}: needs a description and a reference")
    return doc["flags"]


def vectors(root, problems):
    """(relative path, parsed vector) for every golden vector under root."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".json"):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)
            try:
                with open(path) as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                problems.append(f"{rel}: not readable JSON: {e}")
                continue
            if isinstance(doc, dict) and doc.get("format") == pg.GOLDEN_FORMAT:
                yield rel, doc


def array_file_problems(folder, manifest):
    """The files of a vector's "array_files" (paths relative to its folder)
    whose size or SHA-256 differs from the entry's, or that cannot be
    read."""
    out = []
    for j, e in enumerate(manifest if isinstance(manifest, list) else []):
        path = e.get("path") if isinstance(e, dict) else None
        if not isinstance(path, str):
            out.append(f"array_files[{j}]: no path")
            continue
        try:
            with open(os.path.join(folder, path), "rb") as f:
                data = f.read()
        except OSError as err:
            out.append(f"array_files[{j}]: cannot read {path}: {err.strerror}")
            continue
        if len(data) != e.get("bytes") or \
                hashlib.sha256(data).hexdigest() != e.get("sha256"):
            out.append(f"array_files[{j}]: {path} is not the file listed "
                       "(size or SHA-256 differs)")
    return out


def lint(root):
    problems = []
    registry = load_registry(root, problems)
    ids, by_hash = {}, {}
    count = 0
    for rel, v in vectors(root, problems):
        count += 1
        vid = v.get("id")
        if not isinstance(vid, str) or not vid:
            problems.append(f"{rel}: no id")
        elif vid in ids:
            problems.append(f"{rel}: duplicate id {vid} (also in {ids[vid]})")
        else:
            ids[vid] = rel
        flags = v.get("flags")
        if not isinstance(flags, list):
            problems.append(f"{rel}: \"flags\" is not a list")
            flags = []
        for fl in flags:
            if fl not in registry:
                problems.append(f"{rel}: flag {fl!r} is not registered in flags.json")
        prov = v.get("provenance")
        kind = prov.get("kind") if isinstance(prov, dict) else None
        if kind not in pg.PROVENANCE_KINDS:
            problems.append(f"{rel}: provenance kind {kind!r} is not one of "
                            + ", ".join(pg.PROVENANCE_KINDS))
        if kind == "self" and "regression-only" not in flags:
            problems.append(f"{rel}: provenance self without the flag regression-only")
        if kind == "reference" and "reference-output" not in flags:
            problems.append(f"{rel}: provenance reference without the flag reference-output")
        if kind == "reference" and os.path.realpath(root) == os.path.realpath(HERE):
            problems.append(f"{rel}: provenance reference (pflref's own output, pflref "
                            "freeze) in pflref's golden/: a shipped vector's expected "
                            "values are derived outside pflref")
        in_files = [p for p in pg.FILES_PARTS if p in v]
        if in_files and os.path.realpath(root) == os.path.realpath(HERE):
            problems.append(f"{rel}: {', '.join(in_files)}: a vector in files "
                            "(pflref freeze --arrays files) in pflref's own "
                            "golden/: a shipped vector stays inline JSON")
        problems.extend(f"{rel}: {p}" for p in array_file_problems(
            os.path.dirname(os.path.join(root, rel)), v.get("array_files")))
        tol = v.get("tolerance")
        basis = tol.get("basis") if isinstance(tol, dict) else None
        if not isinstance(basis, str) or not basis.strip():
            problems.append(f"{rel}: empty tolerance basis")
        spec = v.get("spec")
        if spec is None:
            problems.append(f"{rel}: no spec")
            continue
        if isinstance(tol, dict):
            for p in pg.tolerance_problems(tol):
                problems.append(f"{rel}: {p}")
        try:
            want = pg.vector_hashes(v)
        except (TypeError, ValueError) as e:
            problems.append(f"{rel}: no content hash: {e}")
            continue
        h = want["spec"]
        if "hash" not in v:
            problems.append(f"{rel}: no hash (expected {want['vector']})")
        elif not isinstance(v["hash"], dict):
            problems.append(f"{rel}: hash is not an object of digests "
                            f"(vector, {', '.join(pg.HASH_PARTS)})")
        elif v["hash"] != want:
            parts = pg.HASH_PARTS + pg.FILES_PARTS
            changed = [p for p in parts if v["hash"].get(p) != want.get(p)]
            what = ", ".join(changed) if changed else "format, id or title"
            problems.append(f"{rel}: content changed since the hash was written: {what}")
        exp = pg.canonical(v.get("expected"))
        if h in by_hash and by_hash[h][1] != exp:
            problems.append(f"{rel}: same spec (hash {h}) as {by_hash[h][0]} but "
                            "different expectations")
        by_hash.setdefault(h, (rel, exp))
    if os.path.samefile(root, HERE) and os.path.exists(FLAGS_HEADER):
        with open(FLAGS_HEADER) as f:
            if f.read() != flags_header(registry):
                problems.append("ref/io/flags_builtin.h is out of step with flags.json: "
                                "run golden/lint.py --write-flags-header")
    return count, len(registry), problems


def main():
    if sys.argv[1:] == ["--write-flags-header"]:
        registry = load_registry(HERE, [])
        with open(FLAGS_HEADER, "w") as f:
            f.write(flags_header(registry))
        print(f"golden lint: wrote ref/io/flags_builtin.h ({len(registry)} flags)")
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else HERE
    count, nflags, problems = lint(root)
    if problems:
        for p in problems:
            print(f"golden lint: {p}", file=sys.stderr)
        print(f"golden lint: {count} vectors, {nflags} flags, {len(problems)} problem(s)",
              file=sys.stderr)
        return 1
    print(f"golden lint: {count} vectors, {nflags} flags, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
