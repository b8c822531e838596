# SPDX-License-Identifier: GPL-3.0-or-later
"""The files form of a result (`pflref run --arrays files`; docs/formats.md,
"Arrays in files") read with NumPy: every file the manifest lists has its
SHA-256 and size, is byte for byte what np.save writes for the array
np.load reads from it, and holds the inline result's numbers bit for bit;
the trajectory's ranged records are contiguous and each the inline
record's value; the result validates against docs/schema.  The vectors
cover each kind of file: w0, final.w, final.v, final.alpha (APFL), theta0
(IFCA), hypernetwork.W, .b, .v (pFedHN), and the trajectory."""
import hashlib
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import GOLDEN, ROOT
from optional import require

CLI = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel",
                                                   "pflref")
VECTORS = {
    "apfl": ("apfl/worked-linear-adaptive-decay.json",
             ["w0", "final.w", "final.v", "final.alpha", "trajectory"]),
    "ifca": ("ifca/worked-given-models-linear.json",
             ["w0", "theta0", "final.v", "trajectory"]),
    "pfedhn": ("pfedhn/worked-linear-bias.json",
               ["w0", "hypernetwork.W", "hypernetwork.b", "hypernetwork.v",
                "final.v", "trajectory"]),
    "fedavg": ("fedavg/worked-samples.json",
               ["w0", "final.w", "trajectory"]),
}


def run(folder, vector, *args):
    subprocess.run([CLI, "run", os.path.join(GOLDEN, vector), "-q"]
                   + list(args), cwd=folder, check=True, capture_output=True)


def at(doc, name):
    """The member name ("final.v", "hypernetwork.W") of doc; "trajectory"
    is trajectory_values."""
    if name == "trajectory":
        return doc["trajectory_values"]
    for part in name.split("."):
        doc = doc[part]
    return doc


def bits(np, x):
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(
        np.uint64)


@pytest.mark.parametrize("algo", sorted(VECTORS))
def test_each_file_is_np_save_of_the_inline_numbers(algo, tmp_path):
    np = require("numpy")
    vector, names = VECTORS[algo]
    run(tmp_path, vector, "-o", "inline.json")
    run(tmp_path, vector, "-o", "r.json", "--arrays", "files",
        "--inline-max", "0")
    inline = json.load(open(tmp_path / "inline.json"))
    doc = json.load(open(tmp_path / "r.json"))
    refs = ["r.arrays/%s.npy" % n for n in names]
    assert [f["path"] for f in doc["array_files"]] == refs
    assert sorted(os.listdir(tmp_path / "r.arrays")) == \
        sorted(n + ".npy" for n in names)
    values = [v for r in inline["trajectory"] for v in r["value"]]
    for name, ref, entry in zip(names, refs, doc["array_files"]):
        assert at(doc, name) == ref
        raw = (tmp_path / ref).read_bytes()
        assert hashlib.sha256(raw).hexdigest() == entry["sha256"], ref
        assert len(raw) == entry["bytes"], ref
        a = np.load(tmp_path / ref)
        assert a.dtype == np.dtype("<f8") and a.flags.c_contiguous
        saved = io.BytesIO()
        np.save(saved, a)
        assert saved.getvalue() == raw, \
            "%s: not the bytes of np.save (header %r)" % (ref, raw[:128])
        want = values if name == "trajectory" else at(inline, name)
        assert a.shape == np.asarray(want).shape, ref
        assert np.array_equal(bits(np, a), bits(np, want)), ref


def test_trajectory_ranges_are_contiguous_and_the_inline_values(tmp_path):
    np = require("numpy")
    vector = VECTORS["apfl"][0]
    run(tmp_path, vector, "-o", "inline.json")
    run(tmp_path, vector, "-o", "r.json", "--arrays", "files",
        "--inline-max", "9")
    inline = json.load(open(tmp_path / "inline.json"))
    doc = json.load(open(tmp_path / "r.json"))
    # 9 numbers are enough for w0 (3) and final.v (9), not the trajectory
    assert isinstance(doc["final"]["v"], list)
    assert [f["path"] for f in doc["array_files"]] == \
        ["r.arrays/trajectory.npy"]
    t = np.load(tmp_path / doc["trajectory_values"])
    offset = 0
    for rec, want in zip(doc["trajectory"], inline["trajectory"]):
        assert rec["value"] == {"offset": offset, "count": len(want["value"])}
        got = t[offset:offset + len(want["value"])]
        assert np.array_equal(bits(np, got), bits(np, want["value"]))
        offset += len(want["value"])
        del rec["value"], want["value"]
        assert rec == want
    assert offset == t.shape[0] and len(doc["trajectory"]) == \
        len(inline["trajectory"])


def test_files_form_result_validates_against_the_schema(tmp_path):
    require("jsonschema")
    for algo, (vector, _) in sorted(VECTORS.items()):
        run(tmp_path, vector, "-o", algo + ".json", "--arrays", "files",
            "--inline-max", "0")
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "docs", "schema", "validate.py")]
        + [str(tmp_path / (a + ".json")) for a in sorted(VECTORS)],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
