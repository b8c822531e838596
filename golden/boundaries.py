#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/boundaries.py: decisions at their thresholds.

    /usr/bin/python3 golden/boundaries.py [-q] [GOLDEN_DIR]
    /usr/bin/python3 golden/boundaries.py --self-test

(golden/coincidences.py runs it too, after the coincidence audit.)

Every comparison by which the C reference decides something from computed
values (a split criterion, a threshold, a tie of an argmin or of a sort, a
clamp) is listed in COMPARISONS with the file, the text of its line (the
audit finds the line number, so the table follows the code), the operator
and what it decides.  Each comparison is

  decided     by the vectors named: each sits exactly on the boundary, with
              exactly representable numbers, so that < and ≤ (> and ≥, or
              the other tie rule) give different runs; the entry's probe
              checks, by the exact generators' replay (or the spec), that
              at least one named vector really sits there;
  equal       when both readings give the same result at the boundary
              (max(r, 0) at r = 0, a clamp, a saturating count, a factor 1,
              distinct ids): no vector can tell them apart, and the
              argument says why (the matching mutants of the NumPy
              candidates are argued in tests/detection/mutation-equivalent.json);
  argued      the two readings differ, but no valid vector can sit on the
              boundary, and the argument says precisely why (the decision
              feeds nothing a vector holds, or a solver's rounding
              tolerance that no finite-precision iterate can be made to hit
              exactly, whose two sides agree within the vector's
              tolerance); what does decide it, if anything, is named;
  pending     not yet decided by any vector, with the reason; listed here
              so that the gap is visible, never silent.

Input validation (a hyperparameter's range), loop bounds and array sizes
are not decisions and are not listed.  Exit 1 when an entry's line is not
found in its file, a named vector does not exist, no named vector passes
the probe, or an entry has neither vectors, an argument nor a reason;
exit 2 on a usage error.  -q prints only the summary.

The table is also held against the C: scan() finds every floating
comparison of ref/algorithms/*.c and ref/engine/*.c (the rules are at
SCAN_DIRS below) and the audit fails on one that neither COMPARISONS nor
NOT_DECISIONS (floating comparisons that decide nothing: clamps, running
maxima, zero-division guards, counts held as doubles, range checks)
covers, and on a NOT_DECISIONS line no longer in its file.  --self-test plants
each failure (a vector moved off its boundary, a vector missing, a line not
found, an entry without a reason; for the scan, an unlisted comparison, one
whose floating operand is a header's double member, a NOT_DECISIONS line
changed) and exits 1 unless every one is caught.
"""
import os
import re
import sys
from decimal import Decimal
from fractions import Fraction

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


# ---- probes: does the vector (its spec) sit on the boundary? -------------

def _hp(spec):
    return spec["algorithm"].get("hyperparameters", {})


def _cfl_notes(spec, name):
    import pflref_exact_cfl as xc
    trace = xc.replay(spec)[0]
    return [(r.get("round"), r["value"]) for r in trace.records
            if r["event"] == "note" and r["name"] == name]


def _dec(x):
    import pflref_exact_cfl as xc
    return xc.dec(x) if isinstance(x, Fraction) else Decimal(x)


def cfl_norm_on(note, key):
    """A note (‖Δθ_c‖ or max ‖Δθ_i‖) equal to the threshold, exactly."""
    def probe(spec):
        th = _dec(Fraction(_hp(spec)[key]))
        return any(_dec(v[0]) == th for _, v in _cfl_notes(spec, note))
    return probe


def cfl_gamma_on(spec):
    """√((1 − α_max^cross)/2) = γ_max exactly, i.e. (1 − α)/2 = γ_max²."""
    g = Fraction(_hp(spec)["gamma_max"])
    return any((1 - _dec(v[0])) / 2 == _dec(g * g)
               for _, v in _cfl_notes(spec, "alpha_cross"))


def cfl_min_size_on(spec):
    """A cluster of exactly cfl.min_cluster_size members reaches the γ test
    (so the guard |c| < s let it through)."""
    s = _hp(spec).get("cfl.min_cluster_size", 0)
    return bool(s) and any(len(c1) + len(c2) == s for (_, c1), (_, c2) in
                           zip(_cfl_notes(spec, "c1"), _cfl_notes(spec, "c2")))


def cfl_warmup_on(spec):
    """A split tested in round t = cfl.warmup (t < r lets it through)."""
    r = _hp(spec).get("cfl.warmup", 0)
    return bool(r) and any(t == r for t, _ in _cfl_notes(spec, "c1"))


def cfl_pair_on(spec):
    """A cluster of exactly two members reaches the γ test (|c| < 2 lets it
    through)."""
    return any(len(c1) + len(c2) == 2 for (_, c1), (_, c2) in
               zip(_cfl_notes(spec, "c1"), _cfl_notes(spec, "c2")))


def cfl_tie_on(method):
    """Two equal similarities (Algorithm 1, method optimal) or two equal
    complete links (method complete_linkage) whose order changes the
    bipartition: the partition differs when equal values are taken last
    position (or last pair) first."""
    def probe(spec):
        import pflref_exact_cfl as xc

        def parts(bugs):
            return [r["value"] for r in xc.replay(spec, bugs)[0].records
                    if r["event"] == "note" and r["name"] == "partition"]
        sw = spec["algorithm"].get("switches", {})
        return (sw.get("cfl.bipartition", "optimal") == method and
                parts(frozenset()) != parts(frozenset({"cfl-ties-reversed"})))
    return probe


def ifca_tie(spec):
    import coincidences
    name, sw, hp = coincidences.effective(spec)
    return any(x.startswith("loss tie") for x in coincidences.r_ifca_ties(spec, sw, hp))


def ifca_empty(spec):
    """Option II with a cluster no participant chose in some round."""
    import pflref_exact_ifca as xi
    sw = spec["algorithm"].get("switches", {})
    if sw.get("ifca.mode") != "model":
        return False
    k = _hp(spec).get("ifca.k", 1)
    trace = xi.replay(spec)[0]
    chosen = {}
    for r in trace.records:
        if r["event"] == "note" and r["name"] == "j_hat":
            chosen.setdefault(r["round"], set()).add(int(r["value"][0]))
    return any(len(c) < k for c in chosen.values())


def interp_tie(spec):
    import pflref_exact_interp as xp
    return any(g == 0 for g in xp.grid_gaps(spec).values())


def fedala_std_on(spec):
    """A start phase's std test with the std exactly the threshold."""
    import pflref_exact_fedala as xf
    state = {}
    xf.replay(spec, state=state)
    return any(m == 1 for m in state["margins"])


def fedfomo_u_on(spec):
    """A slot's u equal to ε_t = ε₀ − δ t, exactly."""
    hp = _hp(spec)
    e0 = Fraction(hp.get("fedfomo.epsilon0", 0.3))
    d = Fraction(hp.get("fedfomo.delta", 0.05))
    return any(Fraction(u) == e0 - d * t
               for t, r in enumerate(spec["schedule"]["rounds"])
               for dr in r.get("peer_draws", []) for u in dr.get("u", []))


def relu_on_kink(spec):
    """A BN-MLP run with some pre-activation u = 0 exactly."""
    import pflref_exact_fedbn as fb
    fb.STATS.update(min_u=None, on=0, near=0)
    fb.replay(spec)
    return fb.STATS["on"] > 0


def moon_on_kink(spec):
    """A layer list whose first dense layer has a row of zero weights and a
    zero bias in front of a relu: that unit's input is exactly 0 on every
    sample, and relu′(0) = 0 lets no gradient change it, so every step sits
    on the kink (pflref_exact_moon.py asserts each relu input is 0 or more
    than 1e-6 away)."""
    net = spec["model"]
    if net.get("kind") != "layers" or len(net["layers"]) < 2 or \
            net["layers"][0]["type"] != "dense" or net["layers"][1]["type"] != "relu":
        return False
    w = spec["init"]["w"]
    d_in, out = net["input"][0], net["layers"][0]["out"]
    return any(all(x == 0 for x in w[o * d_in:(o + 1) * d_in]) and
               w[out * d_in + o] == 0 for o in range(out))


def fedfomo_tau_on(spec):
    """A quadratic FedFomo run with fedfomo.equal_rtol τ given where a
    client's first upload θ_n = w⁰ − η (a_n ⊙ (w⁰ − c_n)) and the fp64
    mean that reproduces it, φ = w⁰ + 1 · (θ_n − w⁰) (one weight 1, exact
    in exact arithmetic), differ in some coordinate by exactly
    fl(τ max(|θ|, |φ|)) (Python's floats round as the C's doubles)."""
    tau = _hp(spec).get("fedfomo.equal_rtol")
    if spec["model"].get("kind") != "quadratic" or not tau or \
            spec["init"].get("kind") != "given":
        return False
    eta, w0 = float(_hp(spec)["eta"]), spec["init"]["w"]
    for c in spec["problem"]["clients"]:
        for w, a, cc in zip(w0, c["a"], c["c"]):
            th = w - eta * (a * (w - cc))
            phi = w + 1.0 * (th - w)
            if th != phi and abs(th - phi) == tau * max(abs(th), abs(phi)):
                return True
    return False


def fomo_zero_row_run(spec, aggregate):
    """init.w when spec is a layer-list FedFomo run under bn.aggregate =
    aggregate with fedfomo.equal_rtol τ and init.w given, in which some
    client's round-0 step is on a batch of zero rows; else None."""
    sw = spec["algorithm"].get("switches", {})
    if spec["model"].get("kind") != "layers" or \
            not _hp(spec).get("fedfomo.equal_rtol") or \
            sw.get("bn.aggregate", "average") != aggregate or \
            spec["init"].get("kind") != "given":
        return None
    r0 = spec["schedule"]["rounds"][0]
    if not any(all(x == 0 for j in batch
                   for x in spec["problem"]["clients"][k]["X"][j])
               for k, steps in zip(r0["clients"], r0["batches"]) for batch in steps):
        return None
    return spec["init"]["w"]


def fedfomo_zero_on(spec):
    """A FedFomo run over every entry (bn.aggregate = average) on a batch of
    zero rows (fomo_zero_row_run) whose init.w has every running statistic
    0: batch normalisation sees z = 0, so the statistics stay 0 and the
    upload's entries sit on the bound at 0 against w⁰'s 0 (the other
    entries within τ: the generator's asserts)."""
    w = fomo_zero_row_run(spec, "average")
    if w is None:
        return False
    import pflref_exact_layers as pl
    offs = pl.Model(spec["model"], "float").block_offsets()
    stats = [x for b, o in offs if b["role"] in ("running_mean", "running_var")
             for x in w[o:o + b["size"]]]
    return bool(stats) and all(x == 0 for x in stats)


def fedfomo_zero_params_on(spec):
    """A FedFomo run under bn.aggregate = parameters_only on a batch of zero
    rows (fomo_zero_row_run) whose init.w has a weight of the first layer
    at 0: every term of that layer's weight gradient is 0, so the weight
    stays 0 and the upload sits on the bound at 0 against w⁰'s 0 (the other
    parameters within τ: the generator's asserts)."""
    w = fomo_zero_row_run(spec, "parameters_only")
    if w is None:
        return False
    import pflref_exact_layers as pl
    first, o = pl.Model(spec["model"], "float").block_offsets()[0]
    return first["role"] == "weight" and any(x == 0 for x in w[o:o + first["size"]])


def fedfomo_tau_params_on(spec):
    """A layer-list FedFomo run under bn.aggregate = parameters_only with
    fedfomo.equal_rtol τ given, where a client's round-0 step is one batch
    of copies of one row with one target and every β of batch
    normalisation's bias is negative (x̂ = 0, relu passes nothing: the step
    moves the output bias b alone, θ = b − η · 2 (b − y) for the squared
    loss), and that θ and the fp64 mean that reproduces it with weight 1,
    φ = b + 1 · (θ − b), differ by exactly fl(τ max(|θ|, |φ|)) (Python's
    floats round as the C's doubles)."""
    tau = _hp(spec).get("fedfomo.equal_rtol")
    sw = spec["algorithm"].get("switches", {})
    net = spec["model"]
    if net.get("kind") != "layers" or not tau or net.get("loss") != "squared" or \
            sw.get("bn.aggregate") != "parameters_only" or \
            spec["init"].get("kind") != "given":
        return False
    import pflref_exact_layers as pl
    w = spec["init"]["w"]
    offs = pl.Model(net, "float").block_offsets()
    if not any(b["is_bn"] and b["role"] == "bias" for b, _ in offs):
        return False
    if any(x >= 0 for b, o in offs if b["is_bn"] and b["role"] == "bias"
           for x in w[o:o + b["size"]]):
        return False
    last, o = offs[-1]
    if last["role"] != "bias" or last["size"] != 1:
        return False
    b0, eta = w[o], float(_hp(spec)["eta"])
    r0 = spec["schedule"]["rounds"][0]
    for k, steps in zip(r0["clients"], r0["batches"]):
        c = spec["problem"]["clients"][k]
        if len(steps) != 1 or len({tuple(c["X"][j]) for j in steps[0]}) != 1 or \
                len({c["y"][j] for j in steps[0]}) != 1 or len(steps[0]) < 2:
            continue
        th = b0 - eta * (2.0 * (b0 - c["y"][steps[0][0]]))
        phi = b0 + 1.0 * (th - b0)
        if th != phi and abs(th - phi) == tau * max(abs(th), abs(phi)):
            return True
    return False


def fedpac_alpha_on(spec):
    """A FedPAC run under fedpac.alpha_small (renormalised or raw) where
    some client's QP weight α_ij equals fedpac.alpha_eps exactly, by the
    exact replay with the threshold off."""
    import pflref_exact_fedpac as xp
    a = spec["algorithm"]
    sw = dict(xp.PRESETS.get(a.get("preset", "paper"), {}), **a.get("switches", {}))
    if sw.get("fedpac.alpha_small", "exact") == "exact":
        return False
    eps = Decimal(_hp(spec).get("fedpac.alpha_eps", 1e-3))
    trace = xp.replay(spec, frozenset({"no-threshold"}))[0]
    return any(u == eps for r in trace.records
               if r["event"] == "note" and r["name"] == "alpha_i"
               for u in r["value"])


def fedfomo_batch_zero(spec):
    """val_loss = batch_mean with val_batch = 0 given."""
    sw = spec["algorithm"].get("switches", {})
    return sw.get("fedfomo.val_loss") == "batch_mean" and \
        _hp(spec).get("fedfomo.val_batch") == 0


def fedfomo_no_positive(spec):
    """A client whose every weight max(r_n, 0) is 0 (Σ = 0)."""
    import pflref_exact_fedfomo as xf
    trace = xf.replay(spec)[0]
    return any(r["name"] == "weights" and all(x == 0 for x in r["value"])
               for r in trace.records if r["event"] == "note")


def fedfomo_topm_tie(spec):
    """Top-M from P = I: in round 0 every other client's P_{i,n} = 0."""
    sw = spec["algorithm"].get("switches", {})
    return sw.get("fedfomo.selection") == "topM" and \
        sw.get("fedfomo.P_init") == "identity" and len(spec["problem"]["clients"]) > 2


def fedalt_all_v(spec):
    """A client round of FedAlt whose every step is a v step (τ_v = its
    number of batches)."""
    tv = _hp(spec).get("tau_v")
    return tv is not None and any(len(b) == tv for r in spec["schedule"]["rounds"]
                                  for b in r["batches"])


def fedalt_split_step(spec):
    """A client round with both v and u steps (the step q = τ_v is u's)."""
    tv = _hp(spec).get("tau_v")
    return tv is not None and any(len(b) > tv for r in spec["schedule"]["rounds"]
                                  for b in r["batches"])


def _lora_tails(spec):
    """The exact replay's tail products, each as (where, [(‖B_t‖², ‖A_t‖²)
    per target]): where is "before" (before the local steps), "grad" (a
    step's regulariser gradient) or "after" (the pruning test)."""
    import linecache
    import pflref_exact_lora as xl
    calls, orig = [], xl.tail

    def spy(L, r, q, c, rank):
        out = orig(L, r, q, c, rank)
        f = sys._getframe(1)
        src = linecache.getline(f.f_code.co_filename, f.f_lineno)
        calls.append(("before" if "before =" in src else
                      "after" if "after =" in src else "grad", out))
        return out
    xl.tail = spy
    try:
        xl.replay(spec)
    finally:
        xl.tail = orig
    return calls


def hetlora_c_is_rmin(spec):
    """HetLoRA with λ > 0 and a client whose c = ⌊γ r_i⌋ equals r_min (the
    regulariser and the pruning test run: c ≥ r_min)."""
    import math
    hp = _hp(spec)
    if spec["algorithm"].get("switches", {}).get("lora.method") != "hetlora" \
            or not float(hp.get("hetlora.lambda", 0)) > 0:
        return False
    g, rmin = Fraction(hp.get("hetlora.gamma", 0.5)), int(hp.get("hetlora.r_min", 1))
    ranks = spec["init"].get("lora_ranks", [])
    return any(math.floor(g * r) == rmin for r in ranks)


def hetlora_tail_unchanged(spec):
    """A client round whose tail product after the local steps equals the
    one before, exactly (the pruning test's <)."""
    seq = [(w, sum(b * a for b, a in out)) for w, out in _lora_tails(spec)
           if w != "grad"]
    return any(w1 == "before" and w2 == "after" and x1 == x2
               for (w1, x1), (w2, x2) in zip(seq, seq[1:]))


def hetlora_lambda0_shrinks(spec):
    """HetLoRA with λ = 0 whose data alone shrink some client's tail
    product (measured on a copy with a negligible λ = 1e-12, which switches
    the test on): a test λ ≥ 0 would prune there."""
    import copy
    hp = _hp(spec)
    if spec["algorithm"].get("switches", {}).get("lora.method") != "hetlora" or \
            float(hp.get("hetlora.lambda", 0)) != 0:
        return False
    probe = copy.deepcopy(spec)
    probe["algorithm"]["hyperparameters"]["hetlora.lambda"] = 1e-12
    seq = [(w, sum(b * a for b, a in out)) for w, out in _lora_tails(probe)
           if w != "grad"]
    return any(w1 == "before" and w2 == "after" and x2 < x1
               for (w1, x1), (w2, x2) in zip(seq, seq[1:]))


def hetlora_all_zero(spec):
    """HetLoRA (sparsity weights) from A = B = 0: every S_k = 0, Z = 0."""
    sw = spec["algorithm"].get("switches", {})
    return sw.get("lora.method") == "hetlora" and \
        sw.get("hetlora.weights", "sparsity") == "sparsity" and \
        all(float(x) == 0 for x in spec["init"].get("lora", [1]))


def hetlora_zero_norm(spec):
    """A regulariser step with ‖B_tail‖ = 0 or ‖A_tail‖ = 0 (nB > 0)."""
    return any(w == "grad" and any(b == 0 or a == 0 for b, a in out)
               for w, out in _lora_tails(spec))


# ---- the table -------------------------------------------------------------

A = "ref/algorithms/"
# (file, text on the line, operator, what it decides,
#  ("decided", [vector ids], probe) | ("equal", argument) | ("argued", argument)
#  | ("pending", reason))
COMPARISONS = [
    (A + "cfl.c", "if (!(norm_c < eps1 && max_i > eps2) || m < 2 ||", "<",
     "Alg. 5: split only when ‖Δθ_c‖ < ε₁",
     ("decided", ["cfl/worked/boundary-eps1"], cfl_norm_on("norm_dtheta_c", "eps1"))),
    (A + "cfl.c", "if (!(norm_c < eps1 && max_i > eps2) || m < 2 ||", ">",
     "Alg. 5: split only when max ‖Δθ_i‖ > ε₂",
     ("decided", ["cfl/worked/boundary-eps2"], cfl_norm_on("max_norm_dtheta", "eps2"))),
    (A + "cfl.c", "if (!(norm_c < eps1 && max_i > eps2) || m < 2 ||", "<",
     "a cluster of fewer than 2 members is not split (|c| = 2 is tested)",
     ("decided", ["cfl/worked/nested-split", "cfl/worked/counterexample-optimal",
                  "cfl/worked/spread-complete-linkage-samples"], cfl_pair_on)),
    (A + "cfl.c", "(min_size > 0 && m < min_size) || s->t < warmup)", "<",
     "cfl.min_cluster_size s: no split when |c| < s (|c| = s is tested)",
     ("decided", ["cfl/worked/boundary-min-size"], cfl_min_size_on)),
    (A + "cfl.c", "(min_size > 0 && m < min_size) || s->t < warmup)", "<",
     "cfl.warmup r: no split in rounds t < r (t = r is tested)",
     ("decided", ["cfl/worked/thresholds-warmup-drawn"], cfl_warmup_on)),
    (A + "cfl.c", "return gamma_max < sqrt((1.0 - cross) / 2.0);", "<",
     "Alg. 5: split iff γ_max < √((1 − α_max^cross)/2)",
     ("decided", ["cfl/worked/boundary-gamma"], cfl_gamma_on)),
    ("ref/engine/cluster.c", "", "sort",
     "Algorithm 1's order of equal similarities (row-major, stable)",
     ("decided", ["cfl/worked/boundary-tie-order"], cfl_tie_on("optimal"))),
    (A + "ifca.c", "if (loss[j] < loss[j_hat])", "<",
     "ĵ = argmin_j F_i(θ_j), ties to the lowest j",
     ("decided", ["ifca/worked/partial-gradient", "ifca/worked/partial-model"],
      ifca_tie)),
    (A + "ifca.c", "else if (count[j] > 0.0)", ">",
     "Option II: a cluster no participant chose keeps its model",
     ("decided", ["ifca/worked/partial-model"], ifca_empty)),
    (A + "ifca.c", "if (sigma > 0.0) {", ">",
     "σ = 0 draws nothing",
     ("equal", "σ ≥ 0 is validated; at σ = 0 the drawn ξ_j would be scaled "
      "by 0 and θ_j = w⁰ + j δ either way (the draws are recorded as theta0)")),
    (A + "interp.c", "if (loss < best_loss) {", "<",
     "the grid's α_i = argmin validation loss, ties to the smaller α",
     ("decided", ["interp/worked/grid-validation-linear"], interp_tie)),
    (A + "fedfomo.c", "const int explore = !top_m && u[c] < eps;", "<",
     "ε-greedy: slot c explores (π) when u < ε_t, else exploits (G)",
     ("decided", ["fedfomo/worked/draws-on-epsilon"], fedfomo_u_on)),
    (A + "fedfomo.c", "ws->weight[n] = ws->r[n] > 0.0 ? ws->r[n] : 0.0;", ">",
     "w_n = max(r_n, 0)",
     ("equal", "max(r, 0) is continuous at r = 0: both branches give 0")),
    (A + "fedfomo.c", "for (size_t n = 0; n < N && total > 0.0; n++)", ">",
     "normalise the weights only when Σ max(r_m, 0) > 0 (else all 0)",
     ("decided", ["fedfomo/worked/linear-val-keep", "fedfomo/worked/hand"],
      fedfomo_no_positive)),
    (A + "fedfomo.c", "total > 0.0 || h->no_positive == PFLREF_FEDFOMO_NO_POSITIVE_ANCHOR",
     ">", "fedfomo.no_positive = keep_current: keep θ_i when Σ = 0",
     ("decided", ["fedfomo/worked/linear-val-keep"], fedfomo_no_positive)),
    (A + "fedfomo.c", "if (ws->weight[n] > 0.0)   /* req: fedfomo.alg1.l5 */", ">",
     "l. 5 sums the candidates with w_n > 0",
     ("equal", "a candidate with w_n = 0 adds 0 · (θ_n − a) = 0 to a finite x")),
    (A + "fedfomo.c", "scale = fabs(sum) > 1e-9 ? fabs(sum) : 1e-9;", ">",
     "the P update's divisor max(|Σ r|, 1e-9)",
     ("equal", "max(|Σ r|, 1e-9) is continuous at |Σ r| = 1e-9: both branches "
      "give 1e-9")),
    (A + "fedfomo.c", "return row[a] > row[b];", ">",
     "G: descending P_{i,n}",
     ("equal", "reached only when row[a] != row[b], where > and ≥ agree")),
    (A + "fedfomo.c", "return a < b;", "<",
     "G: equal P_{i,n} ordered by the lower id (top-M and ε-greedy ties)",
     ("decided", ["fedfomo/worked/draws-pfllib"], fedfomo_topm_tie)),
    (A + "fedfomo.c", "M = M > 0 ? M - 1 : 0;", ">",
     "fedfomo.M_counts = total: M − 1 downloads, at least 0",
     ("equal", "max(M − 1, 0) is the same at M = 0 either way")),
    (A + "fedfomo.c", "if (h->val_loss == PFLREF_FEDFOMO_VAL_BATCH_MEAN && B > 0 && B < D->n &&",
     ">", "val_loss = batch_mean with B = 0: one batch, the whole set",
     ("decided", ["fedfomo/worked/linear-val-batch-zero"], fedfomo_batch_zero)),
    (A + "fedfomo.c", "if (h->val_loss == PFLREF_FEDFOMO_VAL_BATCH_MEAN && B > 0 && B < D->n &&",
     "<", "val_loss = batch_mean splits into batches only when B < n",
     ("equal", "B = n: one batch of all n samples, whose mean is the whole-set "
      "mean computed the same way")),
    (A + "fedalt.c", "st = pflref_local_sgd_step(q < tau_v ? &v_job : &u_job, q, x, g,",
     "<", "FedAlt: steps q < τ_v train v, the rest u",
     ("decided", ["fedalt/worked/notes-d-fedrep"], fedalt_split_step)),
    (A + "fedalt.c", "if (b->nsteps >= tau_v)", ">=",
     "a client round needs at least τ_v batches (all of them v steps when "
     "equal)",
     ("decided", ["fedalt/worked/spread-stateful-samples-personal-tau-v-3"],
      fedalt_all_v)),
    (A + "lora.c", "const int reg = het && h->lambda > 0.0 && c >= h->r_min;", ">",
     "HetLoRA regularises and prunes only when λ > 0",
     ("decided", ["lora/worked/hand-hetlora-lambda0"], hetlora_lambda0_shrinks)),
    (A + "lora.c", "const int reg = het && h->lambda > 0.0 && c >= h->r_min;", ">=",
     "HetLoRA prunes only to c = ⌊γ r_i⌋ ≥ r_min",
     ("decided", ["lora/worked/hand-hetlora-prune", "lora/worked/mlp-hetlora-uniform"],
      hetlora_c_is_rmin)),
    (A + "lora.c", "if (reg && tail_product(&ws->L, qi, c, rank, NULL, NULL) < before) {",
     "<", "HetLoRA prunes when the tail product decreased",
     ("decided", ["lora/worked/mlp-hetlora-uniform"], hetlora_tail_unchanged)),
    (A + "lora.c", "if (nB > 0.0)", ">",
     "the regulariser's gradient divides by ‖B_tail‖ only when it is not 0",
     ("decided", ["lora/worked/hand-hetlora-prune", "lora/worked/mlp-hetlora-uniform",
                  "lora/worked/mlp-hetlora"], hetlora_zero_norm)),
    (A + "lora.c", "ws->weight[k] = Z > 0.0 ? ws->weight[k] / Z : 1.0 / (double)plan->m;",
     ">", "sparsity weights: uniform when every S_k = 0",
     ("decided", ["lora/worked/mlp-hetlora-zero"], hetlora_all_zero)),
    (A + "apfl.c", "return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);", "<, >",
     "α clamped to [0, 1]",
     ("equal", "a clamp is continuous at its ends: x = 0 gives 0 and x = 1 "
      "gives 1 either way")),
    (A + "pfedhn.c", "if (coef < 1.0)", "<",
     "gradient clipping by norm: scale by c/‖g‖ when it is below 1",
     ("equal", "at coef = 1 the scaled gradient is g · 1 = g exactly")),
    ("ref/engine/optim.c", "if (!(coef < 1.0))", "<",
     "opt.clip = norm: scale by c/‖g‖ when it is below 1",
     ("equal", "at coef = 1 the scaled gradient is g · 1 = g exactly")),
    ("ref/models/mlp.c", "if (!(A[q] > 0.0))", ">",
     "ReLU′(0) = 0 (a pre-activation exactly 0 passes no gradient)",
     ("decided", ["fedbn/worked/relu-kink"], relu_on_kink)),
    ("ref/models/layers_ops.c", "if (!(y[q] > 0.0))", ">",
     "a layer list's ReLU′: [y > 0] (relu′(0) = 0)",
     ("decided", ["moon/layers/relu-kink"], moon_on_kink)),
    ("ref/models/mlp.c", ": (A[q] > 0.0 ? A[q] : 0.0);", ">",
     "ReLU(a) = max(a, 0)",
     ("equal", "max(a, 0) is continuous at a = 0: both branches give 0")),
    (A + "fedala.c", "return sqrt(var / (double)k) < thr;", "<",
     "FedALA's start phase stops when the std of the last k losses < threshold",
     ("decided", ["fedala/worked/stop-boundary"], fedala_std_on)),
    (A + "fedala.c", "W_i[p] = x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);", "<",
     "eq. (6)'s clip to [0, 1] from below",
     ("equal", "a clamp: at x = 0 both branches give 0")),
    (A + "fedala.c", "W_i[p] = x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);", ">",
     "eq. (6)'s clip to [0, 1] from above",
     ("equal", "a clamp: at x = 1 both branches give 1")),
    # found by the scan below (issue 33 §3): floating comparisons the
    # hand-kept table had missed
    (A + "fedfomo.c", "ws->weight[i] = ws->r[i] > 0.0 ? ws->r[i] : 0.0;", ">",
     "max(r_i, 0) of the client's own weight (fedfomo.self)",
     ("equal", "max(r, 0) is continuous at r = 0: both branches give 0")),
    ("ref/engine/cluster.c", "return x > y;", ">",
     "Prim's edge order: the larger similarity first",
     ("equal", "reached only when x != y, where > and ≥ agree (ties go to the "
      "index order, decided by cfl/worked/boundary-tie-order)")),
    ("ref/engine/cluster.c",
     "if (bestA == m || link_ab > best_link) {", ">",
     "complete linkage's merge (cfl.bipartition = complete_linkage): the pair "
     "of clusters whose least similar pair is the most similar, ties to the "
     "first pair in the scan, the smallest reps (A, B)",
     ("decided", ["cfl/worked/boundary-tie-complete-linkage"],
      cfl_tie_on("complete_linkage"))),
    (A + "fedfomo.c", "if (fabs(x[p] - a[p]) > tau * fmax(fabs(x[p]), fabs(a[p])))", ">",
     "l. 3's equality up to rounding: an entry differs when |x − a| > τ max(|x|, |a|)",
     ("decided", ["layers/fedfomo/bn1d-equal-rounding-on-tau",
                  "layers/fedfomo/bn1d-equal-zero-params"],
      lambda spec: fedfomo_tau_params_on(spec) or fedfomo_zero_params_on(spec))),
    (A + "fedfomo.c", "if (fabs(x[p] - a[p]) > tau * scale)", ">",
     "l. 3's equality up to rounding, every entry (no parameters()-only skip)",
     ("decided", ["fedfomo/worked/equal-rounding-on-tau",
                  "layers/fedfomo/bn1d-equal-zero-buffers"],
      lambda spec: fedfomo_tau_on(spec) or fedfomo_zero_on(spec))),
    (A + "fedpac.c", "if (!(ws->alpha[j] > h->fedpac.alpha_eps))", ">",
     "fedpac.alpha_small: a classifier weight α_j ≤ ε is set to 0",
     ("decided", ["fedpac/mlp/boundary-alpha-eps", "fedpac/mlp/boundary-alpha-one"],
      fedpac_alpha_on)),
    (A + "fedpac_qp.c", "if (!(fabs(B[piv * n + c]) > FEDPAC_PIVOT_RTOL * big))", ">",
     "the QP's linear solve: a pivot at or below the relative tolerance is singular",
     ("argued", "a rounding tolerance of the solver (2⁻⁴⁰ of B's largest entry), not "
      "a threshold of the paper: the exact generator's solve tests its pivots "
      "against 10⁻⁴⁰ (pflref_exact_fedpac.TOL), i.e. exactly.  A pivot at 2⁻⁴⁰ "
      "|B|max belongs to a support whose bordered system has a condition of about "
      "2⁴⁰ ≈ 1.1e12: fp64's α from it carry errors up to about 2⁴⁰ u ≈ 1e-4 "
      "relative, so no vector with a justified tolerance (the fedpac vectors' "
      "basis requires the smallest pivot far from 0) can hold either reading; "
      "where the elimination happens to be exact (dyadic Q), skipping that "
      "support moves the solution to a neighbouring face whose α differ by "
      "O(2⁻⁴⁰ ≈ 9.1e-13) relative, the size of the vectors' tolerance itself, so "
      "the two readings are not told apart by any value a vector can pin")),
    (A + "fedpac_qp.c", "if (qa + mu < -FEDPAC_KKT_RTOL * qmax)", "<",
     "the QP's active set: a multiplier below −tolerance rejects the set",
     ("argued", "a rounding tolerance of the solver (the KKT multiplier of an "
      "excluded j against −2⁻⁴⁰ max|Q|), not a threshold of the paper; the exact "
      "generator tests against 10⁻⁴⁰ (exact).  A multiplier exactly at "
      "−2⁻⁴⁰ max|Q| makes the support S optimal only up to that amount: the exact "
      "minimiser puts a weight of order 2⁻⁴⁰ ≈ 9.1e-13 (relative to Q's scale) "
      "on j, so accepting S (<) and rejecting it for the next support (≤) give "
      "α within about 1e-12 of each other and of the exact α, inside the "
      "vectors' tolerance (atol 1e-13 + rtol 1e-12 on weights below 1, after "
      "the heads' combination): no value a vector holds decides it")),
    (A + "fedproto.c", "if (best == K || d < d_best) {", "<",
     "the nearest prototype's argmin: ties keep the smaller class",
     ("argued", "no vector can decide it: the argmin runs only in "
      "fedproto_evaluate, whose result is the prototype metrics (accuracy, "
      "loss = the smallest R), and a golden vector holds final and trajectory "
      "only (docs/formats.md: check compares no metrics); no state of the run "
      "reads it, so a tie changes no record a vector holds.  An exact tie is "
      "easy to build (W1 = 0 with a client trained for no step: f(x) = b1 for "
      "every x, so every C̄^(j) = b1 and every class is at distance 0), but "
      "the readings < and ≤ differ only in the reported accuracy (class 0 "
      "against the last class), which a unit test of the evaluation holds: "
      "tests/test_fedproto.c test_nearest_prototype_tie builds that tie (b1 "
      "dyadic, so Eq. 5's means are b1 exactly) and checks the accuracies of "
      "ties to class 0 (the C with ≤ fails it)")),
    ("ref/engine/prox_inner.c", "for (size_t it = 0; it < 2 * P && sqrt(rr) > stop && rr > 0.0; it++) {",
     ">", "the inner solve's conjugate gradients stop at ‖r‖ ≤ rtol ‖r₀‖ (or r = 0)",
     ("argued", "a solver's stopping tolerance (‖r‖ ≤ 1e-15 ‖r₀‖, "
      "PFLREF_PROX_CG_RTOL), not a threshold of the paper: the exact generators "
      "compute θ̂ in closed form (no iteration), so the C's CG is an "
      "approximation on either side.  At ‖r‖ = 1e-15 ‖r₀‖ exactly, stopping (>) "
      "and taking one more step (≥) both leave x within about κ · 1e-15 "
      "(relative; κ the condition of H + (λ + μ) I) of the exact solution, the "
      "size of the rounding any fp64 solve of that system carries and that the "
      "vectors' tolerances already allow, so the readings differ by less than "
      "any vector can resolve; and the residual, the square root of a rounded "
      "sum after rounded iterations, has no known construction that sets it to "
      "a given multiple of ‖r₀‖ from the spec")),
]
# Not decided in one NumPy candidate's own relu code: Per-FedAvg's BN path
# (pfl_numpy_perfedavg.py, the mask U > 0 of the exact Hessian-vector
# product), where a pre-activation exactly 0 makes the Hessian undefined
# (central differences disagree across the kink), so no exact generator
# can pin a value there.



# ---- the scan: no floating comparison of the C outside the tables ---------
#
# COMPARISONS is kept by hand, so a comparison added to the C later would
# go unaudited.  scan() reads every .c file under SCAN_DIRS and finds each
# <, <=, >, >= (outside comments, strings and preprocessor lines) whose
# operands are floating-point by these rules, applied to the text:
#   an operand holds a floating literal (0.0, 1e-9), a (double) cast or a
#   call of fabs, sqrt, exp, log, pow, cos, sin, fmax, fmin, tanh, log1p,
#   expm1; or names a variable the file declares double or float (and
#   nowhere in it as an integer); or a struct member declared double or
#   float in include/ or ref/ headers (and in none as an integer);
# except (integers, not decisions on computed values):
#   an operand that is one identifier the file declares as an integer (a
#   loop index, a size, a count: C would convert it, but the comparison is
#   of an integer); a condition of an if whose statement (its line and the
#   next four) sets an error (pflref_error_set, return PFLREF_E…): input
#   validation, which docs/bad-inputs.md covers.
# Each comparison found must be covered by an entry of COMPARISONS (an
# audited decision) or of NOT_DECISIONS (a floating comparison that decides
# nothing of the algorithm, with its reason): same file, the entry's text on
# the comparison's line, the same operator.  And each NOT_DECISIONS entry's
# line must still be in its file.  What the rules cannot see: a comparison
# through a macro or a function (fmax, a comparator passed to qsort: the
# sort entries of COMPARISONS are kept by hand), one of two integers that
# hold a computed value (an argmin's index compared after the decision),
# a floating value read through a pointer or member whose type the
# headers do not declare plainly (a typedef'd double, a double field of a
# struct declared in a .c file is seen only in that file), and files
# outside SCAN_DIRS (ref/models' comparisons are in COMPARISONS by hand).
SCAN_DIRS = ("ref/algorithms", "ref/engine")

_CLAMP = "a clamp: continuous at its bound, both readings give the bound"
_MAX = ("a running maximum (or the pivot row of a Gaussian elimination): at "
        "a tie both readings keep the same value")
_GUARD = ("a guard against dividing by zero (or a log or square root of 0): "
          "at the boundary the other branch is undefined, so there is no "
          "second reading of the algorithm to decide")
_COUNT = ("a count held as a double (class or sample counts, integers ≥ 0): "
          "> 0 and ≥ 1 agree, and no value lies between")
_CHECK = ("checks an input or a result for range or finiteness (an error "
          "path or an assertion of the data), not a decision of the run")
# (file, text on the line, operators, reason)
NOT_DECISIONS = [
    (A + "cfl.c", "s = fabs(x[p]) > s ? fabs(x[p]) : s;", ">", _MAX),
    (A + "cfl.c", "max_i = n_i > max_i ? n_i : max_i;", ">", _MAX),
    (A + "cfl.c", "if (!(ws->buf[i] >= 0.0 && ws->buf[i] < (double)s->N &&", ">=", _CHECK),
    ("ref/engine/cluster.c", "mx = fabs(x[p]) > mx ? fabs(x[p]) : mx;", ">", _MAX),
    ("ref/engine/cluster.c", "ab = ab > 1.0 ? 1.0 : (ab < -1.0 ? -1.0 : ab);", "<, >",
     _CLAMP + " (a cosine rounded outside [−1, 1])"),
    (A + "fedrod.c", "mx = a > mx ? a : mx;", ">", _MAX + " (the softmax's shift)"),
    (A + "fedpac_qp.c", "if (fabs(B[r * n + c]) > fabs(B[piv * n + c]))", ">", _MAX),
    ("ref/engine/cluster.c", "if (side[a] != side[b] && alpha[upper(a, b, m)] > cross)", ">",
     _MAX + " (α_max^cross)"),
    (A + "ditto.c", "scale = sq > 0.0 ? lambda / sqrt(sq) : 0.0;", ">", _GUARD),
    (A + "feddyn.c", "job.mu = dist > 0.0 ? 0.5 * alpha_k / dist : 0.0;", ">", _GUARD),
    (A + "lora.c", "if (nB > 0.0)", ">", _GUARD),
    (A + "lora.c", "if (nA > 0.0)", ">", _GUARD),
    (A + "moon.c", "if (!(nz > 0.0 && na > 0.0 && n_b > 0.0)) {", ">", _GUARD),
    (A + "prox.c", "lambda + mu > 0.0;", ">", _GUARD),
    (A + "fedrod.c", ": N[c] > 0.0 ? exp(z[c] + log(N[c]) - mx) : 0.0;", ">",
     _GUARD + "; and N[c] is a count (" + _COUNT + ")"),
    (A + "fedrod.c", "if (N == NULL || N[c] > 0.0) {", ">", _COUNT),
    (A + "fedpac.c", "for (size_t u = 0; ws->n_C[j] > 0.0 && u < d; u++)", ">", _COUNT),
    (A + "fedpac.c", "if (ws->n_C[k] > 0.0)", ">", _COUNT),
    (A + "fedpac.c", "const int has = ws->N_bar[y] > 0.0;", ">", _COUNT),
    (A + "fedpac.c", "if (!(ws->n_C[k] > 0.0))", ">", _COUNT),
    (A + "fedpac.c", "ws->C_bar[k * d + u] = ws->N_new[k] > 0.0", ">", _COUNT),
    (A + "fedproto.c", "const double c = ws->N_bar[y] > 0.0 ?", ">", _COUNT),
    (A + "fedproto.c", "if (ws->N_bar[y] > 0.0)", ">", _COUNT),
    (A + "fedproto.c", "for (size_t u = 0; ws->n_C[j] > 0.0 && u < h; u++)", ">", _COUNT),
    (A + "fedproto.c", "if (!(ws->n_C[j] > 0.0))", ">", _COUNT),
    (A + "fedproto.c", "ws->C_bar[j * h + u] = ws->N_new[j] > 0.0", ">", _COUNT),
    (A + "fedproto.c", "if (!(ws->N_bar[j] > 0.0))", ">", _COUNT),
    (A + "lora.c", "if (r_i == floor(r_i) && r_i >= (double)h->r_min &&", ">=", _CHECK),
    (A + "lora.c", "r_i <= (double)h->r)", "<=", _CHECK),
    (A + "lora.c", "r_i >= 0.0 && r_i <= (double)h->r && r_i == floor(r_i))", ">=, <=",
     _CHECK),
    ("ref/engine/optim.c", "if (!(o->beta1 < 1.0)) {", "<", _CHECK),
    ("ref/engine/optim.c", "if (!(o->beta2 < 1.0)) {", "<", _CHECK),
    ("ref/engine/optim.c", "(o->momentum <= 0.0 || o->dampening != 0.0))", "<=", _CHECK),
    ("ref/engine/sgd.c", "finite &= fabs(x[p]) <= DBL_MAX;", "<=", _CHECK),
]

_FLOAT_LIT = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)")
_MATH = re.compile(r"\b(fabs|sqrt|exp|log|pow|cos|sin|fmax|fmin|tanh|log1p|expm1)"
                   r"\s*\(|\(\s*double\s*\)")
_CMP = re.compile(r"(?<![<>\-=!])(<=|>=|<|>)(?![<>=])")
_DECL_D = r"\b(?:double|float)\b"
_DECL_I = (r"\b(?:size_t|int|long|unsigned|char|uint64_t|int64_t|uint32_t|"
           r"int32_t|ptrdiff_t|bool)\b")


def strip_c(src):
    """src with comments, string and character literals and preprocessor
    lines blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), "".join(out))


def _declared(text, decl):
    out = set()
    for m in re.finditer(decl + r"((?:\s+(?:const|long|int|unsigned))*)\s*([^;(){}]*?)(?=[;){])",
                         text):
        for part in re.split(r",(?![^\[]*\])", m.group(2)):
            mm = re.match(r"\s*(?:const\s+)?\**\s*(?:const\s+)?([A-Za-z_]\w*)", part)
            if mm:
                out.add(mm.group(1))
    return out


def _header_members():
    import glob
    d, i = set(), set()
    for h in sorted(glob.glob(os.path.join(ROOT, "include", "**", "*.h"), recursive=True)
                    + glob.glob(os.path.join(ROOT, "ref", "**", "*.h"), recursive=True)):
        with open(h, encoding="utf-8") as f:
            t = strip_c(f.read())
        d |= _declared(t, _DECL_D)
        i |= _declared(t, _DECL_I)
    return d - i


def scan(sources=None):
    """[(file, line number, line text, operator)]: the floating comparisons
    of the .c files under SCAN_DIRS (rules above).  sources: {file: text}
    read instead of the files (the self-test's plants)."""
    import glob
    if sources is None:
        sources = {}
        for d in SCAN_DIRS:
            for f in sorted(glob.glob(os.path.join(ROOT, d, "*.c"))):
                with open(f, encoding="utf-8") as fh:
                    sources[os.path.relpath(f, ROOT)] = fh.read()
    members = _header_members()
    found = []
    for path in sorted(sources):
        raw = sources[path]
        s = strip_c(raw)
        dbl, ints = _declared(s, _DECL_D), _declared(s, _DECL_I)
        fd, fi = dbl - ints, ints - dbl
        lines, sl = raw.split("\n"), s.split("\n")
        for ln, line in enumerate(sl, 1):
            for m in _CMP.finditer(line):
                left = re.split(r"&&|\|\||[?:;,(]|\breturn\b|=(?!=)", line[:m.start()])[-1]
                right = re.split(r"&&|\|\||[?:;,)]", line[m.end():])[0]
                if any(o.strip() in fi or o.strip().startswith("sizeof")
                       for o in (left, right)):
                    continue            # an integer: an index, a size, a count
                ops = left + " " + right
                ids = set(re.findall(r"(?<![\w>.])[A-Za-z_]\w*", ops))
                mem = set(re.findall(r"(?:->|\.)\s*([A-Za-z_]\w*)", ops))
                if not (_FLOAT_LIT.search(ops) or _MATH.search(ops) or ids & fd
                        or mem & members):
                    continue
                ctx = " ".join(sl[ln - 1:ln + 4])
                if re.search(r"\bif\b", line) and \
                        re.search(r"pflref_error_set\s*\(|return\s+PFLREF_E", ctx):
                    continue            # input validation
                found.append((path, ln, lines[ln - 1], m.group(1)))
    return found


def _covers(entry, path, text, op):
    return entry[0] == path and entry[1] and entry[1] in text and \
        op in [o.strip() for o in entry[2].split(",")]


def scan_problems(sources=None, table=None, not_decisions=None):
    """(problems, counts): each floating comparison the scan finds that no
    entry of COMPARISONS or NOT_DECISIONS covers; each NOT_DECISIONS entry
    whose line is not in its file."""
    table = COMPARISONS if table is None else table
    nd = NOT_DECISIONS if not_decisions is None else not_decisions
    problems, counts = [], {"table": 0, "not": 0}
    for path, ln, text, op in scan(sources):
        if any(_covers(e, path, text, op) for e in table):
            counts["table"] += 1
        elif any(_covers(e, path, text, op) for e in nd):
            counts["not"] += 1
        else:
            problems.append("%s:%d %s: a floating comparison in neither COMPARISONS "
                            "nor NOT_DECISIONS: %s" % (path, ln, op, text.strip()))
    for path, text, op, reason in nd:
        if sources is not None and path in sources:
            here = text in sources[path]
        else:
            here = bool(line_of(path, text))
        if not here:
            problems.append("%s: NOT_DECISIONS line not found: %s" % (path, text))
        if not reason:
            problems.append("%s: NOT_DECISIONS entry without a reason: %s" % (path, text))
    return problems, counts


def line_of(path, text):
    """The 1-based line of the first line of path containing text, or 0."""
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            for k, line in enumerate(f, 1):
                if text and text in line:
                    return k
    except OSError:
        pass
    return 0


def audit(vectors, quiet=False):
    """Prints the table; returns the list of problems."""
    specs = {v["id"]: v["spec"] for _, v in vectors}
    problems, rows = [], []
    counts = {"decided": 0, "equal": 0, "argued": 0, "pending": 0}
    for path, text, op, what, status in COMPARISONS:
        kind = status[0]
        ln = line_of(path, text) if text else 0
        where = "%s:%s" % (path, ln if ln else "-")
        if text and not ln:
            problems.append("%s: line not found: %s" % (path, text))
        if kind == "decided":
            names, probe = status[1], status[2]
            missing = [n for n in names if n not in specs]
            for n in missing:
                problems.append("%s %s: no vector %s" % (where, op, n))
            on = [n for n in names if n in specs and probe(specs[n])]
            if not on:
                problems.append("%s %s (%s): no named vector sits on the "
                                "boundary" % (where, op, what))
            note = ", ".join(on) if on else "NONE ON THE BOUNDARY"
        elif kind in ("equal", "argued", "pending") and len(status) > 1 and status[1]:
            note = status[1]
        else:
            problems.append("%s %s (%s): neither vectors, an argument nor a "
                            "reason" % (where, op, what))
            note = "?"
        counts[kind] = counts.get(kind, 0) + 1
        rows.append((where, op, kind, what, note))
    scan_found, scan_counts = scan_problems()
    problems += scan_found
    print("boundaries: each decision's comparison and the vectors on its boundary")
    if not quiet:
        for where, op, kind, what, note in rows:
            print("  %-34s %-5s %-8s %s" % (where, op, kind, what))
            print("  %-34s %-5s %-8s   %s" % ("", "", "", note))
    for p in problems:
        print("boundaries: " + p)
    print("boundaries: %d comparisons: %d decided by a vector on the boundary, "
          "%d equal at the boundary (argued), %d no vector can sit on "
          "(argued), %d pending (not yet covered)%s"
          % (len(COMPARISONS), counts["decided"], counts["equal"], counts["argued"],
             counts["pending"],
             "" if not problems else "; %d problems" % len(problems)))
    print("boundaries: the scan of %s: %d floating comparisons, %d in the table above, "
          "%d not decisions (NOT_DECISIONS, %d entries), %d in neither"
          % (" and ".join(SCAN_DIRS), scan_counts["table"] + scan_counts["not"]
             + len(scan_found), scan_counts["table"], scan_counts["not"],
             len(NOT_DECISIONS), len([p for p in scan_found if "in neither" in p])))
    return problems


def self_test():
    """Plants what the audit must refuse, each in a copy of the table or of
    the vectors: a vector moved off its boundary (ε₁ = 0.625 → 0.75), a
    named vector missing, a line not in its file, an entry with no reason.
    Returns the number of plants the audit did not catch."""
    global COMPARISONS
    import contextlib
    import copy
    import io
    import coincidences
    vectors = coincidences.load(HERE)
    off = copy.deepcopy(vectors)
    for _, v in off:
        if v["id"] == "cfl/worked/boundary-eps1":
            v["spec"]["algorithm"]["hyperparameters"]["eps1"] = 0.75
    plants = {
        "off the boundary": (off, COMPARISONS),
        "vector missing": ([x for x in vectors if x[1]["id"] != "cfl/worked/boundary-gamma"],
                           COMPARISONS),
        "line not found": (vectors, [(A + "cfl.c", "no such line", "<", "x",
                                      ("equal", "y"))]),
        "no reason": (vectors, [(A + "cfl.c", "", "<", "x", ("pending", ""))]),
    }
    missed = 0
    saved = COMPARISONS
    for what, (vecs, table) in plants.items():
        COMPARISONS = table
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                problems = audit(vecs, quiet=True)
        finally:
            COMPARISONS = saved
        print("boundaries self-test: %-18s %s" % (what, "caught" if problems else "MISSED"))
        missed += not problems
    # the scan: a floating comparison added to the C without an entry, one
    # whose operand is a double member of a header, and a NOT_DECISIONS
    # entry whose line has left its file
    real = {}
    for d in SCAN_DIRS:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".c"):
                with open(os.path.join(ROOT, d, f), encoding="utf-8") as fh:
                    real[d + "/" + f] = fh.read()
    anchor = "if (loss[j] < loss[j_hat])"
    assert anchor in real[A + "ifca.c"]
    gone = NOT_DECISIONS[0]
    scan_plants = {
        "unlisted comparison": dict(real, **{A + "ifca.c": real[A + "ifca.c"].replace(
            anchor, "if (loss[j] <= 0.5 * loss[j_hat])", 1)}),
        "unlisted member": dict(real, **{A + "ifca.c": real[A + "ifca.c"].replace(
            anchor, "if (hp->init_sd > 2)", 1)}),
        "NOT_DECISIONS gone": dict(real, **{gone[0]: real[gone[0]].replace(
            gone[1], gone[1].replace(" > ", " >= "), 1)}),
    }
    want = {"unlisted comparison": "loss[j] <= 0.5 * loss[j_hat]",
            "unlisted member": "hp->init_sd > 2",
            "NOT_DECISIONS gone": gone[1]}
    for what, sources in scan_plants.items():
        caught = any(want[what] in p for p in scan_problems(sources)[0])
        print("boundaries self-test: %-18s %s" % (what, "caught" if caught else "MISSED"))
        missed += not caught
    with contextlib.redirect_stdout(io.StringIO()):
        clean = audit(vectors, quiet=True)
    print("boundaries self-test: %-18s %s" % ("the real table", "clean" if not clean
                                              else "%d problems" % len(clean)))
    return missed + bool(clean)


def main(argv):
    quiet = "-q" in argv
    if "--self-test" in argv:
        return 1 if self_test() else 0
    args = [a for a in argv if a != "-q"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: golden/boundaries.py [-q] [--self-test] [GOLDEN_DIR]",
              file=sys.stderr)
        return 2
    import coincidences
    vectors = coincidences.load(args[0] if args else HERE)
    return 1 if audit(vectors, quiet) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
