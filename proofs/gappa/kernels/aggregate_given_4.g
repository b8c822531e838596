# aggregate_given_4: weighted aggregation Σ c_i w_i, K = 4, against the weights as the C holds them (doubles c_i)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: 0 ≤ c_i ≤ 1, |w_i| ≤ 1
# bound: |fl - exact| <= 7 u (u = 2^-53)
# control: 3b-52
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
c1 = rnd(c1_);
c2 = rnd(c2_);
c3 = rnd(c3_);
c4 = rnd(c4_);
w1 = rnd(w1_);
w2 = rnd(w2_);
w3 = rnd(w3_);
w4 = rnd(w4_);
a1 rnd= c1 * w1;
a2 rnd= a1 + c2 * w2;
a3 rnd= a2 + c3 * w3;
a4 rnd= a3 + c4 * w4;
A = c1 * w1 + c2 * w2 + c3 * w3 + c4 * w4;
{ c1 in [0, 1] /\ c2 in [0, 1] /\ c3 in [0, 1] /\ c4 in [0, 1] /\ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] /\ w4 in [-1, 1] -> |a4 - A| <= 7b-53 }
