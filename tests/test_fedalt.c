/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedalt.c: FedAlt and FedSim (ref/algorithms/fedalt.c) and
 * Lemma 21 of Pillutla et al. (sampling without replacement).  How a spec
 * reads their presets and the split they imply is tested in
 * tests/test_spec.c.
 *
 * Example A of shared/spec notes-pflego-fedalt-fedsim-fedrep.md §3.9:
 * ŷ = u·x + v_i (shared slope, personal bias), ½(ŷ − y)², full-batch
 * steps; its iterates are checked by the golden vectors in golden/fedalt
 * and golden/fedsim, and here its objective F(u, V) = Σ_i α_i F_i before
 * and after the final fine-tuning (the notes' 12-digit values).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* "batch | batch | …" (steps times) into buf. */
static const char *repeat(char *buf, size_t size, const char *batch,
                          int steps)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int q = 0; q < steps; q++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", q ? " | " : "",
                                batch);
    return buf;
}

/* Example A: ŷ = u·x + v_i (linear, d = 1, bias personal), ½(ŷ − y)²,
 * three devices, w⁰ = (0.5, 0). */
static tb_case *a_problem(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 1, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){2, 3});
    tb_train(c, 1, 3, (const double[]){1, 2, 3}, (const double[]){-1, -1, -2});
    tb_train(c, 2, 1, (const double[]){1}, (const double[]){1});
    tb_split(c, "b");
    tb_w0(c, (const double[]){0.5, 0});
    return c;
}

/* Example A with its schedule: S⁰ = {0, 1}, S¹ = {1, 2}, `steps` full
 * batches per participation, and (post) 2 full-batch fine-tuning steps per
 * client. */
static tb_case *a_case(int steps, int post)
{
    tb_case *c = a_problem();
    char b[64], d[64], e[64];
    tb_round(c, "0 1", repeat(b, sizeof b, "0 1", steps),
             repeat(d, sizeof d, "0 1 2", steps));
    tb_round(c, "1 2", repeat(d, sizeof d, "0 1 2", steps),
             repeat(e, sizeof e, "0", steps));
    if (post)
        tb_post(c, "0 1 | 0 1", "0 1 2 | 0 1 2", "0 | 0");
    return c;
}

/* F(u, V) = Σ α_i F_i(u, v_i), α_i = N_i/N: the sample-weighted mean of the
 * personalized model's training losses. */
static double objective(const char *name, int stateless, int post)
{
    const int fedalt = strcmp(name, "fedalt") == 0;
    tb_case *c = a_case(fedalt ? 3 : 2, post);
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    if (fedalt)
        c->hyper.tau_v = 1;
    c->hyper.eta_ft = 0.1;
    c->hyper.pfl.state = stateless ? PFLREF_PFL_STATELESS : PFLREF_PFL_STATEFUL;
    pflref_run_result *res = tb_run(c, name, NULL);
    ck_assert_str_eq(res->eval[0].label, "personalized");
    const double F = res->eval[0].train_loss.weighted_mean;
    pflref_run_result_free(res);
    tb_free(c);
    return F;
}

/* Notes §3.9: F(u², V) before and after the final fine-tuning, for FedAlt
 * and FedSim, stateful and stateless (12 printed digits). */
START_TEST(test_notes_a_objective)
{
    /* req: fedalt.eq1, fedalt.alg4.l16 */
    const struct {
        const char *name;
        int stateless;
        double before, after;
    } cases[] = {
        {"fedalt", 0, 1.349203014200, 0.916266821829},
        {"fedsim", 0, 1.188983422953, 0.811250537492},
        {"fedalt", 1, 1.712567194743, 1.154267278278},
        {"fedsim", 1, 1.721670623459, 1.160181068820},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double before = objective(cases[c].name, cases[c].stateless, 0);
        const double after = objective(cases[c].name, cases[c].stateless, 1);
        ck_assert_msg(fabs(before - cases[c].before) < 6e-13 &&
                          fabs(after - cases[c].after) < 6e-13,
                      "%s %s: F = %.15f -> %.15f, notes %.12f -> %.12f",
                      cases[c].name,
                      cases[c].stateless ? "stateless" : "stateful", before,
                      after, cases[c].before, cases[c].after);
    }
}
END_TEST

/* A linear model (d = 2, bias, squared loss), three devices of 3, 2 and 4
 * samples, w⁰ = (0.21, −0.37, 0.05), nothing personal. */
static tb_case *l_case(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                    2, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){-0.775, 1.409, 0.236});
    tb_train(c, 1, 2, (const double[]){-1.426, 0.357, 0.689, -0.942},
             (const double[]){0.518, -1.263});
    tb_train(c, 2, 4,
             (const double[]){0.341, 0.815, -0.627, -0.118, 1.034, -0.566,
                              0.205, 0.479},
             (const double[]){0.942, -0.331, 0.613, 0.127});
    tb_w0(c, (const double[]){0.21, -0.37, 0.05});
    return c;
}

/* Two given rounds of ragged minibatches, S⁰ = {0, 2}, S¹ = {1, 2}. */
static void l_schedule(tb_case *c)
{
    tb_round(c, "0 2", "0 1 | 2", "3 1 | 0 | 2");
    tb_round(c, "1 2", "1 | 0 1", "2 3 | 0 1");
}

/* With an empty personal part, FedAlt (τ_v = 0) and FedSim are FedAvg with
 * the same weights, bit for bit (pfl.weights samples = fedavg.weights
 * samples; uniform = uniform). */
START_TEST(test_empty_personal_is_fedavg)
{
    /* req: fedalt.alg4.l14, fedalt.alg4.l16 */
    const struct {
        int fedavg, pfl;
        const char *name;
    } weights[2] = {
        {PFLREF_FEDAVG_WEIGHTS_SAMPLES, PFLREF_PFL_WEIGHTS_SAMPLES, "samples"},
        {PFLREF_FEDAVG_WEIGHTS_UNIFORM, PFLREF_PFL_WEIGHTS_UNIFORM, "uniform"},
    };
    const char *names[3] = {"fedavg", "fedalt", "fedsim"};
    for (size_t k = 0; k < 2; k++) {
        pflref_run_result *res[3];
        tb_case *c[3];
        for (int a = 0; a < 3; a++) {
            c[a] = l_case();
            l_schedule(c[a]);
            if (a == 0) {
                c[a]->hyper.eta = 0.2;
                c[a]->hyper.fedavg.weights = weights[k].fedavg;
            } else {
                c[a]->hyper.gamma_u = 0.2;
                c[a]->hyper.gamma_v = 0.7;
                if (a == 1)
                    c[a]->hyper.tau_v = 0;
                c[a]->hyper.pfl.weights = weights[k].pfl;
            }
            res[a] = tb_run(c[a], names[a], NULL);
        }
        for (int a = 1; a < 3; a++) {
            for (size_t p = 0; p < res[0]->P; p++)
                ck_assert_msg(res[a]->w[p] == res[0]->w[p],
                              "%s weights %s, entry %zu: %.17g vs FedAvg "
                              "%.17g", names[a], weights[k].name, p,
                              res[a]->w[p], res[0]->w[p]);
            /* every device's model is the global one */
            for (size_t i = 0; i < res[a]->N; i++)
                ck_assert(memcmp(res[a]->v + i * res[a]->P, res[a]->w,
                                 res[a]->P * sizeof(double)) == 0);
        }
        for (int a = 0; a < 3; a++) {
            pflref_run_result_free(res[a]);
            tb_free(c[a]);
        }
    }
}
END_TEST

/* FedSim with γ_u = 0 leaves u at u⁰ and moves v only: one round of all
 * clients is fine-tuning of v from the initial model (the finetune
 * algorithm with no training rounds, scope personal, μ_ft = 0), bit for bit
 * on the personal entries; the shared entries of every device stay u⁰. */
START_TEST(test_fedsim_gamma_u0_is_finetune)
{
    /* req: fedsim.alg5.l9, fedsim.alg5.l10 */
    tb_case *ss = l_case(), *sf = l_case();
    tb_split(ss, "b");
    tb_split(sf, "b");
    ss->hyper.gamma_u = 0.0;
    ss->hyper.gamma_v = 0.3;
    tb_round(ss, "0 1 2", "0 1 | 2", "1 | 0 1", "3 1 | 0 | 2");
    sf->hyper.eta = 1.0;
    sf->hyper.eta_ft = 0.3;
    sf->hyper.finetune.scope = PFLREF_FINETUNE_PERSONAL;
    tb_post(sf, "0 1 | 2", "1 | 0 1", "3 1 | 0 | 2");
    pflref_run_result *rs = tb_run(ss, "fedsim", NULL);
    pflref_run_result *rf = tb_run(sf, "finetune", NULL);
    const size_t P = rs->P;
    for (size_t i = 0; i < rs->N; i++) {
        /* the bias (entry 2) is personal; w (entries 0, 1) shared */
        ck_assert_msg(rs->v[i * P + 2] == rf->v[i * P + 2],
                      "client %zu: fedsim v %.17g, finetune %.17g", i,
                      rs->v[i * P + 2], rf->v[i * P + 2]);
        ck_assert(rs->v[i * P + 2] != rs->w0[2]);
    }
    for (size_t p = 0; p < 2; p++)
        ck_assert_double_eq_tol(rs->w[p], rs->w0[p], 1e-16);
    pflref_run_result_free(rs);
    pflref_run_result_free(rf);
    tb_free(ss);
    tb_free(sf);
}
END_TEST

/* A device that is not selected keeps its v; in a stateless run no device
 * keeps anything, so the final personal entries are v⁰. */
START_TEST(test_state)
{
    /* req: fedalt.alg4.l5, fedalt.alg4.l10 */
    for (int k = 0; k < 2; k++) {
        tb_case *c = a_case(2, 0);
        c->hyper.gamma_u = 0.1;
        c->hyper.gamma_v = 0.1;
        if (k == 1)
            c->hyper.pfl.state = PFLREF_PFL_STATELESS;
        pflref_run_result *res = tb_run(c, "fedsim", NULL);
        if (k == 0) {
            /* client 0 trained in round 0 only: its bias is round 0's
             * 0.29125 (notes §3.9, FedSim client 1) */
            ck_assert_double_eq_tol(res->v[1], 0.29125, 1e-15);
            ck_assert(res->v[3] != 0.0 && res->v[5] != 0.0);
        } else {
            for (size_t i = 0; i < res->N; i++)
                ck_assert_double_eq(res->v[i * res->P + 1], 0.0);
        }
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* The run of `alg` on c (freed here) fails with EINVAL at `where`, and the
 * message contains `text`. */
static void expect_error(tb_case *c, const char *alg, const char *where,
                         const char *text)
{
    pflref_error err;
    tb_run_error(c, alg, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, where);
    ck_assert_msg(strstr(err.message, text) != NULL, "message: %s",
                  err.message);
    tb_free(c);
}

/* τ_v larger than a participation's steps, fine-tuning without η_ft, and a
 * missing τ_v are refused before anything runs, naming the field. */
START_TEST(test_errors)
{
    tb_case *c = a_case(2, 0);
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    c->hyper.tau_v = 3;
    expect_error(c, "fedalt", "schedule.rounds[0].batches[0]", "tau_v = 3");
    c = a_case(2, 1);
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    expect_error(c, "fedsim", "algorithm.hyperparameters.eta_ft", "eta_ft");
    c = a_case(2, 0);
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    expect_error(c, "fedalt", "algorithm.hyperparameters.tau_v", "tau_v");
    /* pfl.weights = batches with a round of no batches at all */
    c = a_problem();
    tb_round(c, "0 1", "", "");
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    c->hyper.pfl.weights = PFLREF_PFL_WEIGHTS_BATCHES;
    expect_error(c, "fedsim", "schedule.rounds[0].batches", "none");
}
END_TEST

/* Lemma 21 of Pillutla et al. (seed 002_…): for a uniformly random m-subset
 * S of [n], E[(1/m) Σ_S a_i] = ā and E‖(1/m) Σ_S a_i − ā‖² =
 * (σ²/m)(n − m)/(n − 1), σ² = (1/n) Σ ‖a_i − ā‖², by enumeration of every
 * subset: the notes' a = (1, 2, 4, 7), m = 2 gives 7/4 (21/8 with
 * replacement), then every m for random a with n ≤ 9 in ℝ³. */
static void lemma21(const double *a, size_t n, size_t dim, size_t m,
                    double *mean_err, double *var_enum, double *var_formula)
{
    double abar[8] = {0}, s2 = 0.0, var = 0.0, mean[8] = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < dim; c++)
            abar[c] += a[i * dim + c] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < dim; c++)
            s2 += (a[i * dim + c] - abar[c]) * (a[i * dim + c] - abar[c]) /
                  (double)n;
    size_t count = 0;
    for (unsigned long S = 0; S < (1ul << n); S++) {
        if ((size_t)__builtin_popcountl(S) != m)
            continue;
        double est[8] = {0}, d2 = 0.0;
        for (size_t i = 0; i < n; i++)
            if (S >> i & 1ul)
                for (size_t c = 0; c < dim; c++)
                    est[c] += a[i * dim + c] / (double)m;
        for (size_t c = 0; c < dim; c++) {
            d2 += (est[c] - abar[c]) * (est[c] - abar[c]);
            mean[c] += est[c];
        }
        var += d2;
        count++;
    }
    *mean_err = 0.0;
    for (size_t c = 0; c < dim; c++)
        *mean_err = fmax(*mean_err, fabs(mean[c] / (double)count - abar[c]));
    *var_enum = var / (double)count;
    *var_formula = s2 / (double)m * (double)(n - m) / (double)(n - 1);
}

START_TEST(test_lemma21)
{
    /* req: sampling.lemma21.var, sampling.lemma21.incl */
    const double a[] = {1, 2, 4, 7};
    double me, ve, vf;
    lemma21(a, 4, 1, 2, &me, &ve, &vf);
    printf("Lemma 21, a = (1, 2, 4, 7), m = 2: enumeration %.17g, formula "
           "%.17g (7/4), with replacement %.17g (21/8)\n", ve, vf,
           21.0 / 8.0);
    ck_assert_double_eq(me, 0.0);
    ck_assert_double_eq(ve, 1.75);
    ck_assert_double_eq(vf, 1.75);
    /* random instances: n = 2..9, every m, 3-dimensional a_i */
    unsigned long x = 12345;
    size_t instances = 0;
    for (size_t n = 2; n <= 9; n++)
        for (size_t m = 1; m <= n; m++) {
            double b[27];
            for (size_t j = 0; j < 3 * n; j++) {
                x = x * 6364136223846793005ul + 1442695040888963407ul;
                b[j] = (double)(x >> 11) / 9007199254740992.0 * 4.0 - 2.0;
            }
            lemma21(b, n, 3, m, &me, &ve, &vf);
            ck_assert_msg(me < 1e-14 && fabs(ve - vf) <= 1e-13 * (1 + vf),
                          "n = %zu, m = %zu: E error %g, Var %.17g vs %.17g",
                          n, m, me, ve, vf);
            instances++;
        }
    printf("Lemma 21: %zu random instances (n = 2..9, every m) agree\n",
           instances);
}
END_TEST

Suite *fedalt_suite(void)
{
    Suite *s = suite_create("fedalt");
    TCase *tc = tcase_create("fedalt");
    tcase_add_test(tc, test_notes_a_objective);
    tcase_add_test(tc, test_empty_personal_is_fedavg);
    tcase_add_test(tc, test_fedsim_gamma_u0_is_finetune);
    tcase_add_test(tc, test_state);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_lemma21);
    suite_add_tcase(s, tc);
    return s;
}
