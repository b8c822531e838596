# pflego_server_sgd_2: PFLEGO's step 8, θ_{t+1} = θ_t − ρ ĝ, ĝ = (I/r) Σ_{i∈I_t} α_i g_i, r = 2 (pflego.server = sgd)
# C: `client_round` (`ref/algorithms/pflego.c`): `acc[p] += a * g[p]` from acc = 0 (`pflref_round_begin`), i ascending, a = fl(N_i/N); `server_step`: `acc[p] *= scale`, scale = fl(I/r); then `w[p] -= rho * acc[p]`
# ranges: |θ_t| ≤ 1, 0 ≤ ρ ≤ 1/8, |g_i| ≤ 1, I/r ∈ [1, 8] and α_i ∈ [0, 1] exact (N_i/N, or N_i/Σ_{j∈I_t} N_j under pflego.theta_weights = sampled_normalised), the C holding fl(I/r), fl(α_i)
# bound: |fl - exact| <= 8 u (u = 2^-53)
# control: 7b-53
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
th = rnd(th_);
rho = rnd(rho_);
scale = rnd(q);
alpha1 = rnd(a1);
alpha2 = rnd(a2);
g1 = rnd(g1_);
g2 = rnd(g2_);
s1 rnd= alpha1 * g1;
s2 rnd= s1 + alpha2 * g2;
gh rnd= s2 * scale;
GH = (a1 * g1 + a2 * g2) * q;
y rnd= th - rho * gh;
Y = th - rho * GH;
{ th in [-1, 1] /\ rho in [0, 0.125] /\ q in [1, 8] /\ a1 in [0, 1] /\ a2 in [0, 1] /\ g1 in [-1, 1] /\ g2 in [-1, 1] -> |y - Y| <= 1b-50 }
