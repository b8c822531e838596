# SPDX-License-Identifier: GPL-3.0-or-later
"""pflref.diagnose: a candidate computed under a known variant is named as
that variant; a catalogued bug that is no named variant is "no known
variant" with its first divergence; a probe is named as the probe.

The candidates are the NumPy candidates of docs/examples (pfl_numpy.py and
its per-algorithm modules), run in-process on a copy of a golden vector
whose spec has the variant set: never pflref's own output.  The presets and
which settings they make are read from `pflref list` (the registry), so a
preset added there is tested without a change here.
"""
import copy
import glob
import json
import os
import re
import subprocess

import numpy as np
import pytest

import pflref
from conftest import GOLDEN, ROOT
import helpers  # noqa: F401  (puts docs/examples on the path)
import pfl_numpy

CLI = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel",
                                                   "pflref")


# ---- the registry, as `pflref list` prints it -------------------------------

SPLITS = {}   # (algorithm, preset) -> the personal blocks it implies


def _registry():
    """({alg: {preset: {key: value}}}, {(key, alg) required})."""
    text = subprocess.run([CLI, "list"], check=True, capture_output=True,
                          text=True).stdout
    presets, required, section = {}, set(), None
    for line in text.splitlines():
        if not line.startswith(" "):
            section = line.split(" ")[0].rstrip(":")
            continue
        if section == "presets":
            m = re.match(r"  (\w+)/(\w+): (.*?)(?: \(personal: (\w+)\))?$",
                         line)
            if m:
                presets.setdefault(m.group(1), {})[m.group(2)] = dict(
                    kv.split("=", 1) for kv in m.group(3).split())
                if m.group(4):
                    SPLITS[(m.group(1), m.group(2))] = [m.group(4)]
        elif section == "hyperparameters":
            m = re.match(r"  (\S+) .*\[([^\]]*)\] required$", line)
            if m:
                required |= {(m.group(1), a) for a in m.group(2).split()}
    return presets, required


PRESETS, REQUIRED = _registry()


def _with_preset(doc, preset):
    """A copy of the vector doc whose spec runs `preset`: algorithm.preset
    set, the explicit settings the old or the new preset makes removed
    (those the algorithm requires stay), as docs/cli.md says diagnose
    builds a preset's spec."""
    doc = copy.deepcopy(doc)
    alg = doc["spec"]["algorithm"]
    name = alg["name"]
    table = PRESETS.get(name, {})
    for p in (alg.get("preset", "paper"), preset):
        for key in table.get(p, {}):
            if (key, name) in REQUIRED:
                continue
            for part in ("hyperparameters", "switches"):
                alg.get(part, {}).pop(key, None)
    alg["preset"] = preset
    return doc


def _explicit(doc, preset):
    """The copy of _with_preset with the preset's settings written out as
    explicit switches and hyperparameters under preset paper: the same
    run, for a candidate that reads switches but not that preset's name."""
    doc = _with_preset(doc, preset)
    alg = doc["spec"]["algorithm"]
    alg["preset"] = "paper"
    if "split" not in doc["spec"] and (alg["name"], preset) in SPLITS:
        doc["spec"]["split"] = {"personal": SPLITS[(alg["name"], preset)]}
    for key, value in PRESETS[alg["name"]].get(preset, {}).items():
        try:
            alg.setdefault("hyperparameters", {}).setdefault(key, float(value))
        except ValueError:
            alg.setdefault("switches", {})[key] = value
    return doc


def _under(doc, preset, tmp_path):
    """The candidate's result under preset: by name, else written out."""
    res = _candidate(_with_preset(doc, preset), tmp_path)
    if res is None and preset != "paper":
        res = _candidate(_explicit(doc, preset), tmp_path)
    return res


def _candidate(doc, tmp_path, bug=None):
    """The NumPy candidate's result on the vector doc (written beside the
    original so a relative problem file resolves), or None when the
    candidate does not support it."""
    path = os.path.join(tmp_path, "vector.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    pfl_numpy.BUG = bug
    try:
        return pfl_numpy.run_file(path)
    except Exception:   # Unsupported, or a setting the variant lacks
        return None
    finally:
        pfl_numpy.BUG = None


def _reference_takes(doc):
    """Whether the reference runs the vector's spec at all (a preset may
    be refused with a setting the vector makes, such as apfl's fedtorch
    rule with eta_alpha): only then can it be told apart.  The run's
    numbers are not used."""
    try:
        pflref.run(doc["spec"])
    except pflref.InvalidInput:
        return False
    return True


def _numbers(result):
    out = [v for r in result["trajectory"] for v in np.ravel(r["value"])]
    for v in result["final"].values():
        out.extend(np.ravel(v))
    return np.asarray(out, dtype=float)


def _same(a, b):
    x, y = _numbers(a), _numbers(b)
    return x.shape == y.shape and np.allclose(x, y, rtol=1e-10, atol=1e-12)


def _vectors(alg):
    out = []
    for path in sorted(glob.glob(os.path.join(GOLDEN, alg, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if doc.get("format") == "pflref-golden/1" and \
                doc["spec"]["algorithm"]["name"] == alg:
            out.append((path, doc))
    return out


# ---- presets ----------------------------------------------------------------

# Presets no golden vector tells apart from the vector's own settings
# (where the reference can run them at all), with the reason: a gap of the
# golden suite, not of diagnose, named here so a new preset cannot slip by.
UNSHOWN = {
    ("local", "pfllib"):
        "the preset sets only lr.count = trainings: PFLlib's Local "
        "(serverlocal.py, no aggregation) is the paper's local training but "
        "for the decay's count, so it equals paper on every vector without "
        "a decay; the one vector with it (local/worked/pfllib-decay) runs "
        "the preset itself, and there paper is told apart",
}
# (alg, preset) whose switches the NumPy candidate ignores rather than
# refuses: its run under the preset would be another preset's (none now)
CANDIDATE_LACKS = set()

@pytest.mark.parametrize("alg", sorted(PRESETS))
def test_every_preset_is_diagnosed_as_itself(alg, tmp_path):
    """For every preset of alg and every vector of alg where the preset
    changes the candidate's numbers, the candidate run under the preset is
    diagnosed as a complete match with that preset and no change (a
    preset giving the same numbers on that vector may rank beside it)."""
    names = ["paper"] + sorted(PRESETS[alg])
    shown = {p: 0 for p in names}
    for path, doc in _vectors(alg):
        base = _candidate(doc, tmp_path)
        if base is None:
            continue
        results = {p: _under(doc, p, tmp_path) for p in names}
        own = doc["spec"]["algorithm"].get("preset", "paper")
        for preset, res in results.items():
            if (alg, preset) in CANDIDATE_LACKS or (alg, own) in CANDIDATE_LACKS:
                continue
            if preset == own or res is None or _same(res, base) or \
                    not _reference_takes(_with_preset(doc, preset)):
                continue
            d = pflref.diagnose(path, res)
            named = {m["preset"] for m in d.complete_matches()
                     if m["change"] == ""}
            # a preset whose run is another's on this vector is named in
            # that one's `identical` (one numeric outcome is listed once)
            named |= {p for m in d.complete_matches() if m["change"] == ""
                      for p in re.findall(r"(?:^|; )preset (\w+) \(",
                                          m["identical"])}
            assert d.matched and preset in named, \
                "%s under preset %s: %s" % (path, preset, d.summary)
            assert "nearest named implementation" in d.summary or \
                d.kind == "spec"
            shown[preset] += 1
    for preset in names:
        if preset == "paper" and not any(
                d["spec"]["algorithm"].get("preset", "paper") != "paper"
                for _, d in _vectors(alg)):
            continue   # every vector runs the paper: nothing to tell apart
        if (alg, preset) in UNSHOWN:
            assert shown[preset] == 0, "%s/%s is shown now: drop it from " \
                "UNSHOWN" % (alg, preset)
            continue
        assert shown[preset] > 0, \
            "no golden vector of %s shows preset %s" % (alg, preset)


# ---- probes -----------------------------------------------------------------

PROBES = [
    # (vector, key, new value, the change diagnose must name)
    ("fedavg/worked-samples.json", "eta", lambda x: 2 * x, "eta × 2"),
    ("pfedme/worked-linear-official-beta.json", "K", lambda k: k + 1, "K = "),
    ("pfedme/worked-linear-official-beta.json", "lambda", lambda x: 0.0,
     "lambda = 0"),
    ("ditto/worked-linear-official-uniform.json", "lambda",
     lambda x: x / 2, "lambda × ½"),
]


@pytest.mark.parametrize("vector,key,new,words", PROBES)
def test_probe_is_named(vector, key, new, words, tmp_path):
    path = os.path.join(GOLDEN, vector)
    with open(path) as f:
        doc = json.load(f)
    hp = doc["spec"]["algorithm"]["hyperparameters"]
    hp[key] = new(hp[key])
    res = _candidate(doc, tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched, d.summary
    assert d.kind == "probe" and d.param == key, d.summary
    assert d.change.startswith(words), d.change
    assert words in d.summary


# ---- the detection catalogue -------------------------------------------------

def _catalogue():
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "detection",
                                           "bugs*.json"))):
        with open(f) as fh:
            out.extend(json.load(fh))
    return out


# Catalogued bugs that compute, on the first vector that catches them, a
# variant pflref knows by name: a switch value (the description says so),
# or a probe the bug is exactly equivalent to there (a loop that stops one
# batch early is one local step fewer; the squared loss
# without its 2 is the gradient at half the step; half the prox term is
# half of λ or μ_ft; a γ_max test that never binds at γ_max/2 on that
# vector).  Each maps to the change diagnose must name.
NAMED = {
    "uniform-weights": "fedavg.weights = uniform",
    "one-step-fewer": "one local step fewer",
    "squared-loss-no-2": "eta × ½",
    "ft-prox-half": "mu_ft × ½",
    "ft-moves-shared": "finetune.scope = full",
    "pfedme-beta-ignored": "beta = 1",
    "pfedme-theta-reset-ignored": "pfedme.theta_start = ",
    "pfedme-theta-always-reset": "pfedme.theta_start = reset",
    "pfedme-personal-is-local-w": "pfedme.personal_eval = local_w",
    "pfedme-personal-is-global": "pfedme.personal_eval = global",
    "pfedme-mu-missing": "pfedme.mu = 0",
    # pFedMe's inner optimizer built once per client is opt.state = client;
    # θ's statistics never moved are bn.running = frozen
    "pfedme-inner-opt-kept": "opt.state = client",
    "pfedme-bn-stats-frozen": "bn.running = frozen",
    # LoRA's frozen base whose statistics never move is bn.running = frozen
    "lora-bn-not-moved": "bn.running = frozen",
    "ditto-moving-ref": "ditto.prox_ref = moving",
    "ditto-prox-half": "lambda × ½",
    "pfl-stateless-keeps-v": ("pfl.state = stateful",
                              "preset fedrep_pfllib on all"),
    "pfl-finetune-personal-only": "pfl.finetune = personal",
    "pflego-weights-sampled-set": "pflego.theta_weights = sampled_normalised",
    "pflego-head-alpha": "pflego.head_step = exact_alpha",
    "apfl-output-mix": "apfl.mix = output",
    "apfl-mix-new-w": ("apfl.mix_uses_w = new", "apfl.alpha_rule = paper"),
    "cfl-no-gamma-test": "gamma_max × ½",
    "cfl-uniform-always": "cfl.cluster_weights = uniform",
    "perfedavg-samples-weights": "perfedavg.weights = samples",
    "perfedavg-hessian-dropped": ("perfedavg.variant = fo",
                                  "preset pfllib except perfedavg.weights = "
                                  "uniform"),
    "cfl-complete-linkage": "cfl.bipartition = complete_linkage",
    "fedbn-bn-averaged": "fedbn.bn = shared",
    "fedbn-running-var-biased": "fedbn.running_var = biased",
    # FedFomo's bugs that are the authors' or PFLlib's switch values
    "fedfomo-squared-distance": "fedfomo.distance = l2_squared",
    # the validation losses in eval() are the authors' reading
    # (fedfomo.val_mode = eval, which the preset official sets)
    "fedfomo-val-eval-mode": ("fedfomo.val_mode = eval", "preset official"),
    # IFCA's estimate in eval() is FedDCA's reading (ifca.estimate_mode = eval)
    "ifca-estimate-other-mode": "ifca.estimate_mode = eval",
    "fedfomo-anchor-current": ("fedfomo.anchor = post_train",
                               "preset pfllib"),
    "fedfomo-affinity-ratio": ("fedfomo.P_update = raw", "preset pfllib"),
    "fedfomo-eps-no-decay": "fedfomo.delta = 0",
    "lora-scale-alpha": "lora.alpha × 2",
    # the first failing vector is the notes' §6.3b, whose two clients hold
    # one sample each (samples = uniform) and whose pruned client has a
    # zero residual (no regulariser = no self-pruning, λ = 0)
    "hetlora-sample-weights": ("hetlora.weights = samples",
                               "hetlora.weights = uniform"),
    "hetlora-no-regulariser": "hetlora.lambda = 0",
    # SCAFFOLD's bugs that are a switch value or a hyperparameter's default
    "scaffold-c-lr-decayed": "scaffold.c_lr = round",
    "scaffold-global-step-ignored": "scaffold.eta_g = 1",
    # FedDyn's: a switch value left at the paper's, or a preset's setting
    # dropped (the d1 vector cannot tell the norm term from the paper's
    # squared one away from the kink: its whole run is the paper's)
    "feddyn-h-literal-ignored": "feddyn.h_sum = differences",
    "feddyn-alpha-k-ignored": "feddyn.alpha_k = uniform",
    "feddyn-norm-squared": "feddyn preset paper",
    "feddyn-weight-decay-ignored": "feddyn.alpha_k = size_scaled",
    # z_prev from w^t makes z_prev = z_glob: the contrastive gradient
    # cancels exactly, which is MOON with μ = 0
    "moon-prev-global": "moon.mu = 0",
    # FedProx's bugs that are the authors' / PFLlib's reading
    # (fedprox.sampling = uniform_weighted, presets official and pfllib)
    "fedprox-draws-by-size": ("preset official", "preset pfllib",
                              "fedprox.sampling = uniform_weighted"),
    "fedprox-ignore-sampling": ("preset paper", "fedprox.sampling = paper"),
    "fedprox-prox-half": "fedprox.mu × ½",
    "fedprox-lr-per-round": ("preset official", "lr.count = rounds"),
    "fedbn-lr-per-round": "lr.count = rounds",
    "pfl-finetune-from-global": "pfl.finetune_start = global",
    "pfl-finetune-lr-undecayed": "pfl.finetune_lr = constant",
    # FedRecon's: the kept l_i read in place of the given start
    "fedrecon-init-ignored": "fedrecon.local_init = last",
    # FedAMP's: a switch value read the other way, or half the proximal
    # weight λ/α_k (= λ × ½)
    "fedamp-prox-half": "fedamp.lambda × ½",
    "fedamp-start-own": "fedamp.start = own",
    "fedamp-all-peers": "fedamp.peers = all",
    "fedamp-prox-kept": "fedamp.prox = squared",
    "fedamp-lr-per-round": "lr.count = rounds",
    "fedala-ala-participants-only": "fedala.ala_clients = participants",
    # the passes always in training mode is the switch's paper value
    # (on fedala/layers/bn-ala-mode, without lr.*, the preset official
    # is pfllib without it)
    "fedala-ala-mode-ignored": ("fedala.ala_mode = train", "preset official"),
    # FedProto's: R's lost factor 2 is λ × ½; the other distance and the
    # other prototype weights are the switches' other values
    "fedproto-half-r": "fedproto.lambda × ½",
    "fedproto-dim-swap": ("fedproto.distance = squared_l2",
                          "fedproto.distance = mse"),
    "fedproto-weights-swap": ("fedproto.weights = class_counts",
                              "fedproto.weights = uniform"),
    # FedFomo under the preset pfllib: the own entry left out of the
    # ranking is fedfomo.self = excluded; the decay counted per round is
    # lr.count = rounds
    "fedfomo-ranked-no-own": ("fedfomo.self = excluded",
                              "fedfomo.self = included"),
    "fedfomo-lr-per-round": "lr.count = rounds",
    # FedRoD's: the features' iterate and φ_P⁰ are the switches' other
    # values (PFLlib's, which the preset pfllib sets together)
    "fedrod-features-swap": ("fedrod.features = before",
                             "fedrod.features = after", "preset pfllib"),
    "fedrod-phi0-swap": ("fedrod.phi_p0 = generic", "fedrod.phi_p0 = zero",
                         "preset pfllib"),
    # FedALA's start-phase rule: on the first vector that catches each,
    # another rule stops the same passes as a threshold, a window or a
    # cap would; the early return ignored is the paper's reading (or, on
    # pfllib-alone, a range p that leaves the run the same)
    "fedala-stop-sample-std": "fedala.threshold × ½",
    "fedala-stop-at-k": "fedala.k = 1",
    "fedala-start-flipped": ("fedala.start = own", "fedala.start = round2",
                             "preset official"),
    "fedala-loss-mean": ("fedala.threshold = 0.1", "fedala.max_epochs = 3"),
    "fedala-skip-ignored": ("fedala.skip = first_round", "fedala.p = 1"),
    # the evaluation gap ignored is the gap of one, the former rule
    "fedala-eval-gap-ignored": "fedala.eval_gap = 1",
    # APPLE's proximal term without its ½ is the authors' reg_loss
    # (apple.prox = full, which the preset official sets), or μ doubled
    "apple-prox-twice": ("apple.prox = full", "apple.mu × 2", "preset official"),
    # FedPAC's: the alignment's lost factor 2 is λ × ½; the swapped or
    # ignored switches are their other values (the presets set them
    # together); no threshold is, on fedpac/layers/pfllib, a threshold
    # below every weight there (ε × ½)
    "fedpac-align-half": "fedpac.lambda × ½",
    "fedpac-proto-uniform": ("fedpac.centroid_weights = uniform",
                             "preset pfllib"),
    "fedpac-centroid-swap": ("fedpac.centroid_weights = uniform",
                             "fedpac.centroid_weights = class_counts",
                             "preset pfllib"),
    "fedpac-distance-swap": ("fedpac.distance = mse",
                             "fedpac.distance = squared_l2",
                             "preset official", "preset pfllib"),
    "fedpac-no-threshold": ("fedpac.alpha_small = exact", "fedpac.alpha_eps"),
    "fedpac-renormalise-swap": ("fedpac.alpha_small = renormalised",
                                "fedpac.alpha_small = raw"),
    "fedpac-own-skip": "fedpac.missing = none",
    # APPLE's downloads of the cores trained earlier in the same round are
    # PFLlib's (apple.peers = sequential, which the preset pfllib_run sets)
    "apple-live-cores": "apple.peers = sequential",
    # Per-FedAvg's inner step through the optimizer is PFLlib's one object
    # stepping both (perfedavg.opt_steps = both)
    "perfedavg-opt-inner-step": "perfedavg.opt_steps = both",
    # a scheduler counted by the round, not by the client's own trainings,
    # is lr.count = rounds (FedALA's preset official counts so, as its
    # authors' clients all train every round)
    "fedpac-lr-per-round": "lr.count = rounds",
    "fedproto-lr-per-round": "lr.count = rounds",
    "fedrod-lr-per-round": "lr.count = rounds",
    "fedala-lr-per-round": ("lr.count = rounds", "preset official"),
    # a strict |x − a| < τ max(|x|, |a|) on the vector whose one-ulp
    # difference sits exactly on τ is, there, a smaller τ: the probe
    # fedfomo.equal_rtol × ½ gives the same run (equal-rounding-on-tau)
    "fedfomo-equal-strict": "fedfomo.equal_rtol",
    # the same on the parameters()-only path (bn.aggregate =
    # parameters_only), first caught by layers/fedfomo/bn1d-equal-rounding-on-tau
    "fedfomo-equal-strict-params": "fedfomo.equal_rtol",
}


def _first_failing(bug, tmp_path):
    """(vector path, the buggy candidate's result) on the first vector of
    the bug's algorithm where pflref check fails, or (None, None)."""
    for path, doc in _vectors(bug["algorithm"]):
        res = _candidate(doc, tmp_path, bug=bug["name"])
        if res is not None and not pflref.check(path, res).passed:
            return path, res
    return None, None


@pytest.mark.parametrize("bug", _catalogue(), ids=lambda b: b["name"])
def test_catalogued_bug(bug, tmp_path):
    path, res = _first_failing(bug, tmp_path)
    if path is None:
        pytest.skip("no vector of %s fails under %s (run.sh judges the "
                    "catalogue across algorithms)" % (bug["algorithm"],
                                                      bug["name"]))
    d = pflref.diagnose(path, res)
    if bug["name"] in NAMED:
        # a tuple: equivalent names on that vector (a switch, or a preset
        # that sets it together with settings the vector does not tell
        # apart); diagnose may name either
        names = NAMED[bug["name"]]
        names = names if isinstance(names, tuple) else (names,)
        assert d.matched and any(n in d.summary for n in names), \
            "%s on %s: %s" % (bug["name"], path, d.summary)
        return
    assert not d.matched, "%s on %s: %s" % (bug["name"], path, d.summary)
    assert d.summary.startswith("no known variant: nearest is "), d.summary
    first = d.best[0]["first_divergence"]
    assert first is not None and first["name"] in d.summary
    assert "diverging at" in d.summary


def test_equal_strict_params_on_the_bn_boundary(tmp_path):
    """fedfomo-equal-strict-params (the strict bound on the
    parameters()-only path alone) passes every golden/fedfomo vector; the
    layer list whose bias difference sits on τ tells it apart, and diagnose
    names τ there (a strict < at the bound is a smaller τ)."""
    bug = "fedfomo-equal-strict-params"
    assert _first_failing({"name": bug, "algorithm": "fedfomo"},
                          tmp_path) == (None, None)
    path = os.path.join(GOLDEN, "layers",
                        "fedfomo-bn1d-equal-rounding-on-tau.json")
    with open(path) as f:
        doc = json.load(f)
    assert pflref.check(path, _candidate(doc, tmp_path)).passed
    res = _candidate(doc, tmp_path, bug=bug)
    assert not pflref.check(path, res).passed
    d = pflref.diagnose(path, res)
    assert d.matched and NAMED[bug] in d.summary, d.summary


# ---- the API ------------------------------------------------------------------

def test_passing_candidate_matches_its_spec(tmp_path):
    path = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
    with open(path) as f:
        doc = json.load(f)
    d = pflref.diagnose(path, _candidate(doc, tmp_path))
    assert d.matched and d.kind == "spec" and bool(d)
    assert "the candidate passes" in str(d)


def test_budget_caps_the_search(tmp_path):
    path = os.path.join(GOLDEN, "pfedme", "worked-linear-official-beta.json")
    with open(path) as f:
        doc = json.load(f)
    res = _candidate(doc, tmp_path, bug="pfedme-prox-sign")
    d = pflref.diagnose(path, res, budget=2)
    assert d.runs == 2 and d.budget_exhausted and not d.matched


def test_malformed_candidate_names_the_side():
    path = os.path.join(GOLDEN, "fedavg", "worked-samples.json")
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.diagnose(path, {"format": "pflref-result/1", "final": {"w": 1}})
    assert e.value.where.startswith("candidate:")
    with pytest.raises(ValueError):
        pflref.diagnose(path, "{}", budget=-1)


# ---- issue 33: a search that reaches, attribution, counts that mean -------

def _doc(rel):
    path = os.path.join(GOLDEN, rel)
    with open(path) as f:
        return path, json.load(f)


def test_switch_one_from_the_paper_under_a_pfllib_vector(tmp_path):
    """A Ditto whose proximal reference moves, one switch from the paper's
    reading, checked on a vector run with preset pfllib: the paper agrees
    no further than the vector's own spec, and used to be pruned ("no
    known variant: nearest is preset pfllib with lambda = 0").  Every
    preset is a base now; the change is named with the code it comes
    from."""
    path, doc = _doc("ditto/worked-linear-pfllib-drawn.json")
    assert doc["spec"]["algorithm"]["preset"] == "pfllib"
    moved = _with_preset(doc, "paper")
    moved["spec"]["algorithm"].setdefault("switches", {})[
        "ditto.prox_ref"] = "moving"
    res = _candidate(moved, tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched, d.summary
    assert d.preset == "paper" and d.param == "ditto.prox_ref" and \
        d.value == "moving", d.summary
    # attribution: the value's code, not the nearest preset's
    assert "s-huu/Ditto" in d.value_source
    assert "the change comes from ditto.prox_ref = moving: s-huu/Ditto" in \
        d.summary and "the rest from the paper" in d.summary


def test_linked_decay_is_found_as_a_pair(tmp_path):
    """PFLlib's -ld is lr.schedule and lr.gamma together: a schedule probed
    alone (γ = 1) or γ probed alone (constant schedule) changes nothing,
    so only the registry's link finds it."""
    path, doc = _doc("fedavg/worked-samples.json")
    hp = doc["spec"]["algorithm"].setdefault("hyperparameters", {})
    sw = doc["spec"]["algorithm"].setdefault("switches", {})
    assert "lr.schedule" not in sw and "lr.gamma" not in hp
    sw["lr.schedule"] = "exponential"
    hp["lr.gamma"] = 0.99
    res = _candidate(doc, tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind == "pair", d.summary
    assert "lr.schedule = exponential" in d.change and \
        "lr.gamma = 0.99" in d.change, d.change
    assert "TsingZ0/PFLlib -ld" in d.value_source, d.value_source
    # the probes that change nothing were run and not listed
    assert d.unchanged > 0
    assert not any(m["change"].startswith("lr.schedule = exponential "
                                          "(instead of constant)")
                   and "lr.gamma" not in m["change"] for m in d.best)


def test_step_fewer_reaches_the_personal_lists(tmp_path):
    """One local step fewer in a loop shared by both of Ditto's passes
    drops the last batch of the personal lists too (ditto.batches =
    separate): the probe changes every list it applies to."""
    path, doc = _doc("ditto/worked-linear-pfllib-separate.json")
    for rnd in doc["spec"]["schedule"]["rounds"]:
        for key in ("batches", "personal"):
            rnd[key] = [lists[:-1] for lists in rnd[key]]
    res = _candidate(doc, tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.change.startswith("one local step fewer"), \
        d.summary
    assert d.preset == "pfllib"


def test_identical_variants_are_named_together(tmp_path):
    """On a vector whose explicit settings equal preset official's but for
    the preset's name, official with the moving reference and the paper
    with it are one run: listed once, the other named as identical."""
    path, doc = _doc("ditto/worked-notes-3g-both.json")
    moved = _with_preset(doc, "official")
    moved["spec"]["algorithm"].setdefault("switches", {})[
        "ditto.prox_ref"] = "moving"
    res = _candidate(moved, tmp_path)
    d = pflref.diagnose(path, res)
    assert d.matched, d.summary
    assert "identical here: preset" in d.summary, d.summary
    listed = [(m["preset"], m["change"]) for m in d.best]
    assert len(listed) == len(set(listed))
    others = {"paper", "official"} - {d.preset}
    assert any("preset %s with ditto.prox_ref = moving" % p in d.identical
               for p in others), d.identical


def test_partial_counts_only_what_the_candidate_wrote(tmp_path):
    """Under partial, records the candidate did not write are not
    agreeing ("agreeing on 36 of 46" for a candidate that wrote 10)."""
    path, doc = _doc("fedavg/worked-samples.json")
    res = _candidate(doc, tmp_path, bug="uniform-weights")
    res = dict(res, trajectory=[r for r in res["trajectory"]
                                if r["event"] == "server"])
    d = pflref.diagnose(path, res, partial=True, budget=1)
    top = d.best[0]
    wrote = len(res["trajectory"]) + len(res["final"])
    assert top["compared"] == wrote < top["expected_records"]
    assert top["agreeing"] < wrote
    assert "records the candidate wrote" in d.summary, d.summary


def test_progress_line_only_on_a_terminal(tmp_path):
    """`pflref diagnose` draws its progress line when standard error is a
    terminal (a pseudo-terminal here) and writes nothing there into a
    pipe; --quiet silences it."""
    import pty
    path, doc = _doc("fedavg/worked-samples.json")
    res = _candidate(doc, tmp_path, bug="uniform-weights")
    cand = tmp_path / "c.json"
    cand.write_text(json.dumps(res))
    piped = subprocess.run([CLI, "diagnose", path, str(cand)],
                           capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    for quiet in (False, True):
        master, slave = pty.openpty()
        argv = [CLI, "diagnose", path, str(cand)] + (["--quiet"] if quiet
                                                    else [])
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        assert p.returncode == 0
        drawn = b"pflref diagnose: variant run " in seen
        assert drawn != quiet, seen
        if not quiet:
            assert seen.endswith(b"\r\x1b[K"), seen   # erased at the end


# ---- issue 33: a precision cast combined with a change ----------------------

LOWP = os.path.join(ROOT, "docs", "examples", "pfl_numpy_lowp.py")


def _lowp(doc, tmp_path, name, dtype="float32"):
    """The NumPy candidate computing in `dtype` (pfl_numpy_lowp.py: every
    array it makes is float32) on the vector doc, as a result dict: an
    independent float32 run, never pflref's output."""
    path = tmp_path / (name + "-vector.json")
    out = tmp_path / (name + ".json")
    path.write_text(json.dumps(doc))
    subprocess.run(["/usr/bin/python3", LOWP, "--dtype", dtype, str(path),
                    "-o", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


# (vector, where, key, value, words): a change whose float32 run differs
# from its float64 run (FedAvg's uniform weights 1/2 are dyadic on the
# worked vector, so float32 computes that variant exactly there: not used)
CAST_CHANGES = [
    ("fedavg/worked-samples.json", "switches", "fedavg.weights",
     "all_keep_old", "float32 + fedavg.weights = all_keep_old"),
    ("fedavg/worked-samples.json", "hyperparameters", "opt.momentum", 0.9,
     "float32 + opt.momentum = 0.9"),
]


@pytest.mark.parametrize("rel, where, key, value, words", CAST_CHANGES)
def test_float32_with_a_change_is_named_as_the_compound(rel, where, key,
                                                        value, words,
                                                        tmp_path):
    """A candidate run in float32 under a known variant: neither the cast
    alone (the vector's spec) nor the variant in float64 matches; the cast
    with the change does, within float32's rounding spread of the
    variant's run."""
    path, doc = _doc(rel)
    moved = copy.deepcopy(doc)
    moved["spec"]["algorithm"].setdefault(where, {})[key] = value
    res = _lowp(moved, tmp_path, "c32")
    d = pflref.diagnose(path, res)
    assert d.matched, d.summary
    assert d.kind == "precision", d.summary
    assert d.param == "precision " + key, d.param
    assert d.value.split() == ["fp32", str(value)], d.value
    assert d.change.startswith(words), d.change
    assert "precision = fp32" in d.value_source, d.value_source
    # preset pfllib with the same change is the same run on this vector
    # (it differs in lr.count and bn.aggregate only): named identical
    assert "preset pfllib with " + key in d.identical, d.identical
    assert d.summary.startswith("matches fedavg preset paper except " +
                                words), d.summary
    # the variant alone, in float64, is listed below and does not match
    alone = [m for m in d.best if m["param"] == key and m["kind"] != "precision"]
    assert alone and not alone[0]["complete"], d.best
    # and the search stayed within the default budget
    assert not d.budget_exhausted and d.runs <= 200, d.runs


def test_float32_without_a_change_is_the_cast_alone(tmp_path):
    """The same vector run in float32 as specified is the cast alone,
    never a cast with a change."""
    path, doc = _doc("fedavg/worked-samples.json")
    d = pflref.diagnose(path, _lowp(doc, tmp_path, "c32"))
    assert d.matched and d.kind == "precision", d.summary
    assert d.param == "precision" and d.value == "fp32", (d.param, d.value)
    assert "the global model rounded to float32" in d.change, d.change
    assert " + " not in d.change, d.change


@pytest.mark.parametrize("rel, where, key, value, words", CAST_CHANGES)
def test_float64_with_a_change_is_the_change_alone(rel, where, key, value,
                                                   words, tmp_path):
    """The variant computed in float64 is the variant alone: no cast is
    checked (the candidate wrote no quantity in float32 numbers)."""
    path, doc = _doc(rel)
    moved = copy.deepcopy(doc)
    moved["spec"]["algorithm"].setdefault(where, {})[key] = value
    res = _candidate(moved, tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind in ("switch", "probe"), d.summary
    assert d.param == key, d.summary
    assert not any(m["kind"] == "precision" for m in d.best), d.best


def _one_step_fewer(doc):
    """doc with the last batch of every list of every round dropped (the
    personal lists too, where the round has them): a loop that stops one
    batch early, as the input of a candidate."""
    moved = copy.deepcopy(doc)
    for rnd in moved["spec"]["schedule"]["rounds"]:
        for key in ("batches", "personal"):
            if key in rnd:
                rnd[key] = [lists[:-1] for lists in rnd[key]]
    return moved


def test_float32_with_one_step_fewer_is_named_as_the_compound(tmp_path):
    """A candidate run in float32 whose loop stops one batch early: neither
    the cast alone nor the step-fewer probe in float64 matches; the cast
    with the probe does (the probe's run is its base's spec under another
    schedule, one more compound per format)."""
    path, doc = _doc("fedavg/worked-samples.json")
    res = _lowp(_one_step_fewer(doc), tmp_path, "c32")
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind == "precision", d.summary
    assert d.param == "precision schedule", d.param
    assert d.value == "fp32 steps - 1", d.value
    assert d.change.startswith("float32 + one local step fewer"), d.change
    assert "precision = fp32" in d.value_source, d.value_source
    alone = [m for m in d.best if m["param"] == "schedule"]
    assert alone and not alone[0]["complete"], d.best
    assert not d.budget_exhausted and d.runs <= 200, d.runs


def test_float64_with_one_step_fewer_is_the_probe_alone(tmp_path):
    """The same loop in float64 is the probe alone: no cast is checked."""
    path, doc = _doc("fedavg/worked-samples.json")
    res = _candidate(_one_step_fewer(doc), tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind == "probe" and d.param == "schedule", \
        d.summary
    assert not any(m["kind"] == "precision" for m in d.best), d.best


# ---- issue 33: three changes at once (level 3) ---------------------------------

def _several(doc, momentum):
    """doc with FedAvg's weights over all clients (the absent keeping the
    old model), η doubled and, when momentum, torch's μ = 0.9."""
    moved = copy.deepcopy(doc)
    alg = moved["spec"]["algorithm"]
    alg.setdefault("switches", {})["fedavg.weights"] = "all_keep_old"
    hp = alg.setdefault("hyperparameters", {})
    hp["eta"] = 2 * hp["eta"]
    if momentum:
        hp["opt.momentum"] = 0.9
    return moved


def test_three_changes_are_named_as_a_triple(tmp_path):
    """A candidate with three changes (the NumPy candidate under them): no
    pair matches, the pair η × 2 and μ = 0.9 agrees further than η × 2
    alone, and level 3 gives it the third change, within the default
    budget."""
    path, doc = _doc("fedavg/worked-samples.json")
    res = _candidate(_several(doc, True), tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind == "triple", d.summary
    assert sorted(d.param.split()) == ["eta", "fedavg.weights",
                                       "opt.momentum"], d.param
    for words in ("eta = 1.0", "opt.momentum = 0.9",
                  "fedavg.weights = all_keep_old"):
        assert words in d.change, d.change
    assert "fedavg.weights = all_keep_old: " in d.value_source
    # nothing of fewer changes matches; the pair it extends is listed
    assert not any(m["complete"] for m in d.best if m["kind"] != "triple")
    assert any(m["kind"] == "pair" and m["param"] == "eta opt.momentum"
               for m in d.best), d.best


def test_two_changes_are_still_named_as_the_pair(tmp_path):
    """Two of those changes are the pair (level 2 matches; level 3 is not
    searched)."""
    path, doc = _doc("fedavg/worked-samples.json")
    res = _candidate(_several(doc, False), tmp_path)
    assert res is not None
    d = pflref.diagnose(path, res)
    assert d.matched and d.kind == "pair", d.summary
    assert "fedavg.weights = all_keep_old" in d.change and \
        "eta = 1.0" in d.change, d.change
    assert not any(m["kind"] == "triple" for m in d.best), d.best
