#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""APFL golden vector with output mixing under softmax cross-entropy, in
60-digit decimal arithmetic.

APFL (Deng, Kamani, Mahdavi 2020, arXiv 2003.13461, Alg. 1) as shared/spec
notes-fedavg-pfedme-ditto-perfedavg-apfl.md §6(c) and §6(f) item 1 give it,
with apfl.mix = output: the personalised prediction is the mixture of the
two models' logits, z̄(x) = α z(v; x) + (1 − α) z(w_i; x), and the loss is
the cross-entropy of softmax(z̄).  With E_j = (softmax(z̄_j) − onehot(y_j))/n_b
per sample j of the batch ξ (∂ℓ/∂z̄ averaged), each step of client i does,
with the previous values on the right:

    w_i ← w_i − η ∇f_i(w_i; ξ)                         (plain cross-entropy)
    v_i ← v_i − η α_i Σ_j J_v(x_j)ᵀ E_j                (∂/∂v of the mixture loss)
    α_i ← Π_[0,1](α_i − η_α Σ_j ⟨z(v_i; x_j) − z(w_i; x_j), E_j⟩)   (adaptive)

and the server averages the participants' w_i (1/|U|).  The softmax has no
rational values, so this generator computes in Python's decimal module
with 60 significant digits (exp correctly rounded at that precision) and
writes each value's correctly rounded double; inputs are the exact values
of the spec's doubles.  pflref_exact_apfl.py (exact fractions) has no
cross-entropy, so audit.py skips this vector; this generator checks its
own gradients instead: at every step the three derivatives above are
compared with central differences of the mixture loss (step 1e-20, so the
differences agree to better than 1e-30).

Written from the notes and docs/algorithms/apfl.md, independently of the C
reference and of the NumPy candidate.

  mlp-ce-output-drawn  an mlp with d = h = k = 2, identity activation,
                       biases, cross-entropy; three clients (n = 3, 4, 5);
                       α₀ = 0.35, η = 0.3, η_α = 0.6 (adaptive, the paper's
                       rule); U⁰ = {0, 2} drawn 2, 0; U¹ = {0, 1} drawn 1, 0;
                       two steps per participation on different batches

    /usr/bin/python3 golden/apfl/make_ce.py [OUTDIR]
"""
import os
import sys
from decimal import Decimal, getcontext

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_golden as pg       # noqa: E402

getcontext().prec = 60

NOTES = pg.NOTES
PAPER = "Deng, Kamani, Mahdavi 2020, arXiv 2003.13461, Alg. 1"
GENERATOR = "golden/apfl/make_ce.py (60-digit decimal)"
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference (libm exp and log, about 1 ulp each) against "
             "60-digit decimal values rounded to the nearest double: two "
             "rounds of two minibatch steps on at most 3 samples of a "
             "12-parameter mlp, each step a few dozen roundings on values "
             "below 3 (asserted), the α updates' unprojected values at least "
             "1e-3 inside [0, 1] (asserted), so rounding cannot flip a "
             "projection; the error stays below 1e-14, and every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
FD_STEP = Decimal("1e-20")


def D(x):
    """The exact value of the double x."""
    return Decimal(float(x))


class Mlp:
    """z = W2 (W1 x + b1) + b2 (identity activation), θ laid out as W1
    (h×d row-major), b1 (h), W2 (k×h row-major), b2 (k)."""

    def __init__(self, d, h, k):
        self.d, self.h, self.k = d, h, k
        self.P = h * d + h + k * h + k

    def parts(self, x):
        d, h, k = self.d, self.h, self.k
        W1 = [x[j * d:(j + 1) * d] for j in range(h)]
        o = h * d
        b1 = x[o:o + h]
        o += h
        W2 = [x[o + c * h:o + (c + 1) * h] for c in range(k)]
        return W1, b1, W2, x[o + k * h:]

    def forward(self, theta, xs):
        W1, b1, W2, b2 = self.parts(theta)
        a = [sum(W1[j][p] * xs[p] for p in range(self.d)) + b1[j] for j in range(self.h)]
        z = [sum(W2[c][j] * a[j] for j in range(self.h)) + b2[c] for c in range(self.k)]
        return a, z

    def back(self, theta, xs, e):
        """Σ_c e_c ∂z_c/∂θ: ∂W2 = e aᵀ, ∂b2 = e, δ = W2ᵀ e, ∂W1 = δ xᵀ,
        ∂b1 = δ."""
        W1, b1, W2, b2 = self.parts(theta)
        a, _ = self.forward(theta, xs)
        delta = [sum(W2[c][j] * e[c] for c in range(self.k)) for j in range(self.h)]
        return ([delta[j] * xs[p] for j in range(self.h) for p in range(self.d)]
                + delta + [e[c] * a[j] for c in range(self.k) for j in range(self.h)]
                + list(e))


def softmax(z, bugs):
    top = max(z)
    ex = [(zc - top).exp() for zc in z]
    if "softmax-unnormalised" in bugs:
        return ex
    total = sum(ex)
    return [x / total for x in ex]


def ce(z, y):
    """−log softmax(z)_y."""
    top = max(z)
    return sum((zc - top).exp() for zc in z).ln() + top - z[y]


def mixture_loss(net, data, batch, v, w, a):
    """mean over the batch of the cross-entropy of α z(v) + (1 − α) z(w)."""
    total = Decimal(0)
    for j in batch:
        xs, y = data[j]
        zv, zw = net.forward(v, xs)[1], net.forward(w, xs)[1]
        total += ce([a * p + (1 - a) * q for p, q in zip(zv, zw)], y)
    return total / len(batch)


def own_grad(net, data, batch, w, bugs):
    """∇ of the mean cross-entropy of z(w) on the batch."""
    g = [Decimal(0)] * net.P
    for j in batch:
        xs, y = data[j]
        p = softmax(net.forward(w, xs)[1], bugs)
        e = [(pc - (1 if c == y else 0)) / len(batch) for c, pc in enumerate(p)]
        g = [gi + bi for gi, bi in zip(g, net.back(w, xs, e))]
    return g


def mix_grads(net, data, batch, v, w, a, bugs):
    """(Σ_j J_v(x_j)ᵀ E_j, Σ_j ⟨z(v) − z(w), E_j⟩) for the output mixture
    (or, bug mix-flip, the parameter mixture v̄ = α v + (1 − α) w:
    (∇f(v̄), ⟨v − w, ∇f(v̄)⟩))."""
    if "mix-flip" in bugs:
        vbar = [a * p + (1 - a) * q for p, q in zip(v, w)]
        g = own_grad(net, data, batch, vbar, bugs)
        return g, sum((p - q) * gi for p, q, gi in zip(v, w, g))
    gv, dalpha = [Decimal(0)] * net.P, Decimal(0)
    for j in batch:
        xs, y = data[j]
        zv, zw = net.forward(v, xs)[1], net.forward(w, xs)[1]
        p = softmax([a * s + (1 - a) * q for s, q in zip(zv, zw)], bugs)
        sign = -1 if "ce-slope-sign" in bugs else 1
        e = [(pc - sign * (1 if c == y else 0)) / len(batch) for c, pc in enumerate(p)]
        gv = [gi + bi for gi, bi in zip(gv, net.back(v, xs, e))]
        dalpha += sum((s - q) * ec for s, q, ec in zip(zv, zw, e))
    return gv, dalpha


def check_derivatives(net, data, batch, v, w, a, gw, gv, dalpha):
    """α Gv = ∂L/∂v, dα = ∂L/∂α, gw = ∂f/∂w, by central differences."""
    h = FD_STEP

    def diff(f):
        return (f(h) - f(-h)) / (2 * h)
    L = lambda vv, ww, aa: mixture_loss(net, data, batch, vv, ww, aa)  # noqa: E731
    bound = Decimal("1e-30")
    for p in range(net.P):
        def vp(s, p=p):
            return L([x + (s if q == p else 0) for q, x in enumerate(v)], w, a)

        def wp(s, p=p):          # α = 1: the cross-entropy of z(w) alone
            return L([x + (s if q == p else 0) for q, x in enumerate(w)], w, 1)
        assert abs(diff(vp) - a * gv[p]) < bound, ("v", p)
        assert abs(diff(wp) - gw[p]) < bound, ("w", p)
    assert abs(diff(lambda s: L(v, w, a + s)) - dalpha) < bound, "alpha"


def run(spec, bugs=frozenset(), checks=None):
    """The run with the reference's records: (trace, w, v, alpha)."""
    m, alg = spec["model"], spec["algorithm"]
    net = Mlp(m["d"], m["h"], m["k"])
    data = [[([D(x) for x in xs], int(y)) for xs, y in zip(c["X"], c["y"])]
            for c in spec["problem"]["clients"]]
    hp = alg["hyperparameters"]
    eta, alpha0, eta_alpha = D(hp["eta"]), D(hp["alpha"]), D(hp["eta_alpha"])
    new_w = "mix-w-flip" in bugs        # configured: old (the round's w_i)
    # req: apfl.alg1.l1
    w = [D(x) for x in spec["init"]["w"]]
    v = [list(w) for _ in data]
    alpha = [alpha0] * len(data)
    trace = pg.Trace()
    # req: apfl.alg1.l2
    for t, r in enumerate(spec["schedule"]["rounds"]):
        owners = r.get("drawn", r["clients"]) if "drawn-batches" in bugs else r["clients"]
        plan = sorted(zip(owners, r["batches"]))
        trace.emit("round_begin", "train", t, None, None, "w", w)
        sent = {}
        # req: apfl.alg1.l3
        for i, steps in plan:
            # req: apfl.alg1.l10
            wi = list(w)
            trace.emit("client_begin", "train", t, i, 0, "w_local", wi)
            trace.emit("client_begin", "train", t, i, 0, "v", v[i])
            # req: apfl.alg1.l8
            for s, batch in enumerate(steps, start=1):
                a = alpha[i]
                gw = own_grad(net, data[i], batch, wi, bugs)
                # req: apfl.alg1.l5
                wi_new = [x - eta * g for x, g in zip(wi, gw)]
                wm = wi_new if new_w else wi
                # req: apfl.alg1.l4
                gv, dalpha = mix_grads(net, data[i], batch, v[i], wm, a, bugs)
                if checks is not None:
                    check_derivatives(net, data[i], batch, v[i], wm, a, gw, gv, dalpha)
                scale = 1 if "v-no-alpha" in bugs else a
                # req: apfl.alg1.l6
                v_new = [x - eta * scale * g for x, g in zip(v[i], gv)]
                trace.emit("step", "train", t, i, s, "w_local", wi_new)
                trace.emit("step", "train", t, i, s, "v", v_new)
                # req: apfl.alg1.l7
                x = a - (-1 if "alpha-sign" in bugs else 1) * eta_alpha * dalpha
                if checks is not None:
                    checks.append(x)
                alpha[i] = min(max(x, Decimal(0)), Decimal(1))
                trace.emit("note", "train", t, i, s, "alpha", [alpha[i]])
                wi, v[i] = wi_new, v_new
            trace.emit("client_end", "train", t, i, None, "w_local", wi)
            trace.emit("client_end", "train", t, i, None, "v", v[i])
            # req: apfl.alg1.l11, apfl.eq4
            trace.emit("note", "train", t, i, None, "v_bar",
                       [alpha[i] * p + (1 - alpha[i]) * q for p, q in zip(v[i], wi)])
            sent[i] = wi
        if "samples-weights" in bugs:
            n = {i: len(data[i]) for i in sent}
            c = {i: Decimal(n[i]) / Decimal(sum(n.values())) for i in sent}
        else:
            c = {i: Decimal(1) / Decimal(len(sent)) for i in sent}
        # req: apfl.alg1.l9
        w = [sum(c[i] * sent[i][p] for i in sorted(sent)) for p in range(net.P)]
        trace.emit("server", "train", t, None, None, "w", w)
    return trace, w, v, alpha


MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 2, "activation": "identity",
         "loss": "cross_entropy", "bias": True, "hidden_bias": True}
CLIENTS = [
    {"X": [[0.75, -0.4], [-0.55, 1.2], [1.3, 0.35]], "y": [0, 1, 1]},
    {"X": [[-1.05, 0.6], [0.45, 0.95], [0.2, -1.35], [-0.7, -0.25]], "y": [1, 0, 0, 1]},
    {"X": [[1.1, -0.85], [-0.3, 0.5], [0.65, 1.15], [-1.25, -0.6], [0.9, 0.15]],
     "y": [0, 0, 1, 1, 0]},
]
# W1 (2×2), b1 (2), W2 (2×2), b2 (2)
INIT = {"kind": "given",
        "w": [0.45, -0.3, 0.2, 0.65, 0.1, -0.15, 0.55, -0.4, -0.25, 0.35, 0.05, -0.2]}
ROUNDS = [{"clients": [0, 2], "drawn": [2, 0],
           "batches": [[[0, 1], [2]], [[1, 2], [0, 2]]]},
          {"clients": [0, 1], "drawn": [1, 0],
           "batches": [[[2, 0], [1]], [[0, 2], [1, 2]]]}]
HYPER = {"eta": 0.3, "alpha": 0.35, "eta_alpha": 0.6}


def make():
    vid = "apfl/worked/mlp-ce-output-drawn"
    algorithm = {"name": "apfl", "hyperparameters": HYPER,
                 "switches": {"apfl.alpha": "adaptive", "apfl.mix": "output"}}
    title = ("APFL, output mixing under softmax cross-entropy (mlp), adaptive α, "
             "drawn order unlike the clients")
    description = (
        "Logits z = W2 (W1 x + b1) + b2 (mlp d = h = k = 2, identity, biases), "
        "cross-entropy of softmax(α z(v) + (1 − α) z(w_i)); three clients (n = 3, "
        "4, 5), w⁰ given, α₀ = 0.35, η = 0.3, η_α = 0.6, apfl.alpha = adaptive, "
        "apfl.mix = output; U⁰ = {0, 2} drawn 2, 0; U¹ = {0, 1} drawn 1, 0; two "
        "steps per participation (batches[j] is clients[j]'s, not drawn[j]'s).")
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm, ROUNDS)
    raw = []
    result = run(spec, checks=raw)
    for x in raw:
        assert Decimal("1e-3") < x < 1 - Decimal("1e-3"), x
    for r in result[0].records:
        assert all(abs(x) < 3 for x in r["value"]), r
    # output mixing differs from parameter mixing on this model
    assert run(spec, {"mix-flip"})[2] != result[2]
    flags = ["apfl-mix", "apfl-v-scale", "apfl-alpha-update", "apfl-mix-uses-w",
             "aggregation-weights", "cross-entropy-slope", "schedule-drawn-order"]
    mutants = {"apfl-mix": ["mix-flip"],
               "apfl-v-scale": ["v-no-alpha"],
               "apfl-alpha-update": ["alpha-sign"],
               "apfl-mix-uses-w": ["mix-w-flip"],
               "aggregation-weights": ["samples-weights"],
               "cross-entropy-slope": ["softmax-unnormalised", "ce-slope-sign"],
               "schedule-drawn-order": ["drawn-batches"]}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result,
                              lambda bugs=frozenset(): run(spec, bugs),
                              lambda tr, w, v, a: (tr, w, v, a))
    prov = pg.provenance("independent", f"{NOTES} §6(c), §6(f) item 1 (output "
                         f"mixing, FedTorch issues #6, #16); {PAPER}; "
                         "docs/algorithms/apfl.md (apfl.mix)", GENERATOR)
    return "worked-mlp-ce-output-drawn.json", pg.vector(vid, title, prov, flags, spec,
                                                         TOL, exp)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [make])
