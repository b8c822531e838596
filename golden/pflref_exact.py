"""golden/pflref_exact.py: the algorithms of the golden vectors in exact
rational arithmetic (fractions.Fraction), written from the papers and
shared/spec, independently of the C reference.

Every input is taken at the exact value of the double the spec holds
(pflref_golden.exact), so the only difference between these values and the
reference's is the reference's own rounding.

Each routine accepts `bugs`, a set of names of realistic implementation
mistakes, so a generator can show that a vector's expected numbers move
under every bug class the vector is flagged for (pflref_golden.check_mutants):

  loss-x2          linear: the factor 2 of the squared loss dropped (or one
                   added to half_squared); quadratic: the 1/2 dropped
  transpose-x      X (n x d, row-major) read column-major
  bias-sum         bias gradient summed over the batch instead of averaged
  bias-frozen      the bias never updated
  batch-sum        minibatch gradient summed instead of averaged
  ragged-drop      the ragged last batch dropped
  epochs-plus-one, epochs-minus-one
                   one local epoch too many / too few
  restart-w0       a client starts every round from w0 instead of w_t
  uniform-weights  server weights 1/m instead of n_k/m_t
  all-denominator  server divides by the total of all clients' n_k
  keep-old         unsampled clients contribute w_t (weights n_k/n)
  train-all        unsampled clients train too (same number of full-batch
                   steps as the first participant); FedAvg aggregates them
  reset-personal   local-only: v_i reset to w0 at every round
  init-zeros       the given initial point ignored (zeros used)
  prox-plus        proximal term with the wrong sign
  prox-ref-w0      proximal reference w0 instead of the global w
  prox-ref-moving  proximal reference = the current iterate (term vanishes)
  scope-full       fine-tuning moves every block despite scope = personal
  finetune-w0      fine-tuning starts from w0 instead of the global w
"""
from fractions import Fraction

from pflref_golden import exact, exact_vec

NO_BUGS = frozenset()


class Problem:
    """A spec's model and clients, exact.  model: the spec's "model"
    object; clients: the spec's client objects."""

    def __init__(self, model, clients):
        self.kind = model["kind"]
        self.d = model["d"]
        self.bias = bool(model.get("bias", False))
        self.loss = model.get("loss")
        self.P = self.d + (1 if self.bias else 0)
        self.clients = []
        for c in clients:
            if self.kind == "quadratic":
                self.clients.append({"a": exact_vec(c["a"]), "c": exact_vec(c["c"]),
                                     "n": c.get("n", 1)})
            else:
                X = [exact_vec(row) for row in c["X"]]
                self.clients.append({"X": X, "y": exact_vec(c["y"]), "n": len(X)})

    def n(self, k):
        return self.clients[k]["n"]

    def grad(self, k, theta, batch, bugs=NO_BUGS):
        """g = ∇F_k(theta; batch), F the mean over the batch of the
        per-sample loss (shared/spec README rule 3)."""
        c = self.clients[k]
        if self.kind == "quadratic":
            # f(θ) = ½ Σ_j a_j (θ_j − c_j)²  →  g_j = a_j (θ_j − c_j)
            s = 2 if "loss-x2" in bugs else 1
            return [s * a * (t - cc) for a, t, cc in zip(c["a"], theta, c["c"])]
        assert self.kind == "linear"
        X, y, n, d = c["X"], c["y"], c["n"], self.d
        if "transpose-x" in bugs:
            flat = [x for row in X for x in row]
            X = [[flat[j * n + i] for j in range(d)] for i in range(n)]
        w = theta[:d]
        b = theta[d] if self.bias else Fraction(0)
        # ℓ = ½ r² (half_squared) or r² (squared), r = x·w + b − y: ∂ℓ/∂ŷ = s·r
        s = 2 if self.loss == "squared" else 1
        if "loss-x2" in bugs:
            s = 3 - s
        r = {j: sum(X[j][p] * w[p] for p in range(d)) + b - y[j] for j in batch}
        scale = Fraction(s) if "batch-sum" in bugs else Fraction(s, len(batch))
        g = [scale * sum(r[j] * X[j][p] for j in batch) for p in range(d)]
        if self.bias:
            bs = Fraction(s) if "bias-sum" in bugs else scale
            g.append(bs * sum(r[j] for j in batch))
        return g


def split_batches(n, B, E, bugs=NO_BUGS):
    """Alg. 1 line 11: split 0..n-1 once, in index order, into batches of B
    (None = the full batch), ragged last batch kept; E epochs over them."""
    if B is None or B >= n:
        one = [list(range(n))]
    else:
        one = [list(range(i, min(i + B, n))) for i in range(0, n, B)]
        if "ragged-drop" in bugs and len(one[-1]) < B:
            one = one[:-1]
    if "epochs-plus-one" in bugs:
        E += 1
    if "epochs-minus-one" in bugs:
        E -= 1
    return [list(b) for _ in range(E) for b in one]


def local_sgd(pr, k, theta, steps, eta, trace, phase, rnd, name,
              mu=Fraction(0), ref=None, mask=None, bugs=NO_BUGS):
    """θ ← θ − η (∇F_k(θ; D_s) + μ (θ − ref)) on the entries with mask 1,
    one step per batch D_s; a "step" record after each."""
    theta = list(theta)
    for s, batch in enumerate(steps, start=1):
        g = pr.grad(k, theta, batch, bugs)
        r = theta if "prox-ref-moving" in bugs else ref
        new = list(theta)
        for p in range(pr.P):
            if mask is not None and not mask[p] and "scope-full" not in bugs:
                continue
            if "bias-frozen" in bugs and pr.bias and p == pr.d:
                continue
            step = g[p]
            if mu:
                prox = mu * (theta[p] - r[p])
                step = step - prox if "prox-plus" in bugs else step + prox
            new[p] = theta[p] - eta * step
        theta = new
        trace.emit("step", phase, rnd, k, s, name, theta)
    return theta


def fedavg_round(pr, w, w0, t, plan, eta, weights, trace, bugs=NO_BUGS):
    """One round of FedAvg (McMahan et al. 2017, Alg. 1).  plan: list of
    (client, batches) for S_t ascending.  Returns w_{t+1}."""
    trace.emit("round_begin", "train", t, None, None, "w", w)
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        plan = [(k, dict(plan).get(k) or [list(range(pr.n(k)))] * steps0)
                for k in range(len(pr.clients))]
    local = {}
    for k, steps in plan:
        start = w0 if "restart-w0" in bugs else w
        trace.emit("client_begin", "train", t, k, 0, "w_local", start)
        wk = local_sgd(pr, k, start, steps, eta, trace, "train", t, "w_local", bugs=bugs)
        trace.emit("client_end", "train", t, k, None, "w_local", wk)
        local[k] = wk
    N = len(pr.clients)
    n_all = sum(pr.n(k) for k in range(N))
    if "uniform-weights" in bugs:
        weights = "uniform"
    if "keep-old" in bugs:
        weights = "all_keep_old"
    if weights == "samples":                # n_k / m_t, m_t = Σ_{S_t} n_k
        m_t = sum(pr.n(k) for k in local)
        if "all-denominator" in bugs:
            m_t = n_all
        c = {k: Fraction(pr.n(k), m_t) for k in local}
    elif weights == "uniform":              # 1 / m
        c = {k: Fraction(1, len(local)) for k in local}
    else:                                   # n_k / n, unsampled keep w_t
        c = {k: Fraction(pr.n(k), n_all) for k in range(N)}
        local = {k: local.get(k, w) for k in range(N)}
    new = [sum(c[k] * local[k][p] for k in sorted(local)) for p in range(pr.P)]
    trace.emit("server", "train", t, None, None, "w", new)
    return new


def local_round(pr, v, w0, t, plan, eta, trace, bugs=NO_BUGS):
    """One round of local-only training: each participant i runs local SGD
    from its own persistent v_i; the others keep theirs."""
    v = [list(vi) for vi in v]
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        plan = [(k, dict(plan).get(k) or [list(range(pr.n(k)))] * steps0)
                for k in range(len(pr.clients))]
    for i, steps in plan:
        if "reset-personal" in bugs:
            v[i] = list(w0)
        trace.emit("client_begin", "train", t, i, 0, "v", v[i])
        v[i] = local_sgd(pr, i, v[i], steps, eta, trace, "train", t, "v", bugs=bugs)
        trace.emit("client_end", "train", t, i, None, "v", v[i])
    return v


def finetune_phase(pr, w, w0, post, eta_ft, mu_ft, mask, trace, bugs=NO_BUGS):
    """Every client i: θ_i ← w, then S_ft steps
    θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w)) on the mask's entries
    (shared/spec notes §5.1).  Returns [θ_0, ..., θ_{N−1}]."""
    thetas = []
    ref = w0 if "prox-ref-w0" in bugs else w
    for i, steps in enumerate(post):
        theta = list(w0 if "finetune-w0" in bugs else w)
        trace.emit("client_begin", "finetune", None, i, 0, "theta", theta)
        theta = local_sgd(pr, i, theta, steps, eta_ft, trace, "finetune", None,
                          "theta", mu=mu_ft, ref=ref, mask=mask, bugs=bugs)
        trace.emit("client_end", "finetune", None, i, None, "theta", theta)
        thetas.append(theta)
    return thetas


def initial(init, P, bugs=NO_BUGS):
    """w0 from the spec's "init" (zeros or given)."""
    if init["kind"] == "zeros" or "init-zeros" in bugs:
        return [Fraction(0)] * P
    assert init["kind"] == "given"
    return exact_vec(init["w"])


def schedule_json(rounds):
    """The given schedule's rounds: [(clients, batches per client)]."""
    return [{"clients": [k for k, _ in plan], "batches": [b for _, b in plan]}
            for plan in rounds]


def curvature_bound(pr, k, batch):
    """An upper bound on the largest eigenvalue of the batch loss's Hessian
    (its trace for the linear model; max a_j for the quadratic)."""
    c = pr.clients[k]
    if pr.kind == "quadratic":
        return max(c["a"])
    s = 2 if pr.loss == "squared" else 1
    b = 1 if pr.bias else 0
    return Fraction(s, len(batch)) * sum(sum(x * x for x in c["X"][j]) + b for j in batch)


def assert_contractive(pr, k, steps, eta, mu=Fraction(0)):
    """η (λ_max + μ) < 2 on every batch: each step is a contraction
    (|1 − η λ| < 1 on every eigen-direction), so rounding errors of earlier
    steps do not grow (the tolerance's argument)."""
    for batch in steps:
        assert eta * (curvature_bound(pr, k, batch) + mu) < 2, (k, batch)
