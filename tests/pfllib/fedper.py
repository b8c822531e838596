# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedper.py: PFLlib's clientPer / FedPer against pflref's
fedsim with preset fedper_pfllib (`make check-pfllib`; tests/pfllib/common.py
says how).

Problem: three clients (n = 7, 4, 9, three classes), an mlp 2 → 4 (ReLU:
PFLlib's model.base, shared) → 3 (model.head, personal), cross-entropy,
batches of 2 from PFLlib's shuffled loaders (drop_last), joint steps with
η = 0.2 (γ_u = γ_v) and -ld (γ = 0.85), two of three clients per round
(serverbase.py's select_clients), four rounds.  Compared to 1e-12: the
averaged base (PFLlib's global_model; the shared blocks of pflref's final
models) and every client's head (the personal blocks of final.v).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedper", ["clients/clientper.py", "servers/serverper.py"])
from flcore.clients.clientper import clientPer  # noqa: E402
from flcore.servers.serverper import FedPer  # noqa: E402
H.patch_loaders()

sizes, ETA, GAMMA, R = [7, 4, 9], 0.2, 0.85, 4
D, HID, K = 2, 4, 3
rng = random.Random(43)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "FedPer", local_learning_rate=ETA, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientPer, args, sizes)
srv = H.server(FedPer, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "fedsim", "preset": "fedper_pfllib",
       "hyperparameters": {"gamma_u": ETA, "gamma_v": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("fedper", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                                   "activation": "relu", "loss": "cross_entropy"},
                        raw, w0, alg, rounds))
nb = HID * D + HID                       # the base's entries (W1, b1)
pairs = [("base", common.flat(srv.global_model), res["final"]["w"][:nb])]
pairs += [("head_%d" % c.id, common.flat(c.model)[nb:], res["final"]["v"][c.id][nb:])
          for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, mlp 2-4-3, -ld" % R))
