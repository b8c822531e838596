/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_model.c: the models of ref/models/ (pflref/model.h).
 *
 * What is checked, and against what (never against the code's own output):
 *   - gradients against central finite differences of the loss, and
 *     Hessian-vector products against central differences of the gradient,
 *     at random points (GSL mt19937, fixed seeds) for a table of shapes and
 *     for randomly drawn shapes, with and without bias, both linear losses,
 *     whole data sets and idx batches (with repeated indices);
 *   - the symmetry of the Hessian, uᵀ(Hv) = vᵀ(Hu);
 *   - closed forms derived by hand (in the comments) for a tiny linear,
 *     softmax, quadratic and mlp case, with high-entropy numbers, and for
 *     the scalar product ŷ = w·θ·x and a linear-body classifier;
 *   - every mlp variant (relu / identity × hidden bias × output bias ×
 *     cross_entropy / half_squared / squared): gradient and HVP against
 *     finite differences, Hessian symmetry, and the body/head API
 *     (features → head_grad → body_grad) equal to model_grad bit for bit;
 *   - evaluation: mse, loss, accuracy with the lowest-index tie rule,
 *     chunked evaluation of a data set larger than the workspace;
 *   - the batch convention (idx, repeats, idx NULL);
 *   - blocks, groups, split and mask;
 *   - every error path of model_init, the workspace, the compute functions,
 *     data validation (with the JSON path) and the split.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include <sys/resource.h>
#include "pflref/model.h"
#include "suites.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* Limits by memory: pin the memory available (pflref_memory_available) to
 * 2^29 bytes = 2^26 doubles, so a model of P = 2^26 parameters is the
 * largest one allowed whatever the machine. */
#define PINNED_LIMIT_P ((size_t)1 << 26)
static void pin_memory_limit(void)
{
    ck_assert_int_eq(setenv("PFLREF_MEMORY_LIMIT", "536870912", 1), 0);
}

static pflref_model make_model(pflref_model_kind kind, pflref_loss loss,
                               size_t d, size_t k, size_t h, int bias)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init(&m, kind, loss, d, k, h, bias, &err);
    ck_assert_msg(st == PFLREF_OK, "model_init(%d, d=%zu, k=%zu, h=%zu, "
                  "bias=%d) failed: %s: %s", (int)kind, d, k, h, bias,
                  err.where, err.message);
    return m;
}

static void data_free(pflref_data *D)
{
    free(D->X);
    free(D->y);
    free(D->a);
    free(D->c);
    memset(D, 0, sizeof *D);
}

static double unif(gsl_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gsl_rng_uniform(r);
}

/* Random data: X ~ U(−1.5, 1.5), regression y ~ U(−2, 2), class labels
 * uniform in [0, k); quadratic a ~ U(0.5, 3), c ~ U(−2, 2). */
static pflref_data random_data(gsl_rng *r, const pflref_model *m, size_t n)
{
    pflref_data D;
    memset(&D, 0, sizeof D);
    D.n = n;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        D.a = malloc(m->d * sizeof(double));
        D.c = malloc(m->d * sizeof(double));
        for (size_t j = 0; j < m->d; j++) {
            D.a[j] = unif(r, 0.5, 3.0);
            D.c[j] = unif(r, -2.0, 2.0);
        }
        return D;
    }
    D.X = malloc(n * m->d * sizeof(double));
    D.y = malloc(n * sizeof(double));
    for (size_t i = 0; i < n * m->d; i++)
        D.X[i] = unif(r, -1.5, 1.5);
    for (size_t i = 0; i < n; i++)
        D.y[i] = pflref_model_is_regression(m)
                     ? unif(r, -2.0, 2.0)
                     : (double)gsl_rng_uniform_int(r, m->k);
    return D;
}

/* min over samples and hidden units of |a| = |W1 x + b1|, by plain loops,
 * so random mlp points can be kept away from the ReLU kink. */
static double mlp_margin(const pflref_model *m, const pflref_data *D,
                         const double *w)
{
    const double *W1 = w, *b1 = m->hidden_bias ? w + m->h * m->d : NULL;
    double mn = INFINITY;
    for (size_t i = 0; i < D->n; i++)
        for (size_t u = 0; u < m->h; u++) {
            double a = b1 != NULL ? b1[u] : 0.0;
            for (size_t j = 0; j < m->d; j++)
                a += W1[u * m->d + j] * D->X[i * m->d + j];
            if (fabs(a) < mn)
                mn = fabs(a);
        }
    return mn;
}

/* A random point w ~ U(−0.8, 0.8)^P; for mlp redrawn until every
 * pre-activation is at least 1e-3 from the kink (the finite-difference
 * perturbations below move it by at most 1e-5·(1.5·6 + 1) = 1e-4). */
static void random_point(gsl_rng *r, const pflref_model *m,
                         const pflref_data *D, double *w)
{
    for (;;) {
        for (size_t p = 0; p < m->P; p++)
            w[p] = unif(r, -0.8, 0.8);
        if (m->kind != PFLREF_MODEL_MLP || mlp_margin(m, D, w) > 1e-3)
            return;
    }
}

static double loss_at(const pflref_model *m, const double *w,
                      const pflref_data *D, const size_t *idx, size_t nb,
                      pflref_model_workspace *ws)
{
    double f = NAN;
    ck_assert_int_eq(pflref_model_loss(m, w, D, idx, nb, ws, &f), PFLREF_OK);
    return f;
}

/* Central differences.  Step ε = 1e-5: the error is about
 * ε²|f'''|/6 + u|f|/ε ≈ 1e-10 + 1e-11 for |f|, |f'''| = O(10), u = 2⁻⁵³, so
 * the tolerance 1e-6·(1 + |g|) is 10⁴ above the method's own error and far
 * below what a missing term or factor (O(|g|)) would cause. */
#define FD_EPS 1e-5
#define FD_TOL 1e-6

static void check_grad_fd(const pflref_model *m, const pflref_data *D,
                          const size_t *idx, size_t nb, const double *w0,
                          const char *label)
{
    const size_t P = m->P;
    size_t mb = D->n > nb ? D->n : nb;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, mb);
    ck_assert_ptr_nonnull(ws);
    double *w = malloc(P * sizeof *w), *g = malloc(P * sizeof *g);
    memcpy(w, w0, P * sizeof *w);
    double f = NAN;
    ck_assert_int_eq(pflref_model_grad(m, w, D, idx, nb, ws, g, &f),
                     PFLREF_OK);
    const double f_ref = loss_at(m, w, D, idx, nb, ws);
    ck_assert_msg(fabs(f - f_ref) <= 1e-14 * (1.0 + fabs(f_ref)),
                  "%s: the loss returned by grad (%.17g) differs from "
                  "model_loss (%.17g)", label, f, f_ref);
    for (size_t p = 0; p < P; p++) {
        w[p] = w0[p] + FD_EPS;
        const double fp = loss_at(m, w, D, idx, nb, ws);
        w[p] = w0[p] - FD_EPS;
        const double fm = loss_at(m, w, D, idx, nb, ws);
        w[p] = w0[p];
        const double fd = (fp - fm) / (2.0 * FD_EPS);
        ck_assert_msg(fabs(fd - g[p]) <= FD_TOL * (1.0 + fabs(g[p])),
                      "%s: gradient entry %zu is %.17g but the central "
                      "difference of the loss gives %.17g", label, p, g[p],
                      fd);
    }
    free(w);
    free(g);
    pflref_model_workspace_free(ws);
}

/* Hv against (g(w + εv) − g(w − εv)) / (2ε) (same step and tolerance as
 * above: the gradient is as smooth as the loss), and uᵀ(Hv) = vᵀ(Hu). */
static void check_hvp_fd(gsl_rng *r, const pflref_model *m,
                         const pflref_data *D, const size_t *idx, size_t nb,
                         const double *w0, const char *label)
{
    const size_t P = m->P;
    size_t mb = D->n > nb ? D->n : nb;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, mb);
    ck_assert_ptr_nonnull(ws);
    double *v = malloc(P * sizeof *v), *u = malloc(P * sizeof *u);
    double *Hv = malloc(P * sizeof *Hv), *Hu = malloc(P * sizeof *Hu);
    double *w = malloc(P * sizeof *w), *gp = malloc(P * sizeof *gp),
           *gm = malloc(P * sizeof *gm);
    for (size_t p = 0; p < P; p++) {
        v[p] = unif(r, -1.0, 1.0);
        u[p] = unif(r, -1.0, 1.0);
    }
    ck_assert_int_eq(pflref_model_hvp(m, w0, D, idx, nb, v, ws, Hv),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(m, w0, D, idx, nb, u, ws, Hu),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        w[p] = w0[p] + FD_EPS * v[p];
    ck_assert_int_eq(pflref_model_grad(m, w, D, idx, nb, ws, gp, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        w[p] = w0[p] - FD_EPS * v[p];
    ck_assert_int_eq(pflref_model_grad(m, w, D, idx, nb, ws, gm, NULL),
                     PFLREF_OK);
    double uHv = 0.0, vHu = 0.0, scale = 0.0;
    for (size_t p = 0; p < P; p++) {
        const double fd = (gp[p] - gm[p]) / (2.0 * FD_EPS);
        ck_assert_msg(fabs(fd - Hv[p]) <= FD_TOL * (1.0 + fabs(Hv[p])),
                      "%s: (Hv)[%zu] is %.17g but the central difference of "
                      "the gradient gives %.17g", label, p, Hv[p], fd);
        uHv += u[p] * Hv[p];
        vHu += v[p] * Hu[p];
        scale += fabs(u[p] * Hv[p]) + fabs(v[p] * Hu[p]);
    }
    /* Both sides are sums of the same P² products in other orders: they
     * agree to a few ulps of the sum of magnitudes. */
    ck_assert_msg(fabs(uHv - vHu) <= 1e-13 * (1.0 + scale),
                  "%s: the Hessian is not symmetric: u'Hv = %.17g, "
                  "v'Hu = %.17g", label, uHv, vHu);
    free(v);
    free(u);
    free(Hv);
    free(Hu);
    free(w);
    free(gp);
    free(gm);
    pflref_model_workspace_free(ws);
}

/* ------------------------------------------------------------------------
 * Derivatives against finite differences
 * ------------------------------------------------------------------------ */

typedef struct {
    pflref_model_kind kind;
    pflref_loss loss;
    size_t d, k, h;
    int bias;
    size_t n;
    size_t nb;          /* 0: whole data set (idx NULL) */
    unsigned long seed;
} shape_case;

static const shape_case shapes[] = {
    {PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC, 5, 0, 0, 0, 1, 0, 11},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, 3, 0, 0, 0, 7, 0, 12},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, 4, 0, 0, 1, 9, 5, 13},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED, 1, 0, 0, 1, 3, 0, 14},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED, 6, 0, 0, 0, 12, 4, 15},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 4, 3, 0, 1, 10, 0, 16},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 1, 2, 0, 0, 5, 3, 17},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 3, 5, 0, 0, 8, 0, 18},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 2, 4, 0, 1, 6, 9, 19},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 3, 3, 4, 1, 6, 0, 20},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 5, 1, 9, 4, 21},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 5, 4, 3, 1, 1, 0, 22},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 1, 3, 6, 1, 4, 7, 23},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Draw (or take) the shape of case i, its data, batch and point, then run
 * the gradient and HVP checks on it. */
static void derivative_case(const shape_case *c, int random_shape, int do_hvp)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, c->seed);
    shape_case s = *c;
    if (random_shape) {
        static const pflref_model_kind kinds[] = {
            PFLREF_MODEL_LINEAR, PFLREF_MODEL_SOFTMAX, PFLREF_MODEL_MLP};
        s.kind = kinds[gsl_rng_uniform_int(r, 3)];
        s.loss = s.kind == PFLREF_MODEL_LINEAR
                     ? (gsl_rng_uniform_int(r, 2) ? PFLREF_LOSS_SQUARED
                                                  : PFLREF_LOSS_HALF_SQUARED)
                     : PFLREF_LOSS_CROSS_ENTROPY;
        s.d = 1 + gsl_rng_uniform_int(r, 6);
        s.k = 2 + gsl_rng_uniform_int(r, 4);
        s.h = 1 + gsl_rng_uniform_int(r, 6);
        s.bias = s.kind == PFLREF_MODEL_MLP ? 1
                                            : (int)gsl_rng_uniform_int(r, 2);
        s.n = 1 + gsl_rng_uniform_int(r, 10);
        s.nb = gsl_rng_uniform_int(r, 2) ? 1 + gsl_rng_uniform_int(r, 12) : 0;
    }
    pflref_model m = make_model(s.kind, s.loss, s.d, s.k, s.h, s.bias);
    pflref_data D = random_data(r, &m, s.n);
    size_t *idx = NULL;
    if (s.nb > 0) { /* a batch of nb indices drawn with repeats */
        idx = malloc(s.nb * sizeof *idx);
        for (size_t j = 0; j < s.nb; j++)
            idx[j] = gsl_rng_uniform_int(r, s.n);
    }
    double *w = malloc(m.P * sizeof *w);
    random_point(r, &m, &D, w);
    char label[160];
    snprintf(label, sizeof label,
             "%s/%s d=%zu k=%zu h=%zu bias=%d n=%zu nb=%zu seed=%lu%s",
             pflref_model_kind_name(m.kind), pflref_loss_name(m.loss), m.d,
             m.k, m.h, m.bias, s.n, s.nb, s.seed,
             random_shape ? " (random shape)" : "");
    if (do_hvp)
        check_hvp_fd(r, &m, &D, idx, s.nb, w, label);
    else
        check_grad_fd(&m, &D, idx, s.nb, w, label);
    free(w);
    free(idx);
    data_free(&D);
    gsl_rng_free(r);
}

START_TEST(test_grad_fd_shapes)
{
    derivative_case(&shapes[_i], 0, 0);
}
END_TEST

START_TEST(test_hvp_fd_shapes)
{
    derivative_case(&shapes[_i], 0, 1);
}
END_TEST

START_TEST(test_grad_fd_random_shapes)
{
    shape_case c = shapes[0];
    c.seed = 1000 + (unsigned long)_i;
    derivative_case(&c, 1, 0);
}
END_TEST

START_TEST(test_hvp_fd_random_shapes)
{
    shape_case c = shapes[0];
    c.seed = 2000 + (unsigned long)_i;
    derivative_case(&c, 1, 1);
}
END_TEST

/* ------------------------------------------------------------------------
 * Closed forms derived by hand
 * ------------------------------------------------------------------------ */

/* Tiny linear case, n = 3, d = 2, with bias:
 *   X = [1.5 −0.5; 2 0.25; −1 3],  y = (0.75, −1.25, 2.5),
 *   w = (0.5, −2),  b = 0.125.
 * ŷ = Xw + b = (0.75 + 1 + 0.125, 1 − 0.5 + 0.125, −0.5 − 6 + 0.125)
 *   = (1.875, 0.625, −6.375),  r = ŷ − y = (1.125, 1.875, −8.875).
 * Σr² = 1.265625 + 3.515625 + 78.765625 = 83.546875.
 *   squared:       loss = 83.546875/3,        half_squared: 83.546875/6.
 * Xᵀr = (1.6875 + 3.75 + 8.875, −0.5625 + 0.46875 − 26.625)
 *     = (14.3125, −26.71875),  Σr = −5.875.
 *   squared:  g = (2/3)(14.3125, −26.71875, −5.875); half: (1/3)(…).
 * HVP with v = (1, 0.5, −1): q = X v_w + v_b = (0.25, 1.125, −0.5),
 *   Xᵀq = (0.375 + 2.25 + 0.5, −0.125 + 0.28125 − 1.5) = (3.125, −1.34375),
 *   Σq = 0.875;  squared: Hv = (2/3)(3.125, −1.34375, 0.875); half: (1/3)(…).
 * n = 3 makes 2/n ≠ 1, so a missing 2 or 1/n shows. */
static double lin_X[] = {1.5, -0.5, 2.0, 0.25, -1.0, 3.0};
static double lin_y[] = {0.75, -1.25, 2.5};

START_TEST(test_linear_closed_form)
{
    const pflref_loss losses[2] = {PFLREF_LOSS_SQUARED,
                                   PFLREF_LOSS_HALF_SQUARED};
    const double s[2] = {2.0, 1.0}; /* dℓ/dr = s r */
    const pflref_loss loss = losses[_i];
    pflref_model m = make_model(PFLREF_MODEL_LINEAR, loss, 2, 0, 0, 1);
    pflref_data D = {3, lin_X, lin_y, NULL, NULL};
    const double w[3] = {0.5, -2.0, 0.125}, v[3] = {1.0, 0.5, -1.0};
    const double g_ref[3] = {s[_i] / 3.0 * 14.3125, s[_i] / 3.0 * -26.71875,
                             s[_i] / 3.0 * -5.875};
    const double Hv_ref[3] = {s[_i] / 3.0 * 3.125, s[_i] / 3.0 * -1.34375,
                              s[_i] / 3.0 * 0.875};
    const double f_ref = s[_i] / 2.0 * 83.546875 / 3.0;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 3);
    double g[3], Hv[3], f;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, &f),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 3, v, ws, Hv),
                     PFLREF_OK);
    /* Every intermediate is exact in binary; only the /3 rounds: 1e-14. */
    ck_assert_msg(fabs(f - f_ref) <= 1e-14 * fabs(f_ref),
                  "%s loss %.17g, hand value %.17g", pflref_loss_name(loss),
                  f, f_ref);
    for (int p = 0; p < 3; p++) {
        ck_assert_msg(fabs(g[p] - g_ref[p]) <= 1e-14 * fabs(g_ref[p]),
                      "%s gradient[%d] = %.17g, hand value %.17g",
                      pflref_loss_name(loss), p, g[p], g_ref[p]);
        ck_assert_msg(fabs(Hv[p] - Hv_ref[p]) <= 1e-14 * fabs(Hv_ref[p]),
                      "%s Hv[%d] = %.17g, hand value %.17g",
                      pflref_loss_name(loss), p, Hv[p], Hv_ref[p]);
    }
    pflref_model_workspace_free(ws);
}
END_TEST

/* Tiny softmax case, k = 3, d = 2, bias, two samples:
 *   W = [0.4 0; 0 0.8; −0.3 0.2],  b = (0.05, −0.1, 0.25)
 *   x1 = (2.385, −1.25), y1 = 2:  z1 = (0.954 + 0.05, −1 − 0.1,
 *        −0.7155 − 0.25 + 0.25) = (1.004, −1.1, −0.7155)
 *   x2 = (−0.5, 1.75),   y2 = 0:  z2 = (−0.2 + 0.05, 1.4 − 0.1,
 *        0.15 + 0.35 + 0.25) = (−0.15, 1.3, 0.75)
 * ℓ_j = log Σ_c e^{z_jc} − z_{j,y_j};  loss = (ℓ1 + ℓ2)/2;
 * ∂/∂W_c = ½ Σ_j (p_jc − [c = y_j]) x_j,  ∂/∂b_c = ½ Σ_j (p_jc − [c = y_j]),
 * p_j = e^{z_j} / Σ_c e^{z_jc}.  Below, p and ℓ are computed from the
 * literal logits above with libm, not through the model code. */
START_TEST(test_softmax_closed_form)
{
    pflref_model m = make_model(PFLREF_MODEL_SOFTMAX,
                                PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1);
    double X[4] = {2.385, -1.25, -0.5, 1.75}, y[2] = {2.0, 0.0};
    pflref_data D = {2, X, y, NULL, NULL};
    const double w[9] = {0.4, 0.0, 0.0, 0.8, -0.3, 0.2, 0.05, -0.1, 0.25};
    const double z[2][3] = {{1.004, -1.1, -0.7155}, {-0.15, 1.3, 0.75}};
    double f_ref = 0.0, g_ref[9] = {0};
    for (int j = 0; j < 2; j++) {
        const double S = exp(z[j][0]) + exp(z[j][1]) + exp(z[j][2]);
        const int yj = (int)y[j];
        f_ref += 0.5 * (log(S) - z[j][yj]);
        for (int c = 0; c < 3; c++) {
            const double e = exp(z[j][c]) / S - (c == yj ? 1.0 : 0.0);
            g_ref[2 * c] += 0.5 * e * X[2 * j];
            g_ref[2 * c + 1] += 0.5 * e * X[2 * j + 1];
            g_ref[6 + c] += 0.5 * e;
        }
    }
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    double g[9], f;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 2, ws, g, &f),
                     PFLREF_OK);
    /* The literal logits are the decimal values rounded once, the model's
     * are products rounded in other orders: agreement to 1e-14. */
    ck_assert_msg(fabs(f - f_ref) <= 1e-14 * fabs(f_ref),
                  "softmax loss %.17g, hand value %.17g", f, f_ref);
    for (int p = 0; p < 9; p++)
        ck_assert_msg(fabs(g[p] - g_ref[p]) <= 1e-14,
                      "softmax gradient[%d] = %.17g, hand value %.17g", p,
                      g[p], g_ref[p]);
    pflref_model_workspace_free(ws);
}
END_TEST

/* Stable softmax: z = (1000, 0), y = 1.  ℓ = log(e^1000 + 1) − 0 = 1000
 * exactly in double (1 + e^−1000 rounds to 1); p = (1, 0), so
 * ∂/∂W = (p − e_y) x = (1, −1) for x = 1.  A naive exp(1000) is Inf. */
START_TEST(test_softmax_stable)
{
    pflref_model m = make_model(PFLREF_MODEL_SOFTMAX,
                                PFLREF_LOSS_CROSS_ENTROPY, 1, 2, 0, 0);
    double X[1] = {1.0}, y[1] = {1.0};
    pflref_data D = {1, X, y, NULL, NULL};
    const double w[2] = {1000.0, 0.0}, v[2] = {0.75, -0.25};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    double g[2], Hv[2], f;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, &f),
                     PFLREF_OK);
    ck_assert_msg(f == 1000.0, "loss at z = (1000, 0), y = 1 is %.17g, not "
                  "1000 (softmax not stabilised?)", f);
    ck_assert_msg(g[0] == 1.0 && g[1] == -1.0,
                  "gradient at z = (1000, 0) is (%g, %g), not (1, -1)", g[0],
                  g[1]);
    /* H = (diag p − p pᵀ) x xᵀ = 0 at p = (1, 0). */
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 0, v, ws, Hv),
                     PFLREF_OK);
    ck_assert_msg(Hv[0] == 0.0 && Hv[1] == 0.0,
                  "Hv at a saturated softmax is (%g, %g), not 0", Hv[0],
                  Hv[1]);
    pflref_model_workspace_free(ws);
}
END_TEST

/* Quadratic, d = 2: a = (2.5, 0.75), c = (1.25, −3), w = (0.5, 1).
 * w − c = (−0.75, 4);  f = ½(2.5·0.5625 + 0.75·16) = ½(1.40625 + 12)
 * = 6.703125;  ∇f = a ⊙ (w − c) = (−1.875, 3);  H v = a ⊙ v = (3.75, −1.5)
 * for v = (1.5, −2).  All exact in binary.  idx and nb are ignored. */
START_TEST(test_quadratic_closed_form)
{
    pflref_model m = make_model(PFLREF_MODEL_QUADRATIC,
                                PFLREF_LOSS_QUADRATIC, 2, 0, 0, 0);
    double a[2] = {2.5, 0.75}, c[2] = {1.25, -3.0};
    pflref_data D = {1, NULL, NULL, a, c};
    const double w[2] = {0.5, 1.0}, v[2] = {1.5, -2.0};
    const size_t idx[1] = {99}; /* out of range, yet ignored */
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 0);
    ck_assert_ptr_nonnull(ws);
    double f, g[2], Hv[2];
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, idx, 1, ws, &f), PFLREF_OK);
    ck_assert_msg(f == 6.703125, "quadratic f = %.17g, hand 6.703125", f);
    f = 0.0;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, &f),
                     PFLREF_OK);
    ck_assert_msg(f == 6.703125, "grad's loss = %.17g, hand 6.703125", f);
    ck_assert_msg(g[0] == -1.875 && g[1] == 3.0,
                  "quadratic gradient (%.17g, %.17g), hand (-1.875, 3)", g[0],
                  g[1]);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 7, v, ws, Hv),
                     PFLREF_OK);
    ck_assert_msg(Hv[0] == 3.75 && Hv[1] == -1.5,
                  "quadratic Hv (%.17g, %.17g), hand (3.75, -1.5)", Hv[0],
                  Hv[1]);
    pflref_eval e;
    D.n = 17;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(e.loss == 6.703125 && isnan(e.mse) && isnan(e.accuracy) &&
                      e.n == 17,
                  "quadratic evaluate: loss %g mse %g accuracy %g n %zu; "
                  "want 6.703125, NaN, NaN, 17", e.loss, e.mse, e.accuracy,
                  e.n);
    pflref_model_workspace_free(ws);
}
END_TEST

/* relu'(0) = 0: with W1 row 0 = 0 and b1_0 = 0 hidden unit 0 has a = 0 on
 * every sample, so h_0 = 0 and no gradient flows through it: the W1 row 0,
 * b1_0 and W2 column 0 entries of the gradient and of any Hv are exactly 0.
 * (With relu'(0) = 1 the W1 row would get (1/n) Σ_j (G_j W2)_0 x_j ≠ 0.) */
START_TEST(test_mlp_relu_prime_zero)
{
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                2, 2, 2, 1);
    /* layout: W1 (2×2) 0..3, b1 4..5, W2 (2×2) 6..9, b2 10..11 */
    const double w[12] = {0.0, 0.0,  0.7, -0.45, 0.0, 0.2,
                          0.9, -0.6, -0.35, 0.8, 0.1, -0.05};
    const double v[12] = {0.3, -0.7, 0.25, 0.5, 0.6, -0.4,
                          0.15, 0.35, -0.55, 0.45, 0.2, 0.65};
    double X[6] = {1.25, -0.5, -2.385, 0.75, 0.5, 1.5}, y[3] = {0, 1, 1};
    pflref_data D = {3, X, y, NULL, NULL};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 3);
    double g[12], Hv[12];
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, NULL),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 0, v, ws, Hv),
                     PFLREF_OK);
    const int zero[] = {0, 1, 4, 6, 8}; /* W1[0][:], b1[0], W2[:][0] */
    for (size_t q = 0; q < sizeof zero / sizeof zero[0]; q++) {
        ck_assert_msg(g[zero[q]] == 0.0,
                      "gradient[%d] = %g through a unit at a = 0: relu'(0) "
                      "must be 0", zero[q], g[zero[q]]);
        /* Hv W2 column 0 gets G_jᵀ R{h_0} = 0 since R{h_0} = relu'(0)·… */
        ck_assert_msg(Hv[zero[q]] == 0.0,
                      "Hv[%d] = %g through a unit at a = 0: relu'(0) must "
                      "be 0", zero[q], Hv[zero[q]]);
    }
    /* and the live unit does get a gradient (the test is not vacuous) */
    ck_assert_msg(g[2] != 0.0 && g[7] != 0.0,
                  "the live hidden unit got no gradient");
    pflref_model_workspace_free(ws);
}
END_TEST

/* ------------------------------------------------------------------------
 * Batches
 * ------------------------------------------------------------------------ */

/* A batch idx = (3, 1, 3) is the data set made of rows 3, 1, 3: the grad
 * and HVP on (D, idx) equal those on the gathered copy with idx NULL (bit
 * for bit: the same rows in the same order).  Also idx NULL with nb = 0 or
 * nb = n means the whole set. */
START_TEST(test_batch_is_gathered_rows)
{
    static const pflref_model_kind kinds[3] = {
        PFLREF_MODEL_LINEAR, PFLREF_MODEL_SOFTMAX, PFLREF_MODEL_MLP};
    static const pflref_loss losses[3] = {PFLREF_LOSS_SQUARED,
                                          PFLREF_LOSS_CROSS_ENTROPY,
                                          PFLREF_LOSS_CROSS_ENTROPY};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77 + (unsigned long)_i);
    pflref_model m = make_model(kinds[_i], losses[_i], 3, 3, 4, 1);
    pflref_data D = random_data(r, &m, 5);
    const size_t idx[3] = {3, 1, 3};
    double X2[9], y2[3];
    for (int j = 0; j < 3; j++) {
        memcpy(X2 + 3 * j, D.X + 3 * idx[j], 3 * sizeof(double));
        y2[j] = D.y[idx[j]];
    }
    pflref_data D2 = {3, X2, y2, NULL, NULL};
    double *w = malloc(m.P * sizeof *w), *v = malloc(m.P * sizeof *v);
    double *g1 = malloc(m.P * sizeof *g1), *g2 = malloc(m.P * sizeof *g2);
    double *h1 = malloc(m.P * sizeof *h1), *h2 = malloc(m.P * sizeof *h2);
    random_point(r, &m, &D, w);
    for (size_t p = 0; p < m.P; p++)
        v[p] = unif(r, -1.0, 1.0);
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 5);
    double f1, f2, f3;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, idx, 3, ws, g1, &f1),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D2, NULL, 0, ws, g2, &f2),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, idx, 3, v, ws, h1),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D2, NULL, 3, v, ws, h2),
                     PFLREF_OK);
    ck_assert_msg(f1 == f2, "%s: loss on idx (3,1,3) %.17g != loss on the "
                  "gathered rows %.17g", pflref_model_kind_name(m.kind), f1,
                  f2);
    for (size_t p = 0; p < m.P; p++) {
        ck_assert_msg(g1[p] == g2[p], "%s: gradient[%zu] on idx (3,1,3) "
                      "%.17g != on the gathered rows %.17g",
                      pflref_model_kind_name(m.kind), p, g1[p], g2[p]);
        ck_assert_msg(h1[p] == h2[p], "%s: Hv[%zu] on idx (3,1,3) %.17g != "
                      "on the gathered rows %.17g",
                      pflref_model_kind_name(m.kind), p, h1[p], h2[p]);
    }
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, NULL, 5, ws, &f1),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, NULL, 0, ws, &f2),
                     PFLREF_OK);
    const size_t all[5] = {0, 1, 2, 3, 4};
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, all, 5, ws, &f3),
                     PFLREF_OK);
    ck_assert_msg(f1 == f2 && f2 == f3, "idx NULL with nb = n (%.17g), nb = "
                  "0 (%.17g) and idx = 0..n-1 (%.17g) must agree", f1, f2,
                  f3);
    free(w);
    free(v);
    free(g1);
    free(g2);
    free(h1);
    free(h2);
    data_free(&D);
    pflref_model_workspace_free(ws);
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------------
 * Evaluation
 * ------------------------------------------------------------------------ */

/* Linear: mse = Σr²/n = 83.546875/3 for both losses (see the closed form
 * above); loss = mse (squared) or mse/2 (half_squared); accuracy NaN. */
START_TEST(test_evaluate_linear)
{
    const pflref_loss loss =
        _i == 0 ? PFLREF_LOSS_SQUARED : PFLREF_LOSS_HALF_SQUARED;
    pflref_model m = make_model(PFLREF_MODEL_LINEAR, loss, 2, 0, 0, 1);
    pflref_data D = {3, lin_X, lin_y, NULL, NULL};
    const double w[3] = {0.5, -2.0, 0.125};
    const double mse = 83.546875 / 3.0;
    const double f = _i == 0 ? mse : mse / 2.0;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 3);
    pflref_eval e;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(fabs(e.mse - mse) <= 1e-14 * mse,
                  "%s: mse %.17g, hand value %.17g", pflref_loss_name(loss),
                  e.mse, mse);
    ck_assert_msg(fabs(e.loss - f) <= 1e-14 * f,
                  "%s: loss %.17g, hand value %.17g", pflref_loss_name(loss),
                  e.loss, f);
    ck_assert_msg(isnan(e.accuracy), "linear accuracy must be NaN, is %g",
                  e.accuracy);
    ck_assert_uint_eq(e.n, 3);
    pflref_model_workspace_free(ws);
}
END_TEST

/* Softmax k = 3, d = 1, no bias, W = (1, −1, 0)ᵀ: z(x) = (x, −x, 0).
 *   x = 2.385 → argmax 0, y = 0: right
 *   x = −0.75 → argmax 1, y = 1: right
 *   x = 0     → z = (0, 0, 0), a three-way tie → class 0 (lowest index),
 *               y = 0: right (highest-index tie-breaking would say 2)
 *   x = 1.5   → argmax 0, y = 2: wrong
 * accuracy = 3/4.  loss = ¼ Σ_j (log Σ_c e^{z_jc} − z_{j,y_j}). */
START_TEST(test_evaluate_accuracy_ties)
{
    pflref_model m = make_model(PFLREF_MODEL_SOFTMAX,
                                PFLREF_LOSS_CROSS_ENTROPY, 1, 3, 0, 0);
    double X[4] = {2.385, -0.75, 0.0, 1.5}, y[4] = {0, 1, 0, 2};
    pflref_data D = {4, X, y, NULL, NULL};
    const double w[3] = {1.0, -1.0, 0.0};
    double f_ref = 0.0;
    for (int j = 0; j < 4; j++) {
        const double z[3] = {X[j], -X[j], 0.0};
        f_ref += 0.25 * (log(exp(z[0]) + exp(z[1]) + exp(z[2])) -
                         z[(int)y[j]]);
    }
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 4);
    pflref_eval e;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(e.accuracy == 0.75,
                  "accuracy %g, want 0.75 (ties must go to the lowest class "
                  "index)", e.accuracy);
    ck_assert_msg(fabs(e.loss - f_ref) <= 1e-14 * f_ref,
                  "softmax evaluate loss %.17g, hand value %.17g", e.loss,
                  f_ref);
    ck_assert_msg(isnan(e.mse), "softmax mse must be NaN, is %g", e.mse);
    pflref_model_workspace_free(ws);
}
END_TEST

/* mlp with W2 = 0: z = b2 = (0.3, −0.2) on every sample, so every
 * prediction is class 0: accuracy = #{y = 0}/n = 2/5, and
 * ℓ_j = log(e^0.3 + e^−0.2) − b2_{y_j}. */
START_TEST(test_evaluate_mlp)
{
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                2, 2, 3, 1);
    double w[6 + 3 + 6 + 2] = {0.5, -1.0, 0.25, 0.75, -0.5, 1.5,
                               0.1, -0.2, 0.3};
    w[15] = 0.3;
    w[16] = -0.2;
    double X[10] = {1, 2, -1, 0.5, 0.25, -2, 3, 1, -0.5, -0.5};
    double y[5] = {0, 1, 1, 0, 1};
    pflref_data D = {5, X, y, NULL, NULL};
    const double lse = log(exp(0.3) + exp(-0.2));
    const double f_ref = (2.0 * (lse - 0.3) + 3.0 * (lse + 0.2)) / 5.0;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 5);
    pflref_eval e;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(e.accuracy == 0.4, "mlp accuracy %g, want 0.4",
                  e.accuracy);
    ck_assert_msg(fabs(e.loss - f_ref) <= 1e-14 * f_ref,
                  "mlp loss %.17g, hand value %.17g", e.loss, f_ref);
    pflref_model_workspace_free(ws);
}
END_TEST

/* A data set larger than the workspace is evaluated in chunks with the
 * same sums, in the same index order: same loss, mse, accuracy as with a
 * workspace that holds it whole. */
START_TEST(test_evaluate_chunked)
{
    static const pflref_model_kind kinds[3] = {
        PFLREF_MODEL_LINEAR, PFLREF_MODEL_SOFTMAX, PFLREF_MODEL_MLP};
    static const pflref_loss losses[3] = {PFLREF_LOSS_HALF_SQUARED,
                                          PFLREF_LOSS_CROSS_ENTROPY,
                                          PFLREF_LOSS_CROSS_ENTROPY};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 404 + (unsigned long)_i);
    pflref_model m = make_model(kinds[_i], losses[_i], 4, 3, 5, 1);
    pflref_data D = random_data(r, &m, 11);
    double *w = malloc(m.P * sizeof *w);
    random_point(r, &m, &D, w);
    pflref_model_workspace *big = pflref_model_workspace_alloc(&m, 11);
    pflref_model_workspace *small = pflref_model_workspace_alloc(&m, 3);
    pflref_eval e1, e2;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, big, &e1), PFLREF_OK);
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, small, &e2),
                     PFLREF_OK);
    /* Per-sample values may differ in the last bit between BLAS calls of
     * another row count: 1e-14. */
    ck_assert_msg(fabs(e1.loss - e2.loss) <= 1e-14 * fabs(e1.loss),
                  "%s: chunked loss %.17g != whole %.17g",
                  pflref_model_kind_name(m.kind), e2.loss, e1.loss);
    if (m.kind == PFLREF_MODEL_LINEAR)
        ck_assert_msg(fabs(e1.mse - e2.mse) <= 1e-14 * e1.mse,
                      "chunked mse %.17g != whole %.17g", e2.mse, e1.mse);
    else
        ck_assert_msg(e1.accuracy == e2.accuracy,
                      "%s: chunked accuracy %g != whole %g",
                      pflref_model_kind_name(m.kind), e2.accuracy,
                      e1.accuracy);
    ck_assert_uint_eq(e2.n, 11);
    free(w);
    data_free(&D);
    pflref_model_workspace_free(big);
    pflref_model_workspace_free(small);
    gsl_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------------------
 * Model description: blocks, names
 * ------------------------------------------------------------------------ */

static void check_block(const pflref_model *m, size_t b, const char *name,
                        size_t offset, size_t rows, size_t cols, int in,
                        int head)
{
    const pflref_block *B = &m->blocks[b];
    ck_assert_msg(strcmp(B->name, name) == 0, "%s block %zu is \"%s\", want "
                  "\"%s\"", pflref_model_kind_name(m->kind), b, B->name,
                  name);
    ck_assert_msg(B->offset == offset && B->rows == rows && B->cols == cols &&
                      B->size == rows * cols,
                  "%s block %s: offset %zu rows %zu cols %zu size %zu, want "
                  "%zu %zu %zu %zu", pflref_model_kind_name(m->kind), name,
                  B->offset, B->rows, B->cols, B->size, offset, rows, cols,
                  rows * cols);
    ck_assert_msg(B->is_input == in && B->is_head == head,
                  "%s block %s: is_input %d is_head %d, want %d %d",
                  pflref_model_kind_name(m->kind), name, B->is_input,
                  B->is_head, in, head);
}

/* Layouts by hand: linear d = 3 → w 0..2, b 3, P = 4; softmax d = 3, k = 4
 * → W 4×3 at 0, b at 12, P = 16; mlp d = 3, h = 5, k = 2 → W1 5×3 at 0,
 * b1 at 15, W2 2×5 at 20, b2 at 30, P = 32. */
START_TEST(test_blocks)
{
    pflref_model m = make_model(PFLREF_MODEL_QUADRATIC,
                                PFLREF_LOSS_QUADRATIC, 7, 9, 9, 0);
    ck_assert_uint_eq(m.P, 7);
    ck_assert_uint_eq(m.nblocks, 1);
    ck_assert_msg(m.k == 1 && m.h == 0, "quadratic k = %zu h = %zu, want 1 "
                  "and 0", m.k, m.h);
    check_block(&m, 0, "w", 0, 7, 1, 1, 1);

    m = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, 3, 5, 5, 1);
    ck_assert_uint_eq(m.P, 4);
    ck_assert_uint_eq(m.nblocks, 2);
    ck_assert_msg(m.k == 1 && m.h == 0, "linear k = %zu h = %zu", m.k, m.h);
    check_block(&m, 0, "w", 0, 3, 1, 1, 1);
    check_block(&m, 1, "b", 3, 1, 1, 1, 1);
    m = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_HALF_SQUARED, 3, 0, 0, 0);
    ck_assert_uint_eq(m.P, 3);
    ck_assert_uint_eq(m.nblocks, 1);

    m = make_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 3, 4, 8,
                   1);
    ck_assert_uint_eq(m.P, 16);
    ck_assert_uint_eq(m.h, 0);
    check_block(&m, 0, "W", 0, 4, 3, 1, 1);
    check_block(&m, 1, "b", 12, 4, 1, 1, 1);
    m = make_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 3, 4, 0,
                   0);
    ck_assert_uint_eq(m.P, 12);
    ck_assert_uint_eq(m.nblocks, 1);

    m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 5, 1);
    ck_assert_uint_eq(m.P, 32);
    ck_assert_uint_eq(m.nblocks, 4);
    check_block(&m, 0, "W1", 0, 5, 3, 1, 0);
    check_block(&m, 1, "b1", 15, 5, 1, 1, 0);
    check_block(&m, 2, "W2", 20, 2, 5, 0, 1);
    check_block(&m, 3, "b2", 30, 2, 1, 0, 1);
    ck_assert_int_eq(pflref_model_block_index(&m, "W2"), 2);
    ck_assert_int_eq(pflref_model_block_index(&m, "b1"), 1);
    ck_assert_int_eq(pflref_model_block_index(&m, "W"), -1);
    ck_assert_int_eq(pflref_model_block_index(&m, NULL), -1);
    ck_assert_int_eq(pflref_model_block_index(NULL, "W1"), -1);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(pflref_model_kind_name(PFLREF_MODEL_QUADRATIC),
                     "quadratic");
    ck_assert_str_eq(pflref_model_kind_name(PFLREF_MODEL_LINEAR), "linear");
    ck_assert_str_eq(pflref_model_kind_name(PFLREF_MODEL_SOFTMAX), "softmax");
    ck_assert_str_eq(pflref_model_kind_name(PFLREF_MODEL_MLP), "mlp");
    ck_assert_ptr_null(pflref_model_kind_name((pflref_model_kind)7));
    ck_assert_str_eq(pflref_loss_name(PFLREF_LOSS_SQUARED), "squared");
    ck_assert_str_eq(pflref_loss_name(PFLREF_LOSS_HALF_SQUARED),
                     "half_squared");
    ck_assert_str_eq(pflref_loss_name(PFLREF_LOSS_CROSS_ENTROPY),
                     "cross_entropy");
    ck_assert_str_eq(pflref_loss_name(PFLREF_LOSS_QUADRATIC), "quadratic");
    ck_assert_ptr_null(pflref_loss_name((pflref_loss)9));
    ck_assert_str_eq(pflref_activation_name(PFLREF_ACT_RELU), "relu");
    ck_assert_str_eq(pflref_activation_name(PFLREF_ACT_IDENTITY), "identity");
    ck_assert_ptr_null(pflref_activation_name((pflref_activation)2));
}
END_TEST

/* ------------------------------------------------------------------------
 * model_init errors: each bad argument, named in err.where
 * ------------------------------------------------------------------------ */

typedef struct {
    pflref_model_kind kind;
    pflref_loss loss;
    size_t d, k, h;
    int bias;
    pflref_status status;
    const char *where;
    const char *what;
} init_case;

#define BIG (SIZE_MAX / 2 + 1)
static const init_case init_errors[] = {
    {(pflref_model_kind)9, PFLREF_LOSS_SQUARED, 2, 2, 2, 0, PFLREF_EINVAL,
     "kind", "unknown kind"},
    {PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_SQUARED, 2, 0, 0, 0, PFLREF_EINVAL,
     "loss", "quadratic with squared loss"},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_CROSS_ENTROPY, 2, 0, 0, 0,
     PFLREF_EINVAL, "loss", "linear with cross-entropy"},
    {PFLREF_MODEL_LINEAR, (pflref_loss)42, 2, 0, 0, 0, PFLREF_EINVAL, "loss",
     "linear with an unknown loss"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_HALF_SQUARED, 2, 3, 0, 0,
     PFLREF_EINVAL, "loss", "softmax with half_squared"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_QUADRATIC, 2, 3, 4, 1, PFLREF_EINVAL,
     "loss", "mlp with the quadratic loss"},
    {PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC, 0, 0, 0, 0,
     PFLREF_EINVAL, "d", "quadratic d = 0"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 0, 3, 4, 1, PFLREF_EINVAL,
     "d", "mlp d = 0"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 2, 1, 0, 0,
     PFLREF_EINVAL, "k", "softmax k = 1"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 2, 0, 4, 1, PFLREF_EINVAL,
     "k", "mlp k = 0"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1, PFLREF_EINVAL,
     "h", "mlp h = 0"},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, 2, 0, 0, 2, PFLREF_EINVAL,
     "bias", "bias = 2"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, -1,
     PFLREF_EINVAL, "bias", "bias = -1"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_HALF_SQUARED, 2, 3, 4, 1, PFLREF_EINVAL,
     "k", "regression mlp with k = 3 outputs"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_SQUARED, 2, 0, 4, 0, PFLREF_EINVAL, "k",
     "regression mlp with k = 0 outputs"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_SQUARED, 2, 3, 0, 0, PFLREF_EINVAL,
     "loss", "softmax with squared (only the mlp has a regression head)"},
    {PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC, 2, 0, 0, 1,
     PFLREF_EINVAL, "bias", "quadratic with bias"},
    /* P > PINNED_LIMIT_P = 2^26: one vector exceeds the pinned memory */
    {PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC, PINNED_LIMIT_P + 1, 0,
     0, 0, PFLREF_ENOMEM, "P", "quadratic d = 2^26 + 1"},
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, PINNED_LIMIT_P, 0, 0, 1,
     PFLREF_ENOMEM, "P", "linear d = 2^26 with bias (P = 2^26 + 1)"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 4096, 16385, 0, 0,
     PFLREF_ENOMEM, "P", "softmax 16385 × 4096 (P = 2^26 + 4096)"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 8192, 10, 8192, 1,
     PFLREF_ENOMEM, "P", "mlp 8192 → 8192 → 10 (P > 2^26)"},
    /* size_t overflow in every operation of P's formula */
    {PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, SIZE_MAX, 0, 0, 1,
     PFLREF_ENOMEM, "P", "linear d = SIZE_MAX with bias (d + 1 overflows)"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 2, BIG, 0, 0,
     PFLREF_ENOMEM, "P", "softmax k·d overflows"},
    {PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 1, SIZE_MAX, 0, 1,
     PFLREF_ENOMEM, "P", "softmax k·d + k overflows"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 2, 2, BIG, 1,
     PFLREF_ENOMEM, "P", "mlp h·d overflows"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 1, 2, SIZE_MAX, 1,
     PFLREF_ENOMEM, "P", "mlp h·d + h overflows"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 1, BIG, SIZE_MAX / 4, 1,
     PFLREF_ENOMEM, "P", "mlp k·h overflows"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 2, 2, SIZE_MAX / 4, 1,
     PFLREF_ENOMEM, "P", "mlp h·d + h + k·h overflows"},
    {PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 1, SIZE_MAX - 2, 1, 1,
     PFLREF_ENOMEM, "P", "mlp ... + k overflows"},
};
#define NINIT ((int)(sizeof init_errors / sizeof init_errors[0]))

START_TEST(test_init_errors)
{
    pin_memory_limit();
    const init_case *c = &init_errors[_i];
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init(&m, c->kind, c->loss, c->d, c->k,
                                         c->h, c->bias, &err);
    ck_assert_msg(st == c->status, "%s: status %d, want %d", c->what,
                  (int)st, (int)c->status);
    ck_assert_msg(err.status == c->status, "%s: err.status %d", c->what,
                  (int)err.status);
    ck_assert_msg(strcmp(err.where, c->where) == 0,
                  "%s: err.where \"%s\", want \"%s\"", c->what, err.where,
                  c->where);
    ck_assert_msg(err.message[0] != '\0', "%s: empty message", c->what);
    /* NULL err is allowed and gives the same status */
    ck_assert_int_eq(pflref_model_init(&m, c->kind, c->loss, c->d, c->k,
                                       c->h, c->bias, NULL),
                     c->status);
}
END_TEST

START_TEST(test_init_null_model)
{
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(NULL, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 2, 0, 0, 0, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
}
END_TEST

/* The boundary itself is allowed: P = 2^26 exactly. */
START_TEST(test_init_max_params)
{
    pin_memory_limit();
    pflref_model m = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                PINNED_LIMIT_P - 1, 0, 0, 1);
    ck_assert_uint_eq(m.P, PINNED_LIMIT_P);
}
END_TEST

/* ------------------------------------------------------------------------
 * Workspace
 * ------------------------------------------------------------------------ */

START_TEST(test_workspace_alloc)
{
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                3, 2, 4, 1);
    ck_assert_ptr_null(pflref_model_workspace_alloc(NULL, 4));
    ck_assert_msg(pflref_model_workspace_alloc(&m, 0) == NULL,
                  "a data-model workspace for batches of 0 samples must be "
                  "refused");
    ck_assert_msg(pflref_model_workspace_alloc(&m, SIZE_MAX / 2) == NULL,
                  "max_batch·d overflowing size_t must give NULL");
    ck_assert_msg(pflref_model_workspace_alloc(&m, SIZE_MAX / 64) == NULL,
                  "a total size overflowing size_t must give NULL");
    pflref_model bad = m;
    bad.kind = (pflref_model_kind)9;
    ck_assert_ptr_null(pflref_model_workspace_alloc(&bad, 4));
    bad = m;
    bad.d = 0;
    ck_assert_ptr_null(pflref_model_workspace_alloc(&bad, 4));
    bad = m;
    bad.k = 0;
    ck_assert_ptr_null(pflref_model_workspace_alloc(&bad, 4));
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                3, 0, 0, 0);
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&q, 0);
    ck_assert_msg(ws != NULL, "the quadratic model needs no batch buffers: "
                  "max_batch 0 is fine");
    pflref_model_workspace_free(ws);
    pflref_model_workspace_free(NULL);
}
END_TEST

/* A workspace that cannot be allocated gives NULL.  The address space of
 * this (forked) test process is capped at its size plus 256 MiB; the
 * workspace below needs 24 · 2^24 doubles = 3 GiB.  Skipped without fork
 * (the cap would outlive the test) and under ASan (which aborts on a failed
 * allocation instead of returning NULL). */
START_TEST(test_workspace_out_of_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    return;
#endif
    const char *fork_env = getenv("CK_FORK");
    if (fork_env != NULL && strcmp(fork_env, "no") == 0)
        return;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    const rlim_t cap = (rlim_t)pages * 4096u + ((rlim_t)256 << 20);
    struct rlimit rl = {cap, cap};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
    /* per sample: Xb 3 + yb 1 + Z, RZ 2·2 + A, H, RH, T 4·4 = 24 doubles */
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                3, 2, 4, 1);
    ck_assert_ptr_null(pflref_model_workspace_alloc(&m, (size_t)1 << 24));
}
END_TEST

/* ------------------------------------------------------------------------
 * Compute-function errors
 * ------------------------------------------------------------------------ */

/* Every invalid argument of loss, grad, hvp, evaluate gives EINVAL. */
START_TEST(test_compute_errors)
{
    pflref_model m = make_model(PFLREF_MODEL_SOFTMAX,
                                PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1);
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  2, 0, 0, 1);
    double X[6] = {0.5, 1.5, -1.0, 2.0, 0.25, -0.75}, y[3] = {0, 2, 1};
    pflref_data D = {3, X, y, NULL, NULL};
    double w[9] = {0}, v[9] = {0}, g[9], f;
    pflref_eval e;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    pflref_model_workspace *wl = pflref_model_workspace_alloc(&lin, 3);
    const size_t ok_idx[2] = {2, 0}, bad_idx[2] = {1, 3};
    const pflref_status E = PFLREF_EINVAL;

    /* NULL pointers */
    ck_assert_int_eq(pflref_model_loss(NULL, w, &D, ok_idx, 2, ws, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, NULL, &D, ok_idx, 2, ws, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, w, NULL, ok_idx, 2, ws, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, ok_idx, 2, NULL, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, ok_idx, 2, ws, NULL), E);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, ok_idx, 2, ws, NULL, &f),
                     E);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, ok_idx, 2, NULL, ws, g), E);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, ok_idx, 2, v, ws, NULL), E);
    ck_assert_int_eq(pflref_model_hvp(NULL, w, &D, ok_idx, 2, v, ws, g), E);
    ck_assert_int_eq(pflref_model_grad(NULL, w, &D, ok_idx, 2, ws, g, &f), E);
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, NULL), E);
    ck_assert_int_eq(pflref_model_evaluate(NULL, w, &D, ws, &e), E);
    /* a workspace sized for another model */
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, ok_idx, 2, wl, &f), E);
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, wl, &e), E);
    /* data without X or y */
    pflref_data noX = D, noy = D;
    noX.X = NULL;
    noy.y = NULL;
    ck_assert_int_eq(pflref_model_loss(&m, w, &noX, ok_idx, 2, ws, &f), E);
    ck_assert_int_eq(pflref_model_grad(&m, w, &noy, ok_idx, 2, ws, g, &f), E);
    /* batches: nb > max_batch, nb = 0, idx out of range, idx NULL with a
     * size that is neither 0 nor n, whole set larger than the workspace */
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, ok_idx, 3, ws, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, ok_idx, 0, ws, &f), E);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, bad_idx, 2, ws, g, &f), E);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, bad_idx, 2, v, ws, g), E);
    ck_assert_int_eq(pflref_model_loss(&lin, w, &D, NULL, 2, wl, &f), E);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, NULL, 0, ws, &f), E);
    /* evaluate needs at least one sample */
    pflref_data empty = D;
    empty.n = 0;
    ck_assert_int_eq(pflref_model_evaluate(&lin, w, &empty, wl, &e), E);
    ck_assert_int_eq(pflref_model_loss(&lin, w, &empty, NULL, 0, wl, &f), E);
    /* labels that are not classes are caught while gathering */
    double bad_y[3] = {0, 3, 1}, frac_y[3] = {0.5, 1, 1}, neg_y[3] = {-1, 0,
                                                                       0};
    pflref_data By = D;
    By.y = bad_y;
    ck_assert_int_eq(pflref_model_loss(&m, w, &By, ok_idx + 1, 1, ws, &f),
                     PFLREF_OK); /* sample 0 is fine */
    ck_assert_int_eq(pflref_model_grad(&m, w, &By, bad_idx, 1, ws, g, &f),
                     E);         /* sample 1 has y = 3 = k */
    ck_assert_int_eq(pflref_model_hvp(&m, w, &By, bad_idx, 1, v, ws, g), E);
    By.y = frac_y;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &By, ws, &e), E);
    By.y = neg_y;
    ck_assert_int_eq(pflref_model_loss(&m, w, &By, ok_idx + 1, 1, ws, &f),
                     E);         /* sample 0 has y = -1 */
    /* evaluate in chunks fails on a bad label of a later chunk */
    pflref_model_workspace *w1 = pflref_model_workspace_alloc(&m, 1);
    By.y = bad_y;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &By, w1, &e), E);
    /* quadratic without a or c */
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                2, 0, 0, 0);
    pflref_model_workspace *wq = pflref_model_workspace_alloc(&q, 1);
    double a[2] = {1.5, 2.5};
    pflref_data Q = {1, NULL, NULL, a, NULL};
    ck_assert_int_eq(pflref_model_loss(&q, w, &Q, NULL, 0, wq, &f), E);
    Q.a = NULL;
    Q.c = a;
    ck_assert_int_eq(pflref_model_evaluate(&q, w, &Q, wq, &e), E);
    pflref_model_workspace_free(ws);
    pflref_model_workspace_free(wl);
    pflref_model_workspace_free(w1);
    pflref_model_workspace_free(wq);
}
END_TEST

/* ------------------------------------------------------------------------
 * Data validation: every failure, with its JSON path
 * ------------------------------------------------------------------------ */

static void expect_invalid(const pflref_model *m, const pflref_data *D,
                           const char *where, pflref_status status,
                           const char *path, const char *what)
{
    pflref_error err;
    pflref_status st = pflref_data_validate(m, D, where, &err);
    ck_assert_msg(st == status, "%s: status %d, want %d", what, (int)st,
                  (int)status);
    ck_assert_msg(strcmp(err.where, path) == 0, "%s: path \"%s\", want "
                  "\"%s\"", what, err.where, path);
    ck_assert_msg(err.message[0] != '\0', "%s: no message", what);
}

START_TEST(test_validate_data_models)
{
    const char *W = "clients[2].train";
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  2, 0, 0, 1);
    pflref_model sm = make_model(PFLREF_MODEL_SOFTMAX,
                                 PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 0);
    double X[12] = {0.5, 1.5, -1.0, 2.0, 0.25, -0.75,
                    3.5, -2.5, 1.0, 0.0, -0.5, 4.25};
    double y[6] = {0, 2, 1, 1, 0, 2};
    pflref_data D = {6, X, y, NULL, NULL};
    pflref_error err;

    ck_assert_int_eq(pflref_data_validate(&lin, &D, W, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_data_validate(&sm, &D, W, &err), PFLREF_OK);

    expect_invalid(NULL, &D, W, PFLREF_EINVAL, "m", "m NULL");
    expect_invalid(&lin, NULL, W, PFLREF_EINVAL, W, "D NULL");
    expect_invalid(&lin, NULL, NULL, PFLREF_EINVAL, "D", "D NULL, no where");
    pflref_data E = D;
    E.n = 0;
    expect_invalid(&lin, &E, W, PFLREF_EINVAL, "clients[2].train.n", "n = 0");
    E = D;
    E.X = NULL;
    expect_invalid(&lin, &E, W, PFLREF_EINVAL, "clients[2].train.X",
                   "X NULL");
    E = D;
    E.y = NULL;
    expect_invalid(&sm, &E, W, PFLREF_EINVAL, "clients[2].train.y",
                   "y NULL");
    E = D;
    E.n = SIZE_MAX / 32; /* n·d doubles: beyond any memory; not read */
    expect_invalid(&lin, &E, W, PFLREF_ENOMEM, "clients[2].train.X",
                   "n·d beyond the machine's memory");
    E.n = SIZE_MAX; /* n·d overflows size_t */
    expect_invalid(&lin, &E, W, PFLREF_ENOMEM, "clients[2].train.X",
                   "n·d overflows");

    X[7] = NAN; /* X[3][1] */
    expect_invalid(&lin, &D, W, PFLREF_EINVAL, "clients[2].train.X[3][1]",
                   "X[3][1] NaN");
    expect_invalid(&sm, &D, NULL, PFLREF_EINVAL, "X[3][1]",
                   "X[3][1] NaN, no prefix");
    expect_invalid(&sm, &D, "", PFLREF_EINVAL, "X[3][1]",
                   "X[3][1] NaN, empty prefix");
    X[7] = -2.5;
    X[0] = -INFINITY;
    expect_invalid(&sm, &D, W, PFLREF_EINVAL, "clients[2].train.X[0][0]",
                   "X[0][0] -Inf");
    X[0] = 0.5;

    y[5] = INFINITY;
    expect_invalid(&lin, &D, W, PFLREF_EINVAL, "clients[2].train.y[5]",
                   "linear y[5] Inf");
    expect_invalid(&sm, &D, W, PFLREF_EINVAL, "clients[2].train.y[5]",
                   "softmax y[5] Inf");
    y[5] = 2.0;
    y[4] = 1.5;
    expect_invalid(&sm, &D, W, PFLREF_EINVAL, "clients[2].train.y[4]",
                   "label 1.5 not integral");
    ck_assert_msg(pflref_data_validate(&lin, &D, W, &err) == PFLREF_OK,
                  "a linear target of 1.5 is fine: %s", err.message);
    y[4] = 3.0;
    expect_invalid(&sm, &D, W, PFLREF_EINVAL, "clients[2].train.y[4]",
                   "label 3 = k");
    y[4] = -1.0;
    expect_invalid(&sm, &D, W, PFLREF_EINVAL, "clients[2].train.y[4]",
                   "label -1");
    y[4] = 0.0;
    ck_assert_int_eq(pflref_data_validate(&sm, &D, W, NULL), PFLREF_OK);
}
END_TEST

START_TEST(test_validate_quadratic)
{
    const char *W = "clients[0].train";
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                3, 0, 0, 0);
    double a[3] = {2.5, 0.75, 1.25}, c[3] = {-1.5, 0.0, 3.25};
    pflref_data D = {1, NULL, NULL, a, c};
    ck_assert_int_eq(pflref_data_validate(&q, &D, W, NULL), PFLREF_OK);
    pflref_data E = D;
    E.a = NULL;
    expect_invalid(&q, &E, W, PFLREF_EINVAL, "clients[0].train.a", "a NULL");
    E = D;
    E.c = NULL;
    expect_invalid(&q, &E, W, PFLREF_EINVAL, "clients[0].train.c", "c NULL");
    E = D;
    E.n = 0;
    expect_invalid(&q, &E, W, PFLREF_EINVAL, "clients[0].train.n", "n = 0");
    a[0] = 0.0;
    expect_invalid(&q, &D, W, PFLREF_EINVAL, "clients[0].train.a[0]",
                   "a_0 = 0");
    a[0] = -0.5;
    expect_invalid(&q, &D, W, PFLREF_EINVAL, "clients[0].train.a[0]",
                   "a_0 < 0");
    a[0] = 2.5;
    a[1] = NAN;
    expect_invalid(&q, &D, W, PFLREF_EINVAL, "clients[0].train.a[1]",
                   "a_1 NaN");
    a[1] = INFINITY;
    expect_invalid(&q, &D, W, PFLREF_EINVAL, "clients[0].train.a[1]",
                   "a_1 Inf");
    a[1] = 0.75;
    c[2] = -INFINITY;
    expect_invalid(&q, &D, W, PFLREF_EINVAL, "clients[0].train.c[2]",
                   "c_2 -Inf");
}
END_TEST

/* ------------------------------------------------------------------------
 * Split and mask
 * ------------------------------------------------------------------------ */

static void expect_split(const pflref_model *m, const char *const *names,
                         size_t count, const unsigned char *want,
                         const char *what)
{
    pflref_split s;
    pflref_error err;
    ck_assert_msg(pflref_split_from_names(m, names, count, "hyper.split", &s,
                                          &err) == PFLREF_OK,
                  "%s: %s", what, err.message);
    for (size_t b = 0; b < m->nblocks; b++)
        ck_assert_msg(s.personal[b] == want[b], "%s: block %s personal = %d, "
                      "want %d", what, m->blocks[b].name, s.personal[b],
                      want[b]);
}

START_TEST(test_split_names)
{
    pflref_model mlp = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                  2, 2, 3, 1);
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED,
                                  2, 0, 0, 1);
    const char *head[] = {"head"}, *input[] = {"input"};
    const char *mixed[] = {"W1", "b2"}, *dup[] = {"b1", "input", "b1"};
    const char *lin_b[] = {"b"};
    expect_split(&mlp, NULL, 0, (const unsigned char[]){0, 0, 0, 0},
                 "no names: all shared");
    expect_split(&mlp, head, 1, (const unsigned char[]){0, 0, 1, 1},
                 "mlp head");
    expect_split(&mlp, input, 1, (const unsigned char[]){1, 1, 0, 0},
                 "mlp input");
    expect_split(&mlp, mixed, 2, (const unsigned char[]){1, 0, 0, 1},
                 "mlp W1 + b2");
    expect_split(&mlp, dup, 3, (const unsigned char[]){1, 1, 0, 0},
                 "mlp repeated names");
    expect_split(&lin, head, 1, (const unsigned char[]){1, 1},
                 "linear head = every block");
    expect_split(&lin, input, 1, (const unsigned char[]){1, 1},
                 "linear input = every block");
    expect_split(&lin, lin_b, 1, (const unsigned char[]){0, 1}, "linear b");
}
END_TEST

/* pflref_model_blocks_inside: the linear model on d = 2 with a bias has
 * blocks w (offset 0, size 2) and b (offset 2, size 1), P = 3.  A block
 * ending exactly at P is inside; one entry past, a size past P, an offset
 * whose sum with the size wraps around a size_t (SIZE_MAX + 2 = 1 ≤ P) and
 * one block more than PFLREF_MAX_BLOCKS are each refused. */
START_TEST(test_blocks_inside)
{
    const pflref_model lin = make_model(PFLREF_MODEL_LINEAR,
                                        PFLREF_LOSS_SQUARED, 2, 0, 0, 1);
    ck_assert_uint_eq(lin.P, 3);
    ck_assert_uint_eq(lin.nblocks, 2);
    ck_assert_int_eq(pflref_model_blocks_inside(&lin), 1);
    pflref_model m = lin;
    m.blocks[1].size = 2;                       /* b ends at 4 > P */
    ck_assert_int_eq(pflref_model_blocks_inside(&m), 0);
    m = lin;
    m.blocks[1].offset = 3;                     /* empty, ends at P */
    m.blocks[1].size = 0;
    ck_assert_int_eq(pflref_model_blocks_inside(&m), 1);
    m = lin;
    m.blocks[0].size = 4;                       /* larger than P */
    ck_assert_int_eq(pflref_model_blocks_inside(&m), 0);
    m = lin;
    m.blocks[1].offset = SIZE_MAX;              /* offset + size wraps */
    m.blocks[1].size = 2;
    ck_assert_int_eq(pflref_model_blocks_inside(&m), 0);
    m = lin;
    m.nblocks = PFLREF_MAX_BLOCKS + 1;
    ck_assert_int_eq(pflref_model_blocks_inside(&m), 0);
}
END_TEST

START_TEST(test_split_errors)
{
    pflref_model sm = make_model(PFLREF_MODEL_SOFTMAX,
                                 PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 0);
    const char *bad[] = {"W", "b"};  /* no bias: "b" is unknown */
    const char *nul[] = {"head", NULL};
    const char *typo[] = {"Head"};
    pflref_split s;
    pflref_error err;
    ck_assert_int_eq(pflref_split_from_names(&sm, bad, 2, "hyper.split", &s,
                                             &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "hyper.split[1]");
    ck_assert_msg(strstr(err.message, "\"b\"") != NULL,
                  "message should quote the bad name: %s", err.message);
    ck_assert_int_eq(pflref_split_from_names(&sm, nul, 2, "hyper.split", &s,
                                             &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "hyper.split[1]");
    ck_assert_int_eq(pflref_split_from_names(&sm, typo, 1, NULL, &s, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "split[0]");
    ck_assert_int_eq(pflref_split_from_names(NULL, bad, 1, "x", &s, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    ck_assert_int_eq(pflref_split_from_names(&sm, bad, 1, "x", NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "out");
    ck_assert_int_eq(pflref_split_from_names(&sm, NULL, 2, "x", &s, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "x");
}
END_TEST

/* mlp d = 2, h = 3, k = 2: W1 0..5, b1 6..8, W2 9..14, b2 15..16 (P = 17).
 * Head personal → mask 0 on 0..8, 1 on 9..16. */
START_TEST(test_split_mask)
{
    pflref_model mlp = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                  2, 2, 3, 1);
    ck_assert_uint_eq(mlp.P, 17);
    pflref_split s;
    const char *names[] = {"head"};
    ck_assert_int_eq(pflref_split_from_names(&mlp, names, 1, "s", &s, NULL),
                     PFLREF_OK);
    unsigned char mask[17];
    memset(mask, 7, sizeof mask);
    pflref_split_mask(&mlp, &s, mask);
    for (size_t p = 0; p < 17; p++)
        ck_assert_msg(mask[p] == (p >= 9), "head mask[%zu] = %d, want %d", p,
                      mask[p], p >= 9);
    const char *b1[] = {"b1"};
    ck_assert_int_eq(pflref_split_from_names(&mlp, b1, 1, "s", &s, NULL),
                     PFLREF_OK);
    pflref_split_mask(&mlp, &s, mask);
    for (size_t p = 0; p < 17; p++)
        ck_assert_msg(mask[p] == (p >= 6 && p <= 8),
                      "b1 mask[%zu] = %d", p, mask[p]);
    memset(mask, 7, sizeof mask);
    pflref_split_mask(&mlp, NULL, mask);
    for (size_t p = 0; p < 17; p++)
        ck_assert_msg(mask[p] == 0, "NULL split: mask[%zu] = %d, want 0", p,
                      mask[p]);
    pflref_split_mask(NULL, &s, mask); /* no-ops, no crash */
    pflref_split_mask(&mlp, &s, NULL);
}
END_TEST

/* ------------------------------------------------------------------------
 * The generalised mlp: activation × hidden bias × output bias × loss, and
 * the body/head API
 * ------------------------------------------------------------------------ */

static pflref_model make_mlp(pflref_loss loss, size_t d, size_t k, size_t h,
                             pflref_activation act, int hidden_bias, int bias)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init_mlp(&m, loss, d, k, h, act,
                                             hidden_bias, bias, &err);
    ck_assert_msg(st == PFLREF_OK, "model_init_mlp(%s, d=%zu, k=%zu, h=%zu, "
                  "%s, hidden_bias=%d, bias=%d) failed: %s: %s",
                  pflref_loss_name(loss), d, k, h,
                  pflref_activation_name(act), hidden_bias, bias, err.where,
                  err.message);
    return m;
}

/* Variant i of NVARIANTS: activation i % 2 (relu, identity), hidden bias
 * (i / 2) % 2, output bias (i / 4) % 2, loss i / 8 (cross_entropy,
 * half_squared, squared); d = 3, h = 4, k = 3 classes or 1 output. */
#define NVARIANTS 24
static pflref_model mlp_variant(int i)
{
    static const pflref_loss losses[3] = {PFLREF_LOSS_CROSS_ENTROPY,
                                          PFLREF_LOSS_HALF_SQUARED,
                                          PFLREF_LOSS_SQUARED};
    const pflref_loss loss = losses[i / 8];
    return make_mlp(loss, 3, loss == PFLREF_LOSS_CROSS_ENTROPY ? 3 : 1, 4,
                    i % 2 ? PFLREF_ACT_IDENTITY : PFLREF_ACT_RELU,
                    (i / 2) % 2, (i / 4) % 2);
}

/* The data, batch and point of variant i: n = 7 samples; odd variants use
 * a batch of 5 indices drawn with repeats, even ones the whole set. */
typedef struct {
    pflref_model m;
    pflref_data D;
    size_t *idx;
    size_t nb;
    double *w;
    gsl_rng *r;
    char label[160];
} variant_case;

static void variant_setup(int i, variant_case *c)
{
    c->m = mlp_variant(i);
    c->r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(c->r, 3000 + (unsigned long)i);
    c->D = random_data(c->r, &c->m, 7);
    c->idx = NULL;
    c->nb = 0;
    if (i % 2) {
        c->nb = 5;
        c->idx = malloc(c->nb * sizeof *c->idx);
        for (size_t j = 0; j < c->nb; j++)
            c->idx[j] = gsl_rng_uniform_int(c->r, c->D.n);
    }
    c->w = malloc(c->m.P * sizeof *c->w);
    random_point(c->r, &c->m, &c->D, c->w);
    snprintf(c->label, sizeof c->label,
             "mlp %s/%s hidden_bias=%d bias=%d k=%zu P=%zu nb=%zu",
             pflref_activation_name(c->m.activation),
             pflref_loss_name(c->m.loss), c->m.hidden_bias, c->m.bias, c->m.k,
             c->m.P, c->nb);
}

static void variant_teardown(variant_case *c)
{
    free(c->w);
    free(c->idx);
    data_free(&c->D);
    gsl_rng_free(c->r);
}

START_TEST(test_mlp_variant_grad_fd)
{
    variant_case c;
    variant_setup(_i, &c);
    check_grad_fd(&c.m, &c.D, c.idx, c.nb, c.w, c.label);
    variant_teardown(&c);
}
END_TEST

START_TEST(test_mlp_variant_hvp_fd)
{
    variant_case c;
    variant_setup(_i, &c);
    check_hvp_fd(c.r, &c.m, &c.D, c.idx, c.nb, c.w, c.label);
    variant_teardown(&c);
}
END_TEST

/* [offset, offset + size) of block `name` of m, or size 0 when absent. */
static void block_range(const pflref_model *m, const char *name, size_t *off,
                        size_t *size)
{
    const int b = pflref_model_block_index(m, name);
    *off = b >= 0 ? m->blocks[b].offset : 0;
    *size = b >= 0 ? m->blocks[b].size : 0;
}

/* features → head_grad → body_grad against model_grad on one batch:
 *   - the composed gradient and loss equal model_grad's bit for bit (the
 *     same static code path);
 *   - head_grad writes only W2, b2 and body_grad only W1, b1 (the other
 *     entries keep a sentinel);
 *   - features reads no head entry, head_grad no body entry, body_grad
 *     only W2 of w (the others set to NaN change nothing);
 *   - A, Phi = σ(A) and E = ∂ℓ/∂z (not divided by nb) against plain loops. */
static void check_split(const pflref_model *m, const pflref_data *D,
                        const size_t *idx, size_t nb, const double *w,
                        const char *label)
{
    const size_t P = m->P, d = m->d, k = m->k, h = m->h;
    const size_t n_b = idx != NULL ? nb : D->n;
    const double SENTINEL = 7.625;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(m, n_b);
    ck_assert_ptr_nonnull(ws);
    double *g_ref = malloc(P * sizeof *g_ref), *g = malloc(P * sizeof *g);
    double *g2 = malloc(P * sizeof *g2), *wn = malloc(P * sizeof *wn);
    double *A = malloc(n_b * h * sizeof *A), *Phi = malloc(n_b * h * sizeof *Phi);
    double *A2 = malloc(n_b * h * sizeof *A2),
           *Phi2 = malloc(n_b * h * sizeof *Phi2);
    double *E = malloc(n_b * k * sizeof *E), *E2 = malloc(n_b * k * sizeof *E2);
    double f_ref = NAN, f = NAN, f2 = NAN;
    size_t oW1, sW1, ob1, sb1, oW2, sW2, ob2, sb2;
    block_range(m, "W1", &oW1, &sW1);
    block_range(m, "b1", &ob1, &sb1);
    block_range(m, "W2", &oW2, &sW2);
    block_range(m, "b2", &ob2, &sb2);
    const size_t body_end = oW2; /* W1 and b1 come first */

    ck_assert_int_eq(pflref_model_grad(m, w, D, idx, nb, ws, g_ref, &f_ref),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        g[p] = SENTINEL;
    ck_assert_int_eq(pflref_model_features(m, w, D, idx, nb, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(m, w, Phi, D, idx, nb, ws, g, E,
                                            &f),
                     PFLREF_OK);
    for (size_t p = 0; p < body_end; p++)
        ck_assert_msg(g[p] == SENTINEL, "%s: head_grad wrote body entry %zu",
                      label, p);
    for (size_t p = body_end; p < P; p++)
        g2[p] = g[p];
    ck_assert_int_eq(pflref_model_body_grad(m, w, A, E, D, idx, nb, ws, g),
                     PFLREF_OK);
    for (size_t p = body_end; p < P; p++)
        ck_assert_msg(g[p] == g2[p], "%s: body_grad wrote head entry %zu",
                      label, p);
    ck_assert_msg(f == f_ref, "%s: head_grad's loss %.17g != model_grad's "
                  "%.17g", label, f, f_ref);
    for (size_t p = 0; p < P; p++)
        ck_assert_msg(g[p] == g_ref[p], "%s: features + head_grad + body_grad "
                      "entry %zu = %.17g, model_grad %.17g (must agree bit for "
                      "bit)", label, p, g[p], g_ref[p]);

    /* A, Phi and E by plain loops (tolerance: a few roundings of O(10)
     * sums in another order). */
    const double *W1 = w + oW1, *b1 = sb1 ? w + ob1 : NULL;
    const double *W2 = w + oW2, *b2 = sb2 ? w + ob2 : NULL;
    const double s = m->loss == PFLREF_LOSS_SQUARED ? 2.0 : 1.0;
    for (size_t j = 0; j < n_b; j++) {
        const size_t i = idx != NULL ? idx[j] : j;
        const double *x = D->X + i * d;
        double phi[8], z[8];
        for (size_t u = 0; u < h; u++) {
            double a = b1 != NULL ? b1[u] : 0.0;
            for (size_t q = 0; q < d; q++)
                a += W1[u * d + q] * x[q];
            ck_assert_msg(fabs(A[j * h + u] - a) <= 1e-14 * (1.0 + fabs(a)),
                          "%s: A[%zu][%zu] = %.17g, loops %.17g", label, j, u,
                          A[j * h + u], a);
            phi[u] = m->activation == PFLREF_ACT_RELU ? (a > 0.0 ? a : 0.0)
                                                      : a;
            const double want = m->activation == PFLREF_ACT_RELU
                                    ? (A[j * h + u] > 0.0 ? A[j * h + u] : 0.0)
                                    : A[j * h + u];
            ck_assert_msg(Phi[j * h + u] == want, "%s: Phi[%zu][%zu] = %.17g "
                          "is not %s(A) = %.17g", label, j, u, Phi[j * h + u],
                          pflref_activation_name(m->activation), want);
        }
        double zmax = -INFINITY, S = 0.0;
        for (size_t c = 0; c < k; c++) {
            z[c] = b2 != NULL ? b2[c] : 0.0;
            for (size_t u = 0; u < h; u++)
                z[c] += W2[c * h + u] * phi[u];
            if (z[c] > zmax)
                zmax = z[c];
        }
        for (size_t c = 0; c < k; c++)
            S += exp(z[c] - zmax);
        for (size_t c = 0; c < k; c++) {
            const double e =
                pflref_model_is_regression(m)
                    ? s * (z[0] - D->y[i])
                    : exp(z[c] - zmax) / S - (c == (size_t)D->y[i] ? 1.0 : 0.0);
            ck_assert_msg(fabs(E[j * k + c] - e) <= 1e-13 * (1.0 + fabs(e)),
                          "%s: E[%zu][%zu] = %.17g, loops %.17g (E is the "
                          "per-sample dl/dz, not divided by nb)", label, j, c,
                          E[j * k + c], e);
        }
    }

    /* features ignores the head, head_grad the body, body_grad all but W2:
     * NaN in the unread blocks changes nothing. */
    memcpy(wn, w, P * sizeof *wn);
    for (size_t p = oW2; p < P; p++)
        wn[p] = NAN;
    ck_assert_int_eq(pflref_model_features(m, wn, D, idx, nb, ws, A2, Phi2),
                     PFLREF_OK);
    ck_assert_msg(memcmp(A, A2, n_b * h * sizeof *A) == 0 &&
                      memcmp(Phi, Phi2, n_b * h * sizeof *Phi) == 0,
                  "%s: features read a head entry", label);
    memcpy(wn, w, P * sizeof *wn);
    for (size_t p = 0; p < body_end; p++)
        wn[p] = NAN;
    ck_assert_int_eq(pflref_model_head_grad(m, wn, Phi, D, idx, nb, ws, g2,
                                            E2, &f2),
                     PFLREF_OK);
    ck_assert_msg(f2 == f && memcmp(E, E2, n_b * k * sizeof *E) == 0,
                  "%s: head_grad read a body entry", label);
    for (size_t p = body_end; p < P; p++)
        ck_assert_msg(g2[p] == g_ref[p], "%s: head_grad read a body entry "
                      "(gradient entry %zu)", label, p);
    memcpy(wn, w, P * sizeof *wn);
    for (size_t p = 0; p < P; p++)
        if (p < oW2 || p >= oW2 + sW2)
            wn[p] = NAN;
    ck_assert_int_eq(pflref_model_body_grad(m, wn, A, E, D, idx, nb, ws, g2),
                     PFLREF_OK);
    for (size_t p = 0; p < body_end; p++)
        ck_assert_msg(g2[p] == g_ref[p], "%s: body_grad read a block other "
                      "than W2 (gradient entry %zu)", label, p);
    /* E and loss may be NULL */
    ck_assert_int_eq(pflref_model_head_grad(m, w, Phi, D, idx, nb, ws, g2,
                                            NULL, NULL),
                     PFLREF_OK);
    for (size_t p = body_end; p < P; p++)
        ck_assert_msg(g2[p] == g_ref[p], "%s: head_grad without E and loss "
                      "differs at %zu", label, p);
    free(g_ref);
    free(g);
    free(g2);
    free(wn);
    free(A);
    free(Phi);
    free(A2);
    free(Phi2);
    free(E);
    free(E2);
    pflref_model_workspace_free(ws);
}

START_TEST(test_mlp_variant_split)
{
    variant_case c;
    variant_setup(_i, &c);
    check_split(&c.m, &c.D, c.idx, c.nb, c.w, c.label);
    variant_teardown(&c);
}
END_TEST

/* The default mlp (relu, both biases, cross-entropy; the table's shapes)
 * through the split API too, at shapes with a larger hidden layer. */
START_TEST(test_mlp_default_split)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4100);
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                5, 4, 7, 1);
    pflref_data D = random_data(r, &m, 9);
    double *w = malloc(m.P * sizeof *w);
    random_point(r, &m, &D, w);
    const size_t idx[6] = {8, 0, 3, 3, 7, 1};
    check_split(&m, &D, NULL, 0, w, "default mlp, whole set");
    check_split(&m, &D, idx, 6, w, "default mlp, batch with a repeat");
    free(w);
    data_free(&D);
    gsl_rng_free(r);
}
END_TEST

/* The scalar product ŷ = w·(θ·x): d = h = k = 1, identity, no biases;
 * parameters (θ, w) = (W1, W2) = (1, 0.5); data x = (1, 2), y = (2, 3).
 *   ŷ = (0.5, 1),  r = ŷ − y = (−1.5, −2)
 *   half_squared: F = mean(½ r²) = (1.125 + 2)/2 = 1.5625
 *   ∂F/∂w = mean(r θ x) = (−1.5 − 4)/2 = −2.75
 *   ∂F/∂θ = mean(r w x) = (−0.75 − 2)/2 = −1.375
 *   ∂²F/∂θ² = mean(w² x²) = 0.25·5/2 = 0.625,  ∂²F/∂w² = mean(θ² x²) = 2.5,
 *   ∂²F/∂θ∂w = mean(w θ x² + r x) = ((0.5 − 1.5) + (2 − 4))/2 = −1.5,
 *   so H (1, −2) = (0.625 + 3, −1.5 − 5) = (3.625, −6.5).
 * squared doubles every one of them.  mse = mean(r²) = 3.125.  Features
 * A = Phi = θ x = (1, 2); E = s r.  Every number is exact in binary. */
START_TEST(test_mlp_scalar_product_closed_form)
{
    const pflref_loss loss =
        _i == 0 ? PFLREF_LOSS_HALF_SQUARED : PFLREF_LOSS_SQUARED;
    const double s = _i == 0 ? 1.0 : 2.0;
    pflref_model m = make_mlp(loss, 1, 1, 1, PFLREF_ACT_IDENTITY, 0, 0);
    ck_assert_uint_eq(m.P, 2);
    ck_assert_uint_eq(m.nblocks, 2);
    double X[2] = {1.0, 2.0}, y[2] = {2.0, 3.0};
    pflref_data D = {2, X, y, NULL, NULL};
    const double w[2] = {1.0, 0.5}, v[2] = {1.0, -2.0};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    double g[2], Hv[2], f, A[2], Phi[2], E[2], gs[2];
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, &f),
                     PFLREF_OK);
    ck_assert_msg(g[0] == s * -1.375 && g[1] == s * -2.75,
                  "%s: gradient (d/dtheta, d/dw) = (%.17g, %.17g), hand "
                  "(%g, %g)", pflref_loss_name(loss), g[0], g[1], s * -1.375,
                  s * -2.75);
    ck_assert_msg(f == s * 1.5625, "%s: loss %.17g, hand %g",
                  pflref_loss_name(loss), f, s * 1.5625);
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, 0, v, ws, Hv),
                     PFLREF_OK);
    ck_assert_msg(Hv[0] == s * 3.625 && Hv[1] == s * -6.5,
                  "%s: Hv = (%.17g, %.17g), hand (%g, %g)",
                  pflref_loss_name(loss), Hv[0], Hv[1], s * 3.625, s * -6.5);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, NULL, 0, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_msg(A[0] == 1.0 && A[1] == 2.0 && Phi[0] == 1.0 && Phi[1] == 2.0,
                  "features A = (%g, %g), Phi = (%g, %g); hand (1, 2)", A[0],
                  A[1], Phi[0], Phi[1]);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, NULL, 0, ws, gs,
                                            E, &f),
                     PFLREF_OK);
    ck_assert_msg(E[0] == s * -1.5 && E[1] == s * -2.0 && gs[1] == s * -2.75 &&
                      f == s * 1.5625,
                  "head: E = (%g, %g), d/dw = %g, loss %g", E[0], E[1], gs[1],
                  f);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, &D, NULL, 0, ws, gs),
                     PFLREF_OK);
    ck_assert_msg(gs[0] == s * -1.375, "body: d/dtheta = %g, hand %g", gs[0],
                  s * -1.375);
    pflref_eval e;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(e.mse == 3.125 && e.loss == s * 1.5625 && isnan(e.accuracy)
                      && e.n == 2,
                  "%s: evaluate mse %g loss %g accuracy %g; want 3.125, %g, "
                  "NaN", pflref_loss_name(loss), e.mse, e.loss, e.accuracy,
                  s * 1.5625);
    pflref_model_workspace_free(ws);
}
END_TEST

/* A linear-body classifier: z = W2 (θ x) + b2, d = h = 1, k = 2, identity,
 * no hidden bias; θ = 0.5, W2 = (1.5, −0.75)ᵀ, b2 = (0.25, −0.5); layout
 * (θ, W2_0, W2_1, b2_0, b2_1).  x = (2, −1), y = (0, 0):
 *   φ = θ x = (1, −0.5)
 *   z_1 = (1.5 + 0.25, −0.75 − 0.5) = (1.75, −1.25)
 *   z_2 = (−0.75 + 0.25, 0.375 − 0.5) = (−0.5, −0.125)
 * With e_j = softmax(z_j) − e_{y_j} (libm on the literal logits):
 *   ∂F/∂W2_c = ½ Σ_j e_jc φ_j,  ∂F/∂b2_c = ½ Σ_j e_jc,
 *   ∂F/∂θ = ½ Σ_j (Σ_c e_jc W2_c) x_j,  F = ½ Σ_j (log Σ_c e^{z_jc} − z_j,y_j).
 * Accuracy: sample 1 predicts 0 (right), sample 2 predicts 1 (wrong): ½. */
START_TEST(test_mlp_linear_body_classifier_closed_form)
{
    pflref_model m = make_mlp(PFLREF_LOSS_CROSS_ENTROPY, 1, 2, 1,
                              PFLREF_ACT_IDENTITY, 0, 1);
    ck_assert_uint_eq(m.P, 5);
    double X[2] = {2.0, -1.0}, y[2] = {0.0, 0.0};
    pflref_data D = {2, X, y, NULL, NULL};
    const double w[5] = {0.5, 1.5, -0.75, 0.25, -0.5};
    const double phi[2] = {1.0, -0.5};
    const double z[2][2] = {{1.75, -1.25}, {-0.5, -0.125}};
    double f_ref = 0.0, g_ref[5] = {0};
    for (int j = 0; j < 2; j++) {
        const double S = exp(z[j][0]) + exp(z[j][1]);
        const int yj = (int)y[j];
        f_ref += 0.5 * (log(S) - z[j][yj]);
        for (int c = 0; c < 2; c++) {
            const double e = exp(z[j][c]) / S - (c == yj ? 1.0 : 0.0);
            g_ref[1 + c] += 0.5 * e * phi[j];
            g_ref[3 + c] += 0.5 * e;
            g_ref[0] += 0.5 * e * w[1 + c] * X[j];
        }
    }
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    double g[5], f;
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 0, ws, g, &f),
                     PFLREF_OK);
    ck_assert_msg(fabs(f - f_ref) <= 1e-14 * fabs(f_ref),
                  "loss %.17g, hand value %.17g", f, f_ref);
    for (int p = 0; p < 5; p++)
        ck_assert_msg(fabs(g[p] - g_ref[p]) <= 1e-14,
                      "gradient[%d] = %.17g, hand value %.17g", p, g[p],
                      g_ref[p]);
    pflref_eval e;
    ck_assert_int_eq(pflref_model_evaluate(&m, w, &D, ws, &e), PFLREF_OK);
    ck_assert_msg(e.accuracy == 0.5 && isnan(e.mse) &&
                      fabs(e.loss - f_ref) <= 1e-14 * f_ref,
                  "evaluate: accuracy %g (want 0.5), mse %g (want NaN), loss "
                  "%.17g (want %.17g)", e.accuracy, e.mse, e.loss, f_ref);
    pflref_model_workspace_free(ws);
}
END_TEST

/* Layouts by hand, d = 3, h = 5:
 *   identity, b2 only, k = 2:  W1 5×3 at 0, W2 2×5 at 15, b2 at 25, P = 27
 *   relu, b1 only, k = 1:      W1 at 0, b1 at 15, W2 1×5 at 20, P = 25
 *   no biases, k = 1:          W1 at 0, W2 1×5 at 15, P = 20
 *   model_init(mlp, bias 0):   W1 at 0, W2 2×5 at 15, P = 25, relu. */
START_TEST(test_mlp_blocks)
{
    pin_memory_limit();
    pflref_model m = make_mlp(PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 5,
                              PFLREF_ACT_IDENTITY, 0, 1);
    ck_assert_uint_eq(m.P, 27);
    ck_assert_uint_eq(m.nblocks, 3);
    ck_assert_msg(m.activation == PFLREF_ACT_IDENTITY && m.hidden_bias == 0 &&
                      m.bias == 1, "fields: activation %d hidden_bias %d bias "
                  "%d", (int)m.activation, m.hidden_bias, m.bias);
    check_block(&m, 0, "W1", 0, 5, 3, 1, 0);
    check_block(&m, 1, "W2", 15, 2, 5, 0, 1);
    check_block(&m, 2, "b2", 25, 2, 1, 0, 1);
    ck_assert_int_eq(pflref_model_block_index(&m, "b1"), -1);

    m = make_mlp(PFLREF_LOSS_HALF_SQUARED, 3, 1, 5, PFLREF_ACT_RELU, 1, 0);
    ck_assert_uint_eq(m.P, 25);
    ck_assert_uint_eq(m.k, 1);
    check_block(&m, 0, "W1", 0, 5, 3, 1, 0);
    check_block(&m, 1, "b1", 15, 5, 1, 1, 0);
    check_block(&m, 2, "W2", 20, 1, 5, 0, 1);
    ck_assert_int_eq(pflref_model_block_index(&m, "b2"), -1);

    m = make_mlp(PFLREF_LOSS_SQUARED, 3, 1, 5, PFLREF_ACT_IDENTITY, 0, 0);
    ck_assert_uint_eq(m.P, 20);
    ck_assert_uint_eq(m.nblocks, 2);
    check_block(&m, 0, "W1", 0, 5, 3, 1, 0);
    check_block(&m, 1, "W2", 15, 1, 5, 0, 1);

    m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 5, 0);
    ck_assert_uint_eq(m.P, 25);
    ck_assert_msg(m.activation == PFLREF_ACT_RELU && m.hidden_bias == 0 &&
                      m.bias == 0, "model_init(mlp, bias 0): activation %d "
                  "hidden_bias %d bias %d; want relu, 0, 0",
                  (int)m.activation, m.hidden_bias, m.bias);
    check_block(&m, 1, "W2", 15, 2, 5, 0, 1);
    m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 5, 1);
    ck_assert_msg(m.activation == PFLREF_ACT_RELU && m.hidden_bias == 1 &&
                      m.bias == 1 && m.P == 32,
                  "model_init(mlp, bias 1): relu, both biases, P = 32");
    m = make_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 0, 1);
    ck_assert_msg(m.activation == PFLREF_ACT_RELU && m.hidden_bias == 0,
                  "softmax: activation %d hidden_bias %d; want relu, 0",
                  (int)m.activation, m.hidden_bias);

    /* the boundary P = 2^26 is allowed for the bias-free regression mlp */
    m = make_mlp(PFLREF_LOSS_HALF_SQUARED, PINNED_LIMIT_P - 1, 1, 1,
                 PFLREF_ACT_IDENTITY, 0, 0);
    ck_assert_uint_eq(m.P, PINNED_LIMIT_P);

    /* groups on an mlp without b1: input = W1, head = W2, b2 */
    m = make_mlp(PFLREF_LOSS_CROSS_ENTROPY, 3, 2, 5, PFLREF_ACT_IDENTITY, 0,
                 1);
    const char *input[] = {"input"}, *head[] = {"head"}, *b1[] = {"b1"};
    expect_split(&m, input, 1, (const unsigned char[]){1, 0, 0},
                 "mlp without b1: input");
    expect_split(&m, head, 1, (const unsigned char[]){0, 1, 1},
                 "mlp without b1: head");
    pflref_split sp;
    ck_assert_int_eq(pflref_split_from_names(&m, b1, 1, "s", &sp, NULL),
                     PFLREF_EINVAL);
}
END_TEST

START_TEST(test_model_predicates)
{
    const pflref_model q = make_model(PFLREF_MODEL_QUADRATIC,
                                      PFLREF_LOSS_QUADRATIC, 2, 0, 0, 0);
    const pflref_model lin = make_model(PFLREF_MODEL_LINEAR,
                                        PFLREF_LOSS_SQUARED, 2, 0, 0, 1);
    const pflref_model sm = make_model(PFLREF_MODEL_SOFTMAX,
                                       PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1);
    const pflref_model ce = make_model(PFLREF_MODEL_MLP,
                                       PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 2, 1);
    const pflref_model hs = make_mlp(PFLREF_LOSS_HALF_SQUARED, 2, 1, 2,
                                     PFLREF_ACT_RELU, 1, 1);
    const pflref_model sq = make_mlp(PFLREF_LOSS_SQUARED, 2, 1, 2,
                                     PFLREF_ACT_IDENTITY, 0, 0);
    ck_assert(!pflref_model_is_regression(&q) && !pflref_model_is_classifier(&q));
    ck_assert(pflref_model_is_regression(&lin) && !pflref_model_is_classifier(&lin));
    ck_assert(!pflref_model_is_regression(&sm) && pflref_model_is_classifier(&sm));
    ck_assert(!pflref_model_is_regression(&ce) && pflref_model_is_classifier(&ce));
    ck_assert(pflref_model_is_regression(&hs) && !pflref_model_is_classifier(&hs));
    ck_assert(pflref_model_is_regression(&sq) && !pflref_model_is_classifier(&sq));
    ck_assert(!pflref_model_is_regression(NULL) && !pflref_model_is_classifier(NULL));
}
END_TEST

typedef struct {
    pflref_loss loss;
    size_t d, k, h;
    pflref_activation act;
    int hidden_bias, bias;
    pflref_status status;
    const char *where;
    const char *what;
} init_mlp_case;

static const init_mlp_case init_mlp_errors[] = {
    {PFLREF_LOSS_QUADRATIC, 2, 2, 2, PFLREF_ACT_RELU, 1, 1, PFLREF_EINVAL,
     "loss", "mlp with the quadratic loss"},
    {(pflref_loss)42, 2, 2, 2, PFLREF_ACT_RELU, 1, 1, PFLREF_EINVAL, "loss",
     "mlp with an unknown loss"},
    {PFLREF_LOSS_CROSS_ENTROPY, 0, 2, 2, PFLREF_ACT_RELU, 1, 1, PFLREF_EINVAL,
     "d", "d = 0"},
    {PFLREF_LOSS_CROSS_ENTROPY, 2, 1, 2, PFLREF_ACT_RELU, 1, 1, PFLREF_EINVAL,
     "k", "cross-entropy mlp with k = 1"},
    {PFLREF_LOSS_HALF_SQUARED, 2, 2, 2, PFLREF_ACT_IDENTITY, 0, 0,
     PFLREF_EINVAL, "k", "half_squared mlp with k = 2"},
    {PFLREF_LOSS_SQUARED, 2, 0, 2, PFLREF_ACT_IDENTITY, 0, 0, PFLREF_EINVAL,
     "k", "squared mlp with k = 0"},
    {PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 0, PFLREF_ACT_RELU, 1, 1, PFLREF_EINVAL,
     "h", "h = 0"},
    {PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 2, (pflref_activation)5, 1, 1,
     PFLREF_EINVAL, "activation", "unknown activation"},
    {PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 2, PFLREF_ACT_RELU, 2, 1, PFLREF_EINVAL,
     "hidden_bias", "hidden_bias = 2"},
    {PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 2, PFLREF_ACT_RELU, 1, -1,
     PFLREF_EINVAL, "bias", "output bias = -1"},
    /* P = h·d + k·h = 2^26 + 8192 > PINNED_LIMIT_P without any bias */
    {PFLREF_LOSS_HALF_SQUARED, 8192, 1, 8192, PFLREF_ACT_IDENTITY, 0, 0,
     PFLREF_ENOMEM, "P", "8192 → 8192 → 1 without biases"},
    {PFLREF_LOSS_CROSS_ENTROPY, 1, 2, SIZE_MAX, PFLREF_ACT_RELU, 1, 0,
     PFLREF_ENOMEM, "P", "h·d + h overflows"},
    {PFLREF_LOSS_CROSS_ENTROPY, 1, 2, SIZE_MAX / 2, PFLREF_ACT_RELU, 0, 0,
     PFLREF_ENOMEM, "P", "h·d + k·h overflows (no biases)"},
    {PFLREF_LOSS_CROSS_ENTROPY, 1, SIZE_MAX - 2, 1, PFLREF_ACT_IDENTITY, 0, 1,
     PFLREF_ENOMEM, "P", "h·d + k·h + k overflows"},
};
#define NINIT_MLP ((int)(sizeof init_mlp_errors / sizeof init_mlp_errors[0]))

START_TEST(test_init_mlp_errors)
{
    pin_memory_limit();
    const init_mlp_case *c = &init_mlp_errors[_i];
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init_mlp(&m, c->loss, c->d, c->k, c->h,
                                             c->act, c->hidden_bias, c->bias,
                                             &err);
    ck_assert_msg(st == c->status, "%s: status %d, want %d", c->what,
                  (int)st, (int)c->status);
    ck_assert_msg(strcmp(err.where, c->where) == 0,
                  "%s: err.where \"%s\", want \"%s\"", c->what, err.where,
                  c->where);
    ck_assert_msg(err.message[0] != '\0', "%s: empty message", c->what);
    ck_assert_int_eq(pflref_model_init_mlp(NULL, c->loss, c->d, c->k, c->h,
                                           c->act, c->hidden_bias, c->bias,
                                           &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
}
END_TEST

/* Every invalid argument of features, head_grad and body_grad gives
 * EINVAL; a model that is not an mlp first of all. */
START_TEST(test_body_head_errors)
{
    pflref_model m = make_model(PFLREF_MODEL_MLP, PFLREF_LOSS_CROSS_ENTROPY,
                                2, 3, 2, 1);
    pflref_model sm = make_model(PFLREF_MODEL_SOFTMAX,
                                 PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1);
    pflref_model lin = make_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, 2,
                                  0, 0, 1);
    pflref_model q = make_model(PFLREF_MODEL_QUADRATIC, PFLREF_LOSS_QUADRATIC,
                                2, 0, 0, 0);
    pflref_model other = make_mlp(PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 4,
                                  PFLREF_ACT_RELU, 1, 1);
    double X[6] = {0.5, 1.5, -1.0, 2.0, 0.25, -0.75}, y[3] = {0, 2, 1};
    double a[2] = {1.5, 2.5}, c[2] = {0.5, -1.0};
    pflref_data D = {3, X, y, NULL, NULL}, Q = {1, NULL, NULL, a, c};
    double w[17] = {0.25, -0.5, 0.75, 0.125, 0.1, -0.2, 0.3, -0.4, 0.5,
                    -0.6, 0.7, -0.8, 0.9, 0.05, -0.15};
    double A[4], Phi[4], E[6], g[17], f;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    pflref_model_workspace *wsm = pflref_model_workspace_alloc(&sm, 2);
    pflref_model_workspace *wl = pflref_model_workspace_alloc(&lin, 2);
    pflref_model_workspace *wq = pflref_model_workspace_alloc(&q, 1);
    pflref_model_workspace *wo = pflref_model_workspace_alloc(&other, 2);
    const size_t ok_idx[2] = {2, 0}, bad_idx[2] = {1, 3};
    const pflref_status E_ = PFLREF_EINVAL;

    /* the valid calls first (the checks below are not vacuous) */
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 2, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, ok_idx, 2, ws, g,
                                            E, &f), PFLREF_OK);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, &D, ok_idx, 2, ws, g),
                     PFLREF_OK);
    /* not an mlp */
    ck_assert_int_eq(pflref_model_features(&sm, w, &D, ok_idx, 2, wsm, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_head_grad(&lin, w, Phi, &D, ok_idx, 2, wl, g,
                                            E, &f), E_);
    ck_assert_int_eq(pflref_model_body_grad(&q, w, A, E, &Q, NULL, 0, wq, g),
                     E_);
    ck_assert_int_eq(pflref_model_features(&q, w, &Q, NULL, 0, wq, A, Phi),
                     E_);
    /* NULL arguments */
    ck_assert_int_eq(pflref_model_features(NULL, w, &D, ok_idx, 2, ws, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_features(&m, NULL, &D, ok_idx, 2, ws, A,
                                           Phi), E_);
    ck_assert_int_eq(pflref_model_features(&m, w, NULL, ok_idx, 2, ws, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 2, NULL, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 2, ws, NULL,
                                           Phi), E_);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 2, ws, A, NULL),
                     E_);
    ck_assert_int_eq(pflref_model_head_grad(NULL, w, Phi, &D, ok_idx, 2, ws, g,
                                            E, &f), E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, NULL, &D, ok_idx, 2, ws, g,
                                            E, &f), E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, ok_idx, 2, ws,
                                            NULL, E, &f), E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, NULL, Phi, &D, ok_idx, 2, ws,
                                            g, E, &f), E_);
    ck_assert_int_eq(pflref_model_body_grad(NULL, w, A, E, &D, ok_idx, 2, ws,
                                            g), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, NULL, E, &D, ok_idx, 2, ws,
                                            g), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, NULL, &D, ok_idx, 2, ws,
                                            g), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, &D, ok_idx, 2, ws,
                                            NULL), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, NULL, ok_idx, 2, ws,
                                            g), E_);
    /* a workspace sized for another model (another mlp, or a softmax) */
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 2, wo, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, ok_idx, 2, wsm, g,
                                            E, &f), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, &D, ok_idx, 2, wo, g),
                     E_);
    /* batches: nb > max_batch, nb = 0, idx out of range, idx NULL with nb
     * neither 0 nor n, the whole set larger than the workspace */
    ck_assert_int_eq(pflref_model_features(&m, w, &D, ok_idx, 3, ws, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, ok_idx, 0, ws, g,
                                            E, &f), E_);
    ck_assert_int_eq(pflref_model_body_grad(&m, w, A, E, &D, bad_idx, 2, ws,
                                            g), E_);
    ck_assert_int_eq(pflref_model_features(&m, w, &D, NULL, 2, ws, A, Phi),
                     E_);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &D, NULL, 0, ws, g, E,
                                            &f), E_);
    /* data without X */
    pflref_data noX = D;
    noX.X = NULL;
    ck_assert_int_eq(pflref_model_features(&m, w, &noX, ok_idx, 2, ws, A, Phi),
                     E_);
    /* a label that is not a class: head_grad refuses it, features (which
     * reads no label) does not */
    double bad_y[3] = {0, 3, 1};
    pflref_data By = D;
    By.y = bad_y;
    const size_t one[1] = {1};
    ck_assert_int_eq(pflref_model_features(&m, w, &By, one, 1, ws, A, Phi),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_head_grad(&m, w, Phi, &By, one, 1, ws, g, E,
                                            &f), E_);
    pflref_model_workspace_free(ws);
    pflref_model_workspace_free(wsm);
    pflref_model_workspace_free(wl);
    pflref_model_workspace_free(wq);
    pflref_model_workspace_free(wo);
}
END_TEST

/* Regression mlp targets are any finite reals; the cross-entropy mlp wants
 * classes. */
START_TEST(test_validate_mlp_targets)
{
    pflref_model reg = make_mlp(PFLREF_LOSS_HALF_SQUARED, 2, 1, 3,
                                PFLREF_ACT_IDENTITY, 0, 1);
    pflref_model cls = make_mlp(PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 3,
                                PFLREF_ACT_IDENTITY, 0, 1);
    double X[6] = {0.5, 1.5, -1.0, 2.0, 0.25, -0.75};
    double y[3] = {1.5, -3.25, 7.0};
    pflref_data D = {3, X, y, NULL, NULL};
    pflref_error err;
    ck_assert_msg(pflref_data_validate(&reg, &D, "c", &err) == PFLREF_OK,
                  "regression mlp targets 1.5, -3.25, 7 refused: %s",
                  err.message);
    expect_invalid(&cls, &D, "c", PFLREF_EINVAL, "c.y[0]",
                   "cross-entropy mlp label 1.5");
    y[1] = NAN;
    expect_invalid(&reg, &D, "c", PFLREF_EINVAL, "c.y[1]",
                   "regression mlp target NaN");
    /* the compute functions agree: a fractional target is fine for the
     * regression head, refused by the classifier's */
    y[1] = 0.0;
    const double w[13] = {0.1, 0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9,
                          0.05, -0.15, 0.25, 0.35};
    double f;
    pflref_model_workspace *wr = pflref_model_workspace_alloc(&reg, 3);
    pflref_model_workspace *wc = pflref_model_workspace_alloc(&cls, 3);
    ck_assert_int_eq(pflref_model_loss(&reg, w, &D, NULL, 0, wr, &f),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_loss(&cls, w, &D, NULL, 0, wc, &f),
                     PFLREF_EINVAL);
    pflref_model_workspace_free(wr);
    pflref_model_workspace_free(wc);
}
END_TEST

Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("derivatives");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_grad_fd_shapes, 0, NSHAPES);
    tcase_add_loop_test(tc, test_hvp_fd_shapes, 0, NSHAPES);
    tcase_add_loop_test(tc, test_grad_fd_random_shapes, 0, 24);
    tcase_add_loop_test(tc, test_hvp_fd_random_shapes, 0, 24);
    suite_add_tcase(s, tc);

    tc = tcase_create("closed_form");
    tcase_add_loop_test(tc, test_linear_closed_form, 0, 2);
    tcase_add_test(tc, test_softmax_closed_form);
    tcase_add_test(tc, test_softmax_stable);
    tcase_add_test(tc, test_quadratic_closed_form);
    tcase_add_test(tc, test_mlp_relu_prime_zero);
    tcase_add_loop_test(tc, test_batch_is_gathered_rows, 0, 3);
    suite_add_tcase(s, tc);

    tc = tcase_create("evaluate");
    tcase_add_loop_test(tc, test_evaluate_linear, 0, 2);
    tcase_add_test(tc, test_evaluate_accuracy_ties);
    tcase_add_test(tc, test_evaluate_mlp);
    tcase_add_loop_test(tc, test_evaluate_chunked, 0, 3);
    suite_add_tcase(s, tc);

    tc = tcase_create("description");
    tcase_add_test(tc, test_blocks);
    tcase_add_test(tc, test_names);
    tcase_add_loop_test(tc, test_init_errors, 0, NINIT);
    tcase_add_test(tc, test_init_null_model);
    tcase_add_test(tc, test_init_max_params);
    tcase_add_test(tc, test_workspace_alloc);
    tcase_add_test(tc, test_workspace_out_of_memory);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, test_compute_errors);
    tcase_add_test(tc, test_validate_data_models);
    tcase_add_test(tc, test_validate_quadratic);
    suite_add_tcase(s, tc);

    tc = tcase_create("split");
    tcase_add_test(tc, test_split_names);
    tcase_add_test(tc, test_split_errors);
    tcase_add_test(tc, test_blocks_inside);
    tcase_add_test(tc, test_split_mask);
    suite_add_tcase(s, tc);

    tc = tcase_create("mlp_variants");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_mlp_variant_grad_fd, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_mlp_variant_hvp_fd, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_mlp_variant_split, 0, NVARIANTS);
    tcase_add_test(tc, test_mlp_default_split);
    tcase_add_loop_test(tc, test_mlp_scalar_product_closed_form, 0, 2);
    tcase_add_test(tc, test_mlp_linear_body_classifier_closed_form);
    tcase_add_test(tc, test_mlp_blocks);
    tcase_add_test(tc, test_model_predicates);
    tcase_add_loop_test(tc, test_init_mlp_errors, 0, NINIT_MLP);
    tcase_add_test(tc, test_body_head_errors);
    tcase_add_test(tc, test_validate_mlp_targets);
    suite_add_tcase(s, tc);
    return s;
}
