#!/bin/sh
# Installs the build tree into a temporary prefix, then builds and runs code
# against it the two ways users do: find_package(upti) and pkg-config upti.
#   install_test.sh BUILD_DIR PROJECT_DIR CMAKE C_COMPILER
set -eu
build=$1
project=$2
cmake=$3
cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
    cat "$work/install.log" >&2; fail "cmake --install failed"; }

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
libdir=$(dirname "$(find "$prefix" -name libupti.so | head -1)")

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

step "pkg-config upti: flags point into the install prefix"
export PKG_CONFIG_PATH="$(dirname "$pc")"
cflags=$(pkg-config --cflags upti) || fail "pkg-config --cflags upti failed"
libs=$(pkg-config --libs upti) || fail "pkg-config --libs upti failed"
echo "cflags: $cflags"
echo "libs: $libs"
case "$cflags $libs" in
*"$prefix"*) ;;
*) fail "upti.pc does not point into the prefix it was installed to ($prefix): '$cflags $libs'
      (its prefix is fixed when the build is configured; prefix=\${pcfiledir}/../.. would follow the files)" ;;
esac
# shellcheck disable=SC2086
"$cc" -shared -fPIC -o "$work/pc_tool.so" "$project/tool.c" $cflags $libs ${LDFLAGS:-} \
    -Wl,-rpath,"$libdir" || fail "building a tool with pkg-config flags failed"
# shellcheck disable=SC2086
"$cc" -o "$work/pc_app" "$project/app.c" $cflags ${LDFLAGS:-} -L"$libdir" -luptx -Wl,-rpath,"$libdir" ||
    fail "building an app with pkg-config flags failed"
out=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/pc_tool.so" "$work/pc_app" 2>&1) ||
    fail "pc_app failed: $out"
[ "$out" = "$expected" ] || fail "pc_app printed '$out', expected '$expected'"
echo "PASS"
