/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_fedrod.c: FedRoD (ref/algorithms/fedrod.c).
 *
 * The problem of golden/fedrod/: an mlp 2-3-3 (identity body,
 * cross-entropy), three clients of 3, 4 and 5 samples with label skew
 * (client 0 holds classes {0, 1} only).  The generic step is checked
 * against central differences of the balanced softmax formed here from
 * the public features call, the personal step against central differences
 * of CE(z_G + z_P) formed here, the server's average and the
 * "personalized" evaluation against sums and evaluations formed here; the
 * client optimizers (opt.*, two objects: the generic model's and the
 * personal head's) against plain-SGD runs; the golden vectors check whole
 * runs against the 60-digit generator (golden/optim/fedrod-*.json for the
 * optimizers).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

enum { D = 2, H = 3, K = 3, P = H * D + H + K * H + K, W2 = 9, B2 = 18,
       HP = K * H + K };

static const double W0[P] = {0.7,  -0.4, 0.3,   0.9, -0.5, 0.6, 0.35,
                             0.25, 0.4,  0.8, -0.45, 0.55, -0.6, 0.5,
                             0.3,  0.1, -0.15, 0.65, 0.05, -0.2, 0.15};
static const double X0[] = {0.8, -0.35, -0.6, 0.9, 0.45, 0.7};
static const double Y0[] = {1, 0, 1};
static const double X1[] = {-0.3, -0.85, 0.95, 0.15, -0.7, 0.4, 0.25, -0.55};
static const double Y1[] = {0, 2, 0, 1};
static const double X2[] = {0.65, 0.55, -0.9, -0.2, 0.35, -0.75, -0.15, 0.6,
                            0.7, 0.05};
static const double Y2[] = {2, 1, 2, 2, 1};

/* The three clients, w⁰ = W0, η = eta. */
static tb_case *rod_case(double eta)
{
    pflref_model m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H,
                            PFLREF_ACT_IDENTITY, 1, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3, X0, Y0);
    tb_train(c, 1, 4, X1, Y1);
    tb_train(c, 2, 5, X2, Y2);
    tb_w0(c, W0);
    c->hyper.eta = eta;
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

/* F := the features of the samples idx of Dt at w; Z := their logits
 * W2 F + b2 at the head `head` (W2 then b2, HP entries). */
static void logits(const pflref_model *m, const pflref_data *Dt,
                   const size_t *idx, size_t nb, const double *w,
                   const double *head, double *F, double *Z)
{
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 4);
    double A[4 * H];
    ck_assert_int_eq(pflref_model_features(m, w, Dt, idx, nb, ws, A, F),
                     PFLREF_OK);
    for (size_t r = 0; r < nb; r++)
        for (size_t c = 0; c < K; c++) {
            double z = head[K * H + c];
            for (size_t u = 0; u < H; u++)
                z += head[c * H + u] * F[r * H + u];
            Z[r * K + c] = z;
        }
    pflref_model_workspace_free(ws);
}

/* mean −log softmax(z_r + log N)_{y_r} over the classes with N_c > 0 */
static double bsm_loss(const double *Z, const double *y, const size_t *idx,
                       size_t nb, const double N[K])
{
    double loss = 0;
    for (size_t r = 0; r < nb; r++) {
        double s = 0;
        for (size_t c = 0; c < K; c++)
            if (N[c] > 0)
                s += N[c] * exp(Z[r * K + c]);
        const size_t yr = (size_t)y[idx[r]];
        loss += log(s) - (Z[r * K + yr] + log(N[yr]));
    }
    return loss / (double)nb;
}

/* Client 0's first step (batch {0, 2}, N = (1, 2, 0)) is w ← w − η ∇ of
 * the balanced softmax formed here: central differences to 1e-7; class 2
 * (absent: probability 0) moves none of its head entries, and every entry
 * is finite. */
START_TEST(test_generic_step_is_bsm_gradient)
{
    /* req: fedrod.bsm, fedrod.bsm.absent, fedrod.alg1.l7 */
    const double eta = 0.35, N[K] = {1, 2, 0};
    tb_case *c = rod_case(eta);
    tb_round(c, "0", "0 2");
    pflref_run_result *r = tb_run(c, "fedrod", NULL);
    const pflref_model *m = &c->problem->model;
    const pflref_data *Dt = &c->problem->clients[0].train;
    const size_t idx[] = {0, 2};
    double theta[P], F[4 * H], Z[4 * K];
    for (size_t p = 0; p < P; p++) {
        const double h = 1e-6;
        double up, dn;
        memcpy(theta, W0, sizeof theta);
        theta[p] += h;
        logits(m, Dt, idx, 2, theta, theta + W2, F, Z);
        up = bsm_loss(Z, Dt->y, idx, 2, N);
        theta[p] -= 2 * h;
        logits(m, Dt, idx, 2, theta, theta + W2, F, Z);
        dn = bsm_loss(Z, Dt->y, idx, 2, N);
        const double fd = (up - dn) / (2 * h);
        const double step = (W0[p] - r->w[p]) / eta;
        ck_assert_msg(isfinite(r->w[p]), "entry %zu not finite", p);
        ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                      "entry %zu: (w⁰ − w)/η = %.12g, central difference "
                      "%.12g", p, step, fd);
    }
    for (size_t u = 0; u < H; u++)
        ck_assert(r->w[W2 + 2 * H + u] == W0[W2 + 2 * H + u]);
    ck_assert(r->w[B2 + 2] == W0[B2 + 2]);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* mean CE(z_G + W_P f + b_P, y) at the features F and generic logits Z */
static double personal_loss(const double *F, const double *ZG,
                            const double *phi, const double *y,
                            const size_t *idx, size_t nb)
{
    double loss = 0;
    for (size_t r = 0; r < nb; r++) {
        double z[K], mx = -INFINITY, s = 0;
        for (size_t c = 0; c < K; c++) {
            z[c] = ZG[r * K + c] + phi[K * H + c];
            for (size_t u = 0; u < H; u++)
                z[c] += phi[c * H + u] * F[r * H + u];
            mx = fmax(mx, z[c]);
        }
        for (size_t c = 0; c < K; c++)
            s += exp(z[c] - mx);
        loss += log(s) + mx - z[(size_t)y[idx[r]]];
    }
    return loss / (double)nb;
}

/* Client 0's first personal step from φ_P⁰ = 0 is φ_P ← −η ∇ of
 * CE(z_G + z_P) with f(x) and z_G at the iterate after the generic step
 * (fedrod.features = after) or at w⁰ (before): central differences to
 * 1e-7 in each case; the two differ. */
START_TEST(test_personal_step_is_ce_gradient)
{
    /* req: fedrod.alg1.l8, fedrod.features */
    const double eta = 0.45;
    const size_t idx[] = {0, 2};
    double phi_run[2][HP];
    for (int before = 0; before <= 1; before++) {
        tb_case *c = rod_case(eta);
        c->hyper.fedrod.features = before;
        tb_round(c, "0", "0 2");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedrod", &tj);
        const pflref_model *m = &c->problem->model;
        const pflref_data *Dt = &c->problem->clients[0].train;
        const double *phi = record(&tj, PFLREF_EV_STEP, 0, 0, 1, "phi_P", HP);
        const double *at = before ? W0 : r->w;
        double F[4 * H], Z[4 * K], q[HP] = {0};
        logits(m, Dt, idx, 2, at, at + W2, F, Z);
        for (size_t p = 0; p < HP; p++) {
            const double h = 1e-6;
            q[p] = h;
            const double up = personal_loss(F, Z, q, Dt->y, idx, 2);
            q[p] = -h;
            const double dn = personal_loss(F, Z, q, Dt->y, idx, 2);
            q[p] = 0;
            const double fd = (up - dn) / (2 * h), step = -phi[p] / eta;
            ck_assert_msg(fabs(step - fd) <= 1e-7 * (1 + fabs(fd)),
                          "before %d, entry %zu: −φ_P/η = %.12g, central "
                          "difference %.12g", before, p, step, fd);
        }
        memcpy(phi_run[before], phi, sizeof phi_run[0]);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
    double diff = 0;
    for (size_t p = 0; p < HP; p++)
        diff = fmax(diff, fabs(phi_run[0][p] - phi_run[1][p]));
    ck_assert_msg(diff > 1e-4, "features before/after differ by %g", diff);
}
END_TEST

/* l. 12: w = Σ_{i∈S_t} (n_i / Σ n_j) w_local,i from the CLIENT_END
 * records (n = 3, 4). */
START_TEST(test_server_average)
{
    /* req: fedrod.alg1.l12, fedrod.alg1.l10 */
    tb_case *c = rod_case(0.3);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedrod", &tj);
    const double *w0l = record(&tj, PFLREF_EV_CLIENT_END, 0, 0, -1,
                               "w_local", P);
    const double *w1l = record(&tj, PFLREF_EV_CLIENT_END, 0, 1, -1,
                               "w_local", P);
    for (size_t p = 0; p < P; p++) {
        const double want = (3.0 / 7.0) * w0l[p] + (4.0 / 7.0) * w1l[p];
        ck_assert_msg(fabs(r->w[p] - want) <= 1e-15 * (1 + fabs(want)),
                      "entry %zu: w %.17g, the average %.17g", p, r->w[p],
                      want);
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* init.class_counts: counts equal to the data's give the run bit for bit
 * (N_{i,c} is data either way); PFLlib's drop_last counts (client 0
 * without one class-1 sample) change it. */
START_TEST(test_given_class_counts)
{
    /* req: fedrod.alg1.l7 */
    static const double SAME[3 * K] = {1, 2, 0, 2, 1, 1, 0, 2, 3};
    static const double DROP[3 * K] = {1, 1, 0, 2, 1, 1, 0, 2, 2};
    tb_case *c = rod_case(0.3);
    tb_round(c, "0 1", "0 2 | 1", "3 0 | 1 2");
    pflref_run_result *a = tb_run(c, "fedrod", NULL);
    c->hyper.fedrod.counts = SAME;
    pflref_run_result *b = tb_run(c, "fedrod", NULL);
    ck_assert_mem_eq(a->w, b->w, P * sizeof(double));
    c->hyper.fedrod.counts = DROP;
    pflref_run_result *d = tb_run(c, "fedrod", NULL);
    double diff = 0.0;
    for (size_t p = 0; p < P; p++)
        diff = fmax(diff, fabs(d->w[p] - a->w[p]));
    ck_assert(diff > 1e-6);
    pflref_run_result_free(a);
    pflref_run_result_free(b);
    pflref_run_result_free(d);
    tb_free(c);
}
END_TEST

/* "personalized" evaluates (θ, φ_G + φ_P,i): client 0 trains in round 0
 * only and keeps its φ_P (its NOTE of round 0) through round 1; client 2
 * never trains and keeps φ_P⁰ (0, or w⁰'s head under phi_p0 = generic). */
START_TEST(test_personalized_evaluation_and_stale_heads)
{
    /* req: fedrod.eval, fedrod.alg1.l1 */
    for (int generic = 0; generic <= 1; generic++) {
        tb_case *c = rod_case(0.3);
        c->hyper.fedrod.phi_p0 = generic;
        tb_round(c, "0", "0 2 | 1");
        tb_round(c, "1", "3 0 | 1 2");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedrod", &tj);
        ck_assert_uint_eq(r->n_eval, 2);
        ck_assert_str_eq(r->eval[0].label, "global");
        ck_assert_str_eq(r->eval[1].label, "personalized");
        const pflref_model *m = &c->problem->model;
        const double *phi0 = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "phi_P",
                                    HP);
        const double *heads[3] = {phi0, NULL, NULL};
        heads[2] = W0 + W2;
        double zero[HP] = {0};
        if (!generic)
            heads[2] = zero;
        pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 5);
        for (size_t i = 0; i < 3; i += 2) {
            double v[P];
            pflref_eval e;
            memcpy(v, r->w, sizeof v);
            for (size_t p = 0; p < HP; p++)
                v[W2 + p] += heads[i][p];
            ck_assert_int_eq(pflref_model_evaluate(
                                 m, v, &c->problem->clients[i].train, ws, &e),
                             PFLREF_OK);
            const pflref_eval *got = &r->eval[1].train[i];
            ck_assert_msg(fabs(got->loss - e.loss) <= 1e-15 * (1 + e.loss),
                          "generic %d, client %zu: loss %.17g, formed here "
                          "%.17g", generic, i, got->loss, e.loss);
            ck_assert(got->accuracy == e.accuracy);
        }
        pflref_model_workspace_free(ws);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
}
END_TEST

/* The vectors of the client optimizers (golden/optim/make_fedrod.py). */
static const char *const OPT_VECTORS[] = {
    "golden/optim/fedrod-momentum-decay.json",
    "golden/optim/fedrod-nesterov-personal-client.json",
    "golden/optim/fedrod-adam-server.json",
    "golden/optim/fedrod-adamw-weights-client.json",
    "golden/optim/fedrod-bn-momentum-decay.json",
};

START_TEST(test_optimizer_vectors)
{
    /* req: fedrod.opt */
    tu_assert_golden(OPT_VECTORS[_i]);
}
END_TEST

/* Weight decay λ on the personal head alone (opt.decay_scope = personal,
 * coupled, μ = 0): the generic model's steps are plain SGD's bit for bit,
 * and client 0's first personal step from φ_P⁰ = w⁰'s head is the plain
 * one less η λ φ_P⁰; under decay_scope = shared the personal head's
 * first step is the plain one (fedrod.features = before: at w⁰'s
 * features) and the generic model's moves. */
START_TEST(test_optimizer_decay_scopes)
{
    /* req: fedrod.opt */
    const double eta = 0.35, lambda = 0.1875;
    const pflref_opt_decay_scope scopes[] = {PFLREF_OPT_SCOPE_PERSONAL,
                                       PFLREF_OPT_SCOPE_SHARED};
    tb_case *c0 = rod_case(eta);
    c0->hyper.fedrod.phi_p0 = PFLREF_FEDROD_PHI_P0_GENERIC;
    c0->hyper.fedrod.features = PFLREF_FEDROD_FEATURES_BEFORE;
    tb_round(c0, "0", "0 2 | 1");
    pflref_trajectory tj0;
    pflref_run_result *r0 = tb_run_recorded(c0, "fedrod", &tj0);
    const double *phi0 = record(&tj0, PFLREF_EV_STEP, 0, 0, 1, "phi_P", HP);
    const double *x0 = record(&tj0, PFLREF_EV_STEP, 0, 0, 2, "w_local", P);
    for (size_t k = 0; k < 2; k++) {
        tb_case *c = rod_case(eta);
        c->hyper.fedrod.phi_p0 = PFLREF_FEDROD_PHI_P0_GENERIC;
        c->hyper.fedrod.features = PFLREF_FEDROD_FEATURES_BEFORE;
        c->hyper.opt.weight_decay = lambda;
        c->hyper.opt.decay_scope = scopes[k];
        tb_round(c, "0", "0 2 | 1");
        pflref_trajectory tj;
        pflref_run_result *r = tb_run_recorded(c, "fedrod", &tj);
        const double *phi = record(&tj, PFLREF_EV_STEP, 0, 0, 1, "phi_P", HP);
        const double *x = record(&tj, PFLREF_EV_STEP, 0, 0, 2, "w_local", P);
        double dx = 0;
        for (size_t p = 0; p < P; p++)
            dx = fmax(dx, fabs(x[p] - x0[p]));
        for (size_t p = 0; p < HP; p++) {
            /* φ_P⁰ = w⁰'s head: W2 then b2 */
            const double want = k == 0 ? phi0[p] - eta * lambda * W0[W2 + p]
                                       : phi0[p];
            ck_assert_msg(fabs(phi[p] - want) <= 1e-15 * (1 + fabs(want)),
                          "scope %zu, entry %zu: φ_P %.17g, want %.17g", k,
                          p, phi[p], want);
        }
        if (k == 0)
            ck_assert_msg(dx == 0.0, "decay on φ_P moved the generic model "
                          "by %g", dx);
        else
            ck_assert_msg(dx > 1e-4, "decay on the generic model moved it "
                          "by only %g", dx);
        pflref_trajectory_free(&tj);
        pflref_run_result_free(r);
        tb_free(c);
    }
    pflref_trajectory_free(&tj0);
    pflref_run_result_free(r0);
    tb_free(c0);
}
END_TEST

/* Two optimizer objects: with momentum μ (fedrod.features = before, so
 * that step 2's personal gradient g² is at x¹ and φ_P¹), the personal
 * head's second step is torch's φ_P² = φ_P¹ − η (μ g¹ + g²), its buffer
 * its own (g¹ = −φ_P¹/η from φ_P⁰ = 0; g² by central differences of
 * CE(z_G + z_P) formed here).  A buffer shared with the generic head's
 * tensors, or the plain step, would not give it. */
START_TEST(test_optimizer_own_buffers)
{
    /* req: fedrod.opt */
    const double eta = 0.3, mu = 0.625;
    tb_case *c = rod_case(eta);
    c->hyper.opt.momentum = mu;
    c->hyper.fedrod.features = PFLREF_FEDROD_FEATURES_BEFORE;
    tb_round(c, "0", "0 2 | 1");
    pflref_trajectory tj;
    pflref_run_result *r = tb_run_recorded(c, "fedrod", &tj);
    const double *phi1 = record(&tj, PFLREF_EV_STEP, 0, 0, 1, "phi_P", HP);
    const double *phi2 = record(&tj, PFLREF_EV_STEP, 0, 0, 2, "phi_P", HP);
    const double *x1 = record(&tj, PFLREF_EV_STEP, 0, 0, 1, "w_local", P);
    /* g¹ = −φ_P¹/η (φ_P⁰ = 0); g² formed here: CE(z_G + z_P) at x¹ and
     * φ_P¹ on batch {1}, by central differences */
    const pflref_model *m = &c->problem->model;
    const pflref_data *Dt = &c->problem->clients[0].train;
    const size_t idx[] = {1};
    double F[4 * H], Z[4 * K], q[HP];
    logits(m, Dt, idx, 1, x1, x1 + W2, F, Z);
    for (size_t p = 0; p < HP; p++) {
        const double h = 1e-6;
        memcpy(q, phi1, sizeof q);
        q[p] += h;
        const double up = personal_loss(F, Z, q, Dt->y, idx, 1);
        q[p] -= 2 * h;
        const double dn = personal_loss(F, Z, q, Dt->y, idx, 1);
        const double g2 = (up - dn) / (2 * h), g1 = -phi1[p] / eta;
        const double want = phi1[p] - eta * (mu * g1 + g2);
        ck_assert_msg(fabs(phi2[p] - want) <= 1e-8 * (1 + fabs(want)),
                      "entry %zu: φ_P² %.12g, torch's momentum step %.12g",
                      p, phi2[p], want);
    }
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    tb_free(c);
}
END_TEST

/* Batch normalisation (an mlp with bn; ε = 0 makes the BN output, and so
 * the loss, independent of W1 > 0 and b1: their gradient is 0 and every
 * pass of a step sees the same batch statistics).  d = h = 1, k = 2,
 * ρ = 1/4, w = (W1, b1, γ, β, r_μ, r_v, W2, b2) = (2, 1/2, 1, 0, 0, 1,
 * (3/4, −1/2), (1/10, −1/5)); client 0's batch {x = 1, 3}: a = 5/2, 13/2,
 * μ_B = 9/2, s²_B = 4, unbiased 8.  One training pass (fedrod.features =
 * before, PFLlib's) moves r_μ to (3/4)·0 + (1/4)(9/2) = 9/8 and r_v to
 * (3/4)·1 + (1/4)·8 = 11/4; two (after: l. 8's pass at the new x) to
 * (3/4)(9/8) + (1/4)(9/2) = 63/32 and (3/4)(11/4) + (1/4)·8 = 65/16. */
#define ROD_BN_SPEC(SWITCHES)                                                \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "       \
    "\"d\": 1, \"h\": 1, \"k\": 2, \"loss\": \"cross_entropy\", "           \
    "\"activation\": \"identity\", \"bn\": true, \"bn_eps\": 0, "          \
    "\"bn_momentum\": 0.25}, \"problem\": {\"clients\": [{\"X\": [[1], "    \
    "[3], [2]], \"y\": [0, 1, 1]}]}, \"init\": {\"kind\": \"given\", "       \
    "\"w\": [2, 0.5, 1, 0, 0, 1, 0.75, -0.5, 0.1, -0.2]}, "                 \
    "\"algorithm\": {\"name\": \"fedrod\", \"hyperparameters\": "           \
    "{\"eta\": 0.3}, \"switches\": {" SWITCHES "}}, \"schedule\": "         \
    "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "                \
    "\"batches\": [[[0, 1]]]}]}}"

static pflref_run_result *rod_bn_run(const char *text)
{
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *r = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert_uint_eq(r->P, 10);
    return r;
}

START_TEST(test_bn_running_passes)
{
    /* req: fedrod.bn */
    enum { R_MU = 4, R_V = 5 };
    pflref_run_result *one = rod_bn_run(
        ROD_BN_SPEC("\"fedrod.features\": \"before\""));
    ck_assert_msg(fabs(one->w[R_MU] - 9.0 / 8.0) < 1e-13 &&
                      fabs(one->w[R_V] - 11.0 / 4.0) < 1e-13,
                  "before: r_μ = %.17g, r_v = %.17g; one training pass "
                  "gives 9/8 and 11/4", one->w[R_MU], one->w[R_V]);
    pflref_run_result *two = rod_bn_run(ROD_BN_SPEC(""));
    ck_assert_msg(fabs(two->w[R_MU] - 63.0 / 32.0) < 1e-13 &&
                      fabs(two->w[R_V] - 65.0 / 16.0) < 1e-13,
                  "after: r_μ = %.17g, r_v = %.17g; two training passes "
                  "give 63/32 and 65/16", two->w[R_MU], two->w[R_V]);
    /* the premise: W1, b1 stay (gradient 0 up to rounding) */
    ck_assert(fabs(two->w[0] - 2.0) < 1e-14 && fabs(two->w[1] - 0.5) < 1e-14);
    /* bn.running = frozen: r_μ, r_v stay; every parameter is update's bit
     * for bit (training passes read the batch statistics only) */
    pflref_run_result *fr = rod_bn_run(ROD_BN_SPEC("\"bn.running\": \"frozen\""));
    ck_assert(fr->w[R_MU] == 0.0 && fr->w[R_V] == 1.0);
    for (size_t p = 0; p < 10; p++)
        if (p != R_MU && p != R_V)
            ck_assert_msg(fr->w[p] == two->w[p], "entry %zu: frozen %.17g, "
                          "update %.17g", p, fr->w[p], two->w[p]);
    /* the generic head moved: the steps ran */
    ck_assert(fabs(two->w[6] - 0.75) > 1e-3);
    pflref_run_result_free(one);
    pflref_run_result_free(two);
    pflref_run_result_free(fr);
}
END_TEST

/* bn.aggregate = parameters_only (PFLlib serverrod.py:26, :44 with
 * serverbase.py's send_models, aggregate_parameters).  ROD_BN_SPEC's model
 * with two clients, the preset pfllib (features before: one training pass
 * per batch), ε = 0 so W1, b1 never move and r_μ, r_v follow a = 2x + 1/2
 * alone.  Round 0: client 0 on {x = 1, 3} leaves 9/8, 11/4 (as
 * test_bn_running_passes), client 1 on {x = 3/2, −2, 1/2} (a = 7/2,
 * −7/2, 3/2: μ_B = 1/2, unbiased s² = 13) leaves (1/4)(1/2) = 1/8,
 * 3/4 + 13/4 = 4.  Round 1, client 1 alone on the same batch:
 *   parameters_only: from its own 1/8, 4: r_μ = (3/4)(1/8) + 1/8 = 7/32,
 *     r_v = 3 + 13/4 = 25/4, which w takes; after round 0 w held the
 *     first participant's (client 0's) 9/8, 11/4;
 *   average (n_i weights 5/8, 3/8): after round 0 w's r_μ = 45/64 + 3/64
 *     = 3/4, r_v = 55/32 + 3/2 = 103/32; round 1 from those: r_μ = 9/16 +
 *     1/8 = 11/16, r_v = (3/4)(103/32) + 13/4 = 725/128. */
#define ROD_KEEP_SPEC(SWITCHES, ROUNDS)                                      \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "       \
    "\"d\": 1, \"h\": 1, \"k\": 2, \"loss\": \"cross_entropy\", "           \
    "\"activation\": \"identity\", \"bn\": true, \"bn_eps\": 0, "          \
    "\"bn_momentum\": 0.25}, \"problem\": {\"clients\": [{\"X\": [[1], "    \
    "[3], [2], [6], [7]], \"y\": [0, 1, 1, 0, 1]}, {\"X\": [[1.5], [-2], "     \
    "[0.5]], \"y\": [1, 0, 0]}]}, \"init\": {\"kind\": \"given\", "          \
    "\"w\": [2, 0.5, 1, 0, 0, 1, 0.75, -0.5, 0.1, -0.2]}, "                 \
    "\"algorithm\": {\"name\": \"fedrod\", \"preset\": \"pfllib\", "        \
    "\"hyperparameters\": {\"eta\": 0.3}, \"switches\": {" SWITCHES "}}, " \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": [" ROUNDS "]}}"
#define ROD_KEEP_R0 "{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1, 2]]]}"
#define ROD_KEEP_R1 ROD_KEEP_R0 ", {\"clients\": [1], \"batches\": [[[0, 1, 2]]]}"

START_TEST(test_bn_keep_own_statistics)
{
    enum { R_MU = 4, R_V = 5 };
    static const struct {
        const char *text;
        double r_mu, r_v;
        const char *what;
    } cases[] = {
        {ROD_KEEP_SPEC("", ROD_KEEP_R0), 9.0 / 8.0, 11.0 / 4.0,
         "parameters_only (the preset's), round 0: the first participant's"},
        {ROD_KEEP_SPEC("", ROD_KEEP_R1), 7.0 / 32.0, 25.0 / 4.0,
         "parameters_only, round 1: client 1 from its own statistics"},
        {ROD_KEEP_SPEC("\"bn.aggregate\": \"average\"", ROD_KEEP_R0), 3.0 / 4.0,
         103.0 / 32.0, "average, round 0: the n_i-weighted average"},
        {ROD_KEEP_SPEC("\"bn.aggregate\": \"average\"", ROD_KEEP_R1),
         11.0 / 16.0, 725.0 / 128.0, "average, round 1: from w's"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pflref_spec *spec = tu_spec(cases[c].text);
        pflref_run_result *r = tu_run(spec, NULL);
        ck_assert_msg(fabs(r->w[R_MU] - cases[c].r_mu) < 1e-13 &&
                          fabs(r->w[R_V] - cases[c].r_v) < 1e-13,
                      "%s: w's r_μ = %.17g, r_v = %.17g, expected %.17g, "
                      "%.17g", cases[c].what, r->w[R_MU], r->w[R_V],
                      cases[c].r_mu, cases[c].r_v);
        ck_assert_int_eq(spec->hyper.bn_aggregate,
                         c < 2 ? PFLREF_BN_AGGREGATE_PARAMETERS
                               : PFLREF_BN_AGGREGATE_AVERAGE);
        pflref_run_result_free(r);
        pflref_spec_free(spec);
    }
}
END_TEST

/* The personalized evaluation under parameters_only is client i's model
 * (θ, φ_G + φ_P,i) with its OWN running statistics (its test_metrics runs
 * its self.model, clientrod.py:70-90), not w's: on ROD_KEEP_R1 client 0's
 * are those of its round-0 client_end (9/8, 11/4; w holds client 1's
 * 7/32, 25/4), formed here from the records and evaluated with the
 * model's own evaluation. */
START_TEST(test_bn_keep_personalized_evaluation)
{
    enum { P_ROD = 10, R_MU = 4, R_V = 5, HEAD = 6, H_ROD = 4 };
    pflref_spec *spec = tu_spec(ROD_KEEP_SPEC("", ROD_KEEP_R1));
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &tj};
    pflref_run_result *r = tu_run(spec, &tr);
    const pflref_model *m = &spec->problem->model;
    const double *phi = record(&tj, PFLREF_EV_NOTE, 0, 0, -1, "phi_P", H_ROD);
    const double *own = record(&tj, PFLREF_EV_CLIENT_END, 0, 0, -1, "w_local",
                               P_ROD);
    /* W_P (2 × 1) then b_P (2): the head's W2, b2 at offsets 6..9 */
    double v[P_ROD], vw[P_ROD];
    memcpy(v, r->w, sizeof v);
    for (size_t p = 0; p < H_ROD; p++)
        v[HEAD + p] += phi[p];
    memcpy(vw, v, sizeof vw);    /* the same with w's statistics */
    v[R_MU] = own[R_MU];
    v[R_V] = own[R_V];
    ck_assert_msg(fabs(v[R_MU] - vw[R_MU]) > 0.5,
                  "the premise: client 0's r_μ %.17g and w's %.17g differ",
                  v[R_MU], vw[R_MU]);
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, 5);
    pflref_eval e, ew;
    const pflref_data *D0 = &spec->problem->clients[0].train;
    ck_assert_int_eq(pflref_model_evaluate(m, v, D0, ws, &e), PFLREF_OK);
    ck_assert_int_eq(pflref_model_evaluate(m, vw, D0, ws, &ew), PFLREF_OK);
    const pflref_eval *got = &r->eval[1].train[0];
    ck_assert_msg(fabs(got->loss - e.loss) <= 1e-15 * (1 + e.loss),
                  "personalized loss of client 0 %.17g; with its own "
                  "statistics %.17g, with w's %.17g", got->loss, e.loss,
                  ew.loss);
    ck_assert_msg(fabs(e.loss - ew.loss) > 1e-6,
                  "the premise: the statistics change the loss (%.17g, %.17g)",
                  e.loss, ew.loss);
    pflref_model_workspace_free(ws);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(r);
    pflref_spec_free(spec);
}
END_TEST

/* The vectors with batch normalisation (golden/fedrod/make_fedrod.py). */
START_TEST(test_bn_vectors)
{
    /* req: fedrod.bn */
    tu_assert_golden("golden/fedrod/layers-bn-paper.json");
    tu_assert_golden("golden/fedrod/layers-bn-pfllib.json");
    tu_assert_golden("golden/fedrod/layers-bn-pfllib-keep.json");
}
END_TEST

/* A model without a body and a linear head is refused naming model.kind;
 * a regression mlp naming model.loss. */
START_TEST(test_refusals)
{
    /* req: fedrod.model */
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY,
                              D, K, 0, 1);
    tb_case *c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    tb_round(c, "0", "0 1");
    pflref_error err;
    tb_run_error(c, "fedrod", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.kind");
    ck_assert(strstr(err.message, "linear head") != NULL);
    tb_free(c);
    m = tb_mlp(PFLREF_LOSS_SQUARED, D, 1, H, PFLREF_ACT_IDENTITY, 1, 1);
    c = tb_new(&m, 1);
    tb_train(c, 0, 3, X0, Y0);
    c->hyper.eta = 0.3;
    tb_round(c, "0", "0 1");
    tb_run_error(c, "fedrod", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "model.loss");
    tb_free(c);
}
END_TEST

Suite *fedrod_suite(void)
{
    Suite *s = suite_create("fedrod");
    TCase *tc = tcase_create("fedrod");
    tcase_add_test(tc, test_generic_step_is_bsm_gradient);
    tcase_add_test(tc, test_personal_step_is_ce_gradient);
    tcase_add_test(tc, test_server_average);
    tcase_add_test(tc, test_given_class_counts);
    tcase_add_test(tc, test_personalized_evaluation_and_stale_heads);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_optimizer_decay_scopes);
    tcase_add_test(tc, test_optimizer_own_buffers);
    tcase_add_test(tc, test_bn_running_passes);
    tcase_add_test(tc, test_bn_keep_own_statistics);
    tcase_add_test(tc, test_bn_keep_personalized_evaluation);
    tcase_add_test(tc, test_bn_vectors);
    tcase_add_loop_test(tc, test_optimizer_vectors, 0,
                        (int)(sizeof OPT_VECTORS / sizeof OPT_VECTORS[0]));
    suite_add_tcase(s, tc);
    return s;
}
