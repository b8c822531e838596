#!/usr/bin/python3
"""run_vectors.py: run the PyTorch candidates on every golden vector of their
algorithms, in one process, for `pflref check GOLDEN OUTDIR`.

usage: run_vectors.py GOLDEN_DIR -o OUTDIR

Writes OUTDIR/<id with / as __>.json for each vector of fedavg, pfedme,
ditto, fedalt, feddyn, moon, fedprox, fedrecon, scaffold, fedamp, fedproto, fedrod, apple,
fedala, fedpac, lora, pfedhn, apfl, perfedavg, pflego, fedsim, cfl, ifca and
fedfomo; prints
`skipped ID: reason` for a vector a candidate does
not implement, and a count on stderr.  PFLREF_TORCH_BUG=ditto-alias switches
on Ditto's deliberate bug (ditto_torch.py); PFLREF_TORCH_DTYPE=float32 or
bfloat16 runs the candidates in that precision (torch_common.py), to be
checked with --candidate-precision fp32 or bf16.  Exit 2 on bad usage.
"""
import json
import os
import sys

import ditto_torch
import fedavg_torch
import fedfomo_torch
import feddyn_torch
import fedprox_torch
import fedproto_torch
import fedrecon_torch
import fedrep_torch
import moon_torch
import pfedme_torch
import scaffold_torch
import fedamp_torch
import fedrod_torch
import apple_torch
import cfl_torch
import fedala_torch
import fedpac_torch
import lora_torch
import pfedhn_torch
import apfl_torch
import perfedavg_torch
import pflego_torch
import fedsim_torch
import ifca_torch
from torch_common import Unsupported, write_json

CANDIDATES = {"fedavg": fedavg_torch.run, "pfedme": pfedme_torch.run,
              "ditto": ditto_torch.run, "fedalt": fedrep_torch.run,
              "feddyn": feddyn_torch.run, "moon": moon_torch.run,
              "fedprox": fedprox_torch.run, "fedrecon": fedrecon_torch.run,
              "scaffold": scaffold_torch.run,
              "fedamp": fedamp_torch.run,
              "fedproto": fedproto_torch.run,
              "fedrod": fedrod_torch.run,
              "apple": apple_torch.run,
              "fedala": fedala_torch.run,
              "fedpac": fedpac_torch.run,
              "lora": lora_torch.run,
              "pfedhn": pfedhn_torch.run,
              "apfl": apfl_torch.run,
              "perfedavg": perfedavg_torch.run,
              "pflego": pflego_torch.run,
              "fedsim": fedsim_torch.run,
              "cfl": cfl_torch.run,
              "ifca": ifca_torch.run,
              "fedfomo": fedfomo_torch.run}


def golden_vectors(root):
    """Every pflref-golden/1 file below root, in sorted order."""
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                try:
                    doc = json.load(f)
                except ValueError:
                    continue
            if isinstance(doc, dict) and doc.get("format") == "pflref-golden/1":
                yield doc


def main(argv):
    if len(argv) != 3 or argv[1] != "-o":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, out = argv[0], argv[2]
    os.makedirs(out, exist_ok=True)
    ran = skipped = 0
    for doc in golden_vectors(root):
        run = CANDIDATES.get(doc["spec"]["algorithm"]["name"])
        if run is None:
            continue
        try:
            result = run(doc)
        except Unsupported as e:
            print("skipped %s: %s" % (doc["id"], e))
            skipped += 1
            continue
        write_json(result, os.path.join(out, doc["id"].replace("/", "__")
                                        + ".json"))
        ran += 1
    print("run_vectors.py: %d vectors run, %d skipped, results in %s"
          % (ran, skipped, out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
# SPDX-License-Identifier: GPL-3.0-or-later
