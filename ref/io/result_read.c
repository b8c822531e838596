/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result_read.c: a result whose arrays are in files, made
 * self-contained (pflref_result_inline in pflref/io.h; docs/formats.md,
 * "Arrays in files").
 *
 * A result (or candidate result) may give w0, theta0, final.w, final.v,
 * final.alpha and hypernetwork.W / .b / .v as file references, and its
 * trajectory values as ranges {offset, count} of "trajectory_values"
 * (ref/io/arrays.h).  For a reader that takes numbers (pflref plot sweep),
 * every such value is replaced by its numbers, the manifest "array_files"
 * is checked and removed with "trajectory_values".  The shapes are held to
 * the result's own model.P and problem.N where it states them.  The
 * numbers are printed with 17 significant digits, which read back to the
 * same doubles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/arrays.h"
#include "io/json.h"

/* A size the result states at obj.key (an integer >= 1), else 0. */
static size_t stated(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) && json_integer_value(v) >= 1
               ? (size_t)json_integer_value(v)
               : 0;
}

/* obj.key (JSON field `where`), when a file reference of shape `want`,
 * replaced by its numbers. */
static pflref_status inline_field(pflref_arrays *a, json_t *obj,
                                  const char *key, const char *where,
                                  const pflref_array_shape *want,
                                  pflref_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return PFLREF_OK;
    const double *x;
    size_t shape[2];
    pflref_status st = pflref_arrays_load(a, json_string_value(v), where,
                                          want, &x, shape, err);
    if (st != PFLREF_OK)
        return st;
    json_t *numbers = want->rank == 1
                          ? pflref_json_new_vector(x, shape[0])
                          : pflref_json_new_matrix(x, shape[0], shape[1]);
    if (numbers == NULL || json_object_set_new(obj, key, numbers) != 0)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    return PFLREF_OK;
}

/* Every ranged value of root's trajectory replaced by its numbers. */
static pflref_status inline_trajectory(const pflref_arrays *a, json_t *root,
                                       pflref_error *err)
{
    const json_t *list = json_object_get(root, "trajectory");
    for (size_t r = 0; r < json_array_size(list); r++) {
        json_t *rec = json_array_get(list, r);
        const json_t *v = json_object_get(rec, "value");
        if (!json_is_object(v))
            continue;
        char where[PFLREF_WHERE_MAX], vp[PFLREF_WHERE_MAX];
        pflref_json_index_path(where, sizeof where, "trajectory", r);
        pflref_json_key_path(vp, sizeof vp, where, "value");
        const double *x;
        size_t n;
        pflref_status st = pflref_arrays_range(a, v, vp, &x, &n, err);
        if (st != PFLREF_OK)
            return st;
        json_t *numbers = pflref_json_new_vector(x, n);
        if (numbers == NULL || json_object_set_new(rec, "value", numbers))
            return pflref_error_set(err, PFLREF_ENOMEM, vp, "out of memory");
    }
    return PFLREF_OK;
}

/* Every file reference of root (with the result's sizes P, N) inlined. */
static pflref_status inline_fields(pflref_arrays *a, json_t *root,
                                   pflref_error *err)
{
    const size_t P = stated(json_object_get(root, "model"), "P");
    const size_t N = stated(json_object_get(root, "problem"), "N");
    json_t *fin = json_object_get(root, "final");
    json_t *hn = json_object_get(root, "hypernetwork");
    const pflref_array_shape vec_P = {.rank = 1, .dim = {P}, .sym = {"P"}};
    const pflref_array_shape vec_N = {.rank = 1, .dim = {N}, .sym = {"N"}};
    const pflref_array_shape NxP = {.rank = 2, .dim = {N, P},
                                    .sym = {"N", "P"}};
    const pflref_array_shape kxP = {.rank = 2, .dim = {0, P},
                                    .sym = {"k", "P"}};
    const pflref_array_shape Pxe = {.rank = 2, .dim = {P, 0},
                                    .sym = {"P", "e"}};
    const pflref_array_shape Nxe = {.rank = 2, .dim = {N, 0},
                                    .sym = {"N", "e"}};
    pflref_status st;
    if ((st = inline_field(a, root, "w0", "w0", &vec_P, err)) ||
        (st = inline_field(a, root, "theta0", "theta0", &kxP, err)) ||
        (json_is_object(fin) &&
         ((st = inline_field(a, fin, "w", "final.w", &vec_P, err)) ||
          (st = inline_field(a, fin, "v", "final.v", &NxP, err)) ||
          (st = inline_field(a, fin, "alpha", "final.alpha", &vec_N,
                             err)))) ||
        (json_is_object(hn) &&
         ((st = inline_field(a, hn, "W", "hypernetwork.W", &Pxe, err)) ||
          (st = inline_field(a, hn, "b", "hypernetwork.b", &vec_P, err)) ||
          (st = inline_field(a, hn, "v", "hypernetwork.v", &Nxe, err)))))
        return st;
    return inline_trajectory(a, root, err);
}

pflref_status pflref_result_inline(const char *text, size_t len,
                                   const char *base_dir, char **out,
                                   pflref_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (text == NULL || out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                text == NULL ? "text" : "out",
                                "the argument is NULL");
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    pflref_arrays a;
    if (!json_is_object(root))
        st = pflref_error_set(err, PFLREF_EINVAL, "",
                              "expected a JSON object (a result)");
    else if ((st = pflref_arrays_open(&a, root, base_dir, err)) ==
                 PFLREF_OK &&
             (st = inline_fields(&a, root, err)) == PFLREF_OK)
        st = pflref_arrays_close(&a, err);
    if (json_is_object(root))
        pflref_arrays_free(&a);
    if (st == PFLREF_OK) {
        json_object_del(root, "trajectory_values");
        json_object_del(root, "array_files");
        *out = json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                    JSON_REAL_PRECISION(17));
        if (*out == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, "", "out of memory");
    }
    json_decref(root);
    return st;
}
