/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/arrays.c: the arrays of a JSON document given as file references,
 * the ranged trajectory values, and the "array_files" manifest
 * (ref/io/arrays.h; docs/formats.md, "Arrays in files").
 *
 * The rules are problem data's (ref/io/spec_data.c, docs/bad-inputs.md
 * N1-N22), read by the same loader (ref/io/npy.c), with three additions:
 *   a) only floats: '<f8' (used in place) or '<f4' (widened exactly); the
 *      integer label types a problem's y may have are refused;
 *   b) the shape is exactly the array's: (n,) for n numbers, (r, c) for r
 *      rows of c numbers, at least one number;
 *   c) a manifest, when the document has one, lists every file it names
 *      with its size and SHA-256 (the whole file; an .npz archive once),
 *      in the form of a result's problem.data_files;
 *   d) a golden vector must have the manifest when it names a file, and
 *      every file it names must be listed there before it is opened
 *      (pflref_arrays_open_listed): its content hash covers the manifest,
 *      so the hash covers the files' bytes.
 * Paths follow problem data's rule: relative to the folder of the JSON
 * file, an absolute path as it is, ".." allowed (pflref reads what the
 * document's author names; it does not confine the names to a folder).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/arrays.h"
#include "io/sha256.h"

pflref_status pflref_array_ref_split(const char *ref, const char *where,
                                     char *file, size_t size,
                                     const char **member, pflref_error *err)
{
    const char *npz = strstr(ref, ".npz:");
    *member = npz != NULL ? npz + 5 : NULL;
    const size_t flen = npz != NULL ? (size_t)(npz + 4 - ref) : strlen(ref);
    if (flen == 0 || flen >= size || (*member != NULL && **member == 0))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "\"%s\" is not a data file name (a .npy "
                                "path, or ARCHIVE.npz:MEMBER)", ref);
    snprintf(file, size, "%.*s", (int)flen, ref);
    return PFLREF_OK;
}

void pflref_array_ref_path(const char *file, const char *base_dir,
                           char *full, size_t size)
{
    if (file[0] == '/' || base_dir == NULL || base_dir[0] == '\0')
        snprintf(full, size, "%s", file);
    else
        snprintf(full, size, "%s/%s", base_dir, file);
}

void pflref_arrays_init(pflref_arrays *a, const char *base_dir, int hash)
{
    *a = (pflref_arrays){.base_dir = base_dir, .hash = hash};
}

/* Release one loaded array (mapped or owned). */
static void array_release(pflref_npy_array *x)
{
    if (x->map != NULL)
        pflref_npy_unmap(x->map, x->map_len);
    else
        free(x->data);
    *x = (pflref_npy_array){.data = NULL};
}

void pflref_arrays_free(pflref_arrays *a)
{
    array_release(&a->cur);
    array_release(&a->traj);
    for (size_t i = 0; i < a->n_files; i++)
        free(a->files[i].f.path);
    free(a->files);
    a->files = NULL;
    a->n_files = 0;
}

/* The entry of a->files for `file`: its index, or a new entry appended
 * (*known = 0) named by `where`.  NULL when memory is short. */
static pflref_array_file *file_entry(pflref_arrays *a, const char *file,
                                     const char *where, int *known)
{
    for (size_t i = 0; i < a->n_files; i++)
        if (strcmp(a->files[i].f.path, file) == 0) {
            *known = 1;
            return &a->files[i];
        }
    *known = 0;
    pflref_array_file *grown = realloc(a->files,
                                       (a->n_files + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    a->files = grown;
    pflref_array_file *e = &grown[a->n_files];
    *e = (pflref_array_file){.f = {.path = malloc(strlen(file) + 1)}};
    if (e->f.path == NULL)
        return NULL;
    memcpy(e->f.path, file, strlen(file) + 1);
    snprintf(e->where, sizeof e->where, "%s", where);
    a->n_files++;
    return e;
}

/* "(6,)", "(2, 3)" or "()" for the header h. */
static void shape_text(const pflref_npy_header *h, char *out, size_t size)
{
    if (h->ndim == 0)
        snprintf(out, size, "()");
    else if (h->ndim == 1)
        snprintf(out, size, "(%zu,)", h->shape[0]);
    else
        snprintf(out, size, "(%zu, %zu)", h->shape[0], h->shape[1]);
}

/* The wanted shape in words: "(N, P) = (2, 3)", "(N, P) with P = 3", or
 * "(N, P)" as far as its dimensions are known. */
static void want_text(const pflref_array_shape *w, char *out, size_t size)
{
    const char *s0 = w->sym[0] != NULL ? w->sym[0] : "n";
    const char *s1 = w->sym[1] != NULL ? w->sym[1] : "m";
    if (w->rank == 1 && w->dim[0] > 0)
        snprintf(out, size, "(%s,) = (%zu,)", s0, w->dim[0]);
    else if (w->rank == 1)
        snprintf(out, size, "(%s,)", s0);
    else if (w->dim[0] > 0 && w->dim[1] > 0)
        snprintf(out, size, "(%s, %s) = (%zu, %zu)", s0, s1, w->dim[0],
                 w->dim[1]);
    else if (w->dim[0] > 0 || w->dim[1] > 0)
        snprintf(out, size, "(%s, %s) with %s = %zu", s0, s1,
                 w->dim[0] > 0 ? s0 : s1,
                 w->dim[0] > 0 ? w->dim[0] : w->dim[1]);
    else
        snprintf(out, size, "(%s, %s)", s0, s1);
}

/* The loaded array x (file `name`, field `where`) against `want`: floats
 * of exactly that shape, at least one number. */
static pflref_status check_loaded(const pflref_npy_array *x, const char *name,
                                  const char *where,
                                  const pflref_array_shape *want,
                                  pflref_error *err)
{
    if (x->h.dtype != PFLREF_NPY_F8 && x->h.dtype != PFLREF_NPY_F4)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: header field 'descr' is '%s': %s holds "
                                "floats, '<f8' (float64) or '<f4' "
                                "(float32)", name,
                                pflref_npy_descr(x->h.dtype), where);
    int ok = x->h.ndim == want->rank && x->h.count > 0;
    for (size_t k = 0; ok && k < want->rank; k++)
        ok = want->dim[k] == 0 || x->h.shape[k] == want->dim[k];
    if (ok)
        return PFLREF_OK;
    char got[64], wanted[96];
    shape_text(&x->h, got, sizeof got);
    want_text(want, wanted, sizeof wanted);
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "%s: header field 'shape' is %s: %s is %s%s",
                            name, got, where, wanted,
                            x->h.count == 0 && x->h.ndim == want->rank
                                ? ", at least one number" : "");
}

/* The entry of the manifest listing `path`: its index, or −1. */
static long listed(const json_t *m, const char *path)
{
    for (size_t j = 0; j < json_array_size(m); j++)
        if (strcmp(json_string_value(json_object_get(json_array_get(m, j),
                                                     "path")), path) == 0)
            return (long)j;
    return -1;
}

pflref_status pflref_arrays_listed(const pflref_arrays *a, const char *ref,
                                   const char *where, pflref_error *err)
{
    char file[PFLREF_PATH_MAX];
    const char *member;
    pflref_status st = pflref_array_ref_split(ref, where, file, sizeof file,
                                              &member, err);
    if (st != PFLREF_OK)
        return st;
    if (a->manifest == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "\"%s\" is a file reference, and the vector "
                                "has no \"array_files\": a golden vector "
                                "that references files lists each with its "
                                "size and SHA-256, which its content hash "
                                "covers (pflref freeze --arrays files "
                                "writes them)", ref);
    if (listed(a->manifest, file) < 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s is not listed in \"array_files\": a "
                                "golden vector lists every file it "
                                "references with its size and SHA-256 "
                                "(the manifest lists %zu other%s)", file,
                                json_array_size(a->manifest),
                                json_array_size(a->manifest) == 1 ? "" : "s");
    return PFLREF_OK;
}

/* Load the file of reference `ref` (split into file and member) into x;
 * the file's entry in a->files is made (and hashed) on first naming, and
 * dropped again when the file cannot be read.  With a->listed_only the
 * file must be listed in the manifest before it is opened. */
static pflref_status load_file(pflref_arrays *a, const char *ref,
                               const char *where, pflref_npy_array *x,
                               const char **name, pflref_error *err)
{
    char file[PFLREF_PATH_MAX], full[PFLREF_PATH_MAX];
    const char *member;
    pflref_status st = pflref_array_ref_split(ref, where, file, sizeof file,
                                              &member, err);
    if (st == PFLREF_OK && a->listed_only)
        st = pflref_arrays_listed(a, ref, where, err);
    if (st != PFLREF_OK)
        return st;
    pflref_array_ref_path(file, a->base_dir, full, sizeof full);
    int known;
    pflref_array_file *rec = file_entry(a, file, where, &known);
    if (rec == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    *name = member != NULL ? ref : rec->f.path;
    pflref_npy_digest dg = {.bytes = 0};
    pflref_npy_digest *want = known || !a->hash ? NULL : &dg;
    st = member != NULL
             ? pflref_npz_load(full, member, ref, where, x, want, err)
             : pflref_npy_load(full, rec->f.path, where, x, want, err);
    if (st == PFLREF_OK && want != NULL) {
        memcpy(rec->f.sha256, dg.hex, sizeof rec->f.sha256);
        rec->f.bytes = dg.bytes;
        if (dg.hex[0] == '\0')   /* used in place: hashed from the map */
            pflref_sha256_hex(x->map, x->map_len, rec->f.sha256);
    }
    if (st != PFLREF_OK && !known) {
        free(rec->f.path);
        a->n_files--;
        *name = ref;
    }
    return st;
}

pflref_status pflref_arrays_load(pflref_arrays *a, const char *ref,
                                 const char *where,
                                 const pflref_array_shape *want,
                                 const double **data, size_t shape[2],
                                 pflref_error *err)
{
    array_release(&a->cur);
    *data = NULL;
    const char *name = ref;
    pflref_status st = load_file(a, ref, where, &a->cur, &name, err);
    if (st == PFLREF_OK)
        st = check_loaded(&a->cur, name, where, want, err);
    if (st != PFLREF_OK) {
        array_release(&a->cur);
        return st;
    }
    shape[0] = a->cur.h.shape[0];
    shape[1] = a->cur.h.ndim == 2 ? a->cur.h.shape[1] : 1;
    *data = a->cur.data;
    return PFLREF_OK;
}

/* One manifest entry e at `where` (array_files[j]): {path, sha256, bytes}
 * well formed. */
static pflref_status manifest_entry(const json_t *e, const char *where,
                                    pflref_error *err)
{
    static const char *const keys[] = {"path", "sha256", "bytes", NULL};
    json_t *p, *h, *b;
    const char *path, *hex;
    char hp[PFLREF_WHERE_MAX], bp[PFLREF_WHERE_MAX], pp[PFLREF_WHERE_MAX];
    pflref_json_key_path(pp, sizeof pp, where, "path");
    pflref_json_key_path(hp, sizeof hp, where, "sha256");
    pflref_json_key_path(bp, sizeof bp, where, "bytes");
    pflref_status st;
    if ((st = pflref_json_object(e, where, keys, err)) ||
        (st = pflref_json_member(e, where, "path", 1, &p, err)) ||
        (st = pflref_json_member(e, where, "sha256", 1, &h, err)) ||
        (st = pflref_json_member(e, where, "bytes", 1, &b, err)) ||
        (st = pflref_json_string(p, pp, &path, err)) ||
        (st = pflref_json_string(h, hp, &hex, err)))
        return st;
    if (path[0] == '\0')
        return pflref_error_set(err, PFLREF_EINVAL, pp, "the path is empty");
    int hex_ok = strlen(hex) == 64;
    for (size_t i = 0; hex_ok && i < 64; i++)
        hex_ok = (hex[i] >= '0' && hex[i] <= '9') ||
                 (hex[i] >= 'a' && hex[i] <= 'f');
    if (!hex_ok)
        return pflref_error_set(err, PFLREF_EINVAL, hp,
                                "expected 64 lower-case hex digits (the "
                                "SHA-256 of %s, as sha256sum prints it)",
                                path);
    if (!json_is_integer(b) || json_integer_value(b) < 0)
        return pflref_error_set(err, PFLREF_EINVAL, bp,
                                "expected the size of %s, an integer >= 0",
                                path);
    return PFLREF_OK;
}

/* "array_files" of root, when present: well formed, each path once. */
static pflref_status read_manifest(pflref_arrays *a, const json_t *root,
                                   pflref_error *err)
{
    const json_t *m = json_object_get(root, "array_files");
    if (m == NULL)
        return PFLREF_OK;
    size_t n;
    pflref_status st = pflref_json_array(m, "array_files", 0, &n, err);
    for (size_t j = 0; st == PFLREF_OK && j < n; j++) {
        char where[PFLREF_WHERE_MAX];
        pflref_json_index_path(where, sizeof where, "array_files", j);
        st = manifest_entry(json_array_get(m, j), where, err);
        const char *pj = json_string_value(
            json_object_get(json_array_get(m, j), "path"));
        for (size_t i = 0; st == PFLREF_OK && i < j; i++)
            if (strcmp(json_string_value(json_object_get(
                           json_array_get(m, i), "path")), pj) == 0)
                st = pflref_error_set(err, PFLREF_EINVAL, where,
                                      "lists %s a second time (it is "
                                      "array_files[%zu])", pj, i);
    }
    a->manifest = m;
    a->hash = 1;
    return st;
}

/* pflref_arrays_open and _open_listed. */
static pflref_status arrays_open(pflref_arrays *a, const json_t *root,
                                 const char *base_dir, int listed_only,
                                 pflref_error *err)
{
    pflref_arrays_init(a, base_dir, 0);
    a->listed_only = listed_only;
    pflref_status st = read_manifest(a, root, err);
    const json_t *tv = json_object_get(root, "trajectory_values");
    if (st != PFLREF_OK || tv == NULL)
        return st;
    if (!json_is_string(tv))
        return pflref_error_set(err, PFLREF_EINVAL, "trajectory_values",
                                "expected a reference to a 1-D array of "
                                "floats (a .npy path or ARCHIVE.npz:MEMBER), "
                                "found %s", pflref_json_type_name(tv));
    static const pflref_array_shape any = {.rank = 1, .sym = {"n"}};
    const double *data;
    size_t shape[2];
    st = pflref_arrays_load(a, json_string_value(tv), "trajectory_values",
                            &any, &data, shape, err);
    if (st == PFLREF_OK) {
        a->traj = a->cur;          /* held until pflref_arrays_free */
        a->cur = (pflref_npy_array){.data = NULL};
        snprintf(a->traj_file, sizeof a->traj_file, "%s",
                 json_string_value(tv));
    }
    return st;
}

pflref_status pflref_arrays_open(pflref_arrays *a, const json_t *root,
                                 const char *base_dir, pflref_error *err)
{
    return arrays_open(a, root, base_dir, 0, err);
}

pflref_status pflref_arrays_open_listed(pflref_arrays *a, const json_t *root,
                                        const char *base_dir,
                                        pflref_error *err)
{
    return arrays_open(a, root, base_dir, 1, err);
}

pflref_status pflref_arrays_note(pflref_arrays *a, const pflref_data_file *f,
                                 const char *where, pflref_error *err)
{
    int known;
    pflref_array_file *e = file_entry(a, f->path, where, &known);
    if (e == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    if (!known) {
        memcpy(e->f.sha256, f->sha256, sizeof e->f.sha256);
        e->f.bytes = f->bytes;
    }
    return PFLREF_OK;
}

/* Member key of the range v at `where` (of `file`, for messages): an
 * integer >= lo into *out. */
static pflref_status range_member(const json_t *v, const char *where,
                                  const char *key, json_int_t lo,
                                  const char *file, size_t *out,
                                  pflref_error *err)
{
    char p[PFLREF_WHERE_MAX];
    pflref_json_key_path(p, sizeof p, where, key);
    json_t *x;
    pflref_status st = pflref_json_member(v, where, key, 1, &x, err);
    if (st != PFLREF_OK)
        return st;
    if (!json_is_integer(x))
        return pflref_error_set(err, PFLREF_EINVAL, p,
                                "%s must be an integer >= %d, found %s (a "
                                "range of %s)", key, (int)lo,
                                pflref_json_type_name(x), file);
    const json_int_t n = json_integer_value(x);
    if (n < lo)
        return pflref_error_set(err, PFLREF_EINVAL, p,
                                "%s must be an integer >= %d, found %lld (a "
                                "range of %s)", key, (int)lo, (long long)n,
                                file);
    *out = (size_t)n;
    return PFLREF_OK;
}

pflref_status pflref_arrays_range(const pflref_arrays *a, const json_t *v,
                                  const char *where, const double **data,
                                  size_t *n, pflref_error *err)
{
    static const char *const keys[] = {"offset", "count", NULL};
    const int have = a != NULL && a->traj.data != NULL;
    const char *file = have ? a->traj_file : "trajectory_values";
    size_t off, count;
    pflref_status st;
    if ((st = pflref_json_object(v, where, keys, err)) ||
        (st = range_member(v, where, "offset", 0, file, &off, err)) ||
        (st = range_member(v, where, "count", 1, file, &count, err)))
        return st;
    if (!have)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "a ranged value {offset, count} takes its "
                                "numbers from the top-level "
                                "\"trajectory_values\", which the document "
                                "does not have");
    const size_t len = a->traj.h.count;
    if (off > len || count > len - off)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "{offset %zu, count %zu} reaches past the "
                                "%zu numbers of %s (trajectory_values)", off,
                                count, len, a->traj_file);
    *data = a->traj.data + off;
    *n = count;
    return PFLREF_OK;
}

pflref_status pflref_arrays_close(const pflref_arrays *a, pflref_error *err)
{
    if (a->manifest == NULL)
        return PFLREF_OK;
    const json_t *m = a->manifest;
    for (size_t j = 0; j < json_array_size(m); j++) {
        const json_t *e = json_array_get(m, j);
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *hex = json_string_value(json_object_get(e, "sha256"));
        const json_int_t bytes = json_integer_value(json_object_get(e,
                                                                   "bytes"));
        char where[PFLREF_WHERE_MAX];
        pflref_json_index_path(where, sizeof where, "array_files", j);
        const pflref_array_file *f = NULL;
        for (size_t i = 0; i < a->n_files && f == NULL; i++)
            if (strcmp(a->files[i].f.path, path) == 0)
                f = &a->files[i];
        if (f == NULL)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "lists %s, which no field of the "
                                    "document references", path);
        if ((json_int_t)f->f.bytes != bytes)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s (named by %s) has %llu bytes, the "
                                    "manifest says %lld (the file changed "
                                    "since the document was written)", path,
                                    f->where, f->f.bytes, (long long)bytes);
        if (strcmp(f->f.sha256, hex) != 0)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s (named by %s) has SHA-256 %s, the "
                                    "manifest says %s (the file changed "
                                    "since the document was written)", path,
                                    f->where, f->f.sha256, hex);
    }
    for (size_t i = 0; i < a->n_files; i++)
        if (listed(m, a->files[i].f.path) < 0)
            return pflref_error_set(err, PFLREF_EINVAL, "array_files",
                                    "%s (named by %s) is not listed: the "
                                    "manifest lists every file the document "
                                    "references", a->files[i].f.path,
                                    a->files[i].where);
    return PFLREF_OK;
}

pflref_status pflref_arrays_take_files(pflref_arrays *a,
                                       pflref_data_file **files, size_t *n,
                                       pflref_error *err)
{
    *files = NULL;
    *n = 0;
    if (a->n_files == 0)
        return PFLREF_OK;
    pflref_data_file *out = malloc(a->n_files * sizeof *out);
    if (out == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init", "out of memory");
    for (size_t i = 0; i < a->n_files; i++)
        out[i] = a->files[i].f;
    free(a->files);
    a->files = NULL;
    *files = out;
    *n = a->n_files;
    a->n_files = 0;
    return PFLREF_OK;
}
