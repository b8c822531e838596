# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedbn.py: PFLlib's clientBN / FedBN against pflref's fedbn
with preset pfllib (`make check-pfllib`; tests/pfllib/common.py says how).

Problem: three clients (n = 8, 6, 10, three classes), an mlp 2 → 4 → 3
whose hidden layer is batch-normalised before the ReLU, as pflref's mlp
with "bn": a module with fc1 = Linear(2, 4), bn = BatchNorm1d(4, eps =
0.03, momentum = 0.2), fc2 = Linear(4, 3), so its state_dict is pflref's
layout (W1, b1, γ, β, r_μ, r_v, W2, b2) and clientbn.py's set_parameters
skips the parameters named bn.* (γ, β; the running statistics are buffers
and never travel).  PFLlib's CrossEntropyLoss, batches of 2 from its
shuffled loaders (drop_last), one local epoch, η = 0.3 with -ld (γ =
0.8: each client's ExponentialLR steps after its own train(),
lr.count = trainings), two of three clients per round, five rounds, so a
client keeps its γ, β, r_μ, r_v through rounds it sits out.

Compared to 1e-12:
  - the global model's shared entries (W1, b1, W2, b2 of PFLlib's
    global_model; those of pflref's final.w);
  - every client's batch-norm entries (γ, β, r_μ, r_v of its model: what
    it keeps) against those of its last client_end v (w0's for a client
    that never trained);
  - the whole model of each client that trained in the last round (no
    send_models follows it) against its last client_end v.
Not compared: the global model's γ, β, which PFLlib's aggregate_parameters
averages but never sends and pflref's server leaves at w⁰'s
(docs/algorithms/fedbn.md, PFLlib).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

H = common.Harness("fedbn", ["clients/clientbn.py", "servers/serverbn.py"])
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from flcore.clients.clientbn import clientBN  # noqa: E402
from flcore.servers.serverbn import FedBN  # noqa: E402
H.patch_loaders()

sizes, B, ETA, GAMMA, R = [8, 6, 10], 2, 0.3, 0.8, 5
D, HID, K, EPS, MOM = 2, 4, 3, 0.03, 0.2
rng = random.Random(29)
raw = common.classes(rng, sizes, D, K)
H.set_data(raw, labels=True)


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, HID)
        self.bn = nn.BatchNorm1d(HID, eps=EPS, momentum=MOM)
        self.fc2 = nn.Linear(HID, K)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def state(m):
    """The state_dict's values flattened, num_batches_tracked left out."""
    return [float(v) for k, t in m.state_dict().items()
            if not k.endswith("num_batches_tracked")
            for v in t.reshape(-1).tolist()]


model = BNNet()
# w0: W1, b1 from the harness's generator, γ near 1, β, r_μ, r_v > 0, W2, b2
w0 = common.init_w(rng, HID * D + HID) + [1.1, 0.85, 1.25, 0.95] + \
    [0.1, -0.15, 0.05, 0.2] + [0.05, -0.1, 0.15, 0.0] + [1.5, 0.75, 1.25, 2.0] + \
    common.init_w(rng, K * HID + K)
with torch.no_grad():
    i = 0
    for k, t in model.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        t.copy_(torch.tensor(w0[i:i + t.numel()]).reshape(t.shape))
        i += t.numel()
assert i == len(w0)
lo = HID * D + HID
bn = list(range(lo, lo + 4 * HID))                    # γ, β, r_μ, r_v
shared = [p for p in range(len(w0)) if p not in bn]   # W1, b1, W2, b2

args = H.args(model, "FedBN", local_learning_rate=ETA, num_classes=K, batch_size=B,
              learning_rate_decay=True, learning_rate_decay_gamma=GAMMA)
clients = H.clients(clientBN, args, sizes)
srv = H.server(FedBN, args, clients, 2)
rounds = common.drive(H, srv, R)
alg = {"name": "fedbn", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
mlp = {"kind": "mlp", "d": D, "h": HID, "k": K, "bias": True, "activation": "relu",
       "loss": "cross_entropy", "bn": True, "bn_eps": EPS, "bn_momentum": MOM}
res = H.run(common.spec("fedbn", mlp, raw, w0, alg, rounds, labels=True))
g, w = state(srv.global_model), res["final"]["w"]
pairs = [("global shared entries", [g[p] for p in shared], [w[p] for p in shared])]
for c in clients:
    own = common.last(res, "client_end", "v", client=c.id) or w0
    mine = state(c.model)
    pairs.append(("client %d batch-norm entries" % c.id,
                  [mine[p] for p in bn], [own[p] for p in bn]))
    if c.id in rounds[-1]["clients"]:
        pairs.append(("client %d model after its last training" % c.id, mine, own))
trained = sorted({k for r in rounds for k in r["clients"]})
sys.exit(H.report(pairs, what="%d rounds of 2 of 3 clients n = 8, 6, 10 (trained: %s), "
                  "mlp 2-4-3 with BatchNorm1d, -ld" % (R, trained)))
