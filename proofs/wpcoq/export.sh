#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/wpcoq/export.sh: WP's own Coq translation of the ACSL definitions
# that proofs/coq/Bipartition.v transcribes (proofs/wpcoq/README.md).
#
#   sh proofs/wpcoq/export.sh             write proofs/wpcoq/gen/WpCluster.v
#   sh proofs/wpcoq/export.sh --check     exit 1 unless that file is what WP
#                                         prints today (proofs/run.sh)
#   sh proofs/wpcoq/export.sh --controls  the negative controls: each plants
#                                         a change in a copy of
#                                         proofs/acsl/cluster.h, exports it,
#                                         and must make proofs/coq/
#                                         ClusterJoint.v fail to compile
#                                         (needs proofs/coq compiled)
#
# How: WP is asked to prove the (false) lemma of proofs/wpcoq/cluster.c
# with one prover, declared in a Why3 configuration of this run only: its
# driver is proofs/wpcoq/coq.drv (Why3's Coq printer, no realizations) and
# its command copies the file Why3 prints for the goal, instead of proving
# anything.  The task holds every definition the lemma uses, as Why3 sends
# it to Z3 and CVC4 in the proofs of proofs/run.sh (same model,
# typed+real: the model of the `cluster real` job, the one whose goals
# mention edge_first); the file kept is that task up to its goal.
# Exit status: 0 done, 1 a check or control failed, 2 usage or tools.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/proofs/wpcoq
OUT=$HERE/gen/WpCluster.v
COQFLAGS='-q -w -notation-overridden,-ambiguous-paths,-deprecated-instance-without-locality'

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

# export HEADER DEST: WP's translation of HEADER's definitions into DEST.
export_from() {
    rm -rf "$tmp/task" "$tmp/src" "$tmp/wp"
    mkdir -p "$tmp/task" "$tmp/src/wpcoq" "$tmp/src/acsl"
    cp "$HERE/cluster.c" "$tmp/src/wpcoq/cluster.c"
    cp "$1" "$tmp/src/acsl/cluster.h"
    if ! WHY3CONFIG="$tmp/why3.conf" frama-c -wp -wp-model typed+real \
            -wp-prop=export_cluster -wp-prover CoqExport -wp-cache none \
            -wp-out "$tmp/wp" "$tmp/src/wpcoq/cluster.c" >"$tmp/wp.log" 2>&1; then
        cat "$tmp/wp.log" >&2
        echo "proofs/wpcoq/export.sh: WP failed on $1" >&2
        exit 2
    fi
    set -- "$2" "$tmp"/task/*.v
    if [ $# -ne 2 ] || [ ! -f "$2" ]; then
        cat "$tmp/wp.log" >&2
        echo "proofs/wpcoq/export.sh: WP printed $(($# - 1)) tasks, not one" >&2
        exit 2
    fi
    # the task up to its goal (the definitions; the false lemma is not kept)
    sed '/^(\* Why3 goal \*)$/,$d' "$2" >"$1"
    grep -q '^Definition P_edge_first' "$1" ||
        { echo "proofs/wpcoq/export.sh: no edge_first in WP's task" >&2; exit 2; }
}

case "$mode" in
write)
    export_from "$ROOT/proofs/acsl/cluster.h" "$tmp/WpCluster.v"
    mkdir -p "$HERE/gen"
    mv "$tmp/WpCluster.v" "$OUT"
    echo "proofs/wpcoq/export.sh: wrote $OUT"
    ;;
--check)
    export_from "$ROOT/proofs/acsl/cluster.h" "$tmp/WpCluster.v"
    if ! cmp -s "$tmp/WpCluster.v" "$OUT"; then
        diff -u "$OUT" "$tmp/WpCluster.v" | head -40 >&2 || true
        echo "proofs/wpcoq/export.sh: $OUT is not WP's translation of proofs/acsl/cluster.h today; run sh proofs/wpcoq/export.sh, then make the Coq proofs agree" >&2
        exit 1
    fi
    echo "proofs/wpcoq/export.sh: WpCluster.v is WP's translation of proofs/acsl/cluster.h"
    ;;
--controls)
    # Each control: NAME@THEOREM@FROM@TO: the text FROM (a fixed string
    # that must occur once in cluster.h) becomes TO, which changes one
    # definition that THEOREM proves equal to (or to give) Bipartition.v's.
    # It is caught when ClusterJoint.v then fails to compile, first in
    # THEOREM (Coq stops at the first proof that fails).
    status=0
    while IFS='@' read -r name theorem from to; do
        [ -n "$name" ] || continue
        if [ "$(grep -cF -- "$from" "$ROOT/proofs/acsl/cluster.h")" != 1 ]; then
            echo "proofs/wpcoq/export.sh: control $name: its text is not in proofs/acsl/cluster.h once" >&2
            status=1
            continue
        fi
        awk -v f="$from" -v t="$to" '{ i = index($0, f)
                if (i) $0 = substr($0, 1, i - 1) t substr($0, i + length(f))
                print }' "$ROOT/proofs/acsl/cluster.h" >"$tmp/cluster.h"
        mkdir -p "$tmp/gen"
        export_from "$tmp/cluster.h" "$tmp/gen/WpCluster.v"
        if cmp -s "$tmp/gen/WpCluster.v" "$OUT"; then
            echo "proofs/wpcoq/export.sh: control $name: WP's translation did not change" >&2
            status=1
            continue
        fi
        cp "$ROOT/proofs/coq/ClusterJoint.v" "$tmp/gen/ClusterJoint.v"
        # shellcheck disable=SC2086
        if ! (cd "$tmp/gen" && coqc $COQFLAGS -Q "$HERE/lib" "" -Q . Wp WpCluster.v); then
            echo "proofs/wpcoq/export.sh: control $name: its WpCluster.v does not compile" >&2
            status=1
        # shellcheck disable=SC2086
        elif (cd "$tmp/gen" && coqc $COQFLAGS -Q "$HERE/lib" "" -Q . Wp \
                -Q "$ROOT/proofs/coq" Pflref ClusterJoint.v >"$tmp/coq.log" 2>&1); then
            echo "proofs/wpcoq/export.sh: control $name NOT caught: ClusterJoint.v still compiles" >&2
            status=1
        else
            line=$(sed -n 's/^File .*, line \([0-9]*\),.*/\1/p' "$tmp/coq.log" | head -1)
            failed=$(awk -v n="${line:-0}" 'NR <= n && /^(Theorem|Lemma|Corollary) / { t = $2 }
                                              END { print t }' "$ROOT/proofs/coq/ClusterJoint.v")
            if [ "$failed" = "$theorem" ]; then
                echo "proofs/wpcoq/export.sh: control $name caught: ClusterJoint.v fails in $theorem (line $line)"
            else
                sed 's/^/  /' "$tmp/coq.log" >&2
                echo "proofs/wpcoq/export.sh: control $name: ClusterJoint.v fails in ${failed:-no theorem}, not $theorem" >&2
                status=1
            fi
        fi
        rm -rf "$tmp/gen"
    done <<'EOF'
edge_first_order@edge_first_joint@alpha[edge_pos(a1, b1, m)] > alpha[edge_pos(a2, b2, m)]@alpha[edge_pos(a1, b1, m)] < alpha[edge_pos(a2, b2, m)]
last_edge_sides@last_edge_joint@!edge_first(alpha, m, parent[c], c, parent[v], v)@!edge_first(alpha, m, parent[v], v, parent[c], c)
ranked_tree_rank@ranked_tree_joint@prim_rank[parent[v]] < prim_rank[v]@prim_rank[parent[v]] <= prim_rank[v]
in_subtree_root@in_subtree_joint@v != 0 && v != c && in_subtree(parent, c, parent[v])@v != c && in_subtree(parent, c, parent[v])
subtree_sides_side@subtree_sides_joint@(side[v] == 1 <==> in_subtree(parent, c, v))@(side[v] == 0 <==> in_subtree(parent, c, v))
prim_perm_slot@prim_perm_joint@0 <= prim_order[k] < m && prim_slot[prim_order[k]] == k@0 <= prim_order[k] < m && prim_slot[prim_order[k]] == k + 1
prim_joined_slot@prim_joined_joint@(in_tree[v] != 0 <==> prim_slot[v] < added)@(in_tree[v] != 0 <==> prim_slot[v] <= added)
best_link_tree@best_link_joint@0 <= u < m && in_tree[u] != 0 ==>@0 <= u < m && in_tree[u] == 0 ==>
EOF
    exit $status
    ;;
esac

