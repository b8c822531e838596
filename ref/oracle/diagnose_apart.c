/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_apart.c: which vector tells two variants apart that
 * are numerically identical on the diagnosed one (docs/cli.md,
 * "diagnose": "identical here").
 *
 * The two variants differ in some of the registry's settings
 * (ref/oracle/diagnose_rank.c lists them).  Each other golden vector of
 * the algorithm in the diagnosed vector's folder, in sorted order, is run
 * twice: its own spec with those settings as the one variant has them,
 * and as the other has them.  The first vector whose two runs differ (by
 * their fingerprints, as the search compares runs) tells them apart and
 * is named; the reference's own output is the proof.  The runs count
 * against the diagnosis's budget.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose_search.h"

/* The vectors looked at, at most (a folder of a few dozen is usual). */
#define MAX_LOOKED 40

/* The bytes of parameter p's field. */
static size_t field_size(const pflref_param *p)
{
    if (p->type == PFLREF_PARAM_ENUM)
        return sizeof(int);
    if (p->type == PFLREF_PARAM_REAL)
        return sizeof(double);
    return sizeof(size_t);
}

/* h with every parameter of alg in which a and b differ set as in from. */
static void take_differing(pflref_hyper *h, const char *alg,
                           const pflref_hyper *a, const pflref_hyper *b,
                           const pflref_hyper *from)
{
    size_t count;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count; i++) {
        const pflref_param *p = &ps[i];
        const size_t n = field_size(p);
        if (!pflref_name_in_list(p->algorithms, alg) ||
            pflref_param_find_for(p->name, alg) != p ||
            memcmp((const char *)a + p->offset, (const char *)b + p->offset,
                   n) == 0)
            continue;
        memcpy((char *)h + p->offset, (const char *)from + p->offset, n);
    }
}

/* The fingerprint of spec run under h; 0 when it does not run. */
static uint64_t run_print(dg_search *s, const pflref_spec *spec,
                          const pflref_hyper *h, int *ok)
{
    pflref_spec copy = *spec;
    copy.hyper = *h;
    pflref_trajectory tj;
    pflref_trajectory_init(&tj, PFLREF_RECORD_STEP);
    pflref_trace rec = {pflref_trajectory_emit, &tj};
    pflref_run_result *res = NULL;
    pflref_error err;
    *ok = pflref_spec_run(&copy, &rec, &res, &err) == PFLREF_OK && !tj.failed;
    pflref_run_result_free(res);
    s->d->runs++;
    const uint64_t fp = *ok ? dg_fingerprint(&tj) : 0;
    pflref_trajectory_free(&tj);
    return fp;
}

/* 1 when the vector at path (of alg, not the diagnosed one) gives
 * different runs under a's and b's settings; its id into id. */
static int tells_apart(dg_search *s, const char *path, const char *dir,
                       const pflref_hyper *a, const pflref_hyper *b,
                       char *id, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    pflref_error err;
    pflref_spec *spec = NULL;
    int apart = 0;
    if (pflref_read_file(path, &text, &len, &err) == PFLREF_OK &&
        pflref_golden_is_vector(text, len) &&
        pflref_golden_spec(text, len, dir, &spec, &err) == PFLREF_OK &&
        spec->id != NULL && strcmp(spec->id, s->v->id) != 0 &&
        strcmp(spec->algorithm->name, s->v->spec->algorithm->name) == 0 &&
        s->d->runs + 2 <= s->budget) {
        const char *alg = spec->algorithm->name;
        pflref_hyper ha = spec->hyper, hb = spec->hyper;
        take_differing(&ha, alg, a, b, a);
        take_differing(&hb, alg, a, b, b);
        int oka, okb;
        const uint64_t fa = run_print(s, spec, &ha, &oka);
        const uint64_t fb = run_print(s, spec, &hb, &okb);
        apart = oka && okb && fa != fb;
        if (apart)
            snprintf(id, n, "%s", spec->id);
    }
    pflref_spec_free(spec);
    free(text);
    return apart;
}

int dg_tell_apart(dg_search *s, const pflref_hyper *a, const pflref_hyper *b,
                  char *id, size_t n)
{
    if (s->base_dir == NULL)
        return 0;
    struct dirent **names;
    const int count = scandir(s->base_dir, &names, NULL, alphasort);
    if (count < 0)
        return 0;
    int found = 0;
    for (int i = 0, looked = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        const size_t len = strlen(name);
        if (!found && looked < MAX_LOOKED && name[0] != '.' && len > 5 &&
            strcmp(name + len - 5, ".json") == 0) {
            char path[PFLREF_PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", s->base_dir, name);
            looked++;
            found = tells_apart(s, path, s->base_dir, a, b, id, n);
        }
        free(names[i]);
    }
    free(names);
    return found;
}
