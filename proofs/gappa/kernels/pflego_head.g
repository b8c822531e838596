# pflego_head: PFLEGO step 6, the last head step W ← W − ρ (I/r) G_i (the paper's seed step)
# C: `client_round` (`ref/algorithms/pflego.c`): `head_scale = rho * scale`, then `pflref_blocks_step`
# ranges: |W|, |G| ≤ 1, 0 ≤ ρ ≤ 1/8, I/r ∈ [1, 8] exact, the C holding fl(I/r)
# bound: |fl - exact| <= 2.5 u (u = 2^-53)
# control: 17b-56
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
rho = rnd(rho_);
scale = rnd(q);
W = rnd(W_);
G = rnd(G_);
hs rnd= rho * scale;
y rnd= W - hs * G;
Y = W - rho * q * G;
{ rho in [0, 0.125] /\ q in [1, 8] /\ W in [-1, 1] /\ G in [-1, 1] -> |y - Y| <= 5b-54 }
