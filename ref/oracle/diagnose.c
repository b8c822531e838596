/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose.c: which known variant a failing candidate computes
 * (pflref/golden.h, pflref_golden_diagnose; docs/cli.md, "diagnose";
 * docs/variants.md).
 *
 * Method.  A variant is the vector's spec with its settings changed: the
 * algorithm's presets (ref/engine/params.c's table, read through
 * pflref_presets, so a preset added there is searched without a change
 * here), and one change at a time from a base: every other value of every
 * switch the registry lists for the algorithm, and probes of its
 * hyperparameters (× 2, × ½, 0 and the registry's default for a real; ± 1
 * for a count).  Each variant is run with the vector's schedule
 * (pflref_spec_run on the modified spec) and the candidate is compared
 * with the run as the expectation, on the vector's keys and tolerances
 * (pflref_oracle_compare_run, the comparison of pflref_golden_check).
 *
 *   level 0  the spec as it is, then every preset ("paper" too): the
 *            preset's spec is the vector's with algorithm.preset set and
 *            the explicit settings either preset sets removed (those the
 *            algorithm requires stay), parsed as the spec reader parses it
 *   level 1  one change (a switch, a hyperparameter probe, one local
 *            step fewer) from the spec, and from each preset that agrees
 *            further than the spec (pruning: a preset that diverges no
 *            later than the spec is not expanded), the most agreeing first
 *
 * The search stops after the level (level 1: the base) where a variant
 * matches completely, and at the budget of runs.  A variant the reference
 * refuses (a switch combination the algorithm's check rejects, a bound)
 * or that diverges is counted and left out.
 *
 * Ranking: a complete match first (fewer changes first, then the search
 * order: spec, presets, changes); otherwise more expected records agreeing
 * before the first divergence (the expected trajectory's order), fewer
 * mismatches, more correct digits, fewer changes.
 *
 * When nothing matches in fp64, a precision cast is tried last: the
 * candidate against the spec within float32's, then bfloat16's, rounding
 * spread (Monte Carlo arithmetic, ref/oracle/precision.c).
 *
 * The schedule has one probe: one local step fewer (the last batch of
 * every participation dropped).  Not searched (docs/cli.md): two changes
 * at once, a local step more (which batch it would take is a guess),
 * other data.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose.h"

/* Presets an algorithm may have, "paper" included (a bound of the search's
 * tables, not of the registry: more are ignored with a note in runs). */
#define MAX_BASES 16
/* Changes listed from one base. */
#define MAX_CHANGES 256

/* One change of one parameter. */
typedef struct {
    const pflref_param *p;
    int e;                  /* ENUM: the value's index */
    double x;               /* REAL: the value         */
    size_t n;               /* INT: the value          */
    const char *kind;       /* "switch" or "probe"     */
    char text[128];
    char value[32];
} change;

/* A starting point of level 1: the spec or a preset's spec. */
typedef struct {
    pflref_spec *spec;      /* owned when owned, else the vector's */
    int owned;
    char preset[32];
    const char *source;
    size_t index;           /* its match in the search's list */
} base;

typedef struct {
    const pflref_vector *v;
    const pflref_candidate *c;
    const pflref_check_options *check;
    const char *base_dir;
    size_t budget;
    pflref_diagnosis *d;
    pflref_golden_report *rep;       /* scratch of one comparison */
    pflref_variant_match *all;       /* budget entries             */
    size_t n_all;
    int found;                       /* a complete match so far    */
} search;

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

/* Records of v's expectation before the key of the first divergence. */
static size_t agreeing(const pflref_vector *v, const pflref_golden_report *r)
{
    const pflref_trajectory *e = &v->expected;
    if (!r->diverged)
        return e->count;
    const pflref_divergence *f = &r->first;
    for (size_t k = 0; k < e->count; k++) {
        const pflref_record *x = &e->records[k];
        if (x->round == f->round && x->client == f->client &&
            x->step == f->step && strcmp(x->name, f->name) == 0 &&
            strcmp(x->phase, f->phase) == 0 &&
            strcmp(pflref_event_kind_name(x->kind), f->event) == 0)
            return k;
    }
    return 0;
}

/* Run spec under hyper and compare the candidate with it; the match is
 * appended to s->all (its labels set by the caller first, in *m).
 * Returns PFLREF_OK (also for a refused variant, then not appended) or
 * PFLREF_ENOMEM. */
static pflref_status run_variant(search *s, const pflref_spec *spec,
                                 const pflref_hyper *hyper,
                                 pflref_schedule *schedule,
                                 const pflref_variant_match *m,
                                 pflref_error *err)
{
    const int strict = s->n_all == 0 && s->d->runs == 0;  /* the spec */
    pflref_spec copy = *spec;  /* shallow: only the settings differ */
    copy.hyper = *hyper;
    if (schedule != NULL)
        copy.schedule = schedule;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    pflref_trace rec = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = NULL;
    pflref_error run_err;
    pflref_status st = pflref_spec_run(&copy, &rec, &res, &run_err);
    pflref_run_result_free(res);
    s->d->runs++;
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
    pflref_oracle_compare_run(s->v, &tj, &s->c->records, s->check, s->rep);
    pflref_trajectory_free(&tj);
    pflref_variant_match *out = &s->all[s->n_all++];
    *out = *m;
    out->complete = s->rep->mismatches == 0 && s->rep->quantities > 0;
    out->agreeing = agreeing(s->v, s->rep);
    out->expected_records = s->rep->expected_records;
    out->mismatches = s->rep->mismatches;
    out->min_lre = s->rep->min_lre;
    out->diverged = s->rep->diverged;
    out->first = s->rep->first;
    s->found |= out->complete;
    return PFLREF_OK;
}

static int budget_left(search *s)
{
    if (s->d->runs < s->budget)
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
static pflref_status preset_spec(const search *s, const char *name,
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
static pflref_variant_match label(const char *kind, const char *preset,
                                  const char *source)
{
    pflref_variant_match m = {.min_lre = 0.0};
    snprintf(m.kind, sizeof m.kind, "%s", kind);
    snprintf(m.preset, sizeof m.preset, "%s", preset);
    snprintf(m.source, sizeof m.source, "%s", source);
    return m;
}

/* Level 0: the spec, then each other preset of the algorithm. */
static pflref_status level0(search *s, base *bases, size_t *n_bases,
                            pflref_error *err)
{
    const pflref_spec *spec = s->v->spec;
    const char *alg = spec->algorithm->name;
    const pflref_preset *own = pflref_preset_find(alg, spec->preset);
    bases[0] = (base){.spec = s->v->spec, .source = own ? own->source
                                                        : "the paper"};
    snprintf(bases[0].preset, sizeof bases[0].preset, "%s", spec->preset);
    pflref_variant_match m = label("spec", spec->preset, bases[0].source);
    pflref_status st = run_variant(s, spec, &spec->hyper, NULL, &m, err);
    *n_bases = 1;
    size_t count;
    const pflref_preset *all = pflref_presets(&count);
    for (size_t i = 0; i <= count && st == PFLREF_OK; i++) {
        /* i == count: "paper", which has no row */
        const char *name = i < count ? all[i].name : "paper";
        if ((i < count && strcmp(all[i].algorithm, alg) != 0) ||
            strcmp(name, spec->preset) == 0 || *n_bases == MAX_BASES ||
            !budget_left(s))
            continue;
        base *b = &bases[*n_bases];
        *b = (base){.owned = 1, .source = i < count ? all[i].source
                                                    : "the paper"};
        snprintf(b->preset, sizeof b->preset, "%s", name);
        pflref_error perr;
        if (preset_spec(s, name, &b->spec, &perr) != PFLREF_OK) {
            s->d->refused++;   /* a preset the spec cannot take */
            continue;
        }
        (*n_bases)++;
        b->index = s->n_all;
        m = label("preset", name, b->source);
        size_t before = s->n_all;
        st = run_variant(s, b->spec, &b->spec->hyper, NULL, &m,
                         err);
        if (s->n_all == before)
            b->index = (size_t)-1;   /* refused: not a base */
    }
    return st;
}

/* ---- level 1: one change ------------------------------------------------ */

/* A probe of a real: "eta × 2 = 0.43 (instead of 0.215)"; `mid` before
 * " =", `after` after the value. */
static void add_real(change *out, size_t *k, const pflref_param *p,
                     double x, double now, const char *mid, const char *after)
{
    if (*k == MAX_CHANGES || x == now || !isfinite(x))
        return;
    change *c = &out[(*k)++];
    *c = (change){.p = p, .x = x, .kind = "probe"};
    char a[PFLREF_DTOA_MAX], b[PFLREF_DTOA_MAX];
    pflref_dtoa(x, a);   /* the shortest texts that read back (pflref/dtoa.h) */
    pflref_dtoa(now, b);
    snprintf(c->value, sizeof c->value, "%s", a);
    snprintf(c->text, sizeof c->text, "%s%s = %s%s (instead of %s)", p->name,
             mid, a, after, b);
}

/* Every change of one parameter p from the settings h. */
static void changes_of(const pflref_param *p, const pflref_hyper *h,
                       change *out, size_t *k)
{
    if (p->type == PFLREF_PARAM_ENUM) {
        const char *now = pflref_hyper_get_enum(h, p);
        for (int j = 0; p->values[j] != NULL && *k < MAX_CHANGES; j++) {
            if (strcmp(p->values[j], now) == 0)
                continue;
            change *c = &out[(*k)++];
            *c = (change){.p = p, .e = j, .kind = "switch"};
            snprintf(c->value, sizeof c->value, "%s", p->values[j]);
            snprintf(c->text, sizeof c->text, "%s = %s (instead of %s)",
                     p->name, p->values[j], now);
        }
    } else if (p->type == PFLREF_PARAM_REAL) {
        double x = pflref_hyper_get_real(h, p);
        if (!isfinite(x))
            return;    /* not set: nothing to probe */
        add_real(out, k, p, 2.0 * x, x, " × 2", "");
        add_real(out, k, p, 0.5 * x, x, " × ½", "");
        add_real(out, k, p, 0.0, x, "", "");
        if (p->def != 0.0)
            add_real(out, k, p, p->def, x, "", ", the default");
    } else {
        size_t n = pflref_hyper_get_int(h, p);
        for (int d = -1; d <= 1 && n != PFLREF_INT_UNSET; d += 2) {
            if ((d < 0 && (n == 0 || (double)(n - 1) < p->lo)) ||
                *k == MAX_CHANGES)
                continue;
            change *c = &out[(*k)++];
            *c = (change){.p = p, .n = d < 0 ? n - 1 : n + 1,
                          .kind = "probe"};
            snprintf(c->value, sizeof c->value, "%zu", c->n);
            snprintf(c->text, sizeof c->text, "%s = %zu (instead of %zu)",
                     p->name, c->n, n);
        }
    }
}

/* Every change the registry allows for alg from the settings h. */
static size_t list_changes(const char *alg, const pflref_hyper *h,
                           change *out)
{
    size_t count, k = 0;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count; i++)
        if (pflref_name_in_list(ps[i].algorithms, alg) &&
            pflref_param_find_for(ps[i].name, alg) == &ps[i])
            changes_of(&ps[i], h, out, &k);
    return k;
}

/* h with change c applied; 0 when the registry refuses the value. */
static int apply_change(pflref_hyper *h, const change *c)
{
    pflref_error e;
    if (c->p->type == PFLREF_PARAM_ENUM)
        return pflref_hyper_set_enum(h, c->p, c->p->values[c->e], "", &e) ==
               PFLREF_OK;
    if (c->p->type == PFLREF_PARAM_REAL)
        return pflref_hyper_set_real(h, c->p, c->x, "", &e) == PFLREF_OK;
    return pflref_hyper_set_int(h, c->p, c->n, "", &e) == PFLREF_OK;
}

/* The probe "one local step fewer": the base's schedule with the last
 * batch of every participation dropped (a participation of one step
 * keeps none; the train rounds only, the post phase as it is), as a loop
 * that stops one batch early runs.  Shallow: the index lists are the
 * spec's.  No run when no participation has a step. */
static pflref_status step_fewer(search *s, const base *b, pflref_error *err)
{
    const pflref_schedule *sch = b->spec->schedule;
    size_t total = 0;
    for (size_t t = 0; t < sch->T; t++)
        total += sch->rounds[t].m;
    pflref_schedule fewer = *sch;
    fewer.rounds = malloc((sch->T + 1) * sizeof *fewer.rounds);
    pflref_batches *bs = malloc((total + 1) * sizeof *bs);
    if (fewer.rounds == NULL || bs == NULL) {
        free(fewer.rounds);
        free(bs);
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    }
    int changed = 0;
    for (size_t t = 0, k = 0; t < sch->T; t++) {
        fewer.rounds[t] = sch->rounds[t];
        fewer.rounds[t].batches = &bs[k];
        for (size_t j = 0; j < sch->rounds[t].m; j++, k++) {
            bs[k] = sch->rounds[t].batches[j];
            if (bs[k].nsteps >= 1) {
                bs[k].nsteps--;   /* step_off[nsteps] stays in range */
                changed = 1;
            }
        }
    }
    pflref_status st = PFLREF_OK;
    if (changed) {
        pflref_variant_match m = label("probe", b->preset, b->source);
        snprintf(m.change, sizeof m.change,
                 "one local step fewer (the last batch of every "
                 "participation dropped)");
        snprintf(m.param, sizeof m.param, "schedule");
        snprintf(m.value, sizeof m.value, "steps - 1");
        st = run_variant(s, b->spec, &b->spec->hyper, &fewer, &m, err);
    }
    free(bs);
    free(fewer.rounds);
    return st;
}

/* Every change from one base. */
static pflref_status expand(search *s, const base *b, change *changes,
                            pflref_error *err)
{
    const pflref_spec *spec = b->spec;
    size_t k = list_changes(spec->algorithm->name, &spec->hyper, changes);
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; i < k && st == PFLREF_OK && budget_left(s); i++) {
        pflref_hyper h = spec->hyper;
        if (!apply_change(&h, &changes[i]))
            continue;
        pflref_variant_match m =
            label(changes[i].kind, b->preset, b->source);
        snprintf(m.change, sizeof m.change, "%s", changes[i].text);
        snprintf(m.param, sizeof m.param, "%s", changes[i].p->name);
        snprintf(m.value, sizeof m.value, "%s", changes[i].value);
        st = run_variant(s, spec, &h, NULL, &m, err);
    }
    if (st == PFLREF_OK && budget_left(s))
        st = step_fewer(s, b, err);
    return st;
}

/* ---- ranking ------------------------------------------------------------ */

static int changes_in(const pflref_variant_match *m)
{
    return m->change[0] != '\0';
}

/* a before b: the order of the header's "Ranking" (stable on the index). */
static int better(const pflref_variant_match *a, size_t ia,
                  const pflref_variant_match *b, size_t ib)
{
    if (a->complete != b->complete)
        return a->complete;
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

/* Keep the best PFLREF_DIAGNOSE_TOP matches, best first. */
static void rank(search *s)
{
    pflref_diagnosis *d = s->d;
    size_t idx[PFLREF_DIAGNOSE_TOP];
    d->n_best = 0;
    for (size_t i = 0; i < s->n_all; i++) {
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
    for (size_t j = 0; j < d->n_best; j++)
        d->best[j] = s->all[idx[j]];
    d->matched = d->n_best > 0 && d->best[0].complete;
}

/* ---- the search --------------------------------------------------------- */

/* Level 1 from the spec and every preset agreeing further, the most
 * agreeing first; stops after a base that gave a complete match. */
static pflref_status level1(search *s, base *bases, size_t n_bases,
                            pflref_error *err)
{
    change *changes = malloc(MAX_CHANGES * sizeof *changes);
    if (changes == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                "out of memory");
    const size_t spec_agrees = s->all[0].agreeing;
    int done[MAX_BASES] = {0};
    pflref_status st = PFLREF_OK;
    for (size_t round = 0; round < n_bases && st == PFLREF_OK; round++) {
        size_t pick = n_bases;
        for (size_t b = 0; b < n_bases; b++) {
            if (done[b] || (b > 0 && (bases[b].index == (size_t)-1 ||
                                      s->all[bases[b].index].agreeing <=
                                          spec_agrees)))
                continue;
            size_t ag = s->all[bases[b].index].agreeing;
            if (pick == n_bases || ag > s->all[bases[pick].index].agreeing)
                pick = b;
        }
        if (pick == n_bases || s->found || !budget_left(s))
            break;
        done[pick] = 1;
        st = expand(s, &bases[pick], changes, err);
    }
    free(changes);
    return st;
}

/* 1 when the candidate recorded at least one quantity the vector expects
 * (otherwise there is nothing to diagnose, as check refuses it). */
static int records_any(const pflref_vector *v, const pflref_candidate *c)
{
    for (size_t k = 0; k < v->expected.count; k++)
        for (size_t r = 0; r < c->records.count; r++)
            if (pflref_record_same_key(&v->expected.records[k],
                                       &c->records.records[r]))
                return 1;
    return 0;
}

/* ---- a precision cast ---------------------------------------------------- */

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
static pflref_status precision_variant(search *s, pflref_error *err)
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
            s->rep->quantities == 0 || s->rep->mca_chaotic > 0)
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

static pflref_status diagnose(search *s, pflref_error *err)
{
    if (!records_any(s->v, s->c))
        return pflref_error_set(err, PFLREF_EINVAL, "candidate:",
                                "the candidate recorded none of the %zu "
                                "quantities the vector expects",
                                s->v->expected.count);
    base bases[MAX_BASES];
    size_t n_bases = 0;
    pflref_status st = level0(s, bases, &n_bases, err);
    if (st == PFLREF_OK && !s->found)
        st = level1(s, bases, n_bases, err);
    if (st == PFLREF_OK && !s->found)
        st = precision_variant(s, err);
    for (size_t b = 0; b < n_bases; b++)
        if (bases[b].owned)
            pflref_spec_free(bases[b].spec);
    if (st == PFLREF_OK) {
        rank(s);
        pflref_diagnosis_describe(s->d);
    }
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
    *d = (pflref_diagnosis){.runs = 0};
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
    search s = {.v = &v, .c = &c, .check = &opt->check, .d = d,
                .base_dir = base_dir,
                .budget = opt->budget ? opt->budget : PFLREF_DIAGNOSE_BUDGET};
    if (st != PFLREF_OK)
        name_side(err, "candidate");
    else if (strcmp(c.outcome, "ok") != 0) {
        d->wrong_outcome = 1;
        pflref_diagnosis_describe(d);
    } else {
        s.rep = malloc(sizeof *s.rep);
        s.all = calloc(s.budget, sizeof *s.all);
        st = s.rep && s.all ? diagnose(&s, err)
                            : pflref_error_set(err, PFLREF_ENOMEM, "diagnose",
                                               "out of memory");
    }
    free(s.rep);
    free(s.all);
    pflref_candidate_free(&c);
    pflref_vector_free(&v);
    return st;
}
