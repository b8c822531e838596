# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/site/math.py: the mathematics of the reader's edition, typeset by
KaTeX (Debian's libjs-katex, run once per build under node: the pages need
no script).

The sources write formulas in plain text with TeX's scripts: w_{i,r+1},
θ_i^{t−1}, v̄_i^(t), Σ_{k∈S_t}, clip_[0,1], w*.  A Markdown renderer reads
their `_`, `*` and `[ ]` as emphasis and links (w* opened an emphasis,
clip_[0,1](…) became a link to nowhere).  So each such symbol with its
scripts is a *formula token*: taken out of the text before Markdown runs (a
placeholder Markdown leaves alone), turned into TeX (to_tex) and typeset by
KaTeX; the text around it stays text.  Code (`…` spans, fenced blocks,
<pre>) is never touched.

A KaTeX error or warning (strict mode: an unknown character) fails the
build, naming the formula: `make site` leaves no parse warning.  self_test()
checks that `_`, `*` and `[ ]` survive: each sample's TeX is exactly the
expected one, and Markdown's own emphasis and links still work around them.
"""
import html
import json
import os
import re
import shutil
import subprocess

KATEX = "/usr/share/javascript/katex"

# A symbol: a Latin or Greek letter (or ∇, ℓ, Σ, Π, ∂) with its combining
# accents, or a Latin word (clip, argmin) that only takes bracketed scripts.
LETTER = "A-Za-zΑ-Ωα-ωϑϕϵℓ∇∂"
MARKS = "\u0300-\u036f"
ONE = rf"[{LETTER}][{MARKS}]*"
BRACED = r"\{(?:[^{}]|\{[^{}]*\})*\}"
BRACKETED = r"\[[^\[\]\s]*\]"
PARENS = r"\((?:[^()\s]|\([^()\s]*\))*\)"
SINGLE = rf"(?:[0-9]|[{LETTER}][{MARKS}]*|[⁰¹²³⁺ᵀ′])(?![A-Za-z0-9{MARKS}])"
SCRIPT = rf"(?:[_^](?:{BRACED}|{BRACKETED}|{PARENS}|{SINGLE}))"
TOKEN = re.compile(
    rf"(?<![\w.\-#=:@$`\\{MARKS}])"
    rf"(?:(?P<word>[A-Za-z]{{2,}})(?P<wscripts>(?:[_^](?:{BRACED}|{BRACKETED}))+)"
    rf"|(?P<one>{ONE})(?P<star>\*(?![*A-Za-z0-9]))?(?P<scripts>{SCRIPT}+)?)")

# characters KaTeX does not know in math mode, as TeX
UNICODE_TEX = {
    "ĵ": r"\hat{\jmath}", "‖": r"\|", "⟨": r"\langle ", "⟩": r"\rangle ", "…": r"\ldots ",
    "−": "-", "·": r"\cdot ", "∉": r"\notin ", "⊙": r"\odot ", "∼": r"\sim ", "𝟙": r"\mathbb{1}",
    "⁰": "^0", "¹": "^1", "²": "^2", "³": "^3", "ᵀ": "^T", "′": "'", "⁺": "^+", "→": r"\to ",
    "≤": r"\le ", "≥": r"\ge ", "∪": r"\cup ", "∩": r"\cap ", "∑": r"\sum ", "Σ": r"\sum ",
    "Π": r"\prod ", "…": r"\ldots ", "·": r"\cdot ", "∈": r"\in ", "|": r"\vert ",
}


def script_tex(s):
    """One script (_{…}, _(…), _[…], _x) as TeX."""
    op, body = s[0], s[1:]
    inner = body[1:-1] if body.startswith("{") else body
    inner = TOKEN.sub(lambda m: token_tex(m), inner) if any(c in inner for c in "_^*") else inner
    return f"{op}{{{chars_tex(inner)}}}"


def chars_tex(s):
    out = []
    for c in s:
        out.append(UNICODE_TEX.get(c, c))
    return "".join(out)


def token_tex(m):
    """The TeX of a formula token (a TOKEN match)."""
    if m.group("word"):
        base, scripts = rf"\mathrm{{{m.group('word')}}}", m.group("wscripts")
    else:
        base, scripts = chars_tex(m.group("one")), m.group("scripts") or ""
        if m.group("star"):
            base += "^*"
    parts = re.findall(rf"[_^](?:{BRACED}|{BRACKETED}|{PARENS}|{SINGLE})", scripts)
    return base + "".join(script_tex(p) for p in parts)


def tokens(text):
    """[(is_formula, text or TeX)] of a text: the formula tokens (a symbol
    with a star or scripts) apart."""
    out, at = [], 0
    for m in TOKEN.finditer(text):
        if not (m.group("word") or m.group("star") or m.group("scripts")):
            continue
        if m.start() > at:
            out.append((False, text[at:m.start()]))
        out.append((True, token_tex(m)))
        at = m.end()
    if at < len(text):
        out.append((False, text[at:]))
    return out


class Formulas:
    """The formulas of the site: each page holds a marker <!--tex:N--> per
    formula; typeset() renders them all in one node run and puts the HTML
    in place."""

    def __init__(self):
        self.tex = {}                  # TeX: its number
        self.where = {}                # TeX: the first page or source naming it

    def marker(self, tex, where=""):
        return f"<!--tex:{self.number(tex, where)}-->"

    def html_of(self, text, where=""):
        """Plain text as HTML: escaped, each formula token a marker."""
        return "".join(self.marker(t, where) if is_f else html.escape(t) for is_f, t in tokens(text))

    def protect(self, md, where=""):
        """Markdown with each formula token outside code replaced by a
        placeholder Markdown leaves alone; restore() puts the markers in."""
        out, fenced = [], False
        for line in md.split("\n"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if fenced or line.lstrip().startswith("```") or line.startswith("    "):
                out.append(line)
                continue
            # code spans, tags and whole links ([text](target), not after _ or ^)
            parts = re.split(r"(`[^`]*`|<[^>]*>|(?<![_^\w])\[[^\]]*\]\([^)\s]*\))", line)
            for k in range(0, len(parts), 2):
                parts[k] = "".join(f"KXTEXPH{self.number(t, where)}Z" if is_f else t
                                   for is_f, t in tokens(parts[k]))
            out.append("".join(parts))
        return "\n".join(out)

    def number(self, tex, where):
        self.where.setdefault(tex, where)
        return self.tex.setdefault(tex, len(self.tex))

    @staticmethod
    def restore(h):
        return re.sub(r"KXTEXPH(\d+)Z", r"<!--tex:\1-->", h)

    def typeset(self, out, rewrite):
        """Render every formula with KaTeX and put it in every page of out;
        copies KaTeX's stylesheet and fonts to out; rewrite(path, text)
        writes a page.  Returns the
        problems (a formula KaTeX rejects or warns about), [] when none."""
        texs = sorted(self.tex, key=self.tex.get)
        run = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "katex.js")],
                             input=json.dumps(texs), capture_output=True, text=True)
        if run.returncode != 0:
            return [f"node failed: {run.stderr.strip()[:300]}"]
        got = json.loads(run.stdout)
        problems = [f"{self.where.get(t, '?')}: formula {t!r}: {'; '.join(g['warnings'] + ([g['error']] if g['error'] else []))}"
                    for t, g in zip(texs, got) if g["warnings"] or g["error"]]
        rendered = [f'<span class="math" data-tex="{html.escape(t)}">{g["html"] or html.escape(t)}</span>'
                    for t, g in zip(texs, got)]
        shutil.copy(os.path.join(KATEX, "katex.min.css"), os.path.join(out, "katex.min.css"))
        shutil.copytree(os.path.join(KATEX, "fonts"), os.path.join(out, "fonts"), dirs_exist_ok=True)
        for d, _, fs in os.walk(out):
            for f in fs:
                if not f.endswith(".html"):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                if "<!--tex:" not in text:
                    continue
                text = re.sub(r"<!--tex:(\d+)-->", lambda m: rendered[int(m.group(1))], text)
                up = os.path.relpath(out, d)
                text = text.replace("</head>", f'<link rel="stylesheet" href="{up}/katex.min.css"></head>', 1)
                rewrite(path, text)
        return problems


SAMPLES = [
    # (Markdown, the TeX of its formulas, text that must show outside them)
    ("the minimiser w* of F; θ*_i too", ["w^*", "θ^*_{i}"], ["the minimiser", "of F; ", "too"]),
    ("W ← clip_[0,1](W − η g) and Π_[0,1](x)", [r"\mathrm{clip}_{[0,1]}", r"\prod _{[0,1]}"], ["(W − η g)", "(x)"]),
    ("w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}",
     ["w_{t+1}", r"\sum _{k\in S_{t}}", "n_{k}", "m_{t}", "w^{k}_{t+1}"], ["(", "/", ")"]),
    ("v̄_i^(t) is **bold**, *emphasis* and a [link](x.md); `w_local` is code",
     ["v̄_{i}^{(t)}"], ["<strong>bold</strong>", "<em>emphasis</em>", '<a href="x.md">link</a>',
                       "<code>w_local</code>"]),
]


def self_test(md_render):
    """The samples through md_render (the builder's Markdown with formulas
    protected): each formula's TeX exactly as expected (`_`, `*`, `[ ]`
    kept), the surrounding Markdown rendered.  The failures, [] when none."""
    bad = []
    for md, texs, shows in SAMPLES:
        f = Formulas()
        h = Formulas.restore(md_render(md, [], f))
        got = [t for t, _ in sorted(f.tex.items(), key=lambda kv: h.find(f"<!--tex:{kv[1]}-->"))
               if f"<!--tex:{f.tex[t]}-->" in h]
        if got != texs:
            bad.append(f"formulas of {md!r}: {got}, expected {texs}")
        bad += [f"{md!r}: {s!r} missing from {h!r}" for s in shows if s not in h]
    return bad
