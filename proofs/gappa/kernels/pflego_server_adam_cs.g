# pflego_server_adam_cs: PFLEGO's step 8 with pflego.server = adam: m ← β₁ m + (1 − β₁) ĝ, v ← β₂ v + (1 − β₂) ĝ², θ ← θ − ρ m̂ / (√v̂ + ε), m̂ = m / (1 − β₁^t), v̂ = v / (1 − β₂^t)
# C: `adam_step` (`ref/algorithms/pflego.c`): `c1 = 1.0 - pow(ADAM_B1, t + 1)`, `c2 = ...`; `m[p] = (1.0 - ADAM_B1) * ghat[p] + ADAM_B1 * m[p]`; `v[p] = (1.0 - ADAM_B2) * (ghat[p] * ghat[p]) + ADAM_B2 * v[p]`; `mhat = m[p] / c1, vhat = v[p] / c2`; `s->w[p] -= rho * mhat / (sqrt(vhat) + ADAM_EPS)`
# ranges: |θ|, |ĝ|, |m| ≤ 1, 0 ≤ v ≤ 1, the new v ∈ [2^−12, 1], 0 ≤ ρ ≤ 1/8, 0 ≤ ε ≤ 1, any t ≥ 1, β₁, β₂, ε the C's doubles, pow faithful (within one ulp), and |m̂ / (√v̂ + ε)| ≤ 8 (Cauchy–Schwarz on Adam's moments)
# bound: |fl - exact| <= 3968 u (u = 2^-53)
# control: 13b-45
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
b1 = 8106479329266893b-53;
b2 = 8998192055486251b-53;
o1 = 900719925474099b-53;
o2 = 9007199254741b-53;
eps = rnd(eps_);
rho = rnd(rho_);
w = rnd(w_);
g = rnd(g_);
m = rnd(m_);
v = rnd(v_);
pw1 = P1 + e1;
pw2 = P2 + e2;
c1 = rnd(1 - pw1);
c2 = rnd(1 - pw2);
mn rnd= o1 * g + b1 * m;
vn rnd= o2 * (g * g) + b2 * v;
mhat rnd= mn / c1;
vhat rnd= vn / c2;
sq = rnd(sqrt(vhat));
num rnd= rho * mhat;
den rnd= sq + eps;
q rnd= num / den;
y rnd= w - q;
C1 = 1 - P1;
C2 = 1 - P2;
MN = o1 * g + b1 * m;
VN = o2 * (g * g) + b2 * v;
MHAT = MN / C1;
VHAT = VN / C2;
SQ = sqrt(VHAT);
NUM = rho * MHAT;
DEN = SQ + eps;
Q = NUM / DEN;
Y = w - Q;
{ w in [-1, 1] /\ rho in [0, 0.125] /\ eps in [0, 1] /\ g in [-1, 1] /\ m in [-1, 1] /\ v in [0, 1] /\ VN in [1b-12, 1] /\ MHAT / DEN in [-8, 8] /\ P1 in [0, 8106479329266893b-53] /\ P2 in [0, 8998192055486251b-53] /\ e1 in [-1b-53, 1b-53] /\ e2 in [-1b-53, 1b-53] -> c1 in [1b-4, 1] /\ C1 in [1b-4, 1] /\ SQ in [1b-7, 32] /\ DEN in [1b-7, 64] /\ sq + eps in [1b-7, 64] /\ den in [1b-7, 64] /\ |y - Y| <= 31b-46 }
c1 - C1 -> (c1 - (1 - pw1)) - e1;
c2 - C2 -> (c2 - (1 - pw2)) - e2;
mhat - MHAT -> (mhat - mn / c1) + (mn - MN) / c1 + MN * (C1 - c1) / (c1 * C1);
(den - DEN) / DEN -> ((den - (sq + eps)) / (sq + eps)) * (1 + ((sq - SQ) / SQ) * (SQ / DEN)) + ((sq - SQ) / SQ) * (SQ / DEN);
q - Q -> (q - num / den) + (num - NUM) / den + Q * (-((den - DEN) / DEN) / (1 + (den - DEN) / DEN));
Q -> rho * (MHAT / DEN);
