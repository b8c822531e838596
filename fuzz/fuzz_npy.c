/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz/fuzz_npy.c: libFuzzer harness for the data-file readers and the
 * lean JSON reading (ref/io/npy.c, ref/io/json_numeric.c).
 *
 * The bytes are, in turn:
 *   a) a .npy header (pflref_npy_header_parse on the bytes in memory);
 *   b) a .npy file and an .npz archive: written to one temporary file,
 *      loaded with pflref_npy_load and with pflref_npz_load (member "a");
 *   c) a JSON text: its data arrays lifted (pflref_json_lift), then parsed
 *      with pflref_json_parse_lifted, differentially against jansson on
 *      the untouched text.
 * Invariants beyond "no crash, no leak, no UB": a documented status
 * (EINVAL, EIO or ENOMEM) with a message naming the file; a loaded array
 * has the header's count of finite values; a header that parses has an
 * offset inside the bytes; the lifted text is never longer than the
 * original, and it parses exactly when the original does (lifting changes
 * no verdict), every lifted entry holding rows × cols = n numbers.
 * Seeds: fuzz/corpus/fuzz_npy (small .npy files of every accepted dtype
 * and version, an .npz archive, a JSON client).  Build and run:
 * `make fuzz` / `make fuzz-smoke`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "io/json.h"
#include "io/npy.h"

/* The status of a data-file load: OK or a documented input error whose
 * message names the file "f". */
static void check_load(pflref_status st, const pflref_error *err,
                       const pflref_npy_array *a)
{
    FUZZ_REQUIRE(st == PFLREF_OK || st == PFLREF_EINVAL ||
                     st == PFLREF_EIO || st == PFLREF_ENOMEM,
                 "an undocumented status");
    if (st != PFLREF_OK) {
        FUZZ_REQUIRE(err->message[0] != '\0', "an error without a message");
        FUZZ_REQUIRE(strstr(err->message, "f") != NULL,
                     "an error that does not name the file");
        return;
    }
    FUZZ_REQUIRE(a->data != NULL || a->h.count == 0, "no data");
    for (size_t i = 0; i < a->h.count; i++)
        FUZZ_REQUIRE(isfinite(a->data[i]), "a non-finite value loaded");
}

static void release(pflref_npy_array *a)
{
    if (a->map != NULL)
        pflref_npy_unmap(a->map, a->map_len);
    else
        free(a->data);
}

/* b): the bytes as a file, read as .npy and as .npz. */
static void files(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/pflref-fuzz-npy-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return;
    const int ok = write(fd, data, size) == (ssize_t)size;
    close(fd);
    if (ok) {
        pflref_npy_array a;
        pflref_npy_digest dg;
        pflref_error err;
        pflref_status st = pflref_npy_load(path, "f", "X", &a, &dg, &err);
        check_load(st, &err, &a);
        if (st == PFLREF_OK) {
            FUZZ_REQUIRE(dg.bytes == size, "the digest's size");
            release(&a);
        }
        st = pflref_npz_load(path, "a", "f", "X", &a, NULL, &err);
        check_load(st, &err, &a);
        if (st == PFLREF_OK)
            release(&a);
    }
    unlink(path);
}

/* c): lifting changes no verdict of the JSON parser. */
static void lift(const uint8_t *data, size_t size)
{
    char *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return;
    memcpy(copy, data, size);
    pflref_json_numerics t = {.a = NULL};
    size_t llen = size;
    const size_t n = pflref_json_lift(copy, &llen, &t);
    FUZZ_REQUIRE(llen <= size && n == t.n, "lifting grew the text");
    for (size_t k = 0; k < t.n; k++) {
        size_t sum = 0;
        for (size_t r = 0; t.a[k].depth == 2 && r < t.a[k].rows; r++)
            sum += t.a[k].row_len[r];
        FUZZ_REQUIRE(t.a[k].depth == 1 ? t.a[k].rows == t.a[k].n
                                       : sum == t.a[k].n,
                     "a lifted entry's rows do not add up");
    }
    json_t *a = NULL, *b = NULL;
    pflref_error ea, eb;
    const pflref_status sa = pflref_json_parse((const char *)data, size, "",
                                               &a, &ea);
    const pflref_status sb = pflref_json_parse(copy, llen, "", &b, &eb);
    FUZZ_REQUIRE((sa == PFLREF_OK) == (sb == PFLREF_OK),
                 "lifting changed whether the text parses");
    json_decref(a);
    json_decref(b);
    pflref_json_numerics_free(&t);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pflref_npy_header h;
    pflref_error err;
    if (pflref_npy_header_parse(data, size, "f", "X", &h, &err) ==
        PFLREF_OK)
        FUZZ_REQUIRE(h.offset <= size && h.ndim <= 2,
                     "a parsed header beyond the bytes");
    files(data, size);
    lift(data, size);
    return 0;
}
