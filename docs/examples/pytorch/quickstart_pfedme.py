"""quickstart_pfedme.py: the shortest path of docs/validate.md, section 1.

A pFedMe as a PyTorch user writes it (nn.Linear, torch.optim.SGD on the
inner problem h_i, the paper's reading: θ reset to w_{i,r}, 1/S averaging,
the last θ personalised), on the pflref package (pflref.Recorder), with
its test at the end of the file.  Run it on the linear paper-reading vectors:

    pytest -p pflref.pytest_plugin --pflref-algorithm pfedme \
        --pflref-include 'pfedme/worked/linear-paper-*' \
        docs/examples/pytorch/quickstart_pfedme.py

Dinh, Tran, Nguyen, NeurIPS 2020, Algorithm 1; line numbers as in
docs/algorithms/pfedme.md.
"""
import copy

import pflref
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.set_default_dtype(torch.float64)             # the reference is fp64


def params(m):                                      # flat, in pflref's layout
    return parameters_to_vector(m.parameters())


def my_pfedme(vector):
    spec, rec = vector.spec, pflref.Recorder(vector)
    eta, lam, eta_p = (spec.hyper[k] for k in ("eta", "lambda", "eta_p"))
    K, beta = int(spec.hyper["K"]), spec.hyper.get("beta", 1.0)
    data = [(torch.tensor(c["X"]), torch.tensor(c["y"])) for c in spec.clients]
    model = nn.Linear(spec.model["d"], 1, bias=False)            # w
    vector_to_parameters(torch.tensor(spec.init), model.parameters())
    v = [params(model).detach() for _ in data]       # personalised models
    for t, rnd in enumerate(spec.schedule):
        rec.round_begin(t, params(model).detach())
        w_R = {}
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            local = copy.deepcopy(model)             # l. 5: w_{i,0} = w_t
            theta = copy.deepcopy(model)
            opt = torch.optim.SGD(theta.parameters(), lr=eta_p)
            rec.record("client_begin", "w_local", params(local).detach(),
                       round=t, client=i, step=0)
            for r, D in enumerate(batches):          # one local round per batch
                X, y = data[i][0][D], data[i][1][D]
                w_ir = params(local).detach()
                vector_to_parameters(w_ir.clone(), theta.parameters())  # θ ← w_{i,r}
                for k in range(1, K + 1):            # l. 7: K steps on h_i
                    opt.zero_grad()
                    h = 0.5 * ((theta(X).squeeze(1) - y) ** 2).mean() \
                        + lam / 2 * ((params(theta) - w_ir) ** 2).sum()
                    h.backward()
                    opt.step()
                    rec.step(t, i, r * K + k, "theta", params(theta).detach())
                with torch.no_grad():                # l. 8
                    for w, th in zip(local.parameters(), theta.parameters()):
                        w -= eta * lam * (w - th)
                rec.step(t, i, r + 1, "w_local", params(local).detach())
            rec.client_end(t, i, "w_local", params(local).detach())
            rec.client_end(t, i, "theta", params(theta).detach())
            w_R[i], v[i] = params(local).detach(), params(theta).detach()
        S_t = rnd.get("selected", rnd["clients"])   # l. 10
        avg = sum(w_R[i] for i in S_t) / len(S_t)
        w_next = (1 - beta) * params(model).detach() + beta * avg
        vector_to_parameters(w_next, model.parameters())
        rec.server(t, w_next)
    rec.final("w", params(model).detach())
    for i, v_i in enumerate(v):
        rec.final("v", v_i, client=i)
    return rec


def test_pfedme(pflref_vector, pflref_check):
    pflref_check(my_pfedme(pflref_vector))
# SPDX-License-Identifier: GPL-3.0-or-later
