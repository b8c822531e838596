/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/dtoa.h: the decimal text of a double, as the result writer
 * prints it (private to ref/).  Floor: core.
 *
 * TEMPORARY (issue 30): the formatter behind this declaration in this
 * tree, ref/core/dtoa.c, reproduces the text jansson 2.14 printed before
 * the writer was rewritten, so that the rewritten writer can be compared
 * byte for byte with the old one.  The shortest round-trip formatter
 * (Python's repr form, docs/formats.md) replaces it; this declaration is
 * the interface both keep. */
#ifndef PFLREF_CORE_DTOA_H
#define PFLREF_CORE_DTOA_H

#include <stddef.h>

/* The longest text pflref_dtoa writes, with its NUL. */
#define PFLREF_DTOA_MAX 32

/* out := the decimal text of x, NUL-terminated; returns its length
 * (without the NUL).  The text reads back (strtod) to x exactly, and
 * always reads as a real in JSON (it has a '.' or an exponent).  x must be
 * finite for JSON; a NaN or an infinity gives "nan", "inf" or "-inf". */
size_t pflref_dtoa(double x, char out[PFLREF_DTOA_MAX]);

#endif
