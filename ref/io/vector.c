/* ref/io/vector.c: reading a golden vector (format pflref-golden/1:
 * docs/formats.md, docs/schema/golden.schema.json, golden/README.md) into
 * a pflref_vector, and the public readers of pflref/io.h
 * (pflref_golden_is_vector, pflref_golden_describe, pflref_golden_spec).
 *
 * A vector is a spec with every random choice explicit, the content hash
 * of that spec, the expected final state and trajectory, a tolerance
 * {atol, rtol, basis} (and optionally one per quantity name), its
 * provenance (hand, closed_form, enumeration, independent, or self for
 * regression-only vectors) and the bug classes it targets (flags).
 * Reading order: format, the required members, metadata, tolerance, the
 * expectation's keys, the id's length, the hash (inputs edited without
 * regenerating the vector are refused), the spec, the expected records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/canonical.h"
#include "io/json.h"
#include "io/vector.h"

/* One {atol, rtol, basis} at `where` (more keys allowed when extra). */
static pflref_status read_one_tolerance(const json_t *v, const char *where,
                                        int extra, pflref_tolerance *tol,
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
static pflref_status read_tolerance(const json_t *v, pflref_tolerances *t,
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
        if (t->n == PFLREF_MAX_QUANTITY_TOLS)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "at most %d per-quantity tolerances",
                                    PFLREF_MAX_QUANTITY_TOLS);
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
        (st = pflref_json_array_member(root, "", "flags", 0, &flags, &nf,
                                       err)))
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

/* The stored "hash", when present, must be the content hash of the spec
 * as it stands: inputs edited without regenerating the vector are caught
 * here. */
static pflref_status check_hash(const json_t *root, const json_t *spec_v,
                                pflref_error *err)
{
    const json_t *hash_v = json_object_get(root, "hash");
    if (hash_v == NULL)
        return PFLREF_OK;
    const char *stored;
    char actual[PFLREF_HASH_MAX];
    pflref_status st = pflref_json_string(hash_v, "hash", &stored, err);
    if (st != PFLREF_OK)
        return st;
    if (!pflref_content_hash(spec_v, actual))
        return pflref_error_set(err, PFLREF_ENOMEM, "hash", "out of memory");
    if (strcmp(stored, actual) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "hash",
                                "the spec's content hash is %s, the "
                                "vector records %s: the inputs changed "
                                "without the vector being regenerated",
                                actual, stored);
    return PFLREF_OK;
}

/* The embedded spec, parsed from its compact text; error paths inside it
 * start "spec.". */
static pflref_status read_spec(const json_t *spec_v, const char *base_dir,
                               pflref_spec **spec, pflref_error *err)
{
    char *spec_text = json_dumps(spec_v, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (spec_text == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "spec", "out of memory");
    pflref_status st = pflref_spec_parse(spec_text, strlen(spec_text),
                                         base_dir, spec, err);
    free(spec_text);
    if (st != PFLREF_OK && err != NULL) {
        char path[PFLREF_WHERE_MAX];
        pflref_json_key_path(path, sizeof path, "spec", err->where);
        snprintf(err->where, sizeof err->where, "%s", path);
    }
    return st;
}

/* "expected": {trajectory, final}, every key once, at least one record. */
static pflref_status read_expected(const json_t *exp_v, pflref_vector *v,
                                   pflref_error *err)
{
    size_t n_traj;
    pflref_status st;
    if ((st = pflref_records_read(exp_v, "expected", &v->expected, &n_traj,
                                  err)) ||
        (st = pflref_records_unique(&v->expected, n_traj, "expected", err)))
        return st;
    if (v->expected.count == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "expected",
                                "the vector expects nothing");
    return PFLREF_OK;
}

/* format, the required members, metadata, tolerance and the expectation's
 * keys; *id, *spec_v and *exp_v are borrowed from root. */
static pflref_status read_envelope(const json_t *root, pflref_vector *v,
                                   const char **id, json_t **spec_v,
                                   json_t **exp_v, pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "hash", "title",
                                       "provenance", "flags", "spec",
                                       "tolerance", "expected", NULL};
    static const char *const ekeys[] = {"final", "trajectory", NULL};
    json_t *id_v, *tol_v;
    pflref_status st;
    if ((st = pflref_json_format(root, "", keys, PFLREF_GOLDEN_FORMAT, err)) ||
        (st = pflref_json_member(root, "", "id", 1, &id_v, err)) ||
        (st = pflref_json_string(id_v, "id", id, err)) ||
        (st = pflref_json_member(root, "", "spec", 1, spec_v, err)) ||
        (st = pflref_json_member(root, "", "tolerance", 1, &tol_v, err)) ||
        (st = pflref_json_member(root, "", "expected", 1, exp_v, err)) ||
        (st = read_metadata(root, err)) ||
        (st = read_tolerance(tol_v, &v->tol, err)))
        return st;
    return pflref_json_object(*exp_v, "expected", ekeys, err);
}

pflref_status pflref_vector_read(const char *text, size_t len,
                                 const char *base_dir, pflref_vector *v,
                                 pflref_error *err)
{
    memset(v, 0, sizeof *v);
    pflref_trajectory_init(&v->expected, PFLREF_RECORD_STEP);
    json_t *root, *spec_v, *exp_v;
    const char *id;
    pflref_status st = pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    v->json = root;
    if ((st = read_envelope(root, v, &id, &spec_v, &exp_v, err)))
        return st;
    /* Reports, the CLI and a candidate's same-id test hold the id whole
     * (the schema's maxLength): a longer one would be compared truncated. */
    if (strlen(id) >= sizeof v->id)
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the id has %zu bytes, at most %zu are "
                                "allowed", strlen(id), sizeof v->id - 1);
    snprintf(v->id, sizeof v->id, "%s", id);
    if ((st = check_hash(root, spec_v, err)) ||
        (st = read_spec(spec_v, base_dir, &v->spec, err)))
        return st;
    return read_expected(exp_v, v, err);
}

void pflref_vector_free(pflref_vector *v)
{
    pflref_trajectory_free(&v->expected);
    pflref_spec_free(v->spec);
    v->spec = NULL;
    json_decref(v->json);
    v->json = NULL;
}

/* ---- public readers ----------------------------------------------------- */

pflref_status pflref_golden_spec(const char *text, size_t len,
                                 const char *base_dir, pflref_spec **out,
                                 pflref_error *err)
{
    pflref_vector v;
    *out = NULL;
    pflref_status st = pflref_vector_read(text, len, base_dir, &v, err);
    if (st == PFLREF_OK) {
        size_t n = strlen(v.id) + 1;
        v.spec->id = malloc(n);
        if (v.spec->id == NULL)
            st = pflref_error_set(err, PFLREF_ENOMEM, "id", "out of memory");
        else
            memcpy(v.spec->id, v.id, n);
    }
    if (st == PFLREF_OK) {
        *out = v.spec;
        v.spec = NULL;
    }
    pflref_vector_free(&v);
    return st;
}

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
