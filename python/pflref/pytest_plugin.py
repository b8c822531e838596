# SPDX-License-Identifier: GPL-3.0-or-later
"""pytest plugin: a candidate implementation checked on every selected
golden vector, one test per vector (docs/python.md, "pytest plugin").

    pytest -p pflref.pytest_plugin [--pflref-vectors DIR]
           [--pflref-algorithm NAME]... [--pflref-include GLOB]...
           [--pflref-exclude GLOB]... [--pflref-precision fp64|fp32|bf16|tf32]
           [--pflref-resync] [--pflref-partial [--pflref-partial-min N]]
           [--pflref-diagnose]

A test that takes the fixture `pflref_vector` runs once per selected vector
(its test id is the vector's id); `pflref_check(result)` checks the
candidate's result and, when it fails, fails the test with the human
report: the first divergence, the correct digits per quantity and the
replay command, not a traceback or a wall of floats.

    def test_candidate(pflref_vector, pflref_check):
        pflref_check(my_candidate(pflref_vector))

With --pflref-diagnose a failing check also searches the known variants
of the vector's algorithm (pflref.diagnose: its presets, each switch value,
probes of its hyperparameters) and puts the verdict in the failure message:
which preset or change the candidate computes instead, and the code that
variant comes from.  Without it the message says how to ask.

When the options select no vector at all, the one test that stands for
them fails (a run that checked nothing is never green).
"""
import os

import pytest

import pflref


def pytest_addoption(parser):
    group = parser.getgroup("pflref", "pflref golden vectors")
    group.addoption("--pflref-vectors", metavar="DIR", default=None,
                    help="folder (or file) of golden vectors (default: the "
                         "checkout's golden/, else PREFIX/share/pflref/golden)")
    group.addoption("--pflref-algorithm", metavar="NAME", action="append",
                    default=[], help="only vectors of this algorithm "
                                     "(repeatable)")
    group.addoption("--pflref-include", metavar="GLOB", action="append",
                    default=[], help="only vectors whose id or path matches, "
                                     "or with this flag (repeatable)")
    group.addoption("--pflref-exclude", metavar="GLOB", action="append",
                    default=[], help="leave out vectors whose id or path "
                                     "matches, or with this flag (repeatable)")
    group.addoption("--pflref-precision",
                    choices=("fp64", "fp32", "bf16", "tf32"),
                    default="fp64", help="the candidate's precision: fp64's "
                                         "floor, or the Monte Carlo "
                                         "tolerance (default fp64)")
    group.addoption("--pflref-resync", action="store_true", default=False,
                    help="re-synchronised checking: each round from the "
                         "candidate's own state")
    group.addoption("--pflref-partial", action="store_true", default=False,
                    help="skip expected records the candidate did not write")
    group.addoption("--pflref-partial-min", metavar="N|FRACTION",
                    default=None, type=_partial_min,
                    help="with --pflref-partial: at least N records (or "
                         "this fraction of them) compared; without it every "
                         "round of the expected trajectory must be covered")
    group.addoption("--pflref-diagnose", action="store_true", default=False,
                    help="on a failure, name the known variant (preset, "
                         "switch value, probe) the candidate computes "
                         "instead, in the failure message")


def _partial_min(text):
    """--pflref-partial-min: digits are a count, else a fraction."""
    try:
        return int(text) if text.isdigit() else float(text)
    except ValueError:
        raise pytest.UsageError("--pflref-partial-min takes a count >= 1 or "
                                "a fraction in (0, 1]: %s" % text) from None


def pytest_configure(config):
    root = config.getoption("--pflref-vectors")
    if root is not None and not os.path.exists(root):
        raise pytest.UsageError("--pflref-vectors: %s does not exist" % root)


class _NoVectors:
    """Stands for an empty selection, so that it fails instead of
    skipping."""

    def __init__(self, message):
        self.message = message


def _selected(config):
    opt = config.getoption
    return list(pflref.vectors(root=opt("--pflref-vectors"),
                               algorithm=opt("--pflref-algorithm") or None,
                               include=opt("--pflref-include"),
                               exclude=opt("--pflref-exclude")))


def pytest_generate_tests(metafunc):
    if "pflref_vector" not in metafunc.fixturenames:
        return
    config = metafunc.config
    if not hasattr(config, "_pflref_vectors"):
        try:
            config._pflref_vectors = _selected(config)
        except (OSError, ValueError) as e:
            raise pytest.UsageError("pflref: %s" % e) from None
    chosen = config._pflref_vectors
    if not chosen:
        opt = config.getoption
        what = ", ".join("%s %s" % (k, v) for k, v in (
            ("--pflref-vectors", opt("--pflref-vectors")),
            ("--pflref-algorithm", opt("--pflref-algorithm")),
            ("--pflref-include", opt("--pflref-include")),
            ("--pflref-exclude", opt("--pflref-exclude"))) if v)
        metafunc.parametrize("pflref_vector", [_NoVectors(
            "pflref: no golden vector selected (%s)" % (what or "defaults"))],
            ids=["no-vectors"], indirect=True)
        return
    metafunc.parametrize("pflref_vector", chosen, ids=[v.id for v in chosen],
                         indirect=True)


@pytest.fixture
def pflref_vector(request):
    """The golden vector this test runs on (a pflref.Vector)."""
    v = getattr(request, "param", None)
    if v is None:
        pytest.fail("pflref_vector: the pflref plugin did not parametrize "
                    "this test", pytrace=False)
    if isinstance(v, _NoVectors):
        pytest.fail(v.message, pytrace=False)
    return v


@pytest.fixture
def pflref_check(request, pflref_vector):
    """check(result, **options) -> pflref.Report: the candidate's result (a
    Recorder, a pflref-result/1 dict, JSON text or a path) against this
    test's vector; a failure fails the test with the human report."""
    config = request.config

    def check(result, precision=None, resync=None, partial=None,
              partial_min=None):
        opts = dict(
            precision=precision or config.getoption("--pflref-precision"),
            resync=config.getoption("--pflref-resync") if resync is None
            else resync,
            partial=config.getoption("--pflref-partial") if partial is None
            else partial)
        pmin = config.getoption("--pflref-partial-min") \
            if partial_min is None else partial_min
        if opts["partial"] and pmin is not None:
            opts["partial_min"] = pmin
        try:
            report = pflref.check(pflref_vector, result, **opts)
        except pflref.InvalidInput as e:
            pytest.fail("MALFORMED %s: %s" % (pflref_vector.id, e),
                        pytrace=False)
        if not report.passed:
            pytest.fail(str(report) + "\n" + _diagnosis(
                config, pflref_vector, result, opts), pytrace=False)
        return report
    return check


def _diagnosis(config, vector, result, opts):
    """The failure message's last lines: the diagnosis under
    --pflref-diagnose (the verdict and the best matches), else how to get
    it."""
    if not config.getoption("--pflref-diagnose"):
        return ("  (rerun with --pflref-diagnose to name the known variant "
                "-- preset, switch value or probe -- this candidate computes "
                "instead)")
    try:
        d = pflref.diagnose(vector, result, precision=opts["precision"],
                            partial=opts["partial"])
    except pflref.InvalidInput as e:
        return "  diagnosis failed: %s" % e
    lines = ["DIAGNOSIS %s: %s" % (d.id, d.summary)]
    for i, m in enumerate(d.best[:3], 1):
        lines.append("  %d. preset %s%s%s (%s): %s" % (
            i, m["preset"], ", " if m["change"] else "", m["change"],
            m["kind"], "matches all %d records" % m["compared"]
            if m["complete"] else "agrees on %d of %d records"
            % (m["agreeing"], m["compared"])))
    lines.append("  %d variants run%s" % (
        d.runs, ", budget exhausted" if d.budget_exhausted else ""))
    return "\n".join(lines)
