/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/records.c: tables of records read from JSON: a golden vector's
 * "expected" and a candidate implementation's result (docs/formats.md,
 * "trajectory" and "final"; docs/validate.md).
 *
 * A record is (event, phase, round, client, step, name) with a vector
 * value, as the trace recorder keeps them (pflref/trace.h).  "trajectory"
 * holds records written out; "final" holds the final state:
 *
 *   final.w         the record (final, "final", −1, −1, −1, "w")
 *   final.v[i]      the record (final, "final", −1, i, −1, "v")
 *   final.alpha[i]  the record (final, "final", −1, i, −1, "alpha") of one
 *                   number
 *
 * A vector expects one value per key, so its keys must be unique
 * (pflref_records_unique); a candidate may write one key more than once
 * and is then held to every record (ref/oracle/golden.c).
 *
 * A candidate's final.w, final.v and final.alpha may be file references,
 * and a record's value a range {offset, count} of its "trajectory_values"
 * (ref/io/arrays.h; docs/formats.md, "Arrays in files"): the numbers are
 * copied once, from the file's mapping into the table (reserved at once
 * for a file's rows).  Its w0, theta0 and hypernetwork are not compared,
 * but a reference among them is read and its shape checked, and with an
 * "array_files" manifest every referenced file is hashed and held to it.
 * A golden vector's expectation may be given so too (pflref freeze
 * --arrays files), read by the same code with `files` opened by
 * pflref_arrays_open_listed: every file it names must be in its manifest.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/arrays.h"
#include "io/json.h"
#include "io/vector.h"

int pflref_record_same_key(const pflref_record *x, const pflref_record *y)
{
    return x->kind == y->kind && x->round == y->round &&
           x->client == y->client && x->step == y->step &&
           strcmp(x->name, y->name) == 0 && strcmp(x->phase, y->phase) == 0;
}

/* Order of records by key (event, round, client, step, name, phase), ties
 * by position, for finding two records with one key. */
static int record_key_cmp(const void *a, const void *b)
{
    const pflref_record *x = *(const pflref_record *const *)a;
    const pflref_record *y = *(const pflref_record *const *)b;
    int c;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->client != y->client)
        return x->client < y->client ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if ((c = strcmp(x->name, y->name)) != 0 ||
        (c = strcmp(x->phase, y->phase)) != 0)
        return c;
    return x < y ? -1 : x > y;
}

/* The JSON path of record r: `prefix`.trajectory[r] for r < n_traj, else
 * `prefix`.final. */
static void record_path(char *out, size_t size, size_t r, size_t n_traj,
                        const char *prefix)
{
    if (r < n_traj) {
        char list[PFLREF_WHERE_MAX];
        pflref_json_key_path(list, sizeof list, prefix, "trajectory");
        pflref_json_index_path(out, size, list, r);
    } else {
        pflref_json_key_path(out, size, prefix, "final");
    }
}

/* A second record with the key of an earlier one would expect two values
 * of one quantity, which no run can meet (the oracle looks up the first). */
pflref_status pflref_records_unique(const pflref_trajectory *tj,
                                    size_t n_traj, const char *prefix,
                                    pflref_error *err)
{
    if (tj->count < 2)
        return PFLREF_OK;
    const pflref_record **by_key = malloc(tj->count * sizeof *by_key);
    if (by_key == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, prefix, "out of memory");
    for (size_t r = 0; r < tj->count; r++)
        by_key[r] = &tj->records[r];
    qsort(by_key, tj->count, sizeof *by_key, record_key_cmp);
    pflref_status st = PFLREF_OK;
    for (size_t r = 1; r < tj->count; r++) {
        const pflref_record *x = by_key[r - 1], *y = by_key[r];
        if (!pflref_record_same_key(x, y))
            continue;
        /* the later of the two records is the one named */
        char first[PFLREF_WHERE_MAX], second[PFLREF_WHERE_MAX];
        record_path(first, sizeof first, (size_t)(x - tj->records), n_traj,
                    prefix);
        record_path(second, sizeof second, (size_t)(y - tj->records), n_traj,
                    prefix);
        st = pflref_error_set(err, PFLREF_EINVAL, second,
                              "a second record of %s \"%s\" (phase \"%s\", "
                              "round %ld, client %ld, step %ld), the key of "
                              "%s: a vector expects one value per quantity",
                              pflref_event_kind_name(y->kind), y->name,
                              y->phase, y->round, y->client, y->step, first);
        break;
    }
    free(by_key);
    return st;
}

/* Append the record `key` with the n values x (copied). */
static pflref_status emit_record(pflref_trajectory *tj,
                                 const pflref_record *key, const double *x,
                                 size_t n, const char *where,
                                 pflref_error *err)
{
    pflref_trace tr = {pflref_trajectory_emit, tj};
    pflref_trace_emit(&tr, key->kind, key->phase, key->round, key->client,
                      key->step, key->name, x, n, NULL);
    if (tj->failed)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    return PFLREF_OK;
}

/* Append the record `key` with the value val at `where`: an array of at
 * least one number, or (scalar) one number.  The key's strings stay owned
 * by the JSON. */
static pflref_status add_record(pflref_trajectory *tj,
                                const pflref_record *key, const json_t *val,
                                int scalar, const char *where,
                                pflref_error *err)
{
    size_t n = 1;
    double one = 0.0;
    pflref_status st = scalar ? PFLREF_OK
                              : pflref_json_array(val, where, 1, &n, err);
    if (st != PFLREF_OK)
        return st;
    double *x = scalar ? &one : malloc(n * sizeof *x);
    if (x == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    st = scalar ? pflref_json_real(val, where, x, err)
                : pflref_json_vector(val, where, n, x, err);
    if (st == PFLREF_OK)
        st = emit_record(tj, key, x, n, where, err);
    if (!scalar)
        free(x);
    return st;
}

/* Room in tj for `records` more records of `values` numbers in all, made
 * at once (so a large final state from a file is copied once, without the
 * doubling's reallocations). */
static pflref_status reserve(pflref_trajectory *tj, size_t records,
                             size_t values, const char *where,
                             pflref_error *err)
{
    if (records > (size_t)-1 / 2 / sizeof *tj->records - tj->count ||
        values > (size_t)-1 / 2 / sizeof *tj->values - tj->nvalues)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    if (tj->count + records > tj->capacity) {
        pflref_record *r = realloc(tj->records, (tj->count + records) *
                                                    sizeof *r);
        if (r == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, where,
                                    "out of memory");
        tj->records = r;
        tj->capacity = tj->count + records;
    }
    if (tj->nvalues + values > tj->value_capacity) {
        double *v = realloc(tj->values, (tj->nvalues + values) * sizeof *v);
        if (v == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, where,
                                    "out of memory");
        tj->values = v;
        tj->value_capacity = tj->nvalues + values;
    }
    return PFLREF_OK;
}

/* The optional count `key` of record e at rp: −1 when absent; an integer
 * >= 0 otherwise (a negative, real or other value is malformed, not a
 * quantity the candidate failed to produce). */
static pflref_status opt_count(const json_t *e, const char *rp,
                               const char *key, long *out, pflref_error *err)
{
    const json_t *v = json_object_get(e, key);
    *out = -1;
    if (v == NULL)
        return PFLREF_OK;
    char p[PFLREF_WHERE_MAX];
    pflref_json_key_path(p, sizeof p, rp, key);
    if (!json_is_integer(v))
        return pflref_error_set(err, PFLREF_EINVAL, p,
                                "%s must be an integer >= 0, found %s", key,
                                pflref_json_type_name(v));
    json_int_t n = json_integer_value(v);
    if (n < 0 || n > (json_int_t)LONG_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, p,
                                "%s must be an integer >= 0, found %lld", key,
                                (long long)n);
    *out = (long)n;
    return PFLREF_OK;
}

/* The phases a record can have (pflref/trace.h): the rounds, the phases
 * after training, the final state. */
static int known_phase(const char *phase)
{
    static const char *const phases[] = {"train", "finetune", "interp",
                                         "final", NULL};
    for (size_t i = 0; phases[i] != NULL; i++)
        if (strcmp(phases[i], phase) == 0)
            return 1;
    return 0;
}

/* One record {event, phase, round, client, step, name, value} at rp;
 * round, client and step are −1 when absent. */
static pflref_status read_record(const json_t *e, const char *rp,
                                 const pflref_arrays *files,
                                 pflref_trajectory *tj, pflref_error *err)
{
    static const char *const rkeys[] = {"event", "phase", "round", "client",
                                        "step", "name", "value", NULL};
    char vp[PFLREF_WHERE_MAX];
    pflref_json_key_path(vp, sizeof vp, rp, "value");
    json_t *ev, *ph, *nm, *val;
    const char *event, *phase, *name;
    pflref_event_kind kind;
    pflref_status st;
    if ((st = pflref_json_object(e, rp, rkeys, err)) ||
        (st = pflref_json_member(e, rp, "event", 1, &ev, err)) ||
        (st = pflref_json_member(e, rp, "phase", 1, &ph, err)) ||
        (st = pflref_json_member(e, rp, "name", 1, &nm, err)) ||
        (st = pflref_json_member(e, rp, "value", 1, &val, err)) ||
        (st = pflref_json_string(ev, rp, &event, err)) ||
        (st = pflref_json_string(ph, rp, &phase, err)) ||
        (st = pflref_json_string(nm, rp, &name, err)))
        return st;
    if (!pflref_event_kind_parse(event, &kind))
        return pflref_error_set(err, PFLREF_EINVAL, rp,
                                "unknown event \"%s\"", event);
    if (!known_phase(phase)) {
        char pp[PFLREF_WHERE_MAX];
        pflref_json_key_path(pp, sizeof pp, rp, "phase");
        return pflref_error_set(err, PFLREF_EINVAL, pp,
                                "unknown phase \"%s\" (known: train, "
                                "finetune, interp, final)", phase);
    }
    long round, client, step;
    if ((st = opt_count(e, rp, "round", &round, err)) ||
        (st = opt_count(e, rp, "client", &client, err)) ||
        (st = opt_count(e, rp, "step", &step, err)))
        return st;
    const pflref_record key = {.kind = kind,
                               .phase = phase,
                               .round = round,
                               .client = client,
                               .step = step,
                               .name = name};
    if (json_is_array(val))
        return add_record(tj, &key, val, 0, vp, err);
    if (!json_is_object(val))
        return pflref_error_set(err, PFLREF_EINVAL, vp,
                                "expected an array of numbers or a range "
                                "{\"offset\", \"count\"} of "
                                "trajectory_values, found %s",
                                pflref_json_type_name(val));
    const double *x;
    size_t n;
    if ((st = pflref_arrays_range(files, val, vp, &x, &n, err)))
        return st;
    return emit_record(tj, &key, x, n, vp, err);
}

/* final.<name> given as the file reference ref (at p): "w" of shape (P,),
 * one record; "v" (N, P), one record per row (client i); "alpha" (N,), a
 * record of one number per entry.  The numbers are copied once, from the
 * file's mapping into tj. */
static pflref_status read_final_file(const json_t *ref, const char *p,
                                     const char *name, pflref_arrays *files,
                                     const pflref_result_sizes *z,
                                     pflref_trajectory *tj, pflref_error *err)
{
    if (files == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, p,
                                "\"%s\" is a file reference, which is not "
                                "read here", json_string_value(ref));
    const int w = strcmp(name, "w") == 0, alpha = strcmp(name, "alpha") == 0;
    const size_t P = z != NULL ? z->P : 0, N = z != NULL ? z->N : 0;
    const pflref_array_shape want =
        w       ? (pflref_array_shape){.rank = 1, .dim = {P}, .sym = {"P"}}
        : alpha ? (pflref_array_shape){.rank = 1, .dim = {N}, .sym = {"N"}}
                : (pflref_array_shape){.rank = 2, .dim = {N, P},
                                       .sym = {"N", "P"}};
    const double *x;
    size_t shape[2];
    pflref_status st = pflref_arrays_load(files, json_string_value(ref), p,
                                          &want, &x, shape, err);
    /* rows records of cols numbers */
    const size_t rows = w ? 1 : shape[0], cols = w ? shape[0] : shape[1];
    if (st == PFLREF_OK)
        st = reserve(tj, rows, rows * cols, p, err);
    for (size_t i = 0; st == PFLREF_OK && i < rows; i++) {
        const pflref_record key = {.kind = PFLREF_EV_FINAL,
                                   .phase = "final",
                                   .round = -1,
                                   .client = w ? -1 : (long)i,
                                   .step = -1,
                                   .name = name};
        st = emit_record(tj, &key, x + i * cols, cols, p, err);
    }
    return st;
}

/* final.<name> (at `where`): one record per client i, a vector each ("v")
 * or one number each (scalar: "alpha"); or a file (read_final_file). */
static pflref_status read_final_clients(const json_t *fin, const char *where,
                                        const char *name, int scalar,
                                        pflref_arrays *files,
                                        const pflref_result_sizes *z,
                                        pflref_trajectory *tj,
                                        pflref_error *err)
{
    const json_t *list = json_object_get(fin, name);
    char p[PFLREF_WHERE_MAX];
    pflref_json_key_path(p, sizeof p, where, name);
    if (json_is_string(list))
        return read_final_file(list, p, name, files, z, tj, err);
    size_t n = 0;
    pflref_status st = list == NULL ? PFLREF_OK
                                    : pflref_json_array(list, p, 1, &n, err);
    for (size_t i = 0; st == PFLREF_OK && i < n; i++) {
        char pi[PFLREF_WHERE_MAX];
        pflref_json_index_path(pi, sizeof pi, p, i);
        const pflref_record key = {.kind = PFLREF_EV_FINAL,
                                   .phase = "final",
                                   .round = -1,
                                   .client = (long)i,
                                   .step = -1,
                                   .name = name};
        st = add_record(tj, &key, json_array_get(list, i), scalar, pi, err);
    }
    return st;
}

/* "final": {"w": [...], "v": [[...], ...], "alpha": [...]}, each array
 * or (with files) a file reference. */
static pflref_status read_final(const json_t *fin, const char *prefix,
                                pflref_arrays *files,
                                const pflref_result_sizes *z,
                                pflref_trajectory *tj, pflref_error *err)
{
    static const char *const fkeys[] = {"w", "v", "alpha", NULL};
    char where[PFLREF_WHERE_MAX], p[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, prefix, "final");
    pflref_json_key_path(p, sizeof p, where, "w");
    const json_t *w = json_object_get(fin, "w");
    const pflref_record key = {.kind = PFLREF_EV_FINAL,
                               .phase = "final",
                               .round = -1,
                               .client = -1,
                               .step = -1,
                               .name = "w"};
    pflref_status st;
    if ((st = pflref_json_object(fin, where, fkeys, err)))
        return st;
    if (json_is_string(w))
        st = read_final_file(w, p, "w", files, z, tj, err);
    else if (w != NULL)
        st = add_record(tj, &key, w, 0, p, err);
    if (st != PFLREF_OK ||
        (st = read_final_clients(fin, where, "v", 0, files, z, tj, err)))
        return st;
    return read_final_clients(fin, where, "alpha", 1, files, z, tj, err);
}

pflref_status pflref_records_read(const json_t *obj, const char *prefix,
                                  pflref_arrays *files,
                                  const pflref_result_sizes *z,
                                  pflref_trajectory *tj, size_t *n_traj,
                                  pflref_error *err)
{
    const json_t *list = json_object_get(obj, "trajectory");
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, prefix, "trajectory");
    size_t n = 0;
    pflref_status st = list == NULL ? PFLREF_OK
                                    : pflref_json_array(list, where, 0, &n,
                                                        err);
    for (size_t k = 0; st == PFLREF_OK && k < n; k++) {
        char rp[PFLREF_WHERE_MAX];
        pflref_json_index_path(rp, sizeof rp, where, k);
        st = read_record(json_array_get(list, k), rp, files, tj, err);
    }
    *n_traj = n;
    const json_t *fin = json_object_get(obj, "final");
    if (st == PFLREF_OK && fin != NULL)
        st = read_final(fin, prefix, files, z, tj, err);
    return st;
}

/* ---- a candidate's result ----------------------------------------------- */

/* "outcome": {"class": "ok" | "diverged" | "invalid", message, round,
 * client, step} (result.schema.json); absent: "ok". */
static pflref_status read_outcome(const json_t *root, pflref_candidate *c,
                                  pflref_error *err)
{
    static const char *const okeys[] = {"class", "message", "round",
                                        "client", "step", NULL};
    static const char *const classes[] = {"ok", "diverged", "invalid", NULL};
    const json_t *outcome = json_object_get(root, "outcome");
    json_t *cls_v;
    int ci = 0;
    pflref_status st;
    if (outcome != NULL &&
        ((st = pflref_json_object(outcome, "outcome", okeys, err)) ||
         (st = pflref_json_member(outcome, "outcome", "class", 1, &cls_v,
                                  err)) ||
         (st = pflref_json_opt_enum(outcome, "outcome", "class", classes, 0,
                                    &ci, err))))
        return st;
    snprintf(c->outcome, sizeof c->outcome, "%s", classes[ci]);
    return PFLREF_OK;
}

void pflref_result_sizes_of(const pflref_spec *spec, pflref_result_sizes *z)
{
    *z = (pflref_result_sizes){.P = 0};
    if (spec == NULL || spec->problem == NULL)
        return;
    z->P = spec->problem->model.P;
    z->N = spec->problem->N;
    if (spec->cluster_models != NULL)
        z->k = spec->n_cluster_models;
    else if (strcmp(spec->algorithm->name, "ifca") == 0 &&
             spec->hyper.ifca.k != PFLREF_INT_UNSET)
        z->k = spec->hyper.ifca.k;
    if (spec->hypernetwork != NULL) {
        z->e = spec->hyper.pfedhn.e;
        z->bias = spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON;
    }
}

/* The result fields a check does not compare but whose file references
 * must hold: "w0" (P,), "theta0" (k, P), "hypernetwork" {W (P, e), b
 * (P,), v (N, e)}.  Numbers given inline are not read. */
static pflref_status read_other_files(const json_t *root,
                                      pflref_arrays *files,
                                      const pflref_result_sizes *z,
                                      pflref_error *err)
{
    const json_t *hn = json_object_get(root, "hypernetwork");
    const struct {
        const json_t *v;
        const char *where;
        pflref_array_shape want;
    } fields[] = {
        {json_object_get(root, "w0"), "w0",
         {.rank = 1, .dim = {z->P}, .sym = {"P"}}},
        {json_object_get(root, "theta0"), "theta0",
         {.rank = 2, .dim = {z->k, z->P}, .sym = {"k", "P"}}},
        {json_object_get(hn, "W"), "hypernetwork.W",
         {.rank = 2, .dim = {z->P, z->e}, .sym = {"P", "e"}}},
        {json_object_get(hn, "b"), "hypernetwork.b",
         {.rank = 1, .dim = {z->P}, .sym = {"P"}}},
        {json_object_get(hn, "v"), "hypernetwork.v",
         {.rank = 2, .dim = {z->N, z->e}, .sym = {"N", "e"}}},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!json_is_string(fields[i].v))
            continue;
        const double *x;
        size_t shape[2];
        pflref_status st = pflref_arrays_load(files,
                                              json_string_value(fields[i].v),
                                              fields[i].where,
                                              &fields[i].want, &x, shape,
                                              err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* The candidate's envelope: format, id (the vector's, when vector_id). */
static pflref_status read_candidate_envelope(const json_t *root,
                                             const char *vector_id,
                                             pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "final", "trajectory",
                                       "outcome", "meta", "name", "algorithm",
                                       "model", "problem", "init", "w0",
                                       "schedule_config", "schedule",
                                       "metrics", "build", "hypernetwork",
                                       "theta0", "trajectory_values",
                                       "array_files", NULL};
    const json_t *fmt = json_object_get(root, "format");
    pflref_status st = pflref_json_object(root, "", keys, err);
    if (st != PFLREF_OK)
        return st;
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), PFLREF_RESULT_FORMAT) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "format",
                                "a candidate result has \"format\": \"%s\"",
                                PFLREF_RESULT_FORMAT);
    const json_t *idv = json_object_get(root, "id");
    if (idv != NULL && !json_is_string(idv))
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "expected a string (the golden vector's id), "
                                "found %s", pflref_json_type_name(idv));
    const char *cid = json_string_value(idv);
    if (vector_id != NULL && cid != NULL && strcmp(cid, vector_id) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the candidate is for vector \"%s\", not "
                                "\"%s\"", cid, vector_id);
    return PFLREF_OK;
}

pflref_status pflref_candidate_read(const char *text, size_t len,
                                    const char *vector_id,
                                    const char *base_dir,
                                    const pflref_spec *spec,
                                    pflref_candidate *c, pflref_error *err)
{
    memset(c, 0, sizeof *c);
    pflref_trajectory_init(&c->records, PFLREF_RECORD_STEP);
    snprintf(c->outcome, sizeof c->outcome, "ok");
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    c->json = root;
    if ((st = read_candidate_envelope(root, vector_id, err)))
        return st;
    pflref_result_sizes z;
    pflref_result_sizes_of(spec, &z);
    pflref_arrays files;
    size_t n_traj;
    if ((st = pflref_arrays_open(&files, root, base_dir, err)) == PFLREF_OK &&
        (st = pflref_records_read(root, "", &files, &z, &c->records, &n_traj,
                                  err)) == PFLREF_OK &&
        (st = read_outcome(root, c, err)) == PFLREF_OK &&
        (st = read_other_files(root, &files, &z, err)) == PFLREF_OK)
        st = pflref_arrays_close(&files, err);
    pflref_arrays_free(&files);
    return st;
}

void pflref_candidate_free(pflref_candidate *c)
{
    pflref_trajectory_free(&c->records);
    json_decref(c->json);
    c->json = NULL;
}
