# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedfomo.py: FedFomo (Zhang, Sapra, Fidler, Yeung,
Alvarez, ICLR 2021, arXiv 2012.08565v3, Algorithm 1) in exact rational
arithmetic, written from shared/spec notes-fedbn-fedfomo.md §2.3-§2.6,
independently of the C reference.

State: θ_i (the last upload, starts at w⁰), φ_i (the model client i
started its last local training from, starts at w⁰), the affinity matrix
P (N×N, starts at 0).  Round t, participants i ascending, every download
read from the uploads as they stood at the round's start:
  C = peers_i ∪ {i} (fedfomo.self = excluded: peers_i only)
  r_n = (L_i(φ_i) − L_i(θ_n)) / ‖θ_n − φ_i‖, and r_n = 0 when θ_n = φ_i
  w_n = max(r_n, 0) / Σ_m max(r_m, 0), all 0 when that sum is 0
  φ_i ← φ_i + Σ_n w_n (θ_n − φ_i);  P_{i,n} += w_n
  θ_i ← local SGD from φ_i (η, the scheduled batches)
L_i is the mean loss on the client's validation split (X_val, y_val) when
every client has one, else on its training set (quadratic: ½ Σ a (θ − c)²).
fedfomo.val_mode: its passes in training mode (train, the default: batch
normalisation on the validation batch's own statistics, a dropout mask per
pass) or in evaluation mode (eval: BN on the model's running statistics
r_μ, r_v, dropout the identity, no mask taken), model.train() / model.eval()
of the code L_i is read from.
‖·‖₂ of an irrational root is a rational within 10⁻⁷⁰ of it (sqrt70), so
such runs are exact to far below any tolerance; fedfomo.distance = l1 and
Pythagorean differences stay exact.

replay(spec, bugs) -> (trace, None, v, None).  Bugs (mutants):

  fomo-no-clip          negative r_n kept (no max(·, 0))
  fomo-no-normalise     w_n = max(r_n, 0) without the division by the sum
  fomo-squared-dist     r_n divided by ‖θ_n − φ_i‖² (the code's "l2")
  fomo-anchor-current   the anchor is θ_i (the current model), not φ_i
  fomo-self-flip        the own upload's candidacy flipped (fedfomo.self)
  fomo-train-loss       L_i on the training set despite a validation split
  fomo-live-uploads     a later client downloads the models trained
                        earlier in the same round
  fomo-train-first      local training before the federated update
  fomo-affinity-ratio   P_{i,n} += r_n (the ratio) instead of w_n
  fomo-l1-flip          the distance's norm flipped (l2 <-> l1)
  fomo-greedy-ascending the greedy list G in ascending P (the worst first)
  fomo-ties-highest     ties in G go to the higher id
  fomo-explore-flip     u_s < ε_t exploits and u_s ≥ ε_t explores
  fomo-eps-const        ε_t = ε₀ (no decay δ t)
  fomo-val-batch-flip   L_i as the mean of batch means where the sample
                        mean is configured, or the reverse
  fomo-rank-no-own      fedfomo.self = ranked read as excluded: the own
                        entry P_{i,i} is left out of the ranking
  fomo-ranked-included  fedfomo.self = ranked read as included: the own
                        upload added to the M ranked downloads
  lr-per-round          (pflref_exact.round_factor) lr.count = trainings
                        read as rounds
  fomo-val-mode-flip    L_i's passes in the other mode (fedfomo.val_mode):
                        evaluation mode (running statistics, no dropout)
                        where training mode is configured, or the reverse
  fomo-buffers-in-distance  (bn.aggregate = parameters_only) l. 3's
                        distance over every entry, the running statistics
                        r_mu, r_v included, not over parameters() only
  fomo-buffers-mixed    (bn.aggregate = parameters_only) l. 5 mixes the
                        running statistics with the parameters (a
                        state_dict mixture) instead of keeping client i's
                        own, those of θ_i^{t−1}
  fomo-equal-strict     l. 3's equality up to rounding read strictly, on
                        the C's doubles: where the exact run has θ_n = a
                        (distance 0) and a is a weight-1 mean of l. 5
                        (φ = a' + 1 · (θ_m − a')), the doubles are
                        float(θ_n) and φ's fp64 shadow fl(float(a') +
                        fl(float(θ_m) − float(a'))) (buffers kept under
                        parameters_only), and θ_n counts as a only when
                        every |x − a| < τ max(|x|, |a|) (τ =
                        fedfomo.equal_rtol, not ≤): a difference on the
                        bound gives r_n = (L_i(a) − L_i(θ_n)) / the doubles'
                        distance; no shadow (other weights): no change
  fomo-equal-fp64       not a bug: the same test with the rule's ≤, which
                        must reproduce the exact run (a generator's check
                        that the doubles sit on the bound, not past it)
  fomo-no-skip          a chosen id is not skipped: the list's next entry
                        is taken whatever it is (a repeat counts once);
                        not flagged on a vector (the skipped-to peers of
                        these data get weight 0), tests/test_fedfomo.c
                        checks the skip on notes Example C

bn.aggregate = parameters_only (a layer list with batch normalisation),
restated from TsingZ0/PFLlib d832e76f6a23 system/flcore/clients/
clientfomo.py: weight_cal (:102-111) measures ‖θ_n − φ_i‖ over
parameters() only; aggregate_parameters (:157-165) zeroes and sums
self.model.parameters() only, so the buffers of the model local training
starts from stay the client's own, those θ_i^{t−1} carries; each model
scored keeps the buffers it was stored with (the download its uploader's:
serverfomo.py:110 deep-copies the whole module).  Under average (the
default) both range over every entry.

Run-time choice of the downloads (notes §2.5, §2.7 Example C): a round
with "peer_draws" [{order: π, u: [u_1..u_M]}] and no "peers" chooses
client i's peers from row i of P as it stands: G = π's ids by descending
P_{i,n}, ties to the lower id; for slot s = 1..min(M, |π|): u_s < ε_t takes
the next id of π, else the next of G, skipping ids already chosen; ε_t =
ε₀ − δ t.  fedfomo.selection = topM takes G's first M.  M_counts = total:
M − 1 slots when the own upload is a candidate.

Switches of notes §2.8 also computed here: distance l2_squared and
l2_per_tensor_sum (Σ of the blocks' Euclidean norms), val_loss batch_mean,
distance_eps, anchor post_train (a = θ_i^{t−1}), no_positive keep_current
(all w = 0: φ = θ_i^{t−1}), P_update signed_abs_sum (r_n / max(|Σ r|,
10⁻⁹)) and raw (r_n), P_init own_0.1 and identity; self = ranked (PFLlib
serverfomo.py send_models: topk over the whole row P[client.id], so the
own id joins the ranking and is a candidate only when chosen), the
learning-rate decay lr.* (client i's η decays with its own trainings under
lr.count = trainings, PFLlib's per-client ExponentialLR), and the preset
pfllib, restated here from PFLlib's clientfomo.py and serverfomo.py (not
read from the C).  Exact arithmetic needs no tolerance for "θ_n = a" made
by rounding: the C's fedfomo.equal_rtol undoes its own rounding, and the
replay's exact θ_n = a is distance 0.  Two models that differ in exact
arithmetic by at most τ in every entry are equal by the C's rule all the
same, and the replay applies it to them (equal_within); fomo-equal-strict
and fomo-equal-fp64 also test the C's doubles against it.
"""
import copy
import math
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

MUTANTS = {
    "fedfomo-clip": ["fomo-no-clip"],
    "fedfomo-normalise": ["fomo-no-normalise"],
    "fedfomo-distance": ["fomo-squared-dist", "fomo-l1-flip"],
    "fedfomo-anchor": ["fomo-anchor-current"],
    "fedfomo-self": ["fomo-self-flip"],
    "fedfomo-val-loss": ["fomo-train-loss"],
    "fedfomo-stale-uploads": ["fomo-live-uploads"],
    "fedfomo-order": ["fomo-train-first"],
    "fedfomo-affinity": ["fomo-affinity-ratio"],
    "fedfomo-selection": ["fomo-greedy-ascending", "fomo-ties-highest",
                          "fomo-explore-flip"],
    "fedfomo-epsilon": ["fomo-eps-const"],
    "fedfomo-val-batches": ["fomo-val-batch-flip"],
    "fedfomo-ranked": ["fomo-rank-no-own", "fomo-ranked-included"],
    "fedfomo-val-mode": ["fomo-val-mode-flip"],
    "bn-parameters-distance": ["fomo-buffers-in-distance"],
    "bn-own-buffers": ["fomo-buffers-mixed"],
    "lr-count": ["lr-per-round"],
    "fedfomo-equal-bound": ["fomo-equal-strict"],
}

# The preset pfllib as read from TsingZ0/PFLlib d832e76f6a23
# (system/flcore/clients/clientfomo.py, servers/serverfomo.py): the
# switches and hyperparameters it stands for; the spec's own override it.
PRESETS = {
    "pfllib": ({"fedfomo.distance": "l2", "fedfomo.selection": "topM",
                "fedfomo.P_update": "raw", "fedfomo.P_init": "identity",
                "fedfomo.anchor": "pre_train",
                "fedfomo.no_positive": "keep_current",
                "fedfomo.self": "ranked", "fedfomo.val_loss": "batch_mean",
                "lr.count": "trainings", "bn.aggregate": "parameters_only"},
               {"fedfomo.distance_eps": 1e-5}),
}


def with_preset(spec):
    """The spec with its algorithm's preset spelt out as switches and
    hyperparameters (the explicit ones win)."""
    alg = spec["algorithm"]
    name = alg.get("preset", "paper")
    if name == "paper":
        return spec
    sw, hp = PRESETS[name]
    out = copy.deepcopy(spec)
    a = out["algorithm"]
    a["switches"] = dict(sw, **a.get("switches", {}))
    a["hyperparameters"] = dict(hp, **a["hyperparameters"])
    return out


def self_mode(sw, bugs):
    """fedfomo.self as the run reads it (the mutants' flips)."""
    mode = sw.get("fedfomo.self", "included")
    if "fomo-self-flip" in bugs:
        mode = {"included": "excluded", "excluded": "included"}.get(mode,
                                                                    mode)
    if mode == "ranked" and "fomo-rank-no-own" in bugs:
        mode = "excluded"
    if mode == "ranked" and "fomo-ranked-included" in bugs:
        mode = "included"
    return mode

SCALE = 10 ** 70


def sqrt70(q):
    """√q exactly when it is rational, else a rational within 10⁻⁷⁰·√q."""
    try:
        return px.exact_sqrt(q)
    except ValueError:
        return Fraction(math.isqrt(q.numerator * q.denominator * SCALE * SCALE),
                        q.denominator * SCALE)


def _data_loss(kind_loss, d, bias, X, y, theta):
    b = theta[d] if bias else Fraction(0)
    s = Fraction(1) if kind_loss == "squared" else Fraction(1, 2)
    total = Fraction(0)
    for x, yy in zip(X, y):
        r = sum(exact(x[p]) * theta[p] for p in range(d)) + b - exact(yy)
        total += s * r * r
    return total / len(X)


def val_loss(spec, i, theta, bugs):
    """L_i(θ): the validation split's mean loss, or the training set's;
    fedfomo.val_loss = batch_mean: the mean of the batch means over
    batches of fedfomo.val_batch samples in index order (the last ragged)."""
    model, raw = spec["model"], spec["problem"]["clients"]
    alg = spec["algorithm"]
    B = alg["hyperparameters"].get("fedfomo.val_batch", 0)
    batch_mean = (alg.get("switches", {}).get("fedfomo.val_loss", "sample_mean")
                  == "batch_mean") != ("fomo-val-batch-flip" in bugs)
    c = raw[i]
    if model["kind"] == "quadratic":
        return sum(exact(a) * (t - exact(cc)) ** 2
                   for a, t, cc in zip(c["a"], theta, c["c"])) / 2
    assert model["kind"] in ("linear", "layers"), model["kind"]
    has_val = all("X_val" in cl for cl in raw)
    if has_val and "fomo-train-loss" not in bugs:
        X, y = c["X_val"], c["y_val"]
    else:
        X, y = c["X"], c["y"]
    eval_mode = (alg.get("switches", {}).get("fedfomo.val_mode", "train")
                 == "eval") != ("fomo-val-mode-flip" in bugs)
    if model["kind"] == "layers" and eval_mode:
        import pflref_exact_layers as pl
        M = pl.Model(model)

        def data_loss(Xb, yb):
            return eval_loss(M, Xb, yb, theta, model_bugs(bugs))
    elif model["kind"] == "layers":          # pflref_exact_layers.py
        import pflref_exact_layers as pl
        M = pl.Model(model)

        def data_loss(Xb, yb):
            return pl.loss_exact(M, Xb, yb, theta, model_bugs(bugs))[0]
    else:
        args = (model["loss"], model["d"], bool(model.get("bias", False)))

        def data_loss(Xb, yb):
            return _data_loss(*args, Xb, yb, theta)
    if batch_mean and 0 < B < len(X):
        parts = [data_loss(X[lo:lo + B], y[lo:lo + B])
                 for lo in range(0, len(X), B)]
        return sum(parts) / len(parts)
    return data_loss(X, y)


def eval_loss(M, X, Y, theta, bugs):
    """The mean loss (squared or half_squared) of the rows X, Y through M in
    evaluation mode: forward(train = False), so a batchnorm layer
    normalises with θ's running statistics and a dropout layer is the
    identity (no mask taken); exact from the model's domain."""
    import pflref_exact_layers as pl
    D = M.D
    th = [D.num(x) for x in theta]
    Xd = [[D.num(float(x)) for x in row] for row in X]
    Z, _ = M.forward(th, Xd, False, bugs)
    sq = Fraction(0)
    for z, y in zip(Z, Y):
        r = pl.to_exact(z[0]) - Fraction(float(y))
        sq += r * r
    sq /= len(X)
    return sq / 2 if M.loss == "half_squared" else sq


def model_bugs(bugs):
    """A layer list's own bugs (pflref_exact_layers.MUTANTS), which act in
    its loss and gradient."""
    import pflref_exact_layers as pl
    return frozenset(bugs) & pl.ALL_BUGS


def distance(x, a, kind, blocks=None):
    if kind == "l2_per_tensor_sum":       # Σ over the blocks of ‖·‖₂
        return sum(sqrt70(sum((x[p] - a[p]) ** 2 for p in range(lo, hi)))
                   for lo, hi in blocks)
    if kind == "l1":
        return sum(abs(p - q) for p, q in zip(x, a))
    sq = sum((p - q) ** 2 for p, q in zip(x, a))
    return sq if kind == "l2_squared" else sqrt70(sq)


def blocks(model):
    """The parameter tensors as index ranges: w (and b) of the linear model,
    the one vector of the quadratic, a layer list's blocks (its state_dict
    entries, in layout order)."""
    if model["kind"] == "layers":
        import pflref_exact_layers as pl
        return [(o, o + b["size"]) for b, o in
                pl.Model(model, "float").block_offsets()]
    d = model["d"]
    if model["kind"] == "linear" and model.get("bias", False):
        return [(0, d), (d, d + 1)]
    return [(0, d)]


def params_only(spec, buffers):
    """(the entries l. 3 measures, the tensors of l2_per_tensor_sum) under
    bn.aggregate = parameters_only: parameters() only, the buffers (r_mu,
    r_v entries) left out; None and the model's blocks otherwise."""
    allb = blocks(spec["model"])
    if not buffers:
        return None, allb
    keep = [p for p in range(max(hi for _, hi in allb)) if p not in buffers]
    return keep, [(lo, hi) for lo, hi in allb if lo not in buffers]


def weights(spec, i, peers, anchor, uploads, sw, bugs, buffers=frozenset(),
            anchor64=None):
    """(w, r) over all N clients (0 off the candidates); buffers: the
    entries left out of the distance (bn.aggregate = parameters_only);
    anchor64: the anchor's fp64 shadow (fomo-equal-strict, fomo-equal-fp64)
    or None."""
    N = len(uploads)
    if "fomo-buffers-in-distance" in bugs:
        buffers = frozenset()
    idx, tensors = params_only(spec, buffers)
    kind = sw.get("fedfomo.distance", "l2")
    if "fomo-l1-flip" in bugs:
        kind = {"l1": "l2", "l2": "l1"}.get(kind, kind)
    eps = exact(spec["algorithm"]["hyperparameters"].get(
        "fedfomo.distance_eps", 0))
    self_in = self_mode(sw, bugs) == "included"
    # req: fedfomo.alg1.l2
    cands = list(peers) + ([i] if self_in and i not in peers else [])
    L_a = val_loss(spec, i, anchor, bugs)
    r = [Fraction(0)] * N
    for n in cands:
        if idx is None:
            d = distance(uploads[n], anchor, kind, tensors)
        else:                             # parameters() only
            pick = {p: q for q, p in enumerate(idx)}
            d = distance([uploads[n][p] for p in idx],
                         [anchor[p] for p in idx], kind,
                         [(pick[lo], pick[hi - 1] + 1) for lo, hi in tensors])
        if d == 0 and anchor64 is not None and \
                {"fomo-equal-strict", "fomo-equal-fp64"} & set(bugs):
            d = equal_on_doubles(spec, uploads[n], anchor64, idx, kind, tensors,
                                 "fomo-equal-strict" in bugs)
        elif d != 0 and equal_within(spec, uploads[n], anchor, idx,
                                     "fomo-equal-strict" in bugs):
            d = 0                         # within τ: the rule's "equal"
        if d == 0:
            continue                      # θ_n = φ_i: the documented rule
        if "fomo-squared-dist" in bugs:
            d = d * d
        # req: fedfomo.alg1.l3
        r[n] = (L_a - val_loss(spec, i, uploads[n], bugs)) / (d + eps)
    # req: fedfomo.alg1.l4
    w = list(r) if "fomo-no-clip" in bugs else [max(x, Fraction(0)) for x in r]
    total = sum(w)
    if total != 0 and "fomo-no-normalise" not in bugs:
        w = [x / total for x in w]
    return w, r


def equal_within(spec, x, a, idx, strict):
    """The zero-distance rule on two models that differ in exact
    arithmetic: True when every |x_p − a_p| ≤ τ max(|x_p|, |a_p|) over the
    entries idx (None: all), τ = fedfomo.equal_rtol (the double, exactly),
    < when strict (fomo-equal-strict).  A difference within τ is no
    rounding, but the C's rule counts it as equal all the same (τ ≤ 10⁻⁶,
    docs/algorithms/fedfomo.md, "Equality up to rounding"), so the replay
    applies the rule as the C does; an entry 0 in both models sits on the
    bound (0 against 0), where only the rule's ≤ calls it equal."""
    tau = Fraction(spec["algorithm"]["hyperparameters"].get(
        "fedfomo.equal_rtol", 2.0 ** -50))
    keep = range(len(x)) if idx is None else idx
    pairs = [(Fraction(x[p]), Fraction(a[p])) for p in keep]
    return all((abs(u - v) < tau * max(abs(u), abs(v))) if strict
               else (abs(u - v) <= tau * max(abs(u), abs(v)))
               for u, v in pairs)


def equal_on_doubles(spec, x, a64, idx, kind, tensors, strict):
    """The zero-distance rule's test on the C's doubles: float(x) against
    the anchor's fp64 shadow a64 over the entries idx (None: all), τ =
    fedfomo.equal_rtol; 0 when they count as equal (every |x − a| ≤ τ
    max(|x|, |a|), or < when strict), else the doubles' distance, exact."""
    tau = float(spec["algorithm"]["hyperparameters"].get("fedfomo.equal_rtol",
                                                         2.0 ** -50))
    keep = range(len(x)) if idx is None else idx
    xs = [float(x[p]) for p in keep]
    as_ = [a64[p] for p in keep]
    equal = all((abs(u - v) < tau * max(abs(u), abs(v))) if strict
                else (abs(u - v) <= tau * max(abs(u), abs(v)))
                for u, v in zip(xs, as_))
    if equal:
        return 0
    if idx is not None:
        pick = {p: q for q, p in enumerate(idx)}
        tensors = [(pick[lo], pick[hi - 1] + 1) for lo, hi in tensors]
    return distance([Fraction(u) for u in xs], [Fraction(v) for v in as_], kind,
                    tensors)


def select(row, order, u, slots, eps, top_m, bugs=frozenset()):
    """The downloads chosen from P's row (notes §2.5)."""
    # req: fedfomo.alg1.l1
    sign = 1 if "fomo-greedy-ascending" in bugs else -1
    tie = -1 if "fomo-ties-highest" in bugs else 1
    G = sorted(order, key=lambda n: (sign * row[n], tie * n))
    lists = {True: list(order), False: G}
    nxt = {True: 0, False: 0}
    out = []
    for c in range(min(slots, len(order))):
        explore = (not top_m) and ((u[c] < eps) != ("fomo-explore-flip" in bugs))
        lst = lists[explore]
        while lst[nxt[explore]] in out and "fomo-no-skip" not in bugs:
            nxt[explore] += 1
        pick = lst[nxt[explore]]
        nxt[explore] += 1
        if pick not in out:
            out.append(pick)
    return out


def replay(spec, bugs=frozenset()):
    spec = with_preset(spec)
    alg = spec["algorithm"]
    hp, sw = alg["hyperparameters"], alg.get("switches", {})
    eta = exact(hp["eta"])
    # bn.running, bn.running_var: whether the local steps move the running
    # statistics (pflref_exact.Problem.move_running)
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    N = len(pr.clients)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P)
    theta = [list(w0) for _ in range(N)]
    phi = [list(w0) for _ in range(N)]
    import pflref_exact_optim as po      # opt.*: the local SGD's optimizer
    # opt.decay_scope = shared | personal reads the spec's split (the
    # optimizer's λ_B, docs/optimizers.md); the algorithm reads no split
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 1, personal, bugs)
    P = [[Fraction(0)] * N for _ in range(N)]
    p_init = sw.get("fedfomo.P_init", "zeros")
    for i in range(N):
        if p_init != "zeros":
            P[i][i] = Fraction(1, 10) if p_init == "own_0.1" else Fraction(1)
    eps0 = exact(hp.get("fedfomo.epsilon0", 0.3))
    delta = exact(hp.get("fedfomo.delta", 0.05))
    self_in = sw.get("fedfomo.self", "included") == "included"
    ranked = self_mode(sw, bugs) == "ranked"
    trained = [0] * N                    # lr.count = trainings
    # bn.aggregate = parameters_only: the buffers' entries (r_mu, r_v)
    keep = (frozenset(pr.buffers)
            if sw.get("bn.aggregate", "average") == "parameters_only"
            else frozenset())
    m_total = sw.get("fedfomo.M_counts", "others") == "total"
    top_m = sw.get("fedfomo.selection", "eps_greedy") == "topM"
    # fomo-equal-strict, fomo-equal-fp64: φ_i's fp64 shadow after a
    # weight-1 mean of l. 5, else None
    shadow = bool({"fomo-equal-strict", "fomo-equal-fp64"} & set(bugs))
    phi64 = [None] * N
    trace = Trace()
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        # req: fedfomo.alg1.l1
        snap = [list(x) for x in theta]
        peers = rnd.get("peers", [[] for _ in rnd["clients"]])
        if "peers" not in rnd and "peer_draws" in rnd:
            eps_t = eps0 if "fomo-eps-const" in bugs else eps0 - delta * t
            peers = []
            for j, i in enumerate(rnd["clients"]):
                d = rnd["peer_draws"][j]
                slots = len(d["u"])
                if m_total and self_in:
                    slots = max(slots - 1, 0)
                # self = ranked: i joins π (last), so G ranks P_{i,i} too
                order = list(d["order"]) + ([i] if ranked else [])
                peers.append(select(P[i], order, [exact(x) for x in d["u"]],
                                    slots, eps_t, top_m, bugs))
        for j, i in enumerate(rnd["clients"]):
            steps = rnd["batches"][j]
            uploads = theta if "fomo-live-uploads" in bugs else snap
            if "fomo-train-first" in bugs:
                uploads = [list(x) for x in uploads]
                uploads[i] = px.local_sgd(pr, i, phi[i], steps, eta, Trace(),
                                          "train", t, "theta",
                                          bugs=model_bugs(bugs))
            post = sw.get("fedfomo.anchor", "pre_train") == "post_train"
            anchor = (theta[i] if ("fomo-anchor-current" in bugs) != post
                      else phi[i])
            a64 = phi64[i] if shadow and anchor is phi[i] else None
            w, r = weights(spec, i, peers[j], anchor, uploads, sw, bugs, keep,
                           a64)
            trace.emit("note", "train", t, i, None, "weights", w)
            if sum(w) == 0 and sw.get("fedfomo.no_positive",
                                      "anchor") == "keep_current":
                new = list(snap[i])       # PFLlib: keep the current model
            else:
                # req: fedfomo.alg1.l5
                new = [a + sum(w[n] * (uploads[n][p] - a) for n in range(N))
                       for p, a in enumerate(anchor)]
                if "fomo-buffers-mixed" not in bugs:
                    # parameters() only: r_mu, r_v stay client i's own
                    # (clientfomo.py:157-165), θ_i^{t−1}'s
                    for p in keep:
                        new[p] = snap[i][p]
            phi64[i] = None
            if shadow and sorted(w)[-1] == 1 and \
                    sum(w) == 1:
                # one weight 1: fl(a + fl(1 · fl(θ_m − a))) on the doubles
                m = w.index(1)
                phi64[i] = [float(snap[i][p]) if p in keep and
                            "fomo-buffers-mixed" not in bugs
                            else float(a) + 1.0 * (float(uploads[m][p]) - float(a))
                            for p, a in enumerate(anchor)]
            phi[i] = new
            trace.emit("note", "train", t, i, None, "phi", new)
            pu = sw.get("fedfomo.P_update", "weights")
            if "fomo-affinity-ratio" in bugs:
                pu = "raw" if pu == "weights" else "weights"
            if pu == "weights":
                add = w
            elif pu == "raw":
                add = r
            else:
                scale = max(abs(sum(r)), Fraction(1, 10 ** 9))
                add = [x / scale for x in r]
            # req: fedfomo.alg1.l8
            P[i] = [a + b for a, b in zip(P[i], add)]
            trace.emit("note", "train", t, i, None, "P", P[i])
            trace.emit("client_begin", "train", t, i, 0, "theta", new)
            # req: fedfomo.alg1.l6, fedfomo.alg1.l7
            if opt is not None:
                opt.begin(i)
            # η of i's train() (lr.*: the round, or its own trainings)
            eta_i = eta * px.round_factor(alg, t, bugs, trained=trained[i])
            trained[i] += 1
            theta[i] = px.local_sgd(pr, i, new, steps, eta_i, trace, "train", t,
                                    "theta", bugs=model_bugs(bugs),
                                    opt=None if opt is None else opt.stepper(i, 0))
            trace.emit("client_end", "train", t, i, None, "theta", theta[i])
    return trace, None, theta, None


def supported(spec):
    return (spec["algorithm"]["name"] == "fedfomo"
            and (spec["model"]["kind"] in ("quadratic", "linear")
                 or (spec["model"]["kind"] == "layers"
                     and spec["model"].get("loss") in ("squared", "half_squared")))
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
