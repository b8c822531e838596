# sgd_step: SGD step x ← x − η g (one entry)
# C: `pflref_blocks_step` (`ref/engine/sgd.c`): `x[p] -= step * g[p]`
# ranges: |x|, |g| ≤ 1, 0 ≤ η ≤ 1
# bound: |fl - exact| <= 1.5 u (u = 2^-53)
# control: 21b-57
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
x = rnd(x_);
g = rnd(g_);
eta = rnd(eta_);
y rnd= x - eta * g;
Y = x - eta * g;
{ x in [-1, 1] /\ g in [-1, 1] /\ eta in [0, 1] -> |y - Y| <= 3b-54 }
