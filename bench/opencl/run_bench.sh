#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage: run_bench.sh BUILD_DIR — prints the added cost per call in each mode
# (fastest of UPTI_OCL_BENCH_REPS alternating repetitions, default 7).
B=${1:-build}
L=$B/lib/libupti-opencl.so
T=$B/lib/libbench_opencl_tool.so
echo "(a0) no layer (ocl-icd's own hop):";    $B/bin/bench_opencl setarg
echo "(ap) pass-through layer (loader's layer hop):"; OPENCL_LAYERS=$B/lib/libbench_pass_layer.so $B/bin/bench_opencl setarg
echo "(a) layer loaded, no tool:";            OPENCL_LAYERS=$L $B/bin/bench_opencl setarg
echo "(a') layer loaded, tool, nothing on:";  OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=none $B/bin/bench_opencl setarg
echo "(b) API buffer tracing:";               OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=buffer $B/bin/bench_opencl setarg
echo "(c) API callback tracing:";             OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=callback $B/bin/bench_opencl setarg
echo "(d) kernel dispatch tracing:";          OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=kernel $B/bin/bench_opencl ndrange
echo "(d') the same, CL_COMPLETE callbacks:"; UPTI_OPENCL_COMPLETION=callback OPENCL_LAYERS=$L UPTI_TOOL_LIBRARIES=$T UPTI_OCL_BENCH_MODE=kernel $B/bin/bench_opencl ndrange
echo "(d0) layer, no tool, same loop:";       OPENCL_LAYERS=$L $B/bin/bench_opencl ndrange
