# aggregate_rounded_3: weighted aggregation Σ c_i w_i, K = 3, against the exact weights q_i ∈ [0, 1] (n_k/m_t, n_k/n, 1/m), of which the C holds c_i = fl(q_i)
# C: `pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` from acc = 0 (`pflref_round_begin`), i ascending
# ranges: 0 ≤ q_i ≤ 1, |w_i| ≤ 1
# bound: |fl - exact| <= 6 u (u = 2^-53)
# control: 21b-55
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
c1 = rnd(q1);
c2 = rnd(q2);
c3 = rnd(q3);
w1 = rnd(w1_);
w2 = rnd(w2_);
w3 = rnd(w3_);
a1 rnd= c1 * w1;
a2 rnd= a1 + c2 * w2;
a3 rnd= a2 + c3 * w3;
A = q1 * w1 + q2 * w2 + q3 * w3;
{ q1 in [0, 1] /\ q2 in [0, 1] /\ q3 in [0, 1] /\ w1 in [-1, 1] /\ w2 in [-1, 1] /\ w3 in [-1, 1] -> |a3 - A| <= 3b-52 }
