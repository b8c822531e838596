# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/feddyn.py: PFLlib's clientDyn / FedDyn against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9), a linear model with a bias and
½(ŷ − y)², batches of 2 from PFLlib's shuffled loaders (drop_last), α =
0.45, η = 0.12 with -ld (γ = 0.85, each client's ExponentialLR stepped
after its train()), two of three clients per round (serverbase.py's
select_clients), five rounds, so that the clients' ∇L_k (old_grad) go stale.
Compared to 1e-12: the server model θ after the last round (final.w),
its state h (server_state; the last note h) and every trained client's
old_grad (∇L_k; its last note grad_L).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("feddyn", ["clients/clientdyn.py", "servers/serverdyn.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientdyn import clientDyn  # noqa: E402
from flcore.servers.serverdyn import FedDyn  # noqa: E402
H.patch_loaders()

sizes, ETA, ALPHA, GAMMA, R = [7, 4, 9], 0.12, 0.45, 0.85, 5
w0 = [0.25, -0.5, 0.125]
raw = common.regression(random.Random(5), sizes)
H.set_data(raw)
model = nn.Linear(2, 1)
common.set_flat(model, w0)
args = H.args(model, "FedDyn", local_learning_rate=ETA, alpha=ALPHA,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientDyn, args, sizes)
for c in clients:
    c.loss = common.half_sq
state = copy.deepcopy(model)
for p in state.parameters():
    p.data = torch.zeros_like(p.data)
srv = H.server(FedDyn, args, clients, 2, alpha=ALPHA, server_state=state)


def rounds_with_state(H, srv, R):
    orig = srv.aggregate_parameters

    def agg():
        srv.update_server_state()   # FedDyn.train(): before aggregate_parameters
        orig()
    srv.aggregate_parameters = agg
    return common.drive(H, srv, R)


rounds = rounds_with_state(H, srv, R)
alg = {"name": "feddyn", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "feddyn.alpha": ALPHA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("feddyn", {"kind": "linear", "d": 2, "bias": True,
                                   "loss": "half_squared"}, raw, w0, alg, rounds))
pairs = [("theta", common.flat(srv.global_model), res["final"]["w"]),
         ("h", common.flat(srv.server_state), common.last(res, "note", "h"))]
for c in clients:
    g = common.last(res, "note", "grad_L", c.id)
    if g is not None:
        pairs.append(("grad_L_%d" % c.id, c.old_grad.tolist(), g))
sys.exit(H.report(pairs,
                  what="%d rounds of 2 of 3 clients n = 7, 4, 9, linear, -ld" % R))
