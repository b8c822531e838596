/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/models/memory.c: how much memory a run may still use, so that the
 * limits of a run come from the machine rather than from fixed constants
 * (docs/performance.md, "Limits by memory").
 *
 * Method, first that applies:
 *   1. PFLREF_MEMORY_LIMIT, a decimal byte count (tests and users pin the
 *      limit with it; 0 or anything but digits is refused, so a typo
 *      never lifts the limit silently);
 *   2. MemAvailable of /proc/meminfo (Linux: memory that can be given to
 *      a process without swapping, page cache included);
 *   3. sysconf(_SC_AVPHYS_PAGES) · page size.
 * Cap: a finite soft RLIMIT_AS, less the address space already mapped
 * (VmSize of /proc/self/statm), bounds the result too.
 *
 * The answer is read once per call; nothing is cached (no static state).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/args.h"
#include "models/models.h"

/* PFLREF_MEMORY_LIMIT parsed into *bytes: 1 when set and valid, 0 when
 * unset, −1 when set but not a positive decimal integer. */
static int env_limit(size_t *bytes)
{
    const char *s = getenv("PFLREF_MEMORY_LIMIT");
    if (s == NULL)
        return 0;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v == 0 || v > SIZE_MAX)
        return -1;
    *bytes = (size_t)v;
    return 1;
}

size_t pflref_memory_pinned(void)
{
    size_t bytes;
    return env_limit(&bytes) == 1 ? bytes : SIZE_MAX;
}

/* MemAvailable of /proc/meminfo in bytes; 0 when unknown. */
static size_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    char line[256];
    size_t bytes = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long kb;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            bytes = kb > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kb * 1024;
            break;
        }
    }
    fclose(f);
    return bytes;
}

/* The address space left under a finite soft RLIMIT_AS; SIZE_MAX when
 * there is no such limit. */
static size_t address_space_left(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return SIZE_MAX;
    size_t used = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        unsigned long long pages;
        long page = sysconf(_SC_PAGESIZE);
        if (fscanf(f, "%llu", &pages) == 1 && page > 0)
            used = (size_t)pages * (size_t)page;
        fclose(f);
    }
    return rl.rlim_cur > used ? (size_t)(rl.rlim_cur - used) : 0;
}

pflref_status pflref_memory_available(size_t *bytes, const char **source,
                                      pflref_error *err)
{
    pflref_status st = pflref_arg_nonnull(err, "bytes", bytes);
    if (st != PFLREF_OK)
        return st;
    const char *from = "PFLREF_MEMORY_LIMIT";
    int env = env_limit(bytes);
    if (env < 0)
        return pflref_error_set(err, PFLREF_EINVAL, "PFLREF_MEMORY_LIMIT",
                                "PFLREF_MEMORY_LIMIT is \"%s\", not a "
                                "positive number of bytes",
                                getenv("PFLREF_MEMORY_LIMIT"));
    if (env == 0) {
        from = "MemAvailable";
        *bytes = meminfo_available();
        if (*bytes == 0) {
            long pages = sysconf(_SC_AVPHYS_PAGES);
            long page = sysconf(_SC_PAGESIZE);
            from = "sysconf";
            *bytes = pages > 0 && page > 0
                         ? (size_t)pages * (size_t)page
                         : SIZE_MAX;
        }
        size_t as = address_space_left();
        if (as < *bytes) {
            *bytes = as;
            from = "RLIMIT_AS";
        }
    }
    if (source != NULL)
        *source = from;
    return PFLREF_OK;
}

size_t pflref_model_workspace_bytes(const pflref_model *m, size_t max_batch)
{
    if (m == NULL || m->kind == PFLREF_MODEL_QUADRATIC)
        return sizeof(pflref_model_workspace);
    /* Xb nb·d, yb nb, Z and RZ nb·k, A, H, RH and T nb·h each, bn 4h
     * (batch.c); a layer list: its layer buffers instead of A .. bn */
    const int layers = m->kind == PFLREF_MODEL_LAYERS;
    const size_t h = layers ? 0 : m->h;
    size_t nd, nk, nh, total = 0, extra = 0, ns = 0;
    if ((layers && !pflref_layers_ws_layout(m, max_batch, NULL, NULL, NULL,
                                            &extra, &ns)) ||
        ns > SIZE_MAX / sizeof(size_t) / 2 ||
        !pflref_size_mul(max_batch, m->d, &nd) ||
        !pflref_size_mul(max_batch, m->k, &nk) ||
        !pflref_size_mul(max_batch, h, &nh) || nk > SIZE_MAX / 2 ||
        nh > SIZE_MAX / 4 || !pflref_size_add(&total, nd) ||
        !pflref_size_add(&total, max_batch) ||
        !pflref_size_add(&total, 2 * nk) || !pflref_size_add(&total, 4 * nh) ||
        h > SIZE_MAX / 4 || !pflref_size_add(&total, 4 * h) ||
        !pflref_size_add(&total, extra) ||
        !pflref_size_add(&total, (ns * sizeof(size_t) + sizeof(double) - 1) /
                                     sizeof(double)) ||
        total > (SIZE_MAX - sizeof(pflref_model_workspace)) / sizeof(double))
        return SIZE_MAX;
    return total * sizeof(double) + sizeof(pflref_model_workspace);
}
