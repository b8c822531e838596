#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/docgen.py: the documentation that must agree with the registry and
the tree, written from them and checked against them.

    /usr/bin/python3 tools/docgen.py            check (make check): exit 1 on drift
    /usr/bin/python3 tools/docgen.py --write    rewrite the generated parts
    /usr/bin/python3 tools/docgen.py --self-test

Generated from `pflref list` (the registry as the program has it; the
binary is $PFLREF_CLI, default build/rel/pflref):
  * docs/formats.md, the spec's `algorithm` table: its `name` row (every
    algorithm) and its `preset` row (every preset name);
  * docs/formats.md, the presets table, between the markers
    <!-- docgen: presets --> and <!-- docgen: end -->: every preset of every
    algorithm, what it sets and whose code it reproduces;
  * man/pflref.1.in, the ALGORITHMS section, between the roff comments
    .\\" docgen: algorithms and .\\" docgen: end.
Checked against the tree (never rewritten: a person decides what the page
meant):
  * every vector id a page of docs/ (and README.md) names in backticks, as
    `ALG/...` with ALG a folder of golden/, is the id of a golden vector,
    or a glob (*, ?) that selects at least one;
  * every path a page names in backticks under golden/, ref/, include/,
    cli/, tests/, tools/, python/, docs/, proofs/ or trace/ exists (a glob:
    selects something);
  * every vector of golden/ALG/ is named (its id, a prefix of it, or a glob
    selecting it) in a table row (a line starting with `|`, outside code
    blocks) of docs/algorithms/ALG.md (fedalt-fedsim.md: both folders):
    a table of the algorithm's vectors is complete; a vector named only in
    prose is not listed.  Those tools/docgen_gaps.json lists as not yet
    named are excused; a listed vector the page now names, or that no
    longer exists, fails too.
Exit status: 0 in agreement (or written), 1 drift (each named), 2 usage.
"""
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMATS = "docs/formats.md"
MAN = "man/pflref.1.in"
PATH_ROOTS = ("golden/", "ref/", "include/", "cli/", "tests/", "tools/",
              "python/", "docs/", "proofs/", "trace/")
BEGIN_PRESETS = "<!-- docgen: presets -->"
BEGIN_MAN = '.\\" docgen: algorithms'
END_MD = "<!-- docgen: end -->"
END_MAN = '.\\" docgen: end'


# ---- the registry, as `pflref list` prints it ----------------------------------

def registry(cli):
    """{"algorithms": [(name, title)], "presets": [(alg, preset, sets, source)]}"""
    text = subprocess.run([cli, "list"], capture_output=True, text=True,
                          check=True).stdout
    section, algs, presets = None, [], []
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.split()[0].rstrip(":")
            continue
        if section == "algorithms":
            m = re.match(r"^  (\S+)\s+(.*)$", line)
            if m and not line.startswith("             "):
                algs.append((m.group(1), m.group(2).strip()))
        elif section == "presets":
            m = re.match(r"^  ([a-z0-9_]+)/([a-z0-9_]+): ?(.*)$", line)
            if m:
                presets.append([m.group(1), m.group(2), m.group(3).strip(), ""])
            elif line.strip().startswith("from ") and presets:
                presets[-1][3] = line.strip()[5:]
    return {"algorithms": algs, "presets": [tuple(p) for p in presets]}


def md_cell(s):
    return s.replace("|", "\\|")


def sets_cell(sets):
    """`a=b c=d (personal: head)` as `a = b`, `c = d`; split head."""
    split = ""
    m = re.search(r"\s*\(personal: ([a-z_]+)\)$", sets)
    if m:
        split, sets = m.group(1), sets[:m.start()]
    parts = ["`%s`" % p.replace("=", " = ") for p in sets.split()]
    out = ", ".join(parts) if parts else "nothing"
    return ("split `%s`; " % split if split else "") + out


def presets_table(reg):
    rows = ["| algorithm | preset | sets | reproduces |", "|---|---|---|---|"]
    for alg, name, sets, source in reg["presets"]:
        rows.append("| `%s` | `%s` | %s | %s |" % (alg, name, sets_cell(sets),
                                                 md_cell(source)))
    return rows


def name_row(reg):
    names = " \\| ".join('`"%s"`' % a for a, _ in reg["algorithms"])
    return ("| `name` | %s | required | the algorithm ([pages](algorithms/)) |"
            % names)


def preset_row(reg):
    seen = ["paper"]
    for _, p, _, _ in reg["presets"]:
        if p not in seen:
            seen.append(p)
    names = " \\| ".join('`"%s"`' % p for p in seen)
    return ("| `preset` | %s | `\"paper\"` | a named bundle of settings, applied "
            "first (below) |" % names)


def man_algorithms(reg):
    out = []
    for a, title in reg["algorithms"]:
        out += [".TP", ".B %s" % a, title.replace("\\", "\\\\").replace("-", "\\-")]
    return out


# ---- the generated parts ------------------------------------------------------------

def replace_block(lines, begin, end, body, path):
    """lines with the lines between begin and end replaced by body."""
    try:
        i = lines.index(begin)
        j = lines.index(end, i + 1)
    except ValueError:
        raise ValueError("%s has no %r ... %r block" % (path, begin, end))
    return lines[:i + 1] + body + lines[j:]


def formats_text(text, reg):
    lines = text.split("\n")
    out, named, preset = [], False, False
    for line in lines:
        if line.startswith("| `name` | `\"") and "| the algorithm (" in line:
            if not named:          # one row, whatever a merge left
                out.append(name_row(reg))
            named = True
            continue
        if line.startswith("| `preset` | `\"paper\"`"):
            if not preset:
                out.append(preset_row(reg))
            preset = True
            continue
        out.append(line)
    if not named or not preset:
        raise ValueError("%s: the algorithm table's name or preset row is "
                         "missing" % FORMATS)
    out = replace_block(out, BEGIN_PRESETS, END_MD, presets_table(reg), FORMATS)
    return "\n".join(out)


def man_text(text, reg):
    lines = text.split("\n")
    return "\n".join(replace_block(lines, BEGIN_MAN, END_MAN, man_algorithms(reg), MAN))


# ---- what the pages name ------------------------------------------------------------

def vector_ids(root):
    """The ids of every golden vector under root/golden/."""
    return folder_ids(root, "")


def pages(root):
    out = [os.path.join(root, "README.md")]
    out += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [p for p in out if os.path.exists(p)]


TICK = re.compile(r"`([^`\s]+)`")


def named_drift(root, tree):
    """[(page, line number, token, problem)] for the ids and paths the pages
    under root name, looked up in tree."""
    ids = vector_ids(tree)
    families = {d for d in os.listdir(os.path.join(tree, "golden"))
                if os.path.isdir(os.path.join(tree, "golden", d))}
    drift = []
    for page in pages(root):
        rel = os.path.relpath(page, root)
        with open(page) as f:
            in_code = False
            for n, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    in_code = not in_code
                    continue
                if in_code:
                    continue
                for tok in TICK.findall(line):
                    tok = tok.rstrip(".,:;")
                    problem = token_problem(tree, tok, ids, families)
                    if problem:
                        drift.append((rel, n, tok, problem))
    return drift


def token_problem(root, tok, ids, families):
    head = tok.split("/", 1)[0]
    if tok.startswith(PATH_ROOTS):
        path = tok.split(":", 1)[0].split("#", 1)[0]
        if any(c in path for c in "{<$…"):
            return None            # a pattern in prose, not a path
        if any(c in path for c in "*?["):
            return None if glob.glob(os.path.join(root, path)) else "selects no file"
        return None if os.path.exists(os.path.join(root, path)) else "no such file"
    if head in families and re.fullmatch(r"[a-z0-9_]+/[A-Za-z0-9_./*?+=-]+", tok):
        if any(c in tok for c in "*?"):
            return None if any(fnmatch.fnmatchcase(i, tok) for i in ids if i) \
                else "selects no vector"
        if tok.endswith("/"):
            return None if any(i and i.startswith(tok) for i in ids) else "selects no vector"
        if tok in ids or any(i and i.startswith(tok + "/") for i in ids):
            return None
        return "no vector has this id"
    return None


# ---- every vector of an algorithm named on its page ------------------------------------

# docs/algorithms/<page>.md names every vector of golden/<part>/ (a page of
# two, fedalt-fedsim, both folders) in a row of a table (a line that starts,
# after any indentation, with `|`; not in a code block): its id, a prefix of
# it ending a path segment, or a glob that selects it (the rule `named_drift`
# checks the other way, on every line).  Prose does not count: a reader
# looks for an algorithm's vectors in its tables (issue 37 §3).  GAPS lists, per page, the vectors known to be unnamed; a
# vector missing from a page and from GAPS fails, and so does a GAPS entry
# the page now names or that no longer exists, so the list only shrinks.
GAPS = os.path.join(ROOT, "tools", "docgen_gaps.json")


def folder_ids(tree, folder):
    """The ids of the golden vectors under tree/golden/folder/ ("" for all)."""
    out = set()
    for path in glob.glob(os.path.join(tree, "golden", folder, "**", "*.json"), recursive=True):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("format") == "pflref-golden/1":
            out.add(doc.get("id"))
    return out


def page_tokens(page):
    """The backticked tokens of the page's table rows (outside code blocks)."""
    toks, in_code = set(), False
    with open(page) as f:
        for line in f:
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if not in_code and line.lstrip().startswith("|"):
                toks |= {t.rstrip(".,:;") for t in TICK.findall(line)}
    return toks


def names(tok, vid):
    if "/" not in tok:
        return False        # an algorithm's bare name names none of its vectors
    if any(c in tok for c in "*?"):
        return fnmatch.fnmatchcase(vid, tok)
    return tok == vid or vid.startswith(tok if tok.endswith("/") else tok + "/")


def unnamed(root, tree):
    """[(page, problem)]: the vectors of each algorithm page's folders it
    does not name, beyond GAPS, and the stale GAPS entries."""
    with open(GAPS) as f:
        gaps = {k: set(v) for k, v in json.load(f).items() if not k.startswith("_")}
    out = []
    for page in sorted(glob.glob(os.path.join(root, "docs", "algorithms", "*.md"))):
        rel = os.path.relpath(page, root)
        ids = set()
        for part in os.path.basename(page)[:-3].split("-"):
            ids |= folder_ids(tree, part)
        toks = page_tokens(page)
        missing = {i for i in ids if i and not any(names(t, i) for t in toks)}
        known = gaps.get(rel, set())
        out += [(rel, "`%s` is a vector of this algorithm no table row of the page names" % i)
                for i in sorted(missing - known)]
        out += [(rel, "`%s` is in %s but %s" % (i, os.path.relpath(GAPS, ROOT),
                                                 "named now" if i in ids else "no vector"))
                for i in sorted(known - missing)]
    return out


# ---- the driver ----------------------------------------------------------------------

def run(root, cli, write, tree=ROOT):
    reg = registry(cli)
    bad = 0
    for rel, make in ((FORMATS, formats_text), (MAN, man_text)):
        path = os.path.join(root, rel)
        with open(path) as f:
            old = f.read()
        try:
            new = make(old, reg)
        except ValueError as e:
            print("docgen: %s" % e)
            bad = 1
            continue
        if new != old:
            if write:
                with open(path, "w") as f:
                    f.write(new)
                print("docgen: wrote %s" % rel)
            else:
                print("docgen: %s differs from the registry (tools/docgen.py --write)" % rel)
                bad = 1
    for rel, n, tok, problem in named_drift(root, tree):
        print("docgen: %s:%d: `%s`: %s" % (rel, n, tok, problem))
        bad = 1
    for rel, problem in unnamed(root, tree):
        print("docgen: %s: %s" % (rel, problem))
        bad = 1
    if not bad:
        print("docgen: docs/formats.md and the manual agree with the registry; "
              "every vector id and path the pages name exists; each algorithm page's tables "
              "name every vector of its folder but the %d listed in %s"
              % (sum(len(v) for k, v in json.load(open(GAPS)).items() if not k.startswith("_")),
                 os.path.relpath(GAPS, ROOT)))
    return bad


def self_test(cli):
    """Each kind of drift, planted in a copy of the tree, is caught."""
    import shutil
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("docs", "man"):       # the pages; the tree they name is ROOT
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
        shutil.copy(os.path.join(ROOT, "README.md"), tmp)
        if run(tmp, cli, write=False) != 0:
            print("docgen: self-test: the copy does not start clean")
            return 1
        plants = [
            (FORMATS, lambda t: t.replace('`"fedavg"` \\| ', "", 1), "an algorithm dropped"),
            (FORMATS, lambda t: t.replace("| `pfedme` | `official` |", "| `pfedme` | `offcial` |", 1),
             "a preset renamed"),
            (MAN, lambda t: t.replace(".B ditto\n", ".B dito\n", 1), "the manual's list"),
            ("docs/algorithms/ditto.md", lambda t: t + "\nSee `ditto/worked/no-such-vector`.\n",
             "a vector id"),
            ("docs/algorithms/ditto.md", lambda t: t + "\nSee `ditto/nothing-*`.\n", "a glob"),
            ("docs/algorithms/ditto.md", lambda t: t + "\nSee `ref/algorithms/dito.c`.\n",
             "a path"),
            ("docs/algorithms/ditto.md",
             lambda t: t.replace("| `ditto/worked/linear-paper` |", "| the paper's reading |", 1),
             "a vector left out of its page"),
            ("docs/algorithms/ditto.md",
             lambda t: t.replace("| `ditto/worked/linear-paper` |", "| the paper's reading |", 1)
             + "\nThe paper's reading is `ditto/worked/linear-paper`.\n",
             "a vector named only in prose, not in the table"),
        ]
        expect = {"a vector named only in prose, not in the table":
                  "`ditto/worked/linear-paper` is a vector of this algorithm no table row"}
        for rel, plant, what in plants:
            path = os.path.join(tmp, rel)
            with open(path) as f:
                orig = f.read()
            planted = plant(orig)
            if planted == orig:
                print("docgen: self-test: could not plant %s" % what)
                fails += 1
                continue
            with open(path, "w") as f:
                f.write(planted)
            import contextlib
            import io
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                caught = run(tmp, cli, write=False) != 0
            # caught for the planted reason, not another
            caught = caught and expect.get(what, "") in out.getvalue()
            with open(path, "w") as f:
                f.write(orig)
            print("docgen: self-test: %s %s" % (what, "caught" if caught else "NOT CAUGHT"))
            fails += not caught
        # and what the rules allow stays clean: a glob in a table row names
        # the vectors it selects
        allowed = [
            ("docs/algorithms/ditto.md",
             lambda t: t.replace("| `ditto/worked/linear-paper` |", "| `ditto/worked/linear-pape?` |", 1),
             "a table row naming a vector by a glob"),
        ]
        for rel, plant, what in allowed:
            path = os.path.join(tmp, rel)
            with open(path) as f:
                orig = f.read()
            planted = plant(orig)
            with open(path, "w") as f:
                f.write(planted)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                clean = planted != orig and run(tmp, cli, write=False) == 0
            with open(path, "w") as f:
                f.write(orig)
            print("docgen: self-test: %s %s" % (what, "accepted" if clean else "NOT ACCEPTED"))
            fails += not clean
    return 1 if fails else 0


def main(argv):
    cli = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel", "pflref")
    if argv[1:] == ["--self-test"]:
        return self_test(cli)
    if argv[1:] not in ([], ["--write"]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return run(ROOT, cli, write=argv[1:] == ["--write"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
