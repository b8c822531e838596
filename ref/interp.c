/* ref/interp.c: FedAvg and local models, interpolated (seed 000 §2; Mansour et al. 2020).
 * (being written: the round is not implemented yet) */
#include "internal.h"

static pflref_status interp_round(pflref_state *s, const pflref_round_plan *plan,
                               const pflref_trace *trace, pflref_error *err)
{
    (void)s;
    (void)plan;
    (void)trace;
    return pflref_error_set(err, PFLREF_EINTERNAL, "algorithm",
                            "interp is not implemented yet");
}

const pflref_algorithm pflref_interp = {
    .name = "interp",
    .title = "FedAvg and local models, interpolated (seed 000 §2; Mansour et al. 2020)",
    .has_global = 1,
    .n_eval = 1,
    .eval = {{"global", PFLREF_SOURCE_GLOBAL}},
    .round = interp_round,
};
