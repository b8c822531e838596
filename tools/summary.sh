#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tools/summary.sh [--keep REGEX] N COMMAND [ARG...]: run COMMAND with its
# output (standard output and error) kept; when it succeeds print only the
# lines matching REGEX (pytest's skip reasons, say) and then the last N
# lines (a test runner's summary); when it fails print all of it, so the
# failing tests are named and the summary line still comes last.  Exits
# with COMMAND's status.  The make targets use it instead of `| tail`,
# which would hide both the failures and the exit status.
set -u
keep=""
if [ "${1:-}" = --keep ]; then keep=$2; shift 2; fi
[ $# -ge 2 ] || { echo "usage: tools/summary.sh [--keep REGEX] N COMMAND [ARG...]" >&2; exit 2; }
n=$1; shift
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
    if [ -n "$keep" ]; then
        head -n "-$n" "$log" | grep -E -- "$keep"
    fi
    tail -n "$n" "$log"
else
    cat "$log"
fi
exit "$rc"
