/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/dtoa.h: the shortest decimal text that reads back to a double, laid
 * out as Python's repr(x) (ref/core/dtoa.c: Ryū, U. Adams, PLDI 2018).
 * Floor: core.
 *
 * The digits are the fewest that strtod reads back to x, bit for bit; of
 * the candidates with that many digits, the one nearest to x (half-way
 * ties: the even last digit).  The layout is Python's: with x = d.ddd·10^e,
 *   -4 <= e < 16   fixed notation, ".0" appended to a whole number:
 *                  0.0001, 2.385, 100.0, 1234567890123456.8
 *   otherwise      d.ddde±XX, at least two exponent digits:
 *                  1e-05, 1e+16, 1.5e+300, 5e-324
 * and "0.0", "-0.0" for the zeros.  Every such text is also a JSON number
 * (NaN and the infinities: below).
 * Results print their reals this way (docs/formats.md, "Doubles on
 * output"); canonical JSON (ref/io/canonical.c, the content hashes) keeps
 * its own "%.17g" form.
 */
#ifndef PFLREF_DTOA_H
#define PFLREF_DTOA_H

#include <stddef.h>

/* Room for the longest text and its NUL ("-2.2250738585072014e-308" has
 * 24 characters). */
#define PFLREF_DTOA_MAX 32

#ifdef __cplusplus
extern "C" {
#endif

/* Write the shortest round-trip text of x into out, NUL-terminated, and
 * return its length (below PFLREF_DTOA_MAX; 0, writing nothing, when out
 * is NULL).
 *   x    [in]  a double.  JSON writers pass finite ones only (JSON has no
 *              text for the others); NaN and ±Inf, which a diverged run's
 *              trace may print, get Python's "nan", "inf", "-inf", which
 *              are not JSON numbers.
 *   out  [out] PFLREF_DTOA_MAX characters.
 * Pure: no allocation, no state, no locale (the decimal point is '.'). */
size_t pflref_dtoa(double x, char out[PFLREF_DTOA_MAX]);

#ifdef __cplusplus
}
#endif
#endif
