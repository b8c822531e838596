/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/golden.h: the comparison of runs with golden vectors (format
 * pflref-golden/1: docs/formats.md, docs/schema/golden.schema.json,
 * golden/README.md).  What a vector holds is read by pflref/io.h
 * (pflref_golden_is_vector, pflref_golden_describe, pflref_golden_spec).
 *
 * A golden vector is a spec with every random choice explicit, content
 * hashes of the whole vector and of each part, the expected final state and trajectory (per round,
 * client and local step), a tolerance {atol, rtol, basis} tested as
 * |x − r| ≤ atol + rtol·|r|, its provenance (hand, closed_form, enumeration,
 * independent, or self for regression-only vectors) and the bug classes it
 * targets (flags).  Expected values are never produced by pflref itself.
 *
 *   pflref_golden_verify  re-runs the vector's spec through the reference
 *                         and compares (`pflref verify`)
 *   pflref_golden_check   compares a candidate implementation's result
 *                         with the vector (`pflref check`), optionally
 *                         re-synchronised: every round is recomputed by the
 *                         reference from the candidate's own state at the
 *                         round's start, so one early error does not hide
 *                         later, independent ones.
 */
#ifndef PFLREF_GOLDEN_H
#define PFLREF_GOLDEN_H

#include <stddef.h>
#include <stdint.h>
#include "status.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Log relative error is capped here (correct significant digits of an exact
 * match; DESIGN.md "Golden vectors" 6). */
#define PFLREF_LRE_CAP 15.95

/* Monte Carlo arithmetic: the defaults and the most runs. */
#define PFLREF_MCA_RUNS 8
#define PFLREF_MCA_C 16.0
#define PFLREF_MCA_MAX_RUNS 64
/* units of roundoff of a record's magnitude every entry is allowed */
#define PFLREF_MCA_FLOOR_UNITS 4.0
/* Discontinuity probes (docs/validate.md, "Kinks and jumps"): runs at
 * PFLREF_MCA_PROBE_SCALE times the unit roundoff, which find the kinks
 * (a ReLU, a max-pool argmax, an exact test) within reach of rounding. */
#define PFLREF_MCA_PROBE_RUNS 16
#define PFLREF_MCA_PROBE_SCALE 4.0

/* One quantity that differs: its key, the first entry out of tolerance. */
typedef struct {
    char event[16];
    char phase[16];
    long round, client, step;   /* −1 when not applicable */
    char name[32];
    size_t index;               /* entry of the quantity's vector */
    double expected, got;
    int missing;                /* the run produced no such quantity (or
                                   one of another length) */
    size_t got_len, expected_len; /* when missing: the lengths (got_len 0:
                                   no record with this key)               */
    size_t record;              /* 1: the run's first record of this key;
                                   k > 1: its k-th, a duplicate record     */
    size_t position;            /* the key's place in the expected
                                   trajectory (0-based, the final state
                                   last), as pflref_digit_point.position   */
} pflref_divergence;

/* Digits per quantity name ("w", "w_local", "theta", ...). */
typedef struct {
    char name[32];
    size_t quantities, numbers, mismatches;
    double max_abs_err, max_rel_err, min_lre;
    uint64_t max_ulp;
    size_t sign_differs;   /* numbers whose sign differs from the expected
                              one's (both non-zero)                       */
    size_t not_finite;     /* numbers that are NaN or ±Inf                */
    int max_orders;        /* the most orders of magnitude a number is off:
                              ⌊|log10(|x| / |r|)|⌋ over x, r non-zero of
                              one sign (0: within a factor of 10)        */
    size_t skipped;        /* records of this name skipped (partial)      */
    double atol, rtol;     /* the tolerance this name was held to          */
} pflref_quantity_stats;

#define PFLREF_MAX_QUANTITY_NAMES 16

/* Correct digits along the trajectory: the fewest correct digits of one
 * quantity name over its records in one stretch of the expected
 * trajectory.  Positions count the expected records in the vector's order
 * (round, client, step; the final state last) from 0; a stretch is
 * `digits_stretch` consecutive positions (1, one point per record, unless
 * the trajectory has more records than PFLREF_MAX_DIGIT_POINTS allows),
 * so a long run stays bounded and keeps each stretch's worst digits. */
typedef struct {
    size_t position;       /* the first record of this name in the
                              stretch                                     */
    long round;            /* its round (−1: none, as the final state)    */
    size_t name;           /* the quantity: an index into by_name         */
    size_t records;        /* expected records of this name in the stretch
                              compared                                    */
    size_t mismatches;     /* of which out of tolerance or missing        */
    double min_lre;        /* fewest correct digits over their numbers
                              (duplicate records too); 0 for a record the
                              run lacks or wrote with another length      */
} pflref_digit_point;

#define PFLREF_MAX_DIGIT_POINTS 1024

typedef struct {
    char id[128];
    /* The same statistics for each quantity name, in order of first
     * appearance (names beyond PFLREF_MAX_QUANTITY_NAMES count in the
     * totals only). */
    size_t n_names;
    pflref_quantity_stats by_name[PFLREF_MAX_QUANTITY_NAMES];
    size_t quantities;     /* expected quantities (vectors) compared      */
    size_t numbers;        /* expected numbers compared                   */
    size_t mismatches;     /* quantities out of tolerance or missing      */
    size_t missing;        /* of which the run did not produce (or produced
                              with another length)                        */
    size_t skipped;        /* expected quantities the candidate did not
                              record, skipped under `partial`             */
    double max_abs_err;    /* over every number compared                  */
    double max_rel_err;    /* |x − r| / |r| over numbers with r ≠ 0       */
    double min_lre;        /* fewest correct digits (log relative error,
                              absolute where r = 0, capped at 15.95)      */
    uint64_t max_ulp;      /* largest distance in units in the last place,
                              over numbers x, r non-zero of one sign (the
                              absolute error speaks for the others)       */
    size_t sign_differs;   /* as pflref_quantity_stats, over every number */
    size_t not_finite;
    int max_orders;
    /* Statistics and divergences cover every record the run wrote under an
     * expected key (a duplicate record too); `numbers` counts the expected
     * numbers once. */
    size_t expected_records;  /* records the vector expects              */
    /* The first divergence, in the expected trajectory's order (the final
     * state comes last); valid when diverged. */
    int diverged;
    pflref_divergence first;
    /* The candidate declared an outcome other than "ok" (its "outcome"
     * {"class": ...}); nothing was compared numerically. */
    int wrong_outcome;
    char outcome[16];
    /* Under resync, the vector's hyperparameters keep state outside the
     * records (pflref_resync_refusal): nothing was compared, the check
     * returned that refusal (err names the state); `check` skips it. */
    int resync_refused;
    /* Monte Carlo arithmetic (precision fp32, bf16, tf32): mca is 1 when
     * the tolerance came from it; the runs, C, the largest unit roundoff,
     * the runs' seeds; mca_amplification the largest deviation over u ×
     * its record's magnitude; mca_chaotic the records whose spread
     * reaches their magnitude or that a perturbed run did not produce
     * (no evidence either way: never a silent pass), the first named. */
    int mca;
    size_t mca_runs;
    double mca_c, mca_u, mca_amplification;
    uint64_t mca_seeds[PFLREF_MCA_MAX_RUNS];
    size_t mca_chaotic;
    pflref_divergence mca_first_chaotic;
    /* Entries out of the bound that sit at a discontinuity (no evidence
     * either way, not a mismatch): the candidate's value is within the
     * spread of the probe runs that jumped there, or it lacks a record a
     * perturbed run lacks too.  mca_kinks counts those quantities, the
     * first named (its entry, expected and got) with mca_kink_reason
     * ("jump": the probes jump there, "record": a run lacks the record). */
    size_t mca_kinks;
    pflref_divergence mca_first_kink;
    char mca_kink_reason[16];
    /* Every divergent quantity, in order (at most PFLREF_MAX_LISTED). */
    size_t n_listed;
    pflref_divergence listed[64];
    /* Correct digits along the trajectory, in position order (names beyond
     * PFLREF_MAX_QUANTITY_NAMES have none). */
    size_t digits_stretch;  /* positions per point (≥ 1 once compared)   */
    size_t n_points;
    pflref_digit_point points[PFLREF_MAX_DIGIT_POINTS];
    /* The rounds of the expected trajectory -- runs of consecutive
     * expected records with one phase and round ≥ 0, the final state
     * not a round -- and how many of them had a record compared (under
     * `partial` a round the candidate wrote nothing of is not; `check
     * --partial` without --partial-min needs every round: docs/cli.md). */
    size_t rounds_expected;
    size_t rounds_compared;
} pflref_golden_report;

#define PFLREF_MAX_LISTED 64

/* Tolerances a candidate is held to at least (docs/validate.md): the
 * vector's own tolerance or these, whichever is looser. */
/* fp64 is held to the floor alone; fp32, bf16 and tf32 to the vector's
 * tolerance or the Monte Carlo arithmetic bound of each entry (the
 * reference re-run with random rounding at the candidate's unit roundoff:
 * 2^-24, 2^-8, 2^-11 for TF32's products and 2^-24 for its steps),
 * whichever is looser (docs/validate.md, "Candidate precision").  The
 * fixed fp32 floor (atol 1e-5, rtol 1e-4) remains only for diagnose. */
typedef enum {
    PFLREF_PRECISION_FP64 = 0,  /* atol 1e-13, rtol 1e-11 */
    PFLREF_PRECISION_FP32 = 1,  /* Monte Carlo arithmetic, u = 2^-24 */
    PFLREF_PRECISION_BF16 = 2,  /* Monte Carlo arithmetic, u = 2^-8  */
    PFLREF_PRECISION_TF32 = 3   /* products 2^-11, steps 2^-24       */
} pflref_precision;

/* One Monte Carlo run outside a check, for measuring the bound itself
 * (tests/detection/precision_margin.py): after pflref_mca_begin(p, seed)
 * every run of the reference on the calling thread (pflref_spec_run_text,
 * ...) is perturbed as a check's perturbed run with that seed is (the
 * seeds a check draws are in its report), until pflref_mca_end().  p =
 * PFLREF_PRECISION_FP64 (or any other value) turns the perturbation off.
 * Not for validation: a check makes its own runs. */
void pflref_mca_begin(pflref_precision p, uint64_t seed);
/* As pflref_mca_begin with the unit roundoffs times scale (> 0): a check's
 * discontinuity probe run is pflref_mca_begin_scaled(p, seed,
 * PFLREF_MCA_PROBE_SCALE) with that probe's seed.  The window of an exact
 * test (a sum within u·Σ|terms| of 0 counts as 0) keeps p's own u: it is
 * where the candidate's format can make the sum 0, whatever the scale. */
void pflref_mca_begin_scaled(pflref_precision p, uint64_t seed, double scale);
void pflref_mca_end(void);


/* Parse a golden vector, run its spec through the reference (base_dir,
 * the vector's folder, resolves a relative problem file and the .npy files
 * of a vector in files: docs/formats.md, "Golden vectors in files"), and
 * compare with the expectation.
 * Returns PFLREF_OK when the comparison ran (rep->mismatches says whether it
 * passed); an error status for a malformed vector or a failed run.  A
 * vector without its "hash", or whose content does not match it (the
 * error names the part that changed), with a flag its registry lacks
 * (the nearest flags.json at or above base_dir, else the built-in one),
 * or with a tolerance above 1e-10 not argued for, is malformed
 * (docs/formats.md, "Golden vectors"). */
pflref_status pflref_golden_verify(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err);

typedef struct {
    pflref_precision precision;
    int resync;    /* recompute every round from the candidate's state
                      (needs its server "w" records and, for algorithms with
                      personal models, its client_end records)           */
    int partial;   /* expected quantities the candidate did not record are
                      skipped (and counted) instead of failing; at least one
                      quantity must still be compared                      */
    int same_id;   /* the candidate's "id", when it has one, must be the
                      vector's                                             */
    /* Monte Carlo arithmetic (precision fp32, bf16, tf32; 0 = default):
     * runs K (1 … PFLREF_MCA_MAX_RUNS), the factor C on the largest
     * deviation, and the seed the runs' seeds are drawn from. */
    size_t mca_runs;
    double mca_c;
    uint64_t mca_seed;
} pflref_check_options;

/* Compare a candidate result (pflref-result/1 text with "final" and/or
 * "trajectory"; other result fields and a free "meta" object are allowed)
 * with a golden vector.
 * The vector is validated as by pflref_golden_verify.
 * Errors: PFLREF_EINVAL for a malformed vector (where starts "expected:")
 * or candidate (where starts "candidate:"), or a candidate for another
 * vector (same_id). */
pflref_status pflref_golden_check(const char *expected, size_t expected_len,
                                  const char *base_dir, const char *candidate,
                                  size_t candidate_len,
                                  const pflref_check_options *opt,
                                  pflref_golden_report *rep,
                                  pflref_error *err);

/* pflref_golden_check of a candidate whose arrays may be in files: its
 * file references (final.w, final.v, final.alpha, w0, theta0,
 * hypernetwork.W/b/v, trajectory_values) are relative to candidate_dir,
 * the folder of the candidate's file (NULL: the current folder, which is
 * what pflref_golden_check uses), and are checked against the candidate's
 * "array_files" manifest when it has one (docs/formats.md, "Arrays in
 * files").  A reference that cannot be read, has the wrong dtype or
 * shape, or disagrees with the manifest is a malformed candidate
 * (PFLREF_EINVAL, or PFLREF_EIO for a file that cannot be opened; where
 * "candidate:<field>").  base_dir is the vector's folder, as for
 * pflref_golden_check. */
pflref_status pflref_golden_check_at(const char *expected,
                                     size_t expected_len,
                                     const char *base_dir,
                                     const char *candidate,
                                     size_t candidate_len,
                                     const char *candidate_dir,
                                     const pflref_check_options *opt,
                                     pflref_golden_report *rep,
                                     pflref_error *err);

/* ---- diagnosis: which known variant a failing candidate computes
 * (ref/oracle/diagnose.c; docs/cli.md, "diagnose"; docs/variants.md). ---- */

/* Best matches kept in a diagnosis. */
#define PFLREF_DIAGNOSE_TOP 8
/* Runs a diagnosis makes unless told otherwise. */
#define PFLREF_DIAGNOSE_BUDGET 200

/* One variant of the vector's spec, and how far the candidate agrees with
 * the reference's run of it. */
typedef struct {
    char kind[16];         /* "spec" (the vector's own settings), "preset",
                              "switch" (one switch changed), "probe" (one
                              hyperparameter scaled, zeroed or defaulted; a
                              count one more or fewer; a step fewer), "pair"
                              (two changes), "triple" (three changes,
                              tried last) or "precision" (the spec, or a
                              variant of it, within float32's or
                              bfloat16's rounding spread: a precision
                              cast, alone with param "precision" or with
                              a change, param "precision KEY[ KEY2]",
                              change "float32 + CHANGE")                  */
    char preset[32];       /* the preset the variant starts from          */
    char change[128];      /* "" or the one change: "pfedme.weights =
                              samples", "eta × 2 = 0.43 (instead of
                              0.215)"                                     */
    char param[32];        /* the changed parameter's key, or ""          */
    char value[32];        /* its value in the variant, or ""             */
    char source[256];      /* the code the preset reproduces, or "the
                              paper"                                      */
    int complete;          /* every expected record within tolerance      */
    size_t agreeing;       /* expected records before the first divergence
                              (in the expected trajectory's order)        */
    size_t expected_records, mismatches;
    double min_lre;        /* fewest correct digits over every number     */
    int diverged;
    pflref_divergence first;
    /* -- what the candidate wrote, attribution, identical variants -- */
    size_t compared;       /* expected records compared (under `partial`,
                              only those the candidate wrote: `agreeing`
                              counts only these)                          */
    char value_source[256];/* the code the changed switch value comes from
                              (pflref_param_value_source), "" without a
                              switch change                               */
    char identical[384];   /* "" or the other variants whose run is
                              numerically identical to this one on this
                              vector, and what would tell them apart      */
} pflref_variant_match;

typedef struct {
    char id[128];
    char algorithm[32];
    char spec_preset[32];  /* the vector's own preset                     */
    size_t runs;           /* variants run (the budget bounds it)         */
    size_t refused;        /* of which the reference refused (a switch
                              combination or a bound) or saw diverge      */
    int budget_exhausted;  /* the search stopped at the budget            */
    int matched;           /* best[0] matches completely                  */
    int wrong_outcome;     /* the candidate declared another outcome:
                              nothing compared                            */
    size_t n_best;         /* best matches, best first                    */
    pflref_variant_match best[PFLREF_DIAGNOSE_TOP];
    char summary[768];     /* the verdict in words                        */
    size_t unchanged;      /* changes whose run equals their base's run on
                              this vector, bit for bit: not listed         */
    int partial;           /* compared under `partial`                    */
} pflref_diagnosis;

typedef struct {
    pflref_check_options check;  /* precision, partial (resync, same_id
                                    as for check)                          */
    size_t budget;               /* most runs (0: PFLREF_DIAGNOSE_BUDGET)  */
    /* Called after each variant run (NULL: none): runs so far, the
     * budget; the CLI's progress line on a terminal. */
    void (*progress)(void *ctx, size_t runs, size_t budget);
    void *progress_ctx;
} pflref_diagnose_options;

/* Search the known variants of the vector's algorithm for the one the
 * candidate computes: the vector's spec, every preset of the algorithm
 * ("paper" too); then from the spec and from every preset one change at a
 * time: every other value of every switch the algorithm reads, and probes
 * of its hyperparameters (× 2, × ½, 0 where allowed, the registry's
 * default; a count ± 1; one local step fewer in every list), with the
 * registry's linked pairs (pflref_param_links); then a beam of two
 * changes; then, when nothing matched and the candidate wrote a quantity
 * in float32 (bfloat16) numbers, a precision cast: the spec, then the 3
 * variants agreeing furthest at that format's fixed floor, each within its
 * Monte Carlo rounding spread.  Each variant runs the vector's spec with
 * the same schedule (pflref_spec_run) and the candidate is compared with that run as the
 * expectation (as pflref_golden_check).  A change whose run equals its
 * base's is counted in d->unchanged, not listed; variants identical on
 * the vector are listed once (`identical`).  Variants are ranked by a
 * complete match, then how many expected records the candidate wrote
 * agree before the first divergence, then fewer mismatches, more digits,
 * fewer changes.  The search stops after the level of the first complete
 * match and at the budget (docs/cli.md, "diagnose").
 * Errors: those of pflref_golden_check (a malformed vector, "expected:";
 * candidate, "candidate:"), and the vector's own spec failing to run
 * ("expected:"); a variant the reference refuses or that diverges is
 * counted in d->refused and left out. */
pflref_status pflref_golden_diagnose(const char *expected, size_t expected_len,
                                     const char *base_dir,
                                     const char *candidate,
                                     size_t candidate_len,
                                     const pflref_diagnose_options *opt,
                                     pflref_diagnosis *d, pflref_error *err);
/* pflref_golden_diagnose with the candidate's file references relative to
 * candidate_dir (as pflref_golden_check_at; NULL: the current folder). */
pflref_status pflref_golden_diagnose_at(const char *expected,
                                        size_t expected_len,
                                        const char *base_dir,
                                        const char *candidate,
                                        size_t candidate_len,
                                        const char *candidate_dir,
                                        const pflref_diagnose_options *opt,
                                        pflref_diagnosis *d,
                                        pflref_error *err);

/* ---- for bindings in other languages (the Python package; docs/python.md):
 * JSON text in, JSON text out, so no struct layout has to be mirrored.
 * Every text returned through `out` is NUL-terminated, allocated here, and
 * released with pflref_text_free; *out is NULL on error. ---------------- */

/* rep as JSON, format pflref-report/1 (ref/oracle/report_json.c): passed,
 * the statistics overall and per quantity name, the first divergence (or
 * null) and every listed one. */
pflref_status pflref_golden_report_json(const pflref_golden_report *rep,
                                        char **out, pflref_error *err);
/* pflref_golden_verify and pflref_golden_check, with the report as JSON
 * text (pflref_golden_report_json).  Same statuses and errors. */
pflref_status pflref_golden_verify_json(const char *text, size_t len,
                                        const char *base_dir, char **out,
                                        pflref_error *err);
pflref_status pflref_golden_check_json(const char *expected,
                                       size_t expected_len,
                                       const char *base_dir,
                                       const char *candidate,
                                       size_t candidate_len,
                                       const pflref_check_options *opt,
                                       char **out, pflref_error *err);
/* The same with the candidate's file references relative to
 * candidate_dir (pflref_golden_check_at). */
pflref_status pflref_golden_check_json_at(const char *expected,
                                          size_t expected_len,
                                          const char *base_dir,
                                          const char *candidate,
                                          size_t candidate_len,
                                          const char *candidate_dir,
                                          const pflref_check_options *opt,
                                          char **out, pflref_error *err);

/* d as JSON, format pflref-diagnosis/1 (ref/oracle/diagnose_json.c): id,
 * algorithm, spec_preset, matched, summary, runs, refused,
 * budget_exhausted, wrong_outcome, best: [{kind, preset, change, param,
 * value, source, complete, agreeing, expected_records, mismatches,
 * min_lre, first_divergence (null or as pflref-report/1's)}]. */
pflref_status pflref_diagnosis_json(const pflref_diagnosis *d, char **out,
                                    pflref_error *err);
/* pflref_golden_diagnose with the diagnosis as JSON text; budget 0: the
 * default.  Same statuses and errors. */
pflref_status pflref_golden_diagnose_json(const char *expected,
                                          size_t expected_len,
                                          const char *base_dir,
                                          const char *candidate,
                                          size_t candidate_len,
                                          const pflref_check_options *opt,
                                          size_t budget, char **out,
                                          pflref_error *err);
/* The same with the candidate's file references relative to
 * candidate_dir (pflref_golden_diagnose_at). */
pflref_status pflref_golden_diagnose_json_at(const char *expected,
                                             size_t expected_len,
                                             const char *base_dir,
                                             const char *candidate,
                                             size_t candidate_len,
                                             const char *candidate_dir,
                                             const pflref_check_options *opt,
                                             size_t budget, char **out,
                                             pflref_error *err);

/* The records the vector's algorithm writes on its spec, derived by running
 * it (ref/oracle/required.c), as JSON, format pflref-required/1:
 * {id, algorithm, records: [{event, phase, round?, client?, step?, name,
 * length, required}]}, the final state last; "required" marks the records
 * pflref_golden_check compares (the vector's expectation).  Errors: those
 * of pflref_golden_verify. */
pflref_status pflref_golden_required(const char *text, size_t len,
                                     const char *base_dir, char **out,
                                     pflref_error *err);

/* What a spec or a golden vector's spec defines, as the reference read it
 * (ref/oracle/describe.c), as JSON, format pflref-description/1: the
 * result writer's definition of the run (name, algorithm with every
 * hyperparameter and switch applied, model with its blocks, problem, init,
 * w0, the schedule in its given form) and "clients", each client's data
 * (X, y, X_test, y_test, X_val, y_val as present; a, c, n for the
 * quadratic model).  Nothing is run.  Errors: those of pflref_spec_parse
 * (of pflref_golden_spec for a vector). */
pflref_status pflref_spec_describe(const char *text, size_t len,
                                   const char *base_dir, char **out,
                                   pflref_error *err);

/* Release a text returned by the functions above (free()). */
void pflref_text_free(char *text);

#ifdef __cplusplus
}
#endif
#endif
