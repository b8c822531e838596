#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors of bn.aggregate = parameters_only (PFLlib's reading: only
parameters() travel, each client keeps its own running statistics) for the
algorithms whose exact replay lives in its own module, on make_bn.py's MLP
with batchnorm1d and its keep_rounds() schedule, in 60-digit decimals
(pflref_exact_layers.py), through families_common.build (the replay of
golden/audit.py, so audit.py replays them the same way):

  layers/feddyn/bn1d-mlp-pfllib-keep  FedDyn (Acar et al., ICLR 2021,
      Alg. 1; golden/pflref_exact_feddyn.py) under its preset pfllib
      (feddyn.prox = norm_half, lr.count = trainings, bn.aggregate =
      parameters_only): each device starts from theta^{t-1}'s parameters
      with its own running statistics (TsingZ0/PFLlib d832e76f6a23
      clientdyn.py:65-67), grad L_k and h range over the parameters only
      (clientdyn.py:54, serverdyn.py:95-107), and theta^t takes the first
      participant's running statistics (serverdyn.py:85-93).
  layers/fedamp/bn1d-mlp-keep  FedAMP (Huang et al., AAAI 2021, Alg. 1;
      golden/pflref_exact_fedamp.py), paper switches, under bn.aggregate =
      parameters_only: |w_i - w_j|^2 over the parameters, u_i^k's running
      statistics client i's own (serveramp.py:84-96, clientamp.py:57-59).
  layers/apple/bn1d-mlp-pfllib-keep  APPLE (Luo, Wu, IJCAI 2022, Alg. 1;
      golden/pflref_exact_apple.py) under its preset pfllib: w_p^(i) on the
      parameters, its running statistics client i's own
      (clientapple.py:93-100).

    /usr/bin/python3 golden/layers/make_bn_keep.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import make_bn as mb                # noqa: E402
import pflref_golden as pg          # noqa: E402

KEEP_FLAGS = ["bn-own-buffers", "bn-global-buffers"]
GENERATOR = ("golden/layers/make_bn_keep.py ({}, the algorithm's exact replay "
             "on pflref_exact_layers.py)")


def keep_vector(family, short, title, what, algorithm, init_seed, source,
                flags=KEEP_FLAGS):
    """make_bn.family_vector's build on the MLP with batchnorm1d and
    keep_rounds(), named for this generator; the keep flags given must be
    earned."""
    import families_common as fc
    import layers_common as lc
    import make_families as mf
    init = {"kind": "given", "w": lc.init_for(mb.MLP, 600 + init_seed, scale=0.75)}
    vid = f"layers/{family}/bn1d-mlp-{short}"
    spec = pg.given_spec(title, f"{mb.MLP_TEXT} {what}", mb.MLP, mb.MLP_CLIENTS,
                         init, algorithm, mb.keep_rounds())
    cands = mf.candidates(algorithm["name"])
    cands += [f for f in mb.BN_CANDIDATES + list(flags) if f not in cands]
    return fc.build(GENERATOR, source, vid, f"{family}-bn1d-mlp-{short}.json",
                    title, spec, cands, mb.BN_MUST + list(flags))


def feddyn_keep_bn():
    # FedDyn as PFLlib runs it (preset pfllib, which sets bn.aggregate =
    # parameters_only).  alpha = 0.40625 and eta = 0.0703125 keep the
    # h^t / alpha correction of the same order as the step.
    return keep_vector(
        "feddyn", "pfllib-keep", "FedDyn (preset pfllib) on the MLP with "
        "batchnorm1d, running statistics kept per device",
        "FedDyn with the preset pfllib (feddyn.prox = norm_half: l. 5's proximal "
        "gradient (alpha/2)(theta - theta^{t-1})/|theta - theta^{t-1}| over the "
        "parameters, 0 at the first step; lr.count = trainings changes nothing "
        "under a constant step), which sets bn.aggregate = parameters_only: each "
        "device starts from theta^{t-1}'s parameters with the running statistics "
        "its own model last left (init.w's before it first trains), every step's "
        "training pass moves them, grad L_k and h stay 0 on them, and theta^t = "
        "(1/|P_t|) sum theta_k^t - h^t/alpha on the parameters takes the first "
        "participant's running statistics; eta = 0.0703125, alpha = 0.40625; "
        "three rounds, device 1 sits out round 1 and device 0 round 2.",
        {"name": "feddyn", "preset": "pfllib",
         "hyperparameters": {"eta": 0.0703125, "feddyn.alpha": 0.40625}},
        init_seed=11,
        source=("Acar, Zhao, Matas, Mattina, Whatmough, Saligrama, ICLR 2021, "
                "arXiv 2111.04263v2, Alg. 1; TsingZ0/PFLlib d832e76f6a23 "
                "system/flcore/clients/clientdyn.py:65-67 (set_parameters: "
                "parameters() only), :43-46, :52-54 (the linear and proximal "
                "terms over parameters()), system/flcore/servers/serverdyn.py:"
                "85-93 (aggregate_parameters: deepcopy of uploaded_models[0], "
                "parameters() averaged and corrected), :95-107 "
                "(update_server_state over parameters())"))


def fedamp_keep_bn():
    # FedAMP's box (paper switches: every peer, from u_i^k, the squared
    # proximal term) under bn.aggregate = parameters_only, PFLlib's exchange
    # (its preset pfllib sets it, but with fedamp.start = own and
    # fedamp.prox = detached u_i^k reaches no number: the paper's switches
    # let the keep reading show).
    return keep_vector(
        "fedamp", "keep", "FedAMP on the MLP with batchnorm1d, parameters() "
        "exchanged, running statistics kept per client (bn.aggregate = "
        "parameters_only)",
        "FedAMP (Alg. 1, paper switches: xi over every other client, l. 5 from "
        "u_i^k with the proximal term (lambda/alpha_k)(w - u_i^k)) under "
        "bn.aggregate = parameters_only: |w_i - w_j|^2 in xi_{i,j} = alpha_k "
        "e^{-|w_i - w_j|^2/sigma}/sigma ranges over the parameters (fc1, bn1's "
        "weight and bias, fc2), u_i^k = sum_j xi_{i,j} w_j on the parameters "
        "carries client i's own running statistics (init.w's before it first "
        "trains), the proximal term never pulls them and every step's training "
        "pass moves them; eta = 0.0703125, lambda = 0.375, alpha_k = 0.3125, "
        "sigma = 0.75; three rounds, client 1 sits out round 1 and client 0 "
        "round 2.",
        {"name": "fedamp",
         "hyperparameters": {"eta": 0.0703125, "fedamp.lambda": 0.375,
                             "fedamp.alpha_k": 0.3125, "fedamp.sigma": 0.75},
         "switches": {"bn.aggregate": "parameters_only"}},
        init_seed=12,
        source=("Huang, Chu, Zhou, Wang, Liu, Pei, Zhang, AAAI 2021, arXiv "
                "2007.03797v5, Alg. 1, eqs. (6)-(7); TsingZ0/PFLlib d832e76f6a23 "
                "system/flcore/servers/serveramp.py:84-88 (|w_i - w_j|^2 over "
                "parameters()), :94-96 (u_i mixes parameters()), "
                "system/flcore/clients/clientamp.py:57-59 (set_parameters into "
                "client_u's parameters() only; the client's model keeps its "
                "running statistics)"),
        flags=["bn-own-buffers", "bn-parameters-distance"])


def apple_keep_bn():
    # APPLE as PFLlib runs it (preset pfllib, which sets bn.aggregate =
    # parameters_only): clientapple.py:93-100 mixes parameters() only into
    # the client's model, whose running statistics stay its own.
    return keep_vector(
        "apple", "pfllib-keep", "APPLE (preset pfllib) on the MLP with "
        "batchnorm1d, each client's mixture keeping its running statistics",
        "APPLE with the preset pfllib (p_i from 1/N, the core stepped first by "
        "N eta, p_grad the mean over the parameters() blocks, lambda of the "
        "previous round), which sets bn.aggregate = parameters_only: w_p^(i) = "
        "sum_j p_ij w_j on the parameters, its running statistics client i's "
        "own (init.w's at the start), moved by each step's training pass and "
        "kept across rounds; the cores' running statistics never move and are "
        "never read; eta = 0.0234375 (N eta = 0.0703125), eta_p = 0.0859375, "
        "mu = 0.375, L = 2; three rounds, client 1 sits out round 1 and client "
        "0 round 2.",
        {"name": "apple", "preset": "pfllib",
         "hyperparameters": {"eta": 0.0234375, "eta_p": 0.0859375,
                             "apple.mu": 0.375, "apple.L": 2}},
        init_seed=13,
        source=("Luo, Wu, IJCAI 2022, arXiv 2110.08394v3, Alg. 1, eqs. (1), (3), "
                "(4); TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/"
                "clientapple.py:93-100 (aggregate_parameters: parameters() only), "
                ":48-66 (the training pass on the mixture, p_grad over "
                "parameters()), :77 (model_c)"),
        flags=["bn-own-buffers"])


MAKERS = [feddyn_keep_bn, fedamp_keep_bn, apple_keep_bn]


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, MAKERS)
