/* ref/internal.h: declarations shared between files of ref/ that are not
 * part of the public API. */
#ifndef PFLREF_INTERNAL_H
#define PFLREF_INTERNAL_H

#include "engine/engine.h"

/* The registered algorithms (one per file). */
extern const pflref_algorithm pflref_fedavg;
extern const pflref_algorithm pflref_local_only;
extern const pflref_algorithm pflref_finetune;
extern const pflref_algorithm pflref_prox;
extern const pflref_algorithm pflref_pfedme;
extern const pflref_algorithm pflref_ditto;
extern const pflref_algorithm pflref_fedalt;
extern const pflref_algorithm pflref_fedsim;
extern const pflref_algorithm pflref_pflego;
extern const pflref_algorithm pflref_perfedavg;
extern const pflref_algorithm pflref_apfl;
extern const pflref_algorithm pflref_interp;
extern const pflref_algorithm pflref_cfl;
extern const pflref_algorithm pflref_ifca;

/* FedAvg's round, reused by algorithms that train their global model with
 * FedAvg before a personalisation phase (finetune). */
pflref_status pflref_fedavg_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err);

#endif
