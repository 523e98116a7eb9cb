#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Capture windows of `upti run` (docs/cli.md, "Capture windows"): exact record
counts inside and outside each window, over tests/apps/capture_phases (uptx
marks that say where they were made) and upti-test-ocl-e2e (kernels).

  test_capture.py BUILD_DIR CASE

Exit 0 = pass, 1 = fail, 77 = skipped. No timing is asserted: the timed cases
put the window edges half a phase away from the phases.
"""
import concurrent.futures
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import upti_test  # noqa: E402
from upti_test import SKIP, check, one, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI, PHASES, OCL_APP, NVTX_APP, OCL_EDGES = upti_test.built(
    BUILD, "bin/upti", "bin/capture_phases", "bin/upti-test-ocl-e2e", "bin/upti-test-nvtx-app",
    "bin/capture_ocl")


def upti_run(tmp, name, opts, program):
    """The folder of a run named name, and the command that runs program under upti run with opts."""
    d = os.path.join(tmp, name)
    return d, [UPTI, "run", "-d", d, "-o", "r"] + opts + ["--"] + program


def database(d):
    """The database a run wrote in folder d, or None."""
    path = os.path.join(d, "r.db")
    return sqlite3.connect(path) if os.path.exists(path) else None


def traced(tmp, name, opts, program, expect=0):
    """Runs program under upti run with opts; its database (None if none was written)."""
    d, cmd = upti_run(tmp, name, opts, program)
    p = run(cmd, expect=expect)
    return database(d), p, d


def traced_together(tmp, runs):
    """traced() of each (name, opts, program) of runs, all at once: programs that mostly sleep
    (the timed cases: 7 s each, 43 s of a CI job slot one after another)."""
    started = [upti_run(tmp, *r) for r in runs]
    with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
        procs = [f.result() for f in [pool.submit(run, cmd) for _, cmd in started]]
    return [(database(d), p, d) for (d, _), p in zip(started, procs)]


def marks_by_prefix(db):
    """uptx_mark rows per text before its first ':' ("in", "out", "A", "p1"...)."""
    got = {}
    for (msg,) in db.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'"):
        key = msg.split(":")[0] if not msg.startswith("in:") else "in:" + msg.split(":")[1]
        got[key] = got.get(key, 0) + 1
    return got


def ops(db):
    return dict(db.execute("SELECT operation, count(*) FROM markers GROUP BY operation").fetchall())


def meta(db, key):
    r = db.execute("SELECT value FROM metadata WHERE key = ?", (key,)).fetchone()
    return r[0] if r else None


def case_marker_ranges(tmp):
    """A range entered 5 times: repeat:3 gives 3 windows, stop (the default) 1, repeat 5; each
    window holds exactly its range: the push, its 4 marks, the pop."""
    prog = [PHASES, "ranges", "5", "4"]
    db, _, _ = traced(tmp, "all", ["--marker-trace"], prog)
    check(ops(db) == {"uptx_mark": 26, "uptx_range_push": 5, "uptx_range_pop": 5},
          "no window: %r" % ops(db))
    check(meta(db, "capture") is None, "capture metadata without a window option")
    per_window = 6
    for opts, windows in ((["--capture-range-end", "repeat:3"], 3), ([], 1),
                          (["--capture-range-end", "stop"], 1), (["--capture-range-end", "repeat"], 5),
                          (["--capture-range-end", "repeat:9"], 5)):
        db, p, _ = traced(tmp, "w%d%s" % (windows, "".join(opts)[-3:]),
                          ["--marker-trace", "--capture-range=marker",
                           "--capture-range-name", "window"] + opts, prog)
        check(db is not None, "%r: no database: %s" % (opts, p.stderr))
        n = one(db, "SELECT count(*) FROM marker")
        check(n == windows * per_window, "%r: %d marker rows, expected %d" % (opts, n, windows * per_window))
        check(ops(db) == {"uptx_mark": 4 * windows, "uptx_range_push": windows,
                          "uptx_range_pop": windows}, "%r: %r" % (opts, ops(db)))
        want = {"in:%d" % i: 4 for i in range(windows)}
        check(marks_by_prefix(db) == want, "%r: marks %r" % (opts, marks_by_prefix(db)))
        check(one(db, "SELECT count(*) FROM regions WHERE name = 'window'") == windows,
              "%r: regions" % opts)
        check(meta(db, "capture") == "1" and meta(db, "capture_windows") == str(windows),
              "%r: metadata %r %r" % (opts, meta(db, "capture"), meta(db, "capture_windows")))


def case_marker_started(tmp):
    """uptx_range_start/stop, the stop on another thread: repeat:2 gives 2 windows."""
    db, _, _ = traced(tmp, "s", ["--marker-trace", "--capture-range-name", "window",
                                 "--capture-range-end", "repeat:2"], [PHASES, "started", "5", "3"])
    check(ops(db) == {"uptx_mark": 6, "uptx_range_start": 2, "uptx_range_stop": 2}, "%r" % ops(db))
    check(marks_by_prefix(db) == {"in:0": 3, "in:1": 3}, "%r" % marks_by_prefix(db))
    check(one(db, "SELECT count(*) FROM regions WHERE name = 'window'") == 2, "regions")


def case_nvtx_domain(tmp):
    """NVTX ranges: NAME (default domain), NAME@DOMAIN, NAME@*, a start/end range whose
    window holds another thread's range (tests/integration/cli/nvtx_app.c)."""
    if not os.path.exists(NVTX_APP) or not os.path.exists(os.path.join(BUILD, "lib",
                                                                       "libupti-nvtx.so")):
        print("SKIP: NVTX v3 headers were not found at configure time")
        return SKIP
    reg = 'registered "string", with comma'
    for name, marks, regions in (("inner", {"plain mark"}, {"inner"}),
                                 (reg + "@my domain", {"domain mark"}, {reg}),
                                 (reg + "@*", {"domain mark"}, {reg}),
                                 ("wide \u00fc\u20ac", {"worker mark"}, {"wide \u00fc\u20ac", "worker push"})):
        db, p, _ = traced(tmp, "n%d" % len(name), ["--marker-trace", "--capture-range-name", name],
                          [NVTX_APP])
        check(db is not None, "%r: no database: %s" % (name, p.stderr))
        got = {r[0] for r in db.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'")}
        check(got == marks, "%r: marks %r" % (name, got))
        got = {r[0] for r in db.execute("SELECT name FROM regions")}
        check(got == regions, "%r: regions %r" % (name, got))
        check(meta(db, "capture_windows") == "1", "%r: windows" % name)
    # The registered-string range is in "my domain", not the default one.
    db, p, _ = traced(tmp, "none", ["--capture-range-name", reg], [NVTX_APP])
    check(db is None and "never opened" in p.stderr, "default domain: %r" % p.stderr)
    db, p, _ = traced(tmp, "other", ["--capture-range-name", reg + "@other"], [NVTX_APP])
    check(db is None and "never opened" in p.stderr, "another domain: %r" % p.stderr)


def case_fork(tmp):
    """A child forked without exec inside a window keeps it open until it pops the range."""
    if "libclang_rt.asan" in os.environ.get("UPTI_SANITIZER_PRELOAD", ""):
        print("SKIP: fork under ASan (see test_cli.py, ASAN_FORK)")
        return SKIP
    d = os.path.join(tmp, "f")
    run([UPTI, "run", "--marker-trace", "--capture-range-name", "window", "-d", d, "-o", "r-%pid%",
         "--", PHASES, "fork"])
    got = []
    for f in sorted(os.listdir(d)):
        db = sqlite3.connect(os.path.join(d, f))
        got.append((marks_by_prefix(db), ops(db)))
    want = sorted([({"parent": 4}, {"uptx_mark": 4, "uptx_range_push": 1, "uptx_range_pop": 1}),
                   ({"child": 3}, {"uptx_mark": 3, "uptx_range_pop": 1})], key=repr)
    check(sorted(got, key=repr) == want, "fork: %r" % got)


def case_pause_resume(tmp):
    """uptx_profiler_pause/resume, with and without --start-paused."""
    db, _, _ = traced(tmp, "paused", ["--start-paused"], [PHASES, "pause"])
    check(marks_by_prefix(db) == {"p1": 7, "p3": 4}, "--start-paused: %r" % marks_by_prefix(db))
    check(ops(db) == {"uptx_mark": 11, "uptx_profiler_resume": 2, "uptx_profiler_pause": 1},
          "--start-paused: %r" % ops(db))
    check(meta(db, "capture_windows") == "2", "windows %r" % meta(db, "capture_windows"))
    db, _, _ = traced(tmp, "running", [], [PHASES, "pause"])
    check(marks_by_prefix(db) == {"p0": 5, "p1": 7, "p3": 4}, "not paused: %r" % marks_by_prefix(db))
    # Without `upti run`: the tool loaded through UPTI_TOOL_LIBRARIES, and its helper
    # collector (which holds the program's stderr until the database is written).
    out = os.path.join(tmp, "inproc")
    e = {k: v for k, v in os.environ.items() if not k.startswith("UPTI_")}
    e.update(UPTI_TOOL_LIBRARIES=os.path.join(BUILD, "lib", "libupti-trace.so"),
             UPTI_TRACE_START_PAUSED="1", UPTI_TRACE_OUTPUT=out)
    subprocess.run([PHASES, "pause"], env=e, check=True, timeout=60, capture_output=True)
    db = sqlite3.connect("file:%s.db?mode=ro" % out, uri=True)
    check(marks_by_prefix(db) == {"p1": 7, "p3": 4}, "without upti run: %r" % marks_by_prefix(db))


def case_never_opened(tmp):
    """A window that never opened: one line, no file, the program's exit status."""
    for opts, why in ((["--capture-range-name", "nope"], 'marker "nope" was never entered'),
                      (["--start-paused"],
                       "the program never called uptx_profiler_resume (--start-paused)")):
        db, p, d = traced(tmp, "n%d" % len(why), opts, [PHASES, "nothing", "3"], expect=3)
        check(db is None, "%r: a database was written" % opts)
        check(not os.path.exists(d) or os.listdir(d) == [], "%r: files %r" % (opts, os.listdir(d)))
        want = "upti: the capture range never opened (%s): no trace written" % why
        check(p.stderr.strip().splitlines() == [want], "%r: stderr %r" % (opts, p.stderr))


def case_timed(tmp):
    """--delay, --duration, --collection-period over phases A, B, C, D made 1, 3, 5 and 7 s
    after `upti run` started (capture_phases phases 2000): every window edge is a multiple of
    2 s, 1 s from the nearest phase; A, the program's first call, may come up to 1 s late
    (a slow start: a sanitizer's), the others are made at their times."""
    prog = [PHASES, "phases", "2000"]
    cases = ((["--delay", "2"], {"B": 10, "C": 10, "D": 10}),
             (["--duration", "2"], {"A": 10}),
             (["--delay", "2", "--duration", "2"], {"B": 10}),
             (["--collection-period", "2:2:2"], {"B": 10, "D": 10}),
             (["-P", "2:2:1"], {"B": 10}))
    # The last two: a window that opened (3.6 to 4.4 s) while the program made no call (B at
    # 3, C at 5), and a delay past the program's end.
    runs = [("t" + "".join(opts).replace(":", "_"), opts, prog) for opts, _ in cases]
    runs += [("empty", ["-P", "3.6:0.8:1"], prog), ("late", ["--delay", "30"], [PHASES, "phases", "0"])]
    results = traced_together(tmp, runs)
    for (opts, want), (db, p, _) in zip(cases, results):
        check(db is not None, "%r: no database: %s" % (opts, p.stderr))
        check(marks_by_prefix(db) == want, "%r: %r, expected %r" % (opts, marks_by_prefix(db), want))
    db, p, _ = results[-2]
    check(db is None and p.stderr.strip().splitlines() == [
        "upti: the capture windows opened but nothing was recorded in them: no trace written"],
        "empty window: %r" % p.stderr)
    db, p, _ = results[-1]
    check(db is None and "the program ended before the first period began (30.000 s)" in p.stderr,
          "--delay past the end: %r" % p.stderr)


def case_iterations(tmp):
    """--kernel-iteration-range: exact kernel rows per name, after the name filters."""
    if not os.path.exists(OCL_APP):
        return SKIP
    prog = [OCL_APP, "--kernels", "7", "--kernels-b", "5"]
    probe = run(prog, expect=None)
    if probe.returncode != 0:
        print("SKIP: no OpenCL device: %s" % probe.stderr.strip()[:200])
        return SKIP
    for opts, want, filtered in (
            (["--kernel-iteration-range", "[2-3,6-]"], {"kern_a": 4, "kern_b": 2}, 6),
            (["--kernel-iteration-range", "1"], {"kern_a": 1, "kern_b": 1}, 10),
            (["--kernel-iteration-range", "[1-2],[5]", "--kernel-include-regex", "^kern_a$"],
             {"kern_a": 3}, 9),
            (["--kernel-iteration-range", "6-"], {"kern_a": 2}, 10)):
        db, p, _ = traced(tmp, "k%d" % filtered + str(len(opts)), ["--kernel-trace"] + opts, prog)
        got = dict(db.execute("SELECT name, count(*) FROM kernels GROUP BY name").fetchall())
        check(got == want, "%r: %r, expected %r" % (opts, got, want))
        check(meta(db, "records_filtered") == str(filtered),
              "%r: records_filtered %r" % (opts, meta(db, "records_filtered")))
    # Without `upti run`: UPTI_TRACE_KERNEL_ITERATIONS, handed to the helper collector.
    out = os.path.join(tmp, "inproc")
    e = {k: v for k, v in os.environ.items() if not k.startswith("UPTI_")}
    e.update(UPTI_TOOL_LIBRARIES=os.path.join(BUILD, "lib", "libupti-trace.so"),
             OPENCL_LAYERS=os.path.join(BUILD, "lib", "libupti-opencl.so"),
             UPTI_TRACE_KINDS="kernel_dispatch", UPTI_TRACE_KERNEL_ITERATIONS="[2-3,6-]",
             UPTI_TRACE_OUTPUT=out)
    subprocess.run(prog, env=e, check=True, timeout=120, capture_output=True)
    db = sqlite3.connect("file:%s.db?mode=ro" % out, uri=True)
    got = dict(db.execute("SELECT name, count(*) FROM kernels GROUP BY name").fetchall())
    check(got == {"kern_a": 4, "kern_b": 2}, "without upti run: %r" % got)


def case_device_edges(tmp):
    """Kernels at a window's edges (tests/apps/capture_ocl.c): those enqueued inside a window
    are recorded even when they complete after it closed; those enqueued before it that
    complete inside it are not."""
    if not os.path.exists(OCL_EDGES):
        return SKIP
    probe = run([OCL_EDGES], expect=None)
    if probe.returncode != 0:
        print("SKIP: no OpenCL device: %s" % probe.stdout.strip()[:200])
        return SKIP
    for name, kernels in ((None, 9), ("launch", 3), ("sync", 0), ("inside", 2)):
        opts = ["--kernel-trace", "--marker-trace"]
        if name:
            opts += ["--capture-range-name", name]
        db, p, _ = traced(tmp, "d%s" % name, opts, [OCL_EDGES])
        check(db is not None, "%r: no database: %s" % (name, p.stderr))
        got = one(db, "SELECT count(*) FROM kernels")
        check(got == kernels, "%r: %d kernels, expected %d" % (name, got, kernels))
        regions = sorted(r[0] for r in db.execute("SELECT name FROM regions"))
        want = sorted(["launch", "sync", "inside"]) if name is None else [name]
        check(regions == want, "%r: regions %r" % (name, regions))


def case_errors(tmp):
    """Malformed values: one `upti:` line naming the option and the accepted forms, exit 2."""
    os.chdir(tmp)
    for args, opt, form in (
            (["--capture-range", "nvtx"], "--capture-range", "marker"),
            (["--capture-range=marker"], "--capture-range-name", "NAME[@DOMAIN]"),
            (["--capture-range-name", "a@"], "--capture-range-name", "NAME@DOMAIN"),
            (["--capture-range-name", "a", "--capture-range-end", "repeat:0"], "--capture-range-end",
             "repeat:N"),
            (["--capture-range-end", "stop"], "--capture-range-end", "--capture-range-name"),
            (["--capture-range=none", "--capture-range-name", "a"], "--capture-range-name",
             "--capture-range=marker"),
            (["--delay", "1s"], "--delay", "seconds"),
            (["--duration", "0"], "--duration", "seconds > 0"),
            (["-P", "1:2"], "--collection-period", "START:DURATION:REPEAT"),
            (["-P", "1:1:1", "--delay", "1"], "--collection-period", "--delay"),
            (["--kernel-iteration-range", "0"], "--kernel-iteration-range", "[1-3,5]"),
            (["--kernel-iteration-range", "[2-1]"], "--kernel-iteration-range", "N-M")):
        p = run([UPTI, "run"] + args + ["--", PHASES, "nothing"], expect=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("upti: ") and opt in lines[0] and form in lines[0],
              "%r: %r" % (args, p.stderr))
    check(os.listdir(tmp) == [], "an erroneous command left files: %r" % os.listdir(tmp))


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    return upti_test.run_case(CASES, sys.argv[2], "upti-capture", needed=(UPTI, PHASES))


if __name__ == "__main__":
    sys.exit(main())
