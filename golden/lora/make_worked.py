#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Low-rank adapter golden vectors (algorithm lora: personal adapters,
FFA-LoRA arXiv 2403.12313, naive FedAvg-LoRA, HetLoRA arXiv 2401.06432;
LoRA arXiv 2106.09685v2 eq. (3)), computed in exact rational arithmetic by
golden/pflref_exact_lora.py from shared/spec notes-lora-pfedhn.md §1-3.

By hand (the notes' worked examples §6.1-6.3, every number there):
  hand-lora       §6.1: linear d = 2, W0 = [1, -1], A0 = [1/2, 1/2], B0 = 0,
                  r = 1, alpha = 2 (s = 2), eta = 1/10, two steps on
                  x = (1, 2), y = 1: B = 3/5, then B = 33/50,
                  A = [131/250, 137/250], merged W = [10573/6250, -1729/6250]
  hand-ffa        §6.2 FFA-LoRA: B = 1/5 at the round's start, clients of 2
                  and 1 samples: B_1 = 17/100, B_2 = -3/25, B = 11/150,
                  s B A = [11/150, 11/150] = sum p_k s B_k A (exact)
  hand-fedavg     §6.2 naive FedAvg-LoRA on the same round: A = [277/750,
                  29/50], s B A = [3047/56250, 319/3750]
  hand-hetlora    §6.3a: r_max = 2, ranks 1 and 2, eta = 1/2, s = 1:
                  p = (2/7, 5/7), B = [-19/14, -5/7], A = [[10/7, 1/14],
                  [-1, -1/7]]
  hand-hetlora-prune
                  §6.3b: lambda = 1/2, gamma = 1/2; client 2's tail product
                  1 -> 81/256, it prunes to rank 1; p = (3/4, 1/4),
                  B = [1, 0], A = [[1/4, -3/4], [0, 0]]
  §6.3 needs rank 2 on a 1 x 2 block, which the reference refuses (r <=
  min(k, d)); it runs on an mlp with identity activation and W2 = [1, 0],
  lora.targets = input, so the adapted W1 is 2 x 2 and its first row and
  the output are the notes' linear model exactly (B's second row stays 0).

Without coincidences (golden/coincidences.py), dyadic data, several rounds,
minibatches, unequal client sizes: one vector per method and switch value
(the softmax ones with probabilities to 80 digits, pflref_exact_lora.Softmax).

On layer lists ("kind": "layers", the base gradient from
pflref_exact_layers.py, exact fractions under the squared losses): a relu
MLP with targets named by layer and by block (FedAvg-LoRA), a CNN with its
conv2d weight adapted as the matrix out x (in k k) (FFA-LoRA on every
weight, HetLoRA on the conv alone), and the client optimizers on the
adapter (Adam with one state per client; SGD with Nesterov momentum,
decoupled weight decay and clipping, one state carried from client to
client).

    /usr/bin/python3 golden/lora/make_worked.py [OUTDIR]
"""
import os
import sys
from fractions import Fraction as F

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_exact_lora as pl   # noqa: E402
import pflref_golden as pg       # noqa: E402

NOTES = "shared/spec notes-lora-pfedhn.md"
GENERATOR = "golden/lora/make_worked.py (exact fractions, pflref_exact_lora.py)"
TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference against exact rationals (inputs the exact "
             "doubles of the spec; irrational norms within 1e-70): a few "
             "rounds of up to three steps on values below 10, each a few "
             "products over the rank and the batch; HetLoRA's weights are "
             "quotients of square roots; every flagged bug moves some value "
             "by more than 1e3 times the tolerance",
}


def make(name, title, description, spec, source, check=None):
    """The vector; its flags are every bug class of pflref_exact_lora whose
    mutants all move it beyond tolerance (check_mutants re-asserts it)."""
    vid = f"lora/worked/{name}"

    def run(bugs=frozenset()):
        return pl.replay(spec, frozenset(bugs))

    result = run()
    if check is not None:
        check(*result)
    exp0 = pg.expected(result[0], result[1], result[2])
    flags = []
    runs = pg.MutantRuns(exp0, TOL)     # detects(), each run stopped early
    for flag, bugs in sorted(pl.MUTANTS.items()):
        ok = True
        for bug in bugs:
            try:
                ok = runs.diff(lambda: pg.expected(*run({bug})[:3])) is not None
            except (OverflowError, ZeroDivisionError):
                pass
            if not ok:
                break       # one bug the vector misses: the flag is not earned
        if ok:
            flags.append(flag)
    mutants = {f: pl.MUTANTS[f] for f in flags}
    exp = pg.checked_expected(vid, TOL, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    values = {"w": result[1]}
    values.update({f"v_{i}": v for i, v in enumerate(result[2])})
    prov = pg.provenance("independent", source, GENERATOR, values)
    spec["description"] = description
    return f"worked-{name}.json", pg.vector(vid, title, prov, flags, spec,
                                            TOL, exp)


def server(trace, name, rnd):
    return [r["value"] for r in trace.records if r["event"] == "server"
            and r["name"] == name and r.get("round") == rnd][0]


LIN2 = {"kind": "linear", "d": 2, "bias": False, "loss": "half_squared"}


def alg(method, hp, **sw):
    a = {"name": "lora", "hyperparameters": hp}
    switches = dict(sw)
    if method != "personal":
        switches["lora.method"] = method
    if switches:
        a["switches"] = switches
    return a


# ---------------------------------------------------------------- by hand

def hand_lora():
    spec = pg.given_spec(
        "LoRA by hand (notes §6.1)", None, LIN2, [{"X": [[1, 2]], "y": [1]}],
        {"kind": "given", "w": [1, -1], "lora": [0.5, 0.5, 0]},
        alg("personal", {"eta": 0.1, "lora.r": 1, "lora.alpha": 2}),
        [{"clients": [0], "batches": [[[0], [0]]]}])

    def check(trace, w, v, _):
        # with eta = 1/10 as its double, the notes' values to 1e-15
        assert abs(v[0][0] - F(10573, 6250)) < F(1, 10 ** 15), v[0]
        assert abs(v[0][1] - F(-1729, 6250)) < F(1, 10 ** 15), v[0]
        assert w == [1, -1]
    return make("hand-lora", "LoRA by hand: r = 1, s = 2, two steps "
                "(only B moves in the first)",
                "Notes §6.1: W0 = [1, -1], A0 = [1/2, 1/2], B0 = 0, s = 2, "
                "eta = 1/10; B = 3/5 after step 1, B = 33/50, A = [131/250, "
                "137/250] after step 2.", spec, f"{NOTES} §1, §6.1", check)


FFA_CLIENTS = [{"X": [[1, 2], [2, 0]], "y": [1, 0]}, {"X": [[2, -1]], "y": [0]}]


def hand_ffa(method):
    spec = pg.given_spec(
        f"{method} by hand (notes §6.2)", None, LIN2, FFA_CLIENTS,
        {"kind": "given", "w": [1, -1], "lora": [0.5, 0.5, 0.2]},
        alg(method, {"eta": 0.1, "lora.r": 1, "lora.alpha": 2}),
        [{"clients": [0, 1], "batches": [[[0, 1]], [[0]]]}])

    def check(trace, w, v, _):
        q = server(trace, "q", 0)
        tol = F(1, 10 ** 15)
        assert abs(q[2] - F(11, 150)) < tol, q
        if method == "ffa":
            assert q[:2] == [F(1, 2), F(1, 2)]
        else:
            assert abs(q[0] - F(277, 750)) < tol and abs(q[1] - F(29, 50)) < tol
    name = {"ffa": "FFA-LoRA", "fedavg": "naive FedAvg-LoRA"}[method]
    return make(f"hand-{method}", f"{name} by hand: one round of the notes "
                "§6.2 (A frozen vs A averaged)",
                "Notes §6.2: W0 = [1, -1], A = [1/2, 1/2], B = 1/5, s = 2, "
                "eta = 1/10, clients of 2 and 1 samples, one full-batch "
                "step each; B = 11/150" + (", s B A = sum p_k s B_k A"
                                           if method == "ffa" else
                                           ", A = [277/750, 29/50]") + ".",
                spec, f"{NOTES} §3, §6.2", check)


def hand_het(prune):
    y2 = 2 if prune else 0
    hp = {"eta": 0.5, "lora.r": 2, "lora.alpha": 2}
    if prune:
        hp["hetlora.lambda"] = 0.5
    spec = pg.given_spec(
        "HetLoRA by hand (notes §6.3%s)" % ("b" if prune else "a"), None,
        {"kind": "mlp", "d": 2, "h": 2, "k": 1, "activation": "identity",
         "bias": False, "loss": "half_squared"},
        [{"X": [[2, 2]], "y": [1]}, {"X": [[2, 1]], "y": [y2]}],
        {"kind": "given", "w": [1, -1, 0, 0, 1, 0],
         "lora": [1, 0, 0.6, 0.8, -0.5, 1, 0, 0], "lora_ranks": [1, 2]},
        alg("hetlora", hp, **{"lora.targets": "input"}),
        [{"clients": [0, 1], "batches": [[[0]], [[0]]]}])

    def check(trace, w, v, _):
        q = server(trace, "q", 0)
        tol = F(1, 10 ** 14)
        want = ([F(1, 4), F(-3, 4), 0, 0, 1, 0, 0, 0] if prune else
                [F(10, 7), F(1, 14), -1, F(-1, 7), F(-19, 14), F(-5, 7), 0, 0])
        assert all(abs(a - b) < tol for a, b in zip(q, want)), q
    return make("hand-hetlora" + ("-prune" if prune else ""),
                "HetLoRA by hand: ranks 1 and 2, " +
                ("self-pruning to rank 1" if prune else
                 "sparsity weights 2/7, 5/7 and zero-padding"),
                "Notes §6.3%s on an mlp with identity activation, W2 = [1, 0] "
                "and lora.targets = input (W1 2 x 2 carries the notes' rank-2 "
                "adapter in its first row)." % ("b" if prune else "a"),
                spec, f"{NOTES} §2, §6.3", check)


def hand_het_lambda0():
    """hand-hetlora's network with client 1's target y = 0.5 and λ = 0
    (issue 33 §3): the regulariser and the pruning test are off (they run
    only when λ > 0), though the data alone shrink client 1's tail product
    ‖B_t‖ ‖A_t‖, so a test λ ≥ 0 would prune client 1 to rank 1."""
    hp = {"eta": 0.5, "lora.r": 2, "lora.alpha": 2}
    spec = pg.given_spec(
        "HetLoRA by hand, λ = 0: no pruning although the tail shrinks", None,
        {"kind": "mlp", "d": 2, "h": 2, "k": 1, "activation": "identity",
         "bias": False, "loss": "half_squared"},
        [{"X": [[2, 2]], "y": [1]}, {"X": [[2, 1]], "y": [0.5]}],
        {"kind": "given", "w": [1, -1, 0, 0, 1, 0],
         "lora": [1, 0, 0.6, 0.8, -0.5, 1, 0, 0], "lora_ranks": [1, 2]},
        alg("hetlora", hp, **{"lora.targets": "input"}),
        [{"clients": [0, 1], "batches": [[[0]], [[0]]]}])

    def check(trace, w, v, _):
        # client 1's tail product falls: before (A row 1, B column 1) = 1
        q1 = [r["value"] for r in trace.records
              if r["event"] == "step" and r["name"] == "q" and r.get("client") == 1][-1]
        nA = q1[2] ** 2 + q1[3] ** 2
        nB = q1[5] ** 2 + q1[7] ** 2
        assert nA * nB < 1, (nA, nB)
        ranks = [r["value"][0] for r in trace.records
                 if r["event"] == "note" and r["name"] == "rank"]
        assert ranks and all(x == [1, 2][i] for i, x in enumerate(ranks[:2])), ranks
    return make("hand-hetlora-lambda0",
                "HetLoRA by hand with λ = 0: the tail shrinks, no pruning",
                "Notes §6.3's network (client 1's y = 0.5) with hetlora.lambda = 0: "
                "the regulariser and the pruning test run only when λ > 0, so "
                "client 1 keeps rank 2 although its tail product falls.",
                spec, f"{NOTES} §2 step 4 (λ > 0), §6.3", check)


# ---------------------------------------------------------------- no coincidences

def d8(*xs):
    return [x / 8 for x in xs]


MLP = {"kind": "mlp", "d": 3, "h": 3, "k": 1, "activation": "identity",
       "bias": True, "hidden_bias": True, "loss": "half_squared"}
MLP_W0 = (d8(3, -2, 1, 5, 2, -4, -1, 6, 2) + d8(1, -3, 2)      # W1, b1
          + d8(5, -2, 3) + d8(-1))                             # W2, b2
MLP_CLIENTS = [
    {"X": [d8(4, -2, 3), d8(-5, 1, 6), d8(2, 7, -3)], "y": d8(3, -6, 5)},
    {"X": [d8(1, 3, -4), d8(6, -2, 1), d8(-3, -5, 2), d8(4, 4, 1)],
     "y": d8(-2, 7, 1, 4)},
    {"X": [d8(-2, 6, 3), d8(5, 1, -6)], "y": d8(4, -3)},
]
MLP_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1]], [[3, 0], [1, 2]], [[1], [0]]]},
    {"clients": [0, 2], "drawn": [2, 0], "batches": [[[1, 0], [2]], [[0, 1]]]},
    {"clients": [1, 2], "batches": [[[2, 1], [0, 3], [1]], [[0], [1]]]},
]
LIN = {"kind": "linear", "d": 3, "bias": True, "loss": "squared"}
LIN_CLIENTS = [
    {"X": [d8(4, -2, 3), d8(-5, 1, 6), d8(2, 7, -3)], "y": d8(3, -6, 5)},
    {"X": [d8(1, 3, -4), d8(6, -2, 1), d8(-3, -5, 2), d8(4, 4, 1)],
     "y": d8(-2, 7, 1, 4)},
    {"X": [d8(-2, 6, 3), d8(5, 1, -6)], "y": d8(4, -3)},
]


SOFTMAX = {"kind": "softmax", "d": 3, "k": 3, "bias": True,
           "loss": "cross_entropy"}
SOFTMAX_W0 = d8(3, -2, 1, 5, 2, -4, -1, 6, 2) + d8(1, -3, 2)
SOFTMAX_CLIENTS = [
    {"X": [d8(4, -2, 3), d8(-5, 1, 6), d8(2, 7, -3)], "y": [0, 2, 1]},
    {"X": [d8(1, 3, -4), d8(6, -2, 1), d8(-3, -5, 2), d8(4, 4, 1)],
     "y": [1, 1, 0, 2]},
    {"X": [d8(-2, 6, 3), d8(5, 1, -6)], "y": [2, 0]},
]


def q_of(model, r, targets, seed, names=None):
    """A dyadic adapter of rank r with a non-zero B (the generic round
    start: B = 0 would hide every bug of dA)."""
    L, Q = pl.layout(model, r, targets, names)
    vals = []
    for j in range(Q):
        x = ((j * 7 + seed * 5) % 13) - 6
        vals.append((x if x else 3) / 16)
    return vals


def generic(name, model, clients, rounds, method, hp, sw, w0, title,
            ranks=None, qseed=None, q0=None):
    targets = sw.get("lora.targets", "all")
    init = {"kind": "given", "w": w0,
            "lora": q0 if q0 is not None else
            q_of(model, hp["lora.r"], targets,
                 len(name) if qseed is None else qseed)}
    if ranks is not None:
        init["lora_ranks"] = ranks
    spec = pg.given_spec(title, None, model, clients, init,
                         alg(method, hp, **sw), [dict(r) for r in rounds])
    desc = (f"{model['kind']} model, method {method}, "
            f"switches {sw or 'defaults'}, hyperparameters {hp}; three "
            "rounds with partial participation, minibatches and unequal "
            "client sizes; dyadic data, a non-zero initial B.")
    return make(name, title, desc, spec,
                f"{NOTES} §1-3 (the method's steps); LoRA arXiv 2106.09685v2 "
                "eq. (3)")


# ---------------------------------------------------------------- layer lists

def layers_mlp(out_name="out"):
    return {"kind": "layers", "input": [3], "loss": "half_squared",
            "layers": [{"type": "dense", "name": "fc1", "out": 3},
                       {"type": "relu"},
                       {"type": "dense", "name": "fc2", "out": 2},
                       {"type": "relu"},
                       {"type": "dense", "name": out_name, "out": 1}]}


LMLP = layers_mlp()
# fc1 (3 x 3, 3), fc2 (2 x 3, 2), out (1 x 2, 1): P = 12 + 8 + 3
LMLP_W0 = (d8(3, -2, 1, 5, 2, -4, -1, 6, 2) + d8(3, 2, 5)
           + d8(4, -3, 2, -1, 5, 3) + d8(2, 3)
           + d8(5, -4) + d8(1))

CNN = {"kind": "layers", "input": [1, 4, 4], "loss": "squared",
       "layers": [{"type": "conv2d", "name": "conv", "out_channels": 2,
                   "kernel": 3},
                  {"type": "relu"},
                  {"type": "flatten"},
                  {"type": "dense", "name": "fc", "out": 1}]}
# conv (2 x 1 x 3 x 3, 2), fc (1 x 8, 1): P = 18 + 2 + 8 + 1
CNN_W0 = (d8(3, -2, 1, 5, 2, -4, -1, 6, 2, 2, 4, -3, 1, -5, 3, 2, -1, 4)
          + d8(1, -1) + d8(3, -2, 4, 1, -3, 2, 5, -1) + d8(1))


def image(seed):
    """A 4 x 4 image of eighths, no entry 0."""
    return [(((seed * 5 + j * 7) % 11) - 5 or 3) / 8 for j in range(16)]


CNN_CLIENTS = [
    {"X": [image(1), image(2), image(3)], "y": d8(3, -6, 5)},
    {"X": [image(4), image(5), image(6), image(7)], "y": d8(-2, 7, 1, 4)},
    {"X": [image(8), image(9)], "y": d8(4, -3)},
]


def layer_vector(name, model, clients, method, hp, sw, w0, title, targets=None,
                 ranks=None, qseed=None):
    r = hp["lora.r"]
    L, Q = pl.layout(model, r, sw.get("lora.targets", "all"), targets)
    init = {"kind": "given", "w": w0,
            "lora": q_of(model, r, sw.get("lora.targets", "all"),
                         len(name) if qseed is None else qseed, targets)}
    if targets is not None:
        init["lora_targets"] = targets
    if ranks is not None:
        init["lora_ranks"] = ranks
    spec = pg.given_spec(title, None, model, clients, init,
                         alg(method, hp, **sw), [dict(r_) for r_ in MLP_ROUNDS])
    desc = (f"layer list ({', '.join(l['type'] for l in model['layers'])}), "
            f"method {method}, targets {targets or sw.get('lora.targets', 'all')}"
            f", switches {sw or 'defaults'}, hyperparameters {hp}; three "
            "rounds with partial participation, minibatches and unequal "
            "client sizes; dyadic data, a non-zero initial B.")
    return make(name, title, desc, spec,
                f"{NOTES} §1-3; LoRA arXiv 2106.09685v2 eq. (3); the layer "
                "list of docs/models.md (pflref_exact_layers.py)"
                + ("; torch.optim's documented rules (docs/optimizers.md)"
                   if any(k.startswith("opt.") for k in list(hp) + list(sw))
                   else ""))


MAKERS = [
    hand_lora,
    lambda: hand_ffa("ffa"),
    lambda: hand_ffa("fedavg"),
    lambda: hand_het(False),
    lambda: hand_het(True),
    lambda: generic("mlp-personal", MLP, MLP_CLIENTS, MLP_ROUNDS, "personal",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 3},
                    {"lora.targets": "input"}, MLP_W0,
                    "Personal adapters of rank 2 on the mlp's input layer"),
    lambda: generic("mlp-personal-all", MLP, MLP_CLIENTS, MLP_ROUNDS,
                    "personal", {"eta": 0.375, "lora.r": 1, "lora.alpha": 3},
                    {}, MLP_W0, "Personal adapters on both mlp layers, r = 1"),
    lambda: generic("linear-ffa", LIN, LIN_CLIENTS, MLP_ROUNDS, "ffa",
                    {"eta": 0.125, "lora.r": 1, "lora.alpha": 1.5}, {},
                    d8(2, -3, 1, 5), "FFA-LoRA on a linear model with a bias"),
    lambda: generic("mlp-ffa", MLP, MLP_CLIENTS, MLP_ROUNDS, "ffa",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 3},
                    {"lora.targets": "input"}, MLP_W0,
                    "FFA-LoRA of rank 2 on the mlp's input layer"),
    lambda: generic("mlp-ffa-uniform", MLP, MLP_CLIENTS, MLP_ROUNDS, "ffa",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 3},
                    {"lora.targets": "input", "lora.weights": "uniform"},
                    MLP_W0, "FFA-LoRA with lora.weights = uniform"),
    lambda: generic("mlp-fedavg", MLP, MLP_CLIENTS, MLP_ROUNDS, "fedavg",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 3},
                    {"lora.targets": "input"}, MLP_W0,
                    "Naive FedAvg-LoRA of rank 2 on the mlp's input layer"),
    lambda: generic("mlp-fedavg-head", MLP, MLP_CLIENTS, MLP_ROUNDS, "fedavg",
                    {"eta": 0.375, "lora.r": 1, "lora.alpha": 0.75},
                    {"lora.targets": "head"}, MLP_W0,
                    "Naive FedAvg-LoRA on the mlp's output layer"),
    lambda: generic("mlp-hetlora", MLP, MLP_CLIENTS, MLP_ROUNDS, "hetlora",
                    {"eta": 0.375, "lora.r": 3, "lora.alpha": 2,
                     "hetlora.lambda": 0.625, "hetlora.gamma": 0.75},
                    {"lora.targets": "input"}, MLP_W0,
                    "HetLoRA with self-pruning on the mlp's input layer",
                    ranks=[2, 3, 1]),
    lambda: generic("mlp-hetlora-uniform", MLP, MLP_CLIENTS, MLP_ROUNDS,
                    "hetlora", {"eta": 0.375, "lora.r": 3, "lora.alpha": 2,
                                "hetlora.lambda": 0.625, "hetlora.gamma": 0.75},
                    {"lora.targets": "input", "hetlora.weights": "uniform",
                     "hetlora.scaling": "alpha"}, MLP_W0,
                    "HetLoRA with uniform weights and s = alpha / r_max",
                    ranks=[2, 3, 1]),
    lambda: generic("mlp-hetlora-samples", MLP, MLP_CLIENTS, MLP_ROUNDS,
                    "hetlora", {"eta": 0.375, "lora.r": 3, "lora.alpha": 2,
                                "hetlora.lambda": 0.625, "hetlora.gamma": 0.75},
                    {"lora.targets": "input", "hetlora.weights": "samples"},
                    MLP_W0, "HetLoRA with n_k-weighted zero-padded averages",
                    ranks=[3, 2, 3]),
    lambda: generic("mlp-hetlora-keep", MLP, MLP_CLIENTS, MLP_ROUNDS,
                    "hetlora", {"eta": 0.375, "lora.r": 3, "lora.alpha": 2,
                                "hetlora.lambda": 0.05, "hetlora.gamma": 0.75},
                    {"lora.targets": "input"}, MLP_W0,
                    "HetLoRA with a weak regulariser: tails that grow keep "
                    "their rank", ranks=[2, 3, 1], qseed=2),
    lambda: generic("mlp-hetlora-zero", MLP, MLP_CLIENTS, MLP_ROUNDS[:2],
                    "hetlora", {"eta": 0.375, "lora.r": 2, "lora.alpha": 2},
                    {"lora.targets": "input"}, MLP_W0,
                    "HetLoRA from A = B = 0: every S_k = 0, uniform weights "
                    "(the Z = 0 rule)", ranks=[2, 1, 2], q0=[0.0] * 12),
    lambda: generic("softmax-ffa", SOFTMAX, SOFTMAX_CLIENTS, MLP_ROUNDS, "ffa",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 1.5}, {},
                    SOFTMAX_W0, "FFA-LoRA of rank 2 on a softmax model "
                    "(cross-entropy, 80-digit probabilities)"),
    lambda: generic("softmax-hetlora-head", SOFTMAX, SOFTMAX_CLIENTS,
                    MLP_ROUNDS, "hetlora",
                    {"eta": 0.375, "lora.r": 2, "lora.alpha": 2,
                     "hetlora.lambda": 0.3, "hetlora.gamma": 0.75},
                    {"lora.targets": "head"}, SOFTMAX_W0,
                    "HetLoRA on a softmax model's output layer, ranks 1 and 2",
                    ranks=[2, 1, 2]),
    lambda: layer_vector("layers-mlp-fedavg", LMLP, MLP_CLIENTS, "fedavg",
                         {"eta": 0.375, "lora.r": 1, "lora.alpha": 1.5}, {},
                         LMLP_W0, "FedAvg-LoRA on a relu layer list, targets "
                         "named by layer and by block",
                         targets=["out.weight", "fc1"]),
    lambda: layer_vector("layers-cnn-ffa", CNN, CNN_CLIENTS, "ffa",
                         {"eta": 0.0625, "lora.r": 1, "lora.alpha": 1.5}, {},
                         CNN_W0, "FFA-LoRA on a CNN: the conv2d weight as "
                         "out x (in k k) and the dense weight"),
    lambda: layer_vector("layers-cnn-hetlora", CNN, CNN_CLIENTS, "hetlora",
                         {"eta": 0.0625, "lora.r": 2, "lora.alpha": 2,
                          "hetlora.lambda": 0.625, "hetlora.gamma": 0.75},
                         {}, CNN_W0, "HetLoRA on a CNN's conv2d weight alone",
                         targets=["conv.weight"], ranks=[2, 1, 2]),
    lambda: layer_vector("layers-mlp-adam", LMLP, MLP_CLIENTS, "fedavg",
                         {"eta": 0.0625, "lora.r": 1, "lora.alpha": 1.5,
                          "opt.beta1": 0.75, "opt.beta2": 0.875,
                          "opt.eps": 0.001},
                         {"opt.method": "adam", "opt.state": "client"},
                         LMLP_W0, "FedAvg-LoRA with Adam on the adapter, one "
                         "optimizer per client kept across rounds"),
    lambda: layer_vector("layers-mlp-sgd-server", LMLP, MLP_CLIENTS, "hetlora",
                         {"eta": 0.25, "lora.r": 2, "lora.alpha": 2,
                          "hetlora.lambda": 0.625, "hetlora.gamma": 0.75,
                          "opt.momentum": 0.5, "opt.weight_decay": 0.125,
                          "opt.clip_norm": 1.25},
                         {"opt.nesterov": "on", "opt.weight_decay_form":
                          "decoupled", "opt.clip": "norm",
                          "opt.state": "server"},
                         LMLP_W0, "HetLoRA with Nesterov SGD, decoupled decay "
                         "and clipping, one optimizer carried from client to "
                         "client", targets=["fc1"], ranks=[2, 1, 2]),
    hand_het_lambda0,
]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
