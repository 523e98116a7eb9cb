#!/usr/bin/env python3
"""End-to-end tests of `upti`, libupti-trace.so, the writers and NVTX capture.

  test_cli.py BUILD_DIR CASE

Each case runs programs under `upti run`, reads every output back (sqlite3,
the protobuf decoder and JSON/CSV parsers of traceck.py) and checks exact
counts. Exit 0 = pass, 1 = fail, 77 = skipped (something it needs is absent).
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traceck  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI = os.path.join(BUILD, "bin", "upti")
UPTX_APP = os.path.join(BUILD, "bin", "upti-test-uptx-app")
NVTX_APP = os.path.join(BUILD, "bin", "upti-test-nvtx-app")
SYNTH = os.path.join(BUILD, "bin", "upti-synth")
SKIP = 77


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def run(args, env=None, expect=0):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("UPTI_") or k in ("OPENCL_LAYERS", "NVTX_INJECTION64_PATH"):
            del e[k]
    e.update(env or {})
    p = subprocess.run(args, env=e, capture_output=True, text=True, errors="replace", timeout=120)
    if expect is not None and p.returncode != expect:
        raise Fail("%s: exit %d, expected %d\nstdout: %s\nstderr: %s"
                   % (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def db_of(path):
    return sqlite3.connect(path)


def one(db, sql, *args):
    return db.execute(sql, args).fetchone()[0]


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


def case_fork_exec(tmp):
    """A program that forks and execs another: two outputs, each its own process."""
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


def case_stats(tmp):
    d = os.path.join(tmp, "out")
    p = run([UPTI, "run", "--marker-trace", "--stats", "-d", d, "-o", "s", "--", UPTX_APP,
             "--iterations", "7"])
    check("Marker ranges" in p.stderr, "--stats printed no summary: %s" % p.stderr)
    p = run([UPTI, "stats", os.path.join(d, "s.db")])
    line = [l for l in p.stdout.splitlines() if l.startswith("outer ")]
    check(len(line) == 1 and line[0].split()[1] == "14", "outer calls in stats: %r" % line)
    p = run([UPTI, "stats", "--csv", os.path.join(d, "s.db")])
    check(p.stdout.startswith("Domain,Name,Calls,"), "stats --csv header")


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
                "--marker-trace", "--sys-trace", "--stats", "--output-dir", "--output-file",
                "--format", "--kernel-include-regex", "--kernel-exclude-regex", "--list"):
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


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    case = sys.argv[2]
    for exe in (UPTI, UPTX_APP, SYNTH):
        if not os.path.exists(exe):
            print("SKIP: %s not built" % exe)
            return SKIP
    tmp = tempfile.mkdtemp(prefix="upti-cli-%s-" % case)
    try:
        rc = CASES[case](tmp)
        if rc == SKIP:
            return SKIP
        print("PASS %s" % case)
        return 0
    except Fail as e:
        print("FAIL %s: %s" % (case, e))
        return 1
    except SystemExit as e:  # traceck.fail
        print("FAIL %s: output does not parse" % case)
        return 1 if e.code else 0
    finally:
        if os.environ.get("UPTI_TEST_KEEP"):
            print("outputs kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
