/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_search.h: the state of one diagnosis, shared by the
 * search (ref/oracle/diagnose.c) and its ranking and attribution
 * (ref/oracle/diagnose_rank.c). */
#ifndef PFLREF_ORACLE_DIAGNOSE_SEARCH_H
#define PFLREF_ORACLE_DIAGNOSE_SEARCH_H

#include <stdint.h>
#include "pflref.h"
#include "io/vector.h"

typedef struct {
    const pflref_vector *v;
    const pflref_candidate *c;
    const pflref_check_options *check;
    const pflref_diagnose_options *opt;
    const char *base_dir;
    size_t budget;
    pflref_diagnosis *d;
    pflref_golden_report *rep;       /* scratch of one comparison        */
    /* one entry per variant kept (budget entries each) */
    pflref_variant_match *all;
    uint64_t *fp;                    /* the run's fingerprint            */
    pflref_hyper *hyper;             /* the variant's settings           */
    size_t *from;                    /* the entry it changes, or -1      */
    size_t n_all;
    uint64_t *tried;                 /* every variant run: its spec,
                                        schedule and settings, hashed    */
    size_t n_tried;
    unsigned char *recorded;         /* per expected record: the
                                        candidate wrote it               */
    int found;                       /* a complete match so far          */
    /* the precision casts (ref/oracle/diagnose_cast.c) */
    const pflref_spec **spec_of;     /* per entry: the spec it ran (its
                                        base's), NULL when it ran another
                                        schedule (the step-fewer probe)  */
    int cast_in[2];                  /* the candidate wrote a quantity
                                        entirely in float32 [0],
                                        bfloat16 [1] numbers             */
    size_t *cast_agreeing[2];        /* per entry, when cast_in[f]: its
                                        agreeing and mismatches at that
                                        format's fixed floor             */
    size_t *cast_mismatches[2];
    size_t cast_reserve;             /* runs of the budget levels 0-2
                                        leave to the casts               */
} dg_search;

/* Changes listed from one base. */
#define DG_MAX_CHANGES 256

/* One change of one parameter. */
typedef struct {
    const pflref_param *p;
    int e;                  /* ENUM: the value's index */
    double x;               /* REAL: the value         */
    size_t n;               /* INT: the value          */
    const char *kind;       /* "switch" or "probe"     */
    char text[128];
    char value[32];
} dg_change;

/* ---- ref/oracle/diagnose_changes.c: the changes the registry allows */
/* Every change the registry allows for alg from the settings h, into out
 * (DG_MAX_CHANGES entries); returns how many. */
size_t dg_list_changes(const char *alg, const pflref_hyper *h,
                       dg_change *out);
/* h with change c applied; 0 when the registry refuses the value. */
int dg_apply_change(pflref_hyper *h, const dg_change *c);
/* The change setting p to the text `value` from h ("0.99",
 * "trainings"): 1 when it is a change the registry takes, else 0. */
int dg_change_to(const pflref_param *p, const char *value,
                 const pflref_hyper *h, dg_change *c);

/* The probe "one local step fewer" (ref/oracle/diagnose.c): its words,
 * and its schedule -- sch with the last batch of every list of every
 * participation dropped (the personal lists too), shallow, *rounds and
 * *lists to be freed; 1 when some list had a step, 0 when none had, -1
 * when out of memory.  Its entries are kind "probe", param "schedule". */
#define DG_STEP_FEWER "one local step fewer (the last batch of every list " \
                      "of every participation dropped)"
int dg_fewer_schedule(const pflref_schedule *sch, pflref_schedule *fewer,
                      pflref_round_plan **rounds, pflref_batches **lists);

/* The schedule a variant of spec under hyper runs on (ref/oracle/
 * diagnose_fewer.c): sch itself, or, when the variant is IFCA's
 * ifca.estimate_mode = eval of a vector whose schedule gives the estimate
 * passes' masks (written under train), sch without them in *tmp (the
 * estimates then take no mask), shallow, *rounds to be freed.  NULL when
 * out of memory. */
const pflref_schedule *dg_estimate_schedule(const pflref_spec *spec,
                                            const pflref_hyper *hyper,
                                            const pflref_schedule *sch,
                                            pflref_schedule *tmp,
                                            pflref_round_plan **rounds);

/* A fingerprint of a run (ref/oracle/diagnose.c): equal for runs equal
 * bit for bit. */
uint64_t dg_fingerprint(const pflref_trajectory *tj);

/* ref/oracle/diagnose_apart.c: 1 when a golden vector of the algorithm in
 * the diagnosed vector's folder gives different runs under the settings a
 * and b (those in which they differ), its id into id (n bytes). */
int dg_tell_apart(dg_search *s, const pflref_hyper *a, const pflref_hyper *b,
                  char *id, size_t n);

/* Keep the best distinct matches in s->d (one per numeric outcome, the
 * identical ones named in its `identical`), then the words. */
void pflref_oracle_rank(dg_search *s);

/* No variant matched in fp64: a precision cast (float32, then bfloat16)
 * alone, then with the DG_CAST_BEAM changes that agree furthest at that
 * format's floor, a complete match of kind "precision" when the candidate
 * is one (ref/oracle/diagnose_cast.c). */
pflref_status dg_precision_variant(dg_search *s, pflref_error *err);

/* s->cast_in: which formats the candidate wrote some quantity entirely
 * in (ref/oracle/diagnose_cast.c); none under a precision other than fp64
 * (the search itself is at that precision's floor then). */
void dg_cast_formats(dg_search *s);

/* Entry `at` of s (its fp64 comparison done, its run tj): its agreement
 * at the fixed floor of each format in s->cast_in (ref/oracle/diagnose.c). */
void dg_cast_agreement(dg_search *s, const pflref_trajectory *tj, size_t at);

/* A starting point of level 1: the spec or a preset's spec
 * (ref/oracle/diagnose.c). */
typedef struct {
    pflref_spec *spec;      /* owned when owned, else the vector's */
    int owned;
    char preset[32];
    const char *source;
    size_t index;           /* its match in the search's list, or -1 */
    int same_as;            /* its settings equal an earlier base's  */
} dg_base;

/* A match of kind KIND from base PRESET, its source SOURCE, the rest
 * empty (ref/oracle/diagnose.c). */
pflref_variant_match dg_label(const char *kind, const char *preset,
                              const char *source);

/* Run the variant of spec with the settings hyper (and schedule, or the
 * spec's when NULL), labelled m, compare the candidate with it and list it
 * in s, extending entry `from`; its entry in *at (ref/oracle/diagnose.c). */
pflref_status dg_run_variant(dg_search *s, const pflref_spec *spec,
                             const pflref_hyper *hyper,
                             pflref_schedule *schedule,
                             const pflref_variant_match *m, size_t from,
                             size_t *at, pflref_error *err);

/* 1 while the budget has room beside what is kept for the precision casts
 * (s->cast_reserve; ref/oracle/diagnose.c). */
int dg_budget_left(dg_search *s);

/* Level 3: the best pairs (entries from..s->n_all) given a third change
 * (ref/oracle/diagnose_triple.c). */
pflref_status dg_level3(dg_search *s, const dg_base *bases, size_t n_bases,
                        size_t from, dg_change *changes, pflref_error *err);

/* Reference runs of one Monte Carlo check (the unperturbed, K perturbed
 * and the probes; ref/oracle/precision.c). */
#define DG_MCA_COST (1 + PFLREF_MCA_RUNS + PFLREF_MCA_PROBE_RUNS)

/* The changes a precision cast is combined with, per format. */
#define DG_CAST_BEAM 3

#endif
