# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.freeze(): a vector of the reference's own output on a user's
spec, written atomically, that verify reproduces and check holds a
candidate to; its refusals as exceptions naming the field; and
pflref.__version__ read from the library."""
import json
import os
import re
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


def test_version_is_the_one_in_version_h():
    with open(os.path.join(ROOT, "include", "pflref", "version.h")) as f:
        want = re.search(r'#define PFLREF_VERSION "([^"]+)"', f.read())[1]
    assert pflref.__version__ == want
