/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_triple.c: level 3 of diagnose's search, three
 * changes at once (docs/cli.md, "diagnose", step 5), tried only when no
 * variant of fewer changes matched, the precision casts included
 * (ref/oracle/diagnose.c's header states the bound: at most LEVEL3_WIDTH
 * pairs, each with every change of a third parameter, never past the
 * budget). */
#include <stdio.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"
#include "oracle/diagnose_search.h"

/* Level 3: the pairs given a third change. */
#define LEVEL3_WIDTH 2

/* "KEY = VALUE" of parameter p under the settings h, into buf. */
static void setting_text(const pflref_param *p, const pflref_hyper *h,
                         char *buf, size_t n)
{
    if (p->type == PFLREF_PARAM_ENUM) {
        snprintf(buf, n, "%s", pflref_hyper_get_enum(h, p));
    } else if (p->type == PFLREF_PARAM_REAL) {
        char x[PFLREF_DTOA_MAX];
        pflref_dtoa(pflref_hyper_get_real(h, p), x);
        snprintf(buf, n, "%s", x);
    } else {
        snprintf(buf, n, "%zu", pflref_hyper_get_int(h, p));
    }
}

/* 1 when parameter p has one value under the settings a and b. */
static int same_setting(const pflref_param *p, const pflref_hyper *a,
                        const pflref_hyper *b)
{
    char x[64], y[64];
    setting_text(p, a, x, sizeof x);
    setting_text(p, b, y, sizeof y);
    return strcmp(x, y) == 0;
}

/* The variant of base b with the settings of entry `pair` (a pair)
 * and the change c of a third parameter; kind "triple",
 * its words the three settings ("KEY = VALUE, KEY = VALUE and KEY =
 * VALUE", the base's values in its preset: three "(instead of ...)" do
 * not fit a match's change), its param and value the three keys and
 * values, in the registry's order with c last. */
static pflref_status run_third(dg_search *s, const dg_base *b, size_t pair,
                               const dg_change *c, pflref_error *err)
{
    pflref_hyper h = s->hyper[pair];
    if (!dg_apply_change(&h, c))
        return PFLREF_OK;
    const char *alg = s->v->spec->algorithm->name;
    pflref_variant_match m = dg_label("triple", b->preset, b->source);
    const pflref_param *changed[3];
    size_t nc = 0, count;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count && nc < 2; i++)
        if (pflref_name_in_list(ps[i].algorithms, alg) &&
            pflref_param_find_for(ps[i].name, alg) == &ps[i] &&
            &ps[i] != c->p && !same_setting(&ps[i], &b->spec->hyper, &h))
            changed[nc++] = &ps[i];
    if (nc != 2)
        return PFLREF_OK;   /* the pair is not two changes of this base */
    changed[nc++] = c->p;
    for (size_t i = 0; i < nc; i++) {
        char val[64];
        setting_text(changed[i], &h, val, sizeof val);
        size_t len = strlen(m.change);
        snprintf(m.change + len, sizeof m.change - len, "%s%s = %s",
                 i == 0 ? "" : i + 1 < nc ? ", " : " and ", changed[i]->name,
                 val);
        len = strlen(m.param);
        snprintf(m.param + len, sizeof m.param - len, "%s%s", i ? " " : "",
                 changed[i]->name);
        len = strlen(m.value);
        snprintf(m.value + len, sizeof m.value - len, "%s%s", i ? " " : "",
                 val);
        const char *src = changed[i]->type == PFLREF_PARAM_ENUM
            ? pflref_param_value_source(alg, changed[i]->name, val) : NULL;
        len = strlen(m.value_source);
        if (src != NULL)
            snprintf(m.value_source + len, sizeof m.value_source - len,
                     "%s%s = %s: %s", len ? "; " : "", changed[i]->name, val,
                     src);
    }
    size_t at;
    return dg_run_variant(s, b->spec, &h, NULL, &m, pair, &at, err);
}

/* Level 3, when no variant of one or two changes matched, the casts
 * included: the LEVEL3_WIDTH best pairs (entries from..n_all of kind
 * "pair": level 2's, and level 1's linked ones) that agree further than
 * the variant they extend (its first change, or its base for a linked
 * pair), each with every change of a third parameter from the pair's
 * settings (see the header for the bound). */
pflref_status dg_level3(dg_search *s, const dg_base *bases, size_t n_bases,
                        size_t from, dg_change *changes, pflref_error *err)
{
    size_t beam[LEVEL3_WIDTH], nb = 0;
    const size_t end = s->n_all;
    for (size_t i = from; i < end; i++) {
        const pflref_variant_match *m = &s->all[i];
        if (strcmp(m->kind, "pair") != 0 || s->spec_of[i] == NULL ||
            s->from[i] >= end || m->agreeing <= s->all[s->from[i]].agreeing)
            continue;   /* two changes on the way: further than one */
        size_t pos = nb;
        while (pos > 0 && s->all[beam[pos - 1]].agreeing < m->agreeing)
            pos--;
        if (pos == LEVEL3_WIDTH)
            continue;
        if (nb < LEVEL3_WIDTH)
            nb++;
        memmove(&beam[pos + 1], &beam[pos], (nb - 1 - pos) * sizeof *beam);
        beam[pos] = i;
    }
    pflref_status st = PFLREF_OK;
    for (size_t j = 0; j < nb && st == PFLREF_OK && dg_budget_left(s); j++) {
        const pflref_variant_match *pair = &s->all[beam[j]];
        const dg_base *b = NULL;
        for (size_t q = 0; q < n_bases && b == NULL; q++)
            if (strcmp(bases[q].preset, pair->preset) == 0)
                b = &bases[q];
        if (b == NULL)
            continue;
        const pflref_hyper h2 = s->hyper[beam[j]];
        size_t k = dg_list_changes(s->v->spec->algorithm->name, &h2, changes);
        for (size_t i = 0; i < k && st == PFLREF_OK && dg_budget_left(s); i++)
            if (same_setting(changes[i].p, &b->spec->hyper, &h2))
                st = run_third(s, b, beam[j], &changes[i], err);
    }
    return st;
}
