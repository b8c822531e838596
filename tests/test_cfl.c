/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_cfl.c: the similarity and bipartition primitives
 * (ref/engine/cluster.c) and Clustered FL (ref/algorithms/cfl.c).
 *
 * Expected values come from the seed 003_… example (cosines of
 * g = (1,0), (0.8,0.2), (−1,0), (−0.9,−0.1), written here as closed forms
 * 0.8/√0.68, ...), the notes' counterexample (unit vectors at 0°, 120°,
 * 230°, 260°: cos 110° = −0.342020, cos 100° = −0.173648), a brute-force
 * enumeration of all bipartitions, and a literal transcription of
 * Algorithm 1 (sorted flat indices and unions) inside this file.
 */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "engine/cluster.h"

static const double PI = 3.14159265358979323846;
static const double SEED003[8] = {1.0, 0.0, 0.8, 0.2, -1.0, 0.0, -0.9, -0.1};

static void assert_close(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol, "%s: got %.17g, expected %.17g",
                  what, got, want);
}

/* Seed 003: the four similarities the seed prints, and the rest of the
 * matrix in closed form. */
START_TEST(test_similarity_seed003)
{
    /* req: cfl.alg5.l10 */
    double a[16];
    pflref_error err;
    ck_assert_int_eq(pflref_cluster_similarity(SEED003, 2, NULL, 4, a, &err),
                     PFLREF_OK);
    const double tol = 4e-16;
    assert_close(a[0 * 4 + 1], 0.8 / sqrt(0.68), tol, "α12");
    assert_close(a[0 * 4 + 2], -1.0, 0.0, "α13");
    assert_close(a[0 * 4 + 3], -0.9 / sqrt(0.82), tol, "α14");
    assert_close(a[2 * 4 + 3], 0.9 / sqrt(0.82), tol, "α34");
    assert_close(a[1 * 4 + 2], -0.8 / sqrt(0.68), tol, "α23");
    assert_close(a[1 * 4 + 3], -0.74 / (sqrt(0.68) * sqrt(0.82)), tol, "α24");
    /* the seed's three digits: 0.970, −1, −0.994, 0.994 */
    assert_close(a[1], 0.970, 5e-4, "seed α12");
    assert_close(a[3], -0.994, 5e-4, "seed α14");
    assert_close(a[11], 0.994, 5e-4, "seed α34");
    for (int i = 0; i < 4; i++) {
        ck_assert(a[i * 4 + i] == 1.0);
        for (int j = 0; j < 4; j++)
            ck_assert(a[i * 4 + j] == a[j * 4 + i]);
    }
}
END_TEST

/* α_ij = 0 when a norm is 0; α_ii = 1 even for a zero vector; rows
 * selects vectors; huge and tiny entries neither overflow nor lose the
 * cosine; bad input is refused. */
START_TEST(test_similarity_conventions)
{
    const double X[8] = {0.0, 0.0, 2.385, -0.716, 1e300, -3e299, 4e-300,
                         -1.2e-300};
    double a[16];
    pflref_error err;
    ck_assert_int_eq(pflref_cluster_similarity(X, 2, NULL, 4, a, &err),
                     PFLREF_OK);
    ck_assert(a[0] == 1.0 && a[1] == 0.0 && a[2] == 0.0 && a[3] == 0.0);
    ck_assert(a[4] == 0.0);
    /* (1e300, −3e299) and (4e-300, −1.2e-300) are both ∥ (10, −3) */
    assert_close(a[2 * 4 + 3], 1.0, 2e-16, "parallel huge/tiny");
    const double c = (2.385 * 10 - 0.716 * -3) /
                     (sqrt(2.385 * 2.385 + 0.716 * 0.716) * sqrt(109.0));
    assert_close(a[1 * 4 + 2], c, 4e-16, "α(x, huge)");
    const size_t rows[2] = {3, 1};
    double b[4];
    ck_assert_int_eq(pflref_cluster_similarity(X, 2, rows, 2, b, &err),
                     PFLREF_OK);
    ck_assert(b[1] == a[3 * 4 + 1] && b[0] == 1.0 && b[3] == 1.0);
    const double bad[2] = {1.0, NAN};
    ck_assert_int_eq(pflref_cluster_similarity(bad, 2, NULL, 1, b, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "X");
    ck_assert_int_eq(pflref_cluster_similarity(X, 0, NULL, 1, b, &err),
                     PFLREF_EINVAL);
    ck_assert_int_eq(pflref_cluster_similarity(X, 2, NULL, 0, b, &err),
                     PFLREF_EINVAL);
}
END_TEST

/* Random vectors: α symmetric, entries in [−1, 1], unit diagonal. */
START_TEST(test_similarity_properties)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20231);
    double X[12 * 7], a[144];
    pflref_error err;
    for (int inst = 0; inst < 200; inst++) {
        const size_t m = 2 + gsl_rng_uniform_int(r, 11);
        const size_t P = 1 + gsl_rng_uniform_int(r, 7);
        for (size_t q = 0; q < m * P; q++)
            X[q] = gsl_ran_gaussian(r, 1.0);
        /* parallel and anti-parallel copies push α to ±1 */
        for (size_t p = 0; p < P; p++)
            X[P + p] = -3.0 * X[p];
        ck_assert_int_eq(pflref_cluster_similarity(X, P, NULL, m, a, &err),
                         PFLREF_OK);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++) {
                ck_assert(a[i * m + j] == a[j * m + i]);
                ck_assert(a[i * m + j] >= -1.0 && a[i * m + j] <= 1.0);
            }
        for (size_t i = 0; i < m; i++)
            ck_assert(a[i * m + i] == 1.0);
        assert_close(a[1], -1.0, 4e-16, "anti-parallel");
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- bipartition --------------------------------------------------------- */

static void bipartition(const double *alpha, size_t m,
                        pflref_bipartition_method method, unsigned char *side,
                        double *cross)
{
    double work[144];
    size_t iwork[24];
    pflref_error err;
    ck_assert(m <= 12);
    pflref_status st = pflref_cluster_bipartition(alpha, m, method, side,
                                                  cross, work, iwork, &err);
    ck_assert_msg(st == PFLREF_OK, "bipartition: %s", err.message);
}

START_TEST(test_bipartition_seed003)
{
    /* req: cfl.alg1.l7, cfl.alg5.l11 */
    double a[16], cross;
    unsigned char side[4];
    pflref_error err;
    pflref_cluster_similarity(SEED003, 2, NULL, 4, a, &err);
    for (int method = 0; method < 2; method++) {
        bipartition(a, 4, (pflref_bipartition_method)method, side, &cross);
        ck_assert(side[0] == 0 && side[1] == 0 && side[2] == 1 &&
                  side[3] == 1);
        assert_close(cross, -0.8 / sqrt(0.68), 4e-16, "α_max^cross");
    }
}
END_TEST

/* The notes' counterexample: unit vectors at 0°, 120°, 230°, 260°. */
START_TEST(test_bipartition_counterexample)
{
    /* req: cfl.alg1.opt */
    const double deg[4] = {0.0, 120.0, 230.0, 260.0};
    double X[8], a[16], cross;
    unsigned char side[4];
    pflref_error err;
    for (int i = 0; i < 4; i++) {
        X[2 * i] = cos(deg[i] * PI / 180.0);
        X[2 * i + 1] = sin(deg[i] * PI / 180.0);
    }
    pflref_cluster_similarity(X, 2, NULL, 4, a, &err);
    bipartition(a, 4, PFLREF_BIPARTITION_OPTIMAL, side, &cross);
    ck_assert(side[0] == 0 && side[1] == 1 && side[2] == 0 && side[3] == 0);
    assert_close(cross, -0.342020, 5e-7, "optimal α_max^cross");
    bipartition(a, 4, PFLREF_BIPARTITION_COMPLETE_LINKAGE, side, &cross);
    ck_assert(side[0] == 0 && side[1] == 0 && side[2] == 1 && side[3] == 1);
    assert_close(cross, -0.173648, 5e-7, "complete linkage α_max^cross");
}
END_TEST

/* min over all bipartitions (item 0 on side 0) of max cross α. */
static double brute_force(const double *a, size_t m)
{
    double best = INFINITY;
    for (unsigned long mask = 1; mask < (1UL << (m - 1)); mask++) {
        double mx = -INFINITY;
        for (size_t i = 0; i < m; i++)
            for (size_t j = i + 1; j < m; j++) {
                const int si = i > 0 && (mask >> (i - 1)) & 1UL;
                const int sj = (mask >> (j - 1)) & 1UL;
                if (si != sj && a[i * m + j] > mx)
                    mx = a[i * m + j];
            }
        best = mx < best ? mx : best;
    }
    return best;
}

/* Algorithm 1 as written: flat indices sorted by (−α, index), clusters
 * merged by union until two remain. */
static const double *lit_alpha;
static int by_alg1(const void *x, const void *y)
{
    const size_t s = *(const size_t *)x, t = *(const size_t *)y;
    if (lit_alpha[s] != lit_alpha[t])
        return lit_alpha[s] > lit_alpha[t] ? -1 : 1;
    return s < t ? -1 : 1;
}

static void algorithm1_literal(const double *a, size_t m, unsigned char *side)
{
    size_t order[144], label[12];
    for (size_t f = 0; f < m * m; f++)
        order[f] = f;
    lit_alpha = a;
    qsort(order, m * m, sizeof order[0], by_alg1);
    for (size_t i = 0; i < m; i++)
        label[i] = i;
    size_t clusters = m;
    for (size_t f = 0; f < m * m && clusters > 2; f++) {
        const size_t l1 = label[order[f] / m], l2 = label[order[f] % m];
        if (l1 == l2)
            continue;
        for (size_t i = 0; i < m; i++)
            if (label[i] == l2)
                label[i] = l1;
        clusters--;
    }
    for (size_t i = 0; i < m; i++)
        side[i] = (unsigned char)(label[i] != label[0]);
}

/* For random instances with m ≤ 10: the optimal bipartition's α_max^cross
 * is the brute-force minimum, its partition is Algorithm 1's literal one
 * (including instances full of exact ties), and complete linkage is never
 * better. */
START_TEST(test_bipartition_brute_force)
{
    /* req: cfl.alg1.opt, cfl.alg1.l2, cfl.alg1.l6 */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1910);
    double X[10 * 5], a[100], cross, cl_cross;
    unsigned char side[10], lit[10];
    pflref_error err;
    size_t compared = 0, tied = 0, worse = 0;
    for (int inst = 0; inst < 3000; inst++) {
        const size_t m = 2 + gsl_rng_uniform_int(r, 9);
        const size_t P = 2 + gsl_rng_uniform_int(r, 4);
        const int ties = inst % 3 == 0;   /* entries in {−1, 0, 1} */
        for (size_t q = 0; q < m * P; q++)
            X[q] = ties ? (double)gsl_rng_uniform_int(r, 3) - 1.0
                        : gsl_ran_gaussian(r, 1.0);
        pflref_cluster_similarity(X, P, NULL, m, a, &err);
        bipartition(a, m, PFLREF_BIPARTITION_OPTIMAL, side, &cross);
        const double best = brute_force(a, m);
        ck_assert_msg(cross == best, "instance %d (m = %zu): α_max^cross %.17g, "
                      "brute force %.17g", inst, m, cross, best);
        algorithm1_literal(a, m, lit);
        ck_assert_msg(memcmp(side, lit, m) == 0,
                      "instance %d (m = %zu): not Algorithm 1's partition",
                      inst, m);
        int both = 0;
        for (size_t i = 0; i < m; i++)
            both |= 1 << side[i];
        ck_assert_msg(both == 3 && side[0] == 0, "instance %d: a side is empty",
                      inst);
        bipartition(a, m, PFLREF_BIPARTITION_COMPLETE_LINKAGE, side,
                    &cl_cross);
        ck_assert(cl_cross >= best);
        worse += cl_cross > best;
        tied += (size_t)ties;
        compared++;
    }
    printf("cfl: optimal bipartition equals the brute-force minimum on %zu "
           "random instances (m = 2..10; %zu with exact ties; complete "
           "linkage strictly worse on %zu)\n", compared, tied, worse);
    ck_assert_uint_eq(compared, 3000);
    ck_assert_uint_gt(worse, 0);
    gsl_rng_free(r);
}
END_TEST

/* The partition does not depend on the clients' order or on a positive
 * scale of any update (tie-free random instances). */
START_TEST(test_bipartition_invariance)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    double X[9 * 4], Y[9 * 4], a[81], b[81], cross, cross2;
    unsigned char side[9], side2[9];
    size_t perm[9];
    pflref_error err;
    for (int inst = 0; inst < 300; inst++) {
        const size_t m = 2 + gsl_rng_uniform_int(r, 8), P = 4;
        for (size_t q = 0; q < m * P; q++)
            X[q] = gsl_ran_gaussian(r, 1.0);
        pflref_cluster_similarity(X, P, NULL, m, a, &err);
        bipartition(a, m, PFLREF_BIPARTITION_OPTIMAL, side, &cross);
        /* relabel: Y row k = X row perm[k], each scaled by a factor > 0 */
        for (size_t k = 0; k < m; k++)
            perm[k] = k;
        gsl_ran_shuffle(r, perm, m, sizeof perm[0]);
        for (size_t k = 0; k < m; k++) {
            const double scale = exp(gsl_ran_gaussian(r, 3.0));
            for (size_t p = 0; p < P; p++)
                Y[k * P + p] = scale * X[perm[k] * P + p];
        }
        pflref_cluster_similarity(Y, P, NULL, m, b, &err);
        bipartition(b, m, PFLREF_BIPARTITION_OPTIMAL, side2, &cross2);
        for (size_t k = 0; k < m; k++)
            for (size_t l = 0; l < m; l++)
                ck_assert_msg((side2[k] == side2[l]) ==
                                  (side[perm[k]] == side[perm[l]]),
                              "instance %d: the partition changed", inst);
        assert_close(cross2, cross, 1e-15, "α_max^cross after relabelling");
    }
    gsl_rng_free(r);
}
END_TEST

/* All α equal (every update the same): the stable order merges (0,1),
 * then (0,2), ... so the last item stands alone. */
START_TEST(test_bipartition_ties_and_errors)
{
    double a[25], cross;
    unsigned char side[5];
    for (int q = 0; q < 25; q++)
        a[q] = 0.5;
    bipartition(a, 5, PFLREF_BIPARTITION_OPTIMAL, side, &cross);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(side[i], 0);
    ck_assert_uint_eq(side[4], 1);
    bipartition(a, 5, PFLREF_BIPARTITION_COMPLETE_LINKAGE, side, &cross);
    ck_assert_uint_eq(side[4], 1);
    bipartition(a, 2, PFLREF_BIPARTITION_OPTIMAL, side, &cross);
    ck_assert(side[0] == 0 && side[1] == 1 && cross == 0.5);

    pflref_error err;
    size_t iwork[10];
    ck_assert_int_eq(pflref_cluster_bipartition(a, 1,
                                                PFLREF_BIPARTITION_OPTIMAL,
                                                side, &cross, NULL, iwork,
                                                &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    a[1] = NAN;
    ck_assert_int_eq(pflref_cluster_bipartition(a, 5,
                                                PFLREF_BIPARTITION_OPTIMAL,
                                                side, &cross, NULL, iwork,
                                                &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "alpha");
    ck_assert_int_eq(pflref_cluster_bipartition(a, 5,
                                                (pflref_bipartition_method)7,
                                                side, &cross, NULL, iwork,
                                                &err), PFLREF_EINVAL);
}
END_TEST

/* ---- CFL runs ------------------------------------------------------------ */

static const char *const VECTORS[] = {
    "golden/cfl/worked-seed003.json",
    "golden/cfl/worked-seed003-samples.json",
    "golden/cfl/worked-seed003-gamma.json",
    "golden/cfl/worked-counterexample-optimal.json",
    "golden/cfl/worked-counterexample-complete-linkage.json",
    "golden/cfl/worked-nested-split.json",
};

START_TEST(test_worked_vectors)
{
    /* req: cfl.alg5.l8, cfl.alg5.l9, cfl.alg5.l12 */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Seed 003's clients as quadratics in ℝ², a = (1, 1), optima c_i = g_i of
 * SEED003 (plus, when zero_client, a fifth at c = 0); η = 1, ε₁ = 0.4,
 * ε₂ = 0.9, γ_max = 0.5; one round of every client, one full step. */
static tb_case *seed_case(int zero_client)
{
    const size_t N = zero_client ? 5 : 4;
    tb_case *c = tb_quadratic(2, N);
    for (size_t i = 0; i < 4; i++)
        tb_quad(c, i, (const double[]){1, 1}, SEED003 + 2 * i, 1);
    if (zero_client) {
        tb_quad(c, 4, (const double[]){1, 1}, (const double[]){0, 0}, 1);
        tb_round(c, "0 1 2 3 4", "0", "0", "0", "0", "0");
    } else {
        tb_round(c, "0 1 2 3", "0", "0", "0", "0");
    }
    c->hyper.eta = 1.0;
    c->hyper.cfl.eps1 = 0.4;
    c->hyper.cfl.eps2 = 0.9;
    c->hyper.cfl.gamma_max = 0.5;
    return c;
}

/* The partition after the last round, from the NOTE records. */
static void run_partition(tb_case *c, double *labels, size_t N,
                          pflref_run_result **res)
{
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_ROUND);
    pflref_trace tr = {pflref_trajectory_emit, &tj};
    *res = tb_run(c, "cfl", &tr);
    int found = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        if (rc->kind == PFLREF_EV_NOTE && strcmp(rc->name, "partition") == 0) {
            ck_assert_uint_eq(rc->len, N);
            memcpy(labels, tj.values + rc->offset, N * sizeof *labels);
            found = 1;
        }
    }
    ck_assert_msg(found, "no partition record");
    pflref_trajectory_free(&tj);
}

/* The guards: a minimum cluster size of 5 or a warm-up of 1 round keeps
 * seed 003's federation whole; of 4 and 0 they do not. */
START_TEST(test_guards)
{
    const int splits[4] = {0, 0, 1, 0};  /* the notebook's ε₂ = 1.6: no */
    for (int k = 0; k < 4; k++) {
        tb_case *c = seed_case(0);
        if (k == 0)
            c->hyper.cfl.min_cluster_size = 5;
        else if (k == 1)
            c->hyper.cfl.warmup = 1;
        else if (k == 2)
            c->hyper.cfl.min_cluster_size = 4;
        else
            c->hyper.cfl.eps2 = 1.6;
        double labels[4];
        pflref_run_result *res;
        run_partition(c, labels, 4, &res);
        ck_assert_msg((labels[3] == 1.0) == splits[k], "case %d: labels %g %g "
                      "%g %g", k, labels[0], labels[1], labels[2], labels[3]);
        pflref_run_result_free(res);
        tb_free(c);
    }
}
END_TEST

/* A client whose update is zero has α = 0 with everyone: with seed 003's
 * four plus a fifth client at its optimum the split still separates
 * {0,1} from {2,3} and the zero client joins one side; the run is
 * deterministic (two runs agree bit for bit). */
START_TEST(test_zero_update)
{
    /* req: cfl.alg5.l9 */
    tb_case *c = seed_case(1);
    double l1[5], l2[5];
    pflref_run_result *r1, *r2;
    run_partition(c, l1, 5, &r1);
    run_partition(c, l2, 5, &r2);
    ck_assert(l1[0] == l1[1] && l1[2] == l1[3] && l1[0] != l1[2]);
    ck_assert(memcmp(l1, l2, sizeof l1) == 0);
    ck_assert(memcmp(r1->v, r2->v, 5 * 2 * sizeof(double)) == 0);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    tb_free(c);
}
END_TEST

/* Two opposite linear concepts, y = x·w* on clients 0..3 and y = −x·w*
 * on clients 4..7: FedAvg over the federation stalls at a stationary point
 * of the mixture, the mean update falls below ε₁, CFL splits, and the two
 * clusters are the true populations; each cluster then approaches its own
 * concept. */
START_TEST(test_two_populations)
{
    /* req: cfl.alg5.l12, cfl.alg5.l13 */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    const double wstar[2] = {1.25, -2.0};
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 0);
    tb_case *c = tb_new(&m, 8);
    for (size_t i = 0; i < 8; i++) {
        const double sign = i < 4 ? 1.0 : -1.0;
        double X[12 * 2], y[12];
        for (int j = 0; j < 12; j++) {
            X[2 * j] = gsl_ran_gaussian(r, 1.0);
            X[2 * j + 1] = gsl_ran_gaussian(r, 1.0);
            y[j] = sign * (X[2 * j] * wstar[0] + X[2 * j + 1] * wstar[1]);
        }
        tb_train(c, i, 12, X, y);
    }
    c->hyper.eta = 0.1;
    c->hyper.cfl.eps1 = 0.02;
    c->hyper.cfl.eps2 = 0.1;
    c->hyper.cfl.gamma_max = 0.5;
    tb_generate(c, 40, 2, 0);
    double labels[8];
    pflref_run_result *res;
    run_partition(c, labels, 8, &res);
    for (int i = 0; i < 8; i++)
        ck_assert_msg(labels[i] == (i < 4 ? 0.0 : 1.0),
                      "client %d in cluster %g", i, labels[i]);
    for (int i = 0; i < 8; i++) {
        const double sign = i < 4 ? 1.0 : -1.0;
        const double *v = res->v + 2 * i;
        ck_assert_msg(hypot(v[0] - sign * wstar[0], v[1] - sign * wstar[1]) <
                          0.05, "client %d: v = (%g, %g)", i, v[0], v[1]);
    }
    pflref_run_result_free(res);
    tb_free(c);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_errors)
{
    pflref_error err;
    /* CFL trains every client every round */
    tb_case *c = tb_quadratic(2, 4);
    for (size_t i = 0; i < 4; i++)
        tb_quad(c, i, (const double[]){1, 1}, SEED003 + 2 * i, 1);
    tb_round(c, "0 1 3", "0", "0", "0");
    c->hyper.eta = 1.0;
    c->hyper.cfl.eps1 = 0.4;
    c->hyper.cfl.eps2 = 0.9;
    c->hyper.cfl.gamma_max = 0.5;
    tb_run_error(c, "cfl", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients");
    tb_free(c);
    /* γ_max ∈ [0, 1) */
    c = seed_case(0);
    c->hyper.cfl.gamma_max = 1.0;
    tb_run_error(c, "cfl", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.gamma_max");
    tb_free(c);
    /* ε₁ is required */
    c = seed_case(0);
    c->hyper.cfl.eps1 = NAN;
    tb_run_error(c, "cfl", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.hyperparameters.eps1");
    tb_free(c);
    /* a bipartition outside the switch's values is refused before the run
     * (the spec reader's refusal of an unknown name: tests/test_spec.c) */
    c = seed_case(0);
    c->hyper.cfl.bipartition = 2;
    tb_run_error(c, "cfl", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.cfl.bipartition");
    tb_free(c);
}
END_TEST

/* `pflref run --trace` on the seed 003 vector prints the four similarities
 * and the two clusters. */
START_TEST(test_cli_trace)
{
    char *dir = tu_tmpdir(), *vec = tu_repo_path("golden/cfl/worked-seed003.json");
    char args[4096];
    snprintf(args, sizeof args, "run --trace '%s' -o '%s/r.json'", vec, dir);
    char *out = NULL, *errout = NULL;
    const int rc = tu_cli(args, &out, &errout);
    ck_assert_msg(rc == 0, "pflref %s: exit %d: %s", args, rc, errout);
    /* every double printed in full (pflref/dtoa.h) */
    const char *want[] = {
        "similarity = [1.0, 0.9701425001453318, -1.0, -0.9938837346736189]",
        "similarity = [-1.0, -0.9701425001453318, 1.0, 0.9938837346736189]",
        "c1 = [0.0, 1.0]", "c2 = [2.0, 3.0]",
        "alpha_cross = [-0.9701425001453318]",
        "partition = [0.0, 0.0, 1.0, 1.0]",
        /* Algorithm 1's lines 2–6 on those rows, recomputed for the trace
         * (ref/engine/trace_cluster.c): the diagonal's 1s first (positions
         * 0, 5, 10, 15), then α_23 = α_32 ≈ 0.99388 (11, 14), then
         * α_01 = α_10 ≈ 0.97014 (1, 4); t = 5 joins clients 2 and 3,
         * t = 6 changes nothing, t = 7 joins 0 and 1: two clusters */
        "(client 0) s = [0.0, 5.0, 10.0, 15.0, 11.0, 14.0, … (16 entries)]",
        "(client 0) C = [0.0, 1.0, 2.0, 3.0]",
        "(client 0) pair = [5.0, 2.0, 3.0]",
        "(client 0) C = [0.0, 1.0, 2.0, 2.0]",
        "(client 0) pair = [7.0, 0.0, 1.0]",
        "(client 0) C = [0.0, 0.0, 2.0, 2.0]"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        ck_assert_msg(strstr(errout, want[k]) != NULL,
                      "the trace lacks \"%s\":\n%s", want[k], errout);
    /* ... and no more: the loop stops at two clusters (l. 7), and a
     * cluster of two starts there (the later rounds' tests) */
    size_t pairs = 0;
    for (const char *at = strstr(errout, "pair = ["); at != NULL;
         at = strstr(at + 1, "pair = ["))
        pairs++;
    ck_assert_uint_eq(pairs, 2);
    /* the trace's intermediates are printed, not recorded: the result is
     * the one the run without --trace writes */
    free(out);
    free(errout);
    snprintf(args, sizeof args, "run '%s' -o '%s/plain.json'", vec, dir);
    ck_assert_int_eq(tu_cli(args, &out, &errout), 0);
    char *p1 = tu_join(dir, "r.json"), *p2 = tu_join(dir, "plain.json");
    char *r1 = tu_read(p1), *r2 = tu_read(p2);
    ck_assert_ptr_nonnull(r1);
    ck_assert_ptr_nonnull(r2);
    ck_assert_str_eq(r1, r2);
    free(r1);
    free(r2);
    free(p1);
    free(p2);
    free(out);
    free(errout);
    free(vec);
    free(dir);
}
END_TEST

Suite *cfl_suite(void)
{
    Suite *s = suite_create("cfl");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_similarity_seed003);
    tcase_add_test(tc, test_similarity_conventions);
    tcase_add_test(tc, test_similarity_properties);
    tcase_add_test(tc, test_bipartition_seed003);
    tcase_add_test(tc, test_bipartition_counterexample);
    tcase_add_test(tc, test_bipartition_brute_force);
    tcase_add_test(tc, test_bipartition_invariance);
    tcase_add_test(tc, test_bipartition_ties_and_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("cfl");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_worked_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_test(tc, test_guards);
    tcase_add_test(tc, test_zero_update);
    tcase_add_test(tc, test_two_populations);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_cli_trace);
    suite_add_tcase(s, tc);
    return s;
}
