/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/canonical.h: canonical JSON and content hashes (internal). */
#ifndef PFLREF_CANONICAL_H
#define PFLREF_CANONICAL_H
#include <jansson.h>

#define PFLREF_HASH_MAX 80

/* The canonical text of v (malloc'd), or NULL when memory is short. */
char *pflref_canonical_json(const json_t *v);

/* out := "sha256:<hex>" of the canonical text of v; 0 on failure. */
int pflref_content_hash(const json_t *v, char out[PFLREF_HASH_MAX]);
#endif
