#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Client-optimizer golden vectors under every algorithm that takes a client
optimizer besides FedAvg (make_fedavg.py): local, finetune, interp, ditto,
fedalt, fedsim, apfl, cfl, ifca (model mode), fedfomo, pfedhn.

Each vector's spec is run, as written, through that algorithm's exact replay
(pflref_exact.py, pflref_exact_pfl.py, pflref_exact_apfl.py,
pflref_exact_interp.py, pflref_exact_cfl.py, pflref_exact_ifca.py,
pflref_exact_fedfomo.py, pflref_exact_pfedhn.py), whose local steps go
through golden/pflref_exact_optim.py's optimizer (Optimizers: the slots of
docs/optimizers.md, "Where the state lives") once the spec sets an opt.*
away from its default: exact fractions, square roots (Adam) at 60 decimal
digits.  The generator asserts, per vector, what makes it able to fail: each
flagged bug moves a value far outside the tolerance (check_mutants), the
state lifetimes and the optimizer slots give other numbers, clipping acts on
some steps and not on others.

Vectors (ids optim/<algorithm>/<name>; file <algorithm>-<name>.json):
  local/clip-rational          quadratic clients on lines through 0 along
                               Pythagorean directions: every clipped
                               gradient norm rational, the run exact
  ditto/momentum-client        two optimizers per client (w_k, v_k) kept
                               across rounds, momentum with dampening
  apfl/momentum-server         w_i's and v_i's optimizers, one object each
                               carried from client to client
  apfl/pfllib-clip-momentum-client
                               the preset pfllib with a clip acting on some
                               steps, momentum and coupled decay kept per
                               client: alpha_update reads the clipped p.grad
  finetune/nesterov-server     FedAvg rounds, then the fine-tuning's own
                               optimizer (personal scope, proximal term)
  finetune/decay-shared-momentum   split b, weight decay on the shared w
                               only, momentum kept per client, full
                               fine-tuning
  finetune/decay-personal      split b, weight decay on the personal b
                               only, no momentum, personal fine-tuning
  finetune/decay-all-dampening split b, weight decay on every block (the
                               default scope), momentum with dampening,
                               personal fine-tuning
  interp/adamw-client          FedAvg rounds and h_i's training, AdamW
  fedalt/decay-shared-client   a personal bias: weight decay on the shared
                               w only, momentum, full fine-tuning
  fedalt/decay-personal-server weight decay (decoupled) on the personal b
                               only
  fedsim/decay-weights-groups  one optimizer, two groups (gamma_u, gamma_v),
                               weight decay on w (not the bias)
  {ditto,apfl,fedalt,fedsim}/nesterov-clip-step-server
                               Nesterov, decoupled decay on the weights,
                               a clip acting on some steps, the state
                               carried from client to client, step decay
  {ditto,apfl,fedalt,fedsim}/adamw-client-decay
                               AdamW kept per client, exponential decay
                               (FedSim: decay on the shared w only)
  {ditto,apfl,fedalt,fedsim}/classical-client-decay
                               classical momentum kept per client,
                               exponential decay (the forms differ;
                               FedSim: coupled decay on the personal b)
  {fedfomo,cfl,ifca,pfedhn}/nesterov-clip-server[-step], .../adamw-client[-decay],
  fedfomo/classical-client-decay
                               the same switches on the frozen vectors of
                               the momentum-client vectors below (lr.* on
                               FedFomo only)
  cfl/momentum-client, ifca/momentum-client, fedfomo/momentum-client,
  pfedhn/momentum-client       the spec (problem, schedule) of a frozen
                               vector of that algorithm (named in each
                               description) with a momentum optimizer kept
                               per client

    /usr/bin/python3 golden/optim/make_algorithms.py [OUTDIR]
"""
import copy
import json
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)

import pflref_exact as px                # noqa: E402
import pflref_exact_apfl as xa           # noqa: E402
import pflref_exact_cfl as xc            # noqa: E402
import pflref_exact_fedfomo as xf        # noqa: E402
import pflref_exact_ifca as xi           # noqa: E402
import pflref_exact_interp as xp         # noqa: E402
import pflref_exact_optim as po          # noqa: E402
import pflref_exact_pfedhn as xh         # noqa: E402
import pflref_exact_pfl as pp            # noqa: E402
import pflref_golden as pg               # noqa: E402

GENERATOR = ("golden/optim/make_algorithms.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (exact fractions; decimal "
             "square roots at 60 digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_; one optimizer "
          "object per solver as TsingZ0/PFLlib builds them "
          "(clientditto.py optimizer/poptimizer, clientrep.py "
          "optimizer/optimizer_per, clientapfl.py optimizer/optimizer_per, "
          "clientbase.py's self.optimizer built once); docs/optimizers.md; "
          "each algorithm's paper as in its own vectors")

# The catalogued bugs a vector of Nesterov momentum, decoupled decay on the
# weights, a norm clip and a step decay must catch (flag -> bugs):
# clip-after-decay is no bug under the decoupled decay (no λθ in d), so
# only the per-block clip is
NESTEROV_CLIP_STEP_MUTANTS = {
    "nesterov-momentum": ["nesterov-ignored"],
    "weight-decay-form": ["decay-form-swap"],
    "weight-decay-scope": ["decay-scope-all"],
    "clip-scope": ["clip-per-block"],
    "lr-schedule": ["lr-ignored", "lr-shifted"]}


def tolerance(steps, exact=True, atol=1e-12, rtol=1e-12):
    head = ("fp64 reference in fixed order against exact rationals of the "
            "binary inputs" if exact else
            "fp64 reference in fixed order against exact rationals of the "
            "binary inputs, Adam's square roots and the values after them at "
            "60 decimal digits (error < 1e-58)")
    return {"atol": atol, "rtol": rtol,
            "basis": head + ": " + steps + "; each optimizer step a few "
            "roundings of terms below 10 in magnitude, momentum (mu < 0.9) "
            "and Adam's normalised steps bounded, so the accumulated error "
            "stays below 1e-13; every flagged bug moves some value by more "
            "than 1e3 times the tolerance."}


def replay_expected(spec, bugs=frozenset()):
    """The spec through its algorithm's exact replay, as an expected
    object (final w, v, alpha and the trajectory)."""
    alg = spec["algorithm"]["name"]
    bugs = frozenset(bugs)
    if alg in ("local", "finetune"):
        return replay_basic(spec, bugs)
    if alg == "ditto":
        w, v, trace = px.replay_personal(spec, bugs)
        return pg.expected(trace, w=w, v=v)
    if alg in ("fedalt", "fedsim"):
        w, v, trace = pp.replay(spec, bugs)
        return pg.expected(trace, w=w, v=v)
    mod = {"apfl": xa, "interp": xp, "cfl": xc, "ifca": xi, "fedfomo": xf,
           "pfedhn": xh}[alg]
    trace, w, v, alpha = mod.replay(spec, bugs)
    return pg.expected(trace, w=w, v=v, alpha=alpha)


def replay_basic(spec, bugs):
    """local and finetune (constant step, fedavg.weights = samples): the
    rounds of pflref_exact.local_round / fedavg_round and the fine-tuning
    phase, with the spec's optimizers."""
    alg = spec["algorithm"]
    hp = {k: pg.exact(v) for k, v in alg["hyperparameters"].items()}
    sw = alg.get("switches", {})
    pr = px.Problem(spec["model"], spec["problem"]["clients"])
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    mask = None
    if "split" in spec:
        mask = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 2 if alg["name"] == "finetune" else 1, mask,
                      bugs)
    trace = pg.Trace()
    w, v = list(w0), [list(w0) for _ in pr.clients]
    for t, r in enumerate(spec["schedule"]["rounds"]):
        plan = list(zip(r["clients"], r["batches"]))
        if alg["name"] == "local":
            v = px.local_round(pr, v, w0, t, plan, hp["eta"], trace, bugs, opt)
        else:
            w = px.fedavg_round(pr, w, w0, t, plan, hp["eta"], "samples",
                                trace, bugs, opt)
    if alg["name"] == "local":
        return pg.expected(trace, v=v)
    scope = None if sw.get("finetune.scope", "full") == "full" else mask
    thetas = px.finetune_phase(pr, w, w0, spec["schedule"]["post"],
                               hp["eta_ft"], hp.get("mu_ft", Fraction(0)),
                               scope, trace, bugs, opt)
    return pg.expected(trace, w=w, v=thetas)


def differs(a, b, tol):
    return pg.detects(a, b, tol) is not None


def make(alg, name, title, description, spec, tol, flags, mutants,
         checks=()):
    """The vector: the spec's exact replay, each flag's bugs shown to move
    it (check_mutants), the lifetimes and the slots shown to matter."""
    vid = "optim/%s/%s" % (alg, name)
    spec = dict(spec, name=title, description=description)
    exp = replay_expected(spec)
    mutants = dict(mutants)
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = po.other_lifetimes(
            spec["algorithm"])
    if "optimizer-slots-shared" in flags:
        mutants["optimizer-slots-shared"] = ["slots-shared"]
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay_expected(spec, bugs))
    for check in checks:
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, title, prov, flags,
                                                  spec, tol, exp)


def base_spec(model, clients, init, algorithm, rounds, split=None,
              post=None):
    return pg.given_spec("", None, model, clients, init, algorithm, rounds,
                         split, post)


def frozen_spec(rel):
    """The spec of a frozen vector (its inputs only: model, problem, init,
    schedule; the expected values are not read)."""
    with open(os.path.join(GOLDEN, rel)) as f:
        return json.load(f)["spec"]


def every_lifetime_differs(spec, exp, tol):
    """opt.state = reset, client and server: three different runs."""
    for life in ("reset", "client", "server"):
        other = copy.deepcopy(spec)
        other["algorithm"].setdefault("switches", {})["opt.state"] = life
        if life != po.config(spec["algorithm"])["opt.state"]:
            assert differs(exp, replay_expected(other), tol), life


# ---------------------------------------------------------------- data

LINEAR = {"kind": "linear", "d": 2, "loss": "squared", "bias": True}
# dyadic inputs (k / 2^m, short binary fractions): the exact runs keep
# short denominators, while every value stays distinct
CLIENTS = [
    {"X": [[1.375, -0.625], [-0.4375, 1.3125], [0.8125, 0.3125]],
     "y": [1.125, -0.8125, 0.9375]},
    {"X": [[-1.1875, 0.5], [0.3125, -1.4375], [1.0625, 0.75],
           [-0.5625, -0.25]],
     "y": [-1.25, 0.625, 1.4375, -0.5625]},
    {"X": [[0.6875, 1.1875], [-1.3125, -0.375], [0.25, -0.875],
           [1.5, 0.375], [-0.75, 1.0]],
     "y": [1.1875, -1.375, -0.3125, 1.625, 0.1875]},
]
INIT = {"kind": "given", "w": [0.125, -0.375, 0.1875]}
# three rounds of partial participation: S = {0, 1}, {1, 2}, {0, 2}; the
# batches change from step to step and from round to round
ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 1], [2]], [[0, 1], [2, 3], [1]]]},
    {"clients": [1, 2], "batches": [[[3, 2], [0]], [[0, 1], [2, 3], [4]]]},
    {"clients": [0, 2], "batches": [[[2, 0], [1]], [[4, 2], [1, 3]]]},
]
POST = [[[1, 2], [0]], [[2, 0], [3, 1]], [[3, 4], [0, 2], [1]]]
STEPS = "at most 3 local steps per client update, 3 rounds"

# ---------------------------------------------------------------- local

def clip_rational():
    """Quadratic clients f_i(v) = 1/2 sum_j a_i (v_j - c_ij)^2 with one a_i
    per client and c_i = s_i (3, 4), s_i (5, -12), s_i (-8, 15): from v = 0
    every iterate, gradient, momentum buffer and decay term stays on the
    line through 0 and c_i, so every gradient norm is |r| times 5, 13 or 17
    with r rational, and clipping is exact."""
    model = {"kind": "quadratic", "d": 2}
    clients = [{"a": [1.5, 1.5], "c": [1.5, 2.0]},        # 0.5 (3, 4)
               {"a": [2.25, 2.25], "c": [1.25, -3.0]},    # 0.25 (5, -12)
               {"a": [0.75, 0.75], "c": [-2.0, 3.75]}]    # 0.25 (-8, 15)
    one = [[0]]
    rounds = [{"clients": [0, 1], "batches": [one * 3, one * 2]},
              {"clients": [1, 2], "batches": [one * 2, one * 3]},
              {"clients": [0, 2], "batches": [one * 2, one * 2]}]
    algorithm = {"name": "local",
                 "hyperparameters": {"eta": 0.125, "opt.clip_norm": 2.25,
                                     "opt.momentum": 0.625,
                                     "opt.weight_decay": 0.1875},
                 "switches": {"opt.clip": "norm", "opt.state": "client"}}
    spec = base_spec(model, clients, {"kind": "zeros"}, algorithm, rounds)

    def clip_log(spec, exp, tol):
        log = clip_acts(spec, exp, tol)
        assert all(exact for _, exact, _ in log), "an irrational norm"

    return make(
        "local", "clip-rational",
        "Local-only training, clients clip at 2.25 with rational gradient "
        "norms (3-4-5, 5-12-13, 8-15-17 directions), momentum 0.625, weight "
        "decay 0.1875, one optimizer per client kept",
        "Quadratic f_i(v) = 1/2 a_i ||v - c_i||^2 (a = 1.5, 2.25, 0.75; c_i "
        "= 0.5 (3, 4), 0.25 (5, -12), 0.25 (-8, 15)), v_i from 0: every "
        "iterate stays on the line through 0 and c_i, so each gradient norm "
        "is rational and clip_grad_norm_'s coefficient 2.25 / (||d|| + 1e-6) "
        "exact.  opt.clip = norm (on the loss gradient, before the coupled "
        "decay d <- d + 0.1875 v), opt.momentum = 0.625, opt.state = client "
        "(a client's buffer carried to its next round), eta = 0.125; S = "
        "{0, 1}, {1, 2}, {0, 2}.",
        spec, tolerance("at most 3 steps per client update, 3 rounds, "
                        "exact rationals (every clip norm rational)"),
        ["clip-scope", "optimizer-state-lifetime"],
        {"clip-scope": ["clip-after-decay"]},
        [clip_log, every_lifetime_differs])


# ---------------------------------------------------------------- ditto

def ditto_momentum_client():
    algorithm = {"name": "ditto",
                 "hyperparameters": {"eta": 0.0625, "lambda": 0.4375,
                                     "opt.momentum": 0.8125,
                                     "opt.dampening": 0.25},
                 "switches": {"ditto.order": "interleaved_shared_batch",
                              "ditto.prox_ref": "round_start",
                              "opt.state": "client"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    return make(
        "ditto", "momentum-client",
        "Ditto, both solvers on torch.optim.SGD(momentum = 0.8125, dampening = "
        "0.25), two optimizers per client kept across rounds",
        "Ditto (Li et al. 2021, Alg. 1; FedAvg global solver, samples "
        "weights), linear model with bias, squared loss, three clients (n = "
        "3, 4, 5), eta = 0.0625, lambda = 0.4375, interleaved personal and "
        "global steps on the shared batches, proximal reference w^t.  "
        "opt.momentum = 0.8125, opt.dampening = 0.25, opt.state = client: each "
        "client keeps two optimizers (PFLlib clientditto.py's optimizer for "
        "w_k and poptimizer for v_k), each with its own buffer and step "
        "count, across its rounds (S = {0, 1}, {1, 2}, {0, 2}).",
        spec, tolerance(STEPS + ", a personal and a global step per batch"),
        ["optimizer-state-lifetime", "optimizer-slots-shared",
         "momentum-form", "prox-sign", "stale-personal-state"],
        {"momentum-form": ["dampening-first"], "prox-sign": ["prox-plus"],
         "stale-personal-state": ["reset-personal", "personal-from-global"]},
        [every_lifetime_differs])


# ---------------------------------------------------------------- apfl

def apfl_momentum_server():
    algorithm = {"name": "apfl",
                 "hyperparameters": {"eta": 0.0625, "alpha": 0.3125,
                                     "eta_alpha": 0.1875,
                                     "opt.momentum": 0.6875},
                 "switches": {"apfl.alpha": "adaptive",
                              "opt.state": "server"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    return make(
        "apfl", "momentum-server",
        "APFL, w_i's and v_i's optimizers torch.optim.SGD(momentum = 0.6875), "
        "each one object carried from client to client",
        "APFL (Deng et al. 2020, Alg. 1, parameter mixing, adaptive alpha "
        "with eta_alpha = 0.1875), linear model with bias, squared loss, three "
        "clients (n = 3, 4, 5), eta = 0.0625, alpha_0 = 0.3125.  opt.momentum "
        "= 0.6875, opt.state = server: the optimizer of w_i (on grad f_i(w_i)) and "
        "the one of v_i (on alpha_i grad f_i(v_bar)) are two objects (PFLlib "
        "clientapfl.py's optimizer and optimizer_per), each reused for every "
        "client in training order (S = {0, 1}, {1, 2}, {0, 2}).",
        spec, tolerance(STEPS + ", a w, a v and an alpha step per batch"),
        ["optimizer-state-lifetime", "optimizer-slots-shared",
         "apfl-v-scale", "apfl-alpha-update"],
        {"apfl-v-scale": ["v-no-alpha", "v-own-loss"],
         "apfl-alpha-update": ["alpha-sign", "alpha-new-iterates"]},
        [every_lifetime_differs])


def alpha_clear_of_bounds(spec, exp, tol):
    """Every unprojected alpha update at least 1e-6 inside or outside
    [0, 1] (rounding cannot flip a projection), and some of them read a
    clipped step: the clip acts on some steps and not on others."""
    raw = []
    xa.replay(spec, unclipped=raw)
    assert raw and all(abs(x) > Fraction(1, 10**6) and
                       abs(x - 1) > Fraction(1, 10**6) for x in raw), raw
    clip_acts(spec, exp, tol)


def alpha_reads_clipped(spec, exp, tol):
    """The final alphas are where the two readings part: alpha_update on
    the unclipped gradients moves some final alpha_i by more than 1e3
    tolerances (check_mutants shows it moves the trajectory too)."""
    _, _, _, alpha = xa.replay(spec)
    _, _, _, alpha_raw = xa.replay(spec, frozenset({"pfllib-alpha-unclipped"}))
    gap = max(abs(a - b) for a, b in zip(alpha, alpha_raw))
    assert gap > 1e3 * (tol["atol"] + tol["rtol"]), float(gap)


def apfl_pfllib_clip():
    """PFLlib's APFL (preset pfllib) with clip_grad_norm_ before each of
    its two optimizers' step(): alpha_update, run after both steps, reads
    p.grad, the gradients as the clip left them (docs/algorithms/apfl.md,
    PFLlib's APFL with a client optimizer)."""
    c = 1.78125
    algorithm = {"name": "apfl", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.078125, "alpha": 0.3125,
                                     "eta_alpha": 0.40625,
                                     "opt.momentum": 0.5625,
                                     "opt.weight_decay": 0.1875,
                                     "opt.clip_norm": c, "lr.gamma": 0.71875},
                 "switches": {"opt.clip": "norm", "opt.state": "client",
                              "lr.schedule": "exponential"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)
    return make(
        "apfl", "pfllib-clip-momentum-client",
        "APFL as PFLlib runs it (preset pfllib), clip_grad_norm_ at %g before "
        "torch.optim.SGD(momentum = 0.5625, weight_decay = 0.1875) on w_i and "
        "on v_i, kept per client, exponential decay 0.71875: alpha_update "
        "reads the clipped gradients" % c,
        "APFL under the preset pfllib (TsingZ0/PFLlib clientapfl.py: per "
        "batch w_i's step on its own loss, v_i's step on its own loss, then "
        "alpha_update at the new iterates with the gradients p.grad, + 0.02 "
        "alpha, projected; after the client's last batch v_i <- (1 - alpha) "
        "w_i + alpha v_i; n_i weights; lr.count = trainings; alpha's step "
        "eta_alpha = 0.40625 undecayed), linear model with bias, squared "
        "loss, three clients (n = 3, 4, 5), S = {0, 1}, {1, 2}, {0, 2}, eta = "
        "0.078125, alpha_0 = 0.3125.  Each model's optimizer (optimizer, "
        "optimizer_per) is torch.optim.SGD(momentum = 0.5625, weight_decay = "
        "0.1875, coupled) kept per client (opt.state = client, PFLlib builds "
        "both in __init__), with clip_grad_norm_(max_norm = %g) between "
        "backward() and step() (opt.clip = norm; acting on some steps, not "
        "on others).  clip_grad_norm_ rescales p.grad in place, and the "
        "steps' weight decay and momentum are computed out of place, so "
        "alpha_update's p.grad is each model's clipped loss gradient.  "
        "lr.schedule = exponential, lr.gamma = 0.71875 (w_i's and v_i's "
        "step sizes, by each client's own trainings)." % c,
        spec, tolerance(STEPS + ", a w, a v and an alpha step per batch, "
                        "clipping norms at 60 digits", exact=False),
        ["apfl-pfllib-clipped-grad", "apfl-pfllib", "clip-scope",
         "optimizer-state-lifetime", "optimizer-slots-shared",
         "aggregation-weights", "lr-schedule"],
        {"apfl-pfllib-clipped-grad": ["pfllib-alpha-unclipped"],
         "apfl-pfllib": ["pfllib-mixture-v", "pfllib-no-decay",
                         "pfllib-no-overwrite", "pfllib-alpha-old-iterates"],
         "clip-scope": ["clip-per-block", "clip-after-decay"],
         "aggregation-weights": ["uniform-weights"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [every_lifetime_differs, alpha_clear_of_bounds, alpha_reads_clipped])


# ---------------------------------------------------------------- finetune

def finetune_nesterov_server():
    algorithm = {"name": "finetune",
                 "hyperparameters": {"eta": 0.078125, "eta_ft": 0.109375,
                                     "mu_ft": 0.375, "opt.momentum": 0.625},
                 "switches": {"finetune.scope": "personal",
                              "opt.nesterov": "on", "opt.state": "server"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS,
                     split={"personal": ["b"]}, post=POST)
    return make(
        "finetune", "nesterov-server",
        "FedAvg-FT, the training and the fine-tuning on torch.optim.SGD("
        "momentum = 0.625, nesterov = True), two objects carried from client "
        "to client",
        "FedAvg (samples weights, eta = 0.078125) on a linear model with bias, "
        "squared loss, three clients (n = 3, 4, 5), three rounds S = {0, 1}, "
        "{1, 2}, {0, 2}; then every client fine-tunes its bias only "
        "(finetune.scope = personal, split b) with eta_ft = 0.109375 and the "
        "proximal term mu_ft = 0.375 toward w.  opt.momentum = 0.625, "
        "opt.nesterov = on, opt.state = server: ClientUpdate's optimizer and "
        "the fine-tuning's are two objects, each carried from client to "
        "client (the fine-tuning's buffer passes from client 0 to 1 to 2).",
        spec, tolerance(STEPS + ", then 2-3 fine-tuning steps"),
        ["optimizer-state-lifetime", "optimizer-slots-shared",
         "nesterov-momentum", "prox-sign", "finetune-scope"],
        {"nesterov-momentum": ["nesterov-ignored"],
         "prox-sign": ["prox-plus"], "finetune-scope": ["scope-full"]},
        [every_lifetime_differs])


def finetune_decay(name, title, description, hyper, switches, flags,
                   mutants, checks=()):
    """FedAvg-FT on LINEAR with the split personal = b and weight decay
    under one opt.decay_scope; the vector is also shown to differ from the
    runs under the two other scopes of {all, shared, personal} (the split
    read by the decay, the default scope all)."""
    algorithm = {"name": "finetune",
                 "hyperparameters": dict({"eta": 0.078125,
                                          "eta_ft": 0.109375}, **hyper),
                 "switches": switches}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS,
                     split={"personal": ["b"]}, post=POST)

    def other_scopes(spec, exp, tol):
        mine = po.config(spec["algorithm"])["opt.decay_scope"]
        for scope in ("all", "shared", "personal"):
            if scope != mine:
                other = copy.deepcopy(spec)
                other["algorithm"]["switches"]["opt.decay_scope"] = scope
                assert differs(exp, replay_expected(other), tol), scope

    return make(
        "finetune", name, title, description, spec,
        tolerance(STEPS + ", then 2-3 fine-tuning steps"), flags, mutants,
        [other_scopes] + list(checks))


FT_COMMON = ("FedAvg (samples weights, eta = 0.078125) on a linear model with "
             "bias, squared loss, three clients (n = 3, 4, 5), three rounds "
             "S = {0, 1}, {1, 2}, {0, 2}; split personal = b; then every "
             "client fine-tunes (eta_ft = 0.109375, no proximal term).  ")


def finetune_decay_shared_momentum():
    return finetune_decay(
        "decay-shared-momentum",
        "FedAvg-FT with a personal bias, weight decay 0.28125 on the shared "
        "w only, momentum 0.5625 kept per client, full fine-tuning",
        FT_COMMON + "finetune.scope = full (w and b move).  "
        "opt.weight_decay = 0.28125 (coupled) with opt.decay_scope = shared: "
        "w decays in the FedAvg rounds and the fine-tuning, b never; "
        "opt.momentum = 0.5625, opt.state = client: ClientUpdate's optimizer "
        "and the fine-tuning's, each kept per client.",
        {"opt.weight_decay": 0.28125, "opt.momentum": 0.5625},
        {"finetune.scope": "full", "opt.decay_scope": "shared",
         "opt.state": "client"},
        ["weight-decay-scope", "optimizer-state-lifetime",
         "optimizer-slots-shared"],
        {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"]},
        [every_lifetime_differs])


def finetune_decay_personal():
    return finetune_decay(
        "decay-personal",
        "FedAvg-FT with a personal bias, weight decay 0.40625 on the personal "
        "b only, no momentum, fine-tuning of b",
        FT_COMMON + "finetune.scope = personal (b moves, w stays).  "
        "opt.weight_decay = 0.40625 with opt.decay_scope = personal: b decays "
        "in the FedAvg rounds and the fine-tuning, w never; opt.momentum = 0 "
        "(plain SGD steps plus the decay term).",
        {"opt.weight_decay": 0.40625},
        {"finetune.scope": "personal", "opt.decay_scope": "personal"},
        ["weight-decay-scope", "finetune-scope"],
        {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "finetune-scope": ["scope-full"]})


def finetune_decay_all_dampening():
    return finetune_decay(
        "decay-all-dampening",
        "FedAvg-FT with a personal bias, weight decay 0.21875 on every block "
        "(opt.decay_scope left at all), momentum 0.6875 with dampening 0.25, "
        "fine-tuning of b",
        FT_COMMON + "finetune.scope = personal (b moves, w stays).  "
        "opt.weight_decay = 0.21875, opt.decay_scope not set (all: w and b "
        "decay although the spec has a split); opt.momentum = 0.6875, "
        "opt.dampening = 0.25 (b <- d at a block's first step, then "
        "b <- mu b + (1 - tau) d), opt.state = reset (a new optimizer for "
        "every client update and every fine-tuning).",
        {"opt.weight_decay": 0.21875, "opt.momentum": 0.6875,
         "opt.dampening": 0.25},
        {"finetune.scope": "personal"},
        ["momentum-form", "finetune-scope"],
        {"momentum-form": ["dampening-first"],
         "finetune-scope": ["scope-full"]})


# ---------------------------------------------------------------- interp

def interp_adamw_client():
    clients = copy.deepcopy(CLIENTS)
    algorithm = {"name": "interp",
                 "hyperparameters": {"eta": 0.046875, "alpha": 0.3125,
                                     "opt.beta1": 0.75, "opt.beta2": 0.9375,
                                     "opt.eps": 0.001953125,
                                     "opt.weight_decay": 0.15625},
                 "switches": {"interp.alpha": "fixed",
                              "opt.method": "adamw",
                              "opt.state": "client"}}
    spec = base_spec(LINEAR, clients, INIT, algorithm, ROUNDS, post=POST)
    return make(
        "interp", "adamw-client",
        "Interpolation, FedAvg rounds and the local models h_i on "
        "torch.optim.AdamW(betas = (0.75, 0.9375), eps = 2^-9, weight_decay "
        "= 0.15625), one pair of optimizers per client",
        "Interpolation (fixed alpha = 0.3125; Mansour et al. 2020) after three "
        "FedAvg rounds (samples weights, eta = 0.046875, S = {0, 1}, {1, 2}, "
        "{0, 2}) on a linear model with bias, squared loss, three clients "
        "(n = 3, 4, 5); each client's local model h_i trains from w0 on its "
        "post batches.  opt.method = adamw (theta <- theta (1 - eta lam) "
        "before the Adam step), opt.state = client: ClientUpdate's "
        "optimizer kept per client across rounds (step counts continue), "
        "h_i's a second object.",
        spec, tolerance(STEPS + ", then 2-3 local steps for h_i",
                        exact=False),
        ["optimizer-state-lifetime", "optimizer-slots-shared",
         "weight-decay-form", "adam-bias-correction"],
        {"weight-decay-form": ["decay-form-swap"],
         "adam-bias-correction": ["adam-no-bias-correction",
                                  "adam-eps-inside"]},
        [every_lifetime_differs])


# ---------------------------------------------------------------- fedalt, fedsim

# FedAlt: tau_v = 1 step on the personal bias, then the shared weights on
# the remaining 2 or 3 batches (tau_u != tau_v)
PFL_ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 1], [2], [1, 2]],
                                    [[0, 1], [2, 3], [1], [3, 0]]]},
    {"clients": [1, 2], "batches": [[[3, 2], [0], [1, 3]],
                                    [[0, 1], [2, 3], [4]]]},
    {"clients": [0, 2], "batches": [[[2, 0], [1], [0]],
                                    [[4, 2], [1, 3], [0, 4]]]},
]


def fedalt_decay_shared_client():
    algorithm = {"name": "fedalt",
                 "hyperparameters": {"gamma_u": 0.0625, "gamma_v": 0.109375,
                                     "eta_ft": 0.078125, "tau_v": 1,
                                     "opt.momentum": 0.75,
                                     "opt.weight_decay": 0.3125},
                 "switches": {"pfl.finetune": "full",
                              "opt.decay_scope": "shared",
                              "opt.state": "client"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, PFL_ROUNDS,
                     split={"personal": ["b"]}, post=POST)
    return make(
        "fedalt", "decay-shared-client",
        "FedAlt with a personal bias, weight decay 0.3125 on the shared "
        "weights only, momentum 0.75, two optimizers per client kept",
        "FedAlt (Pillutla et al. 2022, Alg. 4; tau_v = 1 step on v, then "
        "the body, gamma_u = 0.0625, gamma_v = 0.109375) on a linear model "
        "(d = 2, squared loss, n = 3, 4, 5), split personal = b (u = w, v_i "
        "= b); three rounds S = {0, 1}, {1, 2}, {0, 2}; "
        "then full fine-tuning (eta_ft = 0.078125).  opt.weight_decay = 0.3125 "
        "with opt.decay_scope = shared: w decays, b does not; "
        "opt.momentum = 0.75; opt.state = client: the body's optimizer and "
        "the personal one (PFLlib clientrep.py's optimizer, optimizer_per) "
        "kept per client; the fine-tuning continues the personal one, whose "
        "state for w starts there.",
        spec, tolerance("at most 4 local steps per client update, 3 rounds, "
                        "2 fine-tuning steps"),
        ["weight-decay-scope", "optimizer-state-lifetime",
         "optimizer-slots-shared", "pfl-update-order", "finetune-scope"],
        {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
         "finetune-scope": ["scope-flip"]},
        [every_lifetime_differs])


def fedalt_decay_personal_server():
    algorithm = {"name": "fedalt",
                 "hyperparameters": {"gamma_u": 0.0703125, "gamma_v": 0.125,
                                     "eta_ft": 0.09375, "tau_v": 1,
                                     "opt.momentum": 0.5625,
                                     "opt.weight_decay": 0.40625},
                 "switches": {"pfl.finetune": "full",
                              "opt.decay_scope": "personal",
                              "opt.weight_decay_form": "decoupled",
                              "opt.state": "server"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, PFL_ROUNDS,
                     split={"personal": ["b"]}, post=POST)
    return make(
        "fedalt", "decay-personal-server",
        "FedAlt with a personal bias, decoupled weight decay 0.40625 on the "
        "personal block only, momentum 0.5625, optimizers carried from "
        "client to client",
        "FedAlt (tau_v = 1, gamma_u = 0.0703125, gamma_v = 0.125) on a linear "
        "model (d = 2, squared loss, n = 3, 4, 5), split personal = b; "
        "three rounds S = {0, 1}, {1, 2}, {0, 2}; full fine-tuning (eta_ft "
        "= 0.09375).  opt.weight_decay = 0.40625, opt.weight_decay_form = "
        "decoupled (theta <- theta (1 - eta lam) before the step), "
        "opt.decay_scope = personal: b decays, w does not; "
        "opt.momentum = 0.5625; opt.state = server: the body's and the "
        "personal optimizer each one object for every client.",
        spec, tolerance("at most 4 local steps per client update, 3 rounds, "
                        "2 fine-tuning steps"),
        ["weight-decay-scope", "weight-decay-form",
         "optimizer-state-lifetime", "optimizer-slots-shared"],
        {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "weight-decay-form": ["decay-form-swap"]},
        [every_lifetime_differs])


def fedsim_decay_weights_groups():
    algorithm = {"name": "fedsim",
                 "hyperparameters": {"gamma_u": 0.0625, "gamma_v": 0.1171875,
                                     "eta_ft": 0.09375, "opt.momentum": 0.6875,
                                     "opt.weight_decay": 0.34375},
                 "switches": {"opt.decay_scope": "weights",
                              "opt.state": "client"}}
    spec = base_spec(LINEAR, CLIENTS, INIT, algorithm, PFL_ROUNDS,
                     split={"personal": ["b"]}, post=POST)
    return make(
        "fedsim", "decay-weights-groups",
        "FedSim with a personal bias, one optimizer with two parameter groups "
        "(gamma_u, gamma_v), weight decay 0.34375 on w (the bias "
        "excluded), momentum 0.6875, kept per client",
        "FedSim (Pillutla et al. 2022, Alg. 5: u and v stepped together, "
        "gamma_u = 0.0625 on w, gamma_v = 0.1171875 on b, one torch "
        "optimizer with two parameter groups) on a linear model (d = 2, "
        "squared loss, n = 3, 4, 5), split personal = b; three rounds "
        "S = {0, 1}, {1, 2}, {0, 2}; then the bias fine-tuned (eta_ft = "
        "0.09375).  opt.weight_decay = 0.34375 with opt.decay_scope = weights "
        "(the no-decay group: b), opt.momentum = 0.6875, opt.state = "
        "client.",
        spec, tolerance("at most 4 local steps per client update, 3 rounds, "
                        "2 fine-tuning steps"),
        ["weight-decay-scope", "optimizer-state-lifetime"],
        {"weight-decay-scope": ["decay-scope-all"]},
        [every_lifetime_differs])


# ---------------------------------------------------------------- cfl, ifca, fedfomo, pfedhn

def from_frozen(alg, rel, name, title, description, opt_hyper, opt_switches,
                tol, flags, mutants):
    spec = copy.deepcopy(frozen_spec(rel))
    spec["algorithm"].setdefault("hyperparameters", {}).update(opt_hyper)
    spec["algorithm"].setdefault("switches", {}).update(opt_switches)
    return make(alg, name, title, description + " (The problem, init and "
                "schedule of golden/%s.)" % rel, spec, tol, flags, mutants,
                [every_lifetime_differs])


def cfl_momentum_client():
    return from_frozen(
        "cfl", "cfl/worked-linear-minibatch.json", "momentum-client",
        "CFL, clients on torch.optim.SGD(momentum = 0.65625), one optimizer "
        "per client kept across rounds",
        "CFL (Sattler et al. 2020, Alg. 5 with Alg. 1) on a linear model "
        "with minibatches, every client in both rounds; opt.momentum = "
        "0.65625, opt.state = client: a client's buffer carries into its next "
        "round's local SGD, so the updates (and the split decision's inputs) "
        "differ from a new optimizer per round.",
        {"opt.momentum": 0.65625}, {"opt.state": "client"},
        tolerance("2 local steps per client and round, 2 rounds", atol=1e-14,
                  rtol=1e-13),
        ["optimizer-state-lifetime"], {})


def ifca_momentum_client():
    return from_frozen(
        "ifca", "ifca/worked-given-models-linear.json", "momentum-client",
        "IFCA (model averaging), LocalUpdate on torch.optim.SGD(momentum = "
        "0.59375, dampening = 0.1875), one optimizer per client kept",
        "IFCA (Ghosh et al. 2020, Alg. 1, ifca.mode = model) with given "
        "cluster models on a linear model, every client in both rounds; "
        "opt.momentum = 0.59375, opt.dampening = 0.1875, opt.state = client.",
        {"opt.momentum": 0.59375, "opt.dampening": 0.1875}, {"opt.state": "client"},
        tolerance("2 local steps per client and round, 2 rounds", atol=1e-14,
                  rtol=1e-13),
        ["optimizer-state-lifetime", "momentum-form"],
        {"momentum-form": ["dampening-first"]})


def fedfomo_momentum_client():
    return from_frozen(
        "fedfomo", "fedfomo/worked-linear-val.json", "momentum-client",
        "FedFomo, the local SGD on torch.optim.SGD(momentum = 0.53125), one "
        "optimizer per client kept across rounds",
        "FedFomo (Zhang et al. 2021, Alg. 1) on a linear model with "
        "validation sets, partial participation in round 1; opt.momentum = "
        "0.53125, opt.state = client.",
        {"opt.momentum": 0.53125}, {"opt.state": "client"},
        tolerance("at most 2 local steps per client and round, 3 rounds",
                  atol=1e-13, rtol=1e-12),
        ["optimizer-state-lifetime"], {})


def pfedhn_momentum_client():
    return from_frozen(
        "pfedhn", "pfedhn/worked-linear-bias.json", "momentum-client",
        "pFedHN, the local steps on torch.optim.SGD(momentum = 0.71875) through "
        "opt.*, one optimizer per client kept across its rounds",
        "pFedHN (Shamsian et al. 2021, Alg. 1, linear hypernetwork with "
        "bias) on a linear model, one client per round, clients 0 and 2 "
        "sampled twice; opt.momentum = 0.71875, opt.state = client: a client's "
        "buffer from its earlier round carries into l. 6-8's steps.",
        {"opt.momentum": 0.71875}, {"opt.state": "client"},
        tolerance("at most 3 local steps per round, 5 rounds", atol=1e-13,
                  rtol=1e-12),
        ["optimizer-state-lifetime"], {})


# ---------------------------------------------------------------- ditto, apfl: every optimizer switch

# Each algorithm's base run (the problem, init and schedule of
# ditto/momentum-client and apfl/momentum-server) with the optimizer
# switches no other vector of it runs: one SGD vector (Nesterov, decoupled
# decay on the weights only, clipping that acts on some steps and not on
# others, one state carried from client to client, a step decay firing at
# round 2), one AdamW vector kept per client under an exponential decay,
# one classical-momentum vector kept per client under an exponential decay
# (where the two momentum forms differ).
SWITCH_BASE = {
    "ditto": ({"eta": 0.0625, "lambda": 0.4375},
              {"ditto.order": "interleaved_shared_batch",
               "ditto.prox_ref": "round_start"},
              "Ditto (Li et al. 2021, Alg. 1; FedAvg global solver, samples "
              "weights), eta = 0.0625, lambda = 0.4375, interleaved personal "
              "and global steps on the shared batches, proximal reference w^t; "
              "two optimizers per client (PFLlib clientditto.py's optimizer for "
              "w_k, poptimizer for v_k)",
              ["prox-sign"], {"prox-sign": ["prox-plus"]}),
    "apfl": ({"eta": 0.0625, "alpha": 0.3125, "eta_alpha": 0.1875},
             {"apfl.alpha": "adaptive"},
             "APFL (Deng et al. 2020, Alg. 1, parameter mixing, adaptive alpha "
             "with eta_alpha = 0.1875), eta = 0.0625, alpha_0 = 0.3125; two "
             "optimizers per client (PFLlib clientapfl.py's optimizer for w_i, "
             "optimizer_per for v_i)",
             ["apfl-v-scale"], {"apfl-v-scale": ["v-no-alpha", "v-own-loss"]}),
    "fedalt": ({"gamma_u": 0.0625, "gamma_v": 0.109375, "eta_ft": 0.078125,
                "tau_v": 1}, {"pfl.finetune": "full"},
               "FedAlt (Pillutla et al. 2022, Alg. 4; tau_v = 1 step on v, then "
               "the body, gamma_u = 0.0625, gamma_v = 0.109375), split personal "
               "= b (u = w, v_i = b), then full fine-tuning (eta_ft = 0.078125); "
               "two optimizers per client (PFLlib clientrep.py's optimizer and "
               "optimizer_per, the fine-tuning continuing the personal one)",
               ["pfl-update-order"],
               {"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"]}),
    "fedsim": ({"gamma_u": 0.0625, "gamma_v": 0.1171875, "eta_ft": 0.09375}, {},
               "FedSim (Pillutla et al. 2022, Alg. 5: u and v stepped together, "
               "gamma_u = 0.0625 on w, gamma_v = 0.1171875 on b, one torch "
               "optimizer with two parameter groups), split personal = b, then "
               "the bias fine-tuned (eta_ft = 0.09375)", [], {}),
}
# the split runs (FedAlt, FedSim): their rounds of up to 4 steps, a
# personal bias, a fine-tuning phase
SPLIT_RUNS = ("fedalt", "fedsim")
CLIP = {"ditto": 1.625, "apfl": 0.8125, "fedalt": 1.0625, "fedsim": 1.0625}
TITLE = {"ditto": "Ditto", "apfl": "APFL", "fedalt": "FedAlt", "fedsim": "FedSim"}
# per algorithm and vector, the switches the vector adds where the
# algorithm has a split (weight decay on one side of it)
SCOPE = {("fedsim", "adamw"): "shared", ("fedsim", "classical"): "personal"}


def clip_decisions(replay, spec):
    """replay(spec)'s clip log (pflref_exact_optim.CLIP_LOG): one entry per
    clipped step, its last item the factor c / ‖d‖ (< 1 where it acted)."""
    log = []
    po.CLIP_LOG = log
    try:
        replay(spec)
    finally:
        po.CLIP_LOG = None
    return log


def clip_acts(spec, exp, tol):
    """The clip acts on some steps and not on others, never within 1e-6 of
    its threshold (pflref_exact_optim asserts that); the replay's clip
    log."""
    log = clip_decisions(replay_expected, spec)
    clipped = [coef < 1 for _, _, coef in log]
    assert any(clipped) and not all(clipped), clipped
    return log


def switches_spec(alg, hyper, switches):
    hp, sw, _, _, _ = SWITCH_BASE[alg]
    algorithm = {"name": alg, "hyperparameters": dict(hp, **hyper),
                 "switches": dict(sw, **switches)}
    if alg in SPLIT_RUNS:
        return base_spec(LINEAR, CLIENTS, INIT, algorithm, PFL_ROUNDS,
                         split={"personal": ["b"]}, post=POST)
    return base_spec(LINEAR, CLIENTS, INIT, algorithm, ROUNDS)


def switches_vector(alg, name, title, what, hyper, switches, tol, flags,
                    mutants, checks=()):
    _, _, text, own_flags, own_mutants = SWITCH_BASE[alg]
    spec = switches_spec(alg, hyper, switches)
    if alg == "fedsim":             # one optimizer slot in the rounds
        flags = [f for f in flags if f != "optimizer-slots-shared"]
    return make(
        alg, name, title,
        text + ".  Linear model with bias, squared loss, three clients (n = "
        "3, 4, 5), S = {0, 1}, {1, 2}, {0, 2}.  " + what, spec, tol,
        flags + own_flags, dict(mutants, **own_mutants),
        [every_lifetime_differs] + list(checks))


def _steps(alg):
    if alg in SPLIT_RUNS:
        return "at most 4 local steps per client update, 3 rounds, 2 fine-tuning steps"
    return STEPS


def _scope(alg, kind, hyper, switches, what, flags, mutants):
    """The split's weight decay SCOPE adds to a vector (FedSim's)."""
    scope = SCOPE.get((alg, kind))
    if scope is None:
        return ""
    if "opt.weight_decay" not in hyper:
        hyper["opt.weight_decay"] = 0.25
        what = "opt.weight_decay = 0.25 (coupled), "
    switches["opt.decay_scope"] = scope
    flags.append("weight-decay-scope")
    mutants["weight-decay-scope"] = ["decay-scope-all", "decay-scope-flip"]
    return "  %sopt.decay_scope = %s: %s decays, %s does not." % (
        what, scope, *(("w", "b") if scope == "shared" else ("b", "w")))


def _scope_title(alg, kind):
    scope = SCOPE.get((alg, kind))
    return ", weight decay on the %s block only" % scope if scope else ""


def sgd_switches(alg):
    c = CLIP[alg]
    return switches_vector(
        alg, "nesterov-clip-step-server",
        "%s, torch.optim.SGD(momentum = 0.71875, nesterov = True, weight_decay "
        "= 0.15625 decoupled, on the weights only), clip_grad_norm_ at %g, one "
        "object per solver carried from client to client, step decay 0.5625 "
        "every 2 rounds" % (TITLE[alg], c),
        "opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
        "0.15625 with opt.weight_decay_form = decoupled (theta <- theta (1 - "
        "eta lambda) before the step) and opt.decay_scope = weights (the bias "
        "b undecayed), opt.clip = norm at c = %g (acting on some steps, not "
        "on others), opt.state = server (each solver's optimizer reused for "
        "every client in training order), lr.schedule = step with lr.gamma = "
        "0.5625 and lr.step_rounds = 2 (round 2's step sizes times 0.5625)."
        % c,
        {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
         "opt.clip_norm": c, "lr.gamma": 0.5625, "lr.step_rounds": 2},
        {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
         "opt.decay_scope": "weights", "opt.clip": "norm",
         "opt.state": "server", "lr.schedule": "step"},
        tolerance(_steps(alg) + ", clipping norms at 60 digits", exact=False),
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "optimizer-state-lifetime", "optimizer-slots-shared",
         "lr-schedule"],
        NESTEROV_CLIP_STEP_MUTANTS,
        [clip_acts])


# AdamW's weight decay: 0.09375, but FedSim's eta_ft is 0.09375 (a λ read
# for eta_ft would be invisible there)
ADAMW_DECAY = {"fedsim": 0.109375}


def adamw_switches(alg):
    lam = ADAMW_DECAY.get(alg, 0.09375)
    hyper = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125,
             "opt.weight_decay": lam, "lr.gamma": 0.6875}
    switches = {"opt.method": "adamw", "opt.state": "client",
                "lr.schedule": "exponential"}
    flags = ["weight-decay-form", "adam-bias-correction", "optimizer-state-lifetime",
             "optimizer-slots-shared", "lr-schedule"]
    mutants = {"weight-decay-form": ["decay-form-swap"],
               "adam-bias-correction": ["adam-no-bias-correction"],
               "lr-schedule": ["lr-ignored", "lr-shifted"]}
    more = _scope(alg, "adamw", hyper, switches, "", flags, mutants)
    return switches_vector(
        alg, "adamw-client-decay",
        "%s, torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, "
        "weight_decay = %g), one per solver and client kept across "
        "rounds, exponential decay 0.6875%s" % (TITLE[alg], lam,
                                                _scope_title(alg, "adamw")),
        "opt.method = adamw, opt.beta1 = 0.75, opt.beta2 = 0.96875, opt.eps = "
        "0.001953125, opt.weight_decay = %g, opt.state = client (a " % lam +
        "client's moments and step counts carried into its next round), "
        "lr.schedule = exponential with lr.gamma = 0.6875." + more,
        hyper, switches,
        tolerance(_steps(alg) + ", Adam's square roots", exact=False),
        flags, mutants)


def classical_switches(alg):
    hyper = {"opt.momentum": 0.59375, "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "lr.schedule": "exponential"}
    flags = ["momentum-form", "optimizer-state-lifetime", "optimizer-slots-shared",
             "lr-schedule"]
    mutants = {"momentum-form": ["momentum-form-swap"],
               "lr-schedule": ["lr-ignored", "lr-shifted"]}
    more = _scope(alg, "classical", hyper, switches, "", flags, mutants)
    return switches_vector(
        alg, "classical-client-decay",
        "%s, classical momentum v <- 0.59375 v - eta d, one per solver and "
        "client kept across rounds, exponential decay 0.78125%s"
        % (TITLE[alg], _scope_title(alg, "classical")),
        "opt.momentum = 0.59375, opt.momentum_form = classical (eta inside the "
        "velocity: unlike torch's form once eta decays), opt.state = client, "
        "lr.schedule = exponential with lr.gamma = 0.78125." + more,
        hyper, switches, tolerance(_steps(alg)), flags, mutants)


# ---------------------------------------------------------------- fedfomo, cfl, ifca, pfedhn: every optimizer switch

# The frozen vectors of *_momentum_client below, with the optimizer switches
# no other vector of these algorithms runs.  Here only FedFomo's vectors
# decay the step (lr.*); pFedHN's exact replay runs a constant step, and
# CFL's and IFCA's lr.* vectors, the classical momentum form's under a
# decaying step and their decay scopes are make_shared_pb.py's (the
# batch-norm MLP).  CFL's and IFCA's linear models have no bias: their
# decay here stays on every block.
FROZEN_SWITCHES = {
    # alg: (frozen vector, its description, lr.* followed, a bias, clip c)
    "fedfomo": ("fedfomo/worked-linear-val.json",
                "FedFomo (Zhang et al. 2021, Alg. 1) on a linear model with "
                "validation sets, partial participation in round 1",
                True, True, 1.125),
    "cfl": ("cfl/worked-linear-minibatch.json",
            "CFL (Sattler et al. 2020, Alg. 5 with Alg. 1) on a linear model "
            "with minibatches, every client in both rounds", False, False, 1.875),
    "ifca": ("ifca/worked-given-models-linear.json",
             "IFCA (Ghosh et al. 2020, Alg. 1, ifca.mode = model) with given "
             "cluster models on a linear model, every client in both rounds",
             False, False, 1.0625),
    "pfedhn": ("pfedhn/worked-linear-bias.json",
               "pFedHN (Shamsian et al. 2021, Alg. 1, linear hypernetwork with "
               "bias) on a linear model, one client per round", False, True, 0.9375),
}


def frozen_switches(alg, kind):
    rel, text, lr, bias, c = FROZEN_SWITCHES[alg]
    name = {"sgd": "nesterov-clip-server", "adamw": "adamw-client",
            "classical": "classical-client-decay"}[kind]
    if lr and kind != "classical":
        name += "-step" if kind == "sgd" else "-decay"
    if kind == "sgd":
        hyper = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
                 "opt.clip_norm": c}
        switches = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                    "opt.clip": "norm", "opt.state": "server"}
        flags = ["nesterov-momentum", "weight-decay-form", "clip-scope",
                 "optimizer-state-lifetime"]
        mutants = {"nesterov-momentum": ["nesterov-ignored"],
                   "weight-decay-form": ["decay-form-swap"],
                   # no λθ in d under the decoupled decay: clip-after-decay
                   # is no bug here
                   "clip-scope": ["clip-per-block"]}
        title = ("torch.optim.SGD(momentum = 0.71875, nesterov = True, "
                 "weight_decay = 0.15625 decoupled%s), clip_grad_norm_ at %g, one "
                 "object carried from client to client"
                 % (", on the weights only" if bias else "", c))
        what = ("opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
                "0.15625 with opt.weight_decay_form = decoupled%s, opt.clip = "
                "norm at c = %g (acting on some steps, not on others), "
                "opt.state = server (one optimizer for every client in "
                "training order)" % (" and opt.decay_scope = weights (the bias "
                                     "undecayed)" if bias else "", c))
        checks = [clip_acts]
        if not bias:                # one block: clipped per block or whole alike
            flags.remove("clip-scope")
            del mutants["clip-scope"]
        if bias:
            switches["opt.decay_scope"] = "weights"
            flags.append("weight-decay-scope")
            mutants["weight-decay-scope"] = ["decay-scope-all"]
        if lr:
            hyper.update({"lr.gamma": 0.5625, "lr.step_rounds": 2})
            switches["lr.schedule"] = "step"
            title += ", step decay 0.5625 every 2 rounds"
            what += (", lr.schedule = step with lr.gamma = 0.5625 and "
                     "lr.step_rounds = 2")
        tol = tolerance("a few local steps per client and round, clipping "
                        "norms at 60 digits", exact=False, atol=1e-13, rtol=1e-12)
    elif kind == "adamw":
        hyper = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125,
                 "opt.weight_decay": 0.09375}
        switches = {"opt.method": "adamw", "opt.state": "client"}
        flags = ["weight-decay-form", "adam-bias-correction",
                 "optimizer-state-lifetime"]
        mutants = {"weight-decay-form": ["decay-form-swap"],
                   "adam-bias-correction": ["adam-no-bias-correction"]}
        title = ("torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, "
                 "weight_decay = 0.09375), one per client kept across rounds")
        what = ("opt.method = adamw, opt.beta1 = 0.75, opt.beta2 = 0.96875, "
                "opt.eps = 0.001953125, opt.weight_decay = 0.09375, opt.state = "
                "client")
        checks = []
        if lr:
            hyper["lr.gamma"] = 0.6875
            switches["lr.schedule"] = "exponential"
            title += ", exponential decay 0.6875"
            what += ", lr.schedule = exponential with lr.gamma = 0.6875"
        tol = tolerance("a few local steps per client and round, Adam's "
                        "square roots", exact=False, atol=1e-13, rtol=1e-12)
    else:
        hyper = {"opt.momentum": 0.59375, "lr.gamma": 0.78125}
        switches = {"opt.momentum_form": "classical", "opt.state": "client",
                    "lr.schedule": "exponential"}
        flags = ["momentum-form", "optimizer-state-lifetime"]
        mutants = {"momentum-form": ["momentum-form-swap"]}
        title = ("classical momentum v <- 0.59375 v - eta d, one per client kept "
                 "across rounds, exponential decay 0.78125")
        what = ("opt.momentum = 0.59375, opt.momentum_form = classical (eta "
                "inside the velocity: unlike torch's form once eta decays), "
                "opt.state = client, lr.schedule = exponential with lr.gamma = "
                "0.78125")
        checks = []
        tol = tolerance("a few local steps per client and round", atol=1e-13,
                        rtol=1e-12)
    if lr:
        flags.append("lr-schedule")
        mutants["lr-schedule"] = ["lr-ignored", "lr-shifted"]
    spec = copy.deepcopy(frozen_spec(rel))
    spec["algorithm"].setdefault("hyperparameters", {}).update(hyper)
    spec["algorithm"].setdefault("switches", {}).update(switches)
    return make(alg, name, "%s, %s" % ({"fedfomo": "FedFomo", "cfl": "CFL",
                                         "ifca": "IFCA", "pfedhn": "pFedHN"}[alg],
                                        title),
                text + "; " + what + ".  (The problem, init and schedule of "
                "golden/%s.)" % rel, spec, tol, flags, mutants,
                [every_lifetime_differs] + checks)


def _bind(f, alg):
    g = lambda: f(alg)             # noqa: E731
    g.__name__ = "%s_%s" % (f.__name__, alg)
    return g


SWITCH_MAKERS = tuple(_bind(f, alg) for alg in ("ditto", "apfl", "fedalt", "fedsim")
                      for f in (sgd_switches, adamw_switches, classical_switches))


def _frozen(alg, kind):
    g = lambda: frozen_switches(alg, kind)     # noqa: E731
    g.__name__ = "frozen_switches_%s_%s" % (alg, kind)
    return g


SWITCH_MAKERS += tuple(_frozen(alg, kind) for alg in FROZEN_SWITCHES
                       for kind in ("sgd", "adamw")
                       + (("classical",) if FROZEN_SWITCHES[alg][2] else ()))


MAKERS = (clip_rational, ditto_momentum_client, apfl_momentum_server,
          apfl_pfllib_clip,
          finetune_nesterov_server, finetune_decay_shared_momentum,
          finetune_decay_personal, finetune_decay_all_dampening,
          interp_adamw_client,
          fedalt_decay_shared_client, fedalt_decay_personal_server,
          fedsim_decay_weights_groups, cfl_momentum_client,
          ifca_momentum_client, fedfomo_momentum_client,
          pfedhn_momentum_client) + SWITCH_MAKERS


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
