/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/dropout.c: the run's feed of dropout masks (docs/models.md,
 * "Dropout"; ref/engine/dropout.h).
 *
 * Randomness is data: every training pass through a dropout layer takes
 * its masks from the schedule.  The model asks the workspace's source for
 * the next pass whenever a training pass begins (pflref_model_loss,
 * _grad, ...), naming the data D it reads; D is client i's training set
 * (or its validation split: FedFomo's validation losses under
 * fedfomo.val_mode = train; under eval they are evaluation passes and take
 * no mask), so the feed
 * knows the participant j (clients[j] = i in a round, j = i in the post
 * phase) and hands it its list's pass number used[j], then counts it.  In round t the lists are rounds[t].dropout (one per
 * participant), in the phase after training post_dropout (one per client,
 * as schedule.post).  After the round or the phase each participant must
 * have taken all its passes; a pass with no mask left, or masks of
 * another batch size, fails the pass, and the feed's message (round or
 * post phase, client, pass, layer) replaces the algorithm's.
 *
 * IFCA's estimate passes under ifca.estimate_mode = train come tagged
 * PFLREF_DROPOUT_PASS_ESTIMATE (ref/algorithms/ifca_estimate.c) and take
 * their masks from the estimate lists, client i the one whose training set
 * D is: before round 0 (the init's reported assignment)
 * init_partition_dropout[i]; in round t first the participants'
 * round-start estimates, rounds[t].estimate_dropout[j] (clients[j] = i)
 * until the participant has taken its list, then, once the server has
 * updated, every client's reported assignment, rounds[t].
 * partition_dropout[i] (the first pass from a partition list ends the
 * round-start estimates).  Each list must be used up as the others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/dropout.h"

/* The participant position j of the client whose training data or
 * validation split is D (FedFomo's validation-loss passes read the latter),
 * or f->m when D is no participant's. */
static size_t participant_of(const pflref_dropout_feed *f,
                             const pflref_data *D, size_t *client)
{
    for (size_t j = 0; j < f->m; j++) {
        const size_t i = f->clients != NULL ? f->clients[j] : j;
        if (&f->problem->clients[i].train == D ||
            &f->problem->clients[i].val == D) {
            *client = i;
            return j;
        }
    }
    return f->m;
}

/* The schedule's place of the masks: "schedule.rounds[t].dropout" or
 * "schedule.post_dropout", with "[j]" when j < f->m. */
static void place(const pflref_dropout_feed *f, size_t j, char *buf,
                  size_t size)
{
    int k = f->round >= 0
                ? snprintf(buf, size, "schedule.rounds[%ld].dropout",
                           f->round)
                : snprintf(buf, size, "schedule.post_dropout");
    if (j < f->m && k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, "[%zu]", j);
}

/* "round t", "post phase" (the phase after training) or "before round
 * 0" (the algorithm's init). */
static void when(const pflref_dropout_feed *f, char *buf, size_t size)
{
    if (f->round >= 0)
        snprintf(buf, size, "round %ld", f->round);
    else if (f->round == -1)
        snprintf(buf, size, "post phase");
    else
        snprintf(buf, size, "before round 0");
}

/* The place of an estimate list: "schedule.rounds[t].estimate_dropout"
 * (start = 1) or ".partition_dropout", or "schedule.
 * init_partition_dropout", with "[j]". */
static void estimate_place(const pflref_dropout_feed *f, int start, size_t j,
                           char *buf, size_t size)
{
    if (f->round >= 0)
        snprintf(buf, size, "schedule.rounds[%ld].%s_dropout[%zu]", f->round,
                 start ? "estimate" : "partition", j);
    else
        snprintf(buf, size, "schedule.init_partition_dropout[%zu]", j);
}

/* The number of passes of list j of d (NULL: 0). */
static size_t passes_of(const pflref_dropout_masks *d, size_t j)
{
    return d == NULL ? 0 : d->pass_off[j + 1] - d->pass_off[j];
}

/* An estimate pass of IFCA (kind PFLREF_DROPOUT_PASS_ESTIMATE) on client
 * i's training set D: the next pass of its estimate list (above). */
static pflref_status estimate_source(pflref_dropout_feed *f,
                                     const pflref_data *D, size_t nb,
                                     const char *layer,
                                     const unsigned char **pass)
{
    const size_t N = f->problem->N;
    char where[96], at[32];
    when(f, at, sizeof at);
    size_t i = 0;
    while (i < N && &f->problem->clients[i].train != D)
        i++;
    if (i == N || f->round == -1)
        return pflref_error_set(&f->err, PFLREF_EINVAL, "schedule",
                                "%s: an estimate pass %s goes through "
                                "dropout layer \"%s\", which has no masks "
                                "for it", at,
                                i == N ? "on data that is no client's "
                                         "training set"
                                       : "in the phase after training",
                                layer);
    size_t j = f->m;   /* the participant position of client i */
    for (size_t q = 0; f->round >= 0 && q < f->m; q++)
        if (f->clients[q] == i)
            j = q;
    /* the round-start estimate until the participant has taken its list
     * and no partition pass has run */
    const int start =
        f->round >= 0 && j < f->m && f->part_used[N] == 0 &&
        (f->est == NULL || f->est_used[j] < passes_of(f->est, j));
    const pflref_dropout_masks *d = start ? f->est : f->part;
    size_t *used = start ? &f->est_used[j] : &f->part_used[i];
    const size_t list = start ? j : i;
    estimate_place(f, start, list, where, sizeof where);
    const size_t q = *used + 1, given = passes_of(d, list);
    if (q > given)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "%s, client %zu, estimate pass %zu (of %zu "
                                "samples): no dropout mask given for layer "
                                "\"%s\" (%zu passes given)", at, i, q, nb,
                                layer, given);
    const size_t p = d->pass_off[list] + q - 1;
    if (d->nb[p] != nb)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "%s, client %zu, estimate pass %zu: the "
                                "masks have %zu rows, the pass's data %zu "
                                "samples (layer \"%s\")", at, i, q, d->nb[p],
                                nb, d->name[0]);
    *used = q;
    if (!start)
        f->part_used[N] = 1;   /* the reported assignment has begun */
    *pass = d->mask + d->mask_off[p];
    return PFLREF_OK;
}

static pflref_status source(void *ctx, const pflref_model *m,
                            const pflref_data *D, size_t nb, int kind,
                            const unsigned char **pass)
{
    pflref_dropout_feed *f = ctx;
    const char *layer = "?";
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT) {
            layer = m->layers[i].name;
            break;
        }
    if (!f->active)
        return pflref_error_set(&f->err, PFLREF_EINVAL, "schedule",
                                "a training pass outside the rounds and the "
                                "post phase goes through dropout layer "
                                "\"%s\", which has no masks for it", layer);
    if (kind == PFLREF_DROPOUT_PASS_ESTIMATE)
        return estimate_source(f, D, nb, layer, pass);
    if (f->round == -2)
        return pflref_error_set(&f->err, PFLREF_EINVAL, "schedule",
                                "before round 0: a training pass goes "
                                "through dropout layer \"%s\", which has no "
                                "masks for it", layer);
    size_t client = 0;
    const size_t j = participant_of(f, D, &client);
    char where[96], at[32];
    when(f, at, sizeof at);
    place(f, f->m, where, sizeof where);
    if (j == f->m)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "%s: a training pass on data that is no "
                                "participant's goes through dropout layer "
                                "\"%s\", which has no masks for it", at,
                                layer);
    const pflref_dropout_masks *d = f->d;
    const size_t q = f->used[j] + 1;   /* the pass, 1-based */
    const size_t given = d == NULL ? 0
                                   : d->pass_off[j + 1] - d->pass_off[j];
    if (d != NULL)
        place(f, j, where, sizeof where);
    if (q > given)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "%s, client %zu, training pass %zu (of %zu "
                                "samples): no dropout mask given for layer "
                                "\"%s\" (%zu passes given)", at, client, q,
                                nb, layer, given);
    const size_t p = d->pass_off[j] + q - 1;
    if (d->nb[p] != nb)
        return pflref_error_set(&f->err, PFLREF_EINVAL, where,
                                "%s, client %zu, training pass %zu: the "
                                "masks have %zu rows, the pass's batch %zu "
                                "samples (layer \"%s\")", at, client, q,
                                d->nb[p], nb, d->name[0]);
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

/* Feed m participants (clients, or NULL: j is client j) their lists d,
 * and the estimate lists est (m) and part (N), either NULL. */
static pflref_status feed(pflref_dropout_feed *f, long t, size_t m,
                          const size_t *clients,
                          const pflref_dropout_masks *d,
                          const pflref_dropout_masks *est,
                          const pflref_dropout_masks *part, pflref_error *err)
{
    const size_t N = f->problem->N;
    free(f->used);
    free(f->est_used);
    free(f->part_used);
    f->used = calloc(m > 0 ? m : 1, sizeof *f->used);
    f->est_used = calloc(m > 0 ? m : 1, sizeof *f->est_used);
    /* part_used[N]: 1 once a partition pass has run */
    f->part_used = calloc(N + 1, sizeof *f->part_used);
    f->active = f->used != NULL && f->est_used != NULL &&
                f->part_used != NULL;
    f->round = t;
    f->m = m;
    f->clients = clients;
    f->d = d;
    f->est = est;
    f->part = part;
    if (!f->active)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    return PFLREF_OK;
}

pflref_status pflref_dropout_feed_init(pflref_dropout_feed *f,
                                       const pflref_schedule *schedule,
                                       pflref_error *err)
{
    /* no participants; the init partition lists, one per client */
    return feed(f, -2, 0, NULL, NULL, NULL, schedule->init_partition_dropout,
                err);
}

pflref_status pflref_dropout_run_init(pflref_state *s,
                                      const pflref_schedule *schedule,
                                      pflref_status (*init)(pflref_state *,
                                                            pflref_error *),
                                      pflref_error *err)
{
    pflref_dropout_feed f;
    pflref_dropout_feed_start(&f, s);
    pflref_status st = pflref_dropout_feed_init(&f, schedule, err);
    if (st == PFLREF_OK)
        st = init(s, err);
    st = pflref_dropout_feed_end(&f, st, err);
    pflref_dropout_feed_stop(&f, s);
    return st;
}

pflref_status pflref_dropout_feed_round(pflref_dropout_feed *f,
                                        const pflref_round_plan *plan,
                                        long t, pflref_error *err)
{
    return feed(f, t, plan->m, plan->clients, plan->dropout,
                plan->estimate_dropout, plan->partition_dropout, err);
}

pflref_status pflref_dropout_feed_post(pflref_dropout_feed *f,
                                       const pflref_schedule *schedule,
                                       pflref_error *err)
{
    /* schedule.post_dropout: one list per client 0 .. N−1 */
    return feed(f, -1, schedule->N, NULL, schedule->post_dropout, NULL, NULL,
                err);
}

pflref_status pflref_dropout_feed_end(pflref_dropout_feed *f,
                                      pflref_status st, pflref_error *err)
{
    f->active = 0;
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
    if (st != PFLREF_OK)
        return st;
    /* the estimate lists: the round-start ones, then the partition ones */
    for (int start = 1; start >= 0; start--) {
        const pflref_dropout_masks *e = start ? f->est : f->part;
        const size_t n = start ? f->m : f->problem->N;
        for (size_t j = 0; e != NULL && j < n; j++) {
            const size_t given = passes_of(e, j);
            const size_t used = start ? f->est_used[j] : f->part_used[j];
            if (used != given) {
                char where[96], at[32];
                estimate_place(f, start, j, where, sizeof where);
                when(f, at, sizeof at);
                return pflref_error_set(err, PFLREF_EINVAL, where,
                                        "%s, client %zu made %zu estimate "
                                        "passes, %zu given: every pass's "
                                        "masks must be used", at,
                                        start ? f->clients[j] : j, used,
                                        given);
            }
        }
    }
    if (f->d == NULL)
        return st;
    const pflref_dropout_masks *d = f->d;
    for (size_t j = 0; j < f->m; j++) {
        const size_t given = d->pass_off[j + 1] - d->pass_off[j];
        if (f->used[j] != given) {
            char where[96], at[32];
            place(f, j, where, sizeof where);
            when(f, at, sizeof at);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s, client %zu made %zu training "
                                    "passes, %zu given: every pass's masks "
                                    "must be used", at,
                                    f->clients != NULL ? f->clients[j] : j,
                                    f->used[j], given);
        }
    }
    return PFLREF_OK;
}

void pflref_dropout_feed_stop(pflref_dropout_feed *f, pflref_state *s)
{
    pflref_model_workspace_dropout(s->ws, NULL, NULL);
    free(f->used);
    free(f->est_used);
    free(f->part_used);
    f->used = f->est_used = f->part_used = NULL;
    f->active = 0;
}
