/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result.c: serialising a run's result (format pflref-result/1,
 * docs/formats.md, docs/schema/result.schema.json).
 *
 * The result repeats what defines the run (algorithm with every applicable
 * hyperparameter and switch, model, split, initial parameters, the schedule
 * actually used in the replayable "given" form), then the final state, the
 * per-client metrics with their client-aware summaries, the trajectory and
 * the build facts.  Objects keep insertion order and doubles are printed
 * with 17 significant digits, so the same run gives the same bytes and every
 * double reads back exactly.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "core/vec.h"
#include "io/digest.h"
#include "io/json.h"

/* A tree under construction: any failed allocation sets `failed`, so the
 * building code needs no check per call and the writer fails at the end. */
typedef struct {
    int failed;
} builder;

static void put(builder *b, json_t *obj, const char *key, json_t *value)
{
    if (obj == NULL || value == NULL || json_object_set_new(obj, key, value))
        b->failed = 1;
}

static void append(builder *b, json_t *arr, json_t *value)
{
    if (arr == NULL || value == NULL || json_array_append_new(arr, value))
        b->failed = 1;
}

static json_t *batches_json(builder *b, const pflref_batches *bt)
{
    json_t *steps = json_array();
    for (size_t s = 0; s < bt->nsteps; s++)
        append(b, steps,
               pflref_json_new_indices(bt->idx + bt->step_off[s],
                                       bt->step_off[s + 1] - bt->step_off[s]));
    return steps;
}

/* FedFomo's ε-greedy draws of a round: [{"order": π, "u": [u_s]}, ...],
 * one per participant. */
static json_t *peer_draws_json(builder *b, const pflref_round_plan *r)
{
    json_t *list = json_array();
    for (size_t j = 0; j < r->m; j++) {
        const pflref_batches *o = r->peer_order;
        json_t *d = json_object();
        put(b, d, "order",
            pflref_json_new_indices(o->idx + o->step_off[j],
                                    o->step_off[j + 1] - o->step_off[j]));
        put(b, d, "u",
            pflref_json_new_vector(r->peer_u + r->peer_u_off[j],
                                   r->peer_u_off[j + 1] - r->peer_u_off[j]));
        append(b, list, d);
    }
    return list;
}

/* The schedule actually used; chosen (T entries, or NULL) holds the peer
 * lists FedFomo chose at run time in rounds whose schedule had none
 * (nsteps = 0 where it chose nothing), written as the round's "peers" so
 * that the result replays with them as data. */
static json_t *schedule_json(builder *b, const pflref_schedule *s,
                             const pflref_batches *chosen)
{
    json_t *o = json_object();
    put(b, o, "kind", json_string("given"));
    json_t *rounds = json_array();
    for (size_t t = 0; t < s->T; t++) {
        const pflref_round_plan *r = &s->rounds[t];
        json_t *ro = json_object();
        put(b, ro, "clients", pflref_json_new_indices(r->clients, r->m));
        if (r->n_selected != r->m)
            put(b, ro, "selected",
                pflref_json_new_indices(r->selected, r->n_selected));
        put(b, ro, "drawn", pflref_json_new_indices(r->drawn, r->n_selected));
        json_t *bl = json_array();
        for (size_t j = 0; j < r->m; j++)
            append(b, bl, batches_json(b, &r->batches[j]));
        put(b, ro, "batches", bl);
        if (r->peers != NULL)   /* FedFomo's S_i^t, one list per client */
            put(b, ro, "peers", batches_json(b, r->peers));
        else if (chosen != NULL && chosen[t].nsteps > 0)
            put(b, ro, "peers", batches_json(b, &chosen[t]));
        if (r->peer_order != NULL)   /* the draws S_i^t was chosen with */
            put(b, ro, "peer_draws", peer_draws_json(b, r));
        if (r->personal != NULL) {  /* Ditto's own personal batches */
            json_t *pl = json_array();
            for (size_t j = 0; j < r->m; j++)
                append(b, pl, batches_json(b, &r->personal[j]));
            put(b, ro, "personal", pl);
        }
        append(b, rounds, ro);
    }
    put(b, o, "rounds", rounds);
    if (s->post != NULL) {
        json_t *post = json_array();
        for (size_t i = 0; i < s->N; i++)
            append(b, post, batches_json(b, &s->post[i]));
        put(b, o, "post", post);
    }
    return o;
}

/* The data files the problem was read from, each with its SHA-256 and
 * size: [{"path", "sha256", "bytes"}, ...] in the order first named. */
static json_t *data_files_json(builder *b, const pflref_spec *spec)
{
    json_t *files = json_array();
    pflref_digest_wait(spec->digests);   /* the second thread's digests */
    for (size_t i = 0; i < spec->n_data_files; i++) {
        const pflref_data_file *f = &spec->data_files[i];
        json_t *o = json_object();
        put(b, o, "path", json_string(f->path));
        put(b, o, "sha256", json_string(f->sha256));
        put(b, o, "bytes", json_integer((json_int_t)f->bytes));
        append(b, files, o);
    }
    return files;
}

/* "problem": its source, N, the sample counts and the data files. */
static json_t *problem_json(builder *b, const pflref_spec *spec)
{
    const pflref_problem *pr = spec->problem;
    json_t *prob = json_object(), *ntr = json_array(), *nte = json_array();
    for (size_t i = 0; i < pr->N; i++) {
        append(b, ntr, json_integer((json_int_t)pr->clients[i].train.n));
        append(b, nte, json_integer((json_int_t)pr->clients[i].test.n));
    }
    put(b, prob, "source", json_string(spec->problem_source));
    put(b, prob, "N", json_integer((json_int_t)pr->N));
    put(b, prob, "n_train", ntr);
    put(b, prob, "n_test", nte);
    if (spec->n_data_files > 0)
        put(b, prob, "data_files", data_files_json(b, spec));
    return prob;
}

static json_t *work_json(builder *b, const pflref_local_work *w)
{
    json_t *o = json_object();
    if (w->epochs > 0)
        put(b, o, "epochs", json_integer((json_int_t)w->epochs));
    else
        put(b, o, "steps", json_integer((json_int_t)w->steps));
    put(b, o, "batch_size", json_integer((json_int_t)w->B));
    return o;
}

static json_t *schedule_config_json(builder *b, const pflref_spec *spec)
{
    const pflref_schedule_config *c = &spec->schedule_cfg;
    json_t *o = json_object();
    put(b, o, "kind", json_string("generate"));
    put(b, o, "rounds", json_integer((json_int_t)c->T));
    put(b, o, "clients_per_round", json_integer((json_int_t)c->m));
    put(b, o, "sampler", json_string(pflref_sampler_kind_name(c->sampler)));
    put(b, o, "client_seed", json_integer((json_int_t)c->client_seed));
    put(b, o, "batches", json_string(pflref_batch_order_name(c->order)));
    put(b, o, "batch_seed", json_integer((json_int_t)c->batch_seed));
    put(b, o, "local", work_json(b, &c->train));
    if (c->has_post)
        put(b, o, "post", work_json(b, &c->post));
    if (c->peers > 0) {
        put(b, o, "peers", json_integer((json_int_t)c->peers));
        put(b, o, "peer_seed", json_integer((json_int_t)c->peer_seed));
    }
    return o;
}

static json_t *algorithm_json(builder *b, const pflref_spec *spec)
{
    const pflref_algorithm *alg = spec->algorithm;
    json_t *o = json_object();
    put(b, o, "name", json_string(alg->name));
    put(b, o, "title", json_string(alg->title));
    put(b, o, "preset", json_string(spec->preset));
    json_t *hp = json_object(), *sw = json_object();
    size_t count;
    const pflref_param *params = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        if (!pflref_name_in_list(p->algorithms, alg->name))
            continue;
        if (p->type == PFLREF_PARAM_REAL) {
            double x = pflref_hyper_get_real(&spec->hyper, p);
            /* an unused optional hyperparameter stays unset (NaN) */
            put(b, hp, p->name, isnan(x) ? json_null() : json_real(x));
        } else if (p->type == PFLREF_PARAM_INT)
            put(b, hp, p->name,
                json_integer((json_int_t)pflref_hyper_get_int(&spec->hyper, p)));
        else
            put(b, sw, p->name,
                json_string(pflref_hyper_get_enum(&spec->hyper, p)));
    }
    put(b, o, "hyperparameters", hp);
    put(b, o, "switches", sw);
    return o;
}

static json_t *model_json(builder *b, const pflref_model *m,
                          const pflref_split *split)
{
    json_t *o = json_object();
    put(b, o, "kind", json_string(pflref_model_kind_name(m->kind)));
    put(b, o, "loss", json_string(pflref_loss_name(m->loss)));
    put(b, o, "d", json_integer((json_int_t)m->d));
    if (m->kind == PFLREF_MODEL_SOFTMAX || m->kind == PFLREF_MODEL_MLP)
        put(b, o, "k", json_integer((json_int_t)m->k));
    if (m->kind == PFLREF_MODEL_MLP) {
        put(b, o, "h", json_integer((json_int_t)m->h));
        put(b, o, "activation",
            json_string(pflref_activation_name(m->activation)));
    }
    put(b, o, "bias", json_boolean(m->bias));
    if (m->kind == PFLREF_MODEL_MLP)      /* b1; "bias" is b2 for the mlp */
        put(b, o, "hidden_bias", json_boolean(m->hidden_bias));
    if (m->bn) {                          /* the BN option, only when on */
        put(b, o, "bn", json_true());
        put(b, o, "bn_eps", json_real(m->bn_eps));
        put(b, o, "bn_momentum", json_real(m->bn_momentum));
    }
    put(b, o, "P", json_integer((json_int_t)m->P));
    json_t *blocks = json_array();
    for (size_t i = 0; i < m->nblocks; i++) {
        const pflref_block *bl = &m->blocks[i];
        json_t *bo = json_object();
        put(b, bo, "name", json_string(bl->name));
        put(b, bo, "offset", json_integer((json_int_t)bl->offset));
        put(b, bo, "rows", json_integer((json_int_t)bl->rows));
        put(b, bo, "cols", json_integer((json_int_t)bl->cols));
        put(b, bo, "personal", json_boolean(split->personal[i]));
        append(b, blocks, bo);
    }
    put(b, o, "blocks", blocks);
    return o;
}

/* pFedHN's hypernetwork state x = W_h (P×e), b_h (P), v (N×e) as
 * {"W", "b" (with pfedhn.hn_bias = on), "v"}. */
static json_t *hypernetwork_json(builder *b, const pflref_spec *spec,
                                 const double *x)
{
    const size_t P = spec->problem->model.P, N = spec->problem->N,
                 e = spec->hyper.pfedhn.e;
    json_t *o = json_object();
    put(b, o, "W", pflref_json_new_matrix(x, P, e));
    if (spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON)
        put(b, o, "b", pflref_json_new_vector(x + P * e, P));
    put(b, o, "v", pflref_json_new_matrix(x + P * e + P, N, e));
    return o;
}

static json_t *init_json(builder *b, const pflref_spec *spec)
{
    static const char *const kinds[] = {"zeros", "given", "gaussian",
                                        "uniform"};
    json_t *o = json_object();
    put(b, o, "kind", json_string(kinds[spec->init_kind]));
    if (spec->init_kind == PFLREF_INIT_GAUSSIAN ||
        spec->init_kind == PFLREF_INIT_UNIFORM) {
        put(b, o, "seed", json_integer((json_int_t)spec->init_seed));
        put(b, o, spec->init_kind == PFLREF_INIT_GAUSSIAN ? "sd" : "scale",
            json_real(spec->init_scale));
    }
    if (spec->cluster_models != NULL)
        put(b, o, "cluster_models",
            pflref_json_new_matrix(spec->cluster_models,
                                   spec->n_cluster_models,
                                   spec->problem->model.P));
    if (spec->hypernetwork != NULL)
        put(b, o, "hypernetwork",
            hypernetwork_json(b, spec, spec->hypernetwork));
    if (spec->lora_init != NULL)
        put(b, o, "lora",
            pflref_json_new_vector(spec->lora_init, spec->n_lora_init));
    if (spec->lora_ranks != NULL)
        put(b, o, "lora_ranks",
            pflref_json_new_vector(spec->lora_ranks, spec->n_lora_ranks));
    return o;
}

/* The fields of a summary in a result, in the order written; the writer
 * and pflref_result_read_metric share it. */
static const struct {
    const char *name;
    size_t offset;          /* of the double in pflref_summary */
} SUMMARY_FIELDS[] = {
    {"mean", offsetof(pflref_summary, mean)},
    {"sd", offsetof(pflref_summary, sd)},
    {"worst", offsetof(pflref_summary, worst)},
    {"best", offsetof(pflref_summary, best)},
    {"p10", offsetof(pflref_summary, p10)},
    {"p90", offsetof(pflref_summary, p90)},
    {"worst_decile_mean", offsetof(pflref_summary, worst_decile_mean)},
    {"weighted_mean", offsetof(pflref_summary, weighted_mean)},
};
#define N_SUMMARY_FIELDS (sizeof SUMMARY_FIELDS / sizeof SUMMARY_FIELDS[0])

static json_t *summary_json(builder *b, const pflref_summary *s)
{
    json_t *o = json_object();
    for (size_t k = 0; k < N_SUMMARY_FIELDS; k++)
        put(b, o, SUMMARY_FIELDS[k].name,
            json_real(*(const double *)(const void *)(
                (const char *)s + SUMMARY_FIELDS[k].offset)));
    return o;
}

static json_t *eval_column(builder *b, const pflref_eval *ev, size_t N,
                           size_t off)
{
    json_t *a = json_array();
    for (size_t i = 0; i < N; i++)
        append(b, a, json_real(*(const double *)(const void *)(
                         (const char *)&ev[i] + off)));
    return a;
}

static json_t *metrics_json(builder *b, const pflref_run_result *r,
                            const pflref_model *m)
{
    const int linear = pflref_model_is_regression(m);
    const int classifier = pflref_model_is_classifier(m);
    json_t *o = json_object();
    for (size_t e = 0; e < r->n_eval; e++) {
        const pflref_eval_result *er = &r->eval[e];
        json_t *eo = json_object(), *per = json_object(), *sum = json_object();
        put(b, per, "train_loss",
            eval_column(b, er->train, r->N, offsetof(pflref_eval, loss)));
        put(b, sum, "train_loss", summary_json(b, &er->train_loss));
        if (er->test != NULL) {
            put(b, per, "test_loss",
                eval_column(b, er->test, r->N, offsetof(pflref_eval, loss)));
            put(b, sum, "test_loss", summary_json(b, &er->test_loss));
            if (linear) {
                put(b, per, "test_mse",
                    eval_column(b, er->test, r->N, offsetof(pflref_eval, mse)));
                put(b, sum, "test_mse", summary_json(b, &er->test_mse));
            }
            if (classifier) {
                put(b, per, "test_accuracy",
                    eval_column(b, er->test, r->N,
                                offsetof(pflref_eval, accuracy)));
                put(b, sum, "test_accuracy",
                    summary_json(b, &er->test_accuracy));
            }
        }
        put(b, eo, "per_client", per);
        put(b, eo, "summary", sum);
        put(b, o, er->label, eo);
    }
    return o;
}

static json_t *trajectory_json(builder *b, const pflref_trajectory *tj)
{
    json_t *a = json_array();
    for (size_t k = 0; tj != NULL && k < tj->count; k++) {
        const pflref_record *rec = &tj->records[k];
        if (rec->kind == PFLREF_EV_FINAL)
            continue;   /* written once, as the "final" object */
        json_t *o = json_object();
        put(b, o, "event", json_string(pflref_event_kind_name(rec->kind)));
        put(b, o, "phase", json_string(rec->phase));
        if (rec->round >= 0)
            put(b, o, "round", json_integer(rec->round));
        if (rec->client >= 0)
            put(b, o, "client", json_integer(rec->client));
        if (rec->step >= 0)
            put(b, o, "step", json_integer(rec->step));
        put(b, o, "name", json_string(rec->name));
        put(b, o, "value",
            pflref_json_new_vector(tj->values + rec->offset, rec->len));
        append(b, a, o);
    }
    return a;
}

static json_t *build_json(builder *b, const pflref_build_info *bi)
{
    json_t *o = json_object();
    put(b, o, "pflref", json_string(bi->version));
    put(b, o, "compiler", json_string(bi->compiler));
    put(b, o, "cflags", json_string(bi->cflags));
    put(b, o, "blas", json_string(bi->blas));
    put(b, o, "blas_threads", json_integer(bi->blas_threads));
    return o;
}

pflref_status pflref_result_to_json(const pflref_spec *spec,
                                    const pflref_run_result *res,
                                    const pflref_trajectory *tj,
                                    const pflref_build_info *build,
                                    char **out, pflref_error *err)
{
    *out = NULL;
    if (tj != NULL && tj->failed)
        return pflref_error_set(err, PFLREF_ENOMEM, "output.trajectory",
                                "out of memory recording the trajectory; "
                                "choose a coarser output.trajectory level");
    const pflref_problem *pr = spec->problem;
    const size_t P = res->P, N = res->N;
    /* JSON has no NaN or Inf: the run stops (PFLREF_EDIVERGE) before one
     * reaches a result, so one here is a pflref bug, not a lack of memory. */
    const char *bad = !pflref_all_finite(res->w0, P) ? "w0"
                      : res->w != NULL && !pflref_all_finite(res->w, P)
                          ? "final.w"
                      : res->v != NULL && !pflref_all_finite(res->v, N * P)
                          ? "final.v"
                      : res->alpha != NULL && !pflref_all_finite(res->alpha, N)
                          ? "final.alpha"
                      : res->theta0 != NULL &&
                              !pflref_all_finite(res->theta0, res->n_theta0)
                          ? "theta0"
                      : res->hn != NULL && !pflref_all_finite(res->hn, res->n_hn)
                          ? "hypernetwork"
                      : tj != NULL && !pflref_all_finite(tj->values, tj->nvalues)
                          ? "trajectory"
                          : NULL;
    if (bad != NULL)
        return pflref_error_set(err, PFLREF_EINTERNAL, bad,
                                "a non-finite number reached the result "
                                "writer (a pflref bug: please report it)");
    builder b = {0};
    json_t *root = json_object();
    put(&b, root, "format", json_string(PFLREF_RESULT_FORMAT));
    if (spec->id != NULL)
        put(&b, root, "id", json_string(spec->id));
    put(&b, root, "name", json_string(spec->name));
    put(&b, root, "algorithm", algorithm_json(&b, spec));
    put(&b, root, "model", model_json(&b, &pr->model, &spec->hyper.split));

    put(&b, root, "problem", problem_json(&b, spec));

    put(&b, root, "init", init_json(&b, spec));
    put(&b, root, "w0", pflref_json_new_vector(res->w0, P));
    if (res->theta0 != NULL)
        put(&b, root, "theta0",
            pflref_json_new_matrix(res->theta0, res->n_theta0 / P, P));
    if (res->hn != NULL && spec->hypernetwork != NULL)
        put(&b, root, "hypernetwork", hypernetwork_json(&b, spec, res->hn));
    if (!spec->schedule_given)
        put(&b, root, "schedule_config", schedule_config_json(&b, spec));
    put(&b, root, "schedule",
        schedule_json(&b, spec->schedule, res->chosen_peers));

    json_t *fin = json_object();
    if (res->w != NULL)
        put(&b, fin, "w", pflref_json_new_vector(res->w, P));
    if (res->v != NULL)
        put(&b, fin, "v", pflref_json_new_matrix(res->v, N, P));
    if (res->alpha != NULL)
        put(&b, fin, "alpha", pflref_json_new_vector(res->alpha, N));
    put(&b, root, "final", fin);
    put(&b, root, "metrics", metrics_json(&b, res, &pr->model));
    put(&b, root, "trajectory", trajectory_json(&b, tj));
    put(&b, root, "build", build_json(&b, build));

    char *text = NULL;
    if (!b.failed)
        text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                    JSON_REAL_PRECISION(17));
    json_decref(root);
    if (text == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory writing the result");
    *out = text;
    return PFLREF_OK;
}

/* ---- reading a metric back (for `pflref table`) ------------------------- */

pflref_status pflref_result_read_metric(const char *text, size_t len,
                                        const char *label, const char *metric,
                                        double **values, size_t *N,
                                        pflref_summary *summary,
                                        pflref_error *err)
{
    *values = NULL;
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    char where[PFLREF_WHERE_MAX];
    snprintf(where, sizeof where, "metrics.%s", label);
    json_t *fmt = json_object_get(root, "format");
    json_t *m = json_object_get(json_object_get(root, "metrics"), label);
    json_t *per = json_object_get(json_object_get(m, "per_client"), metric);
    json_t *sum = json_object_get(json_object_get(m, "summary"), metric);
    size_t n = 0;
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), PFLREF_RESULT_FORMAT) != 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "format",
                              "not a %s document", PFLREF_RESULT_FORMAT);
    else if (m == NULL)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "the result has no model labelled \"%s\"",
                              label);
    else if (per == NULL || sum == NULL)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "the result has no metric \"%s\" for \"%s\"",
                              metric, label);
    else
        st = pflref_json_array(per, where, 1, &n, err);
    double *v = NULL;
    if (st == PFLREF_OK) {
        v = malloc(n * sizeof *v);
        if (v == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    }
    if (st == PFLREF_OK)
        st = pflref_json_vector(per, where, n, v, err);
    for (size_t k = 0; st == PFLREF_OK && k < N_SUMMARY_FIELDS; k++) {
        const char *name = SUMMARY_FIELDS[k].name;
        json_t *x = json_object_get(sum, name);
        st = x == NULL ? pflref_error_set(err, PFLREF_EINVAL, where,
                                          "summary has no %s", name)
                       : pflref_json_real(
                             x, where,
                             (double *)(void *)((char *)summary +
                                                SUMMARY_FIELDS[k].offset),
                             err);
    }
    json_decref(root);
    if (st != PFLREF_OK) {
        free(v);
        return st;
    }
    summary->N = n;
    *values = v;
    *N = n;
    return PFLREF_OK;
}
