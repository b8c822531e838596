"""pfl_numpy_interp.py: model interpolation for the NumPy candidate
(pfl_numpy.py loads it), written from seed 000 §2 / Exercise 14.7.2 and the
spec notes §5.2, not from pflref's C code.

  global model   FedAvg over the schedule's rounds (pfl_numpy.fedavg_rounds)
  local model    h_i: from w0, one plain SGD step of size eta per post batch;
                 with a client optimizer (opt.*, pfl_numpy_optim) its step
                 on the batch gradient instead, the local training's own
                 optimizer (slot 1; the FedAvg rounds step with slot 0's):
                 a new one per client under opt.state = reset, client i's
                 own under client, one carried from client to client under
                 server; always at the undecayed eta (lr.* decays the
                 rounds' steps only)
  mixing weight  interp.alpha = fixed: alpha for every client;
                 per_client_grid: alpha_j = j/G, j = 0..G, the mixture
                 alpha_j h_i + (1 - alpha_j) w scored by its mean loss on the
                 validation split (X_val, y_val) or the test set
                 (interp.select), lowest loss first, ties to the smaller alpha;
                 a layer list's losses in evaluation mode (Layers.evaluate)
  personalized   v_bar_i = alpha_i h_i + (1 - alpha_i) w

Records (phase "interp"): client_begin / step / client_end "h"; per grid
point j (step j) the notes alpha_j, select_loss, and with test data
test_loss and test_mse; per client the notes alpha and v_bar.
"""
import importlib
import sys

import numpy as np

ALGORITHM = "interp"
BUGS = ("interp-alpha-swapped", "interp-select-on-train",
        "interp-ties-to-larger", "interp-local-from-global")


def _base():
    """pfl_numpy's helpers: the running script itself when pfl_numpy.py is
    the program (so its Unsupported is the one it catches), else the
    module."""
    main = sys.modules.get("__main__")
    if hasattr(main, "fedavg_rounds") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _split(client, xkey, ykey):
    if xkey not in client:
        return None
    return np.asarray(client[xkey], dtype=float), np.asarray(client[ykey], dtype=float)


def _losses(model, theta, data, client=None):
    """(mean loss, mean squared error) of theta on (X, y): the linear
    model's, or a regression layer list's in evaluation mode (client: its
    Layers object)."""
    X, y = data
    if model["kind"] == "layers":
        return client.evaluate(theta, X, y)
    d = model["d"]
    pred = X @ theta[:d] + (theta[d] if model.get("bias", False) else 0.0)
    r = pred - y
    sq = r * r
    per_sample = sq if model["loss"] == "squared" else 0.5 * sq
    return per_sample.mean(), sq.mean()


def run(spec, clients, w0, log, bug):
    base = _base()
    alg = spec["algorithm"]
    hp, sw = alg.get("hyperparameters", {}), alg.get("switches", {})
    eta = hp["eta"]
    mode = sw.get("interp.alpha", "fixed")
    select = sw.get("interp.select", "validation")
    G = hp.get("interp.grid", 10)
    model = spec["model"]
    raw = spec["problem"].get("clients")
    if mode == "per_client_grid" and (
            raw is None or model["kind"] not in ("linear", "layers")):
        raise base.Unsupported("per_client_grid needs inline linear or "
                               "layer-list clients")

    w = base.fedavg_rounds(spec, clients, w0, log)      # the global model
    opts = base.pfl_numpy_optim.for_run(spec)     # opt.*: None for plain SGD

    def mix(a, h):
        if bug == "interp-alpha-swapped":
            return a * w + (1.0 - a) * h
        return a * h + (1.0 - a) * w

    hs, alphas = [], []
    for i, batches in enumerate(spec["schedule"]["post"]):
        h = (w if bug == "interp-local-from-global" else w0).copy()
        log("client_begin", "interp", "h", h, client=i, step=0)
        h = base.local_sgd(h, clients[i], batches, eta,
                           lambda s, x: log("step", "interp", "h", x,
                                            client=i, step=s),
                           opt=opts and opts.begin(1, i))
        log("client_end", "interp", "h", h, client=i)
        if mode == "fixed":
            alpha = hp["alpha"]
        else:
            c = raw[i]
            test = _split(c, "X_test", "y_test")
            on = (_split(c, "X", "y") if bug == "interp-select-on-train"
                  else test if select == "test" else _split(c, "X_val", "y_val"))
            losses = []
            for j in range(G + 1):
                a = j / G
                v = mix(a, h)
                loss = _losses(model, v, on, clients[i])[0]
                losses.append(loss)
                log("note", "interp", "alpha_j", [a], client=i, step=j)
                log("note", "interp", "select_loss", [loss], client=i, step=j)
                if test is not None:
                    tl, tm = _losses(model, v, test, clients[i])
                    log("note", "interp", "test_loss", [tl], client=i, step=j)
                    log("note", "interp", "test_mse", [tm], client=i, step=j)
            lowest = min(losses)
            ties = [j for j, L in enumerate(losses) if L == lowest]
            jbest = ties[-1] if bug == "interp-ties-to-larger" else ties[0]
            alpha = jbest / G
        log("note", "interp", "alpha", [alpha], client=i)
        log("note", "interp", "v_bar", mix(alpha, h), client=i)
        hs.append(h)
        alphas.append(alpha)
    return {"w": w, "v": hs, "alpha": alphas}
# SPDX-License-Identifier: GPL-3.0-or-later
