/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/sha256.h: SHA-256 (internal). */
#ifndef PFLREF_SHA256_H
#define PFLREF_SHA256_H
#include <stddef.h>
/* out := the 64 lower-case hex digits of SHA-256(data[0..len−1]). */
void pflref_sha256_hex(const unsigned char *data, size_t len, char out[65]);

/* The same digest of data given in pieces (a file as it is written):
 * pflref_sha256_begin (NULL when out of memory), any number of
 * pflref_sha256_update, then pflref_sha256_end, which writes the 64 hex
 * digits and frees the context: 1, or 0 when libcrypto failed (out then
 * holds no digest).  pflref_sha256_end(NULL, out) returns 0. */
typedef struct pflref_sha256_stream pflref_sha256_stream;
pflref_sha256_stream *pflref_sha256_begin(void);
void pflref_sha256_update(pflref_sha256_stream *s, const void *data,
                          size_t len);
int pflref_sha256_end(pflref_sha256_stream *s, char out[65]);

/* 1 when `file` is a regular file (not a link) of `bytes` bytes whose
 * SHA-256 is the 64 hex digits `sha256`: the file a manifest entry
 * ({path, sha256, bytes}) describes, unchanged since it was written;
 * else 0 (absent, another kind of file, another size or digest, a read
 * error). */
int pflref_sha256_file_is(const char *file, long long bytes,
                          const char *sha256);
#endif
