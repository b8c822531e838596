/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_interp.c: model interpolation
 * (ref/algorithms/interp.c).
 *
 * Expected values: the notes' §5.2(g) example (h = 4, w = 1: α = 0 → 1,
 * 1/4 → 1.75, 1/2 → 2.5, 1 → 4), set up with the quadratic clients
 * f_1 = ½(x − 4)², f_2 = ½(x + 2)², η = 1 (one step lands on the
 * minimiser), where every number is dyadic and compared with ==; the grid
 * choice against a brute-force recomputation written out here (the mean
 * ½(x·v̄ − y)² over the selection set, the argmin scanned upward).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* The notes' clients f_1 = ½(x − 4)², f_2 = ½(x + 2)², one FedAvg round
 * of one step, one post step per client. */
static tb_case *notes_case(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    tb_round(c, "0 1", "0", "0");
    tb_post(c, "0", "0");
    return c;
}

/* A linear problem (d = 2, bias, half_squared) with train, test and
 * validation data, high-entropy values; η = 0.3. */
static tb_case *lin_problem(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){-0.775, 1.409, 0.236});
    tb_test(c, 0, 4,
            (const double[]){0.35, -0.2, 1.1, 0.45, -0.6, 0.9, 0.05, -1.3},
            (const double[]){0.3, -0.41, 1.12, -0.9});
    tb_val(c, 0, 2, (const double[]){0.72, 0.1, -1.05, 0.33},
           (const double[]){-0.2, 1.3});
    tb_train(c, 1, 2, (const double[]){-1.426, 0.357, 0.689, -0.942},
             (const double[]){0.518, -1.263});
    tb_test(c, 1, 3, (const double[]){0.2, 0.2, -0.9, 1.4, 1.6, -0.3},
            (const double[]){-0.15, 0.95, -1.4});
    tb_val(c, 1, 3, (const double[]){0.4, -0.85, 1.2, 0.6, -0.3, -0.2},
           (const double[]){-1.1, -0.7, 0.45});
    tb_train(c, 2, 4,
             (const double[]){0.3, 0.8, -0.5, -0.25, 1.25, -0.7, 0.15, 0.05},
             (const double[]){1.2, -0.6, 0.3, 0.1});
    tb_test(c, 2, 2, (const double[]){-0.4, 0.6, 0.9, 0.9},
            (const double[]){0.8, 0.25});
    tb_val(c, 2, 1, (const double[]){0.6, -0.45}, (const double[]){0.05});
    c->hyper.eta = 0.3;
    return c;
}

/* The linear problem, 3 generated rounds of 2 steps, 6 post steps. */
static tb_case *lin_case(void)
{
    tb_case *c = lin_problem();
    tb_generate(c, 3, 2, 0);
    tb_generate_post(c, 6, 0);
    return c;
}

/* A sink that keeps the NOTE records of phase "interp". */
#define MAX_NOTES 512
typedef struct {
    size_t n;
    struct {
        char name[16];
        long client, step;
        double value;
    } r[MAX_NOTES];
} notes;

static void keep_notes(void *ctx, const pflref_event *ev)
{
    notes *nt = ctx;
    if (ev->kind != PFLREF_EV_NOTE || strcmp(ev->phase, "interp") != 0 ||
        ev->len != 1)
        return;
    ck_assert(nt->n < MAX_NOTES);
    snprintf(nt->r[nt->n].name, sizeof nt->r[nt->n].name, "%s", ev->name);
    nt->r[nt->n].client = ev->client;
    nt->r[nt->n].step = ev->step;
    nt->r[nt->n].value = ev->value[0];
    nt->n++;
}

/* The value of note `name` of client i at step j; fails when absent. */
static double note(const notes *nt, const char *name, long i, long j)
{
    for (size_t q = 0; q < nt->n; q++)
        if (strcmp(nt->r[q].name, name) == 0 && nt->r[q].client == i &&
            nt->r[q].step == j)
            return nt->r[q].value;
    ck_abort_msg("no note %s for client %ld, step %ld", name, i, j);
    return NAN;
}

/* Notes §5.2(g): w = 1, h_1 = 4, so v̄_1 = 1, 1.75, 2.5, 4 for α = 0, ¼,
 * ½, 1; the evaluation's personalized loss is that of v̄_1:
 * ½(v̄ − 4)² on client 1 and ½(v̄ + 2)² on client 2 (h_2 = −2). */
START_TEST(test_notes_5_2g)
{
    /* req: interp.eq1, interp.eq2, interp.eq3 */
    const double alphas[4] = {0.0, 0.25, 0.5, 1.0};
    const double vbar[4] = {1.0, 1.75, 2.5, 4.0};
    for (int a = 0; a < 4; a++) {
        tb_case *c = notes_case();
        c->hyper.eta = 1.0;
        c->hyper.interp.alpha = alphas[a];
        c->hyper.fedavg.weights = PFLREF_FEDAVG_WEIGHTS_UNIFORM;
        pflref_run_result *res = tb_run(c, "interp", NULL);
        ck_assert_double_eq(res->w[0], 1.0);
        ck_assert_double_eq(res->v[0], 4.0);   /* h_1 */
        ck_assert_double_eq(res->v[1], -2.0);  /* h_2 */
        ck_assert_double_eq(res->alpha[0], alphas[a]);
        ck_assert_double_eq(res->alpha[1], alphas[a]);
        ck_assert_str_eq(res->eval[2].label, "personalized");
        const double d1 = vbar[a] - 4.0;
        const double v2 = alphas[a] * -2.0 + (1.0 - alphas[a]) * 1.0;
        ck_assert_double_eq(res->eval[2].train[0].loss, 0.5 * d1 * d1);
        ck_assert_double_eq(res->eval[2].train[1].loss,
                            0.5 * (v2 + 2.0) * (v2 + 2.0));
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* α = 0 is the global model and α = 1 the local one: the personalized
 * metrics equal theirs bit for bit, on train and test, per client and in
 * the summaries. */
START_TEST(test_endpoints)
{
    /* req: interp.eq3 */
    for (int a = 0; a <= 1; a++) {
        tb_case *c = lin_case();
        c->hyper.interp.alpha = a;
        pflref_run_result *res = tb_run(c, "interp", NULL);
        const pflref_eval_result *same = &res->eval[a == 0 ? 0 : 1];
        const pflref_eval_result *mix = &res->eval[2];
        ck_assert_str_eq(same->label, a == 0 ? "global" : "local");
        for (size_t i = 0; i < 3; i++) {
            ck_assert_msg(mix->train[i].loss == same->train[i].loss &&
                              mix->test[i].loss == same->test[i].loss &&
                              mix->test[i].mse == same->test[i].mse,
                          "alpha = %d, client %zu: personalized %.17g, %s "
                          "%.17g", a, i, mix->test[i].loss, same->label,
                          same->test[i].loss);
        }
        ck_assert(mix->test_mse.mean == same->test_mse.mean);
        ck_assert(mix->test_loss.worst == same->test_loss.worst);
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* ½(x·v̄ − y)² averaged over a data set given inline (d = 2, bias). */
static double brute_loss(const double *vbar, const double *X, const double *y,
                         size_t n)
{
    double sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        const double r = X[2 * j] * vbar[0] + X[2 * j + 1] * vbar[1] +
                         vbar[2] - y[j];
        sum += 0.5 * r * r;
    }
    return sum / (double)n;
}

/* per_client_grid with G = 7 (grid points that are not dyadic): every
 * selection loss and the chosen α_i agree with a recomputation from the
 * final w and h_i; the personalized test loss is the grid's test loss at
 * the chosen point. */
START_TEST(test_grid_brute_force)
{
    /* req: interp.eq4 */
    static const double Xv[3][6] = {{0.72, 0.1, -1.05, 0.33},
                                    {0.4, -0.85, 1.2, 0.6, -0.3, -0.2},
                                    {0.6, -0.45}};
    static const double yv[3][3] = {{-0.2, 1.3}, {-1.1, -0.7, 0.45}, {0.05}};
    const size_t nv[3] = {2, 3, 1};
    const size_t G = 7;
    tb_case *c = lin_case();
    c->hyper.interp.grid = G;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tb_run(c, "interp", &tr);
    for (size_t i = 0; i < 3; i++) {
        const double *h = res->v + i * res->P;
        double best = INFINITY, alpha_best = -1.0;
        size_t j_best = 0;
        for (size_t j = 0; j <= G; j++) {
            const double a = (double)j / (double)G;
            double vbar[3];
            for (size_t p = 0; p < 3; p++)
                vbar[p] = a * h[p] + (1.0 - a) * res->w[p];
            const double L = brute_loss(vbar, Xv[i], yv[i], nv[i]);
            const double got = note(&nt, "select_loss", (long)i, (long)j);
            ck_assert_msg(fabs(got - L) <= 1e-15 * (1.0 + L),
                          "client %zu, j = %zu: select_loss %.17g, brute "
                          "force %.17g", i, j, got, L);
            ck_assert(note(&nt, "alpha_j", (long)i, (long)j) == a);
            if (L < best) {
                best = L;
                alpha_best = a;
                j_best = j;
            }
        }
        ck_assert_msg(res->alpha[i] == alpha_best, "client %zu: alpha %.17g, "
                      "brute force %.17g", i, res->alpha[i], alpha_best);
        ck_assert(note(&nt, "alpha", (long)i, -1) == res->alpha[i]);
        ck_assert(res->eval[2].test[i].loss ==
                  note(&nt, "test_loss", (long)i, (long)j_best));
    }
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Ties go to the smaller α.  (a) Zero rounds and no post steps: h_i = w =
 * w⁰, every grid point has the same loss, and α_i = 0.  (b) An exact tie
 * between α = ¼ and ½ (dyadic data; the validation target at the parabola's
 * vertex α* = 3/8; golden/interp/make_worked.py builds the same case):
 * w = 77/64, h = 109/32, y_val = 77/64 + (3/8)(141/64) = 2.029296875. */
START_TEST(test_ties_to_smaller)
{
    /* req: interp.eq4 */
    const pflref_model lin = tb_model(PFLREF_MODEL_LINEAR,
                                      PFLREF_LOSS_HALF_SQUARED, 1, 1, 0, 0);
    tb_case *c = tb_new(&lin, 2);
    tb_train(c, 0, 2, (const double[]){1.0, 2.0}, (const double[]){4.0, 7.0});
    tb_val(c, 0, 1, (const double[]){1.0}, (const double[]){2.029296875});
    tb_train(c, 1, 2, (const double[]){1.0, -1.0}, (const double[]){-2.0, 1.0});
    tb_val(c, 1, 1, (const double[]){1.0}, (const double[]){-0.625});
    tb_w0(c, (const double[]){0.5});
    c->hyper.eta = 0.5;
    c->hyper.interp.grid = 4;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    tb_round(c, "0 1", "0 1 | 0 1", "0 1 | 0 1");
    tb_post(c, "0 1 | 0 1", "0 1 | 0 1");
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tb_run(c, "interp", &tr);
    ck_assert_double_eq(res->w[0], 77.0 / 64.0);
    ck_assert_double_eq(res->v[0], 109.0 / 32.0);
    ck_assert(note(&nt, "select_loss", 0, 1) == note(&nt, "select_loss", 0, 2));
    ck_assert(note(&nt, "select_loss", 0, 1) < note(&nt, "select_loss", 0, 0));
    ck_assert(note(&nt, "select_loss", 0, 1) < note(&nt, "select_loss", 0, 3));
    ck_assert_double_eq(res->alpha[0], 0.25);
    pflref_run_result_free(res);
    tb_free(c);

    /* (a) nothing trained: a flat curve */
    c = lin_problem();
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    tb_post(c, "", "", "");
    res = tb_run(c, "interp", NULL);
    for (size_t i = 0; i < 3; i++)
        ck_assert_double_eq(res->alpha[i], 0.0);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* interp.select = test reads α off the test curve (the exercise): the
 * chosen point has the lowest test loss of the grid, and the personalized
 * test loss is that minimum. */
START_TEST(test_select_on_test)
{
    tb_case *c = lin_case();
    c->hyper.interp.grid = 5;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    c->hyper.interp.select = PFLREF_INTERP_SELECT_TEST;
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tb_run(c, "interp", &tr);
    for (size_t i = 0; i < 3; i++) {
        double lowest = INFINITY;
        for (long j = 0; j <= 5; j++) {
            const double tl = note(&nt, "test_loss", (long)i, j);
            ck_assert(tl == note(&nt, "select_loss", (long)i, j));
            lowest = tl < lowest ? tl : lowest;
        }
        ck_assert(res->eval[2].test[i].loss == lowest);
        ck_assert(res->eval[2].test[i].loss <= res->eval[0].test[i].loss);
        ck_assert(res->eval[2].test[i].loss <= res->eval[1].test[i].loss);
    }
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* The run of c (freed here) fails with EINVAL at `where`, and the message
 * contains `phrase`. */
static void expect_run_error(tb_case *c, const char *where,
                             const char *phrase)
{
    pflref_error err;
    tb_run_error(c, "interp", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, where);
    ck_assert_msg(strstr(err.message, phrase) != NULL, "message: %s",
                  err.message);
    tb_free(c);
}

/* One client of a linear model (d = 2, squared loss) with X = (1, 2),
 * y = 1, and test data X_test = (1, 0), y_test = 2 (test) or a validation
 * split of the same values (!test); one round of one step, one post step;
 * η = 0.1. */
static tb_case *one_client(int test)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                    2, 1, 0, 0);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 1, (const double[]){1, 2}, (const double[]){1});
    if (test)
        tb_test(c, 0, 1, (const double[]){1, 0}, (const double[]){2});
    else
        tb_val(c, 0, 1, (const double[]){1, 0}, (const double[]){2});
    c->hyper.eta = 0.1;
    tb_generate(c, 1, 1, 0);
    tb_generate_post(c, 1, 0);
    return c;
}

/* Errors name the field. */
START_TEST(test_errors)
{
    /* select = validation without a validation split: suggest test */
    tb_case *c = one_client(1);
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    expect_run_error(c, "algorithm.switches.interp.select",
                     "interp.select = test");
    /* select = test without test data */
    c = one_client(0);
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    c->hyper.interp.select = PFLREF_INTERP_SELECT_TEST;
    expect_run_error(c, "algorithm.switches.interp.select", "X_test");
    /* fixed without α, α above 1, α given to the grid */
    c = notes_case();
    c->hyper.eta = 1.0;
    expect_run_error(c, "algorithm.hyperparameters.alpha", "needs");
    c = notes_case();
    c->hyper.eta = 1.0;
    c->hyper.interp.alpha = 1.25;
    expect_run_error(c, "algorithm.hyperparameters.alpha", "[0, 1]");
    c = one_client(1);
    c->hyper.interp.alpha = 0.5;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    c->hyper.interp.select = PFLREF_INTERP_SELECT_TEST;
    expect_run_error(c, "algorithm.hyperparameters.alpha", "ignored");
    /* no post phase: the local models have no schedule */
    c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    tb_round(c, "0 1", "0", "0");
    c->hyper.eta = 1.0;
    c->hyper.interp.alpha = 0.5;
    expect_run_error(c, "schedule.post", "post");
    /* eta is required */
    c = notes_case();
    c->hyper.interp.alpha = 0.5;
    expect_run_error(c, "algorithm.hyperparameters.eta", "eta");
}
END_TEST

/* Same case, same result: w, h_i, α_i and every note bit for bit. */
START_TEST(test_deterministic)
{
    tb_case *c = lin_case();
    c->hyper.interp.grid = 9;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    static notes n1, n2;
    n1.n = n2.n = 0;
    const pflref_trace t1 = {keep_notes, &n1}, t2 = {keep_notes, &n2};
    pflref_run_result *r1 = tb_run(c, "interp", &t1);
    pflref_run_result *r2 = tb_run(c, "interp", &t2);
    ck_assert(memcmp(r1->w, r2->w, r1->P * sizeof *r1->w) == 0);
    ck_assert(memcmp(r1->v, r2->v, r1->N * r1->P * sizeof *r1->v) == 0);
    ck_assert(memcmp(r1->alpha, r2->alpha, r1->N * sizeof *r1->alpha) == 0);
    ck_assert_uint_eq(n1.n, n2.n);
    ck_assert_uint_gt(n1.n, 3 * 10 * 4);  /* alpha_j, select/test loss/mse */
    for (size_t q = 0; q < n1.n; q++)
        ck_assert(n1.r[q].value == n2.r[q].value);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    tb_free(c);
}
END_TEST

/* The golden vectors of golden/interp/ reproduce. */
START_TEST(test_golden)
{
    /* req: interp.eq5 */
    static const char *const files[] = {
        "golden/interp/worked-notes-5.2g-alpha-0.json",
        "golden/interp/worked-notes-5.2g-alpha-1-4.json",
        "golden/interp/worked-notes-5.2g-alpha-1-2.json",
        "golden/interp/worked-notes-5.2g-alpha-1.json",
        "golden/interp/worked-grid-validation-linear.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        tu_assert_golden(files[f]);
    }
}
END_TEST

Suite *interp_suite(void)
{
    Suite *s = suite_create("interp");
    TCase *tc = tcase_create("interp");
    tcase_add_test(tc, test_notes_5_2g);
    tcase_add_test(tc, test_endpoints);
    tcase_add_test(tc, test_grid_brute_force);
    tcase_add_test(tc, test_ties_to_smaller);
    tcase_add_test(tc, test_select_on_test);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden);
    suite_add_tcase(s, tc);
    return s;
}
