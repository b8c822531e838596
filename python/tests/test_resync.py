# SPDX-License-Identifier: GPL-3.0-or-later
"""Re-synchronised checking (check --resync) of the algorithms whose round
depends on state beyond w, v_i and α_i (docs/validate.md §6, the resync
rule per algorithm).

- Every shipped vector, with the reference's own run as the candidate,
  passes under --resync: each algorithm's state is reloaded whole (a
  state loaded wrongly or left out would show as a mismatch), or the
  algorithm is refused with exit 2 naming it and the state it keeps outside
  the records.
- pFedHN and FedAvg-LoRA candidates with a deliberate bug in round 0 only
  (a wrong step size in round 0, every later round computed correctly from
  the candidate's own state): without --resync every later round differs
  too; with it only round 0's records do."""
import copy
import glob
import json
import os
import subprocess

import pytest

import pflref
from conftest import GOLDEN, ROOT

PFLREF = os.path.join(ROOT, "build", "rel", "pflref")

# the algorithms and switches refused, and the state each message names
REFUSED = {
    "pflego": "Adam's moments",
    "pfedhn": "momentum buffer",
    "fedala": "ALA state",
    "fedpac": "global centroids",
}


def vectors():
    for path in sorted(glob.glob(os.path.join(GOLDEN, "**", "*.json"),
                                 recursive=True)):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("format") == "pflref-golden/1":
            yield path, doc


def own_run(path, doc, spec=None):
    """The reference's result of the vector's spec (with its step
    trajectory) as a candidate document."""
    spec = copy.deepcopy(doc["spec"] if spec is None else spec)
    spec["output"] = dict(spec.get("output", {}), trajectory="step")
    res = pflref.run(spec, base_dir=os.path.dirname(path)).raw
    return {"format": "pflref-result/1", "id": doc["id"],
            "trajectory": res["trajectory"], "final": res["final"]}, res


def check_cli(path, cand, tmp_path, *flags):
    cpath = tmp_path / "cand.json"
    cpath.write_text(json.dumps(cand))
    return subprocess.run([PFLREF, "check", path, str(cpath), *flags],
                          capture_output=True, text=True)


ALL = list(vectors())


@pytest.mark.parametrize("path,doc", ALL,
                         ids=[d["id"] for _, d in ALL])
def test_the_reference_resynchronised_on_itself_passes(path, doc, tmp_path):
    cand, _ = own_run(path, doc)
    r = check_cli(path, cand, tmp_path, "--resync")
    name = doc["spec"]["algorithm"]["name"]
    opt_state = doc["spec"]["algorithm"].get("switches", {}).get(
        "opt.state", "reset")
    hyper = doc["spec"]["algorithm"].get("hyperparameters", {})
    if r.returncode == 4:
        # skipped before anything is compared, with a SKIP line naming
        # the state no record holds: a client optimizer's state that
        # outlives a client update (kept per client or carried from client
        # to client), an algorithm's own state (REFUSED), or APPLE's
        # clients' copies of the cores under limited downloads (apple.M)
        assert r.stdout.startswith("SKIP %s: " % doc["id"]), r.stdout
        assert "cannot be re-synchronised" in r.stdout, r.stdout
        assert "1 skipped (cannot be re-synchronised)" in r.stdout
        reasons = []
        if opt_state != "reset":
            reasons.append("opt.state = %s" % opt_state)
        if name in REFUSED:
            reasons.append(REFUSED[name])
        if name == "apple" and "apple.M" in hyper:
            reasons.append("apple.M")
        assert reasons, r.stdout
        assert any(x in r.stdout for x in reasons), r.stdout
        return
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PASS"), r.stdout


def shift_rounds(records, by):
    out = []
    for rec in records:
        rec = dict(rec)
        if rec.get("round") is not None and rec["round"] >= 0:
            rec["round"] += by
        out.append(rec)
    return out


def round0_bug_candidate(path, doc, bump, restart):
    """Round 0 run with bump(spec) applied (the bug), rounds 1 … T − 1 run
    correctly from the state round 0 left (restart(spec, result) sets the
    second run's initial state)."""
    spec0 = copy.deepcopy(doc["spec"])
    rounds = spec0["schedule"]["rounds"]
    spec0["schedule"]["rounds"] = rounds[:1]
    bump(spec0)
    cand0, res0 = own_run(path, doc, spec0)
    spec1 = copy.deepcopy(doc["spec"])
    spec1["schedule"]["rounds"] = rounds[1:]
    restart(spec1, res0)
    cand1, _ = own_run(path, doc, spec1)
    cand0["trajectory"] += shift_rounds(cand1["trajectory"], 1)
    cand0["final"] = cand1["final"]
    return cand0


def rounds_of(report):
    return {d.get("round") for d in report.raw["divergences"]}


def assert_round0_only(path, cand):
    v = pflref.Vector(path)
    plain = pflref.check(v, cand)
    resync = pflref.check(v, cand, resync=True)
    assert plain.raw["mismatches"] and resync.raw["mismatches"]
    assert plain.first == resync.first and plain.first["round"] == 0
    # the plain check also flags the later rounds (or the final state)
    assert rounds_of(plain) - {0}
    # re-synchronised, every later round agrees with the candidate
    assert rounds_of(resync) == {0}, resync.raw["divergences"]
    assert resync.raw["mismatches"] < plain.raw["mismatches"]


def test_pfedhn_round0_bug_only_round0_differs():
    path = os.path.join(GOLDEN, "pfedhn", "worked-linear-bias.json")
    with open(path) as f:
        doc = json.load(f)

    def bump(spec):   # the bug: α doubled in round 0
        spec["algorithm"]["hyperparameters"]["alpha"] *= 2

    def restart(spec, res0):   # φ and the embeddings after round 0
        spec["init"]["hypernetwork"] = res0["hypernetwork"]

    cand = round0_bug_candidate(path, doc, bump, restart)
    assert_round0_only(path, cand)
    # W_h is among round 0's differences: the hypernetwork was reloaded
    names = {d["name"] for d in
             pflref.check(path, cand, resync=True).raw["divergences"]}
    assert "W_h" in names


def test_lora_round0_bug_only_round0_differs():
    # every client trains again after round 0, so each final v_i comes
    # from the correct rounds
    path = os.path.join(GOLDEN, "lora", "worked-mlp-fedavg.json")
    with open(path) as f:
        doc = json.load(f)

    def bump(spec):   # the bug: η halved in round 0
        spec["algorithm"]["hyperparameters"]["eta"] /= 2

    def restart(spec, res0):   # the server's adapter after round 0
        q = [r["value"] for r in res0["trajectory"]
             if r["event"] == "server" and r["name"] == "q"]
        spec["init"]["lora"] = q[-1]

    cand = round0_bug_candidate(path, doc, bump, restart)
    assert_round0_only(path, cand)


def test_refused_algorithm_is_skipped_naming_it(tmp_path):
    path = os.path.join(GOLDEN, "pflego", "worked-adam-code.json")
    with open(path) as f:
        doc = json.load(f)
    cand, _ = own_run(path, doc)
    r = check_cli(path, cand, tmp_path, "--resync")
    # skipped, not an error: nothing compared is exit 4, never 2
    assert r.returncode == 4, r.stdout + r.stderr
    assert "SKIP pflego/worked/adam-code: pflego cannot be re-synchronised" \
        in r.stdout
    assert "pflego.server = adam" in r.stdout
    assert "PASS" not in r.stdout and "FAIL" not in r.stdout
    assert "nothing checked is a failure" in r.stderr
    # without --resync the same candidate passes
    assert check_cli(path, cand, tmp_path).returncode == 0
    with pytest.raises(pflref.InvalidInput) as e:
        pflref.check(path, cand, resync=True)
    assert "pflego" in str(e.value)


# A state record perturbed in round 0 of an otherwise correct candidate:
# re-synchronised, the reference takes it as the state round 1 starts from,
# so a later record differs too (were it not reloaded, only the perturbed
# record itself would).
STATE_RECORDS = [
    ("pfedhn/worked-linear-bias.json", "note", "W_h"),
    ("pfedhn/worked-linear-bias.json", "note", "embedding"),
    ("lora/worked-mlp-fedavg.json", "server", "q"),
    ("ifca/worked-partial-model.json", "server", "theta"),
    ("fedfomo/worked-hand.json", "note", "phi"),
    ("fedfomo/worked-draws.json", "note", "P"),
    ("apfl/worked-notes-6g-adaptive.json", "note", "alpha"),
    ("feddyn/worked-linear-paper.json", "note", "h"),
    ("feddyn/worked-linear-paper.json", "note", "grad_L"),
]


@pytest.mark.parametrize("rel,event,name", STATE_RECORDS,
                         ids=["%s:%s" % (r, n) for r, _, n in STATE_RECORDS])
def test_a_state_record_is_reloaded(rel, event, name):
    path = os.path.join(GOLDEN, rel)
    if not os.path.exists(path):
        pytest.skip("no vector %s" % rel)
    with open(path) as f:
        doc = json.load(f)
    cand, _ = own_run(path, doc)
    hits = [r for r in cand["trajectory"] if r["event"] == event
            and r["name"] == name and r.get("round") == 0]
    assert hits, (rel, event, name)
    last = max(hits, key=lambda r: r.get("step") or -1)
    last["value"][0] += 0.125
    resync = pflref.check(path, cand, resync=True)
    assert 0 in rounds_of(resync)
    assert rounds_of(resync) - {0, None}, resync.raw["divergences"]


def test_a_folder_run_skips_the_refused_and_checks_the_rest(tmp_path):
    """`check GOLDEN CANDIDATES --resync` over a refused vector and a
    resynchronisable one: the first is a SKIP line, the second is compared,
    the exit is 0 (not 2 for the whole run), the JSON report counts it."""
    cands = tmp_path / "cands"
    cands.mkdir()
    for rel in ("pflego/worked-adam-code.json", "fedavg/worked-samples.json"):
        path = os.path.join(GOLDEN, rel)
        with open(path) as f:
            doc = json.load(f)
        cand, _ = own_run(path, doc)
        (cands / (rel.replace("/", "__"))).write_text(json.dumps(cand))
    r = subprocess.run([PFLREF, "check", GOLDEN, str(cands), "--resync"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SKIP pflego/worked/adam-code: " in r.stdout
    assert "PASS fedavg/worked/notes-1g/samples" in r.stdout
    assert "1 compared: 1 passed" in r.stdout
    assert "1 skipped (cannot be re-synchronised)" in r.stdout
    r = subprocess.run([PFLREF, "check", GOLDEN, str(cands), "--resync",
                        "--json"], capture_output=True, text=True)
    rep = json.loads(r.stdout)
    assert rep["summary"]["skipped_resync"] == 1
    assert rep["summary"]["exit"] == 0
    [skip] = [e for e in rep["vectors"] if e["status"] == "skipped_resync"]
    assert skip["id"] == "pflego/worked/adam-code"
    assert "Adam's moments" in skip["message"]
