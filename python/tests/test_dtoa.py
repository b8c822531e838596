# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref_dtoa (pflref/dtoa.h) against this Python's own repr, live: random
bit patterns from a fixed seed, short decimals and every power of two and
ten.  The frozen cases are golden/dtoa/cases.json (tests/test_dtoa.c)."""
import ctypes
import math
import random
import struct

from pflref import _lib

# PFLREF_DTOA_MAX of pflref/dtoa.h
DTOA_MAX = 32
DRAWS = 200000


def printer():
    fn = _lib.library().pflref_dtoa
    fn.argtypes = [ctypes.c_double, ctypes.c_char_p]
    fn.restype = ctypes.c_size_t
    buf = ctypes.create_string_buffer(DTOA_MAX)

    def text(x):
        n = fn(x, buf)
        return buf.raw[:n].decode("ascii")
    return text


def double_of(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def doubles(rng):
    for _ in range(DRAWS):
        x = double_of(rng.getrandbits(64))
        if math.isfinite(x):
            yield x
    for _ in range(DRAWS // 10):
        x = float("%de%d" % (rng.randrange(1, 10 ** rng.randint(1, 17)),
                             rng.randint(-330, 310)))
        if math.isfinite(x):
            yield x
    for e in range(-1074, 1024):
        yield math.ldexp(1.0, e)
    for k in range(-323, 309):
        yield float("1e%d" % k)


def test_dtoa_is_python_repr():
    text = printer()
    rng = random.Random(20180611)
    wrong = [(x, text(x)) for x in doubles(rng) if text(x) != repr(x)]
    assert not wrong, "%d differ from repr, first: %r" % (
        len(wrong), [(repr(x), t) for x, t in wrong[:5]])


def test_dtoa_specials_and_zeros():
    text = printer()
    assert [text(x) for x in (0.0, -0.0, math.inf, -math.inf, math.nan)] == \
        ["0.0", "-0.0", "inf", "-inf", "nan"]
