"""pfl_numpy_apfl.py: APFL for the NumPy candidate (pfl_numpy.py loads it).

Deng, Kamani, Mahdavi, "Adaptive Personalized Federated Learning", arXiv
2003.13461, Algorithm 1, read as shared/spec notes §6(c) does: the server
sends w to the round's clients U; client i copies it (w_i = w) and, for
each of its scheduled batches, with the values from before the step on
every right-hand side,

    mixture  v̄ = α_i v_i + (1 − α_i) w_i
    w step   w_i ← w_i − η ∇f_i(w_i)
    v step   v_i ← v_i − η α_i ∇f_i(v̄)            (∇ of f_i(v̄) in v_i)
    α step   α_i ← clip(α_i − η_α ⟨v_i − w_i, ∇f_i(v̄)⟩, 0, 1)   (adaptive)

then w = mean of the w_i over U.  v_i and α_i live on between rounds.

Switches (notes §6(f)):
  apfl.mix = output         FedTorch: the model is ŷ(x) = α v(x) + (1 − α) w_i(x)
                            and the loss is taken of ŷ; v's gradient is α
                            times the backward pass of v on ∂ℓ/∂ŷ, and
                            ∂/∂α = mean over the batch of (v(x) − w_i(x)) ∂ℓ/∂ŷ
  apfl.mix_uses_w = new     the mixture is formed after the w step
  apfl.alpha_rule = fedtorch
                            α moves once per round, at the first batch, after
                            both steps: α ← clip(α − η (Σ (v − w)(α g_v +
                            (1 − α) g_w) + 0.02 α), 0, 1), g_v and g_w the
                            mixture loss's gradients in v and in w
  apfl.variant = pfllib     PFLlib's clientapfl.py: per batch the w step, then
                            v ← v − η ∇f_i(v) on v's own loss, then (adaptive)
                            α ← clip(α − η_α ((v − w)·(α g_v + (1 − α) g_w)
                            + 0.02 α), 0, 1) at the new v, w with the two
                            gradients just taken; after the last batch
                            v ← (1 − α) w_i + α v; no v_bar note
  batch normalisation       (pfllib) each model's own training pass moves its
                            own running statistics
  bn.aggregate = parameters_only
                            (pfllib) PFLlib sends and averages parameters
                            only: w_i starts with the statistics client i's
                            model last left (the initial ones at first),
                            the end mixture leaves v's statistics, and the
                            server keeps the first received model's
  apfl.weights = samples    w = Σ n_i w_i / Σ n_j over U (PFLlib)
  lr.*                      client k's train() in round t steps w and v with
                            η c (pfl_numpy.lr_factor: γ^t, or γ^(k's own
                            trainings before) with lr.count = trainings)
                            and α with η_α c, or with η_α itself under
                            apfl.alpha_lr = constant (PFLlib's alpha_update
                            reads the undecayed learning rate)
  opt.*                     a client optimizer (pfl_numpy_optim) per
                            model, as PFLlib's clientapfl.py holds
                            optimizer (w_i, slot 0) and optimizer_per (v_i,
                            slot 1): each steps on its model's d in place
                            of x ← x − η d at the same η (lr.* included):
                            w_i's on ∇f_i(w_i), v_i's on α_i ∇f_i(v̄) (the
                            v step's whole gradient in v_i), or on ∇f_i(v_i)
                            under pfllib; the α steps read what they read
                            without one (the iterates the optimizers left),
                            and under pfllib alpha_update's p.grad: with
                            opt.clip = norm the gradients as
                            clip_grad_norm_ rescaled them in place before
                            step(), which leaves p.grad alone (its decay
                            and momentum are computed out of place)
                            opt.state: both new for each client update
                            (reset), client i's own pair (client), one
                            pair carried from client to client (server)
  preset pfllib             apfl.variant = pfllib, apfl.weights = samples,
                            apfl.alpha = adaptive, lr.count = trainings,
                            apfl.alpha_lr = constant, bn.aggregate =
                            parameters_only

The trajectory: round_begin w; per client client_begin w_local and v;
per step w_local, v and (adaptive) a note "alpha"; client_end w_local and
v; a note "v_bar" = α_i v_i + (1 − α_i) w_i with the client's own w_i;
server w.
"""
import sys

import numpy as np

ALGORITHM = "apfl"
BUGS = ("apfl-output-mix", "apfl-v-no-alpha", "apfl-mix-new-w",
        "apfl-alpha-new-iterates", "apfl-alpha-no-projection",
        "apfl-fedtorch-every-step", "apfl-pfllib-no-overwrite",
        "apfl-pfllib-alpha-unclipped")

DEFAULTS = {"apfl.alpha": "fixed", "apfl.mix": "parameter",
            "apfl.mix_uses_w": "old", "apfl.alpha_rule": "paper",
            "apfl.variant": "paper", "apfl.weights": "uniform",
            "apfl.alpha_lr": "decayed", "lr.schedule": "constant",
            "lr.count": "rounds", "bn.aggregate": "average"}
# FedTorch's training choices as one named bundle (explicit switches win).
PRESETS = {"paper": {},
           "fedtorch": {"apfl.mix": "output", "apfl.mix_uses_w": "new",
                        "apfl.alpha_rule": "fedtorch"},
           "pfllib": {"apfl.variant": "pfllib", "apfl.weights": "samples",
                      "apfl.alpha": "adaptive", "lr.count": "trainings",
                      "apfl.alpha_lr": "constant",
                      "bn.aggregate": "parameters_only"}}


def _host():
    """The running pfl_numpy module (its lr_factor): the script when
    pfl_numpy.py is __main__, else the imported module."""
    main = sys.modules.get("__main__")
    if main is not None and hasattr(main, "lr_factor"):
        return main
    import pfl_numpy
    return pfl_numpy


def outputs_and_backward(data, theta, batch):
    """(z, back): the outputs z of the batch (n_b × k) and back(E), the
    gradient Σ_j E_j ∂z_j/∂θ for per-sample output weights E (n_b × k)."""
    if hasattr(data, "outputs_and_backward"):          # a layer list
        return data.outputs_and_backward(theta, batch)
    X = data.X[batch]
    if hasattr(data, "body_forward"):                 # the mlp (identity)
        Phi = data.body_forward(theta, batch)
        W2 = data.part(theta, "W2", (data.k, data.h))
        b2 = data.part(theta, "b2", (data.k,))
        z = Phi @ W2.T + b2

        def back(E):
            g = data.body_backward(theta, batch, E)
            data.put(g, "W2", E.T @ Phi)
            data.put(g, "b2", E.sum(axis=0))
            return g
        return z, back
    d = data.d
    w = theta[:d]
    b = theta[d] if data.bias else 0.0
    z = (X @ w + b)[:, None]

    def back(E):
        g = X.T @ E[:, 0]
        return np.append(g, E[:, 0].sum()) if data.bias else g
    return z, back


def loss_slope(data, z, batch):
    """∂ℓ/∂z per sample for the outputs z (n_b × k)."""
    y = data.y[batch]
    if getattr(data, "s", None) is None:              # cross-entropy
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(batch)), y.astype(int)] -= 1.0
        return p
    return data.s * (z - y[:, None])


def grad_after_step(opt, d):
    """p.grad once clip_grad_norm_ and opt's step() have run on d: under
    opt.clip = norm rescaled by min(c/(‖d‖ + 10⁻⁶), 1) (torch's clamped
    coefficient) over the parameters (batchnorm's statistics are not
    parameters), else d; the step itself leaves p.grad as it found it."""
    if opt is None or opt.cfg["opt.clip"] != "norm":
        return d
    return opt.clip(d)


def run(spec, clients, w0, log, bug):
    hp = spec["algorithm"].get("hyperparameters", {})
    sw = dict(DEFAULTS)
    sw.update(PRESETS[spec["algorithm"].get("preset", "paper")])
    sw.update(spec["algorithm"].get("switches", {}))
    eta, alpha0 = float(hp["eta"]), float(hp["alpha"])
    eta_alpha = float(hp.get("eta_alpha", eta))
    adaptive = sw["apfl.alpha"] == "adaptive"
    fedtorch = sw["apfl.alpha_rule"] == "fedtorch"
    has_outputs = spec["model"]["kind"] != "quadratic"
    by_output = sw["apfl.mix"] == "output" or (bug == "apfl-output-mix"
                                               and has_outputs)
    after_w_step = sw["apfl.mix_uses_w"] == "new" or bug == "apfl-mix-new-w"
    pfllib = sw["apfl.variant"] == "pfllib"
    by_samples = sw["apfl.weights"] == "samples"

    w = w0.copy()
    v = [w0.copy() for _ in clients]
    alpha = [alpha0] * len(clients)
    buf = getattr(clients[0], "buffers", None)
    if sw["bn.aggregate"] not in ("average", "parameters_only"):
        raise _host().Unsupported("bn.aggregate %r" % sw["bn.aggregate"])
    mine = None                            # each client's self.model
    if sw["bn.aggregate"] == "parameters_only" and buf is not None \
            and buf.any():
        mine = [w0.copy() for _ in clients]
    lr_cfg = dict(sw, **hp)                # lr.schedule, lr.gamma, lr.count
    trained = [0] * len(clients)           # trainings of each client so far
    opts = _host().pfl_numpy_optim.for_run(spec)   # opt.*: None for SGD

    def step(opt, x, d, lr):
        """x after one step on d at lr: the optimizer's, or x − lr d."""
        return x - lr * d if opt is None else opt.step(x, d, lr)

    def mixture_grads(k, vk, wk, a, batch):
        """(g_v, g_w, dα): the mixture loss's gradients in v, in w (both
        without the factors α, 1 − α) and its derivative in α."""
        data = clients[k]
        if not by_output:
            vbar = a * vk + (1 - a) * wk
            g = data.grad(vbar, batch)
            return g, g, float(np.dot(vk - wk, g))
        zv, back_v = outputs_and_backward(data, vk, batch)
        zw, back_w = outputs_and_backward(data, wk, batch)
        E = loss_slope(data, a * zv + (1 - a) * zw, batch) / len(batch)
        return back_v(E), back_w(E), float(np.sum((zv - zw) * E))

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        U = sorted(rnd["clients"])
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        log("round_begin", "train", "w", w, round=t)
        sent = []
        for k in U:
            c = _host().lr_factor(lr_cfg, t, trained[k])   # lr.*
            trained[k] += 1
            eta_k = eta * c
            eta_alpha_k = eta_alpha if sw["apfl.alpha_lr"] == "constant" \
                else eta_alpha * c
            w_k = w.copy()
            if mine is not None:
                w_k = np.where(buf, mine[k], w_k)
            log("client_begin", "train", "w_local", w_k, round=t, client=k,
                step=0)
            log("client_begin", "train", "v", v[k], round=t, client=k, step=0)
            # optimizer (w_i's) and optimizer_per (v_i's), by opt.state
            opt_w = opts and opts.begin(0, k)
            opt_v = opts and opts.begin(1, k)
            for s, batch in enumerate(plan[k], start=1):
                a = alpha[k]
                g_own = clients[k].grad(w_k, batch)
                w_next = step(opt_w, w_k, g_own, eta_k)
                if pfllib:
                    # each model's pass moves its own running statistics
                    w_next = _host().track(clients[k], w_next)
                    g_v = clients[k].grad(v[k], batch)
                    v[k] = _host().track(clients[k],
                                         step(opt_v, v[k], g_v, eta_k))
                    if bug != "apfl-pfllib-alpha-unclipped":
                        g_own = grad_after_step(opt_w, g_own)
                        g_v = grad_after_step(opt_v, g_v)
                    w_k = w_next
                    log("step", "train", "w_local", w_k, round=t, client=k,
                        step=s)
                    log("step", "train", "v", v[k], round=t, client=k, step=s)
                    if adaptive:
                        push = np.dot(v[k] - w_k, a * g_v + (1 - a) * g_own)
                        a_new = a - eta_alpha_k * (float(push) + 0.02 * a)
                        alpha[k] = min(max(a_new, 0.0), 1.0)
                        log("note", "train", "alpha", [alpha[k]], round=t,
                            client=k, step=s)
                    continue
                w_mix = w_next if after_w_step else w_k
                g_v, g_w, d_alpha = mixture_grads(k, v[k], w_mix, a, batch)
                scale = 1.0 if bug == "apfl-v-no-alpha" else a
                if opt_v is None:
                    v_next = v[k] - eta_k * scale * g_v
                else:                      # the optimizer on d = α_i ∇f_i(v̄)
                    v_next = opt_v.step(v[k], scale * g_v, eta_k)
                log("step", "train", "w_local", w_next, round=t, client=k,
                    step=s)
                log("step", "train", "v", v_next, round=t, client=k, step=s)
                if adaptive:
                    if not fedtorch:
                        if bug == "apfl-alpha-new-iterates":
                            d_alpha = float(np.dot(v_next - w_next, g_v))
                        a_new = a - eta_alpha_k * d_alpha
                    elif s == 1 or bug == "apfl-fedtorch-every-step":
                        push = np.dot(v_next - w_next,
                                      a * (a * g_v) + (1 - a) * ((1 - a) * g_w))
                        a_new = a - eta_k * (float(push) + 0.02 * a)
                    else:
                        a_new = a
                    if bug != "apfl-alpha-no-projection":
                        a_new = min(max(a_new, 0.0), 1.0)
                    alpha[k] = a_new
                    log("note", "train", "alpha", [a_new], round=t, client=k,
                        step=s)
                w_k, v[k] = w_next, v_next
            if pfllib and bug != "apfl-pfllib-no-overwrite":
                mixed = (1 - alpha[k]) * w_k + alpha[k] * v[k]
                v[k] = mixed if mine is None else np.where(buf, v[k], mixed)
            if mine is not None:
                mine[k] = w_k.copy()
            log("client_end", "train", "w_local", w_k, round=t, client=k)
            log("client_end", "train", "v", v[k], round=t, client=k)
            if not pfllib:
                log("note", "train", "v_bar",
                    alpha[k] * v[k] + (1 - alpha[k]) * w_k, round=t, client=k)
            share = clients[k].n if by_samples else 1.0
            sent.append((share, w_k))
        total = sum(c for c, _ in sent)
        w = sum(c * w_k for c, w_k in sent) / total
        if mine is not None and U:         # the first received model's
            w = np.where(buf, mine[_host().first_upload(rnd, U)], w)
        log("server", "train", "w", w, round=t)
    return {"w": w, "v": v, "alpha": alpha}
# SPDX-License-Identifier: GPL-3.0-or-later
