/* tests/test_perfedavg.c: Per-FedAvg (ref/perfedavg.c).
 *
 * The worked example is shared/spec notes §4(g): f_1 = (2/2)(w − 1)²,
 * f_2 = (1/2)(w + 1)², α = 1/10, β = 1/2, τ = 2, w_0 = 0, both users,
 * uniform mean.  The spec holds α = 0.1 (the double nearest 1/10), so the
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
};

/* The notes' tolerance: α = 0.1 is 1/10 to within 5.6e-18, and every value
 * of the example is below 3 after at most five contracting steps. */
#define NOTES_TOL 1e-15

static pflref_spec *make_spec(const char *name, const char *model,
                              const char *clients, const char *hyper,
                              const char *switches, const char *schedule)
{
    char text[16384];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s},"
             " \"init\": {\"kind\": \"zeros\"},"
             " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {%s},"
             " \"switches\": {%s}},"
             " \"schedule\": %s}",
             model, clients, name, hyper, switches, schedule);
    return tu_spec(text);
}

static const char *const QUAD = "{\"kind\": \"quadratic\", \"d\": 1}";
static const char *const NOTES_CLIENTS =
    "[{\"a\": [2], \"c\": [1]}, {\"a\": [1], \"c\": [-1]}]";
#define SIX "[[0], [0], [0], [0], [0], [0]]"
#define ROUND2 "{\"clients\": [0, 1], \"batches\": [" SIX ", " SIX "]}"
static const char *const ONE_ROUND =
    "{\"kind\": \"given\", \"rounds\": [" ROUND2 "],"
    " \"post\": [[[0]], [[0]]]}";
static const char *const TWO_ROUNDS =
    "{\"kind\": \"given\", \"rounds\": [" ROUND2 ", " ROUND2 "],"
    " \"post\": [[[0]], [[0]]]}";
static const char *const NOTES_HYPER = "\"alpha\": 0.1, \"beta\": 0.5";

/* A linear model with minibatches (d = 2, bias, squared loss), three
 * clients; the same data as golden/perfedavg/make_data.py's. */
static const char *const LIN =
    "{\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"bias\": true}";
static const char *const LIN_CLIENTS =
    "[{\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238],"
    "          [-0.715, -0.426], [0.337, 1.129]],"
    "  \"y\": [-0.775, 1.409, 0.236, -1.118, 0.652]},"
    " {\"X\": [[-1.426, 0.357], [0.689, -0.942], [0.205, 1.318], [1.174, 0.463]],"
    "  \"y\": [0.518, -1.263, 0.947, -0.384]},"
    " {\"X\": [[0.473, 0.815], [-0.962, -0.218], [1.285, -0.637],"
    "          [-0.156, 1.442], [0.724, 0.091], [-1.093, 0.568]],"
    "  \"y\": [1.127, -0.469, 0.318, 0.875, -0.236, -0.912]}]";
/* Two rounds, A_0 = {0, 2}, A_1 = {1, 2}, τ = 2; the D′ batches (positions
 * 1 and 4 of each list) are what FedAvg takes in test_alpha0_is_fedavg. */
#define LIN_R0                                                               \
    "{\"clients\": [0, 2], \"batches\": ["                                   \
    "[[0, 1], [2, 3], [4], [1, 4], [0, 2, 3], [3]],"                         \
    "[[0, 1], [2, 3], [4, 5], [5, 2], [1], [0, 3, 4]]]}"
#define LIN_R1                                                               \
    "{\"clients\": [1, 2], \"batches\": ["                                   \
    "[[3, 0], [1, 2], [2], [0], [1, 3], [2, 0, 1]],"                         \
    "[[1, 3], [5, 0], [2, 4], [4], [0, 5], [3, 1]]]}"
#define LIN_POST "\"post\": [[[3, 4]], [[0, 2]], [[5, 1]]]"
static const char *const LIN_SCHED =
    "{\"kind\": \"given\", \"rounds\": [" LIN_R0 ", " LIN_R1 "], " LIN_POST "}";

static pflref_run_result *run_text(const char *model, const char *clients,
                                   const char *hyper, const char *switches,
                                   const char *sched)
{
    pflref_spec *spec = make_spec("perfedavg", model, clients, hyper,
                                  switches, sched);
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_spec_free(spec);
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

/* Run with a step-level trajectory into *tj (initialised here). */
static pflref_run_result *run_traced(pflref_spec *spec, pflref_trajectory *tj)
{
    pflref_trajectory_init(tj, PFLREF_RECORD_STEP);
    pflref_trace tr = {pflref_trajectory_emit, tj};
    pflref_run_result *res = tu_run(spec, &tr);
    ck_assert_int_eq(tj->failed, 0);
    return res;
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
    pflref_spec *spec = make_spec("perfedavg", QUAD, NOTES_CLIENTS,
                                  NOTES_HYPER, "", ONE_ROUND);
    pflref_trajectory tj;
    pflref_run_result *res = run_traced(spec, &tj);
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
    pflref_spec_free(spec);

    res = run_text(QUAD, NOTES_CLIENTS, NOTES_HYPER, "", TWO_ROUNDS);
    ck_assert_msg(fabs(res->w[0] - 178364013.0 / 1280000000.0) <= NOTES_TOL,
                  "w_2 = %.17g", res->w[0]);
    pflref_run_result_free(res);
}
END_TEST

/* Notes §4(g), FO: 0 → 0.8 → 0.96 and 0 → −0.45 → −0.6975, w_1 = 0.13125,
 * w_2 = 0.1537265625. */
START_TEST(test_notes_fo)
{
    pflref_spec *spec = make_spec("perfedavg", QUAD, NOTES_CLIENTS,
                                  NOTES_HYPER,
                                  "\"perfedavg.variant\": \"fo\"", TWO_ROUNDS);
    pflref_trajectory tj;
    pflref_run_result *res = run_traced(spec, &tj);
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
    pflref_spec_free(spec);
}
END_TEST

/* Notes §4(g): the pFedMe repository's evaluation at w_0 = 0 (α step, then
 * β step) gives (1.0, −0.55); the paper's one α step (0.2, −0.1). */
START_TEST(test_eval_steps)
{
    const char *two = "{\"kind\": \"given\", \"rounds\": [],"
                      " \"post\": [[[0], [0]], [[0], [0]]]}";
    const char *one = "{\"kind\": \"given\", \"rounds\": [],"
                      " \"post\": [[[0]], [[0]]]}";
    pflref_run_result *res = run_text(
        QUAD, NOTES_CLIENTS, NOTES_HYPER,
        "\"perfedavg.eval\": \"alpha_then_beta\"", two);
    ck_assert(fabs(res->v[0] - 1.0) <= NOTES_TOL);
    ck_assert(fabs(res->v[1] + 0.55) <= NOTES_TOL);
    pflref_run_result_free(res);
    res = run_text(QUAD, NOTES_CLIENTS, NOTES_HYPER, "", one);
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
    const char *clients = "[{\"a\": [2], \"c\": [1], \"n\": 1},"
                          " {\"a\": [1], \"c\": [-1], \"n\": 3}]";
    const char *sched = "{\"kind\": \"given\", \"rounds\": [" ROUND2 "],"
                        " \"post\": [[[0]], [[0]]]}";
    pflref_run_result *r1 = run_text(QUAD, clients, NOTES_HYPER,
                                     "\"perfedavg.weights\": \"samples\"",
                                     sched);
    pflref_run_result *r2 = run_text(QUAD, clients, NOTES_HYPER, "", sched);
    ck_assert_msg(fabs(r1->w[0] + 0.26688125) <= NOTES_TOL, "%.17g", r1->w[0]);
    ck_assert(fabs(r2->w[0] - 8977.0 / 80000.0) <= NOTES_TOL);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
}
END_TEST

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
    const char *quad2 = "{\"kind\": \"quadratic\", \"d\": 2}";
    const char *quad2_clients =
        "[{\"a\": [2.385, 0.75], \"c\": [1.5, -0.625]},"
        " {\"a\": [1.3, 3.1], \"c\": [-0.7, 0.45]}]";
    const char *models[2][3] = {
        {quad2, quad2_clients, TWO_ROUNDS},
        {LIN, LIN_CLIENTS, LIN_SCHED}};
    const char *hypers[2] = {"\"alpha\": 0.1, \"beta\": 0.25, \"delta\": 0.001",
                             "\"alpha\": 0.1, \"beta\": 0.05, \"delta\": 0.001"};
    for (int m = 0; m < 2; m++) {
        pflref_spec *se = make_spec("perfedavg", models[m][0], models[m][1],
                                    hypers[m], "", models[m][2]);
        pflref_spec *sh = make_spec("perfedavg", models[m][0], models[m][1],
                                    hypers[m], "\"perfedavg.variant\": \"hf\"",
                                    models[m][2]);
        pflref_trajectory te, th;
        pflref_run_result *re = run_traced(se, &te), *rh = run_traced(sh, &th);
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
        pflref_spec_free(se);
        pflref_spec_free(sh);
    }
}
END_TEST

/* One local step: exact − FO = β α H q.  Both runs compute the same w̃ and
 * q; exact takes w − β(q − α hv), FO w − β q, so the difference is β α hv
 * up to the roundings of α·hv, q − α hv, the two products by β, the two
 * subtractions from w_0 = 0 and the difference, each at most ½ ulp of a
 * number below M = max(|w_exact|, |w_fo|, βα|hv|) (w_0 = 0, so β|q| =
 * |w_fo|): a few ulps of M; 4·DBL_EPSILON·M (8 u·M) is asserted. */
START_TEST(test_fo_differs_by_hessian_term)
{
    const char *sched = "{\"kind\": \"given\", \"rounds\": ["
                        "{\"clients\": [0], \"batches\": ["
                        "[[0, 1], [2, 3], [4, 1]]]}], \"post\": "
                        "[[[0]], [[0]], [[0]]]}";
    const char *hyper = "\"alpha\": 0.3, \"beta\": 0.2";
    pflref_spec *se = make_spec("perfedavg", LIN, LIN_CLIENTS, hyper, "",
                                sched);
    pflref_spec *sf = make_spec("perfedavg", LIN, LIN_CLIENTS, hyper,
                                "\"perfedavg.variant\": \"fo\"", sched);
    pflref_trajectory te, tf;
    pflref_run_result *re = run_traced(se, &te), *rf = run_traced(sf, &tf);
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
    pflref_spec_free(se);
    pflref_spec_free(sf);
}
END_TEST

/* α = 0: w̃ = w, the Hessian term vanishes, and every variant's step is
 * w ← w − β ∇f(w; D′): FedAvg with η = β, uniform weights and the D′
 * batches, bit for bit (the same operations in the same order). */
START_TEST(test_alpha0_is_fedavg)
{
    const char *fedavg_sched =
        "{\"kind\": \"given\", \"rounds\": ["
        "{\"clients\": [0, 2], \"batches\": [[[2, 3], [0, 2, 3]],"
        " [[2, 3], [1]]]},"
        "{\"clients\": [1, 2], \"batches\": [[[1, 2], [1, 3]],"
        " [[5, 0], [0, 5]]]}]}";
    pflref_spec *sa = make_spec("fedavg", LIN, LIN_CLIENTS, "\"eta\": 0.05",
                                "\"fedavg.weights\": \"uniform\"",
                                fedavg_sched);
    pflref_run_result *ra = tu_run(sa, NULL);
    const char *variants[3] = {"exact", "fo", "hf"};
    for (int v = 0; v < 3; v++) {
        char sw[64];
        snprintf(sw, sizeof sw, "\"perfedavg.variant\": \"%s\"", variants[v]);
        pflref_run_result *rp = run_text(
            LIN, LIN_CLIENTS, "\"alpha\": 0, \"beta\": 0.05, \"delta\": 0.01",
            sw, LIN_SCHED);
        for (size_t p = 0; p < ra->P; p++)
            ck_assert_msg(memcmp(&ra->w[p], &rp->w[p], sizeof(double)) == 0,
                          "%s, w[%zu]: fedavg %.17g, perfedavg %.17g",
                          variants[v], p, ra->w[p], rp->w[p]);
        pflref_run_result_free(rp);
    }
    pflref_run_result_free(ra);
    pflref_spec_free(sa);
}
END_TEST

/* HF's error on a non-quadratic loss is O(δ²): with g(w + εq) = g + εHq +
 * (ε²/2) T[q,q] + (ε³/6) G[q,q,q] + ..., the central difference is
 * Hq + (δ²/6) G[q,q,q] + O(δ⁴), so after one step |w_hf − w_exact| =
 * αβ (δ²/6)|G[q,q,q]| + O(δ⁴), and halving δ divides it by 4 (within
 * 10 %, asserted for δ = 0.2 → 0.1 → 0.05; the rounding error, near
 * 1e-16/δ, is negligible beside δ²/6·|G| ≈ 1e-5 here).  Softmax regression
 * with cross-entropy, k = 3. */
START_TEST(test_hf_error_order_delta_squared)
{
    const char *sm = "{\"kind\": \"softmax\", \"d\": 2, \"k\": 3, \"bias\": true}";
    const char *clients =
        "[{\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
        "  \"y\": [0, 2, 1]}]";
    const char *sched = "{\"kind\": \"given\", \"rounds\": ["
                        "{\"clients\": [0], \"batches\": [[[0, 1], [1, 2], "
                        "[2, 0]]]}], \"post\": [[[0]]]}";
    const char *init_hyper = "\"alpha\": 0.5, \"beta\": 0.5";
    pflref_run_result *re = run_text(sm, clients, init_hyper, "", sched);
    double err[3];
    const double deltas[3] = {0.2, 0.1, 0.05};
    for (int k = 0; k < 3; k++) {
        char hyper[128];
        snprintf(hyper, sizeof hyper, "%s, \"delta\": %.17g", init_hyper,
                 deltas[k]);
        pflref_run_result *rh = run_text(sm, clients, hyper,
                                         "\"perfedavg.variant\": \"hf\"",
                                         sched);
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

/* Run spec text that must fail at run time with EINVAL at `where`. */
static void expect_invalid(const char *hyper, const char *switches,
                           const char *sched, const char *where,
                           const char *in_message)
{
    pflref_spec *spec;
    pflref_error err;
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s},"
             " \"algorithm\": {\"name\": \"perfedavg\","
             " \"hyperparameters\": {%s}, \"switches\": {%s}},"
             " \"schedule\": %s}",
             QUAD, NOTES_CLIENTS, hyper, switches, sched);
    pflref_status st = tu_parse(text, &spec, &err);
    if (st == PFLREF_OK) {
        tu_run_error(spec, PFLREF_EINVAL, &err);
        pflref_spec_free(spec);
    } else {
        ck_assert_int_eq(st, PFLREF_EINVAL);
    }
    ck_assert_msg(strcmp(err.where, where) == 0, "where = \"%s\", expected "
                  "\"%s\" (%s)", err.where, where, err.message);
    ck_assert_msg(strstr(err.message, in_message) != NULL,
                  "message \"%s\" lacks \"%s\"", err.message, in_message);
}

START_TEST(test_input_errors)
{
    expect_invalid("\"beta\": 0.5", "", ONE_ROUND,
                   "algorithm.hyperparameters.alpha", "alpha");
    expect_invalid("\"alpha\": 0.1", "", ONE_ROUND,
                   "algorithm.hyperparameters.beta", "beta");
    expect_invalid(NOTES_HYPER, "\"perfedavg.variant\": \"hf\"", ONE_ROUND,
                   "algorithm.hyperparameters.delta", "delta");
    /* four batches for client 1 */
    expect_invalid(NOTES_HYPER, "",
                   "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1],"
                   " \"batches\": [" SIX ", [[0], [0], [0], [0]]]}],"
                   " \"post\": [[[0]], [[0]]]}",
                   "schedule.rounds[0].batches[1]", "multiple of 3");
    /* a generated schedule with 4 steps: the message names its field */
    expect_invalid(NOTES_HYPER, "",
                   "{\"kind\": \"generate\", \"rounds\": 1,"
                   " \"local\": {\"steps\": 4}, \"post\": {\"steps\": 1}}",
                   "schedule.rounds[0].batches[0]", "schedule.local.steps");
    /* two post batches for one_alpha_step, one for alpha_then_beta */
    expect_invalid(NOTES_HYPER, "",
                   "{\"kind\": \"given\", \"rounds\": [" ROUND2 "],"
                   " \"post\": [[[0]], [[0], [0]]]}",
                   "schedule.post[1]", "exactly 1 batch");
    expect_invalid(NOTES_HYPER, "\"perfedavg.eval\": \"alpha_then_beta\"",
                   ONE_ROUND, "schedule.post[0]", "exactly 2 batches");
    /* no post phase at all */
    expect_invalid(NOTES_HYPER, "",
                   "{\"kind\": \"given\", \"rounds\": [" ROUND2 "]}",
                   "schedule.post", "post");
}
END_TEST

/* Divergence names round, client, step and the quantity: α = 1e308 makes
 * w̃ = 0 − 1e308·(−2) = +Inf at step 1; α = β = 1e300 keeps w̃ = 2e300,
 * q = 4e300, H q = 8e300 finite and overflows w at step 1. */
START_TEST(test_divergence)
{
    const char *hypers[2] = {"\"alpha\": 1e308, \"beta\": 0.5",
                             "\"alpha\": 1e300, \"beta\": 1e300"};
    const char *names[2] = {"w_tilde", "w_local"};
    for (int k = 0; k < 2; k++) {
        pflref_spec *spec = make_spec("perfedavg", QUAD, NOTES_CLIENTS,
                                      hypers[k], "", ONE_ROUND);
        pflref_error err;
        tu_run_error(spec, PFLREF_EDIVERGE, &err);
        ck_assert_int_eq(err.round, 0);
        ck_assert_int_eq(err.client, 0);
        ck_assert_int_eq(err.step, 1);
        ck_assert_msg(strstr(err.message, "round 0, client 0, local step 1") !=
                              NULL &&
                          strstr(err.message, names[k]) != NULL,
                      "message: %s", err.message);
        pflref_spec_free(spec);
    }
    /* in the personalisation: θ = 0 − 1e308·(−2) overflows after round 0 */
    pflref_spec *spec = make_spec(
        "perfedavg", QUAD, NOTES_CLIENTS, "\"alpha\": 1e308, \"beta\": 0.5", "",
        "{\"kind\": \"given\", \"rounds\": [], \"post\": [[[0]], [[0]]]}");
    pflref_error err;
    tu_run_error(spec, PFLREF_EDIVERGE, &err);
    ck_assert_int_eq(err.client, 0);
    ck_assert_int_eq(err.step, 1);
    ck_assert_msg(strstr(err.message, "theta") != NULL &&
                      strstr(err.message, "post phase") != NULL,
                  "message: %s", err.message);
    pflref_spec_free(spec);
}
END_TEST

/* Same spec, same machine: bit-identical final state and trajectory. */
START_TEST(test_determinism)
{
    const char *variants[3] = {"\"perfedavg.variant\": \"exact\"",
                               "\"perfedavg.variant\": \"fo\"",
                               "\"perfedavg.variant\": \"hf\""};
    for (int v = 0; v < 3; v++) {
        pflref_spec *spec = make_spec(
            "perfedavg", LIN, LIN_CLIENTS,
            "\"alpha\": 0.1, \"beta\": 0.05, \"delta\": 0.001", variants[v],
            LIN_SCHED);
        pflref_trajectory t1, t2;
        pflref_run_result *r1 = run_traced(spec, &t1);
        pflref_run_result *r2 = run_traced(spec, &t2);
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
        pflref_spec_free(spec);
    }
}
END_TEST

/* The trace: per step w_tilde, hvp (exact, hf), w_local, numbered by the
 * local step; θ in the "finetune" phase; a formula on every step. */
START_TEST(test_trace_records)
{
    pflref_spec *spec = make_spec("perfedavg", LIN, LIN_CLIENTS,
                                  "\"alpha\": 0.1, \"beta\": 0.05", "",
                                  LIN_SCHED);
    pflref_trajectory tj;
    pflref_run_result *res = run_traced(spec, &tj);
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
    pflref_spec_free(spec);
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
    suite_add_tcase(s, tc);
    return s;
}
