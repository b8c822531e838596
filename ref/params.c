/* ref/params.c: the registry of hyperparameters and variant switches.
 *
 * One table names every hyperparameter (with its paper symbol and bounds)
 * and every switch (with its values, the paper's reading first).  The spec
 * reader, `pflref list` and the docs all read this table, so a switch is
 * spelled the same way everywhere (shared/spec/README.md rule 1).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "pflref/algorithm.h"

static const char *const fedavg_weights_values[] = {
    "samples", "uniform", "all_keep_old", NULL};
static const char *const finetune_scope_values[] = {"full", "personal", NULL};

static const pflref_param params[] = {
    {"eta", "fedavg local finetune", "fedavg local finetune",
     PFLREF_PARAM_REAL, offsetof(pflref_hyper, eta), NAN, 0.0, 1, NULL, "η",
     "client step size of local SGD"},
    {"eta_ft", "finetune", "finetune", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, eta_ft), NAN, 0.0, 1, NULL, "η_ft",
     "fine-tuning step size"},
    {"mu_ft", "finetune", "", PFLREF_PARAM_REAL,
     offsetof(pflref_hyper, mu_ft), 0.0, 0.0, 0, NULL, "μ_ft",
     "fine-tuning proximal weight toward the global model (0 = plain)"},
    {"fedavg.weights", "fedavg finetune", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, fedavg_weights), 0.0, 0.0, 0,
     fedavg_weights_values, "",
     "aggregation weights: n_k/Σ_{S_t} n_j (final paper) | 1/m | "
     "Σ_k n_k/n with unsampled clients keeping w_t"},
    {"finetune.scope", "finetune", "", PFLREF_PARAM_ENUM,
     offsetof(pflref_hyper, finetune_scope), 0.0, 0.0, 0,
     finetune_scope_values, "",
     "which parameters fine-tuning moves: all | the split's personal blocks"},
};

const pflref_param *pflref_params(size_t *count)
{
    *count = sizeof params / sizeof params[0];
    return params;
}

const pflref_param *pflref_param_find(const char *name)
{
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
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

void pflref_hyper_defaults(pflref_hyper *h)
{
    memset(h, 0, sizeof *h);
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if (params[i].type == PFLREF_PARAM_REAL)
            *real_field(h, &params[i]) = params[i].def;
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
                                "%s is a switch; give one of its value names",
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

double pflref_hyper_get_real(const pflref_hyper *h, const pflref_param *p)
{
    return *(const double *)(const void *)((const char *)h + p->offset);
}

const char *pflref_hyper_get_enum(const pflref_hyper *h, const pflref_param *p)
{
    int i = *(const int *)(const void *)((const char *)h + p->offset);
    return p->values[i];
}
