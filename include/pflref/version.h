/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pflref/version.h: the library version, in the one place it is written.
 *
 * Everything else reads it from here: `pflref --version` and every
 * result's build.pflref (ref/io/build_info.c), the shared library's soname
 * libpflref.so.MAJOR and its file libpflref.so.VERSION, the pkg-config file
 * pflref.pc (the Makefile reads the string below), and the Python package
 * (through pflref_version()).  tests/test_version.c asserts they agree.
 * Numbering: MAJOR.MINOR.PATCH (semver); MAJOR changes with the ABI.
 */
#ifndef PFLREF_VERSION_H
#define PFLREF_VERSION_H

#define PFLREF_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked in, PFLREF_VERSION as it was compiled
 * (a static string; a program built against one header and run with
 * another shared library sees the library's). */
const char *pflref_version(void);

#ifdef __cplusplus
}
#endif
#endif
