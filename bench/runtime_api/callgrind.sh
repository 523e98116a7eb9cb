#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per call of a described runtime's function under callgrind (exact,
# unlike wall times on a shared machine): the inclusive count of toyLaunch (the
# sample toyrt's public function: its table call, UPTI's generated wrapper, the
# implementation) in bench_runtime_api 2N less that in bench_runtime_api N,
# divided by N: the first call's registration (libupti loaded, tools found,
# about 340,000 instructions) counted out.
#
#   bench/runtime_api/callgrind.sh BUILD_DIR [MODE [N]]
#     MODE  bare (no tool: the table as the runtime built it), none (a tool that
#           traces something else: the wrappers installed, no plan), api (RUNTIME_API
#           records into a buffer), callback (a RUNTIME_API callback), or all (the
#           default: each in turn)
#     N     calls (default 100000)
set -eu
usage="usage: callgrind.sh BUILD_DIR [bare|none|api|callback|all [N]]"
B=$(cd "${1:?$usage}" && pwd)
MODE=${2:-all}
N=${3:-100000}
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
    echo "callgrind.sh: valgrind not found (Debian package valgrind)" >&2
    exit 77
}
OUT=$(mktemp /tmp/callgrind_runtime_api.XXXXXX)
trap 'rm -f "$OUT"' EXIT
# The inclusive instructions of toyLaunch in bench_runtime_api $2, mode $1.
count() {
    if [ "$1" = bare ]; then
        env -u UPTI_TOOL_LIBRARIES valgrind --tool=callgrind --callgrind-out-file="$OUT" \
            "$B/bin/bench_runtime_api" "$2" >/dev/null 2>&1
    else
        env UPTI_TOOL_LIBRARIES="$B/lib/libbench_runtime_api_tool.so" UPTI_RT_BENCH_MODE="$1" \
            valgrind --tool=callgrind --callgrind-out-file="$OUT" \
            "$B/bin/bench_runtime_api" "$2" >/dev/null 2>&1
    fi
    callgrind_annotate --inclusive=yes --threshold=100 "$OUT" 2>/dev/null |
        grep -E ":toyLaunch \[" | head -1 | awk '{ gsub(",", "", $1); printf "%s\n", $1 }'
}
one() {
    a=$(count "$1" "$N")
    b=$(count "$1" $((2 * N)))
    awk -v a="$a" -v b="$b" -v n="$N" -v mode="$1" 'BEGIN { printf "%s toyLaunch %.1f\n", mode, (b - a) / n }'
}
if [ "$MODE" = all ]; then
    for m in bare none api callback; do one "$m"; done
else
    one "$MODE"
fi
