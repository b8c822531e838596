/* ref/perfedavg.c: Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1).
 * (being written: the round is not implemented yet) */
#include "internal.h"

static pflref_status perfedavg_round(pflref_state *s, const pflref_round_plan *plan,
                               const pflref_trace *trace, pflref_error *err)
{
    (void)s;
    (void)plan;
    (void)trace;
    return pflref_error_set(err, PFLREF_EINTERNAL, "algorithm",
                            "perfedavg is not implemented yet");
}

const pflref_algorithm pflref_perfedavg = {
    .name = "perfedavg",
    .title = "Per-FedAvg (Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .round = perfedavg_round,
};
