/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref.h: the public API of pflref, a double-precision reference
 * implementation of personalized federated learning algorithms and the
 * test oracle other implementations are validated against.
 *
 * Areas (one header each, all included here):
 *   pflref/status.h     status codes and error records
 *   pflref/model.h      models, losses, gradients, Hessian-vector products
 *   pflref/problem.h    clients' data and the documented generators
 *   pflref/sampler.h    sampling without replacement, random streams
 *   pflref/schedule.h   client sets and minibatch index lists
 *   pflref/metrics.h    client-aware summaries
 *   pflref/dtoa.h       the shortest text of a double that reads back
 *   pflref/trace.h      events and trajectories
 *   pflref/hyper.h      hyperparameters, variant switches, presets (the
 *                       baselines' in pflref/hyper_baselines.h, the personalised
 *                       methods' in pflref/hyper_personal.h)
 *   pflref/algorithm.h  the algorithm registry and the run driver
 *   pflref/io.h         JSON specs and results
 *   pflref/golden.h     golden vectors and their verification
 */
#ifndef PFLREF_H
#define PFLREF_H

#include "pflref/version.h"
#include "pflref/status.h"
#include "pflref/model.h"
#include "pflref/problem.h"
#include "pflref/sampler.h"
#include "pflref/schedule.h"
#include "pflref/metrics.h"
#include "pflref/dtoa.h"
#include "pflref/trace.h"
#include "pflref/hyper.h"
#include "pflref/algorithm.h"
#include "pflref/io.h"
#include "pflref/golden.h"

#endif
