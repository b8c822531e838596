/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/io.h: specs, results and golden vectors as JSON, and running a
 * spec.
 *
 *   pflref_spec_parse, _read_file   spec text → pflref_spec
 *   pflref_spec_run                 pflref_spec → pflref_run_result
 *   pflref_spec_run_text            spec text → result text, in one call
 *   pflref_spec_run_output          spec text → result file (inline or the
 *                                   files form) or text, as `pflref run`
 *   pflref_result_to_json           a run → result text (pflref-result/1)
 *   pflref_result_write, _check     a run → result file, its arrays inline
 *                                   or as .npy files (the files form)
 *   pflref_result_read_metric       result text → one metric per client
 *   pflref_result_inline            result text with arrays in files →
 *                                   the same result, self-contained
 *   pflref_golden_is_vector, _describe, _spec
 *                                   what a golden vector holds
 *   pflref_freeze_text, _write      spec text → a vector of the reference's
 *                                   own output (provenance "reference"),
 *                                   its large arrays in .npy files when
 *                                   asked (_write)
 *   pflref_read_file, pflref_file_folder
 *   pflref_write_file_with, _bytes, _atomic, _check
 *                                   the one writer of every output file
 *
 * I/O never computes: it turns a spec into a problem, hyperparameters, a
 * schedule and initial parameters, and a run's outputs into a result; the
 * run itself is pflref_run's.  Validation is strict and every message names
 * the JSON path of the offending value (docs/formats.md, docs/schema/).
 */
#ifndef PFLREF_IO_H
#define PFLREF_IO_H

#include <stddef.h>
#include "status.h"
#include "algorithm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PFLREF_SPEC_FORMAT "pflref-spec/1"
#define PFLREF_RESULT_FORMAT "pflref-result/1"
#define PFLREF_PROBLEM_FORMAT "pflref-problem/1"
#define PFLREF_GOLDEN_FORMAT "pflref-golden/1"

/* The longest path (with its NUL) pflref_file_folder writes. */
#define PFLREF_PATH_MAX 4096

typedef enum {
    PFLREF_INIT_ZEROS = 0,
    PFLREF_INIT_GIVEN = 1,
    PFLREF_INIT_GAUSSIAN = 2,
    PFLREF_INIT_UNIFORM = 3
} pflref_init_kind;

/* A data file a problem was read from (a .npy file or a .npz archive),
 * as the result records it: the run is tied to its data by the hash. */
typedef struct {
    char *path;                    /* as the JSON names it (relative to
                                      the folder of that JSON file)      */
    char sha256[65];               /* 64 lower-case hex digits of the
                                      whole file's SHA-256               */
    unsigned long long bytes;      /* the file's size                    */
} pflref_data_file;

/* How a result's arrays are written (spec "output.arrays" and
 * "output.inline_max"; docs/formats.md, "Arrays in files"). */
typedef enum {
    PFLREF_ARRAYS_INLINE = 0,      /* every number in the JSON            */
    PFLREF_ARRAYS_FILES = 1        /* each array of more than inline_max
                                      numbers a .npy file in STEM.arrays/
                                      beside the result                  */
} pflref_arrays_form;

/* output.inline_max when the spec leaves it out: an array of up to 256
 * numbers (a small model's parameters, the per-client metrics of 256
 * clients) stays readable in the JSON. */
#define PFLREF_INLINE_MAX_DEFAULT 256

typedef struct {
    pflref_arrays_form form;
    size_t inline_max;             /* an array of more numbers than this
                                      goes to a file (files form)        */
} pflref_output_arrays;

/* The SHA-256 of the data files used in place, computed on a second
 * thread while the run proceeds (private to the library). */
typedef struct pflref_digest_job pflref_digest_job;

/* A parsed, validated spec.  Everything is owned by the spec. */
typedef struct {
    char *name;
    char *id;                      /* the golden vector's id when the spec
                                      came from one (result "id"), or NULL */
    pflref_problem *problem;
    const pflref_algorithm *algorithm;
    pflref_hyper hyper;
    char *preset;                  /* "paper" unless the spec names another */
    pflref_schedule *schedule;     /* generated or given                   */
    int schedule_given;
    pflref_schedule_config schedule_cfg; /* valid when !schedule_given      */
    pflref_init_kind init_kind;
    unsigned long init_seed;
    double init_scale;
    double *w0;                    /* P                                    */
    double *cluster_models;        /* ifca: init.cluster_models, k×P, or
                                      NULL (hyper.ifca.theta0 points here) */
    size_t n_cluster_models;       /* k, or 0                              */
    double *hypernetwork;          /* pfedhn: init.hypernetwork, W_h (P×e),
                                      b_h (P, zeros when absent), then the
                                      embeddings v_i (N×e); or NULL
                                      (hyper.pfedhn's W0, b0, v0 point in) */
    double *lora_init;             /* lora: init.lora (hyper.lora.q0), or
                                      NULL                                 */
    size_t n_lora_init;
    double *lora_ranks;            /* lora: init.lora_ranks (hyper.lora.
                                      ranks), N client ranks, or NULL      */
    size_t n_lora_ranks;
    char **lora_targets;           /* lora: init.lora_targets (hyper.lora.
                                      target_names), names in one
                                      allocation with the array, or NULL  */
    size_t n_lora_targets;
    pflref_record_level record;    /* output.trajectory                    */
    pflref_output_arrays arrays;   /* output.arrays, output.inline_max     */
    char *problem_source;          /* "inline", "generator:tilt", "file:…" */
    pflref_data_file *data_files;  /* the .npy and .npz files the problem's
                                      arrays came from, each once, in the
                                      order first named; NULL when none  */
    size_t n_data_files;
    pflref_digest_job *digests;    /* the digests of data_files still being
                                      computed (private: the result writer
                                      waits for them), or NULL           */
    pflref_data_file *init_files;  /* the .npy and .npz files init's arrays
                                      came from (init.w, .cluster_models,
                                      .lora, .hypernetwork.W/b/v), each
                                      once, in the order first named, with
                                      their SHA-256 and size (the result's
                                      init.data_files); NULL when none   */
    size_t n_init_files;
    pflref_batches *fedrecon_support; /* fedrecon: init.support, client i's
                                      D_{i,s} the indices idx[step_off[i]
                                      .. step_off[i+1] − 1] (nsteps = N),
                                      or NULL (hyper.fedrecon's support_off
                                      and support_idx point in)           */
    double *scaffold_c;            /* scaffold: init.c, the server control
                                      variate c⁰ (P), or NULL (hyper.
                                      scaffold.c0 points here)            */
    double *scaffold_c_i;          /* scaffold: init.c_i, the client control
                                      variates c_i⁰ (N×P, client 0 first),
                                      or NULL (hyper.scaffold.c_i0)       */
    double *fedrod_counts;         /* fedrod: init.class_counts, N×k class
                                      counts of the balanced softmax (NULL:
                                      counted from the data)              */
} pflref_spec;

/* Parse a spec from text.  base_dir resolves a relative problem file
 * (NULL: the current directory).  Errors: PFLREF_EINVAL with the JSON path
 * (syntax errors give "line L, column C"), PFLREF_EIO for an unreadable
 * problem file, PFLREF_ENOMEM for sizes beyond the limits. */
pflref_status pflref_spec_parse(const char *text, size_t len,
                                const char *base_dir, pflref_spec **out,
                                pflref_error *err);
pflref_status pflref_spec_read_file(const char *path, pflref_spec **out,
                                    pflref_error *err);
void pflref_spec_free(pflref_spec *spec);

/* Run a parsed spec through the reference (pflref_run on its problem,
 * algorithm, hyperparameters, schedule and initial parameters w0).
 *   spec   [in]  from pflref_spec_parse, pflref_spec_read_file or
 *                pflref_golden_spec; not modified
 *   trace  [in]  receives every event (NULL: none)
 *   out    [out] the final state and metrics, allocated here (free it with
 *                pflref_run_result_free); NULL on error
 *   err    [out] what went wrong, and where (may be NULL)
 * Returns PFLREF_OK, or pflref_run's errors: PFLREF_EINVAL (the
 * hyperparameters or the schedule do not fit the algorithm),
 * PFLREF_EDIVERGE (a non-finite value; err names round, client and step),
 * PFLREF_ENOMEM. */
pflref_status pflref_spec_run(const pflref_spec *spec,
                              const pflref_trace *trace,
                              pflref_run_result **out, pflref_error *err);

/* From spec text to result text in one call, what `pflref run -o -` does:
 * parse text (a spec, or a golden vector, whose embedded spec is run and
 * whose id the result carries), run it, record the trajectory at the
 * spec's output.trajectory level, and write the result with this build's
 * facts (pflref_result_to_json: inline; a spec whose output.arrays is
 * "files" is refused, PFLREF_EINVAL at "output.arrays", as a text alone
 * has no folder for its arrays: pflref_spec_run_output writes a file).
 *   text, len  [in]  the spec or vector (len bytes; no NUL needed)
 *   base_dir   [in]  resolves a relative problem file (NULL: the current
 *                    folder); pflref_file_folder gives a file's folder
 *   trace      [in]  also receives every event, e.g. a printer (NULL: none)
 *   result     [out] the result, NUL-terminated, allocated here (free()
 *                    it); NULL on error
 *   err        [out] what went wrong, and where (may be NULL)
 * Returns PFLREF_OK; PFLREF_EINVAL for invalid text (err->where is the JSON
 * path; inside a vector's spec it starts "spec."), PFLREF_EIO for an
 * unreadable problem file, and pflref_spec_run's errors. */
pflref_status pflref_spec_run_text(const char *text, size_t len,
                                   const char *base_dir,
                                   const pflref_trace *trace, char **result,
                                   pflref_error *err);

/* What a caller sets over a spec's "output" (`pflref run --arrays`,
 * `--inline-max`).  Zero-initialised: nothing, the spec's own. */
typedef struct {
    int set_form;                  /* 1: form replaces output.arrays       */
    pflref_arrays_form form;
    int set_inline_max;            /* 1: inline_max replaces
                                      output.inline_max                  */
    size_t inline_max;
} pflref_output_override;

/* pflref_spec_run_text, with the result written to a file in the form the
 * spec's output (after over) chooses, or returned as text: what `pflref
 * run` does.
 *   over    [in]  replaces the spec's output.arrays / output.inline_max
 *                 (NULL: nothing)
 *   path    [in]  the result file (pflref_result_write: the files form
 *                 writes STEM.arrays/ beside it), *result then NULL; or
 *                 NULL: the inline text in *result (standard output)
 *   result  [out] with path NULL: the result text (free() it); may be NULL
 *                 when path is given
 * Before the run: the files form without a path is refused (PFLREF_EINVAL
 * at "output.arrays": a text alone has no folder for its arrays), and a
 * path the write would refuse is refused (pflref_result_write_check).
 * Otherwise pflref_spec_run_text's errors, and pflref_result_write's. */
pflref_status pflref_spec_run_output(const char *text, size_t len,
                                     const char *base_dir,
                                     const pflref_trace *trace,
                                     const pflref_output_override *over,
                                     const char *path, char **result,
                                     pflref_error *err);

/* Facts about the build that produced a result. */
typedef struct {
    const char *version;
    const char *compiler;
    const char *cflags;
    const char *blas;          /* openblas_get_config()                */
    int blas_threads;
} pflref_build_info;

void pflref_build_info_get(pflref_build_info *info);
/* Pin OpenBLAS to one thread (the reference is single-threaded by design,
 * so that sums have one order). */
void pflref_blas_pin_threads(void);

/* Serialise a result to a NUL-terminated JSON string (*out, free() it),
 * every array inline (whatever spec->arrays says).  Every double reads
 * back exactly. */
pflref_status pflref_result_to_json(const pflref_spec *spec,
                                    const pflref_run_result *res,
                                    const pflref_trajectory *tj,
                                    const pflref_build_info *build,
                                    char **out, pflref_error *err);

/* Write a result to the file at path in the given form (arrays NULL:
 * spec->arrays), every file through the one writer
 * (pflref_write_file_with).
 *   inline form: the text of pflref_result_to_json, alone.
 *   files form:  each array of more than inline_max numbers (w0, theta0,
 *     hypernetwork.W/.b/.v, final.w/.v/.alpha, and the trajectory's values
 *     taken together) as a '<f8' .npy file NAME.npy, byte for byte what
 *     NumPy's np.save writes, in the folder STEM.arrays beside path (STEM:
 *     path's file name less a final ".json"; made when absent); the JSON
 *     names each by "STEM.arrays/NAME.npy" and lists them in "array_files"
 *     with their SHA-256 and size; the trajectory's records become ranges
 *     of "trajectory_values".  The files first, the JSON last.  When no
 *     array exceeds inline_max, the result is the inline one (no folder).
 * On any failure nothing this call wrote is left: the .npy files it wrote
 * are removed, and the folder when it made it (files of those names that
 * were there before are replaced, one by one, as they are written).
 * On success, in either form, the files of the result path held before
 * (a result pflref wrote, with "build") that the new one does not write
 * are removed, and STEM.arrays with them when the new result is inline
 * and nothing else is left there: only files its "array_files" lists as
 * "STEM.arrays/NAME.npy" (NAME one of the arrays above) that are still
 * regular files of the listed size and SHA-256; every other file stays
 * (docs/formats.md, "Arrays in files").
 * Errors: pflref_write_file_with's (PFLREF_EIO naming the file, e.g. a
 * STEM.arrays that is not a folder), pflref_result_to_json's, PFLREF_EINVAL
 * for a file name that is not UTF-8 (JSON cannot name it). */
pflref_status pflref_result_write(const char *path, const pflref_spec *spec,
                                  const pflref_run_result *res,
                                  const pflref_trajectory *tj,
                                  const pflref_build_info *build,
                                  const pflref_output_arrays *arrays,
                                  pflref_error *err);
/* What pflref_result_write would refuse before writing anything, with
 * nothing created: the result file (pflref_write_file_check) and, in the
 * files form, its STEM.arrays (a folder, or absent) and STEM. */
pflref_status pflref_result_write_check(const char *path,
                                        const pflref_output_arrays *arrays,
                                        pflref_error *err);

/* From a result's text, the per-client values of `metric` ("train_loss",
 * "train_mse", "train_accuracy", "test_loss", "test_mse",
 * "test_accuracy") for the model labelled `label`
 * ("global", "local", "personalized", ...), and their summary.
 * *values is allocated here (free() it), *N gets its length.  Errors name
 * the missing label or metric. */
pflref_status pflref_result_read_metric(const char *text, size_t len,
                                        const char *label, const char *metric,
                                        double **values, size_t *N,
                                        pflref_summary *summary,
                                        pflref_error *err);

/* A result (or candidate result) whose arrays may be in files, made
 * self-contained (docs/formats.md, "Arrays in files"): every file
 * reference among w0, theta0, final.w, final.v, final.alpha and
 * hypernetwork.W / .b / .v, and every ranged trajectory value {offset,
 * count} of "trajectory_values", replaced by its numbers (17 significant
 * digits: the same doubles); the "array_files" manifest checked (every
 * referenced file listed with its size and SHA-256, every listed file
 * referenced), then removed with "trajectory_values".  Shapes are held to
 * the result's model.P and problem.N where it states them.
 *   text, len [in]  the result (len bytes)
 *   base_dir  [in]  the folder of the result's file, which its references
 *                   are relative to (NULL: the current folder)
 *   out       [out] the self-contained text, NUL-terminated, allocated
 *                   here (free() it); NULL on error
 *   err       [out] what went wrong, and where (may be NULL)
 * Errors: PFLREF_EINVAL naming the JSON field and the file (a bad
 * reference, header, dtype, shape, value, range or manifest), PFLREF_EIO
 * (a file that cannot be opened or is not a regular file),
 * PFLREF_ENOMEM. */
pflref_status pflref_result_inline(const char *text, size_t len,
                                   const char *base_dir, char **out,
                                   pflref_error *err);

/* ---- golden vectors as data (format pflref-golden/1; pflref/golden.h
 * compares runs with them) ----------------------------------------------- */

/* 1 when text is a JSON object whose "format" is pflref-golden/1. */
int pflref_golden_is_vector(const char *text, size_t len);

/* The id and the flags (space-separated) of a vector, for filtering, into
 * buffers of the given sizes (truncated to fit); id and flags may each be
 * NULL.  Errors: PFLREF_EINVAL when text is not JSON or has no string
 * "id". */
pflref_status pflref_golden_describe(const char *text, size_t len, char *id,
                                     size_t id_size, char *flags,
                                     size_t flags_size, pflref_error *err);

/* The spec embedded in a golden vector, with spec->id set to the vector's
 * id (so a result written from it names the vector).  The whole vector is
 * validated (envelope, content hash, registered flags, tolerance,
 * expectation), as by pflref_golden_verify. */
pflref_status pflref_golden_spec(const char *text, size_t len,
                                 const char *base_dir, pflref_spec **out,
                                 pflref_error *err);

/* ---- freezing the reference's output (provenance "reference") ----------- */

/* How pflref_freeze_text writes a vector.  Zero-initialise it (or pass
 * NULL) for the defaults.
 *   atol, rtol  the tolerance, each in [0, 1e-10] (the fp64 ceiling);
 *               used only with a basis: basis NULL needs both 0 and gives
 *               the documented fp64 default (1e-10 each, docs/formats.md)
 *   basis       why atol and rtol are what they are (non-empty), or NULL
 *   id          the vector's id ([a-z0-9][a-z0-9._-]* segments joined by
 *               '/', < 128 bytes), or NULL: "reference/<algorithm>/<16 hex
 *               digits of the vector spec's content hash>"
 *   vector_dir  the folder the vector will be written in: a relative
 *               problem file or client data file (.npy, ARCHIVE.npz:M)
 *               is written relative to it; NULL: by its absolute path
 *   trajectory  what the vector expects besides the final state: "step"
 *               (every event; NULL gives it), "round" (client_end, server
 *               and note events: far smaller for a large problem) or
 *               "none" (the final state only)
 *   arrays      "inline" (NULL gives it): every number in the vector's
 *               JSON; or "files": each array of the spec's init and of
 *               the expectation with more than inline_max numbers (and the
 *               trajectory's values, when they number more in all) in a
 *               .npy file of the folder STEM.arrays beside the vector,
 *               listed with its size and SHA-256 in the vector's
 *               "array_files" (docs/formats.md, "Golden vectors in
 *               files"); only pflref_freeze_write writes files
 *   inline_max  with arrays "files": the most numbers an array keeps
 *               inline (0: every array to a file; `pflref freeze` and
 *               Python's freeze default to PFLREF_FREEZE_INLINE_MAX) */
typedef struct {
    double atol, rtol;
    const char *basis;
    const char *id;
    const char *vector_dir;
    const char *trajectory;
    const char *arrays;
    size_t inline_max;
} pflref_freeze_options;

/* The default inline_max of the files form: an array of up to 256 numbers
 * (a 16 × 16 block) reads as quickly from JSON as from a file, and keeps
 * a small vector whole in one file. */
#define PFLREF_FREEZE_INLINE_MAX PFLREF_INLINE_MAX_DEFAULT

/* What `pflref freeze` does: run a spec through the reference (at step
 * level unless opt->trajectory says otherwise) and write a golden vector
 * (pflref-golden/1) whose expected side is the run's final state and
 * trajectory, provenance {"kind": "reference"},
 * flag reference-output, content hashes as golden/pflref_golden.py
 * computes them.  The vector's spec is the given one with every random
 * choice explicit: the schedule in its given form, init {kind: given, w:
 * w0} (IFCA: and cluster_models), a generator's clients inline,
 * output.trajectory at the level frozen.  Such a vector pins the reference's numbers on a user's own
 * problem; it says "agrees with pflref", not "agrees with the paper"
 * (docs/formats.md, "Provenance").
 *   spec_text, len [in]  a spec (pflref-spec/1; a golden vector is refused)
 *   base_dir       [in]  resolves a relative problem file (NULL: ".")
 *   opt            [in]  options (NULL: the defaults)
 *   vector_out     [out] the vector's text, NUL-terminated, allocated here
 *                        (free() it); NULL on error
 *   vector_len     [out] its length in bytes (0 on error)
 *   err            [out] what went wrong, and where (may be NULL)
 * Returns PFLREF_OK; PFLREF_EINVAL for an invalid spec (the JSON path) or
 * option ("opt.atol", "opt.rtol", "opt.basis", "opt.id",
 * "opt.trajectory", "opt.arrays": "files" needs pflref_freeze_write),
 * PFLREF_EIO for an unreadable problem file or a folder that does not
 * resolve ("opt.vector_dir"), PFLREF_EDIVERGE when the run diverges,
 * PFLREF_ENOMEM. */
pflref_status pflref_freeze_text(const char *spec_text, size_t len,
                                 const char *base_dir,
                                 const pflref_freeze_options *opt,
                                 char **vector_out, size_t *vector_len,
                                 pflref_error *err);

/* pflref_freeze_text, the vector written to vector_path: in the files
 * form (opt->arrays "files") the .npy files first, into the folder
 * STEM.arrays beside it (made when absent; STEM the file name without a
 * final ".json"), each through the guarded writer, then the vector; on any
 * failure every file written here and the folder made here are removed
 * and vector_path is as it was.  opt->vector_dir is ignored: the vector's
 * folder is vector_path's.
 *   vector_path [in]  the vector's file (a regular file or absent, as for
 *                     pflref_write_file_with; not standard output)
 *   vector_len  [out] the vector's length in bytes, or NULL
 * Returns pflref_freeze_text's statuses, and the writer's PFLREF_EIO
 * (err->where the file, or "opt.arrays" for the folder). */
pflref_status pflref_freeze_write(const char *spec_text, size_t len,
                                  const char *base_dir,
                                  const pflref_freeze_options *opt,
                                  const char *vector_path, size_t *vector_len,
                                  pflref_error *err);

/* ---- files -------------------------------------------------------------- */

/* The identity of a file: its device and inode (two paths name one file
 * when their identities are equal, through links too). */
typedef struct {
    unsigned long long dev, ino;
} pflref_file_id;

/* Read a whole file into a NUL-terminated buffer (*out, free() it).  The
 * path is opened without blocking and must be a regular file: a FIFO, a
 * device, a socket or a folder is refused before anything is read
 * (PFLREF_EIO, the message names what it is).  UTF-16 text (a byte-order
 * mark FF FE or FE FF, or NUL bytes between characters) is refused as such
 * (PFLREF_EINVAL).  Files over 1 GiB: PFLREF_ENOMEM. */
pflref_status pflref_read_file(const char *path, char **out, size_t *len,
                               pflref_error *err);
/* pflref_read_file, and the identity of the file read (id may be NULL). */
pflref_status pflref_read_file_id(const char *path, char **out, size_t *len,
                                  pflref_file_id *id, pflref_error *err);
/* The identity of the file path names (links followed): 1, or 0 when
 * there is none. */
int pflref_file_identify(const char *path, pflref_file_id *id);

/* What a file of mode st_mode (struct stat's st_mode) that is not a
 * regular file is, for messages: "a folder", "a FIFO (named pipe)", "a
 * socket", "a character device", "a block device", "a symbolic link",
 * else "not a file". */
const char *pflref_file_kind(unsigned long st_mode);
/* The one writer of every file pflref produces (ref/io/write.c): a
 * result, a vector, a figure, a report.  The content goes to a new
 * temporary file beside the target, created with the permissions a new
 * file gets (0666 less the umask), and is renamed over the target only
 * after the whole of it was written and synced; on any failure the
 * temporary file is removed and the target is as it was.
 *
 * The target must be a regular file or absent: a FIFO, a device, a
 * socket, a folder is refused by name and left alone (PFLREF_EIO), and so
 * is a regular file the caller may not write (read-only).  A symbolic
 * link is followed: the file it names is replaced and the link kept; a
 * link to nothing (dangling) is refused.  A target that appears, or is
 * replaced, while the content is written is refused too (ref/io/write.c
 * states exactly which window remains).
 *
 * The content comes from a step that writes into an open descriptor:
 *   ctx  [in]  the step's own data
 *   fd   [in]  the temporary file, open for writing at offset 0 (or, for
 *              a caller that writes to standard output, STDOUT_FILENO)
 *   name [in]  what fd will become, for messages (the target's path)
 *   err  [out] what went wrong, when the step fails
 * It returns PFLREF_OK, or the status of its failure with err set (its
 * message is passed on as it is, its where filled with the target when
 * the step leaves it empty). */
typedef pflref_status (*pflref_write_step)(void *ctx, int fd,
                                           const char *name,
                                           pflref_error *err);
/* Write path through step (ctx handed to it), as above.
 *   path [in] the target; step [in] not NULL; err [out] may be NULL. */
pflref_status pflref_write_file_with(const char *path, pflref_write_step step,
                                     void *ctx, pflref_error *err);
/* Steps 1-3 of pflref_write_file_with alone: PFLREF_OK when path could be
 * written now, else the refusal pflref_write_file_with would give, with
 * nothing created.  For a caller that has long work to do before it
 * writes (a run): it refuses early; the write checks again. */
pflref_status pflref_write_file_check(const char *path, pflref_error *err);
/* Write len bytes to path, as pflref_write_file_with. */
pflref_status pflref_write_file_bytes(const char *path, const void *bytes,
                                      size_t len, pflref_error *err);
/* Write the NUL-terminated text to path, as pflref_write_file_with. */
pflref_status pflref_write_file_atomic(const char *path, const char *text,
                                       pflref_error *err);
/* The step behind the two above: ctx is a pflref_write_buffer, written
 * whole to fd (short writes continued, EINTR retried). */
typedef struct {
    const void *bytes;
    size_t len;
} pflref_write_buffer;
pflref_status pflref_write_buffer_step(void *ctx, int fd, const char *name,
                                       pflref_error *err);
/* The folder holding the file at path, which resolves the relative paths
 * the file names: path up to its last '/', or "." for a bare name.
 *   out [out] size bytes (PFLREF_PATH_MAX holds any path pflref reads);
 *             a longer folder is truncated. */
void pflref_file_folder(const char *path, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
