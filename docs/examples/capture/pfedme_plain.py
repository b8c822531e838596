#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pfedme_plain.py: pFedMe written the usual PyTorch way, checked by
pflref through a capture (docs/python.md, "Capturing a PyTorch run").

Dinh, Tran, Nguyen, "Personalized Federated Learning with Moreau
Envelopes", NeurIPS 2020, Alg. 1: every client trains; each batch of a
shuffled epoch is one local round r, in which θ starts at w_{i,r} and
takes K steps on f(θ; D) + (λ/2)‖θ − w_{i,r}‖² with torch.optim.SGD(lr =
η_p) (line 7), then w_{i,r+1} = w_{i,r} − ηλ(w_{i,r} − θ) (line 8); the
server sets w_{t+1} = (1 − β) w_t + β · the mean of the w_{i,R} (line
10).  The lines marked `# pflref` are all that was added (10 lines); no
line of the training was changed.  float64 throughout.

usage: PYTHONPATH=python pfedme_plain.py   (writes ./pfedme-capture/;
       exit 0 PASS, 1 FAIL)
"""
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pflref.torch                                                 # pflref

torch.set_default_dtype(torch.float64)
torch.manual_seed(5)
N, ROUNDS, BATCH = 3, 2, 4
ETA, LAM, ETA_P, K, BETA = 0.3, 2.5, 0.05, 3, 1.5


def make_clients():
    """N clients of 6, 7, 8 samples, y = x·a_i + noise."""
    out = []
    for i in range(N):
        X = torch.randn(6 + i, 2)
        y = X @ torch.tensor([1.0 + i, -0.5]) + 0.1 * torch.randn(len(X))
        out.append(TensorDataset(X, y.unsqueeze(1)))
    return out


datasets = make_clients()
model = nn.Linear(2, 1)
loss_fn = nn.MSELoss()
thetas = [None] * N
cap = pflref.torch.Capture("pfedme", pflref.torch.layout(model, loss_fn), {"eta": ETA, "lambda": LAM, "eta_p": ETA_P, "K": K, "beta": BETA})  # pflref
cap.clients(datasets)                                               # pflref


@cap.client                                                         # pflref
def train(global_model, i):
    """Lines 5-8 for client i: local rounds over one shuffled epoch."""
    local = copy.deepcopy(global_model)                  # w_{i,0} = w_t
    theta = copy.deepcopy(global_model)
    opt = torch.optim.SGD(theta.parameters(), lr=ETA_P)
    for x, y in DataLoader(datasets[i], batch_size=BATCH, shuffle=True):
        theta.load_state_dict(local.state_dict())        # θ ← w_{i,r}
        for _ in range(K):
            opt.zero_grad()
            reg = sum(((p - q.detach()) ** 2).sum()
                      for p, q in zip(theta.parameters(), local.parameters()))
            (loss_fn(theta(x), y) + LAM / 2 * reg).backward()
            opt.step()
        with torch.no_grad():
            for w, th in zip(local.parameters(), theta.parameters()):
                w -= ETA * LAM * (w - th)
    cap.record("w_local", local)                                    # pflref
    cap.record("theta", theta)                                      # pflref
    thetas[i] = theta
    return local


@cap.round                                                          # pflref
def run_round(global_model):
    """Every client trains; w_{t+1} = (1 − β) w_t + β · mean w_{i,R}."""
    order = torch.randperm(N).tolist()
    local = [train(global_model, i).state_dict() for i in order]
    w_t = copy.deepcopy(global_model.state_dict())
    global_model.load_state_dict({
        key: (1 - BETA) * w_t[key] + BETA * sum(sd[key] for sd in local) / N
        for key in w_t})
    cap.record("w", global_model)                                   # pflref


for t in range(ROUNDS):
    run_round(model)
for i in range(N): cap.final("v", thetas[i], client=i)              # pflref
raise SystemExit(cap.main("pfedme-capture"))                        # pflref
