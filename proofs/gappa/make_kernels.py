#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the Gappa scripts of the floating-point kernels (proofs/README.md,
table (c)).

Each script states, for one kernel of ref/ written exactly as the C
evaluates it (the same operations in the same order, every product and sum
rounded to binary64 with round-to-nearest-even, no fused multiply-add: the
Makefile compiles with -ffp-contract=off), that the computed value y and the
exact real value Y of the same expression on the same double inputs satisfy

    |y - Y| <= B        given the input ranges in the script's hypotheses,

with B a constant.  Gappa's rounding operator float<ieee_64, ne> models
subnormals, so the bound holds on the whole range, underflow included.

The bound B is what Gappa proves, rounded up to four significant bits
(B = k 2^(e-4), 16 <= k < 32); each script names a control bound, 7/8 of
Gappa's best enclosure rounded down to four bits, which Gappa must fail to
prove (proofs/run.sh), so that every script can fail
(gappa_common.bound_and_control).  Run

    python3 proofs/gappa/make_kernels.py          # rewrite the scripts
    python3 proofs/gappa/make_kernels.py --check  # compare with them

--check (run by proofs/run.sh; no Gappa search, so it takes no time)
exits 1 when a committed script differs from what this file writes with
the script's own bound and control (whether Gappa proves the one and
refutes the other, proofs/run.sh checks).  Writing needs gappa
(./deps.sh proofs).
"""
import argparse
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gappa_common as gc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
UNIT = "[-1, 1]"


def sgd_step():
    """x <- x - eta g: pflref_blocks_step, ref/engine/sgd.c
    (`x[p] -= step * g[p]`)."""
    body = ["x = rnd(x_);", "g = rnd(g_);", "eta = rnd(eta_);",
            "y rnd= x - eta * g;", "Y = x - eta * g;"]
    hyp = ["x in [-1, 1]", "g in [-1, 1]", "eta in [0, 1]"]
    return dict(
        name="sgd_step",
        kernel="SGD step x ← x − η g (one entry)",
        c="`pflref_blocks_step` (`ref/engine/sgd.c`): `x[p] -= step * g[p]`",
        ranges="|x|, |g| ≤ 1, 0 ≤ η ≤ 1",
        body=body, hyp=hyp, goal="y - Y")


def aggregate(K, kind):
    """acc <- 0; acc += c_i w_i for i = 1..K: pflref_round_begin zeroes
    acc, pflref_accumulate (ref/core/vec.c, `acc[p] += c * x[p]`) adds the
    participants' terms in ascending client id."""
    body, hyp = [], []
    if kind == "given":
        for i in range(1, K + 1):
            body.append(f"c{i} = rnd(c{i}_);")
            hyp.append(f"c{i} in [0, 1]")
        exact = [f"c{i} * w{i}" for i in range(1, K + 1)]
        what = "the weights as the C holds them (doubles c_i)"
        ranges = "0 ≤ c_i ≤ 1, |w_i| ≤ 1"
    elif kind == "rounded":
        # c_i = fl(q_i): the weight is a correctly rounded quotient (n_k/m_t,
        # n_k/n, 1/m), the exact sum uses the exact quotient q_i in [0, 1]
        for i in range(1, K + 1):
            body.append(f"c{i} = rnd(q{i});")
            hyp.append(f"q{i} in [0, 1]")
        exact = [f"q{i} * w{i}" for i in range(1, K + 1)]
        what = ("the exact weights q_i ∈ [0, 1] (n_k/m_t, n_k/n, 1/m), of "
                "which the C holds c_i = fl(q_i)")
        ranges = "0 ≤ q_i ≤ 1, |w_i| ≤ 1"
    else:  # uniform
        body += [f"q = 1 / {K};", "c = rnd(q);"]
        exact = [f"q * w{i}" for i in range(1, K + 1)]
        what = f"the exact uniform weight 1/{K}, of which the C holds fl(1/{K})"
        ranges = "|w_i| ≤ 1"
    for i in range(1, K + 1):
        body.append(f"w{i} = rnd(w{i}_);")
        hyp.append(f"w{i} in [-1, 1]")
    # acc = 0 + fl(c_1 w_1) = fl(c_1 w_1): adding the zero is exact
    c = (lambda i: "c") if kind == "uniform" else (lambda i: f"c{i}")
    body.append(f"a1 rnd= {c(1)} * w1;")
    for i in range(2, K + 1):
        body.append(f"a{i} rnd= a{i - 1} + {c(i)} * w{i};")
    body.append("A = " + " + ".join(exact) + ";")
    return dict(
        name=f"aggregate_{kind}_{K}",
        kernel=f"weighted aggregation Σ c_i w_i, K = {K}, against {what}",
        c=("`pflref_accumulate` (`ref/core/vec.c`): `acc[p] += c * x[p]` "
           "from acc = 0 (`pflref_round_begin`), i ascending"),
        ranges=ranges, body=body, hyp=hyp, goal=f"a{K} - A")


def pfedme_inner(mu):
    """pFedMe Alg. 1 l. 7, one entry of one inner step:
    d = g + lambda (theta - w) [+ mu theta]; theta <- theta - eta_p d
    (pflref_prox_inner_run, ref/engine/prox_inner.c)."""
    body = ["th = rnd(th_);", "w = rnd(w_);", "g = rnd(g_);",
            "lam = rnd(lam_);", "etap = rnd(etap_);"]
    hyp = ["th in [-1, 1]", "w in [-1, 1]", "g in [-1, 1]",
           "lam in [0, 16]", "etap in [0, 0.0625]"]
    if mu:
        body += ["mu = rnd(mu_);",
                 "d0 rnd= g + lam * (th - w);", "d rnd= d0 + mu * th;",
                 "D = g + lam * (th - w) + mu * th;"]
        hyp.append("mu in [0, 1]")
        ranges = ("|θ|, |w|, |g| ≤ 1, 0 ≤ λ ≤ 16, 0 ≤ μ ≤ 1, "
                  "0 ≤ η_p ≤ 1/16")
        line = "d = g + λ(θ − w) + μθ (official code's μ)"
    else:
        body += ["d rnd= g + lam * (th - w);", "D = g + lam * (th - w);"]
        ranges = "|θ|, |w|, |g| ≤ 1, 0 ≤ λ ≤ 16, 0 ≤ η_p ≤ 1/16"
        line = "d = g + λ(θ − w) (paper, μ = 0)"
    body += ["y rnd= th - etap * d;", "Y = th - etap * D;"]
    return dict(
        name="pfedme_inner" + ("_mu" if mu else ""),
        kernel=f"pFedMe inner step (Alg. 1 l. 7, eq. 7) θ ← θ − η_p d, {line}",
        c=("`pflref_prox_inner_run` (`ref/engine/prox_inner.c`): "
           "`d = g[p] + job->lambda * (theta[p] - job->w[p])`"
           + ("; `d += job->mu * theta[p]`" if mu else "")
           + "; `theta[p] -= job->eta_p * d`"),
        ranges=ranges, body=body, hyp=hyp, goal="y - Y")


def pfedme_local():
    """pFedMe Alg. 1 l. 8: w <- w - eta lambda (w - theta) (pfedme.c,
    client_update: `w_local[p] -= eta * lambda * (w_local[p] - theta[p])`,
    evaluated (eta*lambda)*(w - theta))."""
    body = ["w = rnd(w_);", "th = rnd(th_);", "eta = rnd(eta_);",
            "lam = rnd(lam_);",
            "y rnd= w - eta * lam * (w - th);",
            "Y = w - eta * lam * (w - th);"]
    hyp = ["w in [-1, 1]", "th in [-1, 1]", "eta in [0, 0.0625]",
           "lam in [0, 16]"]
    return dict(
        name="pfedme_local",
        kernel="pFedMe local update (Alg. 1 l. 8) w ← w − ηλ(w − θ)",
        c=("`client_update` (`ref/algorithms/pfedme.c`): "
           "`w_local[p] -= eta * lambda * (w_local[p] - theta[p])`"),
        ranges="|w|, |θ| ≤ 1, 0 ≤ η ≤ 1/16, 0 ≤ λ ≤ 16",
        body=body, hyp=hyp, goal="y - Y")


def pfedme_server():
    """pFedMe Alg. 1 l. 10: w <- (1 - beta) w_t + beta acc
    (pfedme.c: `(1.0 - beta) * w_t[p] + beta * acc[p]`)."""
    body = ["wt = rnd(wt_);", "ac = rnd(ac_);", "beta = rnd(beta_);",
            "y rnd= (1 - beta) * wt + beta * ac;",
            "Y = (1 - beta) * wt + beta * ac;"]
    hyp = ["wt in [-1, 1]", "ac in [-1, 1]", "beta in [0, 2]"]
    return dict(
        name="pfedme_server",
        kernel="pFedMe server step (Alg. 1 l. 10) w ← (1 − β) w_t + β Σ",
        c=("`pfedme_round_with` (`ref/algorithms/pfedme.c`): "
           "`(1.0 - beta) * w_t[p] + beta * acc[p]`"),
        ranges="|w_t|, |Σ| ≤ 1, 0 ≤ β ≤ 2",
        body=body, hyp=hyp, goal="y - Y")


def pflego_head(exact_alpha):
    """PFLEGO's step 6, the last head step W_i <- W~_i - rho (I/r) [alpha_i]
    G_i (Proposition 1 / notes §2.6; ref/algorithms/pflego.c, client_round:
    head_scale = rho * scale * alpha, scale = fl(I/r), alpha = fl(N_i/N),
    then pflref_blocks_step's `x[p] -= step * g[p]`)."""
    body = ["rho = rnd(rho_);", "scale = rnd(q);", "W = rnd(W_);",
            "G = rnd(G_);"]
    hyp = ["rho in [0, 0.125]", "q in [1, 8]", "W in [-1, 1]",
           "G in [-1, 1]"]
    if exact_alpha:
        body += ["alpha = rnd(a);", "hs rnd= rho * scale * alpha;",
                 "y rnd= W - hs * G;", "Y = W - rho * q * a * G;"]
        hyp.append("a in [0, 1]")
        what, c = "ρ (I/r) α_i G_i (pflego.head_step = exact_alpha)", \
            " * alpha"
        ranges = ("|W|, |G| ≤ 1, 0 ≤ ρ ≤ 1/8, I/r ∈ [1, 8], α_i = N_i/N "
                  "∈ [0, 1] exact, the C holding fl(I/r), fl(α_i)")
    else:
        body += ["hs rnd= rho * scale;", "y rnd= W - hs * G;",
                 "Y = W - rho * q * G;"]
        what, c = "ρ (I/r) G_i (the paper's seed step)", ""
        ranges = ("|W|, |G| ≤ 1, 0 ≤ ρ ≤ 1/8, I/r ∈ [1, 8] exact, the C "
                  "holding fl(I/r)")
    return dict(
        name="pflego_head" + ("_alpha" if exact_alpha else ""),
        kernel=f"PFLEGO step 6, the last head step W ← W − {what}",
        c=("`client_round` (`ref/algorithms/pflego.c`): `head_scale = rho "
           f"* scale{c}`, then `pflref_blocks_step`"),
        ranges=ranges, body=body, hyp=hyp, goal="y - Y")


def pflego_server(r, step):
    """PFLEGO's step 8 for |I_t| = r participants (ref/algorithms/pflego.c):
    pflref_round_begin zeroes acc, each participant j in ascending id adds
    `acc[p] += a * g[p]` (client_round, a = fl(N_i/N), or fl(N_i/N_sel)
    under pflego.theta_weights = sampled_normalised: a correctly rounded
    quotient of exact integers either way), then server_step scales
    `acc[p] *= scale` (scale = fl(I/r), pflego_round_with) into
    g_hat = (I/r) sum alpha_i g_i; with STEP, the plain server step
    `w[p] -= rho * acc[p]`, theta_{t+1} = theta_t - rho g_hat (server =
    sgd).  The exact values use the exact I/r and alpha_i; the exact
    g_hat is written (sum) * q, in the C's order, for Gappa matches the
    rounded and the exact expressions term by term."""
    body = ["scale = rnd(q);"]
    hyp = ["q in [1, 8]"]
    for i in range(1, r + 1):
        body.append(f"alpha{i} = rnd(a{i});")
        hyp.append(f"a{i} in [0, 1]")
    for i in range(1, r + 1):
        body.append(f"g{i} = rnd(g{i}_);")
        hyp.append(f"g{i} in [-1, 1]")
    # acc = 0 + fl(alpha_1 g_1) = fl(alpha_1 g_1): adding the zero is exact
    body.append("s1 rnd= alpha1 * g1;")
    for i in range(2, r + 1):
        body.append(f"s{i} rnd= s{i - 1} + alpha{i} * g{i};")
    body += [f"gh rnd= s{r} * scale;",
             "GH = (" + " + ".join(f"a{i} * g{i}" for i in
                                   range(1, r + 1)) + ") * q;"]
    c = ("`client_round` (`ref/algorithms/pflego.c`): `acc[p] += a * g[p]` "
         "from acc = 0 (`pflref_round_begin`), i ascending, a = fl(N_i/N); "
         "`server_step`: `acc[p] *= scale`, scale = fl(I/r)")
    ranges = ("|g_i| ≤ 1, I/r ∈ [1, 8] and α_i ∈ [0, 1] exact (N_i/N, or "
              "N_i/Σ_{j∈I_t} N_j under pflego.theta_weights = "
              "sampled_normalised), the C holding fl(I/r), fl(α_i)")
    if not step:
        return dict(
            name=f"pflego_ghat_{r}",
            kernel=(f"PFLEGO's server gradient ĝ = (I/r) Σ_{{i∈I_t}} α_i g_i "
                    f"(step 8), r = {r}"),
            c=c, ranges=ranges, body=body, hyp=hyp, goal="gh - GH")
    body = ["th = rnd(th_);", "rho = rnd(rho_);"] + body
    hyp = ["th in [-1, 1]", "rho in [0, 0.125]"] + hyp
    body += ["y rnd= th - rho * gh;", "Y = th - rho * GH;"]
    return dict(
        name=f"pflego_server_sgd_{r}",
        kernel=(f"PFLEGO's step 8, θ_{{t+1}} = θ_t − ρ ĝ, "
                f"ĝ = (I/r) Σ_{{i∈I_t}} α_i g_i, r = {r} (pflego.server = sgd)"),
        c=c + "; then `w[p] -= rho * acc[p]`",
        ranges="|θ_t| ≤ 1, 0 ≤ ρ ≤ 1/8, " + ranges,
        body=body, hyp=hyp, goal="y - Y")


def pflego_server_adam(cs):
    """PFLEGO's step 8 with pflego.server = adam, one entry of adam_step
    (ref/algorithms/pflego.c) at round t + 1 = t' >= 1:
        c1 = 1 - pow(b1, t'),  c2 = 1 - pow(b2, t')       (once a round)
        m = (1 - b1) g_hat + b1 m;  v = (1 - b2) (g_hat g_hat) + b2 v
        mhat = m / c1;  vhat = v / c2
        w -= rho * mhat / (sqrt(vhat) + eps)
    b1, b2, eps are the C's doubles fl(0.9), fl(0.999), and 1 - b1, 1 - b2
    are exact (Sterbenz; the compiler folds them), so the script writes
    them as the constants they are.  pow is libm's: the script assumes only
    that it is faithful (within one ulp: |pow - b^t'| <= 2^-53, the ulp of
    a number in [1/2, 1); glibc's pow, sysdeps/ieee754/dbl-64/e_pow.c,
    states a worst case of 0.54 ulp), with P1 = b1^t', P2 = b2^t' free in
    [0, b1] and [0, b2] (any round t'); sqrt is correctly rounded
    (IEEE 754).  The exact value is the same step in real arithmetic on
    the same doubles g_hat, m, v, w, rho, eps, with the exact 1 - b^t'.
    The box: |g_hat|, |m| <= 1, 0 <= v <= 1, and the new second moment
    (1 - b2) g_hat^2 + b2 v in [2^-12, 1] (a hypothesis on the exact
    expression; proofs/README.md says which states it covers by scaling),
    eps in [0, 1] (the C's fl(1e-8) and its scaled images).  The hints
    split each quotient's error into its numerator's and its
    denominator's, and the square root's into a relative error; the
    denominators they divide by are goals of the script, proved from the
    hypotheses.

    On that box alone |Q| may reach 80 (|m| = 1 with c1 = 1/10 over
    sqrt(vhat) = 1/64: m and v independent), which the bound scales with.
    With CS, the script also assumes |mhat / (sqrt(vhat) + eps)| <= 8 on
    the exact values: by Cauchy-Schwarz, Adam's moments from m = v = 0
    satisfy |m_t| <= (1 - b1) / sqrt(1 - b2) * sqrt(1 / (1 - b1^2 / b2))
    * sqrt(v_t) < 7.3 sqrt(v_t), and the bias corrections only lower the
    ratio (proofs/README.md)."""
    b1, b2 = Fraction(0.9), Fraction(0.999)
    assert 1 - b1 == Fraction(1.0 - 0.9) and 1 - b2 == Fraction(1.0 - 0.999)
    body = [f"b1 = {gc.gappa_num(b1)};", f"b2 = {gc.gappa_num(b2)};",
            f"o1 = {gc.gappa_num(1 - b1)};", f"o2 = {gc.gappa_num(1 - b2)};",
            "eps = rnd(eps_);", "rho = rnd(rho_);", "w = rnd(w_);",
            "g = rnd(g_);", "m = rnd(m_);", "v = rnd(v_);",
            # pow(b, t') = b^t' + e, faithful
            "pw1 = P1 + e1;", "pw2 = P2 + e2;",
            "c1 = rnd(1 - pw1);", "c2 = rnd(1 - pw2);",
            "mn rnd= o1 * g + b1 * m;",
            "vn rnd= o2 * (g * g) + b2 * v;",
            "mhat rnd= mn / c1;", "vhat rnd= vn / c2;",
            "sq = rnd(sqrt(vhat));", "num rnd= rho * mhat;",
            "den rnd= sq + eps;", "q rnd= num / den;", "y rnd= w - q;",
            "C1 = 1 - P1;", "C2 = 1 - P2;",
            "MN = o1 * g + b1 * m;", "VN = o2 * (g * g) + b2 * v;",
            "MHAT = MN / C1;", "VHAT = VN / C2;", "SQ = sqrt(VHAT);",
            "NUM = rho * MHAT;", "DEN = SQ + eps;", "Q = NUM / DEN;",
            "Y = w - Q;"]
    hyp = ["w in [-1, 1]", "rho in [0, 0.125]", "eps in [0, 1]",
           "g in [-1, 1]", "m in [-1, 1]", "v in [0, 1]",
           "VN in [1b-12, 1]"]
    if cs:
        hyp.append("MHAT / DEN in [-8, 8]")
    hyp += [f"P1 in [0, {gc.gappa_num(b1)}]",
            f"P2 in [0, {gc.gappa_num(b2)}]",
            "e1 in [-1b-53, 1b-53]", "e2 in [-1b-53, 1b-53]"]
    hints = [
        "c1 - C1 -> (c1 - (1 - pw1)) - e1;",
        "c2 - C2 -> (c2 - (1 - pw2)) - e2;",
        "mhat - MHAT -> (mhat - mn / c1) + (mn - MN) / c1 "
        "+ MN * (C1 - c1) / (c1 * C1);",
        "(den - DEN) / DEN -> ((den - (sq + eps)) / (sq + eps)) "
        "* (1 + ((sq - SQ) / SQ) * (SQ / DEN)) + ((sq - SQ) / SQ) "
        "* (SQ / DEN);",
        "q - Q -> (q - num / den) + (num - NUM) / den "
        "+ Q * (-((den - DEN) / DEN) / (1 + (den - DEN) / DEN));"]
    if cs:
        hints.append("Q -> rho * (MHAT / DEN);")
    return dict(
        name="pflego_server_adam" + ("_cs" if cs else ""),
        kernel=("PFLEGO's step 8 with pflego.server = adam: m ← β₁ m + "
                "(1 − β₁) ĝ, v ← β₂ v + (1 − β₂) ĝ², θ ← θ − ρ m̂ / "
                "(√v̂ + ε), m̂ = m / (1 − β₁^t), v̂ = v / (1 − β₂^t)"),
        c=("`adam_step` (`ref/algorithms/pflego.c`): `c1 = 1.0 - "
           "pow(ADAM_B1, t + 1)`, `c2 = ...`; `m[p] = (1.0 - ADAM_B1) * "
           "ghat[p] + ADAM_B1 * m[p]`; `v[p] = (1.0 - ADAM_B2) * (ghat[p] "
           "* ghat[p]) + ADAM_B2 * v[p]`; `mhat = m[p] / c1, vhat = v[p] / "
           "c2`; `s->w[p] -= rho * mhat / (sqrt(vhat) + ADAM_EPS)`"),
        ranges=("|θ|, |ĝ|, |m| ≤ 1, 0 ≤ v ≤ 1, the new v ∈ [2^−12, 1], "
                "0 ≤ ρ ≤ 1/8, 0 ≤ ε ≤ 1, any t ≥ 1, β₁, β₂, ε the C's "
                "doubles, pow faithful (within one ulp)"
                + (", and |m̂ / (√v̂ + ε)| ≤ 8 (Cauchy–Schwarz on Adam's "
                   "moments)" if cs else "")),
        body=body, hyp=hyp, goal="y - Y",
        side=("c1 in [1b-4, 1] /\\ C1 in [1b-4, 1] /\\ "
              "SQ in [1b-7, 32] /\\ DEN in [1b-7, 64] /\\ "
              "sq + eps in [1b-7, 64] /\\ den in [1b-7, 64]"),
        hints=hints)


def cosine(P):
    """CFL's cosine similarity (Sattler et al. 2020, eq. 11 / Alg. 5 l. 10)
    of two P-vectors as pflref_cluster_similarity (ref/engine/cluster.c)
    computes it: each vector scaled by 2^-e (ldexp, exact: max |u| lies in
    [1/2, 1)), dot, na, nb summed in p order, then
    dot / (sqrt(na) * sqrt(nb)).  The inputs here are the scaled vectors
    u, v; so NA = sum u_p^2 lies in [1/4, P], and |AB| <= 1 is
    Cauchy-Schwarz.  The two hints split the quotient's error into the
    numerator's and the denominator's; den and DEN nonzero, which Gappa
    assumes when it checks them (its warnings say so), are goals of the
    script too, proved from the hypotheses."""
    body = [f"u{p} = rnd(u{p}_);" for p in range(1, P + 1)]
    body += [f"v{p} = rnd(v{p}_);" for p in range(1, P + 1)]
    for acc, a, b in (("d", "u", "v"), ("n", "u", "u"), ("m", "v", "v")):
        body.append(f"{acc}1 rnd= {a}1 * {b}1;")
        for p in range(2, P + 1):
            body.append(f"{acc}{p} rnd= {acc}{p - 1} + {a}{p} * {b}{p};")
    body += [f"dot = d{P};", f"na = n{P};", f"nb = m{P};",
             "sa = rnd(sqrt(na));", "sb = rnd(sqrt(nb));",
             "den = rnd(sa * sb);", "y = rnd(dot / den);",
             "D = " + " + ".join(f"u{p} * v{p}" for p in range(1, P + 1))
             + ";",
             "NA = " + " + ".join(f"u{p} * u{p}" for p in range(1, P + 1))
             + ";",
             "NB = " + " + ".join(f"v{p} * v{p}" for p in range(1, P + 1))
             + ";",
             "DEN = sqrt(NA) * sqrt(NB);", "Y = D / DEN;"]
    hyp = [f"u{p} in [-1, 1]" for p in range(1, P + 1)]
    hyp += [f"v{p} in [-1, 1]" for p in range(1, P + 1)]
    hyp += [f"NA in [0.25, {P}]", f"NB in [0.25, {P}]", "Y in [-1, 1]"]
    hints = ["dot / den - Y -> (dot - D) / den + Y * (DEN / den - 1);",
             "DEN / den - 1 -> -((den - DEN) / DEN) / "
             "(1 + (den - DEN) / DEN);"]
    return dict(
        name=f"cosine_{P}",
        kernel=(f"cosine similarity ⟨u, v⟩ / (‖u‖ ‖v‖) of two {P}-vectors "
                "(CFL, eq. 11), before its clip to [−1, 1]"),
        c=("`pflref_cluster_similarity` (`ref/engine/cluster.c`): "
           "`dot += u * v; na += u * u; nb += v * v`, "
           "`dot / (sqrt(na) * sqrt(nb))`"),
        ranges=(f"u, v the vectors scaled by 2^−e: |u_p|, |v_p| ≤ 1, "
                f"Σu_p², Σv_p² ∈ [1/4, {P}]"),
        body=body, hyp=hyp, goal="y - Y",
        side="den in [1b-3, 1b4] /\\ DEN in [1b-3, 1b4]",
        hints=hints)


def quantile():
    """Type-7's interpolation q = a_(lo) + delta (a_(lo+1) - a_(lo)) as
    type7_at (ref/core/metrics.c) evaluates it, given the two order
    statistics a, b and delta = h - lo (exact: lo <= h < lo + 1, so h - lo
    is exact by Sterbenz's lemma for lo >= 1, and is h for lo = 0).  The
    error of the position h = fl(p (N - 1)) is the README's, beside
    table (c)."""
    body = ["a = rnd(a_);", "b = rnd(b_);", "d = rnd(d_);",
            "y rnd= a + d * (b - a);", "Y = a + d * (b - a);"]
    hyp = ["a in [-1, 1]", "b in [-1, 1]", "d in [0, 1]"]
    return dict(
        name="quantile_interp",
        kernel=("type-7 quantile's interpolation q = a_(lo) + δ (a_(lo+1) "
                "− a_(lo)) (Hyndman–Fan type 7)"),
        c=("`type7_at` (`ref/core/metrics.c`): "
           "`sorted[lo] + delta * (sorted[lo + 1] - sorted[lo])`"),
        ranges="|a_(lo)|, |a_(lo+1)| ≤ 1, 0 ≤ δ < 1",
        body=body, hyp=hyp, goal="y - Y")


def kernels():
    out = [sgd_step()]
    for kind in ("given", "rounded", "uniform"):
        for K in range(2, 9):
            out.append(aggregate(K, kind))
    out += [pfedme_inner(False), pfedme_inner(True), pfedme_local(),
            pfedme_server()]
    out += [pflego_head(False), pflego_head(True)]
    out += [pflego_server(r, False) for r in range(2, 9)]
    out += [pflego_server(r, True) for r in range(2, 9)]
    out += [pflego_server_adam(False), pflego_server_adam(True)]
    out += [cosine(P) for P in range(2, 6)]
    out.append(quantile())
    return out


def script(k, bound=None, control=None):
    """The script of kernel K: with BOUND and CONTROL when given (--check
    reads them from the committed script, which run.sh then proves and
    refutes), else with the bound and control Gappa finds."""
    hyp = " /\\ ".join(k["hyp"])
    if bound is None:
        bound, control = gc.bound_and_control(
            k["body"], hyp, k["goal"], k.get("hints", ()), k.get("side"))
    head = [f"# {k['name']}: {k['kernel']}",
            f"# C: {k['c']}",
            f"# ranges: {k['ranges']}",
            f"# bound: |fl - exact| <= {gc.in_u(bound)} u (u = 2^-53)",
            f"# control: {gc.gappa_num(control)}",
            "# (written by proofs/gappa/make_kernels.py; do not edit)"]
    side = f"{k['side']} /\\ " if k.get("side") else ""
    return "\n".join(head) + "\n" + gc.text(
        k["body"], hyp, f"{side}|{k['goal']}| <= {gc.gappa_num(bound)}",
        k.get("hints", ()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    bad = 0
    for k in kernels():
        path = os.path.join(HERE, "kernels", k["name"] + ".g")
        if a.check:
            try:
                old = open(path, encoding="utf-8").read()
                bound, control = gc.stated(old)
                s = script(k, bound, control)
            except (OSError, ValueError):
                old, s = None, ""
            if old != s:
                print(f"make_kernels: {path} differs from what "
                      "make_kernels.py writes", file=sys.stderr)
                bad = 1
        else:
            s = script(k)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(s)
    return bad


if __name__ == "__main__":
    sys.exit(main())
