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
    assert meta["project"]["dynamic"] == ["version"]   # setup.py's, from version.h
    import pflref
    with open(os.path.join(ROOT, "include", "pflref", "version.h")) as f:
        assert '#define PFLREF_VERSION "%s"' % pflref.__version__ in f.read()


def tree(path):
    """Every file and folder under path but bytecode caches, relative."""
    out = set()
    for d, dirs, files in os.walk(path):
        dirs[:] = [x for x in dirs if x not in ("__pycache__", ".pytest_cache")]
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(d, name), path))
    return out


def test_pip_install_into_a_virtual_environment(tmp_path):
    """docs/python.md, "Setup": `pip install --no-build-isolation ./python`
    into a venv made with --system-site-packages: the installed package,
    run from elsewhere with no PFLREF_LIB and no PYTHONPATH, knows its
    version, finds the checkout's library and vectors, and the checkout
    is left without build residue."""
    import pytest
    try:
        import pip  # noqa: F401  (Debian's python3-pip: ./deps.sh core)
    except ImportError:
        pytest.skip("pip is not installed (python3-pip, ./deps.sh core)")
    before = tree(PYTHON)
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip",
                    "--system-site-packages", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    e = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    for k in ("PFLREF_LIB", "PYTHONPATH", "PFLREF_CLI"):
        e.pop(k, None)
    out = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation",
                          "--no-deps", "-q", PYTHON], env=e, cwd=str(tmp_path),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert tree(PYTHON) == before, sorted(tree(PYTHON) ^ before)
    code = ("import pflref, os; print(os.path.dirname(pflref.__file__)); "
            "print(pflref.__version__); print(pflref.library_path()); "
            "print(len(list(pflref.vectors())))")
    out = subprocess.run([py, "-c", code], env=e, cwd=str(tmp_path),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    where, version, lib, n = out.stdout.split("\n")[:4]
    assert where.startswith(str(venv)), where        # the installed copy
    with open(os.path.join(ROOT, "include", "pflref", "version.h")) as f:
        assert '#define PFLREF_VERSION "%s"' % version in f.read()
    assert lib == LIB
    assert int(n) == sum(1 for _ in __import__("pflref").vectors())
