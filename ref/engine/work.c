/* ref/engine/work.c: zero-filled work buffers of a given shape, for the
 * algorithms' typed workspaces (ref/engine/work.h).
 *
 * Every buffer is calloc'd, so a workspace starts zero-filled: state kept
 * in it across rounds (PFLEGO's Adam moments, IFCA's cluster models before
 * `init` fills them) starts at 0.  A shape whose byte count does not fit a
 * size_t is refused (NULL) before calloc sees it.
 */
#include <stdint.h>
#include <stdlib.h>
#include "engine/work.h"

/* calloc(rows·cols) elements of `size` bytes, NULL on overflow, on an
 * empty shape or when out of memory. */
static void *work_calloc(size_t rows, size_t cols, size_t size)
{
    if (rows == 0 || cols == 0 || rows > SIZE_MAX / cols / size)
        return NULL;
    return calloc(rows * cols, size);
}

double *pflref_work_doubles(size_t rows, size_t cols)
{
    return work_calloc(rows, cols, sizeof(double));
}

size_t *pflref_work_indices(size_t rows, size_t cols)
{
    return work_calloc(rows, cols, sizeof(size_t));
}

unsigned char *pflref_work_flags(size_t n)
{
    return work_calloc(n, 1, 1);
}
