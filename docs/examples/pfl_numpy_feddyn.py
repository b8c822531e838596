# SPDX-License-Identifier: GPL-3.0-or-later
"""pfl_numpy_feddyn.py: FedDyn for the NumPy candidate (pfl_numpy.py loads
it), written from Acar, Zhao, Matas, Mattina, Whatmough, Saligrama (ICLR
2021, arXiv 2111.04263v2, Algorithm 1) and the two codes docs/algorithms/
feddyn.md reads (alpemreacar/FedDyn, TsingZ0/PFLlib), not from pflref's C
code.

Each round, from the server model w = θ^{t−1}, every participant k (in
ascending order) takes one SGD step per scheduled batch on
    L_k(θ) − ⟨G_k, θ⟩ + (α_k/2)‖θ − w‖²        (paper)
    L_k(θ) − ⟨G_k, θ⟩ + (α_k/2)‖θ − w‖         (feddyn.prox = norm_half,
                                                PFLlib's torch.norm)
then G_k ← G_k − α_k (θ_k − w); the others keep G_k.  The server:
    h ← h − (α/m) Σ_{k∈P_t} (θ_k − w)           (feddyn.h_sum = literal:
                                                (Σ θ_k) − w)
    w ← mean_{k∈P_t} θ_k − h/α
with m every device, α_k = α, or α m⁻¹ Σ_j n_j / n_k (feddyn.alpha_k =
size_scaled, the authors' alpha_coef / weight_list).  G_k and h start at 0
and are recorded as notes "grad_L" (device k) and "h" (the round).  On a
layer list with batch normalisation every step's training pass moves the
running statistics, which are no parameters: the proximal term, its norm,
G_k and h leave them out (PFLlib's model_parameter_vector, clientdyn.py:
102-104), so the server's mean averages them; under bn.aggregate =
parameters_only (PFLlib's set_parameters, clientdyn.py:65-67, and
aggregate_parameters, serverdyn.py:85-93) a device starts from w's
parameters with the running statistics its own model last left, and the new
w takes the first participant's.  The
client optimizer (opt.*, pfl_numpy_optim) steps on the local objective's
gradient; lr.* decays each device's η by γ^k (pfl_numpy.lr_factor: k the
round, or under lr.count = trainings the device's own trainings before, as
PFLlib steps a client's ExponentialLR after its train(), clientdyn.py:58-59).
"""
import importlib
import sys

import numpy as np

ALGORITHM = "feddyn"
BUGS = ("feddyn-linear-term-plus", "feddyn-no-linear-term",
        "feddyn-grad-state-plus", "feddyn-grad-state-reset",
        "feddyn-h-over-participants", "feddyn-no-correction",
        "feddyn-h-literal-ignored", "feddyn-alpha-k-ignored",
        "feddyn-norm-squared", "feddyn-weight-decay-ignored")
# the presets as docs/algorithms/feddyn.md gives them
PRESETS = {"official": {"feddyn.alpha_k": "size_scaled",
                        "opt.weight_decay": 0.001},
           "pfllib": {"feddyn.prox": "norm_half",
                      "lr.count": "trainings",
                      "bn.aggregate": "parameters_only"}}
DEFAULTS = {"feddyn.alpha_k": "uniform", "feddyn.prox": "squared",
            "feddyn.h_sum": "differences", "lr.schedule": "constant",
            "lr.count": "rounds", "bn.aggregate": "average"}


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def config(spec):
    """The defaults, then the preset's settings, then the spec's own."""
    alg = spec["algorithm"]
    cfg = dict(DEFAULTS)
    preset = alg.get("preset", "paper")
    if preset != "paper":
        cfg.update(PRESETS[preset])
    cfg.update(alg.get("hyperparameters", {}))
    cfg.update(alg.get("switches", {}))
    return cfg


def optimizers(spec, cfg, bug):
    """The client optimizers of the run (the preset's opt.* included), or
    None for plain SGD."""
    import pfl_numpy_optim
    if bug == "feddyn-weight-decay-ignored":
        cfg = dict(cfg, **{"opt.weight_decay": 0.0})
    eff = dict(spec, algorithm={"name": ALGORITHM, "hyperparameters": cfg})
    if pfl_numpy_optim.plain(pfl_numpy_optim.options(eff)):
        return None
    return pfl_numpy_optim.Optimizers(eff)


def local_steps(x, w, data, batches, eta, G_k, a_k, cfg, opt, log, bug):
    """l. 5: one step per batch on the local objective from x (w's
    parameters)."""
    base = _base()
    for s, batch in enumerate(batches, start=1):
        d = data.grad(x, batch)
        if bug != "feddyn-no-linear-term":
            d = d + G_k if bug == "feddyn-linear-term-plus" else d - G_k
        diff = base.parameters_only(data, x - w)
        if cfg["feddyn.prox"] == "norm_half" and bug != "feddyn-norm-squared":
            norm = np.sqrt(np.sum(diff * diff))
            if norm > 0:
                d = d + 0.5 * a_k / norm * diff
        else:
            d = d + a_k * diff
        x = opt.step(x, d, eta) if opt is not None else x - eta * d
        x = base.track(data, x)
        log(s, x)
    return x


def run(spec, clients, w0, log, bug):
    base = _base()
    cfg = config(spec)
    eta, alpha = cfg["eta"], cfg["feddyn.alpha"]
    m = len(clients)
    n = np.array([c.n for c in clients], dtype=float)
    a = np.full(m, alpha)
    if cfg["feddyn.alpha_k"] == "size_scaled" and bug != "feddyn-alpha-k-ignored":
        a = alpha / (n / np.sum(n) * m)
    literal = cfg["feddyn.h_sum"] == "literal" and bug != "feddyn-h-literal-ignored"
    opts = optimizers(spec, cfg, bug)
    G = np.zeros((m, w0.size))
    h = np.zeros_like(w0)
    w = w0.copy()
    # bn.aggregate = parameters_only: each device's own running statistics
    keep = base.kept_buffers(cfg, clients)
    mine = [np.array(w0, dtype=float) for _ in clients]
    trained = [0] * m
    for t, rnd in enumerate(spec["schedule"]["rounds"]):
        log("round_begin", "train", "w", w, round=t)
        if bug == "feddyn-grad-state-reset":
            G = np.zeros_like(G)
        plan = dict(zip(rnd["clients"], rnd["batches"]))
        uploads = []
        for k in sorted(plan):
            x = w.copy() if keep is None else np.where(keep, mine[k], w)
            log("client_begin", "train", "theta_k", x, round=t, client=k, step=0)
            eta_k = eta * base.lr_factor(cfg, t, trained[k])
            trained[k] += 1
            x = local_steps(x, w, clients[k], plan[k], eta_k, G[k], a[k], cfg,
                            opts and opts.begin(0, k),
                            lambda s, v, k=k: log("step", "train", "theta_k", v,
                                                  round=t, client=k, step=s),
                            bug)
            log("client_end", "train", "theta_k", x, round=t, client=k)
            mine[k] = x.copy()
            moved = base.parameters_only(clients[k], x - w)
            if bug == "feddyn-grad-state-plus":
                G[k] = G[k] + a[k] * moved
            else:
                G[k] = G[k] - a[k] * moved
            log("note", "train", "grad_L", G[k], round=t, client=k)
            uploads.append(x)
        X = np.array(uploads)
        S = np.sum(X, axis=0) - w if literal else np.sum(X - w, axis=0)
        div = len(uploads) if bug == "feddyn-h-over-participants" else m
        h = h - alpha * base.parameters_only(clients[0], S) / div
        log("note", "train", "h", h, round=t)
        w = np.mean(X, axis=0)
        if bug != "feddyn-no-correction":
            w = w - h / alpha
        if keep is not None and plan:
            w = np.where(keep, mine[base.first_upload(rnd, plan)], w)
        log("server", "train", "w", w, round=t)
    return {"w": w}
