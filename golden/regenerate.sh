#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# golden/regenerate.sh OUTDIR: run every generator (golden/*/make_*.py, with
# /usr/bin/python3) into OUTDIR, mirroring golden/'s folder layout, then say
# which regenerated files differ from the frozen ones.
#
#     golden/regenerate.sh /tmp/golden-new
#     diff -r /tmp/golden-new/fedavg golden/fedavg      # any drift, in full
#
# It never writes into golden/ (OUTDIR must be elsewhere): the goldens are
# frozen, and replacing one is a reviewed act recorded in golden/CHANGES.md
# (`make golden-update` copies the drifted files in once CHANGES.md says
# why; the generators write every vector's content hash, so a regenerated
# file carries the hash of what it now holds).
# The generators are every golden/*/make_*.py, among them layers/make_cnn.py,
# make_mlp.py, make_ce.py, make_bn.py and make_pfl.py (which import
# layers/layers_common.py; layers/check_torch.py is a check, not a generator).
# Exit status: 0 every regenerated file is identical, 1 some differ, are new
# or are no longer written by any generator, 2 usage or a generator failed.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: golden/regenerate.sh OUTDIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")
case "$out/" in
    "$here"/*) echo "regenerate.sh: OUTDIR must be outside golden/" >&2; exit 2 ;;
esac
mkdir -p "$out"

PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

for gen in "$here"/*/make_*.py; do
    [ -f "$gen" ] || continue
    dir=$(basename "$(dirname "$gen")")
    mkdir -p "$out/$dir"
    if ! /usr/bin/python3 "$gen" "$out/$dir" >/dev/null; then
        echo "regenerate.sh: golden/$dir/$(basename "$gen") failed" >&2
        exit 2
    fi
done

same=0
drift=0
for f in $(cd "$out" && find . -type f -name '*.json' | sort); do
    f=${f#./}
    if [ ! -f "$here/$f" ]; then
        echo "new:     golden/$f"
        drift=$((drift + 1))
    elif cmp -s "$out/$f" "$here/$f"; then
        same=$((same + 1))
    else
        echo "differs: golden/$f"
        drift=$((drift + 1))
    fi
done
# A vector in a generated folder that no generator writes any more.
for d in $(cd "$out" && find . -mindepth 1 -maxdepth 1 -type d | sort); do
    d=${d#./}
    for f in "$here/$d"/*.json; do
        [ -f "$f" ] || continue
        [ -f "$out/$d/$(basename "$f")" ] && continue
        echo "not regenerated: golden/$d/$(basename "$f")"
        drift=$((drift + 1))
    done
done
echo "regenerate: $same identical, $drift differ, new or not regenerated (in $out)"
[ "$drift" -eq 0 ]
