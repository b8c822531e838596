/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_perfedavg.c: Per-FedAvg (ref/algorithms/perfedavg.c).
 *
 * The worked example is shared/spec notes §4(g): f_1 = (2/2)(w − 1)²,
 * f_2 = (1/2)(w + 1)², α = 1/10, β = 1/2, τ = 2, w_0 = 0, both users,
 * uniform mean.  The tests hold α = 0.1 (the double nearest 1/10), so the
 * notes' numbers are met to within 1e-15, not exactly.  The properties
 * (HF = exact on quadratic losses, FO − exact = αβ H q, α = 0 gives FedAvg,
 * HF's O(δ²) error) are derived in each test's comment.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const char *const VECTORS[] = {
    "golden/perfedavg/worked-notes-4g-exact.json",
    "golden/perfedavg/worked-notes-4g-exact-one-round.json",
    "golden/perfedavg/worked-notes-4g-fo.json",
    "golden/perfedavg/worked-notes-4g-hf.json",
    "golden/perfedavg/worked-notes-4g-eval-alpha-then-beta.json",
    "golden/perfedavg/worked-linear-minibatch-exact.json",
    "golden/perfedavg/worked-linear-minibatch-hf.json",
    "golden/perfedavg/worked-linear-pfedme-repo.json",
    "golden/perfedavg/worked-mlp-identity-exact.json",
    "golden/perfedavg/worked-mlp-identity-hf.json",
    "golden/perfedavg/worked-linear-momentum-decay-client.json",
    "golden/perfedavg/worked-linear-adam-both-hf.json",
    "golden/perfedavg/worked-linear-pfllib-momentum-reset.json",
    "golden/perfedavg/worked-bn-running-update.json",
    "golden/perfedavg/worked-bn-pfllib-keep.json",
};

/* The notes' tolerance: α = 0.1 is 1/10 to within 5.6e-18, and every value
 * of the example is below 3 after at most five contracting steps. */
#define NOTES_TOL 1e-15

/* The notes' problem: f_1 = (2/2)(w − 1)², f_2 = (1/2)(w + 1)² (the
 * quadratic model, a = (2, 1), c = (1, −1)), sample counts n (NULL: 1
 * and 1), w_0 = 0; α = 0.1, β = 0.5 unless the test changes them. */
static tb_case *notes_case(const size_t *n)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){2}, (const double[]){1}, n ? n[0] : 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-1}, n ? n[1] : 1);
    c->hyper.perfedavg.alpha = 0.1;
    c->hyper.perfedavg.beta = 0.5;
    return c;
}

/* The notes' schedule: `rounds` rounds of both users with τ = 2 (six
 * batches each: D, D′, D″ per step), and one personalisation step each. */
#define SIX "0 | 0 | 0 | 0 | 0 | 0"
static void notes_rounds(tb_case *c, int rounds)
{
    for (int t = 0; t < rounds; t++)
        tb_round(c, "0 1", SIX, SIX);
    tb_post(c, "0", "0");
}

/* A linear model with minibatches (d = 2, bias, squared loss), three
 * clients; the same data as golden/perfedavg/make_data.py's. */
static tb_case *lin_problem(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                    2, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 5,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238,
                              -0.715, -0.426, 0.337, 1.129},
             (const double[]){-0.775, 1.409, 0.236, -1.118, 0.652});
    tb_train(c, 1, 4,
             (const double[]){-1.426, 0.357, 0.689, -0.942, 0.205, 1.318,
                              1.174, 0.463},
             (const double[]){0.518, -1.263, 0.947, -0.384});
    tb_train(c, 2, 6,
             (const double[]){0.473, 0.815, -0.962, -0.218, 1.285, -0.637,
                              -0.156, 1.442, 0.724, 0.091, -1.093, 0.568},
             (const double[]){1.127, -0.469, 0.318, 0.875, -0.236, -0.912});
    return c;
}

/* Two rounds, A_0 = {0, 2}, A_1 = {1, 2}, τ = 2; the D′ batches (positions
 * 1 and 4 of each list) are what FedAvg takes in test_alpha0_is_fedavg. */
static void lin_schedule(tb_case *c)
{
    tb_round(c, "0 2", "0 1 | 2 3 | 4 | 1 4 | 0 2 3 | 3",
             "0 1 | 2 3 | 4 5 | 5 2 | 1 | 0 3 4");
    tb_round(c, "1 2", "3 0 | 1 2 | 2 | 0 | 1 3 | 2 0 1",
             "1 3 | 5 0 | 2 4 | 4 | 0 5 | 3 1");
    tb_post(c, "3 4", "0 2", "5 1");
}

/* The linear problem with its schedule and α, β (and δ, NaN: unset). */
static tb_case *lin_case(double alpha, double beta, double delta)
{
    tb_case *c = lin_problem();
    lin_schedule(c);
    c->hyper.perfedavg.alpha = alpha;
    c->hyper.perfedavg.beta = beta;
    c->hyper.perfedavg.delta = delta;
    return c;
}

/* Run Per-FedAvg on c and free c. */
static pflref_run_result *run_case(tb_case *c)
{
    pflref_run_result *res = tb_run(c, "perfedavg", NULL);
    tb_free(c);
    return res;
}

/* The value of the recorded event (kind, round, client, step, name). */
static const double *find(const pflref_trajectory *tj, pflref_event_kind kind,
                          long round, long client, long step,
                          const char *name)
{
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        if (rec->kind == kind && rec->round == round &&
            rec->client == client && rec->step == step &&
            strcmp(rec->name, name) == 0)
            return tj->values + rec->offset;
    }
    ck_abort_msg("no %s record round %ld client %ld step %ld",
                 name, round, client, step);
    return NULL;
}

/* Every golden vector is reproduced. */
START_TEST(test_golden_vectors)
{
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Notes §4(g), exact: client 1 0 → 0.64 → 0.8704, client 2 0 → −0.405 →
 * −0.645975, w_1 = 8977/80000, θ(w_1) = (0.28977, 0.00099125),
 * w_2 = 178364013/1280000000. */
START_TEST(test_notes_exact)
{
    /* req: perfedavg.alg1.l7, perfedavg.alg1.l8 */
    tb_case *c = notes_case(NULL);
    notes_rounds(c, 1);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "perfedavg", &tj);
    const double want[2][2] = {{0.64, 0.8704}, {-0.405, -0.645975}};
    for (long i = 0; i < 2; i++)
        for (long t = 1; t <= 2; t++) {
            const double x = find(&tj, PFLREF_EV_STEP, 0, i, t, "w_local")[0];
            ck_assert_msg(fabs(x - want[i][t - 1]) <= NOTES_TOL,
                          "client %ld step %ld: %.17g, notes %.17g", i, t, x,
                          want[i][t - 1]);
        }
    ck_assert(fabs(res->w[0] - 8977.0 / 80000.0) <= NOTES_TOL);
    ck_assert(fabs(res->v[0] - 0.28977) <= NOTES_TOL);
    ck_assert(fabs(res->v[1] - 0.00099125) <= NOTES_TOL);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);

    c = notes_case(NULL);
    notes_rounds(c, 2);
    res = run_case(c);
    ck_assert_msg(fabs(res->w[0] - 178364013.0 / 1280000000.0) <= NOTES_TOL,
                  "w_2 = %.17g", res->w[0]);
    pflref_run_result_free(res);
}
END_TEST

/* Notes §4(g), FO: 0 → 0.8 → 0.96 and 0 → −0.45 → −0.6975, w_1 = 0.13125,
 * w_2 = 0.1537265625. */
START_TEST(test_notes_fo)
{
    /* req: perfedavg.alg1.l7 */
    tb_case *c = notes_case(NULL);
    c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_FO;
    notes_rounds(c, 2);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "perfedavg", &tj);
    const double want[2][2] = {{0.8, 0.96}, {-0.45, -0.6975}};
    for (long i = 0; i < 2; i++)
        for (long t = 1; t <= 2; t++)
            ck_assert(fabs(find(&tj, PFLREF_EV_STEP, 0, i, t, "w_local")[0] -
                           want[i][t - 1]) <= NOTES_TOL);
    ck_assert(fabs(find(&tj, PFLREF_EV_SERVER, 0, -1, -1, "w")[0] - 0.13125) <=
              NOTES_TOL);
    ck_assert(fabs(res->w[0] - 0.1537265625) <= NOTES_TOL);
    /* FO emits no Hessian-vector product */
    for (size_t r = 0; r < tj.count; r++)
        ck_assert_str_ne(tj.records[r].name, "hvp");
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* Notes §4(g): the pFedMe repository's evaluation at w_0 = 0 (α step, then
 * β step) gives (1.0, −0.55); the paper's one α step (0.2, −0.1). */
START_TEST(test_eval_steps)
{
    /* req: perfedavg.eq4 */
    tb_case *c = notes_case(NULL);
    c->hyper.perfedavg.eval = PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA;
    tb_post(c, "0 | 0", "0 | 0");
    pflref_run_result *res = run_case(c);
    ck_assert(fabs(res->v[0] - 1.0) <= NOTES_TOL);
    ck_assert(fabs(res->v[1] + 0.55) <= NOTES_TOL);
    pflref_run_result_free(res);
    c = notes_case(NULL);
    tb_post(c, "0", "0");
    res = run_case(c);
    ck_assert(fabs(res->v[0] - 0.2) <= NOTES_TOL);
    ck_assert(fabs(res->v[1] + 0.1) <= NOTES_TOL);
    /* evaluated: "global" is w, "personalized" is θ_i; the loss of θ_1 is
     * ½·2·(0.2 − 1)² = 0.64, of w = 0 it is 1 */
    ck_assert_int_eq((int)res->n_eval, 2);
    ck_assert_str_eq(res->eval[0].label, "global");
    ck_assert_str_eq(res->eval[1].label, "personalized");
    ck_assert(fabs(res->eval[0].train[0].loss - 1.0) <= NOTES_TOL);
    ck_assert(fabs(res->eval[1].train[0].loss - 0.64) <= NOTES_TOL);
    pflref_run_result_free(res);
}
END_TEST

/* perfedavg.weights = samples with n = (1, 3): the round-1 locals of the
 * notes (0.8704, −0.645975) average to (0.8704 − 3·0.645975)/4
 * = −0.26688125; uniform gives 8977/80000. */
START_TEST(test_weights)
{
    /* req: perfedavg.alg1.l10 */
    static const size_t n[2] = {1, 3};
    tb_case *c1 = notes_case(n), *c2 = notes_case(n);
    c1->hyper.perfedavg.weights = PFLREF_PERFEDAVG_WEIGHTS_SAMPLES;
    notes_rounds(c1, 1);
    notes_rounds(c2, 1);
    pflref_run_result *r1 = run_case(c1), *r2 = run_case(c2);
    ck_assert_msg(fabs(r1->w[0] + 0.26688125) <= NOTES_TOL, "%.17g", r1->w[0]);
    ck_assert(fabs(r2->w[0] - 8977.0 / 80000.0) <= NOTES_TOL);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
}
END_TEST

/* Two quadratic clients in ℝ² on the notes' two-round schedule. */
static tb_case *quad2_case(void)
{
    tb_case *c = tb_quadratic(2, 2);
    tb_quad(c, 0, (const double[]){2.385, 0.75}, (const double[]){1.5, -0.625},
            1);
    tb_quad(c, 1, (const double[]){1.3, 3.1}, (const double[]){-0.7, 0.45}, 1);
    notes_rounds(c, 2);
    return c;
}

/* HF = exact on losses quadratic in the parameters (the quadratic model,
 * the linear model with squared loss): ∇f is affine, so the central
 * difference [∇f(w + δq) − ∇f(w − δq)]/(2δ) is H q exactly in real
 * arithmetic.  In fp64 each of the two gradients carries a rounding error
 * of a few u·‖g‖ (u = 2⁻⁵³, ‖g‖ < 10 here), which the division by 2δ
 * (δ = 1e-3) turns into at most ~1e-12 in d; d enters w multiplied by
 * α·β ≤ 0.05, through at most 4 contracting steps, so |w_hf − w_exact|
 * ≤ 1e-12 is asserted (it is near 1e-14 in practice), for w, every θ_i, and
 * the notes hvp at 1e-10. */
START_TEST(test_hf_equals_exact_on_quadratic_losses)
{
    const double betas[2] = {0.25, 0.05};
    for (int m = 0; m < 2; m++) {
        tb_case *se = m == 0 ? quad2_case() : lin_case(0.1, 0.05, 0.001);
        tb_case *sh = m == 0 ? quad2_case() : lin_case(0.1, 0.05, 0.001);
        for (int k = 0; k < 2; k++) {
            tb_case *c = k == 0 ? se : sh;
            c->hyper.perfedavg.alpha = 0.1;
            c->hyper.perfedavg.beta = betas[m];
            c->hyper.perfedavg.delta = 0.001;
        }
        sh->hyper.perfedavg.variant = PFLREF_PERFEDAVG_HF;
        pflref_trajectory te, th;
        pflref_run_result *re = tb_run_recorded(se, "perfedavg", &te);
        pflref_run_result *rh = tb_run_recorded(sh, "perfedavg", &th);
        for (size_t p = 0; p < re->P; p++)
            ck_assert_msg(fabs(re->w[p] - rh->w[p]) <= 1e-12,
                          "model %d, w[%zu]: exact %.17g, hf %.17g", m, p,
                          re->w[p], rh->w[p]);
        for (size_t p = 0; p < re->N * re->P; p++)
            ck_assert(fabs(re->v[p] - rh->v[p]) <= 1e-12);
        /* the notes hvp agree too (client 0, round 0, step 1) */
        const double *he = find(&te, PFLREF_EV_NOTE, 0, 0, 1, "hvp");
        const double *hh = find(&th, PFLREF_EV_NOTE, 0, 0, 1, "hvp");
        for (size_t p = 0; p < re->P; p++)
            ck_assert_msg(fabs(he[p] - hh[p]) <= 1e-10, "model %d hvp[%zu]: "
                          "%.17g vs %.17g", m, p, he[p], hh[p]);
        pflref_trajectory_free(&te);
        pflref_trajectory_free(&th);
        pflref_run_result_free(re);
        pflref_run_result_free(rh);
        tb_free(se);
        tb_free(sh);
    }
}
END_TEST

/* The linear problem, one round of client 0 with τ = 1 (batches
 * {0, 1}, {2, 3}, {4, 1}), one personalisation step each; α = 0.3,
 * β = 0.2. */
static tb_case *one_step_case(void)
{
    tb_case *c = lin_problem();
    tb_round(c, "0", "0 1 | 2 3 | 4 1");
    tb_post(c, "0", "0", "0");
    c->hyper.perfedavg.alpha = 0.3;
    c->hyper.perfedavg.beta = 0.2;
    return c;
}

/* One local step: exact − FO = β α H q.  Both runs compute the same w̃ and
 * q; exact takes w − β(q − α hv), FO w − β q, so the difference is β α hv
 * up to the roundings of α·hv, q − α hv, the two products by β, the two
 * subtractions from w_0 = 0 and the difference, each at most ½ ulp of a
 * number below M = max(|w_exact|, |w_fo|, βα|hv|) (w_0 = 0, so β|q| =
 * |w_fo|): a few ulps of M; 4·DBL_EPSILON·M (8 u·M) is asserted. */
START_TEST(test_fo_differs_by_hessian_term)
{
    tb_case *se = one_step_case(), *sf = one_step_case();
    sf->hyper.perfedavg.variant = PFLREF_PERFEDAVG_FO;
    pflref_trajectory te, tf;
    pflref_run_result *re = tb_run_recorded(se, "perfedavg", &te);
    pflref_run_result *rf = tb_run_recorded(sf, "perfedavg", &tf);
    const double alpha = 0.3, beta = 0.2;
    const double *hv = find(&te, PFLREF_EV_NOTE, 0, 0, 1, "hvp");
    const double *we = find(&te, PFLREF_EV_STEP, 0, 0, 1, "w_local");
    const double *wf = find(&tf, PFLREF_EV_STEP, 0, 0, 1, "w_local");
    /* the same w̃ in both runs */
    const double *te_tilde = find(&te, PFLREF_EV_STEP, 0, 0, 1, "w_tilde");
    const double *tf_tilde = find(&tf, PFLREF_EV_STEP, 0, 0, 1, "w_tilde");
    double hv_norm = 0.0;
    for (size_t p = 0; p < re->P; p++) {
        ck_assert(te_tilde[p] == tf_tilde[p]);
        const double M = fmax(fmax(fabs(we[p]), fabs(wf[p])),
                              beta * alpha * fabs(hv[p]));
        const double diff = we[p] - wf[p];
        ck_assert_msg(fabs(diff - beta * alpha * hv[p]) <= 4.0 * DBL_EPSILON * M,
                      "p = %zu: exact − fo = %.17g, βα H q = %.17g", p, diff,
                      beta * alpha * hv[p]);
        hv_norm += fabs(hv[p]);
    }
    ck_assert(hv_norm > 0.1);   /* the term is not trivially zero */
    pflref_trajectory_free(&te);
    pflref_trajectory_free(&tf);
    pflref_run_result_free(re);
    pflref_run_result_free(rf);
    tb_free(se);
    tb_free(sf);
}
END_TEST

/* α = 0: w̃ = w, the Hessian term vanishes, and every variant's step is
 * w ← w − β ∇f(w; D′): FedAvg with η = β, uniform weights and the D′
 * batches, bit for bit (the same operations in the same order). */
START_TEST(test_alpha0_is_fedavg)
{
    /* req: perfedavg.alg1.l5, perfedavg.alg1.l10 */
    tb_case *sa = lin_problem();
    tb_round(sa, "0 2", "2 3 | 0 2 3", "2 3 | 1");
    tb_round(sa, "1 2", "1 2 | 1 3", "5 0 | 0 5");
    sa->hyper.eta = 0.05;
    sa->hyper.fedavg.weights = PFLREF_FEDAVG_WEIGHTS_UNIFORM;
    pflref_run_result *ra = tb_run(sa, "fedavg", NULL);
    const int variants[3] = {PFLREF_PERFEDAVG_EXACT, PFLREF_PERFEDAVG_FO,
                             PFLREF_PERFEDAVG_HF};
    const char *names[3] = {"exact", "fo", "hf"};
    for (int v = 0; v < 3; v++) {
        tb_case *c = lin_case(0.0, 0.05, 0.01);
        c->hyper.perfedavg.variant = variants[v];
        pflref_run_result *rp = run_case(c);
        for (size_t p = 0; p < ra->P; p++)
            ck_assert_msg(memcmp(&ra->w[p], &rp->w[p], sizeof(double)) == 0,
                          "%s, w[%zu]: fedavg %.17g, perfedavg %.17g",
                          names[v], p, ra->w[p], rp->w[p]);
        pflref_run_result_free(rp);
    }
    pflref_run_result_free(ra);
    tb_free(sa);
}
END_TEST

/* Softmax regression (d = 2, k = 3, bias), one client of three samples,
 * one round of τ = 1 on batches {0, 1}, {1, 2}, {2, 0}; α = β = 0.5. */
static tb_case *softmax_case(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX,
                                    PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){0, 2, 1});
    tb_round(c, "0", "0 1 | 1 2 | 2 0");
    tb_post(c, "0");
    c->hyper.perfedavg.alpha = 0.5;
    c->hyper.perfedavg.beta = 0.5;
    return c;
}

/* HF's error on a non-quadratic loss is O(δ²): with g(w + εq) = g + εHq +
 * (ε²/2) T[q,q] + (ε³/6) G[q,q,q] + ..., the central difference is
 * Hq + (δ²/6) G[q,q,q] + O(δ⁴), so after one step |w_hf − w_exact| =
 * αβ (δ²/6)|G[q,q,q]| + O(δ⁴), and halving δ divides it by 4 (within
 * 10 %, asserted for δ = 0.2 → 0.1 → 0.05; the rounding error, near
 * 1e-16/δ, is negligible beside δ²/6·|G| ≈ 1e-5 here).  Softmax regression
 * with cross-entropy, k = 3. */
START_TEST(test_hf_error_order_delta_squared)
{
    pflref_run_result *re = run_case(softmax_case());
    double err[3];
    const double deltas[3] = {0.2, 0.1, 0.05};
    for (int k = 0; k < 3; k++) {
        tb_case *c = softmax_case();
        c->hyper.perfedavg.delta = deltas[k];
        c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_HF;
        pflref_run_result *rh = run_case(c);
        err[k] = 0.0;
        for (size_t p = 0; p < re->P; p++)
            err[k] = fmax(err[k], fabs(rh->w[p] - re->w[p]));
        pflref_run_result_free(rh);
    }
    ck_assert_msg(err[2] > 1e-9, "HF error %.3g too small to measure", err[2]);
    for (int k = 0; k < 2; k++) {
        const double ratio = err[k] / err[k + 1];
        ck_assert_msg(fabs(ratio - 4.0) <= 0.4,
                      "δ = %g → %g: error %.6g → %.6g, ratio %.4f (expected "
                      "≈ 4)", deltas[k], deltas[k + 1], err[k], err[k + 1],
                      ratio);
    }
    pflref_run_result_free(re);
}
END_TEST

/* The run of c (freed here) fails with EINVAL at `where`, and the message
 * contains in_message. */
static void expect_invalid(tb_case *c, const char *where,
                           const char *in_message)
{
    pflref_error err;
    tb_run_error(c, "perfedavg", PFLREF_EINVAL, &err);
    ck_assert_msg(strcmp(err.where, where) == 0, "where = \"%s\", expected "
                  "\"%s\" (%s)", err.where, where, err.message);
    ck_assert_msg(strstr(err.message, in_message) != NULL,
                  "message \"%s\" lacks \"%s\"", err.message, in_message);
    tb_free(c);
}

START_TEST(test_input_errors)
{
    tb_case *c = notes_case(NULL);
    c->hyper.perfedavg.alpha = NAN;
    notes_rounds(c, 1);
    expect_invalid(c, "algorithm.hyperparameters.alpha", "alpha");
    c = notes_case(NULL);
    c->hyper.perfedavg.beta = NAN;
    notes_rounds(c, 1);
    expect_invalid(c, "algorithm.hyperparameters.beta", "beta");
    c = notes_case(NULL);
    c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_HF;
    notes_rounds(c, 1);
    expect_invalid(c, "algorithm.hyperparameters.delta", "delta");
    /* four batches for client 1 */
    c = notes_case(NULL);
    tb_round(c, "0 1", SIX, "0 | 0 | 0 | 0");
    tb_post(c, "0", "0");
    expect_invalid(c, "schedule.rounds[0].batches[1]", "multiple of 3");
    /* a generated schedule with 4 steps: the message names its field */
    c = notes_case(NULL);
    tb_generate(c, 1, 4, 0);
    tb_generate_post(c, 1, 0);
    expect_invalid(c, "schedule.rounds[0].batches[0]", "schedule.local.steps");
    /* two post batches for one_alpha_step, one for alpha_then_beta */
    c = notes_case(NULL);
    tb_round(c, "0 1", SIX, SIX);
    tb_post(c, "0", "0 | 0");
    expect_invalid(c, "schedule.post[1]", "exactly 1 batch");
    c = notes_case(NULL);
    c->hyper.perfedavg.eval = PFLREF_PERFEDAVG_EVAL_ALPHA_THEN_BETA;
    notes_rounds(c, 1);
    expect_invalid(c, "schedule.post[0]", "exactly 2 batches");
    /* no post phase at all */
    c = notes_case(NULL);
    tb_round(c, "0 1", SIX, SIX);
    expect_invalid(c, "schedule.post", "post");
}
END_TEST

/* Divergence names round, client, step and the quantity: α = 1e308 makes
 * w̃ = 0 − 1e308·(−2) = +Inf at step 1; α = β = 1e300 keeps w̃ = 2e300,
 * q = 4e300, H q = 8e300 finite and overflows w at step 1. */
START_TEST(test_divergence)
{
    const double alphas[2] = {1e308, 1e300}, betas[2] = {0.5, 1e300};
    const char *names[2] = {"w_tilde", "w_local"};
    for (int k = 0; k < 2; k++) {
        tb_case *c = notes_case(NULL);
        c->hyper.perfedavg.alpha = alphas[k];
        c->hyper.perfedavg.beta = betas[k];
        notes_rounds(c, 1);
        pflref_error err;
        tb_run_error(c, "perfedavg", PFLREF_EDIVERGE, &err);
        ck_assert_int_eq(err.round, 0);
        ck_assert_int_eq(err.client, 0);
        ck_assert_int_eq(err.step, 1);
        ck_assert_msg(strstr(err.message, "round 0, client 0, local step 1") !=
                              NULL &&
                          strstr(err.message, names[k]) != NULL,
                      "message: %s", err.message);
        tb_free(c);
    }
    /* in the personalisation: θ = 0 − 1e308·(−2) overflows after round 0 */
    tb_case *c = notes_case(NULL);
    c->hyper.perfedavg.alpha = 1e308;
    tb_post(c, "0", "0");
    pflref_error err;
    tb_run_error(c, "perfedavg", PFLREF_EDIVERGE, &err);
    ck_assert_int_eq(err.client, 0);
    ck_assert_int_eq(err.step, 1);
    ck_assert_msg(strstr(err.message, "theta") != NULL &&
                      strstr(err.message, "post phase") != NULL,
                  "message: %s", err.message);
    tb_free(c);
}
END_TEST

/* Same case, same machine: bit-identical final state and trajectory. */
START_TEST(test_determinism)
{
    const int variants[3] = {PFLREF_PERFEDAVG_EXACT, PFLREF_PERFEDAVG_FO,
                             PFLREF_PERFEDAVG_HF};
    for (int v = 0; v < 3; v++) {
        tb_case *c = lin_case(0.1, 0.05, 0.001);
        c->hyper.perfedavg.variant = variants[v];
        pflref_trajectory t1, t2;
        pflref_run_result *r1 = tb_run_recorded(c, "perfedavg", &t1);
        pflref_run_result *r2 = tb_run_recorded(c, "perfedavg", &t2);
        ck_assert(memcmp(r1->w, r2->w, r1->P * sizeof(double)) == 0);
        ck_assert(memcmp(r1->v, r2->v, r1->N * r1->P * sizeof(double)) == 0);
        ck_assert_int_eq(t1.count, t2.count);
        ck_assert_int_eq(t1.nvalues, t2.nvalues);
        ck_assert(memcmp(t1.values, t2.values, t1.nvalues * sizeof(double)) ==
                  0);
        pflref_trajectory_free(&t1);
        pflref_trajectory_free(&t2);
        pflref_run_result_free(r1);
        pflref_run_result_free(r2);
        tb_free(c);
    }
}
END_TEST

/* The trace: per step w_tilde, hvp (exact, hf), w_local, numbered by the
 * local step; θ in the "finetune" phase; a formula on every step. */
/* ---- batch normalisation's running statistics (bn.running) ------------
 *
 * The mlp with bn of tests/test_bn_running.c: d = h = k = 1, squared loss,
 * ε = 0, ρ = 1/4; w = (W1, b1, γ, β, r_μ, r_v, W2, b2) = (2, 1/2, 1, 0, 0,
 * 1, 3/4, 1/10).  With ε = 0 the layer normalises a = W1 x + b1 exactly,
 * so ∂F/∂W1 = ∂F/∂b1 = 0: W1, b1 stay (up to the rounding of a sum that is
 * 0), and every training pass on a batch has the batch statistics of
 * a = 2x + 1/2 whatever point it is taken at (w, w̃ or w ± δq): the running
 * statistics count the passes.  Client 0's x = 1, 3, 2, 6, 7; client 1's
 * 1.5, −2, 0.5. */
#define PFA_BN_SPEC(variant)                                                 \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "          \
    "\"d\": 1, \"h\": 1, \"k\": 1, \"loss\": \"squared\", \"bn\": true, "     \
    "\"bn_eps\": 0, \"bn_momentum\": 0.25}, \"problem\": {\"clients\": "      \
    "[{\"X\": [[1], [3], [2], [6], [7]], \"y\": [0.5, -1.25, 2, 0.75, "       \
    "-0.5]}, {\"X\": [[1.5], [-2], [0.5]], \"y\": [1, 0.25, -0.75]}]}, "     \
    "\"init\": {\"kind\": \"given\", \"w\": [2, 0.5, 1, 0, 0, 1, 0.75, "      \
    "0.1]}, \"algorithm\": {\"name\": \"perfedavg\", \"hyperparameters\": "   \
    "{\"alpha\": 0.125, \"beta\": 0.0625, \"delta\": 0.5}, \"switches\": "    \
    "{\"perfedavg.variant\": \"" variant "\"}}, \"schedule\": {\"kind\": "     \
    "\"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0, 1], "     \
    "[2, 3, 4], [0, 1]]]}], \"post\": [[[2, 3, 4]], [[0, 1, 2]]]}}"
enum { BN_RMU = 4, BN_RV = 5, BN_P = 8 };

/* One local step on D = {x = 1, 3}, D′ = {2, 6, 7}, D″ = {1, 3}, from
 * r_μ = 0, r_v = 1, r ← (3/4) r + (1/4) stat (r_v with the unbiased
 * variance of a = 2x + 1/2):
 *   D:  μ = 9/2, 8    → r = (9/8, 11/4)
 *   D′: μ = 21/2, 28  → r = (111/32, 145/16)          FO stops here
 *   D″: μ = 9/2, 8    → r = (477/128, 563/64)         exact: one pass
 *   D″ again          → r = (2007/512, 2201/256)      HF: w + δq, w − δq
 * and w_1 = client 0's w (the one participant).  The personalisation's
 * pass moves θ_i's from w's: client 0 on {2, 6, 7} (21/2, 28), client 1 on
 * x = 1.5, −2, 0.5 (a = 7/2, −7/2, 3/2: μ = 1/2, unbiased variance 13).
 * A pass left out (D′ not moving w's buffers, D″ not counted, the
 * personalisation frozen) misses these by more than 1/10. */
START_TEST(test_bn_running_passes)
{
    /* req: perfedavg.alg1.l7, perfedavg.alg1.l8 */
    static const char *const spec_text[3] = {
        PFA_BN_SPEC("fo"), PFA_BN_SPEC("exact"), PFA_BN_SPEC("hf")};
    static const double want[3][2] = {{111.0 / 32.0, 145.0 / 16.0},
                                      {477.0 / 128.0, 563.0 / 64.0},
                                      {2007.0 / 512.0, 2201.0 / 256.0}};
    for (int q = 0; q < 3; q++) {
        pflref_spec *spec = tu_spec(spec_text[q]);
        pflref_run_result *res = tu_run(spec, NULL);
        pflref_spec_free(spec);
        ck_assert_uint_eq(res->P, BN_P);
        const double *w = res->w, *v0 = res->v, *v1 = res->v + BN_P;
        ck_assert_msg(fabs(w[BN_RMU] - want[q][0]) < 1e-13 &&
                          fabs(w[BN_RV] - want[q][1]) < 1e-13,
                      "variant %d: w's r_μ = %.17g, r_v = %.17g, expected "
                      "%.17g, %.17g", q, w[BN_RMU], w[BN_RV], want[q][0],
                      want[q][1]);
        const double m0 = 0.75 * want[q][0] + 0.25 * 10.5;
        const double v0w = 0.75 * want[q][1] + 0.25 * 28.0;
        const double m1 = 0.75 * want[q][0] + 0.25 * 0.5;
        const double v1w = 0.75 * want[q][1] + 0.25 * 13.0;
        ck_assert_msg(fabs(v0[BN_RMU] - m0) < 1e-13 &&
                          fabs(v0[BN_RV] - v0w) < 1e-13 &&
                          fabs(v1[BN_RMU] - m1) < 1e-13 &&
                          fabs(v1[BN_RV] - v1w) < 1e-13,
                      "variant %d: θ's running statistics (%.17g, %.17g), "
                      "(%.17g, %.17g), expected (%.17g, %.17g), (%.17g, "
                      "%.17g)", q, v0[BN_RMU], v0[BN_RV], v1[BN_RMU],
                      v1[BN_RV], m0, v0w, m1, v1w);
        pflref_run_result_free(res);
    }
}
END_TEST

/* bn.running = frozen: the buffers stay (r_μ = 0, r_v = 1) and every
 * parameter is update's bit for bit (a training forward normalises with
 * the batch statistics, never the running ones). */
START_TEST(test_bn_frozen_same_parameters)
{
    static const char text[] = PFA_BN_SPEC("exact");
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *upd = tu_run(spec, NULL);
    spec->hyper.bn.running = PFLREF_BN_RUNNING_FROZEN;
    pflref_run_result *frz = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert(frz->w[BN_RMU] == 0.0 && frz->w[BN_RV] == 1.0);
    ck_assert(upd->w[BN_RMU] != 0.0);
    for (size_t p = 0; p < BN_P; p++)
        if (p != BN_RMU && p != BN_RV)
            ck_assert_msg(memcmp(&upd->w[p], &frz->w[p], sizeof(double)) == 0,
                          "w[%zu]: update %.17g, frozen %.17g", p, upd->w[p],
                          frz->w[p]);
    pflref_run_result_free(upd);
    pflref_run_result_free(frz);
}
END_TEST

/* ---- the client optimizer (opt.*) ----------------------------------------
 *
 * One client, one local step, FO, on the linear problem, SGD with momentum
 * μ = 1/2 (no decay): the buffer starts at the first gradient it sees, so
 *   meta: w̃ = w − α g (plain), w_1 = w − β q (b = q, the first step)
 *   both: w̃ = w − α g (b = g), then b ← μ g + q, w_1 = w − β (μ g + q)
 * and the two differ by β μ g; plain SGD (μ = 0) makes opt_steps moot. */
START_TEST(test_opt_steps_momentum)
{
    /* req: perfedavg.alg1.l7, perfedavg.alg1.l8 */
    double w1[3][3];
    const int steps[3] = {PFLREF_PERFEDAVG_OPT_META, PFLREF_PERFEDAVG_OPT_BOTH,
                          PFLREF_PERFEDAVG_OPT_BOTH};
    for (int q = 0; q < 3; q++) {
        tb_case *c = lin_problem();
        tb_round(c, "0", "0 1 | 2 3 | 4");
        tb_post(c, "0", "0", "0");
        c->hyper.perfedavg.alpha = 0.25;
        c->hyper.perfedavg.beta = 0.125;
        c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_FO;
        c->hyper.perfedavg.opt_steps = steps[q];
        c->hyper.opt.momentum = q < 2 ? 0.5 : 0.0;
        pflref_run_result *res = run_case(c);
        memcpy(w1[q], res->w, sizeof w1[q]);
        pflref_run_result_free(res);
    }
    /* g = ∇f_0(0; {0, 1}) and q = ∇f_0(w̃; {2, 3}) from the plain run
     * (μ = 0, where both = meta = the paper's step): w_1 = −β q, w̃ = −α g */
    tb_case *c = lin_problem();
    tb_round(c, "0", "0 1 | 2 3 | 4");
    tb_post(c, "0", "0", "0");
    c->hyper.perfedavg.alpha = 0.25;
    c->hyper.perfedavg.beta = 0.125;
    c->hyper.perfedavg.variant = PFLREF_PERFEDAVG_FO;
    pflref_trajectory tj;
    pflref_run_result *plain = tb_run_recorded(c, "perfedavg", &tj);
    tb_free(c);
    const double *wt = find(&tj, PFLREF_EV_STEP, 0, 0, 1, "w_tilde");
    for (size_t p = 0; p < 3; p++) {
        const double g = -wt[p] / 0.25, qv = -plain->w[p] / 0.125;
        ck_assert_msg(memcmp(&w1[2][p], &plain->w[p], sizeof(double)) == 0,
                      "μ = 0 under both: w[%zu] %.17g, plain %.17g", p,
                      w1[2][p], plain->w[p]);
        ck_assert_msg(fabs(w1[0][p] + 0.125 * qv) < 1e-15,
                      "meta: w[%zu] = %.17g, expected −β q = %.17g", p,
                      w1[0][p], -0.125 * qv);
        ck_assert_msg(fabs(w1[1][p] + 0.125 * (0.5 * g + qv)) < 1e-15,
                      "both: w[%zu] = %.17g, expected −β (μ g + q) = %.17g",
                      p, w1[1][p], -0.125 * (0.5 * g + qv));
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(plain);
}
END_TEST

START_TEST(test_trace_records)
{
    tb_case *c = lin_case(0.1, 0.05, NAN);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "perfedavg", &tj);
    size_t steps = 0, notes = 0, thetas = 0;
    for (size_t r = 0; r < tj.count; r++) {
        const pflref_record *rec = &tj.records[r];
        if (rec->kind == PFLREF_EV_STEP && strcmp(rec->phase, "train") == 0) {
            ck_assert(rec->step == 1 || rec->step == 2);
            steps++;
        }
        if (rec->kind == PFLREF_EV_NOTE) {
            ck_assert_str_eq(rec->name, "hvp");
            notes++;
        }
        if (rec->kind == PFLREF_EV_STEP && strcmp(rec->phase, "finetune") == 0) {
            ck_assert_str_eq(rec->name, "theta");
            ck_assert_int_eq(rec->round, -1);
            thetas++;
        }
    }
    /* 4 participations × 2 steps × (w_tilde, w_local); one hvp per step;
     * one θ step per client */
    ck_assert_int_eq(steps, 16);
    ck_assert_int_eq(notes, 8);
    ck_assert_int_eq(thetas, 3);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

Suite *perfedavg_suite(void)
{
    Suite *s = suite_create("perfedavg");
    TCase *tc = tcase_create("perfedavg");
    tcase_add_loop_test(tc, test_golden_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_notes_exact);
    tcase_add_test(tc, test_notes_fo);
    tcase_add_test(tc, test_eval_steps);
    tcase_add_test(tc, test_weights);
    tcase_add_test(tc, test_hf_equals_exact_on_quadratic_losses);
    tcase_add_test(tc, test_fo_differs_by_hessian_term);
    tcase_add_test(tc, test_alpha0_is_fedavg);
    tcase_add_test(tc, test_hf_error_order_delta_squared);
    tcase_add_test(tc, test_input_errors);
    tcase_add_test(tc, test_divergence);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_trace_records);
    tcase_add_test(tc, test_bn_running_passes);
    tcase_add_test(tc, test_bn_frozen_same_parameters);
    tcase_add_test(tc, test_opt_steps_momentum);
    suite_add_tcase(s, tc);
    return s;
}
