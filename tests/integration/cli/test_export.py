#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`upti export` to OTF2 and the Perfetto trace's clock and counters, over fixture programs.

  test_export.py BUILD_DIR CASE

otf2: programs run under `upti run`; their databases (and the two merged) are
exported with `upti export --format otf2` and read back with OTF2's own
otf2-print: ENTER and LEAVE counts, per region and per location, equal what
the database holds (sqlite); locations, location groups (MPI ranks), regions,
strings and clock properties are checked exactly.
pftrace_clock: the Perfetto trace declares its clock (the database's two
clock snapshots as ClockSnapshot packets, every timestamp on MONOTONIC_RAW
through TracePacketDefaults), and its counter tracks (memory allocated per
device, commands in flight per queue, records dropped) hold exactly the values
the database's rows give; decoded by traceck.py with Perfetto's field numbers.
Exit 0 = pass, 1 = fail, 77 = skipped (something it needs is absent).
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "common", "python")]
import traceck  # noqa: E402
import upti_test  # noqa: E402
from upti_test import SKIP, check, one  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI, UPTX_APP, OCL_APP = upti_test.built(
    BUILD, "bin/upti", "bin/upti-test-uptx-app", "bin/upti-test-ocl-e2e")


def run(args, env=None, expect=0):
    """upti_test.run, the MPI launchers' rank variables removed too."""
    return upti_test.run(args, env, expect, drop=upti_test.TRACING + upti_test.RANKS)


def altered_copy(src, dst, sql, *args):
    """A copy of the database src at dst, changed by sql (with args): dst."""
    shutil.copy(src, dst)
    o = sqlite3.connect(dst)
    o.execute(sql, args)
    o.commit()
    o.close()
    return dst


def ocl_ready():
    if not os.path.exists(OCL_APP):
        return False
    p = subprocess.run([OCL_APP, "--kernels", "1"], capture_output=True, text=True, timeout=120)
    return p.returncode == 0


# ---------------------------------------------------------------- OTF2

def otf2_events(anchor):
    """otf2-print's events: [(kind, location, timestamp, region name)] for ENTER/LEAVE."""
    p = run(["otf2-print", anchor])
    ev = []
    for line in p.stdout.splitlines():
        m = re.match(r'(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "(.*)" <\d+>$', line)
        if m:
            ev.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return ev


def otf2_defs(anchor):
    """otf2-print -G: {kind: [(id, rest of the line)]}."""
    p = run(["otf2-print", "-G", anchor])
    defs = {}
    for line in p.stdout.splitlines():
        m = re.match(r'([A-Z_]+)\s+(\d+)?\s*(.*)$', line)
        if m and m.group(1) in ("STRING", "REGION", "LOCATION", "LOCATION_GROUP",
                                "SYSTEM_TREE_NODE", "CLOCK_PROPERTIES"):
            defs.setdefault(m.group(1), []).append(
                (int(m.group(2)) if m.group(2) else None, m.group(3)))
    return defs


def lanes(rows):
    """Greedy lanes (first lane free at the start): how many a sorted track needs."""
    ends = []
    for start, end in rows:
        end = max(end, start)
        for i, e in enumerate(ends):
            if e <= start:
                ends[i] = end
                break
        else:
            ends.append(end)
    return len(ends)


def expected_otf2(db):
    """What the export must hold, from the database alone."""
    ops = ("SELECT process_id, start, max(end, start) FROM api WHERE start > 0"
           " UNION ALL SELECT process_id, start, max(end, start) FROM region WHERE start > 0"
           " UNION ALL SELECT process_id, start, max(end, start) FROM kernel_dispatch WHERE start > 0"
           " UNION ALL SELECT process_id, start, max(end, start) FROM memory_copy WHERE start > 0")
    n = one(db, "SELECT count(*) FROM (%s)" % ops)
    per_name = {}
    for name, c in db.execute(
            "SELECT s.string, count(*) FROM (SELECT name_id FROM api WHERE start > 0"
            " UNION ALL SELECT name_id FROM region WHERE start > 0"
            " UNION ALL SELECT name_id FROM kernel_dispatch WHERE start > 0"
            " UNION ALL SELECT operation_id FROM memory_copy WHERE start > 0) o"
            " JOIN string s ON s.id = o.name_id GROUP BY s.string"):
        per_name[name] = c
    threads = one(db, "SELECT count(*) FROM (SELECT DISTINCT process_id, tid FROM api WHERE start > 0"
                      " UNION SELECT DISTINCT process_id, tid FROM region WHERE kind = 0 AND start > 0)")
    range_lanes = 0
    for (proc,) in db.execute("SELECT DISTINCT process_id FROM region WHERE kind = 1 AND start > 0"):
        range_lanes += lanes(db.execute("SELECT start, end FROM region WHERE kind = 1 AND start > 0"
                                        " AND process_id = ? ORDER BY start, end DESC",
                                        (proc,)).fetchall())
    queue_lanes = 0
    for proc, q in db.execute("SELECT DISTINCT process_id, queue_handle FROM (SELECT process_id,"
                              " queue_handle FROM kernel_dispatch WHERE start > 0 UNION ALL"
                              " SELECT process_id, queue_handle FROM memory_copy WHERE start > 0)"):
        queue_lanes += lanes(db.execute(
            "SELECT start, end FROM (SELECT process_id, queue_handle, start, end FROM kernel_dispatch"
            " WHERE start > 0 UNION ALL SELECT process_id, queue_handle, start, end FROM memory_copy"
            " WHERE start > 0) WHERE process_id = ? AND queue_handle = ? ORDER BY start, end",
            (proc, q)).fetchall())
    devices = one(db, "SELECT count(*) FROM (SELECT DISTINCT process_id, agent_handle FROM"
                      " (SELECT process_id, agent_handle FROM kernel_dispatch WHERE start > 0"
                      " UNION ALL SELECT process_id, agent_handle FROM memory_copy WHERE start > 0))")
    kinds = one(db, "SELECT count(*) FROM (SELECT DISTINCT 0, name_id FROM api WHERE start > 0"
                    " UNION SELECT DISTINCT 1, name_id FROM region WHERE start > 0"
                    " UNION SELECT DISTINCT 2, name_id FROM kernel_dispatch WHERE start > 0"
                    " UNION SELECT DISTINCT 3, operation_id FROM memory_copy WHERE start > 0)")
    t0 = one(db, "SELECT min(start) FROM (%s)" % ops)
    t1 = one(db, "SELECT max(max(end, start)) FROM (SELECT start, end FROM (%s))"
             % ops.replace("max(end, start)", "max(end, start) AS end"))
    return {"events": n, "per_name": per_name, "threads": threads, "range_lanes": range_lanes,
            "queue_lanes": queue_lanes, "processes": one(db, "SELECT count(*) FROM info_process"),
            "devices": devices, "regions": kinds, "t0": t0, "t1": t1}


def check_otf2(db_path, anchor, ranks=None):
    db = sqlite3.connect(db_path)
    x = expected_otf2(db)
    ev = otf2_events(anchor)
    enters = [e for e in ev if e[0] == "ENTER"]
    leaves = [e for e in ev if e[0] == "LEAVE"]
    check(len(enters) == x["events"] and len(leaves) == x["events"],
          "%s: %d ENTER, %d LEAVE; the database holds %d operations"
          % (anchor, len(enters), len(leaves), x["events"]))
    per_name = {}
    for e in enters:
        per_name[e[3]] = per_name.get(e[3], 0) + 1
    check(per_name == x["per_name"], "%s: ENTERs per region %r != database %r"
          % (anchor, per_name, x["per_name"]))
    # Each location: proper nesting, timestamps in order.
    stacks, last = {}, {}
    for kind, loc, ts, name in ev:
        check(ts >= last.get(loc, 0), "%s: time goes back on location %d" % (anchor, loc))
        last[loc] = ts
        st = stacks.setdefault(loc, [])
        if kind == "ENTER":
            st.append(name)
        else:
            check(st and st[-1] == name, "%s: LEAVE %r does not match on location %d"
                  % (anchor, name, loc))
            st.pop()
    check(all(not s for s in stacks.values()), "%s: regions left open" % anchor)

    defs = otf2_defs(anchor)
    locs = defs.get("LOCATION", [])
    n_cpu = sum(1 for _, r in locs if "Type: CPU_THREAD" in r)
    n_acc = sum(1 for _, r in locs if "Type: ACCELERATOR_STREAM" in r)
    check(n_cpu == x["threads"] + x["range_lanes"],
          "%s: %d CPU_THREAD locations, expected %d threads + %d range lanes"
          % (anchor, n_cpu, x["threads"], x["range_lanes"]))
    check(n_acc == x["queue_lanes"], "%s: %d ACCELERATOR_STREAM locations, expected %d"
          % (anchor, n_acc, x["queue_lanes"]))
    # Each location's declared event count is what it holds.
    for lid, r in locs:
        declared = int(re.search(r"# Events: (\d+)", r).group(1))
        check(declared == sum(1 for e in ev if e[1] == lid),
              "%s: location %d declares %d events" % (anchor, lid, declared))
    groups = defs.get("LOCATION_GROUP", [])
    procs = [(g, r) for g, r in groups if "Type: PROCESS" in r]
    accs = [(g, r) for g, r in groups if "Type: ACCELERATOR" in r]
    check(len(procs) == x["processes"] and len(accs) == x["devices"],
          "%s: %d process and %d accelerator groups, expected %d and %d"
          % (anchor, len(procs), len(accs), x["processes"], x["devices"]))
    check(all("Creator: UNDEFINED" not in r for _, r in accs),
          "%s: an accelerator group without its creating process" % anchor)
    if ranks is not None:
        got = sorted((g, re.search(r'Name: "([^"]*)"', r).group(1)) for g, r in procs)
        check(got == [(k, "MPI Rank %d" % k) for k in sorted(ranks)],
              "%s: process groups %r, expected ranks %r" % (anchor, got, ranks))
    check(len(defs.get("REGION", [])) == x["regions"], "%s: %d regions, expected %d"
          % (anchor, len(defs.get("REGION", [])), x["regions"]))
    strings = [re.match(r'"(.*)"$', r).group(1) for _, r in defs.get("STRING", [])]
    check(len(strings) == len(set(strings)), "%s: strings written twice: %r"
          % (anchor, sorted(s for s in set(strings) if strings.count(s) > 1)))
    clock = defs["CLOCK_PROPERTIES"][0][1]
    m = re.search(r"Ticks per Seconds: (\d+), Global Offset: (\d+), Length: (\d+)", clock)
    check(m and (int(m.group(1)), int(m.group(2)), int(m.group(3)))
          == (1000000000, x["t0"], x["t1"] - x["t0"]),
          "%s: clock properties %r, expected 1e9 ticks/s, offset %d, length %d"
          % (anchor, clock, x["t0"], x["t1"] - x["t0"]))
    check("Date: 20" in clock, "%s: no realtime for the global offset: %r" % (anchor, clock))
    return x


def case_otf2(tmp):
    if shutil.which("otf2-print") is None:
        print("otf2-print not installed (apt-get install otf2-tools)")
        return SKIP
    p = run([UPTI, "export", "--help"])
    if "not in this build" in p.stdout:
        print("upti built without OTF2")
        return SKIP
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db", "-d", d, "-o", "m", "--",
         UPTX_APP, "--threads", "3", "--iterations", "7"], env={"PMI_RANK": "1"})
    run([UPTI, "export", os.path.join(d, "m.db"), "--format", "otf2"])
    x = check_otf2(os.path.join(d, "m.db"), os.path.join(d, "m.otf2"), ranks=[1])
    # 3 workers x 7 x (outer + inner) + 3 start/stop ranges.
    check(x["per_name"].get("outer") == 21 and x["events"] >= 45, "uptx regions: %r" % x)
    inputs, ranks = [os.path.join(d, "m.db")], [1]
    if ocl_ready():
        run([UPTI, "run", "--sys-trace", "--format", "db", "-d", d, "-o", "o", "--",
             OCL_APP, "--kernels", "40"], env={"PMI_RANK": "0"})
        run([UPTI, "export", os.path.join(d, "o.db"), "-f", "otf2", "-d", os.path.join(tmp, "x"),
             "-o", "ocl"])
        x = check_otf2(os.path.join(d, "o.db"), os.path.join(tmp, "x", "ocl.otf2"), ranks=[0])
        check(x["per_name"].get("kern_a") == 40 and x["per_name"].get("clEnqueueNDRangeKernel") == 40
              and x["per_name"].get("WRITE_BUFFER") == 1 and x["devices"] == 1,
              "OpenCL operations: %r" % x["per_name"])
        inputs.append(os.path.join(d, "o.db"))
        ranks.append(0)
    else:
        print("no OpenCL device: the OpenCL part is skipped")
    # The merged ranks: one archive, a group per rank (the rank is the group id).
    run([UPTI, "merge"] + inputs + ["-d", d, "-o", "all"])
    run([UPTI, "export", os.path.join(d, "all.db"), "-f", "otf2,csv"])
    check_otf2(os.path.join(d, "all.db"), os.path.join(d, "all.otf2"), ranks=ranks)
    # Exported again: UPTI's archive is replaced; someone else's is not.
    run([UPTI, "export", os.path.join(d, "all.db"), "-f", "otf2"])
    check_otf2(os.path.join(d, "all.db"), os.path.join(d, "all.otf2"))
    # A damaged database whose rows name no info_process row: a group made for them.
    shutil.copy(os.path.join(d, "all.db"), os.path.join(tmp, "noproc.db"))
    o = sqlite3.connect(os.path.join(tmp, "noproc.db"))
    x = expected_otf2(o)
    ids = sorted(r[0] for r in o.execute("SELECT id FROM info_process"))
    o.execute("DELETE FROM info_process")
    o.commit()
    o.close()
    run([UPTI, "export", os.path.join(tmp, "noproc.db"), "-f", "otf2"])
    ev = otf2_events(os.path.join(tmp, "noproc.otf2"))
    groups = [r for _, r in otf2_defs(os.path.join(tmp, "noproc.otf2"))["LOCATION_GROUP"]
              if "Type: PROCESS" in r]
    check(sum(1 for e in ev if e[0] == "ENTER") == x["events"]
          and sorted(re.search(r'Name: "([^"]*)"', r).group(1) for r in groups)
          == sorted("process %d" % i for i in ids),
          "without info_process: %d ENTER (expected %d), groups %r" % (
              sum(1 for e in ev if e[0] == "ENTER"), x["events"], groups))
    # A region name of 5 MiB (more than OTF2's 4 MiB definition chunk): the export is
    # written, that name cut to its first MiB (said once), every event there.
    altered_copy(os.path.join(d, "m.db"), os.path.join(tmp, "long.db"),
                 "UPDATE string SET string = ? WHERE string = 'outer'", "o" * (5 << 20))
    p = run([UPTI, "export", os.path.join(tmp, "long.db"), "-f", "otf2"])
    check(p.stderr == "upti: 1 string longer than 1048576 bytes cut in the OTF2 archive (the "
          "database has them whole)\nupti: wrote %s\n" % os.path.join(tmp, "long.otf2"),
          "long string: %r" % p.stderr[:300])
    ev = otf2_events(os.path.join(tmp, "long.otf2"))
    x = expected_otf2(sqlite3.connect(os.path.join(d, "m.db")))
    cut = "o" * (1 << 20) + " [cut: %d bytes]" % (5 << 20)
    check(sum(1 for e in ev if e[0] == "ENTER" and e[3] == cut) == 21
          and sum(1 for e in ev if e[0] == "ENTER") == x["events"],
          "long string: %d ENTER of the cut name, %d in all (expected 21, %d)"
          % (sum(1 for e in ev if e[0] == "ENTER" and e[3] == cut),
             sum(1 for e in ev if e[0] == "ENTER"), x["events"]))
    # Written as NAME.part and renamed: what an export cut short left is removed.
    os.makedirs(os.path.join(d, "stale.part"))
    open(os.path.join(d, "stale.part", "0.evt"), "w").write("cut short")
    open(os.path.join(d, "stale.part.otf2"), "w").write("cut short")
    run([UPTI, "export", os.path.join(d, "all.db"), "-f", "otf2", "-o", "stale", "-d", d])
    check_otf2(os.path.join(d, "all.db"), os.path.join(d, "stale.otf2"))
    left = [f for f in os.listdir(d) if ".part" in f]
    check(left == [], "part files left: %r" % left)
    # Another upti exporting to the same name now (it holds NAME.part.lock): not touched. Two
    # exports at once used to remove each other's NAME.part ("OTF2: 2: POSIX: ...").
    import fcntl
    os.makedirs(os.path.join(d, "busy.part"))
    open(os.path.join(d, "busy.part", "0.evt"), "w").write("being written")
    with open(os.path.join(d, "busy.part.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        p = run([UPTI, "export", os.path.join(d, "all.db"), "-f", "otf2", "-o", "busy", "-d", d],
                expect=1)
    check(p.stderr == "upti: cannot write %s: another upti is writing it\n"
          % os.path.join(d, "busy.part.otf2"), "busy archive: %r" % p.stderr)
    check(open(os.path.join(d, "busy.part", "0.evt")).read() == "being written"
          and not os.path.exists(os.path.join(d, "busy.otf2")), "the busy archive was touched")
    shutil.rmtree(os.path.join(d, "busy.part"))
    os.unlink(os.path.join(d, "busy.part.lock"))
    open(os.path.join(d, "foreign.otf2"), "w").write("not ours\n")
    p = run([UPTI, "export", os.path.join(d, "all.db"), "-f", "otf2", "-o", "foreign", "-d", d],
            expect=1)
    check(p.stderr.startswith("upti: ") and "foreign.otf2 exists and was not written by upti"
          in p.stderr and p.stderr.count("\n") == 1, "foreign archive: %r" % p.stderr)
    check(open(os.path.join(d, "foreign.otf2")).read() == "not ours\n", "foreign archive touched")
    check(not os.path.exists(os.path.join(d, "foreign")), "events written next to a foreign anchor")
    return 0


# ---------------------------------------------------------------- Perfetto

CLOCK_IDS = {"monotonic_raw": 5, "boottime": 6, "monotonic": 3, "realtime": 1}  # BuiltinClock


def snapshot_of(db, key):
    v = one(db, "SELECT value FROM metadata WHERE key = ?", key)
    check(v is not None, "metadata %s missing" % key)
    return {CLOCK_IDS[k]: int(n) for k, n in (kv.split("=") for kv in v.split())}


def counter_values(rows):
    """The counter rule: rows (ts, delta) in order; one value per time, emitted
    when it differs from the last one emitted (the first always)."""
    out, value, last, emitted, i = [], 0, None, False, 0
    while i < len(rows):
        ts = rows[i][0]
        while i < len(rows) and rows[i][0] == ts:
            value += rows[i][1]
            i += 1
        if not emitted or value != last:
            out.append((ts, value))
            last, emitted = value, True
    return out


def expected_memory(db):
    """{(process id, agent): [(ts, bytes)]}: + each allocation, - the allocation a release names."""
    per = {}
    rows = db.execute("SELECT m.process_id, m.agent_handle, s.string, m.handle, m.size, m.timestamp"
                      " FROM memory_allocate m JOIN string s ON s.id = m.operation_id"
                      " WHERE m.timestamp > 0 ORDER BY 1, 2, 6, m.id").fetchall()
    live = {}
    for proc, agent, op, handle, size, ts in rows:
        key = (proc, agent)
        if op == "ALLOCATE":
            live[(key, handle)] = size
            per.setdefault(key, []).append((ts, size))
        elif op == "FREE" and (key, handle) in live:
            per.setdefault(key, []).append((ts, -live.pop((key, handle))))
    return {k: counter_values(v) for k, v in per.items()}


def expected_in_flight(db):
    per = {}
    for table in ("kernel_dispatch", "memory_copy"):
        for proc, q, queued, submit, start, end in db.execute(
                "SELECT process_id, queue_handle, queued, submit, start, end FROM %s"
                " WHERE start > 0" % table):
            t0 = queued if 0 < queued <= start else submit if 0 < submit <= start else start
            per.setdefault((proc, q), []).extend([(t0, 1), (max(end, start), -1)])
    out = {}
    for k, ev in per.items():
        ev.sort()
        out[k] = counter_values(ev)
    return out


def check_clock(pf, db, what):
    start, end = snapshot_of(db, "clock_snapshot"), snapshot_of(db, "clock_snapshot_end")
    check(pf["clock_snapshots"] == [start, end], "%s: clock snapshots %r, the database's %r"
          % (what, pf["clock_snapshots"], [start, end]))
    check(pf["defaults"] == [(0, {58: 5})], "%s: TracePacketDefaults %r: expected the first packet"
          " to put every timestamp on MONOTONIC_RAW (5)" % (what, pf["defaults"]))
    check(not pf["packet_clocks"], "%s: packets set their own clocks %r" % (what, pf["packet_clocks"]))
    for s in (start, end):
        # (BOOTTIME is read just before MONOTONIC: never more than 1 ms behind it.)
        check(set(s) == {1, 3, 5, 6} and s[6] >= s[3] - 10 ** 6 and s[1] > 1600000000 * 10 ** 9,
              "%s: snapshot %r" % (what, s))
    check(start[5] <= end[5] and start[6] <= end[6], "%s: snapshots out of order" % what)
    # The events' clock is the snapshot's MONOTONIC_RAW: the snapshot was taken
    # by the writer after the process started.
    first = min(s["ts"] for s in pf["slices"])
    pstart = one(db, "SELECT min(start) FROM info_process")
    check(pstart <= first <= start[5], "%s: events at %d not on the snapshot's raw clock"
          " (process start %d, snapshot %d)" % (what, first, pstart, start[5]))


def case_pftrace_clock(tmp):
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,pftrace", "-d", d, "-o", "m", "--",
         UPTX_APP, "--threads", "2", "--iterations", "5"])
    db = sqlite3.connect(os.path.join(d, "m.db"))
    check_clock(traceck.decode_pftrace(os.path.join(d, "m.pftrace")), db, "m.pftrace")
    # `upti export` writes the same declaration.
    run([UPTI, "export", os.path.join(d, "m.db"), "-f", "pftrace", "-o", "again", "-d", d])
    pf = traceck.decode_pftrace(os.path.join(d, "again.pftrace"))
    check_clock(pf, db, "again.pftrace")
    dropped = one(db, "SELECT CAST(value AS INTEGER) FROM metadata WHERE key = 'records_dropped'")
    tracks = {t["name"]: u for u, t in pf["tracks"].items() if "counter" in t}
    check(set(tracks) == {"records dropped"}, "counter tracks of a marker-only trace: %r" % tracks)
    pstart, pend = db.execute("SELECT start, end FROM info_process").fetchone()
    check(pf["counters"][tracks["records dropped"]] == [(pstart, 0), (pend, dropped)] and dropped == 0,
          "records dropped: %r (metadata %r)" % (pf["counters"][tracks["records dropped"]], dropped))
    check(pf["tracks"][tracks["records dropped"]]["counter"] == {3: 2}, "records dropped: unit")
    # Merged: the first input's snapshots (one machine's clocks hold for all its
    # processes); processes of several hosts: none.
    run([UPTI, "run", "--marker-trace", "--format", "db", "-d", d, "-o", "m2", "--",
         UPTX_APP, "--threads", "1", "--iterations", "2"])
    run([UPTI, "merge", os.path.join(d, "m.db"), os.path.join(d, "m2.db"), "-d", d, "-o", "both",
         "-f", "pftrace"])
    pf = traceck.decode_pftrace(os.path.join(d, "both.pftrace"))
    check(pf["clock_snapshots"] == [snapshot_of(db, "clock_snapshot"),
                                    snapshot_of(db, "clock_snapshot_end")]
          and pf["defaults"] == [(0, {58: 5})], "merged: %r %r" % (pf["clock_snapshots"], pf["defaults"]))
    other = altered_copy(os.path.join(d, "m2.db"), os.path.join(tmp, "other.db"),
                         "UPDATE info_process SET hostname = 'elsewhere'")
    run([UPTI, "merge", os.path.join(d, "m.db"), other, "-d", d, "-o", "hosts", "-f", "pftrace"])
    pf = traceck.decode_pftrace(os.path.join(d, "hosts.pftrace"))
    check(pf["clock_snapshots"] == [] and pf["defaults"] == [],
          "merged from two hosts: %r %r" % (pf["clock_snapshots"], pf["defaults"]))
    # A database without snapshots (an older upti's): no clock is declared.
    old = altered_copy(os.path.join(d, "m.db"), os.path.join(tmp, "old.db"),
                       "DELETE FROM metadata WHERE key LIKE 'clock_snapshot%'")
    run([UPTI, "export", old, "-f", "pftrace"])
    pf = traceck.decode_pftrace(os.path.join(tmp, "old.pftrace"))
    check(pf["clock_snapshots"] == [] and pf["defaults"] == [],
          "a database without snapshots: %r %r" % (pf["clock_snapshots"], pf["defaults"]))

    if not ocl_ready():
        print("no OpenCL device: the device counters are skipped")
        return 0
    n = 30
    run([UPTI, "run", "--sys-trace", "--format", "db,pftrace,json", "-d", d, "-o", "o", "--",
         OCL_APP, "--kernels", str(n)])
    db = sqlite3.connect(os.path.join(d, "o.db"))
    pf = traceck.decode_pftrace(os.path.join(d, "o.pftrace"))
    check_clock(pf, db, "o.pftrace")
    tracks = {t["name"]: (u, t) for u, t in pf["tracks"].items() if "counter" in t}
    mem = {k: v for k, v in tracks.items() if k.startswith("memory allocated: ")}
    fly = {k: v for k, v in tracks.items() if k.startswith("commands in flight: ")}
    check(len(mem) == 1 and len(fly) == 1 and len(tracks) == 3,
          "counter tracks: %r" % sorted(tracks))
    (mname, (mu, mt)), = mem.items()
    agent = one(db, "SELECT DISTINCT agent_handle FROM memory_allocate")
    check(mname.endswith("(agent %d)" % agent) and mt["counter"] == {3: 3},
          "memory track %r %r" % (mname, mt))
    exp = expected_memory(db)
    check(list(exp.values()) == [pf["counters"][mu]], "memory allocated %r, the database's %r"
          % (pf["counters"][mu], exp))
    # ocl_e2e: two 4096-byte buffers, created one after the other, released at the end.
    check([v for _, v in pf["counters"][mu]] == [4096, 8192, 4096, 0],
          "memory allocated values %r" % pf["counters"][mu])
    (fname, (fu, ft)), = fly.items()
    q = one(db, "SELECT DISTINCT queue_handle FROM kernel_dispatch")
    check(fname == "commands in flight: queue 1 0x%x" % q and ft["counter"] == {3: 2},
          "in-flight track %r %r" % (fname, ft))
    exp = expected_in_flight(db)
    got = pf["counters"][fu]
    check(list(exp.values()) == [got], "commands in flight %r, the database's %r" % (got, exp))
    check(got[-1][1] == 0 and max(v for _, v in got) >= 1 and got[0][1] == 1,
          "commands in flight: %r" % got)
    # The JSON timeline: the same counters, as "C" events of the process.
    doc, counts = traceck.check_json(os.path.join(d, "o.json"))
    cev = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "C":
            cev.setdefault(e["name"], []).append((round(e["ts"] * 1000), e["args"]["value"]))
    check(sorted(cev) == sorted(tracks), "JSON counters %r" % sorted(cev))
    for name, (u, _) in tracks.items():
        check(cev[name] == pf["counters"][u], "JSON counter %r: %r != %r"
              % (name, cev[name], pf["counters"][u]))
    return 0


CASES = {"otf2": case_otf2, "pftrace_clock": case_pftrace_clock}


if __name__ == "__main__":
    sys.exit(upti_test.run_case(CASES, sys.argv[2], "upti-export"))
