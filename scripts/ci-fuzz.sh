#!/bin/sh
# SPDX-License-Identifier: MIT
# CI: builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, with
# coverage of the library code: -fsanitize=fuzzer-no-link) into build-fuzz
# and runs each for UPTI_FUZZ_SECONDS (default 15). Any crash, sanitizer
# report, leak or timeout fails; the reproducer is left in build-fuzz/fuzz-out/.
#   scripts/ci-fuzz.sh [target...]
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}
SECONDS_EACH=${UPTI_FUZZ_SECONDS:-15}
CC=${CC_SANITIZE:-clang}
B=build-fuzz
targets=${*:-fuzz_placeholders fuzz_cli_options fuzz_opencl_args fuzz_trace_reader fuzz_ring_file fuzz_spool fuzz_job_file}

CC=$CC cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUPTI_SANITIZE=address,undefined \
    -DUPTI_FUZZ=ON -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
# shellcheck disable=SC2086
cmake --build $B -j "$JOBS" --target $targets upti-trace upti-opencl ocl_vadd >$B/ci-build.log 2>&1 || {
    tail -40 $B/ci-build.log
    echo "ci-fuzz: build failed (log: $B/ci-build.log)"
    exit 1
}
out=$ROOT/$B/fuzz-out
rm -rf "$out"
mkdir -p "$out"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

# A small real trace seeds the reader (page size 512: a few KiB to mutate).
mkdir -p "$out/seed-reader"
if command -v sqlite3 >/dev/null 2>&1 && [ -x $B/bin/ocl_vadd ]; then
    env -u UPTI_TOOL_LIBRARIES UPTI_TOOL_LIBRARIES="$ROOT/$B/lib/libupti-trace.so" \
        OPENCL_LAYERS="$ROOT/$B/lib/libupti-opencl.so" UPTI_TRACE_OUTPUT="$out/seed-reader/t" \
        $B/bin/ocl_vadd >/dev/null 2>&1 || true
    sqlite3 "$out/seed-reader/t.db" "PRAGMA page_size=512; VACUUM;" 2>/dev/null || true
fi

fail=0
for t in $targets; do
    corpus=$out/corpus-$t
    mkdir -p "$corpus"
    [ "$t" = fuzz_trace_reader ] && cp "$out"/seed-reader/*.db "$corpus"/ 2>/dev/null || true
    start=$(date +%s)
    ls -d /tmp/upti-fuzz-* >"$out/folders-before" 2>/dev/null || true
    # -close_fd_mask=3: the targets' own messages (upti: ...) stay out of the log;
    # libFuzzer's crash report and the sanitizers' still come through.
    # A fixed seed (UPTI_FUZZ_SEED, default 1): a CI run replays the same inputs,
    # so a failure is reproducible and a landing never fails by the luck of the draw.
    if (cd "$out" && "$ROOT/$B/bin/$t" -seed="${UPTI_FUZZ_SEED:-1}" -max_total_time="$SECONDS_EACH" -timeout=10 \
            -rss_limit_mb=2048 -close_fd_mask=1 -artifact_prefix="$out/$t-" "$corpus" \
            >"$out/$t.log" 2>&1); then
        echo "ci-fuzz: $t: $(grep -a -o 'Done [0-9]* runs' "$out/$t.log" | tail -1) in $(($(date +%s) - start)) s, no crash"
        # A target that ended normally removed its work folder (tests/fuzz/fuzz_workdir.h).
        ls -d /tmp/upti-fuzz-* >"$out/folders-after" 2>/dev/null || true
        left=$(comm -13 "$out/folders-before" "$out/folders-after")
        if [ -n "$left" ]; then
            echo "ci-fuzz: $t left its work folder: $left"
            fail=1
        fi
    else
        echo "ci-fuzz: $t FAILED (reproducer: $out/$t-*):"
        grep -a -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$out/$t.log" | head -30
        fail=1
    fi
done
exit $fail
