#!/bin/bash
# check.sh: the PyTorch example's gate (make check-torch).
#
#   0. docs/validate.md's quickstart is quickstart_pfedme.py verbatim; its
#      record tables name what the vectors expect (validate_tables.py); a
#      candidate's command line refuses a bad vector (exit 2, no output);
#   1. the candidates run on every golden vector of fedavg, pfedme,
#      ditto, fedalt, feddyn, moon, fedprox, fedrecon, scaffold, fedamp,
#      fedproto, fedrod, apple, fedala, fedpac, lora, pfedhn, apfl,
#      perfedavg, pflego, fedsim, cfl, ifca and fedfomo (batch
#      normalisation in every one of them but fedrecon and pflego, which
#      have no such vector: torch_bn.py), and `pflref check` passes them
#      all (--min-vectors: as many as were run, and at least MIN_RUN, the
#      vectors of 30 November, none skipped since FedProto's and APPLE's
#      candidates step through torch_common.ClientOptimizers too; a vector a
#      candidate skips is listed with why); each optimizer, learning-rate
#      and schedule setting's negative control fails its vector, and so
#      does a one-line break of the own state of LoRA, pFedHN, APFL,
#      Per-FedAvg, PFLEGO, FedSim, CFL, IFCA and FedFomo
#      (test_torch_candidates.py, step 3);
#   1b. the models no vector of these algorithms uses (softmax, the ReLU mlp):
#      the candidates agree with `pflref run` record by record
#      (crosscheck_models.py; the reference's own output, not a golden);
#   1c. FedAvg on PFLlib's FedAvgCNN with torch.optim.SGD(momentum=0.9,
#      weight_decay=5e-4) and Adam (fedavgcnn_torch.py) against `pflref
#      freeze` of the same specs: the optimizer built in train() passes
#      opt.state = reset, the one kept from Client.__init__ fails it at
#      round 1, client 0, step 1 and passes opt.state = client
#      (test_fedavgcnn_torch.py; the reference's own output, not a golden);
#   1d. the same candidates in float32 and in bfloat16 (PFLREF_TORCH_DTYPE):
#      `pflref check --candidate-precision fp32` / `bf16` passes every vector
#      it can judge (a vector chaotic at that precision is reported
#      inconclusive, never passed or failed), the float32 run fails the
#      float64 check (the candidates really ran in float32), and Ditto's
#      deliberate bug fails every ditto vector at both precisions;
#   2. Ditto with its deliberate bug (PFLREF_TORCH_BUG=ditto-alias) fails
#      `pflref check` (exit 1) on every ditto vector;
#   3. when `import pflref` works (python/ on PYTHONPATH, or installed),
#      the same two through the pytest plugin: the correct candidates pass,
#      the buggy Ditto fails with the first divergence in pytest's output;
#      and docs/validate.md's quickstart (quickstart_pfedme.py) passes;
#   4. the captured plain PyTorch runs of docs/examples/capture/ (FedAvg,
#      Ditto, pFedMe) pass, and FedAvg with its one-line bug (a plain mean of the
#      state_dicts) fails at round 0's server w, diagnosed as
#      fedavg.weights = uniform; and python/tests/test_capture.py with
#      PyTorch present.
#
# Environment: PFLREF_CLI (default build/rel/pflref), PYTHON (default
# /usr/bin/python3).  Run from the repository's root.  Exit 0 when every
# step holds, 1 otherwise.
set -u
CLI=${PFLREF_CLI:-build/rel/pflref}
PY=${PYTHON:-/usr/bin/python3}
HERE=docs/examples/pytorch
ALGS="fedavg pfedme ditto fedalt feddyn moon fedprox fedrecon scaffold fedamp fedproto fedrod apple fedala fedpac lora pfedhn apfl perfedavg pflego fedsim cfl ifca fedfomo"
MIN_RUN=483     # the vectors the candidates ran on 30 November (none skipped)
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
export PYTHONDONTWRITEBYTECODE=1
fail=0
# PyTorch itself, not a folder standing in for it (a namespace package
# imports without error and has no tensor)
if ! "$PY" -c 'import torch; torch.tensor' 2>/dev/null; then
    echo "check-torch: PyTorch is not installed: Debian's python3-torch (./deps.sh torch)"
    exit 1
fi
include=()
for a in $ALGS; do include+=(--include "$a/"); done
# the families' layer-list and optimizer vectors (layers/fedavg/…, optim/apple/…)
# that the candidates run; the rest of those folders is skipped (no candidate)
include+=(--include layers/ --include optim/)

# 0. validate.md's quickstart is this folder's quickstart_pfedme.py, verbatim;
#    a wrapper given a bad vector exits 2 and writes nothing
if ! "$PY" - "$HERE/quickstart_pfedme.py" docs/validate.md <<'END'
import sys
code = open(sys.argv[1]).read()
doc = open(sys.argv[2]).read()
body = code[code.index("import copy"):]
# the file's SPDX line is the project's, not part of the guide's snippet
body = "".join(l for l in body.splitlines(True)
               if not l.startswith("# SPDX-License-Identifier:"))
sys.exit(0 if "```python\n" + body + "```" in doc else 1)
END
then
    echo "check-torch: docs/validate.md's quickstart differs from $HERE/quickstart_pfedme.py"
    fail=1
fi
"$PY" "$HERE/validate_tables.py" golden docs/validate.md >"$tmp/tables.txt" || fail=1
sed 's/^validate_tables/check-torch/' "$tmp/tables.txt"
echo '{"format": "pflref-golden/1"' >"$tmp/bad.json"
for vec in "$tmp/bad.json" "$tmp/none.json" golden/ditto/worked-norm-d1.json; do
    "$PY" "$HERE/fedavg_torch.py" "$vec" -o "$tmp/out.json" 2>/dev/null
    rc=$?
    if [ "$rc" -ne 2 ] || [ -e "$tmp/out.json" ]; then
        echo "check-torch: fedavg_torch.py $vec: exit $rc (expected 2, no output)"; fail=1
    fi
done

# 1. every vector of the five algorithms passes
"$PY" "$HERE/run_vectors.py" golden -o "$tmp/ok" 2>"$tmp/ok.err" || { cat "$tmp/ok.err"; exit 1; }
n=$(find "$tmp/ok" -name '*.json' | wc -l)
if [ "$n" -lt "$MIN_RUN" ]; then
    echo "check-torch: the candidates ran $n vectors, fewer than $MIN_RUN"; fail=1
fi
if "$CLI" check golden "$tmp/ok" "${include[@]}" --min-vectors "$n" >"$tmp/ok.txt"; then
    echo "check-torch: $(tail -n 1 "$tmp/ok.txt")"
else
    cat "$tmp/ok.txt"; echo "check-torch: the PyTorch candidates fail"; fail=1
fi

# 1b. softmax and the ReLU mlp, against the reference's own run
if "$PY" "$HERE/crosscheck_models.py" --pflref "$CLI" >"$tmp/cross.txt"; then
    echo "check-torch: $(tail -n 1 "$tmp/cross.txt")"
else
    cat "$tmp/cross.txt"; fail=1
fi

# 1c. FedAvgCNN with torch.optim's momentum, weight decay and Adam
if PFLREF_CLI="$CLI" "$PY" -m pytest -q -p no:cacheprovider \
        "$HERE/test_fedavgcnn_torch.py" >"$tmp/cnn.txt" 2>&1; then
    echo "check-torch: FedAvgCNN with torch.optim: $(tail -n 1 "$tmp/cnn.txt")"
else
    cat "$tmp/cnn.txt"; echo "check-torch: the FedAvgCNN torch.optim cases fail"; fail=1
fi

# 1d. float32 and bfloat16 candidates, judged by their own rounding spread
for pair in float32:fp32 bfloat16:bf16; do
    dt=${pair%%:*} prec=${pair#*:}
    PFLREF_TORCH_DTYPE=$dt "$PY" "$HERE/run_vectors.py" golden -o "$tmp/$dt" \
        2>/dev/null >/dev/null || { echo "check-torch: run_vectors.py fails in $dt"; exit 1; }
    m=$(find "$tmp/$dt" -name '*.json' | wc -l)
    if "$CLI" check golden "$tmp/$dt" "${include[@]}" --min-vectors "$m" \
            --candidate-precision "$prec" >"$tmp/$dt.txt" 2>&1 \
            && grep -q "^check: $m compared: .* 0 numeric mismatches" "$tmp/$dt.txt"; then
        echo "check-torch: $dt: $(grep '^check:' "$tmp/$dt.txt")"
    else
        cat "$tmp/$dt.txt"; echo "check-torch: the $dt candidates fail --candidate-precision $prec"; fail=1
    fi
    # (the bug is Ditto's: only golden/ditto/ runs, the folder check reads)
    PFLREF_TORCH_DTYPE=$dt PFLREF_TORCH_BUG=ditto-alias "$PY" "$HERE/run_vectors.py" golden/ditto \
        -o "$tmp/$dt-bug" 2>/dev/null >/dev/null || exit 1
    nd=$(find "$tmp/$dt-bug" -name 'ditto__*.json' | wc -l)
    "$CLI" check golden "$tmp/$dt-bug" --include ditto/ --min-vectors "$nd" \
        --candidate-precision "$prec" >"$tmp/$dt-bug.txt" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "^check: $nd compared: 0 passed" "$tmp/$dt-bug.txt"; then
        echo "check-torch: $dt: ditto-alias caught on $nd of $nd ditto vectors"
    else
        cat "$tmp/$dt-bug.txt"; echo "check-torch: $dt: ditto-alias not caught (exit $rc)"; fail=1
    fi
done
if "$CLI" check golden "$tmp/float32" "${include[@]}" >"$tmp/f32-as-f64.txt" 2>&1; then
    echo "check-torch: the float32 candidates pass the float64 check: they did not run in float32"; fail=1
fi

# 2. the aliasing bug is caught on every ditto vector
PFLREF_TORCH_BUG=ditto-alias "$PY" "$HERE/run_vectors.py" golden/ditto -o "$tmp/bug" \
    2>/dev/null || exit 1
nd=$(find "$tmp/bug" -name 'ditto__*.json' | wc -l)
"$CLI" check golden "$tmp/bug" --include ditto/ --min-vectors "$nd" >"$tmp/bug.txt"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^check: $nd compared: 0 passed" "$tmp/bug.txt"; then
    echo "check-torch: ditto-alias caught on $nd of $nd ditto vectors, e.g." \
         "$(grep -m1 -o 'first divergence: .*' "$tmp/bug.txt")"
else
    cat "$tmp/bug.txt"; echo "check-torch: ditto-alias not caught (exit $rc)"; fail=1
fi

# 3. the pytest plugin, once the package is importable
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c 'import pflref, pflref.pytest_plugin' 2>/dev/null; then
    echo "check-torch: pytest plugin skipped: python3 cannot import pflref.pytest_plugin"
    exit $fail
fi
algs=(); for a in $ALGS; do algs+=(--pflref-algorithm "$a"); done
pytest=("$PY" -m pytest -p pflref.pytest_plugin -p no:cacheprovider -q
        --pflref-vectors golden)
tests="$HERE/test_torch_candidates.py"
if "${pytest[@]}" "$tests" "${algs[@]}" >"$tmp/pytest.txt" 2>&1; then
    echo "check-torch: pytest: $(tail -n 1 "$tmp/pytest.txt")"
else
    cat "$tmp/pytest.txt"; echo "check-torch: pytest on the PyTorch candidates fails"; fail=1
fi
if "${pytest[@]}" "$HERE/quickstart_pfedme.py" --pflref-algorithm pfedme \
        --pflref-include 'pfedme/worked/linear-paper-*' >"$tmp/quick.txt" 2>&1; then
    echo "check-torch: pytest: validate.md's quickstart: $(tail -n 1 "$tmp/quick.txt")"
else
    cat "$tmp/quick.txt"; echo "check-torch: validate.md's quickstart fails"; fail=1
fi
PFLREF_TORCH_BUG=ditto-alias "${pytest[@]}" "$tests" --pflref-algorithm ditto \
    >"$tmp/pytest-bug.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -qi "divergence" "$tmp/pytest-bug.txt" \
        && ! grep -q "Traceback" "$tmp/pytest-bug.txt"; then
    echo "check-torch: pytest: ditto-alias fails as it should: $(tail -n 1 "$tmp/pytest-bug.txt")"
else
    cat "$tmp/pytest-bug.txt"
    echo "check-torch: pytest: ditto-alias not reported as a divergence (exit $rc)"; fail=1
fi

# 4. a plain PyTorch run captured (docs/python.md, "Capturing a PyTorch run")
CAP=docs/examples/capture root=$PWD
mkdir -p "$tmp/capture"
for ex in fedavg_plain ditto_plain pfedme_plain; do
    if (cd "$tmp/capture" && "$PY" "$root/$CAP/$ex.py") >"$tmp/$ex.txt" 2>&1; then
        echo "check-torch: capture: $ex.py: $(head -n 1 "$tmp/$ex.txt")"
    else
        cat "$tmp/$ex.txt"; echo "check-torch: capture: $ex.py fails"; fail=1
    fi
done
sed 's|sum(sd\[key\] \* (n / total) for|sum(sd[key] / len(states) for|' \
    "$CAP/fedavg_plain.py" >"$tmp/capture/fedavg_bug.py"
(cd "$tmp/capture" && "$PY" fedavg_bug.py) >"$tmp/fedavg_bug.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "first divergence: w (server, round 0)" "$tmp/fedavg_bug.txt" \
        && grep -q "fedavg.weights = uniform" "$tmp/fedavg_bug.txt"; then
    echo "check-torch: capture: the one-line bug fails at round 0's server w, diagnosed as fedavg.weights = uniform"
else
    cat "$tmp/fedavg_bug.txt"; echo "check-torch: capture: the one-line bug is not caught (exit $rc)"; fail=1
fi
# the capture's tests with PyTorch present (make check runs them before
# PyTorch is installed, and then only their NumPy half)
if PFLREF_CLI="$CLI" "$PY" -m pytest -q -p no:cacheprovider \
        python/tests/test_capture.py >"$tmp/capture-tests.txt" 2>&1; then
    echo "check-torch: capture tests: $(tail -n 1 "$tmp/capture-tests.txt")"
else
    cat "$tmp/capture-tests.txt"; echo "check-torch: the capture tests fail"; fail=1
fi
exit $fail
# SPDX-License-Identifier: GPL-3.0-or-later
