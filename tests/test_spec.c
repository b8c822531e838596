/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_spec.c: the spec reader (ref/io/spec.c) on its own: what the
 * algorithm tests used to reach through it, now that they build their
 * inputs in C (tests/builder.h).
 *
 * Each test reads a spec and compares what the reader made (problem,
 * hyperparameters, switches, presets, split, schedule, w⁰, IFCA's initial
 * cluster models) with the same inputs built in C, field by field, or
 * checks that a bad spec is refused with the JSON path of the offending
 * value.  The last tests run specs that the algorithm tests once used and
 * the builder's rendering of them side by side: the results must agree bit
 * for bit, so the two layers describe the same runs.  The catalogue of
 * malformed specs is tests/test_io.c's.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"
#include "builder.h"

/* ---- comparisons --------------------------------------------------------- */

static void assert_same_data(const pflref_model *m, const pflref_data *a,
                             const pflref_data *b, const char *what)
{
    ck_assert_msg(a->n == b->n, "%s: n = %zu, expected %zu", what, a->n, b->n);
    if (a->n == 0)
        return;
    if (m->kind == PFLREF_MODEL_QUADRATIC) {
        ck_assert_msg(memcmp(a->a, b->a, m->d * sizeof *a->a) == 0 &&
                          memcmp(a->c, b->c, m->d * sizeof *a->c) == 0,
                      "%s: a or c differs", what);
        return;
    }
    ck_assert_msg(memcmp(a->X, b->X, a->n * m->d * sizeof *a->X) == 0,
                  "%s: X differs", what);
    ck_assert_msg(memcmp(a->y, b->y, a->n * sizeof *a->y) == 0,
                  "%s: y differs", what);
}

/* The reader's problem a is the builder's b: model and every array. */
static void assert_same_problem(const pflref_problem *a,
                                const pflref_problem *b)
{
    const pflref_model *m = &a->model;
    ck_assert_int_eq(m->kind, b->model.kind);
    ck_assert_int_eq(m->loss, b->model.loss);
    ck_assert_uint_eq(m->d, b->model.d);
    ck_assert_uint_eq(m->k, b->model.k);
    ck_assert_uint_eq(m->P, b->model.P);
    ck_assert_uint_eq(m->nblocks, b->model.nblocks);
    ck_assert_uint_eq(a->N, b->N);
    for (size_t i = 0; i < a->N; i++) {
        char what[64];
        snprintf(what, sizeof what, "client %zu train", i);
        assert_same_data(m, &a->clients[i].train, &b->clients[i].train, what);
        snprintf(what, sizeof what, "client %zu test", i);
        assert_same_data(m, &a->clients[i].test, &b->clients[i].test, what);
        snprintf(what, sizeof what, "client %zu val", i);
        assert_same_data(m, &a->clients[i].val, &b->clients[i].val, what);
    }
}

static void assert_same_batches(const pflref_batches *a,
                                const pflref_batches *b, const char *what)
{
    ck_assert_msg(a->nsteps == b->nsteps, "%s: %zu steps, expected %zu", what,
                  a->nsteps, b->nsteps);
    ck_assert_msg(memcmp(a->step_off, b->step_off,
                         (a->nsteps + 1) * sizeof *a->step_off) == 0,
                  "%s: step offsets differ", what);
    ck_assert_msg(memcmp(a->idx, b->idx,
                         a->step_off[a->nsteps] * sizeof *a->idx) == 0,
                  "%s: indices differ", what);
}

/* The reader's schedule a is b: every round's clients, selected, drawn and
 * batches, and the post phase. */
static void assert_same_schedule(const pflref_schedule *a,
                                 const pflref_schedule *b)
{
    ck_assert_uint_eq(a->T, b->T);
    ck_assert_uint_eq(a->N, b->N);
    for (size_t t = 0; t < a->T; t++) {
        const pflref_round_plan *ra = &a->rounds[t], *rb = &b->rounds[t];
        ck_assert_msg(ra->m == rb->m && ra->n_selected == rb->n_selected,
                      "round %zu: m %zu/%zu, selected %zu/%zu", t, ra->m,
                      rb->m, ra->n_selected, rb->n_selected);
        ck_assert_msg(memcmp(ra->clients, rb->clients,
                             ra->m * sizeof *ra->clients) == 0,
                      "round %zu: clients differ", t);
        ck_assert_msg(memcmp(ra->selected, rb->selected,
                             ra->n_selected * sizeof *ra->selected) == 0,
                      "round %zu: selected differs", t);
        ck_assert_msg(memcmp(ra->drawn, rb->drawn,
                             ra->n_selected * sizeof *ra->drawn) == 0,
                      "round %zu: drawn differs", t);
        for (size_t j = 0; j < ra->m; j++) {
            char what[64];
            snprintf(what, sizeof what, "round %zu, participant %zu", t, j);
            assert_same_batches(&ra->batches[j], &rb->batches[j], what);
        }
    }
    ck_assert_msg((a->post == NULL) == (b->post == NULL),
                  "post phase %s, expected %s", a->post ? "present" : "absent",
                  b->post ? "present" : "absent");
    for (size_t i = 0; a->post != NULL && i < a->N; i++) {
        char what[64];
        snprintf(what, sizeof what, "post, client %zu", i);
        assert_same_batches(&a->post[i], &b->post[i], what);
    }
}

/* Every registered hyperparameter and switch, and the split, agree. */
static void assert_same_hyper(const pflref_hyper *a, const pflref_hyper *b,
                              const char *what)
{
    size_t count;
    const pflref_param *params = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        if (p->type == PFLREF_PARAM_REAL) {
            const double x = pflref_hyper_get_real(a, p);
            const double y = pflref_hyper_get_real(b, p);
            ck_assert_msg((isnan(x) && isnan(y)) || x == y,
                          "%s: %s = %.17g, expected %.17g", what, p->name, x,
                          y);
        } else if (p->type == PFLREF_PARAM_INT) {
            ck_assert_msg(pflref_hyper_get_int(a, p) ==
                              pflref_hyper_get_int(b, p),
                          "%s: %s = %zu, expected %zu", what, p->name,
                          pflref_hyper_get_int(a, p),
                          pflref_hyper_get_int(b, p));
        } else {
            ck_assert_msg(strcmp(pflref_hyper_get_enum(a, p),
                                 pflref_hyper_get_enum(b, p)) == 0,
                          "%s: %s = %s, expected %s", what, p->name,
                          pflref_hyper_get_enum(a, p),
                          pflref_hyper_get_enum(b, p));
        }
    }
    ck_assert_msg(memcmp(a->split.personal, b->split.personal,
                         sizeof a->split.personal) == 0,
                  "%s: the split differs", what);
}

/* Two runs' results agree bit for bit: final state and every metric. */
static void assert_same_result(const pflref_run_result *a,
                               const pflref_run_result *b, const char *what)
{
    ck_assert_uint_eq(a->P, b->P);
    ck_assert_uint_eq(a->N, b->N);
    const size_t P = a->P, N = a->N;
    ck_assert_msg(memcmp(a->w0, b->w0, P * sizeof *a->w0) == 0, "%s: w0",
                  what);
    ck_assert_msg((a->w == NULL) == (b->w == NULL) &&
                      (a->w == NULL ||
                       memcmp(a->w, b->w, P * sizeof *a->w) == 0),
                  "%s: w differs", what);
    ck_assert_msg((a->v == NULL) == (b->v == NULL) &&
                      (a->v == NULL ||
                       memcmp(a->v, b->v, N * P * sizeof *a->v) == 0),
                  "%s: v differs", what);
    ck_assert_msg((a->alpha == NULL) == (b->alpha == NULL) &&
                      (a->alpha == NULL ||
                       memcmp(a->alpha, b->alpha, N * sizeof *a->alpha) == 0),
                  "%s: alpha differs", what);
    ck_assert_uint_eq(a->n_theta0, b->n_theta0);
    ck_assert_msg(a->n_theta0 == 0 ||
                      memcmp(a->theta0, b->theta0,
                             a->n_theta0 * sizeof *a->theta0) == 0,
                  "%s: theta0 differs", what);
    ck_assert_uint_eq(a->n_eval, b->n_eval);
    for (size_t e = 0; e < a->n_eval; e++) {
        ck_assert_str_eq(a->eval[e].label, b->eval[e].label);
        for (size_t i = 0; i < N; i++)
            ck_assert_msg(a->eval[e].train[i].loss == b->eval[e].train[i].loss,
                          "%s: %s train loss of client %zu", what,
                          a->eval[e].label, i);
        ck_assert_msg((a->eval[e].test == NULL) == (b->eval[e].test == NULL),
                      "%s: test metrics", what);
        for (size_t i = 0; a->eval[e].test != NULL && i < N; i++)
            ck_assert_msg(a->eval[e].test[i].loss == b->eval[e].test[i].loss,
                          "%s: %s test loss of client %zu", what,
                          a->eval[e].label, i);
    }
}

/* ---- problem and init ---------------------------------------------------- */

/* Inline clients: a linear model's train, test and validation arrays, and
 * a quadratic model's a, c and n, are read as given; init.w is w⁰. */
START_TEST(test_inline_problem)
{
    pflref_spec *spec = tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\","
        " \"d\": 2, \"loss\": \"half_squared\", \"bias\": true},"
        " \"problem\": {\"clients\": ["
        "  {\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
        "   \"y\": [-0.775, 1.409, 0.236],"
        "   \"X_test\": [[0.35, -0.2], [1.1, 0.45]], \"y_test\": [0.3, -0.41],"
        "   \"X_val\": [[0.72, 0.1]], \"y_val\": [-0.2]},"
        "  {\"X\": [[-1.426, 0.357], [0.689, -0.942]], \"y\": [0.518, -1.263],"
        "   \"X_test\": [[0.2, 0.2]], \"y_test\": [-0.15],"
        "   \"X_val\": [[0.4, -0.85], [1.2, 0.6]], \"y_val\": [-1.1, -0.7]}]},"
        " \"init\": {\"kind\": \"given\", \"w\": [0.21, -0.37, 2.385]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
        " {\"eta\": 0.1}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
        " \"local\": {\"steps\": 1}}}");
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){-0.775, 1.409, 0.236});
    tb_test(c, 0, 2, (const double[]){0.35, -0.2, 1.1, 0.45},
            (const double[]){0.3, -0.41});
    tb_val(c, 0, 1, (const double[]){0.72, 0.1}, (const double[]){-0.2});
    tb_train(c, 1, 2, (const double[]){-1.426, 0.357, 0.689, -0.942},
             (const double[]){0.518, -1.263});
    tb_test(c, 1, 1, (const double[]){0.2, 0.2}, (const double[]){-0.15});
    tb_val(c, 1, 2, (const double[]){0.4, -0.85, 1.2, 0.6},
           (const double[]){-1.1, -0.7});
    tb_w0(c, (const double[]){0.21, -0.37, 2.385});
    assert_same_problem(spec->problem, c->problem);
    ck_assert(memcmp(spec->w0, c->w0, 3 * sizeof *c->w0) == 0);
    ck_assert_int_eq(spec->init_kind, PFLREF_INIT_GIVEN);
    ck_assert_str_eq(spec->problem_source, "inline");
    pflref_spec_free(spec);
    tb_free(c);

    /* the quadratic model: a, c and the sample count n (default 1) */
    spec = tu_spec(
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\","
        " \"d\": 2}, \"problem\": {\"clients\": ["
        "  {\"a\": [2.385, 0.75], \"c\": [1.5, -0.625]},"
        "  {\"a\": [1.3, 3.1], \"c\": [-0.7, 0.45], \"n\": 5}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
        " {\"eta\": 0.1}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
        " \"local\": {\"steps\": 1}}}");
    c = tb_quadratic(2, 2);
    tb_quad(c, 0, (const double[]){2.385, 0.75}, (const double[]){1.5, -0.625},
            1);
    tb_quad(c, 1, (const double[]){1.3, 3.1}, (const double[]){-0.7, 0.45}, 5);
    assert_same_problem(spec->problem, c->problem);
    /* no init: zeros */
    ck_assert_int_eq(spec->init_kind, PFLREF_INIT_ZEROS);
    ck_assert(spec->w0[0] == 0.0 && spec->w0[1] == 0.0);
    pflref_spec_free(spec);
    tb_free(c);
}
END_TEST

/* A client of the quadratic model without "c" is refused, naming it. */
START_TEST(test_quadratic_client_needs_c)
{
    const char *text =
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        " \"problem\": {\"clients\": [{\"a\": [1]},"
        " {\"a\": [1e200], \"c\": [1e200]}]},"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
        " {\"eta\": 1e200}},"
        " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
        " \"local\": {\"steps\": 3}}}";
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].c");
    ck_assert_ptr_null(spec);
}
END_TEST

/* init kinds: gaussian and uniform draw w⁰ with pflref_draw_gaussian and
 * pflref_draw_uniform from the spec's seed, sd or scale. */
START_TEST(test_init_drawn)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\","
        " \"d\": 3}, \"problem\": {\"clients\": [{\"a\": [1, 1, 1],"
        " \"c\": [0, 0, 0]}]}, \"init\": %s,"
        " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
        " {\"eta\": 0.1}}, \"schedule\": {\"kind\": \"generate\","
        " \"rounds\": 1, \"local\": {\"steps\": 1}}}";
    char text[1024];
    double want[3];
    pflref_error err;
    snprintf(text, sizeof text, fmt,
             "{\"kind\": \"gaussian\", \"seed\": 7, \"sd\": 0.3}");
    pflref_spec *spec = tu_spec(text);
    ck_assert_int_eq(pflref_draw_gaussian(7, 0.3, want, 3, &err), PFLREF_OK);
    ck_assert(memcmp(spec->w0, want, sizeof want) == 0);
    ck_assert_int_eq(spec->init_kind, PFLREF_INIT_GAUSSIAN);
    pflref_spec_free(spec);
    snprintf(text, sizeof text, fmt,
             "{\"kind\": \"uniform\", \"seed\": 11, \"scale\": 2.385}");
    spec = tu_spec(text);
    ck_assert_int_eq(pflref_draw_uniform(11, 2.385, want, 3, &err), PFLREF_OK);
    ck_assert(memcmp(spec->w0, want, sizeof want) == 0);
    ck_assert_int_eq(spec->init_kind, PFLREF_INIT_UNIFORM);
    pflref_spec_free(spec);
}
END_TEST

/* The validation split in the spec: read errors name X_val / y_val. */
START_TEST(test_val_parse_errors)
{
    static const struct {
        const char *clients;
        const char *where;
    } cases[] = {
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]]}]",
         "problem.clients[0].y_val"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"y_val\": [1]}]",
         "problem.clients[0].X_val"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]], \"y_val\": [1]},"
         " {\"X\": [[1, 2]], \"y\": [1]}]", "problem.clients[1]"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2, 3]],"
         " \"y_val\": [1]}]", "problem.clients[0].X_val[0]"},
        {"[{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2], [3, 4]],"
         " \"y_val\": [1]}]", "problem.clients[0].y_val"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                 "\"linear\", \"d\": 2, \"loss\": \"squared\"},"
                 " \"problem\": {\"clients\": %s},"
                 " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\":"
                 " {\"eta\": 0.1}}, \"schedule\": {\"kind\": \"generate\","
                 " \"rounds\": 1}}", cases[c].clients);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
        ck_assert_ptr_null(spec);
        ck_assert_msg(strcmp(err.where, cases[c].where) == 0,
                      "case %zu: where %s, expected %s (%s)", c, err.where,
                      cases[c].where, err.message);
    }
    /* a classifier's validation label is checked like y: the path says
     * y_val, not y */
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(
        tu_parse("{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                 "\"softmax\", \"d\": 2, \"k\": 3}, \"problem\": {\"clients\":"
                 " [{\"X\": [[1, 2]], \"y\": [1], \"X_val\": [[1, 2]],"
                 " \"y_val\": [2.5]}]}, \"algorithm\": {\"name\": \"fedavg\","
                 " \"hyperparameters\": {\"eta\": 0.1}}, \"schedule\":"
                 " {\"kind\": \"generate\", \"rounds\": 1}}", &spec, &err),
        PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].y_val[0]");
}
END_TEST

/* ---- hyperparameters, switches, presets ---------------------------------- */

/* A spec for algorithm alg on a small quadratic problem, with the given
 * "algorithm" members after its name (may be ""), and a post phase when
 * the algorithm needs one. */
static pflref_spec *alg_spec(const char *alg, const char *members)
{
    const pflref_algorithm *a = pflref_algorithm_find(alg);
    ck_assert_ptr_nonnull(a);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"quadratic\", \"d\": 1}, \"problem\": {\"clients\": ["
             "{\"a\": [1], \"c\": [2]}, {\"a\": [2], \"c\": [-1]}]},"
             " \"algorithm\": {\"name\": \"%s\"%s%s},"
             " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
             " \"local\": {\"steps\": 1}%s}}",
             alg, members[0] ? ", " : "", members,
             a->needs_post ? ", \"post\": {\"steps\": 1}" : "");
    return tu_spec(text);
}

/* Every hyperparameter and switch of the registry, given by its name to
 * every algorithm it applies to, lands in its field: a real number (0.375),
 * a count (3), and every value name of a switch.  Names that mean
 * different things to different algorithms (alpha, beta) reach the field
 * of the algorithm named. */
START_TEST(test_params_by_name)
{
    size_t count, checked = 0;
    const pflref_param *params = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        char algs[256];
        snprintf(algs, sizeof algs, "%s", p->algorithms);
        char *save = NULL;
        for (char *alg = strtok_r(algs, " ", &save); alg != NULL;
             alg = strtok_r(NULL, " ", &save)) {
            size_t nvalues = 1;
            while (p->type == PFLREF_PARAM_ENUM && p->values[nvalues] != NULL)
                nvalues++;
            for (size_t v = 0; v < nvalues; v++) {
                char members[256];
                /* bn.aggregate = parameters_only, scaffold.bn_global =
                 * previous and moon.passes = train are refused on this
                 * model, which has no batch normalisation (docs/bad-inputs.md
                 * Z1, I13, I31); tests/test_bn_running.c and the moon
                 * vectors read them on one that has */
                if ((strcmp(p->name, "bn.aggregate") == 0 ||
                     strcmp(p->name, "scaffold.bn_global") == 0 ||
                     strcmp(p->name, "moon.passes") == 0) && v > 0)
                    continue;
                if (p->type == PFLREF_PARAM_REAL)
                    snprintf(members, sizeof members,
                             "\"hyperparameters\": {\"%s\": 0.375}", p->name);
                else if (p->type == PFLREF_PARAM_INT)
                    snprintf(members, sizeof members,
                             "\"hyperparameters\": {\"%s\": 3}", p->name);
                else
                    snprintf(members, sizeof members,
                             "\"switches\": {\"%s\": \"%s\"}", p->name,
                             p->values[v]);
                pflref_spec *spec = alg_spec(alg, members);
                pflref_hyper want;
                pflref_hyper_defaults(&want);
                if (p->type == PFLREF_PARAM_REAL)
                    memcpy((char *)&want + p->offset, &(double){0.375},
                           sizeof(double));
                else if (p->type == PFLREF_PARAM_INT)
                    memcpy((char *)&want + p->offset, &(size_t){3},
                           sizeof(size_t));
                else
                    memcpy((char *)&want + p->offset, &(int){(int)v},
                           sizeof(int));
                char what[128];
                snprintf(what, sizeof what, "%s given to %s", members, alg);
                assert_same_hyper(&spec->hyper, &want, what);
                pflref_spec_free(spec);
                checked++;
            }
        }
    }
    ck_assert_uint_gt(checked, count);
}
END_TEST

/* A switch value that is not one of the switch's names is refused at its
 * path, for every switch. */
START_TEST(test_unknown_switch_value)
{
    size_t count;
    const pflref_param *params = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &params[i];
        if (p->type != PFLREF_PARAM_ENUM)
            continue;
        char alg[64], text[2048], where[128];
        snprintf(alg, sizeof alg, "%.*s", (int)strcspn(p->algorithms, " "),
                 p->algorithms);
        const pflref_algorithm *a = pflref_algorithm_find(alg);
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                 "\"quadratic\", \"d\": 1}, \"problem\": {\"clients\": ["
                 "{\"a\": [1], \"c\": [2]}]}, \"algorithm\": {\"name\": \"%s\","
                 " \"switches\": {\"%s\": \"single\"}}, \"schedule\":"
                 " {\"kind\": \"generate\", \"rounds\": 1, \"local\":"
                 " {\"steps\": 1}%s}}", alg, p->name,
                 a->needs_post ? ", \"post\": {\"steps\": 1}" : "");
        snprintf(where, sizeof where, "algorithm.switches.%s", p->name);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
        ck_assert_msg(strcmp(err.where, where) == 0, "%s: where %s (%s)",
                      p->name, err.where, err.message);
        ck_assert_ptr_null(spec);
    }
    /* the case CFL's tests once read through the spec */
    static const char SEED_CLIENTS[] =
        "[{\"a\": [1, 1], \"c\": [1, 0]}, {\"a\": [1, 1], \"c\": [0.8, 0.2]},"
        " {\"a\": [1, 1], \"c\": [-1, 0]}, {\"a\": [1, 1], \"c\": [-0.9, -0.1]}]";
    static const char ONE_ROUND_4[] =
        "{\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1, 2, 3],"
        " \"batches\": [[[0]], [[0]], [[0]], [[0]]]}]}";
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"quadratic\", \"d\": 2}, \"problem\": {\"clients\": %s},"
             " \"algorithm\": {\"name\": \"cfl\", \"hyperparameters\": "
             "{\"eta\": 1, \"eps1\": 0.4, \"eps2\": 0.9, \"gamma_max\": 0.5},"
             " \"switches\": {\"cfl.bipartition\": \"single\"}},"
             " \"schedule\": %s}", SEED_CLIENTS, ONE_ROUND_4);
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(tu_parse(text, &spec, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "algorithm.switches.cfl.bipartition");
}
END_TEST

/* A spec naming a preset gets the hyperparameters pflref_preset_apply
 * gives, and the split the preset implies, for every preset; "paper" is
 * every algorithm's defaults; settings given in the spec override the
 * preset's. */
START_TEST(test_presets_by_name)
{
    static const char *const fmt =
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\","
        " \"d\": 2, \"h\": 3, \"k\": 2}, \"problem\": {\"clients\":"
        " [{\"X\": [[1, 2]], \"y\": [1]}]}, \"algorithm\": {\"name\": \"%s\","
        " \"preset\": \"%s\"%s}, \"schedule\": {\"kind\": \"given\","
        " \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]%s}}";
    const pflref_model m = tb_mlp(PFLREF_LOSS_CROSS_ENTROPY, 2, 2, 3,
                                  PFLREF_ACT_RELU, 1, 1);
    size_t npre;
    const pflref_preset *pre = pflref_presets(&npre);
    for (size_t k = 0; k < npre; k++) {
        const pflref_algorithm *a = pflref_algorithm_find(pre[k].algorithm);
        ck_assert_ptr_nonnull(a);
        char text[2048];
        snprintf(text, sizeof text, fmt, pre[k].algorithm, pre[k].name, "",
                 a->needs_post ? ", \"post\": [[[0]]]" : "");
        pflref_spec *spec = tu_spec(text);
        tb_case *c = tb_new(&m, 1);
        tb_preset(c, pre[k].algorithm, pre[k].name);
        char what[128];
        snprintf(what, sizeof what, "preset %s/%s", pre[k].algorithm,
                 pre[k].name);
        assert_same_hyper(&spec->hyper, &c->hyper, what);
        ck_assert_str_eq(spec->preset, pre[k].name);
        pflref_spec_free(spec);
        tb_free(c);
    }
    size_t nalg;
    const pflref_algorithm *const *algs = pflref_algorithms(&nalg);
    for (size_t k = 0; k < nalg; k++) {
        char text[2048];
        snprintf(text, sizeof text, fmt, algs[k]->name, "paper", "",
                 algs[k]->needs_post ? ", \"post\": [[[0]]]" : "");
        pflref_spec *spec = tu_spec(text);
        pflref_hyper want;
        pflref_hyper_defaults(&want);
        assert_same_hyper(&spec->hyper, &want, algs[k]->name);
        pflref_spec_free(spec);
    }
    /* explicit settings win: pFedMe's official μ = 0.001 and local_w
     * evaluation overridden, its warm start kept */
    char text[2048];
    snprintf(text, sizeof text, fmt, "pfedme", "official",
             ", \"hyperparameters\": {\"pfedme.mu\": 0}, \"switches\":"
             " {\"pfedme.personal_eval\": \"theta\"}", "");
    pflref_spec *spec = tu_spec(text);
    ck_assert_double_eq(spec->hyper.pfedme.mu, 0.0);
    ck_assert_int_eq(spec->hyper.pfedme.personal_eval,
                     PFLREF_PFEDME_EVAL_THETA);
    ck_assert_int_eq(spec->hyper.pfedme.theta_start, PFLREF_PFEDME_THETA_WARM);
    ck_assert_int_eq(spec->hyper.pfedme.weights, PFLREF_PFEDME_WEIGHTS_SAMPLES);
    pflref_spec_free(spec);
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

/* ---- schedules ----------------------------------------------------------- */

/* Three clients of a linear model (d = 1) with 3, 2 and 4 samples. */
static tb_case *three_clients(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 1, 1, 0, 0);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 3, (const double[]){1, 2, 3}, (const double[]){0.5, 1, 2});
    tb_train(c, 1, 2, (const double[]){-1, 2.385}, (const double[]){1, -1});
    tb_train(c, 2, 4, (const double[]){0.25, 1, -2, 3},
             (const double[]){1, 0, -1, 0.75});
    return c;
}

/* The same clients in a spec for `alg`, with `members` after "algorithm"'s
 * name (may be "") and the "schedule" object `schedule`. */
static pflref_spec *three_spec(const char *alg, const char *members,
                               const char *schedule)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
             "\"linear\", \"d\": 1, \"loss\": \"half_squared\"},"
             " \"problem\": {\"clients\": ["
             "{\"X\": [[1], [2], [3]], \"y\": [0.5, 1, 2]},"
             " {\"X\": [[-1], [2.385]], \"y\": [1, -1]},"
             " {\"X\": [[0.25], [1], [-2], [3]], \"y\": [1, 0, -1, 0.75]}]},"
             " \"algorithm\": {\"name\": \"%s\"%s%s}, \"schedule\": %s}",
             alg, members[0] ? ", " : "", members, schedule);
    return tu_spec(text);
}

/* A given schedule is read as written: each round's clients, batches,
 * selected (default: the clients), drawn (default: selected); steps of no
 * batch; the post phase. */
START_TEST(test_given_schedule)
{
    pflref_spec *spec = three_spec(
        "pfedme", "",
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [0, 2], \"batches\": [[[0, 2], [1]], [[3, 0, 1]]]},"
        " {\"clients\": [0, 1, 2], \"selected\": [0, 2], \"drawn\": [2, 0],"
        "  \"batches\": [[[1]], [[1, 0], [0]], [[2, 2]]]},"
        " {\"clients\": [1], \"batches\": [[]]}]}");
    ck_assert_int_eq(spec->schedule_given, 1);
    tb_case *c = three_clients();
    tb_round(c, "0 2", "0 2 | 1", "3 0 1");
    tb_round_selected(c, "0 1 2", "0 2", "1", "1 0 | 0", "2 2");
    tb_round(c, "1", "");
    pflref_schedule *want = tb_schedule(c, "pfedme");
    want->rounds[1].drawn[0] = 2;
    want->rounds[1].drawn[1] = 0;
    assert_same_schedule(spec->schedule, want);
    pflref_spec_free(spec);
    tb_free(c);

    spec = three_spec(
        "finetune", "",
        "{\"kind\": \"given\", \"rounds\": ["
        " {\"clients\": [1], \"batches\": [[[0]]]}],"
        " \"post\": [[[2], [0, 1]], [], [[3]]]}");
    c = three_clients();
    tb_round(c, "1", "0");
    tb_post(c, "2 | 0 1", "", "3");
    assert_same_schedule(spec->schedule, tb_schedule(c, "finetune"));
    pflref_spec_free(spec);
    tb_free(c);
}
END_TEST

/* A generated schedule is pflref_schedule_generate's for the spec's
 * fields; its defaults (every client, seeds 1, the GSL sampler, batches
 * split once) are the builder's tb_generate; and pFedMe's paper reading
 * trains every client while the sampled ones are selected, its
 * pfedme.train = sampled trains only those. */
START_TEST(test_generated_schedule)
{
    pflref_spec *spec = three_spec(
        "finetune", "",
        "{\"kind\": \"generate\", \"rounds\": 3, \"clients_per_round\": 2,"
        " \"sampler\": \"numpy_legacy\", \"client_seed\": 5,"
        " \"batches\": \"reshuffle\", \"batch_seed\": 9,"
        " \"local\": {\"epochs\": 2, \"batch_size\": 2},"
        " \"post\": {\"steps\": 3, \"batch_size\": 1}}");
    const pflref_schedule_config cfg = {
        .T = 3,
        .m = 2,
        .sampler = PFLREF_SAMPLER_NUMPY_LEGACY,
        .client_seed = 5,
        .order = PFLREF_BATCH_RESHUFFLE,
        .batch_seed = 9,
        .train = {.epochs = 2, .steps = 0, .B = 2},
        .train_all = 0,
        .has_post = 1,
        .post = {.epochs = 0, .steps = 3, .B = 1},
    };
    ck_assert_int_eq(spec->schedule_given, 0);
    ck_assert(memcmp(&spec->schedule_cfg.train, &cfg.train,
                     sizeof cfg.train) == 0);
    ck_assert(memcmp(&spec->schedule_cfg.post, &cfg.post,
                     sizeof cfg.post) == 0);
    ck_assert_uint_eq(spec->schedule_cfg.m, 2);
    ck_assert_int_eq(spec->schedule_cfg.sampler, PFLREF_SAMPLER_NUMPY_LEGACY);
    ck_assert_uint_eq(spec->schedule_cfg.client_seed, 5);
    ck_assert_uint_eq(spec->schedule_cfg.batch_seed, 9);
    tb_case *c = three_clients();
    tb_generate_config(c, &cfg);
    assert_same_schedule(spec->schedule, tb_schedule(c, "finetune"));
    pflref_spec_free(spec);
    tb_free(c);

    /* the defaults */
    spec = three_spec("fedavg", "",
                      "{\"kind\": \"generate\", \"rounds\": 2,"
                      " \"local\": {\"steps\": 3, \"batch_size\": 2}}");
    c = three_clients();
    tb_generate(c, 2, 3, 2);
    assert_same_schedule(spec->schedule, tb_schedule(c, "fedavg"));
    pflref_spec_free(spec);
    tb_free(c);

    /* pFedMe: all train, one selected; or only the selected one trains */
    for (int sampled = 0; sampled <= 1; sampled++) {
        spec = three_spec("pfedme",
                          sampled ? "\"switches\": {\"pfedme.train\":"
                                    " \"sampled\"}" : "",
                          "{\"kind\": \"generate\", \"rounds\": 2,"
                          " \"clients_per_round\": 1, \"client_seed\": 4,"
                          " \"local\": {\"steps\": 1}}");
        c = three_clients();
        c->hyper.pfedme.train = sampled ? PFLREF_PFEDME_TRAIN_SAMPLED
                                        : PFLREF_PFEDME_TRAIN_ALL;
        const pflref_schedule_config one = {
            .T = 2,
            .m = 1,
            .sampler = PFLREF_SAMPLER_GSL,
            .client_seed = 4,
            .order = PFLREF_BATCH_SPLIT_ONCE,
            .batch_seed = 1,
            .train = {.epochs = 0, .steps = 1, .B = 0},
        };
        tb_generate_config(c, &one);
        const pflref_schedule *want = tb_schedule(c, "pfedme");
        assert_same_schedule(spec->schedule, want);
        ck_assert_uint_eq(want->rounds[0].m, sampled ? 1 : 3);
        ck_assert_uint_eq(want->rounds[0].n_selected, 1);
        pflref_spec_free(spec);
        tb_free(c);
    }
}
END_TEST

/* "post" is refused by an algorithm without a phase after training and
 * required by one that needs it, both at schedule.post, for every
 * algorithm of the registry. */
START_TEST(test_post_phase_by_algorithm)
{
    size_t nalg;
    const pflref_algorithm *const *algs = pflref_algorithms(&nalg);
    for (size_t k = 0; k < nalg; k++) {
        const pflref_algorithm *a = algs[k];
        if (!a->needs_post && !a->allows_post) {
            char text[2048];
            snprintf(text, sizeof text,
                     "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                     "\"quadratic\", \"d\": 1}, \"problem\": {\"clients\": "
                     "[{\"a\": [1], \"c\": [2]}]}, \"algorithm\": {\"name\":"
                     " \"%s\"}, \"schedule\": {\"kind\": \"generate\","
                     " \"rounds\": 1, \"local\": {\"steps\": 1},"
                     " \"post\": {\"steps\": 1}}}", a->name);
            pflref_spec *spec = NULL;
            pflref_error err;
            ck_assert_msg(tu_parse(text, &spec, &err) == PFLREF_EINVAL &&
                              strcmp(err.where, "schedule.post") == 0,
                          "%s with a post phase: %s (%s)", a->name, err.where,
                          err.message);
        }
        if (a->needs_post) {
            char text[2048];
            snprintf(text, sizeof text,
                     "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": "
                     "\"quadratic\", \"d\": 1}, \"problem\": {\"clients\": "
                     "[{\"a\": [1], \"c\": [2]}]}, \"algorithm\": {\"name\":"
                     " \"%s\"}, \"schedule\": {\"kind\": \"given\","
                     " \"rounds\": [{\"clients\": [0], \"batches\":"
                     " [[[0]]]}]}}", a->name);
            pflref_spec *spec = NULL;
            pflref_error err;
            ck_assert_msg(tu_parse(text, &spec, &err) == PFLREF_EINVAL &&
                              strcmp(err.where, "schedule.post") == 0,
                          "%s without a post phase: %s (%s)", a->name,
                          err.where, err.message);
        }
    }
    /* the case the interpolation tests once read through the spec: no post
     * phase, so the local models have no schedule */
    pflref_spec *spec = NULL;
    pflref_error err;
    ck_assert_int_eq(
        tu_parse("{\"format\": \"pflref-spec/1\", \"model\": {\"kind\":"
                 " \"quadratic\", \"d\": 1}, \"problem\": {\"clients\":"
                 " [{\"a\": [1], \"c\": [4]}, {\"a\": [1], \"c\": [-2]}]},"
                 " \"algorithm\": {\"name\": \"interp\", \"hyperparameters\":"
                 " {\"eta\": 1, \"alpha\": 0.5}}, \"schedule\": {\"kind\":"
                 " \"given\", \"rounds\": [{\"clients\": [0, 1], \"batches\":"
                 " [[[0]], [[0]]]}]}}", &spec, &err),
        PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.post");
}
END_TEST

/* ---- IFCA's initial cluster models --------------------------------------- */

/* init.cluster_models: k arrays of P numbers, cluster 0 first, become
 * hyper.ifca.theta0; they are for ifca only, k rows of P numbers, given k. */
START_TEST(test_cluster_models)
{
    pflref_spec *spec = tu_spec(
        "{\"format\": \"pflref-spec/1\","
        " \"model\": {\"kind\": \"quadratic\", \"d\": 2},"
        " \"problem\": {\"clients\": [{\"a\": [2, 1], \"c\": [0.8, 0]},"
        " {\"a\": [2, 1], \"c\": [1.2, 1]}, {\"a\": [2, 1], \"c\": [2.9, 2]}]},"
        " \"init\": {\"kind\": \"given\", \"w\": [0.5, 0.25],"
        " \"cluster_models\": [[0.3, -1], [1.7, 2.385], [2.9, 0]]},"
        " \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\":"
        " {\"gamma\": 0.1, \"ifca.k\": 3}},"
        " \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\":"
        " [0, 1, 2], \"batches\": [[[0]], [[0]], [[0]]]}]}}");
    static const double want[6] = {0.3, -1, 1.7, 2.385, 2.9, 0};
    ck_assert_uint_eq(spec->n_cluster_models, 3);
    ck_assert_ptr_nonnull(spec->hyper.ifca.theta0);
    ck_assert(memcmp(spec->hyper.ifca.theta0, want, sizeof want) == 0);
    ck_assert(spec->w0[0] == 0.5 && spec->w0[1] == 0.25);
    pflref_spec_free(spec);

    const char *cl = "[{\"a\": [2], \"c\": [0.8]}, {\"a\": [2], \"c\": [1.2]}]";
    static const struct {
        const char *models, *hyper, *alg, *where;
    } bad[] = {
        {"[[0], [1]]", "\"eta\": 0.1", "fedavg", "init.cluster_models"},
        {"[[0], [1]]", "\"gamma\": 0.1, \"ifca.k\": 3", "ifca",
         "init.cluster_models"},
        {"[[0], [1]]", "\"gamma\": 0.1", "ifca", "init.cluster_models"},
        {"[[0], [1, 2]]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models[1]"},
        {"[[0], \"x\"]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models[1]"},
        {"[]", "\"gamma\": 0.1, \"ifca.k\": 2", "ifca",
         "init.cluster_models"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char text[4096];
        pflref_spec *s = NULL;
        pflref_error err;
        snprintf(text, sizeof text,
                 "{\"format\": \"pflref-spec/1\","
                 " \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
                 " \"problem\": {\"clients\": %s},"
                 " \"init\": {\"kind\": \"zeros\", \"cluster_models\": %s},"
                 " \"algorithm\": {\"name\": \"%s\", \"hyperparameters\":"
                 " {%s}}}", cl, bad[b].models, bad[b].alg, bad[b].hyper);
        ck_assert_int_eq(tu_parse(text, &s, &err), PFLREF_EINVAL);
        ck_assert_msg(strcmp(err.where, bad[b].where) == 0, "case %zu: %s: %s",
                      b, err.where, err.message);
        ck_assert_ptr_null(s);
    }
}
END_TEST

/* ---- the reader's runs are the builder's --------------------------------- */

/* pFedMe, the notes' problem with n = (1, 3), preset official with μ = 0,
 * β = 2, two generated rounds of two steps. */
static const char PFEDME_SPEC[] =
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\","
    " \"d\": 1}, \"problem\": {\"clients\": [{\"a\": [1], \"c\": [4]},"
    " {\"a\": [1], \"c\": [-2], \"n\": 3}]},"
    " \"algorithm\": {\"name\": \"pfedme\", \"preset\": \"official\","
    " \"hyperparameters\": {\"lambda\": 1, \"eta_p\": 0.25, \"K\": 2,"
    " \"eta\": 0.5, \"beta\": 2, \"pfedme.mu\": 0}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
    " \"local\": {\"steps\": 2}}}";

static tb_case *pfedme_case(void)
{
    tb_case *c = tb_quadratic(1, 2);
    tb_quad(c, 0, (const double[]){1}, (const double[]){4}, 1);
    tb_quad(c, 1, (const double[]){1}, (const double[]){-2}, 3);
    tb_preset(c, "pfedme", "official");
    c->hyper.lambda = 1.0;
    c->hyper.eta_p = 0.25;
    c->hyper.K = 2;
    c->hyper.eta = 0.5;
    c->hyper.beta = 2.0;
    c->hyper.pfedme.mu = 0.0;
    tb_generate(c, 2, 2, 0);
    return c;
}

/* FedAlt on Example A (personal bias), stateless, three full-batch steps
 * per participation and two fine-tuning steps. */
static const char FEDALT_SPEC[] =
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\","
    " \"d\": 1, \"loss\": \"half_squared\", \"bias\": true},"
    " \"problem\": {\"clients\": [{\"X\": [[1], [2]], \"y\": [2, 3]},"
    " {\"X\": [[1], [2], [3]], \"y\": [-1, -1, -2]},"
    " {\"X\": [[1]], \"y\": [1]}]}, \"split\": {\"personal\": [\"b\"]},"
    " \"init\": {\"kind\": \"given\", \"w\": [0.5, 0]},"
    " \"algorithm\": {\"name\": \"fedalt\", \"hyperparameters\":"
    " {\"gamma_u\": 0.1, \"gamma_v\": 0.1, \"tau_v\": 1, \"eta_ft\": 0.1},"
    " \"switches\": {\"pfl.state\": \"stateless\"}},"
    " \"schedule\": {\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0, 1], [0, 1], [0, 1]],"
    "  [[0, 1, 2], [0, 1, 2], [0, 1, 2]]]},"
    " {\"clients\": [1, 2], \"batches\": [[[0, 1, 2], [0, 1, 2], [0, 1, 2]],"
    "  [[0], [0], [0]]]}],"
    " \"post\": [[[0, 1], [0, 1]], [[0, 1, 2], [0, 1, 2]], [[0], [0]]]}}";

static tb_case *fedalt_case(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 1, 1, 0, 1);
    tb_case *c = tb_new(&m, 3);
    tb_train(c, 0, 2, (const double[]){1, 2}, (const double[]){2, 3});
    tb_train(c, 1, 3, (const double[]){1, 2, 3}, (const double[]){-1, -1, -2});
    tb_train(c, 2, 1, (const double[]){1}, (const double[]){1});
    tb_split(c, "b");
    tb_w0(c, (const double[]){0.5, 0});
    c->hyper.gamma_u = 0.1;
    c->hyper.gamma_v = 0.1;
    c->hyper.tau_v = 1;
    c->hyper.eta_ft = 0.1;
    c->hyper.pfl.state = PFLREF_PFL_STATELESS;
    tb_round(c, "0 1", "0 1 | 0 1 | 0 1", "0 1 2 | 0 1 2 | 0 1 2");
    tb_round(c, "1 2", "0 1 2 | 0 1 2 | 0 1 2", "0 | 0 | 0");
    tb_post(c, "0 1 | 0 1", "0 1 2 | 0 1 2", "0 | 0");
    return c;
}

/* Interpolation with the per-client grid (G = 7) scored on the
 * validation split; train, test and validation data; generated rounds and
 * post phase. */
static const char INTERP_SPEC[] =
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\","
    " \"d\": 2, \"loss\": \"half_squared\", \"bias\": true},"
    " \"problem\": {\"clients\": ["
    " {\"X\": [[0.912, -1.347], [-0.284, 0.671], [1.563, 0.238]],"
    "  \"y\": [-0.775, 1.409, 0.236],"
    "  \"X_test\": [[0.35, -0.2], [1.1, 0.45]], \"y_test\": [0.3, -0.41],"
    "  \"X_val\": [[0.72, 0.1], [-1.05, 0.33]], \"y_val\": [-0.2, 1.3]},"
    " {\"X\": [[-1.426, 0.357], [0.689, -0.942]], \"y\": [0.518, -1.263],"
    "  \"X_test\": [[0.2, 0.2], [-0.9, 1.4]], \"y_test\": [-0.15, 0.95],"
    "  \"X_val\": [[0.4, -0.85]], \"y_val\": [-1.1]}]},"
    " \"algorithm\": {\"name\": \"interp\", \"hyperparameters\":"
    " {\"eta\": 0.3, \"interp.grid\": 7},"
    " \"switches\": {\"interp.alpha\": \"per_client_grid\"}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 3,"
    " \"local\": {\"steps\": 2}, \"post\": {\"steps\": 6}}}";

static tb_case *interp_case(void)
{
    const pflref_model m = tb_model(PFLREF_MODEL_LINEAR,
                                    PFLREF_LOSS_HALF_SQUARED, 2, 1, 0, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3,
             (const double[]){0.912, -1.347, -0.284, 0.671, 1.563, 0.238},
             (const double[]){-0.775, 1.409, 0.236});
    tb_test(c, 0, 2, (const double[]){0.35, -0.2, 1.1, 0.45},
            (const double[]){0.3, -0.41});
    tb_val(c, 0, 2, (const double[]){0.72, 0.1, -1.05, 0.33},
           (const double[]){-0.2, 1.3});
    tb_train(c, 1, 2, (const double[]){-1.426, 0.357, 0.689, -0.942},
             (const double[]){0.518, -1.263});
    tb_test(c, 1, 2, (const double[]){0.2, 0.2, -0.9, 1.4},
            (const double[]){-0.15, 0.95});
    tb_val(c, 1, 1, (const double[]){0.4, -0.85}, (const double[]){-1.1});
    c->hyper.eta = 0.3;
    c->hyper.interp.grid = 7;
    c->hyper.interp.alpha_mode = PFLREF_INTERP_PER_CLIENT_GRID;
    tb_generate(c, 3, 2, 0);
    tb_generate_post(c, 6, 0);
    return c;
}

/* IFCA from given initial cluster models. */
static const char IFCA_SPEC[] =
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\","
    " \"d\": 1}, \"problem\": {\"clients\": [{\"a\": [2], \"c\": [0.8]},"
    " {\"a\": [2], \"c\": [1.2]}, {\"a\": [2], \"c\": [2.9]}]},"
    " \"init\": {\"kind\": \"given\", \"w\": [0.5],"
    " \"cluster_models\": [[0.3], [1.7], [2.9]]},"
    " \"algorithm\": {\"name\": \"ifca\", \"hyperparameters\":"
    " {\"gamma\": 0.1, \"ifca.k\": 3}},"
    " \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\":"
    " [0, 1, 2], \"batches\": [[[0]], [[0]], [[0]]]}]}}";

static const double IFCA_THETA0[3] = {0.3, 1.7, 2.9};

static tb_case *ifca_case(void)
{
    tb_case *c = tb_quadratic(1, 3);
    tb_quad(c, 0, (const double[]){2}, (const double[]){0.8}, 1);
    tb_quad(c, 1, (const double[]){2}, (const double[]){1.2}, 1);
    tb_quad(c, 2, (const double[]){2}, (const double[]){2.9}, 1);
    tb_w0(c, (const double[]){0.5});
    c->hyper.ifca.gamma = 0.1;
    c->hyper.ifca.k = 3;
    c->hyper.ifca.theta0 = IFCA_THETA0;
    tb_round(c, "0 1 2", "0", "0", "0");
    return c;
}

/* APFL on an identity mlp with the FedTorch preset and adaptive α. */
static const char APFL_SPEC[] =
    "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"mlp\", \"d\": 2,"
    " \"h\": 2, \"k\": 1, \"loss\": \"squared\", \"activation\": \"identity\","
    " \"bias\": true}, \"problem\": {\"clients\": ["
    " {\"X\": [[0.5, -1.25], [1.5, 0.25], [-0.75, 0.875]],"
    "  \"y\": [1.125, 2.25, -0.5]},"
    " {\"X\": [[1.0, 0.5], [-0.5, 1.5], [0.25, -0.75], [1.25, 1.0]],"
    "  \"y\": [0.75, -1.0, 0.5, 1.5]}]},"
    " \"init\": {\"kind\": \"given\", \"w\": [0.375, -0.25, 0.125, 0.5,"
    " 0.0625, -0.125, 0.625, -0.375, 0.25]},"
    " \"algorithm\": {\"name\": \"apfl\", \"preset\": \"fedtorch\","
    " \"hyperparameters\": {\"eta\": 0.125, \"alpha\": 0.375},"
    " \"switches\": {\"apfl.alpha\": \"adaptive\"}},"
    " \"schedule\": {\"kind\": \"given\", \"rounds\": ["
    " {\"clients\": [0, 1], \"batches\": [[[0, 1], [2]], [[0, 1], [2, 3]]]},"
    " {\"clients\": [0, 1], \"batches\": [[[2], [0, 1]], [[2, 3], [1]]]}]}}";

static tb_case *apfl_case(void)
{
    const pflref_model m = tb_mlp(PFLREF_LOSS_SQUARED, 2, 1, 2,
                                  PFLREF_ACT_IDENTITY, 1, 1);
    tb_case *c = tb_new(&m, 2);
    tb_train(c, 0, 3, (const double[]){0.5, -1.25, 1.5, 0.25, -0.75, 0.875},
             (const double[]){1.125, 2.25, -0.5});
    tb_train(c, 1, 4,
             (const double[]){1.0, 0.5, -0.5, 1.5, 0.25, -0.75, 1.25, 1.0},
             (const double[]){0.75, -1.0, 0.5, 1.5});
    tb_w0(c, (const double[]){0.375, -0.25, 0.125, 0.5, 0.0625, -0.125, 0.625,
                              -0.375, 0.25});
    tb_preset(c, "apfl", "fedtorch");
    c->hyper.eta = 0.125;
    c->hyper.apfl.alpha = 0.375;
    c->hyper.apfl.alpha_mode = PFLREF_APFL_ALPHA_ADAPTIVE;
    tb_round(c, "0 1", "0 1 | 2", "0 1 | 2 3");
    tb_round(c, "0 1", "2 | 0 1", "2 3 | 1");
    return c;
}

static const struct {
    const char *spec;
    tb_case *(*build)(void);
} SAME_RUN[] = {
    {PFEDME_SPEC, pfedme_case}, {FEDALT_SPEC, fedalt_case},
    {INTERP_SPEC, interp_case}, {IFCA_SPEC, ifca_case},
    {APFL_SPEC, apfl_case},
};

/* Each spec, read and run, gives bit for bit the result and the
 * trajectory of the builder's rendering of it: the same problem, w⁰,
 * hyperparameters and schedule, so the same run. */
START_TEST(test_reader_equals_builder)
{
    pflref_spec *spec = tu_spec(SAME_RUN[_i].spec);
    tb_case *c = SAME_RUN[_i].build();
    const char *alg = spec->algorithm->name;
    assert_same_problem(spec->problem, c->problem);
    ck_assert(memcmp(spec->w0, c->w0, c->problem->model.P * sizeof *c->w0) ==
              0);
    assert_same_hyper(&spec->hyper, &c->hyper, alg);
    assert_same_schedule(spec->schedule, tb_schedule(c, alg));
    pflref_trajectory ts, tc;
    pflref_trajectory_init(&ts, PFLREF_RECORD_STEP);
    const pflref_trace tr = {.emit = pflref_trajectory_emit, .ctx = &ts};
    pflref_run_result *rs = tu_run(spec, &tr);
    pflref_run_result *rc = tb_run_recorded(c, alg, &tc);
    assert_same_result(rs, rc, alg);
    ck_assert_uint_eq(ts.count, tc.count);
    ck_assert_uint_eq(ts.nvalues, tc.nvalues);
    ck_assert_msg(memcmp(ts.values, tc.values,
                         ts.nvalues * sizeof *ts.values) == 0,
                  "%s: the trajectories differ", alg);
    pflref_trajectory_free(&ts);
    pflref_trajectory_free(&tc);
    pflref_run_result_free(rs);
    pflref_run_result_free(rc);
    pflref_spec_free(spec);
    tb_free(c);
}
END_TEST

Suite *spec_suite(void)
{
    Suite *s = suite_create("spec");
    TCase *tc = tcase_create("spec");
    tcase_add_test(tc, test_inline_problem);
    tcase_add_test(tc, test_quadratic_client_needs_c);
    tcase_add_test(tc, test_init_drawn);
    tcase_add_test(tc, test_val_parse_errors);
    tcase_add_test(tc, test_params_by_name);
    tcase_add_test(tc, test_unknown_switch_value);
    tcase_add_test(tc, test_presets_by_name);
    tcase_add_test(tc, test_preset_split);
    tcase_add_test(tc, test_given_schedule);
    tcase_add_test(tc, test_generated_schedule);
    tcase_add_test(tc, test_post_phase_by_algorithm);
    tcase_add_test(tc, test_cluster_models);
    tcase_add_loop_test(tc, test_reader_equals_builder, 0,
                        (int)(sizeof SAME_RUN / sizeof SAME_RUN[0]));
    suite_add_tcase(s, tc);
    return s;
}
