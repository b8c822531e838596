/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedpac.c: FedPAC (ref/algorithms/fedpac.c).
 *
 * The problem of golden/fedpac/ (its data; here with a ReLU body): an mlp
 * 2-3-3 (cross-entropy), three clients of 3, 4 and 5 samples with label
 * skew (client 0 holds classes {0, 1}, client 2 {1, 2}), inputs on the
 * scales 2, 0.5 and 4.
 * The statistics are checked against class means formed here from the
 * public features call, the classifier weights against the KKT conditions
 * of the QP formed here from the recorded statistics, the classifier and
 * body steps against central differences of the losses formed here, the
 * server's average and the heads' combination against sums formed here;
 * the golden vectors check whole runs against the 60-digit generator.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "models/features_bn.h"

enum { D = 2, H = 3, K = 3, P = H * D + H + K * H + K, W2 = 9, HP = K * H + K };

static const double W0[P] = {0.7,  -0.4, 0.3,   0.9, -0.5, 0.6, 0.35,
                             0.25, 0.4,  0.8, -0.45, 0.55, -0.6, 0.5,
                             0.3,  0.1, -0.15, 0.65, 0.05, -0.2, 0.15};
static const double X0[] = {1.6, -0.7, -1.2, 1.8, 0.9, 1.4};
static const double Y0[] = {1, 0, 1};
static const double X1[] = {-0.15, -0.425, 0.475, 0.075, -0.35, 0.2, 0.125,
                            -0.275};
static const double Y1[] = {0, 2, 0, 1};
static const double X2[] = {2.6, 2.2, -3.6, -0.8, 1.4, -3.0, -0.6, 2.4,
                            2.8, 0.2};
static const double Y2[] = {2, 1, 2, 2, 1};

/* The three clients, w⁰ = W0, η, λ, η_φ, τ_φ. */
static tb_case *pac_case(double eta, double lambda, double eta_phi,
                         size_t tau_phi)
{
    pflref_model m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H,
                            PFLREF_ACT_RELU, 1, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3, X0, Y0);
    tb_train(c, 1, 4, X1, Y1);
    tb_train(c, 2, 5, X2, Y2);
    tb_w0(c, W0);
    c->hyper.eta = eta;
    c->hyper.fedpac.lambda = lambda;
    c->hyper.fedpac.eta_phi = eta_phi;
    c->hyper.fedpac.tau_phi = tau_phi;
    return c;
}

/* The record (kind, round, client, step, name) of tj (step −1: any). */
static const double *record(const pflref_trajectory *tj,
                            pflref_event_kind kind, long round, long client,
                            long step, const char *name, size_t len)
{
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        if (rec->kind == kind && rec->round == round &&
            rec->client == client && (step < 0 || rec->step == step) &&
            strcmp(rec->name, name) == 0) {
            ck_assert_uint_eq(rec->len, len);
            return tj->values + rec->offset;
        }
    }
    ck_abort_msg("no record %s of round %ld, client %ld", name, round,
                 client);
    return NULL;
}

/* F := f_θ(x) of the samples idx of client i at w (nb ≤ 5). */
static void feats(const tb_case *c, size_t i, const size_t *idx, size_t nb,
                  const double *w, double *F)
{
    const pflref_model *m = &c->problem->model;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 5);
    double A[5 * H];
    ck_assert_int_eq(pflref_model_features(m, w, &c->problem->clients[i].train,
                                           idx, nb, ws, A, F),
                     PFLREF_OK);
    pflref_model_workspace_free(ws);
}

static const size_t ALL[5] = {0, 1, 2, 3, 4};

/* Round 0's statistics of client 2 at w⁰: h_k = p_k μ_k and
 * V = (1/n) Σ_k [p_k mean_k ‖f‖² − p_k² ‖μ_k‖²] formed here (1e-15);
 * class 0, absent, has h = 0. */
START_TEST(test_statistics_at_received_theta)
{
    /* req: fedpac.stats, fedpac.alg1.l5 */
    tb_case *c = pac_case(0.35, 0.6, 0.45, 1);
    tb_round(c, "0 2", "0 2 | 1", "4 0 3 | 1 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
    const double *V = record(&tj, PFLREF_EV_NOTE, 0, 2, -1, "V", 1);
    const double *h = record(&tj, PFLREF_EV_NOTE, 0, 2, -1, "h", K * H);
    double F[5 * H], mu[K][H] = {{0}}, s2[K] = {0}, n[K] = {0}, want = 0;
    feats(c, 2, ALL, 5, W0, F);
    for (size_t r_ = 0; r_ < 5; r_++) {
        const size_t y = (size_t)Y2[r_];
        n[y] += 1;
        for (size_t u = 0; u < H; u++) {
            mu[y][u] += F[r_ * H + u];
            s2[y] += F[r_ * H + u] * F[r_ * H + u];
        }
    }
    for (size_t k = 0; k < K; k++) {
        double m2 = 0, p = n[k] / 5.0;
        for (size_t u = 0; u < H; u++) {
            const double mk = n[k] > 0 ? mu[k][u] / n[k] : 0.0;
            m2 += mk * mk;
            ck_assert_msg(fabs(h[k * H + u] - p * mk) <= 1e-15,
                          "h[%zu][%zu] = %.17g, p μ = %.17g", k, u,
                          h[k * H + u], p * mk);
        }
        if (n[k] > 0)
            want += p * s2[k] / n[k] - p * p * m2;
    }
    want /= 5.0;
    ck_assert_msg(fabs(V[0] - want) <= 1e-15 * (1 + want),
                  "V = %.17g, formed here %.17g", V[0], want);
    ck_assert(want > 0);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* α_i of every participant of a round of three satisfies the KKT
 * conditions of min αᵀQ_iα, α ≥ 0, Σα = 1, with Q_i formed here from the
 * recorded V and h; its objective is at most every vertex's and the
 * uniform weights'; a client alone gets α = e_i. */
START_TEST(test_classifier_weights_solve_the_qp)
{
    /* req: fedpac.qp.exact, fedpac.qp.matrix, fedpac.alg1.l13 */
    tb_case *c = pac_case(0.35, 0.6, 0.45, 1);
    tb_round(c, "0 1 2", "0 2 | 1", "0 3 | 2 1 0", "4 0 3 | 1 2");
    tb_round(c, "1", "1 3 | 0 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
    const double *V[3], *h[3];
    for (long j = 0; j < 3; j++) {
        V[j] = record(&tj, PFLREF_EV_NOTE, 0, j, -1, "V", 1);
        h[j] = record(&tj, PFLREF_EV_NOTE, 0, j, -1, "h", K * H);
    }
    for (long i = 0; i < 3; i++) {
        const double *a = record(&tj, PFLREF_EV_NOTE, 0, i, -1, "alpha_i", 3);
        double Q[3][3], Qa[3] = {0}, sum = 0, nu = INFINITY, obj = 0;
        for (size_t j = 0; j < 3; j++)
            for (size_t l = 0; l < 3; l++) {
                Q[j][l] = j == l ? V[j][0] : 0.0;
                for (size_t u = 0; u < K * H; u++)
                    Q[j][l] += (h[i][u] - h[j][u]) * (h[i][u] - h[l][u]);
            }
        for (size_t j = 0; j < 3; j++) {
            ck_assert_msg(a[j] >= 0, "α_%ld%zu = %g < 0", i, j, a[j]);
            sum += a[j];
            for (size_t l = 0; l < 3; l++)
                Qa[j] += Q[j][l] * a[l];
            obj += a[j] * Qa[j];
            if (a[j] > 0)
                nu = fmin(nu, Qa[j]);
        }
        ck_assert_msg(fabs(sum - 1) <= 1e-14, "Σα_%ld = %.17g", i, sum);
        for (size_t j = 0; j < 3; j++) {
            if (a[j] > 0)
                ck_assert_msg(fabs(Qa[j] - nu) <= 1e-13,
                              "client %ld: (Qα)_%zu = %.17g ≠ ν = %.17g", i,
                              j, Qa[j], nu);
            else
                ck_assert_msg(Qa[j] >= nu - 1e-13,
                              "client %ld: (Qα)_%zu = %.17g < ν = %.17g", i,
                              j, Qa[j], nu);
            ck_assert(obj <= Q[j][j] + 1e-14);
        }
        double uni = 0;
        for (size_t j = 0; j < 3; j++)
            for (size_t l = 0; l < 3; l++)
                uni += Q[j][l] / 9.0;
        ck_assert(obj <= uni + 1e-14);
    }
    const double *alone = record(&tj, PFLREF_EV_NOTE, 1, 1, -1, "alpha_i", 3);
    ck_assert(alone[0] == 0 && alone[1] == 1 && alone[2] == 0);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* mean CE of the head phi (W2, b2) on the features F */
static double ce(const double *F, const double *phi, const double *y,
                 const size_t *idx, size_t nb)
{
    double loss = 0;
    for (size_t r = 0; r < nb; r++) {
        double z[K], mx = -INFINITY, s = 0;
        for (size_t k = 0; k < K; k++) {
            z[k] = phi[K * H + k];
            for (size_t u = 0; u < H; u++)
                z[k] += phi[k * H + u] * F[r * H + u];
            mx = fmax(mx, z[k]);
        }
        for (size_t k = 0; k < K; k++)
            s += exp(z[k] - mx);
        loss += log(s) + mx - z[(size_t)y[idx[r]]];
    }
    return loss / (double)nb;
}

/* mean [CE + λ ‖f − c_y‖²] of client 0's batch at w, c the centroids */
static double body_loss(const tb_case *c, const double *w, const size_t *idx,
                        size_t nb, double lambda, const double *C)
{
    double F[5 * H], R = 0;
    feats(c, 0, idx, nb, w, F);
    for (size_t r = 0; r < nb; r++)
        for (size_t u = 0; u < H; u++) {
            const double e = F[r * H + u] - C[(size_t)Y0[idx[r]] * H + u];
            R += e * e;
        }
    return ce(F, w + W2, Y0, idx, nb) + lambda * R / (double)nb;
}

/* Client 0 in round 1: step 1 moves only the head, by −η_φ ∇ CE; step 2
 * only the body, by −η ∇ [CE + λ‖f − c_y‖²] with round 0's centroids
 * (central differences to 1e-7). */
START_TEST(test_classifier_then_aligned_body_steps)
{
    /* req: fedpac.alg1.l6, fedpac.alg1.l7, fedpac.eq.align */
    const double eta = 0.35, lambda = 0.6, eta_phi = 0.45;
    tb_case *c = pac_case(eta, lambda, eta_phi, 1);
    tb_round(c, "0 1", "0 2 | 1 0 2", "2 1 0 | 3 1");
    tb_round(c, "0", "1 2 | 0 1 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
    const double *C = record(&tj, PFLREF_EV_NOTE, 0, -1, -1, "C_bar", K * H);
    const double *x0 = record(&tj, PFLREF_EV_CLIENT_BEGIN, 1, 0, 0, "v", P);
    const double *x1 = record(&tj, PFLREF_EV_STEP, 1, 0, 1, "v", P);
    const double *x2 = record(&tj, PFLREF_EV_STEP, 1, 0, 2, "v", P);
    const size_t b1[] = {1, 2}, b2[] = {0, 1, 2};
    double F[5 * H], q[P];
    feats(c, 0, b1, 2, x0, F);
    for (size_t p = 0; p < P; p++) {
        const double e = 1e-6;
        memcpy(q, x0, sizeof q);
        if (p < W2) {
            ck_assert_msg(x1[p] == x0[p], "head step moved body entry %zu", p);
            memcpy(q, x1, sizeof q);
            q[p] += e;
            const double up = body_loss(c, q, b2, 3, lambda, C);
            q[p] -= 2 * e;
            const double dn = body_loss(c, q, b2, 3, lambda, C);
            const double fd = (up - dn) / (2 * e);
            const double step = (x1[p] - x2[p]) / eta;
            ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                          "body entry %zu: %.12g, central difference %.12g",
                          p, step, fd);
            continue;
        }
        ck_assert_msg(x2[p] == x1[p], "body step moved head entry %zu", p);
        q[p] += e;
        const double up = ce(F, q + W2, Y0, b1, 2);
        q[p] -= 2 * e;
        const double dn = ce(F, q + W2, Y0, b1, 2);
        const double fd = (up - dn) / (2 * e);
        const double step = (x0[p] - x1[p]) / eta_phi;
        ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                      "head entry %zu: %.12g, central difference %.12g", p,
                      step, fd);
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* l. 11: θ = Σ (n_i/Σn) θ_i of the CLIENT_END records; l. 12: c_k the
 * n_{i,k}-weighted mean of the recorded ĉ_{i,k}; l. 14: v_i's head =
 * Σ_j α_ij φ_j (the CLIENT_END heads); a client outside S_t keeps its
 * head and takes θ. */
START_TEST(test_server_centroids_and_heads)
{
    /* req: fedpac.alg1.l11, fedpac.alg1.l12, fedpac.alg1.l14, fedpac.alg1.l9 */
    tb_case *c = pac_case(0.3, 0.55, 0.4, 1);
    tb_round(c, "0 1", "0 2 | 1 0 2", "2 1 0 | 3 1");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
    const double *x[2], *Ci[2], *nC[2], *a[2];
    for (long i = 0; i < 2; i++) {
        x[i] = record(&tj, PFLREF_EV_CLIENT_END, 0, i, -1, "v", P);
        Ci[i] = record(&tj, PFLREF_EV_NOTE, 0, i, -1, "C", K * H);
        nC[i] = record(&tj, PFLREF_EV_NOTE, 0, i, -1, "n_C", K);
        a[i] = record(&tj, PFLREF_EV_NOTE, 0, i, -1, "alpha_i", 3);
    }
    const double *Cb = record(&tj, PFLREF_EV_NOTE, 0, -1, -1, "C_bar", K * H);
    for (size_t p = 0; p < W2; p++) {
        const double want = (3.0 / 7.0) * x[0][p] + (4.0 / 7.0) * x[1][p];
        ck_assert_msg(fabs(r->w[p] - want) <= 1e-15 * (1 + fabs(want)),
                      "θ entry %zu: %.17g, the average %.17g", p, r->w[p],
                      want);
        for (size_t i = 0; i < 3; i++)
            ck_assert(r->v[i * P + p] == r->w[p]);
    }
    for (size_t k = 0; k < K; k++)
        for (size_t u = 0; u < H; u++) {
            const double want = (nC[0][k] * Ci[0][k * H + u] +
                                 nC[1][k] * Ci[1][k * H + u]) /
                                (nC[0][k] + nC[1][k]);
            ck_assert_msg(fabs(Cb[k * H + u] - want) <= 1e-15,
                          "c_%zu[%zu] = %.17g, want %.17g", k, u,
                          Cb[k * H + u], want);
        }
    for (size_t i = 0; i < 2; i++)
        for (size_t p = W2; p < P; p++) {
            const double want = a[i][0] * x[0][p] + a[i][1] * x[1][p];
            ck_assert_msg(fabs(r->v[i * P + p] - want) <= 1e-15,
                          "client %zu head entry %zu", i, p);
        }
    for (size_t p = W2; p < P; p++)
        ck_assert(r->v[2 * P + p] == W0[p]);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* A softmax model is refused naming model.kind, a regression mlp
 * model.loss, a participation with fewer batches than τ_φ its schedule
 * entry, and a round of 17 participants its client list. */
START_TEST(test_refusals)
{
    /* req: fedpac.model, fedpac.qp.max */
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY,
                              D, K, 0, 1);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    c->hyper.fedpac.lambda = 0.5;
    c->hyper.fedpac.eta_phi = 0.4;
    c->hyper.fedpac.tau_phi = 1;
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "fedpac", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.kind");
    tb_free(c);
    m = tb_mlp(PFLREF_LOSS_SQUARED, D, 1, H, PFLREF_ACT_RELU, 1, 1);
    c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    c->hyper.fedpac.lambda = 0.5;
    c->hyper.fedpac.eta_phi = 0.4;
    c->hyper.fedpac.tau_phi = 1;
    tb_round(c, "0", "0 1");
    tb_run_error(c, "fedpac", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.loss");
    tb_free(c);
    c = pac_case(0.3, 0.5, 0.4, 2);
    tb_round(c, "0 1", "0 2 | 1", "2 1");
    tb_run_error(c, "fedpac", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[1]");
    ck_assert(strstr(err.message, "tau_phi = 2") != NULL);
    tb_free(c);
    m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H, PFLREF_ACT_RELU, 1, 1);
    c = tb_new(&m, 17);
    for (size_t i = 0; i < 17; i++)
        tb_train(c, i, 3, X0, Y0);
    c->hyper.eta = 0.3;
    c->hyper.fedpac.lambda = 0.5;
    c->hyper.fedpac.eta_phi = 0.4;
    c->hyper.fedpac.tau_phi = 1;
    tb_round(c, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "0", "0", "0",
             "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
             "0");
    tb_run_error(c, "fedpac", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients");
    tb_free(c);
}
END_TEST

/* fedpac.alpha_small: the recorded α_i is the exact run's with every
 * entry ≤ ε set to 0 and (renormalised) divided by the sum, (raw) as it
 * is; renormalised with ε ≥ 1/m is refused. */
START_TEST(test_small_weights)
{
    /* req: fedpac.alpha_small */
    double exact[3][3];
    for (int mode = 0; mode <= 2; mode++) {
        tb_case *c = pac_case(0.35, 0.6, 0.45, 1);
        c->hyper.fedpac.alpha_small = mode;
        c->hyper.fedpac.alpha_eps = 0.2;
        tb_round(c, "0 1 2", "0 2 | 1", "0 3 | 2 1 0", "4 0 3 | 1 2");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
        int dropped = 0;
        for (long i = 0; i < 3; i++) {
            const double *a = record(&tj, PFLREF_EV_NOTE, 0, i, -1,
                                     "alpha_i", 3);
            double kept[3], sum = 0;
            if (mode == 0)
                memcpy(exact[i], a, sizeof exact[i]);
            for (size_t j = 0; j < 3; j++) {
                kept[j] = exact[i][j] > 0.2 ? exact[i][j] : 0.0;
                dropped += exact[i][j] > 0 && kept[j] == 0;
                sum += kept[j];
            }
            for (size_t j = 0; j < 3; j++) {
                const double want = mode == 0   ? exact[i][j]
                                    : mode == 1 ? kept[j] / sum
                                                : kept[j];
                ck_assert_msg(fabs(a[j] - want) <= 1e-15,
                              "mode %d: α_%ld%zu = %.17g, want %.17g", mode,
                              i, j, a[j], want);
            }
        }
        ck_assert_msg(mode == 0 || dropped > 0, "no weight below ε");
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
    tb_case *c = pac_case(0.35, 0.6, 0.45, 1);
    c->hyper.fedpac.alpha_small = PFLREF_FEDPAC_ALPHA_RENORMALISED;
    c->hyper.fedpac.alpha_eps = 0.5;
    tb_round(c, "0 1", "0 2 | 1", "2 1 0 | 3 1");
    pflref_error err;
    tb_run_error(c, "fedpac", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.fedpac.alpha_eps");
    tb_free(c);
}
END_TEST

/* fedpac.missing = own_start: round 0 is client 2's alone (classes 1, 2),
 * so round 1 has no c_0; client 0's body step there follows central
 * differences of CE + λ‖f − c‖² with c_0 its own class-0 mean at θ^(1)
 * (formed here), and under none with no term for class 0. */
START_TEST(test_missing_centroid_rules)
{
    /* req: fedpac.missing, fedpac.eq.align */
    const double eta = 0.35, lambda = 0.6;
    for (int own = 0; own <= 1; own++) {
        tb_case *c = pac_case(eta, lambda, 0.45, 1);
        c->hyper.fedpac.missing = own;
        tb_round(c, "2", "4 0 3 | 1 2");
        tb_round(c, "0", "1 2 | 0 1 2");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
        const double *Cb = record(&tj, PFLREF_EV_NOTE, 0, -1, -1, "C_bar",
                                  K * H);
        const double *x0 = record(&tj, PFLREF_EV_CLIENT_BEGIN, 1, 0, 0, "v",
                                  P);
        const double *x1 = record(&tj, PFLREF_EV_STEP, 1, 0, 1, "v", P);
        const double *x2 = record(&tj, PFLREF_EV_STEP, 1, 0, 2, "v", P);
        const size_t b2[] = {0, 1, 2}, only0[] = {1};
        double C[K * H], F[H], q[P];
        memcpy(C, Cb, sizeof C);
        feats(c, 0, only0, 1, x0, F);   /* client 0's one class-0 sample */
        for (size_t u = 0; u < H; u++)
            C[u] = F[u];
        for (size_t p = 0; p < W2; p++) {
            const double e = 1e-6;
            memcpy(q, x1, sizeof q);
            q[p] += e;
            double up = body_loss(c, q, b2, 3, lambda, C);
            q[p] -= 2 * e;
            double dn = body_loss(c, q, b2, 3, lambda, C);
            if (!own) {   /* no term for sample 1 (class 0) */
                double Fq[3 * H];
                q[p] += 2 * e;
                feats(c, 0, only0, 1, q, Fq);
                for (size_t u = 0; u < H; u++)
                    up -= lambda * (Fq[u] - C[u]) * (Fq[u] - C[u]) / 3.0;
                q[p] -= 2 * e;
                feats(c, 0, only0, 1, q, Fq);
                for (size_t u = 0; u < H; u++)
                    dn -= lambda * (Fq[u] - C[u]) * (Fq[u] - C[u]) / 3.0;
            }
            const double fd = (up - dn) / (2 * e);
            const double step = (x1[p] - x2[p]) / eta;
            ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                          "own %d, body entry %zu: %.12g, central "
                          "difference %.12g", own, p, step, fd);
        }
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
}
END_TEST

/* fedpac.centroid_weights = uniform: c_k is the plain mean of the
 * recorded ĉ_{i,k} over the clients holding k; the presets set the
 * switches their sources give. */
START_TEST(test_uniform_centroids_and_presets)
{
    /* req: fedpac.centroid_weights, fedpac.preset.official, fedpac.preset.pfllib */
    tb_case *c = pac_case(0.3, 0.55, 0.4, 1);
    c->hyper.fedpac.centroid_weights = PFLREF_FEDPAC_CENTROIDS_UNIFORM;
    tb_round(c, "0 1", "0 2 | 1 0 2", "2 1 0 | 3 1");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedpac", &tj);
    const double *C0 = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "C", K * H);
    const double *C1 = record(&tj, PFLREF_EV_NOTE, 0, 1, -1, "C", K * H);
    const double *n0 = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "n_C", K);
    const double *Cb = record(&tj, PFLREF_EV_NOTE, 0, -1, -1, "C_bar", K * H);
    for (size_t k = 0; k < K; k++)
        for (size_t u = 0; u < H; u++) {
            const double want = n0[k] > 0 ? (C0[k * H + u] + C1[k * H + u]) / 2
                                          : C1[k * H + u];
            ck_assert_msg(fabs(Cb[k * H + u] - want) <= 1e-15,
                          "c_%zu[%zu] = %.17g, the plain mean %.17g", k, u,
                          Cb[k * H + u], want);
        }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
    c = pac_case(0.3, 0.55, 0.4, 1);
    tb_preset(c, "fedpac", "official");
    ck_assert_int_eq(c->hyper.fedpac.distance, PFLREF_FEDPAC_DISTANCE_MSE);
    ck_assert_int_eq(c->hyper.fedpac.alpha_small,
                     PFLREF_FEDPAC_ALPHA_RENORMALISED);
    ck_assert_int_eq(c->hyper.fedpac.missing, PFLREF_FEDPAC_MISSING_OWN_START);
    ck_assert_int_eq(c->hyper.fedpac.centroid_weights,
                     PFLREF_FEDPAC_CENTROIDS_CLASS_COUNTS);
    tb_free(c);
    c = pac_case(0.3, 0.55, 0.4, 1);
    tb_preset(c, "fedpac", "pfllib");
    ck_assert_int_eq(c->hyper.fedpac.alpha_small, PFLREF_FEDPAC_ALPHA_RAW);
    ck_assert_int_eq(c->hyper.fedpac.missing, PFLREF_FEDPAC_MISSING_NONE);
    ck_assert_int_eq(c->hyper.fedpac.centroid_weights,
                     PFLREF_FEDPAC_CENTROIDS_UNIFORM);
    tb_free(c);
}
END_TEST

/* The client optimizers (opt.*): optimizer 0 steps the head's entries in
 * the τ_φ classifier steps, optimizer 1 the body's in the rest, each a new
 * torch SGD per client update (opt.state = reset).  Against the plain
 * run from the same w⁰: the first classifier step with weight decay λ_wd
 * is the plain one minus η_φ λ_wd x0 on the head (b = d at a block's first
 * step); with momentum μ the first step is the plain one and the second
 * differs from the plain second by μ (x1 − x0) on the head (the same x1,
 * so the same gradient); the body never moves in a classifier step nor
 * the head in a body step; preset official_run is official plus the
 * authors' SGD(momentum = 0.5, weight_decay = 5e-4). */
START_TEST(test_client_optimizers)
{
    /* req: fedpac.opt, fedpac.preset.official_run */
    const double eta_phi = 0.45, mu = 0.5, wd = 0.125;
    pflref_trajectory tj[3];
    pflref_run_result *r[3];
    for (int k = 0; k < 3; k++) {
        tb_case *c = pac_case(0.35, 0.6, eta_phi, 2);
        if (k == 1)
            c->hyper.opt.weight_decay = wd;
        if (k == 2)
            c->hyper.opt.momentum = mu;
        tb_round(c, "0", "0 2 | 1 0 | 2 1 | 0 1");
        r[k] = tb_run_recorded(c, "fedpac", &tj[k]);
        ck_assert_ptr_nonnull(r[k]);
        tb_free(c);
    }
    const double *x0 = record(&tj[0], PFLREF_EV_CLIENT_BEGIN, 0, 0, 0, "v", P);
    const double *p1 = record(&tj[0], PFLREF_EV_STEP, 0, 0, 1, "v", P);
    const double *p2 = record(&tj[0], PFLREF_EV_STEP, 0, 0, 2, "v", P);
    const double *d1 = record(&tj[1], PFLREF_EV_STEP, 0, 0, 1, "v", P);
    const double *m1 = record(&tj[2], PFLREF_EV_STEP, 0, 0, 1, "v", P);
    const double *m2 = record(&tj[2], PFLREF_EV_STEP, 0, 0, 2, "v", P);
    for (size_t p = 0; p < P; p++) {
        const int head = p >= W2;
        const double want_d = head ? p1[p] - eta_phi * wd * x0[p] : x0[p];
        ck_assert_msg(fabs(d1[p] - want_d) <= 1e-15 * (1 + fabs(want_d)),
                      "decay, entry %zu: %.17g, want %.17g", p, d1[p],
                      want_d);
        ck_assert_msg(m1[p] == p1[p], "momentum's first step, entry %zu", p);
        const double want_m = head ? p2[p] + mu * (p1[p] - x0[p]) : x0[p];
        ck_assert_msg(fabs(m2[p] - want_m) <= 1e-15 * (1 + fabs(want_m)),
                      "momentum's second step, entry %zu: %.17g, want "
                      "%.17g", p, m2[p], want_m);
    }
    /* the body steps (3, 4) leave the head where step 2 put it */
    for (int k = 1; k < 3; k++) {
        const double *h2 = record(&tj[k], PFLREF_EV_STEP, 0, 0, 2, "v", P);
        for (long q = 3; q <= 4; q++) {
            const double *xq = record(&tj[k], PFLREF_EV_STEP, 0, 0, q, "v",
                                      P);
            int body_moved = 0;
            for (size_t p = 0; p < P; p++) {
                if (p >= W2)
                    ck_assert_msg(xq[p] == h2[p], "run %d, step %ld moved "
                                  "head entry %zu", k, q, p);
                else
                    body_moved |= xq[p] != h2[p];
            }
            ck_assert_msg(body_moved, "run %d, step %ld left the body", k, q);
        }
    }
    for (int k = 0; k < 3; k++) {
        pflref_trajectory_free(&tj[k]);
        pflref_run_result_free(r[k]);
    }
    tb_case *c = pac_case(0.3, 0.55, 0.4, 1);
    tb_preset(c, "fedpac", "official_run");
    ck_assert_int_eq(c->hyper.fedpac.distance, PFLREF_FEDPAC_DISTANCE_MSE);
    ck_assert_int_eq(c->hyper.fedpac.alpha_small,
                     PFLREF_FEDPAC_ALPHA_RENORMALISED);
    ck_assert_int_eq(c->hyper.fedpac.missing, PFLREF_FEDPAC_MISSING_OWN_START);
    ck_assert(c->hyper.opt.momentum == 0.5);
    ck_assert(c->hyper.opt.weight_decay == 0.0005);
    ck_assert_int_eq(c->hyper.opt.state, PFLREF_OPT_STATE_RESET);
    tb_free(c);
}
END_TEST

/* Batch normalisation (a layer list dense 1→1, batchnorm1d with ε = 0 and
 * ρ = 1/4, dense 1→2; w = (W1, b1, γ, β, r_μ, r_v, W, b) = (2, 1/2, 1, 0,
 * 0, 1, (3/4, −1/2), (1/10, −1/5))), one client {x = 1, 3, 2}, y = (0, 1,
 * 1), so a = 2x + 1/2 = 5/2, 13/2, 9/2; τ_φ = 1, batches {0, 1}, {1, 2}.
 * l. 5 in evaluation mode: f = (a − r_μ)/√r_v = a, so h = (p_0 μ_0,
 * p_1 μ_1) = (1/3 · 5/2, 2/3 · 11/2) = (5/6, 11/3) and V = (1/3)[(1/3)
 * (25/4) − (1/9)(25/4) + (2/3)(125/4) − (4/9)(121/4)] = 79/27 (a training
 * pass over the set would normalise a to (a − 9/2)/√(8/3) instead).
 * l. 6's pass on {0, 1} (μ_B = 9/2, s²_B = 4, unbiased 8) moves r_μ, r_v
 * to 9/8, 11/4 though θ is frozen; l. 7's on {1, 2} (a = 13/2, 9/2 at the
 * unmoved W1, b1: μ_B = 11/2, unbiased 2) to (3/4)(9/8) + (1/4)(11/2) =
 * 71/32 and (3/4)(11/4) + (1/4)·2 = 41/16; under bn.running = frozen they
 * stay. */
#define PAC_BN_SPEC(SWITCHES)                                                \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"layers\", "    \
    "\"input\": [1], \"loss\": \"cross_entropy\", \"layers\": ["            \
    "{\"type\": \"dense\", \"name\": \"fc1\", \"out\": 1}, "                \
    "{\"type\": \"batchnorm1d\", \"name\": \"bn1\", \"eps\": 0, "            \
    "\"momentum\": 0.25}, {\"type\": \"dense\", \"name\": \"out\", "        \
    "\"out\": 2}]}, \"problem\": {\"clients\": [{\"X\": [[1], [3], [2]], "  \
    "\"y\": [0, 1, 1]}]}, \"init\": {\"kind\": \"given\", \"w\": [2, 0.5, " \
    "1, 0, 0, 1, 0.75, -0.5, 0.1, -0.2]}, \"algorithm\": {\"name\": "       \
    "\"fedpac\", \"hyperparameters\": {\"eta\": 0.3, \"fedpac.lambda\": "   \
    "0.5, \"fedpac.eta_phi\": 0.4, \"fedpac.tau_phi\": 1}, \"switches\": {" \
    SWITCHES "}}, \"schedule\": {\"kind\": \"given\", \"rounds\": "          \
    "[{\"clients\": [0], \"batches\": [[[0, 1], [1, 2]]]}]}}"

START_TEST(test_bn_modes)
{
    /* req: fedpac.bn */
    enum { G = 2, R_MU = 4, R_V = 5 };
    const char *const texts[2] = {
        PAC_BN_SPEC(""), PAC_BN_SPEC("\"bn.running\": \"frozen\"")};
    for (int frozen = 0; frozen < 2; frozen++) {
        pflref_spec *spec = tu_spec(texts[frozen]);
        pflref_trajectory tj;
        pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
        const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &tj};
        pflref_run_result *r = tu_run(spec, &tr);
        const double *V = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "V", 1);
        const double *h = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "h", 2);
        ck_assert_msg(fabs(h[0] - 5.0 / 6.0) < 1e-14 &&
                          fabs(h[1] - 11.0 / 3.0) < 1e-14,
                      "h = (%.17g, %.17g): evaluation mode gives (5/6, 11/3)",
                      h[0], h[1]);
        ck_assert_msg(fabs(V[0] - 79.0 / 27.0) < 1e-14,
                      "V = %.17g: evaluation mode gives 79/27", V[0]);
        const double *x1 = record(&tj, PFLREF_EV_STEP, 0, 0, 1, "v", 10);
        const double *x2 = record(&tj, PFLREF_EV_STEP, 0, 0, 2, "v", 10);
        /* l. 6: θ (W1, b1, γ, β) frozen, the head moved */
        ck_assert(x1[0] == 2.0 && x1[1] == 0.5 && x1[G] == 1.0 &&
                  x1[G + 1] == 0.0);
        ck_assert(fabs(x1[6] - 0.75) > 1e-6);
        if (frozen) {
            ck_assert(x1[R_MU] == 0.0 && x1[R_V] == 1.0 &&
                      x2[R_MU] == 0.0 && x2[R_V] == 1.0);
        } else {
            ck_assert_msg(fabs(x1[R_MU] - 9.0 / 8.0) < 1e-14 &&
                              fabs(x1[R_V] - 11.0 / 4.0) < 1e-14,
                          "after l. 6: r_μ = %.17g, r_v = %.17g; its "
                          "training pass gives 9/8, 11/4", x1[R_MU],
                          x1[R_V]);
            ck_assert_msg(fabs(x2[R_MU] - 71.0 / 32.0) < 1e-14 &&
                              fabs(x2[R_V] - 41.0 / 16.0) < 1e-14,
                          "after l. 7: r_μ = %.17g, r_v = %.17g; its "
                          "training pass gives 71/32, 41/16", x2[R_MU],
                          x2[R_V]);
        }
        /* l. 7 moved θ's β (the step ran; with ε = 0 the normalised a
         * does not depend on W1 > 0 and b1, whose gradient is 0), not the
         * head */
        ck_assert(fabs(x2[G + 1]) > 1e-9 && x2[6] == x1[6]);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        pflref_spec_free(spec);
    }
}
END_TEST

/* ref/models/features_bn.c on PAC_BN_SPEC's model at w⁰ (γ = 1, β = 0,
 * r_μ = 0, r_v = 1, ε = 0): evaluation mode gives f = a = 2x + 1/2 =
 * 5/2, 13/2 for x = 1, 3; a training pass on that batch (μ_B = 9/2,
 * s_B = 2) gives (a − 9/2)/2 = −1, 1, and the body gradient of the signal
 * dΦ = (1, 0) through it is 0 for W1, b1 (ε = 0: f does not depend on
 * them) and (1/2)(−1) for γ, 1/2 for β.  An mlp is refused. */
START_TEST(test_bn_features_modes)
{
    /* req: fedpac.bn */
    pflref_spec *spec = tu_spec(PAC_BN_SPEC(""));
    const pflref_model *m = &spec->problem->model;
    const pflref_data *Dat = &spec->problem->clients[0].train;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 3);
    const size_t idx[2] = {0, 1};
    const double w0[10] = {2, 0.5, 1, 0, 0, 1, 0.75, -0.5, 0.1, -0.2};
    double A[2], F[2], g[10] = {0}, dPhi[2] = {1, 0};
    ck_assert_int_eq(pflref_bn_features_mode(m, w0, Dat, idx, 2, 0, ws, A,
                                             F), PFLREF_OK);
    ck_assert_msg(F[0] == 2.5 && F[1] == 6.5, "evaluation: f = (%.17g, "
                  "%.17g), want (5/2, 13/2)", F[0], F[1]);
    ck_assert_int_eq(pflref_bn_features_mode(m, w0, Dat, idx, 2, 1, ws, A,
                                             F), PFLREF_OK);
    ck_assert_msg(F[0] == -1.0 && F[1] == 1.0, "training: f = (%.17g, "
                  "%.17g), want (−1, 1)", F[0], F[1]);
    ck_assert_int_eq(pflref_bn_body_grad_features(m, w0, dPhi, Dat,
                                                  idx, 2, ws, g),
                     PFLREF_OK);
    ck_assert_msg(fabs(g[0]) < 1e-15 && fabs(g[1]) < 1e-15 &&
                      fabs(g[2] + 0.5) < 1e-15 && fabs(g[3] - 0.5) < 1e-15,
                  "g = (%.17g, %.17g, %.17g, %.17g), want (0, 0, −1/2, 1/2)",
                  g[0], g[1], g[2], g[3]);
    pflref_model_workspace_free(ws);
    pflref_spec_free(spec);
    /* an mlp: refused, naming m */
    tb_case *c = pac_case(0.35, 0.6, 0.45, 1);
    const pflref_model *mm = &c->problem->model;
    pflref_model_workspace *wm = pflref_model_workspace_alloc(mm, 5);
    double Am[5 * H], Fm[5 * H];
    ck_assert_int_eq(pflref_bn_features_mode(mm, W0,
                                             &c->problem->clients[0].train,
                                             ALL, 3, 0, wm, Am, Fm),
                     PFLREF_EINVAL);
    pflref_model_workspace_free(wm);
    tb_free(c);
}
END_TEST

/* The two batch-norm vectors (golden/fedpac/make_fedpac.py). */
START_TEST(test_bn_vectors)
{
    /* req: fedpac.bn */
    tu_assert_golden("golden/fedpac/layers-bn-paper.json");
    tu_assert_golden("golden/fedpac/layers-bn-pfllib.json");
}
END_TEST

Suite *fedpac_suite(void)
{
    Suite *s = suite_create("fedpac");
    TCase *tc = tcase_create("fedpac");
    tcase_add_test(tc, test_statistics_at_received_theta);
    tcase_add_test(tc, test_classifier_weights_solve_the_qp);
    tcase_add_test(tc, test_classifier_then_aligned_body_steps);
    tcase_add_test(tc, test_server_centroids_and_heads);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_small_weights);
    tcase_add_test(tc, test_missing_centroid_rules);
    tcase_add_test(tc, test_uniform_centroids_and_presets);
    tcase_add_test(tc, test_client_optimizers);
    tcase_add_test(tc, test_bn_modes);
    tcase_add_test(tc, test_bn_features_modes);
    tcase_add_test(tc, test_bn_vectors);
    suite_add_tcase(s, tc);
    return s;
}
