/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/precision.c: the tolerance of a float32, bfloat16 or TF32 candidate
 * (ref/oracle/precision.h).
 *
 * A candidate computing in a shorter format differs from the exact
 * trajectory by its own rounding, amplified by the problem (a sharp loss,
 * a finite difference, many steps).  No fixed floor fits every problem: a
 * finite-difference Hessian-vector product with step δ carries an absolute
 * error ~u‖∇f‖/δ that a relative floor misses, and a small bug hides under
 * a floor set for the worst problem.  So the reference is re-run K times
 * with random rounding of relative size u at its kernel outputs (the
 * hook of ref/core/mca.h: minibatch gradients, losses, Hessian-vector
 * products, the parameters after each local step), which samples the
 * spread legitimate rounding produces on this problem (Monte Carlo
 * arithmetic: Parker 1997; Verificarlo, Denis et al. 2016; CADNA's
 * CESTAC, Vignes 1993, with K runs).  Each entry is then held to
 *     C · max_k |x_k − x| + (A + k_step) · u · max_j |x_j|,
 * C (16) covering what K runs can miss of the spread (with K = 8 the
 * largest of 8 draws is beyond the median of the spread's distribution, C
 * times it beyond its tail) and the first-order bound of the steps the
 * hook does not see as the floor: A units of the record's magnitude (the
 * aggregation's own rounding, the record's storage) and one more per local
 * step of a step record (an SGD step rounds w − ηg: ~u(|w| + η|g|) ≤
 * u·|w| per step to first order).  A record whose bound reaches its own
 * magnitude says nothing (the runs disagree to the order of the values:
 * a chaotic problem at this precision) and is counted, never passed
 * silently.
 *
 * Kinks and jumps.  A ReLU at its kink, a max-pool argmax between two
 * nearly equal entries, an exact test (a tie, a threshold) make the
 * trajectory jump when rounding crosses them.  When none of the K runs
 * crosses, the bound knows nothing of the jump, and a correct candidate
 * that crosses is off by the jump: no C covers it.  So P more runs
 * (probes) are made at S = 4 times the unit roundoff.  Where the answer
 * is smooth, an entry moves about linearly in the rounding, so the
 * probes move it about S/C = 1/4 of its bound; an entry that the probes
 * move by more than its bound has a discontinuity within reach of
 * rounding.  The jump moves the whole record (every entry by its share),
 * so in such a record a candidate out of the bound but within C × (the
 * probes' deviation at that entry) + the floor is on a branch the
 * reference itself takes under rounding: its entry is INCONCLUSIVE
 * (reason "jump"), not a mismatch.  A record that some perturbed or probe run does not
 * produce (a split, a cluster decided by a tie) is the same for a
 * candidate that lacks it (reason "record").  Records without a jump
 * keep the bound: a bug anywhere else still fails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/mca.h"
#include "io/vector.h"
#include "oracle/precision.h"

void pflref_mca_units(pflref_precision p, double u[2])
{
    switch (p) {
    case PFLREF_PRECISION_FP32:
        u[PFLREF_MCA_PRODUCT] = u[PFLREF_MCA_UPDATE] = 0x1.0p-24;
        break;
    case PFLREF_PRECISION_BF16:
        u[PFLREF_MCA_PRODUCT] = u[PFLREF_MCA_UPDATE] = 0x1.0p-8;
        break;
    case PFLREF_PRECISION_TF32:   /* products' inputs rounded, fp32 steps */
        u[PFLREF_MCA_PRODUCT] = 0x1.0p-11;
        u[PFLREF_MCA_UPDATE] = 0x1.0p-24;
        break;
    default:
        u[0] = u[1] = 0.0;
    }
}

/* The unit roundoff inside a kernel (pflref_mca.u_inner): float32's for
 * every lower precision (bfloat16 and TF32 kernels accumulate in float32,
 * docs/validate.md, "Rounding the hook does not see"), 0 for fp64. */
static double inner_unit(const double u[2])
{
    return u[0] > 0.0 || u[1] > 0.0 ? 0x1.0p-24 : 0.0;
}

/* The record of tj with key's key: at index `hint` when it is there (runs
 * of one spec write their records in one order), else the first. */
static const pflref_record *find_key(const pflref_trajectory *tj,
                                     const pflref_record *key, size_t hint)
{
    if (hint < tj->count && pflref_record_same_key(&tj->records[hint], key))
        return &tj->records[hint];
    for (size_t r = 0; r < tj->count; r++)
        if (pflref_record_same_key(&tj->records[r], key))
            return &tj->records[r];
    return NULL;
}

/* splitmix64 (the seeds of the runs from opt->mca_seed). */
static uint64_t next_seed(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* One perturbed run: fold |x_k − x| into dev (by base offset) and mark in
 * lost the base records it did not produce.  A run that fails (diverges)
 * loses every record, unless probe (a probe that diverges says nothing of
 * any one record: it is left out); only running out of memory is an
 * error. */
static pflref_status perturbed_run(const pflref_trajectory *base,
                                   pflref_mca *m, pflref_mca_runner run,
                                   void *ctx, double *dev,
                                   unsigned char *lost, int probe,
                                   pflref_error *err)
{
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    pflref_mca *saved = pflref_mca_active;
    pflref_mca_active = m;
    pflref_error e = {0};
    pflref_status st = run(ctx, &tj, &e);
    pflref_mca_active = saved;
    if (st == PFLREF_ENOMEM || tj.failed) {
        pflref_trajectory_free(&tj);
        return pflref_error_set(err, PFLREF_ENOMEM, "expected",
                                "out of memory in a Monte Carlo run");
    }
    for (size_t r = 0; r < base->count && !(probe && st != PFLREF_OK); r++) {
        const pflref_record *e0 = &base->records[r];
        const pflref_record *a = st == PFLREF_OK ? find_key(&tj, e0, r)
                                                 : NULL;
        if (a == NULL || a->len != e0->len) {
            lost[r] = 1;
            continue;
        }
        for (size_t j = 0; j < e0->len; j++) {
            double d = fabs(tj.values[a->offset + j] -
                            base->values[e0->offset + j]);
            if (isnan(d))
                d = INFINITY;
            if (d > dev[e0->offset + j])
                dev[e0->offset + j] = d;
        }
    }
    pflref_trajectory_free(&tj);
    return PFLREF_OK;
}

/* The key of a chaotic record into rep (the first one). */
static void note_chaotic(pflref_golden_report *rep, const pflref_record *key,
                         size_t position)
{
    if (rep->mca_chaotic++ > 0)
        return;
    pflref_divergence *d = &rep->mca_first_chaotic;
    *d = (pflref_divergence){.round = key->round, .client = key->client,
                             .step = key->step, .position = position,
                             .record = 1};
    snprintf(d->event, sizeof d->event, "%s", pflref_event_kind_name(key->kind));
    snprintf(d->phase, sizeof d->phase, "%s", key->phase);
    snprintf(d->name, sizeof d->name, "%s", key->name);
}

/* dev → bound over the records of keys; the chaotic ones noted; the
 * probes' deviations pdev → the jump bands. */
static void set_bounds(const pflref_trajectory *keys, pflref_mca_bounds *b,
                       const unsigned char *lost, const double *pdev,
                       double C, double u, pflref_golden_report *rep)
{
    for (size_t k = 0; k < keys->count; k++) {
        const pflref_record *key = &keys->records[k];
        const pflref_record *e = find_key(&b->base, key, k);
        if (e == NULL)
            continue;   /* the comparison reports it missing */
        double scale = 0.0, spread = 0.0;
        for (size_t j = 0; j < e->len; j++) {
            scale = fmax(scale, fabs(b->base.values[e->offset + j]));
            spread = fmax(spread, b->bound[e->offset + j]);
        }
        const double steps = key->kind == PFLREF_EV_STEP && key->step > 0
                                 ? (double)key->step : 0.0;
        const double floor = (PFLREF_MCA_FLOOR_UNITS + steps) * u * scale;
        int jumps = 0;
        for (size_t j = 0; j < e->len; j++) {
            const size_t o = e->offset + j;
            b->bound[o] = C * b->bound[o] + floor;
            /* a probe at S·u beyond the bound: not linear in the
             * rounding, a jump (a NaN of a probe is no band) */
            jumps |= isfinite(pdev[o]) && pdev[o] > b->bound[o];
        }
        /* The jump is the record's: the probes that crossed the
         * discontinuity moved each of its entries at once, by the jump's
         * share in that entry.  Where that share is about the entry's
         * bound, a probe lands under the bound and a candidate that
         * crossed just over it, or the other way, at random; so every
         * entry of a record the probes jump on has its band (a ReLU of
         * layers/ditto/bn1d-mlp-pfllib-keep moves three entries of the
         * next w_local, its probes beyond the bound on one of them:
         * docs/validate.md, "Leave-one-out in bfloat16"). */
        for (size_t j = 0; j < e->len; j++) {
            const size_t o = e->offset + j;
            b->jump[o] = jumps && isfinite(pdev[o]) ? C * pdev[o] + floor
                                                     : 0.0;
        }
        if (scale > 0.0 && spread / (u * scale) > rep->mca_amplification)
            rep->mca_amplification = spread / (u * scale);
        if (lost[e - b->base.records] || (spread > 0.0 && C * spread >= scale))
            note_chaotic(rep, key, k);
    }
}

pflref_status pflref_mca_measure(const pflref_trajectory *keys,
                                 const pflref_check_options *opt,
                                 pflref_mca_runner run, void *ctx,
                                 pflref_mca_bounds *b,
                                 pflref_golden_report *rep,
                                 pflref_error *err)
{
    double u[2];
    pflref_mca_units(opt->precision, u);
    const size_t K = opt->mca_runs > 0 ? opt->mca_runs : PFLREF_MCA_RUNS;
    const double C = opt->mca_c > 0.0 ? opt->mca_c : PFLREF_MCA_C;
    b->bound = b->jump = NULL;
    b->lost = NULL;
    pflref_trajectory_init(&b->base, PFLREF_RECORD_STEP);
    if (K > PFLREF_MCA_MAX_RUNS)
        return pflref_error_set(err, PFLREF_EINVAL, "mca_runs",
                                "%zu Monte Carlo runs: at most %d", K,
                                PFLREF_MCA_MAX_RUNS);
    rep->mca = 1;
    rep->mca_runs = K;
    rep->mca_c = C;
    rep->mca_u = fmax(u[0], u[1]);
    pflref_status st = run(ctx, &b->base, err);   /* unperturbed */
    if (st == PFLREF_OK && b->base.failed)
        st = pflref_error_set(err, PFLREF_ENOMEM, "expected",
                              "out of memory recording the trajectory");
    b->bound = st == PFLREF_OK ? calloc(b->base.nvalues + 1, sizeof *b->bound)
                               : NULL;
    unsigned char *lost = st == PFLREF_OK ? calloc(b->base.count + 1, 1)
                                          : NULL;
    double *pdev = st == PFLREF_OK
                       ? calloc(b->base.nvalues + 1, sizeof *pdev)
                       : NULL;
    if (st == PFLREF_OK) {
        b->jump = calloc(b->base.nvalues + 1, sizeof *b->jump);
        b->lost = calloc(b->base.count + 1, 1);
    }
    if (st == PFLREF_OK && (b->bound == NULL || lost == NULL ||
                            pdev == NULL || b->jump == NULL ||
                            b->lost == NULL))
        st = pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    uint64_t seeds = opt->mca_seed;
    for (size_t k = 0; st == PFLREF_OK && k < K; k++) {
        rep->mca_seeds[k] = next_seed(&seeds);
        pflref_mca m = {.u = {u[0], u[1]}, .u_inner = inner_unit(u),
                        .u_exact = u[0], .state = rep->mca_seeds[k],
                        .terms_state =
                            pflref_mca_terms_seed(rep->mca_seeds[k])};
        st = perturbed_run(&b->base, &m, run, ctx, b->bound, lost, 0, err);
        pflref_mca_release(&m);
    }
    /* the probes: the next seeds of the stream, S times the roundoff;
     * what they lose is lost for a candidate too, not chaotic; an exact
     * test keeps the candidate's window u (core/mca_decide.h) */
    for (size_t k = 0; st == PFLREF_OK && k < PFLREF_MCA_PROBE_RUNS; k++) {
        pflref_mca m = {.u = {PFLREF_MCA_PROBE_SCALE * u[0],
                              PFLREF_MCA_PROBE_SCALE * u[1]},
                        .u_inner = PFLREF_MCA_PROBE_SCALE * inner_unit(u),
                        .u_exact = u[0], .state = next_seed(&seeds)};
        m.terms_state = pflref_mca_terms_seed(m.state);
        st = perturbed_run(&b->base, &m, run, ctx, pdev, b->lost, 1, err);
        pflref_mca_release(&m);
    }
    if (st == PFLREF_OK) {
        for (size_t r = 0; r < b->base.count; r++)
            b->lost[r] |= lost[r];
        set_bounds(keys, b, lost, pdev, C, rep->mca_u, rep);
    }
    free(pdev);
    free(lost);
    if (st != PFLREF_OK)
        pflref_mca_bounds_free(b);
    return st;
}

const double *pflref_mca_bound(const pflref_mca_bounds *b,
                               const pflref_record *key, size_t hint)
{
    const pflref_record *e = find_key(&b->base, key, hint);
    return e != NULL && e->len == key->len ? b->bound + e->offset : NULL;
}

const double *pflref_mca_jump(const pflref_mca_bounds *b,
                              const pflref_record *key, size_t hint)
{
    const pflref_record *e = find_key(&b->base, key, hint);
    return e != NULL && e->len == key->len ? b->jump + e->offset : NULL;
}

int pflref_mca_lost(const pflref_mca_bounds *b, const pflref_record *key,
                    size_t hint)
{
    const pflref_record *e = find_key(&b->base, key, hint);
    return e != NULL && b->lost[e - b->base.records];
}

void pflref_mca_bounds_free(pflref_mca_bounds *b)
{
    pflref_trajectory_free(&b->base);
    free(b->bound);
    free(b->jump);
    free(b->lost);
    b->bound = b->jump = NULL;
    b->lost = NULL;
}

/* The perturbation of pflref_mca_begin (one per thread). */
static PFLREF_THREAD_LOCAL pflref_mca session;

void pflref_mca_begin_scaled(pflref_precision p, uint64_t seed, double scale)
{
    double u[2];
    pflref_mca_units(p, u);
    pflref_mca_release(&session);
    if ((u[0] == 0.0 && u[1] == 0.0) || !(scale > 0.0)) {
        pflref_mca_active = NULL;
        return;
    }
    session = (pflref_mca){.u = {scale * u[0], scale * u[1]},
                           .u_inner = scale * inner_unit(u),
                           .u_exact = u[0], .state = seed,
                           .terms_state = pflref_mca_terms_seed(seed)};
    pflref_mca_active = &session;
}

void pflref_mca_begin(pflref_precision p, uint64_t seed)
{
    pflref_mca_begin_scaled(p, seed, 1.0);
}

void pflref_mca_end(void)
{
    pflref_mca_release(&session);
    pflref_mca_active = NULL;
}
