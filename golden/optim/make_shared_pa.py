#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared-switch golden vectors (issue 33 §3) of APPLE, FedRecon, FedPAC,
LoRA, pFedHN, FedRoD and FedAMP: for the (algorithm, opt.* / lr.* / bn.*
value) pairs the coincidence audit (golden/coincidences.py, _NOT_YET)
listed as not yet run coincidence-free by any vector of the algorithm, a
few small vectors that each run several of them at once, free of the
audit's shared coincidences (SHARED_RULES).

Each vector's spec is run, as written, through its algorithm's exact
replay (golden/audit.py's replay: pflref_exact_apple.py,
pflref_exact_fedrecon.py, pflref_exact_fedpac.py, pflref_exact_lora.py,
pflref_exact_pfedhn.py, pflref_exact_fedrod.py, pflref_exact_fedamp.py),
whose optimizer steps go through golden/pflref_exact_optim.py
(docs/optimizers.md, the slots table), except LoRA's and FedRoD's, which
write torch's rules again for the adapter and for FedRoD's two
optimizers.  The generator asserts, per vector, what makes it able to
fail: each flagged bug moves a value far outside the tolerance
(check_mutants), every other opt.state lifetime gives another run, the
clip acts on some steps and not on others, the decay changes the run, and
the audit finds none of the shared coincidences for the values the vector
is meant to cover (covered_free).

Vectors (ids optim/<algorithm>/<name>; file <algorithm>-<name>.json):
  apple/nesterov-clip-step-server   the problem of golden/apple (four
                 clients, every client in three rounds): Nesterov, decoupled
                 decay on the weights (w and p_i; the bias b undecayed), a
                 clip acting on some steps, one optimizer carried from client
                 to client, a step decay firing at round 2
  apple/adamw-client-eta-p   AdamW kept per client, η_p alone decayed
                 (lr.scope = eta_p, exponential)
  apple/classical-client-decay   classical momentum kept per client,
                 exponential decay of η and η_p
  fedrecon/nesterov-clip-server   the problem of golden/fedrecon: the
                 update of g on Nesterov momentum with decoupled decay, a
                 clip acting on some steps, carried from client to client
  fedrecon/adamw-server   AdamW carried from client to client
  fedpac/adamw-client-decay, fedpac/adam-server,
  fedpac/classical-client-decay   the layer list of
                 fedpac/layers-momentum-client (its two optimizers, the
                 classifier's and the feature extractor's): AdamW kept per
                 client under an exponential decay, Adam with coupled decay
                 carried from client to client, classical momentum kept per
                 client under an exponential decay
  fedpac/bn-frozen, fedpac/bn-biased   the batch-norm layer list of
                 fedpac/layers-bn-paper, plain SGD, bn.running = frozen /
                 bn.running_var = biased
  lora/adamw-clip-client   the layer list of lora/worked-layers-mlp-adam:
                 AdamW on the adapter kept per client, a clip acting on
                 some steps
  lora/bn-frozen   the batch-norm layer list of lora/bn-fedavg-bn1d,
                 bn.running = frozen
  pfedhn/adam-shared-client, pfedhn/momentum-personal-server   the problem
                 of pfedhn/worked-linear-bias with a split personal = b:
                 Adam with coupled decay on the shared w kept per client,
                 momentum with coupled decay on the personal b carried from
                 round to round
  pfedhn/bn-frozen, pfedhn/bn-biased   the batch-norm layer list of
                 layers/local-bn1d-mlp-two-rounds under a linear hypernetwork
                 (its w0 as b_h), one client per round, plain inner SGD
  fedrod/classical-shared-step-client   the mlp of fedrod/mlp/paper:
                 classical momentum kept per client, decoupled decay on the
                 generic model only, a step decay firing at round 2
  fedrod/nesterov-clip-server-bn-frozen   the batch-norm layer list of
                 fedrod/layers/bn-paper: Nesterov, a clip acting on some
                 steps (each step over the tensors it moves), the pair
                 carried from client to client, bn.running = frozen
  fedamp/step-decay   fedamp/worked-paper-ld's inputs under a step decay
                 firing at round 2
inherent() asserts, on the exact replays, what golden/coincidences.py's
inherent exceptions of these algorithms say: FedRecon's opt.decay_scope =
shared is all's run and personal the run without decay (its optimizer
steps the shared g alone); FedRecon's, LoRA's and pFedHN's classical
momentum form is the pytorch form (no lr.*: a constant step size).

    /usr/bin/python3 golden/optim/make_shared_pa.py [OUTDIR]
"""
import copy
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import make_shared_pfl as msp             # noqa: E402
import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402
from make_algorithms import (NESTEROV_CLIP_STEP_MUTANTS,  # noqa: E402
                             clip_decisions)

GENERATOR = ("golden/optim/make_shared_pa.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (golden/audit.py replay; "
             "exact fractions, square roots at 60 decimal digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_, "
          "torch.optim.lr_scheduler.StepLR / ExponentialLR stepped once a "
          "round; docs/optimizers.md (the slots and the state lifetimes); "
          "each algorithm's paper and reading as in its own vectors")
replay = msp.replay
# candidate clip thresholds: the first acting on some steps and not on
# every step (clip_acts) is taken
CLIPS = (0.875, 1.125, 0.6875, 1.375, 0.5625, 1.625, 0.4375, 0.3125, 0.25,
         0.1875, 2.25)


def clip_mixed(spec):
    clipped = [coef < 1 for _, _, coef in clip_decisions(replay, spec)]
    return any(clipped) and not all(clipped)


def with_clip(build):
    """build(c) for the first c of CLIPS whose clip acts on some steps and
    not on others."""
    for c in CLIPS:
        spec = build(c)
        if clip_mixed(spec):
            return c, spec
    raise AssertionError("no clip threshold acts on some steps only")


def optimizer_acts():
    """The optimizer changes the run: the spec on plain SGD (no opt.*)
    with the same algorithm constants is another run."""
    def check(spec, exp, tol):
        alt = copy.deepcopy(spec)
        alt["algorithm"]["hyperparameters"] = {
            k: v for k, v in spec["algorithm"]["hyperparameters"].items()
            if not k.startswith("opt.")}
        alt["algorithm"]["switches"] = {
            k: v for k, v in spec["algorithm"]["switches"].items()
            if not k.startswith("opt.")}
        assert pg.detects(exp, replay(alt), tol) is not None
    return check


def make(alg, name, title, description, spec, tol, flags, mutants, covers,
         checks=()):
    vid = "optim/%s/%s" % (alg, name)
    spec = dict(spec, name=title, description=description)
    exp = replay(spec)
    mutants = dict(mutants)
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = po.other_lifetimes(
            spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    if "opt.decay_scope" in spec["algorithm"]["switches"]:
        checks = [msp.scope_matters] + list(checks)
    if po.uses_optimizer(spec):
        checks = [msp.lifetimes_differ] + list(checks)
    for check in [msp.covered_free(covers)] + list(checks):
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, title, prov, flags,
                                                  spec, tol, exp)


SGD_HYPER = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625}
SGD_SWITCHES = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.state": "server", "opt.clip": "norm"}
SGD_COVERS = [("opt.nesterov", "on"), ("opt.weight_decay_form", "decoupled"),
              ("opt.clip", "norm"), ("opt.state", "server")]
ADAMW_HYPER = {"opt.beta1": 0.75, "opt.beta2": 0.96875,
               "opt.eps": 0.001953125, "opt.weight_decay": 0.09375}
ADAMW_TEXT = ("opt.method = adamw, opt.beta1 = 0.75, opt.beta2 = 0.96875, "
              "opt.eps = 0.001953125, opt.weight_decay = 0.09375 (decoupled, "
              "AdamW's theta <- theta (1 - eta lambda))")
ADAMW_MUTANTS = {"weight-decay-form": ["decay-form-swap"],
                 "adam-bias-correction": ["adam-no-bias-correction"]}
CLASSICAL_TEXT = ("opt.momentum = 0.59375, opt.momentum_form = classical "
                  "(v <- 0.59375 v - eta d, theta <- theta + v: eta inside "
                  "the velocity, unlike torch's form once eta decays)")


# ---------------------------------------------------------------- apple

sys.path.insert(0, os.path.join(GOLDEN, "apple"))
import make_apple as mapple               # noqa: E402

APPLE_TEXT = ("APPLE (Luo, Wu, IJCAI 2022, Alg. 1; the authors' one optimizer "
              "over the core w_i and p_i, two parameter groups: eta on the "
              "core's w, b, eta_p on p_i's block ps).  The clients and w0 of "
              "apple/worked/paper-partial (linear model with bias, squared "
              "loss, n = 4, 3, 5, 2), every client in three rounds; eta = "
              "0.09, eta_p = 0.13, mu = 0.45, L = 3.  ")
APPLE_HYPER = mapple.hyper(0.09, 0.13, 0.45, 3)


def apple_tolerance(adam, clip=False):
    tol = dict(mapple.TOL)
    tol["basis"] = (mapple.TOL["basis"] + " The optimizer's step adds a "
                    "momentum buffer (mu < 0.75) or Adam's normalised step"
                    + (" (square roots at 60 digits)" if adam else "")
                    + (", the clip's norm at 60 digits" if clip else "")
                    + ": a few roundings more per step, far below the "
                    "tolerance.")
    return tol


def apple_spec(hyper, switches):
    algorithm = {"name": "apple", "hyperparameters": dict(APPLE_HYPER, **hyper),
                 "switches": dict(switches)}
    return pg.given_spec("", None, mapple.MODEL, mapple.CLIENTS, mapple.INIT,
                         algorithm, mapple.rounds_json(mapple.EVERY))


def apple_sgd():
    hyper = dict(SGD_HYPER, **{"lr.gamma": 0.5625, "lr.step_rounds": 2})
    switches = dict(SGD_SWITCHES, **{"opt.decay_scope": "weights",
                                     "lr.schedule": "step"})
    c, spec = with_clip(lambda c: apple_spec(
        dict(hyper, **{"opt.clip_norm": c}), switches))
    return make(
        "apple", "nesterov-clip-step-server",
        "APPLE, the core and p_i on torch.optim.SGD(momentum = 0.71875, "
        "nesterov = True, weight_decay = 0.15625 decoupled, on the weights "
        "only), clip_grad_norm_ at %g, one object carried from client to "
        "client, step decay 0.5625 every 2 rounds" % c,
        APPLE_TEXT + "opt.momentum = 0.71875, opt.nesterov = on, "
        "opt.weight_decay = 0.15625 with opt.weight_decay_form = decoupled "
        "(theta <- theta (1 - eta lambda) before the step, each group's own "
        "eta) and opt.decay_scope = weights (w and ps decay, the bias b does "
        "not), opt.clip = norm at c = %g over the optimizer's whole vector "
        "(acting on some steps, not on others), opt.state = server (one "
        "optimizer carried from client to client in training order), "
        "lr.schedule = step with lr.gamma = 0.5625 and lr.step_rounds = 2 "
        "(round 2's eta and eta_p times 0.5625)." % c,
        spec, apple_tolerance(False, True),
        msp.SGD_FLAGS + ["apple-optimizer-groups"],
        dict(NESTEROV_CLIP_STEP_MUTANTS,
             **{"apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"],
                "lr-schedule": ["lr-ignored", "lr-shifted", "lr-p-const"]}),
        SGD_COVERS + [("opt.decay_scope", "weights"), ("lr.schedule", "step")],
        [msp.clip_acts, msp.decay_matters, optimizer_acts()])


def apple_adamw():
    spec = apple_spec(dict(ADAMW_HYPER, **{"lr.gamma": 0.6875}),
                      {"opt.method": "adamw", "opt.state": "client",
                       "lr.schedule": "exponential", "lr.scope": "eta_p"})
    return make(
        "apple", "adamw-client-eta-p",
        "APPLE, the core and p_i on torch.optim.AdamW(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.09375) kept per client, "
        "eta_p alone decayed by 0.6875 a round",
        APPLE_TEXT + ADAMW_TEXT + ", opt.state = client (a client's moments "
        "and step counts carried into its next round), lr.schedule = "
        "exponential with lr.gamma = 0.6875 and lr.scope = eta_p: round t's "
        "eta_p is 0.13 * 0.6875^t, the core's eta stays 0.09.",
        spec, apple_tolerance(True),
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "lr-schedule", "apple-optimizer-groups"],
        dict(ADAMW_MUTANTS,
             **{"lr-schedule": ["lr-ignored", "lr-shifted", "lr-scope-flip"],
                "apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"]}),
        [("opt.method", "adamw"), ("opt.state", "client"),
         ("lr.schedule", "exponential"), ("lr.scope", "eta_p")],
        [msp.decay_matters, optimizer_acts()])


def apple_classical():
    spec = apple_spec({"opt.momentum": 0.59375, "lr.gamma": 0.78125},
                      {"opt.momentum_form": "classical", "opt.state": "client",
                       "lr.schedule": "exponential"})
    return make(
        "apple", "classical-client-decay",
        "APPLE, the core and p_i on classical momentum v <- 0.59375 v - eta "
        "d kept per client, exponential decay 0.78125",
        APPLE_TEXT + CLASSICAL_TEXT + ", opt.state = client (a client's "
        "velocities carried into its next round), lr.schedule = exponential "
        "with lr.gamma = 0.78125 (round t's eta and eta_p times 0.78125^t).",
        spec, apple_tolerance(False),
        ["momentum-form", "optimizer-state-lifetime", "lr-schedule",
         "apple-optimizer-groups"],
        {"momentum-form": ["momentum-form-swap"],
         "lr-schedule": ["lr-ignored", "lr-shifted", "lr-p-const"],
         "apple-optimizer-groups": ["opt-p-plain", "opt-one-lr"]},
        [("opt.momentum_form", "classical"), ("opt.state", "client"),
         ("lr.schedule", "exponential")],
        [msp.decay_matters])


# ---------------------------------------------------------------- fedrecon

sys.path.insert(0, os.path.join(GOLDEN, "fedrecon"))
import make_worked as mrecon              # noqa: E402

FEDRECON_TEXT = ("FedRecon (Singhal et al., NeurIPS 2021, Alg. 1): the "
                 "problem, supports, rounds and evaluation of "
                 "golden/fedrecon/make_worked.py (linear model with bias, "
                 "half-squared loss, n = 5, 3, 6, split personal = b: g = w, "
                 "l = b; S = {0, 1}, {1, 2}, {0, 2}); eta_r = 0.215, eta_u = "
                 "0.135, eta_s = 0.85.  The update steps of g (l. 11) go "
                 "through the client optimizer (TFF's client_optimizer_fn), "
                 "the reconstruction of l stays plain SGD.  ")


def fedrecon_tolerance(adam, clip=False):
    return {
        "atol": 1e-13, "rtol": 1e-12,
        "basis": "fp64 reference in fixed order against exact rationals of "
                 "the binary inputs" + (", Adam's square roots and the values "
                 "after them at 60 decimal digits (error < 1e-58)" if adam
                 else "") + (", the clip's norms at 60 digits" if clip else "")
                 + ": at most 5 local steps per client and round (at most 3 "
                 "through the optimizer), three rounds and two evaluation "
                 "steps, terms below 10 in magnitude, momentum 0.71875 and "
                 "Adam's normalised steps bounded, so the accumulated error "
                 "stays below 1e-14; every flagged bug moves some value by "
                 "more than 1e3 times the tolerance."}


def fedrecon_spec(hyper, switches):
    algorithm = {"name": "fedrecon",
                 "hyperparameters": dict(mrecon.HYPER, **hyper),
                 "switches": dict(switches)}
    init = {"kind": "given", "w": mrecon.W0, "support": mrecon.SUPPORT}
    return pg.given_spec("", None, mrecon.MODEL, mrecon.CLIENTS, init,
                         algorithm, mrecon.rounds_json(mrecon.ROUNDS),
                         split=mrecon.SPLIT, post=mrecon.POST)


def fedrecon_sgd():
    c, spec = with_clip(lambda c: fedrecon_spec(
        dict(SGD_HYPER, **{"opt.clip_norm": c}), SGD_SWITCHES))
    return make(
        "fedrecon", "nesterov-clip-server",
        "FedRecon, the update of g on torch.optim.SGD(momentum = 0.71875, "
        "nesterov = True, weight_decay = 0.15625 decoupled), clip_grad_norm_ "
        "at %g, one object carried from client to client" % c,
        FEDRECON_TEXT + "opt.momentum = 0.71875, opt.nesterov = on, "
        "opt.weight_decay = 0.15625 with opt.weight_decay_form = decoupled "
        "(g <- g (1 - eta_u lambda) before the step), opt.clip = norm at c "
        "= %g (acting on some steps, not on others), opt.state = server (one "
        "optimizer carried from client to client in training order)." % c,
        spec, fedrecon_tolerance(False, True),
        ["nesterov-momentum", "weight-decay-form", "optimizer-state-lifetime",
         "optimizer-phase"],
        {"nesterov-momentum": ["nesterov-ignored"],
         "weight-decay-form": ["decay-form-swap"],
         "optimizer-phase": ["recon-optimizer"]},
        SGD_COVERS, [msp.clip_acts, optimizer_acts()])


def fedrecon_adamw():
    spec = fedrecon_spec(ADAMW_HYPER, {"opt.method": "adamw",
                                       "opt.state": "server"})
    return make(
        "fedrecon", "adamw-server",
        "FedRecon, the update of g on torch.optim.AdamW(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.09375), one object carried "
        "from client to client",
        FEDRECON_TEXT + ADAMW_TEXT + ", opt.state = server (one optimizer's "
        "moments and step count carried from client to client in training "
        "order).",
        spec, fedrecon_tolerance(True),
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "optimizer-phase"],
        dict(ADAMW_MUTANTS, **{"optimizer-phase": ["recon-optimizer"]}),
        [("opt.method", "adamw"), ("opt.state", "server")],
        [optimizer_acts()])


# ---------------------------------------------------------------- fedpac

import make_shared as msh                 # noqa: E402

FEDPAC_TEXT = ("FedPAC (Xu, Tong, Huang, ICLR 2023, Alg. 1; two optimizers "
               "per client, the classifier's in the tau_phi head steps at "
               "eta_phi, the feature extractor's in the rest at eta).  The "
               "layer list (dense 2-4, relu, dense 4-3, cross-entropy), "
               "clients (n = 3, 4, 5), init and rounds (S = {0, 1}, {2}, {0, "
               "1, 2}) of golden/%s; eta = 0.34375, eta_phi = 0.40625, lambda "
               "= 0.6, tau_phi = 2.  " % msh.FEDPAC_FROZEN)
FEDPAC_BN = "fedpac/layers-bn-paper.json"
FEDPAC_BN_TEXT = ("FedPAC (Xu, Tong, Huang, ICLR 2023, Alg. 1) on the batch-norm "
                  "layer list of golden/%s (dense fc1 2 -> 4, batchnorm1d bn1 "
                  "(eps 2^-5, momentum 0.2), relu, dense out 4 -> 3, "
                  "cross-entropy; n = 3, 4, 5; S = {0, 1}, {2}, {0, 1, 2}), "
                  "its inputs and constants (eta = 0.4, eta_phi = 0.5, lambda "
                  "= 0.65, tau_phi = 1), plain SGD.  " % FEDPAC_BN)
FEDPAC_GROUPS = {"fedpac-optimizers": ["opt-head-plain", "opt-body-plain",
                                       "opt-one-lr"]}


def fedpac_adamw():
    spec = msh.base("fedpac", dict(ADAMW_HYPER, **{"lr.gamma": 0.6875}),
                    {"opt.method": "adamw", "opt.state": "client",
                     "lr.schedule": "exponential"})
    return make(
        "fedpac", "adamw-client-decay",
        "FedPAC, two torch.optim.AdamW(betas = (0.75, 0.96875), eps = 2^-9, "
        "weight_decay = 0.09375) kept per client, exponential decay 0.6875",
        FEDPAC_TEXT + ADAMW_TEXT + ", opt.state = client (each client's two "
        "optimizers carried into its next round), lr.schedule = exponential "
        "with lr.gamma = 0.6875 (round t's eta and eta_phi times 0.6875^t).",
        spec, msh.FEDPAC_TOL,
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "lr-schedule", "fedpac-optimizers"],
        dict(ADAMW_MUTANTS, **FEDPAC_GROUPS,
             **{"lr-schedule": ["lr-ignored", "lr-shifted", "lr-phi-const"]}),
        [("opt.method", "adamw"), ("opt.state", "client"),
         ("lr.schedule", "exponential")],
        [msp.decay_matters, optimizer_acts()])


def fedpac_adam():
    spec = msh.base("fedpac", dict(ADAMW_HYPER, **{"opt.weight_decay": 0.1875}),
                    {"opt.method": "adam", "opt.state": "server"})
    return make(
        "fedpac", "adam-server",
        "FedPAC, two torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, "
        "weight_decay = 0.1875 coupled), each carried from client to client",
        FEDPAC_TEXT + "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = "
        "0.96875, opt.eps = 0.001953125, opt.weight_decay = 0.1875 (coupled: "
        "added to the gradient before the moments), opt.state = server (the "
        "classifier's and the feature extractor's optimizers each carried "
        "from client to client in training order).",
        spec, msh.FEDPAC_TOL,
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "fedpac-optimizers"],
        dict(ADAMW_MUTANTS, **FEDPAC_GROUPS),
        [("opt.method", "adam"), ("opt.state", "server")],
        [optimizer_acts()])


def fedpac_classical():
    # opt.momentum 0.53125: 0.59375 would be 1 - eta_phi
    spec = msh.base("fedpac", {"opt.momentum": 0.53125, "lr.gamma": 0.78125},
                    {"opt.momentum_form": "classical", "opt.state": "client",
                     "lr.schedule": "exponential"})
    return make(
        "fedpac", "classical-client-decay",
        "FedPAC, two classical momentum optimizers v <- 0.53125 v - eta d "
        "kept per client, exponential decay 0.78125",
        FEDPAC_TEXT + "opt.momentum = 0.53125, opt.momentum_form = "
        "classical (v <- 0.53125 v - eta d, theta <- theta + v: eta inside "
        "the velocity, unlike torch's form once eta decays), opt.state = "
        "client (each client's two velocities carried into its next round), "
        "lr.schedule = exponential with lr.gamma = 0.78125 (round t's eta "
        "and eta_phi times 0.78125^t).",
        spec, msh.FEDPAC_TOL,
        ["momentum-form", "optimizer-state-lifetime", "lr-schedule",
         "fedpac-optimizers"],
        dict(FEDPAC_GROUPS, **{
            "momentum-form": ["momentum-form-swap"],
            "lr-schedule": ["lr-ignored", "lr-shifted", "lr-phi-const"]}),
        [("opt.momentum_form", "classical"), ("opt.state", "client"),
         ("lr.schedule", "exponential")],
        [msp.decay_matters])


def fedpac_bn(kind):
    spec = copy.deepcopy(msh.ma.frozen_spec(FEDPAC_BN))
    with open(os.path.join(GOLDEN, FEDPAC_BN)) as f:
        tol = json.load(f)["tolerance"]      # its own, the same steps
    sw = spec["algorithm"].setdefault("switches", {})
    flags, mutants = msp.BN_FLAGS[kind]
    if kind == "frozen":
        sw["bn.running"] = "frozen"
        title = "the running statistics frozen (bn.running = frozen)"
        what = msp.BN_FROZEN
    else:
        sw["bn.running_var"] = "biased"
        title = ("the biased batch variance into the running variance "
                 "(bn.running_var = biased)")
        what = msp.BN_BIASED
    return make(
        "fedpac", "bn-" + kind, "FedPAC on a batch-norm layer list, " + title,
        FEDPAC_BN_TEXT + what, spec, tol, list(flags), dict(mutants),
        msp.bn_covers(kind))


# ---------------------------------------------------------------- lora

import pflref_exact_lora as xlora         # noqa: E402

LORA_ADAM = "lora/worked-layers-mlp-adam.json"
LORA_BN = "lora/bn-fedavg-bn1d.json"


def lora_clips(spec):
    """The lora replay's clip decisions (its own optimizer's CLIP_LOG)."""
    log = []
    xlora.CLIP_LOG = log
    try:
        replay(spec)
    finally:
        xlora.CLIP_LOG = None
    return [coef < 1 for _, _, coef in log]


def lora_clip_acts(spec, exp, tol):
    clipped = lora_clips(spec)
    assert any(clipped) and not all(clipped), clipped


def frozen_vector(rel):
    with open(os.path.join(GOLDEN, rel)) as f:
        v = json.load(f)
    return copy.deepcopy(v["spec"]), v["tolerance"]


def lora_adamw():
    def build(c):
        spec, _ = frozen_vector(LORA_ADAM)
        spec["algorithm"]["hyperparameters"].update(
            {"opt.weight_decay": 0.09375, "opt.clip_norm": c})
        spec["algorithm"]["switches"].update(
            {"opt.method": "adamw", "opt.clip": "norm"})
        return spec
    for c in CLIPS:
        spec = build(c)
        clipped = lora_clips(spec)
        if any(clipped) and not all(clipped):
            break
    else:
        raise AssertionError("lora: no clip threshold acts on some steps only")
    _, tol = frozen_vector(LORA_ADAM)
    tol = dict(tol, basis=tol["basis"] + " The clip's norm over the moving "
               "adapter blocks is taken at 60 digits, as Adam's square roots.")
    return make(
        "lora", "adamw-clip-client",
        "LoRA (FedAvg of the adapters), torch.optim.AdamW(betas = (0.75, "
        "0.875), eps = 0.001, weight_decay = 0.09375) on the adapter, "
        "clip_grad_norm_ at %g, kept per client" % c,
        "LoRA (Hu et al. 2021, lora.method = fedavg) on the layer list, "
        "clients, init and rounds of golden/%s (dense fc1 3 -> 3, relu, dense "
        "fc2 3 -> 2, relu, dense out 2 -> 1, half-squared loss; r = 1, alpha "
        "= 1.5, eta = 0.0625; every target layer's lora_A and lora_B the "
        "optimizer's blocks).  opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.875, opt.eps = 0.001, opt.weight_decay = 0.09375 "
        "(decoupled: q <- q (1 - eta lambda)), opt.clip = norm at c = %g over "
        "every moving adapter block at once (acting on some steps, not on "
        "others), opt.state = client (a client's moments and step counts "
        "carried into its next round)." % (LORA_ADAM, c),
        spec, tol,
        ["weight-decay-form", "clip-scope", "adam-bias-correction",
         "lora-optimizer"],
        {"weight-decay-form": ["decay-form-swap"],
         "clip-scope": ["clip-per-block"],
         "adam-bias-correction": ["adam-no-bias-correction"],
         "lora-optimizer": ["opt-plain-step", "opt-state-reset"]},
        [("opt.method", "adamw"), ("opt.clip", "norm")],
        [lora_clip_acts, optimizer_acts()])


def lora_bn_frozen():
    spec, tol = frozen_vector(LORA_BN)
    spec["algorithm"]["switches"]["bn.running"] = "frozen"
    flags, mutants = msp.BN_FLAGS["frozen"]
    return make(
        "lora", "bn-frozen",
        "LoRA (FedAvg of the adapters) on a batch-norm layer list, the "
        "running statistics frozen (bn.running = frozen)",
        "LoRA (Hu et al. 2021, lora.method = fedavg) on the inputs of "
        "golden/%s (dense fc1 3 -> 4 without bias, batchnorm1d bn1 (eps = "
        "0.03, momentum 0.2), relu, dense fc2 4 -> 1, squared loss; n = 4, 3, "
        "5; r = 1, alpha = 1.5, eta = 0.0625), plain SGD on the adapter.  "
        % LORA_BN + msp.BN_FROZEN,
        spec, tol, list(flags) + ["lora-frozen"],
        dict(mutants, **{"lora-frozen": ["lora-train-w0"]}),
        msp.bn_covers("frozen"))


# ---------------------------------------------------------------- pfedhn

import make_algorithms as malg            # noqa: E402

PFEDHN = "pfedhn/worked-linear-bias.json"
PFEDHN_TEXT = ("pFedHN (Shamsian et al. 2021, Alg. 1, linear hypernetwork with "
               "bias) on the linear model with bias, clients, hypernetwork and "
               "rounds of golden/%s (one client per round, clients 0 and 2 "
               "sampled twice; eta = 0.15, alpha = 0.3, alpha_v = 0.55), split "
               "personal = b: the local steps of l. 6-8 go through the client "
               "optimizer, whose decay scope reads the split's blocks of the "
               "target model.  " % PFEDHN)
SCOPE_MUTANTS = {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"]}


def pfedhn_spec(hyper, switches):
    spec, _ = frozen_vector(PFEDHN)
    spec["algorithm"]["hyperparameters"].update(hyper)
    spec["algorithm"].setdefault("switches", {}).update(switches)
    spec["split"] = {"personal": ["b"]}
    return spec


def pfedhn_adam():
    spec = pfedhn_spec(dict(ADAMW_HYPER, **{"opt.weight_decay": 0.1875}),
                       {"opt.method": "adam", "opt.state": "client",
                        "opt.decay_scope": "shared"})
    return make(
        "pfedhn", "adam-shared-client",
        "pFedHN, the local steps on torch.optim.Adam(betas = (0.75, 0.96875), "
        "eps = 2^-9, weight_decay = 0.1875 on the shared w only) kept per "
        "client",
        PFEDHN_TEXT + "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = "
        "0.96875, opt.eps = 0.001953125, opt.weight_decay = 0.1875 (coupled: "
        "added to the gradient before the moments) with opt.decay_scope = "
        "shared (w decays, the personal b does not), opt.state = client (a "
        "client's moments and step counts carried into its next round).",
        spec, malg.tolerance("at most 3 local steps per round, 5 rounds, "
                             "Adam's square roots", exact=False, atol=1e-13,
                             rtol=1e-12),
        ["adam-bias-correction", "weight-decay-scope",
         "optimizer-state-lifetime"],
        dict(SCOPE_MUTANTS,
             **{"adam-bias-correction": ["adam-no-bias-correction"]}),
        [("opt.method", "adam"), ("opt.decay_scope", "shared")],
        [optimizer_acts()])


def pfedhn_personal():
    spec = pfedhn_spec({"opt.momentum": 0.59375, "opt.weight_decay": 0.40625},
                       {"opt.state": "server", "opt.decay_scope": "personal"})
    return make(
        "pfedhn", "momentum-personal-server",
        "pFedHN, the local steps on torch.optim.SGD(momentum = 0.59375, "
        "weight_decay = 0.40625 on the personal b only), one object carried "
        "from client to client",
        PFEDHN_TEXT + "opt.momentum = 0.59375, opt.weight_decay = 0.40625 "
        "(coupled) with opt.decay_scope = personal (b decays, the shared w "
        "does not), opt.state = server (one optimizer carried from round to "
        "round, client to client).",
        spec, malg.tolerance("at most 3 local steps per round, 5 rounds",
                             atol=1e-13, rtol=1e-12),
        ["weight-decay-scope", "optimizer-state-lifetime"],
        dict(SCOPE_MUTANTS),
        [("opt.decay_scope", "personal")],
        [optimizer_acts()])


PFEDHN_BN = "layers/local-bn1d-mlp-two-rounds.json"
PFEDHN_BN_TEXT = (
    "pFedHN (Shamsian et al. 2021, Alg. 1, linear hypernetwork with bias, "
    "e = 2) on the batch-norm layer list and clients of golden/%s (dense fc1 "
    "3 -> 4 without bias, batchnorm1d bn1 (eps = 0.03, momentum 0.2), relu, "
    "dense fc2 4 -> 1, squared loss; n = 4, 3, 5); b_h = that vector's w0, "
    "W_h row p = ((5p mod 11) - 5)/64, ((7p mod 13) - 6)/128, v = (0.5, "
    "-0.25), (0.375, 0.625), (-0.75, 0.5); eta = 0.0859375, alpha = 0.3, "
    "alpha_v = 0.55; rounds: client 0, 1, 0, 2 (batches of at least two).  "
    "The running statistics r_mu, r_v are entries of theta: a training "
    "pass moves them in theta~, so in delta theta and the hypernetwork's "
    "step.  " % PFEDHN_BN)


def pfedhn_bn(kind):
    layers, tol = frozen_vector(PFEDHN_BN)
    P = len(layers["init"]["w"])
    W = [[((p * 5) % 11 - 5) / 64, ((p * 7) % 13 - 6) / 128]
         for p in range(P)]
    sw = {"bn.running": "frozen"} if kind == "frozen" else \
        {"bn.running_var": "biased"}
    algorithm = {"name": "pfedhn",
                 "hyperparameters": {"eta": 0.0859375, "alpha": 0.3,
                                     "pfedhn.alpha_v": 0.55},
                 "switches": sw}
    init = {"kind": "zeros", "hypernetwork": {
        "W": W, "b": layers["init"]["w"],
        "v": [[0.5, -0.25], [0.375, 0.625], [-0.75, 0.5]]}}
    rounds = [{"clients": [0], "batches": [[[0, 2], [1, 3]]]},
              {"clients": [1], "batches": [[[2, 0, 1]]]},
              {"clients": [0], "batches": [[[3, 1], [2, 0]]]},
              {"clients": [2], "batches": [[[4, 1], [0, 3, 2]]]}]
    spec = pg.given_spec("", None, layers["model"],
                         layers["problem"]["clients"], init, algorithm, rounds)
    flags, mutants = msp.BN_FLAGS[kind]
    what = msp.BN_FROZEN if kind == "frozen" else msp.BN_BIASED
    title = ("the running statistics frozen (bn.running = frozen)"
             if kind == "frozen" else "the biased batch variance into the "
             "running variance (bn.running_var = biased)")
    return make(
        "pfedhn", "bn-" + kind,
        "pFedHN on a batch-norm layer list, " + title,
        PFEDHN_BN_TEXT + what,
        spec, dict(tol, basis=tol["basis"] + " The hypernetwork's step adds "
                   "one product per entry and round (four rounds)."),
        list(flags) + ["pfedhn-sign"],
        dict(mutants, **{"pfedhn-sign": ["hn-ascent", "hn-embed-ascent"]}),
        msp.bn_covers(kind))


# ---------------------------------------------------------------- fedrod

sys.path.insert(0, os.path.join(GOLDEN, "fedrod"))
import make_fedrod as mrod                # noqa: E402

ROD_OPT = {"fedrod-optimizers": ["opt-generic-plain", "opt-personal-plain"],
           "optimizer-slots-shared": ["slots-shared"]}


def fedrod_tolerance(clip=False):
    tol = dict(mrod.TOL)
    tol["basis"] = (mrod.TOL["basis"] + " The optimizers add a momentum "
                    "buffer or velocity (mu < 0.75) per tensor" +
                    (", and the clip's norm at 60 digits" if clip else "") +
                    ": a few roundings more per step, far below the "
                    "tolerance.")
    return tol


def fedrod_spec(model, w0, rounds, eta, hyper, switches):
    algorithm = {"name": "fedrod", "hyperparameters": dict({"eta": eta}, **hyper),
                 "switches": dict(switches)}
    return pg.given_spec("", None, model, mrod.CLIENTS,
                         {"kind": "given", "w": w0}, algorithm, rounds)


def fedrod_classical():
    spec = fedrod_spec(
        mrod.MLP, mrod.W_MLP, mrod.ROUNDS, 0.3,
        {"opt.momentum": 0.59375, "opt.weight_decay": 0.15625,
         "lr.gamma": 0.5625, "lr.step_rounds": 2},
        {"opt.momentum_form": "classical", "opt.weight_decay_form": "decoupled",
         "opt.decay_scope": "shared", "opt.state": "client",
         "lr.schedule": "step"})
    return make(
        "fedrod", "classical-shared-step-client",
        "FedRoD, mlp 2-3-3, the generic model and the personal head on "
        "classical momentum v <- 0.59375 v - eta d, decoupled weight decay "
        "0.15625 on the generic model only, a pair per client kept across "
        "its rounds, step decay 0.5625 every 2 rounds",
        "FedRoD (Chen and Chao, ICLR 2022, Alg. 1; two optimizers per "
        "client, the generic model's (l. 7) and the personal head's (l. "
        "8)).  The clients, rounds (S = {1}, {0, 2}, {0, 1}) and w0 of "
        "fedrod/mlp/paper; eta = 0.3; the paper's reading.  "
        + CLASSICAL_TEXT + ", opt.weight_decay = 0.15625 with "
        "opt.weight_decay_form = decoupled (theta <- theta (1 - eta lambda) "
        "before the step) and opt.decay_scope = shared (the generic model's "
        "tensors decay, phi_P's do not), opt.state = client (a client's two "
        "optimizers carried into its next round), lr.schedule = step with "
        "lr.gamma = 0.5625 and lr.step_rounds = 2 (round 2's eta times "
        "0.5625, both optimizers).",
        spec, fedrod_tolerance(),
        ["momentum-form", "weight-decay-form", "weight-decay-scope",
         "optimizer-state-lifetime", "lr-schedule", "fedrod-optimizers",
         "optimizer-slots-shared"],
        dict(ROD_OPT, **{
            "momentum-form": ["momentum-form-swap"],
            "weight-decay-form": ["decay-form-swap"],
            "weight-decay-scope": ["decay-scope-flip", "decay-scope-all"],
            "lr-schedule": ["lr-ignored", "lr-shifted", "lr-head-const"]}),
        [("opt.momentum_form", "classical"),
         ("opt.weight_decay_form", "decoupled"),
         ("opt.decay_scope", "shared"), ("lr.schedule", "step")],
        [msp.decay_matters, optimizer_acts()])


def fedrod_clip():
    c, spec = with_clip(lambda c: fedrod_spec(
        mrod.LAYERS_BN, mrod.W_LAYERS_BN, mrod.ROUNDS_BN, 0.25,
        {"opt.momentum": 0.71875, "opt.clip_norm": c},
        {"opt.nesterov": "on", "opt.clip": "norm", "opt.state": "server",
         "bn.running": "frozen"}))
    flags, mutants = msp.BN_FLAGS["frozen"]
    return make(
        "fedrod", "nesterov-clip-server-bn-frozen",
        "FedRoD on a layer list with batch normalisation, SGD with Nesterov "
        "momentum 0.71875 and clip_grad_norm_ at %g, the pair carried from "
        "client to client, running statistics frozen" % c,
        "FedRoD (Chen and Chao, ICLR 2022, Alg. 1; two optimizers per "
        "client).  The clients, rounds (batches of at least two) and w0 of "
        "fedrod/layers/bn-paper (dense fc1 2 -> 4, batchnorm1d bn1 (eps "
        "2^-5, momentum 0.2), relu, dense out 4 -> 3); eta = 0.25; the "
        "paper's reading.  opt.momentum = 0.71875, opt.nesterov = on, "
        "opt.clip = norm at c = %g (each step's gradient over the tensors it "
        "moves: the generic model's at l. 7, phi_P's at l. 8; acting on some "
        "steps, not on others), opt.state = server (the generic model's and "
        "the personal head's optimizers each carried from client to "
        "client).  " % c + msp.BN_FROZEN,
        spec, fedrod_tolerance(True),
        ["nesterov-momentum", "clip-scope", "optimizer-state-lifetime",
         "fedrod-optimizers", "optimizer-slots-shared"] + list(flags),
        dict(ROD_OPT, **dict(mutants, **{
            "nesterov-momentum": ["nesterov-ignored"],
            "clip-scope": ["clip-per-block"]})),
        [("opt.clip", "norm")] + msp.bn_covers("frozen"),
        [msp.clip_acts, optimizer_acts()])


# ---------------------------------------------------------------- fedamp

FEDAMP = "fedamp/worked-paper-ld.json"


def fedamp_step():
    spec, tol = frozen_vector(FEDAMP)
    spec["algorithm"]["hyperparameters"].update(
        {"lr.gamma": 0.5625, "lr.step_rounds": 2})
    spec["algorithm"]["switches"]["lr.schedule"] = "step"
    return make(
        "fedamp", "step-decay",
        "FedAMP, the clients' step size on a step decay 0.5625 every 2 rounds",
        "FedAMP (Huang et al., AAAI 2021, Alg. 1) on the inputs of golden/%s "
        "(linear model, three rounds; eta = 0.1, alpha_k = 0.15, lambda = "
        "0.21, sigma = 0.6), lr.schedule = step with lr.gamma = 0.5625 and "
        "lr.step_rounds = 2: rounds 0 and 1 at eta, round 2 at 0.5625 eta."
        % FEDAMP,
        spec, tol, ["lr-schedule"],
        {"lr-schedule": ["lr-ignored", "lr-shifted"]},
        [("lr.schedule", "step")], [msp.decay_matters])


# ---------------------------------------------------------------- inherent

def inherent():
    """The pairs golden/coincidences.py lists as inherent for these
    algorithms, shown on the exact replays: FedRecon's optimizer steps g,
    the split's shared blocks, alone, so opt.decay_scope = shared is all's
    run and personal is the run without decay; FedRecon, LoRA and pFedHN
    take no lr.*, and at their constant step size the classical momentum
    form is the pytorch form (the same numbers)."""
    def alt(spec, hyper=None, switches=None, drop=()):
        out = copy.deepcopy(spec)
        out["algorithm"]["hyperparameters"].update(hyper or {})
        out["algorithm"]["switches"].update(switches or {})
        for k in drop:
            out["algorithm"]["hyperparameters"].pop(k)
        return out
    recon = fedrecon_spec(dict(SGD_HYPER, **{"opt.clip_norm": 0.875}),
                          SGD_SWITCHES)
    base = replay(recon)
    assert replay(alt(recon, switches={"opt.decay_scope": "shared"})) == base
    assert replay(alt(recon, switches={"opt.decay_scope": "personal"})) == \
        replay(alt(recon, drop=["opt.weight_decay"]))
    assert replay(alt(recon, drop=["opt.weight_decay"])) != base
    lora, _ = frozen_vector("lora/worked-layers-mlp-sgd-server.json")
    hn = pfedhn_spec({"opt.momentum": 0.59375, "opt.weight_decay": 0.40625},
                     {"opt.state": "server"})
    for spec in (recon, lora, hn):
        torch = alt(spec, switches={"opt.nesterov": "off"})
        classical = alt(torch, switches={"opt.momentum_form": "classical"})
        assert replay(classical) == replay(torch), spec["algorithm"]["name"]


MAKERS = (apple_sgd, apple_adamw, apple_classical, fedrecon_sgd,
          fedrecon_adamw, fedpac_adamw, fedpac_adam, fedpac_classical,
          lambda: fedpac_bn("frozen"), lambda: fedpac_bn("biased"),
          lora_adamw, lora_bn_frozen, pfedhn_adam, pfedhn_personal,
          lambda: pfedhn_bn("frozen"), lambda: pfedhn_bn("biased"),
          fedrod_classical, fedrod_clip, fedamp_step)


def main():
    inherent()
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
