/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/schedule_check.c: the validation of a schedule that comes
 * from outside (a spec's recorded schedule, which a candidate replays):
 * every round's participants, selected and drawn clients, and every
 * client's batches, checked against N clients of n_i samples each before
 * any algorithm reads an id or an index.
 *
 * Per round t (paths "schedule.rounds[t]…"):
 *   clients   1 ≤ m ≤ N ids, in range and strictly ascending
 *   selected  1 ≤ n_selected ≤ m participants, strictly ascending
 *   drawn     a permutation of selected
 *   batches   per participant: step offsets from 0, strictly increasing
 *             (no empty batch), every sample index < n_i
 * then the post phase, per client ("schedule.post[i]").
 *
 * The range and order scans, the step-offset scan, the position search
 * and the marks of ids in a scratch array of N bytes are the kernels of
 * ref/sampling/ids.c, proved with Frama-C (proofs/).  Cost: O(N + total ids and indices); one allocation (the
 * marks).  Limits are those of pflref/schedule.h (MAX_INDICES).
 */
#include <stdio.h>
#include <stdlib.h>
#include "pflref/schedule.h"
#include "sampling/kernels.h"

/* The largest number of sample indices (and so of steps) a schedule may
 * hold (schedule.h). */
#define MAX_INDICES PFLREF_SCHEDULE_MAX_INDICES

/* The error record and the marks are apart from the plan's batches (what
 * validate_round needs to know that writing them leaves the batches as
 * they were). */
/*@ predicate plan_apart{L}(pflref_round_plan *r, pflref_error *err,
                            unsigned char *mark, integer N) =
      \separated(err, r) && \separated(mark + (0 .. N - 1), r) &&
      (r->batches != \null ==>
         \separated(err, r->batches + (0 .. r->m - 1)) &&
         \separated(mark + (0 .. N - 1), r->batches + (0 .. r->m - 1)) &&
         \forall integer j; 0 <= j < r->m ==>
           (r->batches[j].step_off != \null ==>
              \separated(err, r->batches[j].step_off +
                                (0 .. r->batches[j].nsteps)) &&
              \separated(mark + (0 .. N - 1), r->batches[j].step_off +
                                (0 .. r->batches[j].nsteps))));
 */

/* For the proofs of the callers below (proofs/README.md): the one fact
 * they need of ref/core/status.c, that an error record's setter returns
 * the status it is given (its code is not proved; it writes only *err). */
/*@ assigns *err;
    ensures \result == status;
 */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...);

/* One client's batches: path is "schedule.rounds[t].batches[j]" or
 * "schedule.post[i]"; the client has n_i samples. */
/*@ requires batches_shape(b);
    assigns *err;
 */
static pflref_status validate_batches(const pflref_batches *b, size_t n_i,
                                      size_t client, const char *path,
                                      pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    if (b->nsteps == 0)
        return PFLREF_OK;
    if (b->nsteps > MAX_INDICES || b->step_off == NULL) {
        snprintf(where, sizeof where, "%s", path);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                b->step_off == NULL
                                    ? "%zu steps but no step offsets"
                                    : "%zu steps exceed the limit",
                                b->nsteps);
    }
    if (b->step_off[0] != 0) {
        snprintf(where, sizeof where, "%s[0]", path);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the step offsets start at %zu, not 0",
                                b->step_off[0]);
    }
    /* Offsets strictly increasing (the proved scan of ids.c). */
    const size_t s_bad = pflref_steps_first_bad(b->step_off, b->nsteps);
    if (s_bad < b->nsteps) {
        const size_t lo = b->step_off[s_bad], hi = b->step_off[s_bad + 1];
        snprintf(where, sizeof where, "%s[%zu]", path, s_bad);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                hi < lo ? "the step offsets decrease "
                                          "(%zu after %zu)"
                                        : "an empty batch (offsets "
                                          "%zu and %zu)",
                                hi, lo);
    }
    if (b->step_off[b->nsteps] > MAX_INDICES || b->idx == NULL) {
        snprintf(where, sizeof where, "%s", path);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu sample indices %s",
                                b->step_off[b->nsteps],
                                b->idx == NULL ? "but no index array"
                                               : "exceed the limit");
    }
    /* every index < n_i (the proved scan of ref/sampling/ids.c) */
    const size_t total = b->step_off[b->nsteps];
    const size_t bad = pflref_index_first_out_of_range(b->idx, total, n_i);
    if (bad < total) {
        /* the step holding position bad (the proved search of ids.c) */
        const size_t s = pflref_step_of(b->step_off, b->nsteps, bad);
        snprintf(where, sizeof where, "%s[%zu][%zu]", path, s,
                 bad - b->step_off[s]);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "sample index %zu is out of range for "
                                "client %zu with n = %zu samples",
                                b->idx[bad], client, n_i);
    }
    return PFLREF_OK;
}

/* Round t's participants: 1..N of them, the participant, drawn and
 * batches lists present, the ids in range and strictly ascending. */
/*@ requires plan_shape(r);
    assigns *err;
    ensures \result == PFLREF_OK ==>
            r->clients != \null && r->drawn != \null &&
            r->batches != \null && 1 <= r->m <= N &&
            (\forall integer j; 0 <= j < r->m ==> r->clients[j] < N);
 */
static pflref_status check_participants(const pflref_round_plan *r, size_t t,
                                        size_t N, pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "schedule.rounds[%zu].clients", t);
    if (r->m == 0 || r->m > N)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "round %zu has %zu participants; it needs "
                                "1..N = %zu", t, r->m, N);
    if (r->clients == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "round %zu has no participant list", t);
    if (r->drawn == NULL || r->batches == NULL) {
        snprintf(where, sizeof where, "schedule.rounds[%zu].%s", t,
                 r->drawn == NULL ? "drawn" : "batches");
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "round %zu has no %s list", t,
                                r->drawn == NULL ? "drawn" : "batches");
    }
    /* Ids in range and strictly ascending, so distinct (the proved scan
     * of ref/sampling/ids.c). */
    const size_t j_bad = pflref_ids_first_bad(r->clients, r->m, N);
    if (j_bad == r->m)
        return PFLREF_OK;
    const size_t c = r->clients[j_bad];
    snprintf(where, sizeof where, "schedule.rounds[%zu].clients[%zu]", t,
             j_bad);
    if (c >= N)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "client id %zu is out of range (N = %zu)",
                                c, N);
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "client ids must be strictly ascending: %zu "
                            "follows %zu", c, r->clients[j_bad - 1]);
}

/* Round t's selected clients, strictly ascending participants, and drawn,
 * a permutation of selected.  mark[0..N−1] is zero on entry and on return;
 * meanwhile 1 = participant, 2 = selected, 3 = drawn. */
/*@ requires plan_shape(r);
    requires r->clients != \null && r->drawn != \null;
    requires \valid(mark + (0 .. N - 1));
    requires \separated(mark + (0 .. N - 1), r->clients + (0 .. r->m - 1));
    requires r->selected != \null ==> \separated(mark + (0 .. N - 1),
                 r->selected + (0 .. r->n_selected - 1));
    requires \separated(mark + (0 .. N - 1),
                        r->drawn + (0 .. r->n_selected - 1));
    assigns *err, mark[0 .. N - 1];
    ensures \result == PFLREF_OK ==> r->selected != \null;
 */
static pflref_status check_selected(const pflref_round_plan *r, size_t t,
                                    size_t N, unsigned char *mark,
                                    pflref_error *err)
{
    char where[PFLREF_WHERE_MAX];
    pflref_status st = PFLREF_OK;
    pflref_marks_set(mark, N, r->clients, r->m, 1);
    if (r->n_selected == 0 || r->n_selected > r->m || r->selected == NULL) {
        snprintf(where, sizeof where, "schedule.rounds[%zu].selected", t);
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "round %zu aggregates %zu clients; it needs "
                              "1..m = %zu of its participants", t,
                              r->n_selected, r->m);
    }
    /* The bitmap kernels are the proved ones of ids.c. */
    const size_t j_sel = st == PFLREF_OK
        ? pflref_selected_first_bad(r->selected, r->n_selected, N, mark)
        : r->n_selected;
    if (j_sel < r->n_selected) {
        const size_t j = j_sel, c = r->selected[j];
        snprintf(where, sizeof where, "schedule.rounds[%zu].selected[%zu]",
                 t, j);
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              c < N && mark[c] == 1
                                  ? "selected ids must be strictly ascending"
                                  : "client %zu is not a participant of round "
                                    "%zu", c, t);
    }
    const size_t j_drawn = st == PFLREF_OK
        ? pflref_drawn_first_bad(r->drawn, r->n_selected, N, mark)
        : r->n_selected;
    if (j_drawn < r->n_selected) {
        const size_t j = j_drawn, d = r->drawn[j];
        snprintf(where, sizeof where, "schedule.rounds[%zu].drawn[%zu]", t,
                 j);
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              d < N && mark[d] == 3
                                  ? "client %zu is drawn twice in round %zu"
                                  : "client %zu is not a selected client of "
                                    "round %zu",
                              d, t);
    }
    pflref_marks_set(mark, N, r->clients, r->m, 0);
    return st;
}

/* Round t: participants, selected and drawn clients, and batches.
 * mark[0..N−1] is zero on entry and on return. */
/*@ requires plan_shape(r);
    requires \valid_read(n + (0 .. N - 1));
    requires \valid(mark + (0 .. N - 1));
    requires \separated(mark + (0 .. N - 1), r->clients + (0 .. r->m - 1));
    requires r->selected != \null ==> \separated(mark + (0 .. N - 1),
                 r->selected + (0 .. r->n_selected - 1));
    requires r->drawn != \null ==> \separated(mark + (0 .. N - 1),
                 r->drawn + (0 .. r->n_selected - 1));
    requires plan_apart(r, err, mark, N);
    assigns *err, mark[0 .. N - 1];
    ensures \result == PFLREF_OK ==> plan_checked(r, N);
 */
static pflref_status validate_round(const pflref_round_plan *r, size_t t,
                                    const size_t *n, size_t N,
                                    unsigned char *mark, pflref_error *err)
{
    pflref_status st;
    if ((st = check_participants(r, t, N, err)) ||
        (st = check_selected(r, t, N, mark, err)))
        return st;
    /* Each participant's batches. */
    char path[PFLREF_WHERE_MAX];
    /*@ loop invariant 0 <= j <= r->m;
        loop invariant r->clients != \null && r->batches != \null;
        loop invariant \forall integer q; 0 <= q < r->m ==>
                       r->clients[q] < N;
        loop assigns j, st, path[0 .. PFLREF_WHERE_MAX - 1], *err;
     */
    for (size_t j = 0; st == PFLREF_OK && j < r->m; j++) {
        snprintf(path, sizeof path, "schedule.rounds[%zu].batches[%zu]", t,
                 j);
        st = validate_batches(&r->batches[j], n[r->clients[j]],
                              r->clients[j], path, err);
    }
    /* Each participant's personal batches (Ditto's own, when present). */
    /*@ loop invariant 0 <= j <= r->m;
        loop invariant r->clients != \null;
        loop invariant \forall integer q; 0 <= q < r->m ==>
                       r->clients[q] < N;
        loop assigns j, st, path[0 .. PFLREF_WHERE_MAX - 1], *err;
     */
    for (size_t j = 0; st == PFLREF_OK && r->personal != NULL && j < r->m;
         j++) {
        snprintf(path, sizeof path, "schedule.rounds[%zu].personal[%zu]", t,
                 j);
        st = validate_batches(&r->personal[j], n[r->clients[j]],
                              r->clients[j], path, err);
    }
    return st;
}

/* The marks: N zero bytes (one when N = 0) from calloc, or NULL.  WP 25 does
 * not implement \fresh, so its contract states what C guarantees of a new
 * block and what the call of validate_round below needs of it: N writable
 * zero bytes apart from every object that existed before, here the
 * schedule's arrays and the error record.  This contract is an assumption
 * of the proofs (proofs/README.md), as calloc's own is. */
/*@ assigns \nothing;
    ensures \result == \null || \valid(\result + (0 .. N - 1));
    ensures \result != \null ==> \separated(\result + (0 .. N - 1), s, err);
    ensures \result != \null && s->rounds != \null ==>
            \separated(\result + (0 .. N - 1), s->rounds + (0 .. s->T - 1));
    ensures \result != \null && s->rounds != \null ==>
            \forall integer t; 0 <= t < s->T ==>
              plan_apart(s->rounds + t, err, \result, N) &&
              (s->rounds[t].clients != \null ==>
                 \separated(\result + (0 .. N - 1),
                            s->rounds[t].clients + (0 .. s->rounds[t].m - 1))) &&
              (s->rounds[t].selected != \null ==>
                 \separated(\result + (0 .. N - 1), s->rounds[t].selected +
                              (0 .. s->rounds[t].n_selected - 1))) &&
              (s->rounds[t].drawn != \null ==>
                 \separated(\result + (0 .. N - 1), s->rounds[t].drawn +
                              (0 .. s->rounds[t].n_selected - 1)));
 */
static unsigned char *marks_alloc(const pflref_schedule *s,
                                  const pflref_error *err, size_t N)
{
    (void)s;
    (void)err;
    return calloc(N > 0 ? N : 1, 1);
}

/* Free what marks_alloc returned (its contract says nothing of the
 * allocator's bookkeeping, so free's \freeable is not WP's to check). */
/*@ assigns \nothing; */
static void marks_free(unsigned char *mark)
{
    free(mark);
}

/* The caller's part (pflref/schedule.h): a schedule of the shapes its
 * counts say, n of N entries, and an error record apart from the schedule.
 * Everything else is tested here. */
/*@ requires s == \null || schedule_shape(s);
    requires n == \null || \valid_read(n + (0 .. N - 1));
    requires s == \null || s->rounds == \null ||
             \forall integer t; 0 <= t < s->T ==>
               plan_apart(s->rounds + t, err, \null, 0);
    requires s == \null || s->rounds == \null ||
             \separated(err, s->rounds + (0 .. s->T - 1));
    requires \separated(err, s);
    ensures \result == PFLREF_OK ==> s != \null && s->N == N &&
            \forall integer t; 0 <= t < s->T ==>
              plan_checked(s->rounds + t, N);
 */
pflref_status pflref_schedule_validate(const pflref_schedule *s,
                                       const size_t *n, size_t N,
                                       pflref_error *err)
{
    /* Test the input parameters. */
    if (s == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule",
                                "the schedule is NULL");
    if (n == NULL && N > 0)
        return pflref_error_set(err, PFLREF_EINVAL, "n",
                                "the per-client sample counts are NULL");
    if (s->N != N)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule",
                                "the schedule is for %zu clients, the "
                                "problem has %zu", s->N, N);
    if (s->T > 0 && s->rounds == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.rounds",
                                "%zu rounds but no round list", s->T);

    unsigned char *mark = marks_alloc(s, err, N);
    if (mark == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    pflref_status st = PFLREF_OK;
    /*@ loop invariant 0 <= t <= s->T;
        loop invariant st == PFLREF_OK ==> \forall integer q; 0 <= q < t ==>
                       plan_checked(s->rounds + q, N);
        loop assigns t, st, *err, mark[0 .. N - 1];
     */
    for (size_t t = 0; st == PFLREF_OK && t < s->T; t++)
        st = validate_round(&s->rounds[t], t, n, N, mark, err);
    marks_free(mark);
    char path[PFLREF_WHERE_MAX];
    /*@ loop invariant 0 <= i <= N;
        loop invariant st == PFLREF_OK ==> \forall integer q;
                       0 <= q < s->T ==> plan_checked(s->rounds + q, N);
        loop assigns i, st, *err, path[0 .. PFLREF_WHERE_MAX - 1];
     */
    for (size_t i = 0; st == PFLREF_OK && s->post != NULL && i < N; i++) {
        snprintf(path, sizeof path, "schedule.post[%zu]", i);
        st = validate_batches(&s->post[i], n[i], i, path, err);
    }
    return st;
}
