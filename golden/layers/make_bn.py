#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors of layer lists with batch normalisation ("kind":
"layers", batchnorm2d after a conv2d, batchnorm1d after a dense layer), in
60-digit decimal arithmetic (the batch's standard deviation is a square
root; cross-entropy needs exp and log), through
golden/pflref_exact_layers.py:

  FedAvg (McMahan et al., AISTATS 2017, Alg. 1; golden/pflref_exact.py):
  the training-mode forward normalises with the batch's mean and biased
  variance; the running statistics are buffers that every training-mode
  forward moves by PyTorch's rule (bn.running = update, the default:
  r ← (1 − ρ) r + ρ · batch statistic after each gradient pass, the
  unbiased m/(m − 1) s² into r_v unless bn.running_var = biased), and the
  server averages them with the rest of w (a torch state_dict average);
  under bn.running = frozen they stay at init.w's values;
  FedBN (Li et al., ICLR 2021, arXiv 2102.07623v2, Alg. 1;
  golden/pflref_exact_fedbn.py): every batchnorm layer's γ, β and running
  statistics stay local, the running statistics move after every batch by
  PyTorch's rule (unbiased variance; for batchnorm2d with m = n_b·H·W).

  layers/fedavg/bn2d-cnn-ce      input 1×4×4; conv2d "conv1" 1→2, kernel 3,
      padding 1, no bias (a bias before a training-mode BN is removed by
      the mean); batchnorm2d "bn1" (ε = 1/64, ρ = 0.15); relu; maxpool2d 2;
      flatten; dense "fc" 8→3; cross-entropy; three clients, two rounds.
  layers/fedavg/bn1d-mlp-squared input [3]; dense "fc1" 3→4 (no bias);
      batchnorm1d "bn1" (ε = 0.03, ρ = 0.2); relu; dense "fc2" 4→1;
      (ŷ − y)²; three clients, two rounds.
  layers/fedavg/bn1d-mlp-frozen  the second problem under bn.running =
      frozen (the running statistics stay; the forward still normalises
      with the batch statistics, as torch with momentum = 0).
  layers/fedavg/bn2d-cnn-biased  the first problem under bn.running_var =
      biased (s² into r_v).
  layers/fedbn/bn2d-cnn-ce       the first problem under FedBN (BN local,
      uniform weights), client 1 left out of round 1 (it keeps its BN).
  layers/fedbn/bn1d-mlp-samples  the second under FedBN with
      fedbn.weights = samples and fedbn.running_var = biased.
  layers/fedavg/bn1d-mlp-pfllib-keep   the second problem, three rounds,
      under bn.aggregate = parameters_only (PFLlib: each client keeps its
      own running statistics, the global's are the first participant's).
  layers/fedavg/bn2d-cnn-pfllib-preset the first problem, three rounds,
      under fedavg's preset pfllib (which sets bn.aggregate).
  layers/{ditto,fedalt,local,finetune,ifca}/bn1d-mlp-...  the second
      model under Ditto, FedRep (FedAlt preset), local, FedAvg-FT and IFCA
      (model averaging), bn.running = update, through each family's exact
      replay (golden/audit.py), 60-digit decimals.
  layers/ditto/bn1d-mlp-pfllib-keep  the second model under Ditto with
      bn.aggregate = parameters_only (PFLlib: each client's global copy keeps
      its running statistics, the global's are the first participant's).
  layers/fedalt/bn1d-mlp-fedrep-keep  the same under FedRep (FedAlt preset)
      with bn.aggregate = parameters_only: bn1 in the shared body keeps each
      client's running statistics.
  layers/fedsim/bn1d-mlp-fedper-pfllib-keep  FedPer under the preset
      fedper_pfllib (which sets bn.aggregate = parameters_only).
  layers/fedprox/bn1d-mlp-pfllib-keep  FedProx under its preset pfllib
      (which sets bn.aggregate = parameters_only).
  layers/pfedme/bn1d-mlp-pfllib-keep  pFedMe under its preset pfllib
      (which sets bn.aggregate = parameters_only: each client's θ model
      keeps its running statistics, the global's are the first uploader's).
  layers/apfl/bn1d-mlp-pfllib-keep  APFL under its preset pfllib (which
      sets bn.aggregate = parameters_only: w_i and v_i keep their own
      running statistics, the global's are the first participant's).
  layers/fedfomo/bn1d-mlp-pfllib-keep  FedFomo under its preset pfllib
      (which sets bn.aggregate = parameters_only: the distance over the
      parameters, phi_i mixing parameters only and keeping client i's own
      running statistics; PFLlib clientfomo.py:102-111, :157-165).
  layers/scaffold/bn1d-mlp-pfllib-keep  SCAFFOLD under its preset pfllib
      (which sets bn.aggregate = parameters_only and scaffold.bn_global =
      previous: each client keeps its running statistics, the global's
      stay init.w's).
  layers/perfedavg/bn2d-cnn-exact  Per-FedAvg's exact variant on the first
      problem's CNN with one output and a squared loss: the Hessian-vector
      product through the batch statistics (dual numbers), every training
      pass of a step (D, D', the product's D'') and the personalisation's
      moving the running statistics.

    /usr/bin/python3 golden/layers/make_bn.py [OUTDIR]
"""
import os
import random
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc          # noqa: E402
import pflref_exact as px          # noqa: E402
import pflref_exact_fedbn as fb     # noqa: E402
import pflref_exact_layers as pl    # noqa: E402
import pflref_golden as pg          # noqa: E402

GENERATOR = "golden/layers/make_bn.py (exact fractions, pflref_exact_layers.py)"
FEDBN_GENERATOR = ("golden/layers/make_bn.py (60-digit decimal, "
                   "pflref_exact_fedbn.py on pflref_exact_layers.py)")
FEDBN_SOURCE = ("Li, Jiang, Zhang, Kamp, Dou, ICLR 2021, arXiv 2102.07623v2, "
                "Alg. 1; shared/spec notes-fedbn-fedfomo.md §1.2-1.5")

# the running statistics in FedAvg's local steps (pflref_exact.local_sgd)
RUNNING_MUTANTS = {
    "bn-running-frozen": ["running-frozen"],
    "bn-running-moved": ["running-moved"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped"],
}

BN_MUTANTS = {
    "bn-batch-variance": ["unbiased-norm-var"],
    "bn-eps-placement": ["eps-outside-root"],
    "bn-backward": ["no-stat-backward"],
    "bn-eval-mode": ["running-in-training"],
}

CNN = {"kind": "layers", "input": [1, 4, 4], "loss": "cross_entropy",
       "layers": [
           {"type": "conv2d", "name": "conv1", "out_channels": 2, "kernel": 3,
            "padding": 1, "bias": False},
           {"type": "batchnorm2d", "name": "bn1", "eps": 0.015625, "momentum": 0.15},
           {"type": "relu"},
           {"type": "maxpool2d", "kernel": 2},
           {"type": "flatten"},
           {"type": "dense", "name": "fc", "out": 3}]}
CNN_LABELS = ([0.0, 2.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0, 0.0, 1.0])
CNN_CLIENTS = [{"X": lc.rows(800 + i, len(y), 16), "y": list(y)}
               for i, y in enumerate(CNN_LABELS)]
CNN_W0 = lc.init_for(CNN, 47, scale=0.75)

MLP = {"kind": "layers", "input": [3], "loss": "squared",
       "layers": [
           {"type": "dense", "name": "fc1", "out": 4, "bias": False},
           {"type": "batchnorm1d", "name": "bn1", "eps": 0.03, "momentum": 0.2},
           {"type": "relu"},
           {"type": "dense", "name": "fc2", "out": 1}]}
MLP_CLIENTS = [{"X": lc.rows(900 + i, n, 3),
                "y": lc.values(random.Random(950 + i), n, -1.5, 1.5, 16)}
               for i, n in enumerate((4, 3, 5))]
MLP_W0 = lc.init_for(MLP, 28, scale=0.75)


def fedavg_bn2d():
    plans = [
        [(0, [[0, 2], [3, 1]]), (1, [[2, 0, 1]]), (2, [[4, 1], [0, 3, 2]])],
        [(0, [[1, 3, 0]]), (1, [[1, 2], [0, 2]]), (2, [[2, 4]])],
    ]
    flags = ["bn-running-frozen", "bn-running-update", "bn-batch-variance",
             "bn-eps-placement", "bn-backward", "bn-eval-mode",
             "bn2d-statistics", "state-dict-order", "conv-kernel-orientation",
             "batch-mean", "aggregation-weights", "stale-global"]
    mutants = {k: lc.COMMON_MUTANTS[k] for k in ("batch-mean", "aggregation-weights",
                                                 "stale-global")}
    mutants.update(BN_MUTANTS)
    mutants.update({k: RUNNING_MUTANTS[k] for k in ("bn-running-frozen",
                                                    "bn-running-update")})
    mutants.update({"bn2d-statistics": ["bn2d-per-position"],
                    "state-dict-order": ["bias-before-weight", "buffers-last"],
                    "conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"]})
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/bn2d-cnn-ce", "fedavg-bn2d-cnn-ce.json",
        "FedAvg, CNN with batchnorm2d (batch statistics per channel over "
        "batch x H x W), cross-entropy, two rounds",
        "Input 1x4x4; conv1 (2 channels, kernel 3, padding 1, no bias) -> 2x4x4, "
        "bn1 = batchnorm2d (eps = 1/64, momentum 0.15; training mode: batch "
        "mean and biased variance; the running statistics move after every "
        "gradient pass by PyTorch's rule, unbiased m/(m - 1) s^2 with m = n_b "
        "x 4 x 4, and are averaged with the rest), relu, maxpool2d 2 -> 2x2x2, "
        "flatten, fc 8 -> 3; cross-entropy; eta = 0.3125; three clients (n = "
        "4, 3, 5); weights n_k / m_t.",
        CNN, CNN_CLIENTS, CNN_W0, 0.3125, plans, flags, mutants, 1e-13, 1e-12)


def fedavg_bn1d():
    plans = [
        [(0, [[0, 2], [3, 1]]), (1, [[2, 0, 1]]), (2, [[4, 1], [0, 3, 2]])],
        [(0, [[1, 3, 0], [2, 1]]), (2, [[2, 4, 3]])],
    ]
    flags = ["bn-running-frozen", "bn-running-update", "bn-batch-variance",
             "bn-eps-placement", "bn-backward", "bn-eval-mode",
             "state-dict-order", "dense-weight-layout", "loss-scale", "batch-mean",
             "aggregation-weights", "stale-global"]
    mutants = {k: lc.COMMON_MUTANTS[k] for k in ("loss-scale", "batch-mean",
                                                 "aggregation-weights", "stale-global")}
    mutants.update(BN_MUTANTS)
    mutants.update({k: RUNNING_MUTANTS[k] for k in ("bn-running-frozen",
                                                    "bn-running-update")})
    mutants.update({"state-dict-order": ["bias-before-weight", "buffers-last"],
                    "dense-weight-layout": ["dense-w-transpose"]})
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/bn1d-mlp-squared", "fedavg-bn1d-mlp-squared.json",
        "FedAvg, MLP with batchnorm1d between the dense layer and relu, "
        "squared loss, two rounds",
        "Input [3]; fc1 3 -> 4 without bias, bn1 = batchnorm1d (eps = 0.03, "
        "momentum 0.2; batch statistics in training; the running statistics "
        "move after every gradient pass, unbiased n_b/(n_b - 1) s^2, and are "
        "averaged with the rest), relu, fc2 4 -> 1; loss (y-hat - y)^2; eta = "
        "0.0625; three clients (n = 4, 3, 5), client 1 unsampled in round 1; "
        "weights n_k / m_t.",
        MLP, MLP_CLIENTS, MLP_W0, 0.0625, plans, flags, mutants, 1e-13, 1e-12)


def fedavg_bn1d_frozen():
    plans = [
        [(0, [[0, 2], [3, 1]]), (1, [[2, 0, 1]]), (2, [[4, 1], [0, 3, 2]])],
        [(0, [[1, 3, 0], [2, 1]]), (2, [[2, 4, 3]])],
    ]
    flags = ["bn-running-moved", "bn-batch-variance", "bn-eval-mode",
             "state-dict-order", "aggregation-weights"]
    mutants = {"aggregation-weights": lc.COMMON_MUTANTS["aggregation-weights"],
               "bn-running-moved": RUNNING_MUTANTS["bn-running-moved"],
               "bn-batch-variance": BN_MUTANTS["bn-batch-variance"],
               "bn-eval-mode": BN_MUTANTS["bn-eval-mode"],
               "state-dict-order": ["bias-before-weight", "buffers-last"]}
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/bn1d-mlp-frozen", "fedavg-bn1d-mlp-frozen.json",
        "FedAvg, MLP with batchnorm1d, running statistics frozen in training "
        "(bn.running = frozen)",
        "The model, data and schedule of layers/fedavg/bn1d-mlp-squared under "
        "bn.running = frozen: the forward still normalises with the batch "
        "statistics, but r_mu and r_v keep init.w's values (as torch with "
        "momentum = 0), and their average is theirs.",
        MLP, MLP_CLIENTS, MLP_W0, 0.0625, plans, flags, mutants, 1e-13, 1e-12,
        switches={"bn.running": "frozen"})


def fedavg_bn2d_biased():
    plans = [
        [(0, [[0, 2], [3, 1]]), (1, [[2, 0, 1]]), (2, [[4, 1], [0, 3, 2]])],
        [(0, [[1, 3, 0]]), (1, [[1, 2], [0, 2]]), (2, [[2, 4]])],
    ]
    flags = ["bn-running-update", "bn-running-frozen", "bn2d-statistics",
             "aggregation-weights"]
    mutants = {"bn-running-update": RUNNING_MUTANTS["bn-running-update"],
               "bn-running-frozen": RUNNING_MUTANTS["bn-running-frozen"],
               "bn2d-statistics": ["bn2d-per-position"],
               "aggregation-weights": lc.COMMON_MUTANTS["aggregation-weights"]}
    return lc.fedavg_vector(
        GENERATOR, "layers/fedavg/bn2d-cnn-biased", "fedavg-bn2d-cnn-biased.json",
        "FedAvg, CNN with batchnorm2d, biased running variance "
        "(bn.running_var = biased)",
        "The model, data and schedule of layers/fedavg/bn2d-cnn-ce under "
        "bn.running_var = biased: after every gradient pass r_v <- (1 - 0.15) "
        "r_v + 0.15 s^2 with the batch's biased variance over n_b x 4 x 4 "
        "values (not m/(m - 1) s^2); r_mu as PyTorch moves it.",
        CNN, CNN_CLIENTS, CNN_W0, 0.3125, plans, flags, mutants, 1e-13, 1e-12,
        switches={"bn.running_var": "biased"})


def fedbn_vector(vid, fname, title, description, model, clients, w0, eta,
                 switches, rounds, flags, mutants, fedavg_plans):
    """FedBN through golden/pflref_exact_fedbn.py's replay; the tolerance's
    fp64 gap is that of the FedAvg run of the same model and data (the same
    layers, the running update adding three roundings per statistic)."""
    algorithm = {"name": "fedbn", "hyperparameters": {"eta": eta}}
    if switches:
        algorithm["switches"] = switches
    spec = pg.given_spec(title, description, model, clients,
                         {"kind": "given", "w": w0}, algorithm, rounds)

    def run(bugs=frozenset()):
        return fb.replay(spec, frozenset(bugs))

    pl.reset_stats()
    result = run()
    lc.guard_kinks()
    # (measured, as when these vectors were made, with the running
    # statistics frozen in the FedAvg run: the vectors stay as they were)
    frozen = {"bn.running": "frozen"}
    t_ex, w_ex = lc.fedavg_run(model, clients, w0, eta, "samples", fedavg_plans,
                               switches=frozen)
    t_fl, w_fl = lc.fedavg_run(model, clients, w0, eta, "samples", fedavg_plans,
                               domain="float", switches=frozen)
    fp64 = lc.gap(pg.expected(t_ex, w=w_ex), pg.expected(t_fl, w=w_fl))
    tol = lc.tolerance(1e-13, 1e-12, "60-digit decimals of the binary inputs "
                       "(the FedAvg run of this model and data measured)", fp64)
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run,
                              lambda trace, w, v, alpha: (trace, w, v))
    if model["layers"][1]["type"] == "batchnorm1d":
        # a second path: the same run as the mlp with bn, whose BN backward
        # goes through the full Jacobian (pflref_exact_fedbn.grad)
        other = pg.expected(*fb.replay(as_mlp_spec(spec))[:3])
        assert lc.gap(exp, other) < 1e-40, (vid, lc.gap(exp, other))
    prov = pg.provenance("independent", f"{FEDBN_SOURCE}; {lc.LAYERS_SOURCE}",
                         FEDBN_GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


def fedbn_bn2d():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [3, 1]], [[2, 0, 1]],
                                           [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0, 3]]]},
    ]
    flags = ["fedbn-bn-averaged", "bn-running-update", "bn-batch-variance",
             "bn-eps-placement", "bn-backward", "bn-eval-mode", "bn2d-statistics",
             "state-dict-order"]
    mutants = dict(BN_MUTANTS)
    mutants.update({
        "fedbn-bn-averaged": ["bn-averaged"],
        "bn-running-update": ["momentum-flipped", "running-var-flipped",
                              "running-var-count-nb"],
        "bn2d-statistics": ["bn2d-per-position"],
        "state-dict-order": ["bias-before-weight", "buffers-last"],
    })
    return fedbn_vector(
        "layers/fedbn/bn2d-cnn-ce", "fedbn-bn2d-cnn-ce.json",
        "FedBN, CNN with batchnorm2d, cross-entropy, two rounds, client 1 "
        "left out of round 1",
        "The model and data of layers/fedavg/bn2d-cnn-ce under FedBN: bn1's "
        "weight, bias, running_mean and running_var stay with each client; the "
        "running statistics move after every batch (momentum 0.15, unbiased "
        "variance with m = n_b x 4 x 4); conv1 and fc averaged with 1/|S_t|.",
        CNN, CNN_CLIENTS, CNN_W0, 0.3125, {}, rounds, flags, mutants,
        [[(k, b) for k, b in zip(r["clients"], r["batches"])] for r in rounds])


def as_mlp_spec(spec):
    """The bn1d layer list as the mlp with bn (docs/models.md: the same
    function and the same vector layout W1, γ, β, r_μ, r_v, W2, b2)."""
    L = spec["model"]["layers"]
    model = {"kind": "mlp", "d": spec["model"]["input"][0], "h": L[0]["out"],
             "k": 1, "loss": spec["model"]["loss"], "hidden_bias": False,
             "bias": True, "bn": True, "bn_eps": L[1]["eps"],
             "bn_momentum": L[1]["momentum"]}
    return dict(spec, model=model)


def fedbn_bn1d():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [3, 1]], [[2, 0, 1]],
                                           [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 1, 2], "batches": [[[1, 3, 0]], [[1, 2], [0, 2]],
                                           [[2, 4, 3]]]},
    ]
    flags = ["fedbn-bn-averaged", "bn-running-update", "bn-batch-variance",
             "bn-eps-placement", "bn-backward", "bn-eval-mode", "state-dict-order",
             "aggregation-weights", "loss-scale"]
    mutants = dict(BN_MUTANTS)
    mutants.update({
        "fedbn-bn-averaged": ["bn-averaged"],
        "bn-running-update": ["momentum-flipped", "running-var-flipped"],
        "state-dict-order": ["bias-before-weight", "buffers-last"],
        "aggregation-weights": ["weights=uniform"],
        "loss-scale": ["loss-x2"],
    })
    return fedbn_vector(
        "layers/fedbn/bn1d-mlp-samples", "fedbn-bn1d-mlp-samples.json",
        "FedBN, MLP with batchnorm1d, squared loss, weights n_k / sum n_j, "
        "biased running variance",
        "The model and data of layers/fedavg/bn1d-mlp-squared under FedBN "
        "with fedbn.weights = samples and fedbn.running_var = biased: bn1 s "
        "four blocks stay local, fc1 and fc2 averaged with n_k / m_t.",
        MLP, MLP_CLIENTS, MLP_W0, 0.0625,
        {"fedbn.weights": "samples", "fedbn.running_var": "biased"}, rounds, flags,
        mutants, [[(k, b) for k, b in zip(r["clients"], r["batches"])] for r in rounds])


# bn.aggregate = parameters_only, PFLlib's reading (TsingZ0/PFLlib
# d832e76f6a23 system/flcore): clientbase.py:67-69 set_parameters copies
# model.parameters() only, so a client's running statistics stay its own
# across rounds (the initial model's until it first trains);
# serverbase.py:138-150 aggregate_parameters deep-copies uploaded_models[0]
# and sums parameters() with weights n_k / m_t, so the global's buffers are
# the first uploader's.  Written here from those lines, apart from the C
# (ref/algorithms/fedavg_keep.c).
KEEP_SOURCE = ("TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientbase.py:"
               "67-69 (set_parameters: parameters() only), system/flcore/"
               "servers/serverbase.py:138-150 (aggregate_parameters: deepcopy of "
               "uploaded_models[0], parameters() averaged)")
KEEP_MUTANTS = {
    # the client starts from the global's buffers (the state_dict reading)
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    # the global's buffers averaged, or the last uploader's
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
}


def keep_round(pr, w, own, t, plan, eta, trace, bugs):
    """One FedAvg round (McMahan et al. 2017, Alg. 1, weights n_k / m_t)
    under parameters_only: client k starts from w_t's parameters with its
    own buffers own[k] and leaves its buffers in own[k]; w_{t+1} is the
    weighted sum on the parameters and the first participant's buffers."""
    B = pr.buffers
    trace.emit("round_begin", "train", t, None, None, "w", w)
    local = {}
    for k, steps in plan:
        if "start-global-buffers" in bugs:
            start = list(w)
        elif "start-w0-buffers" in bugs:
            start = [own["w0"][p] if p in B else w[p] for p in range(pr.P)]
        else:
            start = [own[k][p] if p in B else w[p] for p in range(pr.P)]
        trace.emit("client_begin", "train", t, k, 0, "w_local", start)
        wk = px.local_sgd(pr, k, start, steps, eta, trace, "train", t, "w_local",
                          bugs=bugs)
        trace.emit("client_end", "train", t, k, None, "w_local", wk)
        own[k] = [wk[p] if p in B else own[k][p] for p in range(pr.P)]
        local[k] = wk
    m_t = sum(pr.n(k) for k in local)
    c = {k: Fraction(pr.n(k), m_t) for k in local}
    if "uniform-weights" in bugs:             # 1/m in place of n_k / m_t
        c = {k: Fraction(1, len(local)) for k in local}
    first = plan[-1][0] if "global-buffers-last" in bugs else plan[0][0]
    new = []
    for p in range(pr.P):
        if p in B and "global-buffers-averaged" not in bugs:
            new.append(local[first][p])       # deepcopy(uploaded_models[0])
        else:
            new.append(sum(c[k] * local[k][p] for k in sorted(local)))
    trace.emit("server", "train", t, None, None, "w", new)
    return new


def keep_run(model, clients, w0_list, eta, plans, bugs=frozenset(), domain=None):
    """(trace, w) of FedAvg under bn.aggregate = parameters_only."""
    bugs = frozenset(bugs)
    pr = px.Problem(model, clients).bn_switches({})
    if domain is not None:
        pr.layers = pl.Model(model, domain)
        for c, spec in zip(pr.clients, clients):
            c["data"] = pl.ClientData(pr.layers, spec)
    w0 = px.initial({"kind": "given", "w": w0_list}, pr.P, bugs)
    own = {k: list(w0) for k in range(len(clients))}
    own["w0"] = list(w0)
    w, trace = list(w0), pg.Trace()
    for t, plan in enumerate(plans):
        w = keep_round(pr, w, own, t, plan, pg.exact(eta), trace, bugs)
    return trace, w


def keep_vector(vid, fname, title, description, model, clients, w0, eta, plans,
                preset=None):
    flags = ["bn-own-buffers", "bn-global-buffers", "bn-running-update",
             "aggregation-weights"]
    mutants = dict(KEEP_MUTANTS)
    mutants["bn-running-update"] = RUNNING_MUTANTS["bn-running-update"]
    mutants["aggregation-weights"] = ["uniform-weights"]

    def run(bugs=frozenset()):
        return keep_run(model, clients, w0, eta, plans, bugs)

    pl.reset_stats()
    trace, w = run()
    lc.guard_kinks()
    exp0 = pg.expected(trace, w=w)
    f_trace, f_w = keep_run(model, clients, w0, eta, plans, domain="float")
    fp64 = lc.gap(exp0, pg.expected(f_trace, w=f_w))
    what = "exact rationals of the binary inputs"
    if pl.Model(model).D.kind == "decimal":
        what = "60-digit decimals of the binary inputs"
    tol = lc.tolerance(1e-13, 1e-12, what, fp64)
    algorithm = {"name": "fedavg", "hyperparameters": {"eta": eta}}
    if preset:
        algorithm["preset"] = preset
    else:
        algorithm["switches"] = {"fedavg.weights": "samples",
                                 "bn.aggregate": "parameters_only"}
    spec = pg.given_spec(title, description, model, clients,
                         {"kind": "given", "w": w0}, algorithm,
                         [{"clients": [k for k, _ in plan],
                           "batches": [b for _, b in plan]} for plan in plans])
    exp = pg.checked_expected(vid, tol, flags, mutants, (trace, w), run,
                              lambda trace, w: (trace, w, None))
    gen = GENERATOR if pl.Model(model).D.kind == "fraction" else \
        GENERATOR.replace("exact fractions", "60-digit decimal")
    prov = pg.provenance("independent", f"{lc.PAPER_FEDAVG}; {KEEP_SOURCE}; "
                         f"{lc.LAYERS_SOURCE}", gen)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


KEEP_PLANS = [
    [(0, [[0, 2], [3, 1]]), (1, [[2, 0, 1]]), (2, [[4, 1], [0, 3, 2]])],
    [(0, [[1, 3, 0], [2, 1]]), (2, [[2, 4, 3]])],
    [(1, [[1, 2], [0, 2]]), (2, [[3, 0]])],
]


def fedavg_keep_bn1d():
    return keep_vector(
        "layers/fedavg/bn1d-mlp-pfllib-keep", "fedavg-bn1d-mlp-pfllib-keep.json",
        "FedAvg, MLP with batchnorm1d, running statistics kept per client "
        "(bn.aggregate = parameters_only, PFLlib)",
        "The model and data of layers/fedavg/bn1d-mlp-squared, three rounds "
        "(client 1 sits out round 1, client 0 round 2) under bn.aggregate = "
        "parameters_only: each client starts from w_t's parameters with its own "
        "running_mean and running_var (PFLlib set_parameters copies "
        "parameters() only), so client 1 starts round 2 from the buffers it "
        "left in round 0; fc1, bn1's weight and bias, fc2 are averaged with "
        "n_k / m_t; the global's running statistics are the first "
        "participant's (deepcopy of uploaded_models[0]).",
        MLP, MLP_CLIENTS, MLP_W0, 0.0625, KEEP_PLANS)


def fedavg_keep_bn2d():
    return keep_vector(
        "layers/fedavg/bn2d-cnn-pfllib-preset", "fedavg-bn2d-cnn-pfllib-preset.json",
        "FedAvg, CNN with batchnorm2d, preset pfllib (running statistics kept "
        "per client)",
        "The model and data of layers/fedavg/bn2d-cnn-ce, three rounds (client 1 "
        "sits out round 1, client 0 round 2) under preset pfllib, which sets "
        "bn.aggregate = parameters_only (lr.count = trainings changes nothing "
        "under a constant step): bn1's running statistics stay with each client "
        "and the global's are the first participant's; conv1, bn1's weight and "
        "bias, fc are averaged with n_k / m_t.",
        CNN, CNN_CLIENTS, CNN_W0, 0.3125, KEEP_PLANS, preset="pfllib")


# ---- batch normalisation in the other families (bn.running = update) -------
#
# Each family's exact replay (golden/audit.py: pflref_exact.py for local and
# finetune, pflref_exact_pfl.py for fedalt, pflref_exact.py's Ditto,
# pflref_exact_ifca.py) on the MLP with batchnorm1d above, through
# families_common.build: the running statistics move after every gradient
# pass of every local step, in whichever model the step trains (Ditto's v
# and w, FedRep's head and body passes, IFCA's cluster estimate's model),
# and travel with the model the algorithm keeps or averages.  The flags are
# those whose bugs move a number by more than 1e3 times the tolerance, the
# bn ones required.
FAMILY_SOURCES = {
    "ditto": "Li, Hu, Beirami, Smith, ICML 2021, Alg. 1; shared/spec notes §3",
    "fedalt": "Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022, Alg. 4 "
              "(FedAlt; FedRep preset); shared/spec notes-pflego-fedalt-fedsim-fedrep.md",
    "local": "local-only training, shared/spec notes-fedavg-pfedme-ditto-perfedavg-apfl.md §5",
    "finetune": "FedAvg (McMahan et al., AISTATS 2017, Alg. 1) then fine-tuning, "
                "shared/spec notes §5.1",
    "ifca": "Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, Alg. 1 (Option II, model "
            "averaging); shared/spec notes-cfl-ifca-sampling-metrics.md §2",
    "cfl": "Sattler, Müller, Samek, IEEE TNNLS 2020, Alg. 1; shared/spec "
           "notes-cfl-ifca-sampling-metrics.md §1",
}
FAMILY_GENERATOR = ("golden/layers/make_bn.py ({}, the family's exact replay on "
                    "pflref_exact_layers.py)")
BN_MUST = ["bn-running-update", "bn-running-frozen"]
BN_CANDIDATES = ["bn-running-update", "bn-running-frozen", "bn-batch-variance",
                 "bn-eval-mode", "state-dict-order"]
MLP_TEXT = ("Input [3]; fc1 3 -> 4 without bias, bn1 = batchnorm1d (eps = 0.03, "
            "momentum 0.2; batch statistics in training, the running statistics "
            "moved after every gradient pass with the unbiased n_b/(n_b - 1) s^2), "
            "relu, fc2 4 -> 1; loss (y-hat - y)^2.")


def family_vector(family, short, title, what, algorithm, rounds, post=None,
                  split=None, init_seed=0, must=(), extra=(), source=None):
    import families_common as fc
    import make_families as mf
    init = {"kind": "given", "w": lc.init_for(MLP, 600 + init_seed, scale=0.75)}
    vid = f"layers/{family}/bn1d-mlp-{short}"
    spec = pg.given_spec(title, f"{MLP_TEXT} {what}", MLP, MLP_CLIENTS, init,
                         algorithm, rounds, split=split, post=post)
    cands = mf.candidates(algorithm["name"])
    cands += [f for f in BN_CANDIDATES + list(extra) if f not in cands]
    return fc.build(FAMILY_GENERATOR, source or FAMILY_SOURCES[family],
                    vid, f"{family}-bn1d-mlp-{short}.json", title, spec, cands,
                    BN_MUST + list(must))


def ditto_bn():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]], [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0]]]},
    ]
    return family_vector(
        "ditto", "two-rounds", "Ditto on the MLP with batchnorm1d, running statistics "
        "moved in both models",
        "Ditto (paper switches): per batch a personal step v <- v - eta (grad f(v) + "
        "lambda (v - w^t)) and a global step, each a training pass that moves its own "
        "model's running statistics; the proximal term skips the buffers; eta = "
        "0.0703125, lambda = 0.375; weights n_k / m_t (the running statistics averaged "
        "with w); client 1 unsampled in round 1 (its v keeps its statistics).",
        {"name": "ditto", "hyperparameters": {"eta": 0.0703125, "lambda": 0.375}},
        rounds, init_seed=1, must=["prox-sign"])


def keep_rounds():
    """The bn.aggregate = parameters_only vectors' schedule: three rounds,
    client 1 sits out round 1 and client 0 round 2 (so a client's own
    running statistics, kept across a round it sits out, differ from the
    first uploader's)."""
    return [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]],
                                           [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0], [2, 1]], [[2, 4, 3]]]},
        {"clients": [1, 2], "batches": [[[1, 2], [0, 2]], [[3, 0]]]},
    ]


def ditto_keep_bn():
    # bn.aggregate = parameters_only under Ditto: PFLlib's serverditto.py
    # train() calls send_models and aggregate_parameters of serverbase.py
    # (KEEP_SOURCE): each client's global copy keeps its own running
    # statistics, the global takes the first uploader's; v_k (model_per) is
    # never sent.  Client 1 sits out round 1 and client 0 round 2, so
    # client 1 starts round 2 from the statistics its copy left in round 0
    # and the first uploader changes from 0 to 1.
    rounds = keep_rounds()
    return family_vector(
        "ditto", "pfllib-keep", "Ditto on the MLP with batchnorm1d, the global "
        "copy's running statistics kept per client (bn.aggregate = "
        "parameters_only, PFLlib)",
        "Ditto (paper switches otherwise) under bn.aggregate = parameters_only: "
        "each device's global copy w_k starts from w^t's parameters with the "
        "running_mean and running_var its own copy last left (init.w's before it "
        "first trains; PFLlib set_parameters copies parameters() only), and w^{t+1} "
        "takes the first participant's running statistics (deepcopy of "
        "uploaded_models[0]) with fc1, bn1's weight and bias and fc2 averaged with "
        "n_k / m_t; v_k is never sent, its statistics its own; eta = 0.0703125, "
        "lambda = 0.375; three rounds, client 1 sits out round 1 and client 0 "
        "round 2.",
        {"name": "ditto", "hyperparameters": {"eta": 0.0703125, "lambda": 0.375},
         "switches": {"bn.aggregate": "parameters_only"}},
        rounds, init_seed=5, must=["prox-sign", "bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=(f"{FAMILY_SOURCES['ditto']}; {KEEP_SOURCE}; system/flcore/servers/"
                "serverditto.py train() (send_models, aggregate_parameters)"))


def fedalt_bn():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3], [2, 1]], [[2, 0], [0, 1, 2]],
                                           [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 1], "batches": [[[1, 3, 0], [0, 1]], [[1, 2], [0, 2]]]},
    ]
    post = [[[0, 2, 1]], [[2, 1]], [[3, 4, 1]]]
    return family_vector(
        "fedalt", "fedrep-head", "FedRep (FedAlt preset) on the MLP with batchnorm1d, "
        "personal head",
        "FedAlt with the preset fedrep: fc2 (the head) personal, fc1 and bn1 shared; "
        "tau_v = 1 head step with gamma_v = 0.0859375, then the body with gamma_u = "
        "0.0546875 on the remaining batches; every pass moves bn1's running "
        "statistics, which are averaged with the body (uniform weights); "
        "fine-tuning of the head with eta_ft = 0.0703125.",
        {"name": "fedalt", "preset": "fedrep", "hyperparameters": {
            "gamma_u": 0.0546875, "gamma_v": 0.0859375, "eta_ft": 0.0703125,
            "tau_v": 1}},
        rounds, post=post, split={"personal": ["head"]}, init_seed=2,
        must=["pfl-update-order"])


def fedalt_keep_bn():
    # bn.aggregate = parameters_only under FedRep (FedAlt): PFLlib's
    # clientrep.py:86-88 set_parameters copies base.parameters() only and
    # serverbase.py:138-150 deep-copies the first upload of the base
    # (KEEP_SOURCE), so bn1 (in the shared body) keeps each client's running
    # statistics and the global body's are the first participant's.
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3], [2, 1]], [[2, 0], [0, 1, 2]],
                                           [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0], [0, 1]], [[2, 4], [1, 0, 3]]]},
        {"clients": [1, 2], "batches": [[[1, 2], [0, 2]], [[3, 0], [4, 2]]]},
    ]
    return family_vector(
        "fedalt", "fedrep-keep", "FedRep (FedAlt preset) on the MLP with batchnorm1d, "
        "the body's running statistics kept per client (bn.aggregate = "
        "parameters_only, PFLlib)",
        "FedAlt with the preset fedrep and bn.aggregate = parameters_only: fc2 (the "
        "head) personal, fc1 and bn1 shared; tau_v = 1 head step with gamma_v = "
        "0.0859375, then the body with gamma_u = 0.0546875; each client starts from "
        "u^(t)'s parameters with bn1's running statistics its own model last left "
        "(init.w's before it first trains), the server averages fc1 and bn1's weight "
        "and bias (uniform weights) and takes bn1's running statistics from the first "
        "participant, and the broadcast leaves each client's own; three rounds, "
        "client 1 sits out round 1 and client 0 round 2.",
        {"name": "fedalt", "preset": "fedrep", "hyperparameters": {
            "gamma_u": 0.0546875, "gamma_v": 0.0859375, "tau_v": 1},
         "switches": {"bn.aggregate": "parameters_only"}},
        rounds, split={"personal": ["head"]}, init_seed=6,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=(f"{FAMILY_SOURCES['fedalt']}; {KEEP_SOURCE}; system/flcore/clients/"
                "clientrep.py:86-88 (set_parameters: base.parameters() only)"))


def fedsim_keep_bn():
    # FedPer as PFLlib runs it (FedSim, preset fedper_pfllib, which sets
    # bn.aggregate = parameters_only): clientper.py:45-47 set_parameters
    # copies base.parameters() only, serverbase.py:138-150 (KEEP_SOURCE).
    rounds = keep_rounds()
    return family_vector(
        "fedsim", "fedper-pfllib-keep", "FedPer (FedSim, preset fedper_pfllib) on the "
        "MLP with batchnorm1d, the body's running statistics kept per client",
        "FedSim with the preset fedper_pfllib, which sets bn.aggregate = "
        "parameters_only (lr.count = trainings changes nothing under a constant step): "
        "fc2 (the head) personal, fc1 and bn1 shared; joint steps with gamma_u = "
        "0.0546875 on the body and gamma_v = 0.0859375 on the head; each client starts "
        "from u^(t)'s parameters with bn1's running statistics its own model last left, "
        "the server averages fc1 and bn1's weight and bias with n_i / sum n_j and takes "
        "bn1's running statistics from the first participant; three rounds, client 1 "
        "sits out round 1 and client 0 round 2.",
        {"name": "fedsim", "preset": "fedper_pfllib", "hyperparameters": {
            "gamma_u": 0.0546875, "gamma_v": 0.0859375}},
        rounds, init_seed=7,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=("Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022, Alg. 5 "
                "(FedSim; FedPer preset); shared/spec notes-pflego-fedalt-fedsim-"
                f"fedrep.md; {KEEP_SOURCE}; system/flcore/clients/clientper.py:45-47 "
                "(set_parameters: base.parameters() only)"))


def fedprox_keep_bn():
    # FedProx as PFLlib runs it (preset pfllib, which sets bn.aggregate =
    # parameters_only): serverprox.py train() calls send_models and
    # aggregate_parameters; clientprox.py:61-64 set_parameters copies
    # parameters() only (KEEP_SOURCE).
    rounds = keep_rounds()
    return family_vector(
        "fedprox", "pfllib-keep", "FedProx (preset pfllib) on the MLP with "
        "batchnorm1d, running statistics kept per client",
        "FedProx with the preset pfllib (uniform_weighted sampling, n_k / sum n_j "
        "weights; lr.count = trainings changes nothing under a constant step), which "
        "sets bn.aggregate = parameters_only: each client starts from w^t's "
        "parameters with the running statistics its own model last left (init.w's "
        "before it first trains), steps w <- w - eta (grad F_k(w) + mu (w - w^t)) with "
        "the proximal term over the parameters only, and w^{t+1} takes the first "
        "participant's running statistics; eta = 0.0703125, mu = 0.625; three rounds, "
        "client 1 sits out round 1 and client 0 round 2.",
        {"name": "fedprox", "preset": "pfllib",
         "hyperparameters": {"eta": 0.0703125, "fedprox.mu": 0.625}},
        rounds, init_seed=8,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=("Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, MLSys 2020, Alg. 2; "
                f"{KEEP_SOURCE}; system/flcore/clients/clientprox.py:61-64 "
                "(set_parameters: parameters() only), servers/serverprox.py train()"))


def scaffold_keep_bn():
    # SCAFFOLD as PFLlib runs it (preset pfllib, which sets bn.aggregate =
    # parameters_only, scaffold.bn_global = previous): clientscaffold.py:62-64 set_parameters copies
    # parameters() only; serverscaffold.py:124-129 adds the parameters()'
    # updates to a deepcopy of the previous global, whose running
    # statistics so stay init.w's.  Clients take 2, 1 and 2 steps in round
    # 0 (distinct K), client 1 sits out round 1 and client 0 round 2.
    rounds = keep_rounds()
    return family_vector(
        "scaffold", "pfllib-keep", "SCAFFOLD (preset pfllib) on the MLP with "
        "batchnorm1d, running statistics kept per client, the global's never moved",
        "SCAFFOLD with the preset pfllib (option II with the undecayed eta, "
        "lr.count = trainings: nothing changes under a constant step), which sets "
        "bn.aggregate = parameters_only and scaffold.bn_global = previous: each "
        "client starts from x's parameters "
        "with the running statistics its own model last left (init.w's before it "
        "first trains), steps y <- y - eta (g + c - c_i) on the parameters (the "
        "training pass moves the running statistics), c_i+ = c_i - c + (x - y)/(K "
        "eta) on the parameters and c_i on the running statistics, and x <- x + "
        "eta_g mean(y_i - x) on the parameters while x's running statistics stay "
        "init.w's; eta = 0.0703125, eta_g = 0.75; three rounds, client 1 sits out "
        "round 1 and client 0 round 2.",
        {"name": "scaffold", "preset": "pfllib",
         "hyperparameters": {"eta": 0.0703125, "scaffold.eta_g": 0.75}},
        rounds, init_seed=9,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=("Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, ICML 2020, Alg. 1; "
                "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
                "clientscaffold.py:62-64 (set_parameters: parameters() only), "
                ":18-20 (client_c over parameters()), system/flcore/servers/"
                "serverscaffold.py:124-129 (deepcopy of the previous global plus "
                "the parameters()' updates)"))


def pfedme_keep_bn():
    # pFedMe as PFLlib runs it (preset pfllib, which sets bn.aggregate =
    # parameters_only): clientpFedMe.py:74-77 set_parameters copies
    # parameters() into the θ model and local_params, serverbase.py:138-150
    # deep-copies uploaded_models[0], serverpFedMe.py:88-91 mixes
    # parameters() only with beta.  Only S^t trains (pfedme.train =
    # sampled); client 1 sits out round 1 and client 0 round 2.
    rounds = keep_rounds()
    return family_vector(
        "pfedme", "pfllib-keep", "pFedMe (preset pfllib) on the MLP with "
        "batchnorm1d, each client's theta model keeping its running statistics",
        "pFedMe with the preset pfllib (theta warm, mu = 0.001, weights n_i / sum "
        "n_j, only S^t trains, the global reported for every client, PFLlib's "
        "scheduler on eta_p: nothing decays here), which sets bn.aggregate = "
        "parameters_only: w_{i,0} and theta start from w_t's parameters with the "
        "running statistics the client's theta model last left (init.w's before it "
        "first trains), theta's K passes move them and w_{i,r+1} carries theta's; "
        "w_{t+1} = (1 - beta) w_t + beta sum c_i w_{i,R} on the parameters, its "
        "running statistics the first uploader's (not mixed with beta); the "
        "reported personal model is w_{t+1}'s parameters with the client's own "
        "statistics; eta = 0.15625, lambda = 0.875, eta_p = 0.09375, K = 2, beta = "
        "0.8125; three rounds, client 1 sits out round 1 and client 0 round 2.",
        {"name": "pfedme", "preset": "pfllib",
         "hyperparameters": {"eta": 0.15625, "lambda": 0.875, "eta_p": 0.09375,
                             "K": 2, "beta": 0.8125}},
        rounds, init_seed=10,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=("Dinh, Tran, Nguyen, NeurIPS 2020, Alg. 1; shared/spec notes §2; "
                "TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/clientpFedMe.py:"
                "74-77 (set_parameters: parameters() only), :18 (local_params), "
                "system/flcore/servers/serverbase.py:138-150 (deepcopy of "
                "uploaded_models[0]), serverpFedMe.py:88-91 "
                "(beta_aggregate_parameters: parameters() only)"))


def apfl_keep_bn():
    # APFL as PFLlib runs it (preset pfllib: apfl.variant = pfllib, which
    # the preset pairs with bn.aggregate = parameters_only):
    # clientbase.py:67-69 set_parameters copies parameters() into
    # self.model, clientapfl.py:58-59 mixes model_per's parameters() only,
    # serverbase.py:138-150 deep-copies uploaded_models[0].
    rounds = keep_rounds()
    return family_vector(
        "apfl", "pfllib-keep", "APFL (preset pfllib) on the MLP with batchnorm1d, "
        "w_i and v_i keeping their own running statistics",
        "APFL with the preset pfllib (apfl.variant = pfllib: per batch w_i <- w_i - "
        "eta grad f(w_i), v_i <- v_i - eta grad f(v_i) on v's own loss, each pass "
        "moving its own model's running statistics, then PFLlib's alpha_update; "
        "after the last batch v_i <- (1 - alpha_i) w_i + alpha_i v_i; n_i / sum n_j "
        "weights), which sets bn.aggregate = parameters_only: w_i starts from w's "
        "parameters with the running statistics client i's model last left "
        "(init.w's before it first trains), v_i's mixture leaves its own running "
        "statistics, and w takes the first participant's; eta = 0.0703125, alpha = "
        "0.375 (adaptive); three rounds, client 1 sits out round 1 and client 0 "
        "round 2.",
        {"name": "apfl", "preset": "pfllib",
         "hyperparameters": {"eta": 0.0703125, "alpha": 0.375}},
        rounds, init_seed=11,
        must=["bn-own-buffers", "bn-global-buffers"],
        extra=["bn-own-buffers", "bn-global-buffers"],
        source=("Deng, Kamani, Mahdavi, arXiv 2003.13461v3, Alg. 1; shared/spec "
                "notes-pfllib-as-run.md §2.3 (APFL); TsingZ0/PFLlib d832e76f6a23 "
                "system/flcore/clients/clientapfl.py train() and :58-59 "
                "(model_per.parameters() mixed), clientbase.py:67-69 "
                "(set_parameters: parameters() only), system/flcore/servers/"
                "serverbase.py:138-150 (deepcopy of uploaded_models[0])"))


def local_bn():
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]]]},
        {"clients": [1, 2], "batches": [[[1, 2], [0, 1]], [[4, 1], [0, 3, 2]]]},
    ]
    return family_vector(
        "local", "two-rounds", "Local-only training on the MLP with batchnorm1d",
        "Local: every participant trains its own v_i (kept across rounds, running "
        "statistics with it) with eta = 0.0859375; round 0 clients 0 and 1, round 1 "
        "clients 1 and 2 (client 2 first trains in round 1, from init.w's "
        "statistics).",
        {"name": "local", "hyperparameters": {"eta": 0.0859375}},
        rounds, init_seed=3, must=["stale-personal-state"])


def finetune_bn():
    rounds = [
        {"clients": [0, 2], "batches": [[[0, 2], [1, 3]], [[1, 0, 4]]]},
        {"clients": [0, 1, 2], "batches": [[[2, 1], [0, 3]], [[2, 0, 1]], [[0, 3], [1, 2]]]},
    ]
    post = [[[0, 1], [2, 3]], [[1, 2], [0, 2]], [[1, 0, 4]]]
    return family_vector(
        "finetune", "prox-full", "FedAvg-FT on the MLP with batchnorm1d, mu_ft > 0",
        "Two FedAvg rounds (client 1 unsampled in round 0; running statistics averaged "
        "with w), then every client fine-tunes the whole model from w with eta_ft = "
        "0.0703125 and mu_ft = 0.5 toward w (the proximal term skips the buffers, "
        "which the fine-tuning passes move).",
        {"name": "finetune", "hyperparameters": {"eta": 0.0859375, "eta_ft": 0.0703125,
                                                 "mu_ft": 0.5}},
        rounds, post=post, init_seed=4)


def ifca_bn():
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]], [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0]]]},
    ]
    w_a = lc.init_for(MLP, 650, scale=0.75)
    w_b = lc.init_for(MLP, 651, scale=0.75)
    import families_common as fc
    import make_families as mf
    init = {"kind": "zeros", "cluster_models": [w_a, w_b]}
    vid = "layers/ifca/bn1d-mlp-model-given-models"
    title = "IFCA (model averaging) on the MLP with batchnorm1d, k = 2 given models"
    what = ("IFCA, Option II (ifca.mode = model): each client picks the cluster model "
            "of least training loss (evaluation mode: the running statistics), trains a "
            "copy with gamma = 0.0703125 (its passes move the copy's running statistics) "
            "and the cluster's model is the n_k-weighted average of its members' "
            "copies, running statistics included; k = 2 given models.")
    spec = pg.given_spec(title, f"{MLP_TEXT} {what}", MLP, MLP_CLIENTS, init,
                         {"name": "ifca", "hyperparameters": {"gamma": 0.0703125, "ifca.k": 2},
                          "switches": {"ifca.mode": "model"}}, rounds)
    cands = mf.candidates("ifca")
    cands += [f for f in BN_CANDIDATES if f not in cands]
    return fc.build(FAMILY_GENERATOR, FAMILY_SOURCES["ifca"],
                    vid, "ifca-bn1d-mlp-model-given-models.json", title, spec, cands,
                    BN_MUST)


# Per-FedAvg (exact) through batchnorm2d: the Hessian-vector product
# ∇²f(w; D″) q of a CNN whose batch statistics depend on w, so the second
# derivative runs through the mean and variance of each channel over
# n_b × H × W values (pflref_exact_layers.hvp_exact: the gradient on the
# dual numbers w + ε q, its ε part, 60-digit decimals for the square root).
# The model is the first problem's CNN with one output and a squared loss
# (pflref_exact_perfedavg.exact_model); the rows are CNN_CLIENTS'.
CNN_SQ = dict(CNN, loss="squared",
              layers=CNN["layers"][:-1] + [{"type": "dense", "name": "fc", "out": 1}])
CNN_SQ_TEXT = ("Input 1x4x4; conv1 (2 channels, kernel 3, padding 1, no bias) -> "
               "2x4x4, bn1 = batchnorm2d (eps = 1/64, momentum 0.15; training mode: "
               "batch mean and biased variance per channel over n_b x 4 x 4 values; "
               "the running statistics moved after every training pass with the "
               "unbiased m/(m - 1) s^2, m = n_b x 4 x 4), relu, maxpool2d 2 -> 2x2x2, "
               "flatten, fc 8 -> 1; loss (y-hat - y)^2.")


def perfedavg_bn2d():
    import families_common as fc
    import make_families as mf
    clients = [{"X": c["X"], "y": lc.values(random.Random(960 + i), len(c["X"]),
                                           -1.5, 1.5, 16)}
               for i, c in enumerate(CNN_CLIENTS)]
    # D, D', D'' of every local step distinct; batches of 1 are full
    # batch-norm batches here (m = 16 values a channel)
    rounds = [
        {"clients": [0, 2], "batches": [[[0, 2], [3], [1, 3], [2, 1], [0], [3, 0]],
                                        [[4, 1], [0, 2], [3]]]},
        {"clients": [1, 2], "batches": [[[2, 0], [1], [0, 1]],
                                        [[1, 3], [0, 4, 2], [2], [4], [3, 0], [1]]]},
    ]
    post = [[[1, 2]], [[0, 2]], [[3, 0]]]
    hp = {"alpha": 0.015625, "beta": 0.03125}
    title = "Per-FedAvg (exact) on a CNN with batchnorm2d, two rounds"
    what = ("Per-FedAvg (Fallah et al. 2020, Alg. 1), exact variant: w~ = w - alpha "
            "grad f(w; D), w <- w - beta (I - alpha hess f(w; D'')) grad f(w~; D'); "
            "alpha = 0.015625, beta = 0.03125; uniform mean; then theta_i = w - "
            "alpha grad f(w; D1).  The Hessian-vector product differentiates through "
            "the batch statistics; every training pass (D at w, D' at w~, the "
            "Hessian-vector product's forward at w on D'', the personalisation's) "
            "moves the running statistics (ref/algorithms/perfedavg.c's order).")
    init = {"kind": "given", "w": lc.init_for(CNN_SQ, 50, scale=0.75)}
    spec = pg.given_spec(title, f"{CNN_SQ_TEXT} {what}", CNN_SQ, clients, init,
                         {"name": "perfedavg", "hyperparameters": hp}, rounds,
                         post=post)
    cands = mf.candidates("perfedavg")
    cands += [f for f in BN_CANDIDATES + ["bn-backward", "bn-eps-placement",
                                          "bn2d-statistics"] if f not in cands]
    return fc.build(FAMILY_GENERATOR,
                    "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1; shared/spec "
                    "notes §4", "layers/perfedavg/bn2d-cnn-exact",
                    "perfedavg-bn2d-cnn-exact.json", title, spec, cands,
                    BN_MUST + ["bn-backward", "bn2d-statistics",
                               "perfedavg-hessian-term", "perfedavg-batch-reuse"])


FAMILY_MAKERS = [ditto_bn, ditto_keep_bn, fedalt_bn, fedalt_keep_bn, fedsim_keep_bn, fedprox_keep_bn, pfedme_keep_bn, apfl_keep_bn, scaffold_keep_bn, local_bn, finetune_bn, ifca_bn,
                 perfedavg_bn2d]


# ---------------------------------------------------------------- FedFomo
# FedFomo's validation losses L_i on a model with batch normalisation, in
# the two modes of fedfomo.val_mode (golden/pflref_exact_fedfomo.py):
# train (the default, PFLlib's passes: the validation split's own batch
# statistics) and eval (the NVlabs code's eval(): the model's running
# statistics r_mu, r_v).  The running statistics are frozen (bn.running =
# frozen: every model keeps init.w's r_mu, r_v), so the vectors do not
# depend on how l. 3's distance and l. 5's update treat the buffers, a
# point the references leave open (shared/spec notes §2.3 step 3 measures
# the distance over the trainable parameters, as NVlabs utils.py:143-176
# over parameters(); pflref measures and mixes every entry).
FEDFOMO_SOURCE = ("Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, arXiv 2012.08565v3, "
                  "Alg. 1; shared/spec notes-fedbn-fedfomo.md §2.3")
FEDFOMO_MODE_SOURCES = {
    "train": "the validation losses in training mode as TsingZ0/PFLlib d832e76f6a23 "
             "system/flcore/clients/clientfomo.py:139-151 runs them (copies never "
             "put in eval())",
    "eval": "the validation losses in evaluation mode as NVlabs/FedFomo fe04f66 "
            "federation.py:163-166 (eval() on the baseline and each comparison model) "
            "and federated/train.py:81 run them",
}
FEDFOMO_GENERATOR = ("golden/layers/make_bn.py (60-digit decimal, "
                     "pflref_exact_fedfomo.py on pflref_exact_layers.py)")
FEDFOMO_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]], [[4, 1], [0, 3, 2]]],
     "peers": [[1], [2], [0]]},
    {"clients": [0, 1, 2], "batches": [[[1, 3, 0]], [[0, 2], [1, 2]], [[2, 4], [1, 0]]],
     "peers": [[1, 2], [2, 0], [0, 1]]},
    {"clients": [0, 2], "batches": [[[2, 0], [3, 1]], [[3, 4, 0]]],
     "peers": [[2, 1], [1, 0]]},
]


def fedfomo_clients():
    """MLP_CLIENTS with validation splits of 3, 2, 3 rows."""
    out = []
    for i, nv in enumerate((3, 2, 3)):
        c = dict(MLP_CLIENTS[i])
        c["X_val"] = lc.rows(970 + i, nv, 3)
        c["y_val"] = lc.values(random.Random(980 + i), nv, -1.5, 1.5, 16)
        out.append(c)
    return out


def fedfomo_spec(mode):
    import pflref_exact_fedfomo as ff
    algorithm = {"name": "fedfomo", "hyperparameters": {"eta": 0.0859375},
                 "switches": {"bn.running": "frozen"}}
    if mode != "train":
        algorithm["switches"]["fedfomo.val_mode"] = mode
    text = {
        "train": "each L_i a training-mode pass over the whole validation split: "
                 "batchnorm on the split's own mean and biased variance (the "
                 "default, fedfomo.val_mode = train)",
        "eval": "each L_i an evaluation-mode pass (fedfomo.val_mode = eval): "
                "batchnorm on the model's running statistics r_mu, r_v (init.w's: "
                "bn.running = frozen)",
    }[mode]
    spec = pg.given_spec(
        f"FedFomo on the MLP with batchnorm1d, validation losses in {mode} mode",
        f"{MLP_TEXT} FedFomo (Alg. 1, paper switches otherwise): validation splits "
        f"of 3, 2, 3 rows; {text}; given peers, three rounds (client 1 out of round "
        f"2); local SGD eta = 0.0859375, every step a training pass on the batch "
        f"statistics; the running statistics never move (bn.running = frozen), so "
        f"every model keeps init.w's r_mu, r_v and they add nothing to a distance "
        f"or an update.",
        MLP, fedfomo_clients(), {"kind": "given", "w": MLP_W0}, algorithm,
        FEDFOMO_ROUNDS)
    return spec, ff


def fedfomo_float(spec, ff):
    """The same replay with every layer list in float64."""
    saved = pl.Model

    class Float(saved):
        def __init__(self, model, domain=None):
            super().__init__(model, "float")
    pl.Model = Float
    try:
        return ff.replay(spec)
    finally:
        pl.Model = saved


def fedfomo_exact_run(spec, ff):
    """FedFomo's run of spec in 60-digit decimals (ff, fedfomo_spec's): the
    replay of a set of bugs, the run, its final records and its tolerance
    from the float64 run's gap."""
    def run(bugs=frozenset()):
        return ff.replay(spec, frozenset(bugs))

    pl.reset_stats()
    result = run()
    lc.guard_kinks()
    final = lambda trace, w, v, alpha: (trace, w, v)   # noqa: E731
    fp64 = lc.gap(pg.expected(*final(*result)),
                  pg.expected(*final(*fedfomo_float(spec, ff))))
    tol = lc.tolerance(1e-13, 1e-12, "60-digit decimals of the binary inputs", fp64)
    return run, result, final, tol


def v_gap(result, other):
    """The largest difference of the personal models v of two runs."""
    return max(abs(float(a) - float(b)) for x, y in zip(result[2], other[2])
               for a, b in zip(x, y))


def fedfomo_bn(mode):
    spec, ff = fedfomo_spec(mode)
    other, _ = fedfomo_spec("eval" if mode == "train" else "train")
    vid = f"layers/fedfomo/bn1d-mlp-{mode}"
    fname = f"fedfomo-bn1d-mlp-{mode}.json"

    run, result, final, tol = fedfomo_exact_run(spec, ff)
    # the other mode's run of the same spec: the switch must show
    diff = v_gap(result, ff.replay(other))
    assert diff > 1e-3, diff
    flags = ["fedfomo-val-mode", "fedfomo-clip", "fedfomo-normalise", "fedfomo-distance",
             "fedfomo-affinity", "bn-eval-mode", "bn-running-moved", "bn-batch-variance"]
    mutants = {"fedfomo-val-mode": ["fomo-val-mode-flip"],
               "fedfomo-clip": ["fomo-no-clip"],
               "fedfomo-normalise": ["fomo-no-normalise"],
               "fedfomo-distance": ["fomo-squared-dist"],
               "fedfomo-affinity": ["fomo-affinity-ratio"],
               "bn-eval-mode": BN_MUTANTS["bn-eval-mode"],
               "bn-running-moved": RUNNING_MUTANTS["bn-running-moved"],
               "bn-batch-variance": BN_MUTANTS["bn-batch-variance"]}
    flags = [f for f in flags if f not in FEDFOMO_DROP.get(mode, ())]
    exp = pg.checked_expected(vid, tol, flags, {f: mutants[f] for f in flags}, result,
                              run, final)
    title = spec["name"]
    spec["description"] += (
        f" The other mode ({'eval' if mode == 'train' else 'train'}) ends with final "
        f"models up to {diff:.2g} away (max abs over the entries).")
    prov = pg.provenance("independent", f"{FEDFOMO_SOURCE}; {FEDFOMO_MODE_SOURCES[mode]}; "
                         f"{lc.LAYERS_SOURCE}", FEDFOMO_GENERATOR)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


# flags whose bugs the run cannot show in that mode (checked_expected fails
# on them): none known
FEDFOMO_DROP = {}


def fedfomo_bn_train():
    return fedfomo_bn("train")


# FedFomo as PFLlib runs it on a model with batch normalisation (the preset
# pfllib, which sets bn.aggregate = parameters_only): l. 3's distance over
# parameters() (clientfomo.py:106-109), l. 5 mixing parameters() only
# (:157-165), so phi_i keeps client i's own running statistics, those of
# theta_i^{t-1}; the local steps move them (bn.running = update).  Round 0
# downloads nothing (PFLlib's M_ = min(M, len(uploaded_ids)) = 0); the
# later peer lists name the client itself (fedfomo.self = ranked: topk over
# the whole row P[i]).
FEDFOMO_KEEP_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]], [[4, 1], [0, 3, 2]]],
     "peers": [[], [], []]},
    {"clients": [0, 1, 2], "batches": [[[1, 3, 0]], [[0, 2], [1, 2]], [[2, 4], [1, 0]]],
     "peers": [[1, 0], [2, 0], [0, 2]]},
    {"clients": [0, 2], "batches": [[[2, 0], [3, 1]], [[3, 4, 0]]],
     "peers": [[2, 1], [1, 0]]},
    {"clients": [0, 1, 2], "batches": [[[3, 1, 2]], [[1, 0], [2, 1]], [[0, 4], [3, 2]]],
     "peers": [[0, 1], [0, 1], [1, 2]]},
]
FEDFOMO_KEEP_SOURCE = (
    "FedFomo as TsingZ0/PFLlib d832e76f6a23 runs it with batch normalisation: "
    "system/flcore/clients/clientfomo.py:102-111 (weight_cal: the distance over "
    "parameters()), :157-165 (aggregate_parameters: parameters() only, the "
    "buffers of self.model, client i's own, untouched), servers/serverfomo.py:"
    "110 (the server keeps a deepcopy of the whole uploaded module)")


def fedfomo_keep_spec():
    import pflref_exact_fedfomo as ff
    algorithm = {"name": "fedfomo", "preset": "pfllib",
                 "hyperparameters": {"eta": 0.0859375}}
    spec = pg.given_spec(
        "FedFomo (preset pfllib) on the MLP with batchnorm1d, running statistics "
        "kept per client",
        f"{MLP_TEXT} FedFomo with the preset pfllib (distance l2 + 1e-5, P = I "
        f"plus the raw ratios, no positive weight keeps the current model, "
        f"fedfomo.self = ranked, the validation split one batch), which sets "
        f"bn.aggregate = parameters_only: ||theta_n - phi_i|| over the parameters "
        f"only, l. 5 mixes the parameters only and phi_i keeps the running "
        f"statistics of client i's own theta_i^(t-1); validation splits of 3, 2, "
        f"3 rows scored in training mode; given peers (none in round 0, the own "
        f"upload among them later), four rounds (client 1 out of round 2); local "
        f"SGD eta = 0.0859375, every step a training pass that moves the running "
        f"statistics (bn.running = update).",
        MLP, fedfomo_clients(), {"kind": "given", "w": MLP_W0}, algorithm,
        FEDFOMO_KEEP_ROUNDS)
    return spec, ff


def fedfomo_keep_bn():
    spec, ff = fedfomo_keep_spec()
    vid = "layers/fedfomo/bn1d-mlp-pfllib-keep"
    fname = "fedfomo-bn1d-mlp-pfllib-keep.json"

    run, result, final, tol = fedfomo_exact_run(spec, ff)
    # the same run under bn.aggregate = average (the state_dict reading)
    other = dict(spec, algorithm=dict(spec["algorithm"],
                                      switches={"bn.aggregate": "average"}))
    diff = v_gap(result, ff.replay(other))
    assert diff > 1e-3, diff
    flags = ["bn-parameters-distance", "bn-own-buffers", "fedfomo-affinity",
             "fedfomo-distance", "bn-running-update"]
    mutants = {"bn-parameters-distance": ["fomo-buffers-in-distance"],
               "bn-own-buffers": ["fomo-buffers-mixed"],
               "fedfomo-affinity": ["fomo-affinity-ratio"],
               "fedfomo-distance": ["fomo-squared-dist"],
               "bn-running-moved": RUNNING_MUTANTS["bn-running-moved"],
               "bn-running-update": RUNNING_MUTANTS["bn-running-update"],
               "lr-count": ["lr-per-round"]}
    flags = [f for f in flags if f not in FEDFOMO_KEEP_DROP]
    exp = pg.checked_expected(vid, tol, flags, {f: mutants[f] for f in flags}, result,
                              run, final)
    spec["description"] += (
        f" Under bn.aggregate = average (every entry measured and mixed) the final "
        f"models are up to {diff:.2g} away (max abs over the entries).")
    prov = pg.provenance("independent", f"{FEDFOMO_SOURCE}; {FEDFOMO_KEEP_SOURCE}; "
                         f"{lc.LAYERS_SOURCE}", FEDFOMO_GENERATOR)
    return fname, pg.vector(vid, spec["name"], prov, flags, spec, tol, exp)


# flags of fedfomo_keep_bn whose bugs these data cannot show
FEDFOMO_KEEP_DROP = ()


def fedfomo_bn_eval():
    return fedfomo_bn("eval")


# ---- FedFomo's equality up to rounding on the parameters()-only path -------
#
# issue 33 §3 (decisions at their thresholds): ref/algorithms/fedfomo.c
# equal_up_to's test |x_p − a_p| > τ max(|x_p|, |a_p|) over parameters()
# only (bn.aggregate = parameters_only: the buffers are no part of l. 3's
# "θ_n = a"), with a difference exactly on the bound, as
# fedfomo/worked/equal-rounding-on-tau puts one on the path of every entry.
#
# Client 1's round-0 batch is two copies of one row with one target, so
# batch normalisation's x̂ = (z − μ_B)/σ_B is 0 on both, every unit's input
# to relu is its β, and every β of init.w is negative: relu passes nothing,
# its derivative is 0, and the one local step moves the output bias b alone
# (b − η ∂/∂b of the mean of (b − y)², i.e. b − η · 2 (b − y)); the running
# statistics move (r_μ toward the row's z, r_v by (1 − ρ)), which
# parameters_only leaves out of the test.  Round 1 gives client 0 the one
# candidate θ_1⁰ with weight 1 (r > 0, fedfomo.self = excluded), so
# φ_0 = a + 1 · (θ_1⁰ − a), exactly θ_1⁰ in exact arithmetic; in fp64 the
# bias is fl(b⁰ + fl(θ − b⁰)), one ulp off θ's.  Client 1 sits out rounds 1
# and 2, so in round 2 client 0's one candidate θ_1⁰ is its anchor up to
# that ulp: 2⁻⁵⁵ = τ · ¼ with τ = 2⁻⁵³, every other parameter equal, the
# running statistics (client 0's own in the anchor, client 1's in θ_1⁰) far
# apart.  The strict > says "equal" (r = 0, the exact run); ≥ gives the
# candidate the ratio of a loss difference over 2⁻⁵⁵ (P_update = raw keeps it
# in P).  L_i's passes are evaluation passes (fedfomo.val_mode = eval, so
# the two models' running statistics make the losses differ: the ≥ reading
# cannot fall on r = 0 by chance).
FOMO_TAU = 2.0 ** -53
FOMO_TAU_ETA = 0.125
FOMO_TAU_B0 = 0.1                 # init.w's fc2 bias: binary64's 0.1
FOMO_TAU_ROW, FOMO_TAU_Y = [0.75, -1.25, 0.5], -1.3
FOMO_TAU_BETA = [-0.42578125, -0.48828125, -0.216796875, -0.37109375]
FOMO_TAU_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[0, 1]], [[4, 1], [0, 3, 2]]],
     "peers": [[], [], []]},
    {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0]]],
     "peers": [[1], [0]]},
    {"clients": [0, 2], "batches": [[[2, 0], [3, 1]], [[3, 4, 0]]],
     "peers": [[1], [1]]},
]


def fomo_tau_bias_fp64(b0, y, eta):
    """(θ, φ): client 1's output bias after its one step and client 0's
    after l. 5 with weight 1, each operation rounded as IEEE binary64 rounds
    it (Python's floats), in the C's order: the residual r = ŷ − y with
    ŷ = b (relu passes nothing), ∂/∂b = 2 r (the batch mean of two equal
    terms: a power of 2, exact), θ = b − η · 2r (η a power of 2: the
    product exact), then φ = a + 1 · (θ − a) with a = b."""
    r = b0 - y
    g = 2.0 * r
    step = eta * g
    assert Fraction(step) == Fraction(eta) * 2 * Fraction(r)    # exact
    th = b0 - step
    phi = b0 + 1.0 * (th - b0)
    return th, phi


def fomo_tau_spec():
    import pflref_exact_fedfomo as ff
    clients = fedfomo_clients()
    rng = random.Random(55)
    clients[0]["y_val"] = lc.values(rng, 3, -1.5, 1.5, 16)
    clients[2]["y_val"] = lc.values(rng, 3, -1.5, 1.5, 16)
    c1 = dict(clients[1])
    c1["X"] = [list(FOMO_TAU_ROW), list(FOMO_TAU_ROW), c1["X"][2]]
    c1["y"] = [FOMO_TAU_Y, FOMO_TAU_Y, c1["y"][2]]
    clients[1] = c1
    w0 = list(MLP_W0)
    w0[16:20] = FOMO_TAU_BETA
    w0[32] = FOMO_TAU_B0
    algorithm = {"name": "fedfomo",
                 "hyperparameters": {"eta": FOMO_TAU_ETA, "fedfomo.equal_rtol": FOMO_TAU},
                 "switches": {"bn.aggregate": "parameters_only",
                              "fedfomo.self": "excluded", "fedfomo.P_update": "raw",
                              "fedfomo.val_mode": "eval"}}
    th, phi = fomo_tau_bias_fp64(FOMO_TAU_B0, FOMO_TAU_Y, FOMO_TAU_ETA)
    spec = pg.given_spec(
        "FedFomo under bn.aggregate = parameters_only with a one-ulp parameter "
        "difference exactly on fedfomo.equal_rtol's bound: r = 0",
        f"{MLP_TEXT} FedFomo with bn.aggregate = parameters_only (l. 3's distance "
        f"and its equality up to rounding over the parameters only, l. 5 mixing "
        f"the parameters only, phi_i keeping client i's own running statistics), "
        f"fedfomo.self = excluded, P_update = raw, val_mode = eval, eta = 1/8, "
        f"fedfomo.equal_rtol = 2^-53; every beta of init.w negative and the fc2 "
        f"bias b = 0.1 (binary64). Round 0: client 1's one batch is two copies of "
        f"one row with target -1.3, so batch normalisation gives x-hat = 0, relu "
        f"passes nothing and the step moves b alone, to {th!r} in fp64 (the running "
        f"statistics move too). Round 1: client 0's one candidate theta_1^0 gets "
        f"weight 1, phi_0 = a + 1 (theta_1^0 - a), whose bias is {phi!r} in fp64, "
        f"one ulp (2^-55) off theta_1^0's. Round 2 (client 1 still out): that "
        f"candidate equals client 0's anchor in exact arithmetic; in fp64 its bias "
        f"differs by 2^-55 = tau max(|x|, |a|) = 2^-53 * 1/4 exactly, every other "
        f"parameter is equal and the running statistics (client 0's own in the "
        f"anchor, client 1's in the candidate) differ: the strict > of the bound "
        f"calls it equal (r = 0), a >= would give it a loss difference over 2^-55.",
        MLP, clients, {"kind": "given", "w": w0}, algorithm, FOMO_TAU_ROUNDS)
    return spec, ff


def fomo_tau_records(spec, trace):
    """(the notes by (round, client, name), client 1's round-0 upload, w⁰)
    of a run of the two equality-on-the-bound vectors below, exact."""
    notes = {(r["round"], r["client"], r["name"]): r["value"]
             for r in trace.records if r["event"] == "note"}
    up1 = [r["value"] for r in trace.records
           if r["event"] == "client_end" and r["round"] == 0 and r["client"] == 1][0]
    return notes, up1, [pg.exact(x) for x in spec["init"]["w"]]


def fedfomo_keep_on_tau():
    spec, ff = fomo_tau_spec()
    vid = "layers/fedfomo/bn1d-equal-rounding-on-tau"
    fname = "fedfomo-bn1d-equal-rounding-on-tau.json"
    b0, y, eta = (Fraction(FOMO_TAU_B0), Fraction(FOMO_TAU_Y), Fraction(FOMO_TAU_ETA))

    # the fp64 path of the one parameter that moves: θ is fl of the exact
    # step b⁰ − 2η (b⁰ − y), φ one ulp off it, exactly on the bound (the
    # product τ · ¼ is exact: powers of 2)
    th, phi = fomo_tau_bias_fp64(FOMO_TAU_B0, FOMO_TAU_Y, FOMO_TAU_ETA)
    th_exact = b0 - 2 * eta * (b0 - y)
    assert th == -0.25 and abs(Fraction(th) - th_exact) < Fraction(1, 2 ** 56), th
    assert phi != th and Fraction(abs(th - phi)) == Fraction(1, 2 ** 55)
    assert Fraction(abs(th - phi)) == Fraction(FOMO_TAU) * max(abs(Fraction(th)),
                                                               abs(Fraction(phi)))

    run, result, final, tol = fedfomo_exact_run(spec, ff)
    trace = result[0]
    notes, up1, w0 = fomo_tau_records(spec, trace)
    buffers = set(range(20, 28))          # bn1.running_mean, bn1.running_var
    # client 1's step moved the bias alone (to the exact step) and its
    # running statistics
    assert [p for p in range(33) if p not in buffers and up1[p] != w0[p]] == [32]
    assert up1[32] == th_exact
    assert all(up1[p] != w0[p] for p in buffers)
    # round 1: weight 1 on θ_1⁰, φ_0's parameters θ_1⁰'s exactly (the
    # exact mean), its running statistics client 0's own
    assert notes[(1, 0, "weights")] == [0, 1, 0]
    assert all(notes[(1, 0, "phi")][p] == up1[p] for p in range(33) if p not in buffers)
    # round 2: the candidate is the anchor on the parameters (r = 0, P
    # kept); the running statistics differ by far more than τ max, so the
    # test over every entry (bn.aggregate = average's path) calls it
    # different
    anchor = notes[(1, 0, "phi")]
    assert notes[(2, 0, "weights")] == [0, 0, 0]
    assert notes[(2, 0, "P")] == notes[(1, 0, "P")]
    assert all(abs(up1[p] - anchor[p]) > 1000 * Fraction(FOMO_TAU)
               * max(abs(up1[p]), abs(anchor[p])) for p in buffers)

    # the C's rule on its doubles (the replay's fp64 shadow of φ_0, checked
    # against fomo_tau_bias_fp64 through the ratio below): ≤ (equal)
    # reproduces the exact run; the strict < (the replay's mutant
    # fomo-equal-strict) gives θ_1⁰ the ratio (L_0(a) − L_0(θ_1⁰)) / 2⁻⁵⁵
    assert pg.expected(*final(*run({"fomo-equal-fp64"}))) == pg.expected(*final(*result))
    strict = run({"fomo-equal-strict"})[0]
    P2 = [r["value"] for r in strict.records if r["event"] == "note"
          and r["round"] == 2 and r["client"] == 0 and r["name"] == "P"][0]
    dL = ff.val_loss(spec, 0, anchor, frozenset()) - ff.val_loss(spec, 0, up1, frozenset())
    assert P2[1] - notes[(1, 0, "P")][1] == dL / Fraction(abs(th - phi)), (P2, dL)
    gap = abs(float(P2[1] - notes[(2, 0, "P")][1]))
    assert gap > 1e6, gap

    flags = ["fedfomo-equal-bound", "bn-parameters-distance", "bn-own-buffers",
             "fedfomo-affinity", "fedfomo-val-mode", "fedfomo-stale-uploads",
             "bn-running-update"]
    mutants = {"fedfomo-equal-bound": ["fomo-equal-strict"],
               "bn-parameters-distance": ["fomo-buffers-in-distance"],
               "bn-own-buffers": ["fomo-buffers-mixed"],
               "fedfomo-affinity": ["fomo-affinity-ratio"],
               "fedfomo-val-mode": ["fomo-val-mode-flip"],
               "fedfomo-stale-uploads": ["fomo-live-uploads"],
               "bn-running-update": RUNNING_MUTANTS["bn-running-update"]}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run, final)
    spec["description"] += (
        f" Under the non-strict >= the round-2 ratio moves P_(0,1) by {gap:.2g}.")
    prov = pg.provenance(
        "independent", f"{FEDFOMO_SOURCE}; docs/algorithms/fedfomo.md (Equality up to "
        f"rounding; bn.aggregate); {FEDFOMO_KEEP_SOURCE}; {lc.LAYERS_SOURCE}",
        FEDFOMO_GENERATOR.replace("make_bn.py", "make_bn.py fedfomo_keep_on_tau")
        .replace("60-digit decimal", "60-digit decimal, the fp64 bias path replayed "
                 "in Python floats"))
    return fname, pg.vector(vid, spec["name"], prov, flags, spec, tol, exp)


# ---- the first uploader as data (schedule.rounds[t].first_upload) ----------
#
# PFLlib's receive_models orders the uploads by random.sample(
# self.selected_clients, ...) (serverbase.py:117-118 at d832e76) and
# aggregate_parameters deep-copies uploaded_models[0] (l. 141): the global's
# running statistics are a random uploader's, which the schedule records.
# KEEP_PLANS with first uploaders 1, 2, 2 (the lowest ids are 0, 0, 1), so
# every round's global statistics differ from the default's.
FIRST_UPLOADS = [1, 2, 2]


def first_upload_run(bugs=frozenset(), domain=None):
    """(trace, w) of FedAvg under bn.aggregate = parameters_only with
    FIRST_UPLOADS, through pflref_exact.fedavg_round (own buffers)."""
    bugs = frozenset(bugs)
    pr = px.Problem(MLP, MLP_CLIENTS).bn_switches({})
    if domain is not None:
        pr.layers = pl.Model(MLP, domain)
        for c, spec in zip(pr.clients, MLP_CLIENTS):
            c["data"] = pl.ClientData(pr.layers, spec)
    w0 = px.initial({"kind": "given", "w": MLP_W0}, pr.P, bugs)
    own, w, trace = {}, list(w0), pg.Trace()
    for t, (plan, first) in enumerate(zip(KEEP_PLANS, FIRST_UPLOADS)):
        w = px.fedavg_round(pr, w, w0, t, plan, pg.exact(0.0625), "samples",
                            trace, bugs, own=own, first_upload=first)
    return trace, w


def fedavg_keep_first_upload():
    vid = "layers/fedavg/bn1d-mlp-pfllib-keep-first-upload"
    fname = "fedavg-bn1d-mlp-pfllib-keep-first-upload.json"
    title = ("FedAvg, MLP with batchnorm1d, running statistics kept per client, "
             "the global's from the recorded first uploader")
    flags = ["bn-first-upload", "bn-own-buffers", "bn-global-buffers",
             "bn-running-update", "aggregation-weights"]
    mutants = dict(KEEP_MUTANTS)
    mutants["bn-first-upload"] = ["first-upload-ignored"]
    mutants["bn-running-update"] = RUNNING_MUTANTS["bn-running-update"]
    mutants["aggregation-weights"] = ["uniform-weights"]
    pl.reset_stats()
    trace, w = first_upload_run()
    lc.guard_kinks()
    exp0 = pg.expected(trace, w=w)
    f_trace, f_w = first_upload_run(domain="float")
    fp64 = lc.gap(exp0, pg.expected(f_trace, w=f_w))
    tol = lc.tolerance(1e-13, 1e-12, "exact rationals of the binary inputs", fp64)
    rounds = [{"clients": [k for k, _ in plan], "batches": [b for _, b in plan],
               "first_upload": first}
              for plan, first in zip(KEEP_PLANS, FIRST_UPLOADS)]
    spec = pg.given_spec(
        title,
        "The run of layers/fedavg/bn1d-mlp-pfllib-keep (bn.aggregate = "
        "parameters_only, three rounds, client 1 sits out round 1, client 0 "
        "round 2) with each round's first uploader given: clients 1, 2, 2 "
        "(PFLlib's uploaded_models[0], the first of random.sample(selected_"
        "clients, ...)), not the lowest ids 0, 0, 1: w_{t+1}'s running_mean and "
        "running_var are that client's; the parameters are averaged with "
        "n_k / m_t as before.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "fedavg", "hyperparameters": {"eta": 0.0625},
         "switches": {"fedavg.weights": "samples",
                      "bn.aggregate": "parameters_only"}},
        rounds)
    exp = pg.checked_expected(vid, tol, flags, mutants, (trace, w),
                              first_upload_run, lambda trace, w: (trace, w, None))
    prov = pg.provenance(
        "independent", f"{lc.PAPER_FEDAVG}; {KEEP_SOURCE}; TsingZ0/PFLlib "
        "d832e76f6a23 system/flcore/servers/serverbase.py:117-118, 141 "
        f"(receive_models, aggregate_parameters); {lc.LAYERS_SOURCE}",
        GENERATOR.replace("make_bn.py", "make_bn.py fedavg_keep_first_upload"))
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)



# ---- FedFomo's equality up to rounding on an entry 0 in both models -------
#
# issue 32 (a threshold's strictness in float32 and bfloat16): the test
# |x_p − a_p| > τ max(|x_p|, |a_p|) over every entry (bn.aggregate =
# average, the paper's reading) met by running statistics that are 0 in
# both models, 0 against 0, in numbers that no rounding moves.  τ = 10⁻⁶,
# the largest the C takes.  init.w's running statistics r_μ, r_v are all 0.
# Client 1's one round-0 batch is two zero rows: fc1 gives z = 0, the batch
# mean and variance are 0, so x̂ = 0, every β of init.w is negative and relu
# passes nothing; the step moves the output bias b alone, by η · 2 (b − y) =
# 2⁻²² (b = 3/4, y = 3/4 − 2⁻²⁰, η = 1/8), and the running statistics stay
# 0 (r ← (1 − ρ) r + ρ · 0).  Every other parameter is unchanged.  In round
# 1 client 0's anchor is w⁰ and its one candidate that upload θ_1⁰: the
# entries differ by 0, by 2⁻²² ≤ τ · 3/4 (a third of the bound) at b, and by
# 0 ≤ τ · 0 at the eight running statistics, so the rule calls θ_1⁰ equal
# (r_1 = 0, weights 0).  A strict < fails on the zeros and gives θ_1⁰ the
# ratio (L_0(w⁰) − L_0(θ_1⁰)) / 2⁻²², twice the mean residual of client 0's
# validation passes (positive here): weight 1.  The zeros stay 0 under
# random rounding (products and sums of exact zeros, and a gradient that is
# 0 but for b's, whose normwise perturbation moves no buffer: buffers are
# never stepped), and b's step is exact in float32, so a float32 candidate
# meets the same tie.
FOMO_ZERO_TAU = 1e-6
FOMO_ZERO_ETA = 0.125
FOMO_ZERO_B0 = 0.75
FOMO_ZERO_Y = 0.75 - 2.0 ** -20
FOMO_ZERO_ROUNDS = [
    {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[0, 1]], [[4, 1], [0, 3, 2]]],
     "peers": [[], [], []]},
    {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0]]],
     "peers": [[1], [0]]},
]


def fomo_zero_setup():
    """(clients, w⁰) shared by the zero-tie vectors: client 1's first two
    rows zero with target 3/4 − 2⁻²⁰, every β of init.w negative, the fc2
    bias 3/4."""
    clients = fedfomo_clients()
    c1 = dict(clients[1])
    c1["X"] = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], c1["X"][2]]
    c1["y"] = [FOMO_ZERO_Y, FOMO_ZERO_Y, c1["y"][2]]
    clients[1] = c1
    w0 = list(MLP_W0)
    w0[16:20] = FOMO_TAU_BETA
    w0[32] = FOMO_ZERO_B0
    return clients, w0


def fomo_zero_checks(spec, ff, run, notes, up1, w0):
    """The asserts the zero-tie vectors share: b moved by 2⁻²², within τ
    with a margin (3 × at b) and on a path exact in binary32; round 1's
    weights 0 by the rule and (0, 1, 0) under the strict reading; a
    positive loss difference (so that reading's ratio is positive)."""
    step = Fraction(1, 2 ** 22)
    assert w0[32] - up1[32] == step
    tau = Fraction(FOMO_ZERO_TAU)
    assert 3 * step < tau * w0[32]
    assert float(up1[32]) == FOMO_ZERO_B0 - 2.0 ** -22
    assert all(abs(x) * 2 ** 24 % 1 == 0 for x in (w0[32], Fraction(FOMO_ZERO_Y)))
    assert notes[(1, 0, "weights")] == [0, 0, 0]
    strict = run({"fomo-equal-strict"})[0]
    sw = [r["value"] for r in strict.records if r["event"] == "note"
          and r["round"] == 1 and r["client"] == 0 and r["name"] == "weights"][0]
    assert sw == [0, 1, 0], sw
    dL = ff.val_loss(spec, 0, w0, frozenset()) - ff.val_loss(spec, 0, up1, frozenset())
    assert dL / step > Fraction(1, 8), float(dL / step)


def fomo_zero_spec(params_only=False):
    """The spec of the zero-tie vectors: every entry's test, the running
    statistics 0 (params_only False), or parameters() only with fc1's first
    weight 0 (params_only True, below)."""
    import pflref_exact_fedfomo as ff
    if params_only:
        return fomo_zero_params_spec(ff)
    clients, w0 = fomo_zero_setup()
    w0[20:28] = [0.0] * 8                 # r_mu, r_v
    algorithm = {"name": "fedfomo",
                 "hyperparameters": {"eta": FOMO_ZERO_ETA,
                                     "fedfomo.equal_rtol": FOMO_ZERO_TAU},
                 "switches": {"fedfomo.self": "excluded", "fedfomo.P_update": "raw"}}
    spec = pg.given_spec(
        "FedFomo's equality up to rounding met by running statistics 0 in both "
        "models (tau = 1e-6): a candidate 2^-22 from its anchor is equal",
        f"{MLP_TEXT} FedFomo (bn.aggregate = average: l. 3's distance and its "
        f"equality up to rounding over every entry, the running statistics "
        f"included), fedfomo.self = excluded, P_update = raw, eta = 1/8, "
        f"fedfomo.equal_rtol = 1e-6; init.w's running statistics all 0, every "
        f"beta negative, the fc2 bias b = 3/4. Round 0: client 1's one batch is "
        f"two zero rows with target 3/4 - 2^-20, so fc1 gives 0, batch "
        f"normalisation gives x-hat = 0, relu passes nothing, the step moves b "
        f"alone by 2^-22 and the running statistics stay 0. Round 1: client 0's "
        f"one candidate theta_1^0 differs from its anchor w0 by 2^-22 at b "
        f"(within tau 3/4) and by 0 at the running statistics, 0 in both: equal "
        f"by the rule's <= (r = 0); a strict < would give it weight 1. Every "
        f"number on that path is exact in float32.",
        MLP, clients, {"kind": "given", "w": w0}, algorithm, FOMO_ZERO_ROUNDS)
    return spec, ff


def fedfomo_zero_buffers():
    spec, ff = fomo_zero_spec()
    vid = "layers/fedfomo/bn1d-equal-zero-buffers"
    fname = "fedfomo-bn1d-equal-zero-buffers.json"
    run, result, final, tol = fedfomo_exact_run(spec, ff)
    trace = result[0]
    notes, up1, w0 = fomo_tau_records(spec, trace)
    buffers = range(20, 28)
    # client 1's step moved b alone and left the buffers 0
    assert [p for p in range(33) if up1[p] != w0[p]] == [32], up1
    assert all(up1[p] == 0 == w0[p] for p in buffers)
    # every parameter of w⁰ is nonzero (only the buffers sit on 0 against 0)
    assert all(w0[p] != 0 for p in range(33) if p not in buffers)
    fomo_zero_checks(spec, ff, run, notes, up1, w0)

    flags = ["fedfomo-equal-bound", "fedfomo-affinity", "fedfomo-distance",
             "bn-running-update"]
    mutants = {"fedfomo-equal-bound": ["fomo-equal-strict"],
               "fedfomo-affinity": ["fomo-affinity-ratio"],
               "fedfomo-distance": ["fomo-squared-dist"],
               "bn-running-update": RUNNING_MUTANTS["bn-running-update"]}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run, final)
    prov = pg.provenance(
        "independent", f"{FEDFOMO_SOURCE}; docs/algorithms/fedfomo.md (Equality up to "
        f"rounding); {lc.LAYERS_SOURCE}",
        FEDFOMO_GENERATOR.replace("make_bn.py", "make_bn.py fedfomo_zero_buffers"))
    return fname, pg.vector(vid, spec["name"], prov, flags, spec, tol, exp)


# ---- the same tie on the parameters()-only path ----------------------------
#
# issue 32: bn.aggregate = parameters_only measures l. 3's distance and its
# equality up to rounding over parameters() alone, so the running statistics'
# 0 against 0 above is no part of the test; the tie is a parameter 0 in
# both models instead, fc1's first weight W1[0][0] = 0 in init.w.  Client
# 1's round-0 batch is the two zero rows of the vector above: every input of
# fc1 is 0 on both rows, so every term of every fc1 weight's gradient
# (δ_q x_i) is an exact 0, and the step leaves fc1's weights as they are in
# any format; relu passes nothing, so fc2's weights' terms are 0 too; only
# the output bias moves, by 2⁻²².  Round 1: client 0's anchor w⁰ and θ_1⁰
# differ by 2⁻²² at b (a third of τ · 3/4) and by 0 against 0 at W1[0][0]:
# the rule's ≤ calls them equal (weights 0); a strict < gives θ_1⁰ weight 1.
# Random rounding keeps the 0: a gradient entry whose terms are all 0 is
# moved relative to itself (ref/core/mca.h, pflref_mca_mark_exact), as a
# float32 candidate's sum of exact zeros is 0.
def fomo_zero_params_spec(ff):
    clients, w0 = fomo_zero_setup()
    w0[0] = 0.0                           # fc1.weight[0][0]
    algorithm = {"name": "fedfomo",
                 "hyperparameters": {"eta": FOMO_ZERO_ETA,
                                     "fedfomo.equal_rtol": FOMO_ZERO_TAU},
                 "switches": {"bn.aggregate": "parameters_only",
                              "fedfomo.self": "excluded", "fedfomo.P_update": "raw"}}
    spec = pg.given_spec(
        "FedFomo's equality up to rounding over parameters() only, met by a "
        "weight 0 in both models (tau = 1e-6): a candidate 2^-22 from its "
        "anchor is equal",
        f"{MLP_TEXT} FedFomo with bn.aggregate = parameters_only (l. 3's "
        f"distance and its equality up to rounding over the parameters only, "
        f"l. 5 mixing the parameters only, phi_i keeping client i's own running "
        f"statistics), fedfomo.self = excluded, P_update = raw, eta = 1/8, "
        f"fedfomo.equal_rtol = 1e-6; init.w's fc1.weight[0][0] = 0, every beta "
        f"negative, the fc2 bias b = 3/4. Round 0: client 1's one batch is two "
        f"zero rows with target 3/4 - 2^-20, so every term of fc1's weight "
        f"gradient is an exact 0, relu passes nothing and the step moves b "
        f"alone by 2^-22. Round 1: client 0's one candidate theta_1^0 differs "
        f"from its anchor w0 by 2^-22 at b (within tau 3/4) and by 0 at "
        f"fc1.weight[0][0], 0 in both: equal by the rule's <= (r = 0); a strict "
        f"< would give it weight 1. Every number on that path is exact in "
        f"float32.",
        MLP, clients, {"kind": "given", "w": w0}, algorithm, FOMO_ZERO_ROUNDS)
    return spec, ff


def fedfomo_zero_params():
    spec, ff = fomo_zero_spec(params_only=True)
    vid = "layers/fedfomo/bn1d-equal-zero-params"
    fname = "fedfomo-bn1d-equal-zero-params.json"
    run, result, final, tol = fedfomo_exact_run(spec, ff)
    trace = result[0]
    notes, up1, w0 = fomo_tau_records(spec, trace)
    buffers = set(range(20, 28))
    params = [p for p in range(33) if p not in buffers]
    # client 1's step moved b alone among the parameters and left
    # fc1.weight[0][0] at 0, the one parameter on 0 against 0
    assert [p for p in params if up1[p] != w0[p]] == [32], up1
    assert up1[0] == 0 == w0[0]
    assert [p for p in params if w0[p] == 0] == [0]
    fomo_zero_checks(spec, ff, run, notes, up1, w0)

    flags = ["fedfomo-equal-bound", "bn-parameters-distance", "bn-own-buffers",
             "fedfomo-affinity", "bn-running-update"]
    mutants = {"fedfomo-equal-bound": ["fomo-equal-strict"],
               "bn-parameters-distance": ["fomo-buffers-in-distance"],
               "bn-own-buffers": ["fomo-buffers-mixed"],
               "fedfomo-affinity": ["fomo-affinity-ratio"],
               "bn-running-update": RUNNING_MUTANTS["bn-running-update"]}
    exp = pg.checked_expected(vid, tol, flags, mutants, result, run, final)
    prov = pg.provenance(
        "independent", f"{FEDFOMO_SOURCE}; docs/algorithms/fedfomo.md (Equality up to "
        f"rounding; bn.aggregate); {FEDFOMO_KEEP_SOURCE}; {lc.LAYERS_SOURCE}",
        FEDFOMO_GENERATOR.replace("make_bn.py", "make_bn.py fedfomo_zero_params"))
    return fname, pg.vector(vid, spec["name"], prov, flags, spec, tol, exp)


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [fedavg_bn2d, fedavg_bn1d, fedavg_bn1d_frozen,
                                  fedavg_bn2d_biased, fedbn_bn2d, fedbn_bn1d,
                                  fedavg_keep_bn1d, fedavg_keep_bn2d]
                 + FAMILY_MAKERS + [fedfomo_bn_train, fedfomo_bn_eval,
                                    fedfomo_keep_bn, fedavg_keep_first_upload,
                                    fedfomo_keep_on_tau, fedfomo_zero_buffers,
                                    fedfomo_zero_params])
