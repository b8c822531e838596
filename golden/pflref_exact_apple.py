# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_apple.py: APPLE (Luo, Wu, "Adapt to Adaptation:
Learning Personalization for Cross-Silo Federated Learning", IJCAI 2022,
arXiv 2110.08394v3, Algorithm 1), written from the paper's description,
independently of the C reference.

Arithmetic.  Every input is the exact value of the double the spec holds;
the loss scheduler is used only where it is rational, lambda(r) = (cos(r
pi/L) + 1)/2 with r/L in {0, 1/3, 1/2, 2/3} (cos = 1, 1/2, 0, -1/2) and
0.001^{r/L} with 3r/L an integer (= 10^{-3r/L}); any other cosine (r, L)
raises, and another exponential one (reached only by a bug's replay) is
taken at 60 digits.
Each step is computed in exact fractions; the new core and p_i are then
carried on rounded to 60 significant decimal digits (Python's decimal,
correctly rounded, kept as the exact fraction of that decimal), because
the exact values' denominators square with every step (the step is
bilinear in p_i and the cores: 95 s for one run of four rounds, and
growing doubly exponentially).  Each rounding is within 10^-59 relative;
the steps here are contractive or nearly so, so after at most 8 steps on
any chain of dependence the carried values are the exact ones to far below
10^-50, and the expected values are their correctly rounded doubles.

One round r (the schedule's round t), the participants i ascending, every
download from the snapshot W of the cores at the round's start:
  l. 1   p_0 = (n_j / sum_k n_k)_j; p_i = p_0 (apple.p_init = samples) or
         (1/N)_j (uniform); every core w_j = w0
  l. 4   c_j = W[j] for j != i; c_i = w_i (the client's own core)
  per scheduled batch b:
  l. 6     w_p = sum_j p_ij c_j
  l. 7-8   g = grad l_i(w_p; b)
           dp_j = <c_j, g> (apple.p_grad = inner) or the mean over the
                  model's blocks (w; then b when the model has a bias) of
                  each block's mean of c_j * g (block_mean)
                  + kappa lambda(r) mu (p_ij - p_0j), kappa = 1 (prox =
                  half) or 2 (full)
  l. 9     w_i <- w_i - eta_w p_ii g, eta_w = eta (core_lr = eta) or N eta
  l. 10    p_i <- p_i - eta_p dp; under apple.order = core_first dp is
           formed after l. 9, with c_i the new w_i
  l. 11  upload w_i; w_p^(i) = sum_j p_ij c_j with the final c_i and p_i
  lambda(r): apple.lambda_round = current: the scheduler at r; previous:
  at r - 1, and 1 in round 0.
  apple.upload = mixture: the core carried on (uploaded, and the client's
  own next round's start) is the w_p of the last step (formed before that
  step), and so is w_p^(i) (TsingZ0/PFLlib clientapple.py:77); a client
  without steps keeps its core.
  apple.peers = sequential: a participant downloads, for each client that
  trained before it in this round (ascending id), that client's core as
  its steps left it (not the uploaded mixture): PFLlib's server trains the
  clients in turn, sends a list of the cores' objects, and each steps its
  own in place (serverapple.py:46-47, :84; clientapple.py:55-56).

Records, in the reference's order: per participant note "lambda" (1
value), client_begin "w_i" (step 0), per step a step "w_i" and a step
"p_i" (N), client_end "w_i", note "p_i", note "w_p".  Final: v = every
core w_i.

Bugs (replay(spec, bugs); MUTANTS maps the vectors' flags to them):
  lambda-no-half      lambda(r) = cos(r pi/L) + 1
  lambda-rising       lambda(r) = (1 - cos(r pi/L))/2
  lambda-one-based    lambda(r + 1) in round r
  lambda-no-cutoff    the scheduler's formula also for r >= L (cosine:
                      (cos(r pi/L) + 1)/2, exponential: 0.001^{r/L})
  scheduler-flip      apple.scheduler read the other way
  lambda-round-flip   apple.lambda_round read the other way
  prox-flip           apple.prox read the other way
  prox-plus           the proximal gradient with the wrong sign
  prox-no-lambda      mu (p - p_0) without lambda(r)
  p0-uniform          p_0 = (1/N)_j in the proximal term
  p-init-flip         apple.p_init read the other way
  core-no-pii         w_i <- w_i - eta g (the factor p_ii dropped)
  core-lr-flip        apple.core_lr read the other way
  p-grad-flip         apple.p_grad read the other way
  order-flip          apple.order read the other way
  p-normalised        p_i divided by its sum after every step
  train-downloaded    the downloaded cores also step, w_j <- w_j - eta p_ij g
                      (kept for the client's later steps, then discarded)
  live-downloads      a later participant downloads the cores trained
                      earlier in the same round
  wp-start-p          w_p^(i) formed with the round's starting p_i
  upload-flip         apple.upload read the other way
  peers-flip          apple.peers read the other way
  step-extra, step-fewer   one local step more (the first batch again) /
                      fewer (the last dropped, never below one)
  batch-sum           passes through to pflref_exact's gradient
  opt-p-plain         with a client optimizer: it steps w_i only, and p_i
                      takes the plain step p_i <- p_i - eta_p dp
  opt-one-lr          with a client optimizer: one step size (the core's)
                      for both parameter groups
  downloads-ignored   limited downloads (apple.M): every core downloaded
                      all the same (the round's lists ignored)
  stale-flip          apple.stale read the other way
  stale-dropped       a core not downloaded this round left out of the
                      mixture (taken as 0)
  lr-ignored, lr-shifted   pflref_exact.round_factor's (the decay left out
                      / one scheduler step early)
  lr-p-const          under lr.*, η_p left undecayed (only η decays)
  lr-scope-flip       lr.scope read the other way (all <-> eta_p: η
                      decayed with η_p, or left constant)

Learning-rate decay (lr.*): the authors' code builds each client update's
SGD with lr = lr_net · decay^r for the core's groups and lr_coef · decay^r
for ps (ljaiverson/pFL-APPLE train_APPLE.py:46-52), r the round: in round
t both η (and so N η under apple.core_lr = n_eta) and η_p are multiplied
by c_t = pflref_exact.round_factor (γ^t; lr.count is not an APPLE switch:
every client of the authors' code trains every round).  PFLlib's -ld
decays nothing of APPLE (clientapple.py steps with self.learning_rate and
self.drlr, floats no scheduler touches): such a run is lr.schedule =
constant.  Under lr.scope = eta_p (ref/engine/lr.c scale_steps) η_p alone
is multiplied by c_t and η stays.

Limited downloads (apple.M set; the paper's M < N - 1 cores per round, the
authors' get_download_which, ljaiverson/pFL-APPLE utils/apple.py:18-76):
a round's "peers" lists for each participant the M other cores it
downloads (a round without the list downloads every core).  Each client
keeps a copy of every core (the authors' ClientNet, persistent per
client): l. 4 replaces the listed ones by the snapshot's (or, under
apple.peers = sequential, the current) cores; the others stay as the
client's last download left them (apple.stale = last_download: the
authors' prepare_client_model skips them, :34-37) or are w0 (initial).
The steps, the gradient of p_i and w_p^(i) use the client's copies.

The client optimizer (opt.*, golden/pflref_exact_optim.py), when the spec
sets one: the authors' one torch.optim.SGD per client update over two
parameter groups, the client's core (lr eta, or N eta) and p_i (`ps`, lr
eta_p) (ljaiverson/pFL-APPLE train_APPLE.py:46-52, :62).  Each step hands
it d = (p_ii g, dp), both at the step's start point (apple.order = joint
only), over the blocks of the core and one block `ps` of N entries; the
state lives as opt.state says (Optimizers: reset, client, server).
"""
from decimal import Decimal, localcontext
from fractions import Fraction

import pflref_exact as px
import pflref_exact_optim as po
from pflref_golden import Trace, exact

ALGORITHM = "apple"
DIGITS = 60
SWITCHES = {"apple.scheduler": ["cosine", "exponential"],
            "apple.prox": ["half", "full"],
            "apple.p_init": ["samples", "uniform"],
            "apple.order": ["joint", "core_first"],
            "apple.p_grad": ["inner", "block_mean"],
            "apple.core_lr": ["eta", "n_eta"],
            "apple.lambda_round": ["current", "previous"],
            "apple.upload": ["core", "mixture"],
            "apple.peers": ["snapshot", "sequential"]}
PRESETS = {
    # ljaiverson/pFL-APPLE 8078196731b5 utils/losses.py:4-21
    "official": {"apple.scheduler": "exponential", "apple.prox": "full"},
    # TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientapple.py
    "pfllib": {"apple.p_init": "uniform", "apple.order": "core_first",
               "apple.p_grad": "block_mean", "apple.core_lr": "n_eta",
               "apple.lambda_round": "previous",
               # clientapple.py:93-100: parameters() mixed only
               "bn.aggregate": "parameters_only"},
    # req: apple.preset.pfllib_run
    # the same, plus clientapple.py:77 and serverapple.py:46-47, :84
    "pfllib_run": {"apple.p_init": "uniform", "apple.order": "core_first",
                   "apple.p_grad": "block_mean", "apple.core_lr": "n_eta",
                   "apple.lambda_round": "previous",
                   "apple.upload": "mixture", "apple.peers": "sequential",
                   "bn.aggregate": "parameters_only"},
}

MUTANTS = {
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "apple-scheduler": ["lambda-no-half", "lambda-rising", "lambda-one-based",
                        "lambda-no-cutoff", "scheduler-flip"],
    "apple-lambda-round": ["lambda-round-flip"],
    "apple-prox": ["prox-flip", "prox-no-lambda", "p0-uniform"],
    "prox-sign": ["prox-plus"],
    "apple-p-init": ["p-init-flip"],
    "apple-core-step": ["core-no-pii", "core-lr-flip"],
    "apple-p-grad": ["p-grad-flip", "p-normalised"],
    "apple-order": ["order-flip"],
    "apple-downloads": ["train-downloaded", "live-downloads"],
    "apple-personalized": ["wp-start-p"],
    "apple-upload": ["upload-flip"],
    "apple-peers": ["peers-flip"],
    "local-step-count": ["step-extra", "step-fewer"],
    "batch-mean": ["batch-sum"],
    "apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"],
    "apple-limited-downloads": ["downloads-ignored", "stale-flip",
                                "stale-dropped"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "lr-p-const",
                    "lr-scope-flip"],
}
# apple.stale (a core not downloaded this round): kept apart from SWITCHES,
# whose second values every change a run without limited downloads
STALE = ["last_download", "initial"]

# cos(pi q) for the rational q where it is rational (q in [0, 1])
COS_PI = {Fraction(0): Fraction(1), Fraction(1, 3): Fraction(1, 2),
          Fraction(1, 2): Fraction(0), Fraction(2, 3): Fraction(-1, 2),
          Fraction(1): Fraction(-1)}


def carried(xs):
    """The fractions xs rounded to DIGITS significant decimal digits, as
    the exact fractions of those decimals."""
    out = []
    with localcontext() as ctx:
        ctx.prec = DIGITS
        for q in xs:
            d = Decimal(q.numerator) / Decimal(q.denominator)
            out.append(Fraction(d))
    return out


def supported(spec):
    """The specs replay() runs: a linear or quadratic model on inline
    clients, a given schedule."""
    return (spec["algorithm"]["name"] == ALGORITHM
            and spec["model"]["kind"] in ("quadratic", "linear", "layers")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def settings(algorithm):
    """(hyperparameters as exact values, switches) of an apple spec's
    algorithm object: the defaults, the preset, then the explicit ones."""
    sw = {k: v[0] for k, v in SWITCHES.items()}
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    sw.setdefault("apple.stale", STALE[0])
    sw.setdefault("bn.aggregate", "average")
    hp = {}
    for k, v in algorithm["hyperparameters"].items():
        hp[k] = int(v) if k in ("apple.L", "apple.M") else exact(v)
    return hp, sw


def flipped(value, values):
    """The other value of a two-valued switch."""
    return values[1] if value == values[0] else values[0]


def scheduler(r, L, shape, bugs):
    """lambda(r) of eq. (4) (cosine) or the exponential shape, exact."""
    # req: apple.eq4
    if r >= L and "lambda-no-cutoff" not in bugs:
        return Fraction(0)
    q = Fraction(r, L)
    if shape == "exponential":
        e = 3 * q            # 0.001^q = 10^{-3q}
        if e.denominator == 1:
            return Fraction(1, 10 ** int(e))
        # irrational (only a bug's replay reaches it): 60 digits
        with localcontext() as ctx:
            ctx.prec = DIGITS
            x = Decimal(10) ** (-Decimal(e.numerator) / Decimal(e.denominator))
        return Fraction(x)
    if q > 1:                # cos(pi q) = cos(pi (2 - q)) for q in (1, 2]
        q = 2 - q
    assert q in COS_PI, (r, L)
    c = COS_PI[q]
    if "lambda-no-half" in bugs:
        return c + 1
    if "lambda-rising" in bugs:
        return (1 - c) / 2
    return (c + 1) / 2


def lambda_of(t, hp, sw, bugs):
    """Round t's lambda under apple.lambda_round."""
    r = t + 1 if "lambda-one-based" in bugs else t
    if sw["apple.lambda_round"] == "previous":
        if t == 0:
            return Fraction(1)
        r -= 1
    return scheduler(r, hp["apple.L"], sw["apple.scheduler"], bugs)


def blocks(pr):
    """The parameter blocks (offset, size): w (d entries), then b; a layer
    list's blocks of parameters() in state_dict order (its running
    statistics, buffers, are none: clientapple.py:61-64 zips
    parameters())."""
    if pr.kind == "layers":
        return [(o, b["size"]) for b, o in pr.layers.block_offsets()
                if not b["is_buffer"]]
    if pr.kind == "quadratic":
        return [(0, pr.P)]
    out = [(0, pr.d)]
    if pr.bias:
        out.append((pr.d, 1))
    return out


def p_grad(pr, cores, g, p_i, p0, lam_mu, sw, bugs):
    """dL/dp_i at the cores c_j, the gradient g and p_i."""
    kappa = 2 if sw["apple.prox"] == "full" else 1
    if "prox-no-lambda" in bugs:
        lam_mu = lam_mu[1]
    else:
        lam_mu = lam_mu[0]
    out = []
    for j, c in enumerate(cores):
        if sw["apple.p_grad"] == "block_mean":
            parts = [sum(c[q] * g[q] for q in range(o, o + n)) / n
                     for o, n in blocks(pr)]
            data = sum(parts) / len(parts)
        else:
            data = sum(c[q] * g[q] for q in range(pr.P))
        prox = kappa * lam_mu * (p_i[j] - p0[j])
        # req: apple.alg1.l10
        out.append(data - prox if "prox-plus" in bugs else data + prox)
    return out


def mix(p_i, cores, P):
    """sum_j p_ij c_j (eq. (1))."""
    # req: apple.eq1, apple.alg1.l6
    return [sum(p_i[j] * cores[j][q] for j in range(len(cores)))
            for q in range(P)]


class OptView:
    """The client optimizer's vector (w_i, p_i): the model's blocks, then
    p_i as the block `ps` (pflref_exact_optim.blocks reads opt_blocks)."""

    def __init__(self, pr, N):
        names = ["w"] if pr.kind == "quadratic" else ["w", "b"]
        self.opt_blocks = [(name, list(range(o, o + n)))
                           for name, (o, n) in zip(names, blocks(pr))]
        self.opt_blocks.append(("ps", list(range(pr.P, pr.P + N))))
        self.P = pr.P + N
        self.group = [0] * pr.P + [1] * N      # 1: the eta_p group


def client_update(pr, i, cores, p_i, p0, steps, lam, hp, sw, t, trace,
                  bugs, opt=None, own=None):
    """Client i's local steps (l. 5-10): (new core, new p_i, cores as held
    at the end, the last step's w_p or None without steps).  own: under
    bn.aggregate = parameters_only, client i's running statistics r_i (a
    list of P, read on the buffers, updated in place by each step's
    training pass: w_p's buffers are r_i, clientapple.py:93-100)."""
    N, P = len(cores), pr.P
    cores = [list(c) for c in cores]
    p_i = list(p_i)
    eta, eta_p, mu = hp["eta"], hp["eta_p"], hp["apple.mu"]
    eta_w = N * eta if sw["apple.core_lr"] == "n_eta" else eta
    lam_mu = (lam * mu, mu)
    w_p = None
    # req: apple.alg1.l5
    for s, batch in enumerate(steps, start=1):
        w_p = mix(p_i, cores, P)
        if own is not None:
            w_p = [own[q] if q in pr.buffers else x for q, x in enumerate(w_p)]
        # req: apple.alg1.l7, apple.alg1.l8
        g = pr.grad(i, w_p, batch, bugs)
        if own is not None:     # the training pass moves r_i
            w_p = pr.move_running(i, w_p, batch, bugs)
            for q in pr.buffers:
                own[q] = w_p[q]
        if sw["apple.order"] == "joint":
            dp = p_grad(pr, cores, g, p_i, p0, lam_mu, sw, bugs)
        # req: apple.alg1.l9
        f = 1 if "core-no-pii" in bugs else p_i[i]
        old = [list(c) for c in cores]
        if opt is not None:
            assert sw["apple.order"] == "joint"
            d = [f * g[q] for q in range(P)] + list(dp)
            theta = list(cores[i]) + list(p_i)
            eta_v = eta_w if "opt-one-lr" in bugs else eta_p
            theta = opt.step(i, 0, d, theta, eta_w, eta_v=eta_v)
            cores[i] = theta[:P]
            if "opt-p-plain" in bugs:
                p_i = [p_i[j] - eta_p * dp[j] for j in range(N)]
            else:
                p_i = theta[P:]
            p_i = carried(p_i)
            cores = [carried(c) for c in cores]
            trace.emit("step", "train", t, i, s, "w_i", cores[i])
            trace.emit("step", "train", t, i, s, "p_i", p_i)
            continue
        cores[i] = [cores[i][q] - eta_w * (f * g[q]) for q in range(P)]
        if "train-downloaded" in bugs:
            for j in range(N):
                if j != i:
                    cores[j] = [old[j][q] - eta * (p_i[j] * g[q])
                                for q in range(P)]
        if sw["apple.order"] == "core_first":
            dp = p_grad(pr, cores, g, p_i, p0, lam_mu, sw, bugs)
        # req: apple.alg1.l10
        p_i = [p_i[j] - eta_p * dp[j] for j in range(N)]
        if "p-normalised" in bugs:
            total = sum(p_i)
            p_i = [x / total for x in p_i]
        p_i = carried(p_i)
        cores = [carried(c) for c in cores]
        trace.emit("step", "train", t, i, s, "w_i", cores[i])
        trace.emit("step", "train", t, i, s, "p_i", p_i)
    return cores[i], p_i, cores, None if w_p is None else carried(w_p)


def steps_of(steps, bugs):
    steps = [list(b) for b in steps]
    if "step-extra" in bugs:
        steps = steps + steps[:1]
    if "step-fewer" in bugs and len(steps) > 1:
        steps = steps[:-1]
    return steps


def replay(spec, bugs=frozenset()):
    """The spec (given schedule) run: (trace, None, cores, None); p_i and
    w_p^(i) are in the trace's notes."""
    bugs = frozenset(bugs)
    hp, sw = settings(spec["algorithm"])
    for bug, name in (("scheduler-flip", "apple.scheduler"),
                      ("lambda-round-flip", "apple.lambda_round"),
                      ("prox-flip", "apple.prox"),
                      ("p-init-flip", "apple.p_init"),
                      ("core-lr-flip", "apple.core_lr"),
                      ("p-grad-flip", "apple.p_grad"),
                      ("order-flip", "apple.order"),
                      ("upload-flip", "apple.upload"),
                      ("peers-flip", "apple.peers")):
        if bug in bugs:
            sw[name] = flipped(sw[name], SWITCHES[name])
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    N = len(pr.clients)
    n = sum(pr.n(j) for j in range(N))
    # bn.aggregate = parameters_only: r_i, each client's own running
    # statistics (w0's at the start); start-global-buffers: w_p's mixed ones
    keep = (sw["bn.aggregate"] == "parameters_only" and pr.buffers
            and "start-global-buffers" not in bugs)
    own = [list(w0) for _ in range(N)] if keep else None
    # req: apple.alg1.l1
    p0 = [Fraction(pr.n(j), n) for j in range(N)]
    start = ([Fraction(1, N)] * N if sw["apple.p_init"] == "uniform"
             else list(p0))
    if "p0-uniform" in bugs:
        p0 = [Fraction(1, N)] * N
    opt = None
    if po.uses_optimizer(spec):
        view = OptView(pr, N)
        opt = po.Optimizers(po.config(spec["algorithm"]), view, 1, view.group,
                            bugs)
    if "stale-flip" in bugs:
        sw["apple.stale"] = flipped(sw["apple.stale"], STALE)
    W = [list(w0) for _ in range(N)]
    # limited downloads (apple.M): client i's copy of every core, w0 at
    # first (the authors' round 0 downloads every core, all w0 then)
    limited = "apple.M" in hp
    copies = [[list(w0) for _ in range(N)] for _ in range(N)]
    p = [list(start) for _ in range(N)]
    w_p = [mix(p[i], W, pr.P) for i in range(N)]
    if keep:
        w_p = [[w0[q] if q in pr.buffers else x for q, x in enumerate(wp)]
               for wp in w_p]
    trace = Trace()
    # req: apple.alg1.l2
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        snapshot = [list(w) for w in W]   # apple.peers = sequential: updated
        lam = lambda_of(t, hp, sw, bugs)
        # lr.*: round t's step sizes (train_APPLE.py:51-52, decay ** r)
        c = px.round_factor(spec["algorithm"], t, bugs)
        # lr.scope = eta_p: η_p alone decays, the core's η stays
        # (ref/engine/lr.c scale_steps)
        scope = sw.get("lr.scope", "all")
        if "lr-scope-flip" in bugs:
            scope = "all" if scope == "eta_p" else "eta_p"
        hp_t = dict(hp, eta=hp["eta"] * (1 if scope == "eta_p" else c),
                    eta_p=hp["eta_p"] * (1 if "lr-p-const" in bugs else c))
        # req: apple.alg1.l3
        lists = dict(zip(rnd["clients"], rnd["peers"])) if "peers" in rnd \
            else None
        for i, steps in sorted(zip(rnd["clients"], rnd["batches"])):
            # req: apple.alg1.l4
            seen = W if "live-downloads" in bugs else snapshot
            cores = [list(seen[j]) if j != i else list(W[i])
                     for j in range(N)]
            if limited:
                # req: apple.downloads
                for j in range(N):
                    listed = (lists is None or j in lists[i]
                              or "downloads-ignored" in bugs)
                    if j == i:
                        continue
                    if listed:
                        copies[i][j] = list(seen[j])
                    elif sw["apple.stale"] == "initial":
                        copies[i][j] = list(w0)
                    if "stale-dropped" in bugs and not listed:
                        copies[i][j] = [Fraction(0)] * pr.P
                cores = [list(copies[i][j]) if j != i else list(W[i])
                         for j in range(N)]
            trace.emit("note", "train", t, i, None, "lambda", [lam])
            trace.emit("client_begin", "train", t, i, 0, "w_i", W[i])
            if opt is not None:
                opt.begin(i)          # the client update's torch.optim.SGD
            p_start = p[i]
            if keep and "start-w0-buffers" in bugs:
                own[i] = list(w0)
            wi, pi, held, last = client_update(pr, i, cores, p[i], p0,
                                               steps_of(steps, bugs), lam,
                                               hp_t, sw, t, trace, bugs, opt,
                                               own[i] if keep else None)
            if sw["apple.peers"] == "sequential":
                snapshot[i] = list(wi)
            mixture = sw["apple.upload"] == "mixture" and last is not None
            if mixture:
                wi = last
            # req: apple.alg1.l11
            trace.emit("client_end", "train", t, i, None, "w_i", wi)
            trace.emit("note", "train", t, i, None, "p_i", pi)
            W[i], p[i] = wi, pi
            held[i] = wi
            # req: apple.eval
            w_p[i] = list(last) if mixture else carried(
                mix(p_start if "wp-start-p" in bugs else pi, held, pr.P))
            if keep:
                w_p[i] = [own[i][q] if q in pr.buffers else x
                          for q, x in enumerate(w_p[i])]
            trace.emit("note", "train", t, i, None, "w_p", w_p[i])
    return trace, None, W, None
