# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_lora.py: federated low-rank adapters in exact rational
arithmetic, written from shared/spec notes-lora-pfedhn.md §1-3 and the
papers, independently of the C reference:

  LoRA      Hu et al., ICLR 2022, arXiv 2106.09685v2, eq. (3): W = W0 + s B A,
            s = alpha / r, A (r x d), B (k x r)
  FFA-LoRA  Sun, Li, Li, Ding, ICLR 2024, arXiv 2403.12313: A frozen, only
            B trained and averaged
  HetLoRA   Cho, Liu, Xu, Fahrezi, Joshi, EMNLP 2024, arXiv 2401.06432:
            truncation to r_k, local training with the self-pruning
            regulariser lambda ||B_tail|| ||A_tail||, pruning r_k <- floor(gamma
            r_k) when the tail product decreased, sparsity weights
            ||B_k A_k||_F / sum_j ||B_j A_j||_F, zero-padded averages of B and A
  personal  every client trains its own adapter over the frozen W0; nothing
            is averaged

The adapter q lists, for each target block in the model's block order,
lora_A (r x d, row-major) then lora_B (k x r, row-major); targets: linear
"w" (1 x d), mlp "W1" (h x d) and "W2" (k x h), a layer list's dense
weights (out x in) and conv2d weights read as the matrix out x (in k k)
(PEFT's convolution adapter: lora_A a Conv2d(in, r, k), lora_B a 1 x 1
Conv2d(r, out); the conv is linear in its weight), chosen by lora.targets
all | head | input or named in init.lora_targets (a weight block, or a
dense/conv2d layer's name meaning its weight).  A layer list's base
gradient comes from pflref_exact_layers.py through pflref_exact.Problem.

Client optimizers (opt.*, docs/optimizers.md) on the adapter: the blocks
lora_A, lora_B of each target are the parameters torch would train (FFA-
LoRA: the B blocks only); d = the adapter gradient (regulariser included),
then torch's documented rules, written again here (opt_step): clip_grad_norm_
over the moving blocks, coupled or decoupled weight decay, SGD with
momentum (pytorch or classical form, nesterov), Adam and AdamW with per-block
step counts; square roots in 60-digit decimals.  The state lives per
opt.state (reset | client | server); HetLoRA truncates a client's state
with its adapter (the pruned ranks no longer exist).  The base model's gradient G = dL/dW at the merged W comes from
pflref_exact.Problem.grad; then dA = s B^T G, dB = s G A^T, the update is
simultaneous.  Irrational norms (HetLoRA) are rationals within 1e-70
(sqrt70), squared tail products are compared exactly.  To keep the
fractions short, every adapter after a step and after the server's average
is rounded to the grid 10^-90 when its denominators grow past it (DIGITS):
a relative change below 1e-80, far below any tolerance.

Batch normalisation (bn.running, bn.running_var; docs/models.md): the base
W0 is frozen, but its batchnorm buffers move in every training forward
(torch's train()), so under bn.running = update each local step moves
the running statistics of the merged model by its batch
(pflref_exact.Problem.move_running, PyTorch's rule); they belong to the
client's own copy of the base model (the adapter alone is sent and
averaged): client i's base w0i carries them from round to round, v_i =
w0i + s B_i A_i shows them, and the global w = W0 + s B A keeps init.w's.

replay(spec, bugs) -> (trace, w, v, None).  Bugs (mutants):

  lora-scale-alpha     s = alpha instead of alpha / r
  lora-sequential      A's step uses the B already updated (not simultaneous)
  lora-grad-transpose  dB = s G^T-shaped product read with A's rows
                       reversed (the rank columns of B permuted)
  lora-train-w0        W0 trained as well (full fine-tuning under the adapter)
  lora-train-bias      the biases trained (loralib bias='all')
  lora-personal-avg    personal adapters averaged after the round
  ffa-train-a          FFA-LoRA trains A too (the naive baseline)
  lora-uniform-weights 1/m where n_k / sum n_j is configured (and back)
  lora-stale-start     a client starts from its own last adapter instead of
                       the global one (ffa, fedavg, hetlora)
  het-no-truncate      the client receives ranks beyond r_k
  het-sample-weights   n_k / sum n_j instead of the sparsity weights
  het-product-weights  p_k from ||S_k||_F^2 instead of ||S_k||_F
  het-no-reg           the regulariser's gradient left out
  bn-shared-base       one base model object for every client (a
                       simulation that swaps adapters into one module):
                       the running statistics pass from client to client
  bn-stats-to-global   the server's w takes the participants' mean running
                       statistics (the base's buffers averaged as if sent)
  (running-frozen, momentum-flipped, running-var-flipped: the running
  statistics' bugs of pflref_exact.Problem / pflref_exact_layers)
  het-no-prune         the rank never shrinks
  het-prune-ceil       r_k <- ceil(gamma r_k) and the tail from it
  het-renormalise      each padded rank averaged over the clients holding it
  opt-plain-step       the optimizer ignored on the adapter (plain SGD)
  opt-state-reset      the optimizer state reset for every client update
  decay-form-swap      the other weight-decay form (coupled <-> decoupled)
  clip-per-block       each adapter block clipped to c by its own norm
                       (clip_grad_norm_ takes every moving block's at once)
  adam-no-bias-correction   Adam's step without 1 - beta^t
                       where opt.state keeps it (client, server)
"""
import math
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact, exact_vec

MUTANTS = {
    "lora-scale": ["lora-scale-alpha"],
    "lora-simultaneous": ["lora-sequential"],
    "lora-frozen": ["lora-train-w0", "lora-train-bias"],
    "lora-personal": ["lora-personal-avg"],
    "ffa-freeze-a": ["ffa-train-a"],
    "lora-weights": ["lora-uniform-weights"],
    "lora-broadcast": ["lora-stale-start"],
    "hetlora-truncate": ["het-no-truncate"],
    "hetlora-weights": ["het-sample-weights", "het-product-weights"],
    "hetlora-prune": ["het-no-reg", "het-no-prune", "het-prune-ceil"],
    "hetlora-pad": ["het-renormalise"],
    "lora-optimizer": ["opt-plain-step", "opt-state-reset"],
    "lora-bn-owner": ["bn-shared-base", "bn-stats-to-global"],
    "bn-running-frozen": ["running-frozen"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped"],
}

# the optimizer's bugs opt_step reads (named as pflref_exact_optim's, and
# left out of MUTANTS: golden/audit.py's "*" rows weight-decay-form,
# clip-scope and adam-bias-correction name them; make_worked.py flags a
# vector with every MUTANTS class it catches, which these would change)
OPT_BUGS = frozenset({"decay-form-swap", "clip-per-block",
                      "adam-no-bias-correction"})

SCALE = 10 ** 70
DIGITS = 10 ** 90


def short(xs):
    """xs on the grid 10^-90 where a denominator exceeds it."""
    return [x if x.denominator <= DIGITS else
            Fraction(round(x * DIGITS), DIGITS) for x in xs]


def sqrt70(q):
    """sqrt(q) exactly when it is rational, else within 1e-70 of it."""
    try:
        return px.exact_sqrt(q)
    except ValueError:
        return Fraction(math.isqrt(q.numerator * q.denominator * SCALE * SCALE),
                        q.denominator * SCALE)


def layer_blocks(model):
    """A layer list's blocks (pflref_exact_layers.Model): (name, offset, k,
    d, is_weight, is_input, is_head, layer name, layer type); a dense
    weight is out x in, a conv2d weight out x (in k k)."""
    import pflref_exact_layers as pel
    M = pel.Model(model)
    out = []
    for b, off in M.block_offsets():
        L = M.layers[b["layer"]]
        weight = b["role"] == "weight" and L.type in ("dense", "conv2d")
        if weight and L.type == "dense":
            k, d = L.out, L.in_shape[0]
        elif weight:
            k, d = L.O, L.in_shape[0] * L.k * L.k
        else:
            k, d = b["size"], 1
        out.append((b["name"], off, k, d, weight, b["is_input"],
                    b["is_head"], L.name, L.type))
    return out


def blocks(model):
    """[(name, offset, k, d, is_weight, is_input, is_head)] in state_dict
    order for linear, softmax, the regression mlp (pflref/model.h) and a
    layer list."""
    if model["kind"] == "layers":
        return [b[:7] for b in layer_blocks(model)]
    d = model["d"]
    if model["kind"] == "softmax":
        k = model["k"]
        out = [("W", 0, k, d, True, True, True)]
        if model.get("bias", False):
            out.append(("b", k * d, k, 1, False, True, True))
        return out
    if model["kind"] == "linear":
        out = [("w", 0, 1, d, True, True, True)]
        if model.get("bias", False):
            out.append(("b", d, 1, 1, False, True, True))
        return out
    assert model["kind"] == "mlp", model["kind"]
    h, k = model["h"], model.get("k", 1)
    bias = model.get("bias", True)
    hb = model.get("hidden_bias", bias)
    out, off = [("W1", 0, h, d, True, True, False)], h * d
    if hb:
        out.append(("b1", off, h, 1, False, True, False))
        off += h
    out.append(("W2", off, k, h, True, False, True))
    off += k * h
    if bias:
        out.append(("b2", off, k, 1, False, False, True))
    return out


def named(model, names):
    """The block names init.lora_targets selects: a block's name, or a
    layer's name meaning its weight."""
    out = set()
    if model["kind"] == "layers":
        bl = layer_blocks(model)
        for n in names:
            hit = [b[0] for b in bl if b[0] == n or (b[7] == n and b[4])]
            assert len(hit) == 1 and hit[0] not in out, n
            out.add(hit[0])
    else:
        out = set(names)
    return out


def layout(model, r, targets, names=None):
    """[(offset of W, k, d, off_A, off_B)], Q."""
    out, Q = [], 0
    chosen = named(model, names) if names else None
    for name, off, k, d, weight, inp, head in blocks(model):
        if chosen is not None:
            if name not in chosen:
                continue
            assert weight, name
        elif not weight or (targets == "head" and not head) or \
                (targets == "input" and not inp):
            continue
        assert r <= min(k, d), (name, r, k, d)
        out.append((off, k, d, Q, Q + r * d))
        Q += r * (d + k)
    return out, Q


def merge(L, r, w0, q, rank, s):
    """W = W0 + s B A on each target (ranks < rank)."""
    theta = list(w0)
    for off, k, d, oA, oB in L:
        for i in range(k):
            for j in range(d):
                theta[off + i * d + j] += s * sum(
                    q[oB + i * r + p] * q[oA + p * d + j] for p in range(rank))
    return theta


def tail(L, r, q, c, rank):
    """per target (||B_t||^2, ||A_t||^2) of the ranks c..rank-1."""
    out = []
    for off, k, d, oA, oB in L:
        b2 = sum(q[oB + i * r + p] ** 2 for i in range(k) for p in range(c, rank))
        a2 = sum(q[oA + p * d + j] ** 2 for p in range(c, rank) for j in range(d))
        out.append((b2, a2))
    return out


def grad_q(L, r, q, rank, s, G, bugs):
    gq = [Fraction(0)] * len(q)
    for off, k, d, oA, oB in L:
        for p in range(rank):          # dA = s B^T G   # req: lora.grad, lora.alg1.l2
            for j in range(d):
                gq[oA + p * d + j] = s * sum(q[oB + i * r + p] * G[off + i * d + j]
                                             for i in range(k))
        for i in range(k):             # dB = s G A^T   # req: lora.grad
            for p in range(rank):
                pa = rank - 1 - p if "lora-grad-transpose" in bugs else p
                gq[oB + i * r + p] = s * sum(G[off + i * d + j] * q[oA + pa * d + j]
                                             for j in range(d))
    return gq


def truncate(L, r, q, rank):
    q = list(q)
    for off, k, d, oA, oB in L:
        for p in range(rank, r):
            for j in range(d):
                q[oA + p * d + j] = Fraction(0)
            for i in range(k):
                q[oB + i * r + p] = Fraction(0)
    return q


# ---------------------------------------------------------------- optimizers

OPT_DEFAULTS = {"opt.method": "sgd", "opt.momentum": 0.0, "opt.dampening": 0.0,
                "opt.weight_decay": 0.0, "opt.beta1": 0.9, "opt.beta2": 0.999,
                "opt.eps": 1e-8, "opt.clip_norm": None,
                "opt.momentum_form": "pytorch", "opt.nesterov": "off",
                "opt.weight_decay_form": "coupled", "opt.decay_scope": "all",
                "opt.clip": "off", "opt.state": "reset"}
CLIP_EPS = Fraction(1e-6)      # clip_grad_norm_'s 1e-6, at its double's value
# A list to receive (||d||, exact?, coefficient) of every clip, or None (as
# pflref_exact_optim's: golden/coincidences.py's check that a clip acts).
CLIP_LOG = None


def dec60(q):
    """q to 60 significant digits (a Fraction), after a square root."""
    import decimal
    if q == 0:
        return Fraction(0)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        return Fraction(decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator))


def sqrt60(q):
    import decimal
    if q == 0:
        return Fraction(0)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        x = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
        return Fraction(x.sqrt())


def opt_config(algorithm):
    c = dict(OPT_DEFAULTS)
    for group in ("hyperparameters", "switches"):
        c.update({k: v for k, v in algorithm.get(group, {}).items()
                  if k.startswith("opt.")})
    return c


def opt_plain(c):
    return (c["opt.method"] == "sgd" and c["opt.momentum"] == 0
            and c["opt.weight_decay"] == 0 and c["opt.clip"] == "off")


class OptState:
    """torch's optimizer.state for the adapter: b (momentum buffer, or
    Adam's m), v (Adam's second moment), t per block."""

    def __init__(self, Q):
        self.b = [Fraction(0)] * Q
        self.v = [Fraction(0)] * Q
        self.t = {}


def opt_step(c, st, blks, d, q, eta, bugs=frozenset()):
    """One step of the client optimizer on the moving blocks blks [(key,
    indices)] of the adapter q with the gradient d; returns the new q.
    torch's order: clip_grad_norm_ (after backward), then per parameter
    decay and the update (torch.optim.SGD / Adam / AdamW).  Bugs
    (pflref_exact_optim's names): decay-form-swap, clip-per-block,
    adam-no-bias-correction."""
    d, q = list(d), list(q)
    method = c["opt.method"]
    lam = Fraction(c["opt.weight_decay"])
    decoupled = method == "adamw" or c["opt.weight_decay_form"] == "decoupled"
    if "decay-form-swap" in bugs:
        decoupled = not decoupled
    if c["opt.clip"] == "norm":
        every = [p for _, ix in blks for p in ix]
        groups = [ix for _, ix in blks] if "clip-per-block" in bugs \
            else [every]
        for idx in groups:
            norm = sqrt60(sum(d[p] * d[p] for p in idx))
            coef = Fraction(c["opt.clip_norm"]) / (norm + CLIP_EPS)
            if not bugs:
                assert abs(coef - 1) > Fraction(1, 10 ** 6), coef  # no near tie
            if CLIP_LOG is not None:
                CLIP_LOG.append((norm, False, coef))
            if coef < 1:
                for p in idx:
                    d[p] = dec60(d[p] * coef)
    mu, tau = Fraction(c["opt.momentum"]), Fraction(c["opt.dampening"])
    classical = c["opt.momentum_form"] == "classical"
    nesterov = c["opt.nesterov"] == "on"
    b1, b2 = Fraction(c["opt.beta1"]), Fraction(c["opt.beta2"])
    eps = Fraction(c["opt.eps"])
    for key, idx in blks:
        t = st.t.get(key, 0) + 1
        st.t[key] = t
        for p in idx:
            dp = d[p]
            if lam and decoupled:
                q[p] = q[p] * (1 - eta * lam)
            elif lam:
                dp = dp + lam * q[p]
            if method == "sgd":
                if mu == 0:
                    q[p] = q[p] - eta * dp
                elif classical:
                    st.b[p] = mu * st.b[p] - eta * dp
                    q[p] = q[p] + st.b[p]
                else:
                    st.b[p] = dp if t == 1 else mu * st.b[p] + (1 - tau) * dp
                    dp = dp + mu * st.b[p] if nesterov else st.b[p]
                    q[p] = q[p] - eta * dp
            else:
                st.b[p] = b1 * st.b[p] + (1 - b1) * dp
                st.v[p] = b2 * st.v[p] + (1 - b2) * dp * dp
                if "adam-no-bias-correction" in bugs:
                    denom = sqrt60(st.v[p]) + eps
                    q[p] = dec60(q[p] - eta * st.b[p] / denom)
                else:
                    denom = sqrt60(st.v[p]) / sqrt60(1 - b2 ** t) + eps
                    q[p] = dec60(q[p] - (eta / (1 - b1 ** t)) * st.b[p] / denom)
                st.b[p], st.v[p] = dec60(st.b[p]), dec60(st.v[p])
    return q


class Softmax:
    """The softmax model's batch gradient for the adapters: z = W x (+ b),
    loss -log softmax(z)_y, mean over the batch.  exp is irrational: the
    probabilities are computed with 80-digit decimals and taken as exact
    rationals (error below 1e-75, far below any tolerance)."""

    def __init__(self, model, clients):
        self.d, self.k = model["d"], model["k"]
        self.bias = bool(model.get("bias", False))
        self.P = self.k * self.d + (self.k if self.bias else 0)
        self.clients = [([exact_vec(x) for x in c["X"]], [int(y) for y in c["y"]])
                        for c in clients]

    def n(self, i):
        return len(self.clients[i][1])

    def grad(self, i, theta, batch):
        import decimal
        X, Y = self.clients[i]
        d, k = self.d, self.k
        g = [Fraction(0)] * self.P
        with decimal.localcontext() as ctx:
            ctx.prec = 80
            for j in batch:
                x, y = X[j], Y[j]
                z = [sum(theta[c * d + a] * x[a] for a in range(d))
                     + (theta[k * d + c] if self.bias else 0) for c in range(k)]
                m = max(z)
                e = [(decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)).exp()
                     for q in (zc - m for zc in z)]
                tot = sum(e)
                p = [Fraction(ec / tot) for ec in e]
                for c in range(k):
                    err = p[c] - (1 if c == y else 0)
                    for a in range(d):
                        g[c * d + a] += err * x[a]
                    if self.bias:
                        g[k * d + c] += err
        return short([x / len(batch) for x in g])


class Run:
    def __init__(self, spec, bugs):
        alg = spec["algorithm"]
        self.hp, sw = alg["hyperparameters"], alg.get("switches", {})
        self.method = sw.get("lora.method", "personal")
        self.targets = sw.get("lora.targets", "all")
        self.weights = sw.get("lora.weights", "samples")
        self.het_weights = sw.get("hetlora.weights", "sparsity")
        scaling = sw.get("hetlora.scaling", "none")
        self.bugs = bugs
        self.eta = exact(self.hp["eta"])
        self.r = int(self.hp["lora.r"])
        alpha = exact(self.hp["lora.alpha"])
        self.lam = exact(self.hp.get("hetlora.lambda", 0))
        self.gamma = exact(self.hp.get("hetlora.gamma", 0.5))
        self.r_min = int(self.hp.get("hetlora.r_min", 1))
        if self.method == "hetlora" and scaling == "none":
            self.s = Fraction(1)           # W0 + B A (the paper)
        elif "lora-scale-alpha" in bugs:
            self.s = alpha
        else:
            self.s = alpha / self.r        # s = alpha / r   # req: lora.eq3
        self.model = spec["model"]
        self.pr = (Softmax if spec["model"]["kind"] == "softmax" else px.Problem)(
            spec["model"], spec["problem"]["clients"])
        if spec["model"]["kind"] == "layers":
            self.pr.bn_switches(sw)     # bn.running, bn.running_var
        self.L, self.Q = layout(self.model, self.r, self.targets,
                                spec["init"].get("lora_targets"))
        self.opt = opt_config(alg)
        self.use_opt = not opt_plain(self.opt) and "opt-plain-step" not in bugs
        life = self.opt["opt.state"]
        self.life = "reset" if "opt-state-reset" in bugs else life
        self.states, self.shared_state = {}, None
        self.w0 = px.initial(spec["init"], self.pr.P)
        self.q0 = exact_vec(spec["init"]["lora"])
        assert len(self.q0) == self.Q
        N = len(self.pr.clients)
        ranks = spec["init"].get("lora_ranks")
        self.rank = [int(x) for x in ranks] if ranks else [self.r] * N
        self.trainable_base = set()
        for name, off, k, d, weight, inp, head in blocks(self.model):
            if ("lora-train-w0" in bugs and weight) or \
                    ("lora-train-bias" in bugs and not weight):
                self.trainable_base.update(range(off, off + k * d))

    def state_of(self, i):
        """The client's optimizer state under opt.state, begun for a new
        client update (reset: a new optimizer)."""
        if self.life == "client":
            return self.states.setdefault(i, OptState(self.Q))
        if self.life == "server" and self.shared_state is not None:
            return self.shared_state
        self.shared_state = OptState(self.Q)
        return self.shared_state

    def truncate_state(self, st, rank):
        st.b = truncate(self.L, self.r, st.b, rank)
        st.v = truncate(self.L, self.r, st.v, rank)

    def local(self, t, i, q, w0i, steps, trace):
        """l. 2 (and l. 3): returns (q, w0i)."""
        rank, L, r, s, bugs = self.rank[i], self.L, self.r, self.s, self.bugs
        het = self.method == "hetlora"
        ffa = self.method == "ffa" and "ffa-train-a" not in bugs
        st = self.state_of(i) if self.use_opt else None
        if st is not None and het:
            self.truncate_state(st, rank)
        blks = []                       # the moving blocks: lora_A, lora_B
        for li, (off, k, d, oA, oB) in enumerate(L):
            if not ffa:
                blks.append((("A", li), list(range(oA, oA + r * d))))
            blks.append((("B", li), list(range(oB, oB + k * r))))
        cut = math.floor(self.gamma * rank)
        if "het-prune-ceil" in bugs:
            cut = math.ceil(self.gamma * rank)
        reg = het and self.lam > 0 and self.r_min <= cut < rank and \
            "het-no-prune" not in bugs
        reg_grad = reg and "het-no-reg" not in bugs
        before = sum(b2 * a2 for b2, a2 in tail(L, r, q, cut, rank)) if reg else 0
        for step, batch in enumerate(steps, start=1):
            theta = merge(L, r, w0i, q, rank, s)
            G = self.pr.grad(i, theta, batch)
            if getattr(self.pr, "buffers", None):   # the base's running statistics
                moved = self.pr.move_running(i, theta, batch, bugs)
                w0i = [moved[p] if p in self.pr.buffers else x
                       for p, x in enumerate(w0i)]
            gq = grad_q(L, r, q, rank, s, G, bugs)
            if reg_grad:                 # + grad of lambda ||B_t|| ||A_t||   # req: hetlora.eq3
                for (off, k, d, oA, oB), (b2, a2) in zip(L, tail(L, r, q, cut, rank)):
                    nB, nA = sqrt70(b2), sqrt70(a2)
                    for i2 in range(k):
                        for p in range(cut, rank):
                            if nB:
                                gq[oB + i2 * r + p] += self.lam * nA * q[oB + i2 * r + p] / nB
                    for p in range(cut, rank):
                        for j in range(d):
                            if nA:
                                gq[oA + p * d + j] += self.lam * nB * q[oA + p * d + j] / nA
            new = list(q)
            for off, k, d, oA, oB in ([] if st is not None else L):
                start = oB if ffa else oA     # req: ffalora.freeze_a
                for p in range(start, oB + k * r):
                    new[p] = q[p] - self.eta * gq[p]
                if "lora-sequential" in bugs and not ffa:
                    # A's step recomputed with the updated B
                    for p in range(rank):
                        for j in range(d):
                            new[oA + p * d + j] = q[oA + p * d + j] - self.eta * s * sum(
                                new[oB + i2 * r + p] * G[off + i2 * d + j] for i2 in range(k))
            if st is not None:           # the client optimizer on d = gq
                new = opt_step(self.opt, st, blks, gq, q, self.eta,
                               self.bugs & OPT_BUGS)
            if self.trainable_base:
                w0i = [x - self.eta * G[p] if p in self.trainable_base else x
                       for p, x in enumerate(w0i)]
            q = short(new)
            w0i = short(w0i)
            trace.emit("step", "train", t, i, step, "q", q)
        if reg:                          # l. 3   # req: hetlora.prune, lora.alg1.l3
            after = sum(b2 * a2 for b2, a2 in tail(L, r, q, cut, rank))
            if after < before:
                self.rank[i] = cut
                q = truncate(L, r, q, cut)
                if st is not None:
                    self.truncate_state(st, cut)
        if het:
            trace.emit("note", "train", t, i, None, "rank", [self.rank[i]])
        return q, w0i

    def weights_of(self, ids, qs):
        N = len(self.pr.clients)
        bugs = self.bugs
        het = self.method == "hetlora"
        if het:
            kind = "samples" if "het-sample-weights" in bugs else self.het_weights
        else:
            kind = self.weights
            if "lora-uniform-weights" in bugs:
                kind = "uniform" if kind == "samples" else "samples"
        raw = {}
        for i in ids:
            if kind == "sparsity":      # ||S_k||_F, S_k = B_k A_k   # req: hetlora.weights
                s2 = Fraction(0)
                for off, k, d, oA, oB in self.L:
                    for a in range(k):
                        for j in range(d):
                            s2 += sum(qs[i][oB + a * self.r + p] * qs[i][oA + p * d + j]
                                      for p in range(self.rank[i])) ** 2
                raw[i] = s2 if "het-product-weights" in bugs else sqrt70(s2)
            elif kind == "uniform":
                raw[i] = Fraction(1)
            else:
                raw[i] = Fraction(self.pr.n(i))
        Z = sum(raw.values())
        w = [Fraction(0)] * N
        for i in ids:
            w[i] = raw[i] / Z if Z else Fraction(1, len(ids))
        return w

    def aggregate(self, ids, qs, p):
        q = [Fraction(0)] * self.Q
        for i in ids:                   # req: hetlora.pad, ffalora.avg, lora.alg1.l4
            for a in range(self.Q):
                q[a] += p[i] * qs[i][a]
        if "het-renormalise" in self.bugs:
            for off, k, d, oA, oB in self.L:
                for rho in range(self.r):
                    tot = sum(p[i] for i in ids if self.rank[i] > rho)
                    if tot:
                        for j in range(d):
                            q[oA + rho * d + j] /= tot
                        for a in range(k):
                            q[oB + a * self.r + rho] /= tot
        return q


def replay(spec, bugs=frozenset()):
    R = Run(spec, bugs)
    N = len(R.pr.clients)
    q = list(R.q0)
    qs = [truncate(R.L, R.r, q, R.rank[i]) for i in range(N)]
    base = [list(R.w0) for _ in range(N)]
    w = merge(R.L, R.r, R.w0, q, R.r, R.s)
    v = [merge(R.L, R.r, R.w0, qs[i], R.rank[i], R.s) for i in range(N)]
    trace = Trace()
    shared = R.method != "personal"
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        ids = rnd["clients"]
        for j, i in enumerate(ids):
            if shared and "lora-stale-start" not in bugs:
                rank = R.r if "het-no-truncate" in bugs else R.rank[i]
                qs[i] = truncate(R.L, R.r, q, rank)    # l. 1   # req: hetlora.trunc, lora.alg1.l1
            trace.emit("client_begin", "train", t, i, 0, "q", qs[i])
            qs[i], base[i] = R.local(t, i, qs[i], base[i], rnd["batches"][j], trace)
            if "bn-shared-base" in bugs and getattr(R.pr, "buffers", None):
                for k in range(N):       # one module: its buffers go on
                    base[k] = [base[i][p] if p in R.pr.buffers else x
                               for p, x in enumerate(base[k])]
            v[i] = merge(R.L, R.r, base[i], qs[i], R.rank[i], R.s)
            trace.emit("client_end", "train", t, i, None, "q", qs[i])
        if not shared and "lora-personal-avg" not in bugs:
            continue
        p = R.weights_of(ids, qs)
        trace.emit("note", "train", t, None, None, "weights", p)
        q = short(R.aggregate(ids, qs, p))
        trace.emit("server", "train", t, None, None, "q", q)
        w0g = R.w0
        if "bn-stats-to-global" in bugs and getattr(R.pr, "buffers", None):
            w0g = [sum(base[i][p] for i in ids) / len(ids)
                   if p in R.pr.buffers else x for p, x in enumerate(R.w0)]
        w = merge(R.L, R.r, w0g, q, R.r, R.s)
        trace.emit("server", "train", t, None, None, "w", w)
    return trace, w, v, None


def supported(spec):
    m = spec["model"]
    return (spec["algorithm"]["name"] == "lora"
            and (m["kind"] in ("linear", "softmax", "layers")
                 or (m["kind"] == "mlp" and m.get("k", 1) == 1
                     and m.get("loss") in ("squared", "half_squared")))
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
