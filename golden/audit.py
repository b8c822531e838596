#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""golden/audit.py: replay every golden vector from its spec in exact
arithmetic, and check that its flags are earned.

    /usr/bin/python3 golden/audit.py [-v] [GOLDEN_DIR]

For every pflref-golden/1 vector under GOLDEN_DIR (default: this folder)
whose algorithm and model pflref_exact.py and pflref_exact_pfl.py implement
(fedavg, local, finetune, prox, pfedme, ditto, fedalt, fedsim, pflego;
quadratic, linear, mlp with a squared loss, and layer lists through
pflref_exact_layers.py, whose transcendental layers run in 60-digit
decimals):

 1. replay: the spec as written (model, clients, init, switches, the given
    schedule's clients and batches) is run through pflref_exact.py and every
    expected number must be the correctly rounded double of the exact result
    (within the vector's own tolerance; in practice they are equal).  This
    is a second path to the expected values, independent of the generator
    that wrote them, so a generator whose spec says one thing and whose
    arithmetic does another is caught.
 2. flags: for each flag, the bugs of its class (MUTANTS below) are run the
    same way; at least one of them must move an expected number by more
    than 1e3 times the tolerance, else the flag is not earned.

Exit 1 with one line per problem, naming the file; -v prints, per vector,
which bugs each flag's class catches (without -v a flag's bugs are run
until one catches, each run stopped at its first record that fails the
vector: pflref_golden.MutantRuns).  Vectors of other algorithms are
listed as skipped.
"""
import importlib
import json
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pflref_exact as px        # noqa: E402
import pflref_exact_pfl as pp    # noqa: E402
import pflref_exact_optim as po  # noqa: E402
import pflref_golden as pg       # noqa: E402

WEIGHTS = ("samples", "uniform", "all_keep_old")

# flag -> {algorithm: [bugs]} ("*" = every algorithm)
MUTANTS = {
    "pfedme-bn-statistics": {"pfedme": ["bn-stats-of-w"]},
    "bn-own-buffers": {"fedavg": ["start-global-buffers", "start-w0-buffers"],
                       "ditto": ["start-global-buffers", "start-w0-buffers"],
                       "fedalt": ["start-global-buffers", "start-w0-buffers"],
                       "fedsim": ["start-global-buffers", "start-w0-buffers"],
                       "fedprox": ["start-global-buffers", "start-w0-buffers"],
                       "pfedme": ["start-global-buffers", "start-w0-buffers"]},
    "bn-first-upload": {"fedavg": ["first-upload-ignored"]},
    "bn-global-buffers": {"fedavg": ["global-buffers-averaged",
                                     "global-buffers-last"],
                          "ditto": ["global-buffers-averaged",
                                    "global-buffers-last"],
                          "fedalt": ["global-buffers-averaged",
                                     "global-buffers-last"],
                          "fedsim": ["global-buffers-averaged",
                                     "global-buffers-last"],
                          "fedprox": ["global-buffers-averaged",
                                      "global-buffers-last"],
                          "pfedme": ["global-buffers-averaged",
                                     "global-buffers-last"]},
    "aggregation-weights": {"*": ["weights=" + w for w in WEIGHTS],
                            "pfedme": ["samples-weights", "uniform-weights"],
                            "ditto": ["uniform-weights", "samples-weights"],
                            "fedalt": ["samples-weights", "uniform-weights"],
                            "fedsim": ["samples-weights", "uniform-weights"]},
    "local-step-count": {"*": ["epochs-plus-one", "epochs-minus-one"],
                         "pfedme": ["epochs-plus-one", "epochs-minus-one",
                                    "inner-plus-one", "inner-minus-one"],
                         "prox": ["inner-plus-one", "inner-minus-one"],
                         "pflego": ["cheap-steps-tau"]},
    "ragged-batch": {"*": ["ragged-drop"]},
    "lr-schedule": {"*": ["lr-ignored", "lr-shifted"]},
    "lr-count": {"*": ["lr-per-round"]},
    "pfedme-eval-reset": {"pfedme": ["eval-reset-ignored", "eval-reset-every-round"]},
    "batch-mean": {"*": ["batch-sum"]},
    "loss-scale": {"*": ["loss-x2"]},
    "feature-transpose": {"*": ["transpose-x"]},
    "bias-gradient": {"*": ["bias-sum"]},
    "bias-update": {"*": ["bias-frozen"]},
    "unsampled-client": {"*": ["all-denominator", "keep-old", "train-all"],
                         "pfedme": ["aggregate-all", "train-all"],
                         "ditto": ["train-all"]},
    "initial-point": {"*": ["init-zeros"]},
    "stale-global": {"fedavg": ["restart-w0"],
                     "finetune": ["restart-w0", "finetune-w0"],
                     "pfedme": ["restart-w0"], "ditto": ["restart-w0"]},
    "stale-personal-state": {"local": ["reset-personal", "train-all"],
                             "pfedme": ["train-sampled"],
                             "ditto": ["personal-from-global",
                                       "reset-personal", "train-all"],
                             "fedalt": ["reset-personal", "keep-personal"],
                             "fedsim": ["reset-personal", "keep-personal"]},
    "prox-sign": {"finetune": ["prox-plus"], "pfedme": ["prox-plus"],
                  "ditto": ["prox-plus"], "prox": ["prox-plus"]},
    "prox-reference": {"finetune": ["prox-ref-w0", "prox-ref-moving"],
                       "pfedme": ["pfedme-ref-wt"], "prox": ["prox-ref-moving"]},
    "finetune-scope": {"finetune": ["scope-full"], "fedalt": ["scope-flip"],
                       "fedsim": ["scope-flip"]},
    "finetune-start": {"fedalt": ["ft-start-global"],
                       "fedsim": ["ft-start-global"]},
    "finetune-lr": {"fedalt": ["ft-lr-constant"], "fedsim": ["ft-lr-constant"]},
    "theta-start": {"pfedme": ["theta-start-flip"], "prox": ["theta-start-flip"]},
    "beta-ignored": {"pfedme": ["beta-one"]},
    "personal-eval": {"pfedme": ["personal-eval=theta", "personal-eval=local_w",
                                 "personal-eval=global"]},
    "ditto-moving-ref": {"ditto": ["ditto-ref-moving", "ditto-ref-round-start",
                                   "ditto-order-flip"]},
    "prox-form": {"ditto": ["prox-form-flip"]},
    "ditto-personal-batches": {"ditto": ["personal-on-global-batches"]},
    "pfl-update-order": {"fedalt": ["fedalt-u-first", "fedalt-stale-v"],
                         "fedsim": ["fedsim-sequential"]},
    "pflego-inverse-probability": {"pflego": ["no-ip-factor"]},
    "pflego-head-step": {"pflego": ["head-alpha-flip", "head-step-beta"]},
    "pflego-theta-weights": {"pflego": ["theta-weights-flip"]},
    "pflego-body-passes": {"pflego": ["features-per-step"]},
    "pflego-optimizer-blocks": {"pflego": ["opt-body-moves"]},
    "regression-only": {},
    "reference-output": {},
    # the client optimizers (golden/pflref_exact_optim.py), under every
    # algorithm that takes them
    "optimizer-state-lifetime": {"*": ["state-reset", "state-client",
                                       "state-server"]},
    "optimizer-slots-shared": {"*": ["slots-shared"]},
    "momentum-form": {"*": ["momentum-form-swap", "dampening-first"]},
    "nesterov-momentum": {"*": ["nesterov-ignored"]},
    "weight-decay-form": {"*": ["decay-form-swap"]},
    "weight-decay-scope": {"*": ["decay-scope-all", "decay-scope-flip"]},
    "adam-bias-correction": {"*": ["adam-no-bias-correction",
                                   "adam-eps-inside"]},
    "clip-scope": {"*": ["clip-after-decay", "clip-per-block"]},
}
PERSONAL_ALGORITHMS = ("prox", "pfedme", "ditto")
PFL_ALGORITHMS = ("fedalt", "fedsim", "pflego")
PLAN_BUGS = {"ragged-drop", "epochs-plus-one", "epochs-minus-one"}


def period(steps):
    """The length of one epoch of an explicit batch list: its smallest
    period."""
    n = len(steps)
    for p in range(1, n + 1):
        if n % p == 0 and all(steps[i] == steps[i % p] for i in range(n)):
            return p
    return n


def transform(steps, bugs):
    """The bugs that change a client's local work, applied to its explicit
    batch list."""
    steps = [list(b) for b in steps]
    if not steps:
        return steps
    p = period(steps)
    if "ragged-drop" in bugs:
        B = max(len(b) for b in steps)
        steps = [b for b in steps if len(b) == B]
        p = period(steps) if steps else 0
    if "epochs-plus-one" in bugs:
        steps = steps + steps[:p]
    if "epochs-minus-one" in bugs:
        steps = steps[:len(steps) - p]
    return steps


def mask_of(spec, pr):
    """Finetune's mask: 1 on the entries of the split's personal blocks."""
    names = spec.get("split", {}).get("personal", [])
    if spec["model"]["kind"] == "layers":       # layer and group names too
        return pp.personal_mask(spec["model"], names)
    blocks = [("w", pr.d)] + ([("b", 1)] if pr.bias else [])
    mask = []
    for name, size in blocks:
        mask += [1 if name in names else 0] * size
    return mask


# Algorithms replayed by a module of their own: MODULES[alg].replay(spec,
# bugs) -> (trace, w, v, alpha) (None where the algorithm keeps none), and
# the module's MUTANTS {flag: [bugs]} extend the table above.
MODULES = {}
for _alg, _mod in (("perfedavg", "pflref_exact_perfedavg"),
                   ("apfl", "pflref_exact_apfl"),
                   ("interp", "pflref_exact_interp"),
                   ("cfl", "pflref_exact_cfl"), ("ifca", "pflref_exact_ifca"),
                   ("fedfomo", "pflref_exact_fedfomo"),
                   ("fedbn", "pflref_exact_fedbn"),
                   ("pfedhn", "pflref_exact_pfedhn"),
                   ("lora", "pflref_exact_lora"),
                   ("feddyn", "pflref_exact_feddyn"),
                   ("scaffold", "pflref_exact_scaffold"),
                   ("moon", "pflref_exact_moon"),
                   ("fedprox", "pflref_exact_fedprox"),
                   ("fedrecon", "pflref_exact_fedrecon"),
                   ("fedamp", "pflref_exact_fedamp"),
                   ("fedproto", "pflref_exact_fedproto"),
                   ("fedrod", "pflref_exact_fedrod"),
                   ("apple", "pflref_exact_apple"),
                   ("fedala", "pflref_exact_fedala"),
                   ("fedpac", "pflref_exact_fedpac")):
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   _mod + ".py")):
        MODULES[_alg] = importlib.import_module(_mod)
        for _flag, _bugs in getattr(MODULES[_alg], "MUTANTS", {}).items():
            MUTANTS.setdefault(_flag, {})[_alg] = list(_bugs)


# The layer-list model's bugs (pflref_exact_layers.py) act inside the model's
# gradient, so they apply under every algorithm that replays one; the
# algorithm-specific rows above keep precedence.
import pflref_exact_layers as pl  # noqa: E402
for _flag, _bugs in pl.MUTANTS.items():
    MUTANTS.setdefault(_flag, {}).setdefault("*", list(_bugs))


def replay(spec, bugs=frozenset()):
    """The expected object of the spec, run exactly (with bugs)."""
    if spec["algorithm"]["name"] == "fedavg" and po.uses_optimizer(spec):
        trace, w = po.replay(spec, frozenset(bugs))   # opt.*: optim/
        return pg.expected(trace, w=w)
    alg = spec["algorithm"]["name"]
    if alg in MODULES:
        trace, w, v, alpha = MODULES[alg].replay(spec, frozenset(bugs))
        return pg.expected(trace, w=w, v=v, alpha=alpha)
    if alg in PERSONAL_ALGORITHMS + PFL_ALGORITHMS:
        # the schedule bugs act on the batch lists; the rest inside the run
        sched = dict(spec["schedule"], rounds=[
            dict(r, batches=[transform(b, bugs) for b in r["batches"]])
            for r in spec["schedule"]["rounds"]])
        run = pp.replay if alg in PFL_ALGORITHMS else px.replay_personal
        w, v, trace = run(dict(spec, schedule=sched), frozenset(bugs))
        return pg.expected(trace, w=w, v=v)
    hp = {k: pg.exact(v) for k, v in spec["algorithm"].get("hyperparameters", {}).items()}
    sw = spec["algorithm"].get("switches", {})
    weights = sw.get("fedavg.weights", "samples")
    for b in bugs:
        if b.startswith("weights="):
            weights = b.split("=", 1)[1]
    pr = px.Problem(spec["model"], spec["problem"]["clients"]).bn_switches(sw)
    w0 = px.initial(spec.get("init", {"kind": "zeros"}), pr.P, bugs)
    sched = spec["schedule"]
    assert sched["kind"] == "given"
    trace = pg.Trace()
    w, v = list(w0), [list(w0) for _ in pr.clients]
    trained = [0] * len(pr.clients)     # rounds each client trained (lr.count)
    # opt.*: local's one optimizer, finetune's two (training, fine-tuning)
    personal = mask_of(spec, pr) if "split" in spec else None
    opt = po.for_spec(spec, pr, 2 if alg == "finetune" else 1, personal,
                      frozenset(bugs))
    # bn.aggregate = parameters_only (fedavg; its preset pfllib sets it): the
    # clients' own models, whose running statistics persist
    keep = sw.get("bn.aggregate", "parameters_only"
                  if spec["algorithm"].get("preset") == "pfllib" and alg == "fedavg"
                  else "average") == "parameters_only"
    own = {} if keep and pr.buffers else None
    for t, r in enumerate(sched["rounds"]):
        plan = [(k, transform(b, bugs)) for k, b in zip(r["clients"], r["batches"])]
        eta_t = {k: hp["eta"] * px.round_factor(spec["algorithm"], t, bugs,
                                                trained=trained[k])
                 for k in r["clients"]}
        for k in r["clients"]:
            trained[k] += 1
        if alg == "local":
            v = px.local_round(pr, v, w0, t, plan, eta_t, trace, bugs, opt)
        else:
            w = px.fedavg_round(pr, w, w0, t, plan, eta_t, weights, trace, bugs,
                                opt, own, first_upload=r.get("first_upload"))
    if alg == "fedavg":
        return pg.expected(trace, w=w)
    if alg == "local":
        return pg.expected(trace, v=v)
    mask = mask_of(spec, pr) if sw.get("finetune.scope", "full") == "personal" else None
    post = [transform(b, bugs) for b in sched["post"]]
    thetas = px.finetune_phase(pr, w, w0, post, hp["eta_ft"], hp.get("mu_ft", Fraction(0)),
                               mask, trace, bugs, opt)
    return pg.expected(trace, w=w, v=thetas)


def supported(spec):
    model = spec["model"]
    # a dropout layer's masks are replayed by golden/layers/make_dropout.py,
    # which extends pflref_exact_layers.py and asserts each flag's bugs
    # itself; this second path has no mask feed
    if any(L.get("type") == "dropout" for L in model.get("layers", [])):
        return False
    exact_model = (model["kind"] in ("linear", "quadratic", "layers")
                   or (model["kind"] == "mlp"
                       and model.get("loss") in ("half_squared", "squared")))
    if spec["algorithm"]["name"] in MODULES:
        return MODULES[spec["algorithm"]["name"]].supported(spec)
    return (spec["algorithm"]["name"] in ("fedavg", "local", "finetune")
            + PERSONAL_ALGORITHMS + PFL_ALGORITHMS
            and exact_model
            and "clients" in spec.get("problem", {})
            and spec.get("schedule", {}).get("kind") == "given")


def audit(root, verbose):
    problems, n_ok, skipped = [], 0, []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".json"):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)
            try:
                with open(path) as f:
                    v = json.load(f)
            except (OSError, ValueError):
                continue
            if not isinstance(v, dict) or v.get("format") != pg.GOLDEN_FORMAT:
                continue
            spec, tol, exp = v["spec"], v["tolerance"], v["expected"]
            if not supported(spec):
                skipped.append(rel)
                continue
            diff = pg.detects(exp, replay(spec), tol, margin=1.0)
            if diff is not None:
                problems.append(f"{rel}: the exact replay of the spec differs from "
                                f"the expected values: {diff}")
                continue
            alg = spec["algorithm"]["name"]
            runs = pg.MutantRuns(exp, tol)  # detects(), each run stopped early
            for flag in v.get("flags", []):
                if flag in ("regression-only", "reference-output"):
                    continue
                classes = MUTANTS.get(flag)
                if classes is None:
                    problems.append(f"{rel}: flag {flag}: no bug class known to the audit")
                    continue
                bugs = classes.get(alg, classes.get("*", []))
                caught = []
                for bug in bugs:
                    if caught and not verbose:
                        break       # the flag is earned; -v lists every bug
                    try:
                        if runs.diff(lambda: replay(spec, {bug})) is not None:
                            caught.append(bug)
                    except (OverflowError, ZeroDivisionError):
                        caught.append(bug)
                    except ValueError:
                        pass    # a bug this exact replay cannot run (a negative
                        # variance's root), as families_common.earned skips it
                if verbose:
                    print(f"{v['id']}: {flag}: catches {', '.join(caught) or 'nothing'}"
                          f" of {', '.join(bugs)}")
                if not caught:
                    problems.append(f"{rel}: flag {flag} not earned: none of "
                                    f"{', '.join(bugs) or '(no bugs for ' + alg + ')'} "
                                    "moves an expected number")
            n_ok += 1
    return n_ok, skipped, problems


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    root = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    n, skipped, problems = audit(root, "-v" in sys.argv[1:])
    for rel in skipped:
        print(f"golden audit: {rel}: skipped (algorithm or model not in pflref_exact.py)")
    for p in problems:
        print(f"golden audit: {p}", file=sys.stderr)
    status = "ok" if not problems else f"{len(problems)} problem(s)"
    print(f"golden audit: {n} vectors replayed, {len(skipped)} skipped, {status}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
