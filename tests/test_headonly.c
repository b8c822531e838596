/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_headonly.c: head-only work where the paper does head-only
 * work (issue 17, item 4): the gradient on the marked blocks
 * (pflref_model_grad_blocks) of an mlp whose marked blocks are the head
 * is the head of pflref_model_grad bit for bit, leaves the body entries
 * alone and makes no backward pass through the body; runs that step only
 * the head (FedRep's v steps, PFLEGO's cheap steps, fine-tuning the
 * head) are bit-reproducible and never move the body there.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

enum { D = 5, H = 4, K = 3, NB = 6 };

/* An mlp 5 → 4 → 3 with both biases (P = 20 + 4 + 12 + 3 = 39), six
 * samples, and w with high-entropy entries (no coincidental zeros). */
static pflref_model mlp(void)
{
    return tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, D, K, H, PFLREF_ACT_RELU, 1, 1);
}

static void fill(double *X, double *y, double *w, size_t P)
{
    for (size_t q = 0; q < NB * D; q++)
        X[q] = sin(1.7 * (double)q + 0.3) * 1.385;
    for (size_t j = 0; j < NB; j++)
        y[j] = (double)((j * 2 + 1) % K);
    for (size_t p = 0; p < P; p++)
        w[p] = cos(0.9 * (double)p + 0.11) * 0.735;
}

/* The head's gradient alone: bit for bit the full gradient's head
 * entries, the body entries untouched (a sentinel stays), one body
 * forward pass and no body backward pass. */
START_TEST(test_grad_blocks_head)
{
    pflref_model m = mlp();
    const size_t P = m.P;
    double X[NB * D], y[NB], w[39], full[39], part[39];
    ck_assert_uint_eq(P, 39);
    fill(X, y, w, P);
    pflref_data Dt = {.n = NB, .X = X, .y = y};
    pflref_split split;
    const char *head[] = {"head"};
    ck_assert_int_eq(pflref_split_from_names(&m, head, 1, "split", &split,
                                             NULL), PFLREF_OK);
    unsigned char mask[39];
    pflref_split_mask(&m, &split, mask);
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, NB);
    double Ffull, Fpart;
    ck_assert_int_eq(pflref_model_grad(&m, w, &Dt, NULL, NB, ws, full,
                                       &Ffull), PFLREF_OK);
    for (size_t p = 0; p < P; p++)
        part[p] = 12345.678;
    size_t f0, b0, f1, b1;
    pflref_model_workspace_passes(ws, &f0, &b0);
    ck_assert_int_eq(pflref_model_grad_blocks(&m, w, &Dt, NULL, NB, mask, ws,
                                              part, &Fpart), PFLREF_OK);
    pflref_model_workspace_passes(ws, &f1, &b1);
    ck_assert_uint_eq(f1 - f0, 1);
    ck_assert_uint_eq(b1 - b0, 0);
    ck_assert_msg(memcmp(&Ffull, &Fpart, sizeof Ffull) == 0, "loss differs");
    for (size_t p = 0; p < P; p++) {
        if (mask[p])
            ck_assert_msg(memcmp(&full[p], &part[p], sizeof part[p]) == 0,
                          "head entry %zu: %.17g, full gradient %.17g", p,
                          part[p], full[p]);
        else
            ck_assert_msg(part[p] == 12345.678,
                          "body entry %zu was written", p);
    }
    pflref_model_workspace_free(ws);
}
END_TEST

/* A mask with a body block (or none) is the full gradient, every entry. */
START_TEST(test_grad_blocks_body)
{
    pflref_model m = mlp();
    const size_t P = m.P;
    double X[NB * D], y[NB], w[39], full[39], part[39];
    fill(X, y, w, P);
    pflref_data Dt = {.n = NB, .X = X, .y = y};
    pflref_split split;
    const char *input[] = {"b1"};
    ck_assert_int_eq(pflref_split_from_names(&m, input, 1, "split", &split,
                                             NULL), PFLREF_OK);
    unsigned char mask[39];
    pflref_split_mask(&m, &split, mask);
    pflref_model_workspace *ws = pflref_model_workspace_alloc(&m, NB);
    ck_assert_int_eq(pflref_model_grad(&m, w, &Dt, NULL, NB, ws, full, NULL),
                     PFLREF_OK);
    const unsigned char *masks[] = {mask, NULL};
    for (size_t k = 0; k < 2; k++) {
        ck_assert_int_eq(pflref_model_grad_blocks(&m, w, &Dt, NULL, NB,
                                                  masks[k], ws, part, NULL),
                         PFLREF_OK);
        ck_assert_msg(memcmp(full, part, sizeof full) == 0,
                      "mask %zu: not the full gradient", k);
    }
    pflref_model_workspace_free(ws);
}
END_TEST

/* FedRep (FedAlt, head personal) on an mlp, 2 clients, 2 rounds of 3 v
 * steps and 2 u steps, then fine-tuning of the head: run twice, the
 * results agree bit for bit; the personal models' body is the shared u
 * (the v steps and the fine-tuning never moved it). */
START_TEST(test_fedrep_head_reproducible)
{
    pflref_model m = mlp();
    const size_t P = m.P;
    double X[NB * D], y[NB], w0[39];
    fill(X, y, w0, P);
    pflref_run_result *res[2];
    for (size_t r = 0; r < 2; r++) {
        tb_case *c = tb_new(&m, 2);
        tb_train(c, 0, NB, X, y);
        tb_train(c, 1, 4, X + 2 * D, y + 2);
        tb_w0(c, w0);
        tb_split(c, "head");
        c->hyper.gamma_u = 0.05;
        c->hyper.gamma_v = 0.2;
        c->hyper.tau_v = 3;
        c->hyper.eta_ft = 0.15;
        for (size_t t = 0; t < 2; t++)
            tb_round(c, "0 1", "0 1 | 2 3 | 4 5 | 1 3 | 0 2",
                     "0 1 | 2 3 | 1 2 | 0 3 | 3");
        tb_post(c, "5 4 | 0", "2 | 1 0");
        res[r] = tb_run(c, "fedalt", NULL);
        tb_free(c);
    }
    ck_assert_msg(memcmp(res[0]->w, res[1]->w, P * sizeof(double)) == 0,
                  "u differs run to run");
    ck_assert_msg(memcmp(res[0]->v, res[1]->v, 2 * P * sizeof(double)) == 0,
                  "v_i differ run to run");
    const size_t body = D * H + H;          /* W1, b1 */
    for (size_t i = 0; i < 2; i++)
        ck_assert_msg(memcmp(res[0]->v + i * P, res[0]->w,
                             body * sizeof(double)) == 0,
                      "client %zu's body is not u", i);
    pflref_run_result_free(res[0]);
    pflref_run_result_free(res[1]);
}
END_TEST

Suite *headonly_suite(void)
{
    Suite *s = suite_create("headonly");
    TCase *tc = tcase_create("headonly");
    tcase_add_test(tc, test_grad_blocks_head);
    tcase_add_test(tc, test_grad_blocks_body);
    tcase_add_test(tc, test_fedrep_head_reproducible);
    suite_add_tcase(s, tc);
    return s;
}
