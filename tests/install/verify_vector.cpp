// SPDX-License-Identifier: GPL-3.0-or-later
// tests/install/verify_vector.cpp: the C++ twin of verify_vector.c, built
// against an installed pflref with `pkg-config --cflags --libs pflref`
// (make check-install): the public headers as C++17, the library's C
// linkage, one golden vector verified.
//
//   verify_vector_cxx VECTOR.json        exit 0: reproduced; 1: not
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <pflref.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: verify_vector_cxx VECTOR.json\n");
        return 2;
    }
    if (std::string(pflref_version()) != PFLREF_VERSION) {
        std::fprintf(stderr, "verify_vector_cxx: library %s, header %s\n",
                     pflref_version(), PFLREF_VERSION);
        return 1;
    }
    pflref_blas_pin_threads();
    pflref_error err;
    pflref_error_clear(&err);
    char *raw = nullptr;
    std::size_t len = 0;
    if (pflref_read_file(argv[1], &raw, &len, &err) != PFLREF_OK) {
        std::fprintf(stderr, "verify_vector_cxx: %s: %s\n", argv[1],
                     err.message);
        return 1;
    }
    std::unique_ptr<char, decltype(&std::free)> text(raw, &std::free);
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(argv[1], dir, sizeof dir);
    pflref_golden_report rep;
    if (pflref_golden_verify(text.get(), len, dir, &rep, &err) != PFLREF_OK ||
        rep.numbers == 0 || rep.mismatches != 0) {
        std::fprintf(stderr, "verify_vector_cxx: %s: not reproduced: %s\n",
                     argv[1], err.message);
        return 1;
    }
    std::printf("C++: %s reproduced (%zu numbers) by pflref %s\n", rep.id,
                rep.numbers, pflref_version());
    return 0;
}
