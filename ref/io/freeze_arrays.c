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
 * spec.init's arrays are read from the vector's JSON (they are P-sized
 * or k × P); the expected side's from the run's own numbers, through the
 * result writer's pieces (pflref_freeze_files_plan: the result's text
 * names them by reference from the start, ref/io/result_files.c), so a
 * thousand clients' final.v is never printed and parsed back.
 * Files are written first, each through the guarded writer and the
 * result writer's .npy step (pflref_npy_write_step → ref/io/write.c), the
 * vector last (the caller);
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

/* The pieces (rows × cols numbers in all; cols 0: 1-D) into
 * STEM.arrays/NAME.npy through the result writer's .npy step (the bytes
 * np.save writes); *ref := its path as the vector names it; the manifest
 * gets its entry. */
static pflref_status write_pieces(pflref_freeze_files *ff, const char *name,
                                  const pflref_npy_piece *pieces,
                                  size_t n_pieces, size_t rows, size_t cols,
                                  json_t **ref, pflref_error *err)
{
    char rel[PFLREF_PATH_MAX], full[PFLREF_PATH_MAX];
    snprintf(rel, sizeof rel, "%s/%s.npy", ff->rel_dir, name);
    snprintf(full, sizeof full, "%s/%s.npy", ff->full_dir, name);
    char **grown = realloc(ff->written, (ff->n_written + 1) * sizeof *grown);
    if (grown == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    ff->written = grown;
    char *kept = strdup(full);   /* for undo, held before the file exists */
    if (kept == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    pflref_npy_file f = {.rows = rows, .cols = cols, .pieces = pieces,
                         .n_pieces = n_pieces, .sha256 = "", .bytes = 0};
    pflref_status st = make_folder(ff, err);
    if (st == PFLREF_OK)
        st = pflref_write_file_with(full, pflref_npy_write_step, &f, err);
    if (st != PFLREF_OK) {
        free(kept);
        return st;
    }
    ff->written[ff->n_written++] = kept;
    if (ff->manifest == NULL)
        ff->manifest = json_array();
    json_t *entry = json_pack("{s:s, s:s, s:I}", "path", rel, "sha256",
                              f.sha256, "bytes", (json_int_t)f.bytes);
    *ref = json_string(rel);
    if (ff->manifest == NULL || entry == NULL || *ref == NULL ||
        json_array_append_new(ff->manifest, entry) != 0)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    return PFLREF_OK;
}

/* x (rows × cols; cols 0: 1-D) into STEM.arrays/NAME.npy, as
 * write_pieces. */
static pflref_status write_file(pflref_freeze_files *ff, const char *name,
                                const double *x, size_t rows, size_t cols,
                                json_t **ref, pflref_error *err)
{
    const pflref_npy_piece one = {x, rows * (cols ? cols : 1)};
    return write_pieces(ff, name, &one, 1, rows, cols, ref, err);
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

pflref_status pflref_freeze_files_plan(pflref_freeze_files *ff,
                                       const pflref_spec *spec,
                                       const pflref_run_result *res,
                                       const pflref_trajectory *tj,
                                       pflref_result_refs *refs,
                                       pflref_error *err)
{
    *refs = (pflref_result_refs){.files = NULL, .n_files = 0};
    pflref_result_arrays(spec, res, tj, ff->a);
    ff->tj = tj;
    /* the trajectory stays inline when a record written has no value (a
     * range has a count of at least 1) */
    int all_valued = 1;
    for (size_t k = 0; tj != NULL && k < tj->count; k++)
        if (pflref_result_record_written(tj, k) && tj->records[k].len == 0)
            all_valued = 0;
    static const pflref_result_slot expected[] = {
        PFLREF_RA_TRAJECTORY, PFLREF_RA_FINAL_W, PFLREF_RA_FINAL_V,
        PFLREF_RA_FINAL_ALPHA};
    for (size_t q = 0; q < sizeof expected / sizeof *expected; q++) {
        const pflref_result_slot s = expected[q];
        if (!pflref_result_slot_to_file(&ff->a[s], ff->inline_max) ||
            (s == PFLREF_RA_TRAJECTORY && !all_valued))
            continue;
        char rel[PFLREF_PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s.npy", ff->rel_dir,
                 s == PFLREF_RA_TRAJECTORY ? "trajectory" : ff->a[s].name);
        if ((ff->ref[s] = strdup(rel)) == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, ff->a[s].name,
                                    "out of memory");
        refs->ref[s] = ff->ref[s];
    }
    return PFLREF_OK;
}

/* The planned slot s from the run's numbers into its file (the body names
 * it already: the result text was written with its reference). */
static pflref_status write_slot(pflref_freeze_files *ff,
                                pflref_result_slot s, pflref_error *err)
{
    if (ff->ref[s] == NULL)
        return PFLREF_OK;
    const pflref_result_array *a = &ff->a[s];
    pflref_npy_piece one;
    size_t n;
    pflref_npy_piece *pieces = pflref_result_pieces(a, s, ff->tj, &one, &n);
    if (pieces == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, a->name, "out of memory");
    json_t *ref = NULL;
    const char *name = s == PFLREF_RA_TRAJECTORY ? "trajectory" : a->name;
    pflref_status st = write_pieces(ff, name, pieces, n, a->rows, a->cols,
                                    &ref, err);
    if (pieces != &one)
        free(pieces);
    json_decref(ref);
    return st;
}

pflref_status pflref_freeze_files_move(pflref_freeze_files *ff, json_t *body,
                                       pflref_error *err)
{
    json_t *init = json_object_get(json_object_get(body, "spec"), "init");
    json_t *hn = json_object_get(init, "hypernetwork");
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
    };
    pflref_status st = PFLREF_OK;
    for (size_t i = 0; st == PFLREF_OK && i < sizeof members / sizeof *members;
         i++)
        st = move_member(ff, members[i].obj, members[i].key, members[i].name,
                         err);
    /* the expected side, in the order the reader first names it: the
     * trajectory's values, then the final state */
    const char *tv = ff->ref[PFLREF_RA_TRAJECTORY];
    if (st == PFLREF_OK && tv != NULL &&
        json_object_set_new(body, "trajectory_values", json_string(tv)) != 0)
        st = pflref_error_set(err, PFLREF_ENOMEM, "trajectory_values",
                              "out of memory");
    static const pflref_result_slot expected[] = {
        PFLREF_RA_TRAJECTORY, PFLREF_RA_FINAL_W, PFLREF_RA_FINAL_V,
        PFLREF_RA_FINAL_ALPHA};
    for (size_t q = 0; st == PFLREF_OK && q < sizeof expected / sizeof *expected;
         q++)
        st = write_slot(ff, expected[q], err);
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
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++)
        free(ff->ref[s]);
    *ff = (pflref_freeze_files){.inline_max = 0};
}
