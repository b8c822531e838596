# SPDX-License-Identifier: GPL-3.0-or-later
# pflref: build, test and demo entry points.
#
#   make demo            the seed 000 experiment (Output 14.7.1) end to end,
#                        and its figure (build/demo-clients.svg, pflref plot)
#   make check           every test (Check), golden verify and lint, schema
#                        checks, the detection catalogue, the BLAS linkage,
#                        the public headers alone as C and C++, the
#                        architecture lint's self-test, the Python package's
#                        tests (check-python), verify and the exact replays
#                        under every OpenBLAS kernel (check-kernels)
#   make golden          regenerate every golden vector into a temporary
#                        folder and diff it with golden/
#   make golden-update   rewrite golden/ from the generators (values and
#                        content hashes), once golden/CHANGES.md says why
#   make coverage        line and branch coverage of ref/ (gcovr), gated
#   make check-asan      the test suite under ASan + UBSan
#   make check-valgrind  the test suite under valgrind memcheck
#   make fuzz-smoke      every libFuzzer harness briefly (make fuzz: longer)
#   make lint            the floors and sizes (tests/lint/floors.py),
#                        cppcheck, SPDX identifiers (tools/spdx.py), and
#                        the scripts' self-tests
#   make proofs          Frama-C WP and Coq proofs (proofs/README.md)
#   make proofs-cache    rewrite proofs/cache/ and proofs/records/ (the provers'
#                        answers, WP's run records; proofs/README.md)
#   make check-torch     the PyTorch example (docs/examples/pytorch/) against
#                        the golden vectors, its deliberate bug caught, and
#                        through the pytest plugin once `import pflref` works
#   make install         headers, libraries, pflref.pc, pflref, pflref(1), the
#                        golden vectors and the Python package into
#                        $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make
#                        uninstall removes them; make check-install (in
#                        make check) tries the round trip in a temporary prefix
#   make site            the reader's edition: static HTML in build/site/
#                        (make check-site: every page in headless Chromium)
#   make bench           pflref vs NumPy vs PyTorch-CPU fp64, side by side
#                        (a benchmark, never a test; bench/run.py,
#                        docs/performance.md; BENCH_ARGS=--quick: smaller)
#   make clean
#
# Every target that runs a tool first runs ./deps.sh with the groups it
# needs (core: compilers, libraries, python3; lint, coverage, asan,
# valgrind, fuzz, proofs, bench), which installs missing Debian packages and does
# nothing when they are present.

ifeq ($(origin CC),default)
CC := gcc
endif
ifeq ($(origin CXX),default)
CXX := g++
endif
# Debian's python3 (deps.sh installs it with numpy and jsonschema).
PYTHON  := /usr/bin/python3
SHELL   := /bin/bash
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion \
           -Wno-format-truncation
WERROR  ?= -Werror
OPT     ?= -O2 -g
# -ffp-contract=off: no fused multiply-add, so every product is rounded as
# written (ISO mode implies it; kept explicit).  Never -ffast-math.
# -fPIC: the same objects make the static and the shared library.
BASEFLAGS = $(CSTD) $(WARN) $(WERROR) -ffp-contract=off -fPIC -Iinclude -Iref
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
# GSL on OpenBLAS.  Not `pkg-config --libs gsl` (it adds -lgslcblas), and
# -lopenblas AFTER -lgsl: Debian's gcc links --as-needed, and the other
# order silently drops OpenBLAS so GSL would run its reference CBLAS.
LDLIBS  := -ljansson -lzip -lz -lcrypto -lgsl -lopenblas -lm
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
B       := build

SRC    := $(sort $(wildcard ref/*/*.c))
CLI    := $(sort $(wildcard cli/*.c))
TESTS  := $(sort $(wildcard tests/*.c))

.SECONDARY:
.DELETE_ON_ERROR:
.PHONY: all deps demo bench check check-unit check-blas check-golden check-schema \
        check-detection check-mutation check-mutation-fast check-headers \
        check-lint check-python check-kernels check-docs golden golden-update coverage check-asan \
        check-valgrind fuzz fuzz-smoke lint proofs proofs-cache clean check-torch install \
        uninstall check-install site check-site trace

all: deps
	@$(MAKE) --no-print-directory $(B)/rel/pflref

deps:
	@./deps.sh core

# One object tree per flavour: rel, cov (coverage), asan.
define FLAVOUR
$(B)/$(1)/obj/%.o: %.c $(wildcard include/*.h include/pflref/*.h ref/*/*.h) $(wildcard tests/*.h) | $(B)/$(1)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASEFLAGS) $(2) -DPFLREF_CFLAGS='"$$(strip $(2))"' $$(CHECK_CFLAGS) -c $$< -o $$@
$(B)/$(1)/libpflref.a: $$(SRC:%.c=$(B)/$(1)/obj/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
$(B)/$(1)/pflref: $$(CLI:%.c=$(B)/$(1)/obj/%.o) $(B)/$(1)/libpflref.a
	$$(CC) $(2) $$^ -o $$@ $$(LDLIBS)
$(B)/$(1)/tests/run: $$(TESTS:%.c=$(B)/$(1)/obj/%.o) $(B)/$(1)/libpflref.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$^ -o $$@ $$(CHECK_LIBS) $$(LDLIBS)
$(B)/$(1): ; @mkdir -p $$@
endef
$(eval $(call FLAVOUR,rel,$(OPT)))
$(eval $(call FLAVOUR,cov,-O0 -g --coverage))
$(eval $(call FLAVOUR,asan,-O1 -g $(SAN)))

# The version has one home, include/pflref/version.h; the shared library's
# soname carries its major number.
VERSION := $(shell sed -n 's/^\#define PFLREF_VERSION "\(.*\)"/\1/p' include/pflref/version.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
$(B)/rel/libpflref.so.$(VERSION): $(SRC:%.c=$(B)/rel/obj/%.o)
	$(CC) -shared -Wl,-soname,libpflref.so.$(SOMAJOR) $^ -o $@ $(LDLIBS)
$(B)/rel/libpflref.so: $(B)/rel/libpflref.so.$(VERSION)
	@ln -sf libpflref.so.$(VERSION) $(B)/rel/libpflref.so.$(SOMAJOR)
	@ln -sf libpflref.so.$(VERSION) $@

# ---- install (tools/install.sh says where each file goes) ----------------
# make install PREFIX=/usr/local DESTDIR=   headers, libpflref.a and .so
#   (with its soname link), pflref.pc, the pflref program, pflref(1), the
#   golden vectors, the Python package; a manifest of what went where
# make uninstall (same PREFIX, DESTDIR)      removes exactly that
# make check-install                         the round trip in a temporary
#   prefix, with a C and a C++ program built by pkg-config (in make check)
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_ENV = PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' VERSION='$(VERSION)' \
              SOMAJOR='$(SOMAJOR)' LDLIBS='$(LDLIBS)' B='$(B)/rel'
# The pkg-config file and the manual page, with the version of
# include/pflref/version.h (for tests/test_version.c; install writes its own
# pflref.pc for its PREFIX).
$(B)/rel/pflref.pc: include/pflref/version.h tools/install.sh Makefile | $(B)/rel
	@$(INSTALL_ENV) sh tools/install.sh pc '$(PREFIX)' $@
$(B)/rel/man/pflref.1: man/pflref.1.in include/pflref/version.h | $(B)/rel
	@mkdir -p $(dir $@)
	@sed 's/@VERSION@/$(VERSION)/g' $< > $@.tmp && mv $@.tmp $@
INSTALL_DEPS := $(B)/rel/pflref $(B)/rel/libpflref.a $(B)/rel/libpflref.so \
                $(B)/rel/pflref.pc $(B)/rel/man/pflref.1

install: deps
	@$(MAKE) -s --no-print-directory $(INSTALL_DEPS)
	@$(INSTALL_ENV) sh tools/install.sh install

uninstall:
	@$(INSTALL_ENV) sh tools/install.sh uninstall

# Install into a fresh temporary prefix; build a C and a C++ program with
# `pkg-config --cflags --libs pflref` alone and run a golden vector through
# pflref_golden_verify with each (on the installed shared library); run the
# installed pflref (--version, verify of the installed vectors) and man -l
# on its page; compare the installed Python package's version when there is
# one; uninstall and require an empty prefix.  Then the same round trip
# staged with DESTDIR.
check-install: $(INSTALL_DEPS)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && p=$$tmp/prefix && \
	  $(MAKE) -s --no-print-directory install PREFIX=$$p DESTDIR= >/dev/null && \
	  export PKG_CONFIG_PATH=$$p/lib/pkgconfig && \
	  test "$$(pkg-config --modversion pflref)" = "$(VERSION)" && \
	  vec=$$p/share/pflref/golden/fedavg/worked-samples.json && \
	  $(CC) -std=c11 $(HDR_WARN) tests/install/verify_vector.c -o $$tmp/c \
	    $$(pkg-config --cflags --libs pflref) && \
	  $(CXX) -std=c++17 $(HDR_WARN) tests/install/verify_vector.cpp -o $$tmp/cxx \
	    $$(pkg-config --cflags --libs pflref) && \
	  for prog in c cxx; do \
	    LD_LIBRARY_PATH=$$p/lib ldd $$tmp/$$prog | grep -q "libpflref.so.$(SOMAJOR) => $$p/lib/" \
	      || { echo "check-install: $$prog does not load $$p/lib/libpflref.so.$(SOMAJOR)"; exit 1; }; \
	    LD_LIBRARY_PATH=$$p/lib $$tmp/$$prog $$vec >/dev/null \
	      || { echo "check-install: the $$prog program did not verify $$vec"; exit 1; }; done && \
	  $$p/bin/pflref --version | grep -q "^pflref $(VERSION) (" \
	    || { echo "check-install: the installed pflref --version is not $(VERSION)"; exit 1; } && \
	  $$p/bin/pflref verify $$p/share/pflref/golden >/dev/null \
	    || { echo "check-install: the installed vectors do not verify"; exit 1; } && \
	  MANWIDTH=80 man -l $$p/share/man/man1/pflref.1 2>&1 | grep -qE "pflref +freeze +SPEC" \
	    || { echo "check-install: man -l cannot render pflref(1)"; exit 1; } && \
	  MANWIDTH=80 MANPATH=$$p/share/man man pflref-freeze 2>&1 | grep -qE "pflref +freeze +SPEC" \
	    || { echo "check-install: man pflref-freeze does not show pflref(1)"; exit 1; } && \
	  if test -f $$p/lib/python3/dist-packages/pflref/__init__.py; then \
	    v=$$(cd $$tmp && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$$p/lib/python3/dist-packages \
	         LD_LIBRARY_PATH=$$p/lib $(PYTHON) -c 'import pflref; print(pflref.__version__)') \
	      && test "$$v" = "$(VERSION)" \
	      || { echo "check-install: the installed Python package says version '$$v', not $(VERSION)"; exit 1; }; \
	  else echo "check-install: no python/pflref package in this tree; its version is not compared"; fi && \
	  $(MAKE) -s --no-print-directory uninstall PREFIX=$$p DESTDIR= >/dev/null && \
	  left=$$(find $$p -mindepth 1 | head -n 5) && \
	  { test -z "$$left" || { echo "check-install: uninstall left $$left"; exit 1; }; } && \
	  $(MAKE) -s --no-print-directory install PREFIX=/opt/pflref DESTDIR=$$tmp/stage >/dev/null && \
	  grep -qx 'prefix=/opt/pflref' $$tmp/stage/opt/pflref/lib/pkgconfig/pflref.pc && \
	  test "$$(readlink $$tmp/stage/opt/pflref/lib/libpflref.so.$(SOMAJOR))" = libpflref.so.$(VERSION) && \
	  $(MAKE) -s --no-print-directory uninstall PREFIX=/opt/pflref DESTDIR=$$tmp/stage >/dev/null && \
	  left=$$(find $$tmp/stage/opt/pflref -mindepth 1 | head -n 5) && \
	  { test -z "$$left" || { echo "check-install: uninstall (DESTDIR) left $$left"; exit 1; }; } && \
	  echo "check-install: installed, built C and C++ with pkg-config, verified, uninstalled to an empty prefix"

# The tests find the CLI and the repository through the environment.
# PFLREF_PRODUCTS: the release build's shared library, pflref.pc and
# man page, whose versions tests/test_version.c compares (every flavour's
# test target builds them: REL_PRODUCTS).
define RUN_TESTS
PFLREF_CLI=$(abspath $(B)/$(1)/pflref) PFLREF_ROOT=$(CURDIR) PFLREF_PRODUCTS=$(abspath $(B))/rel \
  $(2) $(abspath $(B))/$(1)/tests/run
endef
REL_PRODUCTS = $(B)/rel/libpflref.so $(B)/rel/pflref.pc $(B)/rel/man/pflref.1

# The benchmark (bench/run.py): data generated once into build/bench/,
# then every workload with its contenders alternating; writes
# build/bench/bench.json, table.md and bench.svg.
BENCH_ARGS ?=
bench: deps
	@./deps.sh bench
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref
	@nice $(PYTHON) bench/run.py $(BENCH_ARGS)

demo: deps
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref $(B)/rel/libpflref.so
	@$(abspath $(B))/rel/pflref run golden/seed000/fedavg-ft.json -o $(B)/demo-ft.json
	@$(abspath $(B))/rel/pflref run golden/seed000/local.json -o $(B)/demo-local.json
	@echo "seed 000, Code 14.7.1 on the seed's own data (Output 14.7.1):"
	@$(abspath $(B))/rel/pflref table --metric test_mse \
	    global=$(B)/demo-ft.json:global local=$(B)/demo-local.json:local \
	    personalized=$(B)/demo-ft.json:personalized
	@./deps.sh plot
	@$(abspath $(B))/rel/pflref plot clients -o $(B)/demo-clients.svg \
	    global=$(B)/demo-ft.json:global local=$(B)/demo-local.json:local \
	    personalized=$(B)/demo-ft.json:personalized
	@echo "seed 000's figure (every client under each model; mean, worst and worst decile marked):" \
	    "$(abspath $(B))/demo-clients.svg"
	@tools/summary.sh 1 $(abspath $(B))/rel/pflref verify golden

# The reader's edition (tools/site/build.py): static HTML in build/site/,
# each algorithm's box beside the C lines citing it, the vectors and tests
# that check each line, a worked example's trace, seed 000's figures, the
# variants and the validation guide; its formulas typeset by KaTeX at build
# time (tools/site/math.py, node and Debian's libjs-katex: a KaTeX warning
# fails the build).  check-site opens every page in headless Chromium
# (tests/site/check_site.py): a broken link, a missing image, a console
# error, a computing box line without trace values (tools/site/
# untraced.json lists the exceptions) or a layout regression of an
# algorithm page against tests/site/layout-baseline.json fails; keeps
# build/site/pfedme.png and a screenshot of each algorithm page in
# build/site/shots/.  After a deliberate layout change, `make check-site
# LAYOUT=update` rewrites the baseline (review its diff).  Not in
# `make check` (chromium is its own deps.sh group); .ci/run runs it.
site: deps
	@./deps.sh site
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref
	@$(PYTHON) tools/site/build.py --pflref $(B)/rel/pflref --out $(B)/site

check-site: site
	@$(PYTHON) tests/site/check_site.py $(B)/site $(if $(filter update,$(LAYOUT)),--update-layout)

# The parts run CHECK_JOBS at a time (the machines it runs on have two
# cores; CHECK_JOBS=1 runs them in turn), the longest first; each part's
# output is printed whole when it ends (--output-sync), and the first
# failure stops the rest.  The builds they share come first, so no two
# parts build the same file.
CHECK_JOBS ?= 2
CHECK_PARTS := check-detection check-python check-golden check-mutation-fast \
  check-unit check-schema check-kernels check-install trace check-docs \
  check-lint check-blas check-headers
check: deps
	@$(MAKE) -s --no-print-directory -j$(CHECK_JOBS) $(INSTALL_DEPS) \
	  $(B)/rel/tests/run $(REL_PRODUCTS)
	@$(MAKE) -s --no-print-directory -j$(CHECK_JOBS) --output-sync=target \
	  $(CHECK_PARTS)

# The docs that must agree with the registry and the tree
# (tools/docgen.py): formats.md's algorithm and preset tables and the
# manual's ALGORITHMS, generated (rewrite with `$(PYTHON) tools/docgen.py
# --write`); every vector id and path a page names exists; every vector of
# an algorithm's folder is named in a table row of its page (docgen_gaps.json lists
# those not yet); then the script's self-test, each drift planted in a copy
# of the pages.
check-docs: $(B)/rel/pflref
	@PFLREF_CLI=$(B)/rel/pflref $(PYTHON) tools/docgen.py
	@PFLREF_CLI=$(B)/rel/pflref $(PYTHON) tools/docgen.py --self-test

# The traceability matrix (tools/trace.py, docs/traceability.md): every
# requirement of trace/*.req cited by code and by a test or golden vector,
# every req: tag registered, the matrix up to date (rewrite it with
# `$(PYTHON) tools/trace.py --write`); then the script's self-test, each
# failure planted in a temporary copy of the tree.
trace:
	@$(PYTHON) tools/trace.py
	@$(PYTHON) tools/trace.py --self-test

check-unit: $(B)/rel/pflref $(B)/rel/tests/run $(REL_PRODUCTS)
	@$(call RUN_TESTS,rel,)
	@tools/summary.sh 1 $(abspath $(B))/rel/pflref verify golden

# The golden folder's own rules (flags registered, ids unique, hashes
# matching, provenance kinds), by an independent Python reading.
check-golden:
	@$(PYTHON) golden/pflref_golden.py --self-test
	@$(PYTHON) golden/lint.py
	@$(PYTHON) golden/audit.py
	@$(PYTHON) golden/coincidences.py
	@$(PYTHON) golden/coincidences.py --self-test
	@$(PYTHON) golden/boundaries.py --self-test

# Every shipped document against the JSON Schemas in docs/schema, and the
# schemas' own self-test (they must reject planted bad documents).
check-schema: $(B)/rel/pflref
	@$(PYTHON) docs/schema/validate.py --self-test --pflref $(B)/rel/pflref >/dev/null
	@$(abspath $(B))/rel/pflref run golden/fedavg/worked-samples.json -o $(B)/schema-result.json
	@tools/summary.sh 1 $(PYTHON) docs/schema/validate.py golden $(B)/schema-result.json

# The validation guide's NumPy candidates and the catalogue of candidate
# bugs: the correct candidates pass `pflref check`, every bug is caught.
check-detection: $(B)/rel/pflref
	@PFLREF_CLI=$(B)/rel/pflref tools/summary.sh 2 bash tests/detection/run.sh

# The golden suite's mutation score: AST mutants of the NumPy candidates,
# each run on the vectors that reach it and judged by `pflref check`;
# target >= 98% of the non-equivalent mutants killed (tests/detection/README.md).
# check-mutation-fast (in `make check`): a fixed-seed sample, 2 processes;
# check-mutation (in .ci/run): every mutant.  Report: build/mutation-report.txt
check-mutation-fast: $(B)/rel/pflref
	@PFLREF_CLI=$(B)/rel/pflref $(PYTHON) tests/detection/mutate.py --fast --jobs 2 \
	  --report $(B)/mutation-report-fast.txt

# Both fail below the target; the report states the score against 98% and
# names the survivors (tests/detection/mutation-survivors.json: the gaps).
check-mutation: deps $(B)/rel/pflref
	@PFLREF_CLI=$(B)/rel/pflref $(PYTHON) tests/detection/mutate.py --jobs 2 \
	  --report $(B)/mutation-report.txt

# Regenerate every golden vector into a temporary folder and diff it with
# the frozen one; never writes into golden/ (see golden/CHANGES.md).
golden: deps
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  sh golden/regenerate.sh "$$tmp"

# Rewrite golden/ from the generators (expected values and content hashes,
# never from pflref's output), then the built-in flag registry, then lint.
# A deliberate act: refused unless golden/CHANGES.md has a new entry (more
# "## " headings than at git HEAD) saying what changes and why.
golden-update: deps
	@git show HEAD:golden/CHANGES.md >/dev/null 2>&1 \
	  || { echo "golden-update: needs golden/CHANGES.md at git HEAD to compare with" >&2; exit 1; }
	@new=$$(grep -c '^## ' golden/CHANGES.md); \
	  old=$$(git show HEAD:golden/CHANGES.md | grep -c '^## '); \
	  test "$$new" -gt "$$old" || { echo "golden-update: golden/CHANGES.md has no new entry" \
	    "(a '## ' heading not at git HEAD): record what changes and why first" >&2; exit 1; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  { sh golden/regenerate.sh "$$tmp" >/dev/null; test $$? -le 1; } && \
	  for f in $$(cd "$$tmp" && find . -type f -name '*.json' | sort); do \
	    f=$${f#./}; cmp -s "$$tmp/$$f" "golden/$$f" && continue; \
	    mkdir -p "$$(dirname "golden/$$f")" && cp "$$tmp/$$f" "golden/$$f" && \
	    echo "golden-update: rewrote golden/$$f"; done
	@$(PYTHON) golden/lint.py --write-flags-header
	@$(PYTHON) golden/lint.py

# GSL must run on OpenBLAS: the binary links libopenblas directly, and the
# dynamic linker binds GSL's cblas_dgemm to it (not to libgslcblas).
check-blas: $(B)/rel/pflref
	@readelf -d $(B)/rel/pflref | grep -q 'NEEDED.*libopenblas' \
	  || { echo "check-blas: pflref does not link libopenblas"; exit 1; }
	@LD_BIND_NOW=1 LD_DEBUG=bindings $(abspath $(B))/rel/pflref --version 2>&1 >/dev/null \
	  | grep -E "libgsl\.so[^ ]*( \[[0-9]+\])? to [^ ]*libopenblas\.so[^ ]*( \[[0-9]+\])?: normal symbol .cblas_dgemm" >/dev/null \
	  || { echo "check-blas: GSL's cblas calls do not bind to OpenBLAS"; exit 1; }
	@echo "check-blas: GSL binds cblas_* to OpenBLAS"

# The public headers, each alone (self-contained; -Iinclude only, so no
# private header of ref/ is reachable), as C11 and as C++17, and a C++
# program that includes pflref.h, links the library and runs.  Each header
# is included twice (its guard) in a unit that declares one thing more, as
# ISO C forbids an empty unit (version.h has only macros).
PUBLIC_H := include/pflref.h $(sort $(wildcard include/pflref/*.h))
HDR_WARN := -Wall -Wextra -Wpedantic -Werror
check-headers: $(B)/rel/libpflref.a
	@for h in $(PUBLIC_H); do \
	  u=$$(printf '#include "%s"\n#include "%s"\ntypedef int header_alone;\n' \
	       $${h#include/} $${h#include/}); \
	  echo "$$u" | $(CC) -fsyntax-only -std=c11 $(HDR_WARN) -Iinclude -x c - \
	    || { echo "check-headers: $$h does not compile alone as C11"; exit 1; }; \
	  echo "$$u" | $(CXX) -fsyntax-only -std=c++17 $(HDR_WARN) -Iinclude -x c++ - \
	    || { echo "check-headers: $$h does not compile alone as C++17"; exit 1; }; \
	done
	@echo "check-headers: $(words $(PUBLIC_H)) public headers compile alone as C11 and as C++17"
	@$(CXX) -std=c++17 $(HDR_WARN) -Iinclude tests/cxx/use_from_cxx.cpp \
	  $(B)/rel/libpflref.a -o $(B)/rel/use_from_cxx $(LDLIBS)
	@$(abspath $(B))/rel/use_from_cxx

# The Python package (python/pflref: the ctypes binding of the shared
# library, the Recorder, the pytest plugin) and its tests (python/tests,
# docs/python.md), quietly: pytest's summary line.
check-python: $(B)/rel/libpflref.so $(B)/rel/pflref
	@cd python && PYTHONDONTWRITEBYTECODE=1 \
	  PFLREF_LIB=$(abspath $(B))/rel/libpflref.so PFLREF_CLI=$(abspath $(B))/rel/pflref \
	  ../tools/summary.sh --keep "^SKIPPED" 1 $(PYTHON) -m pytest -q -rfEs -p no:cacheprovider tests

# verify golden and the exact-replay tests under every OpenBLAS kernel the
# processor runs (tests/kernels.sh): a tolerance that holds on one machine's
# kernel must hold on the others'.
check-kernels: $(B)/rel/libpflref.so $(B)/rel/pflref
	@PFLREF_CLI=$(B)/rel/pflref PFLREF_LIB=$(B)/rel/libpflref.so PYTHON=$(PYTHON) \
	  bash tests/kernels.sh

# The architecture lint's own test: floors.py must catch every planted
# fault and pass the clean tree (tests/lint/test_floors.py); before it,
# proofs/README.md's tables against the sources (every function a WP job
# proves, every trusted contract: tests/lint/proof_tables.py) and that
# checker's self-test, each drift planted in a copy; and the self-test of
# proofs/gappa/enclosure.py's comparison (tests/lint/test_gappa_enclosure.py)
# and of Gappa's recorded answers (tests/lint/test_gappa_cache.py).
check-lint:
	@$(PYTHON) tests/lint/proof_tables.py
	@$(PYTHON) tests/lint/test_proof_tables.py
	@$(PYTHON) tests/lint/test_gappa_enclosure.py
	@$(PYTHON) tests/lint/test_gappa_cache.py
	@$(PYTHON) tests/lint/test_make_vectors.py
	@$(PYTHON) tests/lint/test_floors.py
	@$(PYTHON) tools/spdx.py --self-test

COV_LINE   ?= 90
COV_BRANCH ?= 75
# --gcov-ignore-parse-errors: gcov derives one branch count of
# ref/models/batch.c's workspace allocation as negative ("taken -3"), which
# gcovr cannot parse; that line's branches are skipped, not the file.
coverage:
	@./deps.sh core coverage
	@$(MAKE) -s --no-print-directory $(B)/cov/pflref $(B)/cov/tests/run $(REL_PRODUCTS)
	@find $(B)/cov -name '*.gcda' -delete
	@$(call RUN_TESTS,cov,)
	gcovr -r . --filter 'ref/' --object-directory $(B)/cov -s \
	  --exclude-unreachable-branches --exclude-throw-branches \
	  --gcov-ignore-parse-errors \
	  --fail-under-line $(COV_LINE) --fail-under-branch $(COV_BRANCH)

# The PyTorch example: FedAvg, pFedMe, Ditto and FedRep as torch.nn.Module
# candidates pass `pflref check` on every vector of fedavg, pfedme, ditto and
# fedalt; Ditto's deliberate aliasing bug fails it; and, when python/pflref
# imports, the same through the pytest plugin (docs/examples/pytorch/check.sh).
# Not in `make check` (torch is its own deps.sh group); .ci/run runs it.
check-torch:
	@./deps.sh core torch
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref $(B)/rel/libpflref.so
	@PFLREF_CLI=$(B)/rel/pflref PYTHON=$(PYTHON) bash docs/examples/pytorch/check.sh

# The suite under ASan + UBSan in one process (CK_FORK=no, as under
# valgrind): LeakSanitizer then checks for leaks once, when the runner
# exits, and a leak fails the target there (exit 1, the allocating test
# named in its stack).  Forked, it checked every one of the 1800 tests'
# children as it exited: 790 s against 217 s (1 December, idle).
check-asan:
	@./deps.sh core asan
	@$(MAKE) -s --no-print-directory $(B)/asan/pflref $(B)/asan/tests/run $(REL_PRODUCTS)
	@$(call RUN_TESTS,asan,CK_FORK=no)

check-valgrind:
	@./deps.sh core valgrind
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref $(B)/rel/tests/run $(REL_PRODUCTS)
	@$(call RUN_TESTS,rel,CK_FORK=no OPENBLAS_NUM_THREADS=1 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)

# libFuzzer harnesses (clang; ASan + UBSan; fuzz/README.md).  Each harness
# first replays its fixed crashes (fuzz/regressions/<harness>/), then fuzzes
# with the generated corpus first (libFuzzer writes new inputs into the first
# folder) and the seeds second.  `make fuzz` runs each harness for
# FUZZ_SECONDS or FUZZ_RUNS executions, whichever ends first (-1: no limit);
# `make fuzz-smoke` runs every harness for FUZZ_SMOKE_SECONDS.  Any crash,
# sanitizer report, leak, timeout or violated invariant fails the target.
FUZZ          := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS  ?= 600
FUZZ_RUNS     ?= -1
FUZZ_SMOKE_SECONDS ?= 7
# The library is compiled once (instrumented, -fsanitize=fuzzer-no-link) and
# linked into every harness.
FUZZ_CFLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Iinclude -Iref -ffp-contract=off \
                 -fsanitize=address,undefined -fno-sanitize-recover=all
$(B)/fuzz/obj/%.o: ref/%.c $(wildcard include/*.h include/pflref/*.h ref/*/*.h)
	@mkdir -p $(dir $@)
	@clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(B)/fuzz/libpflref.a: $(SRC:ref/%.c=$(B)/fuzz/obj/%.o)
	@rm -f $@ && ar rcs $@ $^
$(B)/fuzz/%: fuzz/%.c $(wildcard fuzz/*.h) $(B)/fuzz/libpflref.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(B)/fuzz/libpflref.a -o $@ $(LDLIBS)
# $(1) the harness binaries, $(2) seconds, $(3) executions.  The JSON
# harnesses get the format's dictionary; fuzz_algorithms reads raw bytes.
define RUN_FUZZ
@for f in $(1); do n=$$(basename $$f); mkdir -p $(B)/corpus/$$n; \
  case $$f in /*) ;; *) f=./$$f ;; esac; \
  dict=; test $$n = fuzz_algorithms || dict=-dict=fuzz/pflref.dict; \
  regs=$$(ls -d fuzz/regressions/$$n/* 2>/dev/null); \
  if test -n "$$regs"; then \
    OPENBLAS_NUM_THREADS=1 $$f -timeout=10 -rss_limit_mb=2048 $$regs \
      >$(B)/fuzz/$$n.replay.log 2>&1 \
      || { cat $(B)/fuzz/$$n.replay.log; echo "$$n: a regression reproducer fails"; exit 1; }; \
    echo "$$n: $$(echo $$regs | wc -w) regression reproducers pass"; fi; \
  OPENBLAS_NUM_THREADS=1 $$f -max_total_time=$(2) -runs=$(3) -print_final_stats=1 \
    -artifact_prefix=$(B)/fuzz/$$n- -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    $$dict $(B)/corpus/$$n fuzz/corpus/$$n >$(B)/fuzz/$$n.log 2>&1; rc=$$?; \
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==ERROR|SUMMARY|fuzz invariant)' $(B)/fuzz/$$n.log \
    | sed "s/^/$$n: /"; \
  test $$rc = 0 || { tail -n 40 $(B)/fuzz/$$n.log; echo "$$n: failed (log: $(B)/fuzz/$$n.log)"; exit 1; }; done
endef
FUZZ_BINS     := $(FUZZ:fuzz/%.c=$(B)/fuzz/%)
fuzz:
	@./deps.sh core fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(call RUN_FUZZ,$(FUZZ_BINS),$(FUZZ_SECONDS),$(FUZZ_RUNS))
fuzz-smoke:
	@./deps.sh core fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(call RUN_FUZZ,$(FUZZ_BINS),$(FUZZ_SMOKE_SECONDS),-1)

# Frama-C WP proofs of the contracts in ref/, their negative controls, and
# the Coq proofs of proofs/coq/ (proofs/README.md).  The CLI is built for
# the Gappa step's test of a frozen vector's derived tolerance
# (tests/lint/test_derive_tolerance.py).
proofs:
	@./deps.sh core proofs
	@$(MAKE) -s --no-print-directory $(B)/rel/pflref
	PFLREF_CLI=$(abspath $(B))/rel/pflref proofs/run.sh

# proofs/cache/, proofs/records/ and proofs/gappa/cache/ rewritten from
# nothing (proofs/README.md, "The prover cache", "The run records"): every
# goal proved, every WP run made and every Gappa script run, then the
# answers an update pass adds.
proofs-cache:
	@./deps.sh proofs
	PROOFS_CACHE=rebuild proofs/run.sh
	PROOFS_CACHE=update proofs/run.sh

# The floors, include cycles and sizes (docs/architecture.md), cppcheck on
# every file of ref/ (each floor's folder) and cli/, the SPDX license
# identifier of every source file (tools/spdx.py: a new file without one
# fails), then the floors and SPDX scripts' self-tests.
lint:
	@./deps.sh lint
	$(PYTHON) tests/lint/floors.py
	cppcheck --enable=warning,style,performance,portability --std=c11 \
	  --error-exitcode=1 --quiet --inline-suppr -Iinclude -Iref $(sort $(wildcard ref/*/)) cli/
	$(PYTHON) tools/spdx.py --check
	@$(PYTHON) tests/lint/test_floors.py
	@$(PYTHON) tools/spdx.py --self-test

clean:
	rm -rf $(B)

# PFLlib's own classes against pflref's presets (issues 33 §2, 34, 35),
# outside `make check`: needs PFLLIB_DIR, a checkout of TsingZ0/PFLlib (read
# only), and torch; tests/pfllib/*.py say what each compares.  One line per
# algorithm: agree, DIFFER with the max difference, or cannot run and why;
# the target fails when any differs or cannot run (each harness's stderr
# is kept in $(B)/pfllib/<alg>.err).
PFLLIB_HARNESSES = fedfomo fedfomo_bn fedprox scaffold feddyn moon moon_bn fedproto fedproto_bn fedrod \
  apple fedala fedamp ditto pfedme perfedavg fedrep fedper lgfedavg apfl fedavg_bn \
  fedbn fedbabu
.PHONY: check-pfllib
check-pfllib: $(B)/rel/pflref
	@if [ -z "$(PFLLIB_DIR)" ]; then \
	  echo "check-pfllib: set PFLLIB_DIR to a PFLlib checkout" >&2; exit 2; fi
	@mkdir -p $(B)/pfllib; fail=0; for a in $(PFLLIB_HARNESSES); do \
	  PFLLIB_DIR="$(PFLLIB_DIR)" $(PYTHON) tests/pfllib/$$a.py $(B)/rel/pflref \
	    2>$(B)/pfllib/$$a.err || fail=1; \
	done; [ $$fail = 0 ] || echo "check-pfllib: stderr in $(B)/pfllib/*.err" >&2; \
	exit $$fail
