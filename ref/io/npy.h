/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy.h: NumPy .npy files and members of .npz archives as problem
 * data (internal; docs/formats.md, "Data in .npy files").
 *
 *   pflref_npy_header_parse   the header of a .npy stream, strictly
 *   pflref_npy_load           a .npy file: mapped, used in place when '<f8'
 *   pflref_npz_load           a member of a .npz archive (stored or
 *                             deflated, through libzip): always copied
 *   pflref_npy_unmap          the release function of a mapping
 *
 * Every message names the file as the JSON names it and, for a bad header,
 * the header field ('descr', 'fortran_order', 'shape', the magic, the
 * version, the header length). */
#ifndef PFLREF_IO_NPY_H
#define PFLREF_IO_NPY_H

#include <stddef.h>
#include "pflref/status.h"

/* The element types pflref reads: '<f8' (used as is), '<f4' (widened
 * exactly), and the integer labels '<i8', '<i4', '|u1'. */
typedef enum {
    PFLREF_NPY_F8 = 0,
    PFLREF_NPY_F4 = 1,
    PFLREF_NPY_I8 = 2,
    PFLREF_NPY_I4 = 3,
    PFLREF_NPY_U1 = 4
} pflref_npy_dtype;

/* What a .npy header says. */
typedef struct {
    pflref_npy_dtype dtype;
    size_t itemsize;     /* bytes per element: 8, 4 or 1               */
    size_t ndim;         /* 0, 1 or 2 (more is refused)                */
    size_t shape[2];     /* the first ndim entries are meaningful      */
    size_t count;        /* shape[0]·shape[1]… (1 for ndim 0)          */
    size_t offset;       /* bytes before the data (preamble + header)  */
} pflref_npy_header;

/* An array read from a file, as doubles. */
typedef struct {
    pflref_npy_header h;
    double *data;        /* h.count values                              */
    void *map;           /* non-NULL: data points into this read-only
                            mapping of the whole file (map_len bytes),
                            released by pflref_npy_unmap; NULL: data was
                            malloc'd (free() it)                        */
    size_t map_len;
} pflref_npy_array;

/* A file's SHA-256 and size, as the result records them. */
typedef struct {
    char hex[65];        /* 64 lower-case hex digits                    */
    unsigned long long bytes;
} pflref_npy_digest;

/* Parse the preamble and header at buf[0..avail) of a .npy stream named
 * `name` (for messages; where is the JSON path for err->where).
 * PFLREF_EINVAL names the field at fault. */
pflref_status pflref_npy_header_parse(const unsigned char *buf, size_t avail,
                                      const char *name, const char *where,
                                      pflref_npy_header *h, pflref_error *err);

/* Load the .npy file at path (name: as the JSON wrote it; where: the JSON
 * path of the field).  The file must be a regular file; it is mapped
 * read-only, its header parsed, its size checked against the shape, and
 * its values checked finite.  '<f8' data at an 8-aligned offset is used in
 * place (a->map set); other types are widened into a malloc'd array and
 * the mapping released.  digest: when non-NULL, receives the SHA-256 of
 * the whole file and its size; when the data is used in place the hex is
 * left empty ("") for the caller to compute from a->map (a->map_len bytes,
 * the whole file) while it holds the mapping (ref/io/digest.h).  Errors: PFLREF_EIO (cannot open, not a regular file),
 * PFLREF_EINVAL (bad header, truncated, non-finite value), PFLREF_ENOMEM. */
pflref_status pflref_npy_load(const char *path, const char *name,
                              const char *where, pflref_npy_array *a,
                              pflref_npy_digest *digest, pflref_error *err);

/* Load member `member` (or `member`.npy) of the .npz archive at path, as
 * pflref_npy_load does but always into a malloc'd array (a->map NULL).
 * digest: the archive's SHA-256 when non-NULL. */
pflref_status pflref_npz_load(const char *path, const char *member,
                              const char *name, const char *where,
                              pflref_npy_array *a, pflref_npy_digest *digest,
                              pflref_error *err);

/* The descr string of t ("<f8", ...). */
const char *pflref_npy_descr(pflref_npy_dtype t);

/* munmap(addr, len): the release function a problem holds a mapping by. */
void pflref_npy_unmap(void *addr, size_t len);

#endif
