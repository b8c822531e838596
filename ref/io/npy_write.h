/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy_write.h: writing '<f8' arrays as NumPy .npy files (internal;
 * the files form of a result, docs/formats.md "Arrays in files").
 *
 *   pflref_npy_header_f8    the header np.save writes, byte for byte
 *   pflref_npy_write_step   a pflref_write_step that writes a whole file
 *                           (header, then the numbers), its SHA-256 and
 *                           size computed on the way
 *   pflref_npy_write_f8     one array to one file through the guarded
 *                           writer (the step above, for a single piece)
 */
#ifndef PFLREF_IO_NPY_WRITE_H
#define PFLREF_IO_NPY_WRITE_H

#include <stddef.h>
#include "pflref/status.h"

/* The longest header pflref_npy_header_f8 writes: the 10-byte preamble, a
 * dict of at most 64 + 2·20 digits, 21 spaces of NumPy's growth room,
 * rounded up to 64 bytes. */
#define PFLREF_NPY_HEADER_MAX 256

/* The header of a '<f8' C-order array of shape (rows,) (cols = 0) or
 * (rows, cols), as NumPy (≥ 1.23) np.save writes it: format version 1.0,
 * the magic "\x93NUMPY", 1, 0, the header length (uint16, little-endian),
 * then "{'descr': '<f8', 'fortran_order': False, 'shape': (R,), }" (or
 * "(R, C)"), 21 − digits(R) spaces (numpy.lib.format's room to grow the
 * first axis in place), spaces up to a multiple of 64 bytes in all, and
 * '\n' (64 spaces when the text already ends at a multiple of 64, as
 * NumPy's formula gives).  out [out] PFLREF_NPY_HEADER_MAX bytes; returns
 * the header's length, a multiple of 64. */
size_t pflref_npy_header_f8(size_t rows, size_t cols,
                            unsigned char out[PFLREF_NPY_HEADER_MAX]);

/* A run of numbers of the array, in order. */
typedef struct {
    const double *x;
    size_t n;
} pflref_npy_piece;

/* One .npy file to write: the shape, the numbers (the pieces one after
 * the other: rows·max(cols, 1) numbers in all), and what the writing
 * found. */
typedef struct {
    size_t rows, cols;               /* cols = 0: 1-D                     */
    const pflref_npy_piece *pieces;
    size_t n_pieces;
    char sha256[65];                 /* [out] the whole file's SHA-256    */
    unsigned long long bytes;        /* [out] its size                    */
} pflref_npy_file;

/* The pflref_write_step of a pflref_npy_file (ctx): the header, then the
 * numbers as little-endian binary64, into fd; sha256 and bytes set on
 * success.  Errors: pflref_write_buffer_step's (PFLREF_EIO naming the
 * file), PFLREF_ENOMEM (the digest), PFLREF_EINTERNAL (the pieces do not
 * hold the shape's count). */
pflref_status pflref_npy_write_step(void *ctx, int fd, const char *name,
                                    pflref_error *err);

/* Write rows × cols doubles (row-major; shape (rows,) when cols is 0) to
 * path as a '<f8' .npy file, byte for byte what np.save writes, through
 * the guarded writer (pflref_write_file_with: whole or not at all).
 *   sha256 [out] the file's SHA-256, 64 hex digits and a NUL, or NULL
 *   bytes  [out] the file's size, or NULL
 * Errors: PFLREF_EINVAL (a NULL path or data, rows 0), PFLREF_ENOMEM (a
 * count that overflows), and pflref_write_file_with's. */
pflref_status pflref_npy_write_f8(const char *path, const double *data,
                                  size_t rows, size_t cols, char *sha256,
                                  unsigned long long *bytes,
                                  pflref_error *err);

#endif
