/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/dtoa.c: the shortest decimal text that reads back to a double,
 * laid out as Python's repr (pflref/dtoa.h).
 *
 * Reference: Ulf Adams, "Ryū: fast float-to-string conversion", PLDI 2018,
 * doi:10.1145/3192366.3192369.  The paper builds the conversion in five
 * steps, and this file follows them in order:
 *   Step 1  decode the double, normal and subnormal alike: x = m2·2^(e2+2);
 *   Step 2  the interval of outputs that read back to x: u·2^e2 < v·2^e2 <
 *           w·2^e2 with v = 4·m2 (x itself) and u, w the half-way points to
 *           the neighbouring doubles;
 *   Step 3  the same three numbers in a decimal base, a = ⌊u·2^e2/10^e10⌋,
 *           b, c likewise, each from one product with a power of 5 kept to
 *           125 bits (ref/core/dtoa_tables.h);
 *   Step 4  the shortest: drop decimal digits of a, b, c together while the
 *           interval still holds a shorter number, then round b to nearest
 *           on the last digit dropped;
 *   Step 5  print (here: in Python's layout, format_repr).
 *
 * Symbols (the paper's, and the C beside them):
 *   m2, e2       m2, e2: the significand (hidden bit included) and the
 *                exponent, two bits lower than IEEE's so that the half-way
 *                points are integers
 *   u, v, w      u, v, w: the interval's ends and x, in units of 2^e2
 *   e10; a, b, c e10; a, b, c: ⌊u·2^e2/10^e10⌋, ⌊v·2^e2/10^e10⌋, and the
 *                largest valid digit string at or below w·2^e2/10^e10
 *   za, zb       za, zb: u·2^e2/10^e10 (resp. v·2^e2/10^e10) is an integer;
 *                during step 4, "every digit dropped from a (resp. before
 *                the last one dropped from b) was 0"
 *   q            q: the power of ten divided out in step 3, e10 = q (e2 >= 0)
 *                or e10 = q + e2 (e2 < 0)
 *   (mmShift)    lower_closer = 1 − mmShift: x is a power of two above the
 *                smallest normal, so the double below is half as far and
 *                u = v − 1 (else u = v − 2)
 *   (acceptBounds) accept: m2 is even, so strtod (round half to even) reads
 *                the interval's ends back to x, and they may be printed
 *
 * Deviations from the paper's reference code:
 *   a) Only the general path of step 4: the faster loop for the usual case
 *      (where za and zb cannot matter) and the shortcut for small integers
 *      are left out; they change the speed, not the digits.
 *   b) za, zb and the exclusion of an exact upper end are decided exactly
 *      for every q (a count of the factors 5, or of the trailing zero
 *      bits), where the code skips the tests in the ranges of q in which
 *      they cannot matter, each range with its own argument.
 *   c) The 128-bit products are built from 32-bit halves in ISO C
 *      (mul_64x64), with no compiler extension.
 *   d) The layout is Python's repr, not "1.5E300".
 *
 * Correctness.  Step 3 needs ⌊X·T/2^j⌋ = ⌊X·2^(e2−q)/5^q⌋ (and its e2 < 0
 * twin) for every X < 2^55 and every exponent: tools/gen_dtoa_tables.py
 * writes the tables and proves this for every e2 a double can have, with a
 * bound of the kind the paper's correctness argument uses (the extreme of
 * X·a mod b over X < 2^55, found by a Euclid-like walk).  Step 4 is exact
 * given exact a, b, c, za, zb: see shortest().  tests/test_dtoa.c compares
 * with Python's repr (golden/dtoa/cases.json) and checks, on a million
 * random bit patterns, that every text reads back and no shorter one does.
 *
 * Cost: three 64 × 128-bit products, a few dozen divisions by constants,
 * no allocation, no static state, no locale.
 */
#include <stdint.h>
#include <string.h>
#include "pflref/dtoa.h"
#include "core/dtoa_tables.h"

/* IEEE 754 binary64: 52 stored significand bits, 11 exponent bits. */
#define MANTISSA_BITS 52
#define EXPONENT_ALL_ONES 0x7ff
#define EXPONENT_BIAS 1023
/* Python's repr prints x = d.ddd·10^e in fixed notation for
 * REPR_FIXED_MIN <= e < REPR_FIXED_END, otherwise with an exponent. */
#define REPR_FIXED_MIN (-4)
#define REPR_FIXED_END 16
/* The digits of the shortest form: at most 17 for a double. */
#define DIGITS_MAX 20

static const uint64_t LOW32 = 0xffffffffu;

/* ---- integer helpers ---------------------------------------------------- */

/* ⌊e·log10 2⌋, ⌊e·log10 5⌋ and bits(5^e) = ⌊e·log2 5⌋ + 1 (the number of
 * binary digits of 5^e) for 0 <= e <= 1650, by the approximations the
 * table generator checks. */
static int log10_pow2(int e)
{
    return (int)(((uint32_t)e * PFLREF_DTOA_LOG10_2_C) >> PFLREF_DTOA_LOG10_2_S);
}

static int log10_pow5(int e)
{
    return (int)(((uint32_t)e * PFLREF_DTOA_LOG10_5_C) >> PFLREF_DTOA_LOG10_5_S);
}

static int pow5_bits(int e)
{
    return (int)(((uint32_t)e * PFLREF_DTOA_LOG2_5_C) >> PFLREF_DTOA_LOG2_5_S) + 1;
}

static int at_least_0(int n)
{
    return n > 0 ? n : 0;
}

/* 1 when 5^q divides X (X > 0). */
static int multiple_of_pow5(uint64_t X, int q)
{
    int factors = 0;
    while (X % 5 == 0) {
        X /= 5;
        factors++;
    }
    return factors >= q;
}

/* 1 when 2^q divides X (X > 0, so never for q >= 64). */
static int multiple_of_pow2(uint64_t X, int q)
{
    return q < 64 && (X & ((UINT64_C(1) << q) - 1)) == 0;
}

/* hi·2^64 + lo := a·b, from the four products of 32-bit halves
 * (schoolbook multiplication, Knuth, TAOCP vol. 2, §4.3.1). */
static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    const uint64_t a0 = a & LOW32, a1 = a >> 32;
    const uint64_t b0 = b & LOW32, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    /* the 2^32 column: three terms below 2^32 each, no overflow */
    const uint64_t mid = (p00 >> 32) + (p01 & LOW32) + (p10 & LOW32);
    *lo = (mid << 32) | (p00 & LOW32);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* ⌊X·T/2^j⌋ for a table entry T = T[1]·2^64 + T[0] (below 2^127), X < 2^55
 * and 64 < j < 128 (the generator checks j and that the quotient fits in
 * 64 bits, for every exponent). */
static uint64_t mul_shift(uint64_t X, const uint64_t T[2], int j)
{
    uint64_t lo_hi, lo_lo, hi_hi, hi_lo;
    mul_64x64(X, T[0], &lo_hi, &lo_lo);
    mul_64x64(X, T[1], &hi_hi, &hi_lo);
    /* X·T = hi_hi·2^128 + (hi_lo + lo_hi)·2^64 + lo_lo; j > 64 drops lo_lo */
    const uint64_t mid = hi_lo + lo_hi;
    const uint64_t top = hi_hi + (mid < hi_lo);   /* the carry */
    const int s = j - 64;                         /* 1 <= s <= 63 */
    return (mid >> s) | (top << (64 - s));
}

/* ---- steps 3 and 4: the decimal interval and the shortest digits -------- */

typedef struct {
    uint64_t a, b, c;  /* the interval's ends and x, in units of 10^e10  */
    int e10;
    int za, zb;        /* a·10^e10 is exactly u·2^e2; b likewise for v    */
} decimal_interval;

/* Step 3: (u, v, w)·2^e2 → a, b, c in units of 10^e10.  q keeps one
 * decimal digit more than the interval needs (the "− 1"): then step 4
 * drops at least one digit whenever b is not exact, and that digit rounds
 * b.  For X ∈ {u, v, w}:
 *   e2 >= 0: q = max(0, ⌊e2·log10 2⌋ − 1), e10 = q,
 *            X·2^e2/10^q = X·2^(e2−q)/5^q, exact iff 5^q | X;
 *   e2 <  0: q = max(0, ⌊−e2·log10 5⌋ − 1), e10 = q + e2, i = −e2 − q,
 *            X·2^e2/10^e10 = X·5^i/2^q, exact iff 2^q | X.
 * c is the largest valid digit string: w's floor, less one when w·2^e2 is
 * hit exactly but may not be printed (accept = 0). */
static decimal_interval to_decimal(uint64_t u, uint64_t v, uint64_t w, int e2,
                                   int accept)
{
    decimal_interval d;
    int w_exact;
    if (e2 >= 0) {
        const int q = at_least_0(log10_pow2(e2) - 1);
        /* T = POW5_INV[q] = ⌊2^k/5^q⌋ + 1 ≈ 2^k/5^q, so
         * X·2^(e2−q)/5^q ≈ X·T/2^(k+q−e2) */
        const int k = PFLREF_DTOA_POW5_BITS + pow5_bits(q) - 1;
        const int j = k + q - e2;
        d.e10 = q;
        d.a = mul_shift(u, PFLREF_DTOA_POW5_INV[q], j);
        d.b = mul_shift(v, PFLREF_DTOA_POW5_INV[q], j);
        d.c = mul_shift(w, PFLREF_DTOA_POW5_INV[q], j);
        d.za = multiple_of_pow5(u, q);
        d.zb = multiple_of_pow5(v, q);
        w_exact = multiple_of_pow5(w, q);
    } else {
        const int q = at_least_0(log10_pow5(-e2) - 1);
        const int i = -e2 - q;
        /* P = POW5[i] = 5^i·2^−(bits(5^i) − BITS), truncated, so
         * X·5^i/2^q ≈ X·P/2^(q − bits(5^i) + BITS) */
        const int j = q - (pow5_bits(i) - PFLREF_DTOA_POW5_BITS);
        d.e10 = q + e2;
        d.a = mul_shift(u, PFLREF_DTOA_POW5[i], j);
        d.b = mul_shift(v, PFLREF_DTOA_POW5[i], j);
        d.c = mul_shift(w, PFLREF_DTOA_POW5[i], j);
        d.za = multiple_of_pow2(u, q);
        d.zb = multiple_of_pow2(v, q);
        w_exact = multiple_of_pow2(w, q);
    }
    if (w_exact && !accept)
        d.c--;
    return d;
}

/* Step 4: the shortest digits in [a, c] and the nearest of them to x.
 * Returns the digits and sets *e10.  a may be printed only when it is
 * exact and the ends are accepted (za_ok); every digit string in (a, c] is
 * valid.
 *   1. While ⌊a/10⌋ < ⌊c/10⌋ a multiple of 10 lies in (a, c]: a shorter
 *      output exists, so drop a digit of a, b and c (⌊⌊y⌋/10⌋ = ⌊y/10⌋
 *      keeps them floors).  Keep the last digit dropped from b, and
 *      whether a stayed exact and b's earlier dropped digits were all 0.
 *   2. When a is printable, it may still end in zeros: drop them too (a ≥
 *      1 here, as a·10^e10 = u·2^e2 > 0, so this ends).
 *   3. Round b to nearest on the last digit dropped, ties to even (the
 *      digit is 5 and all below it 0); go up also when b = a and a may not
 *      be printed.  The result stays in [a, c]: the interval is symmetric
 *      about x (or narrower below it), so x in the upper half of [b, b+1)
 *      puts c ≥ b + 1. */
static uint64_t shortest(decimal_interval d, int accept, int *e10)
{
    uint64_t a = d.a, b = d.b, c = d.c;
    int za_ok = d.za && accept, zb = d.zb;
    unsigned last = 0;
    int dropped = 0;
    while (a / 10 < c / 10) {                       /* 1. */
        za_ok &= a % 10 == 0;
        zb &= last == 0;
        last = (unsigned)(b % 10);
        a /= 10;
        b /= 10;
        c /= 10;
        dropped++;
    }
    if (za_ok) {                                    /* 2. (c is done) */
        while (a % 10 == 0) {
            zb &= last == 0;
            last = (unsigned)(b % 10);
            a /= 10;
            b /= 10;
            dropped++;
        }
    }
    if (zb && last == 5 && b % 2 == 0)              /* 3. a tie: to even */
        last = 4;
    *e10 = d.e10 + dropped;
    return b + ((b == a && !za_ok) || last >= 5);
}

/* ---- step 5: Python's layout -------------------------------------------- */

/* The text of (-1)^sign · digits · 10^e10 in repr's layout (pflref/dtoa.h);
 * digits > 0 has no trailing zero (step 4 leaves none). */
static size_t format_repr(int sign, uint64_t digits, int e10, char *out)
{
    char d[DIGITS_MAX];
    int n = 0;
    for (uint64_t r = digits; r > 0; r /= 10)       /* d[0..n−1], backwards */
        d[DIGITS_MAX - 1 - n++] = (char)('0' + r % 10);
    const char *D = d + DIGITS_MAX - n;
    const int e = e10 + n - 1;                      /* x = D[0].D[1..]·10^e */
    char *p = out;
    if (sign)
        *p++ = '-';
    if (e >= REPR_FIXED_MIN && e < REPR_FIXED_END) {
        if (e < 0) {                                /* 0.000ddd */
            *p++ = '0';
            *p++ = '.';
            for (int z = 0; z < -e - 1; z++)
                *p++ = '0';
            memcpy(p, D, (size_t)n);
            p += n;
        } else if (e >= n - 1) {                    /* ddd000.0 */
            memcpy(p, D, (size_t)n);
            p += n;
            for (int z = 0; z < e - (n - 1); z++)
                *p++ = '0';
            *p++ = '.';
            *p++ = '0';
        } else {                                    /* dd.ddd */
            memcpy(p, D, (size_t)e + 1);
            p += e + 1;
            *p++ = '.';
            memcpy(p, D + e + 1, (size_t)(n - e - 1));
            p += n - e - 1;
        }
    } else {                                        /* d.ddde±XX */
        *p++ = D[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, D + 1, (size_t)n - 1);
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        const int E = e < 0 ? -e : e;
        if (E >= 100)
            *p++ = (char)('0' + E / 100);
        *p++ = (char)('0' + E / 10 % 10);
        *p++ = (char)('0' + E % 10);
    }
    *p = '\0';
    return (size_t)(p - out);
}

/* ---- the entry point ---------------------------------------------------- */

size_t pflref_dtoa(double x, char out[PFLREF_DTOA_MAX])
{
    if (out == NULL)
        return 0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int sign = (int)(bits >> 63);
    const int biased = (int)((bits >> MANTISSA_BITS) & EXPONENT_ALL_ONES);
    const uint64_t fraction = bits & ((UINT64_C(1) << MANTISSA_BITS) - 1);

    /* Special cases: NaN and ±Inf as Python names them (a diverged run's
     * trace; never in JSON), and the two zeros. */
    if (biased == EXPONENT_ALL_ONES) {
        const char *t = fraction != 0 ? "nan" : sign ? "-inf" : "inf";
        memcpy(out, t, strlen(t) + 1);
        return strlen(t);
    }
    if (biased == 0 && fraction == 0) {
        const char *t = sign ? "-0.0" : "0.0";
        memcpy(out, t, strlen(t) + 1);
        return strlen(t);
    }

    /* Step 1: x = m2·2^(e2+2), the subnormals (biased = 0) with exponent
     * 1 − bias and no hidden bit. */
    const uint64_t m2 = biased == 0
                            ? fraction
                            : fraction | (UINT64_C(1) << MANTISSA_BITS);
    const int e2 = (biased == 0 ? 1 : biased) - EXPONENT_BIAS - MANTISSA_BITS - 2;

    /* Step 2: v = x, w and u the half-way points to the doubles above and
     * below, in units of 2^e2; the one below is half as far when x is a
     * power of two above the smallest normal. */
    const int lower_closer = fraction == 0 && biased > 1;
    const uint64_t v = 4 * m2;
    const uint64_t w = v + 2;
    const uint64_t u = v - (lower_closer ? 1 : 2);
    const int accept = m2 % 2 == 0;

    /* Steps 3 to 5. */
    int e10;
    const uint64_t digits = shortest(to_decimal(u, v, w, e2, accept), accept,
                                     &e10);
    return format_repr(sign, digits, e10, out);
}
