#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared-switch golden vectors (issue 33 §3) of CFL, IFCA, APFL, FedFomo,
FedAlt, FedSim and Per-FedAvg: for the (algorithm, opt.* / bn.* / lr.*
value) pairs golden/coincidences.py listed as not yet covered (_NOT_YET),
a few small vectors of each algorithm that run several of those values
at once, each free of the audit's shared coincidences (SHARED_RULES):
β ≠ η, 1 − η; β₁ ≠ β₂; λ ≠ every constant of the algorithm; γ ≠ 1 and ≠
every other constant; a step decay that fires inside the rounds; an
optimizer state that crosses a client update; a decay scope that
excludes a block that exists (a bias, a batch norm, a split); batch norm
whose running statistics move (ρ = 0.2) under bn.running_var = biased
and bn.running = frozen (the run with the default differs: bn_matters).

Each vector's spec is run, as written, through its algorithm's exact
replay (golden/audit.py's replay: pflref_exact_cfl.py, _ifca.py, _apfl.py,
_fedfomo.py, _pfl.py for fedalt and fedsim, _perfedavg.py), whose local
steps go through golden/pflref_exact_optim.py's optimizer: exact
fractions, the square roots (Adam, the batch norm) at 60 decimal digits.
The generator asserts, per vector, what makes it able to fail (the
checks of make_shared_pfl.py): each flagged bug moves a value far outside
the tolerance (check_mutants), the three state lifetimes give three
different runs, the decay changes the run, the decay scope reads the
block it names (the run differs from the decay on every block and from
no decay), the audit finds none of the shared coincidences for the values
the vector is meant to cover (covered_free), and the batch norm's
running-statistics switch changes the run (bn_matters).

All on golden/layers/make_bn.py's batch-norm MLP (dense fc1 3 -> 4
without bias, batchnorm1d bn1 (eps = 0.03, momentum 0.2), relu, dense fc2
4 -> 1; squared loss; clients of 4, 3, 5 samples), with bn.running =
frozen or bn.running_var = biased; a split personal = fc2 where
opt.decay_scope = shared | personal reads it (CFL, IFCA, APFL, FedFomo:
the split is read by the optimizer only).  Vectors (ids
optim/<algorithm>/<name>; file <algorithm>-<name>.json):
  cfl/adam-personal-client-decay-bn-frozen,
  ifca/adam-personal-client-decay-bn-frozen
                               Adam kept per client, coupled decay on fc2
                               only, exponential decay of η (IFCA: γ)
  cfl/classical-shared-server-step-bn-biased,
  ifca/classical-shared-server-step-bn-biased
                               classical momentum carried from client to
                               client, decay on fc1, bn1 only, a step
                               decay firing at round 2 (3 rounds)
  cfl/momentum-weights-client-bn-biased,
  ifca/momentum-weights-client-bn-biased
                               torch momentum kept per client, decay on
                               the weights only (fc2.bias, bn1 undecayed)
  apfl/adam-personal-client-bn-frozen,
  fedfomo/adam-personal-client-bn-biased
                               Adam kept per client, decay on fc2 only
  apfl/momentum-shared-server-bn-biased,
  fedfomo/momentum-shared-server-bn-frozen
                               torch momentum carried, decay on fc1, bn1
  fedalt/adam-client-bn-frozen, fedsim/adam-client-bn-frozen
                               Adam kept per client (the presets' split:
                               the head fc2 personal)
  fedalt/momentum-server-bn-biased, fedsim/momentum-server-bn-biased
                               torch momentum carried from client to client
  perfedavg/exact-bn-biased, perfedavg/fo-bn-biased
                               Per-FedAvg (exact; fo) without optimizer
                               switches, the biased running variance: every
                               training pass of a step (D, D', exact: D'')
                               and the personalisation's moves the
                               statistics

    /usr/bin/python3 golden/optim/make_shared_pb.py [OUTDIR]
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)
sys.path.insert(0, GOLDEN)
sys.path.insert(0, HERE)

import pflref_exact_optim as po           # noqa: E402
import pflref_golden as pg                # noqa: E402
from make_shared_pfl import (ADAM_BUGS, ADAM_HYPER, ADAM_TEXT,  # noqa: E402
                             BN_BIASED, BN_FLAGS, BN_FROZEN,
                             CLASSICAL_BUGS, CLASSICAL_TEXT,
                             LR_BUGS, audit_frozen,
                             bn_covers, bugs, covered_free, decay_matters,
                             lifetimes_differ, replay, scope_matters,
                             tolerance)

GENERATOR = ("golden/optim/make_shared_pb.py with golden/pflref_exact_optim.py "
             "and each algorithm's exact replay (golden/audit.py replay; "
             "exact fractions, square roots at 60 decimal digits)")
SOURCE = ("torch.optim.SGD, torch.optim.Adam documented update rules, "
          "torch.optim.lr_scheduler.StepLR / ExponentialLR stepped once a "
          "round, torch.nn.BatchNorm1d's running statistics; "
          "docs/optimizers.md (the slots, the state lifetimes, the decay "
          "scopes); each algorithm's paper as in its own vectors")
SCOPE_MUTANTS = {"weight-decay-scope": ["decay-scope-all", "decay-scope-flip"]}
WEIGHTS_MUTANTS = {"weight-decay-scope": ["decay-scope-all"]}


def bn_matters(spec, exp, tol):
    """The running-statistics switch is read: the run with the default
    (bn.running = update, bn.running_var = unbiased) differs."""
    alt = copy.deepcopy(spec)
    sw = alt["algorithm"]["switches"]
    sw.pop("bn.running", None)
    sw.pop("bn.running_var", None)
    assert pg.detects(exp, replay(alt), tol) is not None


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
    checks = [covered_free(covers), bn_matters] + list(checks)
    if "optimizer-state-lifetime" in flags:
        checks.append(lifetimes_differ)
    if "opt.decay_scope" in spec["algorithm"]["switches"]:
        checks.append(scope_matters)
    if "lr.schedule" in spec["algorithm"]["switches"]:
        checks.append(decay_matters)
    for check in checks:
        check(spec, exp, tol)
    prov = pg.provenance("independent", SOURCE, GENERATOR)
    return "%s-%s.json" % (alg, name), pg.vector(vid, title, prov, flags,
                                                  spec, tol, exp)


def bn_spec(rel, algorithm, bn, split=None, rounds=None):
    """The frozen layers vector rel's inputs (model, problem, init,
    schedule) under algorithm, with bn.running = frozen or bn.running_var
    = biased (bn); rounds replace the schedule's where given."""
    spec = copy.deepcopy(audit_frozen(rel))
    algorithm = copy.deepcopy(algorithm)
    sw = algorithm.setdefault("switches", {})
    if bn == "biased":
        sw["bn.running_var"] = "biased"
    else:
        sw["bn.running"] = "frozen"
    spec["algorithm"] = algorithm
    if split is not None:
        spec["split"] = split
    if rounds is not None:
        spec["schedule"]["rounds"] = copy.deepcopy(rounds)
    return spec


# The batch-norm MLP's text (its data and initial point those of the layers
# vector named; the rounds are each vector's own, rounds_text)
BN_MODEL = ("Layer list dense fc1 (3 -> 4, no bias) -> batchnorm1d bn1 (eps = "
            "0.03, momentum 0.2) -> relu -> dense fc2 (4 -> 1), squared loss, "
            "three clients (n = 4, 3, 5) (the data and initial point of "
            "golden/%s).  ")


def rounds_text(spec):
    """'T rounds S = {..}, {..}.  ' of the spec's given schedule."""
    rs = spec["schedule"]["rounds"]
    return "%d rounds S = %s.  " % (len(rs), ", ".join(
        "{%s}" % ", ".join(str(k) for k in r["clients"]) for r in rs))


def bn_text(bn):
    return BN_FROZEN if bn == "frozen" else BN_BIASED


FC2 = {"personal": ["fc2"]}
ADAM_DECAY = 0.34375        # λ of the Adam vectors (coupled)
MOM_DECAY = 0.3125          # λ of the momentum vectors (coupled)


def adam_opt(scope=None, lr=None):
    """Adam's hyperparameters and switches: kept per client, coupled decay
    λ = 0.34375 (on the scope's blocks), an exponential decay of γ =
    0.6875 where lr."""
    hyper = dict(ADAM_HYPER, **{"opt.weight_decay": ADAM_DECAY})
    sw = {"opt.method": "adam", "opt.state": "client"}
    text = ADAM_TEXT % "adam" + "opt.weight_decay = %g (coupled: added to d " \
        "before the moments)" % ADAM_DECAY
    if scope:
        sw["opt.decay_scope"] = scope
        text += " with opt.decay_scope = %s: %s" % (scope, SCOPE_TEXT[scope])
    text += "; opt.state = client (a client's moments and step counts " \
        "carried into its next update)"
    if lr:
        hyper["lr.gamma"] = 0.6875
        sw["lr.schedule"] = "exponential"
        text += "; lr.schedule = exponential with lr.gamma = 0.6875"
    return hyper, sw, text + ".  "


SCOPE_TEXT = {"personal": "fc2 decays, fc1 and bn1 do not",
              "shared": "fc1 and bn1's weight and bias decay, fc2 does not",
              "weights": "fc1.weight and fc2.weight decay, fc2.bias and bn1's "
                         "weight and bias do not"}


def momentum_opt(mu, state, scope=None, classical=False, step=False):
    """SGD with momentum mu (torch's form or the classical one), coupled
    decay λ = 0.3125 (on the scope's blocks), state kept per client or
    carried from client to client, a step decay 0.5625 every 2 rounds
    where step."""
    hyper = {"opt.momentum": mu, "opt.weight_decay": MOM_DECAY}
    sw = {"opt.state": state}
    text = "opt.momentum = %g, " % mu
    if classical:
        sw["opt.momentum_form"] = "classical"
        text += CLASSICAL_TEXT
    text += "opt.weight_decay = %g (coupled)" % MOM_DECAY
    if scope:
        sw["opt.decay_scope"] = scope
        text += " with opt.decay_scope = %s: %s" % (scope, SCOPE_TEXT[scope])
    text += "; opt.state = %s (%s)" % (state, {
        "client": "a client's buffer carried into its next update",
        "server": "one buffer carried from client to client in training "
                  "order"}[state])
    if step:
        hyper.update({"lr.gamma": 0.5625, "lr.step_rounds": 2})
        sw["lr.schedule"] = "step"
        text += ("; lr.schedule = step with lr.gamma = 0.5625 and "
                 "lr.step_rounds = 2 (round 2's step sizes times 0.5625)")
    return hyper, sw, text + ".  "


def scope_bugs(scope):
    return WEIGHTS_MUTANTS if scope == "weights" else SCOPE_MUTANTS


def covers_of(sw, bn):
    keys = ("opt.method", "opt.momentum_form", "opt.decay_scope",
            "opt.state", "lr.schedule")
    return [(k, sw[k]) for k in keys if k in sw] + bn_covers(bn)


# ---------------------------------------------------------------- cfl, ifca

# CFL: every client in every round; the inputs of the local layers vector
# (its init and data), three rounds of batches of at least 2 samples (a
# batch norm's unbiased variance needs 2)
CFL_REL = "layers/local-bn1d-mlp-two-rounds.json"
CFL_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 1], [2, 3]], [[0, 1], [2, 0]],
                                       [[0, 1, 2], [3, 4]]]},
    {"clients": [0, 1, 2], "batches": [[[2, 3], [0, 1]], [[1, 2], [0, 2]],
                                       [[3, 4], [0, 1, 2]]]},
    {"clients": [0, 1, 2], "batches": [[[1, 3], [0, 2]], [[2, 0], [1, 0]],
                                       [[4, 2], [1, 3, 0]]]},
]
CFL_HYPER = {"eta": 0.0859375, "eps1": 0.4, "eps2": 0.1, "gamma_max": 0.25}
CFL_TEXT = ("CFL (Sattler et al. 2020, Alg. 5 with Alg. 1; eta = 0.0859375, "
            "eps1 = 0.4, eps2 = 0.1, gamma_max = 0.25), every client in every "
            "round; the local SGD's optimizer through opt.*%s.  ")
# IFCA: model averaging from two given cluster models (the inputs of the
# ifca layers vector), a third round added for the step decay
IFCA_REL = "layers/ifca-bn1d-mlp-model-given-models.json"
IFCA_ROUND3 = {"clients": [0, 1, 2],
               "batches": [[[3, 1], [0, 2]], [[1, 2], [0, 1]],
                           [[0, 4], [2, 3, 1]]]}
IFCA_HYPER = {"gamma": 0.0703125, "ifca.k": 2}
IFCA_TEXT = ("IFCA (Ghosh et al. 2020, Alg. 1, ifca.mode = model: LocalUpdate "
             "at gamma = 0.0703125 from the chosen cluster model, the models "
             "averaged), k = 2 given cluster models; LocalUpdate's optimizer "
             "through opt.*%s.  ")
SPLIT_NOTE = ", a split personal = fc2 read by opt.decay_scope only"
TOL_SQRT = ", the batch norm's square roots"


def cluster_vector(alg, kind):
    """CFL's or IFCA's vector of kind adam (personal, client, exponential,
    frozen), classical (shared, server, step, biased) or momentum
    (weights, client, biased)."""
    rel = CFL_REL if alg == "cfl" else IFCA_REL
    base = CFL_HYPER if alg == "cfl" else IFCA_HYPER
    if kind == "adam":
        hyper, sw, what = adam_opt("personal", lr=True)
        bn, name = "frozen", "adam-personal-client-decay-bn-frozen"
        title = ("torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, "
                 "weight_decay = %g on fc2 only) kept per client, exponential "
                 "decay 0.6875" % ADAM_DECAY)
        flags = ["adam-bias-correction", "weight-decay-scope",
                 "optimizer-state-lifetime", "lr-schedule"]
        mutants = bugs(ADAM_BUGS, SCOPE_MUTANTS, LR_BUGS)
    elif kind == "classical":
        hyper, sw, what = momentum_opt(0.59375, "server", "shared",
                                       classical=True, step=True)
        bn, name = "biased", "classical-shared-server-step-bn-biased"
        title = ("classical momentum v <- 0.59375 v - eta d, weight decay %g "
                 "on fc1 and bn1 only, one velocity carried from client to "
                 "client, step decay 0.5625 every 2 rounds" % MOM_DECAY)
        flags = ["momentum-form", "weight-decay-scope",
                 "optimizer-state-lifetime", "lr-schedule"]
        mutants = bugs(CLASSICAL_BUGS, SCOPE_MUTANTS, LR_BUGS)
    else:
        hyper, sw, what = momentum_opt(0.65625, "client", "weights")
        bn, name = "biased", "momentum-weights-client-bn-biased"
        title = ("torch.optim.SGD(momentum = 0.65625, weight_decay = %g on "
                 "the weights only) kept per client" % MOM_DECAY)
        flags = ["weight-decay-scope", "optimizer-state-lifetime"]
        mutants = dict(WEIGHTS_MUTANTS)
    split = FC2 if kind in ("adam", "classical") else None
    if alg == "cfl":
        rounds = CFL_ROUNDS if kind == "classical" else CFL_ROUNDS[:2]
        sw_alg = {}
    else:
        ifca = audit_frozen(IFCA_REL)["schedule"]["rounds"]
        rounds = ifca + [IFCA_ROUND3] if kind == "classical" else None
        sw_alg = {"ifca.mode": "model"}
    algorithm = {"name": alg, "hyperparameters": dict(base, **hyper),
                 "switches": dict(sw_alg, **sw)}
    spec = bn_spec(rel, algorithm, bn, split, rounds)
    fmap, mmap = BN_FLAGS[bn]
    T = len(spec["schedule"]["rounds"])
    label = {"cfl": "CFL", "ifca": "IFCA"}[alg]
    head = (CFL_TEXT if alg == "cfl" else IFCA_TEXT) % (SPLIT_NOTE if split
                                                         else "")
    return make(
        alg, name, "%s on a batch-norm MLP, %s, %s" % (
            label, title, "running statistics frozen" if bn == "frozen"
            else "biased running variance"),
        head + BN_MODEL % rel + rounds_text(spec) + what + bn_text(bn),
        spec, tolerance("at most 2 local steps per client update, %d rounds%s"
                        % (T, TOL_SQRT), True),
        flags + fmap, bugs(mutants, mmap), covers_of(sw, bn))


# ---------------------------------------------------------------- apfl, fedfomo

APFL_REL = "layers/apfl-bn1d-mlp-pfllib-keep.json"
APFL_HYPER = {"eta": 0.0703125, "alpha": 0.375}
APFL_TEXT = ("APFL under its preset pfllib (PFLlib's clientapfl.py: w_i and v_i "
             "each stepped on its own training pass, which moves its own "
             "running statistics; adaptive alpha from 0.375; eta = "
             "0.0703125; bn.aggregate = parameters_only): the paper's "
             "variant steps v at the mixture and runs a batch norm only with "
             "bn.running = frozen (the run refuses update), where no "
             "statistics move; two optimizers per client (w_i's and v_i's), "
             "a split personal = fc2 read by opt.decay_scope only.  ")
FOMO_REL = "layers/fedfomo-bn1d-mlp-train.json"
FOMO_HYPER = {"eta": 0.0859375}
FOMO_TEXT = ("FedFomo (Zhang et al. 2021, Alg. 1; eta = 0.0859375, the given "
             "peers and validation sets of the inputs named), the local SGD's "
             "optimizer through opt.*, a split personal = fc2 read by "
             "opt.decay_scope only.  ")


def split_vector(alg, kind):
    """APFL's or FedFomo's vector of kind adam (personal, client) or
    momentum (shared, server); APFL's batch norm frozen under Adam,
    FedFomo's biased (and the reverse)."""
    rel, base, head = {"apfl": (APFL_REL, APFL_HYPER, APFL_TEXT),
                       "fedfomo": (FOMO_REL, FOMO_HYPER, FOMO_TEXT)}[alg]
    if kind == "adam":
        hyper, sw, what = adam_opt("personal")
        bn = "frozen" if alg == "apfl" else "biased"
        name = "adam-personal-client-bn-" + bn
        title = ("torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, "
                 "weight_decay = %g on fc2 only) kept per client" % ADAM_DECAY)
        flags = ["adam-bias-correction", "weight-decay-scope",
                 "optimizer-state-lifetime"]
        mutants = bugs(ADAM_BUGS, SCOPE_MUTANTS)
    else:
        hyper, sw, what = momentum_opt(0.59375, "server", "shared")
        bn = "biased" if alg == "apfl" else "frozen"
        name = "momentum-shared-server-bn-" + bn
        title = ("torch.optim.SGD(momentum = 0.59375, weight_decay = %g on "
                 "fc1 and bn1 only), one buffer carried from client to "
                 "client" % MOM_DECAY)
        flags = ["weight-decay-scope", "optimizer-state-lifetime"]
        mutants = dict(SCOPE_MUTANTS)
    if alg == "apfl":
        flags.append("optimizer-slots-shared")
    algorithm = {"name": alg, "hyperparameters": dict(base, **hyper),
                 "switches": dict(sw)}
    if alg == "apfl":
        algorithm = dict({"name": alg, "preset": "pfllib"}, **algorithm)
    spec = bn_spec(rel, algorithm, bn, FC2)
    fmap, mmap = BN_FLAGS[bn]
    T = len(spec["schedule"]["rounds"])
    return make(
        alg, name, "%s on a batch-norm MLP, %s, %s" % (
            {"apfl": "APFL", "fedfomo": "FedFomo"}[alg], title,
            "running statistics frozen" if bn == "frozen"
            else "biased running variance"),
        head + BN_MODEL % rel + rounds_text(spec) + what + bn_text(bn),
        spec, tolerance("at most 2 local steps per client update, %d rounds%s"
                        % (T, TOL_SQRT), True),
        flags + fmap, bugs(mutants, mmap), covers_of(sw, bn))


# ---------------------------------------------------------------- fedalt, fedsim

PFL_REL = {"fedalt": "layers/fedalt-bn1d-mlp-fedrep-head.json",
           "fedsim": "layers/fedsim-bn1d-mlp-fedper-pfllib-keep.json"}
PFL_TEXT = {
    "fedalt": ("FedAlt under its preset fedrep (Collins et al. 2021, Alg. 1: "
               "tau_v = 1 step on the head fc2, then the body; gamma_u = "
               "0.0546875, gamma_v = 0.0859375, then the head fine-tuned at "
               "eta_ft = 0.0703125); two optimizers per client (u's and "
               "v's).  "),
    "fedsim": ("FedSim under its preset fedper_pfllib (u and v stepped "
               "together, gamma_u = 0.0546875 on the body, gamma_v = "
               "0.0859375 on the head fc2; one optimizer with two parameter "
               "groups; bn.aggregate = parameters_only).  "),
}


def pfl_vector(alg, kind):
    """FedAlt's or FedSim's vector of kind adam (client, frozen) or
    momentum (server, biased)."""
    if kind == "adam":
        hyper, sw, what = adam_opt()
        bn, name = "frozen", "adam-client-bn-frozen"
        title = ("torch.optim.Adam(betas = (0.75, 0.96875), eps = 2^-9, "
                 "weight_decay = %g) kept per client" % ADAM_DECAY)
        flags = ["adam-bias-correction", "optimizer-state-lifetime"]
        mutants = dict(ADAM_BUGS)
    else:
        hyper, sw, what = momentum_opt(0.59375, "server")
        bn, name = "biased", "momentum-server-bn-biased"
        title = ("torch.optim.SGD(momentum = 0.59375, weight_decay = %g), one "
                 "buffer carried from client to client" % MOM_DECAY)
        flags = ["optimizer-state-lifetime"]
        mutants = {}
    # (FedAlt's u and v optimizers step disjoint blocks, body and head, so
    # one state for both is the same run here: no optimizer-slots-shared)
    frozen = audit_frozen(PFL_REL[alg])["algorithm"]
    algorithm = {"name": alg, "preset": frozen["preset"],
                 "hyperparameters": dict(frozen["hyperparameters"], **hyper),
                 "switches": dict(frozen.get("switches", {}), **sw)}
    spec = bn_spec(PFL_REL[alg], algorithm, bn)
    fmap, mmap = BN_FLAGS[bn]
    T = len(spec["schedule"]["rounds"])
    return make(
        alg, name, "%s on a batch-norm MLP, %s, %s" % (
            {"fedalt": "FedAlt", "fedsim": "FedSim"}[alg], title,
            "running statistics frozen" if bn == "frozen"
            else "biased running variance"),
        PFL_TEXT[alg] + BN_MODEL % PFL_REL[alg] + rounds_text(spec) + what
        + bn_text(bn),
        spec, tolerance("at most 3 local steps per client update, %d rounds%s"
                        % (T, TOL_SQRT), True),
        flags + fmap, bugs(mutants, mmap), covers_of(sw, bn))


# ---------------------------------------------------------------- perfedavg

# Per-FedAvg (exact) on the batch-norm MLP: each local step reads three
# batches D, D', D'' (of 2 or 3 samples: a batch norm's unbiased variance
# needs 2), each client one personalisation step on its post batch
PFA_ROUNDS = [
    {"clients": [0, 1], "batches": [[[0, 1], [2, 3], [1, 3]],
                                    [[0, 2], [1, 2], [0, 1]]]},
    {"clients": [1, 2], "batches": [[[2, 1], [0, 1], [0, 2]],
                                    [[4, 2, 0], [1, 3], [2, 3, 4]]]},
    {"clients": [0, 2], "batches": [[[3, 0, 2], [1, 2], [0, 3]],
                                    [[1, 4], [3, 0, 2], [4, 0]]]},
]
PFA_POST = [[[1, 2, 3]], [[0, 2]], [[0, 1, 4]]]
PFA_MUTANTS = {"perfedavg-hessian-term": ["fo-step", "hessian-sign"]}


def perfedavg_biased(variant):
    """Per-FedAvg's bn.running_var = biased: every training pass (D at w,
    D' at w~, under the exact variant the Hessian-vector product's forward
    at w on D'', the personalisation's at theta_i) moves the running
    statistics with the batch's biased variance.  The fo variant (no D''
    pass) is the one the NumPy candidate runs (it has no Hessian-vector
    product through a batch norm)."""
    algorithm = {"name": "perfedavg",
                 "hyperparameters": {"alpha": 0.09375, "beta": 0.171875}}
    if variant == "fo":
        algorithm["switches"] = {"perfedavg.variant": "fo"}
    spec = bn_spec(CFL_REL, algorithm, "biased", rounds=PFA_ROUNDS)
    spec["schedule"]["post"] = copy.deepcopy(PFA_POST)
    fmap, mmap = BN_FLAGS["biased"]
    if variant == "exact":
        head = ("the exact variant: each local step w~ = w - alpha grad f(w; "
                "D), q = grad f(w~; D'), w <- w - beta (q - alpha grad^2 f(w; "
                "D'') q)")
        passes = ("D at w, D' at w~, the Hessian-vector product's forward at "
                  "w on D''")
        flags, mutants = ["perfedavg-hessian-term"] + fmap, bugs(PFA_MUTANTS, mmap)
        steps = "three passes each), the Hessian-vector products on dual numbers"
    else:
        head = ("perfedavg.variant = fo (the first-order variant of §5): each "
                "local step w~ = w - alpha grad f(w; D), q = grad f(w~; D'), w "
                "<- w - beta q (D'' unread)")
        passes = "D at w, D' at w~"
        flags, mutants = list(fmap), dict(mmap)
        steps = "two passes each)"
    return make(
        "perfedavg", "%s-bn-biased" % variant,
        "Per-FedAvg (%s) on a batch-norm MLP, biased running variance" % variant,
        "Per-FedAvg (Fallah et al. 2020, Alg. 1; alpha = 0.09375, beta = "
        "0.171875), " + head + ", the server's uniform mean, then theta_i = "
        "w - alpha grad f_i(w; D_1).  " + BN_MODEL % CFL_REL +
        rounds_text(spec) + "One local step per client update.  Every training "
        "pass moves the one model's running statistics (ref/algorithms/"
        "perfedavg.c's order: " + passes + "; the personalisation's pass "
        "moves theta_i's).  " + BN_BIASED,
        spec, tolerance("3 rounds of one local step (" + steps + ", the batch "
                        "norm's square roots", True),
        flags, mutants, bn_covers("biased"))


def _bind(f, alg, kind):
    g = lambda: f(alg, kind)        # noqa: E731
    g.__name__ = "%s_%s_%s" % (f.__name__, alg, kind)
    return g


MAKERS = tuple(_bind(cluster_vector, alg, kind) for alg in ("cfl", "ifca")
               for kind in ("adam", "classical", "momentum")) + \
    tuple(_bind(split_vector, alg, kind) for alg in ("apfl", "fedfomo")
          for kind in ("adam", "momentum")) + \
    tuple(_bind(pfl_vector, alg, kind) for alg in ("fedalt", "fedsim")
          for kind in ("adam", "momentum")) + \
    tuple(_bind(lambda alg, kind: perfedavg_biased(kind), "perfedavg", kind)
          for kind in ("exact", "fo"))


def main():
    pg.write_all(sys.argv, HERE, MAKERS)


if __name__ == "__main__":
    main()
