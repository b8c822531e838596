/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/params_set.c: reading and writing the hyperparameters and
 * switches of a pflref_hyper through the registry's table (params.c):
 * lookup by name (and by algorithm), the defaults, and the setters that
 * check a value against its row's bounds or values. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/algorithm.h"

const pflref_param *pflref_param_find(const char *name)
{
    size_t n;
    const pflref_param *params = pflref_params(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

const pflref_param *pflref_param_find_for(const char *name, const char *alg)
{
    size_t n;
    const pflref_param *params = pflref_params(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(params[i].name, name) == 0 &&
            pflref_name_in_list(params[i].algorithms, alg))
            return &params[i];
    return pflref_param_find(name);
}

int pflref_name_in_list(const char *names, const char *name)
{
    size_t len = strlen(name);
    const char *p = names;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == len && n > 0 && strncmp(p, name, n) == 0)
            return 1;
        p += n;
    }
    return 0;
}

static double *real_field(pflref_hyper *h, const pflref_param *p)
{
    return (double *)(void *)((char *)h + p->offset);
}

static int *enum_field(pflref_hyper *h, const pflref_param *p)
{
    return (int *)(void *)((char *)h + p->offset);
}

static size_t *int_field(pflref_hyper *h, const pflref_param *p)
{
    return (size_t *)(void *)((char *)h + p->offset);
}

void pflref_hyper_defaults(pflref_hyper *h)
{
    size_t n;
    const pflref_param *params = pflref_params(&n);
    memset(h, 0, sizeof *h);
    for (size_t i = 0; i < n; i++) {
        if (params[i].type == PFLREF_PARAM_REAL)
            *real_field(h, &params[i]) = params[i].def;
        else if (params[i].type == PFLREF_PARAM_INT)
            *int_field(h, &params[i]) = isnan(params[i].def)
                                            ? PFLREF_INT_UNSET
                                            : (size_t)params[i].def;
        else
            *enum_field(h, &params[i]) = 0;
    }
}

pflref_status pflref_hyper_set_real(pflref_hyper *h, const pflref_param *p,
                                    double value, const char *where,
                                    pflref_error *err)
{
    if (p->type != PFLREF_PARAM_REAL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                p->type == PFLREF_PARAM_ENUM
                                    ? "%s is a switch; give one of its value "
                                      "names"
                                    : "%s is a count; give an integer",
                                p->name);
    if (!isfinite(value))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s must be finite", p->name);
    if (p->lo_open ? !(value > p->lo) : !(value >= p->lo))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s = %.17g must be %s %g", p->name, value,
                                p->lo_open ? ">" : ">=", p->lo);
    *real_field(h, p) = value;
    return PFLREF_OK;
}

pflref_status pflref_hyper_set_enum(pflref_hyper *h, const pflref_param *p,
                                    const char *value, const char *where,
                                    pflref_error *err)
{
    if (p->type != PFLREF_PARAM_ENUM)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s is a number, not a switch", p->name);
    for (int i = 0; p->values[i] != NULL; i++) {
        if (strcmp(p->values[i], value) == 0) {
            *enum_field(h, p) = i;
            return PFLREF_OK;
        }
    }
    char known[256] = "";
    for (int i = 0; p->values[i] != NULL; i++) {
        strncat(known, i ? "|" : "", sizeof known - strlen(known) - 1);
        strncat(known, p->values[i], sizeof known - strlen(known) - 1);
    }
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "unknown value \"%s\" for %s (known: %s)", value,
                            p->name, known);
}

pflref_status pflref_hyper_set_int(pflref_hyper *h, const pflref_param *p,
                                   size_t value, const char *where,
                                   pflref_error *err)
{
    if (p->type != PFLREF_PARAM_INT)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s is not a count", p->name);
    if ((double)value < p->lo || value == PFLREF_INT_UNSET)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s = %zu must be >= %g", p->name, value,
                                p->lo);
    *int_field(h, p) = value;
    return PFLREF_OK;
}

size_t pflref_hyper_get_int(const pflref_hyper *h, const pflref_param *p)
{
    return *(const size_t *)(const void *)((const char *)h + p->offset);
}

double pflref_hyper_get_real(const pflref_hyper *h, const pflref_param *p)
{
    return *(const double *)(const void *)((const char *)h + p->offset);
}

const char *pflref_hyper_get_enum(const pflref_hyper *h, const pflref_param *p)
{
    int i = *(const int *)(const void *)((const char *)h + p->offset);
    return p->values[i];
}
