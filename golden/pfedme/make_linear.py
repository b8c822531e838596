#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""pFedMe golden vectors on a linear model with minibatches, in exact
rational arithmetic.

pFedMe (Dinh et al., NeurIPS 2020, Alg. 1; shared/spec notes §2(c)-(f)):
each trainer i sets w_{i,0} = w_t and θ = w_t; for r = 0..R−1 it takes one
fresh minibatch D_{i,r}, sets θ ← w_{i,r} (reset) or keeps θ (warm), runs K
steps θ ← θ − η_p (∇f_i(θ; D_{i,r}) + λ(θ − w_{i,r}) + μθ) and updates
w_{i,r+1} = w_{i,r} − ηλ(w_{i,r} − θ).  Server:
w_{t+1} = (1 − β) w_t + β Σ_{i∈S^t} c_i w_{i,R}.  With pfedme.train = all
every client trains and S^t (the schedule's "selected") is averaged; with
sampled only S^t trains.  The personalised model reported is the last θ,
w_{i,R} (local_w) or w_{t+1} (global); a client that does not train keeps
its own.

Minibatches: each client's samples are cut once, in index order, into
batches of B = 2 (ragged last batch kept), and a per-client iterator
hands out the next batch for every local round, wrapping around and
persisting across rounds (the official code's DataLoader iterator, notes
§2(d)); so the R = 2 local rounds of a round see different samples, and a
client's next participation continues where it stopped.

Vectors (file = id without "pfedme/", '/' → '-'):
  pfedme/worked/linear-paper-minibatch  paper switches, N = 3, all train,
      S^0 = {0, 2}, S^1 = {1, 2} aggregated
  pfedme/worked/linear-warm-local-w     preset official (θ warm, n-weighted,
      personalised = w_{i,R}) with μ = 0.05 and β = 1.5
  pfedme/worked/linear-train-sampled    pfedme.train = sampled, three rounds
      S = {0, 1}, {1, 2}, {0, 2}: only S^t trains
  pfedme/worked/linear-paper-beta, …/linear-official-beta,
      …/linear-pfllib-beta   the paper switches and the official and pfllib
      presets with every constant distinct and none 1 (β given), K = 3 ≠ R
      (golden/coincidences.py)
  pfedme/worked/linear-pfllib-drawn     preset pfllib on given minibatches,
      S^0 = {0, 2} drawn by the sampler as [2, 0]

Inputs are the exact values of their doubles; expected values are
float(Fraction).  For each flag the generator runs the bugs of that class
(pflref_exact.py) and asserts that each moves an expected number far
outside the tolerance.

    /usr/bin/python3 golden/pfedme/make_linear.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

NOTES = pg.NOTES
GENERATOR = "golden/pfedme/make_linear.py (exact fractions)"
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: per client and round at most 6 inner steps and "
             "2 local updates, each a contraction (η_p(trace of the batch "
             "Hessian + λ + μ) < 2 and 0 < ηλ ≤ 1, asserted by the generator) "
             "adding fewer than 20 roundings of terms below 10 in magnitude, "
             "then one weighted sum and the β mix, over at most three rounds, "
             "so the error stays far below 1e-12; every flagged bug moves "
             "some value by more than 1e3 times the tolerance.",
}
MODEL = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": False}
CLIENTS = [
    {"X": [[0.812, -1.134], [-0.457, 0.629], [1.248, 0.376], [-0.935, -0.582]],
     "y": [1.407, -0.318, 0.924, -1.265]},
    {"X": [[-1.173, 0.264], [0.538, 1.091], [0.217, -0.846]],
     "y": [-0.752, 1.386, -0.493]},
    {"X": [[0.661, 0.943], [-1.317, -0.208], [0.394, -1.152], [1.026, 0.487],
           [-0.279, 1.335]],
     "y": [0.582, -1.644, -0.217, 1.173, 0.846]},
]
INIT = {"kind": "given", "w": [0.25, -0.5]}
B = 2
R = 2


class Batches:
    """Each client's batches of B in index order, cut once, handed out
    cyclically; the position persists across rounds."""

    def __init__(self, pr, bugs):
        self.one = [px.split_batches(pr.n(i), B, 1) for i in range(len(pr.clients))]
        self.pos = [0] * len(pr.clients)
        self.R = R + (1 if "epochs-plus-one" in bugs else 0) \
            - (1 if "epochs-minus-one" in bugs else 0)

    def take(self, i):
        out = []
        for _ in range(self.R):
            out.append(list(self.one[i][self.pos[i] % len(self.one[i])]))
            self.pos[i] += 1
        return out


def linear_vector(vid, fname, title, description, flags, mutants, algorithm,
                  rounds, check=None):
    """rounds: [(trainers, selected)] per round."""
    hp, sw = px.settings(algorithm)

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(MODEL, CLIENTS)
        w0 = px.initial(INIT, pr.P, bugs)
        w, v, trace, sched = list(w0), [list(w0) for _ in pr.clients], pg.Trace(), []
        it = Batches(pr, bugs)
        trained, lr_counts = set(), {}
        for t, (trainers, sel) in enumerate(rounds):
            plan = [(i, it.take(i)) for i in trainers]
            sched.append((plan, sel))
            w, v = px.pfedme_round(pr, w, v, w0, t, plan, sel, hp, sw, trace, bugs,
                                   trained, lr_counts)
        return pr, w, v, trace, sched

    result = run()
    pr, w, v, trace, sched = result
    for plan, _ in sched:
        for i, steps in plan:
            px.assert_prox_contractive(pr, i, steps, hp["eta_p"], hp["lambda"],
                                       hp["pfedme.mu"])
            # the R local rounds see different samples
            assert len(steps) == R and steps[0] != steps[1]
    assert 0 < hp["eta"] * hp["lambda"] <= 1
    if check is not None:
        check(pr, w, v, trace, sched)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda pr, w, v, trace, sched: (trace, w, v))
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         px.schedule_rounds(sched))
    prov = pg.provenance(
        "independent",
        f"{NOTES} §2(c) (one round), §2(d) (one fresh batch per local "
        "round), §2(e)-(f) (switches); Dinh et al., NeurIPS 2020, Alg. 1",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return fname, pg.vector(vid, title, prov, flags, spec, TOL, exp)


def differs_with(algorithm, rounds, switch, value):
    """The final state under another value of a switch (to assert that the
    vector separates the two readings)."""
    hp, sw = px.settings(algorithm)
    sw[switch] = value
    pr = px.Problem(MODEL, CLIENTS)
    w0 = px.initial(INIT, pr.P)
    w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
    it = Batches(pr, px.NO_BUGS)
    trained, lr_counts = set(), {}
    for t, (trainers, sel) in enumerate(rounds):
        if value == "all":
            trainers = list(range(len(pr.clients)))
        plan = [(i, it.take(i)) for i in trainers]
        w, v = px.pfedme_round(pr, w, v, w0, t, plan, sel, hp, sw, trace,
                               trained=trained, lr_counts=lr_counts)
    return w, v


def paper_minibatch():
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.2, "lambda": 2.0, "eta_p": 0.125,
                                     "K": 3}}
    rounds = [([0, 1, 2], [0, 2]), ([0, 1, 2], [1, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.theta_start", "warm") != (w, v)
        # round 1 continues each client's batch iterator: client 2 (n = 5)
        # took {0,1} {2,3}, then {4} (ragged) and {0,1}.
        assert sched[1][0][2][1] == [[4], [0, 1]]

    flags = ["theta-start", "prox-sign", "prox-reference", "batch-mean",
             "local-step-count", "stale-global", "unsampled-client",
             "stale-personal-state", "personal-eval", "aggregation-weights"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["pfedme-ref-wt"],
               "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one",
                                    "epochs-plus-one", "epochs-minus-one"],
               "stale-global": ["restart-w0"],
               "unsampled-client": ["aggregate-all"],
               "stale-personal-state": ["train-sampled"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "aggregation-weights": ["samples-weights"]}
    return linear_vector(
        "pfedme/worked/linear-paper-minibatch", "worked-linear-paper-minibatch.json",
        "pFedMe, paper reading, on a linear model with minibatches: all three "
        "clients train, S^0 = {0, 2} and S^1 = {1, 2} are averaged",
        "Three clients (n = 4, 3, 5), ŷ = x·w, half_squared loss, w_0 = "
        "(0.25, -0.5); η = 0.2, λ = 2, η_p = 0.125, K = 3, β = 1, paper "
        "switches (θ reset to w_{i,r}, weights 1/S, train = all, personalised "
        "= last θ).  Two rounds; every client trains with R = 2 local rounds, "
        "each on the next batch of B = 2 of its persistent iterator (client 2 "
        "in round 1: the ragged {4}, then {0,1}); the server averages "
        "w_{i,R} over the selected S^t only.",
        flags, mutants, algorithm, rounds, check)


def warm_local_w():
    algorithm = {"name": "pfedme", "preset": "official",
                 "hyperparameters": {"eta": 0.25, "lambda": 1.5, "eta_p": 0.1,
                                     "K": 2, "beta": 1.5, "pfedme.mu": 0.05}}
    rounds = [([0, 1, 2], [1, 2]), ([0, 1, 2], [0, 1])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.theta_start", "reset") != (w, v)
        # personalised = w_{i,R} of the last round
        last = {r["client"]: r["value"] for r in trace.records
                if r["event"] == "client_end" and r["name"] == "w_local"
                and r["round"] == 1}
        assert v == [last[i] for i in range(3)]

    flags = ["theta-start", "personal-eval", "aggregation-weights",
             "beta-ignored", "prox-sign"]
    mutants = {"theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"],
               "prox-sign": ["prox-plus"]}
    return linear_vector(
        "pfedme/worked/linear-warm-local-w", "worked-linear-warm-local-w.json",
        "pFedMe, preset official on a linear model with minibatches: θ warm "
        "across local rounds, n-weighted average, β = 1.5, μ = 0.05, "
        "personalised = w_{i,R}",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.25, λ = 1.5, η_p = 0.1, "
        "K = 2, preset official (pfedme.theta_start = warm, weights = "
        "samples, train = all, personal_eval = local_w) with the explicit "
        "pfedme.mu = 0.05 and β = 1.5.  S^0 = {1, 2}, S^1 = {0, 1}.",
        flags, mutants, algorithm, rounds, check)


def train_sampled():
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.2, "lambda": 2.0, "eta_p": 0.125,
                                     "K": 2},
                 "switches": {"pfedme.train": "sampled"}}
    rounds = [([0, 1], [0, 1]), ([1, 2], [1, 2]), ([0, 2], [0, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.train", "all") != (w, v)
        assert differs_with(algorithm, rounds, "pfedme.theta_start", "warm") != (w, v)
        # client 2 first trains in round 1 ({0,1} {2,3}) and continues its
        # iterator in round 2: the ragged {4}, then {0,1}
        assert sched[1][0][1] == (2, [[0, 1], [2, 3]])
        assert sched[2][0][1] == (2, [[4], [0, 1]])

    flags = ["unsampled-client", "theta-start", "personal-eval", "stale-global"]
    mutants = {"unsampled-client": ["train-all"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "stale-global": ["restart-w0"]}
    return linear_vector(
        "pfedme/worked/linear-train-sampled", "worked-linear-train-sampled.json",
        "pFedMe with pfedme.train = sampled on a linear model: only S^t "
        "trains; the others keep their personalised θ",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.2, λ = 2, η_p = 0.125, "
        "K = 2, paper switches except pfedme.train = sampled.  Three rounds, "
        "S = {0, 1}, {1, 2}, {0, 2}: only S^t trains (R = 2 batches each) and "
        "is averaged; client 2 reports w_0 until round 1, client 0 keeps its "
        "round-0 θ through round 1.",
        flags, mutants, algorithm, rounds, check)


# Coincidence-free vectors (golden/coincidences.py): every hyperparameter of
# one kind distinct and none equal to 1 (β given explicitly), K ≠ R, S^t a
# proper subset of the trainers with distinct n_i, two rounds.

def paper_beta():
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.185, "lambda": 2.35, "eta_p": 0.115,
                                     "K": 3, "beta": 0.73}}
    rounds = [([0, 1, 2], [0, 2]), ([0, 1, 2], [1, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.theta_start", "warm") != (w, v)
        assert differs_with(algorithm, rounds, "pfedme.weights", "samples") != (w, v)

    flags = ["theta-start", "prox-sign", "prox-reference", "batch-mean",
             "local-step-count", "stale-global", "unsampled-client",
             "personal-eval", "aggregation-weights", "beta-ignored"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["pfedme-ref-wt"],
               "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one",
                                    "epochs-plus-one", "epochs-minus-one"],
               "stale-global": ["restart-w0"],
               "unsampled-client": ["aggregate-all"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "aggregation-weights": ["samples-weights"],
               "beta-ignored": ["beta-one"]}
    return linear_vector(
        "pfedme/worked/linear-paper-beta", "worked-linear-paper-beta.json",
        "pFedMe, paper switches, β = 0.73, on a linear model with minibatches: "
        "no two hyperparameters equal, K = 3 ≠ R = 2",
        "The clients (n = 4, 3, 5), model, initial point and batch iterators "
        "of pfedme/worked/linear-paper-minibatch; η = 0.185, λ = 2.35, "
        "η_p = 0.115, K = 3, β = 0.73, paper switches (θ reset, weights 1/S, "
        "train = all, personalised = last θ).  All three clients train; "
        "S^0 = {0, 2}, S^1 = {1, 2} are averaged.",
        flags, mutants, algorithm, rounds, check)


def official_beta():
    algorithm = {"name": "pfedme", "preset": "official",
                 "hyperparameters": {"eta": 0.215, "lambda": 1.35, "eta_p": 0.095,
                                     "K": 3, "beta": 1.62, "pfedme.mu": 0.045}}
    rounds = [([0, 1, 2], [1, 2]), ([0, 1, 2], [0, 1])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.theta_start", "reset") != (w, v)
        assert differs_with(algorithm, rounds, "pfedme.weights", "uniform") != (w, v)

    flags = ["theta-start", "personal-eval", "aggregation-weights",
             "beta-ignored", "prox-sign", "unsampled-client", "stale-global"]
    mutants = {"theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=theta", "personal-eval=global"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"],
               "prox-sign": ["prox-plus"],
               "unsampled-client": ["aggregate-all"],
               "stale-global": ["restart-w0"]}
    return linear_vector(
        "pfedme/worked/linear-official-beta", "worked-linear-official-beta.json",
        "pFedMe, preset official, β = 1.62, μ = 0.045, on a linear model with "
        "minibatches: no two hyperparameters equal, K = 3 ≠ R = 2",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.215, λ = 1.35, "
        "η_p = 0.095, K = 3, β = 1.62, pfedme.mu = 0.045, preset official "
        "(θ warm, weights n_i/Σn_j, train = all, personalised = w_{i,R}).  "
        "S^0 = {1, 2}, S^1 = {0, 1}.",
        flags, mutants, algorithm, rounds, check)


def pfllib_beta():
    algorithm = {"name": "pfedme", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.165, "lambda": 2.15, "eta_p": 0.105,
                                     "K": 3, "beta": 0.84, "pfedme.mu": 0.035}}
    rounds = [([0, 1], [0, 1]), ([1, 2], [1, 2]), ([0, 2], [0, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.train", "all") != (w, v)
        assert differs_with(algorithm, rounds, "pfedme.weights", "uniform") != (w, v)

    flags = ["unsampled-client", "theta-start", "personal-eval", "stale-global",
             "aggregation-weights", "beta-ignored", "prox-sign"]
    mutants = {"unsampled-client": ["train-all"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=theta"],
               "stale-global": ["restart-w0"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"],
               "prox-sign": ["prox-plus"]}
    return linear_vector(
        "pfedme/worked/linear-pfllib-beta", "worked-linear-pfllib-beta.json",
        "pFedMe, preset pfllib, β = 0.84, μ = 0.035, on a linear model with "
        "minibatches: only S^t trains, the global model is reported",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.165, λ = 2.15, "
        "η_p = 0.105, K = 3, β = 0.84, pfedme.mu = 0.035, preset pfllib "
        "(θ warm, weights n_i/Σn_j, train = sampled, personalised = the "
        "global model).  Three rounds, S = {0, 1}, {1, 2}, {0, 2}.",
        flags, mutants, algorithm, rounds, check)


def pfllib_eval_reset():
    """Preset pfllib with PFLlib's evaluation defect switched on
    (pfedme.eval_reset = initial): client 2 first trains in round 1 and
    clients 0 and 1 in round 0 (from w0 = w^0 either way), so client 2's first theta starts at w0 while
    its w_{i,0} = w^1; client 1 trains in rounds 0 and 1 (reset once)."""
    algorithm = {"name": "pfedme", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.155, "lambda": 1.95, "eta_p": 0.115,
                                     "K": 3, "beta": 0.78, "pfedme.mu": 0.025},
                 "switches": {"pfedme.eval_reset": "initial"}}
    rounds = [([0, 1], [0, 1]), ([1, 2], [1, 2]), ([0, 2], [0, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "pfedme.eval_reset", "none") != (w, v)

    flags = ["pfedme-eval-reset", "unsampled-client", "theta-start",
             "stale-global", "aggregation-weights", "beta-ignored"]
    mutants = {"pfedme-eval-reset": ["eval-reset-ignored", "eval-reset-every-round"],
               "unsampled-client": ["train-all"],
               "theta-start": ["theta-start-flip"],
               "stale-global": ["restart-w0"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"]}
    return linear_vector(
        "pfedme/worked/linear-pfllib-eval-reset",
        "worked-linear-pfllib-eval-reset.json",
        "pFedMe, preset pfllib with PFLlib's evaluation defect: a client's "
        "first training starts θ at w⁰",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.155, λ = 1.95, "
        "η_p = 0.115, K = 3, β = 0.78, pfedme.mu = 0.025, preset pfllib and "
        "pfedme.eval_reset = initial.  S = {0, 1}, {1, 2}, {0, 2}: client 2 "
        "trains first in round 1, from θ = w⁰ and w_{i,0} = w¹.",
        flags, mutants, algorithm, rounds, check)


def pfllib_decay(eval_reset=False, run_preset=False):
    """Preset pfllib with PFLlib's -ld (lr.schedule = exponential,
    lr.gamma = 0.65): the preset decays η_p only (lr.scope = eta_p: the
    scheduler wraps pFedMeOptimizer) and counts each client's own
    trainings (lr.count = trainings).  S = {0, 2}, {1, 2}, {0, 1}: client 2
    trains round 1 with η_p γ, client 1 first trains in round 1 with η_p,
    client 0 round 2 with η_p γ (one training before, two rounds).
    eval_reset: with PFLlib's evaluation defect too (pfedme.eval_reset =
    initial; client 1's first θ starts at w⁰), as PFLlib runs both.
    run_preset: the same run as eval_reset by the preset pfllib_run alone
    (PFLlib's server.train() as shipped, its evaluation included)."""
    eval_reset = eval_reset or run_preset
    algorithm = {"name": "pfedme",
                 "preset": "pfllib_run" if run_preset else "pfllib",
                 "hyperparameters": {"eta": 0.135, "lambda": 1.65,
                                     "eta_p": 0.095, "K": 3, "beta": 0.72,
                                     "pfedme.mu": 0.045, "lr.gamma": 0.65},
                 "switches": {"lr.schedule": "exponential"}}
    if eval_reset and not run_preset:
        algorithm["switches"]["pfedme.eval_reset"] = "initial"
    rounds = [([0, 2], [0, 2]), ([1, 2], [1, 2]), ([0, 1], [0, 1])]
    hp, sw = px.settings(algorithm)
    assert sw["lr.scope"] == "eta_p" and sw["lr.count"] == "trainings"

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "lr.scope", "all") != (w, v)
        assert differs_with(algorithm, rounds, "lr.count", "rounds") != (w, v)
        assert differs_with(algorithm, rounds, "lr.schedule", "constant") != (w, v)

    flags = ["lr-schedule", "lr-count", "unsampled-client", "theta-start",
             "stale-global", "aggregation-weights", "beta-ignored", "prox-sign"]
    mutants = {"pfedme-eval-reset": ["eval-reset-ignored",
                                     "eval-reset-every-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted", "lr-scope-flip"],
               "lr-count": ["lr-per-round"],
               "unsampled-client": ["train-all"],
               "theta-start": ["theta-start-flip"],
               "stale-global": ["restart-w0"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"],
               "prox-sign": ["prox-plus"]}
    if eval_reset:
        flags.insert(0, "pfedme-eval-reset")
        check_decay = check

        def check(pr, w, v, trace, sched):
            check_decay(pr, w, v, trace, sched)
            assert differs_with(algorithm, rounds, "pfedme.eval_reset",
                                "none") != (w, v)
    else:
        del mutants["pfedme-eval-reset"]
    suffix = "-eval-reset" if eval_reset else ""
    if run_preset:   # req: pfedme.preset.pfllib_run
        assert px.settings(algorithm)[1]["pfedme.eval_reset"] == "initial"
        return linear_vector(
            "pfedme/worked/linear-pfllib-run", "worked-linear-pfllib-run.json",
            "pFedMe as PFLlib's server.train() runs it, by the preset "
            "pfllib_run alone: -ld on η_p per client training, and the "
            "evaluation's side effect (a first θ starts at w⁰)",
            "The clients, model, initial point and batch iterators of "
            "pfedme/worked/linear-paper-minibatch; η = 0.135, λ = 1.65, "
            "η_p = 0.095, K = 3, β = 0.72, pfedme.mu = 0.045, preset "
            "pfllib_run (pfllib and pfedme.eval_reset = initial) with "
            "lr.schedule = exponential, lr.gamma = 0.65.  Three rounds, "
            "S = {0, 2}, {1, 2}, {0, 1}: client 1's first training (round 1) "
            "starts θ at w⁰.",
            flags, mutants, algorithm, rounds, check)
    return linear_vector(
        "pfedme/worked/linear-pfllib-decay" + suffix,
        "worked-linear-pfllib-decay%s.json" % suffix,
        "pFedMe as PFLlib runs it with -ld: η_p decays per client "
        "training, η does not" + (", and a first θ starts at w⁰"
                                  if eval_reset else ""),
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.135, λ = 1.65, "
        "η_p = 0.095, K = 3, β = 0.72, pfedme.mu = 0.045, preset pfllib "
        "(θ warm, weights n_i/Σn_j, train = sampled, personalised = the "
        "global model, lr.scope = eta_p, lr.count = trainings) with "
        "lr.schedule = exponential, lr.gamma = 0.65: client i's inner steps "
        "take 0.095 · 0.65^(the rounds i trained before), its w update η = "
        "0.135.  Three rounds, S = {0, 2}, {1, 2}, {0, 1}." +
        (" pfedme.eval_reset = initial: client 1's first training (round "
         "1) starts θ at w⁰." if eval_reset else ""),
        flags, mutants, algorithm, rounds, check)


def paper_decay():
    """The paper's switches under an exponential decay (lr.scope = all and
    lr.count = rounds, the defaults): round t's η and η_p are both scaled
    by γ^t.  Every client trains in both rounds (train = all), S^t
    averaged."""
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.175, "lambda": 2.25,
                                     "eta_p": 0.105, "K": 3, "beta": 0.68,
                                     "lr.gamma": 0.55},
                 "switches": {"lr.schedule": "exponential"}}
    rounds = [([0, 1, 2], [0, 2]), ([0, 1, 2], [1, 2])]

    def check(pr, w, v, trace, sched):
        assert differs_with(algorithm, rounds, "lr.scope", "eta_p") != (w, v)
        assert differs_with(algorithm, rounds, "lr.schedule", "constant") != (w, v)

    flags = ["lr-schedule", "theta-start", "prox-sign", "stale-global",
             "unsampled-client", "personal-eval", "aggregation-weights",
             "beta-ignored"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted", "lr-scope-flip"],
               "theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "stale-global": ["restart-w0"],
               "unsampled-client": ["aggregate-all"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "aggregation-weights": ["samples-weights"],
               "beta-ignored": ["beta-one"]}
    return linear_vector(
        "pfedme/worked/linear-decay-paper", "worked-linear-decay-paper.json",
        "pFedMe, paper switches, with an exponential decay of η and η_p "
        "together",
        "The clients, model, initial point and batch iterators of "
        "pfedme/worked/linear-paper-minibatch; η = 0.175, λ = 2.25, η_p = "
        "0.105, K = 3, β = 0.68, paper switches (lr.scope = all, lr.count = "
        "rounds) with lr.schedule = exponential, lr.gamma = 0.55: round t "
        "steps with η · 0.55^t and η_p · 0.55^t.  Two rounds, all clients "
        "train, S^0 = {0, 2} and S^1 = {1, 2} averaged.",
        flags, mutants, algorithm, rounds, check)


def pfllib_drawn():
    """Preset pfllib (only S^t trains) with round 0 drawn as [2, 0]
    (golden/CHANGES.md, 2026-11-25, "drawn order"): batches given
    explicitly, every batch of the permuted round indexing the smaller
    client too, so pairing batches with drawn trains on other batches."""
    vid = "pfedme/worked/linear-pfllib-drawn"
    algorithm = {"name": "pfedme", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.145, "lambda": 1.85, "eta_p": 0.125,
                                     "K": 3, "beta": 0.67, "pfedme.mu": 0.055}}
    hp, sw = px.settings(algorithm)
    assert sw["pfedme.train"] == "sampled"
    rounds = px.with_drawn([
        {"clients": [0, 2], "batches": [[[0, 1], [2, 3]], [[3, 1], [0, 2]]]},
        {"clients": [1, 2], "batches": [[[0, 2], [1, 0]], [[4, 0], [2, 3]]]},
    ], [[2, 0], [1, 2]])

    def run(bugs=px.NO_BUGS, rnds=rounds):
        pr = px.Problem(MODEL, CLIENTS)
        w0 = px.initial(INIT, pr.P, bugs)
        w, v, trace = list(w0), [list(w0) for _ in pr.clients], pg.Trace()
        for t, plan in enumerate(px.plans_of(rnds)):
            w, v = px.pfedme_round(pr, w, v, w0, t, plan, [i for i, _ in plan],
                                   hp, sw, trace, bugs)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    for plan in px.plans_of(rounds):
        for i, steps in plan:
            px.assert_prox_contractive(pr, i, steps, hp["eta_p"], hp["lambda"],
                                       hp["pfedme.mu"])
    assert 0 < hp["eta"] * hp["lambda"] <= 1
    flags = ["unsampled-client", "theta-start", "personal-eval", "stale-global",
             "aggregation-weights", "beta-ignored", "prox-sign"]
    mutants = {"unsampled-client": ["train-all"],
               "theta-start": ["theta-start-flip"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=theta"],
               "stale-global": ["restart-w0"],
               "aggregation-weights": ["uniform-weights"],
               "beta-ignored": ["beta-one"],
               "prox-sign": ["prox-plus"]}

    def final(pr, w, v, trace):
        return (trace, w, v)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    misread = pg.expected(*final(*run(rnds=px.misread_drawn(rounds))))
    assert pg.detects(exp, misread, TOL) is not None
    title = ("pFedMe, preset pfllib, β = 0.67, μ = 0.055, on a linear model: "
             "a round drawn as [2, 0]")
    spec = pg.given_spec(
        title,
        "The clients (n = 4, 3, 5), model and initial point of "
        "pfedme/worked/linear-paper-minibatch; η = 0.145, λ = 1.85, η_p = "
        "0.125, K = 3, β = 0.67, pfedme.mu = 0.055, preset pfllib (θ warm, "
        "weights n_i/Σn_j, train = sampled, personalised = the global model). "
        "S^0 = {0, 2} drawn by the sampler as [2, 0] (batches[j] still "
        "belongs to clients[j]), S^1 = {1, 2}; R = 2 given minibatches per "
        "client and round.",
        MODEL, CLIENTS, INIT, algorithm, rounds)
    prov = pg.provenance(
        "independent",
        f"{NOTES} §2(c) (one round), §2(e)-(f) (switches, PFLlib); Dinh et al., "
        "NeurIPS 2020, Alg. 1; docs/formats.md (drawn: information only)",
        GENERATOR, {"w": w, **{f"v_{i}": vi for i, vi in enumerate(v)}})
    return "worked-linear-pfllib-drawn.json", pg.vector(vid, title, prov, flags,
                                                         spec, TOL, exp)


def main():
    pg.write_all(sys.argv, HERE,
                 (paper_minibatch, warm_local_w, train_sampled,
                  paper_beta, official_beta, pfllib_beta, pfllib_drawn,
                  pfllib_eval_reset, pfllib_decay,
                  lambda: pfllib_decay(eval_reset=True), paper_decay,
                  lambda: pfllib_decay(run_preset=True)))


if __name__ == "__main__":
    main()
