/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/work.h: the buffers of the algorithms' typed workspaces
 * (GSL's `_alloc`/`_free`), private to ref/.  Floor: engine.
 *
 * An algorithm's workspace is a struct of named buffers whose FIRST member
 * is a pflref_work, the list of its allocations:
 *
 *   typedef struct {
 *       pflref_work list;   (first: pflref_work_free finds it there)
 *       double *theta;      k×P: the cluster models θ_j
 *       ...
 *   } ifca_work;
 *
 * Its work_alloc hook callocs the struct, allocates every buffer through
 * the list and returns pflref_work_ready(ws); its work_free hook is
 * pflref_work_free.  Every buffer is zero-filled (calloc), so state kept
 * in a workspace across rounds (PFLEGO's Adam moments) starts at 0.  A set
 * of buffers that one algorithm lends another (FedAvg's pflref_fedavg_work,
 * held by finetune and interp) is allocated through the list of the
 * workspace that holds it, so that workspace's pflref_work_free frees it.
 */
#ifndef PFLREF_ENGINE_WORK_H
#define PFLREF_ENGINE_WORK_H

#include <stddef.h>

/* The most buffers one workspace holds (APFL's and CFL's have 10); one
 * more fails as an allocation does, so a workspace that outgrows it fails
 * its first run. */
#define PFLREF_WORK_MAX_BUFFERS 16

typedef struct {
    void *buf[PFLREF_WORK_MAX_BUFFERS]; /* the buffers allocated, in order */
    size_t n;                           /* how many                         */
    size_t bytes;                       /* their bytes (the run's memory
                                           estimate counts them)            */
    int failed;                         /* 1 when an allocation failed      */
} pflref_work;

/* rows×cols doubles, zero-filled, recorded in list; NULL (and the list
 * marked failed) when rows or cols is 0, when rows·cols·sizeof(double)
 * overflows a size_t, or when out of memory. */
double *pflref_work_doubles(pflref_work *list, size_t rows, size_t cols);

/* rows×cols size_t integers, zero-filled; as pflref_work_doubles. */
size_t *pflref_work_indices(pflref_work *list, size_t rows, size_t cols);

/* n bytes, zero-filled; as pflref_work_doubles. */
unsigned char *pflref_work_flags(pflref_work *list, size_t n);

/* work (a workspace struct whose first member is its pflref_work) when
 * every allocation through its list succeeded; otherwise frees it
 * (pflref_work_free) and returns NULL. */
void *pflref_work_ready(void *work);

/* Free every buffer of the workspace's list, then the workspace itself
 * (NULL: nothing). */
void pflref_work_free(void *work);

#endif
