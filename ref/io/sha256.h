/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/sha256.h: SHA-256 (internal). */
#ifndef PFLREF_SHA256_H
#define PFLREF_SHA256_H
#include <stddef.h>
/* out := the 64 lower-case hex digits of SHA-256(data[0..len−1]). */
void pflref_sha256_hex(const unsigned char *data, size_t len, char out[65]);
#endif
