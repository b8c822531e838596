/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/build_info.c: facts about the build written into every result
 * (compiler, flags, BLAS configuration), and pinning OpenBLAS to one thread.
 *
 * OpenBLAS's own functions are declared here rather than by including its
 * <cblas.h>, which cannot share a translation unit with GSL's BLAS header
 * (TOOLING.md §1). */
#include "pflref/version.h"
#include "pflref/io.h"

char *openblas_get_config(void);
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

#ifndef PFLREF_CFLAGS
#define PFLREF_CFLAGS ""
#endif

void pflref_blas_pin_threads(void)
{
    openblas_set_num_threads(1);
}

#if defined(__clang__)
#define COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown"
#endif

void pflref_build_info_get(pflref_build_info *info)
{
    *info = (pflref_build_info){
        .version = pflref_version(),
        .compiler = COMPILER,
        .cflags = "-std=c11 -ffp-contract=off " PFLREF_CFLAGS,
        .blas = openblas_get_config(),
        .blas_threads = openblas_get_num_threads()};
}
