# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedrep.py: PFLlib's clientRep / FedRep against pflref's
fedalt with preset fedrep_pfllib (`make check-pfllib`; tests/pfllib/common.py
says how).

Problem: three clients (n = 9, 10, 11, three classes), an mlp 2 → 4 (ReLU:
PFLlib's model.base, shared) → 3 (model.head, personal), cross-entropy,
batches of 3 from PFLlib's shuffled loaders (drop_last: three batches on
every client, since pflref's τ_v is one number for all clients), -pls 1
head epoch then -ls 1 base epoch (the schedule's batches: the head pass,
then the base pass; τ_v = 3), η = 0.2 for both (γ_v = γ_u) with -ld (γ =
0.85, both schedulers), two of three clients per round (serverbase.py's
select_clients), four rounds.  Compared to 1e-12: the averaged base
(PFLlib's global_model; the shared blocks of pflref's final.w) and every
client's head (the personal blocks of final.v).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedrep", ["clients/clientrep.py", "servers/serverrep.py"])
from flcore.clients.clientrep import clientRep  # noqa: E402
from flcore.servers.serverrep import FedRep  # noqa: E402
H.patch_loaders()

sizes, B, ETA, GAMMA, R = [9, 10, 11], 3, 0.2, 0.85, 4
D, HID, K = 2, 4, 3
rng = random.Random(53)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "FedRep", local_learning_rate=ETA, num_classes=K, batch_size=B,
              plocal_epochs=1, learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientRep, args, sizes)
srv = H.server(FedRep, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "fedalt", "preset": "fedrep_pfllib",
       "hyperparameters": {"gamma_u": ETA, "gamma_v": ETA, "tau_v": 3, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("fedrep", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                                   "activation": "relu", "loss": "cross_entropy"},
                        raw, w0, alg, rounds))
nb = HID * D + HID                       # the base's entries (W1, b1)
pairs = [("base", common.flat(srv.global_model)[:nb], res["final"]["w"][:nb])]
pairs += [("head_%d" % c.id, common.flat(c.model)[nb:], res["final"]["v"][c.id][nb:])
          for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 9, 10, 11, mlp 2-4-3, -ld" % R))
