# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.freeze(): a vector of the reference's own output on a user's
spec, written atomically by the library's one writer, that verify reproduces and check holds a
candidate to; its refusals as exceptions naming the field; and
pflref.__version__ read from the library."""
import json
import os
import re
import stat
import subprocess
import sys

import pytest

import pflref
from conftest import GOLDEN

ROOT = os.path.dirname(GOLDEN)
SAMPLES = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
CANDIDATE = os.path.join(ROOT, "docs", "examples", "fedavg_numpy.py")


def spec_of(path):
    with open(path) as f:
        return json.load(f)["spec"]


def test_freeze_writes_a_reference_vector_that_verify_reproduces(tmp_path):
    out = tmp_path / "mine.json"
    vec = pflref.freeze(spec_of(SAMPLES), out=out, id="mine/fedavg")
    assert vec.id == "mine/fedavg"
    assert vec.provenance["kind"] == "reference"
    assert "reference-output" in vec.flags
    with open(out) as f:
        assert json.load(f) == vec.raw
    assert [p.name for p in tmp_path.iterdir()] == ["mine.json"]
    report = pflref.verify(vec)
    assert report["passed"] and report["numbers"] > 0


def test_a_candidate_is_checked_against_a_frozen_vector(tmp_path):
    out = tmp_path / "mine.json"
    vec = pflref.freeze(spec_of(SAMPLES), out=out)
    result = tmp_path / "result.json"
    subprocess.run([sys.executable, CANDIDATE, str(out), "-o", str(result)],
                   check=True)
    assert pflref.check(vec, str(result)).passed
    with open(result) as f:
        doc = json.load(f)
    doc["final"]["w"][0] += 1e-6
    report = pflref.check(vec, doc)
    assert not report.passed
    assert report.first["name"] == "w"


def test_the_tolerance_needs_its_basis():
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.freeze(spec_of(SAMPLES), atol=1e-12, rtol=1e-12)
    assert "basis" in str(e.value)
    vec = pflref.freeze(spec_of(SAMPLES), atol=1e-12, rtol=1e-11,
                        basis="two-step recurrence; errors of a few ulp")
    assert vec.tolerance["atol"] == 1e-12 and vec.tolerance["rtol"] == 1e-11


def test_a_malformed_spec_is_refused_and_nothing_is_written(tmp_path):
    out = tmp_path / "bad.json"
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.freeze({"format": "pflref-spec/0"}, out=out)
    assert e.value.where == "format"
    assert list(tmp_path.iterdir()) == []


def test_out_is_written_by_the_librarys_one_writer(tmp_path):
    """freeze(out=...) keeps the writer's rules (docs/bad-inputs.md W1-W6):
    a FIFO, a folder, a dangling link and a read-only file are refused by
    name (pflref.Error, kind "io") and left as they were; a link to a
    regular file has the file replaced and the link kept."""
    spec = spec_of(SAMPLES)
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "dangling.json").symlink_to("gone.json")
    (tmp_path / "ro.json").write_text("kept\n")
    (tmp_path / "ro.json").chmod(0o444)
    refused = {"fifo.json": "(a FIFO (named pipe))",
               "folder.json": "(a folder)",
               "dangling.json": "(a dangling link)",
               "ro.json": "read-only"}
    for name, phrase in refused.items():
        with pytest.raises(pflref.Error) as e:
            pflref.freeze(spec, out=tmp_path / name)
        assert e.value.kind == "io" and e.value.where == str(tmp_path / name)
        assert phrase in e.value.message
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo.json").st_mode)
    assert (tmp_path / "folder.json").is_dir()
    assert (tmp_path / "ro.json").read_text() == "kept\n"
    assert not os.path.lexists(tmp_path / "gone.json")
    (tmp_path / "real.json").write_text("old\n")
    (tmp_path / "link.json").symlink_to("real.json")
    vec = pflref.freeze(spec, out=tmp_path / "link.json")
    assert os.readlink(tmp_path / "link.json") == "real.json"
    with open(tmp_path / "real.json") as f:
        assert json.load(f) == vec.raw
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "dangling.json", "fifo.json", "folder.json", "link.json",
        "real.json", "ro.json"]


def test_version_is_the_one_in_version_h():
    with open(os.path.join(ROOT, "include", "pflref", "version.h")) as f:
        want = re.search(r'#define PFLREF_VERSION "([^"]+)"', f.read())[1]
    assert pflref.__version__ == want


def test_freeze_on_npy_data_then_check_the_numpy_candidate(tmp_path):
    """The issue's path for a user's own problem: data in .npy, the
    reference frozen on it, a candidate checked against that vector."""
    import numpy as np
    rng = np.random.default_rng(7)
    clients = []
    for i, n in enumerate((5, 3, 4)):
        X = rng.normal(size=(n, 3))
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * i
        np.save(tmp_path / ("X%d.npy" % i), X)
        np.save(tmp_path / ("y%d.npy" % i), y.astype(np.float32))
        clients.append({"X": "X%d.npy" % i, "y": "y%d.npy" % i})
    spec = {"format": "pflref-spec/1", "name": "fedavg on .npy data",
            "model": {"kind": "linear", "d": 3, "loss": "squared",
                      "bias": True},
            "problem": {"clients": clients},
            "init": {"kind": "zeros"},
            "algorithm": {"name": "fedavg",
                          "hyperparameters": {"eta": 0.05}},
            "schedule": {"kind": "generate", "rounds": 3,
                         "clients_per_round": 2, "client_seed": 11,
                         "local": {"epochs": 2, "batch_size": 2}},
            "output": {"trajectory": "step"}}
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "vectors" / "mine.json"
    out.parent.mkdir()
    vec = pflref.freeze(str(spec_path), out=out, id="mine/fedavg-npy")
    # the data stay in their files, named relative to the vector's folder
    assert vec.raw["spec"]["problem"]["clients"][0]["X"] == "../X0.npy"
    assert pflref.verify(vec)["passed"]
    result = tmp_path / "result.json"
    subprocess.run([sys.executable, os.path.join(ROOT, "docs", "examples",
                                                 "pfl_numpy.py"),
                    str(out), "-o", str(result)], check=True)
    report = pflref.check(vec, str(result))
    assert report.passed, str(report)
    with open(result) as f:
        doc = json.load(f)
    doc["final"]["w"][3] *= 1 + 1e-9                 # the bias, off in digit 9
    assert pflref.check(vec, doc).first["index"] == 3


APFL = os.path.join(GOLDEN, "apfl", "worked-linear-adaptive-decay.json")


def _inline_arrays(folder, raw):
    """A vector in files with every reference and range replaced by its
    numbers (NumPy's reading), and without its manifest and hash."""
    import numpy as np

    def arr(ref):
        return np.load(os.path.join(folder, ref)).tolist()
    doc = json.loads(json.dumps(raw))
    init = doc["spec"].get("init", {})
    for key in ("w", "cluster_models", "lora"):
        if isinstance(init.get(key), str):
            init[key] = arr(init[key])
    final = doc["expected"].get("final", {})
    for key in ("w", "v", "alpha"):
        if isinstance(final.get(key), str):
            final[key] = arr(final[key])
    values = doc.pop("trajectory_values", None)
    values = None if values is None else arr(values)
    for rec in doc["expected"].get("trajectory", []):
        if isinstance(rec["value"], dict):
            o, c = rec["value"]["offset"], rec["value"]["count"]
            rec["value"] = values[o:o + c]
    doc.pop("array_files", None)
    doc.pop("hash")
    return doc


def test_freeze_in_files_holds_the_same_numbers_and_verdicts(tmp_path):
    """arrays="files": the large arrays in OUT.arrays/*.npy (what np.save
    writes, byte for byte), listed with size and SHA-256; the numbers the
    inline vector holds; verify passes; a candidate gets the same verdict
    and numbers from both forms."""
    import hashlib
    import io
    import numpy as np
    spec = spec_of(APFL)
    inline = pflref.freeze(spec, out=tmp_path / "a.json")
    files = pflref.freeze(spec, out=tmp_path / "b.json", arrays="files",
                          inline_max=2)
    assert files.id == inline.id
    names = sorted(p.name for p in (tmp_path / "b.arrays").iterdir())
    assert names == ["final.alpha.npy", "final.v.npy", "final.w.npy",
                     "spec.init.w.npy", "trajectory.npy"]
    for entry in files.raw["array_files"]:
        data = (tmp_path / entry["path"]).read_bytes()
        assert entry["path"].startswith("b.arrays/")
        assert len(data) == entry["bytes"]
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        buf = io.BytesIO()
        np.save(buf, np.load(tmp_path / entry["path"]))
        assert buf.getvalue() == data
    want = dict(inline.raw)
    want.pop("hash")
    assert _inline_arrays(str(tmp_path), files.raw) == want
    assert pflref.verify(files)["passed"]
    cand = {"format": "pflref-result/1", "id": inline.id,
            "final": inline.raw["expected"]["final"],
            "trajectory": inline.raw["expected"]["trajectory"]}
    for move in (0.0, 1e-6):
        doc = json.loads(json.dumps(cand))
        doc["final"]["w"][0] += move
        a, b = pflref.check(inline, doc), pflref.check(files, doc)
        assert a.passed == b.passed == (move == 0.0)
        assert str(a) == str(b).replace("b.json", "a.json")


def test_freeze_in_files_needs_out_and_a_form():
    with pytest.raises(ValueError, match="^arrays: the files form"):
        pflref.freeze(spec_of(SAMPLES), arrays="files")
    with pytest.raises(ValueError, match="^arrays: 'npy'"):
        pflref.freeze(spec_of(SAMPLES), arrays="npy")
    with pytest.raises(ValueError, match="^inline_max: -1"):
        pflref.freeze(spec_of(SAMPLES), arrays="files", inline_max=-1)
