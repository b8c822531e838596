/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result.c: serialising a run's result (format pflref-result/1,
 * docs/formats.md, docs/schema/result.schema.json).
 *
 * The result repeats what defines the run (algorithm with every applicable
 * hyperparameter and switch, model, split, initial parameters, the schedule
 * actually used in the replayable "given" form), then the final state, the
 * per-client metrics with their client-aware summaries, the trajectory and
 * the build facts.  The text is printed front to back by the streaming
 * emitter (ref/io/emit.h), every array straight from the run's own C
 * arrays: nothing is built in between, and nothing is computed here (the
 * metrics are the run's, pflref_run's evaluation of the models the
 * algorithm reports, each once).  Members keep the order below, and the
 * doubles are pflref_dtoa's text (ref/core/dtoa.h), which reads back to
 * the same double, so the same run gives the same bytes.
 *
 * The "metrics" member is written (and read back for `pflref table`) by
 * ref/io/result_metrics.c.
 *
 * In the files form (ref/io/result_files.c) the arrays of
 * pflref_result_slot that go to files are written as their references
 * (strings), the trajectory's records as ranges of "trajectory_values",
 * and the manifest "array_files" follows the trajectory.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "core/vec.h"
#include "io/digest.h"
#include "io/emit.h"
#include "io/json.h"
#include "io/result.h"

/* "k": (a member's value follows) */
#define KEY(e, k) pflref_emit_key((e), (k))

static void key_string(pflref_emit *e, const char *key, const char *s)
{
    KEY(e, key);
    pflref_emit_string(e, s);
}

static void key_size(pflref_emit *e, const char *key, size_t x)
{
    KEY(e, key);
    pflref_emit_size(e, x);
}

static void key_real(pflref_emit *e, const char *key, double x)
{
    KEY(e, key);
    pflref_emit_real(e, x);
}

static void key_bool(pflref_emit *e, const char *key, int b)
{
    KEY(e, key);
    pflref_emit_bool(e, b);
}

/* Array `slot` under key: its reference when refs names one, else its
 * numbers (rows arrays of cols numbers; cols = 0: a vector of rows). */
static void key_array(pflref_emit *e, const char *key,
                      const pflref_result_refs *refs, pflref_result_slot slot,
                      const double *x, size_t rows, size_t cols)
{
    KEY(e, key);
    if (refs != NULL && refs->ref[slot] != NULL)
        pflref_emit_string(e, refs->ref[slot]);
    else if (cols == 0)
        pflref_emit_reals(e, x, rows);
    else
        pflref_emit_matrix(e, x, rows, cols);
}

/* [[indices of step 0], [step 1], ...] */
static void emit_batches(pflref_emit *e, const pflref_batches *bt)
{
    pflref_emit_array_begin(e);
    for (size_t s = 0; s < bt->nsteps; s++)
        pflref_emit_indices(e, bt->idx + bt->step_off[s],
                            bt->step_off[s + 1] - bt->step_off[s]);
    pflref_emit_array_end(e);
}

/* FedFomo's ε-greedy draws of a round: [{"order": π, "u": [u_s]}, ...],
 * one per participant. */
static void emit_peer_draws(pflref_emit *e, const pflref_round_plan *r)
{
    const pflref_batches *o = r->peer_order;
    pflref_emit_array_begin(e);
    for (size_t j = 0; j < r->m; j++) {
        pflref_emit_object_begin(e);
        KEY(e, "order");
        pflref_emit_indices(e, o->idx + o->step_off[j],
                            o->step_off[j + 1] - o->step_off[j]);
        KEY(e, "u");
        pflref_emit_reals(e, r->peer_u + r->peer_u_off[j],
                          r->peer_u_off[j + 1] - r->peer_u_off[j]);
        pflref_emit_object_end(e);
    }
    pflref_emit_array_end(e);
}

/* Dropout masks d of m participants (a round's, or the post phase's with
 * m = N): per participant, its passes, each an object of one mask per
 * dropout layer (rows of 0/1). */
static void emit_dropout(pflref_emit *e, const pflref_dropout_masks *d,
                         size_t m)
{
    pflref_emit_array_begin(e);
    for (size_t j = 0; j < m; j++) {
        pflref_emit_array_begin(e);
        for (size_t q = d->pass_off[j]; q < d->pass_off[j + 1]; q++) {
            const unsigned char *x = d->mask + d->mask_off[q];
            pflref_emit_object_begin(e);
            for (size_t l = 0; l < d->L; l++) {
                KEY(e, d->name[l]);
                pflref_emit_array_begin(e);
                for (size_t n = 0; n < d->nb[q]; n++) {
                    pflref_emit_array_begin(e);
                    for (size_t c = 0; c < d->width[l]; c++)
                        pflref_emit_integer(e, *x++);
                    pflref_emit_array_end(e);
                }
                pflref_emit_array_end(e);
            }
            pflref_emit_object_end(e);
        }
        pflref_emit_array_end(e);
    }
    pflref_emit_array_end(e);
}

/* Round t of the schedule actually used; chosen (or NULL) as for
 * emit_schedule. */
static void emit_round(pflref_emit *e, const pflref_round_plan *r,
                       const pflref_batches *chosen, size_t N)
{
    pflref_emit_object_begin(e);
    KEY(e, "clients");
    pflref_emit_indices(e, r->clients, r->m);
    if (r->n_selected != r->m) {
        KEY(e, "selected");
        pflref_emit_indices(e, r->selected, r->n_selected);
    }
    KEY(e, "drawn");
    pflref_emit_indices(e, r->drawn, r->n_selected);
    if (r->has_first_upload) {   /* uploaded_models[0] (bn_own.c) */
        KEY(e, "first_upload");
        pflref_emit_integer(e, (long long)r->first_upload);
    }
    KEY(e, "batches");
    pflref_emit_array_begin(e);
    for (size_t j = 0; j < r->m; j++)
        emit_batches(e, &r->batches[j]);
    pflref_emit_array_end(e);
    if (r->peers != NULL) {   /* FedFomo's S_i^t, one list per client */
        KEY(e, "peers");
        emit_batches(e, r->peers);
    } else if (chosen != NULL && chosen->nsteps > 0) {
        KEY(e, "peers");
        emit_batches(e, chosen);
    }
    if (r->peer_order != NULL) {   /* the draws S_i^t was chosen with */
        KEY(e, "peer_draws");
        emit_peer_draws(e, r);
    }
    if (r->draws != NULL) {    /* FedProx's K draws, in draw order */
        KEY(e, "draws");
        pflref_emit_indices(e, r->draws, r->n_draws);
    }
    if (r->dropout != NULL) {   /* the training passes' dropout masks */
        KEY(e, "dropout");
        emit_dropout(e, r->dropout, r->m);
    }
    if (r->estimate_dropout != NULL) {   /* IFCA's round-start estimates */
        KEY(e, "estimate_dropout");
        emit_dropout(e, r->estimate_dropout, r->m);
    }
    if (r->partition_dropout != NULL) {  /* IFCA's reported assignment */
        KEY(e, "partition_dropout");
        emit_dropout(e, r->partition_dropout, N);
    }
    if (r->personal != NULL) {  /* Ditto's own personal batches */
        KEY(e, "personal");
        pflref_emit_array_begin(e);
        /* m lists, or n_personal (FedALA's N under ala_clients = all) */
        const size_t np = r->n_personal > 0 ? r->n_personal : r->m;
        for (size_t j = 0; j < np; j++)
            emit_batches(e, &r->personal[j]);
        pflref_emit_array_end(e);
    }
    pflref_emit_object_end(e);
}

/* The schedule actually used; chosen (T entries, or NULL) holds the peer
 * lists FedFomo chose at run time in rounds whose schedule had none
 * (nsteps = 0 where it chose nothing), written as the round's "peers" so
 * that the result replays with them as data. */
static void emit_schedule(pflref_emit *e, const pflref_schedule *s,
                          const pflref_batches *chosen)
{
    pflref_emit_object_begin(e);
    key_string(e, "kind", "given");
    KEY(e, "rounds");
    pflref_emit_array_begin(e);
    for (size_t t = 0; t < s->T; t++)
        emit_round(e, &s->rounds[t], chosen != NULL ? &chosen[t] : NULL,
                   s->N);
    pflref_emit_array_end(e);
    if (s->post != NULL) {
        KEY(e, "post");
        pflref_emit_array_begin(e);
        for (size_t i = 0; i < s->N; i++)
            emit_batches(e, &s->post[i]);
        pflref_emit_array_end(e);
    }
    if (s->post_dropout != NULL) {   /* the post phase's dropout masks */
        KEY(e, "post_dropout");
        emit_dropout(e, s->post_dropout, s->N);
    }
    if (s->init_partition_dropout != NULL) {   /* IFCA, before round 0 */
        KEY(e, "init_partition_dropout");
        emit_dropout(e, s->init_partition_dropout, s->N);
    }
    pflref_emit_object_end(e);
}

/* Files, each with its SHA-256 and size: [{"path", "sha256", "bytes"},
 * ...] in the order given (the problem's data files, the manifest). */
static void emit_files(pflref_emit *e, const pflref_data_file *files,
                       size_t n)
{
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < n; i++) {
        pflref_emit_object_begin(e);
        key_string(e, "path", files[i].path);
        key_string(e, "sha256", files[i].sha256);
        KEY(e, "bytes");
        pflref_emit_integer(e, (long long)files[i].bytes);
        pflref_emit_object_end(e);
    }
    pflref_emit_array_end(e);
}

/* "problem": its source, N, the sample counts and the data files. */
static void emit_problem(pflref_emit *e, const pflref_spec *spec)
{
    const pflref_problem *pr = spec->problem;
    pflref_emit_object_begin(e);
    key_string(e, "source", spec->problem_source);
    key_size(e, "N", pr->N);
    KEY(e, "n_train");
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < pr->N; i++)
        pflref_emit_size(e, pr->clients[i].train.n);
    pflref_emit_array_end(e);
    KEY(e, "n_test");
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < pr->N; i++)
        pflref_emit_size(e, pr->clients[i].test.n);
    pflref_emit_array_end(e);
    if (spec->n_data_files > 0) {
        pflref_digest_wait(spec->digests);   /* the second thread's digests */
        KEY(e, "data_files");
        emit_files(e, spec->data_files, spec->n_data_files);
    }
    pflref_emit_object_end(e);
}

static void emit_work(pflref_emit *e, const pflref_local_work *w)
{
    pflref_emit_object_begin(e);
    if (w->epochs > 0)
        key_size(e, "epochs", w->epochs);
    else
        key_size(e, "steps", w->steps);
    key_size(e, "batch_size", w->B);
    pflref_emit_object_end(e);
}

static void emit_schedule_config(pflref_emit *e, const pflref_spec *spec)
{
    const pflref_schedule_config *c = &spec->schedule_cfg;
    pflref_emit_object_begin(e);
    key_string(e, "kind", "generate");
    key_size(e, "rounds", c->T);
    key_size(e, "clients_per_round", c->m);
    key_string(e, "sampler", pflref_sampler_kind_name(c->sampler));
    key_size(e, "client_seed", c->client_seed);
    key_string(e, "batches", pflref_batch_order_name(c->order));
    key_size(e, "batch_seed", c->batch_seed);
    KEY(e, "local");
    emit_work(e, &c->train);
    if (c->has_post) {
        KEY(e, "post");
        emit_work(e, &c->post);
    }
    if (c->peers > 0) {
        key_size(e, "peers", c->peers);
        key_size(e, "peer_seed", c->peer_seed);
    }
    pflref_emit_object_end(e);
}

/* "hyperparameters" and "switches": every one that applies to the
 * algorithm, in the registry's order. */
static void emit_params(pflref_emit *e, const pflref_spec *spec, int reals)
{
    const char *alg = spec->algorithm->name;
    size_t count;
    const pflref_param *params = pflref_params(&count);
    pflref_emit_object_begin(e);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        if (!pflref_name_in_list(p->algorithms, alg) ||
            (p->type == PFLREF_PARAM_ENUM) == reals)
            continue;
        KEY(e, p->name);
        if (p->type == PFLREF_PARAM_REAL) {
            double x = pflref_hyper_get_real(&spec->hyper, p);
            /* an unused optional hyperparameter stays unset (NaN) */
            if (isnan(x))
                pflref_emit_null(e);
            else
                pflref_emit_real(e, x);
        } else if (p->type == PFLREF_PARAM_INT) {
            const size_t v = pflref_hyper_get_int(&spec->hyper, p);
            /* an unset optional count (apple.M) likewise */
            if (v == PFLREF_INT_UNSET)
                pflref_emit_null(e);
            else
                pflref_emit_integer(e, (long long)v);
        } else {
            pflref_emit_string(e, pflref_hyper_get_enum(&spec->hyper, p));
        }
    }
    pflref_emit_object_end(e);
}

static void emit_algorithm(pflref_emit *e, const pflref_spec *spec)
{
    const pflref_algorithm *alg = spec->algorithm;
    pflref_emit_object_begin(e);
    key_string(e, "name", alg->name);
    key_string(e, "title", alg->title);
    key_string(e, "preset", spec->preset);
    KEY(e, "hyperparameters");
    emit_params(e, spec, 1);
    KEY(e, "switches");
    emit_params(e, spec, 0);
    pflref_emit_object_end(e);
}

static void emit_blocks(pflref_emit *e, const pflref_model *m,
                        const pflref_split *split)
{
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < m->nblocks; i++) {
        const pflref_block *bl = &m->blocks[i];
        pflref_emit_object_begin(e);
        key_string(e, "name", bl->name);
        key_size(e, "offset", bl->offset);
        key_size(e, "rows", bl->rows);
        key_size(e, "cols", bl->cols);
        key_bool(e, "personal", split->personal[i]);
        pflref_emit_object_end(e);
    }
    pflref_emit_array_end(e);
}

/* key: [a, b, c] or [a] (a shape of rank 3 or 1). */
static void key_shape(pflref_emit *e, const char *key, const size_t *shape,
                      int rank)
{
    KEY(e, key);
    pflref_emit_array_begin(e);
    for (int q = 0; q < rank; q++)
        pflref_emit_size(e, shape[q]);
    pflref_emit_array_end(e);
}

/* A layer list's layers, each with its type, name, the keys of its type
 * (defaults written out) and its input and output shapes: a preset's
 * expansion is visible here. */
static void emit_layers(pflref_emit *e, const pflref_model *m)
{
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < m->nlayers; i++) {
        const pflref_layer *L = &m->layers[i];
        pflref_emit_object_begin(e);
        key_string(e, "type", pflref_layer_kind_name(L->kind));
        key_string(e, "name", L->name);
        switch (L->kind) {
        case PFLREF_LAYER_DENSE:
            key_size(e, "out", L->out);
            key_bool(e, "bias", L->bias);
            break;
        case PFLREF_LAYER_CONV2D:
            key_size(e, "out_channels", L->out);
            key_size(e, "kernel", L->kernel);
            key_size(e, "stride", L->stride);
            key_size(e, "padding", L->padding);
            key_bool(e, "bias", L->bias);
            break;
        case PFLREF_LAYER_MAXPOOL2D:
        case PFLREF_LAYER_AVGPOOL2D:
            key_size(e, "kernel", L->kernel);
            key_size(e, "stride", L->stride);
            break;
        case PFLREF_LAYER_BATCHNORM1D:
        case PFLREF_LAYER_BATCHNORM2D:
            key_real(e, "eps", L->eps);
            key_real(e, "momentum", L->momentum);
            break;
        case PFLREF_LAYER_DROPOUT:
            key_real(e, "p", L->p);
            break;
        default:
            break;
        }
        key_shape(e, "in_shape", L->in_shape, L->in_rank);
        key_shape(e, "out_shape", L->out_shape, L->out_rank);
        pflref_emit_object_end(e);
    }
    pflref_emit_array_end(e);
}

static void emit_model(pflref_emit *e, const pflref_model *m,
                       const pflref_split *split)
{
    pflref_emit_object_begin(e);
    if (m->kind == PFLREF_MODEL_LAYERS) {
        key_string(e, "kind", pflref_model_kind_name(m->kind));
        key_string(e, "loss", pflref_loss_name(m->loss));
        key_shape(e, "input", m->input, m->input_rank);
        if (m->preset[0] != '\0')
            key_string(e, "preset", m->preset);
        key_size(e, "d", m->d);
        key_size(e, "k", m->k);
        KEY(e, "layers");
        emit_layers(e, m);
        key_size(e, "P", m->P);
        KEY(e, "blocks");
        emit_blocks(e, m, split);
        pflref_emit_object_end(e);
        return;
    }
    key_string(e, "kind", pflref_model_kind_name(m->kind));
    key_string(e, "loss", pflref_loss_name(m->loss));
    key_size(e, "d", m->d);
    if (m->kind == PFLREF_MODEL_SOFTMAX || m->kind == PFLREF_MODEL_MLP)
        key_size(e, "k", m->k);
    if (m->kind == PFLREF_MODEL_MLP) {
        key_size(e, "h", m->h);
        key_string(e, "activation", pflref_activation_name(m->activation));
    }
    key_bool(e, "bias", m->bias);
    if (m->kind == PFLREF_MODEL_MLP)      /* b1; "bias" is b2 for the mlp */
        key_bool(e, "hidden_bias", m->hidden_bias);
    if (m->bn) {                          /* the BN option, only when on */
        key_bool(e, "bn", 1);
        key_real(e, "bn_eps", m->bn_eps);
        key_real(e, "bn_momentum", m->bn_momentum);
    }
    key_size(e, "P", m->P);
    KEY(e, "blocks");
    emit_blocks(e, m, split);
    pflref_emit_object_end(e);
}

/* pFedHN's hypernetwork state x = W_h (P×e), b_h (P), v (N×e) as
 * {"W", "b" (with pfedhn.hn_bias = on), "v"}; refs (or NULL) may give
 * them as files (the final state; the spec's, in "init", stays inline). */
static void emit_hypernetwork(pflref_emit *e, const pflref_spec *spec,
                              const double *x, const pflref_result_refs *refs)
{
    const size_t P = spec->problem->model.P, N = spec->problem->N,
                 ed = spec->hyper.pfedhn.e;
    pflref_emit_object_begin(e);
    key_array(e, "W", refs, PFLREF_RA_HN_W, x, P, ed);
    if (spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON)
        key_array(e, "b", refs, PFLREF_RA_HN_B, x + P * ed, P, 0);
    key_array(e, "v", refs, PFLREF_RA_HN_V, x + P * ed + P, N, ed);
    pflref_emit_object_end(e);
}

static void emit_init(pflref_emit *e, const pflref_spec *spec)
{
    static const char *const kinds[] = {"zeros", "given", "gaussian",
                                        "uniform"};
    pflref_emit_object_begin(e);
    key_string(e, "kind", kinds[spec->init_kind]);
    if (spec->init_kind == PFLREF_INIT_GAUSSIAN ||
        spec->init_kind == PFLREF_INIT_UNIFORM) {
        key_size(e, "seed", spec->init_seed);
        key_real(e, spec->init_kind == PFLREF_INIT_GAUSSIAN ? "sd" : "scale",
                 spec->init_scale);
    }
    if (spec->cluster_models != NULL) {
        KEY(e, "cluster_models");
        pflref_emit_matrix(e, spec->cluster_models, spec->n_cluster_models,
                           spec->problem->model.P);
    }
    if (spec->hypernetwork != NULL) {
        KEY(e, "hypernetwork");
        emit_hypernetwork(e, spec, spec->hypernetwork, NULL);
    }
    if (spec->lora_init != NULL) {
        KEY(e, "lora");
        pflref_emit_reals(e, spec->lora_init, spec->n_lora_init);
    }
    if (spec->lora_ranks != NULL) {
        KEY(e, "lora_ranks");
        pflref_emit_reals(e, spec->lora_ranks, spec->n_lora_ranks);
    }
    if (spec->lora_targets != NULL) {
        KEY(e, "lora_targets");
        pflref_emit_array_begin(e);
        for (size_t j = 0; j < spec->n_lora_targets; j++)
            pflref_emit_string(e, spec->lora_targets[j]);
        pflref_emit_array_end(e);
    }
    if (spec->fedrecon_support != NULL) {   /* FedRecon's D_{i,s} */
        KEY(e, "support");
        emit_batches(e, spec->fedrecon_support);
    }
    if (spec->scaffold_c != NULL) {         /* SCAFFOLD's c⁰ as given */
        KEY(e, "c");
        pflref_emit_reals(e, spec->scaffold_c, spec->problem->model.P);
    }
    if (spec->scaffold_c_i != NULL) {       /* and its c_i⁰ */
        KEY(e, "c_i");
        pflref_emit_matrix(e, spec->scaffold_c_i, spec->problem->N,
                           spec->problem->model.P);
    }
    if (spec->n_init_files > 0) {   /* init's arrays given as files */
        KEY(e, "data_files");
        emit_files(e, spec->init_files, spec->n_init_files);
    }
    pflref_emit_object_end(e);
}

int pflref_result_record_written(const pflref_trajectory *tj, size_t k)
{
    return tj->records[k].kind != PFLREF_EV_FINAL;
}

/* The trajectory's records (the final ones are the "final" object);
 * ranged: each value as {"offset", "count"} into trajectory_values, the
 * records' values one after the other in record order. */
static void emit_trajectory(pflref_emit *e, const pflref_trajectory *tj,
                            int ranged)
{
    size_t offset = 0;
    pflref_emit_array_begin(e);
    for (size_t k = 0; tj != NULL && k < tj->count; k++) {
        const pflref_record *rec = &tj->records[k];
        if (!pflref_result_record_written(tj, k))
            continue;
        pflref_emit_object_begin(e);
        key_string(e, "event", pflref_event_kind_name(rec->kind));
        key_string(e, "phase", rec->phase);
        if (rec->round >= 0) {
            KEY(e, "round");
            pflref_emit_integer(e, rec->round);
        }
        if (rec->client >= 0) {
            KEY(e, "client");
            pflref_emit_integer(e, rec->client);
        }
        if (rec->step >= 0) {
            KEY(e, "step");
            pflref_emit_integer(e, rec->step);
        }
        key_string(e, "name", rec->name);
        KEY(e, "value");
        if (ranged && rec->len > 0) {   /* a range has count >= 1 */
            pflref_emit_object_begin(e);
            key_size(e, "offset", offset);
            key_size(e, "count", rec->len);
            pflref_emit_object_end(e);
            offset += rec->len;
        } else {
            pflref_emit_reals(e, tj->values + rec->offset, rec->len);
        }
        pflref_emit_object_end(e);
    }
    pflref_emit_array_end(e);
}

static void emit_build(pflref_emit *e, const pflref_build_info *bi)
{
    pflref_emit_object_begin(e);
    key_string(e, "pflref", bi->version);
    key_string(e, "compiler", bi->compiler);
    key_string(e, "cflags", bi->cflags);
    key_string(e, "blas", bi->blas);
    KEY(e, "blas_threads");
    pflref_emit_integer(e, bi->blas_threads);
    pflref_emit_object_end(e);
}

void pflref_result_arrays(const pflref_spec *spec,
                          const pflref_run_result *res,
                          const pflref_trajectory *tj,
                          pflref_result_array out[PFLREF_RA_COUNT])
{
    static const char *const NAMES[PFLREF_RA_COUNT] = {
        "w0", "theta0", "hypernetwork.W", "hypernetwork.b", "hypernetwork.v",
        "final.w", "final.v", "final.alpha", "trajectory"};
    const size_t P = res->P, N = res->N;
    const size_t ed = spec->hyper.pfedhn.e;
    const double *hn = res->hn;
    const int has_hn = hn != NULL && spec->hypernetwork != NULL;
    size_t nvalues = 0;
    for (size_t k = 0; tj != NULL && k < tj->count; k++)
        if (pflref_result_record_written(tj, k))
            nvalues += tj->records[k].len;
    const pflref_result_array a[PFLREF_RA_COUNT] = {
        {NULL, res->w0, P, 0, 1},
        {NULL, res->theta0, res->n_theta0 / P, P, res->theta0 != NULL},
        {NULL, hn, P, ed, has_hn},
        {NULL, has_hn ? hn + P * ed : NULL, P, 0,
         has_hn && spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON},
        {NULL, has_hn ? hn + P * ed + P : NULL, N, ed, has_hn},
        {NULL, res->w, P, 0, res->w != NULL},
        {NULL, res->v, N, P, res->v != NULL},
        {NULL, res->alpha, N, 0, res->alpha != NULL},
        {NULL, NULL, nvalues, 0, 1},
    };
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
        out[s] = a[s];
        out[s].name = NAMES[s];
    }
}

/* JSON has no NaN or Inf: the run stops (PFLREF_EDIVERGE) before one
 * reaches a result, so one here is a pflref bug, not a lack of memory.
 * The array that holds one, or NULL. */
static const char *not_finite(const pflref_run_result *res,
                              const pflref_trajectory *tj)
{
    const size_t P = res->P, N = res->N;
    return !pflref_all_finite(res->w0, P) ? "w0"
           : res->w != NULL && !pflref_all_finite(res->w, P) ? "final.w"
           : res->v != NULL && !pflref_all_finite(res->v, N * P) ? "final.v"
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
}

pflref_status pflref_result_check(const pflref_run_result *res,
                                  const pflref_trajectory *tj,
                                  pflref_error *err)
{
    if (tj != NULL && tj->failed)
        return pflref_error_set(err, PFLREF_ENOMEM, "output.trajectory",
                                "out of memory recording the trajectory; "
                                "choose a coarser output.trajectory level");
    const char *bad = not_finite(res, tj);
    if (bad != NULL)
        return pflref_error_set(err, PFLREF_EINTERNAL, bad,
                                "a non-finite number reached the result "
                                "writer (a pflref bug: please report it)");
    return PFLREF_OK;
}

/* The document's members, in order. */
static void emit_result(pflref_emit *e, const pflref_spec *spec,
                        const pflref_run_result *res,
                        const pflref_trajectory *tj,
                        const pflref_build_info *build,
                        const pflref_result_refs *refs)
{
    const pflref_problem *pr = spec->problem;
    const size_t P = res->P, N = res->N;
    pflref_emit_object_begin(e);
    key_string(e, "format", PFLREF_RESULT_FORMAT);
    if (spec->id != NULL)
        key_string(e, "id", spec->id);
    key_string(e, "name", spec->name);
    KEY(e, "algorithm");
    emit_algorithm(e, spec);
    KEY(e, "model");
    emit_model(e, &pr->model, &spec->hyper.split);
    KEY(e, "problem");
    emit_problem(e, spec);
    KEY(e, "init");
    emit_init(e, spec);
    key_array(e, "w0", refs, PFLREF_RA_W0, res->w0, P, 0);
    if (res->theta0 != NULL)
        key_array(e, "theta0", refs, PFLREF_RA_THETA0, res->theta0,
                  res->n_theta0 / P, P);
    if (res->hn != NULL && spec->hypernetwork != NULL) {
        KEY(e, "hypernetwork");
        emit_hypernetwork(e, spec, res->hn, refs);
    }
    if (!spec->schedule_given) {
        KEY(e, "schedule_config");
        emit_schedule_config(e, spec);
    }
    KEY(e, "schedule");
    emit_schedule(e, spec->schedule, res->chosen_peers);
    KEY(e, "final");
    pflref_emit_object_begin(e);
    if (res->w != NULL)
        key_array(e, "w", refs, PFLREF_RA_FINAL_W, res->w, P, 0);
    if (res->v != NULL)
        key_array(e, "v", refs, PFLREF_RA_FINAL_V, res->v, N, P);
    if (res->alpha != NULL)
        key_array(e, "alpha", refs, PFLREF_RA_FINAL_ALPHA, res->alpha, N, 0);
    pflref_emit_object_end(e);
    KEY(e, "metrics");
    pflref_result_emit_metrics(e, res, &pr->model);
    const char *tv = refs != NULL ? refs->ref[PFLREF_RA_TRAJECTORY] : NULL;
    if (tv != NULL)
        key_string(e, "trajectory_values", tv);
    KEY(e, "trajectory");
    emit_trajectory(e, tj, tv != NULL);
    if (refs != NULL && refs->n_files > 0) {
        KEY(e, "array_files");
        emit_files(e, refs->files, refs->n_files);
    }
    KEY(e, "build");
    emit_build(e, build);
    pflref_emit_object_end(e);
}

pflref_status pflref_result_text(const pflref_spec *spec,
                                 const pflref_run_result *res,
                                 const pflref_trajectory *tj,
                                 const pflref_build_info *build,
                                 const pflref_result_refs *refs, char **out,
                                 size_t *len, pflref_error *err)
{
    *out = NULL;
    if (len != NULL)
        *len = 0;
    pflref_status st = pflref_result_check(res, tj, err);
    if (st != PFLREF_OK)
        return st;
    pflref_emit e;
    pflref_emit_init(&e, 0, err);
    emit_result(&e, spec, res, tj, build, refs);
    return pflref_emit_finish(&e, out, len);
}

pflref_status pflref_result_to_json(const pflref_spec *spec,
                                    const pflref_run_result *res,
                                    const pflref_trajectory *tj,
                                    const pflref_build_info *build,
                                    char **out, pflref_error *err)
{
    return pflref_result_text(spec, res, tj, build, NULL, out, NULL, err);
}
