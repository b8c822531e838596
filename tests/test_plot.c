/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_plot.c: pflref plot, run as a program on seed 000's results:
 * the SVG is parsed (one mark per client in each model's plot element, the
 * mean and worst labels with the numbers of the seed's Output 14.7.1, the
 * α sweep's curves and chosen α_i, a check report's quantities), and bad
 * or mismatched input gets exit 2 naming the field with no file left. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* The plot element titled `title` in svg, from its title to the next plot
 * element (*end), or NULL when there is none. */
static const char *plot_element(const char *svg, const char *title,
                                const char **end)
{
    char head[256];
    snprintf(head, sizeof head, "><title>%s</title>", title);
    const char *g = strstr(svg, head);
    if (g == NULL)
        return NULL;
    *end = strstr(g + 1, "<g id=\"gnuplot_plot_");
    if (*end == NULL)
        *end = g + strlen(g);
    return g;
}

/* The marks (gnuplot's <use xlink:href='#gpPt..'>) inside the plot
 * element titled `title`: -1 when there is no such element. */
static int marks_in(const char *svg, const char *title)
{
    const char *end;
    const char *g = plot_element(svg, title, &end);
    if (g == NULL)
        return -1;
    int n = 0;
    for (const char *p = strstr(g, "<use xlink:href='#gpPt"); p != NULL && p < end;
         p = strstr(p + 1, "<use xlink:href='#gpPt"))
        n++;
    return n;
}

/* How the plot element titled `title` draws its line: 1 dashed or dotted
 * (a path with a stroke-dasharray), 0 solid, -1 no such element; its
 * stroke width (the first stroke-width of the element) in *width. */
static int line_dashed(const char *svg, const char *title, double *width)
{
    const char *end;
    const char *g = plot_element(svg, title, &end);
    if (g == NULL)
        return -1;
    const char *w = strstr(g, "stroke-width=\"");
    *width = w != NULL && w < end ? strtod(w + strlen("stroke-width=\""), NULL) : 0.0;
    for (const char *p = strstr(g, "<path "); p != NULL && p < end; p = strstr(p + 1, "<path ")) {
        const char *close = strchr(p, '>');
        const char *dash = strstr(p, "stroke-dasharray");
        if (dash != NULL && close != NULL && dash < close)
            return 1;
    }
    return 0;
}

/* 1 when the SVG shows `text` as a text element's content (enhanced
 * text comes in <tspan>s, plain text straight in <text>). */
static int has_text(const char *svg, const char *text)
{
    char pat[256], plain[256];
    snprintf(pat, sizeof pat, ">%s</tspan>", text);
    snprintf(plain, sizeof plain, "<text>%s</text>", text);
    return strstr(svg, pat) != NULL || strstr(svg, plain) != NULL;
}

/* Run seed 000's spec `name` into dir/<out>. */
static void run_seed(const char *dir, const char *name, const char *out)
{
    char *spec = tu_repo_path(name);
    char args[1024];
    snprintf(args, sizeof args, "run %s -o %s/%s", spec, dir, out);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    free(spec);
}

/* Output 14.7.1 as one command: three strips of six marks, each with the
 * mean and the worst client of the seed's table (test MSE). */
START_TEST(test_seed000_clients)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *err;
    run_seed(dir, "golden/seed000/fedavg-ft.json", "ft.json");
    run_seed(dir, "golden/seed000/local.json", "local.json");
    snprintf(args, sizeof args, "plot clients -o %s/fig.svg "
             "global=%s/ft.json:global local=%s/local.json:local "
             "personalized=%s/ft.json:personalized", dir, dir, dir, dir);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/fig.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    ck_assert_int_eq(marks_in(svg, "global: 6 clients"), 6);
    ck_assert_int_eq(marks_in(svg, "local: 6 clients"), 6);
    ck_assert_int_eq(marks_in(svg, "personalized: 6 clients"), 6);
    const char *labels[] = {"mean 3.188", "worst 4.186", "mean 4.543",
                            "worst 7.982", "mean 2.500", "worst 3.505"};
    for (size_t k = 0; k < 6; k++)
        ck_assert_msg(has_text(svg, labels[k]), "no label '%s'", labels[k]);
    ck_assert_msg(strstr(svg, ">worst decile ≥ ") != NULL, "no decile mark");
    free(svg);
    /* A bare result: every model it reports; PNG by the name. */
    snprintf(args, sizeof args, "plot clients -o %s/ft.png %s/ft.json", dir,
             dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/ft.png", dir);
    char *png = tu_read(path);
    ck_assert_msg(png != NULL && memcmp(png, "\x89PNG", 4) == 0, "not a PNG");
    free(png);
    ck_assert_int_eq(tu_entries(dir), 4);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A label of a gnuplot SVG: its text's box in pixels, from the group's
 * translate(x, y) (the baseline's start), its font size and its text
 * (each UTF-8 character taken as 0.62 of the size wide, the body from
 * 0.8 of it above the baseline to 0.25 below). */
typedef struct {
    double x0, y0, x1, y1;
    char text[96];
} label_box;

/* The box of the label whose group starts at g (any text) into *out; 1,
 * or 0 when g is no label. */
static int label_at(const char *g, label_box *out)
{
    double x, y, f;
    const char *fs = strstr(g, "font-size=\""), *t = strstr(g, "<tspan");
    const char *end = strstr(g, "</g>");
    if (fs == NULL || t == NULL || end == NULL || t > end ||
        sscanf(g, "<g transform=\"translate(%lf,%lf)", &x, &y) != 2 ||
        sscanf(fs, "font-size=\"%lf", &f) != 1)
        return 0;
    t = strchr(t, '>') + 1;
    const char *e = strstr(t, "</tspan>");
    size_t chars = 0;
    for (const char *c = t; e != NULL && c < e; c++)
        chars += ((unsigned char)*c & 0xC0) != 0x80;
    *out = (label_box){x, y - 0.8 * f, x + 0.62 * f * (double)chars, y + 0.25 * f, ""};
    snprintf(out->text, sizeof out->text, "%.*s", e != NULL ? (int)(e - t) : 0, t);
    return 1;
}

/* The labels of svg whose text starts with "mean" or "worst" (the strip
 * plot's marks) or, with any = 1, holds " mean " or " worst " followed by
 * a number (a curve's end label), at most max; returns their number. */
static size_t mark_labels(const char *svg, label_box *out, size_t max, int any)
{
    size_t n = 0;
    for (const char *g = strstr(svg, "<g transform=\"translate(");
         g != NULL && n < max; g = strstr(g + 1, "<g transform=\"translate(")) {
        label_box b;
        if (!label_at(g, &b))
            continue;
        const char *m = strstr(b.text, " mean "), *w = strstr(b.text, " worst ");
        const int end_label = (m != NULL && (m[6] == '-' || (m[6] >= '0' && m[6] <= '9'))) ||
                              (w != NULL && (w[7] == '-' || (w[7] >= '0' && w[7] <= '9')));
        if (any ? end_label
                : strncmp(b.text, "mean", 4) == 0 || strncmp(b.text, "worst", 5) == 0)
            out[n++] = b;
    }
    return n;
}

/* No two of the n label boxes overlap. */
static void assert_apart(const label_box *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            ck_assert_msg(l[i].x1 <= l[j].x0 || l[j].x1 <= l[i].x0 ||
                          l[i].y1 <= l[j].y0 || l[j].y1 <= l[i].y0,
                          "labels '%s' and '%s' overlap", l[i].text, l[j].text);
}

/* plot clients keeps its labels apart: marks whose values print alike
 * share one label ("mean = worst = worst decile 2.000", no second label
 * over it), and marks close together (a mean of 5.000 and a decile edge
 * of 5.050 on a range of 10) get labels moved apart so that no two text
 * boxes overlap. */
START_TEST(test_clients_labels_apart)
{
    char *dir = tu_tmpdir(), args[1024], path[600];
    snprintf(path, sizeof path, "%s/r.json", dir);
    ck_assert_int_eq(tu_write(path,
        "{\"format\": \"pflref-result/1\", \"metrics\": {"
        "\"global\": {\"per_client\": {\"test_mse\": [0, 10]}, \"summary\": {\"test_mse\": "
        "{\"mean\": 5, \"sd\": 5, \"worst\": 10, \"best\": 0, \"p10\": 1, \"p90\": 5.05, "
        "\"worst_decile_mean\": 10, \"weighted_mean\": 5}}}, "
        "\"local\": {\"per_client\": {\"test_mse\": [2, 2]}, \"summary\": {\"test_mse\": "
        "{\"mean\": 2, \"sd\": 0, \"worst\": 2, \"best\": 2, \"p10\": 2, \"p90\": 2, "
        "\"worst_decile_mean\": 2, \"weighted_mean\": 2}}}}}"), 0);
    snprintf(args, sizeof args, "plot clients -o %s/fig.svg %s", dir, path);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/fig.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    label_box l[16];
    const size_t n = mark_labels(svg, l, 16, 0);
    ck_assert_uint_eq(n, 4);        /* three in global, one in local */
    ck_assert_msg(has_text(svg, "mean = worst = worst decile 2.000"), "no joint label");
    ck_assert_msg(!has_text(svg, "worst 2.000"), "a second label on the joint one");
    assert_apart(l, n);
    free(svg);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The α sweep of Exercise 14.7.2: a curve of 11 grid points per client
 * and the six chosen α_i (each plot element also draws its key sample). */
START_TEST(test_seed000_sweep)
{
    char *dir = tu_tmpdir(), args[1024], path[600], *err;
    run_seed(dir, "golden/seed000/interp-sweep.json", "sweep.json");
    snprintf(args, sizeof args, "plot sweep -o %s/sweep.svg %s/sweep.json",
             dir, dir);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/sweep.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    for (int i = 0; i < 6; i++) {
        char t[32];
        snprintf(t, sizeof t, "client %d", i);
        ck_assert_int_eq(marks_in(svg, t), 11 + 1);
    }
    ck_assert_int_eq(marks_in(svg, "chosen α_i"), 6 + 1);
    free(svg);
    /* fedavg-ft reports no α: refused, naming final.alpha */
    run_seed(dir, "golden/seed000/fedavg-ft.json", "ft.json");
    snprintf(args, sizeof args, "plot sweep -o %s/bad.svg %s/ft.json", dir,
             dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "final.alpha") != NULL, "%s", err);
    free(err);
    ck_assert_int_eq(tu_entries(dir), 3);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

static void refused(const char *dir, const char *args, const char *field,
                    int keep);

/* The plot element titled `title`: from its <title> to the next element
 * (or the end); NULL when there is none. */
static const char *element(const char *svg, const char *title,
                           const char **end)
{
    char head[256];
    snprintf(head, sizeof head, "><title>%s</title>", title);
    const char *g = strstr(svg, head);
    if (g == NULL)
        return NULL;
    *end = strstr(g + 1, "<g id=\"gnuplot_plot_");
    if (*end == NULL)
        *end = g + strlen(g);
    return g;
}

/* The tolerance line of a check plot (the element titled `title`, drawn
 * `with lines`): its height and right end, in SVG pixels (y grows down). */
static void tolerance_line(const char *svg, const char *title, double *y,
                           double *right)
{
    const char *end, *g = element(svg, title, &end);
    ck_assert_msg(g != NULL, "no plot element '%s'", title);
    const char *d = strstr(g, " d='");
    ck_assert_msg(d != NULL && d < end, "no path in '%s'", title);
    /* the key sample first, then the line: its last move */
    const char *m = NULL;
    for (const char *p = strchr(d, 'M'); p != NULL && p < end && *p != '\'';
         p = strpbrk(p + 1, "M'"))
        if (*p == 'M')
            m = p;
    ck_assert_ptr_nonnull(m);
    double x0, y0, x1, y1;
    ck_assert_int_eq(sscanf(m, "M%lf,%lf L%lf,%lf", &x0, &y0, &x1, &y1), 4);
    ck_assert(y0 == y1);
    *y = y0;
    *right = x1;
}

/* The bottom edge of the first plot's border (its closed rectangle), in
 * SVG pixels: the key's samples are below it. */
static double plot_bottom(const char *svg)
{
    const char *p = strstr(svg, "<path stroke='black'  d='M");
    while (p != NULL) {             /* the first closed one (a tic is not) */
        const char *q = strchr(p + 25, '\'');
        if (q != NULL && memchr(p, 'Z', (size_t)(q - p)) != NULL)
            break;
        p = strstr(p + 1, "<path stroke='black'  d='M");
    }
    ck_assert_ptr_nonnull(p);
    double x[4], y[4];
    ck_assert_int_eq(sscanf(p + 25, "M%lf,%lf L%lf,%lf L%lf,%lf L%lf,%lf", &x[0],
                            &y[0], &x[1], &y[1], &x[2], &y[2], &x[3], &y[3]), 8);
    return fmax(fmax(y[0], y[1]), fmax(y[2], y[3]));
}

/* The marks of the plot element titled `title` left of x = right and
 * above the plot's bottom edge (the key's sample is below it), in drawing
 * order: their number, positions into xs, ys (at most max). */
static int marks_xy(const char *svg, const char *title, double right,
                    double *xs, double *ys, int max)
{
    const double bottom = plot_bottom(svg);
    const char *end, *g = element(svg, title, &end);
    ck_assert_msg(g != NULL, "no plot element '%s'", title);
    int n = 0;
    for (const char *p = strstr(g, "<use xlink:href='#gpPt"); p != NULL && p < end;
         p = strstr(p + 1, "<use xlink:href='#gpPt")) {
        double x, y;
        const char *t = strstr(p, "translate(");
        ck_assert(t != NULL && sscanf(t, "translate(%lf,%lf)", &x, &y) == 2);
        if (x > right + 0.5 || y > bottom + 0.5)
            continue;
        ck_assert_int_lt(n, max);
        xs[n] = x;
        ys[n++] = y;
    }
    return n;
}

/* Copy the result at `from` to `to` with one wrong number: the first digit
 * of the first entry of round 1's first w_local (client 0, step 0). */
static void spoil_round1(const char *from, const char *to)
{
    char *cand = tu_read(from);
    ck_assert_ptr_nonnull(cand);
    char *at = strstr(cand, "\"round\":1,\"client\":0,\"step\":0,"
                            "\"name\":\"w_local\",\"value\":[");
    ck_assert_msg(at != NULL, "no record of round 1's w_local in %s", from);
    at = strchr(at, '[') + 1;
    *at = *at == '0' ? '1' : '0';
    ck_assert_int_eq(tu_write(to, cand), 0);
    free(cand);
}

/* Check the run of `vec` written to dir/cand.json (or `cand`) with --json
 * into dir/report.json and plot it into dir/digits.svg; the SVG text. */
static char *check_plot(const char *dir, const char *vec, const char *cand,
                        int rc_check)
{
    char args[2048], path[600], *out, *err;
    snprintf(args, sizeof args, "check %s %s --json", vec, cand);
    ck_assert_int_eq(tu_cli(args, &out, NULL), rc_check);
    snprintf(path, sizeof path, "%s/report.json", dir);
    ck_assert_int_eq(tu_write(path, out), 0);
    free(out);
    snprintf(args, sizeof args, "plot check -o %s/digits.svg %s", dir, path);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/digits.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    return svg;
}

#define TOL_TITLE "tolerance: 11 digits (rtol 1e-11)"

/* A check report (check --json) drawn along the trajectory: a passing
 * candidate (the reference's own run) keeps every quantity's every record
 * above the tolerance's 11 digits; one whose w_local of round 1 is off
 * drops there, at the divergence's line, and nowhere else. */
START_TEST(test_check_report)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *err;
    char *vec = tu_repo_path("golden/pfedme/worked-linear-paper-beta.json");
    snprintf(args, sizeof args, "run %s -o %s/cand.json", vec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/cand.json", dir);
    char *svg = check_plot(dir, vec, path, 0);
    double tol_y, right, xs[64], ys[64];
    tolerance_line(svg, TOL_TITLE, &tol_y, &right);
    /* the vector's records: w 5 (round_begin, server, final), w_local 24
     * (12 per round), theta 42, v 3 (final) */
    const char *names[] = {"w", "w_local", "theta", "v"};
    const int records[] = {5, 24, 42, 3};
    for (size_t q = 0; q < 4; q++) {
        int n = marks_xy(svg, names[q], right, xs, ys, 64);
        ck_assert_msg(n == records[q], "%s: %d marks", names[q], n);
        for (int i = 0; i < n; i++)
            ck_assert_msg(ys[i] < tol_y, "%s[%d] at y %g, the tolerance at %g",
                          names[q], i, ys[i], tol_y);
    }
    ck_assert_msg(has_text(svg, "round 0") && has_text(svg, "round 1") &&
                      has_text(svg, "final"), "no round tics");
    ck_assert_msg(strstr(svg, "first divergence") == NULL,
                  "a passing candidate has no divergence");
    free(svg);
    /* a candidate off in round 1's first w_local (client 0, step 0) */
    char off[600];
    snprintf(off, sizeof off, "%s/off.json", dir);
    spoil_round1(path, off);
    snprintf(path, sizeof path, "%s", off);
    svg = check_plot(dir, vec, path, 1);
    tolerance_line(svg, TOL_TITLE, &tol_y, &right);
    int n = marks_xy(svg, "w_local", right, xs, ys, 64);
    ck_assert_int_eq(n, 24);
    for (int i = 0; i < n; i++)
        ck_assert_msg(i == 12 ? ys[i] > tol_y : ys[i] < tol_y,
                      "w_local[%d] at y %g, the tolerance at %g", i, ys[i],
                      tol_y);
    /* the divergence's vertical line stands at the drop */
    const char *line = strstr(svg, "stroke='rgb(179,  38,  30)'  d='M");
    double lx;
    ck_assert(line != NULL && sscanf(line + 33, "%lf", &lx) == 1);
    ck_assert_msg(lx > xs[12] - 0.5 && lx < xs[12] + 0.5,
                  "the divergence line at x %g, the drop at %g", lx, xs[12]);
    ck_assert_msg(has_text(svg, "pfedme/worked/linear-paper-beta: first "
                                "divergence at w_local, client_begin, train, "
                                "round 1, client 0, step 0"),
                  "the first divergence is not labelled");
    /* the other quantities did not move */
    n = marks_xy(svg, "theta", right, xs, ys, 64);
    ck_assert_int_eq(n, 42);
    for (int i = 0; i < n; i++)
        ck_assert(ys[i] < tol_y);
    /* the labels stand above every point (the band over 16 digits), and
     * the plot takes the figure's width (the key is under it) */
    double top = 1e300;
    const char *q[] = {"w", "w_local", "theta", "v"};
    for (size_t k = 0; k < 4; k++) {
        int m = marks_xy(svg, q[k], right, xs, ys, 64);
        for (int i = 0; i < m; i++)
            top = fmin(top, ys[i]);
    }
    /* the divergence line's own label and the panel's title (which says
     * "first divergence at ..." too: each found by its whole text), both
     * above the points and apart from each other */
    label_box lb[2];
    const char *texts[] = {">first divergence</tspan>", ">pfedme/worked/linear-paper-beta: "};
    for (size_t k = 0; k < 2; k++) {
        const char *t = strstr(svg, texts[k]);
        ck_assert_msg(t != NULL, "no label '%s'", texts[k]);
        const char *g = t;
        while (g > svg && strncmp(g, "<g transform=\"translate(", 24) != 0)
            g--;
        ck_assert(label_at(g, &lb[k]));
        ck_assert_msg(lb[k].y1 < top, "label '%s' reaches y %g, a point is at %g",
                      texts[k], lb[k].y1, top);
    }
    assert_apart(lb, 2);
    ck_assert_msg(right > 0.85 * 1040, "the plot ends at x %g of 1040", right);
    free(svg);
    unlink(path);
    /* a result is not a report */
    snprintf(args, sizeof args, "plot check -o %s/bad.svg %s/cand.json", dir,
             dir);
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, "format: expected \"pflref-check-report/1\"") !=
                      NULL, "%s", err);
    free(err);
    ck_assert_int_eq(tu_entries(dir), 3);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A report of several vectors: a panel each, the failed one first
 * (fedavg's vector comes first in the folder, pfedme's failed). */
START_TEST(test_check_report_panels)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *out, *err;
    const char *vecs[] = {"golden/fedavg/worked-samples.json",
                          "golden/pfedme/worked-linear-paper-beta.json"};
    snprintf(path, sizeof path, "%s/v", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/c", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    for (size_t k = 0; k < 2; k++) {
        char *vec = tu_repo_path(vecs[k]);
        snprintf(args, sizeof args, "run %s -o %s/c/%zu.json", vec, dir, k);
        ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
        snprintf(args, sizeof args, "cp %s %s/v/%zu.json", vec, dir, k);
        ck_assert_int_eq(system(args), 0);
        free(vec);
    }
    snprintf(path, sizeof path, "%s/c/1.json", dir);
    spoil_round1(path, path);
    snprintf(args, sizeof args, "check --json %s/v %s/c", dir, dir);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    snprintf(path, sizeof path, "%s/report.json", dir);
    ck_assert_int_eq(tu_write(path, out), 0);
    free(out);
    snprintf(args, sizeof args, "plot check -o %s/digits.svg %s", dir, path);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/digits.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    const char *failed = strstr(svg, ">pfedme/worked/linear-paper-beta: "
                                     "correct digits along the trajectory<");
    const char *passed = strstr(svg, ">fedavg/worked/notes-1g/samples: "
                                     "correct digits along the trajectory<");
    ck_assert_msg(failed != NULL && passed != NULL && failed < passed,
                  "the failed vector's panel is not first");
    free(svg);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Replace the `nth` occurrence (from 1) of `what` in text, from `from`
 * on, by `by` (in place: text has room for 64 more bytes). */
static void replace_nth(char *text, const char *from, const char *what,
                        int nth, const char *by)
{
    char *p = strstr(text, from);
    ck_assert_msg(p != NULL, "no '%s'", from);
    for (int k = 0; k < nth; k++) {
        p = strstr(k ? p + 1 : p, what);
        ck_assert_msg(p != NULL, "no '%s' #%d", what, k + 1);
    }
    size_t n = strlen(what), m = strlen(by);
    ck_assert(m <= n + 64);
    memmove(p + m, p + n, strlen(p + n) + 1);
    memcpy(p, by, m);
}

/* A malformed report: a missing or ill-typed field of the digits along
 * the trajectory is exit 2 naming it, and no figure. */
START_TEST(test_check_report_malformed)
{
    char *dir = tu_tmpdir(), args[2048], path[600], rpath[600], *out;
    char *vec = tu_repo_path("golden/pfedme/worked-linear-paper-beta.json");
    snprintf(args, sizeof args, "run %s -o %s/cand.json", vec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/cand.json", dir);
    /* off in round 1, so the report has a first divergence */
    spoil_round1(path, path);
    snprintf(args, sizeof args, "check %s %s --json", vec, path);
    ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
    snprintf(rpath, sizeof rpath, "%s/report.json", dir);
    snprintf(args, sizeof args, "plot check -o %s/bad.svg %s", dir, rpath);
    struct {
        const char *from, *what;
        int nth;
        const char *by, *field;
    } cases[] = {
        /* w_local (by_quantity[1]) without its digits */
        {"\"by_quantity\"", "\"trajectory_digits\"", 2, "\"trajectory_digit\"",
         "vectors[0].by_quantity[1].trajectory_digits: expected an object"},
        /* w's first digits a string */
        {"\"trajectory_digits\"", "15.949999999999999", 1, "\"x\"",
         "vectors[0].by_quantity[0].trajectory_digits.min_lre[0]: expected "
         "a number"},
        /* a round that is not an integer */
        {"\"trajectory_digits\"", "\"round\": [\n       0", 1,
         "\"round\": [\n       \"0\"",
         "vectors[0].by_quantity[0].trajectory_digits.round[0]: expected a "
         "round"},
        /* a position beyond the records */
        {"\"trajectory_digits\"", "\"position\": [\n       0", 1,
         "\"position\": [\n       999",
         "vectors[0].by_quantity[0].trajectory_digits.position[0]: expected "
         "a record's position"},
        /* the first divergence without its position */
        {"\"first_divergence\"", "\"position\"", 1, "\"positio\"",
         "vectors[0].first_divergence.position: expected a record's "
         "position"},
        /* no tolerance */
        {"\"by_quantity\"", "\"rtol\"", 1, "\"rto\"",
         "vectors[0].by_quantity[0].rtol: expected a number"},
        /* no stretch */
        {"\"id\"", "\"digits_stretch\"", 1, "\"digits_stretc\"",
         "vectors[0].digits_stretch: expected an integer >= 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *text = malloc(strlen(out) + 64);
        ck_assert_ptr_nonnull(text);
        strcpy(text, out);
        replace_nth(text, cases[c].from, cases[c].what, cases[c].nth,
                    cases[c].by);
        ck_assert_int_eq(tu_write(rpath, text), 0);
        free(text);
        refused(dir, args, cases[c].field, 2);
    }
    free(out);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Run `args` (with %s the folder, given n times), expect exit 2 with
 * `field` in the message and no file besides the `keep` inputs. */
static void refused(const char *dir, const char *args, const char *field,
                    int keep)
{
    char *err;
    ck_assert_int_eq(tu_cli(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, field) != NULL, "'%s' not in: %s", field, err);
    free(err);
    ck_assert_int_eq(tu_entries(dir), keep);
}

/* A result of three clients, test MSE 1.5, 2.25 and `third`, whose
 * summary is that of 1.5, 2.25, 3.125 (static text). */
static const char *three_clients(const char *third)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "{\"format\": \"pflref-result/1\", \"metrics\": {\"global\": "
             "{\"per_client\": {\"test_mse\": [1.5, 2.25, %s]}, "
             "\"summary\": {\"test_mse\": {\"mean\": 2.2916666666666665, "
             "\"sd\": 0.66, \"worst\": 3.125, \"best\": 1.5, \"p10\": 1.65, "
             "\"p90\": 2.95, \"worst_decile_mean\": 3.125, "
             "\"weighted_mean\": 2.2916666666666665}}}}}", third);
    return text;
}

/* Training curves: FedAvg's 400 rounds of seed 000, the last point is the
 * global model of Output 14.7.1 (mean 3.188, worst 4.186); a second spec
 * on the same figure; an algorithm without a global model is refused. */
START_TEST(test_seed000_curves)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *err;
    char *ft = tu_repo_path("golden/seed000/fedavg-ft.json");
    char *sweep = tu_repo_path("golden/seed000/interp-sweep.json");
    char *local = tu_repo_path("golden/seed000/local.json");
    snprintf(args, sizeof args, "plot curves -o %s/curves.svg fedavg=%s "
             "interp=%s", dir, ft, sweep);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/curves.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    /* interp's global model is FedAvg's: one curve, drawn twice, said */
    const char *titles[] = {"fedavg", "fedavg: worst client",
                            "interp (identical to fedavg)",
                            "interp (identical to fedavg): worst client"};
    for (size_t k = 0; k < 4; k++)
        ck_assert_msg(marks_in(svg, titles[k]) == 0, "no curve '%s'",
                      titles[k]);
    ck_assert_msg(has_text(svg, "fedavg, interp mean 3.188") &&
                  has_text(svg, "fedavg, interp worst 4.186"),
                  "the last round is not Output 14.7.1's global column");
    ck_assert_msg(strstr(svg, "log scale") == NULL, "a logarithmic round axis");
    /* the twin is drawn so that both show: the original's mean solid, the
     * twin's dotted and wider, under it */
    double w_first, w_twin;
    ck_assert_int_eq(line_dashed(svg, "fedavg", &w_first), 0);
    ck_assert_msg(line_dashed(svg, "interp (identical to fedavg)", &w_twin) == 1 &&
                      w_twin > w_first,
                  "the identical curve is not drawn dotted and wider (%g vs %g)",
                  w_twin, w_first);
    free(svg);
    /* two curves ending 0.1 % apart: four end labels, none over another */
    const char *etas[2] = {"0.1", "0.1001"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/s%d.json", dir, k);
        snprintf(args, sizeof args,
                 "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", "
                 "\"d\": 1, \"loss\": \"squared\"}, \"problem\": {\"clients\": ["
                 "{\"X\": [[1], [2]], \"y\": [1, 3], \"X_test\": [[1]], \"y_test\": [2]}, "
                 "{\"X\": [[1], [3]], \"y\": [0, 2], \"X_test\": [[2]], \"y_test\": [1]}]}, "
                 "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": %s}}, "
                 "\"schedule\": {\"kind\": \"generate\", \"rounds\": 4, "
                 "\"local\": {\"epochs\": 1}}}", etas[k]);
        ck_assert_int_eq(tu_write(path, args), 0);
    }
    snprintf(args, sizeof args, "plot curves -o %s/close.svg a=%s/s0.json "
             "b=%s/s1.json", dir, dir, dir);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/close.svg", dir);
    svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    ck_assert_msg(strstr(svg, "identical to") == NULL, "distinct curves called identical");
    label_box l[16];
    const size_t n = mark_labels(svg, l, 16, 1);
    ck_assert_uint_eq(n, 4);
    assert_apart(l, n);
    free(svg);
    const char *made[] = {"s0.json", "s1.json", "close.svg"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[k]);
        ck_assert_int_eq(unlink(path), 0);
    }
    snprintf(args, sizeof args, "plot curves -o %s/bad.svg %s", dir, local);
    refused(dir, args, "algorithm.name: local keeps no global model", 1);
    snprintf(args, sizeof args, "plot curves --metric test_accuracy -o "
             "%s/bad.svg %s", dir, ft);
    refused(dir, args, "model.kind: this model has no test_accuracy", 1);
    free(ft);
    free(sweep);
    free(local);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* plot curves draws the personalised models' curves beside the global
 * model's where the algorithm keeps them across the rounds (Ditto's v_k):
 * drawn with points (the global curves have none), titled "LABEL
 * personalized", their end labels stacked with the global ones without
 * overlap although Ditto's personalised worst client ends 2 % from the
 * global mean (λ = 9); FedAvg on the same problem has none. */
START_TEST(test_curves_personalized)
{
    char *dir = tu_tmpdir(), args[2048], path[600], *err;
    const char *algs[2] = {"ditto", "fedavg"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, algs[k]);
        snprintf(args, sizeof args,
                 "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", "
                 "\"d\": 1, \"loss\": \"squared\"}, \"problem\": {\"clients\": ["
                 "{\"X\": [[1], [2]], \"y\": [1, 3], \"X_test\": [[1]], \"y_test\": [2]}, "
                 "{\"X\": [[1], [3]], \"y\": [0, 2], \"X_test\": [[2]], \"y_test\": [1]}]}, "
                 "\"algorithm\": {\"name\": \"%s\", \"hyperparameters\": {\"eta\": 0.1%s}}, "
                 "\"schedule\": {\"kind\": \"generate\", \"rounds\": 4, "
                 "\"local\": {\"epochs\": 1}}}", algs[k], k == 0 ? ", \"lambda\": 9" : "");
        ck_assert_int_eq(tu_write(path, args), 0);
    }
    snprintf(args, sizeof args, "plot curves -o %s/pers.svg d=%s/ditto.json", dir, dir);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/pers.svg", dir);
    char *svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    ck_assert_msg(marks_in(svg, "d personalized") > 0 &&
                  marks_in(svg, "d personalized: worst client") > 0,
                  "the personalised curves are missing or drawn without points");
    ck_assert_msg(marks_in(svg, "d") == 0 && marks_in(svg, "d: worst client") == 0,
                  "the global curves are missing or look like the personalised ones");
    ck_assert_msg(has_text(svg, "d mean 0.910") && has_text(svg, "d personalized worst 0.891"),
                  "the end labels of the global and the personalised curves");
    label_box l[16];
    const size_t n = mark_labels(svg, l, 16, 1);
    ck_assert_uint_eq(n, 4);
    assert_apart(l, n);
    free(svg);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(args, sizeof args, "plot curves -o %s/pers.svg a=%s/fedavg.json", dir, dir);
    ck_assert_msg(tu_cli(args, NULL, &err) == 0, "%s", err);
    free(err);
    svg = tu_read(path);
    ck_assert_ptr_nonnull(svg);
    ck_assert_msg(marks_in(svg, "a personalized") < 0 && !has_text(svg, "a personalized mean"),
                  "FedAvg keeps no personalised model, yet one is drawn");
    free(svg);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Malformed and mismatched results: exit 2 naming the field, no file. */
START_TEST(test_bad_results)
{
    char *dir = tu_tmpdir(), args[2048], path[600];
    run_seed(dir, "golden/seed000/fedavg-ft.json", "ft.json");
    /* six clients against three */
    snprintf(path, sizeof path, "%s/three.json", dir);
    ck_assert_int_eq(tu_write(path, three_clients("3.125")), 0);
    snprintf(args, sizeof args, "plot clients -o %s/f.svg a=%s/ft.json:global "
             "b=%s/three.json:global", dir, dir, dir);
    refused(dir, args, "metrics.global.per_client.test_mse: 3 clients", 2);
    /* a model the result does not report */
    snprintf(args, sizeof args, "plot clients -o %s/f.svg a=%s/ft.json:local",
             dir, dir);
    refused(dir, args, "metrics.local", 2);
    /* a metric it does not have */
    snprintf(args, sizeof args, "plot clients --metric test_accuracy -o "
             "%s/f.svg %s/ft.json", dir, dir);
    refused(dir, args, "test_accuracy", 2);
    /* a value that is not a number */
    snprintf(args, sizeof args, "plot clients -o %s/f.svg %s", dir, path);
    ck_assert_int_eq(tu_write(path, three_clients("\"x\"")), 0);
    refused(dir, args, "metrics.global[2]", 2);
    /* a summary that does not belong to the values (worst 3.125, the
     * largest value now 3.5) */
    ck_assert_int_eq(tu_write(path, three_clients("3.5")), 0);
    refused(dir, args, "metrics.global.summary.test_mse.worst", 2);
    /* not JSON; no metrics */
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-result/1\""), 0);
    refused(dir, args, "not valid JSON", 2);
    ck_assert_int_eq(tu_write(path, "{\"format\": \"pflref-result/1\"}"), 0);
    refused(dir, args, "metrics", 2);
    /* the figure's name */
    snprintf(args, sizeof args, "plot clients -o %s/f.pdf %s/ft.json", dir,
             dir);
    refused(dir, args, "-o: the figure's name must end in .svg or .png", 2);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_seed000_clients);
    tcase_add_test(tc, test_clients_labels_apart);
    tcase_add_test(tc, test_seed000_sweep);
    tcase_add_test(tc, test_check_report);
    tcase_add_test(tc, test_check_report_malformed);
    tcase_add_test(tc, test_check_report_panels);
    tcase_add_test(tc, test_seed000_curves);
    tcase_add_test(tc, test_curves_personalized);
    tcase_add_test(tc, test_bad_results);
    suite_add_tcase(s, tc);
    return s;
}
