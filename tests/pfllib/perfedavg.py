# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/perfedavg.py: PFLlib's clientPerAvg / PerAvg against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 9, 5, 12), a linear model with a bias and
½(ŷ − y)², PFLlib's shuffled loaders of 2B = 4 samples (drop_last), each
split into D (the first B) and D′ (the last B) of one first-order step
(pflref's third batch D″ is unread under perfedavg.variant = fo: given as
D), train() called twice per round (serverperavg.py:34-36), α = β = η =
0.1 with -ld (γ = 0.8, stepped after each train()), two of three clients
per round (serverbase.py's select_clients), four rounds.  Compared to
1e-12: the global model (final.w).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("perfedavg", ["clients/clientperavg.py", "servers/serverperavg.py",
                                 "optimizers/fedoptimizer.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientperavg import clientPerAvg  # noqa: E402
from flcore.servers.serverperavg import PerAvg  # noqa: E402
H.patch_loaders()

sizes, B, ETA, GAMMA, R = [9, 5, 12], 2, 0.1, 0.8, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(67), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "PerAvg", local_learning_rate=ETA, batch_size=B, beta=ETA,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientPerAvg, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(PerAvg, args, clients, 2)


def train(c):
    """Two train() calls; each 2B batch becomes D, D′ and D″ (= D)."""
    c.train()
    c.train()
    out = []
    for b in H.train_batches(c.id):
        out += [b[:B], b[B:], b[:B]]
    return {"batches": out}


rounds = common.drive(H, srv, R, train=train)   # its "batches" replace the 2B ones
alg = {"name": "perfedavg", "preset": "pfllib",
       "hyperparameters": {"alpha": ETA, "beta": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
spec = common.spec("perfedavg", {"kind": "linear", "d": 2, "bias": True,
                                 "loss": "half_squared"}, raw, w0, alg, rounds)
# pflref's personalised models after training (train_one_step, which only
# PFLlib's evaluation calls; not compared): one batch per client
spec["schedule"]["post"] = [[list(range(B))] for _ in sizes]
res = H.run(spec)
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 9, 5, 12, linear, "
                  "two train() calls, -ld" % R))
