/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/golden.c: golden vectors: verifying the reference against them,
 * and checking a candidate implementation's result against them
 * (pflref/golden.h; docs/validate.md).
 *
 * Both sides of a comparison are tables of records keyed by
 * (event, phase, round, client, step, name) with a vector value, read by
 * the io floor (ref/io/vector.h): the expected side from the vector's
 * "expected" {trajectory, final}, the actual side from the reference's
 * recorded events or the candidate's result.  Every expected record is
 * looked up on the actual side and compared entry by entry with
 * |x − r| ≤ atol + rtol·|r|; a record the actual side lacks (or of another
 * length) is a mismatch ("missing"), never a silent pass.  Every record the
 * actual side wrote under an expected key is held to it, and a divergence
 * in a later one is reported as that duplicate (`record`).  Digits are
 * reported too: max abs and rel error, log relative error (LRE, 0 when no
 * digit is correct, never −0) and ULP distance (between numbers of one sign
 * only), with the numbers of a sign that differs and the orders of
 * magnitude apart, so a report can say "sign differs" or "off by 10^k"
 * where a ULP count would mean nothing.  The statistics fold in every
 * record compared, so they never contradict the first divergence.
 *
 * Digits along the trajectory: each expected record's fewest correct
 * digits also go to the point of its quantity name and stretch of the
 * trajectory (pflref_digit_point; one point per record unless the
 * trajectory is longer than PFLREF_MAX_DIGIT_POINTS allows, then the
 * minimum over a stretch of consecutive records), so a report can show
 * where along the run a candidate starts to lose digits.
 *
 * Re-synchronised checking: the reference re-runs every round from the
 * candidate's own state at that round's start (pflref_run_resync); the
 * candidate is then compared with that run, so each divergent step is
 * reported on its own instead of every later value differing too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io/vector.h"
#include "oracle/diagnose.h"
#include "oracle/precision.h"

/* The report holds a vector's id whole. */
_Static_assert(sizeof ((pflref_golden_report *)0)->id == PFLREF_VECTOR_ID_MAX,
               "a report's id holds every vector id");

/* ---- tolerances --------------------------------------------------------- */

static pflref_tolerance tolerance_for(const pflref_tolerances *t,
                                      const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            return t->each[i];
    return t->all;
}

/* Loosen every tolerance in t to at least floor. */
static void tolerances_floor(pflref_tolerances *t, pflref_tolerance floor)
{
    for (size_t i = 0; i <= t->n; i++) {
        pflref_tolerance *x = i < t->n ? &t->each[i] : &t->all;
        if (x->atol < floor.atol)
            x->atol = floor.atol;
        if (x->rtol < floor.rtol)
            x->rtol = floor.rtol;
    }
}

/* ---- tables ------------------------------------------------------------- */

/* Find the first record with the given key from position `from` on, or
 * NULL. */
static const pflref_record *find_from(const pflref_trajectory *tj,
                                      const pflref_record *key, size_t from)
{
    for (size_t r = from; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        if (pflref_record_same_key(rec, key))
            return rec;
    }
    return NULL;
}

/* Find the record with the given key, or NULL. */
static const pflref_record *find(const pflref_trajectory *tj,
                                 const pflref_record *key)
{
    return find_from(tj, key, 0);
}

/* ---- comparison --------------------------------------------------------- */

/* Distance in units in the last place between two doubles (the number of
 * representable doubles between them); UINT64_MAX when either is NaN. */
static uint64_t ulp_distance(double a, double b)
{
    if (isnan(a) || isnan(b))
        return UINT64_MAX;
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    /* Map sign-magnitude bit patterns to a monotone integer line. */
    if (ia < 0)
        ia = INT64_MIN - ia;
    if (ib < 0)
        ib = INT64_MIN - ib;
    return ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

/* Correct significant digits of x against r: −log10 of the relative error
 * (absolute error where r = 0), in [0, PFLREF_LRE_CAP]; +0, never −0, when
 * no digit is correct. */
static double lre(double x, double r)
{
    double e = r == 0.0 ? fabs(x) : fabs(x - r) / fabs(r);
    if (isnan(e))
        return 0.0;
    if (e == 0.0)
        return PFLREF_LRE_CAP;
    double d = -log10(e);
    return d <= 0.0 ? 0.0 : (d > PFLREF_LRE_CAP ? PFLREF_LRE_CAP : d);
}

/* Orders of magnitude between x and r, ⌊|log10(|x| / |r|)|⌋, for non-zero
 * finite numbers of one sign; 0 otherwise. */
static int orders_off(double x, double r)
{
    if (x == 0.0 || r == 0.0 || !isfinite(x) || !isfinite(r) ||
        (x < 0.0) != (r < 0.0))
        return 0;
    double k = floor(fabs(log10(fabs(x)) - log10(fabs(r))));
    return k > 999.0 ? 999 : (int)k;
}

/* The divergence shape at entry index of the record key (at position
 * in the expected trajectory), with the two values. */
static pflref_divergence divergence_at(const pflref_record *key,
                                       size_t position, size_t index,
                                       double expected, double got,
                                       const pflref_divergence *shape)
{
    pflref_divergence d = *shape;
    d.position = position;
    d.round = key->round;
    d.client = key->client;
    d.step = key->step;
    d.index = index;
    d.expected = expected;
    d.got = got;
    snprintf(d.event, sizeof d.event, "%s", pflref_event_kind_name(key->kind));
    snprintf(d.phase, sizeof d.phase, "%s", key->phase);
    snprintf(d.name, sizeof d.name, "%s", key->name);
    return d;
}

static void note_divergence(pflref_golden_report *rep, const pflref_record *key,
                            size_t position, size_t index, double expected,
                            double got, const pflref_divergence *shape)
{
    const pflref_divergence d = divergence_at(key, position, index, expected,
                                              got, shape);
    rep->mismatches++;
    if (!rep->diverged) {
        rep->diverged = 1;
        rep->first = d;
    }
    if (rep->n_listed < PFLREF_MAX_LISTED)
        rep->listed[rep->n_listed++] = d;
}

/* The statistics slot of quantity `name` (a fresh one on first sight), or
 * NULL when every slot is taken. */
static pflref_quantity_stats *stats_for(pflref_golden_report *rep,
                                        const char *name,
                                        pflref_tolerance tol)
{
    for (size_t i = 0; i < rep->n_names; i++)
        if (strcmp(rep->by_name[i].name, name) == 0)
            return &rep->by_name[i];
    if (rep->n_names == PFLREF_MAX_QUANTITY_NAMES)
        return NULL;
    pflref_quantity_stats *q = &rep->by_name[rep->n_names++];
    /* nothing counted yet; every digit correct until a number says less */
    *q = (pflref_quantity_stats){.min_lre = PFLREF_LRE_CAP,
                                 .atol = tol.atol, .rtol = tol.rtol};
    snprintf(q->name, sizeof q->name, "%s", name);
    return q;
}

/* ---- digits along the trajectory ----------------------------------------- */

/* Positions per point for `count` expected records of at most `names`
 * quantity names: the fewest that keep every point within
 * PFLREF_MAX_DIGIT_POINTS (a stretch of w positions holds a point for at
 * most min(w, names) names). */
static size_t digits_stretch(size_t count, size_t names)
{
    size_t w = 1;
    for (;;) {
        const size_t stretches = (count + w - 1) / w;
        const size_t per = w < names ? w : names;
        if (stretches * per <= PFLREF_MAX_DIGIT_POINTS)
            return w;
        w++;
    }
}

/* The point of quantity slot q for the expected record at `position` (a
 * fresh one on the stretch's first record of that name), or NULL for a
 * name without a slot. */
static pflref_digit_point *point_for(pflref_golden_report *rep,
                                     const pflref_quantity_stats *q,
                                     size_t position, long round)
{
    if (q == NULL)
        return NULL;
    const size_t name = (size_t)(q - rep->by_name);
    const size_t stretch = position / rep->digits_stretch;
    /* positions only grow: the stretch's points are the last ones */
    for (size_t i = rep->n_points; i-- > 0;) {
        pflref_digit_point *p = &rep->points[i];
        if (p->position / rep->digits_stretch != stretch)
            break;
        if (p->name == name)
            return p;
    }
    if (rep->n_points == PFLREF_MAX_DIGIT_POINTS)   /* digits_stretch's bound */
        return NULL;
    pflref_digit_point *p = &rep->points[rep->n_points++];
    *p = (pflref_digit_point){.position = position, .round = round,
                              .name = name, .min_lre = PFLREF_LRE_CAP};
    return p;
}

/* Fold the error of one number x against r into the statistics s. */
static void fold_error(pflref_quantity_stats *s, double x, double r)
{
    double d = fabs(x - r);
    double rel = r != 0.0 ? d / fabs(r) : 0.0;
    double digits = lre(x, r);
    /* a ULP distance across or from zero counts the doubles in between
     * (~4.6e18 from 0 to 1), which says nothing: one sign only */
    const int one_sign = x != 0.0 && r != 0.0 && (x < 0.0) == (r < 0.0);
    uint64_t u = one_sign ? ulp_distance(x, r) : 0;
    int k = orders_off(x, r);
    if (isnan(d))
        d = rel = INFINITY;
    s->max_abs_err = d > s->max_abs_err ? d : s->max_abs_err;
    s->max_rel_err = rel > s->max_rel_err ? rel : s->max_rel_err;
    s->min_lre = digits < s->min_lre ? digits : s->min_lre;
    s->max_ulp = u > s->max_ulp ? u : s->max_ulp;
    s->max_orders = k > s->max_orders ? k : s->max_orders;
    s->sign_differs += x != 0.0 && r != 0.0 && !isnan(x) && (x < 0.0) != (r < 0.0);
    s->not_finite += !isfinite(x);
}

/* Fold one compared number into the totals and the quantity's slot;
 * `counted`: one of the expected numbers (a duplicate record's numbers
 * count in the errors only). */
static void note_number(pflref_golden_report *rep, pflref_quantity_stats *q,
                        double x, double r, int counted)
{
    pflref_quantity_stats all = {.max_abs_err = rep->max_abs_err,
                                 .max_rel_err = rep->max_rel_err,
                                 .min_lre = rep->min_lre,
                                 .max_ulp = rep->max_ulp,
                                 .sign_differs = rep->sign_differs,
                                 .not_finite = rep->not_finite,
                                 .max_orders = rep->max_orders};
    fold_error(&all, x, r);
    rep->max_abs_err = all.max_abs_err;
    rep->max_rel_err = all.max_rel_err;
    rep->min_lre = all.min_lre;
    rep->max_ulp = all.max_ulp;
    rep->sign_differs = all.sign_differs;
    rep->not_finite = all.not_finite;
    rep->max_orders = all.max_orders;
    rep->numbers += (size_t)counted;
    if (q == NULL)
        return;
    fold_error(q, x, r);
    q->numbers += (size_t)counted;
}

/* A quantity at a discontinuity of the Monte Carlo runs (ref/oracle/
 * precision.c, "Kinks and jumps"): counted, the first named with its
 * reason; not a mismatch. */
static void note_kink(pflref_golden_report *rep, const pflref_record *key,
                      size_t position, size_t index, double expected,
                      double got, const pflref_divergence *shape,
                      const char *reason)
{
    if (rep->mca_kinks++ > 0)
        return;
    const pflref_divergence d = divergence_at(key, position, index, expected,
                                              got, shape);
    rep->mca_first_kink = d;
    snprintf(rep->mca_kink_reason, sizeof rep->mca_kink_reason, "%s", reason);
}

/* The Monte Carlo bounds of one expected record (NULL members: none). */
typedef struct {
    const double *bound;   /* per entry, pflref_mca_bound               */
    const double *jump;    /* per entry, pflref_mca_jump                */
    int lost;              /* pflref_mca_lost                            */
} mca_entry;

/* Hold every record of act with the key of e (values ev) to the
 * expectation: the first and any duplicates, each entry folded into the
 * statistics and its digits into the point pt; at most one divergence
 * (the first entry out of tolerance).  An entry out of tolerance at a
 * discontinuity of the Monte Carlo runs (within its jump band), or a
 * record of another length that a perturbed run lacked too, is a kink
 * (note_kink) when nothing else in the record is out. */
static void compare_records(const pflref_record *key, size_t position,
                            const pflref_record *e, const double *ev,
                            const pflref_trajectory *act,
                            const pflref_record *a, pflref_tolerance tol,
                            mca_entry mc, pflref_quantity_stats *q,
                            pflref_digit_point *pt, pflref_golden_report *rep)
{
    const double *bound = mc.bound;
    int noted = 0;
    for (size_t nth = 1; a != NULL;
         nth++, a = find_from(act, key, (size_t)(a - act->records) + 1)) {
        if (a->len != e->len && mc.lost) {
            const pflref_divergence shape = {.missing = 1,
                                             .got_len = a->len,
                                             .expected_len = e->len,
                                             .record = nth};
            note_kink(rep, key, position, 0, ev[e->offset], NAN, &shape,
                      "record");
            continue;
        }
        if (a->len != e->len) {
            if (pt != NULL)
                pt->min_lre = 0.0;   /* no number to count digits of */
            if (!noted) {
                const pflref_divergence shape = {.missing = 1,
                                                 .got_len = a->len,
                                                 .expected_len = e->len,
                                                 .record = nth};
                note_divergence(rep, key, position, 0, ev[e->offset], NAN,
                                &shape);
                rep->missing += nth == 1;
                if (q != NULL)
                    q->mismatches++;
                noted = 1;
            }
            continue;
        }
        const double *x = act->values + a->offset, *r = ev + e->offset;
        size_t bad = e->len, kink = e->len;
        for (size_t j = 0; j < e->len; j++) {
            note_number(rep, q, x[j], r[j], nth == 1);
            const double digits = lre(x[j], r[j]);
            if (pt != NULL && digits < pt->min_lre)
                pt->min_lre = digits;
            /* the tolerance, or the entry's Monte Carlo bound when looser
             * (ref/oracle/precision.c) */
            double t = tol.atol + tol.rtol * fabs(r[j]);
            if (bound != NULL && bound[j] > t)
                t = bound[j];
            const double d = fabs(x[j] - r[j]);
            if (d <= t)
                continue;
            /* out of the bound, but on a branch the probes took */
            if (mc.jump != NULL && mc.jump[j] > 0.0 && d <= mc.jump[j]) {
                kink = kink < e->len ? kink : j;
                continue;
            }
            bad = bad < e->len ? bad : j;
        }
        if (bad == e->len && kink < e->len) {
            const pflref_divergence shape = {.record = nth};
            note_kink(rep, key, position, kink, r[kink], x[kink], &shape,
                      "jump");
        }
        if (bad < e->len && !noted) {
            const pflref_divergence shape = {.record = nth};
            note_divergence(rep, key, position, bad, r[bad], x[bad], &shape);
            if (q != NULL)
                q->mismatches++;
            noted = 1;
        }
    }
    if (pt != NULL)
        pt->mismatches += (size_t)noted;
}

/* rep->rounds_expected and rep->rounds_compared (pflref/golden.h): the
 * runs of consecutive keys with one phase and a round ≥ 0, and those
 * with a key act recorded. */
static void count_rounds(const pflref_trajectory *keys,
                         const pflref_trajectory *act, int partial,
                         pflref_golden_report *rep)
{
    const pflref_record *prev = NULL;
    int covered = 0;
    for (size_t k = 0; k < keys->count; k++) {
        const pflref_record *key = &keys->records[k];
        if (key->round < 0)
            continue;
        if (prev == NULL || prev->round != key->round ||
            strcmp(prev->phase, key->phase) != 0) {
            rep->rounds_expected++;
            covered = 0;
        }
        prev = key;
        if (!covered && (!partial || find(act, key) != NULL)) {
            covered = 1;
            rep->rounds_compared++;
        }
    }
}

/* For every record of `keys`: expected values from `ref` (the record with
 * the same key; `keys` itself when ref is NULL), actual values from `act`.
 * Every record act wrote under the key is held to the expectation (the
 * statistics count them all, so they never contradict a divergence). */
static void compare_tables(const pflref_trajectory *keys,
                           const pflref_trajectory *ref,
                           const pflref_trajectory *act,
                           const pflref_tolerances *tols,
                           const pflref_mca_bounds *mca, int partial,
                           pflref_golden_report *rep)
{
    rep->expected_records = keys->count;
    /* every name's slot first, in order of first appearance, so the
     * stretch of the digits' points is known before the first point */
    for (size_t k = 0; k < keys->count; k++)
        stats_for(rep, keys->records[k].name,
                  tolerance_for(tols, keys->records[k].name));
    rep->digits_stretch = digits_stretch(keys->count, rep->n_names);
    for (size_t k = 0; k < keys->count; k++) {
        const pflref_record *key = &keys->records[k];
        const pflref_record *e = ref == NULL ? key : find(ref, key);
        const double *ev = ref == NULL ? keys->values : ref->values;
        const pflref_record *a = find(act, key);
        const pflref_tolerance tol = tolerance_for(tols, key->name);
        pflref_quantity_stats *q = stats_for(rep, key->name, tol);
        if (a == NULL && partial) {
            rep->skipped++;
            if (q != NULL)
                q->skipped++;
            continue;
        }
        rep->quantities++;
        if (q != NULL)
            q->quantities++;
        pflref_digit_point *pt = point_for(rep, q, k, key->round);
        if (pt != NULL)
            pt->records++;
        if (e != NULL && a == NULL && mca != NULL &&
            pflref_mca_lost(mca, key, k)) {
            /* a perturbed run lacks it too: a discrete decision */
            const pflref_divergence shape = {.missing = 1,
                                             .expected_len = e->len,
                                             .record = 1};
            note_kink(rep, key, k, 0, ev[e->offset], NAN, &shape, "record");
            continue;
        }
        if (e == NULL || a == NULL) {
            const pflref_divergence shape = {.missing = 1,
                                             .expected_len = e ? e->len : 0,
                                             .record = 1};
            rep->missing++;
            if (q != NULL)
                q->mismatches++;
            if (pt != NULL) {
                pt->min_lre = 0.0;   /* not produced: no correct digit */
                pt->mismatches++;
            }
            note_divergence(rep, key, k, 0, e ? ev[e->offset] : NAN, NAN,
                            &shape);
            continue;
        }
        const mca_entry mc = {
            mca != NULL ? pflref_mca_bound(mca, key, k) : NULL,
            mca != NULL ? pflref_mca_jump(mca, key, k) : NULL,
            mca != NULL && pflref_mca_lost(mca, key, k)};
        compare_records(key, k, e, ev, act, a, tol, mc, q, pt, rep);
    }
    count_rounds(keys, act, partial, rep);
}

/* ---- verify and check --------------------------------------------------- */

/* An empty report for the vector v: its id (when read), nothing compared,
 * every digit still correct. */
static void report_init(pflref_golden_report *rep, const pflref_vector *v)
{
    *rep = (pflref_golden_report){.min_lre = PFLREF_LRE_CAP};
    snprintf(rep->id, sizeof rep->id, "%s", v->id);
}

/* Run the vector's spec through the reference, recording every event. */
static pflref_status run_reference(const pflref_vector *v,
                                   pflref_trajectory *tj, pflref_error *err)
{
    pflref_trace rec = {pflref_trajectory_emit, tj};
    pflref_run_result *res = NULL;
    pflref_status st = pflref_spec_run(v->spec, &rec, &res, err);
    pflref_run_result_free(res);
    if (st == PFLREF_OK && tj->failed)
        st = pflref_error_set(err, PFLREF_ENOMEM, "expected",
                              "out of memory recording the trajectory");
    return st;
}

pflref_status pflref_golden_verify(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err)
{
    pflref_vector v;
    pflref_trajectory ref;
    pflref_trajectory_init(&ref, PFLREF_RECORD_STEP);
    pflref_status st = pflref_vector_read(text, len, base_dir, &v, err);
    report_init(rep, &v);
    if (st == PFLREF_OK)
        st = run_reference(&v, &ref, err);
    if (st == PFLREF_OK)
        compare_tables(&v.expected, NULL, &ref, &v.tol, NULL, 0, rep);
    pflref_trajectory_free(&ref);
    pflref_vector_free(&v);
    return st;
}

/* The candidate's state after round t, for re-synchronised checking
 * (pflref_state_loader: the record of that round for the server's, else
 * the latest up to round t, by round, then step, then file order). */
static int load_from_candidate(void *ctx, pflref_event_kind kind,
                               const char *what, long round, long client,
                               double *dst, size_t n)
{
    const pflref_trajectory *cand = ctx;
    const pflref_record *best = NULL;
    for (size_t r = 0; r < cand->count; r++) {
        const pflref_record *rec = &cand->records[r];
        if (rec->kind != kind || strcmp(rec->name, what) != 0 ||
            rec->round > round || rec->round < 0 || rec->len != n ||
            strcmp(rec->phase, "train") != 0 ||
            (client >= 0 && rec->client != client))
            continue;
        if (kind == PFLREF_EV_SERVER ? rec->round == round
                                     : best == NULL ||
                                           rec->round > best->round ||
                                           (rec->round == best->round &&
                                            rec->step >= best->step))
            best = rec;
    }
    if (best == NULL)
        return 0;
    memcpy(dst, cand->values + best->offset, n * sizeof *dst);
    return 1;
}


/* Prefix err->where with "expected:" or "candidate:" (the side at fault). */
static void name_side(pflref_error *err, const char *side)
{
    if (err == NULL)
        return;
    char path[PFLREF_WHERE_MAX];
    snprintf(path, sizeof path, "%s:%s", side, err->where);
    snprintf(err->where, sizeof err->where, "%s", path);
}

/* The reference's run as the check makes it: the vector's spec, or under
 * resync re-run from the candidate's states (a pflref_mca_runner). */
typedef struct {
    const pflref_vector *v;
    const pflref_candidate *c;
    int resync;
} check_run;

static pflref_status run_as_checked(void *ctx, pflref_trajectory *tj,
                                    pflref_error *err)
{
    const check_run *cr = ctx;
    const pflref_spec *sp = cr->v->spec;
    if (!cr->resync)
        return run_reference(cr->v, tj, err);
    pflref_trace rec = {pflref_trajectory_emit, tj};
    return pflref_run_resync(sp->problem, sp->algorithm, &sp->hyper,
                             sp->schedule, sp->w0, load_from_candidate,
                             (void *)&cr->c->records, &rec, err);
}

/* The fixed floor of a precision: fp64's, or for diagnose (which has no
 * Monte Carlo runs) fp32's, and bfloat16's looser one. */
static pflref_tolerance precision_floor(pflref_precision p)
{
    switch (p) {
    case PFLREF_PRECISION_FP64:
        return (pflref_tolerance){1e-13, 1e-11};
    case PFLREF_PRECISION_BF16:
        return (pflref_tolerance){1e-2, 3e-2};
    default:
        return (pflref_tolerance){1e-5, 1e-4};
    }
}

/* The candidate against the vector (expected values from the vector, or
 * with resync from the reference re-run from the candidate's states). */
static pflref_status check_candidate(const pflref_vector *v,
                                     const pflref_candidate *c,
                                     const pflref_check_options *opt,
                                     pflref_golden_report *rep,
                                     pflref_error *err)
{
    if (opt->resync &&
        pflref_resync_refusal(v->spec->algorithm, &v->spec->hyper, err) !=
            PFLREF_OK) {
        rep->resync_refused = 1;   /* nothing compared (cli/check.c skips) */
        return PFLREF_EINVAL;
    }
    /* The candidate is held to the vector's tolerance or fp64's floor,
     * whichever is looser; a float32, bfloat16 or TF32 candidate to that
     * or each entry's Monte Carlo bound (docs/validate.md). */
    pflref_tolerances tol = v->tol;
    tolerances_floor(&tol, precision_floor(PFLREF_PRECISION_FP64));
    check_run cr = {v, c, opt->resync};
    pflref_trajectory ref;
    pflref_trajectory_init(&ref, PFLREF_RECORD_STEP);
    pflref_mca_bounds mca = {.bound = NULL};
    const int mc = opt->precision != PFLREF_PRECISION_FP64;
    pflref_status st = PFLREF_OK;
    if (mc)
        st = pflref_mca_measure(&v->expected, opt, run_as_checked, &cr, &mca,
                                rep, err);
    else if (opt->resync)
        st = run_as_checked(&cr, &ref, err);
    /* under resync the expectation is the unperturbed re-run */
    const pflref_trajectory *expect = !opt->resync ? NULL
                                      : mc         ? &mca.base
                                                   : &ref;
    if (st == PFLREF_OK)
        compare_tables(&v->expected, expect, &c->records, &tol,
                       mc ? &mca : NULL, opt->partial, rep);
    if (st == PFLREF_OK && rep->quantities == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "candidate",
                              "the candidate recorded none of the %zu "
                              "quantities the vector expects", rep->skipped);
    if (mc)
        pflref_mca_bounds_free(&mca);
    pflref_trajectory_free(&ref);
    return st;
}

pflref_status pflref_oracle_check_parsed(const pflref_vector *v,
                                        const pflref_candidate *c,
                                        const pflref_check_options *opt,
                                        pflref_golden_report *rep,
                                        pflref_error *err)
{
    report_init(rep, v);
    return check_candidate(v, c, opt, rep, err);
}

pflref_status pflref_golden_check(const char *expected, size_t expected_len,
                                  const char *base_dir, const char *candidate,
                                  size_t candidate_len,
                                  const pflref_check_options *opt,
                                  pflref_golden_report *rep,
                                  pflref_error *err)
{
    return pflref_golden_check_at(expected, expected_len, base_dir, candidate,
                                  candidate_len, NULL, opt, rep, err);
}

pflref_status pflref_golden_check_at(const char *expected,
                                     size_t expected_len,
                                     const char *base_dir,
                                     const char *candidate,
                                     size_t candidate_len,
                                     const char *candidate_dir,
                                     const pflref_check_options *opt,
                                     pflref_golden_report *rep,
                                     pflref_error *err)
{
    pflref_vector v;
    pflref_candidate c;
    pflref_status st = pflref_vector_read(expected, expected_len, base_dir, &v,
                                          err);
    report_init(rep, &v);
    if (st != PFLREF_OK) {
        name_side(err, "expected");
        pflref_vector_free(&v);
        return st;
    }
    st = pflref_candidate_read(candidate, candidate_len,
                               opt->same_id ? v.id : NULL, candidate_dir,
                               v.spec, &c, err);
    if (st != PFLREF_OK)
        name_side(err, "candidate");
    else if (strcmp(c.outcome, "ok") != 0) {
        /* a declared outcome other than "ok": nothing to compare */
        rep->wrong_outcome = 1;
        snprintf(rep->outcome, sizeof rep->outcome, "%s", c.outcome);
    } else
        st = check_candidate(&v, &c, opt, rep, err);
    pflref_candidate_free(&c);
    pflref_vector_free(&v);
    return st;
}

/* The candidate's records against a run of the reference taken as the
 * expectation, on the vector's keys (ref/oracle/diagnose.h): what check
 * does with resync, for a run the caller made (a variant's, for diagnose).
 * A key neither the run nor the candidate recorded is left out: the
 * variant does not write it, and neither does the candidate. */
void pflref_oracle_compare_run(const pflref_vector *v,
                               const pflref_trajectory *run,
                               const pflref_trajectory *cand,
                               const pflref_check_options *opt,
                               pflref_golden_report *rep)
{
    pflref_tolerances tol = v->tol;
    tolerances_floor(&tol, precision_floor(opt->precision));
    report_init(rep, v);
    pflref_trajectory keys = v->expected;
    keys.records = malloc((v->expected.count + 1) * sizeof *keys.records);
    if (keys.records == NULL) {   /* every key, then */
        compare_tables(&v->expected, run, cand, &tol, NULL, opt->partial, rep);
        return;
    }
    keys.count = 0;
    for (size_t k = 0; k < v->expected.count; k++) {
        const pflref_record *key = &v->expected.records[k];
        if (find(run, key) != NULL || find(cand, key) != NULL)
            keys.records[keys.count++] = *key;
    }
    compare_tables(&keys, run, cand, &tol, NULL, opt->partial, rep);
    free(keys.records);
}

/* One run of spec (ctx), a pflref_mca_runner: pflref_oracle_check_spec. */
static pflref_status run_spec(void *ctx, pflref_trajectory *tj,
                              pflref_error *err)
{
    pflref_trace rec = {pflref_trajectory_emit, tj};
    pflref_run_result *res = NULL;
    pflref_status st = pflref_spec_run(ctx, &rec, &res, err);
    pflref_run_result_free(res);
    if (st == PFLREF_OK && tj->failed)
        st = pflref_error_set(err, PFLREF_ENOMEM, "expected",
                              "out of memory recording the trajectory");
    return st;
}

/* The candidate against another spec's run under opt->precision's Monte
 * Carlo tolerance (ref/oracle/diagnose.h): the check of check_candidate
 * with the unperturbed run of spec as the expectation (as under resync),
 * on the keys of v's expectation that the run or the candidate wrote (as
 * pflref_oracle_compare_run). */
pflref_status pflref_oracle_check_spec(const pflref_vector *v,
                                       const pflref_spec *spec,
                                       const pflref_candidate *c,
                                       const pflref_check_options *opt,
                                       pflref_golden_report *rep,
                                       pflref_error *err)
{
    report_init(rep, v);
    if (opt->precision == PFLREF_PRECISION_FP64)
        return pflref_error_set(err, PFLREF_EINVAL, "precision",
                                "a Monte Carlo check needs a precision "
                                "other than fp64");
    pflref_tolerances tol = v->tol;
    tolerances_floor(&tol, precision_floor(PFLREF_PRECISION_FP64));
    pflref_mca_bounds mca = {.bound = NULL};
    pflref_status st = pflref_mca_measure(&v->expected, opt, run_spec,
                                          (void *)spec, &mca, rep, err);
    pflref_trajectory keys = v->expected;
    keys.records = st == PFLREF_OK ? malloc((v->expected.count + 1) *
                                            sizeof *keys.records) : NULL;
    if (keys.records == NULL) {   /* the bounds are freed on an error */
        if (st == PFLREF_OK)
            pflref_mca_bounds_free(&mca);
        return st != PFLREF_OK ? st : pflref_error_set(err, PFLREF_ENOMEM,
                                          "diagnose", "out of memory");
    }
    keys.count = 0;
    for (size_t k = 0; k < v->expected.count; k++) {
        const pflref_record *key = &v->expected.records[k];
        if (find(&mca.base, key) != NULL || find(&c->records, key) != NULL)
            keys.records[keys.count++] = *key;
    }
    compare_tables(&keys, &mca.base, &c->records, &tol, &mca, opt->partial,
                   rep);
    free(keys.records);
    pflref_mca_bounds_free(&mca);
    return rep->quantities > 0 ? PFLREF_OK
                               : pflref_error_set(err, PFLREF_EINVAL,
                                                  "candidate", "nothing "
                                                  "compared");
}
