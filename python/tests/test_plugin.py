# SPDX-License-Identifier: GPL-3.0-or-later
"""The pytest plugin, run as a user would run it: a subprocess pytest on a
small test file with a FedAvg candidate written against the package, once
correct and once with uniform weights."""
import os
import re
import subprocess

import pytest

import pflref
from conftest import PYTHON

CANDIDATE = '''
import numpy as np
import pflref

BUGGY = {buggy}


def fedavg(vector):
    """FedAvg (McMahan et al., Alg. 1) on the linear model, from the
    vector's Spec, recording into a Recorder."""
    spec, rec = vector.spec, pflref.Recorder(vector)
    m, eta = spec.model, spec.hyper["eta"]
    s = 2.0 if m["loss"] == "squared" else 1.0
    X = [c["X"] for c in spec.clients]
    y = [c["y"] for c in spec.clients]
    n = [c["n"] for c in spec.clients]

    def grad(k, w, b):
        Xb = X[k][b]
        if m["bias"]:
            Xb = np.hstack([Xb, np.ones((len(b), 1))])
        return s / len(b) * Xb.T @ (Xb @ w - y[k][b])

    w = spec.init.copy()
    for t, rnd in enumerate(spec.schedule):
        rec.round_begin(t, w)
        S = rnd["clients"]
        m_t = sum(n[k] for k in S)
        w_next = np.zeros_like(w)
        for k, batches in zip(S, rnd["batches"]):
            w_k = w.copy()
            rec.step(t, k, 0, "w_local", w_k)
            for step, b in enumerate(batches, 1):
                w_k = w_k - eta * grad(k, w_k, b)
                rec.step(t, k, step, "w_local", w_k)
            rec.client_end(t, k, "w_local", w_k)
            w_next += (1 / len(S) if BUGGY else n[k] / m_t) * w_k
        w = w_next
        rec.server(t, w)
    rec.final("w", w)
    return rec


def test_candidate(pflref_vector, pflref_check):
    {body}
'''
SAMPLES_ID = "fedavg/worked/notes-1g/samples"
# the embedded candidate takes constant step sizes with plain SGD on the
# linear model: the learning-rate decay vectors (*/lr-*), the client
# optimizers' (optim/*) and the layer lists' (layers/*) are left out with
# the weightings it does not implement
EXCLUDE = ["*/uniform", "*keep-old", "*/lr-*", "optim/*", "layers/*"]
SELECT = ["--pflref-algorithm", "fedavg"] + [
    a for pattern in EXCLUDE for a in ("--pflref-exclude", pattern)]


def pytest_run(tmp_path, *args, buggy=False,
               body="pflref_check(fedavg(pflref_vector))"):
    test = tmp_path / "test_user.py"
    test.write_text(CANDIDATE.format(buggy=buggy, body=body))
    env = dict(os.environ, PYTHONPATH=PYTHON,
               PFLREF_REPLAY_DIR=str(tmp_path / "replay"))
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        ["/usr/bin/python3", "-m", "pytest", "-p", "pflref.pytest_plugin",
         "-p", "no:cacheprovider", "-q", "-rf", str(test)] + list(args),
        cwd=tmp_path, env=env, capture_output=True, text=True)


def test_test_ids_are_the_selected_vector_ids(tmp_path):
    out = pytest_run(tmp_path, "--collect-only", *SELECT)
    assert out.returncode == 0, out.stdout + out.stderr
    ids = re.findall(r"test_candidate\[(.*)\]", out.stdout)
    want = [v.id for v in pflref.vectors(algorithm="fedavg",
                                         exclude=EXCLUDE)]
    assert ids == want and SAMPLES_ID in ids


def test_a_correct_candidate_passes_on_every_selected_vector(tmp_path):
    out = pytest_run(tmp_path, *SELECT)
    assert out.returncode == 0, out.stdout + out.stderr
    n = len(list(pflref.vectors(algorithm="fedavg",
                                exclude=EXCLUDE)))
    assert n >= 5
    assert re.search(r"\b%d passed\b" % n, out.stdout), out.stdout


def test_a_buggy_candidate_fails_with_the_first_divergence(tmp_path):
    out = pytest_run(tmp_path, *SELECT, buggy=True)
    text = out.stdout
    assert out.returncode == 1, text + out.stderr
    assert "FAILED test_user.py::test_candidate[%s]" % SAMPLES_ID in text
    assert "FAIL %s: 12 of 22 quantities differ" % SAMPLES_ID in text
    assert "first divergence: w (server, round 0)[0]: expected 3.7, got " \
        "3.375" in text
    assert re.search(r"  w +4 of 5 differ; .*correct digits", text)
    assert "  replay: " in text and " check " in text
    # the human report, not a traceback or a dump of every value
    assert "Traceback" not in text and "def test_candidate" not in text
    assert "rec.server" not in text
    floats = [len(re.findall(r"\d\.\d{3,}", line))
              for line in text.splitlines()]
    assert max(floats) <= 4, text


def test_the_options_are_passed_to_check(tmp_path):
    out = pytest_run(tmp_path, "--pflref-include", SAMPLES_ID,
                     "--pflref-resync", buggy=True)
    assert out.returncode == 1
    assert "  also: w (server, round 1)" in out.stdout
    assert "--resync" in out.stdout


def test_the_failure_says_how_to_diagnose(tmp_path):
    out = pytest_run(tmp_path, "--pflref-include", SAMPLES_ID, buggy=True)
    assert out.returncode == 1
    assert "rerun with --pflref-diagnose" in out.stdout
    assert "DIAGNOSIS" not in out.stdout


def test_pflref_diagnose_puts_the_diagnosis_in_the_failure(tmp_path):
    """--pflref-diagnose: the failure message names the variant the buggy
    candidate computes (uniform weights: fedavg.weights = uniform) and
    the code it comes from."""
    out = pytest_run(tmp_path, "--pflref-include", SAMPLES_ID,
                     "--pflref-diagnose", buggy=True)
    text = out.stdout
    assert out.returncode == 1, text + out.stderr
    assert "FAIL %s: 12 of 22 quantities differ" % SAMPLES_ID in text
    assert "DIAGNOSIS %s: matches fedavg preset paper except fedavg.weights "\
        "= uniform (instead of samples)" % SAMPLES_ID in text, text
    assert "  1. preset paper, fedavg.weights = uniform (instead of samples) "\
        "(switch): matches all 22 records" in text, text
    assert "Traceback" not in text


def test_no_selected_vector_fails_instead_of_passing(tmp_path):
    out = pytest_run(tmp_path, "--pflref-include", "no/such/*")
    assert out.returncode == 1, out.stdout
    assert "no golden vector selected (--pflref-include ['no/such/*'])" \
        in out.stdout


def test_a_malformed_candidate_fails_naming_the_field(tmp_path):
    out = pytest_run(tmp_path, "--pflref-include", SAMPLES_ID,
                     body="r = fedavg(pflref_vector).result(); "
                          "r['format'] = 'x'; pflref_check(r)")
    assert out.returncode == 1
    assert "MALFORMED %s: candidate:format" % SAMPLES_ID in out.stdout


def test_a_vectors_folder_option(tmp_path):
    out = pytest_run(tmp_path, "--pflref-vectors",
                     os.path.join(os.path.dirname(PYTHON), "golden", "ditto"),
                     "--collect-only")
    ids = re.findall(r"test_candidate\[(.*)\]", out.stdout)
    assert ids and all(i.startswith("ditto/") for i in ids)


def test_a_vectors_folder_that_does_not_exist_is_a_usage_error(tmp_path):
    out = pytest_run(tmp_path, "--pflref-vectors", str(tmp_path / "nowhere"))
    assert out.returncode == 4                    # pytest's usage error
    assert "--pflref-vectors: %s does not exist" % (tmp_path / "nowhere") \
        in out.stderr


NUMPY_CANDIDATE = '''
import sys

import numpy as np
import pflref
import pytest

sys.path.insert(0, {examples!r})
import pfl_numpy   # docs/examples/pfl_numpy.py and its extensions


def candidate(vector):
    spec, rec = vector.raw["spec"], pflref.Recorder(vector)
    try:
        return run(vector, spec, rec)
    except pfl_numpy.Unsupported as e:   # a gap of the candidate: skipped
        pytest.skip("%s: %s" % (vector.id, e))


def run(vector, spec, rec):
    clients = pfl_numpy.load_clients(spec, vector.folder)

    def log(event, phase, name, value, round=None, client=None, step=None):
        rec.record(event, name, value, round=round, client=client,
                   step=step, phase=phase)
    final = pfl_numpy.ALGORITHMS[spec["algorithm"]["name"]](
        spec, clients, vector.spec.init.copy(), log)
    for name in ("w", "v", "alpha"):
        if name in final:
            rec.final(name, np.asarray(final[name]))
    return rec


def test_numpy(pflref_vector, pflref_check):
    pflref_check(candidate(pflref_vector))
'''


# The vectors the NumPy candidate refuses (it raises its Unsupported, the
# embedded test skips them), each with the reason: a new gap, or a gap
# closed, changes this list and fails the test until it is updated.  Empty
# since 30 November: the NumPy candidate runs every vector.
NUMPY_UNSUPPORTED = {}


def test_the_numpy_candidates_pass_every_vector_through_the_plugin(tmp_path):
    from conftest import EXAMPLES
    test = tmp_path / "test_numpy_user.py"
    test.write_text(NUMPY_CANDIDATE.format(examples=EXAMPLES))
    env = dict(os.environ, PYTHONPATH=PYTHON, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    out = subprocess.run(
        ["/usr/bin/python3", "-m", "pytest", "-p", "pflref.pytest_plugin",
         "-p", "no:cacheprovider", "-q", "-rs", str(test)],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    n = len(list(pflref.vectors()))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    # -rs: "SKIPPED [1] test_numpy_user.py:LINE: <vector id>: <reason>"
    skipped = sorted(re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (\S+): ",
                                out.stdout, re.M))
    assert skipped == sorted(NUMPY_UNSUPPORTED), out.stdout[-3000:]
    k = len(NUMPY_UNSUPPORTED)
    assert re.search(r"\b%d passed\b" % (n - k), out.stdout), \
        out.stdout[-500:]
    if k:
        assert re.search(r"\b%d skipped\b" % k, out.stdout), out.stdout[-500:]
