# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_cfl.py: Clustered Federated Learning (Sattler,
Müller, Samek, IEEE TNNLS 2021, arXiv 1910.01991; the weight-update form,
Algorithm 5, with Algorithm 1) in exact arithmetic, written from the paper
as shared/spec notes-cfl-ifca-sampling-metrics.md §1 transcribes it,
independently of the C reference.

Exactness.  The updates Δθ_i are exact rationals.  A cosine
α_ab = ⟨x_a, x_b⟩ / √(‖x_a‖² ‖x_b‖²) is not rational; it is kept as the
pair (d, q) = (⟨x_a, x_b⟩, ‖x_a‖²‖x_b‖²) and every decision on it is exact:
comparisons of cosines by squaring with signs, the γ test
γ_max < √((1 − α)/2) as α < 1 − 2γ_max², the ε tests on squared norms.
Only the recorded numbers (cosines, norms) are square roots, evaluated
with 60 significant decimal digits before rounding to a double.

Algorithm 1 is run literally: all m² flat indices sorted by (−α, row-major
position) (a stable sort of the flattened matrix), clusters merged by
union until two remain.  The complete linkage of the authors' notebook is
run literally too: the two clusters whose least similar pair is most
similar merge, ties to the smallest (smallest member, smallest member),
until two remain.

The partition C is kept as a list of clusters (lists of client ids),
ordered by smallest member; the recorded labels are positions in it.

Shared switches: the local SGD steps through golden/pflref_exact_optim.py
(opt.*; opt.decay_scope = shared | personal reads the spec's split, which
CFL itself does not read), at η c_t in round t (lr.*, pflref_exact.
round_factor: every client trains in every round, so the count is t), and
moves a batch norm's running statistics as bn.running, bn.running_var say
(they are entries of θ_i, so of Δθ_i and of the similarities).

replay(spec, bugs) -> (trace, None, v, None) runs a cfl spec as written.
Bugs (the catalogue's classes):

  cfl-raw-similarity     α_ab = ⟨Δθ_a, Δθ_b⟩, the updates not normalised
  cfl-bipartition-flip   complete linkage where optimal is configured, or
                         the reverse
  cfl-ties-reversed      Algorithm 1's equal similarities taken in reverse
                         row-major order (an unstable or descending-index
                         sort) instead of the stable sort's; in complete
                         linkage, of two merges with equal links the later
                         pair (≥ for >) instead of the first
  cfl-no-gamma-test      split on the ε tests alone
  cfl-local-indices      a split's c₁, c₂ kept as positions within the
                         cluster, not mapped back to client ids
  cfl-weights-flip       the cluster update weighted 1/|c| where
                         |D_i|/|D_c| is configured, or the reverse
  cfl-update-parent      the children of a split get the parent's Δθ_c
  cfl-eps1-is-eps2, cfl-eps1-is-gamma, cfl-eps2-is-eps1
                         the ε tests read a threshold for another:
                         ‖Δθ_c‖ < ε₂ (or < γ_max) instead of < ε₁, or
                         max ‖Δθ_i‖ > ε₁ instead of > ε₂
  cfl-min-size-is-warmup, cfl-warmup-is-min-size
                         cfl.min_cluster_size read as cfl.warmup's value,
                         or cfl.warmup as cfl.min_cluster_size's
  cfl-size-vs-warmup     the size guard |c| < r (the warmup) instead of
                         |c| < s
  cfl-round-vs-min-size  the warmup guard t < s instead of t < r
  cfl-min-size-off-with-warmup
                         the size guard switched on by r instead of s
                         (on only when the warmup is non-zero)
  cfl-gamma-quarter      the γ test γ_max < √((1 − α)/4)
  drawn-batches          the round's batch lists paired with the clients in
                         the drawn order instead of the ascending clients
"""
from decimal import Decimal, getcontext
from fractions import Fraction

import pflref_exact as px
import pflref_exact_layers as pl
from pflref_golden import Trace, exact, exact_vec

getcontext().prec = 60

MUTANTS = {
    "cfl-similarity-normalisation": ["cfl-raw-similarity"],
    "cfl-bipartition": ["cfl-bipartition-flip", "cfl-ties-reversed"],
    "cfl-gamma-test": ["cfl-no-gamma-test"],
    "cfl-nested-split-indices": ["cfl-local-indices"],
    "aggregation-weights": ["cfl-weights-flip"],
    "cfl-split-update": ["cfl-update-parent"],
    "cfl-thresholds": ["cfl-eps1-is-eps2", "cfl-eps1-is-gamma", "cfl-eps2-is-eps1",
                       "cfl-min-size-is-warmup", "cfl-warmup-is-min-size",
                       "cfl-size-vs-warmup", "cfl-round-vs-min-size",
                       "cfl-min-size-off-with-warmup", "cfl-gamma-quarter"],
    "schedule-drawn-order": ["drawn-batches"],
}


def dec(q):
    return Decimal(q.numerator) / Decimal(q.denominator)


def sqrt_dec(q):
    return dec(q).sqrt()


class Cos:
    """d / √q (q > 0), or the rational r when q is None."""

    def __init__(self, d, q=None):
        self.d, self.q = Fraction(d), (None if q is None else Fraction(q))

    def sign_sq(self):
        """(sign, value²) as rationals."""
        if self.q is None:
            return (1 if self.d > 0 else -1 if self.d < 0 else 0), self.d * self.d
        s = 1 if self.d > 0 else -1 if self.d < 0 else 0
        return s, self.d * self.d / self.q

    def __lt__(self, other):
        if not isinstance(other, Cos):
            other = Cos(other)
        s1, a = self.sign_sq()
        s2, b = other.sign_sq()
        if s1 != s2:
            return s1 < s2
        if s1 == 0:
            return False
        return a < b if s1 > 0 else a > b

    def __gt__(self, other):
        if not isinstance(other, Cos):
            other = Cos(other)
        return other < self

    def __eq__(self, other):
        if not isinstance(other, Cos):
            other = Cos(other)
        return not self < other and not other < self

    def value(self):
        if self.q is None:
            return dec(self.d)
        return dec(self.d) / sqrt_dec(self.q)


def dot(x, y):
    return sum((a * b for a, b in zip(x, y)), Fraction(0))


def similarity(xs, bugs):
    """α (m×m of Cos) of the vectors xs: the cosine, 0 when a norm is 0,
    1 on the diagonal (bug cfl-raw-similarity: the plain inner product)."""
    m = len(xs)
    A = [[None] * m for _ in range(m)]
    # req: cfl.alg5.l10
    for a in range(m):
        for b in range(m):
            if "cfl-raw-similarity" in bugs:
                A[a][b] = Cos(dot(xs[a], xs[b]))
            elif a == b:
                A[a][b] = Cos(1)
            else:
                qa, qb = dot(xs[a], xs[a]), dot(xs[b], xs[b])
                A[a][b] = Cos(0) if qa == 0 or qb == 0 else Cos(dot(xs[a], xs[b]), qa * qb)
    return A


def algorithm1(A, ties_reversed=False):
    """Algorithm 1 literally: the flat indices s sorted by decreasing α, ties
    by position; C ← singletons; merge the clusters of i₁ = s div m and
    i₂ = s mod m; stop at |C| = 2.  Returns (c₁, c₂) as positions.
    ties_reversed: the bug cfl-ties-reversed (equal α, last position first)."""
    m = len(A)
    # req: cfl.alg1.l1, cfl.alg1.l2
    flat = list(range(m * m))
    if ties_reversed:
        flat.reverse()
    # a stable insertion sort on -α (exact comparisons), so equal α keep
    # their row-major order
    order = []
    for f in flat:
        pos = len(order)
        while pos > 0 and A[order[pos - 1] // m][order[pos - 1] % m] < A[f // m][f % m]:
            pos -= 1
        order.insert(pos, f)
    # req: cfl.alg1.l3
    C = [{a} for a in range(m)]
    # req: cfl.alg1.l4
    for f in order:
        # req: cfl.alg1.l5
        i1, i2 = f // m, f % m
        # req: cfl.alg1.l6
        hit = [c for c in C if i1 in c or i2 in c]
        C = [c for c in C if not (i1 in c or i2 in c)] + [set().union(*hit)]
        # req: cfl.alg1.l7, cfl.alg1.opt
        if len(C) == 2:
            break
    return two_parts(C)


def complete_linkage(A, ties_reversed=False):
    """Agglomerative complete linkage on −α to two clusters: merge the pair
    of clusters whose least similar pair (the link, min α) is the most
    similar; of equal links, the pair (x, y) with the smallest (smallest
    member of x, smallest member of y).  ties_reversed: the bug
    cfl-ties-reversed (of equal links, the largest such pair)."""
    m = len(A)
    C = [[a] for a in range(m)]
    while len(C) > 2:
        best = None
        for x in range(len(C)):
            for y in range(x + 1, len(C)):
                link = None
                for a in C[x]:
                    for b in C[y]:
                        if link is None or A[a][b] < link:
                            link = A[a][b]
                key = (min(C[x]), min(C[y]))
                if ties_reversed:
                    key = (-key[0], -key[1])  # the largest pair first
                if best is None or link > best[0] or (link == best[0] and key < best[1]):
                    best = (link, key, x, y)
        _, _, x, y = best
        merged = sorted(C[x] + C[y])
        C = [c for k, c in enumerate(C) if k not in (x, y)] + [merged]
        C.sort(key=min)
    return two_parts(C)


def two_parts(C):
    c = sorted((sorted(p) for p in C), key=min)
    return c[0], c[1]


def norm_sq(x):
    return dot(x, x)


def cluster_update(pr, members, dtheta, weights):
    """Δθ_c = Σ_{i∈c} w_i Δθ_i, w_i = 1/|c| or |D_i|/|D_c|."""
    D_c = sum(pr.n(i) for i in members)
    acc = [Fraction(0)] * pr.P
    for i in members:
        w = Fraction(pr.n(i), D_c) if weights == "samples" else Fraction(1, len(members))
        acc = [a + w * d for a, d in zip(acc, dtheta[i])]
    return acc


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp = {k: v for k, v in alg.get("hyperparameters", {}).items()}
    sw = alg.get("switches", {})
    eta = exact(hp["eta"])
    eps1, eps2, gmax = exact(hp["eps1"]), exact(hp["eps2"]), exact(hp["gamma_max"])
    min_size = hp.get("cfl.min_cluster_size", 0)
    warmup = hp.get("cfl.warmup", 0)
    if "cfl-min-size-is-warmup" in bugs:
        min_size = warmup
    if "cfl-warmup-is-min-size" in bugs:
        warmup = hp.get("cfl.min_cluster_size", 0)
    # the ε tests' thresholds (ε₁ for the mean update, ε₂ for the largest)
    t1 = eps2 if "cfl-eps1-is-eps2" in bugs else gmax if "cfl-eps1-is-gamma" in bugs else eps1
    t2 = eps1 if "cfl-eps2-is-eps1" in bugs else eps2
    # the size guard's switch, its bound, and the warmup guard's bound
    size_on = warmup if "cfl-min-size-off-with-warmup" in bugs else min_size
    size_bound = warmup if "cfl-size-vs-warmup" in bugs else min_size
    round_bound = min_size if "cfl-round-vs-min-size" in bugs else warmup
    # γ test γ_max < √((1 − α)/k), k = 2 (k = 4: the bug)
    gk = 4 if "cfl-gamma-quarter" in bugs else 2
    method = sw.get("cfl.bipartition", "optimal")
    if "cfl-bipartition-flip" in bugs:
        method = "complete_linkage" if method == "optimal" else "optimal"
    weights = sw.get("cfl.cluster_weights", "uniform")
    if "cfl-weights-flip" in bugs:
        weights = "samples" if weights == "uniform" else "uniform"
    # bn.running, bn.running_var: how the local steps move a batch norm's
    # running statistics (entries of θ_i, so of Δθ_i too)
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P)
    N = len(pr.clients)
    # req: cfl.alg5.l1
    theta = [list(w0) for _ in range(N)]
    import pflref_exact_optim as po      # opt.*: the local SGD's optimizer
    # opt.decay_scope = shared | personal reads the spec's split (the
    # optimizer's λ_B, docs/optimizers.md); CFL itself reads no split
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 1, personal, bugs=bugs)
    C = [list(range(N))]
    trace = Trace()
    # req: cfl.alg5.l2
    for t, r in enumerate(spec["schedule"]["rounds"]):
        assert r["clients"] == list(range(N)), "cfl: every client every round"
        dtheta = {}
        # batches[j] is clients[j]'s; drawn is information only
        owners = r.get("drawn", r["clients"]) if "drawn-batches" in bugs else r["clients"]
        # req: cfl.alg5.l3
        for i, steps in sorted(zip(owners, r["batches"])):
            trace.emit("client_begin", "train", t, i, 0, "theta", theta[i])
            # req: cfl.alg5.l5
            if opt is not None:
                opt.begin(i)
            # lr.*: η c_t, c_t = round_factor (every client trains in
            # every round, so lr.count = rounds and trainings agree)
            local = px.local_sgd(pr, i, theta[i], steps,
                                 eta * px.round_factor(alg, t, bugs), trace,
                                 "train", t, "theta",
                                 bugs=frozenset(bugs) & pl.ALL_BUGS,
                                 opt=None if opt is None else opt.stepper(i, 0))
            dtheta[i] = [a - b for a, b in zip(local, theta[i])]
            trace.emit("client_end", "train", t, i, None, "dtheta", dtheta[i])
        # req: cfl.alg5.l6
        C_tmp = []
        # req: cfl.alg5.l7
        for c in C:
            rep = c[0]
            # req: cfl.alg5.l8
            upd = cluster_update(pr, c, dtheta, weights)
            nsq = norm_sq(upd)
            max_sq = max(norm_sq(dtheta[i]) for i in c)
            trace.emit("note", "train", t, rep, None, "norm_dtheta_c", [sqrt_dec(nsq)])
            trace.emit("note", "train", t, rep, None, "max_norm_dtheta", [sqrt_dec(max_sq)])
            # req: cfl.alg5.l9
            if not (nsq < t1 * t1 and max_sq > t2 * t2) or len(c) < 2 \
                    or (size_on and len(c) < size_bound) or t < round_bound:
                C_tmp.append(c)
                continue
            # req: cfl.alg5.l10
            A = similarity([dtheta[i] for i in c], bugs)
            for a, i in enumerate(c):
                trace.emit("note", "train", t, i, None, "similarity", [x.value() for x in A[a]])
            # req: cfl.alg5.l11
            p1, p2 = (algorithm1(A, "cfl-ties-reversed" in bugs) if method == "optimal"
                      else complete_linkage(A, "cfl-ties-reversed" in bugs))
            cross = max((A[a][b] for a in p1 for b in p2), key=CosKey)
            if "cfl-local-indices" in bugs:
                c1, c2 = list(p1), list(p2)
            else:
                c1, c2 = [c[a] for a in p1], [c[a] for a in p2]
            trace.emit("note", "train", t, rep, None, "c1", [Fraction(i) for i in c1])
            trace.emit("note", "train", t, rep, None, "c2", [Fraction(i) for i in c2])
            trace.emit("note", "train", t, rep, None, "alpha_cross", [cross.value()])
            # γ_max < √((1 − α)/2)  ⇔  α < 1 − 2 γ_max²  (γ_max ≥ 0)
            # req: cfl.alg5.l12
            split = cross < 1 - gk * gmax * gmax or "cfl-no-gamma-test" in bugs
            trace.emit("note", "train", t, rep, None, "split", [Fraction(int(split))])
            if split:
                C_tmp += [c1, c2]
                if "cfl-update-parent" in bugs:
                    parent_update = dict.fromkeys(c1 + c2, upd)
                    C_tmp[-1] = (C_tmp[-1], parent_update)
                    C_tmp[-2] = (C_tmp[-2], parent_update)
            else:
                C_tmp.append(c)
        fixed = {}
        plain = []
        for c in C_tmp:
            if isinstance(c, tuple):
                c, pu = c
                fixed[tuple(c)] = pu[c[0]]
            plain.append(c)
        # req: cfl.alg5.l13
        C = sorted(plain, key=min)
        labels = {}
        for k, c in enumerate(C):
            for i in c:
                labels.setdefault(i, k)
        trace.emit("note", "train", t, None, None, "partition",
                   [Fraction(labels.get(i, -1)) for i in range(N)])
        for c in C:
            upd = fixed.get(tuple(c)) or cluster_update(pr, c, dtheta, weights)
            trace.emit("note", "train", t, c[0], None, "dtheta_c", upd)
            for i in c:
                # req: cfl.alg5.l4
                theta[i] = [a + d for a, d in zip(theta[i], upd)]
        for i in range(N):
            trace.emit("client_end", "train", t, i, None, "v", theta[i])
    return trace, None, theta, None


class CosKey:
    """max(..., key=CosKey): orders Cos values exactly."""

    def __init__(self, c):
        self.c = c

    def __lt__(self, other):
        return self.c < other.c


def supported(spec):
    model = spec["model"]
    return (spec["algorithm"]["name"] == "cfl"
            and (model["kind"] in ("quadratic", "linear")
                 or (model["kind"] in ("mlp", "layers")
                     and model.get("loss") in ("half_squared", "squared")))
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def exact_values(xs):
    return exact_vec(xs)
