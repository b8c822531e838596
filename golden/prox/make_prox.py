#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors of "prox", pFedMe's inner loop on its own, in exact
rational arithmetic.

pFedMe (Dinh et al., NeurIPS 2020, eq. (3)/(7) and Alg. 1 l. 7; shared/spec
notes §2(c)): the personalised model is the proximal point
    θ̂(w) = argmin_θ f(θ; D) + (λ/2)‖θ − w‖²  (+ (μ/2)‖θ‖², pfedme.mu),
approximated on one batch D by K gradient steps
    θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ).
In "prox" the reference w is the initial point and never changes; in each
round every participant starts from θ = w (pfedme.theta_start = reset) or
from its θ of the previous round (warm), runs K steps on each of its
batches, and after each batch the exact θ̂ on that batch is a "note"
record "theta_hat".  The personal model v_i is θ.

Vectors (the file is the id without "prox/", '/' → '-'):
  prox/worked/seed003-inner-loop   seed 003, worked example 1: F(w) = ½(w − 5)²,
      w = 2, λ = 3, η_p = 0.1, K = 2: θ = 2.3, 2.48; θ̂ = 11/4
  prox/worked/linear-warm-mu       linear model with bias, two clients, two
      rounds of minibatches, warm start across rounds, μ = 1/4
  prox/worked/linear-reset-mu      the same data with the paper's reset start,
      λ = 1.85, η_p = 0.115, K = 3, μ = 0.15
  prox/worked/linear-lambda0-mu    λ = 0, μ = 0.65: θ̂ still recorded (λ + μ > 0)
  prox/worked/linear-lambda0-mu0   λ = μ = 0: no θ̂ (a batch with a singular
      Hessian, where it would not be unique)
  (both with a round drawn by the sampler as [1, 0])

Inputs are the exact values of their doubles (0.1 is the double nearest
1/10); expected values are float(Fraction).  For each flag the generator
runs the bugs of that class (pflref_exact.py) and asserts that each moves
an expected number far outside the tolerance.

    /usr/bin/python3 golden/prox/make_prox.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px    # noqa: E402
import pflref_golden as pg   # noqa: E402

SEED003 = "shared/seeds/003_9f6882b1ef8ed699.txt"
NOTES = pg.NOTES
TOL_SEED = {
    "atol": 1e-14,
    "rtol": 1e-14,
    "basis": "fp64 reference against exact rationals of the binary inputs "
             "(η_p = 0.1 is not a binary fraction, so the reference rounds): "
             "two inner steps of at most 6 correctly rounded operations on "
             "values below 5 in magnitude, each a contraction (η_p(a + λ) = "
             "0.4 < 2, asserted), so each θ is within 10 ulp(4) < 1e-14; θ̂ "
             "is one conjugate-gradient iteration in one dimension (about 6 "
             "roundings, and θ̂ = 11/4 exactly); every flagged bug moves some "
             "value by more than 1e3 times the tolerance.",
}
TOL_LINEAR = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 9 inner steps per round on values below "
             "10 in magnitude, each a contraction (η_p(trace of the batch "
             "Hessian + λ + μ) < 2, asserted by the generator) adding fewer "
             "than 20 roundings, so θ stays within 1e-13; θ̂ comes from at "
             "most 6 conjugate-gradient iterations on (H + (λ + μ)I), whose "
             "condition number is below 5 (eigenvalues in [λ + μ, λ + μ + "
             "trace H]), so its error is a few ulp times 5, far below 1e-12; "
             "every flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}


def prox_vector(vid, fname, title, description, flags, mutants, model, clients,
                init, algorithm, rounds, tol, provenance, check=None,
                drawn=None):
    """rounds: [[(client, batches), ...] per round] (participants ascending);
    drawn: per round the sampler's order of its clients (None: no field)."""
    hp, sw = px.settings(algorithm)

    def run(bugs=px.NO_BUGS):
        pr = px.Problem(model, clients)
        w = px.initial(init, pr.P, bugs)
        v, trace = [list(w) for _ in pr.clients], pg.Trace()
        for t, plan in enumerate(rounds):
            v = px.prox_round(pr, v, w, t, plan, hp, sw, trace, bugs)
        return pr, w, v, trace

    result = run()
    pr, w, v, trace = result
    for plan in rounds:
        for k, steps in plan:
            px.assert_prox_contractive(pr, k, steps, hp["eta_p"], hp["lambda"],
                                       hp["pfedme.mu"])
    if check is not None:
        check(pr, w, v, trace)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda pr, w, v, trace: (trace, w, v))
    sched = px.schedule_json(rounds)
    if drawn is not None:
        sched = px.with_drawn(sched, drawn)
    spec = pg.given_spec(title, description, model, clients, init, algorithm,
                         sched)
    if drawn is not None:       # drawn read where clients belongs is caught
        _, v2, trace2 = px.replay_personal(px.spec_misread_drawn(spec))
        assert pg.detects(exp, pg.expected(trace2, w, v2), tol) is not None
    notes = [r for r in trace.records if r["name"] == "theta_hat"]
    named = {f"v_{i}": vi for i, vi in enumerate(v)}
    named.update({f"theta_hat_r{r['round']}_c{r['client']}_s{r['step']}": r["value"]
                  for r in notes})
    prov = pg.provenance(*provenance, named)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def seed003():
    model = {"kind": "quadratic", "d": 1}
    clients = [{"a": [1.0], "c": [5.0]}]
    init = {"kind": "given", "w": [2.0]}
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 3.0, "eta_p": 0.1, "K": 2}}

    def check(pr, w, v, trace):
        # The seed's own arithmetic, with η_p = 1/10 exactly:
        # ∇h(θ) = (θ − 5) + 3(θ − 2) = 4θ − 11; 2 → 2.3 → 2.48; θ̂ = 11/4.
        th, seq = F(2), []
        for _ in range(2):
            th = th - F(1, 10) * (4 * th - 11)
            seq.append(th)
        assert seq == [F(23, 10), F(62, 25)], seq
        steps = [r["value"][0] for r in trace.records if r["event"] == "step"]
        # With the double η_p the exact values differ from 2.3, 2.48 by
        # O(1e-17): the vector's numbers are the seed's, to the last bit
        # or next to it.
        for x, q in zip(steps, seq):
            assert abs(x - q) < F(1, 10 ** 15), (x, q)
        hat = [r["value"] for r in trace.records if r["name"] == "theta_hat"]
        assert hat == [[F(11, 4)]], hat         # exact: does not involve η_p
        assert v[0] == [steps[-1]]

    flags = ["prox-sign", "prox-reference", "local-step-count", "loss-scale",
             "initial-point"]
    mutants = {"prox-sign": ["prox-plus"],
               "prox-reference": ["prox-ref-moving"],
               "local-step-count": ["inner-plus-one", "inner-minus-one"],
               "loss-scale": ["loss-x2"],
               "initial-point": ["init-zeros"]}
    return prox_vector(
        "prox/worked/seed003-inner-loop", "worked-seed003-inner-loop.json",
        "pFedMe inner loop, seed 003 worked example 1: F(w) = ½(w − 5)², "
        "reference 2, λ = 3, η_p = 0.1, two steps: 2.3, 2.48; θ̂ = 11/4",
        "One client with f(θ) = ½(θ − 5)² (quadratic, a = 1, c = 5), the "
        "reference w = 2 (the initial point), λ = 3, η_p = 0.1, K = 2, one "
        "round, one batch: θ ← θ − η_p((θ − 5) + λ(θ − w)) = θ − 0.1(4θ − 11) "
        "from θ = w gives 2.3, 2.48; the exact proximal point is 11/4.",
        flags, mutants, model, clients, init, algorithm, [[(0, [[0]])]],
        TOL_SEED,
        ("independent",
         f"{SEED003}, worked example 1 (pFedMe inner-loop update); {NOTES} "
         "§2(c) (K steps on one batch) and §2 Objective (θ̂ = prox_{f/λ}(w)); "
         "Dinh et al., NeurIPS 2020, eq. (3) and Alg. 1 l. 7",
         "golden/prox/make_prox.py (exact fractions)"),
        check)


def linear_problem():
    """The linear vectors' model and two clients (3 and 4 samples, a bias),
    fresh for each vector."""
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": True}
    clients = [
        {"X": [[0.734, -1.219], [-0.486, 0.352], [1.107, 0.861]],
         "y": [1.183, -0.647, 0.295]},
        {"X": [[-0.918, 0.473], [0.265, -1.336], [1.342, 0.118], [-0.407, -0.759]],
         "y": [-0.534, 1.271, 0.886, -1.092]},
    ]
    return model, clients


def linear_warm_mu():
    model, clients = linear_problem()
    init = {"kind": "given", "w": [0.5, -0.25, 0.125]}
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 1.5, "eta_p": 0.125, "K": 3,
                                     "pfedme.mu": 0.25},
                 "switches": {"pfedme.theta_start": "warm"}}
    rounds = [
        [(0, [[0, 1], [2]]), (1, [[0, 1], [2, 3]])],
        [(0, [[2, 0]]), (1, [[1, 3], [0, 2]])],
    ]

    def check(pr, w, v, trace):
        # θ̂ satisfies its optimality condition exactly:
        # ∇f(θ̂; D) + λ(θ̂ − w) + μθ̂ = 0.
        lam, mu = F(1.5), F(0.25)
        for r in trace.records:
            if r["name"] != "theta_hat":
                continue
            plan = dict(rounds[r["round"]])[r["client"]]
            batch = plan[r["step"] // 3 - 1]
            g = pr.grad(r["client"], r["value"], batch)
            assert all(gp + lam * (th - wp) + mu * th == 0
                       for gp, th, wp in zip(g, r["value"], w))
        # warm: round 1 starts where round 0 ended.
        begins = [r for r in trace.records if r["event"] == "client_begin"]
        ends = [r for r in trace.records if r["event"] == "client_end"]
        assert begins[2]["value"] == ends[0]["value"] != w
        assert begins[3]["value"] == ends[1]["value"] != w

    flags = ["theta-start", "prox-sign", "prox-reference", "batch-mean",
             "local-step-count", "initial-point"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["prox-ref-moving"],
               "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one"],
               "initial-point": ["init-zeros"]}
    return prox_vector(
        "prox/worked/linear-warm-mu", "worked-linear-warm-mu.json",
        "pFedMe inner loop on a linear model with bias: minibatches, θ "
        "carried over between rounds (warm), μ = 1/4, exact θ̂ per batch",
        "Two clients (n = 3, 4), ŷ = x·w + b, half_squared loss, reference "
        "w = (0.5, -0.25, 0.125) = the initial point, λ = 1.5, η_p = 0.125, "
        "K = 3, pfedme.mu = 0.25, pfedme.theta_start = warm.  Round 0: client "
        "0 batches {0,1} {2}, client 1 {0,1} {2,3}; round 1: client 0 {2,0}, "
        "client 1 {1,3} {0,2}; K steps θ ← θ − η_p(∇f(θ; D) + λ(θ − w) + μθ) "
        "per batch, θ carried over from round 0 into round 1.  After each "
        "batch, θ̂ = argmin f(θ; D) + (λ/2)‖θ − w‖² + (μ/2)‖θ‖².",
        flags, mutants, model, clients, init, algorithm, rounds, TOL_LINEAR,
        ("independent",
         f"{NOTES} §2(c) (inner solver, warm start, μθ of the official code) "
         "and §2 Objective; Dinh et al., NeurIPS 2020, eq. (3)/(7) and Alg. 1 "
         "l. 7",
         "golden/prox/make_prox.py (exact fractions; θ̂ by exact linear "
         "solve)"),
        check)


def linear_reset():
    """The paper's reset start with every constant distinct from 1 and from
    each other (golden/coincidences.py): λ = 1.85, η_p = 0.115, K = 3,
    μ = 0.15, two rounds, minibatches that differ from step to step."""
    model, clients = linear_problem()
    init = {"kind": "given", "w": [0.5, -0.25, 0.125]}
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 1.85, "eta_p": 0.115, "K": 3,
                                     "pfedme.mu": 0.15}}
    rounds = [
        [(0, [[0, 1], [2]]), (1, [[0, 1], [2, 3]])],
        [(0, [[2, 0]]), (1, [[1, 3], [0, 2]])],
    ]

    def check(pr, w, v, trace):
        lam, mu = F(1.85), F(0.15)
        for r in trace.records:
            if r["name"] != "theta_hat":
                continue
            plan = dict(rounds[r["round"]])[r["client"]]
            batch = plan[r["step"] // 3 - 1]
            g = pr.grad(r["client"], r["value"], batch)
            assert all(gp + lam * (th - wp) + mu * th == 0
                       for gp, th, wp in zip(g, r["value"], w))
        # reset: every round starts from the reference w.
        begins = [r for r in trace.records if r["event"] == "client_begin"]
        assert all(b["value"] == w for b in begins)

    flags = ["theta-start", "prox-sign", "prox-reference", "batch-mean",
             "local-step-count", "initial-point"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["prox-ref-moving"],
               "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one"],
               "initial-point": ["init-zeros"]}
    return prox_vector(
        "prox/worked/linear-reset-mu", "worked-linear-reset-mu.json",
        "pFedMe inner loop on a linear model with bias: minibatches, θ reset "
        "to the reference (paper), λ = 1.85, η_p = 0.115, K = 3, μ = 0.15",
        "The clients, model, reference and batches of "
        "prox/worked/linear-warm-mu; λ = 1.85, η_p = 0.115, K = 3, "
        "pfedme.mu = 0.15, pfedme.theta_start = reset (the paper's).  K steps "
        "θ ← θ − η_p(∇f(θ; D) + λ(θ − w) + μθ) per batch; after each batch, "
        "θ̂ = argmin f(θ; D) + (λ/2)‖θ − w‖² + (μ/2)‖θ‖².",
        flags, mutants, model, clients, init, algorithm, rounds, TOL_LINEAR,
        ("independent",
         f"{NOTES} §2(c) (inner solver, reset start, μθ of the official code) "
         "and §2 Objective; Dinh et al., NeurIPS 2020, eq. (3)/(7) and Alg. 1 "
         "l. 7",
         "golden/prox/make_prox.py (exact fractions; θ̂ by exact linear "
         "solve)"),
        check)


TOL_LAMBDA0 = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: at most 6 inner steps per round on values below "
             "10 in magnitude, each a contraction (η_p(trace of the batch "
             "Hessian + λ + μ) < 2, asserted by the generator) adding fewer "
             "than 20 roundings, so θ stays within 1e-13; with λ = 0 and μ = "
             "0.65, θ̂ comes from at most 6 conjugate-gradient iterations on "
             "(H + μI), whose condition number is below 6 (eigenvalues in [μ, "
             "μ + trace H], trace H < 3, asserted), so its error is a few ulp "
             "times 6, far below 1e-12; with λ = μ = 0 there is no θ̂; every "
             "flagged bug moves some value by more than 1e3 times the "
             "tolerance.",
}
PROX_SOURCE = (f"{NOTES} §2(c) (inner solver, μθ of the official code) and §2 "
               "Objective; Dinh et al., NeurIPS 2020, eq. (3)/(7) and Alg. 1 "
               "l. 7; docs/formats.md (drawn: information only); "
               "docs/algorithms/prox.md (θ̂ only when λ + μ > 0)")


def linear_lambda0_mu():
    """λ = 0 with μ > 0 (golden/CHANGES.md, 2026-11-25, "drawn order"): the
    test λ + μ > 0 that decides whether θ̂ is recorded is met by μ alone,
    so λ − μ, λ + λ (and λ alone) would drop θ̂.  θ̂ = argmin f(θ; D) +
    (μ/2)‖θ‖², with (H + μI) nonsingular.  Round 1 is drawn as [1, 0]."""
    model, clients = linear_problem()
    init = {"kind": "given", "w": [0.45, -0.3, 0.15]}
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 0.0, "eta_p": 0.135, "K": 3,
                                     "pfedme.mu": 0.65},
                 "switches": {"pfedme.theta_start": "warm"}}
    rounds = [
        [(0, [[0, 1], [2]]), (1, [[0, 1], [2, 3]])],
        [(0, [[2, 0]]), (1, [[1, 2], [0, 2]])],
    ]

    def check(pr, w, v, trace):
        mu = F(0.65)
        for plan in rounds:                        # cond(H + μI) < 6
            for k, steps in plan:
                assert all(px.curvature_bound(pr, k, b) < 3 for b in steps)
        hats = [r for r in trace.records if r["name"] == "theta_hat"]
        assert len(hats) == 7, len(hats)           # one per batch
        for r in hats:                             # ∇f(θ̂; D) + μθ̂ = 0
            batch = dict(rounds[r["round"]])[r["client"]][r["step"] // 3 - 1]
            g = pr.grad(r["client"], r["value"], batch)
            assert all(gp + mu * th == 0 for gp, th in zip(g, r["value"]))

    flags = ["theta-start", "batch-mean", "local-step-count", "initial-point"]
    mutants = {"theta-start": ["theta-start-flip"], "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one"],
               "initial-point": ["init-zeros"]}
    return prox_vector(
        "prox/worked/linear-lambda0-mu", "worked-linear-lambda0-mu.json",
        "pFedMe inner loop with λ = 0 and μ = 0.65: θ̂ still recorded (λ + μ "
        "> 0); warm start; a round drawn as [1, 0]",
        "Two clients (n = 3, 4), ŷ = x·w + b, half_squared loss, initial "
        "point (0.45, -0.3, 0.15), λ = 0, η_p = 0.135, K = 3, pfedme.mu = "
        "0.65, pfedme.theta_start = warm.  K steps θ ← θ − η_p(∇f(θ; D) + μθ) "
        "per batch; after each batch θ̂ = argmin f(θ; D) + (μ/2)‖θ‖² (recorded "
        "because λ + μ > 0).  Round 1 is drawn by the sampler as [1, 0]: "
        "batches[j] still belongs to clients[j].",
        flags, mutants, model, clients, init, algorithm, rounds, TOL_LAMBDA0,
        ("independent", PROX_SOURCE,
         "golden/prox/make_prox.py (exact fractions; θ̂ by exact linear solve)"),
        check, drawn=[[0, 1], [1, 0]])


def linear_lambda0_mu0():
    """λ = μ = 0 (golden/CHANGES.md, 2026-11-25, "drawn order"): plain
    gradient steps, and no θ̂: argmin f(θ; D) need not exist or be unique,
    and here it does not, since client 0's first batch is one sample x with
    x_2 = 2 x_1 (a rank-one Hessian x xᵀ, exactly singular in binary).
    A candidate that tests λ + η_p or η_p + μ instead of λ + μ tries to
    solve that singular system.  Round 1 is drawn as [1, 0]."""
    model = {"kind": "linear", "d": 2, "loss": "half_squared", "bias": False}
    clients = [
        {"X": [[0.75, 1.5], [-0.486, 0.352], [1.107, 0.861]],
         "y": [1.183, -0.647, 0.295]},
        {"X": [[-0.918, 0.473], [0.265, -1.336], [1.342, 0.118], [-0.407, -0.759]],
         "y": [-0.534, 1.271, 0.886, -1.092]},
    ]
    init = {"kind": "given", "w": [0.45, -0.3]}
    algorithm = {"name": "prox",
                 "hyperparameters": {"lambda": 0.0, "eta_p": 0.235, "K": 2},
                 "switches": {"pfedme.theta_start": "warm"}}
    rounds = [
        [(0, [[0], [1, 2]]), (1, [[0, 1], [2, 3]])],
        [(0, [[2, 0], [1]]), (1, [[1, 2]])],
    ]

    def check(pr, w, v, trace):
        assert not [r for r in trace.records if r["name"] == "theta_hat"]
        x = [pg.exact(a) for a in clients[0]["X"][0]]
        assert x[1] == 2 * x[0]                    # H = x xᵀ is singular

    flags = ["theta-start", "batch-mean", "local-step-count", "initial-point"]
    mutants = {"theta-start": ["theta-start-flip"], "batch-mean": ["batch-sum"],
               "local-step-count": ["inner-plus-one", "inner-minus-one"],
               "initial-point": ["init-zeros"]}
    return prox_vector(
        "prox/worked/linear-lambda0-mu0", "worked-linear-lambda0-mu0.json",
        "pFedMe inner loop with λ = μ = 0: plain gradient steps and no θ̂ "
        "(a batch with a singular Hessian); a round drawn as [1, 0]",
        "Two clients (n = 3, 4), ŷ = x·w, half_squared loss, initial point "
        "(0.45, -0.3), λ = 0, η_p = 0.235, K = 2, pfedme.mu = 0 (default), "
        "pfedme.theta_start = warm.  K steps θ ← θ − η_p ∇f(θ; D) per batch; "
        "no θ̂ notes, since λ + μ = 0 (client 0's first batch is the single "
        "sample (0.75, 1.5): its Hessian x xᵀ is singular, so argmin f(θ; D) "
        "is not unique).  Round 1 is drawn by the sampler as [1, 0].",
        flags, mutants, model, clients, init, algorithm, rounds, TOL_LAMBDA0,
        ("independent", PROX_SOURCE, "golden/prox/make_prox.py (exact fractions)"),
        check, drawn=[[0, 1], [1, 0]])


def main():
    pg.write_all(sys.argv, HERE, (seed003, linear_warm_mu, linear_reset,
                                  linear_lambda0_mu, linear_lambda0_mu0))


if __name__ == "__main__":
    main()
