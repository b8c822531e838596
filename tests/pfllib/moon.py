# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/moon.py: PFLlib's clientMOON / MOON against pflref's preset
pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9, three classes), an mlp 2 → 4 (ReLU,
PFLlib's model.base) → 3 (model.head), cross-entropy, batches of 2 from
PFLlib's shuffled loaders (drop_last), μ = 1.3, τ = 0.6, η = 0.2 with -ld
(γ = 0.9), two of three clients per round (serverbase.py's
select_clients), four rounds, so that old_model (w_i^{t−1}) is stale for
clients that skip a round.  Compared to 1e-12: the global model (final.w)
and every client's last local model (final.v: PFLlib's old_model; its
client.model is overwritten by send_models every round).  Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("moon", ["clients/clientmoon.py", "servers/servermoon.py"])
from flcore.clients.clientmoon import clientMOON  # noqa: E402
from flcore.servers.servermoon import MOON  # noqa: E402
H.patch_loaders()

sizes, ETA, MU, TAU, GAMMA, R = [7, 4, 9], 0.2, 1.3, 0.6, 0.9, 4
D, HID, K = 2, 4, 3
rng = random.Random(17)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "MOON", local_learning_rate=ETA, mu=MU, tau=TAU, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientMOON, args, sizes)
srv = H.server(MOON, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "moon", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "moon.mu": MU, "moon.tau": TAU, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("moon", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                                 "activation": "relu", "loss": "cross_entropy"},
                        raw, w0, alg, rounds))
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
pairs += [("v_%d" % c.id, common.flat(c.old_model), res["final"]["v"][c.id]) for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, mlp 2-4-3, -ld" % R))
