/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_json.c: a diagnosis in words and as JSON text
 * (pflref/golden.h: pflref_diagnosis_json, pflref_golden_diagnose_json;
 * docs/cli.md, "diagnose"; docs/python.md).
 *
 * The words (pflref_diagnosis_describe):
 *   matches the vector's own spec (ALG preset P) on all N records (D digits)
 *   matches ALG preset P on all N records (D digits); nearest named
 *     implementation: SOURCE [; identical here: ...]
 *   matches ALG preset P except CHANGE on all N records (D digits); the
 *     change comes from VALUE SOURCE; the rest from SOURCE [; identical
 *     here: ...]   (no named code makes the change: a probe, a pair)
 *   no known variant: nearest is ALG preset P [with CHANGE], agreeing on A
 *     of N records (under partial: A of the C records the candidate wrote
 *     (N expected)), diverging at round r, client c, step s (NAME)
 * The JSON document, format pflref-diagnosis/1, is pflref_diagnosis field
 * by field; first_divergence as in pflref-report/1 (round, client and step
 * left out where −1; a non-finite number null).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/json_tree.h"
#include "oracle/diagnose.h"

/* ---- words -------------------------------------------------------------- */

/* "round 0, client 2, step 3 (theta)", "round 1, server (w)", "the final
 * state (v, client 1)": the parts that apply. */
static void where_words(const pflref_divergence *f, char *buf, size_t n)
{
    char r[48] = "", c[32] = "", s[32] = "";
    const int final = strcmp(f->event, "final") == 0;
    if (strcmp(f->phase, "train") != 0 && !final)
        snprintf(r, sizeof r, "%s, ", f->phase);
    if (f->round >= 0)
        snprintf(r + strlen(r), sizeof r - strlen(r), "round %ld, ", f->round);
    if (f->client >= 0)
        snprintf(c, sizeof c, final ? ", client %ld" : "client %ld, ",
                 f->client);
    else if (strcmp(f->event, "server") == 0)
        snprintf(c, sizeof c, "server, ");
    if (f->step >= 0)
        snprintf(s, sizeof s, "step %ld, ", f->step);
    if (final)
        snprintf(buf, n, "the final state (%s%s%s)", f->name, c,
                 f->missing ? ", missing" : "");
    else {
        snprintf(buf, n, "%s%s%s(%s%s)", r, c, s, f->name,
                 f->missing ? ", missing" : "");
        char *comma = strstr(buf, ", (");
        if (comma != NULL)   /* "step 3, (theta)" → "step 3 (theta)" */
            memmove(comma, comma + 1, strlen(comma + 1) + 1);
    }
}

/* "ALG preset P" with " except CHANGE" / " with CHANGE" after it. */
static void variant_words(const pflref_diagnosis *d,
                          const pflref_variant_match *m, const char *join,
                          char *buf, size_t n)
{
    snprintf(buf, n, "%s preset %s%s%s", d->algorithm, m->preset,
             m->change[0] ? join : "", m->change);
}

/* "A of N records" -- under `partial`, "A of the C records the candidate
 * wrote (N expected)": records it did not write are not agreeing. */
static void count_words(const pflref_diagnosis *d,
                        const pflref_variant_match *b, char *buf, size_t n)
{
    if (d->partial && b->compared < b->expected_records)
        snprintf(buf, n, "%zu of the %zu records the candidate wrote (%zu "
                 "expected)", b->agreeing, b->compared, b->expected_records);
    else
        snprintf(buf, n, "%zu of %zu records", b->agreeing,
                 b->expected_records);
}

/* "; identical here: ..." when b has identical variants. */
static void identical_words(const pflref_variant_match *b, char *buf,
                            size_t n)
{
    buf[0] = '\0';
    if (b->identical[0] != '\0')
        snprintf(buf, n, "; identical here: %s", b->identical);
}

/* Where the match's code comes from: the changed value's source (the
 * registry's), then the base's. */
static void source_words(const pflref_variant_match *b, char *buf, size_t n)
{
    if (b->change[0] == '\0')
        snprintf(buf, n, "nearest named implementation: %s", b->source);
    else if (b->value_source[0] != '\0')
        snprintf(buf, n, "the change comes from %s; the rest from %s",
                 b->value_source, b->source);
    else
        snprintf(buf, n, "no named code makes the change (a %s); the rest "
                 "from %s", strcmp(b->kind, "pair") == 0 ? "pair of changes"
                 : strcmp(b->kind, "triple") == 0 ? "set of three changes"
                                                  : b->kind,
                 b->source);
}

void pflref_diagnosis_describe(pflref_diagnosis *d)
{
    char v[256], w[192], also[420], cnt[96];
    if (d->wrong_outcome || d->n_best == 0) {
        snprintf(d->summary, sizeof d->summary,
                 d->wrong_outcome ? "the candidate declared an outcome other "
                                    "than ok: nothing to diagnose"
                                  : "no variant ran: nothing to compare");
        return;
    }
    const pflref_variant_match *b = &d->best[0];
    identical_words(b, also, sizeof also);
    count_words(d, b, cnt, sizeof cnt);
    if (d->matched && strcmp(b->kind, "spec") == 0) {
        snprintf(d->summary, sizeof d->summary,
                 "matches the vector's own spec (%s preset %s) on all %zu "
                 "records (%.1f digits): the candidate passes%s",
                 d->algorithm, b->preset, b->compared, b->min_lre, also);
        pflref_oracle_utf8_trim(d->summary);
        return;
    }
    if (d->matched) {
        char src[560];
        variant_words(d, b, " except ", v, sizeof v);
        source_words(b, src, sizeof src);
        snprintf(d->summary, sizeof d->summary,
                 "matches %s on all %zu records (%.1f digits); %s%s", v,
                 b->compared, b->min_lre, src, also);
        pflref_oracle_utf8_trim(d->summary);
        return;
    }
    variant_words(d, b, " with ", v, sizeof v);
    where_words(&b->first, w, sizeof w);
    snprintf(d->summary, sizeof d->summary,
             "no known variant: nearest is %s, agreeing on %s, diverging at "
             "%s", v, cnt, w);
    pflref_oracle_utf8_trim(d->summary);
}

/* ---- JSON --------------------------------------------------------------- */


static json_t *divergence_json(tree *t, const pflref_divergence *f)
{
    json_t *o = json_object();
    put(t, o, "event", json_string(f->event));
    put(t, o, "phase", json_string(f->phase));
    if (f->round >= 0)
        put(t, o, "round", json_integer(f->round));
    if (f->client >= 0)
        put(t, o, "client", json_integer(f->client));
    if (f->step >= 0)
        put(t, o, "step", json_integer(f->step));
    put(t, o, "name", json_string(f->name));
    put(t, o, "record", count(f->record));
    put(t, o, "missing", json_boolean(f->missing));
    put(t, o, "index", count(f->index));
    put(t, o, "expected", real_or_null(f->expected));
    put(t, o, "got", real_or_null(f->got));
    return o;
}

static json_t *match_json(tree *t, const pflref_variant_match *m)
{
    json_t *o = json_object();
    put(t, o, "kind", json_string(m->kind));
    put(t, o, "preset", json_string(m->preset));
    put(t, o, "change", json_string(m->change));
    put(t, o, "param", json_string(m->param));
    put(t, o, "value", json_string(m->value));
    put(t, o, "source", json_string(m->source));
    put(t, o, "complete", json_boolean(m->complete));
    put(t, o, "agreeing", count(m->agreeing));
    put(t, o, "expected_records", count(m->expected_records));
    put(t, o, "mismatches", count(m->mismatches));
    put(t, o, "min_lre", real_or_null(m->min_lre));
    put(t, o, "first_divergence",
        m->diverged ? divergence_json(t, &m->first) : json_null());
    put(t, o, "compared", count(m->compared));
    put(t, o, "value_source", json_string(m->value_source));
    put(t, o, "identical", json_string(m->identical));
    return o;
}

pflref_status pflref_diagnosis_json(const pflref_diagnosis *d, char **out,
                                    pflref_error *err)
{
    if (out == NULL || d == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, out ? "d" : "out",
                                "the argument is NULL");
    tree t = {0};
    json_t *root = json_object();
    put(&t, root, "format", json_string("pflref-diagnosis/1"));
    put(&t, root, "id", json_string(d->id));
    put(&t, root, "algorithm", json_string(d->algorithm));
    put(&t, root, "spec_preset", json_string(d->spec_preset));
    put(&t, root, "matched", json_boolean(d->matched));
    put(&t, root, "summary", json_string(d->summary));
    put(&t, root, "runs", count(d->runs));
    put(&t, root, "refused", count(d->refused));
    put(&t, root, "budget_exhausted", json_boolean(d->budget_exhausted));
    put(&t, root, "wrong_outcome", json_boolean(d->wrong_outcome));
    put(&t, root, "unchanged", count(d->unchanged));
    put(&t, root, "partial", json_boolean(d->partial));
    json_t *best = json_array();
    for (size_t i = 0; i < d->n_best; i++)
        if (best == NULL || json_array_append_new(best, match_json(&t,
                                                  &d->best[i])))
            t.failed = 1;
    put(&t, root, "best", best);
    *out = t.failed ? NULL
                    : json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1));
    json_decref(root);
    if (*out == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    return PFLREF_OK;
}

pflref_status pflref_golden_diagnose_json(const char *expected,
                                          size_t expected_len,
                                          const char *base_dir,
                                          const char *candidate,
                                          size_t candidate_len,
                                          const pflref_check_options *opt,
                                          size_t budget, char **out,
                                          pflref_error *err)
{
    return pflref_golden_diagnose_json_at(expected, expected_len, base_dir,
                                          candidate, candidate_len, NULL, opt,
                                          budget, out, err);
}

pflref_status pflref_golden_diagnose_json_at(const char *expected,
                                             size_t expected_len,
                                             const char *base_dir,
                                             const char *candidate,
                                             size_t candidate_len,
                                             const char *candidate_dir,
                                             const pflref_check_options *opt,
                                             size_t budget, char **out,
                                             pflref_error *err)
{
    pflref_error_clear(err);
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out", "out is NULL");
    *out = NULL;
    if (opt == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "opt",
                                "the argument is NULL");
    pflref_diagnosis *d = malloc(sizeof *d);
    if (d == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    const pflref_diagnose_options o = {.check = *opt, .budget = budget};
    pflref_status st = pflref_golden_diagnose_at(expected, expected_len,
                                                 base_dir, candidate,
                                                 candidate_len, candidate_dir,
                                                 &o, d, err);
    if (st == PFLREF_OK)
        st = pflref_diagnosis_json(d, out, err);
    free(d);
    return st;
}
