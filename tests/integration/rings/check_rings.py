#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shared rings: nothing a program committed is lost, whatever ends it.

    check_rings.py BUILD_DIR CASE

ring_prog (tests/integration/rings/ring_prog.c) traces its uptx_mark calls
into a shared buffer and counts each call that returned in a counter file;
upti-ring collects the rings into a spool and converts it into databases.
Every check is exact: per thread, the messages in the database are
"<thread>:0" .. "<thread>:<m-1>" once each, where m is the counter read after
the program ended, or m + 1 (a record committed, the program killed before
its counter store); with a full ring, records + records_dropped == calls.

Cases: kill (SIGKILL at random moments, 20 times), exit (_exit), segv
(SIGSEGV, default action), segv_caught (a handler swallows one; the trace
goes on), return, collector_kill (the collector SIGKILLed three times while
the program runs, twice of them between a spool append and the ring's tail
store, then started again: it resumes), full_discard (no collector
during the run, DISCARD: the records that fit, then exactly counted drops),
full_lossless (a 4 KiB ring with a collector: no drops; without one: drops,
counted, and the program is not held), wait_split (a wait for room counted
apart from the time the producer then waited for a CPU), fork (the child's records in its own
database, none of the parent's), threads_slots (4 threads alive together, 2 rings: 2 threads' records
kept, the other 2's all counted as drops),
cli (usage and error messages of upti-ring), api (what
upti_create_shared_buffer and upti_get_shared_buffer_path return, errors
included; a destroyed buffer's file is marked closed), corrupt (a record
with an impossible length is counted as malformed, never read past; a spool
cut inside a chunk is read up to it and cut there on resume).
"""
import glob
import shutil
import os
import random
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common",
                                "python"))
import upti_test  # noqa: E402

BUILD = sys.argv[1]
CASE = sys.argv[2]
PROG = os.path.join(BUILD, "bin", "ring_prog")
RING = os.path.join(BUILD, "bin", "upti-ring")
SCALE = int(os.environ.get("UPTI_TEST_SCALE", "1"))
# A collector on a loaded machine may pause; tests that expect no drops let
# a LOSSLESS producer wait for it long enough (the default is 50 ms).
PATIENT = {"UPTI_RING_FULL_WAIT_MS": "20000"}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def env(extra=None):
    e = dict(os.environ)
    if "UPTI_SANITIZER_PRELOAD" in e and "LD_PRELOAD" not in e:
        pass  # ring_prog and upti-ring are instrumented executables: nothing to preload
    e.update(extra or {})
    return e


def counters(path, n):
    with open(path, "rb") as f:
        data = f.read()
    return [int.from_bytes(data[8 * i:8 * i + 8], "little") for i in range(n)]


def start_prog(work, mode, n, threads=1, size=1 << 20, policy="lossless", slots=None, extra=None):
    args = [PROG, mode, work, os.path.join(work, "counter"), str(n), str(threads), str(size), policy]
    if slots is not None:
        args.append(str(slots))
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env(extra))


def start_collector(work, wait_pid, spool="spool", extra=None):
    return subprocess.Popen([RING, "collect", os.path.join(work, spool), "--dir", work,
                             "--wait-pid", str(wait_pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(extra))


def finish(p, what, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail("%s did not end within %d s" % (what, timeout))
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def convert(work, spool="spool"):
    p = subprocess.run([RING, "convert", os.path.join(work, spool), os.path.join(work, "out")],
                       capture_output=True, text=True, env=env())
    if p.returncode != 0:
        fail("convert exited %d: %s" % (p.returncode, p.stderr.strip()))
    return p.stdout.split()


def db_marks(path):
    con = sqlite3.connect(path)
    rows = con.execute("SELECT tid, message FROM markers").fetchall()
    meta = dict(con.execute("SELECT key, value FROM metadata").fetchall())
    pid = con.execute("SELECT pid, ppid FROM info_process").fetchone()
    con.close()
    return rows, meta, pid


def check_thread(label, msgs, prefix, counted, may_have_one_more, total=None):
    """msgs: the messages of prefix; exactly 0..m-1, m == counted (or counted + 1)."""
    idx = sorted(int(m.split(":", 1)[1]) for m in msgs)
    if len(idx) != len(set(idx)):
        fail("%s: %s: %d duplicated records" % (label, prefix, len(idx) - len(set(idx))))
    m = len(idx)
    ok = m == counted or (may_have_one_more and m == counted + 1)
    if total is not None:
        ok = ok and m <= total
    if not ok:
        fail("%s: %s: %d records, the program completed %d calls" % (label, prefix, m, counted))
    if idx != list(range(m)):
        missing = sorted(set(range(m)) - set(idx))[:5]
        fail("%s: %s: not the calls 0..%d (missing e.g. %s)" % (label, prefix, m - 1, missing))


def by_prefix(rows):
    out = {}
    for _tid, msg in rows:
        if msg is None or ":" not in msg:
            fail("unexpected marker message %r" % (msg,))
            continue
        out.setdefault(msg.split(":", 1)[0], []).append(msg)
    return out


def run_traced(work, mode, n, threads, label, kill_after=None, extra=None, expect_rc=0):
    """The program with a collector beside it; returns (databases, counters)."""
    prog = start_prog(work, mode, n, threads, extra=dict(PATIENT, **(extra or {})))
    coll = start_collector(work, prog.pid)
    if kill_after is not None:
        counter = os.path.join(work, "counter")
        deadline = time.time() + 30
        while time.time() < deadline:  # the program has run: its first call returned
            if os.path.exists(counter) and os.path.getsize(counter) >= 8 and \
                    counters(counter, 1)[0] > 0:
                break
            time.sleep(0.001)
        time.sleep(kill_after)
        prog.send_signal(signal.SIGKILL)
        expect_rc = -signal.SIGKILL
    rc, out, err = finish(prog, "%s: ring_prog" % label)
    if rc != expect_rc:
        fail("%s: ring_prog exited %s, expected %s: %s" % (label, rc, expect_rc, err.strip()))
    if mode == "return":
        # A shared buffer starts no thread in the program and installs no handler.
        lines = out.splitlines()
        before = [x for x in lines if x.startswith("before: ")]
        after = [x for x in lines if x.startswith("after: ")]
        if len(before) != 1 or len(after) != 1 or before[0][8:] != after[0][7:] or \
                not after[0].startswith("after: upti_threads=0 "):
            fail("%s: the program's threads or signal handlers changed: %r" % (label, out))
    crc, _cout, cerr = finish(coll, "%s: the collector" % label)
    if crc != 0 or cerr:
        fail("%s: the collector exited %d: %s" % (label, crc, cerr.strip()))
    leftovers = glob.glob(os.path.join(work, "*.upti-ring"))
    if leftovers:
        fail("%s: the collector left %s" % (label, leftovers))
    return convert(work), counters(os.path.join(work, "counter"), threads)


def check_program(label, dbs, counts, threads, killed, drops=0):
    if len(dbs) != 1:
        fail("%s: %d databases, expected 1" % (label, len(dbs)))
        return
    rows, meta, _pid = db_marks(dbs[0])
    groups = by_prefix(rows)
    for t in range(threads):
        check_thread(label, groups.get(str(t), []), str(t), counts[t], killed)
    if int(meta.get("records_dropped", -1)) != drops:
        fail("%s: records_dropped %s, expected %d" % (label, meta.get("records_dropped"), drops))
    if meta.get("records_malformed") != "0":
        fail("%s: records_malformed %s" % (label, meta.get("records_malformed")))


def case_kill(root):
    rng = random.Random(os.getpid())
    for i in range(max(20 // SCALE, 3)):  # 20; fewer under the sanitizers' UPTI_TEST_SCALE
        work = tempfile.mkdtemp(dir=root)
        dbs, counts = run_traced(work, "kill", 10 ** 9, 2, "kill %d" % i,
                                 kill_after=rng.uniform(0, 0.03))
        check_program("kill %d" % i, dbs, counts, 2, True)


def case_ending(root, mode, rc):
    work = tempfile.mkdtemp(dir=root)
    n = 20000 // SCALE
    dbs, counts = run_traced(work, mode, n, 2 if mode != "segv_caught" else 1, mode, expect_rc=rc)
    threads = 2 if mode != "segv_caught" else 1
    if counts != [n] * threads:
        fail("%s: the program completed %s calls, expected %d each" % (mode, counts, n))
    check_program(mode, dbs, counts, threads, False)


def case_collector_kill(root):
    work = tempfile.mkdtemp(dir=root)
    # Enough records that the program still runs after the five collectors
    # below (each drains what it finds in a few ms).
    n = 600000 // SCALE
    prog = start_prog(work, "return", n, 2, size=1 << 14, extra=PATIENT)
    # Twice at the worst moment: a chunk appended, the ring's tail not yet moved.
    # First, while the program has most of its records still to make: a
    # collector that drains as fast as this one could otherwise find fewer than
    # 7 chunks left after the kills below.
    for chunks in (3, 7):
        coll = start_collector(work, prog.pid, extra={"UPTI_RING_TEST_CRASH_AFTER_CHUNKS": str(chunks)})
        coll.wait()
        if coll.returncode != -signal.SIGKILL:
            fail("collector_kill: the collector with the crash hook exited %d" % coll.returncode)
    # Then killed at random moments.
    rng = random.Random(os.getpid())
    kills = 0
    for _ in range(3):
        coll = start_collector(work, prog.pid)
        time.sleep(rng.uniform(0.005, 0.04))
        coll.send_signal(signal.SIGKILL)
        coll.wait()
        kills += coll.returncode == -signal.SIGKILL
    coll = start_collector(work, prog.pid)
    rc, _out, err = finish(prog, "collector_kill: ring_prog")
    if rc != 0:
        fail("collector_kill: ring_prog exited %d: %s" % (rc, err.strip()))
    crc, _o, cerr = finish(coll, "collector_kill: the last collector")
    if crc != 0 or cerr:
        fail("collector_kill: the last collector exited %d: %s" % (crc, cerr.strip()))
    if kills == 0:
        fail("collector_kill: no collector was killed")
    counts = counters(os.path.join(work, "counter"), 2)
    if counts != [n, n]:
        fail("collector_kill: the program completed %s calls" % counts)
    check_program("collector_kill", convert(work), counts, 2, False)


def recover(work):
    p = subprocess.run([RING, "recover", os.path.join(work, "out"), work], capture_output=True,
                       text=True, env=env())
    return p.returncode, p.stdout.split(), p.stderr


def case_full_discard(root):
    work = tempfile.mkdtemp(dir=root)
    n = 5000
    prog = start_prog(work, "return", n, 1, size=4096, policy="discard")
    rc, _o, err = finish(prog, "full_discard: ring_prog")
    if rc != 0:
        fail("full_discard: ring_prog exited %d: %s" % (rc, err.strip()))
    rrc, dbs, rerr = recover(work)
    if rrc != 0 or len(dbs) != 1:
        fail("full_discard: recover exited %d (%s): %s" % (rrc, dbs, rerr.strip()))
        return
    rows, meta, _pid = db_marks(dbs[0])
    dropped = int(meta.get("records_dropped", -1))
    kept = len(rows)
    # Nobody drained the ring: the first records fit, every later one was dropped.
    check_thread("full_discard", [m for _t, m in rows], "0", kept, False)
    if kept == 0 or dropped <= 0 or kept + dropped != n:
        fail("full_discard: %d records + %d dropped != %d calls" % (kept, dropped, n))
    want = "upti: process %d: %d records were dropped (ring full)" % (prog.pid, dropped)
    if want not in rerr:
        fail("full_discard: recover did not say %r: %r" % (want, rerr))


def case_full_lossless(root):
    # With a collector: a 4 KiB ring (about 80 records) and no drop.
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "return", 50000 // SCALE, 1, size=4096, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, _o, err = finish(prog, "full_lossless: ring_prog")
    crc, _co, cerr = finish(coll, "full_lossless: the collector")
    if rc != 0 or crc != 0 or cerr:
        fail("full_lossless: exit %d / collector %d: %s %s" % (rc, crc, err, cerr))
    counts = counters(os.path.join(work, "counter"), 1)
    check_program("full_lossless", convert(work), counts, 1, False)
    # Without one: after one bounded wait, the records are dropped and counted.
    work = tempfile.mkdtemp(dir=root)
    n = 2000
    prog = start_prog(work, "return", n, 1, size=4096, extra={"UPTI_RING_FULL_WAIT_MS": "20"})
    rc, _o, err = finish(prog, "full_lossless (no collector): ring_prog", timeout=30)
    if rc != 0:
        fail("full_lossless: without a collector ring_prog exited %d: %s" % (rc, err))
    rrc, dbs, rerr = recover(work)
    if rrc != 0 or len(dbs) != 1:
        fail("full_lossless: recover exited %d: %s" % (rrc, rerr))
        return
    rows, meta, _pid = db_marks(dbs[0])
    dropped = int(meta.get("records_dropped", -1))
    check_thread("full_lossless", [m for _t, m in rows], "0", len(rows), False)
    if len(rows) == 0 or dropped <= 0 or len(rows) + dropped != n:
        fail("full_lossless: without a collector %d records + %d dropped != %d" %
             (len(rows), dropped, n))
    # It waited once, for at least UPTI_RING_FULL_WAIT_MS, then dropped without waiting.
    waits, wait_ns = int(meta.get("ring_waits", -1)), int(meta.get("ring_wait_ns", -1))
    if waits != 1 or wait_ns < 20 * 1000 * 1000:
        fail("full_lossless: without a collector ring_waits %d (expected 1), ring_wait_ns %d "
             "(expected >= 20 ms)" % (waits, wait_ns))
    # No collector made room: all of the wait was for room.
    if int(meta.get("ring_wait_room_ns", -1)) != wait_ns:
        fail("full_lossless: without a collector ring_wait_room_ns %s, ring_wait_ns %d (expected "
             "equal)" % (meta.get("ring_wait_room_ns"), wait_ns))


# Offsets in a ring file of slot 0's fields (upti/ring.h: the header's page, then the slots).
SLOT0 = 4096
SLOT_STARVING, SLOT_TAIL = SLOT0 + 137, SLOT0 + 256
SLOT_OWNER, SLOT_ROOM_AT = SLOT0 + 320, SLOT0 + 360


def ring_slot0(work):
    """(starving, tail, owner, room_at) of slot 0 of the one ring file in work, or None
    before it exists."""
    rings = glob.glob(os.path.join(work, "*.upti-ring"))
    if len(rings) != 1:
        return None
    with open(rings[0], "rb") as f:
        data = f.read(SLOT_ROOM_AT + 8)
    if len(data) < SLOT_ROOM_AT + 8:
        return None
    return (data[SLOT_STARVING], struct.unpack_from("<Q", data, SLOT_TAIL)[0],
            struct.unpack_from("<Q", data, SLOT_OWNER)[0],
            struct.unpack_from("<Q", data, SLOT_ROOM_AT)[0])


def waits_of(work, spool_bytes, uid, waits, wait_ns, after_ns):
    """ring_waits, ring_wait_ns and ring_wait_room_ns of the spool with a WAITS chunk for
    slot 0 of ring uid appended (spool.h: pos_begin, pos_end and dropped carry them)."""
    chunk = struct.pack("<IIQQIIQQQQ", 0x4b4e4843, 4, 0, uid, 0, 0, waits, wait_ns, after_ns, 0)
    path = os.path.join(work, "waits.spool")
    with open(path, "wb") as f:
        f.write(bytes(spool_bytes) + chunk)
    p = subprocess.run([RING, "convert", path, os.path.join(work, "waits-%d" % after_ns)],
                       capture_output=True, text=True, env=env())
    if p.returncode != 0 or len(p.stdout.split()) != 1:
        fail("wait_split: convert exited %d, %r" % (p.returncode, p.stderr))
        return None
    meta = db_marks(p.stdout.strip())[1]
    return tuple(int(meta.get(k, -1)) for k in ("ring_waits", "ring_wait_ns", "ring_wait_room_ns"))


def case_wait_split(root):
    """A producer's wait for room is told apart from the time it then waited to run
    (upti/ring.h, "Full ring"): ring_wait_room_ns counts up to the collector's room, the
    rest of ring_wait_ns is after it. The producer waits in a full 4 KiB ring with no
    collector for 0.2 s or more; then it is stopped (SIGSTOP), a collector makes room
    (room_at, within that window) and wakes it, and it stays stopped 0.3 s more:
    room >= 0.2 s, wait - room >= 0.3 s. Then the converter's reading of WAITS chunks:
    a part after the room of 0 (a ring or spool older than the count) is all room; one
    over the wait, none."""
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "return", 20000 // SCALE, 1, size=4096, extra=PATIENT)
    waiting = upti_test.wait_for(
        lambda: (lambda s: s if s is not None and s[0] == 1 else None)(ring_slot0(work)),
        "wait_split: the producer waiting for room", fail, 20)
    coll = None
    try:
        if waiting is None:
            return
        if waiting[2] != prog.pid:
            fail("wait_split: slot 0 is tid %d's, not the program's %d" % (waiting[2], prog.pid))
        time.sleep(0.2)
        os.kill(prog.pid, signal.SIGSTOP)
        stopped = time.monotonic_ns()  # (CLOCK_MONOTONIC, room_at's clock)
        coll = start_collector(work, prog.pid)
        made = upti_test.wait_for(
            lambda: (lambda s: s if s is not None and s[1] != waiting[1] else None)(
                ring_slot0(work)),
            "wait_split: the collector's room", fail, 20)
        if made is not None:
            time.sleep(0.3)
            if not stopped < made[3] < time.monotonic_ns():
                fail("wait_split: room_at %d outside the stop, from %d" % (made[3], stopped))
    finally:
        os.kill(prog.pid, signal.SIGCONT)
    rc, _o, err = finish(prog, "wait_split: ring_prog")
    crc, _co, cerr = finish(coll, "wait_split: the collector")
    if rc != 0 or crc != 0 or cerr:
        fail("wait_split: exit %d / collector %d: %s %s" % (rc, crc, err, cerr))
    dbs = convert(work)
    if len(dbs) != 1:
        fail("wait_split: %d databases" % len(dbs))
        return
    _rows, meta, _pid = db_marks(dbs[0])
    waits = int(meta.get("ring_waits", -1))
    wait_ns, room_ns = int(meta.get("ring_wait_ns", -1)), int(meta.get("ring_wait_room_ns", -1))
    if waits < 1 or room_ns < 200 * 1000 * 1000 or wait_ns - room_ns < 300 * 1000 * 1000:
        fail("wait_split: %d waits, %d ns in all, %d ns of them until the room was made "
             "(expected >= 200 ms, and >= 300 ms after it)" % (waits, wait_ns, room_ns))
    with open(os.path.join(work, "spool"), "rb") as f:
        data = f.read()
    uid = [struct.unpack_from("<Q", data, off + 16)[0] for off, t, _n in spool_chunks(data)
           if t == 1]
    # (The appended chunk's count is above the ring's own, and so replaces it.)
    for after, room in ((0, 9000), (4000, 5000), (12000, 0)):
        got = waits_of(work, data, uid[0], waits + 1, 9000, after) if uid else None
        if got != (waits + 1, 9000, room):
            fail("wait_split: a WAITS chunk of 9000 ns, %d after the room: %r, expected room %d"
                 % (after, got, room))


def run_fork(work, n, label):
    """ring_prog fork with N marks and a collector beside it: (prog, its stdout),
    or None after saying how it failed."""
    prog = start_prog(work, "fork", n, 1, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, out, err = finish(prog, "%s: ring_prog" % label)
    crc, _co, cerr = finish(coll, "%s: the collector" % label)
    if rc != 0 or crc != 0 or cerr:
        fail("%s: exit %d / collector %d: %s %s" % (label, rc, crc, err, cerr))
        return None
    return prog, out


def case_fork(root):
    work = tempfile.mkdtemp(dir=root)
    n = 2000
    ran = run_fork(work, n, "fork")
    if ran is None:
        return
    prog, out = ran
    paths = out.split()
    if len(paths) != 2 or paths[0] == paths[1]:
        fail("fork: the parent and the child should name two ring files: %s" % paths)
    dbs = convert(work)
    if len(dbs) != 2:  # not 3: the child that exec'd /bin/true recorded nothing, has no file
        fail("fork: %d databases, expected 2 (parent, child)" % len(dbs))
        return
    by_pid = {}
    for db in dbs:
        rows, meta, pid = db_marks(db)
        by_pid[pid[0]] = (pid[1], by_prefix(rows), meta)
    if prog.pid not in by_pid:
        fail("fork: no database of the parent %d: %s" % (prog.pid, list(by_pid)))
        return
    child = [p for p in by_pid if p != prog.pid][0]
    ppid, groups, _meta = by_pid[child]
    if ppid != prog.pid:
        fail("fork: the child's ppid %s, expected %d" % (ppid, prog.pid))
    if sorted(groups) != ["c"]:
        fail("fork: the child's database holds %s, expected only c" % sorted(groups))
    check_thread("fork child", groups.get("c", []), "c", n, False)
    _ppid, groups, _meta = by_pid[prog.pid]
    if sorted(groups) != ["0", "p"]:
        fail("fork: the parent's database holds %s, expected 0 and p" % sorted(groups))
    check_thread("fork parent", groups.get("0", []), "0", n // 2, False)
    check_thread("fork parent", groups.get("p", []), "p", n, False)


def db_dump(path):
    """Every row of every table, in order: what a reader of the database sees."""
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                        " ORDER BY name")]
    dump = {t: con.execute("SELECT * FROM \"%s\" ORDER BY rowid" % t).fetchall()
            for t in tables if t != "metadata"}
    # (The clock snapshots are the converter's, taken as it writes.)
    dump["metadata"] = sorted(con.execute("SELECT key, value FROM metadata WHERE key NOT LIKE"
                                          " 'clock_snapshot%'").fetchall())
    dump["page_size"] = con.execute("PRAGMA page_size").fetchall()
    dump["integrity_check"] = con.execute("PRAGMA integrity_check").fetchall()
    con.close()
    return dump


def case_follow(root):
    """A spool converted while it is written (upti run's follow thread: `upti-ring
    convert --follow BYTES` reads it BYTES more at a time, a chunk that passes the
    limit waiting for the next) makes the same databases, row for row and page
    size, as one converted whole: a parent and the child it forked, each with its
    own ring file. While the spool is under 4 MiB only the databases are made
    (4 KiB pages); past it they are made again with 64 KiB pages, as for the
    whole spool, and the records converted: a small spool (2,000 marks) and, but
    under the sanitizers, one past 4 MiB. The small spool converted as the
    follow thread converts it once the producers closed their rings (`convert
    --follow-closed`: the records too, from the first step on): the same again."""
    for n in (2000, 80000 // SCALE):
        follow_spool(root, n)
    p = subprocess.run([RING, "convert", "--follow", "0", "nothing", "z"],
                       capture_output=True, text=True, env=env())
    if p.returncode != 2 or not p.stderr.startswith("usage: "):
        fail("follow 0: exit %d, %r" % (p.returncode, p.stderr))


def follow_spool(root, n):
    work = tempfile.mkdtemp(dir=root)
    if run_fork(work, n, "follow") is None:
        return
    spool = os.path.join(work, "spool")
    whole = {}
    for db in convert(work):
        whole[os.path.basename(db)] = db_dump(db)
        os.unlink(db)
    if len(whole) != 2:
        fail("follow: %d databases converted whole, expected 2" % len(whole))
    size = os.path.getsize(spool)
    want_page = 4096 if size < 4 << 20 else 65536
    for name, tables in whole.items():
        if tables["page_size"] != [(want_page,)] or tables["integrity_check"] != [("ok",)]:
            fail("follow: %s of a %d-byte spool: page size %r, integrity %r" % (
                name, size, tables["page_size"], tables["integrity_check"][:3]))
    # Steps: less than a chunk header, odd (never on a chunk's edge), a page, a third.
    steps = (40, 4093, 65536, size // 3 + 1) if size < 4 << 20 else (4093, 65536, size // 3 + 1)
    ways = ("--follow", "--follow-closed") if size < 4 << 20 else ("--follow",)
    for way, step in ((w, s) for w in ways for s in steps):
        name_of = "f%d%s" % (step, "c" if way == "--follow-closed" else "")
        out = os.path.join(work, name_of)
        p = subprocess.run([RING, "convert", way, str(step), spool, out],
                           capture_output=True, text=True, env=env())
        if p.returncode != 0 or p.stderr:
            fail("%s %d: exit %d: %s" % (way, step, p.returncode, p.stderr.strip()))
            continue
        dbs = p.stdout.split()
        got = {os.path.basename(db).replace(name_of + "-", "out-"): db_dump(db) for db in dbs}
        if sorted(got) != sorted(whole):
            fail("%s %d: databases %s, expected %s" % (way, step, sorted(got), sorted(whole)))
            continue
        for name, tables in whole.items():
            for t, rows in tables.items():
                if got[name].get(t) != rows:
                    fail("%s %d of a %d-byte spool: %s: %s differs (%d rows, whole %d)" % (
                        way, step, size, name, t, len(got[name].get(t) or []), len(rows)))
        leftovers = [f for f in os.listdir(work) if f.startswith(name_of + "-") and
                     not f.endswith(".db")]
        if leftovers:
            fail("%s %d: left %s" % (way, step, leftovers))


def case_threads_slots(root):
    """4 threads alive together, 2 rings: the first 2 to record take them and
    keep them; the other 2 find none, and all their records are counted drops."""
    work = tempfile.mkdtemp(dir=root)
    n, threads = 5000, 4
    prog = start_prog(work, "return", n, threads, slots=2, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, _o, err = finish(prog, "threads_slots: ring_prog")
    crc, _co, cerr = finish(coll, "threads_slots: the collector")
    if rc != 0 or crc != 0 or cerr:
        fail("threads_slots: exit %d / collector %d: %s %s" % (rc, crc, err, cerr))
    p = subprocess.run([RING, "convert", os.path.join(work, "spool"), os.path.join(work, "out")],
                       capture_output=True, text=True, env=env())
    dbs = p.stdout.split()
    # Labelled as what they are (not "ring full"), and counted apart in metadata.
    said = "upti: process %d: %d records were dropped (a thread found no free slot: " \
           "UPTI_TRACE_RING_SLOTS)\n" % (prog.pid, 2 * n)
    if p.returncode != 0 or p.stderr != said:
        fail("threads_slots: convert exited %d, said %r, expected %r" % (p.returncode, p.stderr, said))
    rows, meta, _pid = db_marks(dbs[0])
    groups = by_prefix(rows)
    dropped = int(meta.get("records_dropped", -1))
    if meta.get("records_dropped_no_slot") != str(2 * n):
        fail("threads_slots: metadata records_dropped_no_slot %r, expected %d"
             % (meta.get("records_dropped_no_slot"), 2 * n))
    if len(groups) != 2 or dropped != 2 * n:
        fail("threads_slots: records of threads %s, %d dropped; expected 2 threads, %d dropped" %
             (sorted(groups), dropped, 2 * n))
    for t, msgs in groups.items():
        check_thread("threads_slots", msgs, t, n, False)
    tids = {}
    for tid, msg in rows:
        tids.setdefault(msg.split(":", 1)[0], set()).add(tid)
    if any(len(v) != 1 for v in tids.values()) or len({min(v) for v in tids.values()}) != len(tids):
        fail("threads_slots: each thread's records should carry its own tid: %s" % tids)


def case_cli(root):
    p = subprocess.run([RING], capture_output=True, text=True, env=env())
    if p.returncode != 2 or not p.stderr.startswith("usage: upti-ring collect SPOOL"):
        fail("cli: no arguments: exit %d, %r" % (p.returncode, p.stderr))
    work = tempfile.mkdtemp(dir=root)
    junk = os.path.join(work, "junk")
    with open(junk, "w") as f:
        f.write("not a spool\n")
    p = subprocess.run([RING, "convert", junk, os.path.join(work, "x")], capture_output=True,
                       text=True, env=env())
    if p.returncode != 1 or p.stderr != "upti: %s is not a spool\n" % junk:
        fail("cli: convert of a non-spool: exit %d, %r" % (p.returncode, p.stderr))
    p = subprocess.run([RING, "collect", os.path.join(work, "s"), junk], capture_output=True,
                       text=True, env=env())
    if p.returncode != 0 or p.stderr != "upti: %s is not a ring file: skipped\n" % junk:
        fail("cli: collect of a non-ring file: exit %d, %r" % (p.returncode, p.stderr))
    # recover of one ring file a program left behind (no collector ran).
    prog = start_prog(work, "exit", 100, 1)
    rc, out, err = finish(prog, "cli: ring_prog")
    ring = out.strip()
    p = subprocess.run([RING, "recover", os.path.join(work, "r"), ring], capture_output=True,
                       text=True, env=env())
    want = os.path.join(work, "r-%d.db" % prog.pid)
    if p.returncode != 0 or p.stdout != want + "\n" or p.stderr:
        fail("cli: recover: exit %d, %r, %r" % (p.returncode, p.stdout, p.stderr))
    elif len(db_marks(want)[0]) != 100:
        fail("cli: recover: %d records, expected 100" % len(db_marks(want)[0]))
    if os.path.exists(ring) or os.path.exists(os.path.join(work, "r.spool")):
        fail("cli: recover left the ring file or its spool")


API_EXPECTED = """zero_threads=UPTI_STATUS_ERROR_INVALID_ARGUMENT
no_policy=UPTI_STATUS_ERROR_INVALID_ARGUMENT
null_id=UPTI_STATUS_ERROR_INVALID_ARGUMENT
bad_context=UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND
missing_dir=UPTI_STATUS_ERROR_OUT_OF_RESOURCES
named_file=UPTI_STATUS_SUCCESS
path_short=UPTI_STATUS_ERROR_INVALID_ARGUMENT
path_exact=UPTI_STATUS_SUCCESS
path_same=1
path_of_plain_buffer=UPTI_STATUS_ERROR_BUFFER_NOT_FOUND
flush_shared=UPTI_STATUS_SUCCESS
destroy_shared=UPTI_STATUS_SUCCESS
after_initialize=UPTI_STATUS_ERROR_CONFIGURATION_LOCKED
"""


def case_doorbell(root):
    """A producer rings its ring's doorbell (upti/ring.h, "Doorbell") with the commit that
    leaves the slot's mark or more unread, not before; the sleeper on it wakes; set again
    above the mark, a commit within the next 4 KiB rings (a marker checks once per 4 KiB
    while it stays above: marker_slow; its records here are 56 bytes). The tool's end
    (its buffer destroyed: the ring CLOSED) rings it too, below the mark: a collector
    asleep drains the ring while the process exits, not after."""
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "doorbell", 0, 1, size=1 << 20)
    rc, out, err = finish(prog, "doorbell: ring_prog")
    lines = out.split("\n")
    closed = [line for line in lines if line.startswith("closed ")]
    if closed != ["closed status=0 woken=1 doorbell=0 state=2"]:
        fail("doorbell: at the tool's end: %r" % closed)
    lines = [line for line in lines if not line.startswith("closed ")]
    got = dict(kv.split("=") for line in lines[1:] for kv in line.split()[1:] if "=" in kv)
    if rc != 0 or len(got) != 6:
        fail("doorbell: exit %d, %r, %r" % (rc, out, err))
        return
    before, head, mark = int(got["before"]), int(got["head"]), int(got["mark"])
    if mark != 256 << 10 or not before < mark <= head:
        fail("doorbell: rang by the commit from %d to %d, mark %d" % (before, head, mark))
    if got["woken"] != "1" or got["doorbell"] != "0":
        fail("doorbell: the sleeper: %r" % lines)
    if not 1 <= int(got["after"]) <= 4096 // 56 + 1:
        fail("doorbell: set again above the mark, rang after %s marks" % got["after"])


def case_closed(root):
    """A producer that closes its ring (its buffer destroyed: a tool's end, before the
    program's exit) while its process goes on: the collector drains the ring and
    says every ring is closed (ur_collect_opts.closed, what lets `upti run` convert
    while the program exits) before the process ends; the spool then holds every
    mark. Said once; the process's end adds nothing to convert."""
    work = tempfile.mkdtemp(dir=root)
    n = 3000
    prog = subprocess.Popen([PROG, "closed", work, os.path.join(work, "counter"), str(n)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env())
    coll = subprocess.Popen([RING, "collect", os.path.join(work, "spool"), "--dir", work,
                             "--wait-pid", str(prog.pid), "--say-closed"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    # (the collector polls: within a pass or two; the producer waits for its input's end)
    said = coll.stdout.readline().decode() if select.select([coll.stdout], [], [], 60)[0] else ""
    alive = prog.poll() is None
    snapshot = os.path.join(work, "at-closed")
    shutil.copyfile(os.path.join(work, "spool"), snapshot)
    rc, out, err = finish(prog, "closed: ring_prog")  # (its input ends)
    crc, cout, cerr = finish(coll, "closed: collector")
    if not said.startswith("closed spool=") or not alive:
        fail("closed: said %r, the producer %s" % (said, "alive" if alive else "had ended"))
        return
    if rc != 0 or "closed" not in out.split() or crc != 0 or cout != "" or cerr != "":
        fail("closed: ring_prog %d %r %r, collector %d %r %r" % (rc, out, err, crc, cout, cerr))
    if int(said.split("=")[1]) != os.path.getsize(snapshot):
        fail("closed: said %s, the spool was %d bytes" % (said.strip(), os.path.getsize(snapshot)))
    p = subprocess.run([RING, "convert", snapshot, os.path.join(work, "early")],
                       capture_output=True, text=True, env=env())
    dbs = p.stdout.split()
    marks = len(db_marks(dbs[0])[0]) if p.returncode == 0 and len(dbs) == 1 else None
    if marks != n:
        fail("closed: the spool when it was said holds %r marks, expected %d (%s)" % (
            marks, n, p.stderr.strip()))


def case_late_header(root):
    """A ring file that the collector finds before its producer has written its header
    (created empty, then filled: a producer writes its header through its mapping, which
    changes nothing in the folder) is read again at the next passes, and taken once whole, while
    the program it waits for still runs: not left to that program's end. Here the file is
    a closed ring of ring_prog's, written into the folder with its magic last."""
    made = tempfile.mkdtemp(dir=root)
    n = 2000
    prog = subprocess.Popen([PROG, "closed", made, os.path.join(made, "counter"), str(n)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env())
    said = None
    while said not in ("closed\n", ""):  # (its ring's path, then "closed")
        said = prog.stdout.readline().decode()
    rings = glob.glob(os.path.join(made, "*.upti-ring"))
    if said != "closed\n" or len(rings) != 1:
        fail("late_header: ring_prog said %r, rings %r" % (said, rings))
        finish(prog, "late_header: ring_prog")
        return
    with open(rings[0], "rb") as f:
        data = f.read()
    work = tempfile.mkdtemp(dir=root)
    late = os.path.join(work, "late.upti-ring")
    open(late, "wb").close()
    sleeper = subprocess.Popen(["sleep", "60"])
    coll = subprocess.Popen([RING, "collect", os.path.join(work, "spool"), "--dir", work,
                             "--wait-pid", str(sleeper.pid), "--say-closed"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    time.sleep(0.3)  # (the collector has read the folder: an empty file, not yet a ring)
    fd = os.open(late, os.O_WRONLY)
    os.pwrite(fd, bytes(8) + data[8:], 0)
    time.sleep(0.1)
    os.pwrite(fd, data[:8], 0)  # the magic: now a ring
    os.close(fd)
    took = coll.stdout.readline().decode() if select.select([coll.stdout], [], [], 20)[0] else ""
    running = sleeper.poll() is None
    sleeper.kill()
    sleeper.wait()
    finish(prog, "late_header: ring_prog")  # (its input ends)
    crc, cout, cerr = finish(coll, "late_header: collector")
    if not took.startswith("closed spool=") or not running:
        fail("late_header: the collector said %r while the program it waits for %s" % (
            took, "ran" if running else "had ended"))
    if crc != 0 or cerr != "":
        fail("late_header: collector %d %r" % (crc, cerr))
    dbs = convert(work)
    marks = len(db_marks(dbs[0])[0]) if len(dbs) == 1 else None
    if marks != n:
        fail("late_header: %r marks in %r, expected %d" % (marks, dbs, n))


def case_storage(root):
    """A slot's data gets storage 128 KiB at a time (docs/shared-rings.md, "Storage before
    any write"): ring_prog makes one mark, renames its ring file away (no more storage can
    be had: libupti asks by the path), makes 19,999 more (about 1.1 MB into a 1 MiB ring,
    no collector) and renames it back. The file holds the header's storage and 128 KiB,
    not the slot's 1 MiB; nothing was written past it (no SIGBUS, the file is whole); every
    mark is in the database or counted as dropped, with DISCARD (dropped at once) and with
    LOSSLESS (after a wait of 20 ms for a collector)."""
    n = 20000
    for policy in ("discard", "lossless"):
        work = tempfile.mkdtemp(prefix="upti-storage-", dir="/dev/shm")
        try:
            prog = start_prog(work, "storage", n, 1, size=1 << 20, policy=policy,
                              extra={"UPTI_RING_FULL_WAIT_MS": "20"})
            rc, out, err = finish(prog, "storage: ring_prog")
            ring = out.strip()
            if rc != 0 or not os.path.exists(ring):
                fail("storage %s: exit %d, %r, %r" % (policy, rc, out, err))
                continue
            with open(ring, "rb") as f:
                f.seek(4096 + 328)  # slot 0's data_offset: where the header's storage ends
                data_start = int.from_bytes(f.read(8), "little")
            allocated = os.stat(ring).st_blocks * 512
            if allocated != data_start + (128 << 10):
                fail("storage %s: %d bytes have storage, expected %d + 128 KiB"
                     % (policy, allocated, data_start))
            p = subprocess.run([RING, "recover", os.path.join(work, "r"), ring],
                               capture_output=True, text=True, env=env())
            dbs = p.stdout.split()
            if p.returncode != 0 or len(dbs) != 1:
                fail("storage %s: recover exit %d, %r, %r" % (policy, p.returncode, p.stdout,
                                                            p.stderr))
                continue
            rows, meta, _pid = db_marks(dbs[0])
            dropped = int(meta.get("records_dropped", -1))
            if len(rows) + dropped != n or dropped <= 0 or len(rows) < 1000:
                fail("storage %s: %d marks and %d dropped of %d" % (policy, len(rows), dropped, n))
            got = sorted(int(m.split(":")[1]) for _t, m in rows)
            if got != list(range(len(rows))):
                fail("storage %s: the marks kept are not the first %d" % (policy, len(rows)))
        finally:
            shutil.rmtree(work, ignore_errors=True)


def case_api(root):
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "api", 10, 1)
    rc, out, err = finish(prog, "api: ring_prog")
    if rc != 0 or out != API_EXPECTED:
        fail("api: exit %d, output:\n%s" % (rc, out))
    want = ("upti: cannot create the shared buffer /nonexistent-upti-dir/x.upti-ring: "
            "No such file or directory\n")
    if err != want:
        fail("api: stderr %r, expected %r" % (err, want))
    # The destroyed buffer's file: a valid header, state (offset 104) CLOSED (2).
    with open(os.path.join(work, "named.upti-ring"), "rb") as f:
        head = f.read(120)
    if head[:8] != b"UPTIRING" or int.from_bytes(head[104:108], "little") != 2:
        fail("api: named.upti-ring: magic %r, state %d" %
             (head[:8], int.from_bytes(head[104:108], "little")))


def spool_chunks(data):
    """(offset of the header, type, payload bytes) of each chunk (src/collector/collect/spool.h)."""
    off, out = 8, []
    while off + 64 <= len(data):
        magic, ctype, nbytes = struct.unpack_from("<IIQ", data, off)
        if magic != 0x4b4e4843:
            break
        out.append((off, ctype, nbytes))
        off += 64 + nbytes
    return out


def collected_spool(root, label):
    """ring_prog's 100 marks (mode exit) collected into a spool: (its folder, the program, the
    spool's bytes, to be rewritten)."""
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "exit", 100, 1)
    _rc, out, _err = finish(prog, "%s: ring_prog" % label)
    spool = os.path.join(work, "spool")
    subprocess.run([RING, "collect", spool, out.strip()], check=True, env=env())
    with open(spool, "rb") as f:
        return work, prog, bytearray(f.read())


def case_old_spool(root):
    """A spool written before the ring header grew (1,216 bytes, before the doorbell and
    slots_unused; 1,232 now): its PROCESS chunks hold the shorter header, and it converts as
    it did, every mark there."""
    work, prog, data = collected_spool(root, "old_spool")
    process = [c for c in spool_chunks(data) if c[1] == 1]
    if len(process) != 1 or process[0][2] != 1232:
        fail("old_spool: PROCESS chunks %r, expected one of 1,232 bytes" % process)
        return
    off = process[0][0]
    struct.pack_into("<Q", data, off + 8, 1216)  # its payload: the header up to command
    del data[off + 64 + 1216:off + 64 + 1232]
    old = os.path.join(work, "old.spool")
    with open(old, "wb") as f:
        f.write(data)
    p = subprocess.run([RING, "convert", old, os.path.join(work, "old")], capture_output=True,
                       text=True, env=env())
    if p.returncode != 0 or p.stderr or len(p.stdout.split()) != 1:
        fail("old_spool: convert exited %d, %r, %r" % (p.returncode, p.stdout, p.stderr))
        return
    rows, _meta, pid = db_marks(p.stdout.strip())
    if len(rows) != 100 or pid[0] != prog.pid:
        fail("old_spool: %d marks of pid %r, expected 100 of %d" % (len(rows), pid, prog.pid))


def case_unclaimed_slots(root):
    """The collector reads only the slots a producer may have claimed (the header's
    slots_unused, upti/ring.h): of a 256-slot ring that one thread wrote, the pages of the
    255 others' control blocks (24 of the table's 25) are not faulted in, and every record
    is collected. The same ring with slots_unused 0 (a producer made before the field) has
    every slot read: the collector's page faults tell the two apart."""
    # On tmpfs, where rings are made: a hole read through a shared mapping is a fault a
    # page (a disk file's read-ahead would map several at once).
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else root
    at = 1224  # offsetof(upti_ring_header_t, slots_unused)
    faults = {}
    for unused in (None, 0):
        work = tempfile.mkdtemp(dir=base)
        try:
            rc, out, err = finish(start_prog(work, "exit", 100, 1, slots=256),
                                  "unclaimed_slots: ring_prog")
            ring = out.strip()
            with open(ring, "r+b") as f:
                f.seek(at)
                made = struct.unpack("<I", f.read(4))[0]
                if unused is not None:
                    f.seek(at)
                    f.write(struct.pack("<I", unused))
            if rc != 0 or made != 255:
                fail("unclaimed_slots: ring_prog exit %d, slots_unused %d (expected 255)%s"
                     % (rc, made, err))
                return
            coll = subprocess.Popen([RING, "collect", os.path.join(work, "spool"), "--keep", ring],
                                    env=env())
            _pid, status, usage = os.wait4(coll.pid, 0)
            coll.returncode = os.waitstatus_to_exitcode(status)
            dbs = convert(work)
            rows = db_marks(dbs[0])[0] if len(dbs) == 1 else []
            if coll.returncode != 0 or len(rows) != 100:
                fail("unclaimed_slots: slots_unused %s: collect exit %d, %d marks (expected 100)"
                     % (made if unused is None else unused, coll.returncode, len(rows)))
            faults[unused] = usage.ru_minflt
        finally:
            shutil.rmtree(work, ignore_errors=True)
    # (21 to 22 fewer here: a page or two of the table come in with their neighbours)
    if len(faults) == 2 and faults[0] - faults[None] < 16:
        fail("unclaimed_slots: the collector faulted in %d pages with slots_unused 255, %d "
             "with 0: expected some 24 fewer (the unused slots' pages)"
             % (faults[None], faults[0]))


def case_corrupt(root):
    work, prog, data = collected_spool(root, "corrupt")
    chunks = [c for c in spool_chunks(data) if c[1] == 2]
    if len(chunks) != 1:
        fail("corrupt: %d DATA chunks, expected 1" % len(chunks))
        return
    # Records: THREAD, the agents, then the marks; the 11th mark gets an impossible length.
    pos, marks = chunks[0][0] + 64, 0
    while True:
        length, kind = struct.unpack_from("<II", data, pos)
        if kind == 0x100:  # UPTI_RING_KIND_COMPACT_MARKER
            if marks == 10:
                break
            marks += 1
        pos += length
    data[pos:pos + 4] = (0xfffffff8).to_bytes(4, "little")
    bad = os.path.join(work, "bad.spool")
    with open(bad, "wb") as f:
        f.write(data)
    p = subprocess.run([RING, "convert", bad, os.path.join(work, "bad")], capture_output=True,
                       text=True, env=env())
    want_err = "upti: process %d: 1 malformed records skipped\n" % prog.pid
    if p.returncode != 0 or p.stderr != want_err:
        fail("corrupt: convert exited %d, %r (expected %r)" % (p.returncode, p.stderr, want_err))
    rows, meta, _pid = db_marks(p.stdout.strip())
    check_thread("corrupt", [m for _t, m in rows], "0", 10, False)
    if meta.get("records_malformed") != "1":
        fail("corrupt: records_malformed %s" % meta.get("records_malformed"))
    # A spool cut inside its last chunk: convert reads the complete chunks; collect
    # (resuming) cuts the incomplete one off.
    cut = os.path.join(work, "cut.spool")
    with open(cut, "wb") as f:
        f.write(bytes(data[:chunks[0][0] + 100]))
    p = subprocess.run([RING, "convert", cut, os.path.join(work, "cut")], capture_output=True,
                       text=True, env=env())
    if p.returncode != 0 or len(db_marks(p.stdout.strip())[0]) != 0:
        fail("corrupt: convert of a cut spool exited %d: %r" % (p.returncode, p.stderr))
    subprocess.run([RING, "collect", cut], check=True, env=env())
    if os.path.getsize(cut) != chunks[0][0]:
        fail("corrupt: collect left %d bytes of the cut spool, expected %d" %
             (os.path.getsize(cut), chunks[0][0]))


def spool_records(path):
    """Per (ring uid, slot): the records of its DATA chunks in order, as (kind, body bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    slots = {}
    for off, ctype, nbytes in spool_chunks(data):
        if ctype != 2:
            continue
        _m, _t, _b, uid, slot = struct.unpack_from("<IIQQI", data, off)
        payload = data[off + 64:off + 64 + nbytes]
        pos = 0
        while pos + 8 <= len(payload):
            length, kind = struct.unpack_from("<II", payload, pos)
            if length < 8 or pos + length > len(payload):
                break
            if kind != 0:
                slots.setdefault((uid, slot), []).append((kind, payload[pos + 8:pos + length]))
            pos += length
    return slots


def cstrings(buf, lens):
    out, pos = [], 0
    for n in lens:
        out.append(buf[pos:pos + n - 1].decode(errors="replace"))
        pos += n
    return out


def decode_tool_arg(body):
    """A TOOL record of kind ARG: (thread, i) from its value "<t>:<i>", or None."""
    kind, size = struct.unpack_from("<II", body, 0)
    data = body[8:8 + size]
    if kind != 1 or size < 24:
        return None
    corr, position, tl, nl, vl = struct.unpack_from("<QIIII", data, 0)
    if 24 + tl + nl + vl != size:
        return None
    t, i = cstrings(data[24:], (tl, nl, vl))[2].split(":")
    if corr != (int(t) + 1) << 32 | int(i) or position != int(t):
        return None
    return int(t), int(i)


def per_thread_sequences(spool):
    """{thread: [("m" | "a", i), ...]} of the marks and ARG tool records, in ring order;
    and the number of AGENT records, and of AGENT records not right after THREAD/AGENT."""
    seqs, agents, misplaced = {}, 0, 0
    for records in spool_records(spool).values():
        prev = None
        for kind, body in records:
            if kind == 0x201:
                agents += 1
                misplaced += prev not in (0x200, 0x201)
            elif kind == 0x100:
                _op, has_msg = struct.unpack_from("<II", body, 0)
                msg = body[40:].split(b"\0")[0].decode() if has_msg else ""
                t, i = msg.split(":")
                seqs.setdefault(int(t), []).append(("m", int(i)))
            elif kind == 0x202:
                ti = decode_tool_arg(body)
                if ti is not None:
                    seqs.setdefault(ti[0], []).append(("a", ti[1]))
            prev = kind
    return seqs, agents, misplaced


def db_rows(path, sql):
    con = sqlite3.connect(path)
    rows = con.execute(sql).fetchall()
    con.close()
    return rows


def host_agents():
    """The agents libupti lists without a runtime: one CPU agent per NUMA node (or one)."""
    nodes = len(glob.glob("/sys/devices/system/node/node[0-9]*/cpulist"))
    return max(nodes, 1)


def check_tool_db(label, db, n, threads):
    meta = dict(db_rows(db, "SELECT key, value FROM metadata"))
    want = {"output_base": "/ring/prog", "source": "shared-ring", "tool_records_skipped": "2",
            "records_malformed": "2", "records_dropped": "0"}
    got = {k: meta.get(k) for k in want}
    if got != want:
        fail("%s: metadata %s, expected %s" % (label, got, want))
    args = db_rows(db, "SELECT correlation_id, position, type, name, value FROM args")
    if len(args) != n * threads:
        fail("%s: %d arg rows, expected %d" % (label, len(args), n * threads))
    want_args = sorted(((t + 1) << 32 | i, t, "int", "t%d" % t, "%d:%d" % (t, i))
                       for t in range(threads) for i in range(n))
    if sorted(args) != want_args:
        fail("%s: the arg rows are not the ones written (e.g. %s)" %
             (label, sorted(set(args) ^ set(want_args))[:3]))
    marks = db_rows(db, "SELECT message FROM markers")
    groups = by_prefix([(0, m[0]) for m in marks])
    for t in range(threads):
        check_thread(label, groups.get(str(t), []), str(t), n, False)
    agents = db_rows(db, "SELECT count(*) FROM info_agent")[0][0]
    if agents != host_agents():
        fail("%s: %d agent rows, expected %d" % (label, agents, host_agents()))


def case_tool(root):
    """Tool records from 2 threads, each after a mark: in the ring in that order, per
    thread; in the database as arg rows and metadata; the bad ones counted."""
    work = tempfile.mkdtemp(dir=root)
    n, threads = 5000 // SCALE, 2
    prog = start_prog(work, "tool", n, threads, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, _out, err = finish(prog, "tool: ring_prog")
    crc, _co, cerr = finish(coll, "tool: the collector")
    if rc != 0 or crc != 0 or err or cerr:
        fail("tool: exit %d / collector %d: %r %r" % (rc, crc, err[:500], cerr[:500]))
    seqs, agents, misplaced = per_thread_sequences(os.path.join(work, "spool"))
    for t in range(threads):
        want = [(k, i) for i in range(n) for k in ("m", "a")]
        got = seqs.get(t, [])
        if got != want:
            first = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            fail("tool: thread %d: %d records in the ring, expected %d, mark then tool record; "
                 "first difference at %d: %s" % (t, len(got), len(want), first, got[first:first + 3]))
    if agents != host_agents() or misplaced:
        fail("tool: %d AGENT records in the ring (%d not after THREAD), expected %d" %
             (agents, misplaced, host_agents()))
    dbs = convert(work)
    if len(dbs) != 1:
        fail("tool: %d databases" % len(dbs))
        return
    check_tool_db("tool", dbs[0], n, threads)


def case_tool_inproc(root):
    work = tempfile.mkdtemp(dir=root)
    n, threads = 5000 // SCALE, 2
    prog = start_prog(work, "tool_inproc", n, threads)
    rc, out, err = finish(prog, "tool_inproc: ring_prog")
    want = "(in-process)\n" + "".join(
        "inproc thread=%d marks=%d tools=%d order_errors=0\n" % (t, n, n) for t in range(threads)) + \
        "inproc metadata=3 other=2 misaligned=0 drops=0\n"
    if rc != 0 or out != want or err:
        fail("tool_inproc: exit %d, output %r, expected %r; stderr %r" % (rc, out, want, err[:500]))
    if glob.glob(os.path.join(work, "*.upti-ring")):
        fail("tool_inproc: an in-process buffer left a ring file")


TOOL_API_EXPECTED = """write_unknown_buffer=UPTI_STATUS_ERROR_BUFFER_NOT_FOUND
write_buffer_zero=UPTI_STATUS_ERROR_BUFFER_NOT_FOUND
write_null_data=UPTI_STATUS_ERROR_INVALID_ARGUMENT
write_null_empty=UPTI_STATUS_SUCCESS
write_too_large=UPTI_STATUS_ERROR_INVALID_ARGUMENT
write_largest=UPTI_STATUS_SUCCESS
write_larger_than_ring=UPTI_STATUS_ERROR_OUT_OF_RESOURCES
write_larger_than_region=UPTI_STATUS_ERROR_OUT_OF_RESOURCES
write_destroyed=UPTI_STATUS_ERROR_BUFFER_NOT_FOUND
write_one_slot_mine=UPTI_STATUS_SUCCESS
write_no_slot=UPTI_STATUS_ERROR_OUT_OF_RESOURCES
"""


def case_tool_api(root):
    """upti_write_buffer_record's returns; each drop counted where the buffer counts."""
    work = tempfile.mkdtemp(dir=root)
    n = 10
    prog = start_prog(work, "tool_api", n, 1)
    rc, out, err = finish(prog, "tool_api: ring_prog")
    lines = out.splitlines(True)
    if rc != 0 or "".join(lines[:11]) != TOOL_API_EXPECTED or err:
        fail("tool_api: exit %d, output:\n%s\nstderr %r" % (rc, out, err))
        return
    small = dict(x.split("=") for x in lines[11].split()[1:])
    ok, dropped = int(small["ok"]), int(small["dropped"])
    if ok <= 0 or dropped <= 0 or ok + dropped != 100 or small["other"] != "0":
        fail("tool_api: a 4 KiB DISCARD ring: %s" % lines[11].strip())
    # the record larger than the region; then a LOSSLESS 4 KiB buffer's callback writing 100
    # records of 72 bytes in the ring (8 header, 16 tool record, 48 data) into its own region:
    # 56 fit, 44 dropped (not waited for), delivered with the record that woke the callback
    want_end = ["inproc_drops=1\n", "self ok=56 dropped=44 delivered=57 drops=44\n"]
    if lines[12:] != want_end:
        fail("tool_api: %r, expected %r" % (lines[12:], want_end))
    def recovered(name):
        p = subprocess.run([RING, "recover", os.path.join(work, name), os.path.join(
            work, name + ".upti-ring")], capture_output=True, text=True, env=env())
        if p.returncode != 0:
            fail("tool_api: recover %s: %d %s" % (name, p.returncode, p.stderr))
            return {}
        return dict(db_rows(p.stdout.strip(), "SELECT key, value FROM metadata"))
    main_ring = [x for x in glob.glob(os.path.join(work, "upti-*.upti-ring"))]
    os.rename(main_ring[0], os.path.join(work, "main.upti-ring"))
    checks = {
        # the two accepted records of kind 1000 (not the bundled tool's): skipped, counted
        "main": {"tool_records_skipped": "2", "records_dropped": "0", "records_malformed": "0"},
        # the record larger than the ring, then the 64-byte records that did not fit
        "small": {"tool_records_skipped": str(ok), "records_dropped": str(dropped + 1)},
        # one record of the thread that had the slot; the other thread's: no slot
        "one_slot": {"tool_records_skipped": "1", "records_dropped": "1"},
        # destroyed before anything was written
        "doomed": {"tool_records_skipped": "0", "records_dropped": "0"},
    }
    for name, want in checks.items():
        meta = recovered(name)
        got = {k: meta.get(k) for k in want}
        if got != want:
            fail("tool_api: %s: %s, expected %s" % (name, got, want))


def case_tool_corrupt(root):
    """An AGENT record and a TOOL record whose lengths lie: counted as malformed, the
    records around them converted."""
    work = tempfile.mkdtemp(dir=root)
    n = 100
    prog = start_prog(work, "tool", n, 1)
    rc, out, err = finish(prog, "tool_corrupt: ring_prog")
    if rc != 0:
        fail("tool_corrupt: ring_prog exited %d: %s" % (rc, err))
        return
    spool = os.path.join(work, "spool")
    subprocess.run([RING, "collect", spool, out.strip()], check=True, env=env())
    with open(spool, "rb") as f:
        data = bytearray(f.read())
    chunk = [c for c in spool_chunks(data) if c[1] == 2][0]
    pos, end = chunk[0] + 64, chunk[0] + 64 + chunk[2]
    edited = {0x201: 0, 0x202: 0}
    while pos < end:
        length, kind = struct.unpack_from("<II", data, pos)
        if kind == 0x201 and not edited[kind]:
            struct.pack_into("<H", data, pos + 8 + 38, 0xffff)  # name_len past the record
            edited[kind] = 1
        elif kind == 0x202 and not edited[kind]:
            struct.pack_into("<I", data, pos + 12, 0x7ffffff0)  # size past the record
            edited[kind] = 1
        pos += length
    bad = os.path.join(work, "bad.spool")
    with open(bad, "wb") as f:
        f.write(data)
    p = subprocess.run([RING, "convert", bad, os.path.join(work, "bad")], capture_output=True,
                       text=True, env=env())
    # 2 edited + the 2 malformed records ring_prog wrote itself
    want_err = "upti: process %d: 4 malformed records skipped\n" % prog.pid
    if p.returncode != 0 or p.stderr != want_err:
        fail("tool_corrupt: convert exited %d, %r (expected %r)" % (p.returncode, p.stderr, want_err))
        return
    db = p.stdout.strip()
    meta = dict(db_rows(db, "SELECT key, value FROM metadata"))
    if meta.get("records_malformed") != "4" or meta.get("tool_records_skipped") != "2":
        fail("tool_corrupt: records_malformed %s, tool_records_skipped %s" %
             (meta.get("records_malformed"), meta.get("tool_records_skipped")))
    args = db_rows(db, "SELECT value FROM args ORDER BY id")
    if [a[0] for a in args] != ["0:%d" % i for i in range(1, n)]:
        fail("tool_corrupt: arg rows %s..., expected 0:1 .. 0:%d" % (args[:3], n - 1))
    agents = db_rows(db, "SELECT count(*) FROM info_agent")[0][0]
    if agents != host_agents() - 1 or len(db_rows(db, "SELECT id FROM markers")) != n:
        fail("tool_corrupt: %d agents (expected %d), %d markers" %
             (agents, host_agents() - 1, len(db_rows(db, "SELECT id FROM markers"))))


def case_agents(root):
    """4 threads, each registering 10 agents while it marks, racing the others' first
    records: every agent in the ring file exactly once."""
    work = tempfile.mkdtemp(dir=root)
    n, threads = 20000 // SCALE, 4
    prog = start_prog(work, "agents", n, threads, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, out, err = finish(prog, "agents: ring_prog")
    crc, _co, cerr = finish(coll, "agents: the collector")
    if rc != 0 or crc != 0 or err or cerr:
        fail("agents: exit %d / collector %d: %r %r" % (rc, crc, err, cerr))
        return
    listed = int(out.split("agents=")[1])
    if listed != host_agents() + 10 * threads:
        fail("agents: %d agents listed, expected %d" % (listed, host_agents() + 10 * threads))
    dbs = convert(work)
    rows = db_rows(dbs[0], "SELECT handle, runtime, name FROM info_agent ORDER BY handle")
    handles = [r[0] for r in rows]
    if handles != list(range(1, listed + 1)):
        fail("agents: agent handles %s, expected 1..%d once each" % (handles, listed))
    race = sorted(r[2] for r in rows if r[1] == "race")
    want = sorted("%d:%d" % (t, i) for t in range(threads) for i in range(0, n, max(n // 10, 1)))
    if race != want:
        fail("agents: the registered agents %s, expected %s" % (race[:5], want[:5]))
    check_program("agents", dbs, counters(os.path.join(work, "counter"), threads), threads, False)


AGENT_SQL = ("SELECT handle, type, runtime, name, vendor, driver_version, compute_units,"
             " global_memory_bytes, runtime_handle, node_id FROM info_agent ORDER BY handle")


def case_ocl(root, fork):
    """An OpenCL program traced into a shared buffer: its agents (the host's and the
    OpenCL layer's) in the database, as upti_query_available_agents lists them; a forked
    child's database has them too; the tool records its EXIT callbacks wrote are arg rows."""
    layer, tool = sys.argv[3], sys.argv[4]
    label = "ocl_fork" if fork else "ocl_agents"
    work = tempfile.mkdtemp(dir=root)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("UPTI_", "OPENCL_LAYERS"))}
    e.update(OPENCL_LAYERS=layer, UPTI_TOOL_LIBRARIES=tool, RING_TEST_DIR=work, **PATIENT)
    prog = subprocess.Popen([os.path.join(BUILD, "bin", "ring_ocl_prog")] + (["fork"] if fork else []),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    coll = start_collector(work, prog.pid)
    rc, _out, err = finish(prog, label + ": ring_ocl_prog")
    crc, _co, cerr = finish(coll, label + ": the collector")
    if rc != 0 or crc != 0 or cerr:
        fail("%s: exit %d / collector %d: %s %s" % (label, rc, crc, err, cerr))
        return
    listed = []
    with open(os.path.join(work, "agents.txt")) as f:
        for line in f:
            v = line.rstrip("\n").split("|")
            listed.append((int(v[0]), v[1], v[2], v[3], v[4], v[5], int(v[6]), int(v[7]), int(v[8]),
                           int(v[9])))
    if not any(a[2] == "opencl" for a in listed) or not any(a[2] == "host" for a in listed):
        fail("%s: upti_query_available_agents listed no OpenCL or no host agent: %s" % (label, listed))
    dbs = convert(work)
    if len(dbs) != (2 if fork else 1):
        fail("%s: %d databases" % (label, len(dbs)))
        return
    for db in dbs:
        pid = db_rows(db, "SELECT pid FROM info_process")[0][0]
        who = "parent" if pid == prog.pid else "child"
        agents = db_rows(db, AGENT_SQL)
        if agents != listed:
            fail("%s: the %s's agent rows %s, expected what the tool listed: %s" %
                 (label, who, agents, listed))
        marks = sorted(m[0] for m in db_rows(db, "SELECT message FROM markers"))
        if marks != (["parent"] if who == "parent" else ["child"] * 3):
            fail("%s: the %s's markers: %s" % (label, who, marks))
        if who == "parent":
            apis = db_rows(db, "SELECT id, correlation_id FROM api ORDER BY id")
            args = db_rows(db, "SELECT api_id, correlation_id, position, type, name FROM args ORDER BY api_id")
            want = [(a, c, 0, "uint32_t", "operation") for a, c in apis]
            if len(apis) < 4 or args != want:
                fail("%s: %d API rows, arg rows %s..., expected one per API row: %s..." %
                     (label, len(apis), args[:3], want[:3]))
        meta = dict(db_rows(db, "SELECT key, value FROM metadata"))
        if meta.get("records_malformed") != "0" or meta.get("records_dropped") != "0" or \
                meta.get("tool_records_skipped") != "0":
            fail("%s: the %s's metadata %s" % (label, who, meta))


def case_cut_short(root):
    """A ring file truncated while the collector holds it mapped (by its program, or any
    process of the user's): the collector says so once and goes on, not killed by SIGBUS
    with every other process's trace. Program A marks until its ring is cut to 0 bytes
    under it; program B, beside it in the
    same folder, is collected whole, and A's database holds a prefix of its marks. (A is
    stopped before the cut and killed after it: its own next mark would fault too.)"""
    work = tempfile.mkdtemp(dir=root)
    prog_a = start_prog(work, "kill", 10 ** 9, extra=PATIENT)
    n = 20000
    prog_b = subprocess.Popen([PROG, "return", work, os.path.join(work, "counter_b"), str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(PATIENT))
    coll = start_collector(work, prog_b.pid)
    counter = os.path.join(work, "counter")
    ring_a = []
    deadline = time.time() + 30
    while time.time() < deadline:  # A has made some marks, and the collector mapped its ring
        ring_a = glob.glob(os.path.join(work, "upti-%d-*.upti-ring" % prog_a.pid))
        if len(ring_a) == 1 and os.path.exists(counter) and os.path.getsize(counter) >= 8 and \
                counters(counter, 1)[0] > 1000:
            with open(ring_a[0], "rb") as f:
                collector_pid = int.from_bytes(f.read(128)[120:128], "little")  # in the header
            if collector_pid == coll.pid:
                break
        time.sleep(0.001)
    else:
        fail("cut_short: program A's ring file %s was not mapped by the collector" % ring_a)
        prog_a.kill()
        return
    prog_a.send_signal(signal.SIGSTOP)
    # SIGSTOP is delivered asynchronously: A must be stopped before the cut, or its next
    # mark faults (SIGBUS) before the SIGKILL (seen with 4 runs at once on 2 cores).
    while True:
        with open("/proc/%d/stat" % prog_a.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                break
        time.sleep(0.001)
    os.truncate(ring_a[0], 0)
    prog_a.kill()
    rc_a, _o, _e = finish(prog_a, "cut_short: program A")
    rc_b, _o, err_b = finish(prog_b, "cut_short: program B")
    crc, _co, cerr = finish(coll, "cut_short: the collector")
    said = "upti: %s was cut short while being read (by its program or another process of " \
           "yours): what it held past what was collected is lost\n" % ring_a[0]
    if rc_a != -signal.SIGKILL or rc_b != 0 or crc != 0 or cerr != said:
        fail("cut_short: A exited %s (expected SIGKILL), B %s, the collector %s (expected 0), "
             "said %r, expected %r; B: %s" % (rc_a, rc_b, crc, cerr, said, err_b.strip()))
        return
    dbs = convert(work)
    by_pid = {}
    for db in dbs:
        rows, meta, pid = db_marks(db)
        by_pid[pid[0]] = (by_prefix(rows), meta)
    # (A has no database when the cut came before the collector's first read of its ring.)
    if prog_b.pid not in by_pid or not set(by_pid) <= {prog_a.pid, prog_b.pid}:
        fail("cut_short: databases of %s, expected B %d and maybe A %d" %
             (sorted(by_pid), prog_b.pid, prog_a.pid))
        return
    check_thread("cut_short B", by_pid[prog_b.pid][0].get("0", []), "0", n, False)
    got_a = by_pid.get(prog_a.pid, ({}, {}))[0].get("0", [])
    # What the collector had taken before the cut: A's first marks, in order (the last one
    # may be a call stopped after its record, before its count).
    check_thread("cut_short A", got_a, "0", len(got_a), False, total=counters(counter, 1)[0] + 1)


def main():
    with tempfile.TemporaryDirectory(prefix="upti-rings-") as root:
        if CASE == "kill":
            case_kill(root)
        elif CASE == "exit":
            case_ending(root, "exit", 0)
        elif CASE == "segv":
            case_ending(root, "segv", -signal.SIGSEGV)
        elif CASE == "segv_caught":
            case_ending(root, "segv_caught", 0)
        elif CASE == "return":
            case_ending(root, "return", 0)
        elif CASE == "collector_kill":
            case_collector_kill(root)
        elif CASE == "full_discard":
            case_full_discard(root)
        elif CASE == "full_lossless":
            case_full_lossless(root)
        elif CASE == "wait_split":
            case_wait_split(root)
        elif CASE == "cut_short":
            case_cut_short(root)
        elif CASE == "fork":
            case_fork(root)
        elif CASE == "threads_slots":
            case_threads_slots(root)
        elif CASE == "cli":
            case_cli(root)
        elif CASE == "api":
            case_api(root)
        elif CASE == "doorbell":
            case_doorbell(root)
        elif CASE == "late_header":
            case_late_header(root)
        elif CASE == "closed":
            case_closed(root)
        elif CASE == "storage":
            case_storage(root)
        elif CASE == "old_spool":
            case_old_spool(root)
        elif CASE == "unclaimed_slots":
            case_unclaimed_slots(root)
        elif CASE == "corrupt":
            case_corrupt(root)
        elif CASE == "tool":
            case_tool(root)
        elif CASE == "tool_inproc":
            case_tool_inproc(root)
        elif CASE == "tool_api":
            case_tool_api(root)
        elif CASE == "tool_corrupt":
            case_tool_corrupt(root)
        elif CASE == "agents":
            case_agents(root)
        elif CASE == "follow":
            case_follow(root)
        elif CASE == "ocl_agents":
            case_ocl(root, False)
        elif CASE == "ocl_fork":
            case_ocl(root, True)
        else:
            print("unknown case " + CASE)
            return 2
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
