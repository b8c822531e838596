#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/sampling/record_numpy_choice.py: record sampling goldens for
tests/test_sampler.c and tests/test_schedule.c.

Provenance: `independent`.  Every value below comes from numpy, never from
pflref:

  choice        numpy.random.RandomState(seed).choice(N, m, replace=False),
                exactly as numpy returns it (the sampler's order).
  permutation   numpy.random.RandomState(seed).permutation(N).
  permutation_tail  its last K entries, for N past 2^16: the entries the
                first Fisher-Yates steps (bounds near N) fix directly.
  gsl_choose    GSL's gsl_ran_choose (Knuth's Algorithm S) replayed in
                Python from numpy's raw mt19937 stream.
  gsl_shuffle   GSL's gsl_ran_shuffle (Fisher-Yates from the top with
                gsl_rng_uniform_int) replayed the same way.
  gsl_gaussian  GSL's gsl_ran_gaussian (polar Box-Muller) replayed the same
                way.
  gsl_uniform   scale * (2u - 1) with u = GSL's gsl_rng_uniform.

The replays use RandomState(seed)._bit_generator.random_raw(), the raw
32-bit mt19937 stream, which for 1 <= seed <= 2^32 - 1 is the stream GSL's
gsl_rng_mt19937 produces after gsl_rng_set(r, seed) (both use the reference
init_genrand).  The GSL formulas are those of GSL 2.7.1 (randist/shuffle.c,
randist/gauss.c, rng/mt.c, gsl_rng.h), written out below.

Run (Debian's numpy; the file is frozen, regenerating it is a reviewed act):
    /usr/bin/python3 golden/sampling/record_numpy_choice.py \
        > golden/sampling/numpy_choice.txt
"""
import math
import random
import sys

import numpy as np

SEED_MAX = 2**32 - 1
TWO32 = 4294967296.0


class RawStream:
    """The raw 32-bit mt19937 outputs of RandomState(seed), one at a time."""

    def __init__(self, seed):
        self.bitgen = np.random.RandomState(seed)._bit_generator

    def get(self):
        return int(self.bitgen.random_raw())

    def uniform(self):  # gsl_rng_uniform for mt19937: raw / 2^32
        return self.get() / TWO32

    def uniform_pos(self):  # gsl_rng_uniform_pos: uniform, rejecting 0
        while True:
            u = self.uniform()
            if u != 0.0:
                return u

    def uniform_int(self, n):  # gsl_rng_uniform_int(r, n), 1 <= n <= 2^32-1
        scale = SEED_MAX // n
        while True:
            k = self.get() // scale
            if k < n:
                return k


def gsl_choose(seed, N, m):
    """gsl_ran_choose over 0..N-1: keep i when (N - i) u < m - j."""
    r = RawStream(seed)
    out = []
    i = 0
    while i < N and len(out) < m:
        if (N - i) * r.uniform() < m - len(out):
            out.append(i)
        i += 1
    return out


def gsl_shuffle(seed, n):
    """gsl_ran_shuffle of 0..n-1: for i = n-1..1, swap(i, uniform_int(i+1))."""
    r = RawStream(seed)
    a = list(range(n))
    for i in range(n - 1, 0, -1):
        j = r.uniform_int(i + 1)
        a[i], a[j] = a[j], a[i]
    return a


def gsl_gaussian(seed, sd, n):
    """n calls of gsl_ran_gaussian(r, sd), the polar Box-Muller method."""
    r = RawStream(seed)
    out = []
    for _ in range(n):
        while True:
            x = -1.0 + 2.0 * r.uniform_pos()
            y = -1.0 + 2.0 * r.uniform_pos()
            r2 = x * x + y * y
            if not (r2 > 1.0 or r2 == 0.0):
                break
        out.append(sd * y * math.sqrt(-2.0 * math.log(r2) / r2))
    return out


def gsl_uniform(seed, scale, n):
    r = RawStream(seed)
    return [scale * (2.0 * r.uniform() - 1.0) for _ in range(n)]


def ints(v):
    return " ".join(str(int(x)) for x in v)


def floats(v):
    return " ".join(repr(float(x)) for x in v)


def choice_cases():
    """A few hundred (seed, N, m), fixed by a seeded Python generator."""
    pick = random.Random(20240521)
    seeds = [1, 2, 3, 7, 42, 4357, 123456789, 2**31 - 1, 2**31, 2**31 + 1,
             SEED_MAX - 2, SEED_MAX - 1, SEED_MAX]
    seeds += [pick.randint(1, SEED_MAX) for _ in range(12)]
    sizes = [1, 2, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17, 31, 32, 33, 64, 100,
             255, 256, 257, 1000, 1023, 1024, 1025, 2048, 3000, 4096, 4097]
    cases = [(42, 10, 1), (42, 10, 3), (42, 10, 5), (42, 10, 10)]
    for N in sizes:
        for _ in range(9):
            seed = pick.choice(seeds)
            r = pick.random()
            if r < 0.15:
                m = 1
            elif r < 0.25:
                m = N
            else:
                m = pick.randint(1, min(N, 40))
            cases.append((seed, N, m))
    for seed in seeds:  # every seed, incl. those near 2^32 - 1, with m = N
        cases.append((seed, 50, 50))
        cases.append((seed, 1, 1))
    cases.append((SEED_MAX, 4096, 4096))
    # Populations past 2^16 and 2^17, where the masks of random_interval
    # need every shift of the bit smear.
    cases += [(42, 70000, 5), (12345, 65537, 10), (SEED_MAX, 100000, 3),
              (7, 131073, 8)]
    return cases


def main():
    w = sys.stdout.write
    w("# Sampling goldens, recorded with numpy %s (Python %s).\n"
      % (np.__version__, sys.version.split()[0]))
    w("# Command: /usr/bin/python3 golden/sampling/record_numpy_choice.py"
      " > golden/sampling/numpy_choice.txt\n")
    w("# Provenance: independent (numpy; GSL formulas replayed on numpy's"
      " raw mt19937 stream).\n")
    w("# Lines (ids 0-based, values after the colon):\n")
    w("#   choice SEED N M : RandomState(SEED).choice(N, M, replace=False)\n")
    w("#   permutation SEED N : RandomState(SEED).permutation(N)\n")
    w("#   permutation_tail SEED N K : RandomState(SEED).permutation(N)[-K:]\n")
    w("#   gsl_choose SEED N M : gsl_ran_choose on mt19937 seeded SEED\n")
    w("#   gsl_shuffle SEED N : gsl_ran_shuffle of 0..N-1\n")
    w("#   gsl_gaussian SEED SD COUNT : COUNT gsl_ran_gaussian(r, SD)\n")
    w("#   gsl_uniform SEED SCALE COUNT : COUNT SCALE*(2*gsl_rng_uniform-1)\n")
    for seed, N, m in choice_cases():
        drawn = np.random.RandomState(seed).choice(N, m, replace=False)
        w("choice %d %d %d : %s\n" % (seed, N, m, ints(drawn)))
    for seed, N in [(42, 10), (1, 1), (7, 2), (SEED_MAX, 33), (2**31, 300)]:
        w("permutation %d %d : %s\n"
          % (seed, N, ints(np.random.RandomState(seed).permutation(N))))
    for seed, N in [(42, 65537), (3, 65537), (SEED_MAX, 65537),
                    (42, 131073), (99, 131073), (2**31, 262145)]:
        tail = np.random.RandomState(seed).permutation(N)[-24:]
        w("permutation_tail %d %d %d : %s\n" % (seed, N, len(tail), ints(tail)))
    pick = random.Random(7)
    gsl_cases = [(42, 10, 1), (42, 10, 3), (42, 10, 5), (42, 10, 10)]
    for seed in [43, 44, 45, 46, 47, 48, 49, 50]:
        gsl_cases.append((seed, 10, 3))
    for _ in range(40):
        N = pick.randint(1, 300)
        gsl_cases.append((pick.randint(1, SEED_MAX), N, pick.randint(1, N)))
    gsl_cases.append((SEED_MAX, 20, 7))
    for seed, N, m in gsl_cases:
        w("gsl_choose %d %d %d : %s\n" % (seed, N, m, ints(gsl_choose(seed, N, m))))
    shuffle_cases = [(s, 10) for s in range(40, 52)]
    shuffle_cases += [(s, 5) for s in range(40, 52)]
    shuffle_cases += [(1, 1), (3, 2), (SEED_MAX, 17), (123456789, 1000)]
    for seed, n in shuffle_cases:
        w("gsl_shuffle %d %d : %s\n" % (seed, n, ints(gsl_shuffle(seed, n))))
    for seed, sd, n in [(42, 1.0, 8), (7, 2.385, 25), (SEED_MAX, 0.731, 10)]:
        w("gsl_gaussian %d %r %d : %s\n" % (seed, sd, n, floats(gsl_gaussian(seed, sd, n))))
    for seed, scale, n in [(42, 1.0, 8), (11, 0.0625, 12), (SEED_MAX, 3.7, 5)]:
        w("gsl_uniform %d %r %d : %s\n" % (seed, scale, n, floats(gsl_uniform(seed, scale, n))))


if __name__ == "__main__":
    main()
