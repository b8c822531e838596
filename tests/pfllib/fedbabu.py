# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedbabu.py: PFLlib's clientBABU / FedBABU against pflref's
fedsim with preset fedbabu_pfllib (`make check-pfllib`;
tests/pfllib/common.py says how).

Problem: three clients (n = 7, 4, 9, three classes), an mlp 2 → 4 (ReLU:
PFLlib's model.base, averaged) → 3 (model.head, frozen at its initial
value by requires_grad = False: γ_v = 0), cross-entropy, batches of 2 from
PFLlib's shuffled loaders (drop_last), one local epoch, η = 0.25 with -ld
(γ = 0.7: each client's ExponentialLR steps after its own train()), two
of three clients per round (serverbase.py's select_clients), four rounds;
then, as FedBABU.train() ends, every client's fine_tune() (one epoch of
base and head with its own optimizer, whose lr its scheduler decayed)
from the model it holds: its trained model if it trained in the last
round, else the base sent at that round's start with its own head
(pfl.finetune_start = last_local, pfl.finetune_lr = decayed, η_ft = η).
The fine-tuning batches PFLlib's loaders yielded are the schedule's post.

Compared to 1e-12: the averaged base (PFLlib's global_model; the shared
blocks of pflref's final.w) and every client's fine-tuned model (base and
head; pflref's final.v).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedbabu", ["clients/clientbabu.py", "servers/serverbabu.py"])
from flcore.clients.clientbabu import clientBABU  # noqa: E402
from flcore.servers.serverbabu import FedBABU  # noqa: E402
H.patch_loaders()

sizes, ETA, GAMMA, R = [7, 4, 9], 0.25, 0.7, 4
D, HID, K = 2, 4, 3
rng = random.Random(47)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)
w0 = common.init_w(rng, HID * D + HID + K * HID + K)
model = common.mlp(D, HID, K, w0)
args = H.args(model, "FedBABU", local_learning_rate=ETA, num_classes=K,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA,
              fine_tuning_epochs=1)
clients = H.clients(clientBABU, args, sizes)
srv = H.server(FedBABU, args, clients, 2)
rounds = common.drive(H, srv, R)
last_round = rounds[-1]["clients"]
post = []
for c in clients:                       # serverbabu.py train(): after the rounds
    H.log.clear()
    c.fine_tune()
    post.append(H.train_batches(c.id))
alg = {"name": "fedsim", "preset": "fedbabu_pfllib",
       "hyperparameters": {"gamma_u": ETA, "eta_ft": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
spec = common.spec("fedbabu", {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True,
                               "activation": "relu", "loss": "cross_entropy"},
                   raw, w0, alg, rounds)
spec["schedule"]["post"] = post
res = H.run(spec)
nb = HID * D + HID                       # the base's entries (W1, b1)
pairs = [("base", common.flat(srv.global_model), res["final"]["w"][:nb])]
pairs += [("client %d fine-tuned" % c.id, common.flat(c.model), res["final"]["v"][c.id])
          for c in clients]
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 7, 4, 9, mlp 2-4-3, -ld, "
                  "then every client's fine_tune(); the last round's clients %s"
                  % (R, last_round)))
