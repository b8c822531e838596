# SPDX-License-Identifier: GPL-3.0-or-later
"""The third-party modules the project's Python code imports, each with the
Debian package that provides it and the deps.sh group that installs it;
`require`, the one way a test asks for an optional module; and the scan
that keeps a project folder from standing in for one of them.

Why the scan: a folder without __init__.py imports as an empty namespace
package.  A folder docs/examples/torch/ next to a script that docs/examples/
puts on sys.path made `import torch` succeed on a machine without PyTorch,
so a test meant to skip failed instead (module 'torch' has no attribute
'tensor').  `require` refuses such a stand-in, and `shadows` finds every
folder or file in the tree that could be one, before anyone meets it."""
import ast
import importlib
import importlib.util
import os
import re
import sys

import pytest

# module: (Debian package, the deps.sh group that installs it)
THIRD_PARTY = {
    "numpy": ("python3-numpy", "core"),
    "pytest": ("python3-pytest", "core"),
    "jsonschema": ("python3-jsonschema", "core"),
    "torch": ("python3-torch", "torch"),
    "markdown": ("python3-markdown", "site"),
    "websocket": ("python3-websocket", "site"),
    "setuptools": ("python3-setuptools", "core"),
    "pip": ("python3-pip", "core"),
}

# modules of a fetched checkout that no Debian package provides: name ->
# (the only folder whose files may import it, where it comes from).  Such a
# harness stays outside `make check` (it runs when its variable is set).
FETCHED = {
    "utils": ("tests/pfllib/", "TsingZ0/PFLlib's system/utils (PFLLIB_DIR)"),
    "flcore": ("tests/pfllib/", "TsingZ0/PFLlib's system/flcore (PFLLIB_DIR)"),
}

# folders of a checkout that hold no project source
SKIP_DIRS = {".git", "build", "__pycache__", ".pytest_cache"}


def _inside(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root + os.sep)


def require(name, registry=None, root=None):
    """The module NAME, imported, when it is really installed: skip the test
    (naming the Debian package and its deps.sh group) when it is not, and
    fail it when what imports under NAME is a namespace package or a file of
    this checkout rather than the package (a project folder shadows it)."""
    from conftest import ROOT
    package, group = (registry or THIRD_PARTY)[name]
    root = root or ROOT
    found = importlib.util.find_spec(name)
    if found is None:
        pytest.skip("%s is not installed (Debian package %s: ./deps.sh %s)"
                    % (name, package, group))
    places = list(found.submodule_search_locations or [])
    if found.origin in (None, "namespace") or (
            found.origin and _inside(found.origin, root)):
        pytest.fail("'import %s' finds %s, not the installed package %s: a "
                    "folder or file of the project shadows it; rename it"
                    % (name, ", ".join(places) or found.origin, package),
                    pytrace=False)
    return importlib.import_module(name)


def python_files(root):
    """Every .py file below ROOT, build output and VCS folders excluded."""
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(top, f)


def imported_names(path):
    """The top-level names of the absolute imports in the file at PATH,
    pytest.importorskip("x") and importlib.import_module("x") included."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("importorskip", "import_module")
              and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value.split(".")[0])
    return names


def project_modules(root, registry=None):
    """The names a file or package of the tree defines (x.py, x/__init__.py),
    less the registered third-party names (which no project file may take)."""
    registry = registry or THIRD_PARTY
    names = set()
    for path in python_files(root):
        base = os.path.basename(path)
        name = (os.path.basename(os.path.dirname(path))
                if base == "__init__.py" else base[:-3])
        if name not in registry:
            names.add(name)
    return names


def unregistered_imports(root, registry=None):
    """{name: [file, ...]} for every imported name that is neither in the
    standard library, nor the project's own, nor registered."""
    registry = registry or THIRD_PARTY
    own = project_modules(root, registry)
    out = {}
    for path in python_files(root):
        for name in imported_names(path):
            if (name in sys.stdlib_module_names or name in own
                    or name in registry or name == "__future__"):
                continue
            rel = os.path.relpath(path, root)
            if name in FETCHED and rel.startswith(FETCHED[name][0]):
                continue
            out.setdefault(name, []).append(os.path.relpath(path, root))
    return out


def script_dirs(root, extra=()):
    """The folders that can stand first on sys.path when the project's Python
    runs: every folder holding a .py file (a script's own folder is
    sys.path[0]) and the folders in EXTRA (those the tests insert)."""
    dirs = {os.path.dirname(p) for p in python_files(root)}
    dirs.update(d for d in extra if os.path.isdir(d) and _inside(d, root))
    return sorted(dirs)


def shadows(root, extra=(), registry=None):
    """[(path, module)]: each folder or file named after a registered module
    in a folder of script_dirs(ROOT, EXTRA); importing the module from that
    folder would find it instead of the package."""
    registry = registry or THIRD_PARTY
    found = []
    for d in script_dirs(root, extra):
        for name in sorted(registry):
            for cand in (os.path.join(d, name), os.path.join(d, name + ".py")):
                if os.path.exists(cand):
                    found.append((os.path.relpath(cand, root), name))
    return found


def deps_groups(path):
    """{group: set of Debian packages} from deps.sh's variable lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    groups = {}
    for m in re.finditer(r'^([A-Z]+)="([^"]*)"', text, re.M):
        groups[m.group(1).lower()] = set(m.group(2).split())
    return groups
