#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what UPTI needs to build and test, from Debian packages only, on
# anything from a bare Debian 12 (debootstrap --variant=minbase: no compiler,
# no make, no cmake, no sudo) upwards:
#
#   sh scripts/install-deps.sh
#
# Run it as root, or as a user with sudo. Idempotent: packages already
# present are skipped, and nothing is downloaded from anywhere but the
# system's apt sources.
set -eu

# build-essential: the C and C++ compilers, the C library headers and make.
# libvulkan-dev: the Vulkan loader, headers and registry (vk.xml);
# mesa-vulkan-drivers: lavapipe, the CPU Vulkan device the tests run on;
# glslang-tools: glslangValidator, which compiles the test shaders;
# vulkan-validationlayers: the Khronos validation layer, under which the
# vulkan.validation_* tests check the layer's own commands.
# vulkan-tools: vulkaninfo, a Vulkan program the transparency tests run.
# libotf2-trace-dev: OTF2, for upti export --format otf2; otf2-tools:
# otf2-print, with which the tests read the export back.
# libyaml-dev: libyaml, which reads the YAML files of upti run -i.
# abigail-tools: abidw and abidiff, which check the libraries' ABI (tests/abi).
# binutils: readelf and nm, with which the tests read the libraries' dynamic
# sections and symbols (security.runpath, abi.exports).
# python3-pandas, python3-dask, python3-distributed: the `upti` Python package
# and the analyses written on it (upti analyze, upti diff; src/analysis).
# openmpi-bin: mpirun, with which the analysis tests and benchmark run ranks.
# chromium: the browser in which the tests open upti report's page (headless).
# One package per line; tests/integration/install/check_deps.py checks that
# every tool and library the build and the tests use is here.
PACKAGES="
build-essential
cmake
pkg-config
python3
ocl-icd-libopencl1
ocl-icd-opencl-dev
opencl-c-headers
pocl-opencl-icd
clinfo
libsqlite3-dev
libiberty-dev
sqlite3
clang
libclang-rt-14-dev
libvulkan-dev
mesa-vulkan-drivers
glslang-tools
vulkan-validationlayers
vulkan-tools
libotf2-trace-dev
otf2-tools
libyaml-dev
abigail-tools
binutils
python3-pandas
python3-dask
python3-distributed
openmpi-bin
chromium
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: every package is installed"
    exit 0
fi

# As root, apt-get directly (a bare system has no sudo); otherwise through sudo.
if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "install-deps: missing:$missing" >&2
    echo "install-deps: run this script as root (there is no sudo to install them with)" >&2
    exit 1
fi

echo "install-deps: installing:$missing"
# (env: sudo does not pass the environment on)
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
