# pfedme_server: pFedMe server step (Alg. 1 l. 10) w ← (1 − β) w_t + β Σ
# C: `pfedme_round_with` (`ref/algorithms/pfedme.c`): `(1.0 - beta) * w_t[p] + beta * acc[p]`
# ranges: |w_t|, |Σ| ≤ 1, 0 ≤ β ≤ 2
# bound: |fl - exact| <= 4 u (u = 2^-53)
# control: 7b-54
# (written by proofs/gappa/make_kernels.py; do not edit)
@rnd = float<ieee_64, ne>;
wt = rnd(wt_);
ac = rnd(ac_);
beta = rnd(beta_);
y rnd= (1 - beta) * wt + beta * ac;
Y = (1 - beta) * wt + beta * ac;
{ wt in [-1, 1] /\ ac in [-1, 1] /\ beta in [0, 2] -> |y - Y| <= 1b-51 }
