/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_pfedme.c: pFedMe (ref/algorithms/pfedme.c).
 *
 * The worked example is shared/spec notes §2(g): f_i(θ) = ½(θ − c_i)²,
 * c = (4, −2), λ = 1, η_p = 1/4, K = 2, η = 1/2, R = 2, β = 1, w_0 = 0.
 * Every number in it is a dyadic rational with a small denominator, so
 * fp64 computes it exactly and the tests compare with ==.  The notes'
 * Appendix A script derives them in exact fractions.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* The notes' problem: f_i(θ) = ½(θ − c_i)², c = (4, −2), sample counts n
 * (NULL: 1 and 1); λ = 1, η_p = 1/4, K = 2, η = 1/2, the paper's switches.
 * The test adds its schedule and changes what it varies. */
static tb_case *notes_case(const size_t *n)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, n ? n[0] : 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, n ? n[1] : 1);
    c->hyper.lambda = 1.0;
    c->hyper.eta_p = 0.25;
    c->hyper.K = 2;
    c->hyper.eta = 0.5;
    return c;
}

/* The official code's reading (preset "official"), with μ = 0 when mu0. */
static void official(tb_case *c, int mu0)
{
    tb_preset(c, "pfedme", "official");
    if (mu0)
        c->hyper.pfedme.mu = 0.0;
}

/* Run pFedMe for `rounds` generated rounds of two steps, return the final
 * w (one parameter) and the final v of both clients, and free c. */
static void run_notes(tb_case *c, size_t rounds, double *w, double v[2])
{
    tb_generate(c, rounds, 2, 0);
    pflref_run_result *res = tb_run(c, "pfedme", NULL);
    *w = res->w[0];
    v[0] = res->v[0];
    v[1] = res->v[1];
    pflref_run_result_free(res);
    tb_free(c);
}

/* Paper reading (θ reset to w_{i,r}): w_1 = 87/256, w_2 = 36975/65536;
 * the personalised models are the last θ. */
START_TEST(test_notes_paper)
{
    /* req: pfedme.alg1.l5, pfedme.alg1.l7, pfedme.alg1.l8, pfedme.alg1.l10 */
    double w, v[2];
    run_notes(notes_case(NULL), 1, &w, v);
    ck_assert_double_eq(w, 87.0 / 256.0);
    ck_assert_double_eq(v[0], 1.96875);
    ck_assert_double_eq(v[1], -0.984375);
    run_notes(notes_case(NULL), 2, &w, v);
    ck_assert_double_eq(w, 36975.0 / 65536.0);
    /* PM (2.141326904, −0.8117980957): the θ recursion of round 2 */
    ck_assert_double_eq_tol(v[0], 2.141326904, 5e-10);
    ck_assert_double_eq_tol(v[1], -0.8117980957, 5e-11);
}
END_TEST

/* The official code's reading: θ warm-started, μ = 0: w_1 = 93/256,
 * w_2 = 38967/65536; the preset's μ = 0.001 gives the notes' row
 * 0.3631679893, 0.5943130991 (printed to 10 digits). */
START_TEST(test_notes_official)
{
    double w, v[2];
    tb_case *c = notes_case(NULL);
    official(c, 1);
    run_notes(c, 1, &w, v);
    ck_assert_double_eq(w, 93.0 / 256.0);
    /* personal_eval = local_w: the "personalised" models are w_{i,R} */
    ck_assert_double_eq(v[0], 1.453125);
    ck_assert_double_eq(v[1], -0.7265625);
    c = notes_case(NULL);
    official(c, 1);
    run_notes(c, 2, &w, v);
    ck_assert_double_eq(w, 38967.0 / 65536.0);
    c = notes_case(NULL);
    official(c, 0);
    run_notes(c, 1, &w, v);
    ck_assert_double_eq_tol(w, 0.3631679893, 5e-11);
    c = notes_case(NULL);
    official(c, 0);
    run_notes(c, 2, &w, v);
    ck_assert_double_eq_tol(w, 0.5943130991, 5e-11);
}
END_TEST

/* β: w_{t+1} = (1 − β) w_t + β·avg; from w_0 = 0, β = 2 doubles the first
 * round's average (87/128); the notes' second round gives 0.8973999023. */
START_TEST(test_beta)
{
    /* req: pfedme.alg1.l10 */
    double w1, w2, v[2];
    tb_case *c = notes_case(NULL);
    c->hyper.beta = 2.0;
    run_notes(c, 1, &w1, v);
    ck_assert_double_eq(w1, 2.0 * 87.0 / 256.0);
    c = notes_case(NULL);
    c->hyper.beta = 2.0;
    run_notes(c, 2, &w2, v);
    ck_assert_double_eq_tol(w2, 0.8973999023, 5e-11);
    c = notes_case(NULL);
    official(c, 1);
    c->hyper.beta = 2.0;
    run_notes(c, 2, &w2, v);
    ck_assert_double_eq_tol(w2, 0.9252319336, 5e-11);
}
END_TEST

/* Sample weights with n = (1, 3) (official reading, μ = 0):
 * w_1 = (1.453125 − 3·0.7265625)/4 = −0.181640625. */
START_TEST(test_weights_samples)
{
    static const size_t n[2] = {1, 3};
    double w, v[2];
    tb_case *c = notes_case(n);
    official(c, 1);
    run_notes(c, 1, &w, v);
    ck_assert_double_eq(w, -0.181640625);
    c = notes_case(n);
    official(c, 1);
    run_notes(c, 2, &w, v);
    ck_assert_double_eq_tol(w, -0.2972946167, 5e-11);
    /* the paper's uniform weights ignore n */
    run_notes(notes_case(n), 1, &w, v);
    ck_assert_double_eq(w, 87.0 / 256.0);
}
END_TEST

/* All clients train, only S^t is aggregated: S^1 = {0}, S^2 = {1} gives
 * w_1 = w_{1,R} = 1.359375 and w_2 = 0.2177124023 (notes §2(g)); both
 * clients' θ are updated every round. */
START_TEST(test_train_all_sampled_subset)
{
    /* req: pfedme.alg1.l4, pfedme.alg1.l9 */
    tb_case *c = notes_case(NULL);
    tb_round_selected(c, "0 1", "0", "0 | 0", "0 | 0");
    tb_round_selected(c, "0 1", "1", "0 | 0", "0 | 0");
    pflref_run_result *res = tb_run(c, "pfedme", NULL);
    ck_assert_double_eq_tol(res->w[0], 0.2177124023, 5e-11);
    /* client 0's θ in round 2 starts from w_1 = 1.359375 ≠ 0 */
    ck_assert_double_ne(res->v[0], 1.96875);
    pflref_run_result_free(res);
    tb_free(c);
    /* pfedme.train = all refuses a round in which not every client trains */
    c = notes_case(NULL);
    tb_round(c, "0", "0 | 0");
    pflref_error err;
    tb_run_error(c, "pfedme", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients");
    ck_assert_ptr_nonnull(strstr(err.message, "pfedme.train = all"));
    tb_free(c);
}
END_TEST

/* pfedme.train = sampled: only S^t trains; a client outside it keeps its
 * personalised model (here the initial 0 for client 1). */
START_TEST(test_train_sampled)
{
    tb_case *c = notes_case(NULL);
    c->hyper.pfedme.train = PFLREF_PFEDME_TRAIN_SAMPLED;
    tb_round(c, "0", "0 | 0");
    pflref_run_result *res = tb_run(c, "pfedme", NULL);
    ck_assert_double_eq(res->w[0], 1.359375);
    ck_assert_double_eq(res->v[0], 1.96875);
    ck_assert_double_eq(res->v[1], 0.0);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* pfedme.personal_eval: theta (last θ), local_w (w_{i,R}), global (w). */
START_TEST(test_personal_eval)
{
    double w, v[2];
    tb_case *c = notes_case(NULL);
    c->hyper.pfedme.personal_eval = PFLREF_PFEDME_EVAL_LOCAL_W;
    run_notes(c, 2, &w, v);
    ck_assert_double_eq(v[0], 103791.0 / 65536.0);
    ck_assert_double_eq(v[1], -29841.0 / 65536.0);
    c = notes_case(NULL);
    c->hyper.pfedme.personal_eval = PFLREF_PFEDME_EVAL_GLOBAL;
    run_notes(c, 2, &w, v);
    ck_assert_double_eq(v[0], 36975.0 / 65536.0);
    ck_assert_double_eq(v[1], 36975.0 / 65536.0);
}
END_TEST

/* The local update direction is λ(w − θ̂(w)), the gradient of the Moreau
 * envelope F_i(w) = min_θ f_i(θ) + (λ/2)‖θ − w‖².  For f = ½ a (θ − c)²
 * the envelope is (aλ / (2(a + λ))) (w − c)², so with the inner problem
 * solved to convergence (K = 200, η_p(a + λ) = 0.8), one local round
 * (R = 1) from w gives (w − w_{i,1})/η = aλ(w − c)/(a + λ). */
START_TEST(test_moreau_gradient)
{
    /* req: pfedme.moreau_grad, pfedme.alg1.l8 */
    const double a = 2.385, c = 1.5, lambda = 1.9, eta = 0.125, w0 = -0.75;
    tb_case *pc = tb_quadratic(1, 1);
    tb_quad(pc, 0, &a, &c, 1);
    tb_w0(pc, &w0);
    pc->hyper.lambda = lambda;
    pc->hyper.eta_p = 0.8 / (a + lambda);
    pc->hyper.K = 200;
    pc->hyper.eta = eta;
    tb_generate(pc, 1, 1, 0);
    pflref_run_result *res = tb_run(pc, "pfedme", NULL);
    const double direction = (w0 - res->w[0]) / eta;
    const double envelope_grad = a * lambda * (w0 - c) / (a + lambda);
    ck_assert_msg(fabs(direction - envelope_grad) <= 1e-13,
                  "(w − w_{i,1})/η = %.17g, ∇F_i(w) = %.17g", direction,
                  envelope_grad);
    pflref_run_result_free(res);
    tb_free(pc);
}
END_TEST

/* Three clients of distinct data and sample counts, listed in the order
 * `order` (a permutation of 0, 1, 2); pfedme.weights samples, β = 1.5. */
static tb_case *order_case(const size_t order[3])
{
    static const double a[3] = {2.385, 0.75, 1.3}, c[3] = {1.5, -1.25, 0.7};
    static const size_t n[3] = {2, 5, 3};
    tb_case *pc = tb_quadratic(1, 3);
    for (size_t i = 0; i < 3; i++)
        tb_quad(pc, i, &a[order[i]], &c[order[i]], n[order[i]]);
    pc->hyper.lambda = 1.0;
    pc->hyper.eta_p = 0.25;
    pc->hyper.K = 2;
    pc->hyper.eta = 0.5;
    pc->hyper.beta = 1.5;
    pc->hyper.pfedme.weights = PFLREF_PFEDME_WEIGHTS_SAMPLES;
    tb_generate(pc, 2, 2, 0);
    return pc;
}

/* Listing the clients in another order relabels them and nothing else:
 * with three clients of distinct data and sample weights, the global model
 * is the same up to the order of a three-term sum, and each client's θ is
 * the same. */
START_TEST(test_client_order)
{
    tb_case *s1 = order_case((const size_t[]){0, 1, 2});
    tb_case *s2 = order_case((const size_t[]){2, 1, 0});
    pflref_run_result *r1 = tb_run(s1, "pfedme", NULL);
    pflref_run_result *r2 = tb_run(s2, "pfedme", NULL);
    tu_assert_relabelled(r1, r2, 4e-16, 1e-15);
    pflref_run_result_free(r1);
    pflref_run_result_free(r2);
    tb_free(s1);
    tb_free(s2);
}
END_TEST

/* Divergence is reported with round, client and step. */
START_TEST(test_divergence)
{
    /* η = 1e200: w_{i,1} = 1.5e200 is finite, w_{i,2} overflows */
    tb_case *c = tb_quadratic(1, 1);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    c->hyper.lambda = 1.0;
    c->hyper.eta_p = 0.25;
    c->hyper.K = 2;
    c->hyper.eta = 1e200;
    tb_generate(c, 1, 2, 0);
    pflref_error err;
    tb_run_error(c, "pfedme", PFLREF_EDIVERGE, &err);
    ck_assert_msg(strstr(err.message, "round 0, client 0, local step 2") !=
                          NULL &&
                      strstr(err.message, "w_local") != NULL,
                  "message: %s", err.message);
    tb_free(c);
}
END_TEST

/* pfedme.eval_reset = initial (PFLlib's evaluation defect), by hand on
 * f_1 = ½(x − 4)², f_2 = ½(x + 2)²: η = ½, λ = 1, η_p = ¼, K = 1, β = 1,
 * μ = 0, θ warm, only the sampled train; round 0 trains client 0 alone,
 * round 1 client 1 alone (one batch each).  Round 0: θ = 0 → 1, w_0 = ½,
 * w¹ = ½.  Round 1, client 1, w_{1,0} = ½: from θ = w¹ = ½ (no defect)
 * θ → −⅛, w_{1,1} = 0.1875; from θ = w⁰ = 0 (defect) θ → −⅜,
 * w_{1,1} = 0.0625.  θ reset at every local round hides the defect. */
static double eval_reset_run(int defect, int warm)
{
    tb_case *c = notes_case(NULL);
    tb_preset(c, "pfedme", "pfllib");
    c->hyper.pfedme.mu = 0.0;
    c->hyper.pfedme.personal_eval = PFLREF_PFEDME_EVAL_THETA;
    c->hyper.pfedme.theta_start = warm ? PFLREF_PFEDME_THETA_WARM
                                       : PFLREF_PFEDME_THETA_RESET;
    c->hyper.pfedme.eval_reset = defect ? PFLREF_PFEDME_EVAL_RESET_INITIAL
                                        : PFLREF_PFEDME_EVAL_RESET_NONE;
    c->hyper.eta = 0.5;
    c->hyper.lambda = 1.0;
    c->hyper.eta_p = 0.25;
    c->hyper.K = 1;
    c->hyper.beta = 1.0;
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    pflref_run_result *r = tb_run(c, "pfedme", NULL);
    const double w = r->w[0];
    pflref_run_result_free(r);
    tb_free(c);
    return w;
}

START_TEST(test_eval_reset)
{
    ck_assert_double_eq(eval_reset_run(0, 1), 0.1875);
    ck_assert_double_eq(eval_reset_run(1, 1), 0.0625);
    ck_assert_double_eq(eval_reset_run(1, 0), eval_reset_run(0, 0));
    pflref_golden_report rep;
    tu_golden("golden/pfedme/worked-linear-pfllib-eval-reset.json", &rep);
    ck_assert_msg(rep.numbers > 0 && rep.mismatches == 0,
                  "linear-pfllib-eval-reset: %zu of %zu quantities differ",
                  rep.mismatches, rep.quantities);
}
END_TEST

/* The preset pfllib_run is pfllib and PFLlib's evaluation side effect
 * (serverpFedMe.py's train() as shipped): it sets what pfllib sets and
 * pfedme.eval_reset = initial, and its vector (no switch of its own but
 * the decay) runs as the generator's replay of that bundle. */
START_TEST(test_preset_pfllib_run)
{
    /* req: pfedme.preset.pfllib_run */
    pflref_hyper run, lib;
    pflref_hyper_defaults(&run);
    pflref_hyper_defaults(&lib);
    pflref_error err;
    ck_assert_int_eq(pflref_preset_apply(&run, "pfedme", "pfllib_run",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(pflref_preset_apply(&lib, "pfedme", "pfllib",
                                         "algorithm.preset", &err),
                     PFLREF_OK);
    ck_assert_int_eq(run.pfedme.eval_reset, PFLREF_PFEDME_EVAL_RESET_INITIAL);
    ck_assert_int_eq(lib.pfedme.eval_reset, PFLREF_PFEDME_EVAL_RESET_NONE);
    run.pfedme.eval_reset = lib.pfedme.eval_reset;   /* the one difference */
    ck_assert_msg(memcmp(&run.pfedme, &lib.pfedme, sizeof run.pfedme) == 0 &&
                      memcmp(&run.lr, &lib.lr, sizeof run.lr) == 0,
                  "pfllib_run differs from pfllib beyond eval_reset");
    pflref_golden_report rep;
    tu_golden("golden/pfedme/worked-linear-pfllib-run.json", &rep);
    ck_assert_msg(rep.numbers > 0 && rep.mismatches == 0,
                  "linear-pfllib-run: %zu of %zu quantities differ",
                  rep.mismatches, rep.quantities);
}
END_TEST

/* The client optimizer steps θ in the inner solver (Alg. 1 l. 7), line 8
 * stays the paper's.  The notes' problem, one local round (R = 1), K = 2,
 * opt.momentum = 1/2 (torch's form: b ← d at the first step, then
 * b ← ½ b + d; θ ← θ − η_p b) on d = (θ − c_i) + λ(θ − w_{i,0}):
 *   client 0 (c = 4):  d = −4, b = −4, θ = 1;  d = −2, b = −4, θ = 2;
 *                      w_{0,1} = 0 − ½(0 − 2) = 1
 *   client 1 (c = −2): d = 2, b = 2, θ = −1/2;  d = 1, b = 2, θ = −1;
 *                      w_{1,1} = −1/2
 *   w_1 = (1 − 1/2)/2 = 1/4;  v = (2, −1)
 * where plain SGD gives θ = 3/2, −3/4 and w_1 = 3/16. */
START_TEST(test_inner_momentum)
{
    /* req: pfedme.alg1.l7, pfedme.alg1.l8 */
    tb_case *c = notes_case(NULL);
    c->hyper.opt.momentum = 0.5;
    tb_round(c, "0 1", "0", "0");
    pflref_run_result *res = tb_run(c, "pfedme", NULL);
    ck_assert_msg(res->w[0] == 0.25 && res->v[0] == 2.0 && res->v[1] == -1.0,
                  "momentum 1/2 in the inner solver: w_1 = %.17g, θ = "
                  "(%.17g, %.17g); by hand 1/4, (2, −1)", res->w[0],
                  res->v[0], res->v[1]);
    pflref_run_result_free(res);
    tb_free(c);
    c = notes_case(NULL);
    tb_round(c, "0 1", "0", "0");
    res = tb_run(c, "pfedme", NULL);
    ck_assert_msg(res->w[0] == 0.1875 && res->v[0] == 1.5 &&
                      res->v[1] == -0.75,
                  "plain SGD: w_1 = %.17g, θ = (%.17g, %.17g); by hand 3/16, "
                  "(3/2, −3/4)", res->w[0], res->v[0], res->v[1]);
    pflref_run_result_free(res);
    tb_free(c);
}
END_TEST

/* opt.state: the inner optimizer lives through a client update's R inner
 * solves (reset: new at the next update), or across rounds (client): two
 * rounds of two local rounds give three different runs for reset, client
 * and server; and under reset, a run whose second round repeats the first
 * round's w_t starts its optimizer afresh (the golden vectors pin the
 * values: golden/pfedme/optim-*.json). */
START_TEST(test_inner_optimizer_lifetime)
{
    static const int lives[] = {PFLREF_OPT_STATE_RESET,
                                PFLREF_OPT_STATE_CLIENT,
                                PFLREF_OPT_STATE_SERVER};
    double w[3];
    for (size_t q = 0; q < 3; q++) {
        tb_case *c = notes_case(NULL);
        c->hyper.opt.momentum = 0.5;
        c->hyper.opt.state = lives[q];
        tb_round(c, "0 1", "0 | 0", "0 | 0");
        tb_round(c, "0 1", "0 | 0", "0 | 0");
        pflref_run_result *res = tb_run(c, "pfedme", NULL);
        w[q] = res->w[0];
        pflref_run_result_free(res);
        tb_free(c);
    }
    ck_assert_msg(w[0] != w[1] && w[1] != w[2] && w[0] != w[2],
                  "opt.state reset, client, server give w_2 = %.17g, %.17g, "
                  "%.17g: the lifetime is not reaching the inner solver",
                  w[0], w[1], w[2]);
    tu_assert_golden("golden/pfedme/optim-momentum-decay-client.json");
    tu_assert_golden("golden/pfedme/optim-adam-reset.json");
}
END_TEST

/* Batch normalisation (bn.running = update): θ's K training passes move
 * its running statistics, and w_{i,r+1} takes θ's.  The mlp with bn of
 * tests/test_bn_running.c (d = h = k = 1, ε = 0, ρ = 1/4; W1 = 2, b1 =
 * 1/2 get a zero gradient, so a = 2x + 1/2 on every pass): client 0's
 * batch {x = 1, 3}: a = 5/2, 13/2, μ_B = 9/2, unbiased s² = 8; two passes
 *   r_μ = 9/8, then (3/4)(9/8) + (1/4)(9/2) = 63/32
 *   r_v = 11/4, then (3/4)(11/4) + (1/4)·8 = 65/16
 * client 1's batch {x = 3/2, −2}: a = 7/2, −7/2, μ_B = 0, s² = 49/2:
 *   r_μ = 0,  r_v = 55/8, then (3/4)(55/8) + 49/8 = 361/32
 * Line 8 (ηλ = 1/5) would have moved w's statistics only a fifth of the
 * way; the server (β = 1, uniform) averages w_{i,1}'s: r_μ = 63/64,
 * r_v = (130 + 361)/64 = 491/64. */
#define BN_SPEC(switches)                                                    \
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", "       \
    "\"d\": 1, \"h\": 1, \"k\": 1, \"loss\": \"squared\", \"bn\": true, "   \
    "\"bn_eps\": 0, \"bn_momentum\": 0.25}, \"problem\": {\"clients\": "    \
    "[{\"X\": [[1], [3], [2]], \"y\": [0.5, -1.25, 2]}, {\"X\": [[1.5], "   \
    "[-2], [0.5]], \"y\": [1, 0.25, -0.75]}]}, \"init\": {\"kind\": "       \
    "\"given\", \"w\": [2, 0.5, 1, 0, 0, 1, 0.75, 0.1]}, \"algorithm\": "   \
    "{\"name\": \"pfedme\", \"hyperparameters\": {\"eta\": 0.1, "           \
    "\"lambda\": 2, \"eta_p\": 0.05, \"K\": 2}, \"switches\": {" switches    \
    "}}, \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": "   \
    "[0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}]}}"
enum { BN_W1 = 0, BN_B1 = 1, BN_MU = 4, BN_VAR = 5, BN_P = 8 };

static pflref_run_result *bn_run(const char *text)
{
    pflref_spec *spec = tu_spec(text);
    pflref_run_result *res = tu_run(spec, NULL);
    pflref_spec_free(spec);
    ck_assert_uint_eq(res->P, BN_P);
    return res;
}

START_TEST(test_bn_running)
{
    /* req: pfedme.alg1.l7, pfedme.alg1.l8 */
    pflref_run_result *res = bn_run(BN_SPEC(""));
    const double *v0 = res->v, *v1 = res->v + BN_P;
    ck_assert_msg(fabs(v0[BN_MU] - 63.0 / 32.0) < 1e-13 &&
                      fabs(v0[BN_VAR] - 65.0 / 16.0) < 1e-13,
                  "client 0's θ: r_μ = %.17g, r_v = %.17g; two passes of "
                  "PyTorch's rule give 63/32, 65/16", v0[BN_MU], v0[BN_VAR]);
    ck_assert_msg(fabs(v1[BN_MU]) < 1e-13 &&
                      fabs(v1[BN_VAR] - 361.0 / 32.0) < 1e-13,
                  "client 1's θ: r_μ = %.17g, r_v = %.17g; by hand 0, "
                  "361/32", v1[BN_MU], v1[BN_VAR]);
    ck_assert_msg(fabs(res->w[BN_MU] - 63.0 / 64.0) < 1e-13 &&
                      fabs(res->w[BN_VAR] - 491.0 / 64.0) < 1e-13,
                  "w_1: r_μ = %.17g, r_v = %.17g; the average of θ's is "
                  "63/64, 491/64 (line 8 on them would give 63/320 and "
                  "1 + (491/64 − 1)/5)", res->w[BN_MU], res->w[BN_VAR]);
    /* the premise of the hand-working: W1, b1 stay */
    ck_assert(fabs(v0[BN_W1] - 2.0) < 1e-14 && fabs(v0[BN_B1] - 0.5) < 1e-14);
    pflref_run_result_free(res);
    /* bn.running = frozen: r_μ, r_v stay init.w's in θ and w (the inner
     * step no longer pulls the buffers) */
    res = bn_run(BN_SPEC("\"bn.running\": \"frozen\""));
    ck_assert_msg(res->w[BN_MU] == 0.0 && res->w[BN_VAR] == 1.0 &&
                      res->v[BN_MU] == 0.0 && res->v[BN_VAR] == 1.0,
                  "frozen moved the running statistics: w (%.17g, %.17g), "
                  "θ_0 (%.17g, %.17g)", res->w[BN_MU], res->w[BN_VAR],
                  res->v[BN_MU], res->v[BN_VAR]);
    pflref_run_result_free(res);
    tu_assert_golden("golden/pfedme/layers-bn1d-mlp-update.json");
}
END_TEST

Suite *pfedme_suite(void)
{
    Suite *s = suite_create("pfedme");
    TCase *tc = tcase_create("pfedme");
    tcase_add_test(tc, test_notes_paper);
    tcase_add_test(tc, test_notes_official);
    tcase_add_test(tc, test_beta);
    tcase_add_test(tc, test_weights_samples);
    tcase_add_test(tc, test_train_all_sampled_subset);
    tcase_add_test(tc, test_train_sampled);
    tcase_add_test(tc, test_personal_eval);
    tcase_add_test(tc, test_moreau_gradient);
    tcase_add_test(tc, test_client_order);
    tcase_add_test(tc, test_divergence);
    tcase_add_test(tc, test_eval_reset);
    tcase_add_test(tc, test_preset_pfllib_run);
    tcase_add_test(tc, test_inner_momentum);
    tcase_add_test(tc, test_inner_optimizer_lifetime);
    tcase_add_test(tc, test_bn_running);
    suite_add_tcase(s, tc);
    return s;
}
