/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_rank.c: the ranking of a diagnosis's variants and
 * the naming of those identical on the vector (ref/oracle/diagnose.c does
 * the search; docs/cli.md, "diagnose").
 *
 * Ranking: a complete match first (an exact one before a precision cast's,
 * alone or with a change; then fewer changes, a cast counting as one, a
 * triple as three, then the search order: spec, presets, changes, casts,
 * triples); otherwise more expected records agreeing before the first
 * divergence (the expected trajectory's order; under
 * `partial` only the records the candidate wrote count), fewer
 * mismatches, more correct digits, fewer changes.
 *
 * One numeric outcome is listed once: a variant whose run equals, bit for
 * bit, the run of a variant ranked before it is not listed; it is named
 * in that variant's `identical`, with the settings in which the two
 * differ; for the verdict's match, the first vector of the folder whose
 * run differs between the two is named (ref/oracle/diagnose_apart.c).
 */
#include <stdio.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"
#include "oracle/diagnose_search.h"

/* A precision cast: alone (param "precision") or with a change
 * ("precision P", "precision P Q"; ref/oracle/diagnose_cast.c). */
static int is_cast(const pflref_variant_match *m)
{
    return strncmp(m->param, "precision", 9) == 0 &&
           (m->param[9] == '\0' || m->param[9] == ' ');
}

static int changes_in(const pflref_variant_match *m)
{
    if (m->change[0] == '\0')
        return 0;
    if (is_cast(m)) {   /* the cast and each parameter changed with it */
        int n = 1;
        for (const char *p = m->param; *p != '\0'; p++)
            n += *p == ' ';
        return n;
    }
    return strcmp(m->kind, "triple") == 0 ? 3
           : strcmp(m->kind, "pair") == 0 ? 2 : 1;
}

/* a before b: the order of the header's "Ranking" (stable on the index). */
static int better(const pflref_variant_match *a, size_t ia,
                  const pflref_variant_match *b, size_t ib)
{
    if (a->complete != b->complete)
        return a->complete;
    /* a match within float32's tolerance only after every exact one */
    const int ca = is_cast(a), cb = is_cast(b);
    if (a->complete && ca != cb)
        return cb;
    if (!a->complete) {
        if (a->agreeing != b->agreeing)
            return a->agreeing > b->agreeing;
        if (a->mismatches != b->mismatches)
            return a->mismatches < b->mismatches;
        if (a->min_lre != b->min_lre)
            return a->min_lre > b->min_lre;
    }
    if (changes_in(a) != changes_in(b))
        return changes_in(a) < changes_in(b);
    return ia < ib;
}

/* "kappa 0.5 vs 1" for each parameter of alg whose value differs between
 * a and b, appended to buf; returns how many differ. */
static size_t settings_differ(const char *alg, const pflref_hyper *a,
                              const pflref_hyper *b, char *buf, size_t n)
{
    size_t count, k = 0;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &ps[i];
        if (!pflref_name_in_list(p->algorithms, alg) ||
            pflref_param_find_for(p->name, alg) != p)
            continue;
        char x[64], y[64];
        if (p->type == PFLREF_PARAM_ENUM) {
            snprintf(x, sizeof x, "%s", pflref_hyper_get_enum(a, p));
            snprintf(y, sizeof y, "%s", pflref_hyper_get_enum(b, p));
        } else if (p->type == PFLREF_PARAM_REAL) {
            pflref_dtoa(pflref_hyper_get_real(a, p), x);
            pflref_dtoa(pflref_hyper_get_real(b, p), y);
        } else {
            snprintf(x, sizeof x, "%zu", pflref_hyper_get_int(a, p));
            snprintf(y, sizeof y, "%zu", pflref_hyper_get_int(b, p));
        }
        if (strcmp(x, y) == 0)
            continue;
        const size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s %s vs %s", k ? ", " : "", p->name,
                 x, y);
        k++;
    }
    return k;
}

/* The `identical` words of entry i: the other entries with its run, each
 * with the settings in which it differs ("the same settings" when the
 * two specs read alike, as a preset whose settings the vector makes
 * explicitly).  A cast with a change: the entries with its variant's
 * fp64 run, but that variant's own. */
static void name_identical(dg_search *s, size_t i, int apart,
                           pflref_variant_match *out)
{
    char *buf = out->identical;
    const size_t n = sizeof out->identical;
    buf[0] = '\0';
    const char *alg = s->v->spec->algorithm->name;
    size_t differ = 0, first = (size_t)-1, run = i;
    if (is_cast(&s->all[i]) && s->all[i].param[9] == ' ' &&
        s->from[i] < s->n_all)
        run = s->from[i];
    for (size_t j = 0; j < s->n_all; j++) {
        if (j == i || j == run || s->fp[j] != s->fp[run] ||
            strlen(buf) > n / 2)
            continue;
        const pflref_variant_match *m = &s->all[j];
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%spreset %s%s%s (", len ? "; " : "",
                 m->preset, m->change[0] ? " with " : "", m->change);
        len = strlen(buf);
        snprintf(buf + len, n - len, "differs in ");
        const size_t k = settings_differ(alg, &s->hyper[i], &s->hyper[j],
                                         buf, n);
        if (k == 0)
            snprintf(buf + len, n - len, "the same settings");
        else if (first == (size_t)-1)
            first = j;
        differ += k;
        len = strlen(buf);
        snprintf(buf + len, n - len, ")");
    }
    const size_t len = strlen(buf);
    char id[128];
    if (differ > 0 && apart && dg_tell_apart(s, &s->hyper[i],
                                             &s->hyper[first], id, sizeof id))
        snprintf(buf + len, n - len, "; vector %s tells them apart (its run "
                 "differs between them)", id);
    else if (differ > 0)
        snprintf(buf + len, n - len, "; a vector on which one of these "
                                     "settings changes the run tells them "
                                     "apart%s", apart ? " (none in this "
                                     "folder does)" : "");
}

void pflref_oracle_utf8_trim(char *s)
{
    size_t n = strlen(s), k = 0;
    /* back over the continuation bytes (at most 3) to the lead byte */
    while (k < n && k < 4 && ((unsigned char)s[n - 1 - k] & 0xC0u) == 0x80u)
        k++;
    if (k == n)
        return;
    const unsigned char lead = (unsigned char)s[n - 1 - k];
    const size_t need = lead >= 0xF0u ? 4 : lead >= 0xE0u ? 3
                      : lead >= 0xC0u ? 2 : 1;
    if (lead >= 0x80u && k + 1 < need)
        s[n - 1 - k] = '\0';   /* the sequence lacks bytes: cut it */
}

/* Every text of a kept match made valid UTF-8. */
static void trim_texts(pflref_variant_match *m)
{
    char *texts[] = {m->change, m->param, m->value, m->source,
                     m->value_source, m->identical};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        pflref_oracle_utf8_trim(texts[i]);
}

void pflref_oracle_rank(dg_search *s)
{
    pflref_diagnosis *d = s->d;
    size_t idx[PFLREF_DIAGNOSE_TOP];
    d->n_best = 0;
    for (size_t i = 0; i < s->n_all; i++) {
        /* one numeric outcome once: the best-ranked of its runs */
        int shadowed = 0;
        for (size_t j = 0; j < s->n_all && !shadowed; j++)
            shadowed = j != i && s->fp[j] == s->fp[i] &&
                       better(&s->all[j], j, &s->all[i], i);
        if (shadowed)
            continue;
        size_t pos = d->n_best;
        while (pos > 0 && better(&s->all[i], i, &s->all[idx[pos - 1]],
                                 idx[pos - 1]))
            pos--;
        if (pos == PFLREF_DIAGNOSE_TOP)
            continue;
        size_t last = d->n_best < PFLREF_DIAGNOSE_TOP ? d->n_best
                                                      : PFLREF_DIAGNOSE_TOP - 1;
        memmove(&idx[pos + 1], &idx[pos], (last - pos) * sizeof idx[0]);
        idx[pos] = i;
        if (d->n_best < PFLREF_DIAGNOSE_TOP)
            d->n_best++;
    }
    for (size_t j = 0; j < d->n_best; j++) {
        d->best[j] = s->all[idx[j]];
        /* the verdict's: which vector tells its identical ones apart */
        name_identical(s, idx[j], j == 0, &d->best[j]);
        trim_texts(&d->best[j]);
    }
    d->matched = d->n_best > 0 && d->best[0].complete;
    pflref_diagnosis_describe(d);
}
