# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedproto.py: FedProto (Tan, Long, Liu, Zhou, Lu,
Jiang, Zhang, "FedProto: Federated Prototype Learning across
Heterogeneous Clients", AAAI 2022, arXiv 2105.00243, Alg. 1 with Eqs. 4-6)
in 60-digit decimal arithmetic, written from the paper and the authors'
code, independently of the C reference (ref/algorithms/fedproto.c).

Every input is the exact value of the double the spec holds; every
operation rounds to 60 significant digits.  The embeddings (a ReLU body)
and the prototypes are rational; only the cross-entropy's softmax needs
exp (Decimal's, correctly rounded).  The network is pflref_exact_moon's
Net (a chain of dense and relu/identity layers in the spec's layout); the
embedding f_i(x) is the input of the last dense layer (the decision
layer).

One round t (the schedule's clients S_t, ascending), every client keeping
its own model v_i (w⁰ at the start, never averaged):
  for each batch b of client i's schedule:                   (LocalUpdate)
    L = (1/|b|) Σ_{(x,y)∈b} [CE(F(x), y) + λ R(f(x), C̄^(y))]    (Eq. 6)
    R(f, C) = ‖f − C‖² (fedproto.distance = mse: ‖f − C‖²/h); no R term
    for a class without a global prototype (none in round 0)
    v_i ← v_i − η ∇L
  C_i^(j) = mean of f(x) over D_{i,j} at the trained v_i         (Eq. 4)
    (client_protos = during_training: over every batch sample of class j,
    f at the iterate before its step)
  C̄^(j) = Σ_{i∈N_j} |D_{i,j}| C_i^(j) / Σ_{i∈N_j} |D_{i,j}|       (Eq. 5)
    (weights = uniform: the plain mean); the new set replaces the old one.
The client optimizer (docs/optimizers.md, slot 0: LocalUpdate's, on
d = ∇L of Eq. 6; the official preset's torch SGD with momentum 0.5, a new
optimizer per local update, yuetan031/FedProto lib/update.py
update_weights_het) steps through golden/pflref_exact_optim.py's
Optimizers, as ref/algorithms/fedproto.c steps through the engine's
(pflref_optim_get(s, i, 0), pflref_optim_begin at each client's update):
every opt.* (SGD, momentum forms, Nesterov, decay forms and scopes over the
spec's split, the clip, Adam, AdamW, opt.state); the gradient and v go in
as the exact values of their decimals, v comes back at 60 digits; the
batch-norm buffers are not among its blocks and never step.  Without opt.*
the step stays v ← v − η ∇L.

Bugs (realistic implementation mistakes; check_mutants, golden/audit.py):
  r-half            R = ½‖f − C‖² (the factor 2 of ∂R/∂f lost)
  r-dim             R divided by h where the paper's ‖·‖² is configured,
                    or not divided under mse
  lambda-one        λ left out (λ = 1)
  protos-start      C_i^(j) from the model at the client's start (before
                    its local steps) instead of the trained one
  protos-trained    during_training configured, the trained model's
                    prototypes computed instead
  protos-last-step  during_training: the features after each step instead
                    of before it
  proto-uniform     C̄^(j) the plain mean where Eq. 5's weights are
                    configured, or (proto-counts) the reverse
  proto-sizes       weights n_i (the client's whole size) instead of
                    |D_{i,j}|
  missing-zero      a class without a global prototype pulled toward 0
                    (a zero-initialised prototype table)
  keep-old-global   classes no client of S_t holds keep their old C̄^(j)
  sequential-global C̄ updated after each client (a later client of S_t
                    already regularised toward this round's prototypes)
  v-reset           each client restarts from w⁰ every round
  epochs-plus-one, epochs-minus-one
                    one local step too many (the first batch again) / few
  drawn-batches     a round's batch lists paired with its drawn order
                    instead of its ascending clients
  lr-ignored, lr-shifted, lr-per-round
                    pflref_exact.round_factor's (the decay left out / one
                    scheduler step early / lr.count = trainings read as the
                    round t)

Learning-rate decay (lr.*; PFLlib clientproto.py:69-70 steps the client's
ExponentialLR after its train(), and its one optimizer takes every step):
client i's update of round t steps with η c, c = pflref_exact.round_factor
(γ^k, k = t or, under lr.count = trainings, the rounds i trained in
before), exactly; λ is no step size and stays.

Batch normalisation in a layer list's body (BNNet, pflref_exact_layers'
batch forward and backward in 60-digit decimals): each step is one
training pass of θ on the batch (L_S and f on the batch's statistics), the
loss's signal back through the decision layer with λ (1/|b|) ∂R/∂f added
on f, then one backward through the body's training pass; θ's running
statistics move by that pass (PyTorch's rule), then its parameters step.
Eq. 4 under trained: f of the trained model per sample from an evaluation
pass (its running statistics); under during_training the steps'
training-pass features.
Bugs of this path: protos-train-mode (trained prototypes from one training
pass over D_i), running-frozen (θ's running statistics never move),
running-moved (they move where bn.running = frozen is configured),
running-var-flipped (the other of the biased and unbiased batch variance
into the running variance, bn.running_var).
"""
from decimal import Decimal, localcontext
from fractions import Fraction

from pflref_exact_moon import BNNet, Net, OptView, Party, dec, opt_step
import pflref_exact_layers as pl
import pflref_exact as px
import pflref_exact_optim as po
from pflref_golden import Trace

PREC = 60
D0 = Decimal(0)

PRESETS = {
    "official": {"fedproto.distance": "mse",
                 "fedproto.client_protos": "during_training",
                 "fedproto.weights": "uniform", "opt.momentum": 0.5},
    "pfllib": {"fedproto.distance": "mse",
               "fedproto.client_protos": "during_training",
               "fedproto.weights": "uniform", "lr.count": "trainings"},
}

MUTANTS = {
    "fedproto-distance": ["r-half", "r-dim", "lambda-one"],
    "fedproto-client-protos": ["protos-start"],
    "fedproto-client-protos-during": ["protos-trained", "protos-last-step"],
    "fedproto-proto-weights": ["proto-uniform", "proto-sizes"],
    "fedproto-proto-weights-uniform": ["proto-counts"],
    "fedproto-missing-prototype": ["missing-zero", "keep-old-global"],
    "fedproto-parallel-clients": ["sequential-global"],
    "stale-personal-state": ["v-reset"],
    "local-step-count": ["epochs-plus-one", "epochs-minus-one"],
    "schedule-drawn-order": ["drawn-batches"],
    "lr-schedule": ["lr-ignored", "lr-shifted"],
    "lr-count": ["lr-per-round"],
    "fedproto-bn-passes": ["protos-train-mode"],
    "bn-running-update": ["running-frozen", "running-var-flipped"],
    "bn-running-moved": ["running-moved"],
}


def settings(algorithm, bugs):
    """The spec's hyperparameters and switches, the preset's first."""
    hp = dict(PRESETS.get(algorithm.get("preset", "paper"), {}))
    hp.update(algorithm.get("hyperparameters", {}))
    hp.update(algorithm.get("switches", {}))
    s = {
        "eta": dec(hp["eta"]),
        "lam": Decimal(1) if "lambda-one" in bugs else dec(hp["fedproto.lambda"]),
        "mse": hp.get("fedproto.distance", "squared_l2") == "mse",
        "during": hp.get("fedproto.client_protos", "trained") == "during_training",
        "uniform": hp.get("fedproto.weights", "class_counts") == "uniform",
        # opt.*: the optimizer's settings (pflref_exact_optim.config over
        # the preset's), None when every one is at its default
        "opt": opt_config(hp),
        "bn_update": hp.get("bn.running", "update") == "update",
        "bn_unbiased": hp.get("bn.running_var", "unbiased") == "unbiased",
        "bugs": bugs,
        # lr.*: the keys pflref_exact.round_factor reads
        "decay": {"switches": hp, "hyperparameters": hp},
    }
    if "r-dim" in bugs:
        s["mse"] = not s["mse"]
    if "proto-uniform" in bugs or "proto-counts" in bugs:
        s["uniform"] = not s["uniform"]
    if "protos-trained" in bugs:
        s["during"] = False
    return s


def opt_config(hp):
    """pflref_exact_optim's settings from the merged hyperparameters, or
    None (plain steps) when every opt.* is at its default."""
    c = dict(po.DEFAULTS)
    c.update({k: v for k, v in hp.items() if k.startswith("opt.")})
    return c if any(c[k] != po.DEFAULTS[k] for k in po.DEFAULTS) else None


def embedding(net, theta, x):
    """(acts, f): the layer outputs and f(x), the last dense layer's
    input."""
    acts = net.forward(theta, x)
    return acts, acts[len(net.ops) - 1]


def step_grad(net, party, theta, batch, cbar, hp, h, protos, bugs):
    """∇L(θ; batch) of Eq. 6; under during_training the batch's features
    (at θ, before the step) join protos."""
    L, nb = len(net.ops), len(batch)
    g, gr = [D0] * net.P, [D0] * net.P
    two = Decimal(1) if "r-half" in bugs else Decimal(2)
    c = two / h if hp["mse"] else two
    for j in batch:
        x, y = party.X[j], int(party.y[j])
        acts, f = embedding(net, theta, x)
        # req: fedproto.eq6
        net.backward(theta, acts, net.out_signal(acts[-1], party.y[j]), L, g,
                     1 / Decimal(nb))
        if hp["during"] and "protos-last-step" not in bugs:
            protos.setdefault(y, []).append(f)
        target = cbar.get(y)
        if target is None and "missing-zero" in bugs:
            target = [D0] * h
        if target is None:
            continue
        sig = [c * (fu - cu) for fu, cu in zip(f, target)]
        net.backward(theta, acts, sig, L - 1, gr, 1 / Decimal(nb))
    return [a + hp["lam"] * b for a, b in zip(g, gr)]


def step_grad_bn(net, party, theta, batch, cbar, hp, h, protos, bugs):
    """(∇L(θ; batch) of Eq. 6 through the batch's training pass, its
    caches); under during_training the pass's features join protos."""
    M, nb = net.M, len(batch)
    X = [party.X[j] for j in batch]
    Z, caches = M.forward(theta, X, True)
    G = [[e / nb for e in M._signal(z, party.y[j], pl.NO_BUGS)[1]]
         for z, j in zip(Z, batch)]
    g = [D0] * net.P
    # req: fedproto.eq6, fedproto.bn
    G = M._backward(M.layers[-1], caches[-1], theta, G, g, pl.NO_BUGS)
    F = caches[-1]["in"]
    two = Decimal(1) if "r-half" in bugs else Decimal(2)
    c = two / h if hp["mse"] else two
    for r, j in enumerate(batch):
        y = int(party.y[j])
        if hp["during"]:
            protos.setdefault(y, []).append(list(F[r]))
        target = cbar.get(y)
        if target is None and "missing-zero" in bugs:
            target = [D0] * h
        if target is None:
            continue
        G[r] = [gu + hp["lam"] * c * (fu - cu) / nb
                for gu, fu, cu in zip(G[r], F[r], target)]
    for L, cache in zip(reversed(M.layers[:-1]), reversed(caches[:-1])):
        G = M._backward(L, cache, theta, G, g, pl.NO_BUGS)
    return g, caches


def local_update(net, party, i, theta, batches, cbar, hp, h, trace, t, bugs,
                 opt=None):
    """LocalUpdate(i, C̄): the scheduled steps; returns (θ, protos) with
    protos {class: [features]} under during_training.  opt: the run's
    Optimizers (None: plain steps at hp["eta"]); its step size is
    hp["eta_q"], the exact η c_t."""
    # req: fedproto.alg1.local.l1, fedproto.alg1.local.l2
    trace.emit("client_begin", "train", t, i, 0, "v", theta)
    if opt is not None:
        opt.begin(i)                # opt.state = reset: a new optimizer
    if "epochs-plus-one" in bugs:
        batches = list(batches) + [batches[0]]
    if "epochs-minus-one" in bugs:
        batches = list(batches)[:-1]
    protos = {}
    for s, batch in enumerate(batches, start=1):
        # req: fedproto.alg1.local.l3, fedproto.alg1.local.l4
        if isinstance(net, BNNet):
            assert "protos-last-step" not in bugs
            g, caches = step_grad_bn(net, party, theta, batch, cbar, hp, h,
                                     protos, bugs)
            theta = list(theta)
            if (hp["bn_update"] or "running-moved" in bugs) and \
                    "running-frozen" not in bugs:
                net.M.update_running(
                    theta, caches,
                    hp["bn_unbiased"] != ("running-var-flipped" in bugs))
            # req: fedproto.alg1.local.l5
            if opt is not None:
                theta = opt_step(opt, i, g, theta, hp["eta_q"])
            else:
                theta = [th if p in net.buffers else th - hp["eta"] * gp
                         for p, (th, gp) in enumerate(zip(theta, g))]
            trace.emit("step", "train", t, i, s, "v", theta)
            continue
        g = step_grad(net, party, theta, batch, cbar, hp, h, protos, bugs)
        # req: fedproto.alg1.local.l5
        if opt is not None:
            theta = opt_step(opt, i, g, theta, hp["eta_q"])
        else:
            theta = [th - hp["eta"] * gp for th, gp in zip(theta, g)]
        if hp["during"] and "protos-last-step" in bugs:
            for j in batch:
                protos.setdefault(int(party.y[j]), []).append(
                    embedding(net, theta, party.X[j])[1])
        trace.emit("step", "train", t, i, s, "v", theta)
    return theta, protos


def client_prototypes(net, party, theta, start, protos, hp):
    """Eq. 4: {class: C_i^(j)} and {class: the features averaged}."""
    if not hp["during"]:
        # req: fedproto.eq4
        model = start if hp.get("start") else theta
        protos = {}
        if isinstance(net, BNNet):     # evaluation passes (or one training)
            F = net.rep(model, party.X, "protos-train-mode" in hp["bugs"])
            for f, y in zip(F, party.y):
                protos.setdefault(int(y), []).append(list(f))
        for x, y in zip(party.X, party.y):
            if isinstance(net, BNNet):
                break
            protos.setdefault(int(y), []).append(embedding(net, model, x)[1])
    return ({y: [sum(col) / len(fs) for col in zip(*fs)]
             for y, fs in protos.items()},
            {y: len(fs) for y, fs in protos.items()})


def flat(table, K, h):
    out = []
    for j in range(K):
        out.extend(table.get(j, [D0] * h))
    return out


def aggregate(contrib, hp, parties, bugs):
    """Eq. 5 over contrib = [(i, {class: C_i^(j)})]: {class: C̄^(j)}."""
    sums, wts, cnt = {}, {}, {}
    # req: fedproto.eq5, fedproto.alg1.server.l6
    for i, C in contrib:
        for j, c in sorted(C.items()):
            if hp["uniform"]:
                a = Decimal(1)
            elif "proto-sizes" in bugs:
                a = Decimal(parties[i].n)
            else:
                a = Decimal(sum(1 for y in parties[i].y if int(y) == j))
            sums[j] = [s + a * u for s, u in zip(sums.get(j, [D0] * len(c)), c)]
            wts[j] = wts.get(j, D0) + a
            cnt[j] = cnt.get(j, 0) + 1
    return {j: [u / wts[j] for u in s] for j, s in sums.items()}, cnt


def replay(spec, bugs=frozenset()):
    """(trace, None, v, None): the run of a FedProto spec on its given
    schedule; v_i every client's final model."""
    with localcontext() as ctx:
        ctx.prec = PREC
        bn = any(L["type"].startswith("batchnorm")
                 for L in spec["model"].get("layers", []))
        net = BNNet(spec["model"]) if bn else Net(spec["model"])
        K = spec["model"].get("k", 2) if spec["model"]["kind"] == "mlp" \
            else spec["model"]["layers"][-1]["out"]
        h = net.M.layers[-1].in_shape[0] if bn else net.ops[-1][3]
        parties = [Party(c) for c in spec["problem"]["clients"]]
        init = spec["init"]
        w0 = [dec(u) for u in init["w"]]
        hp = settings(spec["algorithm"], bugs)
        hp["start"] = "protos-start" in bugs
        opt = None
        if hp["opt"] is not None:
            personal = None
            if "split" in spec:     # opt.decay_scope = shared / personal
                import pflref_exact_pfl as pp
                personal = pp.personal_mask(spec["model"],
                                            spec["split"]["personal"])
            opt = po.Optimizers(hp["opt"], OptView(net, spec["model"]), 1,
                                personal, bugs)
        v, trace, cbar = [list(w0) for _ in parties], Trace(), {}
        trained = [0] * len(parties)     # each client's train() calls
        for t, r in enumerate(spec["schedule"]["rounds"]):
            contrib, seen = [], {}
            plan = list(zip(r["clients"], r["batches"]))
            if "drawn-batches" in bugs:     # batches[j] read as drawn[j]'s
                mine = dict(zip(r.get("drawn", r["clients"]), r["batches"]))
                plan = [(i, mine[i]) for i in r["clients"]]
            # req: fedproto.alg1.server.l2, fedproto.alg1.server.l3
            for i, batches in plan:
                # req: fedproto.alg1.server.l4
                start = list(w0) if "v-reset" in bugs else v[i]
                c = px.round_factor(hp["decay"], t, bugs,
                                    trained=trained[i])      # lr.*
                trained[i] += 1
                hp_i = dict(hp, eta=hp["eta"] * Decimal(c.numerator)
                            / Decimal(c.denominator),
                            eta_q=Fraction(hp["eta"]) * c)
                theta, protos = local_update(net, parties[i], i, start,
                                             batches, cbar, hp_i, h, trace,
                                             t, bugs, opt)
                v[i] = theta
                trace.emit("client_end", "train", t, i, None, "v", theta)
                # req: fedproto.alg1.local.l8
                C, n = client_prototypes(net, parties[i], theta, start,
                                         protos, hp)
                trace.emit("note", "train", t, i, None, "C", flat(C, K, h))
                trace.emit("note", "train", t, i, None, "n_C",
                           [Decimal(n.get(j, 0)) for j in range(K)])
                contrib.append((i, C))
                if "sequential-global" in bugs:
                    cbar, _ = aggregate(contrib, hp, parties, bugs)
                seen.update(n)
            new, cnt = aggregate(contrib, hp, parties, bugs)
            if "keep-old-global" in bugs:
                new = {**cbar, **new}
                cnt = {**{j: 1 for j in cbar}, **cnt}
            cbar = new
            # req: fedproto.alg1.server.l7
            trace.emit("note", "train", t, None, None, "C_bar",
                       flat(cbar, K, h))
            trace.emit("note", "train", t, None, None, "N_bar",
                       [Decimal(cnt.get(j, 0)) for j in range(K)])
        return trace, None, v, None


def supported(spec):
    """Specs this module replays: a given schedule, inline clients, a
    classifier mlp or dense/relu layer list, given w⁰."""
    m = spec["model"]
    ok_model = m["kind"] == "mlp" or (
        m["kind"] == "layers" and len(m.get("input", [])) == 1
        and all(L["type"] in ("dense", "relu", "identity", "tanh",
                              "batchnorm1d") for L in m["layers"])
        and (all(L["type"] != "tanh" for L in m["layers"])
             or any(L["type"] == "batchnorm1d" for L in m["layers"])))
    return (ok_model and m.get("loss", "cross_entropy") == "cross_entropy"
            and "clients" in spec.get("problem", {})
            and spec.get("init", {}).get("kind") == "given"
            and spec.get("schedule", {}).get("kind") == "given")
