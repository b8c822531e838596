/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/args.c: the argument tests of ref/core/args.h. */
#include <stddef.h>
#include "core/args.h"

pflref_status pflref_arg_nonnull(pflref_error *err, const char *name,
                                 const void *p)
{
    if (p != NULL)
        return PFLREF_OK;
    return pflref_error_set(err, PFLREF_EINVAL, name, "%s is NULL", name);
}
