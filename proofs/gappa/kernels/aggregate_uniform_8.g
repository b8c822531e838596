# aggregate_uniform_8: weighted aggregation Σ c_i w_i, K = 8, against the exact uniform weight 1/8, of which the C holds fl(1/8)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: |w_i| ≤ 1
# bound: |fl - exact| <= 3.125 u (u = 2^-53)
# control: 21b-56
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
q = 1 / 8;
c = rnd(q);
w1 = rnd(w1_);
w2 = rnd(w2_);
w3 = rnd(w3_);
w4 = rnd(w4_);
w5 = rnd(w5_);
w6 = rnd(w6_);
w7 = rnd(w7_);
w8 = rnd(w8_);
a1 rnd= c * w1;
a2 rnd= a1 + c * w2;
a3 rnd= a2 + c * w3;
a4 rnd= a3 + c * w4;
a5 rnd= a4 + c * w5;
a6 rnd= a5 + c * w6;
a7 rnd= a6 + c * w7;
a8 rnd= a7 + c * w8;
A = q * w1 + q * w2 + q * w3 + q * w4 + q * w5 + q * w6 + q * w7 + q * w8;
{ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] /\ w4 in [-1, 1] /\ w5 in [-1, 1] /\ w6 in [-1, 1] /\ w7 in [-1, 1] /\ w8 in [-1, 1] -> |a8 - A| <= 25b-56 }
