#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a test program and compares what it did with what it must do:
#   run_golden.sh EXPECTED_STDOUT [--upti-lines N] [--upti-line-contains TEXT]... -- CMD ARGS...
# Passes only if CMD exits 0, its stdout equals EXPECTED_STDOUT exactly, stderr
# has exactly N lines starting with "upti:" (default 0) and each TEXT appears
# in one of them. Environment for CMD is given with env(1) inside CMD.
set -u
expected=$1
shift
upti_lines=0
contains_file=$(mktemp)
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$contains_file" "$out" "$err"' EXIT
while [ $# -gt 0 ]; do
    case $1 in
    --upti-lines) upti_lines=$2; shift 2 ;;
    --upti-line-contains) printf '%s\n' "$2" >>"$contains_file"; shift 2 ;;
    --) shift; break ;;
    *) echo "run_golden.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

"$@" >"$out" 2>"$err"
rc=$?
fail=0
if [ "$rc" -ne 0 ]; then
    echo "FAIL: exit status $rc, expected 0" >&2
    fail=1
fi
if ! diff -u "$expected" "$out" >&2; then
    echo "FAIL: stdout differs from $expected (--- expected, +++ got)" >&2
    fail=1
fi
got_lines=$(grep -c '^upti:' "$err")
if [ "$got_lines" -ne "$upti_lines" ]; then
    echo "FAIL: $got_lines stderr line(s) start with 'upti:', expected $upti_lines" >&2
    fail=1
fi
while IFS= read -r text; do
    if ! grep '^upti:' "$err" | grep -qF -- "$text"; then
        echo "FAIL: no 'upti:' line on stderr mentions '$text'" >&2
        fail=1
    fi
done <"$contains_file"
if [ "$fail" -ne 0 ]; then
    echo "---- stdout ----" >&2; cat "$out" >&2
    echo "---- stderr ----" >&2; cat "$err" >&2
    exit 1
fi
echo "PASS"
exit 0
