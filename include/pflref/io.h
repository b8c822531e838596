/* pflref/io.h: reading specs and writing results (JSON, jansson).
 *
 * I/O never computes: it turns a spec into a problem, hyperparameters, a
 * schedule and initial parameters, and a run's outputs into a result.
 * Validation is strict and every message names the JSON path of the
 * offending value (docs/formats.md, docs/schema/).
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

typedef enum {
    PFLREF_INIT_ZEROS = 0,
    PFLREF_INIT_GIVEN = 1,
    PFLREF_INIT_GAUSSIAN = 2,
    PFLREF_INIT_UNIFORM = 3
} pflref_init_kind;

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
    pflref_record_level record;    /* output.trajectory                    */
    char *problem_source;          /* "inline", "generator:tilt", "file:…" */
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

/* Serialise a result to a NUL-terminated JSON string (*out, free() it).
 * Doubles are written with 17 significant digits and read back exactly. */
pflref_status pflref_result_to_json(const pflref_spec *spec,
                                    const pflref_run_result *res,
                                    const pflref_trajectory *tj,
                                    const pflref_build_info *build,
                                    char **out, pflref_error *err);

/* From a result's text, the per-client values of `metric` ("train_loss",
 * "test_loss", "test_mse", "test_accuracy") for the model labelled `label`
 * ("global", "local", "personalized", ...), and their summary.
 * *values is allocated here (free() it), *N gets its length.  Errors name
 * the missing label or metric. */
pflref_status pflref_result_read_metric(const char *text, size_t len,
                                        const char *label, const char *metric,
                                        double **values, size_t *N,
                                        pflref_summary *summary,
                                        pflref_error *err);

/* Read a whole file into a NUL-terminated buffer (*out, free() it). */
pflref_status pflref_read_file(const char *path, char **out, size_t *len,
                               pflref_error *err);
/* Write text to path atomically: a temporary file in the same folder,
 * then rename; nothing is left behind on failure. */
pflref_status pflref_write_file_atomic(const char *path, const char *text,
                                       pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
