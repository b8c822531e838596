/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result_files.c: writing a result to a file, its arrays inline or
 * in the files form (pflref_result_write, pflref_result_write_check in
 * pflref/io.h; docs/formats.md, "Arrays in files").
 *
 * The files form, for a result at D/STEM.json (STEM: the file name less a
 * final ".json"):
 *   1. choose: each array of pflref_result_slot with more than inline_max
 *      numbers goes to D/STEM.arrays/NAME.npy (the trajectory's values
 *      counted together); none: the inline result, no folder;
 *   2. refuse what would fail before anything is written: a result the
 *      writer cannot print (pflref_result_check), a file name that is not
 *      UTF-8 (the JSON could not name the folder), the result file
 *      (pflref_write_file_check), D/STEM.arrays when it is not a folder or
 *      cannot be written into, and each NAME.npy already there that the
 *      writer would refuse (a FIFO, a folder, a read-only file);
 *   3. make D/STEM.arrays when absent (0777 less the umask);
 *   4. write each file through the one writer (pflref_write_file_with,
 *      pflref_npy_write_step: the bytes np.save writes, their SHA-256 and
 *      size computed on the way), in document order;
 *   5. write the JSON last, each file named "STEM.arrays/NAME.npy" (the
 *      reference, relative to the JSON's folder), listed in "array_files";
 *   6. on a failure at 3-5, remove the files step 4 wrote and the folder
 *      if step 3 made it: nothing this call wrote is left.  A file of the
 *      same name that was there before was replaced when its new version
 *      was written, so it is gone too; step 2 makes that the case only of
 *      failures no check can foresee (a full disk, a file size limit).
 * The folder is the one next to path as given (a symbolic link at path
 * has its file replaced, the folder stays beside the link, where a reader
 * of path resolves the references).
 *
 * The previous result's files (either form, before step 2): when path
 * already holds a result pflref wrote (format pflref-result/1, with
 * "build") whose manifest "array_files" names files in D/STEM.arrays that
 * the new result does not write, each such file is removed once the new
 * JSON is in place, and the folder with them when the new result is
 * inline and the folder is left empty.  A file counts only when it is
 * what that result says pflref wrote: its entry is "STEM.arrays/NAME.npy"
 * with NAME one of pflref_result_slot's names, and the file there is a
 * regular file (not a link) of the entry's size and SHA-256.  Anything
 * else in the folder (files of other names, files changed since, a
 * manifest that is not pflref's) is left alone; a failure of the write
 * removes nothing of the previous result's beyond what step 6 says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pflref/io.h"
#include "io/emit.h"
#include "io/json.h"
#include "io/npy_write.h"
#include "io/result.h"
#include "io/sha256.h"

/* The folder of the files form (".arrays") and the file suffix. */
#define ARRAYS_SUFFIX ".arrays"
#define NPY_SUFFIX ".npy"

/* Where the files of a result at path go. */
typedef struct {
    char *folder;     /* D/STEM.arrays, as path names D                 */
    char *prefix;     /* "STEM.arrays/": the start of each reference    */
} arrays_place;

static void place_free(arrays_place *pl)
{
    free(pl->folder);
    free(pl->prefix);
}

/* s[0..n) followed by the NUL-terminated t, malloc'd (NULL: no memory). */
static char *concat(const char *s, size_t n, const char *t)
{
    const size_t m = strlen(t);
    char *out = malloc(n + m + 1);
    if (out != NULL) {
        memcpy(out, s, n);
        memcpy(out + n, t, m + 1);
    }
    return out;
}

/* The folder and the references' prefix for a result at path; STEM must
 * be UTF-8, as the JSON names it. */
static pflref_status place_of(const char *path, arrays_place *pl,
                              pflref_error *err)
{
    *pl = (arrays_place){NULL, NULL};
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    size_t stem = strlen(name);
    if (stem >= 5 && strcmp(name + stem - 5, ".json") == 0)
        stem -= 5;
    char *stem_dot = concat(name, stem, ARRAYS_SUFFIX "/");
    if (stem_dot == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    if (!pflref_emit_utf8_valid(stem_dot)) {
        free(stem_dot);
        return pflref_error_set(err, PFLREF_EINVAL, "output.arrays",
                                "the result file's name %s is not UTF-8, "
                                "so the JSON cannot name the folder of its "
                                "arrays (output.arrays is \"files\"); "
                                "choose a UTF-8 name", path);
    }
    pl->prefix = stem_dot;
    pl->folder = concat(path, (size_t)(name - path) + stem, ARRAYS_SUFFIX);
    if (pl->folder == NULL) {
        place_free(pl);
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    }
    return PFLREF_OK;
}

/* The folder, when it exists, is a folder (through a link too) pflref may
 * write into: *exists 1; absent: *exists 0; else refused, left as it is. */
static pflref_status check_folder(const char *folder, int *exists,
                                  pflref_error *err)
{
    struct stat sb;
    *exists = 0;
    if (lstat(folder, &sb) != 0) {
        if (errno == ENOENT)
            return PFLREF_OK;
        return pflref_error_set(err, PFLREF_EIO, folder, "cannot use %s: %s",
                                folder, strerror(errno));
    }
    if (S_ISLNK(sb.st_mode) && stat(folder, &sb) != 0)
        return pflref_error_set(err, PFLREF_EIO, folder,
                                "%s is a symbolic link to nothing (a "
                                "dangling link); the result's arrays go "
                                "into a folder of that name", folder);
    if (!S_ISDIR(sb.st_mode))
        return pflref_error_set(err, PFLREF_EIO, folder,
                                "%s exists and is not a folder (%s); the "
                                "result's arrays (output.arrays \"files\") "
                                "go into a folder of that name", folder,
                                S_ISREG(sb.st_mode)
                                    ? "a regular file"
                                    : pflref_file_kind(sb.st_mode));
    if (access(folder, W_OK | X_OK) != 0)
        return pflref_error_set(err, PFLREF_EIO, folder,
                                "cannot write into %s: %s", folder,
                                strerror(errno));
    *exists = 1;
    return PFLREF_OK;
}

pflref_status pflref_result_write_check(const char *path,
                                        const pflref_output_arrays *arrays,
                                        pflref_error *err)
{
    pflref_status st = pflref_write_file_check(path, err);
    if (st != PFLREF_OK || arrays == NULL ||
        arrays->form != PFLREF_ARRAYS_FILES)
        return st;
    arrays_place pl;
    int exists;
    st = place_of(path, &pl, err);
    if (st == PFLREF_OK)
        st = check_folder(pl.folder, &exists, err);
    place_free(&pl);
    return st;
}

/* ---- the previous result's files --------------------------------------- */

/* The files of the result at path (if it is one pflref wrote) that the new
 * result does not write (to_file[s] 0), by slot: stale[s] 1 and file[s]
 * (malloc'd) its path.  Nothing found is no error: the result at path may
 * be absent, unreadable, not a result, or without files; a[s].name are the
 * slots' names. */
static void find_stale(const char *path, const arrays_place *pl,
                       const pflref_result_array a[PFLREF_RA_COUNT],
                       const int to_file[PFLREF_RA_COUNT],
                       int stale[PFLREF_RA_COUNT],
                       char *file[PFLREF_RA_COUNT])
{
    struct stat sb;
    if (stat(pl->folder, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
        stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return;
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    if (pflref_read_file(path, &text, &len, NULL) != PFLREF_OK ||
        pflref_json_parse(text, len, "", &root, NULL) != PFLREF_OK) {
        free(text);
        return;
    }
    free(text);
    const json_t *fmt = json_object_get(root, "format");
    const json_t *list = json_object_get(root, "array_files");
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), PFLREF_RESULT_FORMAT) != 0 ||
        !json_is_object(json_object_get(root, "build")))
        list = NULL;   /* not a result pflref wrote */
    const size_t plen = strlen(pl->prefix), flen = strlen(pl->folder);
    for (size_t k = 0; k < json_array_size(list); k++) {
        const json_t *f = json_array_get(list, k);
        const char *ref = json_string_value(json_object_get(f, "path"));
        const char *sha = json_string_value(json_object_get(f, "sha256"));
        const json_t *bytes = json_object_get(f, "bytes");
        if (ref == NULL || sha == NULL || !json_is_integer(bytes) ||
            strncmp(ref, pl->prefix, plen) != 0)
            continue;
        const char *leaf = ref + plen;
        for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
            const size_t n = strlen(a[s].name);
            if (stale[s] || to_file[s] || strncmp(leaf, a[s].name, n) != 0 ||
                strcmp(leaf + n, NPY_SUFFIX) != 0)
                continue;
            char *full = concat(pl->folder, flen, "/");
            file[s] = full != NULL ? concat(full, flen + 1, leaf) : NULL;
            free(full);
            stale[s] = file[s] != NULL &&
                       pflref_sha256_file_is(file[s], json_integer_value(bytes), sha);
            if (!stale[s]) {
                free(file[s]);
                file[s] = NULL;
            }
        }
    }
    json_decref(root);
}

/* After the new JSON is in place: remove the stale files, then the folder
 * when the new result has none there (inline) and it is empty (rmdir
 * removes only an empty folder, and no link). */
static void remove_stale(const arrays_place *pl,
                         const int stale[PFLREF_RA_COUNT],
                         char *file[PFLREF_RA_COUNT], int inline_form,
                         pflref_status st)
{
    int removed = 0;
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
        if (st == PFLREF_OK && stale[s] && unlink(file[s]) == 0)
            removed = 1;
        free(file[s]);
        file[s] = NULL;
    }
    if (st == PFLREF_OK && removed && inline_form)
        rmdir(pl->folder);
}

/* ---- the files form ----------------------------------------------------- */

/* The state of one files-form write: what goes where, what was written. */
typedef struct {
    pflref_result_array a[PFLREF_RA_COUNT];
    int to_file[PFLREF_RA_COUNT];          /* the slots written as files  */
    char *file[PFLREF_RA_COUNT];           /* D/STEM.arrays/NAME.npy      */
    char *ref[PFLREF_RA_COUNT];            /* STEM.arrays/NAME.npy        */
    int written[PFLREF_RA_COUNT];          /* published by this call      */
    pflref_data_file manifest[PFLREF_RA_COUNT];
    size_t n_files;
    arrays_place place;
    int made_folder;                       /* step 3 made the folder      */
} files_job;

static size_t numbers_of(const pflref_result_array *a)
{
    return a->rows * (a->cols == 0 ? 1 : a->cols);
}

int pflref_result_slot_to_file(const pflref_result_array *a,
                               size_t inline_max)
{
    return a->present && numbers_of(a) > inline_max;
}

/* Step 1: the slots that go to files; 0 when none does. */
static int choose(files_job *j, size_t inline_max)
{
    int any = 0;
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
        j->to_file[s] = pflref_result_slot_to_file(&j->a[s], inline_max);
        any |= j->to_file[s];
    }
    return any;
}

/* The file and reference names of every chosen slot. */
static pflref_status name_files(files_job *j, pflref_error *err)
{
    const size_t flen = strlen(j->place.folder);
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
        if (!j->to_file[s])
            continue;
        char leaf[64];
        snprintf(leaf, sizeof leaf, "%s" NPY_SUFFIX, j->a[s].name);
        j->ref[s] = concat(j->place.prefix, strlen(j->place.prefix), leaf);
        j->file[s] = concat(j->place.folder, flen, "/");
        char *full = j->file[s] != NULL ? concat(j->file[s], flen + 1, leaf)
                                        : NULL;
        free(j->file[s]);
        j->file[s] = full;
        if (j->ref[s] == NULL || j->file[s] == NULL)
            return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                    "out of memory");
    }
    return PFLREF_OK;
}

/* Step 2: every refusal that can be seen before writing. */
static pflref_status precheck(files_job *j, const char *path,
                              const pflref_run_result *res,
                              const pflref_trajectory *tj, pflref_error *err)
{
    int exists;
    pflref_status st;
    if ((st = pflref_result_check(res, tj, err)) ||
        (st = place_of(path, &j->place, err)) ||
        (st = name_files(j, err)) ||
        (st = pflref_write_file_check(path, err)) ||
        (st = check_folder(j->place.folder, &exists, err)))
        return st;
    for (size_t s = 0; exists && s < PFLREF_RA_COUNT; s++)
        if (j->to_file[s] &&
            (st = pflref_write_file_check(j->file[s], err)) != PFLREF_OK)
            return st;
    if (!exists) {   /* step 3 */
        if (mkdir(j->place.folder, 0777) != 0)
            return pflref_error_set(err, PFLREF_EIO, j->place.folder,
                                    "cannot make the folder %s: %s",
                                    j->place.folder, strerror(errno));
        j->made_folder = 1;
    }
    return PFLREF_OK;
}

/* The trajectory's values in record order, as pieces (records whose
 * values follow each other in tj->values share one); *n their count. */
static pflref_npy_piece *trajectory_pieces(const pflref_trajectory *tj,
                                           size_t *n)
{
    *n = 0;
    pflref_npy_piece *p = malloc((tj->count > 0 ? tj->count : 1) * sizeof *p);
    for (size_t k = 0; p != NULL && k < tj->count; k++) {
        const pflref_record *rec = &tj->records[k];
        if (!pflref_result_record_written(tj, k) || rec->len == 0)
            continue;
        const double *x = tj->values + rec->offset;
        if (*n > 0 && p[*n - 1].x + p[*n - 1].n == x)
            p[*n - 1].n += rec->len;
        else
            p[(*n)++] = (pflref_npy_piece){x, rec->len};
    }
    return p;
}

pflref_npy_piece *pflref_result_pieces(const pflref_result_array *a,
                                       pflref_result_slot s,
                                       const pflref_trajectory *tj,
                                       pflref_npy_piece *one, size_t *n)
{
    if (s == PFLREF_RA_TRAJECTORY)
        return trajectory_pieces(tj, n);
    *one = (pflref_npy_piece){a->x, numbers_of(a)};
    *n = 1;
    return one;
}

/* Step 4 for slot s. */
static pflref_status write_array(files_job *j, size_t s,
                                 const pflref_trajectory *tj,
                                 pflref_error *err)
{
    const pflref_result_array *a = &j->a[s];
    pflref_npy_piece one;
    size_t n_pieces;
    pflref_npy_piece *pieces = pflref_result_pieces(
        a, (pflref_result_slot)s, tj, &one, &n_pieces);
    if (pieces == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, j->file[s],
                                "out of memory");
    pflref_npy_file f = {.rows = a->rows, .cols = a->cols, .pieces = pieces,
                         .n_pieces = n_pieces, .sha256 = "", .bytes = 0};
    pflref_status st =
        pflref_write_file_with(j->file[s], pflref_npy_write_step, &f, err);
    if (pieces != &one)
        free(pieces);
    if (st != PFLREF_OK)
        return st;
    j->written[s] = 1;
    pflref_data_file *m = &j->manifest[j->n_files++];
    m->path = j->ref[s];
    memcpy(m->sha256, f.sha256, sizeof m->sha256);
    m->bytes = f.bytes;
    return PFLREF_OK;
}

/* Step 6, then the job's memory. */
static void files_job_end(files_job *j, pflref_status st)
{
    for (size_t s = 0; s < PFLREF_RA_COUNT; s++) {
        if (st != PFLREF_OK && j->written[s])
            unlink(j->file[s]);
        free(j->file[s]);
        free(j->ref[s]);
    }
    if (st != PFLREF_OK && j->made_folder)
        rmdir(j->place.folder);
    place_free(&j->place);
}

/* Steps 2-6 for the chosen slots of j. */
static pflref_status write_files(files_job *j, const char *path,
                                 const pflref_spec *spec,
                                 const pflref_run_result *res,
                                 const pflref_trajectory *tj,
                                 const pflref_build_info *build,
                                 pflref_error *err)
{
    pflref_status st = precheck(j, path, res, tj, err);
    for (size_t s = 0; s < PFLREF_RA_COUNT && st == PFLREF_OK; s++)
        if (j->to_file[s])
            st = write_array(j, s, tj, err);
    char *text = NULL;
    size_t len = 0;
    if (st == PFLREF_OK) {
        pflref_result_refs refs = {.files = j->manifest,
                                   .n_files = j->n_files};
        for (size_t s = 0; s < PFLREF_RA_COUNT; s++)
            refs.ref[s] = j->to_file[s] ? j->ref[s] : NULL;
        st = pflref_result_text(spec, res, tj, build, &refs, &text, &len,
                                err);
    }
    if (st == PFLREF_OK)   /* step 5 */
        st = pflref_write_file_bytes(path, text, len, err);
    free(text);
    files_job_end(j, st);
    return st;
}

/* The inline form: the text alone. */
static pflref_status write_inline(const char *path, const pflref_spec *spec,
                                  const pflref_run_result *res,
                                  const pflref_trajectory *tj,
                                  const pflref_build_info *build,
                                  pflref_error *err)
{
    char *text = NULL;
    size_t len = 0;
    pflref_status st =
        pflref_result_text(spec, res, tj, build, NULL, &text, &len, err);
    if (st == PFLREF_OK)
        st = pflref_write_file_bytes(path, text, len, err);
    free(text);
    return st;
}

pflref_status pflref_result_write(const char *path, const pflref_spec *spec,
                                  const pflref_run_result *res,
                                  const pflref_trajectory *tj,
                                  const pflref_build_info *build,
                                  const pflref_output_arrays *arrays,
                                  pflref_error *err)
{
    const char *null_arg = path == NULL    ? "path"
                           : spec == NULL  ? "spec"
                           : res == NULL   ? "res"
                           : build == NULL ? "build"
                                           : NULL;
    if (null_arg != NULL)
        return pflref_error_set(err, PFLREF_EINVAL, null_arg,
                                "the argument is NULL");
    const pflref_output_arrays *form = arrays != NULL ? arrays : &spec->arrays;
    files_job j;
    memset(&j, 0, sizeof j);
    pflref_result_arrays(spec, res, tj, j.a);
    /* step 1; none beyond inline_max (or the inline form): inline */
    const int files = form->form == PFLREF_ARRAYS_FILES &&
                      choose(&j, form->inline_max);
    /* the previous result's files that this one does not write (a name
     * the JSON could not hold had no files: nothing to find) */
    arrays_place pl;
    int stale[PFLREF_RA_COUNT] = {0};
    char *stale_file[PFLREF_RA_COUNT] = {NULL};
    if (place_of(path, &pl, NULL) == PFLREF_OK)
        find_stale(path, &pl, j.a, j.to_file, stale, stale_file);
    const pflref_status st =
        files ? write_files(&j, path, spec, res, tj, build, err)
              : write_inline(path, spec, res, tj, build, err);
    remove_stale(&pl, stale, stale_file, !files, st);
    place_free(&pl);
    return st;
}
