#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-FedAvg golden vectors on data models with real minibatches, in exact
rational arithmetic (golden/pflref_exact_perfedavg.py).

On the quadratic example of notes §4(g) the gradients are deterministic, so
a candidate that reuses D for D′ and D″, takes the Hessian on the wrong
batch, or centres HF's finite difference on w̃ passes it.  These vectors
make those bugs visible:

  linear-minibatch-exact    linear model with bias, squared loss, three
                            clients (n = 5, 4, 6), every local step's D, D′,
                            D″ distinct index lists, two rounds with
                            A_0 = {0, 2}, A_1 = {1, 2}, given w_0
  linear-minibatch-hf       the same run with HF (δ = 1/64): on a model
                            whose loss is quadratic in the parameters the
                            central difference is exact, so the values are
                            the exact variant's (asserted)
  linear-pfedme-repo        perfedavg.variant = fo, perfedavg.weights =
                            samples, perfedavg.eval = alpha_then_beta (the
                            pFedMe repository's reading, evaluated on
                            training batches)
  mlp-identity-exact        mlp with the identity activation, ½(ŷ − y)²
                            (a polynomial loss whose Hessian changes with
                            the parameters), two clients, one round of τ = 2
  mlp-identity-hf           the same with HF (δ = 1/1024): not equal to
                            exact (the asserted difference is O(δ²)), and
                            centring the difference on w̃ moves it
  mlp-identity-exact-rounds the mlp over three rounds of τ = 1 (a single
                            round hides a stale global model)
  mlp-identity-hf-rounds    the same with HF over two rounds
  mlp-squared-drawn         the mlp with loss (ŷ − y)² (the factor s = 2 in
                            the gradient and the Hessian-vector product),
                            three clients, two rounds whose drawn order
                            differs from the ascending clients

The generator asserts, for each vector, that the bugs it is flagged for move
it (pflref_golden.check_mutants), and the facts named above.

    /usr/bin/python3 golden/perfedavg/make_data.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px                 # noqa: E402
import pflref_exact_perfedavg as pa       # noqa: E402
import pflref_golden as pg                # noqa: E402

PAPER = "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1"
GENERATOR = "golden/perfedavg/make_data.py (exact fractions, pflref_exact_perfedavg.py)"

LIN_MODEL = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
LIN_CLIENTS = [
    {"X": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238], [-0.715, -0.426],
           [0.337, 1.129]],
     "y": [-0.775, 1.409, 0.236, -1.118, 0.652]},
    {"X": [[-1.426, 0.357], [0.689, -0.942], [0.205, 1.318], [1.174, 0.463]],
     "y": [0.518, -1.263, 0.947, -0.384]},
    {"X": [[0.473, 0.815], [-0.962, -0.218], [1.285, -0.637], [-0.156, 1.442],
           [0.724, 0.091], [-1.093, 0.568]],
     "y": [1.127, -0.469, 0.318, 0.875, -0.236, -0.912]},
]
LIN_INIT = {"kind": "given", "w": [0.125, -0.375, 0.25]}
# Per participation: τ = 2 steps, each D, D′, D″ (distinct lists; sizes 1-3).
LIN_BATCHES = {
    (0, 0): [[0, 1], [2, 3], [4], [1, 4], [0, 2, 3], [3]],
    (0, 2): [[0, 1], [2, 3], [4, 5], [5, 2], [1], [0, 3, 4]],
    (1, 1): [[3, 0], [1, 2], [2], [0], [1, 3], [2, 0, 1]],
    (1, 2): [[1, 3], [5, 0], [2, 4], [4], [0, 5], [3, 1]],
}
LIN_ROUNDS = [[0, 2], [1, 2]]
LIN_POST = [[[3, 4], [0, 1]], [[0, 2], [1, 3]], [[5, 1], [2, 3]]]

MLP_MODEL = {"kind": "mlp", "d": 2, "h": 2, "k": 1, "activation": "identity",
             "loss": "half_squared", "bias": True, "hidden_bias": True}
# dyadic inputs keep the exact denominators small (the loss is a polynomial
# of degree 4 in the parameters, so exact values grow fast)
MLP_CLIENTS = [
    {"X": [[0.75, -1.25], [1.5, 0.5], [-0.625, 1.125], [0.25, -0.875]],
     "y": [0.5, 1.375, -0.75, 0.625]},
    {"X": [[-1.125, 0.375], [0.875, 1.25], [0.5, -0.5]],
     "y": [-0.25, 1.125, 0.875]},
]
# W1 (2×2), b1 (2), W2 (1×2), b2 (1)
MLP_INIT = {"kind": "given", "w": [0.5, -0.25, 0.375, 0.75, 0.125, -0.125,
                                   0.625, -0.5, 0.25]}
MLP_BATCHES = {0: [[0, 1], [2, 3], [1, 3], [2], [0, 3], [1, 2]],
               1: [[0, 1], [2], [1, 2], [0, 2], [1], [0]]}
MLP_POST = [[[0, 2]], [[1, 2]]]

TOL_LIN = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: per participation 2 local steps, each 2 batch "
             "gradients and one Hessian-vector product on at most 3 samples "
             "with |x|, |y| < 1.6, plus a few axpys, every product and sum "
             "rounding once (error below 1e-16 relative to terms below 10); "
             "each step contracts (α and β times the batch Hessian's trace "
             "below 1, asserted), so two rounds and the personalisation keep "
             "the error below 1e-14; every flagged bug moves some value by "
             "more than 1e3 times the tolerance.",
}
TOL_LIN_HF = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "as for the exact linear vector, plus HF's central difference: "
             "the gradients at w ± δq carry rounding errors near 1e-16·|g| "
             "(|g| < 10) which the division by 2δ = 1/32 enlarges to about "
             "1e-14 in d (note hvp), and α·β times that in w; the error "
             "stays below 1e-13; every flagged bug moves some value by more "
             "than 1e3 times the tolerance.",
}
TOL_MLP = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "dyadic inputs: 2 local steps per client, each 2 gradients and "
             "one Hessian-vector product (R-operator) of a 9-parameter mlp "
             "on at most 2 samples with entries below 1.5, then one "
             "personalisation step; a few dozen roundings of terms below 10 "
             "per step, so the error stays below 1e-14; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
TOL_MLP_HF = {
    "atol": 1e-11,
    "rtol": 1e-11,
    "basis": "as for the exact mlp vector, plus HF's central difference "
             "with δ = 1/1024: the gradients at w ± δq carry rounding errors "
             "near 1e-16·|g| (|g| < 10), which the division by 2δ = 1/512 "
             "enlarges to about 1e-12 in d (note hvp) and α·β = 1/32 times "
             "that in w; the error stays below 1e-11; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}

TOL_MLP_SQ = {
    "atol": 1e-13,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "dyadic inputs: two rounds of one local step per client, each "
             "two gradients and one Hessian-vector product (R-operator) of a "
             "9-parameter mlp on at most 2 samples with entries below 1.5 "
             "(the loss factor 2 doubles the terms, still below 20), then one "
             "personalisation step: a few dozen roundings per step, so the "
             "error stays below 1e-14; every flagged bug moves some value by "
             "more than 1e3 times the tolerance.",
}


def lin_rounds():
    return [{"clients": S, "batches": [LIN_BATCHES[(t, i)] for i in S]}
            for t, S in enumerate(LIN_ROUNDS)]


def assert_contractive(pr, clients_batches, alpha, beta):
    for i, steps in clients_batches:
        for batch in steps:
            L = px.curvature_bound(pr, i, batch)
            assert alpha * L < 1 and beta * L < 1, (i, batch, L)


def build(vid, title, description, model, clients, init, algorithm, rounds,
          post, flags, mutants, tol, source, check=None):
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         rounds, post=post)
    result = pa.replay(spec)
    if check is not None:
        check(spec, result)
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs=px.NO_BUGS: pa.replay(spec, frozenset(bugs)),
                              lambda trace, w, v, _a: (trace, w, v))
    prov = pg.provenance("independent", source, GENERATOR)
    fname = "worked-" + vid.split("/", 2)[2] + ".json"
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def lin_algorithm(variant, extra=None):
    hyper = {"alpha": 0.1, "beta": 0.05}
    sw = {}
    if variant == "hf":
        hyper["delta"] = 0.015625
    if variant != "exact":
        sw["perfedavg.variant"] = variant
    sw.update(extra or {})
    alg = {"name": "perfedavg", "hyperparameters": hyper}
    if sw:
        alg["switches"] = sw
    return alg


LIN_DESC = ("Linear model with bias, (ŷ − y)², three clients (n = 5, 4, 6), "
            "α = 0.1, β = 0.05, w_0 = (0.125, −0.375, 0.25), A_0 = {0, 2}, "
            "A_1 = {1, 2}, τ = 2: each participation lists six batches, "
            "D, D′, D″ of step 1 then of step 2, all different index lists")


def lin_check_batches(spec, result):
    pr = px.Problem(LIN_MODEL, LIN_CLIENTS)
    assert_contractive(pr, [(i, b) for (t, i), b in LIN_BATCHES.items()],
                       F(1, 10), F(1, 20))
    for steps in LIN_BATCHES.values():
        for t in range(2):
            D, D1, D2 = (sorted(b) for b in steps[3 * t:3 * t + 3])
            assert D != D1 and D != D2 and D1 != D2, steps


def linear_exact():
    return build(
        "perfedavg/worked/linear-minibatch-exact",
        "Per-FedAvg, exact, linear model with minibatches: distinct D, D′, D″ "
        "per step, partial participation, two rounds",
        LIN_DESC + "; perfedavg.weights = uniform; then θ_i = w_2 − α "
                   "∇f_i(w_2; D) on each client's one post batch "
                   "(one_alpha_step).",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, lin_algorithm("exact"), lin_rounds(),
        [p[:1] for p in LIN_POST],
        ["perfedavg-batch-reuse", "perfedavg-hessian-term", "perfedavg-no-restore",
         "perfedavg-eval-steps", "stale-global", "local-step-count",
         "initial-point", "batch-mean", "loss-scale", "aggregation-weights"],
        {"perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-on-d1"],
         "perfedavg-no-restore": ["no-restore"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "stale-global": ["restart-w0", "eval-on-w0"],
         "local-step-count": ["steps-minus-one"],
         "initial-point": ["init-zeros"],
         "batch-mean": ["batch-sum"],
         "loss-scale": ["loss-x2"],
         "aggregation-weights": ["weights-flip"]},
        TOL_LIN, f"{pg.NOTES} §4(c), §4(e); {PAPER}", lin_check_batches)


def linear_hf():
    def check(spec, result):
        lin_check_batches(spec, result)
        # HF equals exact: the loss is quadratic in (w, b)
        exact_spec = dict(spec, algorithm=lin_algorithm("exact"))
        ref = pa.replay(exact_spec)
        assert result[1] == ref[1] and result[2] == ref[2]
        assert [r["value"] for r in result[0].records] == \
            [r["value"] for r in ref[0].records]

    return build(
        "perfedavg/worked/linear-minibatch-hf",
        "Per-FedAvg, HF (δ = 1/64), linear model with minibatches: equal to "
        "the exact variant (the loss is quadratic in the parameters)",
        LIN_DESC + "; perfedavg.variant = hf, δ = 0.015625; one "
                   "personalisation step per client.",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, lin_algorithm("hf"), lin_rounds(),
        [p[:1] for p in LIN_POST],
        ["perfedavg-batch-reuse", "perfedavg-hessian-term", "perfedavg-no-restore"],
        {"perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-on-d1"],
         "perfedavg-no-restore": ["no-restore"]},
        TOL_LIN_HF, f"{pg.NOTES} §4(c), §4(f) item 4; {PAPER}", check)


def linear_pfedme_repo():
    alg = lin_algorithm("fo", {"perfedavg.weights": "samples",
                               "perfedavg.eval": "alpha_then_beta"})
    return build(
        "perfedavg/worked/linear-pfedme-repo",
        "Per-FedAvg as the pFedMe repository computes it: FO, n_i-weighted "
        "mean, personalisation by an α step then a β step (on training "
        "batches)",
        LIN_DESC + "; perfedavg.variant = fo (D″ is scheduled but not read), "
                   "perfedavg.weights = samples (n_i / Σ_{A_k} n_j), "
                   "perfedavg.eval = alpha_then_beta on two post batches per "
                   "client.",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, alg, lin_rounds(), LIN_POST,
        ["aggregation-weights", "perfedavg-no-restore", "perfedavg-eval-steps",
         "perfedavg-batch-reuse"],
        {"aggregation-weights": ["weights-flip"],
         "perfedavg-no-restore": ["no-restore"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"]},
        TOL_LIN, f"{pg.NOTES} §4(d) (n_i-weighted server), §4(e), §4(f) items "
                 f"1-3; {PAPER}", lin_check_batches)


def linear_pfllib_decay():
    """The pfllib preset (FO, n_i weights, one α step, perfedavg.calls =
    two, lr.count = trainings) with PFLlib's -ld: user i's scheduler steps
    at the end of each of its train() calls, two a round, so its step t of
    τ = 2 in a round takes α γ^(2k) (step 1, the first call) and
    α γ^(2k+1) (step 2, the second), k the rounds i trained before, and β
    undecayed (lr.scope = no_beta: TsingZ0/PFLlib 487a29e,
    system/flcore/clients/clientperavg.py, step(beta=self.beta) with
    self.beta a float set in __init__); the personalisation α γ^(2K)
    (perfedavg.eval_lr = decayed: train_one_step's optimizer.step() reads
    the decayed lr), K the rounds i trained in.  User 1 first trains in
    round 1 (k = 0, where the round would give 1)."""
    alg = {"name": "perfedavg", "preset": "pfllib",
           "hyperparameters": {"alpha": 0.1, "beta": 0.05, "lr.gamma": 0.75},
           "switches": {"lr.schedule": "exponential"}}

    def check(spec, result):
        lin_check_batches(spec, result)
        hp, sw = pa.settings(spec["algorithm"])
        assert sw["perfedavg.calls"] == "two" and sw["lr.count"] == "trainings"
        assert sw["lr.scope"] == "no_beta" and sw["perfedavg.eval_lr"] == "decayed"
        assert hp["alpha"] != hp["beta"]

    return build(
        "perfedavg/worked/linear-pfllib-decay",
        "Per-FedAvg as PFLlib runs it with -ld: two train() calls a round, "
        "each user's decay counting its own calls",
        LIN_DESC + "; preset pfllib (perfedavg.variant = fo, weights = "
                   "samples, eval = one_alpha_step, calls = two, lr.count = "
                   "trainings, lr.scope = no_beta, eval_lr = decayed) with "
                   "lr.schedule = exponential, lr.gamma = 0.75: step 1 of a "
                   "round takes α·0.75^(2k), step 2 (the second train() call) "
                   "α·0.75^(2k+1), β = 0.05 in both (PFLlib's "
                   "step(beta=self.beta) never decays), k the rounds the user "
                   "trained before; one personalisation step per client with "
                   "its decayed α, α·0.75^(2K), K the rounds it trained in "
                   "(K = 1, 1, 2).",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, alg, lin_rounds(),
        [p[:1] for p in LIN_POST],
        ["lr-count", "lr-schedule", "aggregation-weights",
         "perfedavg-batch-reuse"],
        {"lr-count": ["lr-per-round", "lr-one-call"],
         "lr-schedule": ["lr-ignored", "lr-shifted", "beta-decayed",
                         "eval-lr-flip"],
         "aggregation-weights": ["weights-flip"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"]},
        TOL_LIN, f"{pg.NOTES} §4(c); shared/spec/notes-pfllib-as-run.md §2.2 "
                 f"(-ld: each client's ExponentialLR stepped after its "
                 f"train()), §2.3 (Per-FedAvg: train() twice a round); "
                 f"TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/"
                 f"serverperavg.py, clients/clientperavg.py; TsingZ0/PFLlib "
                 f"487a29e system/flcore/clients/clientperavg.py (β = "
                 f"self.learning_rate, a float; train_one_step's "
                 f"optimizer.step()), flcore/optimizers/fedoptimizer.py "
                 f"(PerAvgOptimizer); {PAPER}", check)


def linear_paper_decay_eval_decayed():
    """The paper's switches (exact, uniform, lr.scope = all, lr.count =
    rounds) under an exponential decay with the personalisation α step then
    β step taken at the decayed rates (perfedavg.eval = alpha_then_beta,
    perfedavg.eval_lr = decayed): round t's steps take (α, β) γ^t, the
    personalisation after R = 2 rounds (α, β) γ^2; β decays with α, what
    lr.scope = no_beta departs from."""
    alg = lin_algorithm("exact", {"lr.schedule": "exponential",
                                  "perfedavg.eval": "alpha_then_beta",
                                  "perfedavg.eval_lr": "decayed"})
    alg["hyperparameters"]["lr.gamma"] = 0.8

    def check(spec, result):
        lin_check_batches(spec, result)
        hp, sw = pa.settings(spec["algorithm"])
        assert sw["lr.scope"] == "all" and sw["lr.count"] == "rounds"
        assert hp["alpha"] != hp["beta"]

    return build(
        "perfedavg/worked/linear-paper-decay-eval-decayed",
        "Per-FedAvg, exact, under an exponential decay with the "
        "personalisation at the decayed α and β",
        LIN_DESC + "; paper switches (lr.scope = all, lr.count = rounds) "
                   "with lr.schedule = exponential, lr.gamma = 0.8: round t "
                   "steps with (α, β)·0.8^t; perfedavg.eval = alpha_then_beta "
                   "and perfedavg.eval_lr = decayed: θ_i = w_2 − α·0.8² "
                   "∇f_i(w_2; D), then θ_i − β·0.8² ∇f_i(θ_i; D₂) on two post "
                   "batches per client.",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, alg, lin_rounds(), LIN_POST,
        ["lr-schedule", "perfedavg-eval-steps", "perfedavg-hessian-term"],
        {"lr-schedule": ["lr-ignored", "lr-shifted", "eval-lr-flip"],
         "perfedavg-eval-steps": ["eval-steps-flip"],
         "perfedavg-hessian-term": ["fo-step", "hessian-sign"]},
        TOL_LIN, f"{pg.NOTES} §4(c), §4(e); shared/spec/notes-pfllib-as-run.md "
                 f"§2.2 (-ld); TsingZ0/PFLlib 487a29e system/flcore/clients/"
                 f"clientperavg.py (train_one_step); {PAPER}", check)


def linear_pfllib_decay_alpha_then_beta():
    """The pfllib preset under -ld as linear_pfllib_decay, with the
    personalisation an α step then a β step (perfedavg.eval =
    alpha_then_beta): α at its decayed rate α γ^(2K), β undecayed
    (lr.scope = no_beta; TsingZ0/PFLlib 487a29e clientperavg.py)."""
    alg = {"name": "perfedavg", "preset": "pfllib",
           "hyperparameters": {"alpha": 0.1, "beta": 0.05, "lr.gamma": 0.75},
           "switches": {"lr.schedule": "exponential",
                        "perfedavg.eval": "alpha_then_beta"}}

    def check(spec, result):
        lin_check_batches(spec, result)
        hp, sw = pa.settings(spec["algorithm"])
        assert sw["lr.scope"] == "no_beta" and sw["perfedavg.eval_lr"] == "decayed"
        assert hp["alpha"] != hp["beta"]

    return build(
        "perfedavg/worked/linear-pfllib-decay-alpha-then-beta",
        "Per-FedAvg as PFLlib runs it with -ld, personalised by a decayed α "
        "step then an undecayed β step",
        LIN_DESC + "; preset pfllib (lr.scope = no_beta, eval_lr = decayed) "
                   "with lr.schedule = exponential, lr.gamma = 0.75 and "
                   "perfedavg.eval = alpha_then_beta: the local steps as in "
                   "perfedavg/worked/linear-pfllib-decay; θ_i = w_2 − "
                   "α·0.75^(2K) ∇f_i(w_2; D), K = 1, 1, 2, then θ_i − β "
                   "∇f_i(θ_i; D₂) with β = 0.05 undecayed.",
        LIN_MODEL, LIN_CLIENTS, LIN_INIT, alg, lin_rounds(), LIN_POST,
        ["lr-schedule", "lr-count", "perfedavg-eval-steps"],
        {"lr-schedule": ["lr-ignored", "lr-shifted", "beta-decayed",
                         "eval-lr-flip"],
         "lr-count": ["lr-per-round", "lr-one-call"],
         "perfedavg-eval-steps": ["eval-steps-flip"]},
        TOL_LIN, f"{pg.NOTES} §4(c); shared/spec/notes-pfllib-as-run.md §2.2, "
                 f"§2.3; TsingZ0/PFLlib 487a29e system/flcore/clients/"
                 f"clientperavg.py (β = self.learning_rate, a float; "
                 f"train_one_step's optimizer.step()); {PAPER}", check)


def mlp_algorithm(variant):
    hyper = {"alpha": 0.125, "beta": 0.25}
    alg = {"name": "perfedavg", "hyperparameters": hyper}
    if variant == "hf":
        hyper["delta"] = 0.0009765625
        alg["switches"] = {"perfedavg.variant": "hf"}
    return alg


MLP_DESC = ("mlp with d = 2, h = 2, k = 1, identity activation, biases, "
            "½(ŷ − y)² (a polynomial loss whose Hessian varies with the "
            "parameters), two clients (n = 4, 3), α = 0.125, β = 0.25, one "
            "round with both, τ = 2 (D, D′, D″ different lists), given w_0, "
            "then one personalisation step per client")


def mlp_rounds():
    return [{"clients": [0, 1], "batches": [MLP_BATCHES[0], MLP_BATCHES[1]]}]


def mlp_exact():
    def check(spec, result):
        # the Hessian varies: taking it at w̃ changes the run
        moved = pa.replay(spec, frozenset({"hessian-at-tilde"}))
        assert moved[1] != result[1]

    return build(
        "perfedavg/worked/mlp-identity-exact",
        "Per-FedAvg, exact, mlp with the identity activation: the Hessian is "
        "taken at w on D″ (not at w̃, not on D′)",
        MLP_DESC + ".", MLP_MODEL, MLP_CLIENTS, MLP_INIT, mlp_algorithm("exact"),
        mlp_rounds(), MLP_POST,
        ["perfedavg-hessian-term", "perfedavg-batch-reuse", "perfedavg-no-restore"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-at-tilde",
                                    "hessian-on-d1"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "perfedavg-no-restore": ["no-restore"]},
        TOL_MLP, f"{pg.NOTES} §4(c); {PAPER}", check)


def mlp_hf():
    def check(spec, result):
        exact_spec = dict(spec, algorithm=mlp_algorithm("exact"))
        ref = pa.replay(exact_spec)
        # HF differs from exact on this polynomial loss, by O(δ²) only
        diff = max(abs(a - b) for a, b in zip(result[1], ref[1]))
        assert 0 < diff < F(1, 10 ** 5), float(diff)

    return build(
        "perfedavg/worked/mlp-identity-hf",
        "Per-FedAvg, HF (δ = 1/1024), mlp with the identity activation: the "
        "finite difference is centred on w, not on w̃",
        MLP_DESC + "; perfedavg.variant = hf, δ = 0.0009765625 (the values "
                   "differ from the exact variant's by O(δ²)).",
        MLP_MODEL, MLP_CLIENTS, MLP_INIT, mlp_algorithm("hf"), mlp_rounds(),
        MLP_POST,
        ["perfedavg-hf-center", "perfedavg-hessian-term", "perfedavg-batch-reuse"],
        {"perfedavg-hf-center": ["hf-center-tilde"],
         "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-on-d1"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"]},
        TOL_MLP_HF, f"{pg.NOTES} §4(c) (HF around w_{{t−1}}), §7 (KarhouTam/"
                    f"Per-FedAvg #2); {PAPER}", check)


# Several rounds on the mlp (golden/coincidences.py: a single round hides a
# stale global model; a linear model's Hessian is constant).  One local
# step per round keeps the exact fractions small (their size grows steeply
# with the steps of a round).
MLP_ROUNDS_3 = [
    {0: [[0, 1], [2, 3], [1, 3]], 1: [[0, 1], [2], [1, 2]]},
    {0: [[2, 3], [0], [1, 2]], 1: [[1, 2], [0, 1], [2]]},
    {0: [[3, 1], [0, 2], [1]], 1: [[2, 0], [0], [1, 2]]},
]
MLP_DESC3 = ("mlp with d = 2, h = 2, k = 1, identity activation, biases, "
             "½(ŷ − y)² (a polynomial loss whose Hessian varies with the "
             "parameters), two clients (n = 4, 3), α = 0.125, β = 0.25, three "
             "rounds with both, τ = 1 (D, D′, D″ different lists, other lists "
             "every round), given w_0, then one personalisation step per client")


def mlp_rounds3(count=3):
    return [{"clients": [0, 1], "batches": [r[0], r[1]]} for r in MLP_ROUNDS_3[:count]]


def mlp_exact_rounds():
    def check(spec, result):
        moved = pa.replay(spec, frozenset({"hessian-at-tilde"}))
        assert moved[1] != result[1]

    return build(
        "perfedavg/worked/mlp-identity-exact-rounds",
        "Per-FedAvg, exact, mlp with the identity activation, three rounds of "
        "one step: the Hessian at w on D″, every round from the last w",
        MLP_DESC3 + ".", MLP_MODEL, MLP_CLIENTS, MLP_INIT, mlp_algorithm("exact"),
        mlp_rounds3(), MLP_POST,
        ["perfedavg-hessian-term", "perfedavg-batch-reuse", "stale-global",
         "perfedavg-eval-steps"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-at-tilde",
                                    "hessian-on-d1"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "stale-global": ["restart-w0", "eval-on-w0"],
         "perfedavg-eval-steps": ["eval-steps-flip"]},
        TOL_MLP, f"{pg.NOTES} §4(c); {PAPER}", check)


def mlp_hf_rounds():
    def check(spec, result):
        exact_spec = dict(spec, algorithm=mlp_algorithm("exact"))
        ref = pa.replay(exact_spec)
        diff = max(abs(a - b) for a, b in zip(result[1], ref[1]))
        assert 0 < diff < F(1, 10 ** 5), float(diff)

    return build(
        "perfedavg/worked/mlp-identity-hf-rounds",
        "Per-FedAvg, HF (δ = 1/1024), mlp with the identity activation, two "
        "rounds of one step: the difference centred on w",
        MLP_DESC3.replace("three rounds", "two rounds") +
        "; perfedavg.variant = hf, δ = 0.0009765625 (two rounds: the exact "
        "replay of HF's difference grows too costly over three).",
        MLP_MODEL, MLP_CLIENTS, MLP_INIT, mlp_algorithm("hf"), mlp_rounds3(2),
        MLP_POST,
        ["perfedavg-hf-center", "perfedavg-hessian-term", "perfedavg-batch-reuse",
         "stale-global"],
        {"perfedavg-hf-center": ["hf-center-tilde"],
         "perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-on-d1"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "stale-global": ["restart-w0", "eval-on-w0"]},
        TOL_MLP_HF, f"{pg.NOTES} §4(c) (HF around w_{{t−1}}); {PAPER}", check)

# loss squared: s = 2 in the gradient and in every term of the Hessian-
# vector product; a third client; every batch list uses indices 0-2 only,
# valid on every client, so pairing by the drawn order changes numbers
# instead of failing
MLP_SQ_MODEL = dict(MLP_MODEL, loss="squared")
MLP_SQ_CLIENTS = MLP_CLIENTS + [
    {"X": [[0.375, 0.625], [-0.75, -1.5], [1.25, -0.25], [0.125, 1.375], [-0.5, 0.25]],
     "y": [0.875, -1.25, 0.375, 1.5, -0.125]}]
MLP_SQ_ROUNDS = [
    {"clients": [0, 1, 2], "drawn": [2, 0, 1],
     "batches": [[[0, 1], [2], [1, 2]], [[1, 2], [0], [0, 2]], [[2, 0], [1, 2], [1]]]},
    {"clients": [1, 2], "drawn": [2, 1],
     "batches": [[[0, 2], [1], [2]], [[1], [0, 2], [0, 1]]]},
]
MLP_SQ_POST = [[[0, 2]], [[1, 2]], [[0, 1]]]


def mlp_squared_drawn():
    def check(spec, result):
        moved = pa.replay(spec, frozenset({"hessian-at-tilde"}))
        assert moved[1] != result[1]
        for r in MLP_SQ_ROUNDS:
            assert r["drawn"] != sorted(r["clients"]) and sorted(r["drawn"]) == r["clients"]
            for steps in r["batches"]:
                D, D1, D2 = (sorted(b) for b in steps)
                assert D != D1 and D != D2 and D1 != D2, steps
                assert max(max(b) for b in steps) < 3

    return build(
        "perfedavg/worked/mlp-squared-drawn",
        "Per-FedAvg, exact, mlp with the identity activation and loss (ŷ − y)², "
        "drawn order unlike the clients",
        "mlp with d = 2, h = 2, k = 1, identity activation, biases, (ŷ − y)² "
        "(s = 2 in the gradient and in the Hessian-vector product), three "
        "clients (n = 4, 3, 5), α = 0.125, β = 0.25, given w_0; round 0: "
        "A_0 = {0, 1, 2} drawn 2, 0, 1; round 1: A_1 = {1, 2} drawn 2, 1; τ = 1 "
        "(D, D′, D″ different lists); batches[j] belongs to clients[j] "
        "(ascending), not to drawn[j]; then one personalisation step per client.",
        MLP_SQ_MODEL, MLP_SQ_CLIENTS, MLP_INIT, mlp_algorithm("exact"),
        MLP_SQ_ROUNDS, MLP_SQ_POST,
        ["perfedavg-hessian-term", "perfedavg-batch-reuse", "stale-global",
         "loss-scale", "schedule-drawn-order"],
        {"perfedavg-hessian-term": ["fo-step", "hessian-sign", "hessian-at-tilde",
                                    "hessian-on-d1"],
         "perfedavg-batch-reuse": ["reuse-d", "reuse-d-for-d1"],
         "stale-global": ["restart-w0", "eval-on-w0"],
         "loss-scale": ["loss-x2"],
         "schedule-drawn-order": ["drawn-batches"]},
        TOL_MLP_SQ, f"{pg.NOTES} §4(c); docs/formats.md (schedule: drawn is "
                 f"information only); {PAPER}", check)


MAKERS = [linear_exact, linear_hf, linear_pfedme_repo, mlp_exact, mlp_hf,
          mlp_exact_rounds, mlp_hf_rounds, mlp_squared_drawn,
          linear_pfllib_decay, linear_paper_decay_eval_decayed,
          linear_pfllib_decay_alpha_then_beta]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
