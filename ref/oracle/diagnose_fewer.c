/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_fewer.c: the schedule of diagnose's probe "one local
 * step fewer" (docs/cli.md, "diagnose"), which level 1 runs in fp64 and
 * the precision casts combine with (ref/oracle/diagnose_cast.c). */
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"
#include "oracle/diagnose_search.h"

/* Drop the last batch of every participation in lists[0..m-1]; 1 when
 * one had a step. */
static int drop_last(pflref_batches *out, const pflref_batches *in, size_t m)
{
    int changed = 0;
    for (size_t j = 0; j < m; j++) {
        out[j] = in[j];
        if (out[j].nsteps >= 1) {
            out[j].nsteps--;   /* step_off[nsteps] stays in range */
            changed = 1;
        }
    }
    return changed;
}

/* The schedule of the probe "one local step fewer" (see
 * diagnose_search.h): sch with the last batch of every list of every
 * participation dropped -- the local steps' and, where the round has
 * them, the personal pass's (a count change reaches every list it applies
 * to) -- in the train rounds (the post phase as it is), as a loop that
 * stops one batch early runs.  Shallow: the index lists are sch's;
 * *rounds and *lists are to be freed.  Returns 1 when some list had a
 * step, 0 when none had, -1 when out of memory. */
int dg_fewer_schedule(const pflref_schedule *sch, pflref_schedule *fewer,
                      pflref_round_plan **rounds, pflref_batches **lists)
{
    size_t total = 0;   /* the batch lists and the personal lists */
    for (size_t t = 0; t < sch->T; t++)
        total += sch->rounds[t].m + (sch->rounds[t].n_personal > 0
                                         ? sch->rounds[t].n_personal
                                         : sch->rounds[t].m);
    *fewer = *sch;
    *rounds = malloc((sch->T + 1) * sizeof **rounds);
    *lists = malloc((total + 1) * sizeof **lists);
    if (*rounds == NULL || *lists == NULL) {
        free(*rounds);
        free(*lists);
        *rounds = NULL;
        *lists = NULL;
        return -1;
    }
    fewer->rounds = *rounds;
    pflref_batches *bs = *lists;
    int changed = 0;
    for (size_t t = 0, k = 0; t < sch->T; t++) {
        const pflref_round_plan *r = &sch->rounds[t];
        (*rounds)[t] = *r;
        (*rounds)[t].batches = &bs[k];
        changed |= drop_last(&bs[k], r->batches, r->m);
        k += r->m;
        if (r->personal != NULL) {   /* m lists, or FedALA's N */
            const size_t np = r->n_personal > 0 ? r->n_personal : r->m;
            (*rounds)[t].personal = &bs[k];
            changed |= drop_last(&bs[k], r->personal, np);
            k += np;
        }
    }
    return changed;
}

const pflref_schedule *dg_estimate_schedule(const pflref_spec *spec,
                                            const pflref_hyper *hyper,
                                            const pflref_schedule *sch,
                                            pflref_schedule *tmp,
                                            pflref_round_plan **rounds)
{
    *rounds = NULL;
    if (strcmp(spec->algorithm->name, "ifca") != 0 ||
        hyper->ifca_estimate_mode != PFLREF_IFCA_ESTIMATE_EVAL ||
        sch->init_partition_dropout == NULL)
        return sch;
    /* evaluation-mode estimates: no estimate list (bad input K26 when
     * given so in a spec) */
    *tmp = *sch;
    tmp->init_partition_dropout = NULL;
    *rounds = malloc((sch->T + 1) * sizeof **rounds);
    if (*rounds == NULL)
        return NULL;
    for (size_t t = 0; t < sch->T; t++) {
        (*rounds)[t] = sch->rounds[t];
        (*rounds)[t].estimate_dropout = NULL;
        (*rounds)[t].partition_dropout = NULL;
    }
    tmp->rounds = *rounds;
    return tmp;
}
