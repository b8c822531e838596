#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/wpcoq/export.sh: WP's own Coq translation of the ACSL definitions
# that the Coq theorems read (proofs/wpcoq/README.md).
#
#   sh proofs/wpcoq/export.sh             write proofs/wpcoq/gen/WpAcsl.v
#   sh proofs/wpcoq/export.sh --check     exit 1 unless that file is what WP
#                                         prints today (proofs/run.sh)
#   sh proofs/wpcoq/export.sh --controls  the negative controls
#                                         (controls.txt): each plants a
#                                         change in a copy of a header,
#                                         exports it, and must make a joint
#                                         fail in the theorem named (needs
#                                         proofs/coq compiled)
#
# The question, proofs/wpcoq/question.c, is one false ACSL lemma over every
# predicate the joints of proofs/coq/ read, from the headers of HEADERS.
# WP is asked to prove it with one prover, declared in a Why3 configuration
# of this run only: its driver is proofs/wpcoq/coq.drv (Why3's Coq printer,
# no realizations) and its command copies the file Why3 prints for the
# goal, instead of proving anything.  The task holds every definition the
# lemma uses, as Why3 sends it to Z3 and CVC4 in the proofs of
# proofs/run.sh (model typed+real, with run.sh's preprocessor options); the
# file kept is that task up to its goal.
# Exit status: 0 done, 1 a check or control failed, 2 usage or tools.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/proofs/wpcoq
COQFLAGS='-q -w -notation-overridden,-ambiguous-paths,-deprecated-instance-without-locality'
CPP="-I$ROOT/include -I$ROOT/ref -D_POSIX_C_SOURCE=200809L -idirafter /usr/include"

QUESTION=proofs/wpcoq/question.c
HEADERS="proofs/acsl/cluster.h ref/sampling/kernels.h"
OUT=$HERE/gen/WpAcsl.v

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

# export_from DEST [HEADER PLANTED]: WP's translation of the definitions
# the question's lemma uses into DEST, from the tree's headers, or with
# HEADER (one of HEADERS) read from the file PLANTED instead.
export_from() {
    rm -rf "$tmp/task" "$tmp/src" "$tmp/wp"
    mkdir -p "$tmp/task" "$tmp/src/$(dirname "$QUESTION")"
    cp "$ROOT/$QUESTION" "$tmp/src/$QUESTION"
    for h in $HEADERS; do
        mkdir -p "$tmp/src/$(dirname "$h")"
        cp "$ROOT/$h" "$tmp/src/$h"
    done
    [ $# -eq 1 ] || cp "$3" "$tmp/src/$2"
    if ! WHY3CONFIG="$tmp/why3.conf" frama-c -cpp-extra-args="$CPP" -wp \
            -wp-model typed+real -wp-prop=export_acsl -wp-prover CoqExport \
            -wp-cache none -wp-out "$tmp/wp" "$tmp/src/$QUESTION" </dev/null >"$tmp/wp.log" 2>&1; then
        cat "$tmp/wp.log" >&2
        echo "proofs/wpcoq/export.sh: WP failed on $QUESTION" >&2
        exit 2
    fi
    set -- "$1" "$tmp"/task/*.v
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
case "$mode" in
write)
    export_from "$tmp/WpAcsl.v"
    mkdir -p "$HERE/gen"
    mv "$tmp/WpAcsl.v" "$OUT"
    echo "proofs/wpcoq/export.sh: wrote proofs/wpcoq/gen/WpAcsl.v"
    ;;
--check)
    export_from "$tmp/WpAcsl.v"
    if cmp -s "$tmp/WpAcsl.v" "$OUT"; then
        echo "proofs/wpcoq/export.sh: WpAcsl.v is WP's translation of the ACSL of $(echo $HEADERS | sed 's/ / and /')"
    else
        diff -u "$OUT" "$tmp/WpAcsl.v" | head -40 >&2 || true
        echo "proofs/wpcoq/export.sh: proofs/wpcoq/gen/WpAcsl.v is not WP's translation of the ACSL today; run sh proofs/wpcoq/export.sh, then make the joints agree" >&2
        status=1
    fi
    ;;
--controls)
    # Each control, a line HEADER@NAME@JOINT@THEOREM@FROM@TO of
    # controls.txt: in a copy of HEADER the text FROM (a fixed string that
    # must occur there once) becomes TO, which changes one definition that
    # THEOREM of proofs/coq/JOINT proves equal to (or to give) the Coq
    # theorems'.  It is caught when JOINT then fails to compile, first in
    # THEOREM (Coq stops at the first proof that fails).
    grep -v '^#' "$HERE/controls.txt" >"$tmp/controls"
    while IFS='@' read -r header control joint theorem from to; do
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
        export_from "$tmp/gen/WpAcsl.v" "$header" "$tmp/planted.h"
        if cmp -s "$tmp/gen/WpAcsl.v" "$OUT"; then
            echo "proofs/wpcoq/export.sh: control $control: WP's translation did not change" >&2
            status=1
            continue
        fi
        cp "$ROOT/proofs/coq/$joint" "$tmp/gen/$joint"
        # shellcheck disable=SC2086
        if ! (cd "$tmp/gen" && coqc $COQFLAGS -Q "$HERE/lib" "" -Q . Wp WpAcsl.v </dev/null); then
            echo "proofs/wpcoq/export.sh: control $control: its WpAcsl.v does not compile" >&2
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
exit $status
