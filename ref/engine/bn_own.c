/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/bn_own.c: see ref/engine/bn_own.h.
 *
 * PFLlib's reading of batch normalisation at the server (TsingZ0/PFLlib
 * d832e76f6a23 system/flcore): clientbase.py:67-69 set_parameters copies
 * model.parameters() only, so the running statistics r_μ, r_v (buffers,
 * not parameters) of the model a client trains and sends stay those it
 * last left; serverbase.py:138-150 aggregate_parameters deep-copies
 * uploaded_models[0] and sums parameters() only, so the global's buffers
 * are the first uploader's.  Every server that calls send_models and
 * aggregate_parameters inherits it (serveravg.py, serverditto.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/bn_own.h"
#include "core/vec.h"

int pflref_bn_keeps_own_in(const pflref_problem *problem,
                           const pflref_hyper *hyper)
{
    return hyper->bn_aggregate == PFLREF_BN_AGGREGATE_PARAMETERS &&
           problem->model.bn;
}

/* PFLlib serverbase.py receive_models draws the uploaders' order with
 * random.sample(self.selected_clients, …) (and drops the ones whose
 * time cost exceeds the threshold), so uploaded_models[0] is a random
 * uploader: a choice the schedule records as data ("first_upload"),
 * the lowest id when it does not. */
size_t pflref_bn_first_upload(const pflref_round_plan *plan, size_t lowest)
{
    return plan->has_first_upload ? plan->first_upload : lowest;
}

pflref_status pflref_bn_no_first_upload(const pflref_schedule *schedule,
                                        const char *who, const char *why,
                                        pflref_error *err)
{
    for (size_t t = 0; schedule != NULL && t < schedule->T; t++) {
        if (!schedule->rounds[t].has_first_upload)
            continue;
        char where[PFLREF_WHERE_MAX];
        snprintf(where, sizeof where, "schedule.rounds[%zu].first_upload", t);
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "first_upload picks the client whose running statistics the new "
            "global takes, but %s (%s): drop it",
            who, why);
    }
    return PFLREF_OK;
}

int pflref_bn_keeps_own(const pflref_state *s)
{
    return pflref_bn_keeps_own_in(s->problem, s->hyper);
}

void pflref_bn_copy_buffers(const pflref_model *m, double *dst,
                            const double *src)
{
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        if (B->is_buffer)
            memcpy(dst + B->offset, src + B->offset,
                   B->size * sizeof *dst);
    }
}

void pflref_bn_copy_buffers_in(const pflref_model *m,
                               const unsigned char *mask, double *dst,
                               const double *src)
{
    for (size_t b = 0; b < m->nblocks; b++) {
        const pflref_block *B = &m->blocks[b];
        for (size_t p = B->offset; B->is_buffer && p < B->offset + B->size;
             p++)
            if (mask == NULL || mask[p])
                dst[p] = src[p];
    }
}

void pflref_bn_share_params(pflref_state *s)
{
    const pflref_model *m = &s->problem->model;
    for (size_t i = 0; i < s->N; i++) {
        double *v_i = s->v + i * s->P;
        for (size_t b = 0; b < m->nblocks; b++) {
            const pflref_block *B = &m->blocks[b];
            for (size_t p = B->offset;
                 !B->is_buffer && p < B->offset + B->size; p++)
                if (s->shared[p])
                    v_i[p] = s->w[p];
        }
    }
}

pflref_status pflref_bn_own_alloc(pflref_state *s, pflref_error *err)
{
    if (s->bn_own != NULL)
        return PFLREF_OK;
    s->bn_own = malloc(s->N * s->P * sizeof *s->bn_own);
    if (s->bn_own == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < s->N; i++)
        memcpy(s->bn_own + i * s->P, s->w0, s->P * sizeof *s->bn_own);
    return PFLREF_OK;
}

double *pflref_bn_own_row(pflref_state *s, size_t k)
{
    return s->bn_own + k * s->P;
}

void pflref_bn_own_load(pflref_state *s, pflref_state_loader load, void *ctx,
                        long t)
{
    if (s->bn_own == NULL)
        return;
    for (size_t k = 0; k < s->N; k++)
        if (load(ctx, PFLREF_EV_CLIENT_END, "w_local", t, (long)k, s->mix,
                 s->P))
            pflref_bn_copy_buffers(&s->problem->model,
                                   s->bn_own + k * s->P, s->mix);
}

void pflref_bn_own_mix_buffers(const pflref_state *s, size_t i, double *mix)
{
    if (s->bn_own == NULL || s->v == NULL)
        return;
    pflref_bn_copy_buffers(&s->problem->model, mix, s->v + i * s->P);
}

/* Client i's "global" evaluation under bn.aggregate = parameters_only:
 * client i's own model, w's parameters with its own r_μ, r_v (PFLlib's
 * evaluate(): each client's test_metrics on its model, serverbase.py:
 * 194-203, clientbase.py:80-84), built in the driver's buffer s->mix. */
pflref_status pflref_bn_own_evaluate(const pflref_state *s, size_t i,
                                     const pflref_data *D, pflref_eval *out)
{
    const pflref_model *m = &s->problem->model;
    double *own = s->mix;
    pflref_copy(own, s->w, s->P);
    pflref_bn_copy_buffers(m, own, s->bn_own + i * s->P);
    return pflref_model_evaluate(m, own, D, s->ws, out);
}
