/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/emit.h: a streaming JSON emitter (internal).
 *
 * The result writer prints its document front to back into one growing
 * buffer, arrays of doubles straight from the C arrays, with no tree of
 * values in between (ref/io/result.c).  The text is compact JSON: no
 * space, "," between members and entries, ":" after a key; strings are
 * escaped as jansson escapes them (\" \\ \b \f \n \r \t, any other byte
 * below 0x20 as \u00XX in upper-case hex; every other character, '/' and
 * non-ASCII UTF-8 included, as it is); doubles are pflref_dtoa's text
 * (ref/core/dtoa.h); integers in decimal.
 *
 * Use: pflref_emit_init, then calls in document order (a key before each
 * member's value), then pflref_emit_finish, which hands the text over, or
 * pflref_emit_free.  The separators are implied: a value or key that
 * follows a value gets its ",".  A call that fails (memory, a string that
 * is not UTF-8, a non-finite double) records the failure in the emitter
 * and in its err; every later call does nothing, so a writer checks once,
 * at pflref_emit_finish.  The emitter does not check that objects and
 * arrays are balanced or that keys come only in objects: the writer's
 * shape is fixed and tested.
 */
#ifndef PFLREF_IO_EMIT_H
#define PFLREF_IO_EMIT_H

#include <stddef.h>
#include "pflref/status.h"

typedef struct {
    char *buf;              /* the text so far (len bytes of cap)          */
    size_t len, cap;
    pflref_status status;   /* PFLREF_OK until the first failure           */
    pflref_error *err;      /* receives the first failure (may be NULL)    */
} pflref_emit;

/* An empty text; size_hint bytes reserved (0: none yet).  err may be
 * NULL.  A hint that cannot be reserved is a failure (PFLREF_ENOMEM). */
void pflref_emit_init(pflref_emit *e, size_t size_hint, pflref_error *err);
/* Release the text (after a failure, or instead of finishing). */
void pflref_emit_free(pflref_emit *e);
/* The text, NUL-terminated, handed over in *text (free() it) with its
 * length in *len (len may be NULL), and PFLREF_OK; or the first failure's
 * status, *text NULL and the text released. */
pflref_status pflref_emit_finish(pflref_emit *e, char **text, size_t *len);

void pflref_emit_object_begin(pflref_emit *e);   /* {  */
void pflref_emit_object_end(pflref_emit *e);     /* }  */
void pflref_emit_array_begin(pflref_emit *e);    /* [  */
void pflref_emit_array_end(pflref_emit *e);      /* ]  */
/* "key": (the value follows). */
void pflref_emit_key(pflref_emit *e, const char *key);

/* Values.  A string must be valid UTF-8 (PFLREF_EINVAL otherwise); a real
 * must be finite (PFLREF_EINTERNAL otherwise: JSON has no NaN or Inf, and
 * the writers check their numbers before they print them). */
void pflref_emit_string(pflref_emit *e, const char *s);
void pflref_emit_integer(pflref_emit *e, long long x);
void pflref_emit_size(pflref_emit *e, size_t x);
void pflref_emit_bool(pflref_emit *e, int b);
void pflref_emit_null(pflref_emit *e);
void pflref_emit_real(pflref_emit *e, double x);

/* 1 when s is valid UTF-8 as pflref_emit_string requires it. */
int pflref_emit_utf8_valid(const char *s);

/* Arrays from C arrays: [x_0,…,x_{n−1}] of reals; rows arrays of cols
 * reals from row-major x; [i_0,…] of indices. */
void pflref_emit_reals(pflref_emit *e, const double *x, size_t n);
void pflref_emit_matrix(pflref_emit *e, const double *x, size_t rows,
                        size_t cols);
void pflref_emit_indices(pflref_emit *e, const size_t *x, size_t n);

#endif
