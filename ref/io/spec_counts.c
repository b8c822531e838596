/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_counts.c: the spec's init.class_counts (FedRoD's N_{i,c};
 * docs/formats.md), read for ref/io/spec_hyper.c's init section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/spec_read.h"

/* init.class_counts: FedRoD's N_{i,c}, the class counts its balanced
 * softmax takes (eq. of §4), as N arrays of k integer literals >= 0
 * (client 0 first); absent: counted over each client's training data.
 * PFLlib counts them over one shuffled pass of the client's loader with
 * drop_last (clientrod.py:22-26), so which samples count is a random
 * choice the spec gives.  A zero count for a class the client's training
 * data holds is refused: the balanced softmax gives its samples
 * probability 0, so a batch holding one has an infinite loss. */
pflref_status pflref_spec_read_class_counts(const json_t *v,
                                            pflref_spec *spec,
                                            pflref_error *err)
{
    const json_t *cc = json_object_get(v, "class_counts");
    if (cc == NULL)
        return PFLREF_OK;
    if (strcmp(spec->algorithm->name, "fedrod") != 0)
        return pflref_error_set(err, PFLREF_EINVAL, "init.class_counts",
                                "only fedrod takes class counts (the "
                                "algorithm is %s)", spec->algorithm->name);
    const pflref_problem *pr = spec->problem;
    const size_t N = pr->N, K = pr->model.k;
    size_t rows = 0;
    pflref_status st;
    if ((st = pflref_json_array(cc, "init.class_counts", 1, &rows, err)))
        return st;
    if (rows != N)
        return pflref_error_set(err, PFLREF_EINVAL, "init.class_counts",
                                "expected one list of class counts per "
                                "client, N = %zu, found %zu", N, rows);
    if ((spec->fedrod_counts = calloc(N * K > 0 ? N * K : 1,
                                      sizeof *spec->fedrod_counts)) == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, "init.class_counts",
                                "out of memory");
    char where[PFLREF_WHERE_MAX];
    for (size_t i = 0; i < N; i++) {
        const json_t *row = json_array_get(cc, i);
        snprintf(where, sizeof where, "init.class_counts[%zu]", i);
        size_t n = 0;
        if ((st = pflref_json_array(row, where, 1, &n, err)))
            return st;
        if (n != K)
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "expected k = %zu class counts, found "
                                    "%zu", K, n);
        const pflref_data *D = &pr->clients[i].train;
        for (size_t c = 0; c < K; c++) {
            const json_t *x = json_array_get(row, c);
            snprintf(where, sizeof where, "init.class_counts[%zu][%zu]", i,
                     c);
            if (!json_is_integer(x) || json_integer_value(x) < 0)
                return pflref_error_set(err, PFLREF_EINVAL, where,
                                        "a class count must be an integer "
                                        "literal >= 0");
            const double count = (double)json_integer_value(x);
            size_t held = 0;   /* the client's training samples of c */
            for (size_t r = 0; r < D->n; r++)
                held += (size_t)D->y[r] == c;
            if (count == 0.0 && held > 0)
                return pflref_error_set(
                    err, PFLREF_EINVAL, where,
                    "class %zu has count 0 but %zu training samples of "
                    "client %zu (the balanced softmax would give them "
                    "probability 0)", c, held, i);
            spec->fedrod_counts[i * K + c] = count;
        }
    }
    spec->hyper.fedrod.counts = spec->fedrod_counts;
    return PFLREF_OK;
}
