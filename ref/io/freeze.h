/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/freeze.h: the pieces of pflref_freeze_text (internal;
 * ref/io/freeze.c builds the vector, ref/io/freeze_write.c writes its
 * problem and its text). */
#ifndef PFLREF_IO_FREEZE_H
#define PFLREF_IO_FREEZE_H

#include <jansson.h>
#include "pflref/problem.h"
#include "pflref/status.h"

/* The vector spec's "problem", made explicit and portable:
 *   {"generator": …}  → {"clients": [...]}, the clients of `problem` (the
 *                       generator's draw) inline, so nothing is drawn;
 *   {"file": PATH}    → PATH resolved against base_dir (NULL: ".") and
 *                       written relative to vector_dir, the folder the
 *                       vector will be written in (NULL: as an absolute
 *                       path); an absolute PATH stays as it is;
 *   {"clients": …}    → unchanged.
 * Errors: PFLREF_EIO naming problem.file or opt.vector_dir when a path
 * does not resolve, PFLREF_ENOMEM. */
pflref_status pflref_freeze_problem(json_t *vspec,
                                    const pflref_problem *problem,
                                    const char *base_dir,
                                    const char *vector_dir,
                                    pflref_error *err);

/* The text of a vector (malloc'd, NUL-terminated, ending in a newline; NULL
 * when memory is short): one member per line, each record of
 * expected.trajectory on a line of its own; doubles with 17 significant
 * digits, so every number reads back exactly. */
char *pflref_freeze_dump(const json_t *vector);

#endif
