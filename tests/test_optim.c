/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_optim.c: the client optimizers (ref/engine/optim.c, wired
 * into the local solver ref/engine/sgd.c; docs/optimizers.md).
 *
 * The step function on cases worked by hand (dyadic numbers, compared
 * with ==, where the rule has no square root; Adam and clipping against
 * their hand values to a few ulps), the lifetimes of the state on runs,
 * the default's bit-identity with plain SGD, the golden vectors of
 * golden/optim/, and every refusal through the CLI (exit 2, the key's
 * path and the message, no result written).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"
#include "engine/engine.h"

/* The linear model with bias, d = 2: blocks w (2), b (1); P = 3. */
static pflref_model linear_model(void)
{
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 2, 1, 0, 1, &err),
                     PFLREF_OK);
    ck_assert_uint_eq(m.P, 3);
    return m;
}

/* A state with b and v of 3 entries, zeroed, for rule o. */
typedef struct {
    pflref_opt_hyper o;
    double b[3], v[3];
    pflref_optim_state st;
} one_state;

static void state_init(one_state *s)
{
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    s->o = h.opt;
    memset(s->b, 0, sizeof s->b);
    memset(s->v, 0, sizeof s->v);
    memset(&s->st, 0, sizeof s->st);
    s->st.rule = &s->o;
    s->st.b = s->b;
    s->st.v = s->v;
}

static const double D1[3] = {0.5, -1.0, 2.0};
static const double D2[3] = {1.0, 1.0, -1.0};

static void assert_theta(const double *theta, const double *want,
                         double rtol, const char *what)
{
    for (int p = 0; p < 3; p++)
        ck_assert_msg(fabs(theta[p] - want[p]) <= rtol * fabs(want[p]),
                      "%s: theta[%d] = %.17g, expected %.17g", what, p,
                      theta[p], want[p]);
}

/* torch SGD, μ = ½, τ = ¼, η = ⅛ from θ = (1, 2, 3):
 *   step 1: b = d₁ (undampened);  θ = θ − η d₁ = (0.9375, 2.125, 2.75)
 *   step 2: b = ½ d₁ + ¾ d₂ = (1, 0.25, 0.25);
 *           θ = (0.8125, 2.09375, 2.71875) */
START_TEST(test_sgd_momentum_pytorch)
{
    pflref_model m = linear_model();
    one_state s;
    state_init(&s);
    s.o.momentum = 0.5;
    s.o.dampening = 0.25;
    double theta[3] = {1, 2, 3}, d[3];
    memcpy(d, D1, sizeof d);
    ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.125, d, theta));
    assert_theta(theta, (const double[]){0.9375, 2.125, 2.75}, 0, "step 1");
    memcpy(d, D2, sizeof d);
    ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.125, d, theta));
    assert_theta(theta, (const double[]){0.8125, 2.09375, 2.71875}, 0,
                 "step 2");
    ck_assert_uint_eq(s.st.t[0], 2);
    ck_assert_uint_eq(s.st.t[1], 2);
}
END_TEST

/* μ = ½, τ = 0, η = ⅛ then ¼ (a decayed step size, lr.* in reverse):
 *   classical: v₁ = −⅛ d₁, θ₁ = (0.9375, 2.125, 2.75);
 *              v₂ = ½ v₁ − ¼ d₂ = (−0.28125, −0.1875, 0.125),
 *              θ₂ = (0.65625, 1.9375, 2.875)
 *   pytorch:   b₂ = ½ d₁ + d₂ = (1.25, 0.5, 0), θ₂ = (0.625, 2, 2.75) */
START_TEST(test_sgd_momentum_forms_differ_when_eta_changes)
{
    pflref_model m = linear_model();
    for (int classical = 0; classical < 2; classical++) {
        one_state s;
        state_init(&s);
        s.o.momentum = 0.5;
        s.o.momentum_form = classical ? PFLREF_OPT_MOMENTUM_CLASSICAL
                                      : PFLREF_OPT_MOMENTUM_PYTORCH;
        double theta[3] = {1, 2, 3}, d[3];
        memcpy(d, D1, sizeof d);
        ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.125, d, theta));
        assert_theta(theta, (const double[]){0.9375, 2.125, 2.75}, 0,
                     "step 1 (both forms)");
        memcpy(d, D2, sizeof d);
        ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.25, d, theta));
        if (classical)
            assert_theta(theta, (const double[]){0.65625, 1.9375, 2.875}, 0,
                         "classical step 2");
        else
            assert_theta(theta, (const double[]){0.625, 2.0, 2.75}, 0,
                         "pytorch step 2");
    }
}
END_TEST

/* Nesterov, μ = ½, η = ⅛: step 1 d ← d₁ + ½ b = 1.5 d₁;
 * θ = (0.90625, 2.1875, 2.625). */
START_TEST(test_sgd_nesterov)
{
    pflref_model m = linear_model();
    one_state s;
    state_init(&s);
    s.o.momentum = 0.5;
    s.o.nesterov = PFLREF_OPT_NESTEROV_ON;
    double theta[3] = {1, 2, 3}, d[3];
    memcpy(d, D1, sizeof d);
    ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.125, d, theta));
    assert_theta(theta, (const double[]){0.90625, 2.1875, 2.625}, 0,
                 "nesterov");
}
END_TEST

/* Weight decay λ = ½, η = ¼, μ = 0, coupled: w ← w − η (d + λ w), the
 * bias b decays under scope all, not under weights:
 *   all:     (0.75, 2, 2.125);   weights: (0.75, 2, 2.5).
 * Decoupled equals coupled for plain SGD (θ(1 − ηλ) − η d). */
START_TEST(test_weight_decay_scope_and_form)
{
    pflref_model m = linear_model();
    for (int scope = 0; scope < 2; scope++)
        for (int form = 0; form < 2; form++) {
            one_state s;
            state_init(&s);
            s.o.weight_decay = 0.5;
            s.o.decay_scope = scope ? PFLREF_OPT_SCOPE_WEIGHTS
                                    : PFLREF_OPT_SCOPE_ALL;
            s.o.decay_form = form ? PFLREF_OPT_DECAY_DECOUPLED
                                  : PFLREF_OPT_DECAY_COUPLED;
            double theta[3] = {1, 2, 3}, d[3];
            memcpy(d, D1, sizeof d);
            ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.25, d, theta));
            assert_theta(theta,
                         scope ? (const double[]){0.75, 2.0, 2.5}
                               : (const double[]){0.75, 2.0, 2.125},
                         0, scope ? "scope weights" : "scope all");
        }
    /* with momentum the forms differ: μ = ½, two steps of d₁, η = ¼, λ = ½,
     * coupled b₂ = ½ (d₁ + λθ₀) + (d₁ + λθ₁) vs decoupled */
    double out[2][3];
    for (int form = 0; form < 2; form++) {
        one_state s;
        state_init(&s);
        s.o.weight_decay = 0.5;
        s.o.momentum = 0.5;
        s.o.decay_form = form;
        double theta[3] = {1, 2, 3}, d[3];
        for (int k = 0; k < 2; k++) {
            memcpy(d, D1, sizeof d);
            ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.25, d, theta));
        }
        memcpy(out[form], theta, sizeof theta);
    }
    ck_assert_msg(out[0][2] != out[1][2],
                  "coupled and decoupled decay agree under momentum");
}
END_TEST

/* Adam, β₁ = ½, β₂ = ¾, ε = ½, η = ⅛, one step: m = ½ d, v = ¼ d²,
 * step_size = η / ½, denom = |d|/2 / ½ + ε = |d| + ε, so
 * θ − η d / (|d| + ε) = (0.9375, 2 + 1/12, 2.9). */
START_TEST(test_adam_first_step)
{
    pflref_model m = linear_model();
    one_state s;
    state_init(&s);
    s.o.method = PFLREF_OPT_ADAM;
    s.o.beta1 = 0.5;
    s.o.beta2 = 0.75;
    s.o.eps = 0.5;
    double theta[3] = {1, 2, 3}, d[3];
    memcpy(d, D1, sizeof d);
    ck_assert(pflref_optim_step(&s.st, &m, NULL, 0.125, d, theta));
    assert_theta(theta, (const double[]){0.9375, 2.0 + 1.0 / 12.0, 2.9},
                 4 * 2.2e-16, "adam step 1");
    /* AdamW, λ = ½: θ(1 − ηλ) first: θ₀ = 15/16 − 1/16 */
    one_state w;
    state_init(&w);
    w.o = s.o;
    w.o.method = PFLREF_OPT_ADAMW;
    w.o.weight_decay = 0.5;
    double t2[3] = {1, 2, 3};
    memcpy(d, D1, sizeof d);
    ck_assert(pflref_optim_step(&w.st, &m, NULL, 0.125, d, t2));
    assert_theta(t2, (const double[]){0.9375 - 0.0625, 1.875 + 1.0 / 12.0,
                                       2.8125 - 0.1},
                 4 * 2.2e-16, "adamw step 1");
}
END_TEST

/* clip_grad_norm_: d = (3, 0, 4), ‖d‖ = 5; c = 2.5 scales by
 * 2.5/(5 + 10⁻⁶); c = 10 leaves d; η = 1 from θ = (1, 2, 3).  A block the
 * mask leaves out keeps its step count and its entries. */
START_TEST(test_clip_and_mask)
{
    pflref_model m = linear_model();
    for (int active = 0; active < 2; active++) {
        one_state s;
        state_init(&s);
        s.o.clip = PFLREF_OPT_CLIP_NORM;
        s.o.clip_norm = active ? 2.5 : 10.0;
        double theta[3] = {1, 2, 3}, d[3] = {3, 0, 4};
        ck_assert(pflref_optim_step(&s.st, &m, NULL, 1.0, d, theta));
        const double c = active ? 2.5 / (5.0 + 1e-6) : 1.0;
        assert_theta(theta, (const double[]){1 - 3 * c, 2, 3 - 4 * c},
                     4 * 2.2e-16, active ? "clipped" : "not clipped");
    }
    one_state s;
    state_init(&s);
    s.o.momentum = 0.5;
    unsigned char mask[3] = {1, 1, 0};     /* w moves, b does not */
    double theta[3] = {1, 2, 3}, d[3];
    memcpy(d, D1, sizeof d);
    ck_assert(pflref_optim_step(&s.st, &m, mask, 0.125, d, theta));
    ck_assert(theta[2] == 3.0);
    ck_assert_uint_eq(s.st.t[0], 1);
    ck_assert_uint_eq(s.st.t[1], 0);
}
END_TEST

/* Two clients f_i(v) = ½ (v − c_i)² (c = 4, −2), three rounds S = {0},
 * {1}, {0} of one, one and two steps, FedAvg with momentum ½: the three lifetimes give three
 * different results; the default optimizer (and opt.state without a
 * stateful rule) is plain SGD bit for bit. */
static tb_case *two_clients(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 1);
    c->hyper.eta = 0.5;
    tb_round(c, "0", "0");
    tb_round(c, "1", "0");
    tb_round(c, "0", "0|0");
    return c;
}

static double final_w(int state, double momentum)
{
    tb_case *c = two_clients();
    c->hyper.opt.momentum = momentum;
    c->hyper.opt.state = state;
    pflref_run_result *r = tb_run(c, "fedavg", NULL);
    const double w = r->w[0];
    pflref_run_result_free(r);
    tb_free(c);
    return w;
}

START_TEST(test_state_lifetimes)
{
    const double reset = final_w(PFLREF_OPT_STATE_RESET, 0.5);
    const double client = final_w(PFLREF_OPT_STATE_CLIENT, 0.5);
    const double server = final_w(PFLREF_OPT_STATE_SERVER, 0.5);
    ck_assert_msg(reset != client && client != server && reset != server,
                  "lifetimes agree: %.17g %.17g %.17g", reset, client,
                  server);
    /* by hand, η = ½, μ = ½, w⁰ = 0 (d = v − c_i):
     * r0 (client 0): b = −4, w = 2.  r1 (client 1, d = 4):
     *   reset, client: b = 4, w = 0;  server: b = ½(−4) + 4 = 2, w = 1.
     * r2 (client 0, two steps):
     *   reset:  b = −4, w = 2;  b = −2 − 2 = −4, w = 4
     *   client: its b = −4 kept: b = −2 − 4 = −6, w = 3;
     *           b = −3 − 1 = −4, w = 5
     *   server: b = 1 − 3 = −2, w = 2;  b = −1 − 2 = −3, w = 3.5 */
    ck_assert_msg(reset == 4.0, "reset: %.17g", reset);
    ck_assert_msg(client == 5.0, "client: %.17g", client);
    ck_assert_msg(server == 3.5, "server: %.17g", server);
    /* the default: plain SGD, whatever the lifetime */
    const double plain = final_w(PFLREF_OPT_STATE_RESET, 0.0);
    ck_assert(final_w(PFLREF_OPT_STATE_CLIENT, 0.0) == plain);
    ck_assert(final_w(PFLREF_OPT_STATE_SERVER, 0.0) == plain);
}
END_TEST

START_TEST(test_golden_vectors)
{
    static const char *const files[] = {
        "golden/optim/fedavg-momentum-pytorch.json",
        "golden/optim/fedavg-momentum-classical.json",
        "golden/optim/fedavg-nesterov-reset.json",
        "golden/optim/fedavg-decay-coupled-weights.json",
        "golden/optim/fedavg-decay-decoupled.json",
        "golden/optim/fedavg-adam-server.json",
        "golden/optim/fedavg-adamw.json",
        "golden/optim/fedavg-clip.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        tu_assert_golden(files[i]);
}
END_TEST

/* A spec of `alg` on one quadratic client with the given members of
 * "algorithm" after its name. */
static char *spec_text(const char *alg, const char *members)
{
    char *text = malloc(2048);
    ck_assert_ptr_nonnull(text);
    snprintf(text, 2048,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"quadratic\", \"d\": 1}, \"problem\": {\"clients\": ["
             "{\"a\": [1], \"c\": [2]}, {\"a\": [2], \"c\": [1]}]}, "
             "\"algorithm\": {\"name\": \"%s\", %s}, \"schedule\": "
             "{\"kind\": \"generate\", \"rounds\": 2, \"local\": "
             "{\"steps\": 2}}}", alg, members);
    return text;
}

/* Every refusal: exit 2, stderr names the path and the problem, no
 * result written. */
START_TEST(test_refusals_cli)
{
    static const struct {
        const char *alg, *members, *where, *message;
    } cases[] = {
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.momentum\": "
         "-0.5}", "algorithm.hyperparameters.opt.momentum", "must be >= 0"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.beta1\": 1}, "
         "\"switches\": {\"opt.method\": \"adam\"}",
         "algorithm.hyperparameters.opt.beta1", "must be < 1"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.beta2\": "
         "-0.1}, \"switches\": {\"opt.method\": \"adam\"}",
         "algorithm.hyperparameters.opt.beta2", "must be >= 0"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.eps\": 0}, "
         "\"switches\": {\"opt.method\": \"adam\"}",
         "algorithm.hyperparameters.opt.eps", "must be > 0"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.clip_norm\": "
         "0}, \"switches\": {\"opt.clip\": \"norm\"}",
         "algorithm.hyperparameters.opt.clip_norm", "must be > 0"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1}, \"switches\": "
         "{\"opt.clip\": \"norm\"}", "algorithm.switches.opt.clip",
         "needs opt.clip_norm"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1}, \"switches\": "
         "{\"opt.nesterov\": \"on\"}", "algorithm.switches.opt.nesterov",
         "requires a momentum and zero dampening"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.momentum\": "
         "0.9, \"opt.dampening\": 0.1}, \"switches\": {\"opt.nesterov\": "
         "\"on\"}", "algorithm.switches.opt.nesterov",
         "requires a momentum and zero dampening"},
        {"fedavg", "\"hyperparameters\": {\"eta\": 0.1, \"opt.momentum\": "
         "0.9}, \"switches\": {\"opt.method\": \"adam\"}",
         "algorithm.hyperparameters.opt.momentum", "is SGD's"},
        {"pfedme", "\"hyperparameters\": {\"eta\": 0.1, \"lambda\": 1, "
         "\"eta_p\": 0.1, \"K\": 1, \"opt.weight_decay\": 0.5}, "
         "\"switches\": {\"opt.decay_scope\": \"personal\"}",
         "algorithm.switches.opt.decay_scope",
         "pfedme's inner solver steps θ, the whole model"},
        {"ifca", "\"hyperparameters\": {\"gamma\": 0.1, \"ifca.k\": 1,"
         " \"opt.momentum\": 0.9}", "algorithm.switches.opt.method",
         "ifca.mode = gradient"},
    };
    char *dir = tu_tmpdir();
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char *text = spec_text(cases[q].alg, cases[q].members);
        char path[512], args[1200];
        snprintf(path, sizeof path, "%s/s%zu.json", dir, q);
        ck_assert_int_eq(tu_write(path, text), 0);
        snprintf(args, sizeof args, "run %s -o %s/r%zu.json", path, dir, q);
        char *out = NULL, *errout = NULL;
        const int rc = tu_cli(args, &out, &errout);
        ck_assert_msg(rc == 2, "case %zu: exit %d, expected 2 (%s)", q, rc,
                      errout != NULL ? errout : "");
        ck_assert_msg(errout != NULL && strstr(errout, cases[q].where) &&
                          strstr(errout, cases[q].message),
                      "case %zu: stderr lacks \"%s\" or \"%s\": %s", q,
                      cases[q].where, cases[q].message,
                      errout != NULL ? errout : "");
        snprintf(path, sizeof path, "%s/r%zu.json", dir, q);
        ck_assert_msg(!tu_exists(path), "case %zu: a result was written", q);
        free(out);
        free(errout);
        free(text);
    }
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The C API: a non-default optimizer set in the struct for an algorithm
 * that takes none is refused by the run too, naming the key. */
START_TEST(test_refusal_api)
{
    tb_case *c = tb_quadratic(1, 1);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    c->hyper.eta = 0.5;
    c->hyper.lambda = 1.0;
    c->hyper.eta_p = 0.5;
    c->hyper.K = 1;
    c->hyper.fedamp.alpha_k = 0.5;
    c->hyper.fedamp.lambda = 1.0;
    c->hyper.fedamp.sigma = 1.0;
    c->hyper.opt.method = PFLREF_OPT_ADAMW;
    tb_round(c, "0", "0");
    pflref_error err;
    tb_run_error(c, "fedamp", PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, "algorithm.switches.opt.method");
    ck_assert_msg(strstr(err.message, "opt.method = adamw") != NULL,
                  "%s", err.message);
    tb_free(c);
}
END_TEST

Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sgd_momentum_pytorch);
    tcase_add_test(tc, test_sgd_momentum_forms_differ_when_eta_changes);
    tcase_add_test(tc, test_sgd_nesterov);
    tcase_add_test(tc, test_weight_decay_scope_and_form);
    tcase_add_test(tc, test_adam_first_step);
    tcase_add_test(tc, test_clip_and_mask);
    tcase_add_test(tc, test_state_lifetimes);
    tcase_add_test(tc, test_golden_vectors);
    tcase_add_test(tc, test_refusals_cli);
    tcase_add_test(tc, test_refusal_api);
    suite_add_tcase(s, tc);
    return s;
}
