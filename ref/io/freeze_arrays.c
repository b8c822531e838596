/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/freeze_arrays.c: a frozen vector's large arrays moved into .npy
 * files beside it (`pflref freeze --arrays files`, pflref_freeze_write;
 * ref/io/freeze.h; docs/formats.md, "Golden vectors in files"; issue 30).
 *
 * A golden vector stays JSON unless it is large enough to need files: a
 * thousand clients of an MNIST-shaped model give final.v 1000 × 7850
 * doubles, 160 MB of JSON that take 20 s to read, against 63 MB of '<f8'
 * that the reader maps and copies once (ref/io/arrays.c).  In the files
 * form, every array below with more numbers than inline_max goes to
 * STEM.arrays/NAME.npy beside the vector (STEM the vector's file name
 * without a final ".json"), and the vector names it by that path,
 * relative to its own folder:
 *
 *   spec.init.w, .cluster_models, .lora,      spec.init.w.npy, ...,
 *   .hypernetwork.W, .b, .v                   spec.init.hypernetwork.W.npy
 *   expected.final.w, .v, .alpha              final.w.npy, final.v.npy,
 *                                             final.alpha.npy
 *   every value of expected.trajectory,       trajectory.npy: each record's
 *   when they number more than inline_max     value becomes {offset, count}
 *                                             and the vector's top-level
 *                                             "trajectory_values" names it
 *
 * The vector then carries "array_files": {path, sha256, bytes} of every
 * file, in the order written (which is the order the reader first names
 * them: the spec's init, trajectory_values, the final state), and its
 * content hash covers that manifest (ref/io/freeze.c), so it covers every
 * byte of the files.  What stays inline: a generator's clients, which the
 * frozen spec writes out (a problem that large is data a user keeps in
 * .npy files already, and the spec names them), init.lora_ranks
 * (integers), and an array whose rows differ in length.
 *
 * Files are written first, each through the guarded writer
 * (pflref_npy_write_f8 → ref/io/write.c), the vector last (the caller);
 * pflref_freeze_files_undo removes every file written and the folder when
 * it was made here, so a failure leaves nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pflref/io.h"
#include "io/freeze.h"
#include "io/json.h"
#include "io/npy_write.h"
#include "io/sha256.h"

void pflref_freeze_files_init(pflref_freeze_files *ff,
                              const char *vector_path, size_t inline_max)
{
    *ff = (pflref_freeze_files){.inline_max = inline_max};
    const char *slash = strrchr(vector_path, '/');
    const char *name = slash != NULL ? slash + 1 : vector_path;
    size_t stem = strlen(name);
    if (stem > 5 && strcmp(name + stem - 5, ".json") == 0)
        stem -= 5;
    snprintf(ff->rel_dir, sizeof ff->rel_dir, "%.*s.arrays", (int)stem,
             name);
    char folder[PFLREF_PATH_MAX];
    pflref_file_folder(vector_path, folder, sizeof folder);
    snprintf(ff->full_dir, sizeof ff->full_dir, "%s/%s", folder,
             ff->rel_dir);
}

/* The folder STEM.arrays, made on the first file (made_dir: by us). */
static pflref_status make_folder(pflref_freeze_files *ff, pflref_error *err)
{
    if (ff->have_dir)
        return PFLREF_OK;
    struct stat sb;
    if (mkdir(ff->full_dir, 0777) == 0)
        ff->made_dir = 1;
    else if (errno != EEXIST)
        return pflref_error_set(err, PFLREF_EIO, "opt.arrays",
                                "cannot make the folder %s for the vector's "
                                "arrays: %s", ff->full_dir, strerror(errno));
    else if (stat(ff->full_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return pflref_error_set(err, PFLREF_EIO, "opt.arrays",
                                "%s, where the vector's arrays go, exists "
                                "and is not a folder", ff->full_dir);
    ff->have_dir = 1;
    return PFLREF_OK;
}

/* v's shape when it is numbers: a vector (*cols = 0) or a matrix of equal
 * rows of numbers; 0 when it is neither (it stays inline). */
static int numbers_shape(const json_t *v, size_t *rows, size_t *cols)
{
    *rows = json_array_size(v);
    *cols = 0;
    if (!json_is_array(v) || *rows == 0)
        return 0;
    const json_t *r0 = json_array_get(v, 0);
    if (json_is_array(r0))
        *cols = json_array_size(r0);
    for (size_t i = 0; i < *rows; i++) {
        const json_t *r = json_array_get(v, i);
        if (*cols == 0 && !json_is_number(r))
            return 0;
        if (*cols == 0)
            continue;
        if (!json_is_array(r) || json_array_size(r) != *cols)
            return 0;
        for (size_t j = 0; j < *cols; j++)
            if (!json_is_number(json_array_get(r, j)))
                return 0;
    }
    return 1;
}

/* x := v's numbers, row-major (shape from numbers_shape). */
static void flatten(const json_t *v, size_t rows, size_t cols, double *x)
{
    for (size_t i = 0; i < rows; i++) {
        const json_t *r = json_array_get(v, i);
        if (cols == 0)
            x[i] = json_number_value(r);
        for (size_t j = 0; j < cols; j++)
            x[i * cols + j] = json_number_value(json_array_get(r, j));
    }
}

/* x (rows × cols; cols 0: 1-D) into STEM.arrays/NAME.npy; *ref := its
 * path as the vector names it (malloc'd); the manifest gets its entry. */
static pflref_status write_file(pflref_freeze_files *ff, const char *name,
                                const double *x, size_t rows, size_t cols,
                                json_t **ref, pflref_error *err)
{
    char rel[PFLREF_PATH_MAX], full[PFLREF_PATH_MAX], sha[65];
    unsigned long long bytes;
    snprintf(rel, sizeof rel, "%s/%s.npy", ff->rel_dir, name);
    snprintf(full, sizeof full, "%s/%s.npy", ff->full_dir, name);
    char **grown = realloc(ff->written, (ff->n_written + 1) * sizeof *grown);
    if (grown == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    ff->written = grown;
    char *kept = strdup(full);   /* for undo, held before the file exists */
    if (kept == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    pflref_status st = make_folder(ff, err);
    if (st == PFLREF_OK)
        st = pflref_npy_write_f8(full, x, rows, cols, sha, &bytes, err);
    if (st != PFLREF_OK) {
        free(kept);
        return st;
    }
    ff->written[ff->n_written++] = kept;
    if (ff->manifest == NULL)
        ff->manifest = json_array();
    json_t *entry = json_pack("{s:s, s:s, s:I}", "path", rel, "sha256", sha,
                              "bytes", (json_int_t)bytes);
    *ref = json_string(rel);
    if (ff->manifest == NULL || entry == NULL || *ref == NULL ||
        json_array_append_new(ff->manifest, entry) != 0)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    return PFLREF_OK;
}

/* obj[key], when numbers more than inline_max, into the file NAME.npy and
 * replaced by its reference. */
static pflref_status move_member(pflref_freeze_files *ff, json_t *obj,
                                 const char *key, const char *name,
                                 pflref_error *err)
{
    const json_t *v = json_object_get(obj, key);
    size_t rows, cols;
    if (v == NULL || !numbers_shape(v, &rows, &cols) ||
        rows * (cols ? cols : 1) <= ff->inline_max)
        return PFLREF_OK;
    double *x = malloc(rows * (cols ? cols : 1) * sizeof *x);
    if (x == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    flatten(v, rows, cols, x);
    json_t *ref = NULL;
    pflref_status st = write_file(ff, name, x, rows, cols, &ref, err);
    free(x);
    if (st == PFLREF_OK && json_object_set_new(obj, key, ref) != 0)
        st = pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    else if (st != PFLREF_OK)
        json_decref(ref);
    return st;
}

/* Every value of the records, when they number more than inline_max in
 * all, into trajectory.npy in record order; each record's value becomes
 * its range {offset, count}; *ref := the file's reference (NULL: kept
 * inline). */
static pflref_status move_trajectory(pflref_freeze_files *ff, json_t *list,
                                     json_t **ref, pflref_error *err)
{
    *ref = NULL;
    size_t total = 0, rows, cols;
    for (size_t r = 0; r < json_array_size(list); r++) {
        const json_t *v = json_object_get(json_array_get(list, r), "value");
        if (!numbers_shape(v, &rows, &cols) || cols != 0)
            return PFLREF_OK;   /* not a list of vectors: left inline */
        total += rows;
    }
    if (total == 0 || total <= ff->inline_max)
        return PFLREF_OK;
    double *x = malloc(total * sizeof *x);
    if (x == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "trajectory",
                                "out of memory");
    size_t off = 0;
    for (size_t r = 0; r < json_array_size(list); r++) {
        const json_t *v = json_object_get(json_array_get(list, r), "value");
        flatten(v, json_array_size(v), 0, x + off);
        off += json_array_size(v);
    }
    pflref_status st = write_file(ff, "trajectory", x, total, 0, ref, err);
    free(x);
    off = 0;
    for (size_t r = 0; st == PFLREF_OK && r < json_array_size(list); r++) {
        json_t *rec = json_array_get(list, r);
        const size_t n = json_array_size(json_object_get(rec, "value"));
        if (json_object_set_new(rec, "value",
                                json_pack("{s:I, s:I}", "offset",
                                          (json_int_t)off, "count",
                                          (json_int_t)n)) != 0)
            st = pflref_error_set(err, PFLREF_ENOMEM, "trajectory",
                                  "out of memory");
        off += n;
    }
    return st;
}

pflref_status pflref_freeze_files_move(pflref_freeze_files *ff, json_t *body,
                                       pflref_error *err)
{
    json_t *init = json_object_get(json_object_get(body, "spec"), "init");
    json_t *hn = json_object_get(init, "hypernetwork");
    json_t *exp = json_object_get(body, "expected");
    json_t *fin = json_object_get(exp, "final");
    const struct {
        json_t *obj;
        const char *key, *name;
    } members[] = {
        {init, "w", "spec.init.w"},
        {init, "cluster_models", "spec.init.cluster_models"},
        {init, "lora", "spec.init.lora"},
        {hn, "W", "spec.init.hypernetwork.W"},
        {hn, "b", "spec.init.hypernetwork.b"},
        {hn, "v", "spec.init.hypernetwork.v"},
    }, finals[] = {
        {fin, "w", "final.w"},
        {fin, "v", "final.v"},
        {fin, "alpha", "final.alpha"},
    };
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; st == PFLREF_OK && i < sizeof members / sizeof *members;
         i++)
        st = move_member(ff, members[i].obj, members[i].key, members[i].name,
                         err);
    json_t *values = NULL;
    if (st == PFLREF_OK)
        st = move_trajectory(ff, json_object_get(exp, "trajectory"), &values,
                             err);
    if (st == PFLREF_OK && values != NULL &&
        json_object_set_new(body, "trajectory_values", values) != 0)
        st = pflref_error_set(err, PFLREF_ENOMEM, "trajectory_values",
                              "out of memory");
    for (size_t i = 0; st == PFLREF_OK && i < sizeof finals / sizeof *finals;
         i++)
        st = move_member(ff, finals[i].obj, finals[i].key, finals[i].name,
                         err);
    if (st == PFLREF_OK && ff->manifest != NULL &&
        json_object_set(body, "array_files", ff->manifest) != 0)
        st = pflref_error_set(err, PFLREF_ENOMEM, "array_files",
                              "out of memory");
    return st;
}

/* The names of the files pflref_freeze_files_move writes (NAME.npy). */
static const char *const FILE_NAMES[] = {
    "spec.init.w", "spec.init.cluster_models", "spec.init.lora",
    "spec.init.hypernetwork.W", "spec.init.hypernetwork.b",
    "spec.init.hypernetwork.v", "trajectory", "final.w", "final.v",
    "final.alpha"};

/* 1 when leaf is NAME.npy for a NAME of FILE_NAMES. */
static int is_file_name(const char *leaf)
{
    for (size_t i = 0; i < sizeof FILE_NAMES / sizeof *FILE_NAMES; i++) {
        const size_t n = strlen(FILE_NAMES[i]);
        if (strncmp(leaf, FILE_NAMES[i], n) == 0 &&
            strcmp(leaf + n, ".npy") == 0)
            return 1;
    }
    return 0;
}

/* 1 when the earlier vector root is one pflref freeze wrote. */
static int frozen_by_pflref(const json_t *root)
{
    const char *fmt = json_string_value(json_object_get(root, "format"));
    const char *kind = json_string_value(
        json_object_get(json_object_get(root, "provenance"), "kind"));
    return fmt != NULL && strcmp(fmt, PFLREF_GOLDEN_FORMAT) == 0 &&
           kind != NULL && strcmp(kind, "reference") == 0;
}

/* Keep full (malloc'd) in ff's stale list; 0 when out of memory. */
static int keep_stale(pflref_freeze_files *ff, char *full)
{
    char **grown = realloc(ff->stale, (ff->n_stale + 1) * sizeof *grown);
    if (grown == NULL) {
        free(full);
        return 0;
    }
    ff->stale = grown;
    ff->stale[ff->n_stale++] = full;
    return 1;
}

void pflref_freeze_files_find_stale(pflref_freeze_files *ff,
                                    const char *vector_path)
{
    struct stat sb;
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    if (stat(ff->full_dir, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
        pflref_read_file(vector_path, &text, &len, NULL) != PFLREF_OK ||
        pflref_json_parse(text, len, "", &root, NULL) != PFLREF_OK) {
        free(text);
        return;
    }
    free(text);
    const json_t *list = frozen_by_pflref(root)
                             ? json_object_get(root, "array_files") : NULL;
    const size_t rlen = strlen(ff->rel_dir);
    for (size_t k = 0; k < json_array_size(list); k++) {
        const json_t *f = json_array_get(list, k);
        const char *ref = json_string_value(json_object_get(f, "path"));
        const char *sha = json_string_value(json_object_get(f, "sha256"));
        const json_t *bytes = json_object_get(f, "bytes");
        if (ref == NULL || sha == NULL || !json_is_integer(bytes) ||
            strncmp(ref, ff->rel_dir, rlen) != 0 || ref[rlen] != '/' ||
            !is_file_name(ref + rlen + 1))
            continue;
        char full[PFLREF_PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", ff->full_dir, ref + rlen + 1);
        char *kept;
        if (pflref_sha256_file_is(full, json_integer_value(bytes), sha) &&
            ((kept = strdup(full)) == NULL || !keep_stale(ff, kept)))
            break;   /* out of memory: remove fewer, never more */
    }
    json_decref(root);
}

void pflref_freeze_files_remove_stale(pflref_freeze_files *ff)
{
    int removed = 0;
    for (size_t i = 0; i < ff->n_stale; i++) {
        int rewritten = 0;
        for (size_t j = 0; j < ff->n_written && !rewritten; j++)
            rewritten = strcmp(ff->stale[i], ff->written[j]) == 0;
        if (!rewritten && unlink(ff->stale[i]) == 0)
            removed = 1;
    }
    if (removed && ff->n_written == 0)
        rmdir(ff->full_dir);   /* only when empty */
}

void pflref_freeze_files_undo(pflref_freeze_files *ff)
{
    for (size_t i = 0; i < ff->n_written; i++)
        unlink(ff->written[i]);
    if (ff->made_dir)
        rmdir(ff->full_dir);
    ff->made_dir = 0;
}

void pflref_freeze_files_free(pflref_freeze_files *ff)
{
    for (size_t i = 0; i < ff->n_written; i++)
        free(ff->written[i]);
    free(ff->written);
    for (size_t i = 0; i < ff->n_stale; i++)
        free(ff->stale[i]);
    free(ff->stale);
    json_decref(ff->manifest);
    *ff = (pflref_freeze_files){.inline_max = 0};
}
