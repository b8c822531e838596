/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy_write.c: a '<f8' .npy file as np.save writes it
 * (ref/io/npy_write.h; the format: NumPy's NEP 1, "A simple file format
 * for NumPy arrays", and numpy/lib/format.py of NumPy 1.24).
 *
 * Layout (format version 1.0):
 *   "\x93NUMPY" 0x01 0x00        magic and version
 *   HLEN                         2 bytes, little-endian: the header's
 *                                length, padding and '\n' included
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (R, C), }
 *                                the dict, keys sorted, each "'k': v, "
 *                                (shape (R,) for 1-D)
 *   21 − len(str(R)) spaces      NumPy's spare room to grow the first
 *                                axis in place (GROWTH_AXIS_MAX_DIGITS)
 *   padding spaces, then '\n'    so that 10 + HLEN is a multiple of 64:
 *                                pad = 64 − ((10 + len + 1) mod 64),
 *                                which is 64, not 0, when it divides
 *                                already (format.py's _wrap_header)
 *   the doubles, row-major, little-endian
 * The reader (ref/io/npy.c) maps such a file and uses it in place.
 *
 * The bytes are put together in one buffer, hashed, then handed to the
 * guarded writer (ref/io/write.c).  Cost: one copy of the data and one
 * pass of SHA-256 over it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/io.h"
#include "io/npy_write.h"
#include "io/sha256.h"

/* NumPy's ARRAY_ALIGN and GROWTH_AXIS_MAX_DIGITS (numpy/lib/format.py). */
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21
/* The magic (6), the version (2) and the length field (2) of version 1.0. */
#define NPY_PREFIX 10

/* The header (dict, spare spaces, padding, '\n') into out (size bytes):
 * its length, or 0 when it does not fit. */
static size_t header_text(size_t rows, size_t cols, char *out, size_t size)
{
    char shape[64], first[32];
    if (cols == 0)
        snprintf(shape, sizeof shape, "(%zu,)", rows);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu)", rows, cols);
    const int nfirst = snprintf(first, sizeof first, "%zu", rows);
    const int n = snprintf(out, size, "{'descr': '<f8', 'fortran_order': "
                           "False, 'shape': %s, }%*s", shape,
                           NPY_GROWTH_DIGITS - nfirst, "");
    if (n < 0 || (size_t)n >= size)
        return 0;
    const size_t hlen = (size_t)n + 1;   /* with the '\n' */
    const size_t pad = NPY_ALIGN - (NPY_PREFIX + hlen) % NPY_ALIGN;
    if ((size_t)n + pad + 1 >= size)
        return 0;
    memset(out + n, ' ', pad);
    out[(size_t)n + pad] = '\n';
    return (size_t)n + pad + 1;
}

pflref_status pflref_npy_write_f8(const char *path, const double *data,
                                  size_t rows, size_t cols, char *sha256,
                                  unsigned long long *bytes,
                                  pflref_error *err)
{
    /* test the input parameters */
    if (path == NULL || data == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path == NULL ? "path" : "data",
                                "the argument is NULL");
    if (rows == 0)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "an array of at least one number is "
                                "written (rows = 0)");
    const uint16_t probe = 1;
    if (*(const unsigned char *)&probe != 1)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "this host stores doubles big-endian: its "
                                "bytes are not '<f8'");
    const size_t n = cols == 0 ? rows : rows * cols;
    if (cols != 0 && n / cols != rows)
        return pflref_error_set(err, PFLREF_ENOMEM, path,
                                "%zu × %zu numbers overflow", rows, cols);
    if (n > (SIZE_MAX - 4096) / sizeof *data)
        return pflref_error_set(err, PFLREF_ENOMEM, path,
                                "%zu numbers are too many to write", n);
    /* the header, then the data, in one buffer */
    char header[256];
    const size_t hlen = header_text(rows, cols, header, sizeof header);
    const size_t total = NPY_PREFIX + hlen + n * sizeof *data;
    unsigned char *buf = malloc(total);
    if (hlen == 0 || buf == NULL) {
        free(buf);
        return pflref_error_set(err, PFLREF_ENOMEM, path, "out of memory");
    }
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xffu);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + NPY_PREFIX, header, hlen);
    memcpy(buf + NPY_PREFIX + hlen, data, n * sizeof *data);
    if (sha256 != NULL)
        pflref_sha256_hex(buf, total, sha256);
    if (bytes != NULL)
        *bytes = (unsigned long long)total;
    const pflref_status st = pflref_write_file_bytes(path, buf, total, err);
    free(buf);
    return st;
}
