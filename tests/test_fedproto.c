/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedproto.c: FedProto (ref/algorithms/fedproto.c).
 *
 * The problem of golden/fedproto/: an mlp 2-3-3 (ReLU, cross-entropy),
 * three clients of 3, 4 and 2 samples with label skew (client 0 holds
 * classes {0, 1}, client 1 all three, client 2 {1, 2}).  The local step is
 * checked against central differences of Eq. 6's loss formed here from
 * the public loss and features calls, the prototypes and Eq. 5 against
 * sums formed here from the public features call, and the evaluation by
 * the nearest prototype against a count formed here; the golden vectors
 * check whole runs against the 60-digit generator.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

enum { D = 2, H = 3, K = 3, P = H * D + H + K * H + K };

static const double W0[P] = {0.7,  -0.4, 0.3,   0.9, -0.5, 0.6, 0.35,
                             0.25, 0.4,  0.8, -0.45, 0.55, -0.6, 0.5,
                             0.3,  0.1, -0.15, 0.65, 0.05, -0.2, 0.15};
static const double X0[] = {0.8, -0.35, -0.6, 0.9, 0.45, 0.7};
static const double Y0[] = {1, 0, 1};
static const double X1[] = {-0.3, -0.85, 0.95, 0.15, -0.7, 0.4, 0.25, -0.55};
static const double Y1[] = {0, 2, 0, 1};
static const double X2[] = {0.65, 0.55, -0.9, -0.2};
static const double Y2[] = {2, 1};

/* The three clients, w⁰ = W0, η = 0.3, λ = lambda. */
static tb_case *proto_case(double lambda)
{
    pflref_model m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H,
                            PFLREF_ACT_RELU, 1, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3, X0, Y0);
    tb_train(c, 1, 4, X1, Y1);
    tb_train(c, 2, 2, X2, Y2);
    tb_w0(c, W0);
    c->hyper.eta = 0.3;
    c->hyper.fedproto.lambda = lambda;
    return c;
}

/* The record (kind, round, client, name) of tj, or NULL. */
static const double *record(const pflref_trajectory *tj,
                            pflref_event_kind kind, long round, long client,
                            const char *name, size_t len)
{
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        if (rec->kind == kind && rec->round == round &&
            rec->client == client && strcmp(rec->name, name) == 0) {
            ck_assert_uint_eq(rec->len, len);
            return tj->values + rec->offset;
        }
    }
    ck_abort_msg("no record %s of round %ld, client %ld", name, round,
                 client);
    return NULL;
}

/* Eq. 4 formed here: C[j] = mean f(x) over the samples of class j of Dt
 * at w, n[j] their count. */
static void prototypes(const pflref_model *m, const pflref_data *Dt,
                       const double *w, double C[K * H], double n[K])
{
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, Dt->n);
    double A[4 * H], F[4 * H];
    ck_assert_int_eq(pflref_model_features(m, w, Dt, NULL, Dt->n, ws, A, F),
                     PFLREF_OK);
    memset(C, 0, sizeof(double) * K * H);
    memset(n, 0, sizeof(double) * K);
    for (size_t r = 0; r < Dt->n; r++) {
        const size_t y = (size_t)Dt->y[r];
        for (size_t u = 0; u < H; u++)
            C[y * H + u] += F[r * H + u];
        n[y] += 1;
    }
    for (size_t j = 0; j < K; j++)
        for (size_t u = 0; n[j] > 0 && u < H; u++)
            C[j * H + u] /= n[j];
    pflref_model_workspace_free(ws);
}

/* Eq. 6 formed here: mean CE + λ mean ‖f(x) − C̄^(y)‖². */
static double proto_loss(const pflref_model *m, const pflref_data *Dt,
                         const size_t *idx, size_t nb, const double *theta,
                         const double *Cbar, double lambda,
                         pflref_model_workspace *ws)
{
    double A[4 * H], F[4 * H], ce;
    ck_assert_int_eq(pflref_model_loss(m, theta, Dt, idx, nb, ws, &ce),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_features(m, theta, Dt, idx, nb, ws, A, F),
                     PFLREF_OK);
    double R = 0;
    for (size_t j = 0; j < nb; j++) {
        const size_t y = (size_t)Dt->y[idx[j]];
        for (size_t u = 0; u < H; u++)
            R += (F[j * H + u] - Cbar[y * H + u]) *
                 (F[j * H + u] - Cbar[y * H + u]);
    }
    return ce + lambda * R / (double)nb;
}

/* The intermediates --trace prints at round 1, client 0, step 1: the
 * batch's features f (LocalUpdate l. 3) and L (l. 4). */
typedef struct {
    double f[2 * H], L;
    int got_f, got_L;
} step_shown;

static void catch_shown(void *ctx, const pflref_event *ev)
{
    step_shown *sh = ctx;
    if (ev->kind != PFLREF_EV_INTERMEDIATE || ev->round != 1 ||
        ev->client != 0 || ev->step != 1)
        return;
    if (strcmp(ev->name, "f") == 0 && ev->len == 2 * H) {
        memcpy(sh->f, ev->value, sizeof sh->f);
        sh->got_f++;
    } else if (strcmp(ev->name, "L") == 0 && ev->len == 1) {
        sh->L = ev->value[0];
        sh->got_L++;
    }
}

/* Client 0's first step in round 1 (C̄ = client 1's round-0 prototypes,
 * every class present) is v ← v − η ∇L of Eq. 6: central differences of
 * L to 1e-7; and the trace's L there is Eq. 6 formed here, its features
 * the features call's at w⁰. */
START_TEST(test_step_is_gradient_of_loss)
{
    /* req: fedproto.eq6, fedproto.alg1.local.l5 */
    /* req: fedproto.alg1.local.l3, fedproto.alg1.local.l4 */
    const double lambda = 0.35, eta = 0.3;
    tb_case *c = proto_case(lambda);
    tb_round(c, "1", "2 1 0 | 3 1");
    pflref_run_result *a = tb_run(c, "fedproto", NULL);
    tb_free(c);
    c = proto_case(lambda);
    tb_round(c, "1", "2 1 0 | 3 1");
    tb_round(c, "0", "0 2");
    step_shown sh = {.got_f = 0};
    const pflref_trace shown = {catch_shown, &sh};
    pflref_run_result *b = tb_run(c, "fedproto", &shown);
    const pflref_model *m = &c->problem->model;
    double Cbar[K * H], n[K];
    prototypes(m, &c->problem->clients[1].train, a->v + P, Cbar, n);
    ck_assert(n[0] == 2 && n[1] == 1 && n[2] == 1);
    const pflref_data *Dt = &c->problem->clients[0].train;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 4);
    const size_t idx[] = {0, 2};
    double theta[P];
    for (size_t p = 0; p < P; p++) {
        const double h = 1e-6;
        memcpy(theta, W0, sizeof theta);
        theta[p] += h;
        const double up = proto_loss(m, Dt, idx, 2, theta, Cbar, lambda, ws);
        theta[p] -= 2 * h;
        const double dn = proto_loss(m, Dt, idx, 2, theta, Cbar, lambda, ws);
        const double fd = (up - dn) / (2 * h);
        const double step = (W0[p] - b->v[p]) / eta;
        ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                      "entry %zu: (w⁰ − v_0)/η = %.12g, central difference "
                      "%.12g", p, step, fd);
    }
    ck_assert_int_eq(sh.got_f, 1);
    ck_assert_int_eq(sh.got_L, 1);
    const double L = proto_loss(m, Dt, idx, 2, W0, Cbar, lambda, ws);
    ck_assert_msg(fabs(sh.L - L) <= 1e-15 * fabs(L) && L > 0.1,
                  "the trace's L = %.17g, Eq. 6 here %.17g", sh.L, L);
    double A[2 * H], F[2 * H];
    ck_assert_int_eq(pflref_model_features(m, W0, Dt, idx, 2, ws, A, F),
                     PFLREF_OK);
    for (size_t u = 0; u < 2 * H; u++)
        ck_assert_msg(sh.f[u] == F[u], "f[%zu] = %.17g, not %.17g", u,
                      sh.f[u], F[u]);
    pflref_model_workspace_free(ws);
    pflref_run_result_free(a);
    pflref_run_result_free(b);
    tb_free(c);
}
END_TEST

/* Round 0 has no global prototype: FedProto's round 0 is "local"'s bit for
 * bit for any λ; a second round with λ > 0 differs from it. */
START_TEST(test_round0_is_local)
{
    /* req: fedproto.alg1.server.l1 */
    tb_case *c = proto_case(2.5);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    pflref_run_result *fp = tb_run(c, "fedproto", NULL);
    pflref_run_result *lo = tb_run(c, "local", NULL);
    ck_assert(memcmp(fp->v, lo->v, sizeof(double) * 3 * P) == 0);
    pflref_run_result_free(fp);
    pflref_run_result_free(lo);
    tb_free(c);
    c = proto_case(2.5);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    fp = tb_run(c, "fedproto", NULL);
    lo = tb_run(c, "local", NULL);
    double diff = 0;
    for (size_t p = 0; p < 2 * P; p++)
        diff = fmax(diff, fabs(fp->v[p] - lo->v[p]));
    ck_assert_msg(diff > 1e-4, "λ = 2.5 moved the models by %g only", diff);
    /* client 2 never trained: w⁰ */
    ck_assert(memcmp(fp->v + 2 * P, W0, sizeof(double) * P) == 0);
    pflref_run_result_free(fp);
    pflref_run_result_free(lo);
    tb_free(c);
}
END_TEST

/* The notes: C and n_C are Eq. 4 at the trained model; C_bar is Eq. 5
 * (weights |D_{i,j}|) or, under weights = uniform, the plain mean; N_bar
 * counts the clients holding each class. */
START_TEST(test_prototypes_and_aggregation)
{
    /* req: fedproto.eq4, fedproto.eq5, fedproto.alg1.local.l8 */
    for (int uniform = 0; uniform <= 1; uniform++) {
        tb_case *c = proto_case(0.35);
        c->hyper.fedproto.weights = uniform;
        tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedproto", &tj);
        const pflref_model *m = &c->problem->model;
        double C0[K * H], n0[K], C1[K * H], n1[K];
        prototypes(m, &c->problem->clients[0].train, r->v, C0, n0);
        prototypes(m, &c->problem->clients[1].train, r->v + P, C1, n1);
        const double *c0 = record(&tj, PFLREF_EV_NOTE, 0, 0, "C", K * H);
        const double *nc0 = record(&tj, PFLREF_EV_NOTE, 0, 0, "n_C", K);
        for (size_t q = 0; q < K * H; q++)
            ck_assert(fabs(c0[q] - C0[q]) <= 1e-15);
        ck_assert(nc0[0] == 1 && nc0[1] == 2 && nc0[2] == 0);
        const double *cb = record(&tj, PFLREF_EV_NOTE, 0, -1, "C_bar", K * H);
        const double *nb = record(&tj, PFLREF_EV_NOTE, 0, -1, "N_bar", K);
        ck_assert(nb[0] == 2 && nb[1] == 2 && nb[2] == 1);
        for (size_t j = 0; j < K; j++)
            for (size_t u = 0; u < H; u++) {
                const double a0 = n0[j] > 0 ? (uniform ? 1 : n0[j]) : 0;
                const double a1 = n1[j] > 0 ? (uniform ? 1 : n1[j]) : 0;
                const double want =
                    (a0 * C0[j * H + u] + a1 * C1[j * H + u]) / (a0 + a1);
                ck_assert_msg(fabs(cb[j * H + u] - want) <= 1e-15,
                              "uniform %d, class %zu: C̄ %.17g, Eq. 5 %.17g",
                              uniform, j, cb[j * H + u], want);
            }
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
}
END_TEST

/* The "prototype" evaluation: ŷ = argmin_j ‖f(x) − C̄^(j)‖² over the
 * classes with a prototype; its accuracy counted here from the final
 * models and the last C_bar.  A class without a prototype is never
 * predicted (round 1 of client 0 alone leaves class 2 without one). */
START_TEST(test_nearest_prototype_evaluation)
{
    /* req: fedproto.eval.proto */
    tb_case *c = proto_case(0.35);
    tb_round(c, "1", "2 1 0 | 3 1");
    tb_round(c, "0", "0 2 | 1 0 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedproto", &tj);
    const double *cb = record(&tj, PFLREF_EV_NOTE, 1, -1, "C_bar", K * H);
    const double *nb = record(&tj, PFLREF_EV_NOTE, 1, -1, "N_bar", K);
    ck_assert(nb[2] == 0);
    ck_assert_uint_eq(r->n_eval, 2);
    ck_assert_str_eq(r->eval[1].label, "prototype");
    const pflref_model *m = &c->problem->model;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 4);
    for (size_t i = 0; i < 3; i++) {
        const pflref_data *Dt = &c->problem->clients[i].train;
        double A[4 * H], F[4 * H], correct = 0, loss = 0;
        ck_assert_int_eq(pflref_model_features(m, r->v + i * P, Dt, NULL,
                                               Dt->n, ws, A, F), PFLREF_OK);
        for (size_t s = 0; s < Dt->n; s++) {
            size_t best = K;
            double dbest = INFINITY;
            for (size_t j = 0; j < K; j++) {
                double d = 0;
                for (size_t u = 0; u < H; u++)
                    d += (F[s * H + u] - cb[j * H + u]) *
                         (F[s * H + u] - cb[j * H + u]);
                if (nb[j] > 0 && d < dbest) {
                    dbest = d;
                    best = j;
                }
            }
            ck_assert(best != 2);
            correct += best == (size_t)Dt->y[s];
            loss += dbest;
        }
        const pflref_eval *e = &r->eval[1].train[i];
        ck_assert_msg(fabs(e->accuracy - correct / (double)Dt->n) < 1e-15,
                      "client %zu: accuracy %g, counted %g", i, e->accuracy,
                      correct / (double)Dt->n);
        ck_assert(fabs(e->loss - loss / (double)Dt->n) <= 1e-14);
    }
    pflref_model_workspace_free(ws);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* The argmin's tie rule at its threshold (golden/boundaries.py): W1 = 0
 * and b1 = (1/4, 1/2, 3/4) (dyadic), every client in one round of no
 * step, so every embedding is f(x) = ReLU(b1) = b1 and Eq. 5's weighted
 * means of equal dyadic vectors are b1 exactly: every class is at distance
 * 0 from every sample.  Ties go to the lowest class, so the prototype
 * accuracy is the share of label 0 (1/3, 2/4, 0); ties to the highest
 * (≤ in the argmin) would give the share of label 2 (0, 1/4, 1/2). */
START_TEST(test_nearest_prototype_tie)
{
    /* req: fedproto.eval.proto */
    tb_case *c = proto_case(0.35);
    double w[P];
    memcpy(w, W0, sizeof w);
    for (size_t q = 0; q < H * D; q++)
        w[q] = 0.0;
    w[H * D] = 0.25;
    w[H * D + 1] = 0.5;
    w[H * D + 2] = 0.75;
    tb_w0(c, w);
    tb_round(c, "0 1 2", "", "", "");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedproto", &tj);
    const double *cb = record(&tj, PFLREF_EV_NOTE, 0, -1, "C_bar", K * H);
    const double *nb = record(&tj, PFLREF_EV_NOTE, 0, -1, "N_bar", K);
    for (size_t j = 0; j < K; j++) {
        ck_assert(nb[j] > 0);
        for (size_t u = 0; u < H; u++)
            ck_assert(cb[j * H + u] == w[H * D + u]);
    }
    ck_assert_str_eq(r->eval[1].label, "prototype");
    const double want[3] = {1.0 / 3.0, 0.5, 0.0};
    for (size_t i = 0; i < 3; i++) {
        const pflref_eval *e = &r->eval[1].train[i];
        ck_assert_msg(e->accuracy == want[i],
                      "client %zu: accuracy %g, ties to class 0 give %g", i,
                      e->accuracy, want[i]);
        ck_assert(e->loss == 0.0);
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* A model without an embedding is refused naming model.kind; a last round
 * that gives no prototype under during_training (no scheduled sample) is
 * refused naming the round: the nearest-prototype evaluation needs C̄. */
START_TEST(test_refusals)
{
    /* req: fedproto.model, fedproto.eval.undefined */
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY,
                              D, K, 0, 1);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    c->hyper.fedproto.lambda = 0.35;
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "fedproto", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.kind");
    ck_assert(strstr(err.message, "embedding") != NULL);
    tb_free(c);
    c = proto_case(0.35);
    c->hyper.fedproto.client_protos = PFLREF_FEDPROTO_PROTOS_DURING_TRAINING;
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    tb_round(c, "2", "");
    tb_run_error(c, "fedproto", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[1]");
    ck_assert(strstr(err.message, "nearest global prototype") != NULL);
    tb_free(c);
}
END_TEST

/* Batch normalisation in the embedding: fc1 (2→3) W 0–5, b 6–8, γ 9–11,
 * β 12–14, r_μ 15–17, r_v 18–20, tanh, out (3→2) 21–28; one client, one
 * step on samples {0, 2}.  The step's training pass moves v's running
 * statistics once: r_μ ← 0.9 r_μ + 0.1 μ_B, r_v ← 0.9 r_v + 0.1 · 2 s²_B,
 * μ_B, s²_B of fc1's outputs worked here from the inputs; Eq. 4's
 * prototypes of the trained model come from evaluation passes, which move
 * nothing, so the reported v is the same under trained and
 * during_training bit for bit (round 0 has no prototype to pull f). */
static pflref_run_result *bn_run(const char *protos, double *r_mu1,
                                 double *r_v1)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"layers\", \"input\": [2], \"loss\": \"cross_entropy\", "
             "\"layers\": [{\"type\": \"dense\", \"name\": \"fc1\", \"out\": "
             "3}, {\"type\": \"batchnorm1d\", \"name\": \"norm1\"}, "
             "{\"type\": \"tanh\"}, {\"type\": \"dense\", \"name\": \"out\", "
             "\"out\": 2}]}, \"problem\": {\"clients\": [{\"X\": [[0.8, "
             "-0.35], [-0.6, 0.9], [0.45, 0.7]], \"y\": [1, 0, 1]}]}, "
             "\"init\": {\"kind\": \"given\", \"w\": [0.7, -0.4, 0.3, 0.9, "
             "-0.5, 0.6, 0.35, 0.25, 0.4, 1.2, 0.8, 1.05, 0.1, -0.2, 0.15, "
             "0.05, -0.1, 0.3, 0.9, 1.3, 0.7, 0.6, -0.35, 0.45, 0.2, 0.5, "
             "-0.4, 0.15, -0.25]}, \"algorithm\": {\"name\": \"fedproto\", "
             "\"hyperparameters\": {\"eta\": 0.2, \"fedproto.lambda\": 0.7}, "
             "\"switches\": {\"fedproto.client_protos\": \"%s\"}}, "
             "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": "
             "[0], \"batches\": [[[0, 2]]]}]}}", protos);
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    const double W[6] = {0.7, -0.4, 0.3, 0.9, -0.5, 0.6};
    const double b[3] = {0.35, 0.25, 0.4};
    const double x0[2] = {0.8, -0.35}, x2[2] = {0.45, 0.7};
    const double r_mu[3] = {0.05, -0.1, 0.3}, r_v[3] = {0.9, 1.3, 0.7};
    for (size_t c = 0; c < 3; c++) {
        const double a0 = W[2 * c] * x0[0] + W[2 * c + 1] * x0[1] + b[c];
        const double a2 = W[2 * c] * x2[0] + W[2 * c + 1] * x2[1] + b[c];
        const double mean = (a0 + a2) / 2;
        const double var = ((a0 - mean) * (a0 - mean) +
                            (a2 - mean) * (a2 - mean)) / 2;
        r_mu1[c] = 0.9 * r_mu[c] + 0.1 * mean;
        r_v1[c] = 0.9 * r_v[c] + 0.1 * 2.0 * var;
    }
    pflref_spec_free(spec);
    return res;
}

START_TEST(test_bn_running_moves_once_per_step)
{
    /* req: fedproto.bn */
    double r_mu1[3], r_v1[3];
    pflref_run_result *a = bn_run("trained", r_mu1, r_v1);
    pflref_run_result *d = bn_run("during_training", r_mu1, r_v1);
    for (size_t c = 0; c < 3; c++)
        ck_assert_msg(fabs(a->v[15 + c] - r_mu1[c]) <= 1e-15 &&
                          fabs(a->v[18 + c] - r_v1[c]) <= 1e-15,
                      "channel %zu: r_μ %.17g (expected %.17g), r_v %.17g "
                      "(expected %.17g)", c, a->v[15 + c], r_mu1[c],
                      a->v[18 + c], r_v1[c]);
    for (size_t p = 0; p < 29; p++)
        ck_assert_double_eq(a->v[p], d->v[p]);
    pflref_run_result_free(a);
    pflref_run_result_free(d);
}
END_TEST

Suite *fedproto_suite(void)
{
    Suite *s = suite_create("fedproto");
    TCase *tc = tcase_create("fedproto");
    tcase_add_test(tc, test_step_is_gradient_of_loss);
    tcase_add_test(tc, test_round0_is_local);
    tcase_add_test(tc, test_prototypes_and_aggregation);
    tcase_add_test(tc, test_nearest_prototype_evaluation);
    tcase_add_test(tc, test_nearest_prototype_tie);
    tcase_add_test(tc, test_bn_running_moves_once_per_step);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}
