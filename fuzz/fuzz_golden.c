/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_golden.c: libFuzzer harness for the golden-vector readers.
 *
 * Feeds arbitrary bytes to pflref_golden_is_vector, pflref_golden_describe
 * (with id and flags buffers as small as one byte, as `pflref verify`'s
 * filters and the linter use them), pflref_golden_spec and, when the
 * embedded spec's run is small (FUZZ_MAX_WORK), pflref_golden_verify,
 * which re-runs the spec and compares it with the expectation.
 * Invariants: documented statuses with messages; describe's strings are
 * NUL-terminated inside their buffers; golden_spec and golden_verify agree
 * on whether the vector is readable; a verify report is consistent
 * (fuzz_check_report).  A vector is read twice: as it is, and with its
 * content hash made right (fuzz_rehashed), so mutations reach the checks
 * behind the hash.  Seeds: fuzz/corpus/fuzz_golden (the shipped
 * vectors).  Build and run: `make fuzz` / `make fuzz-smoke`. */
#include <stdint.h>
#include <gsl/gsl_errno.h>
#include "fuzz_common.h"

static void read_vector(const char *text, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    read_vector((const char *)data, size);
    char *rehashed = fuzz_rehashed((const char *)data, size);
    if (rehashed != NULL)
        read_vector(rehashed, strlen(rehashed));
    free(rehashed);
    return 0;
}

static void read_vector(const char *text, size_t size)
{
    pflref_error err;
    (void)pflref_golden_is_vector(text, size);

    /* describe, into buffers sized from the input's length */
    char id[128], flags[256];
    size_t id_size = 1 + size % sizeof id, flags_size = 1 + size % sizeof flags;
    memset(id, 'x', sizeof id);
    memset(flags, 'x', sizeof flags);
    pflref_status st = pflref_golden_describe(text, size, id, id_size, flags,
                                              flags_size, &err);
    fuzz_check_error(st, &err);
    if (st == PFLREF_OK) {
        FUZZ_REQUIRE(memchr(id, '\0', id_size) != NULL &&
                         memchr(flags, '\0', flags_size) != NULL,
                     "describe: a string overran its buffer");
        for (size_t i = id_size; i < sizeof id; i++)
            FUZZ_REQUIRE(id[i] == 'x', "describe wrote past id_size");
        for (size_t i = flags_size; i < sizeof flags; i++)
            FUZZ_REQUIRE(flags[i] == 'x', "describe wrote past flags_size");
    }

    pflref_spec *spec = NULL;
    st = pflref_golden_spec(text, size, "/nonexistent", &spec, &err);
    fuzz_check_error(st, &err);
    FUZZ_REQUIRE((st == PFLREF_OK) == (spec != NULL),
                 "golden_spec: *out disagrees with the status");
    if (st != PFLREF_OK)
        return;
    FUZZ_REQUIRE(spec->id != NULL, "golden_spec: a spec without the id");
    const int small = fuzz_work_of(spec) <= FUZZ_MAX_WORK;
    pflref_spec_free(spec);
    if (!small)
        return;
    pflref_golden_report rep;
    st = pflref_golden_verify(text, size, "/nonexistent", &rep, &err);
    fuzz_check_error(st, &err);
    /* the vector read; only the run can fail now */
    FUZZ_REQUIRE(st == PFLREF_OK || st == PFLREF_EINVAL ||
                     st == PFLREF_EDIVERGE || st == PFLREF_ENOMEM,
                 "verify: unexpected status");
    if (st == PFLREF_OK)
        fuzz_check_report(&rep);
}
