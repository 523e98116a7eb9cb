#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/output: records/s of each writer and the whole-run cost of `upti run --sys-trace`.
#
#   bench/output/bench_output.sh BUILD_DIR [RECORDS] [ITERATIONS]
#
# 1. upti-synth writes RECORDS (default 1000000) synthesized records into a
#    database, then exports pftrace, json and csv: it prints records/s for each
#    (db: the streaming insert rate, and with index creation and close).
#    Then bench_db: the writer alone, streaming (the tool in the program) and
#    bulk (the collector's conversion after the run, `upti-ring convert`),
#    records/s in wall and CPU time and bulk's ratio to streaming.
# 2. Load time of the two timeline formats with Python readers (json.load, C
#    accelerated, vs the pure-Python protobuf walker of traceck.py) and file sizes.
# 3. The uptx test program, ITERATIONS (default 20000) iterations x 2 threads
#    (5 marker calls each), bare vs under `upti run --sys-trace`: wall time ratio.
set -eu
BUILD=$(cd "${1:?usage: bench_output.sh BUILD_DIR [RECORDS] [ITERATIONS]}" && pwd)
N=${2:-1000000}
IT=${3:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
CK=$HERE/../../tests/integration/cli/traceck.py
TMP=$(mktemp -d /tmp/upti-bench-output.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "== writers, $N records"
"$BUILD/bin/upti-synth" "$TMP/b.db" "$N" --formats pftrace,json,csv
ls -l "$TMP/b.db" "$TMP/b.pftrace" "$TMP/b.json" | awk '{printf "size: %s %.1f MB\n", $9, $5/1e6}'
echo "== database writer alone (conversion rate: mode=bulk), $N records"
"$BUILD/bin/bench_db" "$N" "$TMP"

echo "== timeline load time (Python readers)"
python3 -c "
import json, time, sys
t = time.time(); d = json.load(open('$TMP/b.json', 'rb')); print('json.load: %.2f s, %d events' % (time.time() - t, len(d['traceEvents'])))"
python3 "$CK" pftrace "$TMP/b.pftrace"

now() { python3 -c 'import time; print(time.monotonic())'; }
echo "== whole run: upti-test-uptx-app --iterations $IT (2 threads)"
APP=$BUILD/bin/upti-test-uptx-app
"$APP" --iterations 100 >/dev/null
t0=$(now); "$APP" --iterations "$IT"; t1=$(now)
"$BUILD/bin/upti" run --sys-trace -d "$TMP/run" -o r -- "$APP" --iterations "$IT"; t2=$(now)
"$BUILD/bin/upti" run --sys-trace --format db,pftrace -d "$TMP/run" -o r2 -- "$APP" --iterations "$IT"; t3=$(now)
recs=$(sqlite3 "$TMP/run/r.db" "select count(*) from marker")
python3 -c "
b, r, p = $t1 - $t0, $t2 - $t1, $t3 - $t2
print('bare: %.3f s; upti run --sys-trace: %.3f s (%.1fx, %d records); with pftrace too: %.3f s (%.1fx)' % (b, r, r / b, $recs, p, p / b))"
