/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/freeze_write.c: the problem of a frozen vector made explicit and
 * portable, and the vector's text (ref/io/freeze.h; the vector itself is
 * ref/io/freeze.c's).
 *
 * A generator's clients are written inline (docs/formats.md, "problem":
 * X, y, X_test, y_test, X_val, y_val; a, c, n for the quadratic model), so
 * the vector draws nothing.  A relative problem file, and a client's
 * relative data file (.npy, or ARCHIVE.npz:MEMBER), is re-rooted at the
 * folder the vector goes to, so the vector reads the same file wherever
 * the spec was.
 */
/* realpath(3): POSIX.1-2008, declared by glibc for X/Open 7. */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "io/freeze.h"
#include "io/json.h"

/* ---- the problem ----------------------------------------------------- */

/* obj[xkey] := D's X (n × d), obj[ykey] := y, when D has samples. */
static int put_split(json_t *obj, const pflref_data *D, size_t d,
                     const char *xkey, const char *ykey)
{
    if (D->n == 0)
        return 0;
    return json_object_set_new(obj, xkey,
                               pflref_json_new_matrix(D->X, D->n, d)) ||
           json_object_set_new(obj, ykey, pflref_json_new_vector(D->y, D->n));
}

/* One client as the spec writes it ("problem.clients[i]"). */
static json_t *client_json(const pflref_model *m, const pflref_client *c)
{
    json_t *o = json_object();
    int bad = o == NULL;
    if (!bad && m->kind == PFLREF_MODEL_QUADRATIC)
        bad = json_object_set_new(o, "a", pflref_json_new_vector(c->train.a,
                                                                 m->d)) ||
              json_object_set_new(o, "c", pflref_json_new_vector(c->train.c,
                                                                 m->d)) ||
              json_object_set_new(o, "n", json_integer((json_int_t)
                                                       c->train.n));
    else if (!bad)
        bad = put_split(o, &c->train, m->d, "X", "y") ||
              put_split(o, &c->test, m->d, "X_test", "y_test") ||
              put_split(o, &c->val, m->d, "X_val", "y_val");
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* {"clients": [...]}: every client of p, inline. */
static json_t *clients_json(const pflref_problem *p)
{
    json_t *prob = json_object(), *clients = json_array();
    int bad = prob == NULL || clients == NULL;
    for (size_t i = 0; !bad && i < p->N; i++)
        bad = json_array_append_new(clients,
                                    client_json(&p->model, &p->clients[i]));
    if (bad || json_object_set_new(prob, "clients", clients)) {
        if (bad)
            json_decref(clients);
        json_decref(prob);
        return NULL;
    }
    return prob;
}

/* out := file (an absolute path) relative to dir (an absolute folder):
 * the folders they share dropped, "../" for each of dir's others. */
static void relative_to(const char *file, const char *dir, char *out,
                        size_t size)
{
    size_t k = 0, common = 0;
    while (dir[k] != '\0' && dir[k] == file[k])
        if (dir[k++] == '/')
            common = k;
    const char *up = dir + common, *down = file + common;
    if (dir[k] == '\0' && file[k] == '/') {
        up = dir + k;          /* dir holds file, at any depth */
        down = file + k + 1;
    }
    out[0] = '\0';
    for (const char *p = up; *p != '\0';) {
        strncat(out, "../", size - strlen(out) - 1);
        const char *slash = strchr(p, '/');
        p = slash == NULL ? p + strlen(p) : slash + 1;
    }
    strncat(out, down, size - strlen(out) - 1);
}

/* The path a relative problem file is written with (see freeze.h). */
static pflref_status reroot(const char *file, const char *base_dir,
                            const char *vector_dir, char *out, size_t size,
                            const char *where, pflref_error *err)
{
    char joined[PFLREF_PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s",
             base_dir != NULL && base_dir[0] != '\0' ? base_dir : ".", file);
    char *abs_file = realpath(joined, NULL);
    if (abs_file == NULL)
        return pflref_error_set(err, PFLREF_EIO, where,
                                "cannot resolve %.200s", joined);
    char *abs_dir = vector_dir != NULL ? realpath(vector_dir, NULL) : NULL;
    pflref_status st = PFLREF_OK;
    if (vector_dir == NULL)
        snprintf(out, size, "%s", abs_file);
    else if (abs_dir == NULL)
        st = pflref_error_set(err, PFLREF_EIO, "opt.vector_dir",
                              "cannot resolve the folder %.200s",
                              vector_dir);
    else
        relative_to(abs_file, abs_dir, out, size);
    free(abs_file);
    free(abs_dir);
    return st;
}

/* A client's data file named in the spec (a .npy path, or the archive of
 * "ARCHIVE.npz:MEMBER"), relative to the spec's folder: written relative
 * to the vector's folder instead (docs/formats.md, data files). */
static pflref_status reroot_data(json_t *client, const char *key,
                                 const char *base_dir, const char *vector_dir,
                                 size_t i, pflref_error *err)
{
    const char *value = json_string_value(json_object_get(client, key));
    if (value == NULL || value[0] == '/')
        return PFLREF_OK;
    char where[64], file[PFLREF_PATH_MAX], path[PFLREF_PATH_MAX];
    snprintf(where, sizeof where, "problem.clients[%zu].%s", i, key);
    const char *member = strstr(value, ".npz:");
    const size_t flen = member != NULL ? (size_t)(member - value) + 4
                                       : strlen(value);
    if (flen >= sizeof file)
        return pflref_error_set(err, PFLREF_EINVAL, where, "path too long");
    memcpy(file, value, flen);
    file[flen] = '\0';
    pflref_status st = reroot(file, base_dir, vector_dir, path,
                              sizeof path, where, err);
    if (st != PFLREF_OK)
        return st;
    if (member != NULL)
        strncat(path, member + 4, sizeof path - strlen(path) - 1);
    if (json_object_set_new(client, key, json_string(path)))
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    return PFLREF_OK;
}

pflref_status pflref_freeze_problem(json_t *vspec,
                                    const pflref_problem *problem,
                                    const char *base_dir,
                                    const char *vector_dir,
                                    pflref_error *err)
{
    static const char *const data_keys[] = {"X", "y", "X_test", "y_test",
                                            "X_val", "y_val"};
    const json_t *prob = json_object_get(vspec, "problem");
    if (json_object_get(prob, "generator") != NULL) {
        if (json_object_set_new(vspec, "problem", clients_json(problem)))
            return pflref_error_set(err, PFLREF_ENOMEM, "problem",
                                    "out of memory writing the clients");
        return PFLREF_OK;
    }
    const json_t *clients = json_object_get(prob, "clients");
    for (size_t i = 0; i < json_array_size(clients); i++)
        for (size_t k = 0; k < sizeof data_keys / sizeof *data_keys; k++) {
            pflref_status st = reroot_data(json_array_get(clients, i),
                                           data_keys[k], base_dir,
                                           vector_dir, i, err);
            if (st != PFLREF_OK)
                return st;
        }
    const char *file = json_string_value(json_object_get(prob, "file"));
    if (file == NULL || file[0] == '/')
        return PFLREF_OK;
    char path[PFLREF_PATH_MAX];
    pflref_status st = reroot(file, base_dir, vector_dir, path, sizeof path,
                              "problem.file", err);
    if (st == PFLREF_OK &&
        json_object_set_new((json_t *)prob, "file", json_string(path)))
        st = pflref_error_set(err, PFLREF_ENOMEM, "problem.file",
                              "out of memory");
    return st;
}

/* ---- the text --------------------------------------------------------- */

/* A growing string; `failed` once an allocation failed. */
typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} text_buf;

static void add(text_buf *t, const char *s)
{
    const size_t n = strlen(s);
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap == 0 ? 4096 : t->cap;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = realloc(t->s, cap);
        if (grown == NULL) {
            t->failed = 1;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

/* v's compact text, 17 significant digits. */
static void add_json(text_buf *t, const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
                                JSON_REAL_PRECISION(17));
    if (s == NULL)
        t->failed = 1;
    else
        add(t, s);
    free(s);
}

/* "expected": {"final": …, "trajectory": [one record a line]}. */
static void add_expected(text_buf *t, const json_t *exp)
{
    add(t, "{\"final\": ");
    add_json(t, json_object_get(exp, "final"));
    add(t, ",\n  \"trajectory\": [");
    const json_t *tr = json_object_get(exp, "trajectory");
    for (size_t i = 0; i < json_array_size(tr); i++) {
        add(t, i == 0 ? "\n   " : ",\n   ");
        add_json(t, json_array_get(tr, i));
    }
    add(t, "]}");
}

char *pflref_freeze_dump(const json_t *vector)
{
    text_buf t = {.s = NULL, .len = 0, .cap = 0, .failed = 0};
    const char *key;
    const json_t *v;
    add(&t, "{");
    json_object_foreach((json_t *)vector, key, v) {
        json_t *name = json_string(key);
        add(&t, t.len > 1 ? ",\n " : "");   /* after the first member */
        add_json(&t, name);
        json_decref(name);
        add(&t, ": ");
        if (strcmp(key, "expected") == 0)
            add_expected(&t, v);
        else
            add_json(&t, v);
    }
    add(&t, "}\n");
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
