# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.load_result and pflref.save_result: every array kind of a result
through the inline and the files form, bit for bit; the files as np.save
writes them, mapped on reading, ranged trajectory values as views; the
manifest checked; every bad file refused naming the field and the file;
a save deterministic, and all or nothing."""
import hashlib
import io
import json
import os
import stat

import numpy as np
import pytest

import optional
import pflref
from conftest import GOLDEN
from helpers import golden_files, numpy_candidate

SAMPLES = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
# Doubles whose text or bits a careless writer or reader changes: the
# shortest-repr edge cases, a subnormal, signed zero, non-terminating
# binary fractions.
AWKWARD = [2.385, -0.0, 0.1, 1 / 3, 5e-324, 1.7976931348623157e+308, 1e-05,
           1e+16, -7.0, 2.0 ** -1074 * 3, 123456789.12345678, 0.0]


def values(n, seed):
    """n high-entropy doubles, the awkward ones first."""
    rng = np.random.default_rng(seed)
    out = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
    out[:min(n, len(AWKWARD))] = AWKWARD[:n]
    return out


def every_kind(P=5, N=3, e=2, k=2):
    """A document with every array kind a result may hold in a file."""
    return {
        "format": "pflref-result/1", "id": "arrays/every-kind",
        "model": {"P": P}, "problem": {"N": N},
        "w0": values(P, 1),
        "theta0": values(k * P, 2).reshape(k, P),
        "hypernetwork": {"W": values(P * e, 3).reshape(P, e),
                         "b": values(P, 4),
                         "v": values(N * e, 5).reshape(N, e)},
        "final": {"w": values(P, 6), "v": values(N * P, 7).reshape(N, P),
                  "alpha": values(N, 8)},
        "trajectory": [
            {"event": "step", "phase": "train", "round": 0, "client": i,
             "step": s, "name": "w_local", "value": values(P, 10 * i + s)}
            for i in range(N) for s in range(3)],
        "outcome": {"class": "ok"},
    }


ARRAY_PATHS = [("w0",), ("theta0",), ("hypernetwork", "W"),
               ("hypernetwork", "b"), ("hypernetwork", "v"), ("final", "w"),
               ("final", "v"), ("final", "alpha")]


def get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b, dtype=np.float64)
    return a.dtype == np.float64 and a.shape == b.shape and \
        np.array_equal(a.view(np.uint64), b.view(np.uint64))


def assert_same_arrays(got, want):
    for path in ARRAY_PATHS:
        try:
            w = get(want, path)
        except KeyError:
            continue
        assert same_bits(get(got, path), w), ".".join(path)
    assert len(got["trajectory"]) == len(want["trajectory"])
    for r, (g, w) in enumerate(zip(got["trajectory"], want["trajectory"])):
        assert same_bits(g["value"], w["value"]), "trajectory[%d]" % r
        assert {k: v for k, v in g.items() if k != "value"} == \
            {k: v for k, v in w.items() if k != "value"}


def files_form(tmp_path, doc=None, name="out.json", inline_max=0):
    path = tmp_path / name
    pflref.save_result(path, doc or every_kind(), arrays="files",
                       inline_max=inline_max)
    return path


def rewrite(path, change):
    """Edit the JSON at path with change(doc)."""
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def no_manifest(doc):
    del doc["array_files"]


# ---- round trips ------------------------------------------------------------

@pytest.mark.parametrize("arrays", ["inline", "files"])
def test_every_array_kind_comes_back_bit_for_bit(tmp_path, arrays):
    want = every_kind()
    path = tmp_path / "out.json"
    written = pflref.save_result(path, want, arrays=arrays, inline_max=0)
    for mmap in (True, False):
        got = pflref.load_result(path, mmap=mmap)
        assert_same_arrays(got, want)
        assert got["final"]["v"].ndim == 2 and got["w0"].ndim == 1
        assert got["outcome"] == {"class": "ok"} and got["model"] == {"P": 5}
    text = json.loads(path.read_text())
    assert text == json.loads(json.dumps(written))
    if arrays == "inline":
        assert "array_files" not in text and not (tmp_path / "out.arrays").exists()
        assert text["final"]["w"][:2] == [2.385, -0.0]
        return
    # the files form: every field a reference, named as docs/python.md says
    for p in ARRAY_PATHS:
        assert get(text, p) == "out.arrays/%s.npy" % ".".join(p)
    assert text["trajectory_values"] == "out.arrays/trajectory.npy"
    assert [r["value"] for r in text["trajectory"]] == [
        {"offset": 5 * r, "count": 5} for r in range(9)]
    # the manifest: every file once, in the order the JSON first names it
    assert [e["path"] for e in text["array_files"]] == [
        "out.arrays/w0.npy", "out.arrays/theta0.npy",
        "out.arrays/hypernetwork.W.npy", "out.arrays/hypernetwork.b.npy",
        "out.arrays/hypernetwork.v.npy", "out.arrays/final.w.npy",
        "out.arrays/final.v.npy", "out.arrays/final.alpha.npy",
        "out.arrays/trajectory.npy"]
    assert list(text) == ["format", "id", "model", "problem", "w0", "theta0",
                          "hypernetwork", "final", "trajectory_values",
                          "trajectory", "outcome", "array_files"]
    assert sorted(os.listdir(tmp_path / "out.arrays")) == sorted(
        os.path.basename(e["path"]) for e in text["array_files"])


def test_each_file_is_what_np_save_writes_with_the_documented_header(tmp_path):
    want = every_kind()
    path = files_form(tmp_path, want)
    text = json.loads(path.read_text())
    for e in text["array_files"]:
        raw = (tmp_path / e["path"]).read_bytes()
        field = os.path.basename(e["path"])[:-len(".npy")]
        arr = np.concatenate([r["value"] for r in want["trajectory"]]) \
            if field == "trajectory" else get(want, field.split("."))
        buf = io.BytesIO()
        np.save(buf, arr)
        assert raw == buf.getvalue(), field
        # format 1.0; the dict padded with spaces to 64 bytes in all, '\n'
        hlen = int.from_bytes(raw[8:10], "little")
        header = raw[10:10 + hlen].decode("latin-1")
        assert raw[:8] == b"\x93NUMPY\x01\x00" and (10 + hlen) % 64 == 0
        shape = "(%d,)" % arr.shape if arr.ndim == 1 else "(%d, %d)" % arr.shape
        assert header.rstrip(" \n") == "{'descr': '<f8', 'fortran_order': " \
            "False, 'shape': %s, }" % shape
        assert header.endswith("\n") and len(raw) == e["bytes"]
        assert raw[10 + hlen:] == np.ascontiguousarray(arr, "<f8").tobytes()


def test_inline_max_decides_what_goes_to_a_file(tmp_path):
    doc = {"format": "pflref-result/1",
           "final": {"w": values(4, 1), "v": values(6, 2).reshape(2, 3)},
           "trajectory": [{"event": "note", "phase": "train", "name": "x",
                           "value": values(2, 3)},
                          {"event": "note", "phase": "train", "name": "e",
                           "value": []},
                          {"event": "note", "phase": "train", "name": "y",
                           "value": values(3, 4)}]}
    path = tmp_path / "r.json"
    # 4 numbers <= 4 stay inline, 6 > 4 go; the trajectory's 5 > 4 go
    out = pflref.save_result(path, doc, arrays="files", inline_max=4)
    assert isinstance(out["final"]["w"], list)
    assert out["final"]["v"] == "r.arrays/final.v.npy"
    assert [r["value"] for r in out["trajectory"]] == [
        {"offset": 0, "count": 2}, [], {"offset": 2, "count": 3}]
    assert_same_arrays(pflref.load_result(path), doc)
    # nothing over the limit: no folder, no manifest, no trajectory_values
    path2 = tmp_path / "s.json"
    out = pflref.save_result(path2, doc, arrays="files", inline_max=6)
    assert set(out) == {"format", "final", "trajectory"}
    assert not (tmp_path / "s.arrays").exists()
    assert_same_arrays(pflref.load_result(path2), doc)
    # the default limit, 256
    big = dict(doc, final={"w": values(256, 5), "v": values(257, 6)[None]})
    out = pflref.save_result(tmp_path / "t", big, arrays="files")
    assert isinstance(out["final"]["w"], list)
    assert out["final"]["v"] == "t.arrays/final.v.npy"     # STEM: t


def test_a_rerun_removes_the_files_it_no_longer_writes(tmp_path):
    """Saving again to the same path leaves no file of the earlier result
    that the new manifest does not list (as the C writer), keeps a file
    someone changed since, and removes the folder when the new result is
    inline."""
    path = files_form(tmp_path, name="r.json")
    folder = tmp_path / "r.arrays"
    before = sorted(p.name for p in folder.iterdir())
    assert "final.alpha.npy" in before and "theta0.npy" in before
    # fewer arrays: theta0, hypernetwork and alpha are no longer written
    doc = every_kind()
    for k in ("theta0", "hypernetwork"):
        del doc[k]
    del doc["final"]["alpha"]
    out = pflref.save_result(path, doc, arrays="files", inline_max=0)
    listed = sorted(os.path.basename(e["path"]) for e in out["array_files"])
    assert sorted(p.name for p in folder.iterdir()) == listed
    assert "theta0.npy" not in listed and "final.alpha.npy" not in listed
    assert_same_arrays(pflref.load_result(path), doc)
    # a file changed since it was written is not the earlier result's: kept
    (folder / "w0.npy").write_bytes(b"someone else's")
    pflref.save_result(path, doc, arrays="inline")
    assert sorted(p.name for p in folder.iterdir()) == ["w0.npy"]
    # nothing left of it: the inline save removes the folder too
    (folder / "w0.npy").unlink()
    path2 = files_form(tmp_path, name="r.json")
    pflref.save_result(path2, doc, arrays="inline")
    assert not folder.exists()


def test_inline_json_reads_into_numpy_arrays(tmp_path):
    path = tmp_path / "cand.json"
    path.write_text(json.dumps({
        "format": "pflref-result/1", "final": {"w": [1, 2.5], "v": [[1, 2],
                                                                     [3, 4]]},
        "trajectory": [{"event": "server", "phase": "train", "round": 0,
                        "name": "w", "value": [0.5, -0.0]}]}))
    doc = pflref.load_result(path)
    assert doc["final"]["w"].dtype == np.float64 and \
        doc["final"]["v"].shape == (2, 2)
    assert same_bits(doc["trajectory"][0]["value"], [0.5, -0.0])
    assert doc["final"]["w"].flags.writeable


# ---- memory-mapped, views, other file kinds ---------------------------------

def test_npy_files_are_memory_mapped_read_only(tmp_path):
    doc = pflref.load_result(files_form(tmp_path))
    for p in ARRAY_PATHS + [("trajectory_values",)]:
        arr = get(doc, p)
        assert isinstance(arr, np.memmap) or isinstance(arr.base, np.memmap)
        assert not arr.flags.writeable, p
    copied = pflref.load_result(tmp_path / "out.json", mmap=False)
    for p in ARRAY_PATHS:
        arr = get(copied, p)
        assert not isinstance(arr, np.memmap) and arr.flags.writeable


def test_ranged_records_are_views_of_trajectory_values(tmp_path):
    path = files_form(tmp_path)
    for mmap in (True, False):
        doc = pflref.load_result(path, mmap=mmap)
        whole = doc["trajectory_values"]
        for r, rec in enumerate(doc["trajectory"]):
            v = rec["value"]
            assert not v.flags.owndata and np.shares_memory(v, whole)
            assert v.__array_interface__["data"][0] == \
                whole.__array_interface__["data"][0] + 8 * 5 * r


def test_ranged_and_inline_values_mix(tmp_path):
    path = files_form(tmp_path)
    rewrite(path, lambda d: (no_manifest(d), d["trajectory"][1].update(
        value=[4.5, 2.385])))
    doc = pflref.load_result(path)
    assert same_bits(doc["trajectory"][1]["value"], [4.5, 2.385])
    assert np.shares_memory(doc["trajectory"][2]["value"],
                            doc["trajectory_values"])


def test_float32_files_are_widened_exactly(tmp_path):
    x32 = np.array([[0.1, 1 / 3], [-2.5e-8, 7.0]], dtype=np.float32)
    np.save(tmp_path / "v.npy", x32)
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": "pflref-result/1",
                                "final": {"v": "v.npy"}}))
    v = pflref.load_result(path)["final"]["v"]
    assert same_bits(v, x32.astype(np.float64))


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_npz_members_are_read_and_listed_once(tmp_path, save):
    every = every_kind()
    want = {"format": "pflref-result/1", "trajectory": every["trajectory"],
            "final": {"w": every["final"]["w"], "v": every["final"]["v"]}}
    save(tmp_path / "a.npz", w=want["final"]["w"], v=want["final"]["v"],
         t=np.concatenate([r["value"] for r in want["trajectory"]]))
    raw = (tmp_path / "a.npz").read_bytes()
    doc = {"format": "pflref-result/1",
           "final": {"w": "a.npz:w", "v": "a.npz:v.npy"},
           "trajectory_values": "a.npz:t",
           "trajectory": [dict(r, value={"offset": 5 * i, "count": 5})
                          for i, r in enumerate(want["trajectory"])],
           "array_files": [{"path": "a.npz", "bytes": len(raw),
                            "sha256": hashlib.sha256(raw).hexdigest()}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    assert_same_arrays(pflref.load_result(path), want)
    rewrite(path, lambda d: d["final"].update(w="a.npz:nope"))
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == "final.w" and \
        'a.npz:nope: the archive has no member "nope" (nor "nope.npy"; ' \
        'it has 3)' in str(e.value)


# ---- the manifest -----------------------------------------------------------

def test_a_changed_byte_fails_the_manifest_naming_field_and_file(tmp_path):
    path = files_form(tmp_path)
    npy = tmp_path / "out.arrays" / "final.v.npy"
    raw = bytearray(npy.read_bytes())
    raw[-3] ^= 0x01                          # one bit of one double
    npy.write_bytes(bytes(raw))
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == "array_files[6]"
    assert "out.arrays/final.v.npy (named by final.v): its SHA-256 is " in \
        e.value.message and "the manifest says" in e.value.message
    # verify=False reads it as it now is
    doc = pflref.load_result(path, verify=False)
    assert not same_bits(doc["final"]["v"], every_kind()["final"]["v"])


def test_a_resized_file_fails_the_manifest_on_its_size(tmp_path):
    path = files_form(tmp_path)
    with open(tmp_path / "out.arrays" / "w0.npy", "ab") as f:
        f.write(b"\0" * 8)
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == "array_files[0]" and \
        "out.arrays/w0.npy (named by w0) has 176 bytes, the manifest says " \
        "168" in e.value.message


@pytest.mark.parametrize("change, where, phrase", [
    (lambda d: d["array_files"].pop(1), "array_files",
     "out.arrays/theta0.npy (named by theta0) is not listed"),
    (lambda d: d["array_files"].append(dict(d["array_files"][0],
                                            path="out.arrays/x.npy")),
     "array_files[9]", "out.arrays/x.npy is listed but no array of the "
     "document names it"),
    (lambda d: d["array_files"].append(d["array_files"][0]),
     "array_files[9]", "out.arrays/w0.npy is listed twice (also "
     "array_files[0])"),
    (lambda d: d["array_files"][2].update(sha256="AB" * 32),
     "array_files[2].sha256", "64 lower-case hex digits"),
    (lambda d: d["array_files"][2].pop("bytes"), "array_files[2]",
     'an object of exactly "path", "sha256" and "bytes"'),
])
def test_a_manifest_that_does_not_match_the_references(tmp_path, change,
                                                       where, phrase):
    path = files_form(tmp_path)
    rewrite(path, change)
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == where and phrase in e.value.message
    pflref.load_result(path, verify=False)      # the arrays themselves read


def test_a_candidate_may_leave_the_manifest_out(tmp_path):
    path = files_form(tmp_path)
    rewrite(path, no_manifest)
    assert_same_arrays(pflref.load_result(path), every_kind())


# ---- bad files --------------------------------------------------------------

def npy_bytes(arr, header=None):
    buf = io.BytesIO()
    np.save(buf, arr)
    raw = buf.getvalue()
    if header is None:
        return raw
    head = header.encode("latin-1")
    head += b" " * (-(10 + len(head) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + \
        raw[int.from_bytes(raw[8:10], "little") + 10:]


V = every_kind()["final"]["v"]                       # 3 x 5


@pytest.mark.parametrize("content, phrase", [
    (None, "cannot open out.arrays/final.v.npy: No such file or directory"),
    (npy_bytes(np.arange(15, dtype="<i8").reshape(3, 5)),
     "out.arrays/final.v.npy: header field 'descr' is '<i8': result arrays "
     "are '<f8' (or '<f4', widened exactly)"),
    (npy_bytes(V.reshape(-1)), "out.arrays/final.v.npy: header field "
     "'shape' is (15,): final.v is a matrix, shape (rows, columns)"),
    (npy_bytes(V.reshape(5, 3)), "out.arrays/final.v.npy: header field "
     "'shape' is (5, 3): final.v is (N, P) with N = 3 (problem.N), P = 5 "
     "(model.P)"),
    (npy_bytes(np.asfortranarray(V)), "out.arrays/final.v.npy: header field "
     "'fortran_order' is True: pflref reads C (row-major) order only"),
    (npy_bytes(V)[:-9], "out.arrays/final.v.npy: truncated: header field "
     "'shape' promises 15 elements (120 bytes of data) but the file has 111 "
     "bytes of data"),
    (npy_bytes(V) + b"\0" * 8, "out.arrays/final.v.npy: the header lies: "
     "field 'shape' describes 120 bytes of data but 128 follow the header"),
    (b"NOTNUMPY" + bytes(200), "out.arrays/final.v.npy: not a .npy file "
     "(the magic \\x93NUMPY is missing)"),
    (npy_bytes(V, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), "
               "'order': 'C'}"),
     "out.arrays/final.v.npy: header field 'order' is unknown"),
    (npy_bytes(V, "{'descr': '<f8', 'fortran_order': False}"),
     "out.arrays/final.v.npy: header field 'shape' is missing"),
    (npy_bytes(V.astype(">f8")), "header field 'descr' is '>f8'"),
    ("folder", "out.arrays/final.v.npy is not a regular file (a folder); "
     "refused without reading it"),
    ("fifo", "out.arrays/final.v.npy is not a regular file (a FIFO (named "
     "pipe)); refused without reading it"),
])
def test_a_bad_file_is_refused_naming_field_and_file(tmp_path, content,
                                                     phrase):
    path = files_form(tmp_path)
    rewrite(path, no_manifest)
    npy = tmp_path / "out.arrays" / "final.v.npy"
    npy.unlink()
    if content == "folder":
        npy.mkdir()
    elif content == "fifo":
        os.mkfifo(npy)
    elif content is not None:
        npy.write_bytes(content)
    for mmap in (True, False):
        with pytest.raises(pflref.InvalidInput) as e:
            pflref.load_result(path, mmap=mmap)
        assert e.value.where == "final.v", e.value
        assert phrase in e.value.message, e.value.message
        assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("value, where, phrase", [
    ({"offset": 40, "count": 6}, "trajectory[2].value",
     "offset 40 + count 6 = 46 is beyond the 45 numbers of trajectory_values"),
    ({"offset": 0, "count": 0}, "trajectory[2].value",
     "offset 0, count 0: the offset is >= 0 and the count >= 1"),
    ({"offset": 0, "count": True}, "trajectory[2].value",
     'a ranged value is {"offset": o, "count": c} with integers o and c'),
    ("out.arrays/w0.npy", "trajectory[2].value",
     'an array of numbers, or {"offset", "count"} into trajectory_values'),
])
def test_a_bad_ranged_value_is_refused(tmp_path, value, where, phrase):
    path = files_form(tmp_path)
    rewrite(path, lambda d: d["trajectory"][2].update(value=value))
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == where and phrase in e.value.message


def test_a_ranged_value_needs_trajectory_values(tmp_path):
    path = files_form(tmp_path)

    def drop(d):
        del d["trajectory_values"]
        d["array_files"].pop()
    rewrite(path, drop)
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.load_result(path)
    assert e.value.where == "trajectory[0].value" and \
        "the document has no trajectory_values" in e.value.message


def test_a_bad_reference_and_a_bad_inline_array(tmp_path):
    path = tmp_path / "c.json"
    for final, where, phrase in [
            ({"v": "a.npz:"}, "final.v", '"a.npz:" is not a data file name'),
            ({"v": [[1, 2], [3]]}, "final.v", "an array of numbers (rows of "
             "numbers) or a file reference"),
            ({"w": [[1.0]]}, "final.w", "shape (1, 1): final.w is a vector"),
            ({"alpha": ["1"]}, "final.alpha", "an array of numbers")]:
        path.write_text(json.dumps({"format": "pflref-result/1",
                                    "final": final}))
        with pytest.raises(pflref.InvalidInput) as e:
            pflref.load_result(path)
        assert e.value.where == where and phrase in e.value.message


# ---- writing ----------------------------------------------------------------

def test_a_files_form_save_is_byte_for_byte_deterministic(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    files_form(a, name="r.json")
    first = {p: (a / p).read_bytes() for p in ["r.json"] + [
        "r.arrays/" + n for n in os.listdir(a / "r.arrays")]}
    files_form(a, name="r.json")                  # over itself
    files_form(b, name="r.json", doc=every_kind())  # elsewhere
    for p, raw in first.items():
        assert (a / p).read_bytes() == raw, p
        assert (b / p).read_bytes() == raw, p
    assert sorted(os.listdir(a / "r.arrays")) == sorted(
        os.listdir(b / "r.arrays"))


def test_saving_a_loaded_document_gives_the_same_bytes(tmp_path):
    path = files_form(tmp_path)
    first = path.read_bytes()
    doc = pflref.load_result(path)
    pflref.save_result(path, doc, arrays="files", inline_max=0)
    assert path.read_bytes() == first
    assert_same_arrays(pflref.load_result(path), every_kind())


def test_the_files_form_needs_a_file_target(tmp_path, capsys):
    doc = every_kind()
    with pytest.raises(ValueError, match=r"^arrays: .*standard output"):
        pflref.save_result("-", doc, arrays="files")
    with pytest.raises(ValueError, match=r"^arrays: .*file object"):
        pflref.save_result(io.StringIO(), doc, arrays="files")
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(pflref.Error) as e:
        pflref.save_result(fifo, doc, arrays="files", inline_max=0)
    assert e.value.kind == "io" and e.value.where == str(fifo) and \
        "not a regular file (a FIFO (named pipe))" in e.value.message
    assert os.listdir(tmp_path) == ["out.json"] and \
        stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # the inline form writes to standard output and to a file object
    out = pflref.save_result("-", doc)
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(out))
    buf = io.StringIO()
    pflref.save_result(buf, doc)
    assert json.loads(buf.getvalue()) == json.loads(json.dumps(out))


def test_a_failed_save_leaves_everything_as_it_was(tmp_path):
    path = files_form(tmp_path)
    before = {p: open(os.path.join(t, p), "rb").read()
              for t, _, fs in os.walk(tmp_path) for p in fs}
    listing = sorted(os.walk(tmp_path))
    bad = dict(every_kind(), meta={"not": {"json"}})     # a set: not JSON
    with pytest.raises(TypeError, match="set"):
        pflref.save_result(path, bad, arrays="files", inline_max=0)
    assert sorted(os.walk(tmp_path)) == listing           # no NAME.tmp.*
    assert before == {p: open(os.path.join(t, p), "rb").read()
                      for t, _, fs in os.walk(tmp_path) for p in fs}
    # a new target: no JSON, no folder
    with pytest.raises(TypeError):
        pflref.save_result(tmp_path / "new.json", bad, arrays="files",
                           inline_max=0)
    assert not (tmp_path / "new.json").exists() and \
        not (tmp_path / "new.arrays").exists()
    # the arrays folder's name taken by a file: refused, nothing written
    (tmp_path / "x.arrays").write_text("mine")
    with pytest.raises(pflref.Error, match="exists and is not a folder"):
        pflref.save_result(tmp_path / "x.json", every_kind(), arrays="files",
                           inline_max=0)
    assert not (tmp_path / "x.json").exists()


def test_a_link_is_followed_and_kept(tmp_path):
    (tmp_path / "real.json").write_text("{}")
    os.symlink("real.json", tmp_path / "link.json")
    pflref.save_result(tmp_path / "link.json", every_kind(), arrays="files",
                       inline_max=0)
    assert os.path.islink(tmp_path / "link.json")
    assert (tmp_path / "link.arrays").is_dir()     # beside the name given
    assert_same_arrays(pflref.load_result(tmp_path / "link.json"),
                       every_kind())


@pytest.mark.parametrize("change, error, phrase", [
    (lambda d: d["final"]["v"].__setitem__((1, 2), np.nan), ValueError,
     r"^final\.v\[1\]\[2\] is nan: a result holds finite numbers only"),
    (lambda d: d["final"].update(v=d["final"]["v"].reshape(-1)), ValueError,
     r"^final\.v: 1 dimension \(shape \(15,\)\): final\.v is a matrix"),
    (lambda d: d["final"].update(w="out.arrays/final.w.npy"), ValueError,
     r"^final\.w: a file reference"),
    (lambda d: d["trajectory"][0].update(value=[[1.0]]), ValueError,
     r"^trajectory\[0\]\.value: 2 dimensions"),
    (lambda d: d.update(format="pflref-golden/1"), ValueError, r"^doc: "),
])
def test_a_bad_array_is_refused_before_anything_is_written(tmp_path, change,
                                                           error, phrase):
    doc = every_kind()
    change(doc)
    for arrays in ("inline", "files"):
        with pytest.raises(error, match=phrase):
            pflref.save_result(tmp_path / "out.json", doc, arrays=arrays)
        assert os.listdir(tmp_path) == []


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="^arrays: 'npy'"):
        pflref.save_result("x.json", every_kind(), arrays="npy")
    with pytest.raises(ValueError, match="^inline_max: -1"):
        pflref.save_result("x.json", every_kind(), inline_max=-1)


def test_torch_tensors_are_saved_exactly(tmp_path):
    torch = optional.require("torch")
    w = torch.tensor([0.1, 1 / 3, -2.5e-8], dtype=torch.float32)
    doc = {"format": "pflref-result/1", "final": {"w": w}}
    pflref.save_result(tmp_path / "t.json", doc, arrays="files",
                       inline_max=0)
    got = pflref.load_result(tmp_path / "t.json")["final"]["w"]
    assert same_bits(got, w.double().numpy())


# ---- the Recorder and run ---------------------------------------------------

@pytest.mark.parametrize("arrays", ["inline", "files"])
def test_the_recorder_saves_either_form(tmp_path, arrays):
    v = pflref.Vector(SAMPLES)
    rec = numpy_candidate(v, pflref.Recorder(v))
    path = tmp_path / "cand.json"
    rec.save(path, arrays=arrays, inline_max=4)
    got, want = pflref.load_result(path), rec.result()
    assert_same_arrays(got, want)
    assert same_bits(got["final"]["w"], want["final"]["w"])
    assert (tmp_path / "cand.arrays").exists() == (arrays == "files")
    if arrays == "inline":
        assert json.loads(path.read_text()) == want
        assert pflref.check(v, str(path)).passed      # the C reader takes it


def test_the_recorders_default_is_inline(tmp_path):
    v = pflref.Vector(SAMPLES)
    rec = pflref.Recorder(v)
    rec.final("w", values(300, 1))
    rec.save(tmp_path / "c.json")
    assert os.listdir(tmp_path) == ["c.json"]


@pytest.mark.parametrize("vid", sorted(golden_files()))
def test_every_vectors_reference_result_round_trips(tmp_path, vid):
    path, _ = golden_files()[vid]
    try:
        res = pflref.run(path)
    except pflref.DivergenceError:
        pytest.skip("the vector expects a divergence")
    doc = res.doc
    for p in ARRAY_PATHS:
        try:
            assert same_bits(get(doc, p), get(res.raw, p)), p
        except KeyError:
            continue
    for arrays in ("inline", "files"):
        out = tmp_path / ("%s.json" % arrays)
        pflref.save_result(out, res, arrays=arrays, inline_max=0)
        assert_same_arrays(pflref.load_result(out), doc)
