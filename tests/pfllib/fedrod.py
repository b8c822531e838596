# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedrod.py: PFLlib's clientROD / FedROD against pflref's
preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 8, 4, 10, three classes, every class on every
client), an mlp 2 → 4 (ReLU, PFLlib's model.base: θ) → 3 (model.head: φ_G),
the personal head φ_P a copy of the initial head (clientrod.py:15),
batches of 2 from PFLlib's shuffled loaders (drop_last), η = 0.25 with -ld
(γ = 0.8; both schedulers), two of three clients per round
(serverbase.py's select_clients), four rounds.  Compared to 1e-12: the
global model (final.w) and every trained client's φ_P (its last note
phi_P).

The sizes 7 and 9 are not multiples of the batch size: clientrod.py:22-26
counts the balanced softmax's N_j over one pass of load_train_data(), a
shuffled loader with drop_last=True, so a random sample of each such client
is left out of the counts.  Each client's sample_per_class as PFLlib
counted it is given to pflref as init.class_counts (the spec's data for
that random choice); NOCOUNTS=1 leaves them out, so pflref counts the whole
training set (the paper) and the runs differ; EVEN=1 runs n = 8, 4, 10,
where the two agree.
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedrod", ["clients/clientrod.py", "servers/serverrod.py"])
from flcore.clients.clientrod import clientROD  # noqa: E402
from flcore.servers.serverrod import FedROD  # noqa: E402
H.patch_loaders()

sizes = [8, 4, 10] if os.environ.get("EVEN") else [7, 4, 9]
ETA, GAMMA, R = 0.25, 0.8, 4
D, HID, K = 2, 4, 3
rng = random.Random(23)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "FedRoD", local_learning_rate=ETA, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientROD, args, sizes)
srv = H.server(FedROD, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "fedrod", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
spec = common.spec("fedrod", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                             "activation": "relu", "loss": "cross_entropy"},
                   raw, w0, alg, rounds)
if not os.environ.get("NOCOUNTS"):      # clientrod.py:22-26, as PFLlib counted
    spec["init"]["class_counts"] = [[int(x) for x in c.sample_per_class.tolist()]
                                    for c in clients]
res = H.run(spec)
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
for c in clients:
    p = common.last(res, "note", "phi_P", c.id)
    if p is not None:
        pairs.append(("phi_P_%d" % c.id, common.flat(c.head), p))
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = %s, mlp 2-4-3, -ld"
                  % (R, ", ".join(map(str, sizes)))))
