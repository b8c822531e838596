/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/npy.c: NumPy .npy files (and .npz members, ref/io/npz.c) as
 * problem data; docs/formats.md, "Data in .npy files".
 *
 * Format (NumPy Enhancement Proposal 1, "A simple file format for NumPy
 * arrays", and numpy/lib/format.py): the magic "\x93NUMPY", a major and a
 * minor version byte (1.0, 2.0 or 3.0), the header length (2 bytes little
 * endian for 1.0, 4 bytes for 2.0 and 3.0), then the header: a Python dict
 * literal with exactly the keys 'descr', 'fortran_order' and 'shape',
 * padded with spaces and ended by '\n'; then the data, count · itemsize
 * bytes, nothing after.
 *
 * Deviations from what NumPy itself would load, all refusals:
 *   a) only the dtypes '<f8', '<f4' (features and targets) and '<i8',
 *      '<i4', '|u1' (class labels); no big-endian, no structured dtypes;
 *   b) C order only ('fortran_order': False);
 *   c) at most 2 dimensions, no trailing bytes, no NaN or Inf;
 *   d) strings without escapes, integers without Python 2's 'L' suffix.
 *
 * Memory: a .npy file is mapped read-only; '<f8' data at an 8-aligned
 * offset (NumPy aligns the data to 64 bytes) is used in place, without a
 * copy, and the mapping then lives as long as the problem (which holds it,
 * pflref_problem_hold).  Other types are widened exactly into a malloc'd
 * array of doubles (every float32 and every label below 2^53 is a double).
 * The host must be little-endian (checked at compile time).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include "pflref/io.h"
#include "pflref/problem.h"
#include "io/npy.h"
#include "io/sha256.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader uses little-endian data in place: a little-endian host is needed"
#endif

/* The longest header accepted: NumPy itself refuses headers over 10 000
 * bytes by default (max_header_size), and a dict of three keys with a
 * two-entry shape never needs more than a few hundred. */
#define NPY_MAX_HEADER ((size_t)65536)

/* The accepted descr strings and their element types. */
static const struct {
    const char *descr;
    pflref_npy_dtype dtype;
    size_t itemsize;
} DTYPES[] = {
    {"<f8", PFLREF_NPY_F8, 8}, {"<f4", PFLREF_NPY_F4, 4},
    {"<i8", PFLREF_NPY_I8, 8}, {"<i4", PFLREF_NPY_I4, 4},
    {"|u1", PFLREF_NPY_U1, 1},
};

/* ---- the header's dict literal --------------------------------------- */

/* A cursor over the header text [p, end). */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && *c->p == ' ')
        c->p++;
}

/* Consume ch (after spaces): 1, or 0 when the next character differs. */
static int eat(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes into out (size bytes): 1 or 0. */
static int read_string(cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    const char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= size)
            return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    out[n] = '\0';
    return 1;
}

/* A non-negative decimal integer (no sign, no suffix) that fits size_t. */
static int read_size(cursor *c, size_t *out)
{
    skip_space(c);
    size_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        const size_t digit = (size_t)(*c->p - '0');
        if (v > (SIZE_MAX - digit) / 10)
            return 0;
        v = v * 10 + digit;
        c->p++;
    }
    *out = v;
    return c->p > start;
}

/* The shape tuple: "()", "(n,)", "(n, d)" (a trailing comma allowed);
 * more than two entries is reported as ndim 3. */
static int read_shape(cursor *c, pflref_npy_header *h)
{
    if (!eat(c, '('))
        return 0;
    h->ndim = 0;
    if (eat(c, ')'))
        return 1;
    for (;;) {
        size_t v;
        if (!read_size(c, &v))
            return 0;
        if (h->ndim < 2)
            h->shape[h->ndim] = v;
        h->ndim++;
        if (eat(c, ')'))
            return h->ndim >= 2; /* "(n)" is not a tuple: "(n,)" is */
        if (!eat(c, ','))
            return 0;
        if (eat(c, ')'))
            return 1;
    }
}

/* Refusal of a header field: "<name>: header field '<field>' <what>". */
static pflref_status bad_field(pflref_error *err, const char *where,
                               const char *name, const char *field,
                               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static pflref_status bad_field(pflref_error *err, const char *where,
                               const char *name, const char *field,
                               const char *fmt, ...)
{
    char what[PFLREF_MESSAGE_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pflref_error_set(err, PFLREF_EINVAL, where,
                            "%s: header field '%s' %s", name, field, what);
}

/* The value of 'descr' (s) into h. */
static pflref_status take_descr(const char *s, const char *name,
                                const char *where, pflref_npy_header *h,
                                pflref_error *err)
{
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(s, DTYPES[i].descr) == 0) {
            h->dtype = DTYPES[i].dtype;
            h->itemsize = DTYPES[i].itemsize;
            return PFLREF_OK;
        }
    return bad_field(err, where, name, "descr", "is '%s': pflref reads '<f8' and '<f4' (features "
                     "and targets) and '<i8', '<i4', '|u1' (class labels)", s);
}

/* One "'key': value" entry of the dict; *seen collects the keys read
 * (bit 0 descr, 1 fortran_order, 2 shape). */
static pflref_status read_entry(cursor *c, const char *name, const char *where,
                                pflref_npy_header *h, unsigned *seen,
                                pflref_error *err)
{
    char key[32];
    if (!read_string(c, key, sizeof key) || !eat(c, ':'))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header is not a dict literal of "
                                "'descr', 'fortran_order' and 'shape'", name);
    unsigned bit = strcmp(key, "descr") == 0           ? 1u
                   : strcmp(key, "fortran_order") == 0 ? 2u
                   : strcmp(key, "shape") == 0         ? 4u
                                                       : 0u;
    if (bit == 0)
        return bad_field(err, where, name, key, "is unknown (the header has exactly 'descr', "
                         "'fortran_order' and 'shape')");
    if (*seen & bit)
        return bad_field(err, where, name, key, "appears twice");
    *seen |= bit;
    if (bit == 1u) {
        char val[32];
        if (!read_string(c, val, sizeof val))
            return bad_field(err, where, name, "descr", "is not a dtype string such as "
                             "'<f8'");
        return take_descr(val, name, where, h, err);
    }
    if (bit == 2u) {
        skip_space(c);
        if ((size_t)(c->end - c->p) >= 5 && memcmp(c->p, "False", 5) == 0) {
            c->p += 5;
            return PFLREF_OK;
        }
        if ((size_t)(c->end - c->p) >= 4 && memcmp(c->p, "True", 4) == 0)
            return bad_field(err, where, name, "fortran_order", "is True: pflref reads C "
                             "(row-major) order only; save with "
                             "np.ascontiguousarray");
        return bad_field(err, where, name, "fortran_order", "is not False or True");
    }
    if (!read_shape(c, h))
        return bad_field(err, where, name, "shape", "is not a tuple of non-negative integers");
    if (h->ndim > 2)
        return bad_field(err, where, name, "shape", "has %zu dimensions: pflref reads 1-D "
                         "(labels) and 2-D (features) arrays", h->ndim);
    return PFLREF_OK;
}

/* The dict literal in [text, text + len), which ends in '\n'. */
static pflref_status parse_dict(const char *text, size_t len, const char *name,
                                const char *where, pflref_npy_header *h,
                                pflref_error *err)
{
    if (len == 0 || text[len - 1] != '\n')
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header does not end in a newline "
                                "(its length field lies or the file is "
                                "truncated)", name);
    cursor c = {.p = text, .end = text + len - 1};
    unsigned seen = 0;
    if (!eat(&c, '{'))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header is not a dict literal", name);
    while (!eat(&c, '}')) {
        pflref_status st = read_entry(&c, name, where, h, &seen, err);
        if (st != PFLREF_OK)
            return st;
        if (!eat(&c, ',') && !(skip_space(&c), c.p < c.end && *c.p == '}'))
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s: the header's dict literal is "
                                    "malformed after a value", name);
    }
    skip_space(&c);
    if (c.p != c.end)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header has text after its dict "
                                "literal", name);
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (unsigned k = 0; k < 3; k++)
        if (!(seen & (1u << k)))
            return bad_field(err, where, name, keys[k], "is missing");
    return PFLREF_OK;
}

pflref_status pflref_npy_header_parse(const unsigned char *buf, size_t avail,
                                      const char *name, const char *where,
                                      pflref_npy_header *h, pflref_error *err)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    *h = (pflref_npy_header){.ndim = 0};
    if (avail < 6 || memcmp(buf, magic, 6) != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: not a .npy file (the magic "
                                "\\x93NUMPY is missing%s)", name,
                                avail < 6 ? ": the file is truncated" : "");
    if (avail < 8)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: truncated in the version field", name);
    const unsigned major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: format version %u.%u: pflref reads "
                                "1.0, 2.0 and 3.0", name, major, minor);
    const size_t lenbytes = major == 1 ? 2 : 4;
    if (avail < 8 + lenbytes)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: truncated in the header length field",
                                name);
    size_t hlen = 0;
    for (size_t i = lenbytes; i-- > 0;)
        hlen = hlen << 8 | buf[8 + i];
    if (hlen > NPY_MAX_HEADER)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header length field says %zu bytes "
                                "(at most %zu)", name, hlen, NPY_MAX_HEADER);
    if (avail - 8 - lenbytes < hlen)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header length field says %zu bytes "
                                "but only %zu follow (truncated, or the "
                                "length lies)", name, hlen,
                                avail - 8 - lenbytes);
    const char *text = (const char *)buf + 8 + lenbytes;
    for (size_t i = 0; i < hlen; i++)
        if ((unsigned char)text[i] < 0x20 && text[i] != '\n')
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s: the header holds a control byte "
                                    "0x%02X at offset %zu", name,
                                    (unsigned char)text[i], 8 + lenbytes + i);
    pflref_status st = parse_dict(text, hlen, name, where, h, err);
    if (st != PFLREF_OK)
        return st;
    h->offset = 8 + lenbytes + hlen;
    h->count = 1;
    for (size_t k = 0; k < h->ndim; k++)
        if (h->shape[k] != 0 && h->count > SIZE_MAX / h->shape[k])
            return bad_field(err, where, name, "shape", "overflows: %zu × %zu elements", h->count,
                             h->shape[k]);
        else
            h->count *= h->shape[k];
    if (h->count > (SIZE_MAX - h->offset) / h->itemsize)
        return bad_field(err, where, name, "shape", "overflows: %zu elements of %zu bytes",
                         h->count, h->itemsize);
    return PFLREF_OK;
}

/* ---- the data -------------------------------------------------------- */

/* Whether the header's shape fits a stream of `total` bytes exactly. */
static pflref_status npy_check_size(const pflref_npy_header *h, size_t total,
                                    const char *name, const char *where,
                                    pflref_error *err)
{
    const size_t need = h->offset + h->count * h->itemsize;
    if (total < need)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: truncated: header field 'shape' "
                                "promises %zu elements (%zu bytes of data) "
                                "but the file has %zu bytes of data", name,
                                h->count, h->count * h->itemsize,
                                total - h->offset);
    if (total > need)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header lies: field 'shape' "
                                "describes %zu bytes of data but %zu follow "
                                "the header", name, h->count * h->itemsize,
                                total - h->offset);
    return PFLREF_OK;
}

/* dst[0..n) := src's n elements of type t, as doubles (exact). */
static void npy_widen(const unsigned char *src, pflref_npy_dtype t, size_t n,
                      double *dst)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case PFLREF_NPY_F8: memcpy(&dst[i], src + 8 * i, 8); break;
        case PFLREF_NPY_F4: {
            float f;
            memcpy(&f, src + 4 * i, 4);
            dst[i] = (double)f;
            break;
        }
        case PFLREF_NPY_I8: {
            int64_t v;
            memcpy(&v, src + 8 * i, 8);
            dst[i] = (double)v;
            break;
        }
        case PFLREF_NPY_I4: {
            int32_t v;
            memcpy(&v, src + 4 * i, 4);
            dst[i] = (double)v;
            break;
        }
        case PFLREF_NPY_U1: dst[i] = (double)src[i]; break;
        }
    }
}

/* Every value of a (n values) finite; else the first bad one, with its
 * row and column for a 2-D array. */
static pflref_status npy_check_finite(const pflref_npy_array *a,
                                      const char *name, const char *where,
                                      pflref_error *err)
{
    const size_t cols = a->h.ndim == 2 ? a->h.shape[1] : 1;
    for (size_t i = 0; i < a->h.count; i++)
        if (!isfinite(a->data[i])) {
            char pos[64] = "";
            if (a->h.ndim == 2)
                snprintf(pos, sizeof pos, " (row %zu, column %zu)", i / cols,
                         i % cols);
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s: element %zu%s is %g: the data must "
                                    "be finite", name, i, pos, a->data[i]);
        }
    return PFLREF_OK;
}

void pflref_npy_unmap(void *addr, size_t len)
{
    if (addr != NULL)
        munmap(addr, len);
}

/* Open path without blocking and check it is a regular file: *fd, *size. */
static pflref_status npy_open(const char *path, const char *name,
                              const char *where, int *fd, size_t *size,
                              pflref_error *err)
{
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return pflref_error_set(err, PFLREF_EIO, where, "cannot open %s: %s",
                                name, strerror(errno));
    struct stat sb;
    pflref_status st = PFLREF_OK;
    if (fstat(*fd, &sb) != 0)
        st = pflref_error_set(err, PFLREF_EIO, where, "cannot stat %s: %s",
                              name, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = pflref_error_set(err, PFLREF_EIO, where,
                              "%s is not a regular file (%s); refused "
                              "without reading it", name,
                              pflref_file_kind(sb.st_mode));
    else if ((unsigned long long)sb.st_size > SIZE_MAX)
        st = pflref_error_set(err, PFLREF_ENOMEM, where,
                              "%s is too large to map", name);
    if (st != PFLREF_OK) {
        close(*fd);
        *fd = -1;
        return st;
    }
    *size = (size_t)sb.st_size;
    return PFLREF_OK;
}

/* The whole file behind fd mapped read-only (size ≥ 1 bytes). */
static pflref_status npy_map(int fd, size_t size, const char *name,
                             const char *where, void **map, pflref_error *err)
{
    *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (*map == MAP_FAILED) {
        *map = NULL;
        return pflref_error_set(err, errno == ENOMEM ? PFLREF_ENOMEM
                                                     : PFLREF_EIO,
                                where, "cannot map %s (%zu bytes): %s", name,
                                size, strerror(errno));
    }
    return PFLREF_OK;
}

/* a->data := a malloc'd array of the h.count values at src, widened. */
/* The header's count of values, as doubles, within this machine's memory
 * (pflref_data_limit_bytes): the only limit a data file has, checked
 * before a byte of data is read, hashed or copied. */
static pflref_status npy_check_memory(const pflref_npy_header *h,
                                      const char *name, const char *where,
                                      pflref_error *err)
{
    const size_t n = h->count, limit = pflref_data_limit_bytes();
    if (n > SIZE_MAX / sizeof(double) || n * sizeof(double) > limit)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%s: header field 'shape' gives %zu elements, "
                                "%.3g GiB as doubles: more than this "
                                "machine's memory (%.3g GiB)",
                                name, n, (double)n * 8.0 / 1073741824.0,
                                (double)limit / 1073741824.0);
    return PFLREF_OK;
}

static pflref_status npy_copy(const unsigned char *src, pflref_npy_array *a,
                              const char *name, const char *where,
                              pflref_error *err)
{
    const size_t n = a->h.count, bytes = n * sizeof(double);
    pflref_status st = npy_check_memory(&a->h, name, where, err);
    if (st != PFLREF_OK)
        return st;
    a->data = malloc(bytes > 0 ? bytes : 1);
    if (a->data == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where,
                                "%s: out of memory for %zu doubles", name, n);
    if (src != NULL)
        npy_widen(src, a->h.dtype, n, a->data);
    return PFLREF_OK;
}

pflref_status pflref_npy_load(const char *path, const char *name,
                              const char *where, pflref_npy_array *a,
                              pflref_npy_digest *digest, pflref_error *err)
{
    *a = (pflref_npy_array){.data = NULL};
    int fd;
    size_t size;
    pflref_status st = npy_open(path, name, where, &fd, &size, err);
    if (st != PFLREF_OK)
        return st;
    void *map = NULL;
    if (size == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "%s: the file is empty (truncated)", name);
    else
        st = npy_map(fd, size, name, where, &map, err);
    close(fd);
    const unsigned char *bytes = map;
    if (st == PFLREF_OK)
        st = pflref_npy_header_parse(bytes, size, name, where, &a->h, err);
    if (st == PFLREF_OK)
        st = npy_check_size(&a->h, size, name, where, err);
    if (st == PFLREF_OK)
        st = npy_check_memory(&a->h, name, where, err);
    /* '<f8' at an aligned offset is used in place; the rest is widened
     * into an owned array and the mapping released (after hashing it: a
     * mapping kept is hashed later, by the caller). */
    const int in_place = a->h.dtype == PFLREF_NPY_F8 &&
                         a->h.offset % sizeof(double) == 0;
    if (st == PFLREF_OK && digest != NULL) {
        digest->hex[0] = '\0';
        if (!in_place)
            pflref_sha256_hex(bytes, size, digest->hex);
        digest->bytes = size;
    }
    if (st == PFLREF_OK && in_place) {
        a->data = (double *)(void *)((unsigned char *)map + a->h.offset);
        a->map = map;
        a->map_len = size;
    } else if (st == PFLREF_OK) {
        st = npy_copy(bytes + a->h.offset, a, name, where, err);
    }
    if (st == PFLREF_OK)
        st = npy_check_finite(a, name, where, err);
    if (st != PFLREF_OK || !in_place) {
        pflref_npy_unmap(map, size);
        a->map = NULL;
        if (st != PFLREF_OK) {
            if (!in_place)
                free(a->data);
            a->data = NULL;
        }
    }
    return st;
}

/* ---- .npz archives ----------------------------------------------------
 *
 * np.savez and np.savez_compressed write a zip archive with one member
 * "<key>.npy" per array, stored or deflated (ZIP64 when large).  libzip
 * reads the archive (and checks each member's CRC-32 when it is read to
 * its end); the member is streamed: its preamble and header first, then
 * its data straight into the array of doubles (or through a small buffer
 * when widened), so memory holds only the doubles. */

/* Read exactly n bytes of member f into buf: 1, or 0 (short read or a
 * libzip error, such as a bad CRC or corrupt deflate data). */
static int zread(zip_file_t *f, void *buf, size_t n)
{
    unsigned char *b = buf;
    while (n > 0) {
        const zip_int64_t got = zip_fread(f, b, n);
        if (got <= 0)
            return 0;
        b += got;
        n -= (size_t)got;
    }
    return 1;
}

/* The preamble and header of member f (size bytes in all) into h. */
static pflref_status npz_header(zip_file_t *f, zip_uint64_t size,
                                const char *name, const char *where,
                                pflref_npy_header *h, pflref_error *err)
{
    unsigned char pre[12];
    const size_t first = size < 10 ? (size_t)size : 10;
    if (!zread(f, pre, first))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: cannot read the member: %s", name,
                                zip_error_strerror(zip_file_get_error(f)));
    size_t have = first;
    if (have == 10 && pre[6] >= 2 && size >= 12) {
        if (!zread(f, pre + 10, 2))
            return pflref_error_set(err, PFLREF_EINVAL, where,
                                    "%s: cannot read the member", name);
        have = 12;
    }
    /* Parse the preamble alone to learn the header's length: the parser
     * reports "only k follow", from which the rest is read. */
    size_t hlen = 0;
    if (have >= 10) {
        const size_t lenbytes = have == 12 ? 4 : 2;
        for (size_t i = lenbytes; i-- > 0;)
            hlen = hlen << 8 | pre[8 + i];
    }
    if (have < 10 || (pre[6] >= 2 && have < 12) || hlen > NPY_MAX_HEADER)
        /* too short, a bad magic or version, an absurd length: the
         * parser's own message */
        return pflref_npy_header_parse(pre, have, name, where, h, err);
    if (hlen > size - have)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the header length field says %zu bytes "
                                "but only %zu follow (truncated, or the "
                                "length lies)", name, hlen,
                                (size_t)(size - have));
    unsigned char *buf = malloc(have + hlen);
    if (buf == NULL)
        return pflref_error_set(err, PFLREF_ENOMEM, where, "out of memory");
    memcpy(buf, pre, have);
    pflref_status st = PFLREF_OK;
    if (!zread(f, buf + have, hlen))
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "%s: cannot read the header", name);
    if (st == PFLREF_OK)
        st = pflref_npy_header_parse(buf, have + hlen, name, where, h, err);
    free(buf);
    return st;
}

/* The data of member f (h read) into a->data, widened, then the end of the
 * member (which makes libzip check its CRC-32). */
static pflref_status npz_data(zip_file_t *f, pflref_npy_array *a,
                              const char *name, const char *where,
                              pflref_error *err)
{
    pflref_status st = npy_copy(NULL, a, name, where, err);
    if (st != PFLREF_OK)
        return st;
    const size_t n = a->h.count, w = a->h.itemsize;
    int ok = 1;
    if (a->h.dtype == PFLREF_NPY_F8) {
        ok = zread(f, a->data, n * w);
    } else {
        /* Through a buffer of CHUNK elements, widened as they come. */
        enum { CHUNK = 8192 };
        unsigned char buf[CHUNK * 8];
        for (size_t i = 0; ok && i < n; i += CHUNK) {
            const size_t k = n - i < CHUNK ? n - i : CHUNK;
            ok = zread(f, buf, k * w);
            if (ok)
                npy_widen(buf, a->h.dtype, k, a->data + i);
        }
    }
    unsigned char extra;
    if (ok && zip_fread(f, &extra, 1) != 0)
        ok = 0;
    if (!ok) {
        free(a->data);
        a->data = NULL;
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: cannot read the member's data: %s", name,
                                zip_error_strerror(zip_file_get_error(f)));
    }
    return npy_check_finite(a, name, where, err);
}

/* Member `member` (or `member`.npy) of the open archive z into a. */
static pflref_status npz_member(zip_t *z, const char *member,
                                const char *name, const char *where,
                                pflref_npy_array *a, pflref_error *err)
{
    zip_int64_t idx = zip_name_locate(z, member, 0);
    if (idx < 0) {
        char with_ext[PFLREF_PATH_MAX];
        snprintf(with_ext, sizeof with_ext, "%s.npy", member);
        idx = zip_name_locate(z, with_ext, 0);
    }
    if (idx < 0)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the archive has no member \"%s\" (nor "
                                "\"%s.npy\"; it has %lld)", name, member,
                                member, (long long)zip_get_num_entries(z, 0));
    zip_stat_t zs;
    if (zip_stat_index(z, (zip_uint64_t)idx, 0, &zs) != 0 ||
        !(zs.valid & ZIP_STAT_SIZE))
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: cannot read the member's entry", name);
    if ((zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method != ZIP_CM_STORE &&
        zs.comp_method != ZIP_CM_DEFLATE)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the member is compressed with method %d: "
                                "pflref reads stored and deflated members "
                                "(np.savez, np.savez_compressed)", name,
                                (int)zs.comp_method);
    if ((zs.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
        zs.encryption_method != ZIP_EM_NONE)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: the member is encrypted", name);
    zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)idx, 0);
    if (f == NULL)
        return pflref_error_set(err, PFLREF_EINVAL, where,
                                "%s: cannot open the member: %s", name,
                                zip_strerror(z));
    pflref_status st = npz_header(f, zs.size, name, where, &a->h, err);
    if (st == PFLREF_OK && zs.size > SIZE_MAX)
        st = pflref_error_set(err, PFLREF_ENOMEM, where, "%s: too large",
                              name);
    if (st == PFLREF_OK)
        st = npy_check_size(&a->h, (size_t)zs.size, name, where, err);
    if (st == PFLREF_OK)
        st = npz_data(f, a, name, where, err);
    zip_fclose(f);
    return st;
}

pflref_status pflref_npz_load(const char *path, const char *member,
                              const char *name, const char *where,
                              pflref_npy_array *a, pflref_npy_digest *digest,
                              pflref_error *err)
{
    *a = (pflref_npy_array){.data = NULL};
    int fd;
    size_t size;
    pflref_status st = npy_open(path, name, where, &fd, &size, err);
    if (st != PFLREF_OK)
        return st;
    if (size == 0)
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "%s: the archive is empty (truncated)", name);
    if (st == PFLREF_OK && digest != NULL) {
        void *map;
        st = npy_map(fd, size, name, where, &map, err);
        if (st == PFLREF_OK) {
            pflref_sha256_hex(map, size, digest->hex);
            digest->bytes = size;
            pflref_npy_unmap(map, size);
        }
    }
    int zerr = 0;
    zip_t *z = st == PFLREF_OK ? zip_fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS,
                                            &zerr)
                               : NULL;
    if (st == PFLREF_OK && z == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        st = pflref_error_set(err, PFLREF_EINVAL, where,
                              "%s: not a readable zip archive: %s", name,
                              zip_error_strerror(&ze));
        zip_error_fini(&ze);
    }
    if (z == NULL) {
        close(fd);   /* zip_fdopen takes fd only when it succeeds */
        return st;
    }
    st = npz_member(z, member, name, where, a, err);
    zip_discard(z);  /* read-only: closes fd, writes nothing */
    return st;
}

const char *pflref_npy_descr(pflref_npy_dtype t)
{
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (DTYPES[i].dtype == t)
            return DTYPES[i].descr;
    return "?";
}
