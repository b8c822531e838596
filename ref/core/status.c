/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/status.c: status names and the one function every failure passes
 * through (pflref_error_set), a good place for a breakpoint. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "pflref/status.h"

void pflref_error_clear(pflref_error *err)
{
    if (err == NULL)
        return;
    err->status = PFLREF_OK;
    err->where[0] = '\0';
    err->message[0] = '\0';
    err->round = -1;
    err->client = -1;
    err->step = -1;
}

pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...)
{
    if (err == NULL)
        return status;
    pflref_error_clear(err);
    err->status = status;
    if (where != NULL)
        snprintf(err->where, sizeof err->where, "%s", where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

pflref_status pflref_error_diverge(pflref_error *err, long round, long client,
                                   long step, const char *quantity)
{
    char at[96];
    if (round < 0)
        snprintf(at, sizeof at, "after the last round (post phase)");
    else
        snprintf(at, sizeof at, "at round %ld", round);
    char who[96] = "";
    if (client >= 0 && step >= 0)
        snprintf(who, sizeof who, ", client %ld, local step %ld", client, step);
    else if (client >= 0)
        snprintf(who, sizeof who, ", client %ld", client);
    else
        snprintf(who, sizeof who, ", server aggregation");
    pflref_status st = pflref_error_set(
        err, PFLREF_EDIVERGE, quantity, "%s is not finite (NaN or Inf) %s%s",
        quantity, at, who);
    if (err != NULL) {
        err->round = round;
        err->client = client;
        err->step = step;
    }
    return st;
}

const char *pflref_status_name(pflref_status status)
{
    switch (status) {
    case PFLREF_OK:        return "ok";
    case PFLREF_EINVAL:    return "invalid input";
    case PFLREF_ENOMEM:    return "out of memory";
    case PFLREF_EIO:       return "input/output error";
    case PFLREF_EDIVERGE:  return "numerical divergence";
    case PFLREF_EINTERNAL: return "internal error";
    }
    return "unknown status";
}
