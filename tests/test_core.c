/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_core.c: status codes and error records (ref/core/status.c),
 * the trace sinks and trajectory recorder (ref/core/trace.c), the
 * hyperparameter and switch registry (ref/engine/params.c), the algorithm
 * registry (ref/algorithms/registry.c) and the run driver's argument checks
 * (ref/engine/run.c). */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* ---- status ------------------------------------------------------------ */

START_TEST(test_error_set)
{
    pflref_error err;
    ck_assert_int_eq(pflref_error_set(&err, PFLREF_EINVAL, "clients[3].X[2]",
                                      "bad value %d", 7), PFLREF_EINVAL);
    ck_assert_int_eq(err.status, PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[3].X[2]");
    ck_assert_str_eq(err.message, "bad value 7");
    ck_assert_int_eq(err.round, -1);
    ck_assert_int_eq(pflref_error_set(NULL, PFLREF_EIO, "x", "y"), PFLREF_EIO);
    pflref_error_set(&err, PFLREF_EINVAL, NULL, "no location");
    ck_assert_str_eq(err.where, "");
    pflref_error_clear(&err);
    ck_assert_int_eq(err.status, PFLREF_OK);
    pflref_error_clear(NULL);
}
END_TEST

START_TEST(test_error_diverge)
{
    pflref_error err;
    ck_assert_int_eq(pflref_error_diverge(&err, 4, 2, 7, "theta"),
                     PFLREF_EDIVERGE);
    ck_assert_int_eq(err.round, 4);
    ck_assert_int_eq(err.client, 2);
    ck_assert_int_eq(err.step, 7);
    ck_assert_ptr_nonnull(strstr(err.message, "theta is not finite"));
    ck_assert_ptr_nonnull(strstr(err.message, "round 4, client 2, local step 7"));
    pflref_error_diverge(&err, 3, -1, -1, "w");
    ck_assert_ptr_nonnull(strstr(err.message, "round 3, server aggregation"));
    pflref_error_diverge(&err, -1, 5, -1, "theta");
    ck_assert_ptr_nonnull(strstr(err.message, "post phase"));
    ck_assert_ptr_nonnull(strstr(err.message, "client 5"));
    ck_assert_int_eq(pflref_error_diverge(NULL, 1, 1, 1, "w"), PFLREF_EDIVERGE);
}
END_TEST

START_TEST(test_status_names)
{
    const pflref_status all[] = {PFLREF_OK, PFLREF_EINVAL, PFLREF_ENOMEM,
                                 PFLREF_EIO, PFLREF_EDIVERGE, PFLREF_EINTERNAL};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(pflref_status_name(all[i]),
                             pflref_status_name(all[j]));
    ck_assert_str_eq(pflref_status_name((pflref_status)99), "unknown status");
}
END_TEST

/* ---- trace ------------------------------------------------------------- */

typedef struct {
    int count;
    pflref_event last;
} counter;

static void count_event(void *ctx, const pflref_event *ev)
{
    counter *c = ctx;
    c->count++;
    c->last = *ev;
}

START_TEST(test_trace_emit_and_tee)
{
    counter a = {0, {0}}, b = {0, {0}};
    pflref_trace ta = {count_event, &a}, tb = {count_event, &b};
    pflref_trace_tee tee = {&ta, &tb};
    pflref_trace both = {pflref_trace_tee_emit, &tee};
    const double x[2] = {2.385, -1.5};
    pflref_trace_emit(&both, PFLREF_EV_STEP, "train", 3, 1, 2, "w_local", x, 2,
                      "line");
    ck_assert_int_eq(a.count, 1);
    ck_assert_int_eq(b.count, 1);
    ck_assert_int_eq(a.last.round, 3);
    ck_assert_int_eq(a.last.client, 1);
    ck_assert_int_eq(a.last.step, 2);
    ck_assert_str_eq(a.last.name, "w_local");
    ck_assert_str_eq(a.last.formula, "line");
    pflref_trace_tee half = {NULL, &tb};
    pflref_trace one = {pflref_trace_tee_emit, &half};
    pflref_trace_emit(&one, PFLREF_EV_NOTE, "train", 0, -1, -1, "x", x, 1, NULL);
    ck_assert_int_eq(b.count, 2);
    pflref_trace_emit(NULL, PFLREF_EV_NOTE, "train", 0, -1, -1, "x", x, 1, NULL);
    pflref_trace none = {NULL, NULL};
    pflref_trace_emit(&none, PFLREF_EV_NOTE, "train", 0, -1, -1, "x", x, 1, NULL);
}
END_TEST

/* The recorder keeps what its level asks for, copies values, and grows past
 * its first capacity; an intermediate (--trace alone) is kept at no level. */
START_TEST(test_trajectory_levels)
{
    const pflref_record_level levels[3] = {PFLREF_RECORD_NONE,
                                           PFLREF_RECORD_ROUND,
                                           PFLREF_RECORD_STEP};
    /* events: 500 × (round_begin, client_begin, step, client_end, server,
     * note, final, intermediate): round keeps 4 of them, step all but the
     * intermediate */
    const size_t expect[3] = {0, 500 * 4, 500 * 7};
    for (int l = 0; l < 3; l++) {
        pflref_trajectory tj;
        pflref_trajectory_init(&tj, levels[l]);
        pflref_trace tr = {pflref_trajectory_emit, &tj};
        for (long t = 0; t < 500; t++) {
            double v[3] = {(double)t, 0.5 * (double)t, -1.0};
            for (int k = 0; k < 8; k++)
                pflref_trace_emit(&tr, (pflref_event_kind)k, "train", t, 0, 1,
                                  "w", v, 3, NULL);
            v[0] = -99.0;   /* the recorder copied the values */
        }
        ck_assert_int_eq(tj.count, expect[l]);
        ck_assert_int_eq(tj.failed, 0);
        if (l == 2) {
            const pflref_record *r = &tj.records[7 * 499 + 2];
            for (size_t j = 0; j < tj.count; j++)
                ck_assert_int_ne(tj.records[j].kind, PFLREF_EV_INTERMEDIATE);
            ck_assert_int_eq(r->kind, PFLREF_EV_STEP);
            ck_assert_int_eq(r->round, 499);
            ck_assert_double_eq(tj.values[r->offset], 499.0);
            ck_assert_double_eq(tj.values[r->offset + 1], 249.5);
        }
        pflref_trajectory_free(&tj);
        ck_assert_int_eq(tj.count, 0);
    }
    pflref_trajectory_free(NULL);
    const char *names[8];
    pflref_event_kind parsed;
    for (int k = 0; k < 8; k++) {
        names[k] = pflref_event_kind_name((pflref_event_kind)k);
        for (int j = 0; j < k; j++)
            ck_assert_str_ne(names[k], names[j]);
        /* a file's event names parse back; an intermediate is never in one */
        ck_assert_int_eq(pflref_event_kind_parse(names[k], &parsed), k < 7);
        if (k < 7)
            ck_assert_int_eq(parsed, k);
    }
    ck_assert_str_eq(names[7], "intermediate");
    ck_assert_str_eq(pflref_event_kind_name((pflref_event_kind)42), "unknown");
}
END_TEST

/* ---- params ------------------------------------------------------------ */

START_TEST(test_params_registry)
{
    size_t n;
    const pflref_param *p = pflref_params(&n);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(p[i].doc[0] != '\0', "%s has no doc", p[i].name);
        /* one name may serve several algorithms, but never twice one
         * algorithm: find_for finds this entry for each of its algorithms */
        size_t na;
        const pflref_algorithm *const *algs = pflref_algorithms(&na);
        size_t applies = 0;
        for (size_t a = 0; a < na; a++) {
            if (!pflref_name_in_list(p[i].algorithms, algs[a]->name))
                continue;
            applies++;
            ck_assert_ptr_eq(pflref_param_find_for(p[i].name, algs[a]->name),
                             &p[i]);
        }
        ck_assert_msg(applies > 0, "%s applies to no algorithm", p[i].name);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p[i].name, p[j].name) != 0)
                continue;
            for (size_t a = 0; a < na; a++)
                ck_assert_msg(!(pflref_name_in_list(p[i].algorithms,
                                                    algs[a]->name) &&
                                pflref_name_in_list(p[j].algorithms,
                                                    algs[a]->name)),
                              "%s twice for %s", p[i].name, algs[a]->name);
        }
    }
    /* α is Per-FedAvg's inner step, APFL's mixing weight and interp's
     * fixed weight: three fields */
    ck_assert_uint_eq(pflref_param_find_for("alpha", "perfedavg")->offset,
                      offsetof(pflref_hyper, perfedavg.alpha));
    ck_assert_uint_eq(pflref_param_find_for("alpha", "apfl")->offset,
                      offsetof(pflref_hyper, apfl.alpha));
    ck_assert_uint_eq(pflref_param_find_for("alpha", "interp")->offset,
                      offsetof(pflref_hyper, interp.alpha));
    ck_assert_uint_eq(pflref_param_find_for("beta", "pfedme")->offset,
                      offsetof(pflref_hyper, beta));
    ck_assert_uint_eq(pflref_param_find_for("beta", "perfedavg")->offset,
                      offsetof(pflref_hyper, perfedavg.beta));
    /* a name that does not apply falls back to its first entry */
    ck_assert_ptr_eq(pflref_param_find_for("beta", "fedavg"),
                     pflref_param_find("beta"));
    ck_assert_ptr_null(pflref_param_find_for("lr", "fedavg"));
    ck_assert_ptr_null(pflref_param_find("lr"));
    ck_assert(pflref_name_in_list("fedavg local finetune", "local"));
    ck_assert(!pflref_name_in_list("fedavg local finetune", "loc"));
    ck_assert(!pflref_name_in_list("", "fedavg"));
    ck_assert(pflref_name_in_list("  fedavg", "fedavg"));
}
END_TEST

START_TEST(test_hyper_set)
{
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert(isnan(h.eta));
    ck_assert_double_eq(h.mu_ft, 0.0);
    ck_assert_int_eq(h.fedavg.weights, PFLREF_FEDAVG_WEIGHTS_SAMPLES);
    const pflref_param *eta = pflref_param_find("eta");
    const pflref_param *mu = pflref_param_find("mu_ft");
    const pflref_param *wts = pflref_param_find("fedavg.weights");
    pflref_error err;
    ck_assert_int_eq(pflref_hyper_set_real(&h, eta, 0.125, "e", &err), PFLREF_OK);
    ck_assert_double_eq(pflref_hyper_get_real(&h, eta), 0.125);
    ck_assert_int_eq(pflref_hyper_set_real(&h, eta, 0.0, "e", &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "e");
    ck_assert_int_eq(pflref_hyper_set_real(&h, eta, NAN, "e", &err), PFLREF_EINVAL);
    ck_assert_int_eq(pflref_hyper_set_real(&h, mu, 0.0, "m", &err), PFLREF_OK);
    ck_assert_int_eq(pflref_hyper_set_real(&h, mu, -1e-300, "m", &err), PFLREF_EINVAL);
    ck_assert_int_eq(pflref_hyper_set_real(&h, wts, 1.0, "w", &err), PFLREF_EINVAL);
    ck_assert_int_eq(pflref_hyper_set_enum(&h, wts, "all_keep_old", "w", &err), PFLREF_OK);
    ck_assert_int_eq(h.fedavg.weights, PFLREF_FEDAVG_WEIGHTS_ALL_KEEP_OLD);
    ck_assert_str_eq(pflref_hyper_get_enum(&h, wts), "all_keep_old");
    ck_assert_int_eq(pflref_hyper_set_enum(&h, wts, "mean", "w", &err), PFLREF_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "samples|uniform|all_keep_old"));
    ck_assert_int_eq(pflref_hyper_set_enum(&h, eta, "fast", "e", &err), PFLREF_EINVAL);
}
END_TEST


/* Every preset's settings apply (a setting that fails is an internal
 * error); the Per-FedAvg and APFL presets set what docs/formats.md says. */
START_TEST(test_presets_apply)
{
    size_t n;
    const pflref_preset *pr = pflref_presets(&n);
    pflref_error err;
    for (size_t i = 0; i < n; i++) {
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        ck_assert_msg(pflref_preset_apply(&h, pr[i].algorithm, pr[i].name,
                                          "algorithm.preset", &err) ==
                          PFLREF_OK,
                      "%s/%s: %s", pr[i].algorithm, pr[i].name, err.message);
    }
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "perfedavg", "pfedme_repo", "p",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.perfedavg.variant, PFLREF_PERFEDAVG_FO);
    ck_assert_int_eq(h.perfedavg.weights, PFLREF_PERFEDAVG_WEIGHTS_SAMPLES);
    ck_assert_int_eq(h.perfedavg.eval, PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA);
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "apfl", "fedtorch", "p", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.apfl.mix, PFLREF_APFL_MIX_OUTPUT);
    ck_assert_int_eq(h.apfl.mix_uses_w, PFLREF_APFL_MIX_W_NEW);
    ck_assert_int_eq(h.apfl.alpha_rule, PFLREF_APFL_RULE_FEDTORCH);
    ck_assert_int_eq(h.apfl.alpha_mode, PFLREF_APFL_ALPHA_FIXED);
    /* PFLlib's presets (notes-pfllib-as-run §2.3): n_i weights everywhere */
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "apfl", "pfllib", "p", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.apfl.variant, PFLREF_APFL_VARIANT_PFLLIB);
    ck_assert_int_eq(h.apfl.weights, PFLREF_APFL_WEIGHTS_SAMPLES);
    ck_assert_int_eq(h.apfl.alpha_mode, PFLREF_APFL_ALPHA_ADAPTIVE);
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "perfedavg", "pfllib", "p",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.perfedavg.variant, PFLREF_PERFEDAVG_FO);
    ck_assert_int_eq(h.perfedavg.weights, PFLREF_PERFEDAVG_WEIGHTS_SAMPLES);
    ck_assert_int_eq(h.perfedavg.eval, PFLREF_PERFEDAVG_EVAL_ONE_ALPHA);
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "fedalt", "fedrep_pfllib", "p",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.pfl.weights, PFLREF_PFL_WEIGHTS_SAMPLES);
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "fedalt", "fedrep", "p", &err),
                     PFLREF_OK);
    ck_assert_int_eq(h.pfl.weights, PFLREF_PFL_WEIGHTS_UNIFORM);
    static const char *const pfllib_presets[][2] = {
        {"fedavg", "pfllib"}, {"local", "pfllib"}, {"pfedme", "pfllib"},
        {"ditto", "pfllib"}, {"perfedavg", "pfllib"}, {"apfl", "pfllib"},
        {"fedalt", "fedrep_pfllib"}, {"fedsim", "fedper_pfllib"},
        {"fedsim", "lg_fedavg_pfllib"}, {"fedsim", "fedbabu_pfllib"}};
    for (size_t k = 0; k < sizeof pfllib_presets / sizeof *pfllib_presets;
         k++) {
        const pflref_preset *pre = pflref_preset_find(pfllib_presets[k][0],
                                                      pfllib_presets[k][1]);
        ck_assert_msg(pre != NULL && strstr(pre->source, "PFLlib") != NULL,
                      "no PFLlib preset %s/%s", pfllib_presets[k][0],
                      pfllib_presets[k][1]);
    }
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "apfl", "official", "p", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "p");
}
END_TEST

/* ---- registry and driver ------------------------------------------------ */

START_TEST(test_algorithm_registry)
{
    size_t n;
    const pflref_algorithm *const *algs = pflref_algorithms(&n);
    static const char *const names[] = {"fedavg", "local", "finetune",
                                        "prox", "pfedme", "ditto",
                                        "fedalt", "fedsim", "pflego",
                                        "perfedavg", "apfl", "interp",
                                        "cfl", "ifca", "fedfomo",
                                        "fedbn", "pfedhn", "lora",
                                        "feddyn", "scaffold", "moon",
                                        "fedprox", "fedrecon",
                                        "fedamp", "fedproto",
                                        "fedrod",
                                        "apple",
                                        "fedala",
                                        "fedpac"};
    ck_assert_uint_eq(n, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(strcmp(algs[i]->name, names[i]) == 0,
                      "registry entry %zu is %s, expected %s", i,
                      algs[i]->name, names[i]);
        ck_assert_ptr_eq(pflref_algorithm_find(algs[i]->name), algs[i]);
        ck_assert_uint_gt(algs[i]->n_eval, 0);
        ck_assert(algs[i]->round != NULL);
    }
    ck_assert_ptr_null(pflref_algorithm_find("fedunknown"));
}
END_TEST

START_TEST(test_run_arguments)
{
    tb_case *c = tb_quadratic(2, 1);
    tb_quad(c, 0, (const double[]){1, 2}, (const double[]){3, 4}, 1);
    c->hyper.eta = 0.1;
    tb_generate(c, 1, 1, 0);
    pflref_schedule *schedule = tb_schedule(c, "fedavg");
    const pflref_algorithm *fedavg = pflref_algorithm_find("fedavg");
    pflref_run_result *res = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_run(NULL, fedavg, &c->hyper, schedule, c->w0,
                                NULL, &res, &err),
                     PFLREF_EINVAL);
    /* non-finite initial parameters */
    c->w0[1] = INFINITY;
    ck_assert_int_eq(pflref_run(c->problem, fedavg, &c->hyper, schedule,
                                c->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "init");
    c->w0[1] = 0.0;
    /* a schedule for another number of clients */
    schedule->N = 2;
    ck_assert_int_eq(pflref_run(c->problem, fedavg, &c->hyper, schedule,
                                c->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule");
    schedule->N = 1;
    /* finetune needs the post phase */
    ck_assert_int_eq(pflref_run(c->problem, pflref_algorithm_find("finetune"),
                                &c->hyper, schedule, c->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.post");
    ck_assert_ptr_null(res);
    tb_free(c);
}
END_TEST

/* pflref_run checks every hyperparameter and switch the algorithm reads as
 * the spec reader does (a C caller can put anything in the fields; the
 * fuzzers found an out-of-range switch indexing past a table, η = +Inf
 * accepted, APFL's α below 0: fuzz/regressions/fuzz_algorithms). */
START_TEST(test_run_checks_hyper)
{
    tb_case *tc = tb_quadratic(1, 2);
    tb_quad(tc, 0, (const double[]){1}, (const double[]){3}, 1);
    tb_quad(tc, 1, (const double[]){2}, (const double[]){1}, 1);
    tc->hyper.eta = 0.1;
    tb_generate(tc, 1, 1, 0);
    const pflref_schedule *schedule = tb_schedule(tc, "fedavg");
    static const struct {
        const char *alg;
        size_t offset;
        int kind;          /* 0 real, 1 switch, 2 count */
        double real;
        int sw;
        const char *where; /* NULL: accepted */
    } cases[] = {
        {"fedavg", offsetof(pflref_hyper, fedavg.weights), 1, 0, -1,
         "algorithm.switches.fedavg.weights"},
        {"fedavg", offsetof(pflref_hyper, fedavg.weights), 1, 0, 3,
         "algorithm.switches.fedavg.weights"},
        {"fedavg", offsetof(pflref_hyper, eta), 0, INFINITY, 0,
         "algorithm.hyperparameters.eta"},
        {"fedavg", offsetof(pflref_hyper, eta), 0, -0.5, 0,
         "algorithm.hyperparameters.eta"},
        {"pfedme", offsetof(pflref_hyper, pfedme.mu), 0, NAN, 0,
         "algorithm.hyperparameters.pfedme.mu"},
        {"apfl", offsetof(pflref_hyper, apfl.alpha), 0, -0.25, 0,
         "algorithm.hyperparameters.alpha"},
        /* η_α has no default: NaN means "unset, use η" */
        {"apfl", offsetof(pflref_hyper, apfl.eta_alpha), 0, NAN, 0, NULL},
        {"pfedme", offsetof(pflref_hyper, K), 2, 0, 0,
         "algorithm.hyperparameters.K"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pflref_hyper h = tc->hyper;
        h.lambda = 1.0;
        h.eta_p = 0.1;
        h.K = 1;
        h.apfl.alpha = 0.5;
        char *field = (char *)&h + cases[c].offset;
        if (cases[c].kind == 0)
            memcpy(field, &cases[c].real, sizeof(double));
        else if (cases[c].kind == 1)
            memcpy(field, &cases[c].sw, sizeof(int));
        else
            memset(field, 0, sizeof(size_t));
        pflref_run_result *res = NULL;
        pflref_error err;
        pflref_status st = pflref_run(tc->problem,
                                      pflref_algorithm_find(cases[c].alg), &h,
                                      schedule, tc->w0, NULL, &res, &err);
        if (cases[c].where == NULL) {
            ck_assert_msg(st == PFLREF_OK, "case %zu: %s: %s", c, err.where,
                          err.message);
            pflref_run_result_free(res);
            continue;
        }
        ck_assert_msg(st == PFLREF_EINVAL && strcmp(err.where, cases[c].where) == 0,
                      "case %zu: status %d at %s: %s", c, (int)st, err.where,
                      err.message);
        ck_assert_ptr_null(res);
    }
    tb_free(tc);
}
END_TEST

Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_error_set);
    tcase_add_test(tc, test_error_diverge);
    tcase_add_test(tc, test_status_names);
    tcase_add_test(tc, test_trace_emit_and_tee);
    tcase_add_test(tc, test_trajectory_levels);
    tcase_add_test(tc, test_params_registry);
    tcase_add_test(tc, test_run_checks_hyper);
    tcase_add_test(tc, test_hyper_set);
    tcase_add_test(tc, test_presets_apply);
    tcase_add_test(tc, test_algorithm_registry);
    tcase_add_test(tc, test_run_arguments);
    suite_add_tcase(s, tc);
    return s;
}
