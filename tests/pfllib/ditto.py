# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/ditto.py: PFLlib's clientDitto / Ditto against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last; ptrain()
and train() each draw their own pass: the schedule's `personal` and
`batches`), λ = 0.55 (-mu), η = 0.12 with -ld (γ = 0.85, both schedulers
stepped in train()), one epoch each (-pls 1, -ls 1), two of three clients
per round (serverbase.py's select_clients), four rounds as Ditto.train()
runs them (ptrain then train per client).  Compared to 1e-12: the global
model (final.w) and every client's personal model_per (final.v).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("ditto", ["clients/clientditto.py", "servers/serverditto.py",
                             "optimizers/fedoptimizer.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientditto import clientDitto  # noqa: E402
from flcore.servers.serverditto import Ditto  # noqa: E402
H.patch_loaders()

sizes, ETA, LAM, GAMMA, R = [7, 4, 9], 0.12, 0.55, 0.85, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(41), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "Ditto", local_learning_rate=ETA, mu=LAM, plocal_epochs=1,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientDitto, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(Ditto, args, clients, 2)


def train(c):
    c.ptrain()
    personal = H.train_batches(c.id)
    c.train()
    return {"personal": personal}


rounds = common.drive(H, srv, R, train=train)
alg = {"name": "ditto", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "lambda": LAM, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("ditto", {"kind": "linear", "d": 2, "bias": True,
                                  "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
pairs += [("v_%d" % c.id, common.flat(c.model_per), res["final"]["v"][c.id]) for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, -ld" % R))
