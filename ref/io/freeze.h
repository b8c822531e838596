/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/freeze.h: the pieces of pflref_freeze_text and
 * pflref_freeze_write (internal; ref/io/freeze.c builds the vector,
 * ref/io/freeze_write.c writes its problem and its text,
 * ref/io/freeze_arrays.c moves its large arrays into .npy files). */
#ifndef PFLREF_IO_FREEZE_H
#define PFLREF_IO_FREEZE_H

#include <jansson.h>
#include "pflref/io.h"
#include "pflref/problem.h"
#include "pflref/status.h"
#include "io/result.h"

/* The vector spec's "problem", made explicit and portable:
 *   {"generator": …}  → {"clients": [...]}, the clients of `problem` (the
 *                       generator's draw) inline, so nothing is drawn;
 *   {"file": PATH}    → PATH resolved against base_dir (NULL: ".") and
 *                       written relative to vector_dir, the folder the
 *                       vector will be written in (NULL: as an absolute
 *                       path); an absolute PATH stays as it is;
 *   {"clients": …}    → unchanged.
 * Errors: PFLREF_EIO naming problem.file or opt.vector_dir when a path
 * does not resolve, PFLREF_ENOMEM. */
pflref_status pflref_freeze_problem(json_t *vspec,
                                    const pflref_problem *problem,
                                    const char *base_dir,
                                    const char *vector_dir,
                                    pflref_error *err);

/* The text of a vector (malloc'd, NUL-terminated, ending in a newline; NULL
 * when memory is short): one member per line, each record of
 * expected.trajectory on a line of its own; doubles with 17 significant
 * digits, so every number reads back exactly. */
char *pflref_freeze_dump(const json_t *vector);

/* The files form of a vector (ref/io/freeze_arrays.c): where its arrays
 * go, and what was written, to undo on failure. */
typedef struct {
    size_t inline_max;                /* more numbers than this: a file  */
    char rel_dir[PFLREF_PATH_MAX];    /* "STEM.arrays", as the vector
                                         names it (relative to its folder) */
    char full_dir[PFLREF_PATH_MAX];   /* that folder, to write in         */
    int have_dir;                     /* the folder is there              */
    int made_dir;                     /* ... and was made here            */
    char **written;                   /* the files written (full paths)  */
    size_t n_written;
    json_t *manifest;                 /* "array_files", or NULL: none     */
    char **stale;                     /* an earlier vector's files there  */
    size_t n_stale;
    /* the result's final state and trajectory, written from the run's
     * numbers (pflref_freeze_files_plan), not from the JSON */
    pflref_result_array a[PFLREF_RA_COUNT];
    const pflref_trajectory *tj;      /* the run's records (borrowed)    */
    char *ref[PFLREF_RA_COUNT];       /* "STEM.arrays/NAME.npy" of each
                                         slot planned to a file, or NULL */
} pflref_freeze_files;

/* ff := the files form of the vector at vector_path (STEM.arrays beside
 * it); nothing is made yet. */
void pflref_freeze_files_init(pflref_freeze_files *ff,
                              const char *vector_path, size_t inline_max);

/* The result writer's files form for the vector's expected side: of the
 * run's (spec, res, tj), final.w, final.v, final.alpha and the
 * trajectory's values go to files when they have more than
 * ff->inline_max numbers (pflref_result_slot_to_file; the trajectory only
 * when every record written has a value, as the inline vector's records
 * are then all ranged); refs gets their references, for
 * pflref_result_text, and ff keeps res's arrays and tj (borrowed: they
 * must outlive pflref_freeze_files_move).  Errors: PFLREF_ENOMEM. */
pflref_status pflref_freeze_files_plan(pflref_freeze_files *ff,
                                       const pflref_spec *spec,
                                       const pflref_run_result *res,
                                       const pflref_trajectory *tj,
                                       pflref_result_refs *refs,
                                       pflref_error *err);

/* Move the arrays of the vector body (before its hash: format, id, spec,
 * title, provenance, flags, tolerance, expected) with more numbers than
 * ff->inline_max into STEM.arrays/NAME.npy, each written at once through
 * the guarded writer and replaced in body by its path (spec.init's from
 * the JSON; the expected side's, already references in body, from the
 * numbers pflref_freeze_files_plan kept); body gets
 * "trajectory_values" when the trajectory's values went to a file and
 * "array_files" (the manifest, also kept in ff) when any file was
 * written.  Errors: PFLREF_EIO (the folder cannot be made, a file cannot
 * be written), PFLREF_ENOMEM; the files written so far stay until
 * pflref_freeze_files_undo. */
pflref_status pflref_freeze_files_move(pflref_freeze_files *ff, json_t *body,
                                       pflref_error *err);

/* Remove every file written and the folder when made here. */
void pflref_freeze_files_undo(pflref_freeze_files *ff);
void pflref_freeze_files_free(pflref_freeze_files *ff);

/* Before a vector is frozen over an earlier one at vector_path: ff keeps
 * the files of that vector (a pflref-golden/1 document of provenance kind
 * "reference", as pflref freeze writes) that its array_files lists in
 * STEM.arrays under one of the names pflref_freeze_files_move gives
 * (NAME.npy), each still a regular file of the listed size and SHA-256.
 * Nothing found (no vector there, another document, a changed file) is
 * no error. */
void pflref_freeze_files_find_stale(pflref_freeze_files *ff,
                                    const char *vector_path);

/* After the new vector is in place: remove the files kept by
 * pflref_freeze_files_find_stale that the new vector did not write, then
 * the folder when the new vector wrote none and it is empty. */
void pflref_freeze_files_remove_stale(pflref_freeze_files *ff);
#endif
