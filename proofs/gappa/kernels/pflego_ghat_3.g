# pflego_ghat_3: PFLEGO's server gradient ĝ = (I/r) Σ_{i∈I_t} α_i g_i (step 8), r = 3
# C: `client_round` (`ref/algorithms/pflego.c`): `acc[p] += a * g[p]` from acc = 0 (`pflref_round_begin`), i ascending, a = fl(N_i/N); `server_step`: `acc[p] *= scale`, scale = fl(I/r)
# ranges: |g_i| ≤ 1, I/r ∈ [1, 8] and α_i ∈ [0, 1] exact (N_i/N, or N_i/Σ_{j∈I_t} N_j under pflego.theta_weights = sampled_normalised), the C holding fl(I/r), fl(α_i)
# bound: |fl - exact| <= 76 u (u = 2^-53)
# control: 1b-47
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
scale = rnd(q);
alpha1 = rnd(a1);
alpha2 = rnd(a2);
alpha3 = rnd(a3);
g1 = rnd(g1_);
g2 = rnd(g2_);
g3 = rnd(g3_);
s1 rnd= alpha1 * g1;
s2 rnd= s1 + alpha2 * g2;
s3 rnd= s2 + alpha3 * g3;
gh rnd= s3 * scale;
GH = (a1 * g1 + a2 * g2 + a3 * g3) * q;
{ q in [1, 8] /\ a1 in [0, 1] /\ a2 in [0, 1] /\ a3 in [0, 1] /\ g1 in [-1, 1] /\ g2 in [-1, 1] /\ g3 in [-1, 1] -> |gh - GH| <= 19b-51 }
