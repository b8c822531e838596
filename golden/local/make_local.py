#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local-only golden vectors ("name": "local"), in exact rational arithmetic.

Local only (the "purely local" baseline of seed 000, Code 14.7.1): client i
trains its own v_i, starting from the initial parameters w0, on its own data
only; in round t each participant runs local SGD over its batches,
    v_i ← v_i − η ∇F_i(v_i; b),
v_i persists across rounds and a client outside S_t keeps its v_i.

Vectors (the file is the id without "local/", '/' → '-'):
  local/worked/two-rounds      linear model with bias, four clients,
      S_0 = {0, 1}, S_1 = {1, 2}; client 3 never takes part
  local/closed-form/quadratic  f_i(v) = ½ Σ_j a_ij (v_j − c_ij)², where
      s steps of size η give v_s = c + (1 − η a)^s (v_0 − c) entrywise;
      two rounds of two steps, so s counts across rounds (v persists)
  local/worked/drawn-order     given minibatches, round 1 S = {0, 2} drawn
      by the sampler as [2, 0] (batches[j] still belongs to clients[j])

Inputs are the exact values of their doubles; expected values are
float(Fraction).  For each flag the generator runs the bugs of that class
(pflref_exact.py) and asserts that each moves an expected number far outside
the tolerance.

    /usr/bin/python3 golden/local/make_local.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

SOURCE_LOCAL = ("seed 000 (Code 14.7.1, the local column); shared/spec "
                "README.md, algorithms table (Local only) and rule 3")
TOL_LINEAR = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 4 local steps per client, each a "
             "contraction (η·trace of the batch Hessian < 2, asserted by the "
             "generator) adding fewer than 20 roundings of terms below 10 in "
             "magnitude, so the error stays far below 1e-12; every flagged bug "
             "moves some value by more than 1e3 times the tolerance.",
}
TOL_QUADRATIC = {
    "atol": 1e-13,
    "rtol": 1e-13,
    "basis": "fp64 against the closed form: each entry takes 4 steps "
             "v − η·(a·(v − c)) (η a power of 2; |1 − ηa| ≤ 7/8), each adding "
             "at most about 1.5e-15 of rounding for |v|, |c| < 2.5, so the "
             "error stays below 1e-14; every flagged bug moves some value by "
             "more than 1e3 times the tolerance.",
}


def local_vector(vid, fname, title, description, flags, mutants, model,
                 clients, init, eta, rounds, tol, provenance, check=None,
                 algorithm=None):
    """rounds: [(S_t, B, E)], B None = full batch.  algorithm: the spec's
    "algorithm" object (default: eta only); its lr.* settings give client
    i's step in round t as eta * px.round_factor (lr.count = trainings:
    the rounds i trained in before)."""
    eta_x = pg.exact(eta)
    if algorithm is None:
        algorithm = {"name": "local", "hyperparameters": {"eta": eta}}

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        v, trace, sched = [list(w0) for _ in pr.clients], pg.Trace(), []
        trained = [0] * len(clients)
        for t, (sel, B, E) in enumerate(rounds):
            plan = [(k, px.split_batches(pr.n(k), B, E, bugs)) for k in sel]
            sched.append(plan)
            eta_t = {k: eta_x * px.round_factor(algorithm, t, bugs,
                                                trained=trained[k])
                     for k in sel}
            for k in sel:
                trained[k] += 1
            v = px.local_round(pr, v, w0, t, plan, eta_t, trace, bugs)
        return pr, v, trace, sched

    result = run()
    pr, v, trace, sched = result
    for plan in sched:
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, eta_x)
    if check is not None:
        check(pr, v, trace)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda pr, v, trace, sched: (trace, None, v))
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         px.schedule_json(sched))
    prov = pg.provenance(*provenance, {f"v_{i}": vi for i, vi in enumerate(v)})
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def two_rounds():
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
    clients = [
        {"X": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],
         "y": [-0.775, 1.409, 0.236]},
        {"X": [[-1.426, 0.357], [0.689, -0.942]], "y": [0.518, -1.263]},
        {"X": [[0.347, 1.788], [-0.915, -0.126], [1.204, -0.563]],
         "y": [2.071, -0.684, 0.955]},
        {"X": [[1.652, 0.481], [-0.238, -1.117]], "y": [1.337, -0.829]},
    ]
    flags = ["stale-personal-state", "initial-point"]
    mutants = {"stale-personal-state": ["reset-personal", "train-all"],
               "initial-point": ["init-zeros"]}
    return local_vector(
        "local/worked/two-rounds", "worked-two-rounds.json",
        "Local only, linear model with bias, two rounds with different "
        "participants (client 1 in both, client 3 in none)",
        "Four clients (n = 3, 2, 3, 2), v_i = (w_1, w_2, b) starting at w0 = "
        "(0.3, -0.2, 0.1), half_squared loss, η = 0.2.  Round 0: S = {0, 1}, "
        "batches of B = 2 in index order, E = 1; round 1: S = {1, 2}, two "
        "full-batch steps.  v_1 continues in round 1 from its round-0 value; "
        "v_0 keeps its round-0 value; v_3 stays at w0.",
        flags, mutants, model, clients,
        {"kind": "given", "w": [0.3, -0.2, 0.1]}, 0.2,
        [([0, 1], 2, 1), ([1, 2], None, 2)], TOL_LINEAR,
        ("independent", SOURCE_LOCAL,
         "golden/local/make_local.py (exact fractions)"))


def closed_form_quadratic():
    model = {"kind": "quadratic", "d": 3}
    clients = [{"a": [0.5, 3.0, 6.0], "c": [2.385, -1.25, 0.7]},
               {"a": [1.0, 2.0, 7.0], "c": [-0.46, 1.93, -2.2]}]
    init = {"kind": "given", "w": [1.0, 0.5, -2.0]}
    eta = 0.25
    steps_per_round = 2

    def check(pr, v, trace):
        # The closed form, entry by entry: v_s = c + (1 − ηa)^s (v_0 − c).
        v0 = pg.exact_vec(init["w"])
        eta_x = pg.exact(eta)
        for r in trace.records:
            if r["event"] == "step":
                s = r["round"] * steps_per_round + r["step"]
            elif r["event"] in ("client_begin", "client_end"):
                s = r["round"] * steps_per_round + (0 if r["event"] == "client_begin"
                                                    else steps_per_round)
            cl = pr.clients[r["client"]]
            closed = [c + (1 - eta_x * a) ** s * (x0 - c)
                      for a, c, x0 in zip(cl["a"], cl["c"], v0)]
            assert r["value"] == closed, (r, closed)
        for i, cl in enumerate(pr.clients):
            s = 2 * steps_per_round
            assert v[i] == [c + (1 - eta_x * a) ** s * (x0 - c)
                            for a, c, x0 in zip(cl["a"], cl["c"], v0)]
        # 1 − ηa: client 0 (7/8, 1/4, −1/2), client 1 (3/4, 1/2, −3/4).
        assert [1 - eta_x * a for a in pr.clients[0]["a"]] == [
            Fraction(7, 8), Fraction(1, 4), Fraction(-1, 2)]

    flags = ["stale-personal-state", "local-step-count", "loss-scale",
             "initial-point"]
    mutants = {"stale-personal-state": ["reset-personal"],
               "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
               "loss-scale": ["loss-x2"],
               "initial-point": ["init-zeros"]}
    return local_vector(
        "local/closed-form/quadratic", "closed-form-quadratic.json",
        "Local only on f_i(v) = ½ Σ a_ij (v_j − c_ij)²: v_s = c + (1 − ηa)^s "
        "(v_0 − c), two rounds of two steps",
        "Two clients, d = 3, v_0 = (1, 0.5, -2), η = 0.25, so 1 − ηa = (7/8, "
        "1/4, -1/2) and (3/4, 1/2, -3/4): one entry of each client "
        "oscillates.  Both clients take two gradient steps in each of two "
        "rounds; v persists, so after round 1 step s the iterate is v_{2+s}.",
        flags, mutants, model, clients, init, eta,
        [([0, 1], None, steps_per_round), ([0, 1], None, steps_per_round)],
        TOL_QUADRATIC,
        ("closed_form",
         "gradient descent on a separable quadratic: v_s = c + (1 − ηa)^s "
         "(v_0 − c); shared/spec README.md rule 3 (quadratic model, closed "
         "forms for tests)",
         "golden/local/make_local.py (closed form in exact fractions, "
         "asserted equal to the iteration)"),
        check)


def drawn_order():
    """A round whose sampler order drawn = [2, 0] differs from the ascending
    clients [0, 2] (golden/CHANGES.md, 2026-11-25, "drawn order"): v_0 and
    v_2 each continue from round 0 on their own batches; every batch of
    that round indexes the smaller client too, so pairing batches with
    drawn trains on other batches instead of crashing."""
    vid = "local/worked/drawn-order"
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
    clients = [
        {"X": [[0.873, -1.264], [-0.391, 0.715], [1.482, 0.263], [-0.657, -0.938]],
         "y": [-0.684, 1.157, 0.392, -1.305]},
        {"X": [[-1.217, 0.486], [0.734, -0.829]], "y": [0.573, -1.128]},
        {"X": [[0.415, 1.693], [-0.962, -0.187], [1.146, -0.574]],
         "y": [1.846, -0.719, 0.938]},
    ]
    init = {"kind": "given", "w": [0.35, -0.15, 0.05]}
    eta = 0.215
    rounds = px.with_drawn([
        {"clients": [0, 1], "batches": [[[0, 3], [1, 2]], [[1], [0]]]},
        {"clients": [0, 2], "batches": [[[2, 0], [1]], [[1, 2], [0, 1], [2]]]},
    ], [[0, 1], [2, 0]])
    eta_x = pg.exact(eta)

    def run(bugs=px.NO_BUGS, rnds=rounds):
        pr = px.Problem(model, clients)
        w0 = px.initial(init, pr.P, bugs)
        v, trace = [list(w0) for _ in pr.clients], pg.Trace()
        for t, plan in enumerate(px.plans_of(rnds)):
            v = px.local_round(pr, v, w0, t, plan, eta_x, trace, bugs)
        return pr, v, trace

    result = run()
    pr, v, trace = result
    for plan in px.plans_of(rounds):
        for k, steps in plan:
            px.assert_contractive(pr, k, steps, eta_x)
    flags = ["stale-personal-state", "initial-point", "loss-scale"]
    mutants = {"stale-personal-state": ["reset-personal", "train-all"],
               "initial-point": ["init-zeros"], "loss-scale": ["loss-x2"]}

    def final(pr, v, trace):
        return (trace, None, v)

    exp = pg.checked_expected(vid, TOL_LINEAR, flags, mutants, result, run, final)
    # the drawn order read where clients belongs moves the result
    misread = pg.expected(*final(*run(rnds=px.misread_drawn(rounds))))
    assert pg.detects(exp, misread, TOL_LINEAR) is not None
    title = ("Local only, linear model with bias: a round drawn in the "
             "order 2, 0")
    spec = pg.given_spec(
        title,
        "Three clients (n = 4, 2, 3), v_i = (w_1, w_2, b) from w0 = (0.35, "
        "-0.15, 0.05), half_squared loss, eta = 0.215.  Round 0: S = {0, 1}, "
        "drawn [0, 1]; round 1: S = {0, 2}, drawn [2, 0]; batches[j] belongs "
        "to clients[j] (drawn is information only).  v_0 continues in round 1 "
        "from its round-0 value; v_1 keeps its round-0 value; v_2 starts at w0.",
        model, clients, init, {"name": "local", "hyperparameters": {"eta": eta}},
        rounds)
    prov = pg.provenance("independent", SOURCE_LOCAL + "; docs/formats.md "
                         "(drawn: information only)",
                         "golden/local/make_local.py (exact fractions)",
                         {f"v_{i}": vi for i, vi in enumerate(v)})
    return "worked-drawn-order.json", pg.vector(vid, title, prov, flags, spec,
                                                TOL_LINEAR, exp)


def pfllib_decay():
    """PFLlib's Local with -ld: clientavg.py's ExponentialLR steps at the
    end of each train(), and serverlocal.py trains only the selected
    clients, so client i's step is 0.15 * 0.6^(the rounds i trained
    before) (lr.count = trainings, which the pfllib preset sets).  S = {0},
    {0, 1}, {1, 2}: client 1 trains first in round 1 with 0.15, client 2
    in round 2 with 0.15, where the round count would give 0.09 and
    0.054."""
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
    clients = [
        {"X": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],
         "y": [-0.775, 1.409, 0.236]},
        {"X": [[-1.426, 0.357], [0.689, -0.942]], "y": [0.518, -1.263]},
        {"X": [[0.347, 1.788], [-0.915, -0.126], [1.204, -0.563]],
         "y": [2.071, -0.684, 0.955]},
    ]
    flags = ["lr-count", "lr-schedule", "stale-personal-state"]
    mutants = {"lr-count": ["lr-per-round"],
               "lr-schedule": ["lr-ignored", "lr-shifted"],
               "stale-personal-state": ["reset-personal"]}
    algorithm = {"name": "local", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.15, "lr.gamma": 0.6},
                 "switches": {"lr.schedule": "exponential",
                              "lr.count": "trainings"}}
    return local_vector(
        "local/worked/pfllib-decay", "worked-pfllib-decay.json",
        "Local only as PFLlib runs it with -ld: each client's step decays "
        "with the rounds it trained",
        "Three clients (n = 3, 2, 3), v_i = (w_1, w_2, b) from w0 = (0.3, "
        "-0.2, 0.1), half_squared loss; preset pfllib, lr.schedule = "
        "exponential, lr.gamma = 0.6, lr.count = trainings, eta = 0.15: "
        "client i's steps take 0.15 * 0.6^(rounds i trained before); B = 2, "
        "E = 1; S = {0}, {0, 1}, {1, 2}.",
        flags, mutants, model, clients,
        {"kind": "given", "w": [0.3, -0.2, 0.1]}, 0.15,
        [([0], 2, 1), ([0, 1], 2, 1), ([1, 2], 2, 1)], TOL_LINEAR,
        ("independent", SOURCE_LOCAL + "; TsingZ0/PFLlib d832e76f6a23 "
         "system/flcore/clients/clientbase.py (-ld: each client's "
         "ExponentialLR stepped after its train()), servers/serverlocal.py; "
         "shared/spec/notes-pfllib-as-run.md §2.2",
         "golden/local/make_local.py (exact fractions)"),
        algorithm=algorithm)


def main():
    pg.write_all(sys.argv, HERE, (two_rounds, closed_form_quadratic, drawn_order,
                                  pfllib_decay))


if __name__ == "__main__":
    main()
