#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Self-test of proofs/gappa/make_vectors.py's step rules: the decay of
the step sizes across rounds (Steps), torch's SGD, Adam and AdamW
(Optim), APPLE's loss scheduler (apple_lambda), batch normalisation and
the switches of the algorithms' replays (FedFomo, FedAMP, CFL, FedRecon,
pFedHN, Ditto, pFedMe, interpolation, fine-tuning, FedAlt, FedProx, APFL,
Per-FedAvg, FedSim, LoRA, FedALA, PFLEGO, FedProto, FedRoD, MOON,
FedBN, FedPAC), and Per-FedAvg's Hessian-vector product (layers_hvp).

A replay is checked against its vector as it is built: every exact value
it computes must round to the number the vector stores.  So each rule is
only as good as the vectors that would notice it wrong.  Here each rule
is planted wrong in turn, in this process (no file changes, no Gappa
needed), and the named vectors' replays must then fail, while every
vector of VECTORS, REPLAYED and UNSCRIPTED replays with the rules as
written:

  * Steps: no decay; the exponent counting rounds where the spec counts
    the client's own trainings (and the reverse); one train() call per
    round where Per-FedAvg's preset pfllib has two;
  * Optim: no momentum; momentum's first step from a zero buffer in
    torch's form; Nesterov off; no dampening; the state new at every
    client update (reset) where it is kept; one optimizer where Ditto,
    APFL and FedAlt have two; one step size where FedSim has two
    parameter groups; weight decay on every block whatever
    opt.decay_scope says; no clipping; Adam without its bias correction
    (β^t taken as 0); AdamW's decay coupled into d as Adam's;
  * APPLE's λ(r) (apple_lambda): the current round's where
    apple.lambda_round = previous reads the last one; the cosine
    scheduler where apple.scheduler = exponential;
  * FedFomo (fedfomo_run), each switch read as its default where the
    vector sets it: the weights added to P where fedfomo.P_update = raw
    or signed_abs_sum, P from zeros where fedfomo.P_init = own_0.1,
    the anchor where fedfomo.no_positive = keep_current, the client itself
    a candidate where fedfomo.self = excluded, the l2 distance where it is
    l1 or the per-tensor sum, and the sample mean where fedfomo.val_loss =
    batch_mean; its preset pfllib dropped, and the own upload left out of
    the ranking where fedfomo.self = ranked;
  * FedAMP (fedamp_run), likewise: every client a peer where fedamp.peers
    = previous, the message as the start where fedamp.start = own, the
    proximal term where fedamp.prox = detached;
  * CFL (cfl_run, cfl_bipartition): Algorithm 1 where the vector sets
    complete linkage and the reverse, uniform cluster weights where it
    sets samples, and the guards cfl.min_cluster_size and cfl.warmup
    dropped;
  * the switches of FedRecon (each of its four), pFedHN's clipping,
    Ditto's moving reference and norm proximal term, pFedMe's evaluation
    defect, interpolation's selection set, fine-tuning's scope, FedAlt's
    fine-tuning start and step, FedFomo's top-M choice, FedProx's
    sampling, APFL's output mixing, Per-FedAvg's variant on the mlp, and
    LoRA's method, targets and weights and HetLoRA's weights and scaling,
    each read as its default where a vector sets it; HetLoRA's
    regulariser dropped; HetLoRA's optimizer state kept on the
    truncated ranks (the Optim rules above and the running statistics
    never moved are planted in LoRA's layer-list vectors too); FedSim's
    preset lg_fedavg's split read as the head; FedALA's skip rule, unit
    and ALA clients read as their defaults and its presets dropped;
    PFLEGO's θ weights, head step and server on the cross-entropy mlp,
    and Adam's b1, b2 and ε taken as their doubles rather than the
    decimals the docs state; FedProto's distance, client prototypes and
    weights, and FedRoD's features and initial personal head read as
    their defaults; FedPAC's distance and small weights read as their
    defaults, its presets dropped, and its QP's first support taken
    without the KKT tests; FedRoD's given class counts dropped; MOON's preset
    official dropped, its z_prev taken as z_glob (no previous model) and
    τ as 1;
  * layer lists (layers_forward, layers_backward, dropout_feed): the
    backward pass through a relu without its mask (the layer lists'
    vectors, FedProto's and FedRoD's body gradients among them);
    dropout's kept entries
    not rescaled by fl(1/(1 − p)); each round's dropout passes taken in
    reverse order (Ditto's personal and global steps, APFL's two
    gradients, Per-FedAvg HF's passes); FedFomo's validation losses as
    training passes (taking masks) where fedfomo.val_mode = eval;
  * batch normalisation (bn_forward, bn_backward, bn_move, fedbn_run):
    the running statistics never moved; bn.running = frozen,
    bn.running_var = biased and FedBN's fedbn.running_var = biased read
    as their defaults; the backward pass without the batch statistics'
    terms (evaluation mode's γ G / s); γ in the weight-decay group under
    opt.decay_scope = weights; the running statistics averaged where
    bn.aggregate = parameters_only keeps each client's own (FedAvg,
    Ditto, FedProx, FedAlt, pFedMe, FedFomo, FedAMP, SCAFFOLD), FedFomo's
    distance and
    mixture over every entry there, pFedMe's line 8 stepping the running
    statistics (w_{i,r+1} not taking θ's), θ's running statistics not
    moved by pFedMe's inner passes, and the first participant's taken
    where the schedule names the first upload; IFCA's evaluation-mode
    estimates, MOON's z_glob and z_prev, FedProto's trained prototypes
    and FedALA's evaluation-mode ALA passes as training passes; the
    server's running statistics averaged where FedALA and FedPAC take the
    first uploader's; MOON's preset pfllib dropped; FedRoD's
    bn.aggregate = average over its preset pfllib read as the preset's
    parameters_only; FedDyn's ∇L_k and h updated on the running
    statistics too; FedBN's BN blocks averaged;
  * Per-FedAvg's exact variant (layers_hvp's R-operator): its training
    pass not moving the running statistics; batch normalisation's
    R-forward pass as evaluation mode's (R{x̂} = R{a}/s); its R{c}
    without −c R{s}/s; conv2d's R{Y} without V col(X) and its (Hv)_W
    without dY col(R{X}); tanh's and sigmoid's σ'' term dropped; and
    Per-FedAvg's bn.aggregate = parameters_only read as average.

It also checks Trace's carrying of approximated exact values
(carried_rules): a carried operand carries the result of an operation
and of the any-order dot-product model (Trace.derived), and an exact 0
factor keeps the result exact.

    python3 tests/lint/test_make_vectors.py   (make check-lint runs it)

Not planted: the per-block step count (a block that starts moving in a
state, FedAlt's shared block in its fine-tuning, takes b ← d): with no
dampening, μ·0 + (1 − τ) d is d exactly, and no vector has such a block
and dampening both.

Exit status: 0 every case as expected, 1 otherwise.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "proofs", "gappa"))
import make_vectors as mv  # noqa: E402


def replays(vid):
    """True when VID's replay reproduces its vector."""
    try:
        mv.build(vid)
    except SystemExit:
        return False
    return True


def planted(cls, name, wrong):
    """A context in which CLS's method NAME is WRONG (given the original
    as its first argument)."""
    class Plant:
        def __enter__(self):
            self.orig = getattr(cls, name)
            orig = self.orig
            setattr(cls, name, lambda *a, **k: wrong(orig, *a, **k))

        def __exit__(self, *exc):
            setattr(cls, name, self.orig)
    return Plant()


def after_init(change):
    """A wrong Optim.__init__: the original, then CHANGE(self)."""
    def wrong(orig, self, *a, **k):
        orig(self, *a, **k)
        change(self)
    return wrong


def first_step_from_zero(orig, self, i, x, d, eta, slot=0, *a, **k):
    """torch's form with b ← μ·0 + (1 − τ) d at the first step."""
    key = (i if self.lifetime == "client" else None, slot)
    if key not in self.sets:
        self.sets[key] = ({p: self.t.const(0.0) for p in range(len(x))},
                          {ent[0]: 1 for ent, _, _ in self.blocks}, {})
    return orig(self, i, x, d, eta, slot, *a, **k)


def the_other_count(self, *a, **k):
    """Steps counting the other way (rounds for trainings and back)."""
    self.trainings = not self.trainings


def bn_backward_eval(orig, t, L, at, w, kp, E, g):
    """batchnorm1d's training-mode backward pass without the batch
    statistics' terms: g_γ, g_β as written, δ_j = γ G_j / s."""
    orig(t, L, at, w, kp, [list(r) for r in E], g)
    gam = [w[p] for p in at[L["name"] + ".weight"]]
    return [[t.op(t.op(gam[c], "*", e), "/", kp["s"][c])
             for c, e in enumerate(row)] for row in E]


def flipped_kernel(orig, L, x, zero):
    """im2col with each channel's κ × κ rows in reverse order: the kernel
    flipped, a true convolution instead of PyTorch's cross-correlation."""
    col, kk = orig(L, x, zero), L["kernel"] ** 2
    return [row for c in range(0, len(col), kk)
            for row in reversed(col[c:c + kk])]


def transposed_weight(orig, t, L, W, b, rows):
    """conv2d's weight read as C·κ·κ × O, not PyTorch's O × C × κ × κ."""
    O = L["oshape"][0]
    K = len(W) // O
    return orig(t, L, [W[r * O + o] for o in range(O) for r in range(K)],
                b, rows)


def undivided_pool_signal(orig, t, L, E, kp):
    """Average pooling's backward pass handing dY, not dY/κ², to each entry
    of the window (the signal scaled by κ² first: (κ² dY)/κ² = dY)."""
    if L["type"] != "avgpool2d":
        return orig(t, L, E, kp)
    area = t.const(float(L["kernel"] ** 2))
    return orig(t, L, [[t.op(e, "*", area) for e in row] for row in E], kp)


def per_entry_bn_grads(orig, t, L, at, w, kp, E, g):
    """Batch normalisation's g_γ and g_β divided by M = nb·H·W, the
    entries normalised, instead of by nb."""
    out = orig(t, L, at, w, kp, E, g)
    hw = t.const(float(L["HW"]))
    for b in ("weight", "bias"):
        for p in at[L["name"] + "." + b]:
            g[p] = t.op(g[p], "/", hw)
    return out


def bn_r_forward_eval(orig, t, L, at, w, v, rows, R_rows, kp):
    """Batch normalisation's R-forward pass without the batch statistics'
    terms (evaluation mode's R{x̂} = R{a} / s, R{s} = 0)."""
    orig(t, L, at, w, v, rows, R_rows, kp)
    n, C, HW = L["name"], L["C"], L["HW"]
    gam, vg, vb = ([x[p] for p in at[n + "." + b]]
                   for x, b in ((w, "weight"), (v, "weight"), (v, "bias")))
    Rx = [[t.op(r[e], "/", kp["s"][e // HW]) for e in range(C * HW)]
          for r in R_rows]
    out = [[t.op(t.op(t.op(vg[e // HW], "*", x[e]), "+",
                      t.op(gam[e // HW], "*", rx[e])), "+", vb[e // HW])
            for e in range(C * HW)] for x, rx in zip(kp["xhat"], Rx)]
    return out, {"Rxhat": Rx, "Rs": [t.const(0.0)] * C}


def switch_default(name):
    """A wrong replay: the switch NAME dropped from the spec (its default
    read instead)."""
    def wrong(orig, spec):
        alg = dict(spec["algorithm"])
        alg["switches"] = {k: v for k, v in alg.get("switches", {}).items()
                           if k != name}
        return orig(dict(spec, algorithm=alg))
    return wrong


def preset_dropped(orig, spec):
    """A wrong replay: the spec's preset dropped (the paper's switches
    read instead of the preset's)."""
    return orig(dict(spec, algorithm={
        k: x for k, x in spec["algorithm"].items() if k != "preset"}))


def hyper_dropped(name):
    """A wrong replay: the hyperparameter NAME dropped from the spec (the
    guard or term it sets off)."""
    def wrong(orig, spec):
        alg = dict(spec["algorithm"])
        alg["hyperparameters"] = {k: v for k, v in
                                  alg["hyperparameters"].items() if k != name}
        return orig(dict(spec, algorithm=alg))
    return wrong


def reversed_passes(schedule):
    """SCHEDULE with each participant's dropout passes of each round in
    reverse order (a replay taking its passes out of the run's order)."""
    rounds = [dict(rd, dropout=[list(reversed(p)) for p in rd["dropout"]])
              if "dropout" in rd else rd for rd in schedule["rounds"]]
    return dict(schedule, rounds=rounds)


def uniform_decay(self):
    """λ on every block, whatever opt.decay_scope takes."""
    top = max(self.lam.values(), key=lambda v: v[2])
    self.lam = {p: top for p in self.lam}


CASES = [
    ("Steps: no decay", mv.Steps, "of",
     lambda orig, self, base, *a, **k: base,
     ["fedavg/worked-lr-exponential", "fedavg/worked-lr-step",
      "pfedme/worked-linear-decay-paper", "fedamp/worked-paper-ld"]),
    ("Steps: rounds for trainings", mv.Steps, "__init__",
     lambda orig, self, *a, **k: (orig(self, *a, **k),
                                  the_other_count(self))[0],
     ["fedavg/worked-lr-per-client", "local/worked-pfllib-decay",
      "scaffold/worked-linear-pfllib", "fedamp/worked-pfllib-ld"]),
    ("Steps: one train() call", mv.Steps, "of",
     lambda orig, self, base, ri, i, call=0, calls=1:
     orig(self, base, ri, i, 0, 1),
     ["perfedavg/worked-linear-pfllib-decay"]),
    ("Optim: no momentum", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "mu", s.t.const(0.0))),
     ["optim/fedavg-momentum-pytorch", "optim/fedavg-momentum-classical",
      "scaffold/worked-linear-ii-momentum",
      "optim/perfedavg-classical-shared-server-decay",
      "lora/worked-layers-mlp-sgd-server"]),
    ("Optim: first step from a zero buffer", mv.Optim, "step",
     first_step_from_zero,
     ["optim/fedavg-momentum-pytorch", "optim/ifca-momentum-client"]),
    ("Optim: Nesterov off", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "nesterov", False)),
     ["optim/fedavg-nesterov-reset", "optim/ditto-nesterov-clip-step-server"]),
    ("Optim: no dampening", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "tau", s.t.const(0.0))),
     ["optim/fedavg-momentum-pytorch", "optim/ditto-momentum-client"]),
    ("Optim: state reset", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "lifetime", "reset")),
     ["optim/fedavg-momentum-classical", "optim/ditto-momentum-client",
      "optim/local-nesterov-clip-step-server", "optim/fedavg-adamw",
      "optim/fedavg-adam-server"]),
    ("Optim: one slot", mv.Optim, "step",
     lambda orig, self, i, x, d, eta, slot=0, *a, **k:
     orig(self, i, x, d, eta, 0, *a, **k),
     ["optim/ditto-momentum-client", "optim/ditto-classical-client-decay",
      "optim/apfl-momentum-server", "optim/fedalt-decay-shared-client"]),
    ("Optim: one parameter group", mv.Optim, "step",
     lambda orig, self, i, x, d, eta, slot=0, moving=None, eta_v=None:
     orig(self, i, x, d, eta, slot, moving),
     ["optim/fedsim-decay-weights-groups",
      "optim/fedsim-classical-client-decay"]),
    ("Optim: decay on every block", mv.Optim, "__init__",
     after_init(uniform_decay),
     ["optim/fedavg-decay-coupled-weights",
      "optim/fedprox-classical-personal-client",
      "optim/perfedavg-classical-shared-server-decay"]),
    ("Optim: no clipping", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "clip", False)),
     ["optim/fedavg-clip", "optim/local-clip-rational",
      "optim/ifca-nesterov-clip-server",
      "optim/apfl-pfllib-clip-momentum-client",
      "optim/local-adamw-clip-step-server", "optim/lora-adamw-clip-client"]),
    ("Adam: no bias correction", mv.Trace, "pow",
     lambda orig, self, a, k: self.const(0.0),
     ["optim/fedavg-adamw", "optim/fedavg-adam-server",
      "optim/ifca-adamw-client", "lora/worked-layers-mlp-adam"]),
    ("AdamW: decay coupled", mv.Optim, "__init__",
     after_init(lambda s: setattr(s, "decoupled", False)),
     ["optim/fedavg-adamw", "optim/ditto-adamw-client-decay",
      "optim/fedsim-adamw-client-decay"]),
    ("APPLE: λ of the current round", mv, "apple_lambda",
     lambda orig, t, hp, sw, ri:
     orig(t, hp, dict(sw, **{"apple.lambda_round": "current"}), ri),
     ["apple/worked-lambda-previous", "apple/worked-pfllib",
      "apple/worked-pfllib-run"]),
    ("APPLE: the cosine scheduler", mv, "apple_lambda",
     lambda orig, t, hp, sw, ri:
     orig(t, hp, dict(sw, **{"apple.scheduler": "cosine"}), ri),
     ["apple/worked-exponential", "apple/worked-official",
      "apple/worked-official-lr-exponential"]),
    ("FedFomo: P_update = weights", mv, "fedfomo_run",
     switch_default("fedfomo.P_update"),
     ["fedfomo/worked-hand-raw", "fedfomo/worked-equal-rounding",
      "fedfomo/worked-draws-nvlabs"]),
    ("FedFomo: P_init = zeros", mv, "fedfomo_run",
     switch_default("fedfomo.P_init"), ["fedfomo/worked-draws-nvlabs"]),
    ("FedFomo: no_positive = anchor", mv, "fedfomo_run",
     switch_default("fedfomo.no_positive"), ["fedfomo/worked-linear-val-keep"]),
    ("FedFomo: self = included", mv, "fedfomo_run",
     switch_default("fedfomo.self"),
     ["fedfomo/worked-linear-val-excl", "fedfomo/worked-equal-rounding"]),
    ("FedFomo: distance = l2", mv, "fedfomo_run",
     switch_default("fedfomo.distance"),
     ["fedfomo/worked-linear-val-l1", "fedfomo/worked-linear-val-batches"]),
    ("FedFomo: val_loss = sample_mean", mv, "fedfomo_run",
     switch_default("fedfomo.val_loss"),
     ["fedfomo/worked-linear-val-batches"]),
    ("FedAMP: peers = all", mv, "fedamp_run",
     switch_default("fedamp.peers"), ["fedamp/worked-peers-previous"]),
    ("FedAMP: start = message", mv, "fedamp_run",
     switch_default("fedamp.start"), ["fedamp/worked-start-own"]),
    ("FedAMP: prox = squared", mv, "fedamp_run",
     switch_default("fedamp.prox"), ["fedamp/worked-detached"]),
    ("CFL: bipartition = optimal", mv, "cfl_run",
     switch_default("cfl.bipartition"),
     ["cfl/worked-counterexample-complete-linkage",
      "cfl/worked-boundary-tie-complete-linkage"]),
    ("CFL: cluster_weights = uniform", mv, "cfl_run",
     switch_default("cfl.cluster_weights"),
     ["cfl/worked-seed003-samples",
      "cfl/worked-spread-complete-linkage-samples"]),
    ("CFL: no minimum cluster size", mv, "cfl_run",
     hyper_dropped("cfl.min_cluster_size"),
     ["cfl/worked-thresholds-min-size"]),
    ("CFL: no warm-up", mv, "cfl_run", hyper_dropped("cfl.warmup"),
     ["cfl/worked-thresholds-warmup-drawn"]),
    ("FedRecon: local_init = given", mv, "fedrecon_run",
     switch_default("fedrecon.local_init"),
     ["fedrecon/worked-last-uniform", "fedrecon/worked-whole-last"]),
    ("FedRecon: weights = samples", mv, "fedrecon_run",
     switch_default("fedrecon.weights"),
     ["fedrecon/worked-examples-kept", "fedrecon/worked-last-uniform"]),
    ("FedRecon: query = complement", mv, "fedrecon_run",
     switch_default("fedrecon.query"), ["fedrecon/worked-whole-last"]),
    ("FedRecon: eval = reconstruct", mv, "fedrecon_run",
     switch_default("fedrecon.eval"), ["fedrecon/worked-examples-kept"]),
    ("pFedHN: clip = off", mv, "pfedhn_run", switch_default("pfedhn.clip"),
     ["pfedhn/worked-linear-clip"]),
    ("Ditto: prox_ref = round_start", mv, "ditto_run",
     switch_default("ditto.prox_ref"),
     ["ditto/worked-linear-moving-interleaved"]),
    ("Ditto: prox = squared", mv, "ditto_run", switch_default("ditto.prox"),
     ["ditto/worked-norm-d1"]),
    ("pFedMe: line 7's proximal pull λ(θ − w) with its sign reversed", mv,
     "prox_inner",
     lambda orig, t, grad, th, w, lam, *a, **k: orig(
         t, grad, th, w, t.const(-lam[2]), *a, **k),
     ["layers/pfedme-cnn-two-rounds", "layers/pfedme-deep-two-rounds"]),
    ("pFedMe: eval_reset = none", mv, "pfedme_run",
     switch_default("pfedme.eval_reset"),
     ["pfedme/worked-linear-pfllib-eval-reset",
      "pfedme/worked-linear-pfllib-decay-eval-reset"]),
    ("interpolation: select = validation", mv, "interp_grid",
     switch_default("interp.select"),
     ["interp/worked-spread-grid-test-uniform"]),
    ("fine-tuning: scope = full", mv, "finetune_linear",
     switch_default("finetune.scope"),
     ["finetune/worked-default-personal", "finetune/worked-uniform-personal",
      "optim/finetune-decay-personal"]),
    ("FedAlt: finetune_start = global", mv, "pfl_run",
     switch_default("pfl.finetune_start"),
     ["fedalt/worked-finetune-last-local-decayed"]),
    ("FedAlt: finetune_lr = constant", mv, "pfl_run",
     switch_default("pfl.finetune_lr"),
     ["fedalt/worked-finetune-last-local-decayed"]),
    ("FedFomo: selection = eps_greedy", mv, "fedfomo_run",
     switch_default("fedfomo.selection"), ["fedfomo/worked-draws-pfllib"]),
    ("FedProx: sampling = paper", mv, "fedprox_run",
     switch_default("fedprox.sampling"), ["fedprox/worked-uniform-weighted"]),
    # (a linear model's outputs mix as its parameters do: only the mlp's
    # vectors notice)
    ("APFL: mix = parameter", mv, "apfl_run", switch_default("apfl.mix"),
     ["apfl/worked-mlp-output-adaptive", "apfl/worked-mlp-fedtorch",
      "layers/apfl-deep-output-adaptive"]),
    ("Per-FedAvg: variant = exact on the mlp", mv, "perfedavg_run",
     switch_default("perfedavg.variant"),
     ["perfedavg/worked-mlp-identity-hf",
      "perfedavg/worked-mlp-identity-hf-rounds"]),
    ("FedSim: lg_fedavg's split as the head", mv, "model_blocks",
     lambda orig, spec: orig(dict(spec, split={"personal": ["head"]}))
     if spec["algorithm"].get("preset") == "lg_fedavg" else orig(spec),
     ["fedsim/worked-notes-d-lg-fedavg"]),
    ("LoRA: method = personal", mv, "lora_run",
     switch_default("lora.method"),
     ["lora/worked-hand-fedavg", "lora/worked-hand-ffa",
      "lora/worked-mlp-hetlora"]),
    ("LoRA: targets = all", mv, "lora_run", switch_default("lora.targets"),
     ["lora/worked-mlp-fedavg-head", "lora/worked-mlp-personal"]),
    ("LoRA: weights = samples", mv, "lora_run",
     switch_default("lora.weights"), ["lora/worked-mlp-ffa-uniform"]),
    ("HetLoRA: weights = sparsity", mv, "lora_run",
     switch_default("hetlora.weights"),
     ["lora/worked-mlp-hetlora-samples", "lora/worked-mlp-hetlora-uniform"]),
    ("HetLoRA: scaling = none", mv, "lora_run",
     switch_default("hetlora.scaling"), ["lora/worked-mlp-hetlora-uniform"]),
    ("HetLoRA: the optimizer's state kept on the truncated ranks", mv,
     "lora_truncate_state", lambda orig, t, opt, i, dead: None,
     ["lora/worked-layers-mlp-sgd-server"]),
    ("HetLoRA: no regulariser", mv, "lora_run",
     hyper_dropped("hetlora.lambda"),
     ["lora/worked-hand-hetlora-prune", "lora/worked-mlp-hetlora"]),
    ("FedALA: skip = first_round", mv, "fedala_run",
     switch_default("fedala.skip"), ["fedala/worked-sum-first"]),
    ("FedALA: p_unit = layers", mv, "fedala_run",
     switch_default("fedala.p_unit"), ["fedala/worked-p-tensors"]),
    ("FedALA: ala_clients = participants", mv, "fedala_run",
     switch_default("fedala.ala_clients"), ["fedala/worked-partial-all"]),
    ("FedALA: no preset", mv, "fedala_run",
     preset_dropped,
     ["fedala/worked-official", "fedala/worked-pfllib-run"]),
    ("PFLEGO: theta_weights = global", mv, "pflego_mlp",
     switch_default("pflego.theta_weights"), ["pflego/worked-notes-c-code"]),
    ("PFLEGO: head_step = seed", mv, "pflego_mlp",
     switch_default("pflego.head_step"),
     ["pflego/worked-notes-c-exact-alpha"]),
    ("PFLEGO: server = sgd", mv, "pflego_mlp",
     switch_default("pflego.server"),
     ["pflego/worked-adam-code", "pflego/worked-adam-exact-alpha"]),
    ("PFLEGO: Adam's b1, b2 and ε as their doubles", mv.Trace, "decimal",
     lambda orig, self, text: self.const(float(text)),
     ["pflego/worked-adam-code"]),
    ("FedProto: distance = squared_l2", mv, "fedproto_run",
     switch_default("fedproto.distance"), ["fedproto/mlp-mse"]),
    ("FedProto: client_protos = trained", mv, "fedproto_run",
     switch_default("fedproto.client_protos"), ["fedproto/mlp-during"]),
    ("FedProto: weights = class_counts", mv, "fedproto_run",
     switch_default("fedproto.weights"), ["fedproto/mlp-uniform"]),
    ("FedRoD: features = after", mv, "fedrod_run",
     switch_default("fedrod.features"), ["fedrod/mlp-before"]),
    ("batch norm: FedRoD's bn.aggregate = average over the preset pfllib "
     "read as its parameters_only", mv, "fedrod_run",
     switch_default("bn.aggregate"), ["fedrod/layers-bn-pfllib"]),
    ("FedRoD: phi_p0 = zero", mv, "fedrod_run",
     switch_default("fedrod.phi_p0"), ["fedrod/mlp-generic"]),
    ("FedRoD: the training labels' counts", mv, "fedrod_run",
     lambda orig, spec: orig(dict(spec, init={
         k: x for k, x in spec["init"].items() if k != "class_counts"})),
     ["fedrod/mlp-counts-pfllib"]),
    ("MOON: no preset (official's momentum and decay, pfllib's training "
     "passes and own statistics dropped)", mv, "moon_run",
     preset_dropped,
     ["moon/layers-official", "moon/layers-bn-pfllib"]),
    ("batch norm: evaluation passes as training passes (MOON's z_glob and "
     "z_prev, FedProto's trained prototypes)", mv, "layers_forward",
     lambda orig, *a, **k: orig(*a, **dict(k, train=True)),
     ["moon/layers-bn-paper", "fedproto/layers-bn-paper"]),
    ("MOON: z_prev as z_glob (no previous model)", mv, "moon_signal",
     lambda orig, t, z, a, b, tau: orig(t, z, a, a, tau),
     ["moon/mlp-paper", "moon/layers-official"]),
    ("MOON: τ taken as 1", mv, "moon_signal",
     lambda orig, t, z, a, b, tau: orig(t, z, a, b, t.const(1.0)),
     ["moon/mlp-squared-drawn", "optim/moon-adam-decay"]),
    ("dropout: kept entries not rescaled", mv, "dropout_scale",
     lambda orig, t, p: t.const(1.0),
     ["layers/fedavg-mlp-dropout", "layers/ditto-mlp-dropout"]),
    ("dropout: a round's passes in reverse order", mv, "dropout_feed",
     lambda orig, spec: orig(dict(spec, schedule=reversed_passes(
         spec["schedule"]))),
     ["layers/ditto-mlp-dropout", "layers/apfl-mlp-dropout-adaptive",
      "layers/perfedavg-mlp-dropout-hf"]),
    ("relu: no mask in the backward pass", mv, "layers_backward",
     lambda orig, t, layers, blocks, w, ins, keep, E, g: orig(
         t, layers, blocks, w, ins,
         [[[True] * len(r) for r in kp] if L["type"] == "relu" else kp
          for L, kp in zip(layers, keep)], E, g),
     ["layers/fedavg-mlp3-half-squared", "fedproto/layers-pfllib",
      "fedrod/layers-paper"]),
    ("conv2d: the kernel flipped (a convolution, not a "
     "cross-correlation)", mv, "im2col", flipped_kernel,
     ["layers/fedavg-cnn-2ch-half-squared", "layers/local-cnn-two-rounds",
      "layers/fedavg-cnn-inner-pad-squared"]),
    ("conv2d: the weight read as C·κ·κ × O", mv, "conv_forward",
     transposed_weight,
     ["layers/fedavg-cnn-2ch-half-squared", "layers/ditto-cnn-two-rounds"]),
    ("max pooling: the signal to each window's first entry", mv,
     "pool_backward",
     lambda orig, t, L, E, kp: orig(t, L, E, (kp[0], [
         [win[0] for win in kp[0]] for _ in kp[1]])),
     ["layers/fedavg-cnn-stride-pad-squared", "layers/fedalt-cnn-fedrep-head",
      "layers/fedavg-cnn-dropout"]),
    ("tanh: the derivative 1 − y, not 1 − y²", mv, "act_backward",
     lambda orig, t, kind, y, d: t.op(d, "*", t.op(t.const(1.0), "-", y))
     if kind == "tanh" else orig(t, kind, y, d),
     ["layers/local-deep-two-rounds", "layers/fedsim-deep-lg-fedavg-input"]),
    ("sigmoid: the derivative y, not y (1 − y)", mv, "act_backward",
     lambda orig, t, kind, y, d: t.op(d, "*", y)
     if kind == "sigmoid" else orig(t, kind, y, d),
     ["layers/ditto-deep-two-rounds",
      "layers/fedavg-avgpool-tanh-sigmoid-ce"]),
    ("average pooling: the signal to the window not divided by κ²", mv,
     "pool_backward", undivided_pool_signal,
     ["layers/local-deep-two-rounds",
      "layers/fedavg-avgpool-tanh-sigmoid-ce"]),
    ("batchnorm2d: the running variance's factor nb/(nb − 1), not "
     "M/(M − 1) over the entries", mv, "bn_move",
     lambda orig, t, blocks, stats, x, biased: orig(
         t, blocks, [(L, dict(kp, M=kp["nb"])) for L, kp in stats], x,
         biased),
     ["layers/fedavg-bn2d-cnn-ce", "layers/fedbn-bn2d-cnn-ce"]),
    ("batchnorm2d: g_γ, g_β divided by nb·H·W, not nb", mv, "bn_backward",
     per_entry_bn_grads,
     ["layers/fedavg-bn2d-cnn-ce", "layers/fedavg-bn2d-cnn-biased"]),
    ("batch norm: the running statistics never moved", mv, "bn_move",
     lambda orig, t, blocks, stats, x, biased: list(x),
     ["layers/local-bn1d-mlp-two-rounds", "fedbn/worked-ce-two-rounds",
      "lora/bn-fedavg-bn1d", "moon/layers-bn-paper",
      "fedproto/layers-bn-paper", "fedrod/layers-bn-paper",
      "optim/perfedavg-fo-bn-biased", "perfedavg/worked-bn-running-update"]),
    ("batch norm: bn.running = frozen read as update", mv, "fedavg_run",
     switch_default("bn.running"), ["layers/fedavg-bn1d-mlp-frozen"]),
    ("batch norm: bn.running_var = biased read as unbiased", mv,
     "fedavg_run", switch_default("bn.running_var"),
     ["optim/fedavg-adam-personal-client-bn-biased"]),
    ("batch norm: fedbn.running_var = biased read as unbiased", mv,
     "fedbn_run", switch_default("fedbn.running_var"),
     ["fedbn/worked-samples-biased"]),
    ("batch norm: the backward pass as evaluation mode's (γ G / s)", mv,
     "bn_backward", bn_backward_eval,
     ["layers/local-bn1d-mlp-two-rounds", "fedbn/worked-notes-a1"]),
    ("batch norm: γ in the weight-decay group", mv, "bn_kinds",
     lambda orig, spec: {k: x for k, x in orig(spec).items()
                         if x == "buffer"},
     ["optim/cfl-momentum-weights-client-bn-biased"]),
    ("batch norm: the running statistics averaged under "
     "bn.aggregate = parameters_only", mv, "bn_buffers",
     lambda orig, spec: set(),
     ["layers/fedavg-bn1d-mlp-pfllib-keep",
      "layers/ditto-bn1d-mlp-pfllib-keep",
      "layers/fedprox-bn1d-mlp-pfllib-keep",
      "layers/fedalt-bn1d-mlp-fedrep-keep",
      "layers/pfedme-bn1d-mlp-pfllib-keep",
      "layers/fedfomo-bn1d-equal-zero-params",
      "layers/fedamp-bn1d-mlp-keep", "fedrod/layers-bn-pfllib-keep"]),
    ("batch norm: FedFomo's distance and mixture over every entry where "
     "bn.aggregate = parameters_only", mv, "fedfomo_run",
     switch_default("bn.aggregate"),
     ["layers/fedfomo-bn1d-equal-zero-params"]),
    ("batch norm: pFedMe's line 8 on the running statistics "
     "(w_{i,r+1} not taking θ's)", mv, "bn_buffers",
     lambda orig, spec: set() if spec["algorithm"]["name"] == "pfedme"
     else orig(spec),
     ["pfedme/layers-bn1d-mlp-update",
      "optim/pfedme-classical-server-decay-bn-biased"]),
    ("batch norm: θ's running statistics not moved by the inner loop's "
     "passes", mv, "prox_inner",
     lambda orig, *a, **k: orig(*a[:11]),
     ["pfedme/layers-bn1d-mlp-update",
      "optim/prox-classical-client-decay-eta-p-bn-biased"]),
    ("batch norm: the first upload's statistics as the first "
     "participant's", mv, "fedavg_run",
     lambda orig, spec: orig(dict(spec, schedule=dict(
         spec["schedule"], rounds=[
             {k: x for k, x in rd.items() if k != "first_upload"}
             for rd in spec["schedule"]["rounds"]]))),
     ["layers/fedavg-bn1d-mlp-pfllib-keep-first-upload"]),
    ("batch norm: IFCA's estimate_mode = eval as training passes", mv,
     "ifca_run", switch_default("ifca.estimate_mode"),
     ["layers/ifca-bn1d-mlp-model-eval"]),
    ("batch norm: FedDyn's ∇L_k and h moved on the running statistics",
     mv, "bn_buffers",
     lambda orig, spec: set() if spec["algorithm"]["name"] == "feddyn"
     else orig(spec),
     ["optim/feddyn-adam-server-bn-biased"]),
    ("FedBN: the BN blocks averaged (fedbn.bn = shared)", mv, "fedbn_run",
     lambda orig, spec: orig(dict(spec, algorithm=dict(
         spec["algorithm"], switches=dict(
             spec["algorithm"].get("switches", {}), **{
                 "fedbn.bn": "shared"})))),
     ["fedbn/worked-ce-two-rounds", "layers/fedbn-bn1d-mlp-samples"]),
    ("FedFomo: val_mode = train", mv, "fedfomo_run",
     switch_default("fedfomo.val_mode"), ["layers/fedfomo-mlp-dropout-eval"]),
    ("batch norm: SCAFFOLD's preset pfllib's statistics averaged", mv,
     "bn_buffers",
     lambda orig, spec: set() if spec["algorithm"]["name"] == "scaffold"
     else orig(spec),
     ["layers/scaffold-bn1d-mlp-pfllib-keep"]),
    ("batch norm: FedALA's evaluation-mode passes as training passes",
     mv, "fedala_grad_loss",
     lambda orig, *a: (lambda gl: lambda k, x, batch, loss=False,
                       train=True: gl(k, x, batch, loss))(orig(*a)),
     ["fedala/layers-bn-ala-mode", "fedala/layers-bn-eval-gap"]),
    ("batch norm: the server's running statistics averaged, not the "
     "first uploader's", mv, "bn_first_upload",
     lambda orig, acc, *a: acc,
     ["fedala/layers-bn-pfllib", "fedpac/layers-bn-pfllib"]),
    ("FedFomo: the preset pfllib dropped", mv, "fedfomo_run",
     preset_dropped,
     ["fedfomo/worked-draws-pfllib-run",
      "layers/fedfomo-bn1d-mlp-pfllib-keep"]),
    ("FedFomo: the own upload left out of the ranking where self = "
     "ranked", mv, "fedfomo_choose",
     lambda orig, t, row, draw, ri, hp, sw, i=None: orig(
         t, row, draw, ri, hp, dict(sw, **{"fedfomo.self": "excluded"}), i),
     ["fedfomo/worked-draws-pfllib-run"]),
    ("FedPAC: distance = squared_l2", mv, "fedpac_run",
     switch_default("fedpac.distance"), ["fedpac/mlp-mse"]),
    ("FedPAC: alpha_small = exact", mv, "fedpac_run",
     switch_default("fedpac.alpha_small"),
     ["fedpac/mlp-boundary-alpha-eps", "fedpac/mlp-boundary-alpha-one"]),
    ("FedPAC: the presets' switches dropped", mv, "fedpac_run",
     preset_dropped,
     ["fedpac/mlp-official", "fedpac/layers-pfllib",
      "fedpac/layers-bn-pfllib"]),
    ("FedPAC: the first support taken without its KKT tests", mv,
     "fedpac_qp",
     lambda orig, t, Q: [t.const(1.0)] + [t.const(0.0)] * (len(Q) - 1),
     ["fedpac/mlp-paper", "fedpac/layers-paper"]),
    ("Per-FedAvg: bn.aggregate = parameters_only read as average", mv,
     "perfedavg_run", switch_default("bn.aggregate"),
     ["perfedavg/worked-bn-pfllib-keep"]),
    ("Hessian-vector product: its training pass not moving the running "
     "statistics (the last gradient pass's taken)", mv, "layers_hvp",
     lambda orig, *a: orig(*a[:10]),
     ["perfedavg/worked-bn-running-update", "optim/perfedavg-exact-bn-biased",
      "layers/perfedavg-bn2d-cnn-exact"]),
    ("Hessian-vector product: batch normalisation's R-forward pass as "
     "evaluation mode's (R{x̂} = R{a}/s)", mv, "bn_r_forward",
     bn_r_forward_eval,
     ["perfedavg/worked-bn-relu-exact", "layers/perfedavg-bn2d-cnn-exact"]),
    ("Hessian-vector product: batch normalisation's R{c} without "
     "−c R{s}/s", mv, "bn_r_backward",
     lambda orig, t, L, at, w, v, kp, rk, E, RE, Hv: orig(
         t, L, at, w, v, kp, dict(rk, Rs=[t.const(0.0)] * len(rk["Rs"])),
         E, RE, Hv),
     ["perfedavg/worked-bn-relu-exact", "optim/perfedavg-exact-bn-biased"]),
    ("Hessian-vector product: conv2d's R{Y} without V col(X)", mv,
     "conv_r_forward",
     lambda orig, t, L, W, V, vb, rows, R_rows: orig(
         t, L, W, [t.const(0.0)] * len(V), vb, rows, R_rows),
     ["layers/perfedavg-deep-exact", "layers/perfedavg-bn2d-cnn-exact"]),
    ("Hessian-vector product: conv2d's (Hv)_W without dY col(R{X})", mv,
     "conv_r_backward",
     lambda orig, t, L, W, V, rows, R_rows, *a: orig(t, L, W, V, rows, None,
                                                    *a),
     ["layers/perfedavg-deep2-exact"]),
    ("Hessian-vector product: tanh's and sigmoid's σ'' term dropped", mv,
     "act_r_backward",
     lambda orig, t, kind, y, Ry, d, Rd: orig(t, kind, y, t.const(0.0), d,
                                              Rd),
     ["layers/perfedavg-deep-exact", "layers/perfedavg-deep2-exact"]),
    ("CFL: Algorithm 1 as complete linkage", mv, "cfl_bipartition",
     lambda orig, alpha, m, method: orig(alpha, m, "complete_linkage"),
     ["cfl/worked-counterexample-optimal"]),
    ("CFL: complete linkage as Algorithm 1", mv, "cfl_bipartition",
     lambda orig, alpha, m, method: orig(alpha, m, "optimal"),
     ["cfl/worked-counterexample-complete-linkage"]),
]


def carried_rules():
    """Trace's carrying (Trace.approx) through an operation and through
    the any-order dot-product model (Trace.derived): a carried operand
    carries the result, unless an exact 0 (its Fraction 0, not carried)
    makes it 0 exactly.  The failures, as messages."""
    t = mv.Trace()
    one, zero = t.const(1.0), t.const(0.0)
    c = t.carried(t.op(one, "/", t.const(3.0)))
    z = t.op(one, "-", one)                 # an exact 0, not a constant
    cases = [
        ("c · 1", t.op(c, "*", one), True),
        ("c · 0 (an exact 0)", t.op(c, "*", z), False),
        ("0 / c", t.op(z, "/", c), False),
        ("c + 0", t.op(c, "+", z), True),
        ("a dot product with c", t.dot_any_order(one, [c, one], [one, one]),
         True),
        ("a dot product whose c meets an exact 0",
         t.dot_any_order(one, [c, one], [z, one]), False),
        ("a dgemm onto c", t.gemm_acc(c, one, [one], [one]), True),
        ("a dgemm by a carried alpha", t.gemm_acc(zero, c, [one], [one]),
         True),
        ("an exact dgemm", t.gemm_acc(one, one, [one, one], [one, z]),
         False),
    ]
    return [f"{what}: carried {v[0] in t.approx}, expected {want}"
            for what, v, want in cases if (v[0] in t.approx) != want]


def main():
    bad = 0
    for msg in carried_rules():
        print(f"test_make_vectors: {msg}")
        bad = 1
    for vid in mv.VECTORS + mv.REPLAYED + mv.UNSCRIPTED:
        if not replays(vid):
            print(f"test_make_vectors: {vid} does not replay as written")
            bad = 1
    for what, cls, name, wrong, vids in CASES:
        with planted(cls, name, wrong):
            for vid in vids:
                if vid not in mv.VECTORS + mv.REPLAYED + mv.UNSCRIPTED:
                    print(f"test_make_vectors: {what}: {vid} is not in "
                          "VECTORS, REPLAYED or UNSCRIPTED")
                    bad = 1
                elif replays(vid):
                    print(f"test_make_vectors: {what}: {vid} still "
                          "replays")
                    bad = 1
    print("test_make_vectors: " + ("FAILED" if bad else
                                   f"{len(mv.VECTORS + mv.REPLAYED + mv.UNSCRIPTED)} "
                                   "replays as written, "
                                   f"{len(CASES)} planted rules caught"))
    return bad


if __name__ == "__main__":
    sys.exit(main())
