# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_apple.py: APPLE for the NumPy candidate (pfl_numpy.py loads
it), written from Luo and Wu, "Adapt to Adaptation: Learning
Personalization for Cross-Silo Federated Learning" (IJCAI 2022, arXiv
2110.08394v3, Algorithm 1), not from pflref's C code.

Client i owns a core model w_i (every core starts at w⁰) and a directed
relationship vector p_i, which starts at p_0 = (n_1, ..., n_N) / n.  In a
round, each participant downloads the other clients' cores as the server
holds them when the round starts, and takes its scheduled minibatch
steps on
    L(w_i, p_i) = loss_i(sum_j p_ij w_j; batch) + lam(r) mu/2 |p_i - p_0|^2
moving only its own core and p_i, both from the same point:
    g      = grad loss_i(w_p; batch),  w_p = sum_j p_ij w_j
    w_i   <- w_i - eta p_ii g
    p_ij  <- p_ij - eta_p (w_j . g + lam(r) mu (p_ij - p_0j))
with lam(r) = (1 + cos(pi r / L)) / 2 while r < L, and 0 afterwards.
Its personalised model is sum_j p_ij w_j over what it holds at the end.
Switches:
  apple.scheduler = exponential   lam(r) = 0.001 ** (r / L) while r < L
  apple.prox = full               the term is lam mu |p_i - p_0|^2
  apple.p_init = uniform          p_i starts at 1/N
  apple.order = core_first        w_i moves before p_i's gradient
  apple.p_grad = block_mean       p_ij's data term is the mean over the
                                  parameter blocks of mean(w_j * g)
  apple.core_lr = n_eta           the core moves with N eta
  apple.lambda_round = previous   round r uses lam(r - 1), round 0 uses 1
  apple.upload = mixture          the core a participant keeps (and the
                                  others download next round) is the
                                  mixture its last step started from,
                                  which is also its personalised model
  apple.peers = sequential        the participants train one after the
                                  other in ascending id, and a later one
                                  downloads an earlier one's core as its
                                  last step left it
(preset official: exponential, full; preset pfllib: the five from
p_init to lambda_round; preset pfllib_run: pfllib, upload and peers,
PFLlib's APPLE.train() as shipped: clientapple.py:77 keeps a deep copy of
the mixture as model_c, and the server's list hands out the model_c
objects that each client steps in place while the others train after it).

A client optimizer (opt.*, pfl_numpy_optim): the authors' training script
builds one torch.optim.SGD per client update over the client's core and
p_i, with p_i in its own parameter group (its own learning rate eta_p),
so the optimizer steps the vector (w_i, p_i) on (p_ii g, dL/dp_i), the
core's blocks at eta_w and p_i (one tensor) at eta_p; its state lives as
opt.state says.  Clipping, a decay scope of a split and the core-first
order are not taken here.

Limited downloads (apple.M, the paper's M < N - 1 cores a round): a
round's "peers" names, per participant, the other clients whose cores it
downloads (the authors draw them in get_download_which; here they are
data).  Every client holds its own copy of every core, w0 to begin with;
a download overwrites the copy with the server's core of the round's
start, and a core not downloaded keeps the copy of its last download
(apple.stale = last_download, the authors' client model keeps it) or is
w0 again (initial).  A round without peers downloads every core.

Learning-rate decay (lr.*): the authors' script builds round r's
optimizer with lr_net * decay**r for the core and lr_coef * decay**r for
p_i, so in round t both eta and eta_p are scaled by gamma**t
(lr.schedule = exponential; step: gamma**(t // lr.step_rounds)).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "apple"
BUGS = ("apple-no-half-cos", "apple-no-cutoff", "apple-no-pii",
        "apple-prox-twice", "apple-p0-uniform", "apple-p-normalised",
        "apple-live-cores", "apple-train-others", "apple-wp-old-p",
        "apple-lambda-late", "apple-opt-p-plain", "apple-stale-fresh",
        "apple-lr-p-const")


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def _config(spec):
    base = _base()
    alg = spec["algorithm"]
    cfg = {"apple.scheduler": "cosine", "apple.prox": "half",
           "apple.p_init": "samples", "apple.order": "joint",
           "apple.p_grad": "inner", "apple.core_lr": "eta",
           "apple.lambda_round": "current", "apple.upload": "core",
           "apple.peers": "snapshot", "bn.aggregate": "average"}
    presets = {"official": {"apple.scheduler": "exponential",
                            "apple.prox": "full"},
               "pfllib": {"apple.p_init": "uniform",
                          "apple.order": "core_first",
                          "apple.p_grad": "block_mean",
                          "apple.core_lr": "n_eta",
                          "apple.lambda_round": "previous",
                          # clientapple.py:93-100: parameters() mixed only
                          "bn.aggregate": "parameters_only"}}
    presets["pfllib_run"] = dict(presets["pfllib"],
                                 **{"apple.upload": "mixture",
                                    "apple.peers": "sequential"})
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if preset not in presets:
            raise base.Unsupported("preset %r for apple" % preset)
        cfg.update(presets[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    for key, values in (("apple.upload", ("core", "mixture")),
                        ("apple.peers", ("snapshot", "sequential"))):
        if cfg[key] not in values:
            raise base.Unsupported("%s %r" % (key, cfg[key]))
    return cfg


def _lam(cfg, t, bug):
    """The loss scheduler's value for round t."""
    r = t
    if cfg["apple.lambda_round"] == "previous":
        if t == 0:
            return 1.0
        r = t - 1
    if bug == "apple-lambda-late":
        r += 1
    L = int(cfg["apple.L"])
    if r >= L and bug != "apple-no-cutoff":
        return 0.0
    if cfg["apple.scheduler"] == "exponential":
        return 0.001 ** (r / L)
    c = np.cos(np.pi * r / L)
    return c + 1.0 if bug == "apple-no-half-cos" else (c + 1.0) / 2.0


def _blocks(client, P):
    """The parameter blocks as (start, stop): the linear model's w and b,
    or the whole vector."""
    d = getattr(client, "d", None)
    if d is None or not getattr(client, "bias", False):
        return [(0, P)]
    return [(0, d), (d, P)]


def _param_blocks(spec):
    """A layer list's parameters() blocks as (start, stop), in state_dict
    order (its running statistics are buffers, which PFLlib's zip over
    parameters() never visits); None for the other models."""
    if spec["model"].get("kind") != "layers":
        return None
    return [(off, off + size)
            for name, off, size, _ in _base().model_blocks(spec["model"])
            if not (name.endswith("running_mean") or
                    name.endswith("running_var"))]


def _p_grad(cfg, client, held, g, p, p0, lam_mu, bug):
    twice = cfg["apple.prox"] == "full" or bug == "apple-prox-twice"
    out = np.empty(len(held))
    for j, w_j in enumerate(held):
        if cfg["apple.p_grad"] == "block_mean":
            parts = [np.mean(w_j[a:b] * g[a:b])
                     for a, b in (cfg.get("param_blocks") or
                                  _blocks(client, len(g)))]
            data = float(np.mean(parts))
        else:
            data = float(w_j @ g)
        out[j] = data + (2.0 if twice else 1.0) * lam_mu * (p[j] - p0[j])
    return out


class _Optimizers:
    """The client optimizers over (w_i, p_i) by opt.state, or None."""

    def __init__(self, spec, cfg, clients, P, N):
        base = _base()
        import pfl_numpy_optim as po
        self.po, self.cfg = po, po.options(spec)
        c = self.cfg
        if c["opt.decay_scope"] not in ("all", "weights"):
            raise base.Unsupported("apple with a split's opt.decay_scope")
        if cfg["apple.order"] != "joint":
            raise base.Unsupported("apple's optimizer with core_first")
        d = getattr(clients[0], "d", None)
        parts = _blocks(clients[0], P)
        names = ["w", "b"] if len(parts) == 2 else ["w"]
        self.blocks = [(n, a, b) for n, (a, b) in zip(names, parts)]
        self.blocks.append(("ps", P, P + N))
        self.decays = np.ones(P + N, dtype=bool)
        if c["opt.decay_scope"] == "weights" and d is not None and \
                len(parts) == 2:
            self.decays[parts[1][0]:parts[1][1]] = False   # the bias
        self.buffer = np.zeros(P + N, dtype=bool)
        self.on_w = np.arange(P + N) < P
        self.kept = {}

    def begin(self, i):
        life = self.cfg["opt.state"]
        if life == "reset":
            return self.po.Optimizer(self.cfg, self.blocks, self.decays,
                                     self.buffer)
        key = i if life == "client" else None
        if key not in self.kept:
            self.kept[key] = self.po.Optimizer(self.cfg, self.blocks,
                                               self.decays, self.buffer)
        return self.kept[key]


def _client(cfg, clients, i, held, p, p0, batches, lam, log, t, bug,
            opt=None, masks=None, keep=None, own=None):
    """Client i's local steps; returns (held cores, p_i, own, last), last
    the mixture the last step started from with the running statistics
    that step's pass left (None without steps).  keep/own: under
    bn.aggregate = parameters_only the running statistics' entries and
    client i's own values of them, which the mixture carries and each
    training pass moves."""
    N = len(held)
    eta, eta_p, mu = cfg["eta"], cfg["eta_p"], cfg["apple.mu"]
    eta_w = N * eta if cfg["apple.core_lr"] == "n_eta" else eta
    last = None
    for s, batch in enumerate(batches, start=1):
        w_p = sum(p[j] * held[j] for j in range(N))
        if keep is not None:
            w_p = np.where(keep, own, w_p)
        g = clients[i].grad(w_p, batch)
        if keep is not None:
            own = np.where(keep, _base().track(clients[i], w_p), own)
        last = w_p if keep is None else np.where(keep, own, w_p)
        if cfg["apple.order"] == "joint":
            dp = _p_grad(cfg, clients[i], held, g, p, p0, lam * mu, bug)
        scale = 1.0 if bug == "apple-no-pii" else p[i]
        if opt is not None:             # one torch step, two groups
            P = len(held[i])
            x = np.concatenate([held[i], p])
            # clip_grad_norm_ once over both groups (w_i's blocks and ps),
            # then each group's rule at its own step size
            dx = opt.clip(np.concatenate([scale * g, dp]))
            x = opt.step(x, dx, eta_w, masks, clipped=True)
            if bug == "apple-opt-p-plain":
                x[P:] = p - eta_p * dp
            else:
                x = opt.step(x, dx, eta_p, ~masks, clipped=True)
            held = [w.copy() for w in held]
            held[i], p = x[:P], x[P:]
            log("step", "train", "w_i", held[i], round=t, client=i, step=s)
            log("step", "train", "p_i", p, round=t, client=i, step=s)
            continue
        new = [w.copy() for w in held]
        new[i] = held[i] - eta_w * scale * g
        if bug == "apple-train-others":
            for j in range(N):
                if j != i:
                    new[j] = held[j] - eta * p[j] * g
        held = new
        if cfg["apple.order"] == "core_first":
            dp = _p_grad(cfg, clients[i], held, g, p, p0, lam * mu, bug)
        p = p - eta_p * dp
        if bug == "apple-p-normalised":
            p = p / p.sum()
        log("step", "train", "w_i", held[i], round=t, client=i, step=s)
        log("step", "train", "p_i", p, round=t, client=i, step=s)
    return held, p, own, last


def run(spec, clients, w0, log, bug):
    cfg = _config(spec)
    N = len(clients)
    sizes = np.array([float(c.n) for c in clients])
    p0 = sizes / sizes.sum()
    start = np.full(N, 1.0 / N) if cfg["apple.p_init"] == "uniform" else p0
    if bug == "apple-p0-uniform":
        p0 = np.full(N, 1.0 / N)
    cores = [np.array(w0, dtype=float) for _ in clients]
    ps = [start.copy() for _ in clients]
    # bn.aggregate = parameters_only (PFLlib): each client's mixture keeps
    # its own running statistics, w0's at the start
    base = _base()
    keep = base.kept_buffers(cfg, clients)
    own = [np.array(w0, dtype=float) for _ in clients]
    cfg["param_blocks"] = _param_blocks(spec)
    opts = None
    base = _base()
    if not base.pfl_numpy_optim.plain(base.pfl_numpy_optim.options(spec)):
        opts = _Optimizers(spec, cfg, clients, len(cores[0]), N)
    limited = cfg.get("apple.M") is not None
    scope = cfg.get("lr.scope", "all")     # eta_p: η_p alone decays
    if scope not in ("all", "eta_p"):
        raise base.Unsupported("apple with lr.scope %r" % scope)
    decay = {"lr.schedule": cfg.get("lr.schedule", "constant"),
             "lr.gamma": cfg.get("lr.gamma"),
             "lr.step_rounds": cfg.get("lr.step_rounds")}
    stale = cfg.get("apple.stale", "last_download")
    if stale not in ("last_download", "initial"):
        raise base.Unsupported("apple.stale %r" % stale)
    # each client's copies of the cores (limited downloads)
    mine = [[np.array(w0, dtype=float) for _ in clients] for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        server = [w.copy() for w in cores]
        lam = _lam(cfg, t, bug)
        # round t's step sizes (lr.*): both decay with the round
        c = base.lr_factor(decay, t)
        cfg_t = dict(cfg, eta=cfg["eta"] * (1.0 if scope == "eta_p" else c),
                     eta_p=cfg["eta_p"] * (1.0 if bug == "apple-lr-p-const"
                                           else c))
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        lists = dict(zip(rnd["clients"], rnd["peers"])) \
            if "peers" in rnd else None
        for i in sorted(plan):
            source = cores if bug == "apple-live-cores" else server
            held = [source[j].copy() if j != i else cores[i].copy()
                    for j in range(N)]
            if limited:
                for j in range(N):
                    if j == i:
                        continue
                    if lists is None or j in lists[i] or \
                            bug == "apple-stale-fresh":
                        mine[i][j] = source[j].copy()
                    elif stale == "initial":
                        mine[i][j] = np.array(w0, dtype=float)
                    held[j] = mine[i][j].copy()
            log("note", "train", "lambda", np.array([lam]), round=t,
                client=i)
            log("client_begin", "train", "w_i", cores[i], round=t,
                client=i, step=0)
            p_old = ps[i].copy()
            held, ps[i], own[i], last = _client(
                cfg_t, clients, i, held, ps[i], p0, plan[i], lam, log, t,
                bug, opts and opts.begin(i), opts and opts.on_w, keep,
                own[i])
            cores[i] = held[i]
            if cfg["apple.peers"] == "sequential":
                # the server's list holds the object client i stepped:
                # the participants after it download the stepped core
                server[i] = held[i].copy()
            mixed = cfg["apple.upload"] == "mixture" and last is not None
            if mixed:           # model_c = a copy of the last mixture
                cores[i] = last
            log("client_end", "train", "w_i", cores[i], round=t, client=i)
            log("note", "train", "p_i", ps[i], round=t, client=i)
            mixer = p_old if bug == "apple-wp-old-p" else ps[i]
            w_p = last if mixed else \
                sum(mixer[j] * held[j] for j in range(N))
            if keep is not None:
                w_p = np.where(keep, own[i], w_p)
            log("note", "train", "w_p", w_p, round=t, client=i)
    return {"v": np.array(cores)}
