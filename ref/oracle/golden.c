/* ref/golden.c: golden vectors: verifying the reference against them, and
 * checking a candidate implementation's result against them.
 *
 * Both sides of a comparison are tables of records keyed by
 * (event, phase, round, client, step, name) with a vector value: the
 * expected side comes from the vector's "expected" {trajectory, final}, the
 * actual side from the reference's recorded events or the candidate's
 * result.  Every expected record is looked up on the actual side and
 * compared entry by entry with |x − r| ≤ atol + rtol·|r|; a record the
 * actual side lacks (or of another length) is a mismatch ("missing"),
 * never a silent pass.  Digits are reported too: max abs and rel error, log
 * relative error (LRE) and ULP distance.
 *
 * Re-synchronised checking: the reference re-runs every round from the
 * candidate's own state at that round's start (pflref_run_resync); the
 * candidate is then compared with that run, so each divergent step is
 * reported on its own instead of every later value differing too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io/canonical.h"
#include "io/json.h"

typedef struct {
    double atol, rtol;
} tolerance;

/* A vector's tolerances: a default and optional per-quantity ones, keyed by
 * the quantity's name (names borrowed from the vector's JSON). */
#define MAX_QUANTITY_TOLS 16
typedef struct {
    tolerance all;
    size_t n;
    const char *name[MAX_QUANTITY_TOLS];
    tolerance each[MAX_QUANTITY_TOLS];
} tolerances;

static tolerance tolerance_for(const tolerances *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            return t->each[i];
    return t->all;
}

/* Loosen every tolerance in t to at least floor. */
static void tolerances_floor(tolerances *t, tolerance floor)
{
    for (size_t i = 0; i <= t->n; i++) {
        tolerance *x = i < t->n ? &t->each[i] : &t->all;
        if (x->atol < floor.atol)
            x->atol = floor.atol;
        if (x->rtol < floor.rtol)
            x->rtol = floor.rtol;
    }
}

/* ---- tables ------------------------------------------------------------- */

/* 1 when two records have one key (event, round, client, step, name,
 * phase): they hold the same quantity. */
static int same_key(const pflref_record *x, const pflref_record *y)
{
    return x->kind == y->kind && x->round == y->round &&
           x->client == y->client && x->step == y->step &&
           strcmp(x->name, y->name) == 0 && strcmp(x->phase, y->phase) == 0;
}

/* Find the first record with the given key from position `from` on, or
 * NULL. */
static const pflref_record *find_from(const pflref_trajectory *tj,
                                      const pflref_record *key, size_t from)
{
    for (size_t r = from; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        if (same_key(rec, key))
            return rec;
    }
    return NULL;
}

/* Find the record with the given key, or NULL. */
static const pflref_record *find(const pflref_trajectory *tj,
                                 const pflref_record *key)
{
    return find_from(tj, key, 0);
}

static long opt_long(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* Append one record parsed from JSON; its strings stay owned by the JSON. */
static pflref_status add_record(pflref_trajectory *tj, pflref_event_kind kind,
                                const char *phase, long round, long client,
                                long step, const char *name, const json_t *val,
                                const char *where, pflref_error *err)
{
    size_t n;
    pflref_status st = pflref_json_array(val, where, 1, &n, err);
    if (st != PFLREF_OK)
        return st;
    double *x = malloc(n * sizeof *x);
    if (x == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    st = pflref_json_vector(val, where, n, x, err);
    if (st == PFLREF_OK) {
        pflref_trace tr = {pflref_trajectory_emit, tj};
        pflref_trace_emit(&tr, kind, phase, round, client, step, name, x, n,
                          NULL);
        if (tj->failed)
            st = pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    }
    free(x);
    return st;
}

/* Order of records by key (event, round, client, step, name, phase), ties
 * by position, for finding two records with one key. */
static int record_key_cmp(const void *a, const void *b)
{
    const pflref_record *x = *(const pflref_record *const *)a;
    const pflref_record *y = *(const pflref_record *const *)b;
    int c;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->client != y->client)
        return x->client < y->client ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if ((c = strcmp(x->name, y->name)) != 0 ||
        (c = strcmp(x->phase, y->phase)) != 0)
        return c;
    return x < y ? -1 : x > y;
}

/* Every key of a vector's expectation is unique: a second record with the
 * key of an earlier one would expect two values of one quantity, which no
 * run can meet (find() sees only the first).  Records 0..n_traj−1 are
 * `prefix`.trajectory[k], the rest come from "final". */
static pflref_status check_unique_keys(const pflref_trajectory *tj,
                                       size_t n_traj, const char *prefix,
                                       pflref_error *err)
{
    if (tj->count < 2)
        return PFLREF_OK;
    const pflref_record **by_key = malloc(tj->count * sizeof *by_key);
    if (by_key == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, prefix, "out of memory");
    for (size_t r = 0; r < tj->count; r++)
        by_key[r] = &tj->records[r];
    qsort(by_key, tj->count, sizeof *by_key, record_key_cmp);
    pflref_status st = PFLREF_OK;
    for (size_t r = 1; r < tj->count; r++) {
        const pflref_record *x = by_key[r - 1], *y = by_key[r];
        if (!same_key(x, y))
            continue;
        /* the later of the two records is the one named */
        char where[2][PFLREF_WHERE_MAX];
        for (int k = 0; k < 2; k++) {
            size_t r_k = (size_t)((k ? y : x) - tj->records);
            if (r_k < n_traj) {
                char list[PFLREF_WHERE_MAX];
                pflref_json_key_path(list, sizeof list, prefix, "trajectory");
                pflref_json_index_path(where[k], sizeof where[k], list, r_k);
            } else {
                pflref_json_key_path(where[k], sizeof where[k], prefix,
                                     "final");
            }
        }
        st = pflref_error_set(err, PFLREF_EINVAL, where[1],
                              "a second record of %s \"%s\" (phase \"%s\", "
                              "round %ld, client %ld, step %ld), the key of "
                              "%s: a vector expects one value per quantity",
                              pflref_event_kind_name(y->kind), y->name,
                              y->phase, y->round, y->client, y->step,
                              where[0]);
        break;
    }
    free(by_key);
    return st;
}

/* A table from an object with optional "trajectory" (records) and "final"
 * ({"w": [...], "v": [[...], ...]}); `prefix` prefixes the JSON paths. */
static pflref_status table_from_json(const json_t *obj, const char *prefix,
                                     pflref_trajectory *tj, pflref_error *err)
{
    static const char *const rkeys[] = {"event", "phase", "round", "client",
                                        "step", "name", "value", NULL};
    static const char *const fkeys[] = {"w", "v", "alpha", NULL};
    char where[PFLREF_WHERE_MAX];
    pflref_status st = PFLREF_OK;
    const json_t *list = json_object_get(obj, "trajectory");
    size_t n = 0;
    if (list != NULL) {
        pflref_json_key_path(where, sizeof where, prefix, "trajectory");
        st = pflref_json_array(list, where, 0, &n, err);
    }
    for (size_t k = 0; st == PFLREF_OK && k < n; k++) {
        char rp[PFLREF_WHERE_MAX], vp[PFLREF_WHERE_MAX];
        pflref_json_index_path(rp, sizeof rp, where, k);
        pflref_json_key_path(vp, sizeof vp, rp, "value");
        const json_t *e = json_array_get(list, k);
        json_t *ev, *ph, *nm, *val;
        const char *event, *phase, *name;
        pflref_event_kind kind;
        if ((st = pflref_json_object(e, rp, rkeys, err)) ||
            (st = pflref_json_member(e, rp, "event", 1, &ev, err)) ||
            (st = pflref_json_member(e, rp, "phase", 1, &ph, err)) ||
            (st = pflref_json_member(e, rp, "name", 1, &nm, err)) ||
            (st = pflref_json_member(e, rp, "value", 1, &val, err)) ||
            (st = pflref_json_string(ev, rp, &event, err)) ||
            (st = pflref_json_string(ph, rp, &phase, err)) ||
            (st = pflref_json_string(nm, rp, &name, err)))
            break;
        if (!pflref_event_kind_parse(event, &kind)) {
            st = pflref_error_set(err, PFLREF_EINVAL, rp,
                                  "unknown event \"%s\"", event);
            break;
        }
        st = add_record(tj, kind, phase, opt_long(e, "round"),
                        opt_long(e, "client"), opt_long(e, "step"), name, val,
                        vp, err);
    }
    const json_t *fin = json_object_get(obj, "final");
    if (st == PFLREF_OK && fin != NULL) {
        pflref_json_key_path(where, sizeof where, prefix, "final");
        st = pflref_json_object(fin, where, fkeys, err);
        const json_t *w = json_object_get(fin, "w");
        const json_t *v = json_object_get(fin, "v");
        char p[PFLREF_WHERE_MAX];
        pflref_json_key_path(p, sizeof p, where, "w");
        if (st == PFLREF_OK && w != NULL)
            st = add_record(tj, PFLREF_EV_FINAL, "final", -1, -1, -1, "w", w,
                            p, err);
        size_t nv = 0;
        pflref_json_key_path(p, sizeof p, where, "v");
        if (st == PFLREF_OK && v != NULL)
            st = pflref_json_array(v, p, 1, &nv, err);
        for (size_t i = 0; st == PFLREF_OK && i < nv; i++) {
            char pi[PFLREF_WHERE_MAX];
            pflref_json_index_path(pi, sizeof pi, p, i);
            st = add_record(tj, PFLREF_EV_FINAL, "final", -1, (long)i, -1, "v",
                            json_array_get(v, i), pi, err);
        }
        /* alpha: one number per client, each the record final/client i/
         * "alpha" of one value */
        const json_t *al = json_object_get(fin, "alpha");
        size_t na = 0;
        pflref_json_key_path(p, sizeof p, where, "alpha");
        if (st == PFLREF_OK && al != NULL)
            st = pflref_json_array(al, p, 1, &na, err);
        for (size_t i = 0; st == PFLREF_OK && i < na; i++) {
            char pi[PFLREF_WHERE_MAX];
            pflref_json_index_path(pi, sizeof pi, p, i);
            double a;
            st = pflref_json_real(json_array_get(al, i), pi, &a, err);
            if (st == PFLREF_OK) {
                pflref_trace tr = {pflref_trajectory_emit, tj};
                pflref_trace_emit(&tr, PFLREF_EV_FINAL, "final", -1, (long)i,
                                  -1, "alpha", &a, 1, NULL);
                if (tj->failed)
                    st = pflref_error_set(err, PFLREF_ENOMEM, pi,
                                          "out of memory");
            }
        }
    }
    return st;
}

/* ---- comparison --------------------------------------------------------- */

/* Distance in units in the last place between two doubles (the number of
 * representable doubles between them); UINT64_MAX when either is NaN. */
static uint64_t ulp_distance(double a, double b)
{
    if (isnan(a) || isnan(b))
        return UINT64_MAX;
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    /* Map sign-magnitude bit patterns to a monotone integer line. */
    if (ia < 0)
        ia = INT64_MIN - ia;
    if (ib < 0)
        ib = INT64_MIN - ib;
    return ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

/* Correct significant digits of x against r: −log10 of the relative error
 * (absolute error where r = 0), in [0, PFLREF_LRE_CAP]. */
static double lre(double x, double r)
{
    double e = r == 0.0 ? fabs(x) : fabs(x - r) / fabs(r);
    if (isnan(e))
        return 0.0;
    if (e == 0.0)
        return PFLREF_LRE_CAP;
    double d = -log10(e);
    return d < 0.0 ? 0.0 : (d > PFLREF_LRE_CAP ? PFLREF_LRE_CAP : d);
}

static void note_divergence(pflref_golden_report *rep, const pflref_record *key,
                            size_t index, double expected, double got,
                            int missing)
{
    pflref_divergence d;
    snprintf(d.event, sizeof d.event, "%s", pflref_event_kind_name(key->kind));
    snprintf(d.phase, sizeof d.phase, "%s", key->phase);
    d.round = key->round;
    d.client = key->client;
    d.step = key->step;
    snprintf(d.name, sizeof d.name, "%s", key->name);
    d.index = index;
    d.expected = expected;
    d.got = got;
    d.missing = missing;
    rep->mismatches++;
    if (!rep->diverged) {
        rep->diverged = 1;
        rep->first = d;
    }
    if (rep->n_listed < PFLREF_MAX_LISTED)
        rep->listed[rep->n_listed++] = d;
}

/* The statistics slot of quantity `name` (a fresh one on first sight), or
 * NULL when every slot is taken. */
static pflref_quantity_stats *stats_for(pflref_golden_report *rep,
                                        const char *name)
{
    for (size_t i = 0; i < rep->n_names; i++)
        if (strcmp(rep->by_name[i].name, name) == 0)
            return &rep->by_name[i];
    if (rep->n_names == PFLREF_MAX_QUANTITY_NAMES)
        return NULL;
    pflref_quantity_stats *q = &rep->by_name[rep->n_names++];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    q->min_lre = PFLREF_LRE_CAP;
    return q;
}

/* Fold one compared number into the totals and the quantity's slot. */
static void note_number(pflref_golden_report *rep, pflref_quantity_stats *q,
                        double x, double r)
{
    double d = fabs(x - r);
    double rel = r != 0.0 ? d / fabs(r) : 0.0;
    double digits = lre(x, r);
    uint64_t u = ulp_distance(x, r);
    if (isnan(d))
        d = rel = INFINITY;
    rep->numbers++;
    rep->max_abs_err = d > rep->max_abs_err ? d : rep->max_abs_err;
    rep->max_rel_err = rel > rep->max_rel_err ? rel : rep->max_rel_err;
    rep->min_lre = digits < rep->min_lre ? digits : rep->min_lre;
    rep->max_ulp = u > rep->max_ulp ? u : rep->max_ulp;
    if (q == NULL)
        return;
    q->numbers++;
    q->max_abs_err = d > q->max_abs_err ? d : q->max_abs_err;
    q->max_rel_err = rel > q->max_rel_err ? rel : q->max_rel_err;
    q->min_lre = digits < q->min_lre ? digits : q->min_lre;
    q->max_ulp = u > q->max_ulp ? u : q->max_ulp;
}

/* For every record of `keys`: expected values from `ref` (the record with
 * the same key; `keys` itself when ref is NULL), actual values from `act`. */
static void compare_tables(const pflref_trajectory *keys,
                           const pflref_trajectory *ref,
                           const pflref_trajectory *act,
                           const tolerances *tols, int partial,
                           pflref_golden_report *rep)
{
    for (size_t k = 0; k < keys->count; k++) {
        const pflref_record *key = &keys->records[k];
        const pflref_record *e = ref == NULL ? key : find(ref, key);
        const double *ev = ref == NULL ? keys->values : ref->values;
        const pflref_record *a = find(act, key);
        if (a == NULL && partial) {
            rep->skipped++;
            continue;
        }
        pflref_quantity_stats *q = stats_for(rep, key->name);
        rep->quantities++;
        if (q != NULL)
            q->quantities++;
        if (e == NULL || a == NULL || a->len != e->len) {
            rep->missing++;
            if (q != NULL)
                q->mismatches++;
            note_divergence(rep, key, 0, e ? ev[e->offset] : NAN, NAN, 1);
            continue;
        }
        for (size_t j = 0; j < e->len; j++)
            note_number(rep, q, act->values[a->offset + j], ev[e->offset + j]);
        /* The statistics are the first record's; every further record the
         * candidate wrote under this key must meet the expectation too, so
         * a wrong second value cannot pass unseen (one mismatch at most
         * per quantity). */
        const tolerance tol = tolerance_for(tols, key->name);
        for (; a != NULL;
             a = find_from(act, key, (size_t)(a - act->records) + 1)) {
            if (a->len != e->len) {
                rep->missing++;
                if (q != NULL)
                    q->mismatches++;
                note_divergence(rep, key, 0, ev[e->offset], NAN, 1);
                break;
            }
            size_t j = 0;
            while (j < e->len &&
                   fabs(act->values[a->offset + j] - ev[e->offset + j]) <=
                       tol.atol + tol.rtol * fabs(ev[e->offset + j]))
                j++;
            if (j < e->len) {
                if (q != NULL)
                    q->mismatches++;
                note_divergence(rep, key, j, ev[e->offset + j],
                                act->values[a->offset + j], 0);
                break;
            }
        }
    }
}

/* ---- reading a vector ------------------------------------------------- */

typedef struct {
    json_t *root;
    pflref_spec *spec;
    tolerances tol;
    pflref_trajectory expected;   /* strings borrowed from root */
} vector;

static void vector_free(vector *v)
{
    pflref_trajectory_free(&v->expected);
    pflref_spec_free(v->spec);
    json_decref(v->root);
}

/* One {atol, rtol, basis} at `where` (more keys allowed when extra). */
static pflref_status read_one_tolerance(const json_t *v, const char *where,
                                        int extra, tolerance *tol,
                                        pflref_error *err)
{
    static const char *const keys[] = {"atol", "rtol", "basis", NULL};
    static const char *const keys_extra[] = {"atol", "rtol", "basis",
                                             "per_quantity", NULL};
    char ap[PFLREF_WHERE_MAX], rp[PFLREF_WHERE_MAX], bp[PFLREF_WHERE_MAX];
    pflref_json_key_path(ap, sizeof ap, where, "atol");
    pflref_json_key_path(rp, sizeof rp, where, "rtol");
    pflref_json_key_path(bp, sizeof bp, where, "basis");
    json_t *a, *r, *basis;
    const char *b;
    pflref_status st;
    if ((st = pflref_json_object(v, where, extra ? keys_extra : keys, err)) ||
        (st = pflref_json_member(v, where, "atol", 1, &a, err)) ||
        (st = pflref_json_member(v, where, "rtol", 1, &r, err)) ||
        (st = pflref_json_member(v, where, "basis", 1, &basis, err)) ||
        (st = pflref_json_real(a, ap, &tol->atol, err)) ||
        (st = pflref_json_real(r, rp, &tol->rtol, err)) ||
        (st = pflref_json_string(basis, bp, &b, err)))
        return st;
    if (tol->atol < 0.0 || tol->rtol < 0.0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "atol and rtol must be >= 0");
    if (b[0] == '\0')
        return pflref_error_set(err, PFLREF_EINVAL, bp,
                                "say why the tolerance is what it is");
    return PFLREF_OK;
}

/* "tolerance": {atol, rtol, basis} for every quantity, and optionally
 * "per_quantity": {"<name>": {atol, rtol, basis}, ...} for some. */
static pflref_status read_tolerance(const json_t *v, tolerances *t,
                                    pflref_error *err)
{
    memset(t, 0, sizeof *t);
    pflref_status st = read_one_tolerance(v, "tolerance", 1, &t->all, err);
    const json_t *per = json_object_get(v, "per_quantity");
    if (st != PFLREF_OK || per == NULL)
        return st;
    if (!json_is_object(per))
        return pflref_error_set(err, PFLREF_EINVAL, "tolerance.per_quantity",
                                "expected an object of tolerances by "
                                "quantity name");
    const char *name;
    json_t *q;
    json_object_foreach((json_t *)per, name, q) {
        char where[PFLREF_WHERE_MAX];
        pflref_json_key_path(where, sizeof where, "tolerance.per_quantity",
                             name);
        if (t->n == MAX_QUANTITY_TOLS)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "at most %d per-quantity tolerances",
                                    MAX_QUANTITY_TOLS);
        if ((st = read_one_tolerance(q, where, 0, &t->each[t->n], err)))
            return st;
        t->name[t->n++] = name;
    }
    return PFLREF_OK;
}

/* Provenance kinds (DESIGN.md, "Golden vectors" 7). */
static const char *const PROVENANCE[] = {"hand", "closed_form", "enumeration",
                                         "independent", "self", NULL};

/* title, provenance {kind, ...}, flags [strings]; a "self" vector must
 * carry the flag regression-only. */
static pflref_status read_metadata(const json_t *root, pflref_error *err)
{
    json_t *title, *prov, *kind_v, *flags;
    const char *kind, *t;
    size_t nf;
    pflref_status st;
    if ((st = pflref_json_member(root, "", "title", 1, &title, err)) ||
        (st = pflref_json_string(title, "title", &t, err)) ||
        (st = pflref_json_member(root, "", "provenance", 1, &prov, err)) ||
        (st = pflref_json_member(prov, "provenance", "kind", 1, &kind_v,
                                 err)) ||
        (st = pflref_json_string(kind_v, "provenance.kind", &kind, err)) ||
        (st = pflref_json_member(root, "", "flags", 1, &flags, err)) ||
        (st = pflref_json_array(flags, "flags", 0, &nf, err)))
        return st;
    int known = 0;
    for (size_t i = 0; PROVENANCE[i] != NULL; i++)
        known |= strcmp(PROVENANCE[i], kind) == 0;
    if (!known)
        return pflref_error_set(err, PFLREF_EINVAL, "provenance.kind",
                                "unknown provenance \"%s\" (known: hand, "
                                "closed_form, enumeration, independent, self)",
                                kind);
    int regression_only = 0;
    for (size_t i = 0; i < nf; i++) {
        char path[PFLREF_WHERE_MAX];
        const char *f;
        pflref_json_index_path(path, sizeof path, "flags", i);
        if ((st = pflref_json_string(json_array_get(flags, i), path, &f, err)))
            return st;
        regression_only |= strcmp(f, "regression-only") == 0;
    }
    if (strcmp(kind, "self") == 0 && !regression_only)
        return pflref_error_set(err, PFLREF_EINVAL, "flags",
                                "a vector whose provenance is \"self\" is "
                                "regression-only and must carry that flag");
    return PFLREF_OK;
}

static pflref_status read_vector(const char *text, size_t len,
                                 const char *base_dir, vector *v,
                                 pflref_golden_report *rep, pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "hash", "title",
                                       "provenance", "flags", "spec",
                                       "tolerance", "expected", NULL};
    static const char *const ekeys[] = {"final", "trajectory", NULL};
    memset(v, 0, sizeof *v);
    pflref_trajectory_init(&v->expected, PFLREF_RECORD_STEP);
    memset(rep, 0, sizeof *rep);
    rep->min_lre = PFLREF_LRE_CAP;
    pflref_status st = pflref_json_parse(text, len, "", &v->root, err);
    if (st != PFLREF_OK)
        return st;
    json_t *fmt, *id, *spec_v, *tol_v, *exp_v, *hash_v;
    const char *f, *ids;
    if ((st = pflref_json_object(v->root, "", keys, err)) ||
        (st = pflref_json_member(v->root, "", "format", 1, &fmt, err)) ||
        (st = pflref_json_string(fmt, "format", &f, err)))
        return st;
    if (strcmp(f, PFLREF_GOLDEN_FORMAT) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "format",
                                "format is \"%s\", expected \"%s\"", f,
                                PFLREF_GOLDEN_FORMAT);
    if ((st = pflref_json_member(v->root, "", "id", 1, &id, err)) ||
        (st = pflref_json_string(id, "id", &ids, err)) ||
        (st = pflref_json_member(v->root, "", "spec", 1, &spec_v, err)) ||
        (st = pflref_json_member(v->root, "", "tolerance", 1, &tol_v, err)) ||
        (st = pflref_json_member(v->root, "", "expected", 1, &exp_v, err)) ||
        (st = read_metadata(v->root, err)) ||
        (st = read_tolerance(tol_v, &v->tol, err)) ||
        (st = pflref_json_object(exp_v, "expected", ekeys, err)))
        return st;
    /* The report, the CLI and a candidate's same-id test hold the id
     * whole (the schema's maxLength): a longer one would be compared
     * truncated. */
    if (strlen(ids) >= sizeof rep->id)
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the id has %zu bytes, at most %zu are "
                                "allowed", strlen(ids), sizeof rep->id - 1);
    snprintf(rep->id, sizeof rep->id, "%s", ids);
    /* The stored hash must be the hash of the spec as it stands: inputs
     * edited without regenerating the vector are caught here. */
    hash_v = json_object_get(v->root, "hash");
    if (hash_v != NULL) {
        const char *stored;
        char actual[PFLREF_HASH_MAX];
        if ((st = pflref_json_string(hash_v, "hash", &stored, err)))
            return st;
        if (!pflref_content_hash(spec_v, actual))
            return pflref_error_set(err, PFLREF_ENOMEM, "hash",
                                    "out of memory");
        if (strcmp(stored, actual) != 0)
            return pflref_error_set(err, PFLREF_EINVAL, "hash",
                                    "the spec's content hash is %s, the "
                                    "vector records %s: the inputs changed "
                                    "without the vector being regenerated",
                                    actual, stored);
    }
    char *spec_text = json_dumps(spec_v, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (spec_text == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "spec", "out of memory");
    st = pflref_spec_parse(spec_text, strlen(spec_text), base_dir, &v->spec,
                           err);
    free(spec_text);
    if (st != PFLREF_OK) {
        if (err != NULL) {   /* paths inside the embedded spec */
            char path[PFLREF_WHERE_MAX];
            pflref_json_key_path(path, sizeof path, "spec", err->where);
            snprintf(err->where, sizeof err->where, "%s", path);
        }
        return st;
    }
    st = table_from_json(exp_v, "expected", &v->expected, err);
    if (st == PFLREF_OK)
        st = check_unique_keys(
            &v->expected,
            json_array_size(json_object_get(exp_v, "trajectory")), "expected",
            err);
    if (st == PFLREF_OK && v->expected.count == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "expected",
                              "the vector expects nothing");
    return st;
}

pflref_status pflref_golden_spec(const char *text, size_t len,
                                 const char *base_dir, pflref_spec **out,
                                 pflref_error *err)
{
    vector v;
    pflref_golden_report rep;
    *out = NULL;
    pflref_status st = read_vector(text, len, base_dir, &v, &rep, err);
    if (st == PFLREF_OK) {
        size_t n = strlen(rep.id) + 1;
        v.spec->id = malloc(n);
        if (v.spec->id == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, "id", "out of memory");
        else
            memcpy(v.spec->id, rep.id, n);
    }
    if (st == PFLREF_OK) {
        *out = v.spec;
        v.spec = NULL;
    }
    vector_free(&v);
    return st;
}

/* Run the vector's spec through the reference, recording every event. */
static pflref_status run_reference(const vector *v, pflref_trajectory *tj,
                                   pflref_error *err)
{
    pflref_trace rec = {pflref_trajectory_emit, tj};
    pflref_run_result *res = NULL;
    pflref_status st = pflref_run(v->spec->problem, v->spec->algorithm,
                                  &v->spec->hyper, v->spec->schedule,
                                  v->spec->w0, &rec, &res, err);
    pflref_run_result_free(res);
    if (st == PFLREF_OK && tj->failed)
        st = pflref_error_set(err, PFLREF_ENOMEM, "expected",
                              "out of memory recording the trajectory");
    return st;
}

/* ---- public ------------------------------------------------------------- */

int pflref_golden_is_vector(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *fmt = json_object_get(root, "format");
    int yes = json_is_string(fmt) &&
              strcmp(json_string_value(fmt), PFLREF_GOLDEN_FORMAT) == 0;
    json_decref(root);
    return yes;
}

pflref_status pflref_golden_describe(const char *text, size_t len, char *id,
                                     size_t id_size, char *flags,
                                     size_t flags_size, pflref_error *err)
{
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    const json_t *idv = json_object_get(root, "id");
    if (!json_is_string(idv)) {
        json_decref(root);
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the vector has no string id");
    }
    if (id != NULL)
        snprintf(id, id_size, "%s", json_string_value(idv));
    if (flags != NULL) {
        flags[0] = '\0';
        const json_t *fl = json_object_get(root, "flags");
        for (size_t i = 0; i < json_array_size(fl); i++) {
            const char *f = json_string_value(json_array_get(fl, i));
            if (f == NULL)
                continue;
            if (flags[0] != '\0')
                strncat(flags, " ", flags_size - strlen(flags) - 1);
            strncat(flags, f, flags_size - strlen(flags) - 1);
        }
    }
    json_decref(root);
    return PFLREF_OK;
}

pflref_status pflref_golden_verify(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err)
{
    vector v;
    pflref_trajectory ref;
    pflref_trajectory_init(&ref, PFLREF_RECORD_STEP);
    pflref_status st = read_vector(text, len, base_dir, &v, rep, err);
    if (st == PFLREF_OK)
        st = run_reference(&v, &ref, err);
    if (st == PFLREF_OK)
        compare_tables(&v.expected, NULL, &ref, &v.tol, 0, rep);
    pflref_trajectory_free(&ref);
    vector_free(&v);
    return st;
}

/* The candidate's state after round t, for re-synchronised checking. */
static int load_from_candidate(void *ctx, const char *what, long round,
                               long client, double *dst, size_t P)
{
    const pflref_trajectory *cand = ctx;
    const pflref_record *best = NULL;
    for (size_t r = 0; r < cand->count; r++) {
        const pflref_record *rec = &cand->records[r];
        if (strcmp(rec->name, what) != 0 || rec->client != client ||
            rec->round > round || rec->round < 0 || rec->len != P ||
            strcmp(rec->phase, "train") != 0)
            continue;
        /* the global model: the server's record of that round; a personal
         * model: the client's last client_end record up to that round */
        if (client < 0 ? rec->kind == PFLREF_EV_SERVER && rec->round == round
                       : rec->kind == PFLREF_EV_CLIENT_END &&
                             (best == NULL || rec->round >= best->round))
            best = rec;
    }
    if (best == NULL)
        return 0;
    memcpy(dst, cand->values + best->offset, P * sizeof *dst);
    return 1;
}

/* Parse a candidate result into a table (paths relative to its root). */
static pflref_status read_candidate(const char *text, size_t len,
                                    const pflref_check_options *opt,
                                    json_t **root, pflref_trajectory *cand,
                                    pflref_golden_report *rep,
                                    pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "final", "trajectory",
                                       "outcome", "meta", "name", "algorithm",
                                       "model", "problem", "init", "w0",
                                       "schedule_config", "schedule",
                                       "metrics", "build", NULL};
    pflref_status st = pflref_json_parse(text, len, "", root, err);
    if (st != PFLREF_OK)
        return st;
    const json_t *fmt = json_object_get(*root, "format");
    if ((st = pflref_json_object(*root, "", keys, err)))
        return st;
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), PFLREF_RESULT_FORMAT) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "format",
                                "a candidate result has \"format\": \"%s\"",
                                PFLREF_RESULT_FORMAT);
    const char *cid = json_string_value(json_object_get(*root, "id"));
    if (opt->same_id && cid != NULL && strcmp(cid, rep->id) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the candidate is for vector \"%s\", not "
                                "\"%s\"", cid, rep->id);
    if ((st = table_from_json(*root, "", cand, err)))
        return st;
    /* A candidate may declare its outcome: {"class": "ok" | "diverged" |
     * "invalid", ...}; every vector so far expects "ok". */
    const json_t *outcome = json_object_get(*root, "outcome");
    if (outcome != NULL) {
        /* The keys and classes of result.schema.json's "outcome". */
        static const char *const okeys[] = {"class", "message", "round",
                                            "client", "step", NULL};
        static const char *const classes[] = {"ok", "diverged", "invalid",
                                              NULL};
        json_t *cls_v;
        int ci;
        if ((st = pflref_json_object(outcome, "outcome", okeys, err)) ||
            (st = pflref_json_member(outcome, "outcome", "class", 1, &cls_v,
                                     err)) ||
            (st = pflref_json_opt_enum(outcome, "outcome", "class", classes,
                                       0, &ci, err)))
            return st;
        const char *cls = classes[ci];
        if (strcmp(cls, "ok") != 0) {
            rep->wrong_outcome = 1;
            snprintf(rep->outcome, sizeof rep->outcome, "%s", cls);
        }
    }
    return PFLREF_OK;
}

pflref_status pflref_golden_check(const char *expected, size_t expected_len,
                                  const char *base_dir, const char *candidate,
                                  size_t candidate_len,
                                  const pflref_check_options *opt,
                                  pflref_golden_report *rep,
                                  pflref_error *err)
{
    vector v;
    pflref_status st = read_vector(expected, expected_len, base_dir, &v, rep,
                                   err);
    if (st != PFLREF_OK) {
        if (err != NULL) {
            char path[PFLREF_WHERE_MAX];
            snprintf(path, sizeof path, "expected:%s", err->where);
            snprintf(err->where, sizeof err->where, "%s", path);
        }
        vector_free(&v);
        return st;
    }
    /* The candidate is held to the vector's tolerance or the precision's
     * default, whichever is looser (docs/validate.md). */
    const int resync = opt->resync;
    const tolerance floor_tol = opt->precision == PFLREF_PRECISION_FP32
                                    ? (tolerance){1e-5, 1e-4}
                                    : (tolerance){1e-13, 1e-11};
    tolerances tol = v.tol;
    tolerances_floor(&tol, floor_tol);

    json_t *croot = NULL;
    pflref_trajectory cand, ref;
    pflref_trajectory_init(&cand, PFLREF_RECORD_STEP);
    pflref_trajectory_init(&ref, PFLREF_RECORD_STEP);
    st = read_candidate(candidate, candidate_len, opt, &croot, &cand, rep,
                        err);
    if (st != PFLREF_OK && err != NULL) {
        char path[PFLREF_WHERE_MAX];
        snprintf(path, sizeof path, "candidate:%s", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    if (st == PFLREF_OK && rep->wrong_outcome) {
        pflref_trajectory_free(&cand);
        json_decref(croot);
        vector_free(&v);
        return PFLREF_OK;
    }
    if (st == PFLREF_OK && resync) {
        pflref_trace rec = {pflref_trajectory_emit, &ref};
        st = pflref_run_resync(v.spec->problem, v.spec->algorithm,
                               &v.spec->hyper, v.spec->schedule, v.spec->w0,
                               load_from_candidate, &cand, &rec, err);
    }
    if (st == PFLREF_OK)
        compare_tables(&v.expected, resync ? &ref : NULL, &cand, &tol,
                       opt->partial, rep);
    if (st == PFLREF_OK && rep->quantities == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "candidate",
                              "the candidate recorded none of the %zu "
                              "quantities the vector expects", rep->skipped);
    pflref_trajectory_free(&ref);
    pflref_trajectory_free(&cand);
    json_decref(croot);
    vector_free(&v);
    return st;
}
