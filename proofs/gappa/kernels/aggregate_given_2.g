# aggregate_given_2: weighted aggregation Σ c_i w_i, K = 2, against the weights as the C holds them (doubles c_i)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: 0 ≤ c_i ≤ 1, |w_i| ≤ 1
# bound: |fl - exact| <= 2 u (u = 2^-53)
# control: 7b-55
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
c1 = rnd(c1_);
c2 = rnd(c2_);
w1 = rnd(w1_);
w2 = rnd(w2_);
a1 rnd= c1 * w1;
a2 rnd= a1 + c2 * w2;
A = c1 * w1 + c2 * w2;
{ c1 in [0, 1] /\ c2 in [0, 1] /\ w1 in [-1, 1] /\ w2 in [-1, 1] -> |a2 - A| <= 1b-52 }
