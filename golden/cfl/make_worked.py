#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Clustered FL golden vectors (Sattler, Müller, Samek, IEEE TNNLS 2021,
Alg. 1 and 5), from the seed 003_… worked example and the worked and
counter examples of shared/spec notes-cfl-ifca-sampling-metrics.md §1.9 and
§1.10, computed by golden/pflref_exact_cfl.py (exact updates and decisions,
60-digit square roots).

Every update is produced by one full-batch SGD step with η = 1 on the
quadratic f_i(θ) = ½ ‖θ − c_i‖² from θ = 0, so Δθ_i = c_i exactly: the
clients' c_i are the examples' vectors.

  seed003            g = (1,0), (0.8,0.2), (−1,0), (−0.9,−0.1), |D| = (100,
                     300, 100, 300), ε₁ = 0.4, ε₂ = 0.9, γ_max = 0.5: the
                     seed's 0.970, −1, −0.994, 0.994 and clusters {1,2},
                     {3,4} (0-based {0,1}, {2,3}); the notes' ‖mean‖ =
                     0.035355, α_max^cross = −0.970143, updates (0.9, 0.1)
                     and (−0.95, −0.05)
  seed003-samples    the same with cfl.cluster_weights = samples: ‖mean‖ =
                     0.053033 (notes), updates (0.85, 0.15), (−0.925, −0.075)
  seed003-gamma      γ_max = 0.995 > √((1 + 0.970143)/2) = 0.992508: no split
  counterexample-optimal, counterexample-complete-linkage
                     unit vectors at 0°, 120°, 230°, 260°: Algorithm 1 gives
                     {1,3,4} | {2} with α_max^cross = −0.342020, the
                     notebook's complete linkage {1,2} | {3,4} with −0.173648
  nested-split       five clients, two rounds: {0,1} | {2,3,4}, then
                     {2,3,4} splits into {2} | {3,4} (client ids mapped back)
  linear-minibatch   a linear model on two opposite concepts, y = ±(x₁ − x₂),
                     clients 0, 2 and 1, 3 interleaved; two local SGD steps
                     on minibatches of two; round 0 recovers the populations
                     {0,2} | {1,3}, round 1 trains each cluster (neither
                     splits: max ‖Δθ_i‖ < ε₂)
  spread-complete-linkage-samples  complete linkage, |D_i|-weighted updates,
                     η = 0.85, a = (1.25, 0.8), two rounds, every decision
                     more than 1e-3 from its threshold
  thresholds-warmup-drawn  ε₁ = 0.3, ε₂ = 0.9, γ_max = 0.62, cfl.warmup = 1,
                     cfl.min_cluster_size = 3, five clients with 1-3 local
                     steps each, drawn orders unlike the clients: each
                     threshold approached from the side where exchanging it
                     with another changes the split (below)
  thresholds-min-size  cfl.min_cluster_size = 3 with no warmup (so a guard
                     switched on by the warmup instead is off), four clients
  boundary-tie-zero-update  three clients, the middle one's update exactly 0:
                     α₀₁ = α₁₂ = 0 by the zero-norm rule in any arithmetic, so
                     Algorithm 1's tie order shows in float32 too
  boundary-tie-complete-linkage  complete linkage with two equal links after
                     the first merge (0 by the zero-norm rule, in any
                     arithmetic): the first pair in the scan merges; the
                     later pair and Algorithm 1 each split differently

    /usr/bin/python3 golden/cfl/make_worked.py [OUTDIR]
"""
import math
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_cfl as pc    # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = "shared/spec notes-cfl-ifca-sampling-metrics.md"
SEED = "shared/seeds/003_… (worked example 2, 'Clustered FL from gradient similarity')"
GENERATOR = "golden/cfl/make_worked.py (exact updates and decisions, pflref_exact_cfl.py)"
TOL = {
    "atol": 1e-14,
    "rtol": 1e-13,
    "basis": "fp64 reference in fixed order against exact rationals (updates, "
             "models) and 60-digit square roots (cosines, norms): one local step "
             "per client and round on values of magnitude below 2, each cosine a "
             "few roundings (a dot product of P = 2 terms, two square roots, one "
             "division), so every recorded value is within a few ulps of the exact "
             "one; every decision (ε tests, Algorithm 1's order, the γ test) has a "
             "margin above 1e-3, and every flagged bug moves some value by more "
             "than 1e3 times the tolerance.",
}
# The boundary vectors and the nested split: their decisions sit exactly on
# a threshold or on a tie, so TOL's margin does not hold for them.
TOL_EXACT = {
    "atol": 1e-14,
    "rtol": 1e-13,
    "basis": "fp64 reference in fixed order against exact rationals (updates, "
             "models) and 60-digit square roots (cosines, norms): one local step "
             "per client and round on dyadic values of magnitude below 2, each "
             "cosine a few roundings (a dot product of P = 2 terms, two square "
             "roots, one division), so every recorded value is within a few ulps "
             "of the exact one; the decision the vector is built on sits exactly "
             "on its threshold or on a tie, between values that fp64 computes "
             "exactly on these dyadic updates or as one double (proved for the "
             "boundary vectors by proofs/gappa/vectors/cfl__*.g; the nested "
             "split's ties, equal updates and cosines of exactly ±1, are exact "
             "in fp64 too), every other decision has a margin above 1e-3, and "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}
MODEL = {"kind": "quadratic", "d": 2}
SEED_C = [[1.0, 0.0], [0.8, 0.2], [-1.0, 0.0], [-0.9, -0.1]]
SEED_N = [100, 300, 100, 300]


def clients(cs, ns=None):
    out = []
    for k, c in enumerate(cs):
        cl = {"a": [1.0, 1.0], "c": list(c)}
        if ns is not None:
            cl["n"] = ns[k]
        out.append(cl)
    return out


def bare_spec(model, cls, hp, sw, rounds):
    """A cfl spec without title or description, which a check replays
    under other switches."""
    return pg.given_spec("", "", model, cls, {"kind": "zeros"},
                         {"name": "cfl", "hyperparameters": hp, "switches": sw},
                         rounds)


def one_step_rounds(N, T):
    return [{"clients": list(range(N)), "batches": [[[0]] for _ in range(N)]}
            for _ in range(T)]


def notes_of(trace, name, rnd=0, client=None):
    return [r["value"] for r in trace.records
            if r["event"] == "note" and r["name"] == name and r.get("round") == rnd
            and (client is None or r.get("client") == client)]


def close(x, y, digits=6):
    return abs(float(x) - y) <= 0.6 * 10 ** -digits


# The bipartition vectors without equal similarities earn their flag by the
# method flip only (the tie-order bug cannot move them; boundary-tie-order
# earns it by the tie order only).
FLIP_ONLY = {"cfl-bipartition": ["cfl-bipartition-flip"]}


def make(name, title, description, cs, ns, hp, switches, T, flags, check, source,
         data=None, only=None, tol=TOL):
    """cs, ns, T: the quadratic clients' c_i and |D_i|, one step a round for T
    rounds; data = (model, clients, rounds) replaces them.  only: {flag:
    bugs} for the flags whose bugs do not all apply to this vector (each of
    those listed must move it)."""
    vid = f"cfl/worked/{name}"
    algorithm = {"name": "cfl", "hyperparameters": hp}
    if switches:
        algorithm["switches"] = switches
    model, cls, rounds = data or (MODEL, clients(cs, ns), one_step_rounds(len(cs), T))
    spec = pg.given_spec(title, description, model, cls, {"kind": "zeros"}, algorithm,
                         rounds)

    def run(bugs=frozenset()):
        return pc.replay(spec, frozenset(bugs))

    result = run()
    check(result[0], result[2])
    mutants = {f: (only or {}).get(f, pc.MUTANTS[f]) for f in flags}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, tol, exp)


def seed003_checks(trace, v, samples=False, split=True):
    rows = notes_of(trace, "similarity")
    assert close(rows[0][1], 0.970143) and rows[0][2] == -1 and close(rows[0][3], -0.993884)
    assert close(rows[1][3], -0.990992) and close(rows[2][3], 0.993884)
    # the seed's three-digit values
    assert round(float(rows[0][1]), 3) == 0.970 and round(float(rows[0][3]), 3) == -0.994
    assert round(float(rows[2][3]), 3) == 0.994
    assert notes_of(trace, "c1")[0] == [0, 1] and notes_of(trace, "c2")[0] == [2, 3]
    assert close(notes_of(trace, "alpha_cross")[0][0], -0.970143)
    assert close(math.sqrt((1 + 0.970143) / 2), 0.992508, 5)
    norm = notes_of(trace, "norm_dtheta_c")[0][0]
    assert close(norm, 0.053033 if samples else 0.035355)
    assert notes_of(trace, "max_norm_dtheta")[0][0] == 1
    if split:
        a = (0.85, 0.15) if samples else (0.9, 0.1)
        b = (-0.925, -0.075) if samples else (-0.95, -0.05)
        assert all(close(x, y, 15) for x, y in zip(v[0] + v[1], a + a)), v
        assert all(close(x, y, 15) for x, y in zip(v[2] + v[3], b + b)), v
        assert notes_of(trace, "partition")[0] == [0, 0, 1, 1]
    else:
        assert notes_of(trace, "split")[0] == [0]
        assert notes_of(trace, "partition")[0] == [0, 0, 0, 0]


HP = {"eta": 1.0, "eps1": 0.4, "eps2": 0.9, "gamma_max": 0.5}


def seed003():
    return make("seed003", "CFL, seed 003's cosine clustering: clusters {0,1} and {2,3}",
                "Seed 003 worked example 2 as one CFL round (Alg. 5): Δθ_i = g_i; "
                "α = 0.970, −1, −0.994, 0.994; Algorithm 1 splits {0,1} | {2,3}.",
                SEED_C, SEED_N, HP, None, 1,
                ["cfl-similarity-normalisation", "aggregation-weights", "cfl-split-update"],
                lambda tr, v: seed003_checks(tr, v),
                f"{SEED}; {NOTES} §1.10")


def seed003_samples():
    return make("seed003-samples", "CFL, seed 003, cluster updates weighted |D_i|/|D_c|",
                "As cfl/worked/seed003 with cfl.cluster_weights = samples (Alg. 2's "
                "weights): ‖Δθ_c‖ = 0.053033.",
                SEED_C, SEED_N, HP, {"cfl.cluster_weights": "samples"}, 1,
                ["aggregation-weights", "cfl-split-update"],
                lambda tr, v: seed003_checks(tr, v, samples=True),
                f"{SEED}; {NOTES} §1.10 (weighted by |D| = (100, 300, 100, 300))")


def seed003_gamma():
    hp = dict(HP, gamma_max=0.995)
    return make("seed003-gamma", "CFL, seed 003 with γ_max = 0.995: the γ test blocks the split",
                "γ_max = 0.995 is not below √((1 − α_max^cross)/2) = 0.992508, so "
                "the cluster stays whole although both ε tests pass.",
                SEED_C, SEED_N, hp, None, 1, ["cfl-gamma-test"],
                lambda tr, v: seed003_checks(tr, v, split=False),
                f"{SEED}; {NOTES} §1.6 and §1.10")


ANGLES = [0.0, 120.0, 230.0, 260.0]
UNIT = [[math.cos(math.radians(a)), math.sin(math.radians(a))] for a in ANGLES]


def counter_checks(method):
    def check(trace, v):
        c1, c2 = notes_of(trace, "c1")[0], notes_of(trace, "c2")[0]
        cross = notes_of(trace, "alpha_cross")[0][0]
        if method == "optimal":
            assert (c1, c2) == ([0, 2, 3], [1]), (c1, c2)
            assert close(cross, -0.342020), cross
        else:
            assert (c1, c2) == ([0, 1], [2, 3]), (c1, c2)
            assert close(cross, -0.173648), cross
        assert notes_of(trace, "split")[0] == [1]
    return check


def counter(method):
    name = "counterexample-" + method.replace("_", "-")
    sw = None if method == "optimal" else {"cfl.bipartition": method}
    what = ("Algorithm 1: {0,2,3} | {1}, α_max^cross = −0.342020"
            if method == "optimal" else
            "the notebook's complete linkage: {0,1} | {2,3}, α_max^cross = −0.173648")
    return make(name, f"CFL, unit updates at 0°, 120°, 230°, 260°: {what}",
                "The notes' counterexample where complete linkage and the optimal "
                "bipartition disagree; updates (cos φ, sin φ) as doubles.",
                UNIT, None, HP, sw, 1, ["cfl-bipartition"], counter_checks(method),
                f"{NOTES} §1.9 (counterexample, brute force and sklearn 1.2.1)",
                only=FLIP_ONLY)


NESTED_C = [[1.0, 0.0], [1.0, 0.0], [-0.5, 1.0], [-0.5, -0.375], [-0.5, -0.625]]


def nested_checks(trace, v):
    assert notes_of(trace, "c1", 0)[0] == [0, 1] and notes_of(trace, "c2", 0)[0] == [2, 3, 4]
    assert notes_of(trace, "partition", 0)[0] == [0, 0, 1, 1, 1]
    assert notes_of(trace, "c1", 1)[0] == [2] and notes_of(trace, "c2", 1)[0] == [3, 4]
    assert notes_of(trace, "alpha_cross", 1)[0][0] == -1
    assert notes_of(trace, "partition", 1)[0] == [0, 0, 1, 2, 2]
    want = [(1, 0), (1, 0), (-0.5, 1), (-0.5, -0.5), (-0.5, -0.5)]
    assert [tuple(float(x) for x in vi) for vi in v] == want, v


def nested():
    return make("nested-split", "CFL, a nested split: {0,1} | {2,3,4}, then {2} | {3,4}",
                "Five clients, two rounds.  Round 0 splits the federation; in round 1 "
                "the cluster {2,3,4} (centroid (−0.5, 0)) splits again: its c₁, c₂ "
                "must be mapped back to client ids 2, 3, 4, not to positions 0, 1, 2.",
                NESTED_C, None, HP, None, 2,
                ["cfl-nested-split-indices", "cfl-similarity-normalisation"],
                nested_checks,
                f"{NOTES} §1.7 (recursion) and §1.9 (issue felisat/clustered-federated-"
                "learning#2); hand-checked: round 1 updates (0, 1), (0, −0.375), "
                "(0, −0.625), cosines ±1", tol=TOL_EXACT)


# Two opposite linear concepts y = s (x₁ − x₂), s = +1 on clients 0, 2 and
# −1 on clients 1, 3; four samples each, as doubles exactly.
LINEAR_X = [[[1, 0], [0, 1], [1, 1], [2, -1]],
            [[1, 0.5], [0, 1], [-1, 1], [1, -1]],
            [[0.5, 1], [1, -0.5], [2, 0], [0, -1]],
            [[1, 1], [2, 0], [0, -2], [1, 0.5]]]


def linear_checks(trace, v):
    # round 0 by hand: client 0's first step on samples 0, 1 (squared loss,
    # ∇ = (2/B) Σ r x, r = θ·x − y): θ = 0.1·(1, −1) = (0.1, −0.1); the
    # second on samples 2, 3 (residuals 0 and 0.3 − 3 = −2.7):
    # θ = (0.1, −0.1) + 0.1·(2.7·2, −2.7) = (0.64, −0.37)
    assert notes_of(trace, "norm_dtheta_c")[0][0] < 0.1
    dtheta = [r["value"] for r in trace.records
              if r["event"] == "client_end" and r["name"] == "dtheta" and r["round"] == 0]
    assert close(dtheta[0][0], 0.64, 15) and close(dtheta[0][1], -0.37, 15), dtheta[0]
    assert notes_of(trace, "c1", 0)[0] == [0, 2] and notes_of(trace, "c2", 0)[0] == [1, 3]
    assert notes_of(trace, "partition", 0)[0] == [0, 1, 0, 1]
    # round 1: each cluster's ‖Δθ_c‖ < ε₁ but max ‖Δθ_i‖ < ε₂: no split (no
    # similarities computed)
    assert all(n[0] < 0.5 for n in notes_of(trace, "max_norm_dtheta", 1))
    assert notes_of(trace, "c1", 1) == [] and notes_of(trace, "similarity", 1) == []
    assert notes_of(trace, "partition", 1)[0] == [0, 1, 0, 1]
    # each cluster model points along its concept (±(1, −1))
    assert v[0] == v[2] and v[1] == v[3]
    assert v[0][0] > 0 > v[0][1] and v[1][0] < 0 < v[1][1]


def linear_minibatch():
    cls = [{"X": xs, "y": [(1 if i % 2 == 0 else -1) * (x[0] - x[1]) for x in xs]}
           for i, xs in enumerate(LINEAR_X)]
    rounds = [{"clients": [0, 1, 2, 3], "batches": [[[0, 1], [2, 3]] for _ in range(4)]}
              for _ in range(2)]
    model = {"kind": "linear", "d": 2, "loss": "squared"}
    hp = {"eta": 0.1, "eps1": 0.4, "eps2": 0.5, "gamma_max": 0.5}
    return make("linear-minibatch",
                "CFL on a linear model with minibatches: two opposite concepts recovered",
                "Four clients with y = ±(x₁ − x₂) (clients 0, 2: +; 1, 3: −), squared "
                "loss, η = 0.1, two local steps on minibatches {0,1}, {2,3}, two rounds. "
                "Round 0: ‖Δθ_c‖ = 0.096 < ε₁ = 0.4, max ‖Δθ_i‖ = 0.739 > ε₂ = 0.5, "
                "α_max^cross = −0.924: split {0,2} | {1,3}. Round 1: max ‖Δθ_i‖ = "
                "0.389 and 0.359 < ε₂: no split.",
                None, None, hp, None, None,
                ["cfl-similarity-normalisation", "cfl-split-update"], linear_checks,
                f"{NOTES} §1 (Alg. 5 on a data model); hand-checked: client 0's "
                "round-0 steps (comments in the generator)",
                data=(model, cls, rounds))


# Complete linkage with |D_i|-weighted cluster updates and no coincidence
# (golden/coincidences.py): η = 0.85, curvature a = (1.25, 0.8), distinct
# |D_i|, two rounds, every decision at least 1e-3 from its threshold.
SPREAD_C = [[1.146, 0.1], [-0.446, 0.839], [-0.703, -0.78], [-0.11, -0.893]]
SPREAD_N = [3, 7, 4, 6]
SPREAD_A = [1.25, 0.8]
SPREAD_HP = {"eta": 0.85, "eps1": 0.45, "eps2": 0.7, "gamma_max": 0.35}


def spread_checks(trace, v):
    from decimal import Decimal
    eps = {"norm_dtheta_c": Decimal("0.45"), "max_norm_dtheta": Decimal("0.7")}
    for t in (0, 1):
        for name, e in eps.items():
            for x in notes_of(trace, name, t):
                assert abs(Decimal(x[0]) - e) > Decimal("1e-3"), (t, name, x)
        for x in notes_of(trace, "alpha_cross", t):
            assert abs(((1 - Decimal(x[0])) / 2).sqrt() - Decimal("0.35")) > Decimal("1e-3")
    # complete linkage: {0,1} | {2,3}, then {0,1} splits again in round 1
    assert notes_of(trace, "c1", 0)[0] == [0, 1] and notes_of(trace, "c2", 0)[0] == [2, 3]
    assert notes_of(trace, "c1", 1)[0] == [0] and notes_of(trace, "c2", 1)[0] == [1]
    assert notes_of(trace, "partition", 1)[0] == [0, 1, 2, 2]
    # Algorithm 1 would split {0} | {1,2,3} instead (asserted on a replay)
    spec = dict(SPREAD_SPEC[0])
    alg = dict(spec["algorithm"], switches={"cfl.bipartition": "optimal",
                                            "cfl.cluster_weights": "samples"})
    other = pc.replay(dict(spec, algorithm=alg))[0]
    assert notes_of(other, "c1", 0)[0] == [0] and notes_of(other, "c2", 0)[0] == [1, 2, 3]


SPREAD_SPEC = []


def spread_complete_linkage():
    cls = [{"a": list(SPREAD_A), "c": list(c), "n": n} for c, n in zip(SPREAD_C, SPREAD_N)]
    rounds = one_step_rounds(4, 2)
    sw = {"cfl.bipartition": "complete_linkage", "cfl.cluster_weights": "samples"}
    SPREAD_SPEC.append(bare_spec(MODEL, cls, SPREAD_HP, sw, rounds))
    return make("spread-complete-linkage-samples",
                "CFL, complete linkage, |D_i|-weighted updates, η = 0.85, a nested "
                "split in round 1",
                "Four clients, f_i = ½ Σ_j a_j (θ_j − c_ij)² with a = (1.25, 0.8), "
                "c = (1.146, 0.1), (−0.446, 0.839), (−0.703, −0.78), (−0.11, −0.893), "
                "|D| = (3, 7, 4, 6); η = 0.85, one step per round from θ = 0, two "
                "rounds; ε₁ = 0.45, ε₂ = 0.7, γ_max = 0.35; cfl.bipartition = "
                "complete_linkage, cfl.cluster_weights = samples.  Round 0 splits "
                "{0,1} | {2,3} (Algorithm 1 would give {0} | {1,2,3}); round 1 "
                "splits {0,1} again.",
                None, None, SPREAD_HP, sw, None,
                ["cfl-bipartition", "aggregation-weights", "cfl-split-update",
                 "cfl-similarity-normalisation"], spread_checks,
                f"{NOTES} §1.6-1.9 (Alg. 5, Alg. 2's weights, the notebook's complete "
                "linkage); every decision's margin asserted above 1e-3",
                data=(MODEL, cls, rounds), only=FLIP_ONLY)


# The threshold vectors: f_i = ½ Σ_j a_ij (θ_j − c_ij)², η = 0.4 (every
# step a contraction: η a ≤ 0.6), from θ = 0, client i taking the number of
# full-batch steps its batch list holds (1-3, different per client and
# round, so a batch list paired with the wrong client changes Δθ_i).  The
# data came from a seeded search over dyadic c_i, a_i and step counts for
# runs whose decisions meet every condition the checks below assert.
TOL_THR = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals (updates, "
             "models) and 60-digit square roots (cosines, norms): at most 3 "
             "local steps per client and round over 3-4 rounds, each step a "
             "contraction (1 − ηa between 0.4 and 0.8) on values below 4, so "
             "each θ_i carries an error of a few ulps of 4 (about 1e-15); "
             "Δθ_i = θ_local − θ_i and the norms of cluster means as small as "
             "0.02 inherit that absolute error, so their relative error stays "
             "below 1e-13; every decision (ε tests, Algorithm 1's order, the "
             "γ test) has a margin above 1e-3, and every flagged bug moves "
             "some value by more than 1e3 times the tolerance.",
}
THR_HP = {"eta": 0.4, "eps1": 0.3, "eps2": 0.9, "gamma_max": 0.62}
THR_SRC = (f"{NOTES} §1.6-1.9 (Alg. 5's ε tests, the γ test γ_max < "
           "√((1 − α_max^cross)/2)); docs/algorithms/cfl.md (cfl.min_cluster_size, "
           "cfl.warmup: the notebook's guards); docs/formats.md (schedule: drawn is "
           "information only); every decision's margin asserted above 1e-3")


def thr_rounds(steps, drawn):
    N = len(steps[0])
    return [{"clients": list(range(N)), "drawn": d, "batches": [[[0]] * k for k in s]}
            for s, d in zip(steps, drawn)]


def thr_clients(cs, As):
    return [{"a": list(a), "c": list(c)} for c, a in zip(cs, As)]


def thr_margins(trace, T):
    """Every norm more than 1e-3 from ε₁, ε₂ and γ_max; every α_max^cross
    more than 1e-3 (in γ) from both √((1 − α)/2) and √((1 − α)/4)."""
    from decimal import Decimal
    th = [Decimal(pc.dec(pc.Fraction(THR_HP[k]))) for k in ("eps1", "eps2", "gamma_max")]
    for t in range(T):
        for name in ("norm_dtheta_c", "max_norm_dtheta"):
            for x in notes_of(trace, name, t):
                assert all(abs(Decimal(x[0]) - e) > Decimal("1e-3") for e in th), (t, x)
        for x in notes_of(trace, "alpha_cross", t):
            for k in (2, 4):
                assert abs(((1 - Decimal(x[0])) / k).sqrt() - th[2]) > Decimal("1e-3")


def thr_case(trace, t, rep):
    """(‖Δθ_c‖, max ‖Δθ_i‖) of the cluster led by client rep in round t."""
    return (float(notes_of(trace, "norm_dtheta_c", t, rep)[0][0]),
            float(notes_of(trace, "max_norm_dtheta", t, rep)[0][0]))


THR_C = [[0.0, -0.5], [1.625, 2.0], [-0.625, -2.0], [-0.875, -1.5], [-0.25, 0.0]]
THR_A = [[0.5, 0.75], [1.25, 1.5], [0.75, 0.75], [0.5, 0.5], [0.75, 1.5]]
THR_STEPS = [[2, 1, 2, 3, 1], [3, 2, 1, 2, 3], [2, 1, 3, 3, 3], [3, 2, 1, 3, 3]]
THR_DRAWN = [[2, 4, 3, 1, 0], [2, 3, 4, 0, 1], [3, 0, 1, 2, 4], [2, 0, 1, 3, 4]]


def thresholds_checks(trace, v):
    thr_margins(trace, 4)
    e1, e2, g = THR_HP["eps1"], THR_HP["eps2"], THR_HP["gamma_max"]
    # round 0: {0..4} passes the ε tests (‖Δθ_c‖ < ε₁, max > ε₂) but t < r = 1
    n, m = thr_case(trace, 0, 0)
    assert n < e1 and m > e2 and notes_of(trace, "split", 0) == []
    # round 1: the split {0,2,3} | {1,4}, with √((1−α)/4) < γ_max < √((1−α)/2)
    assert notes_of(trace, "c1", 1)[0] == [0, 2, 3] and notes_of(trace, "c2", 1)[0] == [1, 4]
    a = float(notes_of(trace, "alpha_cross", 1)[0][0])
    assert math.sqrt((1 - a) / 4) < g < math.sqrt((1 - a) / 2), a
    # round 2: {0,2,3} with ε₁ < ‖Δθ_c‖ < γ_max < ε₂ < max (no split; a test
    # reading ε₂ or γ_max for ε₁ would split); {1,4} passes every test but
    # |c| = 2 < s = 3
    n, m = thr_case(trace, 2, 0)
    assert e1 < n < g < e2 < m, (n, m)
    n, m = thr_case(trace, 2, 1)
    assert n < e1 and m > e2
    # round 3: {0,2,3} with ‖Δθ_c‖ < ε₁ < max < ε₂ (a test reading ε₁ for ε₂
    # would split)
    n, m = thr_case(trace, 3, 0)
    assert n < e1 < m < e2, (n, m)
    assert notes_of(trace, "partition", 3)[0] == [0, 1, 0, 0, 1]


def thresholds_warmup():
    hp = dict(THR_HP, **{"cfl.warmup": 1, "cfl.min_cluster_size": 3})
    cls = thr_clients(THR_C, THR_A)
    rounds = thr_rounds(THR_STEPS, THR_DRAWN)
    return make("thresholds-warmup-drawn",
                "CFL, every threshold approached from the side where exchanging it "
                "changes the split; warmup and minimum cluster size binding; drawn "
                "order unlike the clients",
                "Five clients, f_i = ½ Σ_j a_ij (θ_j − c_ij)², c = (0, −0.5), "
                "(1.625, 2), (−0.625, −2), (−0.875, −1.5), (−0.25, 0), a = (0.5, "
                "0.75), (1.25, 1.5), (0.75, 0.75), (0.5, 0.5), (0.75, 1.5); η = 0.4 "
                "from θ = 0, 1-3 full-batch steps per client and round (the length "
                "of its batch list, batches[j] being clients[j]'s, not drawn[j]'s); "
                "ε₁ = 0.3, ε₂ = 0.9, γ_max = 0.62, cfl.warmup = 1, "
                "cfl.min_cluster_size = 3; four rounds.  Round 0: the ε tests pass "
                "but t < 1; round 1: {0,2,3} | {1,4} (α_max^cross = −0.168, between "
                "1 − 4γ² and 1 − 2γ²); round 2: {0,2,3} has ε₁ < ‖Δθ_c‖ = 0.488 < "
                "γ_max < ε₂ < max ‖Δθ_i‖ = 0.980, {1,4} passes every test but has "
                "2 < 3 members; round 3: {0,2,3} has ‖Δθ_c‖ = 0.077 < ε₁ < "
                "max ‖Δθ_i‖ = 0.389 < ε₂.",
                None, None, hp, None, None,
                ["cfl-thresholds", "schedule-drawn-order", "cfl-similarity-normalisation",
                 "cfl-split-update"], thresholds_checks, THR_SRC,
                data=(MODEL, cls, rounds), tol=TOL_THR,
                # r = 1 ≠ 0: a size guard switched on by r instead of s is on
                # here too (thresholds-min-size catches that one)
                only={"cfl-thresholds": [b for b in pc.MUTANTS["cfl-thresholds"]
                                         if b != "cfl-min-size-off-with-warmup"]})


THR2_C = [[2.0, -0.125], [-1.375, -0.625], [-0.25, 1.75], [1.125, 0.25]]
THR2_A = [[1.5, 0.5], [1.25, 1.25], [1.5, 1.5], [1.25, 1.5]]
THR2_STEPS = [[3, 3, 2, 2], [3, 3, 3, 3], [1, 2, 1, 3]]
THR2_DRAWN = [[2, 0, 1, 3], [1, 2, 0, 3], [2, 3, 1, 0]]


def min_size_checks(trace, v):
    thr_margins(trace, 3)
    e1, e2, g = THR_HP["eps1"], THR_HP["eps2"], THR_HP["gamma_max"]
    # round 0: ε₁ < ‖Δθ_c‖ < γ_max < ε₂ < max (no split)
    n, m = thr_case(trace, 0, 0)
    assert e1 < n < g < e2 < m and notes_of(trace, "split", 0) == []
    # round 1 (t = 1 < s = 3, no warmup): {0,3} | {1,2}
    assert notes_of(trace, "c1", 1)[0] == [0, 3] and notes_of(trace, "c2", 1)[0] == [1, 2]
    a = float(notes_of(trace, "alpha_cross", 1)[0][0])
    assert math.sqrt((1 - a) / 4) < g < math.sqrt((1 - a) / 2), a
    # round 2: {1,2} passes the ε tests but has 2 < 3 members
    n, m = thr_case(trace, 2, 1)
    assert n < e1 and m > e2 and notes_of(trace, "split", 2) == []


def thresholds_min_size():
    hp = dict(THR_HP, **{"cfl.min_cluster_size": 3})
    cls = thr_clients(THR2_C, THR2_A)
    rounds = thr_rounds(THR2_STEPS, THR2_DRAWN)
    return make("thresholds-min-size",
                "CFL, the minimum cluster size binding without a warmup",
                "Four clients, f_i = ½ Σ_j a_ij (θ_j − c_ij)², c = (2, −0.125), "
                "(−1.375, −0.625), (−0.25, 1.75), (1.125, 0.25), a = (1.5, 0.5), "
                "(1.25, 1.25), (1.5, 1.5), (1.25, 1.5); η = 0.4 from θ = 0, 1-3 "
                "full-batch steps per client and round (batches[j] is clients[j]'s); "
                "ε₁ = 0.3, ε₂ = 0.9, γ_max = 0.62, cfl.min_cluster_size = 3, no "
                "warmup; three rounds.  Round 0: ε₁ < ‖Δθ_c‖ = 0.422 < γ_max; round 1 "
                "(t = 1 < 3) splits {0,3} | {1,2}; round 2: {1,2} passes the ε tests "
                "but has 2 < 3 members.",
                None, None, hp, None, None,
                ["cfl-thresholds", "schedule-drawn-order", "cfl-similarity-normalisation",
                 "cfl-split-update"], min_size_checks, THR_SRC,
                data=(MODEL, cls, rounds), tol=TOL_THR,
                # ε₂ ≥ every max ‖Δθ_i‖ with ‖Δθ_c‖ < ε₁ does not occur here
                only={"cfl-thresholds": [b for b in pc.MUTANTS["cfl-thresholds"]
                                         if b != "cfl-eps2-is-eps1"]})


# The boundary vectors (issue 33 §3): one round, four clients, each vector
# sitting exactly on one of Alg. 5's comparisons with every other decision
# well away from its threshold, so a test with < and ≤ (or > and ≥)
# exchanged splits where the paper does not, or the reverse.  f_i = ½ Σ_j
# 0.5 (θ_j − c_ij)², η = 0.5 from θ = 0: Δθ_i = c_i/4 exactly, and every
# update, mean, squared norm and square root below is a short dyadic
# rational, so fp64 computes each of them exactly (the decision in fp64 is
# the exact one).  Client sizes |D_i| = 3, 5, 2, 7 (distinct; the uniform
# cluster mean does not read them, a size-weighted one would).
BND_N = [3, 5, 2, 7]
BND_SRC = (f"{NOTES} §1.6 (Alg. 5: ‖Δθ_c‖ < ε₁, max ‖Δθ_i‖ > ε₂, γ_max < "
           "√((1 − α_max^cross)/2), each strict); docs/algorithms/cfl.md "
           "(cfl.min_cluster_size: no split when |c| < s); exact dyadic "
           "values on each boundary (golden/boundaries.py)")


def bnd_clients(us):
    """Clients whose one step from θ = 0 gives the update u: c = 4u."""
    return [{"a": [0.5] * len(u), "c": [4 * x for x in u], "n": n}
            for u, n in zip(us, BND_N)]


def bnd_rounds(N):
    return [{"clients": list(range(N)), "drawn": [2, 0, 3, 1],
             "batches": [[[0]] for _ in range(N)]}]


def bnd_checks(norm_c=None, max_i=None, cross=None, split=False):
    def check(trace, v):
        if norm_c is not None:
            assert notes_of(trace, "norm_dtheta_c")[0][0] == norm_c
        if max_i is not None:
            assert notes_of(trace, "max_norm_dtheta")[0][0] == max_i
        if cross is not None:
            assert notes_of(trace, "alpha_cross")[0][0] == cross
        assert notes_of(trace, "partition")[0] == ([0, 0, 1, 1] if split
                                                   else [0, 0, 0, 0])
    return check


def bnd_make(name, title, description, us, hp, check, flags, only):
    model = {"kind": "quadratic", "d": len(us[0])}
    return make(name, title, description, None, None, hp, None, None, flags, check,
                BND_SRC, data=(model, bnd_clients(us), bnd_rounds(len(us))),
                only=only, tol=TOL_EXACT)


# ‖Δθ_c‖ = ‖(0.375, 0.5)‖ = 0.625 = ε₁: no split (< fails); max ‖Δθ_i‖ =
# √3.25 > ε₂ = 1.25, α_max^cross ≈ −0.78 with √((1 − α)/2) ≈ 0.94 > γ_max.
BND_EPS1 = [[1.5, 1.0], [1.25, 1.0], [-0.75, 0.0], [-0.5, 0.0]]


def boundary_eps1():
    hp = {"eta": 0.5, "eps1": 0.625, "eps2": 1.25, "gamma_max": 0.75}
    return bnd_make("boundary-eps1", "CFL on the ε₁ boundary: ‖Δθ_c‖ = ε₁ = 0.625, no split",
                    "Updates (1.5, 1), (1.25, 1), (−0.75, 0), (−0.5, 0): the mean "
                    "(0.375, 0.5) has norm 0.625 = ε₁ exactly, and Alg. 5 needs "
                    "‖Δθ_c‖ < ε₁ to split; every other test passes by a wide margin "
                    "(max ‖Δθ_i‖ = 1.80 > ε₂ = 1.25, γ_max = 0.75 < 0.94), so ≤ "
                    "would split {0,1} | {2,3}.",
                    BND_EPS1, hp, bnd_checks(norm_c=pc.Fraction(5, 8)),
                    ["cfl-thresholds"],
                    {"cfl-thresholds": ["cfl-eps1-is-eps2"]})


# max ‖Δθ_i‖ = ‖(0.75, 1)‖ = 1.25 = ε₂: no split (> fails); ‖Δθ_c‖ = 0.088
# < ε₁ = 0.375; α_max^cross ≈ −0.949, √((1 − α)/2) ≈ 0.99 > γ_max = 0.625.
BND_EPS2 = [[0.75, 1.0], [0.5, 0.75], [-0.75, -0.75], [-0.25, -0.75]]


def boundary_eps2():
    hp = {"eta": 0.5, "eps1": 0.375, "eps2": 1.25, "gamma_max": 0.625}
    return bnd_make("boundary-eps2", "CFL on the ε₂ boundary: max ‖Δθ_i‖ = ε₂ = 1.25, no split",
                    "Updates (0.75, 1), (0.5, 0.75), (−0.75, −0.75), (−0.25, −0.75): "
                    "the largest has norm 1.25 = ε₂ exactly, and Alg. 5 needs max "
                    "‖Δθ_i‖ > ε₂ to split; ‖Δθ_c‖ = 0.088 < ε₁ = 0.375 and γ_max = "
                    "0.625 < 0.99, so ≥ would split {0,1} | {2,3}.",
                    BND_EPS2, hp, bnd_checks(max_i=pc.Fraction(5, 4)),
                    ["cfl-thresholds"],
                    {"cfl-thresholds": ["cfl-eps2-is-eps1"]})


# The same updates with ε₂ = 1.125 below the largest norm: every test
# passes and the cluster has |c| = 4 = cfl.min_cluster_size members, which
# the guard |c| < s lets split (|c| ≤ s would not).
def boundary_min_size():
    hp = {"eta": 0.5, "eps1": 0.375, "eps2": 1.125, "gamma_max": 0.625,
          "cfl.min_cluster_size": 4}
    return bnd_make("boundary-min-size",
                    "CFL with |c| = cfl.min_cluster_size = 4: the guard lets it split",
                    "The updates of cfl/worked/boundary-eps2 with ε₂ = 1.125 < 1.25: "
                    "both ε tests and the γ test pass and the cluster of four has "
                    "exactly cfl.min_cluster_size = 4 members, so |c| < s keeps the "
                    "guard off and {0,1} | {2,3} splits.",
                    BND_EPS2, hp, bnd_checks(split=True),
                    ["cfl-split-update", "aggregation-weights"], None)


# α_max^cross = cos(u₀, u₂) = −1/8 exactly (u₀ = (1, 0, 0, 0, 0), u₂ =
# (−1, 7, 3, 2, 1), ‖u₂‖ = 8), so √((1 − α)/2) = √(9/16) = 0.75 = γ_max:
# no split (< fails).  The other cross cosines are −0.33, −0.24, −0.45;
# within the clusters 0.97 and 0.99; ‖Δθ_c‖ = 3.92 < ε₁ = 4.5, max =
# 8.19 > ε₂ = 0.875.
BND_GAMMA = [[1.0, 0.0, 0.0, 0.0, 0.0], [1.0, -0.25, 0.0, 0.0, 0.0],
             [-1.0, 7.0, 3.0, 2.0, 1.0], [-2.0, 7.0, 3.0, 2.0, 1.0]]


def boundary_gamma():
    hp = {"eta": 0.5, "eps1": 4.5, "eps2": 0.875, "gamma_max": 0.75}
    return bnd_make("boundary-gamma",
                    "CFL on the γ boundary: γ_max = √((1 − α_max^cross)/2) = 0.75, no split",
                    "Five-dimensional updates (1, 0, 0, 0, 0), (1, −0.25, 0, 0, 0), "
                    "(−1, 7, 3, 2, 1), (−2, 7, 3, 2, 1): Algorithm 1 pairs {0,1} | "
                    "{2,3} and α_max^cross = cos(Δθ₀, Δθ₂) = −1/8 exactly, so "
                    "√((1 − α)/2) = 3/4 = γ_max and the strict test γ_max < 3/4 "
                    "fails; both ε tests pass by a wide margin, so ≤ would split.",
                    BND_GAMMA, hp, bnd_checks(cross=pc.Fraction(-1, 8)),
                    ["cfl-gamma-test"], None)


# Algorithm 1's order of equal similarities.  Three clients with updates
# (1, 0), (1, 1), (0, 1): α₀₁ = α₁₂ = 1/√2 exactly in fp64 too (the same
# dot product 1 over the same product √1·√2 of scaled norms, in either
# order), α₀₂ = 0.  The stable row-major sort takes (0, 1) before (1, 2), so
# the first merge gives {0, 1} | {2}; the reverse order gives {0} | {1, 2}.
# Both ε tests and the γ test pass by a wide margin either way (‖Δθ_c‖ =
# 0.94 < 2, max ‖Δθ_i‖ = 1.41 > 1, γ_max = 1/4 < √((1 − 1/√2)/2) = 0.38).
BND_TIE = [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]


def boundary_tie_order():
    hp = {"eta": 0.5, "eps1": 2.0, "eps2": 1.0, "gamma_max": 0.25}

    def check(trace, v):
        rows = notes_of(trace, "similarity")
        assert rows[0][1] == rows[1][2] and rows[0][2] == 0.0
        assert notes_of(trace, "partition")[0] == [0, 0, 1]

    model = {"kind": "quadratic", "d": 2}
    rounds = [{"clients": [0, 1, 2], "drawn": [2, 0, 1],
               "batches": [[[0]] for _ in range(3)]}]
    return make("boundary-tie-order",
                "CFL with two equal similarities: Algorithm 1's stable order splits {0,1} | {2}",
                "Updates (1, 0), (1, 1), (0, 1): α₀₁ = α₁₂ = 1/√2 (equal in fp64 too) "
                "and α₀₂ = 0. Algorithm 1 sorts the flat indices by decreasing α, "
                "equal values in row-major order, so (0, 1) merges first and the "
                "bipartition is {0, 1} | {2}; taking the tie the other way gives "
                "{0} | {1, 2}. Every split test passes by a wide margin.",
                None, None, hp, None, None, ["cfl-bipartition"], check, BND_SRC,
                data=(model, bnd_clients(BND_TIE), rounds),
                only={"cfl-bipartition": ["cfl-ties-reversed"]}, tol=TOL_EXACT)


# Algorithm 1's order of equal similarities that rounding cannot move.  A
# client whose update is exactly 0 (c = 0: its gradient at θ = 0 is 0, so
# its one step leaves θ = 0 in any arithmetic) has α = 0 with every other
# client by the zero-norm rule (golden/pflref_exact_cfl.py, ref/engine/
# cluster.c): α₀₁ = α₁₂ = 0 exactly, in fp64, in float32 and in every Monte
# Carlo run of check --candidate-precision (a relative perturbation of 0 is
# 0; docs/validate.md, "Candidate precision").  α₀₂ = −1.375/√(1.25 ·
# 2.3125) ≈ −0.81 < 0, so the first merge after the diagonal is the first
# zero in row-major order, (0, 1): {0, 1} | {2}; the reverse order takes
# (2, 1) first: {0} | {1, 2}.  ‖Δθ_c‖ = ‖(−1/6, 1/4)‖ ≈ 0.30 < ε₁ = 2,
# max ‖Δθ_i‖ = ‖Δθ₂‖ ≈ 1.52 > ε₂ = 1, γ_max = 1/4 < √((1 − 0)/2) ≈ 0.71.
BND_TIE_ZERO = [[1.0, 0.5], [0.0, 0.0], [-1.5, 0.25]]


def boundary_tie_zero_update():
    hp = {"eta": 0.5, "eps1": 2.0, "eps2": 1.0, "gamma_max": 0.25}

    def check(trace, v):
        rows = notes_of(trace, "similarity")
        assert rows[0][1] == rows[1][2] == 0 and rows[0][2] < 0, rows
        assert notes_of(trace, "partition")[0] == [0, 0, 1]

    model = {"kind": "quadratic", "d": 2}
    rounds = [{"clients": [0, 1, 2], "drawn": [2, 0, 1],
               "batches": [[[0]] for _ in range(3)]}]
    return make("boundary-tie-zero-update",
                "CFL with a zero update: α₀₁ = α₁₂ = 0 in any arithmetic, "
                "Algorithm 1's stable order splits {0,1} | {2}",
                "Updates (1, 0.5), (0, 0), (−1.5, 0.25): client 1's update is exactly "
                "0 (c = 0 at θ = 0), so its similarity to every client is 0 by the "
                "zero-norm rule, α₀₁ = α₁₂ = 0 exactly in any precision, and α₀₂ ≈ "
                "−0.81. Algorithm 1 takes equal values in row-major order, so (0, 1) "
                "merges first: {0, 1} | {2}; taking the tie the other way gives "
                "{0} | {1, 2}. Every split test passes by a wide margin. Unlike "
                "boundary-tie-order, rounding cannot break this tie, so a float32 "
                "check can tell the two orders apart.",
                None, None, hp, None, None, ["cfl-bipartition"], check, BND_SRC,
                data=(model, bnd_clients(BND_TIE_ZERO), rounds),
                only={"cfl-bipartition": ["cfl-ties-reversed"]}, tol=TOL_EXACT)


# Complete linkage's order of equal links (cfl.bipartition =
# complete_linkage), on a tie that rounding cannot break.  Updates u₀ =
# (1, −0.5), u₁ = (1, 0.25), u₂ = 0 (c = 0, as in boundary-tie-zero-update),
# u₃ = (0.25, 1.25): client 2's similarity to every client is 0 by the
# zero-norm rule, in any arithmetic; α₀₁ ≈ 0.759 is the largest, α₁₃ ≈ 0.428,
# α₀₃ ≈ −0.263.  The first merge is {0, 1}; then the links are L({0,1}, 2) =
# min(α₀₂, α₁₂) = 0, L({0,1}, 3) = min(α₀₃, α₁₃) ≈ −0.263 and L(2, 3) = α₂₃ =
# 0: two equal links, and the first pair in the scan, ({0,1}, 2), merges:
# {0, 1, 2} | {3}.  Taking the later pair (≥ for >) gives {0, 1} | {2, 3};
# Algorithm 1 would give {0, 1, 3} | {2} (α₁₃ is the second largest), so
# each of the three readings gives its own split.  ‖Δθ_c‖ ≈ 0.62 < ε₁ = 2,
# max ‖Δθ_i‖ ≈ 1.27 > ε₂ = 1, and γ_max = 1/4 < √((1 − α_max^cross)/2) ≈
# 0.53 for either tie order (α_max^cross = α₁₃ in both).
BND_TIE_CL = [[1.0, -0.5], [1.0, 0.25], [0.0, 0.0], [0.25, 1.25]]


def boundary_tie_complete_linkage():
    hp = {"eta": 0.5, "eps1": 2.0, "eps2": 1.0, "gamma_max": 0.25}
    sw = {"cfl.bipartition": "complete_linkage"}

    def check(trace, v):
        rows = notes_of(trace, "similarity")
        assert rows[0][2] == rows[1][2] == rows[2][3] == 0, rows
        assert rows[0][1] > rows[1][3] > 0 > rows[0][3], rows
        assert notes_of(trace, "partition")[0] == [0, 0, 0, 1]
        # Algorithm 1 on the same updates splits {0, 1, 3} | {2}
        spec = BND_TIE_CL_SPEC[0]
        other = pc.replay(dict(spec, algorithm=dict(spec["algorithm"], switches={})))[0]
        assert notes_of(other, "partition")[0] == [0, 0, 1, 0]

    model = {"kind": "quadratic", "d": 2}
    cls, rounds = bnd_clients(BND_TIE_CL), bnd_rounds(4)
    BND_TIE_CL_SPEC.append(bare_spec(model, cls, hp, sw, rounds))
    return make("boundary-tie-complete-linkage",
                "CFL, complete linkage with two equal links: the first pair in the "
                "scan merges, {0,1,2} | {3}",
                "Updates (1, −0.5), (1, 0.25), (0, 0), (0.25, 1.25), cfl.bipartition "
                "= complete_linkage: client 2's update is exactly 0, so its "
                "similarity to every client is 0 by the zero-norm rule in any "
                "precision. After {0, 1} merges (α₀₁ ≈ 0.759, the largest), the "
                "links of ({0,1}, 2) and (2, 3) are both 0 and that of ({0,1}, 3) "
                "is −0.263, so the first pair in the scan merges: {0, 1, 2} | {3}; "
                "taking the later pair gives {0, 1} | {2, 3}, and Algorithm 1 "
                "{0, 1, 3} | {2}. Every split test passes by a wide margin, and "
                "rounding cannot break the tie, so a float32 check tells the two "
                "orders apart.",
                None, None, hp, sw, None, ["cfl-bipartition"], check,
                f"{NOTES} §1.9 (the notebook's complete linkage, ties to the "
                "first pair) and the zero-norm rule of ref/engine/cluster.c; "
                "exact zero links on the tie (golden/boundaries.py)",
                data=(model, cls, rounds),
                only={"cfl-bipartition": ["cfl-bipartition-flip", "cfl-ties-reversed"]}, tol=TOL_EXACT)


BND_TIE_CL_SPEC = []


MAKERS = [seed003, seed003_samples, seed003_gamma, lambda: counter("optimal"),
          lambda: counter("complete_linkage"), nested, linear_minibatch,
          spread_complete_linkage, thresholds_warmup, thresholds_min_size,
          boundary_eps1, boundary_eps2, boundary_min_size, boundary_gamma,
          boundary_tie_order, boundary_tie_zero_update, boundary_tie_complete_linkage]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
