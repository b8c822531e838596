/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_hyper.c: reading a spec's "split", "algorithm" and "init"
 * (docs/formats.md).
 *
 *   split      {"personal": [block or group names]}: the blocks each client
 *              keeps (FedRep, FedAlt, ...); absent: every block shared
 *   algorithm  {name, preset, hyperparameters, switches}: the preset first
 *              ("paper" unless named; it may imply a split), then the
 *              explicit settings, each checked against the parameter table
 *              (ref/engine/params.c: name, type, range, which algorithms)
 *   init       {kind: zeros | given (w) | gaussian (seed, sd) | uniform
 *              (seed, scale)}, and IFCA's cluster_models, pFedHN's
 *              hypernetwork, lora's adapter; each of their arrays (w,
 *              cluster_models, lora, hypernetwork.W, .b, .v) numbers or a
 *              file reference (ref/io/arrays.h), copied into the spec and
 *              recorded with its SHA-256 in spec->init_files
 *
 * Hyperparameters and switches are visited in sorted key order, so the
 * first error reported does not depend on jansson's hash order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/arrays.h"
#include "io/spec_read.h"

#define MAX_COUNT PFLREF_SPEC_MAX_COUNT

pflref_status pflref_spec_read_split(const json_t *root, const pflref_model *m,
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
        (st = pflref_json_array_member(v, "split", "personal", 0, &list, &n,
                                       err)))
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
    pflref_status st = pflref_json_object(obj, where, NULL, err);
    if (st != PFLREF_OK)
        return st;
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
        else if (!pflref_name_in_list(p->algorithms, alg->name) &&
                 strncmp(keys[i], "opt.", 4) == 0 && alg->opt_refusal)
            /* the client optimizer: why this algorithm takes none */
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "%s does not apply to %s: %s (the client "
                                  "optimizer applies to: %s)", keys[i],
                                  alg->name, alg->opt_refusal, p->algorithms);
        else if (!pflref_name_in_list(p->algorithms, alg->name) &&
                 strcmp(keys[i], "bn.aggregate") == 0 &&
                 pflref_spec_bn_refusal(alg->name) != NULL)
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "bn.aggregate does not apply to %s: %s "
                                  "(it applies to: %s)", alg->name,
                                  pflref_spec_bn_refusal(alg->name),
                                  p->algorithms);
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

pflref_status pflref_spec_read_algorithm(const json_t *root, pflref_spec *spec,
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
    spec->preset = pflref_spec_strdup(preset);
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
    return sw != NULL ? pflref_spec_check_bn_switches(sw, spec, err) : PFLREF_OK;
}

/* ---- init ---------------------------------------------------------------
 *
 * Each array of init (w, cluster_models, lora, hypernetwork.W, .b, .v) is
 * numbers or a file reference (a .npy path or ARCHIVE.npz:MEMBER relative
 * to the spec's folder: ref/io/arrays.h) of exactly the array's shape.  A
 * file's numbers are copied into the spec (init arrays are P-sized) and the
 * file recorded, with its SHA-256 and size, in spec->init_files. */

/* The init array v at `where` of the fully known shape `want` into dst
 * (want's count of numbers): a file reference, or numbers (a vector for
 * rank 1, a matrix for rank 2, checked by the JSON reader). */
static pflref_status init_array(pflref_arrays *files, const json_t *v,
                                const char *where,
                                const pflref_array_shape *want, double *dst,
                                pflref_error *err)
{
    if (!json_is_string(v))
        return want->rank == 1
                   ? pflref_json_vector(v, where, want->dim[0], dst, err)
                   : pflref_json_matrix(v, where, want->dim[0], want->dim[1],
                                        dst, err);
    const double *data;
    size_t shape[2];
    pflref_status st = pflref_arrays_load(files, json_string_value(v), where,
                                          want, &data, shape, err);
    if (st == PFLREF_OK)
        memcpy(dst, data, shape[0] * shape[1] * sizeof *dst);
    return st;
}

/* The file reference v at `where` of shape `want` (some dimensions
 * unknown) into a malloc'd copy *out; shape gets its dimensions. */
static pflref_status init_file_copy(pflref_arrays *files, const json_t *v,
                                    const char *where,
                                    const pflref_array_shape *want,
                                    double **out, size_t shape[2],
                                    pflref_error *err)
{
    const double *data;
    pflref_status st = pflref_arrays_load(files, json_string_value(v), where,
                                          want, &data, shape, err);
    if (st != PFLREF_OK)
        return st;
    const size_t n = shape[0] * shape[1];
    if (n > PFLREF_MAX_PARAMS)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%zu numbers exceed the limit of %zu", n,
                                (size_t)PFLREF_MAX_PARAMS);
    if ((*out = malloc(n * sizeof **out)) == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    memcpy(*out, data, n * sizeof **out);
    return PFLREF_OK;
}

/* init.cluster_models: IFCA's k initial cluster models θ_j⁰, k arrays of P
 * numbers (cluster 0 first) or a file of shape (k, P), k = ifca.k; absent:
 * NULL (the models follow from w⁰, ifca.init_shift and ifca.init_sd). */
static pflref_status read_cluster_models(const json_t *v, pflref_spec *spec,
                                         pflref_arrays *files,
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
    size_t rows = 0;
    pflref_status st = json_is_string(c)
                           ? PFLREF_OK
                           : pflref_json_array(c, where, 1, &rows, err);
    if (st != PFLREF_OK)
        return st;
    if (k == PFLREF_INT_UNSET)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "give ifca.k with the initial cluster models");
    if (!json_is_string(c) && rows != k)
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
    const pflref_array_shape want = {.rank = 2, .dim = {k, P},
                                     .sym = {"ifca.k", "P"}};
    return init_array(files, c, where, &want, spec->cluster_models, err);
}

/* init.support: FedRecon's support sets D_{i,s}, one list of sample
 * indices per client (each in 0..n_i − 1; ascending and leaving a
 * non-empty query set is FedRecon's check, ref/algorithms/fedrecon.c),
 * into spec->fedrecon_support; absent: NULL. */
static pflref_status read_support(const json_t *v, pflref_spec *spec,
                                  pflref_error *err)
{
    const json_t *c = json_object_get(v, "support");
    if (c == NULL)
        return PFLREF_OK;
    static const char *const where = "init.support";
    if (strcmp(spec->algorithm->name, "fedrecon") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only fedrecon takes support sets (the "
                                "algorithm is %s)", spec->algorithm->name);
    const size_t N = spec->problem->N;
    size_t n, total = 0, len;
    pflref_status st = pflref_json_array(c, where, 0, &n, err);
    if (st == PFLREF_OK && n != N)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu support sets for %zu clients", n, N);
    char path[PFLREF_WHERE_MAX];
    for (size_t i = 0; st == PFLREF_OK && i < N; i++) {
        pflref_json_index_path(path, sizeof path, where, i);
        st = pflref_json_array(json_array_get(c, i), path, 0, &len, err);
        total += len;
    }
    if (st != PFLREF_OK)
        return st;
    pflref_batches *b = calloc(1, sizeof *b);
    if (b == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    spec->fedrecon_support = b;
    st = pflref_batches_alloc(b, N, total, err);
    for (size_t i = 0; st == PFLREF_OK && i < N; i++) {
        const json_t *list = json_array_get(c, i);
        pflref_json_index_path(path, sizeof path, where, i);
        len = json_array_size(list);
        b->step_off[i + 1] = b->step_off[i] + len;
        st = pflref_json_indices(list, path, len,
                                 spec->problem->clients[i].train.n,
                                 b->idx + b->step_off[i], err);
    }
    spec->hyper.fedrecon.support_off = b->step_off;
    spec->hyper.fedrecon.support_idx = b->idx;
    return st;
}

/* init.c and init.c_i: SCAFFOLD's initial control variates (Alg. 1,
 * l. 1–2: "server input: initial x and c", "client i's input: c_i"), c⁰
 * of P numbers and c_i⁰ of N arrays of P (client 0 first), numbers or a
 * file of shape (P) or (N, P); each absent: NULL (ref/algorithms/
 * scaffold.c's defaults). */
static pflref_status read_control(const json_t *v, pflref_spec *spec,
                                  pflref_arrays *files, pflref_error *err)
{
    const json_t *c = json_object_get(v, "c");
    const json_t *ci = json_object_get(v, "c_i");
    if (c == NULL && ci == NULL)
        return PFLREF_OK;
    const char *where = c != NULL ? "init.c" : "init.c_i";
    if (strcmp(spec->algorithm->name, "scaffold") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only scaffold takes initial control "
                                "variates (the algorithm is %s)",
                                spec->algorithm->name);
    const size_t P = spec->problem->model.P, N = spec->problem->N;
    pflref_status st = PFLREF_OK;
    if (c != NULL) {
        if ((spec->scaffold_c = malloc(P * sizeof *spec->scaffold_c)) == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, where,
                                    "out of memory");
        const pflref_array_shape want = {.rank = 1, .dim = {P},
                                         .sym = {"P"}};
        if ((st = init_array(files, c, "init.c", &want, spec->scaffold_c,
                             err)))
            return st;
        spec->hyper.scaffold.c0 = spec->scaffold_c;
    }
    if (ci == NULL)
        return PFLREF_OK;
    size_t rows = 0;
    if (!json_is_string(ci) &&
        (st = pflref_json_array(ci, "init.c_i", 1, &rows, err)))
        return st;
    if (!json_is_string(ci) && rows != N)
        return pflref_error_set(err, PFLREF_EINVAL, "init.c_i",
                                "expected one control variate per client, "
                                "N = %zu, found %zu", N, rows);
    if (N > PFLREF_MAX_PARAMS / P)
        return pflref_error_set(err, PFLREF_ENOMEM, "init.c_i",
                                "%zu clients × %zu parameters exceed the "
                                "limit of %zu", N, P,
                                (size_t)PFLREF_MAX_PARAMS);
    if ((spec->scaffold_c_i = malloc(N * P * sizeof *spec->scaffold_c_i)) ==
        NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init.c_i",
                                "out of memory");
    const pflref_array_shape want = {.rank = 2, .dim = {N, P},
                                     .sym = {"N", "P"}};
    if ((st = init_array(files, ci, "init.c_i", &want, spec->scaffold_c_i,
                         err)))
        return st;
    spec->hyper.scaffold.c_i0 = spec->scaffold_c_i;
    return PFLREF_OK;
}

/* init.hypernetwork.v: the embedding dimension e, from a file of shape
 * (N, e) (whose numbers *vdata then points at, until the next load) or
 * from the length of the first of N arrays. */
static pflref_status hn_dimension(const json_t *V, size_t N,
                                  pflref_arrays *files, size_t *e,
                                  const double **vdata, pflref_error *err)
{
    static const char *const where = "init.hypernetwork.v";
    *vdata = NULL;
    *e = 0;
    if (json_is_string(V)) {
        const pflref_array_shape want = {.rank = 2, .dim = {N, 0},
                                         .sym = {"N", "e"}};
        size_t shape[2];
        pflref_status st = pflref_arrays_load(files, json_string_value(V),
                                              where, &want, vdata, shape,
                                              err);
        *e = shape[1];
        return st;
    }
    size_t rows;
    pflref_status st = pflref_json_array(V, where, 1, &rows, err);
    if (st != PFLREF_OK)
        return st;
    if (rows != N)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "expected one embedding per client (N = "
                                "%zu), found %zu", N, rows);
    if ((st = pflref_json_array(json_array_get(V, 0),
                                "init.hypernetwork.v[0]", 0, e, err)))
        return st;
    if (*e == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "init.hypernetwork.v[0]",
                                "the embedding dimension e must be at "
                                "least 1");
    return PFLREF_OK;
}

/* init.hypernetwork: pFedHN's initial state (notes §4.1: "Oracle: data"),
 * {"W": P arrays of e numbers (W_h⁰), "b": P numbers (b_h⁰; required
 * with pfedhn.hn_bias = on, refused with off), "v": N arrays of e numbers
 * (the embeddings v_i⁰, client 0 first)}, e ≥ 1 read from v; each of W,
 * b, v may be a file of shape (P, e), (P,), (N, e). */
static pflref_status read_hypernetwork(const json_t *v, pflref_spec *spec,
                                       pflref_arrays *files,
                                       pflref_error *err)
{
    const json_t *h = json_object_get(v, "hypernetwork");
    if (h == NULL)
        return PFLREF_OK;
    static const char *const where = "init.hypernetwork";
    if (strcmp(spec->algorithm->name, "pfedhn") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only pfedhn takes an initial hypernetwork "
                                "(the algorithm is %s)",
                                spec->algorithm->name);
    static const char *const keys[] = {"W", "b", "v", NULL};
    const size_t P = spec->problem->model.P, N = spec->problem->N;
    const int bias = spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON;
    json_t *W, *b, *V;
    const double *vdata;
    size_t e;
    pflref_status st;
    if ((st = pflref_json_object(h, where, keys, err)) ||
        (st = pflref_json_member(h, where, "v", 1, &V, err)) ||
        (st = hn_dimension(V, N, files, &e, &vdata, err)) ||
        (st = pflref_json_member(h, where, "W", 1, &W, err)) ||
        (st = pflref_json_member(h, where, "b", bias, &b, err)))
        return st;
    if (!bias && b != NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "init.hypernetwork.b",
                                "pfedhn.hn_bias = off takes no b_h");
    if (e > PFLREF_MAX_PARAMS / P || N > PFLREF_MAX_PARAMS / e)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "P × e = %zu × %zu or N × e exceeds the "
                                "limit of %zu", P, e,
                                (size_t)PFLREF_MAX_PARAMS);
    double *x = calloc(P * e + P + N * e, sizeof *x);
    if (x == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    spec->hypernetwork = x;
    spec->hyper.pfedhn.e = e;
    spec->hyper.pfedhn.W0 = x;
    spec->hyper.pfedhn.b0 = bias ? x + P * e : NULL;
    spec->hyper.pfedhn.v0 = x + P * e + P;
    /* v first: a file's numbers are held only until the next load */
    if (vdata != NULL)
        memcpy(x + P * e + P, vdata, N * e * sizeof *x);
    const pflref_array_shape wv = {.rank = 2, .dim = {N, e}, .sym = {"N", "e"}};
    const pflref_array_shape ww = {.rank = 2, .dim = {P, e}, .sym = {"P", "e"}};
    const pflref_array_shape wb = {.rank = 1, .dim = {P}, .sym = {"P"}};
    if ((vdata == NULL && (st = init_array(files, V, "init.hypernetwork.v",
                                           &wv, x + P * e + P, err))) ||
        (st = init_array(files, W, "init.hypernetwork.W", &ww, x, err)))
        return st;
    return bias ? init_array(files, b, "init.hypernetwork.b", &wb, x + P * e,
                             err)
                : PFLREF_OK;
}

/* init.lora (the adapter vector q⁰, layout ref/models/adapter.h; numbers
 * or a 1-D file) and init.lora_ranks (HetLoRA's N client ranks r_k,
 * numbers only): what the lora algorithm checks against its layout;
 * absent: NULL. */
static pflref_status read_lora_member(const json_t *v, pflref_spec *spec,
                                      const char *key, pflref_arrays *files,
                                      double **out, size_t *n,
                                      pflref_error *err)
{
    const json_t *c = json_object_get(v, key);
    if (c == NULL)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, "init", key);
    if (strcmp(spec->algorithm->name, "lora") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only lora takes %s (the algorithm is %s)",
                                key, spec->algorithm->name);
    if (files != NULL && json_is_string(c)) {
        const pflref_array_shape want = {.rank = 1, .sym = {"Q"}};
        size_t shape[2];
        pflref_status st = init_file_copy(files, c, where, &want, out, shape,
                                          err);
        *n = shape[0];
        return st;
    }
    pflref_status st = pflref_json_array(c, where, 1, n, err);
    if (st != PFLREF_OK)
        return st;
    if (*n > PFLREF_MAX_PARAMS)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "too long");
    *out = malloc(*n * sizeof **out);
    if (*out == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    return pflref_json_vector(c, where, *n, *out, err);
}

/* init.lora_targets: the adapted weights by name (blocks, or dense and
 * conv2d layers meaning their weight; ref/models/adapter.h resolves
 * them), 1 to PFLREF_MAX_BLOCKS strings, copied into one allocation. */
static pflref_status read_lora_targets(const json_t *v, pflref_spec *spec,
                                       pflref_error *err)
{
    static const char *const where = "init.lora_targets";
    const json_t *c = json_object_get(v, "lora_targets");
    if (c == NULL)
        return PFLREF_OK;
    if (strcmp(spec->algorithm->name, "lora") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only lora takes lora_targets (the "
                                "algorithm is %s)", spec->algorithm->name);
    size_t n, bytes = 0;
    pflref_status st = pflref_json_array(c, where, 1, &n, err);
    if (st != PFLREF_OK)
        return st;
    if (n > PFLREF_MAX_BLOCKS)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu names: a model has at most %d blocks",
                                n, PFLREF_MAX_BLOCKS);
    for (size_t j = 0; j < n; j++) {
        char path[PFLREF_WHERE_MAX];
        const char *name;
        pflref_json_index_path(path, sizeof path, where, j);
        if ((st = pflref_json_string(json_array_get(c, j), path, &name,
                                     err)))
            return st;
        if (name[0] == '\0' || strlen(name) >= PFLREF_BLOCK_NAME_MAX)
            return pflref_error_set(err, PFLREF_EINVAL, path,
                                    "a name has 1 to %d characters",
                                    PFLREF_BLOCK_NAME_MAX - 1);
        bytes += strlen(name) + 1;
    }
    char **names = malloc(n * sizeof *names + bytes);
    if (names == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    char *at = (char *)(names + n);
    for (size_t j = 0; j < n; j++) {
        const char *name = json_string_value(json_array_get(c, j));
        const size_t len = strlen(name) + 1;
        memcpy(at, name, len);
        names[j] = at;
        at += len;
    }
    spec->lora_targets = names;
    spec->n_lora_targets = n;
    return PFLREF_OK;
}

static pflref_status read_lora_init(const json_t *v, pflref_spec *spec,
                                    pflref_arrays *files, pflref_error *err)
{
    pflref_status st = read_lora_member(v, spec, "lora", files,
                                        &spec->lora_init, &spec->n_lora_init,
                                        err);
    if (st == PFLREF_OK)
        st = read_lora_member(v, spec, "lora_ranks", NULL, &spec->lora_ranks,
                              &spec->n_lora_ranks, err);
    if (st == PFLREF_OK)
        st = read_lora_targets(v, spec, err);
    spec->hyper.lora.target_names = (const char *const *)spec->lora_targets;
    spec->hyper.lora.ntarget_names = spec->n_lora_targets;
    spec->hyper.lora.q0 = spec->lora_init;
    spec->hyper.lora.nq0 = spec->n_lora_init;
    spec->hyper.lora.ranks = spec->lora_ranks;
    spec->hyper.lora.nranks = spec->n_lora_ranks;
    return st;
}

static pflref_status read_init_w0(const json_t *v, pflref_spec *spec,
                                  pflref_arrays *files, pflref_error *err);
static pflref_status check_running_var(const pflref_model *m,
                                       const double *w0, pflref_error *err);

pflref_status pflref_spec_read_init(const json_t *root, const char *base_dir,
                                    pflref_spec *spec, pflref_error *err)
{
    const size_t P = spec->problem->model.P;
    spec->w0 = calloc(P, sizeof *spec->w0);
    if (spec->w0 == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init", "out of memory");
    spec->init_kind = PFLREF_INIT_ZEROS;
    json_t *v = json_object_get(root, "init");
    /* every file an init array names is hashed for the result */
    pflref_arrays files;
    pflref_arrays_init(&files, base_dir, 1);
    pflref_status st = read_init_w0(v, spec, &files, err);
    if (st == PFLREF_OK)
        st = pflref_arrays_take_files(&files, &spec->init_files,
                                      &spec->n_init_files, err);
    pflref_arrays_free(&files);
    /* zeros and drawn starts: BatchNorm1d's γ = 1, β = 0, r_μ = 0, r_v = 1
     * in the BN blocks (after the P draws, so the stream is unchanged);
     * a given w is kept, its r_v checked */
    if (st == PFLREF_OK && spec->init_kind != PFLREF_INIT_GIVEN)
        pflref_model_bn_reset(&spec->problem->model, spec->w0);
    else if (st == PFLREF_OK)
        st = check_running_var(&spec->problem->model, spec->w0, err);
    return st;
}

/* init.w of a model with bn: r_v + ε > 0 in every entry (else the
 * evaluation's √(r_v + ε) is not a positive number). */
static pflref_status check_running_var(const pflref_model *m,
                                       const double *w0, pflref_error *err)
{
    if (m->kind == PFLREF_MODEL_LAYERS) {
        /* each batchnorm layer's NAME.running_var, with its ε */
        for (size_t i = 0; i < m->nlayers; i++) {
            const pflref_layer *L = &m->layers[i];
            if (L->kind != PFLREF_LAYER_BATCHNORM1D &&
                L->kind != PFLREF_LAYER_BATCHNORM2D)
                continue;
            const pflref_block *B = &m->blocks[(size_t)L->first_block + 3];
            for (size_t q = 0; q < B->size; q++)
                if (!(w0[B->offset + q] + L->eps > 0.0))
                    return pflref_error_set(
                        err, PFLREF_EINVAL, "init.w",
                        "init.w[%zu] = %g is %s[%zu]: r_v + ε must be > 0 "
                        "(ε = %g)", B->offset + q, w0[B->offset + q],
                        B->name, q, L->eps);
        }
        return PFLREF_OK;
    }
    const int b = pflref_model_block_index(m, "bn_running_var");
    if (b < 0)
        return PFLREF_OK;
    for (size_t q = 0; q < m->blocks[b].size; q++) {
        const size_t p = m->blocks[b].offset + q;
        if (!(w0[p] + m->bn_eps > 0.0))
            return pflref_error_set(err, PFLREF_EINVAL, "init.w",
                                    "init.w[%zu] = %g is bn_running_var[%zu]: "
                                    "r_v + ε must be > 0 (ε = %g)",
                                    p, w0[p], q, m->bn_eps);
    }
    return PFLREF_OK;
}

/* The "init" member v (may be NULL) into spec->w0 and spec->init_*. */
static pflref_status read_init_w0(const json_t *v, pflref_spec *spec,
                                  pflref_arrays *files, pflref_error *err)
{
    const size_t P = spec->problem->model.P;
    if (v == NULL)
        return PFLREF_OK;
    static const char *const keys[] = {"kind", "w", "seed", "sd", "scale",
                                       "cluster_models", "hypernetwork",
                                       "lora", "lora_ranks", "lora_targets",
                                       "support", "c", "c_i",
                                       "class_counts", NULL};
    json_t *kind_v;
    const char *kind;
    pflref_status st;
    if ((st = pflref_json_object(v, "init", keys, err)) ||
        (st = read_cluster_models(v, spec, files, err)) ||
        (st = read_hypernetwork(v, spec, files, err)) ||
        (st = read_lora_init(v, spec, files, err)) ||
        (st = read_support(v, spec, err)) ||
        (st = read_control(v, spec, files, err)) ||
        (st = pflref_spec_read_class_counts(v, spec, err)) ||
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
        const pflref_array_shape want = {.rank = 1, .dim = {P},
                                         .sym = {"P"}};
        return init_array(files, w, "init.w", &want, spec->w0, err);
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
