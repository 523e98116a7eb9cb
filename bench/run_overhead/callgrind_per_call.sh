#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions a traced clSetKernelArg costs, counted by callgrind: deterministic, so
# machine load does not matter (bench/run_overhead/run_overhead.py gives the wall time).
#
#   bench/run_overhead/callgrind_per_call.sh BUILD_DIR [N1 N2]
#
# Runs the probe (bench_run_overhead_probe, one thread, no kernel, no write) with N1
# and N2 calls (default 1000 and 11000), traced (the OpenCL layer, upti-trace,
# UPTI_TRACE_KINDS=all, shared rings in a temporary folder, no collector) and bare,
# and prints (I(N2) - I(N1)) / (N2 - N1) for each and the difference. Keep N2 - N1
# within what a ring holds without a collector (1 MiB: about 16,000 records).
# Measures, does not judge: no threshold. Needs valgrind.
set -eu
B=${1:?usage: callgrind_per_call.sh BUILD_DIR [N1 N2]}
N1=${2:-1000}
N2=${3:-11000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/rings"
count() { # count OUT traced|bare N: the program's instructions
    if [ "$2" = traced ]; then
        OPENCL_LAYERS=$B/lib/libupti-opencl.so UPTI_TOOL_LIBRARIES=$B/lib/libupti-trace.so \
            UPTI_TRACE_RING_DIR=$T/rings UPTI_TRACE_KINDS=all \
            valgrind --tool=callgrind --callgrind-out-file="$1" "$B/bin/bench_run_overhead_probe" "$3" 1 0 0 \
            >/dev/null 2>"$T/log"
        rm -rf "$T/rings"/*
    else
        valgrind --tool=callgrind --callgrind-out-file="$1" "$B/bin/bench_run_overhead_probe" "$3" 1 0 0 \
            >/dev/null 2>"$T/log"
    fi
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/log"
}
# PoCL builds the probe's program on its first run and keeps it in its cache, under
# a key that holds the CPU it saw (valgrind's, not the machine's): one run under
# valgrind first, not counted, or the first count holds the build (4 G instructions:
# the added instructions came out negative on a fresh machine).
valgrind --tool=none "$B/bin/bench_run_overhead_probe" "$N1" 1 0 0 >/dev/null 2>&1 || true
for mode in traced bare; do
    a=$(count "$T/$mode.1.out" $mode "$N1")
    c=$(count "$T/$mode.2.out" $mode "$N2")
    echo "$mode $(( (c - a) * 10 / (N2 - N1) ))" >>"$T/per"
done
awk '{ v[$1] = $2 / 10; printf "%s: %.1f instructions per clSetKernelArg\n", $1, $2 / 10 }
     END { printf "added: %+.1f\n", v["traced"] - v["bare"] }' "$T/per"
