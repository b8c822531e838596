# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedfomo_bn.py: PFLlib's clientFomo / FedFomo on a model with
batch normalisation against pflref's fedfomo with the preset pfllib (which
sets bn.aggregate = parameters_only; `make check-pfllib`; tests/pfllib/
common.py says how).

Problem: three clients (n = 10, 20, 10: PFLlib's last int(0.2 n) samples,
2, 4, 2, are the validation split, whole batches of 2 so that its
drop_last under batch norm, clientfomo.py:71, drops nothing), the model
Sequential(Linear(2, 4, bias=False), BatchNorm1d(4, eps=0.03,
momentum=0.2), ReLU, Linear(4, 1)), ½(ŷ − y)², batches of 2 in order,
η = 0.3, M = 2, five rounds with partial participation, PFLlib's peers
chosen at run time (topk of P's row) and given to pflref as draws, as
tests/pfllib/fedfomo.py does for the linear model.  PFLlib measures
‖θ_n − φ_i‖ over parameters() (clientfomo.py:106-109), mixes parameters()
only into the client's model (:157-165), so each client's running
statistics stay its own; its validation passes run in train() mode.

Compared to 1e-12: every client's model, running statistics included
(pflref's final.v), and the chosen peers.  Exit 0 agree, 1 differ, 2
cannot run.
"""
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedfomo_bn", ["clients/clientfomo.py", "servers/serverfomo.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientfomo import clientFomo  # noqa: E402
from flcore.servers.serverfomo import FedFomo  # noqa: E402

rng = random.Random(11)
sizes = [10, 20, 10]
B, ETA, M, HID = 2, 0.3, 2, 4
rounds = [[0, 1, 2], [0, 2], [0, 1, 2], [1, 2], [0, 1]]
raw = common.regression(rng, sizes)
H.set_data(raw)

model = nn.Sequential(nn.Linear(2, HID, bias=False),
                      nn.BatchNorm1d(HID, eps=0.03, momentum=0.2),
                      nn.ReLU(), nn.Linear(HID, 1))


def state(m):
    """The state_dict without num_batches_tracked: pflref's layout."""
    return [float(v) for k, t in m.state_dict().items()
            if not k.endswith("num_batches_tracked")
            for v in t.reshape(-1).tolist()]


w0 = common.init_w(rng, 2 * HID) + [1.0, 0.75, 1.25, 0.875] + \
    [0.1, -0.2, 0.05, 0.15] + [0.05, -0.1, 0.2, 0.0] + [1.5, 0.5, 1.0, 2.0] + \
    common.init_w(rng, HID + 1)
with torch.no_grad():
    i = 0
    for k, t in model.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        t.copy_(torch.tensor(w0[i:i + t.numel()]).reshape(t.shape))
        i += t.numel()

args = H.args(model, "FedFomo", batch_size=B, local_learning_rate=ETA,
              num_clients=len(sizes))
clients = H.clients(clientFomo, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(FedFomo, args, clients, 3, P=torch.diag(torch.ones(len(sizes))), M=M,
               client_models=[copy.deepcopy(model) for _ in sizes])
chosen = []
for sel in rounds:
    srv.selected_clients = [clients[k] for k in sel]
    srv.current_num_join_clients = len(sel)
    srv.send_models()
    chosen.append([list(clients[k].received_ids) for k in sel])
    for k in sel:
        clients[k].train()
    srv.receive_models()
final = [state(c.model) for c in clients]

spec_clients = []
for (X, y) in raw:
    nv = int(0.2 * len(X)); nt = len(X) - nv
    spec_clients.append({"X": X[:nt], "y": y[:nt], "X_val": X[nt:], "y_val": y[nt:]})
sched, uploaded = [], 0
for sel in rounds:
    M_ = min(M, uploaded)
    r = {"clients": sel, "batches": [], "peer_draws": []}
    for k in sel:
        nt = len(spec_clients[k]["y"])
        r["batches"].append([[i, i + 1] for i in range(0, nt - nt % B, B)])
        r["peer_draws"].append({"order": [n for n in range(len(sizes)) if n != k],
                                "u": [0.0] * M_})
    sched.append(r); uploaded = len(sel)
alg = {"name": "fedfomo", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedfomo.val_batch": B}}
if len(sys.argv) > 2:        # a bn.aggregate value, to show what is detected
    alg["switches"] = {"bn.aggregate": sys.argv[2]}
layers = {"kind": "layers", "input": [2], "loss": "half_squared",
          "layers": [{"type": "dense", "out": HID, "bias": False},
                     {"type": "batchnorm1d", "eps": 0.03, "momentum": 0.2},
                     {"type": "relu"}, {"type": "dense", "out": 1}]}
spec = common.spec("fedfomo_bn", layers, raw, w0, alg, sched)
spec["problem"]["clients"] = spec_clients
res = H.run(spec)
peers = [r.get("peers") for r in res["schedule"]["rounds"]]
sys.exit(H.report([("v_%d" % k, final[k], res["final"]["v"][k]) for k in range(len(sizes))],
                  extra_ok=chosen == peers,
                  what="5 rounds, 3 clients n = 10, 20, 10, Linear-BN-ReLU-Linear; peers %s"
                  % ("equal" if chosen == peers else "DIFFER %s vs %s" % (chosen, peers))))
