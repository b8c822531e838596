/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/plot_curves.c: pflref plot curves, training curves per round.
 *
 *   pflref plot curves [--metric M] [--title T] -o FIG [LABEL=]SPEC ...
 *
 * A result keeps the final metrics only, so the curves come from running
 * each spec (or golden vector) through the reference, exactly as `pflref
 * run` does, with a trace sink that takes the server's new global model
 * w_{t+1} of every round (the `server` event named "w") and evaluates it
 * on every client with the library's pflref_model_evaluate; the per-client
 * values are summarised by pflref_metrics_summarize (mean and worst).  One
 * figure: a solid mean curve and a dashed worst-client curve per spec, so
 * algorithms on one problem compare at a glance, on a linear round axis;
 * the end labels are stacked apart, and a curve identical to an earlier
 * one is drawn so that both show and shares that one's labels.
 *
 * Beside the global model's, the personalised models' curves (dash-dot,
 * with points, in the curve's colour) where the algorithm keeps one
 * personalised model per client across the rounds, the model its result's
 * `personalized` metrics evaluate (docs/formats.md, "Metrics"): Ditto's
 * v_k, FedAlt's and FedSim's (u, v_i) (the `client_end` "v" events),
 * pFedMe's θ_i or w_{i,R} (`pfedme.personal_eval`; the "theta" or
 * "w_local" client_end), APFL's v̄_i (the `v_bar` note, `apfl.mix =
 * parameter`: α_i v_i + (1 − α_i) w_i with the client's own w_i, what
 * FedTorch evaluates each round; the result's final `personalized` mixes
 * in the global w).  After each round every client's latest personalised model
 * is evaluated, from the first round after which every client has one (a
 * client that never trained has none yet).
 *
 * Metrics: test_mse (the default, as for the other kinds; regression
 * models), test_loss, test_accuracy (classifiers) (on each client's test
 * data; a client without test data is refused), and on the training data
 * train_loss, train_mse (regression), train_accuracy (classifiers): one
 * evaluation per client and round gives the loss, mse and accuracy of its
 * set.  Algorithms with no global model per round
 * (local, cfl, ifca) are refused: they emit no server "w".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "plot.h"

/* The sink's state: the problem, where each round's point goes. */
typedef struct {
    const pflref_problem *problem;
    pflref_model_workspace *ws;
    const char *metric;
    double *per_client;        /* 2N: the values, then scratch */
    sbuf *data;                /* "t mean worst" lines */
    size_t points;
    long first_t, last_t;      /* the first round; the last point: round, */
    double last_mean, last_worst;  /* mean, worst */
    double lo, hi;             /* the smallest and largest value drawn */
    pflref_status failed;      /* the first evaluation error */
    pflref_error err;
    /* the personalised models: the event that carries client i's (kind,
     * name; NULL: none), each client's latest (N×P) and whether it has one */
    pflref_event_kind pers_kind;
    const char *pers_name;
    double *pers;
    unsigned char *have;
    size_t n_have;
    sbuf pdata;                /* "t mean worst" lines of the personalised */
    size_t ppoints;
    double plast_mean, plast_worst;
} curve_sink;

/* The event of algorithm alg (under hyper h) that carries a client's
 * personalised model after its round, into *kind and *name; 0 when the
 * algorithm keeps none across the rounds (its personalisation happens
 * after training, or it has no full personal parameter vector). */
static int personal_event(const char *alg, const pflref_hyper *h,
                          pflref_event_kind *kind, const char **name)
{
    *kind = PFLREF_EV_CLIENT_END;
    if (strcmp(alg, "ditto") == 0 || strcmp(alg, "fedalt") == 0 ||
        strcmp(alg, "fedsim") == 0)
        *name = "v";
    else if (strcmp(alg, "pfedme") == 0 &&
             h->pfedme.personal_eval != PFLREF_PFEDME_EVAL_GLOBAL)
        *name = h->pfedme.personal_eval == PFLREF_PFEDME_EVAL_THETA ? "theta"
                                                                   : "w_local";
    else if (strcmp(alg, "apfl") == 0 &&
             h->apfl.mix == PFLREF_APFL_MIX_PARAMETER) {
        *kind = PFLREF_EV_NOTE;
        *name = "v_bar";
    } else
        return 0;
    return 1;
}

/* 1 when metric is one of the training set's (train_loss, train_mse,
 * train_accuracy). */
static int is_train(const char *metric)
{
    return strncmp(metric, "train_", 6) == 0;
}

/* The metric of one evaluation (of the set the metric names). */
static double metric_of(const pflref_eval *e, const char *metric)
{
    const char *what = metric + (is_train(metric) ? 6 : 5);
    if (strcmp(what, "mse") == 0)
        return e->mse;
    if (strcmp(what, "accuracy") == 0)
        return e->accuracy;
    return e->loss;
}

/* 1 when metric is an accuracy (higher is better). */
static int is_accuracy(const char *metric)
{
    return strcmp(metric, "test_accuracy") == 0 ||
           strcmp(metric, "train_accuracy") == 0;
}

/* Evaluate on every client i the model at models + i·stride (stride 0:
 * one model for all) and summarise into *s; 0 on failure (cs->failed and
 * cs->err set). */
static int evaluate_all(curve_sink *cs, const double *models, size_t stride,
                        pflref_summary *s)
{
    const pflref_problem *p = cs->problem;
    const int train = is_train(cs->metric);
    for (size_t i = 0; i < p->N && cs->failed == PFLREF_OK; i++) {
        pflref_eval e;
        const pflref_data *D = train ? &p->clients[i].train
                                     : &p->clients[i].test;
        cs->failed = pflref_model_evaluate(&p->model, models + i * stride, D,
                                           cs->ws, &e);
        cs->per_client[i] = metric_of(&e, cs->metric);
    }
    if (cs->failed == PFLREF_OK)
        cs->failed = pflref_metrics_summarize(
            cs->per_client, NULL, p->N,
            is_accuracy(cs->metric) ? PFLREF_HIGHER_IS_BETTER
                                    : PFLREF_LOWER_IS_BETTER,
            cs->per_client + p->N, s, &cs->err);
    else
        pflref_error_set(&cs->err, cs->failed, "", "cannot evaluate a model");
    return cs->failed == PFLREF_OK;
}

/* Keep client i's personalised model when ev carries it. */
static void keep_personal(curve_sink *cs, const pflref_event *ev)
{
    const size_t P = cs->problem->model.P;
    if (cs->pers == NULL || ev->kind != cs->pers_kind || ev->client < 0 ||
        (size_t)ev->client >= cs->problem->N || ev->len != P ||
        strcmp(ev->name, cs->pers_name) != 0 ||
        (ev->phase != NULL && strcmp(ev->phase, "train") != 0))
        return;
    memcpy(cs->pers + (size_t)ev->client * P, ev->value, P * sizeof *ev->value);
    cs->n_have += !cs->have[ev->client];
    cs->have[ev->client] = 1;
}

/* After round t, once every client has a personalised model: their
 * summary, "t+1 mean worst" in the personalised datablock. */
static void personal_point(curve_sink *cs, long t)
{
    pflref_summary s;
    if (cs->pers == NULL || cs->n_have < cs->problem->N ||
        !evaluate_all(cs, cs->pers, cs->problem->model.P, &s))
        return;
    sb_printf(&cs->pdata, "%ld %.17g %.17g\n", t + 1, s.mean, s.worst);
    cs->ppoints++;
    cs->lo = fmin(cs->lo, fmin(s.mean, s.worst));
    cs->hi = fmax(cs->hi, fmax(s.mean, s.worst));
    cs->plast_mean = s.mean;
    cs->plast_worst = s.worst;
}

/* At every server "w" of the rounds: evaluate it on every client, and
 * write "t+1 mean worst"; then the personalised models' point. */
static void curve_emit(void *ctx, const pflref_event *ev)
{
    curve_sink *cs = ctx;
    const pflref_problem *p = cs->problem;
    if (cs->failed != PFLREF_OK)
        return;
    keep_personal(cs, ev);
    if (ev->kind != PFLREF_EV_SERVER || strcmp(ev->name, "w") != 0 ||
        ev->len != p->model.P || ev->round < 0)
        return;
    pflref_summary s;
    if (evaluate_all(cs, ev->value, 0, &s)) {
        sb_printf(cs->data, "%ld %.17g %.17g\n", ev->round + 1, s.mean,
                  s.worst);
        if (cs->points++ == 0)
            cs->first_t = ev->round + 1;
        cs->lo = fmin(cs->lo, fmin(s.mean, s.worst));
        cs->hi = fmax(cs->hi, fmax(s.mean, s.worst));
        cs->last_t = ev->round + 1;
        cs->last_mean = s.mean;
        cs->last_worst = s.worst;
        personal_point(cs, ev->round);
    }
}

/* The metric must exist for every client of the problem: EXIT_OK, or the
 * error printed. */
static int metric_fits(const pflref_problem *p, const char *metric,
                       const char *path)
{
    static const char *const KNOWN[] = {"test_loss", "test_mse",
                                        "test_accuracy", "train_loss",
                                        "train_mse", "train_accuracy"};
    size_t k = 0;
    while (k < sizeof KNOWN / sizeof KNOWN[0] && strcmp(metric, KNOWN[k]) != 0)
        k++;
    if (k == sizeof KNOWN / sizeof KNOWN[0])
        return cli_usage_error("--metric: curves take test_loss, test_mse, "
                               "test_accuracy, train_loss, train_mse or "
                               "train_accuracy", metric);
    const int test = !is_train(metric);
    const char *what = metric + (test ? 5 : 6);
    if ((strcmp(what, "mse") == 0 && !pflref_model_is_regression(&p->model)) ||
        (strcmp(what, "accuracy") == 0 &&
         !pflref_model_is_classifier(&p->model))) {
        fprintf(stderr, "pflref: %s: model.kind: this model has no %s\n",
                path, metric);
        return EXIT_USAGE;
    }
    for (size_t i = 0; test && i < p->N; i++)
        if (p->clients[i].test.n == 0) {
            fprintf(stderr, "pflref: %s: problem.clients[%zu]: no test data "
                            "for %s\n", path, i, metric);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

/* Read path (a spec or a golden vector) into *spec; an exit code. */
static int read_spec(const char *path, pflref_spec **spec)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text, dir[PFLREF_PATH_MAX];
    size_t len;
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK)
        return cli_fail(&err, path);
    pflref_file_folder(path, dir, sizeof dir);
    pflref_status st = pflref_golden_is_vector(text, len)
                           ? pflref_golden_spec(text, len, dir, spec, &err)
                           : pflref_spec_parse(text, len, dir, spec, &err);
    free(text);
    return st == PFLREF_OK ? EXIT_OK : cli_fail(&err, path);
}

/* One curve of the figure: where its datablock's points are in the data
 * buffer, its rounds, its last values and the range of its values, and
 * the earlier curve it is identical to (or -1). */
typedef struct {
    size_t from, to;
    long first_t, last_t;
    double last_mean, last_worst, lo, hi;
    long twin;
    int pers;                      /* a personalised datablock $pers<k> */
    double plast_mean, plast_worst;
} curve;

/* Run one spec into datablock $run<k> (in b), what it drew into *cv;
 * returns an exit code. */
static int curve_of(sbuf *b, curve *cv, const char *path, const char *metric,
                    size_t k)
{
    pflref_spec *spec = NULL;
    int rc = read_spec(path, &spec);
    if (rc != EXIT_OK)
        return rc;
    const pflref_problem *p = spec->problem;
    rc = metric_fits(p, metric, path);
    curve_sink cs = {.problem = p, .metric = metric, .data = b,
                     .failed = PFLREF_OK, .lo = INFINITY, .hi = -INFINITY};
    pflref_error_clear(&cs.err);
    if (rc == EXIT_OK) {
        cs.ws = pflref_model_workspace_alloc(&p->model, pflref_problem_max_n(p));
        cs.per_client = malloc(2 * p->N * sizeof *cs.per_client);
        if (personal_event(spec->algorithm->name, &spec->hyper, &cs.pers_kind,
                           &cs.pers_name)) {
            cs.pers = malloc(p->N * p->model.P * sizeof *cs.pers);
            cs.have = calloc(p->N, 1);
        }
        if (cs.ws == NULL || cs.per_client == NULL ||
            (cs.pers_name != NULL && (cs.pers == NULL || cs.have == NULL))) {
            fprintf(stderr, "pflref: %s: out of memory\n", path);
            rc = EXIT_INTERNAL;
        }
    }
    if (rc == EXIT_OK) {
        sb_printf(b, "$run%zu << EOD\n", k);
        const size_t from = b->n;
        pflref_trace sink = {curve_emit, &cs};
        pflref_run_result *res = NULL;
        pflref_error err;
        pflref_error_clear(&err);
        pflref_status st = pflref_spec_run(spec, &sink, &res, &err);
        pflref_run_result_free(res);
        sb_printf(b, "EOD\n");
        if (st != PFLREF_OK)
            rc = cli_fail(&err, path);
        else if (cs.failed != PFLREF_OK)
            rc = cli_fail(&cs.err, path);
        else if (cs.points == 0) {
            fprintf(stderr, "pflref: %s: algorithm.name: %s keeps no global "
                            "model per round (no server \"w\"): no curve\n",
                    path, spec->algorithm->name);
            rc = EXIT_USAGE;
        } else {
            *cv = (curve){.from = from, .to = b->n - 4, .first_t = cs.first_t,
                          .last_t = cs.last_t, .last_mean = cs.last_mean,
                          .last_worst = cs.last_worst, .lo = cs.lo,
                          .hi = cs.hi, .twin = -1, .pers = cs.ppoints > 0 && !cs.pdata.failed,
                          .plast_mean = cs.plast_mean,
                          .plast_worst = cs.plast_worst};
            if (cv->pers)
                sb_printf(b, "$pers%zu << EOD\n%sEOD\n", k, cs.pdata.s);
        }
    }
    pflref_model_workspace_free(cs.ws);
    free(cs.per_client);
    free(cs.pers);
    free(cs.have);
    free(cs.pdata.s);
    pflref_spec_free(spec);
    return rc;
}

/* An end label: the value it labels, where it is drawn, its text, its
 * curve's colour. */
typedef struct {
    double value, y;
    char text[200];
    size_t colour;
} end_label;

/* The end labels of the curves stacked a line apart (LABEL_STEP of the
 * y range, which grows to hold them) and the y range [*ylo, *yhi]. */
#define LABEL_STEP 0.045
static void end_labels_range(end_label *l, size_t n, double lo, double hi,
                             double *ylo, double *yhi)
{
    for (size_t i = 1; i < n; i++)           /* insertion sort by value */
        for (size_t j = i; j > 0 && l[j].value < l[j - 1].value; j--) {
            end_label t = l[j];
            l[j] = l[j - 1];
            l[j - 1] = t;
        }
    double range = hi > lo ? (hi - lo) / 0.9 : fmax(fabs(hi), 1.0) * 0.5;
    for (int it = 0; it < 64; it++) {
        const double h = LABEL_STEP * range, margin = 0.05 * range;
        double top = hi;
        for (size_t i = 0; i < n; i++) {
            l[i].y = i == 0 ? l[i].value : fmax(l[i].value, l[i - 1].y + h);
            top = fmax(top, l[i].y + 1.4 * h);
        }
        *ylo = lo - margin;
        *yhi = top + margin;
        if (*yhi - *ylo <= range * (1.0 + 1e-9))
            break;
        range = *yhi - *ylo;
    }
}

/* The name of argument k: LABEL of LABEL=SPEC, or the whole argument. */
static void arg_label(const char *arg, char *label, size_t size)
{
    const char *eq = strchr(arg, '=');
    snprintf(label, size, "%.*s",
             (int)(eq != NULL ? (size_t)(eq - arg) : strlen(arg)), arg);
}

/* The end labels of the curves: "LABEL mean 3.188" and "LABEL worst
 * 4.186" at each curve's last round; a curve identical to an earlier one
 * has none of its own, its name joins that one's ("a, b mean 3.188"). */
static size_t end_labels(const plot_opts *o, const curve *cv, end_label *l)
{
    size_t n = 0;
    for (size_t k = 0; k < o->nargs; k++) {
        if (cv[k].twin >= 0)
            continue;
        char names[160];
        arg_label(o->args[k], names, sizeof names);
        for (size_t j = k + 1; j < o->nargs; j++)
            if (cv[j].twin == (long)k) {
                size_t len = strlen(names);
                snprintf(names + len, sizeof names - len, ", ");
                arg_label(o->args[j], names + len + 2, sizeof names - len - 2);
            }
        const double v[2] = {cv[k].last_mean, cv[k].last_worst};
        for (int m = 0; m < 2; m++) {
            l[n] = (end_label){.value = v[m], .y = v[m], .colour = k + 1};
            snprintf(l[n].text, sizeof l[n].text, "%s %s %.3f", names,
                     m ? "worst" : "mean", v[m]);
            n++;
        }
    }
    /* the personalised curves' labels, of each spec that has them */
    for (size_t k = 0; k < o->nargs; k++) {
        if (!cv[k].pers)
            continue;
        char name[128];
        arg_label(o->args[k], name, sizeof name);
        const double v[2] = {cv[k].plast_mean, cv[k].plast_worst};
        for (int m = 0; m < 2; m++) {
            l[n] = (end_label){.value = v[m], .y = v[m], .colour = k + 1};
            snprintf(l[n].text, sizeof l[n].text, "%s personalized %s %.3f",
                     name, m ? "worst" : "mean", v[m]);
            n++;
        }
    }
    return n;
}

/* The plot elements of curve k: its mean (solid) and worst client
 * (dashed) in colour k + 1; a curve identical to an earlier one is drawn
 * dotted and wider, under it, its title saying so. */
static void curve_elements(sbuf *b, const plot_opts *o, const curve *cv,
                           size_t k)
{
    char label[128], title[300];
    arg_label(o->args[k], label, sizeof label);
    if (cv[k].twin >= 0) {
        char twin[128];
        arg_label(o->args[cv[k].twin], twin, sizeof twin);
        snprintf(title, sizeof title, "%s (identical to %s)", label, twin);
    } else {
        snprintf(title, sizeof title, "%s", label);
    }
    const char *style = cv[k].twin >= 0 ? "lw 5 dt 3" : "lw 2";
    sb_printf(b, "%s$run%zu using 1:2 with lines %s lc %zu title ",
              k ? ", " : "", k, style, k + 1);
    sb_quoted(b, title);
    sb_printf(b, ", $run%zu using 1:3 with lines %s lc %zu title ", k,
              cv[k].twin >= 0 ? "lw 4 dt 3" : "lw 1.5 dt 2", k + 1);
    char worst[360];
    snprintf(worst, sizeof worst, "%s: worst client", title);
    sb_quoted(b, worst);
    if (!cv[k].pers)
        return;
    /* the personalised models: dash-dot with points, the same colour */
    char pers[300];
    snprintf(pers, sizeof pers, "%s personalized", label);
    sb_printf(b, ", $pers%zu using 1:2 with linespoints lw 2 dt 4 pt 7 "
              "ps 0.6 lc %zu title ", k, k + 1);
    sb_quoted(b, pers);
    snprintf(worst, sizeof worst, "%s personalized: worst client", label);
    sb_printf(b, ", $pers%zu using 1:3 with linespoints lw 1.5 dt 5 pt 6 "
              "ps 0.6 lc %zu title ", k, k + 1);
    sb_quoted(b, worst);
}

int plot_curves(const plot_opts *o)
{
    if (o->nargs == 0)
        return cli_usage_error("plot curves needs a spec", NULL);
    sbuf b = {NULL, 0, 0, 0}, data = {NULL, 0, 0, 0};
    char title[256];
    snprintf(title, sizeof title, "%s of the global model per round: mean "
             "(solid) and worst client (dashed); personalised models "
             "dash-dot with points", o->metric);
    sb_terminal(&b, o->png, 900, 540);
    sb_printf(&b, "set title ");
    sb_quoted(&b, o->title != NULL ? o->title : title);
    sb_printf(&b, "\nset xlabel \"round\"\nset ylabel ");
    sb_quoted(&b, o->metric);
    sb_printf(&b, "\nset key outside right\nset grid lc rgb \"#dddddd\"\n");
    curve cv[PLOT_MAX_COLUMNS] = {{0}};
    int rc = EXIT_OK;
    for (size_t k = 0; k < o->nargs && rc == EXIT_OK; k++) {
        const char *eq = strchr(o->args[k], '=');
        rc = curve_of(&data, &cv[k], eq != NULL ? eq + 1 : o->args[k],
                      o->metric, k);
    }
    if (rc == EXIT_OK && !data.failed) {
        long t0 = cv[0].first_t, t1 = cv[0].last_t;
        double lo = cv[0].lo, hi = cv[0].hi;
        for (size_t k = 0; k < o->nargs; k++) {
            t0 = cv[k].first_t < t0 ? cv[k].first_t : t0;
            t1 = cv[k].last_t > t1 ? cv[k].last_t : t1;
            lo = fmin(lo, cv[k].lo);
            hi = fmax(hi, cv[k].hi);
            for (size_t j = 0; j < k && cv[k].twin < 0; j++)
                if (cv[j].twin < 0 && cv[j].to - cv[j].from == cv[k].to - cv[k].from &&
                    memcmp(data.s + cv[j].from, data.s + cv[k].from,
                           cv[k].to - cv[k].from) == 0)
                    cv[k].twin = (long)j;
        }
        end_label l[4 * PLOT_MAX_COLUMNS];
        const size_t nl = end_labels(o, cv, l);
        double ylo, yhi;
        end_labels_range(l, nl, lo, hi, &ylo, &yhi);
        sb_printf(&b, "set xrange [%ld:%ld]\nset yrange [%.17g:%.17g]\n", t0,
                  t1 > t0 ? t1 : t0 + 1, ylo, yhi);
        for (size_t i = 0; i < nl; i++)
            sb_printf(&b, "set label \"%s\" at %ld,%.17g right offset -0.5,0 "
                          "tc lt %zu front\n", l[i].text, t1, l[i].y, l[i].colour);
        sb_printf(&b, "%s", data.s);
        sb_printf(&b, "plot ");
        for (size_t k = 0; k < o->nargs; k++)
            curve_elements(&b, o, cv, k);
        sb_printf(&b, "\n");
        rc = plot_render(o, &b);
    } else if (rc == EXIT_OK) {
        fprintf(stderr, "pflref: plot curves: out of memory\n");
        rc = EXIT_INTERNAL;
    }
    free(b.s);
    free(data.s);
    return rc;
}
