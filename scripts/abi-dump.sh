#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI dump of one library, as abi/ holds it and the abi.abidiff.* tests
# compare it: the types of the public headers only (those no exported
# function reaches included: the record structs tools read from buffers),
# no paths (corpus, compilation directory, full locations), types named by a
# hash of what they are, so the same sources dump the same on any machine.
#
#   sh scripts/abi-dump.sh LIBRARY HEADERS_DIR OUTPUT
set -eu
exec abidw --headers-dir "$2" --drop-private-types --load-all-types --no-corpus-path \
    --no-comp-dir-path --short-locs --type-id-style hash --out-file "$3" "$1"
