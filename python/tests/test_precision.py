# SPDX-License-Identifier: GPL-3.0-or-later
"""Candidate precision (docs/validate.md, "Candidate precision"): a float32
or bfloat16 candidate is held to its own rounding spread, measured by Monte
Carlo arithmetic on the reference, not to a fixed floor.

A fixed set of legitimate and buggy runs, kept short for `make check` (the
whole golden set and bug catalogue: tests/detection/precision.sh):

- the NumPy candidate in float32 (docs/examples/pfl_numpy_lowp.py) passes
  vectors of several algorithms and models under fp32, and fails them in
  fp64 (it does compute in float32);
- a bug run in float32 is flagged under fp32 on every vector float64 flags;
- a perturbation far above float32 rounding but below the old fixed floor
  (rtol 1e-4) is flagged;
- a chaotic vector (IFCA's cluster choice on a tie) is INCONCLUSIVE, never
  PASS; the seeds are in the report and replay the same bounds;
- a tie of zeros, which rounding cannot break, shows the three tie-break
  bugs and FedFomo's two strict equality bounds in float32;
- the bfloat16 emulation rounds to nearest even, and once per kernel;
- the former bfloat16 false positives (a convolution, FedALA's exact zero
  test) are not failures, nor the former float32 one (batch normalisation's
  backward pass on a batch of two, whose terms cancel);
- tests/detection/precision_margin.py, on 7 vectors: its bound agrees
  with the C's verdicts, no leave-one-out false positive at C = 16."""
import json
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, GOLDEN, ROOT

PFLREF = os.path.join(ROOT, "build", "rel", "pflref")
PY = "/usr/bin/python3"
LOWP = os.path.join(EXAMPLES, "pfl_numpy_lowp.py")
CANDIDATE = os.path.join(EXAMPLES, "pfl_numpy.py")

# several algorithms, models and a finite-difference Hessian product
VECTORS = ["fedavg/worked-samples.json", "ditto/worked-linear-official-uniform.json",
           "pfedme/worked-linear-official-beta.json",
           "perfedavg/worked-linear-minibatch-hf.json",
           "layers/fedavg-bn2d-cnn-ce.json"]


def vector(rel):
    path = os.path.join(GOLDEN, rel)
    if not os.path.exists(path):
        pytest.skip("no vector %s" % rel)
    return path


def run_candidate(path, out, dtype=None, bug=None):
    argv = [PY, LOWP, "--dtype", dtype] if dtype else [PY, CANDIDATE]
    argv += [path, "-o", str(out)]
    if bug:
        argv += ["--bug", bug]
    subprocess.run(argv, check=True, capture_output=True)
    return str(out)


def check(path, cand, *flags):
    return subprocess.run([PFLREF, "check", path, cand, *flags],
                          capture_output=True, text=True)


@pytest.mark.parametrize("rel", VECTORS)
def test_float32_candidate_passes_fp32_and_fails_fp64(rel, tmp_path):
    path = vector(rel)
    cand = run_candidate(path, tmp_path / "c.json", "float32")
    r = check(path, cand, "--candidate-precision", "fp32")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(("PASS", "INCONCLUSIVE")), r.stdout
    assert "FAIL" not in r.stdout
    # it does compute in float32: the float64 check sees it
    assert check(path, cand).returncode == 1


@pytest.mark.parametrize("rel,bug", [
    ("fedavg/worked-samples.json", "one-step-fewer"),
    ("fedavg/worked-samples.json", "uniform-weights"),
    ("ditto/worked-linear-official-uniform.json", "ditto-v-reset"),
])
def test_a_float32_bug_is_flagged_as_in_float64(rel, bug, tmp_path):
    path = vector(rel)
    with open(os.path.join(ROOT, "tests", "detection", "bugs.json")) as f:
        if bug not in {b["name"] for b in json.load(f)}:
            pytest.skip("no bug %s in the catalogue" % bug)
    c64 = run_candidate(path, tmp_path / "c64.json", bug=bug)
    c32 = run_candidate(path, tmp_path / "c32.json", "float32", bug=bug)
    if check(path, c64).returncode != 1:
        pytest.skip("%s does not touch %s" % (bug, rel))
    r = check(path, c32, "--candidate-precision", "fp32")
    assert r.returncode == 1, r.stdout
    assert r.stdout.startswith("FAIL"), r.stdout



@pytest.mark.parametrize("rel,bug", [
    ("cfl/worked-boundary-tie-zero-update.json", "cfl-argsort-reversed"),
    ("cfl/worked-boundary-tie-complete-linkage.json", "cfl-linkage-ties-last"),
    ("ifca/worked-zero-loss-tie.json", "ifca-ties-to-highest"),
    ("interp/worked-grid-blank-validation.json", "interp-ties-to-larger"),
    ("layers/fedfomo-bn1d-equal-zero-buffers.json", "fedfomo-equal-strict"),
    ("layers/fedfomo-bn1d-equal-zero-params.json",
     "fedfomo-equal-strict-params"),
])
def test_a_tie_of_zeros_shows_the_tie_break_in_float32(rel, bug, tmp_path):
    """A tie between values that are 0 in any arithmetic survives the Monte
    Carlo runs (a relative perturbation leaves 0 at 0), so the tie-break
    rule shows in fp32: the correct float32 candidate passes (not
    INCONCLUSIVE, as on the ties between nonzero values), the one with the
    catalogued tie-break bug fails (docs/validate.md, "Ties that rounding
    cannot break").  FedFomo's equality up to rounding is such a rule: its
    bound met at 0 against 0 by running statistics that stay 0, or, over
    parameters() only, by a weight whose gradient terms are all exact zeros
    (a gradient entry marked exact moves relative to itself, so it stays
    0)."""
    path = vector(rel)
    ok = run_candidate(path, tmp_path / "ok.json", "float32")
    r = check(path, ok, "--candidate-precision", "fp32")
    assert r.returncode == 0 and r.stdout.startswith("PASS"), r.stdout
    bad = run_candidate(path, tmp_path / "bad.json", "float32", bug=bug)
    r = check(path, bad, "--candidate-precision", "fp32")
    assert r.returncode == 1 and r.stdout.startswith("FAIL"), r.stdout

def test_a_small_error_below_the_old_floor_is_caught(tmp_path):
    """A relative error of 2e-5 on one entry (about 340 u in float32, below
    the former fixed floor rtol 1e-4) is flagged; the reference itself,
    rounded to float32, passes."""
    path = vector("fedavg/worked-samples.json")
    cand = run_candidate(path, tmp_path / "c.json", "float32")
    with open(cand) as f:
        doc = json.load(f)
    r = check(path, cand, "--candidate-precision", "fp32")
    assert r.returncode == 0, r.stdout
    rec = next(x for x in doc["trajectory"] if x["event"] == "server")
    rec["value"][0] *= 1 + 2e-5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = check(path, str(bad), "--candidate-precision", "fp32")
    assert r.returncode == 1, r.stdout
    assert "first divergence: w (server, round %d)" % rec["round"] in r.stdout


def splitmix64(state, n):
    """The first n outputs of Vigna's splitmix64 from state."""
    mask = 2**64 - 1
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


def test_chaotic_vector_is_inconclusive_with_its_seeds(tmp_path):
    path = vector("ifca/worked-partial-model.json")
    cand = run_candidate(path, tmp_path / "c.json", "float32")
    r = check(path, cand, "--candidate-precision", "fp32", "--json")
    rep = json.loads(r.stdout)
    [entry] = rep["vectors"]
    assert entry["status"] == "inconclusive"
    assert entry["mca"]["chaotic"] > 0
    assert entry["mca"]["first_chaotic"]["name"]
    assert len(entry["mca"]["seeds"]) == 8
    # the seeds are the stream's draws from --mca-seed 0 (splitmix64,
    # docs/validate.md "Random seeds"), each written exactly as decimal text:
    # half of all 64-bit seeds are above the largest JSON integer
    assert entry["mca"]["seeds"] == [str(s) for s in splitmix64(0, 8)]
    assert any(int(s) > 2**63 - 1 for s in entry["mca"]["seeds"])
    assert rep["summary"]["inconclusive"] == 1 and rep["summary"]["passed"] == 0
    # the same seed gives the same seeds and bounds
    again = json.loads(check(path, cand, "--candidate-precision", "fp32",
                             "--json").stdout)["vectors"][0]["mca"]
    assert again == entry["mca"]
    other = json.loads(check(path, cand, "--candidate-precision", "fp32",
                             "--mca-seed", "5", "--json").stdout)
    assert other["vectors"][0]["mca"]["seeds"] != entry["mca"]["seeds"]


def test_python_check_takes_the_precisions():
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pflref
    path = vector("fedavg/worked-samples.json")
    spec = json.load(open(path))["spec"]
    spec["output"] = dict(spec.get("output", {}), trajectory="step")
    res = pflref.run(spec, base_dir=os.path.dirname(path)).raw
    cand = {"format": "pflref-result/1", "trajectory": res["trajectory"],
            "final": res["final"]}
    for prec in ("fp32", "bf16", "tf32"):
        rep = pflref.check(path, cand, precision=prec)
        assert rep.passed, prec
        assert rep.raw["mca"]["runs"] == 8
    assert "mca" not in pflref.check(path, cand).raw


def test_bfloat16_rounding_is_to_nearest_even():
    sys.path.insert(0, EXAMPLES)
    import numpy as np
    import pfl_numpy_lowp as lowp
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -7 + 2 ** -9,
                  -3.0, np.inf], dtype=np.float32)
    got = lowp.round_bf16(x)
    want = [1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7 + 0.0, -3.0, np.inf]
    want[3] = 1 + 2 ** -7   # below the halfway point: down
    assert list(got) == want


def diagnose(path, cand):
    return subprocess.run([PFLREF, "diagnose", path, cand],
                          capture_output=True, text=True)


def test_diagnose_names_a_float32_run_a_precision_cast(tmp_path):
    path = vector("fedavg/worked-samples.json")
    cand = run_candidate(path, tmp_path / "c.json", "float32")
    r = diagnose(path, cand)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the global model rounded to float32 each round" in r.stdout
    assert "no known variant" not in r.stdout


def test_diagnose_names_personal_models_kept_in_bfloat16(tmp_path):
    """Ditto's personal models never reach w: rounding only the v records
    to bfloat16 is the personal model kept in bfloat16."""
    import numpy as np
    sys.path.insert(0, EXAMPLES)
    import pfl_numpy_lowp as lowp
    path = vector("ditto/worked-linear-official-uniform.json")
    run_candidate(path, tmp_path / "c.json")
    doc = json.load(open(tmp_path / "c.json"))
    for rec in doc["trajectory"]:
        if rec["name"] == "v":
            rec["value"] = [float(x) for x in lowp.round_bf16(
                np.array(rec["value"], dtype=np.float32))]
    doc["final"]["v"] = [[float(x) for x in lowp.round_bf16(
        np.array(v, dtype=np.float32))] for v in doc["final"]["v"]]
    (tmp_path / "v16.json").write_text(json.dumps(doc))
    r = diagnose(path, str(tmp_path / "v16.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the personal models (v) kept in bfloat16" in r.stdout, r.stdout


def test_diagnose_does_not_call_a_bug_a_precision_cast(tmp_path):
    path = vector("fedavg/worked-samples.json")
    cand = run_candidate(path, tmp_path / "c.json", "float32",
                         bug="uniform-weights")
    r = diagnose(path, cand)
    assert "precision cast" not in r.stdout.splitlines()[0], r.stdout


def test_python_report_of_a_chaotic_vector_is_inconclusive(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pflref
    path = vector("ifca/worked-partial-model.json")
    cand = run_candidate(path, tmp_path / "c.json", "float32")
    rep = pflref.check(path, cand, precision="fp32")
    assert not rep.passed
    assert rep.raw["mca"]["chaotic"] > 0 and rep.raw["mismatches"] == 0
    assert str(rep).startswith("INCONCLUSIVE ifca/worked/partial-model")


def test_bfloat16_kernels_round_their_outputs_once():
    """The bfloat16 emulation rounds a kernel's output once (float32
    inside, as torch's addmm adds its bias in the accumulator); the same
    operations outside a kernel round twice, and here that differs:
    1 + 3·2⁻⁹ rounds up to 1 + 2⁻⁷, minus 2⁻⁹ stays above the halfway
    point, while 1 + 3·2⁻⁹ − 2⁻⁹ = 1 + 2⁻⁸ is a tie that goes to 1."""
    sys.path.insert(0, EXAMPLES)
    import numpy as np
    import pfl_numpy_lowp as lowp

    def bf16(a):
        return lowp.round_bf16(np.array(a, dtype=np.float32)).view(lowp.BF16)
    x, W, b = bf16([[1.0, 3 * 2 ** -9]]), bf16([[1.0], [1.0]]), bf16([-2 ** -9])
    per_op = (x @ W) + b
    fused = lowp.kernel(lambda x, W, b: (x @ W) + b)(x, W, b)
    assert float(per_op[0, 0]) == 1 + 2 ** -7
    assert float(fused[0, 0]) == 1.0
    # and a kernel's arrays written in place are rounded when it returns
    g = bf16([0.0, 0.0])

    def write(g):
        g[0] = np.float32(1 + 2 ** -9)
    lowp.kernel(write)(g)
    assert list(g) == [1.0, 0.0]
    # a mean is one kernel: (1 + 1 + (1 + 5·2⁻⁷))/3 = 1 + 5·2⁻⁷/3 rounds
    # to 1 + 2⁻⁶; the rounded sum 3 + 5·2⁻⁷ → 3 + 2⁻⁶ over 3 gives 1 + 2⁻⁷
    assert float(bf16([1.0, 1.0, 1 + 5 * 2 ** -7]).mean()) == 1 + 2 ** -6


@pytest.mark.parametrize("rel", ["layers/ditto-cnn-two-rounds.json",
                                 "fedala/worked-official.json",
                                 "fedala/worked-sum-first.json"])
def test_former_bfloat16_false_positives_are_not_failures(rel, tmp_path):
    """The convolution vector failed under bf16 while the emulation rounded
    inside a layer; FedALA's Σ(Θ − Θ_i) == 0 test (ALA.py:82) is one that
    bfloat16 rounding can make exactly 0, which random rounding never
    did: now the perturbed runs take that branch too and the vector is
    INCONCLUSIVE, never a false mismatch (and never a silent pass)."""
    path = vector(rel)
    cand = run_candidate(path, tmp_path / "c.json", "bfloat16")
    r = check(path, cand, "--candidate-precision", "bf16")
    assert r.returncode == 0, r.stdout
    assert "FAIL" not in r.stdout, r.stdout
    if rel.startswith("fedala"):
        assert r.stdout.startswith("INCONCLUSIVE"), r.stdout
        # in float32 the test is decided: the vector passes
        c32 = run_candidate(path, tmp_path / "c32.json", "float32")
        r = check(path, c32, "--candidate-precision", "fp32")
        assert r.returncode == 0 and r.stdout.startswith("PASS"), r.stdout


BN_TWO = "optim/moon-adamw-shared-client-trainings-bn-biased.json"


@pytest.mark.parametrize("bug", [None, "moon-con-sum", "moon-prev-global"])
def test_batchnorm_backward_on_a_batch_of_two_is_not_a_false_positive(
        bug, tmp_path):
    """Batch normalisation's training backward pass, δ = (γ/(M s)) (M G −
    Σ G − x̂ Σ G x̂), cancels: on a batch of two it is (γ/s)(1 − x̂²)(G₁ −
    G₂)/2, and on this vector's first batch of party 1 (fc1's third
    channel, s² = 0.00226 ≫ ε) 1 − x̂² = 0.0044, so a float32 kernel's δ is
    off by ~u·(the terms), ~200 times u·|δ|; AdamW's ε = 0.002 then hands
    the error of fc1's small gradient to w_local whole.  Perturbing the
    kernel's outputs or inputs relative to themselves keeps the
    cancellation exact, so every perturbed run missed that error, and the
    correct float32 candidates (NumPy and PyTorch alike) FAILED at round
    0, party 1, step 1, entry 5 (w_local's fc1[2, 1]) by 6e-5 relative.
    The perturbed runs now move δ by u·(the terms' magnitude)
    (pflref_mca_perturb_terms): the candidate passes, a float64 check
    still sees float32, and MOON's bugs are flagged in float32 as
    before."""
    path = vector(BN_TWO)
    cand = run_candidate(path, tmp_path / "c.json", "float32", bug=bug)
    r = check(path, cand, "--candidate-precision", "fp32")
    if bug is None:
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.startswith("PASS"), r.stdout
        assert check(path, cand).returncode == 1
    else:
        assert r.returncode == 1 and r.stdout.startswith("FAIL"), r.stdout


MARGIN = os.path.join(ROOT, "tests", "detection", "precision_margin.py")


def test_margin_measurement_short(tmp_path):
    """tests/detection/precision_margin.py on a few vectors: its bound
    agrees with the C's verdicts (exit 0), the leave-one-out runs give no
    false positive at C = 16, and every bug flagged clears the bound."""
    if not os.path.exists(os.path.join(ROOT, "build", "rel",
                                       "libpflref.so")):
        pytest.skip("no build/rel/libpflref.so")
    out = tmp_path / "m.json"
    r = subprocess.run([PY, MARGIN, "--include", "fedavg/worked/notes-1g/*",
                        "--include", "ditto/worked/linear-official-*",
                        "--bugs", "1", "--json", str(out)],
                       capture_output=True, text=True,
                       env=dict(os.environ, PFLREF_CLI=PFLREF))
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    assert rep["vectors"] >= 6
    loo = rep["loo"]
    assert loo["trials"] >= 9 * rep["vectors"] - 9
    assert loo["false_positives"]["16.0"] == 0
    # the curve falls with C
    fp = [loo["false_positives"][str(c)] for c in (1.0, 2.0, 4.0, 8.0, 16.0)]
    assert fp == sorted(fp, reverse=True)
    m = rep["margins"]
    assert m["disagreements"] == []
    assert m["flagged"] > 0
    assert all(x["margin"] is None or x["margin"] > 1.0
               for x in m["all"] if x["flagged"])


# ---- kinks and jumps (docs/validate.md, "Kinks and jumps") -------------------

def perturbed_run(path, seed, precision=1):
    """The reference's run of the vector at path under random rounding at
    a candidate's unit roundoff (precision: 1 PFLREF_PRECISION_FP32, 2
    BF16) with `seed`: what a check's perturbed run with that seed
    computes, as a result document."""
    import ctypes
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from pflref import _lib
    lib = _lib.library()
    lib.pflref_mca_begin.argtypes = [ctypes.c_int, ctypes.c_uint64]
    lib.pflref_mca_begin.restype = None
    lib.pflref_mca_end.argtypes = []
    lib.pflref_mca_end.restype = None
    with open(path) as f:
        text = f.read()
    lib.pflref_mca_begin(precision, seed)
    try:
        return json.loads(_lib.run_text(text, os.path.dirname(path)))
    finally:
        lib.pflref_mca_end()


def perturbed_reference(path, seed, out):
    """A correct float32 run by construction: the reference itself under
    random rounding at float32's unit roundoff with `seed` (what a check's
    perturbed run with that seed computes), written as a candidate."""
    doc = perturbed_run(path, seed)
    out.write_text(json.dumps(doc))
    return doc


def kinked(path, tmp_path, reason, mca_seed, seeds=range(1, 13)):
    """The first perturbed run of `seeds` that the check with `mca_seed`
    finds at a kink: (candidate, its report entry, its text report)."""
    for seed in seeds:
        out = tmp_path / ("p%d.json" % seed)
        doc = perturbed_reference(path, seed, out)
        flags = ["--candidate-precision", "fp32", "--mca-seed", str(mca_seed)]
        entry = json.loads(check(path, str(out), *flags, "--json").stdout)[
            "vectors"][0]
        if entry["mca"]["kinks"] and entry["mca"]["kink_reason"] == reason:
            return doc, entry, check(path, str(out), *flags)
    pytest.fail("no perturbed run of seeds %s at a kink (%s)"
                % (list(seeds), reason))


def needs_library():
    if not os.path.exists(os.path.join(ROOT, "build", "rel",
                                       "libpflref.so")):
        pytest.skip("no build/rel/libpflref.so")


def test_a_jump_at_a_kink_is_inconclusive_and_a_bug_of_its_size_fails(
        tmp_path):
    """moon/layers/relu-kink puts a ReLU at its kink.  A correct float32
    run whose rounding crosses it where none of the check's 8 runs does
    (--mca-seed 1) is off by the jump, beyond the bound: the probes at
    4u jump there too, so the entry is INCONCLUSIVE with the reason
    "jump", not a mismatch.  The same deviation planted in a record
    before the kink (round 0's server model) fails."""
    needs_library()
    path = vector("moon/layers-relu-kink.json")
    doc, entry, text = kinked(path, tmp_path, "jump", 1)
    assert text.returncode == 0, text.stdout
    assert entry["status"] == "inconclusive"
    assert entry["mismatches"] == 0
    k = entry["mca"]["first_kink"]
    jump = k["got"] - k["expected"]
    assert abs(jump) > 1e-3, k       # a jump, not rounding (u = 6e-8)
    assert "kink: %d quantities at a discontinuity" % entry["mca"]["kinks"] \
        in text.stdout, text.stdout
    assert "within the jump of the probe runs" in text.stdout
    # the same deviation elsewhere: a bug
    rec = next(r for r in doc["trajectory"]
               if r["event"] == "server" and r["round"] == 0 and
               r["name"] == "w")
    rec["value"][0] += jump
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = check(path, str(bad), "--candidate-precision", "fp32",
              "--mca-seed", "1")
    assert r.returncode == 1, r.stdout
    assert r.stdout.startswith("FAIL"), r.stdout
    assert "first divergence: w (server, round 0)[0]" in r.stdout, r.stdout


def test_a_record_a_perturbed_run_lacks_is_inconclusive(tmp_path):
    """cfl/worked/boundary-tie-order splits on an exact tie (α₀₁ = α₁₂):
    rounding breaks it either way, and a correct float32 run that splits
    the other way lacks records the expectation has.  A perturbed run of
    the check lacks them too: INCONCLUSIVE with the reason "record", not
    a missing quantity.  A record no run lacks (a step before the split),
    deleted, fails."""
    needs_library()
    path = vector("cfl/worked-boundary-tie-order.json")
    doc, entry, text = kinked(path, tmp_path, "record", 0)
    assert text.returncode == 0, text.stdout
    assert entry["status"] == "inconclusive"
    assert entry["mismatches"] == 0 and entry["not_recorded"] == 0
    assert entry["mca"]["first_kink"]["missing"] is True
    assert "a perturbed run does not produce this record either" \
        in text.stdout, text.stdout
    # the Python report says the same: never a pass, no mismatch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pflref
    rep = pflref.check(path, doc, precision="fp32")
    assert not rep.passed
    assert rep.raw["mismatches"] == 0 and rep.raw["mca"]["kinks"] > 0
    assert rep.raw["mca"]["kink_reason"] == "record"
    assert str(rep).startswith("INCONCLUSIVE cfl/worked/boundary-tie-order")
    # round 0's first local step, before the split: every run has it
    doc["trajectory"] = [r for r in doc["trajectory"]
                         if not (r["event"] == "step" and
                                 r["round"] == 0 and r["client"] == 0)]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = check(path, str(bad), "--candidate-precision", "fp32")
    assert r.returncode == 1, r.stdout
    assert "not recorded" in r.stdout, r.stdout


def test_a_skipped_ala_a_probe_follows_is_inconclusive(tmp_path):
    """fedala/worked/official in bfloat16: FedALA's exact test
    Σ(Θ − Θ_i) == 0 (fedala.skip = sum_first, ALA.py:82) counts a perturbed
    sum within u·Σ|terms| of 0 as 0 (ref/core/mca_decide.h).  The
    perturbed run of seed root 2⁶³ + 58000 (the leave-one-out pool of
    docs/validate.md, "Leave-one-out in bfloat16", run 0) skips client 3's
    ALA in round 1 (|Σ|/Σ|·| = 0.0036 ≤ u = 0.0039; the unperturbed run
    0.0056, the pool's 8 other runs 0.0047 to 0.0068), so its start phase
    runs in round 2 instead (6 passes, W_i clipped to 0).  A check whose 8
    runs are exactly those 8 others (the --mca-seed after that seed in the
    stream) held it to their bound: its probes, at 4u, took the zero branch
    in a window of 4u too, so all 16 skipped client 3's ALA there and none
    followed this run into round 2: W_i (note, round 2, client 3)[1] was a
    false mismatch.  With the window at the candidate's u the probes take
    the branch either way, and the run is INCONCLUSIVE (a kink), not a
    FAIL."""
    needs_library()
    path = vector("fedala/worked-official.json")
    mask, gamma = (1 << 64) - 1, 0x9E3779B97F4A7C15
    # splitmix64: the stream's first seed, and the state after it
    root = (1 << 63) + 58000
    z = (root + gamma) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    seed = z ^ (z >> 31)
    doc = perturbed_run(path, seed, 2)         # PFLREF_PRECISION_BF16
    epochs = {(r["round"], r["client"]): r["value"][0]
              for r in doc["trajectory"] if r["name"] == "ala_epochs"}
    assert epochs[(1, 3)] == 0 and epochs[(2, 3)] == 6, epochs
    cand = tmp_path / "c.json"
    cand.write_text(json.dumps(doc))
    flags = ["--candidate-precision", "bf16",
             "--mca-seed", str((root + gamma) & mask)]
    r = check(path, str(cand), *flags)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("INCONCLUSIVE"), r.stdout
    entry = json.loads(check(path, str(cand), *flags, "--json").stdout)[
        "vectors"][0]
    assert entry["mismatches"] == 0 and entry["mca"]["kinks"] > 0, entry
    # a bug of that size where no run jumps still fails: round 0's server
    # model, before any ALA
    rec = next(r for r in doc["trajectory"]
               if r["event"] == "server" and r["round"] == 0)
    rec["value"][0] += 0.2
    cand.write_text(json.dumps(doc))
    r = check(path, str(cand), *flags)
    assert r.returncode == 1 and r.stdout.startswith("FAIL"), r.stdout


def test_a_jump_just_under_its_bound_in_a_record_that_jumps_is_inconclusive(
        tmp_path):
    """layers/ditto/bn1d-mlp-pfllib-keep in bfloat16: client 0's first
    batch in round 0 puts bn1's unit 2 at its ReLU kink for sample 2 (the
    pre-activation γ₂ x̂ + β₂ = −0.0050 unperturbed, from −0.644 + 0.639).
    The perturbed run of seed root 2⁶³ + 219000 (the leave-one-out pool of
    docs/validate.md, "Leave-one-out in bfloat16", run 3) crosses it
    (+0.0035) in the pass of w_local, so fc1's row 2 (entries 6 to 8)
    jumps and carries on into round 1.  In client 2's w_local
    (client_begin, round 1) the probes jump beyond the bound on entry 7
    only; on entry 8 the jump is about the bound, and the probes that
    crossed land under it while this run lands just over.  A check whose
    probes are the pool's next 16 (--mca-seed: the stream's state after
    run 3's seed) flagged entry 8 a mismatch when the band was per entry:
    the band is the record's now, and the run is INCONCLUSIVE.  A bug of
    that size in a record no run jumps on (client 0's w_local at the start
    of round 0: w⁰) still fails."""
    needs_library()
    path = vector("layers/ditto-bn1d-mlp-pfllib-keep.json")
    mask, gamma = (1 << 64) - 1, 0x9E3779B97F4A7C15

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    root = (1 << 63) + 219000
    seed = mix((root + 4 * gamma) & mask)      # the stream's 4th draw
    doc = perturbed_run(path, seed, 2)         # PFLREF_PRECISION_BF16
    cand = tmp_path / "c.json"
    cand.write_text(json.dumps(doc))
    flags = ["--candidate-precision", "bf16",
             "--mca-seed", str((root + 4 * gamma) & mask)]
    r = check(path, str(cand), *flags)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("INCONCLUSIVE"), r.stdout
    entry = json.loads(check(path, str(cand), *flags, "--json").stdout)[
        "vectors"][0]
    assert entry["mismatches"] == 0 and entry["mca"]["kinks"] > 0, entry
    assert entry["mca"]["kink_reason"] == "jump", entry
    # w_local of client 2 at the start of round 1: off by the jump on
    # fc1's row 2 (0.0546 on entry 7, 0.038 on entry 8), not elsewhere
    rec = next(x for x in doc["trajectory"]
               if x["event"] == "client_begin" and x["round"] == 1 and
               x["client"] == 2 and x["name"] == "w_local")
    exp = next(x for x in json.loads(open(path).read())["expected"][
        "trajectory"] if x["event"] == "client_begin" and x["round"] == 1
        and x["client"] == 2 and x["name"] == "w_local")
    off = [abs(a - b) for a, b in zip(rec["value"], exp["value"])]
    assert off[8] > 0.035 and off[7] > 0.05, off
    assert max(off[:6] + off[9:]) < 0.01, off
    # the same size where nothing jumps: a bug
    rec = next(x for x in doc["trajectory"]
               if x["event"] == "client_begin" and x["round"] == 0 and
               x["client"] == 0 and x["name"] == "w_local")
    rec["value"][8] += 0.04
    cand.write_text(json.dumps(doc))
    r = check(path, str(cand), *flags)
    assert r.returncode == 1 and r.stdout.startswith("FAIL"), r.stdout
