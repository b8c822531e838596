# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_scaffold.py: SCAFFOLD (Karimireddy, Kale, Mohri,
Reddi, Stich, Suresh, ICML 2020, arXiv 1910.06378v4, Algorithm 1) in exact
rational arithmetic, written from the paper's box and the PFLlib source
(TsingZ0/PFLlib d832e76f6a23, clientscaffold.py, serverscaffold.py,
fedoptimizer.py), independently of the C reference.

Start (Alg. 1 l. 1-2 and Sec. 4: the control variates "are initialized to
ensure that c = 1/N sum c_i and can safely all be initialized to 0"):
x = w0; c_i = the spec's init.c_i, else 0; c = init.c, else the mean of the
c_i (0 without init.c_i).

One round over the sampled S (ascending), server state x, c, client state
c_i:
  y_i <- x; K_i steps y_i <- y_i - eta_l (g_i(y_i) - c_i + c), one per
  scheduled batch (K_i = the length of client i's batch list);
  c_i+ <- (option I) grad f_i(x) over the whole training set, or
          (option II) c_i - c + (x - y_i) / (K_i eta_l);
  Delta y_i = y_i - x, Delta c_i = c_i+ - c_i; c_i <- c_i+;
  x <- x + eta_g (1/|S|) sum Delta y_i;  c <- c + (|S|/N) (1/|S|) sum Delta c_i.
eta_l is the round's step (lr.*: the client's train() count under
lr.count = trainings); scaffold.c_lr = initial puts the undecayed eta in
option II's 1/(K eta_l) (PFLlib update_yc).  The client optimizer (opt.*,
pflref_exact_optim.py) steps on d = g_i(y_i) + c - c_i.

A layer list with batch normalisation (pflref_exact.Problem): each local
step's training pass moves y_i's running statistics r_mu, r_v (the buffers,
never stepped: the correction c - c_i acts on parameters only).
bn.aggregate (PFLlib, d832e76f6a23):
  average              the buffers go through l. 13-17 as every entry;
  parameters_only      (scaffold.bn_global = first_upload, the default)
                       y_i starts from x's parameters and client i's own
                       buffers (init.w's before it first trains; PFLlib
                       set_parameters, clientscaffold.py:62-64, copies
                       parameters() only); c_i+ = c_i on the buffers
                       (client_c and global_c are over parameters() only,
                       clientscaffold.py:18-20, serverscaffold.py); the new
                       x's buffers are the first participant's;
  parameters_only with scaffold.bn_global = previous
                       the same, but the new x's buffers are the previous
                       x's (serverscaffold.py:124-129: a deepcopy of the
                       previous global plus the parameters()' updates), so
                       init.w's for ever (the preset pfllib).

replay(spec, bugs) -> (trace, x, None, None).  Records: round_begin "w",
client_begin / step / client_end "y", client_end "c_i" (c_i+), server "w"
and server "c".  Bugs:

  scaffold-correction-sign   y <- y - eta (g + c_i - c)
  scaffold-no-correction     y <- y - eta g (FedAvg's local step)
  scaffold-option-flip       option I <-> II
  scaffold-K-first           option II divides by the first participant's K
  scaffold-K-epochs          option II divides by eta only (K dropped)
  scaffold-eta-g-ignored     x <- x + Delta x (eta_g taken as 1)
  scaffold-c-full-step       c <- c + Delta c (the |S|/N dropped)
  scaffold-c-mean-new        c <- (1/|S|) sum c_i+ (the sampled mean)
  scaffold-ci-reset          c_i forgotten between rounds (0 at each visit)
  scaffold-ci-minus-c-dropped option II: c_i+ <- c_i + (x - y_i)/(K eta)
  scaffold-dx-samples        Delta x weighted n_i / sum_S n_j
  scaffold-c-lr-flip         scaffold.c_lr round <-> initial
  scaffold-full-pass-batch   option I's g_i(x) on the first batch only
  lr-ignored, lr-per-round   (pflref_exact.round_factor)
  momentum-ignored           opt.* ignored (plain SGD)
  drawn-batches              the round's batch lists paired with the clients
                             in the drawn order (batches[j] is clients[j]'s)
  scaffold-init-ignored      init.c and init.c_i ignored (both start at 0)
  scaffold-init-c-zero       c starts at 0 when only init.c_i is given (the
                             mean of the c_i not taken)
  scaffold-correction-outside-optimizer
                             the optimizer steps on g alone and the
                             correction is added after it: y <- opt(y, g)
                             - eta (c - c_i)
  start-global-buffers       (bn.aggregate != average) y_i starts with x's
                             buffers
  start-w0-buffers           ... with init.w's buffers every round
  global-buffers-averaged    the new x's buffers x + eta_g Delta x as the rest
  global-buffers-last        ... the last participant's
  global-buffers-w0-flip     scaffold.bn_global first_upload <-> previous
"""
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

MUTANTS = {
    "scaffold-correction": ["scaffold-correction-sign", "scaffold-no-correction"],
    "scaffold-option": ["scaffold-option-flip"],
    "scaffold-local-steps": ["scaffold-K-first", "scaffold-K-epochs"],
    "scaffold-global-step": ["scaffold-eta-g-ignored"],
    "scaffold-server-control": ["scaffold-c-full-step", "scaffold-c-mean-new"],
    "scaffold-stale-control": ["scaffold-ci-reset"],
    "scaffold-client-control": ["scaffold-ci-minus-c-dropped"],
    "scaffold-aggregation": ["scaffold-dx-samples"],
    "scaffold-c-lr": ["scaffold-c-lr-flip"],
    "scaffold-full-pass": ["scaffold-full-pass-batch"],
    "lr-schedule": ["lr-ignored"],
    "lr-count": ["lr-per-round"],
    "schedule-drawn-order": ["drawn-batches"],
    "scaffold-optimizer": ["momentum-ignored",
                           "scaffold-correction-outside-optimizer"],
    "scaffold-initial-control": ["scaffold-init-ignored"],
    "scaffold-initial-c-mean": ["scaffold-init-c-zero"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last",
                          "global-buffers-w0-flip"],
}

# The switches' paper values and the presets (ref/engine/presets.c, read
# again from PFLlib: clientscaffold.py:73 for c_lr, :55-56 for the
# per-client scheduler).
SWITCH_DEFAULTS = {"scaffold.option": "II", "scaffold.c_lr": "round",
                   "lr.count": "rounds", "bn.aggregate": "average",
                   "scaffold.bn_global": "first_upload"}
# req: scaffold.preset.pfllib
PRESETS = {"pfllib": {"scaffold.option": "II", "scaffold.c_lr": "initial",
                      "lr.count": "trainings",
                      # clientscaffold.py:62-64, serverscaffold.py:124-129
                      "bn.aggregate": "parameters_only",
                      "scaffold.bn_global": "previous"}}


def settings(algorithm):
    """The switches of a spec's algorithm: defaults, preset, explicit."""
    sw = dict(SWITCH_DEFAULTS)
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    return sw


def initial_controls(init, N, P, bugs):
    """(c, [c_i]): the given init.c_i or 0, then the given init.c or the
    mean of the c_i (Sec. 4's c = 1/N sum c_i; 0 when neither is given)."""
    # req: scaffold.init
    if "scaffold-init-ignored" in bugs:
        init = {}
    ci = [[Fraction(0)] * P for _ in range(N)]
    if "c_i" in init:
        ci = [[exact(u) for u in row] for row in init["c_i"]]
        assert len(ci) == N and all(len(row) == P for row in ci)
    if "c" in init:
        c = [exact(u) for u in init["c"]]
        assert len(c) == P
    elif "scaffold-init-c-zero" in bugs:
        c = [Fraction(0)] * P
    else:
        c = [sum(row[p] for row in ci) / N for p in range(P)]
    return c, ci


def full_grad(pr, i, x, bugs):
    """grad f_i(x): the batch-mean loss gradient over all of client i's
    samples, in index order (option I's extra pass)."""
    return pr.grad(i, x, list(range(pr.n(i))), bugs)


def replay(spec, bugs=frozenset()):
    import pflref_exact_optim as po
    algorithm = spec["algorithm"]
    hp = algorithm.get("hyperparameters", {})
    sw = settings(algorithm)
    eta = exact(hp["eta"])
    eta_g = exact(hp.get("scaffold.eta_g", 1.0))
    option = sw["scaffold.option"]
    if "scaffold-option-flip" in bugs:
        option = "I" if option == "II" else "II"
    c_lr = sw["scaffold.c_lr"]
    if "scaffold-c-lr-flip" in bugs:
        c_lr = "initial" if c_lr == "round" else "round"
    # round_factor reads lr.* from the algorithm's switches: the preset's
    # lr.count joins them here
    alg_lr = dict(algorithm, switches=dict(algorithm.get("switches", {}),
                                           **{"lr.count": sw["lr.count"]}))
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        algorithm.get("switches", {}))
    N, P = len(pr.clients), pr.P
    x = px.initial(spec.get("init", {"kind": "zeros"}), P)
    x0 = list(x)
    layers = pr.kind == "layers"
    mbugs = frozenset(bugs) if layers else frozenset()   # the model's bugs
    buf = pr.buffers
    # bn.aggregate: each client's own buffers (its model's), init.w's first
    held = {} if sw["bn.aggregate"] == "parameters_only" and buf else None
    bn_global = sw["scaffold.bn_global"]
    if "global-buffers-w0-flip" in bugs:
        bn_global = "first_upload" if bn_global == "previous" else "previous"
    c, ci = initial_controls(spec.get("init", {}), N, P, bugs)
    opt = None
    if "momentum-ignored" not in bugs:
        # the optimizer's own bugs pass through; a spec's split is the
        # mask opt.decay_scope = shared / personal reads (docs/optimizers.md)
        personal = None
        if "split" in spec:
            import pflref_exact_pfl as pp
            personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
        opt = po.for_spec(spec, pr, 1, personal, frozenset(bugs))
    trained = [0] * N
    trace = Trace()
    # req: scaffold.alg1.l1, scaffold.alg1.l2
    for t, r in enumerate(spec["schedule"]["rounds"]):
        # req: scaffold.alg1.l3, scaffold.alg1.l4, scaffold.alg1.l5
        trace.emit("round_begin", "train", t, None, None, "w", x)
        S = r["clients"]
        # batches[j] is clients[j]'s (the drawn order is information only)
        owners = r.get("drawn", S) if "drawn-batches" in bugs else S
        plan = sorted(zip(owners, r["batches"]))
        dy_sum = [Fraction(0)] * P
        dc_sum = [Fraction(0)] * P
        n_S = sum(pr.n(i) for i in S)
        K_first = len(plan[0][1])
        # req: scaffold.alg1.l6
        for i, steps in plan:
            f = px.round_factor(alg_lr, t, frozenset(bugs), trained=trained[i])
            eta_l = eta * f
            if "scaffold-ci-reset" in bugs:
                ci[i] = [Fraction(0)] * P
            # req: scaffold.alg1.l7
            y = list(x)
            if held is not None and "start-global-buffers" not in bugs:
                mine = x0 if "start-w0-buffers" in bugs else held.get(i, x0)
                y = [mine[p] if p in buf else u for p, u in enumerate(y)]
            trace.emit("client_begin", "train", t, i, 0, "y", y)
            if opt is not None:
                opt.begin(i)
            # req: scaffold.alg1.l8, scaffold.alg1.l9, scaffold.alg1.l10
            for s, batch in enumerate(steps, start=1):
                g = pr.grad(i, y, batch, mbugs)
                # the same training pass moves r_mu, r_v (bn.running)
                moved = pr.move_running(i, y, batch, mbugs)
                if "scaffold-no-correction" in bugs:
                    d = list(g)
                elif "scaffold-correction-sign" in bugs:
                    d = [g[p] + ci[i][p] - c[p] for p in range(P)]
                else:
                    d = [g[p] - ci[i][p] + c[p] for p in range(P)]
                if opt is not None and "scaffold-correction-outside-optimizer" in bugs:
                    y = opt.stepper(i, 0)(list(g), y, eta_l, None)
                    y = [y[p] - eta_l * (c[p] - ci[i][p]) for p in range(P)]
                elif opt is not None:
                    y = opt.stepper(i, 0)(d, y, eta_l, None)
                else:
                    y = [y[p] - eta_l * d[p] for p in range(P)]
                if buf:     # buffers: moved by the pass, never stepped
                    y = [moved[p] if p in buf else u for p, u in enumerate(y)]
                trace.emit("step", "train", t, i, s, "y", y)
            # req: scaffold.alg1.l11
            trace.emit("client_end", "train", t, i, None, "y", y)
            # req: scaffold.alg1.l12, scaffold.eq4
            if option == "I":
                if "scaffold-full-pass-batch" in bugs:
                    c_plus = pr.grad(i, x, steps[0])
                else:
                    c_plus = full_grad(pr, i, x, frozenset())
            else:
                K = K_first if "scaffold-K-first" in bugs else len(steps)
                if "scaffold-K-epochs" in bugs:
                    K = 1
                eta_c = eta if c_lr == "initial" else eta_l
                minus_c = [Fraction(0)] * P if "scaffold-ci-minus-c-dropped" in bugs else c
                c_plus = [ci[i][p] - minus_c[p] + (x[p] - y[p]) / (K * eta_c)
                          for p in range(P)]
            if held is not None:    # control variates over parameters() only
                c_plus = [ci[i][p] if p in buf else u for p, u in enumerate(c_plus)]
                held[i] = list(y)
            trace.emit("client_end", "train", t, i, None, "c_i", c_plus)
            # req: scaffold.alg1.l13, scaffold.alg1.l16
            wy = (Fraction(pr.n(i), n_S) if "scaffold-dx-samples" in bugs
                  else Fraction(1, len(S)))
            for p in range(P):
                dy_sum[p] += wy * (y[p] - x[p])
                dc_sum[p] += (c_plus[p] - ci[i][p]) / len(S)
            # req: scaffold.alg1.l14
            ci[i] = c_plus
            trained[i] += 1
            # req: scaffold.alg1.l15
        # req: scaffold.alg1.l17
        g_step = 1 if "scaffold-eta-g-ignored" in bugs else eta_g
        new = [x[p] + g_step * dy_sum[p] for p in range(P)]
        if held is not None and "global-buffers-averaged" not in bugs:
            if "global-buffers-last" in bugs:
                src = held[plan[-1][0]]
            elif bn_global == "previous":
                src = x                 # the previous global's (init.w's)
            else:
                src = held[plan[0][0]]  # the first participant's
            new = [src[p] if p in buf else u for p, u in enumerate(new)]
        x = new
        trace.emit("server", "train", t, None, None, "w", x)
        if "scaffold-c-full-step" in bugs:
            c = [c[p] + dc_sum[p] for p in range(P)]
        elif "scaffold-c-mean-new" in bugs:
            c = [sum(ci[i][p] for i in S) / len(S) for p in range(P)]
        else:
            c = [c[p] + Fraction(len(S), N) * dc_sum[p] for p in range(P)]
        trace.emit("server", "train", t, None, None, "c", c)
    # req: scaffold.alg1.l18
    return trace, x, None, None


def supported(spec):
    return (spec["algorithm"]["name"] == "scaffold"
            and spec["model"]["kind"] in ("quadratic", "linear", "layers")
            and spec.get("schedule", {}).get("kind") == "given")
