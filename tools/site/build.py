#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/site/build.py: the reader's edition, static HTML from the sources.

    /usr/bin/python3 tools/site/build.py --pflref build/rel/pflref --out build/site

Writes, with no server, script or network needed to read them:

  index.html           the algorithms, the demo, the variants, the guide
  alg/<alg>.html       per algorithm: the paper's box line by line (the
                       numbered box of docs/algorithms/<alg>.md), beside it
                       the C lines that cite that line (comments "l. N" in
                       the files the page's **Code.** paragraph names), the
                       golden vectors that record the quantities the line
                       computes and the algorithm's tests, and the values a
                       worked example's --trace prints at that line
  src/<path>.html      each cited C file with numbered, linkable lines
  golden/...json       the vectors linked to (copies)
  demo.html            seed 000's figures, drawn by `pflref plot`
  variants.html        the switches and presets (docs/variants.md when it
                       exists, else `pflref list`)
  validate.html        docs/validate.md; other documents it links to are
                       rendered as doc/<name>.html
  style.css

Which line a quantity belongs to comes from the trace itself: each trace
line carries the formula of the paper line that produced it ("[Alg. 1 l.
8: ...]"), so a quantity name (w_local) is tied to a box line (8), and a
vector that expects records of that name checks that line.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

import markdown

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSS = """body{font-family:"DejaVu Sans",sans-serif;margin:0 auto;max-width:1400px;padding:1em 2em;color:#222}
nav{margin-bottom:1em}nav a{margin-right:1.2em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.35em .6em;vertical-align:top}
th{background:#f3f3f3}pre,code{font-family:"DejaVu Sans Mono",monospace;font-size:.9em}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;margin:.2em 0}
td.line{font-weight:bold;text-align:right}td.paper{max-width:28em;font-family:"DejaVu Sans Mono",monospace;font-size:.9em;white-space:pre-wrap}
td.code pre{margin:0 0 .4em 0}td.evidence{font-size:.85em;max-width:18em}td.trace pre{font-size:.8em;max-width:34em;white-space:pre-wrap}
.src{counter-reset:none}.src a.ln{color:#999;display:inline-block;width:4em;text-align:right;margin-right:1em;text-decoration:none}
.src span:target{background:#fff3b0}img{max-width:100%;border:1px solid #ddd}
"""


def page(title, body, depth=0):
    up = "../" * depth
    nav = (f'<nav><a href="{up}index.html">pflref</a><a href="{up}demo.html">demo figures</a>'
           f'<a href="{up}variants.html">variants</a><a href="{up}validate.html">validation guide</a></nav>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{html.escape(title)}</title><link rel="stylesheet" href="{up}style.css">'
            f'</head><body>{nav}{body}</body></html>\n')


def write(out, rel, text):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


# ---- the algorithm pages --------------------------------------------------

BOX_LINE = re.compile(r"^\s{0,3}(\d{1,2})\s+(\S.*)$")


def parse_box(md):
    """The numbered box: the first fenced block whose lines start with
    1, 2, 3, ...; {number: text} with continuation lines joined."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", md, re.S):
        lines, last = {}, None
        for raw in block.splitlines():
            m = BOX_LINE.match(raw)
            if m and int(m.group(1)) == (last or 0) + 1:
                last = int(m.group(1))
                lines[last] = m.group(2).rstrip()
            elif last is not None and raw.strip():
                lines[last] += "\n" + raw.strip()
        if len(lines) >= 3 and 1 in lines:
            return lines
    return {}


CITE = re.compile(r"\bl\.\s*(\d+)(?:\s*[-–]\s*(\d+))?")


def code_files(md, alg):
    """The C files the page's **Code.** paragraph names, its own first."""
    para = re.search(r"\*\*Code\.\*\*(.*?)\n\n", md, re.S)
    files = re.findall(r"`(ref/[a-z_/]+\.c)`", para.group(1) if para else "")
    for part in reversed(alg.split("-")):
        own = f"ref/algorithms/{part}.c"
        if os.path.exists(os.path.join(ROOT, own)) and own not in files:
            files.insert(0, own)
    return [f for f in dict.fromkeys(files) if os.path.exists(os.path.join(ROOT, f))]


def citations(path):
    """{box line: [(first, last) source lines]}: each comment citing
    "l. N" (outside the file's header) and the code under it, up to the
    next blank line or citing comment (at most 10 lines)."""
    src = read(path).splitlines()
    body_from = next((k for k, s in enumerate(src) if s.startswith("#include")), 0)
    out = {}
    for k in range(body_from, len(src)):
        s = src[k]
        if "/*" not in s or not CITE.search(s.split("/*", 1)[1]):
            continue
        if s.lstrip().startswith("*"):
            continue
        end = k
        while (end + 1 < len(src) and end - k < 9 and src[end + 1].strip()
               and not ("/*" in src[end + 1] and CITE.search(src[end + 1]))):
            end += 1
        for m in CITE.finditer(s.split("/*", 1)[1]):
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else a
            if b > a + 1:
                continue  # a function's summary ("l. 5-8"), not a line's code
            for n in range(a, b + 1):
                out.setdefault(n, []).append((k + 1, end + 1))
    return src, out


TRACE_FORMULA = re.compile(r"\[Alg\. ?\d+,? l\. ?(\d+)(?:\s*[-–]\s*(\d+))?")
TRACE_NAME = re.compile(r"^\s*(?:round \d+|client \d+ (?:starts|ends)|step \d+|server|final.*?):\s*(\S+) = ")


def trace_lines(pflref, vector):
    """({box line: [trace lines]}, {box line: {quantity names}}) from the
    worked example's --trace; a step's formula holds for later steps of
    the same name until another is printed."""
    run = subprocess.run([pflref, "run", "--quiet", "--trace", vector, "-o", TMP[0] + "/trace.json"],
                         capture_output=True, text=True, check=True)
    by_line, names, current = {}, {}, {}
    for t in run.stderr.splitlines():
        m = TRACE_NAME.match(t)
        name = m.group(1) if m else None
        f = TRACE_FORMULA.search(t)
        if f:
            line = int(f.group(1))
            if name:
                current[name] = line
        elif name in current and t.lstrip().startswith("step"):
            line = current[name]
        else:
            continue
        if name:
            names.setdefault(line, set()).add(name)
        shown = by_line.setdefault(line, [])
        if len(shown) < 4:
            shown.append(re.sub(r"\s+\[Alg.*$", "", t.strip()))
    return by_line, names


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
    return out


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


def evidence_cell(alg, line, names, vectors, test):
    hit = [(p, i) for p, i, n in vectors if names & n] if names else []
    parts = []
    if hit:
        parts.append("vectors recording " + ", ".join(f"<code>{html.escape(n)}</code>" for n in sorted(names)) + ":<br>")
        parts.append("<br>".join(f'<a href="../{p}">{html.escape(i)}</a>' for p, i in hit[:8]))
        if len(hit) > 8:
            parts.append(f"<br>… and {len(hit) - 8} more")
    elif vectors:
        parts.append(f"no quantity of its own; every vector of <code>golden/{alg}/</code> runs it "
                     f'(e.g. <a href="../{vectors[0][0]}">{html.escape(vectors[0][1])}</a>)')
    if test:
        parts.append(f'<br>tests: <a href="#tests">{test}</a> (every one runs this line)')
    return "".join(parts)


def algorithm_page(out, pflref, alg, md_rel, cited):
    md = read(md_rel)
    title = re.search(r"^# (.+)$", md, re.M).group(1)
    box = parse_box(md)
    if not box:
        return None
    files = code_files(md, alg)
    cites = {f: citations(f) for f in files}
    for f in files:
        if f not in cited:
            source_page(out, f, cited)
    vectors = vectors_of(alg)
    # the worked example: the paper's reading first (its formulas cite the box)
    worked = next((p for key in ("paper", "worked") for p, i, n in vectors if key in p),
                  vectors[0][0] if vectors else None)
    traced, names = trace_lines(pflref, os.path.join(ROOT, worked)) if worked else ({}, {})
    test = next((f"tests/test_{a}.c" for a in alg.split("-")
                 if os.path.exists(os.path.join(ROOT, f"tests/test_{a}.c"))), None)
    if test and test not in cited:
        source_page(out, test, cited)
    for p, _, _ in vectors:
        os.makedirs(os.path.dirname(os.path.join(out, p)), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, p), os.path.join(out, p))
    rows = []
    for n in sorted(box):
        code = []
        for f in files:
            src, cmap = cites[f]
            for a, b in cmap.get(n, [])[:3]:
                excerpt = html.escape("\n".join(src[a - 1:b]))
                code.append(f'<a href="../src/{f}.html#L{a}">{f}:{a}</a><pre>{excerpt}</pre>')
        tr = traced.get(n, [])
        trace = f"<pre>{html.escape(chr(10).join(tr))}</pre>" if tr else ""
        rows.append(f'<tr id="line-{n}"><td class="line">{n}</td><td class="paper">{html.escape(box[n])}</td>'
                    f'<td class="code">{"".join(code)}</td>'
                    f'<td class="evidence">{evidence_cell(alg, n, names.get(n, set()), vectors, test)}</td>'
                    f'<td class="trace">{trace}</td></tr>')
    intro = markdown.markdown(md.split("\n## ", 1)[0].split("\n", 1)[1], extensions=["tables"])
    worked_note = (f'<p>Trace values: <code>pflref run --trace {html.escape(worked)}</code> '
                   f'(<a href="../{worked}">the vector</a>), the first values printed at each line.</p>'
                   if worked else "")
    body = (f"<h1>{html.escape(title)}</h1>{fix_links(intro, md_rel, 1)}{worked_note}"
            f"<table class=\"beside\"><tr><th>l.</th><th>the paper's box</th><th>the C lines that cite it</th>"
            f"<th>checked by</th><th>worked example (--trace)</th></tr>{''.join(rows)}</table>"
            + (tests_section(test) if test else ""))
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


RAW = set()
TMP = [None]   # the scratch folder (main sets it)


def render_doc(out, md_rel, rel_out, depth):
    md = read(md_rel)
    h = markdown.markdown(md, extensions=["tables", "fenced_code", "toc"])
    title = (re.search(r"^# (.+)$", md, re.M) or re.match("(.*)", md_rel)).group(1)
    write(out, rel_out, page(title, fix_links(h, md_rel, depth), depth))


def copy_raw(out):
    for target in sorted(RAW):
        src = os.path.join(ROOT, target)
        dst = os.path.join(out, "raw", target)
        if os.path.isdir(src):
            os.makedirs(dst, exist_ok=True)
            items = "".join(f"<li>{html.escape(n)}</li>" for n in sorted(os.listdir(src)))
            with open(os.path.join(dst, "index.html"), "w", encoding="utf-8") as f:
                f.write(page(target, f"<h1>{html.escape(target)}/</h1><ul>{items}</ul>",
                             target.count("/") + 2))
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)


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
    with open(report, "w", encoding="utf-8") as f:
        f.write(rep.stdout)
    run("plot", "check", "-o", os.path.join(out, "fig/check.svg"), report)
    figs = [("clients.svg", "Seed 000, Output 14.7.1: every client's test MSE under the global, local and "
             "personalised models; the mean hides the worst client, and the global model pleases nobody.",
             "pflref plot clients -o clients.svg global=ft.json:global local=local.json:local personalized=ft.json:personalized"),
            ("sweep.svg", "Exercise 14.7.2: each client's test MSE against the interpolation weight α, the chosen α_i ringed.",
             "pflref plot sweep -o sweep.svg sweep.json"),
            ("curves.svg", "FedAvg's 400 rounds: the global model's mean and worst-client test MSE per round.",
             "pflref plot curves -o curves.svg fedavg=golden/seed000/fedavg-ft.json"),
            ("check.svg", "pflref check of a correct candidate on a pFedMe vector: correct digits per quantity.",
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
    pflref, out = os.path.abspath(a.pflref), os.path.abspath(a.out)
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    TMP[0] = tmp
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    write(out, "style.css", CSS)
    cited, algs = set(), []
    for name in sorted(os.listdir(os.path.join(ROOT, "docs/algorithms"))):
        alg = name[:-3]
        title = algorithm_page(out, pflref, alg, f"docs/algorithms/{name}", cited)
        if title is None:
            # no numbered box (a composition of others): its page as written
            render_doc(out, f"docs/algorithms/{name}", f"alg/{alg}.html", 1)
            title = re.search(r"^# (.+)$", read(f"docs/algorithms/{name}"), re.M).group(1)
        algs.append((alg, title))
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
            f"<li><a href=\"validate.html\">validating an implementation</a></li></ul>")
    write(out, "index.html", page("pflref", body))
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"site: {len(algs)} algorithm pages, {len(cited)} source pages, "
          f"{len(DOC_PAGES)} documents in {os.path.relpath(out)}")


if __name__ == "__main__":
    sys.exit(main())
