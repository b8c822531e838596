/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/json.h: strict JSON reading helpers with JSON paths (internal).
 *
 * Every helper takes the JSON path of the value it reads (`where`, e.g.
 * "clients[3].X") and names it in the error it returns.  Numbers: jansson
 * integers and reals are both accepted where a real is expected; sizes and
 * seeds must be integer literals. */
#ifndef PFLREF_IO_JSON_H
#define PFLREF_IO_JSON_H

#include <jansson.h>
#include <stddef.h>
#include "pflref/status.h"

/* out := "parent.key" ("key" when parent is empty). */
void pflref_json_key_path(char *out, size_t size, const char *parent,
                          const char *key);
/* out := "parent[i]". */
void pflref_json_index_path(char *out, size_t size, const char *parent,
                            size_t i);

/* A readable name for a JSON value's type ("object", "array", ...). */
const char *pflref_json_type_name(const json_t *v);

/* v must be an object whose keys are all in allowed (NULL-terminated;
 * allowed = NULL: any key).  The smallest unknown key is reported, so the
 * report does not depend on jansson's hash order. */
pflref_status pflref_json_object(const json_t *v, const char *where,
                                 const char *const *allowed,
                                 pflref_error *err);

/* Member `key` of object obj: *out = NULL when absent and !required. */
pflref_status pflref_json_member(const json_t *obj, const char *where,
                                 const char *key, int required,
                                 json_t **out, pflref_error *err);

/* Member `key` of obj (required), an array of at least min_len entries:
 * *out, *len. */
pflref_status pflref_json_array_member(const json_t *obj, const char *where,
                                       const char *key, size_t min_len,
                                       json_t **out, size_t *len,
                                       pflref_error *err);

/* The envelope of a document at `where`: an object with keys in allowed
 * whose required "format" is the string `format` ("format is \"…\",
 * expected \"…\"" otherwise). */
pflref_status pflref_json_format(const json_t *root, const char *where,
                                 const char *const *allowed,
                                 const char *format, pflref_error *err);

pflref_status pflref_json_real(const json_t *v, const char *where,
                               double *out, pflref_error *err);
/* An integer literal in [lo, hi]. */
pflref_status pflref_json_size(const json_t *v, const char *where, size_t lo,
                               size_t hi, size_t *out, pflref_error *err);
pflref_status pflref_json_string(const json_t *v, const char *where,
                                 const char **out, pflref_error *err);
pflref_status pflref_json_bool(const json_t *v, const char *where, int *out,
                               pflref_error *err);
/* An array; *len gets its length; len must be ≥ min_len. */
pflref_status pflref_json_array(const json_t *v, const char *where,
                                size_t min_len, size_t *len,
                                pflref_error *err);
/* An array of exactly n finite numbers into out[0..n−1] (n = 0: any
 * length ≥ 1 is an error unless n matches; use pflref_json_array first). */
pflref_status pflref_json_vector(const json_t *v, const char *where,
                                 size_t n, double *out, pflref_error *err);
/* rows × cols finite numbers, an array of rows arrays, into out (row-major). */
pflref_status pflref_json_matrix(const json_t *v, const char *where,
                                 size_t rows, size_t cols, double *out,
                                 pflref_error *err);
/* An array of n integers in [0, bound) into out. */
pflref_status pflref_json_indices(const json_t *v, const char *where,
                                  size_t n, size_t bound, size_t *out,
                                  pflref_error *err);

/* Optional members with defaults. */
pflref_status pflref_json_opt_real(const json_t *obj, const char *where,
                                   const char *key, double def, double *out,
                                   pflref_error *err);
pflref_status pflref_json_opt_size(const json_t *obj, const char *where,
                                   const char *key, size_t lo, size_t hi,
                                   size_t def, size_t *out, pflref_error *err);

/* Optional member `key`: one of the strings names[0..] (NULL-terminated);
 * *out gets its index, or def when the member is absent. */
pflref_status pflref_json_opt_enum(const json_t *obj, const char *where,
                                   const char *key, const char *const *names,
                                   int def, int *out, pflref_error *err);

/* Parse text strictly (duplicate keys rejected); syntax errors give
 * "line L, column C: …" and where = `what`. */
pflref_status pflref_json_parse(const char *text, size_t len, const char *what,
                                json_t **out, pflref_error *err);

/* ---- numeric arrays lifted out of the text (ref/io/json_numeric.c) ---- */

/* One array lifted: a matrix (the value of "X", "X_test", "X_val": rows
 * of numbers) or a vector (of "y", "y_test", "y_val"). */
typedef struct {
    double *v;           /* n numbers, row-major; NULL once taken        */
    size_t n;
    size_t rows;         /* matrix: its rows; vector: n                  */
    size_t *row_len;     /* matrix: each row's length (≥ 1); else NULL   */
    int depth;           /* 2: matrix, 1: vector                         */
} pflref_json_numeric;

/* The arrays lifted from one text, entry i for placeholder "\u0001i". */
typedef struct {
    pflref_json_numeric *a;
    size_t n, cap;
} pflref_json_numerics;

/* Lift every data array of text[0..*len) that jansson would read without
 * complaint into t, replacing it in the text by a shorter placeholder
 * string; the text closes up and *len becomes its new length.  Returns how
 * many were lifted (0 when the text holds the escape \u0001, which would
 * let a placeholder be forged: jansson then reads the arrays as before).
 * Parse the result with pflref_json_parse_lifted. */
size_t pflref_json_lift(char *text, size_t *len, pflref_json_numerics *t);

/* pflref_json_parse of a lifted text (lifted, llen); when it fails, the
 * original text (text, len) is parsed instead, so the error names the
 * line and column of the original.  text may be NULL when the original is
 * gone: the lifted text's error is then returned as it is. */
pflref_status pflref_json_parse_lifted(const char *lifted, size_t llen,
                                       const char *text, size_t len,
                                       const char *what, json_t **out,
                                       pflref_error *err);

/* The lifted array a placeholder value v stands for, or NULL when v is
 * not a placeholder of t (t may be NULL). */
pflref_json_numeric *pflref_json_numeric_of(const json_t *v,
                                            const pflref_json_numerics *t);

/* Free every array of t not taken, and t's table. */
void pflref_json_numerics_free(pflref_json_numerics *t);

/* jansson values for writing: a real (NULL for a non-finite x, which the
 * writers never pass) and arrays of doubles / indices. */
json_t *pflref_json_new_vector(const double *x, size_t n);
json_t *pflref_json_new_indices(const size_t *x, size_t n);
/* rows arrays of cols numbers from row-major x (NULL when out of memory). */
json_t *pflref_json_new_matrix(const double *x, size_t rows, size_t cols);

#endif
