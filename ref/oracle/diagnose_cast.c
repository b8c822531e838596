/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_cast.c: the last step of diagnose's search, a
 * precision cast (docs/cli.md, "diagnose", step 4): when nothing matches in
 * fp64, the candidate held to the vector's own spec within float32's, then
 * bfloat16's, rounding spread (Monte Carlo arithmetic,
 * ref/oracle/precision.c), named only when a quantity off in fp64 was
 * written entirely in numbers of that format.
 *
 * A cast combined with a change (issue 33: a float32 run of a candidate
 * that also moves Ditto's proximal reference).  When the cast alone does
 * not match, the changes already run (every entry of the search but the
 * spec: the presets, level 1's changes and pairs, level 2's beam) are
 * ranked by their agreement at the format's fixed floor (float32's atol
 * 1e-5, rtol 1e-4; bfloat16's 1e-2, 3e-2: pflref_oracle_compare_run, which
 * run_variant computed for each when the candidate wrote a quantity in
 * that format), most agreeing first, then fewer mismatches, fewer
 * changes, the search order; one run is taken once.  The DG_CAST_BEAM (3)
 * best that agree further than the spec at that floor are each checked
 * like the cast alone, under the Monte Carlo tolerance of the format with
 * the variant's run as the expectation (pflref_oracle_check_spec).
 *
 * The cast with the probe "one local step fewer" (a float32 loop that
 * stops one batch early): the step-fewer entries (one per base; their
 * runs are the base's spec under another schedule, rebuilt here by
 * dg_fewer_schedule) are ranked by the same rule, and the best of them
 * that agrees further than the spec at the floor joins the beam in its
 * place, one compound more: at most DG_CAST_BEAM + 1 (4) per format.
 *
 * The first complete match ends the search: kind "precision", param
 * "precision P", value "fp32 V", change "float32 + CHANGE" ("precision
 * schedule", "fp32 steps - 1", "float32 + one local step fewer (...)"
 * for the probe).  Cost: one Monte Carlo check is 1 + K + P runs
 * (DG_MCA_COST, 25), each counted and each taken only when the budget
 * still holds it; at most (1 + 3 + 1) checks per format, 125 runs.  A
 * candidate that wrote no quantity in a format costs nothing here (no
 * check is made); one that did has 2 checks (at most a quarter of the
 * budget) kept from levels 0-2 (s->cast_reserve, ref/oracle/diagnose.c),
 * so the cast alone and the first compound of the order -- the step-fewer
 * one when it agrees furthest -- fit the default budget; the reserve is
 * as before, the others are tried while the budget holds them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io/vector.h"
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

void dg_cast_formats(dg_search *s)
{
    s->cast_in[0] = s->cast_in[1] = 0;
    if (s->check->precision != PFLREF_PRECISION_FP64)
        return;
    const pflref_trajectory *c = &s->c->records;
    /* the names, each with whether every value of it is in the format */
    const char **names = malloc((c->count + 1) * sizeof *names);
    int(*in)[2] = malloc((c->count + 1) * sizeof *in);
    size_t n = 0;
    for (size_t r = 0; names != NULL && in != NULL && r < c->count; r++) {
        const pflref_record *rec = &c->records[r];
        size_t k = 0;
        while (k < n && strcmp(names[k], rec->name) != 0)
            k++;
        if (k == n) {
            names[n] = rec->name;
            in[n][0] = in[n][1] = 1;
            n++;
        }
        for (size_t j = 0; j < rec->len && (in[k][0] || in[k][1]); j++)
            for (int f = 0; f < 2; f++)
                in[k][f] = in[k][f] &&
                           in_format(c->values[rec->offset + j], f);
    }
    for (size_t k = 0; k < n; k++)
        for (int f = 0; f < 2; f++)
            s->cast_in[f] |= in[k][f];
    free(names);
    free(in);
}

/* Whether the budget holds one more Monte Carlo check (and its entry);
 * if not, the search is marked stopped at the budget. */
static int afford_check(dg_search *s)
{
    const size_t k = s->check->mca_runs > 0 ? s->check->mca_runs
                                            : PFLREF_MCA_RUNS;
    if (s->n_all < s->budget &&
        s->d->runs + 1 + k + PFLREF_MCA_PROBE_RUNS <= s->budget)
        return 1;
    s->d->budget_exhausted = 1;
    return 0;
}

/* 1 when the report r is a complete match under the Monte Carlo
 * tolerance: nothing off, something compared, nothing chaotic or at a
 * kink (a record chaotic at that precision is no evidence). */
static int cast_matches(const pflref_golden_report *r)
{
    return r->mismatches == 0 && r->quantities > 0 && r->mca_chaotic == 0 &&
           r->mca_kinks == 0;
}

static int n_changes(const pflref_variant_match *m)
{
    return m->change[0] == '\0'             ? 0
           : strcmp(m->kind, "triple") == 0 ? 3
           : strcmp(m->kind, "pair") == 0   ? 2
                                            : 1;
}

/* Entry a before entry b in the beam of format f (see the header). */
static int beam_before(const dg_search *s, size_t f, size_t a, size_t b)
{
    if (s->cast_agreeing[f][a] != s->cast_agreeing[f][b])
        return s->cast_agreeing[f][a] > s->cast_agreeing[f][b];
    if (s->cast_mismatches[f][a] != s->cast_mismatches[f][b])
        return s->cast_mismatches[f][a] < s->cast_mismatches[f][b];
    if (n_changes(&s->all[a]) != n_changes(&s->all[b]))
        return n_changes(&s->all[a]) < n_changes(&s->all[b]);
    return a < b;
}

/* Entry i is the probe "one local step fewer" of a base whose own run is
 * an entry (its spec s->spec_of[s->from[i]], its schedule rebuilt by
 * dg_fewer_schedule). */
static int is_step_fewer(const dg_search *s, size_t i)
{
    return s->spec_of[i] == NULL && strcmp(s->all[i].kind, "probe") == 0 &&
           strcmp(s->all[i].param, "schedule") == 0 && s->from[i] < i &&
           s->spec_of[s->from[i]] != NULL;
}

/* Entry i agrees further than the spec (entry 0) at format f's floor: a
 * change the cast needs must. */
static int further_than_spec(const dg_search *s, size_t f, size_t i)
{
    const size_t a = s->cast_agreeing[f][i], a0 = s->cast_agreeing[f][0];
    return a > a0 || (a == a0 && s->cast_mismatches[f][i] <
                                     s->cast_mismatches[f][0]);
}

/* The beam of format f among entries 1..end-1 into beam (DG_CAST_BEAM + 1
 * entries): the DG_CAST_BEAM best variants that ran the spec's schedule,
 * and the best step-fewer probe (of any base), each agreeing further
 * than the spec, all in the order of beam_before; returns its size. */
static size_t cast_beam(const dg_search *s, size_t f, size_t end,
                        size_t *beam)
{
    size_t nb = 0, fewer = 0;   /* 0: no step-fewer probe (0 is the spec) */
    for (size_t i = 1; i < end; i++) {
        if (strcmp(s->all[i].kind, "precision") == 0 ||
            !further_than_spec(s, f, i))
            continue;
        if (is_step_fewer(s, i)) {   /* the best one; a twin run is later */
            if (fewer == 0 || beam_before(s, f, i, fewer))
                fewer = i;
            continue;
        }
        if (s->spec_of[i] == NULL)
            continue;
        int seen = 0;   /* one run once: the better-placed entry of it */
        for (size_t j = 0; j < end && !seen; j++)
            seen = j != i && s->fp[j] == s->fp[i] && s->spec_of[j] != NULL &&
                   j > 0 && strcmp(s->all[j].kind, "precision") != 0 &&
                   beam_before(s, f, j, i);
        if (seen)
            continue;
        size_t pos = nb;
        while (pos > 0 && beam_before(s, f, i, beam[pos - 1]))
            pos--;
        if (pos == DG_CAST_BEAM)
            continue;
        if (nb < DG_CAST_BEAM)
            nb++;
        memmove(&beam[pos + 1], &beam[pos], (nb - 1 - pos) * sizeof *beam);
        beam[pos] = i;
    }
    if (fewer != 0) {   /* in its place among the others: one more */
        size_t pos = nb;
        while (pos > 0 && beam_before(s, f, fewer, beam[pos - 1]))
            pos--;
        memmove(&beam[pos + 1], &beam[pos], (nb - pos) * sizeof *beam);
        beam[pos] = fewer;
        nb++;
    }
    return nb;
}

/* The Monte Carlo check of the candidate against entry i's variant at
 * o's precision (pflref_oracle_check_spec into s->rep); its runs
 * counted.  The step-fewer probe runs its base's spec under the schedule
 * dg_fewer_schedule rebuilds.  A variant refused here is no error. */
static pflref_status check_entry(dg_search *s, size_t i,
                                 const pflref_check_options *o)
{
    const int fewer = is_step_fewer(s, i);
    pflref_spec variant = *s->spec_of[fewer ? s->from[i] : i];  /* shallow */
    variant.hyper = s->hyper[i];
    pflref_schedule sch;
    pflref_round_plan *rounds = NULL;
    pflref_batches *lists = NULL;
    if (fewer) {
        if (dg_fewer_schedule(variant.schedule, &sch, &rounds, &lists) < 0)
            return PFLREF_ENOMEM;
        variant.schedule = &sch;
    }
    /* IFCA's estimate lists dropped for evaluation-mode estimates */
    pflref_schedule est;
    pflref_round_plan *est_rounds = NULL;
    const pflref_schedule *run_sch = dg_estimate_schedule(
        &variant, &variant.hyper, variant.schedule, &est, &est_rounds);
    if (run_sch == NULL) {
        free(rounds);
        free(lists);
        return PFLREF_ENOMEM;
    }
    variant.schedule = (pflref_schedule *)run_sch;
    pflref_error cerr;
    pflref_status st = pflref_oracle_check_spec(s->v, &variant, s->c, o,
                                                s->rep, &cerr);
    s->d->runs += s->rep->mca_runs + 1 + PFLREF_MCA_PROBE_RUNS;
    free(est_rounds);
    free(rounds);
    free(lists);
    return st;
}

/* Append the complete match of a cast to format f (value `value`, words
 * in `fmt`) of entry i's variant: "float32 + CHANGE" from entry i's
 * preset; the quantity q named in its source. */
static void add_compound(dg_search *s, size_t i, const char *fmt,
                         const char *value, const char *q)
{
    const pflref_variant_match var = s->all[i];   /* m is another entry */
    const pflref_variant_match *v = &var;
    const size_t n = s->n_all++;
    pflref_variant_match *m = &s->all[n];
    *m = (pflref_variant_match){.complete = 1, .min_lre = s->rep->min_lre,
                                .agreeing = s->rep->expected_records,
                                .expected_records = s->rep->expected_records,
                                .compared = s->rep->quantities};
    snprintf(m->kind, sizeof m->kind, "precision");
    snprintf(m->preset, sizeof m->preset, "%s", v->preset);
    snprintf(m->source, sizeof m->source, "%s", v->source);
    snprintf(m->param, sizeof m->param, "precision%s%s",
             v->param[0] ? " " : "", v->param);
    snprintf(m->value, sizeof m->value, "%s%s%s", value,
             v->value[0] ? " " : "", v->value);
    if (v->change[0] != '\0')
        snprintf(m->change, sizeof m->change, "%s + %s", fmt, v->change);
    else
        snprintf(m->change, sizeof m->change, "%s", fmt);
    snprintf(m->value_source, sizeof m->value_source,
             "%s%sprecision = %s: %s written in %s (a precision cast)",
             v->value_source, v->value_source[0] ? "; " : "", value, q, fmt);
    /* its own outcome, apart from the variant's fp64 run (which it
     * supersedes); the variant's settings, for naming the identical */
    s->fp[n] = s->fp[i] ^ 0x9E3779B97F4A7C15ULL ^ (uint64_t)fmt[0];
    s->hyper[n] = s->hyper[i];
    s->from[n] = i;
    s->spec_of[n] = NULL;
    s->found = 1;
}

/* No variant matches in fp64: does the candidate match the vector's own
 * spec within float32's, else bfloat16's, rounding spread (Monte Carlo
 * arithmetic, ref/oracle/precision.c)?  Then it computes the algorithm as
 * specified, in a shorter format: a complete match of kind "precision".
 * A record chaotic at that precision is no evidence: not a match.  Else
 * the cast with each change of the format's beam (see the header). */
pflref_status dg_precision_variant(dg_search *s, pflref_error *err)
{
    static const struct {
        pflref_precision p;
        const char *fmt, *value;
    } formats[] = {{PFLREF_PRECISION_FP32, "float32", "fp32"},
                   {PFLREF_PRECISION_BF16, "bfloat16", "bf16"}};
    if (s->found || s->check->precision != PFLREF_PRECISION_FP64 ||
        !(s->cast_in[0] || s->cast_in[1]))
        return PFLREF_OK;
    pflref_check_options o = *s->check;
    o.resync = 0;
    const size_t end = s->n_all;   /* the search's entries, casts after */
    pflref_golden_report *fp64 = malloc(sizeof *fp64);
    pflref_status st = fp64 != NULL ? pflref_oracle_check_parsed(
                                          s->v, s->c, &o, fp64, err)
                                    : PFLREF_ENOMEM;
    for (size_t f = 0; st == PFLREF_OK && f < 2 && !s->found; f++) {
        const char *q = s->cast_in[f] ? cast_quantity(s->c, fp64, (int)f)
                                      : NULL;
        if (q == NULL || !afford_check(s))
            continue;   /* no quantity off in fp64 stored in the format */
        o.precision = formats[f].p;
        st = pflref_oracle_check_parsed(s->v, s->c, &o, s->rep, err);
        s->d->runs += s->rep->mca_runs + 1 + PFLREF_MCA_PROBE_RUNS;
        if (st == PFLREF_OK && cast_matches(s->rep)) {
            pflref_variant_match *m = &s->all[s->n_all];
            *m = (pflref_variant_match){
                .complete = 1, .min_lre = s->rep->min_lre,
                .agreeing = s->rep->expected_records,
                .expected_records = s->rep->expected_records,
                .compared = s->rep->quantities};
            snprintf(m->kind, sizeof m->kind, "precision");
            snprintf(m->preset, sizeof m->preset, "%s", s->d->spec_preset);
            snprintf(m->param, sizeof m->param, "precision");
            snprintf(m->value, sizeof m->value, "%s", formats[f].value);
            cast_words(q, formats[f].fmt, m->change, sizeof m->change);
            snprintf(m->source, sizeof m->source,
                     "the vector's own spec, in %s", formats[f].fmt);
            s->fp[s->n_all] = 0;
            s->spec_of[s->n_all] = NULL;
            s->from[s->n_all++] = 0;
            s->found = 1;
            break;
        }
        if (st == PFLREF_EINVAL)
            st = PFLREF_OK;   /* e.g. nothing compared: no match */
        size_t beam[DG_CAST_BEAM + 1];
        const size_t nb = st == PFLREF_OK ? cast_beam(s, f, end, beam) : 0;
        for (size_t j = 0; j < nb && st == PFLREF_OK && !s->found; j++) {
            if (!afford_check(s))
                break;
            st = check_entry(s, beam[j], &o);
            if (st == PFLREF_OK && cast_matches(s->rep))
                add_compound(s, beam[j], formats[f].fmt, formats[f].value,
                             q);
            else if (st != PFLREF_ENOMEM)
                st = PFLREF_OK;   /* refused, diverged, nothing compared */
        }
    }
    free(fp64);
    if (st == PFLREF_ENOMEM)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    return st == PFLREF_EINVAL ? PFLREF_OK : st;  /* e.g. nothing compared */
}
