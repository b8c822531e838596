#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedSim golden vectors (Pillutla et al., ICML 2022, Alg. 5) and the
FedPer, LG-FedAvg and FedBABU presets: the fedsim half of
golden/fedalt/make_worked.py (which documents the examples), written into
this folder.

    /usr/bin/python3 golden/fedsim/make_worked.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fedalt"))

import make_worked as mw     # noqa: E402  (golden/fedalt/make_worked.py)

if __name__ == "__main__":
    mw.pg.write_all(sys.argv, HERE, mw.MAKERS["fedsim"])
