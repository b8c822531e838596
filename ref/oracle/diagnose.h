/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose.h: what the diagnosis (ref/oracle/diagnose.c) takes
 * from the comparison of ref/oracle/golden.c. */
#ifndef PFLREF_ORACLE_DIAGNOSE_H
#define PFLREF_ORACLE_DIAGNOSE_H

#include "pflref/golden.h"
#include "io/vector.h"

/* Compare the candidate's records cand with the reference's run `run`
 * taken as the expectation, on the keys of v's expectation, under v's
 * tolerances floored by opt->precision (as pflref_golden_check with
 * resync); opt->partial skips what the candidate did not record.
 *   rep [out] the report, its id v's. */
void pflref_oracle_compare_run(const pflref_vector *v,
                               const pflref_trajectory *run,
                               const pflref_trajectory *cand,
                               const pflref_check_options *opt,
                               pflref_golden_report *rep);

/* Cut s before a UTF-8 sequence that a truncating snprintf left
 * incomplete at its end (the texts become JSON strings, which must be
 * valid UTF-8; ref/oracle/diagnose_rank.c). */
void pflref_oracle_utf8_trim(char *s);

/* pflref_golden_check of a vector and a candidate already read (what
 * diagnose uses to try a precision cast). */
pflref_status pflref_oracle_check_parsed(const pflref_vector *v,
                                        const pflref_candidate *c,
                                        const pflref_check_options *opt,
                                        pflref_golden_report *rep,
                                        pflref_error *err);

/* The candidate against the run of spec (a variant of v's) under
 * opt->precision's Monte Carlo tolerance (ref/oracle/precision.c; a
 * precision other than fp64): what pflref_oracle_check_parsed does for v's
 * own spec, with spec's unperturbed run as the expectation, on the keys of
 * v's expectation that the run or the candidate wrote (diagnose's
 * compound of a precision cast and a change, ref/oracle/diagnose_cast.c).
 * opt->resync is not read. */
pflref_status pflref_oracle_check_spec(const pflref_vector *v,
                                       const pflref_spec *spec,
                                       const pflref_candidate *c,
                                       const pflref_check_options *opt,
                                       pflref_golden_report *rep,
                                       pflref_error *err);

/* Write d->summary, the verdict in words, from d's best matches
 * (ref/oracle/diagnose_json.c). */
void pflref_diagnosis_describe(pflref_diagnosis *d);

#endif
