/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/required.c: the records an algorithm writes on a golden
 * vector's spec, and which of them a candidate must write to be checked
 * (pflref_golden_required, pflref/golden.h; docs/python.md, "Recorder").
 *
 * Derived from the algorithms themselves, never from a list kept by hand:
 * the vector's spec is run through the reference with every event
 * recorded (PFLREF_RECORD_STEP), and each key (event, phase, round,
 * client, step, name) it emitted is listed with its length, in the order
 * emitted, the final state last.  A key is "required" when the vector's
 * expectation holds it: exactly the records pflref_golden_check compares,
 * whose absence it reports as "not produced by the candidate".  A key
 * the vector expects that the reference did not emit (which verify would
 * refuse) is listed too, required, after the others, so the list never
 * claims less than check demands.
 *
 * The Python package's Recorder reads this list to name the records a
 * candidate forgot before any comparison, and to tell a misspelt name
 * (one the algorithm never emits) from a missing one.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io/vector.h"

/* 1 when tj holds a record with key's key. */
static int holds(const pflref_trajectory *tj, const pflref_record *key)
{
    for (size_t r = 0; r < tj->count; r++)
        if (pflref_record_same_key(&tj->records[r], key))
            return 1;
    return 0;
}

/* {event, phase, round?, client?, step?, name, length, required}, the
 * coordinates left out where they are −1, as in a result's trajectory. */
static json_t *key_json(const pflref_record *rec, int required)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = json_object_set_new(o, "event",
                                  json_string(pflref_event_kind_name(rec->kind)));
    bad |= json_object_set_new(o, "phase", json_string(rec->phase));
    if (rec->round >= 0)
        bad |= json_object_set_new(o, "round", json_integer(rec->round));
    if (rec->client >= 0)
        bad |= json_object_set_new(o, "client", json_integer(rec->client));
    if (rec->step >= 0)
        bad |= json_object_set_new(o, "step", json_integer(rec->step));
    bad |= json_object_set_new(o, "name", json_string(rec->name));
    bad |= json_object_set_new(o, "length", json_integer((json_int_t)rec->len));
    bad |= json_object_set_new(o, "required", json_boolean(required));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Append every key of tj once (the first record of each key); with
 * `only_absent_from`, only keys that table lacks.  `required_in`, when not
 * NULL, marks the keys it holds required (else every key is). */
static int append_keys(json_t *list, const pflref_trajectory *tj,
                       const pflref_trajectory *required_in,
                       const pflref_trajectory *only_absent_from)
{
    for (size_t r = 0; r < tj->count; r++) {
        const pflref_record *rec = &tj->records[r];
        int seen = 0;
        for (size_t q = 0; q < r && !seen; q++)
            seen = pflref_record_same_key(&tj->records[q], rec);
        if (seen || (only_absent_from != NULL && holds(only_absent_from, rec)))
            continue;
        const int required = required_in == NULL || holds(required_in, rec);
        if (json_array_append_new(list, key_json(rec, required)))
            return 0;
    }
    return 1;
}

/* The document: {"format", "id", "algorithm", "records": [...]}. */
static pflref_status write_list(const pflref_vector *v,
                                const pflref_trajectory *run, char **out,
                                pflref_error *err)
{
    json_t *root = json_object(), *list = json_array();
    int ok = root != NULL && list != NULL &&
             !json_object_set_new(root, "format",
                                  json_string("pflref-required/1")) &&
             !json_object_set_new(root, "id", json_string(v->id)) &&
             !json_object_set_new(root, "algorithm",
                                  json_string(v->spec->algorithm->name)) &&
             append_keys(list, run, &v->expected, NULL) &&
             append_keys(list, &v->expected, NULL, run) &&
             !json_object_set(root, "records", list);
    json_decref(list);
    *out = ok ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
    json_decref(root);
    if (*out == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL,
                                "out of memory listing the required records");
    return PFLREF_OK;
}

pflref_status pflref_golden_required(const char *text, size_t len,
                                     const char *base_dir, char **out,
                                     pflref_error *err)
{
    pflref_error_clear(err);
    if (out == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "out", "out is NULL");
    *out = NULL;
    if (text == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, "text", "text is NULL");
    pflref_vector v;
    pflref_trajectory run;
    pflref_trajectory_init(&run, PFLREF_RECORD_STEP);
    pflref_status st = pflref_vector_read(text, len, base_dir, &v, err);
    if (st == PFLREF_OK) {
        /* every event the algorithm emits on this spec, the final state too */
        pflref_trace rec = {.emit = pflref_trajectory_emit, .ctx = &run};
        pflref_run_result *res = NULL;
        st = pflref_spec_run(v.spec, &rec, &res, err);
        pflref_run_result_free(res);
        if (st == PFLREF_OK && run.failed)
            st = pflref_error_set(err, PFLREF_ENOMEM, "expected",
                                  "out of memory recording the run");
    }
    if (st == PFLREF_OK)
        st = write_list(&v, &run, out, err);
    pflref_trajectory_free(&run);
    pflref_vector_free(&v);
    return st;
}
