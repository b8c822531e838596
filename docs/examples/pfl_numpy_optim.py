"""pfl_numpy_optim.py: the client optimizers (opt.* switches and
hyperparameters) for the NumPy candidate's local steps, written from
docs/optimizers.md and torch's documented update rules (torch.optim.SGD,
Adam, AdamW, torch.nn.utils.clip_grad_norm_), not from pflref's C code.

The step sees d = ∇f(θ; D) (+ the proximal term where the step has one)
on the moving blocks (the job's mask, never a buffer such as batchnorm's
running statistics), and computes, in order:

  clip (opt.clip = norm)   d ← d · c/(‖d‖ + 10⁻⁶) when that is < 1, ‖d‖
                           over the moving blocks (clip_grad_norm_)
  coupled decay            d ← d + λ_B θ              (SGD, Adam)
  decoupled decay          θ ← θ (1 − η λ_B)          (AdamW, or
                           opt.weight_decay_form = decoupled)
  SGD, pytorch form        b ← d at the block's first step, else
                           b ← μ b + (1 − τ) d; d ← d + μ b (Nesterov) or
                           d ← b; θ ← θ − η d
  SGD, classical form      v ← μ v − η d; θ ← θ + v   (Polyak; Sutskever
                           et al. 2013)
  Adam, AdamW              t ← t + 1; m ← β₁ m + (1 − β₁) d;
                           v ← β₂ v + (1 − β₂) d²;
                           θ ← θ − η/(1 − β₁ᵗ) · m / (√v/√(1 − β₂ᵗ) + ε)

λ_B is λ on the blocks of opt.decay_scope (all; weights: not the biases
nor the batchnorm blocks; shared, personal: the split's), else 0.  State
(buffers and step counts per block, as torch keeps them per parameter)
lives as long as opt.state says: reset, a new optimizer for each client
update; client, one per client and slot, kept across rounds (PFLlib's
clientbase.py); server, one per slot carried from client to client.
"""
import importlib
import sys

import numpy as np

DEFAULTS = {"opt.method": "sgd", "opt.momentum": 0.0, "opt.dampening": 0.0,
            "opt.weight_decay": 0.0, "opt.beta1": 0.9, "opt.beta2": 0.999,
            "opt.eps": 1e-8, "opt.momentum_form": "pytorch",
            "opt.nesterov": "off", "opt.weight_decay_form": "coupled",
            "opt.decay_scope": "all", "opt.clip": "off",
            "opt.state": "reset"}
# the algorithms whose local steps take the optimizer here (local_sgd,
# FedBN's own loop, LoRA's adapter steps: for_adapter; pFedMe's and prox's
# inner solver: prox_inner)
TAKES = ("fedavg", "local", "finetune", "fedbn", "lora", "feddyn", "scaffold", "fedprox",
         "pfedme", "prox", "fedrecon", "apple", "apfl", "interp", "pfedhn",
         "perfedavg", "pflego", "fedrod", "fedpac", "moon", "fedala", "fedproto",
         "cfl", "ifca", "fedfomo", "ditto", "fedalt", "fedsim")
CLIP_EPS = 1e-6                  # clip_grad_norm_'s 1e-6 beside the norm


def _base():
    main = sys.modules.get("__main__")
    if hasattr(main, "local_sgd") and hasattr(main, "Unsupported"):
        return main
    return importlib.import_module("pfl_numpy")


def options(spec):
    """The opt.* settings of the spec, the defaults filled in."""
    alg = spec["algorithm"]
    cfg = dict(DEFAULTS)
    for part in ("hyperparameters", "switches"):
        cfg.update({k: v for k, v in alg.get(part, {}).items()
                    if k.startswith("opt.")})
    return cfg


def plain(cfg):
    """The papers' plain SGD: the local steps need no optimizer."""
    return cfg["opt.method"] == "sgd" and cfg["opt.momentum"] == 0 and \
        cfg["opt.weight_decay"] == 0 and cfg["opt.clip"] == "off"


class Optimizer:
    """One torch optimizer's state over the parameter blocks."""

    def __init__(self, cfg, blocks, decays, buffer):
        self.cfg = cfg
        self.blocks = blocks            # [(name, lo, hi)]
        self.decays = decays            # True where λ_B = λ (opt.decay_scope)
        self.buffer = buffer            # batchnorm's statistics: never step
        self.state = {}                 # block name → its buffers, count

    def clip(self, d, mask=None):
        """d on the entries of mask (all by default) that are not buffers,
        0 elsewhere, then clip_grad_norm_ over them under opt.clip = norm:
        d · c/(‖d‖ + 10⁻⁶) when that factor is < 1."""
        moving = ~self.buffer if mask is None else mask & ~self.buffer
        d = np.where(moving, d, 0.0)
        if self.cfg["opt.clip"] == "norm":
            coef = self.cfg["opt.clip_norm"] / (np.sqrt(np.sum(d * d)) + CLIP_EPS)
            if coef < 1.0:
                d = d * coef
        return d

    def step(self, theta, d, eta, mask=None, clipped=False):
        """θ after one step on d at step size η; only the entries of mask
        (all by default) that are not buffers move, and a block with none
        keeps its state.  clipped: d is already clip()'s, over a wider set
        than mask (one torch step over several parameter groups, each with
        its own η, clips once over all of them: FedSim's, APPLE's)."""
        cfg = self.cfg
        lam = cfg["opt.weight_decay"]
        moving = ~self.buffer if mask is None else mask & ~self.buffer
        d = np.where(moving, d, 0.0) if clipped else self.clip(d, mask)
        adam = cfg["opt.method"] != "sgd"
        decoupled = cfg["opt.method"] == "adamw" or \
            cfg["opt.weight_decay_form"] == "decoupled"
        theta = theta.copy()
        for name, lo, hi in self.blocks:
            if not moving[lo:hi].any():
                continue
            x, g = theta[lo:hi], d[lo:hi]
            lam_B = lam * self.decays[lo:hi]
            st = self.state.setdefault(name, {"t": 0})
            if decoupled:
                x = x * (1.0 - eta * lam_B)           # AdamW's θ(1 − ηλ)
            else:
                g = g + lam_B * x                     # d + λθ
            if adam:
                x = self.adam(st, x, g, eta)
            else:
                x = self.sgd(st, x, g, eta)
            theta[lo:hi] = np.where(moving[lo:hi], x, theta[lo:hi])
        return theta

    def sgd(self, st, x, g, eta):
        cfg = self.cfg
        mu, tau = cfg["opt.momentum"], cfg["opt.dampening"]
        if mu != 0 and cfg["opt.momentum_form"] == "classical":
            st["v"] = mu * st.get("v", 0.0) - eta * g    # v ← μv − ηd
            return x + st["v"]                           # θ ← θ + v
        if mu != 0:             # torch.optim.SGD: no buffer without momentum
            if "b" not in st:                            # the block's first step
                st["b"] = g
            else:
                st["b"] = mu * st["b"] + (1.0 - tau) * g
            if cfg["opt.nesterov"] == "on":
                g = g + mu * st["b"]
            else:
                g = st["b"]
        return x - eta * g

    def adam(self, st, x, g, eta):
        cfg = self.cfg
        b1, b2, eps = cfg["opt.beta1"], cfg["opt.beta2"], cfg["opt.eps"]
        st["t"] += 1
        t = st["t"]
        st["m"] = b1 * st.get("m", 0.0) + (1.0 - b1) * g
        st["v"] = b2 * st.get("v", 0.0) + (1.0 - b2) * g * g
        step_size = eta / (1.0 - b1 ** t)
        denom = np.sqrt(st["v"]) / np.sqrt(1.0 - b2 ** t) + eps
        return x - step_size * st["m"] / denom


def decay_scope(spec, cfg, blocks):
    """True on the entries weight decay applies to (opt.decay_scope): all;
    weights: not the biases (b, b1, b2, NAME.bias) nor the batchnorm
    blocks; shared, personal: the split's."""
    base = _base()
    if cfg["opt.decay_scope"] == "shared":
        return ~base.personal_mask(spec, base.split_names(spec))
    if cfg["opt.decay_scope"] == "personal":
        return base.personal_mask(spec, base.split_names(spec))
    on = np.ones(base.parameter_count(spec["model"]), dtype=bool)
    if cfg["opt.decay_scope"] == "weights":
        for name, off, size, groups in blocks:
            if name in ("b", "b1", "b2") or name.endswith(".bias") \
                    or "bn" in groups or name.startswith("bn_"):
                on[off:off + size] = False
    return on


class Optimizers:
    """Every client's optimizers of one run, by opt.state.  The model's
    parameter blocks by default; blocks [(name, lo, hi)] over a vector of
    `size` entries instead (LoRA's adapter: every block decays, none is a
    buffer)."""

    def __init__(self, spec, blocks=None, size=None):
        base = _base()
        self.cfg = cfg = options(spec)
        if cfg["opt.method"] not in ("sgd", "adam", "adamw"):
            raise base.Unsupported("opt.method %r" % cfg["opt.method"])
        if blocks is not None:
            if cfg["opt.decay_scope"] not in ("all", "weights"):
                raise base.Unsupported("opt.decay_scope %r on an adapter"
                                       % cfg["opt.decay_scope"])
            self.blocks = list(blocks)
            self.buffer = np.zeros(size, dtype=bool)
            self.decays = np.ones(size, dtype=bool)
            self.kept = {}
            return
        model = spec["model"]
        blocks = base.model_blocks(model)
        self.blocks = [(name, off, off + size) for name, off, size, _ in blocks]
        self.buffer = np.zeros(base.parameter_count(model), dtype=bool)
        for name, off, size, _ in blocks:
            if name.endswith("running_mean") or name.endswith("running_var"):
                self.buffer[off:off + size] = True
        self.decays = decay_scope(spec, cfg, blocks)
        self.kept = {}

    def begin(self, slot, client):
        """The optimizer of client's update in slot: a new one under
        opt.state = reset, the client's own under client, the slot's one
        under server."""
        if self.cfg["opt.state"] == "reset":
            return Optimizer(self.cfg, self.blocks, self.decays, self.buffer)
        key = (slot, client if self.cfg["opt.state"] == "client" else None)
        if key not in self.kept:
            self.kept[key] = Optimizer(self.cfg, self.blocks, self.decays,
                                       self.buffer)
        return self.kept[key]


def for_run(spec):
    """The run's optimizers, or None for the papers' plain SGD."""
    if plain(options(spec)):
        return None
    if spec["algorithm"]["name"] not in TAKES:
        raise _base().Unsupported("opt.* on %s (this candidate's optimizers "
                                  "drive %s)" % (spec["algorithm"]["name"],
                                                 ", ".join(TAKES)))
    return Optimizers(spec)


def for_adapter(spec, blocks, size):
    """LoRA's optimizers over the adapter q (blocks <layer>.lora_A,
    <layer>.lora_B), or None for the papers' plain step."""
    if plain(options(spec)):
        return None
    return Optimizers(spec, blocks, size)
# SPDX-License-Identifier: GPL-3.0-or-later
