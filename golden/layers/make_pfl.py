#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Personalised golden vectors on a small CNN ("kind": "layers"), exact
rational arithmetic end to end (squared loss; every layer rational):

  layers/fedalt/cnn-fedrep-head   FedAlt with the FedRep preset (Pillutla et
      al., ICML 2022, Alg. 4; Collins et al. 2021): the split's group "head"
      (the last parametrised layer's blocks, fc.weight and fc.bias) is
      personal, τ_v head steps then the body's, uniform weights, stateful;
      two rounds and a final fine-tuning of the head
      (golden/pflref_exact_pfl.py).
  layers/ditto/cnn-two-rounds     Ditto (Li et al., ICML 2021, Alg. 1) on the
      same CNN, paper switches (interleaved on a shared batch, squared
      regulariser toward w^t, n_k weights), client 1 unsampled in round 1
      (golden/pflref_exact.py).
  layers/pfedme/cnn-two-rounds    pFedMe (Dinh et al., NeurIPS 2020, Alg. 1)
      on the same CNN, paper switches (θ reset to w_{i,r} per batch, K = 2
      inner steps, β = 0.875), every client trains, S^t a proper subset in
      both rounds (golden/pflref_exact.py).

The CNN: input 1×5×5; conv2d "conv" 1→2, kernel 2, padding 1 (2×6×6),
relu, maxpool2d 2 (2×3×3), flatten (18), dense "fc" 18→1; (ŷ − y)².

    /usr/bin/python3 golden/layers/make_pfl.py [OUTDIR]
"""
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc          # noqa: E402
import pflref_exact as px           # noqa: E402
import pflref_exact_layers as pl    # noqa: E402
import pflref_exact_pfl as pp       # noqa: E402
import pflref_golden as pg          # noqa: E402

GENERATOR = "golden/layers/make_pfl.py (exact fractions, {} on pflref_exact_layers.py)"
FEDALT_SOURCE = ("Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022, Alg. 4 "
                 "(FedAlt; FedRep preset); shared/spec notes-pflego-fedalt-fedsim-fedrep.md")
DITTO_SOURCE = ("Li, Hu, Beirami, Smith, ICML 2021, Alg. 1; shared/spec "
                "notes-fedavg-pfedme-ditto-perfedavg-apfl.md §3")

CNN = {"kind": "layers", "input": [1, 5, 5], "loss": "squared",
       "layers": [
           {"type": "conv2d", "name": "conv", "out_channels": 2, "kernel": 2,
            "padding": 1},
           {"type": "relu"},
           {"type": "maxpool2d", "kernel": 2},
           {"type": "flatten"},
           {"type": "dense", "name": "fc", "out": 1}]}
CLIENTS = [{"X": lc.rows(1100 + i, n, 25),
            "y": lc.values(random.Random(1150 + i), n, -1.5, 1.5, 16)}
           for i, n in enumerate((3, 4, 2))]
W0 = lc.init_for(CNN, 29, scale=0.5)

MODEL_MUTANTS = {
    "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
    "conv-padding": ["conv-pad-end", "conv-pad-replicate"],
    "pool-gradient": ["pool-grad-first", "pool-grad-all"],
    "flatten-order": ["flatten-nhwc"],
}


def make(folder, vid, fname, title, description, algorithm, rounds, split, post,
         flags, mutants, replay, source):
    spec = pg.given_spec(title, description, CNN, CLIENTS,
                         {"kind": "given", "w": W0}, algorithm, rounds,
                         split=split, post=post)

    def run(bugs=frozenset(), domain=None):
        if domain is None:
            return replay(spec, frozenset(bugs))
        saved = pl.Model.__init__.__defaults__
        pl.Model.__init__.__defaults__ = (domain,)
        try:
            return replay(spec, frozenset(bugs))
        finally:
            pl.Model.__init__.__defaults__ = saved

    pl.reset_stats()
    result = run()
    lc.guard_kinks()
    exp0 = pg.expected(*result)
    fp64 = lc.gap(exp0, pg.expected(*run(domain="float")))
    tol = lc.tolerance(1e-13, 1e-12, "exact rationals of the binary inputs", fp64)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v: (trace, w, v))
    prov = pg.provenance("independent", f"{source}; {lc.LAYERS_SOURCE}",
                         GENERATOR.format(folder))
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def pfl_replay(spec, bugs):
    w, v, trace = pp.replay(spec, bugs)
    return trace, w, v


def personal_replay(spec, bugs):
    w, v, trace = px.replay_personal(spec, bugs)
    return trace, w, v


def fedrep():
    algorithm = {"name": "fedalt", "preset": "fedrep",
                 "hyperparameters": {"gamma_u": 0.046875, "gamma_v": 0.078125,
                                     "eta_ft": 0.0625, "tau_v": 1}}
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1], [2, 1]],
                                           [[3, 1], [0, 2], [1, 3]],
                                           [[1, 0], [0]]]},
        {"clients": [0, 1], "batches": [[[1, 2], [0, 1]], [[2, 0], [3], [1, 2]]]},
    ]
    post = [[[0, 2], [1]], [[3, 1]], [[1, 0], [0]]]
    flags = ["pfl-update-order", "stale-personal-state", "aggregation-weights",
             "finetune-scope", "conv-kernel-orientation", "conv-padding",
             "pool-gradient", "flatten-order"]
    mutants = {"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
               "stale-personal-state": ["reset-personal"],
               "aggregation-weights": ["samples-weights"],
               "finetune-scope": ["scope-flip"]}
    mutants.update(MODEL_MUTANTS)
    return make("fedalt", "layers/fedalt/cnn-fedrep-head", "fedalt-cnn-fedrep-head.json",
                "FedRep (FedAlt preset) on a CNN, personal head, two rounds and "
                "head fine-tuning",
                "Input 1x5x5; conv (2 channels, kernel 2, padding 1) -> 2x6x6, "
                "relu, maxpool2d 2 -> 2x3x3, flatten, fc 18 -> 1; loss "
                "(y-hat - y)^2. Split: the group head (fc.weight, fc.bias) is "
                "personal. FedRep: tau_v = 1 head step with gamma_v = 0.078125, "
                "then the body with gamma_u = 0.046875 on the remaining batches; "
                "uniform weights; stateful; fine-tuning of the head with eta_ft "
                "= 0.0625.",
                algorithm, rounds, {"personal": ["head"]}, post, flags, mutants,
                pfl_replay, FEDALT_SOURCE)


def ditto():
    algorithm = {"name": "ditto", "hyperparameters": {"eta": 0.0546875,
                                                      "lambda": 0.375}}
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1]], [[3, 1], [0, 2]],
                                           [[1, 0]]]},
        {"clients": [0, 2], "batches": [[[1, 2], [0]], [[0], [1, 0]]]},
    ]
    flags = ["prox-sign", "ditto-moving-ref", "stale-personal-state",
             "aggregation-weights", "stale-global", "conv-kernel-orientation",
             "conv-padding", "pool-gradient"]
    mutants = {"prox-sign": ["prox-plus"],
               "ditto-moving-ref": ["ditto-ref-moving"],
               "stale-personal-state": ["reset-personal", "personal-from-global"],
               "aggregation-weights": ["uniform-weights"],
               "stale-global": ["restart-w0"]}
    mutants.update({k: MODEL_MUTANTS[k] for k in ("conv-kernel-orientation",
                                                  "conv-padding", "pool-gradient")})
    return make("ditto", "layers/ditto/cnn-two-rounds", "ditto-cnn-two-rounds.json",
                "Ditto on a CNN, paper switches, two rounds, client 1 unsampled "
                "in round 1",
                "Input 1x5x5; conv (2 channels, kernel 2, padding 1), relu, "
                "maxpool2d 2, flatten, fc 18 -> 1; loss (y-hat - y)^2. Ditto: per "
                "batch a personal step v <- v - eta (grad f(v) + lambda (v - w^t)) "
                "and a global step, eta = 0.0546875, lambda = 0.375; weights "
                "n_k / m_t.",
                algorithm, rounds, None, None, flags, mutants, personal_replay,
                DITTO_SOURCE)


PFEDME_SOURCE = ("Dinh, Tran, Nguyen, NeurIPS 2020, Alg. 1; shared/spec "
                 "notes-fedavg-pfedme-ditto-perfedavg-apfl.md §2")


def pfedme():
    algorithm = {"name": "pfedme",
                 "hyperparameters": {"eta": 0.0390625, "eta_p": 0.0546875,
                                     "lambda": 0.625, "K": 2, "beta": 0.875}}
    rounds = [
        {"clients": [0, 1, 2], "selected": [0, 2],
         "batches": [[[0, 2]], [[3, 1], [0, 2]], [[1, 0]]]},
        {"clients": [0, 1, 2], "selected": [1, 2],
         "batches": [[[1, 2]], [[0, 2]], [[0]]]},
    ]
    flags = ["theta-start", "prox-sign", "prox-reference", "beta-ignored",
             "personal-eval", "unsampled-client", "conv-kernel-orientation",
             "conv-padding"]
    mutants = {"theta-start": ["theta-start-flip"],
               "prox-sign": ["prox-plus"],
               "prox-reference": ["pfedme-ref-wt"],
               "beta-ignored": ["beta-one"],
               "personal-eval": ["personal-eval=local_w", "personal-eval=global"],
               "unsampled-client": ["aggregate-all"]}
    mutants.update({k: MODEL_MUTANTS[k] for k in ("conv-kernel-orientation",
                                                  "conv-padding")})
    return make("pfedme", "layers/pfedme/cnn-two-rounds", "pfedme-cnn-two-rounds.json",
                "pFedMe on a CNN, paper switches, K = 2, beta = 0.875, two rounds",
                "Input 1x5x5; conv (2 channels, kernel 2, padding 1), relu, "
                "maxpool2d 2, flatten, fc 18 -> 1; loss (y-hat - y)^2. pFedMe: "
                "every client trains; per batch theta <- w_{i,r} (reset), K = 2 "
                "steps theta <- theta - eta_p (grad f(theta) + lambda (theta - "
                "w_{i,r})), then w_{i,r+1} = w_{i,r} - eta lambda (w_{i,r} - "
                "theta); w_{t+1} = (1 - beta) w_t + beta mean over S^t; eta = "
                "0.0390625, eta_p = 0.0546875, lambda = 0.625, beta = 0.875.",
                algorithm, rounds, None, None, flags, mutants, personal_replay,
                PFEDME_SOURCE)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [fedrep, ditto, pfedme])
