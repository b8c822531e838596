/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/install/verify_vector.c: a C program built against an installed
 * pflref with `pkg-config --cflags --libs pflref` (make check-install).
 *
 *   verify_vector VECTOR.json
 *
 * Runs the golden vector through pflref_golden_verify and exits 0 when
 * every expected number was reproduced (at least one compared), 1
 * otherwise; the library it loaded must report the version of the header
 * it was compiled with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pflref.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: verify_vector VECTOR.json\n");
        return 2;
    }
    if (strcmp(pflref_version(), PFLREF_VERSION) != 0) {
        fprintf(stderr, "verify_vector: the library is %s, the header %s\n",
                pflref_version(), PFLREF_VERSION);
        return 1;
    }
    pflref_blas_pin_threads();
    pflref_error err;
    pflref_error_clear(&err);
    char *text = NULL;
    size_t len = 0;
    char dir[PFLREF_PATH_MAX];
    pflref_golden_report rep;
    pflref_file_folder(argv[1], dir, sizeof dir);
    if (pflref_read_file(argv[1], &text, &len, &err) != PFLREF_OK ||
        pflref_golden_verify(text, len, dir, &rep, &err) != PFLREF_OK) {
        fprintf(stderr, "verify_vector: %s: %s: %s\n", argv[1], err.where,
                err.message);
        free(text);
        return 1;
    }
    free(text);
    if (rep.numbers == 0 || rep.mismatches != 0) {
        fprintf(stderr, "verify_vector: %s: %zu of %zu quantities differ\n",
                rep.id, rep.mismatches, rep.quantities);
        return 1;
    }
    printf("C: %s reproduced (%zu numbers) by pflref %s\n", rep.id,
           rep.numbers, pflref_version());
    return 0;
}
