/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/report_json.c: a comparison's report as JSON text, and
 * `verify` and `check` returning it (pflref/golden.h; docs/python.md).
 *
 * A binding in another language (the Python package, through ctypes) reads
 * the report as JSON instead of mirroring the pflref_golden_report struct,
 * whose layout is C's business.  The document, format pflref-report/1:
 *
 *   id, passed            the vector; no quantity out of tolerance or
 *                         missing and no wrong outcome class
 *   quantities, numbers, mismatches, missing, skipped, expected_records
 *   rounds_expected, rounds_compared   the rounds of the expected
 *                         trajectory, and those with a record compared
 *   max_abs_err, max_rel_err, min_lre, max_ulp, sign_differs, not_finite,
 *   max_orders_off        the statistics over every number compared
 *   digits_stretch        expected records per point of the digits
 *                         along the trajectory (1: a point per record)
 *   by_quantity           the same per quantity name, in order of first
 *                         appearance, with its tolerance {atol, rtol} and
 *                         trajectory_digits {position, round, min_lre,
 *                         mismatches}: parallel arrays, a point per
 *                         stretch of the trajectory holding records of
 *                         the name (pflref_digit_point; round null where
 *                         a record has none)
 *   first_divergence      null, or {event, phase, round, client, step,
 *                         name, record, position, missing, and index,
 *                         expected, got or got_length, expected_length}
 *   divergences           every divergent quantity listed (at most
 *                         PFLREF_MAX_LISTED), the first one first
 *   wrong_outcome, outcome
 *   mca                   (precision fp32, bf16, tf32 only) {runs, c, u,
 *                         seeds, amplification, chaotic, first_chaotic}:
 *                         the Monte Carlo tolerance (docs/formats.md);
 *                         "passed" is false while chaotic > 0
 *
 * round, client and step are left out where they do not apply (−1), as in
 * a trajectory record.  max_ulp is null where the numbers are too far
 * apart for it to mean anything (a sign differs, one is not finite, or
 * they are orders of magnitude apart), as in `pflref check --json`.  A
 * non-finite statistic is null (JSON has no NaN or Inf).
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "pflref.h"
#include "oracle/json_tree.h"


static json_t *divergence_json(tree *t, const pflref_divergence *d)
{
    json_t *o = json_object();
    put(t, o, "event", json_string(d->event));
    put(t, o, "phase", json_string(d->phase));
    if (d->round >= 0)
        put(t, o, "round", json_integer(d->round));
    if (d->client >= 0)
        put(t, o, "client", json_integer(d->client));
    if (d->step >= 0)
        put(t, o, "step", json_integer(d->step));
    put(t, o, "name", json_string(d->name));
    put(t, o, "record", count(d->record));
    put(t, o, "position", count(d->position));
    put(t, o, "missing", json_boolean(d->missing));
    if (d->missing) {
        put(t, o, "got_length", count(d->got_len));
        put(t, o, "expected_length", count(d->expected_len));
    } else {
        put(t, o, "index", count(d->index));
        put(t, o, "expected", real_or_null(d->expected));
        put(t, o, "got", real_or_null(d->got));
    }
    return o;
}

/* The statistics of q as members of o. */
static void put_stats(tree *t, json_t *o, const pflref_quantity_stats *q)
{
    put(t, o, "quantities", count(q->quantities));
    put(t, o, "numbers", count(q->numbers));
    put(t, o, "mismatches", count(q->mismatches));
    put(t, o, "max_abs_err", real_or_null(q->max_abs_err));
    put(t, o, "max_rel_err", real_or_null(q->max_rel_err));
    put(t, o, "min_lre", real_or_null(q->min_lre));
    const int ulp_means = q->sign_differs == 0 && q->not_finite == 0 &&
                          q->max_orders == 0;
    put(t, o, "max_ulp", ulp_means ? count(q->max_ulp) : json_null());
    put(t, o, "sign_differs", count(q->sign_differs));
    put(t, o, "not_finite", count(q->not_finite));
    put(t, o, "max_orders_off", json_integer(q->max_orders));
    put(t, o, "skipped", count(q->skipped));
}

/* The digits of quantity slot `name` along the trajectory, as parallel
 * arrays in position order (round null where a record has none). */
static json_t *trajectory_digits(tree *t, const pflref_golden_report *rep,
                                 size_t name)
{
    json_t *pos = json_array(), *round = json_array(), *lre = json_array(),
           *bad = json_array();
    for (size_t i = 0; i < rep->n_points && i < PFLREF_MAX_DIGIT_POINTS; i++) {
        const pflref_digit_point *p = &rep->points[i];
        if (p->name != name)
            continue;
        if (json_array_append_new(pos, count(p->position)) ||
            json_array_append_new(round, p->round >= 0 ? json_integer(p->round)
                                                       : json_null()) ||
            json_array_append_new(lre, real_or_null(p->min_lre)) ||
            json_array_append_new(bad, count(p->mismatches)))
            t->failed = 1;
    }
    json_t *o = json_object();
    put(t, o, "position", pos);
    put(t, o, "round", round);
    put(t, o, "min_lre", lre);
    put(t, o, "mismatches", bad);
    return o;
}

/* The Monte Carlo runs behind a float32, bfloat16 or TF32 tolerance. */
static json_t *mca_json(tree *t, const pflref_golden_report *rep)
{
    json_t *o = json_object(), *seeds = json_array();
    put(t, o, "runs", count(rep->mca_runs));
    put(t, o, "c", real_or_null(rep->mca_c));
    put(t, o, "u", real_or_null(rep->mca_u));
    for (size_t k = 0; k < rep->mca_runs && k < PFLREF_MCA_MAX_RUNS; k++)
        if (json_array_append_new(seeds, u64_text(rep->mca_seeds[k])))
            t->failed = 1;
    put(t, o, "seeds", seeds);
    put(t, o, "amplification", real_or_null(rep->mca_amplification));
    put(t, o, "chaotic", count(rep->mca_chaotic));
    put(t, o, "first_chaotic", rep->mca_chaotic > 0
                                   ? divergence_json(t, &rep->mca_first_chaotic)
                                   : json_null());
    /* entries at a discontinuity of the runs (precision.c, "Kinks and
     * jumps"): no evidence either way */
    put(t, o, "probe_runs", count(PFLREF_MCA_PROBE_RUNS));
    put(t, o, "probe_scale", real_or_null(PFLREF_MCA_PROBE_SCALE));
    put(t, o, "kinks", count(rep->mca_kinks));
    put(t, o, "first_kink", rep->mca_kinks > 0
                                ? divergence_json(t, &rep->mca_first_kink)
                                : json_null());
    put(t, o, "kink_reason", rep->mca_kinks > 0
                                 ? json_string(rep->mca_kink_reason)
                                 : json_null());
    return o;
}

pflref_status pflref_golden_report_json(const pflref_golden_report *rep,
                                        char **out, pflref_error *err)
{
    if (out == NULL || rep == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, out == NULL ? "out" : "rep",
                                "the argument is NULL");
    tree t = {0};
    json_t *root = json_object();
    put(&t, root, "format", json_string("pflref-report/1"));
    put(&t, root, "id", json_string(rep->id));
    put(&t, root, "passed",
        json_boolean(rep->mismatches == 0 && !rep->wrong_outcome &&
                     rep->mca_chaotic == 0 && rep->mca_kinks == 0));
    const pflref_quantity_stats all = {
        .quantities = rep->quantities, .numbers = rep->numbers,
        .mismatches = rep->mismatches, .max_abs_err = rep->max_abs_err,
        .max_rel_err = rep->max_rel_err, .min_lre = rep->min_lre,
        .max_ulp = rep->max_ulp, .sign_differs = rep->sign_differs,
        .not_finite = rep->not_finite, .max_orders = rep->max_orders,
        .skipped = rep->skipped};
    put_stats(&t, root, &all);
    put(&t, root, "missing", count(rep->missing));
    put(&t, root, "expected_records", count(rep->expected_records));
    put(&t, root, "rounds_expected", count(rep->rounds_expected));
    put(&t, root, "rounds_compared", count(rep->rounds_compared));
    json_t *names = json_array();
    for (size_t k = 0; k < rep->n_names && k < PFLREF_MAX_QUANTITY_NAMES; k++) {
        json_t *q = json_object();
        put(&t, q, "name", json_string(rep->by_name[k].name));
        put_stats(&t, q, &rep->by_name[k]);
        put(&t, q, "atol", real_or_null(rep->by_name[k].atol));
        put(&t, q, "rtol", real_or_null(rep->by_name[k].rtol));
        put(&t, q, "trajectory_digits", trajectory_digits(&t, rep, k));
        if (json_array_append_new(names, q))
            t.failed = 1;
    }
    put(&t, root, "digits_stretch", count(rep->digits_stretch));
    put(&t, root, "by_quantity", names);
    put(&t, root, "first_divergence",
        rep->diverged ? divergence_json(&t, &rep->first) : json_null());
    json_t *list = json_array();
    for (size_t k = 0; rep->diverged && k < rep->n_listed && k < PFLREF_MAX_LISTED; k++)
        if (json_array_append_new(list, divergence_json(&t, &rep->listed[k])))
            t.failed = 1;
    put(&t, root, "divergences", list);
    put(&t, root, "wrong_outcome", json_boolean(rep->wrong_outcome));
    put(&t, root, "outcome", json_string(rep->wrong_outcome ? rep->outcome : "ok"));
    if (rep->mca)
        put(&t, root, "mca", mca_json(&t, rep));
    *out = t.failed ? NULL
                    : json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                           JSON_REAL_PRECISION(17));
    json_decref(root);
    if (*out == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory writing the report");
    return PFLREF_OK;
}

/* The report of a comparison that ran, as text; the comparison's own
 * status otherwise.  The report is on the heap: it is large (its listed
 * divergences) for a caller's stack in a binding. */
static pflref_status finish(pflref_status st, const pflref_golden_report *rep,
                            char **out, pflref_error *err)
{
    if (st != PFLREF_OK)
        return st;
    return pflref_golden_report_json(rep, out, err);
}

pflref_status pflref_golden_verify_json(const char *text, size_t len,
                                        const char *base_dir, char **out,
                                        pflref_error *err)
{
    pflref_error_clear(err);
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out", "out is NULL");
    *out = NULL;
    if (text == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "text", "text is NULL");
    pflref_golden_report *rep = malloc(sizeof *rep);
    if (rep == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    pflref_status st = pflref_golden_verify(text, len, base_dir, rep, err);
    st = finish(st, rep, out, err);
    free(rep);
    return st;
}

pflref_status pflref_golden_check_json(const char *expected,
                                       size_t expected_len,
                                       const char *base_dir,
                                       const char *candidate,
                                       size_t candidate_len,
                                       const pflref_check_options *opt,
                                       char **out, pflref_error *err)
{
    return pflref_golden_check_json_at(expected, expected_len, base_dir,
                                       candidate, candidate_len, NULL, opt,
                                       out, err);
}

pflref_status pflref_golden_check_json_at(const char *expected,
                                          size_t expected_len,
                                          const char *base_dir,
                                          const char *candidate,
                                          size_t candidate_len,
                                          const char *candidate_dir,
                                          const pflref_check_options *opt,
                                          char **out, pflref_error *err)
{
    pflref_error_clear(err);
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out", "out is NULL");
    *out = NULL;
    if (expected == NULL || candidate == NULL || opt == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                expected == NULL    ? "expected"
                                : candidate == NULL ? "candidate"
                                                    : "opt",
                                "the argument is NULL");
    pflref_golden_report *rep = malloc(sizeof *rep);
    if (rep == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    pflref_status st = pflref_golden_check_at(expected, expected_len,
                                              base_dir, candidate,
                                              candidate_len, candidate_dir,
                                              opt, rep, err);
    st = finish(st, rep, out, err);
    free(rep);
    return st;
}

void pflref_text_free(char *text)
{
    free(text);
}
