/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose.c: which known variant a failing candidate computes
 * (pflref/golden.h, pflref_golden_diagnose; docs/cli.md, "diagnose";
 * docs/variants.md).  The changes from a base are listed in
 * ref/oracle/diagnose_changes.c; the ranking and the words of attribution
 * are in ref/oracle/diagnose_rank.c.
 *
 * Method.  A variant is the vector's spec with its settings changed: the
 * algorithm's presets (ref/engine/params.c's table, read through
 * pflref_presets, so a preset added there is searched without a change
 * here), and changes from a base: every other value of every switch the
 * registry lists for the algorithm, and probes of its hyperparameters
 * (× 2, × ½, 0 and the registry's default for a real; ± 1 for a count).
 * Each variant is run with the vector's schedule (pflref_spec_run on the
 * modified spec) and the candidate is compared with the run as the
 * expectation, on the vector's keys and tolerances
 * (pflref_oracle_compare_run, the comparison of pflref_golden_check).
 *
 *   level 0  the spec as it is, then every preset ("paper" too): the
 *            preset's spec is the vector's with algorithm.preset set and
 *            the explicit settings either preset sets removed (those the
 *            algorithm requires stay), parsed as the spec reader parses it
 *   level 1  one change from every base -- the spec and every preset, the
 *            most agreeing first, whatever its own agreement: a variant
 *            one switch from a preset that agrees no better than the spec
 *            (the paper, under a vector run with pfllib) is reached too.
 *            A change of a parameter the registry links to another
 *            (pflref_param_links: lr.schedule needs lr.gamma ≠ 1) is also
 *            tried with the other set to each of the link's values; the
 *            probe "one local step fewer" drops the last batch of every
 *            list of the round (Ditto's personal lists too)
 *   level 2  a beam: the BEAM_WIDTH best variants of level 1 that agree
 *            further than their base (a first change on the way), each
 *            with a second change of another parameter
 *   level 3  three changes, after every cheaper explanation: only when no
 *            variant of levels 0-2 and no precision cast (below: alone, or
 *            with one change, a pair or the step-fewer probe) matched, so
 *            it runs after the casts, in the runs the budget still has
 *            (the casts' reserve included, when they did not use it).  A
 *            beam (ref/oracle/diagnose_triple.c): the LEVEL3_WIDTH (2)
 *            best pairs (level 2's, and level 1's linked ones) that agree
 *            further than the variant they extend (a second change on
 *            the way), each with every change of a third parameter from
 *            the pair's settings; kind "triple", words "KEY = VALUE, KEY =
 *            VALUE and KEY = VALUE".  Bound: at
 *            most 2 × the changes listed from a pair (≤ DG_MAX_CHANGES;
 *            about 40 on FedAvg, so ≤ ~80 runs), never past the budget.
 *            Ranked by the same rule as the rest (a complete match first,
 *            fewer changes first: a triple counts three), so a pair or a
 *            cast with a change that matches is named before it; a cast
 *            with a triple (four changes) is not tried
 *
 * Pruning is by what a branch can still reach, never by its own
 * agreement: a base whose settings equal an earlier base's reaches the
 * same variants and is not expanded again; a variant reached a second way
 * is not run again; a change whose run equals its base's run bit for bit
 * changes nothing on this vector and is counted (d->unchanged), not
 * listed -- the reference's own output is the proof.
 *
 * The search stops after the level where a variant matches completely
 * (every base of that level is still expanded, so variants identical on
 * this vector are found and named together), and at the budget of runs.
 * A variant the reference refuses (a switch combination the algorithm's
 * check rejects, a bound) or that diverges is counted and left out.
 *
 * When nothing matches in fp64, a precision cast is tried last, when the
 * candidate wrote a quantity entirely in numbers of the format: the
 * candidate against the spec within float32's, then bfloat16's, rounding
 * spread (Monte Carlo arithmetic, ref/oracle/precision.c), then against
 * the DG_CAST_BEAM variants above that agree furthest at that format's
 * fixed floor and the best step-fewer probe there, each within its
 * rounding spread ("float32 + CHANGE", "float32 + one local step fewer";
 * ref/oracle/diagnose_cast.c, which states the bound and its cost).  So
 * each run also compares the candidate at those floors (dg_cast_agreement).
 *
 * Not searched (docs/cli.md): three changes beyond level 3's beam (a
 * cast with a pair only when the pair is in the cast's beam), four or
 * more changes (a cast with a triple among them), a local step more
 * (which batch it would take is a guess), other data.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"
#include "oracle/diagnose_search.h"

typedef dg_base base;

/* Presets an algorithm may have, "paper" included (a bound of the search's
 * tables, not of the registry: more are ignored with a note in runs). */
#define MAX_BASES 16
/* Level 2: the variants of level 1 given a second change. */
#define BEAM_WIDTH 4


/* ---- one variant -------------------------------------------------------- */

/* Prefix err->where with "expected:" or "candidate:" (the side at fault),
 * as pflref_golden_check does. */
static void name_side(pflref_error *err, const char *side)
{
    if (err == NULL)
        return;
    char path[PFLREF_WHERE_MAX];
    snprintf(path, sizeof path, "%s:%s", side, err->where);
    snprintf(err->where, sizeof err->where, "%s", path);
}

/* Expected records the candidate wrote before the key of the first
 * divergence (in the expected trajectory's order): under `partial` a
 * record the candidate did not write is not agreeing, it was not
 * compared. */
static size_t agreeing(const dg_search *s, const pflref_golden_report *r)
{
    const pflref_trajectory *e = &s->v->expected;
    size_t end = e->count;
    if (r->diverged) {
        const pflref_divergence *f = &r->first;
        end = 0;
        for (size_t k = 0; k < e->count; k++) {
            const pflref_record *x = &e->records[k];
            if (x->round == f->round && x->client == f->client &&
                x->step == f->step && strcmp(x->name, f->name) == 0 &&
                strcmp(x->phase, f->phase) == 0 &&
                strcmp(pflref_event_kind_name(x->kind), f->event) == 0) {
                end = k;
                break;
            }
        }
    }
    size_t n = 0;
    for (size_t k = 0; k < end; k++)
        n += s->recorded[k];
    return n;
}

void dg_cast_agreement(dg_search *s, const pflref_trajectory *tj, size_t at)
{
    static const pflref_precision p[2] = {PFLREF_PRECISION_FP32,
                                          PFLREF_PRECISION_BF16};
    for (size_t f = 0; f < 2; f++) {
        if (!s->cast_in[f])
            continue;
        pflref_check_options o = *s->check;
        o.precision = p[f];
        pflref_oracle_compare_run(s->v, tj, &s->c->records, &o, s->rep);
        s->cast_agreeing[f][at] = agreeing(s, s->rep);
        s->cast_mismatches[f][at] = s->rep->mismatches;
    }
}

/* A fingerprint of a run: FNV-1a over every record's key and the bits of
 * its numbers.  Two runs with one fingerprint are taken as identical
 * (a collision of 64 bits between two runs of one vector is not a
 * concern next to the tolerance of the comparison itself). */
uint64_t dg_fingerprint(const pflref_trajectory *tj)
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(byte) (h = (h ^ (uint64_t)(byte)) * 1099511628211ULL)
    for (size_t k = 0; k < tj->count; k++) {
        const pflref_record *r = &tj->records[k];
        const long key[4] = {(long)r->kind, r->round, r->client, r->step};
        for (size_t j = 0; j < 4; j++)
            for (unsigned b = 0; b < 64; b += 8)
                MIX(((unsigned long)key[j] >> b) & 0xffu);
        for (const char *c = r->name; *c; c++)
            MIX((unsigned char)*c);
        for (const char *c = r->phase; *c; c++)
            MIX((unsigned char)*c);
        for (size_t i = 0; i < r->len; i++) {
            uint64_t bits;
            /* −0 + 0 = +0: −0 and +0 are one number here */
            const double x = tj->values[r->offset + i] + 0.0;
            memcpy(&bits, &x, sizeof bits);
            for (unsigned b = 0; b < 64; b += 8)
                MIX((bits >> b) & 0xffu);
        }
    }
#undef MIX
    return h;
}

/* 1 when the variant (spec, settings, schedule) ran before -- a second
 * path to one variant (a link's pair and the beam's) -- else 0, and it is
 * noted. */
static int already_tried(dg_search *s, const pflref_spec *spec,
                         const pflref_hyper *hyper,
                         const pflref_schedule *schedule)
{
    uint64_t h = 1469598103934665603ULL;
    const void *ptrs[2] = {spec, schedule};
    const unsigned char *bytes[2] = {(const unsigned char *)ptrs,
                                     (const unsigned char *)hyper};
    const size_t sizes[2] = {sizeof ptrs, sizeof *hyper};
    for (size_t part = 0; part < 2; part++)
        for (size_t i = 0; i < sizes[part]; i++)
            h = (h ^ bytes[part][i]) * 1099511628211ULL;
    for (size_t i = 0; i < s->n_tried; i++)
        if (s->tried[i] == h)
            return 1;
    if (s->n_tried < s->budget)
        s->tried[s->n_tried++] = h;
    return 0;
}

/* Run spec under hyper (and schedule, when not NULL) and compare the
 * candidate with it; the match is appended to s->all (its labels set by
 * the caller first, in *m) unless the run is refused, or it has a change
 * and its run equals the run of the entry `from` (then counted as
 * unchanged).  *at: the entry's index, or -1.  Returns PFLREF_OK or
 * PFLREF_ENOMEM (the vector's own spec failing: its error). */
pflref_status dg_run_variant(dg_search *s, const pflref_spec *spec,
                             const pflref_hyper *hyper,
                             pflref_schedule *schedule,
                             const pflref_variant_match *m, size_t from,
                             size_t *at, pflref_error *err)
{
    const int strict = s->n_all == 0 && s->d->runs == 0;  /* the spec */
    *at = (size_t)-1;
    if (already_tried(s, spec, hyper, schedule))
        return PFLREF_OK;   /* reached before from another branch */
    pflref_spec copy = *spec;  /* shallow: only the settings differ */
    copy.hyper = *hyper;
    if (schedule != NULL)
        copy.schedule = schedule;
    /* IFCA's estimate lists dropped for evaluation-mode estimates */
    pflref_schedule est;
    pflref_round_plan *est_rounds = NULL;
    const pflref_schedule *sch = dg_estimate_schedule(
        spec, hyper, copy.schedule, &est, &est_rounds);
    if (sch == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory running a variant");
    copy.schedule = (pflref_schedule *)sch;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    pflref_trace rec = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = NULL;
    pflref_error run_err;
    pflref_status st = pflref_spec_run(&copy, &rec, &res, &run_err);
    pflref_run_result_free(res);
    free(est_rounds);
    s->d->runs++;
    if (s->opt->progress != NULL)
        s->opt->progress(s->opt->progress_ctx, s->d->runs, s->budget);
    if (tj.failed || st == PFLREF_ENOMEM) {
        pflref_trajectory_free(&tj);
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory running a variant");
    }
    if (st != PFLREF_OK) {
        pflref_trajectory_free(&tj);
        if (strict) {   /* the vector's own spec must run */
            if (err != NULL)
                *err = run_err;
            name_side(err, "expected");
            return st;
        }
        s->d->refused++;
        return PFLREF_OK;
    }
    const uint64_t fp = dg_fingerprint(&tj);
    if (m->change[0] != '\0' && from < s->n_all && s->fp[from] == fp) {
        pflref_trajectory_free(&tj);
        s->d->unchanged++;   /* changes nothing on this vector */
        return PFLREF_OK;
    }
    pflref_oracle_compare_run(s->v, &tj, &s->c->records, s->check, s->rep);
    *at = s->n_all;
    s->spec_of[s->n_all] = schedule == NULL ? spec : NULL;
    pflref_variant_match *out = &s->all[s->n_all];
    s->fp[s->n_all] = fp;
    s->from[s->n_all] = from;
    s->hyper[s->n_all++] = *hyper;
    *out = *m;
    out->complete = s->rep->mismatches == 0 && s->rep->quantities > 0;
    out->agreeing = agreeing(s, s->rep);
    out->expected_records = s->rep->expected_records;
    out->compared = s->rep->quantities;
    out->mismatches = s->rep->mismatches;
    out->min_lre = s->rep->min_lre;
    out->diverged = s->rep->diverged;
    out->first = s->rep->first;
    s->found |= out->complete;
    dg_cast_agreement(s, &tj, *at);
    pflref_trajectory_free(&tj);
    return PFLREF_OK;
}

/* Runs left for the search of levels 0-2: the budget less what is kept
 * for the precision casts (s->cast_reserve). */
int dg_budget_left(dg_search *s)
{
    if (s->d->runs + s->cast_reserve < s->budget)
        return 1;
    s->d->budget_exhausted = 1;
    return 0;
}

/* ---- level 0: the spec and the presets ---------------------------------- */

/* Remove from the spec's algorithm object the explicit settings preset
 * `name` of alg sets, unless alg requires them. */
static void drop_preset_keys(json_t *alg_obj, const char *alg,
                             const char *name)
{
    const pflref_preset *pr = pflref_preset_find(alg, name);
    if (pr == NULL)
        return;
    json_t *hp = json_object_get(alg_obj, "hyperparameters");
    json_t *sw = json_object_get(alg_obj, "switches");
    for (const char *p = pr->settings; *p != '\0';) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        p += n;
        char *eq = strchr(key, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        const pflref_param *par = pflref_param_find_for(key, alg);
        if (par != NULL && pflref_name_in_list(par->required_by, alg))
            continue;
        if (json_is_object(hp))
            json_object_del(hp, key);
        if (json_is_object(sw))
            json_object_del(sw, key);
    }
}

/* The vector's spec under preset `name` (see the header), parsed. */
static pflref_status preset_spec(const dg_search *s, const char *name,
                                 pflref_spec **out, pflref_error *err)
{
    const char *alg = s->v->spec->algorithm->name;
    json_t *spec = json_deep_copy(json_object_get(s->v->json, "spec"));
    json_t *alg_obj = json_object_get(spec, "algorithm");
    char *text = NULL;
    if (json_is_object(alg_obj) &&
        json_object_set_new(alg_obj, "preset", json_string(name)) == 0) {
        drop_preset_keys(alg_obj, alg, s->v->spec->preset);
        drop_preset_keys(alg_obj, alg, name);
        text = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(spec);
    if (text == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory building preset %s", name);
    pflref_status st = pflref_spec_parse(text, strlen(text), s->base_dir, out,
                                         err);
    free(text);
    return st;
}

/* Label a match: kind, preset, source. */
pflref_variant_match dg_label(const char *kind, const char *preset,
                              const char *source)
{
    pflref_variant_match m = {.min_lre = 0.0};
    snprintf(m.kind, sizeof m.kind, "%s", kind);
    snprintf(m.preset, sizeof m.preset, "%s", preset);
    snprintf(m.source, sizeof m.source, "%s", source);
    return m;
}

/* 1 when base b's settings and split equal those of an earlier base. */
static int same_as_earlier(const base *bases, size_t b)
{
    for (size_t a = 0; a < b; a++)
        if (memcmp(&bases[a].spec->hyper, &bases[b].spec->hyper,
                   sizeof bases[a].spec->hyper) == 0 &&
            bases[a].spec->schedule == bases[b].spec->schedule)
            return 1;
    return 0;
}

/* One preset as a base of level 1: parsed, run, appended. */
static pflref_status add_preset(dg_search *s, base *bases, size_t *n_bases,
                                const char *name, const char *source,
                                pflref_error *err)
{
    base *b = &bases[*n_bases];
    *b = (base){.owned = 1, .source = source};
    snprintf(b->preset, sizeof b->preset, "%s", name);
    pflref_error perr;
    if (preset_spec(s, name, &b->spec, &perr) != PFLREF_OK) {
        s->d->refused++;   /* a preset the spec cannot take */
        return PFLREF_OK;
    }
    (*n_bases)++;
    pflref_variant_match m = dg_label("preset", name, b->source);
    return dg_run_variant(s, b->spec, &b->spec->hyper, NULL, &m,
                          (size_t)-1, &b->index, err);
}

/* Level 0: the spec, then each other preset of the algorithm. */
static pflref_status level0(dg_search *s, base *bases, size_t *n_bases,
                            pflref_error *err)
{
    const pflref_spec *spec = s->v->spec;
    const char *alg = spec->algorithm->name;
    const pflref_preset *own = pflref_preset_find(alg, spec->preset);
    bases[0] = (base){.spec = s->v->spec, .source = own ? own->source
                                                        : "the paper"};
    snprintf(bases[0].preset, sizeof bases[0].preset, "%s", spec->preset);
    pflref_variant_match m = dg_label("spec", spec->preset, bases[0].source);
    pflref_status st = dg_run_variant(s, spec, &spec->hyper, NULL, &m,
                                      (size_t)-1, &bases[0].index, err);
    *n_bases = 1;
    size_t count;
    const pflref_preset *all = pflref_presets(&count);
    for (size_t i = 0; i <= count && st == PFLREF_OK; i++) {
        /* i == count: "paper", which has no row */
        const char *name = i < count ? all[i].name : "paper";
        if ((i < count && strcmp(all[i].algorithm, alg) != 0) ||
            strcmp(name, spec->preset) == 0 || *n_bases == MAX_BASES ||
            !dg_budget_left(s))
            continue;
        st = add_preset(s, bases, n_bases, name,
                        i < count ? all[i].source : "the paper", err);
    }
    for (size_t b = 1; b < *n_bases; b++)
        bases[b].same_as = same_as_earlier(bases, b);
    return st;
}

/* ---- level 1: one change ------------------------------------------------ */

/* The variant of base b (its entry `from`) with changes c[0..n-1] on the
 * settings h0; kind "switch"/"probe" for one change, "pair" for two. */
static pflref_status run_changes(dg_search *s, const base *b, size_t from,
                                 const pflref_hyper *h0, const dg_change *c,
                                 size_t n, const char *note, size_t *at,
                                 pflref_error *err)
{
    *at = (size_t)-1;
    pflref_hyper h = *h0;
    for (size_t i = 0; i < n; i++)
        if (!dg_apply_change(&h, &c[i]))
            return PFLREF_OK;
    pflref_variant_match m = dg_label(n == 1 ? c[0].kind : "pair",
                                      b->preset, b->source);
    snprintf(m.change, sizeof m.change, "%s%s%s%s", c[0].text,
             n > 1 ? " and " : "", n > 1 ? c[1].text : "", note);
    snprintf(m.param, sizeof m.param, "%s%s%s", c[0].p->name,
             n > 1 ? " " : "", n > 1 ? c[1].p->name : "");
    snprintf(m.value, sizeof m.value, "%s%s%s", c[0].value, n > 1 ? " " : "",
             n > 1 ? c[1].value : "");
    const char *alg = s->v->spec->algorithm->name;
    for (size_t i = 0; i < n; i++) {
        const char *src = c[i].p->type == PFLREF_PARAM_ENUM
            ? pflref_param_value_source(alg, c[i].p->name, c[i].value) : NULL;
        const size_t len = strlen(m.value_source);
        if (src != NULL)
            snprintf(m.value_source + len, sizeof m.value_source - len,
                     "%s%s = %s: %s", len ? "; " : "", c[i].p->name,
                     c[i].value, src);
    }
    return dg_run_variant(s, b->spec, &h, NULL, &m, from, at, err);
}

/* The changes a link adds to change c (see pflref_param_links): c with
 * each of the linked parameter's values, from the settings h. */
static pflref_status linked(dg_search *s, const base *b, size_t from,
                            const pflref_hyper *h, const dg_change *c,
                            pflref_error *err)
{
    size_t nl;
    const pflref_param_link *l = pflref_param_links(&nl);
    const char *alg = s->v->spec->algorithm->name;
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; i < nl && st == PFLREF_OK; i++) {
        const pflref_param *q = pflref_param_find_for(l[i].needs, alg);
        if (strcmp(l[i].name, c->p->name) != 0 || c->e == 0 || q == NULL ||
            !pflref_name_in_list(q->algorithms, alg))
            continue;
        for (const char *v = l[i].values; *v != '\0' && st == PFLREF_OK;) {
            char val[32];
            const size_t n = strcspn(v, " ");
            snprintf(val, sizeof val, "%.*s", (int)n, v);
            v += n + (v[n] == ' ');
            dg_change two[2] = {*c};
            size_t at;
            if (dg_change_to(q, val, h, &two[1]) && dg_budget_left(s))
                st = run_changes(s, b, from, h, two, 2, " (linked)", &at,
                                 err);
        }
    }
    return st;
}

/* The probe "one local step fewer" from base b (dg_fewer_schedule); no
 * run when no list has a step. */
static pflref_status step_fewer(dg_search *s, const base *b,
                                pflref_error *err)
{
    pflref_schedule fewer;
    pflref_round_plan *rounds;
    pflref_batches *bs;
    const int changed = dg_fewer_schedule(b->spec->schedule, &fewer, &rounds,
                                          &bs);
    if (changed < 0)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    pflref_status st = PFLREF_OK;
    if (changed) {
        pflref_variant_match m = dg_label("probe", b->preset, b->source);
        snprintf(m.change, sizeof m.change, "%s", DG_STEP_FEWER);
        snprintf(m.param, sizeof m.param, "schedule");
        snprintf(m.value, sizeof m.value, "steps - 1");
        size_t at;
        st = dg_run_variant(s, b->spec, &b->spec->hyper, &fewer, &m,
                            b->index, &at, err);
    }
    free(bs);
    free(rounds);
    return st;
}

/* Every change from one base, and the links of each. */
static pflref_status expand(dg_search *s, const base *b, dg_change *changes,
                            pflref_error *err)
{
    const pflref_spec *spec = b->spec;
    size_t k = dg_list_changes(spec->algorithm->name, &spec->hyper, changes);
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; i < k && st == PFLREF_OK && dg_budget_left(s); i++) {
        size_t at;
        st = run_changes(s, b, b->index, &spec->hyper, &changes[i], 1, "",
                         &at, err);
        if (st == PFLREF_OK && changes[i].p->type == PFLREF_PARAM_ENUM)
            st = linked(s, b, b->index, &spec->hyper, &changes[i], err);
    }
    if (st == PFLREF_OK && dg_budget_left(s))
        st = step_fewer(s, b, err);
    return st;
}

/* ---- the search --------------------------------------------------------- */

/* Level 1 from every base not equal to an earlier one, the most agreeing
 * first; every base is expanded (a complete match ends the search after
 * the level, not before the other bases). */
static pflref_status level1(dg_search *s, base *bases, size_t n_bases,
                            dg_change *changes, pflref_error *err)
{
    int done[MAX_BASES] = {0};
    pflref_status st = PFLREF_OK;
    for (size_t round = 0; round < n_bases && st == PFLREF_OK; round++) {
        size_t pick = n_bases;
        for (size_t b = 0; b < n_bases; b++) {
            if (done[b] || bases[b].index == (size_t)-1 || bases[b].same_as)
                continue;
            size_t ag = s->all[bases[b].index].agreeing;
            if (pick == n_bases || ag > s->all[bases[pick].index].agreeing)
                pick = b;
        }
        if (pick == n_bases || !dg_budget_left(s))
            break;
        done[pick] = 1;
        st = expand(s, &bases[pick], changes, err);
    }
    return st;
}

/* Level 2: the BEAM_WIDTH best one-change variants (entries from..n_all),
 * each with every change of another parameter. */
static pflref_status level2(dg_search *s, const base *bases, size_t n_bases,
                            size_t from, dg_change *changes, pflref_error *err)
{
    size_t beam[BEAM_WIDTH], nb = 0;
    const size_t end = s->n_all;
    for (size_t i = from; i < end; i++) {
        const pflref_variant_match *m = &s->all[i];
        if (strcmp(m->kind, "switch") != 0 && strcmp(m->kind, "probe") != 0)
            continue;
        if (strcmp(m->param, "schedule") == 0 || s->from[i] >= s->n_all ||
            m->agreeing <= s->all[s->from[i]].agreeing)
            continue;   /* a first change must agree further than its base */
        size_t pos = nb;
        while (pos > 0 && s->all[beam[pos - 1]].agreeing < m->agreeing)
            pos--;
        if (pos == BEAM_WIDTH)
            continue;
        if (nb < BEAM_WIDTH)
            nb++;
        memmove(&beam[pos + 1], &beam[pos], (nb - 1 - pos) * sizeof *beam);
        beam[pos] = i;
    }
    pflref_status st = PFLREF_OK;
    for (size_t j = 0; j < nb && st == PFLREF_OK && dg_budget_left(s); j++) {
        const pflref_variant_match *first = &s->all[beam[j]];
        const base *b = NULL;
        for (size_t q = 0; q < n_bases && b == NULL; q++)
            if (strcmp(bases[q].preset, first->preset) == 0)
                b = &bases[q];
        const pflref_param *p1 = pflref_param_find_for(
            first->param, s->v->spec->algorithm->name);
        dg_change one[2];
        if (b == NULL || p1 == NULL ||
            !dg_change_to(p1, first->value, &b->spec->hyper, &one[0]))
            continue;
        const pflref_hyper h1 = s->hyper[beam[j]];
        size_t k = dg_list_changes(s->v->spec->algorithm->name, &h1, changes);
        for (size_t i = 0; i < k && st == PFLREF_OK && dg_budget_left(s);
             i++) {
            size_t at;
            if (changes[i].p == p1)
                continue;
            one[1] = changes[i];
            st = run_changes(s, b, beam[j], &b->spec->hyper, one, 2, "", &at,
                             err);
        }
    }
    return st;
}

/* s->recorded: which expected records the candidate wrote (each looked up
 * from where the last was found, so an ordered candidate costs one pass).
 * Returns how many. */
static size_t mark_recorded(dg_search *s)
{
    const pflref_trajectory *e = &s->v->expected, *c = &s->c->records;
    size_t n = 0, from = 0;
    for (size_t k = 0; k < e->count; k++) {
        s->recorded[k] = 0;
        for (size_t j = 0; j < c->count && !s->recorded[k]; j++) {
            const size_t r = (from + j) % c->count;
            if (pflref_record_same_key(&e->records[k], &c->records[r])) {
                s->recorded[k] = 1;
                from = r + 1;
            }
        }
        n += s->recorded[k];
    }
    return n;
}

static pflref_status diagnose(dg_search *s, pflref_error *err)
{
    if (mark_recorded(s) == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "candidate:",
                                "the candidate recorded none of the %zu "
                                "quantities the vector expects",
                                s->v->expected.count);
    dg_cast_formats(s);
    /* float32 (bfloat16) numbers written: 2 casts' runs kept from levels
     * 0-2, at most a quarter (ref/oracle/diagnose_cast.c) */
    if (s->cast_in[0] || s->cast_in[1])
        s->cast_reserve = 2 * DG_MCA_COST < s->budget / 4 ? 2 * DG_MCA_COST
                                                          : s->budget / 4;
    base bases[MAX_BASES];
    size_t n_bases = 0;
    dg_change *changes = malloc(DG_MAX_CHANGES * sizeof *changes);
    if (changes == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    pflref_status st = level0(s, bases, &n_bases, err);
    const size_t level1_from = s->n_all;
    if (st == PFLREF_OK && !s->found)
        st = level1(s, bases, n_bases, changes, err);
    if (st == PFLREF_OK && !s->found)
        st = level2(s, bases, n_bases, level1_from, changes, err);
    if (st == PFLREF_OK && !s->found)
        st = dg_precision_variant(s, err);
    /* three changes last: after every explanation of one or two (the
     * casts' included), in the runs the budget still has */
    s->cast_reserve = 0;
    if (st == PFLREF_OK && !s->found)
        st = dg_level3(s, bases, n_bases, level1_from, changes, err);
    free(changes);
    for (size_t b = 0; b < n_bases; b++)
        if (bases[b].owned)
            pflref_spec_free(bases[b].spec);
    if (st == PFLREF_OK)
        pflref_oracle_rank(s);
    return st;
}

pflref_status pflref_golden_diagnose(const char *expected, size_t expected_len,
                                     const char *base_dir,
                                     const char *candidate,
                                     size_t candidate_len,
                                     const pflref_diagnose_options *opt,
                                     pflref_diagnosis *d, pflref_error *err)
{
    return pflref_golden_diagnose_at(expected, expected_len, base_dir,
                                     candidate, candidate_len, NULL, opt, d,
                                     err);
}

/* The search's tables for budget entries; 0 when out of memory. */
static int search_alloc(dg_search *s)
{
    s->rep = malloc(sizeof *s->rep);
    s->all = calloc(s->budget, sizeof *s->all);
    s->fp = calloc(s->budget, sizeof *s->fp);
    s->hyper = calloc(s->budget, sizeof *s->hyper);
    s->from = calloc(s->budget, sizeof *s->from);
    s->tried = calloc(s->budget, sizeof *s->tried);
    s->recorded = malloc(s->v->expected.count + 1);
    s->spec_of = calloc(s->budget, sizeof *s->spec_of);
    int ok = s->spec_of != NULL;
    for (size_t f = 0; f < 2; f++) {
        s->cast_agreeing[f] = calloc(s->budget, sizeof *s->cast_agreeing[f]);
        s->cast_mismatches[f] = calloc(s->budget,
                                       sizeof *s->cast_mismatches[f]);
        ok = ok && s->cast_agreeing[f] && s->cast_mismatches[f];
    }
    return ok && s->rep && s->all && s->fp && s->hyper && s->from &&
           s->tried && s->recorded;
}

static void search_free(dg_search *s)
{
    free(s->rep);
    free(s->all);
    free(s->fp);
    free(s->hyper);
    free(s->from);
    free(s->tried);
    free(s->recorded);
    free(s->spec_of);
    for (size_t f = 0; f < 2; f++) {
        free(s->cast_agreeing[f]);
        free(s->cast_mismatches[f]);
    }
}

pflref_status pflref_golden_diagnose_at(const char *expected,
                                        size_t expected_len,
                                        const char *base_dir,
                                        const char *candidate,
                                        size_t candidate_len,
                                        const char *candidate_dir,
                                        const pflref_diagnose_options *opt,
                                        pflref_diagnosis *d,
                                        pflref_error *err)
{
    pflref_error_clear(err);
    if (expected == NULL || candidate == NULL || opt == NULL || d == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "diagnose",
                                "an argument is NULL");
    *d = (pflref_diagnosis){.runs = 0, .partial = opt->check.partial};
    pflref_vector v;
    pflref_candidate c;
    pflref_status st = pflref_vector_read(expected, expected_len, base_dir,
                                          &v, err);
    snprintf(d->id, sizeof d->id, "%s", v.id);
    if (st != PFLREF_OK) {
        name_side(err, "expected");
        pflref_vector_free(&v);
        return st;
    }
    snprintf(d->algorithm, sizeof d->algorithm, "%s", v.spec->algorithm->name);
    snprintf(d->spec_preset, sizeof d->spec_preset, "%s", v.spec->preset);
    st = pflref_candidate_read(candidate, candidate_len,
                               opt->check.same_id ? v.id : NULL,
                               candidate_dir, v.spec, &c, err);
    dg_search s = {.v = &v, .c = &c, .check = &opt->check, .opt = opt,
                   .d = d, .base_dir = base_dir,
                   .budget = opt->budget ? opt->budget
                                         : PFLREF_DIAGNOSE_BUDGET};
    if (st != PFLREF_OK)
        name_side(err, "candidate");
    else if (strcmp(c.outcome, "ok") != 0) {
        d->wrong_outcome = 1;
        pflref_diagnosis_describe(d);
    } else {
        st = search_alloc(&s) ? diagnose(&s, err)
                              : pflref_error_set(err, PFLREF_ENOMEM,
                                                 "diagnose", "out of memory");
    }
    search_free(&s);
    pflref_candidate_free(&c);
    pflref_vector_free(&v);
    return st;
}
