/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/args.h: the argument tests public functions open with (private
 * to ref/).  Floor: core.
 *
 * Each returns PFLREF_OK or records the failure through pflref_error_set,
 * so a run of tests reads as one condition:
 *
 *     if ((st = pflref_arg_nonnull(err, "a", a)) ||
 *         (st = pflref_arg_nonnull(err, "out", out)))
 *         return st;
 */
#ifndef PFLREF_CORE_ARGS_H
#define PFLREF_CORE_ARGS_H

#include "pflref/status.h"

/* PFLREF_OK when p is non-NULL; otherwise PFLREF_EINVAL with where `name`
 * and the message "<name> is NULL".  err may be NULL. */
pflref_status pflref_arg_nonnull(pflref_error *err, const char *name,
                                 const void *p);

#endif
