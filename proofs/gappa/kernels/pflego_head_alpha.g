# pflego_head_alpha: PFLEGO step 6, the last head step W ← W − ρ (I/r) α_i G_i (pflego.head_step = exact_alpha)
# C: `client_round` (`ref/algorithms/pflego.c`): `head_scale = rho * scale * alpha`, then `pflref_blocks_step`
# ranges: |W|, |G| ≤ 1, 0 ≤ ρ ≤ 1/8, I/r ∈ [1, 8], α_i = N_i/N ∈ [0, 1] exact, the C holding fl(I/r), fl(α_i)
# bound: |fl - exact| <= 3.5 u (u = 2^-53)
# control: 3b-53
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
rho = rnd(rho_);
scale = rnd(q);
W = rnd(W_);
G = rnd(G_);
alpha = rnd(a);
hs rnd= rho * scale * alpha;
y rnd= W - hs * G;
Y = W - rho * q * a * G;
{ rho in [0, 0.125] /\ q in [1, 8] /\ W in [-1, 1] /\ G in [-1, 1] /\ a in [0, 1] -> |y - Y| <= 7b-54 }
