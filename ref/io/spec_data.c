/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_data.c: reading a spec's "problem": the clients' data given
 * inline ("clients"), in a problem file ("file", format pflref-problem/1)
 * or drawn by a documented generator ("generator": tilt, dirichlet);
 * docs/formats.md, "problem".
 *
 * A client of the quadratic model gives a, c (d numbers each) and n; a
 * client of the other models X (n × d) and y (n), and optionally test data
 * (X_test, y_test) and a validation split (X_val, y_val), each either for
 * every client or for none.  Paths inside a problem file are prefixed with
 * the file's name ("p.json:clients[2].X[0]"); a generator's config fields
 * are named "problem.generator.<field>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/spec_read.h"

#define MAX_COUNT PFLREF_SPEC_MAX_COUNT

/* Read one data set of a client: keys X/y (or X_test/y_test, X_val/y_val). */
static pflref_status read_xy(const json_t *c, const char *where,
                             const char *xkey, const char *ykey,
                             const pflref_model *m, pflref_data *D,
                             pflref_error *err)
{
    char xp[PFLREF_WHERE_MAX], yp[PFLREF_WHERE_MAX];
    pflref_json_key_path(xp, sizeof xp, where, xkey);
    pflref_json_key_path(yp, sizeof yp, where, ykey);
    json_t *X = json_object_get(c, xkey), *y = json_object_get(c, ykey);
    if (X == NULL || y == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, X == NULL ? xp : yp,
                                "required field \"%s\" is missing",
                                X == NULL ? xkey : ykey);
    size_t n, ny;
    pflref_status st = pflref_json_array(X, xp, 1, &n, err);
    if (st == PFLREF_OK)
        st = pflref_json_array(y, yp, 1, &ny, err);
    if (st == PFLREF_OK && n != ny)
        st = pflref_error_set(err, PFLREF_EINVAL, yp,
                              "%s has %zu rows but %s has %zu entries", xkey,
                              n, ykey, ny);
    if (st == PFLREF_OK)
        st = pflref_data_alloc(D, m, n, err);
    if (st == PFLREF_OK)
        st = pflref_json_matrix(X, xp, n, m->d, D->X, err);
    if (st == PFLREF_OK)
        st = pflref_json_vector(y, yp, n, D->y, err);
    return st;
}

/* Validate one data set read from `where`; pflref_data_validate names the
 * model's arrays X, y, a, c, which for test data are X_test and y_test in
 * the spec (suffix "_test") and for the validation split X_val and y_val
 * (suffix "_val"), so the path is renamed to the spec's field (suffix ""
 * for the training data: no renaming). */
static pflref_status validate_data(const pflref_model *m, const pflref_data *D,
                                   const char *where, const char *suffix,
                                   pflref_error *err)
{
    pflref_status st = pflref_data_validate(m, D, where, err);
    if (st == PFLREF_OK || suffix[0] == '\0' || err == NULL)
        return st;
    size_t n = strlen(where);
    if (strncmp(err->where, where, n) == 0 &&
        (strncmp(err->where + n, ".X", 2) == 0 ||
         strncmp(err->where + n, ".y", 2) == 0)) {
        char path[PFLREF_WHERE_MAX];
        snprintf(path, sizeof path, "%.*s%.2s%s%s", (int)n, err->where,
                 err->where + n, suffix, err->where + n + 2);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}

static pflref_status read_client(const json_t *c, const char *where,
                                 const pflref_model *m, pflref_client *cl,
                                 pflref_error *err)
{
    pflref_status st;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        static const char *const keys[] = {"a", "c", "n", NULL};
        if ((st = pflref_json_object(c, where, keys, err)))
            return st;
        size_t n;
        if ((st = pflref_json_opt_size(c, where, "n", 1, MAX_COUNT, 1, &n,
                                       err)))
            return st;
        if ((st = pflref_data_alloc(&cl->train, m, n, err)))
            return st;
        json_t *a, *cc;
        char ap[PFLREF_WHERE_MAX], cp[PFLREF_WHERE_MAX];
        pflref_json_key_path(ap, sizeof ap, where, "a");
        pflref_json_key_path(cp, sizeof cp, where, "c");
        if ((st = pflref_json_member(c, where, "a", 1, &a, err)) ||
            (st = pflref_json_member(c, where, "c", 1, &cc, err)) ||
            (st = pflref_json_vector(a, ap, m->d, cl->train.a, err)) ||
            (st = pflref_json_vector(cc, cp, m->d, cl->train.c, err)))
            return st;
        return validate_data(m, &cl->train, where, "", err);
    }
    static const char *const keys[] = {"X", "y", "X_test", "y_test", "X_val",
                                       "y_val", NULL};
    if ((st = pflref_json_object(c, where, keys, err)))
        return st;
    if ((st = read_xy(c, where, "X", "y", m, &cl->train, err)) ||
        (st = validate_data(m, &cl->train, where, "", err)))
        return st;
    if (json_object_get(c, "X_test") != NULL ||
        json_object_get(c, "y_test") != NULL) {
        if ((st = read_xy(c, where, "X_test", "y_test", m, &cl->test, err)) ||
            (st = validate_data(m, &cl->test, where, "_test", err)))
            return st;
    }
    /* The validation split (X_val, y_val): optional, both or neither. */
    if (json_object_get(c, "X_val") != NULL ||
        json_object_get(c, "y_val") != NULL) {
        if ((st = read_xy(c, where, "X_val", "y_val", m, &cl->val, err)) ||
            (st = validate_data(m, &cl->val, where, "_val", err)))
            return st;
    }
    return PFLREF_OK;
}

/* Client i gives data set `what` ("test data", "a validation split": n_i
 * samples) exactly when client 0 does (n_0 samples): the metrics compare
 * clients.  `has_one` says that client 0 has it; `keys` are the fields. */
static pflref_status same_as_client0(size_t i, size_t n_i, size_t n_0,
                                     const char *path, const char *what,
                                     const char *has_one, const char *keys,
                                     pflref_error *err)
{
    if ((n_i > 0) == (n_0 > 0))
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, path,
                            "client %zu %s %s but client 0 %s; give %s to "
                            "every client or to none", i,
                            n_i > 0 ? "has" : "has no", what,
                            n_0 > 0 ? has_one : "has none", keys);
}

static pflref_status read_clients(const json_t *arr, const char *where,
                                  const pflref_model *m, pflref_problem **out,
                                  pflref_error *err)
{
    size_t N;
    pflref_status st = pflref_json_array(arr, where, 1, &N, err);
    if (st != PFLREF_OK)
        return st;
    pflref_problem *p = pflref_problem_alloc(m, N);
    if (p == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    for (size_t i = 0; i < N && st == PFLREF_OK; i++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, i);
        const pflref_client *c = &p->clients[i], *c0 = &p->clients[0];
        if ((st = read_client(json_array_get(arr, i), path, m,
                              &p->clients[i], err)) ||
            (st = same_as_client0(i, c->test.n, c0->test.n, path,
                                  "test data", "has", "X_test and y_test",
                                  err)))
            break;
        st = same_as_client0(i, c->val.n, c0->val.n, path,
                             "a validation split", "has one",
                             "X_val and y_val", err);
    }
    if (st != PFLREF_OK) {
        pflref_problem_free(p);
        return st;
    }
    *out = p;
    return PFLREF_OK;
}

static pflref_status read_problem_file(const char *path, const char *base_dir,
                                       const char *where,
                                       const pflref_model *m,
                                       pflref_problem **out,
                                       pflref_error *err)
{
    char full[PFLREF_PATH_MAX];
    if (path[0] == '/' || base_dir == NULL || base_dir[0] == '\0')
        snprintf(full, sizeof full, "%s", path);
    else
        snprintf(full, sizeof full, "%s/%s", base_dir, path);
    char *text;
    size_t len;
    pflref_status st = pflref_read_file(full, &text, &len, err);
    if (st != PFLREF_OK) {
        if (err != NULL)
            snprintf(err->where, sizeof err->where, "%s", where);
        return st;
    }
    json_t *root;
    st = pflref_json_parse(text, len, full, &root, err);
    free(text);
    if (st != PFLREF_OK)
        return st;
    static const char *const keys[] = {"format", "description", "provenance",
                                       "clients", NULL};
    /* Paths inside the problem file are prefixed with its name. */
    char prefix[PFLREF_WHERE_MAX];
    snprintf(prefix, sizeof prefix, "%s:", path);
    char cpath[PFLREF_WHERE_MAX], ppath[PFLREF_WHERE_MAX];
    pflref_json_key_path(cpath, sizeof cpath, prefix, "clients");
    pflref_json_key_path(ppath, sizeof ppath, prefix, "provenance");
    json_t *clients;
    st = pflref_json_format(root, prefix, keys, PFLREF_PROBLEM_FORMAT, err);
    json_t *prov = json_object_get(root, "provenance");
    if (st == PFLREF_OK && prov != NULL && !json_is_object(prov))
        st = pflref_error_set(err, PFLREF_EINVAL, ppath,
                              "provenance must be an object");
    if (st == PFLREF_OK)
        st = pflref_json_member(root, prefix, "clients", 1, &clients, err);
    if (st == PFLREF_OK)
        st = read_clients(clients, cpath, m, out, err);
    json_decref(root);
    return st;
}

static pflref_status read_generator(const json_t *g, const pflref_model *m,
                                    pflref_problem **out, char **source,
                                    pflref_error *err)
{
    const char *where = "problem.generator";
    json_t *kind_v;
    const char *kind;
    pflref_status st;
    if ((st = pflref_json_object(g, where, NULL, err)) ||
        (st = pflref_json_member(g, where, "kind", 1, &kind_v, err)) ||
        (st = pflref_json_string(kind_v, "problem.generator.kind", &kind,
                                 err)))
        return st;
    size_t seed;
    if (strcmp(kind, "tilt") == 0) {
        static const char *const keys[] = {"kind", "K", "n_train", "n_test",
                                           "common_sd", "tilt", "noise_sd",
                                           "seed", NULL};
        pflref_gen_tilt c;
        if ((st = pflref_json_object(g, where, keys, err)) ||
            (st = pflref_json_opt_size(g, where, "K", 1, MAX_COUNT, 6, &c.K,
                                       err)) ||
            (st = pflref_json_opt_size(g, where, "n_train", 1, MAX_COUNT, 14,
                                       &c.n_train, err)) ||
            (st = pflref_json_opt_size(g, where, "n_test", 0, MAX_COUNT, 400,
                                       &c.n_test, err)) ||
            (st = pflref_json_opt_real(g, where, "common_sd", 2.0,
                                       &c.common_sd, err)) ||
            (st = pflref_json_opt_real(g, where, "tilt", 1.5, &c.tilt, err)) ||
            (st = pflref_json_opt_real(g, where, "noise_sd", 1.0, &c.noise_sd,
                                       err)) ||
            (st = pflref_json_opt_size(g, where, "seed", 1, PFLREF_SEED_MAX, 7,
                                       &seed, err)))
            return st;
        c.seed = seed;
        st = pflref_generate_tilt(&c, m, out, err);
    } else if (strcmp(kind, "dirichlet") == 0) {
        static const char *const keys[] = {"kind", "K", "alpha", "n_min",
                                           "n_max", "n_test", "shift", "seed",
                                           NULL};
        pflref_gen_dirichlet c;
        if ((st = pflref_json_object(g, where, keys, err)) ||
            (st = pflref_json_opt_size(g, where, "K", 1, MAX_COUNT, 30, &c.K,
                                       err)) ||
            (st = pflref_json_opt_real(g, where, "alpha", 0.1, &c.alpha,
                                       err)) ||
            (st = pflref_json_opt_size(g, where, "n_min", 1, MAX_COUNT, 50,
                                       &c.n_min, err)) ||
            (st = pflref_json_opt_size(g, where, "n_max", 1, MAX_COUNT, 200,
                                       &c.n_max, err)) ||
            (st = pflref_json_opt_size(g, where, "n_test", 0, MAX_COUNT, 50,
                                       &c.n_test, err)) ||
            (st = pflref_json_opt_real(g, where, "shift", 2.0, &c.shift,
                                       err)) ||
            (st = pflref_json_opt_size(g, where, "seed", 1, PFLREF_SEED_MAX,
                                       42, &seed, err)))
            return st;
        c.seed = seed;
        st = pflref_generate_dirichlet(&c, m, out, err);
    } else {
        return pflref_error_set(err, PFLREF_EINVAL, "problem.generator.kind",
                                "unknown generator \"%s\" (known: tilt, "
                                "dirichlet)", kind);
    }
    if (st == PFLREF_OK) {
        char s[64];
        snprintf(s, sizeof s, "generator:%s", kind);
        *source = pflref_spec_strdup(s);
    } else if (err != NULL && strncmp(err->where, "generator.", 10) == 0) {
        /* The generators name their config fields "generator.<field>". */
        char path[PFLREF_WHERE_MAX];
        snprintf(path, sizeof path, "problem.%s", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}

pflref_status pflref_spec_read_problem(const json_t *root,
                                       const char *base_dir,
                                       const pflref_model *m,
                                       pflref_spec *spec, pflref_error *err)
{
    static const char *const keys[] = {"clients", "file", "generator", NULL};
    json_t *v;
    pflref_status st = pflref_json_member(root, "", "problem", 1, &v, err);
    if (st == PFLREF_OK)
        st = pflref_json_object(v, "problem", keys, err);
    if (st != PFLREF_OK)
        return st;
    json_t *clients = json_object_get(v, "clients");
    json_t *file = json_object_get(v, "file");
    json_t *gen = json_object_get(v, "generator");
    int given = (clients != NULL) + (file != NULL) + (gen != NULL);
    if (given != 1)
        return pflref_error_set(err, PFLREF_EINVAL, "problem",
                                "give exactly one of \"clients\", \"file\" "
                                "and \"generator\" (%d given)", given);
    if (clients != NULL) {
        st = read_clients(clients, "problem.clients", m, &spec->problem, err);
        if (st == PFLREF_OK)
            spec->problem_source = pflref_spec_strdup("inline");
    } else if (file != NULL) {
        const char *path;
        st = pflref_json_string(file, "problem.file", &path, err);
        if (st == PFLREF_OK)
            st = read_problem_file(path, base_dir, "problem.file", m,
                                   &spec->problem, err);
        if (st == PFLREF_OK) {
            size_t n = strlen(path) + 6;
            spec->problem_source = malloc(n);
            if (spec->problem_source != NULL)
                snprintf(spec->problem_source, n, "file:%s", path);
        }
    } else {
        st = read_generator(gen, m, &spec->problem, &spec->problem_source,
                            err);
    }
    if (st == PFLREF_OK && spec->problem_source == NULL)
        st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    if (st == PFLREF_OK)
        st = pflref_problem_validate(spec->problem, err);
    return st;
}
