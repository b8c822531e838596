/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_cast.c: the last step of diagnose's search, a
 * precision cast (docs/cli.md, "diagnose", step 4): when nothing matches in
 * fp64, the candidate held to the vector's own spec within float32's, then
 * bfloat16's, rounding spread (Monte Carlo arithmetic,
 * ref/oracle/precision.c), named only when a quantity off in fp64 was
 * written entirely in numbers of that format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"
#include "oracle/diagnose_search.h"

/* x is a number of the format: float32 (24 significant bits) or, bf16,
 * bfloat16 (8 bits: a float32 whose low 16 bits are 0). */
static int in_format(double x, int bf16)
{
    const float f = (float)x;
    if ((double)f != x)
        return 0;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return !bf16 || (bits & 0xFFFFu) == 0;
}

/* The quantity a precision cast stores: the first name off in fp64 whose
 * every value the candidate wrote is a number of the format (a model kept
 * or rounded in it is stored in it; a bug computed in float64 is not), "w"
 * first; NULL when there is none. */
static const char *cast_quantity(const pflref_candidate *c,
                                 const pflref_golden_report *fp64, int bf16)
{
    const char *found = NULL;
    for (size_t k = 0; k < fp64->n_names; k++) {
        const char *name = fp64->by_name[k].name;
        int all = fp64->by_name[k].mismatches > 0, seen = 0;
        for (size_t r = 0; all && r < c->records.count; r++) {
            const pflref_record *rec = &c->records.records[r];
            if (strcmp(rec->name, name) != 0)
                continue;
            seen = 1;
            for (size_t j = 0; all && j < rec->len; j++)
                all = in_format(c->records.values[rec->offset + j], bf16);
        }
        if (all && seen && (found == NULL || strcmp(name, "w") == 0))
            found = name;
    }
    return found;
}

/* The words of a precision cast: the global model when it is w, else the
 * personal model q. */
static void cast_words(const char *q, const char *fmt, char *buf, size_t n)
{
    if (strcmp(q, "w") == 0)
        snprintf(buf, n, "the global model rounded to %s each round (a "
                         "precision cast, e.g. a .float() in the "
                         "aggregation, or the run in %s)", fmt, fmt);
    else
        snprintf(buf, n, "the personal models (%s) kept in %s (a precision "
                         "cast)", q, fmt);
}

/* No variant matches in fp64: does the candidate match the vector's own
 * spec within float32's, else bfloat16's, rounding spread (Monte Carlo
 * arithmetic, ref/oracle/precision.c)?  Then it computes the algorithm as
 * specified, in a shorter format: a complete match of kind "precision".
 * A record chaotic at that precision is no evidence: not a match. */
pflref_status dg_precision_variant(dg_search *s, pflref_error *err)
{
    static const struct {
        pflref_precision p;
        const char *fmt, *value;
    } formats[] = {{PFLREF_PRECISION_FP32, "float32", "fp32"},
                   {PFLREF_PRECISION_BF16, "bfloat16", "bf16"}};
    if (s->found || s->check->precision != PFLREF_PRECISION_FP64)
        return PFLREF_OK;
    pflref_check_options o = *s->check;
    o.resync = 0;
    pflref_golden_report *fp64 = malloc(sizeof *fp64);
    pflref_status st = fp64 != NULL ? pflref_oracle_check_parsed(
                                          s->v, s->c, &o, fp64, err)
                                    : PFLREF_ENOMEM;
    for (size_t f = 0; st == PFLREF_OK && f < 2 && s->n_all < s->budget &&
                       !s->found; f++) {
        o.precision = formats[f].p;
        st = pflref_oracle_check_parsed(s->v, s->c, &o, s->rep, err);
        s->d->runs += s->rep->mca_runs + 1;
        const char *q = st == PFLREF_OK ? cast_quantity(s->c, fp64, (int)f)
                                        : NULL;
        if (st != PFLREF_OK || q == NULL || s->rep->mismatches > 0 ||
            s->rep->quantities == 0 || s->rep->mca_chaotic > 0 ||
            s->rep->mca_kinks > 0)
            continue;
        pflref_variant_match *m = &s->all[s->n_all++];
        *m = (pflref_variant_match){.complete = 1, .min_lre = s->rep->min_lre,
                                    .agreeing = s->rep->expected_records,
                                    .expected_records =
                                        s->rep->expected_records};
        snprintf(m->kind, sizeof m->kind, "precision");
        snprintf(m->preset, sizeof m->preset, "%s", s->d->spec_preset);
        snprintf(m->param, sizeof m->param, "precision");
        snprintf(m->value, sizeof m->value, "%s", formats[f].value);
        cast_words(q, formats[f].fmt, m->change, sizeof m->change);
        snprintf(m->source, sizeof m->source, "the vector's own spec, in %s",
                 formats[f].fmt);
        s->found = 1;
    }
    free(fp64);
    if (st == PFLREF_ENOMEM)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    return st == PFLREF_EINVAL ? PFLREF_OK : st;  /* e.g. nothing compared */
}
