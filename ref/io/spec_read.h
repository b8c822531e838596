/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_read.h: what the parts of the spec reader share (internal).
 *
 * The reader of a spec (format pflref-spec/1, docs/formats.md) is split by
 * what each part reads, in the order pflref_spec_parse calls them:
 *
 *   ref/io/spec.c           the envelope (format, name, description), the
 *                           reading order, "output", pflref_spec_free
 *   ref/io/spec_model.c     "model"
 *   ref/io/spec_data.c      "problem": inline clients, a problem file or a
 *                           generator
 *   ref/io/spec_hyper.c     "split", "algorithm" (preset, hyperparameters,
 *                           switches) and "init"
 *   ref/io/spec_schedule.c  "schedule": generated from seeds, or given
 *
 * Each part validates what it reads before the next uses it, names the JSON
 * path of an offending value in its error, and leaves what it allocated in
 * the spec, which pflref_spec_free releases however far reading got.
 */
#ifndef PFLREF_IO_SPEC_READ_H
#define PFLREF_IO_SPEC_READ_H

#include "pflref/io.h"
#include "io/json.h"

/* Counts read from a spec (clients' samples, rounds, steps, model sizes)
 * are at most this, so no count taken from a spec can make the reader
 * allocate beyond what the data in the file justifies. */
#define PFLREF_SPEC_MAX_COUNT ((size_t)1 << 31)

/* A malloc'd copy of s, or NULL when memory is short. */
char *pflref_spec_strdup(const char *s);

/* "model" of root into *m (the model's own errors are prefixed "model."). */
pflref_status pflref_spec_read_model(const json_t *root, pflref_model *m,
                                     pflref_error *err);

/* "problem" of root for model m into spec->problem and
 * spec->problem_source; base_dir resolves a relative problem file or data
 * file; nums holds the arrays lifted from the spec's text (NULL: none),
 * which the problem takes. */
pflref_status pflref_spec_read_problem(const json_t *root,
                                       const char *base_dir,
                                       pflref_json_numerics *nums,
                                       const pflref_model *m,
                                       pflref_spec *spec, pflref_error *err);

/* A copy of text[0..len) with its data arrays lifted into nums
 * (pflref_json_lift), or NULL when nothing was lifted (or memory is
 * short): then text itself is to be parsed.  free() the copy. */
char *pflref_spec_lift(const char *text, size_t len, size_t *llen,
                       pflref_json_numerics *nums);

/* pflref_spec_parse of text (len bytes) whose data arrays were lifted
 * into nums, giving `lifted` (llen bytes; NULL: nothing lifted, parse
 * text). */
pflref_status pflref_spec_parse_lifted(const char *text, size_t len,
                                       const char *lifted, size_t llen,
                                       const char *base_dir,
                                       pflref_json_numerics *nums,
                                       pflref_spec **out, pflref_error *err);

/* "split" of root (absent: every block shared) into *split. */
pflref_status pflref_spec_read_split(const json_t *root, const pflref_model *m,
                                     pflref_split *split, pflref_error *err);

/* Why bn.aggregate has nothing to act on under `algorithm` (a model with
 * running statistics it refuses, or no model exchanged), said when the
 * switch is given to it; NULL: the registry's list of algorithms decides
 * alone (ref/io/spec_bn.c). */
const char *pflref_spec_bn_refusal(const char *algorithm);
/* bn.aggregate = parameters_only, moon.passes = train or
 * scaffold.bn_global = previous given in the switches sw where the model
 * has no batch normalisation, or (scaffold.bn_global) without
 * bn.aggregate = parameters_only: PFLREF_EINVAL naming the switch
 * (ref/io/spec_bn.c). */
pflref_status pflref_spec_check_bn_switches(const json_t *sw,
                                            const pflref_spec *spec,
                                            pflref_error *err);

/* "algorithm" of root: spec->algorithm, spec->preset and spec->hyper (the
 * preset first, then the explicit settings).  Needs spec->problem. */
pflref_status pflref_spec_read_algorithm(const json_t *root, pflref_spec *spec,
                                         pflref_error *err);

/* "init" of root: spec->w0 (P entries, zeros when absent), the init kind,
 * seed and scale, IFCA's initial cluster models, pFedHN's hypernetwork and
 * lora's adapter; each array may be a file reference (ref/io/arrays.h)
 * relative to base_dir, recorded in spec->init_files.  Needs the problem,
 * the algorithm and its hyperparameters. */
pflref_status pflref_spec_read_init(const json_t *root, const char *base_dir,
                                    pflref_spec *spec, pflref_error *err);

/* "schedule" of root: spec->schedule (generated or given, validated
 * against the clients' sizes), spec->schedule_given and, when generated,
 * spec->schedule_cfg.  Needs the problem, the algorithm and its
 * hyperparameters. */
pflref_status pflref_spec_read_schedule(const json_t *root, pflref_spec *spec,
                                        pflref_error *err);

/* ref/io/spec_dropout.c: a round's "dropout" masks (rp its path
 * "schedule.rounds[t]") into plan->dropout (absent: NULL), checked
 * against the model's dropout layers; and, after the schedule, what a
 * model with dropout layers needs of the spec (an algorithm that maps its
 * passes to masks, a given schedule); and the post phase's masks,
 * "schedule.post_dropout" of the given schedule sched, into
 * spec->schedule->post_dropout (after spec->schedule->post is read). */
pflref_status pflref_spec_read_dropout(const json_t *r, const char *rp,
                                       const pflref_spec *spec,
                                       pflref_round_plan *plan,
                                       pflref_error *err);
pflref_status pflref_spec_read_post_dropout(const json_t *sched,
                                            const pflref_spec *spec,
                                            pflref_error *err);
/* IFCA's estimate passes' masks (ifca.estimate_mode = train): a round's
 * "estimate_dropout" (one list per participant) and "partition_dropout"
 * (one per client) into plan, and the given schedule's
 * "init_partition_dropout" (one per client) into spec->schedule; absent:
 * NULL.  Their counts are checked by pflref_spec_check_dropout. */
pflref_status pflref_spec_read_estimate_dropout(const json_t *r,
                                                const char *rp,
                                                const pflref_spec *spec,
                                                pflref_round_plan *plan,
                                                pflref_error *err);
pflref_status pflref_spec_read_init_partition_dropout(const json_t *sched,
                                                      const pflref_spec *spec,
                                                      pflref_error *err);
pflref_status pflref_spec_check_dropout(const json_t *root,
                                        const pflref_spec *spec,
                                        pflref_error *err);

/* init.class_counts of the init object v (ref/io/spec_counts.c): FedRoD's
 * class counts into spec->fedrod_counts and spec->hyper.fedrod.counts;
 * PFLREF_OK and nothing set when absent. */
pflref_status pflref_spec_read_class_counts(const json_t *v,
                                            pflref_spec *spec,
                                            pflref_error *err);

#endif
