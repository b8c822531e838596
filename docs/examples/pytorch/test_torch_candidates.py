"""The PyTorch candidates, checked against pflref's golden vectors in pytest.

    pytest -p pflref.pytest_plugin --pflref-algorithm fedavg \
        --pflref-algorithm pfedme --pflref-algorithm ditto \
        --pflref-algorithm fedalt --pflref-algorithm feddyn \
        --pflref-algorithm moon --pflref-algorithm fedprox \
        --pflref-algorithm fedrecon --pflref-algorithm scaffold \
        --pflref-algorithm fedamp \
        --pflref-algorithm fedproto \
        --pflref-algorithm fedrod \
        --pflref-algorithm apple \
        --pflref-algorithm fedproto --pflref-algorithm fedala \
        --pflref-algorithm fedpac --pflref-algorithm lora \
        --pflref-algorithm pfedhn \
        --pflref-algorithm apfl --pflref-algorithm perfedavg \
        --pflref-algorithm pflego \
        --pflref-algorithm fedsim --pflref-algorithm cfl \
        --pflref-algorithm ifca --pflref-algorithm fedfomo \
        docs/examples/pytorch/test_torch_candidates.py

One test per selected vector (the test id is the vector id); a vector with a
setting an example does not implement (torch_common.Unsupported, e.g. a
decay counted per client) is skipped with the reason, as run_vectors.py
skips it.  A failure
prints pflref's report: the first divergence (round, client, step,
quantity), the correct digits per quantity and the command that replays it.
PFLREF_TORCH_BUG=ditto-alias runs Ditto with its deliberate bug.

test_negative_control: for each optimizer and learning-rate setting the
candidates take, a vector that needs it passes, and fails once the
setting's effect is removed (torch_common.CONTROLS: the optimizer
recreated each round, clip_grad_norm_ not called, the scheduler not
stepped, ...; KEY=VALUE: a preset's switch set back in the spec), so the
setting is really exercised; and for FedSim, CFL, IFCA and FedFomo a
one-line break of the algorithm's own state (CONTROLS too:
fedsim-sequential, fedsim-one-lr, cfl-parent-update, ifca-cluster-divisor,
ifca-estimate-in-place, fedfomo-affinity-ratio, each named in its
candidate's docstring) fails its vectors; apple-clip-core (APPLE's clip
over the core's blocks alone, not p_i's) fails its clip vector.
"""
import json
import os

import pytest

import torch_common
from run_vectors import CANDIDATES      # algorithm name -> candidate's run
from torch_common import Unsupported


def test_candidate(pflref_vector, pflref_check):
    run = CANDIDATES.get(pflref_vector.algorithm)
    if run is None:
        pytest.skip("no PyTorch candidate for %s" % pflref_vector.algorithm)
    try:
        result = run(pflref_vector.raw)
    except Unsupported as e:     # a setting this example does not implement
        pytest.skip("the %s example: %s" % (pflref_vector.algorithm, e))
    pflref_check(result)


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "..", "..", "golden")

# (vector under golden/, the control that must make it fail)
NEGATIVE = [
    ("optim/fedavg-adam-server.json", "opt-state-reset"),
    ("optim/fedavg-adamw.json", "opt-state-reset"),
    ("optim/fedavg-clip.json", "opt-no-clip"),
    ("optim/fedavg-decay-coupled-weights.json", "opt-decay-all"),
    ("optim/fedavg-decay-decoupled.json", "opt-decay-coupled"),
    ("optim/fedavg-momentum-classical.json", "opt-torch-momentum"),
    ("optim/fedavg-momentum-classical.json", "lr-not-stepped"),
    ("optim/fedavg-momentum-pytorch.json", "opt-state-reset"),
    ("optim/fedavg-nesterov-reset.json", "opt-no-nesterov"),
    ("optim/ditto-momentum-client.json", "opt-state-reset"),
    ("optim/ditto-momentum-client.json", "opt-one-slot"),
    ("optim/ditto-classical-client-decay.json", "opt-torch-momentum"),
    ("optim/ditto-adamw-client-decay.json", "opt-state-reset"),
    ("optim/ditto-nesterov-clip-step-server.json", "opt-no-clip"),
    ("optim/ditto-nesterov-clip-step-server.json", "opt-decay-all"),
    ("optim/ditto-nesterov-clip-step-server.json", "opt-decay-coupled"),
    ("ditto/worked-linear-pfllib-decay.json", "lr-count-rounds"),
    ("ditto/worked-linear-pfllib-decay.json", "lr-not-stepped"),
    ("optim/fedalt-decay-shared-client.json", "opt-decay-all"),
    ("optim/fedalt-decay-shared-client.json", "opt-state-reset"),
    ("optim/fedalt-decay-personal-server.json", "opt-decay-coupled"),
    ("optim/fedalt-classical-client-decay.json", "opt-torch-momentum"),
    ("optim/fedalt-adamw-client-decay.json", "opt-one-slot"),
    ("optim/fedalt-nesterov-clip-step-server.json", "opt-no-clip"),
    ("fedprox/worked-momentum-client.json", "opt-state-reset"),
    ("scaffold/worked-linear-ii-momentum.json", "opt-no-momentum"),
    ("scaffold/worked-linear-ii-momentum.json", "lr-not-stepped"),
    ("feddyn/worked-linear-official.json", "opt-no-decay"),
    ("feddyn/worked-d1-pfllib-decay.json", "lr-count-rounds"),
    ("pfedme/worked-linear-pfllib-decay.json", "lr-count-rounds"),
    ("pfedme/worked-linear-pfllib-run.json", "lr-count-rounds"),
    ("pfedme/optim-momentum-decay-client.json", "opt-state-reset"),
    ("optim/fedrecon-adam-client.json", "opt-state-reset"),
    ("optim/fedrecon-momentum-decay.json", "opt-no-decay"),
    ("fedrod/layers-pfllib-lr-trainings.json", "lr-count-rounds"),
    ("optim/fedrod-sgd-weights-layers.json", "opt-decay-all"),
    # the split's scope for opt.decay_scope (split_test)
    ("optim/fedprox-adamw-shared-client-decay.json", "opt-decay-all"),
    ("optim/scaffold-classical-personal-client.json", "opt-decay-all"),
    ("optim/feddyn-adamw-shared-client-decay.json", "opt-decay-all"),
    ("optim/ditto-adam-personal-client-bn-biased.json", "opt-decay-all"),
    ("optim/fedavg-adam-personal-client-bn-biased.json", "opt-decay-all"),
    ("optim/fedavg-classical-shared-server-bn-frozen.json", "opt-decay-all"),
    # MOON's and FedPAC's client optimizers (ClientOptimizers; FedPAC's two
    # slots, the classifier's and the body's)
    ("moon/layers-official.json", "opt-no-momentum"),
    ("optim/moon-adam-decay.json", "opt-no-decay"),
    ("optim/moon-adamw-shared-client-trainings-bn-biased.json",
     "opt-state-reset"),
    ("optim/moon-adamw-shared-client-trainings-bn-biased.json",
     "opt-decay-all"),
    ("optim/moon-adamw-shared-client-trainings-bn-biased.json",
     "lr-count-rounds"),
    ("optim/moon-classical-personal-client.json", "opt-torch-momentum"),
    ("optim/moon-classical-personal-client.json", "opt-decay-all"),
    ("optim/moon-nesterov-clip-step-server-bn-frozen.json", "opt-no-clip"),
    ("optim/moon-nesterov-clip-step-server-bn-frozen.json",
     "opt-no-nesterov"),
    ("optim/moon-nesterov-clip-step-server-bn-frozen.json",
     "opt-decay-coupled"),
    ("optim/moon-nesterov-clip-step-server-bn-frozen.json",
     "lr-not-stepped"),
    ("optim/fedpac-nesterov-clip-step-server.json", "opt-no-clip"),
    ("optim/fedpac-nesterov-clip-step-server.json", "opt-no-nesterov"),
    ("optim/fedpac-nesterov-clip-step-server.json", "opt-decay-coupled"),
    ("optim/fedpac-nesterov-clip-step-server.json", "opt-decay-all"),
    ("optim/fedpac-nesterov-clip-step-server.json", "opt-state-reset"),
    ("fedpac/layers-momentum-client.json", "opt-state-reset"),
    ("fedpac/layers-pfllib-lr-trainings.json", "lr-count-rounds"),
    ("apple/worked-official-lr-exponential.json", "lr-not-stepped"),
    # a switch of the preset set back to the paper's value in the spec
    ("apple/worked-pfllib-run.json", "apple.upload=core"),
    ("apple/worked-pfllib-run.json", "apple.peers=snapshot"),
    ("apple/worked-pfllib-run-partial.json", "apple.upload=core"),
    ("fedavg/worked-generated-m.json", "sched-seed-once"),
    # LoRA's and pFedHN's own state (lora_torch.py, pfedhn_torch.py): a
    # one-line break of the method, then their optimizers, switches and
    # presets (KEY=VALUE: a switch set back in the spec)
    ("lora/worked-hand-ffa.json", "lora-ffa-trains-a"),
    ("lora/worked-mlp-fedavg.json", "lora-scale-alpha"),
    ("lora/worked-mlp-hetlora.json", "hetlora-no-truncate"),
    ("lora/worked-layers-mlp-sgd-server.json", "hetlora-state-kept"),
    ("lora/worked-layers-mlp-sgd-server.json", "opt-state-reset"),
    ("lora/worked-layers-mlp-sgd-server.json", "opt-no-nesterov"),
    ("lora/worked-layers-mlp-adam.json", "opt-state-reset"),
    ("optim/lora-adamw-clip-client.json", "opt-no-clip"),
    ("lora/worked-mlp-ffa-uniform.json", "lora.weights=samples"),
    ("lora/worked-mlp-hetlora-samples.json", "hetlora.weights=sparsity"),
    ("pfedhn/worked-linear-bias.json", "pfedhn-embed-frozen"),
    ("pfedhn/worked-linear-bias.json", "pfedhn-embed-alpha"),
    ("pfedhn/worked-linear-official.json", "pfedhn-outer-reset"),
    ("pfedhn/worked-linear-official.json", "pfedhn.clip=off"),
    ("pfedhn/worked-linear-official.json", "pfedhn.inner_opt=sgd"),
    ("pfedhn/worked-notes-6-4-official.json", "pfedhn.outer_opt=sgd"),
    ("optim/pfedhn-momentum-client.json", "opt-state-reset"),
    ("optim/pfedhn-adam-shared-client.json", "opt-decay-all"),
    ("optim/pfedhn-nesterov-clip-server.json", "opt-no-clip"),
    # APFL's, Per-FedAvg's and PFLEGO's own state (a one-line break in
    # apfl_torch.py, perfedavg_torch.py, pflego_torch.py) and their
    # optimizers (APFL's two slots, Per-FedAvg's meta step, PFLEGO's head)
    ("apfl/worked-linear-minibatch-adaptive.json", "apfl-alpha-no-clip"),
    ("apfl/worked-linear-pfllib.json", "apfl-pfllib-no-overwrite"),
    ("optim/apfl-adamw-client-decay.json", "opt-one-slot"),
    ("optim/apfl-momentum-server.json", "opt-state-reset"),
    ("optim/apfl-nesterov-clip-step-server.json", "opt-no-clip"),
    ("apfl/worked-linear-pfllib-decay.json", "lr-count-rounds"),
    ("perfedavg/worked-notes-4g-exact.json", "perfedavg-no-restore"),
    ("perfedavg/worked-mlp-identity-hf.json", "perfedavg-no-restore"),
    ("optim/perfedavg-nesterov-clip-step-server.json", "opt-no-clip"),
    ("optim/perfedavg-adamw-personal-client.json", "opt-decay-all"),
    ("perfedavg/worked-linear-pfllib-decay.json", "lr-count-rounds"),
    ("perfedavg/worked-linear-pfllib-momentum-reset.json", "opt-no-momentum"),
    ("pflego/worked-notes-b-seed.json", "pflego-no-ip-factor"),
    ("optim/pflego-adam-server.json", "pflego-no-ip-factor"),
    ("optim/pflego-classical-exponential-client.json", "opt-torch-momentum"),
    ("optim/pflego-nesterov-clip-step-server.json", "opt-no-clip"),
    ("pflego/worked-sgd-momentum-decay-client.json", "opt-state-reset"),
    # the algorithms' own state: one line of each broken
    ("fedsim/worked-notes-a-stateful.json", "fedsim-sequential"),
    ("fedsim/worked-notes-d-fedbabu.json", "fedsim-one-lr"),
    ("fedsim/worked-spread-stateful-samples-personal.json", "fedsim-one-lr"),
    ("optim/fedsim-adamw-client-decay.json", "fedsim-sequential"),
    ("optim/fedsim-nesterov-clip-step-server.json", "opt-no-clip"),
    ("optim/fedsim-decay-weights-groups.json", "opt-decay-all"),
    ("cfl/worked-seed003.json", "cfl-parent-update"),
    ("layers/cfl-mlp-dropout-split.json", "cfl-parent-update"),
    ("optim/cfl-nesterov-clip-server.json", "opt-no-clip"),
    ("optim/cfl-momentum-client.json", "opt-state-reset"),
    ("ifca/worked-notes-2.3-gradient.json", "ifca-cluster-divisor"),
    ("ifca/worked-spread-gradient.json", "ifca-cluster-divisor"),
    ("optim/ifca-momentum-client.json", "opt-state-reset"),
    ("layers/ifca-bn1d-mlp-model-given-models.json",
     "ifca-estimate-in-place"),
    ("optim/ifca-classical-shared-server-step-bn-biased.json",
     "opt-torch-momentum"),
    ("fedfomo/worked-draws.json", "fedfomo-affinity-ratio"),
    ("fedfomo/worked-hand.json", "fedfomo-affinity-ratio"),
    ("fedfomo/worked-draws-pfllib-run.json", "lr-count-rounds"),
    ("optim/fedfomo-momentum-client.json", "opt-state-reset"),
    ("optim/fedfomo-nesterov-clip-server-step.json", "opt-no-clip"),
    # FedProto's and APPLE's client optimizers (ClientOptimizers; APPLE's
    # one object over the core's blocks and ps, clipped as one vector)
    ("fedproto/layers-official.json", "opt-no-momentum"),
    ("optim/fedproto-adam-server.json", "opt-state-reset"),
    ("optim/fedproto-adamw-shared-client-bn-biased.json", "opt-decay-all"),
    ("optim/fedproto-adamw-shared-client-bn-biased.json", "opt-state-reset"),
    ("optim/fedproto-classical-personal-client.json", "opt-torch-momentum"),
    ("optim/fedproto-classical-personal-client.json", "opt-decay-all"),
    ("optim/fedproto-nesterov-clip-step-server-bn-frozen.json",
     "opt-no-clip"),
    ("optim/fedproto-nesterov-clip-step-server-bn-frozen.json",
     "opt-no-nesterov"),
    ("optim/fedproto-nesterov-clip-step-server-bn-frozen.json",
     "opt-decay-coupled"),
    ("optim/apple-nesterov-clip-step-server.json", "opt-no-clip"),
    ("optim/apple-nesterov-clip-step-server.json", "apple-clip-core"),
    ("optim/apple-nesterov-clip-step-server.json", "opt-decay-all"),
    ("optim/apple-nesterov-clip-step-server.json", "opt-decay-coupled"),
    ("optim/apple-nesterov-clip-step-server.json", "opt-state-reset"),
    ("optim/apple-classical-client-decay.json", "opt-torch-momentum"),
    ("optim/apple-classical-client-decay.json", "opt-state-reset"),
]


@pytest.mark.parametrize("path,control", NEGATIVE)
def test_negative_control(path, control, monkeypatch):
    if os.environ.get("PFLREF_TORCH_BUG"):
        pytest.skip("a deliberate bug is on")
    pflref = pytest.importorskip("pflref")
    path = os.path.join(GOLDEN, path)
    with open(path) as f:
        raw = json.load(f)
    run = CANDIDATES[raw["spec"]["algorithm"]["name"]]
    assert pflref.check(path, run(raw)).passed
    if "=" in control:          # KEY=VALUE: the spec's switch overridden
        key, value = control.split("=")
        alg = raw["spec"]["algorithm"]
        alg["switches"] = dict(alg.get("switches", {}), **{key: value})
    else:
        monkeypatch.setattr(torch_common, "CONTROLS", {control})
    report = pflref.check(path, run(raw))
    assert not report.passed, "%s: not caught without its effect" % control
# SPDX-License-Identifier: GPL-3.0-or-later
