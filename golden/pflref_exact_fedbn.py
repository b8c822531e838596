# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedbn.py: FedBN (Li, Jiang, Zhang, Kamp, Dou, ICLR
2021, arXiv 2102.07623v2, Alg. 1) on the mlp with batch normalisation, in
60-digit decimal arithmetic (the square root of the batch variance is
irrational in general), written from shared/spec notes-fedbn-fedfomo.md
§1.2-1.5 and independently of ref/models/mlp.c and ref/algorithms/fedbn.c:

  - the BN backward goes through the full Jacobian of the normalisation,
    ∂x̂_b/∂a_c = (δ_bc − 1/m − x̂_b x̂_c/m)/s (notes §1.3, the first form),
    an O(m²) sum per feature; the C uses the compact form
    (γ/(m s)) (m G_b − Σ G − x̂_b Σ G x̂);
  - the running statistics move after each batch's forward pass, PyTorch's
    rule r ← (1 − ρ) r + ρ · statistic with the unbiased m/(m − 1) s²_B;
  - every input double is converted exactly (Decimal(float)).

replay(spec, bugs) -> (trace, w, v, None) runs a spec as written (given
schedule; model mlp with "bn": true, init zeros or given; or a layer list,
"kind": "layers", through golden/pflref_exact_layers.py in 60-digit decimals,
init given, the local BN blocks those of every batchnorm layer), with the
switches bn.running (update | frozen: the running statistics left as they
are), bn.running_var (= fedbn.running_var: either set to biased chooses s²_B)
and a client optimizer opt.* (golden/pflref_exact_optim.py's step, one
optimizer per client update, its state kept as opt.state says; it steps the
parameters, never r_μ, r_v); MUTANTS maps each flag to the bugs of its
class, each a plausible wrong implementation:

  bn-batch-variance     unbiased-norm-var (m − 1 in the normalising
                        variance)
  bn-eps-placement      eps-outside-root (s = √s² + ε)
  bn-backward           no-stat-backward (δ = γ G/s: the batch statistics
                        treated as constants)
  fedbn-bn-averaged     bn-averaged (γ, β, r_μ, r_v averaged like the rest),
                        bn-local-when-shared (under fedbn.bn = shared)
  bn-running-update     momentum-flipped (r ← ρ r + (1 − ρ) stat),
                        running-var-flipped (the other of s²_B and
                        m/(m − 1) s²_B into r_v), running-in-training
                        (the forward of training on r_μ, r_v)
  aggregation-weights   weights=uniform, weights=samples
  loss-scale            loss-x2 (the squared losses' constant factor doubled:
                        2 (ŷ − y) for ½(ŷ − y)², 4 (ŷ − y) for (ŷ − y)²)
  schedule-drawn-order  drawn-batches (the round's batch lists paired with
                        the drawn order instead of the ascending clients)
  lr-schedule           lr-ignored, lr-shifted (pflref_exact.round_factor)
  lr-count              lr-per-round: lr.count = trainings read as rounds
  (optimizer flags)     pflref_exact_optim.py's bugs (state-reset, ...)

Standard library only; run with /usr/bin/python3.
"""
from decimal import Decimal, getcontext

import pflref_exact as pe
import pflref_golden as pg

getcontext().prec = 60

# The smallest |u| a relu decided on since the last reset (the generators
# keep every relu decision away from its kink: a coincidence check), and
# how many decisions were taken exactly on it (u = 0) or within 1e-3 of it
# but not on it (a kink vector sits on it on purpose, never near it).
STATS = {"min_u": None, "on": 0, "near": 0}

MUTANTS = {
    "bn-batch-variance": ["unbiased-norm-var"],
    "bn-eps-placement": ["eps-outside-root"],
    "bn-backward": ["no-stat-backward"],
    "fedbn-bn-averaged": ["bn-averaged", "bn-local-when-shared"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped",
                          "running-in-training"],
    "aggregation-weights": ["weights=uniform", "weights=samples"],
    "loss-scale": ["loss-x2"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
}

D0, D1 = Decimal(0), Decimal(1)


def dec(x):
    return Decimal(float(x))


class Model:
    """The spec's mlp with bn: sizes, loss, the layout (torch state_dict
    order: W1, b1, γ, β, r_μ, r_v, W2, b2)."""

    def __init__(self, m):
        assert m["kind"] == "mlp" and m.get("bn") is True, m
        self.d, self.h = m["d"], m["h"]
        self.loss = m.get("loss", "cross_entropy")
        self.k = m.get("k", 1)
        self.bias = m.get("bias", True)
        self.hidden_bias = m.get("hidden_bias", self.bias)
        self.relu = m.get("activation", "relu") == "relu"
        self.eps = dec(m.get("bn_eps", 1e-5))
        self.rho = dec(m.get("bn_momentum", 0.1))
        d, h, k = self.d, self.h, self.k
        off, self.at = 0, {}
        for name, size, on in (("W1", h * d, True), ("b1", h, self.hidden_bias),
                               ("gamma", h, True), ("beta", h, True),
                               ("r_mu", h, True), ("r_v", h, True),
                               ("W2", k * h, True), ("b2", k, self.bias)):
            self.at[name] = off
            off += size if on else 0
        self.P = off
        self.bn = set(range(self.at["gamma"], self.at["W2"]))

    def reset_bn(self, w):
        h = self.h
        for q in range(h):
            w[self.at["gamma"] + q], w[self.at["beta"] + q] = D1, D0
            w[self.at["r_mu"] + q], w[self.at["r_v"] + q] = D0, D1


def forward(M, w, X, bugs):
    """Training-mode forward on the batch rows X: the pre-BN a, x̂, s, μ,
    s², the post-activation φ, the outputs z."""
    d, h, k, m = M.d, M.h, M.k, len(X)
    a = [[sum((w[M.at["W1"] + q * d + c] * x[c] for c in range(d)), D0)
          + (w[M.at["b1"] + q] if M.hidden_bias else D0) for q in range(h)]
         for x in X]
    mu, var, s, xh = [], [], [], [[D0] * h for _ in range(m)]
    for q in range(h):
        if "running-in-training" in bugs:
            mq, vq = w[M.at["r_mu"] + q], w[M.at["r_v"] + q]
        else:
            mq = sum((a[j][q] for j in range(m)), D0) / m
            ss = sum(((a[j][q] - mq) ** 2 for j in range(m)), D0)
            vq = ss / (m - 1 if "unbiased-norm-var" in bugs else m)
        sq = (vq.sqrt() + M.eps if "eps-outside-root" in bugs
              else (vq + M.eps).sqrt())
        mu.append(mq)
        var.append(vq)
        s.append(sq)
        for j in range(m):
            xh[j][q] = (a[j][q] - mq) / sq
    u = [[w[M.at["gamma"] + q] * xh[j][q] + w[M.at["beta"] + q] for q in range(h)]
         for j in range(m)]
    if M.relu:
        low = min(abs(x) for row in u for x in row)
        if STATS["min_u"] is None or low < STATS["min_u"]:
            STATS["min_u"] = low
        STATS["on"] += sum(1 for row in u for x in row if x == 0)
        STATS["near"] += sum(1 for row in u for x in row
                             if 0 < abs(x) <= Decimal("0.001"))
    phi = [[(x if x > 0 else D0) if M.relu else x for x in row] for row in u]
    z = [[sum((w[M.at["W2"] + o * h + q] * phi[j][q] for q in range(h)), D0)
          + (w[M.at["b2"] + o] if M.bias else D0) for o in range(k)]
         for j in range(m)]
    return a, xh, s, mu, var, u, phi, z


def output_signal(M, z, y, bugs=frozenset()):
    """∂ℓ/∂z per sample."""
    if M.loss == "cross_entropy":
        top = max(z)
        e = [(zi - top).exp() for zi in z]
        tot = sum(e, D0)
        return [e[o] / tot - (D1 if o == int(y) else D0) for o in range(M.k)]
    scale = (2 if M.loss == "squared" else 1) * (2 if "loss-x2" in bugs else 1)
    return [scale * (z[0] - y)]


def grad(M, w, X, Y, bugs):
    """∇ of the batch-mean loss; the running statistics' entries 0."""
    d, h, k, m = M.d, M.h, M.k, len(X)
    a, xh, s, mu, var, u, phi, z = forward(M, w, X, bugs)
    E = [output_signal(M, z[j], Y[j], bugs) for j in range(m)]
    g = [D0] * M.P
    for o in range(k):
        for q in range(h):
            g[M.at["W2"] + o * h + q] = sum((E[j][o] * phi[j][q] for j in range(m)), D0) / m
        if M.bias:
            g[M.at["b2"] + o] = sum((E[j][o] for j in range(m)), D0) / m
    # G_j = ∂ℓ_j/∂u_j (relu: 0 where u ≤ 0)
    G = [[sum((E[j][o] * w[M.at["W2"] + o * h + q] for o in range(k)), D0)
          if (u[j][q] > 0 or not M.relu) else D0 for q in range(h)] for j in range(m)]
    for q in range(h):
        gam = w[M.at["gamma"] + q]
        g[M.at["gamma"] + q] = sum((G[j][q] * xh[j][q] for j in range(m)), D0) / m
        g[M.at["beta"] + q] = sum((G[j][q] for j in range(m)), D0) / m
        # ∂F/∂a_c = (1/m) Σ_b G_b γ ∂x̂_b/∂a_c, the Jacobian form
        for c in range(m):
            if "no-stat-backward" in bugs:
                delta = G[c][q] * gam / s[q]
            else:
                delta = sum((G[b][q] * gam * ((D1 if b == c else D0) - D1 / m
                                               - xh[b][q] * xh[c][q] / m) / s[q]
                             for b in range(m)), D0)
            for col in range(d):
                g[M.at["W1"] + q * d + col] += delta * X[c][col] / m
            if M.hidden_bias:
                g[M.at["b1"] + q] += delta / m
    return g, mu, var, m


def running(M, w, mu, var, m, unbiased, bugs):
    rho = M.rho
    for q in range(M.h):
        if unbiased != ("running-var-flipped" in bugs):
            vq = var[q] * m / (m - 1)
        else:
            vq = var[q]
        keep, take = ((rho, D1 - rho) if "momentum-flipped" in bugs
                      else (D1 - rho, rho))
        w[M.at["r_mu"] + q] = keep * w[M.at["r_mu"] + q] + take * mu[q]
        w[M.at["r_v"] + q] = keep * w[M.at["r_v"] + q] + take * vq


def initial(M, init):
    kind = init.get("kind", "zeros")
    if kind == "given":
        return [dec(x) for x in init["w"]]
    assert kind == "zeros", kind
    w = [D0] * M.P
    M.reset_bn(w)
    return w


def supported(spec):
    m = spec.get("model", {})
    return (spec["algorithm"]["name"] == "fedbn"
            and ((m.get("kind") == "mlp" and m.get("bn") is True)
                 or m.get("kind") == "layers")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given"
            and spec.get("init", {"kind": "zeros"}).get("kind") in ("zeros", "given"))


class _MlpSteps:
    """The mlp's parameter count, BN entries, start and one batch's
    gradient and running-statistics update, for replay."""

    def __init__(self, spec):
        self.M = M = Model(spec["model"])
        self.P, self.bn = M.P, M.bn

    def initial(self, init):
        return initial(self.M, init)

    def step(self, th, X, Y, unbiased, bugs, move=True):
        """∇F at th; th's running statistics moved (in place, when move)."""
        g, mu, var, m = grad(self.M, th, X, Y, bugs)
        if move:
            running(self.M, th, mu, var, m, unbiased, bugs)
        return g

    def opt_blocks(self):
        """(name, indices) of the parameter blocks, r_μ and r_v left out."""
        at, M = self.M.at, self.M
        out = []
        for name, nxt in (("W1", "b1"), ("b1", "gamma"), ("gamma", "beta"),
                          ("beta", "r_mu"), ("W2", "b2"), ("b2", None)):
            end = at[nxt] if nxt is not None else M.P
            if end > at[name]:
                out.append((name, list(range(at[name], end))))
        return out


class _LayersSteps:
    """The same for a layer list (golden/pflref_exact_layers.py, 60-digit
    decimals): the bn group is every batchnorm layer's γ, β, r_μ, r_v."""

    def __init__(self, spec):
        import pflref_exact_layers as pl
        self.M = pl.Model(spec["model"], "decimal")
        self.P, self.bn = self.M.P, self.M.bn_entries()

    def initial(self, init):
        assert init.get("kind") == "given", "a layers model starts from init.w"
        return [dec(x) for x in init["w"]]

    def step(self, th, X, Y, unbiased, bugs, move=True):
        g, caches = self.M.grad(th, X, Y, bugs)
        if move:
            self.M.update_running(th, caches, unbiased, bugs)
        return g

    def opt_blocks(self):
        return [(b["name"], list(range(o, o + b["size"])))
                for b, o in self.M.block_offsets() if not b["is_buffer"]]


class _Optimizer:
    """The client optimizer of a FedBN spec (opt.*), through
    golden/pflref_exact_optim.py: its step in exact fractions on the
    parameter blocks (θ and g converted exactly from the 60-digit decimals,
    the result back to them), one optimizer per client update, its state's
    lifetime opt.state.  on = 0 when every opt.* keeps its default."""

    def __init__(self, spec, M, bugs):
        import pflref_exact_optim as po
        self.po, self.bugs = po, bugs
        self.on = po.uses_optimizer(spec)
        self.c = po.config(spec["algorithm"])
        self.view = type("OptView", (), {"opt_blocks": M.opt_blocks()})()
        self.states = po.States(self.c, M.P, bugs)
        # a spec's split (block names): the mask opt.decay_scope = shared /
        # personal reads (docs/optimizers.md); none: every block shared
        self.personal = None
        if "split" in spec:
            names = spec["split"]["personal"]
            self.personal = [0] * M.P
            for name, idx in M.opt_blocks():
                for p in idx:
                    self.personal[p] = 1 if name in names else 0

    def begin(self, k):
        if self.on:
            self.states.begin(k)

    def step(self, k, g, th, eta):
        from fractions import Fraction
        new = self.po.step(self.c, self.states.get(k), self.view,
                           [Fraction(x) for x in g], [Fraction(x) for x in th],
                           Fraction(eta), self.bugs, personal=self.personal)
        return [Decimal(q.numerator) / Decimal(q.denominator) for q in new]


# The preset pfllib as read from TsingZ0/PFLlib d832e76f6a23 (clientbn.py:
# set_parameters skips the parameters named "bn", so γ, β and the running
# statistics stay each client's; serverbase.py's receive_models weighs by
# train_samples): n_k / Σ n_j weights, the rest the paper's.
# clientbn.py:39-40 with clientbase.py: -ld's ExponentialLR steps at the end
# of the client's own train(), so lr.count = trainings.
PRESETS = {"pfllib": {"fedbn.weights": "samples", "lr.count": "trainings"}}


def switches(algorithm):
    """The algorithm's switches with its preset spelt out (the explicit
    ones win)."""
    preset = algorithm.get("preset", "paper")
    base = {} if preset == "paper" else PRESETS[preset]
    return dict(base, **algorithm.get("switches", {}))


def replay(spec, bugs=frozenset()):
    """FedBN on the spec's given schedule: (trace, w, v, None)."""
    M = (_LayersSteps if spec["model"]["kind"] == "layers" else _MlpSteps)(spec)
    sw = switches(spec["algorithm"])
    eta = dec(spec["algorithm"]["hyperparameters"]["eta"])
    weights = sw.get("fedbn.weights", "uniform")
    for b in bugs:
        if b.startswith("weights="):
            weights = b.split("=", 1)[1]
    local = sw.get("fedbn.bn", "local") == "local"
    if "bn-averaged" in bugs and local:
        local = False
    elif "bn-local-when-shared" in bugs and not local:
        local = True
    # fedbn.running_var and bn.running_var are one switch
    unbiased = (sw.get("fedbn.running_var", "unbiased") == "unbiased"
                and sw.get("bn.running_var", "unbiased") == "unbiased")
    move = sw.get("bn.running", "update") == "update"
    if "running-frozen" in bugs:
        move = False
    opt = _Optimizer(spec, M, bugs)
    # the learning-rate decay (lr.*): η of client k's train() in round t is
    # η c, c = pflref_exact.round_factor's γ^(t, or k's trainings before)
    decay = {"switches": sw,
             "hyperparameters": spec["algorithm"]["hyperparameters"]}
    clients = [([[dec(x) for x in row] for row in c["X"]], [dec(y) for y in c["y"]])
               for c in spec["problem"]["clients"]]
    w = M.initial(spec.get("init", {"kind": "zeros"}))
    v = [list(w) for _ in clients]
    trace = pg.Trace()
    trained = [0] * len(clients)
    # req: fedbn.alg1.l1, fedbn.alg1.l3
    for t, r in enumerate(spec["schedule"]["rounds"]):
        trace.emit("round_begin", "train", t, None, None, "w", w)
        m_t = sum(len(clients[k][1]) for k in r["clients"])
        acc = [D0] * M.P
        owners = (r.get("drawn", r["clients"]) if "drawn-batches" in bugs
                  else r["clients"])
        plan = sorted(zip(owners, r["batches"]))
        for k, batches in plan:
            X, Y = clients[k]
            th = [v[k][p] if (local and p in M.bn) else w[p] for p in range(M.P)]
            trace.emit("client_begin", "train", t, k, 0, "v", th)
            opt.begin(k)
            c_t = pe.round_factor(decay, t, bugs, trained=trained[k])
            eta_k = eta * Decimal(c_t.numerator) / Decimal(c_t.denominator)
            trained[k] += 1
            for q, idx in enumerate(batches):
                g = M.step(th, [X[i] for i in idx], [Y[i] for i in idx], unbiased,
                           bugs, move)
                # req: fedbn.alg1.l2
                th = (opt.step(k, g, th, eta_k) if opt.on
                      else [th[p] - eta_k * g[p] for p in range(M.P)])
                trace.emit("step", "train", t, k, q + 1, "v", th)
            trace.emit("client_end", "train", t, k, None, "v", th)
            # req: fedbn.alg1.l5
            for p in M.bn:
                v[k][p] = th[p]
            # req: fedbn.alg1.l4
            c = (Decimal(len(Y)) / m_t if weights == "samples"
                 else D1 / len(r["clients"]))
            acc = [acc[p] + c * th[p] for p in range(M.P)]
        w = [w[p] if (local and p in M.bn) else acc[p] for p in range(M.P)]
        trace.emit("server", "train", t, None, None, "w", w)
        v = [[vi[p] if (local and p in M.bn) else w[p] for p in range(M.P)]
             for vi in v]
    return trace, w, v, None
