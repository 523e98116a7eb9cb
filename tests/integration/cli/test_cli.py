#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of `upti`, libupti-trace.so, the writers and NVTX capture.

  test_cli.py BUILD_DIR CASE

Each case runs programs under `upti run`, reads every output back (sqlite3,
the protobuf decoder and JSON/CSV parsers of traceck.py) and checks exact
counts. Exit 0 = pass, 1 = fail, 77 = skipped (something it needs is absent).
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "common", "python")]
import traceck  # noqa: E402
import upti_test  # noqa: E402
from upti_test import SKIP, Fail, check, one, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI, UPTX_APP, NVTX_APP, SYNTH, OCL_APP, OCL_EVENTS, OCL_STUCK = upti_test.built(
    BUILD, "bin/upti", "bin/upti-test-uptx-app", "bin/upti-test-nvtx-app", "bin/upti-synth",
    "bin/upti-test-ocl-e2e", "bin/ocl_events", "bin/ocl_stuck")
# LLVM 14's AddressSanitizer allocator is not fork-safe: a child forked while
# another thread allocates can hang in UPTI's fork handlers (they allocate)
# before it reaches exec. Under ASan the fork+exec parts are left to the plain
# and TSan runs.
ASAN_FORK = "libclang_rt.asan" in os.environ.get("UPTI_SANITIZER_PRELOAD", "")


def db_of(path):
    """The database at path, after SQLite's own check of every page, row and
    index entry (the collector writes the big tables as pages itself:
    src/collector/output/table_pages.h)."""
    db = sqlite3.connect(path)
    check(db.execute("PRAGMA integrity_check").fetchall() == [("ok",)],
          "%s: PRAGMA integrity_check: %r" % (path, db.execute("PRAGMA integrity_check").fetchall()[:5]))
    return db


def dbs_in(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db"))


# Markers of uptx_app with T threads and N iterations:
# per worker: name_thread, range_start, N * (push, push, mark, pop, pop), range_stop
# main: name_thread, name_category, push, pop
def expected_markers(t, n):
    return t * (3 + 5 * n) + 4


def expected_regions(t, n):
    return t * (2 * n + 1) + 1


def check_marker_db(path, t, n):
    db = db_of(path)
    check(one(db, "SELECT count(*) FROM marker") == expected_markers(t, n),
          "marker rows: %d, expected %d" % (one(db, "SELECT count(*) FROM marker"),
                                             expected_markers(t, n)))
    check(one(db, "SELECT count(*) FROM region") == expected_regions(t, n), "region rows")
    check(one(db, "SELECT count(*) FROM region WHERE end < start") == 0, "region end < start")
    check(one(db, "SELECT count(*) FROM markers WHERE operation = 'uptx_mark'") == t * n, "marks")
    # Nesting: each depth-1 push region lies inside a depth-0 region of its thread.
    bad = one(db, "SELECT count(*) FROM region i WHERE i.kind = 0 AND i.depth = 1 AND NOT EXISTS"
                  " (SELECT 1 FROM region o WHERE o.kind = 0 AND o.depth = 0 AND o.tid = i.tid"
                  " AND o.start <= i.start AND o.end >= i.end)")
    check(bad == 0, "%d inner regions not nested in an outer one" % bad)
    check(one(db, "SELECT count(*) FROM regions WHERE name = 'outer' AND depth = 0") == t * n,
          "outer regions")
    # Inside the process's lifetime.
    start, end = db.execute("SELECT start, end FROM info_process").fetchone()
    check(end is not None and end >= start, "process end not written")
    check(one(db, "SELECT count(*) FROM marker WHERE timestamp < ? OR timestamp > ?", start, end)
          == 0, "markers outside the process lifetime")
    names = {r[0] for r in db.execute("SELECT name FROM threads")}
    for k in range(t):
        check("worker-%d" % k in names, "thread name worker-%d missing: %r" % (k, names))
    check("main" in names, "main thread name missing")
    return db


def case_writers(tmp):
    """Synthesized records with hostile strings: every format parses; the DB is valid UTF-8."""
    out = os.path.join(tmp, "w.db")
    run([SYNTH, out, "20000", "--nasty", "--formats", "pftrace,json,csv", "--quiet"])
    db = db_of(out)  # python's sqlite3 fails on invalid UTF-8 text
    names = [r[0] for r in db.execute("SELECT DISTINCT name FROM kernels ORDER BY name")]
    check(len(names) == 6, "kernel names: %r" % names)
    check('he said "hi", then left' in names, "quotes lost")
    check("line1\nline2\r\nline3" in names, "newlines lost")
    check("tab\there\x01\x02\x1f\x7f end" in names, "control bytes lost")
    check(any(n.startswith("bad utf8 \ufffd\ufffd") for n in names), "invalid UTF-8 not replaced")
    check("unicode \u00fc \u20ac \U0001F600" in names, "valid UTF-8 altered")
    n_kernel = one(db, "SELECT count(*) FROM kernel_dispatch")
    n_copy = one(db, "SELECT count(*) FROM memory_copy")
    n_api = one(db, "SELECT count(*) FROM api")
    check(n_api == n_kernel + n_copy, "one device op per API call")
    pf = traceck.decode_pftrace(os.path.join(tmp, "w.pftrace"))
    kernels = [s for s in pf["slices"] if s["name"] in names]
    check(len(kernels) >= n_kernel, "kernel slices in pftrace: %d < %d" % (len(kernels), n_kernel))
    check(pf["flows"] == n_api, "flows %d != API calls %d" % (pf["flows"], n_api))
    doc, counts = traceck.check_json(os.path.join(tmp, "w.json"))
    check(counts["s"] == n_api and counts["f"] == n_api, "JSON flows")
    jnames = {e["name"] for e in doc["traceEvents"] if e["ph"] == "X"}
    check(set(names) <= jnames, "JSON lost kernel names")
    rows = traceck.check_csv(os.path.join(tmp, "w_kernel_trace.csv"))
    check(len(rows) - 1 == n_kernel, "CSV kernel rows")
    check(set(names) == {r[5] for r in rows[1:]}, "CSV kernel names differ")


def case_markers(tmp):
    """uptx markers: exact counts, nesting, names; all formats parse."""
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,pftrace,json,csv", "-d", d, "-o", "m",
         "--", UPTX_APP, "--iterations", "10", "--threads", "3"])
    check_marker_db(os.path.join(d, "m.db"), 3, 10)
    pf = traceck.decode_pftrace(os.path.join(d, "m.pftrace"))
    check(len(pf["slices"]) == expected_regions(3, 10), "pftrace slices %d" % len(pf["slices"]))
    check(len(pf["instants"]) == 30, "pftrace instants")
    depth1 = [s for s in pf["slices"] if s["name"].startswith("inner")]
    check(len(depth1) == 30 and all(s["depth"] == 1 for s in depth1), "pftrace nesting")
    doc, counts = traceck.check_json(os.path.join(d, "m.json"))
    check(counts["X"] == expected_regions(3, 10) and counts["i"] == 30, "json counts %r" % counts)
    for kind, n in (("marker_api_trace", expected_markers(3, 10)),
                    ("region_trace", expected_regions(3, 10))):
        rows = traceck.check_csv(os.path.join(d, "m_%s.csv" % kind))
        check(len(rows) - 1 == n, "%s rows %d != %d" % (kind, len(rows) - 1, n))


def case_nasty(tmp):
    """Hostile marker texts from a real run: JSON, CSV and protobuf stay valid."""
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,pftrace,json,csv", "-d", d, "-o", "n",
         "--", UPTX_APP, "--nasty", "--iterations", "4"])
    db = check_marker_db(os.path.join(d, "n.db"), 2, 4)
    msgs = {r[0] for r in db.execute("SELECT message FROM markers WHERE message IS NOT NULL")}
    check("quote \" comma , newline \n cr \r tab \t" in msgs, "quote/comma/newline text lost")
    check(any(m.startswith("bad \ufffd\ufffd utf8") for m in msgs), "invalid UTF-8 kept raw")
    traceck.decode_pftrace(os.path.join(d, "n.pftrace"))
    traceck.check_json(os.path.join(d, "n.json"))
    rows = traceck.check_csv(os.path.join(d, "n_marker_api_trace.csv"))
    check({r[3] for r in rows[1:]} >= {m for m in msgs}, "CSV texts differ from the DB")


def case_placeholders(tmp):
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "-d", d, "-o",
         "%hostname%_%pid%_%ppid%_%rank%_%argv0%_%env{UPTI_TEST_WORD}%_%%",
         "--", UPTX_APP, "--iterations", "1"],
        env={"OMPI_COMM_WORLD_RANK": "5", "UPTI_TEST_WORD": "hello"})
    files = dbs_in(d)
    check(len(files) == 1, "files: %r" % files)
    db = db_of(files[0])
    pid, ppid, host, rank = db.execute("SELECT pid, ppid, hostname, rank FROM info_process").fetchone()
    want = "%s_%d_%d_5_upti-test-uptx-app_hello_%%.db" % (host, pid, ppid)
    check(os.path.basename(files[0]) == want, "%s != %s" % (os.path.basename(files[0]), want))
    check(rank == 5, "rank column")


def case_exit3(tmp):
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,pftrace", "-d", d, "-o", "e", "--",
         UPTX_APP, "--exit", "3", "--iterations", "5"], expect=3)
    check_marker_db(os.path.join(d, "e.db"), 2, 5)
    traceck.decode_pftrace(os.path.join(d, "e.pftrace"))


def case_exit_thread(tmp):
    """exit(3) from a worker thread while main waits: outputs complete, upti exits 3."""
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,json", "-d", d, "-o", "x", "--",
         UPTX_APP, "--exit-from-thread", "3", "--iterations", "5", "--threads", "1"], expect=3)
    db = db_of(os.path.join(d, "x.db"))
    check(one(db, "SELECT count(*) FROM markers WHERE message = 'exiting from a worker'") == 1,
          "the last mark before exit() is missing")
    # worker: name, start, 5 * 5, stop, final mark; main: name, category, push
    check(one(db, "SELECT count(*) FROM marker") == 3 + 25 + 1 + 3, "marker rows %d"
          % one(db, "SELECT count(*) FROM marker"))
    check(one(db, "SELECT end FROM info_process") is not None, "process end not written")
    check(one(db, "SELECT count(*) FROM regions WHERE name = 'main'") == 1,
          "main's open range not closed at exit")
    traceck.check_json(os.path.join(d, "x.json"))


def case_after_run(tmp):
    """A process the program left behind that starts tracing after `upti run` ended
    (its ring folder removed) says so in one line and runs untraced: it used to make
    the ring folder again and leave a ring in /dev/shm that nobody would ever drain."""
    d = os.path.join(tmp, "out")
    done, err, ringdir = (os.path.join(tmp, n) for n in ("done", "err", "ringdir"))
    # The background job waits for upti (the shell's parent) to end, then traces.
    script = ('(while kill -0 $PPID 2>/dev/null; do sleep 0.05; done; '
              'echo "$UPTI_TRACE_RING_DIR" > "$4"; "$1" --iterations 1 >/dev/null 2>"$2"; '
              'echo $? > "$3") </dev/null >/dev/null 2>&1 & exit 0')
    p = run([UPTI, "run", "--marker-trace", "-d", d, "-o", "late", "--", "/bin/sh", "-c", script,
             "sh", UPTX_APP, err, done, ringdir])
    for _ in range(1200):
        if os.path.exists(done) and open(done).read().strip():
            break
        time.sleep(0.05)
    check(open(done).read().strip() == "0", "the late program's exit: %r" % open(done).read())
    rings = open(ringdir).read().strip()
    check(rings.startswith("/") and not os.path.exists(rings),
          "the ring folder %r was made again after the run" % rings)
    lines = open(err).read().splitlines()
    check(len(lines) == 1 and lines[0].startswith("upti: ") and "not traced" in lines[0],
          "the late program's stderr: %r" % lines)
    check(not os.path.exists(os.path.join(d, "late.db")), "a trace appeared after the run")


def case_many_processes(tmp):
    """40 traced processes under one upti run whose soft limit of open files is 64
    (the hard one higher): while the spool is converted every process's database
    is open with two descriptors (SQLite's and its pages' spool), and the
    databases past the soft limit could not be created ('unable to open database
    file', the rest kept for upti recover). upti raises its soft limit to the hard
    one: every process gets its complete database, and upti says only what it
    wrote."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 256:
        print("SKIP: the hard limit of open files is %d" % hard)
        return SKIP
    n = 40
    d = os.path.join(tmp, "out")
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("UPTI_") and k not in ("OPENCL_LAYERS", "NVTX_INJECTION64_PATH")}
    script = 'for i in $(seq %d); do "$1" --iterations 1 --threads 1 >/dev/null & done; wait' % n
    p = subprocess.run([UPTI, "run", "--marker-trace", "-d", d, "-o", "p%pid%", "--", "/bin/sh",
                        "-c", script, "sh", UPTX_APP], env=e, capture_output=True, text=True,
                       errors="replace", timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)))
    paths = dbs_in(d) if os.path.isdir(d) else []
    check(p.returncode == 0 and len(paths) == n and
          sorted(upti_test.said(p.stderr)) == sorted("upti: wrote " + x for x in paths),
          "exit %d, %d databases (expected %d)\nstderr: %s" % (p.returncode, len(paths), n,
                                                               p.stderr[-2000:]))
    for path in paths:
        check_marker_db(path, 1, 1)


def case_long_command(tmp):
    """A command line of 100,000 bytes: the database keeps its first 1,023 (the shared
    ring's header, docs/database.md), under `upti run` as without it (the helper
    collector); both pass integrity_check."""
    d = os.path.join(tmp, "out")
    arg = "x" * 100000
    run([UPTI, "run", "--marker-trace", "-d", d, "-o", "c", "--", UPTX_APP, "--iterations", "1",
         "--threads", "1", arg])
    lib = os.path.join(BUILD, "lib", "libupti-trace.so")
    run([UPTX_APP, "--iterations", "1", "--threads", "1", arg],
        env={"UPTI_TOOL_LIBRARIES": lib, "UPTI_TRACE_KINDS": "all",
             "UPTI_TRACE_OUTPUT": os.path.join(d, "s")})
    want = UPTX_APP + " --iterations 1 --threads 1 " + arg
    for name, cut in (("c.db", 1023), ("s.db", 1023)):
        got = one(db_of(os.path.join(d, name)), "SELECT command FROM info_process")
        check(got == want[:cut], "%s: command of %d bytes, expected the first %d of %d"
              % (name, len(got), cut, len(want)))


def case_fork_exec(tmp):
    """A program that forks and execs another: two outputs, each its own process."""
    if ASAN_FORK:
        print("SKIP: fork + exec under this AddressSanitizer (its allocator is not fork-safe)")
        return SKIP
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "-d", d, "-o", "f", "--", UPTX_APP, "--fork-exec",
         UPTX_APP, "--iterations", "2"])
    files = dbs_in(d)
    check(len(files) == 2, "expected 2 databases, got %r" % files)
    procs = [db_of(f).execute("SELECT pid, ppid FROM info_process").fetchone() for f in files]
    parent = [p for p in procs if any(q[1] == p[0] for q in procs)]
    check(len(parent) == 1, "child's ppid is not the parent's pid: %r" % procs)
    for f in files:
        db = db_of(f)
        n = one(db, "SELECT count(*) FROM regions WHERE name = 'parent before fork'")
        if one(db, "SELECT pid FROM info_process") == parent[0][0]:
            check(n == 1, "parent's range missing")
        else:
            check(n == 0, "child inherited the parent's records")
            check_marker_db(f, 2, 2)
    # merge of the two runs holds both
    merged = os.path.join(tmp, "all.db")
    run([UPTI, "merge"] + files + ["-o", merged])
    m = db_of(merged)
    check(one(m, "SELECT count(*) FROM info_process") == 2, "merged processes")
    total = sum(one(db_of(f), "SELECT count(*) FROM marker") for f in files)
    check(one(m, "SELECT count(*) FROM marker") == total, "merged marker rows")
    check(one(m, "SELECT count(DISTINCT pid) FROM markers") == 2, "merged views by pid")
    run([UPTI, "export", merged, "--format", "pftrace,json,csv"])
    pf = traceck.decode_pftrace(os.path.join(tmp, "all.pftrace"))
    groups = [t for t in pf["tracks"].values() if "tid" not in t and "parent" not in t]
    check(len(groups) == 2, "merged timeline has %d process groups" % len(groups))
    traceck.check_json(os.path.join(tmp, "all.json"))
    traceck.check_csv(os.path.join(tmp, "all_region_trace.csv"))


DEFAULT_REPORTS = ["api_sum", "api_err_sum", "kern_sum", "mem_time_sum", "mem_size_sum",
                   "sync_sum", "marker_sum"]


def report_titles(text):
    """The report names of the '** Title (name):' lines of a table output, in order."""
    return re.findall(r"^\*\* .* \((\w+)\):$", text, re.M)


def case_stats(tmp):
    """--stats prints `upti stats`'s default reports per process, --stats-report chosen ones;
    upti stats without --report prints the same reports, in every format."""
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--marker-trace", "--stats", "-d", d, "-o", "s", "--", UPTX_APP,
             "--iterations", "7"])
    db = os.path.join(d, "s.db")
    head = [l for l in p.stderr.splitlines() if l.startswith("upti: summary of pid ")]
    check(len(head) == 1 and head[0].endswith(" (%s)" % db), "--stats heading: %r" % p.stderr)
    check(report_titles(p.stderr) == DEFAULT_REPORTS, "--stats reports: %r" % p.stderr)
    outer = one(db_of(db), "SELECT count(*) FROM regions WHERE name = 'outer'")
    check(outer == 14, "outer ranges in the database: %d" % outer)
    rows = [l.split() for l in p.stderr.splitlines() if l.endswith("  outer")]
    # marker_sum: Time (%), Total Time, Instances, Avg, Med, Min, Max, StdDev, Style, Range
    check(len(rows) == 1 and rows[0][2] == "14" and rows[0][8] == "PushPop",
          "--stats marker_sum row of outer: %r" % rows)
    text = run([UPTI, "stats", db]).stdout
    check(report_titles(text) == DEFAULT_REPORTS, "upti stats reports: %r" % text)
    check(text == run([UPTI, "stats", db, "--report", ",".join(DEFAULT_REPORTS)]).stdout,
          "upti stats differs from its default --report list")
    body = p.stderr[p.stderr.index("** API Summary"):]
    check(body.startswith(text), "--stats at exit differs from upti stats:\n%s\n%s" % (body, text))
    csv = run([UPTI, "stats", "--csv", db]).stdout
    check(csv.startswith("Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),"
                         "StdDev (ns),Name\n"), "stats --csv header: %r" % csv[:120])
    doc = json.loads(run([UPTI, "stats", db, "-f", "json"]).stdout)
    check([r["report"] for r in doc["reports"]] == DEFAULT_REPORTS, "stats -f json: %r" % doc)
    # --stats-report: these reports only, at exit and in NAME_stats.csv with --format csv.
    p = run([UPTI, "run", "--marker-trace", "--stats-report", "marker_sum,api_sum", "-f", "db,csv",
             "-d", d, "-o", "r", "--", UPTX_APP, "--iterations", "3"])
    check(report_titles(p.stderr) == ["marker_sum", "api_sum"], "--stats-report: %r" % p.stderr)
    with open(os.path.join(d, "r_stats.csv")) as f:
        want = run([UPTI, "stats", os.path.join(d, "r.db"), "--report", "marker_sum,api_sum",
                    "-f", "csv"]).stdout
        check(f.read() == want, "r_stats.csv differs from upti stats --report ... -f csv")
    for bad, word in (("kern", "unknown report 'kern'"), ("api_sum,", "empty report name in")):
        p = run([UPTI, "run", "--stats-report", bad, "--", "true"], expect=2)
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and lines[0].startswith("upti: run: --stats-report: " + word) and
              "(reports: api_sum, api_err_sum, kern_sum," in lines[0], "%r: %r" % (bad, p.stderr))
    # Without upti run: the helper collector prints UPTI_TRACE_STATS_REPORT's reports.
    env = dict(os.environ, UPTI_TOOL_LIBRARIES=upti_test.built(BUILD, "lib/libupti-trace.so")[0],
               UPTI_TRACE_STATS_REPORT="marker_sum", UPTI_TRACE_KINDS="marker_api",
               UPTI_TRACE_OUTPUT=os.path.join(d, "h"))
    p = subprocess.run([UPTX_APP, "--iterations", "2"], env=env, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0 and report_titles(p.stderr) == ["marker_sum"],
          "helper --stats-report: rc %d %r" % (p.returncode, p.stderr))
    # A bad list there is said once, and no report is printed.
    env.update(UPTI_TRACE_STATS_REPORT="bogus,api_sum", UPTI_TRACE_FORMATS="db,csv",
               UPTI_TRACE_OUTPUT=os.path.join(d, "hb"))
    p = subprocess.run([UPTX_APP, "--iterations", "2"], env=env, capture_output=True, text=True,
                       timeout=120)
    said = [l for l in p.stderr.splitlines() if "unknown report" in l]
    check(p.returncode == 0 and len(said) == 1 and said[0].startswith("upti: stats: unknown report "
          "'bogus' (reports: ") and report_titles(p.stderr) == [] and "summary of pid" not in
          p.stderr, "helper, bad UPTI_TRACE_STATS_REPORT: %r" % p.stderr)
    # NAME_stats.csv is upti's own: a second run or export replaces it.
    for _ in range(2):
        run([UPTI, "run", "--marker-trace", "--stats", "-f", "db,csv", "-d", d, "-o", "twice", "--",
             UPTX_APP, "--iterations", "1"])
        run([UPTI, "export", os.path.join(d, "twice.db"), "-f", "csv", "-o",
             os.path.join(d, "ex")])
    left = sorted(f for f in os.listdir(d) if f.startswith(("twice", "ex")))
    check("twice_stats.csv" in left and "ex_stats.csv" in left and
          not any(re.match(r"twice-\d+", f) for f in left), "second run and export: %r" % left)
    # A database written before API results were recorded (no apis.result): the
    # error report is empty, the others as before.
    old = os.path.join(d, "old.db")
    shutil.copyfile(os.path.join(d, "r.db"), old)
    con = sqlite3.connect(old)
    view = con.execute("SELECT sql FROM sqlite_master WHERE name = 'apis'").fetchone()[0]
    cols = [r[1] for r in con.execute("PRAGMA table_info(apis)") if r[1] != "result"]
    con.executescript("CREATE VIEW apis_full AS " + view.split(" AS ", 1)[1] + ";"
                      "DROP VIEW apis; CREATE VIEW apis AS SELECT %s FROM apis_full;" % ",".join(cols))
    con.close()
    text = run([UPTI, "stats", old]).stdout
    check(report_titles(text) == DEFAULT_REPORTS and
          "** API Error Summary (api_err_sum):\n\n(no data)\n" in text, "old database: %r" % text)


def case_cli_errors(tmp):
    for args in (["run", "--bogus", "--", "true"], ["run", "-o"], ["run"], ["stats"],
                 ["export", "x.db"], ["merge", "a.db"], ["nosuch"], ["--bogus"],
                 ["run", "--format", "xml", "--", "true"],
                 ["run", "--kernel-include-regex", "(", "--", "true"]):
        p = run([UPTI] + args, expect=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("upti: "), "%r: stderr %r" % (args, p.stderr))
    for args in (["--help"], ["help", "run"], ["run", "--help"], ["stats", "--help"],
                 ["export", "--help"], ["merge", "--help"], ["--version"]):
        p = run([UPTI] + args)
        check(p.stdout.strip() != "", "%r printed nothing" % args)
    h = run([UPTI, "run", "--help"]).stdout
    for opt in ("--opencl-trace", "--kernel-trace", "--memory-copy-trace", "--memory-alloc-trace",
                "--marker-trace", "--runtime-trace", "--sys-trace", "--stats", "--output-dir", "--output-file",
                "--format", "--kernel-include-regex", "--kernel-exclude-regex", "--list", "--args"):
        check(opt in h, "run --help lacks " + opt)
    run([UPTI, "run", "-d", os.path.join(tmp, "o"), "--", "/nonexistent/program"], expect=127)
    run([UPTI, "run", "-d", os.path.join(tmp, "o"), "--", "sh", "-c", "kill -TERM $$"],
        expect=128 + 15)
    run([UPTI, "run", "-d", os.path.join(tmp, "o"), "--", "sh", "-c", "exit 3"], expect=3)
    p = run([UPTI, "run", "-L"])
    check("MARKER_API" in p.stdout, "-L lists no kinds")


def case_nvtx(tmp):
    if not os.path.exists(NVTX_APP) or not os.path.exists(os.path.join(BUILD, "lib",
                                                                       "libupti-nvtx.so")):
        print("SKIP: NVTX v3 headers were not found at configure time")
        return SKIP
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--marker-trace", "--format", "db,pftrace,json,csv", "-d", d, "-o", "v",
         "--", NVTX_APP])
    db = db_of(os.path.join(d, "v.db"))
    regions = {r[0]: r[1:] for r in db.execute(
        "SELECT name, kind, depth, domain, category, color, payload_type, payload FROM regions")}
    check(set(regions) == {"outer", "inner", "worker push", 'registered "string", with comma',
                           "wide \u00fc\u20ac"}, "regions %r" % sorted(regions))
    check(regions["inner"][1] == 1 and regions["outer"][1] == 0, "push nesting")
    reg = regions['registered "string", with comma']
    check(reg[2] == 1 and reg[3] == 5 and reg[4] == 0xFF00FF00 and reg[5] == 1 and reg[6] == 42,
          "domain/category/colour/payload of the registered-string range: %r" % (reg,))
    check(regions["wide \u00fc\u20ac"][0] == "range", "start/end range kind")
    check(regions["wide \u00fc\u20ac"][5] == 3, "double payload type")
    marks = {r[0]: r[1:] for r in db.execute("SELECT message, payload_type, payload FROM markers"
                                             " WHERE operation = 'uptx_mark'")}
    check(set(marks) == {"plain mark", "worker mark", "domain mark"}, "marks %r" % marks)
    check(marks["domain mark"][1] == -7, "int32 payload")
    names = {r[0] for r in db.execute("SELECT name FROM threads")}
    check({"nvtx main", "nvtx worker"} <= names, "thread names %r" % names)
    cats = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT domain, category, s.string FROM info_category c JOIN string s ON s.id = c.name_id")}
    check(cats.get((0, 3)) == "category three" and cats.get((1, 0)) == "my domain"
          and cats.get((1, 5)) == "domain category five", "categories %r" % cats)
    traceck.decode_pftrace(os.path.join(d, "v.pftrace"))
    traceck.check_json(os.path.join(d, "v.json"))


# The OpenCL calls upti-test-ocl-e2e makes (see ocl_e2e.c), with N kern_a and M kern_b.
def expected_ocl_calls(n, m):
    return {"clGetPlatformIDs": 1, "clGetDeviceIDs": 1, "clCreateContext": 1,
            "clCreateCommandQueueWithProperties": 1, "clCreateProgramWithSource": 1,
            "clBuildProgram": 1, "clCreateKernel": 2, "clCreateBuffer": 2,
            "clEnqueueWriteBuffer": 1, "clSetKernelArg": 2, "clEnqueueNDRangeKernel": n + m,
            "clEnqueueCopyBuffer": 1, "clEnqueueReadBuffer": 1, "clFinish": 1,
            "clReleaseMemObject": 2, "clReleaseKernel": 2, "clReleaseProgram": 1,
            "clReleaseCommandQueue": 1, "clReleaseContext": 1}


def ocl_ready():
    """SKIP unless the OpenCL test program is built and finds a device (PoCL)."""
    return upti_test.ocl_ready(BUILD, OCL_APP)


def check_process_lifetime(db, table, cols=("start", "end")):
    start, end = db.execute("SELECT start, end FROM info_process").fetchone()
    check(end is not None and start is not None and end >= start, "process start/end not written")
    lo, hi = cols
    bad = one(db, "SELECT count(*) FROM %s WHERE %s > %s OR %s < ? OR %s > ?" % (table, lo, hi, lo,
                                                                              hi), start, end)
    check(bad == 0, "%d %s rows with end < start or outside the process's lifetime [%d, %d]"
          % (bad, table, start, end))


def case_opencl(tmp):
    """1000 enqueues under --sys-trace: exact kernel/API/copy rows; pftrace flows; JSON; CSV."""
    if not ocl_ready():
        return SKIP
    n = 1000
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--sys-trace", "--format", "db,pftrace,json,csv", "-d", d, "-o", "o",
             "--", OCL_APP, "--kernels", str(n)])
    check("ocl_e2e: a=%d b=0 sum=%d errors=0" % (n, sum(range(1024)) + 1024 * n) in p.stdout,
          "the program's result changed under upti: %r" % p.stdout)
    db = db_of(os.path.join(d, "o.db"))
    check(one(db, "SELECT count(*) FROM kernel_dispatch") == n, "kernel rows: %d"
          % one(db, "SELECT count(*) FROM kernel_dispatch"))
    check(one(db, "SELECT count(*) FROM kernels WHERE name = 'kern_a' AND grid_x = 1024"
                  " AND workgroup_x = 64 AND work_dim = 1") == n, "kernel names/grid")
    check(one(db, "SELECT count(DISTINCT correlation_id) FROM kernel_dispatch") == n,
          "kernel correlation ids not distinct")
    check_process_lifetime(db, "kernel_dispatch")
    check_process_lifetime(db, "memory_copy")
    check_process_lifetime(db, "api")
    calls = dict(db.execute("SELECT name, count(*) FROM apis GROUP BY name").fetchall())
    check(calls == expected_ocl_calls(n, 0), "API calls differ: %r" % calls)
    check(one(db, "SELECT count(*) FROM apis WHERE domain != 'OPENCL_API'") == 0, "API domain")
    # Each kernel is joined to its enqueue call.
    check(one(db, "SELECT count(*) FROM kernel_dispatch k JOIN apis a USING (correlation_id)"
                  " WHERE a.name = 'clEnqueueNDRangeKernel' AND a.start <= k.queued") == n,
          "kernels not correlated with their clEnqueueNDRangeKernel")
    copies = sorted(db.execute("SELECT c.direction, c.operation, c.bytes, a.name FROM memory_copies c"
                               " JOIN apis a USING (correlation_id)").fetchall())
    check(copies == [("DEVICE_TO_DEVICE", "COPY_BUFFER", 1024, "clEnqueueCopyBuffer"),
                     ("DEVICE_TO_HOST", "READ_BUFFER", 4096, "clEnqueueReadBuffer"),
                     ("HOST_TO_DEVICE", "WRITE_BUFFER", 4096, "clEnqueueWriteBuffer")],
          "copies: %r" % copies)
    check(one(db, "SELECT count(*) FROM memory_allocations WHERE operation = 'ALLOCATE'"
                  " AND size = 4096 AND type = 'BUFFER'") == 2, "allocations: %r"
          % db.execute("SELECT operation, type, size FROM memory_allocations").fetchall())
    check(one(db, "SELECT count(*) FROM memory_allocations WHERE operation = 'FREE'") == 2,
          "releases")
    agents = db.execute("SELECT type, runtime FROM info_agent").fetchall()
    check(("CPU", "opencl") in agents or any(a[1] == "opencl" for a in agents),
          "no OpenCL agent row: %r" % agents)
    # Perfetto: one flow per enqueue -> device operation, kernels on a queue track.
    pf = traceck.decode_pftrace(os.path.join(d, "o.pftrace"))
    check(pf["flows"] == n + 3, "pftrace flows %d != %d" % (pf["flows"], n + 3))
    by_flow_out = {f: s["name"] for s in pf["slices"] for f in s["flow_out"]}
    by_flow_in = {f: s["name"] for s in pf["slices"] for f in s["flow_in"]}
    check(set(by_flow_out) == set(by_flow_in), "flow ends differ")
    pairs = {}
    for f, src in by_flow_out.items():
        pairs[(src, by_flow_in[f])] = pairs.get((src, by_flow_in[f]), 0) + 1
    check(pairs == {("clEnqueueNDRangeKernel", "kern_a"): n,
                    ("clEnqueueWriteBuffer", "WRITE_BUFFER"): 1,
                    ("clEnqueueReadBuffer", "READ_BUFFER"): 1,
                    ("clEnqueueCopyBuffer", "COPY_BUFFER"): 1}, "flow pairs %r" % pairs)
    kslices = [s for s in pf["slices"] if s["name"] == "kern_a"]
    check(len(kslices) == n and all(len(s["flow_in"]) == 1 and s["end"] >= s["ts"]
                                    for s in kslices), "pftrace kernel slices")
    api_slices = [s for s in pf["slices"] if s["name"] in calls]
    check(len(api_slices) == sum(calls.values()), "pftrace API slices %d" % len(api_slices))
    doc, counts = traceck.check_json(os.path.join(d, "o.json"))
    check(counts["s"] == n + 3 and counts["f"] == n + 3, "JSON flows %r" % counts)
    check(sum(1 for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "kern_a") == n,
          "JSON kernel slices")
    rows = traceck.check_csv(os.path.join(d, "o_kernel_trace.csv"))
    check(len(rows) - 1 == n and all(r[rows[0].index("Kernel_Name")] == "kern_a" for r in rows[1:]),
          "CSV kernel rows")
    h = rows[0]
    check(all(int(r[h.index("End_Timestamp")]) >= int(r[h.index("Start_Timestamp")])
              for r in rows[1:]), "CSV kernel end < start")
    rows = traceck.check_csv(os.path.join(d, "o_api_trace.csv"))
    check(len(rows) - 1 == sum(calls.values()), "CSV API rows")
    rows = traceck.check_csv(os.path.join(d, "o_memory_copy_trace.csv"))
    h = rows[0]
    check(sorted((r[h.index("Direction")], int(r[h.index("Bytes")])) for r in rows[1:]) ==
          [("DEVICE_TO_DEVICE", 1024), ("DEVICE_TO_HOST", 4096), ("HOST_TO_DEVICE", 4096)],
          "CSV copies")
    traceck.check_csv(os.path.join(d, "o_memory_allocation_trace.csv"))


def case_opencl_regex(tmp):
    """--kernel-include-regex / --kernel-exclude-regex: exact kernel rows per name."""
    if not ocl_ready():
        return SKIP
    cases = (
        ([], {"kern_a": 7, "kern_b": 5}),
        (["--kernel-include-regex", "^kern_a$"], {"kern_a": 7}),
        (["--kernel-exclude-regex", "_a$"], {"kern_b": 5}),
        (["--kernel-include-regex", "kern_", "--kernel-exclude-regex", "b"], {"kern_a": 7}),
        (["--kernel-include-regex", "^nothing$"], {}),
    )
    for i, (opts, want) in enumerate(cases):
        d = os.path.join(tmp, "out%d" % i)
        run([UPTI, "run", "--kernel-trace", "--opencl-trace", "--format", "db,pftrace,json,csv",
             "-d", d, "-o", "r"] + opts + ["--", OCL_APP, "--kernels", "7", "--kernels-b", "5"])
        db = db_of(os.path.join(d, "r.db"))
        got = dict(db.execute("SELECT name, count(*) FROM kernels GROUP BY name").fetchall())
        check(got == want, "%r: kernels %r, expected %r" % (opts, got, want))
        # API calls are not filtered.
        check(one(db, "SELECT count(*) FROM apis WHERE name = 'clEnqueueNDRangeKernel'") == 12,
              "%r: enqueue API rows" % opts)
        pf = traceck.decode_pftrace(os.path.join(d, "r.pftrace"))
        for name in ("kern_a", "kern_b"):
            k = sum(1 for s in pf["slices"] if s["name"] == name)
            check(k == want.get(name, 0), "%r: %d %s slices in pftrace" % (opts, k, name))
        check(pf["flows"] == sum(want.values()), "%r: pftrace flows %d" % (opts, pf["flows"]))
        traceck.check_json(os.path.join(d, "r.json"))
        if want:
            rows = traceck.check_csv(os.path.join(d, "r_kernel_trace.csv"))
            check(len(rows) - 1 == sum(want.values()), "%r: CSV kernel rows" % opts)


def case_opencl_args(tmp):
    """--args: argument rows (name, type, printed value) per OpenCL call, joined to the call."""
    if not ocl_ready():
        return SKIP
    n = 5
    d = os.path.join(tmp, "out")
    run([UPTI, "run", "--args", "--kernel-trace", "--format", "db,csv", "-d", d, "-o", "g", "--",
         OCL_APP, "--kernels", str(n)])
    db = db_of(os.path.join(d, "g.db"))
    calls = dict(db.execute("SELECT name, count(*) FROM apis GROUP BY name").fetchall())
    check(calls == expected_ocl_calls(n, 0), "--args implies --opencl-trace: %r" % calls)
    check(one(db, "SELECT count(*) FROM arg WHERE api_id IS NULL") == 0, "args without a call")
    check(one(db, "SELECT count(*) FROM arg g JOIN api a ON a.id = g.api_id"
                  " WHERE a.correlation_id != g.correlation_id") == 0, "arg joined to another call")
    # clSetKernelArg(kernel, arg_index, arg_size, arg_value): 2 calls x 4 arguments.
    rows = db.execute("SELECT correlation_id, position, type, name, value FROM args"
                      " WHERE function = 'clSetKernelArg' ORDER BY correlation_id, position").fetchall()
    check(len(rows) == 8, "clSetKernelArg arg rows: %r" % rows)
    for i in range(2):
        r = rows[4 * i:4 * i + 4]
        check([x[1] for x in r] == [0, 1, 2, 3], "positions %r" % r)
        check([(x[2], x[3]) for x in r] == [("cl_kernel", "kernel"), ("cl_uint", "arg_index"),
                                            ("size_t", "arg_size"), ("const void *", "arg_value")],
              "clSetKernelArg types/names %r" % r)
        check(r[1][4] == "0" and r[2][4] == "8" and r[3][4].startswith("0x")
              and r[0][4].startswith("0x"), "clSetKernelArg values %r" % r)
    # clEnqueueNDRangeKernel: 9 arguments per call, arrays printed through one dereference.
    check(one(db, "SELECT count(*) FROM args WHERE function = 'clEnqueueNDRangeKernel'") == 9 * n,
          "clEnqueueNDRangeKernel arg rows")
    vals = db.execute("SELECT name, value, count(*) FROM args WHERE function ="
                      " 'clEnqueueNDRangeKernel' AND position BETWEEN 2 AND 6"
                      " GROUP BY name, value ORDER BY position").fetchall()
    check(vals == [("work_dim", "1", n), ("global_work_offset", "0x0", n),
                   ("global_work_size", "[1024]", n), ("local_work_size", "[64]", n),
                   ("num_events_in_wait_list", "0", n)], "clEnqueueNDRangeKernel values %r" % vals)
    names = sorted(r[0] for r in db.execute("SELECT value FROM args WHERE function ="
                                            " 'clCreateKernel' AND name = 'kernel_name'"))
    check(names == ["kern_a", "kern_b"], "clCreateKernel kernel_name %r" % names)
    # Output arguments are printed at EXIT: the error code written by the runtime.
    check(one(db, "SELECT count(*) FROM args WHERE name = 'errcode_ret' AND value = 'CL_SUCCESS'")
          == 1 + 1 + 1 + 2 + 2, "errcode_ret values %r" % db.execute(
              "SELECT function, value FROM args WHERE name = 'errcode_ret'").fetchall())
    # Every call has its arguments (clFinish(queue): 1 row).
    check(one(db, "SELECT count(*) FROM api a WHERE NOT EXISTS (SELECT 1 FROM arg g"
                  " WHERE g.api_id = a.id)") == 0, "calls without arguments")
    # Default: no arguments recorded.
    run([UPTI, "run", "--sys-trace", "-d", d, "-o", "noargs", "--", OCL_APP, "--kernels", "2"])
    check(one(db_of(os.path.join(d, "noargs.db")), "SELECT count(*) FROM arg") == 0,
          "arguments recorded without --args")
    # upti merge keeps the rows joined.
    merged = os.path.join(tmp, "m.db")
    run([UPTI, "merge", os.path.join(d, "noargs.db"), os.path.join(d, "g.db"), "-o", merged])
    m = db_of(merged)
    check(one(m, "SELECT count(*) FROM args WHERE function = 'clSetKernelArg'") == 8,
          "merged arg rows")
    check(one(m, "SELECT count(*) FROM arg g JOIN api a ON a.id = g.api_id"
                 " WHERE a.correlation_id != g.correlation_id") == 0, "merged args re-joined")


def case_list(tmp):
    """upti -L / upti run -L: kinds, operations and agents (the PoCL device with a program)."""
    for args in (["-L"], ["--list"], ["run", "-L"]):
        p = run([UPTI] + args)
        for word in ("MARKER_API", "OPENCL_API", "KERNEL_DISPATCH", "MEMORY_COPY",
                     "clEnqueueNDRangeKernel", "uptx_range_push", "agents:", "host CPU"):
            check(word in p.stdout, "%r lists no %s: %s" % (args, word, p.stdout))
    if not ocl_ready():
        return SKIP
    d = os.path.join(tmp, "out")
    for pre in (["run", "-L"], ["-L"]):
        p = run([UPTI] + pre + ["-d", d, "-o", "l", "--", OCL_APP, "--kernels", "2"]
                if pre[0] == "run" else [UPTI] + pre + ["--", OCL_APP, "--kernels", "2"])
        check("KERNEL_DISPATCH" in p.stdout and "clEnqueueNDRangeKernel" in p.stdout,
              "no kinds listed")
        check("ocl_e2e: a=2 " in p.stdout, "the program did not run")
        lines = upti_test.said(p.stderr)
        heads = [i for i, l in enumerate(lines) if l.startswith("upti: agents of pid ")]
        check(len(heads) == 1, "agents printed %d times: %s" % (len(heads), p.stderr))
        agents = lines[heads[0] + 1:]
        check(any(" opencl " in l for l in agents), "no OpenCL agent listed: %s" % p.stderr)
        # An empty vendor or driver version is left out (the host CPU has no driver).
        check(not any(", ;" in l or "(, " in l for l in agents), "empty fields: %s" % p.stderr)
    # The device listed is the one in the database (PoCL on this machine).
    db = db_of(os.path.join(d, "l.db"))
    name = one(db, "SELECT name FROM info_agent WHERE runtime = 'opencl'")
    check(name and any(name in l and " opencl " in l for l in agents),
          "device %r not listed: %r" % (name, agents))
    p = run([UPTI, "run", "-L", "-d", d, "-o", "l2", "--", OCL_APP, "--kernels", "1"])
    check(name in p.stderr, "device %r not listed: %s" % (name, p.stderr))

    # The list's reader gone (upti run -L -- app | head -1): upti used to die of
    # SIGPIPE before starting the program. The program runs, its status is
    # upti's, and the lost list is one line; the same on a full disk.
    ran = os.path.join(tmp, "ran")
    for how in ("closed pipe", "/dev/full"):
        if how == "closed pipe":
            r, w = os.pipe()
            os.close(r)
        else:
            w = os.open("/dev/full", os.O_WRONLY)
        p = subprocess.run([UPTI, "run", "-L", "--", "/bin/sh", "-c", 'touch "$0"; exit 4', ran],
                           stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
        os.close(w)
        check(p.returncode == 4, "%s: exit %d, expected the program's 4 (%s)"
              % (how, p.returncode, p.stderr))
        check(os.path.exists(ran), "%s: the program did not run" % how)
        os.unlink(ran)
        lines = [l for l in upti_test.said(p.stderr) if "standard output" in l]
        check(len(lines) == 1 and lines[0].startswith("upti: cannot write the standard output"),
              "%s: stderr %r" % (how, p.stderr))


def case_signal(tmp):
    """SIGINT/SIGTERM sent to `upti` reach the program, which ends as it would untraced (no
    handler of UPTI's in it): the trace holds every call it made, also after a signal it survives."""
    if not ocl_ready():
        return SKIP
    import signal as sig
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("UPTI_") or k in ("OPENCL_LAYERS", "NVTX_INJECTION64_PATH"):
            del e[k]
    cases = ((sig.SIGINT, [], 128 + sig.SIGINT), (sig.SIGTERM, [], 128 + sig.SIGTERM),
             (sig.SIGINT, ["--own-handler"], 0), ("group", [], 128 + sig.SIGINT))
    for i, (signum, opts, want_rc) in enumerate(cases):
        # "group": a terminal's Ctrl+C, SIGINT to upti and the program (so twice to the program).
        d = os.path.join(tmp, "out%d" % i)
        p = subprocess.Popen([UPTI, "run", "--sys-trace", "--format", "db,pftrace,json", "-d", d,
                              "-o", "s", "--", OCL_APP, "--until-signal"] + opts, env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        line = p.stdout.readline()
        check(line.strip() == "looping", "program did not start: %r" % line)
        if signum == "group":
            os.killpg(p.pid, sig.SIGINT)
        else:
            p.send_signal(signum)  # to upti only: it forwards to the program
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Fail("%s: upti did not end after the signal" % signum)
        check(p.returncode == want_rc, "%s %r: upti exit %d, expected %d; stderr %s"
              % (signum, opts, p.returncode, want_rc, err))
        if opts:
            check("handler ran" in out, "the program's own handler was not called: %r" % out)
        db = db_of(os.path.join(d, "s.db"))
        check(one(db, "SELECT end FROM info_process") is not None, "process end not written")
        n_api = one(db, "SELECT count(*) FROM apis WHERE name = 'clEnqueueNDRangeKernel'")
        n_fin = one(db, "SELECT count(*) FROM apis WHERE name = 'clFinish'")
        n_k = one(db, "SELECT count(*) FROM kernel_dispatch")
        check(n_api >= 1 and n_fin >= 1, "no loop iterations recorded")
        if opts:
            # The program survives the signal: the trace goes on to its end
            # (the loop's calls, then one more clFinish after it; before the
            # program only recorded, the trace ended at the signal).
            check(n_k == n_api and n_fin == n_api + 1,
                  "survived: kernels %d, enqueues %d, finishes %d" % (n_k, n_api, n_fin))
            check(one(db, "SELECT count(*) FROM apis WHERE name = 'clReleaseProgram'") == 1,
                  "the calls after the signal are not traced")
        else:
            # Every finished iteration's kernel is there (the last enqueue may be cut short).
            check(n_fin <= n_k <= n_api, "kernels %d, enqueues %d, finishes %d" % (n_k, n_api, n_fin))
        check_process_lifetime(db, "kernel_dispatch")
        check_process_lifetime(db, "api")
        pf = traceck.decode_pftrace(os.path.join(d, "s.pftrace"))
        check(sum(1 for s in pf["slices"] if s["name"] == "kern_a") == n_k, "pftrace kernels")
        traceck.check_json(os.path.join(d, "s.json"))


def marker_db(tmp, name, iterations=3, fmt="db"):
    """A real trace database of the uptx app (2 threads), in tmp/NAME.db."""
    run([UPTI, "run", "--marker-trace", "--format", fmt, "-d", tmp, "-o", name, "--", UPTX_APP,
         "--iterations", str(iterations)])
    return os.path.join(tmp, name + ".db")


def one_upti_line(p, what):
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("upti: "), "%s: stderr %r" % (what, p.stderr))
    return lines[0]


def case_merge_same_file(tmp):
    """upti merge ./a.db b.db -o a.db: refused (usage error) before anything is touched."""
    a = marker_db(tmp, "a")
    b = marker_db(tmp, "b")
    before = open(a, "rb").read()
    for out in ("a.db", "./a.db", os.path.join(tmp, "a.db")):
        p = subprocess.run([UPTI, "merge", "./a.db", "b.db", "-o", out], cwd=tmp,
                           capture_output=True, text=True)
        check(p.returncode == 2, "-o %s: exit %d, expected 2 (%s)" % (out, p.returncode, p.stderr))
        line = one_upti_line(p, "-o " + out)
        check("is the input ./a.db" in line, "message: %r" % line)
        check(open(a, "rb").read() == before, "a.db changed by the refused merge -o %s" % out)
    # One input given twice (under any name) would double every row: refused.
    for again in ("a.db", "./a.db", os.path.join(tmp, "a.db")):
        p = subprocess.run([UPTI, "merge", "a.db", "b.db", again, "-o", "m"], cwd=tmp,
                           capture_output=True, text=True)
        check(p.returncode == 2, "a.db b.db %s: exit %d, expected 2 (%s)" % (again, p.returncode, p.stderr))
        line = one_upti_line(p, "a.db b.db " + again)
        check("the input %s is a.db, given before" % again in line, "message: %r" % line)
        check(not os.path.exists(os.path.join(tmp, "m.db")), "a merge of a.db twice was written")
    # A hard link is the same file under another name.
    os.link(a, os.path.join(tmp, "hard.db"))
    p = subprocess.run([UPTI, "merge", "a.db", "b.db", "-o", "hard.db"], cwd=tmp,
                       capture_output=True, text=True)
    check(p.returncode == 2, "hard link: exit %d" % p.returncode)
    check(open(a, "rb").read() == before, "a.db changed through its hard link")
    # An input under the output's working name (OUTPUT.db.part, as a killed run
    # leaves it) is refused too: the merge used to delete it before starting.
    part = os.path.join(tmp, "p.db.part")
    shutil.copyfile(a, part)
    for fmt in ("db", "json"):
        p = subprocess.run([UPTI, "merge", "p.db.part", "b.db", "-o", "p", "-f", fmt], cwd=tmp,
                           capture_output=True, text=True)
        check(p.returncode == 2, "input p.db.part, -o p -f %s: exit %d, expected 2 (%s)"
              % (fmt, p.returncode, p.stderr))
        line = one_upti_line(p, "input p.db.part")
        check("is the input p.db.part" in line, "message: %r" % line)
        check(os.path.exists(part) and open(part, "rb").read() == before,
              "-f %s: the input p.db.part was removed or changed" % fmt)
    # A merge that fails leaves no output and no .part.
    p = subprocess.run([UPTI, "merge", "a.db", "nosuch.db", "-o", "m.db"], cwd=tmp,
                       capture_output=True, text=True)
    check(p.returncode == 1, "missing input: exit %d" % p.returncode)
    check(not os.path.exists(os.path.join(tmp, "m.db")) and
          not os.path.exists(os.path.join(tmp, "m.db.part")), "failed merge left a file")
    # A merge of that name being written by another upti (it holds the flock of its
    # m.db.part) is left alone: the second merge used to unlink it and start anew.
    import fcntl
    busy = os.path.join(tmp, "m.db.part")
    with open(busy, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        p = subprocess.run([UPTI, "merge", "a.db", "b.db", "-o", "m"], cwd=tmp,
                           capture_output=True, text=True)
        ino = os.fstat(f.fileno()).st_ino
    check(p.returncode == 1, "merge onto a busy .part: exit %d (%s)" % (p.returncode, p.stderr))
    line = one_upti_line(p, "merge onto a busy .part")
    check("another upti is writing it" in line, line)
    check(os.path.exists(busy) and os.stat(busy).st_ino == ino, "the busy m.db.part was removed")
    check(not os.path.exists(os.path.join(tmp, "m.db")), "m.db written beside a busy .part")
    os.unlink(busy)
    run([UPTI, "merge", a, b, "-o", os.path.join(tmp, "m.db")])
    check(one(db_of(os.path.join(tmp, "m.db")), "SELECT count(*) FROM info_process") == 2,
          "merged processes")
    check(one(db_of(os.path.join(tmp, "m.db")), "PRAGMA application_id") == 0x55505449,
          "merged database without UPTI's application_id")
    # A merge without db in -f writes the other formats from a working file: the
    # m.db of an earlier merge stays (it was replaced, then removed).
    m = os.path.join(tmp, "m.db")
    before = open(m, "rb").read()
    run([UPTI, "merge", a, "-o", os.path.join(tmp, "m"), "-f", "json"])
    check(os.path.exists(m) and open(m, "rb").read() == before,
          "merge -f json replaced or removed the earlier m.db")
    check(not os.path.exists(m + ".part"), "merge -f json left m.db.part")
    doc, _ = traceck.check_json(os.path.join(tmp, "m.json"))
    check(len({e.get("pid") for e in doc["traceEvents"] if e.get("ph") == "X"}) == 1,
          "m.json is not the merge of one input")


def case_corrupt(tmp):
    """A database whose record pages are damaged: stats and export fail in one line (exit 1)
    and leave no output, not even a partial one."""
    path = marker_db(tmp, "c", iterations=2000)
    db = db_of(path)
    page = one(db, "PRAGMA page_size")
    pages = one(db, "PRAGMA page_count")
    root = one(db, "SELECT rootpage FROM sqlite_master WHERE name = 'marker'")
    db.close()
    check(pages > root + 8, "database too small to damage: %d pages" % pages)
    with open(path, "r+b") as f:  # the pages after the marker table's root: its rows
        for k in range(root + 2, pages - 6):
            f.seek((k - 1) * page)
            f.write(bytes((i * 37 + 11) & 0xFF for i in range(page)))
    p = run([UPTI, "stats", path], expect=1)
    one_upti_line(p, "stats")
    check(p.stdout == "", "stats printed a partial summary: %r" % p.stdout[:200])
    for fmt, files in (("json", ["c.json"]), ("pftrace", ["c.pftrace"]),
                       ("csv", ["c_marker_api_trace.csv", "c_region_trace.csv"])):
        p = run([UPTI, "export", path, "--format", fmt], expect=1)
        one_upti_line(p, "export " + fmt)
        for f in files:
            for name in (f, f + ".part"):
                check(not os.path.exists(os.path.join(tmp, name)),
                      "export %s left %s" % (fmt, name))
    out = os.path.join(tmp, "m.db")
    p = run([UPTI, "merge", path, "-o", out], expect=1)
    one_upti_line(p, "merge")
    check(not os.path.exists(out) and not os.path.exists(out + ".part"), "merge left an output")
    # A database cut short (a copy interrupted, a full disk): said to be damaged, not
    # "not an upti trace database" (which sent the user looking for another file).
    cut = os.path.join(tmp, "cut.db")
    shutil.copyfile(marker_db(tmp, "whole", iterations=2000), cut)
    os.truncate(cut, os.path.getsize(cut) // 2)
    before = open(cut, "rb").read()
    for args in (["stats", cut], ["export", cut, "-f", "json"], ["merge", cut, "-o", out]):
        p = run([UPTI] + args, expect=1)
        line = one_upti_line(p, args[0] + " of a cut database")
        check(line == "upti: %s is damaged (database disk image is malformed)" % cut,
              "%s: %r" % (args[0], line))
    check(open(cut, "rb").read() == before, "the cut database was changed")


def upti_lines(p):
    return [l for l in upti_test.said(p.stderr) if l.startswith("upti:")]


def case_outputs_said(tmp):
    """upti run ends with one "upti: wrote PATH" per output (without --stats too), then one
    summary line (processes, records, drops, time span, outputs); says when nothing was
    traced, leaves no empty trace of an exec'd child, and survives SIGXFSZ."""
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--marker-trace", "--format", "db,json,csv", "-d", d, "-o", "o", "--",
             UPTX_APP, "--iterations", "2"])
    want = ["upti: wrote " + os.path.join(d, f) for f in
            ("o.db", "o.json", "o_marker_api_trace.csv", "o_region_trace.csv")]
    check(upti_lines(p) == want, "stderr %r, expected %r" % (upti_lines(p), want))
    db = sqlite3.connect(os.path.join(d, "o.db"))
    records = int(db.execute("SELECT value FROM metadata WHERE key = 'records_written'").fetchone()[0])
    start, end = db.execute("SELECT start, end FROM info_process").fetchone()
    db.close()
    summary = ("upti: traced 1 process: %d records, 0 dropped, %.3f s; 4 outputs"
               % (records, (end - start) / 1e9))
    lines = [l for l in p.stderr.splitlines() if l.startswith("upti:")]
    check(lines == want + [summary] and records > 0, "summary: %r, expected %r" % (lines[-1:], summary))
    e = os.path.join(tmp, "empty")
    p = run([UPTI, "run", "-d", e, "--", "sh", "-c", "exit 0"])
    check(upti_lines(p) == ["upti: no OpenCL, Vulkan, uptx or NVTX use seen: no trace written"],
          "untraced program: stderr %r" % p.stderr)
    check(os.listdir(e) == [], "untraced program left %r" % os.listdir(e))
    # SIGXFSZ (a file size limit hit) does not kill upti run itself.
    p = run([UPTI, "run", "-d", e, "--", "sh", "-c", "kill -XFSZ $PPID; exit 4"], expect=4)
    # A child that execs a program using no runtime leaves no trace of its own.
    if ASAN_FORK:
        print("note: fork + exec part not run under AddressSanitizer")
        return 0
    f = os.path.join(tmp, "fork")
    p = run([UPTI, "run", "--marker-trace", "-d", f, "-o", "f", "--", UPTX_APP, "--fork-exec",
             "/bin/true", "--iterations", "2"])
    check(upti_lines(p) == ["upti: wrote " + os.path.join(f, "f.db")],
          "fork + exec of an untraced program: stderr %r" % p.stderr)
    check(sorted(os.listdir(f)) == ["f.db"], "outputs %r" % os.listdir(f))


def case_log_level(tmp):
    """--log-level: debug shows how many loaded objects the tool discovery looked in, the tool
    found, the tools configured and the runtime registered before the "wrote" line; error shows
    the "wrote" line only (as the default does); an unknown level is one usage line and exit 2,
    before anything runs."""
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--log-level", "debug", "--marker-trace", "-d", d, "-o", "o", "--",
             UPTX_APP, "--iterations", "2"])
    lines = upti_lines(p)
    lib = os.path.join(BUILD, "lib", "libupti-trace.so")
    want = ["upti: tool discovery: looked in K of N loaded objects for upti_configure",
            "upti: tool 1 found: upti_configure in " + lib,
            "upti: 1 tool(s) configured, of 1 found",
            "upti: runtime 'uptx' registered (version N, 1 table(s))",
            "upti: wrote " + os.path.join(d, "o.db")]
    # the uptx table's version is uptx_table.h's, whatever it is now
    lines = [re.sub(r"\(version \d+,", "(version N,", l) for l in lines]
    # how many objects the program loads depends on the build (a sanitizer's runtime, ...)
    looked = [re.match(r"upti: tool discovery: looked in (\d+) of (\d+) ", l) for l in lines]
    check(any(m and int(m.group(1)) < int(m.group(2)) for m in looked),
          "debug: the discovery looked in every loaded object: %r" % lines)
    lines = [re.sub(r"looked in \d+ of \d+ ", "looked in K of N ", l) for l in lines]
    check(lines == want, "debug: stderr %r, expected %r" % (lines, want))
    p = run([UPTI, "run", "--log-level", "error", "--marker-trace", "-d", d, "-o", "e", "--",
             UPTX_APP, "--iterations", "2"])
    check(upti_lines(p) == ["upti: wrote " + os.path.join(d, "e.db")],
          "error: stderr %r" % p.stderr)
    p = run([UPTI, "run", "--log-level", "loud", "-d", d, "-o", "x", "--", UPTX_APP], expect=2)
    check(upti_lines(p) == ["upti: run: --log-level 'loud' is not none, error, warning, info or "
                            "debug (see 'upti run --help')"], "bad level: stderr %r" % p.stderr)
    check(not os.path.exists(os.path.join(d, "x.db")), "bad level: the program ran")


def case_in_use(tmp):
    """stats and export of a database being written name the process writing it; under
    `upti run` a database does not exist before the program ended."""
    d = os.path.join(tmp, "out")
    db = os.path.join(d, "u.db")
    log = os.path.join(tmp, "log")
    script = '"$0" stats "$1" >"$2" 2>&1; "$0" export "$1" --format json >>"$2" 2>&1; exit 0'
    if ASAN_FORK:  # the fork + exec part is left to the plain and TSan runs
        print("note: fork + exec part not run under AddressSanitizer")
        db = marker_db(d, "u")
    else:
        run([UPTI, "run", "--marker-trace", "-d", d, "-o", "u", "--", UPTX_APP, "--fork-exec",
             "/bin/sh", "-c", script, UPTI, db, log, "--iterations", "2"])
        # The program only records: its database appears once it ended, whole; a
        # reader during the run finds none (never a half-written one).
        lines = open(log).read().splitlines()
        check(len(lines) == 2 and all(l.startswith("upti: cannot open %s" % db) for l in lines),
              "while the program runs: %r" % lines)
        check(not os.path.exists(os.path.join(d, "u.json")), "export wrote from a database in use")
        run([UPTI, "stats", db])  # once its process ended
    # Any process holding the writer's lock (an exclusive flock) is named: here, this one.
    import fcntl
    with open(db, "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        p = run([UPTI, "stats", db], expect=1)
        check(one_upti_line(p, "stats") == "upti: %s is in use by pid %d (its trace is still "
              "being written)" % (db, os.getpid()), "flock held by the test: %r" % p.stderr)
        # upti merge -o onto a database being written: not replaced (it was: the
        # writer's whole trace went on into an unlinked file and was lost).
        other = marker_db(tmp, "other")
        before = open(db, "rb").read()
        p = run([UPTI, "merge", other, "-o", db], expect=1)
        check(one_upti_line(p, "merge") == "upti: %s is in use by pid %d (its trace is still "
              "being written): not replaced (choose another -o)" % (db, os.getpid()),
              "merge onto a database in use: %r" % p.stderr)
        check(open(db, "rb").read() == before and os.fstat(f.fileno()).st_nlink == 1,
              "merge replaced a database in use")
        check(not os.path.exists(db + ".part"), "merge left %s.part" % db)
    run([UPTI, "stats", db])


def case_overwrite(tmp):
    """A run replaces only what it writes, and only files upti wrote."""
    d = os.path.join(tmp, "out")
    x = marker_db(d, "x")
    check(one(db_of(x), "PRAGMA application_id") == 0x55505449, "no application_id")
    before = open(x, "rb").read()
    p = run([UPTI, "run", "--marker-trace", "--format", "json", "-d", d, "-o", "x", "--",
             UPTX_APP, "--iterations", "2"])
    check(open(x, "rb").read() == before, "a json-only run changed x.db")
    check(upti_lines(p) == ["upti: wrote " + os.path.join(d, "x.json")], "stderr %r" % p.stderr)
    check(sorted(os.listdir(d)) == ["x.db", "x.json"], "outputs %r" % os.listdir(d))
    # Files upti did not write are kept; the trace goes to NAME-PID.
    for name, ext, fmt in (("y", ".db", "db"), ("z", ".json", "json"), ("w", ".pftrace", "pftrace")):
        path = os.path.join(d, name + ext)
        open(path, "w").write("precious\n")
        p = run([UPTI, "run", "--marker-trace", "--format", fmt, "-d", d, "-o", name, "--",
                 UPTX_APP, "--iterations", "2"])
        check(open(path).read() == "precious\n", "%s replaced" % path)
        lines = upti_lines(p)
        check(len(lines) == 2 and lines[0].startswith("upti: %s exists and was not written by "
              "upti: not replaced" % path), "refusal of %s: %r" % (path, lines))
        alt = lines[1][len("upti: wrote "):]
        check(lines[1].startswith("upti: wrote " + os.path.join(d, name + "-")) and
              alt.endswith(ext) and os.path.exists(alt), "where the trace went: %r" % lines)
    y = os.path.join(d, "y.db")
    run([UPTI, "run", "--marker-trace", "--force-overwrite", "-d", d, "-o", "y", "--", UPTX_APP,
         "--iterations", "2"])
    check(one(db_of(y), "PRAGMA application_id") == 0x55505449, "--force-overwrite kept y.db")
    open(y, "w").write("precious\n")
    run([UPTI, "run", "--marker-trace", "-d", d, "-o", "y", "--", UPTX_APP, "--iterations", "2"],
        env={"UPTI_TRACE_FORCE_OVERWRITE": "1"})
    check(one(db_of(y), "PRAGMA application_id") == 0x55505449,
          "UPTI_TRACE_FORCE_OVERWRITE=1 kept y.db")
    # A database of an older upti (no application_id) is still upti's.
    con = db_of(x)
    con.execute("PRAGMA application_id = 0")
    con.commit()
    con.close()
    p = run([UPTI, "run", "--marker-trace", "-d", d, "-o", "x", "--", UPTX_APP, "--iterations",
             "3"])
    check(upti_lines(p) == ["upti: wrote " + x], "older database: %r" % p.stderr)
    check_marker_db(x, 2, 3)
    # export refuses a file it did not write.
    e = os.path.join(d, "e.json")
    open(e, "w").write("precious\n")
    p = run([UPTI, "export", x, "--format", "json", "-o", os.path.join(d, "e")], expect=1)
    one_upti_line(p, "export over a foreign file")
    check(open(e).read() == "precious\n", "export replaced e.json")


def case_leftover_temp(tmp):
    """A stale unfinished file (.part) is replaced by the run's complete one; a killed program
    leaves none."""
    d = os.path.join(tmp, "out")
    os.makedirs(d)
    # Left by an earlier run killed while writing: replaced by this run's complete file.
    stale = os.path.join(d, "s.json.part")
    open(stale, "w").write('{"otherData":{"writer":"upti"},"traceEvents":[\n{"na')
    run([UPTI, "run", "--marker-trace", "--format", "json", "-d", d, "-o", "s", "--", UPTX_APP,
         "--iterations", "2"])
    check(sorted(os.listdir(d)) == ["s.json"], "outputs %r" % os.listdir(d))
    traceck.check_json(os.path.join(d, "s.json"))
    # A .part that another upti is writing now (it holds the file's flock) is not
    # taken: two exports to one name at once used to unlink each other's .part, and
    # the first to finish renamed the other's half-written file to the final name.
    import fcntl
    busy = os.path.join(d, "b.json.part")
    src = marker_db(tmp, "src")
    with open(busy, "w") as f:
        f.write('{"otherData":{"writer":"upti"},"traceEvents":[\n')
        f.flush()
        fcntl.flock(f, fcntl.LOCK_EX)
        p = run([UPTI, "export", src, "-f", "json", "-d", d, "-o", "b"], expect=None)
        ino = os.fstat(f.fileno()).st_ino
    check(p.returncode != 0, "export onto a .part being written: exit 0")
    check(os.path.exists(busy) and os.stat(busy).st_ino == ino,
          "the .part being written was removed")
    check(not os.path.exists(os.path.join(d, "b.json")), "b.json written beside a busy .part")
    line = one_upti_line(p, "export onto a busy .part")
    check(busy in line and "another upti is writing it" in line, line)
    os.unlink(busy)
    if ASAN_FORK:
        print("note: fork + exec part not run under AddressSanitizer")
        return 0
    # A json-only program killed before its end: k.json holds what it recorded (the
    # program only records; upti writes k.json after it), no working file is left.
    p = run([UPTI, "run", "--marker-trace", "--format", "json", "-d", d, "-o", "k", "--",
             UPTX_APP, "--fork-exec", "/bin/sh", "-c", "sleep 1; kill -KILL $PPID",
             "--iterations", "2"], expect=137)
    k = os.path.join(d, "k.json")
    lines = upti_lines(p)
    check(lines == ["upti: wrote " + k], "stderr %r" % lines)
    check(sorted(os.listdir(d)) == ["k.json", "s.json"], "outputs %r" % os.listdir(d))
    doc, _ = traceck.check_json(k)
    check(any(e.get("name") == "parent before fork" for e in doc["traceEvents"]),
          "the recovered range is not in k.json")


def case_failed_flows(tmp):
    """Commands that never ran (failed through a user event) have no device slice and
    start no flow: every flow of the timelines ends (2 began and never ended)."""
    if not ocl_ready() or not os.path.exists(OCL_EVENTS):
        return SKIP
    d = os.path.join(tmp, "out")
    subprocess.run([UPTI, "run", "--format", "db,pftrace,json", "-d", d, "-o", "e", "--",
                    OCL_EVENTS], capture_output=True, timeout=120)
    db = db_of(os.path.join(d, "e.db"))
    never = one(db, "SELECT (SELECT count(*) FROM kernel_dispatch WHERE start = 0)"
                    " + (SELECT count(*) FROM memory_copy WHERE start = 0)")
    ran = one(db, "SELECT (SELECT count(*) FROM kernel_dispatch WHERE start > 0)"
                  " + (SELECT count(*) FROM memory_copy WHERE start > 0)")
    check(never == 2 and ran == 7, "commands that never ran %d, ran %d" % (never, ran))
    pf = traceck.decode_pftrace(os.path.join(d, "e.pftrace"))
    check(pf["flows"] == ran, "pftrace flows %d, commands that ran %d" % (pf["flows"], ran))
    doc, counts = traceck.check_json(os.path.join(d, "e.json"))
    check(counts["s"] == ran and counts["f"] == ran, "JSON flows %r, commands that ran %d"
          % (counts, ran))


def case_concurrent_runs(tmp):
    """Three upti runs at once with one output name (one per MPI rank, say): none
    replaces another's trace. One writes NAME.db, the others NAME-PID.db and say so."""
    go = os.path.join(tmp, "go")
    prog = "while [ ! -e '%s' ]; do sleep 0.01; done; exec '%s' --iterations 500" % (go, UPTX_APP)
    runs = [subprocess.Popen([UPTI, "run", "--marker-trace", "-d", tmp, "-o", "same", "--",
                              "sh", "-c", prog], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE) for _ in range(3)]
    time.sleep(1.0)  # every run has started its session
    open(go, "w").close()
    errs = [p.communicate(timeout=120)[1].decode(errors="replace") for p in runs]
    check(all(p.returncode == 0 for p in runs), "exit status: %r" % [p.returncode for p in runs])
    dbs = sorted(f for f in os.listdir(tmp) if f.endswith(".db"))
    check(len(dbs) == 3 and "same.db" in dbs, "databases: %r" % dbs)
    counts = [one(db_of(os.path.join(tmp, f)), "SELECT count(*) FROM marker") for f in dbs]
    check(len(set(counts)) == 1 and counts[0] >= 2 * 500 * 5, "marker rows: %r" % counts)
    said = [l for e in errs for l in e.splitlines() if "written by another upti run" in l]
    check(len(said) == 2, "lines about the other runs: %r" % errs)


def case_stuck_commands(tmp):
    """A program that ends with commands that can never run (behind a user event never
    set): its output and status are its own; each such command has a record whose
    status (> 0) is the last one seen, with no device times; kernels_incomplete counts
    the kernels. (Its exit waited 2 s for them; now 100 ms without progress: not timed here.)"""
    if not ocl_ready() or not os.path.exists(OCL_STUCK):
        return SKIP
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--sys-trace", "-d", d, "-o", "s", "--", OCL_STUCK])
    check(p.stdout == "ocl_stuck: 3 kernels and a read left behind a user event\n",
          "output: %r" % p.stdout)
    db = db_of(os.path.join(d, "s.db"))
    check(one(db, "SELECT count(*) FROM kernel_dispatch WHERE status > 0 AND start = 0"
                  " AND end = 0") == 3, "kernel rows never completed")
    check(one(db, "SELECT count(*) FROM kernel_dispatch") == 3, "kernel rows")
    check(one(db, "SELECT count(*) FROM memory_copy WHERE status > 0 AND start = 0") == 1,
          "the read never completed")
    check(one(db, "SELECT value FROM metadata WHERE key = 'kernels_incomplete'") == "3",
          "kernels_incomplete")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    return upti_test.run_case(CASES, sys.argv[2], "upti-cli", needed=(UPTI, UPTX_APP, SYNTH))


if __name__ == "__main__":
    sys.exit(main())
