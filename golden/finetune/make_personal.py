#!/usr/bin/python3
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


def main():
    pg.write_all(sys.argv, HERE, (personal_bias_prox,))


if __name__ == "__main__":
    main()
