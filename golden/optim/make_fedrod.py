#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""FedRoD with the client optimizers (opt.*): golden vectors computed by
golden/pflref_exact_fedrod.py (60-digit decimals; its optimizer written
from torch's documented update rules; Adam's square roots at 60 digits),
independently of the C reference (ref/algorithms/fedrod.c).

The reading (docs/algorithms/fedrod.md, docs/optimizers.md): each client
holds two optimizer objects, as TsingZ0/PFLlib's clientrod.py does: the
generic model's (θ, φ_G), self.optimizer (clientbase.py), stepped on the
balanced risk at clientrod.py:53 (Alg. 1 l. 7), and the personal head's
φ_P, opt_head (clientrod.py:16), stepped at :59 (l. 8); each has its own
state per tensor, living as opt.state says.

The problem is golden/fedrod/make_fedrod.py's (three clients, n = 3, 4,
5, label skew, three rounds with skips).

Vectors (ids optim/fedrod/<name>; files golden/optim/fedrod-<name>.json):
  momentum-decay        mlp 2-3-3, the paper's reading, torch.optim.SGD(
                        momentum = 0.75, weight_decay = 0.0625), a new
                        pair of optimizers per client update
  nesterov-personal-client  mlp, the pfllib preset, SGD(momentum = 0.5,
                        nesterov) with weight decay 0.125 on the personal
                        head only (opt.decay_scope = personal), one pair
                        per client kept across its rounds
  adam-server           the layer list (dense, ReLU, dense), the paper's
                        reading, Adam(betas = (0.8125, 0.96875), eps =
                        2^-7), one pair carried from client to client
  sgd-weights-layers    layer list, SGD with momentum, weight decay on the
                        weights only (NAME.bias in the no-decay group)
  adamw-weights-client  mlp, the paper's reading, AdamW with decoupled
                        decay 0.25 on the weights only (not b1, b2, b_P),
                        one pair per client
  bn-momentum-decay     the layer list with batch normalisation of
                        fedrod/layers/bn-paper, SGD(momentum = 0.625,
                        weight_decay = 0.09375): the buffers r_μ, r_v
                        never step nor decay, they move by the training
                        passes only

    /usr/bin/python3 golden/optim/make_fedrod.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, os.path.join(GOLDEN, "fedrod"))

import make_fedrod as mf                 # noqa: E402
import pflref_exact_fedrod as xr         # noqa: E402
import pflref_exact_optim as po         # noqa: E402
import pflref_golden as pg               # noqa: E402

SOURCE = (mf.SOURCE + "; clientrod.py:16 (opt_head), :53 and :59 (the "
          "two optimizers' steps), clientbase.py (self.optimizer); "
          "torch.optim.SGD and torch.optim.Adam documented update rules; "
          "docs/optimizers.md")
GENERATOR = ("golden/optim/make_fedrod.py with pflref_exact_fedrod.py "
             "(60-digit decimals; its own torch optimizer rules; square "
             "roots at 60 digits)")


def tolerance(adam):
    tol = dict(mf.TOL)
    tol["basis"] = (mf.TOL["basis"] + " The optimizers add a momentum "
                    "buffer (mu < 1) or Adam's normalised step (bounded by "
                    "eta / (1 - beta1^t) times the ratio of the moments)" +
                    (", whose square roots are taken at 60 digits" if adam
                     else "") + ": a few roundings more per step, far "
                    "below the tolerance.")
    return tol


def run(spec, bugs=frozenset()):
    trace, w, _, _ = xr.replay(spec, frozenset(bugs))
    return pg.expected(trace, w=w)


def make(name, title, description, model, w0, algorithm, flags, mutants,
         adam=False, rounds=mf.ROUNDS):
    vid = "optim/fedrod/%s" % name
    spec = pg.given_spec(title, description, model, mf.CLIENTS,
                         {"kind": "given", "w": w0}, algorithm, rounds)
    assert xr.supported(spec)
    tol = tolerance(adam)
    exp = run(spec)
    mutants = dict(mutants)
    mutants["optimizer-state-lifetime"] = po.other_lifetimes(algorithm)
    pg.check_mutants(vid, exp, tol, flags, mutants,
                     lambda bugs: run(spec, bugs))
    plain = copy.deepcopy(spec)                 # the optimizer acts
    alg = plain["algorithm"]
    alg["hyperparameters"] = {k: v for k, v in alg["hyperparameters"].items()
                              if not k.startswith("opt.")}
    alg["switches"] = {k: v for k, v in alg.get("switches", {}).items()
                       if not k.startswith("opt.")}
    assert pg.detects(exp, run(plain), tol) is not None
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "fedrod-%s.json" % name, pg.vector(vid, title, prov, flags, spec,
                                              tol, exp)


def alg(eta, opt_hyper, opt_switches, preset=None):
    a = {"name": "fedrod"}
    if preset:
        a["preset"] = preset
    a["hyperparameters"] = dict({"eta": eta}, **opt_hyper)
    if opt_switches:
        a["switches"] = dict(opt_switches)
    return a


OPT_MUTANTS = {"fedrod-optimizers": ["opt-generic-plain",
                                     "opt-personal-plain"],
               "optimizer-slots-shared": ["slots-shared"]}


def momentum_decay():
    return make(
        "momentum-decay",
        "FedRoD, mlp 2-3-3, the generic model and the personal head each on "
        "its own torch.optim.SGD(momentum = 0.75, weight_decay = 0.0625), "
        "a new pair per client update",
        "The clients, rounds and w⁰ of fedrod/mlp/paper; η = 0.3; the "
        "paper's reading (features after the generic step, φ_P⁰ = 0).  "
        "opt.momentum = 0.75, opt.weight_decay = 0.0625 (coupled, every "
        "tensor), opt.state = reset: each client update builds the generic "
        "model's optimizer and the personal head's (clientrod.py:16, :53, "
        ":59), each tensor with its own buffer.",
        mf.MLP, mf.W_MLP,
        alg(0.3, {"opt.momentum": 0.75, "opt.weight_decay": 0.0625}, {}),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "weight-decay-form",
         "fedrod-balanced-risk", "fedrod-features"],
        dict(OPT_MUTANTS, **{"weight-decay-form": ["decay-form-swap"],
                             "fedrod-balanced-risk": ["bsm-plain"],
                             "fedrod-features": ["features-before"]}))


def nesterov_personal_client():
    return make(
        "nesterov-personal-client",
        "FedRoD, mlp 2-3-3, the pfllib preset, SGD with Nesterov momentum "
        "0.5 and weight decay 0.125 on the personal head only, one pair of "
        "optimizers per client kept across its rounds",
        "The clients, rounds and w⁰ of fedrod/mlp/paper; η = 0.4; preset "
        "pfllib (features before the generic step, φ_P⁰ = w⁰'s head).  "
        "opt.momentum = 0.5, opt.nesterov = on, opt.weight_decay = 0.125, "
        "opt.decay_scope = personal (φ_P's tensors decay, the generic "
        "model's do not), opt.state = client: a client's two optimizers, "
        "built once as PFLlib's are, carry their buffers into its next "
        "round.",
        mf.MLP, mf.W_MLP,
        alg(0.4, {"opt.momentum": 0.5, "opt.weight_decay": 0.125},
            {"opt.nesterov": "on", "opt.decay_scope": "personal",
             "opt.state": "client"}, preset="pfllib"),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "weight-decay-scope",
         "nesterov-momentum", "fedrod-features-before"],
        dict(OPT_MUTANTS, **{"weight-decay-scope": ["decay-scope-flip"],
                             "nesterov-momentum": ["nesterov-ignored"],
                             "fedrod-features-before": ["features-after"]}))


def adam_server():
    return make(
        "adam-server",
        "FedRoD on a layer list (dense 2→4, ReLU, dense 4→3), Adam(betas = "
        "(0.8125, 0.96875), eps = 2^-7) for the generic model and for the "
        "personal head, one pair carried from client to client",
        "The clients, rounds and w⁰ of fedrod/layers/paper; η = 0.05; the "
        "paper's reading.  opt.method = adam, opt.beta1 = 0.8125, "
        "opt.beta2 = 0.96875, opt.eps = 0.0078125, opt.state = server: one "
        "optimizer object per role, reused for every client in training "
        "order (moments and step counts carried across clients).",
        mf.LAYERS, mf.W_LAYERS,
        alg(0.05, {"opt.beta1": 0.8125, "opt.beta2": 0.96875,
                   "opt.eps": 0.0078125},
            {"opt.method": "adam", "opt.state": "server"}),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "adam-bias-correction",
         "aggregation-weights"],
        dict(OPT_MUTANTS, **{"adam-bias-correction":
                             ["adam-no-bias-correction"],
                             "aggregation-weights": ["uniform-weights"]}),
        adam=True)


def adamw_weights_client():
    return make(
        "adamw-weights-client",
        "FedRoD, mlp 2-3-3, AdamW(betas = (0.75, 0.9375), eps = 2^-6, "
        "weight_decay = 0.25) on the weights only, one pair of optimizers "
        "per client",
        "The clients, rounds and w⁰ of fedrod/mlp/paper; η = 0.04; the "
        "paper's reading.  opt.method = adamw (decoupled decay θ(1 − ηλ) "
        "before the step), opt.weight_decay = 0.25, opt.decay_scope = "
        "weights: W1, W2 and W_P decay, the biases b1, b2 and b_P do not "
        "(the no-decay parameter group); opt.state = client.",
        mf.MLP, mf.W_MLP,
        alg(0.04, {"opt.beta1": 0.75, "opt.beta2": 0.9375,
                   "opt.eps": 0.015625, "opt.weight_decay": 0.25},
            {"opt.method": "adamw", "opt.decay_scope": "weights",
             "opt.state": "client"}),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "weight-decay-scope",
         "weight-decay-form", "adam-bias-correction"],
        dict(OPT_MUTANTS, **{"weight-decay-scope": ["decay-scope-all"],
                             "weight-decay-form": ["decay-form-swap"],
                             "adam-bias-correction":
                             ["adam-no-bias-correction"]}),
        adam=True)


def bn_momentum_decay():
    return make(
        "bn-momentum-decay",
        "FedRoD on a layer list with batch normalisation, torch.optim.SGD("
        "momentum = 0.625, weight_decay = 0.09375) for the generic model "
        "and the personal head, a new pair per client update",
        "The clients, rounds (batches of at least two) and w⁰ of "
        "fedrod/layers/bn-paper; η = 0.25; the paper's reading (two "
        "training passes per batch, each moving r_μ, r_v).  The optimizer "
        "steps and decays the parameters (γ, β included), never the "
        "buffers r_μ, r_v (torch optimizers range over parameters()).",
        mf.LAYERS_BN, mf.W_LAYERS_BN,
        alg(0.25, {"opt.momentum": 0.625, "opt.weight_decay": 0.09375}, {}),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "fedrod-bn-passes",
         "bn-running-frozen"],
        dict(OPT_MUTANTS, **{"fedrod-optimizers": ["opt-generic-plain",
                                                   "opt-personal-plain",
                                                   "opt-steps-buffers"],
                             "fedrod-bn-passes": ["bn-after-no-move"],
                             "bn-running-frozen": ["running-frozen"]}),
        rounds=mf.ROUNDS_BN)


def sgd_weights_layers():
    return make(
        "sgd-weights-layers",
        "FedRoD on a layer list (dense 2→4, ReLU, dense 4→3), "
        "torch.optim.SGD(momentum = 0.5, weight_decay = 0.125) on the "
        "weights only (fc1.bias, out.bias and the personal head's bias in "
        "the no-decay group), a new pair per client update",
        "The clients, rounds and w⁰ of fedrod/layers/paper; η = 0.1; the "
        "paper's reading.  opt.momentum = 0.5, opt.weight_decay = 0.125, "
        "opt.decay_scope = weights: the layer list's NAME.weight tensors "
        "and W_P decay, its NAME.bias tensors and b_P do not (the no-decay "
        "parameter group of common training code), opt.state = reset.",
        mf.LAYERS, mf.W_LAYERS,
        alg(0.1, {"opt.momentum": 0.5, "opt.weight_decay": 0.125},
            {"opt.decay_scope": "weights"}),
        ["fedrod-optimizers", "optimizer-slots-shared",
         "optimizer-state-lifetime", "weight-decay-scope"],
        dict(OPT_MUTANTS, **{"weight-decay-scope": ["decay-scope-all"]}))


MAKERS = [momentum_decay, nesterov_personal_client, adam_server,
          adamw_weights_client, bn_momentum_decay, sgd_weights_layers]

if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
