# SPDX-License-Identifier: GPL-3.0-or-later
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
  running-frozen   batch normalisation's running statistics never moved in
                   training where bn.running = update (the default) asks
                   PyTorch's train() rule after every gradient pass
  running-moved    they move where bn.running = frozen is configured

Batch normalisation (layer lists with a batchnorm layer): the local solver
local_sgd moves the iterate's running statistics after each gradient pass,
r ← (1 − ρ) r + ρ · batch statistic (PyTorch's train(); Problem.bn_switches
reads bn.running and bn.running_var), so FedAvg's average then averages
them with the rest of w (a torch state_dict average); buffers never step
(the proximal term skips them).

pFedMe (Dinh et al. 2020, Alg. 1), its inner loop alone ("prox") and Ditto
(Li et al. 2021, Alg. 1) add (the names above keep their meaning where they
apply: prox-plus flips the sign of every proximal term, prox-ref-moving
makes the inner loop's reference its own iterate, restart-w0 starts the
local copy from w0, loss-x2 / batch-sum / init-zeros as above):

  theta-start-flip pFedMe / prox: θ reset where warm is configured, or
                   carried over where reset is configured
  inner-plus-one, inner-minus-one
                   K + 1 / K − 1 inner steps on each batch
  pfedme-ref-wt    pFedMe's inner prox pulls toward the round's w_t instead
                   of the current local copy w_{i,r}
  beta-one         pFedMe's β treated as 1
  personal-eval=theta, personal-eval=local_w, personal-eval=global
                   pFedMe reports that personalised model instead of the
                   configured one
  uniform-weights  (pFedMe, Ditto) 1/|S| where n_i/Σ_S n_j is configured
  samples-weights  (pFedMe, Ditto) n_i/Σ_S n_j where 1/|S| is configured
  aggregate-all    pFedMe: every trainer's w_{i,R} is averaged, not only S^t
  train-all        pFedMe with train = sampled: every client trains (full
                   batches, as many as the first trainer); Ditto: unselected
                   clients train and are aggregated, as FedAvg's train-all
  train-sampled    pFedMe with train = all: only S^t trains
  ditto-ref-moving Ditto's prox against the moving global copy w_k where
                   round_start is configured
  ditto-ref-round-start
                   Ditto's prox against w^t where moving is configured
  ditto-order-flip interleaved_shared_batch <-> personal_first
  prox-form-flip   Ditto's regulariser squared <-> norm
  reset-personal   (Ditto) v_k reset to w0 at every round it takes part in
  personal-from-global
                   Ditto: v_k ← w^t at the start of every round
"""
from fractions import Fraction

from pflref_golden import Trace, exact, exact_vec

NO_BUGS = frozenset()


class Problem:
    """A spec's model and clients, exact.  model: the spec's "model"
    object; clients: the spec's client objects.

    Models (docs/models.md): quadratic; linear; layers (the layer list of
    pflref_exact_layers.py); and the mlp

        a = W1 x (+ b1),  phi = sigma(a),  z = W2 phi (+ b2)

    with sigma = relu (relu'(0) = 0, relu'' = 0) or identity, parameters
    in the layout W1 (h x d, row-major), b1 (h) if hidden_bias, W2 (k x h),
    b2 (k) if bias, and the spec's defaults (activation relu, bias true,
    hidden_bias = bias, loss cross_entropy, k = 1 for a squared loss).
    Exact gradients exist for the regression mlp (half_squared, squared:
    k = 1, z = y-hat); the cross-entropy mlp has P and features but no
    exact gradient (softmax is not rational): grad raises
    NotImplementedError for it.  For the mlp, `bias` means b2."""

    def __init__(self, model, clients):
        self.kind = model["kind"]
        if self.kind == "layers":
            self._init_layers(model, clients)
            return
        self.d = model["d"]
        self.bias = bool(model.get("bias", False))
        self.loss = model.get("loss")
        self.P = self.d + (1 if self.bias else 0)
        if self.kind == "mlp":
            self.bias = bool(model.get("bias", True))
            self.hidden_bias = bool(model.get("hidden_bias", self.bias))
            self.activation = model.get("activation", "relu")
            assert self.activation in ("relu", "identity"), self.activation
            self.loss = model.get("loss", "cross_entropy")
            self.h = model["h"]
            self.k = model.get("k", 1)
            h, d, k = self.h, self.d, self.k
            self.P = (h * d + (h if self.hidden_bias else 0)
                      + k * h + (k if self.bias else 0))
        self.clients = []
        for c in clients:
            if self.kind == "quadratic":
                self.clients.append({"a": exact_vec(c["a"]), "c": exact_vec(c["c"]),
                                     "n": c.get("n", 1)})
            else:
                X = [exact_vec(row) for row in c["X"]]
                self.clients.append({"X": X, "y": exact_vec(c["y"]), "n": len(X)})

    def _init_layers(self, model, clients):
        """A layer list (pflref_exact_layers.py): exact fractions when every
        layer is rational, else 60-digit decimals inside grad (its result
        converted exactly, so the algorithms stay in Fraction)."""
        import pflref_exact_layers as pl
        self.layers = pl.Model(model)
        self.d, self.P, self.loss = self.layers.d, self.layers.P, self.layers.loss
        self.buffers = frozenset(
            o + q for b, o in self.layers.block_offsets() if b["is_buffer"]
            for q in range(b["size"]))
        self.bias = False
        self.clients = []
        for c in clients:
            data = pl.ClientData(self.layers, c)
            self.clients.append({"data": data, "n": data.n})

    # bn.running = update | frozen, bn.running_var = unbiased | biased
    # (docs/formats.md): the defaults are PyTorch's train() semantics.
    bn_running = "update"
    bn_unbiased = True
    buffers = frozenset()       # entries of r_μ, r_v (layer lists)

    def bn_switches(self, switches):
        """Take bn.running and bn.running_var from a spec's switches (a
        dict); returns self."""
        self.bn_running = switches.get("bn.running", "update")
        self.bn_unbiased = switches.get("bn.running_var", "unbiased") == "unbiased"
        return self

    def move_running(self, k, theta, batch, bugs=NO_BUGS):
        """theta with its running statistics moved by the training-mode
        forward pass on client k's batch (PyTorch's rule,
        pflref_exact_layers.Model.update_running), or theta itself when
        the model has no batchnorm layer or under bn.running = frozen."""
        if self.kind != "layers" or not self.buffers:
            return theta
        frozen = self.bn_running == "frozen"
        if "running-frozen" in bugs:
            frozen = True
        if "running-moved" in bugs:
            frozen = False
        if frozen:
            return theta
        import pflref_exact_layers as pl
        return pl.running_exact(self.layers, self.clients[k]["data"], theta,
                                batch, self.bn_unbiased, bugs)

    def n(self, k):
        return self.clients[k]["n"]

    def _X(self, c, bugs):
        """The client's rows, or (transpose-x) X read column-major."""
        X, n, d = c["X"], c["n"], self.d
        if "transpose-x" in bugs:
            flat = [x for row in X for x in row]
            X = [[flat[j * n + i] for j in range(d)] for i in range(n)]
        return X

    def _mlp_params(self, theta):
        """(W1, b1, W2, b2) of the mlp's theta: W1 (h rows of d), W2 (k rows
        of h); an absent bias is returned as zeros."""
        h, d, k = self.h, self.d, self.k
        zero = Fraction(0)
        W1 = [list(theta[u * d:(u + 1) * d]) for u in range(h)]
        o = h * d
        b1 = list(theta[o:o + h]) if self.hidden_bias else [zero] * h
        o += h if self.hidden_bias else 0
        W2 = [list(theta[o + c * h:o + (c + 1) * h]) for c in range(k)]
        o += k * h
        b2 = list(theta[o:o + k]) if self.bias else [zero] * k
        return W1, b1, W2, b2

    def _sigma(self, a):
        return a if self.activation == "identity" or a > 0 else Fraction(0)

    def _sigma_prime(self, a):
        # relu'(0) = 0 (PyTorch's convention)
        return 1 if self.activation == "identity" or a > 0 else 0

    def _hidden(self, x, W1, b1):
        """a = W1 x + b1 (the pre-activations)."""
        return [b1[u] + sum(W1[u][p] * x[p] for p in range(self.d))
                for u in range(self.h)]

    def features(self, k, theta):
        """The mlp's features phi_j = sigma(W1 x_j + b1) of every sample j of
        client k, in index order (a list of n lists of h)."""
        assert self.kind == "mlp", self.kind
        W1, b1, _, _ = self._mlp_params(theta)
        return [[self._sigma(a) for a in self._hidden(x, W1, b1)]
                for x in self.clients[k]["X"]]

    def grad(self, k, theta, batch, bugs=NO_BUGS):
        """g = ∇F_k(theta; batch), F the mean over the batch of the
        per-sample loss (shared/spec README rule 3)."""
        c = self.clients[k]
        if self.kind == "layers":
            import pflref_exact_layers as pl
            return pl.grad_exact(self.layers, c["data"], theta, batch, bugs)
        if self.kind == "quadratic":
            # f(θ) = ½ Σ_j a_j (θ_j − c_j)²  →  g_j = a_j (θ_j − c_j)
            s = 2 if "loss-x2" in bugs else 1
            return [s * a * (t - cc) for a, t, cc in zip(c["a"], theta, c["c"])]
        if self.kind == "mlp":
            return self._mlp_grad(c, theta, batch, bugs)
        assert self.kind == "linear"
        X, y, d = self._X(c, bugs), c["y"], self.d
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

    def _mlp_grad(self, c, theta, batch, bugs):
        """The regression mlp's gradient, in theta's layout.  Per sample,
        with r = ŷ − y and ∂ℓ/∂ŷ = s·r (s = 2 squared, 1 half_squared):
            ∂/∂W2 = s r φᵀ,  ∂/∂b2 = s r,
            δ = (W2ᵀ s r) ⊙ σ'(a),  ∂/∂W1 = δ xᵀ,  ∂/∂b1 = δ;
        then the mean over the batch (batch-sum: the sum; bias-sum: the
        biases' sum)."""
        if self.loss not in ("squared", "half_squared"):
            raise NotImplementedError(
                "the %s mlp has no exact gradient (softmax is not rational); "
                "only half_squared and squared are exact" % self.loss)
        assert self.k == 1, self.k
        h, d = self.h, self.d
        X, y = self._X(c, bugs), c["y"]
        W1, b1, W2, b2 = self._mlp_params(theta)
        s = 2 if self.loss == "squared" else 1
        if "loss-x2" in bugs:
            s = 3 - s
        scale = Fraction(s) if "batch-sum" in bugs else Fraction(s, len(batch))
        bs = Fraction(s) if "bias-sum" in bugs else scale
        gW1 = [[Fraction(0)] * d for _ in range(h)]
        gb1 = [Fraction(0)] * h
        gW2 = [Fraction(0)] * h
        gb2 = Fraction(0)
        for j in batch:
            x = X[j]
            a = self._hidden(x, W1, b1)
            phi = [self._sigma(au) for au in a]
            r = b2[0] + sum(W2[0][u] * phi[u] for u in range(h)) - y[j]
            gb2 += r
            for u in range(h):
                gW2[u] += r * phi[u]
                delta = W2[0][u] * r * self._sigma_prime(a[u])
                gb1[u] += delta
                for p in range(d):
                    gW1[u][p] += delta * x[p]
        g = [scale * v for row in gW1 for v in row]
        if self.hidden_bias:
            g += [bs * v for v in gb1]
        g += [scale * v for v in gW2]
        if self.bias:
            g.append(bs * gb2)
        return g


def split_batches(n, B, E, bugs=NO_BUGS):
    """Alg. 1 line 11: split 0..n-1 once, in index order, into batches of B
    (None = the full batch), ragged last batch kept; E epochs over them."""
    # req: fedavg.alg1.l11, fedavg.alg1.l12, fedavg.alg1.l13
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
              mu=Fraction(0), ref=None, mask=None, bugs=NO_BUGS, opt=None):
    """θ ← θ − η (∇F_k(θ; D_s) + μ (θ − ref)) on the entries with mask 1,
    one step per batch D_s; a "step" record after each.  opt: a client
    optimizer's step (pflref_exact_optim.Optimizers.stepper), handed
    d = ∇F_k(θ; D_s) + μ (θ − ref) on the moving entries in place of the
    plain step; None = plain SGD."""
    theta = list(theta)
    # req: fedavg.alg1.l14, local.eq2, finetune.eq3, interp.eq2
    for s, batch in enumerate(steps, start=1):
        g = pr.grad(k, theta, batch, bugs)
        # the same training pass moves r_μ, r_v (bn.running = update)
        theta = pr.move_running(k, theta, batch, bugs)
        r = theta if "prox-ref-moving" in bugs else ref
        if opt is not None:
            moving = None if "scope-full" in bugs else mask
            d = list(g)
            for p in range(pr.P):
                if mu and (moving is None or moving[p]):
                    prox = mu * (theta[p] - r[p])
                    d[p] = d[p] - prox if "prox-plus" in bugs else d[p] + prox
            theta = opt(d, theta, eta, moving)
            trace.emit("step", phase, rnd, k, s, name, theta)
            continue
        new = list(theta)
        for p in range(pr.P):
            if mask is not None and not mask[p] and "scope-full" not in bugs:
                continue
            if "bias-frozen" in bugs and pr.bias and p == pr.d:
                continue
            step = g[p]
            if mu and p not in pr.buffers:     # buffers never step
                prox = mu * (theta[p] - r[p])
                step = step - prox if "prox-plus" in bugs else step + prox
            new[p] = theta[p] - eta * step
        theta = new
        trace.emit("step", phase, rnd, k, s, name, theta)
    return theta


def round_factor(algorithm, t, bugs=NO_BUGS, trained=None, call=0, calls=1):
    """c_t, the factor of every step size in round t (0-based) under the
    spec's learning-rate decay (ref/engine/lr.c's switches, written from
    shared/spec/notes-pfllib-as-run.md §2.2: PFLlib's ExponentialLR stepped
    once after each train(), so round t trains with eta gamma^t):
      lr.schedule = constant: 1;  exponential: gamma^k;
      step: gamma^floor(k / lr.step_rounds),
    k the scheduler steps before: t, or with lr.count = trainings the
    client's own train() calls before (`trained`, the rounds it trained in
    so far: PFLlib steps a client's scheduler only when it trains); with
    `calls` train() calls a round (Per-FedAvg's PFLlib server calls it
    twice) k = calls * (t or trained) + call.
    gamma at the exact value of its double.  Bugs: lr-ignored (c_t = 1),
    lr-shifted (the scheduler stepped before the round: t + 1),
    lr-per-round (lr.count = trainings read as rounds), lr-one-call (the
    two calls of a round decayed as one)."""
    sw = algorithm.get("switches", {})
    hp = algorithm.get("hyperparameters", {})
    schedule = sw.get("lr.schedule", "constant")
    if schedule == "constant" or "lr-ignored" in bugs:
        return Fraction(1)
    if (sw.get("lr.count", "rounds") == "trainings" and trained is not None
            and "lr-per-round" not in bugs):
        t = trained
    if "lr-one-call" in bugs:
        call, calls = 0, 1
    t = calls * t + call
    if "lr-shifted" in bugs:
        t += 1
    gamma = Fraction(hp.get("lr.gamma", 1.0))
    if schedule == "exponential":
        return gamma ** t
    return gamma ** (t // int(hp.get("lr.step_rounds", 1)))


def fedavg_round(pr, w, w0, t, plan, eta, weights, trace, bugs=NO_BUGS,
                 opt=None, own=None, first_upload=None):
    """One round of FedAvg (McMahan et al. 2017, Alg. 1).  plan: list of
    (client, batches) for S_t ascending.  opt: the run's client optimizers
    (pflref_exact_optim.Optimizers; ClientUpdate's is slot 0), or None.
    own: under bn.aggregate = parameters_only (PFLlib's clientbase.py:67-69
    set_parameters and serverbase.py:138-150 aggregate_parameters touch
    parameters() only), {client: its model as it last left it}, updated
    here: a client starts from w's parameters and its own r_μ, r_v, and
    w_{t+1}'s r_μ, r_v are the first uploader's (first_upload, the
    round's recorded uploaded_models[0], when given; else the lowest id);
    None: the state_dict average.  Returns w_{t+1}."""
    # req: fedavg.alg1.l1, fedavg.alg1.l3, finetune.eq1, interp.eq1
    trace.emit("round_begin", "train", t, None, None, "w", w)
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        plan = [(k, dict(plan).get(k) or [list(range(pr.n(k)))] * steps0)
                for k in range(len(pr.clients))]
    local = {}
    # req: fedavg.alg1.l6
    for k, steps in plan:
        start = w0 if "restart-w0" in bugs else w
        if own is not None and "start-global-buffers" not in bugs:
            held = w0 if "start-w0-buffers" in bugs else own.get(k, w0)
            start = [held[p] if p in pr.buffers else x for p, x in enumerate(start)]
        trace.emit("client_begin", "train", t, k, 0, "w_local", start)
        # req: fedavg.alg1.l7, fedavg.alg1.l10
        eta_k = (eta.get(k, max(eta.values())) if isinstance(eta, dict)
                 else eta)                      # per client (lr.count)
        if opt is not None:
            opt.begin(k)
        wk = local_sgd(pr, k, start, steps, eta_k, trace, "train", t, "w_local", bugs=bugs,
                       opt=None if opt is None else opt.stepper(k, 0))
        # req: fedavg.alg1.l15
        trace.emit("client_end", "train", t, k, None, "w_local", wk)
        local[k] = wk
        if own is not None:
            own[k] = list(wk)
    N = len(pr.clients)
    n_all = sum(pr.n(k) for k in range(N))
    if "uniform-weights" in bugs:
        weights = "uniform"
    if "keep-old" in bugs:
        weights = "all_keep_old"
    # req: fedavg.alg1.l8
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
    # req: fedavg.alg1.l9
    new = [sum(c[k] * local[k][p] for k in sorted(local)) for p in range(pr.P)]
    if own is not None and "global-buffers-averaged" not in bugs:
        # the global is a deepcopy of the first upload, parameters() summed
        first = plan[-1][0] if "global-buffers-last" in bugs else plan[0][0]
        if first_upload is not None and not bugs & {"global-buffers-last",
                                                    "first-upload-ignored"}:
            first = first_upload
        new = [local[first][p] if p in pr.buffers else x for p, x in enumerate(new)]
    trace.emit("server", "train", t, None, None, "w", new)
    return new


def local_round(pr, v, w0, t, plan, eta, trace, bugs=NO_BUGS, opt=None):
    """One round of local-only training: each participant i runs local SGD
    from its own persistent v_i; the others keep theirs.  opt: the client
    optimizers (slot 0), or None."""
    v = [list(vi) for vi in v]
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        plan = [(k, dict(plan).get(k) or [list(range(pr.n(k)))] * steps0)
                for k in range(len(pr.clients))]
    # req: local.eq1
    for i, steps in plan:
        if "reset-personal" in bugs:
            v[i] = list(w0)
        trace.emit("client_begin", "train", t, i, 0, "v", v[i])
        eta_i = (eta.get(i, max(eta.values())) if isinstance(eta, dict)
                 else eta)                      # per client (lr.count)
        if opt is not None:
            opt.begin(i)
        v[i] = local_sgd(pr, i, v[i], steps, eta_i, trace, "train", t, "v", bugs=bugs,
                         opt=None if opt is None else opt.stepper(i, 0))
        trace.emit("client_end", "train", t, i, None, "v", v[i])
    return v


def finetune_phase(pr, w, w0, post, eta_ft, mu_ft, mask, trace, bugs=NO_BUGS,
                   opt=None):
    """Every client i: θ_i ← w, then S_ft steps
    θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w)) on the mask's entries
    (shared/spec notes §5.1).  opt: the client optimizers (the fine-tuning's
    is slot 1, new at each client under opt.state = reset), or None.
    Returns [θ_0, ..., θ_{N−1}]."""
    thetas = []
    ref = w0 if "prox-ref-w0" in bugs else w
    for i, steps in enumerate(post):
        # req: finetune.eq2
        theta = list(w0 if "finetune-w0" in bugs else w)
        trace.emit("client_begin", "finetune", None, i, 0, "theta", theta)
        # req: finetune.eq3
        if opt is not None:
            opt.begin(i)
        theta = local_sgd(pr, i, theta, steps, eta_ft, trace, "finetune", None,
                          "theta", mu=mu_ft, ref=ref, mask=mask, bugs=bugs,
                          opt=None if opt is None else opt.stepper(i, 1))
        trace.emit("client_end", "finetune", None, i, None, "theta", theta)
        # req: finetune.eq4
        thetas.append(theta)
    return thetas


def initial(init, P, bugs=NO_BUGS):
    """w0 from the spec's "init" (zeros or given)."""
    # req: fedavg.alg1.l2, pfedme.alg1.l1, ditto.alg1.l1, local.eq1
    if init["kind"] == "zeros" or "init-zeros" in bugs:
        return [Fraction(0)] * P
    assert init["kind"] == "given"
    return exact_vec(init["w"])


def schedule_json(rounds):
    """The given schedule's rounds: [(clients, batches per client)]."""
    return [{"clients": [k for k, _ in plan], "batches": [b for _, b in plan]}
            for plan in rounds]


def with_drawn(rounds, drawn):
    """The given schedule's rounds (JSON form) with round t's "drawn" order
    drawn[t] written after "clients" and "selected" (docs/formats.md: the
    selected ids in the order a sampler produced them; information only,
    batches[j] still belongs to clients[j]).  drawn[t] None: no field."""
    out = []
    for r, d in zip(rounds, drawn):
        sel = r.get("selected", r["clients"])
        assert d is None or sorted(d) == list(sel), (d, sel)
        keys = ["clients", "selected"] + (["drawn"] if d is not None else [])
        keys += [k for k in r if k not in keys]
        out.append({k: (d if k == "drawn" else r[k]) for k in keys if k == "drawn" or k in r})
    return out


def misread_drawn(rounds):
    """The rounds a candidate effectively runs when it pairs batches[j] with
    drawn[j] instead of clients[j] (the bug a permuted drawn order exposes):
    the same rounds, each participant given the batches written for the
    client at its position in drawn.  Only rounds whose selected = clients."""
    out = []
    for r in rounds:
        assert "selected" not in r or r["selected"] == r["clients"]
        d = r.get("drawn", r["clients"])
        plan = dict(zip(d, r["batches"]))
        out.append(dict(r, batches=[plan[k] for k in r["clients"]]))
    return out


def spec_misread_drawn(spec):
    """The spec with its given rounds replaced by misread_drawn's."""
    sched = dict(spec["schedule"], rounds=misread_drawn(spec["schedule"]["rounds"]))
    return dict(spec, schedule=sched)


def plans_of(rounds):
    """[(client, batches)] per round, from the given schedule's rounds."""
    return [list(zip(r["clients"], r["batches"])) for r in rounds]


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


# ------------------------------------------- pFedMe, its inner loop, Ditto

# The switches' paper values (shared/spec README.md, algorithms table;
# notes §2(f), §3(f), §8) and the presets' bundles (notes §2(e)-(f), §3(c),
# §3(f)); explicit hyperparameters and switches override a preset.
SWITCH_DEFAULTS = {
    "prox": {"pfedme.theta_start": "reset"},
    "pfedme": {"pfedme.theta_start": "reset", "pfedme.weights": "uniform",
               "pfedme.train": "all", "pfedme.personal_eval": "theta",
               "pfedme.eval_reset": "none", "bn.aggregate": "average"},
    "ditto": {"ditto.order": "interleaved_shared_batch", "ditto.prox": "squared",
              "ditto.prox_ref": "round_start", "ditto.weights": "samples",
              "ditto.batches": "shared", "bn.aggregate": "average"},
}
HYPER_DEFAULTS = {"prox": {"pfedme.mu": 0}, "pfedme": {"beta": 1, "pfedme.mu": 0},
                  "ditto": {}}
PRESETS = {
    ("pfedme", "official"): {"pfedme.theta_start": "warm", "pfedme.mu": 0.001,
                             "pfedme.weights": "samples", "pfedme.train": "all",
                             "pfedme.personal_eval": "local_w"},
    ("pfedme", "pfllib"): {"pfedme.theta_start": "warm", "pfedme.mu": 0.001,
                           "pfedme.weights": "samples", "pfedme.train": "sampled",
                           "pfedme.personal_eval": "global",
                           # -ld: each client's scheduler, on η_p only
                           "lr.scope": "eta_p", "lr.count": "trainings",
                           # clientpFedMe.py:74-77, serverbase.py:138-150,
                           # serverpFedMe.py:88-91: parameters() only
                           "bn.aggregate": "parameters_only"},
    ("ditto", "official"): {"ditto.order": "interleaved_shared_batch",
                            "ditto.prox": "squared", "ditto.prox_ref": "round_start",
                            "ditto.weights": "uniform"},
    ("ditto", "pfllib"): {"ditto.order": "personal_first", "ditto.prox": "squared",
                          "ditto.prox_ref": "round_start", "ditto.weights": "samples",
                          # PFLlib's ptrain() iterates its own loader for -pls
                          # epochs (notes-pfllib-as-run §2.3, Ditto)
                          "ditto.batches": "separate",
                          # -ld: each client's schedulers step when it trains
                          "lr.count": "trainings",
                          # serverditto.py sends and aggregates through
                          # serverbase.py: parameters() only
                          "bn.aggregate": "parameters_only"},
    # PFLlib's serverpFedMe.train() as shipped: the preset pfllib and the
    # evaluation before each round's training, whose side effect starts a
    # client's first θ at w⁰ (serverpFedMe.py evaluate_personalized)
    ("pfedme", "pfllib_run"): {"pfedme.theta_start": "warm",
                               "pfedme.mu": 0.001,
                               "pfedme.weights": "samples",
                               "pfedme.train": "sampled",
                               "pfedme.personal_eval": "global",
                               "lr.scope": "eta_p", "lr.count": "trainings",
                               "pfedme.eval_reset": "initial",
                               "bn.aggregate": "parameters_only"},
}


def settings(algorithm):
    """(hyperparameters, switches) of a spec's "algorithm" object for prox,
    pfedme and ditto: defaults, then the preset, then the explicit settings.
    Hyperparameters are exact (K an int); switches are strings."""
    name = algorithm["name"]
    hp, sw = dict(HYPER_DEFAULTS[name]), dict(SWITCH_DEFAULTS[name])
    preset = algorithm.get("preset", "paper")
    if preset != "paper":
        for k, v in PRESETS[(name, preset)].items():
            (sw if isinstance(v, str) else hp)[k] = v
    hp.update(algorithm.get("hyperparameters", {}))
    sw.update(algorithm.get("switches", {}))
    return {k: (int(v) if k == "K" else exact(v)) for k, v in hp.items()}, sw


def prox_steps(pr, k, theta, batch, ref, lam, eta_p, K, mu, trace, rnd, step0,
               bugs=NO_BUGS, opt=None):
    """pFedMe Alg. 1 l. 7 with the experiments' solver: K gradient steps of
    h(θ) = f(θ; D) + (λ/2)‖θ − ref‖² (+ (μ/2)‖θ‖², the official code's term)
        θ ← θ − η_p (∇f(θ; D) + λ(θ − ref) + μθ),
    a "step" record "theta" numbered step0 + k after each.  Each step's
    training pass moves θ's running statistics (bn.running = update,
    Problem.move_running: the θ model's K forwards in torch); buffers
    never step.  opt: the inner solver's optimizer
    (pflref_exact_optim.Optimizers.stepper), handed d = ∇f(θ; D) +
    λ(θ − ref) + μθ at step size η_p in place of the plain step; None =
    plain."""
    theta = list(theta)
    if "inner-plus-one" in bugs:
        K += 1
    if "inner-minus-one" in bugs:
        K -= 1
    sign = -1 if "prox-plus" in bugs else 1
    # req: pfedme.alg1.l7, pfedme.eq7, prox.alg1.l7, prox.eq7
    for s in range(1, K + 1):
        g = pr.grad(k, theta, batch, bugs)
        theta = pr.move_running(k, theta, batch, bugs)
        r = theta if "prox-ref-moving" in bugs else ref
        d = [gp + sign * lam * (th - rp) + mu * th
             for th, gp, rp in zip(theta, g, r)]
        if opt is not None:
            theta = opt(d, theta, eta_p, None)
        else:
            theta = [th if p in pr.buffers else th - eta_p * dp
                     for p, (th, dp) in enumerate(zip(theta, d))]
        trace.emit("step", "train", rnd, k, step0 + s, "theta", theta)
    return theta


def has_prox_point(pr):
    """θ̂ is computed exactly when f(θ; D) is quadratic in θ."""
    return pr.kind == "quadratic" or (pr.kind == "linear" and
                                      pr.loss in ("squared", "half_squared"))


def solve(A, b):
    """x with A x = b, exactly (Gauss-Jordan on Fractions; A nonsingular)."""
    n = len(b)
    M = [list(row) + [bi] for row, bi in zip(A, b)]
    for c in range(n):
        p = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[i][n] / M[i][i] for i in range(n)]


def prox_point(pr, k, batch, ref, lam, mu, bugs=NO_BUGS):
    """θ̂ = argmin_θ f(θ; D) + (λ/2)‖θ − ref‖² + (μ/2)‖θ‖² (Dinh et al. 2020,
    eq. (3)/(7)), exactly: ∇f(θ; D) = H θ + g_0 is affine, so θ̂ solves
    (H + (λ + μ) I) θ = λ ref − g_0; H and g_0 are read off the gradient at
    0 and at the unit vectors."""
    P = pr.P
    # req: pfedme.eq3, prox.eq3
    g0 = pr.grad(k, [Fraction(0)] * P, batch, bugs)
    cols = []
    for j in range(P):
        e = [Fraction(1 if i == j else 0) for i in range(P)]
        cols.append([a - b for a, b in zip(pr.grad(k, e, batch, bugs), g0)])
    A = [[cols[j][i] + (lam + mu if i == j else 0) for j in range(P)]
         for i in range(P)]
    return solve(A, [lam * r - g for r, g in zip(ref, g0)])


def _flip_start(start, bugs):
    if "theta-start-flip" in bugs:
        return "warm" if start == "reset" else "reset"
    return start


def prox_round(pr, v, w, t, plan, hp, sw, trace, bugs=NO_BUGS, opt=None,
               lr_counts=None):
    """One round of "prox", pFedMe's inner loop alone (seed 003's worked
    example): the reference w is the initial point and never changes; each
    participant i starts from θ = w (reset) or its θ of the last round
    (warm), runs prox_steps on each of its batches, and after each batch a
    "note" records the exact θ̂ on that batch.  v_i = θ.  opt: the inner
    solver's Optimizers (one slot; begin at each participation), or None.
    lr.* (client_factor): η_p, the one step size, times c_t (every
    lr.scope but no_beta, which is all here, decays it); lr_counts: the
    clients' trainings before (lr.count = trainings).  Returns v."""
    v = [list(vi) for vi in v]
    lam, eta_p0, K, mu = hp["lambda"], hp["eta_p"], hp["K"], hp["pfedme.mu"]
    start = _flip_start(sw["pfedme.theta_start"], bugs)
    exact_point = has_prox_point(pr) and lam + mu > 0
    for i, steps in plan:
        eta_p = eta_p0 * client_factor(hp, sw, t, i, lr_counts, bugs)
        # req: prox.alg1.l7
        theta = list(w) if start == "reset" else v[i]
        trace.emit("client_begin", "train", t, i, 0, "theta", theta)
        if opt is not None:
            opt.begin(i)
        step = None if opt is None else opt.stepper(i, 0)
        for q, batch in enumerate(steps):
            theta = prox_steps(pr, i, theta, batch, w, lam, eta_p, K, mu, trace,
                               t, q * K, bugs, step)
            if exact_point:
                # req: prox.eq3
                trace.emit("note", "train", t, i, (q + 1) * K, "theta_hat",
                           prox_point(pr, i, batch, w, lam, mu, bugs))
        trace.emit("client_end", "train", t, i, None, "theta", theta)
        v[i] = theta
    return v


def _weights(configured, bugs):
    if "uniform-weights" in bugs:
        return "uniform"
    if "samples-weights" in bugs:
        return "samples"
    return configured


def client_factor(hp, sw, t, i, lr_counts, bugs):
    """c of client i's train() in round t under lr.* (round_factor), with
    lr_counts[i] its trainings before (lr.count = trainings), then counted
    one up; lr_counts None: the round."""
    k = None if lr_counts is None else lr_counts.get(i, 0)
    c = round_factor({"switches": sw, "hyperparameters": hp}, t, bugs,
                     trained=k)
    if lr_counts is not None:
        lr_counts[i] = lr_counts.get(i, 0) + 1
    return c


def pfedme_round(pr, w, v, w0, t, plan, selected, hp, sw, trace, bugs=NO_BUGS,
                 trained=None, lr_counts=None, opt=None, held=None):
    """One round of pFedMe (Dinh et al. 2020, Alg. 1).  plan: [(i, batches)]
    for the trainers (all N with pfedme.train = all), ascending; selected:
    S^t.  Each trainer: w_{i,0} = w_t, θ = w_t; for each batch D_{i,r}:
    θ ← w_{i,r} (reset) or kept (warm), K inner steps toward w_{i,r},
    w_{i,r+1} = w_{i,r} − ηλ(w_{i,r} − θ).  Server:
    w_{t+1} = (1 − β) w_t + β Σ_{S^t} c_i w_{i,R}.  A trainer's reported
    personalised model is its last θ, or w_{i,R}; with "global" every client
    reports w_{t+1}.  pfedme.eval_reset = initial (PFLlib's evaluation
    defect, shared/spec/notes-pfllib-as-run.md §2.3): a trainer that has
    never trained before (not in the set `trained`, which this round adds
    its trainers to) starts theta at w0, not w_t.  Bugs: eval-reset-ignored,
    eval-reset-every-round (theta from w0 at every training).
    Learning-rate decay (lr.*, client_factor): trainer i's η_p is η_p c and
    its η is η c, or η with lr.scope = eta_p (PFLlib's scheduler wraps
    pFedMeOptimizer only).  Bug lr-scope-flip: the other scope.
    opt: the inner solver's Optimizers (one slot, begun at each trainer's
    update, opt.state), or None: plain steps.  A model with batch
    normalisation: θ's K training passes per batch move its r_μ, r_v
    (prox_steps) and line 8 steps the parameters only, w_{i,r+1} taking θ's
    statistics (the uploaded model is the θ model, whose buffers those
    passes moved; line 10 then mixes them like every entry of w).  Bug
    bn-stats-of-w: w_{i,r+1}'s statistics moved by line 8 like parameters.
    held: under bn.aggregate = parameters_only on a model with batch
    normalisation (PFLlib: clientpFedMe.py:74-77 set_parameters,
    serverbase.py:138-150, serverpFedMe.py:88-91 move parameters() only),
    {i: client i's model}: w_{i,0} and theta start from w_t's parameters
    with its running statistics (w0's before it first trains), held[i]
    takes w_{i,R} after the update, w_{t+1}'s statistics are the first
    uploader's (no beta mixing), and "global" reports w_{t+1}'s parameters
    with each client's own statistics.  Bugs start-global-buffers,
    start-w0-buffers, global-buffers-averaged, global-buffers-last.
    Returns (w_{t+1}, v)."""
    scope = sw.get("lr.scope", "all")
    if "lr-scope-flip" in bugs:
        scope = "all" if scope == "eta_p" else "eta_p"
    reset_first = sw.get("pfedme.eval_reset", "none") == "initial" \
        and "eval-reset-ignored" not in bugs
    if trained is None:
        trained = set()
    lam, eta_p, K, mu = hp["lambda"], hp["eta_p"], hp["K"], hp["pfedme.mu"]
    eta = hp["eta"]
    beta = Fraction(1) if "beta-one" in bugs else hp["beta"]
    start = _flip_start(sw["pfedme.theta_start"], bugs)
    weights = _weights(sw["pfedme.weights"], bugs)
    pe = sw["pfedme.personal_eval"]
    for b in bugs:
        if b.startswith("personal-eval="):
            pe = b.split("=", 1)[1]
    if "train-sampled" in bugs:
        plan = [(i, st) for i, st in plan if i in selected]
    if "train-all" in bugs:
        R0 = len(plan[0][1])
        have = dict(plan)
        plan = [(i, have.get(i) or [list(range(pr.n(i)))] * R0)
                for i in range(len(pr.clients))]
    # req: pfedme.alg1.l2, pfedme.alg1.l3
    trace.emit("round_begin", "train", t, None, None, "w", w)
    v = [list(vi) for vi in v]
    local = {}
    # req: pfedme.alg1.l4
    for i, steps in plan:
        c = client_factor(hp, sw, t, i, lr_counts, bugs)
        eta_i = eta if scope == "eta_p" else eta * c    # η (lr.scope)
        eta_p_i = eta_p * c                             # η_p c
        w_t = w0 if "restart-w0" in bugs else w
        # req: pfedme.alg1.l5
        wl, theta = list(w_t), list(w_t)
        if held is not None and "start-global-buffers" not in bugs:
            mine = w0 if "start-w0-buffers" in bugs else held.get(i, w0)
            wl = [mine[p] if p in pr.buffers else x for p, x in enumerate(wl)]
            theta = list(wl)
        if reset_first and (i not in trained or "eval-reset-every-round" in bugs):
            theta = list(w0)
        trained.add(i)
        trace.emit("client_begin", "train", t, i, 0, "w_local", wl)
        if opt is not None:
            opt.begin(i)
        step = None if opt is None else opt.stepper(i, 0)
        # req: pfedme.alg1.l6
        for r, batch in enumerate(steps):
            if start == "reset":
                theta = list(wl)
            ref = w_t if "pfedme-ref-wt" in bugs else wl
            # req: pfedme.alg1.l7
            theta = prox_steps(pr, i, theta, batch, ref, lam, eta_p_i, K, mu,
                               trace, t, r * K, bugs, step)
            # req: pfedme.alg1.l8, pfedme.moreau_grad
            wl = [th if p in pr.buffers and "bn-stats-of-w" not in bugs
                  else a - eta_i * lam * (a - th)
                  for p, (a, th) in enumerate(zip(wl, theta))]
            trace.emit("step", "train", t, i, r + 1, "w_local", wl)
        trace.emit("client_end", "train", t, i, None, "w_local", wl)
        trace.emit("client_end", "train", t, i, None, "theta", theta)
        if pe == "theta":
            v[i] = theta
        elif pe == "local_w":
            v[i] = wl
        local[i] = wl
        if held is not None:
            held[i] = list(wl)
    # req: pfedme.alg1.l9
    S = sorted(local) if "aggregate-all" in bugs else [i for i in sorted(local)
                                                       if i in selected]
    if weights == "samples":
        n_S = sum(pr.n(i) for i in S)
        c = {i: Fraction(pr.n(i), n_S) for i in S}
    else:
        c = {i: Fraction(1, len(S)) for i in S}
    avg = [sum(c[i] * local[i][p] for i in S) for p in range(pr.P)]
    # req: pfedme.alg1.l10
    new = [(1 - beta) * a + beta * b for a, b in zip(w, avg)]
    if held is not None and S and "global-buffers-averaged" not in bugs:
        first = S[-1] if "global-buffers-last" in bugs else S[0]
        new = [held[first][p] if p in pr.buffers else x for p, x in enumerate(new)]
    trace.emit("server", "train", t, None, None, "w", new)
    if pe == "global":
        v = [list(new) for _ in v]
        if held is not None:
            v = [[held.get(i, w0)[p] if p in pr.buffers else x
                  for p, x in enumerate(new)] for i in range(len(v))]
    return new, v


def exact_sqrt(q):
    """√q for a rational q ≥ 0 whose root is rational; refuses otherwise."""
    import math
    a, b = math.isqrt(q.numerator), math.isqrt(q.denominator)
    if a * a != q.numerator or b * b != q.denominator:
        raise ValueError(f"√({q}) is not rational")
    return Fraction(a, b)


def ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs=NO_BUGS,
                personal_lists=None, lr_counts=None, opt=None, held=None):
    """One round of Ditto (Li et al. 2021, Alg. 1) with FedAvg as the global
    solver.  plan: [(k, batches)] for S_t, ascending.  Each k: w_k ← w^t;
    per batch b a personal step v_k ← v_k − η (∇F_k(v_k; b) + λ ∂R(v_k))
    with R = (1/2)‖v − ref‖² (gradient v − ref) or ‖v − ref‖ (gradient
    (v − ref)/‖v − ref‖, 0 at v = ref), ref = w^t (round_start) or the global
    copy w_k as it stands (moving), and a global step
    w_k ← w_k − η ∇F_k(w_k; b); interleaved per batch, or every personal
    step first.  v_k persists.  w^{t+1} = Σ_{S_t} c_k w_k.  ditto.batches =
    separate (PFLlib's ptrain() over its own loader): the personal steps
    take personal_lists[k] (every one of them, first), the global steps
    the plan's batches.  Bug personal-on-global-batches: the personal
    steps on the global pass's batches regardless.  Learning-rate decay
    (lr.*, client_factor): both passes of k step with η c (PFLlib decays
    the personal and the global optimizer alike).  opt: the client
    optimizers (pflref_exact_optim.Optimizers: slot 0 the global solver,
    slot 1 the personal one, PFLlib's optimizer and poptimizer), handed
    ∇F_k(w_k; b) and ∇F_k(v_k; b) + λ ∂R(v_k) in place of the plain steps;
    None = plain SGD.  held: under bn.aggregate = parameters_only on a model
    with buffers (PFLlib's serverditto.py through serverbase.py:
    set_parameters, clientbase.py:67-69, and aggregate_parameters,
    serverbase.py:138-150, move parameters() only), {k: the global copy
    self.model as client k last left it}, updated here: w_k starts from
    w^t's parameters with its held r_μ, r_v (w0's before k first trains),
    and w^{t+1}'s r_μ, r_v are the first participant's; v_k (model_per,
    never sent) is the same under either reading.  None: the state_dict
    average.
    Returns (w^{t+1}, v)."""
    separate = sw.get("ditto.batches", "shared") == "separate"
    if separate:
        assert personal_lists is not None and \
            sw["ditto.order"] == "personal_first", "separate: own lists, first"
    lam, eta = hp["lambda"], hp["eta"]
    order = sw["ditto.order"]
    if "ditto-order-flip" in bugs:
        order = ("personal_first" if order == "interleaved_shared_batch"
                 else "interleaved_shared_batch")
    form = sw["ditto.prox"]
    if "prox-form-flip" in bugs:
        form = "norm" if form == "squared" else "squared"
    moving = sw["ditto.prox_ref"] == "moving"
    if "ditto-ref-moving" in bugs:
        moving = True
    if "ditto-ref-round-start" in bugs:
        moving = False
    weights = _weights(sw["ditto.weights"], bugs)
    sign = -1 if "prox-plus" in bugs else 1
    if "train-all" in bugs:
        steps0 = len(plan[0][1])
        have = dict(plan)
        plan = [(k, have.get(k) or [list(range(pr.n(k)))] * steps0)
                for k in range(len(pr.clients))]
    # req: ditto.alg1.l2, ditto.alg1.l3
    trace.emit("round_begin", "train", t, None, None, "w", w)
    v = [list(vi) for vi in v]
    local = {}
    # req: ditto.alg1.l4
    for k, steps in plan:
        eta = hp["eta"] * client_factor(hp, sw, t, k, lr_counts, bugs)
        wk = list(w0 if "restart-w0" in bugs else w)
        if held is not None and "start-global-buffers" not in bugs:
            mine = w0 if "start-w0-buffers" in bugs else held.get(k, w0)
            wk = [mine[p] if p in pr.buffers else x for p, x in enumerate(wk)]
        if "reset-personal" in bugs:
            v[k] = list(w0)
        if "personal-from-global" in bugs:
            v[k] = list(w)
        trace.emit("client_begin", "train", t, k, 0, "w_local", wk)
        trace.emit("client_begin", "train", t, k, 0, "v", v[k])
        cur = {"w": wk}
        if opt is not None:
            opt.begin(k)

        # req: ditto.alg1.l7, ditto.eq2
        own = steps
        if separate and "personal-on-global-batches" not in bugs:
            own = personal_lists.get(k, steps)

        def personal(q):
            vk, ref = v[k], (cur["w"] if moving else w)
            g = pr.grad(k, vk, own[q], bugs)
            # the pass's running statistics into v (bn.running; a model
            # without batch normalisation: v itself), which the proximal
            # term neither pulls nor counts in its norm (parameters() only)
            moved = pr.move_running(k, vk, own[q], bugs)
            diff = [Fraction(0) if p in pr.buffers else a - b
                    for p, (a, b) in enumerate(zip(vk, ref))]
            vk = moved
            scale = lam
            if form == "norm":
                norm = exact_sqrt(sum(x * x for x in diff))
                scale = lam / norm if norm else Fraction(0)
            if opt is not None:
                d = [gp + sign * scale * x for gp, x in zip(g, diff)]
                v[k] = opt.step(k, 1, d, vk, eta)
            else:
                v[k] = [a - eta * (gp + sign * scale * x) for a, gp, x in zip(vk, g, diff)]
            trace.emit("step", "train", t, k, q + 1, "v", v[k])

        # req: ditto.alg1.l5
        def global_step(q):
            g = pr.grad(k, cur["w"], steps[q], bugs)
            cur["w"] = pr.move_running(k, cur["w"], steps[q], bugs)
            if opt is not None:
                cur["w"] = opt.step(k, 0, g, cur["w"], eta)
            else:
                cur["w"] = [a - eta * gp for a, gp in zip(cur["w"], g)]
            trace.emit("step", "train", t, k, q + 1, "w_local", cur["w"])

        # req: ditto.alg1.l6
        if order == "interleaved_shared_batch":
            for q in range(len(steps)):
                personal(q)
                global_step(q)
        else:
            for q in range(len(own)):
                personal(q)
            for q in range(len(steps)):
                global_step(q)
        # req: ditto.alg1.l8
        trace.emit("client_end", "train", t, k, None, "w_local", cur["w"])
        # req: ditto.alg1.l10
        trace.emit("client_end", "train", t, k, None, "v", v[k])
        local[k] = cur["w"]
        if held is not None:
            held[k] = list(cur["w"])
    if weights == "samples":
        m_t = sum(pr.n(k) for k in local)
        c = {k: Fraction(pr.n(k), m_t) for k in local}
    else:
        c = {k: Fraction(1, len(local)) for k in local}
    # req: ditto.alg1.l9
    new = [sum(c[k] * local[k][p] for k in sorted(local)) for p in range(pr.P)]
    if held is not None and "global-buffers-averaged" not in bugs and local:
        # the global: a deepcopy of uploaded_models[0], parameters() summed
        first = plan[-1][0] if "global-buffers-last" in bugs else plan[0][0]
        new = [local[first][p] if p in pr.buffers else x for p, x in enumerate(new)]
    trace.emit("server", "train", t, None, None, "w", new)
    return new, v


def schedule_rounds(rounds):
    """The given schedule's rounds, with "selected" where S^t is a proper
    subset of the trainers: rounds = [(plan, selected or None)]."""
    out = []
    for plan, selected in rounds:
        r = {"clients": [k for k, _ in plan]}
        if selected is not None and list(selected) != r["clients"]:
            r["selected"] = list(selected)
        r["batches"] = [b for _, b in plan]
        out.append(r)
    return out


def assert_prox_contractive(pr, k, steps, eta_p, lam, mu=Fraction(0)):
    """η_p (λ_max(H) + λ + μ) < 2 on every batch: each inner step is a
    contraction (the tolerance's argument)."""
    for batch in steps:
        assert eta_p * (curvature_bound(pr, k, batch) + lam + mu) < 2, (k, batch)


def replay_personal(spec, bugs=NO_BUGS):
    """Run a spec of prox, pfedme or ditto (quadratic or linear model, given
    schedule) exactly, from the spec as written: model, clients, init,
    preset, hyperparameters, switches, and each round's clients, selected
    and batches.  Returns (w, v, trace).  Bugs that change the schedule
    (epochs-*, ragged-drop) must be applied to the spec's batch lists by the
    caller."""
    alg = spec["algorithm"]["name"]
    hp, sw = settings(spec["algorithm"])
    pr = Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    w0 = initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    sched = spec["schedule"]
    assert sched["kind"] == "given"
    w, v, trace = list(w0), [list(w0) for _ in pr.clients], Trace()
    trained, lr_counts = set(), {}
    # Ditto under bn.aggregate = parameters_only: each client's global copy
    # (pFedMe: each client's θ model)
    held = ({} if alg in ("ditto", "pfedme") and pr.buffers
            and sw.get("bn.aggregate") == "parameters_only" else None)
    opt = None
    if alg in ("ditto", "pfedme", "prox"):
        import pflref_exact_optim as po     # (it imports this module)
        # Ditto: the global and the personal solver; pFedMe, prox: the
        # inner solver (the object that steps θ)
        # opt.decay_scope = shared | personal reads the spec's split
        # (docs/optimizers.md, λ_B), as for every algorithm's optimizer
        personal = None
        if "split" in spec:
            import pflref_exact_pfl as pp
            personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
        opt = po.for_spec(spec, pr, 2 if alg == "ditto" else 1, personal,
                          bugs=bugs)
    for t, r in enumerate(sched["rounds"]):
        plan = list(zip(r["clients"], r["batches"]))
        if alg == "prox":
            v = prox_round(pr, v, w0, t, plan, hp, sw, trace, bugs, opt,
                           lr_counts)
        elif alg == "pfedme":
            w, v = pfedme_round(pr, w, v, w0, t, plan, r.get("selected", r["clients"]),
                                hp, sw, trace, bugs, trained, lr_counts, opt,
                                held)
        else:
            assert alg == "ditto"
            own = (dict(zip(r["clients"], r["personal"])) if "personal" in r
                   else None)
            w, v = ditto_round(pr, w, v, w0, t, plan, hp, sw, trace, bugs, own,
                               lr_counts, opt, held)
    return w, v, trace
