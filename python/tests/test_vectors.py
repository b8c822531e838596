# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.vectors() and pflref.Spec against the golden files read with
plain json: every vector found, the filters, and every array of every
vector's Spec equal to its JSON."""
import json
import os

import numpy as np
import pytest

import pflref
from conftest import GOLDEN, ROOT
from helpers import golden_files, pfl_numpy


def test_every_golden_vector_is_found_in_path_order():
    files = golden_files()
    found = list(pflref.vectors())
    assert [v.id for v in found] == [vid for vid, _ in sorted(
        files.items(), key=lambda kv: kv[1][0])]
    for v in found:
        path, doc = files[v.id]
        assert v.path == path
        assert v.raw == doc
        assert v.algorithm == doc["spec"]["algorithm"]["name"]
        assert v.tolerance == doc["tolerance"]
        assert v.flags == doc["flags"]


def test_default_root_is_the_checkouts_golden():
    assert [v.id for v in pflref.vectors()] == \
        [v.id for v in pflref.vectors(root=GOLDEN)]


def test_algorithm_filter_takes_a_name_or_a_list():
    files = golden_files()
    ditto = [v.id for v in pflref.vectors(algorithm="ditto")]
    assert set(ditto) == {i for i, (_, d) in files.items()
                          if d["spec"]["algorithm"]["name"] == "ditto"}
    assert len(ditto) >= 2
    both = {v.algorithm for v in pflref.vectors(algorithm=["ditto", "local"])}
    assert both == {"ditto", "local"}


def test_include_and_exclude_globs_on_id_path_and_flags():
    ids = [v.id for v in pflref.vectors(include="fedavg/*")]
    assert ids and all(i.startswith("fedavg/") for i in ids)
    assert ids == [v.id for v in pflref.vectors(include="fedavg/")]
    by_path = [v.path for v in pflref.vectors(include="fedavg/*.json")]
    assert by_path == sorted(
        os.path.join(GOLDEN, "fedavg", p)
        for p in os.listdir(os.path.join(GOLDEN, "fedavg"))
        if p.endswith(".json"))
    fewer = [v.id for v in pflref.vectors(include="fedavg/*",
                                          exclude=["*uniform*"])]
    assert fewer == [i for i in ids if "uniform" not in i] and \
        len(fewer) < len(ids)
    flag = golden_files()[ids[0]][1]["flags"][0]
    flagged = [v.id for v in pflref.vectors(include=flag)]
    assert ids[0] in flagged
    assert all(flag in v.flags for v in pflref.vectors(include=flag))


def test_a_single_file_is_a_root_and_other_files_are_passed_over():
    path = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
    assert [v.path for v in pflref.vectors(root=path)] == [path]
    assert list(pflref.vectors(root=os.path.join(GOLDEN, "seed000"))) == []
    with pytest.raises(ValueError, match="format"):
        pflref.Vector(os.path.join(GOLDEN, "seed000", "fedavg-ft.json"))
    with pytest.raises(FileNotFoundError, match="root"):
        list(pflref.vectors(root=os.path.join(GOLDEN, "no-such-folder")))


def test_a_file_that_is_not_json_is_named(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        list(pflref.vectors(root=tmp_path))


def _layout_by_hand(model):
    """The blocks of docs/models.md in state_dict order, from the model's
    fields (pfl_numpy.model_blocks where it knows the kind)."""
    if model["kind"] == "softmax":
        d, k = model["d"], model["k"]
        out = {"W": (0, k * d)}
        if model.get("bias", True):
            out["b"] = (k * d, k)
        return out
    if model["kind"] == "layers":
        return _layers_layout_by_hand(model)
    return {name: (off, size)
            for name, off, size, _ in pfl_numpy.model_blocks(model)}


def _layers_layout_by_hand(model):
    """A layer list's blocks (docs/models.md, "layers"): per layer with
    parameters, in list order, NAME.weight and NAME.bias (dense, conv2d)
    or NAME.weight, NAME.bias, NAME.running_mean, NAME.running_var
    (batchnorm), the shapes carried through the list by hand."""
    shape = list(model["input"])
    out, off = {}, 0

    def add(name, size):
        nonlocal off
        out[name] = (off, size)
        off += size

    for j, layer in enumerate(model["layers"]):
        kind, name = layer["type"], layer.get("name", str(j))
        if kind == "dense":
            width = 1
            for n in shape:
                width *= n
            add(name + ".weight", layer["out"] * width)
            if layer.get("bias", True):
                add(name + ".bias", layer["out"])
            shape = [layer["out"]]
        elif kind == "conv2d":
            c, h, w = shape
            k, s = layer["kernel"], layer.get("stride", 1)
            p = layer.get("padding", 0)
            o = layer["out_channels"]
            add(name + ".weight", o * c * k * k)
            if layer.get("bias", True):
                add(name + ".bias", o)
            shape = [o, (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1]
        elif kind in ("maxpool2d", "avgpool2d"):
            c, h, w = shape
            k = layer["kernel"]
            s = layer.get("stride", k)
            shape = [c, (h - k) // s + 1, (w - k) // s + 1]
        elif kind == "flatten":
            width = 1
            for n in shape:
                width *= n
            shape = [width]
        elif kind in ("batchnorm1d", "batchnorm2d"):
            for part in ("weight", "bias", "running_mean", "running_var"):
                add(name + "." + part, shape[0])
    return out


def _bn_start(model, layout, P):
    """w⁰ of the zeros init: 0, except batch normalisation's γ and running
    variance, which start at torch's 1 (docs/models.md)."""
    bn = {L.get("name", str(j)) for j, L in enumerate(model.get("layers", []))
          if L["type"] in ("batchnorm1d", "batchnorm2d")}
    w = np.zeros(P)
    for name, (off, n) in layout.items():
        layer, _, part = name.rpartition(".")
        if name in ("bn_gamma", "bn_running_var") or \
                (layer in bn and part in ("weight", "running_var")):
            w[off:off + n] = 1.0
    return w


@pytest.mark.parametrize("vid", sorted(golden_files()))
def test_spec_arrays_equal_the_vectors_json(vid):
    path, doc = golden_files()[vid]
    spec = pflref.Vector(path).spec
    raw = doc["spec"]
    assert spec.raw == raw and spec.algorithm == raw["algorithm"]["name"]
    for k, v in raw["model"].items():
        if k == "layers":
            # the reference's layer list is the spec's with every default
            # filled in and each layer's in_shape and out_shape added
            got = spec.model[k]
            assert len(got) == len(v), "model field layers"
            for j, (g, want) in enumerate(zip(got, v)):
                assert {a: g[a] for a in want} == want, \
                    "model field layers[%d]" % j
                assert "in_shape" in g and "out_shape" in g, j
            continue
        assert spec.model[k] == v, "model field %s" % k
    assert spec.layout == _layout_by_hand(raw["model"])
    P = sum(n for _, n in spec.layout.values())
    assert spec.model["P"] == P
    init = raw.get("init", {"kind": "zeros"})
    want = np.asarray(init["w"], dtype=float) if init["kind"] == "given" \
        else _bn_start(raw["model"], spec.layout, P)
    assert spec.init.dtype == np.float64
    assert np.array_equal(spec.init, want)
    clients = raw["problem"]["clients"]
    assert len(spec.clients) == len(clients)
    for i, (mine, theirs) in enumerate(zip(spec.clients, clients)):
        for key, value in theirs.items():
            if key == "n":
                assert mine["n"] == value
                continue
            arr = mine[key]
            assert arr.dtype == np.float64
            assert np.array_equal(arr, np.asarray(value, dtype=float)), \
                "clients[%d].%s" % (i, key)
        assert set(mine) - {"n"} == set(theirs) - {"n"}
    for key, value in raw["algorithm"].get("hyperparameters", {}).items():
        assert spec.hyper[key] == value, key
    for key, value in raw["algorithm"].get("switches", {}).items():
        assert spec.switches[key] == value, key
    if raw["schedule"]["kind"] == "generate":
        # drawn by the library (fedavg/worked/notes-1g/generated-m): T
        # rounds of m = clients_per_round ascending ids
        sch = raw["schedule"]
        assert len(spec.schedule) == sch["rounds"]
        for r in spec.schedule:
            assert len(r["clients"]) == sch.get("clients_per_round", len(clients))
            assert r["clients"] == sorted(set(r["clients"]))
    else:
        rounds = raw["schedule"]["rounds"]
        assert [r["clients"] for r in spec.schedule] == \
            [r["clients"] for r in rounds]
        assert [r["batches"] for r in spec.schedule] == \
            [r["batches"] for r in rounds]
    assert spec.post == raw["schedule"].get("post")
    cm = raw.get("init", {}).get("cluster_models")
    if cm is None:
        assert spec.cluster_models is None
    else:
        assert np.array_equal(spec.cluster_models, np.asarray(cm, dtype=float))


def test_spec_of_a_plain_spec_with_a_problem_file_and_a_generated_schedule():
    path = os.path.join(GOLDEN, "seed000", "fedavg-ft.json")
    with open(path) as f:
        raw = json.load(f)
    spec = pflref.Spec.load(path)
    with open(os.path.join(GOLDEN, "seed000", raw["problem"]["file"])) as f:
        problem = json.load(f)
    assert len(spec.clients) == len(problem["clients"])
    for mine, theirs in zip(spec.clients, problem["clients"]):
        assert np.array_equal(mine["X"], np.asarray(theirs["X"], dtype=float))
        assert np.array_equal(mine["y_test"],
                              np.asarray(theirs["y_test"], dtype=float))
    cfg = raw["schedule"]
    assert len(spec.schedule) == cfg["rounds"]
    # every client every round, full batch (the spec's generated schedule)
    n = [len(c["y"]) for c in problem["clients"]]
    assert all(r["clients"] == list(range(len(n))) for r in spec.schedule)
    assert all(b == [list(range(n[k]))] * len(b)
               for r in spec.schedule for k, b in zip(r["clients"],
                                                       r["batches"]))
    assert spec.init.tolist() == [0.0] * raw["model"]["d"]


def test_a_bad_spec_is_refused_naming_the_field():
    spec = json.load(open(os.path.join(GOLDEN, "fedavg",
                                       "worked-samples.json")))["spec"]
    spec["algorithm"]["hyperparameters"]["eta"] = -1.0
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.Spec.load(spec)
    assert "eta" in e.value.where and e.value.status == 1
