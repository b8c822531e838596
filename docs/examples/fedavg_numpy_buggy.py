#!/usr/bin/python3
"""fedavg_numpy.py: a minimal FedAvg candidate for `pflref check`.

FedAvg, McMahan et al., AISTATS 2017, Algorithm 1, on pflref's linear model
(loss squared or half_squared, optional bias), replaying a golden vector's
given schedule.  Writes the final w and the step-level trajectory.

usage: fedavg_numpy.py VECTOR.json -o RESULT.json
"""
import json
import sys

import numpy as np


def main(vector_path, result_path):
    with open(vector_path) as f:
        vector = json.load(f)
    spec = vector["spec"]
    model, eta = spec["model"], spec["algorithm"]["hyperparameters"]["eta"]
    assert spec["algorithm"]["name"] == "fedavg" and model["kind"] == "linear" \
        and spec["schedule"]["kind"] == "given"         # replays given rounds
    assert spec["algorithm"].get("switches", {}).get(
        "fedavg.weights", "samples") == "samples"
    d, bias = model["d"], model.get("bias", False)
    s = 2.0 if model["loss"] == "squared" else 1.0      # dℓ/dŷ = s (ŷ − y)
    X = [np.array(c["X"], dtype=float) for c in spec["problem"]["clients"]]
    y = [np.array(c["y"], dtype=float) for c in spec["problem"]["clients"]]
    n = [len(y_k) for y_k in y]                         # n_k
    w = np.array(spec.get("init", {}).get("w", np.zeros(d + bias)), dtype=float)

    def grad(k, w, batch):                              # ∇ of the batch mean loss
        Xb = np.hstack([X[k][batch], np.ones((len(batch), 1))]) if bias \
            else X[k][batch]
        return s / len(batch) * Xb.T @ (Xb @ w - y[k][batch])

    traj = []

    def log(event, name, value, **where):
        traj.append({"event": event, "phase": "train", **where, "name": name,
                     "value": value.tolist()})

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "w", w, round=t)
        S_t = rnd["clients"]                            # ascending client ids
        m_t = sum(n[k] for k in S_t)                    # m_t = Σ_{k∈S_t} n_k
        w_next = np.zeros_like(w)
        for k, batches in zip(S_t, rnd["batches"]):
            w_k = w.copy()                              # ClientUpdate(k, w_t)
            log("client_begin", "w_local", w_k, round=t, client=k, step=0)
            for step, b in enumerate(batches, start=1):  # for each batch b
                w_k = w_k - eta * grad(k, w_k, b)       # w ← w − η∇ℓ(w; b)
                log("step", "w_local", w_k, round=t, client=k, step=step)
            log("client_end", "w_local", w_k, round=t, client=k)
            w_next += 1 / len(S_t) * w_k  # BUG (deliberate): uniform 1/m, not n_k/m_t
        w = w_next
        log("server", "w", w, round=t)

    with open(result_path, "w") as f:
        json.dump({"format": "pflref-result/1", "id": vector["id"],
                   "final": {"w": w.tolist()}, "trajectory": traj}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[2] != "-o":
        sys.exit(__doc__.strip().splitlines()[-1])
    main(sys.argv[1], sys.argv[3])
# SPDX-License-Identifier: GPL-3.0-or-later
