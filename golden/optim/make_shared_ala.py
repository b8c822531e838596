#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedALA's shared-switch golden vectors (issue 33 §3): the opt.*, lr.*
and bn.* values FedALA declares that none of its own vectors ran
coincidence-free (golden/coincidences.py, _NOT_YET), each vector running
several of them at once, free of the audit's shared coincidences
(SHARED_RULES).

The optimizer is the clients' local training's (docs/optimizers.md,
"Where the state lives": FedALA's slot 0, the training from Θ̂_i, Alg. 1
l. 16; ref/algorithms/fedala.c pflref_optim_begin before it).  ALA's
weight learning (Eq. (5), W_i ← clip(W_i − η ∇L ⊙ (Θ − Θ_i))) is the
paper's own plain step on W_i (TsingZ0/FedALA ALA.py steps W by hand,
clientALA.py trains with torch.optim.SGD): no opt.* reaches it and the
optimizer's state does not see it.  Each vector is run, as written,
through golden/pflref_exact_fedala.py (golden/audit.py's replay), whose
local steps go through golden/pflref_exact_optim.py's optimizer: exact
fractions, square roots (clip norms, Adam, the batch norm) and the
values after them at 60 decimal digits.

The generator asserts, per vector, what makes it able to fail: every
flagged bug moves a value far outside the tolerance (check_mutants), the
three state lifetimes give three different runs, the clip acts on some
steps and not on others, the decay changes the run, the decay scope
reads the block it names (the run differs from the same spec with the
decay on every block and from the one without decay), and the audit
finds none of the shared coincidences for the values the vector is meant
to cover (covered_free).

Vectors (ids optim/fedala/<name>, files fedala-<name>.json):
  nesterov-clip-step-server  the 2-2-1 mlp of golden/fedala (biases b1,
        b2), the rounds of fedala/worked/paper-partial: Nesterov momentum,
        decoupled decay on the weights only, a clip acting on some steps,
        one state carried from client to client, a step decay firing at
        round 2
  adamw-server-step  the same problem: AdamW carried from client to
        client under the same step decay
  classical-shared-client-bn-biased  the batch-norm layer list of
        fedala/layers/bn-pfllib (bn.aggregate = parameters_only) and its
        rounds: classical momentum kept per client under an exponential
        decay, coupled decay on the shared blocks (split: out personal),
        bn.running_var = biased
  adam-personal-client-bn-frozen  the same model: Adam kept per client,
        coupled decay on the personal out only, bn.running = frozen

    /usr/bin/python3 golden/optim/make_shared_ala.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(GOLDEN, "fedala"))

import make_fedala as mf                  # noqa: E402
import pflref_exact_fedala as xa          # noqa: E402
import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402
from make_algorithms import NESTEROV_CLIP_STEP_MUTANTS  # noqa: E402
from make_shared_pfl import (BN_FLAGS, clip_acts,  # noqa: E402
                             covered_free, decay_matters, lifetimes_differ,
                             replay, scope_matters)

GENERATOR = ("golden/optim/make_shared_ala.py with golden/pflref_exact_fedala.py "
             "and golden/pflref_exact_optim.py (exact fractions, square roots "
             "and the values after them at 60 decimal digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW documented "
          "update rules, torch.nn.utils.clip_grad_norm_, "
          "torch.optim.lr_scheduler.StepLR / ExponentialLR stepped once a "
          "round; docs/optimizers.md (fedala's slot 0: the local training "
          "from Θ̂_i; ALA's W_i steps stay Eq. (5)'s own); " + mf.PAPER)


def tolerance(what, atol):
    return {"atol": atol, "rtol": atol,
            "basis": "fp64 reference in fixed order against exact rationals "
            "of the binary inputs, the square roots (clip norms, Adam, the "
            "batch norm) and the values after them at 60 decimal digits "
            "(error < 1e-58): " + what + "; one ALA pass a round (no "
            "stopping test decided), each optimizer step a few roundings of "
            "terms below 10 in magnitude, momentum (mu < 0.9) and Adam's "
            "normalised steps bounded, so the accumulated error stays below "
            "%g; every flagged bug moves some value by more than 1e3 times "
            "the tolerance." % (atol / 100)}


def make(name, title, description, spec, tol, flags, mutants, covers,
         checks=()):
    vid = "optim/fedala/%s" % name
    spec = dict(spec, name=title, description=description)
    state = {}
    xa.replay(spec, state=state)
    # one pass per ALA: no start-phase stopping test is decided
    assert not state["margins"] and set(state["epochs"]) <= {1}, state["epochs"]
    exp = replay(spec)
    mutants = dict(mutants)
    if "optimizer-state-lifetime" in flags:
        mutants["optimizer-state-lifetime"] = po.other_lifetimes(
            spec["algorithm"])
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: replay(spec, bugs))
    if "opt.decay_scope" in spec["algorithm"]["switches"]:
        checks = [scope_matters] + list(checks)
    for check in [lifetimes_differ, covered_free(covers)] + list(checks):
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "fedala-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                              tol, exp)


# FedALA's own constants (those of fedala/worked/paper-partial, one pass a
# round): α = 0.05 (the local step size, decayed by lr.*), η = 3.5 (ALA's,
# never decayed), s = 60, p = 1 layer (W2, b2)
ALA_HYPER = {"eta": 0.05, "fedala.eta": 3.5, "fedala.s": 60, "fedala.p": 1,
             "fedala.k": 2, "fedala.threshold": 0.0063,
             "fedala.max_epochs": 1}
MLP_TEXT = ("Four clients (n = 5, 4, 6, 3) of the 2-2-1 identity-activation "
            "mlp of fedala/worked/paper-partial (biases b1, b2), squared loss, "
            "its w⁰ and rounds {0, 1, 2}, {0, 2, 3}, {1, 2}, {0, 1, 3} (client "
            "3 first in round 1, client 1 first ALA'd in round 2); α = 0.05, η "
            "= 3.5, s = 60, p = 1 layer (W2, b2), one ALA pass a round "
            "(fedala.max_epochs = 1).  ")
MLP_STEPS = "a 9-parameter mlp, two local steps per client update, 4 rounds"


def mlp_spec(hyper, switches):
    algorithm = {"name": "fedala", "hyperparameters": dict(ALA_HYPER, **hyper),
                 "switches": switches}
    return pg.given_spec("", None, mf.MODEL, mf.CLIENTS, mf.INIT, algorithm,
                         mf.PARTIAL)


def nesterov_clip_step_server():
    c = 0.5
    spec = mlp_spec({"opt.momentum": 0.71875, "opt.weight_decay": 0.15625,
                     "opt.clip_norm": c, "lr.gamma": 0.5625,
                     "lr.step_rounds": 2},
                    {"opt.nesterov": "on", "opt.weight_decay_form": "decoupled",
                     "opt.decay_scope": "weights", "opt.clip": "norm",
                     "opt.state": "server", "lr.schedule": "step"})
    return make(
        "nesterov-clip-step-server",
        "FedALA, the local training on torch.optim.SGD(momentum = 0.71875, "
        "nesterov = True, weight_decay = 0.15625 decoupled, on the weights "
        "only), clip_grad_norm_ at %g, one object carried from client to "
        "client, step decay 0.5625 every 2 rounds" % c,
        MLP_TEXT + "The local training (Alg. 1 l. 16) steps through the "
        "client optimizer: opt.momentum = 0.71875, opt.nesterov = on, "
        "opt.weight_decay = 0.15625 with opt.weight_decay_form = decoupled "
        "(θ ← θ (1 − α λ) before the step) and opt.decay_scope = weights (b1, "
        "b2 undecayed), opt.clip = norm at c = %g (acting on some steps, not "
        "on others), opt.state = server (one optimizer carried from client "
        "to client in training order, across ALA, which never touches it), "
        "lr.schedule = step with lr.gamma = 0.5625 and lr.step_rounds = 2 "
        "(α times 0.5625 from round 2; ALA's η undecayed)." % c,
        spec, tolerance(MLP_STEPS + ", clipping norms at 60 digits", 1e-11),
        ["nesterov-momentum", "weight-decay-form", "weight-decay-scope",
         "clip-scope", "optimizer-state-lifetime", "lr-schedule",
         "fedala-w-gradient"],
        dict(NESTEROV_CLIP_STEP_MUTANTS, **{
            "lr-schedule": ["lr-ignored", "lr-shifted", "lr-ala-decayed"],
            "fedala-w-gradient": ["w-eta-alpha"]}),
        [("opt.nesterov", "on"), ("opt.weight_decay_form", "decoupled"),
         ("opt.decay_scope", "weights"), ("opt.clip", "norm"),
         ("opt.state", "server"), ("lr.schedule", "step")],
        [clip_acts, decay_matters])


ADAM_HYPER = {"opt.beta1": 0.75, "opt.beta2": 0.96875, "opt.eps": 0.001953125}


def adamw_server_step():
    spec = mlp_spec(dict(ADAM_HYPER, **{"opt.weight_decay": 0.40625,
                                        "lr.gamma": 0.6875,
                                        "lr.step_rounds": 2}),
                    {"opt.method": "adamw", "opt.state": "server",
                     "lr.schedule": "step"})
    return make(
        "adamw-server-step",
        "FedALA, the local training on torch.optim.AdamW(betas = (0.75, "
        "0.96875), eps = 2^-9, weight_decay = 0.40625), one object carried "
        "from client to client, step decay 0.6875 every 2 rounds",
        MLP_TEXT + "The local training steps through the client optimizer: "
        "opt.method = adamw, opt.beta1 = 0.75, opt.beta2 = 0.96875, opt.eps "
        "= 0.001953125, opt.weight_decay = 0.40625 (decoupled: θ ← θ (1 − α "
        "λ) before the Adam step), opt.state = server (the moments and step "
        "counts carried from client to client in training order), "
        "lr.schedule = step with lr.gamma = 0.6875 and lr.step_rounds = 2.",
        spec, tolerance(MLP_STEPS + ", Adam's square roots", 1e-11),
        ["adam-bias-correction", "weight-decay-form", "optimizer-state-lifetime",
         "lr-schedule"],
        {"adam-bias-correction": ["adam-no-bias-correction"],
         "weight-decay-form": ["decay-form-swap"],
         "lr-schedule": ["lr-ignored", "lr-shifted"]},
        [("opt.method", "adamw"), ("opt.state", "server"),
         ("lr.schedule", "step")],
        [decay_matters])


# the batch-norm layer list of fedala/layers/bn-pfllib (fc1 2 -> 3, bn1
# (eps = 1/32, momentum 0.25), relu, out 3 -> 1), its w⁰ and rounds, under
# bn.aggregate = parameters_only (FedALA's batch norm is modelled only so)
BN_HYPER = {"eta": 0.05, "fedala.eta": 3.0, "fedala.s": 70, "fedala.p": 3,
            "fedala.k": 2, "fedala.threshold": 0.01, "fedala.max_epochs": 1}
BN_TEXT = ("The clients of fedala/worked/paper-partial on the layer list of "
           "fedala/layers/bn-pfllib (dense fc1 2 -> 3, batchnorm1d bn1 (eps = "
           "1/32, momentum 0.25), relu, dense out 3 -> 1; squared loss), its "
           "w⁰ and rounds {0, 1, 2}, {0, 2, 3}, {1, 2}, {0, 1, 3}; α = 0.05, "
           "η = 3, s = 70, p = 3 layers, one ALA pass a round; bn.aggregate = "
           "parameters_only (ALA weighs parameters() only, Θ̂_i keeps Θ_i's "
           "r_μ, r_v, Θ takes the first participant's); a split personal = "
           "out, read by opt.decay_scope alone (FedALA aggregates every "
           "parameter).  ")
BN_STEPS = ("a 25-parameter layer list whose batch normalisation divides by "
            "at most 1/sqrt(1/32), two local steps per client update, 4 "
            "rounds")


def bn_spec(hyper, switches, bn):
    switches = dict(switches, **{"bn.aggregate": "parameters_only"})
    if bn == "biased":
        switches["bn.running_var"] = "biased"
    else:
        switches["bn.running"] = "frozen"
    algorithm = {"name": "fedala", "hyperparameters": dict(BN_HYPER, **hyper),
                 "switches": switches}
    return pg.given_spec("", None, mf.BN_MODEL, mf.CLIENTS, mf.BN_INIT,
                         algorithm, mf.BN_ROUNDS, split={"personal": ["out"]})


def bn_covers(bn):
    return [("bn.running_var", "biased")] if bn == "biased" else \
        [("bn.running", "frozen")]


def classical_shared_client_bn():
    spec = bn_spec({"opt.momentum": 0.59375, "opt.weight_decay": 0.3125,
                    "lr.gamma": 0.78125},
                   {"opt.momentum_form": "classical", "opt.state": "client",
                    "lr.schedule": "exponential", "opt.decay_scope": "shared"},
                   "biased")
    flags, mutants = BN_FLAGS["biased"]
    return make(
        "classical-shared-client-bn-biased",
        "FedALA on a batch-norm MLP, the local training with classical "
        "momentum v <- 0.59375 v - α d kept per client, exponential decay "
        "0.78125, weight decay 0.3125 on the shared blocks only (split: out "
        "personal), biased running variance",
        BN_TEXT + "The local training steps through the client optimizer: "
        "opt.momentum = 0.59375, opt.momentum_form = classical (α inside the "
        "velocity: unlike torch's form once α decays), opt.state = client (a "
        "client's velocity carried into its next training), lr.schedule = "
        "exponential with lr.gamma = 0.78125, opt.weight_decay = 0.3125 "
        "(coupled) with opt.decay_scope = shared: fc1's and bn1's weight and "
        "bias decay, out does not.  bn.running_var = biased: r_v ← 0.75 r_v "
        "+ 0.25 s² with the batch's biased variance.",
        spec, tolerance(BN_STEPS, 1e-10),
        ["momentum-form", "weight-decay-scope", "optimizer-state-lifetime",
         "lr-schedule"] + flags,
        dict(mutants, **{"momentum-form": ["momentum-form-swap"],
                         "weight-decay-scope": ["decay-scope-all",
                                                "decay-scope-flip"],
                         "lr-schedule": ["lr-ignored", "lr-shifted"]}),
        [("opt.momentum_form", "classical"), ("opt.decay_scope", "shared"),
         ("opt.state", "client")] + bn_covers("biased"),
        [decay_matters])


def adam_personal_client_bn():
    spec = bn_spec(dict(ADAM_HYPER, **{"opt.weight_decay": 0.34375}),
                   {"opt.method": "adam", "opt.state": "client",
                    "opt.decay_scope": "personal"}, "frozen")
    flags, mutants = BN_FLAGS["frozen"]
    return make(
        "adam-personal-client-bn-frozen",
        "FedALA on a batch-norm MLP, the local training on "
        "torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, weight_decay "
        "= 0.34375 on the personal out only) kept per client, running "
        "statistics frozen",
        BN_TEXT + "The local training steps through the client optimizer: "
        "opt.method = adam, opt.beta1 = 0.75, opt.beta2 = 0.96875, opt.eps = "
        "0.001953125, opt.weight_decay = 0.34375 (coupled: added to the "
        "gradient before the moments) with opt.decay_scope = personal: out "
        "decays, fc1 and bn1 do not; opt.state = client (a client's moments "
        "and step counts carried into its next training).  bn.running = "
        "frozen: the forward normalises with the batch's statistics, r_μ and "
        "r_v keep their initial values.",
        spec, tolerance(BN_STEPS + ", Adam's square roots", 1e-10),
        ["adam-bias-correction", "weight-decay-form", "weight-decay-scope",
         "optimizer-state-lifetime"] + flags,
        dict(mutants, **{"adam-bias-correction": ["adam-no-bias-correction"],
                         "weight-decay-form": ["decay-form-swap"],
                         "weight-decay-scope": ["decay-scope-all",
                                                "decay-scope-flip"]}),
        [("opt.method", "adam"), ("opt.decay_scope", "personal"),
         ("opt.state", "client")] + bn_covers("frozen"))


def main():
    pg.write_all(sys.argv, HERE, (nesterov_clip_step_server, adamw_server_step,
                                  classical_shared_client_bn,
                                  adam_personal_client_bn))


if __name__ == "__main__":
    main()
