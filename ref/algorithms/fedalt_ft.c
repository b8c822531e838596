/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/algorithms/fedalt_ft.c: the fine-tuning switches of FedAlt and
 * FedSim (ref/algorithms/fedalt_ft.h), both for FedBABU as TsingZ0/PFLlib
 * d832e76f6a23 runs it:
 *
 *   pfl.finetune_start = last_local   serverbabu.py, train: every client
 *       calls fine_tune() after the last round, and no send_models comes
 *       before it, so each fine-tunes the model it holds: the base it was
 *       sent at the last round's start (send_models reaches every client)
 *       and, if it trained in that round, trained.
 *   pfl.finetune_lr = decayed         clientbabu.py, fine_tune, steps
 *       self.optimizer, whose lr the client's -ld ExponentialLR has decayed
 *       once per train() (clientbase.py): η γ^(k_i).
 */
#include "algorithms/fedalt_ft.h"

int pflref_pfl_ft_last_local(const pflref_hyper *h)
{
    return h->pfl_ft.start == PFLREF_PFL_FT_START_LAST_LOCAL;
}

double pflref_pfl_ft_eta(const pflref_state *s, size_t i)
{
    const double eta_ft = s->hyper_base->eta_ft;
    if (s->hyper_base->pfl_ft.lr != PFLREF_PFL_FT_LR_DECAYED)
        return eta_ft;
    /* the scheduler steps client i's train() calls took (lr.count) */
    return eta_ft * pflref_client_lr_factor(s, i, 0, 1);
}
