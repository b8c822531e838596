# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the Gappa script generators of proofs/gappa/ and its checks:
the script text, Gappa's run or its recorded answer (run), Gappa's best
enclosure of an expression, and the rounding of a bound to four
significant bits."""
import functools
import hashlib
import json
import os
import re
import subprocess
import tempfile
from fractions import Fraction

HEADER = "@rnd = float<ieee_64, ne>;"
U = Fraction(1, 2 ** 53)   # the unit roundoff of binary64, round to nearest


def text(body, hyp, goal, hints=()):
    """A Gappa script: the rounding mode, the definitions BODY, one
    proposition HYP -> GOAL on a line starting with "{" (HYP may be
    empty), and the HINTS after it."""
    prop = f"{{ {hyp} -> {goal} }}" if hyp else f"{{ {goal} }}"
    return "\n".join([HEADER] + list(body) + [prop] + list(hints)) + "\n"


def goal_line(script):
    """The proposition's line of a written script."""
    for line in script.splitlines():
        if line.startswith("{"):
            return line
    raise ValueError("no proposition line starting with '{'")


def run(script, timeout=None):
    """(exit status, stdout + stderr) of gappa on SCRIPT; status None when
    it ran longer than TIMEOUT seconds.  Where the environment names
    answer folders (GAPPA_CACHE_READ, GAPPA_CACHE_WRITE: proofs/run.sh
    sets them, see recorded()), Gappa's recorded answer to the identical
    script stands in for a run.  A run stopped by a signal (Gappa's
    crash, or a kill: a negative status) is no answer and is not
    recorded."""
    read = os.environ.get("GAPPA_CACHE_READ", "")
    write = os.environ.get("GAPPA_CACHE_WRITE", "")
    if not read and not write:
        return run_live(script, timeout)
    ver = gappa_version()
    key = answer_key(script, ver)
    if read:
        got = recorded(read, key, ver)
        if got is not None:
            note_answer("found")
            return got
        note_answer("missed")
    rc, out = run_live(script, timeout)
    if write and rc is not None and rc >= 0:   # a signal is no verdict
        record(write, key, ver, rc, out)
        note_answer("written")
    return rc, out


def uncommented(script):
    """SCRIPT without its comment lines (those starting with "#", which
    Gappa skips): the text an enclosure script gives Gappa.  It is the
    text proofs/gappa/make_vectors.py gave Gappa to find the bounds that
    the script's "# goal:" lines state, so one run's recorded answer
    serves both."""
    return "".join(line for line in script.splitlines(keepends=True)
                   if not line.startswith("#"))


def run_uncommented(script, timeout=None):
    """run() on uncommented(SCRIPT), except that where GAPPA_CACHE_READ
    names a folder holding an answer to SCRIPT's full text (Gappa was
    given the full text before enclosure scripts were stripped), that
    recorded answer stands in."""
    read = os.environ.get("GAPPA_CACHE_READ", "")
    if read:
        ver = gappa_version()
        got = recorded(read, answer_key(script, ver), ver)
        if got is not None:
            note_answer("found")
            return got
    return run(uncommented(script), timeout)


# Gappa's recorded answers (proofs/README.md, "The prover cache"): an
# answer is Gappa's exit status and output for one script, filed as
# KEY.json, KEY the SHA-256 of Gappa's version line and the script's
# text, so it is read only for the identical script given to the
# identical Gappa (the generators write the scripts, so a change to a
# vector or to a replay is a new script, which Gappa decides).
@functools.lru_cache(maxsize=None)
def gappa_version():
    """Gappa's version line ("Gappa 1.4.1")."""
    r = subprocess.run(["gappa", "--version"], capture_output=True,
                       text=True)
    lines = (r.stdout + r.stderr).strip().splitlines()
    if r.returncode != 0 or not lines:
        raise SystemExit("gappa --version failed")
    return lines[0]


def answer_key(script, version):
    """The name of SCRIPT's answer from the Gappa of VERSION."""
    return hashlib.sha256(f"{version}\n{script}".encode()).hexdigest()


def recorded(folder, key, version):
    """(exit status, output) recorded under KEY in FOLDER, or None when
    there is none, or the entry is not a well-formed answer of this Gappa
    to this key, or its status is a signal's (such an entry is ignored:
    Gappa runs)."""
    try:
        with open(os.path.join(folder, key + ".json"),
                  encoding="utf-8") as f:
            e = json.load(f)
    except (OSError, ValueError):
        return None
    if (not isinstance(e, dict) or e.get("key") != key
            or e.get("gappa") != version
            or type(e.get("exit")) is not int or e["exit"] < 0
            or not isinstance(e.get("output"), str)):
        return None
    return e["exit"], e["output"]


def record(folder, key, version, rc, out):
    """File Gappa's answer (RC, OUT) under KEY in FOLDER (written to a
    temporary name first, so a reader never sees half an entry)."""
    os.makedirs(folder, exist_ok=True)
    entry = {"key": key, "gappa": version, "exit": rc, "output": out}
    tmp = os.path.join(folder, f".{key}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(entry, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(folder, key + ".json"))


def note_answer(what):
    """Append WHAT (found, missed, written) to the file GAPPA_CACHE_LOG
    names, if any: proofs/run.sh counts the lines."""
    log = os.environ.get("GAPPA_CACHE_LOG", "")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(what + "\n")


def run_live(script, timeout=None):
    """(exit status, stdout + stderr) of gappa itself on SCRIPT; status
    None when it ran longer than TIMEOUT seconds."""
    with tempfile.NamedTemporaryFile("w", suffix=".g") as f:
        f.write(script)
        f.flush()
        try:
            r = subprocess.run(["gappa", f.name], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, ""
    return r.returncode, r.stdout + r.stderr


def bound_and_control(body, hyp, goal, hints=(), side=None):
    """(B, C) for the goal |GOAL| <= B: B is Gappa's best enclosure rounded
    up to four significant bits, and proved; C, the control, is the
    four-bit value at or below 7/8 of the best enclosure, which Gappa must
    refuse, promptly (a control bound a hair below the best enclosure can
    make Gappa search for minutes, so the control keeps an eighth's
    distance).  When Gappa proves C after all (its `in ?` answer is not
    always its tightest), the search starts again from C."""
    pre = f"{side} /\\ " if side else ""
    best = best_bound(text(body, hyp, f"|{goal}| in ?", hints))
    while True:
        bound, _ = round_up(best)
        if bound == 0:
            return bound, None
        rc, out = run(text(body, hyp,
                           f"{pre}|{goal}| <= {gappa_num(bound)}", hints),
                      timeout=60)
        if rc != 0:
            raise SystemExit(f"gappa does not prove |{goal}| <= {bound}:\n"
                             + out)
        control = round_down(best * Fraction(7, 8))
        rc, out = run(text(body, hyp,
                           f"{pre}|{goal}| <= {gappa_num(control)}", hints),
                      timeout=60)
        if rc == 0:
            best = control
            continue
        if rc is None or "some properties were not satisfied" not in out:
            raise SystemExit(f"the control |{goal}| <= {control} does not "
                             "fail promptly with 'not satisfied':\n" + out)
        return bound, control


NUM = r"(-?\d+)(?:b(-?\d+))?"


def parse_num(s):
    """Gappa's dyadic literal MbE (or an integer) as a Fraction."""
    m = re.fullmatch(NUM, s.strip())
    if not m:
        raise ValueError(f"not a Gappa number: {s!r}")
    v = Fraction(int(m.group(1)))
    e = int(m.group(2) or 0)
    return v * 2 ** e if e >= 0 else v / 2 ** (-e)


def best_bound(script):
    """The upper end of Gappa's enclosure of |e| for a script whose goal is
    `|e| in ?` (one goal)."""
    rc, out = run(script)
    m = re.search(r"in \[(\S+)(?: \{[^}]*\})?, (\S+?)(?: \{[^}]*\})?\]",
                  out)
    if rc != 0 or not m:
        raise SystemExit("gappa found no enclosure:\n" + out)
    return parse_num(m.group(2))


def four_bit_step(b):
    """The unit 2^(e-4) of b's fourth significant bit, 2^e <= b < 2^(e+1)
    (b > 0)."""
    e = b.numerator.bit_length() - b.denominator.bit_length()
    while Fraction(2) ** e > b:
        e -= 1
    while Fraction(2) ** (e + 1) <= b:
        e += 1
    return Fraction(2) ** (e - 4)


def round_up(b):
    """(B, C): B = b rounded up to four significant bits, k 2^(e-4) with
    16 <= k < 32, and C = B less one such step (the control bound, below
    b whatever b is).  A zero b gives (0, None)."""
    if b == 0:
        return Fraction(0), None
    step = four_bit_step(b)
    k = -((-b) // step)   # ceil
    return k * step, (k - 1) * step


def round_down(b):
    """b rounded down to four significant bits (b > 0)."""
    step = four_bit_step(b)
    return (b // step) * step


def gappa_num(x):
    """A Fraction with a power-of-two denominator as Gappa's MbE."""
    if x == 0:
        return "0"
    n, d = x.numerator, x.denominator
    if d & (d - 1):
        raise ValueError(f"{x} is not dyadic")
    e = -(d.bit_length() - 1)
    while n % 2 == 0:
        n //= 2
        e += 1
    return f"{n}b{e}" if e else str(n)


def in_u(x):
    """x in units of u = 2^-53, as a short decimal or fraction."""
    q = x / U
    if q.denominator == 1:
        return str(q.numerator)
    return f"{float(q):.6g}"


def stated(script):
    """(B, C) of a written script: the bound at the end of its
    proposition's line, `... <= B }`, and its `# control: C` line (None
    for none)."""
    last = goal_line(script)
    m = re.search(r"<= (\S+) }$", last)
    c = re.search(r"^# control: (\S+)$", script, re.M)
    if not m:
        raise ValueError("no goal '<= B }' ending the proposition")
    control = None if not c or c.group(1) == "none" else parse_num(c.group(1))
    return parse_num(m.group(1)), control


STATED_GOAL = re.compile(r"^# goal: \|(\w+)\| <= (\S+)$", re.M)
ENCLOSED = re.compile(r"^\s*\|(\w+)\| in \[(\S+?)(?: \{[^}]*\})?, (\S+?)"
                      r"(?: \{[^}]*\})?\]$", re.M)
RENAMED = re.compile(r"renaming identifier '(\w+)' as '(\w+)'")


def named_enclosures(out):
    """{name: upper end} of Gappa's answers OUT to goals `|name| in ?`,
    each goal's name followed through Gappa's renamings: Gappa gives a
    term the name of its last definition ("renaming identifier 'A' as
    'B'") and prints a goal under that name, once however many goals share
    the term."""
    alias = dict(RENAMED.findall(out))
    hi = {e: parse_num(h) for e, _, h in ENCLOSED.findall(out)}
    found = {}
    for name in set(alias) | set(hi):
        seen, n = set(), name
        while n in alias and n not in seen:
            seen.add(n)
            n = alias[n]
        if n in hi:
            found[name] = hi[n]
    return found


def stated_goals(script):
    """[(name, B)] of a script checked by enclosure: its "# goal: |name|
    <= B" lines, in order (empty for any other script)."""
    return [(e, parse_num(b)) for e, b in STATED_GOAL.findall(script)]


def check_enclosures(script, out):
    """The problems (a list of strings, empty when none) found comparing
    Gappa's answers OUT to the `|name| in ?` goals of SCRIPT with the
    script's "# goal:" bounds: every stated |name| needs an answer (under
    its name or the one Gappa renamed it to) whose upper end is <= B, and
    the stated goals must be exactly the proposition's."""
    stated = stated_goals(script)
    found = named_enclosures(out)
    problems = []
    if not stated:
        problems.append("no '# goal: |name| <= B' lines")
    asked = re.findall(r"\|(\w+)\| in \?", goal_line(script))
    if sorted(asked) != sorted(e for e, _ in stated):
        problems.append("the '# goal:' lines are not the proposition's "
                        "`in ?` goals")
    for e, b in stated:
        if e not in found:
            problems.append(f"|{e}|: Gappa gave no enclosure")
        elif found[e] > b:
            problems.append(f"|{e}|: Gappa's proved upper end "
                            f"{float(found[e]):.6g} exceeds the stated "
                            f"{float(b):.6g}")
    return problems
