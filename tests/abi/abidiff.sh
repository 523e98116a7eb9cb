#!/bin/sh
# SPDX-License-Identifier: MIT
# abi.abidiff.<lib>: the built library against its committed baseline.
#
#   abidiff.sh ABIDIFF ABI_DUMP_SH BASELINE LIBRARY HEADERS_DIR
#
# The library is dumped as the baseline was (scripts/abi-dump.sh) and the two
# dumps compared: the same filters on both sides.
# Fails when a function, variable or type of the public headers was removed
# or changed (abidiff calls a struct's new layout an "ABI change", bit 4, not
# an incompatible one, bit 8: the summary lines say which), on bit 8, or when
# abidiff cannot compare; passes, listing them, when functions, variables or
# types were only added. Types no function reaches (the records tools read
# from buffers) are compared too (-t), those of the public headers only.
# A change
# made on purpose comes with a new version node and the baselines
# regenerated: sh scripts/abi-baseline.sh (docs/writing-a-tool.md).
set -u
abidiff=$1 dump=$2 baseline=$3 lib=$4 headers=$5
current=$(mktemp "${TMPDIR:-/tmp}/upti-abi.XXXXXX")
trap 'rm -f "$current"' EXIT
sh "$dump" "$lib" "$headers" "$current" || {
    echo "abidiff: abidw could not dump $lib"
    exit 1
}
# The libraries' own types (struct upti_buffer, the log's sinks: declared in
# the sources, src/) change freely; every other type counts: those of the
# public headers, and those of the system's (uint32_t changed to uint64_t in
# a parameter is a break). The dumps name files without their directory
# (--short-locs), so the suppression names the sources' files that are not
# also public headers' names.
supp=$(mktemp "${TMPDIR:-/tmp}/upti-abi-supp.XXXXXX")
trap 'rm -f "$current" "$supp"' EXIT
src=$(cd "$headers/.." && pwd)/src
public=$(cd "$headers" && ls upti/*.h uptx/*.h 2>/dev/null | sed 's|.*/||')
names=$(find "$src" -name '*.[ch]' | sed 's|.*/||' | sort -u | grep -vxF "$public" |
    sed 's|\.|\\.|g' | paste -sd '|')
printf '[suppress_type]\n  source_location_regexp = ^(%s)$\n' "$names" >"$supp"
# Anonymous enums are named by their place in the library
# (__anonymous_enum__N): another order of the objects at link time (a fresh
# configure against a reconfigured tree) renames the system headers' ones
# (dlfcn.h's RTLD_DL_*, unistd.h's _SC_*) and reads as a change. They are
# left out here; the public headers' own (ring.h's states and kinds) are
# held, value by value, by abi.installed (abi/headers.layout's "constant"
# lines).
printf '[suppress_type]\n  type_kind = enum\n  name_regexp = ^__anonymous_enum__\n' >>"$supp"
# The entry-point libraries' dumps (scripts/abi-dump.sh) hold reachable
# types only: -t on them makes abidiff abort.
t=
grep -q "tracking-non-reachable-types='yes'" "$baseline" && t=-t
out=$("$abidiff" $t --suppressions "$supp" "$baseline" "$current" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out"
if [ $((rc & 3)) -ne 0 ]; then
    echo "abidiff: could not compare $lib with $baseline (exit $rc)"
    exit 1
fi
if [ $((rc & 8)) -ne 0 ] ||
    printf '%s\n' "$out" | grep -Eq 'summary:.*(^|[^0-9])[1-9][0-9]* ([Rr]emoved|[Cc]hanged)'; then
    echo "abidiff: $lib breaks the ABI of $baseline (exit $rc): keep the old interface, or"
    echo "abidiff: add a version node (src/program/*/lib*.map, defines.h) and run sh scripts/abi-baseline.sh"
    exit 1
fi
if [ $((rc & 4)) -ne 0 ]; then
    echo "abidiff: $lib: additions only (exit $rc); a release records them: sh scripts/abi-baseline.sh"
else
    echo "abidiff: $lib: same ABI as $baseline"
fi
exit 0
