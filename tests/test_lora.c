/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_lora.c: low-rank adapters (ref/models/adapter.c) and the lora
 * algorithm (ref/algorithms/lora.c: personal, ffa, fedavg, hetlora).
 *
 * Properties (shared/spec notes-lora-pfedhn.md §1-3):
 *   - the adapter gradient ∂A = s Bᵀ G, ∂B = s G Aᵀ against central finite
 *     differences of the merged model's loss, on linear, softmax and mlp;
 *   - a rank-r adapter with B = 0 starts at W₀ (the merged model is W₀ and
 *     the first step moves only B);
 *   - HetLoRA's ranks never grow, and pruned tails stay exactly 0;
 *   - FFA-LoRA's average of B equals the average of the products: the
 *     global s B A is Σ p_k s B_k A, and A never moves;
 *   - personal adapters: no server step, each client's model only its own;
 *   - bad input (rank 0, rank > min(k, d), a wrong adapter length, α ≤ 0,
 *     γ ≥ 1, ranks outside [r_min, r], data for another algorithm) exits 2
 *     naming the field, with no result written.
 * Golden numbers come from golden/lora/make_worked.py (exact fractions).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "models/adapter.h"

static const char *const VECTORS[] = {
    "golden/lora/worked-hand-lora.json",
    "golden/lora/worked-hand-ffa.json",
    "golden/lora/worked-hand-fedavg.json",
    "golden/lora/worked-hand-hetlora.json",
    "golden/lora/worked-hand-hetlora-prune.json",
    "golden/lora/worked-mlp-personal.json",
    "golden/lora/worked-mlp-personal-all.json",
    "golden/lora/worked-linear-ffa.json",
    "golden/lora/worked-mlp-ffa.json",
    "golden/lora/worked-mlp-ffa-uniform.json",
    "golden/lora/worked-mlp-fedavg.json",
    "golden/lora/worked-mlp-fedavg-head.json",
    "golden/lora/worked-mlp-hetlora.json",
    "golden/lora/worked-mlp-hetlora-uniform.json",
    "golden/lora/worked-mlp-hetlora-samples.json",
    "golden/lora/worked-mlp-hetlora-keep.json",
    "golden/lora/worked-mlp-hetlora-zero.json",
    "golden/lora/worked-softmax-ffa.json",
    "golden/lora/worked-softmax-hetlora-head.json",
    "golden/lora/worked-layers-mlp-fedavg.json",
    "golden/lora/worked-layers-cnn-ffa.json",
    "golden/lora/worked-layers-cnn-hetlora.json",
    "golden/lora/worked-layers-mlp-adam.json",
    "golden/lora/worked-layers-mlp-sgd-server.json",
    "golden/lora/bn-fedavg-bn1d.json",
    "golden/lora/bn-personal-bn1d-biased.json",
};

START_TEST(test_vectors)
{
    /* req: lora.eq3, lora.grad, ffalora.freeze_a, ffalora.avg,
     * hetlora.trunc, hetlora.eq3, hetlora.prune, hetlora.weights,
     * hetlora.pad */
    tu_assert_golden(VECTORS[_i]);
}
END_TEST

/* Batch normalisation under the frozen base: fc1 (1 → 1, weight 1, no
 * adapter) feeds bn1 (ρ = ½, r_μ = 0, r_v = 1 at init), so the batch
 * statistics are the data's: client 0's batch {x = 1, 3} has mean 2,
 * unbiased variance 2.  Two steps on it (bn.running = update):
 *   r_μ = ½·0 + ½·2 = 1, then ½·1 + ½·2 = 1.5
 *   r_v = ½·1 + ½·2 = 1.5, then ½·1.5 + ½·2 = 1.75
 * in client 0's v_0 only; client 1 (idle) and the global w keep init's
 * (0, 1); under bn.running = frozen v_0 keeps them too. */
START_TEST(test_bn_running_local)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"layers\", "
        "\"input\": [1], \"loss\": \"squared\", \"layers\": [{\"type\": "
        "\"dense\", \"name\": \"fc1\", \"out\": 1, \"bias\": false}, "
        "{\"type\": \"batchnorm1d\", \"name\": \"bn1\", \"eps\": 0.25, "
        "\"momentum\": 0.5}, {\"type\": \"dense\", \"name\": \"fc2\", "
        "\"out\": 1}]}, \"problem\": {\"clients\": [{\"X\": [[1], [3]], "
        "\"y\": [1, 2]}, {\"X\": [[2], [5]], \"y\": [0, 1]}]}, \"init\": "
        "{\"kind\": \"given\", \"w\": [1, 1, 0, 0, 1, 0.5, 0.25], "
        "\"lora\": [0.5, 0.25], \"lora_targets\": [\"fc2\"]}, "
        "\"algorithm\": {\"name\": \"lora\", \"hyperparameters\": "
        "{\"eta\": 0.125, \"lora.r\": 1, \"lora.alpha\": 1}, "
        "\"switches\": {%s}}, \"schedule\": {\"kind\": \"given\", "
        "\"rounds\": [{\"clients\": [0], \"batches\": [[[0, 1], [1, "
        "0]]]}]}}";
    enum { P = 7, R_MU = 3, R_V = 4 };
    static const struct {
        const char *sw;
        double mu0, v0;
    } cases[] = {
        {"", 1.5, 1.75},
        {"\"lora.method\": \"fedavg\"", 1.5, 1.75},
        {"\"bn.running\": \"frozen\"", 0.0, 1.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[2048];
        snprintf(text, sizeof text, fmt, cases[k].sw);
        pflref_spec *spec = tu_spec(text);
        pflref_run_result *r = tu_run(spec, NULL);
        pflref_spec_free(spec);
        ck_assert_msg(r->v[R_MU] == cases[k].mu0 && r->v[R_V] == cases[k].v0,
                      "case %zu: v_0's r_μ = %.17g, r_v = %.17g", k,
                      r->v[R_MU], r->v[R_V]);
        ck_assert(r->v[P + R_MU] == 0.0 && r->v[P + R_V] == 1.0);
        ck_assert(r->w[R_MU] == 0.0 && r->w[R_V] == 1.0);
        pflref_run_result_free(r);
    }
}
END_TEST

/* A pseudo-random value in [−1, 1) from an index (no RNG state). */
static double val(size_t j, size_t seed)
{
    return (double)((j * 37 + seed * 11 + 5) % 23) / 11.5 - 1.0;
}

/* The loss of the merged model W₀ + s B A on client 0's data. */
static double merged_loss(const pflref_model *m, const pflref_lora_layout *L,
                          const double *w0, const double *q, double s,
                          const pflref_data *D, pflref_model_workspace *ws,
                          double *theta)
{
    double loss;
    pflref_lora_merge(L, m, w0, q, L->r, s, theta);
    ck_assert_int_eq(pflref_model_loss(m, theta, D, NULL, D->n, ws, &loss),
                     PFLREF_OK);
    return loss;
}

/* A layer list: conv2d(1 → 2, κ = 3) on a 1 × 4 × 4 image, tanh,
 * flatten, dense(8 → 2), tanh, dense(2 → 1), squared loss (smooth, so
 * central differences hold everywhere). */
static pflref_model cnn_model(void)
{
    pflref_layer ls[6] = {
        {.kind = PFLREF_LAYER_CONV2D, .name = "conv", .out = 2, .kernel = 3,
         .bias = 1},
        {.kind = PFLREF_LAYER_TANH},
        {.kind = PFLREF_LAYER_FLATTEN},
        {.kind = PFLREF_LAYER_DENSE, .name = "fc", .out = 2, .bias = 1},
        {.kind = PFLREF_LAYER_TANH},
        {.kind = PFLREF_LAYER_DENSE, .name = "out", .out = 1, .bias = 1},
    };
    const size_t input[3] = {1, 4, 4};
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init_layers(&m, PFLREF_LOSS_SQUARED, input,
                                              3, ls, 6, &err), PFLREF_OK);
    return m;
}

/* ∂A = s Bᵀ G, ∂B = s G Aᵀ against central differences (h = 1e-6) of the
 * merged loss, on linear, softmax, mlp (all targets / input) and a layer
 * list whose conv2d weight is adapted as the matrix O × (C·κ·κ). */
START_TEST(test_grad_fd)
{
    /* req: lora.grad */
    size_t d = 3;
    const size_t n = 4;
    pflref_model m;
    size_t r = 1;
    int which = PFLREF_LORA_TARGETS_ALL;
    switch (_i) {
    case 0:
        m = tb_model(PFLREF_MODEL_LINEAR, PFLREF_LOSS_SQUARED, d, 1, 0, 1);
        break;
    case 1:
        m = tb_model(PFLREF_MODEL_SOFTMAX, PFLREF_LOSS_CROSS_ENTROPY, d, 3, 0,
                     1);
        r = 2;
        break;
    case 2:
        m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, d, 2, 3, PFLREF_ACT_RELU, 1, 1);
        r = 2;
        break;
    case 3:
        m = tb_mlp(PFLREF_LOSS_HALF_SQUARED, d, 1, 3, PFLREF_ACT_RELU, 1, 1);
        r = 3;
        which = PFLREF_LORA_TARGETS_INPUT;
        break;
    default:   /* conv 2 × 9, fc 2 × 8, out 1 × 2: rank 2 on conv, fc */
        m = cnn_model();
        d = 16;
        r = 2;
        break;
    }
    pflref_lora_layout L;
    pflref_error err;
    static const char *const conv_fc[] = {"fc", "conv.weight"};
    ck_assert_int_eq(pflref_lora_layout_named(&L, &m, r, which,
                                              m.kind == PFLREF_MODEL_LAYERS
                                                  ? conv_fc : NULL,
                                              m.kind == PFLREF_MODEL_LAYERS
                                                  ? 2 : 0, &err),
                     PFLREF_OK);
    double X[64], y[4];
    for (size_t j = 0; j < n * d; j++)
        X[j] = val(j, 1);
    for (size_t j = 0; j < n; j++)
        y[j] = m.kind == PFLREF_MODEL_SOFTMAX || m.loss ==
                   PFLREF_LOSS_CROSS_ENTROPY ? (double)(j % m.k)
                                             : val(j, 2);
    pflref_data D = {.n = n, .X = X, .y = y};
    double *w0 = malloc(m.P * sizeof *w0), *theta = malloc(m.P * sizeof *w0);
    double *g = malloc(m.P * sizeof *g), *q = malloc(L.Q * sizeof *q);
    double *gq = malloc(L.Q * sizeof *gq);
    for (size_t p = 0; p < m.P; p++)
        w0[p] = 0.5 * val(p, 3);
    for (size_t p = 0; p < L.Q; p++)
        q[p] = val(p, 4);
    const double s = 1.75 / (double)r;
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, n);
    pflref_lora_merge(&L, &m, w0, q, r, s, theta);
    ck_assert_int_eq(pflref_model_grad(&m, theta, &D, NULL, n, ws, g, NULL),
                     PFLREF_OK);
    pflref_lora_grad(&L, &m, q, r, s, g, gq);
    const double h = 1e-6;
    for (size_t p = 0; p < L.Q; p++) {
        const double q0 = q[p];
        q[p] = q0 + h;
        const double up = merged_loss(&m, &L, w0, q, s, &D, ws, theta);
        q[p] = q0 - h;
        const double dn = merged_loss(&m, &L, w0, q, s, &D, ws, theta);
        q[p] = q0;
        const double fd = (up - dn) / (2 * h);
        ck_assert_msg(fabs(fd - gq[p]) <= 1e-7 * (1.0 + fabs(fd)),
                      "model %d, adapter entry %zu: analytic %.12g, finite "
                      "difference %.12g", _i, p, gq[p], fd);
    }
    pflref_model_workspace_free(ws);
    free(w0);
    free(theta);
    free(g);
    free(q);
    free(gq);
}
END_TEST

/* Softmax d = 3, k = 3, three clients of 2, 3, 4 samples, rank 2 on W. */
static tb_case *softmax_case(double *q0, size_t T)
{
    pflref_model m = tb_model(PFLREF_MODEL_SOFTMAX,
                              PFLREF_LOSS_CROSS_ENTROPY, 3, 3, 0, 1);
    tb_case *c = tb_new(&m, 3);
    for (size_t i = 0; i < 3; i++) {
        const size_t n = 2 + i;
        double X[12], y[4];
        for (size_t j = 0; j < n * 3; j++)
            X[j] = val(j, 7 + i);
        for (size_t j = 0; j < n; j++)
            y[j] = (double)((i + j) % 3);
        tb_train(c, i, n, X, y);
    }
    double w0[12];
    for (size_t p = 0; p < m.P; p++)
        w0[p] = 0.5 * val(p, 9);
    tb_w0(c, w0);
    for (size_t p = 0; p < 12; p++)   /* A (2 × 3) then B (3 × 2) */
        q0[p] = p < 6 ? val(p, 11) : 0.0;
    c->hyper.eta = 0.3;
    c->hyper.lora.r = 2;
    c->hyper.lora.alpha = 3.0;
    c->hyper.lora.q0 = q0;
    c->hyper.lora.nq0 = 12;
    for (size_t t = 0; t < T; t++)
        tb_round(c, "0 1 2", "0 1 | 1", "2 0 1", "3 1 | 0 2");
    return c;
}

/* B = 0: the merged model is W₀ before training (w and every v_i), and
 * the first step moves B only (∂A = s Bᵀ G = 0). */
START_TEST(test_b_zero_starts_at_w0)
{
    /* req: lora.eq3, lora.grad */
    double q0[12];
    tb_case *c = softmax_case(q0, 1);
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "lora", &tj);
    size_t begins = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        const double *x = tj.values + rc->offset;
        if (rc->kind == PFLREF_EV_CLIENT_BEGIN) {
            begins++;
            for (size_t p = 0; p < 12; p++)
                ck_assert(x[p] == q0[p]);
        }
        if (rc->kind == PFLREF_EV_STEP && rc->step == 1) {
            for (size_t p = 0; p < 6; p++)   /* A unchanged */
                ck_assert_msg(x[p] == q0[p], "client %ld: A[%zu] moved in "
                              "step 1 with B = 0", rc->client, p);
            int moved = 0;
            for (size_t p = 6; p < 12; p++)
                moved |= x[p] != 0.0;
            ck_assert_msg(moved, "B did not move in step 1");
        }
    }
    ck_assert_uint_eq(begins, 3);
    /* personal adapters: the global model is the untouched W₀ */
    for (size_t p = 0; p < 12; p++)
        ck_assert(res->w[p] == c->w0[p]);
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    /* before any step the merged model is W₀ exactly */
    pflref_lora_layout L;
    pflref_error err;
    double theta[12];
    ck_assert_int_eq(pflref_lora_layout_init(&L, &c->problem->model, 2, 0,
                                             &err), PFLREF_OK);
    pflref_lora_merge(&L, &c->problem->model, c->w0, q0, 2, 1.5, theta);
    for (size_t p = 0; p < 12; p++)
        ck_assert(theta[p] == c->w0[p]);
    tb_free(c);
}
END_TEST

/* FFA-LoRA: A never moves; the global s B A equals Σ p_k s B_k A (the
 * average of the products), p_k = n_k / Σ n_j. */
START_TEST(test_ffa_average_is_exact)
{
    /* req: ffalora.freeze_a, ffalora.avg */
    double q0[12];
    tb_case *c = softmax_case(q0, 2);
    for (size_t p = 6; p < 12; p++)
        q0[p] = 0.25 * val(p, 13);   /* a non-zero B */
    c->hyper.lora.method = PFLREF_LORA_FFA;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "lora", &tj);
    double Bk[3][6] = {{0}};
    const double n[3] = {2, 3, 4}, s = 1.5;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        const double *x = tj.values + rc->offset;
        if (strcmp(rc->name, "q") == 0)
            for (size_t p = 0; p < 6; p++)
                ck_assert_msg(x[p] == q0[p], "A moved under FFA-LoRA");
        if (rc->kind == PFLREF_EV_CLIENT_END && rc->round == 1)
            memcpy(Bk[rc->client], x + 6, 6 * sizeof *x);
    }
    /* Σ_k p_k s B_k A against the global w − W₀ (W block) */
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            double want = 0.0;
            for (size_t k = 0; k < 3; k++)
                for (size_t rho = 0; rho < 2; rho++)
                    want += n[k] / 9.0 * s * Bk[k][i * 2 + rho] *
                            q0[rho * 3 + j];
            const double got = res->w[i * 3 + j] - c->w0[i * 3 + j];
            ck_assert_msg(fabs(got - want) <= 1e-14 * (1.0 + fabs(want)),
                          "ΔW[%zu][%zu]: s B A = %.17g, Σ p_k s B_k A = "
                          "%.17g", i, j, got, want);
        }
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    tb_free(c);
}
END_TEST

/* HetLoRA on the softmax case with ranks (1, 2, 2) and self-pruning: the
 * NOTE "rank" of a client never exceeds its previous rank, and the
 * entries beyond a client's rank are exactly 0 in what it sends. */
START_TEST(test_hetlora_rank_never_grows)
{
    /* req: hetlora.trunc, hetlora.prune, hetlora.pad */
    double q0[12];
    tb_case *c = softmax_case(q0, 4);
    for (size_t p = 6; p < 12; p++)
        q0[p] = 0.25 * val(p, 13);
    const double ranks[3] = {1, 2, 2};
    c->hyper.lora.method = PFLREF_LORA_HETLORA;
    c->hyper.lora.ranks = ranks;
    c->hyper.lora.nranks = 3;
    c->hyper.lora.lambda = 4.0;     /* strong: some client prunes */
    c->hyper.lora.gamma = 0.5;
    pflref_trajectory tj;
    pflref_run_result *res = tb_run_recorded(c, "lora", &tj);
    double last[3] = {1, 2, 2};
    int pruned = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        const double *x = tj.values + rc->offset;
        if (rc->kind == PFLREF_EV_NOTE && strcmp(rc->name, "rank") == 0) {
            ck_assert_msg(x[0] <= last[rc->client], "client %ld: rank grew "
                          "from %g to %g", rc->client, last[rc->client], x[0]);
            pruned |= x[0] < last[rc->client];
            last[rc->client] = x[0];
        }
        if (rc->kind == PFLREF_EV_CLIENT_END) {
            const size_t rk = (size_t)last[rc->client];
            for (size_t rho = rk; rho < 2; rho++)
                for (size_t j = 0; j < 3; j++)
                    ck_assert(x[rho * 3 + j] == 0.0 &&
                              x[6 + j * 2 + rho] == 0.0);
        }
    }
    ck_assert_msg(pruned, "no client pruned: the test does not test");
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    tb_free(c);
}
END_TEST

/* Spec-level bad input: exit 2, the field named, no result written. */
START_TEST(test_spec_errors)
{
    static const struct {
        const char *model, *init, *alg, *where;
    } cases[] = {
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0]",
         "\"lora.r\": 0, \"lora.alpha\": 1", "lora.r"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0]",
         "\"lora.r\": 2, \"lora.alpha\": 1", "lora.r"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5]",
         "\"lora.r\": 1, \"lora.alpha\": 1", "init.lora"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0]",
         "\"lora.r\": 1, \"lora.alpha\": 0", "lora.alpha"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0]",
         "\"lora.r\": 1, \"lora.alpha\": -2", "lora.alpha"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0]",
         "\"lora.r\": 1, \"lora.alpha\": 1, \"hetlora.gamma\": 1",
         "hetlora.gamma"},
        {"\"kind\": \"quadratic\", \"d\": 2", "[0.5, 0.5, 0]",
         "\"lora.r\": 1, \"lora.alpha\": 1", "model.kind"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, 0.5, 0], \"lora_ranks\": "
         "[1]", "\"lora.r\": 1, \"lora.alpha\": 1", "init.lora_ranks"},
        {"\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"", "[0.5, \"x\", 0]",
         "\"lora.r\": 1, \"lora.alpha\": 1", "init.lora[1]"},
    };
    char *dir = tu_tmpdir();
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char spec[1400];
        const int quad = strstr(cases[q].model, "quadratic") != NULL;
        snprintf(spec, sizeof spec,
                 "{\"format\": \"pflref-spec/1\", \"model\": {%s}, "
                 "\"problem\": {\"clients\": [%s]}, \"init\": {\"kind\": "
                 "\"given\", \"w\": [1, -1], \"lora\": %s}, \"algorithm\": "
                 "{\"name\": \"lora\", \"hyperparameters\": {\"eta\": 0.1, "
                 "%s}}, \"schedule\": {\"kind\": \"given\", \"rounds\": "
                 "[{\"clients\": [0], \"batches\": [[[0]]]}]}}",
                 cases[q].model,
                 quad ? "{\"a\": [1, 2], \"c\": [0, 1]}"
                      : "{\"X\": [[1, 2]], \"y\": [1]}",
                 cases[q].init, cases[q].alg);
        tu_cli_refuses(dir, q, spec, cases[q].where);
    }
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Run-level refusals in C: HetLoRA ranks outside [r_min, r], a missing
 * initial adapter, client ranks under another method. */
START_TEST(test_refusals)
{
    double q0[12];
    pflref_error err;
    tb_case *c = softmax_case(q0, 1);
    const double bad[3] = {1, 3, 2}, frac[3] = {1, 1.5, 2};
    c->hyper.lora.method = PFLREF_LORA_HETLORA;
    c->hyper.lora.ranks = bad;
    c->hyper.lora.nranks = 3;
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.lora_ranks[1]");
    c->hyper.lora.ranks = frac;
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.lora_ranks[1]");
    c->hyper.lora.method = PFLREF_LORA_FFA;
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.lora_ranks");
    c->hyper.lora.ranks = NULL;
    c->hyper.lora.q0 = NULL;
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "init.lora");
    c->hyper.lora.q0 = q0;
    c->hyper.lora.r = 4;   /* > min(k, d) = 3 */
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "lora.r");
    tb_free(c);
}
END_TEST

/* Targets on a layer list: every dense and conv2d weight (all), the
 * last or first parametrised layer's (head, input), or by name in block
 * order; the refusals name init.lora_targets[j], lora.targets or lora.r. */
START_TEST(test_layer_targets)
{
    pflref_model m = cnn_model();   /* conv 2 × 9, fc 2 × 8, out 1 × 2 */
    pflref_lora_layout L;
    pflref_error err;
    ck_assert_int_eq(pflref_lora_layout_init(&L, &m, 1, 0, &err), PFLREF_OK);
    ck_assert_uint_eq(L.ntargets, 3);
    ck_assert(L.targets[0].k == 2 && L.targets[0].d == 9);   /* O × C·κ² */
    ck_assert(L.targets[1].k == 2 && L.targets[1].d == 8);
    ck_assert(L.targets[2].k == 1 && L.targets[2].d == 2);
    ck_assert_uint_eq(L.Q, 11 + 10 + 3);
    ck_assert_int_eq(pflref_lora_layout_init(&L, &m, 1, 1, &err), PFLREF_OK);
    ck_assert_uint_eq(L.ntargets, 1);
    ck_assert_str_eq(m.blocks[L.targets[0].block].name, "out.weight");
    ck_assert_int_eq(pflref_lora_layout_init(&L, &m, 2, 2, &err), PFLREF_OK);
    ck_assert_str_eq(m.blocks[L.targets[0].block].name, "conv.weight");
    /* named: a block and a layer, given out of order: block order */
    static const char *const two[] = {"out.weight", "conv"};
    ck_assert_int_eq(pflref_lora_layout_named(&L, &m, 1, 0, two, 2, &err),
                     PFLREF_OK);
    ck_assert_uint_eq(L.ntargets, 2);
    ck_assert_str_eq(m.blocks[L.targets[0].block].name, "conv.weight");
    ck_assert_str_eq(m.blocks[L.targets[1].block].name, "out.weight");
    ck_assert_uint_eq(L.targets[1].off_A, 11);
    /* the optimizer's blocks: <layer>.lora_A, <layer>.lora_B over q */
    pflref_model am;
    pflref_lora_blocks(&L, &m, &am);
    ck_assert_uint_eq(am.nblocks, 4);
    ck_assert_uint_eq(am.P, L.Q);
    ck_assert_str_eq(am.blocks[0].name, "conv.lora_A");
    ck_assert_str_eq(am.blocks[3].name, "out.lora_B");
    ck_assert_uint_eq(am.blocks[3].offset, L.targets[1].off_B);
    ck_assert_uint_eq(am.blocks[1].size, 2);   /* B of conv: 2 × r */
    /* refusals */
    static const struct {
        const char *names[2];
        size_t n;
        int which;
        size_t r;
        const char *where, *says;
    } bad[] = {
        {{"nope"}, 1, 0, 1, "init.lora_targets[0]", "neither a block"},
        {{"fc.bias"}, 1, 0, 1, "init.lora_targets[0]", "not a weight matrix"},
        {{"1"}, 1, 0, 1, "init.lora_targets[0]", "(layers[1], tanh) has no "
                                                 "weight"},
        {{"conv", "conv.weight"}, 2, 0, 1, "init.lora_targets[1]",
         "already named by init.lora_targets[0]"},
        {{"conv"}, 1, 1, 1, "init.lora_targets", "not both"},
        {{"fc", "out"}, 2, 0, 2, "lora.r", "block out.weight (1 × 2)"},
    };
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        err.where[0] = '\0';
        ck_assert_int_eq(pflref_lora_layout_named(&L, &m, bad[q].r,
                                                  bad[q].which, bad[q].names,
                                                  bad[q].n, &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, bad[q].where);
        ck_assert_msg(strstr(err.message, bad[q].says) != NULL,
                      "case %zu: \"%s\" lacks \"%s\"", q, err.message,
                      bad[q].says);
    }
    /* a batchnorm as the last parametrised layer: no head weight */
    pflref_layer ls[2] = {
        {.kind = PFLREF_LAYER_DENSE, .out = 2, .bias = 1},
        {.kind = PFLREF_LAYER_BATCHNORM1D, .eps = 1e-5, .momentum = 0.1},
    };
    const size_t input[1] = {3};
    pflref_model bn;
    ck_assert_int_eq(pflref_model_init_layers(&bn, PFLREF_LOSS_CROSS_ENTROPY,
                                              input, 1, ls, 2, &err),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_lora_layout_init(&L, &bn, 1, 1, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "lora.targets");
    static const char *const gamma[] = {"1.weight"};
    ck_assert_int_eq(pflref_lora_layout_named(&L, &bn, 1, 0, gamma, 1, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "init.lora_targets[0]");
    ck_assert_int_eq(pflref_lora_layout_init(&L, &bn, 1, 2, &err), PFLREF_OK);
}
END_TEST

/* The client optimizer on the adapter: FFA-LoRA's A never moves under
 * Adam either (the mask), Adam changes the trajectory against plain SGD,
 * and HetLoRA's zero padding survives a state carried from a client of
 * rank 2 to one of rank 1 (opt.state = server; the state is truncated
 * with the adapter).  decay_scope = shared | personal is refused. */
START_TEST(test_optimizer)
{
    double q0[12];
    pflref_error err;
    /* plain FFA-LoRA, then with Adam */
    tb_case *c = softmax_case(q0, 2);
    c->hyper.lora.method = PFLREF_LORA_FFA;
    pflref_run_result *plain = tb_run(c, "lora", NULL);
    c->hyper.opt.method = PFLREF_OPT_ADAM;
    c->hyper.opt.eps = 1e-3;
    pflref_trajectory tj;
    pflref_run_result *adam = tb_run_recorded(c, "lora", &tj);
    int differs = 0;
    for (size_t p = 0; p < c->problem->model.P; p++)
        differs |= plain->w[p] != adam->w[p];
    ck_assert_msg(differs, "Adam left the run as plain SGD's");
    size_t steps = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        if (rc->kind != PFLREF_EV_STEP)
            continue;
        steps++;
        for (size_t p = 0; p < 6; p++)   /* A (2 × 3) frozen */
            ck_assert_msg(tj.values[rc->offset + p] == q0[p],
                          "FFA-LoRA with Adam moved A[%zu]", p);
    }
    ck_assert_uint_gt(steps, 0);
    pflref_run_result_free(plain);
    pflref_run_result_free(adam);
    pflref_trajectory_free(&tj);
    /* HetLoRA, ranks 2, 1, 2, one Adam state carried across clients */
    const double ranks[3] = {2, 1, 2};
    for (size_t p = 6; p < 12; p++)
        q0[p] = val(p, 13);   /* B ≠ 0: both ranks train */
    c->hyper.lora.method = PFLREF_LORA_HETLORA;
    c->hyper.lora.ranks = ranks;
    c->hyper.lora.nranks = 3;
    c->hyper.opt.state = PFLREF_OPT_STATE_SERVER;
    adam = tb_run_recorded(c, "lora", &tj);
    steps = 0;
    for (size_t k = 0; k < tj.count; k++) {
        const pflref_record *rc = &tj.records[k];
        if (rc->kind != PFLREF_EV_STEP || rc->client != 1)
            continue;
        const double *x = tj.values + rc->offset;
        steps++;
        for (size_t j = 0; j < 3; j++)   /* A's row 1, B's column 1 */
            ck_assert_msg(x[3 + j] == 0.0 && x[6 + 2 * j + 1] == 0.0,
                          "client 1 (rank 1): a padded entry moved");
    }
    ck_assert_uint_gt(steps, 0);
    pflref_run_result_free(adam);
    pflref_trajectory_free(&tj);
    /* weight decay scoped by a split the adapter does not have */
    c->hyper.opt.weight_decay = 0.125;
    c->hyper.opt.decay_scope = PFLREF_OPT_SCOPE_SHARED;
    tb_run_error(c, "lora", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.opt.decay_scope");
    tb_free(c);
}
END_TEST

/* `pflref freeze` of a HetLoRA spec keeps init.lora and init.lora_ranks,
 * so the frozen vector replays (verify exits 0). */
START_TEST(test_freeze_keeps_the_adapter)
{
    static const char SPEC[] =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "
        "\"d\": 2, \"h\": 2, \"k\": 1, \"activation\": \"identity\", "
        "\"bias\": false, \"loss\": \"half_squared\"}, \"problem\": "
        "{\"clients\": [{\"X\": [[2, 2]], \"y\": [1]}, {\"X\": [[2, 1]], "
        "\"y\": [2]}]}, \"init\": {\"kind\": \"given\", \"w\": [1, -1, "
        "0, 0, 1, 0], \"lora\": [1, 0, 0.6, 0.8, -0.5, 1, 0, 0], "
        "\"lora_ranks\": [1, 2]}, \"algorithm\": {\"name\": \"lora\", "
        "\"hyperparameters\": {\"eta\": 0.5, \"lora.r\": 2, "
        "\"lora.alpha\": 2, \"hetlora.lambda\": 0.5}, \"switches\": "
        "{\"lora.method\": \"hetlora\", \"lora.targets\": \"input\"}}, "
        "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": "
        "[0, 1], \"batches\": [[[0]], [[0]]]}]}}";
    char *dir = tu_tmpdir();
    char path[512], out[512], args[1200];
    snprintf(path, sizeof path, "%s/s.json", dir);
    snprintf(out, sizeof out, "%s/frozen.json", dir);
    ck_assert_int_eq(tu_write(path, SPEC), 0);
    snprintf(args, sizeof args, "freeze %s -o %s", path, out);
    char *o = NULL, *e = NULL;
    int rc = tu_cli(args, &o, &e);
    ck_assert_msg(rc == 0, "freeze exited %d: %s", rc, e != NULL ? e : "");
    free(o);
    free(e);
    char *frozen = tu_read(out);
    ck_assert_ptr_nonnull(frozen);
    ck_assert_msg(strstr(frozen, "\"lora_ranks\"") != NULL &&
                  strstr(frozen, "\"lora\"") != NULL,
                  "the frozen vector lost init.lora or init.lora_ranks");
    snprintf(args, sizeof args, "verify %s", out);
    o = e = NULL;
    rc = tu_cli(args, &o, &e);
    ck_assert_msg(rc == 0, "verify of the frozen vector exited %d: %s", rc,
                  e != NULL ? e : "");
    free(o);
    free(e);
    free(frozen);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The fresh independent generator (golden/pflref_exact_lora.py) agrees
 * with pflref to 1e-13 on random problems of every method (golden/lora/
 * check_random.py runs PFLREF_CLI). */
START_TEST(test_random_problems)
{
    /* req: lora.eq3, lora.grad, hetlora.weights */
    char *script = tu_repo_path("golden/lora/check_random.py");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 12 2024 >/dev/null",
             script);
    const int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s: the exact replay and pflref differ by more "
                  "than 1e-13 on a random problem (exit %d; run it to see "
                  "which)", script, rc);
    free(script);
}
END_TEST

Suite *lora_suite(void)
{
    Suite *s = suite_create("lora");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_vectors, 0,
                        (int)(sizeof VECTORS / sizeof VECTORS[0]));
    tcase_add_loop_test(tc, test_grad_fd, 0, 5);
    tcase_add_test(tc, test_layer_targets);
    tcase_add_test(tc, test_optimizer);
    tcase_add_test(tc, test_bn_running_local);
    tcase_add_test(tc, test_b_zero_starts_at_w0);
    tcase_add_test(tc, test_ffa_average_is_exact);
    tcase_add_test(tc, test_hetlora_rank_never_grows);
    tcase_add_test(tc, test_spec_errors);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_freeze_keeps_the_adapter);
    tcase_add_test(tc, test_random_problems);
    suite_add_tcase(s, tc);
    return s;
}
