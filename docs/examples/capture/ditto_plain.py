#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""ditto_plain.py: Ditto written the usual PyTorch way, checked by pflref
through a capture (docs/python.md, "Capturing a PyTorch run").

Li et al., "Ditto: Fair and Robust Federated Learning Through
Personalization", ICML 2021, Alg. 1 with FedAvg as the global solver: on
each batch of a shuffled epoch, the personal model takes a step on
F_k(v) + (λ/2)‖v − w^t‖², then the client's copy of the global model a
step on F_k(w); the server averages the copies by n_k.  Plain PyTorch:
DataLoader(shuffle=True), torch.optim.SGD, state_dict() averaging.  The
lines marked `# pflref` are all that was added (10 lines); no line of
the training was changed.  float64 throughout.

usage: PYTHONPATH=python ditto_plain.py   (writes ./ditto-capture/;
       exit 0 PASS, 1 FAIL)
"""
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pflref.torch                                                 # pflref

torch.set_default_dtype(torch.float64)
torch.manual_seed(11)
K, ROUNDS, PER_ROUND, BATCH, LR, LAM = 4, 3, 3, 3, 0.1, 0.7


def make_clients():
    """K clients of 4, 6, 8, 10 samples, three classes, each client's
    features shifted its own way."""
    out = []
    for k in range(K):
        X = torch.randn(4 + 2 * k, 2) + torch.tensor([0.4 * k, -0.3 * k])
        y = (X[:, 0] > X[:, 1]).long() + (X[:, 0] > 1.0).long()
        out.append(TensorDataset(X, y))
    return out


datasets = make_clients()
model = nn.Sequential(nn.Linear(2, 3))
loss_fn = nn.CrossEntropyLoss()
personal = [copy.deepcopy(model) for _ in range(K)]          # v_k⁰ = w⁰
cap = pflref.torch.Capture("ditto", pflref.torch.layout(model, loss_fn), {"eta": LR, "lambda": LAM})  # pflref
cap.clients(datasets)                                               # pflref


@cap.client                                                         # pflref
def train(global_model, v, dataset):
    """One device: per batch a personal step on v, then a global step."""
    w_t = [p.detach().clone() for p in global_model.parameters()]
    local = copy.deepcopy(global_model)
    opt = torch.optim.SGD(local.parameters(), lr=LR)
    popt = torch.optim.SGD(v.parameters(), lr=LR)
    for x, y in DataLoader(dataset, batch_size=BATCH, shuffle=True):
        popt.zero_grad()
        reg = sum(((p - w) ** 2).sum() for p, w in zip(v.parameters(), w_t))
        (loss_fn(v(x), y) + LAM / 2 * reg).backward()
        popt.step()
        opt.zero_grad()
        loss_fn(local(x), y).backward()
        opt.step()
    cap.record("w_local", local)                                    # pflref
    cap.record("v", v)                                              # pflref
    return local.state_dict(), len(dataset)


@cap.round                                                          # pflref
def run_round(global_model):
    """A random PER_ROUND devices train; the server averages by n_k."""
    chosen = torch.randperm(K)[:PER_ROUND].tolist()
    states = [train(global_model, personal[k], datasets[k]) for k in chosen]
    total = sum(n for _, n in states)
    avg = {key: sum(sd[key] * (n / total) for sd, n in states)
           for key in states[0][0]}
    global_model.load_state_dict(avg)
    cap.record("w", global_model)                                   # pflref


for t in range(ROUNDS):
    run_round(model)
for k in range(K): cap.final("v", personal[k], client=k)            # pflref
raise SystemExit(cap.main("ditto-capture"))                         # pflref
