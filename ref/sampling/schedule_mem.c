/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule_mem.c: the memory of a schedule (pflref/schedule.h):
 * the schedule, its round plans and each client's batches, allocated empty
 * and freed with everything they hold (generation, in schedule.c, and the
 * readers of a spec fill them); the batch order's name.
 *
 * Every allocation is checked; a failed one frees what was allocated
 * before it and leaves the record empty, so pflref_schedule_free is always
 * safe on a partly filled schedule.
 */
#include <stdlib.h>
#include "pflref/schedule.h"

/* The largest number of sample indices (and so of steps, participations,
 * rounds) a schedule may hold (schedule.h). */
#define MAX_INDICES PFLREF_SCHEDULE_MAX_INDICES

const char *pflref_batch_order_name(pflref_batch_order order)
{
    switch (order) {
    case PFLREF_BATCH_SPLIT_ONCE: return "split_once";
    case PFLREF_BATCH_RESHUFFLE:  return "reshuffle";
    }
    return "unknown";
}

pflref_schedule *pflref_schedule_alloc(size_t T, size_t N, int has_post)
{
    if (T > MAX_INDICES || N > MAX_INDICES)
        return NULL;
    const int want_post = has_post && N > 0;
    pflref_schedule *s = calloc(1, sizeof *s);
    if (s != NULL)
        *s = (pflref_schedule){
            .T = T,
            .N = N,
            .rounds = T > 0 ? calloc(T, sizeof *s->rounds) : NULL,
            .post = want_post ? calloc(N, sizeof *s->post) : NULL,
        };
    if (s == NULL || (T > 0 && s->rounds == NULL) ||
        (want_post && s->post == NULL)) {
        pflref_schedule_free(s);
        return NULL;
    }
    return s;
}

/* Free one client's batches and leave them empty. */
static void batches_release(pflref_batches *b)
{
    free(b->step_off);
    free(b->idx);
    *b = (pflref_batches){.nsteps = 0};
}

/* Free a round plan's arrays (and its batches) and leave it empty. */
void pflref_dropout_masks_free(pflref_dropout_masks *d)
{
    if (d == NULL)
        return;
    for (size_t l = 0; d->name != NULL && l < d->L; l++)
        free(d->name[l]);
    free(d->name);
    free(d->width);
    free(d->pass_off);
    free(d->nb);
    free(d->mask_off);
    free(d->mask);
    free(d);
}

static void round_plan_release(pflref_round_plan *r)
{
    if (r->batches != NULL)
        for (size_t j = 0; j < r->m; j++)
            batches_release(&r->batches[j]);
    free(r->batches);
    free(r->clients);
    free(r->drawn);
    free(r->selected);
    if (r->peers != NULL)
        batches_release(r->peers);
    free(r->peers);
    if (r->personal != NULL)   /* m lists, or n_personal (FedALA's N) */
        for (size_t j = 0; j < (r->n_personal > r->m ? r->n_personal : r->m);
             j++)
            batches_release(&r->personal[j]);
    free(r->personal);
    if (r->peer_order != NULL)
        batches_release(r->peer_order);
    free(r->peer_order);
    free(r->peer_u_off);
    free(r->peer_u);
    free(r->draws);
    pflref_dropout_masks_free(r->dropout);
    pflref_dropout_masks_free(r->estimate_dropout);
    pflref_dropout_masks_free(r->partition_dropout);
    *r = (pflref_round_plan){.m = 0, .n_selected = 0};
}

pflref_status pflref_batches_alloc(pflref_batches *b, size_t nsteps,
                                   size_t total, pflref_error *err)
{
    if (b == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "b",
                                "the batch list is NULL");
    *b = (pflref_batches){.nsteps = 0};
    if (nsteps > MAX_INDICES || total > MAX_INDICES)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "a client's batches of %zu steps and %zu "
                                "sample indices exceed the limit of %zu",
                                nsteps, total, MAX_INDICES);
    b->step_off = calloc(nsteps + 1, sizeof *b->step_off);
    b->idx = malloc((total > 0 ? total : 1) * sizeof *b->idx);
    b->nsteps = nsteps;
    if (b->step_off == NULL || b->idx == NULL) {
        batches_release(b);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    return PFLREF_OK;
}

pflref_status pflref_round_plan_alloc(pflref_round_plan *r, size_t m,
                                      pflref_error *err)
{
    if (r == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "r",
                                "the round plan is NULL");
    *r = (pflref_round_plan){.m = 0, .n_selected = 0};
    if (m > MAX_INDICES)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "a round of %zu participants exceeds the "
                                "limit of %zu", m, MAX_INDICES);
    const size_t cap = m > 0 ? m : 1;
    *r = (pflref_round_plan){
        .m = m,
        .clients = malloc(cap * sizeof *r->clients),
        .batches = calloc(cap, sizeof *r->batches),
        .n_selected = m,
        .selected = malloc(cap * sizeof *r->selected),
        .drawn = malloc(cap * sizeof *r->drawn),
    };
    if (r->clients == NULL || r->drawn == NULL || r->selected == NULL ||
        r->batches == NULL) {
        round_plan_release(r);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    return PFLREF_OK;
}

void pflref_schedule_free(pflref_schedule *s)
{
    if (s == NULL)
        return;
    if (s->rounds != NULL) {
        for (size_t t = 0; t < s->T; t++)
            round_plan_release(&s->rounds[t]);
        free(s->rounds);
    }
    if (s->post != NULL) {
        for (size_t i = 0; i < s->N; i++)
            batches_release(&s->post[i]);
        free(s->post);
    }
    pflref_dropout_masks_free(s->post_dropout);
    pflref_dropout_masks_free(s->init_partition_dropout);
    free(s);
}
