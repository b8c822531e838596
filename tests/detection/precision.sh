#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/detection/precision.sh: does `pflref check --candidate-precision`
# judge a float32 (or bfloat16) candidate by its own rounding spread?
#
#   (a) the correct NumPy candidate run in the low precision
#       (docs/examples/pfl_numpy_lowp.py) must show no numeric mismatch on
#       the golden vectors (0 false positives; inconclusive vectors, chaotic
#       at that precision, are counted and listed, never passed);
#   (b) every bug of the catalogue (tests/detection/bugs*.json), run in the
#       low precision, must be flagged as it is in float64: each vector
#       float64 flags is checked again at the low precision and the
#       vectors flagged are counted in both.  A bug all of whose vectors
#       are chaotic in the low precision (INCONCLUSIVE: a tie that rounding
#       breaks either way) is noted and counted apart, not failed.
#
# usage: precision.sh [--dtype float32|bfloat16] [--bugs N] [--only GLOBS]
#                     [--include PAT]...
#   --bugs N      only the first N bugs of every catalogue file (0: none)
#   --only GLOBS  only the bugs whose name matches one of the comma-separated
#                 GLOBS (e.g. 'fedala-*,ifca-*')
#   --include PAT only the vectors PAT selects (pflref check --include)
# The pflref binary is $PFLREF_CLI (default build/rel/pflref).  Builds
# nothing.  Exits 0 when every check passed, 1 otherwise, 2 when it cannot
# start.
set -u
PFLREF=${PFLREF_CLI:-}
case "$PFLREF" in
    "") ;;
    /*) ;;
    */*) PFLREF="$PWD/$PFLREF" ;;
    *) PFLREF=$(command -v "$PFLREF") || PFLREF=$PFLREF_CLI ;;
esac
cd "$(dirname "$0")/../.." || exit 2
PFLREF=${PFLREF:-build/rel/pflref}
PY=/usr/bin/python3
LOWP=docs/examples/pfl_numpy_lowp.py
CANDIDATE=docs/examples/pfl_numpy.py
GOLDEN=golden
DTYPE=float32
PER_FILE=-1
ONLY='*'
INCLUDE=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dtype) DTYPE=$2; shift 2 ;;
        --bugs) PER_FILE=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --include) INCLUDE+=(--include "$2"); shift 2 ;;
        *) echo "precision.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$DTYPE" in
    float32) PREC=fp32 ;;
    bfloat16) PREC=bf16 ;;
    *) echo "precision.sh: --dtype is float32 or bfloat16" >&2; exit 2 ;;
esac
if [ ! -x "$PFLREF" ]; then
    echo "precision.sh: no pflref binary at $PFLREF" >&2
    exit 2
fi
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
# the vectors a check report flags (FAIL lines)
flagged() { grep -c '^FAIL ' "$1"; }

# ---- (a) the correct candidate in the low precision ------------------------
if "$PY" "$LOWP" --dtype "$DTYPE" --all "$GOLDEN" -o "$TMP/correct" \
        2>"$TMP/correct.err"; then
    "$PFLREF" check "$GOLDEN" "$TMP/correct" --candidate-precision "$PREC" \
        "${INCLUDE[@]}" >"$TMP/correct.out" 2>&1
    rc=$?
    fp=$(flagged "$TMP/correct.out")
    inc=$(grep -c '^INCONCLUSIVE ' "$TMP/correct.out")
    if [ "$rc" -eq 0 ] && [ "$fp" -eq 0 ]; then
        ok "correct $DTYPE candidate: 0 false positives, $inc inconclusive: $(grep '^check: ' "$TMP/correct.out")"
    else
        bad "correct $DTYPE candidate: $fp false positives (exit $rc)"
        grep -A3 '^FAIL ' "$TMP/correct.out"
    fi
    grep '^INCONCLUSIVE ' "$TMP/correct.out" | sed 's/^/     /'
else
    bad "correct $DTYPE candidate: $LOWP failed"
    cat "$TMP/correct.err"
fi

# ---- (b) every catalogued bug, in float64 and in the low precision ---------
bugs=$("$PY" -c 'import fnmatch, glob, json, os, sys
n = int(sys.argv[2])
for f in [sys.argv[1]] + sorted(glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "bugs-*.json"))):
    for b in json.load(open(f))[: None if n < 0 else n]:
        if any(fnmatch.fnmatch(b["name"], g) for g in sys.argv[3].split(",")):
            print(b["name"])' \
    tests/detection/bugs.json "$PER_FILE" "$ONLY") || {
    echo "precision.sh: cannot read the catalogue" >&2; exit 2; }
n_bugs=0 det64=0 detlow=0 vec64=0 veclow=0 vecinc=0 n_inc=0
for bug in $bugs; do
    n_bugs=$((n_bugs + 1))
    d64="$TMP/b64-$bug" dlow="$TMP/blow-$bug"
    if ! "$PY" "$CANDIDATE" --all "$GOLDEN" -o "$d64" --bug "$bug" 2>/dev/null ||
       ! "$PY" "$LOWP" --dtype "$DTYPE" --all "$GOLDEN" -o "$dlow" --bug "$bug" \
           2>/dev/null; then
        bad "$bug: the candidate failed to run"
        continue
    fi
    "$PFLREF" check "$GOLDEN" "$d64" "${INCLUDE[@]}" >"$d64.out" 2>&1
    rc64=$?
    # the vectors float64 flags, each checked again in the low precision
    # (the others are the correct candidate's: part (a) covers them)
    f64=0 flow=0 finc=0
    while read -r vec cand; do
        f64=$((f64 + 1))
        "$PFLREF" check "$vec" "$dlow/$(basename "$cand")" \
            --candidate-precision "$PREC" >"$dlow.one" 2>&1
        rc=$?
        [ $rc -eq 1 ] && flow=$((flow + 1))
        [ $rc -eq 0 ] && grep -q '^INCONCLUSIVE ' "$dlow.one" && finc=$((finc + 1))
    done < <(sed -n 's/^  replay: [^ ]* check \([^ ]*\) \([^ ]*\).*/\1 \2/p' "$d64.out")
    vec64=$((vec64 + f64)) veclow=$((veclow + flow)) vecinc=$((vecinc + finc))
    [ "$rc64" -eq 1 ] && det64=$((det64 + 1))
    [ "$flow" -gt 0 ] && detlow=$((detlow + 1))
    if [ "$rc64" -eq 1 ] && [ "$flow" -eq 0 ] && [ "$finc" -eq "$f64" ]; then
        # every vector that shows it is chaotic in the low precision (a
        # tie broken by rounding): reported INCONCLUSIVE, never passed
        n_inc=$((n_inc + 1))
        echo "note $bug: float64 $f64 vectors, $DTYPE: all $finc INCONCLUSIVE (chaotic)"
    elif [ "$rc64" -eq 1 ] && [ "$flow" -eq 0 ]; then
        bad "$bug: flagged in float64 on $f64 vectors, missed in $DTYPE"
    elif [ "$rc64" -ne 1 ]; then
        echo "note $bug: not flagged in float64 on these vectors (exit $rc64)"
    else
        ok "$bug: float64 $f64 vectors, $DTYPE $flow"
    fi
    rm -rf "$d64" "$dlow"
done
echo "precision: bugs flagged: float64 $det64/$n_bugs, $DTYPE $detlow/$n_bugs" \
     "($n_inc more only INCONCLUSIVE); vectors flagged: float64 $vec64," \
     "$DTYPE $veclow ($vecinc INCONCLUSIVE)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
