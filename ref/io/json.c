/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/json.c: strict JSON reading helpers with JSON paths, and the
 * builders of arrays the writers share (ref/io/json.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/json.h"

void pflref_json_key_path(char *out, size_t size, const char *parent,
                          const char *key)
{
    /* A parent ending in ':' is a file prefix ("p.json:"): its fields
     * follow it directly ("p.json:clients"). */
    if (parent == NULL || parent[0] == '\0')
        snprintf(out, size, "%s", key);
    else if (parent[strlen(parent) - 1] == ':')
        snprintf(out, size, "%s%s", parent, key);
    else
        snprintf(out, size, "%s.%s", parent, key);
}

void pflref_json_index_path(char *out, size_t size, const char *parent,
                            size_t i)
{
    snprintf(out, size, "%s[%zu]", parent, i);
}

const char *pflref_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "an array";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL:    return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:   return "a boolean";
    case JSON_NULL:    return "null";
    }
    return "an unknown value";
}

static int allowed_key(const char *key, const char *const *allowed)
{
    for (size_t i = 0; allowed[i] != NULL; i++)
        if (strcmp(allowed[i], key) == 0)
            return 1;
    return 0;
}

pflref_status pflref_json_object(const json_t *v, const char *where,
                                 const char *const *allowed,
                                 pflref_error *err)
{
    if (!json_is_object(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected an object, found %s",
                                pflref_json_type_name(v));
    if (allowed == NULL)
        return PFLREF_OK;
    /* The smallest unknown key, so the report does not depend on jansson's
     * hash order. */
    const char *first = NULL;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        (void)value;
        if (!allowed_key(key, allowed) &&
            (first == NULL || strcmp(key, first) < 0))
            first = key;
    }
    if (first != NULL) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, where, first);
        char known[PFLREF_MESSAGE_MAX / 2] = "";
        for (size_t i = 0; allowed[i] != NULL; i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, allowed[i], sizeof known - strlen(known) - 1);
        }
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "unknown field \"%s\" (known: %s)", first,
                                known);
    }
    return PFLREF_OK;
}

pflref_status pflref_json_member(const json_t *obj, const char *where,
                                 const char *key, int required,
                                 json_t **out, pflref_error *err)
{
    *out = json_object_get(obj, key);
    if (*out == NULL && required) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, where, key);
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "required field \"%s\" is missing", key);
    }
    return PFLREF_OK;
}

pflref_status pflref_json_array_member(const json_t *obj, const char *where,
                                       const char *key, size_t min_len,
                                       json_t **out, size_t *len,
                                       pflref_error *err)
{
    char path[PFLREF_WHERE_MAX];
    pflref_json_key_path(path, sizeof path, where, key);
    pflref_status st = pflref_json_member(obj, where, key, 1, out, err);
    return st != PFLREF_OK ? st
                           : pflref_json_array(*out, path, min_len, len, err);
}

pflref_status pflref_json_format(const json_t *root, const char *where,
                                 const char *const *allowed,
                                 const char *format, pflref_error *err)
{
    char path[PFLREF_WHERE_MAX];
    pflref_json_key_path(path, sizeof path, where, "format");
    json_t *fmt;
    const char *f = "";
    pflref_status st;
    if ((st = pflref_json_object(root, where, allowed, err)) ||
        (st = pflref_json_member(root, where, "format", 1, &fmt, err)) ||
        (st = pflref_json_string(fmt, path, &f, err)))
        return st;
    if (strcmp(f, format) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "format is \"%s\", expected \"%s\"", f,
                                format);
    return PFLREF_OK;
}

pflref_status pflref_json_real(const json_t *v, const char *where,
                               double *out, pflref_error *err)
{
    if (!json_is_number(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected a number, found %s",
                                pflref_json_type_name(v));
    double x = json_number_value(v);
    if (!isfinite(x))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the number is not finite");
    *out = x;
    return PFLREF_OK;
}

pflref_status pflref_json_size(const json_t *v, const char *where, size_t lo,
                               size_t hi, size_t *out, pflref_error *err)
{
    if (!json_is_integer(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected an integer, found %s",
                                pflref_json_type_name(v));
    json_int_t x = json_integer_value(v);
    if (x < 0 || (unsigned long long)x < lo || (unsigned long long)x > hi)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%lld is out of range [%zu, %zu]",
                                (long long)x, lo, hi);
    *out = (size_t)x;
    return PFLREF_OK;
}

pflref_status pflref_json_string(const json_t *v, const char *where,
                                 const char **out, pflref_error *err)
{
    if (!json_is_string(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected a string, found %s",
                                pflref_json_type_name(v));
    *out = json_string_value(v);
    return PFLREF_OK;
}

pflref_status pflref_json_bool(const json_t *v, const char *where, int *out,
                               pflref_error *err)
{
    if (!json_is_boolean(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected true or false, found %s",
                                pflref_json_type_name(v));
    *out = json_is_true(v);
    return PFLREF_OK;
}

pflref_status pflref_json_array(const json_t *v, const char *where,
                                size_t min_len, size_t *len,
                                pflref_error *err)
{
    if (!json_is_array(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected an array, found %s",
                                pflref_json_type_name(v));
    *len = json_array_size(v);
    if (*len < min_len)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the array has %zu entries, at least %zu "
                                "needed", *len, min_len);
    return PFLREF_OK;
}

/* Reads entry i of array `where` into ctx.  The entry's path "where[i]"
 * is built only when it is needed (an error, or a nested array), since a
 * problem's arrays hold millions of entries (issue 17: an snprintf per
 * number was a quarter of the reading time). */
typedef pflref_status (*entry_reader)(const json_t *e, const char *where,
                                      size_t i, void *ctx, pflref_error *err);

/* Entries 0..n−1 of array v through read, stopping at the first error. */
static pflref_status each_entry(const json_t *v, const char *where, size_t n,
                                entry_reader read, void *ctx,
                                pflref_error *err)
{
    for (size_t i = 0; i < n; i++) {
        pflref_status st = read(json_array_get(v, i), where, i, ctx, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* v is an array of exactly n entries (`what`: "numbers", "rows"). */
static pflref_status array_of(const json_t *v, const char *where, size_t n,
                              const char *what, pflref_error *err)
{
    size_t len;
    pflref_status st = pflref_json_array(v, where, 0, &len, err);
    if (st == PFLREF_OK && len != n)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "expected %zu %s, found %zu", n, what, len);
    return st;
}

static pflref_status real_entry(const json_t *e, const char *where, size_t i,
                                void *ctx, pflref_error *err)
{
    /* The common case, a finite number, without a path. */
    if (json_is_number(e)) {
        const double x = json_number_value(e);
        if (isfinite(x)) {
            ((double *)ctx)[i] = x;
            return PFLREF_OK;
        }
    }
    char path[PFLREF_WHERE_MAX];
    pflref_json_index_path(path, sizeof path, where, i);
    return pflref_json_real(e, path, (double *)ctx + i, err);
}

pflref_status pflref_json_vector(const json_t *v, const char *where,
                                 size_t n, double *out, pflref_error *err)
{
    pflref_status st = array_of(v, where, n, "numbers", err);
    return st != PFLREF_OK ? st
                           : each_entry(v, where, n, real_entry, out, err);
}

typedef struct {
    double *out;     /* rows × cols, row-major */
    size_t cols;
} rows_ctx;

static pflref_status row_entry(const json_t *e, const char *where, size_t i,
                               void *ctx, pflref_error *err)
{
    const rows_ctx *r = ctx;
    char path[PFLREF_WHERE_MAX];
    pflref_json_index_path(path, sizeof path, where, i);
    return pflref_json_vector(e, path, r->cols, r->out + i * r->cols, err);
}

pflref_status pflref_json_matrix(const json_t *v, const char *where,
                                 size_t rows, size_t cols, double *out,
                                 pflref_error *err)
{
    rows_ctx r = {out, cols};
    pflref_status st = array_of(v, where, rows, "rows", err);
    return st != PFLREF_OK ? st
                           : each_entry(v, where, rows, row_entry, &r, err);
}

typedef struct {
    size_t *out;
    size_t bound;    /* indices lie in [0, bound) */
} indices_ctx;

static pflref_status index_entry(const json_t *e, const char *where, size_t i,
                                 void *ctx, pflref_error *err)
{
    const indices_ctx *x = ctx;
    /* The common case, an index in range, without a path. */
    if (json_is_integer(e) && json_integer_value(e) >= 0 &&
        (unsigned long long)json_integer_value(e) < x->bound) {
        x->out[i] = (size_t)json_integer_value(e);
        return PFLREF_OK;
    }
    char path[PFLREF_WHERE_MAX];
    pflref_json_index_path(path, sizeof path, where, i);
    if (x->bound == 0)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "no index is valid here");
    return pflref_json_size(e, path, 0, x->bound - 1, &x->out[i], err);
}

pflref_status pflref_json_indices(const json_t *v, const char *where,
                                  size_t n, size_t bound, size_t *out,
                                  pflref_error *err)
{
    indices_ctx x = {out, bound};
    return each_entry(v, where, n, index_entry, &x, err);
}

pflref_status pflref_json_opt_real(const json_t *obj, const char *where,
                                   const char *key, double def, double *out,
                                   pflref_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        *out = def;
        return PFLREF_OK;
    }
    char path[PFLREF_WHERE_MAX];
    pflref_json_key_path(path, sizeof path, where, key);
    return pflref_json_real(v, path, out, err);
}

pflref_status pflref_json_opt_size(const json_t *obj, const char *where,
                                   const char *key, size_t lo, size_t hi,
                                   size_t def, size_t *out, pflref_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        *out = def;
        return PFLREF_OK;
    }
    char path[PFLREF_WHERE_MAX];
    pflref_json_key_path(path, sizeof path, where, key);
    return pflref_json_size(v, path, lo, hi, out, err);
}

pflref_status pflref_json_opt_enum(const json_t *obj, const char *where,
                                   const char *key, const char *const *names,
                                   int def, int *out, pflref_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = def;
    if (v == NULL)
        return PFLREF_OK;
    char path[PFLREF_WHERE_MAX];
    pflref_json_key_path(path, sizeof path, where, key);
    const char *s = NULL;
    pflref_status st = pflref_json_string(v, path, &s, err);
    if (st != PFLREF_OK)
        return st;
    char known[PFLREF_MESSAGE_MAX / 2] = "";
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return PFLREF_OK;
        }
        strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
        strncat(known, names[i], sizeof known - strlen(known) - 1);
    }
    return pflref_error_set(err, PFLREF_EINVAL, path,
                            "unknown %s \"%s\" (known: %s)", key, s, known);
}

/* ---- numbers that underflow ----------------------------------------------
 *
 * jansson reads 1e-400 as 0 without a word, so a step size of 1e-400 would
 * be refused as "eta = 0".  After a successful parse the text is scanned
 * once more, tracking the JSON path, and the first number whose digits are
 * not all zero but which reads as 0 is named. */

typedef struct {
    int is_array;
    size_t index;          /* in an array: the entry                     */
    const char *key;       /* in an object: the member's key (raw text), */
    size_t key_len;        /* or NULL between members                    */
} json_frame;

/* The end of the string literal starting at text[i] = '"'. */
static size_t skip_string(const char *text, size_t len, size_t i)
{
    for (i++; i < len && text[i] != '"'; i++)
        if (text[i] == '\\')
            i++;
    return i;
}

/* A number token that reads as 0 although a digit of its mantissa is not
 * 0.  Only a token with an exponent, or a long one (0.000…01 with over 300
 * zeros), can; the others are not converted again. */
static int underflows(const char *tok, size_t n)
{
    int nonzero = 0, exponent = 0;
    for (size_t i = 0; i < n; i++) {
        exponent |= tok[i] == 'e' || tok[i] == 'E';
        nonzero |= !exponent && tok[i] >= '1' && tok[i] <= '9';
    }
    if (!nonzero || (!exponent && n < 300))
        return 0;
    char small[128];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, tok, n);
    buf[n] = '\0';
    const int zero = strtod(buf, NULL) == 0.0;
    if (buf != small)
        free(buf);
    return zero;
}

/* The JSON path of the innermost value of stack[0..depth) under prefix. */
static void frame_path(const json_frame *stack, size_t depth,
                       const char *prefix, char *out, size_t size)
{
    char path[PFLREF_WHERE_MAX], key[PFLREF_WHERE_MAX];
    snprintf(path, sizeof path, "%s", prefix);
    for (size_t d = 0; d < depth; d++) {
        char next[PFLREF_WHERE_MAX];
        if (stack[d].is_array) {
            pflref_json_index_path(next, sizeof next, path, stack[d].index);
        } else if (stack[d].key != NULL) {
            snprintf(key, sizeof key, "%.*s", (int)stack[d].key_len,
                     stack[d].key);
            pflref_json_key_path(next, sizeof next, path, key);
        } else {
            continue;
        }
        snprintf(path, sizeof path, "%s", next);
    }
    snprintf(out, size, "%s", path);
}

static pflref_status find_underflow(const char *text, size_t len,
                                    const char *prefix, pflref_error *err)
{
    json_frame *stack = malloc(2 * JSON_PARSER_MAX_DEPTH * sizeof *stack + 1);
    if (stack == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, prefix, "out of memory");
    size_t depth = 0;
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; i < len && st == PFLREF_OK; i++) {
        const char c = text[i];
        json_frame *top = depth > 0 ? &stack[depth - 1] : NULL;
        if ((c == '{' || c == '[') && depth < 2 * JSON_PARSER_MAX_DEPTH) {
            stack[depth++] = (json_frame){.is_array = c == '['};
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        } else if (c == ',' && top != NULL) {
            top->index++;
            top->key = NULL;
        } else if (c == '"') {
            size_t end = skip_string(text, len, i);
            if (top != NULL && !top->is_array && top->key == NULL) {
                top->key = text + i + 1;
                top->key_len = end - i - 1;
            }
            i = end;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t n = 0;
            while (i + n < len && strchr("+-0123456789.eE", text[i + n]) &&
                   text[i + n] != '\0')
                n++;
            if (underflows(text + i, n)) {
                char where[PFLREF_WHERE_MAX];
                frame_path(stack, depth, prefix, where, sizeof where);
                st = pflref_error_set(err, PFLREF_EINVAL, where,
                                      "%.*s underflows to 0 (the smallest "
                                      "double is 4.9e-324); write 0 if 0 is "
                                      "meant", (int)(n < 64 ? n : 64),
                                      text + i);
            }
            i += n - 1;
        }
    }
    free(stack);
    return st;
}

pflref_status pflref_json_parse(const char *text, size_t len, const char *what,
                                json_t **out, pflref_error *err)
{
    json_error_t je;
    *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (*out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, what,
                                "not valid JSON: line %d, column %d: %s",
                                je.line, je.column, je.text);
    char prefix[PFLREF_WHERE_MAX];
    snprintf(prefix, sizeof prefix, "%s%s", what, what[0] != '\0' ? ":" : "");
    pflref_status st = find_underflow(text, len, prefix, err);
    if (st != PFLREF_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return st;
}

pflref_status pflref_json_parse_lifted(const char *lifted, size_t llen,
                                       const char *text, size_t len,
                                       const char *what, json_t **out,
                                       pflref_error *err)
{
    pflref_status st = pflref_json_parse(lifted, llen, what, out, err);
    if (st != PFLREF_OK && text != NULL && text != lifted)
        st = pflref_json_parse(text, len, what, out, err);
    return st;
}

json_t *pflref_json_new_vector(const double *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_real(x[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

json_t *pflref_json_new_matrix(const double *x, size_t rows, size_t cols)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < rows; i++) {
        json_t *row = pflref_json_new_vector(x + i * cols, cols);
        if (row == NULL || json_array_append_new(a, row) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *pflref_json_new_indices(const size_t *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_integer((json_int_t)x[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}
