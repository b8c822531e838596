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
"""
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
}

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
    """L_i(θ): the validation split's mean loss, or the training set's."""
    model, raw = spec["model"], spec["problem"]["clients"]
    c = raw[i]
    if model["kind"] == "quadratic":
        return sum(exact(a) * (t - exact(cc)) ** 2
                   for a, t, cc in zip(c["a"], theta, c["c"])) / 2
    assert model["kind"] == "linear", model["kind"]
    has_val = all("X_val" in cl for cl in raw)
    if has_val and "fomo-train-loss" not in bugs:
        X, y = c["X_val"], c["y_val"]
    else:
        X, y = c["X"], c["y"]
    return _data_loss(model["loss"], model["d"], bool(model.get("bias", False)),
                      X, y, theta)


def distance(x, a, l1):
    if l1:
        return sum(abs(p - q) for p, q in zip(x, a))
    return sqrt70(sum((p - q) ** 2 for p, q in zip(x, a)))


def weights(spec, i, peers, anchor, uploads, sw, bugs):
    """(w, r) over all N clients (0 off the candidates)."""
    N = len(uploads)
    l1 = (sw.get("fedfomo.distance", "l2") == "l1") != ("fomo-l1-flip" in bugs)
    self_in = (sw.get("fedfomo.self", "included") == "included") != \
        ("fomo-self-flip" in bugs)
    # req: fedfomo.alg1.l2
    cands = list(peers) + ([i] if self_in else [])
    L_a = val_loss(spec, i, anchor, bugs)
    r = [Fraction(0)] * N
    for n in cands:
        d = distance(uploads[n], anchor, l1)
        if d == 0:
            continue                      # θ_n = φ_i: the documented rule
        if "fomo-squared-dist" in bugs:
            d = d * d
        # req: fedfomo.alg1.l3
        r[n] = (L_a - val_loss(spec, i, uploads[n], bugs)) / d
    # req: fedfomo.alg1.l4
    w = list(r) if "fomo-no-clip" in bugs else [max(x, Fraction(0)) for x in r]
    total = sum(w)
    if total != 0 and "fomo-no-normalise" not in bugs:
        w = [x / total for x in w]
    return w, r


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp, sw = alg["hyperparameters"], alg.get("switches", {})
    eta = exact(hp["eta"])
    pr = px.Problem(spec["model"], spec["problem"]["clients"])
    N = len(pr.clients)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P)
    theta = [list(w0) for _ in range(N)]
    phi = [list(w0) for _ in range(N)]
    P = [[Fraction(0)] * N for _ in range(N)]
    trace = Trace()
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        # req: fedfomo.alg1.l1
        snap = [list(x) for x in theta]
        peers = rnd.get("peers", [[] for _ in rnd["clients"]])
        for j, i in enumerate(rnd["clients"]):
            steps = rnd["batches"][j]
            uploads = theta if "fomo-live-uploads" in bugs else snap
            if "fomo-train-first" in bugs:
                uploads = [list(x) for x in uploads]
                uploads[i] = px.local_sgd(pr, i, phi[i], steps, eta, Trace(),
                                          "train", t, "theta")
            anchor = theta[i] if "fomo-anchor-current" in bugs else phi[i]
            w, r = weights(spec, i, peers[j], anchor, uploads, sw, bugs)
            trace.emit("note", "train", t, i, None, "weights", w)
            # req: fedfomo.alg1.l5
            new = [a + sum(w[n] * (uploads[n][p] - a) for n in range(N))
                   for p, a in enumerate(anchor)]
            phi[i] = new
            trace.emit("note", "train", t, i, None, "phi", new)
            add = r if "fomo-affinity-ratio" in bugs else w
            # req: fedfomo.alg1.l8
            P[i] = [a + b for a, b in zip(P[i], add)]
            trace.emit("note", "train", t, i, None, "P", P[i])
            trace.emit("client_begin", "train", t, i, 0, "theta", new)
            # req: fedfomo.alg1.l6, fedfomo.alg1.l7
            theta[i] = px.local_sgd(pr, i, new, steps, eta, trace, "train", t,
                                    "theta")
            trace.emit("client_end", "train", t, i, None, "theta", theta[i])
    return trace, None, theta, None


def supported(spec):
    return (spec["algorithm"]["name"] == "fedfomo"
            and spec["model"]["kind"] in ("quadratic", "linear")
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
