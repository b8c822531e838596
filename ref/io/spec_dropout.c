/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_dropout.c: a given schedule's dropout masks,
 * "schedule.rounds[t].dropout" (docs/formats.md, "schedule"; docs/
 * models.md, "Dropout"), and the checks a model with dropout layers
 * needs of the rest of the spec.
 *
 *   "dropout": [participant j: [pass q: {"LAYER": [[0, 1, ...], ...]}]]
 *
 * one entry per participant (clients[j]), each the array of its training
 * passes in the order its algorithm makes them; a pass is an object with
 * one member per dropout layer, keyed by the layer's name, whose value is
 * the mask: n_b rows (the pass's batch size, the same for every layer of
 * the pass) of the layer's input entries per sample (an image flattened
 * in NCHW order), each 0 or 1.  The batch sizes are checked against the
 * passes at run time (ref/engine/dropout.c), as only the run knows which
 * batch each pass reads.
 *
 * The phase after training (schedule.post) takes its masks from
 * "schedule.post_dropout": one list per client 0 .. N−1 (as "post"), each
 * the array of that client's post-phase passes in the same form.
 *
 * IFCA under ifca.estimate_mode = train (Ghosh et al. 2020, Alg. 1 l. 5)
 * takes each estimate ĵ = argmin_j F_i(θ_j) in k training passes on the
 * client's whole training set, one per cluster model θ_0 .. θ_{k−1} in
 * that order, each with the pass's masks of n_i rows (docs/algorithms/
 * ifca.md, "The estimate's mode"), from three lists of their own:
 *
 *   "schedule.init_partition_dropout": [client i: [k passes]]
 *       every client's reported assignment at θ_j^(0), before round 0
 *   "schedule.rounds[t].estimate_dropout": [participant j: [k passes]]
 *       the participants' estimates at round t's start (clients[j])
 *   "schedule.rounds[t].partition_dropout": [client i: [k passes]]
 *       every client's reported assignment (record "partition") after
 *       round t's server update
 *
 * so rounds[t].dropout keeps the local steps' passes alone.  Their counts
 * (k a client) and row counts (n_i) are known from the spec and checked
 * when it is read (pflref_spec_check_dropout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/spec_read.h"

/* The algorithms whose training passes are mapped to masks (docs/
 * models.md, "Dropout"): their local work is the shared local solver's
 * steps (ref/engine/sgd.c), one training pass per step and solver, in the
 * rounds and in the phase after training (finetune's and FedAlt's
 * fine-tuning, interp's local models h_i: schedule.post_dropout); their
 * other model calls are evaluation-mode passes (interp's grid scores v̄
 * with pflref_model_evaluate), which take no mask.  APFL makes two
 * training passes a step, w_i's gradient, then v̄'s (the paper's mixture)
 * or v_i's (apfl.variant = pfllib); under apfl.mix = output v and w_i
 * pass in evaluation mode (pflref_model_outputs), which takes no mask,
 * so that switch value is refused with dropout.  Per-FedAvg makes per step
 * ∇f(w; D) and ∇f(w̃; D′), then the exact variant's Hessian-vector product
 * on D″ (one forward) or HF's two gradients on D″, and in the phase after
 * training one pass per personalisation step.  FedBN (Li et al. 2021,
 * Alg. 1) and CFL (Sattler et al. 2020, Alg. 1) train with the shared
 * solver alone: one pass per local step, in step order (CFL's cosine
 * similarities and FedBN's aggregation read no model pass).  FedFomo
 * (Zhang et al. 2021, Alg. 1 l. 2-3) takes its validation losses in
 * training-mode passes (pflref_model_loss, as PFLlib's clientfomo.py:147
 * runs its models, never put in eval(); under fedfomo.val_mode = eval they
 * are evaluation passes, no mask, and only the local steps below take
 * one): per participant first L_i(a) of
 * the anchor, then L_i(θ_n) of each download n in S_i^t's order whose θ_n
 * differs from a (an equal one has r_n = 0 and no pass), then the own
 * upload's under fedfomo.self = included, each one pass on the
 * validation split (one per batch under fedfomo.val_loss = batch_mean),
 * then one pass per local step.  pFedHN (Shamsian et al. 2021, Alg. 1
 * l. 6-8) takes one pass per local step of θ̃ on the round's client; its
 * reported θ_i = h(v_i) take none.  IFCA (Ghosh et al. 2020, Alg. 1)
 * under ifca.estimate_mode = eval takes its estimates ĵ = argmin_j
 * F_i(θ_j) in evaluation passes (no mask: the participants' at the
 * round's start, every client's for the reported v_i before round 0 and
 * after each server update), so a participant's list holds its training
 * passes only: one per local step of LocalUpdate (ifca.mode = model) or
 * the one gradient g_i = ∇F_i(θ_ĵ; b) (ifca.mode = gradient).  Under the
 * default estimate_mode = train the estimates are training passes too,
 * whose masks are the three estimate lists above (check_estimates). */
static const char *const DROPOUT_ALGORITHMS[] = {"fedavg", "local", "ditto",
                                                 "fedalt", "finetune",
                                                 "interp", "apfl",
                                                 "perfedavg", "fedbn", "cfl",
                                                 "fedfomo", "pfedhn", "ifca",
                                                 NULL};

/* Why an algorithm whose passes are not mapped refuses dropout, where the
 * reason is more than "not yet" (docs/models.md, "Dropout"). */
static const struct {
    const char *name, *why;
} REFUSED[] = {
    {NULL, NULL}};

/* "a, b and c": the names of DROPOUT_ALGORITHMS into buf. */
static void algorithm_names(char *buf, size_t size)
{
    size_t n = 0, used = 0;
    while (DROPOUT_ALGORITHMS[n] != NULL)
        n++;
    buf[0] = '\0';
    for (size_t q = 0; q < n && used < size; q++) {
        const int k = snprintf(buf + used, size - used, "%s%s",
                               q == 0 ? "" : q + 1 == n ? " and " : ", ",
                               DROPOUT_ALGORITHMS[q]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* The index of m's first dropout layer (m has one). */
static size_t first_dropout(const pflref_model *m)
{
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT)
            return i;
    return 0;
}

/* The first of the estimate lists given (its path into where), or NULL. */
static const pflref_dropout_masks *first_estimate_list(
    const pflref_schedule *sc, char *where, size_t size)
{
    if (sc->init_partition_dropout != NULL) {
        snprintf(where, size, "schedule.init_partition_dropout");
        return sc->init_partition_dropout;
    }
    for (size_t t = 0; t < sc->T; t++) {
        if (sc->rounds[t].estimate_dropout != NULL) {
            snprintf(where, size, "schedule.rounds[%zu].estimate_dropout", t);
            return sc->rounds[t].estimate_dropout;
        }
        if (sc->rounds[t].partition_dropout != NULL) {
            snprintf(where, size, "schedule.rounds[%zu].partition_dropout",
                     t);
            return sc->rounds[t].partition_dropout;
        }
    }
    return NULL;
}

/* One estimate list d (path where; at: "round t" or "before round 0";
 * what: the estimate's name) of m clients (ids clients[j], or j when
 * NULL): k passes each, each of client i's n_i rows. */
static pflref_status check_estimate_list(const pflref_spec *spec,
                                         const pflref_dropout_masks *d,
                                         const char *where, const char *at,
                                         const char *what, size_t m,
                                         const size_t *clients,
                                         pflref_error *err)
{
    const size_t k = spec->hyper.ifca.k;
    if (d == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: ifca.estimate_mode = train takes %s in "
                                "k = %zu training passes on the client's "
                                "whole training set, one per cluster model "
                                "(θ_0 first), which take dropout masks: "
                                "give one list of k passes per %s", at, what,
                                k, clients != NULL ? "participant (clients[j])"
                                                   : "client 0 .. N−1");
    for (size_t j = 0; j < m; j++) {
        const size_t i = clients != NULL ? clients[j] : j;
        const size_t n = spec->problem->clients[i].train.n;
        const size_t given = d->pass_off[j + 1] - d->pass_off[j];
        char jp[PFLREF_WHERE_MAX];
        pflref_json_index_path(jp, sizeof jp, where, j);
        if (given != k)
            return pflref_error_set(err, PFLREF_EINVAL, jp,
                                    "%s, client %zu: %zu estimate passes "
                                    "given for ifca.k = %zu cluster models "
                                    "(one pass per θ_j, θ_0 first)", at, i,
                                    given, k);
        for (size_t q = 0; q < given; q++) {
            const size_t nb = d->nb[d->pass_off[j] + q];
            if (nb == n)
                continue;
            char qp[PFLREF_WHERE_MAX], lp[PFLREF_WHERE_MAX];
            pflref_json_index_path(qp, sizeof qp, jp, q);
            pflref_json_key_path(lp, sizeof lp, qp, d->name[0]);
            return pflref_error_set(err, PFLREF_EINVAL, lp,
                                    "%s, client %zu, estimate pass %zu "
                                    "(cluster model θ_%zu): %zu mask rows, "
                                    "but the estimate scores the client's "
                                    "whole training set of %zu samples", at,
                                    i, q + 1, q, nb, n);
        }
    }
    return PFLREF_OK;
}

/* The masks of IFCA's estimate passes (ifca.estimate_mode = train): every
 * list there, of k passes a client of its training set's size, in the
 * order the passes run; none for any other algorithm or mode. */
static pflref_status check_estimates(const pflref_spec *spec,
                                     pflref_error *err)
{
    const pflref_schedule *sc = spec->schedule;
    const char *alg = spec->algorithm->name;
    const int ifca = strcmp(alg, "ifca") == 0;
    if (!ifca || spec->hyper.ifca_estimate_mode == PFLREF_IFCA_ESTIMATE_EVAL) {
        char where[PFLREF_WHERE_MAX];
        if (first_estimate_list(sc, where, sizeof where) == NULL)
            return PFLREF_OK;
        if (!ifca)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s makes no estimate passes: only "
                                    "ifca under ifca.estimate_mode = train "
                                    "takes these masks", alg);
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "ifca.estimate_mode = eval takes its "
                                "estimates ĵ = argmin_j F_i(θ_j) in "
                                "evaluation passes, which take no mask: "
                                "give none (or ifca.estimate_mode = "
                                "train)");
    }
    pflref_status st = check_estimate_list(
        spec, sc->init_partition_dropout, "schedule.init_partition_dropout",
        "before round 0", "every client's reported assignment at the "
        "initial models θ_j^(0)", sc->N, NULL, err);
    for (size_t t = 0; st == PFLREF_OK && t < sc->T; t++) {
        const pflref_round_plan *r = &sc->rounds[t];
        char at[32], ep[PFLREF_WHERE_MAX], pp[PFLREF_WHERE_MAX];
        snprintf(at, sizeof at, "round %zu", t);
        snprintf(ep, sizeof ep, "schedule.rounds[%zu].estimate_dropout", t);
        snprintf(pp, sizeof pp, "schedule.rounds[%zu].partition_dropout", t);
        st = check_estimate_list(spec, r->estimate_dropout, ep, at,
                                 "each participant's estimate ĵ = argmin_j "
                                 "F_i(θ_j) at the round's start", r->m,
                                 r->clients, err);
        if (st == PFLREF_OK)
            st = check_estimate_list(spec, r->partition_dropout, pp, at,
                                     "every client's reported assignment "
                                     "after the server update (record "
                                     "partition)", sc->N, NULL, err);
    }
    return st;
}

pflref_status pflref_spec_check_dropout(const json_t *root,
                                        const pflref_spec *spec,
                                        pflref_error *err)
{
    const pflref_model *m = &spec->problem->model;
    if (pflref_model_dropout_layers(m) == 0)
        return PFLREF_OK;
    const size_t i = first_dropout(m);
    char where[64];
    snprintf(where, sizeof where, "model.layers[%zu]", i);
    const char *alg = spec->algorithm->name;
    int known = 0;
    for (size_t q = 0; DROPOUT_ALGORITHMS[q] != NULL; q++)
        known |= strcmp(alg, DROPOUT_ALGORITHMS[q]) == 0;
    if (!known) {
        char names[160];
        algorithm_names(names, sizeof names);
        const char *why = NULL;
        for (size_t q = 0; REFUSED[q].name != NULL; q++)
            if (strcmp(alg, REFUSED[q].name) == 0)
                why = REFUSED[q].why;
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s does not map its training passes to "
                                "dropout masks%s%s%s: it cannot take "
                                "dropout layer \"%s\" (%s can)", alg,
                                why != NULL ? " (" : "",
                                why != NULL ? why : "",
                                why != NULL ? ")" : "", m->layers[i].name,
                                names);
    }
    if (strcmp(alg, "apfl") == 0 &&
        spec->hyper.apfl.mix == PFLREF_APFL_MIX_OUTPUT)
        return pflref_error_set(err, PFLREF_EINVAL,
                                "algorithm.switches.apfl.mix",
                                "apfl.mix = output takes v's and w_i's "
                                "outputs in evaluation-mode passes, which "
                                "skip dropout layer \"%s\" and take no "
                                "mask: with dropout give apfl.mix = "
                                "parameter (two training passes a step, "
                                "w_i's, then v̄'s)", m->layers[i].name);
    if (!spec->schedule_given)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.kind",
                                "dropout layer \"%s\" takes its masks from "
                                "a given schedule (rounds[t].dropout): a "
                                "generated schedule has none",
                                m->layers[i].name);
    (void)root;
    return check_estimates(spec, err);
}

/* The layer names and input widths of m's dropout layers into d. */
static pflref_status dropout_layers(const pflref_model *m,
                                    pflref_dropout_masks *d,
                                    const char *where, pflref_error *err)
{
    d->L = pflref_model_dropout_layers(m);
    d->name = calloc(d->L, sizeof *d->name);
    d->width = calloc(d->L, sizeof *d->width);
    if (d->name == NULL || d->width == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    for (size_t i = 0, l = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT) {
            d->name[l] = pflref_spec_strdup(m->layers[i].name);
            if (d->name[l] == NULL)
                return pflref_error_set(err, PFLREF_ENOMEM, where,
                                        "out of memory");
            d->width[l++] = m->layers[i].in_size;
        }
    return PFLREF_OK;
}

/* One mask (path where) of layer l: nb rows (nb = 0: set it) of
 * d->width[l] 0/1 entries, appended at d->mask + *fill. */
static pflref_status read_mask(const json_t *v, const char *where,
                               pflref_dropout_masks *d, size_t l, size_t *nb,
                               size_t *fill, size_t *cap, pflref_error *err)
{
    size_t rows;
    pflref_status st = pflref_json_array(v, where, 1, &rows, err);
    if (st != PFLREF_OK)
        return st;
    if (*nb != 0 && rows != *nb)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu rows, but the pass's mask of layer "
                                "\"%s\" has %zu: a pass has one batch size",
                                rows, d->name[0], *nb);
    *nb = rows;
    const size_t W = d->width[l];
    if (rows > PFLREF_SPEC_MAX_COUNT / W)
        return pflref_error_set(err, PFLREF_EINVAL, where, "too large");
    while (*fill + rows * W > *cap) {
        const size_t ncap = *cap * 2 + rows * W;
        unsigned char *p = realloc(d->mask, ncap);
        if (p == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, where,
                                    "out of memory");
        d->mask = p;
        *cap = ncap;
    }
    for (size_t r = 0; r < rows; r++) {
        char rp[PFLREF_WHERE_MAX];
        pflref_json_index_path(rp, sizeof rp, where, r);
        const json_t *row = json_array_get(v, r);
        size_t len;
        if ((st = pflref_json_array(row, rp, 0, &len, err)))
            return st;
        if (len != W)
            return pflref_error_set(err, PFLREF_EINVAL, rp,
                                    "a row of layer \"%s\"'s mask has %zu "
                                    "entries: its input has %zu per sample",
                                    d->name[l], len, W);
        for (size_t c = 0; c < W; c++) {
            const json_t *x = json_array_get(row, c);
            if (!json_is_integer(x) || (json_integer_value(x) != 0 &&
                                        json_integer_value(x) != 1)) {
                char ep[PFLREF_WHERE_MAX];
                pflref_json_index_path(ep, sizeof ep, rp, c);
                char got[40];
                if (json_is_number(x))
                    snprintf(got, sizeof got, "%g", json_number_value(x));
                else
                    snprintf(got, sizeof got, "a%s %s",
                             json_is_array(x) || json_is_object(x) ? "n" : "",
                             pflref_json_type_name(x));
                return pflref_error_set(err, PFLREF_EINVAL, ep,
                                        "a mask entry is 0 (dropped) or 1 "
                                        "(kept), not %s", got);
            }
            d->mask[*fill + r * W + c] =
                (unsigned char)json_integer_value(x);
        }
    }
    *fill += rows * W;
    return PFLREF_OK;
}

/* Pass q (path where), an object of one mask per dropout layer. */
static pflref_status read_pass(const json_t *v, const char *where,
                               pflref_dropout_masks *d, size_t q,
                               size_t *fill, size_t *cap, pflref_error *err)
{
    if (!json_is_object(v))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "a pass is an object of one mask per "
                                "dropout layer, keyed by its name, not %s",
                                pflref_json_type_name(v));
    const char *key;
    json_t *x;
    json_object_foreach((json_t *)v, key, x) {
        int known = 0;
        for (size_t l = 0; l < d->L; l++)
            known |= strcmp(key, d->name[l]) == 0;
        if (!known) {
            char kp[PFLREF_WHERE_MAX];
            pflref_json_key_path(kp, sizeof kp, where, key);
            return pflref_error_set(err, PFLREF_EINVAL, kp,
                                    "no dropout layer is named \"%s\"",
                                    key);
        }
    }
    size_t nb = 0;
    for (size_t l = 0; l < d->L; l++) {
        char kp[PFLREF_WHERE_MAX];
        pflref_json_key_path(kp, sizeof kp, where, d->name[l]);
        const json_t *mk = json_object_get(v, d->name[l]);
        if (mk == NULL)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "no mask for dropout layer \"%s\"",
                                    d->name[l]);
        pflref_status st = read_mask(mk, kp, d, l, &nb, fill, cap, err);
        if (st != PFLREF_OK)
            return st;
    }
    d->nb[q] = nb;
    d->mask_off[q + 1] = *fill;
    return PFLREF_OK;
}

/* The mask lists v (path where) of n participants into *out: v holds one
 * list per participant, each the array of its passes. */
static pflref_status read_lists(const json_t *v, const char *where, size_t n,
                                const pflref_model *m,
                                pflref_dropout_masks **out, pflref_error *err)
{
    size_t got, total = 0, len;
    pflref_status st = pflref_json_array(v, where, 0, &got, err);
    if (st != PFLREF_OK)
        return st;
    if (got != n)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu mask lists for %zu clients", got, n);
    for (size_t j = 0; j < n; j++) {
        char jp[PFLREF_WHERE_MAX];
        pflref_json_index_path(jp, sizeof jp, where, j);
        if ((st = pflref_json_array(json_array_get(v, j), jp, 0, &len, err)))
            return st;
        total += len;
    }
    pflref_dropout_masks *d = calloc(1, sizeof *d);
    if (d == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    *out = d;   /* freed with the schedule from here on */
    d->pass_off = calloc(n + 1, sizeof *d->pass_off);
    d->nb = calloc(total + 1, sizeof *d->nb);
    d->mask_off = calloc(total + 1, sizeof *d->mask_off);
    if (d->pass_off == NULL || d->nb == NULL || d->mask_off == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    if ((st = dropout_layers(m, d, where, err)))
        return st;
    size_t q = 0, fill = 0, cap = 0;
    for (size_t j = 0; j < n; j++) {
        char jp[PFLREF_WHERE_MAX];
        pflref_json_index_path(jp, sizeof jp, where, j);
        const json_t *passes = json_array_get(v, j);
        for (size_t k = 0; k < json_array_size(passes); k++, q++) {
            char pp[PFLREF_WHERE_MAX];
            pflref_json_index_path(pp, sizeof pp, jp, k);
            if ((st = read_pass(json_array_get(passes, k), pp, d, q, &fill,
                                &cap, err)))
                return st;
        }
        d->pass_off[j + 1] = q;
    }
    return PFLREF_OK;
}

pflref_status pflref_spec_read_dropout(const json_t *r, const char *rp,
                                       const pflref_spec *spec,
                                       pflref_round_plan *plan,
                                       pflref_error *err)
{
    const json_t *v = json_object_get(r, "dropout");
    if (v == NULL)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, rp, "dropout");
    const pflref_model *m = &spec->problem->model;
    if (pflref_model_dropout_layers(m) == 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the model has no dropout layer: no masks "
                                "to give");
    return read_lists(v, where, plan->m, m, &plan->dropout, err);
}

/* The estimate list "key" of the object o (path op) of n clients into
 * *out (absent: NULL). */
static pflref_status read_estimate_list(const json_t *o, const char *op,
                                        const char *key, size_t n,
                                        const pflref_spec *spec,
                                        pflref_dropout_masks **out,
                                        pflref_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, op, key);
    const pflref_model *m = &spec->problem->model;
    if (pflref_model_dropout_layers(m) == 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the model has no dropout layer: no masks "
                                "to give");
    return read_lists(v, where, n, m, out, err);
}

pflref_status pflref_spec_read_estimate_dropout(const json_t *r,
                                                const char *rp,
                                                const pflref_spec *spec,
                                                pflref_round_plan *plan,
                                                pflref_error *err)
{
    /* participant j's round-start estimate; then every client's
     * reported assignment after the server update */
    pflref_status st = read_estimate_list(r, rp, "estimate_dropout", plan->m,
                                          spec, &plan->estimate_dropout, err);
    if (st == PFLREF_OK)
        st = read_estimate_list(r, rp, "partition_dropout",
                                spec->problem->N, spec,
                                &plan->partition_dropout, err);
    return st;
}

pflref_status pflref_spec_read_init_partition_dropout(const json_t *sched,
                                                      const pflref_spec *spec,
                                                      pflref_error *err)
{
    /* every client's reported assignment at θ_j^(0), before round 0 */
    return read_estimate_list(sched, "schedule", "init_partition_dropout",
                              spec->problem->N, spec,
                              &spec->schedule->init_partition_dropout, err);
}

pflref_status pflref_spec_read_post_dropout(const json_t *sched,
                                            const pflref_spec *spec,
                                            pflref_error *err)
{
    const json_t *v = json_object_get(sched, "post_dropout");
    if (v == NULL)
        return PFLREF_OK;
    static const char where[] = "schedule.post_dropout";
    const pflref_model *m = &spec->problem->model;
    if (spec->schedule->post == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the schedule has no post phase "
                                "(schedule.post): no training passes to "
                                "give masks to");
    if (pflref_model_dropout_layers(m) == 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "the model has no dropout layer: no masks "
                                "to give");
    /* one list per client 0 .. N−1, as schedule.post */
    return read_lists(v, where, spec->schedule->N, m,
                      &spec->schedule->post_dropout, err);
}
