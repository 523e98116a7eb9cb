#!/bin/sh
# Usage: run_bench.sh BUILD_DIR — prints the added cost per call in each mode.
B=${1:-build}
L=$B/lib/libupti-opencl.so
T=$B/lib/libbench_opencl_tool.so
echo "(a) layer loaded, no tool:";            OPENCL_LAYERS=$L $B/bin/bench_opencl setarg
echo "(a') layer loaded, tool, nothing on:";  OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=none $B/bin/bench_opencl setarg
echo "(b) API buffer tracing:";               OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=buffer $B/bin/bench_opencl setarg
echo "(c) API callback tracing:";             OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=callback $B/bin/bench_opencl setarg
echo "(d) kernel dispatch tracing:";          OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=kernel $B/bin/bench_opencl ndrange
echo "(d0) layer, no tool, same loop:";       OPENCL_LAYERS=$L $B/bin/bench_opencl ndrange
