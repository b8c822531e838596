/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/progress.c: one updating line on standard error while a long command
 * works, only when standard error is a terminal (never into a file or a
 * pipe) and not under --quiet:
 *
 *   pflref run: round 12 of 400, 3 clients done, 0.8 s elapsed, about 25 s left
 *   pflref verify: file 31 of 127, 1.2 s elapsed, about 3 s left
 *
 * For `run` it is a trace sink (pflref_trace) the CLI hands to the run in
 * place of the --trace printer (progress is off with --trace: the two
 * would interleave); the engine is not touched.  The round
 * count T comes from the spec's schedule.  The line is redrawn at most
 * every PROGRESS_PERIOD seconds ("\r", the text, erase to the end of the
 * line) and erased when the command ends, so the terminal keeps only what
 * the command printed.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cli.h"

/* Redraw period: often enough to look alive, rarely enough to cost
 * nothing next to the work (one clock read per event). */
#define PROGRESS_PERIOD 0.1

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_progress_take_quiet(int *argc, char **argv)
{
    int quiet = 0, k = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
            quiet = 1;
        else
            argv[k++] = argv[i];
    }
    *argc = k;
    return quiet;
}

void cli_progress_start(cli_progress *p, const char *what, long total,
                        int quiet)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    p->on = !quiet && isatty(STDERR_FILENO);
    p->start = now_seconds();
    p->round = -1;
}

/* "about 25 s left" from the fraction done, once a second has passed
 * (before that the rate says nothing). */
static void print_estimate(double elapsed, double done)
{
    if (elapsed < 1.0 || done <= 0.0 || done >= 1.0)
        return;
    double left = elapsed * (1.0 - done) / done;
    if (left < 60.0)
        fprintf(stderr, ", about %.0f s left", left < 1.0 ? 1.0 : left);
    else
        fprintf(stderr, ", about %.0f min left", left / 60.0);
}

/* Draw the line now (the caller decided it is time). */
static void draw(cli_progress *p, double t)
{
    const double elapsed = t - p->start;
    double done = 0.0;
    fprintf(stderr, "\r\033[Kpflref %s: ", p->what);
    if (p->unit == NULL) {
        /* rounds: the current one counts as half done */
        fprintf(stderr, "round %ld", p->round + 1);
        if (p->total > 0) {
            fprintf(stderr, " of %ld", p->total);
            done = ((double)p->round + 0.5) / (double)p->total;
        }
        fprintf(stderr, ", %ld client%s done", p->clients,
                p->clients == 1 ? "" : "s");
    } else {
        fprintf(stderr, "%s %ld of %ld", p->unit, p->round + 1, p->total);
        done = (double)p->round / (double)p->total;
    }
    fprintf(stderr, ", %.1f s elapsed", elapsed);
    print_estimate(elapsed, done);
    fflush(stderr);
    p->drawn = 1;
    p->last = t;
}

/* Redraw when the period has passed (or nothing is shown yet). */
static void maybe_draw(cli_progress *p)
{
    const double t = now_seconds();
    if (!p->drawn || t - p->last >= PROGRESS_PERIOD)
        draw(p, t);
}

void cli_progress_emit(void *ctx, const pflref_event *ev)
{
    cli_progress *p = ctx;
    if (!p->on)
        return;
    if (ev->round >= 0 && ev->round != p->round) {
        p->round = ev->round;
        p->clients = 0;
    }
    if (ev->kind == PFLREF_EV_CLIENT_END && ev->round >= 0)
        p->clients++;
    maybe_draw(p);
}

void cli_progress_item(cli_progress *p, const char *unit, size_t k, size_t n)
{
    if (!p->on)
        return;
    p->unit = unit;
    p->round = (long)k;
    p->total = (long)n;
    maybe_draw(p);
}

void cli_progress_end(cli_progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = 0;
}

long cli_progress_rounds(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *spec = json_object_get(root, "spec");
    const json_t *sched = json_object_get(spec != NULL ? spec : root,
                                          "schedule");
    const json_t *rounds = json_object_get(sched, "rounds");
    long T = 0;
    if (json_is_integer(rounds) && json_integer_value(rounds) > 0)
        T = (long)json_integer_value(rounds);
    else if (json_is_array(rounds))
        T = (long)json_array_size(rounds);
    json_decref(root);
    return T;
}
