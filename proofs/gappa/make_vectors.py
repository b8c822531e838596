#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write, for the golden vectors whose whole run is a few floating-point
kernels, a Gappa script that bounds the rounding error of every expected
number, and check that the vector's stated tolerance covers the bound
(proofs/README.md, table (c), "Vectors whose tolerance a proof justifies").

The script is built from the vector's own spec (golden/DIR/ID.json), not
from pflref's output: this file replays the run's operations in the order
the C performs them, as Gappa definitions, each value twice, rounded (every
operation rounded to binary64, nearest-even) and exact (the same formula in
real arithmetic on the spec's doubles: the paper's value, which the
golden generator computed as a rational).  Along the way it computes the
exact values as Fractions and requires that each rounds to the number the
vector expects (so the replay is the vector's computation).  The goal is
|rounded - exact| <= B_v for every expected number v: written as such, or,
for the scripts of ENCLOSURE, as Gappa's proved enclosure `|err| in ?`
compared with B_v on a "# goal:" line by proofs/gappa/enclosure.py.

Four replays: pFedMe on the quadratic model with d = 1 (plain C, no
BLAS) or on the linear model (pfedme_run), local on the quadratic or the
linear model (local_run), PFLEGO on an mlp with d = h = k = 1
(pflego_mlp1, whose dgemm calls are modelled as the gemv ones below), and
FedAvg on a linear model (fedavg_linear: d features, an optional bias b,
the squared or half_squared loss; McMahan et al. 2017, Alg. 1,
docs/models.md), whose operations in the C are (linear_step for a step):

  round start   w_t <- w; acc <- 0                (pflref_round_begin)
  client k      w_local <- w_t; per scheduled batch B of nb samples:
                  z_j = x_j^T w            gemv (NoTrans, alpha 1, beta 0)
                  z_j = z_j + b            linear.c affine (with a bias)
                  r_j = z_j - y_j          pflref_residual_terms
                  alpha = s (1/nb)         linear.c grad (s = 2 squared,
                                           1 half_squared)
                  g_p = alpha sum_j x_jp r_j   gemv (Trans, beta 0)
                  g_b = alpha (sum_j r_j)  pflref_colsum, batch order from 0
                  w_local <- w_local - eta g         pflref_blocks_step
                acc <- acc + c_k w_local   pflref_accumulate, c_k = n_k/m_t,
                                           1/m or n_k/n (fedavg.c)
                (all_keep_old: acc <- acc + (n_k/n) w_t for the others)
  server        w <- acc                   pflref_round_end

The two gemv calls run in OpenBLAS, whose order of summation (and use of
fused multiply-add) is not the C's to choose.  With d = 1 the NoTrans call
has one product per entry (alpha = 1, beta = 0): z_j = fl(x_j w) in any
order; with d > 1 it is a d-term dot product per entry, modelled as the
Trans call with alpha = 1.  The Trans call is modelled by the standard
bound for a dot product of n terms scaled by alpha, evaluated in ANY
order, with or without FMA (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., §3.1, Lemma 3.1 and eq. 3.5: every term passes
through at most n + 1 roundings):

    g = alpha S + delta gamma_(n+1) |alpha| T,   |delta| <= 1,

with S = sum x_j r_j and T = sum |x_j r_j| of the rounded operands and
gamma_k = k u / (1 - k u), u = 2^-53; delta is a free variable of the
script (one per call), and gamma_k is written as an upper bound, a dyadic
number.  That bound is the one step Gappa does not prove here.

    python3 proofs/gappa/make_vectors.py           # write the scripts
    python3 proofs/gappa/make_vectors.py --check   # compare, no Gappa search
    python3 proofs/gappa/make_vectors.py --report  # the table of margins

Each script's header states, per vector, the largest bound, the stated
tolerance at that number, and the ratio tolerance / (bound + half an ulp of
the expected double: the rounding of the exact value the vector stores).
"""
import argparse
import json
import os
import re
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gappa_common as gc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The vectors whose run is these kernels alone (FedAvg on a linear model,
# constant step size, a given schedule; pFedMe on the quadratic model, d =
# 1, or on the linear model, paper or preset official; local on the
# quadratic or linear model; Ditto (interleaved, reference w^t) and
# FedProx (the paper's sampling) on either; fine-tuning on the quadratic
# model from a given w; PFLEGO with the SGD server on an mlp with d =
# h = k = 1, identity, no biases, half_squared).
VECTORS = [
    "fedavg/worked-uniform",
    "fedavg/worked-samples",
    "fedavg/worked-all-keep-old",
    "fedavg/worked-ragged-batch",
    "fedavg/worked-full-batch-two-epochs",
    "pfedme/worked-notes-2g-paper",
    "pfedme/worked-notes-2g-paper-beta2",
    "pfedme/worked-notes-2g-paper-s1",
    "pfedme/worked-notes-2g-official",
    "pfedme/worked-notes-2g-official-mu0",
    "pfedme/worked-notes-2g-official-mu0-beta2",
    "pfedme/worked-notes-2g-official-mu0-n13",
    "fedavg/worked-squared-bias",
    "fedavg/worked-bias-zeros-drawn",
    "local/closed-form-quadratic",
    "local/worked-two-rounds",
    "local/worked-drawn-order",
    "pflego/worked-notes-b-seed",
    "pflego/worked-notes-b-exact-alpha",
    "pflego/worked-notes-b-code",
    "pflego/worked-spread-seed-global",
    "pflego/worked-spread-seed-global-drawn",
    "pflego/worked-spread-exact-alpha-sampled",
    "fedavg/worked-minibatch-b2-e2",
    "pfedme/worked-linear-paper-beta",
    "pfedme/worked-linear-paper-minibatch",
    "pfedme/worked-linear-official-beta",
    "pfedme/worked-linear-warm-local-w",
    "ditto/worked-notes-3g-both",
    "ditto/worked-notes-3g-lambda0",
    "ditto/worked-notes-3g-partial",
    "finetune/worked-mu0",
    "finetune/worked-mu1",
    "ditto/worked-linear-paper",
    "fedprox/worked-mu0",
    "fedprox/worked-paper-repeat",
    "fedprox/worked-paper-straggler",
    "ditto/worked-linear-official-uniform",
    "ditto/worked-linear-official-unread-personal",
    "ditto/worked-linear-pfllib-separate",
    "fedprox/worked-official-straggler",
    "pfedme/worked-linear-pfllib-beta",
    "pfedme/worked-linear-pfllib-drawn",
]

# The scripts checked by enclosure: their goals are Gappa's `|e| in ?`,
# whose answers are theorems (Gappa prints only enclosures it has proved),
# and proofs/gappa/enclosure.py compares each answer with the bound the
# script states on a "# goal:" line after the proposition.  Gappa finds
# these enclosures in 5 to 60 s a script, but checking the same bounds
# written as goals `|e| <= B` takes it more than 90 s (fedprox/worked-
# paper-repeat) to more than ten minutes (a goal of
# fedavg/worked-minibatch-b2-e2: 3.7 s as `in ?`, 52 s as `<= B` however
# loose B, about 47,000 theorems considered either way).
ENCLOSURE = {
    "fedavg/worked-minibatch-b2-e2",
    "pfedme/worked-linear-paper-beta",
    "pfedme/worked-linear-paper-minibatch",
    "pfedme/worked-linear-official-beta",
    "pfedme/worked-linear-warm-local-w",
    "fedprox/worked-paper-repeat",
    "pfedme/worked-linear-pfllib-beta",
    "pfedme/worked-linear-pfllib-drawn",
}


def gamma(k):
    """A dyadic upper bound of gamma_k = k u / (1 - k u)."""
    g = k * gc.U / (1 - k * gc.U)
    e = -40                       # round up to a multiple of 2^-(53+40)
    step = Fraction(1, 2 ** (53 - e))
    return -((-g) // step) * step


class Trace:
    """Gappa definitions of a rounded and an exact chain, with the exact
    value of each as a Fraction."""

    def __init__(self):
        self.lines = []
        self.hyp = []
        self.n = 0

    def fresh(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, v):
        f = Fraction(v)
        s = gc.gappa_num(f) if f.denominator & (f.denominator - 1) == 0 \
            else None
        if s is None:
            raise ValueError(f"{v} is not a double")
        return (s, s, f)

    def op(self, a, o, b):
        """a o b: rounded and exact."""
        r, x = self.fresh("r"), self.fresh("x")
        self.lines.append(f"{r} rnd= {a[0]} {o} {b[0]};")
        self.lines.append(f"{x} = {a[1]} {o} {b[1]};")
        ex = {"+": a[2] + b[2], "-": a[2] - b[2], "*": a[2] * b[2],
              "/": a[2] / b[2] if b[2] else None}[o]
        return (r, x, ex)

    def exact_ratio(self, p, q):
        """The real p/q (integers): the exact weight; its double is
        rnd(p/q)."""
        r, x = self.fresh("r"), self.fresh("x")
        self.lines.append(f"{x} = {p} / {q};")
        self.lines.append(f"{r} = rnd({x});")
        return (r, x, Fraction(p, q))

    def dot_any_order(self, alpha, xs, rs):
        """alpha sum_j xs_j rs_j as a BLAS gemv computes it in some order:
        the model of this file's head."""
        n = len(xs)
        d = self.fresh("delta")
        self.hyp.append(f"{d} in [-1, 1]")
        S = " + ".join(f"{x[0]} * {r[0]}" for x, r in zip(xs, rs))
        T = " + ".join(f"|{x[0]} * {r[0]}|" for x, r in zip(xs, rs))
        SX = " + ".join(f"{x[1]} * {r[1]}" for x, r in zip(xs, rs))
        r, x = self.fresh("r"), self.fresh("x")
        self.lines.append(
            f"{r} = {alpha[0]} * ({S}) + {d} * {gc.gappa_num(gamma(n + 1))}"
            f" * (|{alpha[0]}| * ({T}));")
        self.lines.append(f"{x} = {alpha[1]} * ({SX});")
        ex = alpha[2] * sum(xx[2] * rr[2] for xx, rr in zip(xs, rs))
        return (r, x, ex)


def linear_data(t, client):
    """A client's rows X and targets y as constants of the trace."""
    return ([[t.const(x) for x in row] for row in client["X"]],
            [t.const(y) for y in client["y"]])


def linear_grad(t, m, X, Y, w, batch):
    """The gradient of the linear model m (d features, an optional bias b
    = w[d], the squared or half_squared loss) on BATCH at w, in the C's
    order of operations (ref/models/linear.c): z := X_b w by gemv (d = 1:
    one product, rounded once in any order; d > 1: dot_any_order), then
    z_j + b; r_j = z_j - y_j (pflref_residual_terms); alpha = s (1/nb) (s
    = 2 squared, 1 half_squared); g_w := alpha X_b^T r by gemv
    (dot_any_order per feature); g_b := alpha (sum_j r_j), the sum in
    batch order from 0 (pflref_colsum)."""
    d, bias = m["d"], bool(m.get("bias"))
    rs = []
    for idx in batch:
        if d == 1:                              # gemv NoTrans, one product
            z = t.op(X[idx][0], "*", w[0])
        else:
            z = t.dot_any_order(t.const(1.0), X[idx], w[:d])
        if bias:                                # z_j += b
            z = t.op(z, "+", w[d])
        rs.append(t.op(z, "-", Y[idx]))
    scale = t.const(2.0 if m["loss"] == "squared" else 1.0)
    alpha = t.op(scale, "*", t.op(t.const(1.0), "/",
                                  t.const(float(len(batch)))))
    g = [t.dot_any_order(alpha, [X[i][p] for i in batch], rs)
         for p in range(d)]
    if bias:                                    # pflref_colsum
        sb = t.const(0.0)
        for r in rs:
            sb = t.op(sb, "+", r)
        g.append(t.op(alpha, "*", sb))
    return g


def given_init(t, spec, P):
    """w⁰ as constants: init zeros or given (P entries)."""
    init = spec.get("init", {"kind": "zeros"})
    if init["kind"] not in ("zeros", "given"):
        raise SystemExit("make_vectors: init is neither zeros nor given")
    w = [t.const(x) for x in init["w"]] if init["kind"] == "given" \
        else [t.const(0.0)] * P
    if len(w) != P:
        raise SystemExit("make_vectors: init.w has the wrong length")
    return w


def accumulate(t, acc, c, x):
    """acc + c x entry by entry (pflref_accumulate, ref/core/vec.c), the
    products first; acc None is the zeroed accumulator, to which the first
    term adds exactly."""
    term = [t.op(c, "*", xp) for xp in x]
    return term if acc is None else \
        [t.op(a, "+", b) for a, b in zip(acc, term)]


def linear_step(t, m, X, Y, w, batch, eta):
    """One SGD step w <- w - eta grad F(w; batch) of the linear model m:
    linear_grad, then x_p - eta g_p (pflref_blocks_step)."""
    g = linear_grad(t, m, X, Y, w, batch)
    return [t.op(wp, "-", t.op(eta, "*", gp)) for wp, gp in zip(w, g)]


def fedavg_linear(spec):
    """[(record key, [(rounded, exact, Fraction)] per entry)] of a FedAvg
    run (McMahan et al. 2017, Alg. 1) on a linear model, each local step
    linear_step."""
    m = spec["model"]
    alg = spec["algorithm"]
    if m["kind"] != "linear" or m["loss"] not in ("squared", "half_squared"):
        raise SystemExit("make_vectors: not a linear model with a squared "
                         "loss")
    init = spec.get("init", {"kind": "zeros"})
    if alg["name"] != "fedavg" or set(alg["hyperparameters"]) != {"eta"} \
            or init.get("kind") not in ("zeros", "given") \
            or spec["schedule"]["kind"] != "given" \
            or set(alg.get("switches", {})) - {"fedavg.weights"}:
        raise SystemExit("make_vectors: a FedAvg spec outside this replay "
                         "(eta only, zeros or given, a given schedule)")
    P = m["d"] + (1 if m.get("bias") else 0)
    weights = alg.get("switches", {}).get("fedavg.weights", "samples")
    t = Trace()
    clients = spec["problem"]["clients"]
    N = len(clients)
    nk = [len(c["y"]) for c in clients]
    eta = t.const(alg["hyperparameters"]["eta"])
    w = given_init(t, spec, P)
    out = []
    for rnd_i, rd in enumerate(spec["schedule"]["rounds"]):
        out.append((("round_begin", rnd_i, None, None, "w"), w))
        w_t = w
        acc = None
        part = rd["clients"]
        m_t = sum(nk[k] for k in part)
        n = sum(nk)
        for k in range(N):
            if k not in part:
                if weights == "all_keep_old":
                    acc = accumulate(t, acc, t.exact_ratio(nk[k], n), w_t)
                continue
            j = part.index(k)
            wl = w_t
            out.append((("client_begin", rnd_i, k, 0, "w_local"), wl))
            X, Y = linear_data(t, clients[k])
            for s, batch in enumerate(rd["batches"][j]):
                wl = linear_step(t, m, X, Y, wl, batch, eta)
                out.append((("step", rnd_i, k, s + 1, "w_local"), wl))
            out.append((("client_end", rnd_i, k, None, "w_local"), wl))
            if weights == "uniform":
                c = t.exact_ratio(1, len(part))
            elif weights == "all_keep_old":
                c = t.exact_ratio(nk[k], n)
            else:
                c = t.exact_ratio(nk[k], m_t)
            acc = accumulate(t, acc, c, wl)
        w = acc
        out.append((("server", rnd_i, None, None, "w"), w))
    return t, out


def pfedme_run(spec):
    """[(record key, [value per entry])] of a pFedMe run (Dinh et al. 2020,
    Alg. 1) on the quadratic model f_i(θ) = a/2 (θ − c)² with d = 1, or on
    the linear model (linear_grad), in the C's order
    (ref/algorithms/pfedme.c, ref/engine/prox_inner.c), entry by entry:

      round start   w_t <- w; acc <- 0
      client i      w_local <- w_t; θ <- w_t; per local round r:
                      θ <- w_local first (theta_start = reset, the paper)
                      K times: g = ∇f_i(θ; D_{i,r}) (quadratic: a (θ − c));
                               d = g + λ(θ − w_local)
                               [d = d + μθ when μ != 0]; θ <- θ − η_p d
                      w_local <- w_local − (η λ)(w_local − θ)     l. 8
                    acc <- acc + c_i w_local for the selected clients,
                    c_i = fl(1/S) (paper) or fl(n_i / Σ_S n_j) (samples)
      server        w <- (1 − β) w_t + β acc                      l. 10

    The preset official (theta_start warm, μ = 0.001 unless given, weights
    samples, every client trains, v_i = w_local), the preset pfllib (the
    same but v_i = w_{t+1}, the server's model, for every client after each
    round; its lr switches change nothing at a constant step) or the
    paper's defaults (v_i = θ); the init zeros or given."""
    m = spec["model"]
    alg = spec["algorithm"]
    hp = dict(alg["hyperparameters"])
    preset = alg.get("preset")
    official = preset in ("official", "pfllib")
    linear = m["kind"] == "linear"
    if linear and m["loss"] not in ("squared", "half_squared"):
        raise SystemExit("make_vectors: not a linear model with a squared "
                         "loss")
    init = spec.get("init", {"kind": "zeros"})
    if (not linear and (m["kind"], m["d"]) != ("quadratic", 1)) \
            or alg["name"] != "pfedme" \
            or preset not in (None, "official", "pfllib") \
            or alg.get("switches") \
            or set(hp) - {"eta", "lambda", "eta_p", "K", "beta", "pfedme.mu"} \
            or init.get("kind") not in ("zeros", "given") \
            or spec["schedule"]["kind"] != "given":
        raise SystemExit("make_vectors: a pFedMe spec outside this replay")
    mu_v = hp.get("pfedme.mu", 0.001 if official else 0.0)
    warm = official
    samples = official
    t = Trace()
    clients = spec["problem"]["clients"]
    if linear:
        P = m["d"] + (1 if m.get("bias") else 0)
        data = [linear_data(t, c) for c in clients]
        nk = [len(c["y"]) for c in clients]
    else:
        P = 1
        A = [t.const(c["a"][0]) for c in clients]
        Cc = [t.const(c["c"][0]) for c in clients]
        nk = [c.get("n", 1) for c in clients]
    eta, lam, etap = (t.const(hp["eta"]), t.const(hp["lambda"]),
                      t.const(hp["eta_p"]))
    mu = t.const(mu_v)
    beta = t.const(hp.get("beta", 1.0))
    K = hp["K"]
    w = given_init(t, spec, P)
    out = []
    v = {}
    for ri, rd in enumerate(spec["schedule"]["rounds"]):
        out.append((("round_begin", ri, None, None, "w"), w))
        w_t = w
        acc = None
        sel = rd.get("selected", rd["clients"])
        n_S = sum(nk[i] for i in sel)
        for j, i in enumerate(rd["clients"]):
            wl = w_t
            th = w_t
            out.append((("client_begin", ri, i, 0, "w_local"), wl))
            for r, batch in enumerate(rd["batches"][j]):
                if not warm:
                    th = wl
                for k in range(1, K + 1):
                    if linear:
                        g = linear_grad(t, m, *data[i], th, batch)
                    else:
                        g = [t.op(A[i], "*", t.op(th[0], "-", Cc[i]))]
                    new = []
                    for p in range(P):
                        d = t.op(g[p], "+",
                                 t.op(lam, "*", t.op(th[p], "-", wl[p])))
                        if mu_v != 0.0:
                            d = t.op(d, "+", t.op(mu, "*", th[p]))
                        new.append(t.op(th[p], "-", t.op(etap, "*", d)))
                    th = new
                    out.append((("step", ri, i, r * K + k, "theta"), th))
                wl = [t.op(wl[p], "-", t.op(t.op(eta, "*", lam), "*",
                                            t.op(wl[p], "-", th[p])))
                      for p in range(P)]
                out.append((("step", ri, i, r + 1, "w_local"), wl))
            out.append((("client_end", ri, i, None, "w_local"), wl))
            out.append((("client_end", ri, i, None, "theta"), th))
            v[i] = wl if official else th
            if i not in sel:
                continue
            c = (t.exact_ratio(nk[i], n_S) if samples
                 else t.exact_ratio(1, len(sel)))
            acc = accumulate(t, acc, c, wl)
        one = t.const(1.0)
        w = [t.op(t.op(t.op(one, "-", beta), "*", w_t[p]), "+",
                  t.op(beta, "*", acc[p])) for p in range(P)]
        out.append((("server", ri, None, None, "w"), w))
        if preset == "pfllib":           # personal_eval = global
            v = {i: w for i in range(len(nk))}
    for i in sorted(v):
        out.append((("final", None, i, None, "v"), v[i]))
    return t, out


def local_run(spec):
    """[(record key, [value per entry])] of the algorithm local (each
    client trains its own v_i from w0, kept across rounds; ref/algorithms/
    local.c) on the quadratic model, entry by entry in the C's order:
    g_j = a_j (v_j − c_j) (quadratic.c), v_j <- v_j − η g_j
    (pflref_blocks_step); or on the linear model, each step
    linear_step."""
    m = spec["model"]
    alg = spec["algorithm"]
    if m["kind"] not in ("quadratic", "linear") or alg["name"] != "local" \
            or set(alg) - {"name", "hyperparameters"} \
            or set(alg["hyperparameters"]) != {"eta"} \
            or spec["schedule"]["kind"] != "given" \
            or spec.get("init", {}).get("kind") != "given":
        raise SystemExit("make_vectors: a local spec outside this replay")
    t = Trace()
    d = m["d"]
    clients = spec["problem"]["clients"]
    eta = t.const(alg["hyperparameters"]["eta"])
    w0 = [t.const(x) for x in spec["init"]["w"]]
    v = {i: list(w0) for i in range(len(clients))}
    out = []
    for ri, rd in enumerate(spec["schedule"]["rounds"]):
        for j, i in enumerate(rd["clients"]):
            if m["kind"] == "linear":
                X, Y = linear_data(t, clients[i])
            else:
                A = [t.const(x) for x in clients[i]["a"]]
                C = [t.const(x) for x in clients[i]["c"]]
            out.append((("client_begin", ri, i, 0, "v"), list(v[i])))
            for sidx, batch in enumerate(rd["batches"][j]):
                if m["kind"] == "linear":
                    v[i] = linear_step(t, m, X, Y, v[i], batch, eta)
                else:
                    g = [t.op(A[q], "*", t.op(v[i][q], "-", C[q]))
                         for q in range(d)]
                    v[i] = [t.op(v[i][q], "-", t.op(eta, "*", g[q]))
                            for q in range(d)]
                out.append((("step", ri, i, sidx + 1, "v"), list(v[i])))
            out.append((("client_end", ri, i, None, "v"), list(v[i])))
    for i in sorted(v):
        out.append((("final", None, i, None, "v"), v[i]))
    return t, out


def quadratic_data(t, client, d):
    """A client's a and c of the quadratic model f(θ) = Σ_j a_j/2 (θ_j −
    c_j)² as constants of the trace."""
    A = [t.const(x) for x in client["a"]]
    C = [t.const(x) for x in client["c"]]
    if len(A) != d or len(C) != d:
        raise SystemExit("make_vectors: a client's a or c has the wrong "
                         "length")
    return A, C


def quadratic_grad(t, A, C, x):
    """g_j = a_j (x_j − c_j) (ref/models/quadratic.c)."""
    return [t.op(a, "*", t.op(xj, "-", c)) for a, c, xj in zip(A, C, x)]


def model_setup(t, spec):
    """(P, [client data], [n_k], grad) for the quadratic model or the
    linear model with a squared loss: grad(k, x, batch) is client k's
    gradient at x on BATCH (quadratic_grad, whose loss has no batch, or
    linear_grad)."""
    m = spec["model"]
    clients = spec["problem"]["clients"]
    if m["kind"] == "quadratic":
        data = [quadratic_data(t, c, m["d"]) for c in clients]
        return (m["d"], data, [c.get("n", 1) for c in clients],
                lambda k, x, batch: quadratic_grad(t, *data[k], x))
    if m["kind"] != "linear" or m["loss"] not in ("squared",
                                                  "half_squared"):
        raise SystemExit("make_vectors: not the quadratic model or a "
                         "linear model with a squared loss")
    data = [linear_data(t, c) for c in clients]
    return (m["d"] + (1 if m.get("bias") else 0), data,
            [len(c["y"]) for c in clients],
            lambda k, x, batch: linear_grad(t, m, *data[k], x, batch))


def ditto_run(spec):
    """[(record key, [value per entry])] of a Ditto run (Li et al. 2021,
    Alg. 1; ref/algorithms/ditto.c) on the quadratic or the linear model
    (model_setup), with the default order (interleaved: per scheduled
    batch b the personal step, then the global step on the same batch)
    and the reference w^t; the preset official (the same, weights
    uniform) or pfllib (every personal step on the round's own personal
    batches, then every global step; weights samples):

      round start   w_t <- w; acc <- 0                 (pflref_round_begin)
      device k      w_k <- w_t; per batch b:
                      g = ∇F_k(v_k; b); v_k <- v_k − η (g + λ (v_k − w_t))
                                                       (personal_step)
                      g = ∇F_k(w_k; b); w_k <- w_k − η g
                                                       (pflref_blocks_step)
                    acc <- acc + c_k w_k, c_k = fl(n_k/m_t) or, under
                    ditto.weights = uniform, fl(1/|S_t|) (pflref_accumulate)
      server        w <- acc                           (pflref_round_end)"""
    alg = spec["algorithm"]
    sw = alg.get("switches", {})
    preset = alg.get("preset")
    if alg["name"] != "ditto" \
            or set(alg) - {"name", "preset", "hyperparameters", "switches"} \
            or preset not in (None, "official", "pfllib") \
            or set(alg["hyperparameters"]) != {"eta", "lambda"} \
            or set(sw) - {"ditto.weights"} or (preset and sw) \
            or spec["schedule"]["kind"] != "given":
        raise SystemExit("make_vectors: a Ditto spec outside this replay")
    uniform = sw.get("ditto.weights", "samples") == "uniform" \
        or preset == "official"
    separate = preset == "pfllib"   # personal_first, batches = separate
    t = Trace()
    P, _, nk, grad = model_setup(t, spec)
    hp = alg["hyperparameters"]
    eta, lam = t.const(hp["eta"]), t.const(hp["lambda"])
    w = given_init(t, spec, P)
    v = {i: list(w) for i in range(len(nk))}
    out = []
    for ri, rd in enumerate(spec["schedule"]["rounds"]):
        out.append((("round_begin", ri, None, None, "w"), w))
        w_t = w
        acc = None
        part = rd["clients"]
        m_t = sum(nk[k] for k in part)
        for j, k in enumerate(part):
            wl = w_t
            out.append((("client_begin", ri, k, 0, "w_local"), wl))
            out.append((("client_begin", ri, k, 0, "v"), v[k]))
            def personal(q, batch):
                g = grad(k, v[k], batch)
                v[k] = [t.op(x, "-", t.op(eta, "*", t.op(
                    gp, "+", t.op(lam, "*", t.op(x, "-", r)))))
                    for x, gp, r in zip(v[k], g, w_t)]
                out.append((("step", ri, k, q + 1, "v"), v[k]))

            def global_(q, batch, wl):
                g = grad(k, wl, batch)
                wl = [t.op(x, "-", t.op(eta, "*", gp))
                      for x, gp in zip(wl, g)]
                out.append((("step", ri, k, q + 1, "w_local"), wl))
                return wl
            if separate:        # every personal step, then every global
                for q, batch in enumerate(rd["personal"][j]):
                    personal(q, batch)
                for q, batch in enumerate(rd["batches"][j]):
                    wl = global_(q, batch, wl)
            else:               # interleaved on the shared batch
                for q, batch in enumerate(rd["batches"][j]):
                    personal(q, batch)
                    wl = global_(q, batch, wl)
            out.append((("client_end", ri, k, None, "w_local"), wl))
            out.append((("client_end", ri, k, None, "v"), v[k]))
            c = t.exact_ratio(1, len(part)) if uniform \
                else t.exact_ratio(nk[k], m_t)
            acc = accumulate(t, acc, c, wl)
        w = acc
        out.append((("server", ri, None, None, "w"), w))
    for i in sorted(v):
        out.append((("final", None, i, None, "v"), v[i]))
    return t, out


def fedprox_run(spec):
    """[(record key, [value per entry])] of a FedProx run (Li et al. 2020,
    Alg. 2; ref/algorithms/fedprox.c) on the quadratic or the linear model
    (model_setup), sampling as the paper (fedprox.sampling = paper, the
    default: the round's K draws with repetition, c_k the count of k's)
    or as the preset official (uniform_weighted: c_k = fl(n_k / m_t)):

      round start   w_t <- w; acc <- 0                 (pflref_round_begin)
                    c_k = fl(count_k / K)  (counts summed as 1.0s: exact)
      device k      w_k <- w_t; per batch b: g = ∇F_k(w_k; b);
                      μ = 0: w_k <- w_k − η g          (pflref_blocks_step)
                      else d = g + μ (w_k − w_t); w_k <- w_k − η d  (l. 5,
                      prox_block_step)
                    note c = c_k; acc <- acc + c_k w_k (pflref_accumulate)
      server        w <- acc                     (l. 7, pflref_round_end)"""
    alg = spec["algorithm"]
    hp = alg["hyperparameters"]
    official = alg.get("preset") == "official"
    if alg["name"] != "fedprox" \
            or set(alg) - {"name", "preset", "hyperparameters"} \
            or alg.get("preset") not in (None, "official") \
            or set(hp) != {"eta", "fedprox.mu"} \
            or spec["schedule"]["kind"] != "given":
        raise SystemExit("make_vectors: a FedProx spec outside this replay "
                         "(eta and fedprox.mu, the paper's sampling or the "
                         "preset official)")
    t = Trace()
    P, _, nk, grad = model_setup(t, spec)
    eta, mu_v = t.const(hp["eta"]), hp["fedprox.mu"]
    mu = t.const(mu_v)
    w = given_init(t, spec, P)
    out = []
    for ri, rd in enumerate(spec["schedule"]["rounds"]):
        out.append((("round_begin", ri, None, None, "w"), w))
        w_t = w
        acc = None
        draws = rd.get("draws", [])
        m_t = sum(nk[k] for k in rd["clients"])
        for j, k in enumerate(rd["clients"]):
            wl = w_t
            out.append((("client_begin", ri, k, 0, "w_local"), wl))
            for q, batch in enumerate(rd["batches"][j]):
                g = grad(k, wl, batch)
                if mu_v != 0.0:
                    g = [t.op(gp, "+", t.op(mu, "*", t.op(x, "-", r)))
                         for gp, x, r in zip(g, wl, w_t)]
                wl = [t.op(x, "-", t.op(eta, "*", gp))
                      for x, gp in zip(wl, g)]
                out.append((("step", ri, k, q + 1, "w_local"), wl))
            out.append((("client_end", ri, k, None, "w_local"), wl))
            c = t.exact_ratio(nk[k], m_t) if official \
                else t.exact_ratio(draws.count(k), len(draws))
            out.append((("note", ri, k, None, "c"), [c]))
            acc = accumulate(t, acc, c, wl)
        w = acc
        out.append((("server", ri, None, None, "w"), w))
    return t, out


def finetune_run(spec):
    """[(record key, [value per entry])] of fine-tuning after FedAvg
    (ref/algorithms/finetune.c) on the quadratic model, with no training
    round (the vectors whose w is given): each client's θ_i <- w, then per
    post batch g = a (θ − c) and, with μ_ft = 0, θ <- θ − η_ft g
    (pflref_blocks_step), else d = g + μ_ft (θ − w), θ <- θ − η_ft d
    (prox_block_step, ref/engine/sgd.c)."""
    m = spec["model"]
    alg = spec["algorithm"]
    hp = alg["hyperparameters"]
    if m["kind"] != "quadratic" or alg["name"] != "finetune" \
            or set(alg) - {"name", "hyperparameters"} \
            or set(hp) - {"eta", "eta_ft", "mu_ft"} \
            or spec.get("init", {}).get("kind") != "given" \
            or spec["schedule"]["kind"] != "given" \
            or spec["schedule"]["rounds"]:
        raise SystemExit("make_vectors: a fine-tuning spec outside this "
                         "replay (a given w, no training round)")
    d = m["d"]
    t = Trace()
    clients = spec["problem"]["clients"]
    eta_ft = t.const(hp["eta_ft"])
    mu_ft = hp.get("mu_ft", 0.0)
    mu = t.const(mu_ft)
    w = [t.const(x) for x in spec["init"]["w"]]
    out = [(("server", None, None, None, "w"), w)]
    for i, client in enumerate(clients):
        A, C = quadratic_data(t, client, d)
        th = list(w)
        out.append((("client_begin", None, i, 0, "theta"), th))
        for q in range(len(spec["schedule"]["post"][i])):
            g = quadratic_grad(t, A, C, th)
            if mu_ft != 0.0:
                g = [t.op(gp, "+", t.op(mu, "*", t.op(x, "-", r)))
                     for gp, x, r in zip(g, th, w)]
            th = [t.op(x, "-", t.op(eta_ft, "*", gp))
                  for x, gp in zip(th, g)]
            out.append((("step", None, i, q + 1, "theta"), th))
        out.append((("client_end", None, i, None, "theta"), th))
        out.append((("final", None, i, None, "v"), th))
    return t, out


def pflego_mlp1(spec):
    """[(record key, [value per entry])] of a PFLEGO run (Nikoloutsopoulos
    et al., notes §2.4 steps 1-9; ref/algorithms/pflego.c) on an mlp with
    d = h = k = 1, identity activation, no biases, half_squared loss, the
    server's plain SGD step, in the C's order (P = 2 entries: θ = W1, then
    the head W = W2; x_j, y_j client i's samples, n = N_i, the batch the
    whole data set in order):

      round start   scale = fl(I/r); N = sum N_i; N_sel = sum over I_t
      client i      step 3: A_j = x_j θ (gemm, one term), Φ_j = A_j
                    head gradient at W: z_j = Φ_j W (gemm, one term),
                      E_j = z_j - y_j (pflref_residual_terms; s = 1),
                      G = fl(1/n) sum_j E_j Φ_j       (gemm Trans, any order)
                    step 4, tau - 1 times: W <- W - β G  (pflref_blocks_step)
                    step 5: G, E at W; T_j = E_j W (gemm, one term),
                      g = fl(1/n) sum_j T_j x_j          (gemm Trans, any order)
                    step 6: W <- W - hs G, hs = fl(ρ scale) [fl(hs α_i)
                      under head_step = exact_alpha, α_i = fl(N_i/N)]
                    acc <- acc + a g, a = fl(N_i/N) [fl(N_i/N_sel) under
                      theta_weights = sampled_normalised]    (client_round)
      server        ĝ = acc scale; θ <- θ - ρ ĝ             (server_step)

    The two one-term gemm calls round once in any order; the Trans calls
    are the any-order dot products of this file's head."""
    m = spec["model"]
    alg = spec["algorithm"]
    hp = alg["hyperparameters"]
    sw = alg.get("switches", {})
    if (m["kind"], m["d"], m["h"], m["k"], m["loss"], m["activation"]) \
            != ("mlp", 1, 1, 1, "half_squared", "identity") \
            or m.get("bias") or m.get("hidden_bias") or m.get("bn"):
        raise SystemExit("make_vectors: not an mlp with d = h = k = 1, "
                         "identity, half_squared, no biases")
    if alg["name"] != "pflego" or set(hp) != {"rho", "pflego.beta"} \
            or set(alg) - {"name", "hyperparameters", "switches"} \
            or set(sw) - {"pflego.head_step", "pflego.theta_weights"} \
            or spec.get("init", {}).get("kind") != "given" \
            or spec["schedule"]["kind"] != "given" \
            or spec.get("split") != {"personal": ["head"]}:
        raise SystemExit("make_vectors: a PFLEGO spec outside this replay "
                         "(rho and pflego.beta, head_step and theta_weights, "
                         "a given init and schedule)")
    exact_alpha = sw.get("pflego.head_step", "seed") == "exact_alpha"
    sampled = sw.get("pflego.theta_weights",
                     "global") == "sampled_normalised"
    t = Trace()
    clients = spec["problem"]["clients"]
    N = len(clients)
    nk = [len(c["y"]) for c in clients]
    rho, beta = t.const(hp["rho"]), t.const(hp["pflego.beta"])
    w0 = [t.const(x) for x in spec["init"]["w"]]
    theta, head0 = w0
    W = {i: head0 for i in range(N)}
    one = t.const(1.0)
    out = []

    def head_grad(Phi, Y, Wc):
        n = len(Phi)
        E = [t.op(t.op(Phi[j], "*", Wc), "-", Y[j]) for j in range(n)]
        alpha = t.op(one, "/", t.const(float(n)))
        return t.dot_any_order(alpha, E, Phi), E, alpha

    for ri, rd in enumerate(spec["schedule"]["rounds"]):
        out.append((("round_begin", ri, None, None, "w"), [theta, head0]))
        part = rd["clients"]
        scale = t.exact_ratio(N, len(part))
        n_all, n_sel = sum(nk), sum(nk[i] for i in part)
        acc = None
        for j, i in enumerate(part):
            batches = rd["batches"][j]
            if any(b != list(range(nk[i])) for b in batches):
                raise SystemExit("make_vectors: a PFLEGO batch that is not "
                                 "the client's data set in order")
            X = [t.const(row[0]) for row in clients[i]["X"]]
            Y = [t.const(y) for y in clients[i]["y"]]
            Wc = W[i]
            out.append((("client_begin", ri, i, 0, "w_local"), [theta, Wc]))
            Phi = [t.op(X[q], "*", theta) for q in range(nk[i])]
            tau = len(batches)
            for q in range(1, tau):
                G, _, _ = head_grad(Phi, Y, Wc)
                Wc = t.op(Wc, "-", t.op(beta, "*", G))
                out.append((("step", ri, i, q, "w_local"), [theta, Wc]))
            G, E, alpha = head_grad(Phi, Y, Wc)
            T = [t.op(e, "*", Wc) for e in E]
            g = t.dot_any_order(alpha, T, X)
            out.append((("note", ri, i, None, "g"), [g, G]))
            hs = t.op(rho, "*", scale)
            if exact_alpha:
                hs = t.op(hs, "*", t.exact_ratio(nk[i], n_all))
            Wc = t.op(Wc, "-", t.op(hs, "*", G))
            out.append((("step", ri, i, tau, "w_local"), [theta, Wc]))
            W[i] = Wc
            out.append((("client_end", ri, i, None, "v"), [theta, Wc]))
            out.append((("note", ri, i, None, "body_passes"), [one, one]))
            a = t.exact_ratio(nk[i], n_sel if sampled else n_all)
            term = t.op(a, "*", g)
            acc = term if acc is None else t.op(acc, "+", term)
        gh = t.op(acc, "*", scale)
        out.append((("note", ri, None, None, "g_hat"), [gh, t.const(0.0)]))
        theta = t.op(theta, "-", t.op(rho, "*", gh))
        out.append((("server", ri, None, None, "w"), [theta, head0]))
    for i in range(N):
        out.append((("final", None, i, None, "v"), [theta, W[i]]))
    return t, out


def replay(spec):
    """The replay of SPEC's algorithm: [(record key, [value per entry])],
    each value a (rounded, exact, Fraction) triple."""
    name = spec["algorithm"]["name"]
    if name == "local":
        return local_run(spec)
    if name == "pflego":
        return pflego_mlp1(spec)
    if name == "fedavg":
        return fedavg_linear(spec)
    if name == "ditto":
        return ditto_run(spec)
    if name == "fedprox":
        return fedprox_run(spec)
    if name == "finetune":
        return finetune_run(spec)
    return pfedme_run(spec)


def key(rec):
    return (rec["event"], rec.get("round"), rec.get("client"),
            rec.get("step") if rec["event"] in ("step", "client_begin")
            else None, rec["name"])


def half_ulp(v):
    """Half an ulp of the double v (binary64), as a Fraction."""
    f = Fraction(v)
    if f == 0:
        return Fraction(1, 2 ** 1075)
    e = abs(f).numerator.bit_length() - abs(f).denominator.bit_length()
    while Fraction(2) ** e > abs(f):
        e -= 1
    return Fraction(2) ** (max(e, -1022) - 53)


def build(vid):
    """(script text without bounds, goals, checks) of vector VID."""
    v = json.load(open(os.path.join(ROOT, "golden", vid + ".json"),
                       encoding="utf-8"))
    t, recs = replay(v["spec"])
    by_key = {}
    for k, val in recs:
        by_key.setdefault(k, val)
    goals = []     # (record index, rounded, exact, expected double)
    records = list(v["expected"]["trajectory"])
    for i, vi in enumerate(v["expected"]["final"].get("v") or []):
        records.append({"event": "final", "client": i, "name": "v",
                        "value": vi})
    for i, rec in enumerate(records):
        k = key(rec)
        if k not in by_key:
            raise SystemExit(f"make_vectors: {vid}: record {i} {k} is not "
                             "in the replay")
        if len(by_key[k]) != len(rec["value"]):
            raise SystemExit(f"make_vectors: {vid}: record {i}: length")
        for (r, x, ex), want in zip(by_key[k], rec["value"]):
            if float(ex) != want:
                raise SystemExit(f"make_vectors: {vid}: record {i}: the "
                                 f"replay's exact value {ex} rounds to "
                                 f"{float(ex)}, the vector expects {want}")
            goals.append((i, r, x, want))
    if "w" in v["expected"]["final"]:
        final = v["expected"]["final"]["w"]
        last_w = [val for k, val in recs if k[0] == "server"][-1]
        if [float(x[2]) for x in last_w] != final:
            raise SystemExit(f"make_vectors: {vid}: final w differs")
    return v, t, goals


def script(vid, bounds=None):
    """The script of VID with the bounds given (--check) or found."""
    v, t, goals = build(vid)
    hyp = " /\\ ".join(t.hyp)
    # one goal per distinct (rounded, exact) pair
    pairs = []
    for _, r, x, _ in goals:
        if (r, x) not in pairs:
            pairs.append((r, x))
    enclosure = vid in ENCLOSURE
    # each goal's error named last (err1, err2, ...), so that Gappa's
    # answers can be matched by name (gc.named_enclosures: Gappa answers
    # goals that share a term once, and not in the goals' order)
    errs = [f"err{k + 1}" for k in range(len(pairs))]
    named = [f"{e} = {r} - {x};" for e, (r, x) in zip(errs, pairs)]
    asked = " /\\ ".join(f"|{e}| in ?" for e in errs)
    if bounds is None:
        rc, out = gc.run(gc.text(t.lines + named, hyp, asked))
        found = gc.named_enclosures(out)
        if rc != 0 or any(e not in found for e in errs):
            raise SystemExit(f"make_vectors: {vid}: gappa found no "
                             "enclosure:\n" + out[-2000:])
        bounds = [gc.round_up(found[e])[0] for e in errs]
    if len(bounds) != len(pairs):
        raise ValueError(f"{len(bounds)} stated bounds for {len(pairs)} "
                         "goals")
    tol = v["tolerance"]
    atol, rtol = Fraction(tol["atol"]), Fraction(tol["rtol"])
    worst = None
    for i, r, x, val in goals:
        b = bounds[pairs.index((r, x))]
        need = b + half_ulp(val)
        allowed = atol + rtol * abs(Fraction(val))
        if need > allowed:
            raise SystemExit(f"make_vectors: {vid}: record {i}: the proved "
                             f"bound {float(b):.3g} plus half an ulp exceeds "
                             f"the tolerance {float(allowed):.3g}")
        ratio = allowed / need
        if worst is None or ratio < worst[0]:
            worst = (ratio, i, b, val, allowed)
    bmax = max(bounds)
    head = [f"# {vid}: every expected number of golden/{vid}.json",
            "# (the run replayed by proofs/gappa/make_vectors.py; do not edit)",
            f"# bound: |fl - exact| <= {gc.in_u(bmax)} u at most "
            f"({float(bmax):.3g}), {len(goals)} numbers",
            f"# tolerance: atol {tol['atol']}, rtol {tol['rtol']}; tightest "
            f"margin at record {worst[1]} (value {worst[3]}): tolerance "
            f"{float(worst[4]):.3g} = {float(worst[0]):.3g} x (bound "
            f"{float(worst[2]):.3g} + half an ulp)",
            "# control: none (the kernels' scripts carry the controls)"]
    if enclosure:
        head.append("# check: enclosure (proofs/gappa/enclosure.py: each "
                    "goal's proved `in ?` answer <= its \"# goal:\" bound)")
        stated = [f"# goal: |{e}| <= {gc.gappa_num(b)}"
                  for e, b in zip(errs, bounds)]
        return ("\n".join(head) + "\n"
                + gc.text(t.lines + named, hyp, asked, stated), worst)
    goal = " /\\ ".join(f"|{r} - {x}| <= {gc.gappa_num(b)}"
                        for (r, x), b in zip(pairs, bounds))
    return "\n".join(head) + "\n" + gc.text(t.lines, hyp, goal), worst


def stated_bounds(text):
    """The bounds of a written script's goals, in order: those of its
    proposition, or of its "# goal:" lines (a script checked by
    enclosure)."""
    stated = gc.stated_goals(text)
    if stated:
        return [b for _, b in stated]
    last = gc.goal_line(text)
    return [gc.parse_num(b) for b in re.findall(r"<= (\S+?)(?= /\\| })",
                                                last)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    bad = 0
    for vid in VECTORS:
        path = os.path.join(HERE, "vectors", vid.replace("/", "__") + ".g")
        if a.check or a.report:
            try:
                old = open(path, encoding="utf-8").read()
                s, _ = script(vid, stated_bounds(old))
            except (OSError, ValueError) as e:
                print(f"make_vectors: {path}: {e}", file=sys.stderr)
                old, s = None, ""
            if old != s:
                print(f"make_vectors: {path} differs from what "
                      "make_vectors.py writes", file=sys.stderr)
                bad = 1
            elif a.report:
                print(old.splitlines()[2][2:], "|", old.splitlines()[3][2:])
        else:
            s, _ = script(vid)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(s)
    return bad


if __name__ == "__main__":
    sys.exit(main())
