#!/bin/sh
# SPDX-License-Identifier: MIT
# CI: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan) and under ThreadSanitizer (build-tsan), built with clang, with
# zero reports; then the libFuzzer targets (if built) for a bounded time each.
#
#   scripts/ci-sanitizers.sh [asan] [tsan] [fuzz]     (default: all three)
#
# Environment: UPTI_FUZZ_SECONDS (default 15) per fuzz target,
#              JOBS (default nproc) for builds and ctest.
#
# Every report is written to <build>/sanitizer-reports/ (log_path) as well as
# failing the test it happened in (halt_on_error=1); the step fails if any
# report file exists after ctest, so a report in a test that tolerates a
# non-zero exit still fails CI.
#
# Uninstrumented executables (python3 running the test drivers, clinfo, the
# ICD loader's host processes) that load a sanitized UPTI library need the
# sanitizer runtime first in the link map: the tests that do that put
# UPTI_SANITIZER_PRELOAD (the runtime's shared object, exported below) in
# LD_PRELOAD themselves. PoCL and LLVM inside it are not instrumented:
# scripts/sanitizer-suppressions/ silences reports inside them, and only them.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}
CC=${CC_SANITIZE:-clang}
SUPP=$ROOT/scripts/sanitizer-suppressions
steps=${*:-asan tsan fuzz}

runtime_so() {
    # The shared sanitizer runtime matching $CC, e.g. libclang_rt.asan-x86_64.so.
    $CC -print-file-name="libclang_rt.$1-$(uname -m).so"
}

build() { # dir sanitizer [extra cmake args]
    dir=$1
    san=$2
    shift 2
    CC=$CC cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUPTI_SANITIZE="$san" "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS" >"$dir/ci-build.log" 2>&1 || {
        tail -50 "$dir/ci-build.log"
        echo "ci-sanitizers: build of $dir failed (log: $dir/ci-build.log)"
        exit 1
    }
}

# What the sanitizer stages leave to the plain one (the README's test command
# runs every test): checks of packaging, exported symbols and ABI dumps,
# documents, the source tree's layout, and the benchmarks' smoke runs, whose
# C code is what the other tests run. Their place in the sanitized suites was
# about 90 s of CI's 30 minutes. The tests among them that run UPTI's code
# in a way no other does stay: an old tool against the new libraries
# (abi.previous_release_tool) and the documents' samples built and run
# (docs.writing_a_tool_builds_and_runs, docs.code_samples_build).
# (install.out_of_tree_runtime disables itself in a sanitized build.)
SANITIZER_SKIP='^(install\.(deps_cover|install_deps|readme_commands|find_package)|abi\.(version_scripts|exports|abidiff|previous_release_layouts|installed|compat_header|release)|docs\.(database_metadata|index_lists|no_internal|license_in|callback_models|cli_options)|layout\.|bench\.)'

run_suite() { # dir label
    dir=$1
    reports=$ROOT/$dir/sanitizer-reports
    rm -rf "$reports"
    mkdir -p "$reports"
    start=$(date +%s)
    set +e
    (cd "$dir" && ctest --output-on-failure -j "$JOBS" --timeout 600 -E "$SANITIZER_SKIP")
    rc=$?
    set -e
    # A report, not a note (LSan's "thread was not suspended" in forked children).
    found=$(grep -l -a -E 'ERROR: |runtime error|WARNING: ThreadSanitizer|SUMMARY: ' -r "$reports" | head -20)
    if [ -n "$found" ]; then
        for f in $found; do
            echo "==== $f"
            head -60 "$f"
        done
        echo "ci-sanitizers: $2: sanitizer reports found"
        exit 1
    fi
    [ $rc -eq 0 ] || {
        echo "ci-sanitizers: $2: tests failed"
        exit 1
    }
    echo "ci-sanitizers: $2: all tests passed, zero reports ($(($(date +%s) - start)) s)"
}

for step in $steps; do
    case $step in
    asan)
        build build-asan address,undefined
        rt=$(runtime_so asan)
        export UPTI_SANITIZER_PRELOAD="$rt"
        # intercept_tls_get_addr=0: LLVM 14's record of dynamic TLS blocks
        # (dlopen'd libraries with __thread data: the tool library, PoCL)
        # misreads glibc 2.36's DTV, and LeakSanitizer's tracer then faults
        # at exit ("Tracer caught signal 11", "DTLS 12 at 0x...d1"; seen in
        # cli.opencl_args). Those blocks are then not scanned as roots.
        # use_sigaltstack=0: PoCL's LLVM installs its own alternate signal
        # stack in the first thread that initializes it; when that thread
        # exits, ASan unmaps what sigaltstack reports as if it were its own
        # and aborts ("failed to deallocate ... UnsetAlternateSignalStack";
        # faults.tool_ocl_in_thread, whose short-lived thread is the first
        # to call OpenCL).
        export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:intercept_tls_get_addr=0:use_sigaltstack=0:log_path=$ROOT/build-asan/sanitizer-reports/asan:suppressions=$SUPP/asan.supp"
        export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$ROOT/build-asan/sanitizer-reports/ubsan:suppressions=$SUPP/ubsan.supp"
        export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
        # Lighter stress loops; the assertions stay exact.
        export UPTI_TEST_SCALE=${UPTI_TEST_SCALE_ASAN:-4}
        run_suite build-asan "address,undefined"
        unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS UPTI_SANITIZER_PRELOAD UPTI_TEST_SCALE
        ;;
    tsan)
        build build-tsan thread
        export UPTI_SANITIZER_PRELOAD="$(runtime_so tsan)"
        # die_after_fork=0: a forked child restarts UPTI's delivery thread
        # (tests/integration/faults fork cases); TSan would kill it otherwise.
        # detect_deadlocks=1 (the default, written down): a lock taken against the
        # order of src/program/sdk/internal.h is reported (tests/unit/test_lock_order.c).
        export TSAN_OPTIONS="halt_on_error=1:detect_deadlocks=1:second_deadlock_stack=1:die_after_fork=0:log_path=$ROOT/build-tsan/sanitizer-reports/tsan:suppressions=$SUPP/tsan.supp"
        export UPTI_TEST_SCALE=${UPTI_TEST_SCALE_TSAN:-20}
        run_suite build-tsan thread
        unset TSAN_OPTIONS UPTI_SANITIZER_PRELOAD UPTI_TEST_SCALE
        ;;
    fuzz)
        if [ -x scripts/ci-fuzz.sh ]; then
            scripts/ci-fuzz.sh
        else
            echo "ci-sanitizers: no fuzz targets"
        fi
        ;;
    *)
        echo "usage: $0 [asan] [tsan] [fuzz]" >&2
        exit 2
        ;;
    esac
done
