# SPDX-License-Identifier: GPL-3.0-or-later
"""Finding the C library: $PFLREF_LIB, then beside an install prefix, then
the checkout's build/rel, each in a fresh interpreter."""
import os
import shutil
import subprocess

from conftest import PYTHON, ROOT

LIB = os.path.join(ROOT, "build", "rel", "libpflref.so")
PROBE = ("import pflref, json; print(json.dumps([pflref.library_path(), "
         "pflref.run(%r).final['w'].tolist()]))"
         % os.path.join(ROOT, "golden", "fedavg", "worked-samples.json"))


def python(code, pythonpath, **env):
    e = dict(os.environ, PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1")
    e.pop("PFLREF_LIB", None)
    e.update(env)
    return subprocess.run(["/usr/bin/python3", "-c", code], env=e,
                          capture_output=True, text=True, cwd="/")


def test_the_checkout_finds_its_build():
    out = python(PROBE, PYTHON)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith('["%s"' % LIB)


def test_pflref_lib_wins_and_a_wrong_one_is_named(tmp_path):
    link = tmp_path / "libother.so"
    os.symlink(os.path.realpath(LIB), link)
    out = python(PROBE, PYTHON, PFLREF_LIB=str(link))
    assert out.returncode == 0 and out.stdout.startswith('["%s"' % link)
    out = python(PROBE, PYTHON, PFLREF_LIB=str(tmp_path / "missing.so"))
    assert out.returncode != 0
    assert "cannot find libpflref" in out.stderr
    assert "$PFLREF_LIB: %s (no such file)" % (tmp_path / "missing.so") \
        in out.stderr


def test_an_installed_package_uses_its_prefix(tmp_path):
    site = tmp_path / "lib" / "python3" / "dist-packages"
    shutil.copytree(os.path.join(PYTHON, "pflref"), site / "pflref",
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(os.path.realpath(LIB), tmp_path / "lib" / "libpflref.so.0")
    golden = tmp_path / "share" / "pflref" / "golden"
    shutil.copytree(os.path.join(ROOT, "golden", "ditto"), golden / "ditto")
    shutil.copy(os.path.join(ROOT, "golden", "flags.json"), golden)
    code = PROBE + "; print(sorted({v.algorithm for v in pflref.vectors()}))"
    out = python(code, str(site))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith('["%s"' % (tmp_path / "lib" / "libpflref.so.0"))
    assert lines[1] == "['ditto']"


def test_pyproject_reads_and_names_the_package():
    import tomllib
    with open(os.path.join(PYTHON, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["name"] == "pflref"
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == \
        {"attr": "pflref.__version__"}
    import pflref
    with open(os.path.join(ROOT, "include", "pflref", "version.h")) as f:
        assert '#define PFLREF_VERSION "%s"' % pflref.__version__ in f.read()
