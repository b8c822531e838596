"""pfl_numpy_fedrod.py: FedRoD for the NumPy candidate (pfl_numpy.py loads
it), written from Chen and Chao, "On Bridging Generic and Personalized
Federated Learning for Image Classification" (ICLR 2022, arXiv 2107.00778,
Algorithm 1 with a linear personal head) and docs/algorithms/fedrod.md,
not from pflref's C code.

The network (pfl_numpy_moon's Chain of dense and relu/identity layers) is
a body f(x) (every layer before the last) and a generic head (the last
dense layer); w = (body, generic head) is averaged with weights n_i over
the round's clients.  Every client keeps a personal head (W_P, b_P) of the
generic head's shape.  Per batch, by hand:
    generic step:  w ← w − η ∇ mean_b −log softmax(z_G + log N_i)_y
                   (N_i the client's class counts over its training set,
                   or the spec's init.class_counts[i] when it gives them:
                   PFLlib counts one shuffled pass with drop_last; a class
                   with count 0 gets probability 0)
    personal step: (W_P, b_P) ← (W_P, b_P) − η ∇ mean_b CE(z_G + z_P, y),
                   with f(x) and z_G of the updated w (fedrod.features =
                   before: those of the forward pass before the generic
                   step), held fixed.
The personal heads start at 0 (fedrod.phi_p0 = generic: w0's head).

Client optimizers (opt.*, docs/optimizers.md): the two steps take two
optimizer objects of pfl_numpy_optim, as PFLlib's clientrod.py holds two
(self.optimizer over the generic model, opt_head over the personal head,
clientrod.py:16, :53, :59), each with its own state and opt.state's
lifetime (reset: new per client update; client: one pair per client;
server: one pair for all).  opt.decay_scope: shared decays the generic
model, personal the personal head, weights every tensor but the biases.

Batch normalisation (a layer list with batchnorm layers, through
pfl_numpy_layers.Layers): every forward of a local step is a training
pass (torch's train() mode), normalising with the batch's statistics and
moving the running statistics (bn.running = update): the generic step's
pass at w moves them before w steps; under fedrod.features = after the
personal step's features and z_G come from a second training pass at the
updated w, which moves them again; under before the first pass's are
reused (PFLlib's rep.detach(), out_g.detach()).  The buffers never step.
bn.aggregate = parameters_only (preset pfllib; PFLlib's send_models and
aggregate_parameters exchange parameters() only): a client's model starts
each update from w's parameters but the running statistics it left last
time (w0's at first), and w's running statistics are the first client's
of the round instead of the weighted sum.

Learning-rate decay (lr.*, PFLlib's -ld): clientrod.py:64-65 steps both
schedulers (the generic model's optimizer's and opt_head's) after each
train(), so in client i's update of round t both steps use η γ^t, or
η γ^(the rounds i trained in before) under lr.count = trainings (preset
pfllib).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "fedrod"
BUGS = ("fedrod-plain-ce", "fedrod-batch-counts", "fedrod-absent-clamp",
        "fedrod-features-swap", "fedrod-personal-alone",
        "fedrod-phi0-swap", "fedrod-phi-reset", "fedrod-uniform-weights",
        "fedrod-given-counts-ignored", "fedrod-opt-personal-plain",
        "fedrod-opt-one-state", "fedrod-bn-one-pass", "fedrod-lr-head-const",
        "fedrod-lr-per-round", "fedrod-keep-from-w")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _preset(name, base):
    if name == "paper":
        return {}
    if name == "pfllib":
        return {"fedrod.features": "before", "fedrod.phi_p0": "generic",
                "lr.count": "trainings", "bn.aggregate": "parameters_only"}
    raise base.Unsupported("preset %r for fedrod" % name)


def _softmax_grad(Z, y, logN=None):
    """rows p − e_y, p = softmax(Z + logN) (logN −inf: p = 0)."""
    A = Z if logN is None else Z + logN
    A = A - A.max(axis=1, keepdims=True)
    E = np.exp(A)
    E /= E.sum(axis=1, keepdims=True)
    E[np.arange(len(y)), y] -= 1.0
    return E


def _optimizers(spec, base, net, K, h, hb):
    """(new(slot, client), generic and personal decay masks) of the run's
    two optimizers, or None for plain SGD."""
    optim = importlib.import_module("pfl_numpy_optim")
    cfg = optim.options(spec)
    if optim.plain(cfg):
        return None
    if cfg["opt.method"] not in ("sgd", "adam", "adamw"):
        raise base.Unsupported("opt.method %r" % cfg["opt.method"])
    model = spec["model"]
    blocks = base.model_blocks(model)
    gen_blocks = [(n, o, o + z) for n, o, z, _ in blocks]
    P = base.parameter_count(model)
    buffers = np.zeros(P, dtype=bool)       # r_μ, r_v: never step
    for n, o, z, _ in blocks:
        if n.endswith(("running_mean", "running_var")):
            buffers[o:o + z] = True
    kh = K * h
    head_blocks = [("W_P", 0, kh)] + ([("b_P", kh, kh + K)] if hb else [])
    H = kh + (K if hb else 0)
    scope = cfg["opt.decay_scope"]
    if scope == "weights":
        gen_dec = optim.decay_scope(spec, cfg, blocks)
        head_dec = np.arange(H) < kh
    else:
        gen_dec = np.full(P, scope in ("all", "shared"))
        head_dec = np.full(H, scope in ("all", "personal"))
    kept = {}

    def new(slot, client):
        key = (slot, client if cfg["opt.state"] == "client" else None)
        if cfg["opt.state"] == "reset" or key not in kept:
            if slot == 0:
                o = optim.Optimizer(cfg, gen_blocks, gen_dec, buffers)
            else:
                o = optim.Optimizer(cfg, head_blocks, head_dec,
                                    np.zeros(H, dtype=bool))
            kept[key] = o
        return kept[key]
    return new


def run(spec, clients, w0, log, bug):
    base = _base()
    moon = importlib.import_module("pfl_numpy_moon")
    alg = spec["algorithm"]
    hp = _preset(alg.get("preset", "paper"), base)
    hp.update(alg.get("hyperparameters", {}))
    hp.update(alg.get("switches", {}))
    if hp.get("lr.scope", "all") != "all":
        raise base.Unsupported("fedrod with lr.scope %r" % hp["lr.scope"])
    decay = {"lr.schedule": hp.get("lr.schedule", "constant"),
             "lr.count": hp.get("lr.count", "rounds"),
             "lr.gamma": hp.get("lr.gamma"),
             "lr.step_rounds": hp.get("lr.step_rounds")}
    if bug == "fedrod-lr-per-round":
        decay["lr.count"] = "rounds"
    raw = spec["problem"].get("clients")
    if raw is None:
        raise base.Unsupported("fedrod needs inline clients")
    model = spec["model"]
    bn = model["kind"] == "layers" and any(
        Ly["type"].startswith("batchnorm") for Ly in model["layers"])
    if bn:      # the layer-list model with its training-mode passes
        layers = importlib.import_module("pfl_numpy_layers")
        lays = [layers.Layers(spec, c) for c in raw]
        Hd = lays[0].head_layer()
        if lays[0].loss != "cross_entropy":
            raise base.Unsupported("fedrod on a regression model")
        (hw0, hw1), hb = Hd["at"]["weight"], Hd["at"].get("bias")
        h, K, net, L = Hd["in"][0], Hd["out"], None, None
    else:
        net = moon.Chain(model)
        if not net.ce:
            raise base.Unsupported("fedrod on a regression model")
        _, (hw0, hw1), hb, h, K = net.layers[-1]
        L = len(net.layers)
    eta = hp["eta"]
    trained = [0] * len(raw)        # each client's train() calls so far
    before = hp.get("fedrod.features", "after") == "before"
    if bug == "fedrod-features-swap":
        before = not before
    generic0 = hp.get("fedrod.phi_p0", "zero") == "generic"
    if bug == "fedrod-phi0-swap":
        generic0 = not generic0
    w = np.array(w0, dtype=float)
    agg = hp.get("bn.aggregate", "average")
    if agg not in ("average", "parameters_only"):
        raise base.Unsupported("fedrod with bn.aggregate %r" % agg)
    # the running statistics each client keeps (parameters_only), else None
    mine = base.buffers_of(spec) if bn and agg == "parameters_only" else None
    stats = [w.copy() for _ in raw]     # each client's model's buffers
    new_opt = _optimizers(spec, base, net, K, h, hb is not None)

    def head0():
        if generic0:
            W = w0[hw0:hw1].reshape(K, h).copy()
            b = w0[hb[0]:hb[1]].copy() if hb is not None else None
        else:
            W, b = np.zeros((K, h)), (np.zeros(K) if hb is not None else None)
        return [W, b]

    w0 = np.array(w0, dtype=float)
    data = [(np.asarray(c["X"], float), np.asarray(c["y"]).astype(int))
            for c in raw]
    heads = [head0() for _ in raw]

    def flat(head):
        W, b = head
        return np.concatenate([W.ravel()] + ([b] if b is not None else []))

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        n_S = float(sum(len(data[i][0]) for i in rnd["clients"]))
        acc = np.zeros_like(w)
        first = None
        for i, batches in zip(rnd["clients"], rnd["batches"]):
            X, y = data[i]
            if bug == "fedrod-phi-reset":
                heads[i] = head0()
            W_P, b_P = heads[i]
            x = w.copy()
            if mine is not None and bug != "fedrod-keep-from-w":
                x[mine] = stats[i][mine]
            log("client_begin", "train", "w_local", x, round=t, client=i,
                step=0)
            # the two schedulers' step sizes of this train() call
            eta_g = eta * base.lr_factor(decay, t, trained[i])
            eta_p = eta if bug == "fedrod-lr-head-const" else eta_g
            trained[i] += 1
            if new_opt is not None:
                opt_g, opt_p = new_opt(0, i), new_opt(1, i)
                if bug == "fedrod-opt-one-state":
                    # one state object for both: the personal head's
                    # tensors kept under the generic head's names
                    opt_p.state = opt_g.state
                    names = [n for n, _, _ in opt_g.blocks]
                    names = names[len(names) - len(opt_p.blocks):]
                    opt_p.blocks = [(n, lo, hi) for n, (_, lo, hi)
                                    in zip(names, opt_p.blocks)]
            N = np.bincount(y, minlength=K).astype(float)
            given = spec.get("init", {}).get("class_counts")
            if given is not None and bug != "fedrod-given-counts-ignored":
                N = np.array(given[i], dtype=float)
            for s, batch in enumerate(batches, start=1):
                Xb, yb = X[batch], y[batch]
                nb = len(batch)
                counts = (np.bincount(yb, minlength=K).astype(float)
                          if bug == "fedrod-batch-counts" else N)
                if bug == "fedrod-absent-clamp":
                    counts = np.maximum(counts, 1.0)
                with np.errstate(divide="ignore"):
                    logN = np.log(counts)
                if bn:      # the training pass at x: z_G, f, its gradient
                    ZG, back = lays[i].outputs_and_backward(x, batch)
                    E = _softmax_grad(ZG, yb, None if bug == "fedrod-plain-ce"
                                      else logN)
                    g = back(E / nb)
                    F = lays[i].body_forward(x, batch).reshape(nb, h)
                    x = lays[i].track(x)        # its statistics move x's
                else:
                    acts = net.forward(x, Xb)
                    F, ZG = acts[L - 1], acts[L]
                    E = _softmax_grad(ZG, yb,
                                      None if bug == "fedrod-plain-ce"
                                      else logN)
                    g = np.zeros_like(x)
                    net.backward(x, acts, E, L, g, 1.0 / nb)
                if new_opt is not None:
                    x = opt_g.step(x, g, eta_g)
                else:
                    x = x - eta_g * g
                log("step", "train", "w_local", x, round=t, client=i, step=s)
                if not before and bn:   # a second training pass at new x
                    ZG, _ = lays[i].outputs_and_backward(x, batch)
                    F = lays[i].body_forward(x, batch).reshape(nb, h)
                    if bug != "fedrod-bn-one-pass":
                        x = lays[i].track(x)
                elif not before:
                    acts = net.forward(x, Xb)
                    F, ZG = acts[L - 1], acts[L]
                ZP = F @ W_P.T + (b_P if b_P is not None else 0.0)
                Z = ZP if bug == "fedrod-personal-alone" else ZG + ZP
                EP = _softmax_grad(Z, yb)
                gW, gb = (EP.T @ F) / nb, EP.sum(axis=0) / nb
                if new_opt is not None and bug != "fedrod-opt-personal-plain":
                    q = opt_p.step(flat([W_P, b_P]),
                                   flat([gW, gb if b_P is not None else None]),
                                   eta_p)
                    W_P = q[:K * h].reshape(K, h)
                    if b_P is not None:
                        b_P = q[K * h:]
                else:
                    W_P = W_P - eta_p * gW
                    if b_P is not None:
                        b_P = b_P - eta_p * gb
                log("step", "train", "phi_P", flat([W_P, b_P]), round=t,
                    client=i, step=s)
            heads[i] = [W_P, b_P]
            log("client_end", "train", "w_local", x, round=t, client=i)
            log("note", "train", "phi_P", flat(heads[i]), round=t, client=i)
            c = (1.0 / len(rnd["clients"]) if bug == "fedrod-uniform-weights"
                 else len(X) / n_S)
            acc += c * x
            stats[i] = x.copy()
            if first is None:
                first = i
        if mine is not None and first is not None:   # the first upload's
            acc[mine] = stats[base.first_upload(rnd, rnd["clients"])][mine]
        w = acc
        log("server", "train", "w", w, round=t)
    return {"w": w}
# SPDX-License-Identifier: GPL-3.0-or-later
