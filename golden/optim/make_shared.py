#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Client-optimizer golden vectors of FedProx, SCAFFOLD, FedDyn, FedBN and
FedPAC: the shared switch values (opt.*, lr.*, bn.*) that no vector of
these algorithms ran coincidence-free before (golden/coincidences.py,
_NOT_YET), several values per vector.

Each spec is run, as written, through its algorithm's exact replay
(pflref_exact_fedprox.py, pflref_exact_scaffold.py, pflref_exact_feddyn.py,
pflref_exact_fedbn.py, pflref_exact_fedpac.py), whose local steps go
through golden/pflref_exact_optim.py's optimizer (docs/optimizers.md: the
rules, "Where the state lives"; the split's blocks for opt.decay_scope =
shared / personal): exact fractions, square roots (the clip norm, Adam) at
60 decimal digits.  The generator asserts, per vector, what makes it able
to fail: each flagged bug moves a value far outside the tolerance
(check_mutants), every other opt.state lifetime gives other numbers, the
clip acts on some steps and not on others, and the decay scope's blocks
are read (the flipped scope gives other numbers).

The problem: golden/optim/make_algorithms.py's linear model with a bias
(squared loss, three clients of 3, 4 and 5 samples with dyadic inputs,
w0 = (0.125, -0.375, 0.1875)) and its three rounds S = {0, 1}, {1, 2},
{0, 2}; FedProx with fedprox.sampling = paper adds draws.

Vectors (ids optim/<algorithm>/<name>; file <algorithm>-<name>.json), for
fedprox, scaffold and feddyn each:
  nesterov-clip-step-server  SGD with Nesterov momentum, decoupled weight
                     decay on the weights only (not the bias), a clip that
                     acts on some steps, one optimizer carried from client
                     to client, step decay firing at round 2
  adamw-shared-client-decay  AdamW kept per client, weight decay on the
                     split's shared block w only (b personal), exponential
                     decay
  classical-personal-client  classical momentum kept per client, coupled
                     weight decay on the split's personal block b only,
                     exponential decay (the two momentum forms differ)
and for fedbn, on the mlp with batch normalisation of
fedbn/worked-momentum-client (its two rounds and a third):
  nesterov-clip-step-server-frozen  the first's switches (the decay on W1,
                     W2 only: not the biases, not gamma, beta) with
                     bn.running = frozen
  adamw-shared-client-decay-biased  AdamW kept per client, its decay on
                     the shared blocks only (split personal W2, b2),
                     exponential decay, bn.running_var = biased
  adam-personal-server  Adam carried from client to client, coupled
                     decay on the personal blocks W2, b2 only
  classical-weights-client  classical momentum kept per client, coupled
                     decay on W1, W2 only, exponential decay
and for fedpac, on the layer list of fedpac/layers-momentum-client (its
two optimizers, the classifier's and the feature extractor's):
  nesterov-clip-step-server  the first vector's switches
and for fedprox, scaffold and feddyn each, on the batch-norm layer list of
layers/fedprox-bn1d-mlp-pfllib-keep (its clients, init and three rounds;
FedProx with draws):
  adam-client-bn-frozen  Adam kept per client, coupled weight decay,
                     bn.running = frozen
  adam-server-bn-biased  Adam carried from client to client, exponential
                     decay, bn.running_var = biased
and for moon, on the batch-norm layer list of moon/layers-bn-paper (fc1's
bias left out) through pflref_exact_moon.py's optimizer path:
  nesterov-clip-step-server-bn-frozen  the first vector's switches,
                     bn.running = frozen
  adamw-shared-client-trainings-bn-biased  AdamW kept per party, decay
                     on the shared blocks (split personal out), exponential
                     decay by the party's own trainings, bn.running_var =
                     biased
  classical-personal-client  classical momentum kept per party, coupled
                     decay on the personal out only, exponential decay
and on the mlp of moon/mlp-paper:
  adam-decay         Adam, a new one per local training, coupled decay

    /usr/bin/python3 golden/optim/make_shared.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import make_algorithms as ma             # noqa: E402
import pflref_exact_fedbn as xbn         # noqa: E402
import pflref_exact_feddyn as xfd        # noqa: E402
import pflref_exact_fedpac as xpc        # noqa: E402
import pflref_exact_fedprox as xfp       # noqa: E402
import pflref_exact_moon as xmo          # noqa: E402
import pflref_exact_optim as po          # noqa: E402
import pflref_exact_scaffold as xsc      # noqa: E402
import pflref_golden as pg               # noqa: E402

GENERATOR = ("golden/optim/make_shared.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (exact fractions; decimal "
             "square roots at 60 digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_, per-group weight "
          "decay; docs/optimizers.md; FedProx (Li et al., MLSys 2020, Alg. 2) "
          "and SCAFFOLD (Karimireddy et al., ICML 2020, Alg. 1, option II) "
          "as in their own vectors")
REPLAYS = {"fedprox": xfp, "scaffold": xsc, "feddyn": xfd, "fedbn": xbn,
           "fedpac": xpc, "moon": xmo}
TITLE = {"fedprox": "FedProx (Li et al. 2020, Alg. 2, paper sampling)",
         "scaffold": "SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II)",
         "feddyn": "FedDyn (Acar et al. 2021, Alg. 1)",
         "fedbn": "FedBN (Li et al. 2021, Alg. 1)",
         "fedpac": "FedPAC (Xu, Tong, Huang, ICLR 2023, Alg. 1)",
         "moon": "MOON (Li, He, Song, CVPR 2021, Alg. 1)"}
# the algorithms' own constants: every optimizer and schedule constant of
# the vectors differs from them and from 1 minus each step size
HYPER = {"fedprox": {"eta": 0.1875, "fedprox.mu": 0.3125},
         "scaffold": {"eta": 0.140625, "scaffold.eta_g": 1.25},
         "feddyn": {"eta": 0.109375, "feddyn.alpha": 0.34375},
         "fedbn": {"eta": 0.34375},
         "fedpac": {"eta": 0.34375, "fedpac.eta_phi": 0.40625,
                    "fedpac.lambda": 0.6, "fedpac.tau_phi": 2},
         "moon": {"eta": 0.2, "moon.mu": 1.3, "moon.tau": 0.6}}
# FedProx's paper sampling: K = 3 draws per round over S_t (a device drawn
# twice weighs 2/3)
DRAWS = [[1, 0, 1], [2, 2, 1], [0, 2, 0]]
# candidate clip thresholds, the first acting on some steps and not on
# all taken (clip_acts)
CLIPS = (0.875, 1.125, 0.6875, 1.375, 0.5625, 1.625, 0.4375)
SPLIT = {"personal": ["b"]}


def replay_expected(spec, bugs=frozenset()):
    alg = spec["algorithm"]["name"]
    trace, w, v, _ = REPLAYS[alg].replay(spec, frozenset(bugs))
    return pg.expected(trace, w=w, v=v)


def clip_log(spec):
    """Per clipped step of spec's replay: whether the clip acted."""
    return [coef < 1 for _, _, coef in ma.clip_decisions(replay_expected,
                                                          spec)]


def clip_acts(spec, exp, tol):
    clipped = clip_log(spec)
    assert any(clipped) and not all(clipped), clipped


def every_lifetime_differs(spec, exp, tol):
    for life in ("reset", "client", "server"):
        other = copy.deepcopy(spec)
        other["algorithm"]["switches"]["opt.state"] = life
        if life != po.config(spec["algorithm"])["opt.state"]:
            assert ma.differs(exp, replay_expected(other), tol), life


def scope_read(spec, exp, tol):
    """The decay scope's blocks matter: every other scope differs."""
    mine = spec["algorithm"]["switches"]["opt.decay_scope"]
    for scope in ("all", "weights", "shared", "personal"):
        if scope == mine or (mine == "shared" and scope == "weights"):
            continue        # the split's shared block is the weights here
        other = copy.deepcopy(spec)
        other["algorithm"]["switches"]["opt.decay_scope"] = scope
        assert ma.differs(exp, replay_expected(other), tol), scope


def base(alg, hyper, switches, split=None, frozen=None):
    algorithm = {"name": alg, "hyperparameters": dict(HYPER[alg], **hyper),
                 "switches": dict(switches)}
    if alg == "fedbn":
        return fedbn_base(algorithm, split)
    if alg in ("fedpac", "moon"):
        spec = copy.deepcopy(ma.frozen_spec(
            FEDPAC_FROZEN if alg == "fedpac" else frozen or MOON_FROZEN))
        spec["algorithm"] = algorithm
        if split is not None:
            spec["split"] = split
        if alg == "moon" and frozen is None:
            # fc1 without its bias: before the batch norm its gradient is
            # zero, which the binary computations return as rounding noise
            # (an Adam step would normalise it)
            assert spec["model"]["layers"][0]["name"] == "fc1"
            spec["model"]["layers"][0]["bias"] = False
            w = spec["init"]["w"]
            spec["init"]["w"] = w[:6] + w[9:]
        return spec
    rounds = copy.deepcopy(ma.ROUNDS)
    if alg == "fedprox":
        for r, d in zip(rounds, DRAWS):
            r["draws"] = d
    return ma.base_spec(ma.LINEAR, ma.CLIENTS, ma.INIT, algorithm, rounds,
                        split=split)


# FedBN: the mlp with batch normalisation of fedbn/worked-momentum-client
# (d = 2, h = 3, k = 2, cross-entropy, bn_eps 2^-6, BN momentum 0.15, five,
# four and six samples, its init) and its two rounds, then a third round
# S = {1, 2} so that a step decay every 2 rounds fires
FEDBN_FROZEN = "fedbn/worked-momentum-client.json"
FEDBN_ROUND3 = {"clients": [1, 2], "batches": [[[2, 0], [3, 1]],
                                                [[1, 4, 2], [5, 0, 3]]]}
FEDBN_TOL = {
    "atol": 1e-12, "rtol": 1e-11,
    "basis": "fp64 reference in fixed order against 60-digit decimals of the "
             "binary inputs (golden/pflref_exact_fedbn.py; the optimizer's "
             "step in exact fractions of them, square roots at 60 digits): "
             "three rounds of at most three local steps on values below 10, "
             "each step a batch mean, variance and square root (a few tens of "
             "roundings), the optimizer's terms bounded (momentum < 0.9, "
             "Adam's normalised steps); every relu decision at least 1e-4 "
             "from its kink (asserted), and every flagged bug moves some "
             "value by more than 1e3 times the tolerance."}


def fedbn_base(algorithm, split=None):
    spec = copy.deepcopy(ma.frozen_spec(FEDBN_FROZEN))
    spec["algorithm"] = algorithm
    if split is not None:
        spec["split"] = split
    spec["schedule"]["rounds"].append(copy.deepcopy(FEDBN_ROUND3))
    return spec


def relu_clear(spec, exp, tol):
    """No relu decision on or near its kink (a kink would make the
    reference's and the replay's subgradients a coincidence)."""
    xbn.STATS.update({"min_u": None, "on": 0, "near": 0})
    replay_expected(spec)
    assert xbn.STATS["on"] == 0 and xbn.STATS["min_u"] > 1e-4, xbn.STATS


def make(alg, name, title, what, spec, tol, flags, mutants, checks):
    vid = "optim/%s/%s" % (alg, name)
    problem = ("Linear model with bias, squared loss, three clients (n = 3, "
               "4, 5), S = {0, 1}, {1, 2}, {0, 2}"
               + (", draws %s" % DRAWS if alg == "fedprox" else ""))
    if alg == "fedpac":
        problem = ("The layer list (dense 2-4, relu, dense 4-3, "
                   "cross-entropy), clients (n = 3, 4, 5), init and rounds "
                   "(S = {0, 1}, {2}, {0, 1, 2}) of golden/%s" % FEDPAC_FROZEN)
    if alg in ("fedprox", "scaffold", "feddyn") and \
            spec["model"]["kind"] == "layers":
        problem = BN_PROBLEM + (", draws %s" % BN_DRAWS
                                if alg == "fedprox" else "")
    if alg == "moon":
        problem = (MOON_MLP_PROBLEM if spec["model"]["kind"] == "mlp"
                   else MOON_PROBLEM)
    if alg == "fedbn":
        problem = ("The mlp with batch normalisation, clients and init of "
                   "golden/%s (d = 2, h = 3, k = 2, cross-entropy, BN "
                   "momentum 0.15; n = 5, 4, 6), its rounds S = {0, 1, 2}, "
                   "{0, 2}, then S = {1, 2}; fedbn.bn = local, uniform "
                   "weights" % FEDBN_FROZEN)
    description = (TITLE[alg] + ".  " + problem
                   + "; " + ", ".join("%s = %g" % kv for kv in
                                      sorted(HYPER[alg].items()))
                   + ".  " + what)
    spec = dict(spec, name="%s, %s" % (TITLE[alg].split(" (")[0], title),
                description=description)
    exp = replay_expected(spec)
    mutants = dict(mutants)
    mutants["optimizer-state-lifetime"] = po.other_lifetimes(spec["algorithm"])
    flags = flags + ["optimizer-state-lifetime"]
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay_expected(spec, bugs))
    for check in [every_lifetime_differs] + list(checks):
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, spec["name"], prov,
                                                  flags, spec, tol, exp)


STEPS = "at most 3 local steps per client update, 3 rounds"


def sgd_vector(alg):
    hyper = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
    switches = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step"}
    for c in CLIPS:
        spec = base(alg, dict(hyper, **{"opt.clip_norm": c}), switches)
        clipped = clip_log(spec)
        if any(clipped) and not all(clipped):
            break
    else:
        raise AssertionError("%s: no clip threshold acts on some steps" % alg)
    return make(
        alg, "nesterov-clip-step-server",
        "torch.optim.SGD(momentum = 0.71875, nesterov = True, weight_decay = "
        "0.15625 decoupled, on the weights only), clip_grad_norm_ at %g, one "
        "object carried from client to client, step decay 0.5625 every 2 "
        "rounds" % c,
        "opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
        "0.15625 with opt.weight_decay_form = decoupled (theta <- theta (1 - "
        "eta lambda) before the step) and opt.decay_scope = weights (the bias "
        "b undecayed), opt.clip = norm at c = %g (acting on some steps, not "
        "on others), opt.state = server (one optimizer for every client in "
        "training order), lr.schedule = step with lr.gamma = 0.5625 and "
        "lr.step_rounds = 2 (round 2's step sizes times 0.5625)." % c,
        spec, ma.tolerance(STEPS + ", clipping norms at 60 digits",
                           exact=False),
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "lr-schedule"],
        ma.NESTEROV_CLIP_STEP_MUTANTS,
        [clip_acts])


def adamw_vector(alg):
    hyper = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125,
             "opt.weight_decay": 0.09375, "lr.gamma": 0.6875}
    switches = {"opt.method": "adamw", "opt.state": "client",
                "opt.decay_scope": "shared", "lr.schedule": "exponential"}
    return make(
        alg, "adamw-shared-client-decay",
        "torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, weight_decay "
        "= 0.09375 on the shared block w only), one per client kept across "
        "rounds, exponential decay 0.6875",
        "split.personal = [b]; opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375 with opt.decay_scope = shared (w decays, the personal b "
        "does not), opt.state = client (a client's moments and step counts "
        "carried into its next round), lr.schedule = exponential with "
        "lr.gamma = 0.6875.",
        base(alg, hyper, switches, SPLIT),
        ma.tolerance(STEPS + ", Adam's square roots", exact=False),
        ["weight-decay-form", "weight-decay-scope", "adam-bias-correction",
         "lr-schedule"],
        {"weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [scope_read])


def classical_vector(alg):
    hyper = {"opt.momentum": 0.59375, "opt.weight_decay": 0.21875,
             "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "opt.decay_scope": "personal", "lr.schedule": "exponential"}
    return make(
        alg, "classical-personal-client",
        "classical momentum v <- 0.59375 v - eta d, weight decay 0.21875 "
        "(coupled) on the personal block b only, one per client kept across "
        "rounds, exponential decay 0.78125",
        "split.personal = [b]; opt.momentum = 0.59375, opt.momentum_form = "
        "classical (eta inside the velocity: unlike torch's form once eta "
        "decays), opt.weight_decay = 0.21875 (coupled: d <- d + lambda b) "
        "with opt.decay_scope = personal (b decays, the shared w does not), "
        "opt.state = client, lr.schedule = exponential with lr.gamma = "
        "0.78125.",
        base(alg, hyper, switches, SPLIT), ma.tolerance(STEPS),
        ["momentum-form", "weight-decay-scope", "lr-schedule"],
        {"momentum-form": ["momentum-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [scope_read])


def fedbn_sgd():
    """FedBN: the SGD vector's switches with frozen running statistics."""
    hyper = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
    switches = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step",
                "bn.running": "frozen"}
    for c in FEDBN_CLIPS:
        spec = base("fedbn", dict(hyper, **{"opt.clip_norm": c}), switches)
        clipped = clip_log(spec)
        if any(clipped) and not all(clipped):
            break
    else:
        raise AssertionError("fedbn: no clip threshold acts on some steps")
    return make(
        "fedbn", "nesterov-clip-step-server-frozen",
        "torch.optim.SGD(momentum = 0.71875, nesterov = True, weight_decay = "
        "0.15625 decoupled, on the weights only), clip_grad_norm_ at %g, one "
        "object carried from client to client, step decay 0.5625 every 2 "
        "rounds, running statistics frozen" % c,
        "opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
        "0.15625 with opt.weight_decay_form = decoupled and opt.decay_scope = "
        "weights (W1 and W2 decay; the biases b1, b2 and the batch-norm "
        "gamma, beta do not), opt.clip = norm at c = %g (acting on some "
        "steps, not on others), opt.state = server, lr.schedule = step with "
        "lr.gamma = 0.5625 and lr.step_rounds = 2, bn.running = frozen (the "
        "batch statistics normalise, r_mu and r_v stay at init's)." % c,
        spec, FEDBN_TOL,
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "lr-schedule", "bn-backward", "fedbn-bn-averaged"],
        dict(ma.NESTEROV_CLIP_STEP_MUTANTS,
             **{"bn-backward": ["no-stat-backward"],
                "fedbn-bn-averaged": ["bn-averaged"]}),
        [clip_acts, relu_clear, frozen_differs])


def frozen_differs(spec, exp, tol):
    """bn.running = frozen is read: the moving statistics differ."""
    other = copy.deepcopy(spec)
    other["algorithm"]["switches"]["bn.running"] = "update"
    assert ma.differs(exp, replay_expected(other), tol)


def fedbn_adamw():
    hyper = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125,
             "opt.weight_decay": 0.09375, "lr.gamma": 0.6875}
    switches = {"opt.method": "adamw", "opt.state": "client",
                "opt.decay_scope": "shared", "lr.schedule": "exponential",
                "bn.running_var": "biased"}
    return make(
        "fedbn", "adamw-shared-client-decay-biased",
        "torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, weight_decay "
        "= 0.09375 on the shared blocks only), one per client kept across "
        "rounds, exponential decay 0.6875, the biased batch variance into r_v",
        "split.personal = [W2, b2]; opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375 with opt.decay_scope = shared (W1, b1, gamma, beta decay; "
        "the personal W2, b2 do not), opt.state = client, lr.schedule = "
        "exponential with lr.gamma = 0.6875, bn.running_var = biased (r_v <- "
        "(1 - rho) r_v + rho s^2_B with the biased s^2_B).",
        base("fedbn", hyper, switches, FEDBN_SPLIT), FEDBN_TOL,
        ["weight-decay-form", "weight-decay-scope", "adam-bias-correction",
         "lr-schedule", "bn-running-update", "fedbn-bn-averaged"],
        {"weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "lr-schedule": ["lr-ignored", "lr-shifted"],
         "bn-running-update": ["running-var-flipped", "momentum-flipped"],
         "fedbn-bn-averaged": ["bn-averaged"]},
        [relu_clear, scope_read])


def fedbn_adam():
    """FedBN: Adam carried from client to client, coupled decay on the
    split's personal blocks only."""
    hyper = {"opt.beta1": 0.8125, "opt.beta2": 0.9375, "opt.eps": 0.00390625,
             "opt.weight_decay": 0.1875}
    switches = {"opt.method": "adam", "opt.state": "server",
                "opt.decay_scope": "personal"}
    return make(
        "fedbn", "adam-personal-server",
        "torch.optim.Adam(betas = (0.8125, 0.9375), eps = 2^-8, weight_decay "
        "= 0.1875 coupled, on the personal blocks W2, b2 only), one object "
        "carried from client to client",
        "split.personal = [W2, b2]; opt.method = adam, opt.beta1 = 0.8125, "
        "opt.beta2 = 0.9375, opt.eps = 0.00390625, opt.weight_decay = 0.1875 "
        "(coupled: d <- d + lambda theta) with opt.decay_scope = personal "
        "(W2, b2 decay; W1, b1, gamma, beta do not), opt.state = server (one "
        "optimizer for every client in training order).",
        base("fedbn", hyper, switches, FEDBN_SPLIT), FEDBN_TOL,
        ["weight-decay-form", "weight-decay-scope", "adam-bias-correction",
         "fedbn-bn-averaged"],
        {"weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "fedbn-bn-averaged": ["bn-averaged"]},
        [relu_clear, scope_read])


def fedbn_classical():
    """FedBN: classical momentum kept per client, exponential decay."""
    hyper = {"opt.momentum": 0.59375, "opt.weight_decay": 0.21875,
             "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "opt.decay_scope": "weights", "lr.schedule": "exponential"}
    return make(
        "fedbn", "classical-weights-client",
        "classical momentum v <- 0.59375 v - eta d, weight decay 0.21875 "
        "(coupled) on the weights W1, W2 only, one per client kept across "
        "rounds, exponential decay 0.78125",
        "opt.momentum = 0.59375, opt.momentum_form = classical (eta inside "
        "the velocity: unlike torch's form once eta decays), opt.weight_decay "
        "= 0.21875 (coupled) with opt.decay_scope = weights (W1, W2 decay; "
        "the biases and gamma, beta do not), opt.state = client, lr.schedule "
        "= exponential with lr.gamma = 0.78125.",
        base("fedbn", hyper, switches), FEDBN_TOL,
        ["momentum-form", "weight-decay-scope", "lr-schedule",
         "fedbn-bn-averaged"],
        {"momentum-form": ["momentum-form-swap"],
         "weight-decay-scope": ["decay-scope-all"],
         "lr-schedule": ["lr-ignored", "lr-shifted"],
         "fedbn-bn-averaged": ["bn-averaged"]},
        [relu_clear])


# FedPAC: the problem and rounds of fedpac/layers-momentum-client (no batch
# normalisation: the replay's optimizer view steps the dense blocks), with
# eta and eta_phi distinct
FEDPAC_FROZEN = "fedpac/layers-momentum-client.json"
FEDPAC_TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs (golden/pflref_exact_fedpac.py; the "
             "optimizers' steps in exact fractions of them, clip norms at 60 "
             "digits): three rounds of at most four local steps per client on "
             "a model with P = 27 (cross-entropy gradients), class means of at "
             "most five features, the classifier weights from a regular "
             "bordered system of at most four rows; a few hundred roundings "
             "of 1.1e-16, amplified by at most 1e2 (momentum < 0.9), stay "
             "inside 1e-13 + 1e-12 |r|; every flagged bug moves some value by "
             "more than 1e3 times the tolerance."}


def fedpac_sgd():
    """FedPAC's two optimizers (the classifier's in the tau_phi head steps,
    the feature extractor's in the rest) with the SGD vector's switches."""
    hyper = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
    switches = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step"}
    for c in FEDBN_CLIPS + CLIPS:
        spec = base("fedpac", dict(hyper, **{"opt.clip_norm": c}), switches)
        clipped = clip_log(spec)
        if any(clipped) and not all(clipped):
            break
    else:
        raise AssertionError("fedpac: no clip threshold acts on some steps")
    return make(
        "fedpac", "nesterov-clip-step-server",
        "two torch.optim.SGD(momentum = 0.71875, nesterov = True, "
        "weight_decay = 0.15625 decoupled, on the weights only), "
        "clip_grad_norm_ at %g, carried from client to client, step decay "
        "0.5625 every 2 rounds" % c,
        "opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
        "0.15625 with opt.weight_decay_form = decoupled and opt.decay_scope = "
        "weights (W1 and W2 decay, the biases b1, b2 do not), opt.clip = norm "
        "at c = %g (acting on some steps, not on others; each step's norm "
        "over the blocks that step moves), opt.state = server (the "
        "classifier's and the feature extractor's optimizers each carried "
        "from client to client), lr.schedule = step with lr.gamma = 0.5625 "
        "and lr.step_rounds = 2 (eta and eta_phi of round 2 times 0.5625)."
        % c, spec, FEDPAC_TOL,
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "lr-schedule"],
        ma.NESTEROV_CLIP_STEP_MUTANTS,
        [clip_acts])


# FedProx, SCAFFOLD and FedDyn on a layer list with batch normalisation:
# the problem, init and three rounds (S = {0, 1, 2}, {0, 2}, {1, 2}) of
# golden/layers/fedprox-bn1d-mlp-pfllib-keep.json (dense fc1 3 -> 4 without
# bias, batchnorm1d bn1 (eps = 0.03, momentum 0.2), relu, dense fc2 4 -> 1,
# squared loss, clients of 4, 3, 5 samples); the running statistics r_mu,
# r_v are entries of the model, recorded in every trajectory record.
# FedProx's paper sampling: K = 3 draws per round over S_t.
BN_REL = "layers/fedprox-bn1d-mlp-pfllib-keep.json"
BN_DRAWS = [[2, 0, 1], [0, 2, 2], [1, 2, 1]]
BN_ADAM = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125}
BN_STEPS = ("at most 2 local steps per client update, 3 rounds, Adam's and "
            "the batch norm's square roots")
BN_PROBLEM = ("Layer list dense fc1 (3 -> 4, no bias) -> batchnorm1d bn1 (eps "
              "= 0.03, momentum 0.2) -> relu -> dense fc2 (4 -> 1), squared "
              "loss, three clients (n = 4, 3, 5), S = {0, 1, 2}, {0, 2}, {1, "
              "2} (the inputs of golden/%s)" % BN_REL)


def bn_base(alg, hyper, switches):
    spec = copy.deepcopy(ma.frozen_spec(BN_REL))
    spec["algorithm"] = {"name": alg,
                         "hyperparameters": dict(HYPER[alg], **hyper),
                         "switches": dict(switches)}
    if alg == "fedprox":
        for r, d in zip(spec["schedule"]["rounds"], BN_DRAWS):
            r["draws"] = d
    return spec


def bn_read(spec, exp, tol):
    """The bn.* value is read: the paper's reading gives other numbers."""
    other = copy.deepcopy(spec)
    sw = other["algorithm"]["switches"]
    for key, paper in (("bn.running", "update"),
                       ("bn.running_var", "unbiased")):
        if key in sw:
            sw[key] = paper
            assert ma.differs(exp, replay_expected(other), tol), key
            sw[key] = spec["algorithm"]["switches"][key]


def adam_frozen_vector(alg):
    hyper = dict(BN_ADAM, **{"opt.weight_decay": 0.09375})
    switches = {"opt.method": "adam", "opt.state": "client",
                "bn.running": "frozen"}
    return make(
        alg, "adam-client-bn-frozen",
        "torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, weight_decay "
        "= 0.09375 coupled), one per client kept across rounds, on a "
        "batch-norm MLP with frozen running statistics",
        "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = 0.96875, opt.eps = "
        "0.001953125, opt.weight_decay = 0.09375 (coupled: d <- d + lambda "
        "theta, every parameter block), opt.state = client (a client's "
        "moments and step counts carried into its next round); bn.running = "
        "frozen: the forward normalises with the batch's statistics, r_mu "
        "and r_v keep their initial values.",
        bn_base(alg, hyper, switches),
        ma.tolerance(BN_STEPS, exact=False),
        ["weight-decay-form", "adam-bias-correction", "bn-running-moved"],
        {"weight-decay-form": ["decay-form-swap"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "bn-running-moved": ["running-moved"]},
        [bn_read])


def adam_biased_vector(alg):
    hyper = dict(BN_ADAM, **{"lr.gamma": 0.6875})
    switches = {"opt.method": "adam", "opt.state": "server",
                "lr.schedule": "exponential", "bn.running_var": "biased"}
    return make(
        alg, "adam-server-bn-biased",
        "torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9), one object "
        "carried from client to client, exponential decay 0.6875, on a "
        "batch-norm MLP with the biased batch variance into r_v",
        "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = 0.96875, opt.eps = "
        "0.001953125, opt.state = server (one optimizer for every client in "
        "training order), lr.schedule = exponential with lr.gamma = 0.6875; "
        "bn.running_var = biased: r_v <- 0.8 r_v + 0.2 s^2 with the batch's "
        "biased variance (not m/(m - 1) s^2).",
        bn_base(alg, hyper, switches),
        ma.tolerance(BN_STEPS, exact=False),
        ["adam-bias-correction", "lr-schedule", "bn-running-update"],
        {"adam-bias-correction": ["adam-no-bias-correction"],
         "lr-schedule": ["lr-ignored", "lr-shifted"],
         "bn-running-update": ["running-var-flipped"]},
        [bn_read])


FEDBN_SPLIT = {"personal": ["W2", "b2"]}
FEDBN_CLIPS = (1.25, 0.875, 1.75, 0.625, 2.5, 0.4375, 3.5, 0.3125)


# MOON: the layer list with batch normalisation in the body, parties,
# init and three rounds of golden/moon/layers-bn-paper.json, its eta, mu,
# tau (pflref_exact_moon.py's local steps through the optimizer)
MOON_FROZEN = "moon/layers-bn-paper.json"
MOON_PROBLEM = ("Layer list dense fc1 (2 -> 3, no bias) -> batchnorm1d norm1 "
                "-> tanh "
                "-> dense proj (3 -> 2) = R_w -> dense out (2 -> 2), "
                "cross-entropy, three parties (n = 3, 4, 2), S = {0, 1}, "
                "{1, 2}, {0, 1, 2} (the inputs of golden/%s, fc1's bias "
                "left out of the model and of w0)" % MOON_FROZEN)
MOON_SPLIT = {"personal": ["out"]}
# and, for Adam, the mlp of golden/moon/mlp-paper.json (no batch
# normalisation)
MOON_MLP = "moon/mlp-paper.json"
MOON_MLP_PROBLEM = ("mlp 2-3-2 with identity activation (R_w its hidden "
                    "layer), cross-entropy, three parties (n = 3, 4, 2), S "
                    "= {0, 1}, {1, 2}, {0, 1, 2} (the inputs of golden/%s)"
                    % MOON_MLP)
MOON_TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs (golden/pflref_exact_moon.py; the "
             "optimizer's step in exact fractions of them, square roots at "
             "60 digits): three rounds of at most two local steps per party "
             "on a layer list with P = 32 and batch normalisation in the "
             "body, the contrastive signal on representations of norm >= "
             "0.01, the optimizer's terms bounded (momentum < 0.9, Adam's "
             "normalised steps); every flagged bug moves some value by more "
             "than 1e3 times the tolerance."}


MOON_MLP_TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs (golden/pflref_exact_moon.py; the "
             "optimizer's step in exact fractions of them, Adam's square "
             "roots at 60 digits): three rounds of at most two local steps "
             "per party on an mlp with P = 17, the contrastive signal on "
             "representations of norm >= 0.01, Adam's normalised steps "
             "bounded; every flagged bug moves some value by more than 1e3 "
             "times the tolerance."}


def moon_sgd():
    """MOON: the SGD vector's switches with frozen running statistics."""
    hyper = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
    switches = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step",
                "bn.running": "frozen"}
    for c in FEDBN_CLIPS + CLIPS:
        spec = base("moon", dict(hyper, **{"opt.clip_norm": c}), switches)
        clipped = clip_log(spec)
        if any(clipped) and not all(clipped):
            break
    else:
        raise AssertionError("moon: no clip threshold acts on some steps")
    return make(
        "moon", "nesterov-clip-step-server-bn-frozen",
        "torch.optim.SGD(momentum = 0.71875, nesterov = True, weight_decay = "
        "0.15625 decoupled, on the weights only), clip_grad_norm_ at %g, one "
        "object carried from party to party, step decay 0.5625 every 2 "
        "rounds, running statistics frozen" % c,
        "opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
        "0.15625 with opt.weight_decay_form = decoupled and opt.decay_scope = "
        "weights (fc1, proj and out's weights decay; the biases and norm1's "
        "weight and bias do not), opt.clip = norm at c = %g (acting on some "
        "steps, not on others), opt.state = server, lr.schedule = step with "
        "lr.gamma = 0.5625 and lr.step_rounds = 2, bn.running = frozen (the "
        "batch statistics normalise, the running ones stay at w0's)." % c,
        spec, MOON_TOL,
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "lr-schedule", "bn-running-moved"],
        dict(ma.NESTEROV_CLIP_STEP_MUTANTS, **{"bn-running-moved": ["running-moved"]}),
        [clip_acts, bn_read])


def moon_adamw():
    hyper = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125,
             "opt.weight_decay": 0.09375, "lr.gamma": 0.6875}
    switches = {"opt.method": "adamw", "opt.state": "client",
                "opt.decay_scope": "shared", "lr.schedule": "exponential",
                "lr.count": "trainings", "bn.running_var": "biased"}
    return make(
        "moon", "adamw-shared-client-trainings-bn-biased",
        "torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, weight_decay "
        "= 0.09375 on the shared blocks only), one per party kept across "
        "rounds, exponential decay 0.6875 counted in the party's own "
        "trainings, the biased batch variance into the running variance",
        "split.personal = [out]; opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375 with opt.decay_scope = shared (fc1, norm1, proj decay; the "
        "personal out does not), opt.state = client, lr.schedule = "
        "exponential with lr.gamma = 0.6875 and lr.count = trainings (party "
        "2's first training in round 1 at eta, party 0's second in round 2 "
        "at eta gamma), bn.running_var = biased.",
        base("moon", hyper, switches, MOON_SPLIT), MOON_TOL,
        ["weight-decay-form", "weight-decay-scope", "adam-bias-correction",
         "lr-schedule", "lr-count", "bn-running-update"],
        {"weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "lr-schedule": ["lr-ignored", "lr-shifted"],
         "lr-count": ["lr-per-round"],
         "bn-running-update": ["running-var-flipped"]},
        [scope_read, bn_read])


def moon_classical():
    hyper = {"opt.momentum": 0.59375, "opt.weight_decay": 0.21875,
             "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "opt.decay_scope": "personal", "lr.schedule": "exponential"}
    return make(
        "moon", "classical-personal-client",
        "classical momentum v <- 0.59375 v - eta d, weight decay 0.21875 "
        "(coupled) on the personal block out only, one per party kept across "
        "rounds, exponential decay 0.78125",
        "split.personal = [out]; opt.momentum = 0.59375, opt.momentum_form = "
        "classical (eta inside the velocity: unlike torch's form once eta "
        "decays), opt.weight_decay = 0.21875 (coupled) with opt.decay_scope "
        "= personal (out decays, fc1, norm1, proj do not), opt.state = "
        "client, lr.schedule = exponential with lr.gamma = 0.78125.",
        base("moon", hyper, switches, MOON_SPLIT), MOON_TOL,
        ["momentum-form", "weight-decay-scope", "lr-schedule"],
        {"momentum-form": ["momentum-form-swap"],
         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [scope_read])


def moon_adam():
    hyper = {"opt.beta1": 0.8125, "opt.beta2": 0.9375, "opt.eps": 0.00390625,
             "opt.weight_decay": 0.1875}
    switches = {"opt.method": "adam"}
    return make(
        "moon", "adam-decay",
        "torch.optim.Adam(betas = (0.8125, 0.9375), eps = 2^-8, weight_decay "
        "= 0.1875 coupled), a new one per local training",
        "opt.method = adam, opt.beta1 = 0.8125, opt.beta2 = 0.9375, opt.eps "
        "= 0.00390625, opt.weight_decay = 0.1875 (coupled: d <- d + lambda "
        "theta, every parameter block), opt.state = reset.",
        base("moon", hyper, switches, frozen=MOON_MLP), MOON_MLP_TOL,
        ["weight-decay-form", "adam-bias-correction"],
        {"weight-decay-form": ["decay-form-swap"],
         "adam-bias-correction": ["adam-no-bias-correction"]},
        [])


def _bind(f, alg):
    g = lambda: f(alg)             # noqa: E731
    g.__name__ = "%s_%s" % (f.__name__, alg)
    return g


MAKERS = tuple(_bind(f, alg) for alg in ("fedprox", "scaffold", "feddyn")
               for f in (sgd_vector, adamw_vector, classical_vector)) \
    + (fedbn_sgd, fedbn_adamw, fedpac_sgd) \
    + tuple(_bind(f, alg) for alg in ("fedprox", "scaffold", "feddyn")
            for f in (adam_frozen_vector, adam_biased_vector)) \
    + (fedbn_adam, fedbn_classical) \
    + (moon_sgd, moon_adamw, moon_classical, moon_adam)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
