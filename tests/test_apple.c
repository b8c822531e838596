/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_apple.c: APPLE (ref/algorithms/apple.c) against its golden
 * vectors (golden/apple/, computed by golden/pflref_exact_apple.py) and its
 * properties: two steps of the box in closed form (the core through p_ii,
 * p_i through ⟨w_j, g⟩ and the proximal pull), the loss scheduler's values
 * round by round, the core-first order, the personalised model as the
 * mixture of the recorded p_i and cores, PFLlib's upload of the last
 * mixture and its sequential downloads (preset pfllib_run, which
 * tests/pfllib/apple.py compares with PFLlib's own classes), and every
 * refusal of the hyperparameters. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/apple/worked-paper-partial.json",
    "golden/apple/worked-cosine-every.json",
    "golden/apple/worked-prox-full.json",
    "golden/apple/worked-exponential.json",
    "golden/apple/worked-p-init-uniform.json",
    "golden/apple/worked-core-first.json",
    "golden/apple/worked-block-mean.json",
    "golden/apple/worked-core-lr-n.json",
    "golden/apple/worked-lambda-previous.json",
    "golden/apple/worked-official.json",
    "golden/apple/worked-pfllib.json",
    "golden/apple/worked-pfllib-run.json",
    "golden/apple/worked-pfllib-run-partial.json",
    "golden/optim/apple-momentum-decay.json",
    "golden/optim/apple-adam-client.json",
    "golden/apple/worked-downloads.json",
    "golden/apple/worked-downloads-initial.json",
    "golden/apple/worked-downloads-initial-partial.json",
};

/* Every vector is reproduced: every expected quantity was emitted and is
 * within tolerance. */
START_TEST(test_worked_vectors)
{
    /* req: apple.alg1.l1, apple.alg1.l2, apple.alg1.l3, apple.alg1.l4 */
    /* req: apple.alg1.l5, apple.alg1.l6, apple.alg1.l7, apple.alg1.l8 */
    /* req: apple.alg1.l9, apple.alg1.l10, apple.alg1.l11, apple.eq1 */
    /* req: apple.eq4, apple.downloads */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* The record of kind `kind` named `name` of client i in round t at step
 * `step` (−1: any), first match, into out (at most cap values). */
static size_t record_of(const pflref_trajectory *tj, pflref_event_kind kind,
                        const char *name, long t, long i, long step,
                        double *out, size_t cap)
{
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *rc = &tj->records[k];
        if (rc->kind != kind || strcmp(rc->name, name) != 0 ||
            rc->round != t || rc->client != i ||
            (step >= 0 && rc->step != step))
            continue;
        const size_t n = rc->len < cap ? rc->len : cap;
        memcpy(out, tj->values + rc->offset, n * sizeof *out);
        return n;
    }
    return 0;
}

/* Two quadratic clients f_i(w) = ½ a_i (w − c_i)², d = 1: a = (1.5,
 * 0.75), c = (2, −1), n = (3, 5) (so p_0 = (3/8, 5/8)), w⁰ = 0.25; η =
 * 0.2, η_p = 0.35, μ = 0.6, L = 2.  Round 0: client 0, two steps; round
 * 1: client 1, one step; round 2: client 0, one step. */
static tb_case *two_clients(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1.5}, (const double[]){2.0}, 3);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-1.0}, 5);
    tb_w0(c, (const double[]){0.25});
    c->hyper.eta = 0.2;
    c->hyper.eta_p = 0.35;
    c->hyper.apple.mu = 0.6;
    c->hyper.apple.L = 2;
    tb_round(c, "0", "0 | 0");
    tb_round(c, "1", "0");
    tb_round(c, "0", "0");
    return c;
}

/* Round 0 of two_clients written out: the downloads are w⁰ (w_1 = w⁰),
 * p = p_0, λ(0) = 1.
 *   step 1: w_p = (p_00 + p_01) w⁰, g = a_0 (w_p − c_0),
 *           w_0 ← w⁰ − η p_00 g,  p_0j ← p_0j − η_p w⁰ g (p = p_0: no pull)
 *   step 2: w_p = p_00 w_0 + p_01 w⁰, g = a_0 (w_p − c_0),
 *           w_0 ← w_0 − η p_00 g,
 *           p_0j ← p_0j − η_p (c_j g + μ (p_0j − p_0,j⁰)), c = (w_0, w⁰)
 * with core_first, step 2's c_0 is the core after its step. */
static void round0(int core_first, double *w_out, double *p_out)
{
    const double a = 1.5, cc = 2.0, w0 = 0.25, eta = 0.2, eta_p = 0.35;
    const double mu = 0.6, p0[2] = {3.0 / 8.0, 5.0 / 8.0};
    double p[2] = {p0[0], p0[1]}, w = w0;
    double wp = p[0] * w + p[1] * w0, g = a * (wp - cc);
    double w_new = w - eta * (p[0] * g);
    double c0 = core_first ? w_new : w;
    double q0 = p[0] - eta_p * (c0 * g + mu * (p[0] - p0[0]));
    double q1 = p[1] - eta_p * (w0 * g + mu * (p[1] - p0[1]));
    w = w_new;
    p[0] = q0;
    p[1] = q1;
    wp = p[0] * w + p[1] * w0;
    g = a * (wp - cc);
    w_new = w - eta * (p[0] * g);
    c0 = core_first ? w_new : w;
    q0 = p[0] - eta_p * (c0 * g + mu * (p[0] - p0[0]));
    q1 = p[1] - eta_p * (w0 * g + mu * (p[1] - p0[1]));
    *w_out = w_new;
    p_out[0] = q0;
    p_out[1] = q1;
}

START_TEST(test_round0_closed_form)
{
    /* req: apple.alg1.l1, apple.alg1.l6, apple.alg1.l9, apple.alg1.l10,
     * apple.eq1 */
    tb_case *c = two_clients();
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
    double w, p[2], got[2], wp;
    round0(0, &w, p);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_END, "w_i", 0, 0, -1,
                                got, 1), 1);
    ck_assert_double_eq_tol(got[0], w, 1e-15);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "p_i", 0, 0, -1, got,
                                2), 2);
    ck_assert_double_eq_tol(got[0], p[0], 1e-15);
    ck_assert_double_eq_tol(got[1], p[1], 1e-15);
    /* l. 11 / eq. (1): w_p^(0) = p_00 w_0 + p_01 w_1 (w_1 = w⁰ held) */
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "w_p", 0, 0, -1, &wp,
                                1), 1);
    ck_assert_double_eq_tol(wp, p[0] * w + p[1] * 0.25, 1e-15);
    /* client 1 untouched until round 1 */
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "p_i", 0, 1, -1, got,
                                2), 0);
    ck_assert(fabs(w - 0.25) > 0.05 && fabs(p[1] - 0.625) > 0.05);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* --trace's ℒ of l. 7 (an intermediate: printed, recorded at no level) at
 * each step's start point, round 0 of two_clients:
 *   step 1: w_p = w⁰ = ¼, p = p_0: ℒ = ½ · 1.5 · (¼ − 2)² = 147/64
 *   step 2: ℒ = ½ a_0 (w_p − c_0)² + λ(0) (μ/2) ‖p − p_0‖², w_p and p
 *           after step 1 (written out as in round0) */
typedef struct {
    double L[4];
    size_t n;
} objective_seen;

static void see_objective(void *ctx, const pflref_event *ev)
{
    objective_seen *o = ctx;
    if (ev->kind == PFLREF_EV_INTERMEDIATE && strcmp(ev->name, "L") == 0 &&
        ev->round == 0 && ev->client == 0 && o->n < 4 &&
        ev->step == (long)o->n + 1)
        o->L[o->n++] = ev->value[0];
}

START_TEST(test_trace_objective)
{
    /* req: apple.alg1.l7 */
    const double a = 1.5, cc = 2.0, w0 = 0.25, eta = 0.2, eta_p = 0.35;
    const double mu = 0.6, p0[2] = {3.0 / 8.0, 5.0 / 8.0};
    double g = a * (w0 - cc);
    const double w = w0 - eta * (p0[0] * g);
    const double p[2] = {p0[0] - eta_p * w0 * g, p0[1] - eta_p * w0 * g};
    const double wp = p[0] * w + p[1] * w0;
    const double L2 = 0.5 * a * (wp - cc) * (wp - cc) +
                      0.5 * mu * ((p[0] - p0[0]) * (p[0] - p0[0]) +
                                  (p[1] - p0[1]) * (p[1] - p0[1]));
    tb_case *c = two_clients();
    objective_seen o = {.n = 0};
    const pflref_trace tr = {see_objective, &o};
    pflref_run_result *res = tb_run(c, "apple", &tr);
    ck_assert_uint_eq(o.n, 2);
    ck_assert_double_eq_tol(o.L[0], 147.0 / 64.0, 1e-15);
    ck_assert_double_eq_tol(o.L[1], L2, 1e-14);
    ck_assert(fabs(L2 - 0.5 * a * (wp - cc) * (wp - cc)) > 1e-3);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* apple.order = core_first: ∂ℒ/∂p_00 of step 2 reads the stepped core;
 * p_01 and the core are those of the joint order at step 1. */
START_TEST(test_core_first_closed_form)
{
    /* req: apple.alg1.l10 */
    tb_case *c = two_clients();
    c->hyper.apple.order = PFLREF_APPLE_ORDER_CORE_FIRST;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
    double w, p[2], pj[2], wj, got[2];
    round0(1, &w, p);
    round0(0, &wj, pj);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "p_i", 0, 0, -1, got,
                                2), 2);
    ck_assert_double_eq_tol(got[0], p[0], 1e-15);
    ck_assert_double_eq_tol(got[1], p[1], 1e-15);
    ck_assert(fabs(p[0] - pj[0]) > 1e-4);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* The client optimizer (opt.*): the authors' one torch.optim.SGD over the
 * core and p_i, groups η and η_p, here momentum m = ½ and coupled weight
 * decay λ = ¼ on both groups.  Round 0 of two_clients, written out (d at
 * the step's start point, b ← d at the first step, then b ← m b + d):
 *   d_w = p_00 g + λ w_0,   d_pj = c_j g + μ (p_0j − p⁰_0j) + λ p_0j
 *   w_0 ← w_0 − η b_w,      p_0j ← p_0j − η_p b_pj */
START_TEST(test_optimizer_closed_form)
{
    /* req: apple.alg1.l9, apple.alg1.l10 */
    const double a = 1.5, cc = 2.0, w0 = 0.25, eta = 0.2, eta_p = 0.35;
    const double mu = 0.6, m = 0.5, lam = 0.25;
    const double p0[2] = {3.0 / 8.0, 5.0 / 8.0};
    double p[2] = {p0[0], p0[1]}, w = w0, bw = 0.0, bp[2] = {0.0, 0.0};
    for (int k = 0; k < 2; k++) {
        const double wp = p[0] * w + p[1] * w0, g = a * (wp - cc);
        const double dw = p[0] * g + lam * w;
        const double dp[2] = {w * g + mu * (p[0] - p0[0]) + lam * p[0],
                              w0 * g + mu * (p[1] - p0[1]) + lam * p[1]};
        bw = k == 0 ? dw : m * bw + dw;
        for (int j = 0; j < 2; j++)
            bp[j] = k == 0 ? dp[j] : m * bp[j] + dp[j];
        w -= eta * bw;
        for (int j = 0; j < 2; j++)
            p[j] -= eta_p * bp[j];
    }
    tb_case *c = two_clients();
    c->hyper.opt.momentum = m;
    c->hyper.opt.weight_decay = lam;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
    double got[2];
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_END, "w_i", 0, 0, -1,
                                got, 1), 1);
    ck_assert_double_eq_tol(got[0], w, 1e-15);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "p_i", 0, 0, -1, got,
                                2), 2);
    ck_assert_double_eq_tol(got[0], p[0], 1e-15);
    ck_assert_double_eq_tol(got[1], p[1], 1e-15);
    /* the plain step gives other numbers (round0 above) */
    double wj, pj[2];
    round0(0, &wj, pj);
    ck_assert(fabs(wj - w) > 1e-3 && fabs(pj[1] - p[1]) > 1e-3);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
    /* refused: the core-first order (no one optimizer step), a decay
     * scope of a split APPLE does not have */
    pflref_error err = {0};
    c = two_clients();
    c->hyper.opt.momentum = m;
    c->hyper.apple.order = PFLREF_APPLE_ORDER_CORE_FIRST;
    tb_run_error(c, "apple", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.apple.order");
    tb_free(c);
    memset(&err, 0, sizeof err);
    c = two_clients();
    c->hyper.opt.weight_decay = lam;
    c->hyper.opt.decay_scope = PFLREF_OPT_SCOPE_SHARED;
    tb_run_error(c, "apple", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.opt.decay_scope");
    tb_free(c);
    /* core_first with plain SGD runs (PFLlib's hand-written steps) */
    c = two_clients();
    c->hyper.apple.order = PFLREF_APPLE_ORDER_CORE_FIRST;
    res = tb_run_recorded(c, "apple", &tj);
    ck_assert_ptr_nonnull(res);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* λ(r) = (cos(rπ/L) + 1)/2 with L = 2: 1, 1/2, then 0 from round 2 on;
 * the exponential shape 0.001^{r/2}: 1, 0.001^{1/2}, 0; lambda_round =
 * previous: 1, λ(0) = 1, λ(1) = 1/2. */
START_TEST(test_scheduler_values)
{
    /* req: apple.eq4 */
    static const struct {
        int scheduler, lambda_round;
        double want[3];
    } cases[] = {
        {PFLREF_APPLE_SCHEDULER_COSINE, PFLREF_APPLE_LAMBDA_ROUND_CURRENT,
         {1.0, 0.5, 0.0}},
        {PFLREF_APPLE_SCHEDULER_EXPONENTIAL,
         PFLREF_APPLE_LAMBDA_ROUND_CURRENT, {1.0, 0.0316227766016838, 0.0}},
        {PFLREF_APPLE_SCHEDULER_COSINE, PFLREF_APPLE_LAMBDA_ROUND_PREVIOUS,
         {1.0, 1.0, 0.5}},
    };
    static const long client[3] = {0, 1, 0};
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        tb_case *c = two_clients();
        c->hyper.apple.scheduler = cases[q].scheduler;
        c->hyper.apple.lambda_round = cases[q].lambda_round;
        pflref_trajectory tj;
        pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
        for (long t = 0; t < 3; t++) {
            double lam = -1.0;
            ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "lambda", t,
                                        client[t], -1, &lam, 1), 1);
            ck_assert_msg(fabs(lam - cases[q].want[t]) <= 1e-15,
                          "case %zu round %ld: λ = %.17g, want %.17g", q, t,
                          lam, cases[q].want[t]);
        }
        pflref_trajectory_free(&tj);
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* The personalised model of a client that trained last in round 1 mixes
 * its p_i with the cores it downloaded then (client 0's core from round 0)
 * and its own new core; the evaluation reports that model's loss. */
START_TEST(test_personalized_model)
{
    /* req: apple.eval, apple.alg1.l4 */
    tb_case *c = two_clients();
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
    double p[2], w1, w0r0, wp;
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "p_i", 1, 1, -1, p, 2),
                      2);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_END, "w_i", 1, 1, -1,
                                &w1, 1), 1);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_END, "w_i", 0, 0, -1,
                                &w0r0, 1), 1);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "w_p", 1, 1, -1, &wp,
                                1), 1);
    ck_assert_double_eq_tol(wp, p[0] * w0r0 + p[1] * w1, 1e-15);
    /* the cores reported are the uploads, not the mixtures */
    ck_assert(res->v[1] == w1);
    ck_assert_uint_eq(res->n_eval, 1);
    ck_assert_str_eq(res->eval[0].label, "personalized");
    /* f_1(w_p) = ½ a_1 (w_p − c_1)² on client 1 */
    const double want = 0.5 * 0.75 * (wp + 1.0) * (wp + 1.0);
    ck_assert_double_eq_tol(res->eval[0].train[1].loss, want, 1e-14);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* The presets set the switches their sources name, and nothing else:
 * official (exponential, full), pfllib (uniform, core_first, block_mean,
 * n_eta, previous); each changes the run's cores. */
START_TEST(test_presets)
{
    /* req: apple.preset.official */
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    pflref_error err = {0};
    ck_assert_int_eq(pflref_preset_apply(&h, "apple", "official", "preset",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.apple.scheduler, PFLREF_APPLE_SCHEDULER_EXPONENTIAL);
    ck_assert_int_eq(h.apple.prox, PFLREF_APPLE_PROX_FULL);
    ck_assert_int_eq(h.apple.p_init, PFLREF_APPLE_P_INIT_SAMPLES);
    ck_assert_int_eq(h.apple.order, PFLREF_APPLE_ORDER_JOINT);
    /* req: apple.preset.pfllib */
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "apple", "pfllib", "preset",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.apple.scheduler, PFLREF_APPLE_SCHEDULER_COSINE);
    ck_assert_int_eq(h.apple.prox, PFLREF_APPLE_PROX_HALF);
    ck_assert_int_eq(h.apple.p_init, PFLREF_APPLE_P_INIT_UNIFORM);
    ck_assert_int_eq(h.apple.order, PFLREF_APPLE_ORDER_CORE_FIRST);
    ck_assert_int_eq(h.apple.p_grad, PFLREF_APPLE_P_GRAD_BLOCK_MEAN);
    ck_assert_int_eq(h.apple.core_lr, PFLREF_APPLE_CORE_LR_N_ETA);
    ck_assert_int_eq(h.apple.lambda_round,
                     PFLREF_APPLE_LAMBDA_ROUND_PREVIOUS);
    tb_case *c = two_clients();
    pflref_run_result *paper = tb_run(c, "apple", NULL);
    tb_preset(c, "apple", "pfllib");
    pflref_run_result *lib = tb_run(c, "apple", NULL);
    ck_assert(fabs(paper->v[0] - lib->v[0]) > 1e-3);
    pflref_run_result_free(lib);
    pflref_run_result_free(paper);
    tb_free(c);
}
END_TEST

/* Two quadratic clients both in round 0 (two steps each, then one each in
 * round 1), p_i⁰ = p_0 = (3/8, 5/8).  apple.upload = mixture: the core
 * carried on (client_end, final v) and w_p are the mixture the last step
 * started from, p_i0 c_0 + p_i1 c_1 with the p_i and cores before that step,
 * not the stepped core.  apple.peers = sequential: client 1's first step
 * mixes client 0's stepped core (its last step record) where the snapshot
 * reading mixes w⁰. */
static tb_case *both_train(int upload, int peers)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1.5}, (const double[]){2.0}, 3);
    tb_quad(c, 1, (const double[]){0.75}, (const double[]){-1.0}, 5);
    tb_w0(c, (const double[]){0.25});
    c->hyper.eta = 0.2;
    c->hyper.eta_p = 0.35;
    c->hyper.apple.mu = 0.6;
    c->hyper.apple.L = 2;
    tb_round(c, "0 1", "0 | 0", "0 | 0");
    tb_round(c, "0 1", "0", "0");
    c->hyper.apple.upload = upload;
    c->hyper.apple.peers = peers;
    return c;
}

START_TEST(test_upload_mixture)
{
    /* req: apple.preset.pfllib_run */
    tb_case *c = both_train(PFLREF_APPLE_UPLOAD_MIXTURE,
                            PFLREF_APPLE_PEERS_SNAPSHOT);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
    double w1, w2, p1[2], wend, wp;
    /* client 0, round 0: after step 1 the core w1 and p_0 = p1; step 2
     * starts from the mixture p1[0] w1 + p1[1] w⁰ (client 1's download) */
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_STEP, "w_i", 0, 0, 1, &w1, 1),
                      1);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_STEP, "p_i", 0, 0, 1, p1, 2),
                      2);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_STEP, "w_i", 0, 0, 2, &w2, 1),
                      1);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_END, "w_i", 0, 0, -1,
                                &wend, 1), 1);
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_NOTE, "w_p", 0, 0, -1, &wp, 1),
                      1);
    const double mixture = p1[0] * w1 + p1[1] * 0.25;
    ck_assert_double_eq_tol(wend, mixture, 1e-15);
    ck_assert(wp == wend);
    ck_assert(fabs(w2 - wend) > 1e-3);    /* not the stepped core */
    /* round 1 starts client 0 from the mixture it carried on */
    double start;
    ck_assert_uint_eq(record_of(&tj, PFLREF_EV_CLIENT_BEGIN, "w_i", 1, 0, -1,
                                &start, 1), 1);
    ck_assert(start == wend);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* client 1's first step under both readings of apple.peers: w_1 ← w⁰ −
 * η p_11 a_1 (p_10 c_0 + p_11 w⁰ − c_1), c_0 = w⁰ (snapshot) or client 0's
 * stepped core (sequential). */
START_TEST(test_peers_sequential)
{
    /* req: apple.preset.pfllib_run, apple.alg1.l4 */
    const double w0 = 0.25, eta = 0.2, a1 = 0.75, c1 = -1.0;
    const double p10 = 3.0 / 8.0, p11 = 5.0 / 8.0;
    for (int peers = 0; peers < 2; peers++) {
        tb_case *c = both_train(PFLREF_APPLE_UPLOAD_CORE, peers);
        pflref_trajectory tj;
        pflref_run_result *res = tb_run_recorded(c, "apple", &tj);
        double stepped0, w1;
        ck_assert_uint_eq(record_of(&tj, PFLREF_EV_STEP, "w_i", 0, 0, 2,
                                    &stepped0, 1), 1);
        ck_assert_uint_eq(record_of(&tj, PFLREF_EV_STEP, "w_i", 0, 1, 1,
                                    &w1, 1), 1);
        const double c0 = peers ? stepped0 : w0;
        const double want = w0 - eta * (p11 * (a1 * (p10 * c0 + p11 * w0 - c1)));
        ck_assert_double_eq_tol(w1, want, 1e-15);
        const double other = peers ? w0 : stepped0;
        const double not_want =
            w0 - eta * (p11 * (a1 * (p10 * other + p11 * w0 - c1)));
        ck_assert(fabs(w1 - not_want) > 1e-4);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(res);
        tb_free(c);
    }
    /* the preset sets both, on top of pfllib */
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    pflref_error err = {0};
    ck_assert_int_eq(pflref_preset_apply(&h, "apple", "pfllib_run", "preset",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.apple.upload, PFLREF_APPLE_UPLOAD_MIXTURE);
    ck_assert_int_eq(h.apple.peers, PFLREF_APPLE_PEERS_SEQUENTIAL);
    ck_assert_int_eq(h.apple.core_lr, PFLREF_APPLE_CORE_LR_N_ETA);
    pflref_hyper_defaults(&h);
    ck_assert_int_eq(pflref_preset_apply(&h, "apple", "pfllib", "preset",
                                         &err), PFLREF_OK);
    ck_assert_int_eq(h.apple.upload, PFLREF_APPLE_UPLOAD_CORE);
    ck_assert_int_eq(h.apple.peers, PFLREF_APPLE_PEERS_SNAPSHOT);
}
END_TEST

/* η, η_p > 0, μ ≥ 0, finite, L ≥ 1: the registry's setters refuse each bad
 * value naming the field; η_p, μ and L are required. */
START_TEST(test_hyper_refused)
{
    static const struct {
        const char *name;
        double value;
    } bad[] = {
        {"eta_p", 0.0},     {"eta_p", -0.2},      {"eta_p", NAN},
        {"eta", INFINITY},  {"apple.mu", -0.1},   {"apple.mu", NAN},
        {"apple.mu", INFINITY},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        const pflref_param *p = pflref_param_find_for(bad[q].name, "apple");
        ck_assert_ptr_nonnull(p);
        char where[96];
        snprintf(where, sizeof where, "algorithm.hyperparameters.%s",
                 bad[q].name);
        pflref_hyper h;
        pflref_hyper_defaults(&h);
        pflref_error err = {0};
        ck_assert_int_eq(pflref_hyper_set_real(&h, p, bad[q].value, where,
                                               &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, where);
    }
    const pflref_param *L = pflref_param_find_for("apple.L", "apple");
    ck_assert_ptr_nonnull(L);
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    pflref_error err = {0};
    ck_assert_int_eq(pflref_hyper_set_int(&h, L, 0, "algorithm."
                                          "hyperparameters.apple.L", &err),
                     PFLREF_EINVAL);
    ck_assert(isnan(h.apple.mu) && h.apple.L == PFLREF_INT_UNSET);
    ck_assert_int_eq(h.apple.scheduler, PFLREF_APPLE_SCHEDULER_COSINE);
    ck_assert_int_eq(h.apple.prox, PFLREF_APPLE_PROX_HALF);
    ck_assert_int_eq(h.apple.p_init, PFLREF_APPLE_P_INIT_SAMPLES);
    ck_assert_int_eq(h.apple.order, PFLREF_APPLE_ORDER_JOINT);
    /* runs without μ or L are refused before round 0 */
    tb_case *c = two_clients();
    c->hyper.apple.mu = NAN;
    memset(&err, 0, sizeof err);
    tb_run_error(c, "apple", PFLREF_EINVAL, &err);
    ck_assert(strstr(err.where, "apple.mu") != NULL);
    tb_free(c);
    c = two_clients();
    c->hyper.apple.L = PFLREF_INT_UNSET;
    memset(&err, 0, sizeof err);
    tb_run_error(c, "apple", PFLREF_EINVAL, &err);
    ck_assert(strstr(err.where, "apple.L") != NULL);
    tb_free(c);
}
END_TEST

/* schedule.rounds[t].first_upload names the uploader whose running
 * statistics a global model takes; APPLE keeps none (each mixture w_p^(i)
 * takes client i's own), so a round that gives one is refused there, by
 * the check FedAMP's row I32 of docs/bad-inputs.md exercises
 * (pflref_bn_no_first_upload), naming the round; the same spec without it
 * runs. */
START_TEST(test_first_upload_refused)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"layers\", "
        "\"input\": [2], \"loss\": \"squared\", \"layers\": [{\"type\": "
        "\"dense\", \"out\": 2, \"bias\": false}, {\"type\": "
        "\"batchnorm1d\"}, {\"type\": \"dense\", \"out\": 1}]}, "
        "\"problem\": {\"clients\": [{\"X\": [[1, 0], [0, 1]], \"y\": [1, 0]},"
        " {\"X\": [[1, 1], [0, 2]], \"y\": [0, 1]}]}, "
        "\"algorithm\": {\"name\": \"apple\", \"preset\": \"pfllib\", "
        "\"hyperparameters\": {\"eta\": 0.1, \"eta_p\": 0.1, \"apple.mu\": "
        "0.1, \"apple.L\": 2}}, \"schedule\": {\"kind\": \"given\", "
        "\"rounds\": [{\"clients\": [0, 1], \"batches\": [[[0, 1]], "
        "[[0, 1]]]}, {\"clients\": [1], \"batches\": [[[0, 1]]]%s}]}}";
    char text[2048];
    snprintf(text, sizeof text, fmt, ", \"first_upload\": 1");
    pflref_spec *spec = tu_spec(text);
    pflref_error err = {0};
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[1].first_upload");
    ck_assert_msg(strstr(err.message, "apple keeps no global model") != NULL,
                  "%s", err.message);
    pflref_spec_free(spec);
    snprintf(text, sizeof text, fmt, "");
    spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
}
END_TEST

/* Limited downloads (apple.M) as schedule data: three quadratic clients,
 * client 1 trains alone in round 0, then clients 0 and 2 in round 1.
 * Lists that name every other core give the run without lists, bit for
 * bit; a list that leaves out core 1 (stepped in round 0) makes client 0
 * mix its copy from its last download, w⁰ (last_download), which is also
 * what apple.stale = initial gives here; after client 0 downloads core 1
 * in round 1, omitting it in round 2 differs between the two readings. */
START_TEST(test_limited_downloads)
{
    /* req: apple.downloads */
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"name\": \"x\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [2], \"c\": [1]},"
        " {\"a\": [1.5], \"c\": [3]}, {\"a\": [0.5], \"c\": [-2]}]},"
        " \"init\": {\"kind\": \"given\", \"w\": [0.25]},"
        " \"algorithm\": {\"name\": \"apple\", \"hyperparameters\":"
        " {\"eta\": 0.2, \"eta_p\": 0.1, \"apple.mu\": 0.5, \"apple.L\": 2"
        "%s}%s}, \"schedule\": {\"kind\": \"given\", \"rounds\": ["
        "{\"clients\": [1], \"batches\": [[[0]]]},"
        " {\"clients\": [0, 2], \"batches\": [[[0]], [[0]]]%s},"
        " {\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]%s}]}}";
    static const char *const runs[][4] = {
        {"", "", "", ""},                                   /* 0: no lists */
        {", \"apple.M\": 2", "", ", \"peers\": [[1, 2], [0, 1]]",
         ", \"peers\": [[1, 2], [0, 2]]"},                 /* 1: all */
        {", \"apple.M\": 1", "", ", \"peers\": [[2], [0]]",
         ", \"peers\": [[2], [2]]"},                       /* 2: stale */
        {", \"apple.M\": 1", ", \"switches\": {\"apple.stale\": "
         "\"initial\"}", ", \"peers\": [[2], [0]]",
         ", \"peers\": [[2], [2]]"},                       /* 3: initial */
        {", \"apple.M\": 1", "", ", \"peers\": [[1], [0]]",
         ", \"peers\": [[2], [2]]"},                       /* 4 */
        {", \"apple.M\": 1", ", \"switches\": {\"apple.stale\": "
         "\"initial\"}", ", \"peers\": [[1], [0]]",
         ", \"peers\": [[2], [2]]"},                       /* 5 */
    };
    double v[6][3];
    char text[2048];
    for (size_t k = 0; k < 6; k++) {
        snprintf(text, sizeof text, fmt, runs[k][0], runs[k][1], runs[k][2],
                 runs[k][3]);
        pflref_spec *spec = tu_spec(text);
        pflref_run_result *res = tu_run(spec, NULL);
        memcpy(v[k], res->v, sizeof v[k]);
        pflref_run_result_free(res);
        pflref_spec_free(spec);
    }
    for (size_t j = 0; j < 3; j++) {
        ck_assert_msg(v[1][j] == v[0][j], "core %zu: every core listed", j);
        ck_assert_msg(v[2][j] == v[3][j], "core %zu: never downloaded", j);
    }
    ck_assert_msg(v[2][0] != v[0][0], "core 1 left out: client 0's copy");
    ck_assert_msg(v[4][0] != v[5][0],
                  "a copy from round 1 against w⁰ in round 2");
}
END_TEST

Suite *apple_suite(void)
{
    Suite *s = suite_create("apple");
    TCase *tc = tcase_create("apple");
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_round0_closed_form);
    tcase_add_test(tc, test_trace_objective);
    tcase_add_test(tc, test_core_first_closed_form);
    tcase_add_test(tc, test_optimizer_closed_form);
    tcase_add_test(tc, test_scheduler_values);
    tcase_add_test(tc, test_personalized_model);
    tcase_add_test(tc, test_presets);
    tcase_add_test(tc, test_hyper_refused);
    tcase_add_test(tc, test_limited_downloads);
    tcase_add_test(tc, test_first_upload_refused);
    tcase_add_test(tc, test_upload_mixture);
    tcase_add_test(tc, test_peers_sequential);
    suite_add_tcase(s, tc);
    return s;
}
