#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/detection/run.sh: does `pflref check` catch realistic bugs?
#
#   (a) the correct NumPy candidate (docs/examples/pfl_numpy.py) must pass
#       every golden vector it supports;
#   (b) every bug of the catalogue tests/detection/bugs.json, switched on
#       with --bug NAME, must make `pflref check` report a mismatch (exit 1)
#       on some vector (first_caught.py: vector by vector, the bug's own
#       algorithm first, stopping at the first vector that tells);
#   (c) the guide's minimal FedAvg candidate must pass, and its buggy copy
#       must fail, naming round 0, the server and the quantity w.
#
# Builds nothing.  The pflref binary is $PFLREF_CLI (default build/rel/pflref).
# Exits 0 when every check passed, 1 otherwise, 2 when it cannot start.
set -u
PFLREF=${PFLREF_CLI:-}
case "$PFLREF" in
    "") ;;
    /*) ;;
    */*) PFLREF="$PWD/$PFLREF" ;;                  # relative to the caller
    *) PFLREF=$(command -v "$PFLREF") || PFLREF=$PFLREF_CLI ;;
esac
cd "$(dirname "$0")/../.." || exit 2
PFLREF=${PFLREF:-build/rel/pflref}
PY=/usr/bin/python3
CANDIDATE=docs/examples/pfl_numpy.py
CATALOGUE=tests/detection/bugs.json
GOLDEN=golden
FEDAVG_VECTOR=golden/fedavg/worked-samples.json

if [ ! -x "$PFLREF" ]; then
    echo "run.sh: no pflref binary at $PFLREF (make build/rel/pflref, or set PFLREF_CLI)" >&2
    exit 2
fi
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# The first divergence of a check report: "<vector id>: <quantity ...>".
first_divergence() {
    sed -n 's/^FAIL \([^:]*\): .*first divergence: /\1: /p' "$1" | head -n 1
}

# ---- (a) the correct candidate passes every vector it supports -------------
if "$PY" "$CANDIDATE" --all "$GOLDEN" -o "$TMP/correct" 2>"$TMP/correct.err"; then
    ran=$(find "$TMP/correct" -name '*.json' | wc -l)
    "$PFLREF" check "$GOLDEN" "$TMP/correct" --min-vectors "$ran" >"$TMP/correct.out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        ok "correct candidate: $(tail -n 1 "$TMP/correct.out")"
    else
        bad "correct candidate: pflref check exited $rc"
        cat "$TMP/correct.out"
    fi
else
    bad "correct candidate: $CANDIDATE failed"
    cat "$TMP/correct.err"
fi

# ---- (c) the guide's minimal FedAvg candidate and its buggy copy -----------
for variant in fedavg_numpy fedavg_numpy_buggy; do
    out="$TMP/$variant.json"
    if ! "$PY" "docs/examples/$variant.py" "$FEDAVG_VECTOR" -o "$out" 2>"$TMP/$variant.err"; then
        bad "$variant.py failed"
        cat "$TMP/$variant.err"
        continue
    fi
    "$PFLREF" check "$FEDAVG_VECTOR" "$out" >"$TMP/$variant.out" 2>&1
    rc=$?
    if [ "$variant" = fedavg_numpy ]; then
        if [ "$rc" -eq 0 ]; then ok "$variant.py passes $FEDAVG_VECTOR"
        else bad "$variant.py: pflref check exited $rc, expected 0"; cat "$TMP/$variant.out"; fi
    elif [ "$rc" -ne 1 ]; then
        bad "$variant.py: pflref check exited $rc, expected 1"; cat "$TMP/$variant.out"
    elif grep -q 'first divergence: w (server, round 0)' "$TMP/$variant.out"; then
        ok "$variant.py caught: $(first_divergence "$TMP/$variant.out")"
    else
        bad "$variant.py: the report does not name round 0, the server and w"
        cat "$TMP/$variant.out"
    fi
done

# ---- (b) every catalogued bug is detected ---------------------------------
# the catalogue: bugs.json, and bugs-ALGORITHM.json beside it
bugs=$("$PY" -c 'import glob, json, os, sys
for f in [sys.argv[1]] + sorted(glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "bugs-*.json"))):
    for b in json.load(open(f)): print(b["name"])' "$CATALOGUE") || {
    echo "run.sh: cannot read $CATALOGUE" >&2; exit 2; }
n_bugs=0
n_detected=0
for bug in $bugs; do
    n_bugs=$((n_bugs + 1))
    # vector by vector, the bug's own algorithm first, up to the first
    # vector that tells it apart (first_caught.py): the verdict of
    # `pflref check` on every vector's result, at a fraction of the cost
    line=$("$PY" tests/detection/first_caught.py --pflref "$PFLREF" --bug "$bug" \
        "$GOLDEN" "$TMP/bug-$bug" 2>"$TMP/bug-$bug.err")
    rc=$?
    if [ "$rc" -eq 0 ]; then
        n_detected=$((n_detected + 1))
        passed=$((passed + 1))
        echo "detected $bug: $line"
    else
        failed=$((failed + 1))
        case $rc in
            1) echo "MISSED $bug: $line" ;;
            3) echo "MISSED $bug: the candidate failed to run ($line)" ;;
            *) echo "MISSED $bug (first_caught.py exited $rc: $line$(tail -n 1 "$TMP/bug-$bug.err"))" ;;
        esac
    fi
done

echo "detection: $n_detected/$n_bugs bugs detected"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
