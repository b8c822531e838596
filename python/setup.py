# SPDX-License-Identifier: GPL-3.0-or-later
"""Building the pflref package with pip from a checkout (docs/python.md,
"Setup"): `pip install --no-build-isolation ./python` into a virtual
environment (one made with --system-site-packages sees Debian's NumPy).

What pyproject.toml cannot say:
  * the version comes from its one home, include/pflref/version.h, read as
    text (the package is not imported: the library may not be built yet);
  * the installed package remembers the checkout it came from
    (pflref/_origin.py, written into the build only), so it finds that
    checkout's build/rel/libpflref.so and golden/ from anywhere;
  * setuptools' build and egg-info folders go to a temporary folder, so
    the checkout is left as it was.
"""
import os
import re
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)


def version():
    path = os.path.join(CHECKOUT, "include", "pflref", "version.h")
    with open(path) as f:
        m = re.search(r'#define PFLREF_VERSION "([^"]+)"', f.read())
    if m is None:
        raise SystemExit("setup.py: no PFLREF_VERSION in %s" % path)
    return m.group(1)


class BuildWithOrigin(build_py):
    """build_py, plus pflref/_origin.py naming the checkout and version."""

    def run(self):
        super().run()
        path = os.path.join(self.build_lib, "pflref", "_origin.py")
        with open(path, "w") as f:
            f.write("# SPDX-License-Identifier: GPL-3.0-or-later\n"
                    "# Written by python/setup.py when the package was built.\n"
                    "CHECKOUT = %r\nVERSION = %r\n" % (CHECKOUT, version()))


scratch = tempfile.mkdtemp(prefix="pflref-build-")
try:
    setup(version=version(), cmdclass={"build_py": BuildWithOrigin},
          options={"build": {"build_base": os.path.join(scratch, "build")},
                   "egg_info": {"egg_base": scratch}})
finally:
    shutil.rmtree(scratch, ignore_errors=True)
