# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedproto_bn.py: PFLlib's clientProto / FedProto on a model
with batch normalisation in model.base against pflref's preset pfllib
(`make check-pfllib`; tests/pfllib/common.py says how): each step one
training pass (the batch's statistics, the running statistics moved once),
the prototypes the steps' training-pass features (clientproto.py:56,
client_protos = during_training).  Models compared with their running
statistics.

Problem: three clients (n = 7, 4, 9, three classes), PFLlib's BaseHeadSplit
with base = Sequential(Linear(2, 4, bias=False), BatchNorm1d(4, eps=0.03,
momentum=0.2), Tanh) (the representation) and head = Linear(4, 3),
cross-entropy
plus λ = 0.9 times the MSE to the global prototypes, batches of 2 from
PFLlib's shuffled loaders (drop_last), η = 0.3 with -ld (γ = 0.85), two of
three clients per round (serverbase.py's select_clients), four rounds, as
FedProto.train() runs them (no model is sent: select, train,
receive_protos, proto_aggregation, send_protos).  Compared to 1e-12: every
client's model (final.v), its last local prototypes (note C) and the global
prototypes after the last round (note C_bar; classes no upload holds are
absent in PFLlib and zero rows in pflref).  Exit 0 agree, 1 differ, 2
cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedproto_bn", ["clients/clientproto.py", "servers/serverproto.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import flcore.servers.serverproto as sp  # noqa: E402
from flcore.clients.clientproto import clientProto  # noqa: E402
H.patch_loaders()

sizes, ETA, LAM, GAMMA, R = [7, 4, 9], 0.3, 0.9, 0.85, 4
D, HID, K = 2, 4, 3
rng = random.Random(19)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)


class BaseHeadSplit(nn.Module):
    """PFLlib's system/flcore/trainmodel/models.py BaseHeadSplit."""

    def __init__(self, base, head):
        super().__init__()
        self.base, self.head = base, head

    def forward(self, x):
        return self.head(self.base(x))


def state(m):
    """The state_dict without num_batches_tracked: pflref's layout."""
    return [float(v) for k, t in m.state_dict().items()
            if not k.endswith("num_batches_tracked")
            for v in t.reshape(-1).tolist()]


model = BaseHeadSplit(nn.Sequential(nn.Linear(D, HID, bias=False),
                                    nn.BatchNorm1d(HID, eps=0.03, momentum=0.2),
                                    nn.Tanh()), nn.Linear(HID, K))
w0 = common.init_w(rng, HID * D) + [1.0, 0.75, 1.25, 0.875] + \
    [0.1, -0.2, 0.05, 0.15] + [0.05, -0.1, 0.2, 0.0] + [1.5, 0.5, 1.0, 2.0] + \
    common.init_w(rng, K * HID + K)
with torch.no_grad():
    i = 0
    for k, t in model.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        t.copy_(torch.tensor(w0[i:i + t.numel()]).reshape(t.shape))
        i += t.numel()
args = H.args(model, "FedProto", local_learning_rate=ETA, lamda=LAM, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientProto, args, sizes)
srv = H.server(sp.FedProto, args, clients, 2, num_classes=K,
               global_protos=[None] * K)


def after(s):
    s.receive_protos()
    s.global_protos = sp.proto_aggregation(s.uploaded_protos)
    s.send_protos()


rounds = common.drive(H, srv, R, before=lambda s: None, after=after)
alg = {"name": "fedproto", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedproto.lambda": LAM, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
layers = {"kind": "layers", "input": [D], "loss": "cross_entropy",
          "layers": [{"type": "dense", "out": HID, "bias": False},
                     {"type": "batchnorm1d", "eps": 0.03, "momentum": 0.2},
                     {"type": "tanh"}, {"type": "dense", "out": K}]}
res = H.run(common.spec("fedproto_bn", layers, raw, w0, alg, rounds))


def rows(protos):
    out = []
    for j in range(K):
        p = protos.get(j) if hasattr(protos, "get") else None
        out += p.tolist() if p is not None and not isinstance(p, list) else [0.0] * HID
    return out


pairs = [("v_%d" % c.id, state(c.model), res["final"]["v"][c.id]) for c in clients]
for c in clients:
    if c.protos is not None:
        pairs.append(("C_%d" % c.id, rows(c.protos), common.last(res, "note", "C", c.id)))
pairs.append(("C_bar", rows(srv.global_protos), common.last(res, "note", "C_bar")))
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, "
                  "Linear-BN-Tanh base, Linear head, -ld" % R))
