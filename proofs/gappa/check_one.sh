#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# proofs/gappa/check_one.sh SCRIPT.g: step 0 of proofs/run.sh for one Gappa
# script.  It prints one line for the script and one for its control, and
# exits 1 when the script's bound is not proved, or its control proves, or
# Gappa fails otherwise.
#
#   * A script marked "# check: enclosure" (goals `|e| in ?`) is checked by
#     proofs/gappa/enclosure.py: Gappa's proved enclosures against the
#     bounds on its "# goal:" lines.
#   * Any other script must prove as it stands (its goals `|e| <= B`).
#   * A script with a "# control: C" line (C not none) is run again with
#     the bound ending its proposition replaced by C: Gappa must refuse it
#     with its own "some properties were not satisfied".
#   * Gappa runs through proofs/gappa/memo.py (enclosure.py likewise):
#     where proofs/run.sh names answer folders in the environment, Gappa's
#     recorded answer to the identical script stands in for a run.
g=$1
here=$(dirname "$0")
bound=$(sed -n 's/^# bound: //p' "$g" | head -n 1)
st=0
if grep -q '^# check: enclosure' "$g"; then
    if out=$(python3 "$here/enclosure.py" "$g" 2>&1); then
        echo "proofs: gappa: $g proved (enclosures): $bound"
    else
        echo "proofs: gappa: $g NOT PROVED (enclosures): $bound"
        printf '%s\n' "$out" | head -n 10
        st=1
    fi
elif out=$(python3 "$here/memo.py" "$g" 2>&1); then
    echo "proofs: gappa: $g proved: $bound"
else
    echo "proofs: gappa: $g NOT PROVED: $bound"
    printf '%s\n' "$out" | head -n 10
    st=1
fi
control=$(sed -n 's/^# control: //p' "$g" | head -n 1)
case "$control" in
    ""|none|"none "*) exit $st ;;
esac
tight=$(mktemp)
# the proposition's line ends with the goal: its bound replaced by the
# control's
sed "/^{ / s/<= [^ ]* }\$/<= $control }/" "$g" >"$tight"
if cmp -s "$g" "$tight"; then
    echo "proofs: gappa: $g: its proposition does not end with '|e| <= B }'"
    st=1
elif out=$(python3 "$here/memo.py" "$tight" 2>&1); then
    echo "proofs: gappa: control $g: the bound $control proves too (want a failure)"
    st=1
elif printf '%s\n' "$out" | grep -q "some properties were not satisfied"; then
    echo "proofs: gappa: control $g: $control is not proved, as intended"
else
    echo "proofs: gappa: control $g: gappa failed otherwise (want \"not satisfied\"):"
    printf '%s\n' "$out" | head -n 5
    st=1
fi
rm -f "$tight"
exit $st
