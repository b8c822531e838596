# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/pfllib/fedfomo.py: PFLlib's own FedFomo classes against pflref's
preset pfllib (issue 33 §2), outside `make check`: `make check-pfllib`
runs it when PFLLIB_DIR names a checkout of TsingZ0/PFLlib (its system/
folder is read, never changed).

    PFLLIB_DIR=/path/to/PFLlib /usr/bin/python3 tests/pfllib/fedfomo.py \
        [PFLREF] [ANCHOR]

It copies system/flcore/{clients/clientbase.py, clients/clientfomo.py,
servers/serverbase.py, servers/serverfomo.py} into a temporary folder with
stubs for the imports a run without data files does not need (h5py,
sklearn, utils.data_utils.read_client_data serving the problem below,
utils.dlg), then drives clientFomo.train() and FedFomo.send_models /
receive_models exactly as FedFomo.train() does (evaluation left out: it
has no side effect on FedFomo's models), in float64 with torch SGD and
PFLlib's -ld ExponentialLR, on three clients (n = 10, 5, 15: PFLlib's
last int(0.2 n) samples are the validation split), a linear model with a
bias and ½(ŷ − y)², batches of 2 in order (drop_last), M = 2, five rounds
with partial participation.  The same run goes to `pflref run` as a spec
with the preset pfllib and PFLlib's peers chosen at run time (u lists of
length min(M, |uploads of the round before|)); the final models must agree
to 1e-12.  ANCHOR (a fedfomo.anchor value) overrides the preset's, to show
what the comparison detects (post_train: differences of order 0.1).
Exit 0 agree, 1 differ, 2 cannot run.
"""
import os
import shutil
import tempfile
import json
import random
import subprocess
import sys
import types
import copy

STUBS = {
    "h5py.py": "",
    "sklearn/__init__.py": "",
    "sklearn/metrics.py": "",
    "sklearn/preprocessing.py": "def label_binarize(*a, **k):\n    raise NotImplementedError\n",
    "utils/__init__.py": "",
    "utils/data_utils.py": ("DATA = {}\n\n\ndef read_client_data(dataset, idx, is_train=True, "
                            "few_shot=0):\n    return list(DATA[idx])\n"),
    "utils/dlg.py": "def DLG(*a, **k):\n    return None\n",
    "flcore/__init__.py": "", "flcore/clients/__init__.py": "",
    "flcore/servers/__init__.py": "",
}
FILES = ["clients/clientbase.py", "clients/clientfomo.py",
         "servers/serverbase.py", "servers/serverfomo.py"]
PFLLIB = os.environ.get("PFLLIB_DIR")
if not PFLLIB or not os.path.isdir(os.path.join(PFLLIB, "system", "flcore")):
    print("tests/pfllib/fedfomo.py: set PFLLIB_DIR to a PFLlib checkout", file=sys.stderr)
    sys.exit(2)
SCRATCH = tempfile.mkdtemp(prefix="pflref-pfllib-")
for rel, text in STUBS.items():
    os.makedirs(os.path.dirname(os.path.join(SCRATCH, rel)) or SCRATCH, exist_ok=True)
    with open(os.path.join(SCRATCH, rel), "w") as f:
        f.write(text)
for rel in FILES:
    shutil.copyfile(os.path.join(PFLLIB, "system", "flcore", rel),
                    os.path.join(SCRATCH, "flcore", rel))
sys.path.insert(0, SCRATCH)
import torch
torch.set_default_dtype(torch.float64)
import torch.nn as nn
import utils.data_utils as du  # noqa: E402 (the stub)
from flcore.clients.clientfomo import clientFomo
from flcore.servers.serverfomo import FedFomo

PFLREF = sys.argv[1] if len(sys.argv) > 1 else 'build/rel/pflref'
ANCHOR = sys.argv[2] if len(sys.argv) > 2 else None   # override for a check
rng = random.Random(7)
sizes = [10, 5, 15]
B, ETA, GAMMA, M = 2, 0.3, 0.75, 2
w0 = [0.25, -0.5, 0.125]
rounds = [[0, 1, 2], [0, 2], [0, 1, 2], [1, 2], [0, 1]]
raw = []
for n in sizes:
    X = [[round(rng.uniform(-2, 2), 2), round(rng.uniform(-2, 2), 2)] for _ in range(n)]
    y = [round(0.7 * x[0] - 1.1 * x[1] + rng.uniform(-1, 1), 2) for x in X]
    raw.append((X, y))
for k, (X, y) in enumerate(raw):
    du.DATA[k] = [(torch.tensor(x), torch.tensor(v)) for x, v in zip(X, y)]

model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([w0[:2]])); model.bias.copy_(torch.tensor([w0[2]]))
args = types.SimpleNamespace(model=model, algorithm='FedFomo', dataset='x', device='cpu',
    save_folder_name='x', num_classes=1, batch_size=B, local_learning_rate=ETA,
    local_epochs=1, few_shot=0, learning_rate_decay_gamma=GAMMA,
    learning_rate_decay=True, num_clients=len(sizes))
def half_sq(out, y):
    return 0.5 * ((out.squeeze(-1) - y) ** 2).mean()
clients = []
for k, n in enumerate(sizes):
    c = clientFomo(args, k, n, 0, train_slow=False, send_slow=False)
    c.loss = half_sq
    clients.append(c)
srv = object.__new__(FedFomo)
srv.clients, srv.num_clients, srv.device = clients, len(sizes), 'cpu'
srv.P = torch.diag(torch.ones(len(sizes)))
srv.uploaded_ids, srv.M = [], M
srv.client_models = [copy.deepcopy(model) for _ in sizes]
srv.client_drop_rate, srv.time_threthold = 0.0, 1e18
chosen = []
for sel in rounds:
    srv.selected_clients = [clients[k] for k in sel]
    srv.current_num_join_clients = len(sel)
    M_ = min(M, len(srv.uploaded_ids))
    srv.send_models()
    chosen.append([list(clients[k].received_ids) for k in sel])
    for k in sel:
        clients[k].train()
    srv.receive_models()
final = [torch.cat([p.data.reshape(-1) for p in c.model.parameters()]).tolist() for c in clients]

# the same run as a pflref spec, preset pfllib: train = the first 80 %,
# validation = the last int(0.2 n) samples; PFLlib's sequential loaders
spec_clients = []
for (X, y) in raw:
    nv = int(0.2 * len(X)); nt = len(X) - nv
    spec_clients.append({"X": X[:nt], "y": y[:nt], "X_val": X[nt:], "y_val": y[nt:]})
sched, uploaded = [], 0
for sel in rounds:
    M_ = min(M, uploaded)
    r = {"clients": sel, "batches": [], "peer_draws": []}
    for k in sel:
        nt = len(spec_clients[k]["y"])
        r["batches"].append([[i, i + 1] for i in range(0, nt - nt % B, B)])
        r["peer_draws"].append({"order": [n for n in range(len(sizes)) if n != k],
                                "u": [0.0] * M_})
    sched.append(r); uploaded = len(sel)
alg = {"name": "fedfomo", "preset": "pfllib",
       "hyperparameters": {"eta": ETA, "fedfomo.val_batch": B, "lr.gamma": GAMMA},
       "switches": {"lr.schedule": "exponential"}}
if ANCHOR:
    alg["switches"]["fedfomo.anchor"] = ANCHOR
spec = {"format": "pflref-spec/1", "name": "pfllib fedfomo",
        "model": {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"},
        "problem": {"clients": spec_clients}, "init": {"kind": "given", "w": w0},
        "algorithm": alg, "schedule": {"kind": "given", "rounds": sched},
        "output": {"trajectory": "round"}}
json.dump(spec, open(os.path.join(SCRATCH, 'fomo_spec.json'), 'w'))
out = subprocess.run([PFLREF, 'run', os.path.join(SCRATCH, 'fomo_spec.json'), '-o', '-'],
                     capture_output=True, text=True)
if out.returncode:
    print(out.stderr); sys.exit(2)
res = json.loads(out.stdout)
v = res["final"]["v"]
diff = max(abs(a - b) for va, vb in zip(final, v) for a, b in zip(va, vb))
scale = max(abs(a) for va in final for a in va)
print("PFLlib peers per round:", chosen)
print("pflref peers:", res.get("schedule", {}).get("rounds") and
      [r.get("peers") for r in res["schedule"]["rounds"]])
print("PFLlib final:", final)
print("pflref final:", v)
print("max abs difference %.3g (max |value| %.3g)" % (diff, scale))
shutil.rmtree(SCRATCH)
ok = diff <= 1e-12 and chosen == [r.get("peers") for r in res["schedule"]["rounds"]]
print("fedfomo: PFLlib and pflref's preset pfllib %s" % ("agree" if ok else "DIFFER"))
sys.exit(0 if ok else 1)
