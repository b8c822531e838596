#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Golden vectors of the dropout layer with its masks given as data
(docs/models.md, "Dropout"; docs/formats.md, schedule.rounds[t].dropout),
exact rational arithmetic end to end.

  layers/fedavg/mlp-dropout
      FedAvg (McMahan et al., AISTATS 2017, Alg. 1); input [3]; dense "fc1"
      3→5, relu, dropout "drop" (p = 1/4), dense "out" 5→1; ½(ŷ − y)²;
      three clients (n = 4, 3, 5), two rounds, client 2 unsampled in
      round 0; one mask per local step, different on every step and client.
  layers/fedavg/cnn-dropout
      FedAvg on a PFLlib-like CNN: input [1, 5, 5]; conv "conv" (2
      channels, kernel 2, padding 1), relu, maxpool2d 2, dropout "drop1"
      (p = 1/4) on the pooled image [2, 3, 3], flatten, dense "fc1" 18→4,
      relu, dropout "drop2" (p = 3/8) before the last dense, dense "fc"
      4→1; (ŷ − y)²: two masks a pass, one per dropout layer.
  layers/fedalt/mlp-dropout-fedrep-head
      FedRep (FedAlt's preset; Pillutla et al., ICML 2022, Alg. 4) on the MLP
      above with the head personal: one training pass a step (the head
      step, then the body steps), each with its own mask.
  layers/ditto/mlp-dropout
      Ditto (Li, Hu, Beirami, Smith, ICML 2021, Alg. 1) on the MLP above,
      paper switches (ditto.order interleaved): per batch the personal
      step, then the global step, each a training pass with its own mask
      (two passes a step).
  layers/finetune/mlp-dropout
      FedAvg-FT (FedAvg, then local fine-tuning; shared/spec notes §5.1) on
      the MLP above: the rounds' passes take rounds[t].dropout, then every
      client's fine-tuning steps θ_i ← θ_i − η_ft (∇f_i(θ_i; D) +
      μ_ft (θ_i − w)) take schedule.post_dropout[i], one mask a step.
  layers/fedalt/mlp-dropout-fedrep-post
      FedRep on the MLP above with the optional final fine-tuning of v
      (pfl.finetune = personal): the post phase's passes take
      schedule.post_dropout, one per fine-tuning step.
  layers/interp/mlp-dropout-grid
      Interpolation (Mansour et al. 2020, §3; notes §5.2) on the MLP above:
      FedAvg's rounds, then h_i trained from w0 on the post batches (one
      mask a step, schedule.post_dropout), then the per-client grid scored
      in evaluation mode (loss_exact wrapped here: no mask taken).

  layers/fedbn/bn1d-mlp-dropout
      FedBN (Li et al., ICLR 2021, Alg. 1) on dense 3→4 (no bias),
      batchnorm1d, relu, dropout (p = 1/4), dense 4→1, through
      pflref_exact_fedbn.py (60-digit decimals): one mask per local step;
      the float64 gap measured on the FedAvg run of the same model, data
      and masks (as make_bn.py measures FedBN's).
  layers/cfl/mlp-dropout-split
      CFL (Sattler et al. 2020, Alg. 1) on the MLP above, four clients of
      opposite targets, through pflref_exact_cfl.py: one mask per local
      step; ε₁, ε₂, γ_max from the run's own norms so round 0 splits.
  layers/fedfomo/mlp-dropout-peers
      FedFomo (Zhang et al., ICLR 2021, Alg. 1) on the MLP above with
      validation splits and given peers, through pflref_exact_fedfomo.py
      (60-digit decimals) with pl.loss_exact in training mode: per
      participant L_i(a), then L_i(θ_n) of each download unequal to a, then
      the own upload's, each a training pass on the validation split with its
      mask, then the local steps'; the lists found by a probe run
      (ProbeFeed), as their count depends on which downloads equal a.  Bug
      dropout-eval-in-val: the validation passes alone in evaluation mode
      (the authors' code's model.eval()), their masks unread.
  layers/pfedhn/mlp-dropout-linear-hn
      pFedHN (Shamsian et al., ICML 2021, Alg. 1) on the MLP above with a
      linear hypernetwork (e = 2), one client a round, through
      pflref_exact_pfedhn.py (60-digit decimals: exact fractions grow too
      large): one mask per local step of θ̃_i.
  layers/ifca/mlp-dropout-eval
      IFCA (Ghosh et al., NeurIPS 2020, Alg. 1, Option II) on the MLP above
      with two given cluster models under ifca.estimate_mode = eval: the
      estimates take no mask, one mask per local step.
  layers/ifca/mlp-dropout-estimate-train
      The same under ifca.estimate_mode = train: every estimate F_i(θ_j) a
      training pass on the client's whole set with its own masks from the
      schedule's estimate lists (init_partition_dropout, rounds[t].
      estimate_dropout, rounds[t].partition_dropout), served by
      EstimateFeed to the loss calls of pflref_exact_ifca.py tagged as
      estimates; the masks chosen so that picks differ from the
      evaluation-mode ones (asserted).
  For FedBN, CFL and pFedHN each participant's passes of a round come in pairs of one batch size, so
  the bug dropout-pass-swap (two steps' masks exchanged) runs and is caught.

The layer is written here from PyTorch's definition, not from pflref: in
training y = x · s where m = 1 and 0 where m = 0, with s the double
1/(1 − p) (aten/src/ATen/native/Dropout.cpp, _dropout_impl: noise =
bernoulli(1 − p) / (1 − p), y = x * noise), so s is taken as the exact
rational value of that double (fl(4/3) for p = 1/4, not 4/3); the gradient
is dY · m · s.  pflref_exact_layers.py's Model gains the layer in this file
(DropModel, used by pflref_exact's algorithms through pl.Model), and each
training forward pass takes the next pass of masks of the client whose rows
it reads, in the order the algorithm makes them (FedAvg: its steps; Ditto:
personal, global per batch); every pass must be taken exactly once.

No mask is all ones and no two participants share one; p differs per layer.
The phase after training (schedule.post) takes its masks from
schedule.post_dropout, one list per client 0 .. N−1, after the rounds' in
the client's order of passes.

Flags: dropout-scale (the kept entries not rescaled by 1/(1 − p)),
dropout-train-mode (the training pass run in evaluation mode: no mask;
for the post vectors also only the post phase's passes in evaluation mode,
bug dropout-eval-in-post: a fine-tuning left in model.eval() after the
last round's evaluation).

    /usr/bin/python3 golden/layers/make_dropout.py [OUTDIR]
"""
import math
import os
import random
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import layers_common as lc         # noqa: E402
import pflref_exact as px          # noqa: E402
import pflref_exact_apfl as pa     # noqa: E402
import pflref_exact_layers as pl   # noqa: E402
import pflref_exact_interp as pi   # noqa: E402
import pflref_exact_perfedavg as pfa  # noqa: E402
import pflref_exact_pfl as pp      # noqa: E402
import pflref_golden as pg         # noqa: E402
import audit                       # noqa: E402

GENERATOR = "golden/layers/make_dropout.py ({}, {} on pflref_exact_layers.py)"
DROPOUT_SOURCE = ("torch.nn.Dropout (inverted dropout; aten/src/ATen/native/Dropout.cpp "
                  "_dropout_impl: y = x * (bernoulli(1 - p) / (1 - p))), masks given as "
                  "data; docs/models.md (Dropout)")
DITTO_SOURCE = ("Li, Hu, Beirami, Smith, ICML 2021, Alg. 1; shared/spec "
                "notes-fedavg-pfedme-ditto-perfedavg-apfl.md §3")
FEDALT_SOURCE = ("Pillutla, Malik, Mohamed, Rabbat, Sanjabi, Xiao, ICML 2022, Alg. 4 "
                 "(FedAlt; FedRep preset); shared/spec notes-pflego-fedalt-fedsim-fedrep.md")

# ---------------------------------------------------------------- the layer

_Model, _ClientData = pl.Model, pl.ClientData
pl.TYPES = pl.TYPES + ("dropout",)
pl.RATIONAL = pl.RATIONAL + ("dropout",)


class Feed:
    """The masks of a spec's schedule, per client in pass order (rounds in
    order, then the round's passes); `data` lists the clients' data in id
    order as the problem builds them."""

    def __init__(self, spec):
        self.passes = {}
        for r in spec["schedule"]["rounds"]:
            for k, lst in zip(r["clients"], r.get("dropout", [[] for _ in r["clients"]])):
                self.passes.setdefault(k, []).extend(lst)
        # the post phase's passes follow the rounds' (client k's passes
        # from rounds[k] on are the post phase's)
        self.rounds = {k: len(lst) for k, lst in self.passes.items()}
        for k, lst in enumerate(spec["schedule"].get("post_dropout", [])):
            self.passes.setdefault(k, []).extend(lst)
            self.rounds.setdefault(k, 0)
        self.taken = {k: 0 for k in self.passes}
        self.post = False   # the pass taken last is a post-phase pass
        self.n = len(spec["problem"]["clients"])
        self.data = []
        # the clients' training rows by value, for replays that keep their
        # own copies of the data (pflref_exact_fedbn.py's 60-digit decimals)
        self.rows = [{tuple(float(x) for x in row) for row in c["X"]}
                     for c in spec["problem"]["clients"]]
        # and their validation rows (FedFomo's validation-loss passes)
        self.val_rows = [{tuple(float(x) for x in row) for row in c.get("X_val", [])}
                         for c in spec["problem"]["clients"]]

    def client_of(self, X):
        """(client, is_val): the client whose training rows (or validation
        rows) X are: by identity with a ClientData's rows, else by value
        (exactly one client must hold them all)."""
        for i, d in enumerate(self.data):
            if any(X[0] is row for row in d.X):
                # each problem built appends its n clients (a run in another
                # domain builds a second one): the position modulo n
                return i % self.n, False
        key = [tuple(float(x) for x in row) for row in X]
        hits = [(k, False) for k, rows in enumerate(self.rows)
                if all(r in rows for r in key)]
        hits += [(k, True) for k, rows in enumerate(self.val_rows)
                 if rows and all(r in rows for r in key)]
        assert len(hits) == 1, f"a training pass on rows of {len(hits)} clients"
        return hits[0]

    def next_pass(self, k, X):
        """Client k's pass number q (0-based), taken."""
        q = self.taken[k]
        assert q < len(self.passes[k]), f"client {k}: pass {q + 1} has no mask"
        self.taken[k] = q + 1
        return q

    def take(self, X, bugs=frozenset()):
        k, is_val = self.client_of(X)
        q = self.next_pass(k, X)
        self.post = q >= self.rounds[k]
        if "dropout-eval-in-val" in bugs and is_val:
            return None     # the validation pass in evaluation mode (its mask unread)
        if "dropout-pass-swap" in bugs and not self.post:
            q ^= 1          # a step's two passes each take the other's mask
        return self.passes[k][q]

    def done(self):
        for k, lst in self.passes.items():
            assert self.taken[k] == len(lst), (k, self.taken[k], len(lst))


FEED = None


class DropData(_ClientData):
    def __init__(self, M, client):
        super().__init__(M, client)
        if FEED is not None:
            FEED.data.append(self)


class DropModel(_Model):
    """pflref_exact_layers.Model with the dropout layer: the identity in
    evaluation; in training y = x · m · s (s = fl(1/(1 − p)) as a rational),
    the mask m of the pass from FEED."""

    def __init__(self, model, domain=None):
        super().__init__(model, domain)
        for L, spec in zip(self.layers, model["layers"]):
            if L.type == "dropout":
                p = spec.get("p", 0.5)
                L.s = self.D.num(Fraction(1.0 / (1.0 - p)))

    def forward(self, theta, X, train=True, bugs=pl.NO_BUGS):
        train = train and not getattr(self, "_eval", False)
        self._pass = FEED.take(X, bugs) if train and any(
            L.type == "dropout" for L in self.layers) else None
        return super().forward(theta, X, train, bugs)

    def _keep(self, L, train, bugs):
        """Per sample and entry the factor m · s (None: the identity)."""
        if not train or "dropout-eval-in-train" in bugs:
            return None
        if "dropout-eval-in-post" in bugs and FEED.post:
            return None
        if self._pass is None:          # dropout-eval-in-val
            return None
        s = self.D.num(1) if "dropout-no-rescale" in bugs else L.s
        zero = self.D.num(0)
        return [[s if m else zero for m in row] for row in self._pass[L.name]]

    def _bn_forward(self, L, theta, A, train, at, bugs, cache):
        if L.type != "dropout":
            return super()._bn_forward(L, theta, A, train, at, bugs, cache)
        keep = self._keep(L, train, bugs)
        cache["keep"] = keep
        if keep is None:
            return [list(a) for a in A]
        assert len(keep) == len(A) and all(len(k) == len(a) for k, a in zip(keep, A))
        return [[x * f for x, f in zip(a, k)] for a, k in zip(A, keep)]

    def _bn_backward(self, L, cache, theta, G, g, bugs):
        if L.type != "dropout":
            return super()._bn_backward(L, cache, theta, G, g, bugs)
        keep = cache["keep"]
        if keep is None:
            return [list(gz) for gz in G]
        return [[go * f for go, f in zip(gz, k)] for gz, k in zip(G, keep)]


pl.Model, pl.ClientData = DropModel, DropData
# the bugs of the layer, which the algorithm modules pass on to the model
# (they keep pl.ALL_BUGS of the bugs they are given)
pl.ALL_BUGS = pl.ALL_BUGS | {"dropout-no-rescale", "dropout-eval-in-train",
                             "dropout-eval-in-post", "dropout-pass-swap",
                             "dropout-eval-in-val"}

_loss_exact = pl.loss_exact


def loss_eval(M, X, Y, theta, bugs=pl.NO_BUGS):
    """pflref_exact_layers.loss_exact in evaluation mode (model.eval():
    every dropout layer the identity, no mask taken), as interp's grid
    scores v̄ (pflref_model_evaluate)."""
    M._eval = True
    try:
        return _loss_exact(M, X, Y, theta, bugs)
    finally:
        M._eval = False


pl.loss_exact = loss_eval

# ---------------------------------------------------------------- masks


def masks(rng, nb, width):
    """nb rows of width 0/1 entries, not all ones (nor all zeros)."""
    while True:
        m = [[1 if rng.random() >= 0.3 else 0 for _ in range(width)] for _ in range(nb)]
        flat = [x for row in m for x in row]
        if 0 in flat and 1 in flat:
            return m


def round_masks(seed, plan, layers, passes_per_step=1):
    """rounds[t].dropout of one round: per participant its passes (each
    batch passes_per_step times), one mask per dropout layer (name, width)."""
    rng = random.Random(seed)
    out, seen = [], set()
    for _, batches in plan:
        lst = []
        for b in batches:
            for _ in range(passes_per_step):
                while True:
                    p = {name: masks(rng, len(b), w) for name, w in layers}
                    key = repr(p)
                    if key not in seen:
                        seen.add(key)
                        break
                lst.append(p)
        out.append(lst)
    return out


def post_masks(seed, post, layers):
    """schedule.post_dropout: per client its fine-tuning passes (one per
    post batch), one mask per dropout layer; none repeats a round's."""
    return round_masks(seed, list(enumerate(post)), layers)


def rounds_json(plans, seed, layers, passes_per_step=1):
    return [{"clients": [k for k, _ in plan], "batches": [b for _, b in plan],
             "dropout": round_masks(seed + t, plan, layers, passes_per_step)}
            for t, plan in enumerate(plans)]

# ---------------------------------------------------------------- runs


def with_feed(spec, fn, feed=None):
    """fn() with FEED holding spec's masks (or the given feed); every pass
    taken once."""
    global FEED
    saved, FEED = FEED, (feed if feed is not None else Feed(spec))
    try:
        out = fn()
        FEED.done()
        return out
    finally:
        FEED = saved


def fedavg_replay(spec, bugs, domain=None):
    model, clients = spec["model"], spec["problem"]["clients"]
    eta = spec["algorithm"]["hyperparameters"]["eta"]
    weights = spec["algorithm"]["switches"]["fedavg.weights"]
    plans = [list(zip(r["clients"], r["batches"])) for r in spec["schedule"]["rounds"]]
    w0 = spec["init"]["w"]
    return with_feed(spec, lambda: lc.fedavg_run(model, clients, w0, eta, weights, plans,
                                                 bugs, domain=domain))


def ditto_replay(spec, bugs, domain=None):
    def run():
        saved = DropModel.__init__.__defaults__
        DropModel.__init__.__defaults__ = (domain,)
        try:
            w, v, trace = px.replay_personal(spec, bugs)
        finally:
            DropModel.__init__.__defaults__ = saved
        return trace, w, v
    return with_feed(spec, run)


def fedalt_replay(spec, bugs, domain=None):
    def run():
        saved = DropModel.__init__.__defaults__
        DropModel.__init__.__defaults__ = (domain,)
        try:
            w, v, trace = pp.replay(spec, bugs)
        finally:
            DropModel.__init__.__defaults__ = saved
        return trace, w, v
    return with_feed(spec, run)


def apfl_replay(spec, bugs, domain=None):
    """pflref_exact_apfl.replay with the feed: per step w_i's gradient pass,
    then the mixture v̄'s."""
    def run():
        saved = DropModel.__init__.__defaults__
        DropModel.__init__.__defaults__ = (domain,)
        try:
            return pa.replay(spec, bugs)
        finally:
            DropModel.__init__.__defaults__ = saved
    return with_feed(spec, run)


def perfedavg_replay(spec, bugs, domain=None):
    """pflref_exact_perfedavg.replay with the feed: FO, per step ∇f(w; D),
    then ∇f(w̃; D′); the personalisation's α step on the post batch."""
    def run():
        saved = DropModel.__init__.__defaults__
        DropModel.__init__.__defaults__ = (domain,)
        try:
            return pfa.replay(spec, bugs)
        finally:
            DropModel.__init__.__defaults__ = saved
    return with_feed(spec, run)


def interp_replay(spec, bugs, domain=None):
    """pflref_exact_interp.replay (FedAvg's rounds, then h_i trained on the
    post batches, then the grid scored in evaluation mode) with the feed."""
    def run():
        saved = DropModel.__init__.__defaults__
        DropModel.__init__.__defaults__ = (domain,)
        try:
            return pi.replay(spec, bugs)
        finally:
            DropModel.__init__.__defaults__ = saved
    return with_feed(spec, run)


def finetune_replay(spec, bugs, domain=None):
    """FedAvg's rounds (lc.fedavg_run's steps), then px.finetune_phase on
    the post batches; the feed holds the rounds' and the post masks."""
    model, clients = spec["model"], spec["problem"]["clients"]
    hp = spec["algorithm"]["hyperparameters"]
    weights = spec["algorithm"].get("switches", {}).get("fedavg.weights", "samples")
    plans = [list(zip(r["clients"], r["batches"])) for r in spec["schedule"]["rounds"]]

    def run():
        pr = px.Problem(model, clients).bn_switches({})
        if domain is not None:
            pr.layers = pl.Model(model, domain)
            for c, cs in zip(pr.clients, clients):
                c["data"] = pl.ClientData(pr.layers, cs)
        w0 = px.initial(spec["init"], pr.P, bugs)
        w, trace = list(w0), pg.Trace()
        for t, plan in enumerate(plans):
            w = px.fedavg_round(pr, w, w0, t, plan, pg.exact(hp["eta"]), weights, trace,
                                bugs)
        thetas = px.finetune_phase(pr, w, w0, spec["schedule"]["post"],
                                   pg.exact(hp["eta_ft"]), pg.exact(hp["mu_ft"]), None,
                                   trace, bugs)
        return trace, w, thetas
    return with_feed(spec, run)


def module_replay(alg, spec, bugs, domain=None, train_loss=False, feed=None):
    """golden/audit.py's module for alg (pflref_exact_<alg>.py) with the
    feed; every model it builds is a DropModel in `domain` (None: the
    module's own choice).  train_loss: pl.loss_exact is the training-mode
    loss (each call a training pass taking its masks: FedFomo's validation
    losses), not interp's evaluation-mode one."""
    mod = audit.MODULES[alg]

    class Forced(DropModel):
        def __init__(self, model, d=None):
            super().__init__(model, domain if domain is not None else d)

    def run():
        saved, saved_loss = pl.Model, pl.loss_exact
        pl.Model = Forced
        if train_loss:
            pl.loss_exact = _loss_exact
        try:
            return mod.replay(spec, frozenset(bugs))
        finally:
            pl.Model, pl.loss_exact = saved, saved_loss
    return with_feed(spec, run, feed)


class ProbeFeed(Feed):
    """A feed that makes each pass's masks when the run asks for them:
    client k's pass q from random.Random(seed + 1000 k + q), nb rows per
    layer (name, width); used to learn how many passes, of which sizes, a
    run whose pass count depends on its data makes (FedFomo's skipped
    equal downloads), before the masks are written into the spec."""

    def __init__(self, spec, seed, layers):
        super().__init__(spec)
        self.seed, self.layers = seed, layers
        for k in range(self.n):
            self.passes.setdefault(k, [])
            self.rounds.setdefault(k, len(self.passes[k]))
            self.taken.setdefault(k, 0)

    def next_pass(self, k, X):
        q = self.taken[k]
        if q == len(self.passes[k]):
            rng = random.Random(self.seed + 1000 * k + q)
            self.passes[k].append({name: masks(rng, len(X), w) for name, w in self.layers})
            self.rounds[k] = len(self.passes[k])
        return super().next_pass(k, X)


def probe_round_masks(alg, spec, seed, layers, train_loss=False, domain=None):
    """Every round's rounds[t].dropout for spec (which has none): the passes
    a correct run makes, round by round (the run of rounds 0..t counted),
    each its own masks; no two passes of the spec share theirs."""
    rounds = spec["schedule"]["rounds"]
    counts = [dict.fromkeys(range(len(spec["problem"]["clients"])), 0)]
    feed = None
    for T in range(1, len(rounds) + 1):
        part = dict(spec, schedule=dict(spec["schedule"], rounds=rounds[:T]))
        feed = ProbeFeed(part, seed, layers)
        module_replay(alg, part, frozenset(), domain, train_loss=train_loss, feed=feed)
        counts.append({k: len(v) for k, v in feed.passes.items()})
    seen = [repr(p) for v in feed.passes.values() for p in v]
    assert len(seen) == len(set(seen)), "two passes share their masks"
    for t, r in enumerate(rounds):
        r["dropout"] = [feed.passes[k][counts[t][k]:counts[t + 1][k]] for k in r["clients"]]
        for k in range(len(counts[0])):
            if k not in r["clients"]:
                assert counts[t][k] == counts[t + 1][k], (t, k)


def make(folder, vid, fname, title, spec, flags, mutants, replay, final, source,
         arith="exact fractions", fp64_of=None):
    """fp64_of(): the float64 gap measured another way (the FedAvg run of the
    same model, data and masks), for a replay that runs in 60-digit decimals
    only."""
    pl.reset_stats()
    result = replay(spec, frozenset())
    lc.guard_kinks()
    exp0 = pg.expected(*final(*result))
    if fp64_of is None:
        fp64 = lc.gap(exp0, pg.expected(*final(*replay(spec, frozenset(), "float"))))
    else:
        fp64 = fp64_of()
    what = ("exact rationals of the binary inputs" if arith == "exact fractions"
            else "60-digit decimals of the binary inputs")
    if fp64_of is not None:
        what += " (the FedAvg run of this model, data and masks measured)"
    tol = lc.tolerance(1e-13, 1e-12, what, fp64)
    exp = pg.checked_expected(vid, tol, flags, mutants, result,
                              lambda bugs: replay(spec, frozenset(bugs)), final)
    gen = GENERATOR.format(arith, folder)
    prov = pg.provenance("independent", f"{source}; {DROPOUT_SOURCE}; {lc.LAYERS_SOURCE}",
                         gen)
    return fname, pg.vector(vid, title, prov, flags, spec, tol, exp)


DROP_MUTANTS = {"dropout-scale": ["dropout-no-rescale"],
                "dropout-train-mode": ["dropout-eval-in-train"]}

MLP = {"kind": "layers", "input": [3], "loss": "half_squared",
       "layers": [{"type": "dense", "name": "fc1", "out": 5},
                  {"type": "relu"},
                  {"type": "dropout", "name": "drop", "p": 0.25},
                  {"type": "dense", "name": "out", "out": 1}]}
MLP_CLIENTS = [{"X": lc.rows(700 + i, n, 3, den=16),
                "y": lc.values(random.Random(750 + i), n, -1.5, 1.5, 16)}
               for i, n in enumerate((4, 3, 5))]
MLP_W0 = lc.init_for(MLP, 41, scale=0.75, den=64)
MLP_PLANS = [
    [(0, [[0, 3], [2, 1]]), (1, [[2, 0], [1]])],
    [(0, [[3, 2, 1]]), (1, [[1, 2]]), (2, [[4, 0], [2, 3, 1]])],
]


def fedavg_mlp():
    spec = pg.given_spec(
        "FedAvg, MLP with dropout (3 -> 5, relu, dropout p = 1/4, -> 1), masks as data, "
        "two rounds",
        "Layers dense 'fc1' 3 -> 5, relu, dropout 'drop' (p = 0.25; kept entries times "
        "fl(1/(1 - p))), dense 'out' 5 -> 1; loss (1/2)(y-hat - y)^2; eta = 0.15625; "
        "three clients (n = 4, 3, 5), client 2 unsampled in round 0; weights n_k / m_t; "
        "each local step's mask given in schedule.rounds[t].dropout.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "fedavg", "hyperparameters": {"eta": 0.15625},
         "switches": {"fedavg.weights": "samples"}},
        rounds_json(MLP_PLANS, 900, [("drop", 5)]))
    flags = ["dropout-scale", "dropout-train-mode", "loss-scale", "batch-mean",
             "aggregation-weights", "stale-global", "dense-weight-layout"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({k: lc.COMMON_MUTANTS[k] for k in
                    ("loss-scale", "batch-mean", "aggregation-weights", "stale-global")})
    mutants["dense-weight-layout"] = ["dense-w-transpose"]
    return make("fedavg", "layers/fedavg/mlp-dropout", "fedavg-mlp-dropout.json",
                spec["name"], spec, flags, mutants, fedavg_replay,
                lambda trace, w: (trace, w), lc.PAPER_FEDAVG)


CNN = {"kind": "layers", "input": [1, 5, 5], "loss": "squared",
       "layers": [
           {"type": "conv2d", "name": "conv", "out_channels": 2, "kernel": 2,
            "padding": 1},
           {"type": "relu"},
           {"type": "maxpool2d", "kernel": 2},
           {"type": "dropout", "name": "drop1", "p": 0.25},
           {"type": "flatten"},
           {"type": "dense", "name": "fc1", "out": 4},
           {"type": "relu"},
           {"type": "dropout", "name": "drop2", "p": 0.375},
           {"type": "dense", "name": "fc", "out": 1}]}
CNN_CLIENTS = [{"X": lc.rows(1300 + i, n, 25),
                "y": lc.values(random.Random(1350 + i), n, -1.5, 1.5, 16)}
               for i, n in enumerate((3, 4, 2))]
CNN_W0 = lc.init_for(CNN, 53, scale=0.5)


def fedavg_cnn():
    plans = [
        [(0, [[0, 2], [1]]), (1, [[3, 1], [0, 2]]), (2, [[1, 0]])],
        [(0, [[1, 2, 0]]), (2, [[0], [1, 0]])],
    ]
    spec = pg.given_spec(
        "FedAvg, CNN with dropout after the pool and before the last dense "
        "(PFLlib-like), masks as data, two rounds",
        "Input 1x5x5; conv (2 channels, kernel 2, padding 1) -> 2x6x6, relu, maxpool2d "
        "2 -> 2x3x3, dropout 'drop1' (p = 0.25) on the 2x3x3 image (its mask per "
        "sample in NCHW order, 18 entries), flatten, dense 'fc1' 18 -> 4, relu, "
        "dropout 'drop2' (p = 0.375), dense 'fc' 4 -> 1; loss (y-hat - y)^2; eta = "
        "0.0625; weights n_k / m_t; two masks per local step.",
        CNN, CNN_CLIENTS, {"kind": "given", "w": CNN_W0},
        {"name": "fedavg", "hyperparameters": {"eta": 0.0625},
         "switches": {"fedavg.weights": "samples"}},
        rounds_json(plans, 950, [("drop1", 18), ("drop2", 4)]))
    flags = ["dropout-scale", "dropout-train-mode", "conv-kernel-orientation",
             "pool-gradient", "flatten-order", "aggregation-weights"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"conv-kernel-orientation": ["conv-flip", "conv-kernel-transpose"],
                    "pool-gradient": ["pool-grad-first", "pool-grad-all"],
                    "flatten-order": ["flatten-nhwc"],
                    "aggregation-weights": ["uniform-weights"]})
    return make("fedavg", "layers/fedavg/cnn-dropout", "fedavg-cnn-dropout.json",
                spec["name"], spec, flags, mutants, fedavg_replay,
                lambda trace, w: (trace, w), lc.PAPER_FEDAVG)


def ditto_mlp():
    plans = [
        [(0, [[0, 2], [1]]), (1, [[1, 0], [2]]), (2, [[4, 1]])],
        [(0, [[3, 1]]), (2, [[0, 2], [3]])],
    ]
    spec = pg.given_spec(
        "Ditto, MLP with dropout (p = 1/4), masks as data for both solvers, two rounds",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Ditto: per batch a personal "
        "step v <- v - eta (grad f(v) + lambda (v - w^t)), then a global step, each its "
        "own training pass with its own mask (schedule.rounds[t].dropout[j] holds two "
        "passes per batch, personal first); eta = 0.125, lambda = 0.375; weights "
        "n_k / m_t; client 1 unsampled in round 1.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "ditto", "hyperparameters": {"eta": 0.125, "lambda": 0.375}},
        rounds_json(plans, 980, [("drop", 5)], passes_per_step=2))
    flags = ["dropout-scale", "dropout-train-mode", "prox-sign", "ditto-moving-ref",
             "stale-personal-state", "aggregation-weights"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"prox-sign": ["prox-plus"],
                    "ditto-moving-ref": ["ditto-ref-moving"],
                    "stale-personal-state": ["reset-personal", "personal-from-global"],
                    "aggregation-weights": ["uniform-weights"]})
    return make("ditto", "layers/ditto/mlp-dropout", "ditto-mlp-dropout.json",
                spec["name"], spec, flags, mutants, ditto_replay,
                lambda trace, w, v: (trace, w, v), DITTO_SOURCE)


def fedrep_mlp():
    plans = [
        [(0, [[0, 2], [1, 3], [2]]), (1, [[1, 0], [2], [0, 1]]), (2, [[4, 1], [0, 3]])],
        [(0, [[3, 1], [0]]), (2, [[0, 2], [3], [1, 4]])],
    ]
    spec = pg.given_spec(
        "FedRep (FedAlt preset) on the MLP with dropout (p = 1/4), masks as data, "
        "personal head, two rounds",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Split: the group head "
        "(out.weight, out.bias) is personal. FedRep: tau_v = 1 head step with gamma_v "
        "= 0.078125, then the body with gamma_u = 0.046875 on the remaining batches, "
        "one training pass and one mask per step; uniform weights; stateful.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "fedalt", "preset": "fedrep",
         "hyperparameters": {"gamma_u": 0.046875, "gamma_v": 0.078125, "tau_v": 1}},
        rounds_json(plans, 990, [("drop", 5)]), split={"personal": ["head"]})
    flags = ["dropout-scale", "dropout-train-mode", "pfl-update-order",
             "stale-personal-state", "aggregation-weights"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
                    "stale-personal-state": ["reset-personal"],
                    "aggregation-weights": ["samples-weights"]})
    return make("fedalt", "layers/fedalt/mlp-dropout-fedrep-head",
                "fedalt-mlp-dropout-fedrep-head.json", spec["name"], spec, flags,
                mutants, fedalt_replay, lambda trace, w, v: (trace, w, v), FEDALT_SOURCE)


POST_MUTANTS = {"dropout-scale": ["dropout-no-rescale"],
                "dropout-train-mode": ["dropout-eval-in-train", "dropout-eval-in-post"]}


def finetune_mlp():
    plans = [
        [(0, [[1, 3], [0]]), (2, [[2, 4], [1, 0]])],
        [(0, [[2, 0, 1]]), (1, [[0, 2], [1]]), (2, [[3, 1]])],
    ]
    post = [[[3, 0], [1, 2]], [[2, 1], [0]], [[4, 2], [0, 3], [1]]]
    spec = pg.given_spec(
        "FedAvg-FT, MLP with dropout (p = 1/4), masks as data in the rounds and the "
        "fine-tuning",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Two FedAvg rounds (eta = "
        "0.140625, weights n_k / m_t, client 1 unsampled in round 0), each local step "
        "its mask from schedule.rounds[t].dropout; then every client fine-tunes "
        "theta_i <- w with theta_i <- theta_i - eta_ft (grad f_i(theta_i; D) + mu_ft "
        "(theta_i - w)), eta_ft = 0.109375, mu_ft = 0.3125, on its post batches, each "
        "fine-tuning step a training pass with its mask from "
        "schedule.post_dropout[i].",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "finetune",
         "hyperparameters": {"eta": 0.140625, "eta_ft": 0.109375, "mu_ft": 0.3125}},
        rounds_json(plans, 1010, [("drop", 5)]), post=post)
    spec["schedule"]["post_dropout"] = post_masks(1030, post, [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "prox-sign", "prox-reference",
             "initial-point", "aggregation-weights"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"prox-sign": ["prox-plus"],
                    "prox-reference": ["prox-ref-w0", "prox-ref-moving"],
                    "initial-point": ["finetune-w0"],
                    "aggregation-weights": ["uniform-weights"]})
    return make("finetune", "layers/finetune/mlp-dropout", "finetune-mlp-dropout.json",
                spec["name"], spec, flags, mutants, finetune_replay,
                lambda trace, w, v: (trace, w, v),
                "FedAvg-FT (seed 000 §4, Code 14.7.1; shared/spec notes §5.1)")


def fedrep_post_mlp():
    plans = [
        [(0, [[0, 2], [1, 3]]), (1, [[1, 0], [2]]), (2, [[4, 1], [0, 3], [2]])],
        [(1, [[2, 1], [0]]), (2, [[0, 2], [3, 4]])],
    ]
    post = [[[1, 2], [3]], [[0, 2]], [[2, 0], [4, 1]]]
    spec = pg.given_spec(
        "FedRep (FedAlt preset) on the MLP with dropout (p = 1/4), masks as data in the "
        "rounds and the final fine-tuning of the head",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Split: the group head is "
        "personal. FedRep: tau_v = 1 head step (gamma_v = 0.078125), then the body "
        "(gamma_u = 0.046875), one mask per step from schedule.rounds[t].dropout; "
        "client 0 unsampled in round 1; then the final fine-tuning of v (pfl.finetune "
        "= personal) with eta_ft = 0.1171875 on each client's post batches, each step "
        "a training pass with its mask from schedule.post_dropout[i].",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "fedalt", "preset": "fedrep",
         "hyperparameters": {"gamma_u": 0.046875, "gamma_v": 0.078125, "tau_v": 1,
                             "eta_ft": 0.1171875}},
        rounds_json(plans, 1050, [("drop", 5)]), split={"personal": ["head"]}, post=post)
    spec["schedule"]["post_dropout"] = post_masks(1070, post, [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "pfl-update-order",
             "stale-personal-state", "finetune-scope", "aggregation-weights"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"pfl-update-order": ["fedalt-u-first", "fedalt-stale-v"],
                    "stale-personal-state": ["reset-personal"],
                    "finetune-scope": ["scope-flip"],
                    "aggregation-weights": ["samples-weights"]})
    return make("fedalt", "layers/fedalt/mlp-dropout-fedrep-post",
                "fedalt-mlp-dropout-fedrep-post.json", spec["name"], spec, flags,
                mutants, fedalt_replay, lambda trace, w, v: (trace, w, v), FEDALT_SOURCE)


def interp_mlp():
    def client(i, n, nv, nt):
        rng = random.Random(1150 + i)
        return dict(MLP_CLIENTS[i],
                    X_val=lc.rows(1160 + i, nv, 3, den=16),
                    y_val=lc.values(rng, nv, -1.5, 1.5, 16),
                    X_test=lc.rows(1170 + i, nt, 3, den=16),
                    y_test=lc.values(rng, nt, -1.5, 1.5, 16))
    clients = [client(i, n, nv, nt)
               for i, (n, nv, nt) in enumerate(((4, 2, 1), (3, 3, 2), (5, 2, 2)))]
    plans = [
        [(0, [[2, 0], [3]]), (1, [[1, 2], [0]]), (2, [[3, 4]])],
        [(0, [[1, 3, 0]]), (2, [[2, 0], [1, 4]])],
    ]
    post = [[[0, 1], [3, 2]], [[1], [2, 0]], [[4, 3], [0], [2, 1]]]
    spec = pg.given_spec(
        "Interpolation (per-client grid) on the MLP with dropout (p = 1/4), masks as data "
        "in the rounds and in the local models' training",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Two FedAvg rounds (eta = "
        "0.1171875, weights n_k / m_t, client 1 unsampled in round 1), one mask per "
        "local step from schedule.rounds[t].dropout; then every client trains h_i from "
        "w0 on its post batches, one mask per step from schedule.post_dropout[i]; the "
        "grid alpha_j = j/4 scores alpha_j h_i + (1 - alpha_j) w on the validation split "
        "in evaluation mode (dropout the identity, no mask).",
        MLP, clients, {"kind": "given", "w": MLP_W0},
        {"name": "interp", "hyperparameters": {"eta": 0.1171875, "interp.grid": 4},
         "switches": {"interp.alpha": "per_client_grid", "interp.select": "validation"}},
        rounds_json(plans, 1110, [("drop", 5)]), post=post)
    spec["schedule"]["post_dropout"] = post_masks(1130, post, [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "interp-alpha-direction",
             "interp-selection", "initial-point", "aggregation-weights"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"interp-alpha-direction": ["alpha-swap"],
                    "interp-selection": ["select-flip"],
                    "initial-point": ["local-from-global"],
                    "aggregation-weights": ["weights=uniform"]})
    return make("interp", "layers/interp/mlp-dropout-grid", "interp-mlp-dropout-grid.json",
                spec["name"], spec, flags, mutants, interp_replay,
                lambda trace, w, hs, alphas: (trace, w, hs, alphas),
                "Mansour, Mohri, Ro, Suresh 2020, §3 (interpolation); shared/spec notes §5.2")


def apfl_mlp():
    plans = [
        [(0, [[3, 1], [0, 2]]), (1, [[2], [0, 1]]), (2, [[1, 4], [3]])],
        [(0, [[2, 3]]), (2, [[0, 4], [2, 1]])],
    ]
    spec = pg.given_spec(
        "APFL (adaptive alpha) on the MLP with dropout (p = 1/4), masks as data, two "
        "passes a step",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). APFL (Deng et al., Alg. 1, "
        "parameter mixing): per batch w_i <- w_i - eta grad f(w_i), then v_i <- v_i - "
        "eta alpha_i grad f(v-bar), v-bar = alpha_i v_i + (1 - alpha_i) w_i (the old w_i), "
        "and alpha_i <- clip(alpha_i - eta_alpha <v_i - w_i, grad f(v-bar)>); two "
        "training passes a step, each its own mask: schedule.rounds[t].dropout[j] holds "
        "w_i's pass, then v-bar's, per batch; eta = 0.109375, alpha = 0.375, eta_alpha "
        "= 0.40625; uniform mean; client 1 unsampled in round 1.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "apfl", "hyperparameters": {"eta": 0.109375, "alpha": 0.375,
                                             "eta_alpha": 0.40625},
         "switches": {"apfl.alpha": "adaptive"}},
        rounds_json(plans, 1210, [("drop", 5)], passes_per_step=2))
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order", "apfl-v-scale",
             "apfl-alpha-update", "apfl-mix-uses-w", "stale-personal-state",
             "aggregation-weights"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "apfl-v-scale": ["v-no-alpha"],
                    "apfl-alpha-update": ["alpha-new-iterates", "alpha-sign"],
                    "apfl-mix-uses-w": ["mix-w-flip"],
                    "stale-personal-state": ["reset-personal", "alpha-reset"],
                    "aggregation-weights": ["samples-weights"]})
    return make("apfl", "layers/apfl/mlp-dropout-adaptive", "apfl-mlp-dropout-adaptive.json",
                spec["name"], spec, flags, mutants, apfl_replay,
                lambda trace, w, v, alpha: (trace, w, v, alpha),
                "Deng, Kamani, Mahdavi, arXiv 2003.13461, Alg. 1; shared/spec notes §6(c)")


def perfedavg_mlp():
    # step t reads batches 3(t−1) (D), 3(t−1)+1 (D′); FO scheduled D″ unread
    # D and D′ of a step the same size, so a candidate that swaps their masks
    # runs (and is caught) rather than failing on a shape
    plans = [
        [(0, [[1, 3], [0, 2], [3], [2], [1], [0, 3]]), (2, [[0, 4], [2, 1], [3]])],
        [(0, [[2, 0], [1, 3], [0]]), (1, [[1], [2], [0, 1]]),
         (2, [[4, 3], [1, 0], [0, 2], [2, 4, 1], [3, 0, 2], [1]])],
    ]
    rounds = [{"clients": [k for k, _ in plan], "batches": [b for _, b in plan]}
              for plan in plans]
    # the masks: two passes a step (D's, then D′'s), none for the unread D″
    for t, (r, plan) in enumerate(zip(rounds, plans)):
        fo = [(k, [b for q, b in enumerate(bs) if q % 3 != 2]) for k, bs in plan]
        r["dropout"] = round_masks(1310 + t, fo, [("drop", 5)])
    post = [[[2, 1]], [[0, 2]], [[3, 0]]]
    spec = pg.given_spec(
        "Per-FedAvg (first-order) on the MLP with dropout (p = 1/4), masks as data for "
        "both passes of a step and the personalisation step",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Per-FedAvg FO (Fallah et al., "
        "Alg. 1; PFLlib's variant): per step w~ = w - alpha grad f(w; D), w <- w - beta "
        "grad f(w~; D'), two training passes each with its own mask (schedule.rounds[t]"
        ".dropout[j]: D's pass, then D''s; the scheduled D'' is not read); alpha = "
        "0.0703125, beta = 0.1015625; uniform mean; client 1 unsampled in round 0; then "
        "each client's personalised theta_i = w - alpha grad f_i(w; D) on its post batch, "
        "its mask from schedule.post_dropout[i].",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "perfedavg", "hyperparameters": {"alpha": 0.0703125, "beta": 0.1015625},
         "switches": {"perfedavg.variant": "fo"}},
        rounds, post=post)
    spec["schedule"]["post_dropout"] = post_masks(1330, post, [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order",
             "perfedavg-batch-reuse", "perfedavg-no-restore", "aggregation-weights",
             "stale-global"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "perfedavg-batch-reuse": ["reuse-d-for-d1"],
                    "perfedavg-no-restore": ["no-restore"],
                    "aggregation-weights": ["weights-flip"],
                    "stale-global": ["restart-w0", "eval-on-w0"]})
    return make("perfedavg", "layers/perfedavg/mlp-dropout-fo",
                "perfedavg-mlp-dropout-fo.json", spec["name"], spec, flags, mutants,
                perfedavg_replay, lambda trace, w, v, alpha: (trace, w, v),
                "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1 (first-order); "
                "shared/spec notes §4(c)")


def perfedavg_exact_mlp():
    plans = [
        [(0, [[2, 0], [1, 3], [3]]), (1, [[0], [2], [1, 2]]), (2, [[1, 4], [0, 3], [2]])],
        [(1, [[2, 1], [0], [1]]), (2, [[3, 0], [4, 2], [1, 3]])],
    ]
    spec = pg.given_spec(
        "Per-FedAvg (exact Hessian) on the MLP with dropout (p = 1/4), masks as data for "
        "the three passes of a step",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Per-FedAvg (Fallah et al., "
        "Alg. 1, the exact meta gradient): per step w~ = w - alpha grad f(w; D), q = grad "
        "f(w~; D'), w <- w - beta (q - alpha H(w; D'') q), three training passes, each its "
        "own mask in that order (D's, D''s, then the Hessian-vector product's one forward "
        "on D''); alpha = 0.0859375, beta = 0.1171875; uniform mean; client 0 unsampled "
        "in round 1; then theta_i = w - alpha grad f_i(w; D) on each post batch.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "perfedavg", "hyperparameters": {"alpha": 0.0859375, "beta": 0.1171875}},
        rounds_json(plans, 1410, [("drop", 5)]), post=[[[0, 3]], [[1, 2]], [[4, 1]]])
    spec["schedule"]["post_dropout"] = post_masks(1430, spec["schedule"]["post"],
                                                  [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "perfedavg-hessian-term",
             "aggregation-weights", "stale-global"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"perfedavg-hessian-term": ["fo-step", "hessian-sign",
                                               "hessian-at-tilde"],
                    "aggregation-weights": ["weights-flip"],
                    "stale-global": ["restart-w0", "eval-on-w0"]})
    return make("perfedavg", "layers/perfedavg/mlp-dropout-exact",
                "perfedavg-mlp-dropout-exact.json", spec["name"], spec, flags, mutants,
                perfedavg_replay, lambda trace, w, v, alpha: (trace, w, v),
                "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1 (exact); "
                "shared/spec notes §4(c)")


def perfedavg_hf_mlp():
    plans = [
        [(0, [[3, 1], [2, 0], [1, 2]]), (2, [[2, 0], [4, 1], [3]])],
        [(0, [[0], [3], [2, 1]]), (1, [[2, 0], [1, 2], [0]]), (2, [[1, 3], [0, 4], [2, 3]])],
    ]
    spec = pg.given_spec(
        "Per-FedAvg (Hessian-free) on the MLP with dropout (p = 1/4), masks as data for "
        "the four passes of a step",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). Per-FedAvg HF (Fallah et al., "
        "Alg. 1): per step w~ = w - alpha grad f(w; D), q = grad f(w~; D'), d = [grad "
        "f(w + delta q; D'') - grad f(w - delta q; D'')] / (2 delta), w <- w - beta (q - "
        "alpha d): four training passes, each its own mask in that order; alpha = "
        "0.0625, beta = 0.109375, delta = 0.125; uniform mean; client 1 unsampled in round "
        "0; then theta_i = w - alpha grad f_i(w; D) on each post batch.",
        MLP, MLP_CLIENTS, {"kind": "given", "w": MLP_W0},
        {"name": "perfedavg", "hyperparameters": {"alpha": 0.0625, "beta": 0.109375,
                                                  "delta": 0.125},
         "switches": {"perfedavg.variant": "hf"}},
        rounds_json(plans, 1510, [("drop", 5)], passes_per_step=1), post=[[[1, 0]], [[2]],
                                                                          [[0, 3, 4]]])
    # four passes a step: D's, D′'s, then D″'s twice (w + δq, w − δq)
    for t, (r, plan) in enumerate(zip(spec["schedule"]["rounds"], plans)):
        four = [(k, [b for q, b in enumerate(bs) for _ in range(2 if q % 3 == 2 else 1)])
                for k, bs in plan]
        r["dropout"] = round_masks(1510 + t, four, [("drop", 5)])
    spec["schedule"]["post_dropout"] = post_masks(1530, spec["schedule"]["post"],
                                                  [("drop", 5)])
    flags = ["dropout-scale", "dropout-train-mode", "perfedavg-hessian-term",
             "perfedavg-hf-center", "aggregation-weights"]
    mutants = dict(POST_MUTANTS)
    mutants.update({"perfedavg-hessian-term": ["fo-step", "hessian-sign"],
                    "perfedavg-hf-center": ["hf-center-tilde"],
                    "aggregation-weights": ["weights-flip"]})
    return make("perfedavg", "layers/perfedavg/mlp-dropout-hf",
                "perfedavg-mlp-dropout-hf.json", spec["name"], spec, flags, mutants,
                perfedavg_replay, lambda trace, w, v, alpha: (trace, w, v),
                "Fallah, Mokhtari, Ozdaglar, NeurIPS 2020, Alg. 1 (Hessian-free); "
                "shared/spec notes §4(c)")


FEDBN_SOURCE = ("Li, Jiang, Zhang, Kamp, Dou, ICLR 2021 (FedBN), Alg. 1; shared/spec "
                "notes-fedbn-fedfomo.md §1")
CFL_SOURCE = ("Sattler, Müller, Samek, IEEE TNNLS 2020, Alg. 1; shared/spec "
              "notes-cfl-ifca-sampling-metrics.md §1")

BN_MLP = {"kind": "layers", "input": [3], "loss": "squared",
          "layers": [{"type": "dense", "name": "fc1", "out": 4, "bias": False},
                     {"type": "batchnorm1d", "name": "bn1", "eps": 0.03, "momentum": 0.2},
                     {"type": "relu"},
                     {"type": "dropout", "name": "drop", "p": 0.25},
                     {"type": "dense", "name": "out", "out": 1}]}


def fedavg_gap(spec, plans, eta):
    """The float64 gap of FedAvg on spec's model, data, start and masks (the
    same passes: one a step), the running statistics frozen, against its
    60-digit decimal run (as make_bn.py measures FedBN's)."""
    frozen = {"bn.running": "frozen"}
    model, clients, w0 = spec["model"], spec["problem"]["clients"], spec["init"]["w"]

    def run(domain):
        return with_feed(spec, lambda: lc.fedavg_run(model, clients, w0, eta, "samples",
                                                     plans, domain=domain,
                                                     switches=frozen))
    (t_ex, w_ex), (t_fl, w_fl) = run(None), run("float")
    return lc.gap(pg.expected(t_ex, w=w_ex), pg.expected(t_fl, w=w_fl))


def fedbn_mlp():
    # two batches (of at least two rows: batch statistics) per participant
    # and round, of one size, so the pass-swap bug swaps two of a client's
    # steps' masks (and runs, rather than failing on a shape)
    plans = [
        [(0, [[0, 2], [3, 1]]), (1, [[2, 0], [1, 2]]), (2, [[4, 1], [0, 3]])],
        [(0, [[1, 3, 0], [2, 1, 3]]), (2, [[2, 4, 0], [3, 0, 1]])],
    ]
    spec = pg.given_spec(
        "FedBN on an MLP with batch normalisation and dropout (p = 1/4), masks as data",
        "Layers dense 'fc1' 3 -> 4 (no bias), batchnorm1d 'bn1' (eps = 0.03, momentum = "
        "0.2), relu, dropout 'drop' (p = 0.25), dense 'out' 4 -> 1; loss (y-hat - y)^2. "
        "FedBN (Alg. 1): each participant starts from the global non-BN parameters and "
        "its own BN entries (gamma, beta, running statistics), takes one local SGD step "
        "per batch (eta = 0.078125), each step a training pass with its own mask from "
        "schedule.rounds[t].dropout[j]; the non-BN parameters are averaged (uniform), the "
        "BN entries stay local; client 1 unsampled in round 1.",
        BN_MLP, MLP_CLIENTS, {"kind": "given", "w": lc.init_for(BN_MLP, 61, scale=0.75,
                                                               den=64)},
        {"name": "fedbn", "hyperparameters": {"eta": 0.078125}},
        rounds_json(plans, 1610, [("drop", 4)]))
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order",
             "fedbn-bn-averaged", "bn-running-update", "bn-backward", "aggregation-weights"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "fedbn-bn-averaged": ["bn-averaged"],
                    "bn-running-update": ["momentum-flipped", "running-in-training"],
                    "bn-backward": ["no-stat-backward"],
                    "aggregation-weights": ["weights=samples"]})
    return make("fedbn", "layers/fedbn/bn1d-mlp-dropout", "fedbn-bn1d-mlp-dropout.json",
                spec["name"], spec, flags, mutants,
                lambda sp, bugs, domain=None: module_replay("fedbn", sp, bugs, domain),
                lambda trace, w, v, alpha: (trace, w, v), FEDBN_SOURCE,
                "60-digit decimals", lambda: fedavg_gap(spec, plans, 0.078125))


def cfl_clients():
    """Four clients of the MLP's input, two groups of opposite targets."""
    out = []
    for i, n in enumerate((4, 3, 5, 6)):   # distinct sizes (weights by size)
        rng = random.Random(1650 + i)
        sign = 1 if i in (0, 2) else -1
        out.append({"X": lc.rows(1660 + i, n, 3, den=16),
                    "y": [sign * abs(v) for v in lc.values(rng, n, 0.5, 1.5, 16)]})
    return out


def cfl_mlp():
    clients = cfl_clients()
    # a participant's batches in pairs of one size (the pass-swap bug runs)
    plans = [
        [(0, [[0, 2], [1, 3]]), (1, [[2, 0], [1, 2]]), (2, [[4, 1], [0, 3]]),
         (3, [[3, 1], [0, 2]])],
        [(0, [[1, 3, 0], [2, 1, 3]]), (1, [[1, 0], [2, 1]]), (2, [[2, 0], [3, 4]]),
         (3, [[0], [2]])],
    ]
    rounds = rounds_json(plans, 1710, [("drop", 5)])
    init = {"kind": "given", "w": MLP_W0}
    alg = {"name": "cfl", "hyperparameters": {"eta": 0.140625, "eps1": 100.0,
                                              "eps2": 0.0, "gamma_max": 1.0}}
    # the thresholds from the run's own first-round norms (as make_families.py's
    # cfl): ‖mean Δθ‖ well below ε₁, max ‖Δθ_i‖ well above ε₂, so round 0 splits
    probe = pg.given_spec("probe", None, MLP, clients, init, alg, rounds[:1])
    tr = module_replay("cfl", probe, frozenset())[0]
    notes = {r["name"]: float(r["value"][0]) for r in tr.records
             if r["event"] == "note" and r["round"] == 0 and len(r["value"]) == 1}
    mean_n, max_n, cross = (notes["norm_dtheta_c"], notes["max_norm_dtheta"],
                            notes["alpha_cross"])
    assert mean_n * 2 < max_n, (mean_n, max_n)
    eps1 = round(mean_n * 1.5 * 64) / 64
    eps2 = round(max_n * 0.75 * 64) / 64
    gmax = math.floor(0.8 * math.sqrt((1 - cross) / 2) * 64) / 64
    assert mean_n < eps1 * 0.9 and max_n > eps2 * 1.1 and eps1 != eps2, (mean_n, max_n)
    assert cross < (1 - 2 * gmax * gmax) - 0.05, (cross, gmax)
    alg["hyperparameters"].update({"eps1": eps1, "eps2": eps2, "gamma_max": gmax})
    spec = pg.given_spec(
        "CFL on the MLP with dropout (p = 1/4), masks as data, a split in round 0",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). CFL (Alg. 1): every client "
        "takes one local SGD step per batch (eta = 0.140625), each step a training pass "
        "with its own mask from schedule.rounds[t].dropout[j]; four clients in two groups "
        f"of opposite targets; eps1 = {eps1}, eps2 = {eps2}, gamma_max = {gmax} (set "
        f"from the run's norms {mean_n:.4f}, {max_n:.4f} and alpha_cross {cross:.4f}), "
        "so the first round's cluster splits.",
        MLP, clients, init, alg, rounds)
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order",
             "cfl-similarity-normalisation", "cfl-split-update", "cfl-thresholds"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "cfl-similarity-normalisation": ["cfl-raw-similarity"],
                    "cfl-split-update": ["cfl-update-parent"],
                    "cfl-thresholds": ["cfl-eps2-is-eps1"]})
    return make("cfl", "layers/cfl/mlp-dropout-split", "cfl-mlp-dropout-split.json",
                spec["name"], spec, flags, mutants,
                lambda sp, bugs, domain=None: module_replay("cfl", sp, bugs, domain),
                lambda trace, w, v, alpha: (trace, w, v), CFL_SOURCE)


FEDFOMO_SOURCE = ("Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, Alg. 1; shared/spec "
                  "notes-fedfomo.md; the validation losses in training mode as "
                  "TsingZ0/PFLlib d832e76f6a23 clientfomo.py:139-151 runs them")


def fedfomo_data():
    """(clients, rounds) of the FedFomo dropout vectors: MLP_CLIENTS with
    validation splits of 2, 3, 2 rows, three rounds of given peers."""
    def client(i, n, nv):
        rng = random.Random(1750 + i)
        return dict(MLP_CLIENTS[i], X_val=lc.rows(1760 + i, nv, 3, den=16),
                    y_val=lc.values(rng, nv, -1.5, 1.5, 16))
    clients = [client(i, n, nv) for i, (n, nv) in enumerate(((4, 2), (3, 3), (5, 2)))]
    rounds = [
        {"clients": [0, 1], "batches": [[[0, 2], [1]], [[2, 0], [1]]],
         "peers": [[1, 2], [0, 2]]},
        {"clients": [0, 1, 2], "batches": [[[1, 3]], [[0, 1], [2]], [[4, 1], [0, 2]]],
         "peers": [[2, 1], [2, 0], [0, 1]]},
        {"clients": [0, 2], "batches": [[[3, 0], [2]], [[2, 3], [1, 4]]],
         "peers": [[1, 2], [1, 0]]},
    ]
    return clients, rounds


def fedfomo_mlp():
    clients, rounds = fedfomo_data()
    spec = pg.given_spec(
        "FedFomo on the MLP with dropout (p = 1/4), masks as data for the validation-loss "
        "passes and the local steps",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2); validation splits of 2, 3, 2 "
        "rows. FedFomo (Alg. 1): per participant, L_i(a) of the anchor a = phi_i, then "
        "L_i(theta_n) of each given download n (peers) whose theta_n differs from a, then "
        "the own upload's (fedfomo.self = included), each a training-mode pass on the "
        "whole validation split with its own mask, then one local SGD step per batch "
        "(eta = 0.109375), each its mask: schedule.rounds[t].dropout[j] holds them in "
        "that order. Round 0: every model is w0, so only L_i(a) is taken; round 1: "
        "client 2 takes its first part, client 1's download 2 is skipped (untrained).",
        MLP, clients, {"kind": "given", "w": MLP_W0},
        {"name": "fedfomo", "hyperparameters": {"eta": 0.109375}}, rounds)
    # in 60-digit decimals: the weights' square roots make exact fractions grow
    # round over round
    probe_round_masks("fedfomo", spec, 1810, [("drop", 5)], train_loss=True,
                      domain="decimal")
    flags = ["dropout-scale", "dropout-train-mode", "fedfomo-clip", "fedfomo-normalise",
             "fedfomo-distance", "fedfomo-affinity"]
    mutants = {"dropout-scale": ["dropout-no-rescale"],
               "dropout-train-mode": ["dropout-eval-in-train", "dropout-eval-in-val"],
               "fedfomo-clip": ["fomo-no-clip"],
               "fedfomo-normalise": ["fomo-no-normalise"],
               "fedfomo-distance": ["fomo-squared-dist"],
               "fedfomo-affinity": ["fomo-affinity-ratio"]}
    return make("fedfomo", "layers/fedfomo/mlp-dropout-peers", "fedfomo-mlp-dropout-peers.json",
                spec["name"], spec, flags, mutants,
                lambda sp, bugs, domain="decimal": module_replay("fedfomo", sp, bugs, domain,
                                                                 train_loss=True),
                lambda trace, w, v, alpha: (trace, w, v), FEDFOMO_SOURCE,
                "60-digit decimals")


FEDFOMO_EVAL_SOURCE = ("Zhang, Sapra, Fidler, Yeung, Alvarez, ICLR 2021, Alg. 1; shared/spec "
                       "notes-fedbn-fedfomo.md §2.3; the validation losses in evaluation mode "
                       "as NVlabs/FedFomo fe04f66 federation.py:163-166 and "
                       "federated/train.py:81 run them (eval(): dropout off)")


def fedfomo_mlp_eval():
    """layers/fedfomo/mlp-dropout-peers's data under fedfomo.val_mode =
    eval: the validation losses are evaluation passes (dropout the
    identity, no mask), so each participant's list holds its local steps'
    masks alone."""
    clients, rounds = fedfomo_data()
    spec = pg.given_spec(
        "FedFomo on the MLP with dropout (p = 1/4), validation losses in evaluation "
        "mode, masks for the local steps only",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2); the data, peers and "
        "schedule of layers/fedfomo/mlp-dropout-peers. FedFomo (Alg. 1) with "
        "fedfomo.val_mode = eval: every L_i (the anchor's, each download's unequal to "
        "the anchor, the own upload's) is an evaluation-mode pass, the dropout layer "
        "the identity and no mask taken; each local SGD step (eta = 0.109375) is a "
        "training pass with its mask: schedule.rounds[t].dropout[j] holds those, one "
        "per local step.",
        MLP, clients, {"kind": "given", "w": MLP_W0},
        {"name": "fedfomo", "hyperparameters": {"eta": 0.109375},
         "switches": {"fedfomo.val_mode": "eval"}}, rounds)
    probe_round_masks("fedfomo", spec, 1831, [("drop", 5)], train_loss=True,
                      domain="decimal")
    for r in spec["schedule"]["rounds"]:     # one mask per local step
        assert [len(d) for d in r["dropout"]] == [len(b) for b in r["batches"]], r
    # (fomo-no-clip leaves this run within tolerance: fedfomo-clip not flagged)
    flags = ["dropout-scale", "dropout-train-mode", "fedfomo-normalise",
             "fedfomo-distance", "fedfomo-affinity"]
    mutants = {"dropout-scale": ["dropout-no-rescale"],
               "dropout-train-mode": ["dropout-eval-in-train"],
               "fedfomo-normalise": ["fomo-no-normalise"],
               "fedfomo-distance": ["fomo-squared-dist"],
               "fedfomo-affinity": ["fomo-affinity-ratio"]}
    return make("fedfomo", "layers/fedfomo/mlp-dropout-eval", "fedfomo-mlp-dropout-eval.json",
                spec["name"], spec, flags, mutants,
                lambda sp, bugs, domain="decimal": module_replay("fedfomo", sp, bugs, domain,
                                                                 train_loss=True),
                lambda trace, w, v, alpha: (trace, w, v), FEDFOMO_EVAL_SOURCE,
                "60-digit decimals")


PFEDHN_SOURCE = ("Shamsian, Navon, Fetaya, Chechik, ICML 2021, arXiv 2103.04628v1, Alg. 1; "
                 "shared/spec notes-lora-pfedhn.md §4")


def pfedhn_mlp():
    P = pl.Model(MLP, "float").P
    rng = random.Random(1900)
    hn = {"W": [lc.values(rng, 2, -0.5, 0.5, 64) for _ in range(P)],
          "b": lc.values(rng, P, -0.25, 0.25, 64),
          "v": [lc.values(rng, 2, -1.25, 1.25, 16) for _ in range(3)]}
    # one client a round (Alg. 1 l. 2), two batches of one size each
    plans = [[(2, [[0, 3], [4, 1]])], [(0, [[1, 2], [3, 0]])], [(2, [[2], [0]])],
             [(1, [[2, 0], [1, 2]])]]
    spec = pg.given_spec(
        "pFedHN on the MLP with dropout (p = 1/4), masks as data, a linear hypernetwork",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). pFedHN (Alg. 1): theta_i = "
        "W_h v_i + b_h (e = 2), K local SGD steps with eta = 0.0859375, each a training "
        "pass with its mask from schedule.rounds[t].dropout[0], then W_h, b_h <- + alpha "
        "dtheta v_i^T, + alpha dtheta and v_i <- + alpha_v W_h^T dtheta; alpha = 0.3125, "
        "alpha_v = 0.4375; the reported theta_i = h(v_i) take no pass.",
        MLP, MLP_CLIENTS, {"kind": "zeros", "hypernetwork": hn},
        {"name": "pfedhn", "hyperparameters": {"eta": 0.0859375, "alpha": 0.3125,
                                               "pfedhn.alpha_v": 0.4375}},
        rounds_json(plans, 1910, [("drop", 5)]))
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order", "pfedhn-sign",
             "pfedhn-simultaneous", "pfedhn-embed-rate", "pfedhn-bias"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "pfedhn-sign": ["hn-ascent", "hn-embed-ascent"],
                    "pfedhn-simultaneous": ["hn-embed-new-w", "hn-w-new-v"],
                    "pfedhn-embed-rate": ["hn-embed-alpha"],
                    "pfedhn-bias": ["hn-bias-frozen"]})
    return make("pfedhn", "layers/pfedhn/mlp-dropout-linear-hn",
                "pfedhn-mlp-dropout-linear-hn.json", spec["name"], spec, flags, mutants,
                lambda sp, bugs, domain="decimal": module_replay("pfedhn", sp, bugs, domain),
                lambda trace, w, v, alpha: (trace, w, v), PFEDHN_SOURCE, "60-digit decimals")


IFCA_SOURCE = ("Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, arXiv 2006.04088, Alg. 1 "
               "(Option II); shared/spec notes-cfl-ifca-sampling-metrics.md §2; the "
               "estimate F_i(theta_j) in evaluation mode (ifca.estimate_mode = eval) as "
               "Gerid/FedDCA 88c5187 system/flcore/clients/clientifca.py:56-61 takes it "
               "(model.eval(), torch.no_grad(): dropout off)")


def ifca_clients():
    """Four clients of the MLP's input, two concepts: clients 0 and 2 of
    positive targets, 1 and 3 of negative ones; sizes 4, 5, 3, 6."""
    out = []
    for i, n in enumerate((4, 5, 3, 6)):
        rng = random.Random(2100 + i)
        sign = 1 if i in (0, 2) else -1
        out.append({"X": lc.rows(2110 + i, n, 3, den=16),
                    "y": [sign * abs(v) for v in lc.values(rng, n, 0.5, 1.5, 16)]})
    return out


def ifca_mlp():
    """IFCA, Option II, under ifca.estimate_mode = eval: every estimate
    ĵ = argmin_j F_i(θ_j) (the participants' at the round's start, every
    client's for the reported v_i before round 0 and after each server
    update) is an evaluation pass (dropout the identity, no mask), so a
    participant's list holds one mask per local step of LocalUpdate,
    each step's its own; each participant's steps in pairs of one batch
    size (dropout-pass-swap runs and is caught).  Two given cluster
    models; client 1 moves from cluster 0 to 1 after round 0, client 3
    from 1 to 0 in round 1 and back in round 2."""
    clients = ifca_clients()
    plans = [
        [(0, [[0, 2], [1, 3]]), (1, [[2, 0], [4, 1]]), (3, [[3, 1], [0, 5]])],
        [(0, [[1, 3, 0], [2, 1, 3]]), (1, [[1, 0], [2, 3]]), (2, [[2, 0], [1, 0]]),
         (3, [[4, 2], [5, 0]])],
        [(1, [[3, 4], [0, 2]]), (2, [[0, 1, 2], [2, 1, 0]]), (3, [[1], [3]])],
    ]
    rounds = rounds_json(plans, 2010, [("drop", 5)])
    init = {"kind": "zeros", "cluster_models": [lc.init_for(MLP, 66, scale=0.75, den=64),
                                                 lc.init_for(MLP, 83, scale=0.75, den=64)]}
    spec = pg.given_spec(
        "IFCA (model averaging) on the MLP with dropout (p = 1/4), estimates in "
        "evaluation mode, masks for the local steps only",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). IFCA (Alg. 1, Option II: "
        "ifca.mode = model) with k = 2 given cluster models and ifca.estimate_mode = "
        "eval: each estimate j-hat = argmin_j F_i(theta_j) on the client's whole "
        "training set is an evaluation-mode pass (dropout the identity, no mask), for "
        "the participants at the round's start and for every client after the server "
        "update; each local SGD step of LocalUpdate (gamma = 0.140625) is a training "
        "pass with its own mask: schedule.rounds[t].dropout[j] holds those, one per "
        "step. Four clients of two concepts (targets of opposite signs); client 1 "
        "moves from cluster 0 to cluster 1 after round 0, client 3 from 1 to 0 in "
        "round 1 and back to 1 in round 2; client 2 sits out round 0, client 0 "
        "round 2.",
        MLP, clients, init,
        {"name": "ifca", "hyperparameters": {"gamma": 0.140625, "ifca.k": 2},
         "switches": {"ifca.mode": "model", "ifca.estimate_mode": "eval"}},
        rounds)
    for r in spec["schedule"]["rounds"]:     # one mask per local step
        assert [len(d) for d in r["dropout"]] == [len(b) for b in r["batches"]], r

    def replay(sp, bugs, domain=None):
        return module_replay("ifca", sp, bugs, domain)

    # the estimates the description names, and no near tie among the losses
    tr = replay(spec, frozenset(), "float")[0]
    picks, losses = {}, []
    for r in tr.records:
        if r["event"] == "note" and r["name"] == "j_hat":
            picks.setdefault(r["client"], []).append(int(float(r["value"][0])))
        if r["event"] == "note" and r["name"] == "loss":
            losses.append([float(x) for x in r["value"]])
    assert picks[1] == [0, 1, 1] and picks[3] == [1, 0, 1], picks
    assert min(abs(a - b) / max(abs(a), abs(b)) for a, b in losses) > 1e-2, losses
    # (ifca-report-last-pick leaves this run as it is: every client's last
    # pick is its final estimate, so ifca-estimate is not flagged)
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order", "ifca-init",
             "loss-scale"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "ifca-init": ["ifca-init-ignored"],
                    "loss-scale": ["loss-x2"]})
    return make("ifca", "layers/ifca/mlp-dropout-eval", "ifca-mlp-dropout-eval.json",
                spec["name"], spec, flags, mutants, replay,
                lambda trace, w, v, alpha: (trace, w, v), IFCA_SOURCE)


IFCA_TRAIN_SOURCE = (
    "Ghosh, Chung, Yin, Ramchandran, NeurIPS 2020, arXiv 2006.04088, Alg. 1 (Option II); "
    "shared/spec notes-cfl-ifca-sampling-metrics.md §2; the estimate F_i(theta_j) as a "
    "training-mode loss pass (ifca.estimate_mode = train, the default) as jichan3751/ifca "
    "61e44b8 mnist/train_cluster_mnist.py:384-392 scores the machines (no eval()), a dropout "
    "layer drawing its mask per forward, given here as data")


class EstimateFeed(Feed):
    """The masks of IFCA under ifca.estimate_mode = train: the estimate
    passes (a loss call of pflref_exact_ifca while `estimating` is set)
    take client i's estimate queue, in the order its estimates run:
    schedule.init_partition_dropout[i] (every client before round 0), then
    per round rounds[t].estimate_dropout[j] when it takes part
    (clients[j] = i, the round's start) and rounds[t].partition_dropout[i]
    (after the server update); every other training pass (the local steps)
    takes the rounds' dropout lists as Feed does.  strict: every estimate
    pass must be taken (a replay whose estimates run in evaluation mode
    takes none)."""

    def __init__(self, spec, strict=True):
        super().__init__(spec)
        sch = spec["schedule"]
        self.est = {i: list(lst) for i, lst in enumerate(sch["init_partition_dropout"])}
        for r in sch["rounds"]:
            for k, lst in zip(r["clients"], r["estimate_dropout"]):
                self.est[k].extend(lst)
            for i, lst in enumerate(r["partition_dropout"]):
                self.est[i].extend(lst)
        self.est_taken = dict.fromkeys(self.est, 0)
        self.estimating = False
        self.strict = strict

    def take(self, X, bugs=frozenset()):
        if not self.estimating:
            return super().take(X, bugs)
        k, _ = self.client_of(X)
        q = self.est_taken[k]
        assert q < len(self.est[k]), f"client {k}: estimate pass {q + 1} has no mask"
        assert len(self.est[k][q]["drop"]) == len(X), (k, q, len(X))
        self.est_taken[k] = q + 1
        self.post = False
        return self.est[k][q]

    def done(self):
        super().done()
        if self.strict:
            for k, lst in self.est.items():
                assert self.est_taken[k] == len(lst), (k, self.est_taken[k], len(lst))


def ifca_train_replay(spec, bugs, domain=None, record=None):
    """pflref_exact_ifca's run of spec with its estimate losses tagged as
    estimate passes (EstimateFeed); record (a list): each estimate loss
    call appends (client, its loss in the replay's mode, the same θ's loss
    in evaluation mode, no mask)."""
    import pflref_exact_ifca as pxi
    saved = pxi.loss
    feed = EstimateFeed(spec, strict="ifca-estimate-mode-flip" not in bugs)

    def tagged(pr, i, theta, bugs=frozenset(), mode="train"):
        feed.estimating = True
        try:
            f = saved(pr, i, theta, bugs, mode)
        finally:
            feed.estimating = False
        if record is not None:
            record.append((i, f, saved(pr, i, theta, bugs, "eval")))
        return f

    pxi.loss = tagged
    try:
        return module_replay("ifca", spec, bugs, domain, train_loss=True, feed=feed)
    finally:
        pxi.loss = saved


def estimate_masks(rng, lists, seen):
    """One estimate list: for each (client, n_i) k = 2 passes of n_i rows
    of the layer "drop" (5 entries), no pass repeating another."""
    out = []
    for n in lists:
        lst = []
        for _ in range(2):
            while True:
                p = {"drop": masks(rng, n, 5)}
                if repr(p) not in seen:
                    seen.add(repr(p))
                    break
            lst.append(p)
        out.append(lst)
    return out


def ifca_mlp_train():
    """IFCA, Option II, under ifca.estimate_mode = train (the default):
    every estimate ĵ = argmin_j F_i(θ_j) is k = 2 training-mode loss passes
    on the client's whole training set, each with its own masks (n_i rows)
    from the estimate lists: every client's before round 0
    (init_partition_dropout), the participants' at each round's start
    (rounds[t].estimate_dropout), every client's after each server update
    (rounds[t].partition_dropout); the local steps' masks stay in
    rounds[t].dropout, each participant's steps in pairs of one batch size.
    The masks are chosen (seed below) so that estimates pick another
    cluster than the evaluation-mode loss at the same θ would, a
    participant's round-start estimate among them (asserted): a candidate
    that scores in evaluation mode trains another cluster and is caught."""
    clients = ifca_clients()
    n = [len(c["X"]) for c in clients]
    plans = [
        [(0, [[0, 2], [1, 3]]), (1, [[2, 0], [4, 1]]), (3, [[3, 1], [0, 5]])],
        [(0, [[1, 3, 0], [2, 1, 3]]), (1, [[1, 0], [2, 3]]), (2, [[2, 0], [1, 0]]),
         (3, [[4, 2], [5, 0]])],
    ]
    init = {"kind": "zeros", "cluster_models": [lc.init_for(MLP, 66, scale=0.75, den=64),
                                                 lc.init_for(MLP, 83, scale=0.75, den=64)]}
    seed = IFCA_TRAIN_SEED
    rounds = rounds_json(plans, 2410, [("drop", 5)])
    rng = random.Random(seed)
    seen = {repr(p) for r in rounds for lst in r["dropout"] for p in lst}
    init_lists = estimate_masks(rng, n, seen)
    for r in rounds:
        r["estimate_dropout"] = estimate_masks(rng, [n[k] for k in r["clients"]], seen)
        r["partition_dropout"] = estimate_masks(rng, n, seen)
    # round 1's participants as a sampler drew them (information only): the
    # lists are by clients[j], so a reader that pairs them with the drawn
    # order hands each client another's masks
    rounds[1]["drawn"] = [3, 0, 2, 1]
    spec = pg.given_spec(
        "IFCA (model averaging) on the MLP with dropout (p = 1/4), estimates in training "
        "mode with their masks given as data",
        "The MLP of layers/fedavg/mlp-dropout (dense 'fc1' 3 -> 5, relu, dropout 'drop' "
        "p = 0.25, dense 'out' 5 -> 1; (1/2)(y-hat - y)^2). IFCA (Alg. 1, Option II: "
        "ifca.mode = model) with k = 2 given cluster models and ifca.estimate_mode = "
        "train (the default): each F_i(theta_j) of an estimate j-hat = argmin_j "
        "F_i(theta_j) is a training-mode loss pass on the client's whole training set "
        "with its own mask (n_i rows), theta_0's pass first: every client's before round "
        "0 from schedule.init_partition_dropout[i], each participant's at the round's "
        "start from schedule.rounds[t].estimate_dropout[j], every client's after the "
        "server update from schedule.rounds[t].partition_dropout[i]; each local SGD step "
        "of LocalUpdate (gamma = 0.140625) a training pass with its mask from "
        "schedule.rounds[t].dropout[j]. Four clients of two concepts (targets of "
        "opposite signs), two rounds, client 2 sitting out round 0, round 1's clients "
        "drawn in the order 3, 0, 2, 1 (information only). Under these masks "
        "some estimates pick another cluster than the evaluation-mode losses at the same "
        "models would.",
        MLP, clients, init,
        {"name": "ifca", "hyperparameters": {"gamma": 0.140625, "ifca.k": 2},
         "switches": {"ifca.mode": "model", "ifca.estimate_mode": "train"}},
        rounds)
    spec["schedule"]["init_partition_dropout"] = init_lists
    for r in spec["schedule"]["rounds"]:     # one mask per local step
        assert [len(d) for d in r["dropout"]] == [len(b) for b in r["batches"]], r

    def replay(sp, bugs, domain=None):
        return ifca_train_replay(sp, bugs, domain)

    # the masks move the estimate: at least one participant's round-start
    # estimate and one reported assignment pick another cluster than the
    # evaluation-mode losses at the same models; no near tie among the
    # training-mode losses
    rec = []
    ifca_train_replay(spec, frozenset(), "float", rec)
    N, M = len(clients), [len(p) for p in plans]
    sizes = [N] + [x for m in M for x in (m, N)]    # init, then per round start, partition
    groups, at = [], 0
    for g, size in enumerate(sizes):
        groups.append((g, rec[at:at + 2 * size]))
        at += 2 * size
    assert at == len(rec), (at, len(rec))
    moved = set()
    for g, calls in groups:
        for c in range(0, len(calls), 2):
            (i, a0, e0), (_, a1, e1) = calls[c], calls[c + 1]
            assert abs(a0 - a1) / max(abs(a0), abs(a1)) > 1e-2, (g, i, a0, a1)
            if (a1 < a0) != (e1 < e0):
                moved.add("start" if g % 2 == 1 else "partition")
    assert moved == {"start", "partition"}, moved
    flags = ["dropout-scale", "dropout-train-mode", "dropout-pass-order", "ifca-init",
             "ifca-estimate-mode", "loss-scale"]
    mutants = dict(DROP_MUTANTS)
    mutants.update({"dropout-pass-order": ["dropout-pass-swap"],
                    "ifca-init": ["ifca-init-ignored"],
                    "ifca-estimate-mode": ["ifca-estimate-mode-flip"],
                    "loss-scale": ["loss-x2"]})
    return make("ifca", "layers/ifca/mlp-dropout-estimate-train",
                "ifca-mlp-dropout-estimate-train.json", spec["name"], spec, flags, mutants,
                replay, lambda trace, w, v, alpha: (trace, w, v), IFCA_TRAIN_SOURCE)


# the seed of the estimate passes' masks (the first tried: its masks pass
# ifca_mlp_train's assertions)
IFCA_TRAIN_SEED = 2400


if __name__ == "__main__":
    pg.write_all(sys.argv, HERE, [fedavg_mlp, fedavg_cnn, ditto_mlp, fedrep_mlp,
                                  finetune_mlp, fedrep_post_mlp, interp_mlp, apfl_mlp,
                                  perfedavg_mlp, perfedavg_exact_mlp, perfedavg_hf_mlp,
                                  fedbn_mlp, cfl_mlp, fedfomo_mlp, pfedhn_mlp,
                                  fedfomo_mlp_eval, ifca_mlp, ifca_mlp_train])
