"""The PyTorch candidates, checked against pflref's golden vectors in pytest.

    pytest -p pflref.pytest_plugin --pflref-algorithm fedavg \
        --pflref-algorithm pfedme --pflref-algorithm ditto \
        --pflref-algorithm fedalt docs/examples/torch/test_torch_candidates.py

One test per selected vector (the test id is the vector id).  A failure
prints pflref's report: the first divergence (round, client, step,
quantity), the correct digits per quantity and the command that replays it.
PFLREF_TORCH_BUG=ditto-alias runs Ditto with its deliberate bug.
"""
import pytest

import ditto_torch
import fedavg_torch
import fedrep_torch
import pfedme_torch

CANDIDATES = {
    "fedavg": fedavg_torch.run,
    "pfedme": pfedme_torch.run,
    "ditto": ditto_torch.run,
    "fedalt": fedrep_torch.run,      # FedRep is FedAlt's preset fedrep
}


def test_candidate(pflref_vector, pflref_check):
    run = CANDIDATES.get(pflref_vector.algorithm)
    if run is None:
        pytest.skip("no PyTorch candidate for %s" % pflref_vector.algorithm)
    pflref_check(run(pflref_vector.raw))
# SPDX-License-Identifier: GPL-3.0-or-later
