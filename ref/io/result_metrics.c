/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result_metrics.c: the "metrics" of a result (format
 * pflref-result/1, docs/formats.md), written by the result's writer
 * (ref/io/result.c) and read back for `pflref table`.
 *
 * Per model the run reports, "per_client" holds each metric's N values
 * and "summary" its client-aware summary; both are the run's own numbers
 * (pflref_run's evaluation), printed here, never computed.  The writer and
 * the reader share the one table of a summary's fields.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "io/emit.h"
#include "io/json.h"
#include "io/result.h"

/* "k": (a member's value follows) */
#define KEY(e, k) pflref_emit_key((e), (k))

/* The fields of a summary in a result, in the order written; the writer
 * and pflref_result_read_metric share it. */
static const struct {
    const char *name;
    size_t offset;          /* of the double in pflref_summary */
} SUMMARY_FIELDS[] = {
    {"mean", offsetof(pflref_summary, mean)},
    {"sd", offsetof(pflref_summary, sd)},
    {"worst", offsetof(pflref_summary, worst)},
    {"best", offsetof(pflref_summary, best)},
    {"p10", offsetof(pflref_summary, p10)},
    {"p90", offsetof(pflref_summary, p90)},
    {"worst_decile_mean", offsetof(pflref_summary, worst_decile_mean)},
    {"weighted_mean", offsetof(pflref_summary, weighted_mean)},
};
#define N_SUMMARY_FIELDS (sizeof SUMMARY_FIELDS / sizeof SUMMARY_FIELDS[0])

/* A summary's fields as an object, in the order of SUMMARY_FIELDS. */
static void emit_summary(pflref_emit *e, const pflref_summary *s)
{
    pflref_emit_object_begin(e);
    for (size_t k = 0; k < N_SUMMARY_FIELDS; k++) {
        KEY(e, SUMMARY_FIELDS[k].name);
        pflref_emit_real(e, *(const double *)(const void *)(
                                (const char *)s + SUMMARY_FIELDS[k].offset));
    }
    pflref_emit_object_end(e);
}

/* Field `off` (a double of pflref_eval) of ev[0..N−1]. */
static void emit_eval_column(pflref_emit *e, const pflref_eval *ev, size_t N,
                             size_t off)
{
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < N; i++)
        pflref_emit_real(e, *(const double *)(const void *)(
                                (const char *)&ev[i] + off));
    pflref_emit_array_end(e);
}

/* The metrics of one data set that this model has (every model its loss;
 * regression its mse, classifiers their accuracy), train = 1 the training
 * set's (train_loss, train_mse, train_accuracy), 0 the test set's:
 * "per_client" (per = 1) or "summary" (per = 0) members. */
static void emit_set_metrics(pflref_emit *e, const pflref_eval_result *er,
                             size_t N, const pflref_model *m, int train,
                             int per)
{
    static const struct {
        const char *name;
        int train;              /* 1 the training set, 0 the test set       */
        size_t eval_off, summary_off;
        int kind;               /* 0 every model, 1 regression, 2 classifier */
    } METRICS[] = {
        {"train_loss", 1, offsetof(pflref_eval, loss),
         offsetof(pflref_eval_result, train_loss), 0},
        {"train_mse", 1, offsetof(pflref_eval, mse),
         offsetof(pflref_eval_result, train_mse), 1},
        {"train_accuracy", 1, offsetof(pflref_eval, accuracy),
         offsetof(pflref_eval_result, train_accuracy), 2},
        {"test_loss", 0, offsetof(pflref_eval, loss),
         offsetof(pflref_eval_result, test_loss), 0},
        {"test_mse", 0, offsetof(pflref_eval, mse),
         offsetof(pflref_eval_result, test_mse), 1},
        {"test_accuracy", 0, offsetof(pflref_eval, accuracy),
         offsetof(pflref_eval_result, test_accuracy), 2},
    };
    for (size_t k = 0; k < sizeof METRICS / sizeof METRICS[0]; k++) {
        if (METRICS[k].train != train ||
            (METRICS[k].kind == 1 && !pflref_model_is_regression(m)) ||
            (METRICS[k].kind == 2 && !pflref_model_is_classifier(m)))
            continue;
        KEY(e, METRICS[k].name);
        if (per)
            emit_eval_column(e, train ? er->train : er->test, N,
                             METRICS[k].eval_off);
        else
            emit_summary(e, (const pflref_summary *)(const void *)(
                                (const char *)er + METRICS[k].summary_off));
    }
}

void pflref_result_emit_metrics(pflref_emit *e, const pflref_run_result *r,
                                const pflref_model *m)
{
    pflref_emit_object_begin(e);
    for (size_t k = 0; k < r->n_eval; k++) {
        const pflref_eval_result *er = &r->eval[k];
        KEY(e, er->label);
        pflref_emit_object_begin(e);
        for (int per = 1; per >= 0; per--) {
            KEY(e, per ? "per_client" : "summary");
            pflref_emit_object_begin(e);
            emit_set_metrics(e, er, r->N, m, 1, per);
            if (er->test != NULL)
                emit_set_metrics(e, er, r->N, m, 0, per);
            pflref_emit_object_end(e);
        }
        pflref_emit_object_end(e);
    }
    pflref_emit_object_end(e);
}

/* ---- reading a metric back (for `pflref table`) ------------------------- */

/* metrics.LABEL's per-client METRIC and its summary, from a result's text. */
pflref_status pflref_result_read_metric(const char *text, size_t len,
                                        const char *label, const char *metric,
                                        double **values, size_t *N,
                                        pflref_summary *summary,
                                        pflref_error *err)
{
    *values = NULL;
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "metrics.%s", label);
    json_t *fmt = json_object_get(root, "format");
    json_t *m = json_object_get(json_object_get(root, "metrics"), label);
    json_t *per = json_object_get(json_object_get(m, "per_client"), metric);
    json_t *sum = json_object_get(json_object_get(m, "summary"), metric);
    size_t n = 0;
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), PFLREF_RESULT_FORMAT) != 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "format",
                              "not a %s document", PFLREF_RESULT_FORMAT);
    else if (m == NULL)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "the result has no model labelled \"%s\"",
                              label);
    else if (per == NULL || sum == NULL)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "the result has no metric \"%s\" for \"%s\"",
                              metric, label);
    else
        st = pflref_json_array(per, where, 1, &n, err);
    double *v = NULL;
    if (st == PFLREF_OK) {
        v = malloc(n * sizeof *v);
        if (v == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    }
    if (st == PFLREF_OK)
        st = pflref_json_vector(per, where, n, v, err);
    for (size_t k = 0; st == PFLREF_OK && k < N_SUMMARY_FIELDS; k++) {
        const char *name = SUMMARY_FIELDS[k].name;
        json_t *x = json_object_get(sum, name);
        st = x == NULL ? pflref_error_set(err, PFLREF_EINVAL, where,
                                          "summary has no %s", name)
                       : pflref_json_real(
                             x, where,
                             (double *)(void *)((char *)summary +
                                                SUMMARY_FIELDS[k].offset),
                             err);
    }
    json_decref(root);
    if (st != PFLREF_OK) {
        free(v);
        return st;
    }
    summary->N = n;
    *values = v;
    *N = n;
    return PFLREF_OK;
}
