/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/precision.h: the tolerance of a float32, bfloat16 or TF32 candidate
 * from Monte Carlo arithmetic (ref/oracle/precision.c; docs/validate.md,
 * "Candidate precision"). */
#ifndef PFLREF_ORACLE_PRECISION_H
#define PFLREF_ORACLE_PRECISION_H

#include "pflref/golden.h"

/* One run of the reference into tj (level step), plain or re-synchronised
 * as the check runs it; the perturbation, when one is active, is the
 * thread's (ref/core/mca.h). */
typedef pflref_status (*pflref_mca_runner)(void *ctx, pflref_trajectory *tj,
                                           pflref_error *err);

/* The bounds: for each value of the unperturbed run `base`, the absolute
 * deviation the candidate is allowed (bound[offset + j] for entry j of the
 * base record at offset). */
typedef struct {
    pflref_trajectory base;
    double *bound;
    /* Discontinuities, from PFLREF_MCA_PROBE_RUNS probe runs at
     * PFLREF_MCA_PROBE_SCALE times the unit roundoff: jump[offset + j] > 0
     * when the probes move some entry of j's record by more than its
     * bound (rounding four times the candidate's should move it at most a
     * quarter of C times the spread: more is a jump, a kink within reach,
     * and the jump moves the record's entries together), the band C ×
     * (the probes' largest deviation at j) + the floor within which a
     * candidate is on a branch the probes took; 0 elsewhere.  lost[r] when a
     * perturbed or probe run did not produce base record r (with its
     * length). */
    double *jump;
    unsigned char *lost;
} pflref_mca_bounds;

/* The unit roundoffs of a precision: u[PFLREF_MCA_PRODUCT] of kernel
 * outputs, u[PFLREF_MCA_UPDATE] of steps; 0 for fp64 (no Monte Carlo). */
void pflref_mca_units(pflref_precision p, double u[2]);

/* Run the reference once unperturbed and opt->mca_runs (0: 8) times
 * perturbed at the precision's unit roundoff (seeds from opt->mca_seed,
 * reported in rep->mca_seeds), and set each entry's bound to
 * C × (its largest deviation over the runs) + (A + k) u × (its record's
 * largest magnitude) (C = opt->mca_c, 0: 16; A = PFLREF_MCA_FLOOR_UNITS;
 * k the step of a step record, else 0).  Records whose bound reaches their
 * own magnitude, or that a perturbed run did not produce, are counted in
 * rep->mca_chaotic (the first in rep->mca_first_chaotic).  Then
 * PFLREF_MCA_PROBE_RUNS probe runs at PFLREF_MCA_PROBE_SCALE × u (seeds:
 * the next draws of the same stream) set b->jump and b->lost.  On error
 * nothing is left allocated. */
pflref_status pflref_mca_measure(const pflref_trajectory *keys,
                                 const pflref_check_options *opt,
                                 pflref_mca_runner run, void *ctx,
                                 pflref_mca_bounds *b,
                                 pflref_golden_report *rep,
                                 pflref_error *err);

/* The bounds of the entries of the record with key's key (looked for at
 * index hint first), or NULL when the base run has none of key's length. */
const double *pflref_mca_bound(const pflref_mca_bounds *b,
                               const pflref_record *key, size_t hint);

/* The discontinuity bands of the entries of key's record (jump above), or
 * NULL when the base run has none of key's length. */
const double *pflref_mca_jump(const pflref_mca_bounds *b,
                              const pflref_record *key, size_t hint);

/* Whether a perturbed or probe run did not produce key's record (with the
 * base run's length): a candidate without it is at a discontinuity. */
int pflref_mca_lost(const pflref_mca_bounds *b, const pflref_record *key,
                    size_t hint);

void pflref_mca_bounds_free(pflref_mca_bounds *b);

#endif
