#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage: run_bench.sh BUILD_DIR [PAIRS] — marker overhead in the three modes.
B=${1:-build}
exec "$B/bin/bench_marker_overhead" ${2:+"$2"}
