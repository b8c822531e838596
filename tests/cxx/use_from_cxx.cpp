// SPDX-License-Identifier: GPL-3.0-or-later
// tests/cxx/use_from_cxx.cpp: the public API used from C++ (make
// check-headers).  It includes only <pflref.h> (compiled with -Iinclude
// alone, so no private header of ref/ can be reached), calls the library
// through its C linkage and prints one line.
#include <cstdio>
#include <cstring>
#include "pflref.h"

int main()
{
    const pflref_algorithm *fedavg = pflref_algorithm_find("fedavg");
    if (fedavg == nullptr || std::strcmp(fedavg->name, "fedavg") != 0) {
        std::fprintf(stderr, "c++: pflref_algorithm_find(\"fedavg\") failed\n");
        return 1;
    }
    if (pflref_algorithm_find("no-such-algorithm") != nullptr) {
        std::fprintf(stderr, "c++: an unknown name was found\n");
        return 1;
    }
    std::size_t count = 0;
    pflref_algorithms(&count);
    std::printf("check-headers: from C++, pflref_algorithm_find(\"fedavg\") "
                "is \"%s\" (one of %zu algorithms; pflref %s)\n",
                fedavg->title, count, PFLREF_VERSION);
    return 0;
}
