# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_interp.py: model interpolation (seed 000 §2 and
Exercise 14.7.2; shared/spec notes §5.2) in exact rational arithmetic,
written from the seed and the notes, independently of ref/algorithms/interp.c.

The run:
  FedAvg rounds (McMahan et al. 2017, Alg. 1; pflref_exact.fedavg_round,
  switch fedavg.weights) give the global model w.  Then, for every client i
  (the schedule's post phase):
    h_i ← w0, one step h_i ← h_i − η ∇f_i(h_i; D) per post batch D
        (the purely local model; records "h", phase "interp")
    interp.alpha = fixed:            α_i = α
    interp.alpha = per_client_grid:  for j = 0..G, α_j = the double nearest
        j/G (taken at its exact value), v̄ = α_j h_i + (1 − α_j) w, scored by
        the mean loss on the selection set (the validation split X_val/y_val,
        or the test set, by interp.select); the lowest loss wins, equal
        losses go to the smaller α_j.  Notes per grid point (step = j):
        alpha_j, select_loss, and with test data test_loss and test_mse.
    notes "alpha" [α_i] and "v_bar" = α_i h_i + (1 − α_i) w.

Interface for golden/audit.py: supported(spec), replay(spec, bugs) ->
(trace, w, v, alpha) with v = [h_i] and MUTANTS {flag: [bugs]}.

Bugs (realistic mistakes a candidate might make):
  alpha-swap         v̄ = α w + (1 − α) h: the weight on the wrong model
  select-train       α chosen on the client's training set
  select-flip        α chosen on the test set where validation is
                     configured, or on the validation split where test is
  ties-larger        equal selection losses go to the larger α
  local-from-global  h_i starts from the trained global w instead of w0
  init-zeros, epochs-plus-one, epochs-minus-one, loss-x2, weights=<scheme>
                     as in pflref_exact.py / audit.py (the epoch bugs act on
                     the rounds' and the post phase's batch lists)
"""
from fractions import Fraction

import pflref_exact as px
import pflref_golden as pg

MUTANTS = {
    "interp-alpha-direction": ["alpha-swap"],
    "interp-selection": ["select-train", "select-flip", "ties-larger"],
    "initial-point": ["init-zeros", "local-from-global"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "aggregation-weights": ["weights=samples", "weights=uniform",
                            "weights=all_keep_old"],
    "loss-scale": ["loss-x2"],
}


def supported(spec):
    model = spec["model"]
    return (spec["algorithm"]["name"] == "interp"
            and (model["kind"] in ("linear", "quadratic")
                 or (model["kind"] == "layers"
                     and model.get("loss") in ("squared", "half_squared")))
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def _epochs(steps, bugs):
    """One epoch more or fewer of an explicit batch list (an epoch = the
    list's smallest period)."""
    steps = [list(b) for b in steps]
    n = len(steps)
    if n == 0:
        return steps
    p = next(q for q in range(1, n + 1)
             if n % q == 0 and all(steps[i] == steps[i % q] for i in range(n)))
    if "epochs-plus-one" in bugs:
        steps = steps + steps[:p]
    if "epochs-minus-one" in bugs:
        steps = steps[:n - p]
    return steps


def _data(client, xkey, ykey):
    if xkey not in client:
        return None
    return ([pg.exact_vec(row) for row in client[xkey]], pg.exact_vec(client[ykey]))


def evaluate(model, theta, data):
    """(loss, mse) of the linear model theta on data = (X, y): the mean of
    the per-sample loss ((ŷ − y)² for squared, ½(ŷ − y)² for half_squared)
    and the mean of (ŷ − y)²."""
    X, y = data
    if model["kind"] == "layers":          # pflref_exact_layers.py
        import pflref_exact_layers as pl
        return pl.loss_exact(pl.Model(model), X, y, theta)
    d = model["d"]
    b = theta[d] if model.get("bias", False) else Fraction(0)
    r = [sum(x[p] * theta[p] for p in range(d)) + b - yj for x, yj in zip(X, y)]
    sq = sum(ri * ri for ri in r) / len(r)
    scale = Fraction(1) if model["loss"] == "squared" else Fraction(1, 2)
    return scale * sq, sq


def mix(alpha, h, w, bugs):
    """v̄ = α h + (1 − α) w (seed 000 §2; notes §5.2)."""
    if "alpha-swap" in bugs:
        return [alpha * b + (1 - alpha) * a for a, b in zip(h, w)]
    # req: interp.eq3
    return [alpha * a + (1 - alpha) * b for a, b in zip(h, w)]


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp = alg.get("hyperparameters", {})
    sw = alg.get("switches", {})
    eta = pg.exact(hp["eta"])
    mode = sw.get("interp.alpha", "fixed")
    select = sw.get("interp.select", "validation")
    G = int(hp.get("interp.grid", 10))
    weights = sw.get("fedavg.weights", "samples")
    for b in bugs:
        if b.startswith("weights="):
            weights = b.split("=", 1)[1]
    model = spec["model"]
    clients = spec["problem"]["clients"]
    pr = px.Problem(model, clients).bn_switches(sw)   # bn.* (layer lists)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    sched = spec["schedule"]
    trace = pg.Trace()

    import pflref_exact_optim as po   # opt.*: slot 0 FedAvg's, slot 1 h_i's
    # opt.decay_scope = shared | personal reads the spec's split
    # (docs/optimizers.md, lambda_B), as for every algorithm's optimizer
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(model, spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 2, personal, bugs)
    w = list(w0)
    trained = [0] * len(clients)    # trainings before (lr.count = trainings)
    for t, r in enumerate(sched["rounds"]):
        plan = [(k, _epochs(b, bugs)) for k, b in zip(r["clients"], r["batches"])]
        # lr.*: the FedAvg rounds' step size eta c_t (px.round_factor); the
        # local h_i below trains once, after the rounds, at eta
        eta_t = {k: eta * px.round_factor(alg, t, bugs, trained=trained[k])
                 for k in r["clients"]}
        for k in r["clients"]:
            trained[k] += 1
        # req: interp.eq1
        w = px.fedavg_round(pr, w, w0, t, plan, eta_t, weights, trace, bugs, opt)

    hs, alphas = [], []
    for i, steps in enumerate(sched["post"]):
        start = w if "local-from-global" in bugs else w0
        trace.emit("client_begin", "interp", None, i, 0, "h", start)
        if opt is not None:
            opt.begin(i)
        # req: interp.eq2
        h = px.local_sgd(pr, i, start, _epochs(steps, bugs), eta, trace,
                         "interp", None, "h", bugs=bugs,
                         opt=None if opt is None else opt.stepper(i, 1))
        trace.emit("client_end", "interp", None, i, None, "h", h)
        hs.append(h)
        if mode == "fixed":
            # req: interp.eq5
            alpha_i = pg.exact(hp["alpha"])
        else:
            c = clients[i]
            test = _data(c, "X_test", "y_test")
            on = select
            if "select-flip" in bugs:
                on = "test" if select == "validation" else "validation"
            sel = {"validation": _data(c, "X_val", "y_val"), "test": test}[on]
            if "select-train" in bugs:
                sel = _data(c, "X", "y")
            best = None
            # req: interp.eq4
            for j in range(G + 1):
                a = pg.exact(j / G)               # the double nearest j/G
                vbar = mix(a, h, w, bugs)
                loss, _ = evaluate(model, vbar, sel)
                trace.emit("note", "interp", None, i, j, "alpha_j", [a])
                trace.emit("note", "interp", None, i, j, "select_loss", [loss])
                if test is not None:
                    tl, tm = evaluate(model, vbar, test)
                    trace.emit("note", "interp", None, i, j, "test_loss", [tl])
                    trace.emit("note", "interp", None, i, j, "test_mse", [tm])
                if (best is None or loss < best[0]
                        or ("ties-larger" in bugs and loss == best[0])):
                    best = (loss, a)
            alpha_i = best[1]
        alphas.append(alpha_i)
        trace.emit("note", "interp", None, i, None, "alpha", [alpha_i])
        trace.emit("note", "interp", None, i, None, "v_bar", mix(alpha_i, h, w, bugs))
    return trace, w, hs, alphas


def grid_gaps(spec):
    """Per client, the gap between the lowest and the second-lowest exact
    selection loss over the grid, or 0 at an exact tie (a generator asserts
    that every non-tie is far above rounding, so fp64 picks the same α)."""
    trace = replay(spec)[0]
    out = {}
    for r in trace.records:
        if r["name"] == "select_loss":
            out.setdefault(r["client"], []).append(r["value"][0])
    return {i: sorted(v)[1] - sorted(v)[0] for i, v in out.items()}
