#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/site/build.py: the reader's edition, static HTML from the sources.

    /usr/bin/python3 tools/site/build.py --pflref build/rel/pflref --out build/site

Writes, with no server, script or network needed to read them:

  index.html           the algorithms, the demo, the variants, the guide
  alg/<alg>.html       per algorithm: the paper's box line by line (the
                       numbered box of docs/algorithms/<alg>.md), beside it
                       the C lines that cite that line's requirement tag
                       (`req: pfedme.alg1.l8`, registered in trace/<alg>.req;
                       tools/trace.py, docs/traceability.md), the golden
                       vectors, Check tests and proofs that cite THAT line,
                       and the values a worked example's --trace prints at
                       that line; then the algorithm's equations (the
                       registry's other requirements) the same way
  traceability.html    docs/traceability.md, the whole matrix
  src/<path>.html      each cited C file with numbered, linkable lines
  golden/...json       the vectors linked to (copies)
  demo.html            seed 000's figures, drawn by `pflref plot`
  variants.html        the switches and presets (docs/variants.md when it
                       exists, else `pflref list`)
  validate.html        docs/validate.md; other documents it links to are
                       rendered as doc/<name>.html
  style.css            and katex.min.css with fonts/: the formulas are
                       typeset at build time (tools/site/math.py)

Which code, tests and vectors belong to a box line comes from the
traceability data (tools/trace.py: the `req:` tags; a vector checks the
requirements its generator cites).  Which trace values belong to it comes
from the trace itself: each trace line carries the formula of the paper
line that produced it ("[Alg. 1 l. 8: ...]"); a formula without its line
number goes to the box line whose statement it writes out or whose symbol
it assigns (text_line), else to the line the nearest `req:` tag above its
use in the C cites (formula_lines).  A line that computes nothing shows what
it is, and a random choice the result's schedule (tools/site/lines.py); a
computing line without values is one of tools/site/untraced.json's, each
with its reason, or `make check-site` fails.  A line that names a value
another line's event prints (θ̃_i = θ_i) shows that event too (lines.SHARED);
a line of the paper's other option, which the worked example does not run,
shows a second vector's values, named in its cell (lines.SECOND).
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

import importlib.util

try:
    import markdown
except ImportError:
    sys.exit("site: the markdown module is missing: Debian's python3-markdown "
             "(./deps.sh site); run with /usr/bin/python3")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("pflref_lines", os.path.join(ROOT, "tools/site/lines.py"))
lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lines)
_spec = importlib.util.spec_from_file_location("pflref_math", os.path.join(ROOT, "tools/site/math.py"))
pmath = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pmath)
FORMULAS = pmath.Formulas()   # every formula of the site, typeset at the end
_spec = importlib.util.spec_from_file_location("pflref_trace", os.path.join(ROOT, "tools/trace.py"))
trace = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trace)
# every page, copy and report is written by tools/outfile.py (pflref's
# writer's rules: regular files only, links kept, nothing partial)
_spec = importlib.util.spec_from_file_location("pflref_outfile", os.path.join(ROOT, "tools/outfile.py"))
outfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outfile)
TRACE = [None]   # the traceability data (main collects it once)
CSS = """body{font-family:"DejaVu Sans",sans-serif;margin:0 auto;max-width:1400px;padding:1em 2em;color:#222}
nav{margin-bottom:1em}nav a{margin-right:1.2em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.35em .6em;vertical-align:top}
th{background:#f3f3f3}pre,code{font-family:"DejaVu Sans Mono",monospace;font-size:.9em}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;margin:.2em 0}
td.line{font-weight:bold;text-align:right}td.paper{max-width:28em;font-family:"DejaVu Sans Mono",monospace;font-size:.9em;white-space:pre-wrap}
td.code pre{margin:0 0 .4em 0}td.evidence{font-size:.85em;max-width:18em}td.trace pre{font-size:.8em;max-width:34em;white-space:pre-wrap}
td,th{overflow-wrap:anywhere}td code{overflow-wrap:anywhere}
table.beside{table-layout:fixed;width:100%}table.beside th:nth-child(1){width:3em}
table.beside th:nth-child(2){width:22%}table.beside th:nth-child(3){width:34%}
table.beside th:nth-child(4){width:14%}table.beside td pre{white-space:pre-wrap;overflow-wrap:anywhere}
table.beside td.paper,table.beside td.evidence,table.beside td.trace pre{max-width:none}
.src{counter-reset:none}.src a.ln{color:#999;display:inline-block;width:4em;text-align:right;margin-right:1em;text-decoration:none}
.src span:target{background:#fff3b0}img{max-width:100%;border:1px solid #ddd}
td.evidence ul{margin:.2em 0;padding-left:1.1em}code.req{color:#555;font-size:.8em}
td.trace pre.structure{color:#555;font-style:italic}td.trace pre.untraced{color:#8a5a00}
"""


def page(title, body, depth=0):
    up = "../" * depth
    nav = (f'<nav><a href="{up}index.html">pflref</a><a href="{up}demo.html">demo figures</a>'
           f'<a href="{up}variants.html">variants</a><a href="{up}validate.html">validation guide</a>'
           f'<a href="{up}traceability.html">traceability</a></nav>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{html.escape(title)}</title><link rel="stylesheet" href="{up}style.css">'
            f'</head><body>{nav}{body}</body></html>\n')


def write(out, rel, text):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    outfile.write(path, text)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


# ---- the algorithm pages --------------------------------------------------

BOX_LINE = re.compile(r"^\s{0,3}(\d{1,2})\s+(\S.*)$")


def parse_box(md):
    """The numbered box: the first fenced block whose lines start with
    1, 2, 3, ... (a gap of at most two lines: a box that leaves out its
    "end for" lines); {number: text} with continuation lines joined.  A box of
    several procedures (a header line at column 0, such as "Server:" or
    "LocalUpdate(i, C):", then lines numbered from 1 again) gives keys
    "<procedure>.<number>" with the procedure's first word in lower case
    ("alg<K>" for a header "Algorithm K")."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", md, re.S):
        parts, last, header = [], None, None
        for raw in block.splitlines():
            m = BOX_LINE.match(raw)
            if m and int(m.group(1)) == 1 and header is not None:
                name, undo = header
                if undo:                     # the header was not a continuation
                    undo[0][undo[1]] = undo[2]
                parts.append((name, {}))
                last = None
            header = None
            if m and (last or 0) < int(m.group(1)) <= (last or 0) + 3:
                if not parts:
                    parts.append((None, {}))
                last = int(m.group(1))
                parts[-1][1][last] = m.group(2).rstrip()
                continue
            if raw[:1].isalpha():
                lines = parts[-1][1] if parts and last is not None else None
                numbered = re.match(r"Algorithm\s+(\d+)", raw)
                header = (f"alg{numbered.group(1)}" if numbered else re.match(r"[A-Za-z]\w*", raw).group(0).lower(),
                          (lines, last, lines[last]) if lines is not None else None)
            if last is not None and raw.strip():
                parts[-1][1][last] += "\n" + raw.strip()
        if len(parts) == 1:
            lines = parts[0][1]
        else:
            lines = {f"{sec}.{n}": t for sec, ls in parts for n, t in ls.items()}
        if len(lines) >= 3 and (1 in lines or len(parts) > 1):
            return lines
    return {}


TRACE_FORMULA = re.compile(r"\[Alg\. ?(\d+),? l\. ?(\d+)(?:\s*[-–]\s*(\d+))?")
ALG_LINE = re.compile(r"Alg\. ?(\d+),? l\. ?(\d+)(?:\s*[-–]\s*(\d+))?")
TRACE_EVENT = re.compile(r"^\s*(?:(round) \d+|client \d+ (starts|ends)): (\S+) = ")
TRACE_NAME = re.compile(r"^\s*(?:round \d+|client \d+ (?:starts|ends)|step \d+|server|final.*?):\s*(\S+) = ")


CONST_DEF = re.compile(r"^static const char \*const (\w+)(?:\[\w*\])? =")


def c_strings(text):
    """The strings of a C initializer ("a" "b", "c"): adjacent literals
    joined, commas between them apart."""
    out, cur = [], None
    for tok in re.finditer(r'"((?:[^"\\]|\\.)*)"|,', text):
        if tok.group(0) == ",":
            if cur is not None:
                out.append(cur)
            cur = None
        else:
            cur = (cur or "") + tok.group(1)
    if cur is not None:
        out.append(cur)
    return out


def formula_lines(alg, box):
    """{trace formula: box key} for the page's algorithm files: a formula is
    a string the C passes to the trace, in a named constant or in place;
    its line is the box line of the nearest `req: <alg>.alg<K>...l<n>` tag
    above a use of it in the same function (the code's own citation)."""
    out = {}
    parts = alg.split("-")
    # every tag of the page's algorithms, in any of their files (fedsim's
    # lines are cited in fedalt.c)
    tag = re.compile(rf"\b(?:{'|'.join(map(re.escape, parts))})\.alg(\d+)(?:\.([a-z]+))?\.l(\d+)(?:_(\d+))?\b")
    for part in parts:
        path = os.path.join(ROOT, "ref", "algorithms", part + ".c")
        if not os.path.exists(path):
            continue
        src = read(os.path.relpath(path, ROOT)).splitlines()
        consts, k = {}, 0
        while k < len(src):                      # named constants
            m = CONST_DEF.match(src[k])
            if m:
                text, j = "", k
                while True:
                    text += src[j]
                    if src[j].rstrip().endswith(";"):
                        break
                    j += 1
                consts[m.group(1)] = c_strings(text.split("=", 1)[1])
                k = j
            k += 1

        def cited_above(n):
            """The box key of the nearest tag above line n in its function."""
            for j in range(n, -1, -1):
                if j < n and src[j].startswith("}"):
                    return None
                if "req:" not in src[j]:
                    continue
                keys = [box_key(box, m.group(1), m.group(2), n)
                        for m in tag.finditer(src[j]) for n in id_lines(m)]
                if keys:      # the first of the tag's lines this box shows
                    return next((k for k in keys if k in box), keys[0])
            return None

        for n, line in enumerate(src):
            if CONST_DEF.match(line) or line.lstrip().startswith(("/*", "*", "//")):
                continue
            # the engine's events: "round t: w", "client i starts: NAME", "… ends: NAME"
            ev = re.search(r"\bpflref_(round_begin|client_begin|client_end)\((?:[^\"]*\"(\w+)\")?", line)
            if ev:
                key = cited_above(n)
                if key is not None and key in box:
                    kind = {"round_begin": "round", "client_begin": "starts",
                            "client_end": "ends"}[ev.group(1)]
                    out.setdefault((kind, ev.group(2) if kind != "round" else None), key)
            texts = [t for name, ts in consts.items() if re.search(rf"\b{name}\b", line) for t in ts]
            texts += c_strings(line) if ("formula" in line or "trace" in line) else []
            key = cited_above(n) if texts else None
            if key is not None and key in box:
                for t in texts:
                    out.setdefault(t, key)
    return out


def trace_lines(pflref, vector, formulas=None, box=None, page=None):
    """({box line: [trace lines]}, {box line: {quantity names}}) from the
    worked example's --trace; a step's formula holds for later steps of
    the same name until another is printed.  A formula without its line
    number ([Alg. 1, l. 7 …]) takes its line from formulas (formula_lines);
    the final records go to the box's "return" line, round 0's model to its
    "input" line when that names a start model (w^0, θ_0, …)."""
    run = subprocess.run([pflref, "run", "--quiet", "--trace", vector, "-o", TMP[0] + "/trace.json"],
                         capture_output=True, text=True, check=True)
    by_line, names, current = {}, {}, {}
    heads = [(k, str(x).split("\n")[0]) for k, x in (box or {}).items()]
    returns = next((k for k, x in heads if re.match(r"\s*(return|output)\b", x)), None)
    given = next((k for k, x in heads if re.match(r"\s*input\b.*\w\^?[{(]?0", x)), None)
    for t in run.stderr.splitlines():
        m = TRACE_NAME.match(t)
        name = m.group(1) if m else None
        f = TRACE_FORMULA.search(t)
        bracket = re.search(r"\s{2,}\[(.*)\]$", t)
        known = None
        if bracket and not f:      # the formula's own text, then the C's citation
            known = lines.PLACED.get((page, bracket.group(1).split(":")[0] + ":"))
            known = known if known in (box or {}) else lines.text_line(box or {}, bracket.group(1))
            known = known if known is not None else (formulas or {}).get(bracket.group(1))
        event = TRACE_EVENT.match(t)
        # a line whose value is an engine event's of another line (SHARED)
        shared = [k for k in lines.SHARED.get((page, "round" if event.group(1) else event.group(2),
                                               event.group(3)), ()) if k in (box or {})] if event else []
        at_event = None
        if event and not f and known is None:
            kind = "round" if event.group(1) else event.group(2)
            at_event = next((k for k in lines.PLACED.get((page, kind, event.group(3)), ()) if k in (box or {})),
                            None) or (formulas or {}).get((kind, event.group(3) if kind != "round" else None))
        if f or known is not None:
            line = box_key(box or {}, f.group(1), None, int(f.group(2))) if f else known
            if name:
                current[name] = line
        elif at_event is not None:
            line = at_event
        elif name in current and t.lstrip().startswith("step"):
            line = current[name]
        elif t.startswith("final") and returns is not None:
            line = returns           # the box's return line: what the run ends with
        elif t.startswith("round 0:") and given is not None:
            line = given             # w⁰, one of the box's inputs
        elif shared:
            line = shared[0]
        else:
            if os.environ.get("SITE_DEBUG"):    # SITE_DEBUG=1: what no line shows
                print(f"site: unplaced trace line: {t.strip()[:150]}", file=sys.stderr)
            continue
        # a formula of a range of lines ([Alg. 1 l. 6-7: …]) holds on each,
        # one of several algorithms' lines ([Alg. 4 l.16 / Alg. 5 l.12: …]) on
        # each of those the box has
        span = [line]
        for g in ALG_LINE.finditer(t) if f else []:
            last = int(g.group(3)) if g.group(3) and int(g.group(3)) - int(g.group(2)) < 4 else int(g.group(2))
            span += [box_key(box or {}, g.group(1), None, k) for k in range(int(g.group(2)), last + 1)]
        span += shared
        if bracket:      # one statement over several lines (lines.SPREAD)
            span += list(lines.SPREAD.get((page, bracket.group(1).split(":")[0] + ":"), ()))
        span = [k for k in dict.fromkeys(span) if k == line or k in (box or {})]
        for at in span:
            if name:
                names.setdefault(at, set()).add(name)
            shown = by_line.setdefault(at, [])
            if len(shown) < 4:
                shown.append(re.sub(r"\s{2,}\[.*$", "", t.strip()))
    RESULT[0] = json.loads(open(TMP[0] + "/trace.json", encoding="utf-8").read())
    TRACE_TEXT[0] = run.stderr.splitlines()
    return by_line, names


RESULT = [None]       # the worked example's result (its schedule, w0, hyperparameters)
TRACE_TEXT = [None]   # its --trace lines


def vectors_of(alg):
    """[(rel path, id, {record names})] of golden/<alg>/ (a page of two,
    fedalt-fedsim, has both folders)."""
    out = []
    for part in alg.split("-"):
        out += vectors_in(part)
    return out


def vectors_in(alg):
    folder = os.path.join(ROOT, "golden", alg)
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json"):
            continue
        try:
            v = json.loads(read(f"golden/{alg}/{name}"))
        except ValueError:
            continue
        if v.get("format") != "pflref-golden/1":
            continue
        exp = v.get("expected", {})
        names = {r.get("name") for r in exp.get("trajectory", [])}
        names |= set(exp.get("final", {}).keys())
        out.append((f"golden/{alg}/{name}", v.get("id", name), names))
        READING[f"golden/{alg}/{name}"] = paper_reading(v, name)
    return out


READING = {}   # vector path: its paper_reading key
DEFAULTS = {}  # switch: its default value (the paper's), from `pflref list`


def switch_defaults(pflref):
    """{switch: default value} from `pflref list` (a switch's line lists its
    values, the default first)."""
    run = subprocess.run([pflref, "list"], capture_output=True, text=True, check=True)
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^  (\S+\.\S+)\s+([\w-]+)\|", run.stdout, re.M)}


def paper_reading(v, name):
    """How far vector v is from the paper's own reading, as a sort key: a
    preset first, then the switches its spec sets to other than their
    defaults, then "paper" in the file name, then the model (linear
    before the rest) and its size."""
    spec = v.get("spec", {})
    a = spec.get("algorithm", {}) if isinstance(spec, dict) else {}
    model = spec.get("model", {}) if isinstance(spec, dict) else {}
    moved = [k for k, x in (a.get("switches", {}) or {}).items() if DEFAULTS.get(k) != x]
    return ("preset" in a, len(moved), "paper" not in name,
            model.get("kind") != "linear", len(json.dumps(v.get("expected", {}))))


def source_page(out, path, cited):
    src = read(path).splitlines()
    rows = []
    for k, s in enumerate(src, 1):
        rows.append(f'<span id="L{k}"><a class="ln" href="#L{k}">{k}</a>{html.escape(s)}</span>')
    depth = path.count("/") + 1
    body = (f"<h1><code>{html.escape(path)}</code></h1><p>{len(src)} lines; lines that cite the "
            f"paper are linked from the algorithm pages.</p><pre class=\"src\">" + "\n".join(rows) + "</pre>")
    write(out, f"src/{path}.html", page(path, body, depth))
    cited.add(path)


def test_list(test):
    """[(line, name, the comment above it)] of a test file's START_TESTs."""
    src = read(test).splitlines()
    out = []
    for k, t in enumerate(src):
        m = re.match(r"START_TEST\((\w+)\)", t)
        if not m:
            continue
        j, comment = k - 1, []
        if j >= 0 and src[j].rstrip().endswith("*/"):
            while j >= 0:
                comment.insert(0, src[j].strip().lstrip("/*").rstrip("*/").strip())
                if src[j].lstrip().startswith("/*"):
                    break
                j -= 1
        out.append((k + 1, m.group(1), " ".join(c for c in comment if c)))
    return out


def tests_section(test):
    items = "".join(f'<li><a href="../src/{test}.html#L{n}"><code>{html.escape(name)}</code></a> '
                    f"{html.escape(doc)}</li>" for n, name, doc in test_list(test))
    return (f'<h2 id="tests">The tests (<a href="../src/{test}.html">{test}</a>)</h2>'
            f"<ul>{items}</ul>")


def id_lines(m):
    """The box lines a requirement id's match names: l<n>, or the range
    l<a>_<b> of one statement the box spreads over lines a to b (FedALA's
    l. 8-11: "if t = 2: while … not converged: Eq. (5); σ")."""
    a = int(m.group(3))
    return range(a, int(m.group(4) or a) + 1)


def box_key(box, k, procedure, n):
    """The box's key for line n of Algorithm k's procedure (None: the
    algorithm's only one)."""
    if procedure is not None:
        named = [key.split(".")[0] for key in box if isinstance(key, str) and key.startswith(procedure)]
        return f"{named[0]}.{n}" if named else f"{procedure}.{n}"
    return f"alg{k}.{n}" if f"alg{k}.{n}" in box else n


def box_ids(alg, box):
    """{box line: requirement id} for the page's box: the registry (of the
    page's algorithms, fedalt-fedsim: fedalt then fedsim) whose ids
    <alg>.alg<K>.l<n> number as many lines as the box has.  A box of several
    procedures takes each line's id from its own: <alg>.alg<K>.<procedure>.l<n>
    (the procedure named by the start of its header, "local" for
    "LocalUpdate"), or <alg>.alg<K>.l<n> under a header "Algorithm K"."""
    found = []
    for part in alg.split("-"):
        by_k = {}
        for rid in TRACE[0].order.get(part, []):
            m = re.match(rf"^{re.escape(part)}\.alg(\d+)(?:\.([a-z]+))?\.l(\d+)(?:_(\d+))?$", rid)
            for n in id_lines(m) if m else ():
                key = box_key(box, m.group(1), m.group(2), n)
                by_k.setdefault(m.group(1), {})[key] = rid
        found += [by_k[k] for k in sorted(by_k, key=int)]
    if any(isinstance(key, str) for key in box):
        merged = {}
        for ids in found:
            merged.update({n: rid for n, rid in ids.items() if n in box and n not in merged})
        return merged
    best = {}
    for ids in found:
        if set(ids) == set(box):
            return ids
        if len(set(ids) & set(box)) > len(set(best) & set(box)):
            best = ids
    return best


def linked(out, cited, path):
    """A source page for path (made once); its site-relative name."""
    if path not in cited and os.path.exists(os.path.join(ROOT, path)):
        source_page(out, path, cited)
    return f"../src/{path}.html"


def without_acsl(src, a):
    """The indices from a on that are not proof annotations: the lines of
    an ACSL block (/*@ ... */) or an ACSL line (//@ ...) are proof
    material, linked from the source page but not shown beside the box."""
    keep, inside = [], False
    for k in range(a, len(src)):
        t = src[k].strip()
        if inside or t.startswith(("/*@", "//@")):
            inside = (inside or t.startswith("/*@")) and "*/" not in t
            continue
        keep.append(k)
    return keep


def statement_excerpt(src, a, most=8, cap=20):
    """The code under a tag from line a: whole statements up to the next
    blank line or tag (at least one line, `most` lines, and past `most`
    only to close a statement left open, at most `cap`), ACSL left out."""
    shown, depth = [], 0
    for k in without_acsl(src, a):
        t = src[k]
        if not t.strip() or (shown and trace.TAG.search(t)):
            break
        if len(shown) >= most and depth <= 0 and shown[-1].rstrip().endswith((";", "{", "}")):
            break
        if len(shown) >= cap:
            break
        shown.append(t)
        depth += t.count("(") - t.count(")")
    return shown


def code_cells(out, cited, rid):
    """The C lines citing rid: each tag and the statements under it, up to
    the next blank line (statement_excerpt)."""
    parts = []
    for f, n, _ in TRACE[0].cites.get(rid, {}).get("code", [])[:4]:
        src = read(f).splitlines()
        a = n                    # the line under the tag (0-based index n)
        while a < len(src) and trace.TAG.search(src[a]) and src[a].lstrip().startswith(("/*", "//")):
            a += 1               # the tag's continuation lines
        shown = statement_excerpt(src, a)
        excerpt = html.escape("\n".join(shown if shown else src[a - 1:a]))
        parts.append(f'<a href="{linked(out, cited, f)}#L{n}">{f}:{n}</a><pre>{excerpt}</pre>')
    return "".join(parts)


def evidence_for(out, cited, rid):
    """The golden vectors, tests and proofs that cite rid, as links (class
    "check" on the vectors and tests: tests/site/check_site.py counts them)."""
    t = TRACE[0]
    by = t.cites.get(rid, {})
    parts = [f'<code class="req">{html.escape(rid)}</code><br>']
    vecs = t.vectors.get(rid, [])
    if vecs:
        items = "".join(f'<li><a class="check vector" href="../{p}">{html.escape(i)}</a></li>'
                        for p, i in vecs[:4])
        more = (f'<li>… and {len(vecs) - 4} more (<a href="../traceability.html#{TRACE[0].reqs[rid]["alg"]}">'
                f"all</a>)</li>" if len(vecs) > 4 else "")
        parts.append(f"vectors:<ul>{items}{more}</ul>")
    tests = by.get("test", [])
    if tests:
        items = "".join(f'<li><a class="check test" href="{linked(out, cited, f)}#L{n}">'
                        f"<code>{html.escape(name or os.path.basename(f))}</code></a></li>"
                        for f, n, name in tests)
        parts.append(f"tests:<ul>{items}</ul>")
    proofs = by.get("proof", [])
    if proofs:
        items = "".join(f'<li><a href="{linked(out, cited, f)}#L{n}">{html.escape(f)}:{n}</a></li>'
                        for f, n, _ in proofs)
        parts.append(f"proofs:<ul>{items}</ul>")
    return "".join(parts)


def equations_section(out, cited, alg, in_box):
    """The page's other requirements (equations, the second box of a page
    with two), each with its code and the tests and vectors citing it."""
    rows = []
    for part in alg.split("-"):
        for rid in TRACE[0].order.get(part, []):
            if rid in in_box:
                continue
            r = TRACE[0].reqs[rid]
            anchor = "req-" + rid.replace(".", "-")
            rows.append(f'<tr id="{anchor}"><td class="paper">{html.escape(r["citation"])}:<br>'
                        f'{FORMULAS.html_of(r["statement"], rid)}</td><td class="code">{code_cells(out, cited, rid)}</td>'
                        f'<td class="evidence">{evidence_for(out, cited, rid)}</td></tr>')
    if not rows:
        return ""
    regs = ", ".join(f"trace/{p}.req" for p in alg.split("-"))
    head = "Other requirements" if in_box else "Requirements"
    return (f'<h2 id="requirements">{head} ({html.escape(regs)})</h2>'
            '<p>Each statement the code implements, from the registry, with the C lines citing it '
            'and the vectors, tests and proofs that check it '
            '(<a href="../traceability.html">the whole matrix</a>).</p>'
            '<table class="beside reqs"><tr><th>the paper</th><th>the C lines that cite it</th>'
            "<th>checked by</th></tr>" + "".join(rows) + "</table>")


def algorithm_page(out, pflref, alg, md_rel, cited):
    md = read(md_rel)
    title = re.search(r"^# (.+)$", md, re.M).group(1)
    box = parse_box(md)
    ids = box_ids(alg, box) if box else {}
    # every registered line of an algorithm the box shows has its row (a
    # line the parser ran into its neighbour would lose its evidence)
    shown = {rid.rsplit(".l", 1)[0].split(".")[1] for rid in ids.values()}
    unplaced = [rid for part in alg.split("-") for rid in TRACE[0].order.get(part, [])
                if re.match(rf"^{re.escape(part)}\.alg\d+(\.[a-z]+)?\.l\d+$", rid)
                and rid.split(".")[1] in shown and rid not in ids.values()]
    if unplaced:
        sys.exit(f"site: {md_rel}: the box has no line for {', '.join(unplaced)} (trace/*.req)")
    vectors = vectors_of(alg)
    # the worked example: the paper's reading (no preset, the fewest
    # switches; its formulas cite the box), paper_reading
    # A page of two (fedalt-fedsim): each algorithm's lines from its own
    # worked example; the note names the first algorithm's.
    traced, runs, examples = {}, {}, []
    for part in alg.split("-"):
        mine = [p for p, _, _ in vectors if p.startswith(f"golden/{part}/")]
        example = min(mine, key=lambda p: READING.get(p, ()), default=None)
        if not (example and box):
            continue
        # the paper's reading or nothing: a preset or a switch off its
        # default would show a variant's values beside the paper's box
        if READING[example][:2] != (False, 0):
            sys.exit(f"site: {alg}: no vector of golden/{part}/ runs the paper's reading "
                     f"(no preset, every switch at its default); the nearest, {example}, "
                     "would show a variant's values beside the box: add one")
        RESULT[0], TRACE_TEXT[0] = None, None
        keys = [k for k in box if (ids.get(k) or part + ".").startswith(part + ".")]
        own = {k: box[k] for k in keys}
        got = trace_lines(pflref, os.path.join(ROOT, example), formula_lines(alg, own), own, alg)[0]
        traced.update({k: got[k] for k in keys if k in got and k not in traced})
        runs.update({k: (RESULT[0], TRACE_TEXT[0] or []) for k in keys if k not in runs})
        examples.append(example)
    # a line the worked example does not run (the paper's other option):
    # its values from a second vector that runs it (lines.SECOND), said so
    seconds = []
    for vec, keys, why in lines.SECOND.get(alg, ()):
        if not box or not all(k in box for k in keys):
            sys.exit(f"site: tools/site/lines.py SECOND: {alg}: no box line {keys}")
        part = vec.split("/")[1]
        own = {k: box[k] for k in box if (ids.get(k) or part + ".").startswith(part + ".")}
        got = trace_lines(pflref, os.path.join(ROOT, vec), formula_lines(alg, own), own, alg)[0]
        filled = [k for k in keys if got.get(k) and k not in traced]
        for k in filled:
            traced[k] = [f"(not run by the worked example; from {vec}, {why})"] + got[k]
        if filled:
            seconds.append((vec, filled, why))
    worked = examples[0] if examples else None
    test = next((f"tests/test_{a}.c" for a in alg.split("-")
                 if os.path.exists(os.path.join(ROOT, f"tests/test_{a}.c"))), None)
    if test and test not in cited:
        source_page(out, test, cited)
    for p, _, _ in vectors:
        os.makedirs(os.path.dirname(os.path.join(out, p)), exist_ok=True)
        outfile.copy(os.path.join(ROOT, p), os.path.join(out, p))
    for rid_vecs in TRACE[0].vectors.values():
        for p, _ in rid_vecs:
            if not os.path.exists(os.path.join(out, p)):
                os.makedirs(os.path.dirname(os.path.join(out, p)), exist_ok=True)
                outfile.copy(os.path.join(ROOT, p), os.path.join(out, p))
    rows = []
    allowed = lines.allow_list().get(alg, {})
    for n in box:
        rid = ids.get(n)
        code = code_cells(out, cited, rid) if rid else ""
        evidence = evidence_for(out, cited, rid) if rid else "no requirement registered for this line"
        kind, cls, tr = lines.cell(alg, n, box[n], traced.get(n, []), *runs.get(n, (None, [])),
                                   allowed, box)
        trace_cell = (f'<pre class="{cls}">{html.escape(chr(10).join(tr))}</pre>' if tr else "")
        req_attr = f' data-req="{html.escape(rid)}"' if rid else ""
        rows.append(f'<tr id="line-{str(n).replace(".", "-")}"{req_attr}><td class="line">{str(n).replace(".", " ")}</td><td class="paper">{FORMULAS.html_of(box[n], md_rel)}</td>'
                    f'<td class="code">{code}</td><td class="evidence">{evidence}</td>'
                    f'<td class="trace" data-kind="{kind}">{trace_cell}</td></tr>')
    intro_md = md.split("\n## ", 1)[0].split("\n", 1)[1]
    if box:
        intro = md_render(intro_md, ["tables"], where=md_rel)
        worked_note = "".join(
            f'<p>Trace values{" of " + html.escape(ex.split("/")[1]) + "&#8217;s lines" if len(examples) > 1 else ""}: '
            f'<code>pflref run --trace {html.escape(ex)}</code> '
            f'(<a href="../{ex}">the vector</a>), the first values printed at each line; a line that computes '
            f'nothing shows what it is (a loop: its index values in the run).</p>' for ex in examples)
        worked_note += "".join(
            f'<p>Line{"s" if len(keys) > 1 else ""} {", ".join(str(k).replace(".", " ") for k in keys)} '
            f'{"are" if len(keys) > 1 else "is"} not run by the worked example: '
            f'{"their" if len(keys) > 1 else "its"} values are those of <code>pflref run --trace '
            f'{html.escape(vec)}</code> (<a href="../{vec}">the vector</a>: {html.escape(why)}).</p>'
            for vec, keys, why in seconds)
        table = (f"<table class=\"beside\"><tr><th>l.</th><th>the paper's box</th><th>the C lines that cite it</th>"
                 f"<th>checked by (this line)</th><th>worked example (--trace)</th></tr>{''.join(rows)}</table>")
        body = f"<h1>{html.escape(title)}</h1>{fix_links(intro, md_rel, 1)}{worked_note}{table}"
    else:
        # no numbered box (a method of the seeds): its page as written
        body = fix_links(md_render(md, ["tables", "fenced_code", "toc"], where=md_rel), md_rel, 1)
    body += equations_section(out, cited, alg, set(ids.values()))
    body += tests_section(test) if test else ""
    write(out, f"alg/{alg}.html", page(title, body, 1))
    return title


# ---- documents --------------------------------------------------------------

DOC_PAGES = {}


def fix_links(text, md_rel, depth):
    """Relative links of a rendered document: to another .md (rendered on
    demand as doc/<name>.html, or validate.html), to a repository file
    (copied under raw/), kept as is for absolute URLs and anchors."""
    base = os.path.dirname(md_rel)

    def repl(m):
        href = m.group(1)
        if re.match(r"^[a-z]+:", href) or href.startswith("#"):
            return m.group(0)
        path, _, frag = href.partition("#")
        target = os.path.normpath(os.path.join(base, path))
        up = "../" * depth
        if target.endswith(".md") and os.path.exists(os.path.join(ROOT, target)):
            DOC_PAGES.setdefault(target, None)
            name = "validate.html" if target == "docs/validate.md" else \
                "doc/" + target.replace("/", "_")[:-3] + ".html"
            new = up + name
        elif (target.endswith((".c", ".h", ".py", ".v")) and SITE.get("out")
              and os.path.isfile(os.path.join(ROOT, target)) and not target.startswith("..")):
            # a source file: its numbered page, the #L<n> anchor kept
            if target not in SITE["cited"]:
                source_page(SITE["out"], target, SITE["cited"])
            new = up + "src/" + target + ".html"
        elif os.path.exists(os.path.join(ROOT, target)) and not target.startswith(".."):
            RAW.add(target)
            new = up + "raw/" + target + ("/index.html" if os.path.isdir(os.path.join(ROOT, target)) else "")
            frag = ""
        else:
            # not a file: Markdown read maths such as Π_[0,1](x) as a link
            print(f"site: {md_rel}: [..]({href}) names no file; shown as text", file=sys.stderr)
            return 'class="not-a-link"'
        return f'href="{new}{"#" + frag if frag else ""}"'

    return re.sub(r'href="([^"]*)"', repl, text)


def md_render(md, extensions, formulas=None, where=""):
    """Markdown to HTML with the mathematics kept: each formula token
    (w_{i,r}, clip_[0,1], w*: tools/site/math.py) taken out before Markdown
    runs and typeset by KaTeX, and a star left after that which follows a
    symbol without an emphasis open before it is a star, not the start of
    an emphasis that would eat the text up to the next one."""
    f = FORMULAS if formulas is None else formulas
    return f.restore(markdown.markdown(protect_stars(f.protect(md, where)), extensions=extensions))


def protect_stars(md):
    out, fenced = [], False
    for line in md.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or "*" not in line:
            out.append(line)
            continue
        parts = re.split(r"(`[^`]*`)", line)     # code spans as they are
        opened = False
        for k in range(0, len(parts), 2):
            t, res = parts[k], []
            for i, c in enumerate(t):
                if c != "*" or (i + 1 < len(t) and t[i + 1] == "*") or (i > 0 and t[i - 1] == "*"):
                    res.append(c)         # ** (strong) is Markdown's
                    continue
                before = t[i - 1] if i > 0 else " "
                after = t[i + 1] if i + 1 < len(t) else " "
                if not (before.isalnum() or before in ")}]'") :
                    opened = opened or not after.isspace()
                    res.append(c)         # an emphasis opens (or a lone star)
                elif opened:
                    opened = False
                    res.append(c)         # it closes
                else:
                    res.append("\\*")     # w*: a star of the mathematics
            parts[k] = "".join(res)
        out.append("".join(parts))
    return "\n".join(out)


RAW = set()
SITE = {}      # out folder and the set of source pages made (main sets them)
TMP = [None]   # the scratch folder (main sets it)


def render_doc(out, md_rel, rel_out, depth):
    md = read(md_rel)
    h = md_render(md, ["tables", "fenced_code", "toc"], where=md_rel)
    title = (re.search(r"^# (.+)$", md, re.M) or re.match("(.*)", md_rel)).group(1)
    write(out, rel_out, page(title, fix_links(h, md_rel, depth), depth))


def copy_raw(out):
    for target in sorted(RAW):
        src = os.path.join(ROOT, target)
        dst = os.path.join(out, "raw", target)
        if os.path.isdir(src):
            os.makedirs(dst, exist_ok=True)
            items = "".join(f"<li>{html.escape(n)}</li>" for n in sorted(os.listdir(src)))
            outfile.write(os.path.join(dst, "index.html"),
                          page(target, f"<h1>{html.escape(target)}/</h1><ul>{items}</ul>",
                               target.count("/") + 2))
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            outfile.copy(src, dst)


# ---- demo, variants, index ------------------------------------------------------

def demo_page(out, pflref, tmp):
    def run(*args):
        subprocess.run([pflref, *args], check=True, capture_output=True)
    ft, local, sweep = (os.path.join(tmp, n) for n in ("ft.json", "local.json", "sweep.json"))
    run("run", "--quiet", os.path.join(ROOT, "golden/seed000/fedavg-ft.json"), "-o", ft)
    run("run", "--quiet", os.path.join(ROOT, "golden/seed000/local.json"), "-o", local)
    run("run", "--quiet", os.path.join(ROOT, "golden/seed000/interp-sweep.json"), "-o", sweep)
    os.makedirs(os.path.join(out, "fig"), exist_ok=True)
    run("plot", "clients", "-o", os.path.join(out, "fig/clients.svg"), f"global={ft}:global",
        f"local={local}:local", f"personalized={ft}:personalized")
    run("plot", "sweep", "-o", os.path.join(out, "fig/sweep.svg"), sweep)
    run("plot", "curves", "-o", os.path.join(out, "fig/curves.svg"),
        "fedavg=" + os.path.join(ROOT, "golden/seed000/fedavg-ft.json"))
    vec = os.path.join(ROOT, "golden/pfedme/worked-linear-paper-beta.json")
    cand, report = os.path.join(tmp, "cand.json"), os.path.join(tmp, "report.json")
    run("run", "--quiet", vec, "-o", cand)
    rep = subprocess.run([pflref, "check", "--quiet", "--json", vec, cand], capture_output=True, text=True)
    outfile.write(report, rep.stdout)
    run("plot", "check", "-o", os.path.join(out, "fig/check.svg"), report)
    figs = [("clients.svg", "Seed 000, Output 14.7.1: every client's test MSE under the global, local and "
             "personalised models; the mean hides the worst client, and the global model pleases nobody.",
             "pflref plot clients -o clients.svg global=ft.json:global local=local.json:local personalized=ft.json:personalized"),
            ("sweep.svg", "Exercise 14.7.2: each client's test MSE against the interpolation weight α, the chosen α_i ringed.",
             "pflref plot sweep -o sweep.svg sweep.json"),
            ("curves.svg", "FedAvg's 400 rounds: the global model's mean and worst-client test MSE per round.",
             "pflref plot curves -o curves.svg fedavg=golden/seed000/fedavg-ft.json"),
            ("check.svg", "pflref check of a correct candidate on a pFedMe vector: correct digits of each quantity along the trajectory, with the tolerance line.",
             "pflref plot check -o check.svg report.json")]
    body = "<h1>Seed 000's figures</h1>" + "".join(
        f'<figure><img src="fig/{f}" alt="{html.escape(c)}"><figcaption>{html.escape(c)}<br><code>{html.escape(cmd)}</code>'
        f"</figcaption></figure>" for f, c, cmd in figs)
    write(out, "demo.html", page("demo figures", body))


def variants_page(out, pflref):
    if os.path.exists(os.path.join(ROOT, "docs/variants.md")):
        render_doc(out, "docs/variants.md", "variants.html", 0)
        return
    listing = subprocess.run([pflref, "list"], capture_output=True, text=True, check=True).stdout
    body = ("<h1>Variants: switches and presets</h1><p>The registry of <code>ref/engine/params.c</code> "
            "as <code>pflref list</code> prints it: every switch (the paper's reading first) and every "
            "preset with its source.</p><pre>" + html.escape(listing) + "</pre>")
    write(out, "variants.html", page("variants", body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pflref", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    bad = pmath.self_test(md_render)      # `_`, `*` and `[ ]` of formulas survive
    if bad:
        sys.exit("site: the formulas' self-test failed:\n  " + "\n  ".join(bad))
    if not pmath.self_test(lambda md, ext, f: markdown.markdown(md, extensions=ext)):
        sys.exit("site: the formulas' self-test passes plain Markdown, which eats them")
    pflref, out = os.path.abspath(a.pflref), os.path.abspath(a.out)
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    TMP[0] = tmp
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    write(out, "style.css", CSS)
    TRACE[0] = trace.collect(ROOT)
    DEFAULTS.update(switch_defaults(pflref))
    cited, algs = set(), []
    SITE.update(out=out, cited=cited)
    for name in sorted(os.listdir(os.path.join(ROOT, "docs/algorithms"))):
        alg = name[:-3]
        title = algorithm_page(out, pflref, alg, f"docs/algorithms/{name}", cited)
        algs.append((alg, title))
    render_doc(out, "docs/traceability.md", "traceability.html", 0)
    demo_page(out, pflref, tmp)
    variants_page(out, pflref)
    render_doc(out, "docs/validate.md", "validate.html", 0)
    done = {"docs/validate.md"}
    while set(DOC_PAGES) - done:
        for md_rel in sorted(set(DOC_PAGES) - done):
            done.add(md_rel)
            if md_rel != "docs/validate.md":
                render_doc(out, md_rel, "doc/" + md_rel.replace("/", "_")[:-3] + ".html", 1)
    copy_raw(out)
    items = "".join(f'<li><a href="alg/{a}.html">{html.escape(t)}</a></li>' for a, t in algs)
    body = (f"<h1>pflref: the reader's edition</h1><p>Each algorithm's box from the paper, line by line, "
            f"beside the C lines that implement it, the golden vectors and tests that check each line, and "
            f"a worked example's traced values. Generated by <code>make site</code> from the sources.</p>"
            f"<h2>Algorithms</h2><ul>{items}</ul><h2>More</h2><ul><li><a href=\"demo.html\">seed 000's figures</a></li>"
            f"<li><a href=\"variants.html\">variants (switches and presets)</a></li>"
            f"<li><a href=\"validate.html\">validating an implementation</a></li>"
            f"<li><a href=\"traceability.html\">traceability: paper line → code → tests → golden "
            f"vectors → proofs</a> (<code>make trace</code>)</li></ul>")
    write(out, "index.html", page("pflref", body))
    problems = FORMULAS.typeset(out, outfile.write)
    if problems:
        sys.exit("site: KaTeX:\n  " + "\n  ".join(problems))
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"site: {len(algs)} algorithm pages, {len(cited)} source pages, "
          f"{len(DOC_PAGES)} documents, {len(FORMULAS.tex)} formulas (KaTeX) in {os.path.relpath(out)}")


if __name__ == "__main__":
    sys.exit(main())
