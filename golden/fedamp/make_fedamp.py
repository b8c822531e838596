#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedAMP golden vectors (Huang et al., AAAI 2021, arXiv 2007.03797v5,
Alg. 1, A(x) = 1 - e^{-x/σ}), computed by golden/pflref_exact_fedamp.py:
exact fractions, e^{-x/σ} in 60-digit decimal.

Four clients of a linear model with a bias and the squared loss (n = 4, 3,
5, 2), w⁰ = (0.2, -0.3, 0.1), given minibatches, three rounds in which
clients skip rounds (so stale w_j enter the messages).

  paper-partial   the paper's reading (peers all, start message, squared)
  negative-self   every client every round, α_k large against σ: ξ_{i,i}
                  < 0 in rounds 1 and 2 (allowed: u_i stays the affine
                  combination of l. 3)
  peers-previous  fedamp.peers = previous alone
  start-own       fedamp.start = own alone
  detached        fedamp.prox = detached alone (plain SGD from u_i)
  pfllib          preset pfllib (previous, own, detached: u_i computed
                  and sent, the steps plain SGD from w_i^{k−1})
  pfllib-ld       preset pfllib with PFLlib's -ld (lr.schedule =
                  exponential, γ = 0.8, lr.count = trainings from the
                  preset): each client's η γ^(its own trainings before)
  paper-ld        the paper's reading with the decay counted by rounds
                  (lr.schedule = exponential, γ = 0.7): η γ^t also scales
                  the proximal term's step

    /usr/bin/python3 golden/fedamp/make_fedamp.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact as px            # noqa: E402
import pflref_exact_fedamp as xa     # noqa: E402
import pflref_golden as pg           # noqa: E402

PAPER = ("Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, AAAI 2021, arXiv "
         "2007.03797v5, Alg. 1 (u_i^k = Σ_j ξ_{i,j} w_j^{k−1}, ξ_{i,j} = "
         "α_k A'(‖w_i − w_j‖²), ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j}; w_i^k = "
         "argmin F_i(w) + (λ/(2α_k))‖w − u_i^k‖²), A(x) = 1 − e^{−x/σ}")
PFLLIB = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/servers/serveramp.py:"
          "72-109 (send_models over self.uploaded_models; e(x) = "
          "exp(−x/σ)/σ), clients/clientamp.py:22, :40-42, :57-59")
GENERATOR = ("golden/fedamp/make_fedamp.py (exact fractions, e^{−x/σ} in "
             "60-digit decimal; pflref_exact_fedamp.py)")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit values of the "
             "binary inputs (exact fractions but for e^{−x/σ}, correctly "
             "rounded at 60 digits: 1e-59 relative): each ξ_{i,j} is "
             "α_k e^{−d/σ}/σ with d = ‖w_i − w_j‖² over 3 entries and d/σ < "
             "4, so libm's exp (< 1 ulp) and the sum's roundings give it a "
             "relative error below 1e-14; u_i sums 4 terms of magnitude "
             "below 3; then at most 3 contractive proximal SGD steps per "
             "round (η(trace of the batch Hessian + λ/α_k) < 2, asserted by "
             "the generator), over 3 rounds, so every error stays far below "
             "1e-12; every flagged bug moves some value by more than 1e3 "
             "times the tolerance.",
}
MODEL = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
CLIENTS = [
    {"X": [[0.527, -0.843], [-1.214, 0.366], [0.908, 1.072], [-0.315, -0.694]],
     "y": [0.961, -1.387, 0.452, -0.218]},
    {"X": [[1.136, -0.257], [-0.642, 0.918], [0.183, -1.165]],
     "y": [-1.244, 0.571, 0.339]},
    {"X": [[-0.476, 0.731], [0.852, 0.219], [-1.093, -0.884], [0.314, 1.247],
           [0.695, -0.402]],
     "y": [1.823, 0.617, -1.158, 1.942, 0.276]},
    {"X": [[0.736, 0.482], [-0.914, -0.127]],
     "y": [-0.588, 0.734]},
]
INIT = {"kind": "given", "w": [0.2, -0.3, 0.1]}

# three rounds; client 1 skips round 0, client 3 round 1, clients 0 and 2
# round 2: every round after the first has a stale model among the peers
PARTIAL = [
    ([0, 2, 3], [[[0, 1], [2, 3]], [[1, 2], [3, 4]], [[0, 1], [1]]]),
    ([0, 1, 2], [[[2, 3], [1]], [[0, 2], [1]], [[4, 0], [2, 3]]]),
    ([1, 3], [[[1, 2], [0]], [[1], [0, 1]]]),
]
EVERY = [
    ([0, 1, 2, 3], [[[0, 1], [2, 3]], [[0, 1], [2]], [[1, 3], [0, 4]],
                    [[0], [1]]]),
    ([0, 1, 2, 3], [[[3, 1], [0]], [[2, 0], [1]], [[2, 4], [1]],
                    [[1, 0], [0]]]),
    ([0, 1, 2, 3], [[[2], [0, 3]], [[1], [2, 0]], [[0, 3], [4, 2]],
                    [[1], [0, 1]]]),
]


# the order in which a sampler drew each PARTIAL round's clients (schedule
# data a candidate must not pair with the batch lists)
DRAWN = [[3, 0, 2], [1, 2, 0], [3, 1]]


def rounds_json(rounds):
    """The given schedule's rounds; the PARTIAL rounds carry their drawn
    order (batches[j] stays clients[j]'s)."""
    out = []
    for t, (c, b) in enumerate(rounds):
        r = {"clients": c}
        if rounds is PARTIAL:
            r["drawn"] = DRAWN[t]
        r["batches"] = b
        out.append(r)
    return out


def make(vid, fname, title, description, algorithm, rounds, flags, mutants,
         source, check=None):
    spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT, algorithm,
                         rounds_json(rounds))

    def run(bugs=frozenset()):
        return xa.replay(spec, bugs)

    result = run()
    hp, sw = xa.settings(algorithm)
    pr = px.Problem(MODEL, CLIENTS)
    mu = (hp["fedamp.lambda"] / hp["fedamp.alpha_k"]
          if sw["fedamp.prox"] == "squared" else 0)
    for clients, batches in rounds:
        assert sorted(clients) == clients
        for k, steps in zip(clients, batches):
            px.assert_contractive(pr, k, steps, hp["eta"], mu)
    if check is not None:
        check(spec, result)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, None, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, TOL, exp)


def xis(result):
    """Every ξ record's values (exact) of a run."""
    return [x for r in result[0].records if r["name"] == "xi"
            for x in r["value"]]


def final_with(spec, **switches):
    alg = dict(spec["algorithm"], switches=dict(
        spec["algorithm"].get("switches", {}), **switches))
    return xa.replay(dict(spec, algorithm=alg))[2]


ALL_MUTANTS = {
    "fedamp-attention": ["attn-no-sigma", "attn-exp-sign", "attn-norm",
                         "attn-sigma-mul"],
    "fedamp-self-weight": ["self-one", "self-normalised"],
    "fedamp-prox-weight": ["prox-half", "prox-no-alpha", "prox-alpha-mul"],
    "fedamp-prox-reference": ["prox-ref-prev"],
    "prox-sign": ["prox-plus"],
    "fedamp-start": ["start-flip"],
    "fedamp-peers": ["peers-flip", "peers-current"],
    "fedamp-snapshot": ["live-uploads"],
    "fedamp-detached": ["detach-flip"],
    "local-step-count": ["step-extra", "step-fewer"],
    "batch-mean": ["batch-sum"],
}


# the learning-rate decay's flags (only the vectors with lr.* carry them)
LR_MUTANTS = {
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
}


def subset(*flags):
    table = dict(ALL_MUTANTS, **LR_MUTANTS)
    return list(flags), {f: table[f] for f in flags}


def paper_partial():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.1, "fedamp.alpha_k": 0.15,
                                     "fedamp.lambda": 0.21,
                                     "fedamp.sigma": 0.6}}

    def check(spec, result):
        for name, values in xa.SWITCHES.items():
            assert final_with(spec, **{name: values[1]}) != result[2], name
        assert all(x > 0 for x in xis(result))

    flags, mutants = subset(*ALL_MUTANTS)
    return make(
        "fedamp/worked/paper-partial", "worked-paper-partial.json",
        "FedAMP as Alg. 1 writes it, with clients that skip rounds",
        "Four clients (n = 4, 3, 5, 2), ŷ = x·w + b, squared loss, w⁰ = "
        "(0.2, -0.3, 0.1), η = 0.1, α_k = 0.15, λ = 0.21, σ = 0.6 (so λ/α_k "
        "= 1.4).  Rounds {0, 2, 3}, {0, 1, 2}, {1, 3}: each participant's "
        "u_i^k is formed from every client's latest w_j (stale for the "
        "clients that skipped), then two or three proximal steps from u_i^k.",
        algorithm, PARTIAL, flags, mutants, PAPER, check)


def negative_self():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.08, "fedamp.alpha_k": 0.45,
                                     "fedamp.lambda": 0.27,
                                     "fedamp.sigma": 0.55}}

    def check(spec, result):
        rec = [r for r in result[0].records if r["name"] == "xi"]
        assert any(r["value"][r["client"]] < 0 for r in rec)

    flags, mutants = subset("fedamp-attention", "fedamp-self-weight",
                            "fedamp-prox-weight", "fedamp-prox-reference",
                            "fedamp-start", "fedamp-snapshot", "prox-sign")
    return make(
        "fedamp/worked/negative-self", "worked-negative-self.json",
        "FedAMP with every client in every round and α_k large against σ: "
        "ξ_{i,i} < 0",
        "The clients and w⁰ of fedamp/worked/paper-partial; η = 0.08, α_k = "
        "0.45, λ = 0.27, σ = 0.55: α_k/σ ≈ 0.82, so three close peers make "
        "ξ_{i,i} = 1 − Σ_{j≠i} ξ_{i,j} negative (round 0: 1 − 3·0.818 < 0); "
        "u_i^k is still Σ_j ξ_{i,j} w_j^{k−1} with weights summing to 1.",
        algorithm, EVERY, flags, mutants, PAPER)


def peers_previous():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.11, "fedamp.alpha_k": 0.18,
                                     "fedamp.lambda": 0.23,
                                     "fedamp.sigma": 0.7},
                 "switches": {"fedamp.peers": "previous"}}
    flags, mutants = subset("fedamp-attention", "fedamp-self-weight",
                            "fedamp-peers", "fedamp-prox-weight",
                            "fedamp-snapshot")
    return make(
        "fedamp/worked/peers-previous", "worked-peers-previous.json",
        "FedAMP with the messages over the previous round's participants "
        "only (fedamp.peers = previous, PFLlib's send_models)",
        "The clients and w⁰ of fedamp/worked/paper-partial; η = 0.11, α_k = "
        "0.18, λ = 0.23, σ = 0.7; fedamp.peers = previous.  Round 0 has no "
        "uploads (u_i = w_i = w⁰, ξ_{i,i} = 1); round 1's peers are {0, 2, "
        "3}, round 2's {0, 1, 2}; a client's own w_i enters through ξ_{i,i} "
        "whether it took part or not.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + PFLLIB)


def start_own():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.09, "fedamp.alpha_k": 0.2,
                                     "fedamp.lambda": 0.34,
                                     "fedamp.sigma": 0.65},
                 "switches": {"fedamp.start": "own"}}
    flags, mutants = subset("fedamp-start", "fedamp-prox-weight",
                            "fedamp-prox-reference", "fedamp-attention",
                            "prox-sign")
    return make(
        "fedamp/worked/start-own", "worked-start-own.json",
        "FedAMP with the local solve started at w_i^{k−1} (fedamp.start = "
        "own), the proximal term toward u_i^k",
        "The clients and w⁰ of fedamp/worked/paper-partial; η = 0.09, α_k = "
        "0.2, λ = 0.34, σ = 0.65 (λ/α_k = 1.7); fedamp.start = own.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + PFLLIB)


def detached():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.12, "fedamp.alpha_k": 0.16,
                                     "fedamp.lambda": 0.26,
                                     "fedamp.sigma": 0.75},
                 "switches": {"fedamp.prox": "detached"}}
    flags, mutants = subset("fedamp-detached", "fedamp-attention",
                            "fedamp-self-weight", "fedamp-start")
    return make(
        "fedamp/worked/detached", "worked-detached.json",
        "FedAMP with the attention term detached (fedamp.prox = detached): "
        "plain SGD steps from u_i^k",
        "The clients and w⁰ of fedamp/worked/paper-partial; η = 0.12, α_k = "
        "0.16, λ = 0.26, σ = 0.75; fedamp.prox = detached (PFLlib builds "
        "the term from p.data: no gradient).",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + PFLLIB)


def pfllib():
    algorithm = {"name": "fedamp", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.07, "fedamp.alpha_k": 0.4,
                                     "fedamp.lambda": 0.3,
                                     "fedamp.sigma": 0.85}}
    flags, mutants = subset("fedamp-attention", "fedamp-self-weight",
                            "fedamp-peers", "fedamp-start",
                            "fedamp-detached")
    return make(
        "fedamp/worked/pfllib", "worked-pfllib.json",
        "FedAMP as PFLlib runs it (preset pfllib): messages over the last "
        "uploads, plain SGD from w_i^{k−1}",
        "The clients and w⁰ of fedamp/worked/paper-partial; η = 0.07, α_k = "
        "0.4, λ = 0.3, σ = 0.85; preset pfllib (fedamp.peers = previous, "
        "fedamp.start = own, fedamp.prox = detached): u_i^k is computed and "
        "sent (recorded) but the local steps do not read it.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + PFLLIB)


def pfllib_ld():
    algorithm = {"name": "fedamp", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.13, "fedamp.alpha_k": 0.35,
                                     "fedamp.lambda": 0.25,
                                     "fedamp.sigma": 0.9, "lr.gamma": 0.8},
                 "switches": {"lr.schedule": "exponential"}}

    def check(spec, result):
        # lr.count = trainings (the preset's) differs from rounds here:
        # client 1 sits out round 0, clients 0 and 2 round 2
        assert final_with(spec, **{"lr.count": "rounds"}) != result[2]

    flags, mutants = subset("fedamp-attention", "fedamp-self-weight",
                            "fedamp-peers", "fedamp-start",
                            "fedamp-detached", "lr-schedule", "lr-count")
    return make(
        "fedamp/worked/pfllib-ld", "worked-pfllib-ld.json",
        "FedAMP as PFLlib runs it with -ld (preset pfllib, lr.schedule = "
        "exponential): each client's η decays with its own trainings",
        "The clients, w⁰ and partial rounds of fedamp/worked/paper-partial; "
        "η = 0.13, α_k = 0.35, λ = 0.25, σ = 0.9; preset pfllib "
        "(fedamp.peers = previous, fedamp.start = own, fedamp.prox = "
        "detached, lr.count = trainings) with lr.schedule = exponential, γ "
        "= 0.8 (PFLlib -ld -ldg 0.8): client i's η in a round is η γ^(the "
        "rounds it trained in before), so client 1 trains round 2 with η γ "
        "(it sat out round 0), not η γ²; α_k, λ and σ do not decay.",
        algorithm, PARTIAL, flags, mutants,
        PAPER + "; " + PFLLIB + ", :50-51 and clientbase.py:48-52 (the "
        "client's ExponentialLR stepped after its own train())", check)


def paper_ld():
    algorithm = {"name": "fedamp",
                 "hyperparameters": {"eta": 0.1, "fedamp.alpha_k": 0.15,
                                     "fedamp.lambda": 0.21,
                                     "fedamp.sigma": 0.6, "lr.gamma": 0.7},
                 "switches": {"lr.schedule": "exponential"}}

    def check(spec, result):
        # the count matters: rounds here, trainings would differ
        assert final_with(spec, **{"lr.count": "trainings"}) != result[2]

    flags, mutants = subset("fedamp-attention", "fedamp-self-weight",
                            "fedamp-prox-weight", "fedamp-prox-reference",
                            "fedamp-start", "fedamp-snapshot", "prox-sign",
                            "lr-schedule")
    return make(
        "fedamp/worked/paper-ld", "worked-paper-ld.json",
        "FedAMP as Alg. 1 writes it with the step size decayed by round "
        "(lr.schedule = exponential, lr.count = rounds)",
        "The clients, w⁰, partial rounds and hyperparameters of "
        "fedamp/worked/paper-partial (η = 0.1, α_k = 0.15, λ = 0.21, σ = "
        "0.6) with lr.schedule = exponential, γ = 0.7: round t's steps "
        "w ← w − η γ^t (∇F_i(w; b) + (λ/α_k)(w − u_i^k)), t counted for "
        "every client whether it trained before or not; λ/α_k does not "
        "decay.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; ref/engine/lr.c "
        "(lr.schedule = exponential, lr.count = rounds)", check)


def main():
    pg.write_all(sys.argv, HERE,
                 (paper_partial, negative_self, peers_previous, start_own,
                  detached, pfllib, pfllib_ld, paper_ld))


if __name__ == "__main__":
    main()
