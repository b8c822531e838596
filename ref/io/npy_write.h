/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy_write.h: writing a '<f8' .npy file as np.save writes it
 * (internal; docs/formats.md, "Arrays in files"; issue 30). */
#ifndef PFLREF_IO_NPY_WRITE_H
#define PFLREF_IO_NPY_WRITE_H

#include <stddef.h>
#include "pflref/status.h"

/* Write rows × cols doubles (row-major) to path as a NumPy .npy file,
 * format version 1.0, dtype '<f8', C order, the header laid out exactly as
 * np.save lays it out (NumPy 1.24: the dict with its keys sorted, the
 * spare spaces for the growth axis, padded with spaces to a multiple of 64
 * bytes in all and ended by '\n'), so the file is byte-identical to what
 * np.save writes for the same array.  The file goes through the guarded
 * writer (pflref_write_file_bytes: whole or not at all).
 *   path   [in]  the file to write (its folder must exist)
 *   data   [in]  rows × cols numbers (rows when cols is 0); not NULL
 *   rows   [in]  the first dimension, >= 1
 *   cols   [in]  the second dimension, or 0 for a 1-D array of shape
 *                (rows,)
 *   sha256 [out] the 64 lower-case hex digits of the file's SHA-256 (65
 *                bytes with the NUL), or NULL
 *   bytes  [out] the file's size, or NULL
 *   err    [out] may be NULL
 * Returns PFLREF_OK; PFLREF_EINVAL for a NULL argument, rows 0 or a
 * big-endian host (the bytes would not be '<f8'); PFLREF_ENOMEM;
 * pflref_write_file_bytes's PFLREF_EIO (err->where is the path). */
pflref_status pflref_npy_write_f8(const char *path, const double *data,
                                  size_t rows, size_t cols, char *sha256,
                                  unsigned long long *bytes,
                                  pflref_error *err);

#endif
