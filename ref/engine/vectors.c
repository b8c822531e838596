/* ref/engine/vectors.c: the vectors of an algorithm's typed work struct
 * (GSL's _alloc): every buffer a zero-filled block of its own, named by
 * the struct's field, never an offset into a shared array.
 */
#include <stdlib.h>
#include "engine/engine.h"

int pflref_vectors_alloc(size_t n, double **const slots[], size_t count)
{
    for (size_t k = 0; k < count; k++) {
        *slots[k] = NULL;
        if (n == 0)
            continue;
        *slots[k] = calloc(n, sizeof **slots[k]);
        if (*slots[k] == NULL)
            return -1;
    }
    return 0;
}
