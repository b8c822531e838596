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

init.class_counts (N lists of k integers, client 0 first), when the spec
gives it, is N_{i,.} itself (PFLlib's counts over one shuffled pass with
drop_last, clientrod.py:22-26); absent, N_{i,c} counts the training data.
"""
from decimal import Decimal, localcontext

from pflref_exact_moon import Net, Party, dec
from pflref_golden import Trace

PREC = 60
D0 = Decimal(0)

# req: fedrod.preset.pfllib
PRESETS = {
    "pfllib": {"fedrod.features": "before", "fedrod.phi_p0": "generic",
               "lr.count": "trainings"},
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
}


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
    return s


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
    """l. 7: x − η ∇ L^BR(x; batch), and the features and z_G at x."""
    L, nb = len(net.ops), len(batch)
    g = [D0] * net.P
    counts = None if "bsm-plain" in bugs else counts_of(party, K, batch, bugs)
    feats = []
    for j in batch:
        acts = net.forward(x, party.X[j])
        feats.append((acts[L - 1], acts[-1]))
        net.backward(x, acts, softmax_signal(acts[-1], party.y[j], counts),
                     L, g, 1 / Decimal(nb))
    # req: fedrod.alg1.l7
    return [a - hp["eta"] * b for a, b in zip(x, g)], feats


def personal_step(net, party, x, phi, batch, feats, hp, K, bugs):
    """l. 8: φ_P − η ∇_{φ_P} mean CE(z_G + z_P), with f and z_G at the
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
    # req: fedrod.alg1.l8
    return [a - hp["eta"] * b for a, b in zip(phi, gP)]


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
        net = Net(spec["model"])
        K = net.ops[-1][4]
        parties = [Party(c) for c in spec["problem"]["clients"]]
        for p, row in zip(parties, spec["init"].get("class_counts", [])):
            p.given_counts = [int(u) for u in row]
        w0 = [dec(u) for u in spec["init"]["w"]]
        hp = settings(spec["algorithm"], bugs)
        w, trace = list(w0), Trace()
        phi = [phi0(net, w0, hp) for _ in parties]
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
                if "phi-reset" in bugs:
                    phi[i] = phi0(net, w0, hp)
                trace.emit("client_begin", "train", t, i, 0, "w_local", x)
                if "epochs-plus-one" in bugs:
                    batches = list(batches) + [batches[0]]
                if "epochs-minus-one" in bugs:
                    batches = list(batches)[:-1]
                # req: fedrod.alg1.l5, fedrod.alg1.l6
                for s, batch in enumerate(batches, start=1):
                    x, feats = generic_step(net, parties[i], x, batch, hp, K,
                                            bugs)
                    trace.emit("step", "train", t, i, s, "w_local", x)
                    phi[i] = personal_step(net, parties[i], x, phi[i], batch,
                                           feats, hp, K, bugs)
                    trace.emit("step", "train", t, i, s, "phi_P", phi[i])
                # req: fedrod.alg1.l10
                trace.emit("client_end", "train", t, i, None, "w_local", x)
                trace.emit("note", "train", t, i, None, "phi_P", phi[i])
                c = (1 / Decimal(len(r["clients"])) if "uniform-weights" in bugs
                     else Decimal(parties[i].n) / n_S)
                acc = [a + c * u for a, u in zip(acc, x)]
            # req: fedrod.alg1.l12
            w = acc
            trace.emit("server", "train", t, None, None, "w", w)
        return trace, w, None, None


def supported(spec):
    """Specs this module replays: a given schedule, inline clients, a
    classifier mlp or dense/relu layer list, given w⁰."""
    m = spec["model"]
    ok_model = m["kind"] == "mlp" or (
        m["kind"] == "layers" and len(m.get("input", [])) == 1
        and all(L["type"] in ("dense", "relu", "identity") for L in m["layers"]))
    return (ok_model and m.get("loss", "cross_entropy") == "cross_entropy"
            and "clients" in spec.get("problem", {})
            and spec.get("init", {}).get("kind") == "given"
            and spec.get("schedule", {}).get("kind") == "given")
