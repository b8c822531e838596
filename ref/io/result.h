/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/result.h: the result writer's parts (internal).
 *
 *   ref/io/result.c        the text of a result (pflref-result/1), its
 *                          arrays inline or as file references
 *   ref/io/result_metrics.c  its "metrics" (per client and summaries),
 *                          written, and read back for `pflref table`
 *   ref/io/result_files.c  the files form: the arrays beyond inline_max as
 *                          .npy files in STEM.arrays/, then the JSON
 *
 * The arrays a result may give as file references (docs/formats.md,
 * "Arrays in files"), in the order the document names them; each has a
 * file NAME.npy in the files form.
 */
#ifndef PFLREF_IO_RESULT_H
#define PFLREF_IO_RESULT_H

#include <stddef.h>
#include "pflref/io.h"
#include "io/emit.h"
#include "io/npy_write.h"

typedef enum {
    PFLREF_RA_W0 = 0,        /* w0                 (P)                   */
    PFLREF_RA_THETA0,        /* theta0             (k, P)                */
    PFLREF_RA_HN_W,          /* hypernetwork.W     (P, e)                */
    PFLREF_RA_HN_B,          /* hypernetwork.b     (P)                   */
    PFLREF_RA_HN_V,          /* hypernetwork.v     (N, e)                */
    PFLREF_RA_FINAL_W,       /* final.w            (P)                   */
    PFLREF_RA_FINAL_V,       /* final.v            (N, P)                */
    PFLREF_RA_FINAL_ALPHA,   /* final.alpha        (N)                   */
    PFLREF_RA_TRAJECTORY,    /* trajectory_values  (every record's value,
                                in record order)                        */
    PFLREF_RA_COUNT
} pflref_result_slot;

/* One array of a result. */
typedef struct {
    const char *name;        /* "final.v": the file is final.v.npy       */
    const double *x;         /* its numbers, row-major; NULL: the result
                                has no such array (the trajectory's
                                numbers are gathered from its records)   */
    size_t rows, cols;       /* shape (rows, cols); cols = 0: 1-D, rows
                                numbers                                  */
    int present;             /* the result has this array                */
} pflref_result_array;

/* The arrays of the result of (spec, res, tj), by slot.  The trajectory
 * is present with rows = the count of its values (the records written, the
 * final ones excluded: they are the "final" object), which may be 0. */
void pflref_result_arrays(const pflref_spec *spec,
                          const pflref_run_result *res,
                          const pflref_trajectory *tj,
                          pflref_result_array out[PFLREF_RA_COUNT]);

/* 1 when record k of tj is written in the result's trajectory (0: a final
 * record, written once as the "final" object). */
int pflref_result_record_written(const pflref_trajectory *tj, size_t k);

/* The files form's choice for one slot: 1 when the array is present and
 * has more than inline_max numbers (it goes to NAME.npy). */
int pflref_result_slot_to_file(const pflref_result_array *a,
                               size_t inline_max);

/* The numbers of slot s of the result (its array a) as the pieces of its
 * .npy file: *one, a single piece, for an array; for the trajectory the
 * values of the records written, in record order, malloc'd (free it when
 * it is not one).  *n their count; NULL: out of memory. */
pflref_npy_piece *pflref_result_pieces(const pflref_result_array *a,
                                       pflref_result_slot s,
                                       const pflref_trajectory *tj,
                                       pflref_npy_piece *one, size_t *n);

/* The result's "metrics" object into e: per reported model of r,
 * {"per_client": {...}, "summary": {...}}, the training set's metrics
 * (those model m has), then the test set's when there is one. */
void pflref_result_emit_metrics(pflref_emit *e, const pflref_run_result *r,
                                const pflref_model *m);

/* How a result's arrays are written: each slot's reference (the string
 * written in place of its numbers: "out.arrays/final.v.npy"), or NULL for
 * its numbers inline; the trajectory's reference makes every record's
 * value ranged ({"offset", "count"}); the manifest "array_files" (n_files
 * entries; 0: none). */
typedef struct {
    const char *ref[PFLREF_RA_COUNT];
    const pflref_data_file *files;
    size_t n_files;
} pflref_result_refs;

/* What would stop the result before a byte is written: the trajectory's
 * recording failed (PFLREF_ENOMEM at "output.trajectory"), or a number is
 * not finite (PFLREF_EINTERNAL naming the array: the run stops at a
 * divergence, so one here is a pflref bug). */
pflref_status pflref_result_check(const pflref_run_result *res,
                                  const pflref_trajectory *tj,
                                  pflref_error *err);

/* The text of the result (*out, NUL-terminated, free() it; *len its
 * length, len may be NULL), its arrays as refs says (NULL: all inline).
 * Errors: pflref_result_check's, PFLREF_ENOMEM, PFLREF_EINVAL (a string
 * that is not UTF-8). */
pflref_status pflref_result_text(const pflref_spec *spec,
                                 const pflref_run_result *res,
                                 const pflref_trajectory *tj,
                                 const pflref_build_info *build,
                                 const pflref_result_refs *refs, char **out,
                                 size_t *len, pflref_error *err);

#endif
