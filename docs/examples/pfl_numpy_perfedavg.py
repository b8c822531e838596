"""pfl_numpy_perfedavg.py: Per-FedAvg for the NumPy candidate pfl_numpy.py.

Written from the paper (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, arXiv
2002.07948, Algorithm 1 and its FO / HF variants) and the specification
notes §4, not from pflref's C code.

Round k, for each user i of A_k (ascending), starting from w_k; local step t
reads the three consecutive batches 3(t−1), 3(t−1)+1, 3(t−1)+2 of the
user's list as D_t, D′_t, D″_t:

    w̃   = w − α ∇f_i(w; D_t)                      (the MAML inner step)
    q   = ∇f_i(w̃; D′_t)
    exact: w ← w − β (I − α ∇²f_i(w; D″_t)) q
    fo:    w ← w − β q
    hf:    w ← w − β (q − α d),
           d = [∇f_i(w + δq; D″_t) − ∇f_i(w − δq; D″_t)] / (2δ)

then w_{k+1} = (1/|A_k|) Σ w^i (perfedavg.weights = uniform) or
Σ (n_i / Σ_{A_k} n_j) w^i (samples).  After training, each client's
personalised model is one step θ_i = w − α ∇f_i(w; D) on its first post
batch (perfedavg.eval = one_alpha_step), followed by θ_i − β ∇f_i(θ_i; D₂)
on the second with alpha_then_beta.

Learning-rate decay (lr.schedule, pfl_numpy.lr_factor): local step t of a
round takes α c and β c; lr.scope = no_beta keeps β (PFLlib 487a29e,
clientperavg.py: step(beta=self.beta), self.beta a float set in __init__).
The personalisation takes the undecayed α, β (perfedavg.eval_lr = initial)
or user i's after all its scheduler steps (decayed: PFLlib's
train_one_step calls optimizer.step(), the decayed lr).

Hessian-vector products: the quadratic and linear models give their
Hessian matrix (pfl_numpy's hessian(batch)); the mlp (identity activation,
squared loss) differentiates its gradient along v in forward mode
(mlp_hvp below); a layer list runs its backward pass with tangents
(pfl_numpy_layers.Layers.hvp, Pearlmutter's R-operator).

Client optimizer (opt.*; pfl_numpy_optim's Optimizer, one per client as
opt.state says, new at each train() call under reset).  The paper's
reading (perfedavg.opt_steps = meta): the optimizer takes the outer step,
on the meta-gradient estimate d = q − α H q (FO: q) with step size β; the
inner step w̃ = w − α ∇f(w; D) is part of the objective F(w) = f(w − α
∇f(w)) and stays plain.  perfedavg.opt_steps = both is PFLlib's
clientperavg.py, where the one optimizer object makes the inner step too
(optimizer.step() with lr α, then, after the parameters are put back,
optimizer.step(beta=β)): its state (momentum buffer, Adam's moments and
count) sees both steps.  The personalisation stays plain (§5).

Batch normalisation's running statistics (bn.running = update, torch's
train()): the module is the one model the client trains, so every
training-mode forward moves its buffers: the pass at w on D, the pass at w̃
on D′ (the parameters are put back afterwards, the buffers are not), and
the D″ forwards (exact: one at w; HF: at w + δq, then at w − δq).  The
personalisation's forward at θ_i moves θ_i's.

bn.aggregate = parameters_only (PFLlib's send_models and
aggregate_parameters move parameters() only; preset pfllib): a user's
model starts each update from w's parameters with the running statistics
it last left (w0's at first), the server's w takes the first
participant's running statistics (its parameters the mean as before), and
the personalisation starts θ_i from w's parameters with user i's own.

Bugs (--bug NAME; tests/detection/bugs-perfedavg.json):
  perfedavg-hf-around-w-tilde    HF's finite difference around w̃, not w
  perfedavg-shared-batch         q taken on D (D and D′ the same batch)
  perfedavg-eval-two-steps       two personalisation steps (α, then β)
                                 where one α step is configured
  perfedavg-no-restore           the β step applied to w̃ (two plain SGD
                                 steps per local step)
  perfedavg-hessian-dropped      the FO step where exact or hf is configured
  perfedavg-hessian-at-w-tilde   the exact Hessian taken at w̃
  perfedavg-hessian-on-d-prime   the Hessian-vector product on D′, not D″
  perfedavg-samples-weights      n_i-weighted server where uniform is
                                 configured
  perfedavg-opt-inner-step       the inner α step through the client
                                 optimizer where it takes the meta step
                                 alone (opt_steps = meta)
  perfedavg-opt-two-states       opt_steps = both with a second optimizer
                                 for the α step (its own state) where the
                                 code steps one object twice
  perfedavg-bn-d-prime-frozen    the D′ pass at w̃ moves no running
                                 statistic (a forward taken on a copy)
  perfedavg-bn-eval-frozen       the personalisation's pass moves no
                                 running statistic
  perfedavg-keep-post-from-w     under parameters_only the personalisation
                                 starts from w's running statistics
"""
import sys

import numpy as np

ALGORITHM = "perfedavg"
BUGS = ("perfedavg-hf-around-w-tilde", "perfedavg-shared-batch",
        "perfedavg-eval-two-steps", "perfedavg-no-restore",
        "perfedavg-hessian-dropped", "perfedavg-hessian-at-w-tilde",
        "perfedavg-hessian-on-d-prime", "perfedavg-samples-weights",
        "perfedavg-opt-inner-step", "perfedavg-opt-two-states",
        "perfedavg-bn-d-prime-frozen", "perfedavg-bn-eval-frozen",
        "perfedavg-keep-post-from-w")

DEFAULTS = {"perfedavg.variant": "exact", "perfedavg.weights": "uniform",
            "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "one",
            "lr.schedule": "constant", "lr.count": "rounds",
            "lr.scope": "all", "perfedavg.eval_lr": "initial",
            "perfedavg.opt_steps": "meta", "bn.running": "update",
            "bn.running_var": "unbiased", "bn.aggregate": "average"}
# PFLlib's reading as a named bundle (explicit switches win;
# notes-pfllib-as-run §2.3: FO, n_i weights, one α step, train() twice a
# round, each client's -ld scheduler stepped when it trains; β never
# decays, the personalisation's α does: clientperavg.py at 487a29e).  Other
# presets are refused: give their switches.
PRESETS = {("perfedavg", "paper"): {},
           ("perfedavg", "pfllib"): {
               "perfedavg.variant": "fo", "perfedavg.weights": "samples",
               "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "two",
               "lr.count": "trainings", "lr.scope": "no_beta",
               "perfedavg.eval_lr": "decayed", "perfedavg.opt_steps": "both",
               "bn.aggregate": "parameters_only"}}


def _host():
    """The pfl_numpy module whose classes built the clients: the running
    script when pfl_numpy.py is __main__ (importing it at load time would be
    circular: it loads this file while it starts), else the module."""
    main = sys.modules.get("__main__")
    if main is not None and hasattr(main, "Unsupported") and hasattr(main, "Mlp"):
        return main
    import pfl_numpy
    return pfl_numpy


def mlp_hvp(model, theta, batch, v):
    """∇²f(θ; batch) v for the identity-activation mlp with k = 1 and loss
    (s/2)(ŷ − y)² per sample: the directional derivative of the gradient
        g_W2 = s r a,  g_b2 = s r,  g_W1 = s r W2ᵀ xᵀ,  g_b1 = s r W2ᵀ
    (a = W1 x + b1, r = W2 a + b2 − y) along v = (V1, c1, V2, c2):
        ȧ = V1 x + c1,  ṙ = V2 a + W2 ȧ + c2,
        d g_W2 = s (ṙ a + r ȧ),  d g_b2 = s ṙ,
        d g_W1 = s (ṙ W2 + r V2)ᵀ xᵀ,  d g_b1 = s (ṙ W2 + r V2)ᵀ,
    each averaged over the batch."""
    if model.s is None:
        raise _host().Unsupported("Hessian-vector product of the "
                                    "cross-entropy mlp")
    h, d = model.h, model.d
    W1 = model.part(theta, "W1", (h, d))
    b1 = model.part(theta, "b1", (h,))
    W2 = model.part(theta, "W2", (1, h))
    b2 = model.part(theta, "b2", (1,))
    V1 = model.part(v, "W1", (h, d))
    c1 = model.part(v, "b1", (h,))
    V2 = model.part(v, "W2", (1, h))
    c2 = model.part(v, "b2", (1,))
    X, y = model.X[batch], model.y[batch]
    A = X @ W1.T + b1                      # n_b × h
    r = (A @ W2.T)[:, 0] + b2[0] - y       # n_b
    A_dot = X @ V1.T + c1                  # n_b × h
    r_dot = (A @ V2.T)[:, 0] + (A_dot @ W2.T)[:, 0] + c2[0]
    s, nb = model.s, len(batch)
    delta = s * (np.outer(r_dot, W2[0]) + np.outer(r, V2[0]))   # n_b × h
    out = np.zeros(model.P)
    model.put(out, "W1", delta.T @ X / nb)
    model.put(out, "b1", delta.sum(axis=0) / nb)
    model.put(out, "W2", s * (r_dot @ A + r @ A_dot) / nb)
    model.put(out, "b2", np.array([s * r_dot.sum() / nb]))
    return out


def bn_hvp(model, theta, batch, v):
    """∇²f(θ; batch) v for the mlp with a training-mode BN layer (the
    pfl_numpy_fedbn BnMlp): the directional derivative (ẋ) along v of its
    gradient, batch statistics included,
        ȧ = X V1ᵀ + v_b1,  μ̇ = mean ȧ,  (s²)˙ = mean 2 (a − μ)(ȧ − μ̇),
        ṡ = (s²)˙ / (2s),  x̂˙ = (ȧ − μ̇)/s − x̂ ṡ/s,
        u̇ = v_γ x̂ + γ x̂˙ + v_β,  φ̇ = σ'(u) u̇,  ż = φ̇ W2ᵀ + φ V2ᵀ + v_b2,
        Ė = the loss's ∂²ℓ/∂z² ż = s ż (squared losses only), /m,
        g_W2˙ = Ėᵀ φ + Eᵀ φ̇,  G = σ'(u) E W2,  Ġ = σ'(u) (Ė W2 + E V2),
        g_γ˙ = Σ (Ġ x̂ + G x̂˙),  g_β˙ = Σ Ġ,
        dA = (γ/s)(G − mean G − x̂ mean(G x̂)), and its derivative,
        g_W1˙ = dA˙ᵀ X,  g_b1˙ = Σ dA˙;  the running statistics' entries 0."""
    h, d, k = model.h, model.d, model.k
    if model.loss == "cross_entropy":
        raise _host().Unsupported("Hessian-vector product of the "
                                  "cross-entropy BN mlp")
    P = lambda w, name, shape: model.part(w, name, shape)   # noqa: E731
    X, m = model.X[batch], len(batch)
    W1, V1 = P(theta, "W1", (h, d)), P(v, "W1", (h, d))
    gam, vgam = P(theta, "bn_gamma", (h,)), P(v, "bn_gamma", (h,))
    W2, V2 = P(theta, "W2", (k, h)), P(v, "W2", (k, h))
    # a − μ and ȧ − μ̇ (b1 and v_b1 cancel in them: the batch mean removes
    # a bias before a training-mode BN)
    Ac = X @ W1.T
    Ac = Ac - Ac.mean(axis=0)
    Adc = X @ V1.T
    Adc = Adc - Adc.mean(axis=0)
    var = (Ac * Ac).mean(axis=0)
    vard = 2.0 * (Ac * Adc).mean(axis=0)
    s = np.sqrt(var + model.eps)
    sd = vard / (2.0 * s)
    xh = Ac / s
    xhd = Adc / s - xh * sd / s
    U = gam * xh + P(theta, "bn_beta", (h,))
    Ud = vgam * xh + gam * xhd + P(v, "bn_beta", (h,))
    mask = (U > 0.0) if model.relu else np.ones_like(U, dtype=bool)
    Phi, Phid = np.where(mask, U, 0.0), np.where(mask, Ud, 0.0)
    Z = Phi @ W2.T + P(theta, "b2", (k,))
    Zd = Phid @ W2.T + Phi @ V2.T + P(v, "b2", (k,))
    scale = 2.0 if model.loss == "squared" else 1.0
    E, Ed = scale * (Z - model.y[batch][:, None]), scale * Zd
    E, Ed = E / m, Ed / m
    G = np.where(mask, E @ W2, 0.0)
    Gd = np.where(mask, Ed @ W2 + E @ V2, 0.0)
    c = G - G.mean(axis=0) - xh * (G * xh).mean(axis=0)
    cd = (Gd - Gd.mean(axis=0) - xhd * (G * xh).mean(axis=0)
          - xh * (Gd * xh + G * xhd).mean(axis=0))
    dAd = (vgam / s - gam * sd / s ** 2) * c + gam / s * cd
    out = np.zeros(model.P)
    model._put(out, "W2", Ed.T @ Phi + E.T @ Phid)
    model._put(out, "b2", Ed.sum(axis=0))
    model._put(out, "bn_gamma", (Gd * xh + G * xhd).sum(axis=0))
    model._put(out, "bn_beta", Gd.sum(axis=0))
    model._put(out, "W1", dAd.T @ X)
    model._put(out, "b1", dAd.sum(axis=0))
    return out


def _grad(model, theta, batch):
    """The batch gradient (the BN mlp's grad also returns its batch
    statistics, which Per-FedAvg never uses: it moves no running
    statistic)."""
    g = model.grad(theta, batch)
    return g[0] if isinstance(g, tuple) else g


def _forward_stats(model, theta, batch):
    """The training-mode forward of theta on batch, for its batch
    statistics: the BN mlp's (mean, biased variance, m) from its grad, a
    layer list's kept in the model (Layers.track reads them), None for a
    model without batch normalisation (no forward: a layer list with
    dropout would take a training pass's mask for it, a pass torch does
    not make)."""
    if hasattr(model, "track"):
        if not np.any(model.buffers):   # no running statistics to move
            return None
        model.grad(theta, batch)
        return "layers"
    if hasattr(model, "running"):
        _, mean, var, m = model.grad(theta, batch)
        return mean, var, m
    return None


def _moved(model, buffers, stats, biased):
    """The vector `buffers` with its running statistics moved by stats
    (torch: r ← (1 − ρ) r + ρ · statistic)."""
    if stats is None:
        return buffers
    if stats == "layers":
        return model.track(buffers, unbiased=not biased, force=True)
    out = buffers.copy()
    model.running(out, stats[0], stats[1], stats[2], biased)
    return out


def hvp(model, theta, batch, v):
    if hasattr(model, "hvp"):          # a layer list: forward over reverse
        return model.hvp(theta, batch, v)
    if hasattr(model, "bn") and hasattr(model, "eps"):   # the BN mlp
        return bn_hvp(model, theta, batch, v)
    if isinstance(model, _host().Mlp):
        return mlp_hvp(model, theta, batch, v)
    return model.hessian(batch) @ v


def run(spec, clients, w0, log, bug):
    alg = spec["algorithm"]
    preset = ("perfedavg", alg.get("preset", "paper"))
    if preset not in PRESETS:
        raise _host().Unsupported("perfedavg preset %r" % alg["preset"])
    cfg = dict(DEFAULTS)
    cfg.update(PRESETS[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    alpha0, beta0 = float(cfg["alpha"]), float(cfg["beta"])
    keep_beta = cfg["lr.scope"] == "no_beta"   # β never decays (PFLlib)
    variant = cfg["perfedavg.variant"]
    if bug == "perfedavg-hessian-dropped":
        variant = "fo"
    weights = cfg["perfedavg.weights"]
    if bug == "perfedavg-samples-weights":
        weights = "samples"
    n = [c.n for c in clients]
    trained = [0] * len(clients)   # the rounds each user trained in (lr.count)
    calls = 2 if cfg["perfedavg.calls"] == "two" else 1
    import pfl_numpy_optim
    opts = (None if pfl_numpy_optim.plain(pfl_numpy_optim.options(spec))
            else pfl_numpy_optim.Optimizers(spec))
    both = cfg["perfedavg.opt_steps"] == "both"
    inner_opt = opts is not None and (both or bug == "perfedavg-opt-inner-step")
    track = cfg["bn.running"] == "update"
    biased = cfg["bn.running_var"] == "biased"

    def pass_moves(model, buffers, at, batch):
        """buffers after a training forward at `at` on batch
        (bn.running = update), else as they are."""
        if not track:
            return buffers
        return _moved(model, buffers, _forward_stats(model, at, batch), biased)

    def local_update(i, w, batches, k):
        """User i's τ = len(batches)/3 steps from w (Alg. 1, inner loop);
        with perfedavg.calls = two the steps after τ/2 are PFLlib's second
        train() call, one decay step further."""
        data = clients[i]
        tau = len(batches) // 3
        opt = opt_alpha = None
        for t in range(1, tau + 1):
            second = calls == 2 and t > tau // 2
            if opts is not None and (t == 1 or (second and t == tau // 2 + 1)):
                # a train() call: opt.state = reset builds a new optimizer
                opt = opts.begin(0, i)
                opt_alpha = opt
                if bug == "perfedavg-opt-two-states":
                    opt_alpha = opts.begin(1, i)
            c = _host().lr_factor(cfg, k, trained[i], 1 if second else 0,
                                  calls)
            alpha = c * alpha0
            beta = beta0 if keep_beta else c * beta0
            D, D1, D2 = batches[3 * t - 3:3 * t]
            if bug == "perfedavg-shared-batch":
                D1 = D
            if bug == "perfedavg-hessian-on-d-prime":
                D2 = D1
            g = _grad(data, w, D)
            w = pass_moves(data, w, w, D)               # the pass at w on D
            if inner_opt:
                w_tilde = opt_alpha.step(w, g, alpha)   # optimizer.step()
            else:
                w_tilde = w - alpha * g
            log("step", "train", "w_tilde", w_tilde, round=k, client=i, step=t)
            q = _grad(data, w_tilde, D1)
            if bug != "perfedavg-bn-d-prime-frozen":
                w = pass_moves(data, w, w_tilde, D1)    # at w̃ on D′
            origin = w_tilde if bug == "perfedavg-no-restore" else w
            if variant == "fo":
                w = (opt.step(origin, q, beta) if opt is not None
                     else origin - beta * q)
            else:
                if variant == "exact":
                    at = w_tilde if bug == "perfedavg-hessian-at-w-tilde" else w
                    Hq = hvp(data, at, D2, q)
                    w = pass_moves(data, w, at, D2)     # its forward on D″
                elif variant == "hf":
                    delta = float(cfg["delta"])
                    at = w_tilde if bug == "perfedavg-hf-around-w-tilde" else w
                    plus, minus = at + delta * q, at - delta * q
                    Hq = (_grad(data, plus, D2)
                          - _grad(data, minus, D2)) / (2.0 * delta)
                    w = pass_moves(data, w, plus, D2)
                    w = pass_moves(data, w, minus, D2)
                    origin = w_tilde if bug == "perfedavg-no-restore" else w
                else:
                    raise _host().Unsupported("perfedavg.variant %r" % variant)
                if variant == "exact":
                    origin = w_tilde if bug == "perfedavg-no-restore" else w
                log("note", "train", "hvp", Hq, round=k, client=i, step=t)
                d = q - alpha * Hq
                w = (opt.step(origin, d, beta) if opt is not None
                     else origin - beta * d)
            log("step", "train", "w_local", w, round=k, client=i, step=t)
        return w

    w = w0.copy()
    # the running statistics each user keeps (parameters_only), or None
    if cfg["bn.aggregate"] not in ("average", "parameters_only"):
        raise _host().Unsupported("bn.aggregate %r" % cfg["bn.aggregate"])
    mine = _host().buffers_of(spec)
    if cfg["bn.aggregate"] != "parameters_only" or not mine.any():
        mine = None
    own = [w0.copy() for _ in clients]          # each user's model
    for k, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=k)
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        local = {}
        for i in sorted(plan):
            start = w.copy()
            if mine is not None:
                start[mine] = own[i][mine]
            log("client_begin", "train", "w_local", start, round=k, client=i,
                step=0)
            local[i] = local_update(i, start, plan[i], k)
            own[i] = local[i].copy()
            trained[i] += 1
            log("client_end", "train", "w_local", local[i], round=k, client=i)
        A_k = sorted(local)
        if weights == "samples":
            total = sum(n[i] for i in A_k)
            coef = {i: n[i] / total for i in A_k}
        else:
            coef = {i: 1.0 / len(A_k) for i in A_k}
        w = sum(coef[i] * local[i] for i in A_k)
        if mine is not None and A_k:     # the first upload's statistics
            w[mine] = local[_host().first_upload(rnd, A_k)][mine]
        log("server", "train", "w", w, round=k)

    two = cfg["perfedavg.eval"] == "alpha_then_beta"
    if bug == "perfedavg-eval-two-steps":
        two = True
    thetas = []
    rounds = len(spec["schedule"]["rounds"])
    for i, batches in enumerate(spec["schedule"]["post"]):
        alpha, beta = alpha0, beta0    # perfedavg.eval_lr = initial
        if cfg["perfedavg.eval_lr"] == "decayed":
            # user i's lr after all its scheduler steps (train_one_step)
            c = _host().lr_factor(cfg, rounds, trained[i], 0, calls)
            alpha = c * alpha0
            beta = beta0 if keep_beta else c * beta0
        theta = w.copy()
        if mine is not None and bug != "perfedavg-keep-post-from-w":
            theta[mine] = own[i][mine]
        log("client_begin", "finetune", "theta", theta, client=i, step=0)
        track_eval = bug != "perfedavg-bn-eval-frozen"
        g = _grad(clients[i], theta, batches[0])
        if track_eval:
            theta = pass_moves(clients[i], theta, theta, batches[0])
        theta = theta - alpha * g
        log("step", "finetune", "theta", theta, client=i, step=1)
        if two:
            second = batches[1] if len(batches) > 1 else batches[0]
            g = _grad(clients[i], theta, second)
            if track_eval:
                theta = pass_moves(clients[i], theta, theta, second)
            theta = theta - beta * g
            log("step", "finetune", "theta", theta, client=i, step=2)
        log("client_end", "finetune", "theta", theta, client=i)
        thetas.append(theta)
    return {"w": w, "v": thetas}
# SPDX-License-Identifier: GPL-3.0-or-later
