#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/gen_dtoa_tables.py: the powers of 5 that Ryū needs, as a C header.

    /usr/bin/python3 tools/gen_dtoa_tables.py              rewrite ref/core/dtoa_tables.h
    /usr/bin/python3 tools/gen_dtoa_tables.py --stdout     print it instead
    /usr/bin/python3 tools/gen_dtoa_tables.py --self-test  check the helpers only

Ryū (U. Adams, "Ryū: fast float-to-string conversion", PLDI 2018) turns the
binary interval of a double into decimal with one 64 × 128-bit product per
end point: a power of 5 (or its reciprocal) kept to BITS significant bits.
This script computes those entries with Python's exact integers, then
proves, for every binary exponent a double can have, that the truncated
entries give exactly the floors ref/core/dtoa.c relies on, by the kind of
bound the paper's correctness argument uses: the error of the short
product must stay below the distance from X·a/b to the next integer (or,
for a product that is rounded down, to the integer below), whose extreme
over all X < 2^55 is found by a Euclid-like walk (min_residue) instead of
trying every X.  It stops with a message if any check fails, so a header
it writes is a proved one.
tests/test_dtoa.c reruns it with --stdout and compares with the committed
header, so the table cannot drift from its generator.

Notation (as in ref/core/dtoa.c and the paper):
  x = m2 · 2^(e2+2) with m2 < 2^53; the ends of the rounding interval and x
  are u·2^e2 < v·2^e2 < w·2^e2, 0 < u < v = 4·m2 < w = v + 2 <= M = 2^55 − 2.
  e2 >= 0: q = max(0, ⌊e2·log10 2⌋ − 1), and for X in {u, v, w}
           ⌊X·2^e2 / 10^q⌋ = ⌊X·2^(e2−q) / 5^q⌋ = ⌊X·T / 2^j⌋,
           T = POW5_INV[q] = ⌊2^k / 5^q⌋ + 1, k = BITS + bits(5^q) − 1,
           j = k + q − e2.
  e2 <  0: q = max(0, ⌊−e2·log10 5⌋ − 1), i = −e2 − q, and
           ⌊X·2^e2 / 10^(q+e2)⌋ = ⌊X·5^i / 2^q⌋ = ⌊X·P / 2^j⌋,
           P = POW5[i] = 5^i to BITS bits (truncated), j = q − (bits(5^i) − BITS).
  bits(n) is the number of binary digits of n.  The C code computes the
  floors of logarithms with the integer approximations below; this script
  checks them over every exponent it needs.
"""
import math
import os
import random
import sys
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "ref", "core", "dtoa_tables.h")

# Significant bits of each table entry: the paper's choice for doubles.  The
# checks below fail if it is too small for any exponent.
BITS = 125
# IEEE 754 binary64.
MANTISSA_BITS = 52
EXPONENT_MAX = 2046            # largest biased exponent of a finite double
BIAS = 1023
# The largest u, v or w: w = 4·m2 + 2 with m2 <= 2^53 − 1.
M = (1 << 55) - 2

# The integer approximations of ⌊e·log10 2⌋, ⌊e·log10 5⌋ and bits(5^e) =
# ⌊e·log2 5⌋ + 1 the C code uses: ⌊e·C / 2^S⌋ (+ 1).  Checked over
# 0 <= e <= LOG_RANGE, more than any exponent the conversion meets (|e2| <=
# 1076, q <= 751).
LOG10_2 = (78913, 18)
LOG10_5 = (732923, 20)
LOG2_5 = (1217359, 19)
LOG_RANGE = 1650


def e2_of(biased):
    """e2 of a double with this biased exponent (x = m2·2^(e2+2))."""
    return (1 if biased == 0 else biased) - BIAS - MANTISSA_BITS - 2


def floor_log10_pow2(e):
    """⌊e·log10 2⌋ exactly: the digits of 2^e, less one."""
    return len(str(1 << e)) - 1


def floor_log10_pow5(e):
    return len(str(5 ** e)) - 1


def pow5_bits(e):
    return (5 ** e).bit_length()


def approx(c_s, e):
    c, s = c_s
    return (e * c) >> s


def check_logs():
    for e in range(LOG_RANGE + 1):
        assert approx(LOG10_2, e) == floor_log10_pow2(e), ("log10 2", e)
        assert approx(LOG10_5, e) == floor_log10_pow5(e), ("log10 5", e)
        assert approx(LOG2_5, e) + 1 == pow5_bits(e), ("log2 5", e)


def min_residue(a, b, n):
    """min of (a·m mod b) over 1 <= m <= n, for 0 < a < b, gcd(a, b) = 1
    and n < b (so no residue is 0).

    The record minima of a·m mod b as m grows are the continued-fraction
    (Stern–Brocot) steps of a/b: keep the best residue from below, a·x_lo ≡
    r_lo, and from above, a·x_hi ≡ −r_hi (mod b); adding x_hi to x_lo lowers
    r_lo by r_hi, and the other way round.  Each batch of equal steps is one
    Euclid division, cut where m would pass n."""
    x_lo, r_lo = 1, a          # a·1 ≡ a
    x_hi, r_hi = 0, b          # a·0 ≡ 0 ≡ −b
    while True:
        if r_lo > r_hi:
            k = min((r_lo - 1) // r_hi, (n - x_lo) // x_hi)
            if k == 0:
                return r_lo
            x_lo, r_lo = x_lo + k * x_hi, r_lo - k * r_hi
        else:
            k = (r_hi - 1) // r_lo
            if k == 0 or x_hi + x_lo > n:
                return r_lo    # every later record below lies past n
            x_hi, r_hi = x_hi + k * x_lo, r_hi - k * r_lo


def self_test():
    """min_residue against the definition on small cases."""
    rng = random.Random(20180611)
    for _ in range(3000):
        b = rng.randint(2, 400)
        a = rng.randint(1, b - 1)
        if math.gcd(a, b) != 1:
            continue
        n = rng.randint(1, b - 1)
        want = min(a * m % b for m in range(1, n + 1))
        got = min_residue(a, b, n)
        assert got == want, (a, b, n, got, want)


def pow5_inv_entry(q):
    k = BITS + pow5_bits(q) - 1
    return (1 << k) // 5 ** q + 1, k


def pow5_entry(i):
    s = pow5_bits(i) - BITS
    p = 5 ** i >> s if s >= 0 else 5 ** i << -s
    return p, s


def check_positive(e2):
    """e2 >= 0: ⌊X·T/2^j⌋ = ⌊X·2^(e2−q)/5^q⌋ for every 0 < X <= M.

    X·T/2^j = X·2^(e2−q)/5^q + X·δ/2^j with δ = T − 2^k/5^q in (0, 1]: the
    floor is kept when the fractional part, (X·a mod 5^q)/5^q with a =
    2^(e2−q) mod 5^q, plus X·δ/2^j stays below 1."""
    q = max(0, approx(LOG10_2, e2) - 1)
    t, k = pow5_inv_entry(q)
    j = k + q - e2
    b = 5 ** q
    delta = Fraction(t) - Fraction(1 << k, b)
    assert 0 < delta <= 1
    if b <= M:
        r_max = b - 1          # every residue occurs, or may
    else:
        a = pow(2, e2 - q, b)
        r_max = b - min_residue(b - a, b, M)
    assert Fraction(r_max, b) + M * delta / (1 << j) < 1, ("POW5_INV", e2, q)
    biggest = M * (1 << (e2 - q)) // b
    return q, j, biggest


def check_negative(e2):
    """e2 < 0: ⌊X·P/2^j⌋ = ⌊X·5^i/2^q⌋ for every 0 < X <= M.

    With 5^i = P·2^s + r (0 <= r < 2^s; r = 0 when the entry is exact),
    X·P/2^j = (X·5^i − X·r)/2^q: the floor is kept when X·r never exceeds
    X·5^i mod 2^q, which holds when r = 0, or when 2^q > M (no residue is
    0) and the smallest residue is at least M·r."""
    q = max(0, approx(LOG10_5, -e2) - 1)
    i = -e2 - q
    p, s = pow5_entry(i)
    j = q - s
    r = 5 ** i - (p << s) if s >= 0 else 0
    if r != 0:
        b = 1 << q
        assert b > M, ("POW5", e2, "an inexact entry where X·5^i/2^q can be an integer")
        assert min_residue(5 ** i % b, b, M) >= M * r, ("POW5", e2, i)
    biggest = M * 5 ** i >> q
    return q, i, j, biggest


def tables():
    """(POW5_INV, POW5), each proved sufficient for every double."""
    check_logs()
    q_max = i_max = 0
    for biased in range(EXPONENT_MAX + 1):
        e2 = e2_of(biased)
        if e2 >= 0:
            q, j, biggest = check_positive(e2)
            q_max = max(q_max, q)
        else:
            q, i, j, biggest = check_negative(e2)
            i_max = max(i_max, i)
        # the C product keeps 128 bits and shifts by j − 64 in [1, 63]
        assert 64 < j < 128, ("shift", e2, j)
        assert biggest < 1 << 64, ("64-bit quotient", e2)
    inv = [pow5_inv_entry(q)[0] for q in range(q_max + 1)]
    pos = [pow5_entry(i)[0] for i in range(i_max + 1)]
    for t in inv + pos:
        assert t < 1 << 127
    return inv, pos


def entry(value, comment):
    lo = value & ((1 << 64) - 1)
    hi = value >> 64
    return f"    {{UINT64_C(0x{lo:016x}), UINT64_C(0x{hi:016x})}},  /* {comment} */"


def header():
    inv, pos = tables()
    out = [
        "/* SPDX-License-Identifier: GPL-3.0-or-later */",
        "/* ref/core/dtoa_tables.h: the powers of 5 of Ryū (ref/core/dtoa.c).",
        " * Written by tools/gen_dtoa_tables.py (exact integers), which also proves",
        " * that these truncated entries give the exact floors dtoa.c needs for",
        " * every double; tests/test_dtoa.c reruns it and compares.  Do not edit.",
        " * Each entry is {low 64 bits, high 64 bits}. */",
        "#ifndef PFLREF_CORE_DTOA_TABLES_H",
        "#define PFLREF_CORE_DTOA_TABLES_H",
        "",
        "#include <stdint.h>",
        "",
        "/* Significant bits of every entry. */",
        f"#define PFLREF_DTOA_POW5_BITS {BITS}",
        "",
        "/* ⌊e·C/2^S⌋ = ⌊e·log10 2⌋, ⌊e·log10 5⌋, ⌊e·log2 5⌋, checked by the",
        f" * generator for 0 <= e <= {LOG_RANGE}. */",
        f"#define PFLREF_DTOA_LOG10_2_C {LOG10_2[0]}",
        f"#define PFLREF_DTOA_LOG10_2_S {LOG10_2[1]}",
        f"#define PFLREF_DTOA_LOG10_5_C {LOG10_5[0]}",
        f"#define PFLREF_DTOA_LOG10_5_S {LOG10_5[1]}",
        f"#define PFLREF_DTOA_LOG2_5_C {LOG2_5[0]}",
        f"#define PFLREF_DTOA_LOG2_5_S {LOG2_5[1]}",
        "",
        "/* POW5_INV[q] = ⌊2^k / 5^q⌋ + 1, k = BITS + bits(5^q) − 1: 2^k/5^q",
        " * rounded up (e2 >= 0). */",
        f"#define PFLREF_DTOA_POW5_INV_COUNT {len(inv)}",
        "static const uint64_t PFLREF_DTOA_POW5_INV[PFLREF_DTOA_POW5_INV_COUNT][2] = {",
    ]
    out += [entry(t, f"q = {q}") for q, t in enumerate(inv)]
    out += [
        "};",
        "",
        "/* POW5[i] = 5^i to its first BITS bits, truncated (e2 < 0). */",
        f"#define PFLREF_DTOA_POW5_COUNT {len(pos)}",
        "static const uint64_t PFLREF_DTOA_POW5[PFLREF_DTOA_POW5_COUNT][2] = {",
    ]
    out += [entry(p, f"i = {i}") for i, p in enumerate(pos)]
    out += ["};", "", "#endif", ""]
    return "\n".join(out)


def main(argv):
    if argv[1:] not in ([], ["--stdout"], ["--self-test"]):
        print("usage: gen_dtoa_tables.py [--stdout | --self-test]", file=sys.stderr)
        return 2
    self_test()
    if argv[1:] == ["--self-test"]:
        print("gen_dtoa_tables: self-test ok")
        return 0
    text = header()
    if argv[1:] == ["--stdout"]:
        sys.stdout.write(text)
    else:
        with open(HEADER, "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote", os.path.relpath(HEADER, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
