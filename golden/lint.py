#!/usr/bin/python3
"""golden/lint.py: consistency checks over every golden vector.

    /usr/bin/python3 golden/lint.py [GOLDEN_DIR]

Loads every *.json under GOLDEN_DIR (default: this folder) whose "format" is
pflref-golden/1, and the flags registry GOLDEN_DIR/flags.json
(pflref-flags/1), and fails (exit 1, one line per problem, naming the file)
on:
  - a flag no registry entry describes (or an entry without a description or
    a reference);
  - a duplicate id;
  - two vectors with the same spec hash but different expectations;
  - a missing "hash", or one that is not content_hash(spec);
  - a provenance kind outside hand, closed_form, enumeration, independent,
    self;
  - a "self" vector without the flag regression-only;
  - an empty tolerance basis.
Otherwise prints "golden lint: N vectors, M flags, ok" (M = registered
flags) and exits 0.  Exit 2 when the registry itself cannot be read.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pflref_golden as pg   # noqa: E402

FLAGS_FORMAT = "pflref-flags/1"


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
        tol = v.get("tolerance")
        basis = tol.get("basis") if isinstance(tol, dict) else None
        if not isinstance(basis, str) or not basis.strip():
            problems.append(f"{rel}: empty tolerance basis")
        spec = v.get("spec")
        if spec is None:
            problems.append(f"{rel}: no spec")
            continue
        try:
            h = pg.content_hash(spec)
        except (TypeError, ValueError) as e:
            problems.append(f"{rel}: spec has no canonical form: {e}")
            continue
        if "hash" not in v:
            problems.append(f"{rel}: no hash (expected {h})")
        elif v["hash"] != h:
            problems.append(f"{rel}: hash {v['hash']} is not the spec's content hash {h}")
        exp = pg.canonical(v.get("expected"))
        if h in by_hash and by_hash[h][1] != exp:
            problems.append(f"{rel}: same spec (hash {h}) as {by_hash[h][0]} but "
                            "different expectations")
        by_hash.setdefault(h, (rel, exp))
    return count, len(registry), problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
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
