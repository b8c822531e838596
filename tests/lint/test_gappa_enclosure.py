#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Self-test of proofs/gappa/enclosure.py's comparison
(gappa_common.check_enclosures): Gappa's proved answers to `|name| in ?`
goals against the bounds a script states on its "# goal:" lines.

On canned Gappa output in Gappa's own format (no Gappa needed), the
comparison must

  * accept answers within their bounds, an answer equal to its bound, and
    answers printed under the name Gappa renamed a goal to (its warning
    "renaming identifier 'A' as 'B'", chains of them included, and two
    goals sharing one printed answer);
  * reject, naming the goal, an answer above its bound (by one unit of
    the last place of the dyadic number), a goal with no answer, a
    "# goal:" line for a name the proposition does not ask, and a script
    with no "# goal:" line.

    python3 tests/lint/test_gappa_enclosure.py   (make check-lint runs it)

Exit status: 0 every case as expected, 1 otherwise.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "proofs", "gappa"))
import gappa_common as gc  # noqa: E402


def script(goals, stated):
    """A script asking `|g| in ?` for GOALS, stating [(name, B)]."""
    body = ["x1 = 1b-2 - 1b-2;", "r2 rnd= 1 / 3;", "x3 = 1 / 3;",
            "err1 = r2 - x3;", "err2 = x1;", "err3 = r2 - x3;"]
    asked = " /\\ ".join(f"|{g}| in ?" for g in goals)
    return gc.text(body, "", asked, [f"# goal: |{n}| <= {b}"
                                     for n, b in stated])


# Gappa's own answer to script(GOALS, ...) (Gappa 1.4.1, Debian 12): err3's
# term is err1's, so Gappa renames err1 as err3 and answers once; err2 is
# x1's term, answered as |err2|; the answers are not in the goals' order.
OUT = """Warning: renaming identifier 'x1' as 'err2' at line 6 column 10
Warning: renaming identifier 'err1' as 'err3' at line 7 column 15
Results:
  |err3| in [21b-60 {1.82146e-17, 2^(-55.6077)}, 43b-61 {1.86483e-17, 2^(-55.5737)}]
  |err2| in [0, 0]
"""
GOALS = ["err1", "err2", "err3"]


def case(name, text, out, want):
    """Run the comparison; WANT is None (no problem) or a substring every
    problem list must contain."""
    problems = gc.check_enclosures(text, out)
    joined = "; ".join(problems)
    ok = (not problems) if want is None else (want in joined)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: "
          f"{joined if problems else 'accepted'}")
    return ok


def main():
    results = [
        case("within bounds, renamed goals followed",
             script(GOALS, [("err1", "1b-55"), ("err2", "0"),
                            ("err3", "1b-55")]), OUT, None),
        case("an answer equal to its bound",
             script(GOALS, [("err1", "43b-61"), ("err2", "0"),
                            ("err3", "43b-61")]), OUT, None),
        case("a chain of renamings",
             script(["err9"], [("err9", "1b-55")]),
             "Warning: renaming identifier 'err9' as 'err1' at line 1\n"
             + OUT, None),
        case("an answer one unit above its bound",
             script(GOALS, [("err1", "42b-61"), ("err2", "0"),
                            ("err3", "1b-55")]), OUT,
             "|err1|: Gappa's proved upper end"),
        case("a zero bound against a nonzero answer",
             script(GOALS, [("err1", "1b-55"), ("err2", "0"),
                            ("err3", "0")]), OUT,
             "|err3|: Gappa's proved upper end"),
        case("a goal with no answer",
             script(GOALS + ["err4"], [("err1", "1b-55"), ("err2", "0"),
                                       ("err3", "1b-55"), ("err4", "1")]),
             OUT, "|err4|: Gappa gave no enclosure"),
        case("a stated goal the proposition does not ask",
             script(["err1", "err2"], [("err1", "1b-55"), ("err2", "0"),
                                       ("err3", "1b-55")]), OUT,
             "are not the proposition's"),
        case("no '# goal:' line", script(GOALS, []), OUT,
             "no '# goal:"),
        case("no answers at all (Gappa's output empty)",
             script(GOALS, [("err1", "1b-55"), ("err2", "0"),
                            ("err3", "1b-55")]), "",
             "Gappa gave no enclosure"),
    ]
    bad = results.count(False)
    print(f"test_gappa_enclosure: {len(results) - bad} of {len(results)} "
          "cases as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
