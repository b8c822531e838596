#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/detection/precision_margin.py: how far does C = 16 separate bugs
from rounding, and how often would a correct run be flagged?
(docs/validate.md, "Candidate precision", "Choosing C".)

`pflref check --candidate-precision fp32` holds each expected entry r_j
of a record to

    t_j = max(atol + rtol |r_j|,  C · s_j + (A + k) · u · max_i |x_i|)

where s_j = max_k |x_kj − x_j| is the spread of K perturbed reference
runs around the unperturbed one x (ref/oracle/precision.c).  This script
runs the same perturbed runs in-process (pflref_mca_begin: include/pflref/
golden.h; a run with a check's seed is that check's run) and measures two
things on the golden vectors:

1. margins (--margins): every bug of the catalogue (tests/detection/
   bugs*.json) run in the candidate's precision (docs/examples/
   pfl_numpy_lowp.py --dtype float32, in a worker process).  For each bug
   the check flags, its margin is the deviation on its most telling
   record over the bound there, max_j |x_cand,j − r_j| / t_j at C = 16
   with the check's own seeds (--mca-seed 0): 1 is the edge of detection.
   A bug flagged by a record it lacks or adds has no finite margin
   (counted apart).  Each bug's verdict is cross-checked with
   `pflref check` (the C's verdict, not this script's, is the figure);
   a disagreement is reported.
2. leave-one-out false positives (--loo): per vector a pool of K + 1
   perturbed runs with new seeds (never the check's); each run in turn
   is a stand-in "candidate", a correct run in the precision by
   construction, held to the bound of the K others.  A trial is flagged
   when some entry exceeds t_j; counted at C = 1, 2, 4, 8, 16.  Trials
   whose records are chaotic at that C and within the bound count as
   inconclusive, as in the check.  Each pool also has P probe runs at
   S times the roundoff (the check's discontinuity probes: PFLREF_MCA_PROBE_*
   in include/pflref/golden.h); an entry out of the bound but within the
   jump band of the probes, or a record a perturbed run lacks too, counts
   as a kink (inconclusive), as in the check.  --no-probes leaves them out
   (the check before the probes) for the figures before/after.

usage: precision_margin.py [--margins] [--loo] [--precision fp32|bf16]
                           [--pools N] [--include GLOB]... [--bugs N]
                           [--bug NAME]... [--no-probes] [--json OUT]
  (neither --margins nor --loo: both)
  --pools N     N pools of K + 1 runs (and P probes) per vector for --loo
                (default 1:
                425 vectors × 9 trials = 3,825 trials)
  --include G   only vectors whose id matches the glob G
  --bugs N      only the first N bugs of each catalogue file
  --bug NAME    only the bug NAME (repeatable; with --bugs, among the first
                N of each file)
  --every-vector  run every bug on every vector (default: on its own
                algorithm's vectors, the "algorithm" of its catalogue
                entry; for a core bug of bugs.json, whose code other
                algorithms may share, the margin found there is a lower
                bound of its margin over the whole set)
The library is build/rel/libpflref.so (or $PFLREF_LIB), the CLI
$PFLREF_CLI (default build/rel/pflref).  CPU time of the full run (fp32)
is in docs/validate.md ("Choosing C"); python/tests/test_precision.py
runs a short version.  Exit 0 when the C verdicts agree
with this script's and no false positive was found at C = 16, else 1.
"""
import argparse
import ctypes
import fnmatch
import json
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import pflref                           # noqa: E402
from pflref import _errors, _lib        # noqa: E402

PRECISIONS = {"fp32": (1, 2.0 ** -24, "float32"),
              "bf16": (2, 2.0 ** -8, "bfloat16")}
K = 8                   # PFLREF_MCA_RUNS
FLOOR_UNITS = 4.0       # PFLREF_MCA_FLOOR_UNITS
C_DEFAULT = 16.0        # PFLREF_MCA_C
PROBES = 16             # PFLREF_MCA_PROBE_RUNS
PROBE_SCALE = 4.0       # PFLREF_MCA_PROBE_SCALE
CS = (1.0, 2.0, 4.0, 8.0, 16.0)
FP64_FLOOR = (1e-13, 1e-11)
MASK = (1 << 64) - 1


def splitmix(state):
    """(next state, draw): ref/oracle/precision.c's next_seed."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def seeds(root, n):
    """The n seeds a check with --mca-seed root draws."""
    out = []
    for _ in range(n):
        root, z = splitmix(root)
        out.append(z)
    return out


# ---- the reference, plain and perturbed -----------------------------------------

def library():
    lib = _lib.library()
    lib.pflref_mca_begin.argtypes = [ctypes.c_int, ctypes.c_uint64]
    lib.pflref_mca_begin.restype = None
    lib.pflref_mca_begin_scaled.argtypes = [ctypes.c_int, ctypes.c_uint64,
                                            ctypes.c_double]
    lib.pflref_mca_begin_scaled.restype = None
    lib.pflref_mca_end.argtypes = []
    lib.pflref_mca_end.restype = None
    return lib


def records(doc):
    """{(key, nth): [values]} of a result or an expectation: the
    trajectory's records and the final quantities."""
    out, seen = {}, {}
    for r in doc.get("trajectory", []):
        key = (r["event"], r.get("phase"), r.get("round"), r.get("client"),
               r.get("step"), r["name"])
        nth = seen.get(key, 0)
        seen[key] = nth + 1
        out[(key, nth)] = [float(x) for x in r["value"]]
    for name, value in (doc.get("final") or {}).items():
        flat = []
        for x in value:
            flat.extend(x if isinstance(x, list) else [x])
        out[(("final", None, None, None, None, name), 0)] = \
            [float(x) for x in flat]
    return out


def run(lib, text, folder, prec=None, seed=None, scale=1.0):
    """The reference's records of the vector, perturbed when prec (at
    scale times its unit roundoff)."""
    if prec is not None:
        lib.pflref_mca_begin_scaled(PRECISIONS[prec][0], seed, scale)
    try:
        return records(json.loads(_lib.run_text(text, folder)))
    except _errors.Error:
        return None                  # a perturbed run that diverged
    finally:
        if prec is not None:
            lib.pflref_mca_end()


class Bound:
    """The check's bound of every expected entry, from the unperturbed run
    and perturbed runs (ref/oracle/precision.c, set_bounds)."""

    def __init__(self, base, runs, u, probes=()):
        self.u, self.base = u, base
        self.spread, self.lost = self.deviations(base, runs)
        # the probes: what they lose is lost for a candidate (any_lost),
        # not chaotic; a probe that diverged (None) is left out
        self.probe, plost = self.deviations(
            base, [p for p in probes if p is not None])
        self.any_lost = self.lost | plost

    @staticmethod
    def deviations(base, runs):
        spread, lost = {}, set()
        for key, x0 in base.items():
            s = [0.0] * len(x0)
            for xk in runs:
                xs = None if xk is None else xk.get(key)
                if xs is None or len(xs) != len(x0):
                    lost.add(key)
                    continue
                for j, (a, b) in enumerate(zip(xs, x0)):
                    d = abs(a - b)
                    s[j] = max(s[j], math.inf if math.isnan(d) else d)
            spread[key] = s
        return spread, lost

    def of(self, key, C):
        """(bounds of the record's entries, chaotic, jump bands) at C;
        None: no base.  A jump band is C × the probes' deviation + floor
        where the probes move the entry beyond its bound, else 0
        (ref/oracle/precision.c, set_bounds)."""
        if key not in self.base:
            return None, False, None
        x0, s, q = self.base[key], self.spread[key], self.probe[key]
        scale = max((abs(x) for x in x0), default=0.0)
        ev, step = key[0][0], key[0][4]
        k = float(step) if ev == "step" and step and step > 0 else 0.0
        floor = (FLOOR_UNITS + k) * self.u * scale
        spread = max(s, default=0.0)
        chaotic = key in self.lost or (spread > 0.0 and C * spread >= scale)
        b = [C * sj + floor for sj in s]
        # a jump is the record's: where the probes move one entry beyond
        # its bound, every entry of the record has its band
        jumps = any(math.isfinite(qj) and qj > bj for qj, bj in zip(q, b))
        jump = [C * qj + floor if jumps and math.isfinite(qj) else 0.0
                for qj in q]
        return b, chaotic, jump


def judge(expected, cand, bound, tol, C, kinks=True):
    """(worst ratio |x − r| / t over the records, its key, structural,
    chaotic, kinks) of a candidate against the expectation.  With kinks,
    an entry out of t but within its jump band, and a record missing or
    of another length that a perturbed run lacks too, are kinks (counted,
    not in the ratio), as in the check (ref/oracle/golden.c,
    compare_records)."""
    atol, rtol = max(tol[0], FP64_FLOOR[0]), max(tol[1], FP64_FLOOR[1])
    worst, where, structural, chaotic, nkinks = 0.0, None, False, False, 0
    for key, r in expected.items():
        x = cand.get(key)
        if x is None or len(x) != len(r):
            if kinks and key in bound.any_lost:
                nkinks += 1
            else:
                structural, where = True, key
            continue
        b, ch, jump = bound.of(key, C)
        chaotic |= ch
        rec_worst, rec_where, rec_kink = 0.0, None, False
        for j, (xj, rj) in enumerate(zip(x, r)):
            t = atol + rtol * abs(rj)
            if b is not None and b[j] > t:
                t = b[j]
            d = abs(xj - rj)
            if kinks and jump is not None and t < d <= jump[j]:
                rec_kink = True
                continue
            ratio = math.inf if math.isnan(d) else (d / t if t > 0 else
                                                    (math.inf if d else 0.0))
            if ratio > rec_worst:
                rec_worst, rec_where = ratio, key
        if rec_kink and rec_worst <= 1.0:
            nkinks += 1
        if rec_worst > worst:
            worst, where = rec_worst, rec_where
    return worst, where, structural, chaotic, nkinks


# ---- the golden vectors -----------------------------------------------------------

def vectors(include):
    out = []
    for root, dirs, files in sorted(os.walk(os.path.join(ROOT, "golden"))):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith(".json"):
                continue
            try:
                with open(path) as f:
                    text = f.read()
                doc = json.loads(text)
            except (OSError, ValueError):
                continue
            if not isinstance(doc, dict) or \
                    doc.get("format") != "pflref-golden/1":
                continue
            if include and not any(fnmatch.fnmatch(doc["id"], g)
                                   for g in include):
                continue
            tol = doc["tolerance"]
            out.append({"id": doc["id"], "path": path, "text": text,
                        "folder": os.path.dirname(path),
                        "algorithm": doc["spec"]["algorithm"]["name"],
                        "expected": records(doc["expected"]),
                        "tol": (tol["atol"], tol["rtol"])})
    return out


# ---- 2. leave-one-out -------------------------------------------------------------

def leave_one_out(lib, vecs, prec, pools, log, probes=True):
    u = PRECISIONS[prec][1]
    flagged = {C: 0 for C in CS}
    inconclusive = {C: 0 for C in CS}
    kinked = {C: 0 for C in CS}
    worst = {C: (0.0, None) for C in CS}
    trials = 0
    examples = {C: [] for C in CS}
    examples["kink"] = []
    for n, v in enumerate(vecs):
        base = run(lib, v["text"], v["folder"])
        for p in range(pools):
            # new seeds, never a check's: the stream of root 2^63 + vector
            # number · 1000 + pool
            pool = seeds((1 << 63) + 1000 * n + p, K + 1 + PROBES)
            runs = [run(lib, v["text"], v["folder"], prec, s)
                    for s in pool[:K + 1]]
            probe = [run(lib, v["text"], v["folder"], prec, s, PROBE_SCALE)
                     for s in pool[K + 1:]] if probes else []
            for i, cand in enumerate(runs):
                if cand is None:
                    continue
                others = runs[:i] + runs[i + 1:]
                bound = Bound(base, others, u, probe)
                trials += 1
                for C in CS:
                    ratio, key, structural, chaotic, nk = judge(
                        v["expected"], cand, bound, v["tol"], C, probes)
                    if not structural and ratio <= 1.0 and nk:
                        kinked[C] += 1
                        if C == C_DEFAULT and len(examples["kink"]) < 10:
                            examples["kink"].append("%s (run %d)"
                                                    % (v["id"], i))
                    if structural or ratio > 1.0:
                        flagged[C] += 1
                        if len(examples[C]) < 5:
                            examples[C].append("%s (run %d): ratio %.3g at %s"
                                               % (v["id"], i, ratio, key[0]))
                    elif chaotic or nk:
                        inconclusive[C] += 1
                    if ratio > worst[C][0] and not structural:
                        worst[C] = (ratio, v["id"])
        if log and (n + 1) % 50 == 0:
            log("loo: %d/%d vectors" % (n + 1, len(vecs)))
    return {"trials": trials, "K": K, "precision": prec,
            "probes": PROBES if probes else 0,
            "false_positives": {str(C): flagged[C] for C in CS},
            "inconclusive": {str(C): inconclusive[C] for C in CS},
            "kinks": {str(C): kinked[C] for C in CS},
            "worst_ratio": {str(C): worst[C][0] for C in CS},
            "worst_vector": {str(C): worst[C][1] for C in CS},
            "examples": {str(C): examples[C] for C in list(CS) + ["kink"]}}


# ---- 1. margins of the bug catalogue ----------------------------------------------

WORKER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import pfl_numpy_lowp as lowp
lowp.install(sys.argv[2])
lowp.kernels()
import pfl_numpy
for line in sys.stdin:
    bug, path, out = line.rstrip("\n").split("\t")
    pfl_numpy.BUG = bug or None
    try:
        doc = pfl_numpy.run_file(path)
        pfl_numpy.write_json(doc, out)
        print("ok", flush=True)
    except Exception as e:          # Unsupported, a diverging bug
        print("skip %s" % type(e).__name__, flush=True)
"""


def catalogue(per_file, every, names=()):
    det = os.path.join(ROOT, "tests", "detection")
    files = ["bugs.json"] + sorted(f for f in os.listdir(det)
                                   if f.startswith("bugs-") and
                                   f.endswith(".json"))
    out = []
    for name in files:
        with open(os.path.join(det, name)) as f:
            bugs = json.load(f)
        for b in bugs[: None if per_file < 0 else per_file]:
            if names and b["name"] not in names:
                continue
            # run on its own algorithm's vectors: an extension's bug
            # (bugs-<alg>.json) can show nowhere else; a core bug's margin
            # over them is a lower bound of its margin over every vector
            out.append((b["name"], None if every else b.get("algorithm")))
    return out


def margins(lib, vecs, prec, per_file, every, cli, log, probes=True,
            names=()):
    u = PRECISIONS[prec][1]
    dtype = PRECISIONS[prec][2]
    bounds = {}
    # the check's seeds: K runs, then its probes (ref/oracle/precision.c)
    check_seeds = seeds(0, K + PROBES)
    for v in vecs:
        base = run(lib, v["text"], v["folder"])
        runs = [run(lib, v["text"], v["folder"], prec, s)
                for s in check_seeds[:K]]
        probe = [run(lib, v["text"], v["folder"], prec, s, PROBE_SCALE)
                 for s in check_seeds[K:]] if probes else []
        bounds[v["id"]] = Bound(base, runs, u, probe)
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER,
         os.path.join(ROOT, "docs", "examples"), dtype],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        stderr=subprocess.DEVNULL)
    results, disagree = [], []
    tmp = tempfile.mkdtemp(prefix="precision-margin-")
    bugs = catalogue(per_file, every, names)
    unknown = set(names) - {b for b, _ in bugs}
    if unknown:
        raise SystemExit("precision_margin: no bug named %s in the catalogue"
                         % ", ".join(sorted(unknown)))
    for nb, (bug, alg) in enumerate(bugs):
        outdir = os.path.join(tmp, bug)
        os.makedirs(outdir, exist_ok=True)
        best = (0.0, None, None)
        structural, ran = [], 0
        before = False      # flagged by the bound alone (no kink rule)
        for v in vecs:
            if alg is not None and v["algorithm"] != alg:
                continue
            out = os.path.join(outdir, v["id"].replace("/", "__") + ".json")
            worker.stdin.write("%s\t%s\t%s\n" % (bug, v["path"], out))
            worker.stdin.flush()
            if not worker.stdout.readline().startswith("ok"):
                continue
            ran += 1
            with open(out) as f:
                cand = records(json.load(f))
            ratio, key, struct, _, _ = judge(v["expected"], cand,
                                             bounds[v["id"]], v["tol"],
                                             C_DEFAULT, probes)
            if struct:
                structural.append(v["id"])
            r0, _, s0, _, _ = judge(v["expected"], cand, bounds[v["id"]],
                                    v["tol"], C_DEFAULT, False)
            before |= s0 or r0 > 1.0
            if ratio > best[0]:
                best = (ratio, v["id"], key)
        flagged_py = best[0] > 1.0 or bool(structural)
        # the C's verdict on the same results
        r = subprocess.run([cli, "check", os.path.join(ROOT, "golden"),
                            outdir, "--candidate-precision", prec, "--json"],
                           capture_output=True, text=True)
        try:
            summary = json.loads(r.stdout)["summary"]
            flagged_c = summary["numeric_mismatches"] + \
                summary["wrong_outcome"] > 0
        except (ValueError, KeyError):
            flagged_c = None
        if flagged_c is not None and flagged_c != flagged_py:
            disagree.append(bug)
        results.append({"bug": bug, "vectors_run": ran,
                        "flagged": flagged_c,
                        "flagged_without_kinks": before,
                        "margin": best[0] if best[0] > 1.0 or not structural
                        else None,
                        "structural": structural[:3],
                        "vector": best[1],
                        "record": list(best[2][0]) if best[2] else None})
        subprocess.run(["rm", "-rf", outdir])
        if log and (nb + 1) % 20 == 0:
            log("margins: %d/%d bugs" % (nb + 1, len(bugs)))
    worker.stdin.close()
    worker.wait()
    os.rmdir(tmp)
    flagged = [r for r in results if r["flagged"]]
    finite = sorted((r for r in flagged if r["margin"] and r["margin"] > 1.0
                     and math.isfinite(r["margin"])),
                    key=lambda r: r["margin"])
    quant = {}
    if finite:
        ms = [r["margin"] for r in finite]
        for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9):
            quant[str(q)] = ms[min(len(ms) - 1, int(q * len(ms)))]
        quant["1.0"] = ms[-1]
    return {"precision": prec, "bugs": len(results),
            "flagged": len(flagged),
            "flagged_by_structure_only": sum(
                1 for r in flagged if not (r["margin"] and r["margin"] > 1)),
            "not_flagged": [r["bug"] for r in results if not r["flagged"]],
            "flagged_without_kinks": sum(
                1 for r in results if r["flagged_without_kinks"]),
            "lost_to_kinks": [r["bug"] for r in results
                              if r["flagged_without_kinks"] and
                              not r["flagged"]],
            "margin_quantiles": quant,
            "smallest": finite[:10], "disagreements": disagree,
            "all": results}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--margins", action="store_true")
    ap.add_argument("--loo", action="store_true")
    ap.add_argument("--precision", default="fp32", choices=PRECISIONS)
    ap.add_argument("--pools", type=int, default=1)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--bugs", type=int, default=-1)
    ap.add_argument("--bug", action="append", default=[])
    ap.add_argument("--every-vector", action="store_true")
    ap.add_argument("--no-probes", action="store_true",
                    help="leave the discontinuity probes out (the check "
                    "before them; the C's verdicts then differ)")
    ap.add_argument("--json", metavar="OUT")
    a = ap.parse_args()
    both = not a.margins and not a.loo
    cli = os.environ.get("PFLREF_CLI") or os.path.join(ROOT, "build", "rel",
                                                       "pflref")

    def log(msg):
        print("precision_margin: " + msg, file=sys.stderr, flush=True)

    lib = library()
    vecs = vectors(a.include)
    report, rc = {"vectors": len(vecs)}, 0
    t0 = time.process_time()
    if a.loo or both:
        loo = leave_one_out(lib, vecs, a.precision, a.pools, log,
                            not a.no_probes)
        report["loo"] = loo
        print("leave-one-out (%s, K = %d): %d trials; flagged at C = %s"
              % (a.precision, K, loo["trials"], ", ".join(
                  "%g: %d" % (C, loo["false_positives"][str(C)])
                  for C in CS)))
        print("  inconclusive at C = 16: %d (of which %d only at a kink); "
              "largest ratio at C = 16: %.3g (%s)"
              % (loo["inconclusive"]["16.0"], loo["kinks"]["16.0"],
                 loo["worst_ratio"]["16.0"], loo["worst_vector"]["16.0"]))
        rc |= loo["false_positives"]["16.0"] > 0
    t1 = time.process_time()
    if a.margins or both:
        m = margins(lib, vecs, a.precision, a.bugs, a.every_vector, cli, log,
                    not a.no_probes, a.bug)
        report["margins"] = m
        q = m["margin_quantiles"]
        print("margins (%s, C = 16): %d bugs, %d flagged (%d by a record "
              "missing or added only); C's verdicts disagree on %d"
              % (a.precision, m["bugs"], m["flagged"],
                 m["flagged_by_structure_only"], len(m["disagreements"])))
        print("  without the kink rule: %d flagged; lost to the kink rule: %s"
              % (m["flagged_without_kinks"],
                 " ".join(m["lost_to_kinks"]) or "none"))
        if q:
            print("  margin: min %.3g, 10%% %.3g, 25%% %.3g, median %.3g, "
                  "90%% %.3g, max %.3g" % (q["0.0"], q["0.1"], q["0.25"],
                                           q["0.5"], q["0.9"], q["1.0"]))
        for r in m["smallest"][:5]:
            print("  %-32s margin %.3g on %s %s" % (r["bug"], r["margin"],
                                                    r["vector"], r["record"]))
        if m["disagreements"]:
            print("  disagreements: " + " ".join(m["disagreements"]))
        rc |= bool(m["disagreements"])
    t2 = time.process_time()
    report["cpu_seconds"] = {"loo": t1 - t0, "margins": t2 - t1}
    print("cpu: leave-one-out %.0f s, margins %.0f s (this process; the "
          "NumPy worker and the checks are apart)" % (t1 - t0, t2 - t1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return rc


if __name__ == "__main__":
    sys.exit(main())
