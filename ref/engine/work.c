/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/engine/work.c: the typed workspaces' buffers (ref/engine/work.h):
 * zero-filled allocations of a given shape, recorded in the workspace's
 * list so that one function frees any workspace.
 *
 * A shape whose byte count does not fit a size_t is refused before calloc
 * sees it, as the driver refuses its own buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include "engine/work.h"

/* calloc(rows·cols) elements of `size` bytes, recorded in list; NULL (the
 * list marked failed) on an empty shape, an overflow, a full list or when
 * out of memory. */
static void *work_calloc(pflref_work *list, size_t rows, size_t cols,
                         size_t size)
{
    void *p = NULL;
    if (rows > 0 && cols > 0 && rows <= SIZE_MAX / cols / size &&
        list->n < PFLREF_WORK_MAX_BUFFERS)
        p = calloc(rows * cols, size);
    if (p == NULL)
        list->failed = 1;
    else {
        list->buf[list->n++] = p;
        list->bytes += rows * cols * size;
    }
    return p;
}

double *pflref_work_doubles(pflref_work *list, size_t rows, size_t cols)
{
    return work_calloc(list, rows, cols, sizeof(double));
}

size_t *pflref_work_indices(pflref_work *list, size_t rows, size_t cols)
{
    return work_calloc(list, rows, cols, sizeof(size_t));
}

unsigned char *pflref_work_flags(pflref_work *list, size_t n)
{
    return work_calloc(list, n, 1, 1);
}

void pflref_work_free(void *work)
{
    pflref_work *list = work;   /* the workspace's first member */
    if (list == NULL)
        return;
    for (size_t b = 0; b < list->n; b++)
        free(list->buf[b]);
    free(work);
}

void *pflref_work_ready(void *work)
{
    const pflref_work *list = work;
    if (list != NULL && list->failed) {
        pflref_work_free(work);
        return NULL;
    }
    return work;
}
