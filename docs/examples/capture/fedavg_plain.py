#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fedavg_plain.py: FedAvg written the usual PyTorch way, checked by
pflref through a capture (docs/python.md, "Capturing a PyTorch run").

The training code is plain PyTorch: DataLoader(shuffle=True),
torch.optim.SGD, a deep copy of the global model per client, state_dict()
averaging weighted by n_k.  The lines marked `# pflref` are all that was
added (8 lines); no line of the training was changed.  Everything is
float64, so the verdict is held to the double-precision tolerance.

usage: PYTHONPATH=python fedavg_plain.py   (writes ./fedavg-capture/;
       exit 0 PASS, 1 FAIL)
"""
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pflref.torch                                                 # pflref

torch.set_default_dtype(torch.float64)
torch.manual_seed(7)
K, ROUNDS, PER_ROUND, BATCH, LR = 4, 3, 2, 4, 0.05


def make_clients():
    """K clients of 5, 7, 9, 11 samples: y = x·a + 0.3 k + noise."""
    a = torch.tensor([1.5, -2.0, 0.5])
    out = []
    for k in range(K):
        X = torch.randn(5 + 2 * k, 3)
        y = X @ a + 0.3 * k + 0.1 * torch.randn(len(X))
        out.append(TensorDataset(X, y.unsqueeze(1)))
    return out


datasets = make_clients()
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
loss_fn = nn.MSELoss()
cap = pflref.torch.Capture("fedavg", pflref.torch.layout(model, loss_fn), {"eta": LR})  # pflref
cap.clients(datasets)                                               # pflref


@cap.client                                                         # pflref
def train(global_model, dataset):
    """ClientUpdate: SGD over one shuffled epoch from a copy of w_t."""
    local = copy.deepcopy(global_model)
    opt = torch.optim.SGD(local.parameters(), lr=LR)
    for x, y in DataLoader(dataset, batch_size=BATCH, shuffle=True):
        opt.zero_grad()
        loss_fn(local(x), y).backward()
        opt.step()
    cap.record("w_local", local)                                    # pflref
    return local.state_dict(), len(dataset)


@cap.round                                                          # pflref
def run_round(global_model):
    """A random PER_ROUND clients train; the server averages by n_k."""
    chosen = torch.randperm(K)[:PER_ROUND].tolist()
    states = [train(global_model, datasets[k]) for k in chosen]
    total = sum(n for _, n in states)
    avg = {key: sum(sd[key] * (n / total) for sd, n in states)
           for key in states[0][0]}
    global_model.load_state_dict(avg)
    cap.record("w", global_model)                                   # pflref


for t in range(ROUNDS):
    run_round(model)
raise SystemExit(cap.main("fedavg-capture"))                        # pflref
