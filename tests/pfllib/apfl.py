# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/apfl.py: PFLlib's clientAPFL / APFL against pflref's preset
pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), η =
0.1 with -ld (γ = 0.8, both schedulers), α⁰ = 0.6 (-al; its step reads the
undecayed η), two of three clients per round (serverbase.py's
select_clients), four rounds.  Compared to 1e-12: the global model
(final.w), every client's mixed personal model model_per (final.v) and
every client's α (final.alpha).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("apfl", ["clients/clientapfl.py", "servers/serverapfl.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientapfl import clientAPFL  # noqa: E402
from flcore.servers.serverapfl import APFL  # noqa: E402
H.patch_loaders()

sizes, ETA, ALPHA, GAMMA, R = [7, 4, 9], 0.1, 0.6, 0.8, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(59), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "APFL", local_learning_rate=ETA, alpha=ALPHA,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientAPFL, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(APFL, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "apfl", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "alpha": ALPHA, "eta_alpha": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("apfl", {"kind": "linear", "d": 2, "bias": True,
                                 "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
pairs += [("v_%d" % c.id, common.flat(c.model_per), res["final"]["v"][c.id]) for c in clients]
pairs.append(("alpha", [float(c.alpha) for c in clients], res["final"]["alpha"]))
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, -ld" % R))
