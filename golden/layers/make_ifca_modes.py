#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vector of IFCA's estimate in evaluation mode (switch
ifca.estimate_mode = eval; docs/algorithms/ifca.md, "The estimate's mode"),
on the MLP with batchnorm1d of golden/layers/make_bn.py.

  layers/ifca/bn1d-mlp-model-eval
      The run of layers/ifca/bn1d-mlp-model-given-models (make_bn.py's
      ifca_bn: the same model, clients, given cluster models, step and
      schedule) with ifca.estimate_mode = eval: every estimate
      ĵ = argmin_j F_i(θ_j) (the participants' at the round's start, every
      client's after each server update and before round 0) is the
      evaluation-mode loss, batch normalisation on θ_j's running statistics
      r_μ, r_v (model.eval(), as Gerid/FedDCA clientifca.py:56-61 takes
      it), where the twin vector normalises with the training set's own
      statistics; the local steps are training passes in both.  Flag
      ifca-estimate-mode: the estimate in the other mode moves the losses
      and the picks.

Exact replay: golden/pflref_exact_ifca.py (its eval_loss: the layer list's
forward with train = False) on pflref_exact_layers.py in 60-digit
decimals, through families_common.build as make_bn.py's family vectors.

    /usr/bin/python3 golden/layers/make_ifca_modes.py [OUTDIR]
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc         # noqa: E402
import make_bn as mb               # noqa: E402
import pflref_golden as pg         # noqa: E402

SOURCE = (mb.FAMILY_SOURCES["ifca"] + "; the estimate in evaluation mode "
          "(ifca.estimate_mode = eval) as Gerid/FedDCA 88c5187 "
          "system/flcore/clients/clientifca.py:56-61 takes it (model.eval(), "
          "torch.no_grad())")
GENERATOR = ("golden/layers/make_ifca_modes.py ({}, the family's exact replay on "
             "pflref_exact_layers.py)")


def ifca_bn_eval():
    # make_bn.ifca_bn's rounds, cluster models and step, the switch added
    rounds = [
        {"clients": [0, 1, 2], "batches": [[[0, 2], [1, 3]], [[2, 0, 1]], [[4, 1], [0, 3, 2]]]},
        {"clients": [0, 2], "batches": [[[1, 3, 0]], [[2, 4], [1, 0]]]},
    ]
    w_a = lc.init_for(mb.MLP, 650, scale=0.75)
    w_b = lc.init_for(mb.MLP, 651, scale=0.75)
    import families_common as fc
    import make_families as mf
    init = {"kind": "zeros", "cluster_models": [w_a, w_b]}
    vid = "layers/ifca/bn1d-mlp-model-eval"
    title = ("IFCA (model averaging) on the MLP with batchnorm1d, k = 2 given models, "
             "estimates in evaluation mode")
    what = ("IFCA, Option II (ifca.mode = model) with ifca.estimate_mode = eval: each "
            "client picks the cluster model of least mean loss on its whole training "
            "set in evaluation mode (batch normalisation on the model's running "
            "statistics), trains a copy with gamma = 0.0703125 (training passes: batch "
            "statistics, moving the copy's running statistics) and the cluster's model "
            "is the unweighted mean of its members' copies, running statistics "
            "included; k = 2 given models. The run of "
            "layers/ifca/bn1d-mlp-model-given-models but for the estimates' mode.")
    spec = pg.given_spec(title, f"{mb.MLP_TEXT} {what}", mb.MLP, mb.MLP_CLIENTS, init,
                         {"name": "ifca", "hyperparameters": {"gamma": 0.0703125,
                                                              "ifca.k": 2},
                          "switches": {"ifca.mode": "model",
                                       "ifca.estimate_mode": "eval"}}, rounds)
    cands = mf.candidates("ifca")
    cands += [f for f in mb.BN_CANDIDATES if f not in cands]
    return fc.build(GENERATOR, SOURCE, vid, "ifca-bn1d-mlp-model-eval.json", title, spec,
                    cands, mb.BN_MUST + ["ifca-estimate-mode"])


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [ifca_bn_eval])
