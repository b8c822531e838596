/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_common.h: pieces shared by the libFuzzer harnesses.
 *
 * FUZZ_REQUIRE aborts, so that libFuzzer reports a violated invariant as a
 * crash with the input that caused it (a status outside the documented set,
 * a non-finite number in a successful result, an inconsistent report).
 * work_of bounds the cost of a parsed spec, so that the harnesses explore
 * the readers and the algorithms' branches rather than long runs.
 */
#ifndef PFLREF_FUZZ_COMMON_H
#define PFLREF_FUZZ_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "pflref.h"
#include "io/canonical.h"

#define FUZZ_REQUIRE(cond, what)                                              \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "fuzz invariant violated: %s (%s:%d: %s)\n",      \
                    (what), __FILE__, __LINE__, #cond);                       \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* A golden vector's text with its "hash" recomputed (golden/README.md,
 * "Content hash"), malloc'd; NULL when text is not a JSON object of format
 * pflref-golden/1 holding every hashed part.  A mutated vector almost never
 * matches its hash, so the harnesses read each such input a second time
 * with the hash made right, to reach the checks behind the hash. */
static inline char *fuzz_rehashed(const char *text, size_t len)
{
    static const char *const parts[] = {"spec", "expected", "tolerance",
                                        "flags", "provenance", NULL};
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    const char *fmt = json_string_value(json_object_get(root, "format"));
    char *out = NULL, h[PFLREF_HASH_MAX];
    if (fmt == NULL || strcmp(fmt, PFLREF_GOLDEN_FORMAT) != 0) {
        json_decref(root);
        return NULL;
    }
    json_object_del(root, "hash");
    json_t *hash = json_object();
    int ok = hash != NULL && pflref_content_hash(root, h) &&
             json_object_set_new(hash, "vector", json_string(h)) == 0;
    for (size_t i = 0; ok && parts[i] != NULL; i++)
        ok = json_object_get(root, parts[i]) != NULL &&
             pflref_content_hash(json_object_get(root, parts[i]), h) &&
             json_object_set_new(hash, parts[i], json_string(h)) == 0;
    if (ok && json_object_set_new(root, "hash", hash) == 0)
        out = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    else
        json_decref(hash);
    json_decref(root);
    return out;
}

/* The memory a harness lets pflref use (PFLREF_MEMORY_LIMIT, unless the
 * environment already pins it): a small spec can ask for gigabytes that a
 * 24 GiB machine would grant (generated data of a million clients, a
 * hidden layer of 10⁸ units), which is a legal request but would exceed
 * libFuzzer's -rss_limit_mb and read as a defect.  Under the pinned limit
 * pflref refuses such a spec with PFLREF_ENOMEM before it allocates, the
 * path the harnesses should explore (docs/performance.md, "Limits by
 * memory"). */
#define FUZZ_MEMORY_LIMIT "4194304"

/* libFuzzer calls this once before the first input; every harness
 * includes this header once. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return setenv("PFLREF_MEMORY_LIMIT", FUZZ_MEMORY_LIMIT, 0);
}

/* Runs larger than this many parameter-steps are parsed but not executed. */
#define FUZZ_MAX_WORK 200000.0

/* Parameter-steps of a parsed spec's run: Σ over the schedule's local and
 * post steps of P (an estimate of the run's cost, ignoring evaluation). */
static inline double fuzz_work_of(const pflref_spec *spec)
{
    double steps = 0.0;
    const pflref_schedule *s = spec->schedule;
    for (size_t t = 0; t < s->T; t++)
        for (size_t j = 0; j < s->rounds[t].m; j++)
            steps += (double)s->rounds[t].batches[j].step_off
                         [s->rounds[t].batches[j].nsteps];
    for (size_t i = 0; s->post != NULL && i < s->N; i++)
        steps += (double)s->post[i].step_off[s->post[i].nsteps];
    return (steps + (double)s->T) * (double)spec->problem->model.P;
}

/* 1 when st is one of the statuses the library documents. */
static inline int fuzz_status_known(pflref_status st)
{
    return st == PFLREF_OK || st == PFLREF_EINVAL || st == PFLREF_ENOMEM ||
           st == PFLREF_EIO || st == PFLREF_EDIVERGE ||
           st == PFLREF_EINTERNAL;
}

/* An error record that says what and where: a failure other than OK has a
 * message and a status equal to the returned one. */
static inline void fuzz_check_error(pflref_status st, const pflref_error *err)
{
    FUZZ_REQUIRE(fuzz_status_known(st), "status outside pflref_status");
    FUZZ_REQUIRE(st != PFLREF_EINTERNAL, "internal error (a pflref bug)");
    if (st == PFLREF_OK)
        return;
    FUZZ_REQUIRE(err->status == st, "err.status differs from the return");
    FUZZ_REQUIRE(err->message[0] != '\0', "an error without a message");
    FUZZ_REQUIRE(memchr(err->where, '\0', sizeof err->where) != NULL &&
                     memchr(err->message, '\0', sizeof err->message) != NULL,
                 "unterminated error strings");
}

/* The documented consistency of a comparison report (pflref/golden.h). */
static inline void fuzz_check_report(const pflref_golden_report *rep)
{
    FUZZ_REQUIRE(memchr(rep->id, '\0', sizeof rep->id) != NULL,
                 "unterminated report id");
    if (rep->wrong_outcome) {
        FUZZ_REQUIRE(rep->quantities == 0 && rep->numbers == 0,
                     "a wrong outcome compared numbers");
        return;
    }
    FUZZ_REQUIRE(rep->missing <= rep->mismatches, "missing > mismatches");
    FUZZ_REQUIRE(rep->mismatches <= rep->quantities,
                 "mismatches > quantities");
    FUZZ_REQUIRE(rep->diverged == (rep->mismatches > 0),
                 "diverged disagrees with mismatches");
    FUZZ_REQUIRE(rep->n_listed ==
                     (rep->mismatches < PFLREF_MAX_LISTED ? rep->mismatches
                                                          : PFLREF_MAX_LISTED),
                 "listed divergences disagree with mismatches");
    FUZZ_REQUIRE(rep->n_names <= PFLREF_MAX_QUANTITY_NAMES, "n_names");
    FUZZ_REQUIRE(rep->min_lre >= 0.0 && rep->min_lre <= PFLREF_LRE_CAP,
                 "min_lre outside [0, 15.95]");
    FUZZ_REQUIRE(!(rep->max_abs_err < 0.0) && !(rep->max_rel_err < 0.0),
                 "negative error");
    size_t q = 0, mm = 0;
    for (size_t i = 0; i < rep->n_names; i++) {
        q += rep->by_name[i].quantities;
        mm += rep->by_name[i].mismatches;
        FUZZ_REQUIRE(rep->by_name[i].mismatches <= rep->by_name[i].quantities,
                     "per-name mismatches > quantities");
    }
    FUZZ_REQUIRE(q <= rep->quantities && mm <= rep->mismatches,
                 "per-name totals exceed the totals");
    if (rep->n_names < PFLREF_MAX_QUANTITY_NAMES)
        FUZZ_REQUIRE(q == rep->quantities && mm == rep->mismatches,
                     "per-name totals differ from the totals");
}

#endif
