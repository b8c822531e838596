/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_diagnose.c: pflref_golden_diagnose, `pflref diagnose`,
 * `pflref check --diagnose` and docs/variants.md (suite diagnose).
 *
 * The candidates here are built from a vector's own expectation (computed
 * by an independent generator, never by pflref): unchanged it is the
 * vector's spec, with one number of its final state moved it is no known
 * variant and diverges there.  That a candidate computed under a preset,
 * a switch or a probe is named as such is shown with the NumPy candidates
 * in python/tests/test_diagnose.py, and here with candidates pflref
 * computes from a vector's spec with one setting changed (opt.state,
 * opt.momentum, bn.aggregate): the change is the input, its naming the
 * output under test. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

#define VEC "golden/fedavg/worked-samples.json"

/* The vector's expectation as a candidate result; with `bump`, final w[0]
 * moved by that much (malloc'd text). */
static char *candidate_text(const char *vector_rel, double bump)
{
    char *path = tu_repo_path(vector_rel);
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    ck_assert_msg(v != NULL, "%s: %s", path, je.text);
    json_t *exp = json_object_get(v, "expected");
    json_t *c = json_pack("{s:s, s:O, s:O, s:O}", "format", "pflref-result/1",
                          "id", json_object_get(v, "id"), "trajectory",
                          json_object_get(exp, "trajectory"), "final",
                          json_object_get(exp, "final"));
    ck_assert_ptr_nonnull(c);
    if (bump != 0.0) {
        json_t *final = json_deep_copy(json_object_get(exp, "final"));
        json_t *w0 = json_array_get(json_object_get(final, "w"), 0);
        json_real_set(w0, json_number_value(w0) + bump);
        json_object_set_new(c, "final", final);
    }
    char *text = json_dumps(c, JSON_COMPACT);
    json_decref(c);
    json_decref(v);
    free(path);
    return text;
}

static pflref_status diagnose(const char *cand, size_t budget,
                              pflref_diagnosis *d, pflref_error *err)
{
    char *path = tu_repo_path(VEC);
    char *text = tu_read(path);
    char *dir = tu_repo_path("golden/fedavg");
    const pflref_diagnose_options opt = {.check = {.same_id = 1},
                                         .budget = budget};
    pflref_status st = pflref_golden_diagnose(text, strlen(text), dir, cand,
                                              strlen(cand), &opt, d, err);
    free(path);
    free(text);
    free(dir);
    return st;
}

START_TEST(test_expectation_matches_the_spec)
{
    char *cand = candidate_text(VEC, 0.0);
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(diagnose(cand, 0, d, &err), PFLREF_OK);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "spec");
    ck_assert_str_eq(d->best[0].preset, "paper");
    ck_assert_uint_eq(d->best[0].mismatches, 0);
    /* the first level ran, the spec and fedavg's one preset (pfllib), and
     * the spec matched: no change is searched.  pfllib's run is the
     * spec's here (lr.count and bn.aggregate differ; nothing decays and
     * the linear model has no batch normalisation): named as
     * identical, and the folder's vectors are run under both settings, in
     * sorted order, until one differs -- all-keep-old, bias-zeros-drawn,
     * full-batch-two-epochs, generated-m, lr-exponential (every client
     * trains every round: trainings = rounds), lr-per-client: 6 × 2 runs */
    ck_assert_uint_eq(d->runs, 14);
    ck_assert_msg(strstr(d->best[0].identical, "preset pfllib (differs in "
                                               "lr.count rounds vs "
                                               "trainings, bn.aggregate "
                                               "average vs "
                                               "parameters_only); vector "
                                               "fedavg/worked/lr-per-client "
                                               "tells them apart") != NULL,
                  "%s", d->best[0].identical);
    ck_assert_msg(strstr(d->summary, "identical here: preset pfllib") != NULL,
                  "%s", d->summary);
    ck_assert_msg(strstr(d->summary, "the candidate passes") != NULL, "%s",
                  d->summary);
    free(d);
    free(cand);
}
END_TEST

START_TEST(test_moved_final_value_is_no_known_variant)
{
    char *cand = candidate_text(VEC, 0.75);
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(diagnose(cand, 0, d, &err), PFLREF_OK);
    ck_assert_msg(!d->matched, "%s", d->summary);
    ck_assert_msg(strncmp(d->summary, "no known variant: nearest is fedavg "
                                      "preset paper, agreeing on ", 62) == 0,
                  "%s", d->summary);
    /* the whole trajectory agrees; the final state diverges */
    const pflref_variant_match *b = &d->best[0];
    ck_assert_str_eq(b->kind, "spec");
    ck_assert_str_eq(b->first.event, "final");
    ck_assert_str_eq(b->first.name, "w");
    ck_assert_uint_eq(b->first.index, 0);
    ck_assert_uint_eq(b->mismatches, 1);
    ck_assert_uint_eq(b->agreeing, b->expected_records - 1);
    ck_assert_msg(strstr(d->summary, "diverging at the final state (w)") !=
                      NULL, "%s", d->summary);
    /* every base is expanded, whatever its own agreement: the spec
     * (paper) and preset pfllib, which is identical on this vector (it
     * sets only lr.count = trainings, and nothing decays) but whose
     * neighbours differ.  From each: fedavg.weights = uniform,
     * all_keep_old, lr.schedule = exponential, step, lr.gamma × 2, × ½
     * (0 is below its bound, 1 its default), lr.step_rounds + 1 (− 1 is
     * below its bound), lr.scope = eta_p, no_beta, lr.count (the other
     * value), eta × 2, eta × ½, one local step fewer, the client
     * optimizer's 19 (docs/optimizers.md), its μ and λ (both 0 here) at
     * torch's usual 0.9 and 5·10⁻⁴, and batch norm's 3 (bn.running,
     * bn.running_var, bn.aggregate): 37 changes.  The links
     * (pflref_param_links): lr.schedule = exponential and step, each with
     * lr.gamma = 0.99 and 0.5 (a schedule alone, γ = 1, changes nothing)
     * and, from paper, with lr.count = trainings: 6 from paper, 4 from
     * pfllib; and from each base opt.state = client and server,
     * opt.nesterov = on and opt.momentum_form = classical with μ = 0.9,
     * opt.weight_decay_form = decoupled and opt.decay_scope = weights,
     * shared and personal with λ = 5·10⁻⁴ (under plain SGD each alone
     * changes nothing): 8 more from each.  2 + 37 + 14 + 37 + 12 = 102; no
     * level 2, since no change
     * agrees further than its base.  Then 12 runs find the vector that
     * tells the spec and its identical preset apart (see above).  No
     * precision cast is checked: the candidate wrote no quantity entirely
     * in float32 numbers (the vector's float64 values, one moved), so
     * neither a cast alone nor a cast with a change costs a run. */
    ck_assert_uint_eq(d->runs, 114);
    /* bn.* (no batch norm here), lr.schedule with γ = 1 and more change
     * nothing: run, not listed */
    ck_assert_uint_ge(d->unchanged, 6);
    ck_assert_msg(strstr(b->identical, "preset pfllib (differs in lr.count "
                                       "rounds vs trainings, bn.aggregate "
                                       "average vs parameters_only)") !=
                      NULL,
                  "%s", b->identical);
    for (size_t i = 0; i < d->n_best; i++) {
        ck_assert_msg(strcmp(d->best[i].preset, "pfllib") != 0 ||
                          d->best[i].change[0] != '\0',
                      "preset pfllib is listed beside its identical spec");
        ck_assert_msg(strstr(d->best[i].change, "bn.") == NULL,
                      "a change that changes nothing is listed: %s",
                      d->best[i].change);
    }
    ck_assert(!d->budget_exhausted);
    for (size_t i = 1; i < d->n_best; i++)
        ck_assert_uint_le(d->best[i].agreeing, b->agreeing);
    free(d);
    free(cand);
}
END_TEST

/* Under partial, the records the candidate did not write are not
 * agreeing: a candidate with the server's w of each round and a moved
 * final w agrees on the server records only. */
START_TEST(test_partial_counts_only_what_was_written)
{
    char *path = tu_repo_path(VEC);
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_t *exp = json_object_get(v, "expected");
    json_t *traj = json_array(), *all = json_object_get(exp, "trajectory");
    size_t k;
    json_t *r;
    json_array_foreach(all, k, r)
        if (strcmp(json_string_value(json_object_get(r, "event")),
                   "server") == 0)
            json_array_append(traj, r);
    const size_t servers = json_array_size(traj);
    ck_assert_uint_gt(servers, 0);
    json_t *final = json_deep_copy(json_object_get(exp, "final"));
    json_t *w0 = json_array_get(json_object_get(final, "w"), 0);
    json_real_set(w0, json_number_value(w0) + 0.75);
    json_t *c = json_pack("{s:s, s:O, s:o, s:o}", "format", "pflref-result/1",
                          "id", json_object_get(v, "id"), "trajectory", traj,
                          "final", final);
    char *cand = json_dumps(c, JSON_COMPACT);
    char *text = tu_read(path);
    char *dir = tu_repo_path("golden/fedavg");
    const pflref_diagnose_options opt = {.check = {.same_id = 1,
                                                   .partial = 1},
                                         .budget = 3};
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(pflref_golden_diagnose(text, strlen(text), dir, cand,
                                            strlen(cand), &opt, d, &err),
                     PFLREF_OK);
    const pflref_variant_match *b = &d->best[0];
    ck_assert_str_eq(b->kind, "spec");
    ck_assert_uint_eq(b->compared, servers + 1);
    ck_assert_uint_eq(b->agreeing, servers);   /* not expected_records - 1 */
    char words[160];
    snprintf(words, sizeof words, "agreeing on %zu of the %zu records the "
             "candidate wrote (%zu expected)", servers, servers + 1,
             b->expected_records);
    ck_assert_msg(strstr(d->summary, words) != NULL, "%s", d->summary);
    free(d);
    free(dir);
    free(text);
    free(cand);
    json_decref(c);
    json_decref(v);
    free(path);
}
END_TEST

/* A candidate whose every number is the expectation cast to float32 is a
 * precision cast (a variant too): nothing matches in fp64, and the
 * candidate matches its own spec within float32's rounding spread with
 * every value of w a float32. */
START_TEST(test_float32_cast_is_a_variant)
{
    char *path = tu_repo_path(VEC);
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_t *exp = json_deep_copy(json_object_get(v, "expected"));
    size_t k, j;
    json_t *r, *x;
    json_array_foreach(json_object_get(exp, "trajectory"), k, r)
        json_array_foreach(json_object_get(r, "value"), j, x)
            json_real_set(x, (double)(float)json_number_value(x));
    json_array_foreach(json_object_get(json_object_get(exp, "final"), "w"),
                       j, x)
        json_real_set(x, (double)(float)json_number_value(x));
    json_t *c = json_pack("{s:s, s:O, s:O, s:O}", "format", "pflref-result/1",
                          "id", json_object_get(v, "id"), "trajectory",
                          json_object_get(exp, "trajectory"), "final",
                          json_object_get(exp, "final"));
    char *cand = json_dumps(c, JSON_COMPACT);
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(diagnose(cand, 0, d, &err), PFLREF_OK);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].param, "precision");
    ck_assert_str_eq(d->best[0].value, "fp32");
    /* the spec, pfllib and the 100 of level 1 (see
     * test_moved_final_value_is_no_known_variant) match nothing; then the
     * float32 cast, one Monte Carlo check (the unperturbed run, 8
     * perturbed, 16 probes), matches and ends the search (no cast with a
     * change, no bfloat16) */
    ck_assert_uint_eq(d->runs,
                      102 + 1 + PFLREF_MCA_RUNS + PFLREF_MCA_PROBE_RUNS);
    ck_assert_msg(strstr(d->summary, "rounded to float32") != NULL,
                  "%s", d->summary);
    /* the cast alone, named alone: no compound (a change, the step-fewer
     * probe) is checked once it matches */
    ck_assert_msg(strstr(d->best[0].change, " + ") == NULL, "%s",
                  d->best[0].change);
    free(d);
    free(cand);
    json_decref(c);
    json_decref(exp);
    json_decref(v);
    free(path);
}
END_TEST

/* The registry's source of a switch value, and its links. */
START_TEST(test_value_sources_and_links)
{
    ck_assert_str_eq(pflref_param_value_source("ditto", "ditto.prox_ref",
                                               "round_start"), "the paper");
    const char *src = pflref_param_value_source("ditto", "ditto.prox_ref",
                                                "moving");
    ck_assert_ptr_nonnull(src);
    ck_assert_msg(strstr(src, "s-huu/Ditto") != NULL, "%s", src);
    /* from a preset that sets the value: pfedme.theta_start = warm */
    src = pflref_param_value_source("pfedme", "pfedme.theta_start", "warm");
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(strstr(src, "pFedMe"));
    /* every value other than the paper's, of every switch of every
     * algorithm, names the code (or the reading) it comes from */
    size_t na;
    const pflref_algorithm *const *algs = pflref_algorithms(&na);
    size_t np;
    const pflref_param *ps = pflref_params(&np);
    for (size_t a = 0; a < na; a++)
        for (size_t i = 0; i < np; i++) {
            if (ps[i].type != PFLREF_PARAM_ENUM ||
                !pflref_name_in_list(ps[i].algorithms, algs[a]->name))
                continue;
            for (size_t k = 1; ps[i].values[k] != NULL; k++)
                ck_assert_msg(pflref_param_value_source(
                                  algs[a]->name, ps[i].name,
                                  ps[i].values[k]) != NULL,
                              "%s: %s = %s has no source (add it to "
                              "value_sources in ref/engine/params_links.c)",
                              algs[a]->name, ps[i].name, ps[i].values[k]);
        }
    /* every source names a real switch value, every link two parameters */
    size_t n;
    const pflref_value_source *vs = pflref_value_sources(&n);
    for (size_t i = 0; i < n; i++) {
        const pflref_param *p = pflref_param_find(vs[i].name);
        ck_assert_msg(p != NULL && p->type == PFLREF_PARAM_ENUM, "%s",
                      vs[i].name);
        int found = 0;
        for (size_t j = 0; p->values[j] != NULL; j++)
            found |= strcmp(p->values[j], vs[i].value) == 0;
        ck_assert_msg(found && strcmp(p->values[0], vs[i].value) != 0,
                      "%s = %s", vs[i].name, vs[i].value);
    }
    const pflref_param_link *l = pflref_param_links(&n);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        ck_assert(pflref_param_find(l[i].name) != NULL &&
                  pflref_param_find(l[i].needs) != NULL);
}
END_TEST

/* A candidate made by pflref itself from the vector's spec with one
 * setting changed (`where`: "switches" or "hyperparameters"; `value` a
 * JSON text), then diagnosed against the vector (malloc'd diagnosis).
 * The candidate computes exactly that variant, so diagnose must name it:
 * the change is the test's input, the naming the output under test. */
static pflref_diagnosis *diagnose_changed_as(const char *vector_rel,
                                             const char *where,
                                             const char *key,
                                             const char *value, int to_f32,
                                             size_t budget);

static pflref_diagnosis *diagnose_spec_as(const char *vector_rel, json_t *v,
                                          int to_f32, size_t budget);

static pflref_diagnosis *diagnose_changed(const char *vector_rel,
                                          const char *where, const char *key,
                                          const char *value)
{
    return diagnose_changed_as(vector_rel, where, key, value, 0, 0);
}

/* Every number of a result's trajectory and final state rounded to
 * float32, in place. */
static void round_to_float32(json_t *res)
{
    size_t k, j;
    json_t *r, *x;
    json_array_foreach(json_object_get(res, "trajectory"), k, r)
        json_array_foreach(json_object_get(r, "value"), j, x)
            json_real_set(x, (double)(float)json_number_value(x));
    const char *name;
    json_t *val;
    json_object_foreach(json_object_get(res, "final"), name, val) {
        if (json_is_number(val)) {
            json_object_set_new(json_object_get(res, "final"), name,
                                json_real((double)(float)
                                              json_number_value(val)));
            continue;
        }
        json_array_foreach(val, j, x) {
            if (json_is_number(x)) {
                json_real_set(x, (double)(float)json_number_value(x));
                continue;
            }
            size_t i;
            json_t *y;
            json_array_foreach(x, i, y)
                json_real_set(y, (double)(float)json_number_value(y));
        }
    }
}

/* diagnose_changed, the candidate's numbers rounded to float32 when
 * to_f32 (a run kept in float32 at every record: the setting and the
 * rounding are the input), under `budget` (0: the default). */
static pflref_diagnosis *diagnose_changed_as(const char *vector_rel,
                                             const char *where,
                                             const char *key,
                                             const char *value, int to_f32,
                                             size_t budget)
{
    char *path = tu_repo_path(vector_rel);
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    ck_assert_msg(v != NULL, "%s: %s", path, je.text);
    json_t *alg = json_object_get(json_object_get(v, "spec"), "algorithm");
    json_t *obj = json_object_get(alg, where);
    if (obj == NULL) {
        obj = json_object();
        json_object_set_new(alg, where, obj);
    }
    json_object_set_new(obj, key, json_loads(value, JSON_DECODE_ANY, &je));
    pflref_diagnosis *d = diagnose_spec_as(vector_rel, v, to_f32, budget);
    json_decref(v);
    free(path);
    return d;
}

/* The vector v (read from vector_rel, its spec changed by the caller)
 * run by pflref, its numbers rounded to float32 when to_f32, diagnosed
 * against the vector at vector_rel under `budget` (0: the default). */
static pflref_diagnosis *diagnose_spec_as(const char *vector_rel, json_t *v,
                                          int to_f32, size_t budget)
{
    char *path = tu_repo_path(vector_rel);
    json_error_t je;
    char *dir = tu_tmpdir();
    tu_json_save_in(dir, "spec.json", json_object_get(v, "spec"));
    ck_assert_int_eq(tu_cli_in(dir, "run $D/spec.json -o $D/cand.json",
                               NULL, NULL), 0);
    char *cpath = tu_join(dir, "cand.json");
    char *cand = tu_read(cpath);
    if (to_f32) {
        json_t *res = json_loads(cand, 0, &je);
        ck_assert_msg(res != NULL, "%s", je.text);
        round_to_float32(res);
        free(cand);
        cand = json_dumps(res, JSON_COMPACT);
        json_decref(res);
    }
    char *text = tu_read(path);
    char *vdir = tu_repo_path(vector_rel);
    *strrchr(vdir, '/') = '\0';
    const pflref_diagnose_options opt = {.check = {.same_id = 0},
                                         .budget = budget};
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(pflref_golden_diagnose(text, strlen(text), vdir, cand,
                                            strlen(cand), &opt, d, &err),
                     PFLREF_OK);
    free(vdir);
    free(text);
    free(cand);
    free(cpath);
    tu_remove_tree(dir);
    free(dir);
    free(path);
    return d;
}

/* The client optimizer kept per client where the vector makes a new one
 * every client update (torch.optim.SGD(momentum = 0.7, nesterov = True)):
 * named opt.state = client, with the code that does it (PFLlib's client
 * optimizer made once in __init__). */
START_TEST(test_optimizer_state_kept_is_named)
{
    pflref_diagnosis *d = diagnose_changed("golden/optim/fedavg-nesterov-reset.json",
                                           "switches", "opt.state", "\"client\"");
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].param, "opt.state");
    ck_assert_str_eq(d->best[0].value, "client");
    ck_assert_msg(strstr(d->best[0].value_source, "clientbase.py:47") != NULL,
                  "%s", d->best[0].value_source);
    free(d);
}
END_TEST

/* Momentum added to a plain-SGD vector (μ = 0, where × 2 and × ½ are 0
 * again): the probe at torch's usual μ = 0.9 names it. */
START_TEST(test_momentum_added_is_probed)
{
    pflref_diagnosis *d = diagnose_changed(VEC, "hyperparameters",
                                           "opt.momentum", "0.9");
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].param, "opt.momentum");
    ck_assert_str_eq(d->best[0].value, "0.9");
    free(d);
}
END_TEST

/* A run kept in float32 under a known variant (FedAvg with the absent
 * clients' old model in the average): neither the variant in fp64 nor
 * the cast alone matches; the cast with the change does.  The search: the
 * 102 runs of test_float32_cast_is_a_variant, the cast alone (one Monte
 * Carlo check: 1 + 8 + 16 runs), then the cast with the variant that
 * agrees furthest at float32's floor (preset pfllib's twin of it is one
 * run: taken once), one more check, which matches. */
START_TEST(test_float32_with_a_switch_is_the_compound)
{
    pflref_diagnosis *d = diagnose_changed_as(VEC, "switches",
                                              "fedavg.weights",
                                              "\"all_keep_old\"", 1, 0);
    const size_t check = 1 + PFLREF_MCA_RUNS + PFLREF_MCA_PROBE_RUNS;
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "precision");
    ck_assert_str_eq(d->best[0].param, "precision fedavg.weights");
    ck_assert_str_eq(d->best[0].value, "fp32 all_keep_old");
    ck_assert_msg(strncmp(d->best[0].change, "float32 + fedavg.weights = "
                                             "all_keep_old", 39) == 0,
                  "%s", d->best[0].change);
    /* preset pfllib with the same switch is the same run here (as the
     * spec and pfllib are): named identical, and the 12 runs of
     * test_moved_final_value_is_no_known_variant tell them apart */
    ck_assert_msg(strstr(d->best[0].identical, "preset pfllib with "
                                               "fedavg.weights = "
                                               "all_keep_old") != NULL,
                  "%s", d->best[0].identical);
    ck_assert_uint_eq(d->runs, 102 + 2 * check + 12);
    ck_assert(!d->budget_exhausted);
    /* the same variant in fp64 is listed, not matching */
    int listed = 0;
    for (size_t i = 1; i < d->n_best; i++)
        listed |= strcmp(d->best[i].param, "fedavg.weights") == 0 &&
                  strcmp(d->best[i].value, "all_keep_old") == 0 &&
                  !d->best[i].complete;
    ck_assert_msg(listed, "%s", d->summary);
    free(d);
    /* a budget that holds the cast alone but not one more check: the
     * compound is not checked, the search says it stopped at the budget
     * (then the 12 runs that tell the nearest, the spec, from its
     * identical preset pfllib, as in
     * test_moved_final_value_is_no_known_variant) */
    d = diagnose_changed_as(VEC, "switches", "fedavg.weights",
                            "\"all_keep_old\"", 1, 102 + check + check - 1);
    ck_assert_msg(!d->matched, "%s", d->summary);
    ck_assert(d->budget_exhausted);
    ck_assert_uint_eq(d->runs, 102 + check + 12);
    free(d);
}
END_TEST

/* A run kept in float32 whose loop also stops one batch early: the
 * vector's schedule with the last batch of every list dropped (the test's
 * input, run by pflref), every number rounded to float32.  Neither the
 * step-fewer probe in fp64 nor the cast alone matches; the cast with the
 * probe does.  The probe's run is its base's spec under another schedule,
 * rebuilt for the check.  The search: the 102 runs of
 * test_float32_cast_is_a_variant, the cast alone (one check), then the
 * cast with the step-fewer probe, which agrees furthest at float32's floor
 * and goes first (preset pfllib's probe is the same run: named identical),
 * one more check, which matches; then the 12 runs that tell paper and
 * pfllib apart. */
START_TEST(test_float32_with_a_step_fewer_is_the_compound)
{
    char *path = tu_repo_path(VEC);
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    size_t t, i;
    json_t *r, *list;
    json_array_foreach(json_object_get(json_object_get(json_object_get(
                                           v, "spec"), "schedule"),
                                       "rounds"), t, r)
        json_array_foreach(json_object_get(r, "batches"), i, list)
            ck_assert_int_eq(
                json_array_remove(list, json_array_size(list) - 1), 0);
    pflref_diagnosis *d = diagnose_spec_as(VEC, v, 1, 0);
    const size_t check = 1 + PFLREF_MCA_RUNS + PFLREF_MCA_PROBE_RUNS;
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "precision");
    ck_assert_str_eq(d->best[0].param, "precision schedule");
    ck_assert_str_eq(d->best[0].value, "fp32 steps - 1");
    ck_assert_msg(strncmp(d->best[0].change,
                          "float32 + one local step fewer", 30) == 0,
                  "%s", d->best[0].change);
    ck_assert_msg(strstr(d->best[0].identical, "preset pfllib with one "
                                               "local step fewer") != NULL,
                  "%s", d->best[0].identical);
    ck_assert_uint_eq(d->runs, 102 + 2 * check + 12);
    ck_assert(!d->budget_exhausted);
    /* the probe alone, in fp64, is listed and does not match */
    int listed = 0;
    for (size_t k = 1; k < d->n_best; k++)
        listed |= strcmp(d->best[k].param, "schedule") == 0 &&
                  !d->best[k].complete;
    ck_assert_msg(listed, "%s", d->summary);
    free(d);
    /* the same run in fp64 is the probe alone: no cast is checked */
    d = diagnose_spec_as(VEC, v, 0, 0);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "probe");
    ck_assert_str_eq(d->best[0].param, "schedule");
    for (size_t k = 0; k < d->n_best; k++)
        ck_assert_str_ne(d->best[k].kind, "precision");
    free(d);
    json_decref(v);
    free(path);
}
END_TEST

/* VEC's spec with FedAvg's weights over all clients (the absent keeping
 * the old model), η doubled and, when `momentum`, torch's momentum 0.9:
 * three changes or two (the test's input, run by pflref), diagnosed. */
static pflref_diagnosis *diagnose_several(int momentum)
{
    char *path = tu_repo_path(VEC);
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_t *alg = json_object_get(json_object_get(v, "spec"), "algorithm");
    json_t *hp = json_object_get(alg, "hyperparameters");
    json_object_set_new(json_object_get(alg, "switches"), "fedavg.weights",
                        json_string("all_keep_old"));
    json_object_set_new(hp, "eta", json_real(1.0));
    if (momentum)
        json_object_set_new(hp, "opt.momentum", json_real(0.9));
    pflref_diagnosis *d = diagnose_spec_as(VEC, v, 0, 0);
    json_decref(v);
    free(path);
    return d;
}

/* Three changes as a cast with a pair: a float32 run (the numbers of
 * pflref's run rounded) with η × ½ and fedavg.weights = all_keep_old.
 * Level 2 reaches the pair (its fp64 run agrees on 20 of 22 records: η =
 * 0.25 keeps the early records float32 numbers), the cast alone does not
 * match, and the pair, agreeing furthest at float32's floor, is the
 * cast's first compound: named "float32 + ... and ...", before level 3
 * (which is not reached). */
START_TEST(test_float32_with_a_pair_is_the_compound)
{
    char *path = tu_repo_path(VEC);
    json_t *v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_t *alg = json_object_get(json_object_get(v, "spec"), "algorithm");
    json_object_set_new(json_object_get(alg, "switches"), "fedavg.weights",
                        json_string("all_keep_old"));
    json_object_set_new(json_object_get(alg, "hyperparameters"), "eta",
                        json_real(0.25));
    pflref_diagnosis *d = diagnose_spec_as(VEC, v, 1, 0);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "precision");
    ck_assert_str_eq(d->best[0].param, "precision eta fedavg.weights");
    ck_assert_str_eq(d->best[0].value, "fp32 0.25 all_keep_old");
    ck_assert_msg(strncmp(d->best[0].change, "float32 + eta = 0.25", 20) == 0,
                  "%s", d->best[0].change);
    for (size_t k = 0; k < d->n_best; k++)
        ck_assert_str_ne(d->best[k].kind, "triple");
    free(d);
    json_decref(v);
    free(path);
}
END_TEST

/* Three changes at once: η × 2, μ = 0.9 and fedavg.weights =
 * all_keep_old.  Level 1 finds η × 2 agreeing further than the spec (the
 * first client step right), level 2 the pair η × 2 and μ = 0.9 further
 * still (every client step right), no pair matches, and level 3 gives
 * that pair the third change: named as the triple, within the default
 * budget. */
START_TEST(test_three_changes_are_named_as_a_triple)
{
    pflref_diagnosis *d = diagnose_several(1);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "triple");
    ck_assert_str_eq(d->best[0].preset, "paper");
    ck_assert_str_eq(d->best[0].param, "eta opt.momentum fedavg.weights");
    ck_assert_str_eq(d->best[0].value, "1.0 0.9 all_keep_old");
    ck_assert_str_eq(d->best[0].change, "eta = 1.0, opt.momentum = 0.9 and "
                                        "fedavg.weights = all_keep_old");
    ck_assert_msg(strstr(d->best[0].value_source, "fedavg.weights = "
                                                  "all_keep_old: ") != NULL,
                  "%s", d->best[0].value_source);
    /* levels 0-2 take 180 runs and match nothing (no cast: the numbers
     * are float64's); level 3 expands the best pair to the default
     * budget, the triple among its first changes */
    ck_assert_uint_eq(d->runs, PFLREF_DIAGNOSE_BUDGET);
    ck_assert(d->budget_exhausted);
    /* the pair it extends is listed, not matching */
    int listed = 0;
    for (size_t k = 1; k < d->n_best; k++)
        listed |= strcmp(d->best[k].kind, "pair") == 0 &&
                  strcmp(d->best[k].param, "eta opt.momentum") == 0 &&
                  !d->best[k].complete;
    ck_assert_msg(listed, "%s", d->summary);
    free(d);
}
END_TEST

/* Two of those changes (η × 2 and fedavg.weights = all_keep_old) are
 * still the pair: level 2 matches, so level 3 is not searched (the 162
 * runs of levels 0-2 and the tell-apart runs, as before it existed). */
START_TEST(test_two_changes_are_still_the_pair)
{
    pflref_diagnosis *d = diagnose_several(0);
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].kind, "pair");
    ck_assert_msg(strstr(d->best[0].change, "eta = 1.0") != NULL &&
                      strstr(d->best[0].change, "fedavg.weights = "
                                                "all_keep_old") != NULL,
                  "%s", d->best[0].change);
    for (size_t k = 0; k < d->n_best; k++)
        ck_assert_str_ne(d->best[k].kind, "triple");
    ck_assert_uint_eq(d->runs, 162);
    free(d);
}
END_TEST

/* Batch norm's running statistics kept per client (PFLlib's reading,
 * bn.aggregate = parameters_only) where the vector averages them: named
 * as fedavg's preset pfllib, which sets the switch, with its source. */
START_TEST(test_bn_parameters_only_is_named)
{
    pflref_diagnosis *d = diagnose_changed(
        "golden/layers/fedavg-bn1d-mlp-squared.json", "switches",
        "bn.aggregate", "\"parameters_only\"");
    ck_assert_msg(d->matched, "%s", d->summary);
    ck_assert_str_eq(d->best[0].preset, "pfllib");
    ck_assert_msg(strstr(d->best[0].source, "set_parameters (parameters() "
                                            "only") != NULL,
                  "%s", d->best[0].source);
    /* and the switch's own source names PFLlib's lines */
    const char *src = pflref_param_value_source("fedavg", "bn.aggregate",
                                                "parameters_only");
    ck_assert_ptr_nonnull(src);
    ck_assert_msg(strstr(src, "clientbase.py:67-69") != NULL, "%s", src);
    free(d);
}
END_TEST

START_TEST(test_budget_caps_the_runs)
{
    char *cand = candidate_text(VEC, 0.75);
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    ck_assert_int_eq(diagnose(cand, 3, d, &err), PFLREF_OK);
    ck_assert_uint_eq(d->runs, 3);
    ck_assert(d->budget_exhausted);
    free(d);
    free(cand);
}
END_TEST

START_TEST(test_diagnose_api_errors)
{
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    /* D3: a malformed candidate is named on its side */
    ck_assert_int_eq(diagnose("{\"format\": \"pflref-result/1\", \"final\": "
                              "{\"w\": 1}}", 0, d, &err), PFLREF_EINVAL);
    ck_assert_msg(strncmp(err.where, "candidate:", 10) == 0, "%s", err.where);
    /* D4: NULL arguments */
    const pflref_diagnose_options opt = {.budget = 0};
    ck_assert_int_eq(pflref_golden_diagnose(NULL, 0, NULL, "{}", 2, &opt, d,
                                            &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "diagnose");
    /* JSON text out */
    char *cand = candidate_text(VEC, 0.0), *path = tu_repo_path(VEC);
    char *text = tu_read(path), *out = NULL;
    const pflref_check_options co = {.same_id = 1};
    ck_assert_int_eq(pflref_golden_diagnose_json(text, strlen(text), NULL, cand,
                                                 strlen(cand), &co, 0, &out,
                                                 &err), PFLREF_OK);
    ck_assert_msg(strstr(out, "\"format\": \"pflref-diagnosis/1\"") != NULL &&
                      strstr(out, "\"matched\": true") != NULL, "%s", out);
    pflref_text_free(out);
    ck_assert_int_eq(pflref_golden_diagnose_json(text, strlen(text), NULL, cand,
                                                 strlen(cand), NULL, 0, &out,
                                                 &err), PFLREF_EINVAL);
    ck_assert_ptr_null(out);
    free(text);
    free(path);
    free(cand);
    free(d);
}
END_TEST

/* Write the candidate into a fresh folder; its path (malloc'd). */
static char *write_candidate(const char *dir, double bump)
{
    char *cand = candidate_text(VEC, bump);
    char *path = malloc(strlen(dir) + 16);
    sprintf(path, "%s/c.json", dir);
    ck_assert_int_eq(tu_write(path, cand), 0);
    free(cand);
    return path;
}

START_TEST(test_cli_exit_codes)
{
    char *dir = tu_tmpdir(), *vec = tu_repo_path(VEC);
    char *good = write_candidate(dir, 0.0);
    char args[4096], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "diagnose %s %s", vec, good);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "DIAGNOSIS fedavg/worked/notes-1g/samples: "
                              "matches the vector's own spec") != NULL,
                  "%s", out);
    free(out);
    free(err);
    char *bad = write_candidate(dir, 0.75);
    snprintf(args, sizeof args, "diagnose %s %s --json --budget 50", vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, &err), 1);
    json_t *doc = json_loads(out, 0, NULL);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "format")),
                     "pflref-diagnosis/1");
    ck_assert(json_is_false(json_object_get(doc, "matched")));
    json_decref(doc);
    free(out);
    free(err);
    /* check --diagnose --json: the failing entry carries the document */
    snprintf(args, sizeof args, "check %s %s --diagnose --json", vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, &err), 1);
    ck_assert_msg(strstr(out, "\"diagnosis\"") != NULL &&
                      strstr(out, "pflref-diagnosis/1") != NULL, "%s", out);
    free(out);
    free(err);
    /* --budget also for check --diagnose; no progress line when standard
     * error is not a terminal */
    snprintf(args, sizeof args, "check %s %s --diagnose --budget 3 --json",
             vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, &err), 1);
    ck_assert_msg(strstr(out, "\"runs\": 3,") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"budget_exhausted\": true") != NULL, "%s",
                  out);
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    snprintf(args, sizeof args, "diagnose %s %s --budget 4", vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, &err), 1);
    ck_assert_msg(strstr(out, "4 runs") != NULL, "%s", out);
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    /* check --diagnose names the nearest variant under the failure */
    snprintf(args, sizeof args, "check %s %s --diagnose", vec, bad);
    ck_assert_int_eq(tu_cli(args, &out, &err), 1);
    ck_assert_msg(strstr(out, "DIAGNOSIS fedavg/worked/notes-1g/samples: no "
                              "known variant") != NULL, "%s", out);
    free(out);
    free(err);
    unlink(good);
    unlink(bad);
    rmdir(dir);
    free(good);
    free(bad);
    free(vec);
    free(dir);
}
END_TEST

/* docs/bad-inputs.md, "Diagnosing a candidate": D1, D2 and D3 at the
 * command line (exit 2, the option or file named, nothing on stdout). */
START_TEST(test_diagnose_cli_errors)
{
    char *dir = tu_tmpdir(), *vec = tu_repo_path(VEC);
    char *good = write_candidate(dir, 0.0);
    char junk[512];
    snprintf(junk, sizeof junk, "%s/j.json", dir);
    ck_assert_int_eq(tu_write(junk, "{\"format\": \"pflref-result/1\"}"), 0);
    struct {
        const char *args, *message;
    } rows[] = {
        {"diagnose %s %s --budget 0", "--budget is a count of runs from 1 "
                                      "to 10000: 0"},
        {"diagnose %s %s --budget many", "--budget is a count of runs"},
        {"diagnose %s", "diagnose needs VECTOR and CANDIDATE"},
        {"diagnose %s %s extra", "diagnose takes VECTOR and CANDIDATE"},
        {"diagnose %s %s --frobnicate", "unknown option or missing value"},
        {"diagnose %s J", "candidate:"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char args[4096], *out = NULL, *err = NULL;
        const char *second = strstr(rows[i].args, " J") ? junk : good;
        char fmt[128];
        snprintf(fmt, sizeof fmt, "%s", rows[i].args);
        char *j = strstr(fmt, " J");
        if (j != NULL)
            strcpy(j, " %s");
        snprintf(args, sizeof args, fmt, vec, second);
        ck_assert_int_eq(tu_cli(args, &out, &err), 2);
        ck_assert_msg(strstr(err, rows[i].message) != NULL, "%s: %s", args,
                      err);
        ck_assert_msg(out[0] == '\0', "%s printed %s", args, out);
        free(out);
        free(err);
    }
    unlink(good);
    unlink(junk);
    rmdir(dir);
    free(good);
    free(vec);
    free(dir);
}
END_TEST

START_TEST(test_diagnose_catalogue)
{
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_ptr_nonnull(doc);
    const char *rows[] = {"| D1 | diagnose: a budget that is not a count |",
                          "| D2 | diagnose: arguments missing or extra |",
                          "| D3 | diagnose: malformed vector or candidate |",
                          "| D4 | diagnose: NULL argument at the C API |"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        ck_assert_msg(strstr(doc, rows[i]) != NULL, "the catalogue lacks %s",
                      rows[i]);
    free(doc);
    free(path);
}
END_TEST

/* docs/variants.md is `pflref list --variants --markdown golden`, run in
 * the checkout, byte for byte. */
START_TEST(test_variants_doc_is_generated)
{
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *root = tu_repo_path("");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' list --variants --markdown "
                              "golden", root, cli);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 20, n = 0;
    char *got = malloc(cap);
    size_t k;
    while ((k = fread(got + n, 1, cap - 1 - n, p)) > 0)
        n += k;
    got[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    char *path = tu_repo_path("docs/variants.md");
    char *want = tu_read(path);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(strcmp(got, want) == 0,
                  "docs/variants.md differs from `pflref list --variants "
                  "--markdown golden`: regenerate it (docs/cli.md)");
    ck_assert_msg(strstr(got, "| pfedme | preset | `official` |") != NULL &&
                      strstr(got, "`pfedme/worked/linear-official-beta`") !=
                          NULL,
                  "the table lacks pfedme's official preset and its vector");
    free(want);
    free(path);
    free(got);
    free(root);
}
END_TEST

Suite *diagnose_suite(void)
{
    Suite *s = suite_create("diagnose");
    TCase *tc = tcase_create("diagnose");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_expectation_matches_the_spec);
    tcase_add_test(tc, test_moved_final_value_is_no_known_variant);
    tcase_add_test(tc, test_budget_caps_the_runs);
    tcase_add_test(tc, test_partial_counts_only_what_was_written);
    tcase_add_test(tc, test_value_sources_and_links);
    tcase_add_test(tc, test_float32_cast_is_a_variant);
    tcase_add_test(tc, test_float32_with_a_switch_is_the_compound);
    tcase_add_test(tc, test_float32_with_a_step_fewer_is_the_compound);
    tcase_add_test(tc, test_float32_with_a_pair_is_the_compound);
    tcase_add_test(tc, test_three_changes_are_named_as_a_triple);
    tcase_add_test(tc, test_two_changes_are_still_the_pair);
    tcase_add_test(tc, test_optimizer_state_kept_is_named);
    tcase_add_test(tc, test_momentum_added_is_probed);
    tcase_add_test(tc, test_bn_parameters_only_is_named);
    tcase_add_test(tc, test_diagnose_api_errors);
    tcase_add_test(tc, test_cli_exit_codes);
    tcase_add_test(tc, test_diagnose_cli_errors);
    tcase_add_test(tc, test_diagnose_catalogue);
    tcase_add_test(tc, test_variants_doc_is_generated);
    suite_add_tcase(s, tc);
    return s;
}
