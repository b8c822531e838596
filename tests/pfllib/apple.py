# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/apple.py: PFLlib's clientAPPLE / APPLE against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), η =
0.05 (PFLlib multiplies it by N, clientapple.py:18), η_p = 0.07 (-dlr),
μ = 0.3, L = 2 rounds (-L 0.5 of 4 global rounds), four rounds as
APPLE.train() runs them: every client trains every round, in ascending id
(serverapple.py:52-53; select_clients chooses only whom evaluate() sees).
No -ld: PFLlib's core step reads self.learning_rate (clientapple.py:55-56),
which its scheduler never changes.  Compared to 1e-12: every client's
core as the next round would download it (PFLlib's model_c, pflref's
final.v), its p_i (note p_i) and its last mixture (PFLlib's client.model,
pflref's note w_p).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("apple", ["clients/clientapple.py", "servers/serverapple.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientapple import clientAPPLE  # noqa: E402
from flcore.servers.serverapple import APPLE  # noqa: E402
H.patch_loaders()

sizes, ETA, ETA_P, MU, R = [7, 4, 9], 0.05, 0.07, 0.3, 4
L_FRAC = 0.5
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(29), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "APPLE", local_learning_rate=ETA, dr_learning_rate=ETA_P, mu=MU,
              L=L_FRAC, global_rounds=R)
clients = H.clients(clientAPPLE, args, sizes)
for c in clients:
    c.loss = common.half_sq
tot = sum(sizes)
for c in clients:
    c.p0 = [n / tot for n in sizes]
srv = H.server(APPLE, args, clients, 2, client_models=[c.model_c for c in clients])
rounds = []
import numpy as np  # noqa: E402
np.random.seed(3)
H.torch.manual_seed(3)
for i in range(R):
    H.select(srv)
    srv.send_models()
    got = []
    for c in clients:
        H.log.clear()
        c.train(i)
        got.append(H.train_batches(c.id))
    rounds.append({"clients": [c.id for c in clients], "batches": got})
alg = {"name": "apple", "preset": "pfllib_run",
       "hyperparameters": {"eta": ETA, "eta_p": ETA_P, "apple.mu": MU,
                           "apple.L": int(L_FRAC * R)}}
res = H.run(common.spec("apple", {"kind": "linear", "d": 2, "bias": True,
                                  "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = []
for c in clients:
    pairs.append(("core_%d" % c.id, common.flat(c.model_c), res["final"]["v"][c.id]))
    pairs.append(("p_%d" % c.id, list(c.ps), common.last(res, "note", "p_i", c.id)))
    pairs.append(("w_p_%d" % c.id, common.flat(c.model), common.last(res, "note", "w_p", c.id)))
sys.exit(H.report(pairs, what="%d rounds, every client, n = 7, 4, 9, linear" % R,
                  verbose=bool(os.environ.get("VERBOSE"))))
