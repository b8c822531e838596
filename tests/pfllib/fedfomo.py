# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedfomo.py: PFLlib's own FedFomo classes against pflref's
preset pfllib (issue 33 §2), outside `make check`: `make check-pfllib`
runs it when PFLLIB_DIR names a checkout of TsingZ0/PFLlib (its system/
folder is read, never changed).

    PFLLIB_DIR=/path/to/PFLlib /usr/bin/python3 tests/pfllib/fedfomo.py \
        [PFLREF] [ANCHOR]

It copies system/flcore/{clients/clientbase.py, clients/clientfomo.py,
servers/serverbase.py, servers/serverfomo.py} into a temporary folder with
the stubs of tests/pfllib/common.py, then drives clientFomo.train() and
FedFomo.send_models / receive_models exactly as FedFomo.train() does
(evaluation left out: it has no side effect on FedFomo's models), in
float64 with torch SGD and PFLlib's -ld ExponentialLR, on three clients
(n = 10, 5, 15: PFLlib's last int(0.2 n) samples are the validation
split), a linear model with a bias and ½(ŷ − y)², batches of 2 in order
(clientfomo.py's loaders do not shuffle; drop_last), M = 2, five rounds
with partial participation.  The same run goes to `pflref run` as a spec
with the preset pfllib and PFLlib's peers chosen at run time (u lists of
length min(M, |uploads of the round before|)); the final models must agree
to 1e-12.  ANCHOR (a fedfomo.anchor value) overrides the preset's, to show
what the comparison detects (post_train: differences of order 0.1).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedfomo", ["clients/clientfomo.py", "servers/serverfomo.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientfomo import clientFomo  # noqa: E402
from flcore.servers.serverfomo import FedFomo  # noqa: E402

ANCHOR = sys.argv[2] if len(sys.argv) > 2 else None   # override for a check
rng = random.Random(7)
sizes = [10, 5, 15]
B, ETA, GAMMA, M = 2, 0.3, 0.75, 2
w0 = [0.25, -0.5, 0.125]
rounds = [[0, 1, 2], [0, 2], [0, 1, 2], [1, 2], [0, 1]]
raw = common.regression(rng, sizes)
H.set_data(raw)

model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "FedFomo", batch_size=B, local_learning_rate=ETA,
              learning_rate_decay_gamma=GAMMA, learning_rate_decay=True,
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
final = [common.flat(c.model) for c in clients]

# the same run as a pflref spec, preset pfllib: train = the first 80 %,
# validation = the last int(0.2 n) samples; PFLlib's sequential loaders
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
       "hyperparameters": {"eta": ETA, "fedfomo.val_batch": B, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
if ANCHOR:
    alg["switches"]["fedfomo.anchor"] = ANCHOR
spec = common.spec("fedfomo", {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"},
                   raw, w0, alg, sched)
spec["problem"]["clients"] = spec_clients
res = H.run(spec)
peers = [r.get("peers") for r in res["schedule"]["rounds"]]
sys.exit(H.report([("v_%d" % k, final[k], res["final"]["v"][k]) for k in range(len(sizes))],
                  extra_ok=chosen == peers,
                  what="5 rounds, 3 clients n = 10, 5, 15, linear, -ld; peers %s"
                  % ("equal" if chosen == peers else "DIFFER %s vs %s" % (chosen, peers))))
