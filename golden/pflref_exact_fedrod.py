# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedrod.py: FedRoD with a linear personalised head
(Chen and Chao, "On Bridging Generic and Personalized Federated Learning
for Image Classification", ICLR 2022, arXiv 2107.00778, Alg. 1, the
balanced softmax as the balanced risk) in 60-digit decimal arithmetic,
written from the paper and PFLlib's clientrod.py, independently of the C
reference (ref/algorithms/fedrod.c).

Every input is the exact value of the double the spec holds; every
operation rounds to 60 significant digits; the softmaxes need exp and the
balanced softmax log N (Decimal's, correctly rounded).  The network is
pflref_exact_moon's Net; the body's output f(x) is the input of the last
dense layer (the generic head φ_G); the personal head φ_P has φ_G's shape,
stored as W_P (k × h, row-major) then b_P (k) when the head has a bias.

One round t (the schedule's clients S_t, ascending):
  each client i of S_t starts from w_t = (θ, φ_G), its own φ_P kept;
  for each batch b of its schedule:
    (θ, φ_G) ← (θ, φ_G) − η ∇ (1/|b|) Σ −log softmax(z_G + log N_i)_y
        N_{i,c} client i's training samples of class c; a class with
        N_{i,c} = 0 has probability 0                          (l. 7, BSM)
    φ_P ← φ_P − η ∇_{φ_P} (1/|b|) Σ CE(z_G + z_P, y), f(x) and z_G at the
        iterate after l. 7 (fedrod.features = before: before it)  (l. 8)
  w_{t+1} = Σ_{i∈S_t} (n_i / Σ_{S_t} n_j) (θ_i, φ_G,i)            (l. 12)
φ_P⁰ = 0 (fedrod.phi_p0 = generic: w⁰'s head).

Bugs (realistic implementation mistakes; check_mutants, golden/audit.py):
  bsm-plain         the generic step on the plain cross-entropy (no log N)
  bsm-batch-counts  N counted over the batch instead of the training set
  absent-one        a class the client lacks counted as N = 1 (log 0
                    avoided by a clamp) instead of probability 0
  features-before   the personal step at the features before l. 7 where
                    after is configured; features-after the reverse
  personal-alone    the personal loss on z_P alone instead of z_G + z_P
  personal-bsm      the personal step on the balanced softmax
  p0-generic        φ_P⁰ = φ_G⁰ where 0 is configured; p0-zero the reverse
  phi-reset         φ_P reset to φ_P⁰ at every round the client trains
  uniform-weights   the server's average with 1/|S_t|
  epochs-plus-one, epochs-minus-one
                    one local step too many (the first batch again) / few
  drawn-batches     a round's batch lists paired with its drawn order
                    instead of its ascending clients
  counts-ignored    init.class_counts ignored: N counted over the
                    training data anyway

The client optimizers (opt.*, docs/optimizers.md), written here again
from torch's documented update rules in 60-digit decimals: each client
holds two optimizer objects, as PFLlib's clientrod.py does (the generic
model's self.optimizer over (θ, φ_G), built in clientbase.py, stepped at
clientrod.py:53; opt_head over φ_P, built at :16, stepped at :59), each
with its own state per tensor (momentum buffer, Adam's moments, step
count), living as opt.state says (reset: new at each client update;
client: one pair per client; server: one pair carried from client to
client).  opt.decay_scope: all; weights (not the biases); shared (the
generic model's tensors only); personal (φ_P's only).  opt.clip = norm:
each step's gradient clipped over the tensors that step moves (the
generic model's at l. 7, φ_P's at l. 8), before the decay.
Optimizer bugs:
  opt-generic-plain  the generic model stepped by plain SGD
  opt-personal-plain the personal head stepped by plain SGD (PFLlib's
                     opt_head keeps lr alone whatever self.optimizer is)
  opt-steps-buffers  the generic model's optimizer over the batch-norm
                     buffers r_μ, r_v too (decayed, given momentum)
  slots-shared       the personal head's optimizer state taken from the
                     generic model's head tensors (one object over both)
  state-reset, state-client, state-server   the other lifetimes
  decay-scope-flip   shared <-> personal
  decay-scope-all    every tensor decays (the biases too)
  decay-form-swap    coupled <-> decoupled weight decay
  adam-no-bias-correction   θ ← θ − η m / (√v + ε)
  nesterov-ignored   nesterov = on stepped as plain momentum
  clip-per-block     each tensor clipped by its own norm
  momentum-form-swap classical <-> pytorch momentum

Batch normalisation in the body (a layer list with batchnorm1d layers,
pflref_exact_layers.Model in 60-digit decimals): every forward of a local
step is a training pass (PFLlib's model.train(), clientrod.py:35), which
normalises with the batch's statistics and, under bn.running = update,
moves the model's r_μ, r_v by torch's rule (update_running):
  l. 7   the pass at x (rep = model.base(x), out_g, clientrod.py:48-49):
         its gradient through the batch statistics, its statistics move
         x's buffers, then x steps (buffers never step);
  l. 8   fedrod.features = before: f and z_G of that pass (rep.detach(),
         out_g.detach(), :55-56), no further pass; after: a second
         training pass at the new x gives them and moves x's buffers
         again.
The w_local record of a step is taken after l. 7 (so under after it
holds the first move of that step only).  The server averages the whole
vector, buffers included (the state_dict average), unless bn.aggregate =
parameters_only (the preset pfllib sets it; TsingZ0/PFLlib d832e76f6a23
serverrod.py:26 and :44 call serverbase.py's send_models and
aggregate_parameters): client i's (θ_i, φ_G,i) starts from w's
parameters with the r_μ, r_v its own model last left (w⁰'s before it
first trains; clientbase.py:67-69 set_parameters copies parameters()
only), and w's r_μ, r_v after l. 12 are the first participant's
(serverbase.py:138-150, deepcopy(uploaded_models[0])).  φ_P,i (self.head,
a Linear) holds no buffer.
Keep bugs (flags bn-own-buffers, bn-global-buffers, as audit.py's):
  start-global-buffers    client i starts from w's r_μ, r_v
  start-w0-buffers        client i starts from w⁰'s r_μ, r_v every round
  global-buffers-averaged w's r_μ, r_v averaged with the rest
  global-buffers-last     w's r_μ, r_v the last participant's
BN bugs:
  bn-after-no-move   under after, the second pass leaves the buffers
  bn-eval-personal   l. 8's f and z_G from an evaluation-mode pass (the
                     running statistics) at its point
  running-frozen     the buffers never move (pflref_exact_layers' flag
                     bn-running-frozen); momentum-flipped and
                     running-var-flipped act in update_running

Learning-rate decay (lr.*; PFLlib clientrod.py:64-65 steps both
ExponentialLR objects, self.optimizer's and opt_head's, after each
train(), with the one -ldg γ): client i's update of round t steps the
generic model (l. 7) and φ_P (l. 8) both with η c, c =
pflref_exact.round_factor (γ^k, k = t or, under lr.count = trainings, the
rounds i trained in before), exactly.
lr bugs: lr-ignored, lr-shifted, lr-per-round (round_factor's);
  lr-head-const  φ_P's step η left undecayed (only the generic one decays)

init.class_counts (N lists of k integers, client 0 first), when the spec
gives it, is N_{i,.} itself (PFLlib's counts over one shuffled pass with
drop_last, clientrod.py:22-26); absent, N_{i,c} counts the training data.
"""
from decimal import Decimal, localcontext

import pflref_exact_layers as pl
from pflref_exact_moon import Net, Party, dec
import pflref_exact as px
from pflref_golden import Trace

PREC = 60
D0 = Decimal(0)

# req: fedrod.preset.pfllib
PRESETS = {
    "pfllib": {"fedrod.features": "before", "fedrod.phi_p0": "generic",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
}

MUTANTS = {
    "fedrod-balanced-risk": ["bsm-plain", "bsm-batch-counts"],
    "fedrod-absent-class": ["absent-one"],
    "fedrod-features": ["features-before"],
    "fedrod-features-before": ["features-after"],
    "fedrod-personal-output": ["personal-alone", "personal-bsm"],
    "fedrod-phi-p0": ["p0-generic"],
    "fedrod-phi-p0-generic": ["p0-zero"],
    "stale-personal-state": ["phi-reset"],
    "aggregation-weights": ["uniform-weights"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "schedule-drawn-order": ["drawn-batches"],
    "fedrod-class-counts": ["counts-ignored"],
    "fedrod-optimizers": ["opt-generic-plain", "opt-personal-plain",
                          "opt-steps-buffers"],
    "optimizer-slots-shared": ["slots-shared"],
    "weight-decay-scope": ["decay-scope-flip", "decay-scope-all"],
    "weight-decay-form": ["decay-form-swap"],
    "adam-bias-correction": ["adam-no-bias-correction"],
    "nesterov-momentum": ["nesterov-ignored"],
    "clip-scope": ["clip-per-block"],
    "momentum-form": ["momentum-form-swap"],
    "fedrod-bn-passes": ["bn-after-no-move", "bn-eval-personal"],
    "bn-running-frozen": ["running-frozen"],
    "bn-running-update": ["momentum-flipped", "running-var-flipped"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "lr-head-const"],
    "lr-count": ["lr-per-round"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
}

OPT_DEFAULTS = {"opt.method": "sgd", "opt.momentum": 0.0,
                "opt.dampening": 0.0, "opt.weight_decay": 0.0,
                "opt.beta1": 0.9, "opt.beta2": 0.999, "opt.eps": 1e-8,
                "opt.momentum_form": "pytorch", "opt.nesterov": "off",
                "opt.weight_decay_form": "coupled", "opt.decay_scope": "all",
                "opt.clip": "off", "opt.state": "reset"}


def opt_config(hp, bugs):
    """The opt.* settings (defaults filled), or None for plain SGD."""
    c = dict(OPT_DEFAULTS)
    c.update({k: v for k, v in hp.items() if k.startswith("opt.")})
    if (c["opt.method"] == "sgd" and float(c["opt.momentum"]) == 0
            and float(c["opt.weight_decay"]) == 0 and c["opt.clip"] == "off"):
        return None
    for k in ("opt.momentum", "opt.dampening", "opt.weight_decay",
              "opt.beta1", "opt.beta2", "opt.eps"):
        c[k] = dec(c[k])
    if c["opt.clip"] == "norm":
        c["opt.clip_norm"] = dec(c["opt.clip_norm"])
    for life in ("reset", "client", "server"):
        if "state-" + life in bugs:
            c["opt.state"] = life
    if "decay-scope-flip" in bugs:
        c["opt.decay_scope"] = {"shared": "personal", "personal": "shared"}.get(
            c["opt.decay_scope"], c["opt.decay_scope"])
    if "decay-scope-all" in bugs:
        c["opt.decay_scope"] = "all"
    if "decay-form-swap" in bugs:
        c["opt.weight_decay_form"] = ("coupled" if
                                      c["opt.weight_decay_form"] == "decoupled"
                                      else "decoupled")
    if "nesterov-ignored" in bugs:
        c["opt.nesterov"] = "off"
    if "momentum-form-swap" in bugs:
        c["opt.momentum_form"] = ("pytorch" if c["opt.momentum_form"] ==
                                  "classical" else "classical")
    return c


def tensors(net):
    """The generic model's tensors: (offset, size, is_bias) of each dense
    layer's weight, then its bias, in layout order."""
    if hasattr(net, "tensors"):
        return net.tensors()
    out = []
    for op in net.ops:
        if op[0] == "dense":
            _, ow, ob, n_in, n_out = op
            out.append((ow, n_in * n_out, False))
            if ob is not None:
                out.append((ob, n_out, True))
    return out


def head_tensors(net):
    """φ_P's tensors: W_P at 0 (k × h), b_P at k·h."""
    _, _, ob, h, k = net.ops[-1]
    return [(0, k * h, False)] + ([(k * h, k, True)] if ob is not None else [])


class Opt:
    """One torch optimizer object: per tensor (by offset) its step count
    and buffers."""

    def __init__(self):
        self.t, self.b, self.v = {}, {}, {}


def clip(c, blocks, d, bugs):
    """clip_grad_norm_ (opt.clip = norm, docs/optimizers.md): d scaled by
    c / (‖d‖ + 10⁻⁶) when that is below 1, ‖d‖ over the step's moving
    tensors (blocks) at 60 digits; the decision is logged to
    pflref_exact_optim.CLIP_LOG (golden/coincidences.py reads it).  Bug
    clip-per-block: each tensor by its own norm."""
    if c["opt.clip"] != "norm":
        return d
    import pflref_exact_optim as po
    d = list(d)
    groups = ([[(off, n)] for off, n, _ in blocks] if "clip-per-block" in bugs
              else [[(off, n) for off, n, _ in blocks]])
    for group in groups:
        idx = [p for off, n in group for p in range(off, off + n)]
        with localcontext() as ctx:
            ctx.prec = PREC
            norm = sum(d[p] * d[p] for p in idx).sqrt()
            coef = c["opt.clip_norm"] / (norm + Decimal(1e-6))
            if not bugs:
                assert abs(coef - 1) > Decimal("1e-6"), coef   # no near tie
            if po.CLIP_LOG is not None:
                po.CLIP_LOG.append((norm, False, coef))
            if coef < 1:
                for p in idx:
                    d[p] = d[p] * coef
    return d


def opt_step(c, st, blocks, personal, theta, d, eta, bugs):
    """One torch step of the optimizer st on theta (a new list): the clip
    over blocks first (clip_grad_norm_ between backward() and step()),
    then each tensor's decay and update."""
    theta = list(theta)
    d = clip(c, blocks, d, bugs)
    adam = c["opt.method"] in ("adam", "adamw")
    decoupled = (c["opt.method"] == "adamw"
                 or c["opt.weight_decay_form"] == "decoupled")
    if "decay-form-swap" in bugs and c["opt.method"] == "adamw":
        decoupled = False
    mu, tau, lam = c["opt.momentum"], c["opt.dampening"], c["opt.weight_decay"]
    scope = c["opt.decay_scope"]
    for off, n, bias in blocks:
        takes = {"all": True, "weights": not bias, "shared": not personal,
                 "personal": personal}[scope]
        lb = lam if takes else D0
        th = theta[off:off + n]
        g = list(d[off:off + n])
        if decoupled:
            th = [u * (1 - eta * lb) for u in th]
        elif lb:
            g = [gi + lb * u for gi, u in zip(g, th)]
        t = st.t.get(off, 0)
        if adam:
            b1, b2, eps = c["opt.beta1"], c["opt.beta2"], c["opt.eps"]
            t += 1
            m = st.b.get(off, [D0] * n)
            v = st.v.get(off, [D0] * n)
            m = [b1 * a + (1 - b1) * gi for a, gi in zip(m, g)]
            v = [b2 * a + (1 - b2) * gi * gi for a, gi in zip(v, g)]
            st.b[off], st.v[off] = m, v
            if "adam-no-bias-correction" in bugs:
                th = [u - eta * a / (w.sqrt() + eps)
                      for u, a, w in zip(th, m, v)]
            else:
                step = eta / (1 - b1 ** t)
                bc2 = (1 - b2 ** t).sqrt()
                th = [u - step * a / (w.sqrt() / bc2 + eps)
                      for u, a, w in zip(th, m, v)]
        elif mu == 0:
            th = [u - eta * gi for u, gi in zip(th, g)]
        elif c["opt.momentum_form"] == "classical":
            vel = st.b.get(off, [D0] * n)
            vel = [mu * a - eta * gi for a, gi in zip(vel, g)]
            st.b[off] = vel
            th = [u + a for u, a in zip(th, vel)]
        else:
            buf = (list(g) if t == 0 else
                   [mu * a + (1 - tau) * gi for a, gi in zip(st.b[off], g)])
            st.b[off] = buf
            if c["opt.nesterov"] == "on":
                g = [gi + mu * a for gi, a in zip(g, buf)]
            else:
                g = buf
            th = [u - eta * gi for u, gi in zip(th, g)]
        if not adam:
            t += 1
        st.t[off] = t
        theta[off:off + n] = th
    return theta


class Optimizers:
    """The client optimizers of a run: pair(i) gives client i's (generic,
    personal) objects under opt.state."""

    def __init__(self, c):
        self.c, self.per = c, {}
        self.shared = (Opt(), Opt())

    def begin(self, i):
        if self.c["opt.state"] == "reset":
            self.shared = (Opt(), Opt())

    def pair(self, i):
        if self.c["opt.state"] == "client":
            return self.per.setdefault(i, (Opt(), Opt()))
        return self.shared


def settings(algorithm, bugs):
    """η and the switches, the preset's first."""
    hp = dict(PRESETS.get(algorithm.get("preset", "paper"), {}))
    hp.update(algorithm.get("hyperparameters", {}))
    hp.update(algorithm.get("switches", {}))
    s = {
        "eta": dec(hp["eta"]),
        "before": hp.get("fedrod.features", "after") == "before",
        "generic": hp.get("fedrod.phi_p0", "zero") == "generic",
    }
    if "features-before" in bugs:
        s["before"] = True
    if "features-after" in bugs:
        s["before"] = False
    if "p0-generic" in bugs:
        s["generic"] = True
    if "p0-zero" in bugs:
        s["generic"] = False
    s["opt"] = opt_config(hp, bugs)
    # lr.*: the keys pflref_exact.round_factor reads
    s["decay"] = {"switches": hp, "hyperparameters": hp}
    running = hp.get("bn.running", "update")
    if "running-moved" in bugs:
        running = "update"
    s["bn_update"] = running == "update"
    s["bn_unbiased"] = hp.get("bn.running_var", "unbiased") == "unbiased"
    s["keep"] = hp.get("bn.aggregate", "average") == "parameters_only"
    return s


def buffer_entries(net):
    """The offsets of the model's buffers r_μ, r_v (none without batch
    normalisation)."""
    if not hasattr(net, "M"):
        return []
    return [p for b, o in net.M.block_offsets() if b["is_buffer"]
            for p in range(o, o + b["size"])]


def with_buffers(x, src, B):
    """x with its entries B taken from src."""
    x = list(x)
    for p in B:
        x[p] = src[p]
    return x


def softmax_signal(z, y, counts):
    """p − e_y, p = softmax(z + log N) over the classes with N > 0 (counts
    None: the plain softmax)."""
    # req: fedrod.bsm, fedrod.bsm.absent
    if counts is None:
        a = list(z)
    else:
        a = [u + Decimal(n).ln() if n > 0 else None
             for u, n in zip(z, counts)]
    m = max(u for u in a if u is not None)
    e = [(u - m).exp() if u is not None else D0 for u in a]
    s = sum(e)
    return [ei / s - (1 if c == int(y) else 0) for c, ei in enumerate(e)]


def counts_of(party, K, batch, bugs):
    ys = [party.y[j] for j in batch] if "bsm-batch-counts" in bugs \
        else party.y
    n = [sum(1 for y in ys if int(y) == c) for c in range(K)]
    given = getattr(party, "given_counts", None)
    if (given is not None and "counts-ignored" not in bugs
            and "bsm-batch-counts" not in bugs):
        n = list(given)                 # init.class_counts
    if "absent-one" in bugs:
        n = [max(u, 1) for u in n]
    return n


def head_of(net, theta):
    """(W (k × h), b or None) of the last dense layer of theta."""
    _, ow, ob, h, k = net.ops[-1]
    W = [theta[ow + c * h:ow + (c + 1) * h] for c in range(k)]
    b = [theta[ob + c] for c in range(k)] if ob is not None else None
    return W, b


def apply_head(W, b, f):
    return [(b[c] if b is not None else D0)
            + sum(W[c][u] * f[u] for u in range(len(f)))
            for c in range(len(W))]


def generic_step(net, party, x, batch, hp, K, bugs):
    """l. 7's gradient ∇ L^BR(x; batch), and the features and z_G at x."""
    L, nb = len(net.ops), len(batch)
    g = [D0] * net.P
    counts = None if "bsm-plain" in bugs else counts_of(party, K, batch, bugs)
    feats = []
    for j in batch:
        acts = net.forward(x, party.X[j])
        feats.append((acts[L - 1], acts[-1]))
        net.backward(x, acts, softmax_signal(acts[-1], party.y[j], counts),
                     L, g, 1 / Decimal(nb))
    return g, feats


def personal_step(net, party, x, phi, batch, feats, hp, K, bugs):
    """l. 8's gradient ∇_{φ_P} mean CE(z_G + z_P), with f and z_G at the
    iterate after l. 7 (feats of the iterate before it under before)."""
    L, nb = len(net.ops), len(batch)
    _, _, ob, h, k = net.ops[-1]
    if not hp["before"]:
        # req: fedrod.features
        feats = []
        for j in batch:
            acts = net.forward(x, party.X[j])
            feats.append((acts[L - 1], acts[-1]))
    WP = [phi[c * h:(c + 1) * h] for c in range(k)]
    bP = phi[k * h:] if ob is not None else None
    gP = [D0] * len(phi)
    counts = counts_of(party, K, batch, bugs) if "personal-bsm" in bugs \
        else None
    for (f, zg), j in zip(feats, batch):
        zp = apply_head(WP, bP, f)
        z = zp if "personal-alone" in bugs else [a + b for a, b in zip(zg, zp)]
        sig = softmax_signal(z, party.y[j], counts)
        for c in range(k):
            for u in range(h):
                gP[c * h + u] += sig[c] * f[u] / nb
            if ob is not None:
                gP[k * h + c] += sig[c] / nb
    return gP


class BNNet:
    """A layer list with batch normalisation (pflref_exact_layers.Model,
    decimal domain), with Net's head description ops[-1] = ("dense", W
    offset, b offset or None, h, k)."""

    def __init__(self, model):
        self.M = pl.Model(model, "decimal")
        at = self.M.layout()
        L = self.M.layers[-1]
        assert L.type == "dense", L.type
        self.ops = [("dense", at[(L.index, "weight")],
                     at[(L.index, "bias")] if L.bias else None,
                     L.in_shape[0], L.out)]
        self.P = self.M.P

    def tensors(self):
        """The parameters (offset, size, is_bias): buffers never step."""
        return [(o, b["size"], b["role"] == "bias" and not b["is_bn"])
                for b, o in self.M.block_offsets() if not b["is_buffer"]]

    def train_pass(self, x, party, batch):
        """(Z, caches) of the training pass at x on the batch."""
        return self.M.forward(x, [party.X[j] for j in batch], True)

    def move(self, x, caches, hp, bugs):
        """x with its buffers moved by the pass (bn.running = update)."""
        x = list(x)
        if hp["bn_update"] and "running-frozen" not in bugs:
            self.M.update_running(x, caches, hp["bn_unbiased"], bugs)
        return x


def generic_step_bn(net, party, x, batch, hp, K, bugs):
    """l. 7 with batch normalisation: (∇L^BR at x through the batch
    statistics, the pass's (f, z_G) per sample, x with its buffers moved
    by the pass)."""
    M, nb = net.M, len(batch)
    Z, caches = net.train_pass(x, party, batch)
    counts = None if "bsm-plain" in bugs else counts_of(party, K, batch, bugs)
    G = [[e / nb for e in softmax_signal(z, party.y[j], counts)]
         for z, j in zip(Z, batch)]
    g = [D0] * net.P
    for L, cache in zip(reversed(M.layers), reversed(caches)):
        G = M._backward(L, cache, x, G, g, pl.NO_BUGS)
    feats = list(zip(caches[-1]["in"], Z))
    # req: fedrod.bn
    return g, feats, net.move(x, caches, hp, bugs)


def personal_feats_bn(net, party, x_old, x, batch, feats, hp, bugs):
    """l. 8's (f, z_G) per sample with batch normalisation, and x (its
    buffers moved once more by the second pass under after)."""
    if "bn-eval-personal" in bugs:
        at = x_old if hp["before"] else x
        Z, caches = net.M.forward(at, [party.X[j] for j in batch], False)
        feats = list(zip(caches[-1]["in"], Z))
        return feats, x
    if hp["before"]:
        return feats, x
    Z, caches = net.train_pass(x, party, batch)
    if "bn-after-no-move" not in bugs:
        x = net.move(x, caches, hp, bugs)
    return list(zip(caches[-1]["in"], Z)), x


def step_of(opts, slot, i, net, theta, g, hp, bugs):
    """θ − η g (plain SGD), or the step of client i's optimizer `slot`
    (0: the generic model, 1: the personal head)."""
    plain = opts is None or (slot == 0 and "opt-generic-plain" in bugs) or (
        slot == 1 and "opt-personal-plain" in bugs)
    if plain:
        return [a - hp["eta"] * b for a, b in zip(theta, g)]
    pair = opts.pair(i)
    if slot == 1 and "slots-shared" in bugs:
        # one object over both: φ_P's tensors read the generic head's
        # state (the head's offsets in the model vector)
        _, ow, ob, h, k = net.ops[-1]
        st, shared = Opt(), pair[0]
        st.t = {0: shared.t.get(ow, 0), k * h: shared.t.get(ob, 0)}
        st.b = {o: shared.b[s] for o, s in ((0, ow), (k * h, ob))
                if s in shared.b}
        st.v = {o: shared.v[s] for o, s in ((0, ow), (k * h, ob))
                if s in shared.v}
        out = opt_step(opts.c, st, head_tensors(net), True, theta, g,
                       hp["eta"], bugs)
        for o, s in ((0, ow), (k * h, ob)):
            if s is None:
                continue
            shared.t[s] = st.t[o]
            if o in st.b:
                shared.b[s] = st.b[o]
            if o in st.v:
                shared.v[s] = st.v[o]
        return out
    blocks = tensors(net) if slot == 0 else head_tensors(net)
    if slot == 0 and "opt-steps-buffers" in bugs and hasattr(net, "M"):
        blocks = [(o, b["size"], False) for b, o in net.M.block_offsets()]
    return opt_step(opts.c, pair[slot], blocks, slot == 1, theta, g,
                    hp["eta"], bugs)


def phi0(net, w0, hp):
    """φ_P⁰: 0, or w⁰'s head (generic)."""
    # req: fedrod.alg1.l1
    _, ow, ob, h, k = net.ops[-1]
    H = k * h + (k if ob is not None else 0)
    if not hp["generic"]:
        return [D0] * H
    W, b = head_of(net, w0)
    return [u for row in W for u in row] + (list(b) if b is not None else [])


def replay(spec, bugs=frozenset()):
    """(trace, w, None, None): the run of a FedRoD spec on its given
    schedule."""
    with localcontext() as ctx:
        ctx.prec = PREC
        bn = has_bn(spec["model"])
        net = BNNet(spec["model"]) if bn else Net(spec["model"])
        K = net.ops[-1][4]
        parties = [Party(c) for c in spec["problem"]["clients"]]
        for p, row in zip(parties, spec["init"].get("class_counts", [])):
            p.given_counts = [int(u) for u in row]
        w0 = [dec(u) for u in spec["init"]["w"]]
        hp = settings(spec["algorithm"], bugs)
        w, trace = list(w0), Trace()
        phi = [phi0(net, w0, hp) for _ in parties]
        opts = Optimizers(hp["opt"]) if hp["opt"] is not None else None
        trained = [0] * len(parties)     # each client's train() calls
        # bn.aggregate = parameters_only: each client's own model's r_μ, r_v
        B = buffer_entries(net) if hp["keep"] else []
        own = [list(w0) for _ in parties]
        for t, r in enumerate(spec["schedule"]["rounds"]):
            # req: fedrod.alg1.l3
            trace.emit("round_begin", "train", t, None, None, "w", w)
            n_S = sum(parties[i].n for i in r["clients"])
            acc = [D0] * net.P
            # req: fedrod.alg1.l2
            plan = list(zip(r["clients"], r["batches"]))
            if "drawn-batches" in bugs:     # batches[j] read as drawn[j]'s
                mine = dict(zip(r.get("drawn", r["clients"]), r["batches"]))
                plan = [(i, mine[i]) for i in r["clients"]]
            for i, batches in plan:
                # req: fedrod.alg1.l4
                x = list(w)
                if B and "start-global-buffers" not in bugs:
                    # set_parameters: parameters() only (clientbase.py:67-69)
                    x = with_buffers(x, w0 if "start-w0-buffers" in bugs
                                     else own[i], B)
                if "phi-reset" in bugs:
                    phi[i] = phi0(net, w0, hp)
                trace.emit("client_begin", "train", t, i, 0, "w_local", x)
                if "epochs-plus-one" in bugs:
                    batches = list(batches) + [batches[0]]
                if "epochs-minus-one" in bugs:
                    batches = list(batches)[:-1]
                # req: fedrod.alg1.l5, fedrod.alg1.l6
                if opts is not None:
                    opts.begin(i)
                c = px.round_factor(hp["decay"], t, bugs,
                                    trained=trained[i])      # lr.*
                trained[i] += 1
                hp_g = dict(hp, eta=hp["eta"] * Decimal(c.numerator)
                            / Decimal(c.denominator))
                hp_h = hp if "lr-head-const" in bugs else hp_g
                for s, batch in enumerate(batches, start=1):
                    hp_p = hp
                    if bn:
                        x_old = x
                        g, feats, x = generic_step_bn(net, parties[i], x,
                                                      batch, hp, K, bugs)
                    else:
                        g, feats = generic_step(net, parties[i], x, batch,
                                                hp, K, bugs)
                    # req: fedrod.alg1.l7
                    x = step_of(opts, 0, i, net, x, g, hp_g, bugs)
                    trace.emit("step", "train", t, i, s, "w_local", x)
                    if bn:
                        feats, x = personal_feats_bn(net, parties[i], x_old, x,
                                                     batch, feats, hp, bugs)
                        hp_p = dict(hp, before=True)    # feats given
                    gP = personal_step(net, parties[i], x, phi[i], batch,
                                       feats, hp_p, K, bugs)
                    # req: fedrod.alg1.l8
                    phi[i] = step_of(opts, 1, i, net, phi[i], gP, hp_h,
                                     bugs)
                    trace.emit("step", "train", t, i, s, "phi_P", phi[i])
                # req: fedrod.alg1.l10
                trace.emit("client_end", "train", t, i, None, "w_local", x)
                trace.emit("note", "train", t, i, None, "phi_P", phi[i])
                own[i] = list(x)
                c = (1 / Decimal(len(r["clients"])) if "uniform-weights" in bugs
                     else Decimal(parties[i].n) / n_S)
                acc = [a + c * u for a, u in zip(acc, x)]
            # req: fedrod.alg1.l12
            if B and r["clients"] and "global-buffers-averaged" not in bugs:
                # deepcopy(uploaded_models[0]) (serverbase.py:138-150)
                k = r["clients"][-1 if "global-buffers-last" in bugs else 0]
                acc = with_buffers(acc, own[k], B)
            w = acc
            trace.emit("server", "train", t, None, None, "w", w)
        return trace, w, None, None


def has_bn(model):
    return model["kind"] == "layers" and any(
        L["type"].startswith("batchnorm") for L in model["layers"])


def supported(spec):
    """Specs this module replays: a given schedule, inline clients, a
    classifier mlp or dense/relu layer list, given w⁰."""
    m = spec["model"]
    ok_model = m["kind"] == "mlp" or (
        m["kind"] == "layers" and len(m.get("input", [])) == 1
        and all(L["type"] in ("dense", "relu", "identity", "batchnorm1d")
                for L in m["layers"]))
    hp = dict(spec["algorithm"].get("hyperparameters", {}))
    hp.update(spec["algorithm"].get("switches", {}))
    return (ok_model and m.get("loss", "cross_entropy") == "cross_entropy"
            and "clients" in spec.get("problem", {})
            and spec.get("init", {}).get("kind") == "given"
            and spec.get("schedule", {}).get("kind") == "given")
