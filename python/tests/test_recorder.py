# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.Recorder: the records the library says each vector needs, the
missing ones named before any comparison, exact conversion to float64, and
the result document."""
import json
import os

import numpy as np
import pytest

import optional
import pflref
from conftest import GOLDEN
from helpers import expected_keys, golden_files, key_of, numpy_candidate

SAMPLES = os.path.join(GOLDEN, "fedavg", "worked-samples.json")


@pytest.mark.parametrize("vid", sorted(golden_files()))
def test_required_records_are_the_vectors_expected_keys(vid):
    path, doc = golden_files()[vid]
    rec = pflref.Recorder(path)
    listed = rec.required()
    required = [key_of(r) for r in listed if r["required"]]
    assert sorted(required) == sorted(expected_keys(doc))
    assert len(set(map(key_of, listed))) == len(listed)   # each key once
    lengths = {key_of(r): len(r["value"])
               for r in doc["expected"].get("trajectory", [])}
    for r in listed:
        if r["required"] and key_of(r) in lengths:
            assert r["length"] == lengths[key_of(r)], key_of(r)
    assert listed[-1]["event"] == "final"                  # the state last


def test_an_empty_recorder_misses_everything_and_check_compares_nothing():
    v = pflref.Vector(SAMPLES)
    rec = pflref.Recorder(v)
    missing = rec.missing()
    assert [key_of(m) for m in missing] == \
        [key_of(r) for r in rec.required() if r["required"]]
    report = pflref.check(v, rec)
    assert not report.passed and report.raw is None
    assert report.first == {"event": "round_begin", "phase": "train",
                            "round": 0, "client": None, "step": None,
                            "name": "w", "index": None, "expected": None,
                            "got": None, "missing": True}
    text = str(report)
    assert "did not record 22 required records (nothing compared)" in text
    assert "first missing: round_begin w (train, round 0)" in text
    assert "replay: " in text


def test_one_forgotten_record_is_named_before_any_comparison():
    v = pflref.Vector(SAMPLES)
    full = numpy_candidate(v, pflref.Recorder(v))
    rec = pflref.Recorder(v)
    dropped = None
    for r in full.trajectory:
        if dropped is None and r["event"] == "step" and r["round"] == 1:
            dropped = r
            continue
        rec.record(r["event"], r["name"], r["value"], round=r.get("round"),
                   client=r.get("client"), step=r.get("step"),
                   phase=r["phase"])
    rec.final("w", full.result()["final"]["w"])
    assert [key_of(m) for m in rec.missing()] == [key_of(dropped)]
    report = pflref.check(v, rec)
    assert report.missing and report.first["step"] == dropped["step"]
    assert report.first["client"] == dropped["client"] and \
        report.first["missing"]
    # under partial the comparison runs and passes on what was given
    assert pflref.check(v, rec, partial=True).passed


def test_values_are_converted_exactly_to_float64():
    v = pflref.Vector(SAMPLES)
    rec = pflref.Recorder(v)
    x32 = np.array([0.1, 1 / 3, -2.5e-8], dtype=np.float32)
    rec.record("note", "x32", x32)
    rec.record("note", "list", [[1, 2], [3, 4]])
    rec.record("note", "scalar", 0.1)
    rec.record("note", "ints", np.arange(3, dtype=np.int64))
    vals = {r["name"]: r["value"] for r in rec.trajectory}
    assert vals["x32"] == [float(x) for x in x32]          # widened exactly
    assert vals["x32"][0] != 0.1                           # not re-rounded
    assert vals["list"] == [1.0, 2.0, 3.0, 4.0]
    assert vals["scalar"] == [0.1]
    assert vals["ints"] == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="dtype"):
        rec.record("note", "obj", np.array(["a"], dtype=object))
    with pytest.raises(TypeError, match="boolean"):
        rec.record("note", "mask", np.array([True, False]))


def test_torch_tensors_are_converted_exactly():
    torch = optional.require("torch")
    rec = pflref.Recorder(SAMPLES)
    t = torch.tensor([0.1, 0.2], dtype=torch.float32, requires_grad=True)
    rec.record("note", "t", t)
    assert rec.trajectory[0]["value"] == [float(x) for x in
                                          t.detach().numpy()]


def test_the_convenience_methods_write_the_documented_events():
    rec = pflref.Recorder(SAMPLES)
    rec.round_begin(0, [1.0])
    rec.step(0, 2, 0, "w_local", [1.0])
    rec.step(0, 2, 1, "w_local", [2.0])
    rec.client_end(0, 2, "w_local", [2.0])
    rec.server(0, [3.0])
    rec.step(None, 1, 1, "theta", [4.0], phase="finetune")
    got = [(r["event"], r["phase"], r.get("round"), r.get("client"),
            r.get("step"), r["name"]) for r in rec.trajectory]
    assert got == [("round_begin", "train", 0, None, None, "w"),
                   ("client_begin", "train", 0, 2, 0, "w_local"),
                   ("step", "train", 0, 2, 1, "w_local"),
                   ("client_end", "train", 0, 2, None, "w_local"),
                   ("server", "train", 0, None, None, "w"),
                   ("step", "finetune", None, 1, 1, "theta")]


def test_bad_records_are_refused_naming_the_field():
    rec = pflref.Recorder(SAMPLES)
    with pytest.raises(ValueError, match="event"):
        rec.record("steps", "w", [1.0])
    with pytest.raises(ValueError, match="round"):
        rec.record("server", "w", [1.0], round=-1)
    with pytest.raises(ValueError, match="client"):
        rec.step(0, 1.5, 1, "w_local", [1.0])
    with pytest.raises(ValueError, match="final"):
        rec.final("u", [1.0])
    with pytest.raises(ValueError, match=r"final alpha\[1\]: one number"):
        rec.final("alpha", [0.5, 0.25], client=1)
    rec.final("v", [1.0], client=0)
    rec.final("v", [2.0], client=2)
    with pytest.raises(ValueError, match="final v: no value for client 1"):
        rec.result()


def test_final_personal_models_per_client_or_as_a_matrix():
    a, b = pflref.Recorder(SAMPLES), pflref.Recorder(SAMPLES)
    V = np.arange(6.0).reshape(3, 2)
    a.final("v", V)
    for i in range(3):
        b.final("v", V[i], client=i)
    a.final("alpha", [0.25, 0.5, 0.75])
    b.final("alpha", np.array([0.25, 0.5, 0.75]))
    assert a.result()["final"] == b.result()["final"] == \
        {"v": V.tolist(), "alpha": [0.25, 0.5, 0.75]}


def test_a_misspelt_name_is_unexpected_and_its_record_missing():
    v = pflref.Vector(SAMPLES)
    rec = numpy_candidate(v, pflref.Recorder(v))
    r = rec.trajectory.pop(3)
    rec.record(r["event"], "w_locl", r["value"], round=r.get("round"),
               client=r.get("client"), step=r.get("step"))
    assert [u["name"] for u in rec.unexpected()] == ["w_locl"]
    assert [key_of(m) for m in rec.missing()] == [key_of(r)]


def test_a_non_finite_value_declares_the_outcome_diverged():
    v = pflref.Vector(SAMPLES)
    rec = numpy_candidate(v, pflref.Recorder(v))
    rec.step(1, 2, 3, "w_local", [np.nan])
    doc = rec.result()
    assert doc["outcome"]["class"] == "diverged"
    assert (doc["outcome"]["round"], doc["outcome"]["client"],
            doc["outcome"]["step"]) == (1, 2, 3)
    json.dumps(doc, allow_nan=False)                # still valid JSON
    report = pflref.check(v, rec)
    assert not report.passed and report.raw["wrong_outcome"]
    assert 'reports outcome "diverged"' in str(report)
    assert "round 1, client 2, step 3" in str(report)


def test_result_is_a_pflref_result_document():
    v = pflref.Vector(SAMPLES)
    doc = numpy_candidate(v, pflref.Recorder(v)).result()
    assert doc["format"] == "pflref-result/1" and doc["id"] == v.id
    assert set(doc) == {"format", "id", "final", "trajectory"}
    assert len(doc["trajectory"]) == 21
