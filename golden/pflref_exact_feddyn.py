# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_feddyn.py: FedDyn (Acar, Zhao, Matas, Mattina,
Whatmough, Saligrama, ICLR 2021, arXiv 2111.04263v2, Algorithm 1) in exact
rational arithmetic, written from the paper's box and the authors' and
PFLlib's code, independently of the C reference.

Round t (0-based here, the paper's t + 1), m devices, P_t the round's
participants:
  every k in P_t (ascending), from theta = theta^{t-1}, one step per batch b:
      theta <- theta - eta (grad L_k(theta; b) - G_k + alpha_k (theta - theta^{t-1}))
  (feddyn.prox = norm_half: the last term (alpha_k/2)(theta - theta^{t-1})
  / |theta - theta^{t-1}|, 0 where theta = theta^{t-1}); then
      G_k <- G_k - alpha_k (theta_k - theta^{t-1})       (l. 6)
  devices outside P_t keep G_k (l. 9);
      h <- h - alpha (1/m) S,  S = sum_{k in P_t} (theta_k - theta^{t-1})
           (feddyn.h_sum = literal: S = sum theta_k - theta^{t-1})  (l. 10)
      theta^t = (1/|P_t|) sum_{k in P_t} theta_k - h / alpha          (l. 11)
G_k = grad L_k(theta_k^{t-1}) starts at 0, h at 0.  On a layer list with
batch normalisation each step's training pass also moves the running
statistics r_mu, r_v (pflref_exact.Problem.move_running); G_k and h stay 0
on them (they are no parameters), so l. 11 averages them.  Under
bn.aggregate = parameters_only (TsingZ0/PFLlib d832e76f6a23 clientdyn.py:
65-67 set_parameters copies parameters() only; serverdyn.py:85 deep-copies
uploaded_models[0] and sums and corrects parameters() only, :86-93) device
k starts from theta^{t-1}'s parameters with the running statistics its own
model last left (theta^0's until it first trains), and theta^t takes the
first participant's (ascending id).  alpha_k = alpha, or
(feddyn.alpha_k = size_scaled) alpha / (n_k m / sum_j n_j).  The client
optimizer (opt.*) steps on d = grad - G_k + prox (pflref_exact_optim);
lr.* scales eta (pflref_exact.round_factor).

Records: round_begin "w"; per device client_begin, step, client_end
"theta_k", note "grad_L" (G_k after l. 6); per round note "h" (client
none), server "w".

replay(spec, bugs) -> (trace, w, None, None).  Bugs:

  feddyn-shift-plus     l. 5's linear term with + G_k (sign flipped)
  feddyn-no-shift       l. 5 without the linear term (FedProx's objective)
  feddyn-grad-plus      l. 6 adds alpha (theta_k - theta^{t-1})
  feddyn-grad-no-alpha  l. 6 without alpha
  feddyn-grad-reset     every G_k reset to 0 at each round (no state)
  feddyn-h-participants l. 10 divides by |P_t| instead of m
  feddyn-h-sum-flip     differences <-> literal
  feddyn-no-correction  l. 11 without - h / alpha
  feddyn-correction-plus l. 11 with + h / alpha
  feddyn-h-reset        h recomputed from the round alone (h^{t-1} dropped)
  feddyn-alpha-k-flip   uniform <-> size_scaled
  feddyn-alpha-k-server size_scaled also in l. 10 (h <- h - (1/m) sum
                        alpha_k (theta_k - theta^{t-1}))
  feddyn-prox-flip      squared <-> norm_half
  feddyn-norm-full      norm_half's gradient without the 1/2
  prox-plus             the proximal pull with the opposite sign
  samples-weights       l. 11's mean weighted n_k / sum_{P_t} n_j
  restart-w0            every round's devices start from theta^0
  epochs-plus-one, epochs-minus-one   one local step more / fewer
  batch-sum             the batch loss summed, not averaged
  drawn-batches         the round's batch lists paired with the drawn order
                        of its participants instead of the ascending clients
  start-global-buffers  (parameters_only) a device starts from
                        theta^{t-1}'s running statistics
  start-w0-buffers      (parameters_only) ... from theta^0's
  global-buffers-averaged (parameters_only) theta^t's running statistics
                        averaged as under average
  global-buffers-last   (parameters_only) ... the last participant's
"""
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

MUTANTS = {
    "feddyn-linear-term": ["feddyn-shift-plus", "feddyn-no-shift"],
    "feddyn-gradient-state": ["feddyn-grad-plus", "feddyn-grad-no-alpha",
                              "feddyn-grad-reset"],
    "feddyn-server-state": ["feddyn-h-participants", "feddyn-h-reset"],
    "feddyn-h-sum": ["feddyn-h-sum-flip"],
    "feddyn-correction": ["feddyn-no-correction", "feddyn-correction-plus"],
    "feddyn-alpha-k": ["feddyn-alpha-k-flip", "feddyn-alpha-k-server"],
    "feddyn-prox": ["feddyn-prox-flip", "feddyn-norm-full"],
    "prox-sign": ["prox-plus"],
    "aggregation-weights": ["samples-weights"],
    "stale-global": ["restart-w0"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "batch-mean": ["batch-sum"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
}

# The presets as the C registry's (ref/engine/presets.c) documents them.
PRESETS = {
    # req: feddyn.preset.official
    "official": {"feddyn.alpha_k": "size_scaled", "opt.weight_decay": 0.001},
    # req: feddyn.preset.pfllib
    # clientdyn.py:65-67, serverdyn.py:85-93: parameters() only
    "pfllib": {"feddyn.prox": "norm_half", "lr.count": "trainings",
               "bn.aggregate": "parameters_only"},
}
SWITCH_DEFAULTS = {"feddyn.alpha_k": "uniform", "feddyn.prox": "squared",
                   "feddyn.h_sum": "differences", "bn.aggregate": "average"}


def effective(algorithm):
    """The algorithm object with the preset's settings written out (given
    settings win), so pflref_exact_optim and round_factor see them."""
    hp, sw = {}, dict(SWITCH_DEFAULTS)
    for k, v in PRESETS.get(algorithm.get("preset", "paper"), {}).items():
        (sw if isinstance(v, str) else hp)[k] = v
    hp.update(algorithm.get("hyperparameters", {}))
    sw.update(algorithm.get("switches", {}))
    return {"name": algorithm["name"], "hyperparameters": hp, "switches": sw}


def _flip(value, a, b):
    return b if value == a else a


def param_norm(pr, x):
    """|x| over the parameters: exact (the worked vectors keep it rational),
    or, on a layer list replayed in 60-digit decimals (batch normalisation),
    the layer model's own square root."""
    sq = sum(x[p] * x[p] for p in range(pr.P) if p not in pr.buffers)
    D = pr.layers.D if pr.kind == "layers" else None
    if D is None or D.kind == "fraction":
        return px.exact_sqrt(sq)
    if D.kind == "decimal":
        return Fraction(D.num(sq).sqrt())
    return D.sqrt(float(sq))


def local_steps(pr, k, ref, start, shift, steps, eta, alpha_k, prox, t,
                trace, bugs, opt):
    """l. 5: the device's steps from start (theta^{t-1} = ref, or its
    parameters with the device's own running statistics)."""
    theta = list(start)
    for s, batch in enumerate(steps, start=1):
        g = pr.grad(k, theta, batch, bugs)
        # the same training pass moves r_mu, r_v (bn.running = update)
        theta = pr.move_running(k, theta, batch, bugs)
        diff = [theta[p] - ref[p] for p in range(pr.P)]
        if prox == "squared":
            mu = alpha_k
        else:
            norm = param_norm(pr, diff)
            half = alpha_k if "feddyn-norm-full" in bugs else alpha_k / 2
            mu = half / norm if norm != 0 else Fraction(0)
        if "prox-plus" in bugs:
            mu = -mu
        d = list(g)
        for p in range(pr.P):
            if p in pr.buffers:
                continue
            d[p] = d[p] + shift[p] + mu * diff[p]
        if opt is not None:
            theta = opt(d, theta, eta, None)
        else:
            theta = [theta[p] - (0 if p in pr.buffers else eta * d[p])
                     for p in range(pr.P)]
        trace.emit("step", "train", t, k, s, "theta_k", theta)
    return theta


def steps_with(steps, bugs):
    if "epochs-plus-one" in bugs:
        return steps + steps[-1:]
    if "epochs-minus-one" in bugs:
        return steps[:-1]
    return steps


def replay(spec, bugs=frozenset()):
    alg = effective(spec["algorithm"])
    hp, sw = alg["hyperparameters"], alg["switches"]
    eta, alpha = exact(hp["eta"]), exact(hp["feddyn.alpha"])
    alpha_k_mode, prox, h_sum = sw["feddyn.alpha_k"], sw["feddyn.prox"], sw["feddyn.h_sum"]
    if "feddyn-alpha-k-flip" in bugs:
        alpha_k_mode = _flip(alpha_k_mode, "uniform", "size_scaled")
    if "feddyn-prox-flip" in bugs:
        prox = _flip(prox, "squared", "norm_half")
    if "feddyn-h-sum-flip" in bugs:
        h_sum = _flip(h_sum, "differences", "literal")
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    m = len(pr.clients)
    # bn.aggregate = parameters_only: each device's own running statistics
    held = {} if sw["bn.aggregate"] == "parameters_only" and pr.buffers else None
    n = [pr.n(k) for k in range(m)]
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P)

    def alpha_of(k):
        # req: feddyn.alg1.l5
        if alpha_k_mode == "size_scaled":
            return alpha / (Fraction(n[k]) / sum(n) * m)
        return alpha

    import pflref_exact_optim as po      # opt.*: l. 5's optimizer
    # a spec's split: the mask opt.decay_scope = shared / personal reads
    # (docs/optimizers.md); none: every block shared
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opts = po.for_spec(dict(spec, algorithm=alg), pr, 1, personal, bugs)
    trace = Trace()
    # req: feddyn.alg1.l1
    G = [[Fraction(0)] * pr.P for _ in range(m)]
    h = [Fraction(0)] * pr.P
    theta = list(w0)
    trained = [0] * m
    # req: feddyn.alg1.l2
    for t, r in enumerate(spec["schedule"]["rounds"]):
        trace.emit("round_begin", "train", t, None, None, "w", theta)
        prev = list(w0) if "restart-w0" in bugs else list(theta)
        if "feddyn-grad-reset" in bugs:
            G = [[Fraction(0)] * pr.P for _ in range(m)]
        # batches[j] is clients[j]'s (a round's drawn order is information)
        owners = r.get("drawn", r["clients"]) if "drawn-batches" in bugs \
            else r["clients"]
        plan = dict(zip(owners, r["batches"]))
        P_t = sorted(plan)
        S = [Fraction(0)] * pr.P
        mean = [Fraction(0)] * pr.P
        local = {}
        m_t = sum(n[k] for k in P_t)
        # req: feddyn.alg1.l3, feddyn.alg1.l4
        for k in P_t:
            a_k = alpha_of(k)
            start = prev
            if held is not None and "start-global-buffers" not in bugs:
                mine = w0 if "start-w0-buffers" in bugs else held.get(k, w0)
                start = [mine[p] if p in pr.buffers else x
                         for p, x in enumerate(prev)]
            trace.emit("client_begin", "train", t, k, 0, "theta_k", start)
            f = px.round_factor(alg, t, bugs, trained=trained[k])
            trained[k] += 1
            shift = [g for g in G[k]] if "feddyn-shift-plus" in bugs \
                else [-g for g in G[k]]
            if "feddyn-no-shift" in bugs:
                shift = [Fraction(0)] * pr.P
            if opts is not None:
                opts.begin(k)
            x = local_steps(pr, k, prev, start, shift,
                            steps_with(plan[k], bugs), eta * f, a_k, prox, t,
                            trace, bugs,
                            None if opts is None else opts.stepper(k, 0))
            if held is not None:
                held[k] = list(x)
            local[k] = x
            # req: feddyn.alg1.l7
            trace.emit("client_end", "train", t, k, None, "theta_k", x)
            for p in range(pr.P):
                if p in pr.buffers:
                    continue
                diff = x[p] - prev[p]
                # req: feddyn.alg1.l6
                step = diff if "feddyn-grad-no-alpha" in bugs else a_k * diff
                G[k][p] = G[k][p] + step if "feddyn-grad-plus" in bugs \
                    else G[k][p] - step
                if "feddyn-alpha-k-server" in bugs:
                    diff = a_k / alpha * diff
                S[p] += x[p] if h_sum == "literal" else diff
            trace.emit("note", "train", t, k, None, "grad_L", G[k])
            c = Fraction(n[k], m_t) if "samples-weights" in bugs else Fraction(1, len(P_t))
            mean = [a + c * b for a, b in zip(mean, x)]
        # req: feddyn.alg1.l8, feddyn.alg1.l9
        # (devices outside P_t: G_k untouched)
        if h_sum == "literal":
            S = [s - q for s, q in zip(S, prev)]
        div = len(P_t) if "feddyn-h-participants" in bugs else m
        base = [Fraction(0)] * pr.P if "feddyn-h-reset" in bugs else h
        # req: feddyn.alg1.l10, feddyn.key_property
        h = [b - alpha * s / div if p not in pr.buffers else Fraction(0)
             for p, (b, s) in enumerate(zip(base, S))]
        trace.emit("note", "train", t, None, None, "h", h)
        # req: feddyn.alg1.l11
        if "feddyn-no-correction" in bugs:
            theta = mean
        elif "feddyn-correction-plus" in bugs:
            theta = [a + b / alpha for a, b in zip(mean, h)]
        else:
            theta = [a - b / alpha for a, b in zip(mean, h)]
        # bn.aggregate = parameters_only: theta^t's running statistics are
        # the first participant's (h is 0 there)
        if held is not None and local and "global-buffers-averaged" not in bugs:
            first = (sorted(local)[-1] if "global-buffers-last" in bugs
                     else sorted(local)[0])
            theta = [local[first][p] if p in pr.buffers else x
                     for p, x in enumerate(theta)]
        trace.emit("server", "train", t, None, None, "w", theta)
    return trace, theta, None, None


def supported(spec):
    return (spec["algorithm"]["name"] == "feddyn"
            and spec["model"]["kind"] in ("quadratic", "linear", "layers")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
