# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_ifca.py: IFCA (Ghosh, Chung, Yin, Ramchandran,
NeurIPS 2020, arXiv 2006.04088, Algorithm 1) in exact rational arithmetic,
written from shared/spec notes-cfl-ifca-sampling-metrics.md §2 and §4.1,
independently of the C reference.

One round: every participant i ∈ M_t (ascending) takes
ĵ_i = argmin_j F_i(θ_j) on its whole training set (ties to the lowest j);
Option I (ifca.mode = gradient) sends g_i = ∇F_i(θ_ĵ; b) on its one batch
and the server sets θ_j ← θ_j − (γ/|M_t|) Σ_i s_ij g_i; Option II (model)
runs γ-steps from θ_ĵ over its batches and the server sets θ_j to the mean
of the local models that chose j, keeping θ_j when none did.  The
personalised model of every client is then θ_ĵ at the new models.  The
initial models are θ_j = w⁰ + j δ 𝟙 (σ = 0: the drawn part is not modelled
here; supported() refuses σ > 0).

Shared switches: LocalUpdate (Option II) steps through
golden/pflref_exact_optim.py (opt.*; opt.decay_scope = shared | personal
reads the spec's split, which IFCA itself does not read); γ is γ c_t in
round t (lr.*, pflref_exact.round_factor, counted in rounds), in Option I's
server step too; LocalUpdate's training passes move a batch norm's running
statistics as bn.running, bn.running_var say.

replay(spec, bugs) -> (trace, None, v, None).  Bugs:

  ifca-divide-cluster-size  Option I divided by the cluster's size |S_j|
  ifca-divide-all           Option I divided by N, all machines, not |M_t|
  ifca-ties-highest         ties of the estimate go to the highest j
  ifca-empty-zero           Option II: a cluster no machine chose becomes 0
  ifca-report-last-pick     the reported model is the cluster the client
                            picked in the round (before the update), or
                            θ_0 for a client that did not take part
  ifca-mode-flip            gradient <-> model averaging
  drawn-batches             the round's batch lists paired with the clients
                            in the drawn order instead of the ascending
                            clients (batches[j] belongs to clients[j])
  loss-x2                   the loss's constant factor wrong: the ½ of
                            half_squared dropped or one added to squared
                            (in F_i and in the gradient alike)
  ifca-estimate-mode-flip   the estimate's F_i(θ_j) in the other mode of
                            ifca.estimate_mode (train <-> eval)

Order of the estimates: every client's at θ_j^(0) before round 0, then per
round the participants' and, after the server update, every client's
(the partition record); the reported v_i are the last partition's (the
order in which pflref's training passes take their dropout masks).

Switch ifca.estimate_mode: train (default) takes F_i(θ_j) of a layer list
in a training-mode forward pass (batch normalisation on the set's
statistics, a dropout layer's mask taken, which golden/layers/
make_dropout.py serves from the schedule's estimate lists: jichan3751/
ifca's models never leave torch's training mode); eval in evaluation mode (model.eval():
batch normalisation on θ_j's running statistics, dropout the identity, no
mask: Gerid/FedDCA clientifca.py:56-61).  The quadratic and linear
models have no modes.
"""
from fractions import Fraction

import pflref_exact as px
from pflref_golden import Trace, exact

MUTANTS = {
    "ifca-divisor": ["ifca-divide-cluster-size", "ifca-divide-all"],
    "ifca-tie-break": ["ifca-ties-highest"],
    "ifca-empty-cluster": ["ifca-empty-zero"],
    "ifca-estimate": ["ifca-report-last-pick"],
    "ifca-update": ["ifca-mode-flip"],
    "ifca-init": ["ifca-init-ignored"],
    "ifca-estimate-mode": ["ifca-estimate-mode-flip"],
    "schedule-drawn-order": ["drawn-batches"],
    "loss-scale": ["loss-x2"],
}


def eval_loss(pl, M, X, Y, theta, bugs):
    """The mean loss of θ on the rows X, y in evaluation mode (the forward
    pass with train = False: batch normalisation on the running statistics
    in θ, a dropout layer the identity), as exact rationals; the squared
    losses only (as pl.loss_exact)."""
    assert M.loss in ("squared", "half_squared"), M.loss
    D = M.D
    try:
        Z, _ = M.forward([D.num(x) for x in theta],
                         [[D.num(float(x)) for x in row] for row in X], False, bugs)
    except ArithmeticError as e:     # decimal's InvalidOperation
        # a bug that leaves a negative running variance: its root (NaN in
        # torch) is no number this replay can carry on with
        raise ValueError("the evaluation pass has no real value: %r" % e) from e
    sq = sum(((pl.to_exact(z[0]) - Fraction(float(y))) ** 2 for z, y in zip(Z, Y)),
             Fraction(0)) / len(X)
    half = (M.loss == "half_squared") != ("loss-x2" in bugs)
    return sq / 2 if half else sq


def loss(pr, i, theta, bugs=frozenset(), mode="train"):
    """F_i(θ): the mean loss over client i's whole training set, a layer
    list's in the mode ifca.estimate_mode gives."""
    c = pr.clients[i]
    if pr.kind == "layers":                # pflref_exact_layers.py
        import pflref_exact_layers as pl
        d = c["data"]
        if mode == "eval":
            return eval_loss(pl, pr.layers, d.X, d.y, theta, bugs)
        return pl.loss_exact(pr.layers, d.X, d.y, theta, bugs)[0]
    if pr.kind == "quadratic":
        return sum(a * (t - cc) ** 2 for a, t, cc in zip(c["a"], theta, c["c"])) / 2
    assert pr.kind == "linear"
    d = pr.d
    b = theta[d] if pr.bias else Fraction(0)
    s = Fraction(1) if pr.loss == "squared" else Fraction(1, 2)
    if "loss-x2" in bugs:
        s = Fraction(3, 2) - s
    total = Fraction(0)
    for x, y in zip(c["X"], c["y"]):
        r = sum(x[p] * theta[p] for p in range(d)) + b - y
        total += s * r * r
    return total / len(c["X"])


def estimate(pr, i, thetas, bugs, mode="train"):
    losses = [loss(pr, i, th, bugs, mode) for th in thetas]
    best = 0
    # req: ifca.alg1.l5
    for j, f in enumerate(losses):
        if f < losses[best] or ("ifca-ties-highest" in bugs and f == losses[best]):
            best = j
    return losses, best


def px_bugs(bugs):
    """The bugs pflref_exact's model takes (the loss factor; a layer
    list's own bugs, pflref_exact_layers.MUTANTS)."""
    import pflref_exact_layers as pl
    return frozenset(bugs) & ({"loss-x2"} | pl.ALL_BUGS)


def replay(spec, bugs=frozenset()):
    alg = spec["algorithm"]
    hp = alg["hyperparameters"]
    mode = alg.get("switches", {}).get("ifca.mode", "gradient")
    if "ifca-mode-flip" in bugs:
        mode = "model" if mode == "gradient" else "gradient"
    est_mode = alg.get("switches", {}).get("ifca.estimate_mode", "train")
    if "ifca-estimate-mode-flip" in bugs:
        est_mode = "eval" if est_mode == "train" else "train"
    gamma, k = exact(hp["gamma"]), hp["ifca.k"]
    shift = exact(hp.get("ifca.init_shift", 0.0))
    # bn.running, bn.running_var: how LocalUpdate's steps move a batch
    # norm's running statistics (entries of θ_j)
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(
        alg.get("switches", {}))
    N = len(pr.clients)
    init = spec.get("init", {"kind": "zeros"})
    w0 = px.initial(init, pr.P)
    # req: ifca.alg1.l1
    if "cluster_models" in init and "ifca-init-ignored" not in bugs:
        # θ_j⁰ given (a replay of drawn ones: the result's theta0)
        thetas = [[exact(x) for x in row] for row in init["cluster_models"]]
    else:
        thetas = [[w + j * shift for w in w0] for j in range(k)]
    import pflref_exact_optim as po      # opt.*: LocalUpdate's optimizer
    # opt.decay_scope = shared | personal reads the spec's split (the
    # optimizer's λ_B, docs/optimizers.md); IFCA itself reads no split
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 1, personal, bugs) if mode == "model" else None
    trace = Trace()
    picks = {}
    # the reported assignment at θ_j^(0), every client's estimate before
    # round 0 (its training passes come first in a client's order; with no
    # round it is the reported one)
    part = [estimate(pr, i, thetas, bugs, est_mode)[1] for i in range(N)]
    # req: ifca.alg1.l2
    gamma0 = gamma
    for t, r in enumerate(spec["schedule"]["rounds"]):
        # lr.*: γ c_t in round t (LocalUpdate's step, Option I's server
        # step), c_t = round_factor: the decay counts rounds
        gamma = gamma0 * px.round_factor(alg, t, bugs)
        if t == 0:
            trace.emit("note", "train", 0, None, None, "theta0", [x for th in thetas for x in th])
        # req: ifca.alg1.l3
        trace.emit("round_begin", "train", t, None, None, "theta",
                   [x for th in thetas for x in th])
        sums = [[Fraction(0)] * pr.P for _ in range(k)]
        count = [0] * k
        M = r["clients"]
        picks = {}
        # batches[j] is clients[j]'s (the drawn order is information only)
        owners = r.get("drawn", M) if "drawn-batches" in bugs else M
        plan = dict(zip(owners, r["batches"]))
        # req: ifca.alg1.l4
        for i in M:
            steps = plan[i]
            losses, j = estimate(pr, i, thetas, bugs, est_mode)
            picks[i] = j
            trace.emit("note", "train", t, i, None, "loss", losses)
            trace.emit("note", "train", t, i, None, "j_hat", [Fraction(j)])
            if mode == "model":
                trace.emit("client_begin", "train", t, i, 0, "theta_local", thetas[j])
                # req: ifca.alg1.l7
                if opt is not None:
                    opt.begin(i)
                x = px.local_sgd(pr, i, thetas[j], steps, gamma, trace, "train", t,
                                 "theta_local", bugs=px_bugs(bugs),
                                 opt=None if opt is None else opt.stepper(i, 0))
                trace.emit("client_end", "train", t, i, None, "theta_local", x)
            else:
                # req: ifca.alg1.l6
                x = pr.grad(i, thetas[j], steps[0], px_bugs(bugs))
                trace.emit("client_end", "train", t, i, None, "g", x)
            sums[j] = [a + b for a, b in zip(sums[j], x)]
            count[j] += 1
        new = []
        for j in range(k):
            if mode == "gradient":
                div = len(M)
                if "ifca-divide-cluster-size" in bugs:
                    div = max(count[j], 1)
                if "ifca-divide-all" in bugs:
                    div = N
                # req: ifca.alg1.l8
                new.append([a - gamma / div * s for a, s in zip(thetas[j], sums[j])])
            elif count[j] > 0:
                # req: ifca.alg1.l9
                new.append([s / count[j] for s in sums[j]])
            else:
                new.append([Fraction(0)] * pr.P if "ifca-empty-zero" in bugs else thetas[j])
        thetas = new
        trace.emit("server", "train", t, None, None, "theta", [x for th in thetas for x in th])
        part = [estimate(pr, i, thetas, bugs, est_mode)[1] for i in range(N)]
        trace.emit("note", "train", t, None, None, "partition",
                   [Fraction(j) for j in part])
    v = []
    for i in range(N):
        j = part[i]     # the last reported assignment, at the final models
        if "ifca-report-last-pick" in bugs:
            j = picks.get(i, 0)
        # req: ifca.alg1.l10
        v.append(list(thetas[j]))
    return trace, None, v, None


def supported(spec):
    hp = spec["algorithm"].get("hyperparameters", {})
    return (spec["algorithm"]["name"] == "ifca"
            and (spec["model"]["kind"] in ("quadratic", "linear")
                 or (spec["model"]["kind"] == "layers"
                     and spec["model"].get("loss") in ("squared", "half_squared")))
            and hp.get("ifca.init_sd", 0) == 0
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")
