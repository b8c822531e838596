/* ref/engine/work.h: the zero-filled buffers of the algorithms' typed
 * workspaces (GSL's `_alloc`: each algorithm's work_alloc hook allocates
 * its named buffers with these, once, before `init`).  Private to ref/.
 * Floor: engine.
 */
#ifndef PFLREF_ENGINE_WORK_H
#define PFLREF_ENGINE_WORK_H

#include <stddef.h>

/* rows×cols doubles, zero-filled (calloc), or NULL when rows or cols is 0,
 * when rows·cols·sizeof(double) overflows a size_t, or when out of memory.
 * Free with free(). */
double *pflref_work_doubles(size_t rows, size_t cols);

/* rows×cols size_t integers, zero-filled; NULL as for pflref_work_doubles. */
size_t *pflref_work_indices(size_t rows, size_t cols);

/* n bytes, zero-filled; NULL when n is 0 or out of memory. */
unsigned char *pflref_work_flags(size_t n);

#endif
