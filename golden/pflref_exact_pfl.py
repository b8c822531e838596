# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_pfl.py: FedAlt, FedSim (Pillutla et al., ICML 2022,
Alg. 4 and 5) and PFLEGO (Nikoloutsopoulos et al., arXiv 2202.09848) in
exact rational arithmetic, written from the papers and shared/spec
notes-pflego-fedalt-fedsim-fedrep.md, independently of the C reference.

The gradients come from pflref_exact.Problem (the full gradient of the
batch-mean loss); PFLEGO's cached features are not modelled: the head
gradient on cached features is mathematically the head part of the full
gradient at (θ_t, W), which is what is computed here.  PFLEGO's
learning-rate decay (lr.*): round t's ρ and β (the cheap steps', step 6's
and step 8's) times c_t = pflref_exact.round_factor at the round t, as
ref/engine/lr.c scales every step size of the round's hyperparameters.

Bugs (realistic implementation mistakes; pflref_golden.check_mutants):

  fedsim-sequential  FedSim: v updated first, u's gradient taken at the new
                     v (u and v updated from different points)
  fedalt-u-first     FedAlt: the u phase runs before the v phase
  fedalt-stale-v     FedAlt: the u phase uses the round-start v, not v⁺
  reset-personal     v_i ← v⁰ at every visit in a stateful run
  keep-personal      a stateless run keeps v_i across visits
  uniform-weights, samples-weights
                     pfl.weights uniform where samples is configured, and
                     the reverse
  batches-weights    pfl.weights batches (α_i = the device's batch count)
                     where uniform is configured
  scope-flip         fine-tuning moves (u, v) where v only is configured,
                     and the reverse
  ft-start-global    pfl.finetune_start = last_local ignored: fine-tuning
                     from (u^(T), v_i) instead of the device's own model
  ft-lr-constant     pfl.finetune_lr = decayed ignored: η_ft undecayed
  no-ip-factor       PFLEGO: the I/r factor left out (head and θ steps)
  theta-weights-flip PFLEGO: α_i = N_i/N <-> N_i/Σ_{I_t} N_j
  head-alpha-flip    PFLEGO: the last head step with / without α_i, the
                     reverse of the configured pflego.head_step
  head-step-beta     PFLEGO: the last head step uses β instead of ρ I/r
  cheap-steps-tau    PFLEGO: τ cheap steps instead of τ − 1
  features-per-step  PFLEGO: features recomputed for every cheap step (the
                     numbers do not change; the body-pass counts do)
"""
from fractions import Fraction

from pflref_exact import NO_BUGS, Problem, initial, round_factor
from pflref_golden import Trace, exact

SWITCH_DEFAULTS = {
    "fedalt": {"pfl.state": "stateful", "pfl.weights": "samples",
               "pfl.finetune": "personal", "pfl.finetune_start": "global",
               "pfl.finetune_lr": "constant", "bn.aggregate": "average"},
    "fedsim": {"pfl.state": "stateful", "pfl.weights": "samples",
               "pfl.finetune": "personal", "pfl.finetune_start": "global",
               "pfl.finetune_lr": "constant", "bn.aggregate": "average"},
    "pflego": {"pflego.head_step": "seed", "pflego.theta_weights": "global",
               "pflego.server": "sgd"},
}
# (algorithm, preset) -> (switches and hyperparameters, the split's group)
PRESETS = {
    ("fedalt", "fedrep"): ({"pfl.state": "stateful", "pfl.weights": "uniform",
                            "pfl.finetune": "personal"}, "head"),
    ("fedsim", "fedper"): ({"pfl.state": "stateful", "pfl.weights": "samples",
                            "pfl.finetune": "personal"}, "head"),
    ("fedsim", "lg_fedavg"): ({"pfl.state": "stateful", "pfl.weights": "samples",
                               "pfl.finetune": "personal"}, "input"),
    ("fedsim", "fedbabu"): ({"gamma_v": 0, "pfl.state": "stateful",
                             "pfl.weights": "samples", "pfl.finetune": "full"},
                            "head"),
    # PFLlib's FedRep (notes-pfllib-as-run §2.3: head epochs, then the base,
    # n_i weights; §2.2: each client's -ld scheduler stepped when it trains)
    ("fedalt", "fedrep_pfllib"): ({"pfl.state": "stateful",
                                   "pfl.weights": "samples",
                                   "pfl.finetune": "personal",
                                   "lr.count": "trainings",
                                   # set_parameters / aggregate_parameters:
                                   # parameters() only
                                   "bn.aggregate": "parameters_only"},
                                  "head"),
    # PFLlib's FedPer, LG-FedAvg, FedBABU (§2.3; serverbase.py's n_i weights)
    ("fedsim", "fedper_pfllib"): ({"pfl.state": "stateful",
                                   "pfl.weights": "samples",
                                   "pfl.finetune": "personal",
                                   "lr.count": "trainings",
                                   # set_parameters / aggregate_parameters:
                                   # parameters() only
                                   "bn.aggregate": "parameters_only"},
                                  "head"),
    ("fedsim", "lg_fedavg_pfllib"): ({"pfl.state": "stateful",
                                      "pfl.weights": "samples",
                                      "pfl.finetune": "personal",
                                      "lr.count": "trainings",
                                      # parameters() only, as above
                                      "bn.aggregate": "parameters_only"},
                                     "input"),
    # FedBABU's fine_tune (serverbabu.py train, clientbabu.py fine_tune):
    # every client after the last round, from the model it holds (no
    # send_models first), with its own optimizer's decayed lr
    ("fedsim", "fedbabu_pfllib"): ({"gamma_v": 0, "pfl.state": "stateful",
                                    "pfl.weights": "samples",
                                    "pfl.finetune": "full",
                                    "lr.count": "trainings",
                                    # parameters() only, as above
                                    "bn.aggregate": "parameters_only",
                                    "pfl.finetune_start": "last_local",
                                    "pfl.finetune_lr": "decayed"}, "head"),
}


def settings(algorithm):
    """(hyperparameters, switches, the preset's split group or None):
    defaults, then the preset, then the explicit settings."""
    name = algorithm["name"]
    hp, sw, group = {}, dict(SWITCH_DEFAULTS[name]), None
    preset = algorithm.get("preset", "paper")
    if preset != "paper":
        bundle, group = PRESETS[(name, preset)]
        for k, v in bundle.items():
            (sw if isinstance(v, str) else hp)[k] = v
    hp.update(algorithm.get("hyperparameters", {}))
    sw.update(algorithm.get("switches", {}))
    return ({k: (int(v) if k == "tau_v" else exact(v)) for k, v in hp.items()},
            sw, group)


def blocks(model):
    """The model's parameter blocks in layout order:
    [(name, size, is_input, is_head)] (docs/models.md, parameter layout)."""
    kind, d = model["kind"], model["d"]
    if kind == "linear":
        out = [("w", d, True, True)]
        if model.get("bias", False):
            out.append(("b", 1, True, True))
        return out
    assert kind == "mlp"
    h = model["h"]
    k = model.get("k", 1)
    bias = model.get("bias", True)
    hidden_bias = model.get("hidden_bias", bias)
    out = [("W1", h * d, True, False)]
    if hidden_bias:
        out.append(("b1", h, True, False))
    out.append(("W2", k * h, False, True))
    if bias:
        out.append(("b2", k, False, True))
    return out


def personal_mask(model, names):
    """1 on the entries of the named personal blocks or groups.  A layer
    list (pflref_exact_layers.py) also takes layer names (every block of the
    layer) and the group "bn" (every batchnorm layer's blocks)."""
    if model["kind"] == "layers":
        import pflref_exact_layers as pl
        M = pl.Model(model, "float")
        mask = [0] * M.P
        for b, off in M.block_offsets():
            layer = M.layers[b["layer"]].name
            on = (b["name"] in names or layer in names
                  or ("input" in names and b["is_input"])
                  or ("head" in names and b["is_head"])
                  or ("bn" in names and b["is_bn"]))
            for q in range(b["size"]):
                mask[off + q] = 1 if on else 0
        return mask
    mask = []
    for name, size, is_input, is_head in blocks(model):
        on = (name in names or ("input" in names and is_input)
              or ("head" in names and is_head))
        mask += [1 if on else 0] * size
    return mask


def _weights(configured, bugs):
    if "uniform-weights" in bugs and configured == "samples":
        return "uniform"
    if "samples-weights" in bugs and configured == "uniform":
        return "samples"
    if "batches-weights" in bugs and configured == "uniform":
        return "batches"
    return configured


def _running(pr, i, point, x, batch, bugs):
    """x with its batch-norm running statistics moved by the training pass
    at `point` on the batch (bn.running = update, PyTorch's train(): every
    training forward moves them, whichever blocks the step then moves;
    pflref_exact.Problem.move_running); x itself without batch
    normalisation."""
    if not pr.buffers:
        return x
    moved = pr.move_running(i, point, batch, bugs)
    return [moved[p] if p in pr.buffers else x[p] for p in range(pr.P)]


def _step(x, g, mask, gamma, on=1):
    """x − γ g on the entries whose mask equals `on`."""
    return [xi - gamma * gi if m == on else xi for xi, gi, m in zip(x, g, mask)]


def pfl_round(pr, w, v, w0, mask, t, plan, hp, sw, trace, alt, bugs=NO_BUGS,
              trained=None, opt=None, held=None):
    """One round of FedAlt (alt) or FedSim.  w: (u, v⁰); v: the devices'
    full models (u, v_i).  plan: [(device, batches)] ascending.  Returns
    (w, v).  trained: the rounds each device trained in before (the
    learning-rate decay's lr.count; pflref_exact.round_factor).  opt: the
    client optimizers (pflref_exact_optim.Optimizers; PFLlib clientrep.py's
    optimizer, slot 0, on u, FedSim's joint step with the two groups γ_u,
    γ_v; optimizer_per, slot 1, on v), or None (plain SGD).  held: a list
    to fill with each device's model as it stands after the round, before
    the broadcast (its iterate if it trained, else the (u^(t), v_i) it was
    sent at the round's start), or None.
    bn.aggregate = parameters_only on a model with buffers (PFLlib: the
    clients' set_parameters copy the shared block's parameters() only,
    clientrep.py:86-88 and the like; serverbase.py:138-150 deep-copies the
    first upload and sums parameters()): a device starts from its own
    model's running statistics in the shared block too, u^(t+1)'s are the
    first participant's, and the broadcast leaves each device's own."""
    P = pr.P
    kb = (sw.get("bn.aggregate") == "parameters_only" and bool(pr.buffers)
          and sw["pfl.state"] == "stateful")

    def own_buffer(p):              # a shared entry kept by the device
        return kb and p in pr.buffers and not mask[p]
    stateless = sw["pfl.state"] == "stateless"
    if "reset-personal" in bugs and not stateless:
        stateless = True
    keep = "keep-personal" in bugs and sw["pfl.state"] == "stateless"
    gu, gv = hp["gamma_u"], hp["gamma_v"]
    v = [list(vi) for vi in v]
    # req: fedalt.alg4.l1, fedalt.alg4.l2, fedsim.alg5.l1, fedsim.alg5.l2
    trace.emit("round_begin", "train", t, None, None, "w", w)
    local = {}
    # req: fedalt.alg4.l4, fedsim.alg5.l4
    for i, steps in plan:
        # req: fedalt.alg4.l5, fedalt.alg4.l11, fedsim.alg5.l5
        x = [w[p] if not mask[p] else (w0[p] if stateless and not keep else v[i][p])
             for p in range(P)]
        if kb and "start-global-buffers" not in bugs:
            mine = w0 if "start-w0-buffers" in bugs else v[i]
            x = [mine[p] if own_buffer(p) else x[p] for p in range(P)]
        trace.emit("client_begin", "train", t, i, 0, "w_local", x)
        c = round_factor({"switches": sw, "hyperparameters": hp}, t, bugs,
                         trained=None if trained is None else trained[i])
        gu, gv = hp["gamma_u"] * c, hp["gamma_v"] * c    # γ of i's train()
        if opt is not None:
            opt.begin(i)
        if alt:
            tau_v = hp["tau_v"]
            order = list(range(len(steps)))
            # req: fedalt.alg4.l6, fedalt.alg4.l7, fedalt.alg4.l12
            # req: fedalt.alg4.l13
            phases = [(0, tau_v, 1), (tau_v, len(steps), 0)]    # (from, to, mask value)
            if "fedalt-u-first" in bugs:
                tau_u = len(steps) - tau_v
                phases = [(0, tau_u, 0), (tau_u, len(steps), 1)]
            v_start = list(x)
            for lo, hi, on in phases:
                for q in order[lo:hi]:
                    point = x
                    if on == 0 and "fedalt-stale-v" in bugs:
                        point = [x[p] if not mask[p] else v_start[p] for p in range(P)]
                    # req: fedalt.alg4.l8, fedalt.alg4.l9, fedalt.alg4.l14
                    g = pr.grad(i, point, steps[q], bugs)
                    x = _running(pr, i, point, x, steps[q], bugs)
                    if opt is not None:     # slot 1 moves v, slot 0 u
                        x = opt.step(i, on, g, x, gv if on else gu,
                                     [1 if m == on else 0 for m in mask])
                    else:
                        x = _step(x, g, mask, gv if on else gu, on)
                    trace.emit("step", "train", t, i, q + 1, "w_local", x)
        else:
            # req: fedsim.alg5.l6, fedsim.alg5.l7, fedsim.alg5.l8
            for q, batch in enumerate(steps):
                g = pr.grad(i, x, batch, bugs)
                x = _running(pr, i, x, x, batch, bugs)
                if opt is not None:
                    assert "fedsim-sequential" not in bugs
                    x = opt.step(i, 0, g, x, gu, eta_v=gv)   # two groups
                elif "fedsim-sequential" in bugs:
                    x = _step(x, g, mask, gv, 1)
                    g = pr.grad(i, x, batch, bugs)
                    x = _step(x, g, mask, gu, 0)
                else:
                    # req: fedsim.alg5.l9, fedsim.alg5.l10
                    x = [x[p] - (gv if mask[p] else gu) * g[p] for p in range(P)]
                trace.emit("step", "train", t, i, q + 1, "w_local", x)
        trace.emit("client_end", "train", t, i, None, "w_local", x)
        # req: fedalt.alg4.l10, fedalt.alg4.l15, fedsim.alg5.l11
        if sw["pfl.state"] == "stateful" or keep:
            v[i] = list(x)
            if sw["pfl.state"] == "stateful":
                trace.emit("client_end", "train", t, i, None, "v", v[i])
        local[i] = (x, len(steps))
    if held is not None:
        held[:] = [list(local[i][0]) if i in local else list(v[i])
                   for i in range(len(v))]
    weights = _weights(sw["pfl.weights"], bugs)
    # req: fedalt.eq1
    if weights == "samples":
        a = {i: Fraction(pr.n(i)) for i in local}
    elif weights == "uniform":
        a = {i: Fraction(1) for i in local}
    else:
        a = {i: Fraction(local[i][1]) for i in local}
    total = sum(a.values())
    # req: fedalt.alg4.l16, fedsim.alg5.l12
    w = [w[p] if mask[p] else sum(a[i] / total * local[i][0][p] for i in sorted(local))
         for p in range(P)]
    if kb and local and "global-buffers-averaged" not in bugs:
        first = plan[-1][0] if "global-buffers-last" in bugs else plan[0][0]
        w = [local[first][0][p] if own_buffer(p) else w[p] for p in range(P)]
    trace.emit("server", "train", t, None, None, "w", w)
    # req: fedalt.alg4.l17, fedsim.alg5.l13
    v = [[w[p] if not mask[p] and not own_buffer(p) else vi[p] for p in range(P)]
         for vi in v]
    return w, v


def pfl_finetune(pr, w, v, w0, mask, post, hp, sw, trace, bugs=NO_BUGS,
                 opt=None, held=None, T=0, trained=None):
    """The final fine-tuning of every device on its post batches.  opt: the
    client optimizers (the fine-tuning steps with slot 1, the personal
    optimizer, new under opt.state = reset), or None.  held: the devices'
    models after the last round before its broadcast (pfl_round), where
    pfl.finetune_start = last_local starts them; T, trained: the rounds
    and each device's trainings, for pfl.finetune_lr = decayed (η_ft times
    round_factor at T, or at the device's own count under lr.count =
    trainings: PFLlib's fine_tune steps the client's decayed optimizer)."""
    full = sw["pfl.finetune"] == "full"
    if "scope-flip" in bugs:
        full = not full
    from_held = (sw["pfl.finetune_start"] == "last_local"
                 and "ft-start-global" not in bugs and held)
    decayed = (sw["pfl.finetune_lr"] == "decayed"
               and "ft-lr-constant" not in bugs)
    out = []
    for i, steps in enumerate(post):
        x = list(v[i])
        if from_held:
            x = list(held[i])
        elif sw["pfl.state"] == "stateless":
            x = [w[p] if not mask[p] else w0[p] for p in range(pr.P)]
        eta_ft = hp["eta_ft"]
        if decayed:
            eta_ft = eta_ft * round_factor(
                {"switches": sw, "hyperparameters": hp}, T, bugs,
                trained=None if trained is None else trained[i])
        trace.emit("client_begin", "finetune", None, i, 0, "v", x)
        if opt is not None:
            opt.begin(i)
        for q, batch in enumerate(steps):
            g = pr.grad(i, x, batch, bugs)
            x = _running(pr, i, x, x, batch, bugs)
            if opt is not None:
                x = opt.step(i, 1, g, x, eta_ft, None if full else mask)
            else:
                x = [x[p] - eta_ft * g[p] if (full or mask[p]) else x[p]
                     for p in range(pr.P)]
            trace.emit("step", "finetune", None, i, q + 1, "v", x)
        trace.emit("client_end", "finetune", None, i, None, "v", x)
        out.append(x)
    return out


def _rounded(x, rnd):
    """x with every entry through rnd (None: exact)."""
    return list(x) if rnd is None else [rnd(u) for u in x]


def pflego_client(pr, i, x, tau, beta, mask, trace, t, bugs=NO_BUGS, opt=None,
                  rnd=None):
    """Steps 3–5 (notes §2.4) for client i from x = (θ_t, W_i): τ − 1 cheap
    full-batch head steps, then the joint gradient.  Returns (W̃ as the full
    vector, the joint gradient, body passes [forward, backward]).  opt: the
    clients' head optimizers (opt.*; pflref_exact_optim.Optimizers, slot
    0), which step the cheap head steps on the head blocks; None: plain."""
    full = list(range(pr.n(i)))
    cheap = tau if "cheap-steps-tau" in bugs else tau - 1
    forward = 1
    # req: pflego.alg1.l4
    for q in range(1, cheap + 1):
        g = pr.grad(i, x, full, bugs)
        if opt is not None:
            # the head optimizer's step; bug opt-body-moves: on every block
            x = _rounded(opt.step(i, 0, g, x, beta,
                                  None if "opt-body-moves" in bugs else mask),
                         rnd)
        else:
            x = _step(x, g, mask, beta, 1)
        if "features-per-step" in bugs:
            forward += 1
        trace.emit("step", "train", t, i, q, "w_local", x)
    # req: pflego.alg1.l5
    g = pr.grad(i, x, full, bugs)
    trace.emit("note", "train", t, i, tau, "g", g)
    return x, g, [forward, 1]


def pflego_round(pr, w, v, mask, t, plan, hp, sw, trace, bugs=NO_BUGS, opt=None,
                 rnd=None):
    """One PFLEGO round with the SGD server (notes §2.4, steps 1–9).
    mask: 1 on the head; opt: the head optimizers or None; rnd: None, or
    the rounding (60 digits) of every iterate after each step, for a head
    optimizer that takes square roots.  Returns (w, v)."""
    P, I, r = pr.P, len(pr.clients), len(plan)
    scale = Fraction(1) if "no-ip-factor" in bugs else Fraction(I, r)
    N_all = sum(pr.n(i) for i in range(I))
    N_sel = sum(pr.n(i) for i, _ in plan)
    exact_alpha = sw["pflego.head_step"] == "exact_alpha"
    if "head-alpha-flip" in bugs:
        exact_alpha = not exact_alpha
    sampled = sw["pflego.theta_weights"] == "sampled_normalised"
    if "theta-weights-flip" in bugs:
        sampled = not sampled
    assert sw["pflego.server"] == "sgd"
    v = [list(vi) for vi in v]
    trace.emit("round_begin", "train", t, None, None, "w", w)
    acc = [Fraction(0)] * P
    # req: pflego.alg1.l1
    for i, steps in plan:
        # req: pflego.alg1.l2
        x = [w[p] if not mask[p] else v[i][p] for p in range(P)]
        trace.emit("client_begin", "train", t, i, 0, "w_local", x)
        tau = len(steps)
        if opt is not None:
            opt.begin(i)                # opt.state = reset: a new one
        # req: pflego.alg1.l3
        x, g, passes = pflego_client(pr, i, x, tau, hp["pflego.beta"], mask, trace, t,
                                     bugs, opt, rnd)
        alpha = Fraction(pr.n(i), N_all)
        # req: pflego.alg1.l6
        head = hp["rho"] * scale * (alpha if exact_alpha else 1)
        if "head-step-beta" in bugs:
            head = hp["pflego.beta"]
        x = _rounded(_step(x, g, mask, head, 1), rnd)
        trace.emit("step", "train", t, i, tau, "w_local", x)
        v[i] = x
        trace.emit("client_end", "train", t, i, None, "v", x)
        trace.emit("note", "train", t, i, None, "body_passes", passes)
        a = Fraction(pr.n(i), N_sel) if sampled else alpha
        # req: pflego.alg1.l7
        acc = [acc[p] + a * g[p] if not mask[p] else acc[p] for p in range(P)]
    # req: pflego.alg1.l8, pflego.prop1
    ghat = [scale * a for a in acc]
    trace.emit("note", "train", t, None, None, "g_hat", ghat)
    w = _rounded([w[p] - hp["rho"] * ghat[p] if not mask[p] else w[p]
                  for p in range(P)], rnd)
    trace.emit("server", "train", t, None, None, "w", w)
    # req: pflego.alg1.l9
    v = [[w[p] if not mask[p] else vi[p] for p in range(P)] for vi in v]
    return w, v


def replay(spec, bugs=NO_BUGS):
    """Run a fedalt, fedsim or pflego spec (given schedule) exactly from the
    spec as written.  Returns (w, v, trace)."""
    alg = spec["algorithm"]["name"]
    hp, sw, group = settings(spec["algorithm"])
    model = spec["model"]
    names = spec["split"]["personal"] if "split" in spec else ([group] if group else [])
    mask = personal_mask(model, names)
    # bn.running, bn.running_var: how the training passes move a batch
    # norm's running statistics (pflref_exact.Problem.move_running)
    pr = Problem(model, spec["problem"]["clients"]).bn_switches(sw)
    w0 = initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    sched = spec["schedule"]
    assert sched["kind"] == "given"
    w, v, trace = list(w0), [list(w0) for _ in pr.clients], Trace()
    trained = [0] * len(pr.clients)
    held = []
    import pflref_exact_optim as po
    opt = po.for_spec(spec, pr, 1 if alg == "pflego" else 2, mask, bugs)
    # PFLEGO's head optimizer with a square root (the clip's norm, Adam):
    # every iterate at 60 digits after each step (relative error < 1e-59 a
    # step), as pflref_exact_optim rounds the values after a root; exact
    # rationals of 60-digit values would grow their digits with every
    # product of body and head (the model is bilinear in them)
    rnd = None
    if alg == "pflego" and opt is not None and (
            opt.c["opt.clip"] == "norm" or opt.c["opt.method"] != "sgd"):
        rnd = po.r60
    for t, r in enumerate(sched["rounds"]):
        plan = list(zip(r["clients"], r["batches"]))
        if alg == "pflego":
            # lr.*: round t's ρ and β times c_t (ref/engine/lr.c: every step
            # size of the round's hyperparameters; PFLEGO trains by rounds)
            c = round_factor({"switches": sw, "hyperparameters": hp}, t, bugs)
            hp_t = dict(hp, rho=hp["rho"] * c,
                        **{"pflego.beta": hp["pflego.beta"] * c})
            w, v = pflego_round(pr, w, v, mask, t, plan, hp_t, sw, trace,
                                bugs, opt, rnd)
        else:
            w, v = pfl_round(pr, w, v, w0, mask, t, plan, hp, sw, trace,
                             alg == "fedalt", bugs, trained, opt, held)
        for i in r["clients"]:
            trained[i] += 1
    if "post" in sched:
        v = pfl_finetune(pr, w, v, w0, mask, sched["post"], hp, sw, trace, bugs,
                         opt, held, len(sched["rounds"]), trained)
    return w, v, trace
