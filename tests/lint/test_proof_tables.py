#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Self-test of tests/lint/proof_tables.py: it must catch each drift.

Copies ref/, include/, proofs/acsl/, proofs/gappa/, proofs/README.md, proofs/run.sh and the
checker into a temporary folder and runs it there, first on the unmodified
copy (it must exit 0), then once per case on a fresh copy with one drift
planted between proofs/README.md's tables and the sources:

  * a proved function's row dropped from table (a) (lowest_loss);
  * a function added to a WP job of run.sh that no table names;
  * a trusted contract deleted from the sources (its row now stale);
  * a new contract on an unproved function, not in the trusted list;
  * a new file-scope ghost variable, not in the trusted list;
  * a functional contract filed as shape/safety;
  * a function moved from a job to nowhere (its row in (a) now stale);
  * a new Gappa script that table (c) does not name;
  * a Gappa script of table (c) deleted;
  * a vector's script whose name holds a dot (notes §5.2(g)) deleted.

For each, the checker must exit 1 with a message naming the function.

    python3 tests/lint/test_proof_tables.py [-v]   (make check-lint runs it)

Exit status: 0 every case as expected, 1 otherwise.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TREES = ["ref", "include", os.path.join("proofs", "acsl"),
         os.path.join("proofs", "gappa")]
FILES = [os.path.join("proofs", "README.md"), os.path.join("proofs", "run.sh"),
         os.path.join("tests", "lint", "proof_tables.py")]


def copy_tree(dst):
    for t in TREES:
        shutil.copytree(os.path.join(ROOT, t), os.path.join(dst, t))
    for f in FILES:
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, f), os.path.join(dst, f))


def run(root):
    p = subprocess.run([sys.executable,
                        os.path.join(root, "tests", "lint", "proof_tables.py"),
                        "--root", root], capture_output=True, text=True)
    return p.returncode, p.stderr


def edit(root, rel, old, new):
    path = os.path.join(root, rel)
    text = open(path, encoding="utf-8").read()
    if text.count(old) != 1:
        raise RuntimeError(f"{rel}: the text to replace is not there once: "
                           f"{old!r}")
    open(path, "w", encoding="utf-8").write(text.replace(old, new))


def append(root, rel, text):
    with open(os.path.join(root, rel), "a", encoding="utf-8") as fh:
        fh.write(text)


def drop_row(root):
    path = os.path.join(root, "proofs", "README.md")
    lines = open(path, encoding="utf-8").read().split("\n")
    keep = [ln for ln in lines
            if not (ln.startswith("| `ref/algorithms/ifca.c` | `lowest_loss`"))]
    if len(keep) != len(lines) - 1:
        raise RuntimeError("lowest_loss's row of table (a) not found once")
    open(path, "w", encoding="utf-8").write("\n".join(keep))


CASES = [
    ("a proved function missing from table (a)", "lowest_loss", drop_row),
    ("a job's new function in no table", "pflref_all_finite",
     lambda r: edit(r, os.path.join("proofs", "run.sh"),
                    "vec copy | ref/core/vec.h | rte_real | pflref_copy\n",
                    "vec copy | ref/core/vec.h | rte_real | pflref_copy,"
                    "pflref_all_finite\n")),
    ("a trusted contract deleted", "pflref_sampler_alloc",
     lambda r: edit(r, os.path.join("ref", "sampling", "kernels.h"),
                    "/*@ assigns \\nothing; */\npflref_sampler *"
                    "pflref_sampler_alloc(",
                    "pflref_sampler *pflref_sampler_alloc(")),
    ("a new unproved contract", "planted_helper",
     lambda r: append(r, os.path.join("ref", "core", "vec.h"),
                      "\n/*@ assigns \\nothing; */\n"
                      "int planted_helper(int x);\n")),
    ("a new file-scope ghost", "planted_ghost",
     lambda r: append(r, os.path.join("ref", "sampling", "kernels.h"),
                      "\n/*@ ghost int planted_ghost; */\n")),
    ("a functional contract filed as shape/safety", "upper",
     lambda r: edit(r, os.path.join("proofs", "README.md"),
                    "| `ref/engine/cluster.c` | `upper` | functional |",
                    "| `ref/engine/cluster.c` | `upper` | shape/safety |")),
    ("a new file-scope ghost array", "planted_rank",
     lambda r: append(r, os.path.join("proofs", "acsl", "cluster.h"),
                      "\n/*@ ghost long long planted_rank[4]; */\n")),
    ("a function no job proves any more", "complete_linkage",
     lambda r: edit(r, os.path.join("proofs", "run.sh"),
                    "best_merge,complete_linkage\n",
                    "best_merge\n")),
    ("a Gappa script no table names", "planted_kernel.g",
     lambda r: append(r, os.path.join("proofs", "gappa", "kernels",
                                      "planted_kernel.g"), "{ 1 in [1, 1] }\n")),
    ("a Gappa script of table (c) deleted", "aggregate_given_5.g",
     lambda r: os.remove(os.path.join(r, "proofs", "gappa", "kernels",
                                      "aggregate_given_5.g"))),
    ("a vector's script, its name with a dot, deleted",
     "interp__worked-notes-5.2g-alpha-0.g",
     lambda r: os.remove(os.path.join(r, "proofs", "gappa", "vectors",
                                      "interp__worked-notes-5.2g-alpha-0.g"))),
]


def main():
    verbose = "-v" in sys.argv[1:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(clean)
        rc, err = run(clean)
        if rc != 0:
            print(f"test_proof_tables: the clean copy fails:\n{err}")
            failures += 1
        elif verbose:
            print("ok: the clean copy passes")
        for i, (what, name, plant) in enumerate(CASES):
            root = os.path.join(tmp, f"case{i}")
            copy_tree(root)
            plant(root)
            rc, err = run(root)
            if rc == 1 and name in err:
                if verbose:
                    print(f"ok: {what}: caught ({name})")
            else:
                print(f"test_proof_tables: {what}: not caught (exit {rc}, "
                      f"no message naming {name}):\n{err}")
                failures += 1
    print(f"test_proof_tables: {len(CASES) + 1 - failures} of "
          f"{len(CASES) + 1} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
