#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every benchmark of the build tree and prints what each reports.
#   scripts/bench.sh [BUILD_DIR]       (default: build)
# For each bench/<name>/: its run_bench.sh, bench_*.sh or run_*.py driver if
# it has one (called with the build directory), else every build/bin/bench_*
# program built from it. Benchmarks print numbers; nothing here passes or fails on them.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" 2>/dev/null && pwd) || {
    echo "bench.sh: build directory ${1:-$ROOT/build} not found (build first)" >&2; exit 2; }
status=0
ran=""
for dir in "$ROOT"/bench/*/; do
    name=$(basename "$dir")
    driver=""
    for d in "$dir"run_bench.sh "$dir"bench_*.sh "$dir"run_*.py; do
        [ -f "$d" ] && { driver=$d; break; }
    done
    echo "=== bench/$name"
    if [ -n "$driver" ]; then
        case $driver in
        *.py) python3 "$driver" "$BUILD" ;;
        *) sh "$driver" "$BUILD" ;;
        esac || { echo "bench.sh: $driver failed" >&2; status=1; }
        ran="$ran $name"
        continue
    fi
    found=0
    for src in "$dir"*.c; do
        [ -f "$src" ] || continue
        exe=$BUILD/bin/bench_$(basename "$src" .c)
        if [ -x "$exe" ]; then
            found=1
            "$exe" || { echo "bench.sh: $exe failed" >&2; status=1; }
        fi
    done
    [ "$found" -eq 1 ] && ran="$ran $name" || echo "(nothing built to run)"
done
echo "=== ran:$ran"
exit $status
