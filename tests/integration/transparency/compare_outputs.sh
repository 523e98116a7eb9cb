#!/bin/sh
# SPDX-License-Identifier: MIT
# compare_outputs.sh LAYER TOOL WORKDIR PROGRAM [ARGS...]
# Runs an OpenCL program we did not write without and with the UPTI layer
# (OPENCL_LAYERS) and the bundled tracing tool (UPTI_TOOL_LIBRARIES), and
# passes if stdout and the exit status are identical (lines that show
# timings are dropped first: none in clinfo's output today), the traced run
# printed no "upti:" line and its trace database holds its OpenCL calls.
# Exit 77 (skipped) when the program is not installed.
# Under the sanitizer builds the program is not instrumented but the layer
# is: UPTI_SANITIZER_PRELOAD (set by scripts/ci-sanitizers.sh) names the
# sanitizer runtime to preload.
set -u
layer=$1 tool=$2 work=$3
shift 3
command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 not installed"; exit 77; }
name=$(echo "$*" | tr -c 'A-Za-z0-9\n' _)
dir=$work/$name
rm -rf "$dir"
mkdir -p "$dir"
untimed() { grep -v -i -E '(elapsed|[0-9] ?(ns|us|ms) *$)' "$1"; }

env -u OPENCL_LAYERS -u UPTI_TOOL_LIBRARIES -u LD_PRELOAD "$@" >"$dir/plain.out" 2>"$dir/plain.err"
rc0=$?
if [ -n "${UPTI_SANITIZER_PRELOAD:-}" ] &&
    ! env -u OPENCL_LAYERS -u UPTI_TOOL_LIBRARIES LD_PRELOAD="$UPTI_SANITIZER_PRELOAD" "$@" \
        >/dev/null 2>&1 && [ $rc0 -eq 0 ]; then
    # ThreadSanitizer's runtime cannot be preloaded into an uninstrumented
    # program (clinfo crashes with it even without the layer).
    echo "SKIP: $1 does not run with $(basename "$UPTI_SANITIZER_PRELOAD") preloaded"
    exit 77
fi
rm -f "$dir/trace.db"
env -u LD_PRELOAD ${UPTI_SANITIZER_PRELOAD:+LD_PRELOAD=$UPTI_SANITIZER_PRELOAD} \
    OPENCL_LAYERS="$layer" UPTI_TOOL_LIBRARIES="$tool" UPTI_TRACE_OUTPUT="$dir/trace" \
    UPTI_TRACE_FORMATS=db "$@" >"$dir/traced.out" 2>"$dir/traced.err"
rc1=$?
# The helper collector writes the database a moment after the program ended
# (stderr goes to a file here: the shell does not wait for the helper).
i=0
while [ ! -f "$dir/trace.db" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fail=0
[ $rc0 -eq $rc1 ] || { echo "FAIL: exit status $rc1 with the layer, $rc0 without"; fail=1; }
untimed "$dir/plain.out" >"$dir/plain.cmp"
untimed "$dir/traced.out" >"$dir/traced.cmp"
diff -u "$dir/plain.cmp" "$dir/traced.cmp" || { echo "FAIL: stdout differs with the layer"; fail=1; }
if grep -q '^upti:' "$dir/traced.err"; then
    echo "FAIL: upti printed:"; grep '^upti:' "$dir/traced.err"; fail=1
fi
if command -v sqlite3 >/dev/null 2>&1; then
    n=$(sqlite3 "$dir/trace.db" "SELECT count(*) FROM api" 2>&1)
    case $n in
    ''|*[!0-9]*) echo "FAIL: no readable trace: $n"; fail=1 ;;
    0) echo "FAIL: the trace holds no OpenCL call"; fail=1 ;;
    esac
fi
[ $fail -eq 0 ] || { echo "---- traced stderr"; cat "$dir/traced.err"; exit 1; }
echo "PASS: $* (same stdout, $(wc -l <"$dir/plain.out") lines; ${n:-?} calls traced)"
