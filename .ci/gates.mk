# SPDX-License-Identifier: GPL-3.0-or-later
# .ci/gates.mk: the gates .ci/run runs after `make check`, each as a target
# gate-NAME that runs `make NAME` and prints how long it took.  .ci/run
# runs them in one pool, two at a time (make -j2), the longest first, so a
# processor idles only at the very end, not at the end of every group.
#
#     make -f .ci/gates.mk -j2 --output-sync=target gate-proofs gate-lint
#
# The gates share no output: each flavour builds its own tree (build/cov,
# build/asan, build/fuzz), and the release tree build/rel/ that several
# read is up to date after `make check`, so no two gates build one file.

.PHONY: FORCE
FORCE:

gate-%: FORCE
	@t0=$$(date +%s); rc=0; \
	  $(MAKE) -f Makefile --no-print-directory $* || rc=$$?; \
	  echo "== $*: $$(( $$(date +%s) - t0 )) s$$([ $$rc -eq 0 ] || echo ", failed ($$rc)")"; \
	  exit $$rc
