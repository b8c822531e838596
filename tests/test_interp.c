/* tests/test_interp.c: model interpolation (ref/interp.c).
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

static pflref_spec *make_spec(const char *model, const char *clients,
                              const char *hyper, const char *switches,
                              const char *schedule)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s},"
             " \"algorithm\": {\"name\": \"interp\", \"hyperparameters\": {%s},"
             " \"switches\": {%s}},"
             " \"schedule\": %s}",
             model, clients, hyper, switches, schedule);
    return tu_spec(text);
}

static const char *const QUAD = "{\"kind\": \"quadratic\", \"d\": 1}";
static const char *const NOTES_CLIENTS =
    "[{\"a\": [1], \"c\": [4]}, {\"a\": [1], \"c\": [-2]}]";
/* one FedAvg round of one step, one post step per client */
static const char *const ONE_STEP =
    "{\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}],"
    " \"post\": [[[0]], [[0]]]}";

/* A linear problem (d = 2, bias, half_squared) with train, test and
 * validation data, high-entropy values. */
static const char *const LIN =
    "{\"kind\": \"linear\", \"d\": 2, \"loss\": \"half_squared\", "
    "\"bias\": true}";
static const char *const LIN_CLIENTS =
    "[{\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
    "  \"y\": [-0.775, 1.409, 0.236],"
    "  \"X_test\": [[0.35, -0.2], [1.1, 0.45], [-0.6, 0.9], [0.05, -1.3]],"
    "  \"y_test\": [0.3, -0.41, 1.12, -0.9],"
    "  \"X_val\": [[0.72, 0.1], [-1.05, 0.33]], \"y_val\": [-0.2, 1.3]},"
    " {\"X\": [[-1.426, 0.357], [0.689, -0.942]], \"y\": [0.518, -1.263],"
    "  \"X_test\": [[0.2, 0.2], [-0.9, 1.4], [1.6, -0.3]],"
    "  \"y_test\": [-0.15, 0.95, -1.4],"
    "  \"X_val\": [[0.4, -0.85], [1.2, 0.6], [-0.3, -0.2]],"
    "  \"y_val\": [-1.1, -0.7, 0.45]},"
    " {\"X\": [[0.3, 0.8], [-0.5, -0.25], [1.25, -0.7], [0.15, 0.05]],"
    "  \"y\": [1.2, -0.6, 0.3, 0.1],"
    "  \"X_test\": [[-0.4, 0.6], [0.9, 0.9]], \"y_test\": [0.8, 0.25],"
    "  \"X_val\": [[0.6, -0.45]], \"y_val\": [0.05]}]";
static const char *const LIN_SCHED =
    "{\"kind\": \"generate\", \"rounds\": 3, \"local\": {\"steps\": 2},"
    " \"post\": {\"steps\": 6}}";

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
    const double alphas[4] = {0.0, 0.25, 0.5, 1.0};
    const double vbar[4] = {1.0, 1.75, 2.5, 4.0};
    for (int a = 0; a < 4; a++) {
        char hyper[128];
        snprintf(hyper, sizeof hyper, "\"eta\": 1, \"alpha\": %g", alphas[a]);
        pflref_spec *spec = make_spec(QUAD, NOTES_CLIENTS, hyper,
                                      "\"fedavg.weights\": \"uniform\"",
                                      ONE_STEP);
        pflref_run_result *res = tu_run(spec, NULL);
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
        pflref_spec_free(spec);
    }
}
END_TEST

/* α = 0 is the global model and α = 1 the local one: the personalized
 * metrics equal theirs bit for bit, on train and test, per client and in
 * the summaries. */
START_TEST(test_endpoints)
{
    for (int a = 0; a <= 1; a++) {
        char hyper[64];
        snprintf(hyper, sizeof hyper, "\"eta\": 0.3, \"alpha\": %d", a);
        pflref_spec *spec = make_spec(LIN, LIN_CLIENTS, hyper, "", LIN_SCHED);
        pflref_run_result *res = tu_run(spec, NULL);
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
        pflref_spec_free(spec);
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
    static const double Xv[3][6] = {{0.72, 0.1, -1.05, 0.33},
                                    {0.4, -0.85, 1.2, 0.6, -0.3, -0.2},
                                    {0.6, -0.45}};
    static const double yv[3][3] = {{-0.2, 1.3}, {-1.1, -0.7, 0.45}, {0.05}};
    const size_t nv[3] = {2, 3, 1};
    const size_t G = 7;
    pflref_spec *spec = make_spec(
        LIN, LIN_CLIENTS, "\"eta\": 0.3, \"interp.grid\": 7",
        "\"interp.alpha\": \"per_client_grid\"", LIN_SCHED);
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tu_run(spec, &tr);
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
    pflref_spec_free(spec);
}
END_TEST

/* Ties go to the smaller α.  (a) Zero rounds and no post steps: h_i = w =
 * w⁰, every grid point has the same loss, and α_i = 0.  (b) An exact tie
 * between α = ¼ and ½ (dyadic data; the validation target at the parabola's
 * vertex α* = 3/8; golden/interp/make_worked.py builds the same case):
 * w = 77/64, h = 109/32, y_val = 77/64 + (3/8)(141/64) = 2.029296875. */
START_TEST(test_ties_to_smaller)
{
    const char *clients =
        "[{\"X\": [[1.0], [2.0]], \"y\": [4.0, 7.0],"
        "  \"X_val\": [[1.0]], \"y_val\": [2.029296875]},"
        " {\"X\": [[1.0], [-1.0]], \"y\": [-2.0, 1.0],"
        "  \"X_val\": [[1.0]], \"y_val\": [-0.625]}]";
    const char *lin = "{\"kind\": \"linear\", \"d\": 1, \"loss\": "
                      "\"half_squared\", \"bias\": false}";
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s},"
             " \"init\": {\"kind\": \"given\", \"w\": [0.5]},"
             " \"algorithm\": {\"name\": \"interp\", \"hyperparameters\":"
             " {\"eta\": 0.5, \"interp.grid\": 4}, \"switches\":"
             " {\"interp.alpha\": \"per_client_grid\"}},"
             " \"schedule\": {\"kind\": \"given\", \"rounds\": ["
             " {\"clients\": [0, 1], \"batches\": [[[0, 1], [0, 1]], [[0, 1],"
             " [0, 1]]]}], \"post\": [[[0, 1], [0, 1]], [[0, 1], [0, 1]]]}}",
             lin, clients);
    pflref_spec *spec = tu_spec(text);
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tu_run(spec, &tr);
    ck_assert_double_eq(res->w[0], 77.0 / 64.0);
    ck_assert_double_eq(res->v[0], 109.0 / 32.0);
    ck_assert(note(&nt, "select_loss", 0, 1) == note(&nt, "select_loss", 0, 2));
    ck_assert(note(&nt, "select_loss", 0, 1) < note(&nt, "select_loss", 0, 0));
    ck_assert(note(&nt, "select_loss", 0, 1) < note(&nt, "select_loss", 0, 3));
    ck_assert_double_eq(res->alpha[0], 0.25);
    pflref_run_result_free(res);
    pflref_spec_free(spec);

    /* (a) nothing trained: a flat curve */
    spec = make_spec(LIN, LIN_CLIENTS, "\"eta\": 0.3",
                     "\"interp.alpha\": \"per_client_grid\"",
                     "{\"kind\": \"given\", \"rounds\": [],"
                     " \"post\": [[], [], []]}");
    res = tu_run(spec, NULL);
    for (size_t i = 0; i < 3; i++)
        ck_assert_double_eq(res->alpha[i], 0.0);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* interp.select = test reads α off the test curve (the exercise): the
 * chosen point has the lowest test loss of the grid, and the personalized
 * test loss is that minimum. */
START_TEST(test_select_on_test)
{
    pflref_spec *spec = make_spec(
        LIN, LIN_CLIENTS, "\"eta\": 0.3, \"interp.grid\": 5",
        "\"interp.alpha\": \"per_client_grid\", \"interp.select\": \"test\"",
        LIN_SCHED);
    static notes nt;
    nt.n = 0;
    const pflref_trace tr = {keep_notes, &nt};
    pflref_run_result *res = tu_run(spec, &tr);
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
    pflref_spec_free(spec);
}
END_TEST

/* Errors name the field. */
static void expect_run_error(const char *model, const char *clients,
                             const char *hyper, const char *switches,
                             const char *sched, const char *where,
                             const char *phrase)
{
    pflref_spec *spec = make_spec(model, clients, hyper, switches, sched);
    pflref_error err;
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, where);
    ck_assert_msg(strstr(err.message, phrase) != NULL, "message: %s",
                  err.message);
    pflref_spec_free(spec);
}

START_TEST(test_errors)
{
    const char *no_val =
        "[{\"X\": [[1, 2]], \"y\": [1], \"X_test\": [[1, 0]], \"y_test\": [2]}]";
    const char *no_test =
        "[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 0]], \"y_val\": [2]}]";
    const char *lin = "{\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"}";
    const char *sched = "{\"kind\": \"generate\", \"rounds\": 1,"
                        " \"local\": {\"steps\": 1}, \"post\": {\"steps\": 1}}";
    /* select = validation without a validation split: suggest test */
    expect_run_error(lin, no_val, "\"eta\": 0.1",
                     "\"interp.alpha\": \"per_client_grid\"", sched,
                     "algorithm.switches.interp.select", "interp.select = test");
    /* select = test without test data */
    expect_run_error(lin, no_test, "\"eta\": 0.1",
                     "\"interp.alpha\": \"per_client_grid\", "
                     "\"interp.select\": \"test\"", sched,
                     "algorithm.switches.interp.select", "X_test");
    /* fixed without α, α above 1, α given to the grid */
    expect_run_error(QUAD, NOTES_CLIENTS, "\"eta\": 1", "", ONE_STEP,
                     "algorithm.hyperparameters.alpha", "needs");
    expect_run_error(QUAD, NOTES_CLIENTS, "\"eta\": 1, \"alpha\": 1.25", "",
                     ONE_STEP, "algorithm.hyperparameters.alpha", "[0, 1]");
    expect_run_error(lin, no_val, "\"eta\": 0.1, \"alpha\": 0.5",
                     "\"interp.alpha\": \"per_client_grid\", "
                     "\"interp.select\": \"test\"", sched,
                     "algorithm.hyperparameters.alpha", "ignored");
    /* no post phase: the local models have no schedule (refused when the
     * spec is read) */
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s}, \"algorithm\": {\"name\":"
             " \"interp\", \"hyperparameters\": {\"eta\": 1, \"alpha\": 0.5}},"
             " \"schedule\": {\"kind\": \"given\", \"rounds\": ["
             " {\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}]}}",
             QUAD, NOTES_CLIENTS);
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.post");
    /* eta is required */
    expect_run_error(QUAD, NOTES_CLIENTS, "\"alpha\": 0.5", "", ONE_STEP,
                     "algorithm.hyperparameters.eta", "eta");
}
END_TEST

/* The validation split in the spec: read errors name X_val / y_val. */
START_TEST(test_val_parse_errors)
{
    static const struct {
        const char *clients;
        const char *where;
    } cases[] = {
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]]}]",
         "problem.clients[0].y_val"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"y_val\": [1]}]",
         "problem.clients[0].X_val"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]], \"y_val\": [1]},"
         " {\"X\": [[1, 2]], \"y\": [1]}]", "problem.clients[1]"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2, 3]],"
         " \"y_val\": [1]}]", "problem.clients[0].X_val[0]"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2], [3, 4]],"
         " \"y_val\": [1]}]", "problem.clients[0].y_val"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                 "\"linear\", \"d\": 2, \"loss\": \"squared\"},"
                 " \"problem\": {\"clients\": %s},"
                 " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
                 " {\"eta\": 0.1}}, \"schedule\": {\"kind\": \"generate\","
                 " \"rounds\": 1}}", cases[c].clients);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
        ck_assert_ptr_null(spec);
        ck_assert_msg(strcmp(err.where, cases[c].where) == 0,
                      "case %zu: where %s, expected %s (%s)", c, err.where,
                      cases[c].where, err.message);
    }
    /* a classifier's validation label is checked like y: the path says
     * y_val, not y */
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(
        tu_parse("{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                 "\"softmax\", \"d\": 2, \"k\": 3}, \"problem\": {\"clients\":"
                 " [{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]],"
                 " \"y_val\": [2.5]}]}, \"algorithm\": {\"name\": \"fedavg\","
                 " \"hyperparameters\": {\"eta\": 0.1}}, \"schedule\":"
                 " {\"kind\": \"generate\", \"rounds\": 1}}", &spec, &err),
        PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].y_val[0]");
}
END_TEST

/* Same spec, same result: w, h_i, α_i and every note bit for bit. */
START_TEST(test_deterministic)
{
    pflref_spec *spec = make_spec(
        LIN, LIN_CLIENTS, "\"eta\": 0.3, \"interp.grid\": 9",
        "\"interp.alpha\": \"per_client_grid\"", LIN_SCHED);
    static notes n1, n2;
    n1.n = n2.n = 0;
    const pflref_trace t1 = {keep_notes, &n1}, t2 = {keep_notes, &n2};
    pflref_run_result *r1 = tu_run(spec, &t1), *r2 = tu_run(spec, &t2);
    ck_assert(memcmp(r1->w, r2->w, r1->P * sizeof *r1->w) == 0);
    ck_assert(memcmp(r1->v, r2->v, r1->N * r1->P * sizeof *r1->v) == 0);
    ck_assert(memcmp(r1->alpha, r2->alpha, r1->N * sizeof *r1->alpha) == 0);
    ck_assert_uint_eq(n1.n, n2.n);
    ck_assert_uint_gt(n1.n, 3 * 10 * 4);  /* alpha_j, select/test loss/mse */
    for (size_t q = 0; q < n1.n; q++)
        ck_assert(n1.r[q].value == n2.r[q].value);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    pflref_spec_free(spec);
}
END_TEST

/* The golden vectors of golden/interp/ reproduce. */
START_TEST(test_golden)
{
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
    tcase_add_test(tc, test_val_parse_errors);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden);
    suite_add_tcase(s, tc);
    return s;
}
