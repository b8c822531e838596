# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_moon.py: MOON (Li, He, Song, "Model-Contrastive
Federated Learning", CVPR 2021, arXiv 2103.16257v1, Alg. 1 and Sec. 3)
in 60-digit decimal arithmetic, written from the paper, independently of
the C reference (ref/algorithms/moon.c).

Every input is the exact value of the double the spec holds (Decimal of a
float is exact); every operation then rounds to 60 significant digits
(relative error < 1e-59 per operation), so these values differ from the
exact ones by far less than any tolerance of the vectors.  exp, log and
sqrt are Decimal's (correctly rounded at 60 digits).

The model is written again here as a chain of dense and relu/identity
layers: the mlp (W1, b1, act, W2, b2: docs/models.md) and a layer list of
dense and relu layers, parameters in the spec's layout (state_dict order).
The representation R_w(x) (Sec. 3.2) is the output of every layer before
the last dense one (the mlp's hidden layer φ; a layer list's body,
projection head included).

One round t of Alg. 1 (the schedule's parties S_t, ascending):
  w_i ← w^t; for each scheduled batch b:
    ℓ_sup = mean_j ℓ(F_{w_i}(x_j), y_j)                          (l. 15)
    z_j = R_{w_i}(x_j), z_glob_j = R_{w^t}(x_j),
    z_prev_j = R_{w_i^{t−1}}(x_j)                                  (l. 16-18)
    ℓ_con = mean_j −log(e^{sim(z,z_glob)/τ} /
                        (e^{sim(z,z_glob)/τ} + e^{sim(z,z_prev)/τ}))  (l. 19)
    w_i ← w_i − η ∇(ℓ_sup + μ ℓ_con)                               (l. 20-21)
  w_i^{t−1} ← w_i (party i's previous model from now on)
  w^{t+1} = Σ_{i∈S_t} (n_i / Σ_{S_t} n_j) w_i                     (l. 8)
∇ℓ_con: per sample, with p = e^{s_b}/(e^{s_a} + e^{s_b}), s_a =
sim(z, z_glob)/τ, s_b = sim(z, z_prev)/τ:
  ∂ℓ_con,j/∂z = (p/τ)(∇_z sim(z, z_prev) − ∇_z sim(z, z_glob)),
  ∇_z sim(z, a) = a/(‖z‖‖a‖) − sim(z, a) z/‖z‖²,
taken back through the body by the chain rule (docs/algorithms/moon.md).

w_i^{−1} = w⁰ (a party's previous model before its first training).

Batch normalisation in a layer list's body (BNNet: pflref_exact_layers.Model
in the decimal domain, whose batch forward normalises a training pass on
the batch's statistics and an evaluation pass on the model's running ones).
Per step on the batch b:
  one training pass of w_i: the outputs (ℓ_sup) and z, the head layer's
  input; the loss's signal goes back through the head; μ (1/|b|) ∂ℓ_con,j/∂z_j
  is added on the head's input; then back through the body's training pass
  (the batchnorm backward couples the samples) — one backward of the sum;
  z_glob, z_prev: the body's output of w^t and of w_i^{t−1} on b in
  evaluation mode (moon.passes = eval, the authors' global_model.eval()
  and the previous nets' eval(), QinbinLi/MOON main.py:486, 540, 547) or
  in training mode (train: PFLlib clientmoon.py:43-44);
  w_i's running statistics move by the training pass (PyTorch's rule,
  bn.running = update; bn.running_var unbiased or biased), then w_i's
  parameters step (the buffers never).
bn.aggregate = average: w^{t+1} averages every entry (the authors' state_dict
average, main.py:508-514); parameters_only (PFLlib clientmoon.py:62-66,
serverbase.py:141): w_i starts from w^t's parameters and party i's own
running statistics (those of its previous model, w⁰'s before it trains),
and w^{t+1}'s running statistics are the first participant's.
The client optimizer (docs/optimizers.md, slot 0: PartyLocalTraining's,
on d = ∇ℓ_sup + μ ∇ℓ_con; the official preset's torch SGD with momentum
0.9, weight decay 1e-5, a new optimizer per local training) steps through
golden/pflref_exact_optim.py's Optimizers, which take every opt.* (SGD,
momentum forms, Nesterov, decay forms and scopes over the spec's split,
the clip, Adam, AdamW, opt.state): the gradient and θ go in as the exact
values of their decimals, θ comes back at 60 digits; the batch-norm
buffers are not among its blocks and never step.  Without opt.* the step
stays θ ← θ − η g.  The step size of round t is η c_t
(pflref_exact.round_factor: lr.schedule, lr.gamma, lr.step_rounds;
lr.count = trainings counts party i's own trainings before).

Bugs (realistic implementation mistakes; check_mutants, golden/audit.py):
  con-sign         ∇ℓ = ∇ℓ_sup − μ ∇ℓ_con
  con-no-tau       the chain rule's 1/τ of ∂ℓ_con/∂z left out
  cos-no-proj      ∇_z sim(z, a) taken as a/(‖z‖‖a‖) (the −sim z/‖z‖² term
                   dropped)
  con-batch-sum    ℓ_con summed over the batch instead of averaged
  prev-global      z_prev from w^t (the previous model = the global one)
  prev-w0          z_prev always from w⁰ (the previous model never kept)
  prev-first-global
                   a party that has not trained yet takes w^t as its
                   previous model (w⁰ is the reading)
  mu-tau-swap      μ and τ exchanged
  rep-output       R_w(x) taken as the network's output F_w(x)
  uniform-weights  server weights 1/|S_t| instead of n_i/Σ n_j
  drawn-batches    a round's batch lists paired with its drawn order
                   instead of its ascending clients
  epochs-plus-one, epochs-minus-one
                   one local step too many (the first batch again) / few
  passes-flipped   (batch normalisation) z_glob and z_prev from passes in
                   the other mode than moon.passes says
  z-eval-pass      z taken from an evaluation pass of w_i (its running
                   statistics) instead of the training pass
  running-frozen   w_i's running statistics never move
  running-moved    they move where bn.running = frozen is configured
  running-var-flipped
                   the other of the biased and unbiased batch variance
                   into the running variance (bn.running_var)
  start-global-buffers
                   under parameters_only, w_i starts from w^t's running
                   statistics (the whole state_dict) instead of its own
  global-buffers-averaged
                   under parameters_only, w^{t+1}'s running statistics
                   averaged instead of the first participant's
"""
from decimal import Decimal, localcontext
from fractions import Fraction

from pflref_golden import Trace
import pflref_exact as px
import pflref_exact_layers as pl
import pflref_exact_optim as po

PREC = 60
D0 = Decimal(0)

PRESETS = {
    "official": {"opt.momentum": 0.9, "opt.weight_decay": 0.00001},
    "pfllib": {"lr.count": "trainings", "moon.passes": "train",
               "bn.aggregate": "parameters_only"},
}

MUTANTS = {
    "moon-contrastive-gradient": ["con-sign", "con-no-tau", "cos-no-proj",
                                  "con-batch-sum"],
    "moon-previous-model": ["prev-global", "prev-w0"],
    "moon-first-previous": ["prev-first-global"],
    "moon-mu-tau": ["mu-tau-swap"],
    "moon-representation": ["rep-output"],
    "aggregation-weights": ["uniform-weights"],
    "schedule-drawn-order": ["drawn-batches"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "moon-bn-passes": ["passes-flipped", "z-eval-pass"],
    "bn-running-update": ["running-frozen"],
    "bn-own-buffers": ["start-global-buffers"],
    "bn-global-buffers": ["global-buffers-averaged"],
}


def dec(x):
    """The exact value of the double x."""
    return Decimal(float(x))


class Net:
    """A chain of ("dense", W offset, b offset or None, n_in, n_out) and
    ("relu",) / ("identity",) layers; the last layer is dense (the output
    layer), the layers before it the body."""

    def __init__(self, model):
        self.loss = model.get("loss", "cross_entropy")
        ops, off = [], 0
        if model["kind"] == "mlp":
            d, h = model["d"], model["h"]
            k = model.get("k", 1)
            bias = bool(model.get("bias", True))
            hb = bool(model.get("hidden_bias", bias))
            ops.append(("dense", off, off + h * d if hb else None, d, h))
            off += h * d + (h if hb else 0)
            ops.append((model.get("activation", "relu"),))
            ops.append(("dense", off, off + k * h if bias else None, h, k))
            off += k * h + (k if bias else 0)
        else:
            assert model["kind"] == "layers", model["kind"]
            n = model["input"][0]
            assert len(model["input"]) == 1
            for L in model["layers"]:
                if L["type"] == "dense":
                    out, b = L["out"], L.get("bias", True)
                    ops.append(("dense", off, off + out * n if b else None,
                                n, out))
                    off += out * n + (out if b else 0)
                    n = out
                else:
                    assert L["type"] in ("relu", "identity"), L["type"]
                    ops.append((L["type"],))
        assert ops[-1][0] == "dense" and len(ops) >= 2
        self.ops, self.P = ops, off

    def forward(self, theta, x, hi=None):
        """The outputs of the layers 0..hi−1 (all: hi None): acts[0] = x,
        acts[i + 1] = layer i's output."""
        acts = [list(x)]
        for op in self.ops[:hi]:
            a = acts[-1]
            if op[0] == "dense":
                _, ow, ob, n_in, n_out = op
                acts.append([(theta[ob + o] if ob is not None else D0)
                             + sum(theta[ow + o * n_in + q] * a[q]
                                   for q in range(n_in))
                             for o in range(n_out)])
            elif op[0] == "relu":
                for u in a:      # on relu's kink exactly (relu-kink) or away from it
                    assert u == 0 or abs(u) > Decimal("1e-6"), u
                acts.append([u if u > 0 else D0 for u in a])
            else:
                acts.append(list(a))
        return acts

    def backward(self, theta, acts, sig, hi, g, scale):
        """g += scale · J_{0..hi−1}ᵀ sig, sig the signal on layer hi−1's
        output, back through the layers hi−1 .. 0."""
        for i in range(hi - 1, -1, -1):
            op, x = self.ops[i], acts[i]
            if op[0] == "dense":
                _, ow, ob, n_in, n_out = op
                for o in range(n_out):
                    for q in range(n_in):
                        g[ow + o * n_in + q] += scale * sig[o] * x[q]
                    if ob is not None:
                        g[ob + o] += scale * sig[o]
                sig = [sum(theta[ow + o * n_in + q] * sig[o]
                           for o in range(n_out)) for q in range(n_in)]
            elif op[0] == "relu":
                sig = [s if u > 0 else D0 for s, u in zip(sig, x)]

    def out_signal(self, z, y):
        """∂ℓ/∂z of one sample: p − e_y (cross-entropy), r or 2r."""
        if self.loss == "cross_entropy":
            m = max(z)
            e = [(u - m).exp() for u in z]
            s = sum(e)
            return [ei / s - (1 if c == int(y) else 0)
                    for c, ei in enumerate(e)]
        r = z[0] - y
        return [2 * r if self.loss == "squared" else r]


class BNNet:
    """A layer list with batch normalisation in its body
    (pflref_exact_layers.Model, decimal domain); the last layer is dense
    (the output layer), its input the representation R_w(x)."""

    def __init__(self, model):
        self.M = pl.Model(model, "decimal")
        assert self.M.layers[-1].type == "dense" and len(self.M.layers) >= 2
        self.P = self.M.P
        self.buffers = {o + q for b, o in self.M.block_offsets()
                        if b["is_buffer"] for q in range(b["size"])}

    def rep(self, theta, X, train):
        """R_w(x_j) for the batch X from a training or evaluation pass."""
        _, caches = self.M.forward(theta, X, train)
        return caches[-1]["in"]


def step_bn(net, party, theta, w_t, prev, batch, mu, tau, bn, bugs):
    """(∇(ℓ_sup + μ ℓ_con)(θ; batch), caches of θ's training pass)."""
    M, nb = net.M, len(batch)
    X = [party.X[j] for j in batch]
    Y = [party.y[j] for j in batch]
    # req: moon.alg1.l13, moon.bn
    Z, caches = M.forward(theta, X, True)
    G = [[e / nb for e in M._signal(z, y, pl.NO_BUGS)[1]]
         for z, y in zip(Z, Y)]
    g = [D0] * net.P
    G = M._backward(M.layers[-1], caches[-1], theta, G, g, pl.NO_BUGS)
    if mu != 0:
        # req: moon.alg1.l14, moon.alg1.l15, moon.alg1.l16
        z = (net.rep(theta, X, False) if "z-eval-pass" in bugs
             else caches[-1]["in"])
        train = bn["passes"] == "train"
        if "passes-flipped" in bugs:
            train = not train
        zg = net.rep(w_t, X, train)
        zp = net.rep(prev, X, train)
        scale = Decimal(1) if "con-batch-sum" in bugs else 1 / Decimal(nb)
        sgn = -1 if "con-sign" in bugs else 1
        for j in range(nb):
            dz = con_signal(z[j], zg[j], zp[j], tau, bugs)
            G[j] = [a + sgn * mu * scale * b for a, b in zip(G[j], dz)]
    for L, cache in zip(reversed(M.layers[:-1]), reversed(caches[:-1])):
        G = M._backward(L, cache, theta, G, g, pl.NO_BUGS)
    return g, caches


def norm(x):
    return sum(u * u for u in x).sqrt()


def cos_grad(z, a, bugs):
    """∇_z sim(z, a) = a/(‖z‖‖a‖) − sim(z, a) z/‖z‖²."""
    nz, na = norm(z), norm(a)
    assert nz > Decimal("0.01") and na > Decimal("0.01"), (nz, na)
    sim = sum(u * v for u, v in zip(z, a)) / (nz * na)
    if "cos-no-proj" in bugs:
        return [v / (nz * na) for v in a], sim
    return [v / (nz * na) - sim * u / (nz * nz) for u, v in zip(z, a)], sim


def con_signal(z, zg, zp, tau, bugs):
    """∂ℓ_con,j/∂z = (p/τ)(∇sim(z, z_prev) − ∇sim(z, z_glob))."""
    # req: moon.grad, moon.alg1.l17, moon.eq3
    ga, sa = cos_grad(z, zg, bugs)
    gb, sb = cos_grad(z, zp, bugs)
    p = 1 / (1 + ((sa - sb) / tau).exp())
    c = p if "con-no-tau" in bugs else p / tau
    return [c * (u - v) for u, v in zip(gb, ga)]


def settings(algorithm, bugs):
    """(η, μ, τ, opt, bn, lr) of the spec's algorithm object: opt the
    optimizer's settings (pflref_exact_optim.config over the preset's), or
    None when every opt.* is at its default; lr the algorithm object
    round_factor reads (lr.count filled from the preset)."""
    hp = dict(PRESETS.get(algorithm.get("preset", "paper"), {}))
    hp.update(algorithm.get("hyperparameters", {}))
    hp.update(algorithm.get("switches", {}))
    mu, tau = dec(hp["moon.mu"]), dec(hp["moon.tau"])
    if "mu-tau-swap" in bugs:
        mu, tau = tau, mu
    c = dict(po.DEFAULTS)
    c.update({k: v for k, v in hp.items() if k.startswith("opt.")})
    opt = c if any(c[k] != po.DEFAULTS[k] for k in po.DEFAULTS) else None
    lr = dict(algorithm, switches=dict(
        algorithm.get("switches", {}),
        **{"lr.count": hp.get("lr.count", "rounds")}))
    bn = {"passes": hp.get("moon.passes", "eval"),
          "keep": hp.get("bn.aggregate", "average") == "parameters_only",
          "update": hp.get("bn.running", "update") == "update",
          "unbiased": hp.get("bn.running_var", "unbiased") == "unbiased"}
    return dec(hp["eta"]), mu, tau, opt, bn, lr


class OptView:
    """The net as pflref_exact_optim.blocks reads it: its parameter blocks
    (name, indices) in layout order (docs/models.md: the mlp's W1, b1, W2,
    b2; a layer list's NAME.weight, NAME.bias), the batch-norm buffers
    left out (not parameters)."""

    def __init__(self, net, model):
        self.P = net.P
        if isinstance(net, BNNet):
            self.M = net.M          # is_bias: a batch-norm layer's γ, β
            self.opt_blocks = [
                (b["name"], list(range(o, o + b["size"])))
                for b, o in sorted(net.M.block_offsets(), key=lambda x: x[1])
                if not b["is_buffer"]]
            return
        if model["kind"] == "mlp":
            names = ["1", "2"]
        else:
            names = [L.get("name", "dense%d" % j) + "."
                     for j, L in enumerate(model["layers"])
                     if L["type"] == "dense"]
        out = []
        for op, nm in zip([op for op in net.ops if op[0] == "dense"], names):
            _, ow, ob, n_in, n_out = op
            mlp = model["kind"] == "mlp"
            out.append(("W" + nm if mlp else nm + "weight",
                        list(range(ow, ow + n_in * n_out))))
            if ob is not None:
                out.append(("b" + nm if mlp else nm + "bias",
                            list(range(ob, ob + n_out))))
        self.opt_blocks = sorted(out, key=lambda b: b[1][0])


def dec_q(q):
    """A Fraction at 60 digits (the context's precision)."""
    return Decimal(q.numerator) / Decimal(q.denominator)


def opt_step(opt, i, g, theta, eta):
    """One step of party i's optimizer on the gradient g: the exact values
    of the decimals in, θ back at 60 digits."""
    new = opt.step(i, 0, [Fraction(x) for x in g],
                   [Fraction(x) for x in theta], eta)
    return [dec_q(q) for q in new]


class Party:
    """One party's data, exact."""

    def __init__(self, c):
        self.X = [[dec(u) for u in row] for row in c["X"]]
        self.y = [dec(u) for u in c["y"]]
        self.n = len(self.X)


def step_grad(net, party, theta, w_t, prev, batch, mu, tau, bugs):
    """∇(ℓ_sup + μ ℓ_con)(θ; batch)."""
    P, nb = net.P, len(batch)
    L = len(net.ops)
    g = [D0] * P
    gcon = [D0] * P
    # req: moon.rep
    hi = L if "rep-output" in bugs else L - 1   # the representation's end
    for j in batch:
        x = party.X[j]
        acts = net.forward(theta, x)
        # req: moon.alg1.l13
        net.backward(theta, acts, net.out_signal(acts[-1], party.y[j]), L,
                     g, 1 / Decimal(nb))
        if mu == 0:
            continue
        # req: moon.alg1.l14, moon.alg1.l15, moon.alg1.l16
        z = acts[hi]
        zg = net.forward(w_t, x, hi)[-1]
        zp = net.forward(prev, x, hi)[-1]
        dz = con_signal(z, zg, zp, tau, bugs)
        scale = Decimal(1) if "con-batch-sum" in bugs else 1 / Decimal(nb)
        net.backward(theta, acts, dz, hi, gcon, scale)
    # req: moon.alg1.l18, moon.eq4
    sgn = -1 if "con-sign" in bugs else 1
    return [a + sgn * mu * b for a, b in zip(g, gcon)]


def local_training(net, party, i, w_t, prev, batches, hp, trace, t, bugs,
                   opt=None, factor=Fraction(1)):
    """PartyLocalTraining(i, w^t) over the scheduled batches; opt the
    run's Optimizers (None: plain steps), factor the round's c_t."""
    eta, mu, tau, _, bn, _ = hp
    eta_q = Fraction(eta) * factor          # the exact step size
    if factor != 1:
        eta = dec_q(eta_q)
    if opt is not None:
        opt.begin(i)
    theta = list(w_t)
    if isinstance(net, BNNet) and bn["keep"] and \
            "start-global-buffers" not in bugs:
        for p in net.buffers:     # party i's own running statistics
            theta[p] = prev[p]
    # req: moon.alg1.l9, moon.alg1.l10
    trace.emit("client_begin", "train", t, i, 0, "w_local", theta)
    if "epochs-plus-one" in bugs:
        batches = list(batches) + [batches[0]]
    if "epochs-minus-one" in bugs:
        batches = list(batches)[:-1]
    # req: moon.alg1.l11, moon.alg1.l12
    for s, batch in enumerate(batches, start=1):
        if isinstance(net, BNNet):
            g, caches = step_bn(net, party, theta, w_t, prev, batch, mu, tau,
                                bn, bugs)
            if (bn["update"] or "running-moved" in bugs) and \
                    "running-frozen" not in bugs:
                net.M.update_running(
                    theta, caches,
                    bn["unbiased"] != ("running-var-flipped" in bugs))
            # req: moon.alg1.l19
            if opt is not None:
                theta = opt_step(opt, i, g, theta, eta_q)
            else:
                theta = [th if p in net.buffers else th - eta * gp
                         for p, (th, gp) in enumerate(zip(theta, g))]
            trace.emit("step", "train", t, i, s, "w_local", theta)
            continue
        g = step_grad(net, party, theta, w_t, prev, batch, mu, tau, bugs)
        # req: moon.alg1.l19
        if opt is not None:
            theta = opt_step(opt, i, g, theta, eta_q)
        else:
            theta = [th - eta * gp for th, gp in zip(theta, g)]
        trace.emit("step", "train", t, i, s, "w_local", theta)
    return theta


def replay(spec, bugs=frozenset()):
    """(trace, w, v, None): the run of a MOON spec on its given schedule;
    v_i = party i's previous local model w_i^{t−1} after the last round."""
    with localcontext() as ctx:
        ctx.prec = PREC
        net = (BNNet(spec["model"]) if any(
            L["type"].startswith("batchnorm")
            for L in spec["model"].get("layers", [])) else Net(spec["model"]))
        parties = [Party(c) for c in spec["problem"]["clients"]]
        init = spec["init"]
        w0 = ([dec(u) for u in init["w"]] if init["kind"] == "given"
              else [D0] * net.P)
        hp = settings(spec["algorithm"], bugs)
        opt = None
        if hp[3] is not None:
            personal = None
            if "split" in spec:     # opt.decay_scope = shared / personal
                import pflref_exact_pfl as pp
                personal = pp.personal_mask(spec["model"],
                                            spec["split"]["personal"])
            opt = po.Optimizers(hp[3], OptView(net, spec["model"]), 1,
                                personal, bugs)
        count = [0] * len(parties)       # party i's trainings so far
        trained = set()
        # req: moon.alg1.l2
        w, v, trace = list(w0), [list(w0) for _ in parties], Trace()
        for t, r in enumerate(spec["schedule"]["rounds"]):
            # req: moon.alg1.l3, moon.alg1.l5
            trace.emit("round_begin", "train", t, None, None, "w", w)
            w_t, acc = list(w), [D0] * net.P
            n_t = sum(parties[i].n for i in r["clients"])
            plan = list(zip(r["clients"], r["batches"]))
            if "drawn-batches" in bugs:     # batches[j] read as drawn[j]'s
                mine = dict(zip(r.get("drawn", r["clients"]), r["batches"]))
                plan = [(i, mine[i]) for i in r["clients"]]
            # req: moon.alg1.l4, moon.alg1.l6, moon.sampling
            for i, batches in plan:
                prev = v[i]
                if "prev-global" in bugs or ("prev-first-global" in bugs
                                             and i not in trained):
                    prev = w_t
                if "prev-w0" in bugs:
                    prev = w0
                trained.add(i)
                factor = px.round_factor(hp[5], t, bugs, trained=count[i])
                count[i] += 1
                theta = local_training(net, parties[i], i, w_t, prev, batches,
                                       hp, trace, t, bugs, opt, factor)
                # req: moon.alg1.l20
                v[i] = theta
                trace.emit("client_end", "train", t, i, None, "w_local", theta)
                # req: moon.alg1.l7
                c = (1 / Decimal(len(r["clients"])) if "uniform-weights" in bugs
                     else Decimal(parties[i].n) / n_t)
                acc = [a + c * th for a, th in zip(acc, theta)]
            if isinstance(net, BNNet) and hp[4]["keep"] and r["clients"] and \
                    "global-buffers-averaged" not in bugs:
                first = v[r["clients"][0]]    # deepcopy(uploaded_models[0])
                acc = [first[p] if p in net.buffers else a
                       for p, a in enumerate(acc)]
            w = acc
            trace.emit("server", "train", t, None, None, "w", w)
        # req: moon.alg1.l8
        return trace, w, v, None


def supported(spec):
    """Specs this module replays: a given schedule and inline clients."""
    m = spec["model"]
    ok_model = m["kind"] == "mlp" or (
        m["kind"] == "layers" and len(m.get("input", [])) == 1
        and all(L["type"] in ("dense", "relu", "identity", "tanh",
                              "batchnorm1d") for L in m["layers"])
        and (all(L["type"] != "tanh" for L in m["layers"])
             or any(L["type"] == "batchnorm1d" for L in m["layers"])))
    return (ok_model and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
