# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/outfile.py, the one writer of the project's scripts (the site's
pages, the bench's tables and figure), held to the rules of pflref's own
writer (ref/io/write.c; docs/bad-inputs.md W1-W8): a new file and a
replaced one, the permissions of a new file; a FIFO, a folder, a dangling
link, a read-only file and a missing folder refused by name and left as
they were (same kind and inode); a link to a regular file followed and
kept; a step that fails midway leaving the old file and no NAME.tmp.*; an
entry that appears at the target, or replaces it, while the content is
written left alone.  Every entry is made in the test's own folder."""
import importlib.util
import os
import stat

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location(
    "pflref_outfile", os.path.join(ROOT, "tools", "outfile.py"))
outfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outfile)


def snapshot(folder):
    """Every entry below folder, links not followed: name, kind, inode,
    link target, a regular file's bytes."""
    out = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(top, name)
            st = os.lstat(p)
            out.append((os.path.relpath(p, folder), stat.S_IFMT(st.st_mode),
                        st.st_ino,
                        os.readlink(p) if stat.S_ISLNK(st.st_mode) else None,
                        open(p, "rb").read() if stat.S_ISREG(st.st_mode)
                        else None))
    return out


def test_new_and_replaced_files_get_their_bytes_and_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        path = tmp_path / "table.md"
        outfile.write(path, "| α | 2.385 |\n")
        assert path.read_text(encoding="utf-8") == "| α | 2.385 |\n"
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
        first = path.stat().st_ino
        outfile.write(path, b"\x89PNG\0\r\n")
        assert path.read_bytes() == b"\x89PNG\0\r\n"
        assert path.stat().st_ino != first          # renamed over, not rewritten
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
        assert os.listdir(tmp_path) == ["table.md"]
    finally:
        os.umask(old)


@pytest.mark.parametrize("kind, phrase", [
    ("fifo", "exists and is not a regular file (a FIFO (named pipe))"),
    ("folder", "exists and is not a regular file (a folder)"),
    ("dangling", "is a symbolic link to gone.json, which does not exist"),
    ("link-to-fifo", "which is not a regular file (a FIFO (named pipe))"),
    ("read-only", "the file is read-only (mode 0444)"),
    ("missing-folder", "No such file or directory"),
])
def test_what_is_not_a_regular_file_is_refused_and_left_alone(
        tmp_path, kind, phrase):
    target = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "dangling":
        target.symlink_to("gone.json")
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "f")
        target.symlink_to("f")
    elif kind == "read-only":
        target.write_text("kept\n")
        target.chmod(0o444)
    else:
        target = tmp_path / "no" / "out.json"
    before = snapshot(tmp_path)
    with pytest.raises(outfile.OutputError) as e:
        outfile.write(target, "written\n")
    assert e.value.filename == str(target)
    assert str(target) in str(e.value) and phrase in str(e.value)
    assert snapshot(tmp_path) == before


def test_a_link_to_a_regular_file_is_followed_and_kept(tmp_path):
    (tmp_path / "sub").mkdir()
    real = tmp_path / "sub" / "t.svg"
    real.write_text("old\n")
    (tmp_path / "l1.svg").symlink_to("sub/t.svg")
    (tmp_path / "l2.svg").symlink_to("l1.svg")
    outfile.write(tmp_path / "l2.svg", "<svg/>\n")
    assert real.read_text() == "<svg/>\n"
    assert os.readlink(tmp_path / "l1.svg") == "sub/t.svg"
    assert os.readlink(tmp_path / "l2.svg") == "l1.svg"
    assert sorted(os.listdir(tmp_path / "sub")) == ["t.svg"]


def test_a_step_that_fails_midway_leaves_nothing(tmp_path):
    old, absent = tmp_path / "old.json", tmp_path / "absent.json"
    old.write_text("the previous table\n")
    ino = old.stat().st_ino

    def step(fd):
        os.write(fd, b"{\"half\": ")
        raise RuntimeError("gnuplot failed after 9 bytes")

    for target in (old, absent):
        with pytest.raises(RuntimeError, match="after 9 bytes"):
            outfile.write_with(target, step)
    assert old.read_text() == "the previous table\n"
    assert old.stat().st_ino == ino
    assert os.listdir(tmp_path) == ["old.json"]


def test_write_with_takes_a_childs_output(tmp_path):
    import subprocess
    path = tmp_path / "fig.svg"
    outfile.write_with(path, lambda fd: subprocess.run(
        ["printf", "<svg>%s</svg>", "2.385"], stdout=fd, check=True))
    assert path.read_text() == "<svg>2.385</svg>"


@pytest.mark.parametrize("race, existing, phrase", [
    ("fifo-appears", False, "appeared while it was written"),
    ("file-appears", False, "appeared while it was written"),
    ("fifo-replaces", True, "replaced by an entry that is not a regular file"),
    ("file-replaces", True, "was replaced by another file"),
    ("removed", True, None),
])
def test_a_target_that_changes_while_written_is_left_alone(
        tmp_path, race, existing, phrase):
    path = tmp_path / "r.json"
    if existing:
        path.write_text("the previous result\n")

    def step(fd):
        os.write(fd, b"[2.385]\n")
        if race == "fifo-appears":
            os.mkfifo(path)
        elif race == "file-appears":
            path.write_text("theirs\n")
        elif race == "fifo-replaces":
            path.unlink()
            os.mkfifo(path)
        elif race == "file-replaces":
            (tmp_path / "other").write_text("theirs\n")
            os.replace(tmp_path / "other", path)
        else:
            path.unlink()

    if phrase is None:
        outfile.write_with(path, step)
        assert path.read_text() == "[2.385]\n"
    else:
        with pytest.raises(outfile.OutputError, match=phrase):
            outfile.write_with(path, step)
        if "fifo" in race:
            assert stat.S_ISFIFO(os.lstat(path).st_mode)
        else:
            assert path.read_text() == "theirs\n"
    assert os.listdir(tmp_path) == ["r.json"]


def test_copy_writes_a_files_bytes(tmp_path):
    src = tmp_path / "a.json"
    src.write_bytes(b"{\"w\": [1.5]}")
    outfile.copy(src, tmp_path / "b.json")
    assert (tmp_path / "b.json").read_bytes() == b"{\"w\": [1.5]}"
