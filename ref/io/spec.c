/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec.c: reading and validating a spec (format pflref-spec/1,
 * documented in docs/formats.md and docs/schema/spec.schema.json): the
 * envelope and the reading order.
 *
 * Reading order (each step validated before the next uses it): format,
 * name, description, model (ref/io/spec_model.c), problem (inline clients,
 * a problem file, or a generator: ref/io/spec_data.c), split, algorithm
 * (name, preset, hyperparameters, switches) and init (ref/io/spec_hyper.c),
 * schedule (generated from seeds, or given: ref/io/spec_schedule.c),
 * output.  Every error names the JSON path of the offending value; nothing
 * is half-built on return.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/digest.h"
#include "io/spec_read.h"

char *pflref_spec_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* "output": the trajectory level, and how the result's arrays are
 * written (output.arrays, output.inline_max; docs/formats.md, "output"). */
static pflref_status read_output(const json_t *root, pflref_spec *spec,
                                 pflref_error *err)
{
    spec->record = PFLREF_RECORD_ROUND;
    spec->arrays = (pflref_output_arrays){
        .form = PFLREF_ARRAYS_INLINE,
        .inline_max = PFLREF_INLINE_MAX_DEFAULT};
    json_t *v = json_object_get(root, "output");
    if (v == NULL)
        return PFLREF_OK;
    static const char *const keys[] = {"trajectory", "arrays", "inline_max",
                                       NULL};
    static const char *const levels[] = {"none", "round", "step", NULL};
    static const char *const forms[] = {"inline", "files", NULL};
    int level, form;
    pflref_status st;
    if ((st = pflref_json_object(v, "output", keys, err)) ||
        (st = pflref_json_opt_enum(v, "output", "trajectory", levels,
                                   PFLREF_RECORD_ROUND, &level, err)) ||
        (st = pflref_json_opt_enum(v, "output", "arrays", forms,
                                   PFLREF_ARRAYS_INLINE, &form, err)) ||
        (st = pflref_json_opt_size(v, "output", "inline_max", 0,
                                   PFLREF_SPEC_MAX_COUNT,
                                   PFLREF_INLINE_MAX_DEFAULT,
                                   &spec->arrays.inline_max, err)))
        return st;
    spec->record = (pflref_record_level)level;
    spec->arrays.form = (pflref_arrays_form)form;
    return PFLREF_OK;
}

/* format (pflref-spec/1), and the optional name and description. */
static pflref_status read_envelope(const json_t *root, pflref_spec *spec,
                                   pflref_error *err)
{
    static const char *const keys[] = {"format", "name", "description",
                                       "model", "problem", "split", "init",
                                       "algorithm", "schedule", "output",
                                       NULL};
    json_t *name_v, *desc_v;
    const char *name = "", *desc;
    pflref_status st;
    if ((st = pflref_json_format(root, "", keys, PFLREF_SPEC_FORMAT, err)))
        return st;
    name_v = json_object_get(root, "name");
    if (name_v != NULL && (st = pflref_json_string(name_v, "name", &name, err)))
        return st;
    desc_v = json_object_get(root, "description");
    if (desc_v != NULL &&
        (st = pflref_json_string(desc_v, "description", &desc, err)))
        return st;
    spec->name = pflref_spec_strdup(name);
    if (spec->name == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    return PFLREF_OK;
}

/* ---- the spec ----------------------------------------------------------- */

/* Every part of root into spec, in the reading order. */
static pflref_status read_spec(const json_t *root, const char *base_dir,
                               pflref_json_numerics *nums, pflref_spec *spec,
                               pflref_error *err)
{
    pflref_model m;
    pflref_status st;
    if ((st = read_envelope(root, spec, err)) ||
        (st = pflref_spec_read_model(root, &m, err)) ||
        (st = pflref_spec_read_problem(root, base_dir, nums, &m, spec,
                                       err)) ||
        (st = pflref_spec_read_split(root, &m, &spec->hyper.split, err)) ||
        (st = pflref_spec_read_algorithm(root, spec, err)) ||
        (st = pflref_spec_read_init(root, base_dir, spec, err)) ||
        (st = pflref_spec_read_schedule(root, spec, err)))
        return st;
    return read_output(root, spec, err);
}

void pflref_spec_free(pflref_spec *spec)
{
    if (spec == NULL)
        return;
    free(spec->name);
    free(spec->id);
    free(spec->preset);
    free(spec->problem_source);
    free(spec->w0);
    free(spec->cluster_models);
    free(spec->hypernetwork);
    free(spec->lora_init);
    free(spec->lora_ranks);
    free(spec->lora_targets);
    free(spec->scaffold_c);
    free(spec->scaffold_c_i);
    free(spec->fedrod_counts);
    if (spec->fedrecon_support != NULL) {
        free(spec->fedrecon_support->step_off);
        free(spec->fedrecon_support->idx);
        free(spec->fedrecon_support);
    }
    /* the digest thread reads the problem's mappings: stop it first */
    pflref_digest_free(spec->digests);
    for (size_t i = 0; i < spec->n_data_files; i++)
        free(spec->data_files[i].path);
    free(spec->data_files);
    for (size_t i = 0; i < spec->n_init_files; i++)
        free(spec->init_files[i].path);
    free(spec->init_files);
    pflref_problem_free(spec->problem);
    pflref_schedule_free(spec->schedule);
    free(spec);
}

char *pflref_spec_lift(const char *text, size_t len, size_t *llen,
                       pflref_json_numerics *nums)
{
    char *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, text, len);
    *llen = len;
    if (pflref_json_lift(copy, llen, nums) == 0) {
        free(copy);
        return NULL;
    }
    return copy;
}

pflref_status pflref_spec_parse(const char *text, size_t len,
                                const char *base_dir, pflref_spec **out,
                                pflref_error *err)
{
    pflref_json_numerics nums = {.a = NULL};
    size_t llen = 0;
    char *lifted = text != NULL ? pflref_spec_lift(text, len, &llen, &nums)
                                : NULL;
    pflref_status st = pflref_spec_parse_lifted(text, len, lifted, llen,
                                                base_dir, &nums, out, err);
    free(lifted);
    pflref_json_numerics_free(&nums);
    return st;
}

pflref_status pflref_spec_parse_lifted(const char *text, size_t len,
                                       const char *lifted, size_t llen,
                                       const char *base_dir,
                                       pflref_json_numerics *nums,
                                       pflref_spec **out, pflref_error *err)
{
    *out = NULL;
    json_t *root;
    pflref_status st =
        lifted != NULL
            ? pflref_json_parse_lifted(lifted, llen, text, len, "", &root, err)
            : pflref_json_parse(text, len, "", &root, err);
    if (st != PFLREF_OK)
        return st;
    pflref_spec *spec = calloc(1, sizeof *spec);
    if (spec == NULL) {
        json_decref(root);
        return pflref_error_set(err, PFLREF_ENOMEM, NULL, "out of memory");
    }
    pflref_hyper_defaults(&spec->hyper);
    st = read_spec(root, base_dir, nums, spec, err);
    json_decref(root);
    if (st != PFLREF_OK) {
        pflref_spec_free(spec);
        return st;
    }
    *out = spec;
    return PFLREF_OK;
}

pflref_status pflref_spec_read_file(const char *path, pflref_spec **out,
                                    pflref_error *err)
{
    char *text;
    size_t len;
    pflref_status st = pflref_read_file(path, &text, &len, err);
    if (st != PFLREF_OK)
        return st;
    /* The folder of the spec resolves a relative problem file. */
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(path, dir, sizeof dir);
    st = pflref_spec_parse(text, len, dir, out, err);
    free(text);
    return st;
}
