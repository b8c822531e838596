#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# deps.sh: install the Debian 12 packages that a make target runs, and do
# nothing when they are all present already.
#
#   ./deps.sh [GROUP...]      (no group: core)
#
#   core      compilers (gcc, and g++ for the C++ header test), make,
#             pkg-config, GSL, OpenBLAS, Check, jansson, OpenSSL's
#             libcrypto (SHA-256), zlib and libzip (.npz archives), python3
#             with numpy, jsonschema and pytest (the Python package's tests)
#             and pip (its test of `pip install ./python` into a venv),
#             man-db (make check-install renders pflref(1)), gnuplot-nox
#             (the plot suite runs pflref plot; the progress suite uses
#             script(1) of the essential bsdutils): make all, demo,
#             check, golden, install
#   lint      cppcheck, python3: make lint
#   coverage  gcovr: make coverage (with core)
#   asan      the ASan and UBSan runtimes: make check-asan (with core)
#   valgrind  valgrind: make check-valgrind (with core)
#   fuzz      clang, its libFuzzer runtime, llvm (llvm-symbolizer for
#             readable reports): make fuzz, make fuzz-smoke (with core)
#   proofs    Frama-C, Why3, Z3, CVC4 and the C preprocessor; Coq with
#             mathcomp's ssreflect library and Coquelicot; Gappa (the
#             floating-point bounds of proofs/gappa/) and python3 (their
#             generators): make proofs
#   torch     PyTorch and pytest for the PyTorch example
#             (docs/examples/pytorch/): make check-torch (with core)
#   bench     PyTorch (CPU, the fp64 contender), gnuplot (the plot),
#             linux-perf (profiles), GNU time (peak RSS): make bench
#             (with core)
#   plot      gnuplot (no X): pflref plot, make demo's figure (with core)
#   site      gnuplot, python3-markdown (the pages), libjs-katex and
#             nodejs (their mathematics, typeset at build time), Debian's
#             chromium and python3-websocket (the headless test): make
#             site, make check-site (with core)
#
# Every target of the Makefile that runs a tool calls this script first with
# its groups.  Only missing packages are installed; when everything is
# present the script prints nothing, does not touch apt, and exits 0.  Run
# as root (or with sudo available).  Exit status: 0 ok, 1 install failed,
# 2 unknown group.
set -eu

CORE="make gcc g++ pkg-config libgsl-dev libopenblas-dev check libsubunit-dev \
libjansson-dev libssl-dev zlib1g-dev libzip-dev python3 python3-numpy \
python3-jsonschema python3-pytest python3-pip python3-setuptools man-db \
gnuplot-nox"
LINT="cppcheck python3"
COVERAGE="gcovr"
ASAN="libasan8 libubsan1"
VALGRIND="valgrind"
FUZZ="clang libclang-rt-14-dev llvm"
PROOFS="gcc make frama-c-base why3 z3 cvc4 coq libcoq-mathcomp-ssreflect \
libcoq-coquelicot gappa python3"
TORCH="python3-torch python3-pytest"
BENCH="python3-torch gnuplot-nox linux-perf time"
PLOT="gnuplot-nox fonts-dejavu-core"
SITE="gnuplot-nox chromium fonts-dejavu-core python3-markdown python3-websocket \
libjs-katex nodejs"

[ $# -eq 0 ] && set -- core
want=""
for group in "$@"; do
    case "$group" in
        core) want="$want $CORE" ;;
        lint) want="$want $LINT" ;;
        coverage) want="$want $COVERAGE" ;;
        asan) want="$want $ASAN" ;;
        valgrind) want="$want $VALGRIND" ;;
        fuzz) want="$want $FUZZ" ;;
        proofs) want="$want $PROOFS" ;;
        torch) want="$want $TORCH" ;;
        bench) want="$want $BENCH" ;;
        plot) want="$want $PLOT" ;;
        site) want="$want $SITE" ;;
        *) echo "deps.sh: unknown group '$group' (known: core, lint," \
                "coverage, asan, valgrind, fuzz, proofs, torch, bench, plot, site)" >&2
           exit 2 ;;
    esac
done

# One dpkg-query for every package: the names of those installed.
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $want 2>/dev/null \
             | awk '$NF == "installed" { printf "%s ", $1 }' || true) "
missing=""
for p in $want; do
    case "$installed$missing " in *" $p "*) continue ;; esac
    missing="$missing $p"
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
