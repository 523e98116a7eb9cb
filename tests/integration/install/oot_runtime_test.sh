#!/bin/sh
# SPDX-License-Identifier: MIT
# An out-of-tree runtime (samples/out_of_tree_runtime: toyrt) traced by an installed UPTI that
# never heard of it: installs the build tree, builds toyrt against it with
# find_package(upti) and upti_wrap(), then checks, with exact counts and names,
#   - with no tool: toy_app runs and loads no libupti.so;
#   - the sample's tool, which asks for toyrt's table by name (toy_tool.c): the
#     operations' names, its own wrapper's count, callbacks and arguments;
#   - named_request_tool.c, built with cc against the installed headers: every
#     status of the request, and which registrations each request gets;
#   - upti run: the database's api rows (domain toyrt, names, results, correlation
#     ids), upti stats, and the JSON trace; with --args, the arguments' rows;
#     toy_fork.c: a child forked without exec calls toyrt, registered by its
#     parent: its own database has its calls (named, unless the collector
#     spooled them before the parent's names: see the check).
#   oot_runtime_test.sh BUILD_DIR SAMPLE_DIR CMAKE C_COMPILER
set -eu
build=$1
toy=$2
cmake=$3
cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

prefix=$work/opt/upti
step "install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
    cat "$work/install.log" >&2; fail "cmake --install failed"; }
[ -x "$prefix/bin/upti-wrap" ] || fail "upti-wrap not installed"

step "build toyrt out of tree: find_package(upti), upti_wrap(toyrt.api)"
"$cmake" -S "$toy" -B "$work/toy" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; fail "configure failed"; }
"$cmake" --build "$work/toy" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "build failed"; }

app=$work/toy/toy_app
step "no tool: toy_app runs, libupti.so is never loaded"
out=$(env -u UPTI_TOOL_LIBRARIES -u LD_LIBRARY_PATH LD_DEBUG=libs "$app" 2>"$work/ld.log") ||
    fail "toy_app failed: $out"
[ "$out" = "toy_app: 0 unexpected results" ] || fail "toy_app printed '$out'"
if grep 'calling init:' "$work/ld.log" | grep -q 'libupti\.so'; then
    fail "toy_app without a tool loaded libupti.so"
fi

step "a tool asks for toyrt's table by name and wraps toyLaunch"
out=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/toy/libtoy_tool.so" "$app" 2>&1) ||
    fail "toy_app with toy_tool failed: $out"
expected="toy_app: 0 unexpected results
toy_tool: toyrt operations 1..4: toyInit,toyAlloc,toyFree,toyLaunch
toy_tool: wrapped toyLaunch 5
toy_tool: enter 12 exit 12 failed 2 args 10"
[ "$out" = "$expected" ] || fail "toy_app with toy_tool printed
$out
expected
$expected"

step "the statuses of upti_at_named_intercept_table_registration, its requests' tables"
here=$(cd "$(dirname "$0")" && pwd)
libdir=$(dirname "$(find "$prefix" -name libupti.so | head -1)")
"$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -o "$work/named_request_tool.so" \
    "$here/named_request_tool.c" -I"$prefix/include" -L"$libdir" -lupti -Wl,-rpath,"$libdir" ||
    fail "building named_request_tool.c against $prefix failed"
out=$(env -u LD_LIBRARY_PATH UPTI_TOOL_LIBRARIES="$work/named_request_tool.so" "$app" 2>&1) ||
    fail "toy_app with named_request_tool failed: $out"
expected="toy_app: 0 unexpected results
named_request_tool: statuses 2 of 2
named_request_tool: toyrt tables 1 (kind 8, operations 1+4), uptx tables 1, toyrt>=2 tables 0"
[ "$out" = "$expected" ] || fail "toy_app with named_request_tool printed
$out
expected
$expected"

step "upti run traces toyrt: api rows, upti stats, JSON"
upti=$prefix/bin/upti
out=$(env -u LD_LIBRARY_PATH -u UPTI_TOOL_LIBRARIES "$upti" run -d "$work/trace" -o toy \
      -f db,json -- "$app" 2>&1) || fail "upti run failed: $out"
db=$work/trace/toy.db
[ -f "$db" ] || fail "upti run wrote no toy.db: $out"
python3 - "$db" <<'PY' || fail "database check"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT domain, name, count(*), sum(result IS NOT NULL AND result != 0),"
                  " sum(result IS NULL) FROM apis WHERE domain = 'toyrt'"
                  " GROUP BY domain, name ORDER BY name").fetchall()
want = [("toyrt", "toyAlloc", 3, 0, 0), ("toyrt", "toyFree", 3, 0, 3),
        ("toyrt", "toyInit", 1, 0, 0), ("toyrt", "toyLaunch", 5, 2, 0)]
assert rows == want, rows
errors = db.execute("SELECT result FROM apis WHERE name = 'toyLaunch' AND result != 0").fetchall()
assert errors == [(-2,), (-2,)], errors
ids = db.execute("SELECT count(DISTINCT correlation_id), min(correlation_id) FROM apis"
                 " WHERE domain = 'toyrt'").fetchone()
assert ids[0] == 12 and ids[1] > 0, ids
bad = db.execute("SELECT count(*) FROM apis WHERE domain = 'toyrt' AND end < start").fetchone()
assert bad == (0,), bad
others = db.execute("SELECT count(*) FROM apis WHERE domain != 'toyrt'").fetchone()
assert others == (0,), others
print("database: toyrt api rows as expected")
PY
stats=$(env -u LD_LIBRARY_PATH "$upti" stats "$db") || fail "upti stats failed"
for fn in toyInit toyAlloc toyFree toyLaunch; do
    echo "$stats" | grep -q "$fn" || fail "upti stats does not name $fn:
$stats"
done
launch=$(echo "$stats" | grep -m1 'toyLaunch' | tr -s ' ')
case "$launch" in
*" 5 "*) ;;
*) fail "upti stats' toyLaunch row has no count 5: $launch" ;;
esac
json=$(find "$work/trace" -name 'toy*.json' | head -1)
[ -n "$json" ] || fail "no JSON trace"
python3 - "$json" <<'PY' || fail "JSON check"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
names = {}
for e in events:
    if e.get("ph") == "X" and str(e.get("name", "")).startswith("toy"):  # "toy": the uptx range
        names[e["name"]] = names.get(e["name"], 0) + 1
assert names == {"toy": 1, "toyInit": 1, "toyAlloc": 3, "toyFree": 3, "toyLaunch": 5}, names
print("json: toyrt calls as expected")
PY
step "upti run --args --runtime-trace: the arguments, named as toyrt.api declares them"
out=$(env -u LD_LIBRARY_PATH -u UPTI_TOOL_LIBRARIES "$upti" run --args --runtime-trace \
      -d "$work/args" -o toy -- "$app" 2>&1) || fail "upti run --args failed: $out"
python3 - "$work/args/toy.db" <<'PY' || fail "args check"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT g.position, g.type, g.name, g.value FROM args g"
                  " WHERE g.function = 'toyLaunch' ORDER BY g.api_id, g.position").fetchall()
want = []
for count in (1, 0, 2, 0, 3):
    want += [(0, "const char *", "kernel", "vadd"), (1, "unsigned int", "count", str(count))]
assert rows == want, rows
alloc = db.execute("SELECT count(*), count(DISTINCT api_id) FROM args WHERE function = 'toyAlloc'"
                   " AND ((position = 0 AND name = 'bytes' AND value = '64')"
                   " OR (position = 1 AND name = 'out' AND type = 'void **'))").fetchone()
assert alloc == (6, 3), alloc
print("args: toyrt arguments as expected")
PY
step "a child forked without exec calls toyrt: its database has the calls"
"$cc" -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$work/toy_fork" "$here/toy_fork.c" -I"$toy" \
    -L"$work/toy" -ltoyrt -Wl,-rpath,"$work/toy" || fail "building toy_fork.c failed"
out=$(env -u LD_LIBRARY_PATH -u UPTI_TOOL_LIBRARIES "$upti" run -d "$work/fork" -o f \
      -- "$work/toy_fork" 2>&1) || fail "upti run toy_fork failed: $out"
python3 - "$work/fork" <<'PY' || fail "fork check"
import glob, sqlite3, sys
found = []
for path in sorted(glob.glob(sys.argv[1] + "/f*.db")):  # f.db, the child f-PID.db
    db = sqlite3.connect(path)
    found.append(sorted(db.execute("SELECT domain, name, count(*) FROM apis GROUP BY domain, name")))
# The child's names come from its parent's records (it inherits the runtime's ids, not
# their names): when the collector spools the child's first calls before the parent's
# name records, they stay "operation 4" (2 runs in 9 with three runs at once). A
# converter pre-pass of the names would make it exact; until then either is accepted,
# the calls themselves always.
want = [("toyrt", "toyInit", 1), ("toyrt", "toyLaunch", 1)]
child = ([("toyrt", "toyLaunch", 2)], [("RUNTIME_API", "operation 4", 2)])
assert len(found) == 2 and want in found and [f for f in found if f != want][0] in child, found
print("fork: parent named, the child's calls recorded")
PY
echo "PASS"
