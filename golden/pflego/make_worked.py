#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""PFLEGO golden vectors (Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv
2202.09848; shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2).

Example B (notes §2.10): the scalar network ŷ = w_i·(θ·x) (an mlp with
d = h = k = 1, identity activation, no biases: W1 = θ the body, W2 = w_i
the head), ½(ŷ − y)²; clients {(1,2),(2,3)}, {(1,−1),(2,−1),(3,−2)},
{(1,1)}, {(2,1),(1,0)}; I = 4, r = 2, τ = 3, β = 0.1, ρ = 0.05, θ⁰ = 1,
w⁰ = 0.5; I_0 = {1,2}, I_1 = {2,4} (0-based {0,1}, {1,3}); SGD server.
Three variants, each in exact rational arithmetic (pflref_exact_pfl.py):
  exact-alpha   pflego.head_step = exact_alpha (α_i in the last head step)
  seed          the seed's and the code's head step ρ (I/r) G_i
  code          the authors' code: seed head step and θ weights
                N_i/Σ_{I_t} N_j (pflego.theta_weights = sampled_normalised)

Example C (notes §2.10): softmax cross-entropy with the code's bias-column
layout: φ(x) = (θx, 1), θ = 0.5, W_1 = [[0.2, 0.1], [0.4, 0.3]] (rows the
classes; columns feature and bias: an mlp with d = h = 1, k = 2, identity
activation, no hidden bias, an output bias), client 1 = {(1, 0), (−1, 1)}
(x, label), client 2 has 3 samples and is not sampled (α_1 = 2/5), I = 2,
r = 1, τ = 2, β = 0.5, ρ = 0.1.  Cross-entropy has no rational values, so
this generator evaluates it in 60-digit decimal arithmetic (Python's
decimal module: exp and ln correctly rounded at that precision) and writes
each value's correctly rounded double.  Two variants: exact-alpha
(exact_alpha, global θ weights) and code (seed head step, sampled-
normalised weights).

spread-seed-global, spread-exact-alpha-sampled: ρ = 0.065, β = 0.135, client
sizes 2, 3, 1, 4, two rounds, both values of each switch (golden/coincidences.py).
spread-seed-global-drawn: a fifth client (n = 3) and I_1 = {1, 3, 4} drawn by
the sampler as [4, 3, 1] (see S_DRAWN_ROUNDS).

Every generator asserts the notes' published numbers before writing.

    /usr/bin/python3 golden/pflego/make_worked.py [OUTDIR]
"""
import os
import sys
from decimal import Decimal, getcontext

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px        # noqa: E402
import pflref_exact_pfl as pp    # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = "shared/spec notes-pflego-fedalt-fedsim-fedrep.md"
PAPER = ("Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848 (the seed "
         "004_…), the round of notes §2.4 (steps 1–9)")
TOL_B = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: two rounds of at most 3 head updates and one "
             "body gradient per client, on magnitudes below 10; each update "
             "adds a few roundings and the cheap steps are contractions "
             "(β·mean((θx)²) < 2), so the error stays below 1e-14; every "
             "flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}
TOL_C = {
    "atol": 1e-14,
    "rtol": 1e-13,
    "basis": "fp64 reference (exp and log of libm, about 1 ulp each) against "
             "60-digit decimal values rounded to the nearest double: one "
             "cheap step, one joint gradient and one head step on two "
             "samples, O(10) correctly rounded operations on magnitudes "
             "below 1, so the reference stays within 1e-15 of the true "
             "values; every flagged bug moves some value by more than 1e3 "
             "times the tolerance.",
}

B_MODEL = {"kind": "mlp", "d": 1, "h": 1, "k": 1, "loss": "half_squared",
           "activation": "identity", "bias": False}
B_CLIENTS = [{"X": [[1.0], [2.0]], "y": [2.0, 3.0]},
             {"X": [[1.0], [2.0], [3.0]], "y": [-1.0, -1.0, -2.0]},
             {"X": [[1.0]], "y": [1.0]},
             {"X": [[2.0], [1.0]], "y": [1.0, 0.0]}]
B_INIT = {"kind": "given", "w": [1.0, 0.5]}          # (θ, w) = (W1, W2)
SPLIT = {"personal": ["head"]}


def close(x, y, digits=10):
    return abs(float(x) - y) <= 0.6 * 10 ** -digits


def full_batches(n, tau):
    return [list(range(n)) for _ in range(tau)]


def rounds_of(clients, sets, tau):
    return [{"clients": S, "batches": [full_batches(len(clients[i]["y"]), tau) for i in S]}
            for S in sets]


def records(trace, event, name, rnd=None, client=None):
    return [r["value"] for r in trace.records if r["event"] == event
            and r["name"] == name and (rnd is None or r.get("round") == rnd)
            and (client is None or r.get("client") == client)]


# ---------------------------------------------------------------- Example B

B_VARIANTS = {
    "exact-alpha": ({"pflego.head_step": "exact_alpha"},
                    (1.019921875, -0.3746666667, 1.056024802035),
                    (1.059707310198, (1.019921875, -0.565420348044, 0.5, 0.437435492447))),
    "seed": ({},
             (1.1359375, -0.4694814815, 1.056024802035),
             (1.057600081475, (1.1359375, -0.593390253082, 0.5, 0.424251638971))),
    "code": ({"pflego.theta_weights": "sampled_normalised"},
             (1.1359375, -0.4694814815, 1.089639683256),
             (1.090677971886, (1.1359375, -0.579288462035, 0.5, 0.413303046110))),
}
B_FLAGS = {
    "exact-alpha": (["pflego-inverse-probability", "pflego-head-step",
                     "pflego-theta-weights", "local-step-count", "pflego-body-passes"],
                    {"pflego-inverse-probability": ["no-ip-factor"],
                     "pflego-head-step": ["head-alpha-flip", "head-step-beta"],
                     "pflego-theta-weights": ["theta-weights-flip"],
                     "local-step-count": ["cheap-steps-tau"],
                     "pflego-body-passes": ["features-per-step"]}),
    "seed": (["pflego-inverse-probability", "pflego-head-step", "pflego-theta-weights",
              "pflego-body-passes"],
             {"pflego-inverse-probability": ["no-ip-factor"],
              "pflego-head-step": ["head-alpha-flip"],
              "pflego-theta-weights": ["theta-weights-flip"],
              "pflego-body-passes": ["features-per-step"]}),
    "code": (["pflego-theta-weights", "pflego-inverse-probability"],
             {"pflego-theta-weights": ["theta-weights-flip"],
              "pflego-inverse-probability": ["no-ip-factor"]}),
}


def example_b(variant):
    switches, r0, r1 = B_VARIANTS[variant]
    vid = f"pflego/worked/notes-b-{variant}"
    algorithm = {"name": "pflego",
                 "hyperparameters": {"rho": 0.05, "pflego.beta": 0.1}}
    if switches:
        algorithm["switches"] = switches
    title = (f"PFLEGO worked example B ({variant}): θ¹ = {r0[2]}, θ² = {r1[0]}")
    description = (
        "ŷ = w_i·(θ·x) (mlp d = h = k = 1, identity, no biases), ½(ŷ − y)², "
        "four clients (n = 2, 3, 1, 2; α = N_i/N), I = 4, r = 2, τ = 3 (two "
        "cheap full-batch head steps at β = 0.1 on the cached features, then "
        "the joint gradient and the last head step), ρ = 0.05, θ⁰ = 1, "
        "w⁰ = 0.5, I_0 = {0, 1}, I_1 = {1, 3}, SGD server.")
    spec = pg.given_spec(title, description, B_MODEL, B_CLIENTS, B_INIT, algorithm,
                         rounds_of(B_CLIENTS, [[0, 1], [1, 3]], 3), split=SPLIT)

    def run(bugs=px.NO_BUGS):
        w, v, trace = pp.replay(spec, frozenset(bugs))
        return trace, w, v

    trace, w, v = result = run()
    # the notes' numbers
    c0 = records(trace, "step", "w_local", 0, 0)
    assert close(c0[0][1], 0.775) and close(c0[1][1], 0.98125), c0
    g0 = records(trace, "note", "g", 0, 0)[0]
    assert close(g0[0], -1.51787109375) and close(g0[1], -1.546875), g0
    c1 = records(trace, "step", "w_local", 0, 1)
    assert close(c1[0][1], -0.0333333333) and close(c1[1][1], -0.3177777778), c1
    g1 = records(trace, "note", "g", 0, 1)[0]
    assert close(g1[0], -0.4820806584) and close(g1[1], 1.5170370370), g1
    heads0 = [records(trace, "client_end", "v", 0, i)[0][1] for i in (0, 1)]
    assert close(heads0[0], r0[0]) and close(heads0[1], r0[1]), heads0
    theta = [x[0] for x in records(trace, "server", "w")]
    assert close(theta[0], r0[2], 12) and close(theta[1], r1[0], 12), theta
    for got, want in zip(v, r1[1]):
        assert close(got[1], want, 12), (got, want)
    assert all(p == [1, 1] for p in records(trace, "note", "body_passes"))
    flags, mutants = B_FLAGS[variant]
    exp = pg.checked_expected(vid, TOL_B, flags, mutants, result, run,
                              lambda trace, w, v: (trace, w, v))
    prov = pg.provenance("independent", f"{NOTES} §2.4, §2.9 (F1, F2), §2.10 "
                         f"(example B, {variant}); {PAPER}",
                         "golden/pflego/make_worked.py (exact fractions, "
                         "pflref_exact_pfl.py)")
    return f"worked-notes-b-{variant}.json", pg.vector(vid, title, prov, flags, spec,
                                                       TOL_B, exp)


# ---------------------------------------------------------------- Example C

getcontext().prec = 60
C_MODEL = {"kind": "mlp", "d": 1, "h": 1, "k": 2, "activation": "identity",
           "hidden_bias": False, "bias": True}
C_CLIENTS = [{"X": [[1.0], [-1.0]], "y": [0, 1]},
             {"X": [[0.25], [-0.75], [1.5]], "y": [1, 0, 1]}]
C_INIT = {"kind": "given", "w": [0.5, 0.2, 0.4, 0.1, 0.3]}   # θ, W2 (2×1), b2 (2)


def D(x):
    return Decimal(float(x))     # the exact value of the double


def ce_grad(x, data):
    """Loss, ∂/∂(θ, W2, b2) of the mean cross-entropy on `data` at
    x = [θ, W2_0, W2_1, b2_0, b2_1]: z_c = W2_c (θ x) + b2_c."""
    th, W, b = x[0], x[1:3], x[3:5]
    g = [Decimal(0)] * 5
    loss = Decimal(0)
    n = len(data)
    for xi, y in data:
        phi = th * xi
        z = [W[c] * phi + b[c] for c in range(2)]
        m = max(z)
        e = [(zc - m).exp() for zc in z]
        s = sum(e)
        p = [ec / s for ec in e]
        loss += (s.ln() + m - z[y]) / n
        for c in range(2):
            err = p[c] - (1 if c == y else 0)
            g[1 + c] += err * phi / n
            g[3 + c] += err / n
            g[0] += err * W[c] * xi / n
    return loss, g


def example_c_run(variant, bugs=frozenset()):
    """One PFLEGO round of example C in decimal arithmetic; the trace has
    the reference's records."""
    head_alpha = (variant == "exact-alpha") != ("head-alpha-flip" in bugs)
    sampled = (variant == "code") != ("theta-weights-flip" in bugs)
    beta, rho = D(0.5), D(0.1)
    I, r = 2, 1
    scale = Decimal(1) if "no-ip-factor" in bugs else Decimal(I) / Decimal(r)
    data = [(D(x[0]), y) for x, y in zip(C_CLIENTS[0]["X"], C_CLIENTS[0]["y"])]
    alpha = Decimal(2) / Decimal(5)
    w0 = [D(x) for x in C_INIT["w"]]
    head = [0, 1, 1, 1, 1]
    trace = pg.Trace()
    trace.emit("round_begin", "train", 0, None, None, "w", w0)
    x = list(w0)
    trace.emit("client_begin", "train", 0, 0, 0, "w_local", x)
    _, g = ce_grad(x, data)
    x = [xi - beta * gi if h else xi for xi, gi, h in zip(x, g, head)]
    trace.emit("step", "train", 0, 0, 1, "w_local", x)
    _, g = ce_grad(x, data)
    trace.emit("note", "train", 0, 0, 2, "g", g)
    step = rho * scale * (alpha if head_alpha else 1)
    x = [xi - step * gi if h else xi for xi, gi, h in zip(x, g, head)]
    trace.emit("step", "train", 0, 0, 2, "w_local", x)
    trace.emit("client_end", "train", 0, 0, None, "v", x)
    trace.emit("note", "train", 0, 0, None, "body_passes", [1, 1])
    a = Decimal(1) if sampled else alpha
    ghat = [scale * a * g[0], 0, 0, 0, 0]
    trace.emit("note", "train", 0, None, None, "g_hat", ghat)
    w = list(w0)
    w[0] = w0[0] - rho * ghat[0]
    trace.emit("server", "train", 0, None, None, "w", w)
    v = [[w[0]] + x[1:], [w[0]] + w0[1:]]
    return trace, w, v


def example_c(variant):
    vid = f"pflego/worked/notes-c-{variant}"
    switches = ({"pflego.head_step": "exact_alpha"} if variant == "exact-alpha"
                else {"pflego.theta_weights": "sampled_normalised"})
    algorithm = {"name": "pflego",
                 "hyperparameters": {"rho": 0.1, "pflego.beta": 0.5},
                 "switches": switches}
    trace, w, v = result = example_c_run(variant)
    wt = records(trace, "step", "w_local", 0, 0)[0]
    for got, want in zip(wt[1:], (0.331182916167, 0.268817083833, 0.124855426073,
                                  0.275144573927)):
        assert close(got, want, 12), (got, want)
    g = records(trace, "note", "g", 0, 0)[0]
    for got, want in zip(g, (-0.030699502601, -0.246124371728, 0.246124371728,
                             -0.037492662748, 0.037492662748)):
        assert close(got, want, 12), (got, want)
    if variant == "exact-alpha":
        heads, theta = (0.350872865905, 0.249127134095, 0.127854839092,
                        0.272145160908), 0.502455960208
    else:
        heads, theta = (0.380407790512, 0.219592209488, 0.132353958622,
                        0.267646041378), 0.506139900520
    for got, want in zip(v[0][1:], heads):
        assert close(got, want, 12), (got, want)
    assert close(w[0], theta, 12), w
    flags = ["pflego-head-step", "pflego-theta-weights", "pflego-inverse-probability"]
    mutants = {"pflego-head-step": ["head-alpha-flip"],
               "pflego-theta-weights": ["theta-weights-flip"],
               "pflego-inverse-probability": ["no-ip-factor"]}
    exp = pg.checked_expected(vid, TOL_C, flags, mutants, result,
                              lambda bugs=frozenset(): example_c_run(variant, bugs),
                              lambda trace, w, v: (trace, w, v))
    title = (f"PFLEGO worked example C ({variant}): softmax cross-entropy, "
             f"θ¹ = {theta}")
    description = (
        "Logits z = W_1 (θx, 1) (mlp d = h = 1, k = 2, identity, no hidden "
        "bias, an output bias), cross-entropy; client 0 = {(1, class 0), "
        "(−1, class 1)}, client 1 (3 samples, α_0 = 2/5) not sampled; I = 2, "
        "r = 1, τ = 2, β = 0.5, ρ = 0.1, θ = 0.5, W = [[0.2, 0.1], [0.4, 0.3]].")
    spec = pg.given_spec(title, description, C_MODEL, C_CLIENTS, C_INIT, algorithm,
                         rounds_of(C_CLIENTS, [[0]], 2), split=SPLIT)
    prov = pg.provenance("independent", f"{NOTES} §2.4, §2.10 (example C, "
                         f"{variant}); {PAPER}",
                         "golden/pflego/make_worked.py (60-digit decimal)")
    return f"worked-notes-c-{variant}.json", pg.vector(vid, title, prov, flags, spec,
                                                       TOL_C, exp)


# ---------------------------------------------------------------- coincidence-free
# golden/coincidences.py: ρ ≠ β, neither 1 or 0, client sizes 2, 3, 1, 4
# (α_i = N_i/N all different), I_t of different sizes' clients, two rounds.

S_CLIENTS = [{"X": [[1.25], [-0.75]], "y": [1.85, -0.65]},
             {"X": [[0.55], [1.45], [-1.15]], "y": [-0.35, -1.25, 0.95]},
             {"X": [[0.85]], "y": [1.15]},
             {"X": [[1.35], [-0.45], [0.65], [-1.05]], "y": [0.75, -0.15, 0.45, -0.85]}]
S_INIT = {"kind": "given", "w": [0.85, 0.45]}          # (θ, w) = (W1, W2)
S_VARIANTS = {
    "seed-global": {},
    "exact-alpha-sampled": {"pflego.head_step": "exact_alpha",
                            "pflego.theta_weights": "sampled_normalised"},
}


# golden/CHANGES.md, 2026-11-25, "drawn order": a fifth client of n = 3
# (as client 1) and I_1 = {1, 3, 4} drawn by the sampler as [4, 3, 1].
# PFLEGO's batches are full (docs/algorithms/pflego.md, "Schedules"): they
# carry only their count τ, so a candidate that pairs batches with drawn is
# refused on clients of different sizes and can only be shown wrong,
# rather than refused, where the swapped clients have equal N_i: clients 1
# and 4 (n = 3, τ = 3 and 2) swap τ; client 3 (n = 4) keeps the weights
# size-dependent in that round.
S_DRAWN_CLIENTS = S_CLIENTS + [{"X": [[-0.95], [1.15], [0.35]],
                                "y": [-0.55, 1.05, 0.25]}]
S_DRAWN_ROUNDS = px.with_drawn(
    [{"clients": [0, 1], "batches": [full_batches(2, 3), full_batches(3, 3)]},
     {"clients": [1, 3, 4], "batches": [full_batches(3, 3), full_batches(4, 3),
                                        full_batches(3, 2)]}],
    [[0, 1], [4, 3, 1]])


def spread(variant, drawn=False):
    switches = S_VARIANTS[variant]
    vid = f"pflego/worked/spread-{variant}" + ("-drawn" if drawn else "")
    algorithm = {"name": "pflego",
                 "hyperparameters": {"rho": 0.065, "pflego.beta": 0.135}}
    if switches:
        algorithm["switches"] = switches
    title = (f"PFLEGO ({variant}): ρ = 0.065, β = 0.135, client sizes 2, 3, 1, 4, "
             "two rounds" + (", I_1 drawn as [3, 1]" if drawn else ""))
    if drawn:
        title = ("PFLEGO (seed-global): ρ = 0.065, β = 0.135, five clients, "
                 "I_1 = {1, 3, 4} drawn as [4, 3, 1]")
    description = (
        "ŷ = w_i·(θ·x) (mlp d = h = k = 1, identity, no biases), ½(ŷ − y)², "
        "four clients (n = 2, 3, 1, 4; α = N_i/N), I = 4, r = 2, τ = 3 (two "
        "cheap full-batch head steps at β = 0.135 on the cached features, "
        "then the joint gradient and the last head step), ρ = 0.065, "
        "θ⁰ = 0.85, w⁰ = 0.45, I_0 = {0, 1}, I_1 = {1, 3}, SGD server; "
        f"switches {switches or 'the paper defaults'}.")
    if drawn:
        description = (
            "ŷ = w_i·(θ·x) (mlp d = h = k = 1, identity, no biases), ½(ŷ − y)², "
            "five clients (n = 2, 3, 1, 4, 3; α = N_i/N), I = 5, ρ = 0.065, "
            "β = 0.135 (τ − 1 cheap full-batch head steps on the cached "
            "features, then the joint gradient and the last head step), "
            "θ⁰ = 0.85, w⁰ = 0.45, SGD server, paper switches.  I_0 = {0, 1} "
            "(τ = 3 each, r = 2); I_1 = {1, 3, 4} (τ = 3, 3, 2, r = 3) drawn by "
            "the sampler as [4, 3, 1]: batches[j] still belongs to clients[j], "
            "so client 1 takes 3 steps and client 4 takes 2.")
    clients = S_DRAWN_CLIENTS if drawn else S_CLIENTS
    rounds = (S_DRAWN_ROUNDS if drawn
              else rounds_of(S_CLIENTS, [[0, 1], [1, 3]], 3))
    spec = pg.given_spec(title, description, B_MODEL, clients, S_INIT, algorithm,
                         rounds, split=SPLIT)

    def run(bugs=px.NO_BUGS):
        w, v, trace = pp.replay(spec, frozenset(bugs))
        return trace, w, v

    trace, w, v = result = run()
    # the cheap steps contract: β·mean((θx)²) < 2 at every client's θ
    for th in [x[0] for x in records(trace, "round_begin", "w")]:
        for c in clients:
            m = sum((th * pg.exact(x[0])) ** 2 for x in c["X"]) / len(c["X"])
            assert pg.exact(0.135) * m < 2
    # the two switches move the result
    for key, other in (("pflego.head_step", {"seed": "exact_alpha",
                                             "exact_alpha": "seed"}),
                       ("pflego.theta_weights", {"global": "sampled_normalised",
                                                 "sampled_normalised": "global"})):
        cur = switches.get(key, "seed" if key == "pflego.head_step" else "global")
        alt = dict(spec, algorithm=dict(spec["algorithm"],
                                        switches=dict(switches, **{key: other[cur]})))
        assert pp.replay(alt)[:2] != (w, v)
    flags = ["pflego-inverse-probability", "pflego-head-step", "pflego-theta-weights",
             "local-step-count", "pflego-body-passes"]
    mutants = {"pflego-inverse-probability": ["no-ip-factor"],
               "pflego-head-step": ["head-alpha-flip", "head-step-beta"],
               "pflego-theta-weights": ["theta-weights-flip"],
               "local-step-count": ["cheap-steps-tau"],
               "pflego-body-passes": ["features-per-step"]}
    exp = pg.checked_expected(vid, TOL_B, flags, mutants, result, run,
                              lambda trace, w, v: (trace, w, v))
    if drawn:                   # drawn read where clients belongs is caught
        wrong = pp.replay(px.spec_misread_drawn(spec))
        assert pg.detects(exp, pg.expected(wrong[2], wrong[0], wrong[1]),
                          TOL_B) is not None
    prov = pg.provenance("independent", f"{NOTES} §2.4 (steps 1–9), §2.9 (F1, F2); "
                         f"{PAPER}" + ("; docs/formats.md (drawn: information "
                                       "only)" if drawn else ""),
                         "golden/pflego/make_worked.py (exact fractions, "
                         "pflref_exact_pfl.py)")
    fname = f"worked-spread-{variant}" + ("-drawn" if drawn else "") + ".json"
    return fname, pg.vector(vid, title, prov, flags, spec, TOL_B, exp)


def main():
    pg.write_all(sys.argv, HERE, [lambda v=v: example_b(v) for v in B_VARIANTS]
                 + [lambda v=v: example_c(v) for v in ("exact-alpha", "code")]
                 + [lambda v=v: spread(v) for v in S_VARIANTS]
                 + [lambda: spread("seed-global", drawn=True)])


if __name__ == "__main__":
    main()
