# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/lgfedavg.py: PFLlib's clientLG / LG_FedAvg against pflref's
fedsim with preset lg_fedavg_pfllib (`make check-pfllib`; tests/pfllib/common.py
says how).

Problem: three clients (n = 7, 4, 9, three classes), an mlp 2 → 4 (ReLU:
PFLlib's model.base, personal) → 3 (model.head, shared), cross-entropy,
batches of 2 from PFLlib's shuffled loaders (drop_last), joint steps with
η = 0.2 (γ_u = γ_v) and -ld (γ = 0.85), two of three clients per round
(serverbase.py's select_clients), four rounds.  Compared to 1e-12: the
averaged head (PFLlib's global_model; the shared blocks of pflref's final
models) and every client's base (the personal blocks of final.v).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("lgfedavg", ["clients/clientlg.py", "servers/serverlg.py"])
from flcore.clients.clientlg import clientLG  # noqa: E402
from flcore.servers.serverlg import LG_FedAvg  # noqa: E402
H.patch_loaders()

sizes, ETA, GAMMA, R = [7, 4, 9], 0.2, 0.85, 4
D, HID, K = 2, 4, 3
rng = random.Random(47)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "LG-FedAvg", local_learning_rate=ETA, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientLG, args, sizes)
srv = H.server(LG_FedAvg, args, clients, 2,
               global_model=copy.deepcopy(model.head))   # serverlg.py:13
rounds = common.drive(H, srv, R)
alg = {"name": "fedsim", "preset": "lg_fedavg_pfllib",
       "hyperparameters": {"gamma_u": ETA, "gamma_v": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("lgfedavg", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                                   "activation": "relu", "loss": "cross_entropy"},
                        raw, w0, alg, rounds))
nb = HID * D + HID                       # the base's entries (W1, b1)
pairs = [("head", common.flat(srv.global_model), res["final"]["w"][nb:])]
pairs += [("base_%d" % c.id, common.flat(c.model)[:nb], res["final"]["v"][c.id][:nb])
          for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, mlp 2-4-3, -ld" % R))
