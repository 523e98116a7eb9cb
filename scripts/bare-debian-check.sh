#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the README's first commands in a fresh Debian 12 made by
# `debootstrap --variant=minbase` (no compiler, no make, no cmake, no sudo),
# as a new user would after cloning. Not part of ctest: it needs root and
# debootstrap, and downloads about 600 MB.
#
#   sh scripts/bare-debian-check.sh [DIR [MIRROR]]
#
# DIR (default /tmp/upti-bare-debian) holds the chroot; it is reused when it
# exists (delete it for a fresh run). The committed tree (git archive HEAD)
# is copied to DIR/src/upti. By default the commands but the test command
# (sh scripts/test.sh) run: the demo's sets up and builds everything (set
# UPTI_BARE_ALL=1 to run the tests too).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/tmp/upti-bare-debian}
mirror=${2:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "bare-debian-check: run as root (chroot, mount)" >&2; exit 1; }
command -v debootstrap >/dev/null 2>&1 || {
    echo "bare-debian-check: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }

if [ ! -e "$root/etc/debian_version" ]; then
    echo "bare-debian-check: debootstrap --variant=minbase bookworm $root"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
        tail -20 "$root.debootstrap.log" >&2; exit 1; }
fi
for tool in make cmake cc sudo; do
    if chroot "$root" sh -c "command -v $tool" >/dev/null 2>&1 && [ ! -e "$root/.upti-deps-ran" ]; then
        echo "bare-debian-check: note: $tool is already in the chroot"
    fi
done

rm -rf "$root/src/upti"
mkdir -p "$root/src/upti"
git -C "$here" archive HEAD | tar -x -C "$root/src/upti"

# The README's first command block, one command per line, comments removed.
cmds=$(awk '/^```sh$/ { inblock = 1; next } inblock && /^```/ { exit } inblock' "$here/README.md" |
       sed 's/[[:space:]]#.*$//; s/[[:space:]]*$//; /^[[:space:]]*$/d')
[ -n "$cmds" ] || { echo "bare-debian-check: no command block in README.md" >&2; exit 1; }

mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
# --rbind: /dev/shm (a tmpfs all users may write, as on a booted system) comes along.
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
cleanup() { umount -R "$root/dev" 2>/dev/null; umount "$root/sys" "$root/proc" 2>/dev/null || true; }
trap cleanup EXIT

printf '%s\n' "$cmds" | while IFS= read -r cmd; do
    case $cmd in
    *scripts/test.sh*) [ "${UPTI_BARE_ALL:-0}" = 1 ] || { echo "bare-debian-check: skipping '$cmd' (UPTI_BARE_ALL=1 runs it)"; continue; } ;;
    esac
    echo "bare-debian-check: \$ $cmd"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        /bin/sh -ec "cd /src/upti && $cmd" </dev/null || {
        echo "bare-debian-check: FAIL: '$cmd' failed in a bare Debian 12" >&2; exit 1; }
    touch "$root/.upti-deps-ran"
done
echo "bare-debian-check: PASS: the README's commands ran in a bare Debian 12"
