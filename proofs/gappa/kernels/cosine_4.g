# cosine_4: cosine similarity ⟨u, v⟩ / (‖u‖ ‖v‖) of two 4-vectors (CFL, eq. 11), before its clip to [−1, 1]
# C: `pflref_cluster_similarity` (`ref/engine/cluster.c`): `dot += u * v; na += u * u; nb += v * v`, `dot / (sqrt(na) * sqrt(nb))`
# ranges: u, v the vectors scaled by 2^−e: |u_p|, |v_p| ≤ 1, Σu_p², Σv_p² ∈ [1/4, 4]
# bound: |fl - exact| <= 54 u (u = 2^-53)
# control: 23b-52
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
u1 = rnd(u1_);
u2 = rnd(u2_);
u3 = rnd(u3_);
u4 = rnd(u4_);
v1 = rnd(v1_);
v2 = rnd(v2_);
v3 = rnd(v3_);
v4 = rnd(v4_);
d1 rnd= u1 * v1;
d2 rnd= d1 + u2 * v2;
d3 rnd= d2 + u3 * v3;
d4 rnd= d3 + u4 * v4;
n1 rnd= u1 * u1;
n2 rnd= n1 + u2 * u2;
n3 rnd= n2 + u3 * u3;
n4 rnd= n3 + u4 * u4;
m1 rnd= v1 * v1;
m2 rnd= m1 + v2 * v2;
m3 rnd= m2 + v3 * v3;
m4 rnd= m3 + v4 * v4;
dot = d4;
na = n4;
nb = m4;
sa = rnd(sqrt(na));
sb = rnd(sqrt(nb));
den = rnd(sa * sb);
y = rnd(dot / den);
D = u1 * v1 + u2 * v2 + u3 * v3 + u4 * v4;
NA = u1 * u1 + u2 * u2 + u3 * u3 + u4 * u4;
NB = v1 * v1 + v2 * v2 + v3 * v3 + v4 * v4;
DEN = sqrt(NA) * sqrt(NB);
Y = D / DEN;
{ u1 in [-1, 1] /\ u2 in [-1, 1] /\ u3 in [-1, 1] /\ u4 in [-1, 1] /\ v1 in [-1, 1] /\ v2 in [-1, 1] /\ v3 in [-1, 1] /\ v4 in [-1, 1] /\ NA in [0.25, 4] /\ NB in [0.25, 4] /\ Y in [-1, 1] -> den in [1b-3, 1b4] /\ DEN in [1b-3, 1b4] /\ |y - Y| <= 27b-52 }
dot / den - Y -> (dot - D) / den + Y * (DEN / den - 1);
DEN / den - 1 -> -((den - DEN) / DEN) / (1 + (den - DEN) / DEN);
