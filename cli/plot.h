/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/plot.h: what cli/plot.c (the figures from results and reports, and
 * gnuplot) and cli/plot_curves.c (training curves from specs) share. */
#ifndef PFLREF_CLI_PLOT_H
#define PFLREF_CLI_PLOT_H

#include <stddef.h>

#define PLOT_MAX_COLUMNS 16

/* The options every kind of plot takes. */
typedef struct {
    const char *out;       /* -o: FIG.svg, FIG.png, or - (stdout)       */
    const char *metric;    /* --metric                                  */
    const char *title;     /* --title, or NULL for the kind's own title */
    int png;               /* 1 for .png                                */
    const char *args[PLOT_MAX_COLUMNS];
    size_t nargs;
} plot_opts;

/* A growing text buffer; failed = 1 once an allocation failed. */
typedef struct {
    char *s;
    size_t n, cap;
    int failed;
} sbuf;

void sb_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s as a gnuplot double-quoted string that prints as itself. */
void sb_quoted(sbuf *b, const char *s);
/* The terminal (svg or pngcairo) and output lines of a figure. */
void sb_terminal(sbuf *b, int png, int width, int height);
/* Run gnuplot on script into o->out (through the one writer: a temporary
 * file, renamed when gnuplot succeeded, nothing left otherwise; or
 * standard output); returns an exit code. */
int plot_render(const plot_opts *o, sbuf *script);

/* The JSON object in path, or NULL with the error printed (exit 2). */
struct json_t *plot_load_object(const char *path);
/* Whether root's "format" is `format`; the error printed when not. */
int plot_has_format(const struct json_t *root, const char *format,
                    const char *path);

/* pflref plot curves (cli/plot_curves.c). */
int plot_curves(const plot_opts *o);
/* pflref plot check (cli/plot_check.c). */
int plot_check(const plot_opts *o);

#endif
