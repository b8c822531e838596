#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pFedMe worked-example golden vectors (shared/spec notes §2(g)), in exact
rational arithmetic.

pFedMe (Dinh et al., NeurIPS 2020, Alg. 1; notes §2(c)): every trainer i
sets w_{i,0} = w_t and θ = w_t; for r = 0..R−1 (one batch each):
θ ← w_{i,r} (pfedme.theta_start = reset, the paper reading) or kept (warm,
the official code); K steps θ ← θ − η_p (∇f_i(θ; D) + λ(θ − w_{i,r}) + μθ);
w_{i,r+1} = w_{i,r} − ηλ(w_{i,r} − θ).  Server:
w_{t+1} = (1 − β) w_t + β Σ_{i∈S^t} c_i w_{i,R}, c_i = 1/S (paper) or
n_i / Σ_{S^t} n_j (official).  Personalised model: the last θ (paper) or
w_{i,R} (what the official code evaluates, notes §2(e)).

The notes' example: f_i(θ) = ½(θ − c_i)², c = (4, −2) (quadratic model,
a = 1, every batch the full gradient), λ = 1, η_p = 1/4, K = 2, η = 1/2,
R = 2, T = 2, w_0 = 0, S = N = 2.  Vectors (file = id without "pfedme/",
'/' → '-'):
  pfedme/worked/notes-2g-paper              paper reading: 87/256, 36975/65536
  pfedme/worked/notes-2g-official-mu0       preset official, pfedme.mu = 0:
                                            93/256, 38967/65536
  pfedme/worked/notes-2g-official           preset official as is (μ = 0.001):
                                            0.3631679893, 0.5943130991
  pfedme/worked/notes-2g-paper-beta2        paper, β = 2: 0.6796875, 0.8973999023
  pfedme/worked/notes-2g-official-mu0-beta2 official, μ = 0, β = 2:
                                            0.7265625, 0.9252319336
  pfedme/worked/notes-2g-official-mu0-n13   official, μ = 0, n = (1, 3):
                                            −0.181640625, −0.2972946167
  pfedme/worked/notes-2g-paper-s1           paper, S = 1, S^1 = {0},
                                            S^2 = {1}: 1.359375, 0.2177124023
The generator asserts each of the notes' numbers.  Every input but
μ = 0.001 is dyadic, so those runs are exact in fp64 as well.

    /usr/bin/python3 golden/pfedme/make_worked.py [OUTDIR]
"""
import math
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

NOTES = pg.NOTES
SOURCE = (f"{NOTES} §2(g) and Appendix A; §2(c), §2(e), §2(f); Dinh et al., "
          "NeurIPS 2020, Alg. 1")
GENERATOR = "golden/pfedme/make_worked.py (exact fractions)"
TOL_DYADIC = {
    "atol": 1e-15,
    "rtol": 1e-14,
    "basis": "fp64 reference against exact rationals: every input is dyadic "
             "and every value a dyadic rational with a denominator of at most "
             "2^20 on magnitudes below 8, so each correctly rounded "
             "operation is exact and the reference reproduces the rationals "
             "exactly; the bound leaves room for 64 ulp; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
TOL_MU = {
    "atol": 1e-14,
    "rtol": 1e-14,
    "basis": "fp64 reference against exact rationals of the binary inputs "
             "(μ = 0.001 is not a binary fraction): 8 inner steps and 2 local "
             "updates per client and round, each a contraction (η_p(1 + λ + "
             "μ) < 2, 0 < ηλ ≤ 1, asserted) with at most 7 correctly rounded "
             "operations on values below 8, so each value is within about 20 "
             "ulp(4) < 1e-14 of its rational; every flagged bug moves some "
             "value by more than 1e3 times the tolerance.",
}

C = [4.0, -2.0]
BASE_HP = {"eta": 0.5, "lambda": 1.0, "eta_p": 0.25, "K": 2}
R = 2


def close(x, printed, digits=10):
    """x agrees with a value the notes print to `digits` significant
    digits."""
    e = math.floor(math.log10(abs(printed)))
    return abs(float(x) - printed) <= 0.51 * 10.0 ** (e - digits + 1)


def notes_vector(name, title, description, algorithm, selected, n, flags,
                 mutants, tol, check):
    vid = f"pfedme/worked/notes-2g-{name}"
    model = {"kind": "quadratic", "d": 1}
    clients = [{"a": [1.0], "c": [c]} for c in C]
    if n is not None:
        for cl, ni in zip(clients, n):
            cl["n"] = ni
    init = {"kind": "zeros"}
    hp, sw = px.settings(algorithm)

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, v, trace, sched = list(w0), [list(w0) for _ in pr.clients], pg.Trace(), []
        for t, sel in enumerate(selected):
            plan = [(i, px.split_batches(pr.n(i), None, R, bugs)) for i in range(2)]
            sched.append((plan, sel))
            w, v = px.pfedme_round(pr, w, v, w0, t, plan, sel, hp, sw, trace, bugs)
        return pr, w, v, trace, sched

    result = run()
    pr, w, v, trace, sched = result
    for plan, _ in sched:
        for i, steps in plan:
            px.assert_prox_contractive(pr, i, steps, hp["eta_p"], hp["lambda"],
                                       hp["pfedme.mu"])
    assert 0 < hp["eta"] * hp["lambda"] <= 1
    server = [r["value"][0] for r in trace.records if r["event"] == "server"]
    check(server, trace, v)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda pr, w, v, trace, sched: (trace, w, v))
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_rounds(sched))
    named = {"w_1": [F(server[0])], "w_2": [F(server[1])]}
    named.update({f"v_{i}": vi for i, vi in enumerate(v)})
    prov = pg.provenance("independent", SOURCE, GENERATOR, named)
    return f"worked-notes-2g-{name}.json", pg.vector(vid, title, prov, flags,
                                                     spec, tol, exp)


def thetas(trace, t):
    return [r["value"][0] for r in trace.records
            if r["event"] == "client_end" and r["name"] == "theta" and r["round"] == t]


def locals_(trace, t):
    return [r["value"][0] for r in trace.records
            if r["event"] == "client_end" and r["name"] == "w_local" and r["round"] == t]


def paper():
    def check(server, trace, v):
        assert server == [F(87, 256), F(36975, 65536)], server
        assert thetas(trace, 0) == [F(63, 32), F(-63, 64)]          # 1.96875, −0.984375
        assert locals_(trace, 0) == [F(87, 64), F(-87, 128)]        # 1.359375, −0.6796875
        assert locals_(trace, 1) == [F(103791, 65536), F(-29841, 65536)]
        th = thetas(trace, 1)
        assert close(th[0], 2.141326904) and close(th[1], -0.8117980957), th
        # client 1, round 0: θ 0 → 1 → 1.5, w_{1,1} = 0.75; θ 0.75 → 1.5625 → 1.96875
        c0 = [r["value"][0] for r in trace.records
              if r["round"] == 0 and r.get("client") == 0 and r["event"] == "step"]
        assert c0 == [1, F(3, 2), F(3, 4), F(25, 16), F(63, 32), F(87, 64)], c0
        assert v == [[th[0]], [th[1]]]

    flags = ["theta-start", "prox-sign", "prox-reference", "local-step-count",
             "stale-global", "personal-eval", "loss-scale"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["pfedme-ref-wt"],
               "local-step-count": ["inner-plus-one", "inner-minus-one",
                                    "epochs-plus-one", "epochs-minus-one"],
               "stale-global": ["restart-w0"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "loss-scale": ["loss-x2"]}
    return notes_vector(
        "paper",
        "pFedMe worked example, paper reading (θ reset to w_{i,r}, 1/S, "
        "personalised = last θ): w_1 = 87/256, w_2 = 36975/65536",
        "f_i(θ) = ½(θ − c_i)², c = (4, −2), λ = 1, η_p = 1/4, K = 2, η = 1/2, "
        "R = 2 (one batch per local round), β = 1, S = N = 2, w_0 = 0, two "
        "rounds; paper switches.",
        {"name": "pfedme", "hyperparameters": dict(BASE_HP)},
        [[0, 1], [0, 1]], None, flags, mutants, TOL_DYADIC, check)


def official_mu0():
    def check(server, trace, v):
        assert server == [F(93, 256), F(38967, 65536)], server
        # notes §2(e): the official code's "personalised" (1.453125, −0.7265625)
        # = w_{i,R}, the last thetas (2.15625, −1.078125).
        assert locals_(trace, 0) == [F(93, 64), F(-93, 128)]
        assert thetas(trace, 0) == [F(69, 32), F(-69, 64)]
        lw = locals_(trace, 1)
        assert close(lw[0], 1.684432983) and close(lw[1], -0.4952545166), lw
        assert v == [[lw[0]], [lw[1]]]

    flags = ["theta-start", "personal-eval", "prox-sign"]
    mutants = {"theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"],
               "prox-sign": ["prox-plus"]}
    return notes_vector(
        "official-mu0",
        "pFedMe worked example, preset official with pfedme.mu = 0 (θ warm, "
        "n-weighted, personalised = w_{i,R}): w_1 = 93/256, w_2 = 38967/65536",
        "The notes §2(g) problem with the preset official (pfedme.theta_start "
        "= warm, weights = samples, train = all, personal_eval = local_w) and "
        "the explicit pfedme.mu = 0, which overrides the preset's 0.001.",
        {"name": "pfedme", "preset": "official",
         "hyperparameters": dict(BASE_HP, **{"pfedme.mu": 0.0})},
        [[0, 1], [0, 1]], None, flags, mutants, TOL_DYADIC, check)


def official():
    def check(server, trace, v):
        assert close(server[0], 0.3631679893) and close(server[1], 0.5943130991), server
        # With μ = 1/1000 exactly (the notes' script) the values differ from
        # those of the double 0.001 by O(1e-20); the official code's float64
        # run printed 0.36316798925585936.
        assert abs(float(server[0]) - 0.36316798925585936) < 1e-15

    flags = ["theta-start", "personal-eval", "prox-sign"]
    mutants = {"theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"],
               "prox-sign": ["prox-plus"]}
    return notes_vector(
        "official",
        "pFedMe worked example, preset official as is (μ = 0.001): "
        "w_1 ≈ 0.3631679893, w_2 ≈ 0.5943130991",
        "The notes §2(g) problem with the preset official unchanged: θ warm, "
        "the official code's extra μθ with μ = 0.001 in the inner gradient, "
        "weights n_i / Σ n_j, every client trains, personalised = w_{i,R}.",
        {"name": "pfedme", "preset": "official", "hyperparameters": dict(BASE_HP)},
        [[0, 1], [0, 1]], None, flags, mutants, TOL_MU, check)


def paper_beta2():
    def check(server, trace, v):
        assert server[0] == F(87, 128)                              # 0.6796875
        assert close(server[1], 0.8973999023), server

    flags = ["beta-ignored", "theta-start", "personal-eval"]
    mutants = {"beta-ignored": ["beta-one"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"]}
    return notes_vector(
        "paper-beta2",
        "pFedMe worked example, paper reading with β = 2: w_1 = 0.6796875, "
        "w_2 ≈ 0.8973999023",
        "The notes §2(g) problem, paper switches, server mixing β = 2: "
        "w_{t+1} = −w_t + 2 (1/S) Σ w_{i,R} (extrapolation).",
        {"name": "pfedme", "hyperparameters": dict(BASE_HP, beta=2.0)},
        [[0, 1], [0, 1]], None, flags, mutants, TOL_DYADIC, check)


def official_mu0_beta2():
    def check(server, trace, v):
        assert server[0] == F(93, 128)                              # 0.7265625
        assert server[1] == F(0.92523193359375), server             # the official code's float64

    flags = ["beta-ignored", "theta-start", "personal-eval"]
    mutants = {"beta-ignored": ["beta-one"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"]}
    return notes_vector(
        "official-mu0-beta2",
        "pFedMe worked example, preset official with pfedme.mu = 0 and β = 2: "
        "w_1 = 0.7265625, w_2 = 0.92523193359375",
        "The notes §2(g) problem, preset official, explicit pfedme.mu = 0 and "
        "β = 2.",
        {"name": "pfedme", "preset": "official",
         "hyperparameters": dict(BASE_HP, beta=2.0, **{"pfedme.mu": 0.0})},
        [[0, 1], [0, 1]], None, flags, mutants, TOL_DYADIC, check)


def official_mu0_n13():
    def check(server, trace, v):
        assert server[0] == F(-93, 512)                             # −0.181640625
        assert server[1] == F(-0.29729461669921875), server
        assert close(server[1], -0.2972946167)

    flags = ["aggregation-weights", "theta-start", "personal-eval"]
    mutants = {"aggregation-weights": ["uniform-weights"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"]}
    return notes_vector(
        "official-mu0-n13",
        "pFedMe worked example, preset official with pfedme.mu = 0 and "
        "n = (1, 3): weights 1/4, 3/4; w_1 = −0.181640625, w_2 ≈ −0.2972946167",
        "The notes §2(g) problem with sample counts n = (1, 3) (used only as "
        "aggregation weights: n_i / Σ_{S^t} n_j), preset official, explicit "
        "pfedme.mu = 0.",
        {"name": "pfedme", "preset": "official",
         "hyperparameters": dict(BASE_HP, **{"pfedme.mu": 0.0})},
        [[0, 1], [0, 1]], [1, 3], flags, mutants, TOL_DYADIC, check)


def paper_s1():
    def check(server, trace, v):
        assert server[0] == F(87, 64)                               # 1.359375
        assert close(server[1], 0.2177124023), server
        # every client trains in both rounds (pfedme.train = all)
        assert len(thetas(trace, 0)) == len(thetas(trace, 1)) == 2

    flags = ["unsampled-client", "stale-personal-state", "theta-start",
             "personal-eval"]
    mutants = {"unsampled-client": ["aggregate-all"],
               "stale-personal-state": ["train-sampled"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"]}
    return notes_vector(
        "paper-s1",
        "pFedMe worked example, paper reading with S = 1: both clients train, "
        "S^1 = {0}, S^2 = {1} aggregated; w_1 = 1.359375, w_2 ≈ 0.2177124023",
        "The notes §2(g) problem, paper switches (pfedme.train = all): every "
        "client runs its R local rounds in every round, and the server "
        "averages only the sampled one (schedule \"selected\"): client 0 in "
        "round 0, client 1 in round 1 (the notes' S^1 = {1}, S^2 = {2}, "
        "1-based).",
        {"name": "pfedme", "hyperparameters": dict(BASE_HP)},
        [[0], [1]], None, flags, mutants, TOL_DYADIC, check)


def main():
    pg.write_all(sys.argv, HERE,
                 (paper, official_mu0, official, paper_beta2,
                  official_mu0_beta2, official_mu0_n13, paper_s1))


if __name__ == "__main__":
    main()
