/* pflref/golden.h: golden vectors (format pflref-golden/1, docs/golden.md).
 *
 * A golden vector is a spec with every random choice explicit, the
 * expected final state and trajectory (per round, client and local step),
 * a tolerance {atol, rtol, basis} tested as |x − r| ≤ atol + rtol·|r|, and
 * its provenance (hand, closed_form, enumeration, independent, or self for
 * regression-only vectors).  Expected values are never produced by pflref
 * itself; pflref_golden_verify re-runs the spec through the reference and
 * compares.
 */
#ifndef PFLREF_GOLDEN_H
#define PFLREF_GOLDEN_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PFLREF_GOLDEN_FORMAT "pflref-golden/1"

typedef struct {
    char id[128];
    size_t quantities;     /* expected quantities (vectors) compared      */
    size_t numbers;        /* expected numbers compared                   */
    size_t mismatches;     /* quantities out of tolerance or missing      */
    double max_abs_err;    /* over every number compared                  */
    double max_rel_err;    /* |x − r| / |r| over numbers with r ≠ 0       */
    /* The first divergence, in the expected trajectory's order (the final
     * state comes after the trajectory). */
    int diverged;
    char event[16];
    char phase[16];
    long round, client, step;   /* −1 when not applicable */
    char name[32];
    size_t index;               /* entry of the quantity's vector */
    double expected, got;
    int missing;                /* the reference emitted no such quantity */
} pflref_golden_report;

/* 1 when text is a JSON object whose "format" is pflref-golden/1. */
int pflref_golden_is_vector(const char *text, size_t len);

/* Parse a golden vector, run its spec through the reference (base_dir
 * resolves a relative problem file), and compare with the expectation.
 * Returns PFLREF_OK when the comparison ran (rep->mismatches says whether it
 * passed); an error status for a malformed vector or a failed run. */
pflref_status pflref_golden_verify(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err);

#ifdef __cplusplus
}
#endif
#endif
