# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/scaffold.py: PFLlib's clientSCAFFOLD / SCAFFOLD against
pflref's preset pfllib (`make check-pfllib`; tests/pfllib/common.py says
how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), two
local epochs (K = num_batches · epochs), η_l = 0.15 with -ld (γ = 0.8),
η_g = 1.25 (-slr), two of three clients per round (serverbase.py's
select_clients), four rounds.  Compared to 1e-12: the global model x
(final.w), the server's c and every trained client's c_i (the last
`server` c and `client_end` c_i records).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("scaffold", ["clients/clientscaffold.py", "servers/serverscaffold.py",
                                "optimizers/fedoptimizer.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientscaffold import clientSCAFFOLD  # noqa: E402
from flcore.servers.serverscaffold import SCAFFOLD  # noqa: E402
H.patch_loaders()

sizes, ETA, ETA_G, GAMMA, R = [7, 4, 9], 0.15, 1.25, 0.8, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(13), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "SCAFFOLD", local_learning_rate=ETA, local_epochs=2,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientSCAFFOLD, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(SCAFFOLD, args, clients, 2, server_learning_rate=ETA_G,
               global_c=[torch.zeros_like(p) for p in model.parameters()])
rounds = common.drive(H, srv, R)
alg = {"name": "scaffold", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "scaffold.eta_g": ETA_G, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("scaffold", {"kind": "linear", "d": 2, "bias": True,
                                     "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("x", common.flat(srv.global_model), res["final"]["w"]),
         ("c", [v for t in srv.global_c for v in t.reshape(-1).tolist()],
          common.last(res, "server", "c"))]
for c in clients:
    if common.last(res, "client_end", "c_i", c.id) is not None:
        pairs.append(("c_%d" % c.id, [v for t in c.client_c for v in t.reshape(-1).tolist()],
                      common.last(res, "client_end", "c_i", c.id)))
sys.exit(H.report(pairs,
                  what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, 2 epochs, -ld" % R))
