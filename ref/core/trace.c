/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/trace.c: event emission, the trajectory recorder and the tee sink.
 *
 * The recorder is a trace sink, not algorithm code: it grows its arrays as
 * events arrive (doubling), and marks itself failed instead of losing
 * events silently when memory runs out.
 */
#include <stdlib.h>
#include <string.h>
#include "pflref/trace.h"

void pflref_trace_emit(const pflref_trace *tr, pflref_event_kind kind,
                       const char *phase, long round, long client, long step,
                       const char *name, const double *value, size_t len,
                       const char *formula)
{
    if (tr == NULL || tr->emit == NULL)
        return;
    pflref_event ev;
    ev.kind = kind;
    ev.phase = phase;
    ev.round = round;
    ev.client = client;
    ev.step = step;
    ev.name = name;
    ev.value = value;
    ev.len = len;
    ev.formula = formula;
    tr->emit(tr->ctx, &ev);
}

void pflref_trajectory_init(pflref_trajectory *tj, pflref_record_level level)
{
    memset(tj, 0, sizeof *tj);
    tj->level = level;
}

void pflref_trajectory_free(pflref_trajectory *tj)
{
    if (tj == NULL)
        return;
    free(tj->records);
    free(tj->values);
    pflref_trajectory_init(tj, tj->level);
}

/* The capacity to grow to (doubling from cap, at least 64) so that `need`
 * elements of size elem fit; 0 when that would overflow. */
static size_t grown_capacity(size_t cap, size_t need, size_t elem)
{
    size_t cap_new = cap ? cap : 64;
    while (cap_new < need) {
        if (cap_new > ((size_t)-1) / 2 / elem)
            return 0;
        cap_new *= 2;
    }
    return cap_new;
}

/* Grow the array *buf of *cap elements of `size` bytes to hold at least
 * `need`; 0 on failure (the array is left as it was). */
static int grow(void **buf, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 1;
    size_t cap_new = grown_capacity(*cap, need, size);
    void *p = cap_new ? realloc(*buf, cap_new * size) : NULL;
    if (p == NULL)
        return 0;
    *buf = p;
    *cap = cap_new;
    return 1;
}

/* Make room for one more record holding len values; 0 on failure. */
static int reserve(pflref_trajectory *tj, size_t len)
{
    void *records = tj->records, *values = tj->values;
    int ok = grow(&records, &tj->capacity, tj->count + 1,
                  sizeof *tj->records);
    tj->records = records;
    if (!ok || len > ((size_t)-1) / 2 - tj->nvalues)
        return 0;
    ok = grow(&values, &tj->value_capacity, tj->nvalues + len,
              sizeof *tj->values);
    tj->values = values;
    return ok;
}

static int recorded_at(pflref_record_level level, pflref_event_kind kind)
{
    switch (level) {
    case PFLREF_RECORD_NONE:
        return 0;
    case PFLREF_RECORD_ROUND:
        return kind == PFLREF_EV_CLIENT_END || kind == PFLREF_EV_SERVER ||
               kind == PFLREF_EV_NOTE || kind == PFLREF_EV_FINAL;
    case PFLREF_RECORD_STEP:
        return kind != PFLREF_EV_INTERMEDIATE;
    }
    return 0;
}

void pflref_trajectory_emit(void *ctx, const pflref_event *ev)
{
    pflref_trajectory *tj = ctx;
    if (tj->failed || !recorded_at(tj->level, ev->kind))
        return;
    if (!reserve(tj, ev->len)) {
        tj->failed = 1;
        return;
    }
    pflref_record *r = &tj->records[tj->count++];
    r->kind = ev->kind;
    r->phase = ev->phase;
    r->round = ev->round;
    r->client = ev->client;
    r->step = ev->step;
    r->name = ev->name;
    r->len = ev->len;
    r->offset = tj->nvalues;
    if (ev->len > 0)
        memcpy(tj->values + tj->nvalues, ev->value, ev->len * sizeof(double));
    tj->nvalues += ev->len;
}

void pflref_trace_tee_emit(void *ctx, const pflref_event *ev)
{
    const pflref_trace_tee *tee = ctx;
    if (tee->first != NULL && tee->first->emit != NULL)
        tee->first->emit(tee->first->ctx, ev);
    if (tee->second != NULL && tee->second->emit != NULL)
        tee->second->emit(tee->second->ctx, ev);
}

const char *pflref_event_kind_name(pflref_event_kind kind)
{
    switch (kind) {
    case PFLREF_EV_ROUND_BEGIN:  return "round_begin";
    case PFLREF_EV_CLIENT_BEGIN: return "client_begin";
    case PFLREF_EV_STEP:         return "step";
    case PFLREF_EV_CLIENT_END:   return "client_end";
    case PFLREF_EV_SERVER:       return "server";
    case PFLREF_EV_NOTE:         return "note";
    case PFLREF_EV_FINAL:        return "final";
    case PFLREF_EV_INTERMEDIATE: return "intermediate";
    }
    return "unknown";
}

int pflref_event_kind_parse(const char *name, pflref_event_kind *kind)
{
    for (int k = PFLREF_EV_ROUND_BEGIN; k <= PFLREF_EV_FINAL; k++) {
        if (strcmp(pflref_event_kind_name((pflref_event_kind)k), name) == 0) {
            *kind = (pflref_event_kind)k;
            return 1;
        }
    }
    return 0;
}
