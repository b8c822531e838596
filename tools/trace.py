#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/trace.py: the traceability matrix, paper line -> code -> tests ->
golden vectors -> proofs (`make trace`; docs/traceability.md).

    /usr/bin/python3 tools/trace.py            check: fail on any problem or
                                               a stale docs/traceability.md
    /usr/bin/python3 tools/trace.py --write    rewrite docs/traceability.md
                                               (still fails on a problem)
    /usr/bin/python3 tools/trace.py --root DIR another tree
    /usr/bin/python3 tools/trace.py --self-test
                                               plant each failure in a
                                               temporary copy of the tree and
                                               check it is caught, by name

The registry is trace/<alg>.req, one requirement a line,
"ID<TAB>citation<TAB>statement", lines starting with '#' comments.  A tag
is "req: ID" or "req: ID1, ID2" in a comment ("/* */", "//", "#", "(* *)",
or a continued C comment's "*"), and its file says what kind of evidence
it is:

  code       ref/, cli/, include/ (outside an ACSL annotation)
  proof      an ACSL annotation ("/*@ ... */", "//@") in a C file, or any
             file under proofs/ (Coq, ACSL kernels)
  test       tests/ and python/tests/ (a Check test: the START_TEST the
             tag sits in), fuzz/
  generator  golden/**/*.py: the golden vectors' independent generators

A golden vector checks the requirements tagged in the generator its
provenance names ("generator": "golden/<alg>/make_x.py ...") and in the
golden/ modules that generator imports (transitively), restricted to the
requirements of the vector's own algorithm (trace/<spec.algorithm.name>.req)
and of the registries that are not an algorithm (sampling, metrics); an id
<alg>.preset.<name> only to the vectors of that preset.

Problems (each printed, exit 1): a malformed registry line, an id twice,
a tag citing an id not registered, a registered requirement with no code,
one with no test (a golden vector counts as a test), and, without --write,
docs/traceability.md differing from what this script generates.
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ID = r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+"
ID_RE = re.compile(rf"^{ID}$")
TAG = re.compile(rf"\breq:\s*({ID}(?:\s*,\s*{ID})*)?")
OPENERS = ("/*", "//", "#", "(*")
SCAN = {  # top folder -> kind (python/tests and proofs special-cased)
    "ref": "code", "cli": "code", "include": "code", "tests": "test",
    "fuzz": "test", "golden": "generator", "proofs": "proof", "python": "code",
}
EXTS = (".c", ".h", ".py", ".v", ".acsl", ".cpp")
DOC = "docs/traceability.md"


class Trace:
    """Everything the matrix says: the registry and who cites each id."""

    def __init__(self):
        self.reqs = {}        # id -> {"alg", "citation", "statement", "file", "line"}
        self.order = {}       # alg -> [ids in registry order]
        self.cites = {}       # id -> {"code"|"test"|"proof"|"generator": [(file, line, name)]}
        self.vectors = {}     # id -> [(vector file, vector id)]
        self.alg_vectors = {} # algorithm -> [(vector file, vector id)], all of them
        self.problems = []


def read_registry(root, t):
    folder = os.path.join(root, "trace")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".req"):
            continue
        alg, rel = name[:-4], f"trace/{name}"
        t.order.setdefault(alg, [])
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.split("\t")
                if len(parts) != 3 or not all(p.strip() for p in parts):
                    t.problems.append(f"{rel}:{n}: not ID<TAB>citation<TAB>statement")
                    continue
                rid, cit, stmt = (p.strip() for p in parts)
                if not ID_RE.match(rid):
                    t.problems.append(f"{rel}:{n}: '{rid}' is not an id (lower case, dotted: pfedme.alg1.l8)")
                    continue
                if rid in t.reqs:
                    o = t.reqs[rid]
                    t.problems.append(f"{rel}:{n}: {rid} is registered twice (first at {o['file']}:{o['line']})")
                    continue
                t.reqs[rid] = {"alg": alg, "citation": cit, "statement": stmt, "file": rel, "line": n}
                t.order[alg].append(rid)


def kind_of(rel):
    top = rel.split("/", 1)[0]
    if rel.startswith("python/tests/"):
        return "test"
    return SCAN.get(top)


def source_files(root):
    for top in sorted(SCAN):
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for fn in sorted(filenames):
                if fn.endswith(EXTS):
                    path = os.path.join(dirpath, fn)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def scan_file(rel, path, t):
    kind = kind_of(rel)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (UnicodeDecodeError, OSError):
        return
    is_c = rel.endswith((".c", ".h", ".cpp", ".acsl"))
    acsl, in_comment, test = False, False, None
    for n, s in enumerate(lines, 1):
        if is_c:
            m = re.match(r"\s*START_TEST\((\w+)\)", s)
            if m:
                test = m.group(1)
            elif s.startswith("END_TEST"):
                test = None
        m = TAG.search(s)
        if m:
            before = s[:m.start()]
            commented = (any(o in before for o in OPENERS) or before.lstrip().startswith("*")
                         or (is_c and in_comment))
            if commented:
                k = kind
                if is_c and kind == "code" and (acsl or "/*@" in before or "//@" in before):
                    k = "proof"
                if m.group(1) is None:
                    t.problems.append(f"{rel}:{n}: 'req:' names no id (req: alg.alg1.l3)")
                else:
                    for rid in re.split(r"\s*,\s*", m.group(1)):
                        name = test if k == "test" else None
                        t.cites.setdefault(rid, {}).setdefault(k, []).append((rel, n, name))
        if is_c:  # comment state at the end of this line
            for tok in re.findall(r"/\*@?|\*/", s):
                if tok.startswith("/*"):
                    if not in_comment:
                        in_comment, acsl = True, tok == "/*@"
                elif in_comment:
                    in_comment, acsl = False, False


IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", re.M)


def generator_tags(root, rel, t, seen=None):
    """The ids tagged in a generator and the golden/ modules it imports."""
    seen = set() if seen is None else seen
    if rel in seen or not os.path.exists(os.path.join(root, rel)):
        return set()
    seen.add(rel)
    ids = {rid for rid, by in t.cites.items() for f, _, _ in by.get("generator", []) if f == rel}
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(rel)
    for m in IMPORT.finditer(text):
        for mod in re.split(r"\s*,\s*", m.group(1) or m.group(2)):
            mod = mod.split(" as ")[0].strip().split(".")[0]
            for d in (here, "golden"):
                cand = f"{d}/{mod}.py"
                if os.path.exists(os.path.join(root, cand)):
                    ids |= generator_tags(root, cand, t, seen)
                    break
    # a generator may also run another one by path (subprocess, runpy)
    for m in re.finditer(r"(golden/[\w/]+\.py)", text):
        if m.group(1) != rel:
            ids |= generator_tags(root, m.group(1), t, seen)
    return ids


def link_vectors(root, t):
    algs = set(t.order)
    vec_algs = set()
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "golden")):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".json"):
                continue
            path = os.path.join(dirpath, fn)
            try:
                with open(path, encoding="utf-8") as f:
                    v = json.load(f)
            except (ValueError, OSError, UnicodeDecodeError):
                continue
            if not isinstance(v, dict) or v.get("format") != "pflref-golden/1":
                continue
            try:
                alg = v["spec"]["algorithm"]["name"]
            except (KeyError, TypeError):
                continue
            gen = re.match(r"\s*(golden/[\w/.-]+\.py)", str((v.get("provenance") or {}).get("generator", "")))
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            vec_algs.add(alg)
            t.alg_vectors.setdefault(alg, []).append((rel, v.get("id", rel)))
            preset = v["spec"]["algorithm"].get("preset") if isinstance(v["spec"]["algorithm"], dict) else None
            found.append((rel, v.get("id", rel), alg, gen.group(1) if gen else None, preset))
    is_alg = {a: (a in vec_algs or os.path.exists(os.path.join(root, f"ref/algorithms/{a}.c")))
              for a in algs}
    cache = {}
    for rel, vid, alg, gen, preset in sorted(found, key=lambda x: x[0]):
        if gen is None:
            continue
        if gen not in cache:
            cache[gen] = generator_tags(root, gen, t)
        for rid in sorted(cache[gen]):
            r = t.reqs.get(rid)
            if not r or not (r["alg"] == alg or not is_alg[r["alg"]]):
                continue
            scoped = re.match(r"^[a-z0-9_]+\.preset\.([a-z0-9_]+)$", rid)
            if scoped and scoped.group(1) != preset:
                continue  # a preset's requirement: only the vectors of that preset
            t.vectors.setdefault(rid, []).append((rel, vid))


STATEMENT = re.compile(r"\s*(Theorem|Lemma|Corollary|Proposition)\b")
DECLARATOR = re.compile(r"(\w+)\s*\(")


def wp_functions(root):
    """The functions a WP job of proofs/run.sh proves (its JOBS list)."""
    try:
        text = open(os.path.join(root, "proofs", "run.sh"), encoding="utf-8").read()
    except OSError:
        return set()
    m = re.search(r"^JOBS='(.*?)'$", text, re.S | re.M)
    out = set()
    for line in (m.group(1).splitlines() if m else []):
        f = line.split("|")
        if len(f) == 4 and f[2].strip() != "lemmas":
            out.update(x.strip() for x in f[3].split(","))
    return out


def stated(root, rel, n, proved_fns, cache):
    """Whether the proof tag at rel:n is stated by a proof: in a Coq file,
    the next line that is not blank or a comment begins a theorem (the tag
    labels its statement); in an ACSL annotation, the annotation is the
    contract of a function that a WP job proves."""
    if rel not in cache:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            cache[rel] = f.read().splitlines()
    lines = cache[rel]
    if rel.endswith(".v"):
        for s in lines[n:]:
            if s.strip() and not s.strip().startswith("(*"):
                return STATEMENT.match(s) is not None
        return False
    end = n - 1
    if lines[end].lstrip().startswith("//@"):  # ACSL lines: the last of them
        while end + 1 < len(lines) and lines[end + 1].lstrip().startswith("//@"):
            end += 1
    else:
        while end < len(lines) and "*/" not in lines[end]:
            end += 1
    for s in lines[end + 1:end + 30]:
        code = re.sub(r"/\*.*?\*/", "", s)
        if code.strip().startswith(("/*", "*", "//")) or not code.strip():
            continue
        m = DECLARATOR.search(code)
        if m:
            return m.group(1) in proved_fns
    return False


def keep_stated_proofs(root, t):
    """A requirement counts as proved only when a proof states it: drop
    the proof cites that label no theorem and no proved contract, and
    name each as a problem (a tag that claims a proof it does not have)."""
    proved_fns, cache = wp_functions(root), {}
    for rid, by in t.cites.items():
        kept = []
        for f, n, name in by.get("proof", []):
            if stated(root, f, n, proved_fns, cache):
                kept.append((f, n, name))
            else:
                t.problems.append(f"{f}:{n}: req: {rid} labels no Coq theorem and no contract "
                                  "of a function proved by a WP job of proofs/run.sh")
        if "proof" in by:
            by["proof"] = kept


def collect(root):
    t = Trace()
    read_registry(root, t)
    for rel, path in source_files(root):
        scan_file(rel, path, t)
    for rid in sorted(t.cites):
        if rid not in t.reqs:
            for by in t.cites[rid].values():
                for f, n, _ in by:
                    t.problems.append(f"{f}:{n}: req: {rid} is not registered in trace/*.req")
    keep_stated_proofs(root, t)
    link_vectors(root, t)
    for alg in sorted(t.order):
        for rid in t.order[alg]:
            r, by = t.reqs[rid], t.cites.get(rid, {})
            where = f"{r['file']}:{r['line']}"
            if not by.get("code"):
                t.problems.append(f"{where}: {rid} has no code citing it (req: {rid} in ref/, cli/ or include/)")
            if not by.get("test") and not t.vectors.get(rid):
                t.problems.append(f"{where}: {rid} has no test (a Check test's /* req: {rid} */, "
                                  f"a Python test, or a golden vector whose generator cites it)")
    return t


# ---- docs/traceability.md ------------------------------------------------------

HEADER = """<!-- SPDX-License-Identifier: GPL-3.0-or-later -->
# Traceability: paper line → code → tests → golden vectors → proofs

Generated by `make trace` (`tools/trace.py`) from the registry `trace/<alg>.req` and the
`req:` tags in the sources; do not edit by hand (`/usr/bin/python3 tools/trace.py --write`
rewrites it, and `make trace`, part of `make check`, fails when it is stale). As SQLite does it:
every line of each paper's algorithm box, and each key equation, has an id
(`pfedme.alg1.l8`: algorithm as in `pflref list`, then `alg<N>.l<M>` for a box line or
`eq<N>` for an equation), written once in `trace/<alg>.req` with its citation (arXiv id and
version, algorithm or equation) and the paper's statement in its symbols.

**The rules** (`tools/trace.py`):

- **Code**: a comment `req: ID` (or `req: ID1, ID2`) at the line of `ref/`, `cli/` or
  `include/` that implements it.
- **Tests**: a Check test cites what it checks with `/* req: ID */` inside its `START_TEST`;
  Python tests (`tests/`, `python/tests/`) with `# req: ID`.
- **Golden vectors**: a generator in `golden/` cites a line with `# req: ID` where it computes
  it. A vector checks the ids tagged in the generator its provenance names
  (`"generator": "golden/<alg>/make_x.py ..."`) and in the `golden/` modules that generator
  imports, restricted to the requirements of the vector's own algorithm
  (`trace/<spec.algorithm.name>.req`) and of the registries that are not an algorithm
  (`sampling`, `metrics`); a preset's requirement (`fedalt.preset.fedrep`) only to the vectors
  that run that preset (`spec.algorithm.preset`). A golden vector counts as a test.
- **Proofs**: a requirement counts as proved only when a proof states it: `req: ID` in the
  comment just before a Coq theorem (`proofs/coq/`: the next line that is not a comment begins
  a `Theorem`, `Lemma`, `Corollary` or `Proposition`), or inside the ACSL contract
  (`/*@ ... */`) of a function that a WP job of `proofs/run.sh` proves. A proof tag anywhere
  else is a problem.
- `make trace` fails, naming each problem, when a registered requirement has no code or no
  test, when a tag anywhere cites an id that is not registered, or when this file is stale.
"""


def md_link(rel, line=None, depth="../"):
    label = f"{rel}:{line}" if line else rel
    anchor = f"#L{line}" if line else ""
    return f"[`{label}`]({depth}{rel}{anchor})"


def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def render(t):
    out = [HEADER]
    out.append("## Summary\n")
    out.append("| registry | requirements | with code | with a test | with golden vectors | with proofs |")
    out.append("|---|---:|---:|---:|---:|---:|")
    tot = [0] * 5
    for alg in sorted(t.order):
        ids = t.order[alg]
        row = [len(ids),
               sum(1 for i in ids if t.cites.get(i, {}).get("code")),
               sum(1 for i in ids if t.cites.get(i, {}).get("test") or t.vectors.get(i)),
               sum(1 for i in ids if t.vectors.get(i)),
               sum(1 for i in ids if t.cites.get(i, {}).get("proof"))]
        tot = [a + b for a, b in zip(tot, row)]
        out.append(f"| [`{alg}`](#{alg}) | " + " | ".join(map(str, row)) + " |")
    out.append("| **all** | " + " | ".join(f"**{x}**" for x in tot) + " |\n")
    out.append(f"**Proved: {tot[4]} of {tot[0]} requirements** (a Coq theorem or a WP-proved "
               "contract states each; the rest are tested, not proved).\n")
    for alg in sorted(t.order):
        out.append(f"## {alg}\n")
        out.append(f"Registry: [`trace/{alg}.req`](../trace/{alg}.req).\n")
        out.append("| id | the paper | code | tests | golden vectors | proofs |")
        out.append("|---|---|---|---|---|---|")
        for rid in t.order[alg]:
            r, by = t.reqs[rid], t.cites.get(rid, {})
            code = "<br>".join(md_link(f, n) for f, n, _ in by.get("code", [])) or "**none**"
            tests = "<br>".join(md_link(f, n) + (f" `{name}`" if name else "")
                                for f, n, name in by.get("test", []))
            vecs = t.vectors.get(rid, [])
            gens = sorted({f for f, _, _ in by.get("generator", [])})
            vcell = ""
            every = sorted(t.alg_vectors.get(alg, []))
            if vecs and sorted(vecs) == every:
                folders = sorted({os.path.dirname(p) for p, _ in vecs})
                vcell = f"all {len(vecs)} of " + ", ".join(f"[`{d}/`](../{d}/)" for d in folders)
                vcell += "<br>by " + ", ".join(md_link(g) for g in gens)
            elif vecs:
                vcell = f"{len(vecs)}: " + ", ".join(f"[`{vid}`](../{p})" for p, vid in vecs)
                vcell += "<br>by " + ", ".join(md_link(g) for g in gens)
            elif gens:
                vcell = "generators " + ", ".join(md_link(g) for g in gens) + " (no vector of this algorithm)"
            proofs = "<br>".join(md_link(f, n) for f, n, _ in by.get("proof", []))
            if not tests and not vecs:
                tests = "**none**"
            out.append(f"| `{rid}` | {cell(r['citation'])}: {cell(r['statement'])} | {code} | "
                       f"{tests} | {vcell} | {proofs} |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- the self-test: each failure planted in a temporary copy ------------------

COPY = ("trace", "ref", "cli", "include", "tests", "fuzz", "golden", "proofs", "python")


def _copy_tree(root, dst):
    for top in COPY:
        src = os.path.join(root, top)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, top),
                            ignore=shutil.ignore_patterns("__pycache__", "*.vo", "*.glob", ".*"))
    os.makedirs(os.path.join(dst, "docs"))
    if os.path.exists(os.path.join(root, DOC)):
        shutil.copyfile(os.path.join(root, DOC), os.path.join(dst, DOC))


def _run(tree, *args):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", tree, *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def _append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def self_test(root):
    """Each planted fault must fail `make trace` with its own message; the
    unmodified copy must pass.  Tags are spelled in two pieces here, so this
    file never cites an id itself."""
    R = "req" + ":"
    first = sorted(f for f in os.listdir(os.path.join(root, "trace")) if f.endswith(".req"))[0]
    alg = first[:-4]
    cases = [
        ("the tree as it is", None, 0, "requirements in"),
        ("an unregistered tag in the code",
         lambda d: _append(os.path.join(d, "ref/core/status.c"), f"/* {R} {alg}.alg9.l99 */\n"),
         1, f"{R} {alg}.alg9.l99 is not registered"),
        ("an unregistered tag in a Check test",
         lambda d: _append(os.path.join(d, "tests/test_core.c"), f"/* {R} {alg}.eq999 */\n"),
         1, f"{R} {alg}.eq999 is not registered"),
        ("a requirement without code",
         lambda d: (_append(os.path.join(d, "trace", first), f"{alg}.eq998\tplanted\tno code cites it\n"),
                    _append(os.path.join(d, "tests/test_core.c"), f"/* {R} {alg}.eq998 */\n")),
         1, f"{alg}.eq998 has no code citing it"),
        ("a requirement without a test",
         lambda d: (_append(os.path.join(d, "trace", first), f"{alg}.eq997\tplanted\tno test cites it\n"),
                    _append(os.path.join(d, "ref/core/status.c"), f"/* {R} {alg}.eq997 */\n")),
         1, f"{alg}.eq997 has no test"),
        ("a malformed registry line",
         lambda d: _append(os.path.join(d, "trace", first), f"{alg}.eq996 only two fields\tx\n"),
         1, "not ID<TAB>citation<TAB>statement"),
        ("an id registered twice",
         lambda d: _append(os.path.join(d, "trace", first),
                           open(os.path.join(d, "trace", first), encoding="utf-8").read()
                           .splitlines()[-1] + "\n"),
         1, "is registered twice"),
        ("a stale docs/traceability.md",
         lambda d: _append(os.path.join(d, DOC), "\nedited by hand\n"),
         1, f"{DOC} is stale"),
        ("a tag with no id",
         lambda d: _append(os.path.join(d, "ref/core/status.c"), f"/* {R} */\n"),
         1, "names no id"),
        ("a Coq tag that labels no theorem",
         lambda d: _append(os.path.join(d, "proofs/coq/Sampling.v"),
                           f"(* {R} sampling.lemma21.incl *)\n"),
         1, "labels no Coq theorem"),
        ("an ACSL tag on a contract no WP job proves",
         lambda d: _append(os.path.join(d, "ref/core/status.c"),
                           f"/*@ assigns \\nothing; // {R} sampling.lemma21.incl\n */\n"
                           "int planted_unproved(int x);\n"),
         1, "labels no Coq theorem and no contract"),
    ]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="trace-self-test-") as tmp:
        base = os.path.join(tmp, "base")
        _copy_tree(root, base)
        for n, (what, plant, want_rc, want_msg) in enumerate(cases):
            tree = os.path.join(tmp, f"case{n}")
            shutil.copytree(base, tree)
            if plant:
                plant(tree)
            rc, out = _run(tree)
            ok = (rc == 0) == (want_rc == 0) and want_msg in out
            if plant and ok:
                # the planted fault is the one problem reported (a new
                # registry line also makes the matrix stale)
                probs = [ln for ln in out.splitlines() if ln.startswith("trace: ")
                         and " problems (" not in ln and (f"{DOC} is stale" not in ln or "stale" in what)]
                ok = len(probs) == 1
            if not ok:
                print(f"trace self-test: {what}: NOT CAUGHT")
                bad += 1
                print("  expected exit " + str(want_rc) + " naming '" + want_msg + "'; got exit "
                      + str(rc) + ":\n  " + out.strip().replace("\n", "\n  "))
            shutil.rmtree(tree)
        # a vector counts as a test: drop a generator's tags and its ids lose their test
        tree = os.path.join(tmp, "vectors")
        shutil.copytree(base, tree)
        gen = os.path.join(tree, "golden/pflref_exact.py")
        lost = []
        if os.path.exists(gen):
            with open(gen, encoding="utf-8") as f:
                text = f.read()
            with open(gen, "w", encoding="utf-8") as f:
                f.write(re.sub(r"(?m)^\s*# req:.*\n", "", text))
            rc, out = _run(tree)
            lost = re.findall(r": (\S+) has no test", out)
            ok = rc != 0 and lost
        else:
            ok = False
        if not ok:
            print("trace self-test: untagging golden/pflref_exact.py leaves no requirement "
                  "without a test: golden vectors are not counted as tests")
        bad += 0 if ok else 1
    print(f"trace self-test: {len(cases) + 1 - bad} of {len(cases) + 1} cases "
          f"(the clean copy passes; each fault fails naming itself; vectors count as tests) "
          f"{'as expected' if not bad else 'WRONG'}")
    return 1 if bad else 0


def outfile_module():
    """tools/outfile.py, loaded by path (the writer of every file the
    project's scripts produce: regular files only, nothing partial)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "pflref_outfile", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       "outfile.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--write", action="store_true", help=f"rewrite {DOC}")
    ap.add_argument("--self-test", action="store_true",
                    help="plant each failure in a temporary copy and check it is caught")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test(a.root)
    t = collect(a.root)
    text = render(t)
    doc = os.path.join(a.root, DOC)
    if a.write:
        outfile_module().write(doc, text)
    else:
        try:
            with open(doc, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            t.problems.append(f"{DOC} is stale (or missing): run /usr/bin/python3 tools/trace.py --write")
    for p in t.problems:
        print(f"trace: {p}", file=sys.stderr)
    n_req = len(t.reqs)
    n_alg = len(t.order)
    if t.problems:
        print(f"trace: {len(t.problems)} problems ({n_req} requirements in {n_alg} registries)",
              file=sys.stderr)
        return 1
    print(f"trace: {n_req} requirements in {n_alg} registries, each with code and a test; "
          f"{DOC} {'written' if a.write else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
