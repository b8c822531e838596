# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedprox.py: FedProx in exact rational arithmetic,
written from the paper, independently of the C reference.

Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated Optimization in
Heterogeneous Networks", MLSys 2020, arXiv 1812.06127v5, Algorithm 2.  One
round t:

  S_t: K devices drawn at random, device k with probability p_k = n_k/n
       (eq. (1)); the spec's round gives the draws (repetitions allowed)
  each device of S_t, from w^t, takes its scheduled steps on
       h_k(w; w^t) = F_k(w) + (mu/2) ||w - w^t||^2:
       w <- w - eta (grad F_k(w; b) + mu (w - w^t))
       (a gamma-inexact minimiser; a straggler's shorter batch list is its
       partial work)
  w^{t+1} = (1/K) sum over the K draws of w_k^{t+1}: a device drawn c_k
       times trains once and weighs c_k/K

fedprox.sampling = uniform_weighted (the authors' code: fedbase.py
select_clients draws uniformly without replacement and aggregate weighs by
n_k; PFLlib serverbase.py likewise; presets official and pfllib): S_t the
round's clients, weights n_k / sum_{S_t} n_j, the draws unread.

The client optimizer (opt.*) takes d = grad F_k + mu (w - w^t)
(pflref_exact_optim); lr.* through pflref_exact.round_factor, counted per
client under lr.count = trainings (PFLlib's per-client ExponentialLR).

Records, in the reference's order: round_begin w; per participant
(ascending) client_begin w_local (step 0), a step w_local per batch,
client_end w_local, note c (its weight); server w.

Bugs (replay(spec, bugs); MUTANTS maps the vectors' flags to them):
  draws-distinct   a device drawn twice counted once: weights 1/|distinct|
  draws-samples    under paper, n_k / sum n_j over the distinct draws
  draws-chain      a device drawn c_k times trains c_k times in a row, each
                   pass from the previous one's end (w_k not reset to w^t)
  uniform-weights  1/|S_t| where n_k-weights are configured
  prox-plus        the proximal term with the wrong sign
  prox-half        (mu/2)(w - w^t): the factor 2 of (mu/2)||.||^2 dropped
  prox-ref-w0      the proximal reference w^0 instead of w^t
  prox-ref-moving  the reference is the iterate itself (the term vanishes)
  restart-w0       every device starts from w^0 instead of w^t
  straggler-dropped  a participant with fewer steps than the round's most
                   left out of the average (the rest renormalised)
  straggler-padded a participant with fewer steps than the round's most
                   runs as many, its list repeated cyclically
  step-extra, step-fewer   one local step more (the first batch again) /
                   fewer (the last dropped, never below one)
  misread-drawn    batches[j] paired with drawn[j] instead of clients[j]
                   (indices wrapped into the device's range, as a loader
                   indexing its own data modulo its size would)
  batch-sum, lr-*, and the optimizer's bugs pass through to pflref_exact
  and pflref_exact_optim.
"""
from fractions import Fraction

import pflref_exact as px
import pflref_exact_optim as po
from pflref_golden import Trace, exact

ALGORITHM = "fedprox"
SWITCHES = {"fedprox.sampling": ["paper", "uniform_weighted"]}
PRESETS = {
    # litian96/FedProx d2a4501f319f flearn/trainers/fedbase.py:112, :121-123
    "official": {"fedprox.sampling": "uniform_weighted"},
    # TsingZ0/PFLlib d832e76f6a23 serverbase.py:99, :136; clientprox.py:55
    "pfllib": {"fedprox.sampling": "uniform_weighted",
               "lr.count": "trainings",
               # clientprox.py:61-64 set_parameters, serverbase.py:138-150
               # aggregate_parameters: parameters() only
               "bn.aggregate": "parameters_only"},
}

MUTANTS = {
    "fedprox-draws": ["draws-distinct", "draws-samples", "draws-chain"],
    "aggregation-weights": ["uniform-weights", "draws-samples"],
    "prox-sign": ["prox-plus"],
    "fedprox-prox-factor": ["prox-half"],
    "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
    "stale-global": ["restart-w0"],
    "fedprox-straggler": ["straggler-dropped", "straggler-padded"],
    "local-step-count": ["step-extra", "step-fewer"],
    "schedule-drawn-order": ["misread-drawn"],
    "batch-mean": ["batch-sum"],
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
    "momentum-form": ["momentum-form-swap"],
    "weight-decay-form": ["decay-form-swap"],
    "optimizer-state-lifetime": ["state-reset", "state-server"],
}


def supported(spec):
    """The specs replay() runs: a linear or quadratic model, or a layer
    list (batch normalisation through pflref_exact.Problem), on inline
    clients, a given schedule."""
    return (spec["algorithm"]["name"] == ALGORITHM
            and spec["model"]["kind"] in ("quadratic", "linear", "layers")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def settings(algorithm):
    """(hyperparameters as exact values, switches) of a fedprox spec's
    algorithm object: the defaults, the preset, then the explicit ones."""
    sw = {"fedprox.sampling": "paper", "lr.count": "rounds",
          "bn.aggregate": "average"}
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    hp = {k: exact(v) for k, v in algorithm["hyperparameters"].items()}
    return hp, sw


def round_weights(pr, rnd, sw, bugs):
    """{k: c_k}: the server's weight of each participant (l. 7)."""
    clients = rnd["clients"]
    paper = sw["fedprox.sampling"] == "paper"
    if paper and "draws-samples" not in bugs:
        draws = rnd["draws"]
        # req: fedprox.alg2.l3, fedprox.alg2.l7
        if "draws-distinct" in bugs:
            return {k: Fraction(1, len(set(draws))) for k in clients}
        return {k: Fraction(draws.count(k), len(draws)) for k in clients}
    if "uniform-weights" in bugs:
        return {k: Fraction(1, len(clients)) for k in clients}
    # req: fedprox.eq1
    m_t = sum(pr.n(k) for k in clients)
    return {k: Fraction(pr.n(k), m_t) for k in clients}


def steps_of(steps, longest, bugs):
    """A participant's batch list as a buggy client would run it."""
    steps = [list(b) for b in steps]
    if "straggler-padded" in bugs and len(steps) < longest:
        steps = [steps[s % len(steps)] for s in range(longest)]
    if "step-extra" in bugs:
        steps = steps + steps[:1]
    if "step-fewer" in bugs and len(steps) > 1:
        steps = steps[:-1]
    return steps


def split_mask(spec):
    """1 on the entries of the spec's split.personal blocks, or None."""
    if "split" not in spec:
        return None
    import pflref_exact_pfl as pp
    return pp.personal_mask(spec["model"], spec["split"]["personal"])


def replay(spec, bugs=frozenset()):
    """The spec (given schedule) run exactly: (trace, w, None, None)."""
    bugs = frozenset(bugs)
    algorithm = spec["algorithm"]
    hp, sw = settings(algorithm)
    eta, mu = hp["eta"], hp["fedprox.mu"]
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        algorithm.get("switches", {}))
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    # bn.aggregate = parameters_only (PFLlib: clientprox.py:61-64
    # set_parameters and serverbase.py:138-150 aggregate_parameters move
    # parameters() only): each device's own running statistics, w0's until
    # it first trains; the server's are the first participant's
    held = ({} if sw["bn.aggregate"] == "parameters_only" and pr.buffers
            else None)
    opt = None
    if po.uses_optimizer(spec):
        # a spec's split (docs/optimizers.md: opt.decay_scope = shared /
        # personal decay the split's blocks); none: every block shared
        opt = po.Optimizers(po.config(algorithm), pr, 1, split_mask(spec),
                            bugs)
    lr_alg = dict(algorithm, switches=dict(algorithm.get("switches", {}),
                                           **{"lr.count": sw["lr.count"]}))
    trace = Trace()
    w = list(w0)
    trained = [0] * len(pr.clients)
    # req: fedprox.alg2.l1, fedprox.alg2.l2
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        # req: fedprox.alg2.l4
        trace.emit("round_begin", "train", t, None, None, "w", w)
        c = round_weights(pr, rnd, sw, bugs)
        longest = max(len(b) for b in rnd["batches"])
        local = {}
        owners = rnd["clients"]
        if "misread-drawn" in bugs:
            owners = rnd.get("drawn", rnd["clients"])
        for k, steps in sorted(zip(owners, rnd["batches"])):
            if "misread-drawn" in bugs:     # indices wrapped into k's range
                steps = [[i % pr.n(k) for i in b] for b in steps]
            start = w0 if "restart-w0" in bugs else w
            if held is not None and "start-global-buffers" not in bugs:
                mine = w0 if "start-w0-buffers" in bugs else held.get(k, w0)
                start = [mine[p] if p in pr.buffers else x
                         for p, x in enumerate(start)]
            ref = w0 if "prox-ref-w0" in bugs else w      # w^t
            trace.emit("client_begin", "train", t, k, 0, "w_local", start)
            eta_k = eta * px.round_factor(lr_alg, t, bugs, trained=trained[k])
            trained[k] += 1
            passes = 1
            if "draws-chain" in bugs and sw["fedprox.sampling"] == "paper":
                passes = rnd["draws"].count(k)
            wk = list(start)
            mu_k = mu / 2 if "prox-half" in bugs else mu
            for _ in range(passes):
                if opt is not None:
                    opt.begin(k)
                # req: fedprox.alg2.l5
                wk = px.local_sgd(pr, k, wk, steps_of(steps, longest, bugs),
                                  eta_k, trace, "train", t, "w_local",
                                  mu=mu_k, ref=ref, bugs=bugs,
                                  opt=None if opt is None else opt.stepper(k, 0))
            # req: fedprox.alg2.l6
            trace.emit("client_end", "train", t, k, None, "w_local", wk)
            trace.emit("note", "train", t, k, None, "c", [c[k]])
            if held is not None:
                held[k] = list(wk)
            if "straggler-dropped" in bugs and len(steps) < longest:
                continue
            local[k] = wk
        total = sum(c[k] for k in local)
        # req: fedprox.alg2.l7
        w = [sum(c[k] / total * local[k][p] for k in sorted(local))
             for p in range(pr.P)]
        if held is not None and local and "global-buffers-averaged" not in bugs:
            first = (sorted(local)[-1] if "global-buffers-last" in bugs
                     else sorted(local)[0])
            w = [local[first][p] if p in pr.buffers else x for p, x in enumerate(w)]
        trace.emit("server", "train", t, None, None, "w", w)
    return trace, w, None, None
