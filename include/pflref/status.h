/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/status.h: status codes and error records.
 *
 * Every fallible pflref function returns a pflref_status and, when given a
 * non-NULL pflref_error, fills it with what went wrong and where: a JSON path
 * such as `clients[3].X[2]`, an argument name such as `m`, or, for a numerical
 * failure, the round, client and local step at which an iterate stopped being
 * finite.  The three classes of failure are kept apart:
 *
 *   invalid input           PFLREF_EINVAL, PFLREF_ENOMEM, PFLREF_EIO
 *   algorithmic failure     PFLREF_EDIVERGE (NaN or Inf in an iterate)
 *   internal bug            PFLREF_EINTERNAL
 *
 * The library never prints and never exits; the CLI maps statuses to exit
 * codes (docs/cli.md).
 */
#ifndef PFLREF_STATUS_H
#define PFLREF_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PFLREF_OK = 0,
    PFLREF_EINVAL = 1,    /* invalid argument, spec field or data value      */
    PFLREF_ENOMEM = 2,    /* allocation failed or a size exceeds the limits  */
    PFLREF_EIO = 3,       /* a file could not be read or written             */
    PFLREF_EDIVERGE = 4,  /* an iterate became NaN or Inf                     */
    PFLREF_EINTERNAL = 5  /* a pflref bug: an invariant did not hold          */
} pflref_status;

#define PFLREF_WHERE_MAX 256
#define PFLREF_MESSAGE_MAX 512

/* What went wrong.  `where` is a JSON path or an argument name ("" when the
 * failure has no location); round, client and step are -1 unless the failure
 * is a divergence (or another event located in the run). */
typedef struct {
    pflref_status status;
    char where[PFLREF_WHERE_MAX];
    char message[PFLREF_MESSAGE_MAX];
    long round;
    long client;
    long step;
} pflref_error;

/* Reset err to PFLREF_OK with empty strings and -1 locations.  err may be NULL. */
void pflref_error_clear(pflref_error *err);

/* Record a failure and return `status`, so callers can write
 *     return pflref_error_set(err, PFLREF_EINVAL, "m", "m = %zu exceeds N = %zu", m, N);
 * This is the one function every failure passes through (a place for a
 * breakpoint).  err may be NULL, in which case only the status is returned.
 * `where` may be NULL (no location). */
pflref_status pflref_error_set(pflref_error *err, pflref_status status,
                               const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Like pflref_error_set, for a divergence at (round, client, step). */
/*@ assigns *err; */
pflref_status pflref_error_diverge(pflref_error *err, long round, long client,
                                   long step, const char *quantity);

/* A stable lower-case name for a status ("ok", "invalid", ...). */
const char *pflref_status_name(pflref_status status);

#ifdef __cplusplus
}
#endif
#endif
