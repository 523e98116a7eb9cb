#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI dump of one library, as abi/ holds it and the abi.abidiff.* tests
# compare it: the types of the public headers only (those no exported
# function reaches included: the record structs tools read from buffers),
# no paths (corpus, compilation directory, full locations), types named by a
# hash of what they are, so the same sources dump the same on any machine.
#
#   sh scripts/abi-dump.sh LIBRARY HEADERS_DIR OUTPUT
#
# The layers and the bundled tool (libupti-opencl, libupti-vulkan,
# libupti-nvtx, libupti-trace) export only the entry points their loader
# looks up: their dumps hold the types those reach, not every type of the
# headers (the libupti dump has them; abi/headers.layout holds every
# installed header's).
set -eu
all=--load-all-types
case $(basename "$1") in
libupti-opencl.* | libupti-vulkan.* | libupti-nvtx.* | libupti-trace.*) all= ;;
esac
exec abidw --headers-dir "$2" --drop-private-types $all --no-corpus-path \
    --no-comp-dir-path --short-locs --type-id-style hash --out-file "$3" "$1"
