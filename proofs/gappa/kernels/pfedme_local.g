# pfedme_local: pFedMe local update (Alg. 1 l. 8) w ← w − ηλ(w − θ)
# C: `client_update` (`ref/algorithms/pfedme.c`): `w_local[p] -= eta * lambda * (w_local[p] - theta[p])`
# ranges: |w|, |θ| ≤ 1, 0 ≤ η ≤ 1/16, 0 ≤ λ ≤ 16
# bound: |fl - exact| <= 4.25 u (u = 2^-53)
# control: 29b-56
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
w = rnd(w_);
th = rnd(th_);
eta = rnd(eta_);
lam = rnd(lam_);
y rnd= w - eta * lam * (w - th);
Y = w - eta * lam * (w - th);
{ w in [-1, 1] /\ th in [-1, 1] /\ eta in [0, 0.0625] /\ lam in [0, 16] -> |y - Y| <= 17b-55 }
