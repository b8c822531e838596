# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedpac.py: FedPAC (Xu, Tong, Huang, "Personalized
Federated Learning with Feature Alignment and Classifier Collaboration",
ICLR 2023, arXiv 2306.11867, Alg. 1) with a linear classifier head, in
60-digit decimal arithmetic, written from the method and the authors' code
(JianXu95/FedPAC 5770f4ff8f11), independently of the C reference
(ref/algorithms/fedpac.c).

Every input is the exact value of the double the spec holds; every
operation rounds to 60 significant digits.  The features (a ReLU or
identity body) and the statistics are rational; only the cross-entropy's
softmax needs exp (Decimal's, correctly rounded).  The network is
pflref_exact_moon's Net; f_θ(x) is the input of the last dense layer (the
classifier φ), whose entries are the head.

One round t (the schedule's clients S_t, ascending):
  each i ∈ S_t, from (θ^(t), φ_i):
    statistics at θ^(t): p_k = n_{i,k}/n_i, μ_k the class means of f_θ(x),
      h_{i,k} = p_k μ_k, V_i = (1/n_i) Σ_k [p_k mean_k ‖f‖² − p_k² ‖μ_k‖²]
    the first τ_φ batches: φ ← φ − η_φ ∇_φ mean CE
    the rest: θ ← θ − η ∇_θ mean [CE + λ ‖f_θ(x) − c_y‖²] (÷ d under
      fedpac.distance = mse); no term for a class without a centroid
    ĉ_{i,k}: the class means of f at the trained θ_i
  θ^(t+1) = Σ n_i θ_i / Σ n_i; c_k = Σ n_{i,k} ĉ_{i,k} / Σ n_{i,k} over the
  clients of S_t holding k (a new set each round)
  α_i = argmin αᵀ Q_i α, α ≥ 0, Σα = 1, Q_i[j][j'] = [j=j'] V_j +
    Σ_k ⟨h_i,k − h_j,k, h_i,k − h_j',k⟩: the first support (by size, then
    by Σ 2^j) whose bordered KKT system is regular and whose point passes
    the KKT tests; φ_i ← Σ_j α_ij φ_j (the heads after their steps)

Bugs (realistic implementation mistakes; check_mutants, golden/audit.py):
  align-half       R = ½‖f − c‖² (the factor 2 of ∂R/∂f lost)
  align-dim        ‖·‖²/d where ‖·‖² is configured, or the reverse
  lambda-one       λ left out (λ = 1)
  stats-trained    V_i, h_i at the trained θ_i instead of θ^(t)
  protos-start     ĉ_{i,k} at θ^(t) instead of the trained θ_i
  proto-uniform    c_k the plain mean of the ĉ_{i,k}
  missing-zero     a class without a centroid pulled toward 0
  keep-old-global  classes no client of S_t holds keep their old c_k
  bias-no-prior    h_{i,k} = μ_{i,k} (the prior p_{i,k} left out)
  var-no-n         V_i not divided by n_i
  var-zero         the variance term left out of Q_i
  alpha-uniform    α_i = 1/m for every j
  alpha-self       α_i = e_i (no collaboration: the own head)
  heads-before     the heads combined as they were before the τ_φ steps
  body-first       the body's steps before the classifier's
  theta-uniform    θ^(t+1) the plain mean
  phi-reset        φ_i restarts from w⁰'s head at every visit
  epochs-plus-one, epochs-minus-one
                   one local step too many (the first batch again) / few
  no-threshold     alpha_small configured, the minimiser used as it is
  no-renormalise, renormalise
                   the thresholded weights not divided by their sum under
                   renormalised / divided under raw
  own-round0       own_start applied in round 0 too
  own-trained      own_start's centroid at the client's last trained θ_i
  missing-skip     own_start configured, no term used
  proto-counts     uniform centroid weights configured, n_{i,k} used
  drawn-batches    a round's batch lists paired with its drawn order
                   instead of its ascending clients
  lr-ignored, lr-shifted, lr-per-round
                   pflref_exact.round_factor's (the decay left out / one
                   scheduler step early / lr.count = trainings read as the
                   round t)
  lr-phi-const     η_φ left undecayed (only η decays)

Learning-rate decay (lr.*; PFLlib clientpac.py:95-96 steps the
ExponentialLR of the client's one optimizer after its train(), so both
phases' step sizes decay): in client i's update of round t, η and η_φ are
both multiplied by c = pflref_exact.round_factor (γ^k, k = t or, under
lr.count = trainings, the rounds client i trained in before), exactly.
  opt-head-plain   with a client optimizer: the classifier's steps plain
  opt-body-plain   with a client optimizer: the feature extractor's plain
  opt-one-lr       with a client optimizer: the classifier's steps at η
  (and pflref_exact_optim's bugs: slots-shared, the state lifetimes, ...)
The client optimizers (opt.*, pflref_exact_optim.py, on Fractions: each
step's inputs are the exact values of the 60-digit decimals, its outputs
rounded back to 60 digits): the authors' two torch.optim.SGD objects of a
client update (methods/fedpac.py:194-195 the classifier's, lr η_φ;
:220-221 the feature extractor's, lr η), optimizer 0 stepping the head's
blocks in the τ_φ classifier steps and optimizer 1 the body's in the rest,
each on its phase's loss gradient; opt.state says how long they live.
Switches: fedpac.distance, fedpac.alpha_small (with fedpac.alpha_eps),
fedpac.missing (own_start: from round 1, the client's own class means at
θ^(t) stand in for a missing centroid), fedpac.centroid_weights; presets
official and pfllib (PRESETS).

Batch normalisation in the feature extractor (a layer list with
batchnorm1d layers, pflref_exact_layers.Model in 60-digit decimals, BNNet
below).  Which of torch's modes each pass runs in:
  l. 5, l. 8   the statistics V_i, h_i and the centroids ĉ_{i,k}:
               evaluation mode, r_μ, r_v (PFLlib clientpac.py:116-119,
               collect_protos under model.eval() and no_grad; the
               statistics of set_parameters after it), so f_θ(x) is a
               function of x alone and no statistic moves;
  l. 6, l. 7   each step a training pass on its batch (clientpac.py:26
               model.train(), :45, :68): the batch's μ_B, s²_B in the
               forward and in the gradient, the alignment term on the
               features of that same pass (rep at :68 enters :78), and,
               under bn.running = update, the pass moves r_μ, r_v by
               torch's rule (update_running), in l. 6 as well (θ frozen:
               torch moves buffers whatever requires_grad); the step
               leaves the buffers (no gradient).
bn.aggregate: average (the authors' state_dict average, running.py:221
with methods/fedpac.py:85-91) averages r_μ, r_v with θ and sends them to
every client; parameters_only (PFLlib clientpac.py:105-107 copies
parameters() only; serverbase.py:138-150) keeps each client's own r_μ,
r_v in its v_i (w⁰'s before it first trains) and gives w the first
participant's.
BN bugs:
  bn-stats-train    l. 5 and l. 8's features from one training pass over
                    the client's whole set (batch statistics)
  bn-align-eval     l. 7's alignment features from an evaluation-mode
                    pass (running statistics), the loss's still training
  bn-head-no-move   l. 6's passes leave r_μ, r_v (θ frozen read as
                    buffers frozen)
  bn-keep-averaged  under parameters_only, the clients take w's averaged
                    r_μ, r_v as under average
  running-frozen    the buffers never move
  running-moved     they move where bn.running = frozen is configured
  running-var-flipped  the other of s² and m/(m − 1) s² into r_v
"""
from decimal import Decimal, localcontext

from fractions import Fraction

from pflref_exact_moon import Net, Party, dec
import pflref_exact as px
import pflref_exact_layers as pl
from pflref_golden import Trace
import pflref_exact_optim as po

PREC = 60
D0 = Decimal(0)
TOL = Decimal("1e-40")   # a pivot or KKT sign test's zero at 60 digits

PRESETS = {
    "official": {"fedpac.distance": "mse",
                 "fedpac.alpha_small": "renormalised",
                 "fedpac.missing": "own_start"},
    "pfllib": {"fedpac.distance": "mse", "fedpac.alpha_small": "raw",
               "fedpac.centroid_weights": "uniform",
               "lr.count": "trainings", "bn.aggregate": "parameters_only"},
    "official_run": {"fedpac.distance": "mse",
                     "fedpac.alpha_small": "renormalised",
                     "fedpac.missing": "own_start",
                     "opt.momentum": 0.5, "opt.weight_decay": 0.0005},
}

MUTANTS = {
    "fedpac-alignment": ["align-half", "align-dim", "lambda-one"],
    "fedpac-statistics": ["stats-trained", "bias-no-prior", "var-no-n",
                          "var-zero"],
    "fedpac-centroids": ["protos-start", "proto-uniform"],
    "fedpac-missing-centroid": ["missing-zero", "keep-old-global"],
    "fedpac-combination": ["alpha-uniform", "alpha-self", "heads-before"],
    "fedpac-order": ["body-first"],
    "fedpac-distance-mse": ["align-dim"],
    "fedpac-alpha-small": ["no-threshold"],
    "fedpac-alpha-eps-boundary": ["eps-inclusive"],
    "fedpac-alpha-renormalised": ["no-renormalise"],
    "fedpac-alpha-raw": ["renormalise"],
    "fedpac-missing-own": ["own-round0", "own-trained", "missing-skip"],
    "fedpac-centroid-uniform": ["proto-counts"],
    "aggregation-weights": ["theta-uniform"],
    "stale-personal-state": ["phi-reset"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "fedpac-optimizers": ["opt-head-plain", "opt-body-plain",
                          "opt-one-lr"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "lr-phi-const"],
    "lr-count": ["lr-per-round"],
    "fedpac-bn-modes": ["bn-stats-train", "bn-align-eval",
                        "bn-head-no-move"],
    "bn-running-frozen": ["running-frozen"],
    "bn-running-moved": ["running-moved"],
    "bn-running-update": ["running-var-flipped"],
    "bn-own-buffers": ["bn-keep-averaged"],
}


def settings(algorithm, bugs):
    """The spec's hyperparameters and switches, the preset's first."""
    hp = dict(PRESETS.get(algorithm.get("preset", "paper"), {}))
    hp.update(algorithm.get("hyperparameters", {}))
    hp.update(algorithm.get("switches", {}))
    s = {
        "eta": dec(hp["eta"]),
        "eta_phi": dec(hp["fedpac.eta_phi"]),
        "tau_phi": int(hp["fedpac.tau_phi"]),
        "lam": Decimal(1) if "lambda-one" in bugs
        else dec(hp["fedpac.lambda"]),
        "mse": hp.get("fedpac.distance", "squared_l2") == "mse",
        "small": hp.get("fedpac.alpha_small", "exact"),
        "eps": dec(hp.get("fedpac.alpha_eps", 1e-3)),
        "own": hp.get("fedpac.missing", "none") == "own_start",
        "uniform": hp.get("fedpac.centroid_weights",
                          "class_counts") == "uniform",
        # lr.*: the keys pflref_exact.round_factor reads
        "decay": {"switches": hp, "hyperparameters": hp},
        # batch normalisation (BNNet): torch's running-statistics rule
        "bn_update": (hp.get("bn.running", "update") == "update"
                      or "running-moved" in bugs)
        and "running-frozen" not in bugs,
        "bn_unbiased": (hp.get("bn.running_var", "unbiased") == "unbiased")
        != ("running-var-flipped" in bugs),
        "bn_keep": hp.get("bn.aggregate", "average") == "parameters_only"
        and "bn-keep-averaged" not in bugs,
    }
    if "proto-uniform" in bugs or "proto-counts" in bugs:
        s["uniform"] = not s["uniform"]
    if "no-threshold" in bugs:
        s["small"] = "exact"
    if "no-renormalise" in bugs:
        s["small"] = "raw"
    if "renormalise" in bugs:
        s["small"] = "renormalised"
    if "missing-skip" in bugs:
        s["own"] = False
    if "align-dim" in bugs:
        s["mse"] = not s["mse"]
    return s


def opt_config(algorithm):
    """The spec's algorithm object with its preset's opt.* keys merged
    (the spec's own keys win): what pflref_exact_optim.config reads."""
    pre = {k: u for k, u in
           PRESETS.get(algorithm.get("preset", "paper"), {}).items()
           if k.startswith("opt.")}
    return {"hyperparameters": dict(pre, **algorithm.get("hyperparameters",
                                                         {})),
            "switches": dict(algorithm.get("switches", {}))}


class OptView:
    """The optimizer's view of the network: its parameter blocks in layout
    order (dense layer j: W<j+1>, then b<j+1>), P entries."""

    def __init__(self, net):
        self.P, self.opt_blocks, j = net.P, [], 0
        for op in net.ops:
            if op[0] != "dense":
                continue
            j += 1
            _, ow, ob, n_in, n_out = op
            self.opt_blocks.append(("W%d" % j,
                                    list(range(ow, ow + n_in * n_out))))
            if ob is not None:
                self.opt_blocks.append(("b%d" % j,
                                        list(range(ob, ob + n_out))))


def optimizers(spec, net, bugs):
    """The run's two client optimizers per client, or None (plain)."""
    alg = opt_config(spec["algorithm"])
    if not po.uses_optimizer({"algorithm": alg}):
        return None
    return po.Optimizers(po.config(alg), OptView(net), 2, None,
                         frozenset(bugs))


def opt_step(opt, i, k, g, x, eta, mask):
    # req: fedpac.opt
    """Client i's optimizer k on gradient g over the entries of mask,
    in fractions; back to 60-digit decimals."""
    out = opt.step(i, k, [Fraction(u) for u in g], [Fraction(u) for u in x],
                   Fraction(eta), mask)
    return [Decimal(q.numerator) / Decimal(q.denominator) for q in out]


def head_entries(net):
    """The entries of the last dense layer (the classifier φ)."""
    _, ow, ob, n_in, n_out = net.ops[-1]
    idx = list(range(ow, ow + n_in * n_out))
    if ob is not None:
        idx += list(range(ob, ob + n_out))
    return sorted(idx)


def features(net, theta, x):
    acts = net.forward(theta, x)
    return acts, acts[len(net.ops) - 1]


class BNNet:
    """A layer list with batch normalisation (pflref_exact_layers.Model in
    decimals), with Net's head description ops[-1] = ("dense", W offset,
    b offset or None, h, k) and the offsets of its buffers (r_μ, r_v)."""

    def __init__(self, model):
        self.M = pl.Model(model, "decimal")
        at = self.M.layout()
        L = self.M.layers[-1]
        assert L.type == "dense", L.type
        self.ops = [("dense", at[(L.index, "weight")],
                     at[(L.index, "bias")] if L.bias else None,
                     L.in_shape[0], L.out)]
        self.P = self.M.P
        self.buffers = {o + q for b, o in self.M.block_offsets()
                        if b["is_buffer"] for q in range(b["size"])}

    def eval_features(self, theta, X):
        """f_θ(x) of each sample of X in evaluation mode (r_μ, r_v)."""
        _, caches = self.M.forward(theta, X, False)
        return caches[-1]["in"]

    def train_pass(self, theta, party, batch):
        """(Z, caches) of the training pass at theta on the batch."""
        return self.M.forward(theta, [party.X[j] for j in batch], True)

    def move(self, theta, caches, hp):
        """theta with its buffers moved by the pass (bn.running)."""
        theta = list(theta)
        if hp["bn_update"]:
            self.M.update_running(theta, caches, hp["bn_unbiased"])
        return theta

    def signal(self, Z, party, batch):
        """(1/|b|) ∂CE/∂z per sample: (softmax(z) − e_y)/|b|."""
        nb = len(batch)
        return [[e / nb for e in self.M._signal(z, party.y[j], pl.NO_BUGS)[1]]
                for z, j in zip(Z, batch)]


def party_features(net, party, theta, bugs):
    """f_θ(x) of every sample of the party (index order): l. 5 and l. 8's
    features (BNNet: evaluation mode; bn-stats-train: one training pass
    over the whole set)."""
    if not isinstance(net, BNNet):
        return [features(net, theta, x)[1] for x in party.X]
    if "bn-stats-train" in bugs:
        return net.train_pass(theta, party, range(party.n))[1][-1]["in"]
    return net.eval_features(theta, party.X)


def class_means(net, party, theta, K, bugs=frozenset()):
    """({k: μ_k}, {k: mean ‖f‖²}, {k: n_k}) over the party's samples."""
    sums, sq, cnt = {}, {}, {}
    feats = party_features(net, party, theta, bugs)
    for f, y in zip(feats, party.y):
        k = int(y)
        sums[k] = [a + b for a, b in zip(sums.get(k, [D0] * len(f)), f)]
        sq[k] = sq.get(k, D0) + sum(u * u for u in f)
        cnt[k] = cnt.get(k, 0) + 1
    return ({k: [u / cnt[k] for u in s] for k, s in sums.items()},
            {k: sq[k] / cnt[k] for k in sq}, cnt)


def statistics(net, party, theta, K, d, bugs):
    """(V_i, h_i as K·d entries) at theta."""
    # req: fedpac.stats
    mu, s2, cnt = class_means(net, party, theta, K, bugs)
    n = Decimal(party.n)
    V, h = D0, []
    for k in range(K):
        if k not in cnt:
            h.extend([D0] * d)
            continue
        p = Decimal(cnt[k]) / n
        V += p * s2[k] - p * p * sum(u * u for u in mu[k])
        prior = Decimal(1) if "bias-no-prior" in bugs else p
        h.extend(prior * u for u in mu[k])
    return (V if "var-no-n" in bugs else V / n), h


def head_grad(net, party, theta, batch, head):
    L, nb = len(net.ops), len(batch)
    g = [D0] * net.P
    for j in batch:
        acts = net.forward(theta, party.X[j])
        net.backward(theta, acts, net.out_signal(acts[-1], party.y[j]), L, g,
                     1 / Decimal(nb))
    return g


def head_grad_bn(net, party, theta, batch, hp, bugs):
    """l. 6 with batch normalisation: (∇ mean CE through the training pass
    of the batch, whose head entries are used; theta with its buffers moved
    by that pass)."""
    M = net.M
    Z, caches = net.train_pass(theta, party, batch)
    G, g = net.signal(Z, party, batch), [D0] * net.P
    for L, cache in zip(reversed(M.layers), reversed(caches)):
        G = M._backward(L, cache, theta, G, g, pl.NO_BUGS)
    if "bn-head-no-move" in bugs:
        return g, list(theta)
    return g, net.move(theta, caches, hp)


def align_target(y, cbar, own, bugs, d):
    target = cbar.get(y)
    if target is None and own is not None:
        target = own.get(y)
    if target is None and "missing-zero" in bugs:
        target = [D0] * d
    return target


def body_grad_bn(net, party, theta, batch, cbar, hp, d, bugs, own=None):
    """l. 7 with batch normalisation: (∇ mean [CE + λ R] through ONE
    training pass of the batch, the signal on the features f (the last
    layer's input) being the head's back-signal plus λ ∂R/∂f / |b|;
    theta with its buffers moved by that pass)."""
    M, nb = net.M, len(batch)
    Z, caches = net.train_pass(theta, party, batch)
    G, g = net.signal(Z, party, batch), [D0] * net.P
    G = M._backward(M.layers[-1], caches[-1], theta, G, g, pl.NO_BUGS)
    feats = caches[-1]["in"]
    if "bn-align-eval" in bugs:
        feats = net.eval_features(theta, [party.X[j] for j in batch])
    two = Decimal(1) if "align-half" in bugs else Decimal(2)
    c = two / d if hp["mse"] else two
    for r, j in enumerate(batch):
        # req: fedpac.eq.align, fedpac.bn
        target = align_target(int(party.y[j]), cbar, own, bugs, d)
        if target is None:
            continue
        G[r] = [u + hp["lam"] * c * (fu - cu) / nb
                for u, fu, cu in zip(G[r], feats[r], target)]
    for L, cache in zip(reversed(M.layers[:-1]), reversed(caches[:-1])):
        G = M._backward(L, cache, theta, G, g, pl.NO_BUGS)
    return g, net.move(theta, caches, hp)


def body_grad(net, party, theta, batch, cbar, hp, d, bugs, own=None):
    """∇_θ mean [CE + λ R] on the batch (the body entries are used)."""
    L, nb = len(net.ops), len(batch)
    g, gr = [D0] * net.P, [D0] * net.P
    two = Decimal(1) if "align-half" in bugs else Decimal(2)
    c = two / d if hp["mse"] else two
    for j in batch:
        y = int(party.y[j])
        acts, f = features(net, theta, party.X[j])
        # req: fedpac.eq.align
        net.backward(theta, acts, net.out_signal(acts[-1], party.y[j]), L, g,
                     1 / Decimal(nb))
        target = cbar.get(y)
        if target is None and own is not None:
            target = own.get(y)
        if target is None and "missing-zero" in bugs:
            target = [D0] * d
        if target is None:
            continue
        sig = [c * (fu - cu) for fu, cu in zip(f, target)]
        net.backward(theta, acts, sig, L - 1, gr, 1 / Decimal(nb))
    return [a + hp["lam"] * b for a, b in zip(g, gr)]


def local_update(net, party, i, x, batches, cbar, hp, d, head, trace, t,
                 bugs, own=None, opt=None):
    """ll. 6-7: the τ_φ classifier steps, then the body's; returns
    (x, the head before the body steps)."""
    hs = set(head)
    if "epochs-plus-one" in bugs:
        batches = list(batches) + [batches[0]]
    if "epochs-minus-one" in bugs:
        batches = list(batches)[:-1]
    kinds = [q < hp["tau_phi"] for q in range(len(batches))]
    if "body-first" in bugs:
        kinds = kinds[hp["tau_phi"]:] + kinds[:hp["tau_phi"]]
    for s, (batch, is_head) in enumerate(zip(batches, kinds), start=1):
        if is_head and isinstance(net, BNNet):
            # req: fedpac.alg1.l6, fedpac.bn
            g, x = head_grad_bn(net, party, x, batch, hp, bugs)
            x = [u - hp["eta_phi"] * gp if p in hs else u
                 for p, (u, gp) in enumerate(zip(x, g))]
        elif isinstance(net, BNNet):
            # req: fedpac.alg1.l7, fedpac.bn
            g, x = body_grad_bn(net, party, x, batch, cbar, hp, d, bugs, own)
            x = [u - hp["eta"] * gp if p not in hs else u
                 for p, (u, gp) in enumerate(zip(x, g))]
        elif is_head:
            # req: fedpac.alg1.l6
            g = head_grad(net, party, x, batch, head)
            eta = hp["eta"] if "opt-one-lr" in bugs else hp["eta_phi"]
            if opt is not None and "opt-head-plain" not in bugs:
                x = opt_step(opt, i, 0, g, x, eta,
                             [1 if p in hs else 0 for p in range(len(x))])
            else:
                x = [u - eta * gp if p in hs else u
                     for p, (u, gp) in enumerate(zip(x, g))]
        else:
            # req: fedpac.alg1.l7
            g = body_grad(net, party, x, batch, cbar, hp, d, bugs, own)
            if opt is not None and "opt-body-plain" not in bugs:
                x = opt_step(opt, i, 1, g, x, hp["eta"],
                             [0 if p in hs else 1 for p in range(len(x))])
            else:
                x = [u - hp["eta"] * gp if p not in hs else u
                     for p, (u, gp) in enumerate(zip(x, g))]
        trace.emit("step", "train", t, i, s, "v", x)
    return x


def solve(B, z):
    """B z = z by Gaussian elimination with partial pivoting (the lowest
    row on a tie); None when a pivot is ≤ TOL times B's largest entry."""
    n = len(z)
    B, z = [list(r) for r in B], list(z)
    big = max(abs(u) for r in B for u in r)
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(B[r][c]) > abs(B[piv][c]):
                piv = r
        if not abs(B[piv][c]) > TOL * big:
            return None
        B[c], B[piv] = B[piv], B[c]
        z[c], z[piv] = z[piv], z[c]
        for r in range(c + 1, n):
            f = B[r][c] / B[c][c]
            for u in range(c, n):
                B[r][u] -= f * B[c][u]
            z[r] -= f * z[c]
    for c in range(n - 1, -1, -1):
        z[c] = (z[c] - sum(B[c][u] * z[u] for u in range(c + 1, n))) / B[c][c]
    return z


def qp(Q):
    """argmin αᵀQα over the simplex: the first KKT point by support size,
    then by Σ_{j∈S} 2^j."""
    # req: fedpac.qp.exact
    m = len(Q)
    qmax = max(abs(u) for r in Q for u in r)
    for size in range(1, m + 1):
        for S in range(1, 1 << m):
            if bin(S).count("1") != size:
                continue
            idx = [j for j in range(m) if S >> j & 1]
            B = [[Q[a][c] for c in idx] + [Decimal(1)] for a in idx]
            B.append([Decimal(1)] * len(idx) + [D0])
            z = solve(B, [D0] * len(idx) + [Decimal(1)])
            if z is None or any(u < -TOL for u in z[:-1]):
                continue
            alpha = [D0] * m
            for a, j in enumerate(idx):
                alpha[j] = z[a] if z[a] > TOL else D0
            mu = z[-1]
            if all(sum(Q[j][c] * alpha[c] for c in range(m)) + mu
                   >= -TOL * qmax for j in range(m) if j not in idx):
                return alpha
    raise AssertionError("no KKT point")


def q_matrix(stats, ids, a, bugs):
    # req: fedpac.qp.matrix
    hi = stats[ids[a]][1]
    Q = []
    for j in ids:
        row = []
        for c in ids:
            hj, hc = stats[j][1], stats[c][1]
            q = stats[j][0] if j == c and "var-zero" not in bugs else D0
            q += sum((u - v) * (u - w) for u, v, w in zip(hi, hj, hc))
            row.append(q)
        Q.append(row)
    return Q


def small(al, hp, bugs):
    """fedpac.alpha_small: α ≤ ε set to 0 (eps-inclusive: < ε), then
    divided by the sum (renormalised)."""
    if hp["small"] == "exact":
        return al
    # req: fedpac.alpha_small
    if "eps-inclusive" in bugs:
        al = [u if u >= hp["eps"] else D0 for u in al]
    else:
        al = [u if u > hp["eps"] else D0 for u in al]
    if hp["small"] == "renormalised":
        tot = sum(al)
        al = [u / tot for u in al]
    return al


def alphas(stats, ids, hp, bugs):
    m = len(ids)
    out = []
    for a in range(m):
        if "alpha-uniform" in bugs:
            out.append([Decimal(1) / m] * m)
        elif "alpha-self" in bugs:
            out.append([Decimal(int(j == a)) for j in range(m)])
        else:
            out.append(small(qp(q_matrix(stats, ids, a, bugs)), hp, bugs))
    return out


def centroid_table(contrib, parties, hp):
    """l. 12 over contrib = [(i, {k: ĉ_{i,k}})]: ({k: c_k}, {k: clients})."""
    sums, wts, cnt = {}, {}, {}
    # req: fedpac.alg1.l12
    for i, C in contrib:
        for k, c in sorted(C.items()):
            a = Decimal(1) if hp["uniform"] else Decimal(
                sum(1 for y in parties[i].y if int(y) == k))
            sums[k] = [s + a * u for s, u in zip(sums.get(k, [D0] * len(c)),
                                                 c)]
            wts[k] = wts.get(k, D0) + a
            cnt[k] = cnt.get(k, 0) + 1
    return {k: [u / wts[k] for u in s] for k, s in sums.items()}, cnt


def flat(table, K, d):
    out = []
    for k in range(K):
        out.extend(table.get(k, [D0] * d))
    return out


def decayed(hp, t, trained, bugs):
    """hp with η, η_φ of a client update in round t scaled by the lr.*
    factor c (trained: the client's train() calls before)."""
    c = px.round_factor(hp["decay"], t, bugs, trained=trained)
    c = Decimal(c.numerator) / Decimal(c.denominator)
    out = dict(hp)
    out["eta"] = hp["eta"] * c
    if "lr-phi-const" not in bugs:
        out["eta_phi"] = hp["eta_phi"] * c
    return out


def replay(spec, bugs=frozenset()):
    """(trace, w, v, None): the run of a FedPAC spec on its given schedule;
    v_i = (θ, φ_i) every client's final model."""
    with localcontext() as ctx:
        ctx.prec = PREC
        m = spec["model"]
        bn = has_bn(m)
        net = BNNet(m) if bn else Net(m)
        K = m.get("k", 2) if m["kind"] == "mlp" else m["layers"][-1]["out"]
        d = net.ops[-1][3]
        head = head_entries(net)
        hs = set(head)
        parties = [Party(c) for c in spec["problem"]["clients"]]
        N = len(parties)
        w0 = [dec(u) for u in spec["init"]["w"]]
        hp = settings(spec["algorithm"], bugs)
        opt = optimizers(spec, net, bugs)
        # bn.aggregate = parameters_only: the entries each v_i keeps
        own_set = net.buffers if bn and hp["bn_keep"] else set()
        # req: fedpac.alg1.l1
        w, v, trace, cbar = list(w0), [list(w0) for _ in parties], Trace(), {}
        last, trained = {}, [0] * N
        # req: fedpac.alg1.l2
        for t, r in enumerate(spec["schedule"]["rounds"]):
            ids = list(r["clients"])
            # req: fedpac.alg1.l3
            trace.emit("round_begin", "train", t, None, None, "w", w)
            contrib, stats, before, n_S = [], {}, {}, Decimal(0)
            acc = [D0] * net.P
            n_S = sum(Decimal(parties[i].n) for i in ids)
            plan = list(zip(ids, r["batches"]))
            if "drawn-batches" in bugs:     # batches[j] read as drawn[j]'s
                mine = dict(zip(r.get("drawn", ids), r["batches"]))
                plan = [(i, mine[i]) for i in ids]
            for i, batches in plan:
                # req: fedpac.alg1.l4, fedpac.alg1.l5
                x = [w0[p] if (p in hs and "phi-reset" in bugs)
                     else (v[i][p] if p in hs or p in own_set else w[p])
                     for p in range(net.P)]
                trace.emit("client_begin", "train", t, i, 0, "v", x)
                if opt is not None:
                    opt.begin(i)        # the client update's optimizers
                start = list(x)
                stats[i] = statistics(net, parties[i], x, K, d, bugs)
                own = None
                use_own = hp["own"] and (t > 0 or "own-round0" in bugs)
                if use_own:
                    model = x
                    if "own-trained" in bugs:   # the last visit's θ_i
                        model = last.get(i, x)
                    own = class_means(net, parties[i], model, K, bugs)[0]
                trace.emit("note", "train", t, i, None, "V", [stats[i][0]])
                trace.emit("note", "train", t, i, None, "h", stats[i][1])
                hp_i = decayed(hp, t, trained[i], bugs)   # lr.*
                trained[i] += 1
                x = local_update(net, parties[i], i, x, batches, cbar, hp_i,
                                 d, head, trace, t, bugs, own, opt)
                last[i] = list(x)
                if "stats-trained" in bugs:
                    stats[i] = statistics(net, parties[i], x, K, d, bugs)
                before[i] = start
                v[i] = x
                trace.emit("client_end", "train", t, i, None, "v", x)
                # req: fedpac.alg1.l8, fedpac.alg1.l9
                model = start if "protos-start" in bugs else x
                mu, _, cnt = class_means(net, parties[i], model, K, bugs)
                trace.emit("note", "train", t, i, None, "C", flat(mu, K, d))
                trace.emit("note", "train", t, i, None, "n_C",
                           [Decimal(cnt.get(k, 0)) for k in range(K)])
                contrib.append((i, mu))
                # req: fedpac.alg1.l11
                a_i = (Decimal(1) / len(ids) if "theta-uniform" in bugs
                       else Decimal(parties[i].n) / n_S)
                # w's r_μ, r_v under parameters_only: the first
                # participant's (serverbase.py:138-150), not averaged
                acc = [(x[p] if i == ids[0] else acc[p]) if p in own_set
                       else acc[p] + a_i * x[p] for p in range(net.P)]
            new, cnt = centroid_table(contrib, parties, hp)
            if "keep-old-global" in bugs:
                new = {**cbar, **new}
                cnt = {**{k: 1 for k in cbar}, **cnt}
            cbar = new
            trace.emit("note", "train", t, None, None, "C_bar",
                       flat(cbar, K, d))
            trace.emit("note", "train", t, None, None, "N_bar",
                       [Decimal(cnt.get(k, 0)) for k in range(K)])
            # req: fedpac.alg1.l13, fedpac.alg1.l14
            src = before if "heads-before" in bugs else v
            heads = {}
            for a, (i, al) in enumerate(zip(ids, alphas(stats, ids, hp,
                                                        bugs))):
                full = [D0] * N
                for j, u in zip(ids, al):
                    full[j] = u
                trace.emit("note", "train", t, i, None, "alpha_i", full)
                heads[i] = [sum(u * src[j][p] for j, u in zip(ids, al))
                            for p in head]
                trace.emit("note", "train", t, i, None, "phi", heads[i])
            for i, phi in heads.items():
                for p, u in zip(head, phi):
                    v[i][p] = u
            w = [w[p] if p in hs else acc[p] for p in range(net.P)]
            trace.emit("server", "train", t, None, None, "w", w)
            for i in range(N):
                for p in range(net.P):
                    if p not in hs and p not in own_set:
                        v[i][p] = w[p]
        return trace, w, v, None


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
    if has_bn(m) and any(k.startswith("opt.") for k in
                         spec["algorithm"].get("hyperparameters", {})):
        return False    # the optimizers' view lists dense blocks only
    return (ok_model and m.get("loss", "cross_entropy") == "cross_entropy"
            and "clients" in spec.get("problem", {})
            and spec.get("init", {}).get("kind") == "given"
            and spec.get("schedule", {}).get("kind") == "given")
