# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_apfl.py: APFL (Deng, Kamani, Mahdavi 2020, arXiv
2003.13461, Alg. 1) in exact rational arithmetic (fractions.Fraction),
written from shared/spec notes §6 (the clean reading of §6(c), the
switches of §6(f) and §8), independently of the C reference.

One round, for each participant i of U (ascending):
    w_i := w
    for each scheduled batch xi, with the previous values on the right:
        vbar = alpha_i v_i + (1 - alpha_i) w_i
        w_i  := w_i - eta grad f_i(w_i; xi)
        v_i  := v_i - eta alpha_i grad f_i(vbar; xi)
        adaptive: alpha_i := clip01(alpha_i - eta_alpha <v_i - w_i, grad f_i(vbar; xi)>)
    w := (1/|U|) sum_{i in U} w_i
Switches (spec names; the paper's value first):
    apfl.alpha       fixed | adaptive
    apfl.mix         parameter | output: the loss of the mixed OUTPUT
                     yhat(x) = a z(v; x) + (1 - a) z(w_i; x): v's gradient is
                     a (1/|xi|) sum_x e(x) dz(v; x)/dv with e = dloss/dyhat,
                     and d/da = (1/|xi|) sum_x e(x) (z(v; x) - z(w_i; x))
    apfl.mix_uses_w  old | new: the mixture takes w_i after its step
    apfl.alpha_rule  paper | fedtorch: FedTorch's alpha_update, at the first
                     step of a round only, after both steps:
                     a := clip01(a - eta (sum_p (v - w)_p (a gv_p + (1 - a) gw_p)
                                          + 0.02 a))
                     with the new v, w, gv = the mixture loss's gradient in v
                     (a times the above), gw = its gradient in w ((1 - a)
                     times grad f(vbar) for parameter mixing); 0.02 is taken
                     at the double's exact value, as the code holds it
    bn.aggregate     average | parameters_only (apfl.variant = pfllib, a
                     layer list with batch normalisation): each model's own
                     training pass moves its own r_mu, r_v; under
                     parameters_only w_i starts from w's parameters with
                     client i's own statistics (init.w's first), v_i's end
                     mixture skips its statistics, and w's are the first
                     participant's (PFLlib clientbase.py:67-69,
                     clientapfl.py:58-59, serverbase.py:138-150)
    apfl.variant     paper | pfllib: TsingZ0/PFLlib clientapfl.py as run
                     (shared/spec notes-pfllib-as-run.md §2.3, APFL): per
                     batch, with the gradients at the iterates before it,
                       gw = grad f_i(w_i); w_i := w_i - eta gw
                       gv = grad f_i(v_i); v_i := v_i - eta gv   (own loss)
                       adaptive: a := clip01(a - eta_alpha (sum_p (v - w)_p
                                 (a gv_p + (1 - a) gw_p) + 0.02 a))
                                 at the new v_i, w_i, EVERY step; with a
                                 client optimizer gw, gv are p.grad after
                                 its step: under opt.clip = norm the
                                 gradients clip_grad_norm_ rescaled in
                                 place before optimizer.step(), the step's
                                 own weight decay and momentum left out
                                 (torch computes them out of place)
                     and after the client's last step
                       v_i := (1 - a) w_i + a v_i
                     no v_bar note (PFLlib evaluates v_i itself)
    apfl.weights     uniform | samples: w := sum n_i w_i / sum_U n_j
Trajectory (the records the reference emits): round_begin w; per client
client_begin w_local, v (step 0); per step s: step w_local, step v, and when
adaptive a note alpha [alpha_i]; client_end w_local, v; note v_bar =
alpha_i v_i + (1 - alpha_i) w_i with the local w_i; server w.

Models: quadratic (parameter mixing only: it has no outputs), linear, and
the regression mlp (pflref_exact.Problem), whose outputs and their
parameter derivatives are computed here exactly; a layer list with a
squared loss through pflref_exact_layers.py (outputs_exact and the
Jacobian-transpose product output_vjp_exact).

Bugs (for the mutant checks; MUTANTS maps each flag to them):
  mix-flip             parameter <-> output mixing
  mix-w-flip           the mixture with the new w_i where old is configured,
                       or the reverse
  v-no-alpha           v's step without the factor alpha
  v-own-loss           v trained on its own loss grad f_i(v) (PFLlib)
  alpha-new-iterates   the paper's alpha gradient at the new v_i, w_i
  alpha-no-projection  alpha not projected to [0, 1]
  alpha-sign           alpha moved up its gradient (either rule)
  alpha-rule-flip      paper <-> fedtorch rule
  alpha-reset          alpha_i back to the initial alpha at every round
  samples-weights      the server weights n_i / sum n_j instead of 1/|U|
  steps-plus-one, steps-minus-one
                       the last scheduled batch of a client repeated /
                       dropped
  restart-w0           w_i starts from w0 instead of w
  reset-personal       v_i back to w0 at every round it takes part in
  personal-from-global v_i := w at the start of every round
  train-all            clients outside U train too (full batches, as many as
                       the first participant) and are averaged
  drawn-batches        the round's batch lists paired with the clients in
                       the drawn order instead of the ascending clients
  init-zeros, batch-sum, loss-x2
                       as pflref_exact.py
  uniform-weights      the server weights 1/|U| where samples is configured
  pfllib-mixture-v     under pfllib, v stepped through the mixture (the
                       paper's v step) instead of on its own loss
  pfllib-no-decay      under pfllib, alpha_update without its + 0.02 a
  pfllib-no-overwrite  under pfllib, v_i kept at the round's end instead of
                       (1 - a) w_i + a v_i
  pfllib-overwrite-swap
                       under pfllib, v_i := a w_i + (1 - a) v_i
  pfllib-alpha-old-iterates
                       under pfllib, alpha_update at the old v_i, w_i
  pfllib-alpha-unclipped
                       under pfllib with opt.clip = norm, alpha_update reads
                       the loss gradients as backward() gave them, not as
                       clip_grad_norm_ rescaled them in place
  lr-ignored, lr-shifted, lr-per-round
                       as pflref_exact.round_factor
  alpha-lr-flip        eta_alpha decayed where apfl.alpha_lr = constant and
                       the other way round

Learning-rate decay (lr.schedule, lr.gamma, lr.step_rounds, lr.count;
ref/engine/lr.c): client i's train() in round t takes eta c with c of
pflref_exact.round_factor (k = t, or its own trainings before with
lr.count = trainings), and eta_alpha c with apfl.alpha_lr = decayed (the
default) or eta_alpha, unset the undecayed eta, with constant (PFLlib's
alpha_update reads self.learning_rate, which no scheduler touches).
"""
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

NO_BUGS = frozenset()

SWITCHES = {"apfl.alpha": ("fixed", "adaptive"),
            "apfl.mix": ("parameter", "output"),
            "apfl.mix_uses_w": ("old", "new"),
            "apfl.alpha_rule": ("paper", "fedtorch"),
            "apfl.variant": ("paper", "pfllib"),
            "apfl.weights": ("uniform", "samples"),
            "apfl.alpha_lr": ("decayed", "constant"),
            "bn.aggregate": ("average", "parameters_only"),
            "lr.schedule": ("constant", "exponential", "step"),
            "lr.count": ("rounds", "trainings")}

# Presets (named bundles of switches; explicit switches override them).
# "fedtorch" is the bundle proposed for ref/engine/params.c: keep the two equal.
PRESETS = {"paper": {},
           "fedtorch": {"apfl.mix": "output", "apfl.mix_uses_w": "new",
                        "apfl.alpha_rule": "fedtorch"},
           "pfllib": {"apfl.variant": "pfllib", "apfl.weights": "samples",
                      "apfl.alpha": "adaptive", "lr.count": "trainings",
                      "apfl.alpha_lr": "constant",
                      # clientbase.py:67-69, clientapfl.py:58-59,
                      # serverbase.py:138-150: parameters() only
                      "bn.aggregate": "parameters_only"}}

# FedTorch's constant in alpha_update, at the exact value of the double.
FEDTORCH_DECAY = exact(0.02)

MUTANTS = {
    "apfl-mix": ["mix-flip"],
    "apfl-mix-uses-w": ["mix-w-flip"],
    "apfl-v-scale": ["v-no-alpha", "v-own-loss"],
    "apfl-alpha-update": ["alpha-new-iterates", "alpha-no-projection",
                          "alpha-sign", "alpha-rule-flip"],
    "stale-personal-state": ["reset-personal", "personal-from-global",
                             "alpha-reset"],
    "aggregation-weights": ["samples-weights", "uniform-weights"],
    "apfl-pfllib": ["pfllib-mixture-v", "pfllib-no-decay",
                    "pfllib-no-overwrite", "pfllib-overwrite-swap",
                    "pfllib-alpha-old-iterates"],
    "apfl-pfllib-clipped-grad": ["pfllib-alpha-unclipped"],
    "local-step-count": ["steps-plus-one", "steps-minus-one"],
    "stale-global": ["restart-w0"],
    "unsampled-client": ["train-all"],
    "initial-point": ["init-zeros"],
    "batch-mean": ["batch-sum"],
    "loss-scale": ["loss-x2"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "alpha-lr-flip"],
    "lr-count": ["lr-per-round"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
}


def settings(algorithm):
    """(eta, alpha, eta_alpha or None, switches) of a spec's "algorithm"."""
    hp = algorithm.get("hyperparameters", {})
    sw = {k: v[0] for k, v in SWITCHES.items()}
    sw.update(PRESETS[algorithm.get("preset", "paper")])
    sw.update(algorithm.get("switches", {}))
    eta_alpha = hp.get("eta_alpha")
    return (exact(hp["eta"]), exact(hp["alpha"]),
            None if eta_alpha is None else exact(eta_alpha), sw)


def supported(spec):
    m = spec["model"]
    model_ok = (m["kind"] in ("quadratic", "linear")
                or (m["kind"] in ("mlp", "layers")
                    and m.get("loss") in ("squared", "half_squared")))
    return (spec["algorithm"]["name"] == "apfl" and model_ok
            and spec["algorithm"].get("preset", "paper") in PRESETS
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


# ---------------------------------------------------------------- outputs


def output(pr, theta, x):
    """z(theta; x): x.w + b (linear), W2 sigma(W1 x + b1) + b2 (mlp, k = 1)."""
    if pr.kind == "linear":
        z = sum(a * b for a, b in zip(x, theta[:pr.d]))
        return z + (theta[pr.d] if pr.bias else 0)
    W1, b1, W2, b2 = pr._mlp_params(theta)
    a = pr._hidden(x, W1, b1)
    return b2[0] + sum(W2[0][u] * pr._sigma(a[u]) for u in range(pr.h))


def output_jacobian(pr, theta, x):
    """dz(theta; x)/dtheta, in theta's layout."""
    if pr.kind == "linear":
        return list(x) + ([Fraction(1)] if pr.bias else [])
    W1, b1, W2, _ = pr._mlp_params(theta)
    a = pr._hidden(x, W1, b1)
    back = [W2[0][u] * pr._sigma_prime(a[u]) for u in range(pr.h)]
    J = [back[u] * x[p] for u in range(pr.h) for p in range(pr.d)]
    if pr.hidden_bias:
        J += back
    J += [pr._sigma(a[u]) for u in range(pr.h)]
    if pr.bias:
        J.append(Fraction(1))
    return J


def loss_slope(pr, bugs):
    """dloss/dyhat = s (yhat - y): s = 2 (squared) or 1 (half_squared)."""
    s = 2 if pr.loss == "squared" else 1
    return 3 - s if "loss-x2" in bugs else s


def output_mix_grads(pr, k, v, wm, a, batch, bugs):
    """For the loss of yhat = a z(v) + (1 - a) z(wm), mean over the batch:
    (Gv, Gw, dalpha) with Gv = (1/nb) sum e dz(v)/dv, Gw likewise at wm,
    dalpha = (1/nb) sum e (z(v) - z(wm)); e = s (yhat - y)."""
    c = pr.clients[k]
    s = loss_slope(pr, bugs)
    div = 1 if "batch-sum" in bugs else len(batch)
    if pr.kind == "layers":
        # the layer list's outputs and one backward pass seeded with e/|xi|
        # per sample (pflref_exact_layers.py: sum_x e dz/dtheta = J^T e)
        import pflref_exact_layers as pl
        M, data = pr.layers, c["data"]
        zv = pl.outputs_exact(M, data, v, batch, bugs)
        zw = pl.outputs_exact(M, data, wm, batch, bugs)
        e = [s * (a * p + (1 - a) * q - Fraction(float(data.y[j])))
             for p, q, j in zip(zv, zw, batch)]
        Gv = pl.output_vjp_exact(M, data, v, batch, e, bugs)
        Gw = pl.output_vjp_exact(M, data, wm, batch, e, bugs)
        da = sum((x * (p - q) for x, p, q in zip(e, zv, zw)), Fraction(0))
        return [g / div for g in Gv], [g / div for g in Gw], da / div
    Gv, Gw, da = [Fraction(0)] * pr.P, [Fraction(0)] * pr.P, Fraction(0)
    for j in batch:
        x = c["X"][j]
        zv, zw = output(pr, v, x), output(pr, wm, x)
        e = s * (a * zv + (1 - a) * zw - c["y"][j])
        Gv = [g + e * d for g, d in zip(Gv, output_jacobian(pr, v, x))]
        Gw = [g + e * d for g, d in zip(Gw, output_jacobian(pr, wm, x))]
        da += e * (zv - zw)
    return [g / div for g in Gv], [g / div for g in Gw], da / div


# ---------------------------------------------------------------- the round


def pfllib_step(pr, i, wi, vi, a, batch, cfg, bugs):
    """One batch of PFLlib's clientapfl.py train(): returns (w_i, v_i, a)."""
    eta, eta_alpha = cfg["eta"], cfg["eta_alpha"]
    opt = cfg.get("opt")
    gw = pr.grad(i, wi, batch, bugs)
    # alpha_update reads p.grad after both steps: under opt.clip = norm the
    # gradient clip_grad_norm_ left in place (read_w, read_v), never the
    # step's decayed or momentum direction (pflref_exact_optim.step, seen)
    read_w, read_v = [], []
    if opt is not None:                     # optimizer.step
        wi_new = opt.step(i, 0, gw, wi, eta, seen=read_w)
    else:
        wi_new = [x - eta * g for x, g in zip(wi, gw)]
    if pr.buffers:      # w_i's training pass moves its r_mu, r_v (never stepped)
        moved = pr.move_running(i, wi, batch, bugs)
        wi_new = [moved[p] if p in pr.buffers else x for p, x in enumerate(wi_new)]
    if "pfllib-mixture-v" in bugs:
        vbar = [a * p + (1 - a) * q for p, q in zip(vi, wi)]
        gv = [a * g for g in pr.grad(i, vbar, batch, bugs)]
    else:
        gv = pr.grad(i, vi, batch, bugs)
    if opt is not None:                     # optimizer_per.step
        vi_new = opt.step(i, 1, gv, vi, eta, seen=read_v)
    else:
        vi_new = [x - eta * g for x, g in zip(vi, gv)]
    if pr.buffers:      # and v_i's its own
        moved = pr.move_running(i, vi, batch, bugs)
        vi_new = [moved[p] if p in pr.buffers else x for p, x in enumerate(vi_new)]
    if cfg["switches"]["apfl.alpha"] != "adaptive":
        return wi_new, vi_new, a
    pv, pw = (vi, wi) if "pfllib-alpha-old-iterates" in bugs else (vi_new, wi_new)
    if read_w and "pfllib-alpha-unclipped" not in bugs:
        gw, gv = read_w, read_v
    grad = sum((p - q) * (a * g1 + (1 - a) * g2)
               for p, q, g1, g2 in zip(pv, pw, gv, gw))
    if "pfllib-no-decay" not in bugs:
        grad += FEDTORCH_DECAY * a
    x = a - (eta if eta_alpha is None else eta_alpha) * grad
    if cfg.get("unclipped") is not None:
        cfg["unclipped"].append(x)
    return wi_new, vi_new, min(max(x, Fraction(0)), Fraction(1))


def apfl_round(pr, w, v, alpha, w0, alpha0, t, plan, cfg, trace, bugs=NO_BUGS):
    """One communication round; returns (w, v, alpha) (new lists).
    cfg["lr"]: (t, i) -> the step sizes (eta, eta_alpha) of client i's
    train() in round t, or absent (no decay)."""
    eta, eta_alpha, sw = cfg["eta"], cfg["eta_alpha"], cfg["switches"]
    base = cfg
    adaptive = sw["apfl.alpha"] == "adaptive"
    rule = sw["apfl.alpha_rule"]
    if "alpha-rule-flip" in bugs:
        rule = "fedtorch" if rule == "paper" else "paper"
    if eta_alpha is None or rule == "fedtorch":
        eta_alpha = eta
    mix = sw["apfl.mix"]
    if "mix-flip" in bugs:
        mix = "output" if mix == "parameter" else "parameter"
    new_w = (sw["apfl.mix_uses_w"] == "new") != ("mix-w-flip" in bugs)
    pfllib = sw["apfl.variant"] == "pfllib"
    v = [list(x) for x in v]
    alpha = list(alpha)
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        have = dict(plan)
        plan = [(i, have.get(i) or [list(range(pr.n(i)))] * steps0)
                for i in range(len(pr.clients))]
    # req: apfl.alg1.l1, apfl.alg1.l2
    trace.emit("round_begin", "train", t, None, None, "w", w)
    local = {}
    # req: apfl.alg1.l3
    for i, steps in plan:
        if base.get("lr") is not None:        # lr.*: this train()'s steps
            eta, eta_alpha = base["lr"](t, i)
            cfg = dict(base, eta=eta, eta_alpha=eta_alpha)
            if eta_alpha is None or rule == "fedtorch":
                eta_alpha = eta
        steps = [list(b) for b in steps]
        if "steps-plus-one" in bugs:
            steps = steps + steps[-1:]
        if "steps-minus-one" in bugs:
            steps = steps[:-1]
        if "reset-personal" in bugs:
            v[i] = list(w0)
        if "personal-from-global" in bugs:
            v[i] = list(w)
        if "alpha-reset" in bugs:
            alpha[i] = alpha0
        if cfg.get("opt") is not None:      # its two optimizers
            cfg["opt"].begin(i)
        # req: apfl.alg1.l10
        wi = list(w0 if "restart-w0" in bugs else w)
        held = cfg.get("held")
        if held is not None and "start-global-buffers" not in bugs:
            mine = w0 if "start-w0-buffers" in bugs else held.get(i, w0)
            wi = [mine[p] if p in pr.buffers else x for p, x in enumerate(wi)]
        trace.emit("client_begin", "train", t, i, 0, "w_local", wi)
        trace.emit("client_begin", "train", t, i, 0, "v", v[i])
        # req: apfl.alg1.l8
        for s, batch in enumerate(steps, start=1):
            a, vi = alpha[i], v[i]
            if pfllib:
                wi, v[i], alpha[i] = pfllib_step(pr, i, wi, vi, a, batch,
                                                 cfg, bugs)
                trace.emit("step", "train", t, i, s, "w_local", wi)
                trace.emit("step", "train", t, i, s, "v", v[i])
                if sw["apfl.alpha"] == "adaptive":
                    trace.emit("note", "train", t, i, s, "alpha", [alpha[i]])
                continue
            # req: apfl.alg1.l5
            gw_step = pr.grad(i, wi, batch, bugs)
            if cfg.get("opt") is not None:  # w_i's optimizer (slot 0)
                wi_new = cfg["opt"].step(i, 0, gw_step, wi, eta)
            else:
                wi_new = [x - eta * g for x, g in zip(wi, gw_step)]
            wm = wi_new if new_w else wi
            if mix == "parameter":
                # req: apfl.alg1.l4
                vbar = [a * p + (1 - a) * q for p, q in zip(vi, wm)]
                Gv = pr.grad(i, vbar, batch, bugs)
                Gw = Gv
                dalpha = sum((p - q) * g for p, q, g in zip(vi, wm, Gv))
            else:
                Gv, Gw, dalpha = output_mix_grads(pr, i, vi, wm, a, batch, bugs)
            if "v-own-loss" in bugs:
                step_v = pr.grad(i, vi, batch, bugs)
            elif "v-no-alpha" in bugs:
                step_v = Gv
            else:
                step_v = [a * g for g in Gv]
            # req: apfl.alg1.l6
            if cfg.get("opt") is not None:  # v_i's optimizer (slot 1)
                vi_new = cfg["opt"].step(i, 1, step_v, vi, eta)
            else:
                vi_new = [p - eta * g for p, g in zip(vi, step_v)]
            trace.emit("step", "train", t, i, s, "w_local", wi_new)
            trace.emit("step", "train", t, i, s, "v", vi_new)
            if adaptive:
                sign = -1 if "alpha-sign" in bugs else 1
                # req: apfl.alg1.l7
                if rule == "paper":
                    if "alpha-new-iterates" in bugs:
                        dalpha = sum((p - q) * g for p, q, g in zip(vi_new, wi_new, Gv))
                    x = a - sign * eta_alpha * dalpha
                elif s == 1:
                    gv = [a * g for g in Gv]
                    gw = [(1 - a) * g for g in Gw]
                    grad = sum((p - q) * (a * g1 + (1 - a) * g2)
                               for p, q, g1, g2 in zip(vi_new, wi_new, gv, gw))
                    x = a - sign * eta * (grad + FEDTORCH_DECAY * a)
                else:
                    x = a
                if cfg.get("unclipped") is not None:
                    cfg["unclipped"].append(x)
                if "alpha-no-projection" not in bugs:
                    x = min(max(x, Fraction(0)), Fraction(1))
                alpha[i] = x
                trace.emit("note", "train", t, i, s, "alpha", [x])
            wi, v[i] = wi_new, vi_new
        if pfllib and "pfllib-no-overwrite" not in bugs:
            a = alpha[i]
            if "pfllib-overwrite-swap" in bugs:
                a = 1 - a
            mixed = [(1 - a) * q + a * p for p, q in zip(v[i], wi)]
            if cfg.get("held") is not None:   # model_per.parameters() only
                mixed = [v[i][p] if p in pr.buffers else x
                         for p, x in enumerate(mixed)]
            v[i] = mixed
        if cfg.get("held") is not None:
            cfg["held"][i] = list(wi)
        trace.emit("client_end", "train", t, i, None, "w_local", wi)
        trace.emit("client_end", "train", t, i, None, "v", v[i])
        if not pfllib:
            # req: apfl.alg1.l11, apfl.eq4
            trace.emit("note", "train", t, i, None, "v_bar",
                       [alpha[i] * p + (1 - alpha[i]) * q
                        for p, q in zip(v[i], wi)])
        local[i] = wi
    # req: apfl.alg1.l9
    samples = sw["apfl.weights"] == "samples"
    if "samples-weights" in bugs:
        samples = True
    if "uniform-weights" in bugs:
        samples = False
    if samples:
        total = sum(pr.n(i) for i in local)
        c = {i: Fraction(pr.n(i), total) for i in local}
    else:
        c = {i: Fraction(1, len(local)) for i in local}
    new = [sum(c[i] * local[i][p] for i in sorted(local)) for p in range(pr.P)]
    held = base.get("held")
    if held is not None and local and "global-buffers-averaged" not in bugs:
        first = sorted(local)[-1] if "global-buffers-last" in bugs else sorted(local)[0]
        new = [held[first][p] if p in pr.buffers else x for p, x in enumerate(new)]
    trace.emit("server", "train", t, None, None, "w", new)
    return new, v, alpha


def replay(spec, bugs=NO_BUGS, unclipped=None):
    """Run an apfl spec exactly as written; returns (trace, w, v, alpha).
    unclipped: a list that receives every alpha update before its
    projection (for the generators' rounding-safety checks), or None."""
    eta, alpha0, eta_alpha, sw = settings(spec["algorithm"])
    cfg = {"eta": eta, "eta_alpha": eta_alpha, "switches": sw,
           "unclipped": unclipped}
    decay = {"switches": sw,
             "hyperparameters": spec["algorithm"].get("hyperparameters", {})}
    counts = {}

    def lr(t, i):
        """(eta c, eta_alpha c or kept) of client i's train() in round t."""
        c = px.round_factor(decay, t, bugs, trained=counts.get(i, 0))
        counts[i] = counts.get(i, 0) + 1
        constant = (sw["apfl.alpha_lr"] == "constant") != ("alpha-lr-flip" in bugs)
        if constant:                          # PFLlib: self.learning_rate
            return eta * c, eta if eta_alpha is None else eta_alpha
        return eta * c, None if eta_alpha is None else eta_alpha * c

    if sw["lr.schedule"] != "constant":
        cfg["lr"] = lr
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        spec["algorithm"].get("switches", {}))
    # bn.aggregate = parameters_only (apfl.variant = pfllib): each client's
    # self.model, init.w's until it first trains
    if sw["bn.aggregate"] == "parameters_only" and pr.buffers:
        cfg["held"] = {}
    if sw["apfl.mix"] == "output" or "mix-flip" in bugs:
        assert pr.kind != "quadratic", "the quadratic model has no outputs"
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    import pflref_exact_optim as po       # opt.*: slot 0 w_i, slot 1 v_i
    # opt.decay_scope = shared | personal reads the spec's split (the
    # optimizer's λ_B, docs/optimizers.md); the algorithm reads no split
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    cfg["opt"] = po.for_spec(spec, pr, 2, personal, bugs)
    sched = spec["schedule"]
    assert sched["kind"] == "given"
    trace = Trace()
    w, v = list(w0), [list(w0) for _ in pr.clients]
    alpha = [alpha0] * len(pr.clients)
    for t, r in enumerate(sched["rounds"]):
        # batches[j] is clients[j]'s; drawn is information only
        owners = r.get("drawn", r["clients"]) if "drawn-batches" in bugs else r["clients"]
        plan = sorted(zip(owners, r["batches"]))
        w, v, alpha = apfl_round(pr, w, v, alpha, w0, alpha0, t, plan, cfg,
                                 trace, bugs)
    return trace, w, v, alpha
