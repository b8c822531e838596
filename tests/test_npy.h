/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_npy.h: writing .npy files for the tests of tests/test_npy.c
 * and tests/test_npy_bad.c. */
#ifndef PFLREF_TEST_NPY_H
#define PFLREF_TEST_NPY_H

#include <stddef.h>
#include <check.h>

/* A .npy image into out (cap bytes): version major.0, the header `dict`
 * padded with spaces to a multiple of 64 bytes and ended by '\n', then
 * nbytes of data.  Returns its length. */
size_t tn_npy_bytes(unsigned char *out, size_t cap, int major,
                    const char *dict, const void *data, size_t nbytes);
/* n bytes into the file path. */
void tn_write_bytes(const char *path, const void *b, size_t n);
/* A rows × cols (cols = 0: 1-D of rows) array of `descr` with items of
 * itemsize bytes, as NumPy's np.save writes it (version 1.0). */
void tn_write_npy(const char *path, const char *descr, size_t rows,
                  size_t cols, const void *data, size_t itemsize);
/* Add the bad-file cases (tests/test_npy_bad.c) to suite s. */
void npy_bad_cases(Suite *s);
/* Add the cases of the lean JSON reading (tests/test_npy_lift.c). */
void npy_lift_cases(Suite *s);

#endif
