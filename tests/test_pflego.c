/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_pflego.c: PFLEGO (ref/algorithms/pflego.c).
 *
 * Example B of shared/spec notes-pflego-fedalt-fedsim-fedrep.md §2.10: the
 * scalar network ŷ = w_i·(θ·x) (an mlp with d = h = k = 1, identity
 * activation, no biases; parameters (θ, w)), ½(ŷ − y)², four clients with
 * N = (2, 3, 1, 2), α = N_i/N, I = 4.  Its two-round trajectories are the
 * golden vectors in golden/pflego; here: Proposition 1 by exact enumeration
 * of every client set, the O(1) body passes, τ = 1 as plain SGD on L, the
 * Adam server's first step, and the input checks.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

static const size_t B_N[4] = {2, 3, 1, 2};

/* Example B's network: ŷ = w·(θ·x), an mlp with d = h = k = 1, the
 * identity activation and no biases; parameters (θ, w). */
static pflref_model b_model(void)
{
    return tb_mlp(PFLREF_LOSS_HALF_SQUARED, 1, 1, 1, PFLREF_ACT_IDENTITY, 0,
                  0);
}

/* Example B's four clients, the head personal, w⁰ = (θ, w) = (1, 1/2),
 * ρ = 1/20, β = 1/10. */
static tb_case *b_problem(void)
{
    const pflref_model m = b_model();
    tb_case *c = tb_new(&m, 4);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){2, 3});
    tb_train(c, 1, 3, (const double[]){1, 2, 3}, (const double[]){-1, -1, -2});
    tb_train(c, 2, 1, (const double[]){1}, (const double[]){1});
    tb_train(c, 3, 2, (const double[]){2, 1}, (const double[]){1, 0});
    tb_split(c, "head");
    tb_w0(c, (const double[]){1, 0.5});
    c->hyper.rho = 0.05;
    c->hyper.pflego.beta = 0.1;
    return c;
}

/* The switches a test varies (0: the paper's reading). */
typedef struct {
    int head_step, theta_weights, server;
} b_switches;

static const b_switches PAPER = {0, 0, 0};

/* "0 … n−1 | … " (tau full batches) into buf. */
static void full_batches(char *buf, size_t size, size_t n, size_t tau)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t q = 0; q < tau; q++) {
        len += (size_t)snprintf(buf + len, size - len, "%s", q ? " | " : "");
        for (size_t e = 0; e < n; e++)
            len += (size_t)snprintf(buf + len, size - len, "%s%zu",
                                    e ? " " : "", e);
    }
}

/* One round of Example B with client set S (|S| = r ≤ 2), τ full-batch
 * steps, the switches sw. */
static tb_case *b_case(const size_t *S, size_t r, size_t tau,
                       const b_switches *sw)
{
    tb_case *c = b_problem();
    c->hyper.pflego.head_step = sw->head_step;
    c->hyper.pflego.theta_weights = sw->theta_weights;
    c->hyper.pflego.server = sw->server;
    static char batches[2][1 << 14];
    char clients[64] = "";
    size_t lc = 0;
    ck_assert(r >= 1 && r <= 2);
    for (size_t j = 0; j < r; j++) {
        full_batches(batches[j], sizeof batches[j], B_N[S[j]], tau);
        lc += (size_t)snprintf(clients + lc, sizeof clients - lc, "%s%zu",
                               j ? " " : "", S[j]);
    }
    if (r == 1)
        tb_round(c, clients, batches[0]);
    else
        tb_round(c, clients, batches[0], batches[1]);
    return c;
}

/* The record (event, client, step, name) of a trajectory, or NULL. */
static const double *find(const pflref_trajectory *tj, pflref_event_kind ev,
                          long client, long step, const char *name)
{
    for (size_t j = 0; j < tj->count; j++) {
        const pflref_record *r = &tj->records[j];
        if (r->kind == ev && r->client == client && r->step == step &&
            strcmp(r->name, name) == 0)
            return tj->values + r->offset;
    }
    return NULL;
}

/* One round of Example B; tj records every event. */
static pflref_run_result *b_run(const size_t *S, size_t r, size_t tau,
                                const b_switches *sw, pflref_trajectory *tj)
{
    tb_case *c = b_case(S, r, tau, sw);
    pflref_run_result *res = tb_run_recorded(c, "pflego", tj);
    tb_free(c);
    return res;
}

/* ∇L at (θ, W̃_1..W̃_I), by another path than PFLEGO's: every client (also
 * the unsampled ones) takes its τ − 1 cheap steps with the full model
 * gradient (no cached features), then ∇_θ L = Σ α_i ∇_θ ℓ_i and
 * ∂L/∂W_i = α_i ∇_W ℓ_i. */
static void full_gradient(size_t tau, double *grad_theta, double dW[4])
{
    tb_case *c = b_problem();
    const pflref_problem *pr = c->problem;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&pr->model, 3);
    *grad_theta = 0.0;
    for (size_t i = 0; i < 4; i++) {
        double x[2] = {1.0, 0.5}, g[2];
        for (size_t q = 1; q < tau; q++) {
            ck_assert_int_eq(pflref_model_grad(&pr->model, x,
                                               &pr->clients[i].train, NULL,
                                               B_N[i], ws, g, NULL),
                             PFLREF_OK);
            x[1] -= 0.1 * g[1];
        }
        ck_assert_int_eq(pflref_model_grad(&pr->model, x,
                                           &pr->clients[i].train, NULL,
                                           B_N[i], ws, g, NULL),
                         PFLREF_OK);
        const double alpha = (double)B_N[i] / 8.0;
        *grad_theta += alpha * g[0];
        dW[i] = alpha * g[1];
    }
    pflref_model_workspace_free(ws);
    tb_free(c);
}

/* Proposition 1 (notes §2.6) by exact enumeration of the C(4, 2) = 6 client
 * sets, at θ = 1, w_i = 1/2, τ = 3, β = 1/10, ρ = 1/20:
 *   E[ĝ_θ] = ∇_θ L = −119093039/207360000 for α_i = N_i/N; the code's
 *   sampled-normalised weights are biased (mean −1.1461438342);
 *   the head estimate (W̃_i − W_i^{t+1}) / ρ has expectation ∂L/∂W_i only
 *   with pflego.head_step = exact_alpha; with the seed's step it is
 *   (1/α_i) ∂L/∂W_i;
 *   Var(ĝ_θ) = the Lemma's (I − r)/(r(I − 1)) · (1/I) Σ ‖b_i − b̄‖²,
 *   b_i = I α_i g_i (0.1271709373363676). */
START_TEST(test_proposition1_enumeration)
{
    /* req: pflego.prop1, pflego.alg1.l8 */
    double grad_theta, dW[4];
    full_gradient(3, &grad_theta, dW);
    const double exact_theta = -119093039.0 / 207360000.0;
    const double exact_dW[4] = {-99.0 / 256, 128.0 / 225, -81.0 / 1600,
                                9.0 / 256};
    const b_switches modes[3] = {
        {.head_step = PFLREF_PFLEGO_HEAD_EXACT_ALPHA},
        PAPER,
        {.theta_weights = PFLREF_PFLEGO_THETA_SAMPLED_NORMALISED}};
    for (int mode = 0; mode < 3; mode++) {
        double e_theta = 0.0, e_sq = 0.0, e_W[4] = {0}, subsets = 0;
        for (size_t a = 0; a < 4; a++)
            for (size_t b = a + 1; b < 4; b++) {
                const size_t S[2] = {a, b};
                pflref_trajectory tj;
                pflref_run_result *res = b_run(S, 2, 3, &modes[mode], &tj);
                const double *ghat = find(&tj, PFLREF_EV_NOTE, -1, -1,
                                          "g_hat");
                ck_assert_ptr_nonnull(ghat);
                e_theta += ghat[0];
                e_sq += ghat[0] * ghat[0];
                for (size_t j = 0; j < 2; j++) {
                    const double *wt = find(&tj, PFLREF_EV_STEP, (long)S[j],
                                            2, "w_local");
                    const double *wn = find(&tj, PFLREF_EV_CLIENT_END,
                                            (long)S[j], -1, "v");
                    e_W[S[j]] += (wt[1] - wn[1]) / 0.05;
                }
                subsets++;
                pflref_trajectory_free(&tj);
                pflref_run_result_free(res);
            }
        e_theta /= subsets;
        const double var = e_sq / subsets - e_theta * e_theta;
        printf("PFLEGO Proposition 1, %s: E[g_hat_theta] over the %.0f "
               "client sets = %.17g; grad_theta L = %.17g (exact %.17g)\n",
               mode == 0 ? "exact_alpha" : mode == 1 ? "seed" : "code weights",
               subsets, e_theta, grad_theta, exact_theta);
        if (mode < 2) {
            ck_assert_msg(fabs(e_theta - grad_theta) < 1e-15 &&
                              fabs(grad_theta - exact_theta) < 1e-15,
                          "E %.17g, grad %.17g", e_theta, grad_theta);
            ck_assert_msg(fabs(var - 0.1271709373363676) < 1e-14,
                          "variance %.17g", var);
        } else {
            ck_assert_msg(fabs(e_theta - -1.1461438342) < 1e-10 &&
                              fabs(e_theta - grad_theta) > 0.5,
                          "code-style mean %.17g", e_theta);
        }
        for (size_t i = 0; mode < 2 && i < 4; i++) {
            const double E = e_W[i] / subsets, alpha = (double)B_N[i] / 8.0;
            printf("  client %zu: E[head estimate] = %.17g; dL/dW_i = %.17g "
                   "(exact %.17g); ratio %.17g\n", i, E, dW[i], exact_dW[i],
                   E / dW[i]);
            ck_assert(fabs(dW[i] - exact_dW[i]) < 1e-15);
            if (mode == 0)       /* exact_alpha: unbiased */
                ck_assert_msg(fabs(E - dW[i]) < 1e-14, "client %zu", i);
            else                 /* seed: the factor 1/α_i */
                ck_assert_msg(fabs(E - dW[i] / alpha) < 1e-13, "client %zu",
                              i);
        }
    }
}
END_TEST

/* The paper's O(1) claim: every sampled client makes one body forward and
 * one body backward pass per round, whatever τ (NOTE body_passes). */
START_TEST(test_body_passes)
{
    /* req: pflego.alg1.l3, pflego.alg1.l5 */
    const size_t taus[] = {1, 5, 50};
    for (size_t k = 0; k < 3; k++) {
        pflref_trajectory tj;
        const size_t S[2] = {1, 3};
        pflref_run_result *res = b_run(S, 2, taus[k], &PAPER, &tj);
        size_t cheap = 0;
        for (size_t j = 0; j < 2; j++) {
            const double *bp = find(&tj, PFLREF_EV_NOTE, (long)S[j], -1,
                                    "body_passes");
            ck_assert_ptr_nonnull(bp);
            ck_assert_double_eq(bp[0], 1.0);
            ck_assert_double_eq(bp[1], 1.0);
        }
        for (size_t j = 0; j < tj.count; j++)
            cheap += tj.records[j].kind == PFLREF_EV_STEP;
        ck_assert_uint_eq(cheap, 2 * taus[k]);   /* τ head updates each */
        printf("PFLEGO tau = %zu: body passes per client and round "
               "[forward, backward] = [1, 1]\n", taus[k]);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(res);
    }
}
END_TEST

/* The result of `pflref run` shows the same body passes for τ = 1 and
 * τ = 50: docs/examples/pflego-tau50.json (an mlp with ReLU, a generated
 * schedule of 3 rounds, 2 of 3 clients each) run as shipped and with
 * "steps": 1; every body_passes record of both results is [1, 1]. */
START_TEST(test_result_body_passes)
{
    char *dir = tu_tmpdir(), *spec = tu_repo_path("docs/examples/pflego-tau50.json");
    char *text = tu_read(spec);
    ck_assert_ptr_nonnull(text);
    char *one = strstr(text, "\"steps\": 50");
    ck_assert_ptr_nonnull(one);
    char path1[4096], out[2][4096], args[8192];
    snprintf(path1, sizeof path1, "%s/tau1.json", dir);
    memcpy(one, "\"steps\":  1", 11);  /* same length: 11 bytes */
    ck_assert_int_eq(tu_write(path1, text), 0);
    const char *specs[2] = {spec, path1};
    for (int k = 0; k < 2; k++) {
        snprintf(out[k], sizeof out[k], "%s/result%d.json", dir, k);
        snprintf(args, sizeof args, "run '%s' -o '%s'", specs[k], out[k]);
        char *errout = NULL;
        const int rc = tu_cli(args, NULL, &errout);
        ck_assert_msg(rc == 0, "pflref %s: exit %d: %s", args, rc, errout);
        free(errout);
        json_error_t jerr;
        json_t *r = json_load_file(out[k], 0, &jerr);
        ck_assert_ptr_nonnull(r);
        json_t *traj = json_object_get(r, "trajectory"), *rec;
        size_t j, found = 0;
        json_array_foreach(traj, j, rec) {
            if (strcmp(json_string_value(json_object_get(rec, "name")),
                       "body_passes") != 0)
                continue;
            json_t *v = json_object_get(rec, "value");
            ck_assert_double_eq(json_real_value(json_array_get(v, 0)), 1.0);
            ck_assert_double_eq(json_real_value(json_array_get(v, 1)), 1.0);
            found++;
        }
        ck_assert_uint_eq(found, 6);   /* 3 rounds × 2 clients */
        json_decref(r);
    }
    free(text);
    free(spec);
    free(dir);
}
END_TEST

/* --trace prints step 3's cache Φ_i = φ(X_i; θ_t) (an intermediate,
 * recorded at no level): golden/pflego/worked-notes-b-seed.json's body is
 * one identity unit without bias, θ_0 = 1, so round 0's caches are the
 * inputs themselves: client 0 X = (1, 2), client 1 X = (1, 2, 3). */
START_TEST(test_trace_cache)
{
    /* req: pflego.alg1.l3 */
    char *dir = tu_tmpdir();
    char *vec = tu_repo_path("golden/pflego/worked-notes-b-seed.json");
    char args[4096];
    snprintf(args, sizeof args, "run --trace '%s' -o '%s/r.json'", vec, dir);
    char *errout = NULL;
    ck_assert_int_eq(tu_cli(args, NULL, &errout), 0);
    const char *want[] = {"(client 0) Phi = [1.0, 2.0]",
                          "(client 1) Phi = [1.0, 2.0, 3.0]"};
    for (size_t k = 0; k < 2; k++)
        ck_assert_msg(strstr(errout, want[k]) != NULL,
                      "the trace lacks \"%s\"", want[k]);
    free(errout);
    free(vec);
    free(dir);
}
END_TEST

/* τ = 1 with exact_alpha is plain client-sampled SGD on L over the whole
 * vector (θ, W_1..W_I): x ← x − ρ (I/r) Σ_{i∈S} α_i ∇ℓ_i(x), the θ part
 * summed and each sampled head its own term; unsampled heads keep w⁰. */
START_TEST(test_tau1_is_sgd)
{
    /* req: pflego.alg1.l4, pflego.alg1.l6 */
    pflref_trajectory tj;
    const size_t S[2] = {0, 2};
    const b_switches exact = {.head_step = PFLREF_PFLEGO_HEAD_EXACT_ALPHA};
    pflref_run_result *res = b_run(S, 2, 1, &exact, &tj);
    double grad_theta, dW[4];
    full_gradient(1, &grad_theta, dW);
    /* only the sampled clients' θ gradients: recompute Σ_{i∈S} α_i g_i */
    tb_case *c = b_problem();
    const pflref_problem *pr = c->problem;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&pr->model, 3);
    double sum_theta = 0.0;
    for (size_t j = 0; j < 2; j++) {
        double x[2] = {1.0, 0.5}, g[2];
        pflref_model_grad(&pr->model, x, &pr->clients[S[j]].train, NULL,
                          B_N[S[j]], ws, g, NULL);
        sum_theta += (double)B_N[S[j]] / 8.0 * g[0];
    }
    const double theta1 = 1.0 - 0.05 * 2.0 * sum_theta;
    ck_assert_double_eq_tol(res->w[0], theta1, 1e-15);
    for (size_t i = 0; i < 4; i++) {
        const int sampled = i == 0 || i == 2;
        const double want = sampled ? 0.5 - 0.05 * 2.0 * dW[i] : 0.5;
        ck_assert_double_eq_tol(res->v[2 * i + 1], want, 1e-15);
        ck_assert_double_eq_tol(res->v[2 * i], theta1, 1e-15);
    }
    pflref_model_workspace_free(ws);
    tb_free(c);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
}
END_TEST

/* Example B's client 0 alone, τ = 3 (two cheap head steps), with the
 * client head optimizer set by momentum μ and weight decay λ; tj records
 * the run. */
static pflref_run_result *b_opt_run(double mu, double lambda,
                                    pflref_trajectory *tj)
{
    const size_t S[1] = {0};
    tb_case *c = b_case(S, 1, 3, &PAPER);
    c->hyper.opt.momentum = mu;
    c->hyper.opt.weight_decay = lambda;
    pflref_run_result *res = tb_run_recorded(c, "pflego", tj);
    tb_free(c);
    return res;
}

/* The client head optimizer takes the cheap steps on the head alone.
 * From the plain run (G_1 = ∇_W ℓ at w⁰ = 1/2, G_2 at w_1 = w⁰ − β G_1,
 * read back from its two cheap steps):
 *   momentum μ = 1/2: w_1 = w⁰ − β G_1 (b = G_1), w_2 = w_1 − β (μ G_1 +
 *     G_2) (b ← μ b + G_2, the gradient at the same w_1);
 *   weight decay λ = 1/4 (no momentum): w_1 = w⁰ − β (G_1 + λ w⁰);
 * θ = 1 throughout the cheap steps (neither momentum nor decay reaches
 * the body), and the last head step stays ρ (I/r) G_i (its own step size
 * ρ·4, not β, on the joint gradient's head entry). */
START_TEST(test_head_optimizer)
{
    /* req: pflego.alg1.l4, pflego.alg1.l6 */
    pflref_trajectory tp, tm, td;
    pflref_run_result *rp = b_opt_run(0.0, 0.0, &tp);
    pflref_run_result *rm = b_opt_run(0.5, 0.0, &tm);
    pflref_run_result *rd = b_opt_run(0.0, 0.25, &td);
    const double beta = 0.1, w0 = 0.5;
    const double *p1 = find(&tp, PFLREF_EV_STEP, 0, 1, "w_local");
    const double *p2 = find(&tp, PFLREF_EV_STEP, 0, 2, "w_local");
    const double *m1 = find(&tm, PFLREF_EV_STEP, 0, 1, "w_local");
    const double *m2 = find(&tm, PFLREF_EV_STEP, 0, 2, "w_local");
    const double *m3 = find(&tm, PFLREF_EV_STEP, 0, 3, "w_local");
    const double *gm = find(&tm, PFLREF_EV_NOTE, 0, 3, "g");
    const double *d1 = find(&td, PFLREF_EV_STEP, 0, 1, "w_local");
    ck_assert(p1 && p2 && m1 && m2 && m3 && gm && d1);
    const double G1 = (w0 - p1[1]) / beta, G2 = (p1[1] - p2[1]) / beta;
    ck_assert(G1 != 0.0 && G2 != 0.0);
    ck_assert_double_eq_tol(m1[1], p1[1], 1e-15);
    ck_assert_double_eq_tol(m2[1], m1[1] - beta * (0.5 * G1 + G2), 1e-14);
    ck_assert_double_eq_tol(d1[1], w0 - beta * (G1 + 0.25 * w0), 1e-15);
    ck_assert(m1[0] == 1.0 && m2[0] == 1.0 && d1[0] == 1.0);
    /* step 6: W_i ← W̃_i − ρ (I/r) G_i = W̃_i − 0.05 · 4 · G_i */
    ck_assert_double_eq_tol(m3[1], m2[1] - 0.05 * 4.0 * gm[1], 1e-14);
    ck_assert(fabs(m2[1] - p2[1]) > 1e-3);
    pflref_trajectory_free(&tp);
    pflref_trajectory_free(&tm);
    pflref_trajectory_free(&td);
    pflref_run_result_free(rp);
    pflref_run_result_free(rm);
    pflref_run_result_free(rd);
}
END_TEST

/* The client-optimizer vector (golden/pflego/make_optim.py) reproduces. */
START_TEST(test_golden_optim)
{
    tu_assert_golden("golden/pflego/worked-sgd-momentum-decay-client.json");
}
END_TEST

/* Adam (pflego.server = adam): the first step has m̂ = ĝ and v̂ = ĝ², so
 * θ₁ = θ₀ − ρ ĝ / (|ĝ| + 10⁻⁸). */
START_TEST(test_adam_first_step)
{
    pflref_trajectory tj;
    const size_t S[2] = {0, 1};
    const b_switches adam = {.server = PFLREF_PFLEGO_SERVER_ADAM};
    pflref_run_result *res = b_run(S, 2, 3, &adam, &tj);
    const double *ghat = find(&tj, PFLREF_EV_NOTE, -1, -1, "g_hat");
    const double want = 1.0 - 0.05 * ghat[0] / (fabs(ghat[0]) + 1e-8);
    ck_assert_double_eq_tol(res->w[0], want, 1e-15);
    /* the head step never goes through Adam: the SGD run's heads */
    pflref_trajectory tj2;
    pflref_run_result *sgd = b_run(S, 2, 3, &PAPER, &tj2);
    ck_assert_double_eq(res->v[1], sgd->v[1]);
    ck_assert_double_eq(res->v[3], sgd->v[3]);
    pflref_trajectory_free(&tj);
    pflref_trajectory_free(&tj2);
    pflref_run_result_free(res);
    pflref_run_result_free(sgd);
}
END_TEST

/* One client (X = (1, 2), y = (0.5, 1)) of model m, split `split`, one
 * round with the batches `batches`; ρ = β = 0.1.  PFLEGO must refuse it
 * with EINVAL at `where`. */
static void expect_error(const pflref_model *m, const char *split,
                         const char *batches, const char *where)
{
    tb_case *c = tb_new(m, 1);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){0.5, 1});
    tb_split(c, split);
    c->hyper.rho = 0.1;
    c->hyper.pflego.beta = 0.1;
    tb_round(c, "0", batches);
    pflref_error err;
    tb_run_error(c, "pflego", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, where);
    tb_free(c);
}

/* PFLEGO refuses a model without a body, a split other than the head, and
 * a step that is not the full batch, naming the field. */
START_TEST(test_errors)
{
    const pflref_model lin = tb_model(PFLREF_MODEL_LINEAR,
                                      PFLREF_LOSS_HALF_SQUARED, 1, 1, 0, 0);
    const pflref_model b = b_model();
    expect_error(&lin, "", "0 1", "model.kind");
    expect_error(&b, "input", "0 1", "split.personal");
    expect_error(&b, "", "0 1", "split.personal");
    expect_error(&b, "head", "0 1 | 1", "schedule.rounds[0].batches[0][1]");
    expect_error(&b, "head", "1 0", "schedule.rounds[0].batches[0][0]");
    expect_error(&b, "head", "", "schedule.rounds[0].batches[0]");
}
END_TEST

Suite *pflego_suite(void)
{
    Suite *s = suite_create("pflego");
    TCase *tc = tcase_create("pflego");
    tcase_add_test(tc, test_proposition1_enumeration);
    tcase_add_test(tc, test_body_passes);
    tcase_add_test(tc, test_result_body_passes);
    tcase_add_test(tc, test_trace_cache);
    tcase_add_test(tc, test_tau1_is_sgd);
    tcase_add_test(tc, test_adam_first_step);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_head_optimizer);
    tcase_add_test(tc, test_golden_optim);
    suite_add_tcase(s, tc);
    return s;
}
