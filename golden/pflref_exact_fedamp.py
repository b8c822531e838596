# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedamp.py: FedAMP (Huang, Chu, Zhou, Wang, Liu, Pei,
Zhang, "Personalized Cross-Silo Federated Learning on Non-IID Data", AAAI
2021, arXiv 2007.03797v5, Algorithm 1) with A(x) = 1 - e^{-x/sigma},
written from the paper, independently of the C reference.

Arithmetic.  Every input is the exact value of the double the spec holds;
everything is an exact fraction except e^{-x/sigma} (and the square root
of one bug), which Python's decimal module computes at 60 significant
digits (correctly rounded) and which is then carried on as the exact
fraction of that decimal.  Each such value is within 10^-59 relative of
the true one; the errors pass through at most a few rounds of contractive
steps, so the expected values (correctly rounded doubles) are the exact
ones to far below 10^-40.  The tolerance of the vectors (make_fedamp.py's
TOL) is the double arithmetic's: the reference's exp is within a few ulps,
its ||.||^2 and sums have relative errors below 10^-15 for these sizes,
and d/sigma <= 4 here, so each xi carries a relative error below 10^-14.

One round k (the schedule's round t = k - 1), the participants i
ascending, everything read from the snapshot W^{k-1} of the round start:
  l. 3  xi_{i,j} = alpha_k A'(||w_i - w_j||^2), A'(x) = e^{-x/sigma}/sigma,
        for j != i among the peers: every client (fedamp.peers = all) or
        the previous round's participants (previous; none in round 0);
        xi_{i,i} = 1 - sum_{j != i} xi_{i,j};
        u_i = sum_j xi_{i,j} w_j
  l. 5  from u_i (fedamp.start = message) or w_i^{k-1} (own), the
        scheduled steps w <- w - eta (grad F_i(w; b) + mu (w - u_i)),
        mu = lambda/alpha_k (fedamp.prox = squared) or 0 (detached)
  a client outside the round keeps w_i.
  lr.*: eta of client i in round t is eta c, c = pflref_exact.round_factor
        (gamma^t, or gamma^(i's trainings before) under lr.count =
        trainings: PFLlib's clientamp.py:50-51 steps the client's
        ExponentialLR after its own train()); alpha_k, lambda and sigma
        never decay.

Records, in the reference's order: per participant note "xi" (N values,
0 off the peers), note "u" (P), client_begin "w_i" (the start), a step
"w_i" per batch, client_end "w_i".  Final: v = every w_i.

Bugs (replay(spec, bugs); MUTANTS maps the vectors' flags to them):
  attn-no-sigma    A'(x) = e^{-x/sigma}: the 1/sigma dropped
  attn-exp-sign    A'(x) = e^{+x/sigma}/sigma
  attn-norm        A' of ||w_i - w_j|| instead of its square
  attn-sigma-mul   A'(x) = e^{-x sigma}/sigma
  self-one         xi_{i,i} = 1 (u_i = w_i + sum_{j != i} xi_{i,j} w_j)
  self-normalised  xi_{i,i} = alpha_k A'(0), then every xi divided by
                   their sum (a softmax-like normalisation)
  prox-half        mu = lambda/(2 alpha_k)
  prox-no-alpha    mu = lambda
  prox-alpha-mul   mu = lambda alpha_k
  prox-ref-prev    the proximal term pulls toward w_i^{k-1}, not u_i
  prox-plus        the proximal term with the wrong sign (pflref_exact)
  start-flip       fedamp.start read the other way
  peers-flip       fedamp.peers read the other way
  peers-current    the peers are the current round's participants
  live-uploads     a later participant's message sees the models trained
                   earlier in the same round
  detach-flip      fedamp.prox read the other way
  step-extra, step-fewer   one local step more (the first batch again) /
                   fewer (the last dropped, never below one)
  batch-sum        passes through to pflref_exact's gradient
  lr-ignored, lr-shifted, lr-per-round   pflref_exact.round_factor's
                   (c = 1; the scheduler stepped before the round;
                   lr.count = trainings read as rounds)
  start-global-buffers  (parameters_only) u_i's running statistics the
                   xi-mixture of the models', not client i's own
  start-w0-buffers (parameters_only) ... w0's
  distance-with-buffers (parameters_only) |w_i - w_j|^2 over every entry,
                   running statistics included

A layer list with batch normalisation runs under bn.aggregate =
parameters_only only (the C refuses it under average): PFLlib moves
parameters() only (serveramp.py:84-85 measures |w_i - w_j|^2 over
parameters(), :94-96 mixes parameters() into u_i, clientamp.py:57-59
writes them into client_u), so |w_i - w_j|^2 ranges over the parameters,
u_i's running statistics are client i's own (the statistics its model
holds) and the proximal term never pulls them (pflref_exact.local_sgd);
every step's training pass moves them (Problem.move_running).
"""
from decimal import Decimal, localcontext
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

ALGORITHM = "fedamp"
DIGITS = 60
SWITCHES = {"fedamp.peers": ["all", "previous"],
            "fedamp.start": ["message", "own"],
            "fedamp.prox": ["squared", "detached"]}
PRESETS = {
    # TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/serveramp.py:72-103,
    # clients/clientamp.py:22, :40-42, :57-59
    "pfllib": {"fedamp.peers": "previous", "fedamp.start": "own",
               "fedamp.prox": "detached", "lr.count": "trainings",
               # serveramp.py:84-85, :94-96, clientamp.py:57-59
               "bn.aggregate": "parameters_only"},
}

MUTANTS = {
    "fedamp-attention": ["attn-no-sigma", "attn-exp-sign", "attn-norm",
                         "attn-sigma-mul"],
    "fedamp-self-weight": ["self-one", "self-normalised"],
    "fedamp-prox-weight": ["prox-half", "prox-no-alpha", "prox-alpha-mul"],
    "fedamp-prox-reference": ["prox-ref-prev"],
    "prox-sign": ["prox-plus"],
    "fedamp-start": ["start-flip"],
    "fedamp-peers": ["peers-flip", "peers-current"],
    "fedamp-snapshot": ["live-uploads"],
    "fedamp-detached": ["detach-flip"],
    "local-step-count": ["step-extra", "step-fewer"],
    "batch-mean": ["batch-sum"],
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-parameters-distance": ["distance-with-buffers"],
}


def supported(spec):
    """The specs replay() runs: a linear or quadratic model on inline
    clients, a given schedule."""
    return (spec["algorithm"]["name"] == ALGORITHM
            and spec["model"]["kind"] in ("quadratic", "linear", "layers")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def settings(algorithm):
    """(hyperparameters as exact values, switches) of a fedamp spec's
    algorithm object: the defaults, the preset, then the explicit ones."""
    sw = {"fedamp.peers": "all", "fedamp.start": "message",
          "fedamp.prox": "squared", "bn.aggregate": "average"}
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    hp = {k: exact(v) for k, v in algorithm["hyperparameters"].items()}
    return hp, sw


def to_decimal(q):
    """The fraction q as a 60-digit decimal (correctly rounded)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Decimal(q.numerator) / Decimal(q.denominator)


def exp_neg(q):
    """e^{-q} for the fraction q, at 60 digits, as an exact fraction of
    that decimal.  req: fedamp.eq_a"""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Fraction((-to_decimal(q)).exp())


def sqrt_of(q):
    """sqrt(q) at 60 digits, as a fraction (the attn-norm bug only)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Fraction(to_decimal(q).sqrt())


def a_prime(x, sigma, bugs):
    """A'(x) = e^{-x/sigma}/sigma for A(x) = 1 - e^{-x/sigma}."""
    # req: fedamp.eq_a
    if "attn-sigma-mul" in bugs:
        return exp_neg(x * sigma) / sigma
    if "attn-exp-sign" in bugs:
        return exp_neg(-x / sigma) / sigma
    e = exp_neg(x / sigma)
    return e if "attn-no-sigma" in bugs else e / sigma


def flipped(value, values):
    """The other value of a two-valued switch."""
    return values[1] if value == values[0] else values[0]


def message(i, W, peers, hp, bugs, buffers=frozenset(), w0=None):
    """l. 3: (xi_{i,.} as a list of N, u_i) from the models W; buffers:
    the running statistics' entries under bn.aggregate = parameters_only
    (left out of the distances, u_i's are client i's own)."""
    N, P = len(W), len(W[0])
    skip = frozenset() if "distance-with-buffers" in bugs else buffers
    alpha, sigma = hp["fedamp.alpha_k"], hp["fedamp.sigma"]
    xi = [Fraction(0)] * N
    for j in sorted(peers):
        if j == i:
            continue
        d = sum((W[i][p] - W[j][p]) ** 2 for p in range(P) if p not in skip)
        if "attn-norm" in bugs:
            d = sqrt_of(d)
        # req: fedamp.alg1.l3
        xi[j] = alpha * a_prime(d, sigma, bugs)
    if "self-one" in bugs:
        xi[i] = Fraction(1)
    elif "self-normalised" in bugs:
        xi[i] = alpha * a_prime(Fraction(0), sigma, bugs)
        total = sum(xi)
        xi = [x / total for x in xi]
    else:
        xi[i] = 1 - sum(xi[j] for j in range(N) if j != i)
    # req: fedamp.alg1.l3
    u = [sum(xi[j] * W[j][p] for j in range(N)) for p in range(P)]
    if buffers and "start-global-buffers" not in bugs:
        own = w0 if "start-w0-buffers" in bugs else W[i]
        u = [own[p] if p in buffers else x for p, x in enumerate(u)]
    return xi, u


def steps_of(steps, bugs):
    steps = [list(b) for b in steps]
    if "step-extra" in bugs:
        steps = steps + steps[:1]
    if "step-fewer" in bugs and len(steps) > 1:
        steps = steps[:-1]
    return steps


def replay(spec, bugs=frozenset()):
    """The spec (given schedule) run: (trace, None, v, None)."""
    bugs = frozenset(bugs)
    hp, sw = settings(spec["algorithm"])
    if "start-flip" in bugs:
        sw["fedamp.start"] = flipped(sw["fedamp.start"], ["message", "own"])
    if "peers-flip" in bugs:
        sw["fedamp.peers"] = flipped(sw["fedamp.peers"], ["all", "previous"])
    if "detach-flip" in bugs:
        sw["fedamp.prox"] = flipped(sw["fedamp.prox"],
                                    ["squared", "detached"])
    eta, lam, alpha = hp["eta"], hp["fedamp.lambda"], hp["fedamp.alpha_k"]
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    N = len(pr.clients)
    keep = (frozenset(pr.buffers) if sw["bn.aggregate"] == "parameters_only"
            else frozenset())
    W = [list(w0) for _ in range(N)]
    trace = Trace()
    # req: fedamp.alg1.l5
    mu = lam / alpha
    if "prox-half" in bugs:
        mu = lam / (2 * alpha)
    elif "prox-no-alpha" in bugs:
        mu = lam
    elif "prox-alpha-mul" in bugs:
        mu = lam * alpha
    if sw["fedamp.prox"] == "detached":
        mu = Fraction(0)
    previous = []
    trained = [0] * N              # each client's train() calls so far
    decay = {"switches": sw,
             "hyperparameters": spec["algorithm"]["hyperparameters"]}
    # req: fedamp.alg1.l1, fedamp.alg1.l2
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        snapshot = [list(w) for w in W]
        clients = rnd["clients"]
        if "peers-current" in bugs:
            peers = list(clients)
        elif sw["fedamp.peers"] == "previous":
            peers = list(previous)
        else:
            peers = list(range(N))
        for i, steps in sorted(zip(clients, rnd["batches"])):
            seen = W if "live-uploads" in bugs else snapshot
            xi, u = message(i, seen, peers, hp, bugs, keep, w0)
            # req: fedamp.alg1.l4
            trace.emit("note", "train", t, i, None, "xi", xi)
            trace.emit("note", "train", t, i, None, "u", u)
            start = u if sw["fedamp.start"] == "message" else snapshot[i]
            ref = snapshot[i] if "prox-ref-prev" in bugs else u
            trace.emit("client_begin", "train", t, i, 0, "w_i", start)
            # req: fedamp.alg1.l5
            eta_i = eta * px.round_factor(decay, t, bugs, trained=trained[i])
            trained[i] += 1
            wi = px.local_sgd(pr, i, start, steps_of(steps, bugs), eta_i,
                              trace, "train", t, "w_i", mu=mu, ref=ref,
                              bugs=bugs)
            # req: fedamp.alg1.l6
            trace.emit("client_end", "train", t, i, None, "w_i", wi)
            W[i] = wi
        previous = list(clients)
    return trace, None, W, None
