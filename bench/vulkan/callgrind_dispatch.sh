#!/bin/sh
# Instructions per vkCmdDispatch recorded by bench_vulkan (dispatch mode)
# under callgrind (exact, unlike wall times on a shared machine): the
# inclusive count of the loader's vkCmdDispatch, divided by N.
#
#   bench/vulkan/callgrind_dispatch.sh BUILD_DIR [MODE [N]]
#     MODE  bare, none (a tool, nothing on), api (VULKAN_API) or kernel
#           (VULKAN_API + KERNEL_DISPATCH, the default); N default 20000
#   KEEP=FILE keeps callgrind's output in FILE (for callgrind_annotate).
set -eu
B=$(cd "${1:?usage: callgrind_dispatch.sh BUILD_DIR [bare|none|api|kernel [N]]}" && pwd)
MODE=${2:-kernel}
N=${3:-20000}
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
    echo "callgrind_dispatch.sh: valgrind not found (Debian package valgrind; not needed by the build or the tests)" >&2
    exit 77
}
OUT=${KEEP:-$(mktemp /tmp/callgrind_dispatch.XXXXXX)}
[ -n "${KEEP:-}" ] || trap 'rm -f "$OUT"' EXIT
if [ "$MODE" = bare ]; then
    env -u VK_INSTANCE_LAYERS NODEVICE_SELECT=1 \
        valgrind --tool=callgrind --callgrind-out-file="$OUT" "$B/bin/bench_vulkan" dispatch "$N" 1 >/dev/null 2>&1
else
    env NODEVICE_SELECT=1 VK_ADD_LAYER_PATH="$B/lib" VK_INSTANCE_LAYERS=VK_LAYER_UPTI_trace \
        UPTI_TOOL_LIBRARIES="$B/lib/libbench_vulkan_tool.so" UPTI_VK_BENCH_MODE="$MODE" \
        valgrind --tool=callgrind --callgrind-out-file="$OUT" "$B/bin/bench_vulkan" dispatch "$N" 1 >/dev/null 2>&1
fi
callgrind_annotate --inclusive=yes --threshold=100 "$OUT" 2>/dev/null |
    grep -E '\?\?\?:vkCmdDispatch \[/usr/lib' |
    awk -v n="$N" -v mode="$MODE" '{ gsub(",", "", $1); printf "%s vkCmdDispatch %.0f\n", mode, $1 / n }'
