#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""PFLEGO golden vectors with the Adam server (pflego.server = adam), in
60-digit decimal arithmetic.

PFLEGO (Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848; the
round of shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2.4, steps
1-9) with step 8 replaced by the authors' default server optimiser (notes
§2.9 F3): JAX's optimizers.adam(step_size = ρ), b1 = 0.9, b2 = 0.999,
ε = 1e-8, the moments m, v starting at 0 and kept across rounds, the step
count s = t + 1 in round t (0-based):

    m ← (1 − b1) ĝ + b1 m,   v ← (1 − b2) ĝ² + b2 v,
    θ ← θ − ρ (m / (1 − b1^s)) / (√(v / (1 − b2^s)) + ε)     (per body entry)

(docs/algorithms/pflego.md, "pflego.server").  The last head step stays
plain SGD.  The square root (and the cross-entropy's exp and log) have no
rational values, so this generator computes in Python's decimal module
with 60 significant digits (exp, ln and sqrt correctly rounded at that
precision) and writes each value's correctly rounded double.  Every input
is taken at the exact value of the double the spec holds; b1, b2 and ε at
the decimal values the docs state (the reference's doubles of 0.9, 0.999
and 1e-8 differ from them by less than 1e-16 relatively, far inside the
tolerance).

Written independently of the C reference and of golden/pflego/
make_worked.py: the model, the round and Adam are coded here from the
notes and the docs.  Before writing, the generator runs its own code with
the SGD server on the notes' example C and asserts the notes' printed
values (12 digits), and asserts Adam's first step θ − ρ ĝ/(|ĝ| + ε).

The model: an mlp with d = 2, h = 2, k = 2, the identity activation, no
hidden bias and an output bias (logits z = W2 (W1 x) + b2), softmax
cross-entropy; the body θ = W1, the heads W_i = (W2, b2) (split
personal = head).  Four clients (N = 2, 3, 1, 4, so α_i = N_i/N all
differ), I = 4, r = 2, τ = 3 (two cheap head steps at β, then the joint
gradient and the last head step), ρ = 0.065, β = 0.135, three rounds
I_0 = {0, 1}, I_1 = {1, 3}, I_2 = {0, 2}.

  adam-code         the authors' code: seed head step ρ (I/r) G_i,
                    θ weights N_i / Σ_{I_t} N_j (sampled_normalised), Adam
  adam-exact-alpha  the unbiased head step ρ (I/r) α_i G_i, θ weights
                    α_i = N_i/N, Adam

    /usr/bin/python3 golden/pflego/make_adam.py [OUTDIR]
"""
import os
import sys
from decimal import Decimal, getcontext

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_golden as pg       # noqa: E402

getcontext().prec = 60

NOTES = "shared/spec notes-pflego-fedalt-fedsim-fedrep.md"
PAPER = ("Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848 (the seed "
         "004_…), the round of notes §2.4 (steps 1–9)")
GENERATOR = "golden/pflego/make_adam.py (60-digit decimal)"
B1, B2, EPS = Decimal("0.9"), Decimal("0.999"), Decimal("1e-8")
TOL = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference (libm exp, log, pow and sqrt, about 1 ulp each) "
             "against 60-digit decimal values rounded to the nearest double: "
             "three rounds of two cheap head steps, one joint gradient and "
             "one head step on at most 4 samples of a 10-parameter mlp, then "
             "an Adam step whose ratio m̂/(√v̂ + ε) has condition number "
             "below 10 because every |ĝ_p| stays above 1e-3 (asserted), so "
             "each θ entry moves by at most ρ = 0.065 with a relative error "
             "of a few ulps; the error stays below 1e-14 on values below 3, "
             "and every flagged bug moves some value by more than 1e3 times "
             "the tolerance.",
}


def D(x):
    """The exact value of the double x."""
    return Decimal(float(x))


class Mlp:
    """Logits z = W2 (W1 x) + b2 (identity activation, no hidden bias),
    softmax cross-entropy; θ laid out as W1 (h×d row-major), W2 (k×h
    row-major), b2 (k)."""

    def __init__(self, d, h, k):
        self.d, self.h, self.k = d, h, k
        self.P = h * d + k * h + k
        self.head = [0] * (h * d) + [1] * (k * h + k)

    def parts(self, x):
        d, h, k = self.d, self.h, self.k
        W1 = [x[j * d:(j + 1) * d] for j in range(h)]
        o = h * d
        W2 = [x[o + c * h:o + (c + 1) * h] for c in range(k)]
        return W1, W2, x[o + k * h:]

    def grad(self, x, data):
        """∇ of the mean over data of −log softmax(z)_y: with p the softmax
        and e = p − onehot(y), ∂W2 = e aᵀ, ∂b2 = e, ∂W1 = (W2ᵀ e) xᵀ."""
        d, h, k = self.d, self.h, self.k
        W1, W2, b2 = self.parts(x)
        gW1 = [[Decimal(0)] * d for _ in range(h)]
        gW2 = [[Decimal(0)] * h for _ in range(k)]
        gb2 = [Decimal(0)] * k
        n = len(data)
        for xs, y in data:
            a = [sum(W1[j][p] * xs[p] for p in range(d)) for j in range(h)]
            z = [sum(W2[c][j] * a[j] for j in range(h)) + b2[c] for c in range(k)]
            top = max(z)
            ex = [(zc - top).exp() for zc in z]
            total = sum(ex)
            e = [ex[c] / total - (1 if c == y else 0) for c in range(k)]
            for c in range(k):
                gb2[c] += e[c] / n
                for j in range(h):
                    gW2[c][j] += e[c] * a[j] / n
            for j in range(h):
                back = sum(W2[c][j] * e[c] for c in range(k))
                for p in range(d):
                    gW1[j][p] += back * xs[p] / n
        return [v for row in gW1 for v in row] + [v for row in gW2 for v in row] + gb2


def run(model, clients, w0, rounds, hp, sw, bugs=frozenset()):
    """The PFLEGO run with the reference's records.  clients: [(x, label)]
    lists; rounds: [(I_t, τ)].  Returns (trace, w, v)."""
    net = Mlp(model["d"], model["h"], model["k"])
    head, P, I = net.head, net.P, len(clients)
    rho, beta = D(hp["rho"]), D(hp["pflego.beta"])
    exact_alpha = (sw.get("pflego.head_step", "seed") == "exact_alpha") \
        != ("head-alpha-flip" in bugs)
    sampled = (sw.get("pflego.theta_weights", "global") == "sampled_normalised") \
        != ("theta-weights-flip" in bugs)
    adam = (sw.get("pflego.server", "sgd") == "adam") != ("server-sgd" in bugs)
    N = [len(c) for c in clients]
    trace = pg.Trace()
    w = list(w0)
    v = [list(w0) for _ in clients]
    m, s2 = [Decimal(0)] * P, [Decimal(0)] * P
    for t, (sel, tau) in enumerate(rounds):
        # steps 1-2: I_t sampled (given), θ_t sent to every sampled client
        scale = Decimal(1) if "no-ip-factor" in bugs else Decimal(I) / Decimal(len(sel))
        trace.emit("round_begin", "train", t, None, None, "w", w)
        acc = [Decimal(0)] * P
        # req: pflego.alg1.l1
        for i in sel:
            # req: pflego.alg1.l2
            x = [v[i][p] if head[p] else w[p] for p in range(P)]
            trace.emit("client_begin", "train", t, i, 0, "w_local", x)
            # req: pflego.alg1.l3, pflego.alg1.l4
            # steps 3-4: τ − 1 cheap full-batch head steps at β
            for q in range(1, tau):
                g = net.grad(x, clients[i])
                x = [xp - beta * gp if head[p] else xp
                     for p, (xp, gp) in enumerate(zip(x, g))]
                trace.emit("step", "train", t, i, q, "w_local", x)
            # req: pflego.alg1.l5
            # step 5: the joint gradient (G_i, g_i) at (θ_t, W̃_i)
            g = net.grad(x, clients[i])
            trace.emit("note", "train", t, i, tau, "g", g)
            # req: pflego.alg1.l6
            # step 6: the last head step, ρ (I/r) [α_i] G_i
            alpha = Decimal(N[i]) / Decimal(sum(N))
            lr = rho * scale * (alpha if exact_alpha else 1)
            x = [xp - lr * gp if head[p] else xp for p, (xp, gp) in enumerate(zip(x, g))]
            trace.emit("step", "train", t, i, tau, "w_local", x)
            v[i] = x
            trace.emit("client_end", "train", t, i, None, "v", x)
            trace.emit("note", "train", t, i, None, "body_passes", [1, 1])
            # step 7: the body gradient, weighted
            a = Decimal(N[i]) / Decimal(sum(N[j] for j in sel)) if sampled else alpha
            # req: pflego.alg1.l7
            acc = [ap + (0 if head[p] else a * gp) for p, (ap, gp) in enumerate(zip(acc, g))]
        # step 8: ĝ = (I/r) Σ a_i g_i, then the server step on the body
        # req: pflego.alg1.l8, pflego.prop1
        ghat = [scale * ap for ap in acc]
        trace.emit("note", "train", t, None, None, "g_hat", ghat)
        step = t + 1
        if "adam-moments-reset" in bugs:
            m, s2, step = [Decimal(0)] * P, [Decimal(0)] * P, 1
        for p in range(P):
            if head[p]:
                continue
            if not adam:
                w[p] = w[p] - rho * ghat[p]
                continue
            m[p] = (1 - B1) * ghat[p] + B1 * m[p]
            s2[p] = (1 - B2) * ghat[p] * ghat[p] + B2 * s2[p]
            if "adam-no-bias-correction" in bugs:
                mhat, vhat = m[p], s2[p]
            else:
                mhat, vhat = m[p] / (1 - B1 ** step), s2[p] / (1 - B2 ** step)
            w[p] = w[p] - rho * mhat / (vhat.sqrt() + EPS)
        trace.emit("server", "train", t, None, None, "w", w)
        # step 9: every client holds (θ_{t+1}, W_i)
        # req: pflego.alg1.l9
        v = [[vi[p] if head[p] else w[p] for p in range(P)] for vi in v]
    return trace, w, v


def data_of(spec):
    return [[([D(a) for a in xs], int(y)) for xs, y in zip(c["X"], c["y"])]
            for c in spec["problem"]["clients"]]


def replay(spec, bugs=frozenset()):
    """Run a pflego spec (mlp cross-entropy, identity, no hidden bias,
    output bias; full-batch given schedule) as written."""
    model = spec["model"]
    assert model["kind"] == "mlp" and model["activation"] == "identity"
    assert model.get("loss", "cross_entropy") == "cross_entropy"
    assert model.get("hidden_bias") is False and model.get("bias", True)
    assert spec["split"] == {"personal": ["head"]}
    alg = spec["algorithm"]
    clients = data_of(spec)
    rounds = []
    for r in spec["schedule"]["rounds"]:
        taus = {len(b) for b in r["batches"]}
        assert len(taus) == 1, taus
        for i, bs in zip(r["clients"], r["batches"]):
            assert all(b == list(range(len(clients[i]))) for b in bs)
        rounds.append((r["clients"], taus.pop()))
    w0 = [D(x) for x in spec["init"]["w"]]
    return run(model, clients, w0, rounds, alg["hyperparameters"],
               alg.get("switches", {}), frozenset(bugs))


def close(x, y, digits=12):
    return abs(float(x) - y) <= 0.6 * 10 ** -digits


def records(trace, event, name, rnd=None, client=None):
    return [r["value"] for r in trace.records if r["event"] == event
            and r["name"] == name and (rnd is None or r.get("round") == rnd)
            and (client is None or r.get("client") == client)]


def assert_notes_example_c():
    """This file's code with the SGD server on the notes' example C (§2.10:
    φ(x) = θx, logits W_1 (φ, 1), θ = 0.5, W_1 = [[0.2, 0.1], [0.4, 0.3]],
    client 1 = {(1, 0), (−1, 1)}, client 2 with 3 samples unsampled, I = 2,
    r = 1, τ = 2, β = 0.5, ρ = 0.1): the notes' printed values."""
    model = {"kind": "mlp", "d": 1, "h": 1, "k": 2}
    clients = [[([Decimal(1)], 0), ([Decimal(-1)], 1)],
               [([Decimal(1)], 0), ([Decimal(2)], 1), ([Decimal(-1)], 0)]]
    w0 = [D(x) for x in (0.5, 0.2, 0.4, 0.1, 0.3)]
    hp = {"rho": 0.1, "pflego.beta": 0.5}
    for sw, heads, theta in (
            ({"pflego.head_step": "exact_alpha"},
             (0.350872865905, 0.249127134095, 0.127854839092, 0.272145160908),
             0.502455960208),
            ({"pflego.theta_weights": "sampled_normalised"},
             (0.380407790512, 0.219592209488, 0.132353958622, 0.267646041378),
             0.506139900520)):
        trace, w, v = run(model, clients, w0, [([0], 2)], hp, sw)
        g = records(trace, "note", "g", 0, 0)[0]
        # (θ, W2_0, W2_1, b2_0, b2_1)
        want_g = (-0.030699502601, -0.246124371728, 0.246124371728,
                  -0.037492662748, 0.037492662748)
        assert all(close(a, b) for a, b in zip(g, want_g)), g
        assert all(close(a, b) for a, b in zip(v[0][1:], heads)), v[0]
        assert close(w[0], theta), w


def assert_adam_first_step(spec, trace):
    """Round 0's θ¹ = θ⁰ − ρ ĝ/(|ĝ| + ε) entry by entry (docs)."""
    rho = D(spec["algorithm"]["hyperparameters"]["rho"])
    w0 = records(trace, "round_begin", "w", 0)[0]
    ghat = records(trace, "note", "g_hat", 0)[0]
    w1 = records(trace, "server", "w", 0)[0]
    for p in range(4):
        want = w0[p] - rho * ghat[p] / (abs(ghat[p]) + EPS)
        assert abs(w1[p] - want) < Decimal("1e-50"), (p, w1[p], want)


MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 2, "activation": "identity",
         "loss": "cross_entropy", "bias": True, "hidden_bias": False}
SPLIT = {"personal": ["head"]}
CLIENTS = [
    {"X": [[0.85, -0.35], [-0.6, 1.15]], "y": [0, 1]},
    {"X": [[1.2, 0.45], [-0.95, -0.7], [0.3, 1.35]], "y": [1, 0, 1]},
    {"X": [[-1.1, 0.55]], "y": [0]},
    {"X": [[0.65, 0.9], [-0.4, -1.25], [1.45, -0.15], [-0.75, 0.6]], "y": [0, 1, 1, 0]},
]
# W1 (2×2), W2 (2×2), b2 (2)
INIT = {"kind": "given", "w": [0.55, -0.3, 0.25, 0.7, 0.4, -0.45, -0.2, 0.6, 0.15, -0.1]}
SETS = [[0, 1], [1, 3], [0, 2]]
TAU = 3
VARIANTS = {
    "adam-code": {"pflego.theta_weights": "sampled_normalised", "pflego.server": "adam"},
    "adam-exact-alpha": {"pflego.head_step": "exact_alpha", "pflego.server": "adam"},
}


def rounds_json():
    return [{"clients": S,
             "batches": [[list(range(len(CLIENTS[i]["y"])))] * TAU for i in S]}
            for S in SETS]


def make(variant):
    switches = VARIANTS[variant]
    vid = f"pflego/worked/{variant}"
    algorithm = {"name": "pflego",
                 "hyperparameters": {"rho": 0.065, "pflego.beta": 0.135},
                 "switches": switches}
    title = (f"PFLEGO with the Adam server ({variant}): softmax cross-entropy mlp, "
             "three rounds")
    description = (
        "Logits z = W2 (W1 x) + b2 (mlp d = h = k = 2, identity, no hidden bias, "
        "an output bias), cross-entropy; body θ = W1, heads (W2, b2); four "
        "clients (N = 2, 3, 1, 4), I = 4, r = 2, τ = 3 (two cheap head steps at "
        "β = 0.135), ρ = 0.065, I_0 = {0, 1}, I_1 = {1, 3}, I_2 = {0, 2}; "
        "pflego.server = adam (b1 = 0.9, b2 = 0.999, ε = 1e-8, moments from 0, "
        f"step count t + 1); switches {switches}.")
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         rounds_json(), split=SPLIT)
    result = replay(spec)
    trace = result[0]
    assert_adam_first_step(spec, trace)
    for t in range(len(SETS)):
        ghat = records(trace, "note", "g_hat", t)[0]
        assert all(abs(g) > Decimal("1e-3") for g in ghat[:4]), (t, ghat)
    for r in trace.records:
        assert all(abs(x) < 3 for x in r["value"]), r
    # Adam moves the run: the SGD server gives other numbers
    assert replay(spec, {"server-sgd"})[1] != result[1]
    flags = ["pflego-server-optimiser", "pflego-inverse-probability",
             "pflego-head-step", "pflego-theta-weights"]
    mutants = {"pflego-server-optimiser": ["server-sgd", "adam-no-bias-correction",
                                           "adam-moments-reset"],
               "pflego-inverse-probability": ["no-ip-factor"],
               "pflego-head-step": ["head-alpha-flip"],
               "pflego-theta-weights": ["theta-weights-flip"]}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result,
                              lambda bugs=frozenset(): replay(spec, bugs),
                              lambda tr, w, v: (tr, w, v))
    prov = pg.provenance("independent", f"{NOTES} §2.4 (steps 1–9), §2.9 (F1, F2, "
                         f"F3: the code's Adam server); docs/algorithms/pflego.md "
                         f"(pflego.server); {PAPER}", GENERATOR)
    return f"worked-{variant}.json", pg.vector(vid, title, prov, flags, spec, TOL, exp)


def main():
    assert_notes_example_c()
    pg.write_all(sys.argv, HERE, [lambda v=v: make(v) for v in VARIANTS])


if __name__ == "__main__":
    main()
