#!/bin/sh
# abi.abidiff.<lib>: the built library against its committed baseline.
#
#   abidiff.sh ABIDIFF BASELINE LIBRARY HEADERS_DIR
#
# Fails on an incompatible change (abidiff's bit 8: a function or variable
# removed, a type's layout changed, ...) or when abidiff cannot compare;
# passes, listing them, on compatible changes (added functions). A change
# made on purpose comes with a new version node and the baselines
# regenerated: sh scripts/abi-baseline.sh (docs/writing-a-tool.md).
set -u
abidiff=$1 baseline=$2 lib=$3 headers=$4
out=$("$abidiff" --headers-dir2 "$headers" --drop-private-types "$baseline" "$lib" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out"
if [ $((rc & 3)) -ne 0 ]; then
    echo "abidiff: could not compare $lib with $baseline (exit $rc)"
    exit 1
fi
if [ $((rc & 8)) -ne 0 ]; then
    echo "abidiff: $lib breaks the ABI of $baseline (exit $rc): keep the old interface, or"
    echo "abidiff: add a version node (src/*/lib*.map, defines.h) and run sh scripts/abi-baseline.sh"
    exit 1
fi
if [ $((rc & 4)) -ne 0 ]; then
    echo "abidiff: $lib: compatible changes only (exit $rc)"
else
    echo "abidiff: $lib: same ABI as $baseline"
fi
exit 0
