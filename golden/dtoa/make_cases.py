#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test cases for the shortest round-trip text of a double (pflref_dtoa,
ref/core/dtoa.c; docs/formats.md, "Doubles on output").

Each case is a double, given by its IEEE 754 bits, and the text Python's
repr() writes for it.  CPython's repr is an implementation independent of
pflref's (David Gay's correctly rounded conversion, mode 0: the shortest
digits that read back, the nearest of them, ties to even; fixed notation
for 1e-4 <= |x| < 1e16).  The cases that are picked by a property (exact
ties, near half-way points, 17 digits) are checked for it here in exact
rational arithmetic (fractions.Fraction), independently of repr.

    /usr/bin/python3 golden/dtoa/make_cases.py [OUTDIR]

writes cases.json (format pflref-dtoa-cases/1), one case per line.  The
draws use a fixed seed, so the file is the same on every run
(golden/regenerate.sh compares it).
"""
import json
import math
import os
import random
import struct
import sys
from decimal import Decimal
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20180611
EXP_ALL_ONES = 0x7FF

assert sys.float_repr_style == "short", "this Python's repr is not the shortest form"


def bits_of(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def double_of(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def finite(b):
    return (b >> 52) & EXP_ALL_ONES != EXP_ALL_ONES


def next_up(b):
    """The bits of the next double towards +inf (b >= 0 positive doubles)."""
    return b + 1


def shortest_unit(x):
    """The place value of the last digit of repr(x): repr(x) = k·unit."""
    return Fraction(10) ** Decimal(repr(x)).normalize().as_tuple().exponent


def neighbours_at(x, unit):
    """The multiples of unit just below (or at) and above |x|, exactly."""
    X = abs(Fraction(x))
    lo = (X // unit) * unit
    return X, lo, lo + unit


def reads_back(value, x):
    return float(value) == abs(x)   # float(Fraction) rounds correctly


def is_exact_tie(x):
    """|x| lies exactly half-way between the two shortest candidates, and both
    read back to x: the case where 'nearest' needs 'ties to even'."""
    unit = shortest_unit(x)
    X, lo, hi = neighbours_at(x, unit)
    return X - lo == hi - X and reads_back(lo, x) and reads_back(hi, x)


def half_way_distance(x):
    """|x| − the midpoint of its two shortest candidates, in units of the
    last digit, when both read back; None otherwise."""
    unit = shortest_unit(x)
    X, lo, hi = neighbours_at(x, unit)
    if X == lo or not (reads_back(lo, x) and reads_back(hi, x)):
        return None
    return (X - (lo + hi) / 2) / unit


def digit_count(x):
    return len(Decimal(repr(x)).normalize().as_tuple().digits)


# ---- the groups -------------------------------------------------------------

def zeros(rng):
    return [0, 1 << 63]


def subnormals(rng):
    out = list(range(1, 65))                         # 5e-324 and up
    out += [0x000FFFFFFFFFFFFF - k for k in range(16)]   # the largest
    out += [1 << k for k in range(52)]               # 2^-1074 .. 2^-1023
    out += [rng.randrange(1, 1 << 52) for _ in range(200)]
    return out


def normal_bounds(rng):
    min_normal = 0x0010000000000000
    max_double = 0x7FEFFFFFFFFFFFFF
    return ([min_normal + k for k in range(-3, 8)]
            + [max_double - k for k in range(12)])


def powers_of_two(rng):
    """Every 2^e, and for every third e the doubles on either side: below a
    power of two the gap is half the gap above (an asymmetric interval)."""
    out = []
    for e in range(-1074, 1024):
        b = bits_of(math.ldexp(1.0, e))
        out.append(b)
        if e % 3 == 0 and b > 1:
            out += [b - 1, next_up(b)]
    return out


def powers_of_ten(rng):
    """10^k for every k a double can hold, as read by strtod, and for every
    other k the doubles on either side."""
    out = []
    for k in range(-323, 309):
        b = bits_of(float("1e%d" % k))
        out += [b - 1, b, next_up(b)] if k % 2 == 0 else [b]
    return [b for b in out if b > 0 and finite(b)]


def notation_switch(rng):
    """Around the fixed/exponent boundaries of repr: 1e16 and 1e-4 (and
    1e15, 1e-5), integers near 2^53 and 2^54."""
    out = []
    for s in ("1e16", "1e15", "1e17", "1e-4", "1e-5", "1e-3",
              "9999999999999998", "9999999999999999", "0.0001", "0.00009999999999999999",
              "1234567890123456.7", "123456789012345.67", "0.00012345678901234567"):
        b = bits_of(float(s))
        out += [b + k for k in range(-6, 7)]
    for p in (53, 54):
        for k in range(-24, 25):
            out.append(bits_of(float(2 ** p + k)))
    return out


def exact_ties(rng):
    """Doubles exactly half-way between their two shortest candidates, both
    valid (N + 1/4, N + 3/4 in [2^49, 2^51); N + odd/8 in [2^45, 2^48),
    scaled by powers of two and ten; checked exactly)."""
    out = []
    tries = 0
    while len(out) < 300 and tries < 200000:
        tries += 1
        B = rng.randint(44, 51)
        n = rng.randrange(2 ** B, 2 ** (B + 1))
        x = n + rng.choice([1, 3, 5, 7]) / 8 if B < 49 else n + rng.choice([1, 3]) / 4
        if is_exact_tie(x):
            out.append(bits_of(x))
    assert len(out) == 300, "too few exact ties found"
    return out


def near_half_way(rng):
    """Doubles whose two shortest candidates both read back and lie almost
    equally far (within a tenth of the last digit; the closest ones kept
    first): the rounding of the last digit decides."""
    found = []
    for _ in range(40000):
        k = rng.randint(-300, 300)
        text = "%d.%015d5e%d" % (rng.randint(8, 9), rng.randrange(10 ** 15), k)
        b = bits_of(float(text))
        for c in (b - 1, b, b + 1):
            x = double_of(c)
            if not finite(c) or x == 0:
                continue
            d = half_way_distance(x)
            if d is not None and 0 < abs(d) < Fraction(1, 10):
                found.append((abs(d), c))
    found.sort()
    assert len(found) >= 400, "too few near half-way cases found"
    return [c for _, c in found[:400]]


def short_decimals(rng):
    """Numbers people type: 1 to 6 digits at any exponent (0.1, 2.385)."""
    out = []
    while len(out) < 600:
        nd = rng.randint(1, 6)
        x = float("%de%d" % (rng.randrange(10 ** (nd - 1), 10 ** nd), rng.randint(-330, 310)))
        if math.isfinite(x) and x != 0:
            out.append(bits_of(x))
    return out


def seventeen_digits(rng):
    """Doubles that need all 17 digits."""
    out = []
    while len(out) < 200:
        b = rng.getrandbits(63)
        if finite(b) and b != 0 and digit_count(double_of(b)) == 17:
            out.append(b)
    return out


def random_bits(rng):
    """Uniform bit patterns (NaN and infinities redrawn), either sign."""
    out = []
    while len(out) < 1500:
        b = rng.getrandbits(64)
        if finite(b):
            out.append(b)
    return out


GROUPS = [
    ("zeros", "0.0 and -0.0", zeros),
    ("subnormals", "the smallest, the largest, powers of two and random ones", subnormals),
    ("normal bounds", "the smallest normal and the largest double, with neighbours", normal_bounds),
    ("powers of two", powers_of_two.__doc__, powers_of_two),
    ("powers of ten", powers_of_ten.__doc__, powers_of_ten),
    ("notation switch", notation_switch.__doc__, notation_switch),
    ("exact ties", exact_ties.__doc__, exact_ties),
    ("near half-way", near_half_way.__doc__, near_half_way),
    ("short decimals", short_decimals.__doc__, short_decimals),
    ("seventeen digits", seventeen_digits.__doc__, seventeen_digits),
    ("random bits", random_bits.__doc__, random_bits),
]


def one_line(doc):
    return " ".join(doc.split())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    rng = random.Random(SEED)
    groups = []
    total = 0
    for name, why, make in GROUPS:
        seen, cases = set(), []
        for b in make(rng):
            assert finite(b), (name, hex(b))
            if b in seen:
                continue
            seen.add(b)
            x = double_of(b)
            if name == "exact ties":
                # Python keeps the even last digit of the two
                assert int(repr(x).replace(".", "")[-1]) % 2 == 0, repr(x)
            cases.append((b, repr(x)))
        total += len(cases)
        groups.append((name, one_line(why), cases))
    lines = [
        "{",
        ' "format": "pflref-dtoa-cases/1",',
        ' "description": ' + json.dumps(
            "The shortest round-trip text of a double (pflref_dtoa, "
            "docs/formats.md): for each case [bits, text], the double whose "
            "IEEE 754 bits are the 16 hex digits prints as text.") + ",",
        ' "generator": "golden/dtoa/make_cases.py (fixed seed)",',
        ' "provenance": ' + json.dumps(
            "independent: CPython's repr(float) (David Gay's correctly "
            "rounded shortest conversion), not pflref's code; the exact ties "
            "and near half-way cases checked in exact rational arithmetic") + ",",
        ' "count": %d,' % total,
        ' "groups": [',
    ]
    for g, (name, why, cases) in enumerate(groups):
        lines.append('  {"name": %s, "why": %s, "cases": [' % (json.dumps(name), json.dumps(why)))
        for k, (b, text) in enumerate(cases):
            comma = "," if k + 1 < len(cases) else ""
            lines.append('   ["%016x", %s]%s' % (b, json.dumps(text), comma))
        lines.append("  ]}" + ("," if g + 1 < len(groups) else ""))
    lines += [" ]", "}", ""]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        f.write("\n".join(lines))
    print("wrote", total, "dtoa cases")


if __name__ == "__main__":
    main()
