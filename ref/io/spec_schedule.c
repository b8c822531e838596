/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_schedule.c: reading a spec's "schedule" (docs/formats.md,
 * "schedule"): which clients take part in each round and which samples
 * each local step uses.
 *
 *   generate  {rounds, clients_per_round, sampler, client_seed, batches,
 *             batch_seed, local, post, personal, peers, peer_seed}:
 *             drawn by the built-in sampler (ref/sampling/schedule.c),
 *             config kept in spec->schedule_cfg ("personal": Ditto's
 *             personal pass's own work, PFLlib's -pls; FedFomo's "peers" = M
 *             adds the ε-greedy draws of every participant, draw_peer_draws)
 *   given     {rounds: [{clients, selected, drawn, batches, peers,
 *             peer_draws, personal}], post, post_dropout}: every choice
 *             explicit ("post_dropout": the post phase's masks, one pass
 *             list per client, ref/io/spec_dropout.c), the form
 *             a result writes back ("peers": FedFomo's downloads, one id
 *             list per participant; "dropout": the masks of the
 *             training passes, ref/io/spec_dropout.c; "peer_draws": the
 *             ε-greedy draws
 *             {order, u} they are chosen with at run time when "peers" is
 *             absent, ref/algorithms/fedfomo.c; "personal": Ditto's
 *             personal batches, one batch list per participant)
 *
 * "post" (the work of the phase after training) is present exactly when
 * the algorithm has such a phase.  Either way the schedule is validated
 * against the clients' sizes (pflref_schedule_validate) before it is used.
 */
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "io/spec_read.h"
#include "engine/bn_own.h"

#define MAX_COUNT PFLREF_SPEC_MAX_COUNT

/* A client's local work in a phase: {epochs or steps, batch_size}. */
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

/* n clients' given batches, list[j] into b[j] (a round's participants, or
 * every client for the phase after training). */
static pflref_status read_batch_lists(const json_t *list, const char *where,
                                      size_t n, pflref_batches *b,
                                      pflref_error *err)
{
    pflref_status st = PFLREF_OK;
    for (size_t j = 0; j < n && st == PFLREF_OK; j++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        st = read_batches(json_array_get(list, j), path, &b[j], err);
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


/* A round's "selected" ids (default: every participant; at most the m
 * participants), then its "drawn" ids (default: the selected ones; one per
 * selected client).  Their subset and permutation relations are checked by
 * pflref_schedule_validate. */
static pflref_status read_selected_drawn(const json_t *r, const char *rp,
                                         size_t N, pflref_round_plan *plan,
                                         pflref_error *err)
{
    for (int drawn = 0; drawn <= 1; drawn++) {
        const char *key = drawn ? "drawn" : "selected";
        size_t *ids = drawn ? plan->drawn : plan->selected;
        const size_t *dflt = drawn ? plan->selected : plan->clients;
        const size_t n_dflt = drawn ? plan->n_selected : plan->m;
        const json_t *list = json_object_get(r, key);
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, rp, key);
        size_t n = n_dflt;
        pflref_status st =
            list == NULL ? PFLREF_OK
                         : pflref_json_array(list, path, drawn ? 0 : 1, &n,
                                             err);
        if (st != PFLREF_OK)
            return st;
        if (drawn ? n != n_dflt : n > n_dflt)
            return pflref_error_set(err, PFLREF_EINVAL, path,
                                    drawn ? "%zu drawn ids for %zu selected "
                                            "clients"
                                          : "%zu selected of %zu participants",
                                    n, n_dflt);
        if (!drawn)
            plan->n_selected = n;
        if (list == NULL)
            memcpy(ids, dflt, n * sizeof *ids);
        else if ((st = pflref_json_indices(list, path, n, N, ids, err)))
            return st;
    }
    return PFLREF_OK;
}

/* A round's member `key` that only algorithm `alg` takes (FedFomo's
 * "peers" and "peer_draws", FedProx's "draws"): *v the member, or NULL
 * when absent (PFLREF_OK, nothing to read); where its path (size
 * PFLREF_WHERE_MAX).  Another algorithm's round naming it is refused:
 * "only ALG takes WHAT (NAME does not)". */
static pflref_status round_member_of(const json_t *r, const char *rp,
                                     const char *key, const char *alg,
                                     const char *what,
                                     const pflref_spec *spec,
                                     const json_t **v, char *where,
                                     pflref_error *err)
{
    *v = json_object_get(r, key);
    if (*v == NULL)
        return PFLREF_OK;
    pflref_json_key_path(where, PFLREF_WHERE_MAX, rp, key);
    if (strcmp(spec->algorithm->name, alg) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only %s takes %s (%s does not)", alg, what,
                                spec->algorithm->name);
    return PFLREF_OK;
}

/* A round's "peers" (FedFomo's S_i^t, APPLE's downloaded cores): one list
 * of client ids per participant, each possibly empty, into plan->peers
 * (absent: NULL).  Ids are range-checked here; that a list holds neither
 * the client itself nor a repeat (and, for APPLE, M ids) is the
 * algorithm's check (ref/algorithms/fedfomo.c, apple.c). */
static pflref_status read_peers(const json_t *r, const char *rp, size_t N,
                                const pflref_spec *spec,
                                pflref_round_plan *plan, pflref_error *err)
{
    const json_t *v;
    char where[PFLREF_WHERE_MAX];
    size_t n, total = 0, len;
    /* FedFomo's S_i^t, or APPLE's downloaded cores (apple.M) */
    pflref_status st = PFLREF_OK;
    v = json_object_get(r, "peers");
    if (v == NULL)
        return PFLREF_OK;
    pflref_json_key_path(where, PFLREF_WHERE_MAX, rp, "peers");
    if (strcmp(spec->algorithm->name, "fedfomo") != 0 &&
        strcmp(spec->algorithm->name, "apple") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "only fedfomo and apple take peer lists (%s "
                                "does not)", spec->algorithm->name);
    st = pflref_json_array(v, where, 0, &n, err);
    if (st == PFLREF_OK && n != plan->m)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu peer lists for %zu clients", n, plan->m);
    for (size_t j = 0; st == PFLREF_OK && j < n; j++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        st = pflref_json_array(json_array_get(v, j), path, 0, &len, err);
        total += len;
    }
    if (st != PFLREF_OK)
        return st;
    plan->peers = calloc(1, sizeof *plan->peers);
    if (plan->peers == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    st = pflref_batches_alloc(plan->peers, n, total, err);
    for (size_t j = 0; st == PFLREF_OK && j < n; j++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        const json_t *list = json_array_get(v, j);
        len = json_array_size(list);
        plan->peers->step_off[j + 1] = plan->peers->step_off[j] + len;
        st = pflref_json_indices(list, path, len, N,
                                 plan->peers->idx + plan->peers->step_off[j],
                                 err);
    }
    return st;
}

/* "personal" (a given round's or a generated schedule's) is Ditto's only:
 * the personal pass's own batches. */
static pflref_status check_personal(const char *where,
                                    const pflref_spec *spec,
                                    pflref_error *err)
{
    if (strcmp(spec->algorithm->name, "ditto") == 0 ||
        strcmp(spec->algorithm->name, "fedrecon") == 0 ||
        strcmp(spec->algorithm->name, "fedala") == 0)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "only ditto, fedrecon and fedala take personal "
                            "batch lists (%s does not)",
                            spec->algorithm->name);
}

/* A round's "personal" (Ditto's personal pass with its own batches): one
 * batch list per participant into plan->personal (absent: NULL); under
 * fedala.ala_clients = all, FedALA's D_i^s of every one of the N clients,
 * the participants' first, then the others' in ascending id
 * (ref/algorithms/fedala.c). */
static pflref_status read_personal(const json_t *r, const char *rp, size_t N,
                                   const pflref_spec *spec,
                                   pflref_round_plan *plan, pflref_error *err)
{
    const json_t *v = json_object_get(r, "personal");
    if (v == NULL)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, rp, "personal");
    size_t n;
    pflref_status st;
    if ((st = check_personal(where, spec, err)) ||
        (st = pflref_json_array(v, where, 0, &n, err)))
        return st;
    if (strcmp(spec->algorithm->name, "fedala") == 0 &&
        spec->hyper.fedala.ala_clients == PFLREF_FEDALA_ALA_ALL) {
        if (n != N)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "fedala.ala_clients = all: %zu personal "
                                    "batch lists for %zu clients (one per "
                                    "client: the participants', then the "
                                    "others' in id order)", n, N);
    } else if (n != plan->m)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu personal batch lists for %zu clients", n,
                                plan->m);
    plan->personal = calloc(n > 0 ? n : 1, sizeof *plan->personal);
    if (plan->personal == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    plan->n_personal = n != plan->m ? n : 0;   /* FedALA's N lists */
    return read_batch_lists(v, where, n, plan->personal, err);
}

/* A round's "peer_draws" (FedFomo's ε-greedy draws, notes §2.5): one
 * object {"order": π, "u": [u_1..u_M]} per participant, into
 * plan->peer_order, peer_u_off and peer_u (absent: NULL).  Ids are
 * range-checked here and every u_s must lie in [0, 1); that an order holds
 * neither the client itself nor a repeat is FedFomo's check. */
static pflref_status read_peer_draws(const json_t *r, const char *rp,
                                     size_t N, const pflref_spec *spec,
                                     pflref_round_plan *plan,
                                     pflref_error *err)
{
    static const char *const dkeys[] = {"order", "u", NULL};
    const json_t *v;
    char where[PFLREF_WHERE_MAX];
    size_t n, total = 0, total_u = 0, len;
    pflref_status st = round_member_of(r, rp, "peer_draws", "fedfomo",
                                       "peer draws", spec, &v, where, err);
    if (st != PFLREF_OK || v == NULL)
        return st;
    st = pflref_json_array(v, where, 0, &n, err);
    if (st == PFLREF_OK && n != plan->m)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%zu peer draws for %zu clients", n, plan->m);
    for (size_t j = 0; st == PFLREF_OK && j < n; j++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        const json_t *d = json_array_get(v, j);
        json_t *list;
        if ((st = pflref_json_object(d, path, dkeys, err)) ||
            (st = pflref_json_array_member(d, path, "order", 0, &list, &len,
                                           err)))
            break;
        total += len;
        if ((st = pflref_json_array_member(d, path, "u", 0, &list, &len,
                                           err)))
            break;
        total_u += len;
    }
    if (st != PFLREF_OK)
        return st;
    plan->peer_order = calloc(1, sizeof *plan->peer_order);
    plan->peer_u_off = calloc(n + 1, sizeof *plan->peer_u_off);
    plan->peer_u = malloc((total_u > 0 ? total_u : 1) * sizeof *plan->peer_u);
    if (plan->peer_order == NULL || plan->peer_u_off == NULL ||
        plan->peer_u == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    st = pflref_batches_alloc(plan->peer_order, n, total, err);
    for (size_t j = 0; st == PFLREF_OK && j < n; j++) {
        char path[PFLREF_WHERE_MAX], op[PFLREF_WHERE_MAX], up[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        pflref_json_key_path(op, sizeof op, path, "order");
        pflref_json_key_path(up, sizeof up, path, "u");
        const json_t *d = json_array_get(v, j);
        const json_t *order = json_object_get(d, "order");
        const json_t *u = json_object_get(d, "u");
        len = json_array_size(order);
        plan->peer_order->step_off[j + 1] = plan->peer_order->step_off[j] + len;
        st = pflref_json_indices(order, op, len, N,
                                 plan->peer_order->idx +
                                     plan->peer_order->step_off[j],
                                 err);
        len = json_array_size(u);
        plan->peer_u_off[j + 1] = plan->peer_u_off[j] + len;
        double *uj = plan->peer_u + plan->peer_u_off[j];
        if (st == PFLREF_OK && len > 0)
            st = pflref_json_vector(u, up, len, uj, err);
        for (size_t s = 0; st == PFLREF_OK && s < len; s++)
            if (!(uj[s] >= 0.0 && uj[s] < 1.0)) {
                char sp[PFLREF_WHERE_MAX];
                pflref_json_index_path(sp, sizeof sp, up, s);
                st = pflref_error_set(err, PFLREF_EINVAL, sp,
                                      "a uniform draw must lie in [0, 1), "
                                      "not %.17g", uj[s]);
            }
    }
    return st;
}

/* A round's "draws" (FedProx's S_t under fedprox.sampling = paper: K ids
 * in draw order, repetitions allowed) into plan->draws (absent: NULL).
 * Ids are range-checked here; that the draws and the participants agree
 * is FedProx's check (ref/algorithms/fedprox.c). */
static pflref_status read_draws(const json_t *r, const char *rp, size_t N,
                                const pflref_spec *spec,
                                pflref_round_plan *plan, pflref_error *err)
{
    const json_t *v;
    char where[PFLREF_WHERE_MAX];
    size_t K;
    pflref_status st = round_member_of(r, rp, "draws", "fedprox", "draws",
                                       spec, &v, where, err);
    if (st != PFLREF_OK || v == NULL)
        return st;
    if ((st = pflref_json_array(v, where, 1, &K, err)))
        return st;
    plan->draws = malloc(K * sizeof *plan->draws);
    if (plan->draws == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    plan->n_draws = K;
    return pflref_json_indices(v, where, K, N, plan->draws, err);
}

/* A round's "first_upload" (the client whose upload the server receives
 * first: PFLlib's uploaded_models[0], serverbase.py:117-118 and 141 at
 * d832e76, whose running statistics the new global takes under
 * bn.aggregate = parameters_only) into plan->first_upload (absent: the
 * algorithm's default, the lowest id).  It must be one of the round's
 * uploaders (its selected ids, read before), and the run must keep the
 * clients' own statistics (bn.aggregate = parameters_only on a model with
 * batch normalisation): elsewhere no round reads it. */
static pflref_status read_first_upload(const json_t *r, const char *rp,
                                       size_t N, const pflref_spec *spec,
                                       pflref_round_plan *plan,
                                       pflref_error *err)
{
    const json_t *v = json_object_get(r, "first_upload");
    if (v == NULL)
        return PFLREF_OK;
    char where[PFLREF_WHERE_MAX];
    pflref_json_key_path(where, sizeof where, rp, "first_upload");
    if (!pflref_bn_keeps_own_in(spec->problem, &spec->hyper))
        return pflref_error_set(
            err, PFLREF_EINVAL, where,
            "first_upload picks the client whose running statistics the "
            "new global takes, which only bn.aggregate = parameters_only on "
            "a model with batch normalisation reads (%s): drop it",
            spec->problem->model.bn ? "bn.aggregate is average"
                                    : "this model has none");
    size_t k;
    pflref_status st = pflref_json_size(v, where, 0, N - 1, &k, err);
    if (st != PFLREF_OK)
        return st;
    for (size_t j = 0; j < plan->n_selected; j++)
        if (plan->selected[j] == k) {
            plan->has_first_upload = 1;
            plan->first_upload = k;
            return PFLREF_OK;
        }
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "client %zu does not upload in this round (its "
                            "uploaders are the round's %s)", k,
                            plan->n_selected != plan->m ? "selected"
                                                        : "clients");
}

/* Round rp = "schedule.rounds[t]" of a given schedule for N clients:
 * {clients, selected, drawn, batches, peers, personal} into plan. */
static pflref_status read_round(const json_t *r, const char *rp, size_t N,
                                const pflref_spec *spec,
                                pflref_round_plan *plan, pflref_error *err)
{
    static const char *const rkeys[] = {"clients", "selected", "drawn",
                                        "batches", "peers", "personal", "peer_draws",
                                        "draws", "dropout", "first_upload",
                                        "estimate_dropout",
                                        "partition_dropout", NULL};
    char cp[PFLREF_WHERE_MAX], bp[PFLREF_WHERE_MAX];
    pflref_json_key_path(cp, sizeof cp, rp, "clients");
    pflref_json_key_path(bp, sizeof bp, rp, "batches");
    json_t *clients, *batches;
    size_t m, nb;
    pflref_status st;
    if ((st = pflref_json_object(r, rp, rkeys, err)) ||
        (st = pflref_json_array_member(r, rp, "clients", 1, &clients, &m,
                                       err)) ||
        (st = pflref_json_array_member(r, rp, "batches", 0, &batches, &nb,
                                       err)))
        return st;
    if (nb != m)
        return pflref_error_set(err, PFLREF_EINVAL, bp,
                                "%zu batch lists for %zu clients", nb, m);
    if ((st = pflref_round_plan_alloc(plan, m, err)) ||
        (st = pflref_json_indices(clients, cp, m, N, plan->clients, err)) ||
        (st = read_selected_drawn(r, rp, N, plan, err)) ||
        (st = read_first_upload(r, rp, N, spec, plan, err)) ||
        (st = read_peers(r, rp, N, spec, plan, err)) ||
        (st = read_personal(r, rp, N, spec, plan, err)) ||
        (st = read_peer_draws(r, rp, N, spec, plan, err)) ||
        (st = read_draws(r, rp, N, spec, plan, err)) ||
        (st = pflref_spec_read_dropout(r, rp, spec, plan, err)) ||
        (st = pflref_spec_read_estimate_dropout(r, rp, spec, plan, err)))
        return st;
    return read_batch_lists(batches, bp, m, plan->batches, err);
}

static pflref_status read_given_schedule(const json_t *v, pflref_spec *spec,
                                         pflref_error *err)
{
    static const char *const keys[] = {"kind", "rounds", "post",
                                       "post_dropout",
                                       "init_partition_dropout", NULL};
    const size_t N = spec->problem->N;
    json_t *rounds;
    size_t T;
    pflref_status st;
    if ((st = pflref_json_object(v, "schedule", keys, err)) ||
        (st = pflref_json_array_member(v, "schedule", "rounds", 0, &rounds,
                                       &T, err)))
        return st;
    json_t *post = json_object_get(v, "post");
    if ((st = check_post(post, spec, err)))
        return st;
    spec->schedule = pflref_schedule_alloc(T, N, post != NULL);
    if (spec->schedule == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    for (size_t t = 0; t < T && st == PFLREF_OK; t++) {
        char rp[PFLREF_WHERE_MAX];
        pflref_json_index_path(rp, sizeof rp, "schedule.rounds", t);
        st = read_round(json_array_get(rounds, t), rp, N, spec,
                        &spec->schedule->rounds[t], err);
    }
    if (st == PFLREF_OK)   /* IFCA's estimates before round 0 */
        st = pflref_spec_read_init_partition_dropout(v, spec, err);
    if (st != PFLREF_OK)
        return st;
    if (post == NULL)   /* post_dropout without a post phase: refused */
        return pflref_spec_read_post_dropout(v, spec, err);
    /* post: one batch list per client, for the phase after training */
    size_t np;
    if ((st = pflref_json_array(post, "schedule.post", 0, &np, err)))
        return st;
    if (np != N)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule.post",
                                "%zu batch lists for %zu clients", np, N);
    if ((st = read_batch_lists(post, "schedule.post", N,
                               spec->schedule->post, err)))
        return st;
    /* post_dropout: the post phase's dropout masks (spec_dropout.c) */
    return pflref_spec_read_post_dropout(v, spec, err);
}

/* FedFomo's ε-greedy draws for a generated schedule (notes §2.5): for
 * every round t and participant clients[j] (t, then j ascending) one
 * mt19937 stream seeded once with peer_seed gives π, a random order of the
 * N − 1 other ids (gsl_ran_shuffle of them in ascending order), then
 * min(M, N) uniforms u_1.. (gsl_rng_uniform, in [0, 1)).  The draws do
 * not depend on the affinity matrix P, so they are drawn here and kept as
 * data in the schedule (the result writes them back as "peer_draws"); the choice
 * of the M peers from P, π and u is made at run time
 * (ref/algorithms/fedfomo.c) and recorded as the result's "peers". */
static pflref_status draw_peer_draws(pflref_schedule *sched, size_t M,
                                     unsigned long seed, pflref_error *err)
{
    const size_t N = sched->N;
    /* at most N − 1 slots are ever filled (N − 1 candidates; one more
     * uniform when M counts the own upload): min(M, N) uniforms */
    M = M < N ? M : N;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    gsl_rng_set(rng, seed);
    pflref_status st = PFLREF_OK;
    for (size_t t = 0; t < sched->T && st == PFLREF_OK; t++) {
        pflref_round_plan *r = &sched->rounds[t];
        r->peer_order = calloc(1, sizeof *r->peer_order);
        r->peer_u_off = calloc(r->m + 1, sizeof *r->peer_u_off);
        r->peer_u = malloc((r->m * M > 0 ? r->m * M : 1) * sizeof *r->peer_u);
        if (r->peer_order == NULL || r->peer_u_off == NULL ||
            r->peer_u == NULL) {
            st = pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                  "out of memory");
            break;
        }
        st = pflref_batches_alloc(r->peer_order, r->m, r->m * (N - 1), err);
        for (size_t j = 0; j < r->m && st == PFLREF_OK; j++) {
            size_t *pi = r->peer_order->idx + j * (N - 1);
            r->peer_order->step_off[j + 1] = (j + 1) * (N - 1);
            for (size_t n = 0, q = 0; n < N; n++)
                if (n != r->clients[j])
                    pi[q++] = n;
            if (N > 1)
                gsl_ran_shuffle(rng, pi, N - 1, sizeof *pi);
            r->peer_u_off[j + 1] = (j + 1) * M;
            for (size_t q = 0; q < M; q++)
                r->peer_u[j * M + q] = gsl_rng_uniform(rng);
        }
    }
    gsl_rng_free(rng);
    return st;
}

/* FedProx's S_t under fedprox.sampling = paper for a generated schedule
 * (docs/sampling.md, "FedProx's draws"): one mt19937 stream, seeded once
 * with the schedule's client_seed, gives for t = 0, 1, … the round's K
 * draws in order, each j = gsl_rng_uniform_int(rng, n) over the n = Σ_k
 * n_k training samples (GSL: scale = ⌊(2³² − 1)/n⌋, a raw output x
 * gives j = ⌊x/scale⌋, redrawn while j ≥ n) mapped to the device k with
 * n_0 + … + n_{k−1} ≤ j < n_0 + … + n_k, so P(k) = n_k/n exactly.  The
 * schedule was generated with every client a participant (m = N, nothing
 * drawn); each round then keeps only its drawn devices, ascending, with
 * their batch lists (drawn: their first-draw order), and the draws. */
static pflref_status draw_fedprox(pflref_schedule *sched, size_t K,
                                  unsigned long seed, const size_t *n,
                                  pflref_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < sched->N; i++)
        total += n[i];
    /* gsl_rng_uniform_int takes 1 ≤ n ≤ 2³² − 1 */
    if (total == 0 || total > 0xffffffffUL)
        return pflref_error_set(err, PFLREF_EINVAL, "schedule",
                                "fedprox's draws need 1 to 2^32 - 1 "
                                "training samples in all (P(k) = n_k/n), "
                                "not %zu", total);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                "out of memory");
    gsl_rng_set(rng, seed);
    pflref_status st = PFLREF_OK;
    for (size_t t = 0; t < sched->T && st == PFLREF_OK; t++) {
        pflref_round_plan *r = &sched->rounds[t];
        r->draws = malloc(K * sizeof *r->draws);
        if (r->draws == NULL) {
            st = pflref_error_set(err, PFLREF_ENOMEM, "schedule",
                                  "out of memory");
            break;
        }
        r->n_draws = K;
        for (size_t q = 0; q < K; q++) {
            size_t j = gsl_rng_uniform_int(rng, total), k = 0;
            while (j >= n[k])
                j -= n[k++];
            r->draws[q] = k;
        }
        /* keep the drawn participants (r->clients is 0..N−1 here) */
        size_t kept = 0, nd = 0;
        for (size_t q = 0; q < K; q++) {   /* drawn: first-draw order */
            size_t d = 0;
            while (d < nd && r->drawn[d] != r->draws[q])
                d++;
            if (d == nd)
                r->drawn[nd++] = r->draws[q];
        }
        for (size_t j = 0; j < r->m; j++) {
            size_t d = 0;
            while (d < nd && r->drawn[d] != r->clients[j])
                d++;
            if (d == nd) {   /* not drawn: its batches go */
                free(r->batches[j].step_off);
                free(r->batches[j].idx);
                continue;
            }
            r->clients[kept] = r->clients[j];
            r->selected[kept] = r->clients[j];
            r->batches[kept++] = r->batches[j];
        }
        r->m = kept;
        r->n_selected = kept;
    }
    gsl_rng_free(rng);
    return st;
}

/* FedFomo's "peers" = M, the models each participant downloads, chosen
 * ε-greedily at run time with draws from "peer_seed" (a generated
 * schedule's; other algorithms refuse both keys). */
static pflref_status read_peer_config(const json_t *v,
                                      const pflref_spec *spec,
                                      pflref_schedule_config *c,
                                      pflref_error *err)
{
    pflref_status st;
    size_t pseed;
    if ((st = pflref_json_opt_size(v, "schedule", "peers", 0, MAX_COUNT, 0,
                                   &c->peers, err)) ||
        (st = pflref_json_opt_size(v, "schedule", "peer_seed", 1,
                                   PFLREF_SEED_MAX, 1, &pseed, err)))
        return st;
    c->peer_seed = pseed;
    if ((json_object_get(v, "peers") != NULL ||
         json_object_get(v, "peer_seed") != NULL) &&
        strcmp(spec->algorithm->name, "fedfomo") != 0)
        return pflref_error_set(err, PFLREF_EINVAL,
                                json_object_get(v, "peers") != NULL
                                    ? "schedule.peers"
                                    : "schedule.peer_seed",
                                "only fedfomo downloads peers (%s does not)",
                                spec->algorithm->name);
    return PFLREF_OK;
}

static pflref_status read_generated_schedule(const json_t *v,
                                             pflref_spec *spec, size_t *n,
                                             pflref_error *err)
{
    static const char *const keys[] = {"kind", "rounds", "clients_per_round",
                                       "sampler", "client_seed", "batches",
                                       "batch_seed", "local", "post",
                                       "personal", "peers",
                                       "peer_seed", NULL};
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
        /* req: fedavg.alg1.l4 */
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
    /* "personal": Ditto's personal pass's own work (PFLlib's -pls) */
    const json_t *personal = json_object_get(v, "personal");
    if (personal != NULL) {
        c->has_personal = 1;
        if ((st = check_personal("schedule.personal", spec, err)) ||
            (st = read_work(personal, "schedule.personal", &c->personal,
                            err)))
            return st;
    }
    if ((st = read_peer_config(v, spec, c, err)))
        return st;
    /* FedProx's paper sampling: every client a participant, then the K
     * draws keep the drawn ones (draw_fedprox) */
    const int prox_draws =
        strcmp(spec->algorithm->name, "fedprox") == 0 &&
        spec->hyper.fedprox.sampling == PFLREF_FEDPROX_SAMPLING_PAPER;
    pflref_schedule_config all = *c;
    if (prox_draws)
        all.m = N;
    st = pflref_schedule_generate(&all, n, N, &spec->schedule, err);
    if (st == PFLREF_OK && c->peers > 0)
        st = draw_peer_draws(spec->schedule, c->peers, c->peer_seed, err);
    if (st == PFLREF_OK && prox_draws)
        st = draw_fedprox(spec->schedule, c->m, c->client_seed, n, err);
    return st;
}

pflref_status pflref_spec_read_schedule(const json_t *root, pflref_spec *spec,
                                        pflref_error *err)
{
    const size_t N = spec->problem->N;
    json_t *v, *kind_v;
    const char *kind;
    pflref_status st;
    if ((st = pflref_json_member(root, "", "schedule", 1, &v, err)))
        return st;
    if ((st = pflref_json_object(v, "schedule", NULL, err)) ||
        (st = pflref_json_member(v, "schedule", "kind", 1, &kind_v, err)) ||
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
    if (st == PFLREF_OK)   /* a model with dropout: its masks' needs */
        st = pflref_spec_check_dropout(root, spec, err);
    free(n);
    return st;
}
