/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_scaffold.c: SCAFFOLD (ref/algorithms/scaffold.c).
 *
 * The hand case: quadratic clients f_0(θ) = (θ − 1)² (a = 2, c = 1) and
 * f_1(θ) = 2(θ + ½)² (a = 4, c = −½), x⁰ = 0, η_l = ¼, η_g = 2, N = 2.
 * Round 0, S = {0}, K = 2 (c = c_0 = 0):
 *   y: 0 → 0 − ¼(−2) = ½ → ½ − ¼(−1) = ¾
 *   (ii) c_0⁺ = 0 − 0 + (0 − ¾)/(2·¼) = −3/2   (the mean of −2, −1)
 *   (i)  c_0⁺ = ∇f_0(0) = −2
 *   x ← 0 + 2·¾ = 3/2;  c ← 0 + ½ c_0⁺ = −¾ (ii) or −1 (i)
 * Round 1, S = {1}, K = 1, c_1 = 0 (never sampled), option II:
 *   y: 3/2 − ¼(8 − 0 − ¾) = −5/16
 *   c_1⁺ = 0 + ¾ + (3/2 + 5/16)/¼ = 8;  x ← 3/2 + 2(−29/16) = −17/8;
 *   c ← −¾ + ½·8 = 13/4
 * Every value is a binary fraction: the run must give them exactly.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/scaffold/worked-quadratic-ii.json",
    "golden/scaffold/worked-linear-ii.json",
    "golden/scaffold/worked-linear-i.json",
    "golden/scaffold/worked-linear-ii-decay.json",
    "golden/scaffold/worked-linear-pfllib.json",
    "golden/scaffold/worked-linear-ii-momentum.json",
    "golden/scaffold/worked-linear-ii-controls.json",
    "golden/scaffold/worked-linear-ii-controls-mean.json",
};

START_TEST(test_worked_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The hand case's problem and its two rounds (above). */
static tb_case *hand_case(int option)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){2}, (const double[]){1}, 3);
    tb_quad(c, 1, (const double[]){4}, (const double[]){-0.5}, 5);
    tb_w0(c, (const double[]){0});
    c->hyper.eta = 0.25;
    c->hyper.scaffold.eta_g = 2.0;
    c->hyper.scaffold.option = option;
    tb_round(c, "0", "0 | 0");
    tb_round(c, "1", "0");
    return c;
}

/* The values of the records of kind `kind` named `name` of round t
 * (client i, or −1: any), concatenated (at most cap). */
static size_t records_of(const pflref_trajectory *tj, pflref_event_kind kind,
                         const char *name, long t, long i, double *out,
                         size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *rc = &tj->records[k];
        if (rc->kind != kind || strcmp(rc->name, name) != 0 ||
            rc->round != t || (i >= 0 && rc->client != i))
            continue;
        for (size_t q = 0; q < rc->len && n < cap; q++)
            out[n++] = tj->values[rc->offset + q];
    }
    return n;
}

START_TEST(test_hand_option_ii)
{
    /* req: scaffold.alg1.l10, scaffold.alg1.l12, scaffold.alg1.l17 */
    /* req: scaffold.alg1.l1, scaffold.alg1.l3, scaffold.alg1.l4 */
    /* req: scaffold.alg1.l6, scaffold.alg1.l7, scaffold.alg1.l8 */
    /* req: scaffold.alg1.l9, scaffold.alg1.l11, scaffold.alg1.l13 */
    /* req: scaffold.alg1.l15, scaffold.alg1.l16, scaffold.alg1.l18 */
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "scaffold", &tj);
    double v[4];
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 0, 0, v, 4), 2);
    ck_assert(v[0] == 0.5 && v[1] == 0.75);
    ck_assert_uint_eq(
        records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 0, 0, v, 4), 1);
    ck_assert_msg(v[0] == -1.5, "c_0⁺ = %.17g, not −3/2", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "w", 0, -1, v, 4), 1);
    ck_assert_msg(v[0] == 1.5, "x = %.17g, not 3/2 (η_g Δx)", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "c", 0, -1, v, 4), 1);
    ck_assert_msg(v[0] == -0.75, "c = %.17g, not −3/4 ((|S|/N) Δc)", v[0]);
    /* req: scaffold.alg1.l2, scaffold.alg1.l14 */
    /* round 1: client 1 starts from c_1 = 0 and the new c */
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 1, 1, v, 4), 1);
    ck_assert_msg(v[0] == -0.3125, "y = %.17g, not −5/16", v[0]);
    ck_assert_uint_eq(
        records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 1, 1, v, 4), 1);
    ck_assert_msg(v[0] == 8.0, "c_1⁺ = %.17g, not 8", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "c", 1, -1, v, 4), 1);
    ck_assert_msg(v[0] == 3.25, "c = %.17g, not 13/4", v[0]);
    ck_assert_msg(res->w[0] == -2.125, "x = %.17g, not −17/8", res->w[0]);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

START_TEST(test_hand_option_i)
{
    /* req: scaffold.alg1.l12, scaffold.eq4 */
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_I);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "scaffold", &tj);
    double v[2];
    ck_assert_uint_eq(
        records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 0, 0, v, 2), 1);
    ck_assert_msg(v[0] == -2.0, "c_0⁺ = %.17g, not ∇f_0(x) = −2", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "c", 0, -1, v, 2), 1);
    ck_assert_msg(v[0] == -1.0, "c = %.17g, not −1", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "w", 0, -1, v, 2), 1);
    ck_assert(v[0] == 1.5);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* The preset sets the PFLlib reading; scaffold.c_lr = initial divides by
 * the undecayed η: with γ = ½ and one earlier round of decay, client 0's
 * second visit steps with η/2 but forms c_0⁺ with η. */
START_TEST(test_pfllib_c_lr)
{
    /* req: scaffold.alg1.l12, scaffold.preset.pfllib */
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){2}, (const double[]){1}, 3);
    tb_quad(c, 1, (const double[]){4}, (const double[]){-0.5}, 5);
    tb_w0(c, (const double[]){0});
    tb_preset(c, "scaffold", "pfllib");
    ck_assert_int_eq(c->hyper.scaffold.c_lr, PFLREF_SCAFFOLD_C_LR_INITIAL);
    ck_assert_int_eq(c->hyper.lr.count, PFLREF_LR_COUNT_TRAININGS);
    c->hyper.eta = 0.25;
    c->hyper.lr.schedule = PFLREF_LR_EXPONENTIAL;
    c->hyper.lr.gamma = 0.5;
    tb_round(c, "0", "0");
    tb_round(c, "0", "0");
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "scaffold", &tj);
    double x[1], y[1], ci[1], cc[1], ci0[1];
    records_of(&tj, PFLREF_EV_ROUND_BEGIN, "w", 1, -1, x, 1);
    records_of(&tj, PFLREF_EV_STEP, "y", 1, 0, y, 1);
    records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 1, 0, ci, 1);
    records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 0, 0, ci0, 1);
    records_of(&tj, PFLREF_EV_SERVER, "c", 0, -1, cc, 1);
    /* c_0⁺ = c_0 − c + (x − y)/(1 · η), η = ¼ undecayed */
    const double want = ci0[0] - cc[0] + (x[0] - y[0]) / 0.25;
    ck_assert_msg(ci[0] == want, "c_0⁺ = %.17g, want %.17g", ci[0], want);
    /* and the step itself took η/2: y = x − (η/2)(g − c_0 + c) */
    const double g = 2.0 * (x[0] - 1.0);
    ck_assert(y[0] == x[0] - 0.125 * (g - ci0[0] + cc[0]));
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* A loader that hands the re-synchronised run c = ½ after round 0 and
 * c_1 = ¼ (the reference's own state: c = −¾, c_1 = 0). */
static int fake_loader(void *ctx, pflref_event_kind kind, const char *what,
                       long round, long client, double *dst, size_t n)
{
    (void)ctx;
    if (n != 1 || round != 0)
        return 0;
    if (kind == PFLREF_EV_SERVER && strcmp(what, "c") == 0) {
        dst[0] = 0.5;
        return 1;
    }
    if (kind == PFLREF_EV_CLIENT_END && strcmp(what, "c_i") == 0 &&
        client == 1) {
        dst[0] = 0.25;
        return 1;
    }
    return 0;
}

/* check --resync restarts round 1 from the candidate's c and c_i. */
START_TEST(test_resync_loads_controls)
{
    /* req: scaffold.alg1.l5, scaffold.alg1.l10 */
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    pflref_schedule *sched = tb_schedule(c, "scaffold");
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_error err;
    pflref_status st = pflref_run_resync(
        c->problem, pflref_algorithm_find("scaffold"), &c->hyper, sched,
        c->w0, fake_loader, NULL, &tr, &err);
    ck_assert_msg(st == PFLREF_OK, "%s", err.message);
    double y[1];
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 1, 1, y, 1), 1);
    /* y = 3/2 − ¼ (8 − ¼ + ½) = −9/16 */
    ck_assert_msg(y[0] == -0.5625, "y = %.17g: the loaded c, c_1 unused", y[0]);
    pflref_trajectory_free(&tj);
    tb_free(c);
}
END_TEST

/* The intermediates --trace prints (PFLREF_EV_INTERMEDIATE): per step the
 * minibatch gradient g_i(y_i) of l. 9, per client the message (Δy_i, Δc_i)
 * of l. 13, per round the sums (Δx, Δc) of l. 16; collected beside a
 * step-level recorder, which keeps none of them. */
typedef struct {
    size_t n;
    struct { long t, i; const char *name; double v; } ev[16];
} shown_values;

static void collect_shown(void *ctx, const pflref_event *ev)
{
    shown_values *sv = ctx;
    if (ev->kind != PFLREF_EV_INTERMEDIATE || sv->n == 16)
        return;
    sv->ev[sv->n].t = ev->round;
    sv->ev[sv->n].i = ev->client;
    sv->ev[sv->n].name = ev->name;
    sv->ev[sv->n].v = ev->value[0];
    sv->n++;
}

/* The case of test_initial_controls (c_i⁰ = (½, −1), c⁰ = −¼, η_g = 2):
 * round 0, S = {0}: g_0 = −2 at y = 0 and −5/8 at y = 11/16 (that
 * test's steps), y_0 = 33/32, x = 0, c_0⁺ = −21/16:
 *   Δy_0 = 33/32, Δc_0 = −21/16 − ½ = −29/16; |S| = 1: Δx = 33/32, Δc = −29/16
 * round 1, S = {1}: g_1 = 41/4 at y = x = 33/16, y_1 = −59/128,
 * c_1⁺ = 41/4, c_1 = −1:
 *   Δy_1 = −323/128, Δc_1 = 45/4, and the same sums. */
START_TEST(test_trace_intermediates)
{
    /* req: scaffold.alg1.l9, scaffold.alg1.l13, scaffold.alg1.l16 */
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    const double c_i0[] = {0.5, -1.0};
    c->hyper.scaffold.c_i0 = c_i0;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    shown_values sv = {0};
    const pflref_trace rec = {.emit = pflref_trajectory_emit, .ctx = &tj};
    const pflref_trace shown = {.emit = collect_shown, .ctx = &sv};
    pflref_trace_tee tee = {&rec, &shown};
    const pflref_trace tr = {.emit = pflref_trace_tee_emit, .ctx = &tee};
    pflref_run_result *res = tb_run(c, "scaffold", &tr);
    const struct { long t, i; const char *name; double v; } want[] = {
        {0, 0, "g_i", -2.0}, {0, 0, "g_i", -0.625},
        {0, 0, "dy_i", 1.03125}, {0, 0, "dc_i", -1.8125},
        {0, -1, "dx", 1.03125}, {0, -1, "dc", -1.8125},
        {1, 1, "g_i", 10.25},
        {1, 1, "dy_i", -2.5234375}, {1, 1, "dc_i", 11.25},
        {1, -1, "dx", -2.5234375}, {1, -1, "dc", 11.25}};
    ck_assert_uint_eq(sv.n, 11);
    for (size_t k = 0; k < 11; k++) {
        ck_assert_int_eq(sv.ev[k].t, want[k].t);
        ck_assert_int_eq(sv.ev[k].i, want[k].i);
        ck_assert_str_eq(sv.ev[k].name, want[k].name);
        ck_assert_msg(sv.ev[k].v == want[k].v,
                      "%s (round %ld) = %.17g, not %.17g", want[k].name,
                      want[k].t, sv.ev[k].v, want[k].v);
    }
    for (size_t j = 0; j < tj.count; j++)
        ck_assert_int_ne(tj.records[j].kind, PFLREF_EV_INTERMEDIATE);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Given control variates (Alg. 1 l. 1–2), the hand case from
 * c_i⁰ = (½, −1) and no c⁰: c⁰ = (1/N) Σ c_i⁰ = −¼ (§4's rule).
 * Round 0, S = {0}, K = 2, correction c − c_0 = −¾:
 *   y: 0 → 0 − ¼(−2 − ¾) = 11/16 → 11/16 − ¼(−5/8 − ¾) = 33/32
 *   c_0⁺ = ½ + ¼ + (0 − 33/32)/½ = −21/16;  x ← 2·33/32 = 33/16
 *   c ← −¼ + ½(−21/16 − ½) = −37/32
 * Round 1, S = {1}, K = 1, c_1 = −1 (given, stale), c − c_1 = −5/32:
 *   y: 33/16 − ¼(41/4 − 5/32) = −59/128
 *   c_1⁺ = −1 + 37/32 + 4(33/16 + 59/128) = 41/4
 * Then c⁰ = ¾ given and no c_i⁰: the first step is 0 − ¼(−2 + ¾) = 5/16. */
START_TEST(test_initial_controls)
{
    /* req: scaffold.init, scaffold.alg1.l1, scaffold.alg1.l2 */
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    const double c_i0[] = {0.5, -1.0};
    c->hyper.scaffold.c_i0 = c_i0;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "scaffold", &tj);
    double v[4];
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 0, 0, v, 4), 2);
    ck_assert_msg(v[0] == 0.6875 && v[1] == 1.03125,
                  "y = %.17g, %.17g: not from c = −¼, c_0 = ½", v[0], v[1]);
    ck_assert_uint_eq(
        records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 0, 0, v, 4), 1);
    ck_assert_msg(v[0] == -1.3125, "c_0⁺ = %.17g, not −21/16", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_SERVER, "c", 0, -1, v, 4), 1);
    ck_assert_msg(v[0] == -1.15625, "c = %.17g, not −37/32", v[0]);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 1, 1, v, 4), 1);
    ck_assert_msg(v[0] == -0.4609375, "y = %.17g, not −59/128 (c_1⁰ = −1 "
                  "kept until round 1)", v[0]);
    ck_assert_uint_eq(
        records_of(&tj, PFLREF_EV_CLIENT_END, "c_i", 1, 1, v, 4), 1);
    ck_assert_msg(v[0] == 10.25, "c_1⁺ = %.17g, not 41/4", v[0]);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
    /* c⁰ given, the c_i⁰ 0 */
    c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    const double c0[] = {0.75};
    c->hyper.scaffold.c0 = c0;
    res = tb_run_recorded(c, "scaffold", &tj);
    ck_assert_uint_eq(records_of(&tj, PFLREF_EV_STEP, "y", 0, 0, v, 4), 2);
    ck_assert_msg(v[0] == 0.3125, "y = %.17g, not 5/16 (c = ¾)", v[0]);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

START_TEST(test_errors)
{
    pflref_error err;
    /* η_g must be finite and > 0 */
    const double bad[] = {0.0, -0.5, NAN, INFINITY};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
        c->hyper.scaffold.eta_g = bad[k];
        tb_run_error(c, "scaffold", PFLREF_EINVAL, &err);
        ck_assert_str_eq(err.where, "algorithm.hyperparameters.scaffold.eta_g");
        tb_free(c);
    }
    /* given control variates must be finite, naming the field */
    const double nan_c[] = {NAN}, nan_ci[] = {0.5, INFINITY};
    tb_case *c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    c->hyper.scaffold.c0 = nan_c;
    tb_run_error(c, "scaffold", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.c");
    tb_free(c);
    c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    c->hyper.scaffold.c_i0 = nan_ci;
    tb_run_error(c, "scaffold", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.c_i");
    ck_assert_ptr_nonnull(strstr(err.message, "client 1"));
    tb_free(c);
    /* η_l is required and > 0 (option II divides by K η_l) */
    c = hand_case(PFLREF_SCAFFOLD_OPTION_II);
    c->hyper.eta = NAN;
    tb_run_error(c, "scaffold", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.eta");
    tb_free(c);
    /* option II: a participation with K = 0 steps is refused before round
     * 0, naming it; option I takes it (y = x, c_i⁺ = ∇f_i(x)) */
    c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){2}, (const double[]){1}, 3);
    tb_quad(c, 1, (const double[]){4}, (const double[]){-0.5}, 5);
    c->hyper.eta = 0.25;
    tb_round(c, "0 1", "0", "");
    tb_run_error(c, "scaffold", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[1]");
    ck_assert_ptr_nonnull(strstr(err.message, "K = 0"));
    c->hyper.scaffold.option = PFLREF_SCAFFOLD_OPTION_I;
    pflref_run_result_free(tb_run(c, "scaffold", NULL));
    tb_free(c);
}
END_TEST

Suite *scaffold_suite(void)
{
    Suite *s = suite_create("scaffold");
    TCase *tc = tcase_create("scaffold");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_hand_option_ii);
    tcase_add_test(tc, test_hand_option_i);
    tcase_add_test(tc, test_pfllib_c_lr);
    tcase_add_test(tc, test_resync_loads_controls);
    tcase_add_test(tc, test_initial_controls);
    tcase_add_test(tc, test_trace_intermediates);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
