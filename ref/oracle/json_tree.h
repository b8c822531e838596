/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/json_tree.h (private): building a JSON tree whose failed
 * allocations are noted once and checked at the end, for the oracle's
 * JSON documents (report_json.c: pflref-report/1; diagnose_json.c:
 * pflref-diagnosis/1). */
#ifndef PFLREF_ORACLE_JSON_TREE_H
#define PFLREF_ORACLE_JSON_TREE_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* A tree under construction: a failed allocation sets `failed`. */
typedef struct {
    int failed;
} tree;

/* o[key] := value (stolen); a NULL o or value, or a failed set, fails t. */
static inline void put(tree *t, json_t *o, const char *key, json_t *value)
{
    if (o == NULL || value == NULL || json_object_set_new(o, key, value))
        t->failed = 1;
}

/* A finite double, else null (JSON has no NaN or infinity). */
static inline json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A 64-bit value as its exact decimal text: a JSON integer holds only up
 * to 2^63 − 1 here (jansson's json_int_t), and many readers only to 2^53. */
static inline json_t *u64_text(uint64_t n)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
    return json_string(buf);
}

/* A count, saturated at the largest JSON integer. */
static inline json_t *count(uint64_t n)
{
    return json_integer(n > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)n);
}

#endif
