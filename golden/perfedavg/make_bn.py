#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, arXiv 2002.07948,
Alg. 1, the exact variant) on the mlp with batch normalisation in training
mode, in 60-digit decimal arithmetic: the golden vector of the exact
Hessian-vector product through the batch statistics.

Independence.  The C reference forms ∇²f(w; D″) v by the R-operator of its
compact BN backward (ref/models/mlp.c, bn_hvp).  Here nothing of that is
used: the gradient is golden/pflref_exact_fedbn.py's, whose BN backward
goes through the full Jacobian ∂x̂_b/∂a_c = (δ_bc − 1/m − x̂_b x̂_c/m)/s,
and its derivative along v is taken by forward-mode dual numbers
x + x′ϵ (ϵ² = 0) carried through that gradient (forward over reverse):
with w = w + vϵ, every operation propagates its derivative (products,
quotients, the square root s = √(s² + ε), exp of the softmax), so the ϵ
part of ∇f(w + vϵ) is exactly ∇²f(w) v, to 60 digits.  The relu decisions
(u > 0) read the real part; pflref_exact_fedbn.STATS keeps the smallest
|u| seen, asserted far from the kink.  Every product is also checked
against a central difference of the decimal gradient with step 10⁻²⁴
(agreement to 10⁻³⁰).

The loop is Per-FedAvg's as shared/spec notes §4 transcribe it and as
golden/pflref_exact_perfedavg.py emits it (the trajectory the C is held
to): per round, each user from w: step t reads batches 3(t−1), +1, +2 =
D, D′, D″; w̃ = w − α ∇f(w; D), q = ∇f(w̃; D′),
w ← w − β (q − α ∇²f(w; D″) q); the server's uniform mean; then θ_i =
w − α ∇f_i(w; D₁) on the post batches.  The running statistics are buffers
that this vector keeps with "bn.running": "frozen", so they stay at r_μ = 0,
r_v = 1 and are averaged unchanged.

Running statistics (bn-running-update).  Under bn.running = update
(torch's train(): every training-mode forward moves the module's buffers,
r ← (1 − ρ) r + ρ · batch statistic, r_v with the unbiased m/(m − 1) s²_B)
the step's three training passes each move the one model's buffers, w's:
the pass at w on D, the pass at w̃ on D′ (TsingZ0/PFLlib d832e76f6a23,
system/flcore/clients/clientperavg.py:64, after which :69-70 restore
parameters() and leave the buffers), and the Hessian-vector product's
forward at w on D″ (one forward under double backward); the server averages
the buffers with the parameters; the personalisation's pass at θ_i = w on
D₁ moves θ_i's.  The batch statistics are those of the forward here
(pflref_exact_fedbn.grad's μ_B, s²_B), independent of the C's.

  bn-relu-exact   two clients of 5 and 6 samples, d = 2, h = 3, one output,
                  (ŷ − y)², relu, ε = 1/64, batches of 3 (one of 2), two
                  rounds of two local steps, α = 1/16, β = 1/4.

  bn-running-update  the same problem and steps with bn.running = update
                  and ρ = 3/16 (distinct from α and β): the parameters'
                  trajectory is bn-relu-exact's (a training forward
                  normalises with the batch statistics), the buffers are
                  what this vector adds.

PFLlib's exchange (bn-pfllib-keep).  Under bn.aggregate = parameters_only
(TsingZ0/PFLlib d832e76f6a23 serverperavg.py:26 and :46 call
serverbase.py's send_models and aggregate_parameters): user i's
w^i_{k+1,0} is w_k's parameters with the running statistics its own model
last left (clientbase.py:67-69 set_parameters copies parameters() only;
INIT's before it first trains), w_{k+1}'s running statistics are the first
participant's (serverbase.py:138-150, deepcopy(uploaded_models[0])), the
parameters' mean as before, and the personalisation starts θ_i from w's
parameters with user i's own (train_one_step on self.model,
clientperavg.py:83-99).  Bugs start-global-buffers, start-w0-buffers
(bn-own-buffers), global-buffers-averaged, global-buffers-last
(bn-global-buffers), post-global-buffers (the personalisation from w's
running statistics: perfedavg-bn-passes).

  bn-pfllib-keep  bn-running-update's problem (ρ = 5/32) on three rounds
                  of two local steps: both users in round 0, user 1 alone
                  in round 1, user 0 alone in round 2, under
                  bn.aggregate = parameters_only (given in the switches;
                  the paper's exact variant otherwise).

Bugs: fo-step, hessian-sign, hessian-at-tilde, hessian-on-d1 (the flag
perfedavg-hessian-term, as pflref_exact_perfedavg.py), hvp-no-stat (the
Hessian-vector product with the batch statistics μ_B, s held constant
along v: the R-operator of a layer whose statistics are detached) and the
BN gradient's no-stat-backward (bn-backward); with bn.running = update,
bn-no-d1-move, bn-no-d2-move, bn-no-post-move (perfedavg-bn-passes: a pass
that does not move the buffers) and pflref_exact_fedbn's momentum-flipped,
running-var-flipped (bn-running-update).

    /usr/bin/python3 golden/perfedavg/make_bn.py [OUTDIR]
"""
import os
import sys
from decimal import Decimal

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_fedbn as fb       # noqa: E402
import pflref_golden as pg            # noqa: E402

D0 = Decimal(0)
MUTANTS = {
    "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-at-tilde",
                               "hessian-on-d1", "hvp-no-stat"],
    "bn-backward": ["no-stat-backward"],
}
BN_MUTANTS = {
    "perfedavg-bn-passes": ["bn-no-d1-move", "bn-no-d2-move",
                            "bn-no-post-move"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped"],
    "perfedavg-hessian-term": ["hessian-sign", "hessian-at-tilde"],
}
KEEP_MUTANTS = {
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
    "perfedavg-bn-passes": ["bn-no-d1-move", "bn-no-d2-move",
                            "bn-no-post-move", "post-global-buffers"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped"],
}
GENERATOR = ("golden/perfedavg/make_bn.py (60-digit decimals; dual numbers "
             "through pflref_exact_fedbn.py's Jacobian-form gradient)")
SOURCE = (f"{pg.NOTES} §4 (Per-FedAvg, exact variant); shared/spec "
          "notes-fedbn-fedfomo.md §1.3 (the BN layer in training mode); "
          "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1")
TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against 60-digit decimals of the binary "
             "inputs: two rounds of two local steps, each two gradients and "
             "one Hessian-vector product of a 25-parameter BN mlp on 2 or 3 "
             "samples (the R-operator's sums over the batch of terms below "
             "about 10, divided by s ≥ 1/8), then one personalisation step; "
             "some hundred roundings per value, so the error stays below "
             "1e-14 relative; every flagged bug moves some value by more "
             "than 1e3 times the tolerance",
}


class Dual:
    """x + x′ϵ with ϵ² = 0, over Decimal."""
    __slots__ = ("re", "du")

    def __init__(self, re, du=D0):
        self.re, self.du = re, du

    @staticmethod
    def of(x):
        return x if isinstance(x, Dual) else Dual(Decimal(x), D0)

    def __add__(self, o):
        o = Dual.of(o)
        return Dual(self.re + o.re, self.du + o.du)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.re, -self.du)

    def __sub__(self, o):
        o = Dual.of(o)
        return Dual(self.re - o.re, self.du - o.du)

    def __rsub__(self, o):
        return Dual.of(o) - self

    def __mul__(self, o):
        o = Dual.of(o)
        return Dual(self.re * o.re, self.re * o.du + self.du * o.re)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Dual.of(o)
        return Dual(self.re / o.re,
                    (self.du * o.re - self.re * o.du) / (o.re * o.re))

    def __rtruediv__(self, o):
        return Dual.of(o) / self

    def __pow__(self, n):
        assert n == 2, n
        return self * self

    def sqrt(self):
        r = self.re.sqrt()
        return Dual(r, self.du / (2 * r))

    def exp(self):
        e = self.re.exp()
        return Dual(e, e * self.du)

    def __abs__(self):
        return abs(self.re)

    def _cmp(self, o):
        return self.re - (o.re if isinstance(o, Dual) else Decimal(o))

    def __gt__(self, o):
        return self._cmp(o) > 0

    def __lt__(self, o):
        return self._cmp(o) < 0

    def __ge__(self, o):
        return self._cmp(o) >= 0

    def __le__(self, o):
        return self._cmp(o) <= 0


class Detached:
    """fb.forward with the batch statistics μ_B, s held constant along v
    (their ϵ parts dropped): the bug hvp-no-stat."""

    def __enter__(self):
        self.orig = fb.forward

        def forward(M, w, X, bugs):
            a, xh, s, mu, var, u, phi, z = self.orig(M, w, X, bugs)
            m, h = len(X), M.h
            s = [Dual(x.re) if isinstance(x, Dual) else x for x in s]
            mu = [Dual(x.re) if isinstance(x, Dual) else x for x in mu]
            xh = [[(a[j][q] - mu[q]) / s[q] for q in range(h)] for j in range(m)]
            u = [[w[M.at["gamma"] + q] * xh[j][q] + w[M.at["beta"] + q]
                  for q in range(h)] for j in range(m)]
            phi = [[(x if x > 0 else D0) if M.relu else x for x in row]
                   for row in u]
            z = [[sum((w[M.at["W2"] + o * h + q] * phi[j][q] for q in range(h)), D0)
                  + (w[M.at["b2"] + o] if M.bias else D0) for o in range(M.k)]
                 for j in range(m)]
            return a, xh, s, mu, var, u, phi, z

        fb.forward = forward
        return self

    def __exit__(self, *exc):
        fb.forward = self.orig


def grad(M, w, data, idx, bugs):
    X, Y = data
    return fb.grad(M, w, [X[i] for i in idx], [Y[i] for i in idx], bugs)[0]


def move(M, w, at, data, idx, bugs, on):
    """bn.running = update (on): w's running statistics moved, in place, by
    the batch statistics of the training forward at the point `at` on idx
    (torch's BatchNorm in train(): unbiased r_v)."""
    if not on:
        return
    X, Y = data
    _, mu, var, m = fb.grad(M, at, [X[i] for i in idx], [Y[i] for i in idx],
                            bugs)
    fb.running(M, w, mu, var, m, True, bugs)


def hvp(M, w, v, data, idx, bugs):
    """∇²f(w; idx) v: the ϵ part of the gradient at w + vϵ."""
    wd = [Dual(a, b) for a, b in zip(w, v)]
    if "hvp-no-stat" in bugs:
        with Detached():
            g = grad(M, wd, data, idx, bugs)
    else:
        g = grad(M, wd, data, idx, bugs)
    out = [x.du if isinstance(x, Dual) else D0 for x in g]
    if not bugs:   # a central difference of the decimal gradient agrees
        step = Decimal(10) ** -24
        gp = grad(M, [a + step * b for a, b in zip(w, v)], data, idx, bugs)
        gm = grad(M, [a - step * b for a, b in zip(w, v)], data, idx, bugs)
        for p, x in enumerate(out):
            fd = (gp[p] - gm[p]) / (2 * step)
            assert abs(fd - x) < Decimal(10) ** -30, (p, fd, x)
    return out


def axpy(x, c, y):
    return [a + c * b for a, b in zip(x, y)]


def replay(spec, bugs=frozenset()):
    """Per-FedAvg (exact) on the spec's given schedule: (trace, w, v, None)."""
    M = fb.Model(spec["model"])
    hp = spec["algorithm"]["hyperparameters"]
    alpha, beta = fb.dec(hp["alpha"]), fb.dec(hp["beta"])
    data = [([[fb.dec(x) for x in row] for row in c["X"]],
             [fb.dec(y) for y in c["y"]]) for c in spec["problem"]["clients"]]
    w = fb.initial(M, spec["init"])
    w0 = list(w)
    sw = spec["algorithm"].get("switches", {})
    upd = sw.get("bn.running", "update") == "update"
    # bn.aggregate = parameters_only: each user's own running statistics
    B = (range(M.at["r_mu"], M.at["r_v"] + M.h)
         if sw.get("bn.aggregate", "average") == "parameters_only" else ())
    own = [list(w0) for _ in spec["problem"]["clients"]]

    def with_own(x, src):
        x = list(x)
        for p in B:
            x[p] = src[p]
        return x
    trace = pg.Trace()
    sched = spec["schedule"]
    for t, r in enumerate(sched["rounds"]):
        trace.emit("round_begin", "train", t, None, None, "w", w)
        local = []
        for i, batches in sorted(zip(r["clients"], r["batches"])):
            wi = list(w)
            if "start-global-buffers" not in bugs:     # set_parameters
                wi = with_own(wi, w0 if "start-w0-buffers" in bugs else own[i])
            trace.emit("client_begin", "train", t, i, 0, "w_local", wi)
            for s in range(1, len(batches) // 3 + 1):
                D, D1, D2 = batches[3 * s - 3:3 * s]
                if "hessian-on-d1" in bugs:
                    D2 = D1
                g = grad(M, wi, data[i], D, bugs)
                move(M, wi, list(wi), data[i], D, bugs, upd)  # pass at w on D
                w_tilde = axpy(wi, -alpha, g)
                trace.emit("step", "train", t, i, s, "w_tilde", w_tilde)
                q = grad(M, w_tilde, data[i], D1, bugs)
                # the pass at w̃ on D′ moves the module's (w's) buffers
                move(M, wi, w_tilde, data[i], D1, bugs,
                     upd and "bn-no-d1-move" not in bugs)
                center = w_tilde if "hessian-at-tilde" in bugs else wi
                hv = hvp(M, center, q, data[i], D2, bugs)  # ∇²f(w; D″) q
                # the product's forward at w on D″
                move(M, wi, list(center), data[i], D2, bugs,
                     upd and "bn-no-d2-move" not in bugs)
                trace.emit("note", "train", t, i, s, "hvp", hv)
                if "fo-step" in bugs:
                    step = q
                else:
                    sign = -1 if "hessian-sign" in bugs else 1
                    step = [a - sign * alpha * b for a, b in zip(q, hv)]
                wi = axpy(wi, -beta, step)
                trace.emit("step", "train", t, i, s, "w_local", wi)
            trace.emit("client_end", "train", t, i, None, "w_local", wi)
            local.append(wi)
            own[i] = list(wi)
        w = [sum((x[p] for x in local), D0) / len(local) for p in range(M.P)]
        if B and local and "global-buffers-averaged" not in bugs:
            # deepcopy(uploaded_models[0]): the first participant's
            w = with_own(w, local[-1 if "global-buffers-last" in bugs else 0])
        trace.emit("server", "train", t, None, None, "w", w)
    thetas = []
    for i, batches in enumerate(sched["post"]):
        theta = list(w)
        if "post-global-buffers" not in bugs:   # train_one_step's self.model
            theta = with_own(theta, own[i])
        trace.emit("client_begin", "finetune", None, i, 0, "theta", theta)
        g = grad(M, theta, data[i], batches[0], bugs)
        move(M, theta, list(theta), data[i], batches[0], bugs,
             upd and "bn-no-post-move" not in bugs)
        theta = axpy(theta, -alpha, g)
        trace.emit("step", "finetune", None, i, 1, "theta", theta)
        trace.emit("client_end", "finetune", None, i, None, "theta", theta)
        thetas.append(theta)
    return trace, w, thetas, None


MODEL = {"kind": "mlp", "d": 2, "h": 3, "k": 1, "activation": "relu",
         "loss": "squared", "bias": True, "hidden_bias": True,
         "bn": True, "bn_eps": 0.015625, "bn_momentum": 0.1}
CLIENTS = [
    {"X": [[1.0, 0.5], [-0.5, 1.5], [2.0, -1.0], [0.25, 0.75], [-1.25, -0.5]],
     "y": [1.25, 0.5, 2.0, -0.75, 0.25]},
    {"X": [[0.5, 1.0], [1.5, 0.5], [-1.0, -0.5], [0.25, 2.0], [0.75, -1.5],
           [-0.25, 0.25]],
     "y": [-0.75, 0.25, 1.0, -1.5, 0.5, 1.75]},
]
# W1 (3×2), b1, γ, β, r_μ = 0, r_v = 1, w2 (1×3), b2
INIT = [0.5, -0.25, 0.375, 0.75, -0.625, 0.5,
        0.125, -0.125, 0.25,
        1.0, 0.75, 1.25,
        0.25, -0.5, 0.375,
        0.0, 0.0, 0.0,
        1.0, 1.0, 1.0,
        0.625, -0.5, 0.75,
        0.25]
ROUNDS = [
    {"clients": [0, 1],
     "batches": [[[0, 1, 2], [2, 3, 4], [0, 3, 4], [1, 2, 4], [0, 1, 3], [1, 3, 4]],
                 [[0, 1, 2], [3, 4, 5], [1, 2, 5], [0, 3, 4], [2, 4, 5], [0, 1]]]},
    {"clients": [0, 1],
     "batches": [[[1, 3, 4], [0, 2, 3], [0, 1, 4], [2, 3, 4], [0, 1, 2], [0, 3, 4]],
                 [[2, 3, 5], [0, 1, 4], [1, 3, 5], [0, 2, 4], [3, 4, 5], [1, 2, 5]]]},
]
POST = [[[0, 2, 4]], [[1, 3, 5]]]


def bn_relu_exact():
    vid = "perfedavg/worked/bn-relu-exact"
    spec = pg.given_spec(
        "Per-FedAvg (exact) on the mlp with batch normalisation", None,
        MODEL, CLIENTS, {"kind": "given", "w": INIT},
        {"name": "perfedavg", "hyperparameters": {"alpha": 0.0625,
                                                  "beta": 0.25},
         "switches": {"bn.running": "frozen"}},
        ROUNDS, post=POST)
    spec["description"] = (
        "Two clients of 5 and 6 samples, d = 2, h = 3 relu units behind a "
        "training-mode BN layer (ε = 1/64), one output, (ŷ − y)²; Per-FedAvg "
        "exact, α = 1/16, β = 1/4, two rounds of two local steps on batches "
        "of 3 (one of 2), then one personalisation step: every step's "
        "Hessian-vector product goes through the batch statistics.")
    fb.STATS["min_u"] = None
    result = replay(spec)
    assert fb.STATS["min_u"] > Decimal("0.01"), fb.STATS["min_u"]
    flags = list(MUTANTS)
    exp = pg.checked_expected(
        vid, TOL, flags, MUTANTS, result,
        lambda bugs=frozenset(): replay(spec, frozenset(bugs)),
        lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "worked-bn-relu-exact.json", pg.vector(
        vid, "Per-FedAvg (exact) on the BN mlp: Hessian-vector products "
        "through the batch statistics", prov, flags, spec, TOL, exp)


def bn_running_update():
    vid = "perfedavg/worked/bn-running-update"
    model = dict(MODEL, bn_momentum=0.1875)
    spec = pg.given_spec(
        "Per-FedAvg (exact) on the mlp with batch normalisation, running "
        "statistics moved by every training pass", None,
        model, CLIENTS, {"kind": "given", "w": INIT},
        {"name": "perfedavg", "hyperparameters": {"alpha": 0.0625,
                                                  "beta": 0.25}},
        ROUNDS, post=POST)
    spec["description"] = (
        "Two clients of 5 and 6 samples, d = 2, h = 3 relu units behind a "
        "training-mode BN layer (ε = 1/64, momentum ρ = 3/16), one output, "
        "(ŷ − y)²; Per-FedAvg exact, α = 1/16, β = 1/4, two rounds of two "
        "local steps on batches of 3 (one of 2), then one personalisation "
        "step; bn.running = update (the default): the running statistics "
        "r_μ, r_v (unbiased) of w move at each training pass of a step (at "
        "w on D, at w̃ on D′, the Hessian-vector product's forward at w on "
        "D″), are averaged by the server, and θ_i's move at the "
        "personalisation's pass.")
    fb.STATS["min_u"] = None
    result = replay(spec)
    assert fb.STATS["min_u"] > Decimal("0.01"), fb.STATS["min_u"]
    # the frozen run is another: the buffers did move
    frozen = pg.given_spec("", None, model, CLIENTS,
                           {"kind": "given", "w": INIT},
                           {"name": "perfedavg", "switches":
                            {"bn.running": "frozen"}, "hyperparameters":
                            spec["algorithm"]["hyperparameters"]},
                           ROUNDS, post=POST)
    assert replay(frozen)[1] != result[1]
    flags = list(BN_MUTANTS)
    exp = pg.checked_expected(
        vid, TOL, flags, BN_MUTANTS, result,
        lambda bugs=frozenset(): replay(spec, frozenset(bugs)),
        lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "worked-bn-running-update.json", pg.vector(
        vid, "Per-FedAvg (exact) on the BN mlp: the running statistics "
        "moved by the D, D′ and D″ passes and the personalisation's", prov,
        flags, spec, TOL, exp)


KEEP_ROUNDS = [
    ROUNDS[0],
    {"clients": [1],
     "batches": [[[2, 3, 5], [0, 1, 4], [1, 3, 5], [0, 2, 4], [3, 4, 5],
                  [1, 2, 5]]]},
    {"clients": [0],
     "batches": [[[1, 3, 4], [0, 2, 3], [0, 1, 4], [2, 3, 4], [0, 1, 2],
                  [0, 3, 4]]]},
]


def bn_pfllib_keep():
    vid = "perfedavg/worked/bn-pfllib-keep"
    model = dict(MODEL, bn_momentum=0.15625)
    alg = {"name": "perfedavg", "hyperparameters": {"alpha": 0.0625,
                                                    "beta": 0.25},
           "switches": {"bn.aggregate": "parameters_only"}}
    spec = pg.given_spec(
        "Per-FedAvg (exact) on the mlp with batch normalisation, each "
        "user keeping its own running statistics (bn.aggregate = "
        "parameters_only, PFLlib)", None,
        model, CLIENTS, {"kind": "given", "w": INIT}, alg, KEEP_ROUNDS,
        post=POST)
    spec["description"] = (
        "Two clients of 5 and 6 samples, d = 2, h = 3 relu units behind a "
        "training-mode BN layer (ε = 1/64, momentum ρ = 5/32), one output, "
        "(ŷ − y)²; Per-FedAvg exact, α = 1/16, β = 1/4, two local steps per "
        "participation, rounds {0, 1}, {1}, {0}, then one personalisation "
        "step; bn.running = update and bn.aggregate = parameters_only "
        "(PFLlib's send_models and aggregate_parameters: parameters() "
        "only): a user's w^i_{k+1,0} has w_k's parameters and the running "
        "statistics its own model last left (init.w's before it first "
        "trains), w_{k+1} the parameters' mean and the first participant's "
        "running statistics, and θ_i starts from w's parameters with user "
        "i's own.")
    fb.STATS["min_u"] = None
    result = replay(spec)
    assert fb.STATS["min_u"] > Decimal("0.01"), fb.STATS["min_u"]
    avg = dict(spec, algorithm=dict(alg, switches={}))
    assert replay(avg)[1] != result[1]
    flags = list(KEEP_MUTANTS)
    exp = pg.checked_expected(
        vid, TOL, flags, KEEP_MUTANTS, result,
        lambda bugs=frozenset(): replay(spec, frozenset(bugs)),
        lambda trace, w, v, alpha: (trace, w, v))
    source = (SOURCE + "; TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/"
              "serverperavg.py:26, :46 (send_models, aggregate_parameters), "
              "clientbase.py:67-69 (set_parameters: parameters() only), "
              "serverbase.py:138-150 (deepcopy of uploaded_models[0]), "
              "clients/clientperavg.py:83-99 (train_one_step on self.model)")
    prov = pg.provenance("independent", source, GENERATOR)
    return "worked-bn-pfllib-keep.json", pg.vector(
        vid, "Per-FedAvg (exact) on the BN mlp under bn.aggregate = "
        "parameters_only: each user's own running statistics", prov,
        flags, spec, TOL, exp)


MAKERS = [bn_relu_exact, bn_running_update, bn_pfllib_keep]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
