# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/pfedme.py: PFLlib's clientpFedMe / pFedMe against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), K = 3
inner steps per batch, η = 0.1 (-lr: the local update), η_p = 0.09 (-plr:
pFedMeOptimizer's, with its mu = 0.001) decayed by -ld (γ = 0.8, the
scheduler on the personal optimizer only), λ = 1.5, β = 1.3, two of three
clients per round (serverbase.py's select_clients), four rounds as
pFedMe.train() runs them without its evaluation (the preset pfllib_run
adds evaluate_personalized's side effect).  Compared to 1e-12: the global
model after the β mix (final.w).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("pfedme", ["clients/clientpFedMe.py", "servers/serverpFedMe.py",
                              "optimizers/fedoptimizer.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientpFedMe import clientpFedMe  # noqa: E402
from flcore.servers.serverpFedMe import pFedMe  # noqa: E402
H.patch_loaders()

sizes, ETA, ETA_P, LAM, BETA, K, GAMMA, R = [7, 4, 9], 0.1, 0.09, 1.5, 1.3, 3, 0.8, 4
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(61), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "pFedMe", local_learning_rate=ETA, p_learning_rate=ETA_P, lamda=LAM,
              K=K, beta=BETA, learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientpFedMe, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(pFedMe, args, clients, 2, beta=BETA)


def after(s):
    s.previous_global_model = copy.deepcopy(list(s.global_model.parameters()))
    s.receive_models()
    s.aggregate_parameters()
    s.beta_aggregate_parameters()


rounds = common.drive(H, srv, R, after=after)
alg = {"name": "pfedme", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "eta_p": ETA_P, "lambda": LAM, "K": K, "beta": BETA,
                           "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("pfedme", {"kind": "linear", "d": 2, "bias": True,
                                   "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, K = 3, -ld"
                  % R))
