#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedProx golden vectors (Li et al., MLSys 2020, arXiv 1812.06127v5,
Alg. 2), computed in exact rational arithmetic by
golden/pflref_exact_fedprox.py.

Four clients of a linear model with a bias and the squared loss (n = 4, 3,
5, 2), w⁰ = (0.2, -0.3, 0.1), given minibatches; each device starts every
round from w^t and steps w ← w − η (∇F_k(w; b) + μ (w − w^t)) over its
batch list.

  paper-repeat       fedprox.sampling = paper, K = 3: round 0 draws
                     [2, 0, 2] (device 2 weighs 2/3, trains once), round 1
                     [3, 1, 0], round 2 [1, 2, 1]
  uniform-weighted   the schedule's sample without replacement, weights
                     n_k / Σ_{S_t} n_j
  official-straggler preset official (= uniform_weighted, the authors'
                     code) with a straggler per round: 1 step where the
                     others take 3 (its partial solution is averaged)
  paper-straggler    paper sampling, a repeated draw and a 1-step straggler
  mu0                μ = 0: the local solve is FedAvg's; paper weights c_k/K
  momentum-client    paper sampling with the client optimizer SGD
                     (momentum 0.6, weight decay 0.04, opt.state = client:
                     each device's buffer kept across the rounds it trains)
  pfllib-decay       preset pfllib (uniform_weighted, lr.count = trainings)
                     with lr.schedule = exponential, lr.gamma = 0.8

    /usr/bin/python3 golden/fedprox/make_fedprox.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px            # noqa: E402
import pflref_exact_fedprox as xf    # noqa: E402
import pflref_golden as pg           # noqa: E402

PAPER = ("Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, MLSys 2020, arXiv "
         "1812.06127v5, Alg. 2 and eq. (1) (p_k = n_k/n)")
GENERATOR = ("golden/fedprox/make_fedprox.py (exact fractions, "
             "pflref_exact_fedprox.py)")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs: per device and round at most 3 proximal SGD "
             "steps, each a contraction (η(trace of the batch Hessian + μ) < "
             "2, asserted by the generator where the step is plain) adding "
             "fewer than 20 roundings of terms below 10 in magnitude, then "
             "one weighted sum, over at most three rounds, so the error "
             "stays far below 1e-12; every flagged bug moves some value by "
             "more than 1e3 times the tolerance.",
}
MODEL = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS = [
    {"X": [[0.527, -0.843], [-1.214, 0.366], [0.908, 1.072], [-0.315, -0.694]],
     "y": [0.961, -1.387, 0.452, -0.218]},
    {"X": [[1.136, -0.257], [-0.642, 0.918], [0.183, -1.165]],
     "y": [1.244, -0.571, 0.339]},
    {"X": [[-0.476, 0.731], [0.852, 0.219], [-1.093, -0.884], [0.314, 1.247],
           [0.695, -0.402]],
     "y": [-0.823, 0.617, -1.158, 0.942, 0.276]},
    {"X": [[0.736, 0.482], [-0.914, -0.127]],
     "y": [0.588, -0.734]},
]
INIT = {"kind": "given", "w": [0.2, -0.3, 0.1]}


def first_draws(draws):
    """The distinct drawn ids in their order of first draw (what a
    generated schedule records as drawn)."""
    out = []
    for k in draws:
        if k not in out:
            out.append(k)
    return out


def rounds_json(rounds):
    """[(clients, batches, draws or None[, drawn])] as the given schedule's
    rounds; drawn defaults to the first-draw order of the draws (absent
    without draws)."""
    out = []
    for clients, batches, draws, *rest in rounds:
        drawn = rest[0] if rest else (first_draws(draws) if draws else None)
        r = {"clients": clients}
        if drawn is not None and drawn != clients:
            r["drawn"] = drawn
        r["batches"] = batches
        if draws is not None:
            r["draws"] = draws
        out.append(r)
    return out


def make(vid, fname, title, description, algorithm, rounds, flags, mutants,
         source, check=None):
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         rounds_json(rounds))

    def run(bugs=frozenset()):
        trace, w, _, _ = xf.replay(spec, bugs)
        return trace, w

    result = run()
    hp, sw = xf.settings(algorithm)
    pr = px.Problem(MODEL, CLIENTS)
    plain = not any(k.startswith("opt.") for k in
                    list(algorithm.get("hyperparameters", {})) +
                    list(algorithm.get("switches", {})))
    for clients, batches, draws, *_ in rounds:
        assert sorted(clients) == clients
        if draws is not None:   # every participant drawn, every draw one
            assert sorted(set(draws)) == clients, (draws, clients)
        for k, steps in zip(clients, batches):
            if plain:
                px.assert_contractive(pr, k, steps, hp["eta"],
                                      hp["fedprox.mu"])
    if check is not None:
        check(spec, result)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w: (trace, w, None))
    prov = pg.provenance("independent", source, GENERATOR, {"w": result[1]})
    return fname, pg.vector(vid, title, prov, flags, spec, TOL, exp)


def final_with(spec, **switches):
    """The final w of the spec run with other switches."""
    alg = dict(spec["algorithm"], switches=dict(
        spec["algorithm"].get("switches", {}), **switches))
    return xf.replay(dict(spec, algorithm=alg))[1]


PAPER_ROUNDS = [
    ([0, 2], [[[0, 1], [2, 3]], [[0, 1], [2, 3]]], [2, 0, 2]),
    ([0, 1, 3], [[[2, 3], [0, 1]], [[0, 1], [2]], [[0, 1], [1]]], [3, 1, 0]),
    ([1, 2], [[[2], [0, 1]], [[4, 0], [1, 2]]], [1, 2, 1]),
]


def paper_repeat():
    algorithm = {"name": "fedprox",
                 "hyperparameters": {"eta": 0.1, "fedprox.mu": 0.35}}

    def check(spec, result):
        # the readings differ on this schedule
        assert final_with(spec, **{"fedprox.sampling": "uniform_weighted"}) \
            != result[1]

    flags = ["fedprox-draws", "aggregation-weights", "prox-sign",
             "fedprox-prox-factor", "prox-reference", "stale-global",
             "local-step-count", "batch-mean", "schedule-drawn-order"]
    mutants = {"fedprox-draws": ["draws-distinct", "draws-samples",
                                 "draws-chain"],
               "aggregation-weights": ["draws-samples"],
               "prox-sign": ["prox-plus"],
               "fedprox-prox-factor": ["prox-half"],
               "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["step-extra", "step-fewer"],
               "batch-mean": ["batch-sum"],
               "schedule-drawn-order": ["misread-drawn"]}
    return make(
        "fedprox/worked/paper-repeat", "worked-paper-repeat.json",
        "FedProx as Alg. 2 writes it: K = 3 draws with replacement, a device "
        "drawn twice weighs 2/3",
        "Four clients (n = 4, 3, 5, 2), ŷ = x·w + b, squared loss, w⁰ = "
        "(0.2, -0.3, 0.1), η = 0.1, μ = 0.35, fedprox.sampling = paper.  "
        "Round 0 draws [2, 0, 2]: devices 0 and 2 train once each from w^0, "
        "w^1 = (1/3) w_0 + (2/3) w_2; round 1 draws [3, 1, 0] (weights 1/3, "
        "not n_k-weighted); round 2 draws [1, 2, 1].  Two given minibatches "
        "per device and round.",
        algorithm, PAPER_ROUNDS,
        flags, mutants, PAPER, check)


def uniform_weighted():
    algorithm = {"name": "fedprox",
                 "hyperparameters": {"eta": 0.12, "fedprox.mu": 0.45},
                 "switches": {"fedprox.sampling": "uniform_weighted"}}
    rounds = [
        ([0, 2], [[[1, 2], [3, 0]], [[2, 3], [4]]], None, [2, 0]),
        ([1, 3], [[[2, 0], [1]], [[1], [0, 1]]], None),
        ([0, 1, 2], [[[0, 3], [1, 2]], [[1, 2], [0]], [[0, 4], [3, 1]]], None,
         [1, 2, 0]),
    ]
    flags = ["aggregation-weights", "prox-sign", "fedprox-prox-factor",
             "prox-reference", "stale-global", "local-step-count",
             "schedule-drawn-order"]
    mutants = {"aggregation-weights": ["uniform-weights"],
               "prox-sign": ["prox-plus"],
               "fedprox-prox-factor": ["prox-half"],
               "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["step-extra", "step-fewer"],
               "schedule-drawn-order": ["misread-drawn"]}
    return make(
        "fedprox/worked/uniform-weighted", "worked-uniform-weighted.json",
        "FedProx as it is widely run: the sample without replacement, "
        "weights n_k / Σ_{S_t} n_j",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.12, μ = "
        "0.45, fedprox.sampling = uniform_weighted.  S_0 = {0, 2} (drawn "
        "[2, 0]), S_1 = {1, 3}, S_2 = {0, 1, 2} (drawn [1, 2, 0]; batches[j] "
        "stays clients[j]'s), two given minibatches per device and round; "
        "w^{t+1} = Σ_{S_t} (n_k / Σ_{S_t} n_j) w_k.",
        algorithm, rounds, flags, mutants,
        PAPER + "; litian96/FedProx d2a4501f319f flearn/trainers/fedbase.py "
        ":112 (select_clients) and :121-123 (aggregate); TsingZ0/PFLlib "
        "d832e76f6a23 system/flcore/servers/serverbase.py:99, :136")


def official_straggler():
    algorithm = {"name": "fedprox", "preset": "official",
                 "hyperparameters": {"eta": 0.09, "fedprox.mu": 0.55}}
    rounds = [
        ([0, 1, 2], [[[0, 1], [2, 3], [1, 2]], [[0, 2]],
                     [[0, 1], [2, 3], [4, 1]]], [1, 2, 0]),
        ([1, 3], [[[1, 2], [0], [2, 0]], [[0, 1]]], [3, 1, 3]),
    ]

    def check(spec, result):
        # the rounds' draws are not read under uniform_weighted (the run
        # equals the one without them), and the paper's reading of them
        # gives other numbers
        bare = dict(spec, schedule=dict(spec["schedule"], rounds=[
            {k: v for k, v in r.items() if k != "draws"}
            for r in spec["schedule"]["rounds"]]))
        assert xf.replay(bare)[1] == result[1]
        assert final_with(spec, **{"fedprox.sampling": "paper"}) != result[1]

    flags = ["fedprox-straggler", "aggregation-weights", "prox-sign",
             "stale-global"]
    mutants = {"fedprox-straggler": ["straggler-dropped", "straggler-padded"],
               "aggregation-weights": ["uniform-weights"],
               "prox-sign": ["prox-plus"],
               "stale-global": ["restart-w0"]}
    return make(
        "fedprox/worked/official-straggler", "worked-official-straggler.json",
        "FedProx as the authors' code runs it (preset official), a straggler "
        "with 1 step while the others take 3",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.09, μ = "
        "0.55, preset official (fedprox.sampling = uniform_weighted).  Round "
        "0: S_0 = {0, 1, 2}, device 1 a straggler with one minibatch, the "
        "others three; round 1: S_1 = {1, 3}, device 3 the straggler.  The "
        "straggler's partial solution is averaged like the others "
        "(fedprox.py:68-71 keeps it).  The rounds carry draws ([1, 2, 0], "
        "[3, 1, 3]) that uniform_weighted does not read.",
        algorithm, rounds, flags, mutants,
        PAPER + " (γ-inexact solutions, §3.2 systems heterogeneity); "
        "litian96/FedProx d2a4501f319f flearn/trainers/fedprox.py:68-71, "
        "fedbase.py:112, :121-123", check)


def paper_straggler():
    algorithm = {"name": "fedprox",
                 "hyperparameters": {"eta": 0.11, "fedprox.mu": 0.3}}
    rounds = [
        ([0, 2], [[[1, 3]], [[0, 1], [2, 3], [4, 0]]], [0, 2, 2]),
        ([1, 3], [[[0, 1], [2], [1, 2]], [[1]]], [3, 1, 3]),
    ]
    flags = ["fedprox-straggler", "fedprox-draws", "prox-sign"]
    mutants = {"fedprox-straggler": ["straggler-dropped", "straggler-padded"],
               "fedprox-draws": ["draws-distinct", "draws-samples",
                                 "draws-chain"],
               "prox-sign": ["prox-plus"]}
    return make(
        "fedprox/worked/paper-straggler", "worked-paper-straggler.json",
        "FedProx, paper sampling, with a straggler (1 step) among devices "
        "taking 3, and a repeated draw",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.11, μ = "
        "0.3, fedprox.sampling = paper, K = 3.  Round 0 draws [0, 2, 2], "
        "device 0 a straggler with one minibatch, device 2 with three; round "
        "1 draws [3, 1, 3], device 3 the straggler (one step).",
        algorithm, rounds, flags, mutants,
        PAPER + " (γ-inexact solutions, §3.2 systems heterogeneity)")


def mu0():
    algorithm = {"name": "fedprox",
                 "hyperparameters": {"eta": 0.13, "fedprox.mu": 0.0}}
    rounds = [
        ([1, 2], [[[0, 1], [2]], [[1, 3], [0, 2]]], [1, 1, 2]),
        ([0, 2, 3], [[[2, 3], [1, 0]], [[4, 2], [3]], [[0], [1]]], [0, 3, 2]),
    ]
    flags = ["fedprox-draws", "stale-global", "local-step-count"]
    mutants = {"fedprox-draws": ["draws-distinct", "draws-samples"],
               "stale-global": ["restart-w0"],
               "local-step-count": ["step-extra", "step-fewer"]}
    return make(
        "fedprox/worked/mu0", "worked-mu0.json",
        "FedProx with μ = 0: the local solve is FedAvg's, the draws' weights "
        "stay c_k/K",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.13, μ = 0 "
        "(h_k = F_k), fedprox.sampling = paper, K = 3.  Round 0 draws [1, 1, "
        "2] (device 1 weighs 2/3), round 1 draws [0, 3, 2].",
        algorithm, rounds, flags, mutants, PAPER)


def momentum_client():
    algorithm = {"name": "fedprox",
                 "hyperparameters": {"eta": 0.07, "fedprox.mu": 0.25,
                                     "opt.momentum": 0.6,
                                     "opt.weight_decay": 0.04},
                 "switches": {"opt.state": "client"}}
    rounds = [
        ([0, 2], [[[0, 1], [2, 3]], [[1, 2], [3, 4]]], [2, 0, 0]),
        ([1, 2], [[[0, 1], [2]], [[0, 3], [2, 4]]], [1, 2, 2]),
        ([0, 2, 3], [[[1, 3], [0, 2]], [[4, 1], [0, 3]], [[1], [0]]],
         [3, 0, 2]),
    ]
    flags = ["weight-decay-form", "optimizer-state-lifetime", "prox-sign",
             "fedprox-draws"]
    mutants = {"weight-decay-form": ["decay-form-swap"],
               "optimizer-state-lifetime": ["state-reset", "state-server"],
               "prox-sign": ["prox-plus"],
               "fedprox-draws": ["draws-distinct", "draws-samples"]}
    return make(
        "fedprox/worked/momentum-client", "worked-momentum-client.json",
        "FedProx with the client optimizer: SGD with momentum 0.6 and "
        "weight decay 0.04 on d = ∇F_k + μ(w − w^t), buffers kept per client",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.07, μ = "
        "0.25, fedprox.sampling = paper, K = 3; opt.momentum = 0.6, "
        "opt.weight_decay = 0.04 (coupled: d ← d + λw), opt.state = client "
        "(device 2 trains in every round with its own buffer, device 0 in "
        "rounds 0 and 2).  Draws [2, 0, 0], [1, 2, 2], [3, 0, 2].",
        algorithm, rounds, flags, mutants,
        PAPER + "; torch.optim.SGD's documented algorithm (docs/"
        "optimizers.md); TsingZ0/PFLlib clientbase.py (one optimizer per "
        "client)")


def pfllib_decay():
    algorithm = {"name": "fedprox", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.1, "fedprox.mu": 0.4,
                                     "lr.gamma": 0.8},
                 "switches": {"lr.schedule": "exponential"}}
    rounds = [
        ([0, 2], [[[0, 1], [2, 3]], [[0, 4], [1, 2]]], [0, 2, 2]),
        ([1, 2], [[[1, 2], [0]], [[3, 0], [2]]], [2, 1, 1]),
        ([0, 1, 3], [[[3, 2], [1]], [[0], [1, 2]], [[0, 1], [1]]], [3, 0, 1]),
    ]
    flags = ["lr-schedule", "lr-count", "aggregation-weights", "prox-sign"]
    mutants = {"lr-schedule": ["lr-ignored", "lr-shifted"],
               "lr-count": ["lr-per-round"],
               "aggregation-weights": ["uniform-weights"],
               "prox-sign": ["prox-plus"]}
    return make(
        "fedprox/worked/pfllib-decay", "worked-pfllib-decay.json",
        "FedProx as PFLlib runs it with -ld: weights n_k / Σ n_j, each "
        "client's step decays with its own trainings",
        "The clients and w⁰ of fedprox/worked/paper-repeat; η = 0.1, μ = "
        "0.4, preset pfllib (fedprox.sampling = uniform_weighted, lr.count = "
        "trainings), lr.schedule = exponential, lr.gamma = 0.8: device k "
        "steps with 0.1 · 0.8^(the rounds k trained before).  S_0 = {0, 2}, "
        "S_1 = {1, 2}, S_2 = {0, 1, 3}; the rounds' draws (the paper's "
        "reading) are not read.",
        algorithm, rounds, flags, mutants,
        PAPER + "; TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
        "clientprox.py:21, :55 (ExponentialLR stepped after each train()), "
        "fedoptimizer.py:74, serverbase.py:99, :136")


def main():
    pg.write_all(sys.argv, HERE,
                 (paper_repeat, uniform_weighted, official_straggler,
                  paper_straggler, mu0, momentum_client, pfllib_decay))


if __name__ == "__main__":
    main()
