# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/moon_bn.py: PFLlib's clientMOON / MOON on a model with batch
normalisation in model.base against pflref's moon with preset pfllib
(moon.passes = train, bn.aggregate = parameters_only; `make check-pfllib`;
tests/pfllib/common.py says how).

Problem: three clients (n = 7, 5, 9, three classes), PFLlib's BaseHeadSplit
with base = Sequential(Linear(2, 4, bias=False), BatchNorm1d(4, eps=0.03,
momentum=0.2), Tanh, Linear(4, 3)) (R_w, the projection's output) and
head = Linear(3, 3), cross-entropy, batches of 2 from PFLlib's shuffled
loaders (drop_last), μ = 1.3, τ = 0.6, η = 0.2, two of three clients per
round, four rounds: rep_old and rep_global run in train() mode on the
batch's statistics (clientmoon.py:43-44), each client's model keeps its
running statistics (set_parameters copies parameters() only, :62-66).

Compared to 1e-12: the global model's parameters() (final.w without r_μ,
r_v: PFLlib's global buffers are those of receive_models's first random
upload, which no pflref schedule records) and every client's last local
model, buffers included (PFLlib's old_model, a deepcopy after train();
pflref's final.v).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("moon_bn", ["clients/clientmoon.py", "servers/servermoon.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientmoon import clientMOON  # noqa: E402
from flcore.servers.servermoon import MOON  # noqa: E402
H.patch_loaders()

sizes, ETA, MU, TAU, R = [7, 5, 9], 0.2, 1.3, 0.6, 4
D, HID, REP, K = 2, 4, 3, 3
rng = random.Random(29)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)


class BaseHeadSplit(nn.Module):
    """PFLlib's system/flcore/trainmodel/models.py BaseHeadSplit."""

    def __init__(self, base, head):
        super().__init__()
        self.base, self.head = base, head

    def forward(self, x):
        return self.head(self.base(x))


model = BaseHeadSplit(nn.Sequential(nn.Linear(D, HID, bias=False),
                                    nn.BatchNorm1d(HID, eps=0.03, momentum=0.2),
                                    nn.Tanh(), nn.Linear(HID, REP)),
                      nn.Linear(REP, K))


def state(m):
    """The state_dict without num_batches_tracked: pflref's layout."""
    return [float(v) for k, t in m.state_dict().items()
            if not k.endswith("num_batches_tracked")
            for v in t.reshape(-1).tolist()]


w0 = common.init_w(rng, HID * D) + [1.0, 0.75, 1.25, 0.875] + \
    [0.1, -0.2, 0.05, 0.15] + [0.05, -0.1, 0.2, 0.0] + [1.5, 0.5, 1.0, 2.0] + \
    common.init_w(rng, REP * HID + REP + K * REP + K)
with torch.no_grad():
    i = 0
    for k, t in model.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        t.copy_(torch.tensor(w0[i:i + t.numel()]).reshape(t.shape))
        i += t.numel()
buffers = set(range(HID * D + 2 * HID, HID * D + 4 * HID))

args = H.args(model, "MOON", local_learning_rate=ETA, mu=MU, tau=TAU,
              num_classes=K)
clients = H.clients(clientMOON, args, sizes)
srv = H.server(MOON, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "moon", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "moon.mu": MU, "moon.tau": TAU}}
layers = {"kind": "layers", "input": [D], "loss": "cross_entropy",
          "layers": [{"type": "dense", "out": HID, "bias": False},
                     {"type": "batchnorm1d", "eps": 0.03, "momentum": 0.2},
                     {"type": "tanh"}, {"type": "dense", "out": REP},
                     {"type": "dense", "out": K}]}
res = H.run(common.spec("moon_bn", layers, raw, w0, alg, rounds))
w = [x for p, x in enumerate(res["final"]["w"]) if p not in buffers]
pairs = [("w parameters()", common.flat(srv.global_model), w)]
pairs += [("v_%d" % c.id, state(c.old_model), res["final"]["v"][c.id])
          for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 5, 9, "
                  "Linear-BN-Tanh-Linear base, Linear head" % R))
