#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAvg golden vectors on linear models, in exact rational arithmetic.

McMahan et al., AISTATS 2017, Algorithm 1 (shared/spec notes §1(c)):
  w ← w_t; for each epoch, for each batch b (split once in index order,
  ragged last batch kept): w ← w − η ∇F_k(w; b), F the batch mean of the
  per-sample loss; w_{t+1} = Σ_{k∈S_t} (n_k / m_t) w^k, m_t = Σ_{S_t} n_k.
Linear model ŷ = x·w + b; loss squared ℓ = (ŷ − y)², gradient
(2/n_b) X_bᵀ r and (2/n_b) Σ r for the bias (shared/spec README rule 3), or
half_squared ℓ = ½ (ŷ − y)².

Vectors (ids are stable; the file is the id without "fedavg/", '/' → '-'):
  fedavg/worked/squared-bias     d = 2 features + bias, squared loss, full
      batches, E = 2, two rounds, client 1 unsampled in round 1
  fedavg/worked/minibatch-b2-e2  B = 2 over n = 5 (and n = 4), E = 2, two
      rounds
  fedavg/worked/bias-zeros-drawn  a bias from init zeros, the default
      weighting, given minibatches, round 1 drawn by the sampler as [2, 0]

Every input is taken at the exact value of its double; every expected value
is the correctly rounded double of the exact result (float(Fraction)).  For
each flag, the generator runs the bugs of that class (pflref_exact.py) and
asserts that each one moves an expected number far outside the tolerance.

    /usr/bin/python3 golden/fedavg/make_linear.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

GENERATOR = "golden/fedavg/make_linear.py (exact fractions)"
SOURCE = ("McMahan et al., AISTATS 2017, Alg. 1; shared/spec "
          "notes-fedavg-pfedme-ditto-perfedavg-apfl.md §1(c); shared/spec "
          "README.md rule 3 (batch-mean loss; squared: grad (2/n) Xᵀ(Xw − y))")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 12 local steps per value chain, each a "
             "contraction (η·trace of the batch Hessian < 2, asserted by the "
             "generator) adding fewer than 20 roundings of terms below 30 in "
             "magnitude (< 1e-13 absolute), so the error stays below 1e-12; "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}


def fedavg_vector(vid, fname, title, description, flags, mutants, model,
                  clients, init, eta, weights, rounds, lr=None, preset=None):
    """rounds: [(S_t, B, E)], B None = full batch.  lr: the learning-rate
    decay ({"hyperparameters": {...}, "switches": {...}} of lr.*), or None
    (constant)."""
    eta_x = pg.exact(eta)
    algorithm = {"name": "fedavg", "hyperparameters": {"eta": eta},
                 "switches": {"fedavg.weights": weights}}
    if preset is not None:   # the preset's own settings are not restated
        algorithm["preset"] = preset
        del algorithm["switches"]["fedavg.weights"]
    if lr is not None:
        algorithm["hyperparameters"].update(lr["hyperparameters"])
        algorithm["switches"].update(lr["switches"])

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, trace, sched = w0, pg.Trace(), []
        trained = [0] * len(clients)   # the rounds each client trained in
        for t, (sel, B, E) in enumerate(rounds):
            plan = [(k, px.split_batches(pr.n(k), B, E, bugs)) for k in sel]
            sched.append(plan)
            # η of client k's train() in round t (lr.count: the round, or
            # the client's own trainings before)
            eta_t = {k: eta_x * px.round_factor(algorithm, t, bugs,
                                                trained=trained[k])
                     for k in sel}
            for k in sel:
                trained[k] += 1
            w = px.fedavg_round(pr, w, w0, t, plan, eta_t, weights, trace, bugs)
        return pr, w, trace, sched

    result = run()
    pr, w, trace, sched = result
    for plan in sched:
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, eta_x)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda pr, w, trace, sched: (trace, w, None))
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched))
    source = SOURCE if lr is None else SOURCE + "; " + LR_SOURCE
    prov = pg.provenance("independent", source, GENERATOR, {"w": w})
    return fname, pg.vector(vid, title, prov, flags, spec, TOL, exp)


def squared_bias():
    model = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
    clients = [
        {"X": [[2.385, -0.716], [0.412, 1.937], [-1.254, 0.583]],
         "y": [1.62, -0.347, 2.91]},
        {"X": [[1.118, -2.046], [-0.329, 0.874]],
         "y": [-1.73, 0.456]},
        {"X": [[0.761, 1.305], [-1.892, -0.238], [2.047, 0.619], [0.153, -1.461]],
         "y": [0.982, -2.214, 3.105, -0.667]},
    ]
    flags = ["loss-scale", "feature-transpose", "bias-gradient", "bias-update",
             "unsampled-client", "aggregation-weights", "initial-point"]
    mutants = {
        "loss-scale": ["loss-x2"],
        "feature-transpose": ["transpose-x"],
        "bias-gradient": ["bias-sum"],
        "bias-update": ["bias-frozen"],
        "unsampled-client": ["all-denominator", "keep-old", "train-all"],
        "aggregation-weights": ["uniform-weights"],
        "initial-point": ["init-zeros"],
    }
    return fedavg_vector(
        "fedavg/worked/squared-bias", "worked-squared-bias.json",
        "FedAvg, linear model with bias, squared loss, d = 2, E = 2 full "
        "batches, two rounds (client 1 unsampled in round 1)",
        "Three clients (n = 3, 2, 4), w = (w_1, w_2, b) from (0.25, -0.5, "
        "0.125); eta = 0.05; each participant takes E = 2 full-batch steps "
        "w <- w - eta (2/n) [X 1]^T ([X 1] w - y); S_0 = {0, 1, 2}, S_1 = "
        "{0, 2}; server weights n_k / sum_{S_t} n_j.",
        flags, mutants, model, clients,
        {"kind": "given", "w": [0.25, -0.5, 0.125]}, 0.05, "samples",
        [([0, 1, 2], None, 2), ([0, 2], None, 2)])


SQ_CLIENTS = [
    {"X": [[2.385, -0.716], [0.412, 1.937], [-1.254, 0.583]],
     "y": [1.62, -0.347, 2.91]},
    {"X": [[1.118, -2.046], [-0.329, 0.874]], "y": [-1.73, 0.456]},
    {"X": [[0.761, 1.305], [-1.892, -0.238], [2.047, 0.619], [0.153, -1.461]],
     "y": [0.982, -2.214, 3.105, -0.667]},
]
LR_SOURCE = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientbase.py "
             "(-ld/-ldg: ExponentialLR stepped after each train()); shared/spec/"
             "notes-pfllib-as-run.md §2.2; ref/engine/lr.c")


def lr_exponential():
    """lr.schedule = exponential, gamma = 0.8: round t steps with
    0.06 * 0.8^t; every client in every round (so PFLlib's per-client count
    is the round), three rounds so that gamma^2 shows."""
    model = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
    lr = {"hyperparameters": {"lr.gamma": 0.8},
          "switches": {"lr.schedule": "exponential"}}
    flags = ["lr-schedule", "aggregation-weights", "stale-global"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted"],
               "aggregation-weights": ["uniform-weights"],
               "stale-global": ["restart-w0"]}
    return fedavg_vector(
        "fedavg/worked/lr-exponential", "worked-lr-exponential.json",
        "FedAvg with PFLlib's exponential learning-rate decay: eta_t = "
        "0.06 * 0.8^t, three rounds",
        "Three clients (n = 3, 2, 4), linear model with bias, squared loss, "
        "w0 = (0.25, -0.5, 0.125); lr.schedule = exponential, lr.gamma = 0.8, "
        "eta = 0.06: round t's local steps take 0.06 * 0.8^t; E = 2 full "
        "batches, every client in every round; server weights n_k / sum n_j.",
        flags, mutants, model, SQ_CLIENTS,
        {"kind": "given", "w": [0.25, -0.5, 0.125]}, 0.06, "samples",
        [([0, 1, 2], None, 2)] * 3, lr)


def lr_step():
    """lr.schedule = step, gamma = 0.5, lr.step_rounds = 2: rounds 0 and 1
    step with eta, round 2 with eta / 2."""
    model = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
    lr = {"hyperparameters": {"lr.gamma": 0.5, "lr.step_rounds": 2},
          "switches": {"lr.schedule": "step"}}
    flags = ["lr-schedule", "unsampled-client"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted"],
               "unsampled-client": ["all-denominator", "keep-old"]}
    return fedavg_vector(
        "fedavg/worked/lr-step", "worked-lr-step.json",
        "FedAvg with a step learning-rate schedule: eta halved every two "
        "rounds, three rounds, minibatches",
        "Three clients (n = 3, 2, 4), linear model with bias, squared loss, "
        "w0 = (0.25, -0.5, 0.125); lr.schedule = step, lr.gamma = 0.5, "
        "lr.step_rounds = 2, eta = 0.07: rounds 0 and 1 step with 0.07, round "
        "2 with 0.035; B = 2, E = 1; S = {0, 1, 2}, {0, 2}, {1, 2}.",
        flags, mutants, model, SQ_CLIENTS,
        {"kind": "given", "w": [0.25, -0.5, 0.125]}, 0.07, "samples",
        [([0, 1, 2], 2, 1), ([0, 2], 2, 1), ([1, 2], 2, 1)], lr)


def lr_per_client():
    """PFLlib's preset with its exponential decay under partial
    participation: each client's ExponentialLR steps when that client
    trains (lr.count = trainings), so a client's step is 0.065 * 0.7^(the
    rounds it trained before), not 0.065 * 0.7^t.  S = {0, 1}, {1, 2},
    {0, 2}: client 2 first trains in round 1 with the undecayed step,
    client 0 trains in round 2 with one decay."""
    model = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
    lr = {"hyperparameters": {"lr.gamma": 0.7},
          "switches": {"lr.schedule": "exponential", "lr.count": "trainings"}}
    flags = ["lr-count", "lr-schedule", "unsampled-client"]
    mutants = {"lr-count": ["lr-per-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted"],
               "unsampled-client": ["all-denominator", "keep-old"]}
    return fedavg_vector(
        "fedavg/worked/lr-per-client", "worked-lr-per-client.json",
        "FedAvg as PFLlib runs it with -ld: each client's step decays with "
        "the rounds it trained, partial participation",
        "Three clients (n = 3, 2, 4), linear model with bias, squared loss, "
        "w0 = (0.25, -0.5, 0.125); preset pfllib with lr.schedule = "
        "exponential, lr.gamma = 0.7, lr.count = trainings, eta = 0.065: "
        "client k's steps in a round take 0.065 * 0.7^(rounds k trained "
        "before); B = 2, E = 1; S = {0, 1}, {1, 2}, {0, 2}; server "
        "weights n_k / sum_{S_t} n_j.",
        flags, mutants, model, SQ_CLIENTS,
        {"kind": "given", "w": [0.25, -0.5, 0.125]}, 0.065, "samples",
        [([0, 1], 2, 1), ([1, 2], 2, 1), ([0, 2], 2, 1)], lr,
        "pfllib")


def minibatch():
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": False}
    clients = [
        {"X": [[1.274, -0.386], [0.593, 2.117], [-1.845, 0.462],
               [0.308, -1.529], [2.061, 0.775]],
         "y": [0.847, 2.536, -1.392, -0.918, 3.044]},
        {"X": [[-0.657, 1.382], [1.936, -0.214], [0.125, 0.949],
               [-1.173, -1.606]],
         "y": [1.215, 1.678, 0.304, -2.451]},
    ]
    flags = ["batch-mean", "ragged-batch", "local-step-count", "stale-global"]
    mutants = {
        "batch-mean": ["batch-sum"],
        "ragged-batch": ["ragged-drop"],
        "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
        "stale-global": ["restart-w0"],
    }
    return fedavg_vector(
        "fedavg/worked/minibatch-b2-e2", "worked-minibatch-b2-e2.json",
        "FedAvg ClientUpdate with B = 2, E = 2 on n = 5 (ragged batch {4}) "
        "and n = 4, two rounds",
        "Two clients (n = 5, 4), linear model without bias, half_squared "
        "loss, w_0 = 0, eta = 0.1.  ClientUpdate splits 0..n-1 once in index "
        "order into batches of B = 2 (client 0: {0,1} {2,3} {4}, the ragged "
        "batch kept; client 1: {0,1} {2,3}) and runs E = 2 epochs over them "
        "(6 and 4 steps), each step w <- w - eta (1/|b|) X_b^T (X_b w - y_b); "
        "both clients in both rounds, round 1 starting from w_1.",
        flags, mutants, model, clients, {"kind": "zeros"}, 0.1, "samples",
        [([0, 1], 2, 2), ([0, 1], 2, 2)])


def bias_zeros_drawn():
    """A bias, init zeros and the default weighting (no fedavg.weights in
    the spec: samples), with a round whose sampler order drawn differs from
    the ascending clients (golden/CHANGES.md, 2026-11-25, "drawn order").
    Every batch of the permuted round indexes the smaller client too, so a
    candidate that pairs batches with drawn instead of clients trains on
    other batches (and does not merely crash)."""
    vid = "fedavg/worked/bias-zeros-drawn"
    model = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
    clients = [
        {"X": [[1.235, -0.648], [-0.417, 1.126], [0.862, 0.391], [-1.073, -0.284]],
         "y": [1.482, -0.563, 0.917, -1.246]},
        {"X": [[0.538, 1.347], [-1.186, 0.223]], "y": [-0.392, 1.615]},
        {"X": [[-0.726, 0.954], [1.318, -1.042], [0.147, 0.683]],
         "y": [0.745, -1.328, 0.261]},
    ]
    init = {"kind": "zeros"}
    eta = 0.085
    rounds = px.with_drawn([
        {"clients": [0, 1, 2], "batches": [[[0, 1], [2, 3]], [[1], [0]],
                                           [[0, 2], [1]]]},
        {"clients": [0, 2], "batches": [[[2, 0], [1]], [[1, 2], [0, 1], [2]]]},
    ], [[0, 1, 2], [2, 0]])
    eta_x = pg.exact(eta)

    def run(bugs=px.NO_BUGS, rnds=rounds):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, trace = w0, pg.Trace()
        for t, plan in enumerate(px.plans_of(rnds)):
            w = px.fedavg_round(pr, w, w0, t, plan, eta_x, "samples", trace, bugs)
        return pr, w, trace

    result = run()
    pr, w, trace = result
    for plan in px.plans_of(rounds):
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, eta_x)
    flags = ["bias-gradient", "bias-update", "aggregation-weights",
             "unsampled-client", "stale-global", "batch-mean", "loss-scale"]
    mutants = {"bias-gradient": ["bias-sum"], "bias-update": ["bias-frozen"],
               "aggregation-weights": ["uniform-weights"],
               "unsampled-client": ["all-denominator", "keep-old", "train-all"],
               "stale-global": ["restart-w0"], "batch-mean": ["batch-sum"],
               "loss-scale": ["loss-x2"]}

    def final(pr, w, trace):
        return (trace, w, None)

    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run, final)
    # the drawn order read where clients belongs moves the result
    misread = pg.expected(*final(*run(rnds=px.misread_drawn(rounds))))
    assert pg.detects(exp, misread, TOL) is not None
    assert all(x != 0 for x in w), w      # the bias and both weights moved
    title = ("FedAvg, linear model with bias from w0 = 0, default (samples) "
             "weights, a round drawn in the order 2, 0")
    spec = pg.given_spec(
        title,
        "Three clients (n = 4, 2, 3), squared loss, w = (w_1, w_2, b) from "
        "init zeros, eta = 0.085, fedavg.weights left at its default "
        "(samples: n_k / sum_{S_t} n_j).  Round 0: S = {0, 1, 2}, minibatch "
        "steps; round 1: S = {0, 2} (client 1 unsampled) drawn by the sampler "
        "as [2, 0]: batches[j] still belongs to clients[j] (client 0: {2,0} "
        "{1}; client 2: {1,2} {0,1} {2}).",
        model, clients, init, {"name": "fedavg", "hyperparameters": {"eta": eta}},
        rounds)
    prov = pg.provenance("independent", SOURCE + "; docs/formats.md (drawn: "
                         "information only)", GENERATOR, {"w": w})
    return "worked-bias-zeros-drawn.json", pg.vector(vid, title, prov, flags,
                                                      spec, TOL, exp)


def main():
    pg.write_all(sys.argv, HERE, (squared_bias, minibatch, bias_zeros_drawn,
                                  lr_exponential, lr_step, lr_per_client))


if __name__ == "__main__":
    main()
