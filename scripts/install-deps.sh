#!/bin/sh
# Installs what UPTI needs to build and test, from Debian packages only.
# Idempotent: packages already present are skipped; nothing is downloaded
# from anywhere but the system's apt sources.
set -eu

PACKAGES="
gcc make cmake pkg-config python3
ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
libsqlite3-dev sqlite3
clang libclang-rt-14-dev
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
