# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedprox.py: PFLlib's clientProx / FedProx against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), two
local epochs, μ = 0.35, η = 0.15 with -ld (γ = 0.8, each client's
ExponentialLR), two of three clients per round (serverbase.py's
select_clients), four rounds.  Compared: the global model after the last
aggregation (pflref final.w) to 1e-12.  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedprox", ["clients/clientprox.py", "servers/serverprox.py",
                               "optimizers/fedoptimizer.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientprox import clientProx  # noqa: E402
from flcore.servers.serverprox import FedProx  # noqa: E402
H.patch_loaders()

sizes, ETA, MU, GAMMA, R = [7, 4, 9], 0.15, 0.35, 0.8, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(11), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "FedProx", local_learning_rate=ETA, local_epochs=2, mu=MU,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientProx, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(FedProx, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "fedprox", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedprox.mu": MU, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("fedprox", {"kind": "linear", "d": 2, "bias": True,
                                    "loss": "half_squared"}, raw, w0, alg, rounds))
sys.exit(H.report([("w", common.flat(srv.global_model), res["final"]["w"])],
                  what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, 2 epochs, -ld" % R))
