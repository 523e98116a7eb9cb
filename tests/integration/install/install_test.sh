#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs UPTI, then builds and runs code against the installed tree the ways
# users do: find_package(upti), pkg-config upti and uptx, and the installed
# upti command.
#   install_test.sh BUILD_DIR PROJECT_DIR CMAKE C_COMPILER opt
#       the build tree, installed with --prefix into an /opt-like prefix
#   install_test.sh BUILD_DIR PROJECT_DIR CMAKE C_COMPILER usr SOURCE_DIR [SANITIZE]
#       a build configured with -DCMAKE_INSTALL_PREFIX=/usr (Debian: multiarch
#       libdir lib/<triplet>), installed with DESTDIR, used from there; built
#       as Debian's packaging builds (CMAKE_BUILD_TYPE None, and here without
#       its flags: unoptimized, which takes half the time of RelWithDebInfo
#       in a test that waits alone, RUN_SERIAL, for its build)
set -eu
build=$1
project=$2
cmake=$3
cc=$4
mode=${5:-opt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$mode" = usr ]; then
    src=$6
    sanitize=${7:-}
    build=$work/build-usr
    step "configure $src with -DCMAKE_INSTALL_PREFIX=/usr, build, install with DESTDIR"
    "$cmake" -S "$src" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER="$cc" -DUPTI_SANITIZE="$sanitize" \
        >"$work/usr-configure.log" 2>&1 || { cat "$work/usr-configure.log" >&2; fail "configure failed"; }
    "$cmake" --build "$build" -j 2 >"$work/usr-build.log" 2>&1 || {
        tail -40 "$work/usr-build.log" >&2; fail "build failed"; }
    DESTDIR=$work/root "$cmake" --install "$build" >"$work/install.log" 2>&1 || {
        cat "$work/install.log" >&2; fail "cmake --install failed"; }
    prefix=$work/root/usr
else
    prefix=$work/opt/upti
    step "cmake --install $build --prefix $prefix"
    "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
        cat "$work/install.log" >&2; fail "cmake --install failed"; }
fi

for f in include/upti/upti.h include/upti/register.h include/upti/runtime.h include/uptx/uptx.h \
         include/uptx/uptx_table.h; do
    [ -f "$prefix/$f" ] || fail "$f not installed"
done
for lib in libupti.so libupti-register.so libuptx.so; do
    found=$(find "$prefix" -name "$lib" | head -1)
    [ -n "$found" ] || fail "$lib not installed"
done
config=$(find "$prefix" -name uptiConfig.cmake | head -1)
[ -n "$config" ] || fail "uptiConfig.cmake not installed"
pc=$(find "$prefix" -name upti.pc | head -1)
[ -n "$pc" ] || fail "upti.pc not installed"
[ -f "$(dirname "$pc")/uptx.pc" ] || fail "uptx.pc not installed beside upti.pc"
libdir=$(dirname "$(find "$prefix" -name libupti.so | head -1)")
[ "$(dirname "$pc")" = "$libdir/pkgconfig" ] || fail "upti.pc is in $(dirname "$pc"), not $libdir/pkgconfig"
for f in README.md docs/README.md docs/writing-a-tool.md docs/database.md docs/cli.md samples/first_tool/mytool.c; do
    [ -f "$prefix/share/doc/upti/$f" ] || fail "doc $f not installed in $prefix/share/doc/upti"
done

step "find_package(upti): configure, build and run an out-of-tree project"
"$cmake" -S "$project" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" >"$work/configure.log" 2>&1 || {
    cat "$work/configure.log" >&2; fail "configuring the consumer project failed"; }
"$cmake" --build "$work/consumer" >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2; fail "building the consumer project failed"; }

out=$(env -u UPTI_TOOL_LIBRARIES -u LD_LIBRARY_PATH "$work/consumer/consumer_runtime") ||
    fail "consumer_runtime: $out"
echo "$out"
out=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/consumer/libconsumer_tool.so" \
      "$work/consumer/consumer_app" 2>&1) || fail "consumer_app failed: $out"
echo "$out"
expected="consumer_app: push=0 pop=0
consumer_tool: 3 marker calls"
[ "$out" = "$expected" ] || fail "consumer_app printed '$out', expected '$expected'"
# The installed libraries are the ones used, not the build tree's.
maps=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/consumer/libconsumer_tool.so" \
       LD_DEBUG=libs "$work/consumer/consumer_app" 2>&1 | grep 'calling init:' | grep -c "$build/" || true)
[ "$maps" -eq 0 ] || fail "consumer_app loaded libraries from the build tree $build"

step "pkg-config upti and uptx: flags are the installed include and library directories"
export PKG_CONFIG_PATH="$(dirname "$pc")"
cflags=$(pkg-config --cflags upti) || fail "pkg-config --cflags upti failed"
libs=$(pkg-config --libs upti) || fail "pkg-config --libs upti failed"
echo "cflags: $cflags"
echo "libs: $libs"
# pkg-config prints the paths as the .pc file builds them (${pcfiledir}/../..):
# compare the directories they name.
pc_dir() { (cd "$1" 2>/dev/null && pwd -P) || echo "$1 (missing)"; }
inc=$(pc_dir "$(echo ${cflags#-I})")
[ "$inc" = "$(pc_dir "$prefix/include")" ] ||
    fail "pkg-config --cflags upti names $inc, not $prefix/include (the installed headers)"
lib=$(pc_dir "$(echo "$libs" | sed -n 's/^-L\([^ ]*\) -lupti *$/\1/p')")
[ "$lib" = "$(pc_dir "$libdir")" ] ||
    fail "pkg-config --libs upti gives '$libs': not -L$libdir -lupti"
uptx_libs=$(pkg-config --libs uptx) || fail "pkg-config --libs uptx failed"
uptx_cflags=$(pkg-config --cflags uptx) || fail "pkg-config --cflags uptx failed"
[ "$(pc_dir "$(echo ${uptx_cflags#-I})")" = "$inc" ] || fail "pkg-config --cflags uptx gives '$uptx_cflags'"
case "$uptx_libs" in
*-luptx*) ;;
*) fail "pkg-config --libs uptx gives '$uptx_libs', without -luptx" ;;
esac
# shellcheck disable=SC2086
"$cc" -shared -fPIC -o "$work/pc_tool.so" "$project/tool.c" $cflags $libs ${LDFLAGS:-} \
    -Wl,-rpath,"$libdir" || fail "building a tool with pkg-config flags failed"
# shellcheck disable=SC2086
"$cc" -o "$work/pc_app" "$project/app.c" $uptx_cflags $uptx_libs ${LDFLAGS:-} -Wl,-rpath,"$libdir" ||
    fail "building an app with pkg-config uptx flags failed"
out=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/pc_tool.so" "$work/pc_app" 2>&1) ||
    fail "pc_app failed: $out"
[ "$out" = "$expected" ] || fail "pc_app printed '$out', expected '$expected'"

step "the installed upti traces the app (it finds libupti-trace.so, which finds libupti.so)"
if [ -z "${LDFLAGS:-}" ]; then
    out=$(env -u LD_LIBRARY_PATH -u UPTI_TOOL_LIBRARIES "$prefix/bin/upti" run --marker-trace \
          -d "$work/trace" -- "$work/pc_app" 2>&1) || fail "installed upti run failed: $out"
    echo "$out"
    [ -n "$(find "$work/trace" -name '*.db')" ] || fail "installed upti run wrote no database"
    step "the installed upti ignores the collector's test hook (it would kill itself)"
    out=$(env -u LD_LIBRARY_PATH -u UPTI_TOOL_LIBRARIES UPTI_RING_TEST_CRASH_AFTER_CHUNKS=1 \
          "$prefix/bin/upti" run --marker-trace -d "$work/hook" -o h -- "$work/pc_app" 2>&1) ||
        fail "installed upti run with UPTI_RING_TEST_CRASH_AFTER_CHUNKS=1 failed: $out"
    [ -f "$work/hook/h.db" ] || fail "installed upti run with the test hook wrote no h.db: $out"
    step "the installed tool, without upti run, finds the installed upti as its collector"
    tool=$(find "$prefix" -name libupti-trace.so | head -1)
    mkdir -p "$work/record_only"
    out=$(cd "$work/record_only" && env -u LD_LIBRARY_PATH -u UPTI_TRACE_COLLECTOR \
          UPTI_TOOL_LIBRARIES="$tool" UPTI_TRACE_OUTPUT=ro \
          TMPDIR="$work/record_only" "$work/pc_app" 2>&1 >/dev/null) ||
        fail "pc_app, traced without upti run, failed: $out"
    # The helper's stderr is the program's: this pipe ends once it wrote the database,
    # and it adds nothing to it.
    [ -z "$out" ] || fail "traced without upti run, the program's stderr has: $out"
    [ -f "$work/record_only/ro.db" ] || fail "without upti run: no ro.db from the installed helper"
else
    echo "(skipped in a sanitizer build: the installed upti needs the sanitizer runtime preloaded)"
fi
echo "PASS"
