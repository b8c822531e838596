# SPDX-License-Identifier: GPL-3.0-or-later
"""The package's tests run against this checkout: python/ on the path, the
library from build/rel (make build/rel/libpflref.so), replay files in a
temporary folder."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(HERE)
ROOT = os.path.dirname(PYTHON)
EXAMPLES = os.path.join(ROOT, "docs", "examples")
GOLDEN = os.path.join(ROOT, "golden")
sys.path.insert(0, PYTHON)
sys.dont_write_bytecode = True


@pytest.fixture(autouse=True)
def _replay_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PFLREF_REPLAY_DIR", str(tmp_path / "replay"))
