# pflego_ghat_8: PFLEGO's server gradient ĝ = (I/r) Σ_{i∈I_t} α_i g_i (step 8), r = 8
# C: `client_round` (`ref/algorithms/pflego.c`): `acc[p] += a * g[p]` from acc = 0 (`pflref_round_begin`), i ascending, a = fl(N_i/N); `server_step`: `acc[p] *= scale`, scale = fl(I/r)
# ranges: |g_i| ≤ 1, I/r ∈ [1, 8] and α_i ∈ [0, 1] exact (N_i/N, or N_i/Σ_{j∈I_t} N_j under pflego.theta_weights = sampled_normalised), the C holding fl(I/r), fl(α_i)
# bound: |fl - exact| <= 304 u (u = 2^-53)
# control: 1b-45
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
scale = rnd(q);
alpha1 = rnd(a1);
alpha2 = rnd(a2);
alpha3 = rnd(a3);
alpha4 = rnd(a4);
alpha5 = rnd(a5);
alpha6 = rnd(a6);
alpha7 = rnd(a7);
alpha8 = rnd(a8);
g1 = rnd(g1_);
g2 = rnd(g2_);
g3 = rnd(g3_);
g4 = rnd(g4_);
g5 = rnd(g5_);
g6 = rnd(g6_);
g7 = rnd(g7_);
g8 = rnd(g8_);
s1 rnd= alpha1 * g1;
s2 rnd= s1 + alpha2 * g2;
s3 rnd= s2 + alpha3 * g3;
s4 rnd= s3 + alpha4 * g4;
s5 rnd= s4 + alpha5 * g5;
s6 rnd= s5 + alpha6 * g6;
s7 rnd= s6 + alpha7 * g7;
s8 rnd= s7 + alpha8 * g8;
gh rnd= s8 * scale;
GH = (a1 * g1 + a2 * g2 + a3 * g3 + a4 * g4 + a5 * g5 + a6 * g6 + a7 * g7 + a8 * g8) * q;
{ q in [1, 8] /\ a1 in [0, 1] /\ a2 in [0, 1] /\ a3 in [0, 1] /\ a4 in [0, 1] /\ a5 in [0, 1] /\ a6 in [0, 1] /\ a7 in [0, 1] /\ a8 in [0, 1] /\ g1 in [-1, 1] /\ g2 in [-1, 1] /\ g3 in [-1, 1] /\ g4 in [-1, 1] /\ g5 in [-1, 1] /\ g6 in [-1, 1] /\ g7 in [-1, 1] /\ g8 in [-1, 1] -> |gh - GH| <= 19b-49 }
