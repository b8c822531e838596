# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedamp.py: PFLlib's clientAMP / FedAMP against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), η =
0.1 with -ld, γ = 0.8 (each client's ExponentialLR stepped after its own
train(), clientamp.py:50-51: the preset's lr.count = trainings, with
lr.schedule = exponential; NOLD=1 in the environment runs without -ld),
α_k = 0.4 (-alk), λ = 0.3, σ = 0.85, two of three clients per
round (serverbase.py's select_clients), five rounds as FedAMP.train() runs
them (send_models, train, receive_models; no aggregate).  Compared to
1e-12: every client's model w_i (final.v) and every u_i PFLlib's
send_models last wrote into client_u (pflref's last note u of that
client).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedamp", ["clients/clientamp.py", "servers/serveramp.py"])
import torch.nn as nn  # noqa: E402
from flcore.clients.clientamp import clientAMP  # noqa: E402
from flcore.servers.serveramp import FedAMP  # noqa: E402
H.patch_loaders()

sizes, ETA, ALPHA, LAM, SIGMA, GAMMA, R = [7, 4, 9], 0.1, 0.4, 0.3, 0.85, 0.8, 5
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(37), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
LD = not os.environ.get("NOLD")
args = H.args(model, "FedAMP", local_learning_rate=ETA, alphaK=ALPHA, lamda=LAM,
              sigma=SIGMA, learning_rate_decay=LD, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientAMP, args, sizes)
for c in clients:
    c.loss = common.half_sq
srv = H.server(FedAMP, args, clients, 2, alphaK=ALPHA, sigma=SIGMA)
rounds = common.drive(H, srv, R, after=lambda s: s.receive_models())
alg = {"name": "fedamp", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedamp.alpha_k": ALPHA, "fedamp.lambda": LAM,
                           "fedamp.sigma": SIGMA}}
if LD:
    alg["hyperparameters"]["lr.gamma"] = GAMMA
    alg["switches"] = {"lr.schedule": "exponential"}
res = H.run(common.spec("fedamp", {"kind": "linear", "d": 2, "bias": True,
                                   "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("w_%d" % c.id, common.flat(c.model), res["final"]["v"][c.id]) for c in clients]
for c in clients:
    u = common.last(res, "note", "u", c.id)
    if u is not None:
        pairs.append(("u_%d" % c.id, common.flat(c.client_u), u))
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, %s"
                  % (R, "-ld" if LD else "no -ld")))
