#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pFedHN golden vectors (Shamsian, Navon, Fetaya, Chechik, ICML 2021,
arXiv 2103.04628v1, Alg. 1, linear hypernetwork; shared/spec
notes-lora-pfedhn.md §4, §4.1), computed in exact rational arithmetic by
golden/pflref_exact_pfedhn.py.

  notes-6-4      the worked example of notes §6.4, small enough to check by
                 hand: W_h = [[1/2, 0], [1/4, 1]], b_h = (0, 1/4),
                 v_0 = (1, 0), v_1 = (0, 1); client 0: x = (1, 2), y = 2;
                 client 1: x = (2, −1), y = 1; ŷ = θ·x, ½(ŷ − y)²,
                 η = α = 1/2, K = 1; round 0 samples client 0, round 1
                 client 1.
                 Round 0: θ_0 = (1/2, 1/2), ŷ = 3/2, ∇ = (−1/2, −1),
                 θ̃ = (3/4, 1), Δθ = (1/4, 1/2): W_h = [[5/8, 0], [1/2, 1]],
                 b_h = (1/8, 1/2), v_0 = (9/8, 1/4).
                 Round 1: θ_1 = (1/8, 3/2), ŷ = −5/4, ∇ = (−9/2, 9/4),
                 θ̃ = (19/8, 3/8), Δθ = (9/4, −9/8):
                 W_h = [[5/8, 9/8], [1/2, 7/16]], b_h = (5/4, −1/16),
                 v_1 = (27/64, 7/16).
                 Final θ_0 = (143/64, 39/64), θ_1 = (1027/512, 87/256).
  linear-bias    linear d = 2 with a bias (P = 3), e = 2, three clients of
                 4, 3 and 5 samples, η = 0.15, α = 0.3, α_v = 0.55; five
                 rounds sampling 2, 0, 2, 1, 0 (every client twice but
                 one, an embedding carried across rounds), K = 2 or 3
                 minibatches, W_h⁰ and v⁰ without zeros or ones.
  linear-nobias  the same clients under pfedhn.hn_bias = off (θ = W_h v),
                 loss squared, η = 0.07, α = 0.4, α_v unset (= α, the box).
  notes-6-4-official  the same example under preset official (notes'
                 script, part 4b): torch's momentum and weight decay.
  linear-official  preset official with its constants changed and clipping
                 active.
  linear-clip    pfedhn.clip = norm alone, plain SGD steps.
  mlp            the regression mlp d = 2, h = 2, k = 1, identity
                 activation (P = 9; the loss is still quartic in θ through
                 W2 W1), e = 3, two clients, three rounds, η = 1/8, α = 1/4,
                 α_v = 3/8, inputs in eighths (the mlp's gradient is cubic
                 in θ, so exact values of 52-bit inputs would grow too
                 long).

    /usr/bin/python3 golden/pfedhn/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)      # provenance measures long rationals
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_pfedhn as hn   # noqa: E402
import pflref_golden as pg         # noqa: E402

NOTES = "shared/spec notes-lora-pfedhn.md"
GENERATOR = ("golden/pfedhn/make_worked.py (exact fractions, "
             "pflref_exact_pfedhn.py)")
TOL_HAND = {
    "atol": 1e-14, "rtol": 1e-13,
    "basis": "fp64 reference against exact rationals: every input and "
             "intermediate value is a dyadic rational of few bits (exact in "
             "fp64), so the reference is exact; every flagged bug moves some "
             "value by more than 1e3 times the tolerance",
}
TOL_HAND_CODE = {
    "atol": 1e-14, "rtol": 1e-13,
    "basis": "fp64 reference against exact rationals of the binary inputs "
             "(0.9, 1e-3, 5e-5 at their doubles): two rounds of one step, "
             "a few tens of roundings on values below 3; every flagged bug "
             "moves some value by more than 1e3 times the tolerance",
}
TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against exact rationals of the binary inputs: "
             "at most five rounds of at most three minibatch steps and one "
             "hypernetwork step on values below 10 (a few tens of roundings "
             "per value, each below 1e-16 relative); every flagged bug moves "
             "some value by more than 1e3 times the tolerance",
}

TOL_SOFTMAX = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against exact rationals of the binary inputs, "
             "the class probabilities with 60-digit decimals and the state "
             "on the grid 1e-80 (errors below 1e-55): four rounds of at most "
             "three minibatch steps and one hypernetwork step on values "
             "below 10, each a few tens of roundings; every flagged bug "
             "moves some value by more than 1e3 times the tolerance",
}


def make(name, title, description, spec, flags, check, tol, source):
    vid = f"pfedhn/worked/{name}"

    def run(bugs=frozenset()):
        return hn.replay(spec, frozenset(bugs))

    result = run()
    check(result[0], result[2])
    mutants = {f: hn.MUTANTS[f] for f in flags}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR,
                         {f"theta_{i}": v for i, v in enumerate(result[2])})
    spec["description"] = description
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec,
                                            tol, exp)


def note(trace, name, rnd):
    return [r["value"] for r in trace.records
            if r["name"] == name and r.get("round") == rnd
            and r["event"] == "note"][0]


def rounds_of(plan):
    """[(client, [batches])] -> the given schedule's rounds."""
    return [{"clients": [i], "batches": [b]} for i, b in plan]


# ---------------------------------------------------------------- by hand

def notes_6_4():
    spec = pg.given_spec(
        "pFedHN by hand: notes §6.4, a linear hypernetwork with bias, two "
        "clients, one round each", None,
        {"kind": "linear", "d": 2, "bias": False, "loss": "half_squared"},
        [{"X": [[1.0, 2.0]], "y": [2.0]}, {"X": [[2.0, -1.0]], "y": [1.0]}],
        {"kind": "zeros",
         "hypernetwork": {"W": [[0.5, 0.0], [0.25, 1.0]], "b": [0.0, 0.25],
                          "v": [[1.0, 0.0], [0.0, 1.0]]}},
        {"name": "pfedhn", "hyperparameters": {"eta": 0.5, "alpha": 0.5}},
        rounds_of([(0, [[0]]), (1, [[0]])]))

    def check(trace, v):
        # every number of notes §6.4
        assert note(trace, "delta_theta", 0) == [F(1, 4), F(1, 2)]
        assert note(trace, "W_h", 0) == [F(5, 8), 0, F(1, 2), 1]
        assert note(trace, "b_h", 0) == [F(1, 8), F(1, 2)]
        assert note(trace, "embedding", 0) == [F(9, 8), F(1, 4)]
        assert note(trace, "delta_theta", 1) == [F(9, 4), F(-9, 8)]
        assert note(trace, "W_h", 1) == [F(5, 8), F(9, 8), F(1, 2), F(7, 16)]
        assert note(trace, "b_h", 1) == [F(5, 4), F(-1, 16)]
        assert note(trace, "embedding", 1) == [F(27, 64), F(7, 16)]
        assert v == [[F(143, 64), F(39, 64)], [F(1027, 512), F(87, 256)]], v

    return make("notes-6-4",
                "pFedHN by hand (notes §6.4): W_h = [[5/8, 9/8], [1/2, 7/16]], "
                "b_h = (5/4, −1/16), θ_0 = (143/64, 39/64)",
                "Linear hypernetwork θ_i = W_h v_i + b_h, e = 2, target "
                "ŷ = θ·x, ½(ŷ − y)², η = α = α_v = 1/2, K = 1; round 0 "
                "samples client 0, round 1 client 1 (see the generator's "
                "docstring for every number).",
                spec, ["pfedhn-sign", "pfedhn-simultaneous", "pfedhn-bias",
                       "pfedhn-embedding", "pfedhn-eval-model"],
                check, TOL_HAND,
                f"{NOTES} §4 (Alg. 1), §4.1 (linear hypernetwork), §6.4 "
                "(the worked example); worked by hand (the generator's "
                "docstring)")


def notes_6_4_official():
    spec = pg.given_spec(
        "pFedHN by hand, the authors' code (preset official): notes §6.4's "
        "script, part 4b", None,
        {"kind": "linear", "d": 2, "bias": False, "loss": "half_squared"},
        [{"X": [[1.0, 2.0]], "y": [2.0]}, {"X": [[2.0, -1.0]], "y": [1.0]}],
        {"kind": "zeros",
         "hypernetwork": {"W": [[0.5, 0.0], [0.25, 1.0]], "b": [0.0, 0.25],
                          "v": [[1.0, 0.0], [0.0, 1.0]]}},
        {"name": "pfedhn", "preset": "official",
         "hyperparameters": {"eta": 0.5, "alpha": 0.5}},
        rounds_of([(0, [[0]]), (1, [[0]])]))

    def check(trace, v):
        # round 0: θ̃ = θ − η (g + λ_i θ), λ_i = 5e-5 (the first momentum
        # step is d itself); the unsampled v_1 decays to (0, 1 − α λ_o)
        lam_i, lam_o = F(5e-5), F(1e-3)
        th = [F(1, 2), F(1, 2)]
        g = [F(-1, 2), F(-1)]
        tt = [th[p] - F(1, 2) * (g[p] + lam_i * th[p]) for p in range(2)]
        assert note(trace, "delta_theta", 0) == [tt[p] - th[p] for p in range(2)]
        emb = [r["value"] for r in trace.records if r["name"] == "embedding"]
        assert len(emb) == 2
        W1 = note(trace, "W_h", 0)
        # W_h[1][1] had zero gradient (v_0 = e_0): only the decay moved it
        assert W1[3] == 1 - F(1, 2) * lam_o * 1, W1

    return make("notes-6-4-official",
                "pFedHN by hand with the authors' optimizers (preset "
                "official): momentum, weight decay on every embedding",
                "notes §6.4's example under preset official (the script's "
                "part 4b): outer torch SGD momentum 0.9, weight decay 1e-3 on "
                "W_h, b_h and every embedding; inner SGD momentum 0.9, weight "
                "decay 5e-5, a new buffer every round; clipping at 50 "
                "(inactive at these magnitudes).",
                spec, ["pfedhn-sign", "pfedhn-outer-opt", "pfedhn-inner-opt",
                       "pfedhn-eval-model"],
                check, TOL_HAND_CODE,
                f"{NOTES} §4.3 H1-H4, §6.4 (the script's part 4b)")


# ---------------------------------------------------------------- linear

LIN_CLIENTS = [
    {"X": [[1.0, 0.5], [-0.5, 1.5], [2.0, -1.0], [0.25, 0.75]],
     "y": [1.25, 0.5, 2.0, -0.5]},
    {"X": [[0.5, 1.0], [1.5, 0.5], [-1.0, -0.5]], "y": [-0.75, 0.25, 1.0]},
    {"X": [[2.0, 1.5], [-1.5, 0.25], [0.75, -1.25], [1.0, 1.0], [-0.5, 2.0]],
     "y": [1.75, -0.5, 0.25, 1.5, -1.0]},
]
LIN_PLAN = [
    (2, [[0, 3], [1, 4], [2]]),
    (0, [[1, 2], [3, 0]]),
    (2, [[4, 0], [2, 3]]),
    (1, [[2, 0], [1]]),
    (0, [[0], [2, 1, 3]]),
]
LIN_W = [[0.3, -0.6], [0.45, 0.2], [-0.15, 0.35]]
LIN_B = [0.1, -0.25, 0.05]
LIN_V = [[0.8, -0.3], [-0.4, 0.7], [0.6, 0.9]]
LIN_FLAGS = ["pfedhn-sign", "pfedhn-simultaneous", "pfedhn-embed-rate",
             "pfedhn-bias", "pfedhn-embedding", "pfedhn-eval-model",
             "pfedhn-local-steps"]


def check_moves(trace, v):
    # every client's model differs from every other's, and W_h moves
    assert len({tuple(x) for x in v}) == len(v)
    assert note(trace, "W_h", 0) != note(trace, "W_h", 1)


def linear_bias():
    spec = pg.given_spec(
        "pFedHN, linear hypernetwork with bias, linear target with a bias, "
        "five rounds", None,
        {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"},
        LIN_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": LIN_W, "b": LIN_B,
                                           "v": LIN_V}},
        {"name": "pfedhn", "hyperparameters": {
            "eta": 0.15, "alpha": 0.3, "pfedhn.alpha_v": 0.55}},
        rounds_of(LIN_PLAN))
    return make("linear-bias",
                "pFedHN, linear hypernetwork with bias: five rounds, K = 2 "
                "or 3 minibatches, α = 0.3, α_v = 0.55",
                "Linear target with a bias (P = 3), half_squared; e = 2; "
                "η = 0.15, α = 0.3, α_v = 0.55; rounds sample clients 2, 0, "
                "2, 1, 0 with minibatches of 1 to 3 samples.",
                spec, LIN_FLAGS, check_moves, TOL,
                f"{NOTES} §4 (Alg. 1), §4.1 (linear hypernetwork)")


def linear_nobias():
    spec = pg.given_spec(
        "pFedHN, pfedhn.hn_bias = off: θ_i = W_h v_i, loss squared", None,
        {"kind": "linear", "d": 2, "bias": True, "loss": "squared"},
        LIN_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": LIN_W, "v": LIN_V}},
        {"name": "pfedhn", "hyperparameters": {"eta": 0.07, "alpha": 0.4},
         "switches": {"pfedhn.hn_bias": "off"}},
        rounds_of(LIN_PLAN))
    flags = [f for f in LIN_FLAGS if f not in ("pfedhn-bias",
                                               "pfedhn-embed-rate")]
    return make("linear-nobias",
                "pFedHN, pfedhn.hn_bias = off (the linear analysis form), "
                "α_v = α",
                "The clients and schedule of linear-bias; θ_i = W_h v_i "
                "(no b_h), loss (ŷ − y)², η = 0.07, α = 0.4, α_v unset "
                "(the box's one α).",
                spec, flags, check_moves, TOL,
                f"{NOTES} §4 (Alg. 1), §4.1 (pfedhn.hn_bias = off)")


# ---------------------------------------------------------------- mlp

MLP_CLIENTS = [
    {"X": [[1.0, 0.5], [-0.5, 1.5], [2.0, -1.0]], "y": [1.25, 0.5, 2.0]},
    {"X": [[0.5, 1.0], [1.5, 0.5], [-1.0, -0.5], [0.25, 2.0]],
     "y": [-0.75, 0.25, 1.0, -1.5]},
]
# P = 9: W1 (2×2), b1 (2), W2 (1×2), b2 (1); eighths, so that the exact
# values stay short (the mlp's gradient is cubic in θ)
MLP_W = [[0.375, -0.25, 0.125], [0.25, 0.5, -0.125], [-0.375, 0.125, 0.25],
         [0.5, -0.25, 0.125], [0.25, 0.125, -0.25], [-0.125, 0.375, 0.25],
         [0.625, -0.125, 0.125], [-0.5, 0.25, 0.375], [0.125, 0.25, -0.125]]
MLP_B = [0.125, -0.125, 0.25, 0.125, 0.375, 0.25, 0.5, -0.375, 0.125]
MLP_V = [[0.75, -0.5, 0.25], [-0.25, 0.625, 0.5]]


def mlp():
    spec = pg.given_spec(
        "pFedHN, the regression mlp (d = 2, h = 2, identity) as target", None,
        {"kind": "mlp", "d": 2, "h": 2, "k": 1, "activation": "identity",
         "loss": "half_squared"},
        MLP_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": MLP_W, "b": MLP_B,
                                           "v": MLP_V}},
        {"name": "pfedhn", "hyperparameters": {
            "eta": 0.125, "alpha": 0.25, "pfedhn.alpha_v": 0.375}},
        rounds_of([(1, [[0, 3], [2]]), (0, [[2, 1]]), (1, [[1, 3]])]))
    return make("mlp",
                "pFedHN generating an mlp (P = 9): three rounds, e = 3, "
                "α = 1/4, α_v = 3/8",
                "Regression mlp d = 2, h = 2, k = 1, identity activation "
                "(the product W2 W1 keeps the target nonlinear in θ), "
                "half_squared; "
                "e = 3; η = 1/8, α = 1/4, α_v = 3/8; rounds sample clients "
                "1, 0, 1.",
                spec, LIN_FLAGS, check_moves, TOL,
                f"{NOTES} §4 (Alg. 1), §4.1 (linear hypernetwork, any "
                "target: the concatenated parameters)")


def linear_official():
    spec = pg.given_spec(
        "pFedHN, the authors' code (preset official) with clipping active",
        None,
        {"kind": "linear", "d": 2, "bias": True, "loss": "half_squared"},
        LIN_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": LIN_W, "b": LIN_B,
                                           "v": LIN_V}},
        {"name": "pfedhn", "preset": "official", "hyperparameters": {
            "eta": 0.15, "alpha": 0.3, "pfedhn.alpha_v": 0.55,
            "pfedhn.outer_momentum": 0.8, "pfedhn.outer_wd": 0.02,
            "pfedhn.inner_momentum": 0.7, "pfedhn.inner_wd": 0.03,
            "pfedhn.clip_norm": 0.9}},
        rounds_of(LIN_PLAN[:4]))

    def check(trace, v):
        check_moves(trace, v)
        # some local gradient is clipped and some is not: the bound sits
        # between the local gradients' norms (checked with the exact run)
        spec_noclip = dict(spec, algorithm=dict(
            spec["algorithm"], switches={"pfedhn.clip": "off"}))
        other = hn.replay(spec_noclip)[2]
        assert other != v

    return make("linear-official",
                "pFedHN, preset official with its constants changed: "
                "momentum 0.8 / 0.7, weight decay 0.02 / 0.03, clipping at "
                "0.9 (active)",
                "The clients of linear-bias, four rounds (clients 2, 0, 2, 1); "
                "η = 0.15, α = 0.3, α_v = 0.55; pfedhn.outer_opt and "
                "pfedhn.inner_opt = sgd_momentum_wd, pfedhn.clip = norm with "
                "every constant unlike the code's, so a constant read from the "
                "wrong place shows.",
                spec, ["pfedhn-sign", "pfedhn-embed-rate", "pfedhn-eval-model",
                       "pfedhn-local-steps", "pfedhn-clip",
                       "pfedhn-inner-opt", "pfedhn-outer-opt"],
                check, TOL,
                f"{NOTES} §4.3 H1-H4 (AvivSham/pFedHN @ 1bc0549)")


def linear_clip():
    spec = pg.given_spec(
        "pFedHN, pfedhn.clip = norm alone (plain SGD steps)", None,
        {"kind": "linear", "d": 2, "bias": True, "loss": "squared"},
        LIN_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": LIN_W, "b": LIN_B,
                                           "v": LIN_V}},
        {"name": "pfedhn", "switches": {"pfedhn.clip": "norm"},
         "hyperparameters": {"eta": 0.07, "alpha": 0.35,
                             "pfedhn.alpha_v": 0.45, "pfedhn.clip_norm": 1.1}},
        rounds_of(LIN_PLAN[1:]))

    def check(trace, v):
        check_moves(trace, v)
        spec_off = dict(spec, algorithm=dict(
            spec["algorithm"], switches={"pfedhn.clip": "off"}))
        assert hn.replay(spec_off)[2] != v      # some clip is active

    return make("linear-clip",
                "pFedHN, pfedhn.clip = norm with plain SGD: the local and the "
                "hypernetwork gradient clipped at 1.1",
                "The clients of linear-bias, loss (ŷ − y)², four rounds "
                "(clients 0, 2, 1, 0); η = 0.07, α = 0.35, α_v = 0.45; "
                "torch's clip_grad_norm_ at 1.1, active on some gradients.",
                spec, ["pfedhn-sign", "pfedhn-embed-rate", "pfedhn-eval-model",
                       "pfedhn-local-steps", "pfedhn-clip"],
                check, TOL,
                f"{NOTES} §4.3 H4 (AvivSham/pFedHN @ 1bc0549, "
                "trainer.py:160, 180)")


# ---------------------------------------------------------------- softmax

SM_CLIENTS = [
    {"X": [[0.5, -0.25], [-0.75, 0.5], [0.25, 1.0], [1.0, 0.125]],
     "y": [0, 2, 1, 0]},
    {"X": [[-0.5, -0.5], [0.375, 0.75], [1.25, -0.25]], "y": [1, 2, 2]},
    {"X": [[0.625, -1.0], [-0.25, 0.25], [0.75, 0.5], [-1.0, 0.375],
           [0.125, -0.625]], "y": [2, 0, 1, 1, 0]},
]
# P = 9: W (3×2, row-major), b (3)
SM_W = [[0.3, -0.6], [0.45, 0.2], [-0.15, 0.35], [0.25, -0.4], [-0.55, 0.1],
        [0.2, 0.65], [0.05, -0.3], [-0.2, 0.15], [0.4, -0.05]]
SM_B = [0.1, -0.25, 0.05, 0.3, -0.1, 0.2, -0.15, 0.35, -0.05]
SM_V = [[0.8, -0.3], [-0.4, 0.7], [0.6, 0.9]]


def softmax():
    spec = pg.given_spec(
        "pFedHN generating a softmax model (d = 2, k = 3, with a bias), "
        "cross-entropy", None,
        {"kind": "softmax", "d": 2, "k": 3, "bias": True,
         "loss": "cross_entropy"},
        SM_CLIENTS,
        {"kind": "zeros", "hypernetwork": {"W": SM_W, "b": SM_B,
                                           "v": SM_V}},
        {"name": "pfedhn", "hyperparameters": {
            "eta": 0.6, "alpha": 0.45, "pfedhn.alpha_v": 0.7}},
        rounds_of([(1, [[0, 2], [1]]), (2, [[4, 1], [0, 3, 2]]),
                   (0, [[3, 1], [2], [0, 1]]), (2, [[2], [1, 4]])]))
    return make("softmax",
                "pFedHN generating a softmax classifier (P = 9): four "
                "rounds, e = 2, α = 0.45, α_v = 0.7 (60-digit probabilities)",
                "Softmax target d = 2, k = 3 with a bias (P = 9), "
                "cross-entropy; e = 2; η = 0.6, α = 0.45, α_v = 0.7; rounds "
                "sample clients 1, 2, 0, 2 with minibatches of 1 to 3 "
                "samples; the class probabilities with 60-digit decimals.",
                spec, LIN_FLAGS, check_moves, TOL_SOFTMAX,
                f"{NOTES} §4 (Alg. 1), §4.1 (linear hypernetwork, any "
                "target: the concatenated parameters)")


MAKERS = [notes_6_4, notes_6_4_official, linear_bias, linear_nobias, mlp,
          linear_official, linear_clip, softmax]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
