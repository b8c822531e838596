/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/spec_bn.c: bn.aggregate (ref/engine/params_bn.h) where it has
 * nothing to act on: per algorithm, the reason the "does not apply to"
 * refusal of ref/io/spec_hyper.c gives (docs/models.md, "PFLlib's
 * reading"; each algorithm's page says more).  An algorithm missing here
 * gets the registry's plain refusal.  And the batch-normalisation switches
 * given on a model, or beside settings, that leave them nothing to do. */
#include <string.h>
#include "io/spec_read.h"

static const struct {
    const char *name, *why;
} refusals[] = {
    /* ref/algorithms/fedproto.c check_model; PFLlib serverproto.py:44-46,
     * 63-81: prototypes travel, never a model */
    {"fedproto", "fedproto's clients exchange prototypes, never a model, so "
                 "every client keeps its own running statistics whatever "
                 "the switch would say"},
    /* CFL, IFCA, interp, LoRA, pFedHN, FedRecon: no library exchanges
     * parameters() only for them (PFLlib d832e76f6a23 system/flcore/
     * servers/ has none of them; the authors' IFCA, jichan3751/ifca
     * 61e44b8, femnist/ifca/models/model.py:42-50 sends
     * tf.trainable_variables() where celeba/cnn.py:25's moving statistics
     * never move nor are read), so the model vector's reading, average, is
     * their one reading (docs/models.md, "PFLlib's reading") */
#define BN_NO_LIBRARY(alg)                                                   \
    "no library code exchanges parameters() only for " alg " (PFLlib "     \
    "ships no " alg " server), so its running statistics stay entries of "  \
    "the models it moves (docs/models.md)"
    {"cfl", BN_NO_LIBRARY("cfl")},
    {"ifca", BN_NO_LIBRARY("ifca") ", and the authors' code sends "
             "tf.trainable_variables() where its moving statistics never "
             "move (jichan3751/ifca femnist/ifca/models/model.py:42-50, "
             "celeba/cnn.py:25)"},
    {"interp", BN_NO_LIBRARY("interp")},
    {"lora", BN_NO_LIBRARY("lora") ": only the adapters travel, each "
             "client's copy of the frozen base keeps its own "
             "(docs/algorithms/lora.md)"},
    {"pfedhn", BN_NO_LIBRARY("pfedhn")},
    {"fedrecon", BN_NO_LIBRARY("fedrecon")},
#undef BN_NO_LIBRARY
};

const char *pflref_spec_bn_refusal(const char *algorithm)
{
    for (size_t r = 0; r < sizeof refusals / sizeof refusals[0]; r++)
        if (strcmp(refusals[r].name, algorithm) == 0)
            return refusals[r].why;
    return NULL;
}

/* The batch-normalisation switches given explicitly where the model or
 * the other settings leave them nothing to act on (a preset's setting is
 * harmless there). */
pflref_status pflref_spec_check_bn_switches(const json_t *sw,
                                            const pflref_spec *spec,
                                            pflref_error *err)
{
    /* bn.aggregate = parameters_only given on a model without batch
     * normalisation: no buffer to keep (a preset's setting is harmless
     * there, the round then being FedAvg's) */
    if (json_object_get(sw, "bn.aggregate") != NULL &&
        spec->hyper.bn_aggregate == PFLREF_BN_AGGREGATE_PARAMETERS &&
        !spec->problem->model.bn)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.bn.aggregate",
            "bn.aggregate = parameters_only keeps each client's batch-norm "
            "running statistics, but this model has no batch normalisation "
            "(no running_mean or running_var): drop the switch");
    /* moon.passes = train, given: the mode of z_glob's and z_prev's
     * batch normalisation, which a model without it does not have (the
     * preset pfllib's setting is harmless there) */
    if (json_object_get(sw, "moon.passes") != NULL &&
        spec->hyper.moon.passes == PFLREF_MOON_PASSES_TRAIN &&
        !spec->problem->model.bn)
        return pflref_error_set(
            err, PFLREF_EINVAL, "algorithm.switches.moon.passes",
            "moon.passes = train runs z_glob's and z_prev's batch "
            "normalisation on the batch's statistics, but this model has no "
            "batch normalisation (both passes are then the same): drop the "
            "switch");
    /* scaffold.bn_global = previous, given: it picks the running
     * statistics of x that bn.aggregate = parameters_only leaves open */
    if (json_object_get(sw, "scaffold.bn_global") != NULL &&
        spec->hyper.scaffold.bn_global == PFLREF_SCAFFOLD_BN_GLOBAL_PREVIOUS) {
        if (!spec->problem->model.bn)
            return pflref_error_set(
                err, PFLREF_EINVAL, "algorithm.switches.scaffold.bn_global",
                "scaffold.bn_global = previous keeps the global's batch-norm "
                "running statistics, but this model has no batch "
                "normalisation (no running_mean or running_var): drop the "
                "switch");
        if (spec->hyper.bn_aggregate != PFLREF_BN_AGGREGATE_PARAMETERS)
            return pflref_error_set(
                err, PFLREF_EINVAL, "algorithm.switches.scaffold.bn_global",
                "scaffold.bn_global = previous (the global's running "
                "statistics never move, PFLlib serverscaffold.py:124-129) "
                "needs bn.aggregate = parameters_only: under average x's "
                "running statistics are averaged with the rest");
    }
    return PFLREF_OK;
}
