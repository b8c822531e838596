/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/core/version.c: the library's version at run time (pflref/version.h).
 * Bindings that load libpflref.so (the Python package) ask it here rather
 * than repeat the number. */
#include "pflref/version.h"

const char *pflref_version(void)
{
    return PFLREF_VERSION;
}
