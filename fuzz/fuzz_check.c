/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_check.c: libFuzzer harness for `pflref check`
 * (pflref_golden_check_at) on mutated expected/candidate pairs.
 *
 * Input layout: byte 0 holds the options (bit 0 fp32 precision, bit 1
 * resync, bit 2 partial, bit 3 same_id); the remaining bytes are
 * EXPECTED NUL CANDIDATE, split at the first NUL (without a NUL the
 * document is compared with itself).  Resync re-runs the vector's spec, so
 * it is turned off when that run is large (FUZZ_MAX_WORK).
 *
 * Invariants:
 *   - every status is documented, with a message; a malformed document is
 *     named: without resync an EINVAL's `where` starts "expected:" or
 *     "candidate";
 *   - a successful report is consistent (fuzz_check_report);
 *   - self-agreement: when EXPECTED reads as a vector, its own expected
 *     values written as a candidate (format pflref-result/1, its id, its
 *     "final" and "trajectory") check with OK, zero mismatches and zero
 *     error (the precision and partial bits of byte 0 apply, resync not);
 *     when EXPECTED does not read, that check fails at "expected:".
 * EXPECTED is read twice: as it is, and with its content hash made right
 * (fuzz_rehashed), so mutations reach the checks behind the hash.
 * Seeds: fuzz/corpus/fuzz_check (fuzz/seed_corpus.py): each of a set of
 * golden vectors paired with the result `pflref run` writes for it (resync
 * off and on) and with its own expectation.
 * Build and run: `make fuzz` / `make fuzz-smoke`. */
#include <stdint.h>
#include <gsl/gsl_errno.h>
#include <jansson.h>
#include "fuzz_common.h"

/* The vector's expected values as a candidate result, or NULL when the
 * document has no object "expected" and string "id". */
static char *self_candidate(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *exp = json_object_get(root, "expected");
    const json_t *id = json_object_get(root, "id");
    char *out = NULL;
    if (json_is_object(exp) && json_is_string(id)) {
        json_t *cand = json_deep_copy(exp);
        json_object_set_new(cand, "format", json_string(PFLREF_RESULT_FORMAT));
        json_object_set(cand, "id", (json_t *)id);
        out = json_dumps(cand, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(cand);
    }
    json_decref(root);
    return out;
}

static void check_self(const char *vec, size_t vlen, unsigned flags)
{
    char *cand = self_candidate(vec, vlen);
    if (cand == NULL)
        return;
    pflref_check_options opt = {(flags & 1) ? PFLREF_PRECISION_FP32
                                            : PFLREF_PRECISION_FP64,
                                0, (flags >> 2) & 1, 1, 2, 0.0, 0};
    pflref_golden_report rep;
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_golden_check_at(vec, vlen, "/nonexistent",
                                              cand, strlen(cand),
                                              "/nonexistent", &opt, &rep,
                                              &err);
    fuzz_check_error(st, &err);
    if (st != PFLREF_OK) {
        FUZZ_REQUIRE(strncmp(err.where, "expected:", 9) == 0,
                     "a vector's own expectation was refused as a candidate");
    } else {
        fuzz_check_report(&rep);
        FUZZ_REQUIRE(!rep.wrong_outcome && rep.mismatches == 0 &&
                         rep.skipped == 0 && rep.quantities > 0,
                     "a vector's own expectation does not match it");
        FUZZ_REQUIRE(rep.max_abs_err == 0.0 && rep.max_ulp == 0 &&
                         rep.min_lre == PFLREF_LRE_CAP,
                     "an exact match reported with an error");
    }
    free(cand);
}

static void check_pair(unsigned flags, const char *vec, size_t vlen,
                       const char *cand, size_t clen);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    if (size < 1)
        return 0;
    const unsigned flags = data[0];
    const char *vec = (const char *)data + 1;
    size_t vlen = size - 1;
    const char *sep = memchr(vec, '\0', vlen);
    const char *cand = sep != NULL ? sep + 1 : vec;
    size_t clen = sep != NULL ? vlen - (size_t)(sep + 1 - vec) : vlen;
    if (sep != NULL)
        vlen = (size_t)(sep - vec);
    check_pair(flags, vec, vlen, cand, clen);
    char *rehashed = fuzz_rehashed(vec, vlen);
    if (rehashed != NULL)
        check_pair(flags, rehashed, strlen(rehashed),
                   sep != NULL ? cand : rehashed,
                   sep != NULL ? clen : strlen(rehashed));
    free(rehashed);
    return 0;
}

static void check_pair(unsigned flags, const char *vec, size_t vlen,
                       const char *cand, size_t clen)
{
    pflref_check_options opt = {(flags & 1) ? PFLREF_PRECISION_FP32
                                            : PFLREF_PRECISION_FP64,
                                (flags >> 1) & 1, (flags >> 2) & 1,
                                (flags >> 3) & 1, 2, 0.0, 0};
    if (opt.resync) {   /* only small runs are re-run */
        pflref_spec *spec = NULL;
        if (pflref_golden_spec(vec, vlen, "/nonexistent", &spec, NULL) !=
                PFLREF_OK ||
            fuzz_work_of(spec) > FUZZ_MAX_WORK)
            opt.resync = 0;
        pflref_spec_free(spec);
    }
    pflref_golden_report rep;
    pflref_error err;
    pflref_error_clear(&err);
    /* a candidate's file references resolve in a folder that does not
     * exist: the fuzzer reads no file of its own folder */
    pflref_status st = pflref_golden_check_at(vec, vlen, "/nonexistent",
                                              cand, clen, "/nonexistent",
                                              &opt, &rep, &err);
    fuzz_check_error(st, &err);
    if (st == PFLREF_OK)
        fuzz_check_report(&rep);
    else if (!opt.resync)
        FUZZ_REQUIRE(st == PFLREF_ENOMEM ||
                         strncmp(err.where, "expected:", 9) == 0 ||
                         strncmp(err.where, "candidate", 9) == 0,
                     "a check error that names neither document");
    check_self(vec, vlen, flags);
}
