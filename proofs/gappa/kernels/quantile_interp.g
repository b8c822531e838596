# quantile_interp: type-7 quantile's interpolation q = a_(lo) + δ (a_(lo+1) − a_(lo)) (Hyndman–Fan type 7)
# C: `type7_at` (`ref/core/metrics.c`): `sorted[lo] + delta * (sorted[lo + 1] - sorted[lo])`
# ranges: |a_(lo)|, |a_(lo+1)| ≤ 1, 0 ≤ δ < 1
# bound: |fl - exact| <= 3 u (u = 2^-53)
# control: 21b-56
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
a = rnd(a_);
b = rnd(b_);
d = rnd(d_);
y rnd= a + d * (b - a);
Y = a + d * (b - a);
{ a in [-1, 1] /\ b in [-1, 1] /\ d in [0, 1] -> |y - Y| <= 3b-53 }
