/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/ifca_estimate.c: the mode of IFCA's cluster estimate
 * (Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, Alg. 1 l. 5 and Alg. 2:
 * ĵ = argmin_j F_i(θ_j), F_i(θ) the mean loss on machine i's data),
 * switch ifca.estimate_mode (docs/algorithms/ifca.md, "The estimate's
 * mode").  Kept out of ifca.c, whose proved functions read no member of
 * pflref_hyper hidden from Frama-C; ifca.c's estimate calls it once per
 * cluster model, in order j = 0..k−1.
 *
 *   train (default)  F_i(θ_j) is a training-mode loss pass
 *                    (pflref_model_loss): batch normalisation on the
 *                    statistics of the whole training set, a dropout mask
 *                    taken per pass (tagged PFLREF_DROPOUT_PASS_ESTIMATE:
 *                    from the schedule's estimate lists).  The paper's F_i
 *                    is the function whose gradient Option I and II step
 *                    on, and those
 *                    passes run in training mode; the authors' code never
 *                    calls eval() (jichan3751/ifca @ 61e44b8,
 *                    mnist/train_cluster_mnist.py:186 builds the models,
 *                    :384-392 takes each cluster model's loss on a
 *                    machine's data in torch's default training mode).
 *   eval             F_i(θ_j) in evaluation mode (pflref_model_evaluate:
 *                    batch normalisation on θ_j's running statistics
 *                    r_μ, r_v, dropout the identity, no mask taken), as
 *                    Gerid/FedDCA @ 88c5187 system/flcore/clients/
 *                    clientifca.py:56-61 computes it (model.eval(),
 *                    torch.no_grad()); argmin at :82.
 *
 * A model without batch normalisation and dropout has one F_i either way
 * (the two sums may round apart in the last bit); the quadratic has no
 * modes.
 */
#include "algorithms/algorithms.h"

pflref_status pflref_ifca_estimate_loss(const pflref_state *s,
                                        const double *theta,
                                        const pflref_data *D, double *loss)
{
    const pflref_model *m = &s->problem->model;
    if (s->hyper->ifca_estimate_mode != PFLREF_IFCA_ESTIMATE_EVAL) {
        /* a training pass tagged as the estimate's: with dropout it takes
         * the next pass of client i's estimate list (ref/engine/dropout.c:
         * schedule.init_partition_dropout before round 0, then per round
         * rounds[t].estimate_dropout at its start and partition_dropout
         * after the server update), not of its local steps' */
        const int was = pflref_model_workspace_dropout_kind(
            s->ws, PFLREF_DROPOUT_PASS_ESTIMATE);
        pflref_status st = pflref_model_loss(m, theta, D, NULL, D->n, s->ws,
                                             loss);
        pflref_model_workspace_dropout_kind(s->ws, was);
        return st;
    }
    pflref_eval e;
    pflref_status st = pflref_model_evaluate(m, theta, D, s->ws, &e);
    if (st == PFLREF_OK)
        *loss = e.loss;   /* (1/n_i) Σ_{z ∈ D_i} ℓ(θ_j; z), evaluation mode */
    return st;
}
