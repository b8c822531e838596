/* tests/test_fedalt.c: FedAlt and FedSim (ref/fedalt.c), their presets,
 * and Lemma 21 of Pillutla et al. (sampling without replacement).
 *
 * Example A of shared/spec notes-pflego-fedalt-fedsim-fedrep.md §3.9:
 * ŷ = u·x + v_i (shared slope, personal bias), ½(ŷ − y)², full-batch
 * steps; its iterates are checked by the golden vectors in golden/fedalt
 * and golden/fedsim, and here its objective F(u, V) = Σ_i α_i F_i before
 * and after the final fine-tuning (the notes' 12-digit values).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

static pflref_spec *make_spec(const char *model, const char *clients,
                              const char *split, const char *algorithm,
                              const char *init, const char *schedule)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": %s,"
             " \"problem\": {\"clients\": %s}%s%s,"
             " \"algorithm\": %s, \"init\": %s, \"schedule\": %s}",
             model, clients, split[0] ? ", " : "", split, algorithm, init,
             schedule);
    return tu_spec(text);
}

static const char *const A_MODEL =
    "{\"kind\": \"linear\", \"d\": 1, \"loss\": \"half_squared\", "
    "\"bias\": true}";
static const char *const A_CLIENTS =
    "[{\"X\": [[1], [2]], \"y\": [2, 3]},"
    " {\"X\": [[1], [2], [3]], \"y\": [-1, -1, -2]},"
    " {\"X\": [[1]], \"y\": [1]}]";
static const char *const A_SPLIT = "\"split\": {\"personal\": [\"b\"]}";
static const char *const A_INIT = "{\"kind\": \"given\", \"w\": [0.5, 0]}";

/* Example A's schedule: S⁰ = {0, 1}, S¹ = {1, 2}, `steps` full batches per
 * participation, and (post) 2 full-batch fine-tuning steps per client. */
static void a_schedule(char *buf, size_t size, int steps, int post)
{
    const char *b3[] = {"", "[[0, 1]]", "[[0, 1], [0, 1]]",
                        "[[0, 1], [0, 1], [0, 1]]"};
    const char *c3[] = {"", "[[0, 1, 2]]", "[[0, 1, 2], [0, 1, 2]]",
                        "[[0, 1, 2], [0, 1, 2], [0, 1, 2]]"};
    const char *d3[] = {"", "[[0]]", "[[0], [0]]", "[[0], [0], [0]]"};
    snprintf(buf, size,
             "{\"kind\": \"given\", \"rounds\": ["
             " {\"clients\": [0, 1], \"batches\": [%s, %s]},"
             " {\"clients\": [1, 2], \"batches\": [%s, %s]}]%s}",
             b3[steps], c3[steps], c3[steps], d3[steps],
             post ? ", \"post\": [[[0, 1], [0, 1]], [[0, 1, 2], [0, 1, 2]], "
                    "[[0], [0]]]"
                  : "");
}

/* F(u, V) = Σ α_i F_i(u, v_i), α_i = N_i/N: the sample-weighted mean of the
 * personalized model's training losses. */
static double objective(const char *name, const char *state, int post)
{
    char alg[512], sched[1024];
    snprintf(alg, sizeof alg,
             "{\"name\": \"%s\", \"hyperparameters\": {\"gamma_u\": 0.1, "
             "\"gamma_v\": 0.1%s, \"eta_ft\": 0.1}, \"switches\": "
             "{\"pfl.state\": \"%s\"}}",
             name, strcmp(name, "fedalt") == 0 ? ", \"tau_v\": 1" : "", state);
    a_schedule(sched, sizeof sched, strcmp(name, "fedalt") == 0 ? 3 : 2, post);
    pflref_spec *spec = make_spec(A_MODEL, A_CLIENTS, A_SPLIT, alg, A_INIT,
                                  sched);
    pflref_run_result *res = tu_run(spec, NULL);
    ck_assert_str_eq(res->eval[0].label, "personalized");
    const double F = res->eval[0].train_loss.weighted_mean;
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    return F;
}

/* Notes §3.9: F(u², V) before and after the final fine-tuning, for FedAlt
 * and FedSim, stateful and stateless (12 printed digits). */
START_TEST(test_notes_a_objective)
{
    const struct {
        const char *name, *state;
        double before, after;
    } cases[] = {
        {"fedalt", "stateful", 1.349203014200, 0.916266821829},
        {"fedsim", "stateful", 1.188983422953, 0.811250537492},
        {"fedalt", "stateless", 1.712567194743, 1.154267278278},
        {"fedsim", "stateless", 1.721670623459, 1.160181068820},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double before = objective(cases[c].name, cases[c].state, 0);
        const double after = objective(cases[c].name, cases[c].state, 1);
        ck_assert_msg(fabs(before - cases[c].before) < 6e-13 &&
                          fabs(after - cases[c].after) < 6e-13,
                      "%s %s: F = %.15f -> %.15f, notes %.12f -> %.12f",
                      cases[c].name, cases[c].state, before, after,
                      cases[c].before, cases[c].after);
    }
}
END_TEST

static const char *const L_MODEL =
    "{\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"bias\": true}";
static const char *const L_CLIENTS =
    "[{\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
    "  \"y\": [-0.775, 1.409, 0.236]},"
    " {\"X\": [[-1.426, 0.357], [0.689, -0.942]], \"y\": [0.518, -1.263]},"
    " {\"X\": [[0.341, 0.815], [-0.627, -0.118], [1.034, -0.566], "
    "[0.205, 0.479]], \"y\": [0.942, -0.331, 0.613, 0.127]}]";
static const char *const L_INIT =
    "{\"kind\": \"given\", \"w\": [0.21, -0.37, 0.05]}";
static const char *const L_SCHED =
    "{\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 2], \"batches\": [[[0, 1], [2]], [[3, 1], [0], [2]]]},"
    " {\"clients\": [1, 2], \"batches\": [[[1], [0, 1]], [[2, 3], [0, 1]]]}]}";

/* With an empty personal part, FedAlt (τ_v = 0) and FedSim are FedAvg with
 * the same weights, bit for bit (pfl.weights samples = fedavg.weights
 * samples; uniform = uniform). */
START_TEST(test_empty_personal_is_fedavg)
{
    const char *weights[][2] = {{"samples", "samples"},
                                {"uniform", "uniform"}};
    for (size_t k = 0; k < 2; k++) {
        char alg[3][512];
        snprintf(alg[0], sizeof alg[0],
                 "{\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.2},"
                 " \"switches\": {\"fedavg.weights\": \"%s\"}}",
                 weights[k][0]);
        snprintf(alg[1], sizeof alg[1],
                 "{\"name\": \"fedalt\", \"hyperparameters\": {\"gamma_u\": "
                 "0.2, \"gamma_v\": 0.7, \"tau_v\": 0}, \"switches\": "
                 "{\"pfl.weights\": \"%s\"}}", weights[k][1]);
        snprintf(alg[2], sizeof alg[2],
                 "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": "
                 "0.2, \"gamma_v\": 0.7}, \"switches\": "
                 "{\"pfl.weights\": \"%s\"}}", weights[k][1]);
        pflref_run_result *res[3];
        pflref_spec *spec[3];
        for (int a = 0; a < 3; a++) {
            spec[a] = make_spec(L_MODEL, L_CLIENTS, "", alg[a], L_INIT,
                                L_SCHED);
            res[a] = tu_run(spec[a], NULL);
        }
        for (int a = 1; a < 3; a++) {
            for (size_t p = 0; p < res[0]->P; p++)
                ck_assert_msg(res[a]->w[p] == res[0]->w[p],
                              "%s weights %s, entry %zu: %.17g vs FedAvg "
                              "%.17g", a == 1 ? "fedalt" : "fedsim",
                              weights[k][1], p, res[a]->w[p], res[0]->w[p]);
            /* every device's model is the global one */
            for (size_t i = 0; i < res[a]->N; i++)
                ck_assert(memcmp(res[a]->v + i * res[a]->P, res[a]->w,
                                 res[a]->P * sizeof(double)) == 0);
        }
        for (int a = 0; a < 3; a++) {
            pflref_run_result_free(res[a]);
            pflref_spec_free(spec[a]);
        }
    }
}
END_TEST

/* FedSim with γ_u = 0 leaves u at u⁰ and moves v only: one round of all
 * clients is fine-tuning of v from the initial model (the finetune
 * algorithm with no training rounds, scope personal, μ_ft = 0), bit for bit
 * on the personal entries; the shared entries of every device stay u⁰. */
START_TEST(test_fedsim_gamma_u0_is_finetune)
{
    const char *sched_sim =
        "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1, 2],"
        " \"batches\": [[[0, 1], [2]], [[1], [0, 1]], [[3, 1], [0], [2]]]}]}";
    const char *sched_ft =
        "{\"kind\": \"given\", \"rounds\": [], \"post\":"
        " [[[0, 1], [2]], [[1], [0, 1]], [[3, 1], [0], [2]]]}";
    pflref_spec *ss = make_spec(
        L_MODEL, L_CLIENTS, "\"split\": {\"personal\": [\"b\"]}",
        "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": 0, "
        "\"gamma_v\": 0.3}}", L_INIT, sched_sim);
    pflref_spec *sf = make_spec(
        L_MODEL, L_CLIENTS, "\"split\": {\"personal\": [\"b\"]}",
        "{\"name\": \"finetune\", \"hyperparameters\": {\"eta\": 1, "
        "\"eta_ft\": 0.3}, \"switches\": {\"finetune.scope\": \"personal\"}}",
        L_INIT, sched_ft);
    pflref_run_result *rs = tu_run(ss, NULL), *rf = tu_run(sf, NULL);
    const size_t P = rs->P;
    for (size_t i = 0; i < rs->N; i++) {
        /* the bias (entry 2) is personal; w (entries 0, 1) shared */
        ck_assert_msg(rs->v[i * P + 2] == rf->v[i * P + 2],
                      "client %zu: fedsim v %.17g, finetune %.17g", i,
                      rs->v[i * P + 2], rf->v[i * P + 2]);
        ck_assert(rs->v[i * P + 2] != rs->w0[2]);
    }
    for (size_t p = 0; p < 2; p++)
        ck_assert_double_eq_tol(rs->w[p], rs->w0[p], 1e-16);
    pflref_run_result_free(rs);
    pflref_run_result_free(rf);
    pflref_spec_free(ss);
    pflref_spec_free(sf);
}
END_TEST

/* A device that is not selected keeps its v; in a stateless run no device
 * keeps anything, so the final personal entries are v⁰. */
START_TEST(test_state)
{
    char sched[1024];
    a_schedule(sched, sizeof sched, 2, 0);
    const char *algs[] = {
        "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": 0.1, "
        "\"gamma_v\": 0.1}}",
        "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": 0.1, "
        "\"gamma_v\": 0.1}, \"switches\": {\"pfl.state\": \"stateless\"}}"};
    for (int k = 0; k < 2; k++) {
        pflref_spec *spec = make_spec(A_MODEL, A_CLIENTS, A_SPLIT, algs[k],
                                      A_INIT, sched);
        pflref_run_result *res = tu_run(spec, NULL);
        if (k == 0) {
            /* client 0 trained in round 0 only: its bias is round 0's
             * 0.29125 (notes §3.9, FedSim client 1) */
            ck_assert_double_eq_tol(res->v[1], 0.29125, 1e-15);
            ck_assert(res->v[3] != 0.0 && res->v[5] != 0.0);
        } else {
            for (size_t i = 0; i < res->N; i++)
                ck_assert_double_eq(res->v[i * res->P + 1], 0.0);
        }
        pflref_run_result_free(res);
        pflref_spec_free(spec);
    }
}
END_TEST

static void expect_error(const char *split, const char *alg,
                         const char *sched, const char *where,
                         const char *text)
{
    pflref_spec *spec = make_spec(A_MODEL, A_CLIENTS, split, alg, A_INIT,
                                  sched);
    pflref_error err;
    tu_run_error(spec, PFLREF_EINVAL, &err);
    ck_assert_str_eq(err.where, where);
    ck_assert_msg(strstr(err.message, text) != NULL, "message: %s",
                  err.message);
    pflref_spec_free(spec);
}

/* τ_v larger than a participation's steps, fine-tuning without η_ft, and a
 * missing τ_v are refused before anything runs, naming the field. */
START_TEST(test_errors)
{
    char sched[1024], post[1024];
    a_schedule(sched, sizeof sched, 2, 0);
    a_schedule(post, sizeof post, 2, 1);
    expect_error(A_SPLIT,
                 "{\"name\": \"fedalt\", \"hyperparameters\": {\"gamma_u\": "
                 "0.1, \"gamma_v\": 0.1, \"tau_v\": 3}}",
                 sched, "schedule.rounds[0].batches[0]", "tau_v = 3");
    expect_error(A_SPLIT,
                 "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": "
                 "0.1, \"gamma_v\": 0.1}}",
                 post, "algorithm.hyperparameters.eta_ft", "eta_ft");
    expect_error(A_SPLIT,
                 "{\"name\": \"fedalt\", \"hyperparameters\": {\"gamma_u\": "
                 "0.1, \"gamma_v\": 0.1}}",
                 sched, "algorithm.hyperparameters.tau_v", "tau_v");
    expect_error(A_SPLIT,
                 "{\"name\": \"fedsim\", \"hyperparameters\": {\"gamma_u\": "
                 "0.1, \"gamma_v\": 0.1}, \"switches\": {\"pfl.weights\": "
                 "\"batches\"}}",
                 "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1], "
                 "\"batches\": [[], []]}]}",
                 "schedule.rounds[0].batches", "none");
}
END_TEST

/* The presets imply their split (FedRep, FedPer: the head; LG-FedAvg: the
 * input layer); a spec's own split wins. */
START_TEST(test_preset_split)
{
    const char *mlp = "{\"kind\": \"mlp\", \"d\": 2, \"h\": 3, \"k\": 2}";
    const char *clients = "[{\"X\": [[1, 2]], \"y\": [1]}]";
    const char *sched =
        "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
        "\"batches\": [[[0], [0]]]}]}";
    const struct {
        const char *alg, *split;
        unsigned char personal[4];   /* W1, b1, W2, b2 */
    } cases[] = {
        {"{\"name\": \"fedalt\", \"preset\": \"fedrep\", \"hyperparameters\":"
         " {\"gamma_u\": 0.1, \"gamma_v\": 0.1, \"tau_v\": 1}}", "", {0, 0, 1, 1}},
        {"{\"name\": \"fedsim\", \"preset\": \"fedper\", \"hyperparameters\":"
         " {\"gamma_u\": 0.1, \"gamma_v\": 0.1}}", "", {0, 0, 1, 1}},
        {"{\"name\": \"fedsim\", \"preset\": \"lg_fedavg\", "
         "\"hyperparameters\": {\"gamma_u\": 0.1, \"gamma_v\": 0.1}}", "",
         {1, 1, 0, 0}},
        {"{\"name\": \"fedsim\", \"preset\": \"fedbabu\", \"hyperparameters\":"
         " {\"gamma_u\": 0.1}}", "", {0, 0, 1, 1}},
        {"{\"name\": \"fedsim\", \"preset\": \"fedper\", \"hyperparameters\":"
         " {\"gamma_u\": 0.1, \"gamma_v\": 0.1}}",
         "\"split\": {\"personal\": [\"b2\"]}", {0, 0, 0, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\", \"model\": %s, \"problem\":"
                 " {\"clients\": %s}%s%s, \"algorithm\": %s, \"schedule\": %s}",
                 mlp, clients, cases[c].split[0] ? ", " : "", cases[c].split,
                 cases[c].alg, sched);
        pflref_spec *spec = tu_spec(text);
        for (int b = 0; b < 4; b++)
            ck_assert_msg(spec->hyper.split.personal[b] ==
                              cases[c].personal[b],
                          "case %zu block %d", c, b);
        pflref_run_result *res = tu_run(spec, NULL);
        pflref_run_result_free(res);
        pflref_spec_free(spec);
    }
}
END_TEST

/* Lemma 21 of Pillutla et al. (seed 002_…): for a uniformly random m-subset
 * S of [n], E[(1/m) Σ_S a_i] = ā and E‖(1/m) Σ_S a_i − ā‖² =
 * (σ²/m)(n − m)/(n − 1), σ² = (1/n) Σ ‖a_i − ā‖², by enumeration of every
 * subset: the notes' a = (1, 2, 4, 7), m = 2 gives 7/4 (21/8 with
 * replacement), then every m for random a with n ≤ 9 in ℝ³. */
static void lemma21(const double *a, size_t n, size_t dim, size_t m,
                    double *mean_err, double *var_enum, double *var_formula)
{
    double abar[8] = {0}, s2 = 0.0, var = 0.0, mean[8] = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < dim; c++)
            abar[c] += a[i * dim + c] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < dim; c++)
            s2 += (a[i * dim + c] - abar[c]) * (a[i * dim + c] - abar[c]) /
                  (double)n;
    size_t count = 0;
    for (unsigned long S = 0; S < (1ul << n); S++) {
        if ((size_t)__builtin_popcountl(S) != m)
            continue;
        double est[8] = {0}, d2 = 0.0;
        for (size_t i = 0; i < n; i++)
            if (S >> i & 1ul)
                for (size_t c = 0; c < dim; c++)
                    est[c] += a[i * dim + c] / (double)m;
        for (size_t c = 0; c < dim; c++) {
            d2 += (est[c] - abar[c]) * (est[c] - abar[c]);
            mean[c] += est[c];
        }
        var += d2;
        count++;
    }
    *mean_err = 0.0;
    for (size_t c = 0; c < dim; c++)
        *mean_err = fmax(*mean_err, fabs(mean[c] / (double)count - abar[c]));
    *var_enum = var / (double)count;
    *var_formula = s2 / (double)m * (double)(n - m) / (double)(n - 1);
}

START_TEST(test_lemma21)
{
    const double a[] = {1, 2, 4, 7};
    double me, ve, vf;
    lemma21(a, 4, 1, 2, &me, &ve, &vf);
    printf("Lemma 21, a = (1, 2, 4, 7), m = 2: enumeration %.17g, formula "
           "%.17g (7/4), with replacement %.17g (21/8)\n", ve, vf,
           21.0 / 8.0);
    ck_assert_double_eq(me, 0.0);
    ck_assert_double_eq(ve, 1.75);
    ck_assert_double_eq(vf, 1.75);
    /* random instances: n = 2..9, every m, 3-dimensional a_i */
    unsigned long x = 12345;
    size_t instances = 0;
    for (size_t n = 2; n <= 9; n++)
        for (size_t m = 1; m <= n; m++) {
            double b[27];
            for (size_t j = 0; j < 3 * n; j++) {
                x = x * 6364136223846793005ul + 1442695040888963407ul;
                b[j] = (double)(x >> 11) / 9007199254740992.0 * 4.0 - 2.0;
            }
            lemma21(b, n, 3, m, &me, &ve, &vf);
            ck_assert_msg(me < 1e-14 && fabs(ve - vf) <= 1e-13 * (1 + vf),
                          "n = %zu, m = %zu: E error %g, Var %.17g vs %.17g",
                          n, m, me, ve, vf);
            instances++;
        }
    printf("Lemma 21: %zu random instances (n = 2..9, every m) agree\n",
           instances);
}
END_TEST

Suite *fedalt_suite(void)
{
    Suite *s = suite_create("fedalt");
    TCase *tc = tcase_create("fedalt");
    tcase_add_test(tc, test_notes_a_objective);
    tcase_add_test(tc, test_empty_personal_is_fedavg);
    tcase_add_test(tc, test_fedsim_gamma_u0_is_finetune);
    tcase_add_test(tc, test_state);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_preset_split);
    tcase_add_test(tc, test_lemma21);
    suite_add_tcase(s, tc);
    return s;
}
