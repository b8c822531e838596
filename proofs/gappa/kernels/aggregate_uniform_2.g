# aggregate_uniform_2: weighted aggregation Σ c_i w_i, K = 2, against the exact uniform weight 1/2, of which the C holds fl(1/2)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: |w_i| ≤ 1
# bound: |fl - exact| <= 0.875 u (u = 2^-53)
# control: 3b-55
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
q = 1 / 2;
c = rnd(q);
w1 = rnd(w1_);
w2 = rnd(w2_);
a1 rnd= c * w1;
a2 rnd= a1 + c * w2;
A = q * w1 + q * w2;
{ w1 in [-1, 1] /\ w2 in [-1, 1] -> |a2 - A| <= 7b-56 }
