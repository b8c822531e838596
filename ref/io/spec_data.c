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
 *
 * Data in files: wherever a client gives X, y, X_test, y_test, X_val or
 * y_val, the value may be a string instead of an array: the path of a
 * NumPy .npy file, or "ARCHIVE.npz:MEMBER" for a member of a .npz archive,
 * relative to the folder of the JSON file that names it (ref/io/npy.c).
 * A '<f8' .npy file is used in place: the client's array points into the
 * file's mapping, which the problem holds (pflref_problem_hold) and marks
 * borrowed; everything else is widened into an owned array.  Each file is
 * hashed (SHA-256) once, when first named, into spec->data_files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/arrays.h"
#include "io/digest.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "io/spec_read.h"

#define MAX_COUNT PFLREF_SPEC_MAX_COUNT

/* Where the data files a problem names are found and recorded. */
typedef struct {
    const char *base_dir;   /* the folder of the JSON file naming them  */
    pflref_spec *spec;      /* spec->data_files: each file once         */
    pflref_problem *p;      /* holds the mappings used in place         */
    pflref_json_numerics *nums; /* the arrays lifted from the JSON text
                               (pflref_json_lift), or NULL             */
} data_ctx;

/* The entry of spec->data_files for `path`: *known = 1 when it is there
 * already, else a new entry is appended (*known = 0) for the caller to
 * fill.  NULL when memory is short. */
static pflref_data_file *data_file_entry(pflref_spec *spec, const char *path,
                                         int *known)
{
    for (size_t i = 0; i < spec->n_data_files; i++)
        if (strcmp(spec->data_files[i].path, path) == 0) {
            *known = 1;
            return &spec->data_files[i];
        }
    *known = 0;
    pflref_data_file *grown = realloc(spec->data_files,
                                      (spec->n_data_files + 1) *
                                          sizeof *grown);
    if (grown == NULL)
        return NULL;
    spec->data_files = grown;
    pflref_data_file *f = &grown[spec->n_data_files];
    *f = (pflref_data_file){.path = pflref_spec_strdup(path)};
    if (f->path == NULL)
        return NULL;
    spec->n_data_files++;
    return f;
}

/* The array named by the string `ref` (a .npy path or "ARCHIVE.npz:MEMBER")
 * at JSON path `where` into *a; a mapping used in place is handed to
 * ctx->p at once, so on success a->data is borrowed when a->map is set and
 * owned (free() it) otherwise. */
static pflref_status load_array(const char *ref, const char *where,
                                const data_ctx *ctx, pflref_npy_array *a,
                                pflref_error *err)
{
    char file[PFLREF_PATH_MAX], full[PFLREF_PATH_MAX];
    const char *member;
    pflref_status st = pflref_array_ref_split(ref, where, file, sizeof file,
                                              &member, err);
    if (st != PFLREF_OK)
        return st;
    pflref_array_ref_path(file, ctx->base_dir, full, sizeof full);
    int known;
    pflref_data_file *rec = data_file_entry(ctx->spec, file, &known);
    if (rec == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    pflref_npy_digest dg = {.bytes = 0}, *want = known ? NULL : &dg;
    st = member != NULL
             ? pflref_npz_load(full, member, ref, where, a, want, err)
             : pflref_npy_load(full, file, where, a, want, err);
    if (st == PFLREF_OK && want != NULL) {
        memcpy(rec->sha256, dg.hex, sizeof rec->sha256);
        rec->bytes = dg.bytes;
        /* a mapping used in place is hashed on the second thread */
        if (dg.hex[0] == '\0' &&
            !pflref_digest_queue(&ctx->spec->digests, a->map, a->map_len,
                                 (size_t)(rec - ctx->spec->data_files)))
            pflref_sha256_hex(a->map, a->map_len, rec->sha256);
    }
    if (st == PFLREF_OK && a->map != NULL)
        st = pflref_problem_hold(ctx->p, a->map, a->map_len, pflref_npy_unmap,
                                 err);
    if (st != PFLREF_OK && !known) {
        /* the entry of a file that could not be read is dropped */
        free(rec->path);
        ctx->spec->n_data_files--;
    }
    if (st != PFLREF_OK)
        *a = (pflref_npy_array){.data = NULL};
    return st;
}

/* The array of a data file checked against its field: X (is_x) 2-D with d
 * columns of floats, y 1-D, integer labels only for a classifier. */
static pflref_status check_array(const pflref_npy_array *a, int is_x,
                                 const char *name, const char *where,
                                 const pflref_model *m, pflref_error *err)
{
    const char *descr = pflref_npy_descr(a->h.dtype);
    const int is_float = a->h.dtype == PFLREF_NPY_F8 ||
                         a->h.dtype == PFLREF_NPY_F4;
    if (is_x && (a->h.ndim != 2 || a->h.shape[1] != m->d))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: header field 'shape' has %zu dimensions "
                                "%s%zu columns: features X are (n, d) with "
                                "d = %zu", name, a->h.ndim,
                                a->h.ndim == 2 ? "and " : "(",
                                a->h.ndim == 2 ? a->h.shape[1] : (size_t)0,
                                m->d);
    if (!is_x && a->h.ndim != 1)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: header field 'shape' has %zu dimensions:"
                                " labels y are 1-D (n,)", name, a->h.ndim);
    if (is_x && !is_float)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: header field 'descr' is '%s': features "
                                "X are '<f8' or '<f4'", name, descr);
    if (!is_x && !is_float && !pflref_model_is_classifier(m))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: header field 'descr' is '%s' (integer "
                                "labels) but the model is a regression: "
                                "targets y are '<f8' or '<f4'", name, descr);
    return PFLREF_OK;
}

/* One field (X or y) of a data set: an array lifted from the text (*lift,
 * *n its rows), a data file when v is a string (*a loaded and checked, *n
 * its rows), else a JSON array (*n its length). */
static pflref_status read_field(const json_t *v, int is_x, const char *where,
                                const pflref_model *m, const data_ctx *ctx,
                                pflref_json_numeric **lift,
                                pflref_npy_array *a, size_t *n,
                                pflref_error *err)
{
    *lift = pflref_json_numeric_of(v, ctx->nums);
    if (*lift != NULL && (*lift)->v != NULL) {
        *n = (*lift)->rows;
        return PFLREF_OK;
    }
    *lift = NULL;
    if (!json_is_string(v))
        return pflref_json_array(v, where, 1, n, err);
    const char *ref = json_string_value(v);
    pflref_status st = load_array(ref, where, ctx, a, err);
    if (st == PFLREF_OK)
        st = check_array(a, is_x, ref, where, m, err);
    *n = a->h.shape[0];
    return st;
}

/* " (FILE)" after a field given as a data file, for messages: three
 * printf arguments for "%s%s%s". */
#define FILE_NAMED(v)                                                    \
    file_name(v) != NULL ? " (" : "",                                     \
        file_name(v) != NULL ? file_name(v) : "",                         \
        file_name(v) != NULL ? ")" : ""

/* The data file a field names: its string, unless the string is a
 * placeholder of a lifted array (which starts with 0x01); else NULL. */
static const char *file_name(const json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    return s != NULL && s[0] != '\x01' ? s : NULL;
}

/* A lifted matrix as X (where: its JSON path): every row has d numbers,
 * else the first that has not is named as pflref_json_matrix names it. */
static pflref_status lifted_rows(const pflref_json_numeric *a,
                                 const char *where, size_t d,
                                 pflref_error *err)
{
    for (size_t i = 0; i < a->rows; i++)
        if (a->row_len[i] != d) {
            char path[PFLREF_WHERE_MAX];
            pflref_json_index_path(path, sizeof path, where, i);
            return pflref_error_set(err, PFLREF_EINVAL, path,
                                    "expected %zu numbers, found %zu", d,
                                    a->row_len[i]);
        }
    return PFLREF_OK;
}

/* A file or lifted array a (if any) into *slot, replacing the allocated
 * one, when reading succeeded (st); a mapping's array is borrowed (`bit`
 * set in cl->borrowed: the problem holds the mapping).  On failure an
 * owned array is freed. */
static void adopt(double **slot, const pflref_npy_array *a, pflref_status st,
                  pflref_client *cl, unsigned bit)
{
    if (a->data == NULL)
        return;
    if (st != PFLREF_OK) {
        if (a->map == NULL)
            free(a->data);
        return;
    }
    free(*slot);
    *slot = a->data;
    if (a->map != NULL)
        cl->borrowed |= bit;
}

/* Read one data set of a client: keys X/y (or X_test/y_test, X_val/y_val),
 * each an array or a data file; `bits` are the client's
 * PFLREF_BORROWED_* bits for this set's X and y (x first). */
static pflref_status read_xy(const json_t *c, const char *where,
                             const char *xkey, const char *ykey,
                             const pflref_model *m, const data_ctx *ctx,
                             pflref_client *cl, pflref_data *D,
                             const unsigned bits[2], pflref_error *err)
{
    char xp[PFLREF_WHERE_MAX], yp[PFLREF_WHERE_MAX];
    pflref_json_key_path(xp, sizeof xp, where, xkey);
    pflref_json_key_path(yp, sizeof yp, where, ykey);
    json_t *X = json_object_get(c, xkey), *y = json_object_get(c, ykey);
    if (X == NULL || y == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, X == NULL ? xp : yp,
                                "required field \"%s\" is missing",
                                X == NULL ? xkey : ykey);
    pflref_npy_array ax = {.data = NULL}, ay = {.data = NULL};
    pflref_json_numeric *lx = NULL, *ly = NULL;
    size_t n = 0, ny = 0;
    pflref_status st = read_field(X, 1, xp, m, ctx, &lx, &ax, &n, err);
    if (st == PFLREF_OK)
        st = read_field(y, 0, yp, m, ctx, &ly, &ay, &ny, err);
    if (st == PFLREF_OK && n != ny)
        st = pflref_error_set(err, PFLREF_EINVAL, yp,
                              "%s%s%s%s has %zu rows but %s%s%s%s has %zu "
                              "entries", xkey, FILE_NAMED(X), n, ykey,
                              FILE_NAMED(y), ny);
    /* Arrays from JSON nodes need buffers; lifted and file arrays come
     * with their own. */
    const int from_x = ax.data != NULL || lx != NULL;
    const int from_y = ay.data != NULL || ly != NULL;
    if (st == PFLREF_OK && (!from_x || !from_y))
        st = pflref_data_alloc(D, m, n, err);
    else if (st == PFLREF_OK)
        *D = (pflref_data){.n = n};
    if (st == PFLREF_OK)
        st = lx != NULL ? lifted_rows(lx, xp, m->d, err)
             : from_x   ? PFLREF_OK
                        : pflref_json_matrix(X, xp, n, m->d, D->X, err);
    if (st == PFLREF_OK && !from_y)
        st = pflref_json_vector(y, yp, n, D->y, err);
    /* A lifted array is taken from the table, as an owned one. */
    if (st == PFLREF_OK && lx != NULL) {
        ax = (pflref_npy_array){.data = lx->v};
        lx->v = NULL;
    }
    if (st == PFLREF_OK && ly != NULL) {
        ay = (pflref_npy_array){.data = ly->v};
        ly->v = NULL;
    }
    /* The file and lifted arrays replace the allocated ones; a mapping's
     * are borrowed (the problem holds the mapping). */
    adopt(&D->X, &ax, st, cl, bits[0]);
    adopt(&D->y, &ay, st, cl, bits[1]);
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
                                 const pflref_model *m, const data_ctx *ctx,
                                 pflref_client *cl, pflref_error *err)
{
    static const unsigned train_bits[2] = {PFLREF_BORROWED_TRAIN_X,
                                           PFLREF_BORROWED_TRAIN_Y};
    static const unsigned test_bits[2] = {PFLREF_BORROWED_TEST_X,
                                          PFLREF_BORROWED_TEST_Y};
    static const unsigned val_bits[2] = {PFLREF_BORROWED_VAL_X,
                                         PFLREF_BORROWED_VAL_Y};
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
    if ((st = read_xy(c, where, "X", "y", m, ctx, cl, &cl->train,
                          train_bits, err)) ||
        (st = validate_data(m, &cl->train, where, "", err)))
        return st;
    if (json_object_get(c, "X_test") != NULL ||
        json_object_get(c, "y_test") != NULL) {
        if ((st = read_xy(c, where, "X_test", "y_test", m, ctx, cl,
                          &cl->test, test_bits, err)) ||
            (st = validate_data(m, &cl->test, where, "_test", err)))
            return st;
    }
    /* The validation split (X_val, y_val): optional, both or neither. */
    if (json_object_get(c, "X_val") != NULL ||
        json_object_get(c, "y_val") != NULL) {
        if ((st = read_xy(c, where, "X_val", "y_val", m, ctx, cl,
                          &cl->val, val_bits, err)) ||
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

/* The clients of array arr (at `where`) for model m into *out; `in`
 * gives the folder for data files, the spec and the lifted arrays (its p
 * is set here). */
static pflref_status read_clients(const json_t *arr, const char *where,
                                  const pflref_model *m, data_ctx in,
                                  pflref_problem **out, pflref_error *err)
{
    size_t N;
    pflref_status st = pflref_json_array(arr, where, 1, &N, err);
    if (st != PFLREF_OK)
        return st;
    pflref_problem *p = pflref_problem_alloc(m, N);
    if (p == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    const data_ctx ctx = {.base_dir = in.base_dir, .spec = in.spec, .p = p,
                          .nums = in.nums};
    for (size_t i = 0; i < N && st == PFLREF_OK; i++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, i);
        const pflref_client *c = &p->clients[i], *c0 = &p->clients[0];
        if ((st = read_client(json_array_get(arr, i), path, m, &ctx,
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
                                       pflref_spec *spec,
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
    /* The data arrays are lifted from the text (owned here) in place; a
     * text that does not parse is read again, so that the error names the
     * original's line and column. */
    pflref_json_numerics nums = {.a = NULL};
    size_t llen = len;
    const size_t lifted = pflref_json_lift(text, &llen, &nums);
    json_t *root;
    st = pflref_json_parse(text, llen, full, &root, err);
    free(text);
    if (st != PFLREF_OK && lifted > 0 &&
        pflref_read_file(full, &text, &len, NULL) == PFLREF_OK) {
        st = pflref_json_parse(text, len, full, &root, err);
        free(text);
    }
    if (st != PFLREF_OK) {
        pflref_json_numerics_free(&nums);
        return st;
    }
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
    /* Data files named in the problem file are relative to its folder. */
    char folder[PFLREF_PATH_MAX];
    pflref_file_folder(full, folder, sizeof folder);
    const data_ctx in = {.base_dir = folder, .spec = spec, .nums = &nums};
    if (st == PFLREF_OK)
        st = read_clients(clients, cpath, m, in, &spec->problem, err);
    json_decref(root);
    pflref_json_numerics_free(&nums);
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
                                       pflref_json_numerics *nums,
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
        const data_ctx in = {.base_dir = base_dir, .spec = spec,
                             .nums = nums};
        st = read_clients(clients, "problem.clients", m, in, &spec->problem,
                          err);
        if (st == PFLREF_OK)
            spec->problem_source = pflref_spec_strdup("inline");
    } else if (file != NULL) {
        const char *path;
        st = pflref_json_string(file, "problem.file", &path, err);
        if (st == PFLREF_OK)
            st = read_problem_file(path, base_dir, "problem.file", m, spec,
                                   err);
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
    /* the problem is read: its files' digests start on the second thread */
    if (st == PFLREF_OK)
        pflref_digest_start(spec->digests, spec->data_files);
    return st;
}
