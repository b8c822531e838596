#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Self-test of Gappa's recorded answers (proofs/gappa/gappa_common.py's
run(), which proofs/gappa/memo.py and enclosure.py call; proofs/README.md,
"The prover cache").

A stand-in `gappa` on PATH (no Gappa needed) counts its runs, prints its
version as the real one does, and answers a script by its text: "crash"
in it stops it on a signal (SIGSEGV, as Gappa's stack overflow does),
"fail" gives exit 1 and "some properties were not satisfied", anything
else exit 0 and a line naming the script's digest.  Through memo.py, a
recorded answer must

  * stand in for a run only where GAPPA_CACHE_READ names its folder, for
    the identical script from the identical Gappa version: a changed
    script, or another version, runs Gappa;
  * be written only where GAPPA_CACHE_WRITE names a folder (replay alone
    writes nothing), and give back Gappa's exit status and output exactly,
    a refusal included;
  * be ignored, Gappa running instead, when its entry is not a
    well-formed answer to its own name (unreadable JSON, another key
    inside, a missing field, a signal's negative status);
  * never be a run stopped by a signal: a crash is not recorded, and the
    next run runs Gappa again;
  * not be read at all without GAPPA_CACHE_READ (PROOFS_CACHE=none and
    rebuild).

Through enclosure.py, which gives Gappa the script without its comment
lines (gappa_common.run_uncommented), the answer recorded for that text
(make_vectors.py's search for the bounds) must stand in, and so must an
answer recorded for the full text; another text runs Gappa.

    python3 tests/lint/test_gappa_cache.py   (make check-lint runs it)

Exit status: 0 every case as expected, 1 otherwise.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MEMO = os.path.join(ROOT, "proofs", "gappa", "memo.py")
ENCLOSURE = os.path.join(ROOT, "proofs", "gappa", "enclosure.py")

FAKE = """#!/bin/sh
if [ "${1:-}" = --version ]; then echo "Gappa $FAKE_GAPPA_VERSION"; exit 0; fi
echo run >>"$FAKE_GAPPA_RUNS"
text=$(cat "$1")
if printf '%s' "$text" | grep -q crash; then
    echo "Warning: renaming identifier 'a' as 'b'"
    kill -SEGV $$
fi
if printf '%s' "$text" | grep -q fail; then
    echo "Error: some properties were not satisfied:"
    exit 1
fi
echo "answer $(printf '%s' "$text" | cksum)"
"""


class Case:
    def __init__(self, tmp):
        self.tmp = tmp
        self.bin = os.path.join(tmp, "bin")
        os.makedirs(self.bin)
        fake = os.path.join(self.bin, "gappa")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)
        self.runs = os.path.join(tmp, "runs")
        open(self.runs, "w").close()
        self.cache = os.path.join(tmp, "cache")
        self.version = "1.4.1"

    def script(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def memo(self, script, read=False, write=False, tool=MEMO):
        """(exit, output, Gappa runs it took) of TOOL (memo.py, or
        enclosure.py) on SCRIPT."""
        env = dict(os.environ)
        env["PATH"] = self.bin + os.pathsep + env.get("PATH", "")
        env["FAKE_GAPPA_VERSION"] = self.version
        env["FAKE_GAPPA_RUNS"] = self.runs
        env["GAPPA_CACHE_READ"] = self.cache if read else ""
        env["GAPPA_CACHE_WRITE"] = self.cache if write else ""
        env.pop("GAPPA_CACHE_LOG", None)
        before = self.count()
        r = subprocess.run([sys.executable, tool, script], env=env,
                           capture_output=True, text=True)
        return r.returncode, r.stdout, self.count() - before

    def count(self):
        with open(self.runs) as f:
            return len(f.read().split())

    def entries(self):
        if not os.path.isdir(self.cache):
            return []
        return sorted(n for n in os.listdir(self.cache)
                      if n.endswith(".json"))


def main():
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    with tempfile.TemporaryDirectory() as tmp:
        c = Case(tmp)
        good = c.script("good.g", "{ x in ? }\n")
        bad = c.script("bad.g", "{ fail <= 0 }\n")

        rc, out, runs = c.memo(good, read=True)
        expect("replay, empty cache: Gappa runs", runs, 1)
        expect("replay writes nothing", c.entries(), [])

        rc1, out1, runs = c.memo(good, read=True, write=True)
        expect("update, no entry: Gappa runs", runs, 1)
        expect("update writes one entry", len(c.entries()), 1)
        key = hashlib.sha256(
            f"Gappa {c.version}\n{{ x in ? }}\n".encode()).hexdigest()
        expect("the entry is named by version and text",
               c.entries(), [key + ".json"])

        rc2, out2, runs = c.memo(good, read=True)
        expect("replay, entry present: no run", runs, 0)
        expect("replay gives the recorded exit", rc2, rc1)
        expect("replay gives the recorded output", out2, out1)
        expect("the recorded answer is Gappa's", (rc1, out1 != ""),
               (0, True))

        rc, out, runs = c.memo(good)
        expect("no GAPPA_CACHE_READ (none): Gappa runs", runs, 1)
        rc, out, runs = c.memo(good, write=True)
        expect("write only (rebuild): Gappa runs", runs, 1)

        changed = c.script("changed.g", "{ x in ? }\n\n")
        rc, out, runs = c.memo(changed, read=True)
        expect("replay, script changed by a blank line: Gappa runs",
               runs, 1)

        c.version = "1.4.2"
        rc, out, runs = c.memo(good, read=True)
        expect("replay, another Gappa version: Gappa runs", runs, 1)
        c.version = "1.4.1"

        rcb, outb, runs = c.memo(bad, read=True, write=True)
        expect("a refusal: Gappa runs once", runs, 1)
        rc, out, runs = c.memo(bad, read=True)
        expect("a recorded refusal replays without a run", runs, 0)
        expect("a recorded refusal keeps Gappa's exit status",
               (rc, rcb), (1, 1))
        expect("a recorded refusal keeps Gappa's words",
               "some properties were not satisfied" in out, True)

        crash = c.script("crash.g", "{ crash in ? }\n")
        rc, out, runs = c.memo(crash, read=True, write=True)
        expect("a crash: Gappa runs once", runs, 1)
        expect("a crash is not recorded", len(c.entries()), 2)
        rc, out, runs = c.memo(crash, read=True, write=True)
        expect("after a crash, Gappa runs again", runs, 1)

        # an enclosure script: Gappa reads it without its comment lines,
        # the text make_vectors.py's search for its bounds gave Gappa, so
        # that search's recorded answer serves; an answer recorded for
        # the full text (before scripts were stripped) serves too
        search = c.script("search.g", "{ y in ? }\n")
        rc, out, runs = c.memo(search, read=True, write=True)
        expect("the bounds' search: Gappa runs", runs, 1)
        encl = c.script("encl.g", "# check: enclosure\n{ y in ? }\n"
                        "# goal: |y| <= 1\n")
        rc, out, runs = c.memo(encl, read=True, tool=ENCLOSURE)
        expect("an enclosure script after its search: no run", runs, 0)
        other = c.script("other.g", "# check: enclosure\n{ y in ? }\n"
                         "{ w in ? }\n# goal: |y| <= 1\n")
        rc, out, runs = c.memo(other, read=True, tool=ENCLOSURE)
        expect("an enclosure script another search: Gappa runs", runs, 1)
        full = c.script("full.g", "# check: enclosure\n{ v in ? }\n")
        rc, out, runs = c.memo(full, read=True, write=True)
        expect("the full text recorded: Gappa runs", runs, 1)
        rc, out, runs = c.memo(full, read=True, tool=ENCLOSURE)
        expect("an enclosure script's full-text answer: no run", runs, 0)

        path = os.path.join(c.cache, key + ".json")
        with open(path) as f:
            entry = json.load(f)
        tampered = [
            ("unreadable JSON", "{not json"),
            ("another key inside",
             json.dumps(dict(entry, key="0" * 64))),
            ("no exit status",
             json.dumps({k: v for k, v in entry.items() if k != "exit"})),
            ("an exit status that is not a number",
             json.dumps(dict(entry, exit="0"))),
            ("a signal's exit status", json.dumps(dict(entry, exit=-11))),
            ("another Gappa's answer",
             json.dumps(dict(entry, gappa="Gappa 0.1"))),
        ]
        for what, text in tampered:
            with open(path, "w") as f:
                f.write(text)
            rc, out, runs = c.memo(good, read=True)
            expect(f"an entry with {what} is ignored: Gappa runs", runs, 1)
            expect(f"an entry with {what}: Gappa's own answer", (rc, out),
                   (rc1, out1))

    for f in failures:
        print(f"test_gappa_cache: FAILED: {f}")
    if not failures:
        print("test_gappa_cache: every case as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
