/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/dtoa.c: TEMPORARY stand-in for the shortest round-trip
 * formatter (issue 30; replaced at merge by the real one, which keeps
 * ref/core/dtoa.h's interface).
 *
 * What it prints is exactly what the result writer printed through
 * jansson 2.14 (json_dumps with JSON_REAL_PRECISION(17); jansson's
 * jsonp_dtostr as built without its own dtoa, Debian's libjansson4
 * 2.14), so that the rewritten writer (ref/io/emit.c, ref/io/result.c)
 * can be checked byte for byte against the old one:
 *   1. snprintf "%.17g";
 *   2. when the text has neither '.' nor 'e' (and is not "inf" or "nan"),
 *      ".0" appended, so that it reads as a real: 2 -> "2.0", -0 -> "-0.0";
 *   3. in an exponent, the '+' and the leading zeros dropped:
 *      "1e+22" -> "1e22", "1.0000000000000001e-05" -> "1.0000000000000001e-5".
 * The C library is assumed to print '.' as the decimal point (pflref never
 * calls setlocale; jansson mapped a locale's point back to '.').
 * tests/test_emit.c compares it with jansson on edge cases and random
 * bit patterns.
 */
#include <stdio.h>
#include <string.h>
#include "core/dtoa.h"

size_t pflref_dtoa(double x, char out[PFLREF_DTOA_MAX])
{
    int n = snprintf(out, PFLREF_DTOA_MAX, "%.17g", x);
    if (n < 0 || n >= PFLREF_DTOA_MAX - 2) {   /* cannot happen: ≤ 24 */
        out[0] = '\0';
        return 0;
    }
    size_t len = (size_t)n;
    if (strpbrk(out, ".eni") == NULL) {        /* 2. "nan", "inf" have n, i */
        memcpy(out + len, ".0", 3);
        len += 2;
    }
    char *e = strchr(out, 'e');
    if (e != NULL) {                           /* 3. e+22 -> e22, e-05 -> e-5 */
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len + 1 - (size_t)(end - out));
            len -= (size_t)(end - start);
        }
    }
    return len;
}
