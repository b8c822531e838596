/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_dropout.c: the dropout layer of a layer list with its masks
 * given as data (docs/models.md, "Dropout"; ref/models/layers_ops.c).
 *
 * Evidence, each from outside the code under test:
 *   - the kept entries are x · fl(1/(1 − p)), torch's CPU kernel
 *     (torch 1.13, float64: F.dropout(1.3, p = 0.3) kept is
 *     0x1.db6db6db6db6ep+0, while 1.3/0.7 rounds to ...6fp+0);
 *   - a two-layer case worked by hand: each pass's masks reach their
 *     layer at the right offsets, sample by sample;
 *   - the gradient against central differences of the loss and the
 *     Hessian-vector product against central differences of the gradient,
 *     with the masks fixed (dropout is linear given its mask);
 *   - evaluation is the identity: evaluate and outputs equal, bit for
 *     bit, those of the same list without the dropout layers; p = 0 with
 *     all-ones masks trains bit for bit as without them;
 *   - a training pass without a mask source, or whose source refuses,
 *     fails with PFLREF_EINVAL; the body/head API refuses dropout;
 *   - the post phase's masks (schedule.post_dropout) are written back
 *     with the result's schedule, which replays bit for bit, and a flipped
 *     post mask entry moves that client's fine-tuned model only;
 *   - FedBN, CFL and pFedHN take one pass per local step, FedFomo its
 *     validation-loss passes first, IFCA under ifca.estimate_mode = eval
 *     one per local step (Option I: its one gradient; its estimates no
 *     pass): two passes' masks
 *     swapped move the client's model, a pass removed fails naming it;
 *   - IFCA's estimate mode: on a layer list without batch normalisation or
 *     dropout train and eval give the same run, bit for bit in the
 *     reported models; on one with batch normalisation (running
 *     statistics apart from the batch's) they differ;
 *   - IFCA under estimate_mode = train with dropout: the estimate lists
 *     are written back, each estimate pass reads its own mask (two
 *     swapped move the recorded losses), and eval reports other models.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include "suites.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static pflref_layer lay(pflref_layer_kind kind, size_t out, size_t kernel,
                        int bias, double p)
{
    return (pflref_layer){.kind = kind, .out = out, .kernel = kernel,
                          .bias = bias, .p = p};
}

#define DENSE(o, b) lay(PFLREF_LAYER_DENSE, (o), 0, (b), 0.0)
#define DROP(p) lay(PFLREF_LAYER_DROPOUT, 0, 0, 0, (p))
#define RELU lay(PFLREF_LAYER_RELU, 0, 0, 0, 0.0)

static pflref_model model_of(pflref_loss loss, const size_t *in, int rank,
                             const pflref_layer *L, size_t n)
{
    pflref_model m;
    pflref_error err;
    pflref_status st = pflref_model_init_layers(&m, loss, in, rank, L, n,
                                                &err);
    ck_assert_msg(st == PFLREF_OK, "%s: %s", err.where, err.message);
    return m;
}

/* A source that hands the same pass every time and counts the calls and
 * the batch sizes it saw; refuse: it fails instead. */
typedef struct {
    const unsigned char *pass;
    size_t calls, last_nb;
    int refuse;
} fixed_source;

static pflref_status fixed(void *ctx, const pflref_model *m,
                           const pflref_data *D, size_t nb, int kind,
                           const unsigned char **pass)
{
    fixed_source *f = ctx;
    (void)m;
    (void)D;
    (void)kind;
    f->calls++;
    f->last_nb = nb;
    if (f->refuse)
        return PFLREF_EINVAL;
    *pass = f->pass;
    return PFLREF_OK;
}

/* ---- torch's scale ------------------------------------------------------ */

/* [dropout(p = 0.3)] → dense(1 → 1, w = 1, b = 0) with the squared loss on
 * y = 0: g_b = 2 ŷ exactly (ŷ = 1 · (x s) + 0), so g_b / 2 is the dropout's
 * output x s, compared bit for bit with torch's. */
START_TEST(test_dropout_scale)
{
    const size_t in[1] = {1};
    const pflref_layer L[2] = {DROP(0.3), DENSE(1, 1)};
    pflref_model m = model_of(PFLREF_LOSS_SQUARED, in, 1, L, 2);
    double X[1] = {1.3}, y[1] = {0.0}, w[2] = {1.0, 0.0}, g[2];
    const pflref_data D = {.n = 1, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 1);
    const unsigned char keep[1] = {1}, drop[1] = {0};
    fixed_source src = {.pass = keep};
    pflref_model_workspace_dropout(ws, fixed, &src);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 1, ws, g, NULL),
                     PFLREF_OK);
    ck_assert(g[1] / 2.0 == 0x1.db6db6db6db6ep+0);   /* torch's */
    ck_assert(g[1] / 2.0 != 1.3 / 0.7);              /* not x/(1 − p) */
    /* ∂F/∂w = 2 ŷ · (x s) */
    ck_assert(g[0] == 2.0 * 0x1.db6db6db6db6ep+0 * 0x1.db6db6db6db6ep+0);
    src.pass = drop;   /* a dropped entry: ŷ = 0, so g = 0 */
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, 1, ws, g, NULL),
                     PFLREF_OK);
    ck_assert(g[0] == 0.0 && g[1] == 0.0);
    ck_assert_uint_eq(src.calls, 2);
    pflref_model_workspace_free(ws);
}
END_TEST

/* ---- the masks' layout -------------------------------------------------- */

/* [dropout "a" (p = 0) on [2], dense(2 → 3) W = [[1, 0], [0, 1], [1, 1]],
 * b = 0, dropout "b" (p = 0) on [3], dense(3 → 1) w = (1, 2, 4), no bias],
 * squared loss, y = 0.  A pass holds a's mask (2 × 2) then b's (2 × 3):
 *   sample 1: x = (1, 2), a (1, 0) → (1, 0) → (1, 0, 1); b (0, 1, 1) →
 *             (0, 0, 1) → ŷ = 4;
 *   sample 2: x = (2, 1), a (0, 1) → (0, 1) → (0, 1, 1); b (1, 1, 0) →
 *             (0, 1, 0) → ŷ = 2;
 * F = (16 + 4)/2 = 10.  Swapped layers or samples give another F. */
START_TEST(test_dropout_layout)
{
    const size_t in[1] = {2};
    pflref_layer L[4] = {DROP(0.0), DENSE(3, 1), DROP(0.0), DENSE(1, 0)};
    snprintf(L[0].name, sizeof L[0].name, "a");
    snprintf(L[2].name, sizeof L[2].name, "b");
    pflref_model m = model_of(PFLREF_LOSS_SQUARED, in, 1, L, 4);
    ck_assert_uint_eq(m.P, 12);
    ck_assert_uint_eq(pflref_model_dropout_layers(&m), 2);
    double X[4] = {1, 2, 2, 1}, y[2] = {0, 0}, F;
    const double w[12] = {1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 2, 4};
    const pflref_data D = {.n = 2, .X = X, .y = y};
    const unsigned char pass[10] = {1, 0, 0, 1, 0, 1, 1, 1, 1, 0};
    fixed_source src = {.pass = pass};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, 2);
    pflref_model_workspace_dropout(ws, fixed, &src);
    ck_assert_int_eq(pflref_model_loss(&m, w, &D, NULL, 2, ws, &F),
                     PFLREF_OK);
    ck_assert(F == 10.0);
    ck_assert_uint_eq(src.last_nb, 2);
    /* evaluation takes no mask: ŷ = (1·1 + 2·2 + 4·3, 1·2 + 2·1 + 4·3) */
    double Z[2];
    const size_t calls = src.calls;
    ck_assert_int_eq(pflref_model_outputs(&m, w, &D, NULL, 2, ws, Z),
                     PFLREF_OK);
    ck_assert(Z[0] == 17.0 && Z[1] == 16.0);
    ck_assert_uint_eq(src.calls, calls);
    pflref_model_workspace_free(ws);
}
END_TEST

/* ---- gradient and HVP against differences ------------------------------- */

/* Two networks: an MLP [dense, relu, dropout(1/4), dense] with cross
 * entropy, and a CNN [conv, relu, maxpool, dropout(3/8) on the image,
 * flatten, dense, dropout(1/4), dense] with the squared loss; random data
 * and parameters (seeded) and a random fixed mask per pass. */
static pflref_model net(int i)
{
    if (i == 0) {
        const size_t in[1] = {4};
        const pflref_layer L[4] = {DENSE(5, 1), RELU, DROP(0.25),
                                   DENSE(3, 1)};
        return model_of(PFLREF_LOSS_CROSS_ENTROPY, in, 1, L, 4);
    }
    const size_t in[3] = {1, 5, 5};
    pflref_layer L[8] = {lay(PFLREF_LAYER_CONV2D, 2, 2, 1, 0.0), RELU,
                         lay(PFLREF_LAYER_MAXPOOL2D, 0, 2, 0, 0.0),
                         DROP(0.375), lay(PFLREF_LAYER_FLATTEN, 0, 0, 0, 0.0),
                         DENSE(3, 1), DROP(0.25), DENSE(1, 1)};
    return model_of(PFLREF_LOSS_SQUARED, in, 3, L, 8);
}

/* The pass's mask entries: n samples through m's dropout layers. */
static size_t pass_size(const pflref_model *m, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < m->nlayers; i++)
        if (m->layers[i].kind == PFLREF_LAYER_DROPOUT)
            s += n * m->layers[i].in_size;
    return s;
}

/* ∂F/∂w_p against (F(w + h e_p) − F(w − h e_p))/2h, h = 1e-6, and Hv
 * against (g(w + εv) − g(w − εv))/2ε, ε = 1e-5, each to 1e-6 (1 + |fd|):
 * the truncation and rounding errors are as in test_layers.c (≤ 1e-10);
 * with the mask fixed the dropout is a fixed linear map, so no new kink. */
START_TEST(test_dropout_fd)
{
    pflref_model m = net(_i);
    const size_t n = 4, P = m.P, d = m.d, S = pass_size(&m, n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31u + (unsigned long)_i);
    double *X = malloc(n * d * sizeof *X), y[4], *w = malloc(P * sizeof *w);
    double *g = malloc(P * sizeof *g), *wp = malloc(P * sizeof *wp);
    double *v = malloc(P * sizeof *v), *Hv = malloc(P * sizeof *Hv);
    double *gp = malloc(P * sizeof *gp), *gm = malloc(P * sizeof *gm);
    unsigned char *pass = malloc(S);
    for (size_t q = 0; q < n * d; q++)
        X[q] = 2.0 * gsl_rng_uniform(r) - 1.0;
    for (size_t j = 0; j < n; j++)
        y[j] = m.k >= 2 ? (double)gsl_rng_uniform_int(r, m.k)
                        : 2.0 * gsl_rng_uniform(r) - 1.0;
    for (size_t p = 0; p < P; p++) {
        w[p] = 1.4 * gsl_rng_uniform(r) - 0.7;
        v[p] = 2.0 * gsl_rng_uniform(r) - 1.0;
    }
    size_t ones = 0;
    for (size_t q = 0; q < S; q++)
        ones += pass[q] = gsl_rng_uniform(r) < 0.7;
    ck_assert(ones > 0 && ones < S);   /* neither all kept nor all dropped */
    const pflref_data D = {.n = n, .X = X, .y = y};
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, n);
    fixed_source src = {.pass = pass};
    pflref_model_workspace_dropout(ws, fixed, &src);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, n, ws, g, NULL),
                     PFLREF_OK);
    const double h = 1e-6;
    for (size_t p = 0; p < P; p++) {
        double fp, fm;
        memcpy(wp, w, P * sizeof *wp);
        wp[p] = w[p] + h;
        ck_assert_int_eq(pflref_model_loss(&m, wp, &D, NULL, n, ws, &fp),
                         PFLREF_OK);
        wp[p] = w[p] - h;
        ck_assert_int_eq(pflref_model_loss(&m, wp, &D, NULL, n, ws, &fm),
                         PFLREF_OK);
        const double fd = (fp - fm) / (2.0 * h);
        ck_assert_msg(fabs(fd - g[p]) <= 1e-6 * (1.0 + fabs(fd)),
                      "net %d: dF/dw[%zu] = %.12g, difference %.12g", _i, p,
                      g[p], fd);
    }
    ck_assert_int_eq(pflref_model_hvp(&m, w, &D, NULL, n, v, ws, Hv),
                     PFLREF_OK);
    const double eps = 1e-5;
    for (size_t p = 0; p < P; p++)
        wp[p] = w[p] + eps * v[p];
    ck_assert_int_eq(pflref_model_grad(&m, wp, &D, NULL, n, ws, gp, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        wp[p] = w[p] - eps * v[p];
    ck_assert_int_eq(pflref_model_grad(&m, wp, &D, NULL, n, ws, gm, NULL),
                     PFLREF_OK);
    for (size_t p = 0; p < P; p++) {
        const double fd = (gp[p] - gm[p]) / (2.0 * eps);
        ck_assert_msg(fabs(fd - Hv[p]) <= 1e-6 * (1.0 + fabs(fd)),
                      "net %d: (Hv)[%zu] = %.12g, difference %.12g", _i, p,
                      Hv[p], fd);
    }
    /* the mask matters: all kept changes the gradient */
    memset(pass, 1, S);
    ck_assert_int_eq(pflref_model_grad(&m, w, &D, NULL, n, ws, gp, NULL),
                     PFLREF_OK);
    ck_assert(memcmp(g, gp, P * sizeof *g) != 0);
    pflref_model_workspace_free(ws);
    gsl_rng_free(r);
    free(X);
    free(w);
    free(g);
    free(wp);
    free(v);
    free(Hv);
    free(gp);
    free(gm);
    free(pass);
}
END_TEST

/* ---- evaluation, p = 0, refusals ---------------------------------------- */

/* The MLP of net 0 and the same list without its dropout layer have the
 * same blocks; evaluate and outputs (evaluation mode) agree bit for bit,
 * with no mask source at all.  With p = 0 and every entry kept (s = 1,
 * x · 1 = x) loss and gradient agree bit for bit too. */
START_TEST(test_dropout_identity)
{
    const size_t in[1] = {4}, n = 3;
    const pflref_layer Ld[4] = {DENSE(5, 1), RELU, DROP(0.0), DENSE(3, 1)};
    const pflref_layer Ln[3] = {DENSE(5, 1), RELU, DENSE(3, 1)};
    pflref_model a = net(0);
    pflref_model z = model_of(PFLREF_LOSS_CROSS_ENTROPY, in, 1, Ld, 4);
    pflref_model b = model_of(PFLREF_LOSS_CROSS_ENTROPY, in, 1, Ln, 3);
    ck_assert_uint_eq(a.P, b.P);
    double X[12] = {0.5, -1, 0.25, 2, -0.75, 1.5, 0.125, -2, 1, 1, -1, 0.5};
    double y[3] = {0, 2, 1}, w[43], Za[9], Zb[9], ga[43], gb[43], Fa, Fb;
    for (size_t p = 0; p < a.P; p++)
        w[p] = 0.05 * (double)((p * 7) % 23) - 0.5;
    const pflref_data D = {.n = n, .X = X, .y = y};
    pflref_model_workspace *wa = pflref_model_workspace_alloc(&a, n);
    pflref_model_workspace *wz = pflref_model_workspace_alloc(&z, n);
    pflref_model_workspace *wb = pflref_model_workspace_alloc(&b, n);
    pflref_eval ea, eb;
    ck_assert_int_eq(pflref_model_evaluate(&a, w, &D, wa, &ea), PFLREF_OK);
    ck_assert_int_eq(pflref_model_evaluate(&b, w, &D, wb, &eb), PFLREF_OK);
    ck_assert(memcmp(&ea, &eb, sizeof ea) == 0);
    ck_assert_int_eq(pflref_model_outputs(&a, w, &D, NULL, n, wa, Za),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_outputs(&b, w, &D, NULL, n, wb, Zb),
                     PFLREF_OK);
    ck_assert(memcmp(Za, Zb, sizeof Za) == 0);
    /* a training pass without masks fails; a refusing source fails */
    ck_assert_int_eq(pflref_model_grad(&a, w, &D, NULL, n, wa, ga, NULL),
                     PFLREF_EINVAL);
    fixed_source no = {.refuse = 1};
    pflref_model_workspace_dropout(wa, fixed, &no);
    ck_assert_int_eq(pflref_model_loss(&a, w, &D, NULL, n, wa, &Fa),
                     PFLREF_EINVAL);
    ck_assert_uint_eq(no.calls, 1);
    /* p = 0, all kept: bit for bit the list without dropout */
    unsigned char ones[15];
    memset(ones, 1, sizeof ones);
    fixed_source all = {.pass = ones};
    pflref_model_workspace_dropout(wz, fixed, &all);
    ck_assert_int_eq(pflref_model_grad(&z, w, &D, NULL, n, wz, ga, &Fa),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_model_grad(&b, w, &D, NULL, n, wb, gb, &Fb),
                     PFLREF_OK);
    ck_assert(Fa == Fb && memcmp(ga, gb, b.P * sizeof *ga) == 0);
    /* the body/head API: the features pass is an evaluation pass */
    double A[15], Phi[15];
    ck_assert_int_eq(pflref_model_features(&a, w, &D, NULL, n, wa, A, Phi),
                     PFLREF_EINVAL);
    pflref_model_workspace_free(wa);
    pflref_model_workspace_free(wz);
    pflref_model_workspace_free(wb);
}
END_TEST

/* p outside [0, 1) is refused naming the layer's field. */
START_TEST(test_dropout_p)
{
    const size_t in[1] = {2};
    const double bad[4] = {1.0, -0.25, 1.5, NAN};
    for (int q = 0; q < 4; q++) {
        const pflref_layer L[2] = {DROP(bad[q]), DENSE(1, 1)};
        pflref_model m;
        pflref_error err;
        ck_assert_int_eq(pflref_model_init_layers(&m, PFLREF_LOSS_SQUARED, in,
                                                  1, L, 2, &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, "layers[0].p");
        ck_assert_msg(strstr(err.message, "must lie in [0, 1)") != NULL, "%s",
                      err.message);
    }
}
END_TEST

/* ---- the post phase's masks are recorded and replayed ------------------- */

/* The spec of golden/layers/finetune-mlp-dropout.json run by the CLI: the
 * result's schedule holds the post phase's masks (post_dropout) as given
 * and the rounds' masks (dropout); a run of the result's schedule gives the
 * same final personal models, bit for bit; one post mask entry flipped
 * changes them (the post passes read their masks).  _i = 0: as given; 1:
 * the flip. */
static json_t *final_v(const char *dir, json_t *spec, const char *name)
{
    tu_json_save_in(dir, "spec.json", spec);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "run $D/spec.json -o $D/%s", name);
    char *out = NULL, *errout = NULL;
    ck_assert_msg(tu_cli_in(dir, cmd, &out, &errout) == 0, "%s", errout);
    free(out);
    free(errout);
    json_t *r = tu_json_load_in(dir, name);
    json_t *v = json_deep_copy(json_object_get(json_object_get(r, "final"), "v"));
    ck_assert_ptr_nonnull(v);
    json_decref(r);
    return v;
}

START_TEST(test_dropout_post_recorded)
{
    char *path = tu_repo_path("golden/layers/finetune-mlp-dropout.json");
    json_error_t je;
    json_t *vec = json_load_file(path, 0, &je);
    ck_assert_msg(vec != NULL, "%s: %s", path, je.text);
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    char *dir = tu_tmpdir();
    json_t *v0 = final_v(dir, spec, "r0.json");
    json_t *r0 = tu_json_load_in(dir, "r0.json");
    json_t *sched = json_object_get(r0, "schedule");
    const json_t *given = json_object_get(json_object_get(spec, "schedule"),
                                          "post_dropout");
    ck_assert(json_equal(json_object_get(sched, "post_dropout"), given));
    json_t *rounds = json_object_get(json_object_get(spec, "schedule"), "rounds");
    for (size_t t = 0; t < json_array_size(rounds); t++)
        ck_assert(json_equal(
            json_object_get(json_array_get(json_object_get(sched, "rounds"), t),
                            "dropout"),
            json_object_get(json_array_get(rounds, t), "dropout")));
    if (_i == 0) {   /* the result's schedule replays as data */
        json_object_set(spec, "schedule", sched);
        json_t *v1 = final_v(dir, spec, "r1.json");
        ck_assert(json_equal(v0, v1));
        json_decref(v1);
    } else {         /* client 2's first post mask, entry [0][0] flipped */
        json_t *row = json_array_get(json_object_get(json_array_get(
            json_array_get(json_object_get(json_object_get(spec, "schedule"),
                                           "post_dropout"), 2), 0), "drop"), 0);
        const json_int_t x = json_integer_value(json_array_get(row, 0));
        json_array_set_new(row, 0, json_integer(1 - x));
        json_t *v1 = final_v(dir, spec, "r1.json");
        ck_assert(!json_equal(json_array_get(v0, 2), json_array_get(v1, 2)));
        ck_assert(json_equal(json_array_get(v0, 0), json_array_get(v1, 0)));
        json_decref(v1);
    }
    json_decref(r0);
    json_decref(v0);
    json_decref(spec);
    json_decref(vec);
    tu_remove_tree(dir);
    free(dir);
    free(path);
}
END_TEST

/* ---- FedBN, CFL, FedFomo, pFedHN, IFCA: the passes in the algorithm's order */

#define PATH_MAX_TEST 4096

/* The specs of golden/layers/fedbn-bn1d-mlp-dropout.json (_i = 0),
 * cfl-mlp-dropout-split.json (_i = 1) and fedfomo-mlp-dropout-peers.json
 * (_i = 2: pass 0 is L_i(a) on the validation split, pass 1 the first
 * local step), pfedhn-mlp-dropout-linear-hn.json (_i = 3: round 0's one
 * client is client 2, whose steps move the hypernetwork and so every θ_i)
 * and ifca-mlp-dropout-eval.json (_i = 4: the estimates take no pass, so
 * passes 0 and 1 are client 0's two local steps) run by the CLI: round 0's first participant's two passes swapped (both
 * of one batch size) move client 0's final model (each pass reads its own
 * mask, in the algorithm's order); client 0's last round-1 pass removed
 * fails with exit 2 naming the round, the client and the pass, and writes
 * nothing. */
START_TEST(test_dropout_algorithm_passes)
{
    static const char *const files[5] = {
        "golden/layers/fedbn-bn1d-mlp-dropout.json",
        "golden/layers/cfl-mlp-dropout-split.json",
        "golden/layers/fedfomo-mlp-dropout-peers.json",
        "golden/layers/pfedhn-mlp-dropout-linear-hn.json",
        "golden/layers/ifca-mlp-dropout-eval.json"};
    char *path = tu_repo_path(files[_i]);
    json_error_t je;
    json_t *vec = json_load_file(path, 0, &je);
    ck_assert_msg(vec != NULL, "%s: %s", path, je.text);
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    json_t *rounds = json_object_get(json_object_get(spec, "schedule"), "rounds");
    char *dir = tu_tmpdir();
    json_t *v0 = final_v(dir, spec, "r0.json");
    /* swapped: round 0, participant 0, passes 0 and 1 */
    json_t *l0 = json_array_get(json_object_get(json_array_get(rounds, 0),
                                                "dropout"), 0);
    ck_assert_uint_ge(json_array_size(l0), 2);
    json_t *p0 = json_incref(json_array_get(l0, 0));
    json_t *p1 = json_incref(json_array_get(l0, 1));
    ck_assert(!json_equal(p0, p1));
    json_array_set(l0, 0, p1);
    json_array_set(l0, 1, p0);
    json_t *v1 = final_v(dir, spec, "r1.json");
    ck_assert(!json_equal(json_array_get(v0, 0), json_array_get(v1, 0)));
    json_decref(v1);
    /* back, then client 0's last pass of round 1 removed */
    json_array_set(l0, 0, p0);
    json_array_set(l0, 1, p1);
    json_decref(p0);
    json_decref(p1);
    json_t *r1 = json_array_get(rounds, 1);
    ck_assert_uint_eq(json_integer_value(json_array_get(
                          json_object_get(r1, "clients"), 0)), 0);
    json_t *l1 = json_array_get(json_object_get(r1, "dropout"), 0);
    const size_t n1 = json_array_size(l1);
    json_array_remove(l1, n1 - 1);
    tu_json_save_in(dir, "spec.json", spec);
    char *out = NULL, *errout = NULL;
    ck_assert_int_eq(tu_cli_in(dir, "run $D/spec.json -o $D/r2.json", &out,
                               &errout), 2);
    char want[160];
    snprintf(want, sizeof want, "schedule.rounds[1].dropout[0]: round 1, "
             "client 0, training pass %zu ", n1);
    ck_assert_msg(strstr(errout, want) != NULL, "%s", errout);
    ck_assert_msg(strstr(errout, "no dropout mask given for layer \"drop\"") !=
                  NULL, "%s", errout);
    char r2[PATH_MAX_TEST];
    snprintf(r2, sizeof r2, "%s/r2.json", dir);
    ck_assert(!tu_exists(r2));
    free(out);
    free(errout);
    json_decref(v0);
    json_decref(spec);
    json_decref(vec);
    tu_remove_tree(dir);
    free(dir);
    free(path);
}
END_TEST

/* ifca.estimate_mode, the CLI on two vectors' specs: the deep layer list
 * of golden/layers/ifca-deep-gradient-given-models.json (no batch
 * normalisation, no dropout: one F_i in either mode, so the same picks and
 * the same reported models, bit for bit) and the MLP with batchnorm1d of
 * ifca-bn1d-mlp-model-given-models.json (written under the default train:
 * the running statistics score otherwise, and the reported models move). */
START_TEST(test_ifca_estimate_mode)
{
    static const char *const files[2] = {
        "golden/layers/ifca-deep-gradient-given-models.json",
        "golden/layers/ifca-bn1d-mlp-model-given-models.json"};
    char *path = tu_repo_path(files[_i]);
    json_error_t je;
    json_t *vec = json_load_file(path, 0, &je);
    ck_assert_msg(vec != NULL, "%s: %s", path, je.text);
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    json_t *alg = json_object_get(spec, "algorithm");
    ck_assert_ptr_null(json_object_get(json_object_get(alg, "switches"),
                                       "ifca.estimate_mode"));
    char *dir = tu_tmpdir();
    json_t *v0 = final_v(dir, spec, "r0.json");
    json_t *sw = json_object_get(alg, "switches");
    if (sw == NULL) {
        sw = json_object();
        json_object_set_new(alg, "switches", sw);
    }
    json_object_set_new(sw, "ifca.estimate_mode", json_string("eval"));
    json_t *v1 = final_v(dir, spec, "r1.json");
    if (_i == 0)
        ck_assert_msg(json_equal(v0, v1), "%s: eval moved the models", files[_i]);
    else
        ck_assert_msg(!json_equal(v0, v1), "%s: eval left the models", files[_i]);
    json_decref(v1);
    json_decref(v0);
    json_decref(spec);
    json_decref(vec);
    tu_remove_tree(dir);
    free(dir);
    free(path);
}
END_TEST

/* The value of the first trajectory record NAME of round t and client i
 * in the result file name of dir (a copy), or NULL. */
static json_t *note_of(const char *dir, const char *name, const char *nm,
                       long t, long i)
{
    json_t *r = tu_json_load_in(dir, name);
    json_t *tr = json_object_get(r, "trajectory"), *x = NULL;
    size_t q;
    json_t *rec;
    json_array_foreach(tr, q, rec) {
        if (strcmp(json_string_value(json_object_get(rec, "name")), nm) == 0 &&
            json_integer_value(json_object_get(rec, "round")) == t &&
            json_integer_value(json_object_get(rec, "client")) == i) {
            x = json_deep_copy(json_object_get(rec, "value"));
            break;
        }
    }
    json_decref(r);
    return x;
}

/* IFCA under ifca.estimate_mode = train with dropout, the CLI on the spec
 * of golden/layers/ifca-mlp-dropout-estimate-train.json: the result
 * writes the three estimate lists back as given (the run replays as
 * data); round 0's first participant's two estimate passes swapped (θ_0
 * scored with θ_1's masks and back) move its recorded losses F_i(θ_j), so
 * each estimate pass reads its own mask in cluster order, from its own
 * list; and the same spec under estimate_mode = eval, its estimate lists
 * removed, reports other models (the masks move the picks), which
 * diagnose names as ifca.estimate_mode = eval. */
START_TEST(test_ifca_estimate_masks)
{
    char *path = tu_repo_path("golden/layers/ifca-mlp-dropout-estimate-train.json");
    json_error_t je;
    json_t *vec = json_load_file(path, 0, &je);
    ck_assert_msg(vec != NULL, "%s: %s", path, je.text);
    json_t *spec = json_deep_copy(json_object_get(vec, "spec"));
    json_t *sched = json_object_get(spec, "schedule");
    json_t *r0 = json_array_get(json_object_get(sched, "rounds"), 0);
    char *dir = tu_tmpdir();
    json_t *v0 = final_v(dir, spec, "r0.json");
    /* written back */
    json_t *res = tu_json_load_in(dir, "r0.json");
    json_t *rs = json_object_get(res, "schedule");
    ck_assert(json_equal(json_object_get(rs, "init_partition_dropout"),
                         json_object_get(sched, "init_partition_dropout")));
    json_t *rr0 = json_array_get(json_object_get(rs, "rounds"), 0);
    ck_assert(json_equal(json_object_get(rr0, "estimate_dropout"),
                         json_object_get(r0, "estimate_dropout")));
    ck_assert(json_equal(json_object_get(rr0, "partition_dropout"),
                         json_object_get(r0, "partition_dropout")));
    json_decref(res);
    const long c0 = (long)json_integer_value(
        json_array_get(json_object_get(r0, "clients"), 0));
    json_t *loss0 = note_of(dir, "r0.json", "loss", 0, c0);
    ck_assert_ptr_nonnull(loss0);
    /* round 0, participant 0: its two estimate passes swapped */
    json_t *l0 = json_array_get(json_object_get(r0, "estimate_dropout"), 0);
    ck_assert_uint_eq(json_array_size(l0), 2);
    json_t *p0 = json_incref(json_array_get(l0, 0));
    json_t *p1 = json_incref(json_array_get(l0, 1));
    ck_assert(!json_equal(p0, p1));
    json_array_set(l0, 0, p1);
    json_array_set(l0, 1, p0);
    json_t *v1 = final_v(dir, spec, "r1.json");
    json_t *loss1 = note_of(dir, "r1.json", "loss", 0, c0);
    ck_assert_ptr_nonnull(loss1);
    ck_assert(!json_equal(json_array_get(loss0, 0), json_array_get(loss1, 0)));
    ck_assert(!json_equal(json_array_get(loss0, 1), json_array_get(loss1, 1)));
    json_array_set(l0, 0, p0);
    json_array_set(l0, 1, p1);
    json_decref(p0);
    json_decref(p1);
    /* evaluation-mode estimates: no estimate lists, other reported models */
    json_object_del(sched, "init_partition_dropout");
    size_t t;
    json_t *r;
    json_array_foreach(json_object_get(sched, "rounds"), t, r) {
        json_object_del(r, "estimate_dropout");
        json_object_del(r, "partition_dropout");
    }
    json_object_set_new(json_object_get(json_object_get(spec, "algorithm"),
                                        "switches"),
                        "ifca.estimate_mode", json_string("eval"));
    json_t *v2 = final_v(dir, spec, "r2.json");
    ck_assert(!json_equal(v0, v2));
    json_decref(v2);
    /* that run as a candidate of the vector: diagnose names the switch
     * (its variant runs without the estimate lists) */
    char cmd[PATH_MAX_TEST + 64];
    snprintf(cmd, sizeof cmd, "diagnose %s $D/r2.json", path);
    char *out = NULL, *errout = NULL;
    ck_assert_int_eq(tu_cli_in(dir, cmd, &out, &errout), 0);
    ck_assert_msg(strstr(out, "matches ifca preset paper except "
                              "ifca.estimate_mode = eval (instead of train)") !=
                  NULL, "%s%s", out, errout);
    free(out);
    free(errout);
    json_decref(v1);
    json_decref(loss1);
    json_decref(loss0);
    json_decref(v0);
    json_decref(spec);
    json_decref(vec);
    tu_remove_tree(dir);
    free(dir);
    free(path);
}
END_TEST

/* IFCA's Option I under ifca.estimate_mode = eval with dropout: each
 * participant's list holds one pass, its gradient g_i on its one batch (the
 * estimates take none).  Two clients, k = 2 given cluster models, one
 * round; the spec runs; client 1's mask with one entry flipped moves its
 * g_1 and so θ of its cluster (client 0's stays when it picked the other);
 * a second mask for client 0 is left over (exit 2). */
#define IFCA_G_SPEC(m1, extra) \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"layers\", " \
    "\"input\": [2], \"loss\": \"squared\", \"layers\": [{\"type\": \"dense\", " \
    "\"name\": \"fc\", \"out\": 3}, {\"type\": \"relu\"}, {\"type\": " \
    "\"dropout\", \"name\": \"d\", \"p\": 0.25}, {\"type\": \"dense\", " \
    "\"name\": \"out\", \"out\": 1}]}, \"problem\": {\"clients\": [{\"X\": " \
    "[[1, 2], [3, -1]], \"y\": [1, 2]}, {\"X\": [[-2, 0.5], [1, 1.5]], \"y\": " \
    "[-1, -3]}]}, \"init\": {\"kind\": \"zeros\", \"cluster_models\": " \
    "[[0.5, -0.25, 0.75, 0.25, -0.5, 1, 0.125, 0.25, -0.125, 0.5, -0.75, 0.375, 0.0625], " \
    "[-0.5, 0.25, 0.5, -0.75, 0.25, -1, 0.375, -0.25, 0.625, -0.5, 0.5, -0.375, " \
    "-0.0625]]}, \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\": " \
    "{\"gamma\": 0.25, \"ifca.k\": 2}, \"switches\": {\"ifca.mode\": " \
    "\"gradient\", \"ifca.estimate_mode\": \"eval\"}}, \"schedule\": {\"kind\": " \
    "\"given\", \"rounds\": [{\"clients\": [0, 1], \"batches\": [[[0, 1]], " \
    "[[0, 1]]], \"dropout\": [[{\"d\": [[1, 0, 1], [1, 1, 0]]}" extra "], " \
    "[{\"d\": " m1 "}]]}]}}"

static json_t *ifca_g_run(const char *dir, const char *spec_text,
                          const char *name, int want)
{
    json_error_t je;
    json_t *spec = json_loads(spec_text, 0, &je);
    ck_assert_msg(spec != NULL, "%s", je.text);
    tu_json_save_in(dir, "spec.json", spec);
    json_decref(spec);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "run $D/spec.json -o $D/%s", name);
    char *out = NULL, *errout = NULL;
    const int rc = tu_cli_in(dir, cmd, &out, &errout);
    ck_assert_msg(rc == want, "exit %d, %s", rc, errout);
    if (want == 2)
        ck_assert_msg(strstr(errout, "schedule.rounds[0].dropout[0]: round 0, "
                             "client 0 made 1 training passes, 2 given") != NULL,
                      "%s", errout);
    free(out);
    free(errout);
    if (want != 0)
        return NULL;
    json_t *r = tu_json_load_in(dir, name);
    json_t *v = json_deep_copy(json_object_get(json_object_get(r, "final"), "v"));
    json_decref(r);
    return v;
}

START_TEST(test_ifca_gradient_eval_dropout)
{
    char *dir = tu_tmpdir();
    json_t *v0 = ifca_g_run(dir, IFCA_G_SPEC("[[0, 1, 1], [1, 0, 1]]", ""), "r0.json", 0);
    json_t *v1 = ifca_g_run(dir, IFCA_G_SPEC("[[1, 1, 1], [1, 0, 1]]", ""), "r1.json", 0);
    ck_assert_msg(!json_equal(json_array_get(v0, 1), json_array_get(v1, 1)),
                  "client 1's flipped mask entry left its model");
    ifca_g_run(dir, IFCA_G_SPEC("[[0, 1, 1], [1, 0, 1]]",
                                ", {\"d\": [[1, 1, 0], [0, 1, 1]]}"), "r2.json", 2);
    json_decref(v0);
    json_decref(v1);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST
#undef IFCA_G_SPEC

Suite *dropout_suite(void)
{
    Suite *s = suite_create("dropout");
    TCase *tc = tcase_create("dropout");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_dropout_scale);
    tcase_add_test(tc, test_dropout_layout);
    tcase_add_loop_test(tc, test_dropout_fd, 0, 2);
    tcase_add_test(tc, test_dropout_identity);
    tcase_add_test(tc, test_dropout_p);
    tcase_add_loop_test(tc, test_dropout_post_recorded, 0, 2);
    tcase_add_loop_test(tc, test_dropout_algorithm_passes, 0, 5);
    tcase_add_loop_test(tc, test_ifca_estimate_mode, 0, 2);
    tcase_add_test(tc, test_ifca_estimate_masks);
    tcase_add_test(tc, test_ifca_gradient_eval_dropout);
    suite_add_tcase(s, tc);
    return s;
}
