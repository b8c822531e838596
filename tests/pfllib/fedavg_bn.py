# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedavg_bn.py: PFLlib's clientAVG / FedAvg on a model with
batch normalisation against pflref's fedavg with preset pfllib, which sets
bn.aggregate = parameters_only (`make check-pfllib`; tests/pfllib/common.py
says how).

Problem: three clients (n = 9, 7, 11, three classes), nn.Sequential(
Linear(3, 4, bias=False), BatchNorm1d(4, eps=0.03, momentum=0.2), ReLU,
Linear(4, 3)) with PFLlib's CrossEntropyLoss, batches of 3 from PFLlib's
shuffled loaders (drop_last), one local epoch, η = 0.2, two of three
clients per round (serverbase.py's select_clients), five rounds, so a
client keeps its running statistics through rounds it sits out.

Compared to 1e-12:
  - the global model's parameters() (PFLlib's global_model; pflref's
    final.w without r_μ, r_v);
  - each client's own running statistics (its model's running_mean and
    running_var after its last train(); pflref: the buffers of its last
    w_local record), which PFLlib never sends (clientbase.py:67-69);
  - the global model's running statistics, PFLlib's deepcopy of
    uploaded_models[0] (serverbase.py:141), against pflref's final.w, whose
    buffers are the lowest-id participant's: reported with the upload
    order, since receive_models's random.sample order is not data of a
    pflref schedule (the check passes when that first uploader was the
    lowest id; otherwise the line says which client PFLlib took).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedavg_bn", ["clients/clientavg.py", "servers/serveravg.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientavg import clientAVG  # noqa: E402
from flcore.servers.serveravg import FedAvg  # noqa: E402
H.patch_loaders()

sizes, B, ETA, R = [9, 7, 11], 3, 0.2, 5
D, HID, K = 3, 4, 3
rng = random.Random(71)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
model = nn.Sequential(nn.Linear(D, HID, bias=False),
                      nn.BatchNorm1d(HID, eps=0.03, momentum=0.2), nn.ReLU(),
                      nn.Linear(HID, K))


def state(m):
    """The state_dict's values flattened, num_batches_tracked left out:
    pflref's layer-list vector (docs/models.md, Layout)."""
    return [float(v) for k, t in m.state_dict().items()
            if not k.endswith("num_batches_tracked")
            for v in t.reshape(-1).tolist()]


# w0: the weights from the harness's generator, γ near 1, r_v positive
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
buffers = set(range(HID * D + 2 * HID, HID * D + 4 * HID))   # 1.running_*

args = H.args(model, "FedAvg", local_learning_rate=ETA, num_classes=K, batch_size=B)
clients = H.clients(clientAVG, args, sizes)
srv = H.server(FedAvg, args, clients, 2)
firsts = []
rounds = common.drive(H, srv, R, after=lambda s: (s.receive_models(),
                                                  firsts.append(s.uploaded_ids[0]),
                                                  s.aggregate_parameters()))
alg = {"name": "fedavg", "preset": "pfllib", "hyperparameters": {"eta": ETA}}
layers = {"kind": "layers", "input": [D], "loss": "cross_entropy",
          "layers": [{"type": "dense", "out": HID, "bias": False},
                     {"type": "batchnorm1d", "eps": 0.03, "momentum": 0.2},
                     {"type": "relu"}, {"type": "dense", "out": K}]}
res = H.run(common.spec("fedavg_bn", layers, raw, w0, alg, rounds))
g = state(srv.global_model)
w = res["final"]["w"]
params = [p for p in range(len(w)) if p not in buffers]
pairs = [("parameters", [g[p] for p in params], [w[p] for p in params])]
for c in clients:
    own = common.last(res, "client_end", "w_local", client=c.id)
    if own is None:       # never trained: its model's are w0's
        own = w0
    mine = state(c.model)
    pairs.append(("client %d running statistics" % c.id,
                  [mine[p] for p in sorted(buffers)], [own[p] for p in sorted(buffers)]))
lowest = min(rounds[-1]["clients"])
what = ("%d rounds of 2 of 3 clients n = 9, 7, 11, Linear-BatchNorm1d-ReLU-Linear; "
        "PFLlib's first uploaders %s" % (R, firsts))
if firsts[-1] == lowest:
    pairs.append(("global running statistics", [g[p] for p in sorted(buffers)],
                  [w[p] for p in sorted(buffers)]))
else:
    what += ("; the last round's first uploader was client %d, not the lowest id "
             "%d: the global's running statistics are not compared" % (firsts[-1], lowest))
sys.exit(H.report(pairs, what=what))
