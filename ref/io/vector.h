/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/vector.h: golden vectors and candidate results read into C
 * structures (internal; format pflref-golden/1 and pflref-result/1,
 * docs/formats.md).
 *
 *   ref/io/vector.c   a vector: envelope, content hash, spec, tolerance,
 *                     provenance, flags, expectation; and the public
 *                     readers of pflref/io.h (is_vector, describe, spec)
 *   ref/io/vector_flags.c
 *                     the flag registry a vector's flags are checked
 *                     against
 *   ref/io/records.c  tables of records ("trajectory" and "final") and a
 *                     candidate result
 *
 * Both sides of a comparison are tables of records keyed by
 * (event, phase, round, client, step, name) with a vector value; the
 * oracle (ref/oracle/golden.c) compares them and never reads JSON.  The
 * records' and tolerances' names are borrowed from the parsed document,
 * which the structure keeps (`json`) until it is freed.
 */
#ifndef PFLREF_IO_VECTOR_H
#define PFLREF_IO_VECTOR_H

#include <stddef.h>
#include "pflref/io.h"
#include "io/arrays.h"

/* A vector's id has at most PFLREF_VECTOR_ID_MAX − 1 bytes (the schema's
 * maxLength), so reports hold it whole. */
#define PFLREF_VECTOR_ID_MAX 128
/* At most this many per-quantity tolerances. */
#define PFLREF_MAX_QUANTITY_TOLS 16

/* The widest atol or rtol a vector may hold without an argument in
 * "tolerance.above_ceiling" (golden/README.md, "Tolerance"): every vector's
 * expectation is an fp64 reference's, computed in a fixed order, whose
 * observed error is below 1.1e-13; the widest tolerance of the shipped
 * vectors is 1e-11 (Hessian-free differences, δ = 1/1024).  Above 1e-10 a
 * test no longer tells fp64 from a sloppier computation.  Must equal
 * TOLERANCE_CEILING in golden/pflref_golden.py. */
#define PFLREF_TOLERANCE_CEILING 1e-10

/* |x − r| ≤ atol + rtol·|r|. */
typedef struct {
    double atol, rtol;
} pflref_tolerance;

/* A vector's tolerances: "tolerance" for every quantity, and
 * "tolerance.per_quantity" for some, keyed by the quantity's name. */
typedef struct {
    pflref_tolerance all;
    size_t n;
    const char *name[PFLREF_MAX_QUANTITY_TOLS];
    pflref_tolerance each[PFLREF_MAX_QUANTITY_TOLS];
} pflref_tolerances;

typedef struct {
    char id[PFLREF_VECTOR_ID_MAX];  /* set once read, even when a later
                                       part of the vector is malformed    */
    pflref_spec *spec;              /* the embedded spec, parsed          */
    pflref_tolerances tol;
    pflref_trajectory expected;     /* "expected": trajectory, then final */
    struct json_t *json;            /* owns the names borrowed above      */
} pflref_vector;

/* Parse and validate a golden vector: format, id (≤ 127 bytes), the
 * required "hash" against the content (the whole vector and each part:
 * spec, expected, tolerance, flags, provenance; an edit names the part),
 * title, provenance (a "self" vector must be flagged regression-only),
 * flags (each registered: pflref_flag_registry_find from base_dir),
 * tolerance (at most PFLREF_TOLERANCE_CEILING unless argued for), the spec
 * (base_dir resolves a relative problem file; error paths start "spec."),
 * and the expectation (every key once, at least one record).  A vector in
 * files (docs/formats.md, "Golden vectors in files") has its init arrays,
 * final state and trajectory values as .npy references relative to
 * base_dir, each listed in its "array_files" manifest (checked before the
 * file is opened) with the size and SHA-256 the file must have; its hash
 * covers the manifest.
 *   v   [out] filled here, even on error; free with pflref_vector_free
 * Errors: PFLREF_EINVAL naming the JSON path (or the part that changed),
 * PFLREF_EIO (problem file, flags registry), PFLREF_ENOMEM. */
pflref_status pflref_vector_read(const char *text, size_t len,
                                 const char *base_dir, pflref_vector *v,
                                 pflref_error *err);
void pflref_vector_free(pflref_vector *v);

/* The flag registry of a vector (ref/io/vector_flags.c): the nearest
 * flags.json (pflref-flags/1) in base_dir or a folder above it, else the
 * one compiled in from golden/flags.json (root NULL). */
typedef struct {
    struct json_t *root;           /* the registry document, or NULL      */
    char path[PFLREF_PATH_MAX];    /* its file, when root is not NULL      */
} pflref_flag_registry;

/* Find the registry for vectors in base_dir (NULL: the built-in one).
 * Errors: PFLREF_EINVAL / PFLREF_EIO naming a flags.json that cannot be
 * read as a registry. */
pflref_status pflref_flag_registry_find(const char *base_dir,
                                        pflref_flag_registry *reg,
                                        pflref_error *err);
/* 1 when reg registers flag. */
int pflref_flag_registered(const pflref_flag_registry *reg, const char *flag);
/* The registry's file, or a description of the built-in one. */
const char *pflref_flag_registry_name(const pflref_flag_registry *reg);
void pflref_flag_registry_free(pflref_flag_registry *reg);

/* A candidate implementation's result. */
typedef struct {
    pflref_trajectory records;      /* "trajectory", then "final"         */
    char outcome[16];               /* the declared outcome class: "ok"
                                       (also when none is declared),
                                       "diverged" or "invalid"            */
    struct json_t *json;            /* owns the names borrowed above      */
} pflref_candidate;

/* The sizes the arrays of a result for a spec have, against which its
 * file references are checked (ref/io/arrays.h); 0: not known. */
typedef struct {
    size_t P, N;   /* parameters; clients                                 */
    size_t k;      /* theta0's rows (ifca.k)                              */
    size_t e;      /* the hypernetwork's embedding dimension              */
    int bias;      /* the hypernetwork has b_h                            */
} pflref_result_sizes;

/* The sizes of a result of spec (NULL: every size unknown). */
void pflref_result_sizes_of(const pflref_spec *spec, pflref_result_sizes *z);

/* Parse a candidate result (pflref-result/1 with "final" and/or
 * "trajectory"; the other result fields and a free "meta" are allowed).
 * Its arrays may be file references and its trajectory values ranges of
 * "trajectory_values" (docs/formats.md, "Arrays in files"), resolved from
 * base_dir and checked against its "array_files" manifest when it has one.
 *   vector_id [in]  when not NULL, a candidate that names another vector
 *                   in its "id" is refused
 *   base_dir  [in]  the folder of the candidate's file (NULL: the current
 *                   folder)
 *   spec      [in]  the vector's spec: the shapes the files must have
 *                   (P, N, ...; NULL: ranks only)
 *   c         [out] filled here, even on error; free with
 *                   pflref_candidate_free
 * Errors: PFLREF_EINVAL naming the JSON path, PFLREF_EIO (a referenced
 * file that cannot be opened), PFLREF_ENOMEM. */
pflref_status pflref_candidate_read(const char *text, size_t len,
                                    const char *vector_id,
                                    const char *base_dir,
                                    const pflref_spec *spec,
                                    pflref_candidate *c, pflref_error *err);
void pflref_candidate_free(pflref_candidate *c);

/* 1 when two records have one key (event, round, client, step, name,
 * phase): they hold the same quantity. */
int pflref_record_same_key(const pflref_record *x, const pflref_record *y);

/* Records from obj's "trajectory" (records {event, phase, round, client,
 * step, name, value}) and "final" ({w, v, alpha}) appended to tj; prefix
 * starts the JSON paths; *n_traj gets the number of trajectory records.
 * files: resolves file references in final and ranged values (shapes
 * checked against z, which may be NULL); a golden vector's is opened by
 * pflref_arrays_open_listed (every file listed in its manifest).  NULL:
 * a reference or range is refused. */
pflref_status pflref_records_read(const struct json_t *obj,
                                  const char *prefix, pflref_arrays *files,
                                  const pflref_result_sizes *z,
                                  pflref_trajectory *tj, size_t *n_traj,
                                  pflref_error *err);

/* Every key of tj is unique; records 0..n_traj−1 came from
 * `prefix`.trajectory, the rest from `prefix`.final (for the path named in
 * the error, the later of two records with one key). */
pflref_status pflref_records_unique(const pflref_trajectory *tj,
                                    size_t n_traj, const char *prefix,
                                    pflref_error *err);

#endif
