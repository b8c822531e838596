# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.run(): the reference in-process on a vector, a spec dict, JSON
text or a spec file, and its errors as exceptions naming the place."""
import json
import os

import numpy as np
import pytest

import pflref
from conftest import GOLDEN
from helpers import golden_files

SAMPLES = os.path.join(GOLDEN, "fedavg", "worked-samples.json")


def within(x, r, tol):
    x, r = np.asarray(x, dtype=float), np.asarray(r, dtype=float)
    return np.all(np.abs(x - r) <= tol["atol"] + tol["rtol"] * np.abs(r))


@pytest.mark.parametrize("vid", sorted(golden_files()))
def test_run_meets_every_vectors_expected_final_state(vid):
    path, doc = golden_files()[vid]
    res = pflref.run(path)
    assert res.id == vid
    for name, want in doc["expected"].get("final", {}).items():
        assert res.final[name].dtype == np.float64
        assert res.final[name].shape == np.asarray(want).shape, name
        assert within(res.final[name], want, doc["tolerance"]), name


def test_run_takes_a_dict_json_text_a_path_and_a_vector():
    doc = json.load(open(SAMPLES))
    forms = [pflref.run(doc["spec"]), pflref.run(json.dumps(doc["spec"])),
             pflref.run(SAMPLES), pflref.run(pflref.Vector(SAMPLES))]
    want = doc["expected"]["final"]["w"]
    for res in forms:
        assert within(res.final["w"], want, doc["tolerance"])
        assert res.raw["format"] == "pflref-result/1"
    # the same spec gives the same bytes of state, whatever the form
    assert all(f.final["w"].tolist() == forms[0].final["w"].tolist()
               for f in forms)
    first = forms[0].trajectory[0]
    assert (first["event"], first["round"], first["name"]) == \
        ("round_begin", 0, "w")
    assert isinstance(first["value"], np.ndarray)


def test_run_resolves_a_problem_file_beside_the_spec():
    res = pflref.run(os.path.join(GOLDEN, "seed000", "local.json"))
    spec = pflref.Spec.load(os.path.join(GOLDEN, "seed000", "local.json"))
    N, P = len(spec.clients), spec.model["P"]
    assert res.final["v"].shape == (N, P)
    assert set(res.metrics) >= {"local"}
    with pytest.raises(pflref.Error) as e:      # no folder: file not found
        pflref.run(open(os.path.join(GOLDEN, "seed000", "local.json")).read())
    assert "problem" in str(e.value)


def test_invalid_specs_raise_invalid_input_naming_the_field():
    spec = json.load(open(SAMPLES))["spec"]
    spec["algorithm"]["hyperparameters"]["eta"] = -0.5
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.run(spec)
    assert e.value.status == 1 and "eta" in e.value.where
    with pytest.raises(pflref.InvalidInput, match="line 1"):
        pflref.run("{not json")
    with pytest.raises(TypeError, match="spec"):
        pflref.run(3.5)


def test_a_run_that_diverges_raises_with_round_client_and_step():
    spec = json.load(open(SAMPLES))["spec"]
    spec["algorithm"]["hyperparameters"]["eta"] = 1e300
    with pytest.raises(pflref.DivergenceError) as e:
        pflref.run(spec)
    # w¹ after step 1 of client 0 is finite (1e300·(y − 0)·x = 1e300), its
    # second step overflows: round 0, client 0, step 2
    assert (e.value.round, e.value.client, e.value.step) == (0, 0, 2)
    assert e.value.where == "w_local"
