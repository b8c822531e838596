#!/bin/sh
# deps.sh: install the Debian 12 packages pflref needs, and do nothing when
# they are all present already.
#
#   ./deps.sh            core: compiler, GSL, OpenBLAS, Check, jansson, gcovr,
#                        valgrind, clang + libFuzzer runtime, python3-numpy,
#                        python3-jsonschema (schema checks of the formats)
#   ./deps.sh proofs     core + Frama-C, Why3, Z3, CVC4 (for `make proofs`)
#
# Only missing packages are installed; when everything is present the script
# prints nothing and exits 0 without touching apt.  Run as root (or with sudo
# available).  Exit status: 0 ok, 1 install failed.
set -eu

CORE="make gcc pkg-config libgsl-dev libopenblas-dev check libsubunit-dev \
libjansson-dev gcovr valgrind clang libclang-rt-14-dev llvm python3 python3-numpy \
python3-jsonschema"
PROOFS="frama-c-base why3 z3 cvc4"

want="$CORE"
for group in "$@"; do
    case "$group" in
        core) ;;
        proofs) want="$want $PROOFS" ;;
        *) echo "deps.sh: unknown group '$group' (known: core, proofs)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $want; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *" installed") ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "deps.sh: missing packages and not root (no sudo):$missing" >&2; exit 1
    fi
fi
# The lock timeout lets a concurrent apt run (unattended upgrades) finish first.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq update
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq \
    install -y --no-install-recommends $missing >/dev/null
echo "deps.sh: done"
