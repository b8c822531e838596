# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedrecon.py: Federated Reconstruction (Singhal et al.,
NeurIPS 2021, arXiv 2102.03448v6, Alg. 1) in exact rational arithmetic,
written from the paper's box (as trace/fedrecon.req renders it) and
TensorFlow Federated's reconstruction training process, independently of
the C reference.

The box: the parameters are split into global g and local l.  Each round
the server samples S_t; each i ∈ S_t splits D_i into a support D_{i,s} and
a query D_{i,q}, initialises l_i, takes k_r SGD steps (η_r) on l over
support batches with g frozen, copies g_i ← g, takes k_u SGD steps (η_u)
on g_i over query batches with l_i frozen, and returns Δ_i = g_i − g and
n_i = |D_{i,q}|; the server forms Δ = Σ n_i Δ_i / Σ n_i and takes
g ← g + η_s Δ.  The evaluation reconstructs l on D_{i,s} from the final g.

Bugs (realistic implementation mistakes; pflref_golden.check_mutants):

  eta-swap          η_r and η_u exchanged
  server-no-eta     the server ignores η_s: g ← g + Δ
  server-average    the server averages the g_i and ignores η_s (FedAvg's
                    g ← Σ n_i g_i / Σ n_i)
  recon-moves-g     the reconstruction steps move every parameter
  update-moves-l    the update steps move every parameter
  no-recon          the reconstruction steps are skipped
  weights-n-total   n_i = |D_i| instead of |D_{i,q}|
  weights-uniform   uniform weights where samples or examples is configured
  weights-samples   n_i = |D_{i,q}| where uniform or examples is configured
  init-flip         l_i from l⁰ where last is configured, or the reverse
  eval-kept         the evaluation does not reconstruct (or starts from
                    the kept l_i where l⁰ is configured)
  recon-optimizer   the reconstruction steps of l go through the client
                    optimizer too (one optimizer object for both phases),
                    where opt.* is the update's alone (TFF's
                    client_optimizer_fn) and l's steps are plain SGD (its
                    reconstruction_optimizer_fn, SGD by default)

The client optimizer (opt.*, golden/pflref_exact_optim.py): when the spec
sets one, the k_u update steps of l. 11 are its steps on g (one slot; TFF
training_process.py builds client_optimizer_fn() in every client update
and applies it to the global trainable variables only), and the
reconstruction of l, in training and in the evaluation, stays plain SGD
with η_r (reconstruction_optimizer_fn, SGD by default).
"""
from fractions import Fraction

from pflref_exact import NO_BUGS, Problem, initial
from pflref_golden import exact
import pflref_exact_optim as po
import pflref_exact_pfl as pp

SWITCH_DEFAULTS = {"fedrecon.local_init": "given", "fedrecon.weights": "samples",
                   "fedrecon.query": "complement", "fedrecon.eval": "reconstruct"}


def settings(algorithm):
    """(hyperparameters as exact fractions, switches) of a fedrecon spec."""
    sw = dict(SWITCH_DEFAULTS)
    sw.update(algorithm.get("switches", {}))
    hp = {k: exact(v) for k, v in algorithm["hyperparameters"].items()}
    return hp, sw


def sgd(pr, i, x, steps, eta, move, trace, phase, t, name, bugs, opt=None):
    """len(steps) steps x ← x − η ∇f_i(x; b) on the entries with move = 1;
    with opt (an Optimizers), its slot-0 step of client i on those
    entries' blocks instead."""
    for q, batch in enumerate(steps):
        g = pr.grad(i, x, batch, bugs)
        if opt is not None:
            x = opt.step(i, 0, g, x, eta, mask=move)
        else:
            x = [xp - eta * gp if m else xp for xp, gp, m in zip(x, g, move)]
        trace.emit("step", phase, t, i, q + 1, name, x)
    return x


def weight(pr, sw, support, i, update, bugs):
    """The weight of Δ_i before normalisation (l. 12; fedrecon.weights)."""
    mode = sw["fedrecon.weights"]
    if "weights-uniform" in bugs and mode != "uniform":
        mode = "uniform"
    elif "weights-samples" in bugs and mode != "samples":
        mode = "samples"
    if mode == "uniform":
        return Fraction(1)
    if mode == "examples":
        return Fraction(sum(len(b) for b in update))
    # req: fedrecon.alg1.l12
    if sw["fedrecon.query"] == "whole" or "weights-n-total" in bugs:
        return Fraction(pr.n(i))
    return Fraction(pr.n(i) - len(support[i]))


def fedrecon_round(pr, w, v, w0, mask, t, plan, hp, sw, support, trace,
                   bugs=NO_BUGS, opt=None):
    """One round.  w: (g, l⁰); v: the clients' (g, l_i).  plan:
    [(client, reconstruction batches, update batches)] ascending.
    mask: 1 on the local entries.  Returns (w, v)."""
    P = pr.P
    last = sw["fedrecon.local_init"] == "last"
    if "init-flip" in bugs:
        last = not last
    eta_r, eta_u = hp["fedrecon.eta_r"], hp["fedrecon.eta_u"]
    if "eta-swap" in bugs:
        eta_r, eta_u = eta_u, eta_r
    local = [1 if m else 0 for m in mask]
    glob = [0 if m else 1 for m in mask]
    recon_move = [1] * P if "recon-moves-g" in bugs else local
    update_move = [1] * P if "update-moves-l" in bugs else glob
    v = [list(vi) for vi in v]
    # req: fedrecon.alg1.l2, fedrecon.alg1.l3
    trace.emit("round_begin", "train", t, None, None, "w", w)
    sent = {}
    # req: fedrecon.alg1.l4
    for i, recon, update in plan:
        # req: fedrecon.alg1.l7, fedrecon.alg1.l8
        start = v[i] if last else w0
        x = [start[p] if mask[p] else w[p] for p in range(P)]
        trace.emit("client_begin", "train", t, i, 0, "w_local", x)
        if opt is not None:
            opt.begin(i)                  # client_optimizer_fn() (opt.state)
        # req: fedrecon.alg1.l9
        if "no-recon" not in bugs:
            x = sgd(pr, i, x, recon, eta_r, recon_move, trace, "train", t,
                    "w_recon", bugs,
                    opt if "recon-optimizer" in bugs else None)
        # req: fedrecon.alg1.l10, fedrecon.alg1.l11
        x = sgd(pr, i, x, update, eta_u, update_move, trace, "train", t,
                "w_local", bugs, opt)
        trace.emit("client_end", "train", t, i, None, "w_local", x)
        v[i] = list(x)
        trace.emit("client_end", "train", t, i, None, "v", x)
        # req: fedrecon.alg1.l12
        delta = [x[p] - w[p] for p in range(P)]
        sent[i] = (delta, weight(pr, sw, support, i, update, bugs))
    total = sum(n for _, n in sent.values())
    # req: fedrecon.alg1.l5
    Delta = [sum(sent[i][1] / total * sent[i][0][p] for i in sorted(sent))
             for p in range(P)]
    eta_s = hp["fedrecon.eta_s"]
    if "server-no-eta" in bugs or "server-average" in bugs:
        eta_s = Fraction(1)
    # req: fedrecon.alg1.l6
    w = [w[p] if mask[p] else w[p] + eta_s * Delta[p] for p in range(P)]
    trace.emit("server", "train", t, None, None, "w", w)
    v = [[vi[p] if mask[p] else w[p] for p in range(P)] for vi in v]
    return w, v


def evaluate(pr, w, v, w0, mask, post, hp, sw, trace, bugs=NO_BUGS):
    """The evaluation with reconstruction (§3): every client reconstructs l
    on its post batches from l⁰ (given) or its kept l_i (last)."""
    # req: fedrecon.eval
    last = sw["fedrecon.local_init"] == "last"
    if "init-flip" in bugs:
        last = not last
    if "eval-kept" in bugs:
        return v
    out = []
    for i, steps in enumerate(post):
        start = v[i] if last else w0
        x = [start[p] if mask[p] else w[p] for p in range(pr.P)]
        trace.emit("client_begin", "finetune", None, i, 0, "v", x)
        x = sgd(pr, i, x, steps, hp["fedrecon.eta_r"], mask, trace, "finetune",
                None, "v", bugs)
        trace.emit("client_end", "finetune", None, i, None, "v", x)
        out.append(x)
    return out


# The bug classes the flags of golden/fedrecon/ name (golden/audit.py).
MUTANTS = {
    "fedrecon-step-sizes": ["eta-swap"],
    "fedrecon-server-step": ["server-no-eta", "server-average"],
    "fedrecon-split-blocks": ["recon-moves-g", "update-moves-l", "no-recon"],
    "aggregation-weights": ["weights-n-total", "weights-uniform", "weights-samples"],
    "stale-personal-state": ["init-flip"],
    "fedrecon-eval": ["eval-kept"],
    "optimizer-phase": ["recon-optimizer"],
}


def supported(spec):
    """The specs this module replays: fedrecon on a given schedule with a
    linear, quadratic or regression mlp model (the mlp in exact fractions
    too: their digits multiply at every step, so its vectors stay a few
    steps long)."""
    return (spec["algorithm"]["name"] == "fedrecon"
            and spec["model"]["kind"] in ("linear", "quadratic", "mlp")
            and spec.get("schedule", {}).get("kind") == "given")


def replay(spec, bugs=NO_BUGS):
    """golden/audit.py's form: (trace, w, v, alpha = None)."""
    w, v, trace = run(spec, bugs)
    return trace, w, v, None


def run(spec, bugs=NO_BUGS):
    """Run a fedrecon spec (given schedule) exactly.  Returns (w, v, trace)."""
    from pflref_golden import Trace
    hp, sw = settings(spec["algorithm"])
    mask = pp.personal_mask(spec["model"], spec["split"]["personal"])
    pr = Problem(spec["model"], spec["problem"]["clients"])
    init = spec["init"]
    w0 = initial(init, pr.P, bugs)
    support = init.get("support")
    sched = spec["schedule"]
    assert sched["kind"] == "given"
    opt = po.for_spec(spec, pr, 1, mask, bugs)
    w, v, trace = list(w0), [list(w0) for _ in pr.clients], Trace()
    for t, r in enumerate(sched["rounds"]):
        plan = list(zip(r["clients"], r["personal"], r["batches"]))
        w, v = fedrecon_round(pr, w, v, w0, mask, t, plan, hp, sw, support,
                              trace, bugs, opt)
    if "post" in sched:
        v = evaluate(pr, w, v, w0, mask, sched["post"], hp, sw, trace, bugs)
    return w, v, trace
