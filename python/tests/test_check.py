# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.check(): the shipped NumPy candidates pass, the buggy one fails
with the right first divergence, and the report, its digits and its replay
command say so the way `pflref check` does."""
import copy
import json
import os
import shlex
import subprocess
import sys

import pytest

import pflref
from conftest import EXAMPLES, GOLDEN, ROOT
from helpers import golden_files, numpy_candidate, pfl_numpy

SAMPLES = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
PY = "/usr/bin/python3"


def run_example(script, vector_path, out):
    subprocess.run([PY, os.path.join(EXAMPLES, script), vector_path, "-o",
                    str(out)], check=True, capture_output=True)
    return str(out)


def fedavg_vectors():
    """The FedAvg vectors fedavg_numpy.py runs: the linear model, n_k
    weights, plain SGD (it refuses a client optimizer, opt.*), a given
    schedule (it replays the rounds; it draws none)."""
    out = []
    for v in pflref.vectors(algorithm="fedavg"):
        alg = v.raw["spec"]["algorithm"]
        sw = alg.get("switches", {})
        opt = [k for part in (sw, alg.get("hyperparameters", {}))
               for k in part if k.startswith("opt.")]
        if v.raw["spec"]["model"]["kind"] == "linear" and \
                sw.get("fedavg.weights", "samples") == "samples" and not opt \
                and v.raw["spec"]["schedule"]["kind"] == "given":
            out.append(v)
    return out


@pytest.mark.parametrize("vector", fedavg_vectors(), ids=lambda v: v.id)
def test_fedavg_numpy_passes_as_path_dict_and_text(vector, tmp_path):
    path = run_example("fedavg_numpy.py", vector.path, tmp_path / "r.json")
    for result in (path, json.load(open(path)), open(path).read()):
        report = pflref.check(vector, result)
        assert report.passed, str(report)
        assert report.first is None
        assert str(report).startswith("PASS %s: " % vector.id)
        assert min(report.digits.values()) > 13


def test_the_buggy_fedavg_fails_at_the_first_aggregate(tmp_path):
    v = pflref.Vector(SAMPLES)
    path = run_example("fedavg_numpy_buggy.py", SAMPLES, tmp_path / "b.json")
    bug = json.load(open(path))
    report = pflref.check(v, path)
    assert not report.passed
    # round 0 aggregates clients 0 and 2 (n = 2 and 3): 2/5, 3/5 against
    # the bug's 1/2, 1/2; every client step before it agrees
    want = [r for r in v.raw["expected"]["trajectory"]
            if r["event"] == "server" and r["round"] == 0][0]["value"][0]
    got = [r for r in bug["trajectory"]
           if r["event"] == "server" and r["round"] == 0][0]["value"][0]
    assert report.first == {"event": "server", "phase": "train", "round": 0,
                            "client": None, "step": None, "name": "w",
                            "index": 0, "expected": want, "got": got,
                            "missing": False}
    assert (want, got) == (3.7, 3.375)
    assert set(report.digits) == {"w", "w_local"}
    assert report.digits["w"] < 1 and report.digits["w_local"] < 1
    text = str(report)
    assert "first divergence: w (server, round 0)[0]: expected 3.7, got " \
        "3.375" in text
    assert "also:" not in text                   # only under resync
    assert len(text.splitlines()) == 5    # FAIL, w, w_local, flags, replay
    assert "  flags: aggregation-weights, local-step-count (" in text


def test_digits_along_the_trajectory(tmp_path):
    """report.trajectory_digits: a point per expected record; the buggy
    FedAvg keeps every digit up to round 0's server record (its first
    divergence, first_position) and loses them there."""
    v = pflref.Vector(SAMPLES)
    good = pflref.check(v, run_example("fedavg_numpy.py", SAMPLES,
                                       tmp_path / "g.json"))
    assert good.digits_stretch == 1 and good.first_position is None
    points = [p for q in good.trajectory_digits.values() for p in q]
    assert sorted(p["position"] for p in points) == \
        list(range(len(v.raw["expected"]["trajectory"]) +
                   sum(len(x) if isinstance(x[0], list) else 1
                       for x in v.raw["expected"]["final"].values())))
    assert all(p["digits"] > 13 and p["mismatches"] == 0 for p in points)
    bad = pflref.check(v, run_example("fedavg_numpy_buggy.py", SAMPLES,
                                      tmp_path / "b.json"))
    at = bad.first_position
    traj = v.raw["expected"]["trajectory"]
    assert traj[at]["event"] == "server" and traj[at]["round"] == 0
    w = {p["position"]: p for p in bad.trajectory_digits["w"]}
    assert w[at]["digits"] < 2 and w[at]["mismatches"] == 1   # 3.375 for 3.7
    assert w[at]["round"] == 0
    before = [p for q in bad.trajectory_digits.values() for p in q
              if p["position"] < at]
    assert before and all(p["digits"] > 13 for p in before)


def test_the_replay_command_reproduces_the_check(tmp_path):
    v = pflref.Vector(SAMPLES)
    path = run_example("fedavg_numpy_buggy.py", SAMPLES, tmp_path / "b.json")
    rec = pflref.Recorder(v)
    doc = json.load(open(path))
    for r in doc["trajectory"]:
        rec.record(r["event"], r["name"], r["value"], round=r.get("round"),
                   client=r.get("client"), step=r.get("step"))
    rec.final("w", doc["final"]["w"])
    report = pflref.check(v, rec)
    argv = shlex.split(report.replay)
    assert argv[1:3] == ["check", v.path]
    saved = json.load(open(argv[3]))             # the in-memory candidate
    assert saved == rec.result()
    cli = subprocess.run(argv, capture_output=True, text=True)
    assert cli.returncode == 1
    first_line = str(report).splitlines()[0]
    assert first_line in cli.stdout


def test_resync_lists_each_independent_divergence(tmp_path):
    v = pflref.Vector(SAMPLES)
    path = run_example("fedavg_numpy_buggy.py", SAMPLES, tmp_path / "b.json")
    plain, resync = pflref.check(v, path), pflref.check(v, path, resync=True)
    assert plain.first == resync.first
    # re-synchronised, the client steps of round 1 start from the
    # candidate's own w and agree; only the aggregates differ
    names = {d["name"] for d in resync.raw["divergences"]}
    assert names == {"w"}
    assert resync.raw["mismatches"] < plain.raw["mismatches"]
    assert "  also: w (server, round 1)" in str(resync)
    assert "--resync" in resync.replay


def test_precision_fp32_loosens_the_floor():
    v = pflref.Vector(SAMPLES)
    doc = numpy_candidate(v, pflref.Recorder(v)).result()
    nudged = copy.deepcopy(doc)
    nudged["final"]["w"] = [x * (1 + 1e-7) for x in nudged["final"]["w"]]
    assert pflref.check(v, doc).passed
    fp64 = pflref.check(v, nudged)
    assert not fp64.passed and fp64.first["event"] == "final"
    fp32 = pflref.check(v, nudged, precision="fp32")
    assert fp32.passed and "--candidate-precision fp32" in fp32.replay
    with pytest.raises(ValueError, match="precision"):
        pflref.check(v, doc, precision="fp16")


def test_malformed_candidates_raise_naming_the_field():
    v = pflref.Vector(SAMPLES)
    doc = numpy_candidate(v, pflref.Recorder(v)).result()
    bad = dict(doc, format="pflref-result/2")
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.check(v, bad)
    assert e.value.where.startswith("candidate:") and "format" in e.value.where
    other = dict(doc, id="fedavg/some/other")
    with pytest.raises(pflref.InvalidInput, match="other"):
        pflref.check(v, other)
    with pytest.raises(TypeError, match="result"):
        pflref.check(v, 42)


def _supported(vector):
    spec = vector.raw["spec"]
    return spec["algorithm"]["name"] in pfl_numpy.ALGORITHMS


@pytest.mark.parametrize("vid", sorted(golden_files()))
def test_pfl_numpy_through_the_recorder_passes(vid):
    v = pflref.Vector(golden_files()[vid][0])
    if not _supported(v):
        pytest.skip("pfl_numpy.py has no %s" % v.algorithm)
    rec = pflref.Recorder(v)
    try:
        numpy_candidate(v, rec)
    except pfl_numpy.Unsupported as e:
        pytest.skip("pfl_numpy.py: %s" % e)
    assert rec.missing() == []
    report = pflref.check(v, rec)
    assert report.passed, str(report)


def test_a_catalogued_bug_through_the_recorder_fails():
    v = pflref.Vector(os.path.join(GOLDEN, "ditto",
                                   "worked-notes-3g-both.json"))
    rec = numpy_candidate(v, pflref.Recorder(v), bug="ditto-v-reset")
    report = pflref.check(v, rec)
    assert not report.passed
    assert report.first["name"] == "v" and report.first["round"] == 1
    assert "first divergence: v (" in str(report)


def test_verify_reruns_the_reference():
    report = pflref.verify(SAMPLES)
    assert report["passed"] and report["quantities"] == 22


def test_the_human_report_reads_like_pflref_check(tmp_path):
    """Every line of str(report) but the replay line is the CLI's own."""
    cli = os.path.join(ROOT, "build", "rel", "pflref")
    for script, vector in (("fedavg_numpy_buggy.py", SAMPLES),
                           ("fedavg_numpy.py", SAMPLES)):
        path = run_example(script, vector, tmp_path / script)
        for extra in ([], ["--resync"]):
            report = pflref.check(vector, path, resync=bool(extra))
            out = subprocess.run([cli, "check", vector, path] + extra,
                                 capture_output=True, text=True).stdout
            mine = [l for l in str(report).splitlines()
                    if not l.startswith("  replay: ")]
            theirs = [l for l in out.splitlines()
                      if not l.startswith(("  replay: ", "check: "))]
            assert mine == theirs


def test_a_result_with_arrays_in_files_reads_from_its_own_folder(
        tmp_path, monkeypatch):
    """A candidate given as a path resolves its .npy references (and
    its ranged trajectory values) from its own folder, whatever the
    current folder; the report is the inline candidate's."""
    import numpy as np
    path = run_example("fedavg_numpy.py", SAMPLES, tmp_path / "r.json")
    doc = json.load(open(path))
    sub = tmp_path / "c"
    (sub / "c.arrays").mkdir(parents=True)
    np.save(str(sub / "c.arrays" / "final.w.npy"),
            np.asarray(doc["final"]["w"], dtype="<f8"))
    doc["final"]["w"] = "c.arrays/final.w.npy"
    values, offset = [], 0
    for rec in doc["trajectory"]:
        n = len(rec["value"])
        values += rec["value"]
        rec["value"] = {"offset": offset, "count": n}
        offset += n
    np.save(str(sub / "c.arrays" / "trajectory.npy"),
            np.asarray(values, dtype="<f8"))
    doc["trajectory_values"] = "c.arrays/trajectory.npy"
    files = sub / "c.json"
    files.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    inline = pflref.check(SAMPLES, path)
    from_files = pflref.check(SAMPLES, str(files))
    assert from_files.passed and inline.passed
    assert from_files.raw == inline.raw
    # a missing file is named with its field (an I/O error, as for
    # problem data); a bad range is invalid input
    os.remove(str(sub / "c.arrays" / "final.w.npy"))
    with pytest.raises(pflref.Error) as e:
        pflref.check(SAMPLES, str(files))
    assert e.value.where == "candidate:final.w"
    assert "c.arrays/final.w.npy" in str(e.value)
    doc["final"]["w"] = json.load(open(path))["final"]["w"]
    doc["trajectory"][0]["value"] = {"offset": offset, "count": 1}
    files.write_text(json.dumps(doc))
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.check(SAMPLES, str(files))
    assert e.value.where == "candidate:trajectory[0].value"


# ---- issue 33 §4: --partial covers every round unless told otherwise ------

def test_partial_needs_every_round_unless_partial_min_is_given():
    """A candidate that records only its final model passes under partial
    only with an explicit partial_min, as `pflref check --partial` (which
    the replay command repeats); one that records each round's server w
    passes without it."""
    path = SAMPLES
    with open(path) as f:
        doc = json.load(f)
    exp = doc["expected"]
    final_only = {"format": "pflref-result/1", "id": doc["id"],
                  "final": exp["final"]}
    r = pflref.check(path, final_only, partial=True)
    assert not r.passed and r.partial_short is not None
    assert "of the 2 rounds of the expected trajectory" in str(r), str(r)
    r = pflref.check(path, final_only, partial=True, partial_min=1)
    assert r.passed and "--partial-min 1" in r.replay
    servers = dict(final_only, trajectory=[
        x for x in exp["trajectory"] if x["event"] == "server"])
    assert pflref.check(path, servers, partial=True).passed
    with pytest.raises(ValueError):
        pflref.check(path, final_only, partial_min=1)
    with pytest.raises(ValueError):
        pflref.check(path, final_only, partial=True, partial_min=0)
