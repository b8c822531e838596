#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Client-optimizer golden vectors of FedProto and PFLEGO: the shared switch
values (opt.*, lr.*, bn.*) that no vector of these algorithms ran
coincidence-free before (golden/coincidences.py, _NOT_YET), several values
per vector.

Each spec is run, as written, through golden/audit.py's dispatcher: FedProto
through golden/pflref_exact_fedproto.py, whose LocalUpdate steps go through
golden/pflref_exact_optim.py's optimizer (slot 0, docs/optimizers.md "Where
the state lives"; the spec's split for opt.decay_scope = shared / personal),
in 60-digit decimals with the optimizer's step in exact fractions of them;
PFLEGO through golden/pflref_exact_pfl.py, whose step 4 cheap head steps go
through the same optimizer on the head blocks alone (exact fractions; under
a clip or Adam every iterate rounded to 60 digits after each step, as the
values after a square root are).  The
generator asserts, per vector, what makes it able to fail: each flagged bug
moves a value far outside the tolerance (check_mutants), every other
opt.state lifetime gives other numbers, the clip acts on some steps and not
on others, the decay changes the run, the decay scope's blocks are read, the
bn.* value is read, and the audit finds none of the shared coincidences for
the values the vector is meant to cover (covered_free).

FedProto (ids optim/fedproto/<name>), on golden/fedproto/make_fedproto.py's
problem (three clients of 3, 4, 2 samples with label skew, three classes,
S = {1}, {0}, {0, 1, 2}: clients 0 and 1 train twice), the paper's
switches (R = ||f - C||^2, prototypes of the trained model, Eq. 5's
weights):
  nesterov-clip-step-server-bn-frozen   on the layer list with batch
                     normalisation of fedproto/layers-bn-paper: Nesterov,
                     decoupled decay on the weights only, a clip acting on
                     some steps, one state carried from client to client, a
                     step decay firing at round 2, bn.running = frozen
  adamw-shared-client-bn-biased   the same layer list, split personal =
                     [out]: AdamW kept per client, its decay on the shared
                     blocks only, exponential decay, bn.running_var = biased
  classical-personal-client   the layer list of fedproto/layers-official
                     (no batch norm), split personal = [out]: classical
                     momentum kept per client under an exponential decay,
                     coupled decay on the personal out only
  adam-server        the same layer list: Adam carried from client to client
PFLEGO (ids optim/pflego/<name>), on golden/pflego/make_optim.py's problem
(mlp 2-2-1, the head W2, b2 personal, four clients, tau = 3), three rounds
I_t = {0, 1}, {1, 2}, {0, 3}:
  nesterov-clip-step-server   Nesterov, decoupled decay on the weights only
                     (W2, not b2), a clip acting on some cheap steps, one
                     state carried from client to client, a step decay
                     (rho and beta) firing at round 2
  classical-exponential-client   classical momentum kept per client under
                     an exponential decay
  adam-server        Adam carried from client to client
  adamw-client       AdamW kept per client

    /usr/bin/python3 golden/optim/make_shared_proto.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import audit                             # noqa: E402
import coincidences as co                # noqa: E402
import make_algorithms as ma             # noqa: E402
from make_shared_pfl import covered_free  # noqa: E402
import pflref_exact_optim as po          # noqa: E402
import pflref_golden as pg               # noqa: E402

GENERATOR = ("golden/optim/make_shared_proto.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (golden/audit.py replay: "
             "pflref_exact_fedproto.py in 60-digit decimals, pflref_exact_pfl.py "
             "in exact fractions; square roots at 60 decimal digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_, "
          "torch.optim.lr_scheduler.StepLR / ExponentialLR stepped once a "
          "round; docs/optimizers.md (the slots and the state lifetimes); "
          "FedProto (Tan et al., AAAI 2022, Alg. 1, Eqs. 4-6) and PFLEGO "
          "(Nikoloutsopoulos et al., arXiv 2202.09848; shared/spec "
          "notes-pflego-fedalt-fedsim-fedrep.md §2.4) as in their own vectors")


def replay(spec, bugs=frozenset()):
    return audit.replay(spec, frozenset(bugs))


def frozen(rel):
    """The spec of a frozen vector (its inputs only)."""
    return copy.deepcopy(ma.frozen_spec(rel))


# ------------------------------------------------------------ the checks

def lifetimes_differ(spec, exp, tol):
    """opt.state = reset, client and server: three different runs."""
    life = po.config(spec["algorithm"])["opt.state"]
    for other in ("reset", "client", "server"):
        if other != life:
            alt = copy.deepcopy(spec)
            alt["algorithm"]["switches"]["opt.state"] = other
            assert pg.detects(exp, replay(alt), tol) is not None, other


def clip_acts(spec, exp, tol):
    """The clip acts on some steps and not on others."""
    clipped = [coef < 1 for _, _, coef in ma.clip_decisions(replay, spec)]
    assert any(clipped) and not all(clipped), clipped


def clipped_spec(make_spec, clips):
    """The first spec of make_spec(c), c in clips, whose clip acts on some
    steps and not on others, and c."""
    for c in clips:
        spec = make_spec(c)
        clipped = [coef < 1 for _, _, coef in ma.clip_decisions(replay, spec)]
        if any(clipped) and not all(clipped):
            return spec, c
    raise AssertionError("no clip threshold acts on some steps only")


def decay_matters(spec, exp, tol):
    """The learning-rate decay changes the run."""
    alt = copy.deepcopy(spec)
    alt["algorithm"]["switches"].pop("lr.schedule")
    for k in ("lr.gamma", "lr.step_rounds"):
        alt["algorithm"]["hyperparameters"].pop(k, None)
    assert pg.detects(exp, replay(alt), tol) is not None


def scope_read(spec, exp, tol):
    """opt.decay_scope reads the blocks it names: every other scope, and no
    decay, give other numbers."""
    mine = spec["algorithm"]["switches"]["opt.decay_scope"]
    for scope in ("all", "weights", "shared", "personal", None):
        if scope == mine:
            continue
        alt = copy.deepcopy(spec)
        if scope is None:
            alt["algorithm"]["hyperparameters"].pop("opt.weight_decay")
            alt["algorithm"]["switches"].pop("opt.decay_scope")
        else:
            alt["algorithm"]["switches"]["opt.decay_scope"] = scope
        assert pg.detects(exp, replay(alt), tol) is not None, scope


def bn_read(spec, exp, tol):
    """The bn.* value is read: the paper's value gives other numbers."""
    for key, paper in (("bn.running", "update"),
                       ("bn.running_var", "unbiased")):
        if key in spec["algorithm"]["switches"]:
            alt = copy.deepcopy(spec)
            alt["algorithm"]["switches"][key] = paper
            assert pg.detects(exp, replay(alt), tol) is not None, key


def make(alg, name, title, description, spec, tol, flags, mutants, covers,
         checks=()):
    vid = "optim/%s/%s" % (alg, name)
    spec = dict(spec, name=title, description=description)
    exp = replay(spec)
    mutants = dict(mutants)
    flags = list(flags) + ["optimizer-state-lifetime"]
    mutants["optimizer-state-lifetime"] = po.other_lifetimes(spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    for check in [lifetimes_differ, covered_free(covers)] + list(checks):
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, title, prov, flags,
                                                  spec, tol, exp)


# The SGD vectors' switches (Nesterov, decoupled decay on the weights, a
# clip, the state carried, a step decay firing at round 2)
SGD_HYPER = {"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
             "lr.gamma": 0.5625, "lr.step_rounds": 2}
SGD_SWITCHES = {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                "opt.decay_scope": "weights", "opt.clip": "norm",
                "opt.state": "server", "lr.schedule": "step"}
SGD_FLAGS = ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
             "clip-scope", "lr-schedule"]
SGD_COVERS = [("opt.nesterov", "on"), ("opt.weight_decay_form", "decoupled"),
              ("opt.decay_scope", "weights"), ("opt.clip", "norm"),
              ("opt.state", "server"), ("lr.schedule", "step")]
SGD_TEXT = ("opt.momentum = 0.71875, opt.nesterov = on, opt.weight_decay = "
            "0.15625 with opt.weight_decay_form = decoupled (theta <- theta "
            "(1 - eta lam) before the step) and opt.decay_scope = weights "
            "(%s), opt.clip = norm at c = %g (acting on some steps, not on "
            "others), opt.state = server (one optimizer carried from client "
            "to client in training order), lr.schedule = step with lr.gamma "
            "= 0.5625 and lr.step_rounds = 2 (round 2's step sizes times "
            "0.5625).")
ADAM_HYPER = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125}
CLIPS = (1.25, 0.875, 1.75, 0.625, 2.5, 0.4375, 3.5, 0.3125, 0.21875,
         0.15625, 0.109375)


# ------------------------------------------------------------- FedProto

PROTO_BN = "fedproto/layers-bn-paper.json"
PROTO_LAYERS = "fedproto/layers-official.json"
PROTO_HYPER = {"eta": 0.25, "fedproto.lambda": 0.8}
PROTO_TEXT = ("FedProto (Tan et al., AAAI 2022, Alg. 1), the paper's switches "
              "(R = ||f - C||^2, C_i from the trained model, Eq. 5's weights "
              "|D_ij|), lambda = 0.8, eta = 0.25.  Three clients (n = 3, 4, "
              "2), three classes with label skew, S = {1}, {0}, {0, 1, 2} "
              "(clients 0 and 1 train twice), the inputs of golden/%s: %s.  ")
PROTO_BN_MODEL = ("dense fc1 (2 -> 4, no bias) -> batchnorm1d norm1 "
                  "(momentum 0.1) -> tanh -> dense out (4 -> 3), "
                  "cross-entropy; the embedding f is out's input")
PROTO_MODEL = ("dense fc1 (2 -> 4) -> relu -> dense out (4 -> 3), "
               "cross-entropy; the embedding f is out's input")
PROTO_SPLIT = {"personal": ["out"]}
PROTO_FLAGS = ["fedproto-distance", "fedproto-missing-prototype",
               "fedproto-client-protos"]
PROTO_TOL = {
    "atol": 1e-13, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against 60-digit decimal values "
             "of the binary inputs (golden/pflref_exact_fedproto.py; the "
             "optimizer's step in exact fractions of them, the clip's and "
             "Adam's square roots at 60 digits): three rounds of two local "
             "steps per client on a layer list with P <= 39 (batch "
             "normalisation in the embedding: per step one training pass with "
             "its coupled backward and the running statistics' move), then "
             "means of at most four embeddings; the optimizer's terms bounded "
             "(momentum < 0.9, Adam's normalised steps), so a few hundred "
             "roundings of 1.1e-16 stay far inside 1e-13 + 1e-12 |r|; every "
             "flagged bug moves some value by more than 1e3 times the "
             "tolerance."}


def proto_spec(rel, hyper, switches, split=None):
    spec = frozen(rel)
    spec["algorithm"] = {"name": "fedproto",
                         "hyperparameters": dict(PROTO_HYPER, **hyper),
                         "switches": dict(switches)}
    if split is not None:
        spec["split"] = split
    return spec


def proto_mutants(extra):
    out = {f: audit.MODULES["fedproto"].MUTANTS[f] for f in PROTO_FLAGS}
    out.update(extra)
    return out


def fedproto_sgd():
    def spec_at(c):
        return proto_spec(PROTO_BN, dict(SGD_HYPER, **{"opt.clip_norm": c}),
                          dict(SGD_SWITCHES, **{"bn.running": "frozen"}))
    spec, c = clipped_spec(spec_at, CLIPS)
    return make(
        "fedproto", "nesterov-clip-step-server-bn-frozen",
        "FedProto on a batch-norm layer list, torch.optim.SGD(momentum = "
        "0.71875, nesterov = True, weight_decay = 0.15625 decoupled, on the "
        "weights only), clip_grad_norm_ at %g, one object carried from client "
        "to client, step decay 0.5625 every 2 rounds, running statistics "
        "frozen" % c,
        PROTO_TEXT % (PROTO_BN, PROTO_BN_MODEL)
        + SGD_TEXT % ("fc1's and out's weights decay; out's bias and norm1's "
                      "weight and bias do not", c)
        + "  bn.running = frozen: the training passes normalise with the "
        "batch's statistics, r_mu and r_v keep w0's, which Eq. 4's "
        "evaluation passes read.",
        spec, PROTO_TOL, PROTO_FLAGS + SGD_FLAGS + ["bn-running-moved"],
        proto_mutants(dict(ma.NESTEROV_CLIP_STEP_MUTANTS,
                           **{"bn-running-moved": ["running-moved"]})),
        SGD_COVERS + [("bn.running", "frozen")],
        [clip_acts, decay_matters, bn_read])


def fedproto_adamw():
    hyper = dict(ADAM_HYPER, **{"opt.weight_decay": 0.09375,
                                "lr.gamma": 0.6875})
    switches = {"opt.method": "adamw", "opt.state": "client",
                "opt.decay_scope": "shared", "lr.schedule": "exponential",
                "bn.running_var": "biased"}
    return make(
        "fedproto", "adamw-shared-client-bn-biased",
        "FedProto on a batch-norm layer list, torch.optim.AdamW(betas = "
        "(0.75, 0.96875), eps = 2^-9, weight_decay = 0.09375 on the shared "
        "blocks only), one per client kept across rounds, exponential decay "
        "0.6875, the biased batch variance into the running variance",
        PROTO_TEXT % (PROTO_BN, PROTO_BN_MODEL)
        + "split.personal = [out]; opt.method = adamw, opt.beta1 = 0.75, "
        "opt.beta2 = 0.96875, opt.eps = 0.001953125, opt.weight_decay = "
        "0.09375 with opt.decay_scope = shared (fc1 and norm1's weight and "
        "bias decay, the personal out does not), opt.state = client (a "
        "client's moments and step counts carried into its next round), "
        "lr.schedule = exponential with lr.gamma = 0.6875; bn.running_var = "
        "biased: r_v <- 0.9 r_v + 0.1 s^2 with the batch's biased variance "
        "(not m/(m - 1) s^2), read by Eq. 4's evaluation passes.",
        proto_spec(PROTO_BN, hyper, switches, PROTO_SPLIT), PROTO_TOL,
        PROTO_FLAGS + ["weight-decay-form", "weight-decay-scope",
                       "adam-bias-correction", "lr-schedule",
                       "bn-running-update"],
        proto_mutants({
            "weight-decay-form": ["decay-form-swap"],
            "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
            "adam-bias-correction": ["adam-no-bias-correction"],
            "lr-schedule": ["lr-ignored", "lr-shifted"],
            "bn-running-update": ["running-var-flipped"]}),
        [("opt.method", "adamw"), ("opt.decay_scope", "shared"),
         ("opt.state", "client"), ("bn.running_var", "biased")],
        [scope_read, decay_matters, bn_read])


def fedproto_classical():
    hyper = {"opt.momentum": 0.59375, "opt.weight_decay": 0.21875,
             "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "opt.decay_scope": "personal", "lr.schedule": "exponential"}
    return make(
        "fedproto", "classical-personal-client",
        "FedProto on a layer list, classical momentum v <- 0.59375 v - eta d "
        "kept per client, exponential decay 0.78125, weight decay 0.21875 "
        "(coupled) on the personal block out only",
        PROTO_TEXT % (PROTO_LAYERS, PROTO_MODEL)
        + "split.personal = [out]; opt.momentum = 0.59375, opt.momentum_form "
        "= classical (eta inside the velocity: unlike torch's form once eta "
        "decays), opt.weight_decay = 0.21875 (coupled: d <- d + lambda theta) "
        "with opt.decay_scope = personal (out decays, fc1 does not), "
        "opt.state = client, lr.schedule = exponential with lr.gamma = "
        "0.78125.",
        proto_spec(PROTO_LAYERS, hyper, switches, PROTO_SPLIT), PROTO_TOL,
        PROTO_FLAGS + ["momentum-form", "weight-decay-scope", "lr-schedule"],
        proto_mutants({
            "momentum-form": ["momentum-form-swap"],
            "weight-decay-scope": ["decay-scope-all", "decay-scope-flip"],
            "lr-schedule": ["lr-ignored", "lr-shifted"]}),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")],
        [scope_read, decay_matters])


def fedproto_adam():
    hyper = dict(ADAM_HYPER, **{"opt.beta1": 0.8125, "opt.beta2": 0.9375,
                                "opt.eps": 0.00390625})
    switches = {"opt.method": "adam", "opt.state": "server"}
    return make(
        "fedproto", "adam-server",
        "FedProto on a layer list, torch.optim.Adam(betas = (0.8125, "
        "0.9375), eps = 2^-8), one object carried from client to client",
        PROTO_TEXT % (PROTO_LAYERS, PROTO_MODEL)
        + "opt.method = adam, opt.beta1 = 0.8125, opt.beta2 = 0.9375, "
        "opt.eps = 0.00390625, opt.state = server (one optimizer for every "
        "client in training order: its moments and step counts carried "
        "from client to client).",
        proto_spec(PROTO_LAYERS, hyper, switches), PROTO_TOL,
        PROTO_FLAGS + ["adam-bias-correction"],
        proto_mutants({"adam-bias-correction": ["adam-no-bias-correction",
                                                "adam-eps-inside"]}),
        [("opt.method", "adam"), ("opt.state", "server")])


# --------------------------------------------------------------- PFLEGO

PFLEGO_REL = "pflego/worked-sgd-momentum-decay-client.json"
PFLEGO_HYPER = {"rho": 0.078125, "pflego.beta": 0.09375}
PFLEGO_TAU = 3
PFLEGO_ROUNDS = ([0, 1], [1, 2], [0, 3])
PFLEGO_TEXT = ("PFLEGO (Nikoloutsopoulos et al., arXiv 2202.09848; notes "
               "§2.4, the seed's head step, global theta weights, SGD "
               "server), rho = 5/64, beta = 3/32.  The inputs of golden/%s: "
               "mlp d = 2, h = 2, k = 1, identity activation, no hidden "
               "bias, half squared loss; the body W1 is theta, the head (W2, "
               "b2) is client i's W_i (split personal = [head]); four clients "
               "(n = 2, 3, 1, 4), I = 4, r = 2, tau = 3 (two cheap full-batch "
               "head steps at step size beta through the client's head "
               "optimizer, on the head blocks alone; then the joint gradient "
               "and the plain last head step rho (I/r) G_i), three rounds "
               "I_t = {0, 1}, {1, 2}, {0, 3}.  " % PFLEGO_REL)
PFLEGO_FLAGS = ["pflego-inverse-probability", "pflego-head-step",
                "pflego-optimizer-blocks"]
PFLEGO_TOL = {
    "atol": 1e-12, "rtol": 1e-12,
    "basis": "fp64 reference in fixed order against exact rationals of the "
             "binary inputs (golden/pflref_exact_pfl.py with "
             "pflref_exact_optim.py), the clip norms' and Adam's square roots "
             "and, in those vectors, every iterate after a step at 60 decimal "
             "digits (relative error < 1e-59 a step): three rounds of two cheap head steps and one joint "
             "gradient per client on an mlp with P = 7, each optimizer step "
             "a few roundings of terms below 10 in magnitude (momentum < "
             "0.9, Adam's normalised steps bounded), so the accumulated "
             "error stays below 1e-13; every flagged bug moves some value by "
             "more than 1e3 times the tolerance."}


def pflego_spec(hyper, switches):
    spec = frozen(PFLEGO_REL)
    spec["algorithm"] = {"name": "pflego",
                         "hyperparameters": dict(PFLEGO_HYPER, **hyper),
                         "switches": dict(switches)}
    n = [len(c["y"]) for c in spec["problem"]["clients"]]
    spec["schedule"]["rounds"] = [
        {"clients": list(S),
         "batches": [[list(range(n[i]))] * PFLEGO_TAU for i in S]}
        for S in PFLEGO_ROUNDS]
    return spec


def pflego_mutants(extra):
    out = {"pflego-inverse-probability": ["no-ip-factor"],
           "pflego-head-step": ["head-alpha-flip", "head-step-beta"],
           "pflego-optimizer-blocks": ["opt-body-moves"]}
    out.update(extra)
    return out


def pflego_sgd():
    def spec_at(c):
        return pflego_spec(dict(SGD_HYPER, **{"opt.clip_norm": c}),
                           SGD_SWITCHES)
    spec, c = clipped_spec(spec_at, CLIPS)
    return make(
        "pflego", "nesterov-clip-step-server",
        "PFLEGO with a head optimizer torch.optim.SGD(momentum = 0.71875, "
        "nesterov = True, weight_decay = 0.15625 decoupled, on the weights "
        "only), clip_grad_norm_ at %g, one object carried from client to "
        "client, step decay 0.5625 every 2 rounds" % c,
        PFLEGO_TEXT + SGD_TEXT % ("the head's W2 decays, its bias b2 does "
                                  "not", c)
        + "  The decay scales rho and beta alike (every step size).",
        spec, PFLEGO_TOL, PFLEGO_FLAGS + SGD_FLAGS,
        pflego_mutants(ma.NESTEROV_CLIP_STEP_MUTANTS), SGD_COVERS,
        [clip_acts, decay_matters])


def pflego_classical():
    hyper = {"opt.momentum": 0.59375, "opt.weight_decay": 0.21875,
             "lr.gamma": 0.78125}
    switches = {"opt.momentum_form": "classical", "opt.state": "client",
                "lr.schedule": "exponential"}
    return make(
        "pflego", "classical-exponential-client",
        "PFLEGO with a head optimizer of classical momentum v <- 0.59375 v "
        "- beta d and weight decay 0.21875, kept per client, exponential "
        "decay 0.78125",
        PFLEGO_TEXT + "opt.momentum = 0.59375, opt.momentum_form = classical "
        "(the step size inside the velocity: unlike torch's form once it "
        "decays), opt.weight_decay = 0.21875 (coupled, every head block), "
        "opt.state = client (clients 0 and 1 resume their velocity in their "
        "second round), lr.schedule = exponential with lr.gamma = 0.78125 "
        "(rho and beta times 0.78125^t).",
        pflego_spec(hyper, switches), PFLEGO_TOL,
        PFLEGO_FLAGS + ["momentum-form", "lr-schedule"],
        pflego_mutants({"momentum-form": ["momentum-form-swap"],
                        "lr-schedule": ["lr-ignored", "lr-shifted"]}),
        [("opt.momentum_form", "classical"), ("opt.state", "client"),
         ("lr.schedule", "exponential")],
        [decay_matters])


def pflego_adam():
    hyper = {"opt.beta1": 0.8125, "opt.beta2": 0.9375, "opt.eps": 0.00390625,
             "opt.weight_decay": 0.1875}
    switches = {"opt.method": "adam", "opt.state": "server"}
    return make(
        "pflego", "adam-server",
        "PFLEGO with a head optimizer torch.optim.Adam(betas = (0.8125, "
        "0.9375), eps = 2^-8, weight_decay = 0.1875 coupled), one object "
        "carried from client to client",
        PFLEGO_TEXT + "opt.method = adam, opt.beta1 = 0.8125, opt.beta2 = "
        "0.9375, opt.eps = 0.00390625, opt.weight_decay = 0.1875 (coupled: "
        "d <- d + lambda W), opt.state = server (one optimizer for every "
        "client in training order: its moments and step counts carried "
        "from client to client).",
        pflego_spec(hyper, switches), PFLEGO_TOL,
        PFLEGO_FLAGS + ["weight-decay-form", "adam-bias-correction"],
        pflego_mutants({"weight-decay-form": ["decay-form-swap"],
                        "adam-bias-correction": ["adam-no-bias-correction",
                                                 "adam-eps-inside"]}),
        [("opt.method", "adam"), ("opt.state", "server")])


def pflego_adamw():
    hyper = dict(ADAM_HYPER, **{"opt.weight_decay": 0.140625})
    switches = {"opt.method": "adamw", "opt.state": "client"}
    return make(
        "pflego", "adamw-client",
        "PFLEGO with a head optimizer torch.optim.AdamW(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.140625), one per client kept "
        "across rounds",
        PFLEGO_TEXT + "opt.method = adamw, opt.beta1 = 0.75, opt.beta2 = "
        "0.96875, opt.eps = 0.001953125, opt.weight_decay = 0.140625 "
        "(decoupled: W <- W (1 - beta lambda) before the step), opt.state = "
        "client (clients 0 and 1 resume their moments and step counts in "
        "their second round).",
        pflego_spec(hyper, switches), PFLEGO_TOL,
        PFLEGO_FLAGS + ["weight-decay-form", "adam-bias-correction"],
        pflego_mutants({"weight-decay-form": ["decay-form-swap"],
                        "adam-bias-correction": ["adam-no-bias-correction",
                                                 "adam-eps-inside"]}),
        [("opt.method", "adamw"), ("opt.state", "client")])


MAKERS = (fedproto_sgd, fedproto_adamw, fedproto_classical, fedproto_adam,
          pflego_sgd, pflego_classical, pflego_adam, pflego_adamw)


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
