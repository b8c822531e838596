#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""APPLE golden vectors (Luo, Wu, IJCAI 2022, arXiv 2110.08394v3, Alg. 1),
computed by golden/pflref_exact_apple.py in exact fractions.

Four clients of a linear model with a bias and the squared loss (n = 4, 3,
5, 2), w⁰ = (0.2, -0.3, 0.1), given minibatches; every client downloads
every other core; clients skip rounds, so a core another client downloads
can be rounds old.

  paper-partial    the paper's reading, cosine λ(r) with L = 2 over four
                   rounds: λ = 1, 1/2, 0, 0 (round 3 past the cut-off,
                   where the cosine alone would give 1/2)
  cosine-every     every client every round, L = 3: λ = 1, 3/4, 1/4
  prox-full        apple.prox = full alone
  exponential      apple.scheduler = exponential alone (L = 3: λ = 1,
                   1/10, 1/100, then 0)
  p-init-uniform   apple.p_init = uniform alone
  core-first       apple.order = core_first alone
  block-mean       apple.p_grad = block_mean alone
  core-lr-n        apple.core_lr = n_eta alone
  lambda-previous  apple.lambda_round = previous alone
  official         preset official (exponential, full)
  pfllib           preset pfllib (uniform, core_first, block_mean, n_eta,
                   previous)
  pfllib-run       preset pfllib_run (pfllib, apple.upload = mixture,
                   apple.peers = sequential), every client every round
  pfllib-run-partial  the same with clients that skip rounds
  downloads        limited downloads: apple.M = 2 of 3 other cores in rounds
                   1-3 (the schedule's peers), the others the client's last
                   downloaded copies (apple.stale = last_download)
  downloads-initial  apple.M = 1, the cores not downloaded taken as w⁰
                   (apple.stale = initial), every client every round
  downloads-initial-partial  apple.stale = initial free of the rules'
                   coincidences: clients skip rounds, rounds past L = 2,
                   the download lists of downloads (M = 2)
  official-lr-exponential  preset official with the authors' decay ** r:
                   lr.schedule = exponential, γ = 1/2 (η and η_p both)

    /usr/bin/python3 golden/apple/make_apple.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_apple as xa      # noqa: E402
import pflref_golden as pg           # noqa: E402

PAPER = ("Luo, Wu, IJCAI 2022, arXiv 2110.08394v3, Alg. 1 (w_p^(i) = Σ_j "
         "p_ij w_j; w_i ← w_i − η ∂ℒ/∂w_i, p_i ← p_i − η_p ∂ℒ/∂p_i on ℒ = "
         "ℓ_i(w_p^(i)) + λ(r)(μ/2)‖p_i − p_0‖², p_i⁰ = p_0 = (n_j/n)_j; "
         "λ(r) = (cos(rπ/L) + 1)/2 for r < L, else 0)")
OFFICIAL = ("ljaiverson/pFL-APPLE 8078196731b5 utils/losses.py:4-21 "
            "(reg_loss coef‖p − p0‖², exponential get_reg_coef), "
            "utils/apple.py:5-12, train_APPLE.py:46-62")
PFLLIB = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
          "clientapple.py:15-22, :55-71; servers/serverapple.py:26-32")
GENERATOR = ("golden/apple/make_apple.py (exact fractions; "
             "pflref_exact_apple.py)")
TOL = {
    "atol": 1e-12,
    "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against the exact values of "
             "the binary inputs: λ(r) is rational here (cos(rπ/L) ∈ {1, "
             "1/2, 0, −1/2}, 0.001^{r/L} = 10^{−r}), which libm's cos and "
             "pow give within an ulp; each step forms w_p = Σ_j p_ij w_j (4 "
             "terms), a batch gradient of at most 3 samples and ⟨w_j, g⟩ "
             "over 3 entries, all of magnitude below 10, with step sizes "
             "below 0.15, over at most 8 steps on any chain of dependence: "
             "the relative rounding error stays below 1e-14; every flagged "
             "bug moves some value by more than 1e3 times the tolerance.",
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

# four rounds; client 1 skips round 0, client 3 round 1, clients 0 and 2
# round 2, client 1 round 3: every round after the first downloads a
# stale core
PARTIAL = [
    ([0, 2, 3], [[[0, 1], [2, 3]], [[1, 2], [3, 4]], [[0, 1]]]),
    ([0, 1, 2], [[[2, 3]], [[0, 2], [1]], [[4, 0], [2]]]),
    ([1, 3], [[[1, 2], [0]], [[1], [0, 1]]]),
    ([0, 2, 3], [[[1], [3, 0]], [[3, 1]], [[0], [1]]]),
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
DRAWN = [[3, 0, 2], [1, 2, 0], [3, 1], [2, 3, 0]]


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
    for clients, _ in rounds:
        assert sorted(clients) == clients
    if check is not None:
        check(spec, result)
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, None, v))
    prov = pg.provenance("independent", source, GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, TOL, exp)


def final_with(spec, **switches):
    alg = dict(spec["algorithm"], switches=dict(
        spec["algorithm"].get("switches", {}), **switches))
    return xa.replay(dict(spec, algorithm=alg))[2]


def subset(*flags):
    return list(flags), {f: xa.MUTANTS[f] for f in flags}


def hyper(eta, eta_p, mu, L):
    return {"eta": eta, "eta_p": eta_p, "apple.mu": mu, "apple.L": L}


# the flags every vector carries (the scheduler's, the steps', the
# downloads'); each single-switch vector adds its own
COMMON = ("apple-prox", "prox-sign", "apple-core-step", "apple-p-grad",
          "apple-downloads", "apple-personalized", "local-step-count",
          "batch-mean")


def paper_partial():
    algorithm = {"name": "apple", "hyperparameters": hyper(0.11, 0.07, 0.35,
                                                           2)}

    def check(spec, result):
        for name, values in xa.SWITCHES.items():
            if name != "apple.scheduler":   # 0.001^{1/2} is irrational
                assert final_with(spec, **{name: values[1]}) != result[2], \
                    name

    # the flags of the switches added with preset pfllib_run are the
    # pfllib-run vectors' (this frozen vector keeps its own); bn-own-buffers
    # is the batch-normalised vector's (golden/layers/make_bn_keep.py)
    flags, mutants = subset(*[f for f in xa.MUTANTS
                              if f not in ("apple-upload", "apple-peers",
                                           "apple-optimizer-groups",
                                           "apple-limited-downloads",
                                           "lr-schedule", "bn-own-buffers")])
    mutants["apple-scheduler"] = ["lambda-no-half", "lambda-rising",
                                  "lambda-one-based", "lambda-no-cutoff"]
    return make(
        "apple/worked/paper-partial", "worked-paper-partial.json",
        "APPLE as Alg. 1 writes it, with clients that skip rounds",
        "Four clients (n = 4, 3, 5, 2), ŷ = x·w + b, squared loss, w⁰ = "
        "(0.2, -0.3, 0.1), η = 0.11, η_p = 0.07, μ = 0.35, L = 2 (λ = 1, "
        "1/2, 0, 0).  Rounds {0, 2, 3}, {0, 1, 2}, {1, 3}, {0, 2, 3}: each "
        "participant downloads every other core as the server holds it at "
        "the round's start (stale for the clients that skipped), then "
        "steps its core and p_i jointly through w_p = Σ_j p_ij w_j.",
        algorithm, PARTIAL, flags, mutants, PAPER, check)


def cosine_every():
    algorithm = {"name": "apple", "hyperparameters": hyper(0.09, 0.13, 0.45,
                                                           3)}
    flags, mutants = subset("apple-scheduler", *COMMON)
    mutants["apple-scheduler"] = ["lambda-no-half", "lambda-rising",
                                  "lambda-one-based", "scheduler-flip"]
    return make(
        "apple/worked/cosine-every", "worked-cosine-every.json",
        "APPLE with every client in every round and the cosine scheduler "
        "at L = 3",
        "The clients and w⁰ of apple/worked/paper-partial; η = 0.09, η_p = "
        "0.13, μ = 0.45, L = 3: λ(r) = (cos(rπ/3) + 1)/2 = 1, 3/4, 1/4 in "
        "rounds 0, 1, 2.",
        algorithm, EVERY, flags, mutants, PAPER)


def single(name, value, vid, eta, eta_p, mu, L, flag, bugs, title, text,
           source):
    algorithm = {"name": "apple", "hyperparameters": hyper(eta, eta_p, mu, L),
                 "switches": {name: value}}
    flags, mutants = subset(flag, *[f for f in COMMON if f != flag])
    mutants[flag] = bugs

    def maker():
        return make(
            "apple/worked/" + vid, "worked-" + vid + ".json", title,
            "The clients, w⁰ and rounds of apple/worked/paper-partial; η = "
            f"{eta}, η_p = {eta_p}, μ = {mu}, L = {L}; {name} = {value}. "
            + text, algorithm, PARTIAL, flags, mutants, source)
    return maker


SINGLES = [
    single("apple.prox", "full", "prox-full", 0.12, 0.06, 0.55, 2,
           "apple-prox", ["prox-flip", "prox-no-lambda", "p0-uniform"],
           "APPLE with the authors' proximal term λ(r) μ‖p_i − p_0‖² "
           "(apple.prox = full)",
           "The gradient of the term is 2 λ(r) μ (p_i − p_0).",
           PAPER + "; " + OFFICIAL),
    single("apple.scheduler", "exponential", "exponential", 0.1, 0.08, 0.6,
           3, "apple-scheduler",
           ["scheduler-flip", "lambda-one-based", "lambda-no-cutoff"],
           "APPLE with the authors' exponential loss scheduler "
           "(apple.scheduler = exponential)",
           "λ(r) = 0.001^{r/3} = 1, 1/10, 1/100, then 0 in round 3.",
           PAPER + "; " + OFFICIAL),
    single("apple.p_init", "uniform", "p-init-uniform", 0.13, 0.09, 0.3, 2,
           "apple-p-init", ["p-init-flip"],
           "APPLE with p_i starting at (1/N)_j (apple.p_init = uniform, "
           "PFLlib)",
           "p_0 stays the sample shares (4, 3, 5, 2)/14 in the proximal "
           "term.", PAPER + "; " + PFLLIB),
    single("apple.order", "core_first", "core-first", 0.14, 0.1, 0.25, 2,
           "apple-order", ["order-flip"],
           "APPLE with the core stepped before p_i's gradient "
           "(apple.order = core_first, PFLlib)",
           "∂ℒ/∂p_ii reads the core after its step.", PAPER + "; " + PFLLIB),
    single("apple.p_grad", "block_mean", "block-mean", 0.08, 0.15, 0.4, 2,
           "apple-p-grad", ["p-grad-flip", "p-normalised"],
           "APPLE with PFLlib's gradient of p_i: the mean of the block "
           "means (apple.p_grad = block_mean)",
           "The blocks are w (2 entries) and b (1): ∂ℓ/∂p_ij = "
           "(⟨w_j, g⟩_w / 2 + (w_j g)_b) / 2.", PAPER + "; " + PFLLIB),
    single("apple.core_lr", "n_eta", "core-lr-n", 0.03, 0.07, 0.5, 2,
           "apple-core-step", ["core-lr-flip", "core-no-pii"],
           "APPLE with the core's step size N η (apple.core_lr = n_eta, "
           "PFLlib)",
           "The core steps by 4 η = 0.12.", PAPER + "; " + PFLLIB),
    single("apple.lambda_round", "previous", "lambda-previous", 0.11, 0.12,
           0.65, 2, "apple-lambda-round", ["lambda-round-flip"],
           "APPLE with round r's λ computed after round r − 1 "
           "(apple.lambda_round = previous, PFLlib)",
           "λ = 1 (round 0), λ(0) = 1, λ(1) = 1/2, λ(2) = 0.",
           PAPER + "; " + PFLLIB),
]


def official():
    algorithm = {"name": "apple", "preset": "official",
                 "hyperparameters": hyper(0.1, 0.05, 0.7, 3)}
    flags, mutants = subset("apple-scheduler", *COMMON)
    mutants["apple-scheduler"] = ["scheduler-flip", "lambda-one-based"]
    mutants["apple-prox"] = ["prox-flip", "prox-no-lambda", "p0-uniform"]
    return make(
        "apple/worked/official", "worked-official.json",
        "APPLE as the authors' code runs it (preset official): the "
        "exponential scheduler and the proximal term without ½",
        "The clients, w⁰ and rounds of apple/worked/paper-partial; η = 0.1, "
        "η_p = 0.05, μ = 0.7, L = 3; preset official (apple.scheduler = "
        "exponential, apple.prox = full).  The code's momentum 0.9 is not "
        "part of the preset.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + OFFICIAL)


def pfllib():
    algorithm = {"name": "apple", "preset": "pfllib",
                 "hyperparameters": hyper(0.03, 0.09, 0.3, 2)}
    flags, mutants = subset("apple-p-init", "apple-order",
                            "apple-lambda-round", *COMMON)
    mutants["apple-core-step"] = ["core-lr-flip", "core-no-pii"]
    mutants["apple-p-grad"] = ["p-grad-flip", "p-normalised"]
    return make(
        "apple/worked/pfllib", "worked-pfllib.json",
        "APPLE as PFLlib's update rules read it (preset pfllib)",
        "The clients, w⁰ and rounds of apple/worked/paper-partial; η = "
        "0.03, η_p = 0.09, μ = 0.3, L = 2; preset pfllib (apple.p_init = "
        "uniform, apple.order = core_first, apple.p_grad = block_mean, "
        "apple.core_lr = n_eta, apple.lambda_round = previous).  PFLlib's "
        "upload of the last step's mixture as the core is not expressed.",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + PFLLIB)


PFLLIB_RUN = PFLLIB + ("; clientapple.py:74-77 (model_c = the mixture; "
                      "the restore copies model_c onto itself), "
                      "serverapple.py:46-47, :84 (every client in turn, "
                      "the cores' objects sent)")


def pfllib_run(vid, rounds, eta, eta_p, mu, L, text):
    def maker():
        algorithm = {"name": "apple", "preset": "pfllib_run",
                     "hyperparameters": hyper(eta, eta_p, mu, L)}
        # apple-personalized's bug (w_p from the round's starting p_i) has
        # no object here: w_p^(i) is the last step's mixture
        flags, mutants = subset("apple-upload", "apple-peers", "apple-p-init",
                                "apple-order", "apple-lambda-round",
                                *[f for f in COMMON
                                  if f != "apple-personalized"])
        mutants["apple-core-step"] = ["core-lr-flip", "core-no-pii"]
        mutants["apple-p-grad"] = ["p-grad-flip", "p-normalised"]

        def check(spec, result):
            for name in ("apple.upload", "apple.peers"):
                other = xa.SWITCHES[name][0]
                assert final_with(spec, **{name: other}) != result[2], name
        return make(
            "apple/worked/" + vid, "worked-" + vid + ".json",
            "APPLE as PFLlib's APPLE.train() runs it (preset pfllib_run)",
            "The clients and w⁰ of apple/worked/paper-partial; η = "
            f"{eta}, η_p = {eta_p}, μ = {mu}, L = {L}; preset pfllib_run: "
            "the preset pfllib, the core carried on is the last step's "
            "mixture w_p (apple.upload = mixture) and a client downloads "
            "the stepped cores of the clients that trained before it in "
            "the round (apple.peers = sequential). " + text,
            algorithm, rounds, flags, mutants, PAPER + "; " + PFLLIB_RUN,
            check)
    return maker


PFLLIB_RUNS = [
    pfllib_run("pfllib-run", EVERY, 0.04, 0.11, 0.35, 2,
               "Every client in every round, as PFLlib trains them."),
    pfllib_run("pfllib-run-partial", PARTIAL, 0.05, 0.06, 0.45, 2,
               "Clients that skip rounds: a skipped client's core (its last "
               "mixture) is downloaded stale, and the earlier participants' "
               "stepped cores are read only within their round."),
]


OFFICIAL_DL = ("ljaiverson/pFL-APPLE 8078196731b5 utils/apple.py:18-76 "
               "(prepare_client_model downloads the cores get_download_which "
               "lists and skips the others, which keep the client's copy; "
               "round 0 downloads every core), utils/utils.py:40 "
               "(--limit_downloaded_models), train_APPLE.py:40-45, :174")
# the cores each participant downloads (the schedule's "peers", in the
# order of the round's clients); round 0 downloads every core, as the
# authors' (every core is w⁰ then)
PEERS_PARTIAL = [None, [[1, 3], [2, 3], [0, 3]], [[0, 2], [1, 2]],
                 [[2, 1], [0, 3], [1, 0]]]
PEERS_EVERY = [None, [[2], [3], [0], [1]], [[3], [0], [1], [2]]]


def downloads(vid, rounds, peers, M, stale, eta, eta_p, mu, L, text):
    def maker():
        algorithm = {"name": "apple",
                     "hyperparameters": dict(hyper(eta, eta_p, mu, L),
                                             **{"apple.M": M})}
        if stale != "last_download":
            algorithm["switches"] = {"apple.stale": stale}
        title = (f"APPLE with limited downloads: M = {M} of the other "
                 f"{len(CLIENTS) - 1} cores per round, chosen as data; "
                 f"apple.stale = {stale}")
        description = (f"η = {eta}, η_p = {eta_p}, μ = {mu}, L = {L}; "
                       f"apple.M = {M}. " + text)
        spec = pg.given_spec(title, description, MODEL, CLIENTS, INIT,
                             algorithm, rounds_json(rounds))
        for r, lists in zip(spec["schedule"]["rounds"], peers):
            if lists is not None:
                r["peers"] = lists
                for i, lst in zip(r["clients"], lists):
                    assert len(lst) == M and i not in lst
                    assert len(set(lst)) == M

        def run(bugs=frozenset()):
            return xa.replay(spec, bugs)

        result = run()
        # the lists and the switch change the numbers
        full = dict(spec, schedule=dict(spec["schedule"], rounds=[
            {k: u for k, u in r.items() if k != "peers"}
            for r in spec["schedule"]["rounds"]]))
        assert xa.replay(full)[2] != result[2]
        other = xa.STALE[1] if stale == xa.STALE[0] else xa.STALE[0]
        assert final_with(spec, **{"apple.stale": other}) != result[2]
        flags, mutants = subset("apple-limited-downloads", *COMMON)
        exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                                  lambda trace, w, v, alpha: (trace, None, v))
        prov = pg.provenance("independent", PAPER + "; " + OFFICIAL_DL,
                             GENERATOR)
        return (vid.split("/")[-1] and "worked-" + vid.split("/")[-1]
                + ".json", pg.vector(vid, title, prov, flags, spec, TOL, exp))
    return maker


DOWNLOADS = [
    downloads("apple/worked/downloads", PARTIAL, PEERS_PARTIAL, 2,
              "last_download", 0.12, 0.08, 0.4, 2,
              "Rounds 1-3 list two of the three other cores per participant "
              "(round 0 downloads every core); the core left out is the "
              "client's copy from its last download of it (client 1, absent "
              "from round 0, still holds w⁰ for core 0 in round 1), and "
              "clients skip rounds, so the copies are rounds old."),
    downloads("apple/worked/downloads-initial", EVERY, PEERS_EVERY, 1,
              "initial", 0.1, 0.12, 0.3, 3,
              "Every client every round; rounds 1 and 2 list one of the "
              "three other cores per participant, and the two left out are "
              "taken as the initial w⁰ (apple.stale = initial)."),
    downloads("apple/worked/downloads-initial-partial", PARTIAL,
              PEERS_PARTIAL, 2, "initial", 0.13, 0.07, 0.45, 2,
              "The rounds of apple/worked/paper-partial (clients skip "
              "rounds; L = 2 of four rounds, so λ = 0 in rounds 2 and 3) "
              "and the download lists of apple/worked/downloads: rounds 1-3 "
              "list two of the three other cores per participant (round 0 "
              "downloads every core), and the core left out is taken as the "
              "initial w⁰ (apple.stale = initial), not the client's last "
              "download of it: in round 3 client 0 leaves out core 3, which "
              "it downloaded in round 1, and client 3 leaves out core 2, "
              "which it downloaded in round 2; both take w⁰."),
]


def official_lr():
    h = hyper(0.12, 0.08, 0.6, 3)
    h["lr.gamma"] = 0.5
    algorithm = {"name": "apple", "preset": "official",
                 "hyperparameters": h,
                 "switches": {"lr.schedule": "exponential"}}
    flags, mutants = subset("apple-scheduler", "lr-schedule", *COMMON)
    mutants["apple-scheduler"] = ["scheduler-flip", "lambda-one-based"]
    mutants["apple-prox"] = ["prox-flip", "prox-no-lambda", "p0-uniform"]
    return make(
        "apple/worked/official-lr-exponential",
        "worked-official-lr-exponential.json",
        "APPLE as the authors' code runs it (preset official) with its "
        "learning-rate decay decay ** r on both step sizes",
        "The clients, w⁰ and rounds of apple/worked/paper-partial (clients "
        "skip rounds); η = 0.12, η_p = 0.08, μ = 0.6, L = 3; preset "
        "official; lr.schedule = exponential, lr.gamma = 0.5: round t "
        "steps the cores at η/2^t and p_i at η_p/2^t (the authors' "
        "lr_net · decay^r and lr_coef · decay^r, train_APPLE.py:51-52).  "
        "APPLE takes no lr.count: the authors' clients train every round, "
        "and PFLlib's -ld decays neither step (clientapple.py reads the "
        "floats self.learning_rate and self.drlr).",
        algorithm, PARTIAL, flags, mutants, PAPER + "; " + OFFICIAL
        + " (train_APPLE.py:51-52: both groups' lr times decay ** r)")


def main():
    pg.write_all(sys.argv, HERE,
                 (paper_partial, cosine_every, *SINGLES, official, pfllib,
                  *PFLLIB_RUNS, *DOWNLOADS, official_lr))


if __name__ == "__main__":
    main()
