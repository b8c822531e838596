/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/vector.c: reading a golden vector (format pflref-golden/1:
 * docs/formats.md, docs/schema/golden.schema.json, golden/README.md) into
 * a pflref_vector, and the public readers of pflref/io.h
 * (pflref_golden_is_vector, pflref_golden_describe, pflref_golden_spec).
 *
 * A vector is a spec with every random choice explicit, the content hashes
 * of the whole vector and of its parts, the expected final state and trajectory, a tolerance
 * {atol, rtol, basis} (and optionally one per quantity name), its
 * provenance (hand, closed_form, enumeration, independent, self for
 * regression-only vectors, or reference for the reference's own output on
 * a user's problem, ref/io/freeze.c) and the bug classes it targets (flags).
 * Reading order: format, the required members, the content hash (the
 * whole vector and each part: an edit made without the generator is
 * refused, naming what changed), metadata (flags registered:
 * ref/io/vector_flags.c), tolerance (the fp64 ceiling), the expectation's
 * keys, the id's length, the spec, the expected records.
 *
 * Arrays in files (pflref freeze --arrays files; docs/formats.md, "Golden
 * vectors in files"): a vector large enough to need it may give its
 * spec's init arrays and its expected final state as .npy references and
 * its expected trajectory values as ranges of a top-level
 * "trajectory_values", read by the candidate's reader (ref/io/arrays.c,
 * ref/io/records.c: a '<f8' file mapped and copied once, no JSON numbers),
 * relative to the vector's folder (base_dir).  Such a vector must carry
 * the "array_files" manifest, every file it names listed there before it
 * is opened, each file's size and SHA-256 held to it; its hash has a
 * digest of the manifest (and of trajectory_values), so the content hash
 * covers every byte of the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/canonical.h"
#include "io/json.h"
#include "io/vector.h"

/* One {atol, rtol, basis} at `where` (more keys allowed when extra).
 * Negative bounds and rtol ≥ 1 (which accepts any value of the right
 * sign) are refused; the path of the first bound above
 * PFLREF_TOLERANCE_CEILING goes into wide (PFLREF_WHERE_MAX bytes, left as
 * it is when it already names one), for read_tolerance to hold against
 * "above_ceiling". */
static pflref_status read_one_tolerance(const json_t *v, const char *where,
                                        int extra, pflref_tolerance *tol,
                                        char *wide, pflref_error *err)
{
    static const char *const keys[] = {"atol", "rtol", "basis", NULL};
    static const char *const keys_extra[] = {"atol", "rtol", "basis",
                                             "per_quantity", "above_ceiling",
                                             NULL};
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
    if (tol->rtol >= 1.0)
        return pflref_error_set(err, PFLREF_EINVAL, rp,
                                "rtol = %g accepts any value of the right "
                                "sign: a tolerance must be below 1",
                                tol->rtol);
    if (b[0] == '\0')
        return pflref_error_set(err, PFLREF_EINVAL, bp,
                                "say why the tolerance is what it is");
    if (wide[0] == '\0' && (tol->atol > PFLREF_TOLERANCE_CEILING ||
                            tol->rtol > PFLREF_TOLERANCE_CEILING))
        snprintf(wide, PFLREF_WHERE_MAX, "%s",
                 tol->atol > PFLREF_TOLERANCE_CEILING ? ap : rp);
    return PFLREF_OK;
}

/* "tolerance": {atol, rtol, basis} for every quantity, optionally
 * "per_quantity": {"<name>": {atol, rtol, basis}, ...} for some, and
 * "above_ceiling": the argument for a bound above PFLREF_TOLERANCE_CEILING
 * (golden/lint.py judges it; here it must be a non-empty string, and a
 * wider bound without it is refused, naming the bound). */
static pflref_status read_tolerance(const json_t *v, pflref_tolerances *t,
                                    pflref_error *err)
{
    memset(t, 0, sizeof *t);
    char wide[PFLREF_WHERE_MAX] = "";
    pflref_status st = read_one_tolerance(v, "tolerance", 1, &t->all, wide,
                                          err);
    const json_t *per = json_object_get(v, "per_quantity");
    if (st != PFLREF_OK)
        return st;
    if (per != NULL && !json_is_object(per))
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
        if ((st = read_one_tolerance(q, where, 0, &t->each[t->n], wide,
                                     err)))
            return st;
        t->name[t->n++] = name;
    }
    const json_t *arg = json_object_get(v, "above_ceiling");
    const char *why = json_string_value(arg);
    if (arg != NULL && (why == NULL || why[0] == '\0'))
        return pflref_error_set(err, PFLREF_EINVAL,
                                "tolerance.above_ceiling",
                                "expected the argument for a tolerance above "
                                "%g, as a non-empty string",
                                PFLREF_TOLERANCE_CEILING);
    if (wide[0] != '\0' && arg == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, wide,
                                "above the fp64 ceiling %g, and "
                                "tolerance.above_ceiling does not argue for "
                                "it (golden/README.md, \"Tolerance\")",
                                PFLREF_TOLERANCE_CEILING);
    return PFLREF_OK;
}

/* Provenance kinds (DESIGN.md, "Golden vectors" 7). */
static const char *const PROVENANCE[] = {"hand", "closed_form", "enumeration",
                                         "independent", "self", "reference",
                                         NULL};

/* Each flag a string registered in the vector's registry (the nearest
 * flags.json at or above base_dir, else the built-in one), none twice;
 * *regression_only when one of them is regression-only. */
static pflref_status read_flags(const json_t *flags, size_t nf,
                                const char *base_dir, int *regression_only,
                                pflref_error *err)
{
    pflref_flag_registry reg;
    pflref_status st = pflref_flag_registry_find(base_dir, &reg, err);
    for (size_t i = 0; st == PFLREF_OK && i < nf; i++) {
        char path[PFLREF_WHERE_MAX];
        const char *f;
        pflref_json_index_path(path, sizeof path, "flags", i);
        if ((st = pflref_json_string(json_array_get(flags, i), path, &f,
                                     err)))
            break;
        for (size_t k = 0; k < i && st == PFLREF_OK; k++)
            if (strcmp(json_string_value(json_array_get(flags, k)), f) == 0)
                st = pflref_error_set(err, PFLREF_EINVAL, path,
                                      "flag \"%s\" is listed twice", f);
        if (st == PFLREF_OK && !pflref_flag_registered(&reg, f))
            st = pflref_error_set(err, PFLREF_EINVAL, path,
                                  "flag \"%s\" is not registered in %s", f,
                                  pflref_flag_registry_name(&reg));
        *regression_only |= strcmp(f, "regression-only") == 0;
    }
    pflref_flag_registry_free(&reg);
    return st;
}

/* title, provenance {kind, ...}, flags [registered strings]; a "self"
 * vector must carry the flag regression-only, a "reference" one (written
 * by pflref freeze) the flag reference-output. */
static pflref_status read_metadata(const json_t *root, const char *base_dir,
                                   pflref_error *err)
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
                                "closed_form, enumeration, independent, "
                                "self, reference)",
                                kind);
    int regression_only = 0;
    if ((st = read_flags(flags, nf, base_dir, &regression_only, err)))
        return st;
    if (strcmp(kind, "self") == 0 && !regression_only)
        return pflref_error_set(err, PFLREF_EINVAL, "flags",
                                "a vector whose provenance is \"self\" is "
                                "regression-only and must carry that flag");
    int frozen = 0;
    for (size_t i = 0; i < nf; i++)
        frozen |= strcmp(json_string_value(json_array_get(flags, i)),
                         "reference-output") == 0;
    if (strcmp(kind, "reference") == 0 && !frozen)
        return pflref_error_set(err, PFLREF_EINVAL, "flags",
                                "a vector whose provenance is \"reference\" "
                                "holds pflref's own output and must carry "
                                "the flag reference-output");
    return PFLREF_OK;
}

/* The members of "hash" (the order of golden/pflref_golden.py's
 * vector_hashes): "vector" covers every member of the vector but "hash"
 * (format, id and title too), the others one part each; the parts from
 * FIRST_OPTIONAL on only when the vector has them (the files form). */
static const char *const HASH_KEYS[] = {"vector", "spec", "expected",
                                        "tolerance", "flags", "provenance",
                                        "trajectory_values", "array_files",
                                        NULL};
enum { FIRST_OPTIONAL = 6 };

/* out := the digest hash.<key> covers: the content hash of root without its
 * "hash" member ("vector"), or of the member `key`.  0 when memory is
 * short. */
static int part_digest(const json_t *root, const char *key,
                       char out[PFLREF_HASH_MAX])
{
    if (strcmp(key, "vector") != 0)
        return pflref_content_hash(json_object_get(root, key), out);
    json_t *body = json_copy((json_t *)root);
    if (body == NULL)
        return 0;
    json_object_del(body, "hash");
    int ok = pflref_content_hash(body, out);
    json_decref(body);
    return ok;
}

/* The refusal of a vector whose parts changed[0..n−1] (indices into
 * HASH_KEYS; 0, "vector" alone, when only format, id or title did). */
static pflref_status hash_refusal(const size_t *changed, size_t n,
                                  const char *recorded,
                                  const char *now, pflref_error *err)
{
    static const char *const HOW = "; a vector is changed only by its "
                                   "generator, with an entry in "
                                   "golden/CHANGES.md";
    if (n == 1 && changed[0] == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "hash.vector",
                                "the vector changed since it was written, "
                                "outside the parts hashed one by one (its "
                                "format, id or title)%s", HOW);
    char also[128] = "";
    for (size_t k = 1; k < n; k++)
        snprintf(also + strlen(also), sizeof also - strlen(also), "%s%s",
                 k == 1 ? " (and so did its " : ", ", HASH_KEYS[changed[k]]);
    if (n > 1)
        snprintf(also + strlen(also), sizeof also - strlen(also), ")");
    const char *part = HASH_KEYS[changed[0]];
    return pflref_error_set(err, PFLREF_EINVAL, part,
                            "the vector's %s changed since it was written%s: "
                            "hash.%s records %.71s, the content hashes to "
                            "%s%s", part, also, part, recorded, now, HOW);
}

/* The required "hash" {vector, spec, expected, tolerance, flags,
 * provenance}, each "sha256:<hex>" of the canonical JSON of what it covers
 * (golden/README.md, "Content hash"), against the content as it stands:
 * an edit made without the generator is refused, naming the part (or
 * parts) that changed. */
static pflref_status check_hash(const json_t *root, pflref_error *err)
{
    const json_t *hash_v = json_object_get(root, "hash");
    if (hash_v == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "hash",
                                "the vector has no content hash; a vector "
                                "is written with one by its generator "
                                "(golden/pflref_golden.py)");
    if (!json_is_object(hash_v))
        return pflref_error_set(err, PFLREF_EINVAL, "hash",
                                "expected an object of digests {vector, "
                                "spec, expected, tolerance, flags, "
                                "provenance} (golden/README.md)");
    pflref_status st = pflref_json_object(hash_v, "hash", HASH_KEYS, err);
    size_t changed[8], n = 0;
    char first_rec[PFLREF_HASH_MAX] = "", first_now[PFLREF_HASH_MAX] = "";
    for (size_t i = 0; st == PFLREF_OK && HASH_KEYS[i] != NULL; i++) {
        char where[PFLREF_WHERE_MAX], now[PFLREF_HASH_MAX];
        json_t *d;
        const char *recorded;
        const int absent = i >= FIRST_OPTIONAL &&
                           json_object_get(root, HASH_KEYS[i]) == NULL;
        pflref_json_key_path(where, sizeof where, "hash", HASH_KEYS[i]);
        if (absent && json_object_get(hash_v, HASH_KEYS[i]) == NULL)
            continue;   /* a part of the files form, in neither */
        if (i >= FIRST_OPTIONAL && !absent &&
            json_object_get(hash_v, HASH_KEYS[i]) == NULL)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "the vector has %s, which its hash does "
                                    "not cover: a vector in files is "
                                    "written with a digest of it (pflref "
                                    "freeze, golden/pflref_golden.py)",
                                    HASH_KEYS[i]);
        if ((st = pflref_json_member(hash_v, "hash", HASH_KEYS[i], 1, &d,
                                     err)) ||
            (st = pflref_json_string(d, where, &recorded, err)))
            break;
        if (absent)   /* the part was removed: nothing hashes to it */
            snprintf(now, sizeof now, "nothing (no %s)", HASH_KEYS[i]);
        else if (!part_digest(root, HASH_KEYS[i], now))
            st = pflref_error_set(err, PFLREF_ENOMEM, "hash", "out of memory");
        else if (strcmp(recorded, now) != 0) {
            /* a changed part makes "vector" change too: name the part */
            if (n == 1 && changed[0] == 0)
                n = 0;
            if (n == 0) {
                snprintf(first_rec, sizeof first_rec, "%.71s", recorded);
                snprintf(first_now, sizeof first_now, "%s", now);
            }
            changed[n++] = i;
        }
    }
    if (st != PFLREF_OK || n == 0)
        return st;
    return hash_refusal(changed, n, first_rec, first_now, err);
}

/* The init arrays a spec may give as file references (ref/io/
 * spec_hyper.c), for a vector's spec: their values and JSON paths. */
typedef struct {
    const json_t *v;
    const char *where;
} init_field;
enum { N_INIT_FIELDS = 6 };   /* w, cluster_models, lora, W, b, v */

static size_t init_fields(const json_t *spec_v, init_field f[N_INIT_FIELDS])
{
    const json_t *init = json_object_get(spec_v, "init");
    const json_t *hn = json_object_get(init, "hypernetwork");
    f[0] = (init_field){json_object_get(init, "w"), "spec.init.w"};
    f[1] = (init_field){json_object_get(init, "cluster_models"),
                        "spec.init.cluster_models"};
    f[2] = (init_field){json_object_get(init, "lora"), "spec.init.lora"};
    f[3] = (init_field){json_object_get(hn, "W"), "spec.init.hypernetwork.W"};
    f[4] = (init_field){json_object_get(hn, "b"), "spec.init.hypernetwork.b"};
    f[5] = (init_field){json_object_get(hn, "v"), "spec.init.hypernetwork.v"};
    return N_INIT_FIELDS;
}

/* Every file reference among the spec's init arrays is listed in the
 * vector's manifest (checked before the spec reader opens it).  Its
 * problem's data files are not references: they are the data, hashed in
 * a result's problem.data_files. */
static pflref_status init_listed(const json_t *spec_v,
                                 const pflref_arrays *files,
                                 pflref_error *err)
{
    init_field f[N_INIT_FIELDS];
    const size_t n = init_fields(spec_v, f);
    for (size_t i = 0; i < n; i++)
        if (json_is_string(f[i].v)) {
            const pflref_status st = pflref_arrays_listed(
                files, json_string_value(f[i].v), f[i].where, err);
            if (st != PFLREF_OK)
                return st;
        }
    return PFLREF_OK;
}

/* The init files the spec reader read and hashed (spec->init_files),
 * recorded in files with the field that named each, to be held to the
 * manifest by pflref_arrays_close. */
static pflref_status note_init_files(const json_t *spec_v,
                                     const pflref_spec *spec,
                                     pflref_arrays *files, pflref_error *err)
{
    init_field f[N_INIT_FIELDS];
    const size_t n = init_fields(spec_v, f);
    for (size_t k = 0; k < spec->n_init_files; k++) {
        const char *where = "spec.init";
        for (size_t i = 0; i < n; i++) {
            char file[PFLREF_PATH_MAX];
            const char *member;
            if (json_is_string(f[i].v) &&
                pflref_array_ref_split(json_string_value(f[i].v), f[i].where,
                                       file, sizeof file, &member,
                                       NULL) == PFLREF_OK &&
                strcmp(file, spec->init_files[k].path) == 0) {
                where = f[i].where;
                break;
            }
        }
        const pflref_status st = pflref_arrays_note(
            files, &spec->init_files[k], where, err);
        if (st != PFLREF_OK)
            return st;
    }
    return PFLREF_OK;
}

/* The embedded spec, parsed from its compact text; error paths inside it
 * start "spec.".  Its init files must be listed in the manifest (files),
 * which then holds them to their size and SHA-256. */
static pflref_status read_spec(const json_t *spec_v, const char *base_dir,
                               pflref_arrays *files, pflref_spec **spec,
                               pflref_error *err)
{
    pflref_status st0 = init_listed(spec_v, files, err);
    if (st0 != PFLREF_OK)
        return st0;
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
    if (st == PFLREF_OK)
        st = note_init_files(spec_v, *spec, files, err);
    return st;
}

/* "expected": {trajectory, final}, every key once, at least one record;
 * file references and ranges resolved through files, the shapes those
 * of the vector's spec. */
static pflref_status read_expected(const json_t *exp_v, pflref_vector *v,
                                   pflref_arrays *files, pflref_error *err)
{
    size_t n_traj;
    pflref_result_sizes z;
    pflref_result_sizes_of(v->spec, &z);
    pflref_status st;
    if ((st = pflref_records_read(exp_v, "expected", files, &z,
                                  &v->expected, &n_traj, err)) ||
        (st = pflref_records_unique(&v->expected, n_traj, "expected", err)))
        return st;
    if (v->expected.count == 0)
        return pflref_error_set(err, PFLREF_EINVAL, "expected",
                                "the vector expects nothing");
    return PFLREF_OK;
}

/* format, the required members, the content hash (before anything inside
 * the parts is judged, so an edit is named as such), metadata, tolerance
 * and the expectation's keys; *id, *spec_v and *exp_v are borrowed from
 * root. */
static pflref_status read_envelope(const json_t *root, const char *base_dir,
                                   pflref_vector *v, const char **id,
                                   json_t **spec_v, json_t **exp_v,
                                   pflref_error *err)
{
    static const char *const keys[] = {"format", "id", "hash", "title",
                                       "provenance", "flags", "spec",
                                       "tolerance", "expected",
                                       "trajectory_values", "array_files",
                                       NULL};
    static const char *const ekeys[] = {"final", "trajectory", NULL};
    json_t *id_v, *tol_v, *any;
    pflref_status st;
    if ((st = pflref_json_format(root, "", keys, PFLREF_GOLDEN_FORMAT, err)) ||
        (st = pflref_json_member(root, "", "id", 1, &id_v, err)) ||
        (st = pflref_json_string(id_v, "id", id, err)) ||
        (st = pflref_json_member(root, "", "spec", 1, spec_v, err)) ||
        (st = pflref_json_member(root, "", "tolerance", 1, &tol_v, err)) ||
        (st = pflref_json_member(root, "", "expected", 1, exp_v, err)) ||
        (st = pflref_json_member(root, "", "provenance", 1, &any, err)) ||
        (st = pflref_json_member(root, "", "flags", 1, &any, err)) ||
        (st = check_hash(root, err)) ||
        (st = read_metadata(root, base_dir, err)) ||
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
    if ((st = read_envelope(root, base_dir, v, &id, &spec_v, &exp_v, err)))
        return st;
    /* Reports, the CLI and a candidate's same-id test hold the id whole
     * (the schema's maxLength): a longer one would be compared truncated. */
    if (strlen(id) >= sizeof v->id)
        return pflref_error_set(err, PFLREF_EINVAL, "id",
                                "the id has %zu bytes, at most %zu are "
                                "allowed", strlen(id), sizeof v->id - 1);
    snprintf(v->id, sizeof v->id, "%s", id);
    /* arrays in files: the manifest and trajectory_values first, so that
     * every reference is checked against the manifest before its file is
     * opened; every file held to its size and SHA-256 at the end */
    pflref_arrays files;
    if ((st = pflref_arrays_open_listed(&files, root, base_dir, err)) ==
            PFLREF_OK &&
        (st = read_spec(spec_v, base_dir, &files, &v->spec, err)) ==
            PFLREF_OK &&
        (st = read_expected(exp_v, v, &files, err)) == PFLREF_OK)
        st = pflref_arrays_close(&files, err);
    pflref_arrays_free(&files);
    return st;
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
