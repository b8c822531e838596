#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedFomo golden vectors (Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021,
arXiv 2012.08565v3, Alg. 1; shared/spec notes-fedbn-fedfomo.md §2.3-§2.6),
computed in exact rational arithmetic by golden/pflref_exact_fedfomo.py.

  worked-hand      small enough to check by hand: three quadratic clients
                   f_i = ½ (2 (θ₁ − c_i1)² + ½ (θ₂ − c_i2)²), w⁰ = 0,
                   η = 1/4, so one step from 0 lands on η a ⊙ c_i:
                   θ⁰ = (−6, −8), (5, −12), (−3, 4) (norms 10, 13, 5).
                   Round 0: every model is w⁰, every distance 0, so every
                   weight is 0 (the distance-0 rule) and each client takes
                   a pure local step.  Round 1, anchors φ = w⁰:
                   client 0 (peers 1, 2): L_0(0) = 1168; r = 174/5 (own),
                   203/13 (client 1), −69/5 (client 2, clipped), so
                   w = (78/113, 35/113, 0) and φ_0 = (−293/113, −1044/113);
                   client 1 (peer 2): r = 615/13 (own), −969/20 (client 2):
                   w = (0, 1, 0), φ_1 = θ_1⁰;
                   client 2 (no peers, M = 0): only its own upload, w = 1.
                   Then one local step θ ← θ − η a ⊙ (θ − c_i).
  linear-val       linear d = 2 with a bias, loss half_squared, four
                   clients with validation splits (L_i on X_val), three
                   rounds with partial participation, minibatches, peer
                   lists of 0 to 3 models, irrational distances; round 1's
                   drawn order (3, 0, 2) differs from its clients.
  linear-val-l1    the same data under fedfomo.distance = l1 (all exact),
                   with loss (ŷ − y)² and η = 0.15.
  linear-val-excl  the same run under fedfomo.self = excluded.

    /usr/bin/python3 golden/fedfomo/make_worked.py [OUTDIR]
"""
import json
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
# exact runs without square roots (l1, l2_squared) grow denominators past
# Python's default limit on integer-to-text conversion
sys.set_int_max_str_digits(0)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_fedfomo as pf   # noqa: E402
import pflref_golden as pg          # noqa: E402

NOTES = "shared/spec notes-fedbn-fedfomo.md"
GENERATOR = ("golden/fedfomo/make_worked.py (exact fractions, "
             "pflref_exact_fedfomo.py)")
TOL_HAND = {
    "atol": 1e-14, "rtol": 1e-13,
    "basis": "fp64 reference against exact rationals: two rounds of one "
             "step on values below 100 with Pythagorean distances (square "
             "roots of perfect squares, exact in fp64); a few roundings per "
             "value; every flagged bug moves some value by more than 1e3 "
             "times the tolerance",
}
TOL_LINEAR = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against exact rationals (irrational norms "
             "within 1e-70): three rounds of up to three minibatch steps on "
             "values below 10; each weight is a quotient of a loss "
             "difference (cancellation of values of order 1 to about 1e-2) "
             "by a square root, which costs up to two digits; every flagged "
             "bug moves some value by more than 1e3 times the tolerance",
}


def make(name, title, description, spec, flags, check, tol, source, only=None):
    vid = f"fedfomo/worked/{name}"

    def run(bugs=frozenset()):
        return pf.replay(spec, frozenset(bugs))

    result = run()
    check(result[0], result[2])
    mutants = {f: (only or {}).get(f, pf.MUTANTS[f]) for f in flags}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR,
                         {f"theta_{i}": v for i, v in enumerate(result[2])})
    spec["description"] = description
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec,
                                            tol, exp)


def notes(trace, name, rnd, client):
    return [r["value"] for r in trace.records if r["event"] == "note"
            and r["name"] == name and r.get("round") == rnd
            and r.get("client") == client][0]


# ---------------------------------------------------------------- by hand

A = [2.0, 0.5]
HAND_C = [[-12.0, -64.0], [10.0, -96.0], [-6.0, 32.0]]   # c_i = θ_i⁰ / (η a)


def hand_spec(switches=None):
    clients = [{"a": A, "c": c} for c in HAND_C]
    one = [[[0]], [[0]], [[0]]]
    rounds = [{"clients": [0, 1, 2], "batches": one, "peers": [[1, 2], [2], []]},
              {"clients": [0, 1, 2], "batches": one, "peers": [[1, 2], [2], []]}]
    alg = {"name": "fedfomo", "hyperparameters": {"eta": 0.25}}
    if switches:
        alg["switches"] = switches
    return pg.given_spec(
        "FedFomo by hand: three quadratic clients, two rounds", None,
        {"kind": "quadratic", "d": 2}, clients, {"kind": "zeros"}, alg, rounds)


def hand_raw():
    """The hand example under fedfomo.P_update = raw (PFLlib): the affinity
    rows hold the ratios themselves, P_0 = (174/5, 203/13, −69/5) after
    round 1, so the scale of L_i and of the distances shows."""
    spec = hand_spec({"fedfomo.P_update": "raw"})
    spec["name"] = "FedFomo by hand, P_update = raw"

    def check(trace, v):
        assert notes(trace, "P", 1, 0) == [F(174, 5), F(203, 13), F(-69, 5)]
        assert notes(trace, "weights", 1, 0) == [F(78, 113), F(35, 113), 0]

    return make("hand-raw", "FedFomo by hand under P_update = raw: the "
                "affinity row holds r = (174/5, 203/13, −69/5)",
                "The hand example (quadratic, a = (2, 1/2), η = 1/4) with "
                "fedfomo.P_update = raw (PFLlib's receive_models): P_{i,n} += "
                "r_n, the ratios before clipping and normalisation.",
                spec, ["fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
                       "fedfomo-affinity"],
                check, TOL_HAND,
                f"{NOTES} §2.3 (steps 1-8), §2.8 (fomo.P_update = raw); the "
                "ratios of the hand example (the generator's docstring)")


def hand():
    spec = hand_spec()

    def check(trace, v):
        for i in range(3):   # round 0: all distances 0, all weights 0
            assert notes(trace, "weights", 0, i) == [0, 0, 0]
            assert notes(trace, "phi", 0, i) == [0, 0]
        assert notes(trace, "weights", 1, 0) == [F(78, 113), F(35, 113), 0]
        assert notes(trace, "phi", 1, 0) == [F(-293, 113), F(-1044, 113)]
        assert notes(trace, "weights", 1, 1) == [0, 1, 0]
        assert notes(trace, "phi", 1, 1) == [5, -12]
        assert notes(trace, "weights", 1, 2) == [0, 0, 1]
        assert notes(trace, "P", 1, 0) == [F(78, 113), F(35, 113), 0]
        # θ ← φ − η a ⊙ (φ − c): coordinate 1 halves the gap, 2 takes 1/8
        assert v[0] == [F(-293, 226) - 6, F(7, 8) * F(-1044, 113) - 8], v[0]
        assert v[1] == [F(15, 2), -12 - F(84, 8)], v[1]
        assert v[2] == [F(-9, 2), 4 + F(28, 8)], v[2]

    return make("hand", "FedFomo by hand: weights 78/113, 35/113 and a "
                "clipped peer; M = 0; round 0 all distances 0",
                "Quadratic f_i = ½ Σ a (θ − c_i)², a = (2, 1/2), η = 1/4, "
                "w⁰ = 0; round 0 is a pure local step (every model is w⁰); "
                "round 1 weights from the uploads θ⁰ = (−6, −8), (5, −12), "
                "(−3, 4) against the anchors w⁰ (see the generator's "
                "docstring for every number).",
                spec, ["fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
                       "fedfomo-self", "fedfomo-affinity", "fedfomo-order"],
                check, TOL_HAND,
                f"{NOTES} §2.3 (steps 1-8), §2.6 (zero distance, M = 0); "
                "worked by hand (the generator's docstring)")


# ---------------------------------------------------------------- linear

LIN = {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"}
LIN_CLIENTS = [
    {"X": [[1.0, 0.5], [-0.5, 1.5], [2.0, -1.0]], "y": [1.25, 0.5, 2.0],
     "X_val": [[1.5, 0.25], [-1.0, 1.0]], "y_val": [1.5, -0.25]},
    {"X": [[0.5, 1.0], [1.5, 0.5], [-1.0, -0.5], [0.25, 2.0]],
     "y": [-0.75, 0.25, 1.0, -1.5],
     "X_val": [[1.0, 1.25], [-0.5, 0.5]], "y_val": [-0.5, 0.75]},
    {"X": [[2.0, 1.5], [-1.5, 0.25]], "y": [1.75, -0.5],
     "X_val": [[0.75, 1.0], [1.25, -0.75], [0.5, 0.5]],
     "y_val": [1.0, 0.25, 0.5]},
    {"X": [[0.25, -1.0], [1.0, 1.0], [-0.75, 0.5], [1.5, -0.25], [0.5, 2.5]],
     "y": [0.5, 1.5, -0.25, 1.0, 2.25],
     "X_val": [[1.0, -0.5], [0.5, 1.5]], "y_val": [0.75, 1.25]},
]
LIN_ROUNDS = [
    {"clients": [0, 1, 2, 3],
     "batches": [[[0, 1], [2]], [[0, 2], [1, 3]], [[1], [0]], [[0, 1, 2], [3, 4]]],
     "peers": [[1], [0, 2], [], [2, 1]]},
    {"clients": [0, 2, 3], "drawn": [3, 0, 2],
     "batches": [[[2, 0], [1]], [[0, 1]], [[4, 1], [2, 0, 3]]],
     "peers": [[1, 2], [0, 1, 3], [2]]},
    {"clients": [0, 1, 2, 3],
     "batches": [[[1, 2]], [[3, 0], [2]], [[1], [0]], [[2, 3]]],
     "peers": [[3], [0, 2], [], [0, 1, 2]]},
]


def linear(name, switches, title, extra_flags, loss="half_squared", eta=0.3,
           hyper=None, only=None):
    alg = {"name": "fedfomo", "hyperparameters": dict({"eta": eta},
                                                      **(hyper or {}))}
    if switches:
        alg["switches"] = switches
    spec = pg.given_spec(title, None, dict(LIN, loss=loss), LIN_CLIENTS,
                         {"kind": "given", "w": [0.25, -0.5, 0.125]}, alg,
                         [dict(r) for r in LIN_ROUNDS])

    def check(trace, v):
        # round 1 of client 0 mixes at least two candidates with 0 < w < 1
        w = notes(trace, "weights", 1, 0) + notes(trace, "weights", 2, 3)
        assert sum(1 for x in w if 0 < x < 1) >= 2, w

    flags = ["fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
             "fedfomo-anchor", "fedfomo-self", "fedfomo-val-loss",
             "fedfomo-stale-uploads", "fedfomo-order",
             "fedfomo-affinity"] + extra_flags
    if switches and switches.get("fedfomo.self") == "excluded":
        # the mutant trains before the update by swapping in the trained
        # own model as a candidate, which this switch leaves out
        flags.remove("fedfomo-order")
    return make(name, title,
                f"Linear d = 2 with a bias, loss {loss}, η = {eta}, "
                "w⁰ = (0.25, −0.5, 0.125); four clients with validation "
                "splits (L_i on X_val, y_val); three rounds, round 1 without "
                "client 1 and drawn in another order than the clients (the "
                "batches and peers follow clients); minibatch steps; peer "
                "lists of 0 to 3 models.",
                spec, flags, check, TOL_LINEAR,
                f"{NOTES} §2.3 (steps 1-8), §2.4 (validation split)", only)


# ---------------------------------------------------------------- draws

# The run-time choice (notes §2.5): the same data, four rounds whose
# downloads are chosen from P by the ε-greedy rule with the draws (π, u)
# given as data; ε₀ = 1/2, δ = 1/8, so ε_t = 1/2, 3/8, 1/4, 1/8, and every
# u is a dyadic rational at least 1/16 away from every ε_t.
DRAW_ROUNDS = [
    {"clients": [0, 1, 2, 3],
     "batches": [[[0, 1], [2]], [[0, 2], [1, 3]], [[1], [0]], [[0, 1, 2], [3, 4]]],
     "peer_draws": [{"order": [2, 1, 3], "u": [0.0625, 0.75]},
                    {"order": [3, 0, 2], "u": [0.875, 0.1875]},
                    {"order": [1, 3, 0], "u": [0.625]},
                    {"order": [0, 2, 1], "u": [0.3125, 0.9375, 0.0625]}]},
    {"clients": [0, 2, 3], "drawn": [3, 0, 2],
     "batches": [[[2, 0], [1]], [[0, 1]], [[4, 1], [2, 0, 3]]],
     "peer_draws": [{"order": [3, 1, 2], "u": [0.6875, 0.125]},
                    {"order": [0, 3, 1], "u": [0.5625, 0.8125]},
                    {"order": [2, 1, 0], "u": [0.25, 0.6875]}]},
    {"clients": [0, 1, 2, 3],
     "batches": [[[1, 2]], [[3, 0], [2]], [[1], [0]], [[2, 3]]],
     "peer_draws": [{"order": [1, 3, 2], "u": [0.0625, 0.5]},
                    {"order": [2, 3, 0], "u": [0.75, 0.875]},
                    {"order": [0, 1, 3], "u": [0.4375, 0.0625]},
                    {"order": [1, 2, 0], "u": [0.9375, 0.125]}]},
    {"clients": [0, 1, 2, 3],
     "batches": [[[0]], [[1]], [[0, 1]], [[4]]],
     "peer_draws": [{"order": [3, 2, 1], "u": [0.0, 0.4375]},
                    {"order": [0, 2, 3], "u": [0.0625, 0.375]},
                    {"order": [3, 0, 1], "u": [0.3125, 0.75]},
                    {"order": [0, 2, 1], "u": [0.8125, 0.0]}]},
]


# The ε-greedy rule on its boundary (issue 33 §3): the draws of
# DRAW_ROUNDS with u = ε_t exactly in two slots (round 0, client 0's first:
# u = 1/2 = ε_0; round 1, client 3's first: u = 3/8 = ε_1).  The paper's
# slot explores when u < ε_t, so these two slots exploit (take G's best);
# u ≤ ε_t would explore (take π's next) and download other models.
DRAW_ROUNDS_BND = json.loads(json.dumps(DRAW_ROUNDS))
DRAW_ROUNDS_BND[0]["peer_draws"][0]["u"][0] = 0.5
DRAW_ROUNDS_BND[1]["peer_draws"][2]["u"][0] = 0.375


def draws(name, switches, title, flags, hyper=None, loss="half_squared",
          eta=0.3, only=None, rounds=None):
    hp = {"eta": eta, "fedfomo.epsilon0": 0.5, "fedfomo.delta": 0.125}
    hp.update(hyper or {})
    alg = {"name": "fedfomo", "hyperparameters": hp}
    if switches:
        alg["switches"] = switches
    spec = pg.given_spec(title, None, dict(LIN, loss=loss), LIN_CLIENTS,
                         {"kind": "given", "w": [0.25, -0.5, 0.125]}, alg,
                         [dict(r) for r in (rounds or DRAW_ROUNDS)])

    def check(trace, v):
        # from round 1 on some row of P is not constant, so G matters
        assert any(len(set(notes(trace, "P", 1, i))) > 1 for i in (0, 2, 3))
        if rounds is DRAW_ROUNDS_BND:     # the two slots on ε_t
            assert hp["fedfomo.epsilon0"] == 0.5 and hp["fedfomo.delta"] == 0.125
            assert rounds[0]["peer_draws"][0]["u"][0] == 0.5 - 0.125 * 0
            assert rounds[1]["peer_draws"][2]["u"][0] == 0.5 - 0.125 * 1

    return make(name, title,
                f"Linear d = 2 with a bias, loss {loss}, η = {eta}, "
                "w⁰ = (0.25, −0.5, 0.125); four clients with validation "
                "splits; four rounds whose downloads are chosen at run time "
                "from the affinity matrix P by the ε-greedy rule (ε₀ = 1/2, "
                "δ = 1/8) with the draws π and u given as data "
                "(\"peer_draws\"); switches: "
                + (", ".join(f"{k} = {v}" for k, v in switches.items())
                   if switches else "the paper's") + ".",
                spec, flags, check, TOL_LINEAR,
                f"{NOTES} §2.3 (steps 1-8), §2.5 (the ε-greedy choice), "
                "§2.7 Example C, §2.8 (the switches)", only)


DRAW_FLAGS = ["fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
              "fedfomo-val-loss", "fedfomo-selection", "fedfomo-epsilon",
              "fedfomo-affinity"]

def linear_batches():
    """linear-val's run under val_loss = batch_mean with val_batch = 2 (so
    client 2's three validation samples make a batch of 2 and one of 1)
    and distance = l2_per_tensor_sum (‖Δw‖₂ + |Δb|)."""
    name, vec = linear(
        "linear-val-batches", {"fedfomo.val_loss": "batch_mean",
                               "fedfomo.distance": "l2_per_tensor_sum"},
        "FedFomo, L_i as the mean of batch means (val_batch = 2) and the "
        "distance as the sum of the tensors' norms", ["fedfomo-val-batches"],
        hyper={"fedfomo.val_batch": 2},
        only={"fedfomo-distance": ["fomo-squared-dist"]})
    return name, vec


# req: fedfomo.preset.pfllib
def draws_pfllib_run():
    """PFLlib's FedFomo as it runs, by the preset pfllib alone (with -ld):
    top-M of the whole row P_{i,·}, own entry included (fedfomo.self =
    ranked), the anchor the model local training started from, L_i the
    mean of batch means (val_batch = 2: client 2's three validation
    samples make batches of 2 and 1), norm + 1e-5, P = I plus raw ratios,
    the current model kept when no ratio is positive, and η decayed by
    0.75 per own training (lr.count = trainings; client 1 skips round 1)."""
    hp = {"eta": 0.3, "fedfomo.val_batch": 2, "lr.gamma": 0.75}
    alg = {"name": "fedfomo", "preset": "pfllib", "hyperparameters": hp,
           "switches": {"lr.schedule": "exponential"}}
    title = ("FedFomo as PFLlib runs it, by the preset pfllib: top-M of "
             "the whole affinity row, anchor before training, mean of "
             "batch means, per-client -ld decay")
    spec = pg.given_spec(title, None, LIN, LIN_CLIENTS,
                         {"kind": "given", "w": [0.25, -0.5, 0.125]}, alg,
                         [dict(r) for r in DRAW_ROUNDS])

    def check(trace, v):
        # the raw ratios move row i of P off the identity, so the ranking
        # (own entry included) is not the same as "own + the others":
        # both readings of fedfomo.self are mutants that must move the
        # vector (fedfomo-ranked), checked by pg.checked_expected
        assert any(notes(trace, "P", 2, i)[i] != 1 for i in (0, 1, 2, 3))

    return make("draws-pfllib-run", title,
                "Linear d = 2 with a bias, loss half_squared, η = 0.3, "
                "w⁰ = (0.25, −0.5, 0.125); four clients with validation "
                "splits; four rounds whose downloads are the M = |u| "
                "largest entries of row i of P, the own entry included "
                "(PFLlib's send_models); preset pfllib with "
                "fedfomo.val_batch = 2, lr.schedule = exponential, "
                "lr.gamma = 0.75 (client 1 skips round 1, so its decay "
                "counts its own trainings).",
                spec, ["fedfomo-clip", "fedfomo-distance", "fedfomo-val-loss",
                       "fedfomo-affinity", "fedfomo-anchor",
                       "fedfomo-ranked", "fedfomo-val-batches", "lr-count"],
                check, TOL_LINEAR,
                f"{NOTES} §2.3, §2.5, §2.8; TsingZ0/PFLlib d832e76f6a23 "
                "clientfomo.py (train, weight_cal, recalculate_loss, "
                "weight_scale) and serverfomo.py (send_models, "
                "receive_models), restated in pflref_exact_fedfomo.PRESETS",
                only={"fedfomo-distance": ["fomo-squared-dist"]})


# req: fedfomo.eq.zero_rounding
def equal_rounding(scale=1, tau=None):
    """The zero-distance rule where rounding decides it (issue 33 §2):
    round 1 gives client 0 one positive weight, w_1 = 1 on client 1's
    upload θ_1⁰, so φ_0 = a + 1·(θ_1⁰ − a) = θ_1⁰ exactly; in fp64 it is
    fl(0.1 + fl(θ − 0.1)), one ulp off θ_1⁰ in its first coordinate.
    Client 1 sits out rounds 1 and 2, so in round 2 client 0's only
    candidate θ_1⁰ equals its anchor φ_0: r_1 = 0 (exactly here, and up to
    fedfomo.equal_rtol in the C), where the ulp distance would give a
    ratio of rounding noise (1 on these numbers), weight 1 and P_{0,1} one
    too large (P_update = raw keeps r in P).  scale = 64: w⁰ and every c_i
    times 64, which fp64 and exact arithmetic carry through exactly (a
    power of 2), so the same coordinate is one ulp off at 16, an ulp of
    1.8e-15 > 2⁻⁵⁰: the tolerance is relative, not absolute.

    tau = 2⁻⁵³ (issue 33 §3, the boundary of l. 3's equality up to
    rounding): fedfomo.equal_rtol set so that the one-ulp difference sits
    exactly on the bound, |x − a| = 2⁻⁵⁵ = τ max(|x|, |a|) = 2⁻⁵³ · 1/4 in
    fp64 (a power of 2 times a power of 2: the product is exact).  The
    C's test |x − a| > τ max says "equal" (r_1 = 0, this generator's exact
    run); the non-strict ≥ would call the candidate different and give it
    the ulp distance's ratio, weight 1 and P_{0,1} changed."""
    A2 = [[1.5, 0.75], [1.25, 2.5], [0.5, 1.75]]
    C2 = [[c * scale for c in cc]
          for cc in [[-0.43, 4.81], [-1.02, 8.96], [-1.27, 1.0]]]
    W0 = [0.1 * scale, -0.6 * scale]
    one = [[0]]
    rounds = [{"clients": [0, 1, 2], "batches": [one, one, one]},
              {"clients": [0, 2], "batches": [one, one],
               "peers": [[1], [0]]},
              {"clients": [0, 2], "batches": [one, one],
               "peers": [[1], [1]]}]
    alg = {"name": "fedfomo", "hyperparameters": {"eta": 0.25},
           "switches": {"fedfomo.self": "excluded",
                        "fedfomo.P_update": "raw"}}
    title = ("FedFomo's zero distance up to rounding: a candidate equal to "
             "the anchor in exact arithmetic, one ulp off in fp64, gets r = 0")
    if tau is not None:
        alg["hyperparameters"]["fedfomo.equal_rtol"] = tau
        on_bound = boundary_entries(W0, A2[1], C2[1], 0.25, tau)
        assert on_bound == [0], on_bound
        title = ("FedFomo's zero distance up to rounding with the one-ulp "
                 "difference exactly on fedfomo.equal_rtol's bound: r = 0")
    spec = pg.given_spec(title, None, {"kind": "quadratic", "d": 2},
                         [{"a": a, "c": c} for a, c in zip(A2, C2)],
                         {"kind": "given", "w": W0}, alg, rounds)

    def check(trace, v):
        assert notes(trace, "weights", 1, 0) == [0, 1, 0]
        # φ_0 = θ_1⁰ = w⁰ − η a_1 ⊙ (w⁰ − c_1), exactly
        th1 = [pg.exact(w) - F(1, 4) * pg.exact(a) * (pg.exact(w) - pg.exact(c))
               for w, a, c in zip(W0, A2[1], C2[1])]
        assert notes(trace, "phi", 1, 0) == th1
        # round 2: the candidate is the anchor exactly, so r_1 = 0 and
        # P_{0,1} keeps round 1's ratio
        assert notes(trace, "weights", 2, 0) == [0, 0, 0]
        assert notes(trace, "P", 2, 0) == notes(trace, "P", 1, 0)

    name = "equal-rounding" + ("" if scale == 1 else "-x%d" % scale) + \
        ("" if tau is None else "-on-tau")
    return make(name, title + ("" if scale == 1 else
                               " (×%d: a relative tolerance)" % scale),
                "Quadratic f_i = ½ Σ a_i (θ − c_i)², three clients, "
                "w⁰ = %r, η = 1/4, fedfomo.self = excluded, " % (W0,) +
                ("" if tau is None else
                 "fedfomo.equal_rtol = 2^-53 (the fp64 difference 2^-55 = "
                 "τ · 1/4 exactly: the strict > of the bound decides "
                 "equal), ") +
                "P_update = raw; round 1: client 0's one candidate θ_1⁰ "
                "gets weight 1; round 2 (client 1 still out): that "
                "candidate equals client 0's anchor exactly, one ulp off in "
                "fp64 (fedfomo.equal_rtol decides it).",
                spec, ["fedfomo-clip", "fedfomo-distance", "fedfomo-anchor",
                       "fedfomo-stale-uploads"],
                check, TOL_HAND,
                f"{NOTES} §2.3 step 3 (the zero-distance rule), §2.6; "
                "docs/algorithms/fedfomo.md, Equality up to rounding",
                only={"fedfomo-distance": ["fomo-squared-dist"]})


def boundary_entries(w0, a, c, eta, tau):
    """The coordinates where the fp64 path of equal_rounding's round 1
    (θ = w − η (a (w − c)), φ = w + 1 · (θ − w), each operation rounded as
    IEEE double arithmetic rounds it: Python's floats) leaves θ and φ
    different, with |θ − φ| exactly fl(τ max(|θ|, |φ|)); every other
    coordinate is asserted bitwise equal or, when different, off the bound
    by at least a factor 2 either way."""
    on = []
    for p, (w, ap, cp) in enumerate(zip(w0, a, c)):
        th = w - eta * (ap * (w - cp))
        phi = w + 1.0 * (th - w)
        diff, bound = abs(th - phi), tau * max(abs(th), abs(phi))
        if diff != 0.0 and diff == bound:
            on.append(p)
        else:
            assert diff == 0.0 or diff > 2 * bound or 2 * diff < bound, p
    return on


MAKERS = [
    hand,
    lambda: linear("linear-val", None,
                   "FedFomo, linear with validation splits, partial rounds", []),
    lambda: linear("linear-val-l1", {"fedfomo.distance": "l1"},
                   "FedFomo, fedfomo.distance = l1 (the authors' default), "
                   "loss squared", [], loss="squared", eta=0.15),
    lambda: linear("linear-val-excl", {"fedfomo.self": "excluded"},
                   "FedFomo, fedfomo.self = excluded (only the M downloads)",
                   []),
    lambda: draws("draws", None, "FedFomo, downloads chosen ε-greedily from "
                  "P at run time (draws as data)", DRAW_FLAGS),
    lambda: draws("draws-nvlabs",
                  {"fedfomo.distance": "l1", "fedfomo.P_update":
                   "signed_abs_sum", "fedfomo.P_init": "own_0.1",
                   "fedfomo.M_counts": "total"},
                  "FedFomo, run-time choice under the NVlabs code's switches "
                  "(L1, signed P update, own 1/10, M counts the own model)",
                  DRAW_FLAGS),
    lambda: draws("draws-pfllib",
                  {"fedfomo.selection": "topM", "fedfomo.P_update": "raw",
                   "fedfomo.P_init": "identity", "fedfomo.anchor":
                   "post_train", "fedfomo.no_positive": "keep_current"},
                  "FedFomo, PFLlib's switches (top-M of P, raw r in P, P = I, "
                  "anchor after training, keep the current model, norm + "
                  "1e-5)",
                  ["fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
                   "fedfomo-val-loss", "fedfomo-affinity"],
                  hyper={"fedfomo.distance_eps": 1e-5}),
    lambda: draws("draws-l2sq", {"fedfomo.distance": "l2_squared",
                                 "fedfomo.P_update": "raw"},
                  "FedFomo, fedfomo.distance = l2_squared (the code's "
                  "\"l2\", no root), P_update = raw, loss squared",
                  DRAW_FLAGS, loss="squared", eta=0.15,
                  only={"fedfomo-distance": ["fomo-squared-dist"]}),
    hand_raw,
    lambda: linear_batches(),
    # val_loss = batch_mean with val_batch = 0 (one batch: the whole set),
    # the boundary of 0 < B < n (issue 33 §3): the numbers of linear-val
    lambda: linear("linear-val-batch-zero", {"fedfomo.val_loss": "batch_mean"},
                   "FedFomo, val_loss = batch_mean with val_batch = 0 (one "
                   "batch of the whole validation set: L_i as in linear-val)",
                   [], hyper={"fedfomo.val_batch": 0}),
    lambda: draws("draws-on-epsilon", None, "FedFomo, ε-greedy draws with u = "
                  "ε_t exactly in two slots (the strict u < ε_t exploits)",
                  DRAW_FLAGS, rounds=DRAW_ROUNDS_BND),
    lambda: linear("linear-val-keep", {"fedfomo.no_positive": "keep_current"},
                   "FedFomo, fedfomo.no_positive = keep_current (PFLlib: no "
                   "candidate improves, the current model is kept)", []),
    draws_pfllib_run,
    equal_rounding,
    lambda: equal_rounding(64),
    # l. 3's equality up to rounding with the difference exactly on the
    # bound (issue 33 §3): the strict > decides "equal"
    lambda: equal_rounding(tau=2.0 ** -53),
]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
