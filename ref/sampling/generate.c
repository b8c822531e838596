/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/sampling/generate.c: the documented problem generators "tilt" and
 * "dirichlet", which draw a federated problem with GSL's mt19937.
 *
 * Sources:
 *   tilt       seed 000, Code 14.7.1: "Clients share a large COMMON backbone
 *              and add a small per-client tilt -> mildly non-IID"
 *              (numpy default_rng(7) there; GSL here, so the numbers differ;
 *              the seed's own data is golden/seed000/problem.json)
 *   dirichlet  seed 001, compare_strategies(): per-client label
 *              distributions p_i ~ Dirichlet(α·1_k), n_i ~ U{50..199},
 *              features N(0,1) shifted by 2.0 at index label mod d
 * Both implement pflref/problem.h; docs/generators.md gives the draw order
 * with the defaults.
 *
 * tilt, per client k = 0..K−1 (symbols of Code 14.7.1):
 *   common_j  = common_sd · N(0,1)                        j = 0..d−1
 *   offset_k  = ±tilt · e_{k mod d}   (+ for k even, − for k odd)
 *   w_k       = common + offset_k
 *   y         = X w_k + noise_sd · N(0,1),  X_ij ~ N(0,1)
 * dirichlet, per client i = 0..K−1:
 *   p_i ~ Dirichlet(α·1_k);  n_i = n_min + U{0 .. n_max − n_min − 1}
 *   per sample: label ~ p_i;  x ~ N(0, I_d);  x[label mod d] += shift
 *
 * Symbols:  K ↔ cfg->K   d ↔ m->d   k ↔ m->k (classes)
 *           common ↔ common (d)   w_k ↔ w (d)   p_i ↔ prob + i·k (k)
 *           X ↔ D->X (n × d row-major)   y ↔ D->y (n)
 *
 * Deviations from the seeds, each forced by the header's contract:
 *   a) the draws come from GSL (mt19937, gsl_ran_gaussian's polar
 *      Box–Muller, gsl_ran_dirichlet, gsl_rng_uniform_int,
 *      gsl_ran_discrete), not numpy, so no number matches the seeds' runs;
 *   b) dirichlet draws each sample's label and then its features, one
 *      sample at a time (the seed draws all labels, then all features);
 *      the seed has no test split, n_test samples per client are added
 *      after the train samples, from the same p_i;
 *   c) scaling follows the header's formula literally: common_sd · z and
 *      noise_sd · z with z = gsl_ran_gaussian(r, 1.0), not
 *      gsl_ran_gaussian(r, sd) (which rounds sd·y·√(…) in another order).
 *
 * Determinism: one generator, seeded once; the draws follow the order above
 * exactly, so a seed fixes every bit of the problem.  X w_k is a plain loop
 * over j = 0..d−1 (not BLAS), so the generated y is the same on every
 * machine.  Seeds are 1 .. 2³²−1: gsl_rng_set maps 0 to mt19937's default
 * seed 4357 and keeps only the low 32 bits, so any other value would alias
 * a seed in that range.
 * Cost: O(K (n_train + n_test) d) draws and flops (tilt);
 * O(K k + Σ_i (n_i + n_test)(d + 1)) draws (dirichlet).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "pflref/problem.h"
#include "core/args.h"

/* Largest seed that mt19937 keeps whole (its state is seeded with 32 bits). */
#define SEED_MAX 0xffffffffUL

/* Seeds 1 .. 2³²−1 (see the file header). */
static pflref_status check_seed(unsigned long seed, pflref_error *err)
{
    if (seed < 1 || seed > SEED_MAX)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.seed",
                                "seed = %lu must lie in 1 .. 4294967295 "
                                "(mt19937 maps 0 to 4357 and keeps 32 bits)",
                                seed);
    return PFLREF_OK;
}

/* A finite value ≥ 0 (a standard deviation or a size). */
static pflref_status check_nonneg(double v, const char *where,
                                  pflref_error *err)
{
    if (!isfinite(v) || v < 0.0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s = %g must be finite and >= 0", where, v);
    return PFLREF_OK;
}

/* A pflref_client, in doubles (rounded up): a million clients of one
 * sample each cost their records, not only their data. */
#define CLIENT_DOUBLES \
    ((sizeof(pflref_client) + sizeof(double) - 1) / sizeof(double))

/* Refuse a problem whose data would exceed the machine's memory
 * (pflref_data_limit_bytes, counted in doubles), before
 * anything is allocated: per client n_train rows plus n_test rows of d + 1
 * doubles (x and y) plus `extra` doubles of generator work plus the client
 * record itself (CLIENT_DOUBLES), times K.
 * The field that makes the size absurd is named in `where`. */
static pflref_status check_size(size_t K, size_t n_train, size_t n_test,
                                size_t d, size_t extra,
                                const char *train_field, pflref_error *err)
{
    const size_t limit = pflref_data_limit_bytes() / sizeof(double);
    const size_t row = d + 1;
    extra += CLIENT_DOUBLES;
    if (d >= limit || n_train > limit / row)
        return pflref_error_set(err, PFLREF_ENOMEM, train_field,
                                "%zu train samples of %zu features exceed "
                                "this machine's memory (%zu doubles)",
                                n_train, d, limit);
    if (n_test > limit / row)
        return pflref_error_set(err, PFLREF_ENOMEM, "generator.n_test",
                                "%zu test samples of %zu features exceed "
                                "this machine's memory (%zu doubles)",
                                n_test, d, limit);
    /* each term ≤ limit, so the sum cannot overflow a 64-bit size_t;
     * on 32-bit the check below still bounds it */
    const size_t per_client = n_train * row + n_test * row;
    if (per_client > limit || extra > limit - per_client ||
        K > limit / (per_client + extra))
        return pflref_error_set(err, PFLREF_ENOMEM, "generator.K",
                                "K = %zu clients of %zu + %zu samples with "
                                "%zu features exceed this machine's memory "
                                "(%zu doubles)", K, n_train, n_test, d, limit);
    return PFLREF_OK;
}

/* Name the allocation that failed. */
static pflref_status out_of_memory(pflref_error *err, const char *what)
{
    return pflref_error_set(err, PFLREF_ENOMEM, "generator",
                            "could not allocate %s", what);
}

/* What a generator allocates before its first draw. */
typedef struct {
    gsl_rng *r;          /* mt19937, seeded once                           */
    double *buf;         /* tilt: common, w_k (d each); dirichlet: α·1_k,
                            then p_i for every client (k each)            */
    pflref_problem *p;   /* the problem being drawn                        */
} gen_work;

/* The generator, nbuf doubles of work and a problem of K clients for m. */
static pflref_status gen_work_alloc(gen_work *g, const pflref_model *m,
                                    size_t K, size_t nbuf, pflref_error *err)
{
    g->r = gsl_rng_alloc(gsl_rng_mt19937);
    g->buf = malloc(nbuf * sizeof *g->buf);
    g->p = pflref_problem_alloc(m, K);
    if (g->r == NULL || g->buf == NULL || g->p == NULL)
        return out_of_memory(err, "the generator's workspace");
    return PFLREF_OK;
}

/* Hand the problem to *out when st is PFLREF_OK, free everything else;
 * returns st. */
static pflref_status gen_work_finish(gen_work *g, pflref_status st,
                                     pflref_problem **out)
{
    if (st == PFLREF_OK) {
        *out = g->p;
        g->p = NULL;
    }
    pflref_problem_free(g->p);
    free(g->buf);
    if (g->r != NULL)
        gsl_rng_free(g->r);
    return st;
}

/* Client C's train data (n_train samples) and, when n_test > 0, its test
 * data. */
static pflref_status alloc_client(pflref_client *C, const pflref_model *m,
                                  size_t n_train, size_t n_test,
                                  pflref_error *err)
{
    pflref_status st = pflref_data_alloc(&C->train, m, n_train, err);
    if (st == PFLREF_OK && n_test > 0)
        st = pflref_data_alloc(&C->test, m, n_test, err);
    return st;
}

/* The tests both generators open with: out, the configuration, m. */
static pflref_status check_start(const void *cfg, const pflref_model *m,
                                 pflref_problem **out, pflref_error *err)
{
    pflref_status st = pflref_arg_nonnull(err, "out", out);
    if (st != PFLREF_OK)
        return st;
    *out = NULL;
    if (cfg == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "generator",
                                "the generator configuration is NULL");
    return pflref_arg_nonnull(err, "m", m);
}

/* Tilt, one data set of client k: X (n × d) row by row, then n noises.
 *   w     [in]  w_k (d)
 *   D     [out] X and y filled (allocated for n = D->n samples)       */
static void tilt_draw_data(gsl_rng *r, const double *w, size_t d,
                           double noise_sd, pflref_data *D)
{
    const size_t n = D->n;
    /* X_ij ~ N(0,1), row-major, i = 0..n−1, j = 0..d−1 */
    for (size_t i = 0; i < n * d; i++)
        D->X[i] = gsl_ran_gaussian(r, 1.0);
    /* y_i = x_i · w_k + noise_sd · N(0,1), the dot product in j order */
    for (size_t i = 0; i < n; i++) {
        const double *x = D->X + i * d;
        double dot = 0.0;
        for (size_t j = 0; j < d; j++)
            dot += x[j] * w[j];
        D->y[i] = dot + noise_sd * gsl_ran_gaussian(r, 1.0);
    }
}

/* w_k := common + offset_k, offset_k = ±tilt e_{k mod d}. */
static void tilt_client_w(const double *common, size_t d, size_t k,
                          double tilt, double *w)
{
    for (size_t j = 0; j < d; j++)
        w[j] = common[j];
    /* offset[k % d] = tilt · (1 if k even else −1)   (Code 14.7.1) */
    w[k % d] += (k % 2 == 0) ? tilt : -tilt;
}

/* Test the tilt configuration against m. */
static pflref_status check_tilt(const pflref_gen_tilt *cfg,
                                const pflref_model *m, pflref_error *err)
{
    pflref_status st;
    if (m->kind != PFLREF_MODEL_LINEAR)
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "the tilt generator needs a linear model, "
                                "not %s", pflref_model_kind_name(m->kind));
    if (m->bias != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "model.bias",
                                "the tilt generator needs a linear model "
                                "without bias (y = X w_k + noise)");
    if (m->d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "model.d",
                                "the model dimension d must be >= 1");
    if (cfg->K < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.K",
                                "K = 0: at least one client is needed");
    if (cfg->n_train < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.n_train",
                                "n_train = 0: every client needs training "
                                "data");
    if ((st = check_nonneg(cfg->common_sd, "generator.common_sd", err)) ||
        (st = check_nonneg(cfg->tilt, "generator.tilt", err)) ||
        (st = check_nonneg(cfg->noise_sd, "generator.noise_sd", err)) ||
        (st = check_seed(cfg->seed, err)))
        return st;
    return check_size(cfg->K, cfg->n_train, cfg->n_test, m->d, 0,
                      "generator.n_train", err);
}

/* The draws of tilt, in the documented order, into g's problem. */
static void draw_tilt(const pflref_gen_tilt *cfg, size_t d, gen_work *g)
{
    const size_t K = cfg->K;
    double *common = g->buf, *w = g->buf + d;
    gsl_rng_set(g->r, cfg->seed);
    /* common_j = common_sd · N(0,1), j = 0..d−1 */
    for (size_t j = 0; j < d; j++)
        common[j] = cfg->common_sd * gsl_ran_gaussian(g->r, 1.0);
    /* train = [make(k, n_train) for k in range(K)] */
    for (size_t k = 0; k < K; k++) {
        tilt_client_w(common, d, k, cfg->tilt, w);
        tilt_draw_data(g->r, w, d, cfg->noise_sd, &g->p->clients[k].train);
    }
    /* test = [make(k, n_test) for k in range(K)] */
    for (size_t k = 0; k < K && cfg->n_test > 0; k++) {
        tilt_client_w(common, d, k, cfg->tilt, w);
        tilt_draw_data(g->r, w, d, cfg->noise_sd, &g->p->clients[k].test);
    }
}

pflref_status pflref_generate_tilt(const pflref_gen_tilt *cfg,
                                   const pflref_model *m,
                                   pflref_problem **out, pflref_error *err)
{
    /* Test the input parameters. */
    pflref_status st;
    if ((st = check_start(cfg, m, out, err)) ||
        (st = check_tilt(cfg, m, err)))
        return st;

    /* Allocate everything before the first draw, then draw. */
    gen_work g;
    st = gen_work_alloc(&g, m, cfg->K, 2 * m->d, err);
    for (size_t k = 0; st == PFLREF_OK && k < cfg->K; k++)
        st = alloc_client(&g.p->clients[k], m, cfg->n_train, cfg->n_test,
                          err);
    if (st == PFLREF_OK)
        draw_tilt(cfg, m->d, &g);
    return gen_work_finish(&g, st, out);
}

/* Dirichlet, n = D->n samples one by one, each: label ~ p_i (one
 * gsl_ran_discrete draw), d features N(0,1), then x[label mod d] += shift.
 *   table [in]  the alias table of p_i
 *   D     [out] X (n × d) and y (labels 0..k−1 as doubles)               */
static void dirichlet_draw_data(gsl_rng *r, const gsl_ran_discrete_t *table,
                                size_t d, double shift, pflref_data *D)
{
    for (size_t s = 0; s < D->n; s++) {
        double *x = D->X + s * d;
        const size_t label = gsl_ran_discrete(r, table);
        for (size_t j = 0; j < d; j++)
            x[j] = gsl_ran_gaussian(r, 1.0);
        x[label % d] += shift;
        D->y[s] = (double)label;
    }
}

/* Test the dirichlet configuration against m. */
static pflref_status check_dirichlet(const pflref_gen_dirichlet *cfg,
                                     const pflref_model *m, pflref_error *err)
{
    pflref_status st;
    if (!pflref_model_is_classifier(m))
        return pflref_error_set(err, PFLREF_EINVAL, "model.kind",
                                "the dirichlet generator needs a classifier "
                                "(softmax, or mlp with cross_entropy), not "
                                "%s with %s", pflref_model_kind_name(m->kind),
                                pflref_loss_name(m->loss));
    if (m->d < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "model.d",
                                "the input dimension d must be >= 1");
    if (m->k < 2)
        return pflref_error_set(err, PFLREF_EINVAL, "model.k",
                                "k = %zu: a classifier needs k >= 2 classes",
                                m->k);
    if (cfg->K < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.K",
                                "K = 0: at least one client is needed");
    if (!isfinite(cfg->alpha) || !(cfg->alpha > 0.0))
        return pflref_error_set(err, PFLREF_EINVAL, "generator.alpha",
                                "alpha = %g must be finite and > 0",
                                cfg->alpha);
    if (cfg->n_min < 1)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.n_min",
                                "n_min = 0: every client needs training "
                                "data");
    if (cfg->n_max <= cfg->n_min)
        return pflref_error_set(err, PFLREF_EINVAL, "generator.n_max",
                                "n_max = %zu must exceed n_min = %zu "
                                "(n_i is drawn in [n_min, n_max))",
                                cfg->n_max, cfg->n_min);
    if (!isfinite(cfg->shift))
        return pflref_error_set(err, PFLREF_EINVAL, "generator.shift",
                                "shift = %g is not finite", cfg->shift);
    if ((st = check_seed(cfg->seed, err)))
        return st;
    /* the largest n_i is n_max − 1; each client also holds its p_i (k) */
    return check_size(cfg->K, cfg->n_max - 1, cfg->n_test, m->d, m->k,
                      "generator.n_max", err);
}

/* Client C of dirichlet, after the p_i: n_i, its data, its label sampler,
 * then the n_i train samples and the n_test test samples. */
static pflref_status dirichlet_client(const pflref_gen_dirichlet *cfg,
                                      const pflref_model *m, gsl_rng *r,
                                      const double *p_i, pflref_client *C,
                                      pflref_error *err)
{
    /* n_i = n_min + U{0 .. n_max − n_min − 1} */
    const size_t n_i =
        cfg->n_min + (size_t)gsl_rng_uniform_int(r, cfg->n_max - cfg->n_min);
    pflref_status st = alloc_client(C, m, n_i, cfg->n_test, err);
    if (st != PFLREF_OK)
        return st;
    gsl_ran_discrete_t *table = gsl_ran_discrete_preproc(m->k, p_i);
    if (table == NULL)
        return out_of_memory(err, "the label sampler's table");
    /* the n_i train samples, then the n_test test samples */
    dirichlet_draw_data(r, table, m->d, cfg->shift, &C->train);
    if (cfg->n_test > 0)
        dirichlet_draw_data(r, table, m->d, cfg->shift, &C->test);
    gsl_ran_discrete_free(table);
    return PFLREF_OK;
}

pflref_status pflref_generate_dirichlet(const pflref_gen_dirichlet *cfg,
                                        const pflref_model *m,
                                        pflref_problem **out,
                                        pflref_error *err)
{
    /* Test the input parameters. */
    pflref_status st;
    if ((st = check_start(cfg, m, out, err)) ||
        (st = check_dirichlet(cfg, m, err)))
        return st;
    const size_t K = cfg->K, k = m->k;

    /* Allocate the workspace: α·1_k, then p_i for every client. */
    gen_work g;
    st = gen_work_alloc(&g, m, K, k + K * k, err);
    if (st != PFLREF_OK)
        return gen_work_finish(&g, st, out);
    double *alpha = g.buf, *prob = g.buf + k;
    for (size_t c = 0; c < k; c++)
        alpha[c] = cfg->alpha;

    gsl_rng_set(g.r, cfg->seed);
    /* p_i ~ Dirichlet(α·1_k), i = 0..K−1 */
    for (size_t i = 0; i < K; i++)
        gsl_ran_dirichlet(g.r, k, alpha, prob + i * k);
    for (size_t i = 0; st == PFLREF_OK && i < K; i++)
        st = dirichlet_client(cfg, m, g.r, prob + i * k, &g.p->clients[i],
                              err);
    return gen_work_finish(&g, st, out);
}
