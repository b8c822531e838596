/* fuzz/fuzz_spec.c: libFuzzer harness for the spec reader and validator.
 *
 * Feeds arbitrary bytes to pflref_spec_parse; a spec that parses is run
 * (with a bounded size so the fuzzer explores the reader, not long runs) and
 * its result serialised.  Any crash, leak, out-of-bounds access or
 * undefined behaviour is a defect; a clean error status is the expected
 * outcome for most inputs.  Seeds: fuzz/corpus/fuzz_spec (the shipped
 * specs).  Build and run: `make fuzz` / `make fuzz-smoke`. */
#include <stdint.h>
#include <stdlib.h>
#include <gsl/gsl_errno.h>
#include "pflref.h"

/* Runs larger than this many parameter-steps are parsed but not executed. */
#define MAX_WORK 200000.0

static double work_of(const pflref_spec *spec)
{
    double steps = 0.0;
    const pflref_schedule *s = spec->schedule;
    for (size_t t = 0; t < s->T; t++)
        for (size_t j = 0; j < s->rounds[t].m; j++)
            steps += (double)s->rounds[t].batches[j].step_off
                         [s->rounds[t].batches[j].nsteps];
    for (size_t i = 0; s->post != NULL && i < s->N; i++)
        steps += (double)s->post[i].step_off[s->post[i].nsteps];
    return steps * (double)spec->problem->model.P;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    pflref_error err;
    pflref_spec *spec = NULL;
    if (pflref_spec_parse((const char *)data, size, "/nonexistent", &spec,
                          &err) != PFLREF_OK)
        return 0;
    if (work_of(spec) <= MAX_WORK) {
        pflref_trajectory tj;
        pflref_trajectory_init(&tj, spec->record);
        pflref_trace tr = {pflref_trajectory_emit, &tj};
        pflref_run_result *res = NULL;
        if (pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                       spec->schedule, spec->w0, &tr, &res, &err) == PFLREF_OK) {
            pflref_build_info bi = {"fuzz", "fuzz", "", "", 1};
            char *text = NULL;
            if (pflref_result_to_json(spec, res, &tj, &bi, &text, &err) ==
                PFLREF_OK)
                free(text);
        }
        pflref_run_result_free(res);
        pflref_trajectory_free(&tj);
    }
    pflref_spec_free(spec);
    return 0;
}
