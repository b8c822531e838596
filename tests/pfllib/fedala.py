# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedala.py: PFLlib's clientALA / FedALA (with its
system/utils/ALA.py) against pflref's preset pfllib (`make check-pfllib`;
tests/pfllib/common.py says how).

Problem: three clients (n = 8, 5, 10), an mlp 2 → 2 (identity; PFLlib's
model.base) → 1 (model.head) with the squared loss (ALA.loss too), batches
of 2 from PFLlib's shuffled loaders (drop_last), α = 0.05 with -ld (γ =
0.9), ALA's η = 2.5, s = 60 % (-p), p = 2 tensors (-et: the head's weight
and bias), ALA.py's defaults threshold 0.1 and 10 recorded losses, five
rounds of two of three clients (serverbase.py's select_clients), so
clients sit out rounds: serverala.py:73-74 runs ALA on every client,
participant or not, before the round trains, which is pflref's preset
pfllib_run (fedala.ala_clients = all).  FULL=1 in the environment has
every client in every round and compares with the preset pfllib (the same
run then); ONLY_PARTICIPANTS=1 compares the partial run with the preset
pfllib to show the difference.  ALA's random slice offset (ALA.py:73, random.randint) is
recorded for every client and given to pflref as the `personal` batches
(the participants' lists, then under pfllib_run those of the clients
outside the round, ascending id).
Compared to 1e-12: the global model (final.w); every client's model as
PFLlib's evaluate() sees it in the last round (serverala.py:26-31:
right after send_models, i.e. after ALA and before training) against
pflref's final.v (Alg. 1 l. 19: each client's latest Θ̂_i); and the trained
model of every participant of the last round (clientala.py's train())
against pflref's last client_end theta_i of that client.
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedala", ["clients/clientala.py", "servers/serverala.py"],
                   utils=["ALA.py"])
import utils.ALA as ala  # noqa: E402
from flcore.clients.clientala import clientALA  # noqa: E402
from flcore.servers.serverala import FedALA  # noqa: E402
H.patch_loaders()

offsets = []


class RecordingRandom:
    """ALA.py's random module: randint's draws recorded (client, offset)."""
    def __init__(self, rnd):
        self.rnd = rnd

    def randint(self, a, b):
        v = self.rnd.randint(a, b)
        offsets.append(v)
        return v


ala.random = RecordingRandom(random)
sizes, ETA, ETA_ALA, S, P, GAMMA, R = [8, 5, 10], 0.05, 2.5, 60, 2, 0.9, 5
B = 2
rng = random.Random(31)
raw = common.regression(rng, sizes)
H.set_data(raw)
w0 = common.init_w(rng, 2 * 2 + 2 + 2 + 1)
model = common.mlp(2, 2, 1, w0, relu=False)
args = H.args(model, "FedALA", local_learning_rate=ETA, eta=ETA_ALA, rand_percent=S,
              layer_idx=P, batch_size=B, learning_rate_decay=True,
              learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientALA, args, sizes)
for c in clients:
    c.loss = c.ALA.loss = common.sq
FULL = bool(os.environ.get("FULL"))
# ONLY_PARTICIPANTS=1: the same PFLlib run against preset pfllib (ALA on the
# participants only, their lists only), to show what pfllib_run changes
ONLY = bool(os.environ.get("ONLY_PARTICIPANTS"))
join = 3 if FULL else 2
srv = H.server(FedALA, args, clients, join)
personal = []
evaluated = []      # the clients' models right after the last send_models


def send(s):
    del offsets[:]
    s.send_models()                 # ALA on every client, ascending id
    # serverala.py:28-31: evaluate() reads these models, before training
    evaluated[:] = [common.flat(c.model) for c in s.clients]
    lists = []
    for c, off in zip(s.clients, offsets):
        m = int(S / 100 * len(H.du.DATA[c.id]))
        lists.append([list(range(off + i, off + min(i + B, m))) for i in range(0, m, B)])
    personal.append(lists)


rounds = common.drive(H, srv, R, before=send)
for r, lists in zip(rounds, personal):
    if r is not rounds[0]:
        out = [k for k in range(len(lists)) if k not in r["clients"]]
        r["personal"] = [lists[k] for k in r["clients"] + ([] if FULL or ONLY else out)]
alg = {"name": "fedala", "preset": "pfllib" if FULL or ONLY else "pfllib_run",
       "hyperparameters": {"eta": ETA, "fedala.eta": ETA_ALA, "fedala.s": S, "fedala.p": P,
                           "fedala.k": 10, "fedala.threshold": 0.1, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
res = H.run(common.spec("fedala", {"kind": "mlp", "d": 2, "h": 2, "k": 1, "bias": True,
                                   "activation": "identity", "loss": "squared"},
                        raw, w0, alg, rounds))
pairs = [("w", common.flat(srv.global_model), res["final"]["w"])]
pairs += [("v_%d" % c.id, evaluated[c.id], res["final"]["v"][c.id]) for c in clients]
# the last round's participants keep their trained model (the others' was
# overwritten by the last send_models' ALA, which is their v)
for c in clients:
    if c.id in rounds[-1]["clients"]:
        pairs.append(("theta_%d" % c.id, common.flat(c.model),
                       common.last(res, "client_end", "theta_i", c.id)))
sys.exit(H.report(pairs, what="%d rounds of %d of 3 clients n = 8, 5, 10, mlp 2-2-1, -ld"
                  % (R, join)))
