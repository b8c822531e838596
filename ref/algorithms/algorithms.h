/* ref/algorithms/algorithms.h: the registered algorithms and the pieces
 * one algorithm file lends another (private to ref/).  Floor: algorithms
 * (docs/architecture.md). */
#ifndef PFLREF_ALGORITHMS_ALGORITHMS_H
#define PFLREF_ALGORITHMS_ALGORITHMS_H

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

/* FedAvg's work buffers, P doubles each (zero-filled; none is carried
 * between rounds). */
typedef struct {
    double *w_t;      /* w_t, the round-start global model                  */
    double *w_local;  /* w^k, client k's iterate in ClientUpdate            */
    double *g;        /* ∇ℓ(w; b), the local gradient                       */
} pflref_fedavg_work;

/* Allocate / free the vectors of a pflref_fedavg_work (not the struct):
 * 0, or −1 when out of memory (free releases what was allocated). */
int pflref_fedavg_work_init(pflref_fedavg_work *work, size_t P);
void pflref_fedavg_work_release(pflref_fedavg_work *work);

/* FedAvg's round (ref/algorithms/fedavg.c) with the buffers of work,
 * reused by algorithms that train their global model with FedAvg before a
 * personalisation phase (finetune). */
pflref_status pflref_fedavg_round_with(pflref_state *s,
                                       const pflref_round_plan *plan,
                                       pflref_fedavg_work *work,
                                       const pflref_trace *trace,
                                       pflref_error *err);

/* The same round as a descriptor's `round`, its buffers carved from the
 * state's scratch: only for an algorithm that has no typed work struct yet
 * (interp); to be removed with the state's scratch. */
pflref_status pflref_fedavg_round(pflref_state *s,
                                  const pflref_round_plan *plan,
                                  const pflref_trace *trace,
                                  pflref_error *err);

#endif
