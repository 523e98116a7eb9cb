#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per call of bench_vulkan under callgrind (exact, unlike wall
# times on a shared machine): the inclusive count of the loader's entry points,
# divided by N.
#
#   bench/vulkan/callgrind.sh BUILD_DIR dispatch|submit [MODE [N]]
#     dispatch  vkCmdDispatch recorded (bench_vulkan dispatch N 1; N default 20000)
#     submit    vkQueueSubmit, vkWaitForFences and vkResetFences per submit
#               (bench_vulkan submit N 1; N default 2000)
#     stream    the same with 64 submissions in flight (bench_vulkan stream N 1;
#               N default 2048: vkWaitForFences once per 64)
#     bind_dispatch  vkCmdBindPipeline and vkCmdDispatch per pair recorded
#               (bench_vulkan bind_dispatch N 1; N default 20000)
#     MODE  bare, none (a tool, nothing on), api (VULKAN_API) or kernel
#           (VULKAN_API + KERNEL_DISPATCH, the default)
#   KEEP=FILE keeps callgrind's output in FILE (for callgrind_annotate).
set -eu
usage="usage: callgrind.sh BUILD_DIR dispatch|submit|stream|bind_dispatch [bare|none|api|kernel [N]]"
B=$(cd "${1:?$usage}" && pwd)
WHAT=${2:?$usage}
MODE=${3:-kernel}
case $WHAT in
dispatch) N=${4:-20000} ENTRIES='vkCmdDispatch' ;;
submit) N=${4:-2000} ENTRIES='vk(QueueSubmit|WaitForFences|ResetFences)' ;;
stream) N=${4:-2048} ENTRIES='vk(QueueSubmit|WaitForFences|ResetFences)' ;;
bind_dispatch) N=${4:-20000} ENTRIES='vk(CmdBindPipeline|CmdDispatch)' ;;
*) echo "$usage" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
    echo "callgrind.sh: valgrind not found (Debian package valgrind; not needed by the build or the tests)" >&2
    exit 77
}
OUT=${KEEP:-$(mktemp /tmp/callgrind_vulkan.XXXXXX)}
[ -n "${KEEP:-}" ] || trap 'rm -f "$OUT"' EXIT
if [ "$MODE" = bare ]; then
    env -u VK_INSTANCE_LAYERS -u UPTI_VULKAN_LAYER NODEVICE_SELECT=1 \
        valgrind --tool=callgrind --callgrind-out-file="$OUT" "$B/bin/bench_vulkan" "$WHAT" "$N" 1 >/dev/null 2>&1
else
    env NODEVICE_SELECT=1 VK_ADD_LAYER_PATH="$B/lib" VK_INSTANCE_LAYERS=VK_LAYER_UPTI_trace \
        UPTI_TOOL_LIBRARIES="$B/lib/libbench_vulkan_tool.so" UPTI_VK_BENCH_MODE="$MODE" \
        valgrind --tool=callgrind --callgrind-out-file="$OUT" "$B/bin/bench_vulkan" "$WHAT" "$N" 1 >/dev/null 2>&1
fi
callgrind_annotate --inclusive=yes --threshold=100 "$OUT" 2>/dev/null |
    grep -E "\\?\\?\\?:$ENTRIES \\[/usr/lib" |
    awk -v n="$N" -v mode="$MODE" '{ gsub(",", "", $1); match($0, /\?\?\?:vk[A-Za-z0-9]+/);
        printf "%s %s %.0f\n", mode, substr($0, RSTART + 4, RLENGTH - 4), $1 / n }'
