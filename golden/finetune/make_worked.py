#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Regenerate the fine-tuning worked-example golden vectors with exact fractions.

Source: shared/spec notes-fedavg-pfedme-ditto-perfedavg-apfl.md §5.1(g):
global model w = 3/4, f_1(x) = 1/2 (x - 4)^2, eta_ft = 1/2, two steps of
    theta <- theta - eta_ft (f_1'(theta) + mu_ft (theta - w))
mu_ft = 0: 0.75 -> 2.375 -> 3.1875;  mu_ft = 1: 0.75 -> 2.375 -> 2.375
(the fixed point (4 + 0.75)/2).  Zero training rounds, so the global model is
the initial w; the quadratic model f(x) = 1/2 a (x - c)^2 with a = 1, c = 4.

    /usr/bin/python3 golden/finetune/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_golden as pg   # noqa: E402
W, A, C, ETA = F(3, 4), F(1), F(4), F(1, 2)
TOL = {"atol": 1e-15, "rtol": 1e-14,
       "basis": "fp64 reference against exact rationals; two steps of a few "
                "correctly rounded operations each (all values here are dyadic, "
                "so the reference is in fact exact)"}


def vector(mu, expect):
    # req: finetune.eq2
    theta, traj = W, [{"event": "client_begin", "phase": "finetune", "client": 0,
                       "step": 0, "name": "theta", "value": [float(W)]}]
    for s in (1, 2):
        # req: finetune.eq3
        theta = theta - ETA * (A * (theta - C) + mu * (theta - W))
        traj.append({"event": "step", "phase": "finetune", "client": 0, "step": s,
                     "name": "theta", "value": [float(theta)]})
    traj.append({"event": "client_end", "phase": "finetune", "client": 0,
                 "name": "theta", "value": [float(theta)]})
    assert [r["value"][0] for r in traj[1:3]] == [float(x) for x in expect]
    spec = pg.given_spec(
        name=f"fine-tuning worked example, mu_ft = {mu}",
        description=None,
        model={"kind": "quadratic", "d": 1},
        clients=[{"a": [float(A)], "c": [float(C)]}],
        init={"kind": "given", "w": [float(W)]},
        algorithm={"name": "finetune",
                   "hyperparameters": {"eta": 0.5, "eta_ft": float(ETA),
                                       "mu_ft": float(mu)}},
        rounds=[],                  # zero training rounds: w stays 3/4
        post=[[[0], [0]]])          # client 0: two full-batch steps
    prov = pg.provenance(
        "independent",
        f"{pg.NOTES} §5.1(g)",
        "golden/finetune/make_worked.py (exact fractions)",
        {"theta": theta})
    # mu_ft = 0 has no proximal term, so only mu1 can catch its sign.
    flags = (["prox-sign"] if mu else []) + ["local-step-count"]
    return pg.vector(
        f"finetune/worked/notes-5.1g/mu{mu}",
        f"Fine-tuning from w = 3/4 on f = 1/2 (x - 4)^2, eta_ft = 1/2, mu_ft = {mu}",
        prov, flags, spec, TOL,
        # req: finetune.eq4
        {"final": {"w": [float(W)], "v": [[float(theta)]]},
         "trajectory": traj})


def main():
    out = pg.out_dir(sys.argv, HERE)
    for mu, expect in ((0, [F(19, 8), F(51, 16)]), (1, [F(19, 8), F(19, 8)])):
        v = vector(mu, expect)
        pg.write_vector(os.path.join(out, f"worked-mu{mu}.json"), v)


if __name__ == "__main__":
    main()
