/* ref/golden.c: verifying a golden vector against the reference.
 *
 * The vector's spec is run with a step-level trajectory; every expected
 * quantity (trajectory records, then the final state) is looked up by its
 * key (event, phase, round, client, step, name) and compared entry by entry
 * with |x − r| ≤ atol + rtol·|r|.  A quantity the reference did not emit is
 * a mismatch ("missing"), never a silent pass.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io_json.h"

int pflref_golden_is_vector(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *fmt = json_object_get(root, "format");
    int yes = json_is_string(fmt) &&
              strcmp(json_string_value(fmt), PFLREF_GOLDEN_FORMAT) == 0;
    json_decref(root);
    return yes;
}

typedef struct {
    double atol, rtol;
} tolerance;

static pflref_status read_tolerance(const json_t *v, tolerance *tol,
                                    pflref_error *err)
{
    static const char *const keys[] = {"atol", "rtol", "basis", NULL};
    json_t *a, *r, *basis;
    const char *b;
    pflref_status st;
    if ((st = pflref_json_object(v, "tolerance", keys, err)) ||
        (st = pflref_json_member(v, "tolerance", "atol", 1, &a, err)) ||
        (st = pflref_json_member(v, "tolerance", "rtol", 1, &r, err)) ||
        (st = pflref_json_member(v, "tolerance", "basis", 1, &basis, err)) ||
        (st = pflref_json_real(a, "tolerance.atol", &tol->atol, err)) ||
        (st = pflref_json_real(r, "tolerance.rtol", &tol->rtol, err)) ||
        (st = pflref_json_string(basis, "tolerance.basis", &b, err)))
        return st;
    if (tol->atol < 0.0 || tol->rtol < 0.0)
        return pflref_error_set(err, PFLREF_EINVAL, "tolerance",
                                "atol and rtol must be >= 0");
    if (b[0] == '\0')
        return pflref_error_set(err, PFLREF_EINVAL, "tolerance.basis",
                                "say why the tolerance is what it is");
    return PFLREF_OK;
}

/* Compare got[0..n−1] with the expected JSON array; update rep and record
 * the first divergence with the given key. */
static pflref_status compare(const json_t *expected, const char *where,
                             const double *got, size_t n, const tolerance *tol,
                             const char *event, const char *phase, long round,
                             long client, long step, const char *name,
                             pflref_golden_report *rep, pflref_error *err)
{
    size_t len;
    pflref_status st = pflref_json_array(expected, where, 1, &len, err);
    if (st != PFLREF_OK)
        return st;
    const int missing = got == NULL || len != n;
    int bad = missing;
    size_t bad_index = 0;
    double bad_r = 0.0, bad_x = NAN;
    for (size_t j = 0; j < len && !bad; j++) {
        double r;
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, where, j);
        if ((st = pflref_json_real(json_array_get(expected, j), path, &r,
                                   err)))
            return st;
        double x = got[j], e = fabs(x - r);
        rep->numbers++;
        if (e > rep->max_abs_err || isnan(e))
            rep->max_abs_err = isnan(e) ? INFINITY : e;
        if (r != 0.0 && e / fabs(r) > rep->max_rel_err)
            rep->max_rel_err = e / fabs(r);
        if (!(e <= tol->atol + tol->rtol * fabs(r))) {
            bad = 1;
            bad_index = j;
            bad_r = r;
            bad_x = x;
        }
    }
    rep->quantities++;
    if (!bad)
        return PFLREF_OK;
    rep->mismatches++;
    if (!rep->diverged) {
        rep->diverged = 1;
        snprintf(rep->event, sizeof rep->event, "%s", event);
        snprintf(rep->phase, sizeof rep->phase, "%s", phase);
        rep->round = round;
        rep->client = client;
        rep->step = step;
        snprintf(rep->name, sizeof rep->name, "%s", name);
        rep->missing = missing;
        rep->index = bad_index;
        rep->expected = bad_r;
        rep->got = bad_x;
    }
    return PFLREF_OK;
}

static long opt_long(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static pflref_status compare_trajectory(const json_t *list,
                                        const pflref_trajectory *tj,
                                        const tolerance *tol,
                                        pflref_golden_report *rep,
                                        pflref_error *err)
{
    static const char *const keys[] = {"event", "phase", "round", "client",
                                       "step", "name", "value", NULL};
    size_t n;
    pflref_status st =
        pflref_json_array(list, "expected.trajectory", 0, &n, err);
    for (size_t k = 0; st == PFLREF_OK && k < n; k++) {
        char where[PFLREF_WHERE_MAX], vpath[PFLREF_WHERE_MAX];
        pflref_json_index_path(where, sizeof where, "expected.trajectory", k);
        pflref_json_key_path(vpath, sizeof vpath, where, "value");
        const json_t *e = json_array_get(list, k);
        json_t *ev, *ph, *nm, *val;
        const char *event, *phase, *name;
        if ((st = pflref_json_object(e, where, keys, err)) ||
            (st = pflref_json_member(e, where, "event", 1, &ev, err)) ||
            (st = pflref_json_member(e, where, "phase", 1, &ph, err)) ||
            (st = pflref_json_member(e, where, "name", 1, &nm, err)) ||
            (st = pflref_json_member(e, where, "value", 1, &val, err)) ||
            (st = pflref_json_string(ev, where, &event, err)) ||
            (st = pflref_json_string(ph, where, &phase, err)) ||
            (st = pflref_json_string(nm, where, &name, err)))
            break;
        long round = opt_long(e, "round"), client = opt_long(e, "client"),
             step = opt_long(e, "step");
        const double *got = NULL;
        size_t len = 0;
        for (size_t r = 0; r < tj->count; r++) {
            const pflref_record *rec = &tj->records[r];
            if (rec->round == round && rec->client == client &&
                rec->step == step && strcmp(rec->name, name) == 0 &&
                strcmp(rec->phase, phase) == 0 &&
                strcmp(pflref_event_kind_name(rec->kind), event) == 0) {
                got = tj->values + rec->offset;
                len = rec->len;
                break;
            }
        }
        st = compare(val, vpath, got, len, tol, event, phase, round, client,
                     step, name, rep, err);
    }
    return st;
}

static pflref_status compare_final(const json_t *fin,
                                   const pflref_run_result *res,
                                   const tolerance *tol,
                                   pflref_golden_report *rep,
                                   pflref_error *err)
{
    static const char *const keys[] = {"w", "v", NULL};
    pflref_status st = pflref_json_object(fin, "expected.final", keys, err);
    const json_t *w = json_object_get(fin, "w");
    if (st == PFLREF_OK && w != NULL)
        st = compare(w, "expected.final.w", res->w, res->w ? res->P : 0, tol,
                     "final", "final", -1, -1, -1, "w", rep, err);
    const json_t *v = json_object_get(fin, "v");
    size_t n = 0;
    if (st == PFLREF_OK && v != NULL)
        st = pflref_json_array(v, "expected.final.v", 1, &n, err);
    for (size_t i = 0; st == PFLREF_OK && i < n; i++) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_index_path(path, sizeof path, "expected.final.v", i);
        const double *got = res->v != NULL && i < res->N ? res->v + i * res->P
                                                         : NULL;
        st = compare(json_array_get(v, i), path, got, got ? res->P : 0, tol,
                     "final", "final", -1, (long)i, -1, "v", rep, err);
    }
    return st;
}

pflref_status pflref_golden_verify(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "title", "provenance",
                                       "flags", "spec", "tolerance",
                                       "expected", NULL};
    static const char *const ekeys[] = {"final", "trajectory", NULL};
    memset(rep, 0, sizeof *rep);
    rep->round = rep->client = rep->step = -1;
    json_t *root;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    json_t *id, *spec_v, *tol_v, *exp_v, *fmt;
    const char *ids, *f;
    tolerance tol;
    pflref_spec *spec = NULL;
    pflref_run_result *res = NULL;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    char *spec_text = NULL;
    if ((st = pflref_json_object(root, "", keys, err)) ||
        (st = pflref_json_member(root, "", "format", 1, &fmt, err)) ||
        (st = pflref_json_string(fmt, "format", &f, err)))
        goto done;
    if (strcmp(f, PFLREF_GOLDEN_FORMAT) != 0) {
        st = pflref_error_set(err, PFLREF_EINVAL, "format",
                              "format is \"%s\", expected \"%s\"", f,
                              PFLREF_GOLDEN_FORMAT);
        goto done;
    }
    if ((st = pflref_json_member(root, "", "id", 1, &id, err)) ||
        (st = pflref_json_string(id, "id", &ids, err)) ||
        (st = pflref_json_member(root, "", "spec", 1, &spec_v, err)) ||
        (st = pflref_json_member(root, "", "tolerance", 1, &tol_v, err)) ||
        (st = pflref_json_member(root, "", "expected", 1, &exp_v, err)) ||
        (st = read_tolerance(tol_v, &tol, err)) ||
        (st = pflref_json_object(exp_v, "expected", ekeys, err)))
        goto done;
    snprintf(rep->id, sizeof rep->id, "%s", ids);

    spec_text = json_dumps(spec_v, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (spec_text == NULL) {
        st = pflref_error_set(err, PFLREF_ENOMEM, "spec", "out of memory");
        goto done;
    }
    if ((st = pflref_spec_parse(spec_text, strlen(spec_text), base_dir, &spec,
                                err))) {
        if (err != NULL) {   /* paths inside the embedded spec */
            char path[PFLREF_WHERE_MAX];
            pflref_json_key_path(path, sizeof path, "spec", err->where);
            snprintf(err->where, sizeof err->where, "%s", path);
        }
        goto done;
    }
    pflref_trace rec = {pflref_trajectory_emit, &tj};
    if ((st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                         spec->schedule, spec->w0, &rec, &res, err)))
        goto done;
    if (tj.failed) {
        st = pflref_error_set(err, PFLREF_ENOMEM, "expected.trajectory",
                              "out of memory recording the trajectory");
        goto done;
    }
    json_t *traj = json_object_get(exp_v, "trajectory");
    json_t *fin = json_object_get(exp_v, "final");
    if (traj != NULL &&
        (st = compare_trajectory(traj, &tj, &tol, rep, err)))
        goto done;
    if (fin != NULL && (st = compare_final(fin, res, &tol, rep, err)))
        goto done;
    if (rep->quantities == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, "expected",
                              "the vector expects nothing");
done:
    free(spec_text);
    pflref_trajectory_free(&tj);
    pflref_run_result_free(res);
    pflref_spec_free(spec);
    json_decref(root);
    return st;
}
