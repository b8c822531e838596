# SPDX-License-Identifier: GPL-3.0-or-later
"""The client optimizers (ref/engine/optim.c, docs/optimizers.md) written
again, independently, from torch's documented update rules, for the golden
vectors of golden/optim/.

SGD (torch.optim.SGD: momentum mu, dampening tau, weight_decay lam,
nesterov), its classical form (Polyak; Sutskever et al. 2013: v <- mu v -
eta d, theta <- theta + v), decoupled weight decay (theta <- theta (1 -
eta lam), torch.optim.AdamW's form) and clip_grad_norm_ (coefficient
c / (||d|| + 1e-6), applied when < 1, on the loss gradient before weight
decay) are computed in exact fractions, except the clip norm's square
root; Adam and AdamW (torch.optim.Adam / AdamW: m <- b1 m + (1 - b1) d,
v <- b2 v + (1 - b2) d^2, theta <- theta - eta/(1 - b1^t) m / (sqrt(v) /
sqrt(1 - b2^t) + eps)) take their square roots in Python decimal at 60
digits, and every value of a step that passed a square root is rounded to
60 significant digits (relative error < 1e-59 per step, far below any
tolerance).

The state lives as long as opt.state says: `reset` (a new optimizer for
each client update), `client` (one per client, kept), `server` (one for
all clients in training order).  Step counts t are per block (torch's
per-parameter state).

Bugs (for check_mutants; each a plausible implementation mistake):
  momentum-form-swap   pytorch <-> classical momentum form
  dampening-first      dampening applied at the first step too (b = (1 - tau) d)
  buffer-without-momentum   a buffer kept at mu = 0 (b <- d, then b <- 0 b +
                       (1 - tau) d): the steps after a block's first are
                       dampened, where torch keeps no buffer without momentum
                       and ignores the dampening
  nesterov-ignored     nesterov = on stepped as plain momentum
  decay-form-swap      coupled <-> decoupled weight decay (adamw: as adam)
  decay-scope-all      weight decay on every block (the bias too)
  adam-no-bias-correction   theta <- theta - eta m / (sqrt(v) + eps)
  adam-eps-inside      denominator sqrt(v / (1 - b2^t) + eps)
  clip-after-decay     clipping of d + lam theta (after coupled decay)
  clip-per-block       each block clipped by its own norm
  state-reset, state-client, state-server   the other lifetimes
  decay-scope-flip     opt.decay_scope shared <-> personal (the split's
                       blocks read the other way round)
  slots-shared         a client's optimizers (Ditto's global and personal
                       solver, APFL's w and v, FedAlt's u and v, the
                       training and the fine-tuning of finetune and
                       interp) one state: one buffer, one step count

Every algorithm whose clients step through the shared local solver takes
these rules (docs/optimizers.md, "Where the state lives"); the exact
replays (pflref_exact.py: fedavg, local, finetune, ditto, pfedme and prox
(their inner solver);
pflref_exact_pfl.py: fedalt, fedsim; pflref_exact_apfl.py,
pflref_exact_interp.py, pflref_exact_cfl.py, pflref_exact_ifca.py,
pflref_exact_fedfomo.py, pflref_exact_pfedhn.py) build an Optimizers for a
spec that sets any opt.* away from its default (for_spec) and hand each
local step's gradient to Optimizers.step instead of the plain SGD step;
without one they run exactly as before.
"""
from decimal import Decimal, localcontext
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace

PREC = 60
CLIP_EPS = Fraction(1e-6)       # torch's 1e-6, at its double's value
# A list to receive (||d||, exact?, coefficient) of every clip, or None
# (the generators' check that a vector's clip norms are rational).
CLIP_LOG = None


def _dec(q):
    with localcontext() as ctx:
        ctx.prec = PREC
        return Decimal(q.numerator) / Decimal(q.denominator)


def dsqrt(q):
    """sqrt(q) to 60 significant digits, as a Fraction."""
    assert q >= 0
    if q == 0:
        return Fraction(0)
    with localcontext() as ctx:
        ctx.prec = PREC
        return Fraction(_dec(q).sqrt())


def r60(q):
    """q rounded to 60 significant digits (after a square root)."""
    return Fraction(_dec(q)) if q != 0 else Fraction(0)


DEFAULTS = {"opt.method": "sgd", "opt.momentum": 0.0, "opt.dampening": 0.0,
            "opt.weight_decay": 0.0, "opt.beta1": 0.9, "opt.beta2": 0.999,
            "opt.eps": 1e-8, "opt.clip_norm": None,
            "opt.momentum_form": "pytorch", "opt.nesterov": "off",
            "opt.weight_decay_form": "coupled", "opt.decay_scope": "all",
            "opt.clip": "off", "opt.state": "reset"}


# The bugs that run a spec's optimizer state under another lifetime.
STATE_BUGS = ["state-reset", "state-client", "state-server"]


def other_lifetimes(algorithm):
    """The state bugs of the lifetimes other than the spec's opt.state:
    the mutants of the flag optimizer-state-lifetime."""
    life = config(algorithm)["opt.state"]
    return [b for b in STATE_BUGS if b != "state-" + life]


def config(algorithm):
    """The opt.* settings of a spec's algorithm object, defaults filled."""
    c = dict(DEFAULTS)
    c.update({k: v for k, v in algorithm.get("hyperparameters", {}).items()
              if k.startswith("opt.")})
    c.update({k: v for k, v in algorithm.get("switches", {}).items()
              if k.startswith("opt.")})
    return c


def blocks(pr):
    """(name, indices) of the model's parameter blocks in layout order
    (docs/models.md): quadratic w; linear w, then b; mlp W1, b1 (when
    hidden_bias), W2, b2 (when bias); or, for a model view with opt_blocks
    (pflref_exact_fedbn.py's mlp with bn), its own list, the parameters
    only: the batch-norm buffers r_μ, r_v are not parameters and never step
    (torch optimizers range over parameters()), their entries of theta pass
    through unchanged."""
    if hasattr(pr, "opt_blocks"):
        return pr.opt_blocks
    if pr.kind == "layers":
        # a layer list (pflref_exact_layers.py): its parameter blocks
        # NAME.weight, NAME.bias in layout order, without the batch-norm
        # buffers running_mean, running_var (not parameters: they never
        # step, their entries pass unchanged)
        return [(b["name"], list(range(o, o + b["size"])))
                for b, o in sorted(pr.layers.block_offsets(), key=lambda x: x[1])
                if not b["is_buffer"]]
    if pr.kind == "mlp":
        out, o = [], 0
        for name, size, present in (("W1", pr.h * pr.d, True),
                                    ("b1", pr.h, pr.hidden_bias),
                                    ("W2", pr.k * pr.h, True),
                                    ("b2", pr.k, pr.bias)):
            if present:
                out.append((name, list(range(o, o + size))))
                o += size
        return out
    assert pr.kind in ("linear", "quadratic"), pr.kind
    out = [("w", list(range(pr.d)))]
    if pr.bias:
        out.append(("b", [pr.d]))
    return out


def is_bias(name, pr=None):
    """A block of the no-decay group of opt.decay_scope = weights
    (docs/optimizers.md, λ_B): a bias (b, b1, b2, a layer list's
    NAME.bias) or a batch-norm layer's parameters (its weight γ too)."""
    if name.endswith(".bias"):
        return True
    # a layer list's model (a Problem's .layers, FedBN's view's .M)
    model = getattr(pr, "layers", None) or getattr(pr, "M", None)
    if "." in name and hasattr(model, "blocks"):
        layer = name.rsplit(".", 1)[0]
        return any(b["is_bn"] and b["name"].rsplit(".", 1)[0] == layer
                   for b in model.blocks)
    return name[0] == "b" and (len(name) == 1 or name[1:].isdigit())


def is_bn(name):
    """A batch-norm parameter block (the mlp's gamma, beta: pflref_exact_fedbn
    names them so), which opt.decay_scope = weights leaves undecayed too
    (docs/optimizers.md: "nor batch-norm blocks")."""
    return name in ("gamma", "beta")


class State:
    """One optimizer's state: b (momentum buffer / velocity / Adam's m), v
    (Adam's second moment), t per block."""

    def __init__(self, P):
        self.b = [Fraction(0)] * P
        self.v = [Fraction(0)] * P
        self.t = {}


def step(c, st, pr, d, theta, eta, bugs, moving=None, personal=None,
         eta_v=None, seen=None):
    """One optimizer step; d the loss gradient; returns the new theta.
    moving: the indices of the blocks that move in this step (a masked job:
    FedAlt's v or u steps, a personal fine-tuning), None = every block;
    the others keep their values, buffers and step counts (torch skips a
    parameter whose grad is None) and stay out of the clip norm.
    personal: the split's mask (1 on the personal entries) that
    opt.decay_scope = shared / personal reads, None = no split (every block
    shared); eta_v: the step size of the personal blocks (FedSim's second
    parameter group), None = eta.
    seen: a list that receives p.grad as torch leaves it after the step,
    or None: clip_grad_norm_ rescales .grad in place (the clipped d), while
    the step's weight decay, momentum and moments are computed out of
    place and leave it (code that reads p.grad after optimizer.step(), as
    PFLlib's APFL alpha_update does, reads the clipped loss gradient)."""
    d, theta = list(d), list(theta)
    method = c["opt.method"]
    lam = Fraction(c["opt.weight_decay"])
    form = c["opt.weight_decay_form"]
    decoupled = method == "adamw" or form == "decoupled"
    if "decay-form-swap" in bugs:
        decoupled = not decoupled
    scope = "all" if "decay-scope-all" in bugs else c["opt.decay_scope"]
    if "decay-scope-flip" in bugs and scope in ("shared", "personal"):
        scope = "personal" if scope == "shared" else "shared"
    blks = [(bi, name, idx) for bi, (name, idx) in enumerate(blocks(pr))
            if moving is None or bi in moving]

    def is_personal(idx):
        return personal is not None and bool(personal[idx[0]])

    def decay_of(name, idx):
        if scope == "weights" and (is_bias(name, pr) or is_bn(name)):
            return Fraction(0)
        if scope == "shared" and is_personal(idx):
            return Fraction(0)
        if scope == "personal" and not is_personal(idx):
            return Fraction(0)
        return lam

    if "clip-after-decay" in bugs and not decoupled:
        for _, name, idx in blks:
            for p in idx:
                d[p] += decay_of(name, idx) * theta[p]
        lam_applied = True
    else:
        lam_applied = False
    if c["opt.clip"] == "norm":
        cmax = Fraction(c["opt.clip_norm"])
        groups = ([idx for _, _, idx in blks] if "clip-per-block" in bugs
                  else [[p for _, _, idx in blks for p in idx]])
        for idx in groups:
            sq = sum(d[p] * d[p] for p in idx)
            try:                        # a rational norm (3-4-5): exact
                norm, rnd = px.exact_sqrt(sq), (lambda q: q)
            except ValueError:          # else 60 digits
                norm, rnd = dsqrt(sq), r60
            coef = cmax / (norm + CLIP_EPS)
            assert abs(coef - 1) > Fraction(1, 10**6), coef  # no near tie
            if CLIP_LOG is not None:
                CLIP_LOG.append((norm, rnd is not r60, coef))
            if coef < 1:
                for p in idx:
                    d[p] = rnd(d[p] * coef)
    if seen is not None:
        seen[:] = d
    mu = Fraction(c["opt.momentum"])
    tau = Fraction(c["opt.dampening"])
    classical = c["opt.momentum_form"] == "classical"
    if "momentum-form-swap" in bugs:
        classical = not classical
    nesterov = c["opt.nesterov"] == "on" and "nesterov-ignored" not in bugs
    b1, b2 = Fraction(c["opt.beta1"]), Fraction(c["opt.beta2"])
    eps = Fraction(c["opt.eps"])
    for bi, name, idx in blks:
        t = st.t.get(bi, 0) + 1
        st.t[bi] = t
        lb = decay_of(name, idx)
        eta_b = eta
        if eta_v is not None and is_personal(idx):
            eta_b = eta_v                   # the personal group's step size
        for p in idx:
            dp = d[p]
            if lb and decoupled:
                theta[p] = theta[p] * (1 - eta_b * lb)
            elif lb and not lam_applied:
                dp = dp + lb * theta[p]
            if method == "sgd":
                if mu == 0 and "buffer-without-momentum" not in bugs:
                    theta[p] = theta[p] - eta_b * dp
                elif classical:
                    st.b[p] = mu * st.b[p] - eta_b * dp
                    theta[p] = theta[p] + st.b[p]
                else:
                    if t == 1:
                        st.b[p] = ((1 - tau) * dp if "dampening-first" in bugs
                                   else dp)
                    else:
                        st.b[p] = mu * st.b[p] + (1 - tau) * dp
                    dp = dp + mu * st.b[p] if nesterov else st.b[p]
                    theta[p] = theta[p] - eta_b * dp
            else:
                st.b[p] = b1 * st.b[p] + (1 - b1) * dp
                st.v[p] = b2 * st.v[p] + (1 - b2) * dp * dp
                bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
                if "adam-no-bias-correction" in bugs:
                    bc1, bc2 = Fraction(1), Fraction(1)
                if "adam-eps-inside" in bugs:
                    denom = dsqrt(st.v[p] / bc2 + eps)
                else:
                    denom = dsqrt(st.v[p]) / dsqrt(bc2) + eps
                theta[p] = r60(theta[p] - (eta_b / bc1) * st.b[p] / denom)
                st.b[p], st.v[p] = r60(st.b[p]), r60(st.v[p])
    return theta


class States:
    """The states of a run under opt.state (bugs may swap the lifetime)."""

    def __init__(self, c, P, bugs):
        life = c["opt.state"]
        for other in ("reset", "client", "server"):
            if "state-" + other in bugs:
                life = other
        self.life, self.P, self.per = life, P, {}
        self.shared = State(P)

    def begin(self, k):
        if self.life == "reset":
            self.shared = State(self.P)

    def get(self, k):
        if self.life == "client":
            return self.per.setdefault(k, State(self.P))
        return self.shared


class Optimizers:
    """The client optimizers of a run (ref/engine/sgd.c's pflref_optim_get
    and pflref_optim_begin, written again): `slots` optimizers per client
    (docs/optimizers.md: Ditto's global and personal solver, FedAlt's body
    and personal one, APFL's w and v, the training and the fine-tuning of
    finetune and interp), each with its own State.  opt.state = reset: one
    set of slots, new at every client update (begin); client: a set per
    client, kept across rounds; server: one set, carried from client to
    client in training order.  personal: the split's mask, for
    opt.decay_scope and FedSim's second group."""

    def __init__(self, c, pr, slots, personal=None, bugs=frozenset()):
        life = c["opt.state"]
        for other in ("reset", "client", "server"):
            if "state-" + other in bugs:
                life = other
        self.c, self.pr, self.slots, self.life = c, pr, slots, life
        self.personal, self.bugs = personal, bugs
        self.sets = {}

    def begin(self, i):
        """The start of client i's update: under reset, new optimizers."""
        if self.life == "reset":
            self.sets.pop(None, None)

    def state(self, i, k):
        """Client i's optimizer k (bug slots-shared: one for all k)."""
        key = i if self.life == "client" else None
        sets = self.sets.setdefault(
            key, [State(self.pr.P) for _ in range(self.slots)])
        return sets[0 if "slots-shared" in self.bugs else k]

    def step(self, i, k, d, theta, eta, mask=None, eta_v=None, seen=None):
        """One step of client i's optimizer k on the gradient d; mask (1 on
        the moving entries, None = all) selects the moving blocks; seen (a
        list, or None) receives p.grad after the step (step's seen)."""
        moving = None
        if mask is not None:
            moving = {bi for bi, (_, idx) in enumerate(blocks(self.pr))
                      if mask[idx[0]]}
        return step(self.c, self.state(i, k), self.pr, d, theta, eta,
                    self.bugs, moving, self.personal, eta_v, seen)

    def stepper(self, i, k):
        """The step of client i's optimizer k as pflref_exact.local_sgd
        takes it: f(d, theta, eta, mask) -> theta."""
        return lambda d, theta, eta, mask=None: self.step(i, k, d, theta,
                                                          eta, mask)


def for_spec(spec, pr, slots, personal=None, bugs=frozenset()):
    """The Optimizers of a spec that sets opt.* away from the defaults, else
    None (the replays then take their plain SGD path, unchanged)."""
    if not uses_optimizer(spec):
        return None
    return Optimizers(config(spec["algorithm"]), pr, slots, personal, bugs)


def local_opt(pr, k, theta, steps, eta, c, st, trace, rnd, name, bugs,
              personal=None):
    """The client's steps with optimizer state st (ref/engine/sgd.c with
    an optimizer): d = grad F_k(theta; D_s), then step.  personal: the
    split's mask that opt.decay_scope = shared / personal reads (None: no
    split)."""
    theta = list(theta)
    for s, batch in enumerate(steps, start=1):
        g = pr.grad(k, theta, batch, bugs)
        # the same training pass moves a batch norm's r_mu, r_v (bn.running
        # = update; docs/models.md), as pflref_exact.local_sgd does
        theta = pr.move_running(k, theta, batch, bugs)
        theta = step(c, st, pr, g, theta, eta, bugs, personal=personal)
        trace.emit("step", "train", rnd, k, s, name, theta)
    return theta


def fedavg_run(pr, w0, plan_rounds, eta_of, c, trace, bugs, personal=None):
    """FedAvg (McMahan et al. 2017, Alg. 1; pflref_exact.fedavg_round's
    frame) with the client optimizer; weights n_k / m_t.  eta_of(t, k):
    client k's step size in round t; personal: the split's mask, read by
    opt.decay_scope = shared / personal only (every block is averaged)."""
    states = States(c, pr.P, bugs)
    w = list(w0)
    for t, plan in enumerate(plan_rounds):
        trace.emit("round_begin", "train", t, None, None, "w", w)
        local = {}
        for k, steps in plan:
            trace.emit("client_begin", "train", t, k, 0, "w_local", w)
            states.begin(k)
            local[k] = local_opt(pr, k, w, steps, eta_of(t, k), c,
                                 states.get(k), trace, t, "w_local", bugs,
                                 personal)
            trace.emit("client_end", "train", t, k, None, "w_local", local[k])
        m_t = sum(pr.n(k) for k in local)
        w = [sum(Fraction(pr.n(k), m_t) * local[k][p] for k in sorted(local))
             for p in range(pr.P)]
        trace.emit("server", "train", t, None, None, "w", w)
    return w


def uses_optimizer(spec):
    """1 when a spec's algorithm sets any opt.* away from its default."""
    c = config(spec["algorithm"])
    return any(c[k] != DEFAULTS[k] for k in DEFAULTS)


def replay(spec, bugs=frozenset()):
    """A fedavg spec with a client optimizer, as written (given schedule):
    (trace, w)."""
    assert spec["algorithm"]["name"] == "fedavg", spec["algorithm"]["name"]
    assert spec["algorithm"].get("switches", {}).get(
        "fedavg.weights", "samples") == "samples"
    algorithm = spec["algorithm"]
    # bn.* (a layer list's batch norm: the running statistics' update)
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        algorithm.get("switches", {}))
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    # opt.decay_scope = shared | personal reads the spec's split
    # (docs/optimizers.md, lambda_B), as for every algorithm's optimizer
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    eta = Fraction(algorithm["hyperparameters"]["eta"])
    rounds = spec["schedule"]["rounds"]
    plans = [list(zip(r["clients"], r["batches"])) for r in rounds]
    trace = Trace()
    w = fedavg_run(pr, w0, plans,
                   lambda t, k: eta * px.round_factor(algorithm, t, bugs),
                   config(algorithm), trace, bugs, personal)
    return trace, w


__all__ = ["config", "fedavg_run", "for_spec", "step", "State", "States",
           "Optimizers", "px"]
