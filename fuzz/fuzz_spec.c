/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_spec.c: libFuzzer harness for the spec reader and validator.
 *
 * Feeds arbitrary bytes to pflref_spec_parse; a spec that parses is run
 * (with a bounded size, FUZZ_MAX_WORK, so the fuzzer explores the reader,
 * not long runs) and its result serialised.  Any crash, leak, out-of-bounds
 * access or undefined behaviour is a defect; a clean error status is the
 * expected outcome for most inputs.  Invariants: every status is a
 * documented one with a message (never EINTERNAL); a run that succeeds
 * serialises.  Seeds: fuzz/corpus/fuzz_spec (the shipped specs and the
 * golden vectors' embedded specs).  Build and run: `make fuzz` /
 * `make fuzz-smoke`. */
#include <stdint.h>
#include <gsl/gsl_errno.h>
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    pflref_error err;
    pflref_spec *spec = NULL;
    pflref_status st = pflref_spec_parse((const char *)data, size,
                                         "/nonexistent", &spec, &err);
    fuzz_check_error(st, &err);
    if (st != PFLREF_OK)
        return 0;
    if (fuzz_work_of(spec) <= FUZZ_MAX_WORK) {
        pflref_trajectory tj;
        pflref_trajectory_init(&tj, spec->record);
        pflref_trace tr = {pflref_trajectory_emit, &tj};
        pflref_run_result *res = NULL;
        st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                        spec->schedule, spec->w0, &tr, &res, &err);
        fuzz_check_error(st, &err);
        if (st == PFLREF_OK) {
            pflref_build_info bi = {"fuzz", "fuzz", "", "", 1};
            char *text = NULL;
            st = pflref_result_to_json(spec, res, &tj, &bi, &text, &err);
            FUZZ_REQUIRE(st == PFLREF_OK && text != NULL,
                         "a successful run's result does not serialise");
            free(text);
        }
        pflref_run_result_free(res);
        pflref_trajectory_free(&tj);
    }
    pflref_spec_free(spec);
    return 0;
}
