/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_result.c: libFuzzer harness for the result readers.
 *
 * A result (pflref-result/1) is read back by `pflref table`
 * (pflref_result_read_metric), and its "id" and outcome are read by
 * `pflref check` when it is a candidate (cli/check.c reads the id with
 * jansson; the candidate itself is fuzzed by fuzz_check.c).  The bytes are
 * read as a result for a standard model label and for the first label the
 * document names under "metrics", each with one of the four metrics (the
 * input's length picks them); pflref_golden_is_vector classifies the bytes
 * as `verify` and `check` do.  Invariants: a documented status with a
 * message; on success N values, all finite (JSON has no NaN or Inf), a
 * summary of N clients, and the same answer twice (the reader keeps no
 * state).  Seeds: fuzz/corpus/fuzz_result (the results
 * `pflref run` writes for the golden vectors).
 * Build and run: `make fuzz` / `make fuzz-smoke`. */
#include <stdint.h>
#include <jansson.h>
#include "fuzz_common.h"

static const char *const METRICS[] = {"train_loss", "train_mse",
                                      "train_accuracy", "test_loss",
                                      "test_mse", "test_accuracy"};

/* One reading of `metric` for `label`; `again` reads it a second time. */
static void read_one(const char *text, size_t len, const char *label,
                     const char *metric, int again)
{
    pflref_error err;
    pflref_error_clear(&err);
    double *v = NULL;
    size_t n = 0;
    pflref_summary sum;
    pflref_status st = pflref_result_read_metric(text, len, label, metric, &v,
                                                 &n, &sum, &err);
    fuzz_check_error(st, &err);
    FUZZ_REQUIRE(st == PFLREF_OK || st == PFLREF_EINVAL || st == PFLREF_ENOMEM,
                 "reading a metric: unexpected status");
    if (st != PFLREF_OK) {
        FUZZ_REQUIRE(v == NULL, "values left allocated on failure");
        return;
    }
    FUZZ_REQUIRE(v != NULL && n >= 1 && sum.N == n, "a metric of no clients");
    for (size_t i = 0; i < n; i++)
        FUZZ_REQUIRE(isfinite(v[i]), "a non-finite per-client value");
    FUZZ_REQUIRE(isfinite(sum.mean) && isfinite(sum.worst),
                 "a non-finite summary");
    if (again) {   /* the reader keeps no state: the same answer */
        double *v2 = NULL;
        size_t n2 = 0;
        pflref_summary sum2;
        FUZZ_REQUIRE(pflref_result_read_metric(text, len, label, metric, &v2,
                                               &n2, &sum2, NULL) ==
                             PFLREF_OK &&
                         n2 == n && memcmp(v, v2, n * sizeof *v) == 0 &&
                         memcmp(&sum, &sum2, sizeof sum) == 0,
                     "reading the same result twice differs");
        free(v2);
    }
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    (void)pflref_golden_is_vector(text, size);
    json_t *root = json_loadb(text, size, 0, NULL);
    if (root == NULL) {   /* not JSON: one reading covers the error path */
        pflref_error err;
        double *v = NULL;
        size_t n;
        pflref_summary sum;
        pflref_status st = pflref_result_read_metric(text, size, "global",
                                                     "train_loss", &v, &n,
                                                     &sum, &err);
        fuzz_check_error(st, &err);
        FUZZ_REQUIRE(st == PFLREF_EINVAL && v == NULL,
                     "text that is not JSON was read");
        return 0;
    }
    /* A standard label, and the first label the document itself uses (any
     * string, including ones that overflow the error path), each with a
     * metric; the input's length picks which, so that every pair is
     * reached without reading each input sixteen times. */
    static const char *const LABELS[] = {"global", "local", "personalized"};
    const size_t nm = sizeof METRICS / sizeof METRICS[0];
    read_one(text, size, LABELS[size % 3], METRICS[size / 3 % nm],
             size % 8 == 0);
    const char *label;
    json_t *m;
    json_object_foreach(json_object_get(root, "metrics"), label, m) {
        read_one(text, size, label, METRICS[size / 12 % nm], 0);
        break;
    }
    json_decref(root);
    return 0;
}
