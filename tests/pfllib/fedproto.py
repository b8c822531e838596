# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedproto.py: PFLlib's clientProto / FedProto against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9, three classes), an mlp 2 → 4 (ReLU,
PFLlib's model.base: the representation) → 3 (model.head), cross-entropy
plus λ = 0.9 times the MSE to the global prototypes, batches of 2 from
PFLlib's shuffled loaders (drop_last), η = 0.3 with -ld (γ = 0.85), two of
three clients per round (serverbase.py's select_clients), four rounds, as
FedProto.train() runs them (no model is sent: select, train,
receive_protos, proto_aggregation, send_protos).  Compared to 1e-12: every
client's model (final.v), its last local prototypes (note C) and the global
prototypes after the last round (note C_bar; classes no upload holds are
absent in PFLlib and zero rows in pflref).  Exit 0 agree, 1 differ, 2
cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedproto", ["clients/clientproto.py", "servers/serverproto.py"])
import flcore.servers.serverproto as sp  # noqa: E402
from flcore.clients.clientproto import clientProto  # noqa: E402
H.patch_loaders()

sizes, ETA, LAM, GAMMA, R = [7, 4, 9], 0.3, 0.9, 0.85, 4
D, HID, K = 2, 4, 3
rng = random.Random(19)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "FedProto", local_learning_rate=ETA, lamda=LAM, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientProto, args, sizes)
srv = H.server(sp.FedProto, args, clients, 2, num_classes=K,
               global_protos=[None] * K)


def after(s):
    s.receive_protos()
    s.global_protos = sp.proto_aggregation(s.uploaded_protos)
    s.send_protos()


rounds = common.drive(H, srv, R, before=lambda s: None, after=after)
alg = {"name": "fedproto", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedproto.lambda": LAM, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("fedproto", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                                     "activation": "relu", "loss": "cross_entropy"},
                        raw, w0, alg, rounds))


def rows(protos):
    out = []
    for j in range(K):
        p = protos.get(j) if hasattr(protos, "get") else None
        out += p.tolist() if p is not None and not isinstance(p, list) else [0.0] * HID
    return out


pairs = [("v_%d" % c.id, common.flat(c.model), res["final"]["v"][c.id]) for c in clients]
for c in clients:
    if c.protos is not None:
        pairs.append(("C_%d" % c.id, rows(c.protos), common.last(res, "note", "C", c.id)))
pairs.append(("C_bar", rows(srv.global_protos), common.last(res, "note", "C_bar")))
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, mlp 2-4-3, -ld" % R))
