#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks what a library exports (nm -D --defined-only) against its rule:
#   check_exports.sh LIBRARY PREFIX_REGEX [REQUIRED_SYMBOL...]
# Every defined dynamic symbol (version nodes excluded) must match
# ^PREFIX_REGEX, and every REQUIRED_SYMBOL must be exported; a REQUIRED_SYMBOL
# written !NAME must not be exported.
set -u
lib=$1
rule=$2
shift 2
if [ ! -f "$lib" ]; then
    echo "FAIL: $lib does not exist" >&2
    exit 1
fi
syms=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | sort -u)
fail=0
if [ -z "$syms" ]; then
    echo "FAIL: $lib exports nothing" >&2
    fail=1
fi
for s in $syms; do
    if ! printf '%s\n' "$s" | grep -Eq "^($rule)"; then
        echo "FAIL: $lib exports '$s', which does not match ^($rule)" >&2
        fail=1
    fi
done
for want in "$@"; do
    case $want in
    !*)
        if printf '%s\n' "$syms" | grep -qx -- "${want#!}"; then
            echo "FAIL: $lib exports '${want#!}', which it must not" >&2
            fail=1
        fi
        continue ;;
    esac
    if ! printf '%s\n' "$syms" | grep -qx -- "$want"; then
        echo "FAIL: $lib does not export '$want'" >&2
        fail=1
    fi
done
[ "$fail" -eq 0 ] && echo "PASS: $lib exports $(printf '%s\n' "$syms" | wc -l) symbol(s), all ^($rule)"
exit $fail
