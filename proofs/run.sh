#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/run.sh: prove the kernels of ref/ that carry ACSL contracts with
# Frama-C's WP plugin, runtime-error guards included (-wp-rte), and check
# that a deliberately wrong copy is NOT proved.
#
#     proofs/run.sh            (make proofs installs the tools first)
#
# Proved files: PROVED below.  Provers: Z3 and CVC4 through Why3.
# Exit status: 0 every goal of every proved file is valid and every
# negative file has an unproved goal; 1 otherwise; 2 the tools are missing.
set -eu
cd "$(dirname "$0")/.."

PROVED="ref/sampling/ids.c"
NEGATIVE="proofs/negative/ids_off_by_one.c"
PROVERS=z3,cvc4
TIMEOUT=30          # seconds per goal; every goal here takes well under 1 s
NEG_TIMEOUT=5       # the negative file's false goals would only time out

for tool in frama-c why3 z3 cvc4; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "proofs/run.sh: $tool not found (./deps.sh proofs installs it)" >&2
        exit 2
    fi
done
# Why3 must know the provers; detect them once per user.
if ! why3 config list-provers 2>/dev/null | grep -q "Z3"; then
    why3 config detect >/dev/null 2>&1
fi

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# prove FILE TIMEOUT -> prints "proved total" of WP's summary line
prove() {
    frama-c -cpp-extra-args="-Iinclude -D_POSIX_C_SOURCE=200809L" \
        -wp -wp-rte -wp-prover "$PROVERS" -wp-timeout "$2" "$1" \
        >"$log/out" 2>&1 || true
    sed -n 's/.*Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2/p' "$log/out"
}

status=0
for f in $PROVED; do
    set -- $(prove "$f" "$TIMEOUT")
    if [ $# -eq 2 ] && [ "$2" -gt 0 ] && [ "$1" -eq "$2" ]; then
        echo "proofs: $f: $1/$2 goals proved (WP with RTE guards; $PROVERS)"
    else
        echo "proofs: $f: NOT proved (${1:-?}/${2:-?} goals); WP said:"
        grep -E "Unknown|Timeout|Failed|Error" "$log/out" | head -20
        status=1
    fi
done
for f in $NEGATIVE; do
    set -- $(prove "$f" "$NEG_TIMEOUT")
    if [ $# -eq 2 ] && [ "$1" -lt "$2" ]; then
        echo "proofs: $f: $1/$2 goals proved, as intended (the bug is caught)"
    else
        echo "proofs: $f: the deliberately wrong code was proved (${1:-?}/${2:-?}): the proof setup is vacuous"
        status=1
    fi
done
exit $status
