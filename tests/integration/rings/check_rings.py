#!/usr/bin/env python3
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
counted, and the program is not held), fork (the child's records in its own
database, none of the parent's), threads_slots (4 threads alive together, 2 rings: 2 threads' records
kept, the other 2's all counted as drops),
cli (usage and error messages of upti-ring), api (what
upti_create_shared_buffer and upti_get_shared_buffer_path return, errors
included; a destroyed buffer's file is marked closed), corrupt (a record
with an impossible length is counted as malformed, never read past; a spool
cut inside a chunk is read up to it and cut there on resume).
"""
import glob
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

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
    n = 150000 // SCALE
    prog = start_prog(work, "return", n, 2, size=1 << 14, extra=PATIENT)
    rng = random.Random(os.getpid())
    kills = 0
    for _ in range(3):
        coll = start_collector(work, prog.pid)
        time.sleep(rng.uniform(0.005, 0.04))
        coll.send_signal(signal.SIGKILL)
        coll.wait()
        kills += coll.returncode == -signal.SIGKILL
    # And twice at the worst moment: a chunk appended, the ring's tail not yet moved.
    for chunks in (3, 7):
        coll = start_collector(work, prog.pid, extra={"UPTI_RING_TEST_CRASH_AFTER_CHUNKS": str(chunks)})
        coll.wait()
        if coll.returncode != -signal.SIGKILL:
            fail("collector_kill: the collector with the crash hook exited %d" % coll.returncode)
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


def case_fork(root):
    work = tempfile.mkdtemp(dir=root)
    n = 2000
    prog = start_prog(work, "fork", n, 1, extra=PATIENT)
    coll = start_collector(work, prog.pid)
    rc, out, err = finish(prog, "fork: ring_prog")
    crc, _co, cerr = finish(coll, "fork: the collector")
    if rc != 0 or crc != 0 or cerr:
        fail("fork: exit %d / collector %d: %s %s" % (rc, crc, err, cerr))
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
    dbs = convert(work)
    rows, meta, _pid = db_marks(dbs[0])
    groups = by_prefix(rows)
    dropped = int(meta.get("records_dropped", -1))
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
    """(offset of the header, type, payload bytes) of each chunk (src/collector/spool.h)."""
    import struct
    off, out = 8, []
    while off + 64 <= len(data):
        magic, ctype, nbytes = struct.unpack_from("<IIQ", data, off)
        if magic != 0x4b4e4843:
            break
        out.append((off, ctype, nbytes))
        off += 64 + nbytes
    return out


def case_corrupt(root):
    work = tempfile.mkdtemp(dir=root)
    prog = start_prog(work, "exit", 100, 1)
    _rc, out, _err = finish(prog, "corrupt: ring_prog")
    spool = os.path.join(work, "spool")
    subprocess.run([RING, "collect", spool, out.strip()], check=True, env=env())
    with open(spool, "rb") as f:
        data = bytearray(f.read())
    chunks = [c for c in spool_chunks(data) if c[1] == 2]
    if len(chunks) != 1:
        fail("corrupt: %d DATA chunks, expected 1" % len(chunks))
        return
    # Records: THREAD (24 bytes), then the marks; the 11th mark gets an impossible length.
    pos = chunks[0][0] + 64 + 24
    for _ in range(10):
        pos += int.from_bytes(data[pos:pos + 4], "little")
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
        elif CASE == "fork":
            case_fork(root)
        elif CASE == "threads_slots":
            case_threads_slots(root)
        elif CASE == "cli":
            case_cli(root)
        elif CASE == "api":
            case_api(root)
        elif CASE == "corrupt":
            case_corrupt(root)
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
