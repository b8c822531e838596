/* ref/io_spec.c: reading and validating a spec (format pflref-spec/1,
 * documented in docs/formats.md and docs/schema/spec.schema.json).
 *
 * Reading order (each step validated before the next uses it): format,
 * model, problem (inline clients, a problem file, or a generator), split,
 * algorithm (name, preset, hyperparameters, switches), init, schedule
 * (generated from seeds, or given), output.  Every error names the JSON path
 * of the offending value; nothing is half-built on return.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "io/json.h"

/* Client arrays are at most this long, so no count taken from a spec can
 * make the reader allocate beyond what the data in the file justifies. */
#define MAX_COUNT ((size_t)1 << 31)

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* ---- model ------------------------------------------------------------ */

/* The "model" object.  Keys: kind, d, k, h, loss, bias, and for the mlp
 * only activation ("relu" | "identity", default relu) and hidden_bias
 * (default: bias).  The mlp's loss is cross_entropy (default; k >= 2
 * required) or half_squared / squared (one output: k omitted or 1); its
 * bias (b2, default true) and hidden_bias (b1) may be false. */
static pflref_status read_model(const json_t *root, pflref_model *m,
                                pflref_error *err)
{
    static const char *const keys[] = {"kind", "d", "k", "h", "loss", "bias",
                                       "activation", "hidden_bias", NULL};
    json_t *v;
    pflref_status st = pflref_json_member(root, "", "model", 1, &v, err);
    if (st != PFLREF_OK)
        return st;
    if ((st = pflref_json_object(v, "model", keys, err)) != PFLREF_OK)
        return st;
    json_t *kind_v;
    const char *kind;
    if ((st = pflref_json_member(v, "model", "kind", 1, &kind_v, err)) ||
        (st = pflref_json_string(kind_v, "model.kind", &kind, err)))
        return st;
    pflref_model_kind mk;
    pflref_loss loss;
    if (strcmp(kind, "quadratic") == 0) {
        mk = PFLREF_MODEL_QUADRATIC;
        loss = PFLREF_LOSS_QUADRATIC;
    } else if (strcmp(kind, "linear") == 0) {
        mk = PFLREF_MODEL_LINEAR;
        loss = PFLREF_LOSS_HALF_SQUARED;
    } else if (strcmp(kind, "softmax") == 0) {
        mk = PFLREF_MODEL_SOFTMAX;
        loss = PFLREF_LOSS_CROSS_ENTROPY;
    } else if (strcmp(kind, "mlp") == 0) {
        mk = PFLREF_MODEL_MLP;
        loss = PFLREF_LOSS_CROSS_ENTROPY;
    } else {
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "unknown model \"%s\" (known: quadratic, "
                                "linear, softmax, mlp)", kind);
    }
    const int mlp = mk == PFLREF_MODEL_MLP;
    json_t *loss_v = json_object_get(v, "loss");
    if (loss_v != NULL) {
        const char *ln;
        if ((st = pflref_json_string(loss_v, "model.loss", &ln, err)))
            return st;
        const int squared_ok = mk == PFLREF_MODEL_LINEAR || mlp;
        if (squared_ok && strcmp(ln, "squared") == 0)
            loss = PFLREF_LOSS_SQUARED;
        else if (squared_ok && strcmp(ln, "half_squared") == 0)
            loss = PFLREF_LOSS_HALF_SQUARED;
        else if (strcmp(ln, pflref_loss_name(loss)) != 0)
            return pflref_error_set(
                err, PFLREF_EINVAL, "model.loss",
                "loss \"%s\" does not fit model %s (%s)", ln, kind,
                mk == PFLREF_MODEL_LINEAR ? "squared or half_squared"
                : mlp ? "cross_entropy, squared or half_squared"
                      : pflref_loss_name(loss));
    } else if (mk == PFLREF_MODEL_LINEAR) {
        return pflref_error_set(err, PFLREF_EINVAL, "model.loss",
                                "a linear model needs \"loss\": \"squared\" "
                                "or \"half_squared\"");
    }
    /* A classifier has k >= 2 classes; the squared-loss mlp one output. */
    const int classes = mk == PFLREF_MODEL_SOFTMAX ||
                        (mlp && loss == PFLREF_LOSS_CROSS_ENTROPY);
    size_t d, k = 1, h = 0;
    int bias = mlp;
    json_t *d_v;
    if ((st = pflref_json_member(v, "model", "d", 1, &d_v, err)) ||
        (st = pflref_json_size(d_v, "model.d", 1, MAX_COUNT, &d, err)))
        return st;
    json_t *k_v = json_object_get(v, "k"), *h_v = json_object_get(v, "h");
    if (classes) {
        if ((st = pflref_json_member(v, "model", "k", 1, &k_v, err)) ||
            (st = pflref_json_size(k_v, "model.k", 2, MAX_COUNT, &k, err)))
            return st;
    } else if (mlp && k_v != NULL) {
        if ((st = pflref_json_size(k_v, "model.k", 1, MAX_COUNT, &k, err)))
            return st;
        if (k != 1)
            return pflref_error_set(err, PFLREF_EINVAL, "model.k",
                                    "k = %zu: an mlp with the %s loss has "
                                    "one output (k = 1)",
                                    k, pflref_loss_name(loss));
    } else if (k_v != NULL) {
        return pflref_error_set(err, PFLREF_EINVAL, "model.k",
                                "model %s has no classes", kind);
    }
    if (mlp) {
        if ((st = pflref_json_member(v, "model", "h", 1, &h_v, err)) ||
            (st = pflref_json_size(h_v, "model.h", 1, MAX_COUNT, &h, err)))
            return st;
    } else if (h_v != NULL) {
        return pflref_error_set(err, PFLREF_EINVAL, "model.h",
                                "model %s has no hidden layer", kind);
    }
    json_t *b_v = json_object_get(v, "bias");
    if (b_v != NULL) {
        if ((st = pflref_json_bool(b_v, "model.bias", &bias, err)))
            return st;
        if (mk == PFLREF_MODEL_QUADRATIC && bias)
            return pflref_error_set(err, PFLREF_EINVAL, "model.bias",
                                    "the quadratic model has no bias");
    }
    /* mlp only: the hidden activation and the hidden bias b1. */
    pflref_activation act = PFLREF_ACT_RELU;
    int hidden_bias = bias;
    json_t *act_v = json_object_get(v, "activation");
    json_t *hb_v = json_object_get(v, "hidden_bias");
    if (!mlp && (act_v != NULL || hb_v != NULL)) {
        const char *key = act_v != NULL ? "activation" : "hidden_bias";
        return pflref_error_set(err, PFLREF_EINVAL,
                                act_v != NULL ? "model.activation"
                                              : "model.hidden_bias",
                                "model %s has no hidden layer (\"%s\" is for "
                                "the mlp only)",
                                kind, key);
    }
    if (act_v != NULL) {
        const char *an;
        if ((st = pflref_json_string(act_v, "model.activation", &an, err)))
            return st;
        if (strcmp(an, "relu") == 0)
            act = PFLREF_ACT_RELU;
        else if (strcmp(an, "identity") == 0)
            act = PFLREF_ACT_IDENTITY;
        else
            return pflref_error_set(err, PFLREF_EINVAL, "model.activation",
                                    "unknown activation \"%s\" (known: relu, "
                                    "identity)", an);
    }
    if (hb_v != NULL &&
        (st = pflref_json_bool(hb_v, "model.hidden_bias", &hidden_bias, err)))
        return st;
    if (mlp)
        st = pflref_model_init_mlp(m, loss, d, k, h, act, hidden_bias, bias,
                                   err);
    else
        st = pflref_model_init(m, mk, loss, d, k, h, bias, err);
    if (st != PFLREF_OK && err != NULL && err->where[0] != '\0') {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, "model", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}

/* ---- problem ---------------------------------------------------------- */

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
        st = read_client(json_array_get(arr, i), path, m, &p->clients[i], err);
        /* Test data: every client or none (metrics compare clients). */
        if (st == PFLREF_OK && i > 0 &&
            (p->clients[i].test.n > 0) != (p->clients[0].test.n > 0))
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "client %zu %s test data but client 0 %s; "
                                  "give X_test and y_test to every client or "
                                  "to none", i,
                                  p->clients[i].test.n > 0 ? "has" : "has no",
                                  p->clients[0].test.n > 0 ? "has" : "has "
                                                                     "none");
        /* The validation split: every client or none, like test data. */
        if (st == PFLREF_OK && i > 0 &&
            (p->clients[i].val.n > 0) != (p->clients[0].val.n > 0))
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "client %zu %s a validation split but "
                                  "client 0 %s; give X_val and y_val to "
                                  "every client or to none", i,
                                  p->clients[i].val.n > 0 ? "has" : "has no",
                                  p->clients[0].val.n > 0 ? "has one"
                                                          : "has none");
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
    char full[4096];
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
    char cpath[PFLREF_WHERE_MAX], fpath[PFLREF_WHERE_MAX],
        ppath[PFLREF_WHERE_MAX];
    pflref_json_key_path(cpath, sizeof cpath, prefix, "clients");
    pflref_json_key_path(fpath, sizeof fpath, prefix, "format");
    pflref_json_key_path(ppath, sizeof ppath, prefix, "provenance");
    json_t *fmt, *clients;
    const char *f;
    st = pflref_json_object(root, prefix, keys, err);
    if (st == PFLREF_OK)
        st = pflref_json_member(root, prefix, "format", 1, &fmt, err);
    if (st == PFLREF_OK)
        st = pflref_json_string(fmt, fpath, &f, err);
    if (st == PFLREF_OK && strcmp(f, PFLREF_PROBLEM_FORMAT) != 0)
        st = pflref_error_set(err, PFLREF_EINVAL, fpath,
                              "format is \"%s\", expected \"%s\"", f,
                              PFLREF_PROBLEM_FORMAT);
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
    if (!json_is_object(g))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected an object, found %s",
                                pflref_json_type_name(g));
    if ((st = pflref_json_member(g, where, "kind", 1, &kind_v, err)) ||
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
        *source = dup_string(s);
    } else if (err != NULL && strncmp(err->where, "generator.", 10) == 0) {
        /* The generators name their config fields "generator.<field>". */
        char path[PFLREF_WHERE_MAX];
        snprintf(path, sizeof path, "problem.%s", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}

static pflref_status read_problem(const json_t *root, const char *base_dir,
                                  const pflref_model *m, pflref_spec *spec,
                                  pflref_error *err)
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
            spec->problem_source = dup_string("inline");
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

/* ---- split, algorithm, init ------------------------------------------- */

static pflref_status read_split(const json_t *root, const pflref_model *m,
                                pflref_split *split, pflref_error *err)
{
    memset(split, 0, sizeof *split);
    json_t *v = json_object_get(root, "split");
    if (v == NULL)
        return PFLREF_OK;
    static const char *const keys[] = {"personal", NULL};
    json_t *list;
    size_t n;
    pflref_status st;
    if ((st = pflref_json_object(v, "split", keys, err)) ||
        (st = pflref_json_member(v, "split", "personal", 1, &list, err)) ||
        (st = pflref_json_array(list, "split.personal", 0, &n, err)))
        return st;
    if (n > 4 * PFLREF_MAX_BLOCKS)
        return pflref_error_set(err, PFLREF_EINVAL, "split.personal",
                                "too many names (%zu)", n);
    const char *names[4 * PFLREF_MAX_BLOCKS];
    for (size_t j = 0; j < n; j++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, "split.personal", j);
        if ((st = pflref_json_string(json_array_get(list, j), path, &names[j],
                                     err)))
            return st;
    }
    return pflref_split_from_names(m, names, n, "split.personal", split, err);
}

static pflref_status read_params(const json_t *obj, const char *where,
                                 pflref_param_type type,
                                 const pflref_algorithm *alg,
                                 pflref_hyper *hyper, pflref_error *err)
{
    if (!json_is_object(obj))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected an object, found %s",
                                pflref_json_type_name(obj));
    /* Visit keys in sorted order so the first error reported does not
     * depend on jansson's hash order. */
    size_t n = json_object_size(obj);
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (keys == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        (void)value;
        size_t j = i++;
        while (j > 0 && strcmp(keys[j - 1], key) > 0) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = key;
    }
    pflref_status st = PFLREF_OK;
    for (i = 0; i < n && st == PFLREF_OK; i++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, where, keys[i]);
        const pflref_param *p = pflref_param_find_for(keys[i], alg->name);
        const json_t *v = json_object_get(obj, keys[i]);
        if (p == NULL)
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "unknown %s \"%s\" (see `pflref list`)",
                                  type == PFLREF_PARAM_REAL ? "hyperparameter"
                                                            : "switch",
                                  keys[i]);
        else if ((p->type == PFLREF_PARAM_ENUM) !=
                 (type == PFLREF_PARAM_ENUM))
            st = pflref_error_set(
                err, PFLREF_EINVAL, path, "%s is a %s; give it under "
                "algorithm.%s", keys[i],
                p->type == PFLREF_PARAM_ENUM ? "switch" : "hyperparameter",
                p->type == PFLREF_PARAM_ENUM ? "switches" : "hyperparameters");
        else if (!pflref_name_in_list(p->algorithms, alg->name))
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "%s does not apply to %s (it applies to: "
                                  "%s)", keys[i], alg->name, p->algorithms);
        else if (p->type == PFLREF_PARAM_REAL) {
            double x;
            st = pflref_json_real(v, path, &x, err);
            if (st == PFLREF_OK)
                st = pflref_hyper_set_real(hyper, p, x, path, err);
        } else if (p->type == PFLREF_PARAM_INT) {
            size_t count;
            st = pflref_json_size(v, path, 0, MAX_COUNT, &count, err);
            if (st == PFLREF_OK)
                st = pflref_hyper_set_int(hyper, p, count, path, err);
        } else {
            const char *s;
            st = pflref_json_string(v, path, &s, err);
            if (st == PFLREF_OK)
                st = pflref_hyper_set_enum(hyper, p, s, path, err);
        }
    }
    free(keys);
    return st;
}

static pflref_status read_algorithm(const json_t *root, pflref_spec *spec,
                                    pflref_error *err)
{
    static const char *const keys[] = {"name", "preset", "hyperparameters",
                                       "switches", NULL};
    json_t *v, *name_v;
    const char *name;
    pflref_status st;
    if ((st = pflref_json_member(root, "", "algorithm", 1, &v, err)) ||
        (st = pflref_json_object(v, "algorithm", keys, err)) ||
        (st = pflref_json_member(v, "algorithm", "name", 1, &name_v, err)) ||
        (st = pflref_json_string(name_v, "algorithm.name", &name, err)))
        return st;
    spec->algorithm = pflref_algorithm_find(name);
    if (spec->algorithm == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "algorithm.name",
                                "unknown algorithm \"%s\" (see `pflref list`)",
                                name);
    const char *preset = "paper";
    json_t *preset_v = json_object_get(v, "preset");
    if (preset_v != NULL &&
        (st = pflref_json_string(preset_v, "algorithm.preset", &preset, err)))
        return st;
    /* The preset first; explicit settings below override it. */
    if ((st = pflref_preset_apply(&spec->hyper, name, preset,
                                  "algorithm.preset", err)))
        return st;
    spec->preset = dup_string(preset);
    if (spec->preset == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    /* A preset that implies a split (FedRep's personal head, ...) sets it
     * unless the spec gives its own "split". */
    const pflref_preset *pre = pflref_preset_find(name, preset);
    if (pre != NULL && pre->split != NULL &&
        json_object_get(root, "split") == NULL &&
        (st = pflref_split_from_names(&spec->problem->model, &pre->split, 1,
                                      "algorithm.preset", &spec->hyper.split,
                                      err)))
        return st;
    json_t *hp = json_object_get(v, "hyperparameters");
    json_t *sw = json_object_get(v, "switches");
    if (hp != NULL &&
        (st = read_params(hp, "algorithm.hyperparameters", PFLREF_PARAM_REAL,
                          spec->algorithm, &spec->hyper, err)))
        return st;
    if (sw != NULL &&
        (st = read_params(sw, "algorithm.switches", PFLREF_PARAM_ENUM,
                          spec->algorithm, &spec->hyper, err)))
        return st;
    return PFLREF_OK;
}

/* init.cluster_models: IFCA's k initial cluster models θ_j⁰, k arrays of P
 * numbers (cluster 0 first), k = ifca.k; absent: NULL (the models follow
 * from w⁰, ifca.init_shift and ifca.init_sd). */
static pflref_status read_cluster_models(const json_t *v, pflref_spec *spec,
                                         pflref_error *err)
{
    const json_t *c = json_object_get(v, "cluster_models");
    if (c == NULL)
        return PFLREF_OK;
    static const char *const where = "init.cluster_models";
    if (strcmp(spec->algorithm->name, "ifca") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only ifca takes initial cluster models "
                                "(the algorithm is %s)",
                                spec->algorithm->name);
    const size_t P = spec->problem->model.P, k = spec->hyper.ifca.k;
    size_t rows;
    pflref_status st = pflref_json_array(c, where, 1, &rows, err);
    if (st != PFLREF_OK)
        return st;
    if (k == PFLREF_INT_UNSET)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "give ifca.k with the initial cluster models");
    if (rows != k)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected ifca.k = %zu models, found %zu", k,
                                rows);
    if (k > PFLREF_MAX_PARAMS / P)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%zu models × %zu parameters exceed the "
                                "limit of %zu", k, P,
                                (size_t)PFLREF_MAX_PARAMS);
    spec->cluster_models = malloc(k * P * sizeof *spec->cluster_models);
    if (spec->cluster_models == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    spec->n_cluster_models = k;
    spec->hyper.ifca.theta0 = spec->cluster_models;
    return pflref_json_matrix(c, where, k, P, spec->cluster_models, err);
}

static pflref_status read_init(const json_t *root, pflref_spec *spec,
                               pflref_error *err)
{
    const size_t P = spec->problem->model.P;
    spec->w0 = calloc(P, sizeof *spec->w0);
    if (spec->w0 == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init", "out of memory");
    spec->init_kind = PFLREF_INIT_ZEROS;
    json_t *v = json_object_get(root, "init");
    if (v == NULL)
        return PFLREF_OK;
    static const char *const keys[] = {"kind", "w", "seed", "sd", "scale",
                                       "cluster_models", NULL};
    json_t *kind_v;
    const char *kind;
    pflref_status st;
    if ((st = pflref_json_object(v, "init", keys, err)) ||
        (st = read_cluster_models(v, spec, err)) ||
        (st = pflref_json_member(v, "init", "kind", 1, &kind_v, err)) ||
        (st = pflref_json_string(kind_v, "init.kind", &kind, err)))
        return st;
    /* Which keys each kind takes. */
    int takes_w = strcmp(kind, "given") == 0;
    int takes_seed = strcmp(kind, "gaussian") == 0 ||
                     strcmp(kind, "uniform") == 0;
    if (!takes_w && !takes_seed && strcmp(kind, "zeros") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "init.kind",
                                "unknown init \"%s\" (known: zeros, given, "
                                "gaussian, uniform)", kind);
    static const char *const extra[] = {"w", "seed", "sd", "scale"};
    for (size_t j = 0; j < 4; j++) {
        int ok = (j == 0 && takes_w) || (j == 1 && takes_seed) ||
                 (j == 2 && strcmp(kind, "gaussian") == 0) ||
                 (j == 3 && strcmp(kind, "uniform") == 0);
        if (!ok && json_object_get(v, extra[j]) != NULL) {
            char path[PFLREF_WHERE_MAX];
            pflref_json_key_path(path, sizeof path, "init", extra[j]);
            return pflref_error_set(err, PFLREF_EINVAL, path,
                                    "init kind \"%s\" takes no \"%s\"", kind,
                                    extra[j]);
        }
    }
    if (takes_w) {
        json_t *w;
        spec->init_kind = PFLREF_INIT_GIVEN;
        if ((st = pflref_json_member(v, "init", "w", 1, &w, err)))
            return st;
        return pflref_json_vector(w, "init.w", P, spec->w0, err);
    }
    if (takes_seed) {
        size_t seed;
        double scale;
        json_t *seed_v;
        int gauss = strcmp(kind, "gaussian") == 0;
        const char *skey = gauss ? "sd" : "scale";
        char spath[PFLREF_WHERE_MAX];
        pflref_json_key_path(spath, sizeof spath, "init", skey);
        json_t *scale_v;
        if ((st = pflref_json_member(v, "init", "seed", 1, &seed_v, err)) ||
            (st = pflref_json_size(seed_v, "init.seed", 1, PFLREF_SEED_MAX,
                                   &seed, err)) ||
            (st = pflref_json_member(v, "init", skey, 1, &scale_v, err)) ||
            (st = pflref_json_real(scale_v, spath, &scale, err)))
            return st;
        if (!(scale >= 0.0))
            return pflref_error_set(err, PFLREF_EINVAL, spath,
                                    "%s must be >= 0", skey);
        spec->init_kind = gauss ? PFLREF_INIT_GAUSSIAN : PFLREF_INIT_UNIFORM;
        spec->init_seed = seed;
        spec->init_scale = scale;
        return gauss ? pflref_draw_gaussian(seed, scale, spec->w0, P, err)
                     : pflref_draw_uniform(seed, scale, spec->w0, P, err);
    }
    return PFLREF_OK;
}

/* ---- schedule ----------------------------------------------------------- */

static pflref_status read_work(const json_t *w, const char *where,
                               pflref_local_work *work, pflref_error *err)
{
    static const char *const keys[] = {"epochs", "steps", "batch_size", NULL};
    pflref_status st;
    if ((st = pflref_json_object(w, where, keys, err)) ||
        (st = pflref_json_opt_size(w, where, "epochs", 1, MAX_COUNT, 0,
                                   &work->epochs, err)) ||
        (st = pflref_json_opt_size(w, where, "steps", 1, MAX_COUNT, 0,
                                   &work->steps, err)) ||
        (st = pflref_json_opt_size(w, where, "batch_size", 0, MAX_COUNT, 0,
                                   &work->B, err)))
        return st;
    if ((work->epochs == 0) == (work->steps == 0))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "give exactly one of \"epochs\" and \"steps\"");
    return PFLREF_OK;
}

/* One client's given batches: an array of steps, each an array of sample
 * indices. */
static pflref_status read_batches(const json_t *v, const char *where,
                                  pflref_batches *b, pflref_error *err)
{
    size_t nsteps, total = 0, len;
    pflref_status st = pflref_json_array(v, where, 0, &nsteps, err);
    for (size_t s = 0; st == PFLREF_OK && s < nsteps; s++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, s);
        st = pflref_json_array(json_array_get(v, s), path, 1, &len, err);
        total += len;
    }
    if (st == PFLREF_OK)
        st = pflref_batches_alloc(b, nsteps, total, err);
    for (size_t s = 0; st == PFLREF_OK && s < nsteps; s++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, s);
        const json_t *step = json_array_get(v, s);
        len = json_array_size(step);
        b->step_off[s + 1] = b->step_off[s] + len;
        /* Indices are range-checked against the client by
         * pflref_schedule_validate; here only their type. */
        st = pflref_json_indices(step, path, len, MAX_COUNT,
                                 b->idx + b->step_off[s], err);
    }
    return st;
}

/* "post" is present exactly when the algorithm has a phase after training. */
static pflref_status check_post(const json_t *post, const pflref_spec *spec,
                                pflref_error *err)
{
    if (post != NULL && !spec->algorithm->needs_post &&
        !spec->algorithm->allows_post)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                "%s has no post-training phase",
                                spec->algorithm->name);
    if (post == NULL && spec->algorithm->needs_post)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                "%s needs the post-training phase's work "
                                "(\"post\")", spec->algorithm->name);
    return PFLREF_OK;
}

static pflref_status read_given_schedule(const json_t *v, pflref_spec *spec,
                                         pflref_error *err)
{
    static const char *const keys[] = {"kind", "rounds", "post", NULL};
    const size_t N = spec->problem->N;
    json_t *rounds;
    size_t T;
    pflref_status st;
    if ((st = pflref_json_object(v, "schedule", keys, err)) ||
        (st = pflref_json_member(v, "schedule", "rounds", 1, &rounds, err)) ||
        (st = pflref_json_array(rounds, "schedule.rounds", 0, &T, err)))
        return st;
    json_t *post = json_object_get(v, "post");
    if ((st = check_post(post, spec, err)))
        return st;
    spec->schedule = pflref_schedule_alloc(T, N, post != NULL);
    if (spec->schedule == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    for (size_t t = 0; t < T && st == PFLREF_OK; t++) {
        static const char *const rkeys[] = {"clients", "selected", "drawn",
                                            "batches", NULL};
        char rp[PFLREF_WHERE_MAX], cp[PFLREF_WHERE_MAX], dp[PFLREF_WHERE_MAX],
            bp[PFLREF_WHERE_MAX];
        pflref_json_index_path(rp, sizeof rp, "schedule.rounds", t);
        pflref_json_key_path(cp, sizeof cp, rp, "clients");
        pflref_json_key_path(dp, sizeof dp, rp, "drawn");
        pflref_json_key_path(bp, sizeof bp, rp, "batches");
        const json_t *r = json_array_get(rounds, t);
        pflref_round_plan *plan = &spec->schedule->rounds[t];
        json_t *clients, *batches;
        size_t m, nb;
        if ((st = pflref_json_object(r, rp, rkeys, err)) ||
            (st = pflref_json_member(r, rp, "clients", 1, &clients, err)) ||
            (st = pflref_json_array(clients, cp, 1, &m, err)) ||
            (st = pflref_json_member(r, rp, "batches", 1, &batches, err)) ||
            (st = pflref_json_array(batches, bp, 0, &nb, err)))
            break;
        if (nb != m) {
            st = pflref_error_set(err, PFLREF_EINVAL, bp,
                                  "%zu batch lists for %zu clients", nb, m);
            break;
        }
        if ((st = pflref_round_plan_alloc(plan, m, err)) ||
            (st = pflref_json_indices(clients, cp, m, N, plan->clients, err)))
            break;
        /* selected (default: every participant), then drawn (default:
         * selected); their subset and permutation relations are checked by
         * pflref_schedule_validate. */
        json_t *selected = json_object_get(r, "selected");
        if (selected != NULL) {
            char sp[PFLREF_WHERE_MAX];
            pflref_json_key_path(sp, sizeof sp, rp, "selected");
            size_t ms;
            if ((st = pflref_json_array(selected, sp, 1, &ms, err)))
                break;
            if (ms > m) {
                st = pflref_error_set(err, PFLREF_EINVAL, sp,
                                      "%zu selected of %zu participants", ms,
                                      m);
                break;
            }
            plan->n_selected = ms;
            if ((st = pflref_json_indices(selected, sp, ms, N, plan->selected,
                                          err)))
                break;
        } else {
            memcpy(plan->selected, plan->clients, m * sizeof *plan->selected);
        }
        json_t *drawn = json_object_get(r, "drawn");
        if (drawn != NULL) {
            size_t md;
            if ((st = pflref_json_array(drawn, dp, 0, &md, err)))
                break;
            if (md != plan->n_selected) {
                st = pflref_error_set(err, PFLREF_EINVAL, dp,
                                      "%zu drawn ids for %zu selected "
                                      "clients", md, plan->n_selected);
                break;
            }
            st = pflref_json_indices(drawn, dp, md, N, plan->drawn, err);
        } else {
            memcpy(plan->drawn, plan->selected,
                   plan->n_selected * sizeof *plan->drawn);
        }
        for (size_t j = 0; j < m && st == PFLREF_OK; j++) {
            char path[PFLREF_WHERE_MAX];
            pflref_json_index_path(path, sizeof path, bp, j);
            st = read_batches(json_array_get(batches, j), path,
                              &plan->batches[j], err);
        }
    }
    if (st == PFLREF_OK && post != NULL) {
        size_t np;
        st = pflref_json_array(post, "schedule.post", 0, &np, err);
        if (st == PFLREF_OK && np != N)
            st = pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                  "%zu batch lists for %zu clients", np, N);
        for (size_t i = 0; i < N && st == PFLREF_OK; i++) {
            char path[PFLREF_WHERE_MAX];
            pflref_json_index_path(path, sizeof path, "schedule.post", i);
            st = read_batches(json_array_get(post, i), path,
                              &spec->schedule->post[i], err);
        }
    }
    return st;
}

static pflref_status read_generated_schedule(const json_t *v,
                                             pflref_spec *spec, size_t *n,
                                             pflref_error *err)
{
    static const char *const keys[] = {"kind", "rounds", "clients_per_round",
                                       "sampler", "client_seed", "batches",
                                       "batch_seed", "local", "post", NULL};
    const size_t N = spec->problem->N;
    pflref_schedule_config *c = &spec->schedule_cfg;
    memset(c, 0, sizeof *c);
    json_t *rounds_v, *local_v;
    size_t seed, bseed;
    pflref_status st;
    if ((st = pflref_json_object(v, "schedule", keys, err)) ||
        (st = pflref_json_member(v, "schedule", "rounds", 1, &rounds_v,
                                 err)) ||
        (st = pflref_json_size(rounds_v, "schedule.rounds", 0, MAX_COUNT,
                               &c->T, err)) ||
        (st = pflref_json_opt_size(v, "schedule", "clients_per_round", 1, N,
                                   N, &c->m, err)) ||
        (st = pflref_json_opt_size(v, "schedule", "client_seed", 1,
                                   PFLREF_SEED_MAX, 1, &seed, err)) ||
        (st = pflref_json_opt_size(v, "schedule", "batch_seed", 1,
                                   PFLREF_SEED_MAX, 1, &bseed, err)) ||
        (st = pflref_json_member(v, "schedule", "local", 1, &local_v, err)) ||
        (st = read_work(local_v, "schedule.local", &c->train, err)))
        return st;
    c->client_seed = seed;
    c->batch_seed = bseed;
    /* Value names in the order of the enums (sampler.h, schedule.h). */
    static const char *const samplers[] = {"gsl", "numpy_legacy", NULL};
    static const char *const orders[] = {"split_once", "reshuffle", NULL};
    int sampler, order;
    if ((st = pflref_json_opt_enum(v, "schedule", "sampler", samplers, 0,
                                   &sampler, err)) ||
        (st = pflref_json_opt_enum(v, "schedule", "batches", orders, 0,
                                   &order, err)))
        return st;
    c->sampler = (pflref_sampler_kind)sampler;
    c->order = (pflref_batch_order)order;
    json_t *post = json_object_get(v, "post");
    if ((st = check_post(post, spec, err)))
        return st;
    c->train_all = spec->algorithm->train_all != NULL &&
                   spec->algorithm->train_all(&spec->hyper);
    if (post != NULL) {
        c->has_post = 1;
        if ((st = read_work(post, "schedule.post", &c->post, err)))
            return st;
    }
    return pflref_schedule_generate(c, n, N, &spec->schedule, err);
}

static pflref_status read_schedule(const json_t *root, pflref_spec *spec,
                                   pflref_error *err)
{
    const size_t N = spec->problem->N;
    json_t *v, *kind_v;
    const char *kind;
    pflref_status st;
    if ((st = pflref_json_member(root, "", "schedule", 1, &v, err)))
        return st;
    if (!json_is_object(v))
        return pflref_error_set(err, PFLREF_EINVAL, "schedule",
                                "expected an object, found %s",
                                pflref_json_type_name(v));
    if ((st = pflref_json_member(v, "schedule", "kind", 1, &kind_v, err)) ||
        (st = pflref_json_string(kind_v, "schedule.kind", &kind, err)))
        return st;
    size_t *n = malloc(N * sizeof *n);
    if (n == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    for (size_t i = 0; i < N; i++)
        n[i] = spec->problem->clients[i].train.n;
    if (strcmp(kind, "generate") == 0) {
        st = read_generated_schedule(v, spec, n, err);
    } else if (strcmp(kind, "given") == 0) {
        spec->schedule_given = 1;
        st = read_given_schedule(v, spec, err);
    } else {
        st = pflref_error_set(err, PFLREF_EINVAL, "schedule.kind",
                              "unknown schedule kind \"%s\" (known: generate, "
                              "given)", kind);
    }
    if (st == PFLREF_OK)
        st = pflref_schedule_validate(spec->schedule, n, N, err);
    free(n);
    return st;
}

static pflref_status read_output(const json_t *root, pflref_spec *spec,
                                 pflref_error *err)
{
    spec->record = PFLREF_RECORD_ROUND;
    json_t *v = json_object_get(root, "output");
    if (v == NULL)
        return PFLREF_OK;
    static const char *const keys[] = {"trajectory", NULL};
    pflref_status st = pflref_json_object(v, "output", keys, err);
    static const char *const levels[] = {"none", "round", "step", NULL};
    int level;
    if (st == PFLREF_OK)
        st = pflref_json_opt_enum(v, "output", "trajectory", levels,
                                  PFLREF_RECORD_ROUND, &level, err);
    if (st == PFLREF_OK)
        spec->record = (pflref_record_level)level;
    return st;
}

/* ---- the spec ----------------------------------------------------------- */

void pflref_spec_free(pflref_spec *spec)
{
    if (spec == NULL)
        return;
    free(spec->name);
    free(spec->id);
    free(spec->preset);
    free(spec->problem_source);
    free(spec->w0);
    free(spec->cluster_models);
    pflref_problem_free(spec->problem);
    pflref_schedule_free(spec->schedule);
    free(spec);
}

pflref_status pflref_spec_parse(const char *text, size_t len,
                                const char *base_dir, pflref_spec **out,
                                pflref_error *err)
{
    static const char *const keys[] = {"format", "name", "description",
                                       "model", "problem", "split", "init",
                                       "algorithm", "schedule", "output",
                                       NULL};
    *out = NULL;
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    pflref_spec *spec = calloc(1, sizeof *spec);
    if (spec == NULL) {
        json_decref(root);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    pflref_hyper_defaults(&spec->hyper);

    json_t *fmt, *name_v, *desc_v;
    const char *f, *name = "", *desc;
    pflref_model m;
    if ((st = pflref_json_object(root, "", keys, err)) ||
        (st = pflref_json_member(root, "", "format", 1, &fmt, err)) ||
        (st = pflref_json_string(fmt, "format", &f, err)))
        goto done;
    if (strcmp(f, PFLREF_SPEC_FORMAT) != 0) {
        st = pflref_error_set(err, PFLREF_EINVAL, "format",
                              "format is \"%s\", expected \"%s\"", f,
                              PFLREF_SPEC_FORMAT);
        goto done;
    }
    name_v = json_object_get(root, "name");
    if (name_v != NULL && (st = pflref_json_string(name_v, "name", &name, err)))
        goto done;
    desc_v = json_object_get(root, "description");
    if (desc_v != NULL &&
        (st = pflref_json_string(desc_v, "description", &desc, err)))
        goto done;
    spec->name = dup_string(name);
    if (spec->name == NULL) {
        st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
        goto done;
    }
    if ((st = read_model(root, &m, err)) ||
        (st = read_problem(root, base_dir, &m, spec, err)) ||
        (st = read_split(root, &m, &spec->hyper.split, err)) ||
        (st = read_algorithm(root, spec, err)) ||
        (st = read_init(root, spec, err)) ||
        (st = read_schedule(root, spec, err)) ||
        (st = read_output(root, spec, err)))
        goto done;
done:
    json_decref(root);
    if (st != PFLREF_OK) {
        pflref_spec_free(spec);
        return st;
    }
    *out = spec;
    return PFLREF_OK;
}

pflref_status pflref_spec_read_file(const char *path, pflref_spec **out,
                                    pflref_error *err)
{
    char *text;
    size_t len;
    pflref_status st = pflref_read_file(path, &text, &len, err);
    if (st != PFLREF_OK)
        return st;
    /* The folder of the spec resolves a relative problem file. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    st = pflref_spec_parse(text, len, dir, out, err);
    free(text);
    return st;
}
