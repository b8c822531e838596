# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_pfedhn.py: pFedHN (Shamsian, Navon, Fetaya, Chechik,
ICML 2021, arXiv 2103.04628v1, Algorithm 1) with a linear hypernetwork, in
exact rational arithmetic, written from shared/spec notes-lora-pfedhn.md
§4 and §4.1, independently of the C reference.

State (the spec's init.hypernetwork, every entry at the exact value of its
double): W_h (P×e), b_h (P; 0 and never moved with pfedhn.hn_bias = off),
the embeddings v_j (e each).  Round r of the given schedule names one
client i (Alg. 1 l. 3) and its K batches:
  θ_i = W_h v_i + b_h                                   (l. 4)
  θ̃_i = θ_i, then θ̃_i ← θ̃_i − η ∇L_i(θ̃_i; B_k), k = 1..K  (l. 5-8)
  Δθ_i = θ̃_i − θ_i                                      (l. 9)
  the surrogate ½‖θ̃_i − h(v_i; φ)‖² has, at the round's start,
    ∂/∂W_h = −Δθ_i v_iᵀ,  ∂/∂b_h = −Δθ_i,  ∂/∂v_i = −W_hᵀ Δθ_i,
  and one descent step on it is
    W_h ← W_h + α Δθ_i v_iᵀ,  b_h ← b_h + α Δθ_i       (l. 10)
    v_i ← v_i + α_v W_hᵀ Δθ_i   (W_h as it was)         (l. 11)
α_v = pfedhn.alpha_v when given, else α.  After the run every client's
model is h(v_j; φ) (the result's final v).

The authors' code's departures (AvivSham/pFedHN @ 1bc0549, notes §4.3
H1-H4; preset official turns all three on), torch's optimizers written out:
  pfedhn.inner_opt = sgd_momentum_wd: a new buffer every round; per step
      d = g + λ_i θ̃, b = d (first step) or μ_i b + d, θ̃ ← θ̃ − η b
  pfedhn.outer_opt = sgd_momentum_wd: x = every entry of (W_h, b_h, all
      v_j), G the dense gradient (0 in the other clients' rows):
      d = G + λ_o x, B = d (round 0) or μ_o B + d, x ← x − lr B
      (lr = α for W_h, b_h and α_v for the embeddings), so unsampled
      embeddings move too
  pfedhn.clip = norm: g ← g · min(1, c / (‖g‖ + 10⁻⁶)), the local gradient
      before the weight decay, and G over all its entries; ‖g‖ of an
      irrational root enters as a rational within 10⁻⁷⁰ of it (the decision
      coef < 1 is made exactly); once a clip has scaled a gradient, every
      state value (θ̃, W_h, b_h, v_j, the buffers) is kept to 80 decimal
      digits after the point (q80), so the numbers stay short while the
      error stays below 10⁻⁷⁰.

The softmax target (z = W x + b, k classes, cross-entropy, mean over the
batch): exp is irrational, so the class probabilities are computed with
60-digit decimals (relative error below 10⁻⁵⁸) and taken as exact
rationals; the gradient and, after every local step and every round, the
state (θ̃, W_h, b_h, v_j) are kept to 80 decimal digits after the point
(q80), so the numbers stay short while the error stays far below any
tolerance (SoftmaxProblem).

replay(spec, bugs) -> (trace, None, v, None).  Bugs (mutants):

  hn-ascent          φ and v_i step along +∇ (Δθ with the box's printed
                     minus sign taken literally)
  hn-embed-ascent    only v_i's step has the wrong sign
  hn-embed-new-w     ∇_{v_i} formed with the already updated W_h
  hn-w-new-v         W_h's outer product formed with the updated v_i
  hn-embed-alpha     v_i steps with α instead of α_v
  hn-bias-frozen     b_h never moves
  hn-embed-frozen    v_i never moves
  hn-all-embeddings  every client's embedding takes client i's step
  hn-eval-trained    a client's final model is its last θ̃ (the trained
                     model), not h(v_j; φ)
  hn-one-step        only the first of the K local batches is used
  hn-clip-off        pfedhn.clip = norm configured, no clipping done
  hn-inner-plain     pfedhn.inner_opt = sgd_momentum_wd configured, plain
                     SGD done
  hn-inner-kept      the local momentum buffer survives across rounds
  hn-outer-plain     pfedhn.outer_opt = sgd_momentum_wd configured, plain
                     SGD done
  hn-outer-sampled   momentum and weight decay only on the sampled
                     client's embedding (the other rows kept)
"""
import math
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact, exact_vec

MUTANTS = {
    "pfedhn-sign": ["hn-ascent", "hn-embed-ascent"],
    "pfedhn-simultaneous": ["hn-embed-new-w", "hn-w-new-v"],
    "pfedhn-embed-rate": ["hn-embed-alpha"],
    "pfedhn-bias": ["hn-bias-frozen"],
    "pfedhn-embedding": ["hn-embed-frozen", "hn-all-embeddings"],
    "pfedhn-eval-model": ["hn-eval-trained"],
    "pfedhn-local-steps": ["hn-one-step"],
    "pfedhn-clip": ["hn-clip-off"],
    "pfedhn-inner-opt": ["hn-inner-plain", "hn-inner-kept"],
    "pfedhn-outer-opt": ["hn-outer-plain", "hn-outer-sampled"],
}

SCALE = 10 ** 70
CODE = {"pfedhn.outer_momentum": 0.9, "pfedhn.outer_wd": 1e-3,
        "pfedhn.inner_momentum": 0.9, "pfedhn.inner_wd": 5e-5,
        "pfedhn.clip_norm": 50.0}
OFFICIAL = {"pfedhn.outer_opt": "sgd_momentum_wd",
            "pfedhn.inner_opt": "sgd_momentum_wd", "pfedhn.clip": "norm"}


def sqrt70(q):
    """√q exactly when it is rational, else a rational within 10⁻⁷⁰·√q."""
    try:
        return px.exact_sqrt(q)
    except ValueError:
        return Fraction(math.isqrt(q.numerator * q.denominator * SCALE * SCALE),
                        q.denominator * SCALE)


Q80 = 10 ** 80


def q80(x):
    """x to the nearest multiple of 10⁻⁸⁰."""
    return Fraction(round(x * Q80), Q80)


def clip(g, c):
    """g · min(1, c / (‖g‖ + 1e-6)), 1e-6 at its double's value."""
    eps = exact(1e-6)
    n2 = sum(x * x for x in g)
    if c <= eps or (c - eps) * (c - eps) >= n2:
        return g                          # coef >= 1: unchanged
    coef = q80(c / (sqrt70(n2) + eps))
    return [q80(x * coef) for x in g]


class SoftmaxProblem:
    """The softmax target for the local steps: θ = (W (k×d, row-major),
    b (k) with the bias), z_c = Σ_a W_ca x_a + b_c, loss −log p_y with
    p = softmax(z), the batch mean; ∇_W = Σ (p − e_y) xᵀ / |B|,
    ∇_b = Σ (p − e_y) / |B|.  p with 60-digit decimals (after subtracting
    max z), the gradient on the grid 10⁻⁸⁰."""

    def __init__(self, model, clients):
        self.d, self.k = model["d"], model["k"]
        self.bias = bool(model.get("bias", False))
        self.P = self.k * self.d + (self.k if self.bias else 0)
        self.clients = [([exact_vec(x) for x in c["X"]],
                         [int(y) for y in c["y"]]) for c in clients]

    def grad(self, i, theta, batch, bugs=frozenset()):
        import decimal
        X, Y = self.clients[i]
        d, k = self.d, self.k
        g = [Fraction(0)] * self.P
        with decimal.localcontext() as ctx:
            ctx.prec = 60
            for j in batch:
                x, y = X[j], Y[j]
                z = [sum(theta[c * d + a] * x[a] for a in range(d))
                     + (theta[k * d + c] if self.bias else 0)
                     for c in range(k)]
                top = max(z)
                ez = [decimal.Decimal((q - top).numerator)
                      / decimal.Decimal((q - top).denominator) for q in z]
                ez = [x.exp() for x in ez]
                tot = sum(ez)
                prob = [Fraction(x / tot) for x in ez]
                for c in range(k):
                    err = prob[c] - (1 if c == y else 0)
                    for a in range(d):
                        g[c * d + a] += err * x[a]
                    if self.bias:
                        g[k * d + c] += err
        return [q80(x / len(batch)) for x in g]


def problem(spec):
    if spec["model"]["kind"] == "softmax":
        assert spec["model"].get("loss", "cross_entropy") == "cross_entropy"
        return SoftmaxProblem(spec["model"], spec["problem"]["clients"])
    # bn.running, bn.running_var: how a training pass moves a batch norm's
    # r_μ, r_v (entries of θ̃, so of Δθ)
    return px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        spec["algorithm"].get("switches", {}))


def hypernetwork(spec):
    """(W_h rows, b_h or None, [v_j]) exact, from init.hypernetwork."""
    h = spec["init"]["hypernetwork"]
    W = [exact_vec(row) for row in h["W"]]
    b = exact_vec(h["b"]) if "b" in h else None
    V = [exact_vec(row) for row in h["v"]]
    return W, b, V


def h_of(W, b, v):
    """θ = W v (+ b): θ_p = Σ_c W_pc v_c + b_p."""
    return [sum(Wp[c] * v[c] for c in range(len(v))) + (b[p] if b else 0)
            for p, Wp in enumerate(W)]


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp, sw = alg["hyperparameters"], alg.get("switches", {})
    eta, alpha = exact(hp["eta"]), exact(hp["alpha"])
    alpha_v = exact(hp["pfedhn.alpha_v"]) if "pfedhn.alpha_v" in hp else alpha
    if "hn-embed-alpha" in bugs:
        alpha_v = alpha
    bias = sw.get("pfedhn.hn_bias", "on") == "on"
    if alg.get("preset", "paper") == "official":
        sw = dict(OFFICIAL, **sw)
    code = {k: exact(hp.get(k, v)) for k, v in CODE.items()}
    inner_mom = sw.get("pfedhn.inner_opt", "sgd") == "sgd_momentum_wd" \
        and "hn-inner-plain" not in bugs
    outer_mom = sw.get("pfedhn.outer_opt", "sgd") == "sgd_momentum_wd" \
        and "hn-outer-plain" not in bugs
    clipping = sw.get("pfedhn.clip", "off") == "norm" and "hn-clip-off" not in bugs
    B_out, b_in = None, None
    pr = problem(spec)
    softmax = spec["model"]["kind"] == "softmax"
    W, b, V = hypernetwork(spec)
    assert (b is not None) == bias
    P, e, N = len(W), len(V[0]), len(V)             # req: pfedhn.alg1.l1
    assert P == pr.P and N == len(pr.clients)
    trained = {}
    import pflref_exact_optim as po
    # opt.decay_scope = shared / personal reads the spec's split (the
    # target model's blocks; docs/optimizers.md)
    personal = None
    if spec.get("split", {}).get("personal"):
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 1, personal, bugs=bugs)
    assert opt is None or not (inner_mom or clipping or softmax)
    trace = Trace()
    sgn = -1 if "hn-ascent" in bugs else 1
    # req: pfedhn.alg1.l2
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        assert len(rnd["clients"]) == 1
        i = rnd["clients"][0]                                 # req: pfedhn.alg1.l3
        steps = rnd["batches"][0]
        if "hn-one-step" in bugs:
            steps = steps[:1]
        theta = h_of(W, b, V[i])                              # req: pfedhn.alg1.l4
        trace.emit("client_begin", "train", t, i, 0, "theta", theta)
        if inner_mom or clipping:
            tt = list(theta)                                  # req: pfedhn.alg1.l5
            if "hn-inner-kept" not in bugs or b_in is None:
                b_in = None
            # req: pfedhn.alg1.l6, pfedhn.alg1.l7
            for k, batch in enumerate(steps, start=1):
                g = pr.grad(i, tt, batch)
                if clipping:
                    g = clip(g, code["pfedhn.clip_norm"])
                if inner_mom:
                    d = [g[p] + code["pfedhn.inner_wd"] * tt[p] for p in range(P)]
                    b_in = d if b_in is None else \
                        [code["pfedhn.inner_momentum"] * b_in[p] + d[p] for p in range(P)]
                    g = b_in
                tt = [tt[p] - eta * g[p] for p in range(P)]
                if clipping or softmax:
                    tt = [q80(x) for x in tt]
                    b_in = b_in and [q80(x) for x in b_in]
                trace.emit("step", "train", t, i, k, "theta", tt)
        elif softmax:
            tt = list(theta)                                  # req: pfedhn.alg1.l5
            # req: pfedhn.alg1.l6, pfedhn.alg1.l7
            for k, batch in enumerate(steps, start=1):
                g = pr.grad(i, tt, batch)
                tt = [q80(tt[p] - eta * g[p]) for p in range(P)]  # req: pfedhn.alg1.l8
                trace.emit("step", "train", t, i, k, "theta", tt)
        else:   # req: pfedhn.alg1.l6, pfedhn.alg1.l7
            if opt is not None:                  # opt.*: its optimizer
                opt.begin(i)
            tt = px.local_sgd(pr, i, theta, steps, eta, trace, "train", t,
                              "theta", bugs=model_bugs(bugs),  # req: pfedhn.alg1.l8
                              opt=None if opt is None else opt.stepper(i, 0))
        trace.emit("client_end", "train", t, i, None, "theta", tt)
        trained[i] = tt
        delta = [a - c for a, c in zip(tt, theta)]            # req: pfedhn.alg1.l9
        trace.emit("note", "train", t, i, None, "delta_theta", delta)
        if outer_mom or clipping:
            d_eff = [-x for x in delta] if "hn-ascent" in bugs else delta
            W, b, V, B_out = code_step(W, b, V, i, d_eff, bias, alpha, alpha_v,
                                       outer_mom, clipping, code, B_out, bugs)
            if softmax and not clipping:   # code_step rounds with clipping
                W = [[q80(x) for x in row] for row in W]
                b = b and [q80(x) for x in b]
                V = [[q80(x) for x in row] for row in V]
                B_out = B_out and [q80(x) for x in B_out]
            trace.emit("note", "train", t, i, None, "W_h",
                       [x for row in W for x in row])
            if bias:
                trace.emit("note", "train", t, i, None, "b_h", b)
            trace.emit("note", "train", t, i, None, "embedding", V[i])
            continue
        v_old = list(V[i])
        # l. 11's direction W_hᵀ Δθ_i at the old W_h; req: pfedhn.alg1.l11
        g_v = [sum(W[p][c] * delta[p] for p in range(P)) for c in range(e)]
        esgn = -sgn if "hn-embed-ascent" in bugs else sgn
        v_new = [v_old[c] + esgn * alpha_v * g_v[c] for c in range(e)]
        v_for_w = v_new if "hn-w-new-v" in bugs else v_old
        # l. 10: W_h += α Δθ_i v_iᵀ, b_h += α Δθ_i; req: pfedhn.alg1.l10
        W = [[W[p][c] + sgn * alpha * delta[p] * v_for_w[c] for c in range(e)]
             for p in range(P)]
        if bias and "hn-bias-frozen" not in bugs:
            b = [b[p] + sgn * alpha * delta[p] for p in range(P)]
        if "hn-embed-new-w" in bugs:
            g_v = [sum(W[p][c] * delta[p] for p in range(P)) for c in range(e)]
            v_new = [v_old[c] + esgn * alpha_v * g_v[c] for c in range(e)]
        trace.emit("note", "train", t, i, None, "W_h",
                   [x for row in W for x in row])
        if bias:
            trace.emit("note", "train", t, i, None, "b_h", b)
        if "hn-embed-frozen" in bugs:
            v_new = v_old
        if "hn-all-embeddings" in bugs:
            step = [v_new[c] - v_old[c] for c in range(e)]
            V = [[V[j][c] + step[c] for c in range(e)] for j in range(N)]
        V[i] = v_new
        if softmax:          # the state on the grid 10⁻⁸⁰ (see above)
            W = [[q80(x) for x in row] for row in W]
            b = b and [q80(x) for x in b]
            V = [[q80(x) for x in row] for row in V]
        trace.emit("note", "train", t, i, None, "embedding", V[i])
    # req: pfedhn.alg1.l12
    trace.state = (W, b, V)         # the final (W_h, b_h, [v_j]), for tests
    final = [h_of(W, b, V[j]) for j in range(N)]
    if "hn-eval-trained" in bugs:
        final = [trained.get(j, final[j]) for j in range(N)]
    return trace, None, final, None


def code_step(W, b, V, i, delta, bias, alpha, alpha_v, momentum, clipping,
               code, B, bugs):
    """The code's l. 10-11: the dense gradient G of (W_h, b_h, V) at the
    round start, clipped, then plain SGD or torch's momentum step with
    weight decay on every entry.  Returns (W, b, V, B)."""
    P, e, N = len(W), len(V[0]), len(V)
    GW = [[-delta[p] * V[i][c] for c in range(e)] for p in range(P)]
    Gb = [-delta[p] for p in range(P)] if bias else []
    GV = [[Fraction(0)] * e for _ in range(N)]
    GV[i] = [-sum(W[p][c] * delta[p] for p in range(P)) for c in range(e)]
    if "hn-embed-ascent" in bugs:
        GV[i] = [-x for x in GV[i]]
    G = [x for row in GW for x in row] + Gb + [x for row in GV for x in row]
    X = [x for row in W for x in row] + (list(b) if bias else []) + \
        [x for row in V for x in row]
    if clipping:
        G = clip(G, code["pfedhn.clip_norm"])
    nphi = P * e + (P if bias else 0)
    lr = [alpha] * nphi + [alpha_v] * (N * e)
    if momentum:
        wd, mu = code["pfedhn.outer_wd"], code["pfedhn.outer_momentum"]
        D = [G[k] + wd * X[k] for k in range(len(X))]
        B = D if B is None else [mu * B[k] + D[k] for k in range(len(X))]
        step = list(B)
        if "hn-outer-sampled" in bugs:
            for j in range(N):
                if j != i:
                    for c in range(e):
                        step[nphi + j * e + c] = Fraction(0)
    else:
        step = G
    X = [X[k] - lr[k] * step[k] for k in range(len(X))]
    if clipping:
        X = [q80(x) for x in X]
        B = B and [q80(x) for x in B]
    W = [X[p * e:(p + 1) * e] for p in range(P)]
    if bias:
        b = X[P * e:nphi]
    V = [X[nphi + j * e:nphi + (j + 1) * e] for j in range(N)]
    return W, b, V, B


def model_bugs(bugs):
    """A layer list's own bugs (pflref_exact_layers.MUTANTS), which act in
    its gradient (plain inner SGD only)."""
    import pflref_exact_layers as pl
    return frozenset(bugs) & pl.ALL_BUGS


def supported(spec):
    return (spec["algorithm"]["name"] == "pfedhn"
            and (spec["model"]["kind"] in ("quadratic", "linear", "mlp",
                                           "softmax")
                 or (spec["model"]["kind"] == "layers"
                     and spec["model"].get("loss") in ("squared", "half_squared")))
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
