#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fuzz/seed_corpus.py: write the seed corpora of the libFuzzer harnesses.

Usage: fuzz/seed_corpus.py PFLREF   (the CLI, e.g. build/rel/pflref)

Run from the repository root.  Every seed is derived from the shipped golden
vectors, so the corpora follow the vectors when they change:

  fuzz/corpus/fuzz_spec/         each vector's embedded spec (compact JSON)
  fuzz/corpus/fuzz_golden/       each vector (compact JSON)
  fuzz/corpus/fuzz_result/       the result `pflref run VECTOR` writes
  fuzz/corpus/fuzz_check/        OPT VECTOR NUL CANDIDATE, with
                                 CANDIDATE the CLI's result for the vector
                                 (resync off and on) or the vector's own
                                 expected values wrapped as a result
  fuzz/corpus/fuzz_algorithms/   one input per registered algorithm, in
                                 fuzz_algorithms.c's byte encoding

The spec corpus takes every vector; the others take the two smallest vectors
of each algorithm (fuzz_check: the smallest), which keeps every corpus
within a few hundred KB.  Seeds of the same bytes are written once (the name is the content's
SHA-1, libFuzzer's convention).  Files already in a corpus folder that this
script did not write (hand-made seeds) are kept, except seeds it wrote from
an earlier state of the vectors: a seed of fuzz_golden or fuzz_check that
holds a compact golden vector no shipped vector gives any more (a vector
rewritten with a new content hash, say) is removed.
"""
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

CORPUS = "fuzz/corpus"


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


WRITTEN = set()
# How this script's seeds of a vector begin (fuzz_check: after its option
# byte).
VECTOR_SEED = b'{"format":"pflref-golden/1"'


def put(harness, data):
    folder = os.path.join(CORPUS, harness)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha1(data).hexdigest())
    WRITTEN.add(os.path.normpath(path))
    with open(path, "wb") as f:
        f.write(data)


def remove_stale():
    """Remove seeds of vectors in fuzz_golden and fuzz_check that this run
    did not write: they came from vectors as they were before."""
    for harness, skip in (("fuzz_golden", 0), ("fuzz_check", 1)):
        folder = os.path.join(CORPUS, harness)
        for name in sorted(os.listdir(folder)):
            path = os.path.normpath(os.path.join(folder, name))
            if path in WRITTEN:
                continue
            with open(path, "rb") as f:
                head = f.read(skip + len(VECTOR_SEED))
            if head[skip:] == VECTOR_SEED:
                os.remove(path)
                print("removed stale seed", path)


def as_candidate(vector):
    """The vector's expected values as a pflref-result/1 candidate."""
    cand = {"format": "pflref-result/1", "id": vector["id"]}
    cand.update(vector["expected"])
    return cand


# fuzz_algorithms.c: byte 0 selects the algorithm (mod the registry size);
# the rest feeds the problem, schedule and hyperparameter decoder, where a
# zero byte means "the default".  One seed per algorithm with the decoder's
# defaults, one with a few non-default bytes.
N_ALGORITHMS = 14


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cli = sys.argv[1]
    vectors = []
    for path in sorted(glob.glob("golden/**/*.json", recursive=True)):
        with open(path, "rb") as f:
            raw = f.read()
        doc = json.loads(raw)
        if doc.get("format") == "pflref-golden/1":
            vectors.append((path, doc))
    rank = {}   # path -> its size rank among its algorithm's vectors
    by_alg = {}
    for path, vec in vectors:
        by_alg.setdefault(os.path.dirname(path), []).append(
            (len(compact(vec)), path))
    for group in by_alg.values():
        for r, (_, path) in enumerate(sorted(group)):
            rank[path] = r
    with tempfile.TemporaryDirectory() as tmp:
        for path, vec in vectors:
            put("fuzz_spec", compact(vec["spec"]))
            if rank[path] >= 2:
                continue
            vtext = compact(vec)
            put("fuzz_golden", vtext)
            out = os.path.join(tmp, "result.json")
            subprocess.run([cli, "run", path, "-o", out], check=True)
            with open(out, "rb") as f:
                result = f.read().strip()
            put("fuzz_result", result)
            if rank[path] >= 1:
                continue
            for opt in (0, 2):   # plain, resync
                put("fuzz_check", bytes([opt]) + vtext + b"\0" + result)
            put("fuzz_check",
                bytes([0]) + vtext + b"\0" + compact(as_candidate(vec)))
    for a in range(N_ALGORITHMS):
        put("fuzz_algorithms", bytes([a]) + bytes(24))
        put("fuzz_algorithms", bytes([a, 1, 2, 3, 5, 7, 11, 13, 17, 19, 23]))
    remove_stale()


if __name__ == "__main__":
    main()
