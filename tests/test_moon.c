/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_moon.c: MOON (ref/algorithms/moon.c).
 *
 * The problem: an mlp 2-3-2 (ReLU, cross-entropy, both biases), three
 * parties of 3, 4 and 2 samples.  The contrastive gradient is checked
 * against central differences of the loss ℓ = ℓ_sup + μ ℓ_con formed here
 * from the public features and loss calls (independent of moon.c's
 * signal); the golden vectors (golden/moon/) check whole runs against the
 * 60-digit generator.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

enum { D = 2, H = 3, K = 2, P = H * D + H + K * H + K };

static const double W0[P] = {0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4,
                             0.8, -0.45, 0.55, -0.6, 0.5, 0.3, 0.1, -0.15};
static const double X0[] = {0.8, -0.35, -0.6, 0.9, 0.45, 0.7};
static const double Y0[] = {1, 0, 1};
static const double X1[] = {-0.3, -0.85, 0.95, 0.15, -0.7, 0.4, 0.25, -0.55};
static const double Y1[] = {0, 1, 0, 1};
static const double X2[] = {0.65, 0.55, -0.9, -0.2};
static const double Y2[] = {1, 0};

/* The three parties, w⁰ = W0, η = 0.3, μ = mu, τ = 0.45. */
static tb_case *moon_case(double mu)
{
    pflref_model m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H,
                            PFLREF_ACT_RELU, 1, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3, X0, Y0);
    tb_train(c, 1, 4, X1, Y1);
    tb_train(c, 2, 2, X2, Y2);
    tb_w0(c, W0);
    c->hyper.eta = 0.3;
    c->hyper.moon.mu = mu;
    c->hyper.moon.tau = 0.45;
    return c;
}

/* sim(a, b) = a·b/(‖a‖ ‖b‖) over n entries. */
static double cosine(const double *a, const double *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t u = 0; u < n; u++) {
        ab += a[u] * b[u];
        aa += a[u] * a[u];
        bb += b[u] * b[u];
    }
    return ab / sqrt(aa * bb);
}

/* ℓ(θ) = ℓ_sup(θ; batch) + μ mean_j −log(e^{s_a}/(e^{s_a} + e^{s_b})),
 * s_a = sim(z_j, z_glob_j)/τ, s_b = sim(z_j, z_prev_j)/τ (Alg. 1 l. 17–18). */
static double moon_loss(const pflref_model *m, const pflref_data *Dt,
                        const size_t *idx, size_t nb, const double *theta,
                        const double *w_glob, const double *w_prev,
                        double mu, double tau, pflref_model_workspace *ws)
{
    double A[4 * H], z[4 * H], zg[4 * H], zp[4 * H], sup;
    ck_assert_int_eq(pflref_model_loss(m, theta, Dt, idx, nb, ws, &sup),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_features(m, theta, Dt, idx, nb, ws, A, z),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_features(m, w_glob, Dt, idx, nb, ws, A, zg),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_features(m, w_prev, Dt, idx, nb, ws, A, zp),
                     PFLREF_OK);
    double con = 0;
    for (size_t j = 0; j < nb; j++) {
        const double sa = cosine(z + j * H, zg + j * H, H) / tau;
        const double sb = cosine(z + j * H, zp + j * H, H) / tau;
        con += -log(exp(sa) / (exp(sa) + exp(sb)));
    }
    return sup + mu * con / (double)nb;
}

/* One local step is w_i ← w_i − η ∇(ℓ_sup + μ ℓ_con): the step a party
 * takes in round 1 (global w¹, previous model its round-0 one) matches
 * central differences of ℓ to 1e-7. */
START_TEST(test_step_is_gradient_of_loss)
{
    /* req: moon.alg1.l17, moon.alg1.l18, moon.alg1.l19, moon.grad, moon.eq3,
     * moon.eq4 */
    const double mu = 0.7, tau = 0.45, eta = 0.3;
    /* run A: round 0 alone gives w¹ and party 0's previous model */
    tb_case *c = moon_case(mu);
    tb_round(c, "0 1", "0 2", "3 0 | 1 2");
    pflref_run_result *a = tb_run(c, "moon", NULL);
    tb_free(c);
    /* run B: then party 0 takes one step on samples {0, 2} */
    c = moon_case(mu);
    tb_round(c, "0 1", "0 2", "3 0 | 1 2");
    tb_round(c, "0", "0 2");
    pflref_run_result *b = tb_run(c, "moon", NULL);
    const pflref_model *m = &c->problem->model;
    const pflref_data *Dt = &c->problem->clients[0].train;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 4);
    const size_t idx[] = {0, 2};
    double theta[P];
    for (size_t p = 0; p < P; p++) {
        const double h = 1e-6;
        memcpy(theta, a->w, sizeof theta);
        theta[p] += h;
        const double up = moon_loss(m, Dt, idx, 2, theta, a->w, a->v, mu,
                                    tau, ws);
        theta[p] -= 2 * h;
        const double dn = moon_loss(m, Dt, idx, 2, theta, a->w, a->v, mu,
                                    tau, ws);
        const double fd = (up - dn) / (2 * h);
        const double step = (a->w[p] - b->v[p]) / eta;   /* ∇ℓ_p */
        ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                      "entry %zu: (w¹ − w_0)/η = %.12g, central difference "
                      "%.12g", p, step, fd);
    }
    pflref_model_workspace_free(ws);
    pflref_run_result_free(a);
    pflref_run_result_free(b);
    tb_free(c);
}
END_TEST

/* The schedule of the golden vectors: party 0 skips round 1, party 2
 * first trains in round 1. */
static void three_rounds(tb_case *c)
{
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    tb_round(c, "1 2", "2 1 0 | 3", "1 0 | 0");
    tb_round(c, "0 1 2", "1 0 | 2 1", "0 3 | 2", "0 1");
}

/* μ = 0 is FedAvg bit for bit; in round 0 (w_i^{−1} = w⁰ = w^0, so z_prev
 * = z_glob) the contrastive gradient vanishes exactly, so round 0 is
 * FedAvg's for any μ; later rounds differ. */
START_TEST(test_mu0_and_round0_are_fedavg)
{
    /* req: moon.alg1.l16, moon.alg1.l7 */
    tb_case *c = moon_case(0.0);
    three_rounds(c);
    pflref_run_result *moon = tb_run(c, "moon", NULL);
    pflref_run_result *avg = tb_run(c, "fedavg", NULL);
    ck_assert(memcmp(moon->w, avg->w, sizeof(double) * P) == 0);
    pflref_run_result_free(moon);
    pflref_run_result_free(avg);
    tb_free(c);
    c = moon_case(0.7);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    moon = tb_run(c, "moon", NULL);
    avg = tb_run(c, "fedavg", NULL);
    ck_assert_msg(memcmp(moon->w, avg->w, sizeof(double) * P) == 0,
                  "round 0 differs from FedAvg: ∇ℓ_con should vanish");
    pflref_run_result_free(moon);
    pflref_run_result_free(avg);
    tb_free(c);
    c = moon_case(0.7);
    three_rounds(c);
    moon = tb_run(c, "moon", NULL);
    avg = tb_run(c, "fedavg", NULL);
    double diff = 0;
    for (size_t p = 0; p < P; p++)
        diff = fmax(diff, fabs(moon->w[p] - avg->w[p]));
    ck_assert_msg(diff > 1e-4, "μ = 0.7 moved w by %g only", diff);
    pflref_run_result_free(moon);
    pflref_run_result_free(avg);
    tb_free(c);
}
END_TEST

/* v_i = w_i^{t−1}: a party's last local model, kept through the rounds it
 * skips; w⁰ for a party that never trained. */
START_TEST(test_previous_model_kept)
{
    /* req: moon.alg1.l20, moon.sampling */
    tb_case *c = moon_case(0.7);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    pflref_run_result *r0 = tb_run(c, "moon", NULL);
    tb_free(c);
    c = moon_case(0.7);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    tb_round(c, "1", "2 1 0 | 3");
    pflref_run_result *r1 = tb_run(c, "moon", NULL);
    /* party 0 skipped round 1: its previous model is its round-0 one */
    ck_assert(memcmp(r1->v, r0->v, sizeof(double) * P) == 0);
    /* party 1 trained again: a new previous model */
    ck_assert(memcmp(r1->v + P, r0->v + P, sizeof(double) * P) != 0);
    /* party 2 never trained: w⁰ */
    ck_assert(memcmp(r1->v + 2 * P, W0, sizeof(double) * P) == 0);
    pflref_run_result_free(r0);
    pflref_run_result_free(r1);
    tb_free(c);
}
END_TEST

/* A model without a representation is refused, naming the field. */
START_TEST(test_needs_representation)
{
    /* req: moon.rep */
    pflref_model m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, D, 1,
                              0, 1);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    c->hyper.moon.mu = 0.7;
    c->hyper.moon.tau = 0.45;
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "moon", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.kind");
    ck_assert(strstr(err.message, "representation") != NULL);
    tb_free(c);
}
END_TEST

/* A zero representation (ReLU with every pre-activation negative: W1 = 0,
 * b1 < 0) leaves the cosine undefined: a defined failure naming z. */
START_TEST(test_zero_representation)
{
    tb_case *c = moon_case(0.7);
    double w0[P];
    memcpy(w0, W0, sizeof w0);
    for (size_t p = 0; p < H * D; p++)
        w0[p] = 0.0;
    for (size_t p = H * D; p < H * D + H; p++)
        w0[p] = -0.5;
    tb_w0(c, w0);
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "moon", PFLREF_EDIVERGE, &err);
    ck_assert_str_eq(err.where, "z");
    tb_free(c);
    /* with μ = 0 nothing divides by ‖z‖: the run goes through */
    c = moon_case(0.0);
    tb_w0(c, w0);
    tb_round(c, "0", "0 1");
    pflref_run_result *r = tb_run(c, "moon", NULL);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* g_body from dΦ = E W_head (features → head_grad → body_grad_features)
 * equals body_grad's from E, and touches no head entry: on the mlp
 * (ReLU) and on a layer list whose body ends in a dense projection. */
static void check_body_grad_features(const pflref_model *m, const double *w,
                                     const pflref_data *Dt, size_t h,
                                     size_t k, size_t head_off)
{
    const size_t n_p = m->P, nb = Dt->n;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, nb);
    double *A = calloc(nb * h, sizeof *A), *Phi = calloc(nb * h, sizeof *Phi);
    double *E = calloc(nb * k, sizeof *E), *dPhi = calloc(nb * h, sizeof *dPhi);
    double *g1 = calloc(n_p, sizeof *g1), *g2 = calloc(n_p, sizeof *g2);
    for (size_t p = 0; p < n_p; p++)
        g1[p] = g2[p] = 7.25;       /* a sentinel the head keeps */
    ck_assert_int_eq(pflref_model_features(m, w, Dt, NULL, nb, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(m, w, Phi, Dt, NULL, nb, ws, g1,
                                            E, NULL), PFLREF_OK);
    for (size_t p = head_off; p < n_p; p++)
        g1[p] = 7.25;
    ck_assert_int_eq(pflref_model_body_grad(m, w, A, E, Dt, NULL, nb, ws, g1),
                     PFLREF_OK);
    /* dΦ_j = W_headᵀ E_j, W_head (k × h) at head_off */
    for (size_t j = 0; j < nb; j++)
        for (size_t u = 0; u < h; u++)
            for (size_t c = 0; c < k; c++)
                dPhi[j * h + u] += E[j * k + c] * w[head_off + c * h + u];
    ck_assert_int_eq(pflref_model_features(m, w, Dt, NULL, nb, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_body_grad_features(m, w, A, dPhi, Dt, NULL,
                                                     nb, ws, g2), PFLREF_OK);
    for (size_t p = 0; p < n_p; p++)
        ck_assert_msg(fabs(g1[p] - g2[p]) <= 1e-14 * (1 + fabs(g1[p])),
                      "entry %zu: body_grad %.17g, from dΦ %.17g", p, g1[p],
                      g2[p]);
    for (size_t p = head_off; p < n_p; p++)
        ck_assert_double_eq(g2[p], 7.25);
    pflref_model_workspace_free(ws);
    free(A), free(Phi), free(E), free(dPhi), free(g1), free(g2);
}

START_TEST(test_body_grad_features)
{
    /* req: moon.rep, moon.grad */
    tb_case *c = moon_case(0.7);
    check_body_grad_features(&c->problem->model, W0,
                             &c->problem->clients[1].train, H, K, H * D + H);
    tb_free(c);
    pflref_spec *spec = tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"layers\", "
        "\"input\": [2], \"loss\": \"cross_entropy\", \"layers\": [{\"type\": "
        "\"dense\", \"out\": 3}, {\"type\": \"relu\"}, {\"type\": \"dense\", "
        "\"name\": \"proj\", \"out\": 2}, {\"type\": \"dense\", \"name\": "
        "\"out\", \"out\": 2}]}, \"problem\": {\"clients\": [{\"X\": [[0.8, "
        "-0.35], [-0.6, 0.9], [0.45, 0.7]], \"y\": [1, 0, 1]}]}, \"init\": "
        "{\"kind\": \"given\", \"w\": [0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, "
        "0.25, 0.4, 0.6, -0.35, 0.45, 0.2, 0.5, -0.4, 0.15, -0.25, 0.7, -0.3, "
        "0.4, 0.65, 0.05, -0.1]}, \"algorithm\": {\"name\": \"fedavg\", "
        "\"hyperparameters\": {\"eta\": 0.1}}, \"schedule\": {\"kind\": "
        "\"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]}}");
    const pflref_model *m = &spec->problem->model;
    ck_assert_uint_eq(m->P, 23);
    const double w[23] = {0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4,
                          0.6, -0.35, 0.45, 0.2, 0.5, -0.4, 0.15, -0.25,
                          0.7, -0.3, 0.4, 0.65, 0.05, -0.1};
    check_body_grad_features(m, w, &spec->problem->clients[0].train, 2, 2,
                             17);
    pflref_spec_free(spec);
}
END_TEST

/* Batch normalisation in the body: the layer list of the moon/layers/bn-*
 * vectors (fc1 2→3, batchnorm1d, tanh, proj 3→2 = R_w, out 2→2), P = 35:
 * fc1 (0–8), γ (9–11), β (12–14), r_μ (15–17), r_v (18–20), proj (21–28),
 * out (29–34); party 0 of the vectors; one round, party 0, one step on
 * samples {0, 2}. */
#define BN_W0                                                                \
    "[0.7, -0.4, 0.3, 0.9, -0.5, 0.6, 0.35, 0.25, 0.4, 1.2, 0.8, 1.05, "    \
    "0.1, -0.2, 0.15, 0.05, -0.1, 0.3, 0.9, 1.3, 0.7, 0.6, -0.35, 0.45, "   \
    "0.2, 0.5, -0.4, 0.15, -0.25, 0.7, -0.3, 0.4, 0.65, 0.05, -0.1]"
static pflref_spec *bn_spec(const char *passes)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"layers\", \"input\": [2], \"loss\": \"cross_entropy\", "
             "\"layers\": [{\"type\": \"dense\", \"name\": \"fc1\", \"out\": "
             "3}, {\"type\": \"batchnorm1d\", \"name\": \"norm1\"}, "
             "{\"type\": \"tanh\"}, {\"type\": \"dense\", \"name\": \"proj\", "
             "\"out\": 2}, {\"type\": \"dense\", \"name\": \"out\", \"out\": "
             "2}]}, \"problem\": {\"clients\": [{\"X\": [[0.8, -0.35], "
             "[-0.6, 0.9], [0.45, 0.7]], \"y\": [1, 0, 1]}]}, \"init\": "
             "{\"kind\": \"given\", \"w\": " BN_W0 "}, \"algorithm\": "
             "{\"name\": \"moon\", \"hyperparameters\": {\"eta\": 0.2, "
             "\"moon.mu\": 1.3, \"moon.tau\": 0.6}%s%s%s}, \"schedule\": "
             "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
             "\"batches\": [[[0, 2]]]}]}}",
             passes ? ", \"switches\": {\"moon.passes\": \"" : "",
             passes ? passes : "", passes ? "\"}" : "");
    return tu_spec(text);
}

/* The step's one training pass moves w_i's running statistics once:
 * r_μ ← 0.9 r_μ + 0.1 μ_B, r_v ← 0.9 r_v + 0.1 · 2 s²_B (unbiased, two
 * samples), μ_B, s²_B of fc1's outputs a = W x + b on samples 0 and 2,
 * worked here from the inputs; the evaluation passes of w^t and w_i^{t−1}
 * (moon.passes = eval) and the training passes under train move nothing
 * more, and the two readings give different parameters (z_glob, z_prev
 * on other statistics). */
START_TEST(test_bn_running_moves_once)
{
    /* req: moon.bn */
    const double W[6] = {0.7, -0.4, 0.3, 0.9, -0.5, 0.6};
    const double b[3] = {0.35, 0.25, 0.4};
    const double x0[2] = {0.8, -0.35}, x2[2] = {0.45, 0.7};
    const double r_mu[3] = {0.05, -0.1, 0.3}, r_v[3] = {0.9, 1.3, 0.7};
    pflref_run_result *res[2];
    const char *passes[2] = {"eval", "train"};
    for (int k = 0; k < 2; k++) {
        pflref_spec *spec = bn_spec(passes[k]);
        res[k] = tu_run(spec, NULL);
        ck_assert_uint_eq(spec->problem->model.P, 35);
        for (size_t c = 0; c < 3; c++) {
            const double a0 = W[2 * c] * x0[0] + W[2 * c + 1] * x0[1] + b[c];
            const double a2 = W[2 * c] * x2[0] + W[2 * c + 1] * x2[1] + b[c];
            const double mean = (a0 + a2) / 2;
            const double var = ((a0 - mean) * (a0 - mean) +
                                (a2 - mean) * (a2 - mean)) / 2;
            const double mu_new = 0.9 * r_mu[c] + 0.1 * mean;
            const double v_new = 0.9 * r_v[c] + 0.1 * 2.0 * var;
            /* v: party 0's w_i^t, w: the average of one party */
            ck_assert_msg(fabs(res[k]->v[15 + c] - mu_new) <= 1e-15 &&
                              fabs(res[k]->v[18 + c] - v_new) <= 1e-15,
                          "%s: channel %zu: r_μ %.17g (expected %.17g), "
                          "r_v %.17g (expected %.17g)", passes[k], c,
                          res[k]->v[15 + c], mu_new, res[k]->v[18 + c],
                          v_new);
            ck_assert_double_eq(res[k]->w[15 + c], res[k]->v[15 + c]);
        }
        pflref_spec_free(spec);
    }
    /* round 0: w_i^{−1} = w⁰ = w^t, so z_prev = z_glob in either mode and
     * ℓ_con's gradient is 0: the two readings agree bit for bit */
    for (size_t p = 0; p < 35; p++)
        ck_assert_double_eq(res[0]->v[p], res[1]->v[p]);
    pflref_run_result_free(res[0]);
    pflref_run_result_free(res[1]);
}
END_TEST

/* pflref_model_body_grad_train is the gradient of θ ↦ (1/nb) Σ_j ⟨dΦ_j,
 * Φ_j(θ)⟩ with Φ the body's TRAINING pass (each Φ_j depends on every
 * sample through μ_B, s²_B): central differences of
 * pflref_model_features_mode(train = 1) to 1e-8; the head's entries are
 * left as they were, the running statistics' are 0 (they never step). */
START_TEST(test_bn_body_grad_train)
{
    /* req: moon.bn, moon.grad */
    pflref_spec *spec = bn_spec(NULL);
    const pflref_model *m = &spec->problem->model;
    const pflref_data *Dt = &spec->problem->clients[0].train;
    const size_t idx[3] = {0, 1, 2}, nb = 3, h = 2, n_p = 35;
    const double dPhi[6] = {0.45, -1.1, 0.3, 0.85, -0.6, 0.25};
    double w[35], g[35], Phi[6];
    memcpy(w, spec->w0, sizeof w);
    for (size_t p = 0; p < n_p; p++)   /* a sentinel the head keeps */
        g[p] = p >= 29 ? 7.25 : 0.0;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, nb);
    ck_assert_int_eq(pflref_model_body_grad_train(m, w, Dt, idx, nb, dPhi, ws,
                                                  g), PFLREF_OK);
    for (size_t p = 0; p < n_p; p++) {
        if (p >= 29 || (p >= 15 && p < 21)) {
            ck_assert_msg(g[p] == (p >= 29 ? 7.25 : 0.0),
                          "entry %zu: %.17g", p, g[p]);
            continue;
        }
        double f[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            double th[35];
            memcpy(th, w, sizeof th);
            th[p] += sgn ? -1e-6 : 1e-6;
            ck_assert_int_eq(pflref_model_features_mode(m, th, Dt, idx, nb,
                                                        ws, 1, Phi),
                             PFLREF_OK);
            f[sgn] = 0;
            for (size_t q = 0; q < nb * h; q++)
                f[sgn] += dPhi[q] * Phi[q] / (double)nb;
        }
        const double fd = (f[0] - f[1]) / 2e-6;
        ck_assert_msg(fabs(g[p] - fd) <= 1e-8 * (1 + fabs(fd)),
                      "entry %zu: %.12g, central difference %.12g", p, g[p],
                      fd);
    }
    /* an evaluation pass normalises with r_μ, r_v: sample 0 alone gives
     * its own Φ_0 (a function of x_0), unlike the training pass */
    double Phi1[2];
    ck_assert_int_eq(pflref_model_features_mode(m, w, Dt, idx, nb, ws, 0,
                                                Phi), PFLREF_OK);
    ck_assert_int_eq(pflref_model_features_mode(m, w, Dt, idx, 1, ws, 0,
                                                Phi1), PFLREF_OK);
    ck_assert_double_eq(Phi[0], Phi1[0]);
    ck_assert_double_eq(Phi[1], Phi1[1]);
    pflref_model_workspace_free(ws);
    pflref_spec_free(spec);
}
END_TEST

Suite *moon_suite(void)
{
    Suite *s = suite_create("moon");
    TCase *tc = tcase_create("moon");
    tcase_add_test(tc, test_step_is_gradient_of_loss);
    tcase_add_test(tc, test_mu0_and_round0_are_fedavg);
    tcase_add_test(tc, test_previous_model_kept);
    tcase_add_test(tc, test_needs_representation);
    tcase_add_test(tc, test_bn_running_moves_once);
    tcase_add_test(tc, test_bn_body_grad_train);
    tcase_add_test(tc, test_zero_representation);
    tcase_add_test(tc, test_body_grad_features);
    suite_add_tcase(s, tc);
    return s;
}
