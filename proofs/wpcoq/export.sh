#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/wpcoq/export.sh: WP's own Coq translation of the ACSL definitions
# that the Coq theorems read (proofs/wpcoq/README.md).
#
#   sh proofs/wpcoq/export.sh             write proofs/wpcoq/gen/Wp*.v
#   sh proofs/wpcoq/export.sh --check     exit 1 unless those files are what
#                                         WP prints today (proofs/run.sh)
#   sh proofs/wpcoq/export.sh --controls  the negative controls: each plants
#                                         a change in a copy of a header,
#                                         exports it, and must make the
#                                         joint's Coq file fail in the
#                                         theorem named (needs proofs/coq
#                                         compiled)
#
# The exports (EXPORTS below): a question (a C file of this folder with one
# false ACSL lemma over the predicates a joint reads), the header that
# defines them, the file written, and the Coq file of proofs/coq that reads
# it.  How: WP is asked to prove the lemma with one prover, declared in a
# Why3 configuration of this run only: its driver is proofs/wpcoq/coq.drv
# (Why3's Coq printer, no realizations) and its command copies the file
# Why3 prints for the goal, instead of proving anything.  The task holds
# every definition the lemma uses, as Why3 sends it to Z3 and CVC4 in the
# proofs of proofs/run.sh (model typed+real, with run.sh's preprocessor
# options); the file kept is that task up to its goal.
# Exit status: 0 done, 1 a check or control failed, 2 usage or tools.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/proofs/wpcoq
COQFLAGS='-q -w -notation-overridden,-ambiguous-paths,-deprecated-instance-without-locality'
CPP="-I$ROOT/include -I$ROOT/ref -D_POSIX_C_SOURCE=200809L -idirafter /usr/include"

# NAME | question | header it reads | file written (gen/) | joint
EXPORTS='cluster|proofs/wpcoq/cluster.c|proofs/acsl/cluster.h|WpCluster.v|ClusterJoint.v
sampler|proofs/wpcoq/sampler.c|ref/sampling/kernels.h|WpSampler.v|SamplerJoint.v'

mode=${1:-write}
case "$mode" in
    write|--check|--controls) ;;
    *) echo "usage: sh proofs/wpcoq/export.sh [--check | --controls]" >&2; exit 2 ;;
esac
for tool in frama-c why3 coqc; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "proofs/wpcoq/export.sh: $tool not found (./deps.sh proofs)" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The driver, with the folder of Why3's own drivers (an import is read
# relative to the driver's file), and the prover that uses it.
drivers=$(why3 --print-datadir)/drivers
sed "s|@WHY3_DRIVERS@|$drivers|" "$HERE/coq.drv" >"$tmp/coq.drv"
cat >"$tmp/why3.conf" <<EOF
[main]
magic = 14
running_provers_max = 1

[prover]
name = "CoqExport"
version = "1"
command = "cp %f $tmp/task/"
driver = "$tmp/coq.drv"
in_place = false
interactive = false
EOF

# export_from QUESTION HEADER HEADER_FILE DEST NAME: WP's translation of
# the definitions QUESTION's lemma export_NAME uses, with HEADER (a path of
# the tree) read from the file HEADER_FILE (the tree's, or a planted copy),
# into DEST.
export_from() {
    rm -rf "$tmp/task" "$tmp/src" "$tmp/wp"
    mkdir -p "$tmp/task" "$tmp/src/$(dirname "$1")" "$tmp/src/$(dirname "$2")"
    cp "$ROOT/$1" "$tmp/src/$1"
    cp "$3" "$tmp/src/$2"
    if ! WHY3CONFIG="$tmp/why3.conf" frama-c -cpp-extra-args="$CPP" -wp \
            -wp-model typed+real -wp-prop="export_$5" -wp-prover CoqExport \
            -wp-cache none -wp-out "$tmp/wp" "$tmp/src/$1" </dev/null >"$tmp/wp.log" 2>&1; then
        cat "$tmp/wp.log" >&2
        echo "proofs/wpcoq/export.sh: WP failed on $1" >&2
        exit 2
    fi
    set -- "$4" "$tmp"/task/*.v
    if [ $# -ne 2 ] || [ ! -f "$2" ]; then
        cat "$tmp/wp.log" >&2
        echo "proofs/wpcoq/export.sh: WP printed $(($# - 1)) tasks, not one" >&2
        exit 2
    fi
    # the task up to its goal (the definitions; the false lemma is not kept)
    sed '/^(\* Why3 goal \*)$/,$d' "$2" >"$1"
    grep -q '^Definition P_' "$1" ||
        { echo "proofs/wpcoq/export.sh: no predicate in WP's task" >&2; exit 2; }
}

status=0
echo "$EXPORTS" >"$tmp/exports"
while IFS='|' read -r name question header out joint; do
    case "$mode" in
    write)
        export_from "$question" "$header" "$ROOT/$header" "$tmp/$out" "$name"
        mkdir -p "$HERE/gen"
        mv "$tmp/$out" "$HERE/gen/$out"
        echo "proofs/wpcoq/export.sh: wrote proofs/wpcoq/gen/$out"
        ;;
    --check)
        export_from "$question" "$header" "$ROOT/$header" "$tmp/$out" "$name"
        if cmp -s "$tmp/$out" "$HERE/gen/$out"; then
            echo "proofs/wpcoq/export.sh: $out is WP's translation of $header"
        else
            diff -u "$HERE/gen/$out" "$tmp/$out" | head -40 >&2 || true
            echo "proofs/wpcoq/export.sh: proofs/wpcoq/gen/$out is not WP's translation of $header today; run sh proofs/wpcoq/export.sh, then make proofs/coq/$joint agree" >&2
            status=1
        fi
        ;;
    --controls)
        # Each control of this export: NAME@THEOREM@FROM@TO (controls.txt):
        # the text FROM (a fixed string that must occur once in the header)
        # becomes TO, which changes one definition that THEOREM proves
        # equal to (or to give) the Coq theorems'.  It is caught when the
        # joint then fails to compile, first in THEOREM (Coq stops at the
        # first proof that fails).
        sed -n "s/^$name@//p" "$HERE/controls.txt" >"$tmp/controls"
        [ -s "$tmp/controls" ] ||
            { echo "proofs/wpcoq/export.sh: no control for $name" >&2; status=1; }
        while IFS='@' read -r control theorem from to; do
            if [ "$(grep -cF -- "$from" "$ROOT/$header")" != 1 ]; then
                echo "proofs/wpcoq/export.sh: control $control: its text is not in $header once" >&2
                status=1
                continue
            fi
            # (through the environment: awk -v would read \f in \forall
            # as an escape)
            FROM=$from TO=$to awk '{ f = ENVIRON["FROM"]; i = index($0, f)
                    if (i) $0 = substr($0, 1, i - 1) ENVIRON["TO"] substr($0, i + length(f))
                    print }' "$ROOT/$header" >"$tmp/planted.h"
            rm -rf "$tmp/gen"
            mkdir -p "$tmp/gen"
            export_from "$question" "$header" "$tmp/planted.h" "$tmp/gen/$out" "$name"
            if cmp -s "$tmp/gen/$out" "$HERE/gen/$out"; then
                echo "proofs/wpcoq/export.sh: control $control: WP's translation did not change" >&2
                status=1
                continue
            fi
            cp "$ROOT/proofs/coq/$joint" "$tmp/gen/$joint"
            # shellcheck disable=SC2086
            if ! (cd "$tmp/gen" && coqc $COQFLAGS -Q "$HERE/lib" "" -Q . Wp "$out" </dev/null); then
                echo "proofs/wpcoq/export.sh: control $control: its $out does not compile" >&2
                status=1
            # shellcheck disable=SC2086
            elif (cd "$tmp/gen" && coqc $COQFLAGS -Q "$HERE/lib" "" -Q . Wp \
                    -Q "$ROOT/proofs/coq" Pflref "$joint" </dev/null >"$tmp/coq.log" 2>&1); then
                echo "proofs/wpcoq/export.sh: control $control NOT caught: $joint still compiles" >&2
                status=1
            else
                line=$(sed -n 's/^File .*, line \([0-9]*\),.*/\1/p' "$tmp/coq.log" | head -1)
                failed=$(awk -v n="${line:-0}" 'NR <= n && /^(Theorem|Lemma|Corollary) / { t = $2 }
                                                  END { print t }' "$ROOT/proofs/coq/$joint")
                if [ "$failed" = "$theorem" ]; then
                    echo "proofs/wpcoq/export.sh: control $control caught: $joint fails in $theorem (line $line)"
                else
                    sed 's/^/  /' "$tmp/coq.log" >&2
                    echo "proofs/wpcoq/export.sh: control $control: $joint fails in ${failed:-no theorem}, not $theorem" >&2
                    status=1
                fi
            fi
        done <"$tmp/controls"
        ;;
    esac
done <"$tmp/exports"
exit $status
