# SPDX-License-Identifier: GPL-3.0-or-later
"""Optional dependencies skip for the right reason everywhere (optional.py):
every third-party import is registered with its Debian package and deps.sh
group, no folder of the project can stand in for one, and `require` tells
a missing package from a shadowing folder."""
import os
import sys

import pytest

import optional
from conftest import ROOT


def test_every_third_party_import_is_registered():
    missing = optional.unregistered_imports(ROOT)
    assert not missing, (
        "imports of modules that optional.THIRD_PARTY does not name (add "
        "each with its Debian package and deps.sh group): %r" % missing)


def test_every_registered_package_is_installed_by_its_group():
    groups = optional.deps_groups(os.path.join(ROOT, "deps.sh"))
    for module, (package, group) in optional.THIRD_PARTY.items():
        assert group in groups, (module, group, sorted(groups))
        assert package in groups[group], (
            "%s comes from %s, which ./deps.sh %s does not install"
            % (module, package, group))


def test_no_project_folder_shadows_a_third_party_module():
    inserted = [p for p in sys.path if p and os.path.isabs(p)]
    assert optional.shadows(ROOT, extra=inserted) == []


def test_a_planted_shadow_is_caught(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "candidate.py").write_text("import numpy\n")
    (tmp_path / "examples" / "torch").mkdir()          # the bug as it was
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "websocket").mkdir()
    (tmp_path / "build" / "torch").mkdir(parents=True)  # build output: not scanned
    assert optional.shadows(str(tmp_path)) == [
        (os.path.join("examples", "torch"), "torch")]
    # a folder the tests insert on sys.path is scanned though it holds no .py
    assert optional.shadows(str(tmp_path), extra=[str(tmp_path / "data")]) == [
        (os.path.join("data", "websocket"), "websocket"),
        (os.path.join("examples", "torch"), "torch")]
    os.rmdir(tmp_path / "examples" / "torch")
    assert optional.shadows(str(tmp_path)) == []


def test_an_unregistered_import_is_caught(tmp_path):
    (tmp_path / "a.py").write_text(
        "import os, helper\nimport scipy.linalg\nfrom sympy import Rational\n"
        "import pytest\nmatplotlib = pytest.importorskip('matplotlib')\n")
    (tmp_path / "helper.py").write_text("from . import x\n")
    assert optional.unregistered_imports(str(tmp_path)) == {
        "scipy": ["a.py"], "sympy": ["a.py"], "matplotlib": ["a.py"]}


def test_require_fails_on_a_folder_standing_in_for_a_missing_module(
        tmp_path, monkeypatch):
    name = "pflref_absent_optional_module"
    registry = {name: ("python3-absent", "core")}
    with pytest.raises(pytest.skip.Exception, match="python3-absent"):
        optional.require(name, registry, root=str(tmp_path))
    (tmp_path / name).mkdir()                   # an empty folder: a namespace
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="shadows it"):
        optional.require(name, registry, root=str(tmp_path))
    # a real package inside the checkout is refused as well
    (tmp_path / name / "__init__.py").write_text("")
    sys.modules.pop(name, None)
    with pytest.raises(pytest.fail.Exception, match="shadows it"):
        optional.require(name, registry, root=str(tmp_path))


def test_require_returns_an_installed_module():
    np = optional.require("numpy")
    assert hasattr(np, "float64") and not optional._inside(np.__file__, ROOT)


def test_a_fetched_module_only_in_its_folder(tmp_path):
    """PFLlib's modules (optional.FETCHED) may be imported by the harness
    under tests/pfllib/ only; elsewhere they are unregistered."""
    (tmp_path / "tests" / "pfllib").mkdir(parents=True)
    (tmp_path / "tests" / "pfllib" / "h.py").write_text("import flcore\n")
    (tmp_path / "other.py").write_text("import flcore.servers\n")
    assert optional.unregistered_imports(str(tmp_path)) == {
        "flcore": ["other.py"]}
