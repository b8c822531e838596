/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/oracle/diagnose_changes.c: the changes diagnose tries from a base
 * (ref/oracle/diagnose.c; docs/cli.md, "diagnose"): every other value of
 * every switch the registry lists for the algorithm (the client
 * optimizer's opt.* and batch norm's bn.* among them), and probes of its
 * hyperparameters (× 2, × ½, 0 and the registry's default for a real, and
 * for the optimizer's μ and λ at 0 torch's usual 0.9 and 5·10⁻⁴; ± 1 for
 * a count), each as words ("eta × 2 = 0.43 (instead of 0.215)").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "oracle/diagnose_search.h"

/* A probe of a real: "eta × 2 = 0.43 (instead of 0.215)"; `mid` before
 * " =", `after` after the value. */
static void add_real(dg_change *out, size_t *k, const pflref_param *p,
                     double x, double now, const char *mid, const char *after)
{
    if (*k == DG_MAX_CHANGES || x == now || !isfinite(x))
        return;
    dg_change *c = &out[(*k)++];
    *c = (dg_change){.p = p, .x = x, .kind = "probe"};
    char a[PFLREF_DTOA_MAX], b[PFLREF_DTOA_MAX];
    pflref_dtoa(x, a);   /* the shortest texts that read back (pflref/dtoa.h) */
    pflref_dtoa(now, b);
    snprintf(c->value, sizeof c->value, "%s", a);
    snprintf(c->text, sizeof c->text, "%s%s = %s%s (instead of %s)", p->name,
             mid, a, after, b);
}

/* The values a real that is 0 in the spec is also probed at, where ×2 and
 * ×½ are 0 again: the client optimizer's momentum and weight decay at
 * torch's usual settings (issue 31: torch.optim.SGD(momentum=0.9,
 * weight_decay=5e-4)), so a candidate that adds either to a plain-SGD
 * vector is named. */
static const struct {
    const char *name;
    double x;
} AT_ZERO[] = {
    {"opt.momentum", 0.9},
    {"opt.weight_decay", 5e-4},
};

/* Every change of one parameter p from the settings h. */
static void changes_of(const pflref_param *p, const pflref_hyper *h,
                       dg_change *out, size_t *k)
{
    if (p->type == PFLREF_PARAM_ENUM) {
        const char *now = pflref_hyper_get_enum(h, p);
        for (int j = 0; p->values[j] != NULL && *k < DG_MAX_CHANGES; j++) {
            if (strcmp(p->values[j], now) == 0)
                continue;
            dg_change *c = &out[(*k)++];
            *c = (dg_change){.p = p, .e = j, .kind = "switch"};
            snprintf(c->value, sizeof c->value, "%s", p->values[j]);
            snprintf(c->text, sizeof c->text, "%s = %s (instead of %s)",
                     p->name, p->values[j], now);
        }
    } else if (p->type == PFLREF_PARAM_REAL) {
        double x = pflref_hyper_get_real(h, p);
        if (!isfinite(x))
            return;    /* not set: nothing to probe */
        add_real(out, k, p, 2.0 * x, x, " × 2", "");
        add_real(out, k, p, 0.5 * x, x, " × ½", "");
        add_real(out, k, p, 0.0, x, "", "");
        if (p->def != 0.0)
            add_real(out, k, p, p->def, x, "", ", the default");
        for (size_t z = 0; x == 0.0 && z < sizeof AT_ZERO / sizeof AT_ZERO[0];
             z++)
            if (strcmp(p->name, AT_ZERO[z].name) == 0)
                add_real(out, k, p, AT_ZERO[z].x, x, "", ", torch's usual");
    } else {
        size_t n = pflref_hyper_get_int(h, p);
        for (int d = -1; d <= 1 && n != PFLREF_INT_UNSET; d += 2) {
            if ((d < 0 && (n == 0 || (double)(n - 1) < p->lo)) ||
                *k == DG_MAX_CHANGES)
                continue;
            dg_change *c = &out[(*k)++];
            *c = (dg_change){.p = p, .n = d < 0 ? n - 1 : n + 1,
                          .kind = "probe"};
            snprintf(c->value, sizeof c->value, "%zu", c->n);
            snprintf(c->text, sizeof c->text, "%s = %zu (instead of %zu)",
                     p->name, c->n, n);
        }
    }
}

/* Every change the registry allows for alg from the settings h. */
size_t dg_list_changes(const char *alg, const pflref_hyper *h,
                       dg_change *out)
{
    size_t count, k = 0;
    const pflref_param *ps = pflref_params(&count);
    for (size_t i = 0; i < count; i++)
        if (pflref_name_in_list(ps[i].algorithms, alg) &&
            pflref_param_find_for(ps[i].name, alg) == &ps[i])
            changes_of(&ps[i], h, out, &k);
    return k;
}

/* h with change c applied; 0 when the registry refuses the value. */
int dg_apply_change(pflref_hyper *h, const dg_change *c)
{
    pflref_error e;
    if (c->p->type == PFLREF_PARAM_ENUM)
        return pflref_hyper_set_enum(h, c->p, c->p->values[c->e], "", &e) ==
               PFLREF_OK;
    if (c->p->type == PFLREF_PARAM_REAL)
        return pflref_hyper_set_real(h, c->p, c->x, "", &e) == PFLREF_OK;
    return pflref_hyper_set_int(h, c->p, c->n, "", &e) == PFLREF_OK;
}

/* The change setting p to the text `value` from h ("0.99", "trainings"):
 * 1 when it is a change the registry takes, else 0. */
int dg_change_to(const pflref_param *p, const char *value,
                     const pflref_hyper *h, dg_change *c)
{
    dg_change list[64];
    size_t k = 0;
    if (p->type == PFLREF_PARAM_REAL) {
        char *end;
        const double x = strtod(value, &end);
        add_real(list, &k, p, x, pflref_hyper_get_real(h, p), "", "");
    } else {
        changes_of(p, h, list, &k);
    }
    for (size_t i = 0; i < k; i++)
        if (strcmp(list[i].value, value) == 0 ||
            (p->type == PFLREF_PARAM_REAL && k == 1)) {
            *c = list[i];
            return 1;
        }
    return 0;
}

