/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy_write.c: '<f8' arrays as NumPy .npy files, byte for byte what
 * np.save writes (ref/io/npy_write.h).
 *
 * Reference: numpy/lib/format.py (NumPy 1.24, Debian 12's), functions
 * _write_array_header and _wrap_header, format version 1.0:
 *   header  = "{'descr': '<f8', 'fortran_order': False, 'shape': S, }"
 *             with S Python's repr of the shape tuple: "(R,)", "(R, C)";
 *   header += " " · (GROWTH_AXIS_MAX_DIGITS − len(repr(R)))   (21 − digits,
 *             room to grow the first axis in place; NumPy ≥ 1.23);
 *   hlen    = len(header) + 1                                  (the '\n');
 *   padlen  = 64 − ((8 + 2 + hlen) mod 64)                     (ARRAY_ALIGN,
 *             MAGIC_LEN, the uint16 length; 64 when already aligned);
 *   file    = "\x93NUMPY" 0x01 0x00, uint16le(hlen + padlen), header,
 *             padlen spaces, '\n', the data.
 * The data: every number as IEEE binary64, little-endian, row-major.
 * python/tests/test_result_files.py compares the bytes with np.save.
 *
 * Cost: one pass over the numbers; on a little-endian machine the
 * numbers are written straight from the caller's arrays, elsewhere
 * through a buffer of NPY_CHUNK numbers put in little-endian order.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "io/npy_write.h"
#include "io/sha256.h"
#include "pflref/io.h"

/* numpy.lib.format's constants. */
#define NPY_ARRAY_ALIGN 64
#define NPY_GROWTH_AXIS_MAX_DIGITS 21
#define NPY_PREAMBLE 10              /* magic 6, version 2, length 2 */
/* Numbers converted at a time on a big-endian machine (64 KiB). */
#define NPY_CHUNK 8192

size_t pflref_npy_header_f8(size_t rows, size_t cols,
                            unsigned char out[PFLREF_NPY_HEADER_MAX])
{
    char *dict = (char *)out + NPY_PREAMBLE;
    const size_t room = PFLREF_NPY_HEADER_MAX - NPY_PREAMBLE;
    int n = cols == 0
                ? snprintf(dict, room, "{'descr': '<f8', 'fortran_order': "
                                       "False, 'shape': (%zu,), }", rows)
                : snprintf(dict, room, "{'descr': '<f8', 'fortran_order': "
                                       "False, 'shape': (%zu, %zu), }",
                           rows, cols);
    char digits[24];
    const int rdigits = snprintf(digits, sizeof digits, "%zu", rows);
    size_t len = (size_t)n;
    for (int k = rdigits; k < NPY_GROWTH_AXIS_MAX_DIGITS; k++)
        dict[len++] = ' ';
    const size_t hlen = len + 1;
    const size_t padlen =
        NPY_ARRAY_ALIGN - (NPY_PREAMBLE + hlen) % NPY_ARRAY_ALIGN;
    memset(dict + len, ' ', padlen);
    dict[len + padlen] = '\n';
    const size_t total = hlen + padlen;        /* the header length field */
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(total & 0xFFu);
    out[9] = (unsigned char)(total >> 8);
    return NPY_PREAMBLE + total;
}

/* 1 on a little-endian machine (binary64 in memory is '<f8'). */
static int little_endian(void)
{
    const double one = 1.0;   /* 0x3FF0000000000000: last byte 0x3F */
    unsigned char b[sizeof one];
    memcpy(b, &one, sizeof one);
    return b[sizeof one - 1] == 0x3F;
}

/* The first min(n, NPY_CHUNK) numbers of x as little-endian binary64
 * into out; returns how many. */
static size_t to_little_endian(const double *x, size_t n, unsigned char *out)
{
    size_t m = NPY_CHUNK;
    if (n < m)
        m = n;
    for (size_t j = 0; j < m; j++) {
        uint64_t u;
        memcpy(&u, &x[j], sizeof u);
        for (size_t b = 0; b < 8; b++)
            out[8 * j + b] = (unsigned char)(u >> (8 * b));
    }
    return m;
}

/* bytes[0..len) into fd and the digest. */
static pflref_status put(int fd, const char *name, pflref_sha256_stream *h,
                         const void *bytes, size_t len, pflref_error *err)
{
    pflref_write_buffer b = {bytes, len};
    pflref_sha256_update(h, bytes, len);
    return pflref_write_buffer_step(&b, fd, name, err);
}

/* x[0..n) as '<f8' into fd and the digest. */
static pflref_status put_numbers(int fd, const char *name,
                                 pflref_sha256_stream *h, const double *x,
                                 size_t n, pflref_error *err)
{
    if (little_endian())
        return put(fd, name, h, x, n * sizeof *x, err);
    unsigned char buf[NPY_CHUNK * 8];
    pflref_status st = PFLREF_OK;
    for (size_t done = 0; done < n && st == PFLREF_OK; done += NPY_CHUNK) {
        const size_t m = to_little_endian(x + done, n - done, buf);
        st = put(fd, name, h, buf, 8 * m, err);
    }
    return st;
}

pflref_status pflref_npy_write_step(void *ctx, int fd, const char *name,
                                    pflref_error *err)
{
    pflref_npy_file *f = ctx;
    size_t count = 0;
    for (size_t k = 0; k < f->n_pieces; k++)
        count += f->pieces[k].n;
    if (count != f->rows * (f->cols == 0 ? 1 : f->cols))
        return pflref_error_set(err, PFLREF_EINTERNAL, name,
                                "%s: %zu numbers for a shape of %zu × %zu "
                                "(a pflref bug: please report it)", name,
                                count, f->rows, f->cols);
    unsigned char header[PFLREF_NPY_HEADER_MAX];
    const size_t hbytes = pflref_npy_header_f8(f->rows, f->cols, header);
    pflref_sha256_stream *h = pflref_sha256_begin();
    if (h == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, name, "out of memory");
    pflref_status st = put(fd, name, h, header, hbytes, err);
    for (size_t k = 0; k < f->n_pieces && st == PFLREF_OK; k++)
        st = put_numbers(fd, name, h, f->pieces[k].x, f->pieces[k].n, err);
    const int hashed = pflref_sha256_end(h, f->sha256);
    if (st == PFLREF_OK && !hashed)
        st = pflref_error_set(err, PFLREF_ENOMEM, name,
                              "%s: the SHA-256 of the file could not be "
                              "computed (libcrypto failed)", name);
    if (st == PFLREF_OK)
        f->bytes = (unsigned long long)hbytes +
                   8ull * (unsigned long long)count;
    return st;
}

pflref_status pflref_npy_write_f8(const char *path, const double *data,
                                  size_t rows, size_t cols, char *sha256,
                                  unsigned long long *bytes,
                                  pflref_error *err)
{
    if (path == NULL || data == NULL)
        return pflref_error_set(err, PFLREF_EINVAL,
                                path == NULL ? "path" : "data",
                                "the argument is NULL");
    if (rows == 0)
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "an array of at least one number is "
                                "written (rows = 0)");
    const size_t n = cols == 0 ? rows : rows * cols;
    if (cols != 0 && n / cols != rows)
        return pflref_error_set(err, PFLREF_ENOMEM, path,
                                "%zu × %zu numbers overflow", rows, cols);
    const pflref_npy_piece piece = {data, n};
    pflref_npy_file f = {.rows = rows, .cols = cols, .pieces = &piece,
                         .n_pieces = 1};
    const pflref_status st =
        pflref_write_file_with(path, pflref_npy_write_step, &f, err);
    if (st == PFLREF_OK && sha256 != NULL)
        memcpy(sha256, f.sha256, sizeof f.sha256);
    if (st == PFLREF_OK && bytes != NULL)
        *bytes = f.bytes;
    return st;
}
