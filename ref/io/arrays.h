/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/arrays.h: the arrays of a JSON document given as file references
 * (internal; docs/formats.md, "Arrays in files"; issue 30).
 *
 * Any large array of a spec's "init", of a result, of a candidate result
 * or of a golden vector in files (its spec's init and its expectation,
 * every file listed in its manifest) may be a string instead of numbers: the path of a NumPy .npy file, or
 * "ARCHIVE.npz:MEMBER", relative to the folder of the JSON file that names
 * it (an absolute path is taken as it is, and a relative one may climb
 * with "..": the rule of problem data, ref/io/spec_data.c).  The file is
 * read by ref/io/npy.c, so every refusal of problem data applies (N1-N22:
 * a truncated file, a big-endian or unknown dtype, Fortran order, a NaN, a
 * folder or FIFO, a missing file, ...); this module adds what a reference
 * must be besides: floats ('<f8' used as is, '<f4' widened exactly), of
 * exactly the array's shape, with at least one number.
 *
 *   pflref_arrays_open      a document's "array_files" manifest (checked
 *                           for form) and its "trajectory_values"
 *   pflref_arrays_open_listed
 *                           the same for a golden vector, whose every
 *                           reference must be listed in the manifest
 *   pflref_arrays_listed    that check alone, for a reference another
 *                           reader opens (a vector's spec.init)
 *   pflref_arrays_note      a file another reader opened and hashed, to
 *                           be held to the manifest by _close
 *   pflref_arrays_load      the array a reference names, shape checked
 *   pflref_arrays_range     a ranged trajectory value {offset, count}
 *   pflref_arrays_close     every referenced file listed in the manifest
 *                           with its size and SHA-256, every listed file
 *                           referenced
 *   pflref_arrays_free      releases the files still held
 *
 * Every message names the file as the JSON wrote it, and err->where the
 * JSON field ("final.v", "trajectory[3].value", "array_files[1]").
 *
 * Memory: a '<f8' file is mapped read-only and its numbers are used in
 * place (no copy) until the next load; trajectory_values stays mapped
 * until pflref_arrays_free.  The caller copies what it keeps.
 */
#ifndef PFLREF_IO_ARRAYS_H
#define PFLREF_IO_ARRAYS_H

#include <stddef.h>
#include "pflref/io.h"
#include "io/json.h"
#include "io/npy.h"

/* The shape a reference must have: rank 1, (dim[0],), or rank 2,
 * (dim[0], dim[1]); a dimension 0 is not known to the reader and may be
 * anything >= 1.  sym names the dimensions in messages ("N", "P"). */
typedef struct {
    size_t rank;
    size_t dim[2];
    const char *sym[2];
} pflref_array_shape;

/* A file the document references: what the manifest and the result's
 * data_files record, and the JSON field that first named it. */
typedef struct {
    pflref_data_file f;
    char where[PFLREF_WHERE_MAX];
} pflref_array_file;

/* The references of one document. */
typedef struct {
    const char *base_dir;        /* the folder of the JSON file (NULL or
                                    "": the current folder)              */
    int hash;                    /* hash each file when first named      */
    int listed_only;             /* a golden vector: a file not listed in
                                    the manifest (or with no manifest) is
                                    refused before it is opened          */
    const json_t *manifest;      /* "array_files", or NULL               */
    pflref_array_file *files;    /* every file named, each once, in the
                                    order first named                    */
    size_t n_files;
    pflref_npy_array traj;       /* "trajectory_values" (data NULL: none) */
    char traj_file[PFLREF_PATH_MAX]; /* its file, as the JSON names it   */
    pflref_npy_array cur;        /* the array of the last load           */
} pflref_arrays;

/* An empty set of references for a document in base_dir; hash: hash each
 * file when first named (a spec's init files, recorded in the result). */
void pflref_arrays_init(pflref_arrays *a, const char *base_dir, int hash);

/* pflref_arrays_init, then the document root's "array_files" (when
 * present: an array of {path, sha256, bytes}, each path once; every file
 * is then hashed) and "trajectory_values" (when present: a reference to a
 * 1-D array of floats, held until pflref_arrays_free). */
pflref_status pflref_arrays_open(pflref_arrays *a, const json_t *root,
                                 const char *base_dir, pflref_error *err);

/* pflref_arrays_open for a golden vector: every reference must name a
 * file its "array_files" lists (pflref_arrays_listed), checked before the
 * file is opened. */
pflref_status pflref_arrays_open_listed(pflref_arrays *a, const json_t *root,
                                        const char *base_dir,
                                        pflref_error *err);

/* The file of reference ref (at JSON field `where`) is listed in a's
 * manifest.  Errors: PFLREF_EINVAL at `where` naming ref when a has no
 * manifest, or the file when the manifest does not list it; a malformed
 * reference as pflref_array_ref_split. */
pflref_status pflref_arrays_listed(const pflref_arrays *a, const char *ref,
                                   const char *where, pflref_error *err);

/* Record the file f (its path as the JSON names it, its SHA-256 and size),
 * read and hashed by another reader, as named by `where`, so that
 * pflref_arrays_close holds it to the manifest (nothing when a file of
 * that path is recorded already).  Errors: PFLREF_ENOMEM. */
pflref_status pflref_arrays_note(pflref_arrays *a, const pflref_data_file *f,
                                 const char *where, pflref_error *err);

/* The reference ref (a .npy path or "ARCHIVE.npz:MEMBER") at JSON field
 * `where`, which must have the shape `want`: *data gets its numbers
 * (row-major; valid until the next load or pflref_arrays_free), shape its
 * dimensions (shape[1] = 1 for rank 1).  The file is recorded (and hashed
 * when a->hash) the first time it is named.  Errors: PFLREF_EINVAL (a bad
 * reference, header, dtype, shape or value), PFLREF_EIO (cannot open, not
 * a regular file), PFLREF_ENOMEM. */
pflref_status pflref_arrays_load(pflref_arrays *a, const char *ref,
                                 const char *where,
                                 const pflref_array_shape *want,
                                 const double **data, size_t shape[2],
                                 pflref_error *err);

/* The ranged value v = {"offset": o, "count": c} at `where`: *data :=
 * trajectory_values + o, *n := c (integers, o >= 0, c >= 1, o + c <= the
 * length of trajectory_values, which must be present). */
pflref_status pflref_arrays_range(const pflref_arrays *a, const json_t *v,
                                  const char *where, const double **data,
                                  size_t *n, pflref_error *err);

/* With a manifest: every file named is listed with its size and SHA-256,
 * and every listed file is named (errors name "array_files[j]", or
 * "array_files" for a file missing from it, and in the message the file
 * and the field that named it).  Without: PFLREF_OK. */
pflref_status pflref_arrays_close(const pflref_arrays *a, pflref_error *err);

/* The files named, as data_files entries (*files malloc'd, paths moved out
 * of a; NULL and 0 when none). */
pflref_status pflref_arrays_take_files(pflref_arrays *a,
                                       pflref_data_file **files, size_t *n,
                                       pflref_error *err);

/* Release the arrays and files still held (a may be reused after
 * pflref_arrays_init). */
void pflref_arrays_free(pflref_arrays *a);

/* The file part of a reference into file (size bytes) and *member (into
 * ref; NULL for a .npy path).  Errors: PFLREF_EINVAL at `where` for an
 * empty or over-long name or an empty member. */
pflref_status pflref_array_ref_split(const char *ref, const char *where,
                                     char *file, size_t size,
                                     const char **member, pflref_error *err);

/* The path to open for `file` named by a JSON file in base_dir: file
 * itself when absolute or base_dir is NULL or "", else base_dir/file. */
void pflref_array_ref_path(const char *file, const char *base_dir,
                           char *full, size_t size);

#endif
