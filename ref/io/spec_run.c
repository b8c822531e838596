/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_run.c: running a spec, from a parsed spec or from its text
 * (pflref_spec_run, pflref_spec_run_text, pflref_spec_run_output in
 * pflref/io.h).
 *
 * Glue only: the run is pflref_run's (ref/engine/run.c), the reading
 * pflref_spec_parse's or pflref_golden_spec's, the writing
 * pflref_result_to_json's (a text) or pflref_result_write's (a file, its
 * arrays inline or in the files form; pflref_spec_run_output).  What the
 * writing would refuse is refused after the reading, before the run.  The
 * trajectory is recorded at the spec's output.trajectory level, and every
 * event also goes to the caller's sink (recorder first, then the caller's),
 * so `pflref run --trace` prints what the result records.
 */
#include <stdlib.h>
#include "pflref/io.h"
#include "io/spec_read.h"
#include "sampling/schedule_trace.h"

pflref_status pflref_spec_run(const pflref_spec *spec,
                              const pflref_trace *trace,
                              pflref_run_result **out, pflref_error *err)
{
    if (spec == NULL || out == NULL) {
        if (out != NULL)
            *out = NULL;
        return pflref_error_set(err, PFLREF_EINVAL,
                                spec == NULL ? "spec" : "out",
                                "the argument is NULL");
    }
    /* IFCA's given θ_j⁰ (init.cluster_models) are the n_cluster_models
     * read for the spec's ifca.k: a caller that changed ifca.k since (a
     * variant of diagnose's search) cannot run them as k models */
    if (spec->hyper.ifca.theta0 != NULL &&
        spec->hyper.ifca.k != spec->n_cluster_models) {
        *out = NULL;
        return pflref_error_set(err, PFLREF_EINVAL, "init.cluster_models",
                                "%zu initial cluster models given for "
                                "ifca.k = %zu", spec->n_cluster_models,
                                spec->hyper.ifca.k);
    }
    /* a generated schedule's l. 4 (McMahan et al., Alg. 1: m ← max(C·K,
     * 1)) in front of the caller's sink (ref/sampling/schedule_trace.c) */
    const pflref_schedule_trace drawn = {
        .next = trace,
        .cfg = &spec->schedule_cfg,
        .K = spec->problem != NULL ? spec->problem->N : 0,
    };
    const pflref_trace shown = {pflref_schedule_trace_emit, (void *)&drawn};
    const int wrap = !spec->schedule_given && trace != NULL &&
                     trace->emit != NULL;
    return pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                      spec->schedule, spec->w0, wrap ? &shown : trace, out,
                      err);
}

/* Run spec, recording its trajectory, and write the result: to path, or,
 * with path NULL, as the text *result. */
static pflref_status run_and_write(const pflref_spec *spec,
                                   const pflref_trace *trace, const char *path,
                                   char **result, pflref_error *err)
{
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, spec->record);
    pflref_trace recorder = {pflref_trajectory_emit, &tj};
    pflref_trace_tee tee = {&recorder, trace};
    pflref_trace both = {pflref_trace_tee_emit, &tee};
    pflref_run_result *res = NULL;
    pflref_status st = pflref_spec_run(spec, &both, &res, err);
    if (st == PFLREF_OK) {
        pflref_build_info bi;
        pflref_build_info_get(&bi);
        st = path != NULL ? pflref_result_write(path, spec, res, &tj, &bi,
                                                &spec->arrays, err)
                          : pflref_result_to_json(spec, res, &tj, &bi, result,
                                                  err);
    }
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    return st;
}

/* The spec or vector of text, parsed (*spec, NULL on error). */
static pflref_status parse(const char *text, size_t len, const char *base_dir,
                           pflref_spec **spec, pflref_error *err)
{
    /* A golden vector's embedded spec is run, and the result carries the
     * vector's id, so it is a candidate for pflref_golden_check. */
    /* The data arrays are lifted once (pflref_json_lift), so neither the
     * test for a vector nor the spec's parse builds a node per number. */
    pflref_json_numerics nums = {.a = NULL};
    size_t llen = 0;
    char *lifted = pflref_spec_lift(text, len, &llen, &nums);
    pflref_status st =
        pflref_golden_is_vector(lifted != NULL ? lifted : text,
                                lifted != NULL ? llen : len)
            ? pflref_golden_spec(text, len, base_dir, spec, err)
            : pflref_spec_parse_lifted(text, len, lifted, llen, base_dir,
                                       &nums, spec, err);
    free(lifted);
    pflref_json_numerics_free(&nums);
    return st;
}

/* over's settings over the spec's output; then what the writing of the
 * result to path (NULL: a text) would refuse. */
static pflref_status prepare_output(pflref_spec *spec,
                                    const pflref_output_override *over,
                                    const char *path, pflref_error *err)
{
    if (over != NULL && over->set_form)
        spec->arrays.form = over->form;
    if (over != NULL && over->set_inline_max)
        spec->arrays.inline_max = over->inline_max;
    if (path != NULL)
        return pflref_result_write_check(path, &spec->arrays, err);
    if (spec->arrays.form == PFLREF_ARRAYS_FILES)
        return pflref_error_set(err, PFLREF_EINVAL, "output.arrays",
                                "the files form puts the result's arrays "
                                "in .npy files in a folder beside the "
                                "result file (STEM.arrays/), and a result "
                                "written as text alone (standard output, "
                                "-o -) has none: write the result to a "
                                "file, or choose output.arrays \"inline\"");
    return PFLREF_OK;
}

pflref_status pflref_spec_run_output(const char *text, size_t len,
                                     const char *base_dir,
                                     const pflref_trace *trace,
                                     const pflref_output_override *over,
                                     const char *path, char **result,
                                     pflref_error *err)
{
    if (result != NULL)
        *result = NULL;
    if (text == NULL || (path == NULL && result == NULL))
        return pflref_error_set(err, PFLREF_EINVAL,
                                text == NULL ? "text" : "result",
                                "the argument is NULL");
    pflref_spec *spec = NULL;
    pflref_status st = parse(text, len, base_dir, &spec, err);
    if (st == PFLREF_OK)
        st = prepare_output(spec, over, path, err);
    if (st == PFLREF_OK)
        st = run_and_write(spec, trace, path, result, err);
    pflref_spec_free(spec);
    return st;
}

pflref_status pflref_spec_run_text(const char *text, size_t len,
                                   const char *base_dir,
                                   const pflref_trace *trace, char **result,
                                   pflref_error *err)
{
    if (result == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "result",
                                "the argument is NULL");
    return pflref_spec_run_output(text, len, base_dir, trace, NULL, NULL,
                                  result, err);
}
