#!/bin/sh
# SPDX-License-Identifier: MIT
# nvtx.builds_without_cuda_headers: libupti-nvtx's source compiles with only
# UPTI's own headers and the C library (no CUDA toolkit on the include path),
# and includes no NVTX header.
#   build_without_headers.sh C_COMPILER SOURCE_DIR INCLUDE_DIRS (colon-separated: libupti's)
set -eu
cc=$1
src=$2
incs=""
IFS=:
for d in $3; do incs="$incs -I$d"; done
unset IFS
# shellcheck disable=SC2086
deps=$("$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -M $incs \
       "$src/src/program/nvtx/nvtx.c") || { echo "FAIL: src/program/nvtx/nvtx.c does not compile without the CUDA toolkit"; exit 1; }
if printf '%s\n' "$deps" | grep -q 'nvtx3/'; then
    echo "FAIL: src/program/nvtx/nvtx.c includes NVTX headers:"
    printf '%s\n' "$deps" | tr ' ' '\n' | grep 'nvtx3/'
    exit 1
fi
# shellcheck disable=SC2086
"$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only $incs \
    "$src/src/program/nvtx/nvtx.c"
echo "PASS: nvtx.c compiles with UPTI's own declaration of the NVTX injection ABI"
