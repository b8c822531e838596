# aggregate_given_8: weighted aggregation Σ c_i w_i, K = 8, against the weights as the C holds them (doubles c_i)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: 0 ≤ c_i ≤ 1, |w_i| ≤ 1
# bound: |fl - exact| <= 25 u (u = 2^-53)
# control: 21b-53
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
c1 = rnd(c1_);
c2 = rnd(c2_);
c3 = rnd(c3_);
c4 = rnd(c4_);
c5 = rnd(c5_);
c6 = rnd(c6_);
c7 = rnd(c7_);
c8 = rnd(c8_);
w1 = rnd(w1_);
w2 = rnd(w2_);
w3 = rnd(w3_);
w4 = rnd(w4_);
w5 = rnd(w5_);
w6 = rnd(w6_);
w7 = rnd(w7_);
w8 = rnd(w8_);
a1 rnd= c1 * w1;
a2 rnd= a1 + c2 * w2;
a3 rnd= a2 + c3 * w3;
a4 rnd= a3 + c4 * w4;
a5 rnd= a4 + c5 * w5;
a6 rnd= a5 + c6 * w6;
a7 rnd= a6 + c7 * w7;
a8 rnd= a7 + c8 * w8;
A = c1 * w1 + c2 * w2 + c3 * w3 + c4 * w4 + c5 * w5 + c6 * w6 + c7 * w7 + c8 * w8;
{ c1 in [0, 1] /\ c2 in [0, 1] /\ c3 in [0, 1] /\ c4 in [0, 1] /\ c5 in [0, 1] /\ c6 in [0, 1] /\ c7 in [0, 1] /\ c8 in [0, 1] /\ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] /\ w4 in [-1, 1] /\ w5 in [-1, 1] /\ w6 in [-1, 1] /\ w7 in [-1, 1] /\ w8 in [-1, 1] -> |a8 - A| <= 25b-53 }
