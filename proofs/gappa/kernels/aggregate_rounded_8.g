# aggregate_rounded_8: weighted aggregation Σ c_i w_i, K = 8, against the exact weights q_i ∈ [0, 1] (n_k/m_t, n_k/n, 1/m), of which the C holds c_i = fl(q_i)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: 0 ≤ q_i ≤ 1, |w_i| ≤ 1
# bound: |fl - exact| <= 29 u (u = 2^-53)
# control: 25b-53
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
c1 = rnd(q1);
c2 = rnd(q2);
c3 = rnd(q3);
c4 = rnd(q4);
c5 = rnd(q5);
c6 = rnd(q6);
c7 = rnd(q7);
c8 = rnd(q8);
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
A = q1 * w1 + q2 * w2 + q3 * w3 + q4 * w4 + q5 * w5 + q6 * w6 + q7 * w7 + q8 * w8;
{ q1 in [0, 1] /\ q2 in [0, 1] /\ q3 in [0, 1] /\ q4 in [0, 1] /\ q5 in [0, 1] /\ q6 in [0, 1] /\ q7 in [0, 1] /\ q8 in [0, 1] /\ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] /\ w4 in [-1, 1] /\ w5 in [-1, 1] /\ w6 in [-1, 1] /\ w7 in [-1, 1] /\ w8 in [-1, 1] -> |a8 - A| <= 29b-53 }
