/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/freeze.c: a golden vector whose expected side is the reference's
 * own output (pflref_freeze_text in pflref/io.h; `pflref freeze`,
 * docs/cli.md; format pflref-golden/1, docs/formats.md, "Provenance").
 *
 * A user pins their own problem: the spec is run once at step level and
 * the vector records
 *   spec        the user's spec with every random choice made explicit, so
 *               a candidate replays it without pflref's RNG (the schema's
 *               rule 2): schedule := the result's given schedule,
 *               init := {kind: given, w: w0} (and cluster_models := θ⁰ for
 *               IFCA, with δ = σ = 0; lora's adapter and pFedHN's
 *               hypernetwork as read, in numbers even when the spec named
 *               files for them), a generator problem := its clients
 *               inline, output.trajectory := the level frozen; a
 *               relative problem file is re-rooted at the vector's folder;
 *   expected    the result's final state and trajectory, at step level
 *               unless the caller asks for round or none;
 *   tolerance   {atol, rtol, basis}: the caller's, or the default fp64
 *               basis below (within PFLREF_TOLERANCE_CEILING);
 *   provenance  {kind: reference, generator: this build};
 *   flags       [reference-output];
 *   hash        the content hashes, as golden/pflref_golden.py computes
 *               them (ref/io/canonical.c);
 *   in the files form (pflref_freeze_write, opt.arrays "files") the large
 *   arrays of spec.init and expected in .npy files beside the vector, its
 *   "trajectory_values" and the "array_files" manifest, which the hash
 *   covers (ref/io/freeze_arrays.c).  The expected side takes the result
 *   writer's files form: the result's text names final.w, .v, .alpha and
 *   the trajectory's values by reference from the start and their files
 *   are written from the run's numbers, so none of them is printed as
 *   decimals and parsed back (issue 30); the bytes are those the inline
 *   text's numbers gave.  The id stays the inline spec's.
 * Trust: such a vector says "agrees with pflref", not "agrees with the
 * paper"; it is as right as the reference is on the independently derived
 * vectors of golden/ (docs/formats.md, "Provenance").
 *
 * I/O only: the run is pflref_spec_run's, the result pflref_result_text's;
 * nothing here computes a model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "pflref/version.h"
#include "io/canonical.h"
#include "io/freeze.h"
#include "io/result.h"
#include "io/json.h"
#include "io/vector.h"

/* The default tolerance: the fp64 ceiling for both bounds.  A candidate
 * computing in fp64 in another summation order (NumPy's pairwise sums,
 * another BLAS kernel) drifts from the reference by rounding that grows
 * with the number of steps of the user's problem; 1e-10 leaves room for
 * that and is still a thousand times below fp32's unit roundoff (6e-8), so
 * an fp32 computation or a wrong formula is told apart. */
#define FREEZE_ATOL PFLREF_TOLERANCE_CEILING
#define FREEZE_RTOL PFLREF_TOLERANCE_CEILING
static const char FREEZE_BASIS[] =
    "fp64 reference output (pflref freeze, default): a candidate computing "
    "in fp64 in another summation order agrees to rounding that grows with "
    "the steps of the run; 1e-10 is the fp64 ceiling, a thousand times "
    "below fp32's unit roundoff";

/* The flag every frozen vector carries (golden/flags.json). */
static const char FREEZE_FLAG[] = "reference-output";

/* The resolved options. */
typedef struct {
    double atol, rtol;
    const char *basis;
    const char *id;          /* NULL: derived from the spec's hash */
    const char *vector_dir;  /* NULL: problem files by absolute path */
    pflref_record_level level;
    int files;               /* the files form (opt.arrays "files")  */
    size_t inline_max;       /* its most numbers inline              */
} freeze_settings;

/* The trajectory levels by name (docs/formats.md, "output"). */
static const char *const LEVELS[] = {"none", "round", "step", NULL};

/* opt->trajectory → s->level (NULL: step). */
static pflref_status read_level(const char *name, freeze_settings *s,
                                pflref_error *err)
{
    s->level = PFLREF_RECORD_STEP;
    if (name == NULL)
        return PFLREF_OK;
    for (size_t i = 0; LEVELS[i] != NULL; i++)
        if (strcmp(name, LEVELS[i]) == 0) {
            s->level = (pflref_record_level)i;
            return PFLREF_OK;
        }
    return pflref_error_set(err, PFLREF_EINVAL, "opt.trajectory",
                            "\"%.40s\" is not a trajectory level (known: "
                            "none, round, step)", name);
}

/* 1 when id is lower-case segments [a-z0-9][a-z0-9._-]* joined by '/'
 * (the schema's pattern). */
static int id_well_formed(const char *id)
{
    int start = 1;
    for (const char *p = id; *p != '\0'; p++) {
        const int alnum = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');
        if (*p == '/' && !start)
            start = 1;
        else if (alnum || (!start && (*p == '.' || *p == '_' || *p == '-')))
            start = 0;
        else
            return 0;
    }
    return !start;
}

/* opt (NULL: defaults) → s.  A tolerance other than the default needs a
 * basis; bounds obey the reader's rules (≥ 0, rtol < 1, at most the fp64
 * ceiling: freeze writes no above_ceiling argument). */
static pflref_status read_options(const pflref_freeze_options *opt,
                                  freeze_settings *s, pflref_error *err)
{
    *s = (freeze_settings){.atol = FREEZE_ATOL, .rtol = FREEZE_RTOL,
                           .basis = FREEZE_BASIS,
                           .level = PFLREF_RECORD_STEP};
    if (opt == NULL)
        return PFLREF_OK;
    pflref_status st = read_level(opt->trajectory, s, err);
    if (st != PFLREF_OK)
        return st;
    s->id = opt->id;
    s->vector_dir = opt->vector_dir;
    if (opt->arrays != NULL && strcmp(opt->arrays, "inline") != 0 &&
        strcmp(opt->arrays, "files") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "opt.arrays",
                                "\"%.40s\" is not a form of arrays (known: "
                                "inline, files)", opt->arrays);
    s->files = opt->arrays != NULL && strcmp(opt->arrays, "files") == 0;
    s->inline_max = opt->inline_max;
    if (opt->basis == NULL && (opt->atol != 0.0 || opt->rtol != 0.0))
        return pflref_error_set(err, PFLREF_EINVAL, "opt.basis",
                                "a tolerance other than the default needs "
                                "a basis: say why atol and rtol are what "
                                "they are");
    if (opt->basis != NULL) {
        if (opt->basis[0] == '\0')
            return pflref_error_set(err, PFLREF_EINVAL, "opt.basis",
                                    "the basis is empty: say why the "
                                    "tolerance is what it is");
        s->atol = opt->atol;
        s->rtol = opt->rtol;
        s->basis = opt->basis;
    }
    if (!(s->atol >= 0.0 && s->atol <= PFLREF_TOLERANCE_CEILING))
        return pflref_error_set(err, PFLREF_EINVAL, "opt.atol",
                                "atol = %g must be in [0, %g] (the fp64 "
                                "ceiling, docs/formats.md)", s->atol,
                                PFLREF_TOLERANCE_CEILING);
    if (!(s->rtol >= 0.0 && s->rtol <= PFLREF_TOLERANCE_CEILING))
        return pflref_error_set(err, PFLREF_EINVAL, "opt.rtol",
                                "rtol = %g must be in [0, %g] (the fp64 "
                                "ceiling, docs/formats.md)", s->rtol,
                                PFLREF_TOLERANCE_CEILING);
    if (s->id != NULL && (strlen(s->id) >= PFLREF_VECTOR_ID_MAX ||
                          !id_well_formed(s->id)))
        return pflref_error_set(err, PFLREF_EINVAL, "opt.id",
                                "\"%.60s\" is not an id: lower-case "
                                "segments [a-z0-9][a-z0-9._-]* joined by "
                                "'/', at most %d bytes", s->id,
                                PFLREF_VECTOR_ID_MAX - 1);
    return PFLREF_OK;
}

/* Run spec, recording at `level`: *res and tj (initialised here; the
 * caller frees both, also on failure). */
static pflref_status run(pflref_spec *spec, pflref_record_level level,
                         pflref_run_result **res, pflref_trajectory *tj,
                         pflref_error *err)
{
    spec->record = level;
    pflref_trajectory_init(tj, spec->record);
    pflref_trace recorder = {pflref_trajectory_emit, tj};
    return pflref_spec_run(spec, &recorder, res, err);
}

/* *result := the run's result document, parsed: its arrays inline, or as
 * refs says (the files form's expected side, pflref_freeze_files_plan). */
static pflref_status result_json(const pflref_spec *spec,
                                 const pflref_run_result *res,
                                 const pflref_trajectory *tj,
                                 const pflref_result_refs *refs,
                                 json_t **result, pflref_error *err)
{
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char *text = NULL;
    size_t len = 0;
    pflref_status st =
        pflref_result_text(spec, res, tj, &bi, refs, &text, &len, err);
    if (st == PFLREF_OK)
        st = pflref_json_parse(text, len, "result", result, err);
    free(text);
    return st;
}

/* value, or a failure mark when it is NULL (out of memory). */
static int set_new(json_t *obj, const char *key, json_t *value)
{
    return value == NULL || json_object_set_new(obj, key, value) != 0;
}

/* init.lora (with init.lora_targets), init.class_counts and
 * init.hypernetwork {W, b, v} of the vector's spec from the spec as read, as numbers (the spec may have
 * named files for them): nonzero when memory is short. */
static int init_arrays(json_t *init, const pflref_spec *spec)
{
    int bad = 0;
    if (spec->lora_init != NULL)
        bad |= set_new(init, "lora", pflref_json_new_vector(spec->lora_init,
                                                          spec->n_lora_init));
    if (spec->lora_targets != NULL) {   /* the adapter's targets by name */
        json_t *names = json_array();
        bad |= names == NULL;
        for (size_t j = 0; names != NULL && j < spec->n_lora_targets; j++)
            bad |= json_array_append_new(
                       names, json_string(spec->lora_targets[j])) != 0;
        bad |= set_new(init, "lora_targets", names);
    }
    if (spec->fedrod_counts != NULL) {  /* FedRoD's N_{i,c} as given */
        const size_t N = spec->problem->N, K = spec->problem->model.k;
        json_t *rows = json_array();
        bad |= rows == NULL;
        for (size_t i = 0; rows != NULL && i < N; i++) {
            json_t *row = json_array();
            bad |= row == NULL || json_array_append_new(rows, row) != 0;
            for (size_t c = 0; row != NULL && c < K; c++)
                bad |= json_array_append_new(
                           row, json_integer((json_int_t)
                                                 spec->fedrod_counts[i * K +
                                                                     c])) != 0;
        }
        bad |= set_new(init, "class_counts", rows);
    }
    if (spec->hypernetwork == NULL)
        return bad;
    const size_t P = spec->problem->model.P, N = spec->problem->N,
                 e = spec->hyper.pfedhn.e;
    const double *x = spec->hypernetwork;
    json_t *hn = json_object();
    bad |= hn == NULL || set_new(hn, "W", pflref_json_new_matrix(x, P, e));
    if (hn != NULL && spec->hyper.pfedhn.bias == PFLREF_PFEDHN_BIAS_ON)
        bad |= set_new(hn, "b", pflref_json_new_vector(x + P * e, P));
    if (hn != NULL)
        bad |= set_new(hn, "v", pflref_json_new_matrix(x + P * e + P, N, e));
    return bad | set_new(init, "hypernetwork", hn);
}

/* The vector's spec: the user's with every random choice explicit. */
static pflref_status explicit_spec(json_t *vspec, const json_t *result,
                                   const pflref_spec *spec,
                                   const freeze_settings *s,
                                   const char *base_dir, pflref_error *err)
{
    int bad = set_new(vspec, "schedule",
                      json_deep_copy(json_object_get(result, "schedule")));
    json_t *init = json_object();
    bad |= init == NULL ||
           set_new(init, "kind", json_string("given")) ||
           set_new(init, "w", json_deep_copy(json_object_get(result, "w0")));
    const json_t *theta0 = json_object_get(result, "theta0");
    if (init != NULL && theta0 != NULL) {
        /* IFCA: θ_j⁰ as drawn, so δ and σ (and their seed) no longer apply */
        json_t *hp = json_object_get(json_object_get(vspec, "algorithm"),
                                     "hyperparameters");
        bad |= set_new(init, "cluster_models", json_deep_copy(theta0));
        if (json_is_object(hp)) {
            json_object_del(hp, "ifca.init_seed");
            bad |= set_new(hp, "ifca.init_shift", json_real(0.0)) ||
                   set_new(hp, "ifca.init_sd", json_real(0.0));
        }
    }
    /* FedRecon's support sets as given */
    const json_t *support =
        json_object_get(json_object_get(result, "init"), "support");
    if (init != NULL && support != NULL)
        bad |= set_new(init, "support", json_deep_copy(support));
    /* SCAFFOLD's initial control variates as given */
    static const char *const controls[] = {"c", "c_i"};
    for (size_t j = 0; init != NULL && j < 2; j++) {
        const json_t *cv =
            json_object_get(json_object_get(result, "init"), controls[j]);
        if (cv != NULL)
            bad |= set_new(init, controls[j], json_deep_copy(cv));
    }
    /* lora's adapter and pFedHN's hypernetwork as read (a file the spec
     * named inlined: the vector names only its own files, in the files
     * form); HetLoRA's ranks as given */
    if (init != NULL)
        bad |= init_arrays(init, spec);
    const json_t *ranks =
        json_object_get(json_object_get(result, "init"), "lora_ranks");
    if (init != NULL && ranks != NULL)
        bad |= set_new(init, "lora_ranks", json_deep_copy(ranks));
    bad |= set_new(vspec, "init", init);
    json_t *output = json_object();
    bad |= output == NULL ||
           set_new(output, "trajectory", json_string(LEVELS[s->level])) ||
           set_new(vspec, "output", output);
    if (bad)
        return pflref_error_set(err, PFLREF_ENOMEM, "spec", "out of memory");
    return pflref_freeze_problem(vspec, spec->problem, base_dir,
                                 s->vector_dir, err);
}

/* "reference/<algorithm>/<16 hex digits of the vector spec's hash>". */
static pflref_status default_id(const json_t *vspec, const pflref_spec *spec,
                                char *id, size_t size, pflref_error *err)
{
    char digest[PFLREF_HASH_MAX];
    if (!pflref_content_hash(vspec, digest))
        return pflref_error_set(err, PFLREF_ENOMEM, "id", "out of memory");
    snprintf(id, size, "reference/%s/%.16s", spec->algorithm->name,
             digest + strlen("sha256:"));
    return PFLREF_OK;
}

/* title, provenance, flags, tolerance and expected into body (after its
 * format, id and spec). */
static int put_parts(json_t *body, const json_t *result,
                     const pflref_spec *spec, const freeze_settings *s)
{
    char title[512];
    const char *name = spec->name != NULL && spec->name[0] != '\0'
                           ? spec->name : "an unnamed spec";
    snprintf(title, sizeof title, "pflref %s's own output on %.200s (%s)",
             pflref_version(), name, spec->algorithm->name);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    char gen[768];
    snprintf(gen, sizeof gen, "pflref freeze, pflref %s (%.200s; %.300s)",
             pflref_version(), bi.compiler, bi.blas);
    json_t *prov = json_object(), *flags = json_array(),
           *tol = json_object(), *exp = json_object();
    int bad = prov == NULL || flags == NULL || tol == NULL || exp == NULL;
    if (!bad) {
        bad |= set_new(prov, "kind", json_string("reference")) ||
               set_new(prov, "generator", json_string(gen)) ||
               json_array_append_new(flags, json_string(FREEZE_FLAG)) ||
               set_new(tol, "atol", json_real(s->atol)) ||
               set_new(tol, "rtol", json_real(s->rtol)) ||
               set_new(tol, "basis", json_string(s->basis)) ||
               set_new(exp, "final",
                       json_deep_copy(json_object_get(result, "final"))) ||
               set_new(exp, "trajectory",
                       json_deep_copy(json_object_get(result, "trajectory")));
    }
    bad |= set_new(body, "title", json_string(title)) ||
           set_new(body, "provenance", prov) || set_new(body, "flags", flags) ||
           set_new(body, "tolerance", tol) || set_new(body, "expected", exp);
    return bad;
}

/* The member names of a vector in the order written (golden/); the last
 * two only in the files form. */
static const char *const ORDER[] = {"format", "id", "hash", "title",
                                    "provenance", "flags", "spec",
                                    "tolerance", "expected",
                                    "trajectory_values", "array_files",
                                    NULL};
/* The parts hashed one by one (ref/io/vector.c, HASH_KEYS); the last two
 * only when the vector has them. */
static const char *const PARTS[] = {"spec", "expected", "tolerance", "flags",
                                    "provenance", "trajectory_values",
                                    "array_files", NULL};

/* The "hash" object of body (which has no "hash" yet): "vector" over the
 * whole body, then each part it has, as ref/io/vector.c checks them. */
static json_t *hashes(const json_t *body)
{
    json_t *h = json_object();
    char digest[PFLREF_HASH_MAX];
    if (h == NULL || !pflref_content_hash(body, digest) ||
        set_new(h, "vector", json_string(digest))) {
        json_decref(h);
        return NULL;
    }
    for (size_t i = 0; PARTS[i] != NULL; i++) {
        const json_t *part = json_object_get(body, PARTS[i]);
        if (part != NULL && (!pflref_content_hash(part, digest) ||
                             set_new(h, PARTS[i], json_string(digest)))) {
            json_decref(h);
            return NULL;
        }
    }
    return h;
}

/* The vector's body (format, id, spec, title, provenance, flags,
 * tolerance, expected; no hash yet) from the explicit spec and the result;
 * the default id is the inline spec's, so both forms of one freeze share
 * it.  *body owns it. */
static pflref_status make_body(json_t *vspec, const json_t *result,
                               const pflref_spec *spec,
                               const freeze_settings *s, json_t **body,
                               pflref_error *err)
{
    char id[PFLREF_VECTOR_ID_MAX];
    if (s->id != NULL)
        snprintf(id, sizeof id, "%s", s->id);
    else {
        const pflref_status st = default_id(vspec, spec, id, sizeof id, err);
        if (st != PFLREF_OK)
            return st;
    }
    json_t *b = json_object();
    int bad = b == NULL ||
              set_new(b, "format", json_string(PFLREF_GOLDEN_FORMAT)) ||
              set_new(b, "id", json_string(id)) ||
              json_object_set(b, "spec", vspec) != 0 ||
              put_parts(b, result, spec, s);
    if (bad) {
        json_decref(b);
        return pflref_error_set(err, PFLREF_ENOMEM, "", "out of memory");
    }
    *body = b;
    return PFLREF_OK;
}

/* The vector: body with its "hash", members in ORDER; *vector owns it. */
static pflref_status seal(json_t *body, json_t **vector, pflref_error *err)
{
    int bad = set_new(body, "hash", hashes(body));
    json_t *out = json_object();
    bad |= out == NULL;
    for (size_t i = 0; !bad && ORDER[i] != NULL; i++) {
        json_t *m = json_object_get(body, ORDER[i]);
        bad |= m != NULL && json_object_set(out, ORDER[i], m) != 0;
    }
    if (bad) {
        json_decref(out);
        return pflref_error_set(err, PFLREF_ENOMEM, "", "out of memory");
    }
    *vector = out;
    return PFLREF_OK;
}

/* The vector of spec_text under settings s; ff not NULL: in the files
 * form, its large arrays written to files (ref/io/freeze_arrays.c) before
 * the hash is computed, so the hash covers their manifest. */
static pflref_status build(const char *spec_text, size_t len,
                           const char *base_dir, const freeze_settings *s,
                           pflref_freeze_files *ff, json_t **vector,
                           pflref_error *err)
{
    if (pflref_golden_is_vector(spec_text, len))
        return pflref_error_set(err, PFLREF_EINVAL, "format",
                                "this is a golden vector (%s) already: "
                                "freeze takes a spec (%s)",
                                PFLREF_GOLDEN_FORMAT, PFLREF_SPEC_FORMAT);
    pflref_spec *spec = NULL;
    pflref_run_result *res = NULL;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_NONE);
    json_t *root = NULL, *result = NULL, *body = NULL;
    pflref_result_refs refs;
    pflref_status st;
    /* in the files form the expected side's large arrays are references
     * from the start (the result writer's files form), their numbers
     * written from the run's (pflref_freeze_files_move) */
    if ((st = pflref_spec_parse(spec_text, len, base_dir, &spec, err)) ||
        (st = pflref_json_parse(spec_text, len, "", &root, err)) ||
        (st = run(spec, s->level, &res, &tj, err)) ||
        (ff != NULL &&
         (st = pflref_freeze_files_plan(ff, spec, res, &tj, &refs, err))) ||
        (st = result_json(spec, res, &tj, ff != NULL ? &refs : NULL, &result,
                          err)) ||
        (st = explicit_spec(root, result, spec, s, base_dir, err)) ||
        (st = make_body(root, result, spec, s, &body, err)))
        goto done;
    if (ff != NULL && (st = pflref_freeze_files_move(ff, body, err)))
        goto done;
    st = seal(body, vector, err);
done:
    if (ff != NULL)
        ff->tj = NULL;   /* tj and res end here */
    json_decref(body);
    json_decref(result);
    json_decref(root);
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
    return st;
}

pflref_status pflref_freeze_text(const char *spec_text, size_t len,
                                 const char *base_dir,
                                 const pflref_freeze_options *opt,
                                 char **vector_out, size_t *vector_len,
                                 pflref_error *err)
{
    if (vector_out != NULL)
        *vector_out = NULL;
    if (vector_len != NULL)
        *vector_len = 0;
    if (spec_text == NULL || vector_out == NULL || vector_len == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                spec_text == NULL ? "spec_text"
                                : vector_out == NULL ? "vector_out"
                                                     : "vector_len",
                                "the argument is NULL");
    freeze_settings s;
    pflref_status st = read_options(opt, &s, err);
    if (st != PFLREF_OK)
        return st;
    if (s.files)
        return pflref_error_set(err, PFLREF_EINVAL, "opt.arrays",
                                "the files form writes .npy files beside "
                                "the vector: give the vector's path "
                                "(pflref_freeze_write)");
    json_t *vector = NULL;
    if ((st = build(spec_text, len, base_dir, &s, NULL, &vector, err)))
        return st;
    if ((*vector_out = pflref_freeze_dump(vector)) == NULL)
        st = pflref_error_set(err, PFLREF_ENOMEM, "", "out of memory");
    else
        *vector_len = strlen(*vector_out);
    json_decref(vector);
    return st;
}

pflref_status pflref_freeze_write(const char *spec_text, size_t len,
                                  const char *base_dir,
                                  const pflref_freeze_options *opt,
                                  const char *vector_path, size_t *vector_len,
                                  pflref_error *err)
{
    if (vector_len != NULL)
        *vector_len = 0;
    if (spec_text == NULL || vector_path == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                spec_text == NULL ? "spec_text"
                                                  : "vector_path",
                                "the argument is NULL");
    freeze_settings s;
    pflref_status st = read_options(opt, &s, err);
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(vector_path, dir, sizeof dir);
    s.vector_dir = dir;
    /* refused before the run when it cannot be written (the write looks
     * again) */
    if (st != PFLREF_OK ||
        (st = pflref_write_file_check(vector_path, err)) != PFLREF_OK)
        return st;
    pflref_freeze_files ff;
    pflref_freeze_files_init(&ff, vector_path, s.inline_max);
    /* an earlier vector's files, found before the new ones replace any */
    pflref_freeze_files_find_stale(&ff, vector_path);
    json_t *vector = NULL;
    char *text = NULL;
    st = build(spec_text, len, base_dir, &s, s.files ? &ff : NULL, &vector,
               err);
    if (st == PFLREF_OK && (text = pflref_freeze_dump(vector)) == NULL)
        st = pflref_error_set(err, PFLREF_ENOMEM, "", "out of memory");
    /* the files first (written by build), the vector last */
    if (st == PFLREF_OK)
        st = pflref_write_file_atomic(vector_path, text, err);
    if (st == PFLREF_OK && vector_len != NULL)
        *vector_len = strlen(text);
    if (st == PFLREF_OK)
        pflref_freeze_files_remove_stale(&ff);
    else
        pflref_freeze_files_undo(&ff);
    pflref_freeze_files_free(&ff);
    free(text);
    json_decref(vector);
    return st;
}
