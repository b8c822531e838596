#!/usr/bin/python3
"""pfl_numpy.py: an independent NumPy candidate for pflref's golden vectors.

Written from the papers and the specification notes (shared/spec notes §1,
§2, §3 and §5.1; the PFLEGO, FedAlt and FedSim notes), not from pflref's C
code:

  fedavg    McMahan et al., AISTATS 2017, Algorithm 1 (switch fedavg.weights;
            the learning-rate decay lr.*, counted per round or, lr.count =
            trainings, per client as PFLlib does; preset pfllib)
  local     every client trains its own v_i from w0; nothing is communicated
            (lr.* as fedavg; preset pfllib)
  finetune  FedAvg rounds, then per client θ_i ← w and
            θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w))   (notes §5.1)
  prox      pFedMe's inner loop alone: K steps per batch of
            θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ) toward the fixed w = w0,
            and the exact proximal point θ̂ of each batch      (notes §2(c))
  pfedme    Dinh et al., NeurIPS 2020, Algorithm 1, with the switches
            pfedme.* and the presets official / pfllib          (notes §2)
            (lr.* as fedavg, lr.scope = eta_p decaying η_p only)
  ditto     Li et al., ICML 2021, Algorithm 1 with FedAvg as the global
            solver, with the switches ditto.* and the presets   (notes §3)
            (lr.* as fedavg, on both passes)
  fedalt    Pillutla et al., ICML 2022, Algorithm 4 (LocalAlt), the switches
  fedsim    pfl.* and the presets fedrep (fedalt), fedper, lg_fedavg and
            fedbabu (fedsim) and their _pfllib versions; Algorithm 5
            (LocalSim) for fedsim
  pflego    Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848: cached
            features, τ − 1 cheap head steps, one joint gradient, the last
            head step and the server's θ step, with the switches pflego.*

on the quadratic and linear models, the mlp with the identity activation
(k = 1 with a squared loss, or k ≥ 2 with cross-entropy) and the layer
lists ("kind": "layers": dense, conv2d, pooling, activations, batchnorm;
pfl_numpy_layers.py).  fedavg, local, finetune, fedbn, ditto (both solvers),
fedalt and fedsim step with the client optimizers opt.* (torch's SGD with
momentum, Nesterov, Adam, AdamW, weight decay, clipping; pfl_numpy_optim.py),
lora on its adapter, pfedme and prox in their inner solver (θ's steps).  It
replays the vector's given schedule (client sets and minibatch index lists)
and writes a pflref-result/1 file with the final state and every trajectory
record, for `pflref check`.

usage: pfl_numpy.py VECTOR.json -o RESULT.json [--bug NAME]
       pfl_numpy.py --all GOLDEN_DIR -o OUTDIR [--bug NAME]

--bug NAME switches on one deliberate, realistic bug from the catalogue
tests/detection/bugs.json, to show that `pflref check` catches it.
"""
import argparse
import json
import os
import sys

import numpy as np

BUG = None          # the --bug switch; None = the correct algorithm
BUGS = ("uniform-weights", "weights-over-all-K", "delta-without-w_t",
        "dropout-not-rescaled", "dropout-off-in-training",
        "stale-model-unsampled", "one-step-fewer", "one-step-extra",
        "ragged-batch-dropped", "batch-grad-summed", "squared-loss-no-2",
        "bias-not-updated", "start-from-w0", "local-model-aliases-global",
        "unsampled-client-trains", "local-reset-each-round",
        "ft-prox-sign", "ft-prox-half", "ft-prox-to-w0", "ft-moves-shared",
        "ft-from-w0", "ft-eta-train", "ft-reports-global",
        "pfedme-prox-sign", "pfedme-theta-reset-ignored",
        "pfedme-theta-always-reset", "pfedme-beta-ignored",
        "pfedme-personal-is-local-w", "pfedme-personal-is-global",
        "pfedme-mu-missing", "pfedme-train-only-sampled",
        "pfedme-inner-opt-per-solve", "pfedme-inner-opt-kept",
        "pfedme-bn-stats-of-w", "pfedme-bn-stats-frozen",
        "ditto-moving-ref", "ditto-v-reset", "ditto-unsampled-v-updated",
        "ditto-prox-half", "prox-start-at-zero",
        "pfl-stateful-reset", "pfl-stateless-keeps-v", "fedsim-sequential",
        "fedalt-u-first", "fedalt-stale-v", "pfl-finetune-personal-only",
        "pfl-finetune-from-global", "pfl-finetune-lr-undecayed",
        "pflego-missing-ip-factor", "pflego-weights-sampled-set",
        "pflego-features-every-step", "pflego-head-alpha",
        "pflego-cheap-steps-tau", "bn-stats-averaged-not-kept",
        "pflego-opt-body-moves")


class Unsupported(Exception):
    """The vector needs something this example does not implement."""


# ---- models ---------------------------------------------------------------

class Quadratic:
    """f_i(w) = ½ Σ_j a_j (w_j − c_j)²: data-free, so batches are ignored;
    n_i (default 1) is only the client's aggregation weight."""

    def __init__(self, model, client):
        self.a = np.asarray(client["a"], dtype=float)
        self.c = np.asarray(client["c"], dtype=float)
        self.n = client.get("n", 1)

    def grad(self, w, batch):
        return self.a * (w - self.c)

    def hessian(self, batch):
        """∇²f = diag(a), whatever the batch."""
        return np.diag(self.a)


class Linear:
    """ŷ = xᵀw (+ b); loss = mean over the batch of (ŷ − y)² ("squared") or
    ½(ŷ − y)² ("half_squared").  Parameters: w (d entries), then b."""

    def __init__(self, model, client):
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=float)
        self.n = len(self.y)
        self.d = model["d"]
        self.bias = model.get("bias", False)
        self.s = 2.0 if model["loss"] == "squared" else 1.0   # ∂ℓ/∂ŷ = s·r
        if BUG == "squared-loss-no-2":
            self.s = 1.0

    def grad(self, theta, batch):
        X, y = self.X[batch], self.y[batch]
        w, b = theta[:self.d], (theta[self.d] if self.bias else 0.0)
        r = X @ w + b - y                               # residuals ŷ − y
        scale = self.s if BUG == "batch-grad-summed" else self.s / len(batch)
        g = scale * (X.T @ r)                           # ∇_w of the mean loss
        if self.bias:
            g_b = 0.0 if BUG == "bias-not-updated" else scale * r.sum()
            g = np.append(g, g_b)                       # ∇_b
        return g

    def hessian(self, batch):
        """The loss is quadratic in (w, b): ∇²f(·; D) = (s/|D|) X̃ᵀX̃ with
        X̃ = [X_D, 1] (the column of ones only with a bias)."""
        Xt = self.X[batch]
        if self.bias:
            Xt = np.hstack([Xt, np.ones((len(batch), 1))])
        return (self.s / len(batch)) * (Xt.T @ Xt)


class Mlp:
    """One hidden layer, identity activation only:
        a = W1 x (+ b1),  φ = a,  z = W2 φ (+ b2)
    k = 1 with loss "squared" (z − y)² or "half_squared" ½(z − y)², or
    k ≥ 2 with cross-entropy −log softmax(z)_y; the batch loss is the mean.
    Parameters (PyTorch state_dict order, row-major): W1 (h×d), b1 (h, if
    hidden_bias), W2 (k×h), b2 (k, if bias).  hidden_bias defaults to bias,
    bias to true.  The body is (W1, b1), the head (W2, b2)."""

    def __init__(self, model, client):
        if model.get("activation", "relu") != "identity":
            raise Unsupported("mlp activation %r (only identity)"
                              % model.get("activation", "relu"))
        self.d, self.h, self.k = model["d"], model["h"], model.get("k", 1)
        self.loss = model.get("loss", "cross_entropy")
        if self.loss == "cross_entropy":
            self.s = None
        elif self.loss in ("squared", "half_squared") and self.k == 1:
            self.s = 2.0 if self.loss == "squared" else 1.0   # ∂ℓ/∂z = s·r
        else:
            raise Unsupported("mlp loss %r with k = %d" % (self.loss, self.k))
        self.X = np.asarray(client["X"], dtype=float)
        self.y = np.asarray(client["y"], dtype=float)
        self.n = len(self.y)
        self.P = parameter_count(model)
        self.at = {name: (off, off + size)
                   for name, off, size, _ in model_blocks(model)}

    def part(self, theta, name, shape):
        if name not in self.at:
            return np.zeros(shape)
        lo, hi = self.at[name]
        return theta[lo:hi].reshape(shape)

    def put(self, g, name, value):
        if name in self.at:
            lo, hi = self.at[name]
            g[lo:hi] = np.ravel(value)

    def body_forward(self, theta, batch):
        """One forward pass of the body: the features Φ = act(X W1ᵀ + b1)
        of the batch's samples (n_b × h); identity, so Φ = A."""
        W1 = self.part(theta, "W1", (self.h, self.d))
        b1 = self.part(theta, "b1", (self.h,))
        return self.X[batch] @ W1.T + b1

    def head_grad(self, theta, Phi, batch):
        """The head's part of the gradient of the batch-mean loss, from the
        features alone: returns (E, g) with E = ∂(mean loss)/∂z (n_b × k)
        and g the P-vector holding ∇_{W2}, ∇_{b2} (zero elsewhere)."""
        W2 = self.part(theta, "W2", (self.k, self.h))
        b2 = self.part(theta, "b2", (self.k,))
        Z = Phi @ W2.T + b2
        nb = len(batch)
        if self.s is None:                                 # cross-entropy
            Z = Z - Z.max(axis=1, keepdims=True)
            p = np.exp(Z)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(nb), self.y[batch].astype(int)] -= 1.0
            E = p / nb
        else:
            E = (self.s * (Z[:, 0] - self.y[batch]) / nb)[:, None]
        g = np.zeros(self.P)
        self.put(g, "W2", E.T @ Phi)
        self.put(g, "b2", E.sum(axis=0))
        return E, g

    def body_backward(self, theta, batch, E):
        """One backward pass through the body: ∇_{W1}, ∇_{b1} from the
        output errors E (identity activation: δ = E W2)."""
        W2 = self.part(theta, "W2", (self.k, self.h))
        delta = E @ W2
        g = np.zeros(self.P)
        self.put(g, "W1", delta.T @ self.X[batch])
        self.put(g, "b1", delta.sum(axis=0))
        return g

    def grad(self, theta, batch):
        Phi = self.body_forward(theta, batch)
        E, g = self.head_grad(theta, Phi, batch)
        return g + self.body_backward(theta, batch, E)


DATA_KEYS = ("X", "y", "X_test", "y_test", "X_val", "y_val")


def load_array(value, base_dir):
    """A client's array as the spec gives it: inline numbers, or the path
    of a .npy file or "ARCHIVE.npz:MEMBER", relative to the JSON file that
    names it (docs/formats.md, data in .npy and .npz files)."""
    if not isinstance(value, str):
        return value
    path, _, member = value.partition(".npz:")
    if member:
        with np.load(os.path.join(base_dir, path + ".npz")) as archive:
            key = member[:-4] if member.endswith(".npy") else member
            return archive[key]
    return np.load(os.path.join(base_dir, value))


def load_clients(spec, base_dir):
    model = spec["model"]
    kinds = {"quadratic": Quadratic, "linear": Linear, "mlp": Mlp,
             "layers": lambda model, c: pfl_numpy_layers.Layers(spec, c)}
    if model["kind"] not in kinds:
        raise Unsupported("model %r (only quadratic, linear, mlp and layers)"
                          % model["kind"])
    problem = spec["problem"]
    if "file" in problem:            # a pflref-problem/1 file beside the spec
        path = os.path.join(base_dir, problem["file"])
        with open(path) as f:
            problem = json.load(f)
        base_dir = os.path.dirname(path)
    if "clients" not in problem:
        raise Unsupported("a generated problem (give the clients as data)")
    clients = [{k: load_array(v, base_dir) if k in DATA_KEYS else v
                for k, v in c.items()} for c in problem["clients"]]
    return [kinds[model["kind"]](model, c) for c in clients]


def model_blocks(model):
    """The parameter blocks in PyTorch state_dict order: (name, offset,
    size, groups).  A single-layer model's one layer is both its "input"
    and its "head" group; the mlp's input layer is (W1, b1), its head
    (W2, b2)."""
    if model["kind"] == "layers":
        return pfl_numpy_layers.model_blocks(model)
    kind, d = model["kind"], model["d"]
    if kind == "quadratic":
        layout = [("w", d, ("input", "head"))]
    elif kind == "linear":
        layout = [("w", d, ("input", "head"))]
        if model.get("bias", False):
            layout.append(("b", 1, ("input", "head")))
    elif kind == "mlp":
        h, k = model["h"], model.get("k", 1)
        bias = model.get("bias", True)
        layout = [("W1", h * d, ("input",))]
        if model.get("hidden_bias", bias):
            layout.append(("b1", h, ("input",)))
        layout.append(("W2", k * h, ("head",)))
        if bias:
            layout.append(("b2", k, ("head",)))
    else:
        raise Unsupported("model %r" % kind)
    blocks, off = [], 0
    for name, size, groups in layout:
        blocks.append((name, off, size, groups))
        off += size
    return blocks


def parameter_count(model):
    return sum(size for _, _, size, _ in model_blocks(model))


def personal_mask(spec, names=None):
    """True for the entries of the split's personal blocks (names: the
    split to use; default the spec's own), by block name or group."""
    if names is None:
        names = spec.get("split", {}).get("personal", [])
    mask = np.zeros(parameter_count(spec["model"]), dtype=bool)
    for block, off, size, groups in model_blocks(spec["model"]):
        if block in names or any(g in names for g in groups):
            mask[off:off + size] = True
    return mask


# ---- the trajectory ---------------------------------------------------------

class Recorder:
    """Collects trajectory records {event, phase, round, client, step, name,
    value}; round, client and step are left out where they do not apply."""

    def __init__(self):
        self.records = []

    def __call__(self, event, phase, name, value, round=None, client=None,
                 step=None):
        rec = {"event": event, "phase": phase}
        for key, val in (("round", round), ("client", client), ("step", step)):
            if val is not None:
                rec[key] = val
        rec["name"] = name
        rec["value"] = [float(x) for x in value]
        self.records.append(rec)


def track(data, theta):
    """θ after a training-mode pass on it: a layer list's batchnorm layers
    move their running statistics (bn.running = update, PyTorch's train();
    pfl_numpy_layers.Layers.track).  Other models: θ itself."""
    return data.track(theta) if hasattr(data, "track") else theta


def parameters_only(data, x):
    """x with the batch-norm buffers' entries (running_mean, running_var)
    set to 0: a proximal term over torch's parameters() neither pulls the
    buffers nor counts them in a norm.  Other models: x itself."""
    buffers = getattr(data, "buffers", None)
    if buffers is None or not buffers.any():
        return x
    return np.where(buffers, 0.0, x)


def local_sgd(theta, data, batches, eta, log, mu=0.0, anchor=None, mask=None,
              opt=None):
    """Minibatch SGD over the given batches, in order:
        θ ← θ − η (∇f(θ; b) + μ (θ − anchor))
    μ = 0 is FedAvg's ClientUpdate (Alg. 1: w ← w − η∇ℓ(w; b)).  Only the
    entries where mask is true move.  With a client optimizer opt
    (pfl_numpy_optim: the opt.* switches), opt steps on d = ∇f + μ(θ − anchor)
    instead.  log(step, θ) records each step."""
    if BUG == "one-step-fewer":
        batches = batches[:-1]
    if BUG == "one-step-extra":
        batches = batches + batches[-1:]
    if BUG == "ragged-batch-dropped":                  # drop_last=True
        batches = [b for b in batches if len(b) == len(batches[0])]
    for s, batch in enumerate(batches, start=1):
        g = data.grad(theta, batch)
        if mu != 0.0:
            pull = parameters_only(data, theta - anchor)
            if BUG == "ft-prox-sign":
                pull = anchor - theta
            g = g + (mu / 2 if BUG == "ft-prox-half" else mu) * pull
        if opt is not None:                            # torch's optimizer step
            theta = opt.step(theta, g, eta, mask)
        else:
            step = eta * g
            if mask is not None and BUG != "ft-moves-shared":
                step = np.where(mask, step, 0.0)
            if BUG == "local-model-aliases-global":
                theta -= step                          # in place: no copy made
            else:
                theta = theta - step
        theta = track(data, theta)
        log(s, theta)
    return theta


# ---- the algorithms -----------------------------------------------------------

def aggregate(w_t, local, n, scheme):
    """Alg. 1 server: w_{t+1} ← Σ_{k∈S_t} (n_k/m_t) w^k_{t+1}, m_t = Σ_{k∈S_t} n_k
    (scheme "samples"), or 1/m ("uniform"), or Σ_{k∈S_t} (n_k/n) w^k +
    Σ_{k∉S_t} (n_k/n) w_t over all K clients ("all_keep_old").  Summed in
    ascending client id.  local: {k: w^k_{t+1}} for k ∈ S_t."""
    S_t = sorted(local)
    if BUG == "uniform-weights":
        scheme = "uniform"
    if BUG == "weights-over-all-K":          # n_k/n, unsampled clients dropped
        coef = {k: n[k] / sum(n) for k in S_t}
    elif scheme == "samples":
        m_t = sum(n[k] for k in S_t)
        coef = {k: n[k] / m_t for k in S_t}
    elif scheme == "uniform":
        coef = {k: 1.0 / len(S_t) for k in S_t}
    elif scheme == "all_keep_old":
        coef = {k: n[k] / sum(n) for k in range(len(n))}
    else:
        raise Unsupported("fedavg.weights %r" % scheme)
    w = np.zeros_like(w_t)
    for k in sorted(coef):
        w_k = local.get(k, w_t)              # an unsampled client keeps w_t
        if BUG == "delta-without-w_t":       # Σ c_k (w^k − w_t), w_t not added
            w_k = w_k - w_t
        w = w + coef[k] * w_k
    return w


def lr_factor(cfg, t, trained=None, call=0, calls=1):
    """The factor of a step size under lr.schedule (PFLlib's -ld: the
    scheduler steps after each train(), so round t has η γ^t; step:
    γ^⌊t / lr.step_rounds⌋).  With lr.count = trainings the count is the
    client's own trainings before (`trained`: PFLlib steps a client's
    scheduler only when it trains), not t; with `calls` train() calls a
    round (Per-FedAvg's PFLlib server calls it twice) the count is
    calls · (t or trained) + call.  A decaying schedule needs lr.gamma (and
    lr.step_rounds) in the spec; the golden vectors give them."""
    if cfg.get("lr.count", "rounds") == "trainings" and trained is not None:
        t = trained
    t = calls * t + call
    if cfg["lr.schedule"] == "exponential":
        return cfg["lr.gamma"] ** t
    if cfg["lr.schedule"] == "step":
        return cfg["lr.gamma"] ** (t // cfg["lr.step_rounds"])
    return 1.0


def lr_settings(hp, sw):
    """lr_factor's configuration from a run's hyperparameters and switches,
    for an algorithm whose one step size the schedule scales (CFL's η,
    IFCA's γ, FedFomo's η); lr.scope = eta_p decays pFedMe's η_p alone, so
    there the step size stays constant."""
    cfg = {"lr.schedule": sw.get("lr.schedule", "constant"),
           "lr.count": sw.get("lr.count", "rounds"),
           "lr.gamma": hp.get("lr.gamma", 1.0),
           "lr.step_rounds": hp.get("lr.step_rounds", 1)}
    if sw.get("lr.scope", "all") == "eta_p":
        cfg["lr.schedule"] = "constant"
    return cfg


def schedule_rounds(spec, clients):
    """The rounds {clients, batches} the run trains on: the given schedule's,
    or, for a generated one (sampler numpy_legacy, batches split_once, the
    local work in epochs), drawn here as docs/sampling.md describes:
    m = clients_per_round (McMahan et al., Alg. 1 l. 4: m ← max(C·K, 1)),
    S_t = numpy's RandomState(client_seed + t).choice(K, m, replace=False)
    sorted (l. 5; m = K takes every client and draws nothing), and each
    participant's epochs of batches 0..n−1 cut in index order (l. 11)."""
    sch = spec["schedule"]
    if sch.get("kind", "given") == "given":
        return sch["rounds"]
    local = sch.get("local", {})
    if (sch.get("sampler", "gsl") != "numpy_legacy"
            or sch.get("batches", "split_once") != "split_once"
            or set(sch) - {"kind", "rounds", "clients_per_round", "sampler",
                           "client_seed", "batches", "local"}
            or "epochs" not in local):
        raise Unsupported("a generated schedule other than numpy_legacy "
                          "sampling, split_once batches and local epochs")
    K = len(clients)
    m = sch.get("clients_per_round", K)
    E, B = local["epochs"], local.get("batch_size", 0)
    if B == 0:
        raise Unsupported("full batches (batch_size 0) in a generated schedule")
    rounds = []
    for t in range(sch["rounds"]):
        # (m = K: pflref draws nothing, and the sorted choice is 0..K−1 too)
        S_t = sorted(int(k) for k in np.random.RandomState(
            sch.get("client_seed", 1) + t).choice(K, m, replace=False))
        plan = []
        for k in S_t:
            n = clients[k].n
            b = min(B, n)
            plan.append([list(range(i, min(i + b, n))) for _ in range(E)
                         for i in range(0, n, b)])
        rounds.append({"clients": S_t, "batches": plan})
    return rounds


def fedavg_rounds(spec, clients, w0, log):
    """FedAvg (Alg. 1) over the schedule's rounds; returns the final w."""
    cfg = settings(spec)
    scheme = cfg["fedavg.weights"]
    n = [c.n for c in clients]
    w = w0.copy()
    stale = {}                               # read by one bug only
    trained = [0] * len(clients)             # rounds each client trained in
    opts = pfl_numpy_optim.for_run(spec)     # opt.*: None for plain SGD
    # bn.aggregate = parameters_only (PFLlib): the server sends and averages
    # parameters() only, so every client holds on to its own model's
    # running_mean / running_var; `held` is that model per client
    keep = kept_buffers(cfg, clients)
    if BUG == "bn-stats-averaged-not-kept":
        keep = None
    held = [w0.copy() for _ in clients]
    for t, rnd in enumerate(schedule_rounds(spec, clients)):
        log("round_begin", "train", "w", w, round=t)
        batches = dict(zip(rnd["clients"], rnd["batches"]))   # S_t and its plan
        local = {}
        for k in sorted(batches):            # for each client k ∈ S_t
            w_k = w0.copy() if BUG == "start-from-w0" else w.copy()
            if keep is not None:             # set_parameters: not the buffers
                w_k = np.where(keep, held[k], w_k)
            if BUG == "local-model-aliases-global":
                w_k = w                      # "w_k = w": the same array
            log("client_begin", "train", "w_local", w_k, round=t, client=k,
                step=0)
            eta = cfg["eta"] * lr_factor(cfg, t, trained[k])  # lr.*
            trained[k] += 1
            w_k = local_sgd(w_k, clients[k], batches[k], eta,   # ClientUpdate
                            lambda s, x: log("step", "train", "w_local", x,
                                             round=t, client=k, step=s),
                            opt=opts and opts.begin(0, k))
            log("client_end", "train", "w_local", w_k, round=t, client=k)
            local[k] = w_k.copy()
            stale[k] = local[k]
            held[k] = w_k.copy()             # what client k's model holds
        if BUG == "stale-model-unsampled" and scheme == "all_keep_old":
            local = dict(stale)              # unsampled: last local model, not w_t
        w = aggregate(w, local, n, scheme)   # w_{t+1}
        if keep is not None:                 # deepcopy(uploaded_models[0])
            w = np.where(keep, local[first_upload(rnd, local)], w)
        log("server", "train", "w", w, round=t)
    return w


def run_fedavg(spec, clients, w0, log):
    return {"w": fedavg_rounds(spec, clients, w0, log)}


def run_local(spec, clients, w0, log):
    """Each client keeps v_i (starting at w0) across rounds and trains it on
    its own batches when it takes part; nothing is averaged."""
    cfg = settings(spec)
    v = [w0.copy() for _ in clients]
    trained = [0] * len(clients)             # rounds each client trained in
    opts = pfl_numpy_optim.for_run(spec)     # opt.*: None for plain SGD
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        batches = dict(zip(rnd["clients"], rnd["batches"]))
        if BUG == "local-reset-each-round":
            v = [w0.copy() for _ in clients]
        if BUG == "unsampled-client-trains":   # ignores S_t: full-batch step
            for i in range(len(clients)):
                batches.setdefault(i, [list(range(clients[i].n))])
        for i in sorted(batches):
            log("client_begin", "train", "v", v[i], round=t, client=i, step=0)
            eta = cfg["eta"] * lr_factor(cfg, t, trained[i])  # lr.*
            trained[i] += 1
            v[i] = local_sgd(v[i], clients[i], batches[i], eta,
                             lambda s, x: log("step", "train", "v", x,
                                              round=t, client=i, step=s),
                             opt=opts and opts.begin(0, i))
            log("client_end", "train", "v", v[i], round=t, client=i)
    return {"v": v}


def run_finetune(spec, clients, w0, log):
    """FedAvg rounds, then every client i fine-tunes a copy of the final w
    (notes §5.1): θ_i ← w; for each post batch D:
    θ_i ← θ_i − η_ft (∇f_i(θ_i; D) + μ_ft (θ_i − w)).  w does not change.
    finetune.scope = personal: only the split's personal blocks move."""
    cfg = settings(spec)
    eta_ft, mu_ft = cfg["eta_ft"], cfg["mu_ft"]
    if BUG == "ft-eta-train":
        eta_ft = cfg["eta"]
    scope = cfg["finetune.scope"]
    mask = personal_mask(spec) if scope == "personal" else None
    w = fedavg_rounds(spec, clients, w0, log)
    opts = pfl_numpy_optim.for_run(spec)     # slot 1: the fine-tuning's
    anchor = w0 if BUG == "ft-prox-to-w0" else w
    theta = []
    for i, batches in enumerate(spec["schedule"]["post"]):
        th = (w0 if BUG == "ft-from-w0" else w).copy()          # θ_i ← w
        log("client_begin", "finetune", "theta", th, client=i, step=0)
        th = local_sgd(th, clients[i], batches, eta_ft,
                       lambda s, x: log("step", "finetune", "theta", x,
                                        client=i, step=s),
                       mu=mu_ft, anchor=anchor, mask=mask,
                       opt=opts and opts.begin(1, i))
        log("client_end", "finetune", "theta", th, client=i)
        theta.append(w if BUG == "ft-reports-global" else th)
    return {"w": w, "v": theta}


# ---- settings: preset, then the spec's own hyperparameters and switches -------

DEFAULTS = {                 # the paper's reading (shared/spec notes §8)
    "fedavg.weights": "samples", "finetune.scope": "full", "mu_ft": 0.0,
    "beta": 1.0, "pfedme.mu": 0.0, "pfedme.theta_start": "reset",
    "pfedme.weights": "uniform", "pfedme.train": "all",
    "pfedme.personal_eval": "theta",
    "ditto.order": "interleaved_shared_batch", "ditto.prox": "squared",
    "ditto.prox_ref": "round_start", "ditto.weights": "samples",
    "ditto.batches": "shared",
    "pfl.state": "stateful", "pfl.weights": "samples",
    "pfl.finetune": "personal", "pfl.finetune_start": "global",
    "pfl.finetune_lr": "constant",
    "pflego.head_step": "seed", "pflego.theta_weights": "global",
    "pflego.server": "sgd", "lr.schedule": "constant",
    "lr.count": "rounds", "lr.scope": "all",
    "pfedme.eval_reset": "none", "bn.aggregate": "average",
}
PRESETS = {
    # CharlieDinh/pFedMe (notes §2(c), §2(e), §2(f)): warm θ, μ = 0.001,
    # n_i-weighted average, all N train, w_{i,R} evaluated as "personal"
    ("pfedme", "official"): {
        "pfedme.theta_start": "warm", "pfedme.mu": 0.001,
        "pfedme.weights": "samples", "pfedme.train": "all",
        "pfedme.personal_eval": "local_w"},
    # TsingZ0/PFLlib (notes §2(e), §7): only S^t trains, evaluated on the
    # freshly broadcast global model
    ("pfedme", "pfllib"): {
        "pfedme.theta_start": "warm", "pfedme.mu": 0.001,
        "pfedme.weights": "samples", "pfedme.train": "sampled",
        "pfedme.personal_eval": "global", "lr.scope": "eta_p",
        "lr.count": "trainings",
        # set_parameters and both server averages touch parameters() only:
        # the θ model's running statistics stay the client's
        "bn.aggregate": "parameters_only"},
    # litian96/ditto, TF (notes §3(c)): interleaved, fixed w^t, simple mean
    ("ditto", "official"): {
        "ditto.order": "interleaved_shared_batch", "ditto.prox": "squared",
        "ditto.prox_ref": "round_start", "ditto.weights": "uniform"},
    # TsingZ0/PFLlib (notes §3(f)): ptrain() first, n_k-weighted
    ("ditto", "pfllib"): {
        "ditto.order": "personal_first", "ditto.prox": "squared",
        "ditto.prox_ref": "round_start", "ditto.weights": "samples",
        "ditto.batches": "separate", "lr.count": "trainings",
        # serverditto.py sends and aggregates through serverbase.py:
        # parameters() only, so each client's self.model keeps its buffers
        "bn.aggregate": "parameters_only"},
    # Collins et al., ICML 2021 (FedRep): head steps, then the representation;
    # the server's plain mean of the bodies
    ("fedalt", "fedrep"): {
        "pfl.state": "stateful", "pfl.weights": "uniform",
        "pfl.finetune": "personal"},
    # Arivazhagan et al. 2019 (FedPer): joint steps, personal top layers
    ("fedsim", "fedper"): {
        "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "personal"},
    # Liang et al. 2020 (LG-FedAvg): personal input layer, shared top layers
    ("fedsim", "lg_fedavg"): {
        "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "personal"},
    # Oh, Kim, Yun, ICLR 2022 (FedBABU): the head never trains (γ_v = 0),
    # then the whole model is fine-tuned
    ("fedsim", "fedbabu"): {
        "gamma_v": 0.0, "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "full"},
    # TsingZ0/PFLlib (notes-pfllib-as-run §2.2, §2.3): n_i / Σ_U n_j
    # weights, and each client's -ld scheduler stepped when it trains
    ("fedavg", "pfllib"): {
        "fedavg.weights": "samples", "lr.count": "trainings",
        # clientbase.py set_parameters loads parameters() only: the
        # running statistics stay on each client (serverbase.py
        # aggregate_parameters: the global keeps the first upload's)
        "bn.aggregate": "parameters_only"},
    ("local", "pfllib"): {"lr.count": "trainings"},
    # PFLlib's FedRep, FedPer, LG-FedAvg and FedBABU share one server
    # (serverbase.py: n_i / Σ_U n_j over the shared part) and keep the
    # personal part on the client
    ("fedalt", "fedrep_pfllib"): {
        "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "personal", "lr.count": "trainings",
        "bn.aggregate": "parameters_only"},
    ("fedsim", "fedper_pfllib"): {
        "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "personal", "lr.count": "trainings",
        "bn.aggregate": "parameters_only"},
    ("fedsim", "lg_fedavg_pfllib"): {
        "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "personal", "lr.count": "trainings",
        "bn.aggregate": "parameters_only"},
    # FedBABU: the head never trains, then the whole model is fine-tuned
    ("fedsim", "fedbabu_pfllib"): {
        "gamma_v": 0.0, "pfl.state": "stateful", "pfl.weights": "samples",
        "pfl.finetune": "full", "lr.count": "trainings",
        "bn.aggregate": "parameters_only",
        # serverbabu.py: fine_tune() on the model each client holds, with
        # its own optimizer's -ld-decayed lr (clientbabu.py)
        "pfl.finetune_start": "last_local", "pfl.finetune_lr": "decayed"},
}
PRESET_SPLITS = {       # the split a preset implies unless the spec has one
    ("fedalt", "fedrep"): ["head"], ("fedsim", "fedper"): ["head"],
    ("fedsim", "lg_fedavg"): ["input"], ("fedsim", "fedbabu"): ["head"],
    ("fedalt", "fedrep_pfllib"): ["head"], ("fedsim", "fedper_pfllib"): ["head"],
    ("fedsim", "lg_fedavg_pfllib"): ["input"],
    ("fedsim", "fedbabu_pfllib"): ["head"],
}


def split_names(spec):
    """The personal blocks: the spec's split, else the preset's."""
    if "split" in spec:
        return spec["split"].get("personal", [])
    alg = spec["algorithm"]
    return PRESET_SPLITS.get((alg["name"], alg.get("preset", "paper")), [])


def settings(spec):
    """Every hyperparameter and switch of the run: the defaults, then the
    preset's, then the spec's own (which override the preset)."""
    alg = spec["algorithm"]
    cfg = dict(DEFAULTS)
    preset = alg.get("preset", "paper")
    if preset != "paper":
        if (alg["name"], preset) not in PRESETS:
            raise Unsupported("preset %r for %s" % (preset, alg["name"]))
        cfg.update(PRESETS[(alg["name"], preset)])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    pfl_numpy_optim.for_run(spec)      # opt.* only where local_sgd steps
    return cfg


def kept_buffers(cfg, clients):
    """The entries each client keeps as its own under bn.aggregate =
    parameters_only (PFLlib sends and averages parameters() only): the
    running statistics of a layer list with batch norm, else None (nothing
    kept; also under bn.aggregate = average)."""
    if cfg["bn.aggregate"] == "parameters_only":
        keep = getattr(clients[0], "buffers", None)
        return keep if keep is not None and keep.any() else None
    if cfg["bn.aggregate"] != "average":
        raise Unsupported("bn.aggregate %r" % cfg["bn.aggregate"])
    return None


# ---- pFedMe's inner problem (notes §2(c), Alg. 1 line 7) -----------------------


def first_upload(rnd, uploaders):
    """The client whose model the server receives first, PFLlib's
    uploaded_models[0] (receive_models orders the uploads by random.sample
    of the selected clients): the round's recorded "first_upload", else the
    lowest id of the round's uploaders."""
    return rnd.get("first_upload", min(uploaders))

def buffers_of(spec):
    """True on a layer list's batchnorm running statistics (r_μ, r_v):
    buffers, which no step moves (only a training pass does)."""
    buf = np.zeros(parameter_count(spec["model"]), dtype=bool)
    for name, off, size, _ in model_blocks(spec["model"]):
        if name.endswith("running_mean") or name.endswith("running_var"):
            buf[off:off + size] = True
    return buf


def prox_inner(theta, data, batch, w_ref, lam, eta_p, mu, K, log, step0,
               opt=None, buf=None):
    """K gradient steps on one batch D of
        h(θ) = f(θ; D) + (λ/2)‖θ − w‖²   [+ (μ/2)‖θ‖², the official code]:
        θ ← θ − η_p (∇f(θ; D) + λ(θ − w) + μθ).
    With a client optimizer opt (opt.*: the torch optimizer that replaces
    pFedMeOptimizer as the object stepping θ), opt steps on that gradient
    of h at step size η_p.  Each pass is a training-mode forward of the θ
    model: θ's batchnorm statistics move (track); buf marks them, and no
    step touches them.  log(step, θ) records step step0 + k."""
    for k in range(1, K + 1):
        pull = theta - w_ref                         # ∇ of (λ/2)‖θ − w‖² / λ
        if BUG == "pfedme-prox-sign":
            pull = w_ref - theta
        d = data.grad(theta, batch) + lam * pull + mu * theta
        if opt is not None:
            theta = opt.step(theta, d, eta_p)        # torch's optimizer step
        else:
            step = eta_p * d
            if buf is not None:
                step = np.where(buf, 0.0, step)
            theta = theta - step
        if BUG != "pfedme-bn-stats-frozen":
            theta = track(data, theta)
        log(step0 + k, theta)
    return theta


def prox_point(data, batch, w_ref, lam, mu):
    """The exact minimiser θ̂ of h(θ) = f(θ; D) + (λ/2)‖θ − w‖² + (μ/2)‖θ‖²
    when f(·; D) is quadratic with constant Hessian H: θ̂ = w + x with
        (H + (λ + μ) I) x = −(∇f(w; D) + μ w)."""
    H = data.hessian(batch)
    A = H + (lam + mu) * np.eye(len(w_ref))
    x = np.linalg.solve(A, -(data.grad(w_ref, batch) + mu * w_ref))
    return w_ref + x


def has_exact_prox(spec):
    m = spec["model"]
    return m["kind"] == "quadratic" or (
        m["kind"] == "linear" and m["loss"] in ("squared", "half_squared"))


def run_prox(spec, clients, w0, log):
    """pFedMe's inner loop on its own: the reference w = w0 never changes.
    In round t every listed client i runs, on each of its batches D in
    order, K steps θ_i ← θ_i − η_p (∇f_i(θ_i; D) + λ(θ_i − w) + μθ_i),
    starting the round from θ_i = w (pfedme.theta_start = reset) or from
    its θ_i of the last round it took part in (warm; θ_i = w at first).
    After each batch, the exact θ̂ on that batch is a note "theta_hat".
    Under lr.* the one step size η_p is η_p c_t (lr_factor of round t:
    prox takes no lr.count; every lr.scope but no_beta scales η_p)."""
    cfg = settings(spec)
    lam, eta_p, K, mu = cfg["lambda"], cfg["eta_p"], int(cfg["K"]), \
        cfg["pfedme.mu"]
    exact = has_exact_prox(spec) and lam + mu > 0
    opts = pfl_numpy_optim.for_run(spec)     # the inner solver's (opt.*)
    buf = buffers_of(spec)
    w = w0.copy()
    start = np.zeros_like(w) if BUG == "prox-start-at-zero" else w
    theta = [start.copy() for _ in clients]
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        for i, batches in sorted(zip(rnd["clients"], rnd["batches"])):
            eta_p_i = eta_p * lr_factor(cfg, t)
            if cfg["pfedme.theta_start"] == "reset":
                theta[i] = start.copy()               # θ ← w
            log("client_begin", "train", "theta", theta[i], round=t,
                client=i, step=0)
            opt = None if opts is None else opts.begin(0, i)
            for q, batch in enumerate(batches):
                theta[i] = prox_inner(
                    theta[i], clients[i], batch, w, lam, eta_p_i, mu, K,
                    lambda s, x: log("step", "train", "theta", x, round=t,
                                     client=i, step=s),
                    q * K, opt, buf)
                if exact:
                    log("note", "train", "theta_hat",
                        prox_point(clients[i], batch, w, lam, mu),
                        round=t, client=i, step=(q + 1) * K)
            log("client_end", "train", "theta", theta[i], round=t, client=i)
    return {"w": w, "v": theta}


# ---- pFedMe (Dinh, Tran, Nguyen, NeurIPS 2020, Alg. 1; notes §2) ---------------

def run_pfedme(spec, clients, w0, log):
    """Round t: every client that trains (all N, or only S^t with
    pfedme.train = sampled) starts from w_{i,0} = w_t; per local round r
    (one scheduled batch D_{i,r}):
        θ ≈ argmin f_i(θ; D) + (λ/2)‖θ − w_{i,r}‖² by K inner steps from
            θ = w_{i,r} (reset) or the last local round's θ (warm; w_t at r = 0)
        w_{i,r+1} = w_{i,r} − ηλ(w_{i,r} − θ)
    then w_{t+1} = (1 − β) w_t + β Σ_{i∈S^t} c_i w_{i,R} with c_i = 1/S
    (paper) or n_i / Σ_{S^t} n_j (official code).  Client i's personalised
    model is its last θ, or w_{i,R}, or the global model
    (pfedme.personal_eval); a client that does not train keeps its own.
    pfedme.eval_reset = initial (PFLlib's evaluation defect): the first time
    a client trains, θ starts at w⁰ instead of w_t.  lr.*: client i's η_p
    is η_p c and its η is η c, or η with lr.scope = eta_p (PFLlib decays
    η_p only).
    opt.*: the inner solver's optimizer (the object that steps θ; opt.state
    says how long it lives: a new one per train() call, the client's own,
    or one for all).  Batch normalisation: θ's training passes move its
    running statistics, and w_{i,r+1} carries θ's (w_{i,r} is a parameter
    list; the model uploaded is θ's), line 8 stepping only parameters.
    bn.aggregate = parameters_only (PFLlib): the model a client trains θ in
    keeps its running statistics from one training to the next (the server
    only sends parameters), the server's new ones are those of the first
    client it receives (β mixes the parameters only), and the global
    reported for a client carries that client's own statistics."""
    cfg = settings(spec)
    opts = pfl_numpy_optim.for_run(spec)     # the inner solver's (opt.*)
    buf = buffers_of(spec)
    if cfg["bn.aggregate"] not in ("average", "parameters_only"):
        raise Unsupported("bn.aggregate %r" % cfg["bn.aggregate"])
    mine = None                              # each client's θ model
    if cfg["bn.aggregate"] == "parameters_only" and buf.any():
        mine = [w0.copy() for _ in clients]
    kept = {}                                # (bug pfedme-inner-opt-kept)
    eta, lam, eta_p = cfg["eta"], cfg["lambda"], cfg["eta_p"]
    K, beta, mu = int(cfg["K"]), cfg["beta"], cfg["pfedme.mu"]
    if BUG == "pfedme-mu-missing":
        mu = 0.0
    warm = cfg["pfedme.theta_start"] == "warm"
    if BUG == "pfedme-theta-reset-ignored":
        warm = True
    if BUG == "pfedme-theta-always-reset":
        warm = False
    report = cfg["pfedme.personal_eval"]
    if BUG == "pfedme-personal-is-local-w":
        report = "local_w"
    if BUG == "pfedme-personal-is-global":
        report = "global"
    n = [c.n for c in clients]
    w = w0.copy()
    v = [w0.copy() for _ in clients]
    untrained = {i for i, _ in enumerate(clients)}
    if cfg["pfedme.eval_reset"] == "none":
        untrained = set()                     # no evaluation side effect
    trained = [0] * len(clients)             # trainings of each client so far
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        S_t = sorted(rnd.get("selected", rnd["clients"]))
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        if BUG == "pfedme-train-only-sampled":
            plan = {i: b for i, b in plan.items() if i in S_t}
        log("round_begin", "train", "w", w, round=t)
        w_R = {}
        for i in sorted(plan):
            c = lr_factor(cfg, t, trained[i])         # lr.* of i's train()
            trained[i] += 1
            eta_p_i = eta_p * c
            eta_i = eta if cfg["lr.scope"] == "eta_p" else eta * c
            w_i = w.copy()                            # w_{i,0} = w_t
            if mine is not None:                      # its own statistics
                w_i = np.where(buf, mine[i], w_i)
            theta = w0.copy() if i in untrained else w_i.copy()
            untrained.discard(i)
            if BUG == "prox-start-at-zero":
                theta = np.zeros_like(w)
            log("client_begin", "train", "w_local", w_i, round=t, client=i,
                step=0)
            opt = None if opts is None else opts.begin(0, i)
            if BUG == "pfedme-inner-opt-kept" and opts is not None:
                opt = kept.setdefault(i, opt)      # built once per client
            for r, batch in enumerate(plan[i]):
                if BUG == "pfedme-inner-opt-per-solve" and opts is not None:
                    opt = pfl_numpy_optim.Optimizer(   # a new one per solve
                        opts.cfg, opts.blocks, opts.decays, opts.buffer)
                if not warm:                          # θ ← w_{i,r}
                    theta = (np.zeros_like(w_i) if BUG == "prox-start-at-zero"
                             else w_i.copy())
                theta = prox_inner(
                    theta, clients[i], batch, w_i, lam, eta_p_i, mu, K,
                    lambda s, x: log("step", "train", "theta", x, round=t,
                                     client=i, step=s),
                    r * K, opt, buf)
                w_new = w_i - eta_i * lam * (w_i - theta)   # line 8
                if BUG != "pfedme-bn-stats-of-w":     # r_μ, r_v: θ's
                    w_new = np.where(buf, theta, w_new)
                w_i = w_new
                log("step", "train", "w_local", w_i, round=t, client=i,
                    step=r + 1)
            log("client_end", "train", "w_local", w_i, round=t, client=i)
            log("client_end", "train", "theta", theta, round=t, client=i)
            w_R[i] = w_i
            if mine is not None:
                mine[i] = w_i.copy()
            if report == "theta":
                v[i] = theta.copy()
            elif report == "local_w":
                v[i] = w_i.copy()
        # line 10: w_{t+1} = (1 − β) w_t + β · average over S^t
        if cfg["pfedme.weights"] == "samples":
            m = sum(n[i] for i in S_t)
            coef = {i: n[i] / m for i in S_t}
        else:
            coef = {i: 1.0 / len(S_t) for i in S_t}
        avg = np.zeros_like(w)
        for i in S_t:
            if i in w_R:
                avg = avg + coef[i] * w_R[i]
        w = avg if BUG == "pfedme-beta-ignored" else \
            (1.0 - beta) * w + beta * avg
        uploaded = [i for i in S_t if i in w_R]
        if mine is not None and uploaded:       # the first received model's
            w = np.where(buf, mine[first_upload(rnd, uploaded)], w)
        log("server", "train", "w", w, round=t)
        if report == "global":
            v = [w.copy() for _ in clients]
            if mine is not None:
                v = [np.where(buf, mine[i], w) for i in range(len(clients))]
    return {"w": w, "v": v}


# ---- Ditto (Li, Hu, Beirami, Smith, ICML 2021, Alg. 1; notes §3) ---------------

def run_ditto(spec, clients, w0, log):
    """Round t, for each device k ∈ S_t, on its scheduled batches b:
        global (FedAvg): w_k ← w^t, then w_k ← w_k − η ∇F_k(w_k; b)
        personal:        v_k ← v_k − η (∇F_k(v_k; b) + λ(v_k − w^t))
    interleaved (one personal then one global step per batch, the TF code)
    or every personal step first (ditto.order = personal_first).
    ditto.prox = norm: the regulariser is λ‖v − w‖, gradient
    λ(v − w)/‖v − w‖ (0 at v = w); ditto.prox_ref = moving: w is the global
    copy w_k as it stands.  w^{t+1} = Σ_{k∈S_t} c_k w_k, c_k = n_k/m_t or
    1/|S_t|.  v_k starts at w⁰ and persists; untouched when k ∉ S_t.
    ditto.batches = separate (PFLlib's ptrain() over its own loader): the
    personal steps, all first, take the round's "personal" list of k.
    lr.*: both passes of k take η c (PFLlib decays both optimizers).
    opt.*: two client optimizers (pfl_numpy_optim), PFLlib clientditto.py's
    optimizer (slot 0, the global steps on ∇F_k(w_k; b)) and poptimizer
    (slot 1, the personal steps on d = ∇F_k(v_k; b) + λ ∂prox, the
    regulariser's gradient inside d as autograd sums it), each with its own
    state, begun at each device's update as opt.state says."""
    cfg = settings(spec)
    opts = pfl_numpy_optim.for_run(spec)     # None for plain SGD
    lam = cfg["lambda"]                       # η: per device and round below
    moving = cfg["ditto.prox_ref"] == "moving" or BUG == "ditto-moving-ref"
    n = [c.n for c in clients]
    w = w0.copy()
    v = [w0.copy() for _ in clients]

    trained = [0] * len(clients)             # trainings of each device so far
    # bn.aggregate = parameters_only (PFLlib's serverditto.py through
    # serverbase.py): only parameters() travel, so each client's global copy
    # self.model keeps the running statistics its last train() left (w0's
    # before), and the new global takes the first uploader's; model_per (v)
    # is never sent, so nothing changes for it
    keep = kept_buffers(cfg, clients)
    held = [w0.copy() for _ in clients]      # each client's self.model

    def personal(k, batch, ref, eta, opt=None):
        diff = parameters_only(clients[k], v[k] - ref)
        if cfg["ditto.prox"] == "norm":
            norm = np.sqrt(np.dot(diff, diff))
            scale = lam / norm if norm > 0 else 0.0
        else:                                     # (λ/2)‖v − w‖² → λ(v − w)
            scale = lam / 2 if BUG == "ditto-prox-half" else lam
        d = clients[k].grad(v[k], batch) + scale * diff
        if opt is not None:                       # poptimizer.step()
            v[k] = opt.step(v[k], d, eta)
        else:
            v[k] = v[k] - eta * d
        v[k] = track(clients[k], v[k])

    def global_step(k, w_k, batch, eta, opt=None):
        g = clients[k].grad(w_k, batch)
        if opt is not None:                       # optimizer.step()
            w_k = opt.step(w_k, g, eta)
        else:
            w_k = w_k - eta * g
        return track(clients[k], w_k)

    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        S_t = sorted(rnd["clients"])
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        own = plan                                # the personal steps' lists
        if cfg["ditto.batches"] == "separate":
            if "personal" not in rnd or cfg["ditto.order"] != "personal_first":
                raise Unsupported("ditto.batches = separate needs personal "
                                  "lists and ditto.order = personal_first")
            own = dict(zip(rnd["clients"], rnd["personal"]))
        log("round_begin", "train", "w", w, round=t)
        local = {}
        for k in S_t:
            eta = cfg["eta"] * lr_factor(cfg, t, trained[k])  # lr.*
            trained[k] += 1
            w_k = w.copy()
            if keep is not None:                      # set_parameters
                w_k = np.where(keep, held[k], w_k)
            if BUG == "ditto-v-reset":                # v_k ← w^t, not kept
                v[k] = w.copy()
            log("client_begin", "train", "w_local", w_k, round=t, client=k,
                step=0)
            log("client_begin", "train", "v", v[k], round=t, client=k, step=0)
            opt_w = opts and opts.begin(0, k)     # the global solver's
            opt_v = opts and opts.begin(1, k)     # the personal solver's
            steps = list(enumerate(plan[k], start=1))
            if cfg["ditto.order"] == "personal_first":
                for s, batch in enumerate(own[k], start=1):
                    personal(k, batch, w_k if moving else w, eta, opt_v)
                    log("step", "train", "v", v[k], round=t, client=k, step=s)
                for s, batch in steps:
                    w_k = global_step(k, w_k, batch, eta, opt_w)
                    log("step", "train", "w_local", w_k, round=t, client=k,
                        step=s)
            else:
                for s, batch in steps:
                    personal(k, batch, w_k if moving else w, eta, opt_v)
                    log("step", "train", "v", v[k], round=t, client=k, step=s)
                    w_k = global_step(k, w_k, batch, eta, opt_w)
                    log("step", "train", "w_local", w_k, round=t, client=k,
                        step=s)
            log("client_end", "train", "w_local", w_k, round=t, client=k)
            log("client_end", "train", "v", v[k], round=t, client=k)
            local[k] = w_k
            held[k] = w_k.copy()
        if BUG == "ditto-unsampled-v-updated":     # every device runs ptrain()
            for k in range(len(clients)):
                if k not in plan:
                    personal(k, list(range(clients[k].n)), w, cfg["eta"])
        if cfg["ditto.weights"] == "uniform":
            coef = {k: 1.0 / len(S_t) for k in S_t}
        else:
            m_t = sum(n[k] for k in S_t)
            coef = {k: n[k] / m_t for k in S_t}
        w_next = np.zeros_like(w)
        for k in S_t:
            w_next = w_next + coef[k] * local[k]
        w = w_next
        if keep is not None and S_t:              # uploaded_models[0]'s
            w = np.where(keep, local[first_upload(rnd, S_t)], w)
        log("server", "train", "w", w, round=t)
    return {"w": w, "v": v}


# ---- FedAlt and FedSim (Pillutla et al., ICML 2022, Alg. 4 and 5) -----------

def pfl_weights(scheme, S_t, n, plan):
    """The server's α_i over the participants: N_i/N (samples), 1/n
    (uniform) or the device's number of batches this round (batches).
    Only their ratios matter: u = Σ α_i u_i / Σ α_i."""
    if scheme == "samples":
        alpha = {i: n[i] / sum(n) for i in S_t}
    elif scheme == "uniform":
        alpha = {i: 1.0 / len(n) for i in S_t}
    elif scheme == "batches":
        alpha = {i: float(len(plan[i])) for i in S_t}
    else:
        raise Unsupported("pfl.weights %r" % scheme)
    total = sum(alpha.values())
    return {i: alpha[i] / total for i in S_t}


def run_partial(spec, clients, w0, log, simultaneous):
    """Partial personalisation: the split's personal blocks are v_i (one per
    device), the others the shared u.  Round t, for each device i ∈ S in
    ascending id, on its scheduled batches z_1, z_2, ...:
      FedAlt (LocalAlt): the first τ_v batches move v with u fixed at u^(t),
          v ← v − γ_v ∇_v F_i(u^(t), v; z); the rest move u with the new v
          fixed, u ← u − γ_u ∇_u F_i(u, v_i^(t+1); z)
      FedSim (LocalSim): every batch moves both from the same point:
          (u, v) ← (u − γ_u ∇_u F_i(u, v; z), v − γ_v ∇_v F_i(u, v; z))
    then u^(t+1) = Σ_S α_i u_i / Σ_S α_i.  pfl.state = stateless: v starts
    at v⁰ at every visit and is thrown away.  Optional post phase: every
    device fine-tunes v (pfl.finetune = personal) or (u, v) (full) from
    (u^(T), v_i), stateless from (u^(T), v⁰); with pfl.finetune_start =
    last_local from the model it holds after the last round (its own
    trained model if it trained there, else the one it was sent), and with
    pfl.finetune_lr = decayed at η_ft times its lr.* factor after all its
    trainings.  final.w = (u, v⁰);
    final.v[i] = device i's model (u^(T), v_i) after fine-tuning.
    opt.*: PFLlib clientrep.py's two optimizers (pfl_numpy_optim), begun at
    each device's update as opt.state says: slot 0 steps u (FedAlt's u
    steps at γ_u; FedSim's joint step, one optimizer with two parameter
    groups, γ_u on u and γ_v on v), slot 1 steps FedAlt's v steps at γ_v
    and the fine-tuning at η_ft.  A block the step leaves out keeps its
    state (torch skips a parameter without a gradient)."""
    cfg = settings(spec)
    opts = pfl_numpy_optim.for_run(spec)     # None for plain SGD
    tau_v = None if simultaneous else int(cfg["tau_v"])
    trained = [0] * len(clients)             # rounds each device trained in
    stateful = cfg["pfl.state"] == "stateful"
    if cfg["pfl.state"] not in ("stateful", "stateless"):
        raise Unsupported("pfl.state %r" % cfg["pfl.state"])
    keep = stateful or BUG == "pfl-stateless-keeps-v"     # v_i persists
    reset = not keep or BUG == "pfl-stateful-reset"       # v ← v⁰ per visit
    personal = personal_mask(spec, split_names(spec))
    shared = ~personal
    n = [c.n for c in clients]
    w = w0.copy()                            # (u, v⁰)
    v0 = w0[personal].copy()
    v = [v0.copy() for _ in clients]
    # bn.aggregate = parameters_only (PFLlib: the clients' set_parameters
    # load the shared block's parameters() only, aggregate_parameters
    # deep-copies the first upload): the running statistics inside the
    # shared block stay each device's (own[i]); the server's are the first
    # participant's
    kept = None
    if cfg["bn.aggregate"] == "parameters_only":
        buffers = getattr(clients[0], "buffers", None)
        if buffers is not None and (buffers & shared).any():
            if not stateful:
                raise Unsupported("bn.aggregate = parameters_only with "
                                  "pfl.state = stateless")
            kept = buffers & shared
    elif cfg["bn.aggregate"] != "average":
        raise Unsupported("bn.aggregate %r" % cfg["bn.aggregate"])
    own = [w0.copy() for _ in clients]

    def move(x, g, which, gamma, opt=None):
        if opt is not None:                  # optimizer.step() on `which`
            return opt.step(x, g, gamma, which)
        x = x.copy()
        x[which] = x[which] - gamma * g[which]
        return x

    def joint(opt, x, g, gamma_u, gamma_v):
        """FedSim's optimizer.step() with its two groups: clip_grad_norm_
        over every parameter of both (buffers have no gradient), then each
        group's rule at its own step size on the clipped d."""
        g = opt.clip(g)
        x = opt.step(x, g, gamma_v, personal, clipped=True)
        return opt.step(x, g, gamma_u, shared, clipped=True)

    held = None        # each device's model after the last round (last_local)
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        S_t = sorted(plan)
        log("round_begin", "train", "w", w, round=t)
        u_new = {}
        held = []
        for i in range(len(clients)):        # what each was sent
            x = w.copy()
            x[personal] = v[i] if keep else v0
            if kept is not None:
                x[kept] = own[i][kept]
            held.append(x)
        sent = {}
        for i in S_t:
            x = w.copy()                     # (u^(t), v_i^(t))
            x[personal] = v0 if reset else v[i]
            if kept is not None:             # its own statistics
                x[kept] = own[i][kept]
            log("client_begin", "train", "w_local", x, round=t, client=i,
                step=0)
            c = lr_factor(cfg, t, trained[i])    # lr.* of i's train()
            trained[i] += 1
            gamma_u, gamma_v = c * cfg["gamma_u"], c * cfg["gamma_v"]
            batches = plan[i]
            opt_u = opts and opts.begin(0, i)    # optimizer
            opt_v = opts and opts.begin(1, i)    # optimizer_per
            if not simultaneous and tau_v > len(batches):
                raise Unsupported("tau_v = %d v steps, but client %d has %d "
                                  "batches in round %d"
                                  % (tau_v, i, len(batches), t))
            for s, z in enumerate(batches, start=1):
                if simultaneous:
                    g = clients[i].grad(x, z)
                    if opt_u is not None:            # one step, two groups
                        x = joint(opt_u, x, g, gamma_u, gamma_v)
                    elif BUG == "fedsim-sequential":   # u's gradient after v
                        x = move(x, g, personal, gamma_v)
                        g = clients[i].grad(x, z)
                        x = move(x, g, shared, gamma_u)
                    else:
                        x = move(move(x, g, personal, gamma_v), g, shared,
                                 gamma_u)
                else:
                    v_phase = s <= tau_v
                    if BUG == "fedalt-u-first":      # u steps, then v steps
                        v_phase = s > len(batches) - tau_v
                    if v_phase:
                        x = move(x, clients[i].grad(x, z), personal, gamma_v,
                                 opt_v)
                    else:
                        at = x
                        if BUG == "fedalt-stale-v":  # v of the round's start
                            at = x.copy()
                            at[personal] = v0 if reset else v[i]
                        x = move(x, clients[i].grad(at, z), shared, gamma_u,
                                 opt_u)
                x = track(clients[i], x)     # the last pass's statistics
                log("step", "train", "w_local", x, round=t, client=i, step=s)
            log("client_end", "train", "w_local", x, round=t, client=i)
            if keep:
                v[i] = x[personal].copy()
            if stateful:
                log("client_end", "train", "v", x, round=t, client=i)
            u_new[i] = x[shared]
            held[i] = x.copy()
            sent[i] = x.copy()
            own[i] = x.copy()
        coef = pfl_weights(cfg["pfl.weights"], S_t, n, plan)
        u = np.zeros(int(shared.sum()))
        for i in S_t:
            u = u + coef[i] * u_new[i]
        w = w.copy()
        w[shared] = u
        if kept is not None and S_t:         # uploaded_models[0]'s
            w[kept] = sent[first_upload(rnd, S_t)][kept]
        log("server", "train", "w", w, round=t)

    models = []
    for i in range(len(clients)):
        x = w.copy()
        x[personal] = v[i] if keep else v0
        if kept is not None:
            x[kept] = own[i][kept]
        models.append(x)
    post = spec["schedule"].get("post")
    if post is not None:
        full = cfg["pfl.finetune"] == "full"
        if cfg["pfl.finetune"] not in ("full", "personal"):
            raise Unsupported("pfl.finetune %r" % cfg["pfl.finetune"])
        if BUG == "pfl-finetune-personal-only":
            full = False
        from_held = cfg["pfl.finetune_start"] == "last_local"
        if BUG == "pfl-finetune-from-global":
            from_held = False
        decayed = (cfg["pfl.finetune_lr"] == "decayed"
                   and BUG != "pfl-finetune-lr-undecayed")
        for i, batches in enumerate(post):
            x = held[i] if from_held and held is not None else models[i]
            eta_ft = cfg["eta_ft"] * (lr_factor(cfg, len(
                spec["schedule"]["rounds"]), trained[i]) if decayed else 1.0)
            log("client_begin", "finetune", "v", x, client=i, step=0)
            opt_ft = opts and opts.begin(1, i)   # optimizer_per's
            for s, z in enumerate(batches, start=1):
                g = clients[i].grad(x, z)
                if opt_ft is not None:
                    x = opt_ft.step(x, g, eta_ft, None if full else personal)
                else:
                    x = x - eta_ft * g if full else move(x, g, personal,
                                                         eta_ft)
                x = track(clients[i], x)
                log("step", "finetune", "v", x, client=i, step=s)
            log("client_end", "finetune", "v", x, client=i)
            models[i] = x
    return {"w": w, "v": models}


def run_fedalt(spec, clients, w0, log):
    return run_partial(spec, clients, w0, log, simultaneous=False)


def run_fedsim(spec, clients, w0, log):
    return run_partial(spec, clients, w0, log, simultaneous=True)


# ---- PFLEGO (Nikoloutsopoulos, Koutsopoulos, Titsias, arXiv 2202.09848) -----

def run_pflego(spec, clients, w0, log):
    """The body θ (W1, b1) is shared, the head W_i (W2, b2) is client i's.
    Round t, I clients, r = |I_t| sampled; for each i ∈ I_t in ascending id,
    with τ = its number of scheduled (full) batches:
        Φ = act(X_i W1ᵀ + b1) at θ_t, computed once
        τ − 1 cheap steps  W ← W − β ∇_W ℓ_i(W, θ_t) on Φ
        joint gradient at (W̃, θ_t): G_i (head), g_i (body, one backward)
        W_i ← W̃ − ρ (I/r) G_i       (× α_i with head_step = exact_alpha)
    server: ĝ = (I/r) Σ_{I_t} a_i g_i, θ ← θ − ρ ĝ, with a_i = α_i = N_i/N
    (theta_weights = global) or N_i / Σ_{I_t} N_j (sampled_normalised);
    with pflego.server = adam, θ takes Adam's step on ĝ instead
    (docs/algorithms/pflego.md, "The Adam step").  A client head optimizer
    (opt.*, pfl_numpy_optim) takes the cheap steps on the head entries
    alone, one per client as opt.state says; the last head step stays
    plain (with the server step it is the one SGD step on L).  Under a
    learning-rate decay (lr.schedule) round t's ρ and β are both times c_t
    (every step size of the round).
    Notes: g (the joint gradient), body_passes ([forward, backward] passes
    of the body for the client in the round), g_hat."""
    cfg = settings(spec)
    if spec["model"]["kind"] not in ("mlp", "layers"):
        raise Unsupported("pflego on model %r (only the mlp and layer lists)"
                          % spec["model"]["kind"])
    adam = cfg["pflego.server"] == "adam"
    if cfg["pflego.server"] not in ("sgd", "adam"):
        raise Unsupported("pflego.server %r" % cfg["pflego.server"])
    rho0, beta0 = cfg["rho"], cfg["pflego.beta"]
    head_alpha = cfg["pflego.head_step"] == "exact_alpha"
    if BUG == "pflego-head-alpha":
        head_alpha = not head_alpha
    theta_weights = cfg["pflego.theta_weights"]
    if BUG == "pflego-weights-sampled-set":
        theta_weights = "sampled_normalised"
    head = personal_mask(spec, ["head"])
    if "split" in spec and not np.array_equal(
            personal_mask(spec, split_names(spec)), head):
        raise Unsupported("pflego with a split other than the head")
    body = ~head
    I = len(clients)
    n = [c.n for c in clients]
    alpha = [n_i / sum(n) for n_i in n]
    w = w0.copy()
    heads = [w0[head].copy() for _ in clients]
    m_1, m_2 = np.zeros(w.size), np.zeros(w.size)  # Adam's moments (body)
    opts = pfl_numpy_optim.for_run(spec)    # the head optimizers, or None
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        S_t = sorted(plan)
        c_t = lr_factor(cfg, t)                   # lr.*: ρ and β alike
        rho, beta = rho0 * c_t, beta0 * c_t
        scale = 1.0 if BUG == "pflego-missing-ip-factor" else I / len(S_t)
        log("round_begin", "train", "w", w, round=t)
        g_body = {}
        for i in S_t:
            data = clients[i]
            full = list(range(data.n))
            if any(list(z) != full for z in plan[i]):
                raise Unsupported("pflego needs full batches in index order")
            tau = len(plan[i])
            x = w.copy()
            x[head] = heads[i]
            log("client_begin", "train", "w_local", x, round=t, client=i,
                step=0)
            forward = backward = 0
            opt = opts.begin(0, i) if opts is not None else None
            cheap = tau if BUG == "pflego-cheap-steps-tau" else tau - 1
            if BUG != "pflego-features-every-step":
                Phi = data.body_forward(x, full)          # the cache
                forward += 1
            for s in range(1, cheap + 1):
                if BUG == "pflego-features-every-step":
                    Phi = data.body_forward(x, full)
                    forward += 1
                _, G = data.head_grad(x, Phi, full)
                if opt is not None:                        # the head's own
                    x = opt.step(x, G, beta, mask=None
                                 if BUG == "pflego-opt-body-moves" else head)
                else:
                    x = x - beta * G                       # G is 0 on the body
                log("step", "train", "w_local", x, round=t, client=i, step=s)
            if BUG == "pflego-features-every-step":
                Phi = data.body_forward(x, full)
                forward += 1
            E, G = data.head_grad(x, Phi, full)
            g = data.body_backward(x, full, E)
            backward += 1
            g = g + G                                      # (g_i, G_i)
            log("note", "train", "g", g, round=t, client=i, step=cheap + 1)
            step = rho * scale * (alpha[i] if head_alpha else 1.0)
            x = x.copy()
            x[head] = x[head] - step * g[head]
            log("step", "train", "w_local", x, round=t, client=i,
                step=cheap + 1)
            heads[i] = x[head].copy()
            log("client_end", "train", "v", x, round=t, client=i)
            log("note", "train", "body_passes", [forward, backward], round=t,
                client=i)
            g_body[i] = g[body]
        if theta_weights == "global":
            a = {i: alpha[i] for i in S_t}
        elif theta_weights == "sampled_normalised":
            m = sum(n[i] for i in S_t)
            a = {i: n[i] / m for i in S_t}
        else:
            raise Unsupported("pflego.theta_weights %r" % theta_weights)
        acc = np.zeros(int(body.sum()))
        for i in S_t:
            acc = acc + a[i] * g_body[i]
        g_hat = np.zeros_like(w)
        g_hat[body] = scale * acc
        log("note", "train", "g_hat", g_hat, round=t)
        if adam:                   # JAX optimizers.adam, step count t + 1
            m_1 = 0.9 * m_1 + (1 - 0.9) * g_hat
            m_2 = 0.999 * m_2 + (1 - 0.999) * g_hat * g_hat
            m_hat = m_1 / (1 - 0.9 ** (t + 1))
            v_hat = m_2 / (1 - 0.999 ** (t + 1))
            w = w.copy()
            w[body] = w[body] - rho * m_hat[body] / (np.sqrt(v_hat[body])
                                                     + 1e-8)
        else:
            w = w - rho * g_hat                            # head entries: 0
        log("server", "train", "w", w, round=t)
    models = []
    for i in range(len(clients)):
        x = w.copy()
        x[head] = heads[i]
        models.append(x)
    return {"w": w, "v": models}


ALGORITHMS = {"fedavg": run_fedavg, "local": run_local,
              "finetune": run_finetune, "prox": run_prox,
              "pfedme": run_pfedme, "ditto": run_ditto,
              "fedalt": run_fedalt, "fedsim": run_fedsim,
              "pflego": run_pflego}

# Algorithms written in a file of their own beside this one: each such
# module names its ALGORITHM, its BUGS, and run(spec, clients, w0, log, bug)
# returning {"w": ..., "v": [...], "alpha": [...]} (the keys it keeps).
EXTENSIONS = ("pfl_numpy_perfedavg", "pfl_numpy_apfl", "pfl_numpy_interp",
              "pfl_numpy_cfl", "pfl_numpy_ifca", "pfl_numpy_fedfomo",
              "pfl_numpy_fedbn", "pfl_numpy_pfedhn",
              "pfl_numpy_lora",
              "pfl_numpy_feddyn", "pfl_numpy_scaffold",
              "pfl_numpy_moon", "pfl_numpy_fedprox", "pfl_numpy_fedrecon",
              "pfl_numpy_fedamp", "pfl_numpy_fedproto",
              "pfl_numpy_fedrod",
              "pfl_numpy_apple",
              "pfl_numpy_fedala",
              "pfl_numpy_fedpac")


def _extension_run(mod, spec, clients, w0, log):
    """An extension's run, refusing (Unsupported) a client optimizer it
    does not drive rather than stepping with plain SGD."""
    pfl_numpy_optim.for_run(spec)
    return mod.run(spec, clients, w0, log, BUG)


def _load_extensions():
    global BUGS
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    for name in EXTENSIONS:
        if not os.path.exists(os.path.join(here, name + ".py")):
            continue
        mod = __import__(name)
        ALGORITHMS[mod.ALGORITHM] = (
            lambda spec, clients, w0, log, mod=mod:
            _extension_run(mod, spec, clients, w0, log))
        BUGS = BUGS + tuple(mod.BUGS)


sys.dont_write_bytecode = True
# an extension's `import pfl_numpy` finds this module, not a second copy
sys.modules.setdefault("pfl_numpy", sys.modules[__name__])
_load_extensions()
import pfl_numpy_layers      # noqa: E402  the layer-list model
import pfl_numpy_optim       # noqa: E402  the client optimizers (opt.*)


# ---- input and output -----------------------------------------------------------

def run_file(path):
    """Run one golden vector (or a bare pflref-spec/1 file); return the
    candidate result as a dict."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") == "pflref-golden/1":
        vid, spec = doc["id"], doc["spec"]
    elif doc.get("format") == "pflref-spec/1":
        vid, spec = os.path.splitext(os.path.basename(path))[0], doc
    else:
        raise Unsupported("not a golden vector or spec (format %r)"
                          % doc.get("format"))
    algo = spec["algorithm"]["name"]
    if algo not in ALGORITHMS:
        raise Unsupported("algorithm %r" % algo)
    if spec["schedule"]["kind"] != "given" and algo != "fedavg":
        # fedavg draws its own (schedule_rounds); the others replay
        raise Unsupported("a generated schedule (replay a given one)")
    pfl_numpy_optim.for_run(spec)          # opt.* only where local_sgd runs
    clients = load_clients(spec, os.path.dirname(path))
    init = spec.get("init", {"kind": "zeros"})
    P = parameter_count(spec["model"])
    if init["kind"] == "zeros":
        w0 = np.zeros(P)
    elif init["kind"] == "given":
        w0 = np.asarray(init["w"], dtype=float)
    else:
        raise Unsupported("init %r (give w0 as data)" % init["kind"])

    log = Recorder()
    final = ALGORITHMS[algo](spec, clients, w0, log)
    out = {"w": [float(x) for x in final["w"]]} if "w" in final else {}
    if "v" in final:
        out["v"] = [[float(x) for x in v_i] for v_i in final["v"]]
    if "alpha" in final:
        out["alpha"] = [float(a) for a in final["alpha"]]
    return {"format": "pflref-result/1", "id": vid, "final": out,
            "trajectory": log.records}


def write_json(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)   # Python writes the shortest round-trip repr
        f.write("\n")
    os.replace(tmp, path)


def main():
    global BUG
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vector", nargs="?", help="a golden vector or spec file")
    ap.add_argument("--all", metavar="GOLDEN_DIR",
                    help="run every supported vector under GOLDEN_DIR")
    ap.add_argument("-o", required=True, metavar="OUT",
                    help="result file (folder with --all)")
    ap.add_argument("--bug", choices=BUGS, help="switch on one catalogued bug")
    args = ap.parse_args()
    BUG = args.bug
    if (args.vector is None) == (args.all is None):
        ap.error("give one VECTOR or --all GOLDEN_DIR")

    if args.vector:
        try:
            write_json(run_file(args.vector), args.o)
        except Unsupported as e:
            sys.exit("pfl_numpy.py: %s: unsupported: %s" % (args.vector, e))
        return

    os.makedirs(args.o, exist_ok=True)
    ran = 0
    for root, dirs, files in sorted(os.walk(args.all)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith(".json"):
                continue
            with open(path) as f:
                try:
                    if json.load(f).get("format") != "pflref-golden/1":
                        continue              # problem files, plain specs
                except (ValueError, AttributeError):
                    continue
            try:
                result = run_file(path)
            except Unsupported as e:
                print("skipped %s: %s" % (path, e), file=sys.stderr)
                continue
            out = os.path.join(args.o, result["id"].replace("/", "__") + ".json")
            write_json(result, out)
            ran += 1
    print("pfl_numpy.py: %d vectors run, results in %s" % (ran, args.o),
          file=sys.stderr)


# TsingZ0/PFLlib's serverpFedMe.train() as shipped: pfllib and the
# evaluation's side effect (a client's first θ starts at w0)
PRESETS[("pfedme", "pfllib_run")] = dict(PRESETS[("pfedme", "pfllib")],
                                         **{"pfedme.eval_reset": "initial"})


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
