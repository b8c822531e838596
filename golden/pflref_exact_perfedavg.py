# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_perfedavg.py: Per-FedAvg (Fallah, Mokhtari, Ozdaglar,
NeurIPS 2020, arXiv 2002.07948, Alg. 1) in exact rational arithmetic,
written from the paper's update rules as shared/spec notes §4 transcribe
them, independently of the C reference.

One round k: every user i of A_k starts from w_k and runs τ local steps; step
t reads three consecutive batches of the user's list, D = batch 3(t−1),
D′ = 3(t−1)+1, D″ = 3(t−1)+2:

    w̃   = w − α ∇f_i(w; D)
    q   = ∇f_i(w̃; D′)
    exact: w ← w − β (q − α ∇²f_i(w; D″) q)
    fo:    w ← w − β q
    hf:    d = [∇f_i(w + δq; D″) − ∇f_i(w − δq; D″)] / (2δ),  w ← w − β (q − α d)

then w_{k+1} = Σ_{A_k} c_i w^i (c_i = 1/|A_k|, or n_i/Σ_{A_k} n_j).  After the
last round every client personalises θ_i = w − α ∇f_i(w; D₁) (and, with
perfedavg.eval = alpha_then_beta, θ_i ← θ_i − β ∇f_i(θ_i; D₂)) on its post
batches.

The Hessian-vector product ∇²f(w; D″) v is computed without any formula for
the Hessian: the gradients of the exact models (quadratic, linear, and the
mlp with the identity activation and a squared loss) are polynomials of
degree at most 3 in the parameters, so along a line g(w + εv) is a
polynomial p(ε) of degree ≤ 3 and its derivative at 0 is exactly

    p′(0) = (4 S(1) − S(2)) / 3,   S(ε) = [p(ε) − p(−ε)] / (2ε)

(S(ε) = p′(0) + c ε², the odd terms of degree ≤ 3).  hvp confirms the
degree on every call (the same extrapolation from ε = 1/2 and 1 must
agree), so a model outside that class cannot slip through.  A layer list
("kind": "layers", squared losses) is piecewise smooth instead: its product
is the ε part of the gradient run on the dual numbers w + ε v
(pflref_exact_layers.hvp_exact: forward mode over the reverse pass, relu''
= 0 and the max-pool choices those at w), exact in fractions for the
rational layers and 60-digit for tanh and sigmoid.

Trajectory (what the C reference is required to emit, docs/formats.md):
round_begin w; client_begin w_local (step 0); per step t: step w_tilde (t),
note hvp (t; exact and hf), step w_local (t); client_end w_local; server w;
then per client in phase "finetune": client_begin theta (0), step theta (1
[, 2]), client_end theta.

Bugs (realistic implementation mistakes; pflref_golden.check_mutants and
golden/audit.py):

  fo-step          the Hessian term dropped (the FO step where exact or hf
                   is configured)
  hessian-sign     w ← w − β (q + α H q)
  hessian-at-tilde the Hessian (exact) or the finite difference (hf) taken
                   at w̃ instead of w
  hessian-on-d1    the Hessian-vector product on D′ instead of D″
  hf-center-tilde  hf: d = [∇f(w̃ + δq; D″) − ∇f(w̃ − δq; D″)] / (2δ)
  reuse-d          one batch for everything: D′ = D″ = D
  reuse-d-for-d1   q taken on D (D′ = D), D″ kept
  no-restore       the β step applied to w̃ (two plain SGD steps when fo;
                   the pFedMe repository before 2021-03-20)
  eval-steps-flip  two personalisation steps where one is configured, or
                   one where two are
  eval-on-w0       the personalisation starts from w0 instead of w
  weights-flip     perfedavg.weights uniform <-> samples
  restart-w0       a user starts each round from w0 instead of w_k
  steps-minus-one  the last local step of every participation dropped
  drawn-batches    the round's batch lists paired with the clients in the
                   drawn order instead of the ascending clients
  init-zeros, batch-sum, loss-x2, lr-ignored, lr-shifted, lr-per-round,
  lr-one-call      as in pflref_exact.py (round_factor)
  beta-decayed     β decayed with α where lr.scope = no_beta keeps it
  eval-lr-flip     perfedavg.eval_lr initial <-> decayed (the
                   personalisation's α undecayed where it decays, or decayed
                   where it does not)

Learning-rate decay (lr.schedule, lr.gamma, lr.count) scales α and β of a
user's local steps by pflref_exact.round_factor; perfedavg.calls = two
(PFLlib's serverperavg.py calls train() twice a round, written from
shared/spec/notes-pfllib-as-run.md §2.2 and §2.3) runs steps 1..τ/2 as the
first call and τ/2+1..τ as the second, the second one decay step further.
lr.scope = no_beta keeps β undecayed (TsingZ0/PFLlib 487a29e,
system/flcore/clients/clientperavg.py: `self.beta = self.learning_rate` once
in __init__, the second step `self.optimizer.step(beta=self.beta)`).  The
personalisation after the last round takes the undecayed α, β
(perfedavg.eval_lr = initial) or, with perfedavg.eval_lr = decayed (the same
file's train_one_step calls `self.optimizer.step()`, the param group's
decayed lr), user i's after all its scheduler steps: round_factor at
t = the number of rounds, trained = the rounds i trained in, call 0.

Client optimizer (opt.*, through golden/pflref_exact_optim.py's
Optimizers, one per client): it steps the meta step on d = q − α H q (FO:
d = q) with step size β; with perfedavg.opt_steps = both it also steps the α
step on ∇f(w; D) with step size α, from w into w̃, the one state carried
from the α step to the β step (TsingZ0/PFLlib d832e76f6a23,
system/flcore/clients/clientperavg.py:16 one PerAvgOptimizer, :51
self.optimizer.step(), :69-70 the parameters restored, :72
self.optimizer.step(beta=self.beta)); the optimizer is new at every train()
call under opt.state = reset.  The personalisation stays plain (§5).
Bugs: opt-steps-flip (meta <-> both), opt-two-states (both, the α step on
an optimizer state of its own), and pflref_exact_optim's.

Batch normalisation (a layer list with batchnorm layers; bn.running,
bn.running_var through pflref_exact.Problem.bn_switches): torch's train()
moves the one module's running statistics at every training forward,
whichever point it runs at, and PFLlib's restore of parameters()
(clientperavg.py:69-70) leaves them: a step moves w's statistics by the pass
at w on D, then at w̃ on D′, then (exact) the Hessian-vector product's
forward at w on D″, or (hf) the passes at w + δq and w − δq (fo: none on
D″); the personalisation's pass moves θ_i's.  The server averages them with
the parameters (bn.aggregate = average; parameters_only is
golden/perfedavg/make_bn.py's, refused here).

Presets (pflref list; written from the notes, not read from pflref):
  pfllib           fo, samples, one_alpha_step, calls two, lr.count
                   trainings (notes-pfllib-as-run.md §2.3 Per-FedAvg, §2.2),
                   lr.scope no_beta, eval_lr decayed (clientperavg.py at
                   PFLlib 487a29e, above)
"""
from fractions import Fraction

from pflref_exact import NO_BUGS, Problem, initial, round_factor
from pflref_golden import Trace, exact

SWITCH_DEFAULTS = {"perfedavg.variant": "exact", "perfedavg.weights": "uniform",
                   "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "one",
                   "lr.schedule": "constant", "lr.count": "rounds",
                   "lr.scope": "all", "perfedavg.eval_lr": "initial",
                   "perfedavg.opt_steps": "meta"}
PRESETS = {
    "pfllib": {"perfedavg.variant": "fo", "perfedavg.weights": "samples",
               "perfedavg.eval": "one_alpha_step", "perfedavg.calls": "two",
               "lr.count": "trainings", "lr.scope": "no_beta",
               "perfedavg.eval_lr": "decayed", "perfedavg.opt_steps": "both"},
}

MUTANTS = {
    "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-at-tilde",
                               "hessian-on-d1"],
    "perfedavg-hf-center": ["hf-center-tilde"],
    "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
    "perfedavg-no-restore": ["no-restore"],
    "perfedavg-eval-steps": ["eval-steps-flip"],
    "aggregation-weights": ["weights-flip"],
    "stale-global": ["restart-w0", "eval-on-w0"],
    "local-step-count": ["steps-minus-one"],
    "initial-point": ["init-zeros"],
    "batch-mean": ["batch-sum"],
    "loss-scale": ["loss-x2"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-count": ["lr-per-round", "lr-one-call"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "beta-decayed",
                    "eval-lr-flip"],
    "perfedavg-optimizer-steps": ["opt-steps-flip", "opt-two-states"],
}


def settings(algorithm):
    """(hyperparameters as exact values, switches) of a spec's algorithm."""
    hp = {k: exact(v) for k, v in algorithm.get("hyperparameters", {}).items()}
    sw = dict(SWITCH_DEFAULTS)
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    return hp, sw


def _axpy(x, c, y):
    """x + c·y, entry by entry."""
    return [a + c * b for a, b in zip(x, y)]


def _sym_diff(pr, i, w, v, eps, batch, bugs):
    """S(ε) = [∇f(w + εv) − ∇f(w − εv)] / (2ε)."""
    gp = pr.grad(i, _axpy(w, eps, v), batch, bugs)
    gm = pr.grad(i, _axpy(w, -eps, v), batch, bugs)
    return [(a - b) / (2 * eps) for a, b in zip(gp, gm)]


def hvp(pr, i, w, v, batch, bugs=NO_BUGS):
    """∇²f_i(w; batch) v, exact for gradients polynomial of degree ≤ 3 (see
    the module text).  The extrapolation is also formed from ε = 1/2 and 1;
    the two agree for every polynomial of degree ≤ 4 and not in general, so
    the assertion confirms the degree on every call.  A layer list
    (pflref_exact_layers.py, any layer kind) takes the ε part of its
    gradient on the dual numbers w + ε v instead: exact away from its
    kinks, whatever the degree."""
    if pr.kind == "layers":
        import pflref_exact_layers as pl
        return pl.hvp_exact(pr.layers, pr.clients[i]["data"], w, v, batch, bugs)
    s_half, s1, s2 = (_sym_diff(pr, i, w, v, Fraction(e), batch, bugs)
                      for e in (Fraction(1, 2), 1, 2))
    out = [(4 * a - b) / 3 for a, b in zip(s1, s2)]
    assert out == [(4 * a - b) / 3 for a, b in zip(s_half, s1)], \
        "gradient not polynomial of degree <= 3 along v"
    return out


def local_step(pr, i, w, w0, batches, t, hp, variant, trace, rnd, bugs=NO_BUGS,
               opt=None, both=False):
    """Step t (from 1) of user i from w; returns the new w.  opt: the run's
    Optimizers (None: plain steps); both: the α step through it too."""
    alpha, beta = hp["alpha"], hp["beta"]
    D, D1, D2 = batches[3 * (t - 1)], batches[3 * (t - 1) + 1], batches[3 * (t - 1) + 2]
    if "reuse-d" in bugs:
        D1 = D2 = D
    if "reuse-d-for-d1" in bugs:
        D1 = D
    if "hessian-on-d1" in bugs:
        D2 = D1
    g = pr.grad(i, w, D, bugs)
    # under bn.running = update each training pass moves w's running
    # statistics (ref/algorithms/perfedavg.c's order: D at w, D′ at w̃, D″)
    w = _moved(pr, i, w, w, D, bugs)
    # req: perfedavg.alg1.l7
    if opt is not None and both != ("opt-steps-flip" in bugs):
        # the optimizer's step of size α (clientperavg.py:51)
        w_tilde = opt.step(i, 1 if "opt-two-states" in bugs else 0, g, w,
                           alpha)
    else:
        w_tilde = _axpy(w, -alpha, g)                # w̃ = w − α ∇f(w; D)
    trace.emit("step", "train", rnd, i, t, "w_tilde", w_tilde)
    q = pr.grad(i, w_tilde, D1, bugs)                # q = ∇f(w̃; D′)
    w = _moved(pr, i, w_tilde, w, D1, bugs)          # the pass at w̃ moves w's
    def meta(d):
        """w ← base − β d, or the optimizer's step on d (:72); base: w
        with the buffers every pass moved (PFLlib's restore of parameters()
        leaves the buffers), or w̃ (no-restore)."""
        base = w_tilde if "no-restore" in bugs else w
        if opt is not None:
            return opt.step(i, 0, d, base, beta)
        return _axpy(base, -beta, d)

    if variant == "fo":
        return _record(trace, rnd, i, t, meta(q))
    center = w_tilde if "hessian-at-tilde" in bugs else w
    if variant == "exact":
        hv = hvp(pr, i, center, q, D2, bugs)         # ∇²f(w; D″) q
        w = _moved(pr, i, center, w, D2, bugs)       # its forward, one pass
    else:
        assert variant == "hf", variant
        delta = hp["delta"]
        if "hf-center-tilde" in bugs:
            center = w_tilde
        hv = _sym_diff(pr, i, center, q, delta, D2, bugs)
        for sgn in (1, -1):                          # at w + δq, then w − δq
            w = _moved(pr, i, _axpy(center, sgn * delta, q), w, D2, bugs)
    trace.emit("note", "train", rnd, i, t, "hvp", hv)
    if "fo-step" in bugs:
        return _record(trace, rnd, i, t, meta(q))
    sign = -1 if "hessian-sign" in bugs else 1
    # req: perfedavg.alg1.l8
    step = [a - sign * alpha * b for a, b in zip(q, hv)]   # q − α H q
    return _record(trace, rnd, i, t, meta(step))


def _moved(pr, i, point, x, batch, bugs):
    """x with its batch-norm running statistics moved by the training pass
    at `point` on the batch (bn.running = update; torch's train(): the
    forward's batch statistics, whichever point it runs at; pflref_exact.
    Problem.move_running), x itself without batch normalisation or under
    bn.running = frozen."""
    if not pr.buffers:
        return x
    moved = pr.move_running(i, point, batch, bugs)
    return [moved[p] if p in pr.buffers else x[p] for p in range(pr.P)]


def _record(trace, rnd, i, t, w):
    trace.emit("step", "train", rnd, i, t, "w_local", w)
    return w


def round_(pr, w, w0, t, plan, hp, sw, trace, bugs=NO_BUGS, trained=None,
           opt=None):
    """One round; plan = [(i, batch lists)] over A_k ascending.  Returns
    w_{k+1}.  trained: the rounds each user trained in before (lr.count);
    opt: the client optimizers (None: plain SGD)."""
    both = sw.get("perfedavg.opt_steps", "meta") == "both"
    decay = {"switches": sw, "hyperparameters": hp}
    calls = 2 if sw.get("perfedavg.calls") == "two" else 1
    variant = sw["perfedavg.variant"]
    weights = sw["perfedavg.weights"]
    if "weights-flip" in bugs:
        weights = "samples" if weights == "uniform" else "uniform"
    # req: perfedavg.alg1.l1, perfedavg.alg1.l2, perfedavg.alg1.l3
    trace.emit("round_begin", "train", t, None, None, "w", w)
    local = {}
    # req: perfedavg.alg1.l4
    for i, batches in plan:
        assert len(batches) % 3 == 0 and batches, (i, len(batches))
        tau = len(batches) // 3
        if "steps-minus-one" in bugs:
            tau -= 1
        # req: perfedavg.alg1.l5
        wi = list(w0 if "restart-w0" in bugs else w)
        trace.emit("client_begin", "train", t, i, 0, "w_local", wi)
        half = len(batches) // 3 // 2       # the first call's steps (calls two)
        # req: perfedavg.alg1.l6
        for s in range(1, tau + 1):
            call = 1 if calls == 2 and s > half else 0
            if opt is not None and (s == 1 or (calls == 2 and s == half + 1)):
                opt.begin(i)            # a train() call: reset's new optimizer
            c = round_factor(decay, t, bugs,
                             trained=None if trained is None else trained[i],
                             call=call, calls=calls)
            # lr.scope = no_beta: β keeps its value (step(beta=self.beta))
            cb = 1 if (sw.get("lr.scope", "all") == "no_beta"
                       and "beta-decayed" not in bugs) else c
            hp_s = dict(hp, alpha=hp["alpha"] * c, beta=hp["beta"] * cb)
            wi = local_step(pr, i, wi, w0, batches, s, hp_s, variant, trace, t,
                            bugs, opt, both)
        # req: perfedavg.alg1.l9
        trace.emit("client_end", "train", t, i, None, "w_local", wi)
        local[i] = wi
    A = sorted(local)
    if weights == "samples":
        n_A = sum(pr.n(i) for i in A)
        c = {i: Fraction(pr.n(i), n_A) for i in A}
    else:
        c = {i: Fraction(1, len(A)) for i in A}
    # req: perfedavg.alg1.l10
    new = [sum(c[i] * local[i][p] for i in A) for p in range(pr.P)]
    trace.emit("server", "train", t, None, None, "w", new)
    return new


def personalise(pr, w, w0, post, hp, sw, trace, bugs=NO_BUGS, trained=None,
                rounds=0):
    """θ_i = w − α ∇f_i(w; D₁) [then θ_i ← θ_i − β ∇f_i(θ_i; D₂)] for every
    client; returns [θ_0, ...].  perfedavg.eval_lr = decayed: α (and β as
    lr.scope decays it) times round_factor after `rounds` rounds, user i
    having trained in trained[i] of them."""
    decay = {"switches": sw, "hyperparameters": hp}
    calls = 2 if sw.get("perfedavg.calls") == "two" else 1
    two = sw["perfedavg.eval"] == "alpha_then_beta"
    if "eval-steps-flip" in bugs:
        two = not two
    thetas = []
    for i, batches in enumerate(post):
        theta = list(w0 if "eval-on-w0" in bugs else w)
        trace.emit("client_begin", "finetune", None, i, 0, "theta", theta)
        alpha, beta = hp["alpha"], hp["beta"]
        decayed = sw.get("perfedavg.eval_lr", "initial") == "decayed"
        if "eval-lr-flip" in bugs:
            decayed = not decayed
        if decayed:
            c = round_factor(decay, rounds, bugs,
                             trained=None if trained is None else trained[i],
                             call=0, calls=calls)
            alpha = alpha * c
            if sw.get("lr.scope", "all") != "no_beta" or "beta-decayed" in bugs:
                beta = beta * c
        steps = [(alpha, batches[0])]
        if two:
            # the β step on D₂ (a one-batch post list: its batch again, what
            # an implementation that ignores the configured count does)
            steps.append((beta, batches[1] if len(batches) > 1 else batches[0]))
        for r, (eta, batch) in enumerate(steps, start=1):
            # req: perfedavg.eq4
            g = pr.grad(i, theta, batch, bugs)
            theta = _moved(pr, i, theta, theta, batch, bugs)   # the pass in train()
            theta = _axpy(theta, -eta, g)
            trace.emit("step", "finetune", None, i, r, "theta", theta)
        trace.emit("client_end", "finetune", None, i, None, "theta", theta)
        thetas.append(theta)
    return thetas


def run(pr, w0, rounds, post, hp, sw, bugs=NO_BUGS, opt=None):
    """The whole run: rounds = [[(i, batch lists)], ...] ; post = one batch
    list per client.  Returns (trace, w, thetas)."""
    trace = Trace()
    w = list(w0)
    trained = [0] * len(pr.clients)
    for t, plan in enumerate(rounds):
        w = round_(pr, w, w0, t, plan, hp, sw, trace, bugs, trained, opt)
        for i, _ in plan:
            trained[i] += 1
    return trace, w, personalise(pr, w, w0, post, hp, sw, trace, bugs, trained,
                                 len(rounds))


def exact_model(model):
    return (model["kind"] in ("quadratic", "linear")
            or (model["kind"] == "layers"
                and model.get("loss") in ("squared", "half_squared"))
            or (model["kind"] == "mlp" and model.get("activation", "relu") == "identity"
                and model.get("loss") in ("squared", "half_squared")))


def supported(spec):
    return (spec["algorithm"]["name"] == "perfedavg"
            and spec["algorithm"].get("preset", "paper") in ("paper",) + tuple(PRESETS)
            and exact_model(spec["model"])
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def replay(spec, bugs=NO_BUGS):
    """Run a perfedavg spec exactly as written: (trace, w, v, None)."""
    hp, sw = settings(spec["algorithm"])
    # bn.running, bn.running_var: how every training pass moves a layer
    # list's running statistics (a model without batch norm has none)
    pr = Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    assert not pr.buffers or sw.get("bn.aggregate", "average") == "average", \
        "bn.aggregate = parameters_only: golden/perfedavg/make_bn.py"
    w0 = initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    sched = spec["schedule"]
    # batches[j] is clients[j]'s; drawn is information only
    rounds = [sorted(zip(r.get("drawn", r["clients"]) if "drawn-batches" in bugs
                         else r["clients"], r["batches"]))
              for r in sched["rounds"]]
    import pflref_exact_optim as po
    # slot 0: the client's one optimizer; slot 1 only for opt-two-states
    # opt.decay_scope = shared | personal reads the spec's split
    # (docs/optimizers.md, lambda_B), as for every algorithm's optimizer
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 2, personal, frozenset(bugs))
    trace, w, thetas = run(pr, w0, rounds, sched["post"], hp, sw, bugs, opt)
    return trace, w, thetas, None
