# aggregate_uniform_4: weighted aggregation Σ c_i w_i, K = 4, against the exact uniform weight 1/4, of which the C holds fl(1/4)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: |w_i| ≤ 1
# bound: |fl - exact| <= 1.75 u (u = 2^-53)
# control: 3b-54
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
q = 1 / 4;
c = rnd(q);
w1 = rnd(w1_);
w2 = rnd(w2_);
w3 = rnd(w3_);
w4 = rnd(w4_);
a1 rnd= c * w1;
a2 rnd= a1 + c * w2;
a3 rnd= a2 + c * w3;
a4 rnd= a3 + c * w4;
A = q * w1 + q * w2 + q * w3 + q * w4;
{ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] /\ w4 in [-1, 1] -> |a4 - A| <= 7b-55 }
