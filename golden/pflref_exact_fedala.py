# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/pflref_exact_fedala.py: FedALA (Zhang, Hua, Wang, Song, Xue, Ma,
Guan, "FedALA: Adaptive Local Aggregation for Personalized Federated
Learning", AAAI 2023, arXiv 2212.01197v4, Algorithm 1 and the ALA module),
written from the paper and the authors' ALA.py, independently of the C
reference.

Arithmetic.  Every input is the exact value of the double the spec holds;
the models are regression models (linear, mlp with the squared loss), so
every step is rational; but the mlp's products would double the digits of
every value at every step, so W_i and Theta_hat after each ALA batch,
Theta_i after local training and Theta after the server's mean are
rounded to 60 significant digits (tidy), a relative error of 1e-60 per
rounding, far below the vectors' tolerance.  The start phase's stopping
rule compares a population standard deviation with the threshold: here as
var < threshold^2 (the generator asserts a margin, so the reference's
sqrt cannot flip it).

One round t (0-based), the participants i ascending, Theta the
round-start global model:
  t = 0 (or fedala.skip = sum_first and sum over the first block of
  (Theta - Theta_i) == 0):  no ALA, Theta_hat = Theta_i
  else:
    diff = Theta - Theta_i; Theta_hat = Theta_i + diff * W_i on the range
    (the top p layers, or p parameter tensors), Theta below it;
    passes over D_i^s (the round's personal list, batches in order):
      per batch b: g = grad L(Theta_hat; b), loss = L(Theta_hat; b);
        W_i <- clip_[0,1](W_i - eta g * diff); Theta_hat re-formed
      record the last batch's loss
    one pass, or (client i's first ALA) until more than k losses are
    recorded and the population std of the last k is < threshold, at
    most max_epochs passes
  then local SGD from Theta_hat with the round's batches (alpha = the
  spec's eta); Theta <- sum_i (n_i / sum_j n_j) Theta_i.
  fedala.ala_clients = all (PFLlib serverala.py:73-74): first ALA on
  every client, ascending id, each client's Theta_i replaced by its
  Theta_hat (a client outside the round too: its W_i learned, its start
  phase spent); then the participants train from their Theta_i.  The
  round's personal lists: the participants' first, then the other
  clients' in ascending id.

Records, in the reference's order: round_begin "w"; per participant note
"ala_epochs" ([passes], 0 without ALA), note "W_i" (P; 1 off the range),
client_begin "theta_i" (Theta_hat), a step per batch, client_end; server
"w".  Under fedala.ala_clients = all the notes come first, for every
client ascending, with a note "theta_hat" (its new Theta_i) for each
client outside the round, then the participants' client_begin ... end.
Final: w and v = every client's latest Theta_hat (Alg. 1 l. 19 returns the
Theta_hat_i, the models after ALA and before local training): that of the
last round the client ran ALA in (every round under fedala.ala_clients =
all), Theta_hat = Theta_i where ALA did nothing (the first round, a
sum_first return), and w0 (l. 1: Theta_i^0 = Theta^0) for a client that
never took part.  The authors' and PFLlib's servers evaluate the clients'
models right after send_models (ALA) and before training
(serverALA.py:45-50, serverala.py:26-31): Theta_hat too.

Bugs (replay(spec, bugs)):
  clip-none, clip-upper-only, clip-lower-only   the clip to [0, 1]
  w-grad-no-diff   the W step without the factor (Theta - Theta_i)
  w-grad-sign      W + eta g * diff
  w-eta-alpha      the W step with the local learning rate
  hat-swap         Theta_hat = Theta + (Theta_i - Theta) * W
  hat-stale        Theta_hat not re-formed within a pass
  lower-local      the layers below the range keep Theta_i
  range-bottom     p counted from the input
  p-flip           fedala.p_unit read the other way
  start-never      no start phase (one pass always)
  start-every      the start phase in every round
  start-flip       fedala.start read the other way (round2: the start
                   phase in round 1 only, counted from 0, a client first
                   in round 2 or later getting one pass; own: in each
                   client's first ALA)
  stop-ddof1       the sample standard deviation
  stop-window-all  the std of every recorded loss
  stop-at-k        stops with k losses (>= k, not > k)
  stop-le          stops when the std equals the threshold (<=, not <)
  loss-mean        the recorded loss is the mean over the pass's batches
  skip-flip        fedala.skip read the other way
  w-reset          W_i back to ones in every round
  ala-clients-flip fedala.ala_clients read the other way
  outsider-keeps   under all, a client outside the round learns W_i but
                   keeps its Theta_i (Theta_hat not written back)
  outsider-no-start  under all, a client outside the round does not spend
                   its start phase
  uniform-weights  the server's mean is uniform
  step-extra       one local step more (the first batch again)
  batch-sum        passes through to pflref_exact's gradient
  lr-ignored, lr-shifted, lr-per-round   pflref_exact.round_factor's
  lr-ala-decayed   under lr.*, η_ALA (the W step) decays with alpha
  report-trained   v = every Theta_i after its last local training (the
                   trained model), not the latest Theta_hat (l. 19)
  ala-mode-train   fedala.ala_mode = pfllib's passes in training mode
  ala-mode-moves-buffers  an evaluation-mode pass moving the statistics
  eval-gap-ignored fedala.eval_gap read as 1 (an evaluation every round)

Batch normalisation (a layer list of dense, relu, identity and
batchnorm1d layers with a squared loss, pflref_exact.Problem's layer view:
its gradients and running-statistics moves are pflref_exact_layers.Model's
in 60-digit decimals, converted exactly).  Only under bn.aggregate =
parameters_only (the presets official, pfllib and pfllib_run set it),
the authors' and PFLlib's reading:
  - ALA touches parameters() only (ALA.py:78-79, :86-87, :158-159): the
    range, p (layers holding parameters, or parameter tensors) and the
    sum_first test (params[0]) skip the buffers r_mu, r_v, and Theta_hat's
    buffers are Theta_i's own;
  - the weight-learning passes run a deepcopy of the client's model in
    training mode (train() was its last mode): every batch normalises with
    its own statistics, so the W step never reads r_mu, r_v, and the
    statistics the copy moves are dropped with it;
  - the local steps move Theta_i's buffers (bn.running, bn.running_var:
    pflref_exact.local_sgd through Problem.move_running);
  - the server averages the parameters; Theta's buffers are the first
    participant's (serverALA.py:118, deepcopy(uploaded_models[0])).
BN bugs: start-global-buffers (Theta_hat takes Theta's r_mu, r_v),
  start-w0-buffers (w0's), global-buffers-averaged, global-buffers-last,
  ala-moves-buffers (the statistics of ALA's passes kept in Theta_hat),
  p-counts-buffers (under tensors, p counts r_mu, r_v as tensors),
  running-frozen (pflref_exact's: the local steps never move them).

Client optimizer (opt.*; docs/optimizers.md, "Where the state lives":
FedALA's slot 0): the local training's steps (Alg. 1 l. 16) go through
pflref_exact_optim.Optimizers when the spec sets any opt.* (a new state
per client update under opt.state = reset, the client's kept one under
client, one carried from client to client under server; the spec's split
for opt.decay_scope = shared | personal), its carried state rounded to 60
digits after each update as the models are; ALA's W_i steps (Eq. (5))
are the paper's own plain steps, never the optimizer's.  Its bugs
(pflref_exact_optim's) pass through.

Learning-rate decay (lr.*; PFLlib clientala.py:48-49 steps the client's
ExponentialLR after its train()): the local SGD's alpha (the spec's eta)
is alpha c in client i's update of round t, c = pflref_exact.round_factor
(gamma^k, k = t or, under lr.count = trainings, the rounds i trained in
before), exactly.  ALA's eta is a float handed to utils/ALA.py once
(clientala.py:12, :17-18; ALA.py:135 steps W with self.eta, its
optimizer has lr = 0 and never steps): it does not decay.
"""
from decimal import Decimal, localcontext
from fractions import Fraction

import pflref_exact as px
import pflref_exact_optim as po
from pflref_golden import Trace, exact

ALGORITHM = "fedala"
DIGITS = 60
SWITCHES = {"fedala.skip": ["first_round", "sum_first"],
            "fedala.p_unit": ["layers", "tensors"],
            "fedala.ala_clients": ["participants", "all"],
            "fedala.start": ["round2", "own"],
            "fedala.ala_mode": ["train", "pfllib"],
            "bn.aggregate": ["average", "parameters_only"]}
PRESETS = {
    # TsingZ0/FedALA a7a9b2134285 system/utils/ALA.py:82, :86, :95
    # and serverALA.py:111-123 (parameters() only, a deepcopy of the first
    # upload)
    # (and :52, :155: each client's own start_phase flag)
    "official": {"fedala.skip": "sum_first", "fedala.p_unit": "tensors",
                 "fedala.start": "own", "bn.aggregate": "parameters_only"},
    # TsingZ0/PFLlib d832e76f6a23 system/utils/ALA.py (the same lines),
    # clients/clientala.py:48-49
    # serverbase.py:138-150, clientbase.py:67-69 (parameters() only)
    # serverala.py:26-31, clientbase.py:84, :126, clientala.py:23 (the
    # passes in evaluation mode after an evaluation without training)
    "pfllib": {"fedala.skip": "sum_first", "fedala.p_unit": "tensors",
               "fedala.start": "own", "lr.count": "trainings",
               "fedala.ala_mode": "pfllib", "bn.aggregate": "parameters_only"},
    # the same and servers/serverala.py:73-74 (ALA on every client)
    # req: fedala.preset.pfllib_run
    "pfllib_run": {"fedala.skip": "sum_first", "fedala.p_unit": "tensors",
                   "fedala.start": "own", "fedala.ala_clients": "all", "lr.count": "trainings",
                   "fedala.ala_mode": "pfllib", "bn.aggregate": "parameters_only"},
}
MUTANTS = {
    "fedala-clip": ["clip-none", "clip-upper-only", "clip-lower-only"],
    "fedala-w-gradient": ["w-grad-no-diff", "w-grad-sign", "w-eta-alpha"],
    "fedala-theta-hat": ["hat-swap", "hat-stale"],
    "fedala-lower-layers": ["lower-local"],
    "fedala-range": ["range-bottom", "p-flip"],
    "fedala-start-phase": ["start-never", "start-every", "start-flip"],
    "fedala-stop-rule": ["stop-ddof1", "stop-window-all", "stop-at-k",
                         "loss-mean", "stop-le"],
    "fedala-skip": ["skip-flip"],
    "fedala-w-state": ["w-reset"],
    "fedala-ala-clients": ["ala-clients-flip", "outsider-keeps",
                           "outsider-no-start"],
    "aggregation-weights": ["uniform-weights"],
    "local-step-count": ["step-extra"],
    "batch-mean": ["batch-sum"],
    "lr-schedule": ["lr-ignored", "lr-shifted", "lr-ala-decayed"],
    "lr-count": ["lr-per-round"],
    "bn-own-buffers": ["start-global-buffers", "start-w0-buffers"],
    "bn-global-buffers": ["global-buffers-averaged", "global-buffers-last"],
    "fedala-bn-ala-passes": ["ala-moves-buffers", "p-counts-buffers"],
    "bn-running-frozen": ["running-frozen"],
    "fedala-reported-model": ["report-trained"],
    "fedala-ala-mode": ["ala-mode-train", "ala-mode-moves-buffers"],
    "fedala-eval-gap": ["eval-gap-ignored"],
}
LAYER_TYPES = ("dense", "relu", "identity", "batchnorm1d")
DEFAULTS = {"fedala.threshold": Fraction(1, 10), "fedala.k": 10,
            "fedala.max_epochs": 1000, "fedala.eval_gap": 1}


def has_bn(model):
    return model["kind"] == "layers" and any(
        L["type"].startswith("batchnorm") for L in model["layers"])


def supported(spec):
    """The specs replay() runs: a regression linear or mlp model, or a
    regression layer list of LAYER_TYPES (with batch normalisation under
    bn.aggregate = parameters_only only), on inline clients, a given
    schedule."""
    m = spec["model"]
    if m["kind"] == "layers":
        ok = (m.get("loss") in ("squared", "half_squared")
              and all(L["type"] in LAYER_TYPES for L in m["layers"]))
        if ok and has_bn(m):
            ok = settings(spec["algorithm"])[1]["bn.aggregate"] \
                == "parameters_only"
    else:
        ok = m["kind"] in ("linear", "mlp")
    return (spec["algorithm"]["name"] == ALGORITHM and ok
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def settings(algorithm):
    """(hyperparameters as exact values or counts, switches)."""
    sw = {name: values[0] for name, values in SWITCHES.items()}
    sw.update(PRESETS.get(algorithm.get("preset", "paper"), {}))
    sw.update(algorithm.get("switches", {}))
    hp = dict(DEFAULTS)
    for key, v in algorithm["hyperparameters"].items():
        hp[key] = v if key in ("fedala.p", "fedala.k", "fedala.max_epochs",
                               "fedala.eval_gap") else exact(v)
    return hp, sw


def tidy(xs):
    """Each value rounded to DIGITS significant decimal digits (correctly
    rounded), as the exact fraction of that decimal: the mlp's products
    would otherwise double the digits of every value at every step."""
    out = []
    with localcontext() as ctx:
        ctx.prec = DIGITS
        for x in xs:
            out.append(Fraction(Decimal(x.numerator) / Decimal(x.denominator)))
    return out


def blocks(pr, bugs=frozenset()):
    """The model's parameter tensors from the input: (offset, size, layer)
    with layer 0 the input layer (a layer list: its layers holding
    parameters, counted; r_mu, r_v are buffers, not parameters(), unless
    the bug p-counts-buffers lists them as tensors of their layer)."""
    if pr.kind == "layers":
        out, ordinal = [], {}
        for b, o in pr.layers.block_offsets():
            if b["is_buffer"] and "p-counts-buffers" not in bugs:
                continue
            ordinal.setdefault(b["layer"], len(ordinal))
            out.append((o, b["size"], ordinal[b["layer"]]))
        return out
    if pr.kind == "linear":
        out = [(0, pr.d, 0)]
        if pr.bias:
            out.append((pr.d, 1, 0))
        return out
    h, d, k = pr.h, pr.d, pr.k
    out, o = [(0, h * d, 0)], h * d
    if pr.hidden_bias:
        out.append((o, h, 0))
        o += h
    out.append((o, k * h, 1))
    o += k * h
    if pr.bias:
        out.append((o, k, 1))
    return out


def ala_range(pr, p, unit, bugs):
    """The entries ALA weighs: the top p layers or tensors (tensors: p = 0,
    every tensor)."""
    bl = blocks(pr, bugs)
    if unit == "tensors":
        chosen = bl if p == 0 else bl[len(bl) - p:]
        if "range-bottom" in bugs:
            chosen = bl if p == 0 else bl[:p]
    else:
        top = max(b[2] for b in bl)
        layers = set(range(top - p + 1, top + 1))
        if "range-bottom" in bugs:
            layers = set(range(p))
        chosen = [b for b in bl if b[2] in layers]
    mark = [False] * pr.P
    for off, size, _ in chosen:
        for q in range(off, off + size):
            mark[q] = q not in pr.buffers    # buffers are never weighed
    return mark


def predict(pr, c, theta, j):
    """y-hat of sample j of client c."""
    x = c["X"][j]
    if pr.kind == "linear":
        b = theta[pr.d] if pr.bias else Fraction(0)
        return sum(x[q] * theta[q] for q in range(pr.d)) + b
    W1, b1, W2, b2 = pr._mlp_params(theta)
    phi = [pr._sigma(a) for a in pr._hidden(x, W1, b1)]
    return b2[0] + sum(W2[0][u] * phi[u] for u in range(pr.h))


def batch_loss(pr, k, theta, batch, train=True):
    """L(theta; b): the batch mean of (y-hat - y)^2 (squared) or half (a
    layer list: its training-mode forward, the batch's statistics; train =
    False: its evaluation-mode forward, theta's running statistics)."""
    c = pr.clients[k]
    if pr.kind == "layers":
        M, data = pr.layers, c["data"]
        th = [M.D.num(x) for x in theta]
        loss = M.batch_loss(th, [data.X[j] for j in batch],
                            [data.y[j] for j in batch], train)
        return Fraction(loss)
    s = Fraction(1) if pr.loss == "squared" else Fraction(1, 2)
    return s * sum((predict(pr, c, theta, j) - c["y"][j]) ** 2
                   for j in batch) / len(batch)


def std_below(losses, thr, ddof=0, le=False):
    """std(losses) < thr, as var < thr^2 (exact); le: <= (a bug)."""
    n = len(losses)
    mean = sum(losses) / n
    var = sum((x - mean) ** 2 for x in losses) / (n - ddof)
    return var <= thr * thr if le else var < thr * thr


def clip(x, bugs):
    if "clip-none" in bugs:
        return x
    if "clip-upper-only" not in bugs and x < 0:
        x = Fraction(0)
    if "clip-lower-only" not in bugs and x > 1:
        x = Fraction(1)
    return x


def hat_of(theta_g, theta_i, W, rng, bugs, own=frozenset()):
    """Eq. (3) on the range, Theta below it; own: the entries (r_mu, r_v)
    that stay Theta_i's."""
    out = []
    for q in range(len(theta_g)):
        if q in own:
            out.append(theta_i[q])
        elif not rng[q]:
            out.append(theta_i[q] if "lower-local" in bugs else theta_g[q])
        elif "hat-swap" in bugs:
            out.append(theta_g[q] + (theta_i[q] - theta_g[q]) * W[q])
        else:
            out.append(theta_i[q] + (theta_g[q] - theta_i[q]) * W[q])
    return out


def grad(pr, i, theta, batch, bugs, train):
    """The batch gradient at theta, in training mode or (train = False, a
    layer list) evaluation mode: batch normalisation on theta's running
    statistics, held fixed (torch's eval(); a model without batch
    normalisation has one gradient)."""
    if train or pr.kind != "layers":
        return pr.grad(i, theta, batch, bugs)
    import pflref_exact_layers as pl
    return pl.grad_exact(pr.layers, pr.clients[i]["data"], theta, batch,
                         bugs, train=False)


def ala_pass(pr, i, hat, theta_g, theta_i, W, rng, passes, hp, bugs,
             own=frozenset(), train=True):
    """One pass over D_i^s: (Theta_hat, W, the recorded loss); train =
    False: model_t in evaluation mode (fedala.ala_mode = pfllib)."""
    eta = hp["eta"] if "w-eta-alpha" in bugs else hp["fedala.eta"]
    start = list(hat)
    losses = []
    for batch in passes:
        at = start if "hat-stale" in bugs else hat
        g = grad(pr, i, at, batch, bugs, train)
        losses.append(batch_loss(pr, i, at, batch, train))
        for q in range(pr.P):
            if not rng[q]:
                continue
            diff = 1 if "w-grad-no-diff" in bugs else theta_g[q] - theta_i[q]
            step = eta * g[q] * diff
            # req: fedala.eq5
            W[q] = clip(W[q] + step if "w-grad-sign" in bugs
                        else W[q] - step, bugs)
        W[:] = tidy(W)
        moved = hat
        if "ala-moves-buffers" in bugs or (
                "ala-mode-moves-buffers" in bugs and not train):
            # model_t's statistics kept (ala-mode-moves-buffers: an
            # evaluation-mode pass moving them, as a training pass would)
            moved = pr.move_running(i, at, batch, bugs)
            theta_i = [moved[q] if q in own else x
                       for q, x in enumerate(theta_i)]
        hat = tidy(hat_of(theta_g, theta_i, W, rng, bugs, own))
    loss = sum(losses) / len(losses) if "loss-mean" in bugs else losses[-1]
    return hat, W, loss


def stop(losses, hp, bugs, margins):
    """The start phase's rule after a pass (ALA.py:150); margins gets
    var / threshold^2 of each test the correct run makes."""
    k = hp["fedala.k"]
    enough = len(losses) >= k if "stop-at-k" in bugs else len(losses) > k
    if not enough:
        return False
    window = losses if "stop-window-all" in bugs else losses[-k:]
    thr = hp["fedala.threshold"]
    if not bugs:
        mean = sum(window) / len(window)
        var = sum((x - mean) ** 2 for x in window) / len(window)
        margins.append(var / (thr * thr))
    return std_below(window, thr, 1 if "stop-ddof1" in bugs else 0,
                     "stop-le" in bugs)


def ala(pr, i, t, theta_g, theta_i, W, rng, passes, state, hp, sw, bugs,
        own=frozenset()):
    """ALA for client i: (Theta_hat, passes made); own: the entries that
    stay Theta_i's (r_mu, r_v)."""
    skip = sw["fedala.skip"]
    if "skip-flip" in bugs:
        skip = "sum_first" if skip == "first_round" else "first_round"
    if t == 0:
        return list(theta_i), 0
    if skip == "sum_first":
        first = blocks(pr)[0]
        if sum(theta_g[q] - theta_i[q]
               for q in range(first[0], first[0] + first[1])) == 0:
            return list(theta_i), 0
    # req: fedala.alg1.l15
    hat = hat_of(theta_g, theta_i, W, rng, bugs, own)
    # Alg. 1 l. 8: the start stage when t = 2 (round 1 counted from 0);
    # fedala.start = own: in the client's first ALA (ALA.py:52, :155)
    own_start = sw["fedala.start"] == "own"
    if "start-flip" in bugs:
        own_start = not own_start
    start_phase = i not in state["started"] if own_start else t == 1
    # fedala.ala_mode = pfllib: evaluate() after send_models in the rounds
    # e = 0, g, 2g, ... (g = fedala.eval_gap, PFLlib's -eg; serverala.py:28)
    # left every client in eval() (clientbase.py:84, :126); a train()
    # after it (clientala.py:23; a round trains after its evaluation) set
    # train() again, and ALA.py:91's deepcopy keeps the mode: evaluation
    # mode when the last evaluation, g floor((t - 1)/g), is later than the
    # client's last training (-1: never)
    g = 1 if "eval-gap-ignored" in bugs else hp["fedala.eval_gap"]
    last_eval = g * ((t - 1) // g)
    train = not (sw["fedala.ala_mode"] == "pfllib"
                 and "ala-mode-train" not in bugs
                 and last_eval > state["last_trained"].get(i, -1))
    if not train:
        state["eval_passes"].append((t, i))
    if "start-never" in bugs:
        start_phase = False
    if "start-every" in bugs:
        start_phase = True
    losses = []
    # req: fedala.alg1.l8_11, fedala.alg1.l12_14
    while True:
        hat, W, loss = ala_pass(pr, i, hat, theta_g, theta_i, W, rng,
                                passes, hp, bugs, own, train)
        losses.append(loss)
        if not start_phase or stop(losses, hp, bugs, state["margins"]):
            break
        if len(losses) >= hp["fedala.max_epochs"]:
            break
    if not ("outsider-no-start" in bugs and i in state.get("outside", ())):
        state["started"].add(i)
    state["epochs"].append(len(losses))
    return hat, len(losses)


def server(pr, local, bugs, first=None):
    """Alg. 1 l. 18: Theta <- sum (n_i / sum n_j) Theta_i; first (under
    bn.aggregate = parameters_only): the participant whose r_mu, r_v
    Theta takes."""
    # req: fedala.alg1.l18
    m_t = sum(pr.n(i) for i in local)
    c = {i: (Fraction(1, len(local)) if "uniform-weights" in bugs
             else Fraction(pr.n(i), m_t)) for i in local}
    out = [sum(c[i] * local[i][q] for i in sorted(local))
           for q in range(pr.P)]
    if first is not None and "global-buffers-averaged" not in bugs:
        for q in pr.buffers:
            out[q] = local[first][q]
    return out


def replay(spec, bugs=frozenset(), state=None):
    """The spec (given schedule) run: (trace, w, v, None), v every
    client's latest Theta_hat (l. 19).  state (a dict, optional) receives
    "epochs" (passes of every ALA run, in order), "W" (the final W_i) and
    "trained" (every Theta_i after its last local training)."""
    bugs = frozenset(bugs)
    hp, sw = settings(spec["algorithm"])
    unit = sw["fedala.p_unit"]
    if "p-flip" in bugs:
        unit = "tensors" if unit == "layers" else "layers"
    pr = px.Problem(spec["model"], spec["problem"]["clients"])
    pr.bn_switches(sw)
    w = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    w0 = list(w)
    # bn.aggregate = parameters_only: r_mu, r_v stay each client's own
    keep = bool(pr.buffers) and sw["bn.aggregate"] == "parameters_only"
    own = pr.buffers if keep else frozenset()
    N = len(pr.clients)
    # req: fedala.alg1.l1
    V = [list(w) for _ in range(N)]
    # req: fedala.alg1.l19
    # the reported models: each client's latest Theta_hat (Theta^0 before
    # its first ALA, l. 1)
    reported = [list(w) for _ in range(N)]
    # req: fedala.alg1.l2
    Ws = [[Fraction(1)] * pr.P for _ in range(N)]
    rng = ala_range(pr, hp["fedala.p"], unit, bugs)
    st = state if state is not None else {}
    st.setdefault("started", set())
    st.setdefault("epochs", [])
    st.setdefault("margins", [])
    st.setdefault("eval_passes", [])
    st["last_trained"] = {}      # the last round each client trained in
    trace = Trace()
    # req: fedala.alg1.l3, fedala.alg1.l4_5
    every = sw["fedala.ala_clients"] == "all"
    if "ala-clients-flip" in bugs:
        every = not every
    # lr.*: the keys pflref_exact.round_factor reads; trained: each
    # client's train() calls so far
    decay = {"switches": sw, "hyperparameters":
             spec["algorithm"]["hyperparameters"]}
    trained = [0] * N
    # opt.*: the local training's optimizer (slot 0; docs/optimizers.md,
    # "Where the state lives"), None without opt.* (the plain steps);
    # opt.decay_scope = shared | personal reads the spec's split
    personal = None
    if "split" in spec:
        import pflref_exact_pfl as pp
        personal = pp.personal_mask(spec["model"], spec["split"]["personal"])
    opt = po.for_spec(spec, pr, 1, personal, bugs)

    def factor(t, i):
        return px.round_factor(decay, t, bugs, trained=trained[i])

    def hp_ala(t, i):
        # the bug lr-ala-decayed: η_ALA scaled as alpha is
        if "lr-ala-decayed" not in bugs:
            return hp
        return dict(hp, **{"fedala.eta": hp["fedala.eta"] * factor(t, i)})
    def held(i):
        # Theta_i, its r_mu, r_v replaced under the bugs start-*-buffers
        if not own or not ({"start-global-buffers", "start-w0-buffers"}
                           & bugs):
            return V[i]
        src = w0 if "start-w0-buffers" in bugs else w
        return [src[q] if q in own else x for q, x in enumerate(V[i])]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        trace.emit("round_begin", "train", t, None, None, "w", w)
        outside = [i for i in range(N) if i not in rnd["clients"]]
        order = list(rnd["clients"]) + (outside if every else [])
        personal = dict(zip(order, rnd.get("personal", [None] * N)))
        local = {}
        hats = {}
        if every:
            # serverala.py:73-74: ALA on every client before training
            st["outside"] = set(outside)
            for i in range(N):
                if "w-reset" in bugs:
                    Ws[i] = [Fraction(1)] * pr.P
                hat, e = ala(pr, i, t, w, held(i), Ws[i], rng,
                             personal.get(i), st, hp_ala(t, i), sw, bugs,
                             own)
                trace.emit("note", "train", t, i, None, "ala_epochs",
                           [Fraction(e)])
                trace.emit("note", "train", t, i, None, "W_i", Ws[i])
                hats[i] = hat
                reported[i] = hat
                if i in outside:
                    if "outsider-keeps" not in bugs:
                        V[i] = hat
                    trace.emit("note", "train", t, i, None, "theta_hat",
                               V[i])
        # req: fedala.alg1.l6
        for i, steps in zip(rnd["clients"], rnd["batches"]):
            if every:
                hat = hats[i]
            else:
                if "w-reset" in bugs:
                    Ws[i] = [Fraction(1)] * pr.P
                # req: fedala.alg1.l7
                hat, e = ala(pr, i, t, w, held(i), Ws[i], rng,
                             personal.get(i), st, hp_ala(t, i), sw, bugs,
                             own)
                trace.emit("note", "train", t, i, None, "ala_epochs",
                           [Fraction(e)])
                trace.emit("note", "train", t, i, None, "W_i", Ws[i])
                reported[i] = hat
            trace.emit("client_begin", "train", t, i, 0, "theta_i", hat)
            if "step-extra" in bugs:
                steps = list(steps) + list(steps[:1])
            # req: fedala.alg1.l16
            alpha = hp["eta"] * factor(t, i)            # lr.*
            trained[i] += 1
            if opt is not None:
                opt.begin(i)
            V[i] = tidy(px.local_sgd(
                pr, i, hat, steps, alpha, trace, "train", t, "theta_i",
                bugs=bugs, opt=None if opt is None else opt.stepper(i, 0)))
            if opt is not None:
                # the state a later update reads, at 60 digits too (a
                # carried buffer would otherwise grow its digits step by
                # step)
                ost = opt.state(i, 0)
                ost.b, ost.v = tidy(ost.b), tidy(ost.v)
            # req: fedala.alg1.l17
            trace.emit("client_end", "train", t, i, None, "theta_i", V[i])
            local[i] = V[i]
        first = None
        # req: fedala.bn
        if own and rnd["clients"]:
            # deepcopy(uploaded_models[0]) (serverALA.py:118)
            first = rnd["clients"][-1 if "global-buffers-last" in bugs
                                   else 0]
        w = tidy(server(pr, local, bugs, first))
        trace.emit("server", "train", t, None, None, "w", w)
        for i in rnd["clients"]:
            st["last_trained"][i] = t
    st["W"] = Ws
    st["trained"] = V
    return trace, w, (V if "report-trained" in bugs else reported), None
