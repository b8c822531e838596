# cosine_3: cosine similarity ⟨u, v⟩ / (‖u‖ ‖v‖) of two 3-vectors (CFL, eq. 11), before its clip to [−1, 1]
# C: `pflref_cluster_similarity` (`ref/engine/cluster.c`): `dot += u * v; na += u * u; nb += v * v`, `dot / (sqrt(na) * sqrt(nb))`
# ranges: u, v the vectors scaled by 2^−e: |u_p|, |v_p| ≤ 1, Σu_p², Σv_p² ∈ [1/4, 3]
# bound: |fl - exact| <= 34 u (u = 2^-53)
# control: 7b-51
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
u1 = rnd(u1_);
u2 = rnd(u2_);
u3 = rnd(u3_);
v1 = rnd(v1_);
v2 = rnd(v2_);
v3 = rnd(v3_);
d1 rnd= u1 * v1;
d2 rnd= d1 + u2 * v2;
d3 rnd= d2 + u3 * v3;
n1 rnd= u1 * u1;
n2 rnd= n1 + u2 * u2;
n3 rnd= n2 + u3 * u3;
m1 rnd= v1 * v1;
m2 rnd= m1 + v2 * v2;
m3 rnd= m2 + v3 * v3;
dot = d3;
na = n3;
nb = m3;
sa = rnd(sqrt(na));
sb = rnd(sqrt(nb));
den = rnd(sa * sb);
y = rnd(dot / den);
D = u1 * v1 + u2 * v2 + u3 * v3;
NA = u1 * u1 + u2 * u2 + u3 * u3;
NB = v1 * v1 + v2 * v2 + v3 * v3;
DEN = sqrt(NA) * sqrt(NB);
Y = D / DEN;
{ u1 in [-1, 1] /\ u2 in [-1, 1] /\ u3 in [-1, 1] /\ v1 in [-1, 1] /\ v2 in [-1, 1] /\ v3 in [-1, 1] /\ NA in [0.25, 3] /\ NB in [0.25, 3] /\ Y in [-1, 1] -> den in [1b-3, 1b4] /\ DEN in [1b-3, 1b4] /\ |y - Y| <= 17b-52 }
dot / den - Y -> (dot - D) / den + Y * (DEN / den - 1);
DEN / den - 1 -> -((den - DEN) / DEN) / (1 + (den - DEN) / DEN);
