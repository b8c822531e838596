#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/kernels.sh: the checks whose tolerances the BLAS kernel could break,
# under every OpenBLAS x86-64 kernel this processor can run (make
# check-kernels, part of make check).
#
# OpenBLAS chooses its kernel for the processor at run time, and the kernels
# sum in different orders, so the reference's last bits differ from one
# machine to another (a processor OpenBLAS does not recognise even falls back
# to the generic Prescott kernel).  A tolerance tuned on one machine can then
# fail on another.  Here every kernel the processor supports is forced in
# turn (OPENBLAS_CORETYPE) and runs `pflref verify golden` and the Python
# tests that compare the C with exact replays on random problems.
#
# Environment: PFLREF_CLI, PFLREF_LIB (build/rel), PYTHON.  Exit 0 when all
# pass under every kernel, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
CLI=$(realpath "${PFLREF_CLI:-build/rel/pflref}")
LIB=$(realpath "${PFLREF_LIB:-build/rel/libpflref.so}")
PY=${PYTHON:-/usr/bin/python3}
if [ "$(uname -m)" != x86_64 ]; then
    echo "check-kernels: not an x86-64 processor; OpenBLAS's kernel is not forced ($(uname -m))"
    exit 0
fi
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do case $flags in *" $f "*) ;; *) return 1 ;; esac; done; }
fail=0
ran=""
# kernel : the processor flags it needs
for k in Prescott:pni Nehalem:sse4_2 Sandybridge:avx Haswell:avx2,fma \
         SkylakeX:avx512f,avx512bw,avx512dq,avx512vl Cooperlake:avx512f,avx512bw,avx512dq,avx512vl,avx512_bf16; do
    name=${k%%:*}
    # shellcheck disable=SC2046
    has $(echo "${k#*:}" | tr ',' ' ') || continue
    got=$(OPENBLAS_CORETYPE=$name "$CLI" --version | grep -o "NO_AFFINITY [A-Za-z]*" | cut -d' ' -f2)
    if [ "$got" != "$name" ]; then
        echo "check-kernels: OPENBLAS_CORETYPE=$name gave the $got kernel"; fail=1; continue
    fi
    if ! out=$(OPENBLAS_CORETYPE=$name "$CLI" verify golden 2>&1); then
        printf '%s\n' "$out"; echo "check-kernels: $name: verify golden failed"; fail=1
    fi
    if ! out=$(cd python && OPENBLAS_CORETYPE=$name PYTHONDONTWRITEBYTECODE=1 \
               PFLREF_LIB=$LIB PFLREF_CLI=$CLI "$PY" -m pytest -q -rfE -p no:cacheprovider \
               tests/test_lora_exact.py tests/test_pfedhn_exact.py \
               tests/test_fedfomo_exact.py tests/test_vectors.py 2>&1); then
        printf '%s\n' "$out"; echo "check-kernels: $name: the exact replays failed"; fail=1
    fi
    ran="$ran $name"
done
[ -n "$ran" ] || { echo "check-kernels: no kernel ran"; exit 1; }
[ "$fail" -eq 0 ] && echo "check-kernels: verify golden and the exact replays pass under the OpenBLAS kernels$ran"
exit "$fail"
