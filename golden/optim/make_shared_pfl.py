#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared-switch golden vectors (issue 33 §3): for the algorithms whose
own vectors did not yet run an opt.* / lr.* value coincidence-free
(golden/coincidences.py, _NOT_YET), a few small vectors of that algorithm
that each run several of those values at once, each free of the audit's
shared coincidences (SHARED_RULES): β ≠ η, 1 − η; β₁ ≠ β₂; λ ≠ every
constant of the algorithm; γ ≠ 1 and ≠ every other constant; a step
decay that fires inside the rounds; a clip that acts on some steps and
not on others; an optimizer state that crosses a client update; a decay
scope that excludes a block that exists (a bias, a split).

Each vector's spec is run, as written, through its algorithm's exact
replay (golden/audit.py's replay: pflref_exact.py for local, finetune,
ditto, pfedme and prox, pflref_exact_interp.py for interp,
pflref_exact_perfedavg.py for perfedavg, pflref_exact_optim.py for fedavg), whose local
steps go through golden/pflref_exact_optim.py's optimizer (the slots of
docs/optimizers.md, "Where the state lives"): exact fractions, square
roots (the clip norm, Adam) at 60 decimal digits.  The generator asserts,
per vector, what makes it able to fail: each flagged bug moves a value
far outside the tolerance (check_mutants), the three state lifetimes give
three different runs, the clip acts on some steps and not on others, the
decay changes the run (the same spec at a constant step is another run),
and the audit finds none of the shared coincidences for the values the
vector is meant to cover (covered_free).

Vectors (ids optim/<algorithm>/<name>; file <algorithm>-<name>.json).  On
make_algorithms.py's linear model with bias (d = 2, squared loss, three
clients of 3, 4, 5 samples, dyadic data), S = {0, 1}, {1, 2}, {0, 2} (pFedMe:
every client trains, S^t aggregated):
  {local,perfedavg}/nesterov-clip-step-server
                               Nesterov, decoupled decay on the weights
                               only, a clip acting on some steps, one
                               state carried from client to client, a
                               step decay firing at round 2 (Per-FedAvg:
                               the problem of its momentum vector)
  finetune/classical-clip-step-client   classical momentum with the same
                               decay, clip and step decay, kept per client
On golden/layers/make_bn.py's batch-norm MLP (clients of 4, 3, 5, two
rounds S = {0, 1}, {1, 2}), with bn.running = frozen or bn.running_var =
biased:
  local/classical-shared-client-bn-biased   classical momentum kept per
                               client under an exponential decay, coupled
                               decay on the shared blocks (fc2 personal)
  local/adam-personal-client-bn-frozen   Adam kept per client, decay on
                               the personal fc2 only
  finetune/adamw-client-decay-bn-frozen  AdamW kept per client,
                               exponential decay
  finetune/adam-server-bn-biased   Adam carried from client to client
  ditto/adam-personal-client-bn-biased   Adam kept per client, decay on
                               the personal fc2 only
  prox/adamw-client-decay-eta-p-bn-biased   AdamW kept per client, eta_p
                               decayed (lr.scope = eta_p)
  pfedme/nesterov-clip-step-server-bn-biased,
  interp/nesterov-clip-step-server-bn-biased,
  prox/nesterov-clip-step-server-bn-frozen   the Nesterov vector's
                               switches on the batch-norm MLP, a third
                               round added (pFedMe: its own layers
                               vector's inputs, every client training)
Further pairs (the audit's not-yet-covered ones of these algorithms and
fedavg), on the same batch-norm MLP unless named:
  ditto/momentum-shared-client-bn-frozen   torch momentum kept per client,
                               decay on the shared fc1, bn1 only
  fedavg/adam-personal-client-bn-biased   Adam kept per client, decay on
                               the personal fc2 only (the split read by
                               the decay scope alone)
  fedavg/classical-shared-server-bn-frozen   classical momentum carried,
                               exponential decay, decay on fc1, bn1
  pfedme/adamw-client-decay-bn-frozen,
  pfedme/classical-server-decay-bn-biased   the inner solver on AdamW
                               kept per client / classical momentum
                               carried, exponential decay
  local/adamw-clip-step-server  (linear) AdamW carried, an acting clip,
                               a step decay
  prox/adam-server-bn-frozen, prox/classical-client-decay-eta-p-bn-biased
  interp/adam-personal-client-decay-bn-frozen,
  interp/classical-shared-server-decay-bn-biased
  perfedavg/adamw-personal-client, perfedavg/classical-shared-server-decay
                               (Per-FedAvg's linear problem, a split b or
                               w: the personal / shared side the opposite
                               of opt.decay_scope = weights)

    /usr/bin/python3 golden/optim/make_shared_pfl.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import audit                              # noqa: E402
import coincidences as co                 # noqa: E402
import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402
from make_algorithms import (CLIENTS, INIT, LINEAR,  # noqa: E402
                             NESTEROV_CLIP_STEP_MUTANTS, POST, ROUNDS,
                             base_spec, clip_decisions)

GENERATOR = ("golden/optim/make_shared_pfl.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (golden/audit.py replay; "
             "exact fractions, square roots at 60 decimal digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_, "
          "torch.optim.lr_scheduler.StepLR / ExponentialLR stepped once a "
          "round; docs/optimizers.md (the slots and the state lifetimes); "
          "each algorithm's paper as in its own vectors")


def replay(spec, bugs=frozenset()):
    return audit.replay(spec, frozenset(bugs))


def tolerance(steps, sqrt):
    head = ("fp64 reference in fixed order against exact rationals of the "
            "binary inputs" + (", the square roots (clip norms, Adam) and the "
                               "values after them at 60 decimal digits (error "
                               "< 1e-58)" if sqrt else ""))
    return {"atol": 1e-12, "rtol": 1e-12,
            "basis": head + ": " + steps + "; each optimizer step a few "
            "roundings of terms below 10 in magnitude, momentum (mu < 0.9) "
            "and Adam's normalised steps bounded, so the accumulated error "
            "stays below 1e-13; every flagged bug moves some value by more "
            "than 1e3 times the tolerance."}


def lifetimes_differ(spec, exp, tol):
    """opt.state = reset, client and server: three different runs."""
    life = po.config(spec["algorithm"])["opt.state"]
    for other in ("reset", "client", "server"):
        if other != life:
            alt = copy.deepcopy(spec)
            alt["algorithm"]["switches"]["opt.state"] = other
            assert pg.detects(exp, replay(alt), tol) is not None, other


def clip_acts(spec, exp, tol):
    """The clip acts on some steps and not on others (never within 1e-6 of
    its threshold: pflref_exact_optim asserts that)."""
    clipped = [coef < 1 for _, _, coef in clip_decisions(replay, spec)]
    assert any(clipped) and not all(clipped), clipped


def decay_matters(spec, exp, tol):
    """The learning-rate decay changes the run: the same spec at a
    constant step is another run."""
    alt = copy.deepcopy(spec)
    alt["algorithm"]["switches"].pop("lr.schedule")
    for k in ("lr.gamma", "lr.step_rounds"):
        alt["algorithm"]["hyperparameters"].pop(k, None)
    assert pg.detects(exp, replay(alt), tol) is not None


def scope_matters(spec, exp, tol):
    """opt.decay_scope reads the block it names: the run differs from the
    same spec with the decay on every block and from the one without
    decay."""
    for key, val in (("opt.decay_scope", None), ("opt.weight_decay", None)):
        alt = copy.deepcopy(spec)
        alt["algorithm"]["switches"].pop("opt.decay_scope")
        if key == "opt.weight_decay":
            alt["algorithm"]["hyperparameters"].pop(key)
        assert pg.detects(exp, replay(alt), tol) is not None, key


def covered_free(covers):
    """The audit's shared rules find no coincidence for each (switch,
    value) the vector is meant to cover."""
    def check(spec, exp, tol):
        name, sw, hp = co.effective(spec)
        for key, val in covers:
            assert sw.get(key) == val, (key, val)
            found = co.shared_coincidences(spec, sw, hp, key, val)
            assert not found, (name, key, val, found)
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
    if "optimizer-slots-shared" in flags:
        mutants["optimizer-slots-shared"] = ["slots-shared"]
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    if "opt.decay_scope" in spec["algorithm"]["switches"]:
        checks = [scope_matters] + list(checks)
    for check in [lifetimes_differ, covered_free(covers)] + list(checks):
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, title, prov, flags,
                                                  spec, tol, exp)


PROBLEM = ("Linear model with bias (d = 2), squared loss, three clients (n = "
           "3, 4, 5), S = {0, 1}, {1, 2}, {0, 2} (the problem of "
           "golden/optim/make_algorithms.py).  ")
STEPS = "at most 3 local steps per client update, 3 rounds"

# The SGD vector's switches (Nesterov, decoupled decay on the weights, a
# clip, the state carried, a step decay firing at round 2) and the bugs
# each flag is shown to catch
SGD_HYPER = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
SGD_SWITCHES = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step"}
SGD_FLAGS = ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
             "clip-scope", "optimizer-state-lifetime", "lr-schedule"]
SGD_MUTANTS = NESTEROV_CLIP_STEP_MUTANTS
SGD_TEXT = ("opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
            "0.15625 with opt.weight_decay_form = decoupled (theta <- theta "
            "(1 - eta lam) before the step) and opt.decay_scope = weights (the "
            "bias b undecayed), opt.clip = norm at c = %g (acting on some steps, "
            "not on others), opt.state = server (one optimizer carried from "
            "client to client in training order), lr.schedule = step with "
            "lr.gamma = 0.5625 and lr.step_rounds = 2 (round 2's step sizes "
            "times 0.5625).")
SGD_COVERS = [("opt.nesterov", "on"), ("opt.weight_decay_form", "decoupled"),
              ("opt.decay_scope", "weights"), ("opt.clip", "norm"),
              ("opt.state", "server"), ("lr.schedule", "step")]
ADAM_HYPER = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125}


def spec_of(alg, hyper, switches, rounds=ROUNDS, split=None, post=None):
    algorithm = {"name": alg, "hyperparameters": hyper, "switches": switches}
    return base_spec(LINEAR, CLIENTS, INIT, algorithm, rounds, split, post)


# The batch-norm model of golden/layers/make_bn.py (dense fc1 3 -> 4 without
# bias, batchnorm1d bn1 (eps = 0.03, momentum rho = 0.2), relu, dense fc2 4
# -> 1), squared loss, three clients of 4, 3, 5 samples, two rounds S = {0,
# 1}, {1, 2}: the inputs (problem, init, schedule) of the frozen vector
# named, under the algorithm given here.  Its running statistics r_mu, r_v
# are entries of the model (recorded in every trajectory record), moved by
# every training forward (rho = 0.2) unless bn.running = frozen.
BN_TEXT = ("Layer list dense fc1 (3 -> 4, no bias) -> batchnorm1d bn1 (eps = "
           "0.03, momentum 0.2) -> relu -> dense fc2 (4 -> 1), squared loss, "
           "three clients (n = 4, 3, 5), S = {0, 1}, {1, 2} (the inputs of "
           "golden/%s).  ")
BN_BIASED = ("bn.running_var = biased: r_v <- 0.8 r_v + 0.2 s^2 with the "
             "batch's biased variance (not m/(m - 1) s^2).")
BN_FROZEN = ("bn.running = frozen: the forward normalises with the batch's "
             "statistics, r_mu and r_v keep their initial values.")
BN_FLAGS = {"biased": (["bn-running-update"],
                       {"bn-running-update": ["running-var-flipped"]}),
            "frozen": (["bn-running-moved"], {"bn-running-moved": ["running-moved"]})}


def bn_spec(rel, alg, hyper, switches, bn, split=None):
    """The frozen layers vector rel's inputs under algorithm alg, with
    bn.running = frozen or bn.running_var = biased (bn)."""
    spec = copy.deepcopy(audit_frozen(rel))
    switches = dict(switches)
    if bn == "biased":
        switches["bn.running_var"] = "biased"
    else:
        switches["bn.running"] = "frozen"
    spec["algorithm"] = {"name": alg, "hyperparameters": hyper,
                         "switches": switches}
    if split is not None:
        spec["split"] = split
    return spec


def audit_frozen(rel):
    """The spec of a frozen vector (its inputs only; the expected values
    are not read)."""
    import json
    with open(os.path.join(GOLDEN, rel)) as f:
        return json.load(f)["spec"]


def bn_covers(bn):
    return [("bn.running_var", "biased")] if bn == "biased" else \
        [("bn.running", "frozen")]


# ---------------------------------------------------------------- local

def local_sgd():
    c = 1.375
    spec = spec_of("local", dict(SGD_HYPER, eta=0.1875, **{"opt.clip_norm": c}),
                   dict(SGD_SWITCHES))
    return make(
        "local", "nesterov-clip-step-server",
        "Local-only training, torch.optim.SGD(momentum = 0.71875, nesterov = "
        "True, weight_decay = 0.15625 decoupled, on the weights only), "
        "clip_grad_norm_ at %g, one object carried from client to client, "
        "step decay 0.5625 every 2 rounds" % c,
        "Local-only training (each client's v_i on its own data, eta = "
        "0.1875).  " + PROBLEM + SGD_TEXT % c,
        spec, tolerance(STEPS + ", clipping norms at 60 digits", True),
        SGD_FLAGS, SGD_MUTANTS, SGD_COVERS, [clip_acts, decay_matters])


def local_classical():
    rel = "layers/local-bn1d-mlp-two-rounds.json"
    spec = bn_spec(rel, "local", {"eta": 0.0859375, "opt.momentum": 0.59375,
                                  "opt.weight_decay": 0.3125, "lr.gamma": 0.78125},
                   {"opt.momentum_form": "classical", "opt.state": "client",
                    "lr.schedule": "exponential", "opt.decay_scope": "shared"},
                   "biased", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "local", "classical-shared-client-bn-biased",
        "Local-only training on a batch-norm MLP, classical momentum v <- "
        "0.59375 v - eta d kept per client, exponential decay 0.78125, weight "
        "decay 0.3125 on the shared blocks only (split: fc2 personal), biased "
        "running variance",
        "Local-only training (eta = 0.0859375) with a split personal = fc2.  "
        + BN_TEXT % rel + "opt.momentum = 0.59375, opt.momentum_form = "
        "classical (eta inside the velocity: unlike torch's form once eta "
        "decays), opt.state = client (a client's velocity carried into its "
        "next round), lr.schedule = exponential with lr.gamma = 0.78125, "
        "opt.weight_decay = 0.3125 (coupled) with opt.decay_scope = shared: "
        "fc1 and bn1's weight and bias decay, fc2 does not.  " + BN_BIASED,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, "
                        "the batch norm's square roots", True),
        ["momentum-form", "weight-decay-scope", "optimizer-state-lifetime",
         "lr-schedule"] + flags,
        dict(mutants, **{"momentum-form": ["momentum-form-swap"],
                         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
                         "lr-schedule": ["lr-ignored", "lr-shifted"]}),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "shared"),
         ("opt.state", "client"), ("lr.schedule", "exponential")]
        + bn_covers("biased"), [decay_matters])


def local_adam():
    rel = "layers/local-bn1d-mlp-two-rounds.json"
    spec = bn_spec(rel, "local", dict(ADAM_HYPER, eta=0.0859375,
                                      **{"opt.weight_decay": 0.34375}),
                   {"opt.method": "adam", "opt.state": "client",
                    "opt.decay_scope": "personal"},
                   "frozen", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "local", "adam-personal-client-bn-frozen",
        "Local-only training on a batch-norm MLP, torch.optim.Adam(betas = "
        "(0.75, 0.96875), eps = 2^-9, weight_decay = 0.34375 on the personal "
        "fc2 only) kept per client, running statistics frozen",
        "Local-only training (eta = 0.0859375) with a split personal = fc2.  "
        + BN_TEXT % rel + "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = "
        "0.96875, opt.eps = 0.001953125, opt.weight_decay = 0.34375 (coupled: "
        "added to the gradient before the moments) with opt.decay_scope = "
        "personal: fc2 decays, fc1 and bn1 do not; opt.state = client (a "
        "client's moments and step counts carried into its next round).  "
        + BN_FROZEN,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, "
                        "Adam's and the batch norm's square roots", True),
        ["adam-bias-correction", "weight-decay-form", "weight-decay-scope",
         "optimizer-state-lifetime"] + flags,
        dict(mutants, **{"adam-bias-correction": ["adam-no-bias-correction"],
                         "weight-decay-form": ["decay-form-swap"],
                         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"]}),
        [("opt.method", "adam"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")] + bn_covers("frozen"))


# ---------------------------------------------------------------- finetune

FT_HYPER = {"eta": 0.125, "eta_ft": 0.109375, "mu_ft": 0.375}
FT_TEXT = ("FedAvg rounds (eta = 0.125, samples weights), then each client "
           "fine-tunes the final w on its own batches (eta_ft = 0.109375, "
           "proximal mu_ft = 0.375 towards w, full scope); two optimizer "
           "slots per client (the training's and the fine-tuning's).  ")
FT_STEPS = STEPS + ", 3 fine-tuning updates of at most 3 steps"


def finetune_classical():
    c = 1.125
    spec = spec_of("finetune", dict(FT_HYPER, **{
        "opt.momentum": 0.59375, "opt.weight_decay": 0.15625,
        "opt.clip_norm": c, "lr.gamma": 0.5625, "lr.step_rounds": 2}),
        {"opt.momentum_form": "classical", "opt.weight_decay_form": "decoupled",
         "opt.decay_scope": "weights", "opt.clip": "norm",
         "opt.state": "client", "lr.schedule": "step"}, post=POST)
    return make(
        "finetune", "classical-clip-step-client",
        "Fine-tuning after FedAvg, classical momentum v <- 0.59375 v - eta d, "
        "decoupled weight decay 0.15625 on the weights only, clip_grad_norm_ "
        "at %g, kept per client, step decay 0.5625 every 2 rounds" % c,
        FT_TEXT + PROBLEM + "opt.momentum = 0.59375, opt.momentum_form = "
        "classical (eta inside the velocity: unlike torch's form once eta "
        "decays), opt.weight_decay = 0.15625 with opt.weight_decay_form = "
        "decoupled (theta <- theta (1 - eta lam) before the step) and "
        "opt.decay_scope = weights (b undecayed), opt.clip = norm at c = %g "
        "(acting on some steps, not on others), opt.state = client (each "
        "slot's velocity carried into the client's next update), lr.schedule "
        "= step with lr.gamma = 0.5625 and lr.step_rounds = 2 (round 2's "
        "step size times 0.5625)." % c,
        spec, tolerance(FT_STEPS + ", clipping norms at 60 digits", True),
        ["momentum-form", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "optimizer-state-lifetime", "optimizer-slots-shared",
         "lr-schedule"],
        {"momentum-form": ["momentum-form-swap"],
         "weight-decay-form": ["decay-form-swap"],
         "weight-decay-scope": ["decay-scope-all"],
         "clip-scope": ["clip-per-block"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [("opt.momentum_form", "classical"), ("opt.weight_decay_form", "decoupled"),
         ("opt.decay_scope", "weights"), ("opt.clip", "norm"),
         ("opt.state", "client"), ("lr.schedule", "step")],
        [clip_acts, decay_matters])


FT_BN = "layers/finetune-bn1d-mlp-prox-full.json"
FT_BN_HYPER = {"eta": 0.0859375, "eta_ft": 0.0703125, "mu_ft": 0.5}
FT_BN_TEXT = ("FedAvg rounds (eta = 0.0859375, samples weights), then each "
              "client fine-tunes the final w on its own batches (eta_ft = "
              "0.0703125, proximal mu_ft = 0.5 towards w, full scope); two "
              "optimizer slots per client (the training's and the "
              "fine-tuning's).  ")


def finetune_adamw():
    spec = bn_spec(FT_BN, "finetune", dict(FT_BN_HYPER, **dict(ADAM_HYPER, **{
        "opt.weight_decay": 0.09375, "lr.gamma": 0.6875})),
        {"opt.method": "adamw", "opt.state": "client",
         "lr.schedule": "exponential"}, "frozen")
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "finetune", "adamw-client-decay-bn-frozen",
        "Fine-tuning after FedAvg on a batch-norm MLP, torch.optim.AdamW(betas "
        "= (0.75, 0.96875), eps = 2^-9, weight_decay = 0.09375) kept per "
        "client, exponential decay 0.6875, running statistics frozen",
        FT_BN_TEXT + BN_TEXT % FT_BN + "opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375, opt.state = client (each slot's moments and step counts "
        "carried into the client's next update), lr.schedule = exponential "
        "with lr.gamma = 0.6875.  " + BN_FROZEN,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, "
                        "the fine-tuning, Adam's and the batch norm's square "
                        "roots", True),
        ["weight-decay-form", "adam-bias-correction", "optimizer-state-lifetime",
         "optimizer-slots-shared", "lr-schedule"] + flags,
        dict(mutants, **{"weight-decay-form": ["decay-form-swap"],
                         "adam-bias-correction": ["adam-no-bias-correction"],
                         "lr-schedule": ["lr-ignored", "lr-shifted"]}),
        [("opt.method", "adamw"), ("lr.schedule", "exponential")]
        + bn_covers("frozen"), [decay_matters])


def finetune_adam():
    spec = bn_spec(FT_BN, "finetune", dict(FT_BN_HYPER, **ADAM_HYPER),
                   {"opt.method": "adam", "opt.state": "server"}, "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "finetune", "adam-server-bn-biased",
        "Fine-tuning after FedAvg on a batch-norm MLP, torch.optim.Adam(betas "
        "= (0.75, 0.96875), eps = 2^-9), each slot one object carried from "
        "client to client, biased running variance",
        FT_BN_TEXT + BN_TEXT % FT_BN + "opt.method = adam, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.state = server (the "
        "training's and the fine-tuning's optimizer each one object for every "
        "client, in training order).  " + BN_BIASED,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, "
                        "the fine-tuning, Adam's and the batch norm's square "
                        "roots", True),
        ["adam-bias-correction", "optimizer-state-lifetime",
         "optimizer-slots-shared"] + flags,
        dict(mutants, **{"adam-bias-correction": ["adam-no-bias-correction"]}),
        [("opt.method", "adam"), ("opt.state", "server")] + bn_covers("biased"))


# ---------------------------------------------------------------- ditto

def ditto_adam():
    rel = "layers/ditto-bn1d-mlp-two-rounds.json"
    spec = bn_spec(rel, "ditto", dict(ADAM_HYPER, eta=0.0703125, **{
        "lambda": 0.375, "opt.weight_decay": 0.34375}),
        {"opt.method": "adam", "opt.state": "client",
         "opt.decay_scope": "personal"}, "biased", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "ditto", "adam-personal-client-bn-biased",
        "Ditto on a batch-norm MLP, both solvers on torch.optim.Adam(betas = "
        "(0.75, 0.96875), eps = 2^-9, weight_decay = 0.34375 on the personal "
        "fc2 only), two per client kept across rounds, biased running variance",
        "Ditto (Li et al. 2021, Alg. 1; FedAvg global solver, samples "
        "weights), eta = 0.0703125, lambda = 0.375, a split personal = fc2 "
        "(read by opt.decay_scope only); two optimizers per client (PFLlib "
        "clientditto.py's optimizer for w_k, poptimizer for v_k).  "
        + BN_TEXT % rel + "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = "
        "0.96875, opt.eps = 0.001953125, opt.weight_decay = 0.34375 (coupled) "
        "with opt.decay_scope = personal: fc2 decays, fc1 and bn1 do not; "
        "opt.state = client.  " + BN_BIASED,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, a "
                        "personal and a global step per batch, Adam's and the "
                        "batch norm's square roots", True),
        ["adam-bias-correction", "weight-decay-scope",
         "optimizer-state-lifetime", "optimizer-slots-shared", "prox-sign"]
        + flags,
        dict(mutants, **{"adam-bias-correction": ["adam-no-bias-correction"],
                         "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
                         "prox-sign": ["prox-plus"]}),
        [("opt.method", "adam"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")] + bn_covers("biased"))


# ---------------------------------------------------------------- pfedme, prox

def pfedme_sgd():
    rel = "pfedme/layers-bn1d-mlp-update.json"
    c = 1.875
    spec = bn_spec(rel, "pfedme", dict(SGD_HYPER, **{
        "eta": 0.171875, "lambda": 0.875, "eta_p": 0.09375, "K": 2,
        "beta": 0.8125, "opt.clip_norm": c}), dict(SGD_SWITCHES), "biased")
    # a third round (the step decay fires at round 2)
    spec["schedule"]["rounds"].append(
        {"clients": [0, 1, 2], "selected": [0, 1],
         "batches": [[[2, 3], [0, 1]], [[1, 0], [2, 1]], [[3, 0, 4], [2, 1]]]})
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "pfedme", "nesterov-clip-step-server-bn-biased",
        "pFedMe on a batch-norm MLP, the inner solver on torch.optim.SGD("
        "momentum = 0.71875, nesterov = True, weight_decay = 0.15625 "
        "decoupled, not on biases and batch-norm parameters), clip_grad_norm_ "
        "at %g, one object carried from client to client, step decay 0.5625 "
        "every 2 rounds, biased running variance" % c,
        "pFedMe (Dinh et al. 2020, Alg. 1; eta = 0.171875, lambda = 0.875, "
        "eta_p = 0.09375, K = 2 inner steps, beta = 0.8125), every client "
        "training in each round (R = 2 local rounds), S = {0, 2}, {1, 2}, "
        "{0, 1} aggregated; the inner solver of l. 7 on d = grad f_i(theta; "
        "D) + lambda (theta - w_{i,r}) is the optimizer (docs/optimizers.md).  "
        "Layer list dense fc1 (3 -> 4, no bias) -> batchnorm1d bn1 (eps = "
        "0.03, momentum 0.2) -> relu -> dense fc2 (4 -> 1), squared loss, "
        "three clients (n = 4, 3, 5) (the inputs of golden/%s, and a third "
        "round).  " % rel + SGD_TEXT.replace(
            "(the bias b undecayed)", "(fc2.bias and bn1's weight and bias "
            "undecayed)") % c + "  " + BN_BIASED,
        spec, tolerance("3 rounds of 2 local rounds of K = 2 inner steps, "
                        "clipping norms and the batch norm's square roots at "
                        "60 digits", True),
        SGD_FLAGS + ["theta-start"] + flags,
        dict(SGD_MUTANTS, **dict(mutants, **{"theta-start": ["theta-start-flip"]})),
        SGD_COVERS + bn_covers("biased"), [clip_acts, decay_matters])


PROX_TEXT = ("The proximal local solver (prox: each client's v_i minimises "
             "f_i(v) + (lambda/2) ||v - w||^2 by K = 2 inner steps of step "
             "size eta_p = 0.078125 per batch, lambda = 1.5).  ")


def prox_sgd():
    rel = "layers/local-bn1d-mlp-two-rounds.json"
    c = 2.25
    spec = bn_spec(rel, "prox", dict(SGD_HYPER, **{
        "lambda": 1.5, "eta_p": 0.078125, "K": 2, "opt.clip_norm": c}),
        dict(SGD_SWITCHES), "frozen")
    # a third round (the step decay fires at round 2)
    spec["schedule"]["rounds"].append(
        {"clients": [0, 2], "batches": [[[3, 1], [0, 2]], [[2, 4], [1, 0, 3]]]})
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "prox", "nesterov-clip-step-server-bn-frozen",
        "Proximal local solver on a batch-norm MLP, torch.optim.SGD(momentum "
        "= 0.71875, nesterov = True, weight_decay = 0.15625 decoupled, not on "
        "biases and batch-norm parameters), clip_grad_norm_ at %g, one object "
        "carried from client to client, step decay 0.5625 every 2 rounds, "
        "running statistics frozen" % c,
        PROX_TEXT + "Layer list dense fc1 (3 -> 4, no bias) -> batchnorm1d bn1 "
        "(eps = 0.03, momentum 0.2) -> relu -> dense fc2 (4 -> 1), squared "
        "loss, three clients (n = 4, 3, 5), S = {0, 1}, {1, 2}, {0, 2} (the "
        "inputs of golden/%s, and a third round).  " % rel + SGD_TEXT.replace(
            "(the bias b undecayed)", "(fc2.bias and bn1's weight and bias "
            "undecayed)") % c + "  " + BN_FROZEN,
        spec, tolerance("at most 2 batches of K = 2 inner steps per client "
                        "update, 3 rounds, clipping norms and the batch norm's "
                        "square roots at 60 digits", True),
        SGD_FLAGS + ["theta-start"] + flags,
        dict(SGD_MUTANTS, **dict(mutants, **{"theta-start": ["theta-start-flip"]})),
        SGD_COVERS + bn_covers("frozen"), [clip_acts, decay_matters])


def prox_adamw():
    rel = "layers/local-bn1d-mlp-two-rounds.json"
    spec = bn_spec(rel, "prox", dict(ADAM_HYPER, **{
        "lambda": 1.5, "eta_p": 0.078125, "K": 2, "opt.weight_decay": 0.09375,
        "lr.gamma": 0.6875}),
        {"opt.method": "adamw", "opt.state": "client",
         "lr.schedule": "exponential", "lr.scope": "eta_p"}, "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "prox", "adamw-client-decay-eta-p-bn-biased",
        "Proximal local solver on a batch-norm MLP, torch.optim.AdamW(betas = "
        "(0.75, 0.96875), eps = 2^-9, weight_decay = 0.09375) kept per client, "
        "eta_p decayed by 0.6875 a round, biased running variance",
        PROX_TEXT + BN_TEXT % rel + "opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375, opt.state = client, lr.schedule = exponential with lr.gamma "
        "= 0.6875 and lr.scope = eta_p (the inner step size eta_p decays).  "
        + BN_BIASED,
        spec, tolerance("at most 2 batches of K = 2 inner steps per client "
                        "update, 2 rounds, Adam's and the batch norm's square "
                        "roots", True),
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "lr-schedule", "theta-start"] + flags,
        dict(mutants, **{"weight-decay-form": ["decay-form-swap"],
                         "adam-bias-correction": ["adam-no-bias-correction"],
                         "lr-schedule": ["lr-ignored", "lr-shifted"],
                         "theta-start": ["theta-start-flip"]}),
        [("opt.method", "adamw"), ("lr.schedule", "exponential"),
         ("lr.scope", "eta_p")] + bn_covers("biased"), [decay_matters])


# ---------------------------------------------------------------- interp

def interp_sgd():
    rel = "layers/local-bn1d-mlp-two-rounds.json"
    c = 2.25
    spec = bn_spec(rel, "interp", dict(SGD_HYPER, **{
        "eta": 0.046875, "alpha": 0.3125, "opt.clip_norm": c}),
        dict(SGD_SWITCHES, **{"interp.alpha": "fixed"}), "biased")
    # a third round (the step decay fires at round 2) and h_i's batches
    spec["schedule"]["rounds"].append(
        {"clients": [0, 2], "batches": [[[3, 1], [0, 2]], [[2, 4], [1, 0, 3]]]})
    spec["schedule"]["post"] = [[[1, 3], [2, 0]], [[0, 2], [1, 0]],
                                [[3, 4], [2, 0, 1]]]
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "interp", "nesterov-clip-step-server-bn-biased",
        "Interpolation on a batch-norm MLP, torch.optim.SGD(momentum = "
        "0.71875, nesterov = True, weight_decay = 0.15625 decoupled, not on "
        "biases and batch-norm parameters), clip_grad_norm_ at %g, one object "
        "per slot carried from client to client, step decay 0.5625 every 2 "
        "rounds, biased running variance" % c,
        "Interpolation (Mansour et al. 2020, §3; FedAvg rounds at eta = "
        "0.046875 c_t, then each client's local h_i from w^0 at eta, the "
        "mixture alpha = 0.3125 fixed); the FedAvg training's and h_i's "
        "optimizers two slots.  Layer list dense fc1 (3 -> 4, no bias) -> "
        "batchnorm1d bn1 (eps = 0.03, momentum 0.2) -> relu -> dense fc2 (4 "
        "-> 1), squared loss, three clients (n = 4, 3, 5), S = {0, 1}, {1, "
        "2}, {0, 2} (the inputs of golden/%s, a third round and h_i's "
        "batches added).  " % rel + SGD_TEXT.replace(
            "(the bias b undecayed)", "(fc2.bias and bn1's weight and bias "
            "undecayed)") % c + "  " + BN_BIASED,
        spec, tolerance("at most 2 local steps per client update, 3 rounds, "
                        "3 local trainings of h_i, clipping norms and the "
                        "batch norm's square roots at 60 digits", True),
        SGD_FLAGS + ["optimizer-slots-shared"] + flags,
        dict(SGD_MUTANTS, **mutants), SGD_COVERS + bn_covers("biased"),
        [clip_acts, decay_matters])


# ---------------------------------------------------------------- perfedavg

def perfedavg_sgd():
    c = 1.1875
    spec = copy.deepcopy(audit_frozen("perfedavg/worked-linear-momentum-decay-client.json"))
    spec["algorithm"] = {"name": "perfedavg",
                         "hyperparameters": dict(SGD_HYPER, **{
                             "alpha": 0.1875, "beta": 0.3125, "opt.clip_norm": c}),
                         "switches": dict(SGD_SWITCHES)}
    return make(
        "perfedavg", "nesterov-clip-step-server",
        "Per-FedAvg, the meta step on torch.optim.SGD(momentum = 0.71875, "
        "nesterov = True, weight_decay = 0.15625 decoupled, on the weights "
        "only), clip_grad_norm_ at %g, one object carried from client to "
        "client, step decay 0.5625 every 2 rounds" % c,
        "Per-FedAvg (Fallah et al. 2020, Alg. 1, exact; alpha = 0.1875, beta "
        "= 0.3125), the optimizer stepping the meta update (docs/optimizers.md"
        ").  The problem, init and schedule of golden/perfedavg/worked-linear-"
        "momentum-decay-client.json (linear model with bias, squared loss, "
        "n = 6, 4, 5, S = {0, 1}, {1, 2}, {0, 2}).  " + SGD_TEXT % c,
        spec, tolerance("at most 3 meta steps per client update, 3 rounds, "
                        "clipping norms at 60 digits", True),
        SGD_FLAGS, SGD_MUTANTS, SGD_COVERS, [clip_acts, decay_matters])


# ------------------------------------- issue 33 §3: further pairs (group C)

def ditto_shared():
    rel = "layers/ditto-bn1d-mlp-two-rounds.json"
    spec = bn_spec(rel, "ditto", {"eta": 0.0703125, "lambda": 0.375,
                                  "opt.momentum": 0.59375,
                                  "opt.weight_decay": 0.28125},
                   {"opt.state": "client", "opt.decay_scope": "shared"},
                   "frozen", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "ditto", "momentum-shared-client-bn-frozen",
        "Ditto on a batch-norm MLP, both solvers on torch.optim.SGD(momentum "
        "= 0.59375, weight_decay = 0.28125 on the shared fc1 and bn1 only), "
        "two per client kept across rounds, running statistics frozen",
        "Ditto (Li et al. 2021, Alg. 1; FedAvg global solver, samples "
        "weights), eta = 0.0703125, lambda = 0.375, a split personal = fc2 "
        "(read by opt.decay_scope only); two optimizers per client (PFLlib "
        "clientditto.py's optimizer for w_k, poptimizer for v_k).  "
        + BN_TEXT % rel + "opt.momentum = 0.59375 (torch's form), "
        "opt.weight_decay = 0.28125 (coupled) with opt.decay_scope = shared: "
        "fc1 and bn1's weight and bias decay, fc2 does not; opt.state = "
        "client (each solver's velocity carried into the client's next "
        "round).  " + BN_FROZEN,
        spec, tolerance("at most 2 local steps per client update, 2 rounds, a "
                        "personal and a global step per batch, the batch "
                        "norm's square roots", True),
        ["weight-decay-scope", "optimizer-state-lifetime",
         "optimizer-slots-shared", "prox-sign"] + flags,
        dict(mutants, **{"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
                         "prox-sign": ["prox-plus"]}),
        [("opt.decay_scope", "shared"), ("opt.state", "client")]
        + bn_covers("frozen"))


BN_REL = "layers/local-bn1d-mlp-two-rounds.json"
BN_PFEDME = "pfedme/layers-bn1d-mlp-update.json"
PFA_LINEAR = "perfedavg/worked-linear-momentum-decay-client.json"
ADAM_TEXT = ("opt.method = %s, opt.beta1 = 0.75, opt.beta2 = 0.96875, "
             "opt.eps = 0.001953125, ")
CLASSICAL_TEXT = ("opt.momentum_form = classical (eta inside the velocity: "
                  "unlike torch's form once eta decays), ")
ADAM_BUGS = {"adam-bias-correction": ["adam-no-bias-correction"]}
FORM_BUGS = {"weight-decay-form": ["decay-form-swap"]}
SCOPE_BUGS = {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"]}
CLASSICAL_BUGS = {"momentum-form": ["momentum-form-swap"]}
LR_BUGS = {"lr-schedule": ["lr-ignored", "lr-shifted"]}
THETA_BUGS = {"theta-start": ["theta-start-flip"]}
BN_TOL = ("at most 2 local steps per client update, %d rounds, %sthe batch "
          "norm's square roots")


def bugs(*tables):
    out = {}
    for t in tables:
        out.update(t)
    return out


def fedavg_adam_personal():
    spec = bn_spec(BN_REL, "fedavg", dict(ADAM_HYPER, eta=0.0859375, **{
        "opt.weight_decay": 0.34375}),
        {"opt.method": "adam", "opt.state": "client",
         "opt.decay_scope": "personal"}, "biased", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "fedavg", "adam-personal-client-bn-biased",
        "FedAvg on a batch-norm MLP, torch.optim.Adam(betas = (0.75, 0.96875), "
        "eps = 2^-9, weight_decay = 0.34375 on the blocks the split names "
        "personal only) kept per client, biased running variance",
        "FedAvg (McMahan et al. 2017, Alg. 1; samples weights), eta = "
        "0.0859375, a split personal = fc2 read by opt.decay_scope only (every "
        "block is averaged).  " + BN_TEXT % BN_REL + ADAM_TEXT % "adam" +
        "opt.weight_decay = 0.34375 (coupled) with opt.decay_scope = "
        "personal: fc2 decays, fc1 and bn1 do not; opt.state = client (a "
        "client's moments and step counts carried into its next round).  "
        + BN_BIASED,
        spec, tolerance(BN_TOL % (2, "Adam's and ") , True),
        ["adam-bias-correction", "weight-decay-form", "weight-decay-scope",
         "optimizer-state-lifetime"] + flags,
        bugs(mutants, ADAM_BUGS, FORM_BUGS, SCOPE_BUGS),
        [("opt.method", "adam"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")])


def fedavg_classical_shared():
    spec = bn_spec(BN_REL, "fedavg", {
        "eta": 0.1015625, "opt.momentum": 0.65625, "opt.weight_decay": 0.21875,
        "lr.gamma": 0.71875},
        {"opt.momentum_form": "classical", "opt.state": "server",
         "opt.decay_scope": "shared", "lr.schedule": "exponential"},
        "frozen", split={"personal": ["fc2"]})
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "fedavg", "classical-shared-server-bn-frozen",
        "FedAvg on a batch-norm MLP, classical momentum v <- 0.65625 v - eta d "
        "carried from client to client, weight decay 0.21875 on the shared "
        "fc1 and bn1 only, exponential decay 0.71875, running statistics "
        "frozen",
        "FedAvg (McMahan et al. 2017, Alg. 1; samples weights), eta = "
        "0.1015625, a split personal = fc2 read by opt.decay_scope only.  "
        + BN_TEXT % BN_REL + "opt.momentum = 0.65625, " + CLASSICAL_TEXT +
        "opt.state = server (one velocity carried from client to client in "
        "training order), lr.schedule = exponential with lr.gamma = 0.71875, "
        "opt.weight_decay = 0.21875 (coupled) with opt.decay_scope = shared: "
        "fc1 and bn1's weight and bias decay, fc2 does not.  " + BN_FROZEN,
        spec, tolerance(BN_TOL % (2, ""), True),
        ["momentum-form", "weight-decay-scope", "optimizer-state-lifetime",
         "lr-schedule"] + flags,
        bugs(mutants, CLASSICAL_BUGS, SCOPE_BUGS, LR_BUGS),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "shared"),
         ("opt.state", "server"), ("lr.schedule", "exponential")],
        [decay_matters])


PFEDME_HYPER = {"eta": 0.171875, "lambda": 0.875, "eta_p": 0.09375, "K": 2,
                "beta": 0.8125}
PFEDME_TEXT = ("pFedMe (Dinh et al. 2020, Alg. 1; eta = 0.171875, lambda = "
               "0.875, eta_p = 0.09375, K = 2 inner steps, beta = 0.8125), "
               "every client training in each round, S^t aggregated; the inner "
               "solver of l. 7 on d = grad f_i(theta; D) + lambda (theta - "
               "w_{i,r}) is the optimizer (docs/optimizers.md).  ")


def pfedme_adamw():
    spec = bn_spec(BN_PFEDME, "pfedme", dict(PFEDME_HYPER, **dict(ADAM_HYPER, **{
        "opt.weight_decay": 0.109375, "lr.gamma": 0.6875})),
        {"opt.method": "adamw", "opt.state": "client",
         "lr.schedule": "exponential"}, "frozen")
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "pfedme", "adamw-client-decay-bn-frozen",
        "pFedMe on a batch-norm MLP, the inner solver on torch.optim.AdamW("
        "betas = (0.75, 0.96875), eps = 2^-9, weight_decay = 0.109375) kept "
        "per client, exponential decay 0.6875, running statistics frozen",
        PFEDME_TEXT + BN_TEXT % BN_PFEDME + ADAM_TEXT % "adamw" +
        "opt.weight_decay = 0.109375 (decoupled: AdamW's), opt.state = client, "
        "lr.schedule = exponential with lr.gamma = 0.6875.  " + BN_FROZEN,
        spec, tolerance("2 rounds of 2 local rounds of K = 2 inner steps, "
                        "Adam's and the batch norm's square roots", True),
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "lr-schedule", "theta-start"] + flags,
        bugs(mutants, ADAM_BUGS, FORM_BUGS, LR_BUGS, THETA_BUGS),
        [("opt.method", "adamw"), ("opt.state", "client"),
         ("lr.schedule", "exponential")] + bn_covers("frozen"),
        [decay_matters])


def pfedme_classical():
    spec = bn_spec(BN_PFEDME, "pfedme", dict(PFEDME_HYPER, **{
        "opt.momentum": 0.59375, "opt.weight_decay": 0.3125,
        "lr.gamma": 0.78125}),
        {"opt.momentum_form": "classical", "opt.state": "server",
         "lr.schedule": "exponential"}, "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "pfedme", "classical-server-decay-bn-biased",
        "pFedMe on a batch-norm MLP, the inner solver with classical momentum "
        "v <- 0.59375 v - eta d and weight decay 0.3125, one velocity carried "
        "from client to client, exponential decay 0.78125, biased running "
        "variance",
        PFEDME_TEXT + BN_TEXT % BN_PFEDME + "opt.momentum = 0.59375, " +
        CLASSICAL_TEXT + "opt.weight_decay = 0.3125 (coupled), opt.state = "
        "server, lr.schedule = exponential with lr.gamma = 0.78125.  "
        + BN_BIASED,
        spec, tolerance("2 rounds of 2 local rounds of K = 2 inner steps, "
                        "the batch norm's square roots", True),
        ["momentum-form", "optimizer-state-lifetime", "lr-schedule",
         "theta-start"] + flags,
        bugs(mutants, CLASSICAL_BUGS, LR_BUGS, THETA_BUGS),
        [("opt.momentum_form", "classical"), ("opt.state", "server"),
         ("lr.schedule", "exponential")], [decay_matters])


def local_adamw():
    c = 1.4375
    spec = spec_of("local", dict(ADAM_HYPER, eta=0.15625, **{
        "opt.weight_decay": 0.40625, "opt.clip_norm": c, "lr.gamma": 0.5625,
        "lr.step_rounds": 2}),
        {"opt.method": "adamw", "opt.state": "server", "opt.clip": "norm",
         "lr.schedule": "step"})
    return make(
        "local", "adamw-clip-step-server",
        "Local-only training, torch.optim.AdamW(betas = (0.75, 0.96875), eps = "
        "2^-9, weight_decay = 0.40625), clip_grad_norm_ at %g, one object "
        "carried from client to client, step decay 0.5625 every 2 rounds" % c,
        "Local-only training (each client's v_i on its own data, eta = "
        "0.15625).  " + PROBLEM + ADAM_TEXT % "adamw" + "opt.weight_decay = "
        "0.40625 (decoupled: AdamW's), opt.clip = norm at c = %g (acting on "
        "some steps, not on others), opt.state = server (one object's moments "
        "and step count carried from client to client in training order), "
        "lr.schedule = step with lr.gamma = 0.5625 and lr.step_rounds = 2." % c,
        spec, tolerance(STEPS + ", clipping norms and Adam's square roots at "
                        "60 digits", True),
        ["weight-decay-form", "adam-bias-correction", "clip-scope",
         "optimizer-state-lifetime", "lr-schedule"],
        bugs(ADAM_BUGS, FORM_BUGS, LR_BUGS, {"clip-scope": ["clip-per-block"]}),
        [("opt.method", "adamw"), ("opt.clip", "norm"), ("opt.state", "server"),
         ("lr.schedule", "step")], [clip_acts, decay_matters])


PROX_HYPER = {"lambda": 1.5, "eta_p": 0.078125, "K": 2}


def prox_adam():
    spec = bn_spec(BN_REL, "prox", dict(PROX_HYPER, **dict(ADAM_HYPER, **{
        "opt.weight_decay": 0.21875})),
        {"opt.method": "adam", "opt.state": "server"}, "frozen")
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "prox", "adam-server-bn-frozen",
        "Proximal local solver on a batch-norm MLP, torch.optim.Adam(betas = "
        "(0.75, 0.96875), eps = 2^-9, weight_decay = 0.21875), one object "
        "carried from client to client, running statistics frozen",
        PROX_TEXT + BN_TEXT % BN_REL + ADAM_TEXT % "adam" + "opt.weight_decay "
        "= 0.21875 (coupled: added to d before the moments), opt.state = "
        "server (one object's moments and step count carried from client to "
        "client in training order).  " + BN_FROZEN,
        spec, tolerance("at most 2 batches of K = 2 inner steps per client "
                        "update, 2 rounds, Adam's and the batch norm's square "
                        "roots", True),
        ["weight-decay-form", "adam-bias-correction",
         "optimizer-state-lifetime", "theta-start"] + flags,
        bugs(mutants, ADAM_BUGS, FORM_BUGS, THETA_BUGS),
        [("opt.method", "adam"), ("opt.state", "server")])


def prox_classical():
    spec = bn_spec(BN_REL, "prox", dict(PROX_HYPER, **{
        "opt.momentum": 0.65625, "opt.weight_decay": 0.3125,
        "lr.gamma": 0.71875}),
        {"opt.momentum_form": "classical", "opt.state": "client",
         "lr.schedule": "exponential", "lr.scope": "eta_p"}, "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "prox", "classical-client-decay-eta-p-bn-biased",
        "Proximal local solver on a batch-norm MLP, classical momentum v <- "
        "0.65625 v - eta_p d with weight decay 0.3125, kept per client, eta_p "
        "decayed by 0.71875 a round, biased running variance",
        PROX_TEXT + BN_TEXT % BN_REL + "opt.momentum = 0.65625, " +
        CLASSICAL_TEXT + "opt.weight_decay = 0.3125 (coupled), opt.state = "
        "client, lr.schedule = exponential with lr.gamma = 0.71875 and "
        "lr.scope = eta_p (the inner step size eta_p decays).  " + BN_BIASED,
        spec, tolerance("at most 2 batches of K = 2 inner steps per client "
                        "update, 2 rounds, the batch norm's square roots", True),
        ["momentum-form", "optimizer-state-lifetime", "lr-schedule",
         "theta-start"] + flags,
        bugs(mutants, CLASSICAL_BUGS, LR_BUGS, THETA_BUGS),
        [("opt.momentum_form", "classical"), ("opt.state", "client"),
         ("lr.schedule", "exponential")], [decay_matters])


INTERP_POST = [[[1, 3], [2, 0]], [[0, 2], [1, 0]], [[3, 4], [2, 0, 1]]]
INTERP_TEXT = ("Interpolation (Mansour et al. 2020, §3; FedAvg rounds at eta "
               "c_t, then each client's local h_i from w^0 at eta, the "
               "mixture alpha = 0.3125 fixed); the FedAvg training's and "
               "h_i's optimizers two slots; a split personal = fc2 read by "
               "opt.decay_scope only.  ")


def interp_spec(hyper, switches, bn):
    spec = bn_spec(BN_REL, "interp", dict(hyper, alpha=0.3125),
                   dict(switches, **{"interp.alpha": "fixed"}), bn,
                   split={"personal": ["fc2"]})
    spec["schedule"]["post"] = copy.deepcopy(INTERP_POST)
    return spec


def interp_adam():
    spec = interp_spec(dict(ADAM_HYPER, eta=0.046875, **{
        "opt.weight_decay": 0.34375, "lr.gamma": 0.6875}),
        {"opt.method": "adam", "opt.state": "client",
         "opt.decay_scope": "personal", "lr.schedule": "exponential"}, "frozen")
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "interp", "adam-personal-client-decay-bn-frozen",
        "Interpolation on a batch-norm MLP, torch.optim.Adam(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.34375 on the personal fc2 "
        "only), each slot kept per client, exponential decay 0.6875, running "
        "statistics frozen",
        INTERP_TEXT + "eta = 0.046875.  " + BN_TEXT % BN_REL +
        ADAM_TEXT % "adam" + "opt.weight_decay = 0.34375 (coupled) with "
        "opt.decay_scope = personal: fc2 decays, fc1 and bn1 do not; "
        "opt.state = client; lr.schedule = exponential with lr.gamma = "
        "0.6875.  " + BN_FROZEN,
        spec, tolerance(BN_TOL % (2, "3 local trainings of h_i, Adam's and ")
                        , True),
        ["adam-bias-correction", "weight-decay-form", "weight-decay-scope",
         "optimizer-state-lifetime", "optimizer-slots-shared",
         "lr-schedule"] + flags,
        bugs(mutants, ADAM_BUGS, FORM_BUGS, SCOPE_BUGS, LR_BUGS),
        [("opt.method", "adam"), ("opt.decay_scope", "personal"),
         ("opt.state", "client"), ("lr.schedule", "exponential")]
        + bn_covers("frozen"), [decay_matters])


def interp_classical():
    spec = interp_spec({"eta": 0.0546875, "opt.momentum": 0.59375,
                        "opt.weight_decay": 0.28125, "lr.gamma": 0.78125},
                       {"opt.momentum_form": "classical", "opt.state": "server",
                        "opt.decay_scope": "shared",
                        "lr.schedule": "exponential"}, "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "interp", "classical-shared-server-decay-bn-biased",
        "Interpolation on a batch-norm MLP, classical momentum v <- 0.59375 v "
        "- eta d, weight decay 0.28125 on the shared fc1 and bn1 only, one "
        "object per slot carried from client to client, exponential decay "
        "0.78125, biased running variance",
        INTERP_TEXT + "eta = 0.0546875.  " + BN_TEXT % BN_REL +
        "opt.momentum = 0.59375, " + CLASSICAL_TEXT + "opt.weight_decay = "
        "0.28125 (coupled) with opt.decay_scope = shared: fc1 and bn1's "
        "weight and bias decay, fc2 does not; opt.state = server (the "
        "velocity outlives the decay of eta); lr.schedule = exponential with "
        "lr.gamma = 0.78125.  " + BN_BIASED,
        spec, tolerance(BN_TOL % (2, "3 local trainings of h_i, "), True),
        ["momentum-form", "weight-decay-scope", "optimizer-state-lifetime",
         "optimizer-slots-shared", "lr-schedule"] + flags,
        bugs(mutants, CLASSICAL_BUGS, SCOPE_BUGS, LR_BUGS),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "shared"),
         ("opt.state", "server"), ("lr.schedule", "exponential")],
        [decay_matters])


PFA_TEXT = ("Per-FedAvg (Fallah et al. 2020, Alg. 1, exact; alpha = %g, beta "
            "= %g), the optimizer stepping the meta update (docs/optimizers.md"
            "); a split personal = %s read by opt.decay_scope only.  The "
            "problem, init and schedule of golden/%s (linear model with bias, "
            "squared loss, n = 6, 4, 5, S = {0, 1}, {1, 2}, {0, 2}).  ")


def perfedavg_spec(hyper, switches, personal):
    spec = copy.deepcopy(audit_frozen(PFA_LINEAR))
    spec["algorithm"] = {"name": "perfedavg", "hyperparameters": hyper,
                         "switches": switches}
    spec["split"] = {"personal": [personal]}
    return spec


def perfedavg_adamw():
    spec = perfedavg_spec(dict(ADAM_HYPER, **{
        "alpha": 0.1875, "beta": 0.3125, "opt.weight_decay": 0.40625}),
        {"opt.method": "adamw", "opt.state": "client",
         "opt.decay_scope": "personal"}, "b")
    return make(
        "perfedavg", "adamw-personal-client",
        "Per-FedAvg, the meta step on torch.optim.AdamW(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.40625 on the personal b "
        "only) kept per client",
        PFA_TEXT % (0.1875, 0.3125, "b", PFA_LINEAR) + ADAM_TEXT % "adamw" +
        "opt.weight_decay = 0.40625 (decoupled: AdamW's) with "
        "opt.decay_scope = personal: b decays, w does not (the opposite of "
        "opt.decay_scope = weights); opt.state = client.",
        spec, tolerance("at most 3 meta steps per client update, 3 rounds, "
                        "Adam's square roots", True),
        ["weight-decay-form", "adam-bias-correction", "weight-decay-scope",
         "optimizer-state-lifetime"],
        bugs(ADAM_BUGS, FORM_BUGS, SCOPE_BUGS),
        [("opt.method", "adamw"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")])


def perfedavg_classical():
    spec = perfedavg_spec({"alpha": 0.1875, "beta": 0.28125,
                           "opt.momentum": 0.65625, "opt.weight_decay": 0.3125,
                           "lr.gamma": 0.71875},
                          {"opt.momentum_form": "classical",
                           "opt.state": "server", "opt.decay_scope": "shared",
                           "lr.schedule": "exponential"}, "w")
    return make(
        "perfedavg", "classical-shared-server-decay",
        "Per-FedAvg, the meta step with classical momentum v <- 0.65625 v - "
        "beta d and weight decay 0.3125 on the shared b only, one velocity "
        "carried from client to client, exponential decay 0.71875",
        PFA_TEXT % (0.1875, 0.28125, "w", PFA_LINEAR) + "opt.momentum = "
        "0.65625, " + CLASSICAL_TEXT + "opt.weight_decay = 0.3125 (coupled) "
        "with opt.decay_scope = shared: b decays, w does not (the opposite "
        "of opt.decay_scope = weights); opt.state = server; lr.schedule = "
        "exponential with lr.gamma = 0.71875.",
        spec, tolerance("at most 3 meta steps per client update, 3 rounds",
                        False),
        ["momentum-form", "weight-decay-scope", "optimizer-state-lifetime",
         "lr-schedule"],
        bugs(CLASSICAL_BUGS, SCOPE_BUGS, LR_BUGS),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "shared"),
         ("opt.state", "server"), ("lr.schedule", "exponential")],
        [decay_matters])

MAKERS = (local_sgd, local_classical, local_adam, finetune_classical,
          finetune_adamw, finetune_adam, ditto_adam, pfedme_sgd, prox_sgd,
          prox_adamw, interp_sgd, perfedavg_sgd, ditto_shared,
          fedavg_adam_personal, fedavg_classical_shared, pfedme_adamw,
          pfedme_classical, local_adamw, prox_adam, prox_classical,
          interp_adam, interp_classical, perfedavg_adamw, perfedavg_classical)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
