#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fine-tuning golden vector with finetune.scope = personal, in exact
rational arithmetic.

FedAvg-FT (shared/spec notes §5.1): after the FedAvg rounds (McMahan et al.
2017, Alg. 1; notes §1(c)) every client i fine-tunes a copy of the final
global model w:
    θ_i ← w;  S_ft times:  θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))
and, with finetune.scope = personal (shared/spec README, algorithms table:
"partial = only personal blocks move"), only the entries of the split's
personal blocks move; the shared blocks stay at w.

Vector (the file is the id without "finetune/", '/' → '-'):
  finetune/worked/personal-bias-prox   linear model with bias, split
      {"personal": ["b"]}, μ_ft = 1/2, one FedAvg round with S_0 = {0, 2}
      of three clients (so w ≠ w0), then three fine-tuning steps per client
  finetune/worked/samples-full, …/uniform-personal, …/keep-old-full   one
      per fedavg.weights value: two rounds, n = 3, 2, 4, η, η_ft, μ_ft distinct
      and none 0 or 1 (golden/coincidences.py)
  finetune/worked/default-personal   the same run with fedavg.weights left
      at its default (samples), scope = personal

Inputs are the exact values of their doubles; expected values are
float(Fraction).  For each flag the generator runs the bugs of that class
(pflref_exact.py) and asserts that each moves an expected number far outside
the tolerance.

    /usr/bin/python3 golden/finetune/make_personal.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: 2 FedAvg steps, one weighted sum and 3 "
             "fine-tuning steps per value chain, each step a contraction "
             "(η·(trace of the batch Hessian + μ_ft) < 2, asserted by the "
             "generator) adding fewer than 20 roundings of terms below 10 in "
             "magnitude, so the error stays far below 1e-12; every flagged "
             "bug moves some value by more than 1e3 times the tolerance.",
}


def personal_bias_prox():
    vid = "finetune/worked/personal-bias-prox"
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
    clients = [
        {"X": [[1.431, -0.592], [-0.768, 1.254], [0.219, 0.887]],
         "y": [0.693, -1.318, 1.547]},
        {"X": [[-1.085, -0.364], [0.526, 1.772]], "y": [-2.206, 0.871]},
        {"X": [[0.944, 0.135], [-1.617, -0.829], [0.372, -1.408]],
         "y": [1.962, -0.457, -0.713]},
    ]
    init = {"kind": "given", "w": [0.2, -0.4, 0.3]}
    eta, eta_ft, mu_ft = 0.1, 0.2, 0.5
    rounds = [([0, 2], 2, 1)]          # S_0, B, E
    ft_steps = 3                       # full-batch fine-tuning steps
    split = {"personal": ["b"]}
    mask = [0, 0, 1]                   # blocks w (2 entries), b (1 entry)

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, trace, sched = w0, pg.Trace(), []
        for t, (sel, B, E) in enumerate(rounds):
            plan = [(k, px.split_batches(pr.n(k), B, E, bugs)) for k in sel]
            sched.append(plan)
            w = px.fedavg_round(pr, w, w0, t, plan, pg.exact(eta), "samples",
                                trace, bugs)
        post = [px.split_batches(pr.n(i), None, ft_steps, bugs)
                for i in range(len(pr.clients))]
        thetas = px.finetune_phase(pr, w, w0, post, pg.exact(eta_ft),
                                   pg.exact(mu_ft), mask, trace, bugs)
        return pr, w, thetas, trace, sched, post

    result = run()
    pr, w, thetas, trace, sched, post = result
    w0 = px.initial(init, pr.P)
    for plan in sched:
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, pg.exact(eta))
    for i, steps in enumerate(post):
        px.assert_contractive(pr, i, steps, pg.exact(eta_ft), pg.exact(mu_ft))
    # What the vector relies on: training moved the global model (w ≠ w0,
    # in every block), and fine-tuning moved only b.
    assert all(a != b for a, b in zip(w, w0))
    for th in thetas:
        assert th[:2] == w[:2] and th[2] != w[2]

    flags = ["finetune-scope", "prox-sign", "prox-reference", "stale-global",
             "unsampled-client"]
    mutants = {"finetune-scope": ["scope-full"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
               "stale-global": ["finetune-w0"],
               "unsampled-client": ["train-all", "keep-old", "all-denominator"]}
    exp = pg.checked_expected(
        vid, TOL, flags, mutants, result, run,
        lambda pr, w, thetas, trace, sched, post: (trace, w, thetas))
    title = ("FedAvg-FT with finetune.scope = personal: only the bias moves, "
             "μ_ft = 1/2 toward the trained global w")
    description = (
        "Three clients (n = 3, 2, 3), linear model ŷ = x·w + b, "
        "half_squared loss, w0 = (0.2, -0.4, 0.3).  One FedAvg round: "
        "S_0 = {0, 2}, batches of B = 2 in index order ({0,1} {2}), "
        "η = 0.1, weights n_k/m_t.  Then every client, the unsampled "
        "client 1 included, fine-tunes θ_i ← w with 3 full-batch steps "
        "θ_i ← θ_i − η_ft (∇f_i(θ_i) + μ_ft (θ_i − w)), η_ft = 0.2, "
        "μ_ft = 0.5, on the personal block b only; θ_i's w-block stays "
        "at the global w's.")
    algorithm = {"name": "finetune",
                 "hyperparameters": {"eta": eta, "eta_ft": eta_ft,
                                     "mu_ft": mu_ft},
                 "switches": {"fedavg.weights": "samples",
                              "finetune.scope": "personal"}}
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched), split=split, post=post)
    prov = pg.provenance(
        "independent",
        f"{pg.NOTES} §5.1(c) and §1(c); shared/spec README.md, algorithms "
        "table (Fine-tune, finetune.scope); McMahan et al., AISTATS 2017, "
        "Alg. 1",
        "golden/finetune/make_personal.py (exact fractions)",
        {"w": w, **{f"theta_{i}": th for i, th in enumerate(thetas)}})
    return "worked-personal-bias-prox.json", pg.vector(
        vid, title, prov, flags, spec, TOL, exp)


# Coincidence-free vectors (golden/coincidences.py): η, η_ft, μ_ft distinct
# and none 1 or 0, client sizes 3, 2, 4, two FedAvg rounds, minibatches that
# differ from step to step, one vector per fedavg.weights value, both scopes.
CLIENTS3 = [
    {"X": [[1.431, -0.592], [-0.768, 1.254], [0.219, 0.887]],
     "y": [0.693, -1.318, 1.547]},
    {"X": [[-1.085, -0.364], [0.526, 1.772]], "y": [-2.206, 0.871]},
    {"X": [[0.944, 0.135], [-1.617, -0.829], [0.372, -1.408], [0.583, 1.196]],
     "y": [1.962, -0.457, -0.713, 0.402]},
]
MODEL3 = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
INIT3 = {"kind": "given", "w": [0.2, -0.4, 0.3]}
ROUNDS3 = [[0, 2], [1, 2]]


def spread_vector(name, weights, scope, eta, eta_ft, mu_ft, explicit=True):
    """explicit False: fedavg.weights is left out of the spec, so its
    default (samples) is in force; weights must then be "samples"."""
    assert explicit or weights == "samples"
    vid = f"finetune/worked/{name}"
    model, clients, init = MODEL3, CLIENTS3, INIT3
    ft_steps = 2
    split = {"personal": ["b"]} if scope == "personal" else None
    mask = [0, 0, 1] if scope == "personal" else None

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        w, trace, sched = w0, pg.Trace(), []
        for t, sel in enumerate(ROUNDS3):
            plan = [(k, px.split_batches(pr.n(k), 2, 1, bugs)) for k in sel]
            sched.append(plan)
            w = px.fedavg_round(pr, w, w0, t, plan, pg.exact(eta), weights,
                                trace, bugs)
        post = [px.split_batches(pr.n(i), None, ft_steps, bugs)
                for i in range(len(pr.clients))]
        thetas = px.finetune_phase(pr, w, w0, post, pg.exact(eta_ft),
                                   pg.exact(mu_ft), mask, trace, bugs)
        return pr, w, thetas, trace, sched, post

    result = run()
    pr, w, thetas, trace, sched, post = result
    for plan in sched:
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, pg.exact(eta))
    for i, steps in enumerate(post):
        px.assert_contractive(pr, i, steps, pg.exact(eta_ft), pg.exact(mu_ft))
    for th in thetas:
        if scope == "personal":
            assert th[:2] == w[:2] and th[2] != w[2]
        else:
            assert all(a != b for a, b in zip(th, w))

    flags = ["prox-sign", "prox-reference", "stale-global", "unsampled-client",
             "aggregation-weights", "local-step-count"]
    mutants = {"prox-sign": ["prox-plus"],
               "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
               "stale-global": ["finetune-w0", "restart-w0"],
               "unsampled-client": ["train-all"],
               "aggregation-weights": {"samples": ["uniform-weights", "keep-old"],
                                       "uniform": ["keep-old"],
                                       "all_keep_old": ["uniform-weights"]}[weights],
               "local-step-count": ["epochs-plus-one", "epochs-minus-one"]}
    if scope == "personal":
        flags.insert(0, "finetune-scope")
        mutants["finetune-scope"] = ["scope-full"]
    exp = pg.checked_expected(
        vid, TOL, flags, mutants, result, run,
        lambda pr, w, thetas, trace, sched, post: (trace, w, thetas))
    what = {"samples": "n_k/m_t", "uniform": "1/m",
            "all_keep_old": "n_k/n, unsampled clients keeping w_t"}[weights]
    title = (f"FedAvg-FT, fedavg.weights = {weights}"
             f"{'' if explicit else ' (the default)'}, finetune.scope = {scope}: "
             f"η = {eta}, η_ft = {eta_ft}, μ_ft = {mu_ft}, two rounds")
    description = (
        "Three clients (n = 3, 2, 4), linear model ŷ = x·w + b, half_squared "
        "loss, w0 = (0.2, -0.4, 0.3).  Two FedAvg rounds, S_0 = {0, 2}, "
        f"S_1 = {{1, 2}}, batches of B = 2 in index order, η = {eta}, weights "
        f"{what}{'' if explicit else ' (fedavg.weights not given: its default)'}.  Then every client fine-tunes θ_i ← w with 2 full-batch "
        f"steps θ_i ← θ_i − η_ft (∇f_i(θ_i) + μ_ft (θ_i − w)), η_ft = {eta_ft}, "
        f"μ_ft = {mu_ft}" + (", on the personal block b only." if scope == "personal"
                              else ", on every parameter."))
    algorithm = {"name": "finetune",
                 "hyperparameters": {"eta": eta, "eta_ft": eta_ft, "mu_ft": mu_ft},
                 "switches": {"fedavg.weights": weights, "finetune.scope": scope}}
    if not explicit:
        del algorithm["switches"]["fedavg.weights"]
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched), split=split, post=post)
    prov = pg.provenance(
        "independent",
        f"{pg.NOTES} §5.1(c) and §1(c); shared/spec README.md, algorithms "
        "table (Fine-tune, finetune.scope); McMahan et al., AISTATS 2017, "
        "Alg. 1",
        "golden/finetune/make_personal.py (exact fractions)",
        {"w": w, **{f"theta_{i}": th for i, th in enumerate(thetas)}})
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec, TOL, exp)


def samples_full():
    return spread_vector("samples-full", "samples", "full", 0.115, 0.185, 0.35)


def uniform_personal():
    return spread_vector("uniform-personal", "uniform", "personal", 0.135, 0.215, 0.45)


def keep_old_full():
    return spread_vector("keep-old-full", "all_keep_old", "full", 0.105, 0.165, 0.65)


def default_personal():
    """The default fedavg.weights (samples: the spec does not name it) on
    unequal sizes in partial rounds (golden/CHANGES.md, 2026-11-25, "drawn
    order")."""
    return spread_vector("default-personal", "samples", "personal", 0.145, 0.235,
                         0.55, explicit=False)


def main():
    pg.write_all(sys.argv, HERE, (personal_bias_prox, samples_full, uniform_personal,
                                  keep_old_full, default_personal))


if __name__ == "__main__":
    main()
