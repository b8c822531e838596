#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/spdx.py: the SPDX license identifier of every source file.

    /usr/bin/python3 tools/spdx.py            add the identifier where missing
    /usr/bin/python3 tools/spdx.py --check    list the files without it, exit 1
    /usr/bin/python3 tools/spdx.py --self-test

Source files are C (.c, .h), C++ (.cpp), Python (.py), shell (.sh), the
Makefile, roff templates (.in), and any other file whose first line is a
shebang ("#!"), among the files git knows of (tracked, or new and not
ignored), outside fuzz/corpus and fuzz/regressions (data).  Without git,
the tree is walked (build/ and .git/ left out).

The identifier, "SPDX-License-Identifier: GPL-3.0-or-later" (README.md,
"License"), goes on a line of its own in the file's comment syntax: first
(after a shebang), or, for the files whose line numbers other files cite
(docs/examples/*.py: the mutation survivors of
tests/detection/mutation-survivors.json name their lines), last.  --check
accepts it in the first five lines or the last three.  Adding is
idempotent.  Exit status: 0 ok, 1 files without the identifier (--check),
2 usage.
"""
import os
import subprocess
import sys
import tempfile

LICENSE = "GPL-3.0-or-later"
TAG = "SPDX-License-Identifier: " + LICENSE
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXCLUDED_DIRS = ("fuzz/corpus/", "fuzz/regressions/", "build/", ".git/")
# Files whose line numbers are cited elsewhere: the identifier goes last.
AT_END_DIRS = ("docs/examples/",)

# comment syntax by kind: (line prefix, line suffix)
C_STYLE = ("/* ", " */")
LINE_STYLE = ("// ", "")
HASH_STYLE = ("# ", "")
ROFF_STYLE = ('.\\" ', "")


def style(path, first_line):
    """The comment syntax of a source file, or None when it is not one."""
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if ext in (".c", ".h"):
        return C_STYLE
    if ext == ".cpp":
        return LINE_STYLE
    if ext in (".py", ".sh") or name == "Makefile":
        return HASH_STYLE
    if ext == ".in":
        return ROFF_STYLE
    if ext == "" and first_line.startswith("#!"):
        return HASH_STYLE
    return None


def listed_files(root):
    """Paths (relative to root) git knows of, or every file of the tree."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others",
             "--exclude-standard", "-z"],
            capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(f for f in files if not f.startswith(EXCLUDED_DIRS)
                  and os.path.isfile(os.path.join(root, f)))


def first_line(path):
    try:
        with open(path, "rb") as f:
            return f.readline(256).decode("utf-8", "replace")
    except OSError:
        return ""


def sources(root):
    """(relative path, comment style) of every source file."""
    out = []
    for rel in listed_files(root):
        st = style(rel, first_line(os.path.join(root, rel)))
        if st is not None:
            out.append((rel, st))
    return out


def has_tag(text):
    lines = text.splitlines()
    return any(TAG in line for line in lines[:5] + lines[-3:])


def with_tag(rel, text, st):
    """text with the identifier added in st's syntax."""
    line = st[0] + TAG + st[1] + "\n"
    if rel.startswith(AT_END_DIRS):
        return text + ("" if text.endswith("\n") or not text else "\n") + line
    if text.startswith("#!"):
        nl = text.find("\n")
        head, rest = (text, "") if nl < 0 else (text[:nl + 1], text[nl + 1:])
        return head + line + rest
    return line + text


def missing(root):
    out = []
    for rel, _ in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            if not has_tag(f.read()):
                out.append(rel)
    return out


def add(root):
    """Add the identifier where it is missing; the paths changed."""
    changed = []
    for rel, st in sources(root):
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if has_tag(text):
            continue
        mode = os.stat(path).st_mode
        with open(path, "w", encoding="utf-8") as f:
            f.write(with_tag(rel, text, st))
        os.chmod(path, mode)
        changed.append(rel)
    return changed


def self_test():
    """Plant files without the identifier in a scratch tree: --check names
    each source file and no other, adding fixes every one in its syntax
    (after a shebang; last under docs/examples/), twice is a no-op."""
    files = {
        "a.c": "/* a.c */\nint a;\n",
        "b.h": "#ifndef B\n#define B\n#endif\n",
        "c.cpp": "int main() {}\n",
        "d.py": "#!/usr/bin/python3\n\"\"\"d\"\"\"\n",
        "e.sh": "echo e\n",
        "Makefile": "all:\n",
        "run": "#!/bin/sh\necho run\n",
        "docs/examples/x.py": "#!/usr/bin/python3\nx = 1\n",
        "notes.md": "# not source\n",
        "data": "no shebang\n",
        "fuzz/corpus/h/seed": "#!not a source\n",
        "ok.c": "/* " + TAG + " */\nint ok;\n",
    }
    want = sorted(["a.c", "b.h", "c.cpp", "d.py", "e.sh", "Makefile", "run",
                   "docs/examples/x.py"])
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        problems = []
        if sorted(missing(root)) != want:
            problems.append(f"--check found {sorted(missing(root))}, not {want}")
        if sorted(add(root)) != want or missing(root) or add(root):
            problems.append("adding did not fix every file once")

        def read(rel):
            with open(os.path.join(root, rel)) as f:
                return f.read()
        expect = {
            "a.c": "/* " + TAG + " */\n/* a.c */\n",
            "c.cpp": "// " + TAG + "\n",
            "d.py": "#!/usr/bin/python3\n# " + TAG + "\n",
            "run": "#!/bin/sh\n# " + TAG + "\n",
        }
        for rel, start in expect.items():
            if not read(rel).startswith(start):
                problems.append(f"{rel} starts {read(rel)[:40]!r}")
        if not read("docs/examples/x.py").endswith("x = 1\n# " + TAG + "\n"):
            problems.append("docs/examples/x.py: the identifier is not last")
        if read("notes.md") != files["notes.md"]:
            problems.append("notes.md was changed")
    for p in problems:
        print("spdx self-test: " + p, file=sys.stderr)
    print("spdx self-test: " + ("FAILED" if problems else "ok"))
    return 1 if problems else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if argv == ["--check"]:
        bad = missing(ROOT)
        for rel in bad:
            print(f"{rel}: no '{TAG}' line (add it: tools/spdx.py)",
                  file=sys.stderr)
        n = len(sources(ROOT))
        print(f"spdx: {n - len(bad)} of {n} source files carry {LICENSE}")
        return 1 if bad else 0
    if argv == []:
        for rel in add(ROOT):
            print(f"spdx: added the identifier to {rel}")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
