# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_fedala.py: FedALA for the NumPy candidate (pfl_numpy.py loads
it), written from Zhang, Hua, Wang, Song, Xue, Ma, Guan, "FedALA: Adaptive
Local Aggregation for Personalized Federated Learning" (AAAI 2023, arXiv
2212.01197v4, Algorithm 1 and the ALA module) and the authors' ALA.py, not
from pflref's C code.

The server is FedAvg's: Theta <- sum_i n_i Theta_i / sum_i n_i over the
round's participants.  Each client keeps its local model Theta_i (all
start at w0) and element-wise weights W_i (ones).  Before its local
training a participant forms its start point from Theta (the round-start
global model):
    Theta_hat = Theta_i + (Theta - Theta_i) * W_i   on the top p layers
    Theta_hat = Theta                               below them
and learns W_i on its sample D_i^s (the round's "personal" batch lists):
per batch b, W_i <- clip(W_i - eta_w * grad L(Theta_hat; b) * (Theta -
Theta_i), 0, 1), then Theta_hat is formed again.  In the second round
(t = 2 in the box's count, round 1 from 0) ALA repeats the pass until more
than k losses are recorded (one per pass: the loss of its last batch,
taken before that batch's step) and the population std of the last k is
below the threshold (at most max_epochs passes); in later rounds it makes
one pass, whether the client ran ALA before or not.  Nothing happens in
the first round.
Then the scheduled SGD steps from Theta_hat give the new Theta_i.
What the run returns as the clients' personal models ("v") is Algorithm
1's output, the models ALA produced: for each client the Theta_hat of its
last ALA, taken before that round's local training (the start model w0 if
it never had one; where ALA did nothing, its local model as it stood).
The authors' and PFLlib's servers evaluate the same models: evaluate()
runs right after send_models, before the clients train.
Switches (the authors' code; presets official and pfllib):
  fedala.skip = sum_first  no ALA (not even the overwrite of the lower
                           layers) when the first parameter tensor's
                           entries of Theta - Theta_i sum to 0
  fedala.p_unit = tensors  p counts parameter tensors (0: all of them)
  fedala.start = own       the repeated passes happen in a client's first
                           ALA, whatever the round (ALA.py's flag kept by
                           each client's ALA object; the three presets)
  fedala.ala_clients = all (PFLlib's server, preset pfllib_run): at the
                           start of every round every client, in id order,
                           runs ALA (its local model becomes Theta_hat, its
                           W_i learns, its first ALA is spent), whether it
                           trains in the round or not; then the
                           participants train from their local models.
                           The round's personal lists are then the
                           participants' samples followed by the other
                           clients' (ascending id).
Learning-rate decay (lr.*, PFLlib's -ld, clientala.py:48-49): the local
SGD's alpha of client i in round t is alpha gamma^t, or alpha gamma^(the
rounds i trained in before) under lr.count = trainings (presets pfllib,
pfllib_run); ALA's eta_w is a plain float in PFLlib's ALA (its torch
optimizer has lr = 0) and stays.
Batch normalisation (a regression layer list with batchnorm layers): only
with bn.aggregate = parameters_only (the three presets set it), as the
authors' ALA.py and PFLlib's server treat it: ALA only touches
parameters(), so the running means and variances are not weighed, do not
count as tensors of p and are not written into the start point, which
keeps the client's own; the passes that learn W_i run on a throw-away
copy of the client's model in training mode (batch statistics; whatever
that copy's statistics do is thrown away with it), or, under
fedala.ala_mode = pfllib (presets pfllib, pfllib_run), in the mode PFLlib
leaves the model in: its server evaluates every client right after handing
out the model each round (model.eval()) and only training switches back
(model.train()), so from the second round on a client that sat out the
previous round runs its passes in evaluation mode, normalising with its own
running statistics, which those passes neither move nor differentiate
through; the client's local
steps move its own statistics; the server averages the parameters and
takes the running statistics of the round's first participant (a
deepcopy of the first upload).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedala"
BUGS = ("fedala-no-clip", "fedala-clip-upper-only", "fedala-w-no-diff",
        "fedala-w-lr-alpha", "fedala-hat-swapped", "fedala-hat-stale",
        "fedala-lower-keep-local", "fedala-p-from-input",
        "fedala-no-start-phase", "fedala-start-every-round",
        "fedala-start-flipped", "fedala-stop-sample-std", "fedala-stop-at-k",
        "fedala-loss-mean", "fedala-skip-ignored", "fedala-w-reset",
        "fedala-uniform-server", "fedala-ala-participants-only",
        "fedala-outsider-model-kept", "fedala-lr-per-round",
        "fedala-bn-start-from-global", "fedala-bn-server-average",
        "fedala-bn-ala-tracks", "fedala-report-trained",
        "fedala-ala-mode-ignored", "fedala-eval-gap-ignored")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    base = _base()
    alg = spec["algorithm"]
    cfg = {"fedala.threshold": 0.1, "fedala.k": 10,
           "fedala.max_epochs": 1000, "fedala.eval_gap": 1,
           "fedala.skip": "first_round",
           "fedala.p_unit": "layers", "fedala.ala_clients": "participants",
           "fedala.start": "round2", "fedala.ala_mode": "train"}
    cfg["bn.aggregate"] = "average"
    code = {"fedala.skip": "sum_first", "fedala.p_unit": "tensors",
            "fedala.start": "own", "bn.aggregate": "parameters_only"}
    pfllib = dict(code, **{"lr.count": "trainings",
                           "fedala.ala_mode": "pfllib"})
    presets = {"official": code, "pfllib": pfllib,
               "pfllib_run": dict(pfllib, **{"fedala.ala_clients": "all"})}
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise base.Unsupported("preset %r for fedala" % preset)
        cfg.update(presets[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    if cfg.get("lr.scope", "all") != "all":
        raise base.Unsupported("fedala with lr.scope %r" % cfg["lr.scope"])
    return cfg


def _tensors(spec):
    """The model's parameter tensors from the input: (offset, size, layer);
    a layer list's running statistics are no parameters and are left
    out, its layers numbered in order of appearance."""
    base = _base()
    kind = spec["model"]["kind"]
    if kind == "layers":
        out, seen = [], []
        for name, off, size, _ in base.model_blocks(spec["model"]):
            if name.endswith(("running_mean", "running_var")):
                continue
            layer = name.rsplit(".", 1)[0]
            if layer not in seen:
                seen.append(layer)
            out.append((off, size, seen.index(layer)))
        return out
    if kind not in ("linear", "mlp"):
        raise base.Unsupported("fedala on a %s model" % kind)
    return [(off, size, 1 if "head" in groups and "input" not in groups
             else 0)
            for _, off, size, groups in base.model_blocks(spec["model"])]


def _range(spec, cfg, bug):
    """True on the entries ALA weighs."""
    tensors = _tensors(spec)
    p = int(cfg["fedala.p"])
    if cfg["fedala.p_unit"] == "tensors":
        chosen = tensors if p == 0 else tensors[-p:]
        if bug == "fedala-p-from-input" and p > 0:
            chosen = tensors[:p]
    else:
        top = max(layer for _, _, layer in tensors)
        keep = (lambda layer: layer < p) if bug == "fedala-p-from-input" \
            else (lambda layer: layer > top - p)
        chosen = [t for t in tensors if keep(t[2])]
    mask = np.zeros(_base().parameter_count(spec["model"]), dtype=bool)
    for off, size, _ in chosen:
        mask[off:off + size] = True
    return mask


def _loss(data, theta, batch):
    """The batch-mean loss of a regression model."""
    if hasattr(data, "losses"):       # a layer list, in training mode
        return float(np.mean(data.losses(theta, data.X[batch],
                                          data.y[batch])))
    if hasattr(data, "body_forward"):
        z = data.body_forward(theta, batch) @ data.part(
            theta, "W2", (1, data.h)).T + data.part(theta, "b2", (1,))
        z = z[:, 0]
    else:
        z = data.X[batch] @ theta[:data.d]
        if data.bias:
            z = z + theta[data.d]
    return 0.5 * data.s * float(np.mean((z - data.y[batch]) ** 2))


def _eval_loss_grad(data, theta, batch):
    """(loss, gradient) of a layer list in evaluation mode: every
    batchnorm layer normalises with theta's running statistics, constants
    of the pass, so its backward is u = gamma x_hat + beta with x_hat =
    (a - r_mu)/s, s = sqrt(r_v + eps) fixed: dL/da = gamma dL/du / s."""
    kept = data.stats
    X, y = data.X[batch], data.y[batch]
    z, caches = data.forward(theta, X, train=False)
    data.stats = kept
    G = data.signal(z, y)
    g = np.zeros(data.P)
    for L, cache in zip(reversed(data.layers), reversed(caches)):
        if L["type"].startswith("batchnorm"):
            xh, s, axes, view = (cache["xh"], cache["s"], cache["axes"],
                                 cache["view"])
            c = L["in"][0]
            data.put(g, L, "weight", (G * xh).sum(axis=axes))
            data.put(g, L, "bias", G.sum(axis=axes))
            gamma = data.part(theta, L, "weight", (c,))
            G = G * (gamma / s).reshape(view)
        else:
            G = data.backward(theta, L, cache, G, g)
    return float(np.mean(data.terms(z, y))), g


def _converged(losses, cfg, bug):
    k = int(cfg["fedala.k"])
    if len(losses) < k or (len(losses) == k and bug != "fedala-stop-at-k"):
        return False
    ddof = 1 if bug == "fedala-stop-sample-std" else 0
    return float(np.std(losses[-k:], ddof=ddof)) < cfg["fedala.threshold"]


def _one_pass(data, hat, diff, base_i, W, mask, passes, eta_w, bug, own,
              evaluated=False):
    """One pass over D_i^s: returns (hat, the loss recorded); evaluated:
    the copy is in evaluation mode."""
    seen = []
    first = hat.copy()
    for batch in passes:
        at = first if bug == "fedala-hat-stale" else hat
        if evaluated and hasattr(data, "losses"):
            loss, g = _eval_loss_grad(data, at, batch)
            seen.append(loss)
        else:
            seen.append(_loss(data, at, batch))
            g = data.grad(at, batch)
        scale = np.ones_like(diff) if bug == "fedala-w-no-diff" else diff
        W[mask] = W[mask] - eta_w * g[mask] * scale[mask]
        if bug != "fedala-no-clip":
            W[mask] = np.maximum(W[mask], 0.0)
            if bug != "fedala-clip-upper-only":
                W[mask] = np.minimum(W[mask], 1.0)
        hat = hat.copy()
        if bug == "fedala-bn-ala-tracks" and own is not None and \
                not evaluated:
            hat = data.track(hat)
        hat[mask] = base_i[mask] + diff[mask] * W[mask]
    return hat, (float(np.mean(seen)) if bug == "fedala-loss-mean"
                 else seen[-1])


def _ala(data, theta, theta_i, W, mask, passes, first_time, cfg, bug, own,
         evaluated=False):
    """(Theta_hat, passes made) of one ALA; W is learned in place; own:
    the running statistics, which stay theta_i's (None: no such entry)."""
    diff = theta - theta_i
    base_i = theta_i
    hat = theta_i if bug == "fedala-lower-keep-local" else theta
    hat = hat.copy()
    if own is not None and bug != "fedala-bn-start-from-global":
        hat[own] = theta_i[own]
    if bug == "fedala-hat-swapped":
        base_i, diff = theta, theta_i - theta
    hat[mask] = base_i[mask] + diff[mask] * W[mask]
    eta_w = cfg["eta"] if bug == "fedala-w-lr-alpha" else cfg["fedala.eta"]
    losses = []
    while True:
        hat, loss = _one_pass(data, hat, diff, base_i, W, mask, passes,
                              eta_w, bug, own, evaluated)
        losses.append(loss)
        if not first_time or _converged(losses, cfg, bug):
            break
        if len(losses) >= int(cfg["fedala.max_epochs"]):
            break
    return hat, len(losses)


def _skips(spec, t, theta, theta_i, cfg, bug):
    if t == 0:
        return True
    if cfg["fedala.skip"] == "sum_first" and bug != "fedala-skip-ignored":
        off, size, _ = _tensors(spec)[0]
        return float(np.sum(theta[off:off + size] - theta_i[off:off + size])) \
            == 0.0
    return False


def run(spec, clients, w0, log, bug):
    cfg = _config(spec)
    mask = _range(spec, cfg, bug)
    base = _base()
    own = getattr(clients[0], "buffers", None)
    if own is not None and not own.any():
        own = None
    if own is not None and cfg["bn.aggregate"] != "parameters_only":
        raise base.Unsupported("fedala with batch normalisation under "
                               "bn.aggregate %r" % cfg["bn.aggregate"])
    theta = np.array(w0, dtype=float)
    local = [theta.copy() for _ in clients]
    latest = [theta.copy() for _ in clients]    # each client's last Theta_hat
    weights = [np.ones_like(theta) for _ in clients]
    started = set()
    everyone = (cfg["fedala.ala_clients"] == "all"
                and bug != "fedala-ala-participants-only")
    decay = {"lr.schedule": cfg.get("lr.schedule", "constant"),
             "lr.count": cfg.get("lr.count", "rounds"),
             "lr.gamma": cfg.get("lr.gamma"),
             "lr.step_rounds": cfg.get("lr.step_rounds")}
    if bug == "fedala-lr-per-round":
        decay["lr.count"] = "rounds"
    trained = [0] * len(clients)    # each client's train() calls so far
    # opt.*: the local training's optimizer (clientala.py's
    # self.optimizer); ALA's W_i steps stay Eq. (5)'s own
    opts = base.pfl_numpy_optim.for_run(spec)     # None: plain SGD
    last_trained = {}               # the round each client last trained in

    def adapt(t, i, passes):
        """Client i's ALA in round t: its Theta_hat (notes logged)."""
        if bug == "fedala-w-reset":
            weights[i] = np.ones_like(theta)
        made = 0
        hat = local[i].copy()
        if not _skips(spec, t, theta, local[i], cfg, bug):
            per_client = cfg["fedala.start"] == "own"
            if bug == "fedala-start-flipped":
                per_client = not per_client
            first = i not in started if per_client else t == 1
            if bug == "fedala-no-start-phase":
                first = False
            if bug == "fedala-start-every-round":
                first = True
            # the model's mode: eval() by the last evaluation (PFLlib's
            # server evaluates after the hand-out in the rounds 0, g, 2g,
            # ...: g = fedala.eval_gap), unless the client trained since
            g = int(cfg["fedala.eval_gap"])
            if bug == "fedala-eval-gap-ignored":
                g = 1
            evaluated = (cfg["fedala.ala_mode"] == "pfllib"
                         and bug != "fedala-ala-mode-ignored"
                         and g * ((t - 1) // g) > last_trained.get(i, -1))
            hat, made = _ala(clients[i], theta, local[i], weights[i],
                             mask, passes, first, cfg, bug, own, evaluated)
            started.add(i)
        log("note", "train", "ala_epochs", [made], round=t, client=i)
        log("note", "train", "W_i", weights[i], round=t, client=i)
        latest[i] = hat
        return hat

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", theta, round=t)
        idle = [i for i in range(len(clients)) if i not in rnd["clients"]]
        owners = list(rnd["clients"]) + (idle if everyone else [])
        samples = dict(zip(owners, rnd.get("personal", [None] * len(owners))))
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        uploads = {}
        ready = {}
        if everyone:          # every client adapts before anyone trains
            for i in range(len(clients)):
                ready[i] = adapt(t, i, samples.get(i))
                if i in idle:
                    if bug != "fedala-outsider-model-kept":
                        local[i] = ready[i]
                    log("note", "train", "theta_hat", local[i], round=t,
                        client=i)
        for i in sorted(plan):
            batches = plan[i]
            hat = ready[i] if everyone else adapt(t, i, samples.get(i))
            log("client_begin", "train", "theta_i", hat, round=t, client=i,
                step=0)
            x = hat
            alpha = cfg["eta"] * base.lr_factor(decay, t, trained[i])
            trained[i] += 1
            opt = opts.begin(0, i) if opts is not None else None
            for s, batch in enumerate(batches, start=1):
                g = clients[i].grad(x, batch)
                x = opt.step(x, g, alpha) if opt is not None else x - alpha * g
                x = base.track(clients[i], x)   # its statistics move x's
                log("step", "train", "theta_i", x, round=t, client=i, step=s)
            log("client_end", "train", "theta_i", x, round=t, client=i)
            local[i] = x
            uploads[i] = x
        n = {i: (1.0 if bug == "fedala-uniform-server" else clients[i].n)
             for i in uploads}
        total = sum(n.values())
        theta = sum(n[i] / total * uploads[i] for i in sorted(uploads))
        if own is not None and uploads and bug != "fedala-bn-server-average":
            # a deepcopy of the first upload, its parameters averaged
            theta = np.where(own, uploads[base.first_upload(rnd, rnd["clients"])], theta)
        log("server", "train", "w", theta, round=t)
        for i in rnd["clients"]:
            last_trained[i] = t
    if bug == "fedala-report-trained":
        return {"w": theta, "v": np.array(local)}
    return {"w": theta, "v": np.array(latest)}
