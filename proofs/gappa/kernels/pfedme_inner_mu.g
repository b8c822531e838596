# pfedme_inner_mu: pFedMe inner step (Alg. 1 l. 7, eq. 7) θ ← θ − η_p d, d = g + λ(θ − w) + μθ (official code's μ)
# C: `pflref_prox_inner_run` (`ref/engine/prox_inner.c`): `d = g[p] + job->lambda * (theta[p] - job->w[p])`; `d += job->mu * theta[p]`; `theta[p] -= job->eta_p * d`
# ranges: |θ|, |w|, |g| ≤ 1, 0 ≤ λ ≤ 16, 0 ≤ μ ≤ 1, 0 ≤ η_p ≤ 1/16
# bound: |fl - exact| <= 10.5 u (u = 2^-53)
# control: 17b-54
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
th = rnd(th_);
w = rnd(w_);
g = rnd(g_);
lam = rnd(lam_);
etap = rnd(etap_);
mu = rnd(mu_);
d0 rnd= g + lam * (th - w);
d rnd= d0 + mu * th;
D = g + lam * (th - w) + mu * th;
y rnd= th - etap * d;
Y = th - etap * D;
{ th in [-1, 1] /\ w in [-1, 1] /\ g in [-1, 1] /\ lam in [0, 16] /\ etap in [0, 0.0625] /\ mu in [0, 1] -> |y - Y| <= 21b-54 }
