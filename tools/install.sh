#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# tools/install.sh: what `make install`, `make uninstall` and the pkg-config
# file's rule do (the Makefile passes the settings through the environment).
#
#   tools/install.sh pc PREFIX OUT     write pflref.pc for PREFIX into OUT
#   tools/install.sh install           install into $DESTDIR$PREFIX
#   tools/install.sh uninstall         remove what install put there
#
# Environment: PREFIX (required), DESTDIR (may be empty), VERSION and
# SOMAJOR (from include/pflref/version.h), LDLIBS (the libraries pflref
# links, in their order), B (the build folder holding libpflref.a,
# libpflref.so.VERSION, pflref and man/pflref.1).
#
# Layout under $DESTDIR$PREFIX:
#   include/pflref.h, include/pflref/*.h      the public headers
#   lib/libpflref.a, lib/libpflref.so.VERSION and the links
#     libpflref.so.MAJOR (the soname) and libpflref.so -> libpflref.so.MAJOR
#   lib/pkgconfig/pflref.pc
#   bin/pflref
#   share/man/man1/pflref.1, and pflref-COMMAND.1 for each command, which
#     sources it
#   share/pflref/golden/...                   the golden vectors (*.json,
#                                             with flags.json) and their
#                                             README.md and CHANGES.md
#   lib/python3/dist-packages/pflref/...      python/pflref/**/*.py
#   share/pflref/install-manifest             what install put: every file
#                                             and every folder it created
#
# uninstall removes the files of the manifest, the Python package's
# __pycache__ folders (written by Python when the package is imported), the
# manifest, then each folder install created, deepest first, when it is
# empty; so an install into an empty prefix followed by an uninstall leaves
# it empty, and a folder that held something before is never removed.
# Exit status: 0 ok, 1 failure (named), 2 usage.
set -eu

usage() {
    echo "usage: tools/install.sh pc PREFIX OUT | install | uninstall" >&2
    exit 2
}

# The pkg-config file of a prefix.  Libs.private is LDLIBS verbatim, in its
# order: -lopenblas after -lgsl, so that a static link binds GSL's cblas_*
# to OpenBLAS (Makefile, LDLIBS).  gsl is not a Requires.private: its
# gsl.pc adds -lgslcblas, GSL's reference BLAS, which pflref must not run
# on.  No Cflags beyond the include folder: the public headers include no
# library header.
write_pc() {
    cat <<EOF
# pflref.pc: pkg-config file of pflref $VERSION (written by tools/install.sh)
prefix=$1
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: pflref
Description: Double-precision reference implementation and test oracle for personalized federated learning
Version: $VERSION
Libs: -L\${libdir} -lpflref
Libs.private: $LDLIBS
Cflags: -I\${includedir}
EOF
}

[ $# -ge 1 ] || usage
case "$1" in
    pc) [ $# -eq 3 ] || usage
        : "${VERSION:?}" "${LDLIBS:?}"
        write_pc "$2" > "$3.tmp" && mv "$3.tmp" "$3"
        exit 0 ;;
    install|uninstall) [ $# -eq 1 ] || usage ;;
    *) usage ;;
esac

: "${PREFIX:?PREFIX is required}" "${VERSION:?}" "${SOMAJOR:?}" "${B:?}"
DESTDIR=${DESTDIR:-}
case "$PREFIX" in
    /*) ;;
    *) echo "install.sh: PREFIX must be an absolute path: $PREFIX" >&2; exit 1 ;;
esac
root="$DESTDIR$PREFIX"
COMMANDS="run table verify check diagnose freeze plot list"
manifest="$root/share/pflref/install-manifest"
pydir="lib/python3/dist-packages/pflref"

if [ "$1" = uninstall ]; then
    if [ ! -f "$manifest" ]; then
        echo "uninstall: nothing of pflref's is installed in $root (no share/pflref/install-manifest)" >&2
        exit 1
    fi
    # the folders install created, longest (deepest) path first
    dirs=$(sed -n 's/^d //p' "$manifest" | awk '{ print length($0) "\t" $0 }' |
           sort -rn | cut -f2-)
    # files (and links) first
    sed -n 's/^f //p' "$manifest" | while IFS= read -r rel; do
        rm -f "$root/$rel"
    done
    if [ -d "$root/$pydir" ]; then
        find "$root/$pydir" -depth -type d -name __pycache__ -exec rm -rf {} +
    fi
    rm -f "$manifest"
    printf '%s\n' "$dirs" | while IFS= read -r rel; do
        if [ -n "$rel" ] && [ -d "$root/$rel" ]; then
            rmdir "$root/$rel" 2>/dev/null ||
                echo "uninstall: kept $root/$rel (it holds files pflref did not install)" >&2
        fi
    done
    echo "uninstall: pflref removed from $root"
    exit 0
fi

# ---- install ------------------------------------------------------------

list=$(mktemp)
trap 'rm -f "$list"' EXIT
# Folders a previous install created stay recorded.
[ -f "$manifest" ] && grep '^d ' "$manifest" >> "$list" || true

# Create folder $1 under root and any missing parent, recording each one
# created (paths relative to root; root itself is not recorded).
mkd() {
    [ -d "$1" ] && return 0
    mkd "$(dirname "$1")"
    mkdir "$1"
    case "$1" in
        "$root"/*) printf 'd %s\n' "${1#"$root"/}" >> "$list" ;;
    esac
}

# put MODE SRC REL: install SRC as root/REL.
put() {
    mkd "$(dirname "$root/$3")"
    install -m "$1" "$2" "$root/$3"
    printf 'f %s\n' "$3" >> "$list"
}

# link TARGET REL: a symbolic link root/REL -> TARGET.
link() {
    mkd "$(dirname "$root/$2")"
    ln -sfn "$1" "$root/$2"
    printf 'f %s\n' "$2" >> "$list"
}

put 0644 include/pflref.h include/pflref.h
for h in include/pflref/*.h; do
    put 0644 "$h" "$h"
done
put 0644 "$B/libpflref.a" lib/libpflref.a
put 0755 "$B/libpflref.so.$VERSION" "lib/libpflref.so.$VERSION"
link "libpflref.so.$VERSION" "lib/libpflref.so.$SOMAJOR"
link "libpflref.so.$SOMAJOR" lib/libpflref.so
pc=$(mktemp)
write_pc "$PREFIX" > "$pc"
put 0644 "$pc" lib/pkgconfig/pflref.pc
rm -f "$pc"
put 0755 "$B/pflref" bin/pflref
put 0644 "$B/man/pflref.1" share/man/man1/pflref.1
# one page per command, each the whole pflref(1) (roff's .so), so
# `man pflref-freeze` finds it
alias=$(mktemp)
printf '.so man1/pflref.1\n' > "$alias"
for cmd in $COMMANDS; do
    put 0644 "$alias" "share/man/man1/pflref-$cmd.1"
done
rm -f "$alias"
find golden -type f \( -name '*.json' -o -name README.md -o -name CHANGES.md \) | sort |
while IFS= read -r f; do
    put 0644 "$f" "share/pflref/$f"
done
if [ -d python/pflref ]; then
    find python/pflref -type f -name '*.py' | sort | while IFS= read -r f; do
        put 0644 "$f" "$pydir/${f#python/pflref/}"
    done
fi
mkd "$(dirname "$manifest")"
sort -u "$list" > "$manifest"
printf 'f %s\n' share/pflref/install-manifest >> "$manifest"
echo "install: pflref $VERSION into $root ($(grep -c '^f ' "$manifest") files)"
