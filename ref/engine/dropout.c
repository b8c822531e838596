/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/dropout.c: the run's feed of dropout masks (docs/models.md,
 * "Dropout"; ref/engine/dropout.h).
 *
 * Randomness is data: every training pass through a dropout layer takes
 * its masks from the schedule.  The model asks the workspace's source for
 * the next pass whenever a training pass begins (pflref_model_loss,
 * _grad, ...), naming the data D it reads; D is client i's training set,
 * so the feed knows the participant j (clients[j] = i) and hands it
 * rounds[t].dropout's pass number used[j], then counts it.  After the
 * round each participant must have taken all its passes; a pass with no
 * mask left, or masks of another batch size, fails the pass, and the
 * feed's message (round, client, pass, layer) replaces the algorithm's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/dropout.h"

/* The participant position j of the client whose training data is D, or
 * plan->m when D is no participant's. */
static size_t participant_of(const pflref_dropout_feed *f,
                             const pflref_data *D, size_t *client)
{
    const pflref_round_plan *r = f->plan;
    for (size_t j = 0; j < r->m; j++)
        if (&f->problem->clients[r->clients[j]].train == D) {
            *client = r->clients[j];
            return j;
        }
    return r->m;
}

static pflref_status source(void *ctx, const pflref_model *m,
                            const pflref_data *D, size_t nb,
                            const unsigned char **pass)
{
    pflref_dropout_feed *f = ctx;
    const char *layer = "?";
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT) {
            layer = m->layers[i].name;
            break;
        }
    if (f->plan == NULL)
        return pflref_error_set(&f->err, PFLREF_EINVAL, "schedule",
                                "a training pass after the rounds goes "
                                "through dropout layer \"%s\": the phase "
                                "after training has no dropout masks",
                                layer);
    size_t client = 0;
    const size_t j = participant_of(f, D, &client);
    char where[96];
    snprintf(where, sizeof where, "schedule.rounds[%ld].dropout", f->round);
    if (j == f->plan->m)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "round %ld: a training pass on data that "
                                "is no participant's goes through dropout "
                                "layer \"%s\", which has no masks for it",
                                f->round, layer);
    const pflref_dropout_masks *d = f->plan->dropout;
    const size_t q = f->used[j] + 1;   /* the pass, 1-based */
    const size_t given = d == NULL ? 0
                                   : d->pass_off[j + 1] - d->pass_off[j];
    if (d != NULL)
        snprintf(where, sizeof where, "schedule.rounds[%ld].dropout[%zu]",
                 f->round, j);
    if (q > given)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "round %ld, client %zu, training pass %zu "
                                "(of %zu samples): no dropout mask given "
                                "for layer \"%s\" (%zu passes given)",
                                f->round, client, q, nb, layer, given);
    const size_t p = d->pass_off[j] + q - 1;
    if (d->nb[p] != nb)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "round %ld, client %zu, training pass %zu: "
                                "the masks have %zu rows, the pass's batch "
                                "%zu samples (layer \"%s\")", f->round,
                                client, q, d->nb[p], nb, d->name[0]);
    f->used[j] = q;
    *pass = d->mask + d->mask_off[p];
    return PFLREF_OK;
}

void pflref_dropout_feed_start(pflref_dropout_feed *f, pflref_state *s)
{
    *f = (pflref_dropout_feed){.problem = s->problem, .round = -1};
    pflref_error_clear(&f->err);
    if (pflref_model_dropout_layers(&s->problem->model) > 0)
        pflref_model_workspace_dropout(s->ws, source, f);
}

pflref_status pflref_dropout_feed_round(pflref_dropout_feed *f,
                                        const pflref_round_plan *plan,
                                        long t, pflref_error *err)
{
    free(f->used);
    f->used = NULL;
    f->plan = plan;
    f->round = t;
    if (plan == NULL)
        return PFLREF_OK;
    f->used = calloc(plan->m > 0 ? plan->m : 1, sizeof *f->used);
    if (f->used == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    return PFLREF_OK;
}

pflref_status pflref_dropout_feed_end(pflref_dropout_feed *f,
                                      pflref_status st, pflref_error *err)
{
    if (f->err.status != PFLREF_OK) {
        /* the pass's own message, then the algorithm's (it names the
         * step) */
        pflref_error e = f->err;
        if (err != NULL && err->message[0] != '\0')
            snprintf(e.message + strlen(e.message),
                     sizeof e.message - strlen(e.message), " [%s]",
                     err->message);
        if (err != NULL)
            *err = e;
        return e.status;
    }
    if (st != PFLREF_OK || f->plan == NULL || f->plan->dropout == NULL)
        return st;
    const pflref_dropout_masks *d = f->plan->dropout;
    for (size_t j = 0; j < f->plan->m; j++) {
        const size_t given = d->pass_off[j + 1] - d->pass_off[j];
        if (f->used[j] != given) {
            char where[96];
            snprintf(where, sizeof where,
                     "schedule.rounds[%ld].dropout[%zu]", f->round, j);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "round %ld, client %zu made %zu "
                                    "training passes, %zu given: every "
                                    "pass's masks must be used", f->round,
                                    f->plan->clients[j], f->used[j], given);
        }
    }
    return PFLREF_OK;
}

void pflref_dropout_feed_stop(pflref_dropout_feed *f, pflref_state *s)
{
    pflref_model_workspace_dropout(s->ws, NULL, NULL);
    free(f->used);
    f->used = NULL;
}
